#!/bin/bash
# `modsign info` (text and --json) against modinfo and openssl, and
# `modsign strip`: byte for byte the unsigned module, in place and
# atomically, over module lists; broken trailers and symlinks left alone.
. "$(dirname "$0")/../lib/common.sh"
t_setup

if ! "$MODSIGN" info --help 2>/dev/null | grep -q 'Usage: modsign info'; then
	t_fail "modsign has info and strip subcommands" "add the verify/info/strip dispatch to src/cli/main.c"
	t_done
	exit 1
fi

"$TOP/tests/lib/mkmodule.sh" "$T/src" 6 >/dev/null
mod=$T/src/mod000.ko

# field NAME: the value of "NAME:" in $T/out (first one).
field() {
	sed -n "s/^$1: *//p" "$T/out" | head -n 1
}

# --- info against modinfo and openssl --------------------------------------------------
for key in rsa2048 rsa4096 ec256 ec521; do
	for k in "" -k; do
		cp "$mod" "$T/m.ko"
		"$MODSIGN" $k sha384 "$DATA/$key.key.pem" "$DATA/$key.x509.der" "$T/m.ko"
		run_ms info "$T/m.ko"
		if [ "$rc" -ne 0 ] || [ "$(field signed)" != yes ] || [ "$(field hash)" != sha384 ]; then
			t_fail "info $key$k: signed, sha384" "$(cat "$T/out")"
			continue
		fi
		size=$(stat -c %s "$T/m.ko")
		siglen=$(field sig_len)
		[ "$(field payload_len)" -eq "$(stat -c %s "$mod")" ] &&
			[ $((siglen + 40 + $(field payload_len))) -eq "$size" ] ||
			t_fail "info $key$k: lengths" "$(cat "$T/out")"
		case $key in rsa*) algo="rsa (rsaEncryption)" ;; *) algo="ecdsa (ecdsa-with-SHA384)" ;; esac
		[ "$(field algorithm)" = "$algo" ] || t_fail "info $key$k: algorithm" "$(field algorithm)"
		if [ -z "$k" ]; then
			mi=$(modinfo "$T/m.ko" | grep -E '^(sig_id|signer|sig_key|sig_hashalgo):' | tr -s ' ')
			ours=$(grep -E '^(sig_id|signer|sig_key|sig_hashalgo):' "$T/out" | tr -s ' ')
			serial=$(openssl x509 -in "$DATA/$key.x509.pem" -noout -serial | sed 's/^serial=//')
			issuer=$(openssl x509 -in "$DATA/$key.x509.pem" -noout -issuer -nameopt compat |
				sed 's/^issuer=//; s|^/||; s|/|, |g')
			ourser=$(field serial | tr a-f A-F | sed 's/^\(00\)*//')
			if [ "$mi" = "$ours" ] && [ "$ourser" = "$serial" ] && [ "$(field issuer)" = "$issuer" ]; then
				t_pass "info $key: modinfo's fields, issuer and serial as openssl shows them"
			else
				t_fail "info $key: modinfo's fields" "modinfo: $mi" "ours: $ours" \
					"serial $ourser / $serial, issuer $(field issuer) / $issuer"
			fi
		else
			skid=$(openssl x509 -in "$DATA/$key.x509.pem" -noout -ext subjectKeyIdentifier |
				tail -n 1 | tr -d ' ')
			if [ "$(field skid | tr a-f A-F | sed 's/../&:/g; s/:$//')" = "$skid" ] &&
				[ "$(field sig_key)" = "$skid" ]; then
				t_pass "info $key -k: the subjectKeyIdentifier"
			else
				t_fail "info $key -k: the subjectKeyIdentifier" "$(cat "$T/out")" "want $skid"
			fi
		fi
	done
done

run_ms info "$mod"
[ "$rc" -eq 0 ] && [ "$(field signed)" = no ] && t_pass "info: unsigned module" ||
	t_fail "info: unsigned module" "$(cat "$T/out")"
