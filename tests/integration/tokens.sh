#!/bin/bash
# Several tokens holding one key (--key), on real SoftHSM2 tokens
# of one token directory: tok-a and tok-b hold the same imported TEST-ONLY
# keys (PIN $PIN), tok-c too under another PIN ($KEY_PASS), tok-x holds
# another key under the label rsa2048. Where a test needs each token slow,
# serialised or failing on its own, it loads tests/slowtoken once per token
# from two copies of the library, each with its own <copy>.conf and its own
# copy of SoftHSM2 (one instance per token, as two cards are).
#
# Proves: modules signed with --key, single and bulk, are byte for byte
# sign-file's (RSA), with one C_Login per token; every token is opened, logged in once and checked
# before a module is touched, all at once (the shims' logs show the start-ups
# overlap, and the logins too when each token has its own PIN source); a PIN
# goes to a second token only after a first took it, and a refused one to no
# other; a token holding another key, and one token named twice, are refused
# by name with every module untouched; an EC P-256 key on two tokens: every
# module verifies and both tokens signed; a token whose PIN is locked or on
# its final try is refused by name with no C_Login offered to any token.
# `modsign agent --key`: one modsign process per module under the agent,
# every module sign-file's bytes, both tokens signing (the audit log and the
# stop line name the token of each signature), one C_Login per token; a
# token of another key refused before the agent listens; a token failing
# mid-run dropped and logged while the other signs every module, both
# failing: one dropped, then the agent stops naming the last (lost), and one
# hanging past --token-timeout dropped while the agent ends with its command.
# A token whose signatures stop verifying mid-run is dropped the same way,
# none of its bad signatures written.
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID

# calls FUNC LOG: how many FUNC calls a slowtoken log shows (0: no log).
calls() {
	if [ -e "$2" ]; then
		grep -c "^$1 " "$2"
	else
		echo 0
	fi
}

"$TOP/tests/lib/mktoken.sh" "$T/hsm" tok-a "$PIN"
"$TOP/tests/lib/mktoken.sh" "$T/hsm" tok-b "$PIN"
"$TOP/tests/lib/mktoken.sh" "$T/hsm" tok-c "$KEY_PASS"
export SOFTHSM2_CONF=$T/hsm/softhsm2.conf
softhsm2-util --init-token --free --label tok-x --so-pin 5678 --pin "$PIN" >/dev/null
softhsm2-util --import "$DATA/other-rsa2048.key.pem" --token tok-x --label rsa2048 --id 01 \
	--pin "$PIN" >/dev/null

N=12
"$TOP/tests/lib/mkmodule.sh" "$T/src" "$N" 4 >/dev/null
key=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der
mkdir "$T/ref"
for m in "$T"/src/*.ko; do
	cp "$m" "$T/ref/"
	"$SIGNFILE" sha256 "$key" "$cert" "$T/ref/$(basename "$m")"
done
printf '%s\n' "$PIN" >"$T/a.pin"
printf '%s\n' "$KEY_PASS" >"$T/c.pin"

# uri TOKEN [MODULE [OBJECT]]: a key on one of the tokens.
uri() {
	printf 'pkcs11:token=%s;object=%s;type=private?module-path=%s' "$1" "${3:-rsa2048}" \
		"${2:-$SOFTHSM}"
}

# Two SoftHSM2 copies in one process must not read the one token directory at
# the same moment (seen, even on a quiet machine: "initialised tokens present:
# 0" through the second shim): every shim holds one lock file around its real
# C_Initialize (SLOWTOKEN_INIT_LOCK). Where a test shows that the start-ups
# overlap, every shim but a's also starts 1.5 s after a's (SLOWTOKEN_INIT_MS).
# shim NAME [SETTING...]: a copy of slowtoken, $T/st-NAME.so, over its own copy
# of SoftHSM2, logging to $T/NAME.log, with the given SLOWTOKEN_* settings.
shim() {
	local name=$1
	shift
	cp "$SHIM" "$T/st-$name.so"
	[ -e "$T/softhsm-$name.so" ] || cp "$SOFTHSM" "$T/softhsm-$name.so"
	rm -f "$T/$name.log"
	{
		echo "SLOWTOKEN_MODULE=$T/softhsm-$name.so"
		echo "SLOWTOKEN_LOG=$T/$name.log"
		echo "SLOWTOKEN_INIT_LOCK=$T/hsm/init.lock"
		printf '%s\n' "$@"
	} >"$T/st-$name.so.conf"
}

fresh() {
	rm -rf "$T/w" && mkdir "$T/w" && cp "$T"/src/*.ko "$T/w/"
}

all_untouched() {
	for m in "$T"/w/*.ko; do
		same "$T/src/$(basename "$m")" "$m" || return 1
	done
}

all_as_signfile() {
	for m in "$T"/w/*.ko; do
		same "$T/ref/$(basename "$m")" "$m" || return 1
	done
}

# span LOG FUNC [K]: the K-th (default first) logged call of FUNC as "begin end" (us).
span() {
	grep "^$2 " "$1" | sed -n "${3:-1}p" | sed -n 's/.* span=\([0-9]*\)-\([0-9]*\) .*/\1 \2/p'
}

