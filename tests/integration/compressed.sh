#!/bin/bash
# Compressed modules (.ko.xz, .ko.zst, .ko.gz) as kbuild and distributions
# make them: signed (single and bulk, PEM key and token), the result
# decompressed is byte for byte sign-file's output on the decompressed
# module, and recompressed as kbuild does (xz: CRC32 and a 1 MiB dictionary,
# byte for byte what `xz --check=crc32 --lzma2=dict=1MiB` writes; zstd: what
# `zstd` writes; gzip: the header of `gzip -n`), which the reference tools
# decode. -p, -d, --replace, --skip-signed, a dest, strip, verify, info and
# -r work on them. Every hostile container (corrupt, truncated, trailing
# bytes, two streams, a name that says another format, a decompression bomb)
# is refused with a message naming the module, which stays untouched, and
# nothing left behind. Debian 12's 6.12 cloud kernel (.ko.xz, signed by
# Debian) verifies with the certificate from its vmlinuz (skipped when the
# package cannot be fetched).
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/lib/debkernel.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
"$TOP/tests/lib/mkmodule.sh" "$T/src" 4 >/dev/null
mod=$T/src/mod001.ko
KEY=$DATA/rsa2048.key.pem
CERT=$DATA/rsa2048.x509.der
FMTS="xz zst gz"

# zc FMT FILE: kbuild's compression of FILE (scripts/Makefile.modinst of 6.12)
# to stdout. A file, not a pipe: zstd records the size it knows in the frame.
zc() {
	case $1 in
	xz) xz --check=crc32 --lzma2=dict=1MiB -c "$2" ;;
	zst) zstd -q -c "$2" ;;
	gz) gzip -n -c "$2" ;;
	esac
}
# zd FMT FILE: the reference tool's decompression of FILE to stdout.
zd() {
	case $1 in
	xz) xz -dc "$2" ;;
	zst) zstd -q -dc "$2" ;;
	gz) gzip -dc "$2" ;;
	esac
}
# zt FMT FILE: the reference tool's integrity test.
zt() {
	case $1 in
	xz) xz -t "$2" ;;
	zst) zstd -q -t "$2" ;;
	gz) gzip -t "$2" ;;
	esac
}
fmt_name() {
	case $1 in xz) echo xz ;; zst) echo zstd ;; gz) echo gzip ;; esac
}
# tmp_left DIR: how many modsign temp files are in DIR.
tmp_left() {
	find "$1" -maxdepth 1 -name '*.modsign-*' | wc -l
}

# sign-file's output on the plain module, with and without -p.
mkdir -p "$T/ref"
cp "$mod" "$T/ref/m.ko"
"$SIGNFILE" -p sha256 "$KEY" "$CERT" "$T/ref/m.ko"
cp "$mod" "$T/ref/other.ko"
"$SIGNFILE" sha256 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.der" "$T/ref/other.ko"

