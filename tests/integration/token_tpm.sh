#!/bin/bash
# Keys in a TPM: tpm2-pkcs11 over swtpm, every part started here in $T and
# named by module-path= (nothing registered or read system-wide is relied on).
# An RSA key imported into the TPM (tests/data/rsa2048.key.pem) signs byte
# for byte as sign-file does with the PEM file: one module, a token-less URI,
# -b over 50 modules with one C_Login, 50 modsign processes under the agent,
# -j above the token's session limit. Keys generated in the TPM (RSA-2048,
# P-256, certificates made from their public halves) pass `openssl cms
# -verify` and `modsign verify`, P-256 with sha224 too (tpm2-pkcs11 refuses
# a 28-byte digest unless it is widened). A wrong PIN costs one C_Login and
# leaves the TPM unlocked; a TPM in dictionary-attack lockout is named as
# such. swtpm killed in the middle of a bulk run leaves every module
# untouched or signed and no temp file; --skip-signed finishes the job.
#
# Set-up (the README's "Tokens proven"): swtpm on a free loopback port,
# tpm2-abrmd on a private D-Bus session bus for tpm2_ptool only (without a
# resource manager tpm2_ptool runs the TPM out of object slots), then
# tpm2-pkcs11 talks to swtpm directly (TPM2_PKCS11_TCTI).
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken

# shellcheck source=tests/lib/tok_tpm.sh
. "$TOP/tests/lib/tok_tpm.sh"
missing=$(tpm_missing)
if [ -n "$missing" ]; then
	t_skip "TPM tests" "not installed: $missing (scripts/install-deps.sh tpm)"
	t_done
	exit 0
fi
PATH=$PATH:/usr/sbin

# tpm2-pkcs11 1.9.0 leaks in its EC C_SignInit through OpenSSL, whose frames
# have no frame pointers: only the slow unwinder reaches the module's name
# in tests/lsan.supp.
export ASAN_OPTIONS=$ASAN_OPTIONS:fast_unwind_on_malloc=0
trap 'tpm_stop; t_cleanup' EXIT

# The token (tests/lib/tok_tpm.sh), then two keys generated in the TPM.
if tpm_start "$T/tokens" "$PIN" &&
	tpm_ptool addkey --label=modsign-tpm --key-label=rsagen --id=02 --userpin="$PIN" \
		--algorithm=rsa2048 &&
	tpm_ptool addkey --label=modsign-tpm --key-label=ecgen --id=03 --userpin="$PIN" \
		--algorithm=ecc256; then
	t_pass "tpm2_ptool: a token in swtpm, one key imported, RSA-2048 and P-256 generated"
else
	t_fail "tpm2_ptool: a token in swtpm, one key imported, RSA-2048 and P-256 generated" \
		"$(tail -n 5 "$T/tokens/swtpm.log" 2>/dev/null)" \
		"$(grep -v -i pin "$T/tokens/ptool.log" | tail -n 10)"
	t_done
	exit 1
fi
# Provisioning done: the module talks to swtpm directly from here on.
tpm_provisioned
# The checks of tests/lib/token_cases.sh, counted through a copy of the shim.
TC_MODULE=$TPM_MODULE
TC_SHIM=$T/st.so
cp "$SHIM" "$TC_SHIM"
TC_URI=$(tpm_uri rsa2048)
TC_SLOW="pkcs11:token=modsign-tpm;object=rsa2048;type=private?module-path=$TC_SHIM"
# shellcheck source=tests/lib/token_cases.sh
. "$TOP/tests/lib/token_cases.sh"
CERT=$TC_CERT

# Certificates for the generated keys: their public halves read from the
# token, in certificates a throwaway CA signs.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$T/ca.key" \
	-out "$T/ca.pem" -subj "/CN=TEST-ONLY TPM test CA" -days 36500 >>"$T/tokens/provision.log" 2>&1
for k in rsagen ecgen; do
	pkcs11-tool --module "$TPM_MODULE" --read-object --type pubkey --label "$k" \
		-o "$T/$k.pub.der" >>"$T/tokens/provision.log" 2>&1 &&
	openssl pkey -pubin -inform DER -in "$T/$k.pub.der" -out "$T/$k.pub.pem" &&
	openssl req -new -key "$T/ca.key" -subj "/O=modsign test/CN=TEST-ONLY TPM $k" \
		-out "$T/$k.csr" &&
	openssl x509 -req -in "$T/$k.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -set_serial 0x$RANDOM \
		-force_pubkey "$T/$k.pub.pem" -days 36500 -extfile "$DATA/x509.cnf" -extensions v3 \
		-outform DER -out "$T/$k.x509.der" >>"$T/tokens/provision.log" 2>&1 ||
		t_fail "certificate for the TPM's $k key" "$(tail -n 5 "$T/tokens/provision.log")"
