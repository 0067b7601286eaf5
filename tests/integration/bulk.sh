#!/bin/bash
# Bulk mode: one key load and one token login for many modules; every module
# equals sign-file's result for it; module lists from the command line,
# --files-from (newline and NUL) and -r; per-module failures reported while
# the others are signed; a wrong PIN stops the run before any module is
# touched.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
"$TOP/tests/lib/mkmodule.sh" "$T/src" 24 4 >/dev/null
key=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der
uri=$(key_uri rsa2048)
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken

mkdir "$T/ref"
for m in "$T"/src/*.ko; do
	cp "$m" "$T/ref/"
	"$SIGNFILE" sha256 "$key" "$cert" "$T/ref/$(basename "$m")"
done

fresh() {
	rm -rf "$T/w" && mkdir -p "$T/w/sub/deeper" && cp "$T"/src/*.ko "$T/w/"
	mv "$T"/w/mod01*.ko "$T/w/sub/" && mv "$T"/w/mod02*.ko "$T/w/sub/deeper/"
}

# all_equal: every module in $T/w equals sign-file's result.
all_equal() {
	bad=""
	for m in $(find "$T/w" -type f -name '*.ko'); do
		same "$T/ref/$(basename "$m")" "$m" || bad="$bad $(basename "$m")"
	done
	[ -z "$bad" ] || { echo "differ:$bad"; return 1; }
}

check_bulk() {
	name=$1
	shift
	if "$@" >"$T/out" 2>&1 && all_equal >>"$T/out"; then
		t_pass "$name"
	else
		t_fail "$name" "$(tail -n 20 "$T/out")"
	fi
}

fresh
check_bulk "-b token, modules on the command line" \
	"$MODSIGN" -b sha256 "$uri" "$cert" $(find "$T/w" -name '*.ko')
grep -q "24 signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), 0 not signed, of 24" "$T/out" &&
	t_pass "summary counts" || t_fail "summary counts" "$(cat "$T/out")"

fresh
check_bulk "-r DIR, token, -j 1" "$MODSIGN" -j 1 -r "$T/w" sha256 "$uri" "$cert"
fresh
check_bulk "-r DIR, token, -j 2" "$MODSIGN" -j 2 -r "$T/w" sha256 "$uri" "$cert"
fresh
check_bulk "-r DIR, PEM key, -j 2" "$MODSIGN" -j 2 -r "$T/w" sha256 "$key" "$cert"
fresh
find "$T/w" -name '*.ko' > "$T/list"
check_bulk "--files-from, newline-separated" "$MODSIGN" --files-from "$T/list" sha256 "$uri" "$cert"
fresh
find "$T/w" -name '*.ko' -print0 > "$T/list0"
check_bulk "--files-from -0 from stdin" sh -c "\"$MODSIGN\" -0 --files-from - sha256 \"$uri\" \"$cert\" < \"$T/list0\""

# -r skips symlinks and non-.ko files.
fresh
ln -s ../ref/mod000.ko "$T/w/link.ko"
echo text > "$T/w/readme.txt"
check_bulk "-r ignores symlinks and other files" "$MODSIGN" -q -r "$T/w" sha256 "$uri" "$cert"
[ "$(cat "$T/w/readme.txt")" = text ] && t_pass "-r: other files untouched" || t_fail "-r: other files untouched"

# One module named several ways in one run is one module, signed once: with
# --append a second signature would wrap the first, otherwise the second name
# was reported as signed already. -v says which names were dropped.
fresh
(cd "$T" && "$MODSIGN" -v --append -b sha256 "$uri" "$cert" w/mod000.ko ./w/mod000.ko \
	"$T/w/mod000.ko" w/sub/../mod000.ko w/mod003.ko >"$T/out" 2>&1)
rc=$?
cat "$T/out" >>"$MS_LOG"
if [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/w/mod000.ko" && same "$T/ref/mod003.ko" "$T/w/mod003.ko" &&
    grep -q "2 signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), 0 not signed, of 2" "$T/out" &&
    [ "$(grep -c "names the same module as w/mod000.ko: signed once" "$T/out")" -eq 3 ]; then
	t_pass "one module under four names, --append: signed once, -v names the three dropped"
else
	t_fail "one module under four names, --append: signed once, -v names the three dropped" \
		"exit $rc" "$(cat "$T/out")"
fi
fresh
check_bulk "-r DIR and some of its modules by name: each signed once" \
	"$MODSIGN" -r "$T/w" -b sha256 "$uri" "$cert" "$T/w/mod000.ko" "$T/w/sub/mod010.ko" "$T/w/mod000.ko"
grep -q "24 signed, 0 failed, 0 refused (signed already), 0 skipped (signature verified), 0 not signed, of 24" "$T/out" &&
	t_pass "-r DIR and names: summary of 24" || t_fail "-r DIR and names: summary of 24" "$(cat "$T/out")"

# A missing module in the middle is reported; the others are signed; exit 1.
fresh
find "$T/w" -name '*.ko' | sort > "$T/list"
sed -i '5i\'"$T"'/w/missing.ko' "$T/list"
run_ms --files-from "$T/list" sha256 "$uri" "$cert"
expect_fail "missing module in the list" 1 "missing.ko.*No such file"
all_equal >/dev/null && t_pass "missing module: all others signed" ||
	t_fail "missing module: all others signed" "$(cat "$T/out")"
grep -q "24 signed, 1 failed, 0 refused (signed already), 0 skipped (signature verified), 0 not signed, of 25" "$T/out" &&
	t_pass "missing module: summary" || t_fail "missing module: summary" "$(cat "$T/out")"

# The progress line on a terminal (script(1) gives modsign one, 40 columns
# wide), with ten missing modules among ten real ones on a slow token: each
# error gets a line of its own (the progress line is cleared first, not
# glued to it), the progress line never reaches the last column (it would
# wrap and scroll), and the time per module is over the modules signed.
fresh
: >"$T/list"
for i in 0 1 2 3 4 5 6 7 8 9; do
	echo "$T/w/mod00$i.ko" >>"$T/list"
	echo "$T/w/gone$i.ko" >>"$T/list"
done
slow_uri=$(slow_key_uri rsa2048)
SLOWTOKEN_SIGN_MS=150 script -qefc "stty cols 40 rows 20; \"$MODSIGN\" -j 1 --files-from \"$T/list\" sha256 \"$slow_uri\" \"$cert\"" \
	/dev/null >"$T/tty.out" 2>&1
cat "$T/tty.out" >>"$MS_LOG"
tr '\r' '\n' <"$T/tty.out" | sed 's/\x1b\[K//g' >"$T/tty.lines"
glued=$(grep -c 'ETA [0-9]*:[0-9][0-9].*modsign: ' "$T/tty.lines")
errors=$(grep -c '^modsign: .*/gone[0-9].ko: open: No such file' "$T/tty.lines")
wide=$(grep '^modsign: [0-9]*/20' "$T/tty.lines" | awk 'length($0) > 39' | head -n 1)
if [ "$glued" -eq 0 ] && [ "$errors" -eq 10 ] && [ -z "$wide" ] &&
    grep -q '^modsign: [0-9]*/20' "$T/tty.lines"; then
	t_pass "progress line on a 40-column terminal: errors on lines of their own, never wider than 39"
