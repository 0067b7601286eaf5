#!/bin/bash
# kernel-check, part "k612": Linux 6.12 from Debian's linux-source-6.12,
# built twice from tinyconfig (kernel.config + kernel-6.12.config): once
# with CONFIG_MODULE_COMPRESS_XZ and once with CONFIG_MODULE_COMPRESS_ZSTD,
# both with CONFIG_MODULE_DECOMPRESS (a kernel decompresses only the format
# it was built for; the zstd build starts from the xz build's objects).
# Compressed modules are loaded with kc-finit, finit_module(2) with
# MODULE_INIT_COMPRESSED_FILE, so the kernel itself decompresses and then
# checks the signature.
#
#   X1/Z1  modsign as scripts/sign-file, `make -j2 modules_install`: kbuild
#          signs, then compresses (.ko.xz, .ko.zst)
#   X3     contrib/kbuild's 6.12 Makefile.modinst patch: one sign-file -b
#          call, one login, then compression
#   X5/Z5  two-stage: installed unsigned and compressed, then one
#          `modsign -b -r` over the staging tree
#   SHA-3  sha3-256/384/512 signatures by modsign (PEM key and token, RSA
#          and EC) load; `openssl cms -verify` accepts them
#   P-521  6.12 verifies P-521 keys: an ec521 signature by modsign loads
# and what must be refused: a signature appended to a compressed file (the
# wrong order), an unsigned module, a .ko.xz on the zstd kernel.
# Environment: see lib.sh.

MODSIGN=${MODSIGN:-$(cd "$(dirname "$0")/../.." && pwd)/modsign}
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"

SLOWTOKEN=$TOP/build/slowtoken.so
EXT_MODS="kc_hello kc_param kc_data"

kc_setup k612
need depmod patch xargs xz zstd
[ -f "$SLOWTOKEN" ] || die "$SLOWTOKEN not built: run make build/slowtoken.so"
kc_finit
kc_kernel 6.12-xz linux-source-6.12 kernel.config kernel-6.12.config kernel-xz.config
OBJ_XZ=$OBJ
KVER_XZ=$KVER
KC_SEED=$KB kc_kernel 6.12-zstd linux-source-6.12 kernel.config kernel-6.12.config kernel-zstd.config
OBJ_ZST=$OBJ
KVER_ZST=$KVER

# --- modules, token, trees ---------------------------------------------

kc_pair_setup k612 11

kc_srctree_patched "$T/src-bulk" "$TOP/contrib/kbuild/linux-6.12-bulk-sign.patch"

# === the xz kernel =====================================================

kc_use xz

phase "X1 drop-in xz"
dropin "X1 6.12 drop-in, xz" "$T/tree-xz-ms" "$T/ext-xz" "$T/x1" .ko.xz "$URI_XZ"

phase "X3 bulk patch xz"
dropin "X3 6.12 kbuild patch, xz" "$T/tree-xz-ms" "$T/ext-xz" "$T/x3" .ko.xz "$URI_XZ" "$PSRC" 2
# RSA is deterministic and xz too: the same files as one by one.
same_files "X3 6.12 kbuild patch, xz" "$T/x3" "$T/x1" .ko.xz

kc_x5 6.12

# --- SHA-3, P-521, sanity: modsign called directly -----------------------

phase "direct xz"
DIRECT_MODS=$T/ext-xz
direct "6.12: rsa2048 sha256 PEM" kc_hello LOADED "" -- \
	sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem"
direct "6.12: ec384 sha384 token" kc_param LOADED "" -- \
	sha384 "$(key_uri ec384)" "$(cert_uri ec384)"
direct "6.12 verifies P-521: ec521 sha512 PEM" kc_data LOADED "" -- \
	sha512 "$DATA/ec521.key.pem" "$DATA/ec521.x509.pem"
direct "6.12 verifies P-521: ec521 sha256 token -k" kc_hello LOADED "" -- \
	-k sha256 "$(key_uri ec521)" "$(cert_uri ec521)"

# The kernel's own sign-file (OpenSSL) makes SHA-3 signatures: the 6.12
# kernel must take them, or the modsign cases below would prove nothing.
signfile_case "6.12: sign-file (OpenSSL) sha3-256 loads" kc_hello sha3-256 rsa2048
# SHA-3 by modsign: each hash, RSA and EC, from the PEM file and the token.
sign_matrix SHA-3 kc_param "sha3-256 sha3-384 sha3-512" "rsa2048 ec256"
# kbuild with a SHA-3 hash: the drop-in as kbuild calls it.
kc_x8 6.12

kc_xz_mt 6.12

echo "$ncase cases packed for the xz kernel"
kc_boot "6.12 xz"
kc_boot_certs 6.12 ec521
kc_results

# === the zstd kernel ===================================================

kc_zstd_cases 6.12

no_pin_in_make_logs

echo "$ncase cases in all"
kc_boot "6.12 zstd"
kc_results
kc_done
