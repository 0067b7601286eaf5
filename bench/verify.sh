# shellcheck shell=bash disable=SC2034  # globals read by run.sh and report.sh
# Sourced by bench/run.sh: section (v), what verifying every signature with
# the certificate before it is written costs. modsign with the
# check (./modsign) against the same sources built without it
# ($MODSIGN_NOCHECK: tests/mutants/signature-not-verified.patch applied to a
# copy of the tree, bench/setup.sh build_nocheck), on the sample of (b),
# pairs side by side and interleaved, every other round in reverse order
# (with, without, ..., then ..., without, with), so that each of a pair runs
# first as often:
#   v_rsa_bulk, v_rsa_bulk_nc    modsign -b (default -j), RSA-2048 key on
#                                SoftHSM2 (as b_ms_def)
#   v_rsa_agent, v_rsa_agent_nc  one modsign process per module under
#                                `modsign agent` (as f_soft_agent): the agent
#                                is ./modsign (it verifies nothing: it has no
#                                certificate), the clients, which check, are
#                                the binary with or without the check
#   v_ec_bulk, v_ec_bulk_nc      modsign -b, the EC P-256 key (ec256) on the
#                                same SoftHSM2 token
# Targets: RSA, the check costs less than 5% of the bulk run and of the
# process-per-module run; EC: reported. The section also runs
# build/verify-cpu (bench/verify_cpu.c: mbedTLS and nettle, the packaged
# verifiers, side by side; modsign verifies with nettle, the faster).
# Outputs: every module of the first run of each variant is checked with
# `modsign verify -c <cert>`; RSA outputs are compared byte for byte between
# the pair (PKCS#1 v1.5 signatures are deterministic), EC ones cannot be
# (SoftHSM2's ECDSA draws a new nonce for each signature).

V_TARGET=5	# target: the check costs less than 5% (RSA)
EC_URI_BASE='pkcs11:token=modsign-test;object=ec256;type=private'
EC_URI="$EC_URI_BASE?module-path=$SOFTHSM"
EC_CERT=$TOP/tests/data/ec256.x509.der

# v_bulk BIN URI CERT: BIN -b over $LIST under /usr/bin/time, as b_ms_def.
v_bulk() {
	KBUILD_SIGN_PIN=$PIN /usr/bin/time -f %M -o "$RUN/rss" "$1" -b --files-from "$LIST" \
		sha256 "$2" "$3"
}
# v_agent BIN: ./modsign agent running BIN once per module, as f_soft_agent.
v_agent() {
	KBUILD_SIGN_PIN=$PIN "$MODSIGN" agent -q "$TOKEN_URI" -- \
		bash -c "$F_LOOP" "$1" "$TOKEN_URI" "$CERT" "$LIST"
}

NC_NOTE='(modsign-nocheck: the same tree with tests/mutants/signature-not-verified.patch, make modsign)'
CMDTEXT[v_rsa_bulk]=${CMDTEXT[b_ms_def]}
v_rsa_bulk() { v_bulk "$MODSIGN" "$TOKEN_URI" "$CERT"; }
CMDTEXT[v_rsa_bulk_nc]="KBUILD_SIGN_PIN=$PIN modsign-nocheck -b --files-from list sha256 '$TOKEN_URI' rsa2048.x509.der   $NC_NOTE"
v_rsa_bulk_nc() { v_bulk "$MODSIGN_NOCHECK" "$TOKEN_URI" "$CERT"; }
CMDTEXT[v_rsa_agent]=${CMDTEXT[f_soft_agent]}
v_rsa_agent() { v_agent "$MODSIGN"; }
CMDTEXT[v_rsa_agent_nc]="KBUILD_SIGN_PIN=$PIN modsign agent '$TOKEN_URI' -- sh -c 'for m in \$(cat list); do modsign-nocheck sha256 '$TOKEN_URI' rsa2048.x509.der \$m; done'"
v_rsa_agent_nc() { v_agent "$MODSIGN_NOCHECK"; }
CMDTEXT[v_ec_bulk]="KBUILD_SIGN_PIN=$PIN modsign -b --files-from list sha256 '$EC_URI' ec256.x509.der"
v_ec_bulk() { v_bulk "$MODSIGN" "$EC_URI" "$EC_CERT"; }
CMDTEXT[v_ec_bulk_nc]="KBUILD_SIGN_PIN=$PIN modsign-nocheck -b --files-from list sha256 '$EC_URI' ec256.x509.der"
v_ec_bulk_nc() { v_bulk "$MODSIGN_NOCHECK" "$EC_URI" "$EC_CERT"; }

