#!/bin/bash
# NSS's softokn as the token (issue 27, item 5): an NSS database made in $T
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
SOFTOKN=/usr/lib/x86_64-linux-gnu/libsoftokn3.so
if [ ! -e "$SOFTOKN" ] || ! command -v certutil >/dev/null || ! command -v pk12util >/dev/null
then
	t_skip "NSS softokn" "libnss3-tools not installed (scripts/install-deps.sh tokens)"
	t_done
	exit
fi
cert=$DATA/rsa2048.x509.der
N=50

# The NSS database; its password is the token's user PIN.
mkdir "$T/nssdb"
printf '%s\n' "$PIN" >"$T/nss.pin"
certutil -N -d "sql:$T/nssdb" -f "$T/nss.pin" >>"$MS_LOG" 2>&1
printf '%s\n' "$KEY_PASS" >"$T/p12.pin"
openssl pkcs12 -export -inkey "$DATA/rsa2048.key.pem" -in "$DATA/rsa2048.x509.pem" \
	-name modsign-rsa2048 -passout "file:$T/p12.pin" -out "$T/rsa2048.p12" 2>>"$MS_LOG"
pk12util -i "$T/rsa2048.p12" -d "sql:$T/nssdb" -k "$T/nss.pin" -w "$T/p12.pin" \
	>>"$MS_LOG" 2>&1
# The key's CKA_ID (NSS: SHA-1 of the modulus) as certutil -K lists it; the
# key itself has no CKA_LABEL, so the URI names it by id=.
id=$(certutil -K -d "sql:$T/nssdb" -f "$T/nss.pin" 2>/dev/null |
	sed -n 's/.* rsa  *\([0-9a-f]*\)  *modsign-rsa2048$/\1/p')
want_id=$(openssl rsa -in "$DATA/rsa2048.key.pem" -noout -modulus | sed 's/^Modulus=//' |
	xxd -r -p | openssl sha1 -r | cut -c 1-40)
if [ -n "$id" ] && [ "$id" = "$want_id" ]; then
	t_pass "NSS DB made; the imported key's id is the SHA-1 of its modulus"
else
	t_fail "NSS DB made; the imported key's id is the SHA-1 of its modulus" \
		"id '$id', want '$want_id'"
fi
pct_id=$(printf '%s' "$id" | sed 's/../%&/g')
# uri MODULE-NAME: the key on the NSS DB token through the named module file.
uri() {
	printf 'pkcs11:token=NSS%%20Certificate%%20DB;id=%s;type=private?module-name=%s' \
		"$pct_id" "$1"
}

# The private registry: nss (softokn) and nss-st (a copy of tests/slowtoken
# over it, its settings in $T/st-n.so.conf).
init="configdir='sql:$T/nssdb' certPrefix='' keyPrefix='' secmod='secmod.db' flags="
MODDIR=$T/home/.config/pkcs11/modules
mkdir -p "$MODDIR" "$T/etc-pkcs11"
printf 'module: %s\nx-init-reserved: %s\n' "$SOFTOKN" "$init" >"$MODDIR/nss.module"
cp "$SHIM" "$T/st-n.so"
printf 'module: %s\nx-init-reserved: %s\n' "$T/st-n.so" "$init" >"$MODDIR/nss-st.module"
# in_reg CMD...: CMD with the private registry.
in_reg() {
	if [ "$(id -u)" -ne 0 ]; then
		HOME=$T/home XDG_CONFIG_HOME=$T/home/.config "$@"
		return
	fi
	unshare --mount --propagation private sh -c '
		mount --bind "$1" /usr/share/p11-kit/modules || exit 99
		if [ -d /etc/pkcs11 ]; then mount --bind "$2" /etc/pkcs11 || exit 99; fi
		shift 2
		exec "$@"' sh "$MODDIR" "$T/etc-pkcs11" "$@"
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
# shellcheck source=tests/lib/token_cases.sh
. "$TOP/tests/lib/token_cases.sh"
tc_refs

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

tc_single "$(uri nss)"
tc_bulk "$(uri nss-st)"
tc_jobs "$(uri nss-st)"
tc_agent "$(uri nss-st)"
tc_wrong_pin "$(uri nss-st)"
t_done
