#!/bin/bash
# The agent's client side: whatever listens at MODSIGN_AGENT_SOCK is not
# trusted for being there. A fake agent (tests/lib/fake_agent.pl, the
# protocol written on its own) announces the key name a real agent
# announces (read from one, started once), answers MATCH, and answers SIGN
# with garbage of the right length, 5 bytes, 2,048 bytes, or a valid
# signature by another key; or says MISMATCH, refuses, never answers, or
# never accepts. Each such run exits 1 and leaves the module byte for byte
# as it was, with no temp file beside it:
#   - the client as nobody, the fake root's (and root's client, nobody's
#     fake): refused by the client's peer check, before a byte is sent;
#   - the same user: refused because the signature does not verify with the
#     certificate (the signing pipeline's check);
# and the fake relaying a correct signature (openssl with the right key) is
# accepted, as root and as nobody, with sign-file's bytes: the fake speaks
# the protocol, so the refusals are for the lies.
. "$(dirname "$0")/../lib/common.sh"
t_setup
if [ "$(id -u)" -ne 0 ]; then
	t_skip agent_trust "needs root (a fake agent and clients of another uid: nobody)"
	t_done
	exit $?
fi
t_token
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup
NOBODY=$(id -u nobody 2>/dev/null || echo 65534)
NOGROUP=$(id -g nobody 2>/dev/null || echo 65534)
LIMIT=60	# a guard against a client that hangs: never reached when all is well
FAKE_PID=""
# Everything nobody needs, in a directory nobody may enter (the checkout and
# $T may be in a 0700 directory).
U=$(mktemp -d /tmp/modsign-trust.XXXXXX)
chmod 0755 "$U"
trap '[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null; rm -rf "$U"; agent_cleanup; t_cleanup' EXIT

as_nobody() {
	setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups "$@"
}

mkdir -m 0755 "$U/bin" "$U/root" "$U/nob" "$U/w"
cp "$TOP/tests/lib/fake_agent.pl" "$U/bin/" && chmod 0755 "$U/bin/fake_agent.pl"
cp "$TOP/tests/lsan.supp" "$U/bin/" && chmod 0644 "$U/bin/lsan.supp"
cp "$CERT" "$U/cert.der" && chmod 0644 "$U/cert.der"
# TEST-ONLY keys, for the fake's openssl (the right one and another).
cp "$DATA/rsa2048.key.pem" "$U/right.key.pem" && cp "$DATA/other-rsa2048.key.pem" "$U/other.key.pem"
chmod 0644 "$U/right.key.pem" "$U/other.key.pem"
chown "$NOBODY:$NOGROUP" "$U/nob" "$U/w"
MS_NOBODY=$MODSIGN
if ! as_nobody test -x "$MS_NOBODY" 2>/dev/null; then
	cp "$MODSIGN" "$U/bin/modsign" && chmod 0755 "$U/bin/modsign"
	MS_NOBODY=$U/bin/modsign
fi
if ! as_nobody true 2>"$T/setpriv.err"; then
	t_skip agent_trust "setpriv refused: $(head -n 1 "$T/setpriv.err")"
	t_done
	exit $?
fi

# The module, and sign-file's result for it (the positive control's reference).
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 2 >/dev/null
cp "$T/src/mod000.ko" "$U/orig.ko" && chmod 0644 "$U/orig.ko"
cp "$U/orig.ko" "$T/ref.ko"
"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$CERT" "$T/ref.ko"

# The key name a real agent announces for the key the clients name.
KEY=$SLOW
daemon "$KEY" || t_fail "real agent started" "$(cat "$T/daemon.err")"
hello=$(perl "$TOP/tests/lib/agent_raw.pl" send 1 "$(perl "$TOP/tests/lib/agent_raw.pl" frame 0101)" |
	head -n 1)
