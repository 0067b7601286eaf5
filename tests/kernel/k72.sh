#!/bin/bash
# kernel-check, part "k72": Linux 7.2 from Debian's unstable suite
# (linux-source-7.2, downloaded through a private sources list: lib.sh,
# kc_apt_suite), proving there what k612.sh proves on 6.12. Built twice
# from tinyconfig (kernel.config, kernel-6.12.config, kernel-7.2.config):
# with CONFIG_MODULE_COMPRESS_XZ and SHA-1 built in (kernel-sha1.config),
# and with CONFIG_MODULE_COMPRESS_ZSTD and no SHA-1 (from the xz build's
# objects).
#
#   direct  modsign called directly: RSA-2048/4096, P-256, P-384 (and
#           P-521) with sha256/384/512, SHA-3 with RSA and EC, PEM file and
#           token (key and certificate by pkcs11: URI), -k, one -b run;
#           `openssl cms -verify` accepts each signature
#   X1/Z1   modsign as scripts/sign-file, `make -j2 modules_install`:
#           kbuild signs, then compresses (.ko.xz, .ko.zst)
#   X2      X1 under `modsign agent`: one login for both makes
#   X3      contrib/kbuild's 7.2 Makefile.modinst patch: one sign-file -b
#           call and one login per make (in-tree, then M=), then
#           compression; a failed signature fails make (in-tree and M=)
#   X5/Z5   two-stage: installed unsigned and compressed, then one
#           `modsign -b -r` over the staging tree
#   X8      kbuild with CONFIG_MODULE_SIG_HASH=sha3-384
#   SHA-1   7.x offers no SHA-1 in Kconfig (a .config asking for it gets
#           sha512); modsign warns; the kernel still verifies a sha1
#           signature when SHA-1 is built in, and refuses it when not
# and what must be refused: unsigned modules, a signature appended to a
# compressed file, the untrusted key, a .ko.xz on the zstd kernel.
# Environment: see lib.sh.

MODSIGN=${MODSIGN:-$(cd "$(dirname "$0")/../.." && pwd)/modsign}
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"

SLOWTOKEN=$TOP/build/slowtoken.so
EXT_MODS="kc_hello kc_param kc_data"
UNSIGNED_RE='Loading of unsigned module is rejected'
PKG=linux-source-7.2/sid

kc_setup k72
need depmod patch xargs xz zstd
[ -f "$SLOWTOKEN" ] || die "$SLOWTOKEN not built: run make build/slowtoken.so"
kc_finit
kc_kernel 7.2-xz "$PKG" kernel.config kernel-6.12.config kernel-7.2.config kernel-xz.config \
	kernel-sha1.config
OBJ_XZ=$OBJ
KVER_XZ=$KVER
KC_SEED=$KB kc_kernel 7.2-zstd "$PKG" kernel.config kernel-6.12.config kernel-7.2.config \
	kernel-zstd.config
OBJ_ZST=$OBJ
KVER_ZST=$KVER
case $KVER_XZ in
7.*) ;;
*) die "linux-source-7.2 built kernel $KVER_XZ, not 7.x" ;;
esac

# --- modules, token, trees ---------------------------------------------

kc_pair_setup k72 13
[ "$n_in" -ge 3 ] ||
	die "the 7.2 build has $n_in in-tree modules (modules.order), want test_module, md4, rmd160"

kc_srctree_patched "$T/src-bulk" "$TOP/contrib/kbuild/linux-7.2-bulk-sign.patch"

# === the xz kernel (SHA-1 built in) ====================================

kc_use xz
DIRECT_MODS=$T/ext-xz

# --- modsign called directly: every key type and hash --------------------

phase "direct xz"
# The kernel's own sign-file (OpenSSL) as the oracle: 7.2 takes SHA-2 and
# SHA-3 signatures, or the modsign cases below would prove nothing. (RSA:
# Debian 12's OpenSSL 3.0 makes no CMS with ECDSA and SHA-3.)
signfile_case "7.2: sign-file (OpenSSL) sha512 loads" kc_hello sha512 rsa2048
signfile_case "7.2: sign-file (OpenSSL) sha3-256 loads" kc_hello sha3-256 rsa2048
sign_matrix "SHA-2 on 7.2" kc_param "sha256 sha384 sha512" "rsa2048 rsa4096 ec256 ec384"
sign_matrix "SHA-3 on 7.2" kc_data "sha3-256 sha3-384 sha3-512" "rsa2048 ec256 ec384"
direct "7.2 verifies P-521: ec521 sha512 PEM" kc_hello LOADED "" -- \
	sha512 "$DATA/ec521.key.pem" "$DATA/ec521.x509.pem"
