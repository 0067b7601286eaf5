# The checks every real token of tests/integration/token_*.sh is proven on
# (issue 27), with the token's side counted in a tests/slowtoken call log
# ($LOG, default $T/st.log): sourced after common.sh, slowtoken.sh and
# t_slowtoken. The test sets
#   TC_URI     the rsa2048 key (tests/data/rsa2048.key.pem, imported) on
#              the token, reached directly
#   TC_SLOW    the same key through a copy of the shim that logs to $LOG
#              (may equal TC_URI when the shim sits behind it, as behind
#              `p11-kit server`)
#   TC_PIN, TC_WRONG   the token's PIN and one it refuses (default $PIN,
#              $WRONG_PIN)
# and may define, before sourcing:
#   tc_token [SETTING...]  the shim gets these slowtoken settings (and logs
#              to $LOG, emptied) for the runs after it; by default they are
#              written to $TC_SHIM.conf with SLOWTOKEN_MODULE=$TC_MODULE
#   tc_ms ARGS...   modsign against the token: output in $T/out (appended
#              to $MS_LOG), status in $rc; by default run_ms behind $TC_IN
#              (words such as a namespace entry, or empty)
# then calls tc_refs N and the cases:
#   tc_refs N        N modules in $T/src (20 under valgrind, where each of
#                    the agent's clients starts slowly), sign-file's
#                    results with the PEM key in $T/ref
#   tc_single        one module: sign-file's bytes
#   tc_bulk          -b over all: sign-file's bytes, one C_Login, a C_Sign each
#   tc_jobs          -j 8 over a 3-session limit: two signers beside
#                    session 0, one C_Login; then -j 64 (modsign's ceiling)
#   tc_agent         the agent, a modsign per module: one C_Login for all
#   tc_wrong_pin     a wrong PIN: refused after one C_Login, nothing
#                    touched; the right PIN signs afterwards (no lockout)
#   tc_kill_midrun WHAT KILL...   a bulk run (-j 2, signatures slowed to
#                    $TC_SIGN_MS ms if set) during which, after 10
#                    signatures, KILL runs: each module untouched or signed,
#                    no temp file. Leaves $rc (the run's status), $signed
#                    and $orig
#   tc_finish WHAT   after the token is back: --skip-signed leaves all N
#                    sign-file's bytes, no temp file
# shellcheck source=tests/lib/workset.sh
. "$TOP/tests/lib/workset.sh"
TC_CERT=$DATA/rsa2048.x509.der
LOG=${LOG:-$T/st.log}
TC_PIN=${TC_PIN:-$PIN}
TC_WRONG=${TC_WRONG:-$WRONG_PIN}
TC_IN=${TC_IN:-}

if ! declare -F tc_token >/dev/null; then
	tc_token() {
		printf '%s\n' "SLOWTOKEN_MODULE=$TC_MODULE" "SLOWTOKEN_LOG=$LOG" "$@" \
			>"$TC_SHIM.conf"
		rm -f "$LOG"
	}
fi
if ! declare -F tc_ms >/dev/null; then
	tc_ms() {
		$TC_IN "$MODSIGN" "$@" >"$T/out" 2>&1
		rc=$?
		cat "$T/out" >>"$MS_LOG"
	}
fi

