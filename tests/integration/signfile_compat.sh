#!/bin/bash
# RSA output is byte-for-byte the kernel's sign-file output for the same key
# (as a PEM file, and imported into a SoftHSM2 token), for every RSA size,
# hash and -k, -p, -d and dest form.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
t_registry_stock
export KBUILD_SIGN_PIN=$PIN
"$TOP/tests/lib/mkmodule.sh" "$T/src" 2 >/dev/null
mod=$T/src/mod001.ko

# ref FLAGS HASH KEY: sign-file's signed copy of $mod in $T/ref/m.ko (+ .p7s).
ref() {
	rm -rf "$T/ref" && mkdir "$T/ref" && cp "$mod" "$T/ref/m.ko"
	"$SIGNFILE" $1 "$2" "$DATA/$3.key.pem" "$DATA/$3.x509.der" "$T/ref/m.ko"
}

# ours FLAGS HASH KEY: modsign's signed copy in $T/our/m.ko.
ours() {
	rm -rf "$T/our" && mkdir "$T/our" && cp "$mod" "$T/our/m.ko"
	"$MODSIGN" $1 "$2" "$3" "$4" "$T/our/m.ko" >"$T/out" 2>&1
}

for key in rsa2048 rsa3072 rsa4096; do
	for hash in sha256 sha384 sha512; do
		for flags in "" "-k"; do
			what="$key $hash ${flags:-(issuer+serial)}"
			ref "$flags" "$hash" "$key"
			if ours "$flags" "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der" &&
			    same "$T/ref/m.ko" "$T/our/m.ko"; then
				t_pass "pem key equals sign-file: $what"
			else
				t_fail "pem key equals sign-file: $what" "$(cat "$T/out")"
			fi
			if ours "$flags" "$hash" "$(key_uri $key)" "$DATA/$key.x509.der" &&
			    same "$T/ref/m.ko" "$T/our/m.ko"; then
				t_pass "token key equals sign-file: $what"
			else
				t_fail "token key equals sign-file: $what" "$(cat "$T/out")"
			fi
		done
	done
done

# SHA-3 (kernels 6.7+): byte for byte too, PEM and token, both signer forms.
for case in "rsa2048 sha3-256" "rsa4096 sha3-384 -k" "rsa3072 sha3-512" "rsa2048 sha3-512 -k"; do
	set -- $case
	what="$1 $2 ${3:-(issuer+serial)}"
	ref "${3:-}" "$2" "$1"
	if ours "${3:-}" "$2" "$DATA/$1.key.pem" "$DATA/$1.x509.der" &&
	    same "$T/ref/m.ko" "$T/our/m.ko"; then
		t_pass "pem key equals sign-file: $what"
	else
		t_fail "pem key equals sign-file: $what" "$(cat "$T/out")"
	fi
	if ours "${3:-}" "$2" "$(key_uri "$1")" "$DATA/$1.x509.der" &&
	    same "$T/ref/m.ko" "$T/our/m.ko"; then
		t_pass "token key equals sign-file: $what"
	else
		t_fail "token key equals sign-file: $what" "$(cat "$T/out")"
	fi
done

# A certificate itself signed with SHA-3, as a kernel configured for SHA-3
# module signatures generates signing_key.x509 (mbedTLS 2.28 knows no SHA-3
# OID): PEM key and token, both signer forms, byte for byte, and verify.
sha3cert=$DATA/cms/rsa2048-sha3sig.x509.pem
for flags in "" "-k"; do
	rm -rf "$T/ref" "$T/our" && mkdir "$T/ref" "$T/our"
	cp "$mod" "$T/ref/m.ko" && cp "$mod" "$T/our/m.ko" && cp "$mod" "$T/our/t.ko"
	"$SIGNFILE" $flags sha3-256 "$DATA/rsa2048.key.pem" "$sha3cert" "$T/ref/m.ko"
	what="SHA3-256-signed certificate ${flags:-(issuer+serial)}"
	if "$MODSIGN" $flags sha3-256 "$DATA/rsa2048.key.pem" "$sha3cert" "$T/our/m.ko" \
		>"$T/out" 2>&1 && same "$T/ref/m.ko" "$T/our/m.ko"; then
		t_pass "pem key equals sign-file: $what"
	else
		t_fail "pem key equals sign-file: $what" "$(cat "$T/out")"
	fi
	if "$MODSIGN" $flags sha3-256 "$(key_uri rsa2048)" "$sha3cert" "$T/our/t.ko" \
		>"$T/out" 2>&1 && same "$T/ref/m.ko" "$T/our/t.ko"; then
		t_pass "token key equals sign-file: $what"
	else
		t_fail "token key equals sign-file: $what" "$(cat "$T/out")"
	fi
	t_check "verify -c with the SHA3-256-signed certificate: $what" \
		"$MODSIGN" verify -c "$sha3cert" "$T/our/m.ko"
