#!/bin/bash
# modsign run as "sign-file" (installed as a kernel tree's scripts/sign-file,
# called as kbuild and DKMS call it) never fails where sign-file succeeds: a
# module already signed by the run's key and hash is left as it is (make
# modules_sign after a signing modules_install), any other signed module is
# signed around its signature byte for byte as Debian's sign-file does, with
# a warning. Run as "modsign", an already-signed module is still refused.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
export KBUILD_SIGN_PIN=$PIN
"$TOP/tests/lib/mkmodule.sh" "$T/src" 3 >/dev/null
mkdir -p "$T/scripts"
if [ "$(head -c 2 "$MODSIGN")" = "#!" ]; then
	# $MODSIGN is a wrapper (tests/valgrind/modsign): the drop-in is the same
	# wrapper running the binary under the name sign-file.
	mkdir -p "$T/bin"
	ln -s "$(readlink -f "${MODSIGN_VG_BIN:-$(dirname "$MODSIGN")/../../build/vg/modsign}")" \
		"$T/bin/sign-file"
	printf '#!/bin/sh\nMODSIGN_VG_BIN="%s" exec "%s" "$@"\n' \
		"$T/bin/sign-file" "$MODSIGN" >"$T/scripts/sign-file"
	chmod +x "$T/scripts/sign-file"
else
	cp "$MODSIGN" "$T/scripts/sign-file"
fi
DROPIN=$T/scripts/sign-file
key=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der
other=$DATA/other-rsa2048

# fresh NAME: an unsigned copy of module 1 in $T/w/NAME.ko.
fresh() {
	mkdir -p "$T/w"
	cp "$T/src/mod001.ko" "$T/w/$1.ko"
}

# dropin ARGS...: the drop-in, output in $T/out, status in $rc.
dropin() {
	"$DROPIN" "$@" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
}

# As kbuild calls it, on an unsigned module: sign-file's bytes.
fresh ref
"$SIGNFILE" sha512 "$key" "$cert" "$T/w/ref.ko"
fresh a
dropin sha512 "$key" "$cert" "$T/w/a.ko"
[ "$rc" -eq 0 ] && same "$T/w/a.ko" "$T/w/ref.ko" &&
	t_pass "as sign-file, unsigned module: sign-file's bytes" ||
	t_fail "as sign-file, unsigned module: sign-file's bytes" "$(cat "$T/out")"

# Again (make modules_sign after modules_install): left as it is, silently.
cp "$T/w/a.ko" "$T/w/a.before"
dropin sha512 "$key" "$cert" "$T/w/a.ko"
[ "$rc" -eq 0 ] && same "$T/w/a.ko" "$T/w/a.before" && [ ! -s "$T/out" ] &&
	t_pass "as sign-file, signed by this key and hash: exit 0, module unchanged, no message" ||
	t_fail "as sign-file, signed by this key and hash: exit 0, module unchanged" \
		"status $rc" "$(cat "$T/out")"
# The same with the key on the token.
dropin sha512 "$(key_uri rsa2048)" "$cert" "$T/w/a.ko"
[ "$rc" -eq 0 ] && same "$T/w/a.ko" "$T/w/a.before" &&
	t_pass "as sign-file, token key, signed by this key: module unchanged" ||
	t_fail "as sign-file, token key, signed by this key: module unchanged" "$(cat "$T/out")"

# reference_around NAME HASH KEY: what sign-file makes of $T/w/NAME.ko
# signed again with KEY, in $T/w/NAME.ref.
reference_around() {
	cp "$T/w/$1.ko" "$T/w/$1.ref"
	"$SIGNFILE" "$2" "$DATA/$3.key.pem" "$DATA/$3.x509.der" "$T/w/$1.ref"
}

# Another hash: signed around the old signature, as sign-file does.
fresh b
"$SIGNFILE" sha256 "$key" "$cert" "$T/w/b.ko"
reference_around b sha512 rsa2048
dropin sha512 "$key" "$cert" "$T/w/b.ko"
[ "$rc" -eq 0 ] && same "$T/w/b.ko" "$T/w/b.ref" && grep -q "b.ko: already signed.*another hash" "$T/out" &&
	t_pass "as sign-file, signed with another hash: signed around it as sign-file does, warned" ||
	t_fail "as sign-file, signed with another hash: signed around it as sign-file does" \
		"status $rc" "$(cat "$T/out")"

