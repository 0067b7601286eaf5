#!/bin/bash
# SHA-3 module signatures with a key file: RSA through nettle is
# byte-for-byte Debian's sign-file (OpenSSL 3.0 signs RSA with sha3-*); EC
# (which that sign-file refuses with SHA-3) is deterministic, RFC 6979's HMAC
# being HMAC-SHA-512 where mbedTLS 2.28 lacks the hash, and `openssl cms
# -verify` accepts it over the unsigned module and refuses it after one
# changed byte; `modsign verify` says OK.
. "$(dirname "$0")/../lib/common.sh"
t_setup
"$TOP/tests/lib/mkmodule.sh" "$T/src" 4 >/dev/null
mod=$T/src/mod000.ko

# RSA: the module and the .p7s equal sign-file's, for every SHA-3 and size.
for key in rsa2048 rsa3072 rsa4096; do
	for hash in sha3-256 sha3-384 sha3-512; do
		rm -rf "$T/ref" "$T/our" && mkdir "$T/ref" "$T/our"
		cp "$mod" "$T/ref/m.ko" && cp "$mod" "$T/our/m.ko"
		"$SIGNFILE" -p "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der" "$T/ref/m.ko"
		run_ms -p "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der" "$T/our/m.ko"
		if [ "$rc" -eq 0 ] && same "$T/ref/m.ko" "$T/our/m.ko" &&
		    same "$T/ref/m.ko.p7s" "$T/our/m.ko.p7s"; then
			t_pass "$key $hash key file equals sign-file (module and .p7s)"
		else
			t_fail "$key $hash key file equals sign-file (module and .p7s)" "$(cat "$T/out")"
		fi
	done
done

# A PBES2-encrypted RSA key, bulk: every module as sign-file makes it.
openssl pkcs8 -topk8 -in "$DATA/rsa2048.key.pem" -v2 aes-256-cbc -v2prf hmacWithSHA512 \
	-passout "pass:$KEY_PASS" -out "$T/enc.pem"
mkdir -p "$T/bulk" "$T/bulkref"
cp "$T"/src/*.ko "$T/bulk/" && cp "$T"/src/*.ko "$T/bulkref/"
for m in "$T"/bulkref/*.ko; do
	"$SIGNFILE" sha3-512 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$m"
done
KBUILD_SIGN_PIN=$KEY_PASS run_ms -b -j 2 -q sha3-512 "$T/enc.pem" "$DATA/rsa2048.x509.der" \
	"$T"/bulk/*.ko
bad=""
for m in "$T"/bulkref/*.ko; do
	same "$m" "$T/bulk/$(basename "$m")" || bad="$bad $(basename "$m")"
done
if [ "$rc" -eq 0 ] && [ -z "$bad" ]; then
	t_pass "encrypted RSA key, -b -j 2, sha3-512: every module equals sign-file"
else
	t_fail "encrypted RSA key, -b -j 2, sha3-512: every module equals sign-file" "differ:$bad" \
		"$(cat "$T/out")"
fi

# EC: deterministic, verified by openssl cms and by modsign verify.
for kh in "ec256 sha3-256" "ec384 sha3-384" "ec521 sha3-512" "ec256 sha3-512" "ec521 sha3-256"; do
	set -- $kh
	key=$1 hash=$2
	cp "$mod" "$T/a.ko" && cp "$mod" "$T/b.ko"
	run_ms "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der" "$T/a.ko"
	arc=$rc
	run_ms "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der" "$T/b.ko"
	if [ "$arc" -eq 0 ] && [ "$rc" -eq 0 ] && same "$T/a.ko" "$T/b.ko"; then
		t_pass "$key $hash key file: signs, the same bytes twice (RFC 6979)"
	else
		t_fail "$key $hash key file: signs, the same bytes twice (RFC 6979)" "$(cat "$T/out")"
	fi
	if openssl_verify "$T/a.ko" "$mod" "$DATA/$key.x509.pem"; then
		t_pass "$key $hash: openssl cms -verify accepts"
	else
		t_fail "$key $hash: openssl cms -verify accepts" "$(cat "$T/.verify")"
	fi
	cp "$mod" "$T/changed.ko"
	printf 'x' | dd of="$T/changed.ko" bs=1 seek=100 conv=notrunc 2>/dev/null
	if openssl_verify "$T/a.ko" "$T/changed.ko" "$DATA/$key.x509.pem"; then
		t_fail "$key $hash: openssl cms -verify refuses a changed module byte"
	else
		t_pass "$key $hash: openssl cms -verify refuses a changed module byte"
	fi
	run_ms verify -c "$DATA/$key.x509.der" "$T/a.ko"
	if [ "$rc" -eq 0 ] && grep -q "^OK .*a.ko .* $hash ecdsa" "$T/out"; then
		t_pass "$key $hash: modsign verify says OK"
	else
		t_fail "$key $hash: modsign verify says OK" "$(cat "$T/out")"
	fi
done
t_done
