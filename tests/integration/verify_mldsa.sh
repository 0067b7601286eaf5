#!/bin/bash
# `modsign verify -c` and `modsign info` on modules that the kernel 7.2's
# sign-file, built against the OpenSSL >= 3.5 of scripts/openssl-pq.sh,
# signs with ML-DSA-44, -65 and -87 keys (signed attributes: contentType and
# a SHA-512 messageDigest). Each verifies with its certificate, with a note
# that a 7.x kernel takes the signed attributes only with
# CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA (--kernel-default refuses
# them), and `openssl cms -verify` agrees; the wrong certificate, another
# set's certificate, a changed module byte and a changed signature byte
# FAIL, as openssl says too; a PEM bundle of RSA, ML-DSA and EC certificates
# (a 7.x kernel's trusted keys) verifies all three. Skips when that OpenSSL
# is not built.
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/tok_mldsa.sh
. "$TOP/tests/lib/tok_mldsa.sh"
why=$(mldsa_missing)
if [ -z "$why" ] && [ ! -x "$PQ_SIGNFILE" ]; then
	why="no sign-file 7.2 in $PQ_CACHE (make pq-deps builds it)"
fi
if [ -n "$why" ]; then
	t_skip "ML-DSA modules signed by sign-file 7.2" "$why"
	t_done
	exit
fi

"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 >/dev/null
mod=$T/src/mod000.ko
keys=$T/keys
mkdir -p "$keys"

# osl_verify SIGNED CERT: whether `openssl cms -verify` accepts SIGNED's PKCS#7 over its
# payload with CERT (the signature, as common.sh's openssl_verify; no chain).
osl_verify() {
	local size siglen
	sig_of "$1" "$T/osl.p7s"
	size=$(stat -c %s "$1")
	head -c $((size - siglen - 40)) "$1" >"$T/osl.payload"
	"$PQ_OPENSSL" cms -verify -binary -inform DER -in "$T/osl.p7s" -content "$T/osl.payload" \
		-certfile "$2" -nointern -noverify -out /dev/null >/dev/null 2>&1
}

# verdicts NAME STATUS PATTERN SIGNED CERT: modsign's status and message, and openssl agreeing.
verdicts() {
	local want_osl=0
	run_ms verify -c "$5" "$4"
	expect_fail "$1" "$2" "$3"
	[ "$2" -eq 0 ] || want_osl=1
	if osl_verify "$4" "$5"; then osl=0; else osl=1; fi
	if [ "$osl" -eq "$want_osl" ]; then
		t_pass "$1: openssl cms -verify agrees"
	else
		t_fail "$1: openssl cms -verify agrees" "openssl status $osl, want $want_osl"
	fi
}

# cert KEY OUT [SERIAL]: a self-signed TEST-ONLY certificate of KEY, named as every other here.
cert() {
	"$PQ_OPENSSL" req -new -x509 -config "$TOP/tests/data/x509.cnf" -days 36500 \
		-subj "/O=modsign test/CN=TEST-ONLY modsign ML-DSA" ${3:+-set_serial "0x$3"} \
		-key "$1" -out "$2" >>"$T/setup.log" 2>&1
}