done

# Every name OpenSSL 3.0 (so sign-file) takes for these hashes
# (`openssl list -digest-algorithms`), in the case given: the same .p7s.
aliases="SHA1 SHA-1 sha-1 SSL3-SHA1 1.3.14.3.2.26 RSA-SHA1 RSA-SHA1-2 sha1WithRSAEncryption
SHA224 SHA2-224 SHA-224 2.16.840.1.101.3.4.2.4 RSA-SHA224 sha224WithRSAEncryption
SHA2-256 Sha-256 2.16.840.1.101.3.4.2.1 RSA-SHA256 sha256WithRSAEncryption
SHA384 SHA2-384 sha-384 2.16.840.1.101.3.4.2.2 RSA-SHA384 sha384WithRSAEncryption
SHA512 SHA2-512 SHA-512 2.16.840.1.101.3.4.2.3 RSA-SHA512 sha512WithRSAEncryption
SHA3-256 2.16.840.1.101.3.4.2.8 RSA-SHA3-256 id-rsassa-pkcs1-v1_5-with-sha3-256
SHA3-384 2.16.840.1.101.3.4.2.9 RSA-SHA3-384 id-rsassa-pkcs1-v1_5-with-sha3-384
SHA3-512 2.16.840.1.101.3.4.2.10 RSA-SHA3-512 id-rsassa-pkcs1-v1_5-with-sha3-512"
bad=""
n=0
for name in $aliases; do
	ref "-d" "$name" rsa2048
	if ! ours "-d" "$name" "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" ||
	    ! same "$T/ref/m.ko.p7s" "$T/our/m.ko.p7s"; then
		bad="$bad $name"
	fi
	n=$((n + 1))
done
if [ -z "$bad" ] && [ "$n" -eq 43 ]; then
	t_pass "hash names as OpenSSL takes them: $n names, .p7s equals sign-file's"
else
	t_fail "hash names as OpenSSL takes them ($n names)" "differ or refused:$bad"
fi

# Other hashes sign-file takes; sha1 alone is warned about.
for hash in sha224 sha1 SHA256; do
	ref "" "$hash" rsa2048
	if ours "" "$hash" "$(key_uri rsa2048)" "$DATA/rsa2048.x509.pem" &&
	    same "$T/ref/m.ko" "$T/our/m.ko"; then
		t_pass "token key equals sign-file: hash $hash"
	else
		t_fail "token key equals sign-file: hash $hash" "$(cat "$T/out")"
	fi
	if [ "$hash" = sha1 ] && ! grep -q "warning: sha1 is deprecated" "$T/out"; then
		t_fail "hash sha1: warned as deprecated" "$(cat "$T/out")"
	elif [ "$hash" != sha1 ] && grep -q "deprecated" "$T/out"; then
		t_fail "hash $hash: no deprecation warning" "$(cat "$T/out")"
	else
		t_pass "hash $hash: deprecation warning for sha1 only"
	fi
done

# -p writes the module and <module>.p7s; both equal sign-file's.
ref "-p" sha256 rsa2048
ours "-p" sha256 "$(key_uri rsa2048)" "$DATA/rsa2048.x509.der"
if same "$T/ref/m.ko" "$T/our/m.ko" && same "$T/ref/m.ko.p7s" "$T/our/m.ko.p7s"; then
	t_pass "-p: module and .p7s equal sign-file's"
else
	t_fail "-p: module and .p7s equal sign-file's" "$(cat "$T/out")"
fi

# -d writes only the .p7s and leaves the module alone.
ref "-d" sha384 rsa3072
ours "-d" sha384 "$(key_uri rsa3072)" "$DATA/rsa3072.x509.der"
if same "$mod" "$T/our/m.ko" && same "$T/ref/m.ko.p7s" "$T/our/m.ko.p7s"; then
	t_pass "-d: module untouched, .p7s equals sign-file's"
else
	t_fail "-d: module untouched, .p7s equals sign-file's" "$(cat "$T/out")"
fi

