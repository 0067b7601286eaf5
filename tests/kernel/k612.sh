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

# --- helpers -----------------------------------------------------------

# unpack FILE OUT: the module inside a .ko.xz or .ko.zst.
unpack() {
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -q -dc "$1" >"$2" ;;
	esac
}

# check_compressed RUN STAGE SUFFIX COUNT CERT [unsigned]: COUNT modules
# with SUFFIX and no .ko left; each a stream the kernel's decoder takes (xz:
# a CRC32 check; zstd: one frame), and the module inside signed and
# verified against CERT (or, with "unsigned", not signed).
check_compressed() {
	local run=$1 stage=$2 suffix=$3 want=$4 cert=$5 mode=${6:-signed} n f bad=""
	n=$(modules_of "$stage" "$suffix" | grep -c .)
	if [ "$n" -ne "$want" ] || [ -n "$(modules_of "$stage" .ko)" ]; then
		t_fail "$run: $want $suffix modules installed, no .ko" "$(find "$stage" -name '*.ko*')"
		return
	fi
	for f in $(modules_of "$stage" "$suffix"); do
		case $suffix in
		.ko.xz)
			xz --robot --list "$f" 2>/dev/null | grep -q '^file.*	CRC32	' ||
				bad="$bad ${f#"$stage"/}(not xz with CRC32)" ;;
		.ko.zst)
			zstd -q -t "$f" 2>/dev/null || bad="$bad ${f#"$stage"/}(not zstd)" ;;
		esac
		unpack "$f" "$T/.unpacked.ko" || bad="$bad ${f#"$stage"/}(does not decompress)"
		if [ "$mode" = unsigned ]; then
			is_signed "$T/.unpacked.ko" && bad="$bad ${f#"$stage"/}(signed)"
		elif ! is_signed "$T/.unpacked.ko"; then
			bad="$bad ${f#"$stage"/}(unsigned inside)"
		elif ! "$MODSIGN" verify -c "$cert" "$T/.unpacked.ko" >"$T/.verify" 2>&1; then
			bad="$bad ${f#"$stage"/}($(head -n 1 "$T/.verify"))"
		fi
	done
	if [ -z "$bad" ]; then
		t_pass "$run: $n $suffix modules installed, each $mode inside"
	else
		t_fail "$run: $want $suffix modules, each $mode inside" "bad:$bad"
	fi
}

