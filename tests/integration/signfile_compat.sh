#!/bin/bash
# RSA output is byte-for-byte the kernel's sign-file output for the same key
# (as a PEM file, and imported into a SoftHSM2 token), for every RSA size,
# hash and -k, -p, -d and dest form.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
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

# Other hashes sign-file takes.
for hash in sha224 sha1 SHA256; do
	ref "" "$hash" rsa2048
	if ours "" "$hash" "$(key_uri rsa2048)" "$DATA/rsa2048.x509.pem" &&
	    same "$T/ref/m.ko" "$T/our/m.ko"; then
		t_pass "token key equals sign-file: hash $hash"
	else
		t_fail "token key equals sign-file: hash $hash" "$(cat "$T/out")"
	fi
done
grep -q "sha1 is deprecated" "$T/out" || true

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
t_done
