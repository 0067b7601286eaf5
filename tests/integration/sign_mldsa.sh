#!/bin/bash
# ML-DSA module signatures made with the key on a token (tests/mldsatoken,
# the test double of an HSM with PKCS#11 3.2's CKM_ML_DSA), judged by
# others: OpenSSL 3.6's raw ML-DSA verify of a signature over the module
# itself (its CMS cannot, before OpenSSL 4), `openssl cms -verify` and the
# kernel's sign-file 7.2 for the signed-attribute form (our CMS equals
# sign-file's but for the randomised signature), and modsign verify. For
# ML-DSA-44, -65 and -87: both forms, -p. For ML-DSA-65: bulk with
# compressed modules and --skip-signed, a module in parts (C_SignUpdate),
# two tokens, the agent, and the refusals: --signed-attrs with another
# hash or an RSA key, an ML-DSA certificate with a key file, another set's
# certificate, a token's corrupt signature or failed C_SignUpdate (the
# module untouched). Skips without the OpenSSL of scripts/openssl-pq.sh.
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/tok_mldsa.sh
. "$TOP/tests/lib/tok_mldsa.sh"
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
mldsa_test_token "ML-DSA signing on a token"
t_slowtoken
export KBUILD_SIGN_PIN=$PIN
"$TOP/tests/lib/mkmodule.sh" "$T/src" 2 64 >/dev/null
mod=$T/src/mod000.ko

# sig_len SET: the ML-DSA signature length of the set (FIPS 204, Table 2).
sig_len() {
	case $1 in 44) echo 2420 ;; 65) echo 3309 ;; 87) echo 4627 ;; esac
}

# raw_verify SIGNED UNSIGNED SET: OpenSSL's ML-DSA verify of the signature
# SIGNED carries (the last bytes of its PKCS#7) over the module UNSIGNED.
raw_verify() {
	sig_of "$1" "$T/raw.p7s"
	tail -c "$(sig_len "$3")" "$T/raw.p7s" >"$T/raw.sig"
	"$PQ_OPENSSL" pkeyutl -verify -pubin -inkey "$tok/mldsa$3.pub.pem" -rawin -in "$2" \
		-sigfile "$T/raw.sig" >"$T/raw.out" 2>&1
}

# untouched NAME FILE COPY: FILE is still byte for byte COPY.
untouched() {
	if same "$2" "$3"; then
		t_pass "$1: the module is untouched"
	else
		t_fail "$1: the module is untouched"
	fi
}

