#!/bin/bash
# Which token gets a C_Login, and with what. Counted in tests/slowtoken's
# log (SoftHSM2 behind it), which names the slot of each login.
# An empty PIN, or one shorter than the token's
# ulMinPinLen, is refused without a C_Login: the token counts no wrong try.
# A URI without token= picks, among the tokens that match, the one
# that holds the object (p11-kit's trust module, registered on every Debian
# system, matches any such URI); only that token is logged in to.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
t_registry_stock
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 >/dev/null
mod=$T/src/mod000.ko
cert=$DATA/rsa2048.x509.der
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
st="module-path=$SHIM"
st_uri=$(slow_key_uri rsa2048)

# logins LOG: the number of C_Login calls slowtoken logged.
logins() {
	grep -c "^C_Login " "$1" 2>/dev/null
}

# The token's flags, as pkcs11-tool shows them.
token_flags() {
	pkcs11-tool --module "$SOFTHSM" -L 2>/dev/null | grep -A 8 "modsign-test" | grep -i "flags"
}
flags_before=$(token_flags)

n=0
for how in "KBUILD_SIGN_PIN=" "KBUILD_SIGN_PIN=abc" "pin-value=" "pin-source=file:$T/empty.pin"; do
	n=$((n + 1))
	: >"$T/empty.pin"
	cp "$mod" "$T/m.ko"
	export SLOWTOKEN_LOG=$T/st$n.log
	case $how in
	KBUILD_SIGN_PIN=*) env "$how" "$MODSIGN" sha256 "$st_uri" "$cert" "$T/m.ko" >"$T/out" 2>&1 ;;
	*) "$MODSIGN" sha256 "$st_uri&$how" "$cert" "$T/m.ko" >"$T/out" 2>&1 ;;
	esac
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	expect_fail "$how: refused" 1 "C_Login: the PIN from .* is \(empty\|shorter than token \"modsign-test\" allows (ulMinPinLen 4, ulMaxPinLen 255 bytes)\)"
	if [ "$(logins "$T/st$n.log")" = 0 ]; then
		t_pass "$how: no C_Login"
	else
		t_fail "$how: no C_Login" "saw $(logins "$T/st$n.log")"
	fi
	same "$mod" "$T/m.ko" && t_pass "$how: module untouched" || t_fail "$how: module untouched"
done
if [ "$(token_flags)" = "$flags_before" ]; then
	t_pass "the token counted no wrong try"
else
	t_fail "the token counted no wrong try" "before: $flags_before" "after: $(token_flags)"
fi

# A PIN longer than ulMaxPinLen (SoftHSM2: 255) is never
# sent either (openCryptoki counts one as a wrong try): the limits and the
# PIN's source are named, the PIN is not.
long_pin=$(printf 'L%.0s' $(seq 256))
: >"$T/st-long.log"
cp "$mod" "$T/m.ko"
KBUILD_SIGN_PIN=$long_pin SLOWTOKEN_LOG=$T/st-long.log run_ms sha256 "$st_uri" "$cert" "$T/m.ko"
expect_fail "PIN over ulMaxPinLen: refused, limits and source named" 1 \
	"C_Login: the PIN from KBUILD_SIGN_PIN is longer than token \"modsign-test\" allows (ulMinPinLen 4, ulMaxPinLen 255 bytes); not offered to it"
if [ "$(logins "$T/st-long.log")" = 0 ] && same "$mod" "$T/m.ko" && ! grep -q LLLL "$T/out"; then
	t_pass "PIN over ulMaxPinLen: no C_Login, module untouched, PIN not shown"
else
	t_fail "PIN over ulMaxPinLen: no C_Login, module untouched, PIN not shown" \
		"$(logins "$T/st-long.log") C_Login" "$(cat "$T/out")"
fi

# C_Login answering CKR_PIN_LOCKED refused no PIN: the
# message says the token is locked and how it is unlocked.
: >"$T/st-lock.log"
cp "$mod" "$T/m.ko"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_FAULT=C_Login:1:CKR_PIN_LOCKED SLOWTOKEN_LOG=$T/st-lock.log \
	run_ms sha256 "$st_uri" "$cert" "$T/m.ko"
expect_fail "C_Login CKR_PIN_LOCKED: the token is locked, the SO resets the PIN" 1 \
	"C_Login: CKR_PIN_LOCKED: token \"modsign-test\" is locked: .*security officer must reset the user PIN"
