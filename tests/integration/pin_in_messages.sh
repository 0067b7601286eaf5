#!/bin/bash
# A PIN given in a key or certificate URI (pin-value=, in
# the path or the query) never appears in a message, on every failure path
# that names the argument, in single and bulk mode; and a URI p11-kit reads
# as one (upper-case scheme, leading whitespace) is taken as a URI, not as a
# file name echoed in an open error. The PIN is this suite's distinctive
# $PIN, so tests/run.sh's secret grep covers these paths too; each check
# also greps for it itself.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
"$TOP/tests/lib/mkmodule.sh" "$T/src" 2 >/dev/null
mod=$T/src/mod000.ko
cert=$DATA/rsa2048.x509.der
other=$DATA/rsa3072.x509.der
tok="pkcs11:token=modsign-test"
q="module-path=$SOFTHSM"
# The certificate without subjectKeyIdentifier, on the token too.
pkcs11-tool --module "$SOFTHSM" --token-label modsign-test --login --pin "$PIN" \
	--write-object "$DATA/rsa2048-noskid.x509.der" --type cert --id 0c --label noskid \
	>/dev/null 2>&1

no_pin() {
	if grep -qF "$PIN" "$T/out"; then
		t_fail "$1: no PIN in the output" "$(sed "s/$PIN/<PIN>/g" "$T/out")"
	else
		t_pass "$1: no PIN in the output"
	fi
}

# check NAME STATUS PATTERN ARGS...: modsign ARGS on a fresh copy of the
# module, the exit status, a message, and no PIN anywhere in the output.
check() {
	local name=$1 status=$2 pattern=$3
	shift 3
	cp "$mod" "$T/m.ko"
	cp "$mod" "$T/n.ko"
	run_ms "$@"
	expect_fail "$name" "$status" "$pattern"
	no_pin "$name"
}

# The key is not the certificate's key: the message names both arguments.
for form in "$tok;object=rsa2048;type=private;pin-value=$PIN?$q" \
	"$tok;object=rsa2048;type=private?$q&pin-value=$PIN"; do
	where=query
	case $form in *"pin-value=$PIN?"*) where=path ;; esac
	check "key not the certificate's ($where pin-value)" 1 \
		"key .*pin-value=(hidden).* is not the key of certificate" \
		sha256 "$form" "$other" "$T/m.ko"
	check "key not the certificate's, bulk ($where pin-value)" 1 \
		"key .*pin-value=(hidden).* is not the key of certificate" \
		-b sha256 "$form" "$other" "$T/m.ko" "$T/n.ko"
done

# A certificate URI with a PIN that is not the key's certificate.
check "certificate URI not the key's" 1 "certificate $tok;object=rsa3072;.*pin-value=(hidden)" \
	sha256 "$tok;object=rsa2048;type=private?$q&pin-value=$PIN" \
	"$tok;object=rsa3072;type=cert?$q&pin-value=$PIN" "$T/m.ko"
check "certificate URI not the key's, bulk" 1 "pin-value=(hidden)" \
	-b sha256 "$tok;object=rsa2048;type=private?$q&pin-value=$PIN" \
	"$tok;object=rsa3072;type=cert?$q&pin-value=$PIN" "$T/m.ko" "$T/n.ko"

# -k and a certificate URI whose certificate has no subjectKeyIdentifier.
check "-k, certificate URI without SKID" 1 "has no subjectKeyIdentifier" \
	-k sha256 "$tok;object=rsa2048;type=private?$q&pin-value=$PIN" \
	"$tok;object=noskid;type=cert?$q&pin-value=$PIN" "$T/m.ko"

# --skip-signed: signed by another key than the certificate URI's.
cp "$mod" "$T/s.ko"
KBUILD_SIGN_PIN=$PIN run_ms sha256 "$(key_uri rsa3072)" "$other" "$T/s.ko"
run_ms -b --skip-signed sha256 "$tok;object=rsa2048;type=private?$q&pin-value=$PIN" \
	"$tok;object=rsa2048;type=cert?$q&pin-value=$PIN" "$T/s.ko"
expect_fail "--skip-signed, certificate URI" 1 "does not verify against .*pin-value=(hidden)"
no_pin "--skip-signed, certificate URI"

# Arguments in the wrong order: the URI lands where the hash belongs.
check "URI given as the hash" 1 "hash pkcs11:.*pin-value=(hidden)" \
	"$tok;object=rsa2048;type=private?$q&pin-value=$PIN" sha256 "$cert" "$T/m.ko"

# Read as p11-kit reads it: the scheme in any case, whitespace ignored.
for key in "PKCS11:token=modsign-test;object=rsa2048;type=private?$q&pin-value=$PIN" \
	" pkcs11:token=modsign-test;object=rsa2048;type=private?$q&pin-value=$PIN" \
	"Pkcs11:token=modsign-test; object=rsa2048;type=private?$q&pin-value=$PIN"; do
	cp "$mod" "$T/m.ko"
	run_ms sha256 "$key" "$cert" "$T/m.ko"
	if [ "$rc" -eq 0 ] && "$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$cert" "$mod" "$T/ref.ko" &&
		same "$T/m.ko" "$T/ref.ko"; then
		t_pass "URI as written '${key:0:8}...' signs"
	else
		t_fail "URI as written '${key:0:8}...' signs" "status $rc" "$(sed "s/$PIN/<PIN>/g" "$T/out")"
	fi
	no_pin "URI as written '${key:0:8}...'"
done
check "upper-case certificate URI, not the key's" 1 "pin-value=(hidden)" \
	sha256 "$tok;object=rsa2048;type=private?$q&pin-value=$PIN" \
	"PKCS11:token=modsign-test;object=rsa3072;type=cert?$q&pin-value=$PIN" "$T/m.ko"
check "verify -c with an upper-case URI" 0 "^OK " \
	verify -c "PKCS11:token=modsign-test;object=rsa3072;type=cert?$q&pin-value=$PIN" "$T/s.ko"
t_done
