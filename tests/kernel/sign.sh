#!/bin/bash
# kernel-check, part "sign": modsign called directly. Boots the Linux 6.1
# kernel of tests/kernel (CONFIG_MODULE_SIG_FORCE, the TEST-ONLY
# certificates of tests/data built in) and asks it to load modules signed by
# modsign in every way that must load, and damaged in ways that must be
# refused (tests/kernel/README.md, "sign.sh").
#
# 1. The 6.1 kernel is built (or taken from the cache) by lib.sh.
# 2. The three modules of tests/kernel/modules are built against that tree,
#    unsigned, and signed by modsign (./modsign, the release build).
# 3. They go into an initramfs with Debian's static busybox; tests/kernel/init
#    runs insmod on each under qemu-system-x86_64 (software emulation) and
#    prints one line per module; lib.sh compares them with what each case
#    expects and prints PASS/FAIL lines and "sign: N passed, N failed".
# Environment: see lib.sh.

MODSIGN=${MODSIGN:-$(cd "$(dirname "$0")/../.." && pwd)/modsign}
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"

TRUSTED="rsa2048 rsa4096 ec256 ec384"
HASHES="sha256 sha384 sha512"
MODS="kc_hello kc_param kc_data"

# unsigned MODULE DEST: a fresh unsigned copy of a test module.
unsigned() {
	cp "$T/mod/$1.ko" "$2"
}

# sign_case NAME MODULE EXPECT PATTERN -- MODSIGN-ARGS: a fresh copy of MODULE,
# signed by modsign with MODSIGN-ARGS and the copy, becomes a case.
# A signing failure is a failed case and goes no further.
sign_case() {
	local name=$1 mod=$2 expect=$3 pattern=$4 f
	shift 5
	f=$T/w/$ncase.$mod.ko
	unsigned "$mod" "$f"
	if "$MODSIGN" "$@" "$f" >"$T/.sign" 2>&1; then
		add_case "$name" "$mod" "$f" "$expect" "$pattern"
	else
		t_fail "sign: $name" "modsign $* $f" "$(cat "$T/.sign")"
	fi
}

kc_setup sign
kc_kernel 6.1 linux-source-6.1 kernel.config kernel-6.1.config

# --- 2. test modules ---------------------------------------------------

phase modules
kc_testmods "$T/modsrc" modules $MODS
mkdir -p "$T/mod" "$T/w"
for m in $MODS; do
	cp "$T/modsrc/$m.ko" "$T/mod/$m.ko"
done
echo "built $MODS against $KVER, unsigned"
kc_initrd sign

# --- 3. sign -----------------------------------------------------------

phase sign
t_token
export KBUILD_SIGN_PIN=$PIN

