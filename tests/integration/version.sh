#!/bin/bash
# `modsign --version` names exactly the libraries the binary uses, each
# with the word the binary's own dynamic section supports (static: not in
# NEEDED, its code in the binary; shared: its soname in NEEDED), and
# versions that are those of the Debian packages the library came from.
# Checked on the release binary (Makefile LINK, static by default) and on
# the test build (every library shared): both link modes, no extra build.
. "$(dirname "$0")/../lib/common.sh"
t_setup

# name: sonames (NEEDED patterns), a symbol the library defines, its file
# for dpkg -S (the static archive; a shared one is found by ldd).
libs="p11-kit:libp11-kit.so.*::p11-kit-1
mbedTLS:libmbedx509.so.* libmbedcrypto.so.*:mbedtls_version_get_string:mbedcrypto
nettle:libnettle.so.* libhogweed.so.*:nettle_version_major:nettle
GMP:libgmp.so.*:__gmp_version:gmp
xz:liblzma.so.*:lzma_version_string:lzma
zstd:libzstd.so.*:ZSTD_versionString:zstd
zlib:libz.so.*:zlibVersion:z
glibc:libc.so.*::c"
want_names=$(printf '%s\n' "$libs" | cut -d: -f1 | sort | tr '\n' ' ')
version=$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")

# upstream VERSION: a Debian version without epoch, revision, +dfsg or
# .dfsg; "X+reallyY" (a version that went back or was renumbered) is Y:
# Debian 13's zlib is 1:1.3.dfsg+really1.3.1-1+deb13u1, the library 1.3.1.
upstream() {
	printf '%s\n' "$1" | sed -e 's/^[0-9]*://' -e 's/-[^-]*$//' \
		-e 's/.*+really//' -e 's/[+~].*//' -e 's/\.dfsg.*//'
}

# pkg_of FILE: the package that installed FILE (either side of merged /usr).
pkg_of() {
	local f
	f=$(realpath "$1")
	dpkg -S "$f" 2>/dev/null || dpkg -S "${f#/usr}" 2>/dev/null ||
		dpkg -S "/usr$f" 2>/dev/null
}

check_binary() {
	local what=$1 bin=$2 out needed names bad="" line name sonames sym arch
	local word so hit f pkg pv v
	if ! "$bin" --version >"$T/version" 2>&1; then
		t_fail "$what: --version exits 0" "$(cat "$T/version")"
		return
	fi
	out=$(cat "$T/version")
	[ "$(head -n 1 "$T/version")" = "modsign $version" ] &&
		t_pass "$what: --version starts with modsign $version" ||
		t_fail "$what: --version starts with modsign $version" "$out"
	names=$(sed -n 's/^  \([^ ]*\) .*/\1/p' "$T/version" | sort | tr '\n' ' ')
	[ "$names" = "$want_names" ] &&
		t_pass "$what: --version lists exactly $want_names" ||
		t_fail "$what: --version lists exactly $want_names" "$out"
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	# Every NEEDED entry belongs to a listed library (the test build's
	# sanitizer runtimes are the compiler's, not modsign's).
	for so in $needed; do
		case $so in
		libasan.so.* | libubsan.so.*) continue ;;
		esac
		hit=""
		while IFS=: read -r name sonames sym arch; do
			for f in $sonames; do
				# shellcheck disable=SC2053
				[[ $so == $f ]] && hit=$name
			done
		done <<<"$libs"
		[ -n "$hit" ] || bad="$bad $so (in NEEDED, not listed);"
	done
	while IFS=: read -r name sonames sym arch; do
		line=$(grep -E "^  $name " "$T/version")
		word=${line##* }
		hit=0
		for f in $sonames; do
			for so in $needed; do
				# shellcheck disable=SC2053
				[[ $so == $f ]] && hit=$((hit + 1))
			done
		done
		case $word in
		shared)
			[ "$hit" -eq "$(wc -w <<<"$sonames")" ] ||
				bad="$bad $name (says shared; NEEDED: $(echo $needed));"
			f=$(ldd "$bin" | awk -v s="${sonames%% *}" '
				{ n = $1; sub(/\.so\..*/, ".so.", n); p = s; sub(/\.so\..*/, ".so.", p) }
				n == p && $3 ~ /^\// { print $3; exit }')
			;;
		static)
			[ "$hit" -eq 0 ] || bad="$bad $name (says static; NEEDED: $(echo $needed));"
			if [ -n "$sym" ] && ! nm --defined-only "$bin" 2>/dev/null | grep -q " $sym\$"; then
				bad="$bad $name (says static; $sym not defined in the binary);"
			fi
			f=$(cc -print-file-name="lib$arch.a")
			;;
		*)
			bad="$bad $name (link word '$word');"
			f=""
			;;
		esac
		# The version is that of the package the library's file came from.
		v=$(sed -n "s/^  $name \([^ ,]*\).*/\1/p" "$T/version")
		pkg=$( [ -n "$f" ] && pkg_of "$f" | head -n 1 | cut -d: -f1-2)
		if [ -z "$pkg" ]; then
			bad="$bad $name (no package owns '$f');"
			continue
		fi
		pv=$(upstream "$(dpkg-query -W -f '${Version}' "${pkg%:}")")
		case "$pv." in
		"$v".*) ;;
		*) bad="$bad $name ($v, but ${pkg%:} is $pv);" ;;
		esac
	done <<<"$libs"
	[ -z "$bad" ] &&
		t_pass "$what: each library's link word matches NEEDED, its version its package's" ||
		t_fail "$what: each library's link word matches NEEDED, its version its package's" \
			"${bad# }" "$out"
}

check_binary "release build" "$TOP/modsign"
if [ "$MODSIGN" != "$TOP/modsign" ]; then
	check_binary "test build" "$MODSIGN"
	grep -q ', static$' "$T/version" &&
		t_fail "test build: every library shared" "$(cat "$T/version")" ||
		t_pass "test build: every library shared"
fi
# A release build says static for what the Makefile takes from archives
# (its LINK, recorded in build/rel/link).
if [ "$(cat "$TOP/build/rel/link" 2>/dev/null || echo static)" = static ]; then
	"$TOP/modsign" --version >"$T/version" 2>&1
	[ "$(grep -c ', static$' "$T/version")" -eq 6 ] &&
		t_pass "release build: six libraries static" ||
		t_fail "release build: six libraries static" "$(cat "$T/version")"
fi
t_done
