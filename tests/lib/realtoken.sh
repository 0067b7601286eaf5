# The checks every real-token test makes (tests/integration/token_*.sh),
# sourced after common.sh and slowtoken.sh (t_slowtoken run, and
# SLOWTOKEN_MODULE naming the token's module). The test sets:
#   RT_IN      words run before a command that must reach the token (the
#              namespace the token lives in), or empty
#   RT_URI     the URI of the rsa2048 key (tests/data/rsa2048.key.pem,
#              imported) through the token's module
#   RT_SLOW    the same key through tests/slowtoken, which logs every call
#   RT_WRONG   a PIN the token refuses (KBUILD_SIGN_PIN holds the right one)
# and calls:
#   rt_modules N        $T/src (N modules; 20 under valgrind, where each of
#                       the agent's N clients starts slowly), $T/ref
#                       (sign-file's results with the PEM key); $CERT is
#                       the key's certificate
#   rt_signing          one module, -b over N (one C_Login), -j 16 over 3
#                       sessions, -j 64, N processes under the agent (one
#                       C_Login), a wrong PIN (one C_Login, the right one
#                       signs afterwards); RSA, byte-identical to sign-file
#   rt_kill_midrun WHAT KILL...   a bulk run (-j 2, signatures slowed to
#                       $RT_SIGN_MS ms, default 0) during which, after 10
#                       signatures, KILL runs; checks that each module is
#                       untouched or signed and no temp file is left. Sets
#                       $rc (the run's status), $rt_signed and $rt_orig
#   rt_finish WHAT      after the token is back: --skip-signed leaves all
#                       N identical to sign-file, no temp file
# The rest: rt_fresh (a new $T/w), rt_same, rt_orig, rt_tmp (counts over
# $T/w), rt_calls FUNC LOG (calls in a slowtoken log), rt_ms ARGS (run_ms
# through $RT_IN).

rt_fresh() { rm -rf "$T/w" && mkdir "$T/w" && cp "$T"/src/*.ko "$T/w/"; }
rt_same() { n=0; for f in "$T"/w/*.ko; do same "$f" "$T/ref/${f##*/}" && n=$((n + 1)); done; echo $n; }
rt_orig() { n=0; for f in "$T"/w/*.ko; do same "$f" "$T/src/${f##*/}" && n=$((n + 1)); done; echo $n; }
rt_tmp() { find "$T/w" -name '.*.modsign-*.tmp' | wc -l; }
rt_calls() { if [ -e "$2" ]; then grep -c "^$1 " "$2"; else echo 0; fi; }

rt_ms() {
	$RT_IN "$MODSIGN" "$@" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
}

rt_modules() {
	RT_N=$1
	[ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ] && [ "$RT_N" -gt 20 ] && RT_N=20
	CERT=$DATA/rsa2048.x509.der
	"$TOP/tests/lib/mkmodule.sh" "$T/src" "$RT_N" 2 >/dev/null
	mkdir "$T/ref"
	for f in "$T"/src/*.ko; do
		"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$CERT" "$f" "$T/ref/${f##*/}"
	done
}