else
	t_fail "progress line on a 40-column terminal: errors on lines of their own, never wider than 39" \
		"glued: $glued, errors on their own line: $errors of 10, too wide: ${wide:-none}" \
		"$(head -c 1500 "$T/tty.lines")"
fi
line=$(grep -o '10 signed, 10 failed, .*ms per module signed' "$T/tty.lines")
secs=$(echo "$line" | sed -n 's/.*; \([0-9.]*\) s, .*/\1/p')
per=$(echo "$line" | sed -n 's/.* s, \([0-9.]*\) ms per module signed/\1/p')
if [ -n "$secs" ] && [ -n "$per" ] &&
    awk -v s="$secs" -v p="$per" 'BEGIN { d = p - s * 100; exit !(d < 0.02 * p + 0.02 && -d < 0.02 * p + 0.02) }'; then
	t_pass "summary: ms per module over the 10 signed, not the 20 named ($per ms, $secs s)"
else
	t_fail "summary: ms per module over the 10 signed, not the 20 named" "${line:-no summary}"
fi

# A wrong PIN stops the run before any module is touched.
fresh
KBUILD_SIGN_PIN=$WRONG_PIN run_ms -r "$T/w" sha256 "$uri" "$cert"
expect_fail "wrong PIN in bulk mode" 1 "CKR_PIN_INCORRECT"
untouched=0
for m in $(find "$T/w" -name '*.ko'); do
	same "$T/src/$(basename "$m")" "$m" && untouched=$((untouched + 1))
