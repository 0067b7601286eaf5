#!/bin/bash
# The ML-DSA test token (tests/mldsatoken) and the ML-DSA oracles, with
# the OpenSSL >= 3.5 of scripts/openssl-pq.sh: the token shows its objects
# to pkcs11-tool, refuses a wrong PIN, and signs (pure ML-DSA, one C_Sign or
# C_SignUpdate parts, hedged or deterministic, with or without a context
# string) what that OpenSSL verifies and a changed message fails; sign-file
# 7.2 built against it signs a module with an ML-DSA-65 key file (signed
# attributes) and an RSA one (none), and `openssl cms -verify` accepts both.
# Skips when the OpenSSL is not built (make pq-deps): building it takes
# minutes, never done here.
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/tok_mldsa.sh
. "$TOP/tests/lib/tok_mldsa.sh"
mldsa_test_token "ML-DSA token and sign-file 7.2"
t_pass "ML-DSA token set up: ML-DSA-44, -65 and -87 keys and certificates"
"$TOP/tests/lib/mkmodule.sh" "$T/mods" 1 64 >/dev/null
mod=$T/mods/mod000.ko

# p11tool OUT ARGS...: pkcs11-tool on the token, output in OUT, status in $rc.
p11tool() {
	local out=$1
	shift
	pkcs11-tool --module "$MLDSA_MODULE" "$@" >"$out" 2>&1
	rc=$?
}

p11tool "$T/list" -L
if [ "$rc" -eq 0 ] && grep -q 'token label *: mldsa-test' "$T/list" &&
	grep -q 'PIN initialized' "$T/list" && grep -q 'login required' "$T/list"; then
	t_pass "pkcs11-tool -L: the token, login required"
else
	t_fail "pkcs11-tool -L: the token, login required" "$(cat "$T/list")"
fi

# One mechanism, CKM_ML_DSA (0x1d), for signing; its key sizes are the
# ML-DSA public key lengths in bytes (PKCS#11 3.2).
p11tool "$T/mechs" -M
# (pkcs11-tool's "Using slot" on stderr may end up on that line.)
if [ "$rc" -eq 0 ] && [ "$(grep -c '^  ' "$T/mechs")" -eq 1 ] &&
	grep -qi '^  mechtype-0x1d, keySize={1312,2592}, sign' "$T/mechs"; then
	t_pass "pkcs11-tool -M: CKM_ML_DSA (0x1d) only, sign, key sizes 1312 to 2592"
else
	t_fail "pkcs11-tool -M: CKM_ML_DSA (0x1d) only, sign, key sizes 1312 to 2592" "$(cat "$T/mechs")"
fi

# Without a login only the public objects show.
p11tool "$T/objs" -O
n_cert=$(grep -c '^Certificate Object' "$T/objs")
n_pub=$(grep -c '^Public Key Object' "$T/objs")
n_priv=$(grep -c '^Private Key Object' "$T/objs")
if [ "$rc" -eq 0 ] && [ "$n_cert" -eq 3 ] && [ "$n_pub" -eq 3 ] && [ "$n_priv" -eq 0 ] &&
	grep -q 'label: *mldsa65' "$T/objs"; then
	t_pass "pkcs11-tool -O: 3 certificates, 3 public keys, no private key before login"
else
	t_fail "pkcs11-tool -O: 3 certificates, 3 public keys, no private key before login" \
		"status $rc, certs $n_cert, public $n_pub, private $n_priv" "$(head -n 30 "$T/objs")"
fi

# The PIN goes on pkcs11-tool's command line: never echoed by a failure here.
p11tool "$T/objs" -O --login --pin "$PIN"
n_priv=$(grep -c '^Private Key Object' "$T/objs")
if [ "$rc" -eq 0 ] && [ "$n_priv" -eq 3 ]; then
	t_pass "pkcs11-tool -O --login: 3 private keys after login"
else
	t_fail "pkcs11-tool -O --login: 3 private keys after login" \
		"status $rc, private $n_priv" "$(head -n 30 "$T/objs")"
fi

p11tool "$T/objs" -O --login --pin "$WRONG_PIN"
if [ "$rc" -ne 0 ] && grep -q CKR_PIN_INCORRECT "$T/objs" &&
	! grep -q '^Private Key Object' "$T/objs"; then
	t_pass "a wrong PIN is refused (CKR_PIN_INCORRECT), no private key shown"
else
	t_fail "a wrong PIN is refused (CKR_PIN_INCORRECT), no private key shown" \
		"status $rc" "$(head -n 20 "$T/objs")"
fi

# tsign NAME ARGS...: the client signs; its output goes to $T/sign.out.
tsign() {
	local name=$1
	shift
	if "$MLDSA_SIGN" "$@" >"$T/sign.out" 2>&1; then
		return 0
	fi
	t_fail "$name" "$(cat "$T/sign.out")"
	return 1
}

