#!/bin/bash
# What modsign writes and how: -s, already signed modules, encrypted keys,
# file modes, symlinked destinations, no temporary files left.
. "$(dirname "$0")/../lib/common.sh"
t_setup
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 >/dev/null
mod=$T/src/mod000.ko
key=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der

# -s appends a detached signature made elsewhere, exactly as sign-file -s.
mkdir "$T/a" "$T/b"
cp "$mod" "$T/a/m.ko" && cp "$mod" "$T/b/m.ko"
"$SIGNFILE" -d sha256 "$key" "$cert" "$T/a/m.ko"
"$SIGNFILE" -s "$T/a/m.ko.p7s" sha256 "$cert" "$T/a/m.ko"
t_check "-s appends a detached signature" "$MODSIGN" -s "$T/a/m.ko.p7s" sha256 "$cert" "$T/b/m.ko"
t_check "-s result equals sign-file -s" same "$T/a/m.ko" "$T/b/m.ko"

# Already signed: refused by default, module untouched; --append does what
# sign-file does (a second signature around the first).
cp "$T/a/m.ko" "$T/signed.ko"
run_ms sha256 "$key" "$cert" "$T/signed.ko"
expect_fail "already signed module refused" 1 "already ends with a module signature"
t_check "already signed module untouched" same "$T/a/m.ko" "$T/signed.ko"
cp "$T/a/m.ko" "$T/twice-ref.ko"
"$SIGNFILE" sha256 "$key" "$cert" "$T/twice-ref.ko"
t_check "--append signs around the old signature" "$MODSIGN" --append sha256 "$key" "$cert" "$T/signed.ko"
t_check "--append equals sign-file run twice" same "$T/twice-ref.ko" "$T/signed.ko"

# --replace re-signs from the unsigned bytes: the result equals signing the
# unsigned module, here with another hash and -k.
cp "$T/a/m.ko" "$T/re.ko" && cp "$mod" "$T/re-ref.ko"
"$SIGNFILE" -k sha512 "$key" "$cert" "$T/re-ref.ko"
t_check "--replace re-signs a signed module" "$MODSIGN" --replace -k sha512 "$key" "$cert" "$T/re.ko"
t_check "--replace equals signing the unsigned module" same "$T/re-ref.ko" "$T/re.ko"
t_check "--replace on an unsigned module signs it" "$MODSIGN" --replace sha256 "$key" "$cert" "$T/b/m.ko" "$T/re2.ko"
t_check "--replace on an unsigned module: sign-file's bytes" same "$T/a/m.ko" "$T/re2.ko"
cp "$T/a/m.ko" "$T/re3.ko"
"$MODSIGN" -s "$T/a/m.ko.p7s" --replace sha256 "$cert" "$T/re3.ko" >"$T/out" 2>&1
t_check "-s --replace swaps the signature for the given one" same "$T/a/m.ko" "$T/re3.ko"

# --skip-signed leaves modules that verify against the certificate alone,
# signs unsigned ones, and refuses ones signed by another key.
cp "$T/a/m.ko" "$T/sk1.ko" && cp "$mod" "$T/sk2.ko" && cp "$mod" "$T/sk3.ko"
"$SIGNFILE" sha256 "$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.der" "$T/sk3.ko"
cp "$T/sk3.ko" "$T/sk3-before.ko"
touch -d 2001-01-01 "$T/sk1.ko"
run_ms -b --skip-signed sha256 "$key" "$cert" "$T/sk1.ko" "$T/sk2.ko" "$T/sk3.ko"
expect_fail "--skip-signed: a module signed by another key is refused" 1 \
	"sk3.ko: already signed, but its signature does not verify"
t_check "--skip-signed: the verifying module is not rewritten" \
	test "$(stat -c %Y "$T/sk1.ko")" = "$(date -d 2001-01-01 +%s)"
t_check "--skip-signed: the unsigned module is signed" same "$T/a/m.ko" "$T/sk2.ko"
t_check "--skip-signed: the other key's module is untouched" same "$T/sk3-before.ko" "$T/sk3.ko"
grep -q "1 signed, 1 failed, 0 refused (signed already), 1 skipped (signature verified), 0 not signed, of 3" "$T/out" &&
	t_pass "--skip-signed: summary counts the skipped module" ||
	t_fail "--skip-signed: summary counts the skipped module" "$(cat "$T/out")"
run_ms --replace --skip-signed sha256 "$key" "$cert" "$T/sk2.ko"
expect_fail "--replace with --skip-signed is a usage error" 2 "exclude each other"

# Encrypted PEM key, passphrase in KBUILD_SIGN_PIN as sign-file takes it.
cp "$mod" "$T/enc.ko" && cp "$mod" "$T/enc-ref.ko"
"$SIGNFILE" sha256 "$key" "$cert" "$T/enc-ref.ko"
KBUILD_SIGN_PIN=$KEY_PASS run_ms sha256 "$DATA/rsa2048.enc.key.pem" "$cert" "$T/enc.ko"
if [ "$rc" -eq 0 ] && same "$T/enc.ko" "$T/enc-ref.ko"; then
	t_pass "encrypted PEM key with KBUILD_SIGN_PIN"
else
	t_fail "encrypted PEM key with KBUILD_SIGN_PIN" "$(cat "$T/out")"