for f in $FMTS; do
	d=$T/$f
	mkdir -p "$d"
	zc "$f" "$mod" > "$d/u.ko.$f"

	# --- single mode, PEM key: sign-file's bytes inside, kbuild's container ---
	cp "$d/u.ko.$f" "$d/m.ko.$f"
	chmod 0600 "$d/m.ko.$f"
	run_ms sha256 "$KEY" "$CERT" "$d/m.ko.$f"
	if [ "$rc" -eq 0 ] && zd "$f" "$d/m.ko.$f" | cmp -s - "$T/ref/m.ko"; then
		t_pass "$f: signed, decompressed equals sign-file's output on the decompressed module"
	else
		t_fail "$f: signed, decompressed equals sign-file's output" "$(cat "$T/out")"
	fi
	if zt "$f" "$d/m.ko.$f" 2>"$T/zt.err"; then
		t_pass "$f: the reference tool's integrity test passes"
	else
		t_fail "$f: the reference tool's integrity test passes" "$(cat "$T/zt.err")"
	fi
	if [ "$(stat -c %a "$d/m.ko.$f")" = 600 ] && [ "$(tmp_left "$d")" -eq 0 ]; then
		t_pass "$f: mode 0600 kept, no temp file left"
	else
		t_fail "$f: mode 0600 kept, no temp file left" "$(ls -la "$d")"
	fi
	case $f in
	xz)
		xz -lvv "$d/m.ko.$f" > "$T/list" 2>&1
		if grep -q '^  *Check: *CRC32$' "$T/list" &&
		    grep -Eq ' --lzma2=dict=1MiB$' "$T/list" &&
		    [ "$(grep -c -- '--lzma2=dict=1MiB$' "$T/list")" -eq 1 ] &&
		    grep -q '^  *Streams: *1$' "$T/list"; then
			t_pass "xz: xz -lvv shows one stream, one block, CRC32, --lzma2=dict=1MiB"
		else
			t_fail "xz: xz -lvv shows CRC32 and a 1 MiB dictionary" "$(cat "$T/list")"
		fi
		;;
	gz)
		# gzip -n: FLG 0 (no name, no comment), MTIME 0, XFL 0, OS 3.
		if [ "$(head -c 10 "$d/m.ko.$f" | od -An -tx1 | tr -d ' \n')" = 1f8b0800000000000003 ] &&
		    [ "$(zc gz "$T/ref/m.ko" | head -c 10 | od -An -tx1 | tr -d ' \n')" = \
			1f8b0800000000000003 ]; then
			t_pass "gz: header as gzip -n writes it: no name, no time stamp"
		else
			t_fail "gz: header as gzip -n" "$(head -c 10 "$d/m.ko.$f" | od -An -tx1)"
		fi
		;;
	esac
	# xz and zstd: the very bytes kbuild's command makes of sign-file's module.
	if [ "$f" != gz ]; then
		if zc "$f" "$T/ref/m.ko" | cmp -s - "$d/m.ko.$f"; then
			t_pass "$f: byte for byte what kbuild's compression of sign-file's output gives"
		else
			t_fail "$f: byte for byte what kbuild's compression of sign-file's output gives"
		fi
	fi

	# --- a token key gives the same bytes (RSA is deterministic) ---
	cp "$d/u.ko.$f" "$d/t.ko.$f"
	run_ms sha256 "$(key_uri rsa2048)" "$CERT" "$d/t.ko.$f"
	if [ "$rc" -eq 0 ] && same "$d/t.ko.$f" "$d/m.ko.$f"; then
		t_pass "$f: token key, same file as with the PEM key"
	else
		t_fail "$f: token key, same file as with the PEM key" "$(cat "$T/out")"
	fi

	# --- verify and info ---
	run_ms verify -c "$CERT" "$d/m.ko.$f"
	expect_fail "$f: verify -c: OK" 0 "^OK $d/m.ko.$f TEST-ONLY modsign rsa2048 sha256 rsa$"
	run_ms info "$d/m.ko.$f"
	if [ "$rc" -eq 0 ] && grep -q "^compression: *$(fmt_name "$f")$" "$T/out" &&
	    grep -q '^signer: *TEST-ONLY modsign rsa2048$' "$T/out" &&
	    grep -q "^payload_len: *$(stat -c %s "$mod")$" "$T/out"; then
		t_pass "$f: info shows the compression, the signer and the decompressed payload length"
	else
		t_fail "$f: info" "$(cat "$T/out")"
	fi
	run_ms info --json "$d/m.ko.$f"
	expect_fail "$f: info --json names the compression" 0 "\"compression\": \"$(fmt_name "$f")\""

	# --- already signed: refused, --skip-signed, --replace ---
	cp "$d/m.ko.$f" "$d/before"
	run_ms sha256 "$KEY" "$CERT" "$d/m.ko.$f"
	if [ "$rc" -eq 1 ] && grep -q "m.ko.$f: already ends with a module signature" "$T/out" &&
	    same "$d/m.ko.$f" "$d/before"; then
		t_pass "$f: an already signed module is refused and left as it is"
	else
		t_fail "$f: an already signed module is refused" "$(cat "$T/out")"
	fi
	ino=$(stat -c %i "$d/m.ko.$f")
	run_ms --skip-signed sha256 "$KEY" "$CERT" "$d/m.ko.$f"
	if [ "$rc" -eq 0 ] && same "$d/m.ko.$f" "$d/before" && [ "$(stat -c %i "$d/m.ko.$f")" = "$ino" ]; then
		t_pass "$f: --skip-signed leaves a module signed by the certificate alone"
	else
		t_fail "$f: --skip-signed leaves it alone" "$(cat "$T/out")"
	fi
	run_ms --replace sha256 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.der" "$d/m.ko.$f"
	if [ "$rc" -eq 0 ] && zd "$f" "$d/m.ko.$f" | cmp -s - "$T/ref/other.ko"; then
		t_pass "$f: --replace with another key equals signing the unsigned module with it"
	else
		t_fail "$f: --replace with another key" "$(cat "$T/out")"
	fi
	run_ms --replace sha256 "$KEY" "$CERT" "$d/m.ko.$f"
	if [ "$rc" -eq 0 ] && same "$d/m.ko.$f" "$d/before"; then
		t_pass "$f: --replace back gives the first file again"
	else
		t_fail "$f: --replace back gives the first file again" "$(cat "$T/out")"
	fi

	# --- -p and -d: the .p7s named as kbuild would leave it, module.ko.p7s ---
	cp "$d/u.ko.$f" "$d/p.ko.$f"
	run_ms -p sha256 "$KEY" "$CERT" "$d/p.ko.$f"
	if [ "$rc" -eq 0 ] && same "$d/p.ko.p7s" "$T/ref/m.ko.p7s" && [ ! -e "$d/p.ko.$f.p7s" ] &&
	    zd "$f" "$d/p.ko.$f" | cmp -s - "$T/ref/m.ko"; then
		t_pass "$f: -p writes p.ko.p7s, equal to sign-file -p's .p7s"
	else
		t_fail "$f: -p writes p.ko.p7s" "$(cat "$T/out")" "$(ls "$d")"
	fi
	cp "$d/u.ko.$f" "$d/q.ko.$f"
	run_ms -d sha256 "$KEY" "$CERT" "$d/q.ko.$f"
	if [ "$rc" -eq 0 ] && same "$d/q.ko.p7s" "$T/ref/m.ko.p7s" && same "$d/q.ko.$f" "$d/u.ko.$f"; then
		t_pass "$f: -d writes only q.ko.p7s; the module is untouched"
	else
		t_fail "$f: -d writes only the .p7s" "$(cat "$T/out")"
	fi

	# --- a dest: same container; a name that says another is refused ---
	mkdir -p "$d/dest"
	run_ms sha256 "$KEY" "$CERT" "$d/u.ko.$f" "$d/dest/out.ko.$f"
	if [ "$rc" -eq 0 ] && same "$d/dest/out.ko.$f" "$d/before" &&
	    zd "$f" "$d/u.ko.$f" | cmp -s - "$mod"; then
		t_pass "$f: a dest gets the signed module, the original stays unsigned"
	else
		t_fail "$f: a dest gets the signed module" "$(cat "$T/out")"
	fi
	run_ms sha256 "$KEY" "$CERT" "$d/u.ko.$f" "$d/dest/out.ko"
	if [ "$rc" -eq 1 ] && grep -q "out.ko: the name has no .$f suffix" "$T/out" &&
	    [ ! -e "$d/dest/out.ko" ] && [ "$(tmp_left "$d/dest")" -eq 0 ]; then
		t_pass "$f: a dest named as uncompressed is refused, nothing written"
	else
		t_fail "$f: a dest named as uncompressed is refused" "$(cat "$T/out")"
	fi

	# --- strip: back to the unsigned module, in the same container ---
	cp "$d/before" "$d/s.ko.$f"
	run_ms strip "$d/s.ko.$f"
	if [ "$rc" -eq 0 ] && zd "$f" "$d/s.ko.$f" | cmp -s - "$mod" && zt "$f" "$d/s.ko.$f" &&
	    [ "$f" = gz -o "$(zc "$f" "$mod" | cmp -s - "$d/s.ko.$f" && echo same)" = same ]; then
		t_pass "$f: strip leaves the unsigned module, compressed again"
	else
		t_fail "$f: strip leaves the unsigned module" "$(cat "$T/out")"
	fi
	run_ms verify -c "$CERT" "$d/s.ko.$f"
	expect_fail "$f: verify of the stripped module: not signed" 1 "^FAIL $d/s.ko.$f: not signed"
