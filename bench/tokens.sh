# shellcheck shell=bash
# Sourced by bench/run.sh: section (g), several tokens holding one key
# (--key). HSM-like tokens as in (c) (start-up, login and signature
# times of slowtoken, each token serialised on its own), 1, 2 and 4 of them
# holding copies of the one key, the sample's modules signed with
# `modsign -b <key> --key <uri>...`. Each token is its own SoftHSM2 token
# behind its own copy of slowtoken.so (with its own <copy>.conf, so that
# each is serialised on its own lock) over its own copy of SoftHSM2's
# library. Variants g_ms_<N> run interleaved (1, 2, 4, 1, 2, 4, ...).
#
# Knob: BENCH_G_TOKENS (default "1 2 4"): the token counts compared, at
# most 4, 1 first (the others are compared with it).

G_TOKENS=${BENCH_G_TOKENS:-"1 2 4"}
G_MAX=4

# g_token_setup: tokens g-1 .. g-4 holding the TEST-ONLY key (PIN $PIN),
# beside make_token's, and a slowtoken copy each with its .conf.
g_token_setup() {
	local k dir=$RUN/g
	mkdir -p "$dir"
	for k in $(seq 1 "$G_MAX"); do
		"$TOP/tests/lib/mktoken.sh" "$RUN/token" "g-$k" "$PIN" >/dev/null ||
			die "tests/lib/mktoken.sh failed (token g-$k)"
		cp "$SLOWTOKEN" "$dir/st-$k.so"
		cp "$SOFTHSM" "$dir/softhsm-$k.so"
		g_conf "$k"
	done
}

# g_conf K [LOG]: token K's slowtoken settings, with a call log when LOG is given.
g_conf() {
	{
		echo "SLOWTOKEN_MODULE=$RUN/g/softhsm-$1.so"
		echo "SLOWTOKEN_INIT_MS=$SLOW_INIT_MS"
		echo "SLOWTOKEN_LOGIN_MS=$SLOW_LOGIN_MS"
		echo "SLOWTOKEN_SIGN_MS=$SLOW_SIGN_MS"
		echo "SLOWTOKEN_SERIAL=1"
		# the SoftHSM2 copies must not read the one token directory at once
		echo "SLOWTOKEN_INIT_LOCK=$RUN/g/init.lock"
		if [ -n "${2:-}" ]; then
			echo "SLOWTOKEN_LOG=$2"
		fi
	} > "$RUN/g/st-$1.so.conf"
}

# g_uri K: the key on token K, through its slowtoken copy.
g_uri() {
	printf 'pkcs11:token=g-%s;object=rsa2048;type=private?module-path=%s' "$1" "$RUN/g/st-$1.so"
}

# g_ms N: modsign -b over $LIST with N tokens: g-1 as <key>, the others as --key.
g_ms() {
	local k keys=()
	for k in $(seq 2 "$1"); do
		keys+=(--key "$(g_uri "$k")")
	done
	KBUILD_SIGN_PIN=$PIN /usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -b "${keys[@]}" \
		--files-from "$LIST" sha256 "$(g_uri 1)" "$CERT"
}

# shellcheck disable=SC2034  # CMDTEXT and MEASURE_FAILED are run.sh's
declare -A G_N
for _n in 1 2 3 4; do
	eval "g_ms_$_n() { g_ms $_n; }"
	G_N[g_ms_$_n]=$_n
	if [ "$_n" = 1 ]; then
		CMDTEXT["g_ms_1"]="KBUILD_SIGN_PIN=$PIN modsign -b --files-from list sha256 '<g-1>' rsa2048.x509.der   (<g-k> = pkcs11:token=g-k;object=rsa2048;type=private?module-path=st-k.so, a slowtoken copy with the settings of (c) in st-k.so.conf)"
	else
		CMDTEXT["g_ms_$_n"]="KBUILD_SIGN_PIN=$PIN modsign -b$(for _k in $(seq 2 "$_n"); do printf " --key '<g-%s>'" "$_k"; done) --files-from list sha256 '<g-1>' rsa2048.x509.der"
	fi
done
unset _n _k

section_g_variants() {
	local n out=""
	for n in $G_TOKENS; do
		out="$out g_ms_$n"
	done
	echo "$out"
}

# g_logs REP: the first round logs every token's calls; later rounds do not.
g_logs() {
	local k
	for k in $(seq 1 "$G_MAX"); do
		if [ "$1" = 1 ]; then
			g_conf "$k" "$RUN/g/log.$2.$k"
		else
			g_conf "$k"
		fi
	done
}

# run_section_g: REPS_LONG rounds; in each, every token count once on a
# fresh copy of the sample, in turn.
run_section_g() {
	local rep v
	if [ ! -f "$SLOWTOKEN" ]; then
		say "$SLOWTOKEN is missing (make build/slowtoken.so): (g) not measured"
		MEASURE_FAILED=1
		return 0
	fi
	g_token_setup
	LIST=$RUN/list.abs
	abs_list "$CORPUS_DIR/sample.list" > "$LIST"
	for rep in $(seq 1 "$REPS_LONG"); do
		for v in $(section_g_variants); do
			g_logs "$rep" "$v"
			restore "$CORPUS_DIR/sample"
			measure "$v" "$rep" "$v"
			if [ "$rep" = 1 ]; then
				fingerprint "$v" "$CORPUS_DIR/sample.list"
			fi
		done
	done
	g_logs 2
}

