#!/bin/bash
# NSS's softokn as the token: an NSS database made in $T
# with certutil and pk12util holding the TEST-ONLY rsa2048 key, reached
# through a p11-kit module file with x-init-reserved (softokn needs init
# parameters, which a URI cannot carry) and module-name=. The module file is
# private: in ~/.config/pkcs11/modules with HOME=$T/home for a user (p11-kit
# reads user config), and for root, which p11-kit gives no user config, in a
# private mount namespace over p11-kit's module directory. Nothing is
# written to /etc or /usr/share/p11-kit. Calls are counted through
# tests/slowtoken with softokn behind it (it forwards C_Initialize's
# arguments, init parameters included).
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
# shellcheck source=tests/lib/tok_nss.sh
. "$TOP/tests/lib/tok_nss.sh"
SOFTOKN=$NSS_SOFTOKN
if [ -n "$(nss_missing)" ]; then
	t_skip "NSS softokn" "libnss3-tools not installed (scripts/install-deps.sh tokens)"
	t_done
	exit
fi
cert=$DATA/rsa2048.x509.der

# The NSS database (tests/lib/tok_nss.sh); its password is the token's
# user PIN. The key's CKA_ID (NSS: SHA-1 of the modulus) as certutil -K
# lists it; the key itself has no CKA_LABEL, so the URI names it by id=.
nss_start "$T/nss" "$PIN" "$KEY_PASS"
id=$NSS_ID
want_id=$(openssl rsa -in "$DATA/rsa2048.key.pem" -noout -modulus | sed 's/^Modulus=//' |
	xxd -r -p | openssl sha1 -r | cut -c 1-40)
if [ -n "$id" ] && [ "$id" = "$want_id" ]; then
	t_pass "NSS DB made; the imported key's id is the SHA-1 of its modulus"
else
	t_fail "NSS DB made; the imported key's id is the SHA-1 of its modulus" \
		"id '$id', want '$want_id'"
fi
pct_id=$(printf '%s' "$id" | sed 's/../%&/g')
uri() {
	nss_uri "$1"
}

# The private registry: nss (softokn) and nss-st (a copy of tests/slowtoken
# over it, its settings in $T/st-n.so.conf).
cp "$SHIM" "$T/st-n.so"
nss_module nss-st "$T/st-n.so"
in_reg() {
	nss_in "$@"
}
if ! in_reg true 2>/dev/null; then
	t_skip "NSS softokn" "root, and no private mount namespace here (unshare --mount)"
	t_done
	exit
fi
# tc_ms ARGS...: modsign with the private registry, output in $T/out, $rc.
# softokn is preloaded so that it is still mapped when LeakSanitizer looks:
# p11-kit unloads it at the end, and its global state then reads as leaks
# with no module to name (none is left with it preloaded).
tc_ms() {
	in_reg env LD_PRELOAD="$SOFTOKN" \
		ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" "$MODSIGN" "$@" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
}
LOG=$T/st.log
tc_token() {
	printf '%s\n' "SLOWTOKEN_MODULE=$SOFTOKN" "SLOWTOKEN_LOG=$LOG" "$@" >"$T/st-n.so.conf"
	rm -f "$LOG"
}
TC_URI=$(uri nss)
TC_SLOW=$(uri nss-st)
# shellcheck source=tests/lib/token_cases.sh
. "$TOP/tests/lib/token_cases.sh"
tc_refs 50

# A URI cannot carry softokn's init parameters: the hint says what does.
# NSS 3.87 (Debian 12) refuses a C_Initialize without them; NSS 3.110
# (Debian 13) starts without a database, so the token holds no key: either
# way nothing is signed, and the message says which.
cp "$T/src/mod000.ko" "$T/m.ko"
KBUILD_SIGN_PIN=$PIN tc_ms sha256 \
	"pkcs11:token=NSS%20Certificate%20DB;id=$pct_id;type=private?module-path=$SOFTOKN" \
	"$cert" "$T/m.ko"
if grep -q "CKR_ARGUMENTS_BAD" "$T/out"; then
	expect_fail "module-path= to softokn: CKR_ARGUMENTS_BAD with the module-file hint" 1 \
		"C_Initialize: CKR_ARGUMENTS_BAD: module libsoftokn3.so"
	grep -q "^  hint: NSS's softokn needs init parameters.*x-init-reserved: .*module-name=" \
		"$T/out" && same "$T/src/mod000.ko" "$T/m.ko" &&
		t_pass "module-path= to softokn: the hint names x-init-reserved and module-name=" ||
		t_fail "module-path= to softokn: the hint names x-init-reserved and module-name=" \
			"$(cat "$T/out")"
else
	expect_fail "module-path= to softokn without init parameters (newer NSS: no database): key not found" 1 \
		"key: not found: no private key matches id=$id on token \"NSS Certificate DB\""
	same "$T/src/mod000.ko" "$T/m.ko" &&
		t_pass "module-path= to softokn without init parameters: the module untouched" ||
		t_fail "module-path= to softokn without init parameters: the module untouched" \
			"$(cat "$T/out")"
fi

tc_single
tc_bulk
tc_jobs
tc_agent
tc_wrong_pin
t_done