# verify LABEL MSG SIG [PKEYOPT...]: the cached OpenSSL's pure ML-DSA verify.
verify() {
	local label=$1 msg=$2 sig=$3
	shift 3
	"$PQ_OPENSSL" pkeyutl -verify -pubin -inkey "$tok/$label.pub.pem" -rawin \
		-in "$msg" -sigfile "$sig" "$@" >"$T/verify.out" 2>&1
}

cp "$mod" "$T/changed"
printf 'x' | dd of="$T/changed" bs=1 seek=100 conv=notrunc 2>/dev/null
for s in 44 65 87; do
	label=mldsa$s
	name="ML-DSA-$s: C_Sign of a module verifies with OpenSSL"
	if tsign "$name" "$MLDSA_MODULE" "$label" "$tok/pin" "$mod" "$T/$label.sig"; then
		want=$("$PQ_OPENSSL" pkey -pubin -in "$tok/$label.pub.pem" -text -noout |
			head -n 1)
		if verify "$label" "$mod" "$T/$label.sig" && ! verify "$label" "$T/changed" "$T/$label.sig"; then
			t_pass "$name (length $(stat -c %s "$T/$label.sig"), a changed module fails)"
		else
			t_fail "$name" "$want" "$(cat "$T/verify.out")"
		fi
	fi
done

# Multi-part: parts of 4000 bytes, not a divisor of the module's size.
name="ML-DSA-65: C_SignUpdate in parts, C_SignFinal verifies"
if tsign "$name" -p 4000 "$MLDSA_MODULE" mldsa65 "$tok/pin" "$mod" "$T/parts.sig"; then
	if verify mldsa65 "$mod" "$T/parts.sig" && ! verify mldsa65 "$T/changed" "$T/parts.sig"; then
		t_pass "$name"
	else
		t_fail "$name" "$(cat "$T/verify.out")"
	fi
fi

# Hedged signatures differ from each other; deterministic ones do not.
if tsign "hedged" -H "$MLDSA_MODULE" mldsa44 "$tok/pin" "$mod" "$T/h1.sig" &&
	tsign "hedged" "$MLDSA_MODULE" mldsa44 "$tok/pin" "$mod" "$T/h2.sig" &&
	tsign "deterministic" -d "$MLDSA_MODULE" mldsa44 "$tok/pin" "$mod" "$T/d1.sig" &&
	tsign "deterministic" -d -p 1000 "$MLDSA_MODULE" mldsa44 "$tok/pin" "$mod" "$T/d2.sig"; then
	if ! cmp -s "$T/h1.sig" "$T/h2.sig" && cmp -s "$T/d1.sig" "$T/d2.sig" &&
		verify mldsa44 "$mod" "$T/d1.sig" && verify mldsa44 "$mod" "$T/h1.sig"; then
		t_pass "hedged signatures differ, deterministic ones are equal, all verify"
	else
		t_fail "hedged signatures differ, deterministic ones are equal, all verify" \
			"$(cat "$T/verify.out")"
	fi
fi

# A context string is bound into the signature (FIPS 204): it verifies
# with that context only.
name="a context string: verifies with it, not without"
if tsign "$name" -c modsign-ctx "$MLDSA_MODULE" mldsa87 "$tok/pin" "$mod" "$T/ctx.sig"; then
	if verify mldsa87 "$mod" "$T/ctx.sig" -pkeyopt context-string:modsign-ctx &&
		! verify mldsa87 "$mod" "$T/ctx.sig"; then
		t_pass "$name"
	else
		t_fail "$name" "$(cat "$T/verify.out")"
	fi
fi

# FIPS 204 allows a context string of at most 255 bytes: 256 is refused
# at C_SignInit (CKR_MECHANISM_PARAM_INVALID), 255 signs and verifies.
c255=$(printf '%0255d' 0)
if "$MLDSA_SIGN" -c "${c255}1" "$MLDSA_MODULE" mldsa44 "$tok/pin" "$mod" "$T/no.sig" \
	>"$T/sign.out" 2>&1; then
	t_fail "a 256-byte context string is refused at C_SignInit" "it signed"
elif grep -q 'C_SignInit: CK_RV 0x71$' "$T/sign.out" && [ ! -e "$T/no.sig" ] &&
	tsign "255-byte context" -c "$c255" "$MLDSA_MODULE" mldsa44 "$tok/pin" "$mod" "$T/c255.sig" &&
	verify mldsa44 "$mod" "$T/c255.sig" -pkeyopt "context-string:$c255"; then
	t_pass "a 256-byte context string is refused at C_SignInit, 255 bytes sign and verify"
else
	t_fail "a 256-byte context string is refused at C_SignInit, 255 bytes sign and verify" \
		"$(cat "$T/sign.out" "$T/verify.out")"
fi

# The key directory from C_Initialize's pReserved (p11-kit's x-init-reserved)
# instead of MLDSATOKEN_DIR; with neither, C_Initialize fails and says why.
name="the key directory from pReserved, without MLDSATOKEN_DIR"
if env -u MLDSATOKEN_DIR "$MLDSA_SIGN" -r "$tok" "$MLDSA_MODULE" mldsa65 "$tok/pin" "$mod" \
	"$T/reserved.sig" >"$T/sign.out" 2>&1 && verify mldsa65 "$mod" "$T/reserved.sig"; then
	t_pass "$name"
