# shellcheck shell=bash disable=SC2034  # its globals are read by run.sh and report.sh
# Sourced by bench/run.sh: everything the bench needs before it can time
# anything. Packages, the module corpus and the ENGINE build of sign-file are
# cached in $CACHE (outside git) and survive between runs; the SoftHSM2 token
# lives in the run's temporary directory.

# Debian packages the bench relies on: what modsign builds and tests with
# (the release's sign-file too), and the bench's own
# (bench: install-deps.sh's group, base's packages with it: SoftHSM2, OpenSC,
# openssl, xz, zstd, gcc; libengine-pkcs11-openssl, time, eatmydata, gnuplot)
BENCH_PKGS="bench"

say() { printf 'bench: %s\n' "$*" >&2; }

# ext4_without_journal DIR: DIR is on ext4 without a journal (as on this
# project's VMs), where every new file's inode allocation skips the inodes
# freed in the last ~30 s one by one (see restore in run.sh). A journaled
# ext4 has /proc/fs/jbd2/<device>-8.
ext4_without_journal() {
	local dev
	dev=$(findmnt -n -o SOURCE -T "$1" 2>/dev/null) || return 1
	[ "$(findmnt -n -o FSTYPE -T "$1")" = ext4 ] && [ -d /proc/fs/ext4/"${dev##*/}" ] &&
		! [ -d /proc/fs/jbd2/"${dev##*/}"-8 ]
}
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# pkgver PKG: the installed version of a Debian package.
pkgver() {
	dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"
}

# as_root CMD...: apt-get needs root; use sudo when we are not.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# The project's own installer knows modsign's build and test packages; the
# bench adds its own to the same call.
install_packages() {
	# shellcheck disable=SC2086  # a list of package names
	"$TOP/scripts/install-deps.sh" $BENCH_PKGS || die "could not install: $BENCH_PKGS"
	# Section (t)'s TPM and openCryptoki: where they cannot be had, (t) says
	# NOT MEASURED for them and why, as the tests skip them.
	case " $SECTIONS " in
	*" t "*)
		"$TOP/scripts/install-deps.sh" tpm ock ||
			say "the tpm and ock packages could not be installed: (t) does not measure them" ;;
	esac
}

# The archive's package lists, refreshed once per run so that "newest" means
# newest; an offline machine with a filled cache still runs.
apt_update() {
	[ "${BENCH_NO_UPDATE:-0}" = 1 ] && return 0
	say "apt-get update"
	as_root apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; using the lists at hand"
}

# fetch_deb PKG: prints the path of the cached .deb of PKG's candidate version,
# downloading it when the cache lacks it.
fetch_deb() {
	local pkg=$1 ver file dir=$CACHE/debs
	ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Version:/ {print $2; exit}')
	if [ -z "$ver" ]; then
		# No list entry (offline, lists gone): fall back to what the cache has.
		file=$(find "$dir" -maxdepth 1 -name "${pkg}_*.deb" 2>/dev/null | sort -V | tail -n 1)
		[ -n "$file" ] || die "package $pkg is not in the archive lists and not cached"
		printf '%s\n' "$file"
		return 0
	fi
	file=$(find "$dir" -maxdepth 1 -name "${pkg}_${ver//:/%3a}_*.deb" 2>/dev/null | head -n 1)
	if [ -z "$file" ]; then
		mkdir -p "$dir"
		say "apt-get download $pkg ($ver)"
		# apt drops privileges to _apt for downloads when it can write there.
		chown _apt "$dir" 2>/dev/null || true
		(cd "$dir" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) ||
			die "apt-get download $pkg=$ver failed"
		file=$(find "$dir" -maxdepth 1 -name "${pkg}_${ver//:/%3a}_*.deb" | head -n 1)
		[ -n "$file" ] || die "apt-get download $pkg left no .deb in $dir"
	fi
	printf '%s\n' "$file"
}

