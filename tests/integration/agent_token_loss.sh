#!/bin/bash
# An agent whose token fails, through the slowtoken shim's faults: a device
# error once is recovered (a new session; no second C_Login while the token
# holds the login) and every module is signed; a device error for good stops
# the agent after the failed recovery, with a stop line in the audit log
# naming the token and the CKR_ name and its socket removed, so that the
# clients after it fail at once with "cannot connect" instead of one
# CKR_DEVICE_ERROR per module. Every module is left untouched or signed.
# (A bulk run keeps its own policy, token_faults.sh: a device error stops it.)
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup
N=10
"$TOP/tests/lib/mkmodule.sh" "$T/src" $N 2 >/dev/null
mkdir "$T/ref" && cp "$T"/src/*.ko "$T/ref/"
"$MODSIGN" -q -r "$T/ref" sha256 "$DATA/rsa2048.key.pem" "$CERT" 2>>"$MS_LOG"
LOG=$T/calls.log	# workset.sh's fresh removes it; each agent here logs to its own
# shellcheck source=tests/lib/workset.sh
. "$TOP/tests/lib/workset.sh"
# each_module: one modsign per module, as kbuild runs them, going on after
# a failure (make -k); each output in $T/c/NAME.out.
each_module() {
	rm -rf "$T/c" && mkdir "$T/c"
	for f in "$T"/w/*.ko; do
		"$MODSIGN" sha256 "$SLOW" "$CERT" "$f" >"$T/c/$(basename "$f").out" 2>&1
		cat "$T/c/$(basename "$f").out" >>"$MS_LOG"
	done
}
n_out() { grep -l -- "$1" "$T"/c/*.out 2>/dev/null | wc -l; }

# --- A device error once: the session is re-opened and the module signed.
fresh
SLOWTOKEN_LOG=$T/once.log SLOWTOKEN_FAULT=C_Sign:5:CKR_DEVICE_ERROR \
	daemon -j 1 --log "$T/once.audit" "$SLOW" || t_fail "daemon started" "$(cat "$T/daemon.err")"
each_module
count_state
if [ "$signed" -eq $N ] && [ "$(n_out CKR_)" -eq 0 ] && kill -0 "$MODSIGN_AGENT_PID" &&
    [ -S "$MODSIGN_AGENT_SOCK" ] &&
    [ "$(grep -c '"outcome":"signed"' "$T/once.audit")" -eq $N ] &&
    ! grep -q '"outcome":"failed"' "$T/once.audit"; then
	t_pass "C_Sign:5:CKR_DEVICE_ERROR once: recovered, all $N signed, the agent serves on"
else
	t_fail "C_Sign:5:CKR_DEVICE_ERROR once: recovered, all $N signed, the agent serves on" \
		"$signed signed, $(n_out CKR_) clients saw a CKR_" "$(cat "$T"/c/*.out | head -n 5)"
fi
# One lane: one session at start, one new one for the recovery; SoftHSM2
# keeps the login across sessions, so no second C_Login.
[ "$(calls C_OpenSession "$T/once.log")" -eq 2 ] && [ "$(calls C_Login "$T/once.log")" -eq 1 ] &&
	t_pass "recovery: a new session, and no C_Login while the token holds the login" ||
	t_fail "recovery: a new session, and no C_Login while the token holds the login" \
		"$(awk '{ print $1 }' "$T/once.log" | sort | uniq -c)"
"$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID

# --- A device error for good, under a daemon: recovery fails, the agent stops.
fresh
SLOWTOKEN_LOG=$T/dead.log SLOWTOKEN_FAULT=C_Sign:5+:CKR_DEVICE_ERROR \
	daemon -j 1 --log "$T/dead.audit" "$SLOW" || t_fail "daemon started" "$(cat "$T/daemon.err")"
sock=$MODSIGN_AGENT_SOCK
each_module
count_state
wait_gone "$MODSIGN_AGENT_PID"
gone_rc=$?
if [ -z "$broken" ] && [ "$signed" -eq 4 ] && [ "$orig" -eq $((N - 4)) ] &&
    [ "$(n_out CKR_DEVICE_ERROR)" -eq 1 ] && [ "$(n_out 'cannot connect')" -eq $((N - 5)) ]; then
	t_pass "C_Sign:5+:CKR_DEVICE_ERROR: 4 signed, one client sees the error, the $((N - 5)) after it cannot connect"
else
	t_fail "C_Sign:5+:CKR_DEVICE_ERROR: 4 signed, one client sees the error, the $((N - 5)) after it cannot connect" \
		"$signed signed, $orig untouched, torn:$broken; $(n_out CKR_DEVICE_ERROR) saw CKR_DEVICE_ERROR, $(n_out 'cannot connect') cannot connect" \
		"$(tail -n 2 "$T"/c/mod009.ko.out)"
fi
# One lane: one recovery was tried (a second session, a sixth C_Sign)
# before giving up, and no C_Sign after it.
[ "$(calls C_OpenSession "$T/dead.log")" -eq 2 ] && [ "$(calls C_Sign "$T/dead.log")" -eq 6 ] &&
	t_pass "device error for good: one recovery tried (a new session, one more C_Sign), then no more C_Sign" ||
	t_fail "device error for good: one recovery tried, then no more C_Sign" \
		"$(awk '{ print $1 }' "$T/dead.log" | sort | uniq -c)"
if [ "$gone_rc" -eq 0 ] && [ ! -e "$sock" ] && [ ! -e "$(dirname "$sock")" ] &&
    grep -q "\"event\":\"stop\".*token 'modsign-test' (serial [0-9a-f]*) lost: C_Sign: CKR_DEVICE_ERROR" \
	"$T/dead.audit"; then
	t_pass "the daemon stops: socket removed, audit stop line names the token and CKR_DEVICE_ERROR"
else
	t_fail "the daemon stops: socket removed, audit stop line names the token and CKR_DEVICE_ERROR" \
		"gone: $gone_rc, socket: $(ls -la "$sock" 2>&1)" "$(tail -n 2 "$T/dead.audit")"
fi

# --- Around a command that goes on after a failure: the command is left
# to fail fast, and the agent's status is 1 (the command's was 0).
fresh
cat >"$T/cmd.sh" <<EOF
#!/bin/sh
for f in "$T"/w/*.ko; do
	"$MODSIGN" sha256 "$SLOW" "$CERT" "\$f" >"$T/c/\$(basename "\$f").out" 2>&1
done
exit 0
EOF
chmod +x "$T/cmd.sh"
rm -rf "$T/c" && mkdir "$T/c"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_FAULT=C_Sign:3+:CKR_DEVICE_REMOVED \
	run_ms agent --log "$T/cmd.audit" "$SLOW" -- "$T/cmd.sh"
cat "$T"/c/*.out >>"$MS_LOG"
count_state
if [ "$rc" -eq 1 ] && [ -z "$broken" ] && [ "$signed" -eq 2 ] && [ "$orig" -eq $((N - 2)) ] &&
    [ "$(n_out 'cannot connect')" -eq $((N - 3)) ] &&
    grep -q "agent: token 'modsign-test' (serial [0-9a-f]*) lost: C_Sign: CKR_DEVICE_REMOVED.*: stopping" "$T/out" &&
    grep -q "agent: stopped (token 'modsign-test' (serial [0-9a-f]*) lost: C_Sign: CKR_DEVICE_REMOVED" "$T/out" &&
    grep -q '"event":"stop".*CKR_DEVICE_REMOVED' "$T/cmd.audit"; then
	t_pass "agent -- cmd, token removed: stops with a message, the command's later calls cannot connect, status 1"
else
	t_fail "agent -- cmd, token removed: stops with a message, the command's later calls cannot connect, status 1" \
		"rc $rc, $signed signed, $orig untouched, torn:$broken, $(n_out 'cannot connect') cannot connect" \
		"$(cat "$T/out")"
fi

# --- A bulk client (-r, two lanes) when the agent's token goes: it stops at
# once, each module untouched or signed.
fresh
SLOWTOKEN_FAULT=C_Sign:4+:CKR_TOKEN_NOT_PRESENT daemon -j 2 --log "$T/bulk.audit" "$SLOW" ||
	t_fail "daemon started" "$(cat "$T/daemon.err")"
run_ms -j 2 -r "$T/w" sha256 "$SLOW" "$CERT"
count_state
wait_gone "$MODSIGN_AGENT_PID"
gone_rc=$?
if [ "$rc" -eq 1 ] && [ -z "$broken" ] && [ "$signed" -ge 3 ] && [ "$orig" -ge 1 ] &&
    [ "$gone_rc" -eq 0 ] && grep -q '"event":"stop".*CKR_TOKEN_NOT_PRESENT' "$T/bulk.audit"; then
	t_pass "a bulk client, token not present: $signed signed, $orig untouched, none torn; the agent stopped"
else
	t_fail "a bulk client, token not present: every module untouched or signed; the agent stopped" \
		"rc $rc, $signed signed, $orig untouched, torn:$broken, gone $gone_rc" "$(tail -n 5 "$T/out")"
fi
t_done