fi
cp "$mod" "$T/enc.ko"
KBUILD_SIGN_PIN=$WRONG_KEY_PASS run_ms sha256 "$DATA/rsa2048.enc.key.pem" "$cert" "$T/enc.ko"
expect_fail "encrypted PEM key, wrong passphrase" 1 "wrong passphrase"
run_ms sha256 "$DATA/rsa2048.enc.key.pem" "$cert" "$T/enc.ko" </dev/null
expect_fail "encrypted PEM key, no passphrase" 1 "KBUILD_SIGN_PIN"
t_check "encrypted key failures: module untouched" same "$mod" "$T/enc.ko"

# The module's mode is kept (sign-file turns 0600 into 0644 by umask).
for m in 600 640 755; do
	cp "$mod" "$T/mode.ko" && chmod $m "$T/mode.ko"
	"$MODSIGN" sha256 "$key" "$cert" "$T/mode.ko" >"$T/out" 2>&1
	got=$(stat -c %a "$T/mode.ko")
	if [ "$got" = "$m" ]; then
		t_pass "mode $m kept"
	else
		t_fail "mode $m kept" "got $got" "$(cat "$T/out")"
	fi
done

# A dest that is a symlink is refused; its target stays as it was.
cp "$mod" "$T/m.ko"
echo "precious" > "$T/target"
ln -s target "$T/dest-link.ko"
run_ms sha256 "$key" "$cert" "$T/m.ko" "$T/dest-link.ko"
expect_fail "dest that is a symlink refused" 1 "dest-link.ko"
t_check "symlinked dest: target untouched" grep -qx precious "$T/target"
t_check "symlinked dest: module untouched" same "$mod" "$T/m.ko"

# dest equal to the module means in place, as in sign-file.
cp "$mod" "$T/same.ko" && cp "$mod" "$T/same-ref.ko"
"$SIGNFILE" sha256 "$key" "$cert" "$T/same-ref.ko"
t_check "dest equal to module signs in place" "$MODSIGN" sha256 "$key" "$cert" "$T/same.ko" "$T/same.ko"
t_check "dest equal to module: same bytes as sign-file" same "$T/same-ref.ko" "$T/same.ko"

# A trailer with sig_len 0 (found by fuzzing): a broken signature, not an
# empty one, for verify, strip and --replace alike; the module is left alone.
cp "$mod" "$T/zero.ko"
printf '\000\000\002\000\000\000\000\000\000\000\000\000~Module signature appended~\n' >> "$T/zero.ko"
cp "$T/zero.ko" "$T/zero-before.ko"
run_ms verify "$T/zero.ko"
expect_fail "sig_len 0: verify says why" 1 "FAIL .*zero.ko: trailer: sig_len is 0"
run_ms strip "$T/zero.ko"
expect_fail "sig_len 0: strip refuses" 1 "sig_len is 0"
run_ms --replace sha256 "$key" "$cert" "$T/zero.ko"
expect_fail "sig_len 0: --replace refuses" 1 "broken trailer"
t_check "sig_len 0: module untouched" same "$T/zero-before.ko" "$T/zero.ko"

# -d in bulk: each .p7s is fsync'd, its directory once for the run, as
# with signed modules (the writer of .p7s files once synced it per file).
dirsync_count() {
	# LeakSanitizer cannot run under ptrace.
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -y -e trace=fsync -o "$T/fsyncs" \
		"$MODSIGN" "$@" >"$T/out" 2>&1 &&
		grep -c "fsync([0-9]*<$T/d7>" "$T/fsyncs"
}
if ! command -v strace >/dev/null; then
	t_skip "-d and -p in bulk: the directory fsync'd once" "no strace (scripts/install-deps.sh)"
else
	mkdir "$T/d7"
	for i in 1 2 3 4 5 6; do cp "$mod" "$T/d7/m$i.ko"; done
	n=$(dirsync_count -b -d sha256 "$key" "$cert" "$T"/d7/m*.ko)
	n_p7s=$(grep -c 'fsync([0-9]*<.*\.p7s\..*\.tmp>' "$T/fsyncs")
	if [ "$n" = 1 ] && [ "$n_p7s" = 6 ]; then
		t_pass "-d in bulk: six .p7s files fsync'd, their directory once"
	else
		t_fail "-d in bulk: six .p7s files fsync'd, their directory once" \
			"directory fsyncs: $n, .p7s temp fsyncs: $n_p7s; $(cat "$T/out")"
	fi
	n=$(dirsync_count -b -p --replace sha256 "$key" "$cert" "$T"/d7/m*.ko)
	if [ "$n" = 1 ]; then
		t_pass "-p in bulk: .p7s files and modules, their directory fsync'd once"
	else
		t_fail "-p in bulk: .p7s files and modules, their directory fsync'd once" \
			"directory fsyncs: $n; $(cat "$T/out")"
	fi
	t_check "-p in bulk: the modules are sign-file's" same "$T/a/m.ko" "$T/d7/m6.ko"
fi

if find "$T" -name '*.tmp' -o -name '*~signed~' | grep -q .; then
	t_fail "no temporary file left" "$(find "$T" -name '*.tmp' -o -name '*~signed~')"
else
	t_pass "no temporary file left"
fi
t_done
