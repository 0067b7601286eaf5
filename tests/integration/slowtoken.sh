#!/bin/bash
# modsign through tests/slowtoken (build/slowtoken.so), a PKCS#11 module that
# forwards to SoftHSM2 with latency, serialisation and faults: the shim is
# transparent; a bulk run costs one C_Initialize and one C_Login; latencies
# add up under SLOWTOKEN_SERIAL (lower bounds from sleeps only, never an upper
# bound); a failing C_Login leaves every module untouched; a token short of
# sessions still signs everything; injected C_Sign faults never corrupt a
# module and the summary and status tell the truth.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
# Each test sets its own SLOWTOKEN_* variables, for one command only.
t_slowtoken

N=10
"$TOP/tests/lib/mkmodule.sh" "$T/src" "$N" 4 >/dev/null
key=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der
uri=$(slow_key_uri rsa2048)
LOG=$T/calls.log

mkdir "$T/ref"
for m in "$T"/src/*.ko; do
	cp "$m" "$T/ref/"
	"$SIGNFILE" sha256 "$key" "$cert" "$T/ref/$(basename "$m")"
done

fresh() {
	rm -rf "$T/w" "$LOG" && mkdir "$T/w" && cp "$T"/src/*.ko "$T/w/"
}

# n_calls FUNC [RV]: lines of the log for FUNC (returning RV).
n_calls() {
	grep -c "^$1 rv=${2:-}" "$LOG"
}

# min_ms FUNC: the shortest logged time of FUNC, in ms (empty if none).
min_ms() {
	awk -v f="$1" '$1 == f { t = $3 + 0; if (n++ == 0 || t < m) m = t } END { if (n) print m }' "$LOG"
}

# at_least X Y: X >= Y, as decimals.
at_least() {
	awk -v x="$1" -v y="$2" 'BEGIN { exit !(x != "" && x + 0 >= y + 0) }'
}

# truthful: every module is its original or sign-file's result, as many are
# signed as the summary says, and the status is 0 exactly when all are.
truthful() {
	signed=0
	for m in "$T"/w/*.ko; do
		b=$(basename "$m")
		if same "$T/ref/$b" "$m"; then
			signed=$((signed + 1))
		elif ! same "$T/src/$b" "$m"; then
			echo "$b is neither original nor signed"
			return 1
		fi
	done
	grep -q "^modsign: $signed signed, .* of $N;" "$T/out" || {
		echo "$signed modules signed; summary says otherwise"
		return 1
	}
	if [ "$signed" -eq "$N" ]; then
		[ "$rc" -eq 0 ] || { echo "all signed, status $rc"; return 1; }
	else
		[ "$rc" -eq 1 ] || { echo "$signed of $N signed, status $rc"; return 1; }
	fi
}

check_truthful() {
	if truthful >"$T/why"; then
		t_pass "$1"
	else
		t_fail "$1" "$(cat "$T/why")" "$(tail -n 15 "$T/out")" "log:" \
			"$(grep -E 'C_(Sign|Login|Open)' "$LOG" | tail -n 8)"
	fi
}

all_untouched() {
	for m in "$T"/w/*.ko; do
		same "$T/src/$(basename "$m")" "$m" || return 1
	done
}

# --- transparency ---------------------------------------------------------

fresh
run_ms sha256 "$uri" "$cert" "$T/w/mod000.ko"
[ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/w/mod000.ko" &&
	t_pass "one module through the shim equals sign-file's" ||
	t_fail "one module through the shim equals sign-file's" "$(cat "$T/out")"

fresh
SLOWTOKEN_LOG=$LOG run_ms -b sha256 "$uri" "$cert" "$T"/w/*.ko
check_truthful "bulk through the shim: $N modules equal sign-file's"
[ "$rc" -eq 0 ] && [ "$(n_calls C_Initialize)" -eq 1 ] && [ "$(n_calls C_Login)" -eq 1 ] &&
	[ "$(n_calls C_Sign CKR_OK)" -eq "$N" ] && [ "$(n_calls C_Sign)" -eq "$N" ] &&
	t_pass "bulk of $N: one C_Initialize, one C_Login, $N C_Sign" ||
	t_fail "bulk of $N: one C_Initialize, one C_Login, $N C_Sign" \
		"$(awk '{ print $1, $2 }' "$LOG" | sort | uniq -c)"
[ "$(n_calls C_Finalize)" -eq 1 ] && t_pass "bulk: C_Finalize once" ||
	t_fail "bulk: C_Finalize once" "$(awk '{ print $1, $2 }' "$LOG" | sort | uniq -c)"
# SoftHSM2 (the shim passes its token info on) signs with a session copy of
# the key: one C_CopyObject per session that signed, none per module.
copies=$(n_calls C_CopyObject CKR_OK)
[ "$copies" -ge 1 ] && [ "$copies" -le "$(n_calls C_OpenSession CKR_OK)" ] &&
	[ "$(n_calls C_CopyObject)" -eq "$copies" ] &&
	t_pass "bulk on SoftHSM2: $copies C_CopyObject, at most one per session" ||
	t_fail "bulk on SoftHSM2: one C_CopyObject per session" \
		"$(awk '{ print $1, $2 }' "$LOG" | sort | uniq -c)"

# --- latency and serialisation (lower bounds only) ------------------------

fresh
start=$(date +%s%N)
SLOWTOKEN_LOG=$LOG SLOWTOKEN_SERIAL=1 SLOWTOKEN_SIGN_MS=20 SLOWTOKEN_INIT_MS=50 \
	SLOWTOKEN_LOGIN_MS=30 SLOWTOKEN_OPEN_MS=0.5 run_ms -j 2 -b sha256 "$uri" "$cert" "$T"/w/*.ko
wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))
check_truthful "SERIAL=1, -j 2: all signed"
sum=$(awk '$1 == "C_Sign" { s += $3 } END { print s + 0 }' "$LOG")
at_least "$(min_ms C_Sign)" 20 && at_least "$sum" $((N * 20)) &&
	t_pass "SIGN_MS=20: each C_Sign >= 20 ms, $N take >= $((N * 20)) ms (sum $sum ms)" ||
	t_fail "SIGN_MS=20: each C_Sign >= 20 ms, $N take >= $((N * 20)) ms" \
		"min $(min_ms C_Sign), sum $sum"
at_least "$(min_ms C_Initialize)" 50 && at_least "$(min_ms C_Login)" 30 &&
	at_least "$(min_ms C_OpenSession)" 0.5 &&
	t_pass "INIT_MS=50, LOGIN_MS=30, OPEN_MS=0.5 are paid" ||
	t_fail "INIT_MS=50, LOGIN_MS=30, OPEN_MS=0.5 are paid" \
		"init $(min_ms C_Initialize), login $(min_ms C_Login), open $(min_ms C_OpenSession)"
# Serialised: no two calls are served at once, whatever the sessions.
overlaps=$(sed -n 's/.* span=\([0-9]*\)-\([0-9]*\) .*/\1 \2/p' "$LOG" | sort -n |
	awk 'NR > 1 && $1 < end { n++ } { if ($2 > end) end = $2 } END { print n + 0 }')
