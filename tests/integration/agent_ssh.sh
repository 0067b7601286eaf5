#!/bin/bash
# The agent across machines: its socket forwarded over a real OpenSSH sshd
# this test starts on the loopback interface (own config, host key and user
# key in a temporary directory, a high port), as ssh-agent is forwarded.
# Modules on the "remote" side are signed through `ssh -R` by modsign
# processes that have neither the PIN nor the token: byte-for-byte
# sign-file's result, with one C_Login on the agent's side. The client's
# check of who serves the socket passes there (the user's own sshd session)
# and refuses a client of another user (nobody) through a second forwarding.
# Skipped (a SKIP line) only when sshd cannot run here.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup
# shellcheck source=tests/lib/sshd.sh
. "$TOP/tests/lib/sshd.sh"
mkdir -p "$T/remote"
chmod 0700 "$T/remote"
# A second forwarding in a directory nobody may enter, for the client's peer check.
PUB=$(mktemp -d /tmp/modsign-ssh-pub.XXXXXX)
chmod 0755 "$PUB"
trap 'sshd_stop; rm -rf "$PUB"; agent_cleanup; t_cleanup' EXIT

skip() {
	t_skip "agent over ssh" "$1"
	t_done
	exit $?
}

sshd_setup || skip "$sshd_why"
t_pass "sshd on 127.0.0.1:$port with its own config, host key and user key"

