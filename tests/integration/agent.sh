#!/bin/bash
# `modsign agent` itself, on a real SoftHSM2 token through the slowtoken shim
# (which counts C_Login): around a command and as a daemon, the socket's
# directory and modes, the PIN kept in the agent, a wrong PIN stopping it
# before it listens, --stop, --idle-timeout, --lifetime, signals, the audit
# log, and hostile clients (malformed and oversized requests, stalled and
# dying clients, another uid) that cost nothing but their own connection.
# Raw requests are sent by tests/lib/agent_raw.pl (src/agent/PROTOCOL.md).
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup

# --- Around a command: its status, the socket's modes, the PIN stays in the agent.
cat >"$T/cmd.sh" <<'EOF'
#!/bin/sh
stat -c '%a %F' "$(dirname "$MODSIGN_AGENT_SOCK")" "$MODSIGN_AGENT_SOCK" >"$OUT/perm"
printf '%s\n' "$MODSIGN_AGENT_SOCK" >"$OUT/sock"
env | grep -c '^KBUILD_SIGN_PIN=' >"$OUT/env-pin"
tr '\0' '\n' </proc/$PPID/environ | grep -c -F -f "$OUT/secret.pin" >"$OUT/agent-env-pin"
exit 3
EOF
chmod +x "$T/cmd.sh"
printf '%s\n' "$PIN" >"$T/secret.pin"
OUT=$T KBUILD_SIGN_PIN=$PIN SLOWTOKEN_LOG=$T/calls1.log \
	run_ms agent --log "$T/audit.log" "$SLOW" -- "$T/cmd.sh"
[ "$rc" -eq 3 ] && t_pass "agent exits with the command's status (3)" ||
	t_fail "agent exits with the command's status (3)" "rc $rc" "$(cat "$T/out")"
[ "$(cat "$T/perm")" = "$(printf '700 directory\n600 socket')" ] &&
	t_pass "socket 0600 in a new 0700 directory" ||
	t_fail "socket 0600 in a new 0700 directory" "$(cat "$T/perm")"
sock=$(cat "$T/sock")
case $sock in "$RUN"/modsign-agent.*/sock) t_pass "socket under \$XDG_RUNTIME_DIR" ;;
*) t_fail "socket under \$XDG_RUNTIME_DIR" "$sock" ;; esac
[ ! -e "$sock" ] && [ ! -e "$(dirname "$sock")" ] &&
	t_pass "socket and its directory removed at the end" ||
	t_fail "socket and its directory removed at the end" "$(ls -la "$(dirname "$sock")")"
# (Under valgrind /proc/PID/environ is valgrind's own copy, out of the agent's reach.)
[ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ] && echo 0 >"$T/agent-env-pin"
[ "$(cat "$T/env-pin")" = 0 ] && [ "$(cat "$T/agent-env-pin")" = 0 ] &&
	t_pass "the command gets no KBUILD_SIGN_PIN; the agent's environment no longer shows it" ||
	t_fail "the command gets no KBUILD_SIGN_PIN; the agent's environment no longer shows it" \
		"command: $(cat "$T/env-pin"), agent: $(cat "$T/agent-env-pin")"
[ "$(calls C_Login "$T/calls1.log")" = 1 ] && [ "$(calls C_Finalize "$T/calls1.log")" = 1 ] &&
	t_pass "one C_Login, and C_Finalize at the end" ||
	t_fail "one C_Login, and C_Finalize at the end" "$(awk '{print $1}' "$T/calls1.log" | sort | uniq -c)"
grep -q "agent: pid [0-9]*, key pkcs11:token=modsign-test;object=rsa2048, [0-9]* lanes, socket $sock" \
	"$T/out" && grep -q "agent: stopped (the command exited with status 3): 0 signed" "$T/out" &&
	t_pass "a line on stderr at start and stop" ||
	t_fail "a line on stderr at start and stop" "$(cat "$T/out")"
grep -q '"event":"start","key":"pkcs11:token=modsign-test;object=rsa2048"' "$T/audit.log" &&
	grep -q '"event":"stop"' "$T/audit.log" && ! grep -q "$PIN" "$T/audit.log" &&
	t_pass "audit log: start and stop lines, no PIN" ||
	t_fail "audit log: start and stop lines, no PIN" "$(cat "$T/audit.log")"