for s in 44 65 87; do
	uri=$(mldsa_uri "mldsa$s")
	crt=$tok/mldsa$s.crt.der
	# Without signed attributes: the signature covers the module itself.
	cp "$mod" "$T/d$s.ko"
	run_ms -p sha512 "$uri" "$crt" "$T/d$s.ko"
	if [ "$rc" -eq 0 ] && raw_verify "$T/d$s.ko" "$mod" "$s"; then
		t_pass "ML-DSA-$s over the module: OpenSSL verifies the signature over the module"
	else
		t_fail "ML-DSA-$s over the module: OpenSSL verifies the signature over the module" \
			"$(cat "$T/out" "$T/raw.out" 2>/dev/null)"
	fi
	sig_of "$T/d$s.ko" "$T/d$s.p7s"
	if same "$T/d$s.p7s" "$T/d$s.ko.p7s"; then
		t_pass "ML-DSA-$s: -p writes the module's PKCS#7"
	else
		t_fail "ML-DSA-$s: -p writes the module's PKCS#7"
	fi
	run_ms verify --kernel-default -c "$crt" "$T/d$s.ko"
	if [ "$rc" -eq 0 ] && grep -q "^OK .*ml-dsa-$s" "$T/out"; then
		t_pass "ML-DSA-$s over the module: verify --kernel-default accepts it"
	else
		t_fail "ML-DSA-$s over the module: verify --kernel-default accepts it" "$(cat "$T/out")"
	fi
	run_ms info "$T/d$s.ko"
	if grep -q "ML-DSA-$s" "$T/out" && grep -q '^payload_len: *'"$(stat -c %s "$mod")" "$T/out"; then
		t_pass "ML-DSA-$s over the module: info names the set and the payload"
	else
		t_fail "ML-DSA-$s over the module: info names the set and the payload" "$(cat "$T/out")"
	fi

	# With signed attributes, as sign-file 7.2 signs under OpenSSL 3.5/3.6.
	cp "$mod" "$T/a$s.ko"
	run_ms -p --signed-attrs sha512 "$uri" "$crt" "$T/a$s.ko"
	if [ "$rc" -eq 0 ] && "$PQ_OPENSSL" cms -verify -binary -inform DER -in "$T/a$s.ko.p7s" \
		-content "$mod" -certfile "$tok/mldsa$s.crt.pem" -nointern -noverify \
		-out /dev/null >"$T/cms.out" 2>&1; then
		t_pass "ML-DSA-$s --signed-attrs: openssl cms -verify accepts it"
	else
		t_fail "ML-DSA-$s --signed-attrs: openssl cms -verify accepts it" \
			"$(cat "$T/out" "$T/cms.out")"
	fi
	if [ -x "$PQ_SIGNFILE" ]; then
		cp "$mod" "$T/sf$s.ko"
		"$PQ_SIGNFILE" -d sha512 "$tok/mldsa$s.key.pem" "$crt" "$T/sf$s.ko" \
			>"$T/sf.out" 2>&1
		n=$(sig_len "$s")
		a=$(stat -c %s "$T/a$s.ko.p7s")
		b=$(stat -c %s "$T/sf$s.ko.p7s" 2>/dev/null || echo 0)
		if [ "$a" -eq "$b" ] &&
			cmp -s <(head -c $((a - n)) "$T/a$s.ko.p7s") <(head -c $((b - n)) "$T/sf$s.ko.p7s"); then
			t_pass "ML-DSA-$s --signed-attrs: the CMS is sign-file 7.2's but for the signature"
		else
			t_fail "ML-DSA-$s --signed-attrs: the CMS is sign-file 7.2's but for the signature" \
				"ours $a bytes, sign-file's $b" "$(cat "$T/sf.out")"
		fi
	else
		t_skip "ML-DSA-$s --signed-attrs: the CMS is sign-file 7.2's" "no $PQ_SIGNFILE"
	fi
	run_ms verify --kernel-default -c "$crt" "$T/a$s.ko"
	expect_fail "ML-DSA-$s --signed-attrs: verify --kernel-default refuses them" 1 \
		"signed attributes"
	run_ms verify -c "$crt" "$T/a$s.ko"
	if [ "$rc" -eq 0 ]; then
		t_pass "ML-DSA-$s --signed-attrs: verify accepts it"
	else
		t_fail "ML-DSA-$s --signed-attrs: verify accepts it" "$(cat "$T/out")"
	fi
done

uri=$(mldsa_uri mldsa65)
crt=$tok/mldsa65.crt.der

# -k: the signer named by subjectKeyIdentifier (CMS version 3), as sign-file -k.
if [ -x "$PQ_SIGNFILE" ]; then
	cp "$mod" "$T/k.ko"
	cp "$mod" "$T/ksf.ko"
	run_ms -d -k --signed-attrs sha512 "$uri" "$crt" "$T/k.ko"
	"$PQ_SIGNFILE" -d -k sha512 "$tok/mldsa65.key.pem" "$crt" "$T/ksf.ko" >"$T/sf.out" 2>&1
	a=$(stat -c %s "$T/k.ko.p7s" 2>/dev/null || echo 0)
	b=$(stat -c %s "$T/ksf.ko.p7s" 2>/dev/null || echo 0)
	if [ "$rc" -eq 0 ] && [ "$a" -eq "$b" ] && [ "$a" -gt 3309 ] &&
		cmp -s <(head -c $((a - 3309)) "$T/k.ko.p7s") <(head -c $((b - 3309)) "$T/ksf.ko.p7s"); then
		t_pass "ML-DSA-65 -k --signed-attrs: the CMS is sign-file 7.2 -k's but for the signature"
	else
		t_fail "ML-DSA-65 -k --signed-attrs: the CMS is sign-file 7.2 -k's but for the signature" \
			"ours $a bytes, sign-file's $b" "$(cat "$T/out" "$T/sf.out")"
	fi