# The agent on "this" machine, holding the token key.
"$TOP/tests/lib/mkmodule.sh" "$T/remote/mods" 12 2 >/dev/null
mkdir "$T/ref" "$T/orig"
cp "$T"/remote/mods/*.ko "$T/orig/"
for f in "$T"/remote/mods/*.ko; do
	cp "$f" "$T/ref/"
	"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$CERT" "$T/ref/$(basename "$f")"
done
SLOWTOKEN_LOG=$T/calls.log daemon --log "$T/audit.log" "$SLOW" ||
	t_fail "agent started" "$(cat "$T/daemon.err")"

# On the "remote" side: the forwarded socket, and modsign runs that know only
# it (the sanitizer settings of the test build passed along, no PIN).
remote_sock=$T/remote/agent.sock
remote_env="$(ssh_env) MODSIGN_AGENT_SOCK=$remote_sock"
# What nobody needs on the remote side: the forwarded socket made reachable
# (0666 in a 0755 directory), a module of its own, the certificate, the binary.
NOBODY=$(id -u nobody 2>/dev/null || echo 65534)
NOGROUP=$(id -g nobody 2>/dev/null || echo 65534)
pub_sock=$PUB/agent.sock
mkdir -m 0755 "$PUB/w" && cp "$T/orig/mod000.ko" "$PUB/w/m.ko" &&
	chown -R "$NOBODY:$NOGROUP" "$PUB/w"
cp "$CERT" "$PUB/cert.der" && cp "$TOP/tests/lsan.supp" "$PUB/lsan.supp"
chmod 0644 "$PUB/cert.der" "$PUB/lsan.supp"
MS_NOBODY=$MODSIGN
if ! setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups test -x "$MS_NOBODY" 2>/dev/null; then
	cp "$MODSIGN" "$PUB/modsign" && chmod 0755 "$PUB/modsign"
	MS_NOBODY=$PUB/modsign
fi
cat >"$T/remote/sign.sh" <<EOF
#!/bin/sh
# wait for the forwarded socket, then sign one module per process, as kbuild does
for i in \$(seq 1 50); do [ -S "$remote_sock" ] && break; sleep 0.1; done
env | grep -c KBUILD_SIGN_PIN
for f in "$T"/remote/mods/mod00*.ko; do
	env $remote_env "$MODSIGN" sha256 "$SLOW" "$CERT" "\$f" || exit 1
done
env $remote_env "$MODSIGN" -b sha256 "$SLOW" "$CERT" "$T"/remote/mods/mod01*.ko || exit 1
# nobody, through a forwarding it can reach: the listener is root's sshd session
for i in \$(seq 1 50); do [ -S "$pub_sock" ] && break; sleep 0.1; done
chmod 0666 "$pub_sock"
setpriv --reuid=$NOBODY --regid=$NOGROUP --clear-groups env $remote_env \\
	MODSIGN_AGENT_SOCK="$pub_sock" LSAN_OPTIONS=suppressions=$PUB/lsan.supp \\
	"$MS_NOBODY" sha256 "$SLOW" "$PUB/cert.der" "$PUB/w/m.ko" >"$PUB/nobody.out" 2>&1
echo \$? >"$PUB/nobody.rc"
EOF
chmod +x "$T/remote/sign.sh"
ssh_t -R "$remote_sock:$MODSIGN_AGENT_SOCK" -R "$pub_sock:$MODSIGN_AGENT_SOCK" root@127.0.0.1 \
	"$T/remote/sign.sh" >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
n=0
for f in "$T"/remote/mods/*.ko; do
	same "$f" "$T/ref/$(basename "$f")" && n=$((n + 1))
done
if [ "$rc" -eq 0 ] && [ "$n" -eq 12 ] && [ "$(head -n 1 "$T/out")" = 0 ]; then
	t_pass "12 modules signed on the remote side through ssh -R: all equal sign-file's"
else
	t_fail "12 modules signed on the remote side through ssh -R: all equal sign-file's" \
		"rc $rc, $n equal" "$(tail -n 5 "$T/out")"
fi
[ "$(grep -c '^C_Login ' "$T/calls.log")" = 1 ] && [ "$(grep -c '^C_Sign ' "$T/calls.log")" = 12 ] &&
	t_pass "one C_Login on the agent's side for all of them" ||
	t_fail "one C_Login on the agent's side for all of them" \
		"$(awk '{ print $1 }' "$T/calls.log" | sort | uniq -c)"
# The client's peer check is on over ssh -R and passes: the forwarded socket
# is served by the ssh user's own sshd session (uid 0 here), which root's
# clients above accepted and nobody's refuses, before sending anything.
cat "$PUB/nobody.out" >>"$MS_LOG" 2>/dev/null
if [ "$(cat "$PUB/nobody.rc" 2>/dev/null)" = 1 ] &&
    grep -qF "agent at $pub_sock is served by uid 0, not ours ($NOBODY): refused; nothing sent" \
	"$PUB/nobody.out" && same "$PUB/w/m.ko" "$T/orig/mod000.ko" &&
    [ "$(ls -A "$PUB/w")" = m.ko ]; then
	t_pass "ssh -R: the peer check sees the ssh user's sshd (uid 0): root's clients signed, nobody's refused"
else
	t_fail "ssh -R: the peer check sees the ssh user's sshd (uid 0): root's clients signed, nobody's refused" \
		"status $(cat "$PUB/nobody.rc" 2>/dev/null)" "$(cat "$PUB/nobody.out" 2>/dev/null)"
fi
grep -q '"event":"sign",.*"exe":"[^"]*/ssh"' "$T/audit.log" &&
	t_pass "audit log: the peer is the local ssh client" ||
	t_fail "audit log: the peer is the local ssh client" "$(head -n 3 "$T/audit.log")"

# The forwarding gone: the remote side fails clearly, modules untouched.
cp "$T/orig/mod000.ko" "$T/remote/late.ko"
env MODSIGN_AGENT_SOCK="$remote_sock" "$MODSIGN" sha256 "$SLOW" "$CERT" "$T/remote/late.ko" \
	>"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
[ "$rc" -eq 1 ] && grep -q "agent at $remote_sock (MODSIGN_AGENT_SOCK): cannot connect" "$T/out" &&
	same "$T/remote/late.ko" "$T/orig/mod000.ko" &&
	t_pass "after the ssh session: a clear error, module untouched" ||
	t_fail "after the ssh session: a clear error, module untouched" "$(cat "$T/out")"

"$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
t_done
