# shellcheck shell=bash disable=SC2034  # globals read by run.sh and report.sh
# Sourced by bench/run.sh: section (f), `modsign agent`. One
# modsign process per module, as kbuild's modules_install, DKMS and Yocto
# call sign-file, with the key loaded once by an agent around the loop:
#   f_hsm_agent       HSM-like token (slowtoken), BENCH_AGENT_HSM_N modules,
#                     BENCH_AGENT_HSM_P processes at a time (as make -jP)
#   f_hsm_agent_loop  the same, one process after another (as make -j1)
#   f_hsm_direct      modsign without the agent on BENCH_SLOW_SUBSET modules:
#                     each process pays the token's start-up and login
#   f_soft_sf_loop, f_soft_sf_xargs   the kernel's sign-file (ENGINE build)
#                     on SoftHSM2, a process per module, alone and xargs -P 2
#   f_soft_agent, f_soft_agent_xargs  modsign under the agent, the same ways
#   f_pem_sf_loop, f_pem_agent        the same with the PEM key, loop only
#   f_soft_floor      the same loop starting /bin/true in modsign's place:
#                     what a process per module costs here before any work
#   f_soft_bulk       modsign -b -j 1 on SoftHSM2: the work per module (read,
#                     hash, C_Sign, write, fsync) without a process each
# The last two bound what any process-per-module signer can reach on this
# machine and token: sign-file's loop / (f_soft_floor + f_soft_bulk).
# SoftHSM2 and PEM runs go over the whole sample, side by side and
# interleaved; the HSM-like runs interleave with each other.

AGENT_HSM_N=${BENCH_AGENT_HSM_N:-200}
AGENT_HSM_P=${BENCH_AGENT_HSM_P:-4}
AGENT_HSM_TARGET=1.10	# target: at most 1.10 x the floor
AGENT_SOFT_TARGET=4	# target: at least 4x the sign-file loop

# The loops the agent runs: $0 modsign, $1 key, $2 cert, $3 list, $4 processes.
# shellcheck disable=SC2016  # expanded by the inner bash
F_LOOP='while IFS= read -r m; do "$0" sha256 "$1" "$2" "$m" || exit 1; done < "$3"'
# shellcheck disable=SC2016
F_XARGS='xargs -d "\n" -P "$4" -n 1 -a "$3" "$0" sha256 "$1" "$2"'

CMDTEXT[f_hsm_agent]="$SLOW_ENV KBUILD_SIGN_PIN=$PIN modsign agent '$SLOW_URI' -- xargs -P $AGENT_HSM_P -n 1 modsign sha256 '$SLOW_URI' rsa2048.x509.der < (the first $AGENT_HSM_N of list)"
f_hsm_agent() {
	SLOW_LOG=${SLOW_LOG_AGENT:-} slow_env KBUILD_SIGN_PIN=$PIN "$MODSIGN" agent -q "$SLOW_URI" -- \
		bash -c "$F_XARGS" "$MODSIGN" "$SLOW_URI" "$CERT" "$LIST" "$AGENT_HSM_P"
}
CMDTEXT[f_hsm_agent_loop]="$SLOW_ENV KBUILD_SIGN_PIN=$PIN modsign agent '$SLOW_URI' -- sh -c 'for m in \$(head -n $AGENT_HSM_N list); do modsign sha256 '$SLOW_URI' rsa2048.x509.der \$m; done'"
f_hsm_agent_loop() {
	slow_env KBUILD_SIGN_PIN=$PIN "$MODSIGN" agent -q "$SLOW_URI" -- \
		bash -c "$F_LOOP" "$MODSIGN" "$SLOW_URI" "$CERT" "$LIST"
}
CMDTEXT[f_hsm_direct]="$SLOW_ENV KBUILD_SIGN_PIN=$PIN; for m in \$(head -n $SLOW_SUBSET list); do modsign sha256 '$SLOW_URI' rsa2048.x509.der \$m; done"
f_hsm_direct() {
	slow_env KBUILD_SIGN_PIN=$PIN bash -c "$F_LOOP" "$MODSIGN" "$SLOW_URI" "$CERT" "$LIST"
}
CMDTEXT[f_soft_sf_loop]=${CMDTEXT[b_sf_loop]}
f_soft_sf_loop() { b_sf_loop; }
CMDTEXT[f_soft_sf_xargs]=${CMDTEXT[b_sf_xargs]}
f_soft_sf_xargs() { b_sf_xargs; }
CMDTEXT[f_soft_agent]="KBUILD_SIGN_PIN=$PIN modsign agent '$TOKEN_URI' -- sh -c 'for m in \$(cat list); do modsign sha256 '$TOKEN_URI' rsa2048.x509.der \$m; done'"
f_soft_agent() {
	KBUILD_SIGN_PIN=$PIN "$MODSIGN" agent -q "$TOKEN_URI" -- \
		bash -c "$F_LOOP" "$MODSIGN" "$TOKEN_URI" "$CERT" "$LIST"
}
CMDTEXT[f_soft_agent_xargs]="KBUILD_SIGN_PIN=$PIN modsign agent '$TOKEN_URI' -- xargs -P 2 -n 1 modsign sha256 '$TOKEN_URI' rsa2048.x509.der < list"
f_soft_agent_xargs() {
	KBUILD_SIGN_PIN=$PIN "$MODSIGN" agent -q "$TOKEN_URI" -- \
		bash -c "$F_XARGS" "$MODSIGN" "$TOKEN_URI" "$CERT" "$LIST" 2
}
CMDTEXT[f_soft_floor]="sh -c 'for m in \$(cat list); do /bin/true sha256 '$TOKEN_URI' rsa2048.x509.der \$m; done'   (the loop alone, nothing signed)"
f_soft_floor() {
	bash -c "$F_LOOP" /bin/true "$TOKEN_URI" "$CERT" "$LIST"
}
CMDTEXT[f_soft_bulk]=${CMDTEXT[b_ms_j1]}
f_soft_bulk() { b_ms_j1; }
CMDTEXT[f_pem_sf_loop]=${CMDTEXT[a_sf_loop]}
f_pem_sf_loop() { a_sf_loop; }
CMDTEXT[f_pem_agent]="modsign agent rsa2048.key.pem -- sh -c 'for m in \$(cat list); do modsign sha256 rsa2048.key.pem rsa2048.x509.der \$m; done'"
f_pem_agent() {
	"$MODSIGN" agent -q "$KEY" -- bash -c "$F_LOOP" "$MODSIGN" "$KEY" "$CERT" "$LIST"
}