done

# --- xz: a module over 3 MiB. xz 5.6 and later (kbuild's command without -T)
# cut it into 3 MiB blocks, each with its sizes; earlier xz writes one block.
# Either way modsign's file is byte for byte kbuild's compression of
# sign-file's output, as this machine's xz makes it. ---
g=$T/big
mkdir -p "$g"
{ cat "$mod"; head -c 4194304 /dev/urandom | base64; } > "$g/ref.ko"	# 5.6 MB
zc xz "$g/ref.ko" > "$g/m.ko.xz"
"$SIGNFILE" sha256 "$KEY" "$CERT" "$g/ref.ko"
run_ms sha256 "$KEY" "$CERT" "$g/m.ko.xz"
zc xz "$g/ref.ko" > "$g/k.xz"
# blocks FILE: how many xz blocks FILE holds.
blocks() {
	xz --robot -l "$1" 2>&1 | awk '$1 == "totals" { print $3 }'
}
if [ "$rc" -eq 0 ] && same "$g/m.ko.xz" "$g/k.xz" && xz -t "$g/m.ko.xz"; then
	t_pass "xz: a 5.6 MB module ($(blocks "$g/k.xz") block(s) with this xz) is byte for byte kbuild's compression of sign-file's output"
else
	t_fail "xz: a 5.6 MB module is byte for byte kbuild's compression of sign-file's output" \
		"$(cat "$T/out")" "modsign's: $(blocks "$g/m.ko.xz") block(s); kbuild's: $(blocks "$g/k.xz")"