else
	t_skip "ML-DSA-65 -k --signed-attrs: the CMS is sign-file 7.2 -k's" "no $PQ_SIGNFILE"
fi
cp "$mod" "$T/k2.ko"
run_ms -k sha512 "$uri" "$crt" "$T/k2.ko"
if [ "$rc" -eq 0 ] && raw_verify "$T/k2.ko" "$mod" 65 &&
	"$MODSIGN" info "$T/k2.ko" 2>/dev/null | grep -q '^skid:'; then
	t_pass "ML-DSA-65 -k over the module: named by subjectKeyIdentifier, OpenSSL verifies it"
else
	t_fail "ML-DSA-65 -k over the module: named by subjectKeyIdentifier, OpenSSL verifies it" \
		"$(cat "$T/out")"
fi

# A changed byte after signing.
cp "$T/d65.ko" "$T/bad.ko"
printf '\x55' | dd of="$T/bad.ko" bs=1 seek=100 conv=notrunc status=none
run_ms verify -c "$crt" "$T/bad.ko"
expect_fail "ML-DSA-65 over the module: a changed module byte fails verify" 1 "FAIL"

# Bulk: plain and compressed modules, several lanes, then --skip-signed.
"$TOP/tests/lib/mkmodule.sh" "$T/bulk" 6 200 >/dev/null
cp -r "$T/bulk" "$T/bulk.orig"
xz --check=crc32 --lzma2=dict=1MiB -T1 "$T/bulk/mod004.ko"
zstd -q --rm "$T/bulk/mod005.ko"
run_ms -b -j 3 sha512 "$uri" "$crt" -r "$T/bulk"
ok=1
[ "$rc" -eq 0 ] || ok=0
for i in 0 1 2 3; do
	raw_verify "$T/bulk/mod00$i.ko" "$T/bulk.orig/mod00$i.ko" 65 || ok=0
done
xz -dc "$T/bulk/mod004.ko.xz" >"$T/x.ko" && raw_verify "$T/x.ko" "$T/bulk.orig/mod004.ko" 65 || ok=0
zstd -qdc "$T/bulk/mod005.ko.zst" >"$T/z.ko" && raw_verify "$T/z.ko" "$T/bulk.orig/mod005.ko" 65 || ok=0
if [ "$ok" -eq 1 ]; then
	t_pass "ML-DSA-65 bulk -j 3, .ko, .ko.xz, .ko.zst: OpenSSL verifies each over its module"
else
	t_fail "ML-DSA-65 bulk -j 3, .ko, .ko.xz, .ko.zst: OpenSSL verifies each over its module" \
		"$(cat "$T/out")"
fi
run_ms -b --skip-signed sha512 "$uri" "$crt" -r "$T/bulk"
if [ "$rc" -eq 0 ] && grep -q '0 signed, .* 6 skipped (signature verified)' "$T/out"; then
	t_pass "ML-DSA-65 bulk --skip-signed: every module's signature verifies, none signed again"
else
	t_fail "ML-DSA-65 bulk --skip-signed: every module's signature verifies, none signed again" \
		"$(cat "$T/out")"
fi

# A module of 3 MiB and 1 byte crosses to the token in four parts of at most
# 1 MiB (C_SignUpdate), then C_SignFinal.
head -c $((3 * 1024 * 1024 + 1)) /dev/urandom >"$T/big.ko"
cp "$T/big.ko" "$T/big.orig"
slow="pkcs11:token=mldsa-test;object=mldsa65;type=private?module-path=$SHIM"
SLOWTOKEN_MODULE=$MLDSA_MODULE SLOWTOKEN_LOG=$T/big.log run_ms sha512 "$slow" "$crt" "$T/big.ko"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^C_SignUpdate rv=CKR_OK' "$T/big.log")" -eq 4 ] &&
	[ "$(grep -c '^C_SignFinal rv=CKR_OK' "$T/big.log")" -eq 1 ] &&
	! grep -q '^C_Sign ' "$T/big.log" && raw_verify "$T/big.ko" "$T/big.orig" 65; then
	t_pass "ML-DSA-65, a module of 3 MiB + 1: four C_SignUpdate and C_SignFinal; it verifies"
