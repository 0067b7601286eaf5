#!/bin/bash
# kernel-check: boots a Linux 6.1 kernel that enforces module signatures
# (CONFIG_MODULE_SIG_FORCE) and trusts the TEST-ONLY certificates of
# tests/data, and asks it to load modules signed by modsign.
#
# 1. Debian's linux-source-6.1 is downloaded (apt-get download), unpacked and
#    built from `make tinyconfig` + tests/kernel/kernel.config in a cache
#    directory outside git, ${MODSIGN_KERNEL_CACHE:-/var/cache/modsign-kernel};
#    the built kernel is reused while the config fragment, the certificate
#    bundle, the source package and the compiler are unchanged.
# 2. The three modules of tests/kernel/modules are built against that tree,
#    unsigned, and signed by modsign (./modsign, the release build) in every
#    way that must load, and damaged in ways that must be refused.
# 3. They go into an initramfs with Debian's static busybox; tests/kernel/init
#    runs insmod on each under qemu-system-x86_64 (software emulation) and
#    prints one line per module; this script compares them with what each
#    case expects and prints PASS/FAIL lines and
#    "kernel-check: N passed, N failed".
#
# Environment: MODSIGN_KERNEL_CACHE (cache directory), MODSIGN_KERNEL_TIMEOUT
# (seconds for the qemu run, default 600), MODSIGN_KERNEL_JOBS (make -j,
# default 2), MODSIGN (the modsign binary, default ./modsign),
# MODSIGN_KERNEL_KEEP=1 (keep the work directory and print its path).
# Packages: linux-source-6.1 is fetched by this script; the build needs
# build-essential flex bison bc libelf-dev libssl-dev cpio kmod xz-utils
# openssl, the run busybox-static qemu-system-x86 softhsm2 opensc.

MODSIGN=${MODSIGN:-$(cd "$(dirname "$0")/../.." && pwd)/modsign}
. "$(dirname "$0")/../lib/common.sh"

KDIR=$TOP/tests/kernel
CACHE=${MODSIGN_KERNEL_CACHE:-/var/cache/modsign-kernel}
TIMEOUT=${MODSIGN_KERNEL_TIMEOUT:-600}
JOBS=${MODSIGN_KERNEL_JOBS:-2}
PKG=linux-source-6.1
TRUSTED="rsa2048 rsa4096 ec256 ec384"
HASHES="sha256 sha384 sha512"
MODS="kc_hello kc_param kc_data"
# Bumped when the way the kernel is built changes, to invalidate the cache.
RECIPE=1

# --- helpers -----------------------------------------------------------

# die MESSAGE...: a setup step failed; report it as a failed case and stop.
die() {
	t_fail "setup" "$@"
	kc_done
	exit 1
}

kc_done() {
	echo "kernel-check: $t_passed passed, $t_failed failed"
	[ "$t_failed" -eq 0 ]
}

# phase NAME: prints how long the previous phase took.
phase_start=$(date +%s)
phase_name=""
phase() {
	now=$(date +%s)
	[ -n "$phase_name" ] && echo "TIME $phase_name: $((now - phase_start))s"
	phase_start=$now
	phase_name=$1
}

quietly() {
	"$@" >"$T/.cmd" 2>&1 || die "command failed: $*" "$(tail -n 25 "$T/.cmd")"
}

need() {
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 ||
			die "$tool not found: install the packages listed in tests/kernel/README.md"
	done
}

# flip_byte FILE OFFSET: XOR one byte with 0x01 in place.
flip_byte() {
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	set_byte "$1" "$2" $((b ^ 1))
}

