#!/usr/bin/perl
# Writes an SPDX 2.3 JSON document for a modsign binary: the binary (its
# SHA-256) and each library it contains, as the Debian package the library
# file came from (dpkg -S), that package's version (dpkg-query) and licence
# (the "Files: *" paragraph of /usr/share/doc/<package>/copyright, in SPDX
# terms; else a small table; else NOASSERTION).
#   shared: every NEEDED entry of the binary's dynamic section (readelf -d),
#           resolved to a file by ldd; relationship DYNAMIC_LINK
#   static: every archive named on the command line (the Makefile passes
#           those LINK=static links); relationship STATIC_LINK
# Usage: scripts/sbom.pl --version V --out FILE BINARY [ARCHIVE.a...]
# Deterministic for one binary and one set of installed packages: the
# creation time is SOURCE_DATE_EPOCH when set (dpkg-buildpackage sets it).
use strict;
use warnings;
use Cwd qw(realpath);
use Digest::SHA;
use Getopt::Long;
use JSON::PP;
use POSIX qw(strftime);

my ($version, $out);
GetOptions('version=s' => \$version, 'out=s' => \$out)
	or die "usage: sbom.pl --version V --out FILE BINARY [ARCHIVE.a...]\n";
my ($bin, @archives) = @ARGV;
die "usage: sbom.pl --version V --out FILE BINARY [ARCHIVE.a...]\n"
	unless defined $version && defined $out && defined $bin;
die "sbom.pl: $bin: not a file\n" unless -f $bin;

# Debian's short licence names (copyright-format 1.0) as SPDX identifiers
# (0BSD: liblzma since xz 5.6, Debian 13).
my %spdx = (
	'gpl-2' => 'GPL-2.0-only', 'gpl-2+' => 'GPL-2.0-or-later',
	'gpl-3' => 'GPL-3.0-only', 'gpl-3+' => 'GPL-3.0-or-later',
	'lgpl-2.1' => 'LGPL-2.1-only', 'lgpl-2.1+' => 'LGPL-2.1-or-later',
	'lgpl-3' => 'LGPL-3.0-only', 'lgpl-3+' => 'LGPL-3.0-or-later',
	'bsd-2-clause' => 'BSD-2-Clause', 'bsd-3-clause' => 'BSD-3-Clause',
	'apache-2.0' => 'Apache-2.0', 'zlib' => 'Zlib', 'expat' => 'MIT', 'mit' => 'MIT',
	'isc' => 'ISC', '0bsd' => '0BSD', 'pd' => 'LicenseRef-public-domain',
	'public-domain' => 'LicenseRef-public-domain',
);
# Packages whose copyright file is not machine-readable.
my %table = (
	'libc6' => 'LGPL-2.1-or-later',
	'libasan8' => 'GPL-3.0-or-later WITH GCC-exception-3.1',
	'libubsan1' => 'GPL-3.0-or-later WITH GCC-exception-3.1',
);

# run(CMD...): its standard output (stderr dropped) and whether it exited 0;
# no shell in between.
sub run {
	my @cmd = @_;
	my $pid = open(my $fh, '-|');
	die "sbom.pl: fork: $!\n" unless defined $pid;
	if ($pid == 0) {
		open STDERR, '>', '/dev/null';
		exec @cmd or exit 127;
	}
	my $text = do { local $/; <$fh> } // '';
	close $fh;
	return ($text, $? == 0);
}

sub sha256_of {
	my ($f) = @_;
	return Digest::SHA->new(256)->addfile($f, 'b')->hexdigest;
}

# The package owning FILE, either side of merged /usr: (name, arch, the
# path dpkg knows it by).
sub package_of {
	my ($f) = @_;
	my $real = realpath($f) // $f;
	my @try = ($real, $f);
	push @try, $real =~ m{^/usr(/.*)} ? $1 : "/usr$real";
	for my $p (@try) {
		my ($line, $ok) = run('dpkg', '-S', $p);
		next if !$ok || $line eq '';
		my ($pkg) = split /: /, (split /\n/, $line)[0];
		my ($name, $arch) = split /:/, $pkg;
		return ($name, $arch, $p);
	}
	die "sbom.pl: no Debian package owns $f\n";
}

sub dpkg_field {
	my ($pkg, $field) = @_;
	my ($v, $ok) = run('dpkg-query', '-W', '-f', "\${$field}", $pkg);
	die "sbom.pl: dpkg-query $field of $pkg failed\n" if !$ok || $v eq '';
	return $v;
}

# The licence of PKG as an SPDX expression, or NOASSERTION.
sub licence_of {
	my ($pkg) = @_;
	my $file = "/usr/share/doc/$pkg/copyright";
	my ($text, $expr);
	return $table{$pkg} // 'NOASSERTION' unless open my $fh, '<', $file;
	{ local $/; $text = <$fh>; }
	close $fh;
	return $table{$pkg} // 'NOASSERTION' unless $text =~ /\AFormat:/;
	for my $para (split /\n\s*\n/, $text) {
		next unless $para =~ /^Files:\s*\*\s*$/m;
		($expr) = $para =~ /^License:\s*(\S.*?)\s*$/m;
		last;
	}
	return $table{$pkg} // 'NOASSERTION' unless defined $expr;
	my @out;
	for my $tok (split /\s+/, $expr) {
		if ($tok =~ /^(or|and)$/i) {
			push @out, uc $tok;
		} elsif (exists $spdx{lc $tok}) {
			push @out, $spdx{lc $tok};
		} else {
			return 'NOASSERTION';
		}
	}
	return join ' ', @out;
}