else
	t_fail "ML-DSA-65, a module of 3 MiB + 1: four C_SignUpdate and C_SignFinal; it verifies" \
		"$(cat "$T/out")" "$(grep -c C_SignUpdate "$T/big.log" 2>/dev/null) C_SignUpdate calls"
fi

# A token that fails in the middle of the parts, or returns a corrupt signature.
cp "$T/big.orig" "$T/big2.ko"
SLOWTOKEN_MODULE=$MLDSA_MODULE SLOWTOKEN_FAULT=C_SignUpdate:2:CKR_DEVICE_ERROR \
	run_ms sha512 "$slow" "$crt" "$T/big2.ko"
expect_fail "ML-DSA-65: a failed C_SignUpdate is named with its CKR_ name" 1 \
	"C_SignUpdate: CKR_DEVICE_ERROR"
untouched "ML-DSA-65: a failed C_SignUpdate" "$T/big2.ko" "$T/big.orig"
cp "$mod" "$T/corrupt.ko"
SLOWTOKEN_MODULE=$MLDSA_MODULE SLOWTOKEN_FAULT=C_Sign:1+:CORRUPT \
	run_ms sha512 "$slow" "$crt" "$T/corrupt.ko"
expect_fail "ML-DSA-65: a token's corrupt signature is caught before the write" 1 \
	"did not verify with the certificate"
untouched "ML-DSA-65: a corrupt signature" "$T/corrupt.ko" "$mod"
cp "$mod" "$T/corrupt.ko"
SLOWTOKEN_MODULE=$MLDSA_MODULE SLOWTOKEN_FAULT=C_Sign:1+:CORRUPT \
	run_ms --signed-attrs sha512 "$slow" "$crt" "$T/corrupt.ko"
expect_fail "ML-DSA-65 --signed-attrs: a token's corrupt signature is caught before the write" 1 \
	"did not verify with the certificate"
untouched "ML-DSA-65 --signed-attrs: a corrupt signature" "$T/corrupt.ko" "$mod"

# Two tokens holding the key (a copy of the module reads its own directory).
cp -r "$tok" "$T/tokens/mldsa-b"
echo mldsa-b >"$T/tokens/mldsa-b/label"
echo 0002 >"$T/tokens/mldsa-b/serial"
cp "$MLDSA_MODULE" "$T/mldsa-b.so"
echo "$T/tokens/mldsa-b" >"$T/mldsa-b.so.dir"
"$TOP/tests/lib/mkmodule.sh" "$T/two" 8 64 >/dev/null
cp -r "$T/two" "$T/two.orig"
run_ms -b -j 4 sha512 "$uri" \
	--key "pkcs11:token=mldsa-b;object=mldsa65;type=private?module-path=$T/mldsa-b.so" \
	"$crt" -r "$T/two"
ok=1
for i in 0 1 2 3 4 5 6 7; do
	raw_verify "$T/two/mod00$i.ko" "$T/two.orig/mod00$i.ko" 65 || ok=0
done
if [ "$rc" -eq 0 ] && [ "$ok" -eq 1 ] && grep -q "token 'mldsa-test'" "$T/out" &&
	grep -q "token 'mldsa-b'" "$T/out"; then
	t_pass "ML-DSA-65 on two tokens (--key): both sign, every module verifies"
else
	t_fail "ML-DSA-65 on two tokens (--key): both sign, every module verifies" "$(cat "$T/out")"
fi

# The agent signs the signed attributes holding a module's SHA-512, never the module.
cp "$mod" "$T/ag1.ko"
cp "$mod" "$T/ag2.ko"
cp "$mod" "$T/ag3.ko"
cp "$mod" "$T/ag4.ko"
run_ms agent "$uri" -- sh -c '
	"$0" --signed-attrs sha512 "$1" "$2" "$3"; echo "rc1=$?"
	"$0" sha512 "$1" "$2" "$4"; echo "rc2=$?"
	"$0" --signed-attrs sha256 "$1" "$2" "$5"; echo "rc3=$?"
	MODSIGN_SIGNED_ATTRS=1 "$0" sha512 "$1" "$2" "$6"; echo "rc4=$?"' \
	"$MODSIGN" "$uri" "$crt" "$T/ag1.ko" "$T/ag2.ko" "$T/ag3.ko" "$T/ag4.ko"
