#!/bin/bash
# p11-kit remoting: the test's SoftHSM2 token exported by
# `p11-kit server` on a Unix socket in $T, signed with through the client
# module p11-kit-client.so (module-path=, P11_KIT_SERVER_ADDRESS). The
# server's provider is tests/slowtoken over SoftHSM2, so that the token
# side's calls are counted (SLOWTOKEN_LOG) and faults and a session limit
# set; the server runs one `p11-kit remote` per connection, which loads a
# fresh copy of the shim that reads its settings from $SHIM_R.conf. The
# link is cut under a bulk run and under a running `agent --daemon`.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
# shellcheck source=tests/lib/tok_remote.sh
. "$TOP/tests/lib/tok_remote.sh"
CLIENT=$REMOTE_CLIENT
if [ -n "$(remote_missing)" ]; then
	t_skip "p11-kit remoting" "$(remote_missing) not installed (scripts/install-deps.sh)"
	t_done
	exit
fi
cert=$DATA/rsa2048.x509.der
SOCK=$T/p11.sock
LOG=$T/st.log
SHIM_R=$T/st-r.so
cp "$SHIM" "$SHIM_R"
uri="pkcs11:token=modsign-test;object=rsa2048;type=private?module-path=$CLIENT"

# server [SETTING...]: (re)start the server (tests/lib/tok_remote.sh); the
# shim copy gets the settings and logs to $LOG.
server() {
	printf '%s\n' "SLOWTOKEN_LOG=$LOG" "$@" >"$SHIM_R.conf"
	remote_start "$SOCK" "$SHIM_R" "pkcs11:token=modsign-test" "$T/server.err" ||
		t_fail "p11-kit server started" "$(cat "$T/server.err")"
}
server_stop() {
	remote_stop
}
trap 'server_stop; t_cleanup' EXIT
export P11_KIT_SERVER_ADDRESS=unix:path=$SOCK

# tc_token [SETTING...]: a fresh server whose shim has the settings.
tc_token() {
	server "$@"
}
tc_ms() {
	run_ms "$@"
}
# The shim sits behind the server: the counted URI is the plain one.
TC_URI=$uri
TC_SLOW=$uri
# shellcheck source=tests/lib/token_cases.sh
. "$TOP/tests/lib/token_cases.sh"
tc_refs 50
server

# No server address: no token, and the hint names the variable.
cp "$T/src/mod000.ko" "$T/m.ko"
env -u P11_KIT_SERVER_ADDRESS KBUILD_SIGN_PIN="$PIN" "$MODSIGN" sha256 "$uri" "$cert" "$T/m.ko" \
	>"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
expect_fail "P11_KIT_SERVER_ADDRESS unset: no token" 1 \
	"no token matches token=\"modsign-test\" .*p11-kit-client.so.*; initialised tokens present: 0"
grep -q "^  hint: p11-kit-client.so shows the tokens of a \"p11-kit server\" at P11_KIT_SERVER_ADDRESS" \
	"$T/out" && same "$T/src/mod000.ko" "$T/m.ko" &&
	t_pass "P11_KIT_SERVER_ADDRESS unset: the hint names it, module untouched" ||
	t_fail "P11_KIT_SERVER_ADDRESS unset: the hint names it, module untouched" "$(cat "$T/out")"

tc_single
tc_bulk
# SoftHSM2 behind the server: the session copy of the key is made there.
[ "$(grep -c '^C_CopyObject rv=CKR_OK' "$LOG")" -ge 1 ] &&
	t_pass "SoftHSM2 behind p11-kit-client: the key is signed with as a session copy" ||
	t_fail "SoftHSM2 behind p11-kit-client: the key is signed with as a session copy" \
		"$(grep -c '^C_CopyObject' "$LOG") C_CopyObject"
tc_jobs
tc_agent

# The link cut mid-run: the server and its `p11-kit remote` killed while a
# slow bulk run signs (tc_kill_midrun: every module untouched or signed, no
# temp file). The run fails and names the failing call; after the server is
# back --skip-signed finishes the rest.
TC_SIGN_MS=40 tc_kill_midrun "p11-kit server" server_stop
if [ "$rc" -eq 1 ] && [ "$signed" -ge 10 ] && [ "$orig" -ge 1 ]; then
	t_pass "link cut mid-run: exit 1; $signed signed, $orig untouched"
else
	t_fail "link cut mid-run: exit 1, at least 10 signed, some untouched" \
		"status $rc, $signed signed, $orig untouched" "$(tail -n 8 "$T/out")"