# overlap "B1 E1" "B2 E2": the two intervals share a moment.
overlap() {
	set -- $1 $2
	[ $# -eq 4 ] && [ "$1" -lt "$4" ] && [ "$3" -lt "$2" ]
}

# before "B1 E1" "B2 E2": the first ends before the second begins.
before() {
	set -- $1 $2
	[ $# -eq 4 ] && [ "$2" -le "$3" ]
}

# --- one module: the same bytes as one token and as sign-file -------------

fresh
KBUILD_SIGN_PIN=$PIN run_ms sha256 "$(uri tok-a)" --key "$(uri tok-b)" "$cert" "$T/w/mod000.ko"
[ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/w/mod000.ko" &&
	t_pass "one module, two tokens: sign-file's bytes" ||
	t_fail "one module, two tokens: sign-file's bytes" "status $rc" "$(cat "$T/out")"

# Bulk: every module sign-file's bytes; each token logged in to once.
shim a
shim b 'SLOWTOKEN_INIT_MS=1500'
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b -j 4 sha256 "$(uri tok-a "$T/st-a.so")" \
	--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
[ "$rc" -eq 0 ] && all_as_signfile &&
	t_pass "bulk, two tokens: every module sign-file's bytes" ||
	t_fail "bulk, two tokens: every module sign-file's bytes" "status $rc" "$(cat "$T/out")"
[ "$(grep -c '^C_Login ' "$T/a.log")" -eq 1 ] && [ "$(grep -c '^C_Login ' "$T/b.log")" -eq 1 ] &&
	t_pass "bulk, two tokens: one C_Login each" ||
	t_fail "bulk, two tokens: one C_Login each" \
		"a: $(grep -c '^C_Login ' "$T/a.log"), b: $(grep -c '^C_Login ' "$T/b.log")"

# --- refusals, before any module is touched -------------------------------

fresh
KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a)" --key "$(uri tok-x)" "$cert" "$T"/w/*.ko
expect_fail "a token holding another key: refused by name" 1 \
	"token 'tok-x' (serial [0-9a-f]*) (key pkcs11:token=tok-x;.*) holds another key than the certificate"
all_untouched && t_pass "a token holding another key: every module untouched" ||
	t_fail "a token holding another key: every module untouched"

fresh
KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-x)" --key "$(uri tok-a)" "$cert" "$T"/w/*.ko
expect_fail "<key> on a token holding another key: refused by name" 1 \
	"token 'tok-x' (serial [0-9a-f]*) (key pkcs11:token=tok-x;.*) holds another key"
all_untouched && t_pass "<key> holding another key: every module untouched" ||
	t_fail "<key> holding another key: every module untouched"

# One token twice: by the same URI, and through another module (a shim copy
# over its own SoftHSM2) and another attribute, found by its serial.
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a)" --key "$(uri tok-b)" --key "$(uri tok-a)" \
	"$cert" "$T"/w/*.ko
expect_fail "one token named twice: refused" 1 \
	"key pkcs11:token=tok-a;.* and key pkcs11:token=tok-a;.* name one token, token 'tok-a' (serial [0-9a-f]*): give each token once"
all_untouched && t_pass "one token named twice: every module untouched" ||
	t_fail "one token named twice: every module untouched"
