#!/bin/bash
# Encrypted key files as OpenSSL 3 writes them, passphrase in KBUILD_SIGN_PIN
# as sign-file takes it: PKCS#8 with PBES2 (PBKDF2 with every HMAC-SHA-1/2
# PRF, AES-128/192/256-CBC and DES-EDE3-CBC), from `openssl pkcs8 -topk8 -v2`
# and `openssl genpkey -aes*`, PEM and DER, single and bulk; the traditional
# forms still read. RSA results are byte-for-byte sign-file's, EC ones verify
# with openssl cms. Wrong passphrases and broken or hostile parameters
# (iteration counts up to 2^32, unknown algorithms, truncations) are refused
# with a message naming the file, the module untouched.
. "$(dirname "$0")/../lib/common.sh"
t_setup
"$TOP/tests/lib/mkmodule.sh" "$T/src" 4 >/dev/null
mod=$T/src/mod000.ko
rsa=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der
K=$T/keys
mkdir -p "$K"

# ref KEY CERT HASH: sign-file's signed copy of $mod in $T/ref.ko.
ref() {
	cp "$mod" "$T/ref.ko"
	KBUILD_SIGN_PIN=$KEY_PASS "$SIGNFILE" "$3" "$1" "$2" "$T/ref.ko"
}

# ours KEY CERT HASH: modsign's signed copy in $T/our.ko, output in $T/out, status in $rc.
ours() {
	cp "$mod" "$T/our.ko"
	KBUILD_SIGN_PIN=$KEY_PASS run_ms "$3" "$1" "$2" "$T/our.ko"
}

# same_as_signfile NAME KEY CERT HASH
same_as_signfile() {
	if ! ref "$2" "$3" "$4" >"$T/sf.out" 2>&1; then
		t_fail "$1: sign-file signs (test set-up)" "$(cat "$T/sf.out")"
		return
	fi
	ours "$2" "$3" "$4"
	if [ "$rc" -eq 0 ] && same "$T/ref.ko" "$T/our.ko"; then
		t_pass "$1"
	else
		t_fail "$1" "status $rc" "$(cat "$T/out")"
	fi
}

# refused NAME KEY PATTERN: exit 1 with PATTERN, the module untouched.
refused() {
	ours "$2" "$cert" sha256
	expect_fail "$1" 1 "$3"
	same "$mod" "$T/our.ko" || t_fail "$1: module untouched"
}

# 1. openssl pkcs8 -topk8 -v2: every cipher with every PRF.
for c in aes-128-cbc aes-192-cbc aes-256-cbc des-ede3-cbc; do
	for prf in hmacWithSHA1 hmacWithSHA224 hmacWithSHA256 hmacWithSHA384 hmacWithSHA512; do
		k=$K/$c-$prf.pem
		openssl pkcs8 -topk8 -in "$rsa" -v2 $c -v2prf $prf -passout "pass:$KEY_PASS" -out "$k"
		same_as_signfile "pkcs8 -v2 $c -v2prf $prf equals sign-file" "$k" "$cert" sha256
	done
done
openssl pkcs8 -topk8 -in "$rsa" -v2 aes-256-cbc -v2prf hmacWithSHA512 -iter 600000 \
	-passout "pass:$KEY_PASS" -out "$K/iter600k.pem"
same_as_signfile "pkcs8 -v2 aes-256-cbc, 600000 iterations, sha512, equals sign-file" \
	"$K/iter600k.pem" "$cert" sha512

# The same as DER (sign-file reads PEM only: compared with its PEM result).
openssl pkcs8 -topk8 -in "$rsa" -v2 aes-256-cbc -v2prf hmacWithSHA256 -passout "pass:$KEY_PASS" \
	-outform DER -out "$K/k.der"
ref "$K/aes-256-cbc-hmacWithSHA256.pem" "$cert" sha256
ours "$K/k.der" "$cert" sha256
if [ "$rc" -eq 0 ] && same "$T/ref.ko" "$T/our.ko"; then
	t_pass "PBES2 key as DER equals sign-file's result from the PEM"