# set_byte FILE OFFSET VALUE: overwrite one byte in place.
set_byte() {
	printf '%b' "$(printf '\\%03o' "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

size_of() {
	stat -c %s "$1"
}

# --- cases -------------------------------------------------------------
# Each module that goes into the initramfs is one case: an id (cNNN), the
# module name, and what must happen: LOADED, or REFUSED with an extended
# regular expression the refusal (insmod's message and the kernel's log
# lines) must match.

ncase=0

# add_case NAME MODULE FILE EXPECT [PATTERN]: FILE is copied into the initramfs.
add_case() {
	local id
	ncase=$((ncase + 1))
	id=$(printf 'c%03d' "$ncase")
	cp "$3" "$T/initrd/m/$id.ko"
	printf '%s %s %s.ko\n' "$id" "$2" "$id" >>"$T/initrd/cases"
	printf '%s\t%s\t%s\t%s\n' "$id" "$4" "$1" "${5:-}" >>"$T/expect"
}

# unsigned MODULE DEST: a fresh unsigned copy of a test module.
unsigned() {
	cp "$T/mod/$1.ko" "$2"
}

# sign_case NAME MODULE EXPECT PATTERN -- MODSIGN-ARGS: a fresh copy of MODULE,
# signed by modsign with MODSIGN-ARGS and the copy, becomes a case.
# Signs with modsign; a signing failure is a failed case and goes no further.
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

# --- 0. tools ----------------------------------------------------------

t_setup
[ "${MODSIGN_KERNEL_KEEP:-0}" = 1 ] && trap 'echo "kept $T"' EXIT
need apt-get dpkg-deb tar xz make gcc flex bison bc openssl cpio gzip flock \
	qemu-system-x86_64 timeout sha256sum softhsm2-util pkcs11-tool readelf
[ -x "$MODSIGN" ] || die "$MODSIGN not built: run make modsign"
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || die "$BUSYBOX missing: install busybox-static"
readelf -l "$BUSYBOX" 2>/dev/null | grep -q 'INTERP' &&
	die "$BUSYBOX is dynamically linked: install busybox-static"

mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] ||
	die "cache directory $CACHE is not writable: set MODSIGN_KERNEL_CACHE"
CACHE=$(cd "$CACHE" && pwd)
exec 9>"$CACHE/.lock"
flock 9 || die "cannot lock $CACHE/.lock"

# --- 1. kernel: download, unpack, configure, build (cached) ------------

phase download
mkdir -p "$CACHE/deb"
deb=$(ls "$CACHE"/deb/${PKG}_*_all.deb 2>/dev/null | sort -V | tail -n 1)
if [ -z "$deb" ]; then
	rm -rf "$CACHE/deb/.partial"
	mkdir -p "$CACHE/deb/.partial"
	if ! (cd "$CACHE/deb/.partial" && apt-get download "$PKG") >"$T/.cmd" 2>&1; then
		if [ "$(id -u)" -eq 0 ]; then
			apt-get update >/dev/null 2>&1
			(cd "$CACHE/deb/.partial" && apt-get download "$PKG") >"$T/.cmd" 2>&1 ||
				die "apt-get download $PKG failed" "$(tail -n 5 "$T/.cmd")"
		else
			die "apt-get download $PKG failed (apt-get update first?)" "$(tail -n 5 "$T/.cmd")"
		fi
	fi
	for f in "$CACHE"/deb/.partial/"${PKG}"_*_all.deb; do
		dpkg-deb --info "$f" >/dev/null 2>&1 || die "apt-get download gave a broken $f"
		mv "$f" "$CACHE/deb/"
	done
	rm -rf "$CACHE/deb/.partial"
	deb=$(ls "$CACHE"/deb/${PKG}_*_all.deb 2>/dev/null | sort -V | tail -n 1)
	[ -n "$deb" ] || die "apt-get download $PKG left no .deb in $CACHE/deb"
	echo "downloaded $(basename "$deb")"
