#!/bin/sh
# Builds, for tests only, an OpenSSL that does ML-DSA (3.5 or later, from
# Debian's openssl source package of trixie or sid) and the kernel's
# sign-file 7.2 linked against it, into a cache directory. Nothing is
# installed system-wide: bin/openssl finds its own lib/ by its run path.
# Usage: scripts/openssl-pq.sh [build|openssl|sign-file|fetch|path]
#   build      (default) both; a second run does nothing
#   fetch      only the sources of both, into $cache/src
#   openssl    only OpenSSL: $cache/bin/openssl, lib/, include/
#   sign-file  only sign-file 7.2 ($cache/bin/sign-file-7.2; needs OpenSSL)
#   path       print the cache directory and exit 0 if OpenSSL is built there
# MODSIGN_OPENSSL_PQ_CACHE overrides /var/cache/modsign-openssl-pq.
# Sources already downloaded (the .dsc, its tarballs; linux-source-7.2's
# .deb) are taken from $cache/src or MODSIGN_SID_CACHE (default
# /var/cache/modsign-sid); otherwise apt-get fetches them with a private
# sources list for trixie and sid made from the machine's own mirror.
# Needs perl, make, gcc, dpkg-source, xz (scripts/install-deps.sh pq), and
# write access to the cache (root for the default one).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${MODSIGN_OPENSSL_PQ_CACHE:-/var/cache/modsign-openssl-pq}
sidcache=${MODSIGN_SID_CACHE:-/var/cache/modsign-sid}
what=${1:-build}
# The oldest release with ML-DSA.
min_version=3.5
kver=7.2
# Changing these rebuilds (they are written to the stamp).
config="--libdir=lib no-docs no-tests shared"

die() {
	echo "openssl-pq: $*" >&2
	exit 1
}

say() {
	echo "openssl-pq: $*"
}

case $what in
build | openssl | sign-file | fetch) ;;
path)
	[ -f "$cache/.openssl-stamp" ] && [ -x "$cache/bin/openssl" ] || exit 1
	echo "$cache"
	exit 0
	;;
*) die "unknown command '$what' (build, openssl, sign-file, fetch or path)" ;;
esac

# apt-get/apt-cache with the private sources list and state under $cache/apt:
# the machine's own lists and package cache stay untouched.
papt() {
	tool=$1
	shift
	"$tool" -o Dir::Etc::SourceList="$cache/apt/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$cache/apt/lists" \
		-o Dir::Cache="$cache/apt/cache" \
		-o Dir::State::status=/dev/null \
		-o APT::Sandbox::User=root "$@"
}

apt_ready=0
apt_setup() {
	[ "$apt_ready" = 1 ] && return 0
	mirror=$("$here/host-mirror") || die "no Debian mirror found in the apt sources"
	mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache/archives/partial"
	{
		for s in trixie sid; do
			echo "deb $mirror $s main"
			echo "deb-src $mirror $s main"
		done
	} >"$cache/apt/sources.list"
	papt apt-get update -qq || die "apt-get update with $cache/apt/sources.list failed"
	apt_ready=1
}

# The SHA-256 the archive's signed Sources index gives for FILE of openssl
# (a .dsc's name holds its version).
index_sha256() {
	papt apt-cache showsrc openssl | awk -v f="$1" '
		/^Checksums-Sha256:/ { on = 1; next }
		/^[^ ]/ { on = 0 }
		on && $3 == f { print $1; exit }'
}

