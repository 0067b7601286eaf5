#!/bin/bash
# The policy for token faults, through the fault-injecting shim: a lost
# session (CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED,
# CKR_USER_NOT_LOGGED_IN) is re-opened, logged in again if the token forgot
# the login, and the signature tried once more, at most 3 times a run; a
# removed token or a device error stops the run. Either way the right
# modules are signed, none is corrupted, C_Login never sees a PIN twice
# unless the login was lost, and the summary and status tell the truth.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
N=10
uri=$(slow_key_uri rsa2048)
cert=$DATA/rsa2048.x509.der
LOG=$T/calls.log
"$TOP/tests/lib/mkmodule.sh" "$T/src" $N 2 >/dev/null
mkdir "$T/ref" && cp "$T"/src/*.ko "$T/ref/"
"$MODSIGN" -q -r "$T/ref" sha256 "$DATA/rsa2048.key.pem" "$cert"

# shellcheck source=tests/lib/workset.sh
. "$TOP/tests/lib/workset.sh"

# expect FAULT JOBS STATUS SIGNED MESSAGE: run with the fault, then check.
expect() {
	fault=$1 jobs=$2 want_rc=$3 want_signed=$4 msg=$5
	fresh
	SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=$fault run_ms -j "$jobs" -r "$T/w" sha256 "$uri" "$cert"
	count_state
	summary="$want_signed signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), $((N - want_signed)) not signed, of $N"
	if [ "$rc" -eq "$want_rc" ] && [ -z "$broken" ] && [ "$signed" -eq "$want_signed" ] &&
	    [ "$orig" -eq $((N - want_signed)) ] && grep -q -- "$msg" "$T/out" &&
	    grep -q "$summary" "$T/out" && ! grep -q "$PIN" "$T/out"; then
		t_pass "$fault (-j $jobs): exit $want_rc, $want_signed of $N signed, others untouched"
	else
		t_fail "$fault (-j $jobs): exit $want_rc, $want_signed of $N signed, others untouched" \
			"exit $rc, signed $signed, original $orig, broken:$broken" "$(tail -n 6 "$T/out")"
	fi
}

# Session loss: re-opened and signed again; everything signed.
expect C_Sign:4:CKR_SESSION_HANDLE_INVALID 1 0 $N "session re-opened"
[ "$(n_calls C_OpenSession)" -eq 2 ] && [ "$(n_calls C_Login)" -eq 1 ] &&
	t_pass "session loss: one more C_OpenSession, still one C_Login" ||
	t_fail "session loss: one more C_OpenSession, still one C_Login" \
		"$(awk '{ print $1 }' "$LOG" | sort | uniq -c)"
expect C_Sign:3:CKR_SESSION_CLOSED 2 0 $N "session re-opened"
expect C_Sign:5:CKR_USER_NOT_LOGGED_IN 2 0 $N "session re-opened"
expect C_SignInit:2:CKR_SESSION_HANDLE_INVALID 1 0 $N "session re-opened"
# Lost again and again: three recoveries, then the run stops (-j 1: the
# fourth failure is the 7th C_Sign, after 3 modules were signed).
expect C_Sign:4+:CKR_SESSION_HANDLE_INVALID 1 1 3 "signing failed: C_Sign: CKR_SESSION_HANDLE_INVALID"
# A removed token or a broken device: stop at once, no recovery attempted.
expect C_Sign:4:CKR_DEVICE_REMOVED 1 1 3 "C_Sign: CKR_DEVICE_REMOVED"
[ "$(n_calls C_OpenSession)" -eq 1 ] && t_pass "device removed: no session re-opened" ||
	t_fail "device removed: no session re-opened" "$(n_calls C_OpenSession) C_OpenSession"
expect C_Sign:2:CKR_TOKEN_NOT_PRESENT 1 1 1 "C_Sign: CKR_TOKEN_NOT_PRESENT"
expect C_Sign:6:CKR_DEVICE_ERROR 1 1 5 "C_Sign: CKR_DEVICE_ERROR"
expect C_Sign:1:CKR_FUNCTION_FAILED 1 1 0 "C_Sign: CKR_FUNCTION_FAILED"
# A signature that never comes back: --token-timeout stops the run; what was
# signed stays signed, the rest untouched (here after 2 s, not an hour).
fresh
start=$(date +%s)
SLOWTOKEN_FAULT=C_Sign:3:HANG SLOWTOKEN_HANG_MS=600000 run_ms --token-timeout 2 -j 1 -r "$T/w" sha256 "$uri" "$cert"
count_state
if [ "$rc" -eq 1 ] && [ -z "$broken" ] && [ "$signed" -eq 2 ] && [ $(( $(date +%s) - start )) -lt 60 ] &&
    grep -q "did not return the signature within 2 s" "$T/out" &&
    grep -q "2 signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), 8 not signed, of 10" "$T/out"; then
	t_pass "hung C_Sign: stopped by --token-timeout, 2 signed, 8 untouched"
else
	t_fail "hung C_Sign: stopped by --token-timeout, 2 signed, 8 untouched" \
		"exit $rc, signed $signed, broken:$broken" "$(tail -n 5 "$T/out")"
fi
fresh
SLOWTOKEN_FAULT=C_Sign:1:HANG SLOWTOKEN_HANG_MS=600000 run_ms --token-timeout 2 sha256 "$uri" "$cert" "$T/w/mod000.ko"
count_state
[ "$rc" -eq 1 ] && [ "$orig" -eq $N ] && grep -q "mod000.ko: the token did not return the signature within 2 s" "$T/out" && ! grep -q "signed, .* failed" "$T/out" &&
	t_pass "hung C_Sign, one module: stopped, module untouched" ||
	t_fail "hung C_Sign, one module: stopped, module untouched" "exit $rc" "$(cat "$T/out")"

# --token-timeout 0 waits for the token for ever, but not for signals: the
# first SIGTERM is answered (the run stops taking modules and says a second
# one stops it at once), the second ends it, with the hung module untouched.
for how in "-r DIR" single; do
	fresh
	if [ "$how" = single ]; then
		set -- "$T/w/mod000.ko"
	else
		set -- -j 1 -r "$T/w"
	fi
	SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_Sign:1:HANG SLOWTOKEN_HANG_MS=600000 \
		timeout -k 3 30 "$MODSIGN" --token-timeout 0 sha256 "$uri" "$cert" "$@" >"$T/out" 2>&1 &
	pid=$!
	for _ in $(seq 200); do
		[ "$(n_calls C_SignInit)" -gt 0 ] && break	# C_Sign comes next, and hangs
		sleep 0.05
	done
	sleep 0.5
	mpid=$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)
	kill -TERM "$mpid" 2>/dev/null
	sleep 1
	answered=no
	grep -q "a second signal stops at once" "$T/out" && kill -0 "$mpid" 2>/dev/null && answered=yes
	kill -TERM "$mpid" 2>/dev/null
	wait "$pid"
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	count_state
	if [ "$answered" = yes ] && [ "$rc" -eq 143 ] && [ "$orig" -eq $N ] && [ -z "$broken" ]; then
		t_pass "hung C_Sign, --token-timeout 0, $how: the first SIGTERM answered, the second ends the run (143), all untouched"
	else
		t_fail "hung C_Sign, --token-timeout 0, $how: the first SIGTERM answered, the second ends the run (143), all untouched" \
			"answered: $answered; exit $rc$([ "$rc" -eq 124 ] && echo ' (killed: hung)'), original $orig" \
			"$(tail -n 4 "$T/out")"
	fi
done

# A wrong PIN at login: nothing touched, one C_Login.
fresh
KBUILD_SIGN_PIN=$WRONG_PIN SLOWTOKEN_LOG=$LOG run_ms -r "$T/w" sha256 "$uri" "$cert"
count_state
[ "$rc" -eq 1 ] && [ "$orig" -eq $N ] && [ "$(n_calls C_Login)" -eq 1 ] &&
	grep -q "CKR_PIN_INCORRECT" "$T/out" && ! grep -qF "$WRONG_PIN" "$T/out" &&
	t_pass "wrong PIN: one C_Login, nothing touched, PIN not shown" ||
	t_fail "wrong PIN: one C_Login, nothing touched, PIN not shown" "$(cat "$T/out")"
t_done