SECTION_V="v_rsa_bulk v_rsa_bulk_nc v_rsa_agent v_rsa_agent_nc v_ec_bulk v_ec_bulk_nc"

# v_cert_of V: the certificate V signs with.
v_cert_of() {
	case $1 in
	v_ec_*) printf '%s\n' "$EC_CERT" ;;
	*) printf '%s\n' "$CERT" ;;
	esac
}

# v_verify_outputs V RELLIST: `modsign verify -c <cert>` over the modules V
# left in $WORK; "OK-count of total" into $RUN/verified.V. Called by
# compare_runs after V's first run.
v_verify_outputs() {
	local ok n
	n=$(wc -l < "$2")
	ok=$( (cd "$WORK" && "$MODSIGN" verify -c "$(v_cert_of "$1")" --files-from "$2") 2>/dev/null |
		grep -c '^OK ' || true)
	printf '%s of %s\n' "$ok" "$n" > "$RUN/verified.$1"
}

# v_probe: the binary without the check really lacks it: one module signed
# through slowtoken with its first signature corrupted (bit flipped,
# SLOWTOKEN_FAULT=C_Sign:1:CORRUPT) must be refused by ./modsign and written
# by $MODSIGN_NOCHECK. Sets V_PROBE (the outcome, for the report).
v_probe() {
	local m rc_check=0 rc_nc=0 uri=$TOKEN_URI_BASE?module-path=$SLOWTOKEN d=$RUN/v_probe
	V_PROBE="not run"
	if [ ! -f "$SLOWTOKEN" ]; then
		V_PROBE="not run: $SLOWTOKEN is missing"
		return 0
	fi
	m=$(head -n 1 "$CORPUS_DIR/sample.list")
	mkdir -p "$d"
	cp "$CORPUS_DIR/sample/$m" "$d/a.ko"
	cp "$CORPUS_DIR/sample/$m" "$d/b.ko"
	SLOWTOKEN_FAULT=C_Sign:1:CORRUPT KBUILD_SIGN_PIN=$PIN \
		"$MODSIGN" sha256 "$uri" "$CERT" "$d/a.ko" > "$d/check.out" 2>&1 || rc_check=$?
	SLOWTOKEN_FAULT=C_Sign:1:CORRUPT KBUILD_SIGN_PIN=$PIN \
		"$MODSIGN_NOCHECK" sha256 "$uri" "$CERT" "$d/b.ko" > "$d/nocheck.out" 2>&1 || rc_nc=$?
	if [ "$rc_check" != 0 ] && cmp -s "$d/a.ko" "$CORPUS_DIR/sample/$m" &&
		grep -q 'did not verify with the certificate' "$d/check.out" &&
		[ "$rc_nc" = 0 ] && ! "$MODSIGN" verify -c "$CERT" "$d/b.ko" > /dev/null 2>&1; then
		V_PROBE="as expected: with a corrupted signature from the token (slowtoken CORRUPT), modsign refused it (exit $rc_check, module untouched) and modsign-nocheck wrote it (exit 0; \`modsign verify\` FAILs the module)"
	else
		V_PROBE="UNEXPECTED: modsign exit $rc_check ($(tail -n 1 "$d/check.out")), modsign-nocheck exit $rc_nc ($(tail -n 1 "$d/nocheck.out"))"
		return 1
	fi
}

