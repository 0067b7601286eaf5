#!/bin/bash
# File names as an attacker picks them: a module named with a newline and a
# forged result line, one with terminal escape sequences, C1 controls and
# bytes that are not UTF-8. No output of verify, info, strip, bulk signing
# or an error message may carry such a name raw: each result stays one line,
# no ESC or other control byte reaches the terminal, and the name reads back
# from the escaped text (and from info --json) as it is on disk.
. "$(dirname "$0")/../lib/common.sh"
t_setup

KEY=$DATA/rsa2048.key.pem
CERT=$DATA/rsa2048.x509.der
"$TOP/tests/lib/mkmodule.sh" "$T/src" 2 >/dev/null
mkdir "$T/d"
forged=$(printf 'a.ko\nOK x.ko TEST-ONLY modsign rsa2048 sha256 rsa\nb.ko')
esc=$(printf 'x\033[31mred\033[0m\302\233\233\\z\351.ko')
cp "$T/src/mod000.ko" "$T/d/$forged"
cp "$T/src/mod001.ko" "$T/d/$esc"

# clean FILE: no control byte but the newlines ending lines, no C1 control (raw
# or UTF-8 encoded), no byte that is not UTF-8.
clean() {
	python3 - "$1" <<'EOF'
import re, sys
b = open(sys.argv[1], 'rb').read()
try:
    s = b.decode('utf-8')
except UnicodeDecodeError:
    sys.exit("not UTF-8")
if re.search('[\x00-\x09\x0b-\x1f\x7f-\x9f]', s):
    sys.exit("a control character")
EOF
}

# same_names FILE: the names in FILE (one a line, escaped as modsign escapes:
# \\ \n \t \r \xHH) are, read back, those in $T/d.
same_names() {
	python3 - "$1" "$T/d" <<'EOF'
import os, re, sys
esc = {b"\\": b"\\", b"n": b"\n", b"t": b"\t", b"r": b"\r"}
def unescape(t):
    return re.sub(rb"\\(\\|n|t|r|x[0-9a-f]{2})",
                  lambda m: esc.get(m.group(1)) or bytes([int(m.group(1)[1:], 16)]), t)
got = sorted(os.path.basename(unescape(l)) for l in open(sys.argv[1], "rb").read().splitlines())
sys.exit(0 if got == sorted(os.listdir(os.fsencode(sys.argv[2]))) else 1)
EOF
}

# --- bulk signing, -v --------------------------------------------------------------
"$MODSIGN" -v -r "$T/d" sha256 "$KEY" "$CERT" >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
grep -a '^signed ' "$T/out" | sed 's/^signed //' >"$T/names"
if [ "$rc" -eq 0 ] && [ "$(grep -ac . "$T/out")" -eq 3 ] && clean "$T/out" && same_names "$T/names"; then
	t_pass "sign -v: one line per module, names escaped and read back"
else
	t_fail "sign -v: one line per module, names escaped" "$(od -c "$T/out" | head -n 20)"
fi

# --- verify ------------------------------------------------------------------------
run_ms verify -c "$CERT" -r "$T/d"
grep -av '^modsign: ' "$T/out" >"$T/lines"
sed -E 's/^OK //; s/ TEST-ONLY modsign rsa2048 sha256 rsa$//' "$T/lines" >"$T/names"
if [ "$rc" -eq 0 ] && [ "$(grep -ac '^OK ' "$T/out")" -eq 2 ] && [ "$(grep -ac . "$T/lines")" -eq 2 ] &&
	clean "$T/out" && same_names "$T/names"; then
	t_pass "verify -r: two modules, two OK lines, names escaped"
else
	t_fail "verify -r: two modules, two OK lines, names escaped" "$(od -c "$T/out" | head -n 20)"
fi
run_ms verify -c "$DATA/other-rsa2048.x509.der" -r "$T/d"
if [ "$rc" -eq 1 ] && [ "$(grep -ac '^FAIL ' "$T/out")" -eq 2 ] && ! grep -aq '^OK' "$T/out" &&
	clean "$T/out"; then
	t_pass "verify -r, wrong certificate: two FAIL lines and no forged OK"
else
	t_fail "verify -r, wrong certificate: no forged OK" "$(od -c "$T/out" | head -n 20)"
fi

# --- info, text and JSON -----------------------------------------------------------
run_ms info -r "$T/d"
sed -n 's/^module: *//p' "$T/out" >"$T/names"
if [ "$rc" -eq 0 ] && [ "$(grep -ac '^module:' "$T/out")" -eq 2 ] && ! grep -aq '^OK' "$T/out" &&
	clean "$T/out" && same_names "$T/names"; then
	t_pass "info -r: names escaped"
else
	t_fail "info -r: names escaped" "$(od -c "$T/out" | head -n 20)"
fi
"$MODSIGN" info --json -r "$T/d" >"$T/json" 2>>"$MS_LOG"
if python3 - "$T/json" "$T/d" <<'EOF'
import json, os, sys
mods = json.load(open(sys.argv[1], 'rb'))
names = sorted(os.fsencode(os.path.join(sys.argv[2], n)) for n in os.listdir(sys.argv[2]))
# Bytes that are not UTF-8 become U+FFFD; everything else reads back as it is.
want = [n.decode('utf-8', 'replace') for n in names]
got = sorted(m["module"] for m in mods)
sys.exit(0 if got == sorted(want) and all(m["signed"] is True for m in mods) else 1)
EOF
then
	t_pass "info --json: the names read back from the JSON"
else
	t_fail "info --json: the names read back" "$(cat "$T/json")"
fi
clean "$T/json" && t_pass "info --json: no control character or raw byte" ||
	t_fail "info --json: no control character or raw byte" "$(od -c "$T/json" | head)"

# --- strip, and messages on stderr ---------------------------------------------------
run_ms strip -r "$T/d"
run_ms strip -r "$T/d"
if [ "$rc" -eq 0 ] && [ "$(grep -ac '^modsign: warning: .*: not signed; left as it is$' "$T/out")" -eq 2 ] &&
	[ "$(grep -ac . "$T/out")" -eq 2 ] && clean "$T/out"; then
	t_pass "strip: one warning line per module, names escaped"
else
	t_fail "strip: one warning line per module, names escaped" "$(od -c "$T/out" | head -n 20)"
fi
run_ms sha256 "$KEY" "$CERT" "$T/no such$esc"
if [ "$rc" -eq 1 ] && [ "$(grep -ac . "$T/out")" -eq 1 ] && clean "$T/out" &&
	grep -aq '^modsign: .*no such.*No such file' "$T/out"; then
	t_pass "sign, missing module: one error line, name escaped"
else
	t_fail "sign, missing module: one error line, name escaped" "$(od -c "$T/out" | head)"
fi
run_ms verify "$T/d/$forged.missing"
if [ "$rc" -eq 1 ] && [ "$(grep -ac '^FAIL ' "$T/out")" -eq 1 ] && ! grep -aq '^OK' "$T/out" &&
	clean "$T/out"; then
	t_pass "verify, missing module: one FAIL line"
else
	t_fail "verify, missing module: one FAIL line" "$(od -c "$T/out" | head)"
fi
t_done
