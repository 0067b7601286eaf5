#!/bin/bash
# make sbom: an SPDX 2.3 JSON document that parses, carries the binary's
# SHA-256, and lists exactly the libraries the binary contains: its NEEDED
# entries (DYNAMIC_LINK) and, for the release build's LINK=static, the
# archives of the libraries --version calls static (STATIC_LINK); each with
# the Debian package that owns its file and that package's version.
. "$(dirname "$0")/../lib/common.sh"
t_setup

# --version's static libraries as the archives they come from.
archives_of() {
	case $1 in
	mbedTLS) echo libmbedx509.a libmbedcrypto.a ;;
	nettle) echo libhogweed.a libnettle.a ;;
	GMP) echo libgmp.a ;;
	xz) echo liblzma.a ;;
	zstd) echo libzstd.a ;;
	zlib) echo libz.a ;;
	*) echo "unknown-static-library-$1" ;;
	esac
}

# components JSON: one line per library, "name relationship package version
# same|differs file licence" (an expression, with spaces), and "SELF sha256"; fails when the file does not parse.
components() {
	perl -MJSON::PP -e '
		local $/; my $d = JSON::PP->new->decode(<STDIN>);
		die "spdxVersion $d->{spdxVersion}\n" unless $d->{spdxVersion} eq "SPDX-2.3";
		my %rel = map { $_->{relatedSpdxElement} => $_->{relationshipType} }
			grep { $_->{spdxElementId} eq "SPDXRef-Package-modsign" } @{$d->{relationships}};
		for my $p (@{$d->{packages}}) {
			if ($p->{SPDXID} eq "SPDXRef-Package-modsign") {
				print "SELF $p->{checksums}[0]{checksumValue}\n";
				next;
			}
			my ($purl) = map { $_->{referenceLocator} } @{$p->{externalRefs}};
			my ($pkg, $ver) = $purl =~ m{^pkg:deb/debian/([^@]+)@([^?]+)};
			print join(" ", $p->{name}, $rel{$p->{SPDXID}} // "none", $pkg, $ver,
				   $p->{versionInfo} eq $ver ? "same" : "differs",
				   $p->{packageFileName}, $p->{licenseDeclared}), "\n";
		}' <"$1"
}

# check WHAT BINARY SBOM: the document against the binary.
check() {
	local what=$1 bin=$2 sbom=$3 want got bad="" name pkg ver same lic file owner
	if ! components "$sbom" >"$T/comp" 2>"$T/perl.err"; then
		t_fail "$what: the SBOM parses as SPDX 2.3 JSON" "$(cat "$T/perl.err")"
		return
	fi
	python3 -m json.tool "$sbom" >/dev/null 2>&1 || [ ! -x /usr/bin/python3 ] ||
		bad="python3 -m json.tool refuses it;"
	[ -z "$bad" ] && t_pass "$what: the SBOM parses as SPDX 2.3 JSON" ||
		t_fail "$what: the SBOM parses as SPDX 2.3 JSON" "$bad"
	[ "$(sed -n 's/^SELF //p' "$T/comp")" = "$(sha256sum <"$bin" | cut -d' ' -f1)" ] &&
		t_pass "$what: the SBOM carries the binary's SHA-256" ||
		t_fail "$what: the SBOM carries the binary's SHA-256" "$(grep SELF "$T/comp")"
	want=$( {
		readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1 DYNAMIC_LINK/p'
		for l in $("$bin" --version | sed -n 's/^  \([^ ]*\) .*, static$/\1/p'); do
			for a in $(archives_of "$l"); do
				echo "$a STATIC_LINK"
			done
		done
	} | sort)
	got=$(grep -v '^SELF ' "$T/comp" | cut -d' ' -f1-2 | sort)
	[ "$got" = "$want" ] &&
		t_pass "$what: the SBOM lists exactly the binary's libraries ($(echo "$want" | grep -c .))" ||
		t_fail "$what: the SBOM lists exactly the binary's libraries" \
			"want: $(echo $want)" "got:  $(echo $got)"
	bad=""
	while read -r name _ pkg ver same file lic; do
		[ "$name" = SELF ] && continue
		owner=$(dpkg -S "$file" 2>/dev/null | head -n 1 | cut -d: -f1)
		[ "$owner" = "$pkg" ] || bad="$bad $name: package $pkg, dpkg -S says '$owner';"
		[ "$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null | head -n 1)" = "$ver" ] ||
			bad="$bad $name: version $ver is not $pkg's;"
		[ "$same" = same ] || bad="$bad $name: versionInfo differs from the purl's;"
		[ -n "$lic" ] && [ "$lic" != NOASSERTION ] || bad="$bad $name: no licence;"
	done <"$T/comp"
	[ -z "$bad" ] &&
		t_pass "$what: each library's package and version are dpkg's, each has a licence" ||
		t_fail "$what: each library's package and version are dpkg's, each has a licence" "$bad"
}

link=$(cat "$TOP/build/rel/link" 2>/dev/null || echo static)
if make -C "$TOP" -s sbom LINK="$link" SBOM_OUT="$T/rel.spdx.json" >"$T/make.out" 2>&1; then
	check "release build (LINK=$link)" "$TOP/modsign" "$T/rel.spdx.json"
else
	t_fail "make sbom" "$(cat "$T/make.out")"
fi
# The test build links every library shared: the NEEDED side.
if [ "$MODSIGN" != "$TOP/modsign" ]; then
	if "$TOP/scripts/sbom.pl" --version test --out "$T/san.spdx.json" "$MODSIGN" 2>"$T/sbom.err"; then
		check "test build (shared)" "$MODSIGN" "$T/san.spdx.json"
	else
		t_fail "scripts/sbom.pl on the test build" "$(cat "$T/sbom.err")"
	fi
fi
# zlib's licence, read from its copyright file: a known answer.
grep -q '^libz\..* Zlib$' "$T/comp" && t_pass "zlib's licence is Zlib" ||
	t_fail "zlib's licence is Zlib" "$(grep '^libz' "$T/comp")"
t_done