NAME=$(perl -e '$b = pack("H*", $ARGV[0]); ($t, $s, $m) = unpack("CCn", $b);
	($v, $k, $l, $n) = unpack("CCnn", substr($b, 4 + $m)); print substr($b, 10 + $m, $n)
	if $t == 0x81 && $s == 0' "$hello")
"$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID
if [ -n "$NAME" ]; then
	t_pass "the real agent's HELLO names the key: $NAME"
else
	t_fail "the real agent's HELLO names the key" "$hello"
fi

# fake WHO MODE [KEY]: a fake agent run by WHO (root, nob) at $U/WHO/sock.
fake() {
	who=$1
	shift
	fake_stop
	rm -f "$U/$who/sock" "$T/fake.out"
	if [ "$who" = nob ]; then
		# setpriv itself, not as_nobody: $! must be the perl it becomes
		# (a function in the background is a subshell that kill would miss).
		setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups \
			perl "$U/bin/fake_agent.pl" "$U/nob/sock" "$1" "$NAME" ${2:+"$2"} \
			>"$T/fake.out" 2>"$T/fake.err" &
	else
		perl "$U/bin/fake_agent.pl" "$U/root/sock" "$1" "$NAME" ${2:+"$2"} \
			>"$T/fake.out" 2>"$T/fake.err" &
	fi
	FAKE_PID=$!
	SOCK=$U/$who/sock
	for _ in $(seq 1 100); do
		grep -q READY "$T/fake.out" && return 0
		sleep 0.1
	done
	t_fail "fake agent ($who, $1) started" "$(cat "$T/fake.err")"
}
fake_stop() {
	if [ -n "$FAKE_PID" ]; then
		kill "$FAKE_PID" 2>/dev/null
		wait "$FAKE_PID" 2>/dev/null
		FAKE_PID=""
	fi
}

# client WHO: modsign run by WHO (root, nob) on a fresh copy of the module,
# through the fake at $SOCK; status in $rc, output in $T/out.
client() {
	rm -f "$U"/w/* "$U"/w/.[!.]*
	cp "$U/orig.ko" "$U/w/m.ko" && chown "$NOBODY:$NOGROUP" "$U/w/m.ko"
	if [ "$1" = nob ]; then
		as_nobody env MODSIGN_AGENT_SOCK="$SOCK" LSAN_OPTIONS="suppressions=$U/bin/lsan.supp" \
			timeout -k 3 "$LIMIT" "$MS_NOBODY" sha256 "$KEY" "$U/cert.der" "$U/w/m.ko" \
			>"$T/out" 2>&1
	else
		MODSIGN_AGENT_SOCK=$SOCK timeout -k 3 "$LIMIT" "$MODSIGN" sha256 "$KEY" "$CERT" \
			"$U/w/m.ko" >"$T/out" 2>&1
	fi
	rc=$?
	cat "$T/out" >>"$MS_LOG"
}

# refused NAME PATTERN: the client exited 1 saying PATTERN (fixed string),
# the module is as it was and nothing else is beside it.
refused() {
	left=$(find "$U/w" -mindepth 1 ! -name m.ko -printf '%f ')
	if [ "$rc" -eq 1 ] && grep -qF -- "$2" "$T/out" && same "$U/w/m.ko" "$U/orig.ko" &&
	    [ -z "$left" ]; then
		t_pass "$1"
	else
		t_fail "$1" "status $rc (want 1), want message: $2" "$(cat "$T/out")" \
			"module $(same "$U/w/m.ko" "$U/orig.ko" && echo untouched || echo CHANGED)" \
			"left beside it: ${left:-nothing}"
	fi
}

# nothing_sent NAME: the fake read no request at all (not even HELLO).
nothing_sent() {
	if ! grep -q '^REQ' "$T/fake.out"; then
		t_pass "$1"
	else
		t_fail "$1" "$(grep '^REQ' "$T/fake.out" | tr '\n' ' ')"
	fi
}

signed_ok() {
	if [ "$rc" -eq 0 ] && same "$U/w/m.ko" "$T/ref.ko" &&
	    openssl_verify "$U/w/m.ko" "$U/orig.ko" "$DATA/rsa2048.x509.pem"; then
		t_pass "$1"
	else
		t_fail "$1" "status $rc" "$(cat "$T/out")" "$(cat "$T/fake.err")"
	fi
}

# --- Positive controls: a fake that relays a correct signature is accepted.
fake root sign "$U/right.key.pem"
client root
signed_ok "fake agent (root) relaying a correct signature, client root: signed, sign-file's bytes, verifies"
fake nob sign "$U/right.key.pem"
client nob
signed_ok "fake agent (nobody) relaying a correct signature, client nobody: signed (same uid: the peer check passes)"

# --- The lies, to a client of another user: the peer check refuses.
uid_msg="is served by uid 0, not ours ($NOBODY): refused; nothing sent"
for mode in sign wrong short long otherkey mismatch; do
	case $mode in
	sign) fake root sign "$U/right.key.pem" ;;
	otherkey) fake root sign "$U/other.key.pem" ;;
	*) fake root "$mode" ;;
	esac
	client nob
	refused "client nobody, fake agent of root ($mode): refused by the peer check" \
		"agent at $SOCK $uid_msg"
	nothing_sent "client nobody, fake agent of root ($mode): not even HELLO sent"
done
fake nob wrong
client root
refused "client root, fake agent of nobody (wrong): refused by the peer check" \
	"agent at $SOCK is served by uid $NOBODY, not ours (0): refused; nothing sent"
nothing_sent "client root, fake agent of nobody: not even HELLO sent"

# --- The lies, from the client's own user: the signature must verify.
for mode in wrong short long otherkey; do
	case $mode in
	otherkey) fake root sign "$U/other.key.pem" ;;
	*) fake root "$mode" ;;
	esac
	client root
	refused "same user, fake agent ($mode): refused, the signature does not verify" \
		"did not verify with the certificate"
done
fake root mismatch
client root
refused "same user, fake agent whose key is another certificate's (MATCH: MISMATCH): refused" \
	"is not the key of certificate"

# --- Refusals, silence, a listener that never accepts.
fake root refuse
client root
refused "an agent's refusal reaches the user in its words" \
	"agent at $SOCK refused: not the agent's user"
fake root silent
client root
refused "no HELLO reply: the client gives up (timed out)" \
	"agent at $SOCK did not answer in time: timed out"
fake root full
client root
refused "a listener that never accepts (backlog full): connect times out" \
	"agent at $SOCK (MODSIGN_AGENT_SOCK): cannot connect: timed out after 5 s"
fake_stop
t_done