direct "7.2 verifies P-521: ec521 sha3-512 token" kc_hello LOADED "" -- \
	sha3-512 "$(key_uri ec521)" "$(cert_uri ec521)"
# The other signer identifier (subjectKeyIdentifier, -k), RSA and EC.
direct "7.2: rsa4096 sha256 token -k" kc_param LOADED "" -- \
	-k sha256 "$(key_uri rsa4096)" "$(cert_uri rsa4096)"
direct "7.2: ec384 sha3-384 PEM -k" kc_data LOADED "" -- \
	-k sha3-384 "$DATA/ec384.key.pem" "$DATA/ec384.x509.pem"
# Bulk mode: the three test modules in one run, one login.
mkdir -p "$T/bulk"
cp "$T"/ext-xz/kc_*.ko "$T/bulk/"
if "$MODSIGN" -b sha384 "$(key_uri ec256)" "$(cert_uri ec256)" "$T"/bulk/kc_*.ko >"$T/.sign" 2>&1; then
	for m in $EXT_MODS; do
		add_case "7.2: ec256 sha384 token, one -b run: $m" "$m" "$T/bulk/$m.ko" LOADED
	done
else
	t_fail "sign: 7.2 ec256 sha384 token -b" "$(cat "$T/.sign")"
fi
# Refused: unsigned, and signed by the key the kernel does not trust.
add_case "7.2 refuses: unsigned kc_hello.ko" kc_hello "$T/ext-xz/kc_hello.ko" REFUSED "$UNSIGNED_RE"
direct "7.2 refuses: signed with the untrusted key" kc_hello REFUSED \
	'Loading of module with unavailable key is rejected' -- \
	sha256 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.pem"

# --- SHA-1: what 7.x changed ----------------------------------------------

phase "SHA-1"
# Kconfig offers no SHA-1 module-signing hash any more (6.1 had MODULE_SIG_SHA1).
if grep -q '^config MODULE_SIG_SHA512$' "$SRC/kernel/module/Kconfig" &&
	! grep -q '^config MODULE_SIG_SHA1$' "$SRC/kernel/module/Kconfig"; then
	t_pass "SHA-1: 7.2's kernel/module/Kconfig offers no MODULE_SIG_SHA1"
else
	t_fail "SHA-1: 7.2's kernel/module/Kconfig offers no MODULE_SIG_SHA1" \
		"$(grep -n 'config MODULE_SIG_SHA' "$SRC/kernel/module/Kconfig")"
fi
# A .config from an older kernel that chose SHA-1 gets the default hash.
mkdir -p "$T/oldcfg"
{ grep -v 'MODULE_SIG_SHA\|MODULE_SIG_HASH' "$OBJ/.config"
  echo 'CONFIG_MODULE_SIG_SHA1=y'
  echo 'CONFIG_MODULE_SIG_HASH="sha1"'; } >"$T/oldcfg/.config"
if make -C "$SRC" O="$T/oldcfg" olddefconfig >"$T/.cmd" 2>&1; then
	if grep -qx 'CONFIG_MODULE_SIG_HASH="sha512"' "$T/oldcfg/.config" &&
		! grep -q '^CONFIG_MODULE_SIG_SHA1=' "$T/oldcfg/.config"; then
		t_pass "SHA-1: olddefconfig turns an old .config's CONFIG_MODULE_SIG_SHA1=y into sha512"
	else
		t_fail "SHA-1: olddefconfig turns an old .config's CONFIG_MODULE_SIG_SHA1=y into sha512" \
			"$(grep MODULE_SIG "$T/oldcfg/.config")"
	fi
else
	t_fail "SHA-1: make olddefconfig" "$(tail -n 10 "$T/.cmd")"
fi
# modsign still signs sha1 (older kernels take it) but says 7.x dropped it;
# this kernel, with SHA-1 built in as distribution kernels have it, still
# verifies it: the PKCS#7 parser knows the OID.
direct "SHA-1: 7.2 with SHA-1 built in loads modsign's sha1 rsa2048 PEM" kc_hello LOADED "" -- \
	sha1 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem"
SHA1_RSA=$LAST
if grep -q 'sha1 is deprecated: kernels 7.0 and later no longer offer it' "$T/.sign"; then
	t_pass "SHA-1: modsign warns that kernels 7.0 and later no longer offer sha1"