fi
rm -rf "$g"

# --- bulk: -r finds .ko, .ko.xz, .ko.zst, .ko.gz (and nothing else), token key ---
b=$T/bulk
mkdir -p "$b/sub"
cp "$T/src/mod000.ko" "$b/mod000.ko"
zc xz "$T/src/mod001.ko" > "$b/sub/mod001.ko.xz"
zc zst "$T/src/mod002.ko" > "$b/mod002.ko.zst"
zc gz "$T/src/mod003.ko" > "$b/sub/mod003.ko.gz"
printf 'BZh91AY&SY' > "$b/mod000.ko.bz2"	# a suffix kbuild does not make
zc xz "$T/src/mod000.ko" > "$b/notamodule.xz"
cp "$b/mod000.ko.bz2" "$T/bz2.before"
cp "$b/notamodule.xz" "$T/xz.before"
for i in 0 1 2 3; do
	cp "$T/src/mod00$i.ko" "$T/ref/b$i.ko"
	"$SIGNFILE" sha256 "$KEY" "$CERT" "$T/ref/b$i.ko"
done
run_ms -r "$b" sha256 "$(key_uri rsa2048)" "$CERT"
if [ "$rc" -eq 0 ] && same "$b/mod000.ko" "$T/ref/b0.ko" &&
    zd xz "$b/sub/mod001.ko.xz" | cmp -s - "$T/ref/b1.ko" &&
    zd zst "$b/mod002.ko.zst" | cmp -s - "$T/ref/b2.ko" &&
    zd gz "$b/sub/mod003.ko.gz" | cmp -s - "$T/ref/b3.ko" &&
    same "$b/mod000.ko.bz2" "$T/bz2.before" && same "$b/notamodule.xz" "$T/xz.before" &&
    grep -q '4 signed' "$T/out"; then
	t_pass "-r signs .ko, .ko.xz, .ko.zst and .ko.gz (each as sign-file would), nothing else"
else
	t_fail "-r signs every kind of module" "$(cat "$T/out")"
fi
run_ms verify -c "$CERT" -r "$b"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^OK ' "$T/out")" -eq 4 ]; then
	t_pass "verify -r: four modules of four kinds, OK"