SECTION_F="f_hsm_agent f_hsm_agent_loop f_hsm_direct f_soft_sf_loop f_soft_sf_xargs f_soft_agent f_soft_agent_xargs f_soft_floor f_soft_bulk f_pem_sf_loop f_pem_agent"

# run_section_f: the HSM-like runs (the agent's on $AGENT_HSM_N modules,
# modsign without it on $SLOW_SUBSET), then SoftHSM2 and the PEM key on the
# whole sample. The first HSM-like agent run logs every token call.
run_section_f() {
	local rep
	if [ ! -f "$SLOWTOKEN" ]; then
		say "$SLOWTOKEN is missing (make build/slowtoken.so): the agent's HSM-like runs not measured"
		MEASURE_FAILED=1
	else
		head -n "$AGENT_HSM_N" "$CORPUS_DIR/sample.list" > "$RUN/agent_hsm.list"
		head -n "$SLOW_SUBSET" "$CORPUS_DIR/sample.list" > "$RUN/agent_direct.list"
		LIST=$RUN/list.abs
		for rep in $(seq 1 "$REPS_LONG"); do
			SLOW_LOG_AGENT=""
			if [ "$rep" = 1 ]; then
				SLOW_LOG_AGENT=$RUN/slowlog.f_hsm_agent
			fi
			abs_list "$RUN/agent_hsm.list" > "$LIST"
			restore "$CORPUS_DIR/sample"
			measure f_hsm_agent "$rep" f_hsm_agent
			[ "$rep" != 1 ] || fingerprint f_hsm_agent "$RUN/agent_hsm.list"
			restore "$CORPUS_DIR/sample"
			measure f_hsm_agent_loop "$rep" f_hsm_agent_loop
			[ "$rep" != 1 ] || fingerprint f_hsm_agent_loop "$RUN/agent_hsm.list"
			abs_list "$RUN/agent_direct.list" > "$LIST"
			restore "$CORPUS_DIR/sample"
			measure f_hsm_direct "$rep" f_hsm_direct
			[ "$rep" != 1 ] || fingerprint f_hsm_direct "$RUN/agent_direct.list"
		done
		SLOW_LOG_AGENT=""
	fi
	compare_runs "$REPS_LONG" "$CORPUS_DIR/sample" "$CORPUS_DIR/sample.list" \
		f_soft_sf_loop f_soft_sf_xargs f_soft_agent f_soft_agent_xargs f_soft_floor f_soft_bulk
	compare_runs "$REPS" "$CORPUS_DIR/sample" "$CORPUS_DIR/sample.list" f_pem_sf_loop f_pem_agent
}

# ---------------------------------------------------------------- report

