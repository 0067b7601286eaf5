#!/bin/bash
# No client can starve the others, and refusals arrive as refusals: one
# process holding 300 idle connections (more than the agent's 256)
# does not lock out a new client nor `agent --stop`; a refusal (another uid,
# a frame over the limit refused while it is being sent) reaches the client
# whole, every time: the agent reads what the client still sends before it
# closes, so the client's send never fails and it reads the refusal. Raw
# clients are tests/lib/agent_raw.pl; the uid checks run it as nobody
# (root only, a counted SKIP otherwise).
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup
KEY=$DATA/rsa2048.key.pem
hello=$(frame 0101)
# text_of FILE: the message of the first reply frame printed by agent_raw.pl.
text_of() { sed -n '1s/^........//p' "$1" | perl -ne 'chomp; print pack("H*", $_)'; }
hello_ok() {
	perl "$RAW" send 1 "$hello" >"$T/raw" 2>&1
	grep -q '^81000000' "$T/raw" && grep -qx OPEN "$T/raw"
}
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 2 >/dev/null
printf '~Module signature appended~\n' >"$T/marker"
is_signed() { tail -c 28 "$1" | cmp -s - "$T/marker"; }

# --- 300 idle connections from one process. Each client gets 30 s, a
# guard against a hang and no timing check: it needs well under a second,
# and the agent's own 60 s idle limit would free the slots after that.
# held_agent: a daemon, and a process holding 300 connections to it ($holder).
held_agent() {
	daemon "$KEY" || return 1
	perl "$RAW" hold 300 600 >"$T/held" 2>&1 &
	holder=$!
	for _ in $(seq 1 600); do
		grep -q '^HELD\|connect' "$T/held" && break
		sleep 0.1
	done
	grep -qx 'HELD 300' "$T/held"
}
if held_agent; then
	t_pass "one process opens 300 connections to the agent"
	cp "$T/src/mod000.ko" "$T/m1.ko"
	timeout 30 "$MODSIGN" sha256 "$KEY" "$CERT" "$T/m1.ko" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	[ "$rc" -eq 0 ] && is_signed "$T/m1.ko" &&
		t_pass "300 idle connections held: a new client still signs" ||
		t_fail "300 idle connections held: a new client still signs" "rc $rc" "$(cat "$T/out")"
	cp "$T/src/mod000.ko" "$T/m2.ko"
	cp "$T/src/mod000.ko" "$T/m3.ko"
	timeout 30 "$MODSIGN" -b -j 2 sha256 "$KEY" "$CERT" "$T/m2.ko" "$T/m3.ko" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	[ "$rc" -eq 0 ] && is_signed "$T/m2.ko" && is_signed "$T/m3.ko" &&
		t_pass "...and a bulk client with two connections signs" ||
		t_fail "...and a bulk client with two connections signs" "rc $rc" "$(cat "$T/out")"
	timeout 30 "$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
else
	t_fail "one process opens 300 connections to the agent" "$(cat "$T/held" "$T/daemon.err")"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID
if held_agent; then
	pid=$MODSIGN_AGENT_PID
	timeout 30 "$MODSIGN" agent --stop >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	[ "$rc" -eq 0 ] && wait_gone "$pid" && [ ! -e "$MODSIGN_AGENT_SOCK" ] &&
		t_pass "300 idle connections held: agent --stop stops the agent" ||
		t_fail "300 idle connections held: agent --stop stops the agent" "rc $rc" \
			"$(cat "$T/out")"
else
	t_fail "300 connections held again" "$(cat "$T/held" "$T/daemon.err")"
fi
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID

# --- A request refused while the client is still sending it (a frame
# length over the limit, 240 KiB behind it): the client's send completes
# and it reads the refusal, instead of a reset cutting it off mid-request.
if daemon "$KEY"; then
	chunk=$(head -c 61440 /dev/zero | od -An -tx1 -v | tr -d ' \n')
	ok=0
	for i in $(seq 1 10); do
		perl "$RAW" send 1 "7fffffff" "$chunk" "$chunk" "$chunk" "$chunk" >"$T/raw.$i" 2>&1
		! grep -q '^WRITE-FAILED' "$T/raw.$i" && grep -q '^ff03' "$T/raw.$i" &&
			grep -qx EOF "$T/raw.$i" && ok=$((ok + 1))
	done
	[ "$ok" -eq 10 ] && hello_ok &&
		t_pass "oversized frame, refused mid-send: the send completes, the refusal arrives, 10 of 10" ||
		t_fail "oversized frame, refused mid-send: the send completes, the refusal arrives, 10 of 10" \
			"$ok of 10" "$(cat "$T"/raw.[0-9]* | sort | uniq -c)"
else
	t_fail "daemon started" "$(cat "$T/daemon.err")"
fi

# --- Another uid: told it is refused, every time.
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
	t_skip "another uid: the refusal arrives" "needs root and the user nobody"
elif [ -n "${MODSIGN_AGENT_SOCK:-}" ]; then
	# nobody needs the script (the checkout may be in a 0700 directory) and
	# the socket, opened to it for this check; the peer credentials refuse it.
	PUB=$(mktemp -d /tmp/modsign-conns-pub.XXXXXX)
	chmod 0755 "$PUB"
	cp "$RAW" "$PUB/raw.pl"
	chmod 0644 "$PUB/raw.pl"
	chmod 0711 "$(dirname "$MODSIGN_AGENT_SOCK")"
	chmod 0666 "$MODSIGN_AGENT_SOCK"
	ok=0
	for i in $(seq 1 10); do
		# HELLO sent once the refusal is there, as a client a little late
		# does: the agent must still be reading, not gone.
		runuser -u nobody -- env MODSIGN_AGENT_SOCK="$MODSIGN_AGENT_SOCK" \
			perl "$PUB/raw.pl" late 1 "$hello" >"$T/nobody.$i" 2>&1
		! grep -q '^WRITE-FAILED' "$T/nobody.$i" && grep -q '^ff03' "$T/nobody.$i" &&
			grep -qx EOF "$T/nobody.$i" &&
			[ "$(text_of "$T/nobody.$i")" = "refused: not the agent's user" ] && ok=$((ok + 1))
	done
	chmod 0700 "$(dirname "$MODSIGN_AGENT_SOCK")"
	chmod 0600 "$MODSIGN_AGENT_SOCK"
	rm -rf "$PUB"
	[ "$ok" -eq 10 ] &&
		t_pass "another uid: \"refused: not the agent's user\" arrives before the end, 10 of 10" ||
		t_fail "another uid: \"refused: not the agent's user\" arrives before the end, 10 of 10" \
			"$ok of 10" "$(cat "$T"/nobody.*| sort | uniq -c)"
	hello_ok && t_pass "the agent serves on" || t_fail "the agent serves on" "$(cat "$T/raw")"
fi
if [ -n "${MODSIGN_AGENT_SOCK:-}" ]; then
	"$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
fi
t_done