done
[ "$untouched" -eq 24 ] && t_pass "wrong PIN: all 24 modules untouched" ||
	t_fail "wrong PIN: all 24 modules untouched" "only $untouched"

# Already signed modules in bulk: refused one by one, the rest signed.
fresh
cp "$T/ref/mod003.ko" "$T/w/mod003.ko"
run_ms -r "$T/w" sha256 "$uri" "$cert"
expect_fail "already signed module in bulk" 1 "mod003.ko: already ends with a module signature"
grep -q "23 signed, 0 failed, 1 refused (signed already), 0 skipped (signature verified), 0 not signed, of 24" "$T/out" &&
	t_pass "already signed: counted as refused, not failed or skipped" ||
	t_fail "already signed: counted as refused, not failed or skipped" "$(tail -n 1 "$T/out")"
all_equal >/dev/null && t_pass "already signed: others signed, it untouched" ||
	t_fail "already signed: others signed, it untouched"

# EC in bulk: each verifies.
fresh
run_ms -j 2 -r "$T/w" sha384 "$(key_uri ec384)" "$DATA/ec384.x509.der"
ok=0
for m in $(find "$T/w" -name '*.ko'); do
	openssl_verify "$m" "$T/src/$(basename "$m")" "$DATA/ec384.x509.der" && ok=$((ok + 1))
done
[ "$rc" -eq 0 ] && [ "$ok" -eq 24 ] && t_pass "EC bulk: 24 modules verify" ||
	t_fail "EC bulk: 24 modules verify" "verified $ok, status $rc" "$(cat "$T/out")"

# Two runs at once on the same modules: a lock makes the second wait for
# each module the first has in hand; with --skip-signed both succeed and
# every module is signed exactly once.
for round in 1 2 3; do
	fresh
	"$MODSIGN" -q --skip-signed -j 2 -r "$T/w" sha256 "$key" "$cert" >"$T/out1" 2>&1 &
	p1=$!
	"$MODSIGN" -q --skip-signed -j 2 -r "$T/w" sha256 "$uri" "$cert" >"$T/out2" 2>&1
	rc2=$?
	wait "$p1"
	rc1=$?
	if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && all_equal >/dev/null; then
		t_pass "two runs at once ($round): both succeed, every module signed once"
	else
		t_fail "two runs at once ($round): both succeed, every module signed once" \
			"status $rc1 and $rc2" "$(cat "$T/out1" "$T/out2" | head -5)" "$(all_equal)"
	fi
done

# A list of 5,000 modules (tiny ones: the list is what is tested), through
# the release build for speed; every one verifies afterwards.
mkdir "$T/many"
for i in $(seq 1 5000); do echo "module $i" > "$T/many/m$i.ko"; done
find "$T/many" -name '*.ko' > "$T/many.list"
if "$TOP/modsign" -q --files-from "$T/many.list" sha256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" &&
    "$TOP/modsign" verify -c "$DATA/ec256.x509.der" --files-from "$T/many.list" 2>&1 |
    grep -q "5000 OK, 0 unverified, 0 failed"; then
	t_pass "a list of 5,000 modules: all signed and verified"
else
	t_fail "a list of 5,000 modules: all signed and verified"
fi

run_ms -b sha256 "$uri" "$cert"
expect_fail "bulk with no modules" 1 "no modules to sign"
run_ms -b -s "$T/x" sha256 "$cert" "$T/w/mod000.ko"
expect_fail "-s with -b is a usage error" 2 "does not combine"
t_done