if ! grep -q "rejected" "$T/out" && [ "$(logins "$T/st-lock.log")" = 1 ] &&
	same "$mod" "$T/m.ko"; then
	t_pass "C_Login CKR_PIN_LOCKED: not called rejected, one C_Login, module untouched"
else
	t_fail "C_Login CKR_PIN_LOCKED: not called rejected, one C_Login, module untouched" \
		"$(logins "$T/st-lock.log") C_Login" "$(cat "$T/out")"
fi
# The token's flags say locked: no C_Login, and the same way out.
: >"$T/st-lock.log"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_PIN_FLAGS=LOCKED SLOWTOKEN_LOG=$T/st-lock.log \
	run_ms sha256 "$st_uri" "$cert" "$T/m.ko"
expect_fail "CKF_USER_PIN_LOCKED: refused, the SO resets the PIN" 1 \
	"CKF_USER_PIN_LOCKED); no login tried; the security officer must reset the user PIN"
[ "$(logins "$T/st-lock.log")" = 0 ] && t_pass "CKF_USER_PIN_LOCKED: no C_Login" ||
	t_fail "CKF_USER_PIN_LOCKED: no C_Login" "$(logins "$T/st-lock.log") C_Login"

# A token on its last try is refused with no C_Login, and
# the message names the one option that spends that try.
: >"$T/st-final.log"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_PIN_FLAGS=FINAL_TRY SLOWTOKEN_LOG=$T/st-final.log \
	run_ms sha256 "$st_uri" "$cert" "$T/m.ko"
expect_fail "CKF_USER_PIN_FINAL_TRY: refused, --pin-final-try named" 1 \
	"(CKF_USER_PIN_FINAL_TRY); no login tried; --pin-final-try spends that last try"
[ "$(logins "$T/st-final.log")" = 0 ] && same "$mod" "$T/m.ko" &&
	t_pass "CKF_USER_PIN_FINAL_TRY: no C_Login, module untouched" ||
	t_fail "CKF_USER_PIN_FINAL_TRY: no C_Login, module untouched" \
		"$(logins "$T/st-final.log") C_Login"
: >"$T/st-final.log"
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_PIN_FLAGS=FINAL_TRY SLOWTOKEN_LOG=$T/st-final.log \
	run_ms --pin-final-try sha256 "$st_uri" "$cert" "$T/m.ko"
[ "$rc" -eq 0 ] && [ "$(logins "$T/st-final.log")" = 1 ] &&
	t_pass "CKF_USER_PIN_FINAL_TRY with --pin-final-try: signed with one C_Login" ||
	t_fail "CKF_USER_PIN_FINAL_TRY with --pin-final-try: signed with one C_Login" "status $rc" \
		"$(cat "$T/out")"

# The right PIN: one C_Login, and the module is signed.
export SLOWTOKEN_LOG=$T/st-ok.log
cp "$mod" "$T/m.ko"
KBUILD_SIGN_PIN=$PIN run_ms sha256 "$st_uri" "$cert" "$T/m.ko"
if [ "$rc" -eq 0 ] && [ "$(logins "$T/st-ok.log")" = 1 ]; then
	t_pass "right PIN: signed with one C_Login"
else
	t_fail "right PIN: signed with one C_Login" "status $rc, $(logins "$T/st-ok.log") C_Login" \
		"$(cat "$T/out")"
fi
unset SLOWTOKEN_LOG

# The token a URI without token= picks. A second token, "other", with its
# own PIN and none of our keys.
softhsm2-util --init-token --free --label other --so-pin 5678 --pin "$WRONG_PIN" >/dev/null
# slot_of LABEL: the token's slot id, as SoftHSM2 numbers it.
slot_of() {
	softhsm2-util --show-slots | awk -v l="$1" '/^Slot /{s=$2} $1 == "Label:" && $2 == l {print s}'
}
slot_a=$(slot_of modsign-test)
slot_b=$(slot_of other)

# signed_ok NAME: the last run signed $T/m.ko as sign-file signs $mod.
signed_ok() {
	if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref.ko"; then
		t_pass "$1"
	else
		t_fail "$1" "status $rc" "$(cat "$T/out")"
	fi
}
"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$cert" "$mod" "$T/ref.ko"