else
	t_fail "PBES2 key as DER equals sign-file's result from the PEM" "$(cat "$T/out")"
fi

# 2. openssl genpkey -aes128/-aes192/-aes256: new RSA keys, and an EC one.
for c in aes128 aes192 aes256; do
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -$c -pass "pass:$KEY_PASS" \
		-out "$K/gen-$c.pem" 2>/dev/null
	openssl req -new -x509 -key "$K/gen-$c.pem" -passin "pass:$KEY_PASS" -subj "/CN=gen $c" \
		-days 2 -outform DER -out "$K/gen-$c.der"
	same_as_signfile "genpkey RSA -$c equals sign-file" "$K/gen-$c.pem" "$K/gen-$c.der" sha256
done
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -aes256 -pass "pass:$KEY_PASS" \
	-out "$K/gen-ec.pem"
openssl req -new -x509 -key "$K/gen-ec.pem" -passin "pass:$KEY_PASS" -subj "/CN=gen ec" -days 2 \
	-outform DER -out "$K/gen-ec.der"
ours "$K/gen-ec.pem" "$K/gen-ec.der" sha384
if [ "$rc" -eq 0 ] && openssl_verify "$T/our.ko" "$mod" "$K/gen-ec.der"; then
	t_pass "genpkey EC P-384 -aes256: openssl cms -verify accepts"
else
	t_fail "genpkey EC P-384 -aes256: openssl cms -verify accepts" "$(cat "$T/out" "$T/.verify")"
fi
ref "$K/gen-ec.pem" "$K/gen-ec.der" sha384 >"$T/sf.out" 2>&1 &&
	t_pass "genpkey EC P-384 -aes256: sign-file reads it too" ||
	t_fail "genpkey EC P-384 -aes256: sign-file reads it too" "$(cat "$T/sf.out")"

# 3. The forms mbedTLS decrypts itself still work: traditional PEM
# (Proc-Type: 4,ENCRYPTED) and PKCS#12 PBE.
openssl rsa -in "$rsa" -aes256 -traditional -passout "pass:$KEY_PASS" -out "$K/trad.pem" 2>/dev/null
same_as_signfile "traditional PEM, AES-256 equals sign-file" "$K/trad.pem" "$cert" sha256
openssl pkcs8 -topk8 -in "$rsa" -v1 PBE-SHA1-3DES -passout "pass:$KEY_PASS" -out "$K/v1.pem"
same_as_signfile "pkcs8 -v1 PBE-SHA1-3DES equals sign-file" "$K/v1.pem" "$cert" sha256

