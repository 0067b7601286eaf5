#!/bin/bash
# Builds the Debian package (debian/) in a scratch copy of the tree, checks
# it with lintian, installs it, signs a module with the installed
# /usr/bin/modsign through a SoftHSM2 token made in a temp dir (the demo's
# way), compares the result with the kernel's sign-file, purges the package
# and checks that it left nothing behind. Prints PASS/FAIL/SKIP lines and
# "package-check: N passed, N failed, N skipped"; exit 0 when none failed.
# Needs root (or sudo) for apt-get; refuses to run when modsign is already
# installed as a package, so that it never purges someone's installation.
# The .deb files are kept in build/deb/.
# Usage: scripts/package-check.sh     (make deb; CI: .ci/run's deb step)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/lib/common.sh"
t_setup
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
apt_get() {
	DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=300 -y -qq "$@"
}
installed=0
cleanup() {
	[ "$installed" -eq 1 ] && apt_get purge modsign >/dev/null 2>&1
	t_cleanup
}
trap cleanup EXIT

"$TOP/scripts/install-deps.sh" deb || { t_fail "install-deps.sh deb"; t_done; exit 1; }
if dpkg-query -W -f '${Status}' modsign 2>/dev/null | grep -q 'ok installed'; then
	t_fail "modsign is not installed as a package yet" \
		"this check installs and purges it: remove it first (apt-get purge modsign)"
	t_done
	exit 1
fi

# The scratch copy: dpkg-buildpackage writes into the parent directory and
# cleans the tree, neither of which may touch the checkout.
version=$(sed -n 's/^VERSION *:= *//p' "$TOP/Makefile")
src=$T/modsign-$version
mkdir -p "$src"
if [ -d "$TOP/.git" ] || [ -f "$TOP/.git" ]; then
	git -C "$TOP" ls-files -co --exclude-standard -z | (cd "$TOP" && xargs -0 cp --parents -t "$src")
else
	tar -C "$TOP" --exclude=./build --exclude=./modsign -cf - . | tar -C "$src" -xf -
fi
deb_version=$(cd "$src" && dpkg-parsechangelog -S Version)
[ "$deb_version" = "$version" ] &&
	t_pass "debian/changelog version is the Makefile's ($version)" ||
	t_fail "debian/changelog version is the Makefile's ($version)" "debian/changelog: $deb_version"

