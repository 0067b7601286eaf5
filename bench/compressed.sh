# shellcheck shell=bash disable=SC2034  # globals read by run.sh and report.sh
# Sourced by bench/run.sh: section (e), compressed modules. The
# ~1,100 modules of Debian 12's linux-image-6.12.*-cloud-amd64-unsigned
# (.ko.xz), with their build signatures cut off, as kbuild leaves them before
# signing, compressed three ways as kbuild 6.12 does (xz --check=crc32
# --lzma2=dict=1MiB, zstd, gzip -n); the key on SoftHSM2. For each format,
# side by side and interleaved:
#   e_ms_F    modsign -r over the tree: decompress, sign, compress again
#   e_ms_d_F  the same with -d: decompress, hash, sign, write the .p7s only;
#             the difference to e_ms_F is the compression (and the module's
#             write), so it gives compression's share of modsign's time
#   e_rz_F    recompressing alone, on the same two cores: per module the
#             format's tool decompresses and compresses again (xz -d, then
#             xz --check=crc32 --lzma2=dict=1MiB), under xargs -P 2: the
#             floor a signer of compressed modules cannot go below
#   e_user_F  the per-module way users sign compressed modules today: xz -d,
#             sign-file (ENGINE build, the same SoftHSM2 key), xz again, one
#             module after the other
# Knobs: BENCH_Z_FMTS (default "xz zst gz"), BENCH_Z_N (modules, 0: all).

Z_FMTS=${BENCH_Z_FMTS:-"xz zst gz"}
Z_N=${BENCH_Z_N:-0}
Z_TARGET=1.15	# target: modsign -r at most 1.15x recompressing alone

# The newest linux-image-6.12.N+deb12-cloud-amd64-unsigned the archive offers.
newest_cloud_pkg() {
	apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64-unsigned$' | sort -V | tail -n 1
}

# zcompress FMT FILE: FILE.FMT as kbuild 6.12 makes it (scripts/Makefile.modinst),
# FILE removed. A file, not a pipe: zstd records the size it knows.
zcompress() {
	case $1 in
	xz) xz --check=crc32 --lzma2=dict=1MiB -f "$2" ;;
	zst) zstd -q -f --rm "$2" ;;
	gz) gzip -n -f "$2" ;;
	esac
}

# zcat_of FMT FILE: FILE decompressed to stdout by the format's own tool.
zcat_of() {
	case $1 in
	xz) xz -dc "$2" ;;
	zst) zstd -q -dc "$2" ;;
	gz) gzip -dc "$2" ;;
	esac
}