# 4. Bulk: three lanes share one decryption; every module as sign-file makes it.
mkdir -p "$T/bulk" "$T/bulkref"
cp "$T"/src/*.ko "$T/bulk/" && cp "$T"/src/*.ko "$T/bulkref/"
for m in "$T"/bulkref/*.ko; do
	KBUILD_SIGN_PIN=$KEY_PASS "$SIGNFILE" sha256 "$K/aes-192-cbc-hmacWithSHA384.pem" "$cert" "$m"
done
KBUILD_SIGN_PIN=$KEY_PASS run_ms -b -j 3 -q sha256 "$K/aes-192-cbc-hmacWithSHA384.pem" "$cert" \
	"$T"/bulk/*.ko
bad=""
for m in "$T"/bulkref/*.ko; do
	same "$m" "$T/bulk/$(basename "$m")" || bad="$bad $(basename "$m")"
done
if [ "$rc" -eq 0 ] && [ -z "$bad" ]; then
	t_pass "bulk -j 3 with a PBES2 key: every module equals sign-file"
else
	t_fail "bulk -j 3 with a PBES2 key: every module equals sign-file" "differ:$bad" "$(cat "$T/out")"
fi

# 5. Wrong or missing passphrase.
k=$K/aes-256-cbc-hmacWithSHA256.pem
cp "$mod" "$T/our.ko"
KBUILD_SIGN_PIN=$WRONG_KEY_PASS run_ms sha256 "$k" "$cert" "$T/our.ko"
expect_fail "PBES2 key, wrong passphrase: refused" 1 "$k: wrong passphrase for the key"
t_check "PBES2 key, wrong passphrase: module untouched" same "$mod" "$T/our.ko"
run_ms sha256 "$k" "$cert" "$T/our.ko" </dev/null
expect_fail "PBES2 key, no passphrase: refused, naming KBUILD_SIGN_PIN" 1 \
	"$k: key is encrypted and no passphrase was given (set KBUILD_SIGN_PIN"
KBUILD_SIGN_PIN=$WRONG_KEY_PASS run_ms -b sha256 "$k" "$cert" "$T"/bulk/*.ko
expect_fail "PBES2 key, wrong passphrase, bulk: refused before any module" 1 "wrong passphrase"

# 6. Hostile and broken parameters, built with openssl asn1parse -genconf
# from the parts of a real key (salt, IV, encrypted data).
openssl pkcs8 -topk8 -in "$rsa" -v2 aes-256-cbc -v2prf hmacWithSHA256 -passout "pass:$KEY_PASS" \
	-outform DER -out "$K/base.der"
# octets DER: the contents of each OCTET STRING in DER, in hex, one a line,
# read from the file by the offsets asn1parse gives. Not from its text: it
# shows an octet string of printable bytes as text, not as a hex dump, and
# the 8-byte random salt is all printable in about one key of 2,000: the
# IV then stood in for the salt, the data for the IV, the data was empty,
# and the 12 checks below failed (load had nothing to do with it).
octets() {
	openssl asn1parse -inform DER -in "$1" |
		sed -n 's/^ *\([0-9]*\):d=[0-9]* *hl=\([0-9]*\) *l= *\([0-9]*\) prim: OCTET STRING.*/\1 \2 \3/p' |
		while read -r off hl len; do
			od -An -v -tx1 -j $((off + hl)) -N "$len" "$1" | tr -d ' \n'
			echo
		done
}
hexes=$(octets "$K/base.der")
salt=$(echo "$hexes" | sed -n 1p)
iv=$(echo "$hexes" | sed -n 2p)
data=$(echo "$hexes" | sed -n 3p)

# mkkey OUT ITER IV [PRF-OID] [CIPHER-OID] [EXTRA-PBKDF2-LINE]
mkkey() {
	cat >"$T/gen.cnf" <<-EOF
	asn1 = SEQUENCE:epki
	[epki]
	alg = SEQUENCE:alg
	data = FORMAT:HEX,OCTETSTRING:$data
	[alg]
	oid = OID:1.2.840.113549.1.5.13
	params = SEQUENCE:pbes2
	[pbes2]
	kdf = SEQUENCE:kdf
	enc = SEQUENCE:enc
	[kdf]
	oid = OID:1.2.840.113549.1.5.12
	params = SEQUENCE:pbkdf2
	[pbkdf2]
	salt = FORMAT:HEX,OCTETSTRING:$salt
	iter = INTEGER:$2
	${6:-}
	prf = SEQUENCE:prf
	[prf]
	oid = OID:${4:-1.2.840.113549.2.9}
	null = NULL
	[enc]
	oid = OID:${5:-2.16.840.1.101.3.4.1.42}
	iv = FORMAT:HEX,OCTETSTRING:$3
	EOF
	openssl asn1parse -genconf "$T/gen.cnf" -noout -out "$1" >/dev/null
}

# The generator is right: with the real parameters the key signs.
mkkey "$K/rebuilt.der" 2048 "$iv"
ours "$K/rebuilt.der" "$cert" sha256
if [ "$rc" -eq 0 ] && openssl_verify "$T/our.ko" "$mod" "$cert"; then
	t_pass "rebuilt PBES2 key (test set-up) signs"
else
	t_fail "rebuilt PBES2 key (test set-up) signs" "$(cat "$T/out")" \
		"salt $salt, IV $iv, ${#data} hex digits of data"
