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

# The private registry: nss (softokn) and nss-st (tests/slowtoken over it).
init="configdir='sql:$T/nssdb' certPrefix='' keyPrefix='' secmod='secmod.db' flags="
MODDIR=$T/home/.config/pkcs11/modules
mkdir -p "$MODDIR" "$T/etc-pkcs11"
printf 'module: %s\nx-init-reserved: %s\n' "$SOFTOKN" "$init" >"$MODDIR/nss.module"
printf 'module: %s\nx-init-reserved: %s\n' "$SHIM" "$init" >"$MODDIR/nss-st.module"
export SLOWTOKEN_MODULE=$SOFTOKN
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
# nss_ms ARGS...: modsign with the private registry, output in $T/out, $rc.
# softokn is preloaded so that it is still mapped when LeakSanitizer looks:
# p11-kit unloads it at the end, and its global state then reads as leaks
# with no module to name (none is left with it preloaded).
nss_ms() {
	in_reg env LD_PRELOAD="$SOFTOKN" \
		ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" "$MODSIGN" "$@" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
}

"$TOP/tests/lib/mkmodule.sh" "$T/src" "$N" 4 >/dev/null
mkdir "$T/ref"
for m in "$T"/src/*.ko; do
	"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$cert" "$m" "$T/ref/$(basename "$m")"
done
LOG=$T/st.log
# shellcheck source=tests/lib/workset.sh
. "$TOP/tests/lib/workset.sh"

# A URI cannot carry softokn's init parameters: the hint says what does.
cp "$T/src/mod000.ko" "$T/m.ko"
KBUILD_SIGN_PIN=$PIN nss_ms sha256 \
	"pkcs11:token=NSS%20Certificate%20DB;id=$pct_id;type=private?module-path=$SOFTOKN" \
	"$cert" "$T/m.ko"
expect_fail "module-path= to softokn: CKR_ARGUMENTS_BAD with the module-file hint" 1 \
	"C_Initialize: CKR_ARGUMENTS_BAD: module libsoftokn3.so"
grep -q "^  hint: NSS's softokn needs init parameters.*x-init-reserved: .*module-name=" \
	"$T/out" && same "$T/src/mod000.ko" "$T/m.ko" &&
	t_pass "module-path= to softokn: the hint names x-init-reserved and module-name=" ||
	t_fail "module-path= to softokn: the hint names x-init-reserved and module-name=" \
		"$(cat "$T/out")"

# One module, as sign-file signs it with the PEM key.
KBUILD_SIGN_PIN=$PIN nss_ms sha256 "$(uri nss)" "$cert" "$T/m.ko"
if [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/m.ko"; then
	t_pass "one module: byte-identical to sign-file"
else
	t_fail "one module: byte-identical to sign-file" "status $rc" "$(cat "$T/out")"
fi

# Bulk: every module, one C_Login.
fresh
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_LOG=$LOG nss_ms -b sha256 "$(uri nss-st)" "$cert" "$T"/w/*.ko
count_state
if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Login)" -eq 1 ] &&
	[ "$(n_calls C_Sign)" -eq "$N" ]; then
	t_pass "-b over $N modules: each sign-file's bytes, one C_Login, one C_Sign each"
else
	t_fail "-b over $N modules: each sign-file's bytes, one C_Login" "status $rc, $signed signed," \
		"$(n_calls C_Login) C_Login, $(n_calls C_Sign) C_Sign" "$(tail -n 5 "$T/out")"
fi

# signers_opened: sessions opened after the C_Login: the signers' beside
# session 0 (2 under a 3-session limit).
signers_opened() {
	sed -n '/^C_Login /,$p' "$LOG" | grep -c '^C_OpenSession rv=CKR_OK'
}
# -j above the token's session limit (3 sessions through the shim).
fresh
KBUILD_SIGN_PIN=$PIN SLOWTOKEN_LOG=$LOG SLOWTOKEN_MAX_SESSIONS=3 nss_ms -j 8 -r "$T/w" \
	sha256 "$(uri nss-st)" "$cert"
count_state
if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && ! grep -q CKR_SESSION_COUNT "$LOG" &&
	[ "$(n_calls C_Login)" -eq 1 ] && [ "$(signers_opened)" -eq 2 ]; then
	t_pass "-j 8 over a 3-session limit: all signed, no session refused, one C_Login"
else
	t_fail "-j 8 over a 3-session limit: all signed, no session refused, one C_Login" \
		"status $rc, $signed signed, $(grep -c CKR_SESSION_COUNT "$LOG") CKR_SESSION_COUNT," \
		"$(signers_opened) sessions opened after the login (want 2)" \
		"$(tail -n 5 "$T/out")"
fi

# The agent: one modsign per module, each asking it; one C_Login in all.
fresh
mkdir -m 0700 "$T/run"
cat >"$T/per-module.sh" <<EOF
#!/bin/sh
for m in "$T"/w/*.ko; do
	"$MODSIGN" sha256 '$(uri nss-st)' "$cert" "\$m" || exit 1
done
EOF
chmod +x "$T/per-module.sh"
KBUILD_SIGN_PIN=$PIN XDG_RUNTIME_DIR=$T/run SLOWTOKEN_LOG=$LOG nss_ms agent "$(uri nss-st)" \
	-- "$T/per-module.sh"
count_state
if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Login)" -eq 1 ] &&
	[ "$(n_calls C_Sign)" -eq "$N" ]; then
	t_pass "agent, a modsign per module: each sign-file's bytes, one C_Login for all"
else
	t_fail "agent, a modsign per module: each sign-file's bytes, one C_Login for all" \
		"status $rc, $signed signed, $(n_calls C_Login) C_Login, $(n_calls C_Sign) C_Sign" \
		"$(tail -n 5 "$T/out")"
fi

# A wrong PIN: refused by name, one C_Login, nothing touched.
fresh
KBUILD_SIGN_PIN=$WRONG_PIN SLOWTOKEN_LOG=$LOG nss_ms -b sha256 "$(uri nss-st)" "$cert" \
	"$T"/w/*.ko
count_state
expect_fail "wrong PIN: refused" 1 "C_Login: PIN from KBUILD_SIGN_PIN rejected: CKR_PIN_INCORRECT"
[ "$(n_calls C_Login)" -eq 1 ] && [ "$orig" -eq "$N" ] &&
	t_pass "wrong PIN: one C_Login, no retry, every module untouched" ||
	t_fail "wrong PIN: one C_Login, no retry, every module untouched" \
		"$(n_calls C_Login) C_Login, $orig untouched"
t_done
