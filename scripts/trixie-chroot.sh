#!/bin/sh
# Builds and runs a cached Debian 13 (trixie) chroot, to build and test
# modsign against mbedTLS 3.6 (Debian 13). Run as root.
# Usage: scripts/trixie-chroot.sh create
#        scripts/trixie-chroot.sh run SRCDIR COMMAND...
#        scripts/trixie-chroot.sh test
#   create  makes /var/cache/modsign-trixie/root with the build packages,
#           or brings an existing one up to date (idempotent)
#   run     bind-mounts /proc, /dev, /dev/pts, /sys and SRCDIR (at /src) into the
#           chroot, runs COMMAND there in /src with sh -c, unmounts
#   test    the README's two commands in the chroot, as on a fresh Debian 13
#           machine: create, then scripts/demo and scripts/check in a copy
#           of this tree's files (git ls-files: tracked and untracked, not
#           ignored; build/ and the host's binary stay out); install-deps
#           installs the rest there (apt-get update in the chroot). Exits 77
#           when the chroot cannot be made (not root, no mmdebstrap, no
#           network to the archive), for .ci/run to count as a SKIP.
# MODSIGN_TRIXIE_CACHE overrides /var/cache/modsign-trixie. The mirror is the
# one the machine's own apt sources use for its Debian release.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${MODSIGN_TRIXIE_CACHE:-/var/cache/modsign-trixie}
root=$cache/root
suite=trixie
pkgs="make gcc libc6-dev pkg-config libp11-kit-dev libmbedtls-dev nettle-dev
libgmp-dev liblzma-dev libzstd-dev zlib1g-dev softhsm2 opensc openssl file kmod
xz-utils zstd gzip p11-kit p11-kit-modules python3 mount strace"

die() {
	echo "trixie-chroot: $*" >&2
	exit 1
}

create() {
	[ "$(id -u)" -eq 0 ] || die "run as root"
	# $pkgs split into words on purpose, here and below: one line, single spaces.
	# shellcheck disable=SC2086,SC2116
	want=$(echo $pkgs)
	if [ -f "$root/.modsign-packages" ] &&
		[ "$(cat "$root/.modsign-packages")" = "$want" ]; then
		echo "trixie-chroot: $root is ready"
		return 0
	fi
	command -v mmdebstrap >/dev/null || die "install mmdebstrap"
	mirror=$("$here/host-mirror") || die "no Debian mirror found in the apt sources"
	if [ -f "$root/.modsign-packages" ]; then
		# The list changed: add packages to the existing chroot.
		with_mounts "" apt-get update
		# shellcheck disable=SC2086
		with_mounts "" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y --no-install-recommends $want
	else
		# A directory without the stamp is a creation that did not end.
		# Never remove through a bind mount a killed run left behind.
		if awk -v r="$root" '$2 == r || index($2, r "/") == 1 { m = 1 } END { exit !m }' \
			/proc/self/mounts; then
			die "something is still mounted under $root: unmount it first"
		fi
		rm -rf --one-file-system "$root"
		mkdir -p "$cache"
		mmdebstrap --variant=apt --include="$(echo "$want" | tr ' ' ',')" \
			"$suite" "$root" "deb $mirror $suite main"
	fi
	echo "$want" >"$root/.modsign-packages"
	echo "trixie-chroot: $root is ready ($mirror $suite)"
}

mounted=""

unmount_all() {
	for m in $mounted; do
		umount "$m" || echo "trixie-chroot: umount $m failed" >&2
	done
	mounted=""
}

bind() {
	mkdir -p "$2"
	if ! mountpoint -q "$2"; then
		mount --bind "$1" "$2"
		mounted="$2 $mounted"
	fi
}

# with_mounts SRCDIR COMMAND...: runs COMMAND in the chroot, SRCDIR at /src.
with_mounts() {
	src=$1
	shift
	trap unmount_all EXIT
	trap 'exit 130' INT TERM
	# The chroot's / a mount point of its own, first: `unshare --mount
	# --propagation private` (the tests' private p11-kit registry as root)
	# refuses a / that is not one.
	bind "$root" "$root"
	bind /proc "$root/proc"
	bind /dev "$root/dev"
	bind /dev/pts "$root/dev/pts"	# openpty(3): the PIN prompt tests
	bind /sys "$root/sys"
	dir=/
	if [ -n "$src" ]; then
		bind "$src" "$root/src"
		dir=/src
	fi
	rc=0
	# shellcheck disable=SC2016 # expanded by the shell inside the chroot
	chroot "$root" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" "$@" ||
		rc=$?
	unmount_all
	trap - EXIT INT TERM
	return $rc
}

# test: see the top. The copy is removed afterwards, whatever the result.
test_tree() {
	top=$(cd "$here/.." && pwd)
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP trixie-chroot: test: not root (chroot, mounts)" >&2
		exit 77
	fi
	if ! command -v mmdebstrap >/dev/null &&
		! "$top/scripts/install-deps.sh" mmdebstrap; then
		echo "SKIP trixie-chroot: test: no mmdebstrap, and it cannot be installed" >&2
		exit 77
	fi
	# Its own process: in a condition, set -e would not stop create at
	# a failed mmdebstrap, and the stamp would be written.
	if ! sh "$0" create; then
		echo "SKIP trixie-chroot: test: the chroot cannot be made (see above)" >&2
		exit 77
	fi
	copy=$(mktemp -d /tmp/modsign-trixie-src.XXXXXX)
	trap 'rm -rf "$copy"' EXIT
	trap 'exit 130' INT TERM
	# Deleted but still tracked files are not there to copy: skipped.
	# Without git (a tarball): all but what the build makes.
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		(cd "$top" && git ls-files -z --cached --others --exclude-standard |
			tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
			tar -C "$copy" -xf -
	else
		tar -C "$top" --exclude=./build --exclude=./modsign -cf - . |
			tar -C "$copy" -xf -
	fi
	[ -f "$copy/scripts/demo" ] || die "test: copying $top failed"
	rc=0
	with_mounts "$copy" sh -c 'scripts/demo && scripts/check' || rc=$?
	rm -rf "$copy"
	trap - EXIT INT TERM
	return $rc
}

[ $# -ge 1 ] || die "usage: $0 create | run SRCDIR COMMAND... | test"
cmd=$1
shift
case $cmd in
create)
	create
	;;
run)
	[ $# -ge 2 ] || die "usage: $0 run SRCDIR COMMAND..."
	[ -f "$root/.modsign-packages" ] || die "no chroot: run $0 create"
	src=$(cd "$1" && pwd)
	shift
	with_mounts "$src" sh -c "$*"
	;;
test)
	test_tree
	;;
*)
	die "unknown command $cmd"
	;;
esac