cp "$T/out" "$T/agent.out"
run_ms verify -c "$crt" "$T/ag1.ko" "$T/ag4.ko"
if grep -q '^rc1=0$' "$T/agent.out" && grep -q '^rc4=0$' "$T/agent.out" && [ "$rc" -eq 0 ] &&
	grep -q 'agent: stopped .* 2 signed' "$T/agent.out"; then
	t_pass "ML-DSA-65 --signed-attrs, MODSIGN_SIGNED_ATTRS=1 through the agent: signed by it, verify"
else
	t_fail "ML-DSA-65 --signed-attrs, MODSIGN_SIGNED_ATTRS=1 through the agent: signed by it, verify" \
		"$(cat "$T/agent.out" "$T/out")"
fi
if grep -q '^rc2=1$' "$T/agent.out" &&
	grep -q 'an agent signs module digests only: without --signed-attrs' "$T/agent.out"; then
	t_pass "ML-DSA-65 over the module under the agent: refused, saying why"
else
	t_fail "ML-DSA-65 over the module under the agent: refused, saying why" \
		"$(cat "$T/agent.out")"
fi
untouched "ML-DSA-65 over the module under the agent" "$T/ag2.ko" "$mod"
if grep -q '^rc3=1$' "$T/agent.out"; then
	t_pass "ML-DSA-65 --signed-attrs sha256 under the agent: refused"
else
	t_fail "ML-DSA-65 --signed-attrs sha256 under the agent: refused" "$(cat "$T/agent.out")"
fi
untouched "ML-DSA-65 --signed-attrs sha256 under the agent" "$T/ag3.ko" "$mod"

# Refusals, each before any login (the PIN is never asked for).
cp "$mod" "$T/r.ko"
unset KBUILD_SIGN_PIN
run_ms --signed-attrs sha256 "$uri" "$crt" "$T/r.ko" </dev/null
expect_fail "--signed-attrs with sha256: refused, sha512 named" 1 "give sha512 as the hash"
t_token
run_ms --signed-attrs sha256 "$(key_uri rsa2048)" "$TOP/tests/data/rsa2048.x509.der" "$T/r.ko" \
	</dev/null
expect_fail "--signed-attrs with an RSA key: refused" 1 "--signed-attrs is for ML-DSA keys"
run_ms sha512 "$tok/mldsa65.key.pem" "$crt" "$T/r.ko" </dev/null
expect_fail "an ML-DSA certificate with a key file: refused, tokens only" 1 \
	"ML-DSA keys on PKCS#11 tokens only"
MODSIGN_SIGNED_ATTRS=yes run_ms sha512 "$uri" "$crt" "$T/r.ko" </dev/null
expect_fail "MODSIGN_SIGNED_ATTRS=yes: a usage error" 2 "MODSIGN_SIGNED_ATTRS=yes: want 1"
untouched "the refusals" "$T/r.ko" "$mod"
export KBUILD_SIGN_PIN=$PIN
# MODSIGN_SIGNED_ATTRS=1 is for ML-DSA keys: an RSA key signs as always.
cp "$mod" "$T/rsa.ko"
MODSIGN_SIGNED_ATTRS=1 run_ms sha256 "$(key_uri rsa2048)" "$TOP/tests/data/rsa2048.x509.der" \
	"$T/rsa.ko"
if [ "$rc" -eq 0 ] && openssl_verify "$T/rsa.ko" "$mod" "$TOP/tests/data/rsa2048.x509.pem"; then
	t_pass "MODSIGN_SIGNED_ATTRS=1 with an RSA key: signed as without it"
else
	t_fail "MODSIGN_SIGNED_ATTRS=1 with an RSA key: signed as without it" "$(cat "$T/out")"
fi
run_ms sha512 "$(mldsa_uri mldsa44)" "$crt" "$T/r.ko"
expect_fail "ML-DSA-44 key, ML-DSA-65 certificate: not the certificate's key" 1 \
	"is not the key of certificate"
untouched "another set's certificate" "$T/r.ko" "$mod"
t_done