# Must load: each trusted key, from the PEM file and from the token, each
# hash, with and without -k, one module at a time and all three in one -b run.
i=0
for src in pem token; do
	for k in $TRUSTED; do
		if [ $src = pem ]; then
			kk=$DATA/$k.key.pem
			kc=$DATA/$k.x509.pem
		else
			kk=$(key_uri "$k")
			kc=$(cert_uri "$k")
		fi
		for h in $HASHES; do
			for opt in "" -k; do
				desc="$src $k $h${opt:+ $opt}"
				set -- $MODS
				shift $((i % 3))
				m=${1:-kc_hello}
				i=$((i + 1))
				sign_case "load: $desc single $m" "$m" LOADED "" -- \
					$opt "$h" "$kk" "$kc"
				mkdir -p "$T/w/bulk$i"
				for m in $MODS; do
					unsigned "$m" "$T/w/bulk$i/$m.ko"
				done
				if "$MODSIGN" -b $opt "$h" "$kk" "$kc" "$T"/w/bulk$i/*.ko >"$T/.sign" 2>&1; then
					for m in $MODS; do
						add_case "load: $desc bulk $m" "$m" "$T/w/bulk$i/$m.ko" LOADED
					done
				else
					t_fail "sign: $desc bulk" "$(cat "$T/.sign")"
				fi
			done
		done
	done
done

# Must be refused.
UNSIGNED_RE='Loading of unsigned module is rejected'
NOKEY_RE='Loading of module with unavailable key is rejected'
# A signature that does not verify: EKEYREJECTED from the verifier itself,
# which logs nothing (the policy refusals above log a line).
BADSIG_RE='Key was rejected by service +\| *$'

for m in $MODS; do
	add_case "refused: unsigned $m" "$m" "$T/mod/$m.ko" REFUSED "$UNSIGNED_RE"
done
sign_case "refused: untrusted key other-rsa2048" kc_hello REFUSED "$NOKEY_RE" -- \
	sha256 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.pem"
sign_case "refused: untrusted key other-rsa2048 -k" kc_param REFUSED "$NOKEY_RE" -- \
	-k sha512 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.pem"

# damaged NAME MODULE KEY HASH PATTERN EDIT: signed with KEY (a PEM file in
# tests/data), then EDIT FILE UNSIGNED-SIZE SIGNED-SIZE changes it.
damaged() {
	local name=$1 mod=$2 k=$3 h=$4 pattern=$5 edit=$6 f usize
	f=$T/w/damaged$ncase.$mod.ko
	unsigned "$mod" "$f"
	usize=$(size_of "$f")
	if ! "$MODSIGN" "$h" "$DATA/$k.key.pem" "$DATA/$k.x509.pem" "$f" >"$T/.sign" 2>&1; then
		t_fail "sign: $name" "$(cat "$T/.sign")"
		return
	fi
	$edit "$f" "$usize" "$(size_of "$f")"
	add_case "$name" "$mod" "$f" REFUSED "$pattern"
}
body_middle() { flip_byte "$1" $(($2 / 2)); }
body_first() { flip_byte "$1" 0; }
body_last() { flip_byte "$1" $(($2 - 1)); }
sig_last() { flip_byte "$1" $(($3 - 41)); }
sig_first() { flip_byte "$1" "$2"; }
marker() { flip_byte "$1" $(($3 - 2)); }
truncated() { truncate -s $(($3 - 1)) "$1"; }
id_type() { set_byte "$1" $(($3 - 38)) 1; }
pad() { set_byte "$1" $(($3 - 33)) 1; }
siglen_big() { set_byte "$1" $(($3 - 31)) 255; }
siglen_short() {
	lo=$(od -An -tu1 -j $(($3 - 29)) -N 1 "$1" | tr -d ' ')
	if [ "$lo" -gt 0 ]; then set_byte "$1" $(($3 - 29)) $((lo - 1)); else set_byte "$1" $(($3 - 29)) 255; fi
}
extra_byte() { printf 'x' >>"$1"; }

for k in rsa2048 ec256; do
	damaged "refused: $k, one body byte changed (middle)" kc_data $k sha256 "$BADSIG_RE" body_middle
	damaged "refused: $k, one body byte changed (last)" kc_hello $k sha256 "$BADSIG_RE" body_last
	damaged "refused: $k, last signature byte changed" kc_param $k sha256 "$BADSIG_RE" sig_last
done
damaged "refused: rsa4096, first body byte changed" kc_hello rsa4096 sha512 "$BADSIG_RE" body_first
damaged "refused: ec384, last signature byte changed" kc_data ec384 sha384 "$BADSIG_RE" sig_last
damaged "refused: PKCS#7 first byte changed" kc_hello rsa2048 sha256 'Bad message' sig_first
damaged "refused: trailer marker changed" kc_hello rsa2048 sha256 "$UNSIGNED_RE" marker
damaged "refused: file one byte short" kc_param rsa2048 sha256 "$UNSIGNED_RE" truncated
damaged "refused: one byte after the marker" kc_param rsa2048 sha256 "$UNSIGNED_RE" extra_byte
damaged "refused: trailer id_type 1" kc_hello rsa2048 sha256 \
	'not signed with expected PKCS#7 message.*Loading of module with unsupported crypto is rejected' id_type
damaged "refused: trailer padding not zero" kc_hello ec384 sha256 'unexpected non-zero params' pad
damaged "refused: trailer sig_len beyond the file" kc_data rsa4096 sha256 'Bad message' siglen_big
damaged "refused: trailer sig_len one short" kc_param ec256 sha256 'Bad message' siglen_short

# What 6.1 does not support, recorded (README: "What kernel-check proves").
# P-521: the certificate is in the bundle, 6.1 cannot parse its key.
for h in sha256 sha512; do
	sign_case "6.1 has no P-521: ec521 $h refused" kc_hello REFUSED "$NOKEY_RE" -- \
		"$h" "$DATA/ec521.key.pem" "$DATA/ec521.x509.pem"
done
# SHA-3: 6.1's PKCS#7 parser has none (6.7 added it; k612.sh loads them).
sign_case "6.1 has no SHA-3: modsign sha3-256 refused" kc_hello REFUSED \
	'Unsupported digest algo.*Loading of module with unsupported crypto is rejected' -- \
	sha3-256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem"
f=$T/w/sha3-signfile.ko
unsigned kc_hello "$f"
if "$OBJ/scripts/sign-file" sha3-256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem" "$f" >"$T/.sign" 2>&1; then
	add_case "6.1 has no SHA-3: sign-file (OpenSSL) sha3-256 refused" kc_hello "$f" REFUSED \
		'Unsupported digest algo.*Loading of module with unsupported crypto is rejected'
else
	echo "NOTE sign-file sha3-256: $(head -n 1 "$T/.sign")"
fi
echo "$ncase modules signed and packed"

# --- 4. boot -----------------------------------------------------------

kc_boot 6.1
grep '^KC-BOOT ' "$BD/console.txt" | sed 's/^KC-BOOT /kernel: /'
for k in $TRUSTED; do
	if grep -q "^KC-BOOT Loaded X.509 cert 'modsign test: TEST-ONLY modsign $k: " "$BD/console.txt"; then
		t_pass "boot: TEST-ONLY $k certificate is a built-in trusted key"
	else
		t_fail "boot: TEST-ONLY $k certificate is a built-in trusted key"
	fi
done
if grep -q "^KC-BOOT Problem loading in-kernel X.509 certificate (-65)" "$BD/console.txt" &&
	! grep -q "TEST-ONLY modsign ec521" "$BD/console.txt"; then
	t_pass "boot: 6.1 has no P-521: ec521 certificate not loaded (-ENOPKG)"
else
	t_fail "boot: 6.1 has no P-521: ec521 certificate not loaded (-ENOPKG)"
fi

# --- 5. results --------------------------------------------------------

kc_results
kc_done