for s in 44 65 87; do
	other=$((s == 87 ? 44 : s == 44 ? 65 : 87))
	# The wrong certificates name the signer as the right one (issuer and
	# serial): found as the signer's, then refused by the signature.
	"$PQ_OPENSSL" genpkey -algorithm "ML-DSA-$s" -out "$keys/k$s.pem" >>"$T/setup.log" 2>&1 &&
		cert "$keys/k$s.pem" "$keys/c$s.pem" &&
		serial=$("$PQ_OPENSSL" x509 -in "$keys/c$s.pem" -noout -serial | cut -d= -f2) &&
		"$PQ_OPENSSL" genpkey -algorithm "ML-DSA-$s" -out "$keys/o$s.pem" >>"$T/setup.log" 2>&1 &&
		cert "$keys/o$s.pem" "$keys/o$s.crt.pem" "$serial" &&
		"$PQ_OPENSSL" genpkey -algorithm "ML-DSA-$other" -out "$keys/x$s.pem" >>"$T/setup.log" 2>&1 &&
		cert "$keys/x$s.pem" "$keys/x$s.crt.pem" "$serial" &&
		cp "$mod" "$T/m$s.ko" &&
		"$PQ_SIGNFILE" sha512 "$keys/k$s.pem" "$keys/c$s.pem" "$T/m$s.ko" >>"$T/setup.log" 2>&1 ||
		{
			t_fail "ML-DSA-$s keys, certificates and sign-file 7.2 signature" "$(tail -n 20 "$T/setup.log")"
			continue
		}
	m=$T/m$s.ko
	c=$keys/c$s.pem
	verdicts "ML-DSA-$s: verify -c accepts sign-file 7.2's signature" 0 \
		"^OK $m TEST-ONLY modsign ML-DSA sha512 ml-dsa-$s\$" "$m" "$c"
	if grep -q "note: $m: ML-DSA with signed attributes.*CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA" "$T/out"; then
		t_pass "ML-DSA-$s: verify notes the signed attributes and the kernel option"
	else
		t_fail "ML-DSA-$s: verify notes the signed attributes and the kernel option" "$(cat "$T/out")"
	fi
	run_ms verify --kernel-default -c "$c" "$m"
	expect_fail "ML-DSA-$s: --kernel-default refuses the signed attributes" 1 \
		"^FAIL $m: PKCS#7: .*CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA"

	run_ms info "$m"
	expect_fail "ML-DSA-$s: info names the algorithm" 0 "algorithm: *ml-dsa (ML-DSA-$s)"
	if grep -q "^note: *ML-DSA with signed attributes.*_FOR_MLDSA=y" "$T/out" && ! grep -q "^error:" "$T/out"; then
		t_pass "ML-DSA-$s: info notes the signed attributes, no error"
	else
		t_fail "ML-DSA-$s: info notes the signed attributes, no error" "$(cat "$T/out")"
	fi
	run_ms info --kernel-default "$m"
	expect_fail "ML-DSA-$s: info --kernel-default calls the signed attributes an error" 1 \
		"^error: *PKCS#7: has signed attributes"
	run_ms info --json "$m"
	expect_fail "ML-DSA-$s: info --json names the algorithm" 0 "\"signature_algorithm\": \"ML-DSA-$s\""

	verdicts "ML-DSA-$s: another key's certificate of the signer's name is refused" 1 \
		"^FAIL $m: .*not verify\\|^FAIL $m: .*mismatch\\|^FAIL $m: .*another key" "$m" "$keys/o$s.crt.pem"
	verdicts "ML-DSA-$s: an ML-DSA-$other certificate of the signer's name is refused" 1 \
		"^FAIL $m: " "$m" "$keys/x$s.crt.pem"

	cp "$m" "$T/bad.ko"
	b=$(od -An -tu1 -j 200 -N 1 "$T/bad.ko" | tr -d ' ')
	printf "\\$(printf %03o $(((b + 1) & 255)))" | dd of="$T/bad.ko" bs=1 seek=200 conv=notrunc 2>/dev/null
	verdicts "ML-DSA-$s: a changed module byte is refused" 1 "^FAIL $T/bad.ko: .*digest" "$T/bad.ko" "$c"

	cp "$m" "$T/bad.ko"
	off=$(( $(stat -c %s "$T/bad.ko") - 40 - 100 ))
	b=$(od -An -tu1 -j "$off" -N 1 "$T/bad.ko" | tr -d ' ')
	printf "\\$(printf %03o $(((b + 1) & 255)))" | dd of="$T/bad.ko" bs=1 seek="$off" conv=notrunc 2>/dev/null
	verdicts "ML-DSA-$s: a changed signature byte is refused" 1 "^FAIL $T/bad.ko: " "$T/bad.ko" "$c"
done

# A trusted-keys bundle as a 7.x kernel's: RSA, the three ML-DSA
# certificates and EC, one PEM file; each module verifies against it.
cat "$DATA/rsa2048.x509.pem" "$keys/c44.pem" "$keys/c65.pem" "$keys/c87.pem" \
	"$DATA/ec256.x509.pem" >"$T/bundle.pem"
run_ms verify -c "$T/bundle.pem" "$T/m44.ko" "$T/m65.ko" "$T/m87.ko"
if [ "$rc" -eq 0 ] && [ "$(grep -c "^OK $T/m[0-9]*\.ko TEST-ONLY modsign ML-DSA sha512 ml-dsa-" "$T/out")" -eq 3 ]; then
	t_pass "verify -c with a PEM bundle of RSA, ML-DSA and EC certificates: all three sets verify"
else
	t_fail "verify -c with a PEM bundle of RSA, ML-DSA and EC certificates: all three sets verify" \
		"status $rc" "$(cat "$T/out")"
fi
t_done