start=$(date +%s)
if (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
    >"$T/build.log" 2>&1; then
	t_pass "dpkg-buildpackage -us -uc -b ($(($(date +%s) - start)) s)"
else
	t_fail "dpkg-buildpackage -us -uc -b" "$(tail -n 20 "$T/build.log")"
	t_done
	exit 1
fi
arch=$(dpkg --print-architecture)
deb=$T/modsign_${version}_$arch.deb
[ -f "$deb" ] && t_pass "built $(basename "$deb")" ||
	t_fail "built modsign_${version}_$arch.deb" "$(ls "$T")"
mkdir -p "$TOP/build/deb" && cp "$T"/*.deb "$T"/*.changes "$TOP/build/deb/"

# lintian: no error and no warning (each one fixed, or overridden in
# debian/modsign.lintian-overrides with its reason).
if lintian --fail-on error,warning "$T"/modsign_"${version}"_"$arch".changes \
    >"$T/lintian.log" 2>&1; then
	t_pass "lintian: no error, no warning"
else
	t_fail "lintian: no error, no warning" "$(grep -v 'root privileges' "$T/lintian.log")"
fi

# What the directories the package installs into hold before it comes.
listing() {
	dpkg-deb -c "$deb" | awk '{ print $6 }' | sed -e 's|^\./|/|' -e 's|/$||' |
	while IFS= read -r d; do
		[ -n "$d" ] || d=/
		[ -d "$d" ] && find "$d" -maxdepth 1 -printf '%p %y %m\n'
		[ -e "$d" ] || echo "$d absent"
	done | sort -u
}
listing >"$T/before"

if apt_get install "$deb" >"$T/apt.log" 2>&1; then
	installed=1
	t_pass "apt-get install ./$(basename "$deb")"
else
	t_fail "apt-get install ./$(basename "$deb")" "$(tail -n 20 "$T/apt.log")"
	t_done
	exit 1
fi
dpkg -L modsign >"$T/files"
missing=""
for f in /usr/bin/modsign /usr/share/man/man1/modsign.1.gz /usr/share/doc/modsign/README.md.gz \
    /usr/share/doc/modsign/doc/guide.md.gz /usr/share/doc/modsign/copyright /usr/share/doc/modsign/examples/kbuild/README.md \
    /usr/share/doc/modsign/modsign.spdx.json /usr/share/bash-completion/completions/modsign; do
	grep -qx "$f" "$T/files" && [ -e "$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && t_pass "installs the binary, man page, README and doc/, copyright, examples, SBOM, completion" ||
	t_fail "installs the binary, man page, README and doc/, copyright, examples, SBOM, completion" "missing:$missing"

# Linked shared, as debian/rules says: every library of --version.
/usr/bin/modsign --version >"$T/version" 2>&1
if head -n 1 "$T/version" | grep -qx "modsign $version" &&
    ! grep -q ', static$' "$T/version" && [ "$(grep -c ', shared$' "$T/version")" -ge 8 ]; then
	t_pass "/usr/bin/modsign --version: $version, every library shared"
else
	t_fail "/usr/bin/modsign --version: $version, every library shared" "$(cat "$T/version")"
fi
if man -w modsign 2>/dev/null | grep -q '^/usr/share/man/man1/modsign.1.gz$'; then
	t_pass "man -w modsign finds the installed page"
else
	t_fail "man -w modsign finds the installed page" "$(man -w modsign 2>&1)"
fi

# The completion, as bash-completion loads it: by the command's name.
out=$(bash --norc --noprofile -c '. /usr/share/bash-completion/completions/modsign &&
	complete -p modsign && COMP_LINE="modsign ve" COMP_POINT=10 COMP_WORDS=(modsign ve) &&
	COMP_CWORD=1 && _modsign && echo "${COMPREPLY[*]}"' 2>&1)
[ "$out" = "complete -F _modsign modsign
verify" ] && t_pass "installed bash completion registers and completes (modsign ve: verify)" ||
	t_fail "installed bash completion registers and completes (modsign ve: verify)" "$out"

# The SBOM shipped describes the installed binary and its NEEDED libraries.
sbom=/usr/share/doc/modsign/modsign.spdx.json
if perl -MJSON::PP -e '
	local $/; open my $f, "<", $ARGV[0] or die "$ARGV[0]: $!\n";
	my $d = JSON::PP->new->decode(<$f>);
	die "not SPDX-2.3\n" unless $d->{spdxVersion} eq "SPDX-2.3";
	for my $p (@{$d->{packages}}) {
		print $p->{SPDXID} eq "SPDXRef-Package-modsign" ?
			"SELF $p->{checksums}[0]{checksumValue}\n" : "$p->{name}\n";
	}' "$sbom" >"$T/sbom" 2>&1 &&
    [ "$(sed -n 's/^SELF //p' "$T/sbom")" = "$(sha256sum </usr/bin/modsign | cut -d' ' -f1)" ] &&
    [ "$(grep -v '^SELF ' "$T/sbom" | sort)" = \
      "$(readelf -d /usr/bin/modsign | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort)" ]; then
	t_pass "$sbom: SPDX 2.3, the installed binary's SHA-256, its NEEDED libraries"
else
	t_fail "$sbom: SPDX 2.3, the installed binary's SHA-256, its NEEDED libraries" \
		"$(cat "$T/sbom")"
fi

# The demo's way: a SoftHSM2 token in a temp dir with the TEST-ONLY key.
t_token
"$TOP/tests/lib/mkmodule.sh" "$T/mods" 2 64 >/dev/null
cp "$T/mods/mod000.ko" "$T/ref.ko"
"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/ref.ko"
uri="pkcs11:token=modsign-test;object=rsa2048;type=private?module-path=$SOFTHSM"
if KBUILD_SIGN_PIN=$PIN /usr/bin/modsign sha256 "$uri" "$DATA/rsa2048.x509.der" \
    "$T/mods/mod000.ko" >>"$MS_LOG" 2>&1 && cmp -s "$T/mods/mod000.ko" "$T/ref.ko"; then
	t_pass "installed modsign signs through SoftHSM2 byte-identical to sign-file"
else
	t_fail "installed modsign signs through SoftHSM2 byte-identical to sign-file" \
		"$(tail -n 5 "$MS_LOG")"
fi
# The shared liblzma and the verify command of the installed binary.
xz --check=crc32 --lzma2=dict=1MiB -k "$T/mods/mod001.ko"
if KBUILD_SIGN_PIN=$PIN /usr/bin/modsign sha256 "$uri" "$DATA/rsa2048.x509.der" \
    "$T/mods/mod001.ko.xz" >>"$MS_LOG" 2>&1 &&
    /usr/bin/modsign verify -c "$DATA/rsa2048.x509.der" "$T/mods/mod001.ko.xz" >>"$MS_LOG" 2>&1; then
	t_pass "installed modsign signs and verifies a .ko.xz"
else
	t_fail "installed modsign signs and verifies a .ko.xz" "$(tail -n 5 "$MS_LOG")"
fi

if apt_get purge modsign >"$T/apt.log" 2>&1; then
	installed=0
	t_pass "apt-get purge modsign"
else
	t_fail "apt-get purge modsign" "$(tail -n 20 "$T/apt.log")"
fi
left=""
while IFS= read -r f; do
	# Directories such as /usr/share/man/man1 belong to other packages too.
	[ -d "$f" ] && continue
	[ -e "$f" ] || [ -L "$f" ] && left="$left $f"
done <"$T/files"
ls /var/lib/dpkg/info/modsign.* >/dev/null 2>&1 && left="$left /var/lib/dpkg/info/modsign.*"
[ -z "$left" ] && t_pass "purge removes every file dpkg -L listed ($(grep -c . "$T/files") paths)" ||
	t_fail "purge removes every file dpkg -L listed" "left:$left"
listing >"$T/after"
if cmp -s "$T/before" "$T/after"; then
	t_pass "the package's directories hold after purge what they held before install"
else
	t_fail "the package's directories hold after purge what they held before install" \
		"$(diff "$T/before" "$T/after" | head -n 20)"
fi
t_done