[ "$overlaps" -eq 0 ] && [ "$(wc -l < "$LOG")" -gt "$N" ] &&
	t_pass "SERIAL=1: no two calls overlap ($(n_calls C_OpenSession CKR_OK) sessions)" ||
	t_fail "SERIAL=1: no two calls overlap" "$overlaps overlaps"
[ "$(n_calls C_CopyObject)" -eq 0 ] &&
	t_pass "SERIAL=1 (a hardware slot): the key is never copied" ||
	t_fail "SERIAL=1 (a hardware slot): the key is never copied" \
		"$(n_calls C_CopyObject) C_CopyObject"
[ "$wall_ms" -ge $((N * 20 + 50 + 30)) ] &&
	t_pass "SERIAL=1, -j 2: the run lasts at least the sum of the sleeps" ||
	t_fail "SERIAL=1, -j 2: the run lasts at least the sum of the sleeps" "$wall_ms ms"

# --- one process at a time (SLOWTOKEN_EXCLUSIVE) --------------------------

# Single-module runs, two at a time: each process holds the token from
# within its C_Initialize to within its C_Finalize, so no two processes'
# spans from the end of C_Initialize to the start of C_Finalize overlap.
fresh
for m in "$T"/w/*.ko; do
	echo "$m"
done | SLOWTOKEN_LOG=$LOG SLOWTOKEN_EXCLUSIVE=$T/token.lock KBUILD_SIGN_PIN=$PIN \
	xargs -P 2 -I {} "$MODSIGN" sha256 "$uri" "$cert" {} >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
signed=0
for m in "$T"/w/*.ko; do
	same "$T/ref/$(basename "$m")" "$m" && signed=$((signed + 1))
done
overlaps=$(awk '$1 == "C_Initialize" || $1 == "C_Finalize" {
		split($5, s, "[=-]"); sub("pid=", "", $6)
		if ($1 == "C_Initialize") b[$6] = s[3]; else e[$6] = s[2]
	} END { for (p in b) print b[p], e[p] }' "$LOG" | sort -n |
	awk 'NR > 1 && $1 < end { n++ } { if ($2 > end) end = $2 } END { print n + 0 }')
[ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Initialize CKR_OK)" -eq "$N" ] &&
	[ "$(n_calls C_Finalize CKR_OK)" -eq "$N" ] && [ "$overlaps" -eq 0 ] &&
	t_pass "EXCLUSIVE: $N processes two at a time, each alone on the token from C_Initialize to C_Finalize" ||
	t_fail "EXCLUSIVE: $N processes two at a time, each alone on the token" \
		"status $rc, $signed signed, $overlaps overlaps" "$(tail -n 5 "$T/out")"

# --- the real C_Initialize under a lock (SLOWTOKEN_INIT_LOCK) --------------

# Another process holds the lock for 1.5 s: the real C_Initialize waits for
# it (the wait counts as C_Initialize's service time), then the module is
# signed. (That the lock is dropped after C_Initialize shows in tokens.sh:
# two copies of the shim in one process, each taking it, sign together.)
fresh
m1=$(ls "$T/w" | head -n 1)
flock "$T/init.lock" sh -c ': >"$1"; sleep 1.5' sh "$T/held" &
holder=$!
while [ ! -e "$T/held" ] && kill -0 "$holder" 2>/dev/null; do
	sleep 0.05
done
SLOWTOKEN_LOG=$LOG SLOWTOKEN_INIT_LOCK=$T/init.lock run_ms sha256 "$uri" "$cert" "$T/w/$m1"
wait "$holder"
waited=$(min_ms C_Initialize)
[ "$rc" -eq 0 ] && same "$T/ref/$m1" "$T/w/$m1" && at_least "$waited" 1000 &&
	t_pass "INIT_LOCK: C_Initialize waits for the lock file's holder, then the module is signed" ||
	t_fail "INIT_LOCK: C_Initialize waits for the lock file's holder, then the module is signed" \
		"status $rc, C_Initialize ${waited:-?} ms" "$(cat "$T/out")"

# --- token faults ---------------------------------------------------------

fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_Login:1:CKR_DEVICE_ERROR \
	run_ms -b sha256 "$uri" "$cert" "$T"/w/*.ko
expect_fail "C_Login fault: exit 1 naming C_Login" 1 "C_Login.*CKR_DEVICE_ERROR"
all_untouched && t_pass "C_Login fault: all modules untouched" ||
	t_fail "C_Login fault: all modules untouched" "$(cat "$T/out")"
[ "$(n_calls C_Login)" -eq 1 ] && [ "$(n_calls C_Sign)" -eq 0 ] &&
	t_pass "C_Login fault: one C_Login, no C_Sign" ||
	t_fail "C_Login fault: one C_Login, no C_Sign" "$(awk '{ print $1, $2 }' "$LOG" | sort | uniq -c)"
grep -qw "$PIN" "$T/out" && t_fail "C_Login fault: no PIN in the output" ||
	t_pass "C_Login fault: no PIN in the output"

fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_MAX_SESSIONS=1 run_ms -j 4 -b sha256 "$uri" "$cert" "$T"/w/*.ko
check_truthful "MAX_SESSIONS=1, -j 4: all signed"
[ "$(n_calls C_OpenSession CKR_OK)" -eq 1 ] && t_pass "MAX_SESSIONS=1: one session" ||
	t_fail "MAX_SESSIONS=1: one session" "$(grep C_OpenSession "$LOG")"

# The token claims room for sessions but refuses the second: fewer lanes.
fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_OpenSession:2+:CKR_SESSION_COUNT \
	run_ms -j 4 -b sha256 "$uri" "$cert" "$T"/w/*.ko
check_truthful "C_OpenSession refused after the first, -j 4: all signed"

fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_MAX_SESSIONS=2 run_ms -j 4 -b sha256 "$uri" "$cert" "$T"/w/*.ko
check_truthful "MAX_SESSIONS=2, -j 4: all signed"
[ "$(n_calls C_OpenSession CKR_OK)" -le 2 ] && t_pass "MAX_SESSIONS=2: at most two sessions" ||
	t_fail "MAX_SESSIONS=2: at most two sessions" "$(grep C_OpenSession "$LOG")"

# C_Sign faults: whatever modsign's policy, nothing is half-written and the
# summary and status are true. The shim answers the K-th call as asked.
for f in C_Sign:3:CKR_DEVICE_ERROR C_Sign:4+:CKR_DEVICE_REMOVED \
	C_Sign:2:CKR_SESSION_HANDLE_INVALID C_Sign:1:CKR_BUFFER_TOO_SMALL C_Sign:2:BIGLEN C_SignInit:5:CKR_FUNCTION_FAILED; do
	fresh
	SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=$f run_ms -j 1 -b sha256 "$uri" "$cert" "$T"/w/*.ko
	check_truthful "fault $f: no module corrupted, summary and status true"
	func=${f%%:*}
	rest=${f#*:}
	k=${rest%%:*}
	k=${k%+}
	fault=${rest#*:}
	want=$fault
	[ "$want" = BIGLEN ] && want=CKR_OK
	line=$(grep "^$func " "$LOG" | sed -n "${k}p")
	first=$(grep -n "^$func .* fault=" "$LOG" | head -n 1)
	case $line in
	"$func rv=$want "*" fault=$fault") ;;
	*) line="got: $line" ;;
	esac
	# Only call K (or, with K+, K and later) carries the fault.
	before=$(grep "^$func " "$LOG" | head -n $((k - 1)) | grep -c " fault=")
	if [ "${line#got: }" = "$line" ] && [ "$before" -eq 0 ]; then
		t_pass "fault $f: call $k of $func answered $want"
	else
		t_fail "fault $f: call $k of $func answered $want" "$line" "first fault: $first"
	fi
done

# HANG sleeps SLOWTOKEN_HANG_MS, then forwards.
fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_Sign:2:HANG SLOWTOKEN_HANG_MS=200 \
	run_ms -j 1 -b sha256 "$uri" "$cert" "$T"/w/*.ko
check_truthful "C_Sign hang of 200 ms: all signed"
line=$(grep "^C_Sign " "$LOG" | sed -n 2p)
case $line in
*" fault=HANG") at_least "$(echo "$line" | awk '{ print $3 + 0 }')" 200 ;;
*) false ;;
esac && t_pass "C_Sign hang: call 2 took >= 200 ms" ||
	t_fail "C_Sign hang: call 2 took >= 200 ms" "$line"

# --- one copy per token: <copy>.conf replaces the environment --------------

# Two copies in one process each keep their own settings (--key loads one
# per token); here one copy, configured by its file while the environment
# asks for a fault that would stop the run.
fresh
cp "$SHIM" "$T/st-copy.so"
printf '# per-copy settings\nSLOWTOKEN_LOG=%s\n\nSLOWTOKEN_LOGIN_MS=30\n' "$T/copy.log" \
	>"$T/st-copy.so.conf"
curi="pkcs11:token=modsign-test;object=rsa2048;type=private?module-path=$T/st-copy.so"
SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_Login:1:CKR_DEVICE_ERROR \
	run_ms -b sha256 "$curi" "$cert" "$T"/w/*.ko
check_truthful "a copy with its own .conf: the environment's fault is not read"
[ ! -e "$LOG" ] && [ "$(grep -c '^C_Login rv=CKR_OK' "$T/copy.log")" -eq 1 ] &&
	at_least "$(awk '$1 == "C_Login" { print $3 + 0 }' "$T/copy.log")" 30 &&
	t_pass "a copy with its own .conf: its log and login latency, not the environment's" ||
	t_fail "a copy with its own .conf: its log and login latency" \
		"$(ls "$T")" "$(grep C_Login "$T/copy.log")"
fresh
printf 'SLOWTOKEN_LOG=%s\nSLOWTOKEN_SIGNMS=5\n' "$T/copy.log" >"$T/st-copy.so.conf"
run_ms -b sha256 "$curi" "$cert" "$T"/w/*.ko
expect_fail "a .conf with an unknown setting: C_Initialize fails" 1 \
	"slowtoken: .*st-copy.so.conf: unknown setting SLOWTOKEN_SIGNMS"

# A bad configuration fails loudly at C_Initialize.
fresh
SLOWTOKEN_FAULT=C_Sign:0:CKR_OK run_ms -b sha256 "$uri" "$cert" "$T"/w/*.ko
expect_fail "bad SLOWTOKEN_FAULT: C_Initialize fails" 1 "slowtoken: SLOWTOKEN_FAULT: bad entry"
SLOWTOKEN_MODULE=$T/nonexistent.so run_ms -b sha256 "$uri" "$cert" "$T"/w/*.ko
expect_fail "missing SLOWTOKEN_MODULE: C_Initialize fails" 1 "slowtoken: SLOWTOKEN_MODULE"
all_untouched && t_pass "bad configuration: all modules untouched" ||
	t_fail "bad configuration: all modules untouched"
t_done
