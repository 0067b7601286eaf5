#!/bin/bash
# Signing through `modsign agent`: every signing form (single module, -b, -r,
# -p, -d, -k, a dest) run under an agent that holds its key signs through
# it, with one C_Login for all (counted by the slowtoken shim the agent and
# the clients' URIs name), byte-for-byte what sign-file makes (RSA); 8
# clients at once; a client whose key is not the agent's signs directly; a
# socket that leads nowhere, a certificate that is not the agent key's, a
# token fault and an agent killed in the middle each fail with a message
# and leave modules untouched, never signing by a login of their own.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup
N=50
"$TOP/tests/lib/mkmodule.sh" "$T/src" $N 2 >/dev/null
# sign-file's results, the reference for every RSA comparison.
mkdir "$T/ref"
for f in "$T"/src/*.ko; do
	cp "$f" "$T/ref/"
	"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$CERT" "$T/ref/$(basename "$f")"
done
fresh() { rm -rf "$T/w" && mkdir "$T/w" && cp "$T"/src/*.ko "$T/w/"; }
# n_same: how many of $T/w equal the reference; n_orig: how many are untouched.
n_same() { n=0; for f in "$T"/w/*.ko; do same "$f" "$T/ref/$(basename "$f")" && n=$((n + 1)); done; echo $n; }
n_orig() { n=0; for f in "$T"/w/*.ko; do same "$f" "$T/src/$(basename "$f")" && n=$((n + 1)); done; echo $n; }

stop() { "$MODSIGN" agent --stop >>"$MS_LOG" 2>&1; unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID; }

# --- 50 per-module calls, as kbuild makes them, under an agent around the loop.
fresh
cat >"$T/loop.sh" <<EOF
#!/bin/sh
for f in "$T"/w/*.ko; do
	"$MODSIGN" sha256 "$SLOW" "$CERT" "\$f" || exit 1
done
EOF
chmod +x "$T/loop.sh"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_LOG=$T/calls1.log run_ms agent --log "$T/audit.log" "$SLOW" -- "$T/loop.sh"
[ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] &&
	t_pass "$N modsign processes under the agent: every module equals sign-file's" ||
	t_fail "$N modsign processes under the agent: every module equals sign-file's" \
		"rc $rc, $(n_same) equal" "$(tail -n 5 "$T/out")"
[ "$(calls C_Login "$T/calls1.log")" = 1 ] && [ "$(calls C_Initialize "$T/calls1.log")" = 1 ] &&
	[ "$(calls C_Sign "$T/calls1.log")" = $N ] &&
	t_pass "$N modules, one C_Initialize and one C_Login, $N C_Sign" ||
	t_fail "$N modules, one C_Initialize and one C_Login, $N C_Sign" \
		"$(awk '{ print $1 }' "$T/calls1.log" | sort | uniq -c)"
[ "$(grep -c '"event":"sign",.*"outcome":"signed"' "$T/audit.log")" = $N ] &&
	grep -q "\"module\":\"$T/w/mod007.ko\",\"hash\":\"sha256\"" "$T/audit.log" &&
	t_pass "audit log: a line per module, naming it" ||
	t_fail "audit log: a line per module, naming it" "$(tail -n 2 "$T/audit.log")"

# --- Eight clients at once, and the other signing forms, under a daemon.
daemon -j 3 --log "$T/audit2.log" "$SLOW" ||
	t_fail "daemon started" "$(cat "$T/daemon.err")"
fresh
( cd "$T/w" && ls ./*.ko | SLOWTOKEN_LOG=$T/calls2.log xargs -P8 -n1 "$MODSIGN" sha256 "$SLOW" "$CERT" ) \
	>"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
[ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] && [ "$(calls C_Login "$T/calls2.log")" = 0 ] &&
	t_pass "xargs -P8: all equal sign-file's, no client logged in" ||
	t_fail "xargs -P8: all equal sign-file's, no client logged in" \
		"rc $rc, $(n_same) equal, $(calls C_Login "$T/calls2.log") logins" "$(tail -n 5 "$T/out")"
fresh
SLOWTOKEN_LOG=$T/calls2.log run_ms -q -j 2 -r "$T/w" sha256 "$SLOW" "$CERT"
[ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] && [ "$(calls C_Login "$T/calls2.log")" = 0 ] &&
	t_pass "-r -j 2 through the agent: all equal sign-file's" ||
	t_fail "-r -j 2 through the agent: all equal sign-file's" "$(cat "$T/out")"
# The key named another way (attribute order, no module-path): the same key.
fresh
run_ms -b sha256 "pkcs11:object=rsa2048;token=modsign-test" "$CERT" "$T"/w/mod00*.ko
[ "$rc" -eq 0 ] && [ "$(n_same)" -eq 10 ] && [ "$(calls C_Login "$T/calls2.log")" = 0 ] &&
	t_pass "-b, the URI written differently: still the agent's key" ||
	t_fail "-b, the URI written differently: still the agent's key" "$(cat "$T/out")"
# --key (more tokens holding the key): the agent holding <key> signs; the
# other token is never opened (one that does not exist would fail the run).
fresh
run_ms -b --key "pkcs11:token=no-such-token;object=rsa2048;type=private?module-path=$SOFTHSM" \
	sha256 "$SLOW" "$CERT" "$T"/w/mod00*.ko
[ "$rc" -eq 0 ] && [ "$(n_same)" -eq 10 ] && [ "$(calls C_Login "$T/calls2.log")" = 0 ] &&
	t_pass "-b --key: the agent signs, the other token is not opened" ||
	t_fail "-b --key: the agent signs, the other token is not opened" "$(cat "$T/out")"
# Single-module forms against sign-file's.
m=mod003.ko
form() {
	what=$1 flags=$2 dest=$3
	rm -rf "$T/r1" "$T/o1" && mkdir "$T/r1" "$T/o1"
	cp "$T/src/$m" "$T/r1/" && cp "$T/src/$m" "$T/o1/"
	# shellcheck disable=SC2086
	"$SIGNFILE" $flags sha256 "$DATA/rsa2048.key.pem" "$CERT" "$T/r1/$m" ${dest:+"$T/r1/$dest"}
	# shellcheck disable=SC2086
	SLOWTOKEN_LOG=$T/calls2.log run_ms $flags sha256 "$SLOW" "$CERT" "$T/o1/$m" ${dest:+"$T/o1/$dest"}
	if [ "$rc" -eq 0 ] && diff -r "$T/r1" "$T/o1" >/dev/null; then
		t_pass "through the agent, $what: the same files as sign-file"
	else
		t_fail "through the agent, $what: the same files as sign-file" "$(cat "$T/out")" \
			"$(ls -l "$T/r1" "$T/o1")"
	fi
}
form "-p" -p ""
form "-d" -d ""
form "-k" -k ""
form "a dest" "" signed.ko
[ "$(calls C_Login "$T/calls2.log")" = 0 ] && t_pass "no client ever logged in" ||
	t_fail "no client ever logged in" "$(calls C_Login "$T/calls2.log")"

# A certificate that is not the agent key's: the same error as direct signing.
fresh
run_ms sha256 "$SLOW" "$DATA/other-rsa2048.x509.der" "$T/w/$m"
expect_fail "another certificate: refused as without an agent" 1 "is not the key of certificate"
same "$T/w/$m" "$T/src/$m" && t_pass "another certificate: module untouched" ||
	t_fail "another certificate: module untouched"

# The agent holds another key: the client signs directly, as without it.
fresh
"$SIGNFILE" sha256 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.der" "$T/src/$m" \
	"$T/other.ko"
run_ms -v sha256 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.der" "$T/w/$m"
if [ "$rc" -eq 0 ] && same "$T/w/$m" "$T/other.ko" && grep -q "signing with the key directly" "$T/out" &&
    ! grep -q "other-rsa2048" "$T/audit2.log"; then
	t_pass "the agent holds another key: signed directly, the agent not asked"
else
	t_fail "the agent holds another key: signed directly, the agent not asked" "$(cat "$T/out")"
fi
# A key argument that names nothing: the usual error, not the agent's.
run_ms sha256 "pkcs11:object=%zz" "$CERT" "$T/w/mod000.ko"
[ "$rc" -eq 1 ] && ! grep -q "agent at" "$T/out" && same "$T/w/mod000.ko" "$T/src/mod000.ko" &&
	t_pass "a key URI that does not parse: its own error, as without the agent" ||
	t_fail "a key URI that does not parse: its own error, as without the agent" "$(cat "$T/out")"
# -s appends a given signature: no key, no agent.
fresh
"$MODSIGN" -d sha256 "$DATA/rsa2048.key.pem" "$CERT" "$T/src/$m" 2>>"$MS_LOG"
MODSIGN_AGENT_SOCK=/nonexistent/sock run_ms -s "$T/src/$m.p7s" sha256 "$CERT" "$T/w/$m"
rm -f "$T/src/$m.p7s"
[ "$rc" -eq 0 ] && same "$T/w/$m" "$T/ref/$m" && t_pass "-s does not use the agent" ||
	t_fail "-s does not use the agent" "$(cat "$T/out")"

# A token fault that loses nothing fails that request only; a lost session
# is recovered by the agent (a lost token too: agent_token_loss.sh). (The
# shim reads its faults when the agent loads it.)
stop
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_FAULT=C_Sign:2:CKR_FUNCTION_FAILED,C_Sign:4:CKR_SESSION_HANDLE_INVALID \
	"$MODSIGN" agent --daemon --lifetime 600 --log "$T/audit3.log" "$SLOW" >"$T/daemon.env" \
	2>>"$MS_LOG"
eval "$(cat "$T/daemon.env")"
AGENT_DAEMONS="$AGENT_DAEMONS $MODSIGN_AGENT_PID"
fresh
run_ms sha256 "$SLOW" "$CERT" "$T/w/mod000.ko"
ok1=$rc
run_ms sha256 "$SLOW" "$CERT" "$T/w/mod001.ko"
fault_rc=$rc
cp "$T/out" "$T/fault.out"
run_ms sha256 "$SLOW" "$CERT" "$T/w/mod001.ko"
ok2=$rc
run_ms sha256 "$SLOW" "$CERT" "$T/w/mod002.ko"
ok3=$rc
if [ "$ok1" -eq 0 ] && [ "$fault_rc" -eq 1 ] && grep -q "C_Sign: CKR_FUNCTION_FAILED" "$T/fault.out" &&
    [ "$ok2" -eq 0 ] && [ "$ok3" -eq 0 ] && [ "$(n_same)" -eq 3 ] &&
    grep -q '"outcome":"failed","error":"C_Sign: CKR_FUNCTION_FAILED' "$T/audit3.log"; then
	t_pass "token faults: CKR_FUNCTION_FAILED fails that request only, a lost session is recovered"
else
	t_fail "token faults: CKR_FUNCTION_FAILED fails that request only, a lost session is recovered" \
		"$ok1 $fault_rc $ok2 $ok3, $(n_same) signed" "$(cat "$T/fault.out")"
fi
stop

# A signature that never comes back: the agent cuts that client off and
# stops (--token-timeout); what was signed stays signed, the rest untouched.
fresh
cat >"$T/hang.sh" <<EOF
#!/bin/sh
for f in "$T"/w/mod000.ko "$T"/w/mod001.ko "$T"/w/mod002.ko; do
	"$MODSIGN" sha256 "$SLOW" "$CERT" "\$f" || exit 1
done
EOF
chmod +x "$T/hang.sh"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_FAULT=C_Sign:2:HANG SLOWTOKEN_HANG_MS=8000 \
	run_ms agent --token-timeout 2 "$SLOW" -- "$T/hang.sh"
if [ "$rc" -eq 1 ] && grep -q "the token did not return the signature within 2 s" "$T/out" &&
    grep -q "closed the connection in the middle of a request" "$T/out" &&
    same "$T/w/mod000.ko" "$T/ref/mod000.ko" && same "$T/w/mod001.ko" "$T/src/mod001.ko" &&
    same "$T/w/mod002.ko" "$T/src/mod002.ko"; then
	t_pass "a hung token: the agent stops, its client fails, modules signed or untouched"
else
	t_fail "a hung token: the agent stops, its client fails, modules signed or untouched" \
		"rc $rc" "$(cat "$T/out")"
fi

# --stop while a signature is in flight: that request is finished first, then
# the token is closed (C_Finalize) and only then does --stop return.
fresh
SLOWTOKEN_SIGN_MS=1500 SLOWTOKEN_LOG=$T/calls5.log daemon "$SLOW" ||
	t_fail "daemon started" "$(cat "$T/daemon.err")"
"$MODSIGN" sha256 "$SLOW" "$CERT" "$T/w/mod000.ko" >"$T/inflight.out" 2>&1 &
cpid=$!
for _ in $(seq 1 50); do
	[ "$(calls C_SignInit "$T/calls5.log")" -ge 1 ] && break
	sleep 0.1
done
"$MODSIGN" agent --stop >"$T/out" 2>&1
src=$?
fin=$(calls C_Finalize "$T/calls5.log")
wait "$cpid"
crc=$?
cat "$T/out" "$T/inflight.out" >>"$MS_LOG"
if [ "$src" -eq 0 ] && [ "$crc" -eq 0 ] && same "$T/w/mod000.ko" "$T/ref/mod000.ko" &&
    [ "$fin" = 1 ] && [ ! -e "$MODSIGN_AGENT_SOCK" ]; then
	t_pass "--stop during a signature: it is finished, then the token closed, then --stop returns"
else
	t_fail "--stop during a signature: it is finished, then the token closed, then --stop returns" \
		"stop $src, client $crc, C_Finalize $fin" "$(cat "$T/out" "$T/inflight.out")"
fi
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID

# --- No agent where MODSIGN_AGENT_SOCK points: an error, no login, module untouched.
fresh
: >"$T/calls4.log"
MODSIGN_AGENT_SOCK=$RUN/nowhere/sock SLOWTOKEN_LOG=$T/calls4.log KBUILD_SIGN_PIN=$PIN \
	run_ms sha256 "$SLOW" "$CERT" "$T/w/$m"
expect_fail "MODSIGN_AGENT_SOCK pointing nowhere: an error naming it" 1 \
	"agent at $RUN/nowhere/sock (MODSIGN_AGENT_SOCK): cannot connect: No such file or directory"
touch "$RUN/file"
MODSIGN_AGENT_SOCK=$RUN/file SLOWTOKEN_LOG=$T/calls4.log KBUILD_SIGN_PIN=$PIN \
	run_ms -b sha256 "$SLOW" "$CERT" "$T"/w/*.ko
expect_fail "MODSIGN_AGENT_SOCK naming a plain file: an error" 1 "cannot connect: Connection refused"
[ "$(n_orig)" -eq $N ] && [ ! -s "$T/calls4.log" ] &&
	t_pass "no agent: no token touched, every module untouched" ||
	t_fail "no agent: no token touched, every module untouched" "$(cat "$T/calls4.log")"

# --- The agent killed in the middle: each module signed or untouched, and
# each client that lost it says so and exits 1.
# (The agent is the release build: a process killed under valgrind leaves a
# report without a summary, and the clients are what this checks.)
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_SIGN_MS=300 SLOWTOKEN_SERIAL=1 \
	"$TOP/modsign" agent --daemon --lifetime 600 "$SLOW" >"$T/daemon.env" 2>>"$MS_LOG"
eval "$(cat "$T/daemon.env")"
AGENT_DAEMONS="$AGENT_DAEMONS $MODSIGN_AGENT_PID"
fresh
( cd "$T/w" && ls ./*.ko | xargs -P4 -n1 sh -c \
	'"$0" sha256 "$1" "$2" "$3" >"$3.out" 2>&1; echo $? >"$3.rc"' "$MODSIGN" "$SLOW" "$CERT" ) &
xpid=$!
# Killed once a few clients are done, whatever the machine's speed. Counted
# by their exit-status files, one glob: comparing 50 modules on a loaded
# machine took long enough for every module to be signed before the kill.
n_done() { set -- "$T"/w/*.rc; [ -e "$1" ] && echo $# || echo 0; }
for _ in $(seq 1 600); do
	[ "$(n_done)" -ge 3 ] && break
	sleep 0.1
done
kill -9 "$MODSIGN_AGENT_PID"
wait "$xpid"
cat "$T"/w/*.out >>"$MS_LOG"
signed=$(n_same)
orig=$(n_orig)
bad_msg=0
bad_text=""
failed=0
for f in "$T"/w/*.ko; do
	if [ "$(cat "$f.rc")" != 0 ]; then
		failed=$((failed + 1))
		grep -Eq "agent at .* (closed the connection in the middle of a request|cannot connect)" \
			"$f.out" || { bad_msg=$((bad_msg + 1)); bad_text="$bad_text $(cat "$f.out")"; }
		same "$f" "$T/src/$(basename "$f")" || bad_msg=$((bad_msg + 1))
	fi
done
if [ $((signed + orig)) -eq $N ] && [ "$signed" -gt 0 ] && [ "$failed" -gt 0 ] &&
    [ "$failed" -eq "$orig" ] && [ "$bad_msg" -eq 0 ]; then
	t_pass "agent killed mid-run: $signed signed, $orig untouched, every failed client said why"
else
	t_fail "agent killed mid-run: every module signed or untouched, failed clients say why" \
		"signed $signed, untouched $orig, failed $failed, bad $bad_msg" "$bad_text"
fi
ls "$T"/w/.*.tmp >/dev/null 2>&1 && t_fail "agent killed: temp files left" ||
	t_pass "agent killed: no temp file left"
rm -f "$T"/w/*.out "$T"/w/*.rc
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID

# --- Key files and EC keys through the agent. The clients have no
# passphrase: signing without the agent would fail.
fresh
KBUILD_SIGN_PIN=$KEY_PASS run_ms agent -q "$DATA/rsa2048.enc.key.pem" -- sh -c \
	'cd "$0" && "$1" -r "$2" sha256 rsa2048.enc.key.pem rsa2048.x509.der' "$DATA" "$MODSIGN" "$T/w"
[ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] &&
	t_pass "an encrypted PEM key, named relative to another directory: through the agent, equal to sign-file's" ||
	t_fail "an encrypted PEM key, named relative to another directory: through the agent, equal to sign-file's" \
		"$(cat "$T/out")"
fresh
KBUILD_SIGN_PIN=$PIN run_ms agent -q "$(key_uri ec256)" -- \
	"$MODSIGN" -b sha384 "$(key_uri ec256)" "$DATA/ec256.x509.der" "$T/w/$m"
if [ "$rc" -eq 0 ] && openssl_verify "$T/w/$m" "$T/src/$m" "$DATA/ec256.x509.pem"; then
	t_pass "EC P-256 through the agent: verifies (openssl cms)"
else
	t_fail "EC P-256 through the agent: verifies (openssl cms)" "$(cat "$T/out")"
fi
t_done
