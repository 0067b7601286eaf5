#!/bin/sh
# Installs the Debian packages modsign builds and tests with, when missing,
# by the names the running release has (Debian 12 bookworm, Debian 13
# trixie). A second run installs nothing.
# Usage: scripts/install-deps.sh [base|tokens|tpm|ock|kernel|bench|fuzz|analyze|valgrind|deb|pq|<package>]...
#        (default: base)
#   base    build, unit and integration tests (SoftHSM2, sign-file, openssl,
#           perl with Digest::SHA for make sbom, which perl-base lacks);
#           includes tokens
#   tokens  the token tests beyond SoftHSM2 that make check runs: NSS softokn
#           and xxd (tests/integration/token_nss.sh), p11-kit remoting
#           (token_remote.sh)
#   tpm     tests/integration/token_tpm.sh: tpm2-pkcs11 over swtpm (installing
#           libtpm2-pkcs11-1 registers its module with p11-kit system-wide);
#           scripts/check installs it, the test skips without it
#   ock     tests/integration/token_ock.sh: openCryptoki's soft token; likewise
#   kernel  make kernel-check and powercut-check: kernel build, busybox
#           initramfs, qemu, the file systems the power cuts use
#   bench   make bench: sign-file's OpenSSL ENGINE build, /usr/bin/time,
#           eatmydata, gnuplot (the charts; without X11)
#   fuzz    make fuzz: clang with libFuzzer
#   analyze make analyze: clang's scan-build (gcc -fanalyzer needs nothing more)
#   valgrind  make check-valgrind: the suite under valgrind memcheck
#   deb     make deb (scripts/package-check.sh): dpkg-buildpackage with
#           debhelper, lintian; the package's Build-Depends come with base
#   pq      make pq-deps (scripts/openssl-pq.sh): OpenSSL >= 3.5 built from
#           Debian's source package (dpkg-source, perl, xz) and sign-file 7.2
#
# The kernel's sign-file (the tests' oracle) comes from the linux-kbuild
# package of the release's own kernel (linux-kbuild-6.1 on Debian 12,
# linux-kbuild-6.12.<n>+deb13 on Debian 13), and clang in the release's
# default version: both are looked up, never guessed. Every name is checked
# to be a package before apt-get sees it: apt-get takes a name that is not
# one as a pattern (linux-kbuild-6.1 on Debian 13 installed eight packages).
set -eu
base="make gcc libc6-dev pkg-config libp11-kit-dev libmbedtls-dev nettle-dev libgmp-dev
liblzma-dev libzstd-dev zlib1g-dev softhsm2 opensc openssl file kmod xz-utils
zstd gzip dpkg apt p11-kit p11-kit-modules strace openssh-server openssh-client python3 perl
@KBUILD@"
kernel="build-essential bc flex bison libelf-dev libssl-dev cpio busybox-static
qemu-system-x86 patch dkms e2fsprogs xfsprogs"
bench="libssl-dev libengine-pkcs11-openssl time eatmydata gnuplot-nox"
fuzz="clang libclang-rt-@CLANG@-dev"
analyze="clang clang-tools-@CLANG@"
valgrind="valgrind"
deb="debhelper dpkg-dev fakeroot lintian"
pq="dpkg-dev perl make gcc libc6-dev xz-utils apt util-linux"
tokens="libnss3-tools p11-kit xxd"
# make check runs the token tests: every group with base has them.
base="$base $tokens"
tpm="swtpm swtpm-tools libtpm2-pkcs11-1 libtpm2-pkcs11-tools tpm2-tools tpm2-abrmd
libtss2-tcti-tabrmd0 dbus-daemon opensc openssl"
ock="opencryptoki opensc openssl"

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
updated=0

apt_update() {
	[ "$updated" = 1 ] && return 0
	$sudo apt-get update -qq
	updated=1
}

is_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# kbuild_pkg: sets $kbuild to the linux-kbuild package holding
# scripts/sign-file: the one installed, else the one the release's default
# kernel headers depend on.
kbuild_pkg() {
	kbuild=$(dpkg-query -W -f='${Package} ${Status}\n' 'linux-kbuild-*' 2>/dev/null |
		awk '/install ok installed/ { print $1 }' | sort -V | tail -n 1)
	[ -n "$kbuild" ] && return 0
	apt_update
	arch=$(dpkg --print-architecture)
	hdr=$(apt-cache depends "linux-headers-$arch" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-headers-/ { print $2; exit }')
	if [ -z "$hdr" ]; then
		echo "install-deps: no linux-headers-$arch in apt's lists" >&2
		exit 1
	fi
	kbuild=$(apt-cache depends "$hdr" |
		awk '$1 == "Depends:" && $2 ~ /^linux-kbuild-/ { print $2; exit }')
	if [ -z "$kbuild" ]; then
		echo "install-deps: $hdr depends on no linux-kbuild package" >&2
		exit 1
	fi
}

# clang_ver: sets $clang to the major version of the release's default
# clang (14 on Debian 12, 19 on Debian 13): the one installed, else the one
# the clang package depends on.
clang_ver() {
	clang=""
	if command -v clang >/dev/null 2>&1; then
		clang=$(clang --version | sed -n '1s/.*clang version \([0-9]*\).*/\1/p')
	fi
	[ -n "$clang" ] && return 0
	apt_update
	clang=$(apt-cache depends clang 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^clang-[0-9]+$/ { sub("clang-", "", $2); print $2; exit }')
	if [ -z "$clang" ]; then
		echo "install-deps: no clang in apt's lists" >&2
		exit 1
	fi
}

pkgs=""
[ $# -gt 0 ] || set -- base
for group in "$@"; do
	case $group in
	base) pkgs="$pkgs $base" ;;
	tokens) pkgs="$pkgs $tokens" ;;
	kernel) pkgs="$pkgs $base $kernel" ;;
	bench) pkgs="$pkgs $base $bench" ;;
	fuzz) pkgs="$pkgs $base $fuzz" ;;
	analyze) pkgs="$pkgs $base $analyze" ;;
	valgrind) pkgs="$pkgs $base $valgrind" ;;
	deb) pkgs="$pkgs $base $deb" ;;
	pq) pkgs="$pkgs $base $pq" ;;
	tpm) pkgs="$pkgs $tpm" ;;
	ock) pkgs="$pkgs $ock" ;;
	*) pkgs="$pkgs $group" ;;	# a package by name
	esac
done
case $pkgs in
*@KBUILD@*)
	kbuild_pkg
	pkgs=$(echo "$pkgs" | sed "s/@KBUILD@/$kbuild/g") ;;
esac
case $pkgs in
*@CLANG@*)
	clang_ver
	pkgs=$(echo "$pkgs" | sed "s/@CLANG@/$clang/g") ;;
esac
missing=""
for p in $pkgs; do
	is_installed "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
apt_update
for p in $missing; do
	# An exact package name, or apt-get would take it as a pattern.
	if ! apt-cache show --no-all-versions "$p" 2>/dev/null | grep -qx "Package: $p"; then
		echo "install-deps: $p: no such package in this release's apt lists" >&2
		exit 1
	fi
done
echo "installing:$missing" >&2
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
