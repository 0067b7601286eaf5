# shellcheck shell=bash
# An NSS softokn token of our own: an NSS database made with certutil and
# pk12util holding the TEST-ONLY rsa2048 key, reached through p11-kit module
# files with x-init-reserved (softokn needs init parameters, which a URI
# cannot carry) and module-name=. The module files are private: in
# ~/.config/pkcs11/modules with HOME=DIR/home for a user (p11-kit reads user
# config), and for root, which p11-kit gives no user config, in a private
# mount namespace over p11-kit's module directory. Nothing is written to
# /etc or /usr/share/p11-kit. Sourced by tests/integration/token_nss.sh and
# bench/tokens_real.sh; bash, safe under set -e.
#   nss_missing              prints what is not installed (empty: all is)
#   nss_start DIR PIN PASS   the database in DIR/nssdb (its password, the
#                            token's user PIN, is PIN), the key imported
#                            through a PKCS#12 file protected by PASS;
#                            module file "nss" for softokn. Sets NSS_ID (the
#                            key's CKA_ID in hex, as certutil -K lists it;
#                            the key has no CKA_LABEL). Non-zero on failure
#   nss_module NAME LIB      one more module file NAME: LIB with softokn's
#                            init parameters (a shim in front of it)
#   nss_in CMD...            CMD with the private registry (non-zero, 99,
#                            when no private mount namespace can be made)
#   nss_uri NAME             the key on the NSS DB token through module NAME

NSS_SOFTOKN=/usr/lib/x86_64-linux-gnu/libsoftokn3.so
NSS_DIR=""
NSS_ID=""

nss_missing() {
	if [ ! -e "$NSS_SOFTOKN" ] || ! command -v certutil >/dev/null ||
		! command -v pk12util >/dev/null; then
		echo "libnss3-tools"
	fi
}

nss_module() {
	printf 'module: %s\nx-init-reserved: %s\n' "$2" \
		"configdir='sql:$NSS_DIR/nssdb' certPrefix='' keyPrefix='' secmod='secmod.db' flags=" \
		>"$NSS_DIR/home/.config/pkcs11/modules/$1.module"
}

nss_start() {
	NSS_DIR=$1
	mkdir -p "$NSS_DIR/nssdb" "$NSS_DIR/home/.config/pkcs11/modules" "$NSS_DIR/etc-pkcs11"
	printf '%s\n' "$2" >"$NSS_DIR/nss.pin"
	printf '%s\n' "$3" >"$NSS_DIR/p12.pin"
	certutil -N -d "sql:$NSS_DIR/nssdb" -f "$NSS_DIR/nss.pin" >>"$NSS_DIR/setup.log" 2>&1 &&
		openssl pkcs12 -export -inkey "$TOP/tests/data/rsa2048.key.pem" \
			-in "$TOP/tests/data/rsa2048.x509.pem" -name modsign-rsa2048 \
			-passout "file:$NSS_DIR/p12.pin" -out "$NSS_DIR/rsa2048.p12" \
			2>>"$NSS_DIR/setup.log" &&
		pk12util -i "$NSS_DIR/rsa2048.p12" -d "sql:$NSS_DIR/nssdb" -k "$NSS_DIR/nss.pin" \
			-w "$NSS_DIR/p12.pin" >>"$NSS_DIR/setup.log" 2>&1 || return 1
	NSS_ID=$(certutil -K -d "sql:$NSS_DIR/nssdb" -f "$NSS_DIR/nss.pin" 2>/dev/null |
		sed -n 's/.* rsa  *\([0-9a-f]*\)  *modsign-rsa2048$/\1/p')
	nss_module nss "$NSS_SOFTOKN"
	[ -n "$NSS_ID" ]
}

nss_in() {
	if [ "$(id -u)" -ne 0 ]; then
		HOME=$NSS_DIR/home XDG_CONFIG_HOME=$NSS_DIR/home/.config "$@"
		return
	fi
	unshare --mount --propagation private sh -c '
		mount --bind "$1" /usr/share/p11-kit/modules || exit 99
		if [ -d /etc/pkcs11 ]; then mount --bind "$2" /etc/pkcs11 || exit 99; fi
		shift 2
		exec "$@"' sh "$NSS_DIR/home/.config/pkcs11/modules" "$NSS_DIR/etc-pkcs11" "$@"
}

nss_uri() {
	printf 'pkcs11:token=NSS%%20Certificate%%20DB;id=%s;type=private?module-name=%s' \
		"$(printf '%s' "$NSS_ID" | sed 's/../%&/g')" "$1"
}