else
	t_fail "verify -r: four modules OK" "$(cat "$T/out")"
fi
run_ms strip -r "$b"
if [ "$rc" -eq 0 ] && same "$b/mod000.ko" "$T/src/mod000.ko" &&
    zd gz "$b/sub/mod003.ko.gz" | cmp -s - "$T/src/mod003.ko"; then
	t_pass "strip -r: every kind of module back to unsigned"
else
	t_fail "strip -r" "$(cat "$T/out")"
fi

# --- hostile containers: refused, named, untouched, nothing left behind ---
h=$T/hostile
mkdir -p "$h"
# hostile NAME FILE WHY [OPTIONS...]: single-mode signing, bulk signing next to
# a good module, and verify all refuse FILE with WHY; FILE stays as it was.
hostile() {
	local name=$1 file=$2 why=$3
	shift 3
	cp "$file" "$T/h.before"
	run_ms "$@" sha256 "$KEY" "$CERT" "$file"
	if [ "$rc" -eq 1 ] && grep -q -- "$file: $why" "$T/out" && same "$file" "$T/h.before" &&
	    [ "$(tmp_left "$(dirname "$file")")" -eq 0 ]; then
		t_pass "$name: refused (\"$why\"), untouched, nothing left"
	else
		t_fail "$name: refused, untouched" "status $rc, want: $file: $why" "$(cat "$T/out")"
	fi
	cp "$T/src/mod002.ko" "$h/good.ko"
	run_ms -b "$@" sha256 "$KEY" "$CERT" "$file" "$h/good.ko"
	if [ "$rc" -eq 1 ] && grep -q -- "$file: $why" "$T/out" && same "$file" "$T/h.before" &&
	    same "$h/good.ko" "$T/ref/b2.ko" && [ "$(tmp_left "$(dirname "$file")")" -eq 0 ]; then
		t_pass "$name: in bulk, refused alone; the good module beside it is signed"
	else
		t_fail "$name: in bulk" "status $rc" "$(cat "$T/out")"
	fi
	run_ms verify "$@" -c "$CERT" "$file"
	expect_fail "$name: verify FAILs it" 1 "^FAIL $file: $why"
}
for f in $FMTS; do
	zc "$f" "$mod" > "$h/good.ko.$f"
	size=$(stat -c %s "$h/good.ko.$f")
	name=$(fmt_name "$f")
	cp "$h/good.ko.$f" "$h/corrupt.ko.$f"
	printf '\377\377\377\377' | dd of="$h/corrupt.ko.$f" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
	hostile "$f corrupt" "$h/corrupt.ko.$f" "$name: \(corrupt data\|checksum mismatch\)"
	head -c $((size - 7)) "$h/good.ko.$f" > "$h/trunc.ko.$f"
	hostile "$f truncated" "$h/trunc.ko.$f" "$name: truncated"
	{ cat "$h/good.ko.$f"; printf 'garbage'; } > "$h/trail.ko.$f"
	hostile "$f trailing garbage" "$h/trail.ko.$f" "$name: bytes after the end"
	cat "$h/good.ko.$f" "$h/good.ko.$f" > "$h/two.ko.$f"
	hostile "$f two streams" "$h/two.ko.$f" "$name: bytes after the end"
	cp "$h/good.ko.$f" "$h/plain-named.ko"
	hostile "$f content named .ko" "$h/plain-named.ko" "the name has no .$f suffix"
	cp "$mod" "$h/elf.ko.$f"
	hostile "plain module named .ko.$f" "$h/elf.ko.$f" "the name says $name (.$f), but the content is not"
	head -c 2097152 /dev/zero > "$T/zeros"
	zc "$f" "$T/zeros" > "$h/bomb2m.ko.$f"
	hostile "$f 2 MiB of zeros, --max-module-size 1M" "$h/bomb2m.ko.$f" \
		"decompresses to more than the module size limit" --max-module-size 1M