# -q: no start and stop lines; a command that is not there: 127.
KBUILD_SIGN_PIN=$PIN run_ms agent -q "$DATA/rsa2048.key.pem" -- true
[ "$rc" -eq 0 ] && [ ! -s "$T/out" ] && t_pass "-q: silent, status 0" ||
	t_fail "-q: silent, status 0" "rc $rc" "$(cat "$T/out")"
run_ms agent -q "$DATA/rsa2048.key.pem" -- "$T/no-such-command"
if [ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ]; then
	# valgrind's posix_spawn starts the child and lets it fail with 127 itself
	[ "$rc" -eq 127 ] && t_pass "a command that cannot run: 127" ||
		t_fail "a command that cannot run: 127" "rc $rc" "$(cat "$T/out")"
else
	expect_fail "a command that cannot run: 127" 127 "cannot run $T/no-such-command"
fi

# --- A wrong PIN stops the agent before it listens or runs anything.
rm -f "$T/ran"
KBUILD_SIGN_PIN=$WRONG_PIN SLOWTOKEN_LOG=$T/calls2.log run_ms agent "$SLOW" -- touch "$T/ran"
expect_fail "wrong PIN: agent not started" 1 "C_Login: PIN from KBUILD_SIGN_PIN rejected: CKR_PIN_INCORRECT"
[ ! -e "$T/ran" ] && [ "$(calls C_Login "$T/calls2.log")" = 1 ] &&
	[ -z "$(ls -A "$RUN")" ] &&
	t_pass "wrong PIN: one C_Login, the command never ran, no socket" ||
	t_fail "wrong PIN: one C_Login, the command never ran, no socket" \
		"$(ls -A "$RUN") $(calls C_Login "$T/calls2.log") logins"
# A log that cannot be opened costs no login at all.
ln -s "$T/audit.log" "$T/link.log"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_LOG=$T/calls3.log run_ms agent --log "$T/link.log" "$SLOW" -- true
expect_fail "--log through a symbolic link refused" 1 "is a symbolic link"
[ "$(calls C_Login "$T/calls3.log")" = 0 ] && t_pass "--log refused before any C_Login" ||
	t_fail "--log refused before any C_Login"
run_ms agent "$SLOW"
expect_fail "no command and no --daemon: usage" 2 "give the command to run after --"
run_ms agent --stop
expect_fail "--stop without MODSIGN_AGENT_SOCK" 1 "MODSIGN_AGENT_SOCK is not set"

# --- A daemon: shell assignments, raw requests, hostile clients, --stop.
if daemon -j 2 --log "$T/audit2.log" "$SLOW" &&
    grep -qx "MODSIGN_AGENT_SOCK='$RUN/modsign-agent.[A-Za-z0-9]*/sock'; export MODSIGN_AGENT_SOCK;" \
	"$T/daemon.env" &&
    grep -qx "MODSIGN_AGENT_PID=[0-9]*; export MODSIGN_AGENT_PID;" "$T/daemon.env" &&
    kill -0 "$MODSIGN_AGENT_PID" && [ -S "$MODSIGN_AGENT_SOCK" ]; then
	t_pass "--daemon prints the assignments and keeps running"
else
	t_fail "--daemon prints the assignments and keeps running" "$(cat "$T/daemon.env" "$T/daemon.err")"
fi
hello=$(frame 0101)
# hello_ok: the agent still answers a HELLO, with its key name and 2 lanes.
hello_ok() {
	perl "$RAW" send 1 "$hello" >"$T/raw" 2>&1
	kname=$(printf 'pkcs11:token=modsign-test;object=rsa2048' | od -An -tx1 | tr -d ' \n')
	grep -qx "81000000010100020028$kname" "$T/raw" && grep -qx OPEN "$T/raw"
}
hello_ok && t_pass "HELLO: version, RSA, 2 lanes, the key's name" ||
	t_fail "HELLO: version, RSA, 2 lanes, the key's name" "$(cat "$T/raw")"