else
	t_fail "SHA-1: modsign warns that kernels 7.0 and later no longer offer sha1" "$(cat "$T/.sign")"
fi
direct "SHA-1: 7.2 with SHA-1 built in loads modsign's sha1 ec256 token" kc_param LOADED "" -- \
	sha1 "$(key_uri ec256)" "$(cert_uri ec256)"
SHA1_EC=$LAST

# --- kbuild: the drop-in, the agent, the bulk patch, two stages ----------

phase "X1 drop-in xz"
dropin "X1 7.2 drop-in, xz" "$T/tree-xz-ms" "$T/ext-xz" "$T/x1" .ko.xz "$URI_XZ"

phase "X2 agent xz"
if have_agent "X2 (the drop-in under the agent)"; then
	KC_AGENT=$URI_XZ dropin "X2 7.2 drop-in under modsign agent, xz" "$T/tree-xz-ms" \
		"$T/ext-xz" "$T/x2" .ko.xz "$URI_XZ"
	# RSA is deterministic and xz too: the same files as without the agent.
	same_files "X2 7.2 drop-in under modsign agent, xz" "$T/x2" "$T/x1" .ko.xz
fi

phase "X3 bulk patch xz"
dropin "X3 7.2 kbuild patch, xz" "$T/tree-xz-ms" "$T/ext-xz" "$T/x3" .ko.xz "$URI_XZ" "$PSRC" 2
# RSA is deterministic and xz too: the same files as one by one.
same_files "X3 7.2 kbuild patch, xz" "$T/x3" "$T/x1" .ko.xz
# A key the token does not hold: the one sign-file -b call fails, and so
# must make, for the in-tree install and for M= (which upstream lets pass
# unsigned with '|| true'); nothing gets compressed, no list file is left.
for m in in-tree "M=$T/ext-xz"; do
	run="X3f 7.2 kbuild patch, ${m%%/*}: a failed signature fails make"
	rm -rf "$T/x3f"
	if nice -n 10 make -C "$PSRC" O="$T/tree-xz-ms" ${m#in-tree} INSTALL_MOD_PATH="$T/x3f" \
		CONFIG_MODULE_SIG_ALL=y CONFIG_MODULE_SIG_KEY="${URI_XZ/object=k72xz;/object=k72none;}" \
		modules_install >"$T/make-X3f.log" 2>&1; then
		t_fail "$run" "make succeeded: $(grep SIGN "$T/make-X3f.log")"
	elif ! grep -q '__modsign_bulk\] Error' "$T/make-X3f.log"; then
		t_fail "$run" "make failed elsewhere: $(tail -n 10 "$T/make-X3f.log")"
	elif [ -n "$(find "$T/x3f" -name '*.ko.xz' -o -name .modules-to-sign)" ]; then
		t_fail "$run" "left: $(find "$T/x3f" -name '*.ko.xz' -o -name .modules-to-sign)"
	else
		t_pass "$run; nothing compressed, no list file left"
	fi
done

kc_x5 7.2

kc_x8 7.2

kc_xz_mt 7.2

echo "$ncase cases packed for the xz kernel"
kc_boot "7.2 xz"
kc_boot_certs 7.2 rsa2048 rsa4096 ec256 ec384 ec521
kc_results

# === the zstd kernel (no SHA-1) ========================================

kc_zstd_cases 7.2

# Without SHA-1 in the kernel, the sha1 signatures the xz kernel took are
# refused: the digest cannot be computed (-ENOPKG). The modules were built
# against the xz tree; the zstd tree has the same vermagic and symbols.
[ -n "$SHA1_RSA" ] && add_case "SHA-1: 7.2 without SHA-1 refuses the sha1 rsa2048 module" \
	kc_hello "$SHA1_RSA" REFUSED 'Loading of module with unsupported crypto is rejected'
[ -n "$SHA1_EC" ] && add_case "SHA-1: 7.2 without SHA-1 refuses the sha1 ec256 module" \
	kc_param "$SHA1_EC" REFUSED 'Loading of module with unsupported crypto is rejected'
# ... while the same module signed with sha512 loads there.
DIRECT_MODS=$T/ext-xz
direct "7.2 zstd: rsa2048 sha512 PEM loads" kc_hello LOADED "" -- \
	sha512 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem"

no_pin_in_make_logs

echo "$ncase cases in all"
kc_boot "7.2 zstd"
kc_results
kc_done
