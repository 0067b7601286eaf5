#!/bin/bash
# The agent's audit log never loses or merges a record: --log
# takes a regular file only (a FIFO is refused at once, never waited for; a
# device such as /dev/full is refused), an agent that cannot write its
# start line does not start, a log another process keeps locked withholds
# a signature instead of hanging it, and on a disk that fills while the agent signs
# (a 64 KiB tmpfs, filled by dd between signatures) every line of the log
# stays a whole JSON line, a signature whose line could not be written is
# withheld (its module untouched), and every module the log shows as signed
# is signed, and the other way round. Signs with the PEM key through the
# agent, as kbuild does: modsign sha256 KEY CERT MODULE. The tmpfs part
# needs root (a counted SKIP otherwise).
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup
KEY=$DATA/rsa2048.key.pem
MNT=$T/mnt

if python3 -c 'import json' 2>/dev/null; then
	json_lines() {
		python3 -c 'import json, sys
data = open(sys.argv[1], "rb").read()
sys.exit(3) if data and not data.endswith(b"\n") else None
for line in data.decode("utf-8").split("\n")[:-1]:
    json.loads(line)' "$1"
	}
else
	json_lines() {
		perl -MJSON::PP -e 'local $/; open(my $f, "<", $ARGV[0]) or die; my $d = <$f>;
			exit 3 if length($d) && substr($d, -1) ne "\n";
			JSON::PP->new->decode($_) for split(/\n/, $d);' "$1"
	}
fi
# is_signed FILE: the module carries the kernel's signature marker at its end.
is_signed() { tail -c 28 "$1" | cmp -s - "$T/marker"; }
printf '~Module signature appended~\n' >"$T/marker"

# --- What --log accepts: a regular file, nothing that blocks or never fills.
mkfifo "$T/fifo"
timeout 60 "$MODSIGN" agent --log "$T/fifo" "$KEY" -- true >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
expect_fail "--log a FIFO without a reader: refused at once" 1 \
	"log $T/fifo: a FIFO: the audit log must be a regular file"
sleep 30 <>"$T/fifo" &
reader=$!
timeout 60 "$MODSIGN" agent --log "$T/fifo" "$KEY" -- true >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
expect_fail "--log a FIFO with a reader: refused" 1 \
	"log $T/fifo: a FIFO: the audit log must be a regular file"
run_ms agent --log /dev/full "$KEY" -- true
expect_fail "--log /dev/full: refused at start" 1 \
	"log /dev/full: a device: the audit log must be a regular file"
if daemon --log /dev/full "$KEY"; then
	t_fail "--log /dev/full: --daemon does not start" "$(cat "$T/daemon.env")"
	"$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
else
	[ ! -s "$T/daemon.env" ] && grep -q "a device: the audit log must be a regular file" \
		"$T/daemon.err" && t_pass "--log /dev/full: --daemon does not start, says why" ||
		t_fail "--log /dev/full: --daemon does not start, says why" "$(cat "$T/daemon.err")"
fi
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID
run_ms agent --log "$T" "$KEY" -- true
expect_fail "--log a directory: refused" 1 "open: Is a directory"

# A command that cannot run: the trail that began says how it ended. (Under
# valgrind the exec is valgrind's, which exits 127 itself: the agent sees a
# command that exited 127, not an exec error.)
run_ms agent --log "$T/spawn.log" "$KEY" -- "$T/no-such-command"
[ "$rc" -eq 127 ] && grep -q '"event":"start"' "$T/spawn.log" &&
	grep -qE '"event":"stop",.*"detail":"stopped \((cannot run the command|the command exited with status 127)\)' "$T/spawn.log" &&
	{ [ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ] || grep -q '"detail":"stopped (cannot run the command)"' "$T/spawn.log"; } &&
	json_lines "$T/spawn.log" && t_pass "a command that cannot run: start and stop lines" ||
	t_fail "a command that cannot run: start and stop lines" "rc $rc" "$(cat "$T/spawn.log")"

# Another process holding the log's lock for ever: the signature is
# withheld after a while (10 s), not every signature hung.
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 2 >/dev/null
if command -v flock >/dev/null && daemon --log "$T/locked.log" "$KEY"; then
	# -o: the lock is flock(1)'s own, gone when it is killed (not its sleep's).
	flock -o "$T/locked.log" sleep 120 &
	locker=$!
	for _ in $(seq 1 600); do
		flock -n "$T/locked.log" true || break
		sleep 0.1
	done
	cp "$T/src/mod000.ko" "$T/locked.ko"
	timeout 60 "$MODSIGN" sha256 "$KEY" "$CERT" "$T/locked.ko" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	sleeper=$(pgrep -P "$locker")
	kill "$locker" $sleeper 2>/dev/null
	wait "$locker" 2>/dev/null
	[ "$rc" -eq 1 ] && grep -q "signature withheld" "$T/out" &&
		cmp -s "$T/locked.ko" "$T/src/mod000.ko" &&
		t_pass "the log locked by another process: the signature withheld, no hang" ||
		t_fail "the log locked by another process: the signature withheld, no hang" "rc $rc" \
			"$(cat "$T/out")"
	"$MODSIGN" sha256 "$KEY" "$CERT" "$T/locked.ko" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	[ "$rc" -eq 0 ] && ! cmp -s "$T/locked.ko" "$T/src/mod000.ko" &&
		grep -q '"outcome":"signed"' "$T/locked.log" &&
		t_pass "...and once the lock is gone, it signs and logs again" ||
		t_fail "...and once the lock is gone, it signs and logs again" "rc $rc" "$(cat "$T/out")"
	"$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
	unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID
else
	t_skip "the log locked by another process" "no flock(1), or no daemon: $(cat "$T/daemon.err")"
fi

# --- A disk that fills.
if [ "$(id -u)" -ne 0 ] || ! mkdir "$MNT" || ! mount -t tmpfs -o size=64k tmpfs "$MNT" 2>"$T/mount.err"; then
	t_skip "audit log on a full disk" "cannot mount a tmpfs: $(cat "$T/mount.err" 2>/dev/null)"
	t_done
	exit
fi
trap 'umount "$MNT" 2>/dev/null; agent_cleanup; t_cleanup' EXIT
mkdir "$T/w"
for i in $(seq -w 1 60); do
	cp "$T/src/mod000.ko" "$T/w/m$i.ko"
done
# sign N: module N through the agent; its client's output kept in $T/client.N.
sign() {
	"$MODSIGN" sha256 "$KEY" "$CERT" "$T/w/m$1.ko" >"$T/client.$1" 2>&1
	cat "$T/client.$1" >>"$MS_LOG"
}
# fill: no free page left on the tmpfs.
fill() {
	dd if=/dev/zero of="$MNT/fill" bs=4k count=64 >/dev/null 2>&1
}

# A start line that cannot be written: the agent does not start.
: >"$MNT/start.log"
fill
run_ms agent --log "$MNT/start.log" "$KEY" -- touch "$T/ran"
if [ "$rc" -eq 1 ] && grep -q "log $MNT/start.log: cannot write the start line: No space left on device; not started" \
    "$T/out" && [ ! -e "$T/ran" ] && [ ! -s "$MNT/start.log" ]; then
	t_pass "full disk at start: the agent does not start, names the log"
else
	t_fail "full disk at start: the agent does not start, names the log" "rc $rc" "$(cat "$T/out")"
fi
rm -f "$MNT/fill" "$MNT/start.log"

if daemon --log "$MNT/audit.log" "$KEY"; then
	n=1
	sign 01
	# Sign until the log's last page has less room left than one more line:
	# the line after the fill is then written short, and must be cut off.
	while [ "$n" -lt 30 ]; do
		size=$(stat -c %s "$MNT/audit.log")
		line=$(tail -n 1 "$MNT/audit.log" | wc -c)
		room=$((4096 - size % 4096))
		[ "$room" -lt $((line - 20)) ] && [ "$room" -gt 20 ] && break
		n=$((n + 1))
		sign "$(printf %02d "$n")"
	done
	fill
	for i in $(seq "$((n + 1))" "$((n + 6))"); do
		sign "$(printf %02d "$i")"
	done
	cp "$MNT/audit.log" "$T/full.log"
	rm -f "$MNT/fill"
	for i in $(seq "$((n + 7))" "$((n + 9))"); do
		sign "$(printf %02d "$i")"
	done
	last=$((n + 9))
	"$MODSIGN" agent --stop >>"$MS_LOG" 2>&1
	unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID
	cp "$MNT/audit.log" "$T/audit.log"

	json_lines "$T/full.log" 2>"$T/json.err" &&
		t_pass "disk full: the log holds whole JSON lines only (a line written short was cut off)" ||
		t_fail "disk full: the log holds whole JSON lines only (a line written short was cut off)" \
			"$(cat "$T/json.err")" "$(tail -c 600 "$T/full.log")"
	json_lines "$T/audit.log" 2>"$T/json.err" &&
		t_pass "space again: every line of the log is a whole JSON line, none glued" ||
		t_fail "space again: every line of the log is a whole JSON line, none glued" \
			"$(cat "$T/json.err")" "$(tail -c 1500 "$T/audit.log")"
	withheld=0 both=0 bad=""
	for i in $(seq -w 1 "$last"); do
		f=$T/w/m$i.ko
		logged=0
		grep -q "\"module\":\"$f\",.*\"outcome\":\"signed\"" "$T/audit.log" && logged=1
		if is_signed "$f"; then
			[ "$logged" = 1 ] && both=$((both + 1)) || bad="$bad m$i:signed-not-logged"
		else
			[ "$logged" = 1 ] && bad="$bad m$i:logged-not-signed"
			cmp -s "$f" "$T/src/mod000.ko" || bad="$bad m$i:changed"
			grep -q "cannot write its audit log: signature withheld" "$T/client.$i" &&
				withheld=$((withheld + 1)) || bad="$bad m$i:no-reason"
		fi
	done
	[ "$withheld" -ge 1 ] && [ -z "$bad" ] &&
		t_pass "$withheld signatures withheld (modules untouched, clients told why), $both signed and logged, none logged but withheld" ||
		t_fail "signatures withheld exactly when their line was not written" \
			"withheld $withheld, signed and logged $both, wrong:$bad" "$(cat "$T/audit.log")"
	for i in $(seq "$((n + 7))" "$last"); do
		is_signed "$T/w/m$i.ko" || bad="$bad m$i"
	done
	[ -z "$bad" ] && grep -q '"event":"stop"' "$T/audit.log" &&
		t_pass "space again: the next modules are signed and logged, and the stop line" ||
		t_fail "space again: the next modules are signed and logged, and the stop line" \
			"$bad" "$(tail -n 3 "$T/audit.log")"
else
	t_fail "daemon with --log on the tmpfs started" "$(cat "$T/daemon.err")"
fi
t_done