# Two SoftHSM2 instances (the shim's copy and the one loaded directly) that
# read one token directory at the same time can miss each other's token
# files (seen under load: "C_Initialize: CKR_GENERAL_ERROR", no token through
# the shim): the shim's C_Initialize waits until the direct one has opened.
shim a SLOWTOKEN_INIT_MS=3000
serial_a=$(sed -n "s/.*token 'tok-a' (serial \([0-9a-f]*\)).*/\1/p" "$T/out" | head -n 1)
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a)" \
	--key "pkcs11:serial=$serial_a;object=rsa2048;type=private?module-path=$T/st-a.so" \
	"$cert" "$T"/w/*.ko
expect_fail "one token through two modules (same serial): refused" 1 "name one token, token 'tok-a'"
[ -n "$serial_a" ] && all_untouched && ! grep -q '^C_Login ' "$T/a.log" &&
	t_pass "one token through two modules: untouched, no login through the second" ||
	t_fail "one token through two modules: untouched, no login through the second" \
		"serial '$serial_a'" "$(grep -c '^C_Login ' "$T/a.log") C_Login"

fresh
run_ms -b sha256 "$DATA/rsa2048.key.pem" --key "$(uri tok-a)" "$cert" "$T"/w/*.ko
expect_fail "--key with a key file as <key>: usage error" 2 "<key> must be a pkcs11: URI"
run_ms -b sha256 "$(uri tok-a)" --key "$DATA/rsa2048.key.pem" "$cert" "$T"/w/*.ko
expect_fail "--key with a key file: usage error" 2 "--key names a token: give a pkcs11: URI"
printf 'x' >"$T/raw.sig"
run_ms -s "$T/raw.sig" sha256 "$(uri tok-a)" --key "$(uri tok-b)" "$cert" "$T/w/mod000.ko"
expect_fail "--key with -s: usage error" 2 "-s appends a given signature: --key does not apply"
all_untouched && t_pass "usage errors: every module untouched" ||
	t_fail "usage errors: every module untouched"

# --- PINs: one read per source, offered to one token first ----------------

# A wrong PIN: refused by the first token; no other token is offered it.
shim a 'SLOWTOKEN_LOGIN_MS=50'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_LOGIN_MS=50'
fresh
KBUILD_SIGN_PIN=$WRONG_PIN run_ms -b sha256 "$(uri tok-a "$T/st-a.so")" \
	--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
expect_fail "a wrong PIN: refused naming the token and CKR_PIN_INCORRECT" 1 \
	"token 'tok-a' (serial [0-9a-f]*): C_Login: PIN from KBUILD_SIGN_PIN rejected: CKR_PIN_INCORRECT; no other token is offered it"
[ "$(grep -c '^C_Login ' "$T/a.log")" -eq 1 ] && ! grep -q '^C_Login ' "$T/b.log" &&
	all_untouched && t_pass "a wrong PIN: one C_Login in all; the second token never offered it" ||
	t_fail "a wrong PIN: one C_Login in all" "a: $(grep -c '^C_Login ' "$T/a.log"), b: $(grep -c '^C_Login ' "$T/b.log")"

# Start-up at the same time: the C_Initialize of each token (a second of
# start-up each) overlap; one PIN source, so the second token's C_Login
# begins only after the first's has taken the PIN.
shim a 'SLOWTOKEN_INIT_MS=1000' 'SLOWTOKEN_LOGIN_MS=300' 'SLOWTOKEN_SERIAL=1'
shim b 'SLOWTOKEN_INIT_MS=2500' 'SLOWTOKEN_LOGIN_MS=300' 'SLOWTOKEN_SERIAL=1'
fresh
KBUILD_SIGN_PIN=$PIN run_ms sha256 "$(uri tok-a "$T/st-a.so")" --key "$(uri tok-b "$T/st-b.so")" \
	"$cert" "$T/w/mod001.ko"
[ "$rc" -eq 0 ] && same "$T/ref/mod001.ko" "$T/w/mod001.ko" &&
	overlap "$(span "$T/a.log" C_Initialize)" "$(span "$T/b.log" C_Initialize)" &&
	t_pass "two tokens start up at the same time (their C_Initialize overlap)" ||
	t_fail "two tokens start up at the same time" "status $rc" \
		"a: $(span "$T/a.log" C_Initialize), b: $(span "$T/b.log" C_Initialize)" "$(cat "$T/out")"
[ "$(grep -c '^C_Login ' "$T/a.log")" -eq 1 ] && [ "$(grep -c '^C_Login ' "$T/b.log")" -eq 1 ] &&
	before "$(span "$T/a.log" C_Login)" "$(span "$T/b.log" C_Login)" &&
	t_pass "one PIN source: read once; one C_Login each, the second after the first took it" ||
	t_fail "one PIN source: one C_Login each, the second after the first" \
		"a: $(span "$T/a.log" C_Login), b: $(span "$T/b.log" C_Login)"

# A PIN source each (tok-c has another PIN): each is read, and the logins
# run at the same time.
shim a 'SLOWTOKEN_INIT_MS=300' 'SLOWTOKEN_LOGIN_MS=1000' 'SLOWTOKEN_SERIAL=1'
shim c 'SLOWTOKEN_INIT_MS=1800' 'SLOWTOKEN_LOGIN_MS=1000' 'SLOWTOKEN_SERIAL=1'
fresh
run_ms sha256 "$(uri tok-a "$T/st-a.so")&pin-source=file:$T/a.pin" \
	--key "$(uri tok-c "$T/st-c.so")&pin-source=file:$T/c.pin" "$cert" "$T/w/mod002.ko"
[ "$rc" -eq 0 ] && same "$T/ref/mod002.ko" "$T/w/mod002.ko" &&
	overlap "$(span "$T/a.log" C_Login)" "$(span "$T/c.log" C_Login)" &&
	t_pass "a PIN source each: both read, the two C_Login at the same time" ||
	t_fail "a PIN source each: both read, the two C_Login at the same time" "status $rc" \
		"a: $(span "$T/a.log" C_Login), c: $(span "$T/c.log" C_Login)" "$(cat "$T/out")"

# A --key without a PIN source of its own gets <key>'s: here a pin-source
# whose PIN tok-c refuses, after tok-a took it.
shim a
shim c 'SLOWTOKEN_INIT_MS=1500'
fresh
run_ms sha256 "$(uri tok-a "$T/st-a.so")&pin-source=file:$T/a.pin" \
	--key "$(uri tok-c "$T/st-c.so")" "$cert" "$T/w/mod003.ko"
expect_fail "--key without a PIN source gets <key>'s (tok-c refuses it)" 1 \
	"token 'tok-c' (serial [0-9a-f]*): C_Login: PIN from pin-source file rejected: CKR_PIN_INCORRECT"
[ "$(grep -c '^C_Login ' "$T/a.log")" -eq 1 ] && [ "$(grep -c '^C_Login ' "$T/c.log")" -eq 1 ] &&
	same "$T/src/mod003.ko" "$T/w/mod003.ko" &&
	t_pass "a token refusing the PIN: one C_Login each, the module untouched" ||
	t_fail "a token refusing the PIN: one C_Login each, the module untouched"

# --- signatures spread over the tokens ------------------------------------

# sum_sig: the signatures the summary lines give for every token.
sum_sig() {
	sed -n "s/^modsign: token '[^']*' (serial [0-9a-f]*): \([0-9]*\) signatures*.*/\1/p" \
		"$T/out" | awk '{ s += $1 } END { print s + 0 }'
}

