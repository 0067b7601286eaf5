#!/bin/bash
# Checks that tests/mutants showed missing (tests/mutants/README.md): the
# bound on lost-session recoveries (3 a run, not 4); what C_Sign's reply
# length may be (BIGLEN: more than the buffer; CKR_BUFFER_TOO_SMALL); one
# module under more hard-linked names than the run has workers; no core
# dumps and the PIN's memory locked during a run; stale temp cleanup leaving
# other users' and live runs' files alone. Token faults through the shim
# (tests/slowtoken), -j 1 so that the k-th C_Sign is the k-th signature.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
N=10
uri=$(slow_key_uri rsa2048)
key=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der
LOG=$T/calls.log
"$TOP/tests/lib/mkmodule.sh" "$T/src" $N 2 >/dev/null
mkdir "$T/ref" && cp "$T"/src/*.ko "$T/ref/"
"$MODSIGN" -q -r "$T/ref" sha256 "$key" "$cert" >>"$MS_LOG" 2>&1

# shellcheck source=tests/lib/workset.sh
. "$TOP/tests/lib/workset.sh"

# names_of DIR N: DIR afresh, holding N hard-linked names (n00.ko, n01.ko,
# ...) of the unsigned mod000.ko.
names_of() {
	rm -rf "$1" && mkdir "$1" && cp "$T/src/mod000.ko" "$1/n00.ko"
	for i in $(seq 1 $(($2 - 1))); do ln "$1/n00.ko" "$1/n$(printf %02d "$i").ko"; done
}

# n_same DIR FILE: how many modules in DIR are byte-identical to FILE.
n_same() {
	local n=0 m
	for m in "$1"/*.ko; do
		same "$m" "$2" && n=$((n + 1))
	done
	echo "$n"
}

# expect NAME FAULT STATUS SIGNED PATTERN: a -j 1 run with the fault; the
# status, how many are signed, the others untouched, the summary, and a
# message matching PATTERN.
expect() {
	name=$1 fault=$2 want_rc=$3 want_signed=$4 msg=$5
	fresh
	SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=$fault run_ms -j 1 -r "$T/w" sha256 "$uri" "$cert"
	count_state
	summary="$want_signed signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), $((N - want_signed)) not signed, of $N"
	[ "$want_rc" -eq 0 ] && summary="$N signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), 0 not signed, of $N"
	if [ "$rc" -eq "$want_rc" ] && [ -z "$broken" ] && [ "$signed" -eq "$want_signed" ] &&
	    [ "$orig" -eq $((N - want_signed)) ] && grep -q -- "$msg" "$T/out" &&
	    grep -qF "$summary" "$T/out"; then
		t_pass "$name: exit $want_rc, $want_signed of $N signed, the others untouched"
	else
		t_fail "$name: exit $want_rc, $want_signed of $N signed, the others untouched" \
			"exit $rc, signed $signed, original $orig, broken:$broken" "$(tail -n 8 "$T/out")"
	fi
}

# Four separate session losses, each cured by one re-open: the first three
# are recovered, the fourth (the 8th C_Sign, on the 5th module) stops the run.
loss=CKR_SESSION_HANDLE_INVALID
expect "4 lost sessions, 3 recovered" \
	"C_Sign:2:$loss,C_Sign:4:$loss,C_Sign:6:$loss,C_Sign:8:$loss" 1 4 "signing failed: C_Sign: $loss"
n=$(grep -c "session re-opened" "$T/out")
if [ "$n" -eq 3 ] && [ "$(grep -c '^C_OpenSession ' "$LOG")" -eq 4 ]; then
	t_pass "4 lost sessions: exactly 3 re-opened"
else
	t_fail "4 lost sessions: exactly 3 re-opened" "$n warnings" \
		"$(awk '{ print $1 }' "$LOG" | sort | uniq -c)"
fi
# Three are within the bound: everything signed.
expect "3 lost sessions, all recovered" \
	"C_Sign:2:$loss,C_Sign:4:$loss,C_Sign:6:$loss" 0 $N "session re-opened"

# C_Sign claims one byte more than the buffer: refused as malformed, run
# stopped, nothing written from the bogus length (ASan would see a read).
expect "C_Sign reports a length over the buffer" "C_Sign:3:BIGLEN" 1 2 "C_Sign: .*returned [0-9]* bytes for a [0-9]*-byte buffer"
# CKR_BUFFER_TOO_SMALL: modsign's buffer holds any signature of the key, so
# the token is wrong; the run stops rather than trusting the length it asks for.
expect "C_Sign says CKR_BUFFER_TOO_SMALL" "C_Sign:3:CKR_BUFFER_TOO_SMALL" 1 2 "C_Sign: CKR_BUFFER_TOO_SMALL"
if [ "$(grep -c '^C_Sign ' "$LOG")" -eq 3 ]; then
	t_pass "CKR_BUFFER_TOO_SMALL: not signed again"
else
	t_fail "CKR_BUFFER_TOO_SMALL: not signed again" "$(grep -c '^C_Sign ' "$LOG") C_Sign"
fi

# One module under more names (hard links) than the run has workers (eight
# per processor, at most 64), all in one bulk run: every worker but one
# opens a name of the inode the run itself holds; held.c turns them away
# until the first is written (they must not wait for a lock the run holds
# where that could hang it). A slow token (200 ms a signature) makes sure every
# worker has opened a name before the first signature is back. Each name
# ends signed (a new file each, as with sign-file run on each name); a hang
# is killed after 30 s (300 s under valgrind, which runs one thread at a time).
workers=$(( 8 * $(nproc) )) && [ "$workers" -gt 64 ] && workers=64
names=$(( workers + 3 ))
names_of "$T/hl" "$names"
hang_s=30
[ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ] && hang_s=300
SLOWTOKEN_SIGN_MS=200 timeout -k 3 "$hang_s" "$MODSIGN" -q -j 1 -r "$T/hl" sha256 "$uri" "$cert" >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
ok=$(n_same "$T/hl" "$T/ref/mod000.ko")
if [ "$rc" -eq 0 ] && [ "$ok" -eq "$names" ]; then
	t_pass "one module under $names hard-linked names, one bulk run: every name signed, no hang"
else
	t_fail "one module under $names hard-linked names, one bulk run: every name signed, no hang" \
		"exit $rc$([ "$rc" -eq 124 ] && echo ' (killed: hung)'), $ok of $names signed" "$(tail -n 5 "$T/out")"
fi

# The same with a token that hangs on the first signature: the run must
# still stop at --token-timeout. The other names wait for the module in the
# hung worker's hands; had they waited in flock() for the run's own lock,
# they would wait for ever (the hung call never lets go) and so would the run.
names_of "$T/hh" 4
start=$(date +%s)
SLOWTOKEN_FAULT=C_Sign:1:HANG SLOWTOKEN_HANG_MS=600000 timeout -k 3 30 "$MODSIGN" -q -j 1 \
	--token-timeout 2 -r "$T/hh" sha256 "$uri" "$cert" >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
untouched=$(n_same "$T/hh" "$T/src/mod000.ko")
if [ "$rc" -eq 1 ] && [ "$untouched" -eq 4 ] && [ $(( $(date +%s) - start )) -lt 25 ] &&
    grep -q "did not return the signature within 2 s" "$T/out"; then
	t_pass "hung token, four names of the module in its hands: stopped at --token-timeout"
else
	t_fail "hung token, four names of the module in its hands: stopped at --token-timeout" \
		"exit $rc$([ "$rc" -eq 124 ] && echo ' (killed: hung)'), $untouched of 4 untouched" \
		"$(tail -n 5 "$T/out")"
fi

# A module locked by another process (flock, as a second modsign run would
# hold it) while the token hangs: the worker waiting for that lock holds
# nothing, so the stopped run must not wait for it either.
fresh
flock "$T/w/mod005.ko" sleep 60 &
holder=$!
for _ in $(seq 100); do
	flock -n "$T/w/mod005.ko" true 2>/dev/null || break
	sleep 0.02
done
start=$(date +%s)
SLOWTOKEN_FAULT=C_Sign:2:HANG SLOWTOKEN_HANG_MS=600000 timeout -k 3 30 "$MODSIGN" -j 1 \
	--token-timeout 2 -r "$T/w" sha256 "$uri" "$cert" >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
count_state
if [ "$rc" -eq 1 ] && [ $(( $(date +%s) - start )) -lt 20 ] && [ "$signed" -eq 1 ] &&
    [ -z "$broken" ] && grep -q "did not return the signature within 2 s" "$T/out"; then
	t_pass "hung token, a module locked by another process: stopped at --token-timeout, not held by the lock"
else
	t_fail "hung token, a module locked by another process: stopped at --token-timeout, not held by the lock" \
		"exit $rc$([ "$rc" -eq 124 ] && echo ' (killed: hung)'), signed $signed, broken:$broken" \
		"$(tail -n 5 "$T/out")"
fi

# PIN safety seen from outside, while a bulk run signs on a slow token after
# its login: no core dumps (RLIMIT_CORE 0, a core would carry the PIN) and
# memory locked (the PIN's page, kept out of swap). Read in /proc, of the
# release build: ASan's mlock() does nothing (the sanitizers intercept it).
fresh
# Started with core dumps allowed as far as the hard limit lets us, so that
# a limit of 0 is modsign's own doing.
(
	ulimit -S -c "$(ulimit -H -c)" 2>/dev/null
	SLOWTOKEN_LOG=$LOG SLOWTOKEN_SIGN_MS=300 exec "$TOP/modsign" -q -j 1 -r "$T/w" sha256 "$uri" \
		"$cert" >"$T/out" 2>&1
) &
pid=$!
for _ in $(seq 200); do
	grep -q '^C_Login ' "$LOG" 2>/dev/null && break
	sleep 0.05
done
exe=$(readlink "/proc/$pid/exe" 2>/dev/null)
core=$(awk '/^Max core file size/ { print $5, $6 }' "/proc/$pid/limits" 2>/dev/null)
locked=$(awk '/^VmLck:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
wait "$pid"
rc=$?
cat "$T/out" >>"$MS_LOG"
if [ "${exe##*/}" != modsign ]; then
	t_fail "core dumps and locked memory: modsign seen running" "${exe:-it had exited}"