# run_section_v: the binary without the check (built in bench/setup.sh), the
# probe, the three pairs interleaved, then build/verify-cpu.
run_section_v() {
	if [ -z "$MODSIGN_NOCHECK" ]; then
		say "(v) NOT MEASURED: $NOCHECK_WHY"
		MEASURE_FAILED=1
		return 0
	fi
	if ! v_probe; then
		say "(v) the binary without the check does not behave as such: $V_PROBE"
		MEASURE_FAILED=1
		return 0
	fi
	FIRST_RUN_HOOK=v_verify_outputs COMPARE_REVERSE=1
	# shellcheck disable=SC2086  # a list of variants
	compare_runs "$REPS" "$CORPUS_DIR/sample" "$CORPUS_DIR/sample.list" $SECTION_V
	FIRST_RUN_HOOK="" COMPARE_REVERSE=0
	if [ -n "$VERIFY_CPU_WHY" ]; then
		say "(v) $VERIFY_CPU_WHY"
		MEASURE_FAILED=1
	elif ! "$VERIFY_CPU" "$TOP/tests/data" > "$RUN/verify_cpu.md" 2> "$RUN/log/verify-cpu"; then
		say "(v) build/verify-cpu failed: $(tail -n 3 "$RUN/log/verify-cpu")"
		rm -f "$RUN/verify_cpu.md"
		MEASURE_FAILED=1
	fi
}

# ---------------------------------------------------------------- report

v_label() {
	case $1 in
	v_rsa_bulk) echo "modsign -b, RSA-2048 on SoftHSM2, with the check" ;;
	v_rsa_bulk_nc) echo "modsign -b, RSA-2048 on SoftHSM2, without the check" ;;
	v_rsa_agent) echo "modsign agent (SoftHSM2, RSA-2048), a process per module, with the check" ;;
	v_rsa_agent_nc) echo "modsign agent (SoftHSM2, RSA-2048), a process per module, without the check" ;;
	v_ec_bulk) echo "modsign -b, EC P-256 on SoftHSM2, with the check" ;;
	v_ec_bulk_nc) echo "modsign -b, EC P-256 on SoftHSM2, without the check" ;;
	*) echo "$1" ;;
	esac
}

v_has_runs() {
	local v
	for v in $SECTION_V; do
		has_runs "$v" && return 0
	done
	return 1
}

# v_micro KEY: nettle's CPU microseconds per verify for KEY ("rsa2048",
# "ec256") from build/verify-cpu's table; n/a without it.
v_micro() {
	[ -s "$RUN/verify_cpu.md" ] || { echo n/a; return; }
	awk -F '|' -v k="$1" '{ gsub(/^ +| +$/, "", $2); split($2, a, ","); if (a[1] == k) { gsub(/ /, "", $4); print $4; found = 1; exit } }
		END { if (!found) print "n/a" }' "$RUN/verify_cpu.md"
}

# v_pair WITH: sets VP_W, VP_N (median wall s), VP_COST (% more with the
# check), VP_CPU (CPU cost %), VP_EXP and VP_EXPC (what the microbenchmark
# predicts, % of the wall and of the CPU time of the run without), VP_US
# (its microseconds a verify), for the pair WITH / WITH_nc.
v_pair() {
	local w=$1 nc=$1_nc key=rsa2048 us
	VP_W=$(median_of "$w")
	VP_N=$(median_of "$nc")
	VP_COST=$(calc "($VP_W - $VP_N) * 100 / $VP_N")
	VP_CPU=$(calc "($(cpu_of "$w") - $(cpu_of "$nc")) * 100 / $(cpu_of "$nc")")
	case $w in v_ec_*) key=ec256 ;; esac
	us=$(v_micro "$key")
	VP_EXP=$(calc "$us * $SAMPLE_REAL_N / 1000000 * 100 / $VP_N")
	VP_EXPC=$(calc "$us * $SAMPLE_REAL_N / 1000000 * 100 / $(cpu_of "$nc")")
	VP_US=$us
}