# bulk_two [OBJECT [CERT]]: a bulk run over tok-a and tok-b, each serialised
# on its own (20 ms a signature); $na and $nb: the signatures each made.
bulk_two() {
	shim a 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1'
	shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1'
	fresh
	KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a "$T/st-a.so" "${1:-rsa2048}")" \
		--key "$(uri tok-b "$T/st-b.so" "${1:-rsa2048}")" "${2:-$cert}" "$T"/w/*.ko
	na=$(grep -c '^C_Sign rv=CKR_OK' "$T/a.log")
	nb=$(grep -c '^C_Sign rv=CKR_OK' "$T/b.log")
}

# Two tokens, each serialised on its own (a card each): both sign, every
# module is sign-file's, and the summary's counts add up to the modules.
bulk_two
[ "$rc" -eq 0 ] && all_as_signfile && [ "$na" -gt 0 ] && [ "$nb" -gt 0 ] &&
	[ $((na + nb)) -eq "$N" ] && [ "$(sum_sig)" -eq "$N" ] &&
	t_pass "two serialised tokens: both sign, sign-file's bytes, the summary counts each" ||
	t_fail "two serialised tokens: both sign, sign-file's bytes, the summary counts each" \
		"status $rc, C_Sign a $na b $nb, summary $(sum_sig)" "$(cat "$T/out")"