f_label() {
	case $1 in
	f_hsm_agent) echo "modsign agent, $AGENT_HSM_N modsign processes, $AGENT_HSM_P at a time" ;;
	f_hsm_agent_loop) echo "modsign agent, $AGENT_HSM_N modsign processes one after another" ;;
	f_hsm_direct) echo "modsign without the agent, $SLOW_SUBSET processes" ;;
	f_soft_sf_loop) echo "sign-file (ENGINE, SoftHSM2) loop" ;;
	f_soft_sf_xargs) echo "sign-file (ENGINE, SoftHSM2), xargs -P 2" ;;
	f_soft_agent) echo "modsign agent (SoftHSM2), a modsign process per module" ;;
	f_soft_agent_xargs) echo "modsign agent (SoftHSM2), xargs -P 2 modsign processes" ;;
	f_soft_floor) echo "the same loop starting /bin/true in modsign's place (nothing signed)" ;;
	f_soft_bulk) echo "modsign -b -j 1 (SoftHSM2): the work without a process per module" ;;
	f_pem_sf_loop) echo "sign-file (PEM) loop" ;;
	f_pem_agent) echo "modsign agent (PEM key), a modsign process per module" ;;
	*) echo "$1" ;;
	esac
}

agent_has_runs() {
	local v
	for v in $SECTION_F; do
		has_runs "$v" && return 0
	done
	return 1
}

# agent_targets: F1..F4 (verdicts) and F1_TEXT..F4_TEXT, the agent's targets.
agent_targets() {
	local agent direct per loop xargs ax pem pa
	agent=$(median_of f_hsm_agent)
	direct=$(median_of f_hsm_direct)
	AGENT_FLOOR=$(calc "($SLOW_INIT_MS + $SLOW_LOGIN_MS + $AGENT_HSM_N * $SLOW_SIGN_MS) / 1000")
	F1_VAL=n/a
	[ "$agent" = n/a ] || F1_VAL=$(calc "$agent / $AGENT_FLOOR")
	F1=$(verdict "$F1_VAL" "<=" "$AGENT_HSM_TARGET")
	per=n/a
	[ "$direct" = n/a ] || per=$(fmt '%.2f' "$(calc "$direct / $SLOW_SUBSET")")
	F1_TEXT="$(fmt '%.3f' "$F1_VAL") x the floor (agent $agent s, floor $(fmt '%.1f' "$AGENT_FLOOR") s; without it $per s a process)"
	loop=$(median_of f_soft_sf_loop)
	agent=$(median_of f_soft_agent)
	F2_VAL=$(ratio "$loop" "$agent")
	F2=$(verdict "$F2_VAL" ">=" "$AGENT_SOFT_TARGET")
	F2_TEXT="${F2_VAL}x (sign-file loop $loop s, agent $agent s)"
	xargs=$(median_of f_soft_sf_xargs)
	ax=$(median_of f_soft_agent_xargs)
	F3_TEXT="$(ratio "$xargs" "$ax")x (sign-file xargs -P 2 $xargs s, modsign xargs -P 2 under the agent $ax s)"
	agent_ceiling "$loop" "$agent"
	pem=$(median_of f_pem_sf_loop)
	pa=$(median_of f_pem_agent)
	F4_VAL=$(ratio "$pem" "$pa")
	F4=$(verdict "$F4_VAL" ">" 1)
	F4_TEXT="${F4_VAL}x (sign-file loop $pem s, modsign under the agent $pa s, $SAMPLE_REAL_N processes each)"
}

# agent_ceiling LOOP AGENT: CEIL_TEXT, the best ratio a process per module
# can reach against sign-file's loop here: a process that costs no more than
# /bin/true, doing modsign -b -j 1's work per module; and what modsign's
# client adds to that.
agent_ceiling() {
	local floor bulk best
	floor=$(median_of f_soft_floor)
	bulk=$(median_of f_soft_bulk)
	CEIL_TEXT=""
	case "$1 $2 $floor $bulk" in *n/a*) return ;; esac
	best=$(calc "$floor + $bulk")
	CEIL_TEXT="the ceiling for any process per module on this machine and token: sign-file loop / (the loop starting /bin/true, $(fmt '%.3f' "$(calc "$floor * 1000 / $SAMPLE_REAL_N")") ms a module, + modsign -b -j 1's work, its one start-up and login included, $(fmt '%.3f' "$(calc "$bulk * 1000 / $SAMPLE_REAL_N")") ms a module) = $(ratio "$1" "$best")x; modsign's client adds $(fmt '%.3f' "$(calc "($2 - $best) * 1000 / $SAMPLE_REAL_N")") ms a module to that (its own start-up beyond /bin/true, the certificate, three round trips to the agent, the directory's fsync each process pays alone)"
}

