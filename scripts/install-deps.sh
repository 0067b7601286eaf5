#!/bin/sh
# Installs the Debian 12 packages modsign builds and tests with, when missing.
# Usage: scripts/install-deps.sh [base|kernel|bench|fuzz|analyze|valgrind|deb|<package>]...
#        (default: base)
#   base    build, unit and integration tests (SoftHSM2, sign-file, openssl)
#   kernel  make kernel-check: kernel build, busybox initramfs, qemu
#   bench   make bench: sign-file's OpenSSL ENGINE build, /usr/bin/time
#   fuzz    make fuzz: clang with libFuzzer
#   analyze make analyze: clang's scan-build (gcc -fanalyzer needs nothing more)
#   valgrind  make check-valgrind: the suite under valgrind memcheck
#   deb     make deb (scripts/package-check.sh): dpkg-buildpackage with
#           debhelper, lintian; the package's Build-Depends come with base
set -eu
base="make gcc libc6-dev pkg-config libp11-kit-dev libmbedtls-dev nettle-dev libgmp-dev
liblzma-dev libzstd-dev zlib1g-dev softhsm2 opensc openssl linux-kbuild-6.1 file kmod xz-utils
zstd gzip dpkg apt p11-kit p11-kit-modules strace openssh-server openssh-client"
kernel="build-essential bc flex bison libelf-dev libssl-dev cpio busybox-static
qemu-system-x86 patch dkms"
bench="libssl-dev libengine-pkcs11-openssl time eatmydata"
fuzz="clang libclang-rt-14-dev"
analyze="clang clang-tools-14"
valgrind="valgrind"
deb="debhelper dpkg-dev fakeroot lintian"
pkgs=""
[ $# -gt 0 ] || set -- base
for group in "$@"; do
	case $group in
	base) pkgs="$pkgs $base" ;;
	kernel) pkgs="$pkgs $base $kernel" ;;
	bench) pkgs="$pkgs $base $bench" ;;
	fuzz) pkgs="$pkgs $base $fuzz" ;;
	analyze) pkgs="$pkgs $base $analyze" ;;
	valgrind) pkgs="$pkgs $base $valgrind" ;;
	deb) pkgs="$pkgs $base $deb" ;;
	*) pkgs="$pkgs $group" ;;	# a package by name
	esac
done
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