# fetch_openssl: leaves the chosen version in $ver and its .dsc in $cache/src.
# The newest version the lists name whose files are at hand or download:
# the archive may list a version whose files it no longer has.
fetch_openssl() {
	apt_setup
	versions=$(papt apt-cache showsrc openssl | awk '/^Version:/ { print $2 }' |
		sort -u -V -r)
	[ -n "$versions" ] || die "apt-cache showsrc openssl: no versions in trixie or sid"
	mkdir -p "$cache/src"
	for ver in $versions; do
		upstream=${ver#*:}
		upstream=${upstream%-*}
		if [ "$(printf '%s\n%s\n' "$min_version" "$upstream" | sort -V | head -n 1)" != "$min_version" ]; then
			continue
		fi
		dsc=openssl_${ver#*:}.dsc
		for d in "$cache/src" "$sidcache"; do
			[ -f "$d/$dsc" ] || continue
			# A .dsc at hand counts only if the signed index vouches for it;
			# dpkg-source then checks the tarballs against the .dsc.
			want=$(index_sha256 "$dsc")
			got=$(sha256sum "$d/$dsc" | cut -d ' ' -f 1)
			if [ -z "$want" ] || [ "$want" != "$got" ]; then
				say "$d/$dsc does not match the archive's index: not used"
				continue
			fi
			if [ "$d" != "$cache/src" ]; then
				# shellcheck disable=SC2013
				for f in $(awk '/^Files:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $3 }' "$d/$dsc"); do
					[ -f "$d/$f" ] || continue 2
					cp "$d/$f" "$cache/src/"
				done
				cp "$d/$dsc" "$cache/src/"
			fi
			say "openssl $ver: sources from $d"
			return 0
		done
		say "openssl $ver: downloading"
		if (cd "$cache/src" && papt apt-get source -qq --download-only "openssl=$ver") \
			>"$cache/src/download.log" 2>&1; then
			return 0
		fi
		say "openssl $ver: the archive does not have its files ($(grep -c '404' "$cache/src/download.log") not found)"
	done
	die "no openssl >= $min_version whose sources could be downloaded"
}

build_openssl() {
	if [ -f "$cache/.openssl-stamp" ] && [ -x "$cache/bin/openssl" ] &&
		[ "$(sed -n 2p "$cache/.openssl-stamp")" = "$config" ]; then
		say "$(sed -n 1p "$cache/.openssl-stamp") is built in $cache"
		return 0
	fi
	fetch_openssl
	start=$(date +%s)
	src=$cache/build/openssl-${ver#*:}
	rm -rf "$cache/build"
	mkdir -p "$cache/build"
	dpkg-source --no-check -x "$cache/src/openssl_${ver#*:}.dsc" "$src" >/dev/null
	# The kernel-style run path: bin/openssl and sign-file find lib/ of
	# this prefix, never the system's libcrypto.so.3.
	# shellcheck disable=SC2086
	(cd "$src" && nice -n 19 ./Configure --prefix="$cache" --openssldir="$cache/ssl" \
		$config "-Wl,-rpath,$cache/lib" >"$cache/build/configure.log" 2>&1) ||
		die "Configure failed: $cache/build/configure.log"
	(cd "$src" && nice -n 19 make -j2 >"$cache/build/make.log" 2>&1) ||
		die "make failed: $cache/build/make.log"
	(cd "$src" && make install_sw install_ssldirs >"$cache/build/install.log" 2>&1) ||
		die "make install_sw failed: $cache/build/install.log"
	v=$("$cache/bin/openssl" version) || die "the built $cache/bin/openssl does not run"
	"$cache/bin/openssl" list -signature-algorithms | grep -q ML-DSA-65 ||
		die "$v lists no ML-DSA-65"
	rm -rf "$cache/build"
	printf '%s (Debian %s)\n%s\n' "$v" "$ver" "$config" >"$cache/.openssl-stamp"
	say "$v built in $(($(date +%s) - start)) s"
}

# linux_source_deb: $deb, linux-source-7.2's package, at hand or downloaded.
linux_source_deb() {
	for d in "$cache/src" "$sidcache"; do
		# shellcheck disable=SC2012
		deb=$(ls "$d/linux-source-${kver}_"*_all.deb 2>/dev/null | sort -V | tail -n 1)
		[ -n "$deb" ] && return 0
	done
	apt_setup
	mkdir -p "$cache/src"
	(cd "$cache/src" && papt apt-get download -qq "linux-source-$kver") ||
		die "apt-get download linux-source-$kver failed"
	# shellcheck disable=SC2012
	deb=$(ls "$cache/src/linux-source-${kver}_"*_all.deb | sort -V | tail -n 1)
}

build_sign_file() {
	out=$cache/bin/sign-file-$kver
	[ -f "$cache/.openssl-stamp" ] || die "build OpenSSL first ($0 openssl)"
	# Rebuilt when the OpenSSL it links is another one.
	against=$(sed -n 1p "$cache/.openssl-stamp")
	if [ -x "$out" ] && [ -f "$cache/.sign-file-stamp" ] &&
		[ "$(sed -n 2p "$cache/.sign-file-stamp")" = "$against" ]; then
		say "$(sed -n 1p "$cache/.sign-file-stamp") is built in $cache"
		return 0
	fi
	linux_source_deb
	start=$(date +%s)
	work=$cache/build/sign-file
	rm -rf "$work"
	mkdir -p "$work"
	# sign-file.c and the headers it includes, as kbuild's scripts/Makefile
	# builds it; the other files of the 1.5 GB tree are never written out.
	tree=linux-source-$kver
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xOf - "./usr/src/$tree.tar.xz" |
		nice -n 19 tar -xJf - -C "$work" "$tree/scripts/sign-file.c" \
			"$tree/scripts/ssl-common.h" "$tree/tools/include/uapi/linux/module_signature.h" ||
		die "scripts/sign-file.c or its headers not found in $deb"
	nice -n 19 cc -O2 -I"$cache/include" -I"$work/$tree/tools/include/uapi" -o "$out.tmp" \
		"$work/$tree/scripts/sign-file.c" \
		-L"$cache/lib" -Wl,-rpath,"$cache/lib" -lcrypto ||
		die "sign-file.c did not build"
	mv "$out.tmp" "$out"
	rm -rf "$work"
	rmdir "$cache/build" 2>/dev/null || true
	printf 'sign-file from %s\n%s\n' "$(basename "$deb")" "$against" >"$cache/.sign-file-stamp"
	say "$out built in $(($(date +%s) - start)) s"
}

mkdir -p "$cache"
# One build at a time: a second caller waits, then finds the stamp.
exec 9>"$cache/.lock"
flock 9
case $what in
build)
	build_openssl
	build_sign_file
	;;
openssl) build_openssl ;;
sign-file) build_sign_file ;;
fetch)
	fetch_openssl
	linux_source_deb
	say "sources of openssl $ver and $(basename "$deb") at hand"
	;;
esac