run_ms info "$T/nosuch.ko"
expect_fail "info: missing module: exit 1 with the error" 1 "^error: *open: No such file"
cp "$T/m.ko" "$T/bad.ko"
printf '\001' | dd of="$T/bad.ko" bs=1 seek=$(($(stat -c %s "$T/bad.ko") - 38)) conv=notrunc 2>/dev/null
run_ms info "$T/bad.ko"
expect_fail "info: broken trailer: malformed, exit 1" 1 "^error: *trailer: id_type is not 2"
grep -q '^signed: *malformed$' "$T/out" || t_fail "info: broken trailer says signed: malformed"
openssl cms -sign -binary -outform DER -nocerts -in "$mod" -md sha256 \
	-signer "$DATA/rsa2048.x509.pem" -inkey "$DATA/rsa2048.key.pem" -out "$T/attrs.p7s"
# sign-file -s appends it unchecked (modsign -s refuses it, as verify does).
cp "$mod" "$T/attrs.ko"
"$SIGNFILE" -s "$T/attrs.p7s" sha256 "$DATA/rsa2048.x509.der" "$T/attrs.ko"
run_ms info "$T/attrs.ko"
expect_fail "info: signed attributes shown as the kernel's refusal, exit 1" 1 \
	"^error: *PKCS#7: has signed attributes"
grep -q '^signed_attrs: *yes$' "$T/out" || t_fail "info: signed_attrs: yes"

# JSON: one array, one object per module, for scripts.
cp "$mod" "$T/j1.ko"
"$MODSIGN" sha256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" "$T/j1.ko"
ln -s "$T/j1.ko" "$T/j\"q.ko"
run_ms info --json "$T/j1.ko" "$mod" "$T/bad.ko" "$T/j\"q.ko"
if [ "$rc" -eq 1 ] && grep -q '"sig_hashalgo": "sha256"' "$T/out" &&
	grep -q '"signed": false' "$T/out" &&
	grep -q '"signed": "malformed", "error": "trailer: id_type is not 2 (PKCS#7)"' "$T/out" &&
	grep -q '"module": ".*j\\"q.ko"' "$T/out"; then
	t_pass "info --json: fields, unsigned, malformed, escaped names"
else
	t_fail "info --json" "$(cat "$T/out")"
fi
if command -v python3 >/dev/null 2>&1; then
	if python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d) == 4 and d[0]["signers"][0]["algorithm"] == "ecdsa"' < "$T/out" 2>/dev/null; then
		t_pass "info --json parses as JSON"
	else
		t_fail "info --json parses as JSON" "$(cat "$T/out")"
	fi
fi

# Module lists: -r and --files-from, as for bulk signing.
mkdir -p "$T/tree/a/b"
cp "$T/j1.ko" "$T/tree/a/x.ko" && cp "$mod" "$T/tree/a/b/y.ko" && cp "$mod" "$T/tree/a/b/notamodule"
run_ms info -r "$T/tree"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^module:' "$T/out")" -eq 2 ]; then
	t_pass "info -r DIR: every *.ko below"
else
	t_fail "info -r DIR" "$(cat "$T/out")"
fi
printf '%s\0%s\0' "$T/j1.ko" "$mod" > "$T/list0"
run_ms info --files-from "$T/list0" -0
[ "$rc" -eq 0 ] && [ "$(grep -c '^module:' "$T/out")" -eq 2 ] && t_pass "info --files-from -0" ||
	t_fail "info --files-from -0" "$(cat "$T/out")"

# --- strip -----------------------------------------------------------------------------
rm -rf "$T/s" && mkdir -p "$T/s/sub"
for i in 0 1 2 3 4 5; do
	m=$T/src/mod00$i.ko
	dst=$T/s/mod00$i.ko
	[ "$i" -ge 3 ] && dst=$T/s/sub/mod00$i.ko
	cp "$m" "$dst"
	case $i in
	0) "$MODSIGN" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$dst" ;;
	1) "$SIGNFILE" sha512 "$DATA/ec384.key.pem" "$DATA/ec384.x509.der" "$dst" ;;
	2) ;;	# left unsigned
	3) "$MODSIGN" -k sha384 "$DATA/rsa4096.key.pem" "$DATA/rsa4096.x509.der" "$dst" ;;
	4) "$MODSIGN" sha256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" "$dst"
	   "$MODSIGN" --append sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$dst" ;;
	5) "$MODSIGN" sha256 "$DATA/ec521.key.pem" "$DATA/ec521.x509.der" "$dst"; chmod 0600 "$dst" ;;
	esac