# agent_rows: one row per variant, per module over its own module count.
agent_rows() {
	local v n out
	for v in $SECTION_F; do
		stat_get "$v"
		case $v in
		f_hsm_agent | f_hsm_agent_loop) n=$AGENT_HSM_N ;;
		f_hsm_direct) n=$SLOW_SUBSET ;;
		*) n=$SAMPLE_REAL_N ;;
		esac
		if [ "$S_N" -eq 0 ]; then
			printf '| %s | not measured (%s failed runs) | | | | | |\n' "$(f_label "$v")" "$S_FAIL"
			continue
		fi
		out=$(verify "$v" "$(ref_of)")
		[ "$v" != "$(ref_of)" ] || out=reference
		[ "$v" != f_soft_floor ] || out="nothing signed"
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$(f_label "$v")" "$S_MED" "$S_MIN" \
			"$S_MAX" "$(fmt '%.3f' "$(calc "$S_MED * 1000 / $n")")" \
			"$(fmt '%.3f' "$(calc "$S_CPU * 1000 / $n")")" "$out"
	done
}

# agent_xargs_note: sign-file calls that failed under xargs -P 2 on SoftHSM2.
agent_xargs_note() {
	local failed
	failed=$(failed_calls f_soft_sf_xargs)
	[ -n "$failed" ] && [ "$failed" != 0 ] || return 0
	printf -- '- `xargs -P 2` sign-file on SoftHSM2: %s of %s calls failed (median), as in (b); under the agent only the agent process opens the token.\n' "$failed" "$SAMPLE_REAL_N"
}

# shellcheck disable=SC2016  # backquotes for Markdown, not for the shell
agent_section() {
	local loop_x=n/a
	agent_targets
	[ "$(median_of f_hsm_agent_loop)" = n/a ] ||
		loop_x=$(fmt '%.3f' "$(calc "$(median_of f_hsm_agent_loop) / $AGENT_FLOOR")")
	cat <<EOT
## (f) \`modsign agent\`: one modsign process per module, as kbuild calls sign-file (issue 13)

The agent loads the key once (one \`C_Initialize\`, one \`C_Login\`) and runs
the loop that starts one \`modsign\` process per module; each finds
MODSIGN_AGENT_SOCK and has the agent sign its digest. HSM-like runs: $REPS_LONG,
interleaved with each other; SoftHSM2: $REPS_LONG, PEM: $REPS, interleaved with
sign-file's.

| target | measured | result |
| --- | --- | --- |
| HSM-like token, $AGENT_HSM_N modules, a process each ($AGENT_HSM_P at a time, as \`make -j$AGENT_HSM_P\`): at most $AGENT_HSM_TARGET x the floor (${SLOW_INIT_MS} + ${SLOW_LOGIN_MS} ms + $AGENT_HSM_N x ${SLOW_SIGN_MS} ms) | $F1_TEXT | **$F1** |
| SoftHSM2, $SAMPLE_REAL_N modules, a process each: at least ${AGENT_SOFT_TARGET}x the sign-file loop | $F2_TEXT | **$F2** |
| the same with \`xargs -P 2\` on both sides (reported) | $F3_TEXT | |
| PEM key, a process per module: faster than sign-file's loop | $F4_TEXT | **$F4** |

| variant | median s | min s | max s | ms/module | CPU ms/module | output check |
| --- | ---: | ---: | ---: | ---: | ---: | --- |
$(agent_rows)

- the agent's first HSM-like run, token calls (slowtoken log): $(slow_calls "$RUN/slowlog.f_hsm_agent")
- one process after another (as \`make -j1\`), each process's own start, hash, write and fsync add to its signature: $loop_x x the floor
$([ -z "$CEIL_TEXT" ] || echo "- $CEIL_TEXT")
- without the agent each process pays the token's start-up and login: $AGENT_HSM_N x $(calc "($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SLOW_SIGN_MS) / 1000") s = $(calc "$AGENT_HSM_N * ($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SLOW_SIGN_MS) / 1000") s at best
$(agent_xargs_note)

EOT
}

# agent_summary: the agent's targets for print_summary.
agent_summary() {
	agent_has_runs || return 0
	agent_targets
	printf '  %-12s agent, HSM-like, within %s x the floor: %s\n' "$F1" "$AGENT_HSM_TARGET" "$F1_TEXT"
	printf '  %-12s agent, SoftHSM2, >= %sx the sign-file loop: %s\n' "$F2" "$AGENT_SOFT_TARGET" "$F2_TEXT"
	printf '  %-12s agent, SoftHSM2, xargs -P 2 on both sides: %s\n' reported "$F3_TEXT"
	printf '  %-12s agent, PEM key, faster than the sign-file loop: %s\n' "$F4" "$F4_TEXT"
	[ -z "$CEIL_TEXT" ] || printf '  %-12s %s\n' reported "$CEIL_TEXT"
}