else
	if [ "$core" = "0 0" ]; then
		t_pass "during a run: core dumps off (RLIMIT_CORE 0)"
	else
		t_fail "during a run: core dumps off (RLIMIT_CORE 0)" "soft, hard: ${core:-unknown}"
	fi
	if [ "${locked:-0}" -gt 0 ]; then
		t_pass "during a run: the PIN's memory is locked (VmLck $locked kB)"
	else
		t_fail "during a run: the PIN's memory is locked" "VmLck: ${locked:-unknown} kB"
	fi
fi
[ "$rc" -eq 0 ] || t_fail "the run watched in /proc signs everything" "exit $rc" "$(tail -n 3 "$T/out")"

# Stale temp files: a run removes its dead predecessors' own files, never
# another user's, never a live run's. pid_max is never a pid: certainly gone.
if [ "$(id -u)" -ne 0 ]; then
	t_skip "stale temp files of another user" "needs root (chown)"
else
	dead=$(cat /proc/sys/kernel/pid_max)
	sleep 300 &
	live=$!
	for how in "-r DIR" single strip; do
		fresh
		mine=".mod000.ko.modsign-$dead-0123456789abcdef.tmp"
		theirs=".mod001.ko.modsign-$dead-0123456789abcdef.tmp"
		running=".mod002.ko.modsign-$live-0123456789abcdef.tmp"
		echo junk >"$T/w/$mine" && echo junk >"$T/w/$theirs" && echo junk >"$T/w/$running"
		chown 65534:65534 "$T/w/$theirs"
		reported=yes
		if [ "$how" = single ]; then
			run_ms sha256 "$key" "$cert" "$T/w/mod000.ko"
		elif [ "$how" = strip ]; then
			run_ms strip -r "$T/w"	# unsigned modules: each left as it is, exit 0
		else
			run_ms -v -r "$T/w" sha256 "$key" "$cert"
			# cleaned beside the key's loading, reported after it
			grep -q "removed 1 temp file left by interrupted modsign runs" "$T/out" ||
				reported="no: -v did not report the removal"
		fi
		if [ "$rc" -eq 0 ] && [ "$reported" = yes ] && [ ! -e "$T/w/$mine" ] &&
		    [ -e "$T/w/$theirs" ] && [ -e "$T/w/$running" ]; then
			t_pass "stale temp files ($how): a dead run's own removed; another user's and a live run's kept"
		else
			t_fail "stale temp files ($how): a dead run's own removed; another user's and a live run's kept" \
				"exit $rc; reported: $reported; left: $(find "$T/w" -name '*.tmp' -printf '%f ')" \
				"$(tail -n 3 "$T/out")"
		fi
	done
	kill "$live" 2>/dev/null
	wait "$live" 2>/dev/null
fi
t_done
