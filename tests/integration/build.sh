#!/bin/bash
# The release binary links no OpenSSL, installs with its man page and bash
# completion, and the man page documents every option --help lists.
. "$(dirname "$0")/../lib/common.sh"
t_setup
if ldd "$TOP/modsign" | grep -Eq 'libcrypto|libssl'; then
	t_fail "no libcrypto or libssl linked" "$(ldd "$TOP/modsign")"
else
	t_pass "no libcrypto or libssl linked"
fi
# The default release link (Makefile LINK=static) leaves only p11-kit (with
# its libffi) and libc to the loader: each per-module process starts faster.
needed=$(readelf -d "$TOP/modsign" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
if [ "${LINK:-static}" != static ]; then
	t_skip "release binary: only libp11-kit and libc shared" "built with LINK=$LINK"
elif [ "$needed" = "libc.so.6 libp11-kit.so.0 " ]; then
	t_pass "release binary: only libp11-kit and libc shared"
else
	t_fail "release binary: only libp11-kit and libc shared" "NEEDED: $needed"
fi
if make -C "$TOP" -s install DESTDIR="$T/root" PREFIX=/usr >"$T/out" 2>&1 &&
    [ -x "$T/root/usr/bin/modsign" ] && [ -f "$T/root/usr/share/man/man1/modsign.1" ] &&
    [ -f "$T/root/usr/share/bash-completion/completions/modsign" ]; then
	t_pass "make install DESTDIR PREFIX"
else
	t_fail "make install DESTDIR PREFIX" "$(cat "$T/out")"
fi
missing=""
for opt in $( { "$TOP/modsign" --help; "$TOP/modsign" agent --help; } | grep -E '^  -' |
    grep -oE -- '(^|[ ,])--?[a-z0-9][a-z0-9-]*' | tr -d ' ,' | sort -u); do
	grep -q -- "$(printf '%s' "$opt" | sed 's/-/\\\\-/g')" "$TOP/doc/modsign.1" || missing="$missing $opt"
done
[ -z "$missing" ] && t_pass "man page documents every option of --help and agent --help" ||
	t_fail "man page documents every option of --help and agent --help" "missing:$missing"
t_done