# Another key: signed around it, as sign-file does.
fresh c
"$SIGNFILE" sha512 "$other.key.pem" "$other.x509.der" "$T/w/c.ko"
reference_around c sha512 rsa2048
dropin sha512 "$key" "$cert" "$T/w/c.ko"
[ "$rc" -eq 0 ] && same "$T/w/c.ko" "$T/w/c.ref" && grep -q "c.ko: already signed, but not with sha512 and" "$T/out" &&
	t_pass "as sign-file, signed by another key: signed around it as sign-file does, warned" ||
	t_fail "as sign-file, signed by another key: signed around it as sign-file does" \
		"status $rc" "$(cat "$T/out")"

# A broken trailer behind the marker: sign-file signs around whatever is there.
fresh d
"$SIGNFILE" sha512 "$key" "$cert" "$T/w/d.ko"
size=$(stat -c %s "$T/w/d.ko")
printf '\377' | dd of="$T/w/d.ko" bs=1 seek=$((size - 31)) conv=notrunc status=none
reference_around d sha512 rsa2048
dropin sha512 "$key" "$cert" "$T/w/d.ko"
[ "$rc" -eq 0 ] && same "$T/w/d.ko" "$T/w/d.ref" &&
	t_pass "as sign-file, broken old trailer: signed around it as sign-file does" ||
	t_fail "as sign-file, broken old trailer: signed around it as sign-file does" \
		"status $rc" "$(cat "$T/out")"

# With a dest, the signed module is signed around, as sign-file does.
cp "$T/w/a.before" "$T/w/e.ko"
reference_around e sha512 rsa2048
dropin sha512 "$key" "$cert" "$T/w/e.ko" "$T/w/e.dest"
[ "$rc" -eq 0 ] && same "$T/w/e.dest" "$T/w/e.ref" && same "$T/w/e.ko" "$T/w/a.before" &&
	t_pass "as sign-file with a dest, signed module: the dest is sign-file's" ||
	t_fail "as sign-file with a dest, signed module: the dest is sign-file's" "$(cat "$T/out")"

# Bulk (the kbuild patch's sign-file -b): each module as above, exit 0.
fresh f1
cp "$T/w/a.before" "$T/w/f2.ko"
fresh f3
"$SIGNFILE" sha512 "$other.key.pem" "$other.x509.der" "$T/w/f3.ko"
reference_around f3 sha512 rsa2048
dropin -b sha512 "$(key_uri rsa2048)" "$cert" "$T/w/f1.ko" "$T/w/f2.ko" "$T/w/f3.ko"
[ "$rc" -eq 0 ] && same "$T/w/f1.ko" "$T/w/ref.ko" && same "$T/w/f2.ko" "$T/w/a.before" &&
	same "$T/w/f3.ko" "$T/w/f3.ref" &&
	t_pass "as sign-file -b: unsigned signed, ours left, another key's signed around" ||
	t_fail "as sign-file -b: unsigned signed, ours left, another key's signed around" \
		"status $rc" "$(cat "$T/out")"

# Named modsign, the refusal stays; an explicit policy wins over the name.
cp "$T/w/a.before" "$T/w/g.ko"
run_ms sha512 "$key" "$cert" "$T/w/g.ko"
expect_fail "as modsign, signed module: refused" 1 "already ends with a module signature"
same "$T/w/g.ko" "$T/w/a.before" && t_pass "as modsign, refused module untouched" ||
	t_fail "as modsign, refused module untouched"
dropin --skip-signed sha512 "$other.key.pem" "$other.x509.der" "$T/w/g.ko"
[ "$rc" -eq 1 ] && same "$T/w/g.ko" "$T/w/a.before" &&
	t_pass "as sign-file --skip-signed, another key's signature: refused as with modsign" ||
	t_fail "as sign-file --skip-signed, another key's signature: refused as with modsign" \
		"status $rc" "$(cat "$T/out")"
t_done
