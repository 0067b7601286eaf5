#!/bin/bash
# Replays every file of tests/fuzz/corpus/<target>/ (seeds and crash-*
# reproducers) through the fuzz targets built as plain stdin drivers
# (tests/fuzz/fuzz_stdin.c, -DMS_FUZZ_STDIN) with gcc and ASan+UBSan, so
# `make check` covers the corpus without clang or libFuzzer. One PASS/FAIL
# line per file. The drivers are built here, into build/fuzz-replay/; an
# object is rebuilt when its source or any header is newer.
. "$(dirname "$0")/../lib/common.sh"
t_setup
cd "$TOP" || exit 1
export TMPDIR=$T	# the targets' temp files go with the test's

CC=${CC:-cc}
OUT=build/fuzz-replay
CFLAGS_R="-std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -DMS_VERSION=\"fuzz\"
 $(pkg-config --cflags p11-kit-1 liblzma libzstd zlib 2>/dev/null) -Isrc -Itests/fuzz
 -DMS_FUZZ_STDIN -DMS_FUZZ_DATA_DIR=\"$TOP/tests/data\" -DMS_PBES2_ITER_MAX=20000u
 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
LIBS_R="$(pkg-config --libs p11-kit-1 2>/dev/null || echo -lp11-kit) -lmbedx509 -lmbedcrypto
 -lhogweed -lnettle -lgmp $(pkg-config --libs liblzma libzstd zlib 2>/dev/null || echo -llzma -lzstd -lz)
 -lpthread"

# The library sources each target needs (as FUZZ_SRC_* in the Makefile).
common="src/common/*.c"
srcs_for() {
	case $1 in
	trailer | strip) echo src/modfmt/*.c $common ;;
	pkcs7 | cert | ecsig) echo tests/fuzz/fuzz_certs.c src/cms/*.c $common ;;
	key) echo tests/fuzz/fuzz_certs.c src/signer/signer.c src/signer/keyfile.c src/signer/pbes2.c src/signer/hogweed.c src/cms/*.c $common ;;
	pbes2) echo src/signer/pbes2.c src/cms/*.c $common ;;
	mldsa) echo src/cms/*.c $common ;;
	list) echo src/app/list.c src/app/say.c src/modfmt/*.c $common ;;
	uri | token) echo src/pkcs11/*.c $common ;;
	pin) echo src/cli/pin.c $common ;;
	text) echo src/cli/msg.c $common ;;
	agent) echo src/agent/proto.c src/agent/sock.c src/cms/*.c $common ;;
	xz | zstd | gzip) echo tests/fuzz/fuzz_zdec.c src/modfmt/*.c $common ;;
	esac
}

newest_header=$(find src tests/fuzz \( -name '*.h' -o -name '*.inc' \) -printf '%T@\n' | sort -n | tail -n 1)

# obj SRC: compile SRC into $OUT/obj/SRC.o unless that is newer than it and every header.
obj() {
	local o=$OUT/obj/${1%.c}.o
	local t
	if [ -f "$o" ] && [ "$o" -nt "$1" ]; then
		t=$(stat -c %Y "$o")
		if [ "$t" -gt "${newest_header%.*}" ]; then
			echo "$o"
			return 0
		fi
	fi
	mkdir -p "$(dirname "$o")"
	# shellcheck disable=SC2086
	$CC $CFLAGS_R -c -o "$o" "$1" 2>"$T/cc.err" || return 1
	echo "$o"
}

build() {
	local t=$1 objs=() s o
	for s in tests/fuzz/fuzz_$t.c tests/fuzz/fuzz_util.c tests/fuzz/fuzz_stdin.c $(srcs_for "$t"); do
		o=$(obj "$s") || return 1
		objs+=("$o")
	done
	# shellcheck disable=SC2086
	$CC -fsanitize=address,undefined -o "$OUT/fuzz_$t" "${objs[@]}" $LIBS_R 2>"$T/cc.err"
}

# tests/fuzz/mkcorpus.sh on a copy of the corpus with a seed it no longer
# makes: it keeps what a fuzzer added (SHA-1 names) and the crash-*
# reproducers, removes that seed, and makes again every other seed of the
# tree, byte for byte but for those made with OpenSSL's random salt and IV.
m=$T/mkcorpus
mkdir -p "$m/tests/fuzz"
cp tests/fuzz/mkcorpus.sh "$m/tests/fuzz/"
ln -s "$TOP/tests/data" "$m/tests/data"
cp -r tests/fuzz/corpus "$m/tests/fuzz/"
: >"$m/tests/fuzz/corpus/uri/no-longer-made"
if "$m/tests/fuzz/mkcorpus.sh" >"$T/out" 2>&1; then
	t_pass "mkcorpus.sh runs"
else
	t_fail "mkcorpus.sh runs" "$(tail -n 5 "$T/out")"
fi
(cd tests/fuzz/corpus && find . -type f | sort) >"$T/tree"
(cd "$m/tests/fuzz/corpus" && find . -type f | sort) >"$T/made"
kept=$(grep -cE '/([0-9a-f]{40}|crash-[^/]*)$' "$T/tree")
changed=""
while IFS= read -r f; do
	case $f in
	./pbes2/* | ./key/*pbes2*) ;;
	*) cmp -s "tests/fuzz/corpus/$f" "$m/tests/fuzz/corpus/$f" || changed="$changed $f" ;;
	esac
done <"$T/tree"
if [ "$kept" -gt 0 ] && diff "$T/tree" "$T/made" >"$T/diff" && [ -z "$changed" ]; then
	t_pass "mkcorpus.sh: $kept fuzzer-found and crash-* files kept, a stale seed removed, the others made again"
else
	t_fail "mkcorpus.sh: $kept fuzzer-found and crash-* files kept, a stale seed removed, the others made again" \
		"$(head -n 20 "$T/diff")" "not made the same:$changed"
fi
rm -rf "$m"	# its script names the test passphrase

for dir in tests/fuzz/corpus/*/; do
	t=$(basename "$dir")
	if ! build "$t"; then
		t_fail "build fuzz_$t" "$(tail -n 15 "$T/cc.err")"
		continue
	fi
	t_pass "build fuzz_$t"
	for f in "$dir"*; do
		[ -f "$f" ] || continue
		# A subshell, so that the shell's "Aborted" notice lands in the log too.
		if ("$OUT/fuzz_$t" "$f"; exit $?) >"$T/out" 2>&1; then
			t_pass "fuzz_$t: $(basename "$f")"
		else
			t_fail "fuzz_$t: $(basename "$f")" "$(grep -E 'ERROR|SUMMARY|runtime error|fuzz: ' "$T/out" | head -n 6)"
		fi
	done
done
t_done