# v_paired WITH: the median over the rounds of WITH's time / WITH_nc's time
# in the same round (wall, or CPU with a second argument "cpu"): each ratio
# of two runs next to each other, which a slow spell of the machine
# disturbs less than it does either median.
v_paired() {
	awk -F '\t' -v w="$1" -v nc="$1_nc" -v col="$([ "${2:-}" = cpu ] && echo 6 || echo 3)" '
		$5 == "ok" && $1 == w { a[$2] = $col }
		$5 == "ok" && $1 == nc { b[$2] = $col }
		END {
			for (r in a) if ((r in b) && b[r] > 0) x[++n] = a[r] / b[r]
			if (n == 0) { print "n/a"; exit }
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && x[j - 1] > x[j]; j--) { t = x[j]; x[j] = x[j - 1]; x[j - 1] = t }
			printf "%.3f", n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
		}' "$RES"
}

# v_out V: the output check of V: modsign verify, and for RSA the bytes
# against the other of the pair, and the checking runs against sign-file's
# (when (a) or (b) ran) or else the agent's against the bulk run's.
v_out() {
	local v=$1 out ref
	out="modsign verify: $(cat "$RUN/verified.$v" 2>/dev/null || echo 'not run') OK"
	case $v in
	v_ec_*) out="$out; ECDSA: not comparable byte for byte (a new nonce each signature)" ;;
	*_nc) out="$out; $(verify "$v" "${v%_nc}")" ;;
	*)
		ref=$(ref_of)
		if [ -s "$RUN/md5.$ref" ]; then
			out="$out; $(verify "$v" "$ref")"
		elif [ "$v" = v_rsa_agent ]; then
			out="$out; $(verify "$v" v_rsa_bulk)"
		fi ;;
	esac
	printf '%s\n' "$out"
}

v_rows() {
	# shellcheck disable=SC2086  # a list of variants
	plain_rows "$SAMPLE_REAL_N" v_label v_out $SECTION_V
}

# v_targets: V1 (RSA bulk), V2 (RSA agent) verdicts and texts, V3 (EC) text.
v_targets() {
	v_pair v_rsa_bulk
	V1=$(verdict "$VP_COST" "<" "$V_TARGET")
	V1_TEXT="$(fmt '%+.2f' "$VP_COST")% (with $VP_W s, without $VP_N s; CPU $(fmt '%+.2f' "$VP_CPU")%; build/verify-cpu predicts $(fmt '%.2f' "$VP_EXP")% of the wall, $(fmt '%.2f' "$VP_EXPC")% of the CPU)"
	v_pair v_rsa_agent
	V2=$(verdict "$VP_COST" "<" "$V_TARGET")
	V2_TEXT="$(fmt '%+.2f' "$VP_COST")% (with $VP_W s, without $VP_N s; CPU $(fmt '%+.2f' "$VP_CPU")%; build/verify-cpu predicts $(fmt '%.2f' "$VP_EXP")% of the wall, $(fmt '%.2f' "$VP_EXPC")% of the CPU)"
	v_pair v_ec_bulk
	V3=$([ "$VP_COST" = n/a ] && echo "NOT MEASURED" || echo reported)
	V3_TEXT="$(fmt '%+.2f' "$VP_COST")% (with $VP_W s, without $VP_N s; CPU $(fmt '%+.2f' "$VP_CPU")%; build/verify-cpu predicts $(fmt '%.2f' "$VP_EXP")% of the wall, $(fmt '%.2f' "$VP_EXPC")% of the CPU)"
}

# v_pair_rows: one row per pair: medians, ratio, cost.
v_pair_rows() {
	local w name
	for w in v_rsa_bulk v_rsa_agent v_ec_bulk; do
		case $w in
		v_rsa_bulk) name="RSA-2048, \`modsign -b\`" ;;
		v_rsa_agent) name="RSA-2048, a process per module under the agent" ;;
		v_ec_bulk) name="EC P-256, \`modsign -b\`" ;;
		esac
		v_pair "$w"
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$VP_W" "$VP_N" \
			"$(ratio "$VP_W" "$VP_N")" "$(fmt '%+.2f' "$VP_COST")%" "$(v_paired "$w")" \
			"$(ratio "$(cpu_of "$w")" "$(cpu_of "${w}_nc")")" \
			"$(fmt '%.3f' "$(calc "($VP_W - $VP_N) * 1000 / $SAMPLE_REAL_N")")" \
			"$(fmt '%.2f' "$VP_EXP")% of the wall, $(fmt '%.2f' "$VP_EXPC")% of the CPU ($VP_US us a verify)"
	done
}