# The newest linux-image-6.1.0-N-amd64-unsigned the archive offers (not the
# cloud or rt flavours).
newest_image_pkg() {
	apt-cache pkgnames linux-image-6.1.0- 2>/dev/null |
		grep -E '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' | sort -V | tail -n 1
}

# sample_list N < sorted list: N entries spread evenly over the sorted list
# (entry floor(i * total / N) for i = 0..N-1), so every directory of the tree
# is represented and the choice never changes for a given package.
sample_list() {
	awk -v n="$1" '{ line[NR] = $0 }
		END {
			if (n > NR) n = NR
			for (i = 0; i < n; i++) print line[int(i * NR / n) + 1]
		}'
}

# strip_signatures < LIST: Debian's "-unsigned" image package is unsigned for
# Secure Boot only: its modules carry the signature of Debian's build key.
# The bench wants modules as kbuild has them before modules_sign, so each
# appended signature is cut off: PKCS#7 (sig_len bytes), the 12-byte
# struct module_signature (sig_len big-endian in its last 4 bytes) and the
# 28-byte marker. Prints how many modules were cut. perl is in every Debian.
strip_signatures() {
	perl -e '
		use strict;
		my $marker = "~Module signature appended~\n";
		my $cut = 0;
		while (my $f = <STDIN>) {
			chomp $f;
			open(my $fh, "+<", $f) or die "$f: $!\n";
			binmode $fh;
			my $size = -s $fh;
			next if $size < 40;
			seek($fh, $size - 40, 0) or die "$f: $!\n";
			read($fh, my $tail, 40) == 40 or die "$f: short read\n";
			next if substr($tail, 12) ne $marker;
			my $sig_len = unpack("N", substr($tail, 8, 4));
			my $keep = $size - 40 - $sig_len;
			die "$f: bad signature length $sig_len\n" if $keep <= 0;
			truncate($fh, $keep) or die "$f: $!\n";
			close($fh);
			$cut++;
		}
		print "$cut\n";
	'
}