fi
mkkey "$K/iter-max.der" 4294967295 "$iv"
refused "iteration count 2^32-1: refused" "$K/iter-max.der" \
	"iter-max.der: encrypted PKCS#8 key: PBKDF2 iteration count 4294967295 is over modsign's limit of 5000000"
mkkey "$K/iter-huge.der" 0x7fffffffffffffffffffffffffffffff "$iv"
refused "iteration count 2^127-1: refused" "$K/iter-huge.der" "iteration count over 2^64 is over"
mkkey "$K/iter-over.der" 5000001 "$iv"
refused "iteration count 5000001: refused" "$K/iter-over.der" "iteration count 5000001 is over"
mkkey "$K/iter-0.der" 0 "$iv"
refused "iteration count 0: refused" "$K/iter-0.der" "iteration count: not a positive DER INTEGER"
mkkey "$K/iter-neg.der" -2048 "$iv"
refused "iteration count -2048: refused" "$K/iter-neg.der" "iteration count: not a positive"
mkkey "$K/iv-short.der" 2048 "${iv:2}"
refused "IV one byte short: refused" "$K/iv-short.der" "the IV is not one OCTET STRING of a block"
mkkey "$K/keylen.der" 2048 "$iv" "" "" "keylen = INTEGER:16"
refused "keyLength not the cipher's: refused" "$K/keylen.der" "key length: not the cipher's"
mkkey "$K/prf-md5.der" 2048 "$iv" 1.2.840.113549.2.6
refused "PRF hmacWithMD5: refused by name" "$K/prf-md5.der" \
	"pseudo-random function 1.2.840.113549.2.6 is not supported"
mkkey "$K/gcm.der" 2048 "$iv" "" 2.16.840.1.101.3.4.1.46
refused "cipher AES-256-GCM: refused by name" "$K/gcm.der" "cipher 2.16.840.1.101.3.4.1.46 is not supported"
# A changed IV garbles the first block (no DER key), a changed last byte the padding.
if [ "${iv:0:2}" = 00 ]; then first=01; else first=00; fi
mkkey "$K/other-iv.der" 2048 "$first${iv:2}"
refused "a changed IV: refused" "$K/other-iv.der" \
	"other-iv.der: wrong passphrase for the key, or the key file is corrupted"
good_data=$data
if [ "${data: -2}" = 00 ]; then last=01; else last=00; fi
data=${data:0:${#data}-2}$last
mkkey "$K/last-byte.der" 2048 "$iv"
data=$good_data
refused "a changed last byte: refused" "$K/last-byte.der" \
	"last-byte.der: wrong passphrase for the key, or the key file is corrupted"
openssl pkcs8 -topk8 -in "$rsa" -scrypt -passout "pass:$KEY_PASS" -out "$K/scrypt.pem"
refused "scrypt: refused by name" "$K/scrypt.pem" \
	"key derivation function 1.3.6.1.4.1.11591.4.11 is not supported (only PBKDF2 is)"
openssl pkcs8 -topk8 -in "$rsa" -v2 camellia-256-cbc -passout "pass:$KEY_PASS" -out "$K/cam.pem"
refused "Camellia: refused by name" "$K/cam.pem" "cipher 1.2.392.200011.61.1.1.1.4 is not supported"
openssl genpkey -algorithm ed25519 -aes256 -pass "pass:$KEY_PASS" -out "$K/ed.pem"
refused "Ed25519, encrypted: refused as neither RSA nor EC" "$K/ed.pem" \
	"cannot parse the decrypted private key (modsign reads RSA and EC keys)"

# Truncated: the DER cut short, the PEM missing a line.
size=$(stat -c %s "$K/base.der")
head -c $((size - 16)) "$K/base.der" >"$K/cut.der"
refused "DER cut by 16 bytes: refused" "$K/cut.der" "cut.der: cannot parse private key"
head -c 300 "$K/base.der" >"$K/cut300.der"
refused "DER cut to 300 bytes: refused" "$K/cut300.der" "cut300.der: cannot parse private key"
sed '3d' "$k" >"$K/noline.pem"
refused "PEM missing a line: refused" "$K/noline.pem" "noline.pem: "
t_done