# load_all RUN STAGE SUFFIX: each installed module must load, decompressed
# by the kernel (kc-finit).
load_all() {
	local run=$1 stage=$2 suffix=$3 f mod
	for f in $(modules_of "$stage" "$suffix"); do
		mod=$(basename "$f" "$suffix")
		mod=${mod//-/_}
		add_case "$run: loads ${f#"$stage"/lib/modules/*/}" "$mod" "$f" LOADED "" finit
	done
}

# dropin RUN TREE EXT STAGE SUFFIX URI: modsign as TREE's scripts/sign-file,
# `make -j2 modules_install` with the key URI: kbuild signs each module,
# then compresses it; one token start-up and login per module.
dropin() {
	local run=$1 tree=$2 ext=$3 stage=$4 suffix=$5 uri=$6
	if kinstall "${run%% *}" "$SRC" "$tree" "$ext" "$stage" CONFIG_MODULE_SIG_ALL=y \
		CONFIG_MODULE_SIG_KEY="$uri"; then
		check_compressed "$run" "$stage" "$suffix" "$n_all" "$CERT"
		check_calls "$run (one sign-file per module)" "$T/p11-${run%% *}.log" \
			"$n_all" "$n_all" "$n_all"
		load_all "$run" "$stage" "$suffix"
	else
		make_failed "$run" "$T/make-${run%% *}.log"
	fi
}

# two_stage RUN STAGE SUFFIX URI: STAGE, installed unsigned and compressed,
# signed by one `modsign -b -r`: each module signed inside, one login.
two_stage() {
	local run=$1 stage=$2 suffix=$3 uri=$4
	export SLOWTOKEN_LOG=$T/p11-${run%% *}.log
	: >"$SLOWTOKEN_LOG"
	if "$MODSIGN" -b -r "$stage/lib/modules" sha512 "$uri" "$CERT" >"$T/.sign" 2>&1; then
		check_compressed "$run: one modsign -b -r" "$stage" "$suffix" "$n_all" "$CERT"
		check_calls "$run: one modsign -b -r" "$SLOWTOKEN_LOG" 1 1 1
		load_all "$run" "$stage" "$suffix"
	else
		t_fail "$run: modsign -b -r" "$(cat "$T/.sign")"
	fi
	unset SLOWTOKEN_LOG
}

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
	load_all "X3 6.12 kbuild patch, xz" "$T/x3" .ko.xz
	# RSA is deterministic and xz too: the same files as one by one.
	differ=""
	for f in $(modules_of "$T/x3" .ko.xz); do
		cmp -s "$f" "$T/x1/${f#"$T"/x3/}" || differ="$differ ${f#"$T"/x3/}"
	done
	if [ -z "$differ" ]; then
		t_pass "X3 6.12 kbuild patch, xz: every .ko.xz byte for byte as X1's"
	else
		t_fail "X3 6.12 kbuild patch, xz: every .ko.xz byte for byte as X1's" "differ:$differ"
	fi
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
cert_uri() {
	printf 'pkcs11:token=modsign-test;object=%s;type=cert?module-path=%s' "$1" "$SOFTHSM"
}

# direct NAME MODULE EXPECT PATTERN -- MODSIGN-ARGS: a fresh copy of the
# uncompressed test module, signed with MODSIGN-ARGS, loaded by insmod.
direct() {
	local name=$1 mod=$2 expect=$3 pattern=$4 f
	shift 5
	f=$T/w/$ncase.$mod.ko
	mkdir -p "$T/w"
	cp "$T/ext-xz/$mod.ko" "$f"
	if "$MODSIGN" "$@" "$f" >"$T/.sign" 2>&1; then
		add_case "$name" "$mod" "$f" "$expect" "$pattern"
		LAST=$f
	else
		t_fail "sign: $name" "modsign $* $f" "$(cat "$T/.sign")"
		LAST=""
	fi
}

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
f=$T/w/sha3-signfile.ko
cp "$T/ext-xz/kc_hello.ko" "$f"
if "$OBJ/scripts/sign-file" sha3-256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem" "$f" \
	>"$T/.sign" 2>&1; then
	add_case "6.12: sign-file (OpenSSL) sha3-256 loads" kc_hello "$f" LOADED
else
	t_fail "sign-file sha3-256" "$(cat "$T/.sign")"
fi
# SHA-3 by modsign: each hash, RSA and EC, from the PEM file and the token.
for h in sha3-256 sha3-384 sha3-512; do
	for k in rsa2048 ec256; do
		for src in pem token; do
			if [ $src = pem ]; then
				set -- "$DATA/$k.key.pem" "$DATA/$k.x509.pem"
			else
				set -- "$(key_uri $k)" "$(cert_uri $k)"
			fi
			direct "SHA-3: modsign $h $k $src loads" kc_param LOADED "" -- "$h" "$@"
			[ -n "$LAST" ] || continue
			cp "$T/ext-xz/kc_param.ko" "$T/.unsigned.ko"
			if openssl_verify "$LAST" "$T/.unsigned.ko" "$DATA/$k.x509.pem"; then
				t_pass "SHA-3: openssl cms -verify accepts modsign's $h $k $src signature"
			else
				t_fail "SHA-3: openssl cms -verify accepts modsign's $h $k $src signature" \
					"$(cat "$T/.verify")"
			fi
		done
	done
done
# kbuild with a SHA-3 hash: the drop-in as kbuild calls it.
if kinstall X8 "$SRC" "$T/tree-xz-ms" "$T/ext-xz" "$T/x8" CONFIG_MODULE_SIG_ALL=y \
	CONFIG_MODULE_SIG_KEY="$URI_XZ" CONFIG_MODULE_SIG_HASH=sha3-384; then
	check_compressed "X8 6.12 drop-in, xz, sha3-384" "$T/x8" .ko.xz "$n_all" "$CERT"
	load_all "X8 6.12 drop-in, xz, sha3-384" "$T/x8" .ko.xz
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