fi
debver=$(basename "$deb" _all.deb)
debver=${debver#"${PKG}"_}

phase extract
SRC=$CACHE/src-$debver/$PKG
if [ ! -e "$CACHE/src-$debver/.done" ]; then
	rm -rf "$CACHE/src-$debver"
	mkdir -p "$CACHE/src-$debver"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$PKG.tar.xz" |
		nice -n 10 tar -xJ -C "$CACHE/src-$debver" ||
		die "unpacking $deb failed"
	[ -f "$SRC/Makefile" ] || die "no $SRC/Makefile after unpacking $deb"
	touch "$CACHE/src-$debver/.done"
	echo "unpacked $PKG $debver"
fi

# The build is keyed on everything that goes into it.
cat "$DATA"/rsa2048.x509.pem "$DATA"/rsa4096.x509.pem "$DATA"/ec256.x509.pem \
	"$DATA"/ec384.x509.pem "$DATA"/ec521.x509.pem >"$T/trusted.pem"
key=$({ echo "recipe $RECIPE $debver"; gcc --version | head -n 1;
	cat "$KDIR/kernel.config" "$T/trusted.pem"; } | sha256sum | cut -c 1-16)
B=$CACHE/build-$key
OBJ=$B/obj
if [ -e "$B/.done" ]; then
	phase reuse
	echo "reusing the kernel built in $B"
else
	phase configure
	rm -rf "$B"
	mkdir -p "$OBJ"
	cp "$T/trusted.pem" "$B/trusted.pem"
	cp "$KDIR/kernel.config" "$B/kernel.config"
	quietly make -C "$SRC" O="$OBJ" tinyconfig
	{ cat "$KDIR/kernel.config"; echo "CONFIG_SYSTEM_TRUSTED_KEYS=\"$B/trusted.pem\""; } \
		>"$B/fragment.config"
	cat "$B/fragment.config" >>"$OBJ/.config"
	quietly make -C "$SRC" O="$OBJ" olddefconfig
	missing=""
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$OBJ/.config" || missing="$missing $line" ;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			grep -q "^$opt=" "$OBJ/.config" && missing="$missing $line" ;;
		esac
	done <"$B/fragment.config"
	[ -z "$missing" ] || die "after olddefconfig these lines of the config fragment are not in effect:" $missing
	echo "config: every line of tests/kernel/kernel.config is in .config"

	phase build
	echo "building $PKG $debver (tinyconfig + kernel.config), log in $B/build.log"
	nice -n 10 make -C "$SRC" O="$OBJ" -j"$JOBS" bzImage modules >"$B/build.log" 2>&1 ||
		die "kernel build failed, see $B/build.log" "$(tail -n 25 "$B/build.log")"
	[ -f "$OBJ/arch/x86/boot/bzImage" ] || die "no bzImage after the build"
	touch "$B/.done"
	# Keep the three most recently used builds.
	ls -1dt "$CACHE"/build-* 2>/dev/null | tail -n +4 | while read -r old; do
		echo "removing old build $old"
		rm -rf "$old"
	done
fi
touch "$B/.done"
exec 9>&-
kver=$(cat "$OBJ/include/config/kernel.release" 2>/dev/null)

# --- 2. test modules ---------------------------------------------------

phase modules
mkdir -p "$T/modsrc" "$T/mod" "$T/w" "$T/initrd/bin" "$T/initrd/m"
cp "$KDIR"/modules/Kbuild "$KDIR"/modules/*.c "$T/modsrc/"
quietly nice -n 10 make -C "$SRC" O="$OBJ" M="$T/modsrc" -j"$JOBS" modules
for m in $MODS; do
	cp "$T/modsrc/$m.ko" "$T/mod/$m.ko" || die "$m.ko was not built"
	tail -c 28 "$T/mod/$m.ko" | grep -q 'Module signature appended' &&
		die "$m.ko came out of the kernel build signed"
done
echo "built $MODS against $kver, unsigned"

# --- 3. sign -----------------------------------------------------------

phase sign
t_token
export KBUILD_SIGN_PIN=$PIN
: >"$T/initrd/cases"
: >"$T/expect"

cert_uri() {
	printf 'pkcs11:token=modsign-test;object=%s;type=cert?module-path=%s' "$1" "$SOFTHSM"
}

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
# SHA-3: modsign needs mbedTLS 3.5; 6.1's PKCS#7 parser has no SHA-3 either.
f=$T/w/sha3.ko
unsigned kc_hello "$f"
if "$MODSIGN" sha3-256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem" "$f" >"$T/.sign" 2>&1; then
	add_case "6.1 has no SHA-3: modsign sha3-256 refused" kc_hello "$f" REFUSED 'Unsupported digest algo'
else
	echo "NOTE modsign sha3-256: $(head -n 1 "$T/.sign")"
fi
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

phase boot
cp "$BUSYBOX" "$T/initrd/bin/busybox"
cp "$KDIR/init" "$T/initrd/init"
chmod 0755 "$T/initrd/init" "$T/initrd/bin/busybox"
(cd "$T/initrd" && find . | sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$T/initrd.cpio.gz" ||
	die "cpio failed"
nice -n 10 timeout "$TIMEOUT" qemu-system-x86_64 -m 256M -smp 1 \
	-kernel "$OBJ/arch/x86/boot/bzImage" -initrd "$T/initrd.cpio.gz" \
	-append "console=ttyS0 panic=-1 loglevel=1" \
	-nographic -no-reboot -monitor none -serial "file:$T/console.log" </dev/null >"$T/qemu.log" 2>&1
qrc=$?
tr -d '\r' <"$T/console.log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' >"$T/console.txt"
[ $qrc -eq 124 ] && t_fail "boot: qemu ended within ${TIMEOUT}s" "$(tail -n 20 "$T/console.txt")"
[ $qrc -ne 0 ] && [ $qrc -ne 124 ] && t_fail "boot: qemu exit status $qrc" "$(cat "$T/qemu.log")"
if grep -q "^KC-END $ncase\$" "$T/console.txt"; then
	t_pass "boot: $kver booted, init ran all $ncase modules"
else
	t_fail "boot: init ran all $ncase modules" "$(tail -n 20 "$T/console.txt")"
fi
grep '^KC-BOOT ' "$T/console.txt" | sed 's/^KC-BOOT /kernel: /'
for k in $TRUSTED; do
	if grep -q "^KC-BOOT Loaded X.509 cert 'modsign test: TEST-ONLY modsign $k: " "$T/console.txt"; then
		t_pass "boot: TEST-ONLY $k certificate is a built-in trusted key"
	else
		t_fail "boot: TEST-ONLY $k certificate is a built-in trusted key"
	fi
done
if grep -q "^KC-BOOT Problem loading in-kernel X.509 certificate (-65)" "$T/console.txt" &&
	! grep -q "TEST-ONLY modsign ec521" "$T/console.txt"; then
	t_pass "boot: 6.1 has no P-521: ec521 certificate not loaded (-ENOPKG)"
else
	t_fail "boot: 6.1 has no P-521: ec521 certificate not loaded (-ENOPKG)"
fi
grep '^KC-RMMOD-FAILED' "$T/console.txt" && t_fail "rmmod after each load"

# --- 5. results --------------------------------------------------------

phase results
while IFS="$(printf '\t')" read -r id expect name pattern; do
	line=$(grep "^KC-RESULT $id " "$T/console.txt" | head -n 1)
	got=${line#KC-RESULT $id }
	mod=$(awk -v id="$id" '$1 == id { print $2 }' "$T/initrd/cases")
	case $expect:$got in
	LOADED:LOADED*)
		if echo "$got" | grep -q "$mod: loaded"; then
			t_pass "$name"
		else
			t_fail "$name" "loaded, but its init did not report: $got"
		fi ;;
	REFUSED:REFUSED*)
		if echo "$got" | grep -Eq -- "$pattern"; then
			t_pass "$name"
			# insmod tries finit_module, then init_module: each logs once.
			echo "${got#REFUSED }" | sed 's/ *| */\n/g' | awk 'NF && !seen[$0]++ { print "    " $0 }'
		else
			t_fail "$name" "refused, but not as expected ($pattern): $got"
		fi ;;
	*:)
		t_fail "$name" "no result line for $id" ;;
	*)
		t_fail "$name" "want $expect, got: $got" ;;
	esac
done <"$T/expect"
phase ""
[ "$t_failed" -ne 0 ] && echo "console log: $(grep -c . "$T/console.txt") lines; rerun with MODSIGN_KERNEL_KEEP=1 to keep $T"
kc_done