done
cp "$T/s/sub/mod004.ko" "$T/twice.ko"
run_ms strip -r "$T/s"
ok=1
for i in 0 1 2 3 5; do
	dst=$T/s/mod00$i.ko
	[ "$i" -ge 3 ] && dst=$T/s/sub/mod00$i.ko
	same "$dst" "$T/src/mod00$i.ko" || ok=0
done
if [ "$rc" -eq 0 ] && [ "$ok" -eq 1 ] && grep -q "mod002.ko: not signed; left as it is" "$T/out"; then
	t_pass "strip -r: each module byte for byte as before signing; unsigned one warned about"
else
	t_fail "strip -r" "status $rc" "$(cat "$T/out")"
fi
[ "$(stat -c %a "$T/s/sub/mod005.ko")" = 600 ] && t_pass "strip keeps the mode (0600)" ||
	t_fail "strip keeps the mode" "$(stat -c %a "$T/s/sub/mod005.ko")"
[ -z "$(find "$T/s" -name '*.modsign-*')" ] && t_pass "strip leaves no temp file" ||
	t_fail "strip leaves no temp file" "$(find "$T/s")"
# The module signed twice (--append) loses the outer signature only.
"$MODSIGN" sha256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" "$T/src/mod004.ko" "$T/once.ko" 2>/dev/null ||
	{ cp "$T/src/mod004.ko" "$T/once.ko"; "$MODSIGN" sha256 "$DATA/ec256.key.pem" "$DATA/ec256.x509.der" "$T/once.ko"; }
if [ "$(head -c "$(stat -c %s "$T/s/sub/mod004.ko")" "$T/twice.ko" | cmp -s - "$T/s/sub/mod004.ko"; echo $?)" = 0 ] &&
	[ "$(stat -c %s "$T/s/sub/mod004.ko")" -eq "$(stat -c %s "$T/once.ko")" ]; then
	run_ms verify -c "$DATA/ec256.x509.der" "$T/s/sub/mod004.ko"
	expect_fail "strip of a twice-signed module keeps the inner signature" 0 "^OK "
else
	t_fail "strip of a twice-signed module keeps the inner signature"
fi
run_ms verify -c "$DATA/rsa2048.x509.der" "$T/s/mod000.ko"
expect_fail "verify after strip: not signed" 1 "FAIL $T/s/mod000.ko: not signed"

# --files-from with NUL separators; a symlink and a broken trailer are refused, untouched.
cp "$T/src/mod000.ko" "$T/f1.ko"
"$MODSIGN" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/f1.ko"
cp "$T/f1.ko" "$T/f1.signed"
ln -s "$T/f1.ko" "$T/link.ko"
cp "$T/bad.ko" "$T/bad.copy"
printf '%s\0%s\0%s\0' "$T/link.ko" "$T/bad.ko" "$T/f1.ko" > "$T/slist"
run_ms strip --files-from "$T/slist" -0
if [ "$rc" -eq 1 ] && grep -q "link.ko: is a symbolic link" "$T/out" &&
	grep -q "bad.ko: trailer: id_type is not 2 (PKCS#7); left as it is" "$T/out" &&
	same "$T/bad.ko" "$T/bad.copy" && [ -L "$T/link.ko" ] && same "$T/f1.ko" "$T/src/mod000.ko"; then
	t_pass "strip --files-from -0: symlink and broken trailer refused, the rest stripped"
else
	t_fail "strip --files-from -0" "status $rc" "$(cat "$T/out")"
fi
run_ms strip
expect_fail "strip without modules: usage" 2 "no modules given"
run_ms strip --json "$T/f1.ko"
expect_fail "strip --json: usage" 2 "unknown option --json"
t_done
