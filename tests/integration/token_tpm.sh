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

TPM_MODULE=/usr/lib/x86_64-linux-gnu/pkcs11/libtpm2_pkcs11.so
missing=""
for c in swtpm tpm2_ptool tpm2-abrmd tpm2_dictionarylockout dbus-daemon pkcs11-tool; do
	command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$c" >/dev/null 2>&1 ||
		missing="$missing $c"
done
[ -e "$TPM_MODULE" ] || missing="$missing $TPM_MODULE"
if [ -n "$missing" ]; then
	t_skip "TPM tests" "not installed:$missing (scripts/install-deps.sh tpm)"
	t_done
	exit 0
fi
PATH=$PATH:/usr/sbin

# tpm2-pkcs11 1.9.0 leaks in its EC C_SignInit through OpenSSL, whose frames
# have no frame pointers: only the slow unwinder reaches the module's name
# in tests/lsan.supp.
export ASAN_OPTIONS=$ASAN_OPTIONS:fast_unwind_on_malloc=0
export TSS2_LOG=all+NONE
STORE=$T/tokens/store
mkdir -p "$T/tokens/tpm" "$STORE"
SWTPM_PID=""
DBUS_PID=""
ABRMD_PID=""

tpm_cleanup() {
	for p in $ABRMD_PID $DBUS_PID $SWTPM_PID; do
		kill "$p" 2>/dev/null
	done
}
trap 'tpm_cleanup; t_cleanup' EXIT

# port_free P: nothing listens on 127.0.0.1:P.
port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# pick_port: a free pair of loopback ports in $PORT.
pick_port() {
	for _ in $(seq 1 50); do
		PORT=$((20000 + (RANDOM % 20000) * 2))
		port_free "$PORT" && port_free $((PORT + 1)) && return 0
	done
	return 1
}

# swtpm_start: swtpm on $PORT and $PORT + 1 (the same again on a restart,
# else another free pair), its state in $T/tokens/tpm, kept across restarts.
PORT=""
swtpm_start() {
	local tries=0
	[ -n "$PORT" ] || pick_port || return 1
	until swtpm socket --tpm2 --tpmstate dir="$T/tokens/tpm" \
		--server type=tcp,port="$PORT",bindaddr=127.0.0.1 \
		--ctrl type=tcp,port=$((PORT + 1)),bindaddr=127.0.0.1 \
		--flags not-need-init,startup-clear --daemon --pid file="$T/swtpm.pid" \
		>>"$T/swtpm.log" 2>&1; do
		tries=$((tries + 1))
		[ $tries -lt 5 ] && pick_port || return 1
	done
	SWTPM_PID=$(cat "$T/swtpm.pid")
	export TPM2_PKCS11_TCTI="swtpm:port=$PORT"
	export TPM2_PKCS11_STORE=$STORE
}

if ! swtpm_start; then
	t_fail "swtpm starts" "$(tail -n 5 "$T/swtpm.log")"
	t_done
	exit 1
fi

# tpm2_ptool through tpm2-abrmd, on a D-Bus session bus of our own.
dbus-daemon --session --fork --address="unix:path=$T/bus" --print-pid=3 3>"$T/dbus.pid" \
	>>"$T/provision.log" 2>&1
DBUS_PID=$(cat "$T/dbus.pid" 2>/dev/null)
export DBUS_SESSION_BUS_ADDRESS=unix:path=$T/bus
tpm2-abrmd --session --allow-root --tcti="swtpm:port=$PORT" >>"$T/provision.log" 2>&1 &
ABRMD_PID=$!
ptool() {
	TPM2TOOLS_TCTI=tabrmd:bus_type=session tpm2_ptool "$@" --path "$STORE" \
		>>"$T/tokens/ptool.log" 2>&1
}
# abrmd takes a moment to claim its bus name.
for _ in $(seq 1 50); do
	ptool init && break
	sleep 0.2
done
if ptool addtoken --pid=1 --label=modsign-tpm --userpin="$PIN" --sopin=so-pin-tpm-0000 &&
	ptool import --label=modsign-tpm --key-label=rsa2048 --id=01 --userpin="$PIN" \
		--algorithm=rsa --privkey="$DATA/rsa2048.key.pem" &&
	ptool addkey --label=modsign-tpm --key-label=rsagen --id=02 --userpin="$PIN" \
		--algorithm=rsa2048 &&
	ptool addkey --label=modsign-tpm --key-label=ecgen --id=03 --userpin="$PIN" \
		--algorithm=ecc256; then
	t_pass "tpm2_ptool: a token in swtpm, one key imported, RSA-2048 and P-256 generated"
else
	t_fail "tpm2_ptool: a token in swtpm, one key imported, RSA-2048 and P-256 generated" \
		"$(grep -v -i pin "$T/tokens/ptool.log" | tail -n 10)"
	t_done
	exit 1
fi
# Provisioning done: the module talks to swtpm directly from here on.
kill "$ABRMD_PID" "$DBUS_PID" 2>/dev/null
wait "$ABRMD_PID" 2>/dev/null
ABRMD_PID=""
DBUS_PID=""
unset DBUS_SESSION_BUS_ADDRESS

tpm_uri() {
	printf 'pkcs11:token=modsign-tpm;object=%s;type=private?module-path=%s' "$1" "$TPM_MODULE"
}
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
	-out "$T/ca.pem" -subj "/CN=TEST-ONLY TPM test CA" -days 36500 >>"$T/provision.log" 2>&1
for k in rsagen ecgen; do
	pkcs11-tool --module "$TPM_MODULE" --read-object --type pubkey --label "$k" \
		-o "$T/$k.pub.der" >>"$T/provision.log" 2>&1 &&
	openssl pkey -pubin -inform DER -in "$T/$k.pub.der" -out "$T/$k.pub.pem" &&
	openssl req -new -key "$T/ca.key" -subj "/O=modsign test/CN=TEST-ONLY TPM $k" \
		-out "$T/$k.csr" &&
	openssl x509 -req -in "$T/$k.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -set_serial 0x$RANDOM \
		-force_pubkey "$T/$k.pub.pem" -days 36500 -extfile "$DATA/x509.cnf" -extensions v3 \
		-outform DER -out "$T/$k.x509.der" >>"$T/provision.log" 2>&1 ||
		t_fail "certificate for the TPM's $k key" "$(tail -n 5 "$T/provision.log")"
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
TPM2TOOLS_TCTI="swtpm:port=$PORT" tpm2_dictionarylockout --clear-lockout >>"$T/provision.log" 2>&1
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
tc_kill_midrun swtpm kill -9 "$SWTPM_PID"
if [ "$rc" -ne 0 ] && [ "$orig" -gt 0 ]; then
	t_pass "swtpm killed mid-run: the run fails (exit $rc), $orig modules left untouched"
else
	t_fail "swtpm killed mid-run: the run fails, modules left untouched" \
		"exit $rc, $orig untouched" "$(tail -n 5 "$T/out")"
fi
if swtpm_start; then
	tc_finish "swtpm restarted"
else
	t_fail "swtpm restarts" "$(tail -n 5 "$T/swtpm.log")"
fi
t_done
