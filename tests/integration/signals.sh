#!/bin/bash
# Signals, single and bulk mode alike: SIGINT, SIGTERM and SIGHUP let the
# modules being written finish, sign no more, report, leave no temp file
# and end the run by the signal (status 128 + n); a second signal ends it
# at once and removes the temp files of the writes in progress; SIGPIPE
# (the reader of -v gone) does not stop the signing. Hung tokens and
# signals: token_faults.sh; SIGKILL at random moments: kill.sh.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
# The release build: this test is about what reaches the disk and when.
MS=$TOP/modsign
N=40
"$TOP/tests/lib/mkmodule.sh" "$T/src" $N 2 >/dev/null
cert=$DATA/rsa2048.x509.der
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
slow_uri=$(slow_key_uri rsa2048)
mkdir "$T/ref"
cp "$T"/src/*.ko "$T/ref/"
"$MS" -q -r "$T/ref" sha256 "$DATA/rsa2048.key.pem" "$cert"

# state: counts modules that are original / signed / neither.
state() {
	orig=0 signed=0 broken=""
	for m in "$T"/w/*.ko; do
		b=$(basename "$m")
		if same "$m" "$T/src/$b"; then
			orig=$((orig + 1))
		elif same "$m" "$T/ref/$b"; then
			signed=$((signed + 1))
		else
			broken="$broken $b"
		fi
	done
}

# One signal in the middle of a bulk run on a slow token: the modules in
# hand are finished, the summary is true, and the run ends by the signal.
for sig in TERM INT HUP; do
	rm -rf "$T/w" && cp -a "$T/src" "$T/w"
	SLOWTOKEN_SIGN_MS=100 "$MS" -j 1 -r "$T/w" sha256 \
		"$slow_uri" \
		"$cert" >"$T/out" 2>&1 &
	pid=$!
	for _ in $(seq 300); do
		[ "$(find "$T/w" -name '*.ko' -newer "$T/src" | wc -l)" -gt 1 ] && break
		sleep 0.02
	done
	kill -$sig "$pid"
	wait "$pid" 2>/dev/null
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	state
	if [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] && [ -z "$broken" ] && [ "$signed" -gt 0 ] &&
	    [ "$orig" -gt 0 ] && [ -z "$(ls -A "$T/w" | grep -v '\.ko$')" ] &&
	    grep -q "interrupted by signal" "$T/out" &&
	    grep -q "$signed signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), $orig not signed" "$T/out"; then
		t_pass "SIG$sig: modules in hand finished, run stopped, summary true, no temp file, exit $rc"
	else
		t_fail "SIG$sig: modules in hand finished, run stopped, summary true, no temp file" \
			"exit $rc, signed $signed, original $orig, broken:$broken" "$(tail -3 "$T/out")"
	fi
done

# A module being written when the signal comes: strace holds back the
# fsync of its temp file (the Nth fsync of each thread) for 2 s, so that the
# temp file is on disk when the signal comes. One signal: the module is
# finished. Two: the run stops at once, the temp file is removed and the
# module stays as it was. Either way no temp file stays, and the run ends by
# the signal. Single mode and bulk mode alike.
# signal_mid_write NAME COUNT FSYNC_N ARGS...: run, wait for a temp file,
# send COUNT SIGTERMs; sets rc.
signal_mid_write() {
	local name=$1 count=$2 nth=$3 spid mpid
	shift 3
	rm -rf "$T/w" && cp -a "$T/src" "$T/w"
	strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=2000000:when="$nth" \
		"$MS" "$@" >"$T/out" 2>&1 &
	spid=$!
	# A temp file still there half a second later is one held back.
	for _ in $(seq 100); do
		tmp=$(ls -A "$T/w" | grep '\.tmp$' | head -n 1)
		[ -n "$tmp" ] && sleep 0.5 && [ -e "$T/w/$tmp" ] && break
		sleep 0.02
	done
	mpid=$(cat "/proc/$spid/task/$spid/children" 2>/dev/null)
	if [ -z "$mpid" ] || ! ls -A "$T/w" | grep -q '\.tmp$'; then
		t_fail "$name: test set-up: modsign seen writing" "$(cat "$T/out")"
	fi
	for k in $(seq "$count"); do
		kill -TERM "$mpid" 2>/dev/null
		[ "$k" -lt "$count" ] && sleep 0.3
	done
	wait "$spid"
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	state
}
if ! command -v strace >/dev/null; then
	t_skip "signals while a module is written" "no strace (scripts/install-deps.sh)"
else
	key=$DATA/rsa2048.key.pem
	signal_mid_write "single, one SIGTERM" 1 1 sha256 "$key" "$cert" "$T/w/mod000.ko"
	if [ "$rc" -eq 143 ] && same "$T/w/mod000.ko" "$T/ref/mod000.ko" &&
	    [ -z "$(ls -A "$T/w" | grep -v '\.ko$')" ] && grep -q "interrupted by signal 15" "$T/out"; then
		t_pass "single module, SIGTERM while it is written: finished, no temp file, exit 143"
	else
		t_fail "single module, SIGTERM while it is written: finished, no temp file, exit 143" \
			"exit $rc; left: $(ls -A "$T/w" | grep -v '\.ko$')" "$(cat "$T/out")"
	fi
	signal_mid_write "single, two SIGTERMs" 2 1 sha256 "$key" "$cert" "$T/w/mod000.ko"
	if [ "$rc" -eq 143 ] && same "$T/w/mod000.ko" "$T/src/mod000.ko" &&
	    [ -z "$(ls -A "$T/w" | grep -v '\.ko$')" ] && grep -q "stopped at once" "$T/out"; then
		t_pass "single module, two SIGTERMs while it is written: temp file removed, module untouched, exit 143"
	else
		t_fail "single module, two SIGTERMs while it is written: temp file removed, module untouched, exit 143" \
			"exit $rc; left: $(ls -A "$T/w" | grep -v '\.ko$')" "$(cat "$T/out")"
	fi
	signal_mid_write "bulk, two SIGTERMs" 2 2 -j 1 -r "$T/w" sha256 "$key" "$cert"
	if [ "$rc" -eq 143 ] && [ -z "$broken" ] && [ "$signed" -gt 0 ] && [ "$orig" -gt 0 ] &&
	    [ -z "$(ls -A "$T/w" | grep -v '\.ko$')" ] && grep -q "stopped at once" "$T/out"; then
		t_pass "bulk, two SIGTERMs while a module is written: stopped at once, no temp file, $signed signed, exit 143"
	else
		t_fail "bulk, two SIGTERMs while a module is written: stopped at once, no temp file" \
			"exit $rc, signed $signed, original $orig, broken:$broken; left: $(ls -A "$T/w" | grep -v '\.ko$')" \
			"$(tail -n 3 "$T/out")"
	fi
fi

# --token-timeout times the token's signature and nothing else, in single
# mode as in a bulk run (single mode once armed alarm() around prepare, sign
# and write, and _exited when a slow disk outlasted it): every fsync held
# back 1.5 s, a 1 s timeout, and the module is signed all the same.
if ! command -v strace >/dev/null; then
	t_skip "single module, slow writes and --token-timeout" "no strace (scripts/install-deps.sh)"
else
	rm -rf "$T/w" && cp -a "$T/src" "$T/w"
	strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=1500000 \
		"$MS" --token-timeout 1 sha256 \
		"$slow_uri" \
		"$cert" "$T/w/mod000.ko" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	if [ "$rc" -eq 0 ] && same "$T/w/mod000.ko" "$T/ref/mod000.ko" &&
	    [ -z "$(ls -A "$T/w" | grep -v '\.ko$')" ] && [ ! -s "$T/out" ]; then
		t_pass "single module, --token-timeout 1, every fsync 1.5 s: the write is not timed, signed, exit 0"
	else
		t_fail "single module, --token-timeout 1, every fsync 1.5 s: the write is not timed, signed, exit 0" \
			"exit $rc" "$(cat "$T/out")"
	fi
fi

# A reader that goes away (| head): SIGPIPE must not kill the run half way;
# it stops printing and signs everything.
# A slow token, so that head is gone long before the last line.
rm -rf "$T/w" && cp -a "$T/src" "$T/w"
SLOWTOKEN_SIGN_MS=20 "$MS" -v -j 1 -r "$T/w" sha256 \
	"$slow_uri" \
	"$cert" 2>&1 | head -n 1 >/dev/null
rc=${PIPESTATUS[0]}
state
if [ "$rc" -eq 0 ] && [ "$signed" -eq $N ] && [ -z "$(ls -A "$T/w" | grep -v '\.ko$')" ]; then
	t_pass "-v | head -n 1: the run goes on without printing, all $N signed, exit 0"
else
	t_fail "-v | head -n 1: the run goes on without printing, all $N signed, exit 0" \
		"exit $rc, signed $signed, original $orig, broken:$broken"
fi
t_done
