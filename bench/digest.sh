#!/bin/bash
# Digest microbenchmark: CPU time of hashing real module files (in memory)
# with modsign's digest interface (nettle, src/cms/digest.c) beside what it
# replaced (mbedTLS 2.28's md layer; for SHA-256/224 the former
# src/cms/sha256_ni.c, built from git history when the history is there).
# Interleaved rounds, medians, ratios; a markdown table on stdout.
#
# Usage: bench/digest.sh [ROUNDS [FILE...]]
#   ROUNDS  passes per variant (default 7)
#   FILE    module files; default: about 64 MiB of the bench corpus's full set
#           (every k-th module, as bench/setup.sh unpacked it), else of
#           /lib/modules. `make bench` runs it as its section (h).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build/bench-digest
CC=${CC:-cc}
ROUNDS=${1:-7}
[ $# -gt 0 ] && shift
mkdir -p "$B"

# Files: given, or spread over a corpus up to ~64 MiB.
pick() {
	local list=$1 budget=$((64 * 1024 * 1024)) n k total=0 f
	n=$(wc -l < "$list")
	[ "$n" -gt 0 ] || return 0
	k=$(( n / 400 > 0 ? n / 400 : 1 ))
	awk -v k="$k" 'NR % k == 0' "$list" | while IFS= read -r f; do
		[ "$total" -lt "$budget" ] || break
		total=$((total + $(stat -c %s "$f")))
		printf '%s\n' "$f"
	done
}
if [ $# -eq 0 ]; then
	cache=${MODSIGN_BENCH_CACHE:-/var/cache/modsign-bench}
	full=$(ls -d "$cache"/corpus/*/full 2>/dev/null | tail -n 1 || true)
	if [ -n "$full" ]; then
		find "$full" -name '*.ko' | sort > "$B/files.all"
	else
		find /lib/modules -name '*.ko' 2>/dev/null | sort > "$B/files.all" || true
	fi
	pick "$B/files.all" > "$B/files"
	mapfile -t files < "$B/files"
	set -- "${files[@]}"
fi
[ $# -gt 0 ] || { echo "digest.sh: no module files (run make bench once, or name some)" >&2; exit 1; }

flags="-std=c11 -D_DEFAULT_SOURCE -O2 -I$TOP/src $(pkg-config --cflags nettle 2>/dev/null)"
libs="$(pkg-config --libs nettle 2>/dev/null || echo -lnettle) -lmbedcrypto"
old=()
# The former SHA-NI code: from the parent of the commit that deleted it.
rev=$(git -C "$TOP" log -1 --diff-filter=D --format=%H -- src/cms/sha256_ni.c 2>/dev/null || true)
rev=${rev:+$rev^}
# (before that commit exists, HEAD still has it)
[ -n "$rev" ] || rev=HEAD
if [ -n "$rev" ] && git -C "$TOP" cat-file -e "$rev:src/cms/sha256_ni.c" 2>/dev/null; then
	for f in src/cms/sha256_ni.c src/cms/cms_internal.h src/cms/cms.h src/cms/pkcs7.h \
		src/common/ms_common.h; do
		mkdir -p "$B/old/$(dirname "$f")"
		git -C "$TOP" show "$rev:$f" > "$B/old/$f"
	done
	# shellcheck disable=SC2086
	$CC $flags -c -o "$B/sha256_ni_old.o" "$B/old/src/cms/sha256_ni.c"
	old=(-DMS_BENCH_OLD_NI=1 "$B/sha256_ni_old.o")
else
	echo "digest.sh: no git history with src/cms/sha256_ni.c: SHA-256 old = mbedTLS only" >&2
fi
# shellcheck disable=SC2086
$CC $flags -o "$B/digest" "$TOP/bench/digest.c" "$TOP/src/cms/digest.c" "$TOP/src/cms/hash.c" \
	"${old[@]}" $libs
"$B/digest" "$ROUNDS" "$@"