# One token fails mid-run (CKR_DEVICE_ERROR from its 3rd C_Sign on): it is
# dropped with a warning naming it, the other signs the rest, none is lost.
shim a 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1' 'SLOWTOKEN_FAULT=C_Sign:3+:CKR_DEVICE_ERROR'
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a "$T/st-a.so")" \
	--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
[ "$rc" -eq 0 ] && all_as_signfile &&
	grep -q "token 'tok-b' (serial [0-9a-f]*) dropped: .*CKR_DEVICE_ERROR.*; the other tokens sign the rest" "$T/out" &&
	grep -q "^modsign: token 'tok-b' (serial [0-9a-f]*): [0-9]* signatures*, dropped" "$T/out" &&
	[ "$(sum_sig)" -eq "$N" ] &&
	t_pass "a token failing mid-run: dropped by name, the other signs the rest" ||
	t_fail "a token failing mid-run: dropped by name, the other signs the rest" "status $rc" \
		"$(cat "$T/out")"

# One token's signatures go bad mid-run (CKR_OK with a bit flipped, from its
# 2nd C_Sign on): none is written; the token is dropped by name, saying its
# signature did not verify, and the other signs every module again.
shim a 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1' 'SLOWTOKEN_FAULT=C_Sign:2+:CORRUPT'
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a "$T/st-a.so")" \
	--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
[ "$rc" -eq 0 ] && all_as_signfile && grep -q "fault=CORRUPT" "$T/b.log" &&
	grep -q "token 'tok-b' (serial [0-9a-f]*) dropped: token 'tok-b' (serial [0-9a-f]*): its signature did not verify with the certificate; the other tokens sign the rest" "$T/out" &&
	[ "$(sum_sig)" -eq "$N" ] &&
	t_pass "a token whose signatures go bad: dropped by name, none written, the other signs all" ||
	t_fail "a token whose signatures go bad: dropped by name, none written, the other signs all" \
		"status $rc" "$(cat "$T/out")"

# Both fail: the first is dropped, the last one's failure stops the run as
# with one token; every module is untouched or sign-file's, none half-done.
shim a 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1' 'SLOWTOKEN_FAULT=C_Sign:4+:CKR_DEVICE_ERROR'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_SERIAL=1' 'SLOWTOKEN_FAULT=C_Sign:3+:CKR_DEVICE_ERROR'
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a "$T/st-a.so")" \
	--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
