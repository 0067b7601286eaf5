#!/bin/bash
# No signature is written unchecked: whatever signed it, it is verified with
# the certificate's key before a module is written. A token with a fault is
# played by the shim (SLOWTOKEN_FAULT=C_Sign:K:CORRUPT: CKR_OK with one bit
# of the real signature flipped), RSA and EC; a key file and a token that
# sign with another key than the certificate's are refused at start as
# before (the pair check), so the check after C_Sign is the one that catches
# a token whose signatures go bad mid-run.
#
# Proves: a corrupted signature is never written (the module stays byte for
# byte the original, no temp file is left), the run fails with a message
# naming the token by label and serial and saying that its signature did not
# verify with the certificate; in bulk mode the modules signed before it are
# sign-file's bytes, the rest untouched, and --skip-signed finishes the job;
# with every third signature corrupted no bad module is written.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
N=10
cert=$DATA/rsa2048.x509.der
uri=$(slow_key_uri rsa2048)
LOG=$T/calls.log
"$TOP/tests/lib/mkmodule.sh" "$T/src" $N 2 >/dev/null
mkdir "$T/ref"
for m in "$T"/src/*.ko; do
	cp "$m" "$T/ref/"
	"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$cert" "$T/ref/$(basename "$m")"
done
# shellcheck source=tests/lib/workset.sh
. "$TOP/tests/lib/workset.sh"
serial=$(softhsm2-util --show-slots 2>/dev/null | awk '/Serial number:/ { s = $3 } /Label:.*modsign-test/ { print s; exit }')

no_temp_files() {
	[ -z "$(find "$T/w" -name '.*' -type f)" ]
}

named_token='token .modsign-test. (serial '"$serial"'): its signature did not verify with the certificate'

# One module, the token's first signature corrupted.
fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_Sign:1:CORRUPT run_ms sha256 "$uri" "$cert" "$T/w/mod000.ko"
count_state
[ "$rc" -eq 1 ] && [ "$orig" -eq $N ] && no_temp_files && [ "$(n_calls C_Sign)" -ge 1 ] &&
	grep -q "mod000.ko: signing failed: $named_token" "$T/out" &&
	t_pass "one module, corrupted signature: exit 1, module untouched, the token named" ||
	t_fail "one module, corrupted signature: exit 1, module untouched, the token named" \
		"exit $rc, original $orig of $N, serial '$serial'" "$(cat "$T/out")"
grep "fault=CORRUPT" "$LOG" >/dev/null &&
	t_pass "the shim corrupted that signature (its log says so)" ||
	t_fail "the shim corrupted that signature (its log says so)" "$(cat "$LOG")"

# The same module, the same token without the fault: signed, sign-file's bytes.
rm -f "$LOG"
run_ms sha256 "$uri" "$cert" "$T/w/mod000.ko"
[ "$rc" -eq 0 ] && same "$T/w/mod000.ko" "$T/ref/mod000.ko" &&
	t_pass "control: the same run without the fault writes sign-file's bytes" ||
	t_fail "control: the same run without the fault writes sign-file's bytes" "exit $rc" \
		"$(cat "$T/out")"

# Bulk, one lane, the 4th signature corrupted: the run stops there; three
# modules signed, the rest untouched, the token named; --skip-signed finishes.
fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_Sign:4:CORRUPT run_ms -j 1 -r "$T/w" sha256 "$uri" "$cert"
count_state
[ "$rc" -eq 1 ] && [ -z "$broken" ] && [ "$signed" -eq 3 ] && [ "$orig" -eq $((N - 3)) ] &&
	no_temp_files && grep -q "signing failed: $named_token" "$T/out" &&
	grep -q "3 signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), 7 not signed, of $N" "$T/out" &&
	t_pass "bulk -j 1, 4th signature corrupted: 3 signed, 7 untouched, the token named" ||
	t_fail "bulk -j 1, 4th signature corrupted: 3 signed, 7 untouched, the token named" \
		"exit $rc, signed $signed, original $orig, broken:$broken" "$(tail -n 6 "$T/out")"
run_ms --skip-signed -r "$T/w" sha256 "$uri" "$cert"
count_state
[ "$rc" -eq 0 ] && [ "$signed" -eq $N ] &&
	t_pass "--skip-signed after it: every module sign-file's bytes" ||
	t_fail "--skip-signed after it: every module sign-file's bytes" "exit $rc, signed $signed" \
		"$(tail -n 4 "$T/out")"

# Bulk over two lanes, every third signature from the 2nd on corrupted: no
# module is ever written with a bad signature, whichever lane met it.
fresh
SLOWTOKEN_LOG=$LOG SLOWTOKEN_FAULT=C_Sign:2/3:CORRUPT run_ms -j 2 -r "$T/w" sha256 "$uri" "$cert"
count_state
[ "$rc" -eq 1 ] && [ -z "$broken" ] && [ "$signed" -lt $N ] && no_temp_files &&
	[ "$(grep -c 'fault=CORRUPT' "$LOG")" -ge 1 ] && grep -q "$named_token" "$T/out" &&
	t_pass "bulk -j 2, one signature in 3 corrupted: none written, $signed signed, the rest untouched" ||
	t_fail "bulk -j 2, one signature in 3 corrupted: none written" \
		"exit $rc, signed $signed, original $orig, broken:$broken" "$(tail -n 6 "$T/out")"

# EC P-256: r||s with a bit flipped in s is caught the same way.
fresh
SLOWTOKEN_FAULT=C_Sign:1:CORRUPT run_ms sha256 "$(slow_key_uri ec256)" "$DATA/ec256.x509.der" \
	"$T/w/mod001.ko"
same "$T/w/mod001.ko" "$T/src/mod001.ko" && [ "$rc" -eq 1 ] && no_temp_files &&
	grep -q "mod001.ko: signing failed: $named_token" "$T/out" &&
	t_pass "EC P-256, corrupted signature: exit 1, module untouched, the token named" ||
	t_fail "EC P-256, corrupted signature: exit 1, module untouched, the token named" \
		"exit $rc" "$(cat "$T/out")"
run_ms sha384 "$(slow_key_uri ec256)" "$DATA/ec256.x509.der" "$T/w/mod001.ko"
[ "$rc" -eq 0 ] && openssl_verify "$T/w/mod001.ko" "$T/src/mod001.ko" "$DATA/ec256.x509.pem" &&
	t_pass "control: EC P-256 without the fault signs, and openssl verifies it" ||
	t_fail "control: EC P-256 without the fault signs, and openssl verifies it" "exit $rc" \
		"$(cat "$T/out")"
t_done