# shellcheck disable=SC2016  # backquotes for Markdown, not for the shell
verify_section() {
	if [ -z "${MODSIGN_NOCHECK:-}" ]; then
		printf '## (v) What verifying every signature costs (issue 25)\n\nNOT MEASURED: %s\n\n' \
			"$NOCHECK_WHY"
		return 0
	fi
	v_has_runs || return 0
	v_targets
	cat <<EOT
## (v) What verifying every signature costs (issue 25), $SAMPLE_REAL_N modules

modsign checks every signature with the certificate's key before it writes
it (\`check_signature()\` in src/signer/lanes.c). Against it: the same tree
built without that one call (\`tests/mutants/signature-not-verified.patch\`
applied to a copy, \`make modsign\`: "modsign-nocheck"). Each pair runs side
by side, interleaved with the others (every other round in reverse order, so
that each of a pair runs first as often), $REPS runs each, on the sample of (b),
the keys on the SoftHSM2 token of (b). Under the agent, the agent is
./modsign in both (it has no certificate and verifies nothing); the client
processes, one per module, are the binary with or without the check.
Probe before the runs: $V_PROBE.

| target | measured | result |
| --- | --- | --- |
| RSA-2048 on SoftHSM2: the check costs less than ${V_TARGET}% of a \`modsign -b\` run | $V1_TEXT | **$V1** |
| RSA-2048 on SoftHSM2: the check costs less than ${V_TARGET}% of a process-per-module run under the agent | $V2_TEXT | **$V2** |
| EC P-256 on SoftHSM2, \`modsign -b\`: what the check costs (reported) | $V3_TEXT | $V3 |

| pair | with, median s | without, median s | with / without | cost (wall) | per-round with / without, median | CPU with / without | difference, ms a module (wall) | build/verify-cpu predicts (nettle, of the run without) |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
$(v_pair_rows)

| variant | median s | min s | max s | ms/module | CPU ms/module | output check |
| --- | ---: | ---: | ---: | ---: | ---: | --- |
$(v_rows)

- the prediction: nettle's CPU time per verify (below) x $SAMPLE_REAL_N modules, over the median wall time, and over the median CPU time, of the run without the check; in \`modsign -b\` the check runs on the worker threads, in parallel with other modules' hashing, signing and writing, so its wall cost can be below its CPU cost, unless it lies on the run's critical path (it runs while the worker still holds its lane, before the lane is given back)
- the targets are the ratio of the medians, as elsewhere in this file; "per-round" is the median of the ratios of the two runs of a pair in the same round (next to each other), less disturbed by a slow spell of the shared machine
- with two cores shared with other work, a difference of a few % between medians is within the spread of the runs (min and max above)

### The packaged verifiers: build/verify-cpu

$(if [ -s "$RUN/verify_cpu.md" ]; then cat "$RUN/verify_cpu.md"; else echo "NOT MEASURED: ${VERIFY_CPU_WHY:-build/verify-cpu failed}"; fi)

modsign verifies with nettle (\`src/cms/sig_verify.c\`), the faster of the two for every key.

EOT
}

# v_summary: section (v)'s targets for print_summary.
v_summary() {
	case " $SECTIONS " in *" v "*) ;; *) return 0 ;; esac
	if [ -z "${MODSIGN_NOCHECK:-}" ]; then
		printf '  %-12s verification costs (section v): %s\n' "NOT MEASURED" "$NOCHECK_WHY"
		return 0
	fi
	v_has_runs || return 0
	v_targets
	printf '  %-12s verification costs < %s%% of a bulk run on SoftHSM2 (RSA): %s\n' "$V1" "$V_TARGET" "$V1_TEXT"
	printf '  %-12s verification costs < %s%% of a process-per-module run under the agent (RSA): %s\n' "$V2" "$V_TARGET" "$V2_TEXT"
	printf '  %-12s verification cost, EC P-256, modsign -b on SoftHSM2: %s\n' "$V3" "$V3_TEXT"
}
