#!/bin/bash
# EC signatures (randomised on the token, deterministic with a PEM key) and
# every RSA form checked independently by `openssl cms -verify`: accepted over
# the unsigned module, rejected after one changed byte.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 >/dev/null
mod=$T/src/mod000.ko
printf '\001' > "$T/one"

# check NAME HASH KEYSPEC CERT [FLAGS]
check_verify() {
	name=$1
	rm -f "$T/m.ko" && cp "$mod" "$T/m.ko"
	if ! "$MODSIGN" $5 "$2" "$3" "$4" "$T/m.ko" >"$T/out" 2>&1; then
		t_fail "$name: signs" "$(cat "$T/out")"
		return
	fi
	if openssl_verify "$T/m.ko" "$mod" "$4"; then
		t_pass "$name: openssl cms -verify accepts"
	else
		t_fail "$name: openssl cms -verify accepts" "$(cat "$T/.verify")"
	fi
	cp "$mod" "$T/tampered" && dd if="$T/one" of="$T/tampered" bs=1 seek=100 conv=notrunc 2>/dev/null
	if openssl_verify "$T/m.ko" "$T/tampered" "$4"; then
		t_fail "$name: one changed byte is rejected"
	else
		t_pass "$name: one changed byte is rejected"
	fi
}

# SHA-3 too: ecdsa-with-SHA3-* (kernel 6.7+), which OpenSSL 3.0 verifies but
# cannot make (so sign-file cannot either).
for key in ec256 ec384 ec521; do
	for hash in sha256 sha384 sha512 sha3-256 sha3-384 sha3-512; do
		check_verify "token $key $hash" "$hash" "$(key_uri $key)" "$DATA/$key.x509.der"
		check_verify "pem $key $hash" "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der"
	done
	check_verify "token $key sha256 -k" sha256 "$(key_uri $key)" "$DATA/$key.x509.der" -k
done
# Digests shorter than the curve: the token signs them left-padded with zeros
# (tpm2-pkcs11 refuses 28 bytes), which keeps their value; the CMS still names
# the digest's own hash.
check_verify "token ec256 sha224" sha224 "$(key_uri ec256)" "$DATA/ec256.x509.der"
check_verify "token ec256 sha1" sha1 "$(key_uri ec256)" "$DATA/ec256.x509.der"
check_verify "token ec384 sha224" sha224 "$(key_uri ec384)" "$DATA/ec384.x509.der"
check_verify "token ec521 sha224" sha224 "$(key_uri ec521)" "$DATA/ec521.x509.der"
cp "$mod" "$T/s224.ko"
"$MODSIGN" -d sha224 "$(key_uri ec256)" "$DATA/ec256.x509.der" "$T/s224.ko" >>"$MS_LOG" 2>&1
# digestAlgorithm SEQUENCE { OID 2.16.840.1.101.3.4.2.4 sha224 }, and
# signatureAlgorithm ecdsa-with-SHA224 1.2.840.10045.4.3.1.
hex=$(od -An -tx1 -v "$T/s224.ko.p7s" | tr -d ' \n')
case $hex in
*0609608648016503040204*2a8648ce3d040301*)
	t_pass "token ec256 sha224: the CMS names SHA-224 and ecdsa-with-SHA224" ;;
*)
	t_fail "token ec256 sha224: the CMS names SHA-224 and ecdsa-with-SHA224" \
		"$(openssl asn1parse -inform DER -in "$T/s224.ko.p7s" 2>&1)" ;;
esac
check_verify "token rsa4096 sha512 -k" sha512 "$(key_uri rsa4096)" "$DATA/rsa4096.x509.der" -k
check_verify "token rsa2048 sha3-384" sha3-384 "$(key_uri rsa2048)" "$DATA/rsa2048.x509.der"

# The signature algorithm of ECDSA with SHA-3: ecdsa-with-SHA3-256
# 2.16.840.1.101.3.4.3.10 without parameters (as ecdsa-with-SHA256 has none).
cp "$mod" "$T/e.ko"
"$MODSIGN" -d sha3-256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" "$T/e.ko" >>"$MS_LOG" 2>&1
# SEQUENCE (11 bytes) { OID 2.16.840.1.101.3.4.3.10 }: nothing after the OID.
if od -An -tx1 -v "$T/e.ko.p7s" | tr -d ' \n' | grep -q '300b060960864801650304030a'; then
	t_pass "ECDSA SHA3-256: signatureAlgorithm ecdsa-with-SHA3-256, no parameters"
else
	t_fail "ECDSA SHA3-256: signatureAlgorithm ecdsa-with-SHA3-256, no parameters" \
		"$(openssl asn1parse -inform DER -in "$T/e.ko.p7s" 2>&1)"
fi

# ECDSA with a PEM key is deterministic (RFC 6979): the same module twice
# gives the same bytes.
cp "$mod" "$T/a.ko" && cp "$mod" "$T/b.ko"
"$MODSIGN" sha256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" "$T/a.ko" &&
"$MODSIGN" sha256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" "$T/b.ko"
if same "$T/a.ko" "$T/b.ko"; then
	t_pass "pem ECDSA is deterministic"
else
	t_fail "pem ECDSA is deterministic"
fi
t_done