# prepare_corpus: sets CORPUS_PKG, CORPUS_VER, CORPUS_DIR (with full/ and
# sample/ trees of unsigned .ko and their relative lists full.list and
# sample.list). Built once per package version and sample size.
prepare_corpus() {
	local pkg deb base ver dir tmp
	pkg=$(newest_image_pkg)
	if [ -z "$pkg" ]; then
		# Offline with stale lists: the newest corpus already unpacked.
		base=$(find "$CACHE/corpus" -mindepth 1 -maxdepth 1 -name 'linux-image-*' 2>/dev/null |
			sort -V | tail -n 1)
		[ -n "$base" ] || die "no linux-image-6.1.0-*-amd64-unsigned in apt-cache and none cached"
		deb=""
		pkg=$(basename "$base")
		pkg=${pkg%_*}
	else
		deb=$(fetch_deb "$pkg")
	fi
	if [ -n "$deb" ]; then
		ver=$(dpkg-deb -f "$deb" Version)
	else
		ver=${base##*_}
	fi
	CORPUS_PKG=$pkg
	CORPUS_VER=$ver
	CORPUS_DIR=$CACHE/corpus/${pkg}_${ver}
	dir=$CORPUS_DIR
	if [ ! -f "$dir/full.done" ] || [ ! -f "$dir/stripped" ]; then
		say "unpacking $pkg $ver"
		rm -rf "$dir"
		tmp=$dir/unpack
		mkdir -p "$tmp"
		dpkg-deb -x "$deb" "$tmp"
		# sign-file signs uncompressed modules: undo any .ko.xz / .ko.zst.
		find "$tmp" -name '*.ko.xz' -exec xz -d {} +
		find "$tmp" -name '*.ko.zst' -exec zstd -q -d --rm {} +
		mkdir -p "$dir/full"
		mv "$tmp"/lib/modules/* "$dir/full/"
		rm -rf "$tmp"
		find "$dir/full" -type f ! -name '*.ko' -delete
		find "$dir/full" -type l -delete
		(cd "$dir/full" && find . -type f -name '*.ko' | sed 's|^\./||' | LC_ALL=C sort) \
			> "$dir/full.list"
		[ -s "$dir/full.list" ] || die "no .ko in $deb"
		CORPUS_STRIPPED=$( (cd "$dir/full" && strip_signatures) < "$dir/full.list") ||
			die "cannot remove the build signatures of $pkg's modules"
		echo "$CORPUS_STRIPPED" > "$dir/stripped"
		touch "$dir/full.done"
	fi
	if [ ! -f "$dir/sample-$SAMPLE_N.done" ]; then
		rm -rf "$dir/sample"
		sample_list "$SAMPLE_N" < "$dir/full.list" > "$dir/sample.list"
		mkdir -p "$dir/sample"
		(cd "$dir/full" && xargs -d '\n' cp -a --parents -t "$dir/sample") < "$dir/sample.list"
		rm -f "$dir"/sample-*.done
		touch "$dir/sample-$SAMPLE_N.done"
	fi
	CORPUS_STRIPPED=$(cat "$dir/stripped")
	FULL_N=$(wc -l < "$dir/full.list")
	SAMPLE_REAL_N=$(wc -l < "$dir/sample.list")
	FULL_BYTES=$(du -sb "$dir/full" | cut -f1)
	SAMPLE_BYTES=$(du -sb "$dir/sample" | cut -f1)
	# Unsigned now: the first module no longer ends in the signature marker.
	local first
	first=$(head -n 1 "$dir/full.list")
	if tail -c 28 "$dir/full/$first" | grep -q 'Module signature appended'; then
		die "$dir/full/$first is still signed"
	fi
}

# prepare_count_set K: $CORPUS_DIR/n-K, K modules spread over the full set
# as the sample is (sample_list), hard links into full/ (restore copies them,
# so the pristine files are never written), and its list n-K.list.
prepare_count_set() {
	local k=$1 dir=$CORPUS_DIR
	[ -f "$dir/n-$k.done" ] && return 0
	rm -rf "$dir/n-$k"
	sample_list "$k" < "$dir/full.list" > "$dir/n-$k.list"
	mkdir -p "$dir/n-$k"
	(cd "$dir/full" && xargs -d '\n' cp -al --parents -t "$dir/n-$k") < "$dir/n-$k.list" ||
		die "cannot make the $k-module set"
	touch "$dir/n-$k.done"
}

# extract_signfile DEB DIR: a new DIR holding sign-file.c and ssl-common.h
# of linux-source-6.1's scripts/ (the source tarball sits inside the .deb;
# only these two files are taken out of it).
extract_signfile() {
	rm -rf "$2"
	mkdir -p "$2"
	dpkg-deb --fsys-tarfile "$1" |
		tar -xO ./usr/src/linux-source-6.1.tar.xz |
		tar -xJ -C "$2" --strip-components=2 \
			linux-source-6.1/scripts/sign-file.c linux-source-6.1/scripts/ssl-common.h ||
		die "cannot extract scripts/sign-file.c from $1"
}

# build_signfile_engine: sets SIGNFILE_ENGINE to sign-file built from Debian's
# linux-source-6.1 with the OpenSSL ENGINE branch (kernels before 6.12), the
# only way sign-file reaches a token on Debian 12 (libengine-pkcs11-openssl;
# Debian 12 has no pkcs11 provider). Nothing of the kernel source is kept in
# git: the two files are extracted into the cache.
build_signfile_engine() {
	local deb ver dir
	deb=$(fetch_deb linux-source-6.1)
	ver=$(dpkg-deb -f "$deb" Version)
	SIGNFILE_SRC_VER=$ver
	dir=$CACHE/sign-file-engine/$ver
	SIGNFILE_ENGINE=$dir/sign-file-engine
	[ -x "$SIGNFILE_ENGINE" ] && return 0
	say "building sign-file (ENGINE branch) from linux-source-6.1 $ver"
	extract_signfile "$deb" "$dir"
	engine_branch "$dir/sign-file.c" "$dir/sign-file-engine.c"
	cc -O2 -Wno-deprecated-declarations -I"$dir" -o "$SIGNFILE_ENGINE.tmp" \
		"$dir/sign-file-engine.c" -lcrypto || die "cannot compile $dir/sign-file-engine.c"
	mv "$SIGNFILE_ENGINE.tmp" "$SIGNFILE_ENGINE"
}

# engine_branch SRC DST: DST is sign-file.c SRC with its OpenSSL ENGINE branch
# forced (with OpenSSL 3 the file picks the provider branch).
engine_branch() {
	sed 's|^#if OPENSSL_VERSION_MAJOR >= 3$|#if 0 /* modsign bench: ENGINE branch forced */|' \
		"$1" > "$2"
	grep -q 'modsign bench: ENGINE branch forced' "$2" ||
		die "$1: the OpenSSL 3 #if to patch was not found"
}

# build_signfile_bulk: sets SIGNFILE_BULK to the seed's `sign-file -b` (key
# and certificate read once, then each module signed in sequence): the same
# linux-source-6.1 scripts/sign-file.c with bench/sign-file-bulk-6.1.patch
# (the seed's patch 1/2 made to apply to 6.1), built as the distribution
# builds sign-file (OpenSSL 3, provider branch); and SIGNFILE_BULK_ENGINE to
# the same patched file with the ENGINE branch forced, as sign-file-engine
# is, for the key on the token (libp11 loads the key once; each module's
# signature is then one C_SignInit/C_Sign on its session).
build_signfile_bulk() {
	local deb ver dir
	deb=$(fetch_deb linux-source-6.1)
	ver=$(dpkg-deb -f "$deb" Version)
	dir=$CACHE/sign-file-bulk/$ver-$(md5sum < "$BENCH/sign-file-bulk-6.1.patch" | cut -c1-8)
	SIGNFILE_BULK=$dir/sign-file-bulk
	SIGNFILE_BULK_ENGINE=$dir/sign-file-bulk-engine
	[ -x "$SIGNFILE_BULK" ] && [ -x "$SIGNFILE_BULK_ENGINE" ] && return 0
	say "building sign-file -b (the seed's patch 1/2) from linux-source-6.1 $ver"
	extract_signfile "$deb" "$dir"
	(cd "$dir" && patch -s -p2 < "$BENCH/sign-file-bulk-6.1.patch") ||
		die "bench/sign-file-bulk-6.1.patch does not apply to linux-source-6.1 $ver"
	cc -O2 -Wno-deprecated-declarations -I"$dir" -o "$SIGNFILE_BULK.tmp" \
		"$dir/sign-file.c" -lcrypto || die "cannot compile $dir/sign-file.c"
	engine_branch "$dir/sign-file.c" "$dir/sign-file-bulk-engine.c"
	cc -O2 -Wno-deprecated-declarations -I"$dir" -o "$SIGNFILE_BULK_ENGINE.tmp" \
		"$dir/sign-file-bulk-engine.c" -lcrypto ||
		die "cannot compile $dir/sign-file-bulk-engine.c"
	mv "$SIGNFILE_BULK.tmp" "$SIGNFILE_BULK"
	mv "$SIGNFILE_BULK_ENGINE.tmp" "$SIGNFILE_BULK_ENGINE"
}

# make_token: a SoftHSM2 token with the TEST-ONLY keys (PIN 1234, label
# modsign-test, key label rsa2048) in the run's temporary directory.
make_token() {
	"$TOP/tests/lib/mktoken.sh" "$RUN/token" modsign-test "$PIN" ||
		die "tests/lib/mktoken.sh failed"
	export SOFTHSM2_CONF=$RUN/token/softhsm2.conf
}

# build_nocheck: sets MODSIGN_NOCHECK to a modsign built WITHOUT the check of
# every signature against the certificate (section (v)), and
# NOCHECK_WHY to why not when it could not be built (MODSIGN_NOCHECK empty
# then). No production code changes for it: the working tree (git ls-files
# -co --exclude-standard, as tests/mutants/run.sh copies it) is copied into
# the cache, tests/mutants/signature-not-verified.patch (the one call of
# check_signature() removed) applied with patch -p1, and `make modsign`
# run there: the release build of the same sources, Makefile and
# environment as ./modsign. Kept per content of the tree and the patch; only
# the newest copy is kept.
NOCHECK_PATCH=$TOP/tests/mutants/signature-not-verified.patch
build_nocheck() {
	local key dir files
	MODSIGN_NOCHECK="" NOCHECK_WHY=""
	if [ ! -f "$NOCHECK_PATCH" ]; then
		NOCHECK_WHY="${NOCHECK_PATCH#"$TOP"/} is missing"
		return 0
	fi
	files=$RUN/nocheck.files
	# Tracked and untracked files, not ignored ones (build/, ./modsign); a
	# tracked file deleted from the working tree is left out.
	git -C "$TOP" ls-files -z -co --exclude-standard |
		(cd "$TOP" && while IFS= read -r -d '' f; do
			[ -f "$f" ] && printf '%s\0' "$f"
		done) > "$files"
	if [ ! -s "$files" ]; then
		NOCHECK_WHY="git ls-files listed nothing in $TOP (not a git checkout?)"
		return 0
	fi
	key=$( { (cd "$TOP" && xargs -0 md5sum < "$files"); md5sum < "$NOCHECK_PATCH"
		printf '%s\n' "${CC:-}" "${CFLAGS:-}" "${CPPFLAGS:-}" "${LDFLAGS:-}" "${LINK:-}"; } |
		md5sum | cut -c1-12)
	dir=$CACHE/nocheck/$key
	MODSIGN_NOCHECK=$dir/tree/modsign
	[ -x "$MODSIGN_NOCHECK" ] && return 0
	say "building modsign without the signature check (${NOCHECK_PATCH#"$TOP"/})"
	rm -rf "$CACHE/nocheck"
	mkdir -p "$dir/tree"
	(cd "$TOP" && tar --null -T "$files" -cf -) | tar -xf - -C "$dir/tree" || {
		MODSIGN_NOCHECK="" NOCHECK_WHY="cannot copy the tree into $dir/tree"
		return 0
	}
	if ! patch -d "$dir/tree" -p1 -f --no-backup-if-mismatch < "$NOCHECK_PATCH" \
		> "$dir/patch.log" 2>&1; then
		MODSIGN_NOCHECK=""
		NOCHECK_WHY="${NOCHECK_PATCH#"$TOP"/} no longer applies to this tree (the code moved?): $(tr '\n' ' ' < "$dir/patch.log")"
		rm -rf "$dir"
		return 0
	fi
	if ! nice make -C "$dir/tree" -j "$(nproc)" modsign > "$dir/make.log" 2>&1; then
		MODSIGN_NOCHECK=""
		NOCHECK_WHY="make modsign failed in the patched copy: $(tail -n 5 "$dir/make.log" | tr '\n' ' ')"
		return 0
	fi
}

# build_verify_cpu: build/verify-cpu, the packaged verifiers side by side
# (bench/verify_cpu.c), made or brought up to date; VERIFY_CPU_WHY says why
# not when it fails.
build_verify_cpu() {
	VERIFY_CPU=$TOP/build/verify-cpu VERIFY_CPU_WHY=""
	if ! make -C "$TOP" build/verify-cpu > "$RUN/log/make-verify-cpu" 2>&1; then
		VERIFY_CPU_WHY="make build/verify-cpu failed: $(tail -n 3 "$RUN/log/make-verify-cpu" | tr '\n' ' ')"
	fi
}
