#!/bin/bash
# The release binary links no OpenSSL, installs with its man page, and the
# man page documents every option --help lists.
. "$(dirname "$0")/../lib/common.sh"
t_setup
if ldd "$TOP/modsign" | grep -Eq 'libcrypto|libssl'; then
	t_fail "no libcrypto or libssl linked" "$(ldd "$TOP/modsign")"
else
	t_pass "no libcrypto or libssl linked"
fi
if make -C "$TOP" -s install DESTDIR="$T/root" PREFIX=/usr >"$T/out" 2>&1 &&
    [ -x "$T/root/usr/bin/modsign" ] && [ -f "$T/root/usr/share/man/man1/modsign.1" ]; then
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
