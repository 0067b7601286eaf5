# shellcheck shell=bash
# Sourced by bench/run.sh: section (t), the real tokens of doc/tokens.md's
# "Tokens proven" side by side with SoftHSM2 (issue 27): on each, the
# TEST-ONLY rsa2048 key and $T_N modules of the sample, `modsign -b -j 1`
# (its wall time / $T_N: the time of one signature, start-up and login
# included) and `modsign -b` (default jobs). Each token is started by the
# same set-up functions the tests use (tests/lib/tok_*.sh); one whose
# packages are missing is NOT MEASURED, with the reason. Variants run
# interleaved (every token's -j 1 and default, then again), $REPS rounds.
#
# Knob: BENCH_T_N (default 200): modules per run.

T_N=${BENCH_T_N:-200}
T_TOKENS="softhsm tpm remote nss ock"
declare -A T_WHY T_URI T_NAME T_IN T_PIN
T_OCK_PIN=oP8v-Bn4
T_NAME[softhsm]="SoftHSM2"
T_NAME[tpm]="TPM 2.0 (tpm2-pkcs11 over swtpm)"
T_NAME[remote]="p11-kit remote (p11-kit-client.so to SoftHSM2)"
T_NAME[nss]="NSS softokn"
T_NAME[ock]="openCryptoki soft token"

# shellcheck source=tests/lib/tok_tpm.sh
. "$TOP/tests/lib/tok_tpm.sh"
# shellcheck source=tests/lib/tok_remote.sh
. "$TOP/tests/lib/tok_remote.sh"
# shellcheck source=tests/lib/tok_nss.sh
. "$TOP/tests/lib/tok_nss.sh"
# shellcheck source=tests/lib/tok_ock.sh
. "$TOP/tests/lib/tok_ock.sh"

# t_setup: starts every token that can be; T_URI for those, T_WHY for the rest.
t_setup() {
	local dir=$RUN/t missing
	mkdir -p "$dir"
	T_URI[softhsm]=$TOKEN_URI
	missing=$(tpm_missing)
	if [ -n "$missing" ]; then
		T_WHY[tpm]="not installed: $missing (scripts/install-deps.sh tpm)"
	elif tpm_start "$dir/tpm" "$PIN"; then
		tpm_provisioned
		T_URI[tpm]=$(tpm_uri rsa2048)
	else
		tpm_stop
		T_WHY[tpm]="did not start: $(tail -n 1 "$dir/tpm/ptool.log" "$dir/tpm/swtpm.log" 2>/dev/null | grep -v -i pin | tail -n 1)"
	fi
	missing=$(remote_missing)
	if [ -n "$missing" ]; then
		T_WHY[remote]="not installed: $missing (scripts/install-deps.sh)"
	elif remote_start "$dir/p11.sock" "$SOFTHSM" "pkcs11:token=modsign-test" "$dir/server.err"; then
		T_URI[remote]="$TOKEN_URI_BASE?module-path=$REMOTE_CLIENT"
	else
		T_WHY[remote]="p11-kit server did not start: $(tail -n 1 "$dir/server.err")"
	fi
	missing=$(nss_missing)
	if [ -n "$missing" ]; then
		T_WHY[nss]="not installed: $missing (scripts/install-deps.sh tokens)"
	elif ! nss_start "$dir/nss" "$PIN" "TEST-ONLY-p12"; then
		T_WHY[nss]="the NSS database could not be made: $(tail -n 1 "$dir/nss/setup.log")"
	elif ! nss_in true 2>/dev/null; then
		T_WHY[nss]="root, and no private mount namespace here (unshare --mount)"
	else
		T_URI[nss]=$(nss_uri nss)
		T_IN[nss]=nss_in
	fi
	# openCryptoki's PINs are 4 to 8 bytes.
	missing=$(ock_missing)
	if [ -n "$missing" ]; then
		T_WHY[ock]="not installed: $missing (scripts/install-deps.sh ock)"
	elif ! ock_ns_start "$dir"; then
		T_WHY[ock]="no private mount namespace here: $(head -n 1 "$dir/ns.out")"
	elif ! ock_slotd_start || ! ock_token "$T_OCK_PIN"; then
		T_WHY[ock]="pkcsslotd or the token's set-up failed: $(tail -n 1 "$dir/slotd.log" 2>/dev/null)"
	else
		T_URI[ock]=$(ock_uri)
		T_IN[ock]=ock_ns
		T_PIN[ock]=$T_OCK_PIN
	fi
}

