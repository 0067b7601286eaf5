#!/bin/bash
# -s judges a ready-made PKCS#7 with verify's parser and module rules: what
# `modsign verify` FAILs once sign-file -s has appended it (sign-file checks
# nothing), `modsign -s` refuses before touching the module, with the same
# reason. What verify takes, -s appends.
. "$(dirname "$0")/../lib/common.sh"
t_setup
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 >/dev/null
mod=$T/src/mod000.ko
cert=$DATA/rsa2048.x509.der
mkdir "$T/p7"

# make NAME OPENSSL-CMS-ARGS...: a PKCS#7 over the module, signed by rsa2048.
make_p7() {
	local name=$1
	shift
	openssl cms -sign -binary -in "$mod" -signer "$DATA/rsa2048.x509.pem" \
		-inkey "$DATA/rsa2048.key.pem" -outform DER -out "$T/p7/$name" "$@" 2>"$T/ossl.err" ||
		t_fail "openssl makes $name" "$(cat "$T/ossl.err")"
}

# Refused by both, each for its own reason.
make_p7 authattrs -nocerts -md sha256
make_p7 attached -nocerts -noattr -nodetach -md sha256
make_p7 content-type -nocerts -noattr -md sha256 -econtent_type 1.2.840.113549.1.7.2
make_p7 indirect -nocerts -noattr -md sha256 -econtent_type 1.3.6.1.4.1.311.2.1.4
make_p7 md5 -nocerts -noattr -md md5
make_p7 pss -nocerts -noattr -md sha256 -keyopt rsa_padding_mode:pss
make_p7 ber -nocerts -noattr -md sha256 -stream
make_p7 pem -nocerts -noattr -md sha256 -outform PEM
openssl cms -data_create -binary -in "$mod" -outform DER -out "$T/p7/not-signed-data"
"$SIGNFILE" -d sha256 "$DATA/rsa2048.key.pem" "$cert" "$mod"
mv "$mod.p7s" "$T/p7/good"
{ cat "$T/p7/good"; printf '\0'; } >"$T/p7/trailing-byte"
head -c 200 "$T/p7/good" >"$T/p7/truncated"

for p in authattrs attached content-type indirect md5 pss ber pem not-signed-data \
	trailing-byte truncated; do
	# What verify says of a module carrying it.
	cp "$mod" "$T/carrier.ko"
	"$SIGNFILE" -s "$T/p7/$p" sha256 "$cert" "$T/carrier.ko"
	"$MODSIGN" verify -c "$cert" "$T/carrier.ko" >"$T/verify.out" 2>&1
	cat "$T/verify.out" >>"$MS_LOG"
	why=$(sed -n 's/^FAIL [^:]*: PKCS#7: //p' "$T/verify.out")
	if [ -z "$why" ]; then
		t_fail "$p: verify FAILs it for its PKCS#7" "$(cat "$T/verify.out")"
		continue
	fi
	t_pass "$p: verify FAILs it ($why)"
	# -s refuses it with that reason, and the module is untouched.
	cp "$mod" "$T/m.ko"
	run_ms -s "$T/p7/$p" sha256 "$cert" "$T/m.ko"
	if [ "$rc" -eq 1 ] && grep -qxF "modsign: $T/p7/$p: PKCS#7: $why; nothing appended" "$T/out"; then
		t_pass "$p: -s refuses it with verify's reason"
	else
		t_fail "$p: -s refuses it with verify's reason" "status $rc, want 1 and: $why" \
			"$(cat "$T/out")"
	fi
	t_check "$p: module untouched" same "$mod" "$T/m.ko"
	run_ms -s "$T/p7/$p" sha256 "$cert" "$T/m.ko" "$T/dest.ko"
	t_check "$p: no dest written" test "$rc" -eq 1 -a ! -e "$T/dest.ko"
done

# An empty file: verify sees no PKCS#7 at all (sig_len 0), -s says so.
: >"$T/p7/empty"
cp "$mod" "$T/m.ko"
run_ms -s "$T/p7/empty" sha256 "$cert" "$T/m.ko"
expect_fail "empty: -s refuses it" 1 "empty: PKCS#7: empty PKCS#7; nothing appended"
t_check "empty: module untouched" same "$mod" "$T/m.ko"

# What verify takes, -s appends: sign-file's own output and two signers.
openssl cms -sign -binary -in "$mod" -outform DER -out "$T/p7/two-signers" -nocerts -noattr \
	-signer "$DATA/rsa2048.x509.pem" -inkey "$DATA/rsa2048.key.pem" \
	-signer "$DATA/ec256.x509.pem" -inkey "$DATA/ec256.key.pem" -md sha256
for p in good two-signers; do
	cp "$mod" "$T/m.ko" && cp "$mod" "$T/ref.ko"
	"$SIGNFILE" -s "$T/p7/$p" sha256 "$cert" "$T/ref.ko"
	t_check "$p: -s appends it" "$MODSIGN" -s "$T/p7/$p" sha256 "$cert" "$T/m.ko"
	t_check "$p: as sign-file -s does" same "$T/ref.ko" "$T/m.ko"
	t_check "$p: verify takes it" "$MODSIGN" verify -c "$cert" -c "$DATA/ec256.x509.der" "$T/m.ko"
done
if ls -A "$T" | grep -q "signed~\|\.tmp"; then
	t_fail "nothing left behind" "$(ls -A "$T")"
else
	t_pass "nothing left behind"
fi
t_done