done

tc_refs 50
mod=$T/src/mod000.ko
export KBUILD_SIGN_PIN=$PIN

# --- The imported RSA key (byte-identical to sign-file with the PEM file):
# one module, -b, -j, the agent, a wrong PIN (which leaves the TPM unlocked).
tc_single
tc_bulk
tc_jobs
tc_agent
tc_wrong_pin
cp "$mod" "$T/m.ko"
run_ms sha256 "pkcs11:object=rsa2048;type=private?module-path=$TPM_MODULE" "$CERT" "$T/m.ko"
if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref/mod000.ko"; then
	t_pass "token-less URI (module-path and object only): identical to sign-file"
else
	t_fail "token-less URI (module-path and object only): identical to sign-file" \
		"status $rc" "$(tail -n 5 "$T/out")"
fi

# --- Keys generated in the TPM: openssl cms -verify and modsign verify.
# check_gen NAME HASH KEY: one module signed, both verifiers accept it.
check_gen() {
	cp "$mod" "$T/g.ko"
	run_ms "$2" "$(tpm_uri "$3")" "$T/$3.x509.der" "$T/g.ko"
	if [ "$rc" -ne 0 ]; then
		t_fail "$1: signs" "status $rc" "$(tail -n 5 "$T/out")"
		return
	fi
	if openssl_verify "$T/g.ko" "$mod" "$T/$3.x509.der"; then
		t_pass "$1: openssl cms -verify accepts"
	else
		t_fail "$1: openssl cms -verify accepts" "$(cat "$T/.verify")"
	fi
	run_ms verify -c "$T/$3.x509.der" "$T/g.ko"
	expect_fail "$1: modsign verify accepts" 0 "^OK .* $2 "
}
check_gen "generated RSA-2048, sha256" sha256 rsagen
check_gen "generated P-256, sha256" sha256 ecgen
check_gen "generated P-256, sha224 (digest widened to 32 bytes)" sha224 ecgen
check_gen "generated P-256, sha384" sha384 ecgen

# --- A TPM in dictionary-attack lockout (swtpm: 3 failures): tpm2-pkcs11
# sets no PIN-count flags, so only C_Login says so; the message names the
# lockout and its reset, not a rejected PIN.
cp "$mod" "$T/m2.ko"
for _ in 1 2 3; do
	KBUILD_SIGN_PIN=$WRONG_PIN run_ms sha256 "$(tpm_uri rsa2048)" "$CERT" "$T/m2.ko"
done
cp "$mod" "$T/m.ko"
run_ms sha256 "$(tpm_uri rsa2048)" "$CERT" "$T/m.ko"
if [ "$rc" -eq 1 ] && grep -q "CKR_PIN_LOCKED.*dictionary-attack protection" "$T/out" &&
	grep -q "tpm2_dictionarylockout --clear-lockout" "$T/out" &&
	! grep -q "rejected" "$T/out" && same "$T/m.ko" "$mod"; then
	t_pass "TPM lockout: the right PIN is refused with the lockout named and how to reset it"
else
	t_fail "TPM lockout: the right PIN is refused with the lockout named and how to reset it" \
		"status $rc" "$(grep modsign: "$T/out")"
fi
TPM2TOOLS_TCTI="swtpm:port=$TPM_PORT" tpm2_dictionarylockout --clear-lockout >>"$T/tokens/provision.log" 2>&1
run_ms sha256 "$(tpm_uri rsa2048)" "$CERT" "$T/m.ko"
if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref/mod000.ko"; then
	t_pass "TPM lockout: cleared with tpm2_dictionarylockout, the PIN signs again"
else
	t_fail "TPM lockout: cleared with tpm2_dictionarylockout, the PIN signs again" \
		"status $rc" "$(tail -n 5 "$T/out")"
fi

# --- swtpm killed in the middle of a bulk run: each module untouched or
# signed, no temp file; the run fails; after a restart --skip-signed
# finishes the job.
tc_kill_midrun swtpm kill -9 "$TPM_SWTPM_PID"
if [ "$rc" -ne 0 ] && [ "$orig" -gt 0 ]; then
	t_pass "swtpm killed mid-run: the run fails (exit $rc), $orig modules left untouched"
else
	t_fail "swtpm killed mid-run: the run fails, modules left untouched" \
		"exit $rc, $orig untouched" "$(tail -n 5 "$T/out")"
fi
if tpm_swtpm_start; then
	tc_finish "swtpm restarted"
else
	t_fail "swtpm restarts" "$(tail -n 5 "$T/tokens/swtpm.log")"
fi
t_done