done
cp "$h/good.ko.zst" "$h/zst-named.ko.xz"
hostile "zstd content named .ko.xz" "$h/zst-named.ko.xz" "the name says xz (.xz), but the content is zstd"
{ cat "$h/good.ko.xz"; head -c 4 /dev/zero; } > "$h/pad.ko.xz"
hostile "xz stream padding" "$h/pad.ko.xz" "xz: bytes after the end"
# The default limit, 256 MiB: 300 MB of zeros in a few KiB (zstd and gzip make them fast).
head -c 300000000 /dev/zero | zstd -q -c > "$h/bomb.ko.zst"
hostile "zstd bomb past the default 256 MiB" "$h/bomb.ko.zst" "decompresses to more than the module size limit"
head -c 300000000 /dev/zero | gzip -1 -n -c > "$h/bomb.ko.gz"
cp "$h/bomb.ko.gz" "$T/h.before"
run_ms strip "$h/bomb.ko.gz"
if [ "$rc" -eq 1 ] && grep -q "bomb.ko.gz: decompresses to more than" "$T/out" && same "$h/bomb.ko.gz" "$T/h.before"; then
	t_pass "gzip bomb past the default limit: strip refuses it too"
else
	t_fail "gzip bomb: strip refuses it" "$(cat "$T/out")"
fi
run_ms sha256 --max-module-size 0 "$KEY" "$CERT" "$h/good.ko.xz"
expect_fail "--max-module-size 0: usage error" 2 "max-module-size"
run_ms verify --max-module-size 3G -c "$CERT" "$h/good.ko.xz"
expect_fail "--max-module-size past 2G-1: usage error" 2 "max-module-size"

# --- Debian 12's 6.12 cloud kernel: .ko.xz signed by Debian ------------------------
if deb=$(deb_fetch linux-image-6.12-cloud-amd64 'linux-image-6\.12\.[0-9]+\+deb12-cloud-amd64'); then
	mkdir -p "$T/deb"
	dpkg-deb -x "$deb" "$T/deb"
	debmin=1000
	if [ "${MODSIGN_TEST_VALGRIND:-0}" = 1 ]; then
		# Under valgrind, one directory of the tree (crypto/, ~70 modules) is enough.
		find "$T/deb/lib/modules" -name '*.ko.xz' ! -path '*/kernel/crypto/*' -delete
		debmin=50
	fi
	ndeb=$(find "$T/deb/lib/modules" -name '*.ko.xz' | wc -l)
	if deb_cert "$(ls "$T"/deb/boot/vmlinuz-*)" "$T/debkey.der"; then
		run_ms verify -c "$T/debkey.der" -r "$T/deb/lib/modules"
		nok=$(grep -c '^OK .* Build time autogenerated kernel key sha256 ecdsa$' "$T/out")
		if [ "$ndeb" -gt "$debmin" ] && [ "$rc" -eq 0 ] && [ "$nok" -eq "$ndeb" ]; then
			t_pass "Debian 6.12 cloud: all $ndeb .ko.xz verify with the certificate from vmlinuz"
		else
			t_fail "Debian 6.12 cloud modules verify" "status $rc, $nok OK of $ndeb" \
				"$(grep -v '^OK' "$T/out" | head)"
		fi
		# One changed byte inside the compressed data: the container's check catches it.
		m1=$(find "$T/deb/lib/modules" -name '*.ko.xz' | sort | tail -n 1)
		cp "$m1" "$T/deb1.ko.xz"
		off=$(($(stat -c %s "$m1") / 2))
		byte=$(od -An -tu1 -j "$off" -N 1 "$m1" | tr -d ' ')
		printf "\\$(printf %03o $((byte ^ 1)))" | dd of="$T/deb1.ko.xz" bs=1 seek="$off" conv=notrunc \
			2>/dev/null
		run_ms verify -c "$T/debkey.der" "$T/deb1.ko.xz"
		expect_fail "Debian .ko.xz with a changed byte: FAIL" 1 "^FAIL $T/deb1.ko.xz: xz: "
	else
		t_skip "Debian 6.12" "certificate not found in vmlinuz"
	fi
	rm -rf "$T/deb"
else
	t_skip "Debian 6.12 cloud modules" "linux-image-6.12.*-cloud-amd64 could not be fetched into $DEBCACHE"
fi
t_done