# rt_all_signed NAME [LOG]: after a run over $T/w, all identical to
# sign-file's and, with LOG, one C_Login in it.
rt_all_signed() {
	if [ "$rc" -eq 0 ] && [ "$(rt_same)" -eq "$RT_N" ] &&
		{ [ $# -lt 2 ] || [ "$(rt_calls C_Login "$2")" = 1 ]; }; then
		t_pass "$1"
	else
		t_fail "$1" "status $rc, $(rt_same) of $RT_N identical" \
			"$([ $# -lt 2 ] || awk '{ print $1 }' "$2" | sort | uniq -c)" "$(tail -n 5 "$T/out")"
	fi
}

rt_signing() {
	local mod=$T/src/mod000.ko
	cp "$mod" "$T/m.ko"
	rt_ms sha256 "$RT_URI" "$CERT" "$T/m.ko"
	if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref/mod000.ko"; then
		t_pass "one module: identical to sign-file with the PEM key"
	else
		t_fail "one module: identical to sign-file with the PEM key" "status $rc" \
			"$(tail -n 5 "$T/out")"
	fi

	rt_fresh
	SLOWTOKEN_LOG=$T/bulk.log rt_ms -b sha256 "$RT_SLOW" "$CERT" "$T"/w/*.ko
	rt_all_signed "-b over $RT_N modules: one C_Login, every module identical to sign-file" \
		"$T/bulk.log"

	# Above the token's session limit: the shim states 3 sessions and
	# refuses a fourth (CKR_SESSION_COUNT); then modsign's own ceiling, 64.
	rt_fresh
	SLOWTOKEN_MAX_SESSIONS=3 SLOWTOKEN_LOG=$T/jobs.log \
		rt_ms -b -j 16 sha256 "$RT_SLOW" "$CERT" "$T"/w/*.ko
	rt_all_signed "-j 16 on a token allowing 3 sessions: all $RT_N signed, one C_Login" \
		"$T/jobs.log"
	rt_fresh
	rt_ms -b -j 64 sha256 "$RT_URI" "$CERT" "$T"/w/*.ko
	rt_all_signed "-j 64: all $RT_N identical to sign-file"

	# Per-module processes, as kbuild makes them, under the agent.
	rt_fresh
	mkdir -p -m 0700 "$T/run"
	cat >"$T/loop.sh" <<EOF
#!/bin/sh
for f in "$T"/w/*.ko; do
	"$MODSIGN" sha256 "$RT_SLOW" "$CERT" "\$f" || exit 1
done
EOF
	chmod +x "$T/loop.sh"
	XDG_RUNTIME_DIR=$T/run SLOWTOKEN_LOG=$T/agent.log rt_ms agent "$RT_SLOW" -- "$T/loop.sh"
	rt_all_signed "agent: $RT_N modsign processes, one C_Login, every module identical to sign-file" \
		"$T/agent.log"

	cp "$mod" "$T/m.ko"
	KBUILD_SIGN_PIN=$RT_WRONG SLOWTOKEN_LOG=$T/wrong.log rt_ms sha256 "$RT_SLOW" "$CERT" "$T/m.ko"
	expect_fail "wrong PIN: refused" 1 "C_Login.*CKR_PIN_INCORRECT"
	if [ "$(rt_calls C_Login "$T/wrong.log")" = 1 ] && same "$T/m.ko" "$mod"; then
		t_pass "wrong PIN: one C_Login, module untouched"
	else
		t_fail "wrong PIN: one C_Login, module untouched" \
			"$(rt_calls C_Login "$T/wrong.log") C_Login"
	fi
	rt_ms sha256 "$RT_URI" "$CERT" "$T/m.ko"
	if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref/mod000.ko"; then
		t_pass "wrong PIN: the token is not locked, the right PIN signs afterwards"
	else
		t_fail "wrong PIN: the token is not locked, the right PIN signs afterwards" \
			"status $rc" "$(tail -n 5 "$T/out")"
	fi
}

rt_kill_midrun() {
	local what=$1 ms_pid
	shift
	rt_fresh
	: >"$T/kill.log"
	$RT_IN env SLOWTOKEN_SIGN_MS="${RT_SIGN_MS:-0}" SLOWTOKEN_LOG="$T/kill.log" \
		timeout 300 "$MODSIGN" -b -j 2 sha256 "$RT_SLOW" "$CERT" "$T"/w/*.ko >"$T/out" 2>&1 &
	ms_pid=$!
	for _ in $(seq 1 600); do
		[ "$(rt_calls C_Sign "$T/kill.log")" -ge 10 ] && break
		kill -0 "$ms_pid" 2>/dev/null || break
		sleep 0.05
	done
	"$@"
	wait "$ms_pid"
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	rt_signed=$(rt_same)
	rt_orig=$(rt_orig)
	if [ "$rt_signed" -gt 0 ] && [ $((rt_signed + rt_orig)) -eq "$RT_N" ] &&
		[ "$(rt_tmp)" -eq 0 ]; then
		t_pass "$what killed mid-run: exit $rc, $rt_signed signed, $rt_orig untouched, none half-written, no temp file"
	else
		t_fail "$what killed mid-run: each module untouched or signed, no temp file" \
			"exit $rc, $rt_signed signed, $rt_orig untouched, $(rt_tmp) temp files" \
			"$(tail -n 5 "$T/out")"
	fi
}

rt_finish() {
	rt_ms -b --skip-signed sha256 "$RT_URI" "$CERT" "$T"/w/*.ko
	if [ "$rc" -eq 0 ] && [ "$(rt_same)" -eq "$RT_N" ] && [ "$(rt_tmp)" -eq 0 ]; then
		t_pass "$1: --skip-signed finishes, all $RT_N identical to sign-file, no temp file"
	else
		t_fail "$1: --skip-signed finishes, all $RT_N identical to sign-file, no temp file" \
			"status $rc, $(rt_same) identical" "$(tail -n 5 "$T/out")"
	fi
}