else
	t_fail "$name" "$(cat "$T/sign.out")"
fi
if env -u MLDSATOKEN_DIR "$MLDSA_SIGN" "$MLDSA_MODULE" mldsa65 "$tok/pin" "$mod" "$T/no.sig" \
	>"$T/sign.out" 2>&1; then
	t_fail "no key directory: C_Initialize fails" "it signed"
elif grep -q 'C_Initialize: CK_RV 0x5$' "$T/sign.out" && grep -q 'no key directory' "$T/sign.out"; then
	t_pass "no key directory: C_Initialize fails (CKR_GENERAL_ERROR) and says why"
else
	t_fail "no key directory: C_Initialize fails" "$(cat "$T/sign.out")"
fi

# A wrong PIN file: C_Login fails, nothing is signed.
printf '%s\n' "$WRONG_PIN" >"$T/wrong.pin"
if "$MLDSA_SIGN" "$MLDSA_MODULE" mldsa65 "$T/wrong.pin" "$mod" "$T/no.sig" >"$T/sign.out" 2>&1; then
	t_fail "the client with a wrong PIN fails at C_Login" "it signed"
elif grep -q 'C_Login: CK_RV 0xa0$' "$T/sign.out" && [ ! -e "$T/no.sig" ]; then
	t_pass "the client with a wrong PIN fails at C_Login (CKR_PIN_INCORRECT)"
else
	t_fail "the client with a wrong PIN fails at C_Login" "$(cat "$T/sign.out")"
fi

# The kernel's sign-file 7.2 against the same OpenSSL: the oracle for the
# CMS modsign makes with ML-DSA keys.
if [ ! -x "$PQ_SIGNFILE" ]; then
	t_skip "sign-file 7.2" "not built in $PQ_CACHE (make pq-deps)"
	t_done
	exit
fi

# sf_check NAME KEY CERT-DER WANT-ATTRS: sign-file signs a copy of the
# module; the CMS has signed attributes (yes) or none (no), and the cached
# OpenSSL's cms -verify accepts it over the module (its content, detached)
# and refuses it over a changed module.
sf_check() {
	local name=$1 key=$2 cert=$3 attrs=$4 m=$T/sf-$RANDOM.ko
	cp "$mod" "$m"
	if ! "$PQ_SIGNFILE" sha512 "$key" "$cert" "$m" >"$T/sf.out" 2>&1; then
		t_fail "$name" "sign-file failed" "$(cat "$T/sf.out")"
		return
	fi
	sig_of "$m" "$T/sf.p7"
	"$PQ_OPENSSL" cms -cmsout -print -inform DER -in "$T/sf.p7" >"$T/sf.txt" 2>&1
	attr_lines=$(sed -n '/signedAttrs:/,/signatureAlgorithm:/p' "$T/sf.txt")
	n_want=$(printf '%s\n' "$attr_lines" | grep -c 'object: contentType\|object: messageDigest')
	n_all=$(printf '%s\n' "$attr_lines" | grep -c 'object: ')
	attrs_ok=no
	if [ "$attrs" = yes ] && [ "$n_want" -eq 2 ] && [ "$n_all" -eq 2 ]; then
		attrs_ok=yes
	elif [ "$attrs" = no ] && [ "$n_all" -eq 0 ]; then
		attrs_ok=yes
	fi
	if [ "$attrs_ok" = no ]; then
		t_fail "$name" "signed attributes: want $attrs, found $n_all" "$attr_lines"
		return
	fi
	"$PQ_OPENSSL" x509 -inform DER -in "$cert" -out "$T/sf-cert.pem"
	# The signed part of the file: the module without its signature.
	head -c "$(stat -c %s "$mod")" "$m" >"$T/sf-content"
	if ! cmp -s "$T/sf-content" "$mod"; then
		t_fail "$name" "sign-file changed the module's bytes"
		return
	fi
	if "$PQ_OPENSSL" cms -verify -binary -inform DER -in "$T/sf.p7" -content "$mod" \
		-certfile "$T/sf-cert.pem" -noverify -out /dev/null >"$T/sf-verify.out" 2>&1 &&
		! "$PQ_OPENSSL" cms -verify -binary -inform DER -in "$T/sf.p7" -content "$T/changed" \
			-certfile "$T/sf-cert.pem" -noverify -out /dev/null >/dev/null 2>&1; then
		t_pass "$name"
	else
		t_fail "$name" "$(cat "$T/sf-verify.out")"
	fi
}

sf_check "sign-file 7.2, ML-DSA-65 key file: contentType and messageDigest only; cms -verify accepts" \
	"$tok/mldsa65.key.pem" "$tok/mldsa65.crt.der" yes
sf_check "sign-file 7.2, RSA key file: no signed attributes; cms -verify accepts" \
	"$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" no
t_done