# dest: the signed copy goes elsewhere, the module is untouched; -p names the
# .p7s after the module, as sign-file does.
rm -rf "$T/ref" "$T/our" && mkdir "$T/ref" "$T/our" "$T/our/out"
cp "$mod" "$T/ref/m.ko" && cp "$mod" "$T/our/m.ko"
"$SIGNFILE" -p sha512 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/ref/m.ko" "$T/ref/signed.ko"
"$MODSIGN" -p sha512 "$(key_uri rsa2048)" "$DATA/rsa2048.x509.der" "$T/our/m.ko" "$T/our/out/signed.ko" >"$T/out" 2>&1
if same "$T/ref/signed.ko" "$T/our/out/signed.ko" && same "$mod" "$T/our/m.ko" &&
    same "$T/ref/m.ko.p7s" "$T/our/m.ko.p7s"; then
	t_pass "dest: signed copy equals sign-file's, module untouched, .p7s by module name"
else
	t_fail "dest: signed copy equals sign-file's, module untouched, .p7s by module name" "$(cat "$T/out")"
fi

# Ways to name the key and the certificate.
ref "" sha256 rsa2048
for uri in \
    "pkcs11:token=modsign-test;id=%01;type=private?module-path=$SOFTHSM" \
    "pkcs11:object=rsa2048;type=private?module-path=$SOFTHSM" \
    "pkcs11:token=modsign-test;object=rsa2048" \
    "pkcs11:token=modsign-test;object=rsa2048?module-name=softhsm2" \
    "pkcs11:model=SoftHSM%20v2;object=rsa2048;type=private" \
    "pkcs11:token=modsign-test;object=rsa2048;type=private?pin-value=$PIN&module-path=$SOFTHSM"; do
	if ours "" sha256 "$uri" "$DATA/rsa2048.x509.der" && same "$T/ref/m.ko" "$T/our/m.ko"; then
		t_pass "key by URI: ${uri%%\?*}"
	else
		t_fail "key by URI: $uri" "$(cat "$T/out")"
	fi
done
if ours "" sha256 "$(key_uri rsa2048)" "pkcs11:token=modsign-test;object=rsa2048;type=cert?module-path=$SOFTHSM" &&
    same "$T/ref/m.ko" "$T/our/m.ko"; then
	t_pass "certificate from the token by URI"
else
	t_fail "certificate from the token by URI" "$(cat "$T/out")"
fi
# A DER key file works too (sign-file takes only PEM).
if ours "" sha256 "$DATA/rsa2048.key.der" "$DATA/rsa2048.x509.der" && same "$T/ref/m.ko" "$T/our/m.ko"; then
	t_pass "DER key file"
else
	t_fail "DER key file" "$(cat "$T/out")"
fi

# The differences doc/guide.md lists ("Where modsign differs on purpose").
# A trailing newline of KBUILD_SIGN_PIN is dropped (sign-file would pass it on).
if KBUILD_SIGN_PIN="$PIN"$'\n' ours "" sha256 "$(key_uri rsa2048)" "$DATA/rsa2048.x509.der" &&
    same "$T/ref/m.ko" "$T/our/m.ko"; then
	t_pass "KBUILD_SIGN_PIN with a trailing newline logs in"
else
	t_fail "KBUILD_SIGN_PIN with a trailing newline logs in" "$(cat "$T/out")"
fi
# An existing dest: sign-file keeps its mode, modsign gives it the module's.
rm -rf "$T/d" && mkdir "$T/d" && cp "$mod" "$T/d/m.ko" && chmod 0644 "$T/d/m.ko"
install -m 0600 /dev/null "$T/d/sf.ko" && install -m 0600 /dev/null "$T/d/ms.ko"
"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/d/m.ko" "$T/d/sf.ko"
run_ms sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/d/m.ko" "$T/d/ms.ko"
if [ "$rc" -eq 0 ] && same "$T/d/sf.ko" "$T/d/ms.ko" && [ "$(stat -c %a "$T/d/sf.ko")" = 600 ] &&
    [ "$(stat -c %a "$T/d/ms.ko")" = 644 ]; then
	t_pass "existing dest: same bytes; sign-file keeps its mode 600, modsign gives the module's 644"
else
	t_fail "existing dest: the mode as doc/guide.md says" "$(stat -c '%a %n' "$T"/d/*)" "$(cat "$T/out")"
fi
# A FIFO or /dev/stdout as dest is refused, nothing written, the module untouched.
mkfifo "$T/d/fifo"
for dest in "$T/d/fifo" /dev/stdout; do
	"$MODSIGN" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/d/m.ko" "$dest" \
		>"$T/stdout" 2>"$T/out"
	rc=$?
	cat "$T/out" >>"$MS_LOG"
	if [ "$rc" -eq 1 ] && [ ! -s "$T/stdout" ] && same "$mod" "$T/d/m.ko" &&
	    grep -q "^modsign: $dest: " "$T/out"; then
		t_pass "dest $dest: refused, nothing written"
	else
		t_fail "dest $dest: refused, nothing written" "status $rc" "$(cat "$T/out")"
	fi
done
t_done