# A raw SIGN: the agent builds the DigestInfo for the digest it was given.
printf 'module bytes' >"$T/m.bin"
digest=$(openssl dgst -sha256 -binary "$T/m.bin" | od -An -tx1 | tr -d ' \n')
path_hex=$(printf 'drivers/x.ko' | od -An -tx1 | tr -d ' \n')
perl "$RAW" send 1 "$(frame "030320 $digest 000c $path_hex")" >"$T/raw"
sig=$(sed -n '1s/^83000000//p' "$T/raw")
perl -e 'print pack("H*", $ARGV[0])' "${sig:4}" >"$T/raw.sig"
openssl x509 -inform DER -in "$DATA/rsa2048.x509.der" -pubkey -noout >"$T/pub.pem"
if [ "${sig:0:4}" = 0100 ] && openssl dgst -sha256 -verify "$T/pub.pem" -signature "$T/raw.sig" \
	"$T/m.bin" >/dev/null 2>&1; then
	t_pass "SIGN of a sha256 digest: a PKCS#1 v1.5 signature over its DigestInfo"
else
	t_fail "SIGN of a sha256 digest: a PKCS#1 v1.5 signature over its DigestInfo" "$(cat "$T/raw")"
fi
grep -q "\"event\":\"sign\",\"pid\":[0-9]*,\"uid\":0,\"exe\":\"[^\"]*perl[^\"]*\",\"module\":\"drivers/x.ko\",\"hash\":\"sha256\",\"digest\":\"$digest\",\"key\":\"pkcs11:token=modsign-test;object=rsa2048\",\"outcome\":\"signed\"}" \
	"$T/audit2.log" && t_pass "audit log: who, which module, hash, digest, key, outcome" ||
	t_fail "audit log: who, which module, hash, digest, key, outcome" "$(cat "$T/audit2.log")"

# Malformed requests: a refusal, the connection closed, the agent serves on.
d32=$(printf '%064d' 0)
d20=$(printf '%040d' 0)
refused() {
	name=$1
	shift
	perl "$RAW" send 1 "$@" >"$T/raw" 2>&1
	if grep -q '^ff03' "$T/raw" && grep -qx EOF "$T/raw" && hello_ok; then
		t_pass "malformed: $name: refused, connection closed, agent serves on"
	else
		t_fail "malformed: $name: refused, connection closed, agent serves on" "$(cat "$T/raw")"
	fi
}
refused "unknown type" "$(frame 09)"
refused "HELLO of protocol version 2" "$(frame 0102)"
refused "truncated SIGN" "$(frame "030320 $d20")"
refused "sha1 digest under sha256" "$(frame "030314 $d20 0000")"
refused "md5 (no such hash code)" "$(frame "030010 ${d32:0:32} 0000")"
refused "a byte after the request" "$(frame "0400")"
refused "NUL in the module path" "$(frame "030320 $d32 0002 6100")"
refused "module path over 4096 bytes" "$(frame "030320 $d32 1001")"
refused "frame length zero" "00000000"
refused "frame length 2 GiB" "7fffffff 01"
refused "certificate over 64 KiB" "$(frame "02 00010001 30")"
[ "$(grep -c '"event":"malformed"' "$T/audit2.log")" -ge 11 ] &&
	t_pass "audit log: a line per malformed request" ||
	t_fail "audit log: a line per malformed request" "$(grep -c malformed "$T/audit2.log")"

# Stalled and dying clients: the others are served meanwhile.
perl "$RAW" stall 30 "" &
s1=$!
perl "$RAW" stall 30 "00000029 0303" &
s2=$!
perl "$RAW" stall 0 "0000002903032000" &
sleep 0.5
if hello_ok && perl "$RAW" send 1 "$(frame "030320 $digest 0000")" | grep -q '^830000000100'; then
	t_pass "two stalled clients and a dead one: others are still served"
else
	t_fail "two stalled clients and a dead one: others are still served" "$(cat "$T/raw")"
fi
kill "$s1" "$s2" 2>/dev/null
wait "$s1" "$s2" 2>/dev/null

# Another uid: the 0700 directory keeps it out; with the modes opened, the
# peer credentials do.
cp "$RAW" "$RUN/raw.pl" && chmod 0755 "$RUN/raw.pl"
asnobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
asnobody perl "$RUN/raw.pl" send 1 "$hello" >"$T/raw" 2>&1
[ $? -eq 2 ] && grep -q "Permission denied" "$T/raw" &&
	t_pass "another uid cannot reach the socket (0700 directory)" ||
	t_fail "another uid cannot reach the socket (0700 directory)" "$(cat "$T/raw")"