tc_refs() {
	N=$1
	[ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ] && [ "$N" -gt 20 ] && N=20
	"$TOP/tests/lib/mkmodule.sh" "$T/src" "$N" 2 >/dev/null
	mkdir "$T/ref"
	for m in "$T"/src/*.ko; do
		"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$TC_CERT" "$m" "$T/ref/$(basename "$m")"
	done
}

# signs_ok: the signatures the token made.
signs_ok() {
	local n
	n=$(grep -c '^C_Sign rv=CKR_OK' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}

# n_left: files other than modules in $T/w (temp files left behind).
n_left() {
	find "$T/w" -type f ! -name '*.ko' | wc -l
}

# all_signed NAME: after a run over $T/w, every module sign-file's bytes.
all_signed() {
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ]; then
		t_pass "$1"
	else
		t_fail "$1" "status $rc, $signed of $N signed" "$(tail -n 5 "$T/out")"
	fi
}

tc_single() {
	tc_token
	cp "$T/src/mod000.ko" "$T/m.ko"
	KBUILD_SIGN_PIN=$TC_PIN tc_ms sha256 "$TC_URI" "$TC_CERT" "$T/m.ko"
	if [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/m.ko"; then
		t_pass "one module: byte-identical to sign-file"
	else
		t_fail "one module: byte-identical to sign-file" "status $rc" "$(tail -n 5 "$T/out")"
	fi
}

tc_bulk() {
	tc_token
	fresh
	KBUILD_SIGN_PIN=$TC_PIN tc_ms -b sha256 "$TC_SLOW" "$TC_CERT" "$T"/w/*.ko
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Login)" -eq 1 ] &&
		[ "$(signs_ok)" -eq "$N" ]; then
		t_pass "-b over $N modules: each sign-file's bytes, one C_Login, one C_Sign each"
	else
		t_fail "-b over $N modules: each sign-file's bytes, one C_Login, one C_Sign each" \
			"status $rc, $signed signed, $(n_calls C_Login) C_Login, $(signs_ok) C_Sign" \
			"$(tail -n 5 "$T/out")"
	fi
}

# signers_opened: sessions opened after the C_Login (before it, the module or
# `p11-kit remote` may open and close its own).
signers_opened() {
	sed -n '/^C_Login /,$p' "$LOG" | grep -c '^C_OpenSession rv=CKR_OK'
}

tc_jobs() {
	# Above the token's session limit: the shim states 3 sessions and
	# refuses a fourth (CKR_SESSION_COUNT), which modsign must not ask for.
	tc_token SLOWTOKEN_MAX_SESSIONS=3
	fresh
	KBUILD_SIGN_PIN=$TC_PIN tc_ms -j 8 -r "$T/w" sha256 "$TC_SLOW" "$TC_CERT"
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && ! grep -q CKR_SESSION_COUNT "$LOG" &&
		[ "$(n_calls C_Login)" -eq 1 ] && [ "$(signers_opened)" -eq 2 ]; then
		t_pass "-j 8 over a 3-session limit: all signed, two signers beside session 0, one C_Login"
	else
		t_fail "-j 8 over a 3-session limit: all signed, two signers beside session 0" \
			"status $rc, $signed signed, $(grep -c CKR_SESSION_COUNT "$LOG") CKR_SESSION_COUNT," \
			"$(signers_opened) sessions opened after the login (want 2)" \
			"$(tail -n 5 "$T/out")"
	fi
	# modsign's own ceiling, the token's own limits.
	tc_token
	fresh
	KBUILD_SIGN_PIN=$TC_PIN tc_ms -b -j 64 sha256 "$TC_URI" "$TC_CERT" "$T"/w/*.ko
	all_signed "-j 64: all $N identical to sign-file"
}

tc_agent() {
	tc_token
	fresh
	mkdir -p -m 0700 "$T/run"
	cat >"$T/per-module.sh" <<EOF
#!/bin/sh
for m in "$T"/w/*.ko; do
	"$MODSIGN" sha256 '$TC_SLOW' "$TC_CERT" "\$m" || exit 1
done
EOF
	chmod +x "$T/per-module.sh"
	KBUILD_SIGN_PIN=$TC_PIN XDG_RUNTIME_DIR=$T/run tc_ms agent "$TC_SLOW" -- "$T/per-module.sh"
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Login)" -eq 1 ] &&
		[ "$(signs_ok)" -eq "$N" ]; then
		t_pass "agent, a modsign per module: each sign-file's bytes, one C_Login for all"
	else
		t_fail "agent, a modsign per module: each sign-file's bytes, one C_Login for all" \
			"status $rc, $signed signed, $(n_calls C_Login) C_Login, $(signs_ok) C_Sign" \
			"$(tail -n 5 "$T/out")"
	fi
}

tc_wrong_pin() {
	tc_token
	fresh
	KBUILD_SIGN_PIN=$TC_WRONG tc_ms -b sha256 "$TC_SLOW" "$TC_CERT" "$T"/w/*.ko
	count_state
	expect_fail "wrong PIN: refused" 1 \
		"C_Login: PIN from KBUILD_SIGN_PIN rejected: CKR_PIN_INCORRECT"
	if [ "$(n_calls C_Login)" -eq 1 ] && [ "$orig" -eq "$N" ]; then
		t_pass "wrong PIN: one C_Login, no retry, every module untouched"
	else
		t_fail "wrong PIN: one C_Login, no retry, every module untouched" \
			"$(n_calls C_Login) C_Login, $orig untouched"
	fi
	cp "$T/src/mod000.ko" "$T/m.ko"
	KBUILD_SIGN_PIN=$TC_PIN tc_ms sha256 "$TC_URI" "$TC_CERT" "$T/m.ko"
	if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref/mod000.ko"; then
		t_pass "wrong PIN: the token is not locked, the right PIN signs afterwards"
	else
		t_fail "wrong PIN: the token is not locked, the right PIN signs afterwards" \
			"status $rc" "$(tail -n 5 "$T/out")"
	fi
}

tc_kill_midrun() {
	local what=$1 ms_pid
	shift
	tc_token ${TC_SIGN_MS:+SLOWTOKEN_SIGN_MS=$TC_SIGN_MS}
	fresh
	(
		KBUILD_SIGN_PIN=$TC_PIN tc_ms -b -j 2 sha256 "$TC_SLOW" "$TC_CERT" "$T"/w/*.ko
		exit "$rc"
	) &
	ms_pid=$!
	for _ in $(seq 1 600); do
		[ "$(signs_ok)" -ge 10 ] && break
		kill -0 "$ms_pid" 2>/dev/null || break
		sleep 0.05
	done
	"$@"
	wait "$ms_pid"
	rc=$?
	count_state
	if [ "$signed" -gt 0 ] && [ -z "$broken" ] && [ "$(n_left)" -eq 0 ]; then
		t_pass "$what killed mid-run: exit $rc, $signed signed, $orig untouched, none half-written, no temp file"
	else
		t_fail "$what killed mid-run: each module untouched or signed, no temp file" \
			"exit $rc, $signed signed, $orig untouched, torn:$broken, $(n_left) temp files" \
			"$(tail -n 5 "$T/out")"
	fi
}

tc_finish() {
	tc_token
	KBUILD_SIGN_PIN=$TC_PIN tc_ms -b --skip-signed sha256 "$TC_URI" "$TC_CERT" "$T"/w/*.ko
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_left)" -eq 0 ]; then
		t_pass "$1: --skip-signed finishes, all $N identical to sign-file, no temp file"
	else
		t_fail "$1: --skip-signed finishes, all $N identical to sign-file, no temp file" \
			"status $rc, $signed identical, $(n_left) temp files" "$(tail -n 5 "$T/out")"
	fi
}