t_teardown() {
	ock_stop
	remote_stop
	tpm_stop
}

# t_ms TOKEN ARGS...: modsign -b with the key on TOKEN over $LIST (behind
# the token's wrapper, such as NSS's private registry).
t_ms() {
	local tok=$1
	shift
	KBUILD_SIGN_PIN=${T_PIN[$tok]:-$PIN} ${T_IN[$tok]:-} /usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -b "$@" \
		--files-from "$LIST" sha256 "${T_URI[$tok]}" "$CERT"
}

# shellcheck disable=SC2034  # CMDTEXT is run.sh's
for _t in softhsm tpm remote nss ock; do
	eval "t_${_t}_j1() { t_ms $_t -j 1; }; t_${_t}_def() { t_ms $_t; }"
	CMDTEXT["t_${_t}_j1"]="KBUILD_SIGN_PIN=$PIN modsign -b -j 1 --files-from list sha256 '<${T_NAME[$_t]} URI>' rsa2048.x509.der"
	CMDTEXT["t_${_t}_def"]="KBUILD_SIGN_PIN=$PIN modsign -b --files-from list sha256 '<${T_NAME[$_t]} URI>' rsa2048.x509.der"
done
unset _t

run_section_t() {
	local tok vars=()
	t_setup
	for tok in $T_TOKENS; do
		if [ -n "${T_URI[$tok]:-}" ]; then
			vars+=("t_${tok}_j1" "t_${tok}_def")
			say "(t) $tok: ${T_URI[$tok]}"
		else
			say "(t) $tok: NOT MEASURED: ${T_WHY[$tok]}"
		fi
	done
	head -n "$T_N" "$CORPUS_DIR/sample.list" > "$RUN/t.list"
	T_N=$(wc -l < "$RUN/t.list")
	if [ "${#vars[@]}" -gt 0 ]; then
		compare_runs "$REPS" "$CORPUS_DIR/sample" "$RUN/t.list" "${vars[@]}"
	fi
	t_teardown
}

t_has_runs() {
	grep -q "^t_" "$RES"
}

# tokens_real_section: the Markdown of section (t).
tokens_real_section() {
	local tok j1 def
	cat <<EOF
## (t) Real tokens side by side with SoftHSM2 (issue 27), $T_N modules

The TEST-ONLY rsa2048 key imported into each token, started by the set-up
functions the tests use (\`tests/lib/tok_*.sh\`). "One signature" is the
median wall time of \`modsign -b -j 1\` over $T_N modules divided by $T_N (one
signature after the other; the token's start-up and login are included,
spread over the modules); "-b" is the median wall time of \`modsign -b\`
with its default jobs. $REPS interleaved runs of each. NSS and openCryptoki
run behind their wrappers (a private module registry, a private mount
namespace), each one process per run.

| token | one signature ms (-j 1) | $T_N modules -b s | min-max s | -j 1 s | output check |
| --- | ---: | ---: | --- | ---: | --- |
EOF
	for tok in softhsm tpm remote nss ock; do
		if ! has_runs "t_${tok}_j1"; then
			printf '| %s | NOT MEASURED: %s | | | | |\n' "${T_NAME[$tok]}" \
				"${T_WHY[$tok]:-no good run}"
			continue
		fi
		j1=$(median_of "t_${tok}_j1")
		stat_get "t_${tok}_def"
		def=$S_MED
		printf '| %s | %s | %s | %s-%s | %s | %s |\n' "${T_NAME[$tok]}" \
			"$(fmt '%.2f' "$(calc "$j1 * 1000 / $T_N")")" "$def" "$S_MIN" "$S_MAX" "$j1" \
			"$(verify "t_${tok}_def" t_softhsm_j1)"
	done
	printf '\n'
}