fi
grep -q "signing failed: C_Sign\(Init\)\?: CKR_" "$T/out" &&
	t_pass "link cut mid-run: the failing call is named" ||
	t_fail "link cut mid-run: the failing call is named" "$(tail -n 8 "$T/out")"
tc_finish "link back"

# Over ssh, as p11-kit's remoting is meant to be used: the server's socket
# forwarded with `ssh -R` to a loopback sshd, the client on the "remote"
# side knowing only the forwarded socket (and the PIN, from a file).
# shellcheck source=tests/lib/sshd.sh
. "$TOP/tests/lib/sshd.sh"
trap 'server_stop; sshd_stop; t_cleanup' EXIT
if sshd_setup; then
	server
	fresh
	mkdir -m 0700 "$T/remote"
	rsock=$T/remote/p11.sock
	renv="$(ssh_env) P11_KIT_SERVER_ADDRESS=unix:path=$rsock"
	printf '%s\n' "$PIN" >"$T/remote/token.pin"
	cat >"$T/remote/sign.sh" <<EOF
#!/bin/sh
for i in \$(seq 1 50); do [ -S "$rsock" ] && break; sleep 0.1; done
KBUILD_SIGN_PIN=\$(cat "$T/remote/token.pin")
export KBUILD_SIGN_PIN
env $renv "$MODSIGN" -b sha256 '$uri' "$cert" "$T"/w/*.ko
EOF
	chmod +x "$T/remote/sign.sh"
	ssh_t -R "$rsock:$SOCK" root@127.0.0.1 "$T/remote/sign.sh" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Login)" -eq 1 ]; then
		t_pass "over ssh -R: -b over $N modules, each sign-file's bytes, one C_Login"
	else
		t_fail "over ssh -R: -b over $N modules, each sign-file's bytes, one C_Login" \
			"status $rc, $signed signed, $(n_calls C_Login) C_Login" "$(tail -n 5 "$T/out")"
	fi
	sshd_stop
else
	t_skip "p11-kit remoting over ssh -R" "$sshd_why"
fi

# The link cut under a running `agent --daemon`: the next signature fails
# (CKR_DEVICE_ERROR from p11-kit-client), no new session can be opened, so
# the agent stops, saying why in its audit log, and removes its socket: the
# clients after it fail at once with "cannot connect", modules untouched.
server
fresh
mkdir -p -m 0700 "$T/run"
KBUILD_SIGN_PIN=$PIN XDG_RUNTIME_DIR=$T/run "$MODSIGN" agent --daemon --lifetime 600 \
	--log "$T/agent.audit" "$uri" >"$T/agent.env" 2>>"$MS_LOG"
eval "$(cat "$T/agent.env")"
apid=$MODSIGN_AGENT_PID
trap '[ -n "$apid" ] && kill "$apid" 2>/dev/null; server_stop; t_cleanup' EXIT
sock=$MODSIGN_AGENT_SOCK
run_ms sha256 "$uri" "$cert" "$T/w/mod000.ko"
first=$rc
server_stop
rm -rf "$T/c" && mkdir "$T/c"
for i in 1 2 3 4 5; do
	"$MODSIGN" sha256 "$uri" "$cert" "$T/w/mod00$i.ko" >"$T/c/$i.out" 2>&1
	cat "$T/c/$i.out" >>"$MS_LOG"
done
count_state
for _ in $(seq 150); do
	kill -0 "$apid" 2>/dev/null || break
	sleep 0.1
done
n_ckr=$(grep -l "CKR_" "$T"/c/*.out | wc -l)
n_conn=$(grep -l "cannot connect" "$T"/c/*.out | wc -l)
if [ "$first" -eq 0 ] && [ -z "$broken" ] && [ "$signed" -eq 1 ] && [ "$n_ckr" -eq 1 ] &&
    [ "$n_conn" -eq 4 ] && ! kill -0 "$apid" 2>/dev/null && [ ! -e "$sock" ] &&
    grep -q '"event":"stop".*lost: C_Sign\(Init\)\?: CKR_' "$T/agent.audit"; then
	t_pass "link cut under agent --daemon: the agent stops (audit line, socket gone); later clients cannot connect"
else
	t_fail "link cut under agent --daemon: the agent stops; later clients cannot connect" \
		"first $first, $signed signed, torn:$broken, $n_ckr saw a CKR_, $n_conn cannot connect" \
		"$(tail -n 2 "$T/agent.audit")" "$(cat "$T/c/5.out")"
fi
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID

tc_wrong_pin
server_stop
t_done