dir=$(dirname "$MODSIGN_AGENT_SOCK")
chmod 0711 "$dir" && chmod 0666 "$MODSIGN_AGENT_SOCK"
asnobody perl "$RUN/raw.pl" send 1 "$hello" >"$T/raw" 2>&1
chmod 0700 "$dir" && chmod 0600 "$MODSIGN_AGENT_SOCK"
if grep -q '^ff03' "$T/raw" && grep -qx EOF "$T/raw" &&
    grep -q '"event":"refused","pid":[0-9]*,"uid":65534,.*"detail":"uid 65534 is not the agent'"'"'s (0)"' \
	"$T/audit2.log" && hello_ok; then
	t_pass "another uid, socket opened to it: refused by its peer credentials and logged"
else
	t_fail "another uid, socket opened to it: refused by its peer credentials and logged" \
		"$(cat "$T/raw")" "$(grep refused "$T/audit2.log")"
fi

# --stop returns once the agent is gone: socket removed, token finalized.
pid=$MODSIGN_AGENT_PID
run_ms agent --stop
if [ "$rc" -eq 0 ] && grep -qx "unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID;" "$T/out" &&
    [ ! -e "$MODSIGN_AGENT_SOCK" ] && wait_gone "$pid"; then
	t_pass "--stop: the agent stopped, socket removed"
else
	t_fail "--stop: the agent stopped, socket removed" "$(cat "$T/out")"
fi
grep -q '"event":"stop",.*"detail":"stopped (asked to stop (--stop)): 2 signed, 0 failed, 1 refused, 11 malformed"' \
	"$T/audit2.log" && t_pass "audit log: stop line with the counts" ||
	t_fail "audit log: stop line with the counts" "$(tail -n 1 "$T/audit2.log")"
run_ms agent --stop
expect_fail "--stop again: nothing there" 1 "cannot connect"

# An audit line that cannot be written (a disk that fills): agent_audit.sh.

# --- --idle-timeout and --lifetime end a daemon by themselves.
if daemon --idle-timeout 2 --log "$T/audit3.log" "$DATA/rsa2048.key.pem"; then
	hello_ok
	wait_gone "$MODSIGN_AGENT_PID" && [ ! -e "$MODSIGN_AGENT_SOCK" ] &&
		grep -q 'no request for 2 s (--idle-timeout)' "$T/audit3.log" &&
		t_pass "--idle-timeout 2: stops by itself" ||
		t_fail "--idle-timeout 2: stops by itself" "$(cat "$T/audit3.log")"
else
	t_fail "--idle-timeout 2: daemon started" "$(cat "$T/daemon.err")"
fi
if daemon --lifetime 2 --log "$T/audit4.log" "$DATA/rsa2048.key.pem"; then
	wait_gone "$MODSIGN_AGENT_PID" && grep -q -- '--lifetime 2 s reached' "$T/audit4.log" &&
		t_pass "--lifetime 2: stops by itself" ||
		t_fail "--lifetime 2: stops by itself" "$(cat "$T/audit4.log")"
else
	t_fail "--lifetime 2: daemon started" "$(cat "$T/daemon.err")"
fi
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID

# --- SIGTERM to the agent around a command: passed on, socket removed.
"$MODSIGN" agent "$DATA/rsa2048.key.pem" -- sh -c 'echo "$MODSIGN_AGENT_SOCK" >"$0"; exec sleep 30' \
	"$T/sock2" >"$T/out" 2>&1 &
apid=$!
for _ in $(seq 1 600); do [ -s "$T/sock2" ] && break; sleep 0.1; done
kill -TERM "$apid"
wait "$apid"
rc=$?
cat "$T/out" >>"$MS_LOG"
[ "$rc" -eq 143 ] && [ ! -e "$(cat "$T/sock2")" ] && grep -q "stopped (signal 15)" "$T/out" &&
	t_pass "SIGTERM: passed to the command (143), agent stopped cleanly" ||
	t_fail "SIGTERM: passed to the command (143), agent stopped cleanly" "rc $rc" "$(cat "$T/out")"

[ -z "$(ls -A "$RUN" | grep -v raw.pl)" ] && t_pass "no socket directory left behind" ||
	t_fail "no socket directory left behind" "$(ls -A "$RUN")"
t_done
