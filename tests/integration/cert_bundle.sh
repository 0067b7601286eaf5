#!/bin/bash
# A PEM file holding several certificates (the kernel's trusted-keys bundle):
# verify -c uses every one of them, --skip-signed leaves a module signed by
# any of them alone, and signing uses the first, as sign-file does.
. "$(dirname "$0")/../lib/common.sh"
t_setup

"$TOP/tests/lib/mkmodule.sh" "$T/src" 4 >/dev/null
cat "$DATA/rsa2048.x509.pem" "$DATA/ec256.x509.pem" "$DATA/rsa4096.x509.pem" >"$T/bundle.pem"

# sign NAME KEY: a copy of mod000.ko signed with KEY, in $T/NAME.ko.
sign() {
	cp "$T/src/mod000.ko" "$T/$1.ko"
	"$MODSIGN" sha256 "$DATA/$2.key.pem" "$DATA/$2.x509.der" "$T/$1.ko" >>"$MS_LOG" 2>&1
}
sign by_rsa2048 rsa2048
sign by_ec256 ec256
sign by_rsa4096 rsa4096
sign by_other other-rsa2048

# --- verify -c bundle ----------------------------------------------------------------
run_ms verify -c "$T/bundle.pem" "$T/by_rsa2048.ko" "$T/by_ec256.ko" "$T/by_rsa4096.ko"
if [ "$rc" -eq 0 ] && grep -q "^OK $T/by_rsa2048.ko TEST-ONLY modsign rsa2048 " "$T/out" &&
	grep -q "^OK $T/by_ec256.ko TEST-ONLY modsign ec256 " "$T/out" &&
	grep -q "^OK $T/by_rsa4096.ko TEST-ONLY modsign rsa4096 " "$T/out"; then
	t_pass "verify -c BUNDLE: a signer by any certificate of the bundle is OK"
else
	t_fail "verify -c BUNDLE: every certificate used" "$(cat "$T/out")"
fi
run_ms verify -c "$T/bundle.pem" "$T/by_other.ko"
expect_fail "verify -c BUNDLE: a signer outside the bundle FAILs" 1 "^FAIL $T/by_other.ko: "
run_ms verify -c "$DATA/other-rsa2048.x509.der" -c "$T/bundle.pem" "$T/by_other.ko" "$T/by_ec256.ko"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^OK ' "$T/out")" -eq 2 ]; then
	t_pass "verify -c CERT -c BUNDLE: both given"
else
	t_fail "verify -c CERT -c BUNDLE: both given" "$(cat "$T/out")"
fi
printf -- '-----BEGIN CERTIFICATE-----\nMAMCAQA=\n-----END CERTIFICATE-----\n' >>"$T/broken.pem"
cat "$T/bundle.pem" >>"$T/broken.pem"
run_ms verify -c "$T/broken.pem" "$T/by_ec256.ko"
expect_fail "verify -c BUNDLE with a broken block: refused, naming the file" 1 \
	"^modsign: $T/broken.pem: not a DER or PEM X.509 certificate"

# --- signing with a bundle as <x509>: its first certificate, as sign-file ---------------
cp "$T/src/mod001.ko" "$T/ours.ko"
cp "$T/src/mod001.ko" "$T/theirs.ko"
run_ms sha256 "$DATA/rsa2048.key.pem" "$T/bundle.pem" "$T/ours.ko"
"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$T/bundle.pem" "$T/theirs.ko"
if [ "$rc" -eq 0 ] && same "$T/ours.ko" "$T/theirs.ko"; then
	t_pass "sign with BUNDLE as x509: the first certificate, byte-identical to sign-file"
else
	t_fail "sign with BUNDLE as x509: equals sign-file" "$(cat "$T/out")"
fi

# --- --skip-signed with a bundle ------------------------------------------------------
mkdir "$T/run"
cp "$T/by_ec256.ko" "$T/by_other.ko" "$T/run/"
cp "$T/src/mod002.ko" "$T/run/unsigned.ko"
run_ms --skip-signed -v -r "$T/run" sha256 "$DATA/rsa2048.key.pem" "$T/bundle.pem"
name="--skip-signed BUNDLE: signed by a bundle certificate: left; by another key: refused"
if same "$T/run/by_ec256.ko" "$T/by_ec256.ko" && grep -q ' 1 signed, 1 failed, ' "$T/out" &&
	grep -q ' 1 skipped (signature verified)' "$T/out" &&
	grep -q "by_other.ko: already signed, but its signature does not verify" "$T/out"; then
	t_pass "$name"
else
	t_fail "$name" "$(cat "$T/out")"
fi
run_ms verify -c "$DATA/rsa2048.x509.der" "$T/run/unsigned.ko"
[ "$rc" -eq 0 ] && t_pass "--skip-signed BUNDLE: the unsigned module signed with the key" ||
	t_fail "--skip-signed BUNDLE: the unsigned module signed with the key" "$(cat "$T/out")"
t_done