# g_floor N: the N-token floor in seconds: start-up and one login (all
# tokens at once), then the signatures shared out.
g_floor() {
	calc "($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SAMPLE_REAL_N * $SLOW_SIGN_MS / $1) / 1000"
}

# g_shares V: each token's signatures in V's first run, from modsign's summary.
g_shares() {
	local f=$RUN/log/$1.1
	[ "${G_N[$1]}" = 1 ] && { echo "one token"; return; }
	[ -s "$f" ] || { echo "no log"; return; }
	sed -n "s/^modsign: token '\([^']*\)' (serial [^)]*): \([0-9]*\) signatures*\(.*\)/\1 \2\3/p" "$f" |
		paste -sd ',' - | sed 's/,/, /g'
}

# g_logins V: C_Login calls per token in V's first run (slowtoken logs).
g_logins() {
	local k out="" n
	for k in $(seq 1 "${G_N[$1]}"); do
		n=$(grep -c '^C_Login ' "$RUN/g/log.$1.$k" 2>/dev/null || true)
		out="$out${out:+ }${n:-?}"
	done
	echo "$out"
}

# tokens_section: the Markdown of section (g).
tokens_section() {
	local v n=$SAMPLE_REAL_N one floor med
	one=$(median_of g_ms_1)
	cat <<EOF
## (g) Several tokens holding one key (issue 19), $n modules

HSM-like tokens as in (c) (${SLOW_INIT_MS} ms start-up, ${SLOW_LOGIN_MS} ms login, ${SLOW_SIGN_MS} ms per signature), each
serialised on its own: a SoftHSM2 token each, behind its own copy of
slowtoken.so (own lock and settings, from its .conf) over its own copy of
SoftHSM2's library. \`modsign -b <key> --key <uri>...\`, $REPS_LONG interleaved runs of
each count. The N-token floor is ${SLOW_INIT_MS} ms + ${SLOW_LOGIN_MS} ms + $n x ${SLOW_SIGN_MS} ms / N (every token starts
and logs in at once). With one PIN source modsign logs in to one token
first and to the others once it took the PIN (so a wrong PIN costs one try
on one card), which adds one login time (${SLOW_LOGIN_MS} ms) above that floor for N > 1.

| tokens | median s | min s | max s | floor s | median / floor | / one token | CPU ms/module | signatures per token (first run) | C_Login per token | output check |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |
EOF
	for v in $(section_g_variants); do
		stat_get "$v"
		floor=$(g_floor "${G_N[$v]}")
		if [ "$S_N" -eq 0 ]; then
			printf '| %s | not measured (%s failed runs) | | | %s | | | | | | |\n' "${G_N[$v]}" \
				"$S_FAIL" "$(fmt '%.1f' "$floor")"
			continue
		fi
		med=$S_MED
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${G_N[$v]}" "$med" \
			"$S_MIN" "$S_MAX" "$(fmt '%.1f' "$floor")" "$(ratio "$med" "$floor")" \
			"$(ratio "$med" "$one")" "$(fmt '%.3f' "$(calc "$S_CPU * 1000 / $n")")" \
			"$(g_shares "$v")" "$(g_logins "$v")" \
			"$(if [ "$v" = g_ms_1 ]; then verify "$v" "$(ref_of)"; else verify "$v" g_ms_1; fi)"
	done
	printf '\n'
	for v in $(section_g_variants); do
		[ "${G_N[$v]}" = 1 ] && continue
		med=$(median_of "$v")
		printf -- '- %s tokens: median / floor = **%s** (target at most 1.10: %s); %s x one token'"'"'s time (floor ratio %s)\n' \
			"${G_N[$v]}" "$(ratio "$med" "$(g_floor "${G_N[$v]}")")" \
			"$(verdict "$(ratio "$med" "$(g_floor "${G_N[$v]}")")" "<=" 1.10)" "$(ratio "$med" "$one")" \
			"$(ratio "$(g_floor "${G_N[$v]}")" "$(g_floor 1)")"
	done
	printf '\n'
}

# g_targets: section (g)'s targets, one line each, for the plain-text summary.
g_targets() {
	local v r
	has_runs g_ms_1 || return 0
	for v in $(section_g_variants); do
		[ "${G_N[$v]}" = 1 ] && continue
		r=$(ratio "$(median_of "$v")" "$(g_floor "${G_N[$v]}")")
		printf '  %-12s %s HSM-like tokens, within 1.10x the %s-token floor: %sx (%s s, floor %s s; %sx one token)\n' \
			"$(verdict "$r" "<=" 1.10)" "${G_N[$v]}" "${G_N[$v]}" "$r" "$(median_of "$v")" \
			"$(fmt '%.1f' "$(g_floor "${G_N[$v]}")")" "$(ratio "$(median_of "$v")" "$(median_of g_ms_1)")"
	done
}