# Stock Debian: SoftHSM2, OpenSC and p11-kit's trust module registered.
if grep -qs "p11-kit-trust" /usr/share/p11-kit/modules/*.module; then
	t_pass "p11-kit's trust module is registered, as on stock Debian"
else
	t_fail "p11-kit's trust module is registered, as on stock Debian" \
		"install p11-kit and p11-kit-modules (scripts/install-deps.sh)"
fi
export KBUILD_SIGN_PIN=$PIN
for key in "pkcs11:object=rsa2048;type=private" "pkcs11:id=%01;type=private" "pkcs11:id=%01"; do
	cp "$mod" "$T/m.ko"
	run_ms sha256 "$key" "$cert" "$T/m.ko"
	signed_ok "registry, two tokens and the trust store: $key"
done
cp "$mod" "$T/m.ko"
run_ms -b sha256 "pkcs11:object=rsa2048;type=private" "pkcs11:object=rsa2048;type=cert" "$T/m.ko"
signed_ok "registry: token-less key and certificate URIs, bulk"
run_ms verify -c "pkcs11:object=rsa2048;type=cert" "$T/m.ko"
expect_fail "registry: verify -c with a token-less certificate URI" 0 "^OK "

# A registry of its own (a private mount namespace over p11-kit's module
# directory): the trust module and SoftHSM2 behind tests/slowtoken, whose
# log names the slot of every C_Login.
mkdir -p "$T/modules" "$T/etc-pkcs11"
cp /usr/share/p11-kit/modules/p11-kit-trust.module "$T/modules/" 2>/dev/null
printf 'module: %s\n' "$SHIM" >"$T/modules/slowtoken.module"
# in_ns CMD...: CMD with $T/modules as p11-kit's only module directory.
in_ns() {
	unshare --mount --propagation private sh -c '
		mount --bind "$1" /usr/share/p11-kit/modules || exit 99
		if [ -d /etc/pkcs11 ]; then mount --bind "$2" /etc/pkcs11 || exit 99; fi
		shift 2
		exec "$@"' sh "$T/modules" "$T/etc-pkcs11" "$@"
}
if in_ns true 2>/dev/null; then
	cp "$mod" "$T/m.ko"
	: >"$T/st.log"
	SLOWTOKEN_LOG=$T/st.log in_ns "$MODSIGN_REAL" sha256 "pkcs11:object=rsa2048;type=private" \
		"$cert" "$T/m.ko" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	signed_ok "own registry (trust + two tokens): signed"
	logins=$(grep -c '^C_Login ' "$T/st.log")
	a=$(grep -c "^C_Login .* slot=$slot_a\b" "$T/st.log")
	if [ "$logins" = 1 ] && [ "$a" = 1 ]; then
		t_pass "own registry: one C_Login, on the token that holds the key"
	else
		t_fail "own registry: one C_Login, on the token that holds the key" \
			"$logins C_Login, $a on slot $slot_a" "$(grep -E '^C_(Login|OpenSession) ' "$T/st.log")"
	fi
	if grep -q "^C_OpenSession .* slot=$slot_b\b" "$T/st.log" &&
		! grep -q "^C_Login .* slot=$slot_b\b" "$T/st.log"; then
		t_pass "own registry: the other token was searched, never logged in to"
	else
		t_fail "own registry: the other token was searched, never logged in to" \
			"$(grep -E '^C_(Login|OpenSession) ' "$T/st.log")"
	fi
else
	t_skip "own registry" "no private mount namespace here (unshare --mount)"
fi

# A true tie: the key on both tokens. An error listing both, no C_Login.
softhsm2-util --import "$DATA/rsa2048.key.pem" --token other --label rsa2048 --id 01 \
	--pin "$WRONG_PIN" >/dev/null
: >"$T/st.log"
cp "$mod" "$T/m.ko"
SLOWTOKEN_LOG=$T/st.log run_ms sha256 "pkcs11:object=rsa2048;type=private?$st" "$cert" "$T/m.ko"
expect_fail "two tokens show the key: an error" 1 "2 tokens match .* and 2 show the private key"
if grep -q 'token="modsign-test"' "$T/out" && grep -q 'token="other"' "$T/out"; then
	t_pass "two tokens show the key: both listed"
else
	t_fail "two tokens show the key: both listed" "$(cat "$T/out")"
fi
if [ "$(grep -c '^C_Login ' "$T/st.log")" = 0 ] && same "$mod" "$T/m.ko"; then
	t_pass "two tokens show the key: no C_Login, module untouched"
else
	t_fail "two tokens show the key: no C_Login, module untouched"
fi
# token= breaks the tie, as the message says.
cp "$mod" "$T/m.ko"
run_ms sha256 "pkcs11:token=modsign-test;object=rsa2048;type=private" "$cert" "$T/m.ko"
signed_ok "token= picks one of two tokens that hold the key"
unset KBUILD_SIGN_PIN
t_done
