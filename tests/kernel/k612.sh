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
UNSIGNED_RE='Loading of unsigned module is rejected'

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

phase modules
OBJ=$OBJ_XZ
kc_testmods "$T/ext-xz" modules $EXT_MODS
OBJ=$OBJ_ZST
kc_testmods "$T/ext-zst" modules $EXT_MODS
n_in=$(grep -c . "$OBJ_XZ/modules.order")
n_all=$((n_in + 3))

phase token
t_token
token_key k612xz 11 "$OBJ_XZ"
token_key k612zst 12 "$OBJ_ZST"
export KBUILD_SIGN_PIN=$PIN
URI_XZ="pkcs11:token=modsign-test;object=k612xz;type=private?module-path=$SLOWTOKEN"
URI_ZST="pkcs11:token=modsign-test;object=k612zst;type=private?module-path=$SLOWTOKEN"
# One process on the token at a time (kbuild.sh says why).
export SLOWTOKEN_EXCLUSIVE=$T/token.lock

phase trees
OBJ=$OBJ_XZ
kc_tree_copy "$T/tree-xz-sf"
kc_tree_copy "$T/tree-xz-ms"
install -m 0755 "$MODSIGN" "$T/tree-xz-ms/scripts/sign-file"
OBJ=$OBJ_ZST
kc_tree_copy "$T/tree-zst-sf"
kc_tree_copy "$T/tree-zst-ms"
install -m 0755 "$MODSIGN" "$T/tree-zst-ms/scripts/sign-file"
kc_srctree_patched "$T/src-bulk" "$TOP/contrib/kbuild/linux-6.12-bulk-sign.patch"

# === the xz kernel =====================================================

OBJ=$OBJ_XZ
KVER=$KVER_XZ
CERT=$OBJ_XZ/certs/signing_key.x509
kc_initrd xz

phase "X1 drop-in xz"
dropin "X1 6.12 drop-in, xz" "$T/tree-xz-ms" "$T/ext-xz" "$T/x1" .ko.xz "$URI_XZ"

phase "X3 bulk patch xz"
if kinstall X3 "$PSRC" "$T/tree-xz-ms" "$T/ext-xz" "$T/x3" CONFIG_MODULE_SIG_ALL=y \
	CONFIG_MODULE_SIG_KEY="$URI_XZ"; then
	check_compressed "X3 6.12 kbuild patch, xz" "$T/x3" .ko.xz "$n_all" "$CERT"
	check_calls "X3 6.12 kbuild patch, xz (one sign-file -b per make)" "$T/p11-X3.log" 2 2 2
	load_compressed "X3 6.12 kbuild patch, xz" "$T/x3" .ko.xz
	# RSA is deterministic and xz too: the same files as one by one.
	same_files "X3 6.12 kbuild patch, xz" "$T/x3" "$T/x1" .ko.xz
else
	make_failed "X3 6.12 kbuild patch, xz" "$T/make-X3.log"
fi

phase "X5 two-stage xz"
if kinstall X5 "$SRC" "$T/tree-xz-sf" "$T/ext-xz" "$T/x5"; then
	check_compressed "X5 unsigned install, xz" "$T/x5" .ko.xz "$n_all" "$CERT" unsigned
	for f in $(modules_of "$T/x5" .ko.xz | head -n 2); do
		mod=$(basename "$f" .ko.xz)
		add_case "refused: unsigned ${mod}.ko.xz" "${mod//-/_}" "$f" REFUSED "$UNSIGNED_RE" finit
	done
	# The wrong order: a signature appended to the compressed file is not
	# seen once the kernel has decompressed it.
	f=$(modules_of "$T/x5" .ko.xz | head -n 1)
	cp "$f" "$T/appended.ko.xz"
	if "$OBJ/scripts/sign-file" sha512 "$OBJ/certs/signing_key.pem" "$CERT" "$T/appended.ko.xz" \
		>"$T/.sign" 2>&1; then
		mod=$(basename "$f" .ko.xz)
		add_case "refused: sign-file's signature appended to a .ko.xz" "${mod//-/_}" \
			"$T/appended.ko.xz" REFUSED "$UNSIGNED_RE" finit
	else
		t_fail "sign-file on a .ko.xz" "$(cat "$T/.sign")"
	fi
	two_stage "X5 two-stage xz" "$T/x5" .ko.xz "$URI_XZ"
else
	make_failed "X5 unsigned install, xz" "$T/make-X5.log"
fi

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
if kinstall X8 "$SRC" "$T/tree-xz-ms" "$T/ext-xz" "$T/x8" CONFIG_MODULE_SIG_ALL=y \
	CONFIG_MODULE_SIG_KEY="$URI_XZ" CONFIG_MODULE_SIG_HASH=sha3-384; then
	check_compressed "X8 6.12 drop-in, xz, sha3-384" "$T/x8" .ko.xz "$n_all" "$CERT"
	load_compressed "X8 6.12 drop-in, xz, sha3-384" "$T/x8" .ko.xz
else
	make_failed "X8 6.12 drop-in, xz, sha3-384" "$T/make-X8.log"
fi

echo "$ncase cases packed for the xz kernel"
kc_boot "6.12 xz"
grep -q "^KC-BOOT Loaded X.509 cert 'modsign test: TEST-ONLY modsign ec521: " "$BD/console.txt" &&
	t_pass "boot 6.12: the ec521 (P-521) certificate is a built-in trusted key" ||
	t_fail "boot 6.12: the ec521 (P-521) certificate is a built-in trusted key" \
		"$(grep '^KC-BOOT' "$BD/console.txt")"
kc_results

# === the zstd kernel ===================================================

OBJ=$OBJ_ZST
KVER=$KVER_ZST
CERT=$OBJ_ZST/certs/signing_key.x509
kc_initrd zstd

phase "Z1 drop-in zstd"
dropin "Z1 6.12 drop-in, zstd" "$T/tree-zst-ms" "$T/ext-zst" "$T/z1" .ko.zst "$URI_ZST"
# One kernel decompresses one format: the xz one, signed, is refused here.
f=$(modules_of "$T/x1" .ko.xz 2>/dev/null | head -n 1)
if [ -n "$f" ]; then
	mod=$(basename "$f" .ko.xz)
	add_case "refused: a signed .ko.xz on the zstd kernel" "${mod//-/_}" "$f" REFUSED \
		'Invalid argument.*not a zstd compressed module' finit
fi

phase "Z5 two-stage zstd"
if kinstall Z5 "$SRC" "$T/tree-zst-sf" "$T/ext-zst" "$T/z5"; then
	two_stage "Z5 two-stage zstd" "$T/z5" .ko.zst "$URI_ZST"
else
	make_failed "Z5 unsigned install, zstd" "$T/make-Z5.log"
fi

no_pin_in_make_logs

echo "$ncase cases in all"
kc_boot "6.12 zstd"
kc_results
kc_done