whole=1
for m in "$T"/w/*.ko; do
	b=$(basename "$m")
	same "$T/src/$b" "$m" || same "$T/ref/$b" "$m" || whole=0
done
[ "$rc" -eq 1 ] && [ "$whole" -eq 1 ] && grep -q "dropped: .*CKR_DEVICE_ERROR" "$T/out" &&
	grep -q "signing failed: .*CKR_DEVICE_ERROR" "$T/out" && grep -q "not signed" "$T/out" &&
	t_pass "the last token failing: the run stops as with one; no module half-done" ||
	t_fail "the last token failing: the run stops as with one" "status $rc, whole $whole" \
		"$(cat "$T/out")"

# A token that hangs (its 2nd C_Sign sleeps 10 minutes) past
# --token-timeout: dropped, its signature made on the other; the run ends
# without waiting for it. The timeout leaves the healthy token's signatures
# room (under valgrind a SoftHSM2 signature takes a good part of a second).
tmo=3
[ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ] && tmo=20
shim a 'SLOWTOKEN_SIGN_MS=20'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_FAULT=C_Sign:2:HANG' 'SLOWTOKEN_HANG_MS=600000'
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b --token-timeout "$tmo" sha256 "$(uri tok-a "$T/st-a.so")" \
	--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
[ "$rc" -eq 0 ] && all_as_signfile &&
	grep -q "token 'tok-b' (serial [0-9a-f]*) dropped: no signature within $tmo s" "$T/out" &&
	[ "$(sum_sig)" -eq "$N" ] &&
	t_pass "a token hanging past --token-timeout: dropped, the other signs the rest" ||
	t_fail "a token hanging past --token-timeout: dropped, the other signs the rest" \
		"status $rc" "$(cat "$T/out")"

# --- EC: two tokens holding one P-256 key ---------------------------------

# ECDSA signatures differ each time: every module must verify instead.
bulk_two ec256 "$DATA/ec256.x509.der"
bad=""
for m in "$T"/w/*.ko; do
	openssl_verify "$m" "$T/src/$(basename "$m")" "$DATA/ec256.x509.der" ||
		bad="$bad $(basename "$m")"
done
[ "$rc" -eq 0 ] && [ -z "$bad" ] && [ "$na" -gt 0 ] && [ "$nb" -gt 0 ] &&
	[ $((na + nb)) -eq "$N" ] &&
	t_pass "EC P-256 on two tokens: every module verifies (openssl cms), both tokens signed" ||
	t_fail "EC P-256 on two tokens: every module verifies, both tokens signed" \
		"status $rc, not verified:$bad, C_Sign a $na b $nb" "$(cat "$T/out")"

# --- a token whose PIN is locked or on its last try -----------------------

# Refused by name before any PIN is offered: no C_Login on either token.
for flag in LOCKED FINAL_TRY; do
	shim a
	shim b 'SLOWTOKEN_INIT_MS=1500' "SLOWTOKEN_PIN_FLAGS=$flag"
	fresh
	KBUILD_SIGN_PIN=$PIN run_ms -b sha256 "$(uri tok-a "$T/st-a.so")" \
		--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
	expect_fail "second token CKF_USER_PIN_$flag: refused by name" 1 \
		"token 'tok-b' (serial [0-9a-f]*) (key pkcs11:token=tok-b;.*CKF_USER_PIN_$flag.*refused; no token is offered a PIN"
	[ "$(calls C_Login "$T/a.log")" -eq 0 ] && [ "$(calls C_Login "$T/b.log")" -eq 0 ] &&
		[ "$(calls C_GetTokenInfo "$T/b.log")" -gt 0 ] && all_untouched &&
		t_pass "second token CKF_USER_PIN_$flag: no C_Login on any token, every module untouched" ||
		t_fail "second token CKF_USER_PIN_$flag: no C_Login on any token, every module untouched" \
			"C_Login a $(calls C_Login "$T/a.log") b $(calls C_Login "$T/b.log")"
done
# --pin-final-try: the last try is the user's to spend.
shim a
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_PIN_FLAGS=FINAL_TRY'
fresh
KBUILD_SIGN_PIN=$PIN run_ms -b --pin-final-try sha256 "$(uri tok-a "$T/st-a.so")" \
	--key "$(uri tok-b "$T/st-b.so")" "$cert" "$T"/w/*.ko
[ "$rc" -eq 0 ] && all_as_signfile && [ "$(calls C_Login "$T/b.log")" -eq 1 ] &&
	t_pass "--pin-final-try: a token on its last try logs in once and signs" ||
	t_fail "--pin-final-try: a token on its last try logs in once and signs" "status $rc" \
		"$(cat "$T/out")"

# --- the agent over several tokens (agent --key) --------------------------

RUN=$T/run
mkdir -m 0700 "$RUN"
export XDG_RUNTIME_DIR=$RUN
# The build under the agent: one modsign process per module, four at a time
# (as make -j4 modules_install with modsign as sign-file); each asks the agent.
{
	echo '#!/bin/sh'
	echo "touch '$T/ran'"
	echo "printf '%s\\0' '$T'/w/*.ko | xargs -0 -n 1 -P 4 '$MODSIGN' sha256 '$(uri tok-a "$T/st-a.so")' '$cert'"
} >"$T/per-module.sh"
chmod +x "$T/per-module.sh"
# audit_by NAME: the audit log's signatures made by token NAME.
audit_by() {
	grep '"event":"sign"' "$T/audit.log" |
		grep -c "\"token\":\"token '$1' (serial [0-9a-f]*)\",\"outcome\":\"signed\""
}

shim a 'SLOWTOKEN_SIGN_MS=300' 'SLOWTOKEN_SERIAL=1'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=300' 'SLOWTOKEN_SERIAL=1'
fresh
rm -f "$T/audit.log" "$T/ran"
KBUILD_SIGN_PIN=$PIN run_ms agent --log "$T/audit.log" --key "$(uri tok-b "$T/st-b.so")" \
	"$(uri tok-a "$T/st-a.so")" -- "$T/per-module.sh"
na=$(grep -c '^C_Sign rv=CKR_OK' "$T/a.log")
nb=$(grep -c '^C_Sign rv=CKR_OK' "$T/b.log")
[ "$rc" -eq 0 ] && all_as_signfile &&
	t_pass "agent --key, a modsign per module: every module sign-file's (one token's) bytes" ||
	t_fail "agent --key, a modsign per module: every module sign-file's bytes" "status $rc" \
		"$(cat "$T/out")"
[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] && [ $((na + nb)) -eq "$N" ] &&
	[ "$(audit_by tok-a)" -eq "$na" ] && [ "$(audit_by tok-b)" -eq "$nb" ] &&
	grep -q "agent: stopped (.*): $N signed, .*; token 'tok-a' (serial [0-9a-f]*): $na signatures*, token 'tok-b' (serial [0-9a-f]*): $nb signatures*" "$T/out" &&
	t_pass "agent --key: both tokens signed; the audit log and the stop line name the token of each" ||
	t_fail "agent --key: both tokens signed; audit and stop line name the token" \
		"C_Sign a $na b $nb, audit a $(audit_by tok-a) b $(audit_by tok-b)" "$(cat "$T/out")"
[ "$(calls C_Login "$T/a.log")" -eq 1 ] && [ "$(calls C_Login "$T/b.log")" -eq 1 ] &&
	t_pass "agent --key: one C_Login per token for the whole build" ||
	t_fail "agent --key: one C_Login per token" \
		"a $(calls C_Login "$T/a.log"), b $(calls C_Login "$T/b.log")"

# A token holding another key: refused before the agent listens (the
# command never runs); without a certificate it is compared with <key>'s.
fresh
rm -f "$T/ran"
KBUILD_SIGN_PIN=$PIN run_ms agent --key "$(uri tok-x)" "$(uri tok-a)" -- "$T/per-module.sh"
expect_fail "agent --key, a token of another key: refused by name" 1 \
	"token 'tok-x' (serial [0-9a-f]*) (key pkcs11:token=tok-x;.*) holds another key than token 'tok-a'"
[ ! -e "$T/ran" ] && grep -q "agent: not started" "$T/out" && [ -z "$(ls -A "$RUN")" ] &&
	all_untouched &&
	t_pass "agent --key, a token of another key: nothing listened, the command never ran" ||
	t_fail "agent --key, a token of another key: nothing listened, the command never ran" \
		"$(ls -A "$RUN")" "$(cat "$T/out")"
run_ms agent --key "$(uri tok-a)" "$DATA/rsa2048.key.pem" -- true
expect_fail "agent --key with a key file as <key>: usage error" 2 "<key> must be a pkcs11: URI"

# One token failing mid-run (CKR_DEVICE_ERROR from its 2nd C_Sign on): logged
# and dropped; the other signs the rest and no client sees a failure.
shim a 'SLOWTOKEN_SIGN_MS=300' 'SLOWTOKEN_SERIAL=1'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=300' 'SLOWTOKEN_SERIAL=1' \
	'SLOWTOKEN_FAULT=C_Sign:2+:CKR_DEVICE_ERROR'
fresh
rm -f "$T/audit.log"
KBUILD_SIGN_PIN=$PIN run_ms agent --log "$T/audit.log" --key "$(uri tok-b "$T/st-b.so")" \
	"$(uri tok-a "$T/st-a.so")" -- "$T/per-module.sh"
[ "$rc" -eq 0 ] && all_as_signfile &&
	grep -q "agent: token 'tok-b' (serial [0-9a-f]*) dropped: .*CKR_DEVICE_ERROR.*; the other tokens sign on" "$T/out" &&
	grep -q '"event":"drop".*tok-b.*CKR_DEVICE_ERROR' "$T/audit.log" &&
	grep -q "agent: stopped (.*): $N signed, 0 failed.*token 'tok-b' (serial [0-9a-f]*): [0-9]* signatures*, dropped" "$T/out" &&
	[ $(($(audit_by tok-a) + $(audit_by tok-b))) -eq "$N" ] &&
	t_pass "agent --key, a token failing mid-run: dropped and logged, the other signs every module" ||
	t_fail "agent --key, a token failing mid-run: dropped, the other signs every module" \
		"status $rc" "$(cat "$T/out")" "$(cat "$T/audit.log")"

# Both tokens failing for good: the first to fail is dropped, and when the
# last one's new session does not help either, the agent stops, naming it,
# instead of failing each module; every module untouched or signed.
shim a 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_FAULT=C_Sign:3+:CKR_DEVICE_ERROR'
shim b 'SLOWTOKEN_SIGN_MS=20' 'SLOWTOKEN_FAULT=C_Sign:2+:CKR_DEVICE_ERROR'
fresh
rm -f "$T/audit.log"
KBUILD_SIGN_PIN=$PIN run_ms agent --log "$T/audit.log" --key "$(uri tok-b "$T/st-b.so")" \
	"$(uri tok-a "$T/st-a.so")" -- "$T/per-module.sh"
torn=""
for m in "$T"/w/*.ko; do
	same "$T/ref/$(basename "$m")" "$m" || same "$T/src/$(basename "$m")" "$m" || torn="$torn $m"
done
if [ "$rc" -ne 0 ] && [ -z "$torn" ] &&
    grep -q "agent: token 'tok-[ab]' (serial [0-9a-f]*) dropped: .*CKR_DEVICE_ERROR" "$T/out" &&
    grep -q "agent: stopped (token 'tok-[ab]' (serial [0-9a-f]*) lost: C_Sign: CKR_DEVICE_ERROR" "$T/out" &&
    grep -q '"event":"stop".*lost: C_Sign: CKR_DEVICE_ERROR' "$T/audit.log"; then
	t_pass "agent --key, both tokens failing: one dropped, then the agent stops naming the last; none torn"
else
	t_fail "agent --key, both tokens failing: one dropped, then the agent stops naming the last; none torn" \
		"status $rc, torn:$torn" "$(cat "$T/out")"
fi

# A token hanging past --token-timeout (its 2nd C_Sign sleeps 10 minutes):
# dropped, its signature made on the other; the agent ends with the
# command, leaving the thread inside the hung token (no C_Finalize on it)
# instead of waiting for it. `timeout` only bounds a failure.
shim a 'SLOWTOKEN_SIGN_MS=300' 'SLOWTOKEN_SERIAL=1'
shim b 'SLOWTOKEN_INIT_MS=1500' 'SLOWTOKEN_SIGN_MS=300' 'SLOWTOKEN_SERIAL=1' \
	'SLOWTOKEN_FAULT=C_Sign:2:HANG' 'SLOWTOKEN_HANG_MS=600000'
fresh
rm -f "$T/audit.log"
KBUILD_SIGN_PIN=$PIN timeout 300 "$MODSIGN" agent --token-timeout "$tmo" --log "$T/audit.log" \
	--key "$(uri tok-b "$T/st-b.so")" "$(uri tok-a "$T/st-a.so")" -- "$T/per-module.sh" \
	>"$T/out" 2>&1
rc=$?
cat "$T/out" >>"${MS_LOG:-/dev/null}"
[ "$rc" -eq 0 ] && all_as_signfile &&
	grep -q "agent: token 'tok-b' (serial [0-9a-f]*) dropped: no signature within $tmo s" "$T/out" &&
	grep -q "agent: stopped (the command exited with status 0): $N signed, 0 failed.*token 'tok-b' (serial [0-9a-f]*): [0-9]* signatures*, dropped" "$T/out" &&
	[ "$(calls C_Finalize "$T/a.log")" -eq 0 ] && [ "$(calls C_Finalize "$T/b.log")" -eq 0 ] &&
	t_pass "agent --key, a token hanging: dropped, every module signed, the agent ends with the command" ||
	t_fail "agent --key, a token hanging: dropped, every module signed, the agent ends" \
		"status $rc, C_Finalize a $(calls C_Finalize "$T/a.log") b $(calls C_Finalize "$T/b.log")" \
		"$(cat "$T/out")"

t_done