# prepare_zcorpus: sets ZCORPUS_PKG, ZCORPUS_VER, ZCORPUS_DIR (trees xz/,
# zst/, gz/ of the same unsigned modules and lists xz.list, zst.list,
# gz.list), Z_N_REAL, Z_BYTES (uncompressed) and Z_BYTES_<fmt>. Built once
# per package version and module count, in the cache.
prepare_zcorpus() {
	local pkg deb dir tmp f
	pkg=$(newest_cloud_pkg)
	if [ -z "$pkg" ]; then
		dir=$(find "$CACHE/zcorpus" -mindepth 1 -maxdepth 1 -name 'linux-image-*' 2>/dev/null |
			sort -V | tail -n 1)
		[ -n "$dir" ] || die "no linux-image-6.12.*-cloud-amd64-unsigned in apt-cache and none cached"
		ZCORPUS_PKG=$(basename "$dir")
		ZCORPUS_VER=${ZCORPUS_PKG##*_}
		ZCORPUS_PKG=${ZCORPUS_PKG%_*}
	else
		deb=$(fetch_deb "$pkg")
		ZCORPUS_PKG=$pkg
		ZCORPUS_VER=$(dpkg-deb -f "$deb" Version)
	fi
	dir=$CACHE/zcorpus/${ZCORPUS_PKG}_${ZCORPUS_VER}
	ZCORPUS_DIR=$dir/n$Z_N
	if [ ! -f "$ZCORPUS_DIR/done" ]; then
		say "preparing the compressed corpus from $ZCORPUS_PKG $ZCORPUS_VER"
		[ -n "${deb:-}" ] || die "$ZCORPUS_PKG: no .deb to unpack"
		rm -rf "$ZCORPUS_DIR"
		tmp=$ZCORPUS_DIR/unpack
		mkdir -p "$tmp"
		dpkg-deb -x "$deb" "$tmp"
		mkdir -p "$ZCORPUS_DIR/plain"
		mv "$tmp"/lib/modules/* "$ZCORPUS_DIR/plain/"
		rm -rf "$tmp"
		find "$ZCORPUS_DIR/plain" -type f ! -name '*.ko.xz' -delete
		find "$ZCORPUS_DIR/plain" -type l -delete
		(cd "$ZCORPUS_DIR/plain" && find . -type f -name '*.ko.xz' | sed 's|^\./||; s|\.xz$||' |
			LC_ALL=C sort) > "$ZCORPUS_DIR/all.list"
		[ -s "$ZCORPUS_DIR/all.list" ] || die "no .ko.xz in $deb"
		if [ "$Z_N" -gt 0 ]; then
			sample_list "$Z_N" < "$ZCORPUS_DIR/all.list" > "$ZCORPUS_DIR/plain.list"
		else
			cp "$ZCORPUS_DIR/all.list" "$ZCORPUS_DIR/plain.list"
		fi
		# Plain, unsigned .ko: Debian's "-unsigned" package still carries
		# its build key's signatures inside each .ko.xz.
		(cd "$ZCORPUS_DIR/plain" && sed 's/$/.xz/' "$ZCORPUS_DIR/plain.list" |
			xargs -d '\n' -P "$(nproc)" -n 32 xz -d)
		(cd "$ZCORPUS_DIR/plain" && strip_signatures) < "$ZCORPUS_DIR/plain.list" > /dev/null ||
			die "cannot remove the build signatures of $ZCORPUS_PKG's modules"
		find "$ZCORPUS_DIR/plain" -name '*.ko.xz' -delete
		for f in xz zst gz; do
			cp -a "$ZCORPUS_DIR/plain" "$ZCORPUS_DIR/$f"
			export -f zcompress
			(cd "$ZCORPUS_DIR/$f" && xargs -d '\n' -P "$(nproc)" -n 16 \
				bash -c 'for m; do zcompress "$0" "$m" || exit 255; done' "$f") \
				< "$ZCORPUS_DIR/plain.list" || die "cannot compress the corpus as $f"
			sed "s/\$/.$f/" "$ZCORPUS_DIR/plain.list" > "$ZCORPUS_DIR/$f.list"
		done
		touch "$ZCORPUS_DIR/done"
	fi
	Z_N_REAL=$(wc -l < "$ZCORPUS_DIR/plain.list")
	Z_BYTES=$(du -sb "$ZCORPUS_DIR/plain" | cut -f1)
	for f in xz zst gz; do
		eval "Z_BYTES_$f=$(du -sb "$ZCORPUS_DIR/$f" | cut -f1)"
	done
	# Unsigned now: the first module's content no longer ends in the marker.
	f=$(head -n 1 "$ZCORPUS_DIR/xz.list")
	if zcat_of xz "$ZCORPUS_DIR/xz/$f" | tail -c 28 | grep -q 'Module signature appended'; then
		die "$ZCORPUS_DIR/xz/$f is still signed"
	fi
}

# The variants, one set per format ($1).
z_ms() {
	KBUILD_SIGN_PIN=$PIN /usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -r "$WORK" sha256 \
		"$TOKEN_URI" "$CERT"
}
z_ms_d() {
	KBUILD_SIGN_PIN=$PIN /usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -d -r "$WORK" sha256 \
		"$TOKEN_URI" "$CERT"
}
# z_rz FMT: each module decompressed and compressed again by the format's
# tool, as kbuild calls it, eight modules per shell, two shells at a time.
z_rz() {
	xargs -d '\n' -P 2 -n 8 -a "$LIST" bash -c 'f=$0; for m; do
		case $f in
		xz) xz -d "$m" && xz --check=crc32 --lzma2=dict=1MiB -f "${m%.xz}" ;;
		zst) zstd -q -d --rm "$m" && zstd -q -f --rm "${m%.zst}" ;;
		gz) gzip -d "$m" && gzip -n -f "${m%.gz}" ;;
		esac || exit 255
	done' "$1"
}
# z_user FMT: per module, decompress, sign-file (ENGINE, SoftHSM2), compress.
z_user() {
	(
		export PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN
		while IFS= read -r m; do
			case $1 in
			xz) xz -d "$m" ;;
			zst) zstd -q -d --rm "$m" ;;
			gz) gzip -d "$m" ;;
			esac || exit 1
			"$SIGNFILE_ENGINE" sha256 "$TOKEN_URI_BASE" "$CERT" "${m%.*}" || exit 1
			zcompress "$1" "${m%.*}" || exit 1
		done < "$LIST"
	)
}
for _f in xz zst gz; do
	eval "e_ms_$_f() { z_ms; }; e_ms_d_$_f() { z_ms_d; }; e_rz_$_f() { z_rz $_f; }; e_user_$_f() { z_user $_f; }"
	CMDTEXT[e_ms_$_f]="KBUILD_SIGN_PIN=$PIN modsign -r tree sha256 '$TOKEN_URI' rsa2048.x509.der"
	CMDTEXT[e_ms_d_$_f]="KBUILD_SIGN_PIN=$PIN modsign -d -r tree sha256 '$TOKEN_URI' rsa2048.x509.der"
done
CMDTEXT[e_rz_xz]='xargs -P 2 -n 8 -a list: for m: xz -d $m && xz --check=crc32 --lzma2=dict=1MiB ${m%.xz}'
CMDTEXT[e_rz_zst]='xargs -P 2 -n 8 -a list: for m: zstd -q -d --rm $m && zstd -q --rm ${m%.zst}'
CMDTEXT[e_rz_gz]='xargs -P 2 -n 8 -a list: for m: gzip -d $m && gzip -n ${m%.gz}'
CMDTEXT[e_user_xz]="PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN; for m in \$(cat list); do xz -d \$m; sign-file-engine sha256 '$TOKEN_URI_BASE' rsa2048.x509.der \${m%.xz}; xz --check=crc32 --lzma2=dict=1MiB \${m%.xz}; done"
CMDTEXT[e_user_zst]="PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN; for m in \$(cat list); do zstd -d --rm \$m; sign-file-engine sha256 '$TOKEN_URI_BASE' rsa2048.x509.der \${m%.zst}; zstd --rm \${m%.zst}; done"
CMDTEXT[e_user_gz]="PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN; for m in \$(cat list); do gzip -d \$m; sign-file-engine sha256 '$TOKEN_URI_BASE' rsa2048.x509.der \${m%.gz}; gzip -n \${m%.gz}; done"
unset _f

section_e_variants() {
	local f out=""
	for f in $Z_FMTS; do
		out="$out e_ms_$f e_ms_d_$f e_rz_$f e_user_$f"
	done
	echo "$out"
}

# zfingerprint ID FMT RELLIST: md5 of each module's decompressed content and
# of its file, as left in $WORK, to compare variants afterwards.
zfingerprint() {
	local m
	while IFS= read -r m; do
		printf '%s  %s\n' "$(zcat_of "$2" "$WORK/$m" 2>/dev/null | md5sum | cut -d' ' -f1)" "$m"
	done < "$3" > "$RUN/zmd5.$1"
	(cd "$WORK" && xargs -d '\n' md5sum) < "$3" > "$RUN/md5.$1" 2>/dev/null || true
	find "$WORK" -name '*.p7s' | wc -l > "$RUN/p7s.$1"
}

# run_section_e: REPS_LONG rounds; in each, every variant of every format on
# a fresh copy of its tree, in turn.
run_section_e() {
	local rep f v
	for rep in $(seq 1 "$REPS_LONG"); do
		for f in $Z_FMTS; do
			LIST=$RUN/zlist.abs
			sed "s|^|$WORK/|" "$ZCORPUS_DIR/$f.list" > "$LIST"
			for v in e_ms_$f e_ms_d_$f e_rz_$f e_user_$f; do
				restore "$ZCORPUS_DIR/$f"
				measure "$v" "$rep" "$v"
				if [ "$rep" = 1 ]; then
					zfingerprint "$v" "$f" "$ZCORPUS_DIR/$f.list"
				fi
			done
		done
	done
}

# zsame A B: how A's modules compare with B's, decompressed and as files.
zsame() {
	[ -s "$RUN/zmd5.$1" ] && [ -s "$RUN/zmd5.$2" ] || { echo "not checked"; return; }
	awk 'FNR == NR { c[$2] = $1; next } ($2 in c) { n++; if (c[$2] == $1) s++ }
		END { if (n == 0) print "not checked"; else if (s == n) printf "content identical (%d of %d)", s, n
		else printf "content DIFFERS in %d of %d", n - s, n }' "$RUN/zmd5.$2" "$RUN/zmd5.$1"
	awk 'FNR == NR { c[$2] = $1; next } ($2 in c) { n++; if (c[$2] == $1) s++ }
		END { if (n > 0 && s == n) printf ", files identical"; else if (n > 0) printf ", %d of %d files differ", n - s, n }' \
		"$RUN/md5.$2" "$RUN/md5.$1"
}

z_label() {
	case $1 in
	e_ms_d_*) echo "modsign -d -r (no module rewritten: no compression)" ;;
	e_ms_*) echo "modsign -r (SoftHSM2 key)" ;;
	e_rz_*) echo "recompressing alone, xargs -P 2" ;;
	e_user_*) echo "per module: decompress, sign-file (ENGINE, SoftHSM2), compress" ;;
	esac
}

# compressed_section: the Markdown of section (e).
compressed_section() {
	local f v ms d rz user n=$Z_N_REAL name tool bytes
	cat <<EOF
## (e) Compressed modules (issue 20), $n modules of $ZCORPUS_PKG $ZCORPUS_VER

The modules of the package (its .ko.xz still carry Debian's build signatures:
cut off first), $(fmt '%.1f' "$(calc "$Z_BYTES / 1000000")") MB uncompressed, compressed three ways as
kbuild 6.12 does, and signed with the key on SoftHSM2. $REPS_LONG interleaved runs of
each variant. "recompressing alone" decompresses and compresses each module
again with the format's own tool on the same two cores: what any signer of
compressed modules must at least do. modsign's \`-d\` run reads, decompresses,
hashes and signs every module but writes only a .p7s: the difference to the
full run is the compression and the module's write.

- $(xz --version | head -n 1), $(zstd --version 2>&1 | head -n 1), $(gzip --version | head -n 1); modsign links liblzma5 $(pkgver liblzma5), libzstd1 $(pkgver libzstd1), zlib1g $(pkgver zlib1g)

EOF
	for f in $Z_FMTS; do
		case $f in
		xz) name=xz tool='`xz --check=crc32 --lzma2=dict=1MiB`' ;;
		zst) name=zstd tool='`zstd`' ;;
		gz) name=gzip tool='`gzip -n`' ;;
		esac
		eval "bytes=\$Z_BYTES_$f"
		ms=$(median_of "e_ms_$f")
		d=$(median_of "e_ms_d_$f")
		rz=$(median_of "e_rz_$f")
		user=$(median_of "e_user_$f")
		cat <<EOF
### $name ($tool, $(fmt '%.1f' "$(calc "$bytes / 1000000")") MB)

| variant | median s | min s | max s | ms/module | CPU ms/module | peak RSS MiB | output |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |
EOF
		for v in "e_ms_$f" "e_ms_d_$f" "e_rz_$f" "e_user_$f"; do
			stat_get "$v"
			if [ "$S_N" -eq 0 ]; then
				printf '| %s | not measured (%s failed runs) | | | | | | |\n' "$(z_label "$v")" "$S_FAIL"
				continue
			fi
			printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(z_label "$v")" "$S_MED" "$S_MIN" \
				"$S_MAX" "$(fmt '%.3f' "$(calc "$S_MED * 1000 / $n")")" \
				"$(fmt '%.3f' "$(calc "$S_CPU * 1000 / $n")")" \
				"$(fmt '%.1f' "$(calc "$S_RSSMAX / 1024")")" \
				"$(case $v in e_ms_d_*) echo "$(cat "$RUN/p7s.$v" 2>/dev/null || echo ?) .p7s written" ;;
					e_ms_*) echo "vs the per-module way: $(zsame "$v" "e_user_$f")" ;;
					*) echo "" ;; esac)"
		done
		cat <<EOF

- \`modsign -r\` / recompressing alone = **$(ratio "$ms" "$rz")x** in wall time (target at most ${Z_TARGET}x: $(verdict "$(ratio "$ms" "$rz")" "<=" "$Z_TARGET")); in CPU time $(ratio "$(cpu_of "e_ms_$f")" "$(cpu_of "e_rz_$f")")x
- the per-module way / \`modsign -r\` = **$(ratio "$user" "$ms")x** in wall time, $(ratio "$(cpu_of "e_user_$f")" "$(cpu_of "e_ms_$f")")x in CPU time
- compression (and the module's write) in modsign's CPU time: $(fmt '%.0f' "$(calc "($(cpu_of "e_ms_$f") - $(cpu_of "e_ms_d_$f")) * 100 / $(cpu_of "e_ms_$f")")")% (full run $(cpu_of "e_ms_$f") s, \`-d\` $(cpu_of "e_ms_d_$f") s of CPU)

EOF
	done
}
