#!/bin/bash
# Module lists at their edges: -r given a symbolic link to a directory
# (followed, as find -H does; nothing below it is), entries named *.ko that
# are not regular files (skipped, with a -v note), an empty directory (an
# error for sign, verify, strip and info alike, also with --json), and a
# --files-from list with DOS line ends (refused, naming the line).
. "$(dirname "$0")/../lib/common.sh"
t_setup

KEY=$DATA/rsa2048.key.pem
CERT=$DATA/rsa2048.x509.der
"$TOP/tests/lib/mkmodule.sh" "$T/real" 2 >/dev/null
cp -a "$T/real" "$T/orig"
mkdir "$T/real/sub" "$T/elsewhere"
mkfifo "$T/real/sub/fifo.ko"
cp "$T/orig/mod000.ko" "$T/elsewhere/outside.ko"
ln -s ../../elsewhere/outside.ko "$T/real/sub/link.ko"
ln -s ../elsewhere "$T/real/linkdir"
ln -s real "$T/link"

# --- -r through a symbolic link ------------------------------------------------------
run_ms -v -r "$T/link" sha256 "$KEY" "$CERT"
if [ "$rc" -eq 0 ] && grep -q "^signed $T/link/mod000.ko$" "$T/out" &&
	grep -q "^signed $T/link/mod001.ko$" "$T/out" && grep -q ' 2 signed, .* of 2;' "$T/out" &&
	! same "$T/real/mod000.ko" "$T/orig/mod000.ko"; then
	t_pass "sign -r LINK: the directory the link names is walked, as find -H"
else
	t_fail "sign -r LINK: the directory the link names is walked" "$(cat "$T/out")"
fi
if same "$T/elsewhere/outside.ko" "$T/orig/mod000.ko"; then
	t_pass "sign -r LINK: links below it (to a module, to a directory) not followed"
else
	t_fail "sign -r LINK: links below it not followed" "elsewhere/outside.ko was signed"
fi
if grep -q "^modsign: warning: $T/link/sub/fifo.ko: a FIFO; skipped$" "$T/out" &&
	grep -q "^modsign: warning: $T/link/sub/link.ko: a symbolic link (not followed); skipped$" "$T/out"; then
	t_pass "sign -v: a FIFO and a link named *.ko are skipped with a note"
else
	t_fail "sign -v: a FIFO and a link named *.ko are skipped with a note" "$(cat "$T/out")"
fi
run_ms -r "$T/link" sha256 "$KEY" "$CERT"
expect_fail "sign -r LINK again: refused as signed (the same modules found)" 1 \
	"$T/link/mod000.ko: already ends with a module signature"
run_ms verify -c "$CERT" -r "$T/link"
if [ "$rc" -eq 0 ] && [ "$(grep -c "^OK $T/link/mod00[01].ko " "$T/out")" -eq 2 ] &&
	! grep -q 'fifo\|outside' "$T/out"; then
	t_pass "verify -r LINK: both modules OK, nothing else"
else
	t_fail "verify -r LINK: both modules OK" "$(cat "$T/out")"
fi
run_ms strip -r "$T/link"
if [ "$rc" -eq 0 ] && same "$T/real/mod000.ko" "$T/orig/mod000.ko" &&
	same "$T/real/mod001.ko" "$T/orig/mod001.ko" && [ -p "$T/real/sub/fifo.ko" ]; then
	t_pass "strip -r LINK: both modules stripped, the FIFO left alone"
else
	t_fail "strip -r LINK" "$(cat "$T/out")"
fi

# --- an empty directory: one answer from every command -------------------------------
mkdir "$T/empty"
# empty_dir NAME ARGS...: modsign ARGS exits 1 and says there are no modules.
empty_dir() {
	local name=$1
	shift
	run_ms "$@"
	if [ "$rc" -eq 1 ] && grep -q '^modsign: no modules to ' "$T/out"; then
		t_pass "-r EMPTYDIR: $name: exit 1, no modules"
	else
		t_fail "-r EMPTYDIR: $name: exit 1, no modules" "status $rc" "$(cat "$T/out")"
	fi
}
empty_dir sign -r "$T/empty" sha256 "$KEY" "$CERT"
empty_dir verify verify -r "$T/empty"
empty_dir strip strip -r "$T/empty"
empty_dir info info -r "$T/empty"
empty_dir "info --json" info --json -r "$T/empty"
run_ms info --json -r "$T/empty"
if python3 -c 'import json,sys; sys.exit(json.loads(sys.stdin.read().split("\n")[0]) != [])' \
	<<<"$(grep -v '^modsign:' "$T/out")"; then
	t_pass "info --json -r EMPTYDIR: still prints an empty array"
else
	t_fail "info --json -r EMPTYDIR: still prints an empty array" "$(cat "$T/out")"
fi

# --- DOS line ends ----------------------------------------------------------------
printf '%s\n%s\r\n' "$T/orig/mod000.ko" "$T/orig/mod001.ko" >"$T/crlf.list"
run_ms verify --files-from "$T/crlf.list"
expect_fail "--files-from with CR LF: refused, naming the line" 1 \
	"^modsign: $T/crlf.list: line 2 ends with CR (a DOS line end)"
if ! grep -q "$(printf '\r')" "$T/out"; then
	t_pass "--files-from with CR LF: no raw CR printed"
else
	t_fail "--files-from with CR LF: no raw CR printed" "$(od -c "$T/out" | head)"
fi
printf '%s\0' "$T/orig/mod000.ko" >"$T/nul.list"
run_ms verify --files-from "$T/nul.list" -0
expect_fail "--files-from -0: names taken as they are (unsigned: FAIL, not a list error)" 1 \
	"^FAIL $T/orig/mod000.ko: not signed"
t_done