sub spdx_id {
	my ($s) = @_;
	$s =~ s/[^A-Za-z0-9.-]/-/g;
	return "SPDXRef-$s";
}

my $bin_sha = sha256_of($bin);
my @libs;	# [file name, path, STATIC_LINK|DYNAMIC_LINK]
my %path_of;
my ($ldd) = run('ldd', $bin);
for (split /\n/, $ldd) {
	$path_of{$1} = $2 if /^\s*(\S+) => (\/\S+)/;
}
my ($dyn, $dyn_ok) = run('readelf', '-d', $bin);
die "sbom.pl: readelf -d $bin failed\n" unless $dyn_ok;
for (split /\n/, $dyn) {
	next unless /\(NEEDED\).*\[(.*)\]/;
	my $so = $1;
	die "sbom.pl: ldd does not resolve $so\n" unless exists $path_of{$so};
	push @libs, [$so, $path_of{$so}, 'DYNAMIC_LINK'];
}
for my $a (@archives) {
	die "sbom.pl: $a: not a file\n" unless -f $a;
	my $name = $a;
	$name =~ s{.*/}{};
	push @libs, [$name, realpath($a), 'STATIC_LINK'];
}

my $time = defined $ENV{SOURCE_DATE_EPOCH} ? $ENV{SOURCE_DATE_EPOCH} : time;
my ($arch) = run('dpkg', '--print-architecture');
chomp $arch;
my $self = 'SPDXRef-Package-modsign';
my @packages = ({
	SPDXID => $self,
	name => 'modsign',
	versionInfo => $version,
	packageFileName => 'modsign',
	primaryPackagePurpose => 'APPLICATION',
	downloadLocation => 'NOASSERTION',
	filesAnalyzed => JSON::PP::false,
	licenseConcluded => 'GPL-2.0-only',
	licenseDeclared => 'GPL-2.0-only',
	copyrightText => 'NOASSERTION',
	checksums => [ { algorithm => 'SHA256', checksumValue => $bin_sha } ],
});
my @rels = ({ spdxElementId => 'SPDXRef-DOCUMENT', relationshipType => 'DESCRIBES',
	      relatedSpdxElement => $self });
my $uses_pd = 0;
for my $l (@libs) {
	my ($name, $path, $rel) = @$l;
	my ($pkg, $parch, $dpath) = package_of($path);
	my $full = defined $parch ? "$pkg:$parch" : $pkg;
	my $pver = dpkg_field($full, 'Version');
	my $src = dpkg_field($full, 'source:Package');
	my $lic = licence_of($pkg);
	my $id = spdx_id("Library-$name");
	$uses_pd = 1 if $lic =~ /LicenseRef-public-domain/;
	my %p = (
		SPDXID => $id,
		name => $name,
		versionInfo => $pver,
		packageFileName => $dpath,
		primaryPackagePurpose => 'LIBRARY',
		supplier => 'Organization: Debian',
		downloadLocation => 'NOASSERTION',
		filesAnalyzed => JSON::PP::false,
		licenseConcluded => $lic,
		licenseDeclared => $lic,
		copyrightText => 'NOASSERTION',
		sourceInfo => "Debian package $pkg $pver (source package $src), file $dpath",
		externalRefs => [ {
			referenceCategory => 'PACKAGE-MANAGER',
			referenceType => 'purl',
			referenceLocator => "pkg:deb/debian/$pkg\@$pver?arch=" . ($parch // $arch),
		} ],
	);
	# An archive's code is in the binary: its bytes are part of what was built.
	$p{checksums} = [ { algorithm => 'SHA256', checksumValue => sha256_of($path) } ]
		if $rel eq 'STATIC_LINK';
	push @packages, \%p;
	push @rels, { spdxElementId => $self, relationshipType => $rel, relatedSpdxElement => $id };
}

my %doc = (
	spdxVersion => 'SPDX-2.3',
	dataLicense => 'CC0-1.0',
	SPDXID => 'SPDXRef-DOCUMENT',
	name => "modsign-$version",
	documentNamespace => "https://spdx.org/spdxdocs/modsign-$version-$bin_sha",
	creationInfo => {
		created => strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $time),
		creators => [ 'Tool: modsign-scripts-sbom.pl', 'Organization: modsign' ],
	},
	documentDescribes => [ $self ],
	packages => \@packages,
	relationships => \@rels,
);
$doc{hasExtractedLicensingInfos} = [ {
	licenseId => 'LicenseRef-public-domain',
	name => 'public domain',
	extractedText => 'Put in the public domain by its authors (Debian copyright: License: PD).',
} ] if $uses_pd;

my $json = JSON::PP->new->canonical->pretty->encode(\%doc);
my $tmp = "$out.tmp$$";
open my $fh, '>', $tmp or die "sbom.pl: $tmp: $!\n";
print $fh $json or die "sbom.pl: $tmp: $!\n";
close $fh or die "sbom.pl: $tmp: $!\n";
rename $tmp, $out or die "sbom.pl: $out: $!\n";
