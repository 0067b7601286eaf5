#!/bin/bash
# Every bad input gets a clear error naming the file or the token call, exit
# status 1 (2 for usage), the module untouched, and never the PIN in output.
. "$(dirname "$0")/../lib/common.sh"
t_setup
t_token
"$TOP/tests/lib/mkmodule.sh" "$T/src" 1 >/dev/null
mod=$T/src/mod000.ko
cp "$mod" "$T/m.ko"
cert=$DATA/rsa2048.x509.der
uri=$(key_uri rsa2048)
SPY=/usr/lib/x86_64-linux-gnu/pkcs11-spy.so

untouched() {
	if same "$mod" "$T/m.ko"; then
		t_pass "$1: module untouched"
	else
		t_fail "$1: module untouched"
		cp "$mod" "$T/m.ko"
	fi
}

# Wrong PIN: one C_Login (counted through OpenSC's pkcs11-spy), the CKR_ name,
# no PIN in the output.
export PKCS11SPY=$SOFTHSM PKCS11SPY_OUTPUT=$T/spy.log
KBUILD_SIGN_PIN=$WRONG_PIN run_ms sha256 \
	"pkcs11:token=modsign-test;object=rsa2048;type=private?module-path=$SPY" "$cert" "$T/m.ko"
expect_fail "wrong PIN" 1 "C_Login.*CKR_PIN_INCORRECT"
untouched "wrong PIN"
logins=$(grep -c "^[0-9]*: C_Login" "$T/spy.log" 2>/dev/null || echo 0)
if [ "$logins" -eq 1 ]; then
	t_pass "wrong PIN: exactly one C_Login"
else
	t_fail "wrong PIN: exactly one C_Login" "saw $logins"
fi
if grep -qF "$WRONG_PIN" "$T/out"; then
	t_fail "wrong PIN: PIN not in the output"
else
	t_pass "wrong PIN: PIN not in the output"
fi
unset PKCS11SPY PKCS11SPY_OUTPUT

# No PIN source and no terminal.
run_ms sha256 "$uri" "$cert" "$T/m.ko" </dev/null
expect_fail "no PIN source" 1 "needs a PIN"
untouched "no PIN source"

export KBUILD_SIGN_PIN=$PIN
run_ms sha256 "pkcs11:token=modsign-test;object=nosuchkey;type=private?module-path=$SOFTHSM" "$cert" "$T/m.ko"
expect_fail "unknown key label" 1 "nosuchkey\|not found\|no private key"
untouched "unknown key label"

run_ms sha256 "pkcs11:token=nosuchtoken;object=rsa2048?module-path=$SOFTHSM" "$cert" "$T/m.ko"
expect_fail "unknown token" 1 "nosuchtoken\|no token"

softhsm2-util --import "$DATA/rsa2048.key.pem" --token modsign-test --label dup --id 0a --pin $PIN >/dev/null
softhsm2-util --import "$DATA/rsa2048.key.pem" --token modsign-test --label dup --id 0b --pin $PIN >/dev/null
run_ms sha256 "pkcs11:token=modsign-test;object=dup;type=private?module-path=$SOFTHSM" "$cert" "$T/m.ko"
expect_fail "two matching keys are listed" 1 '^  object="dup" id=0a'
# Each candidate on a line of its own (the message printer escapes other newlines).
grep -q '^  object="dup" id=0b' "$T/out" && t_pass "two matching keys: both listed" ||
	t_fail "two matching keys: both listed" "$(cat "$T/out")"
untouched "two matching keys"

# Two tokens of one label that both hold the key (one that does not is passed
# over: tests/integration/login.sh).
slot2=$(softhsm2-util --init-token --free --label modsign-test --so-pin 5678 --pin $PIN |
	sed -n 's/.*reassigned to slot //p')
softhsm2-util --import "$DATA/rsa2048.key.pem" --slot "$slot2" --label rsa2048 --id 01 \
	--pin $PIN >/dev/null
run_ms sha256 "pkcs11:token=modsign-test;object=rsa2048?module-path=$SOFTHSM" "$cert" "$T/m.ko"
expect_fail "two matching tokens" 1 "2 tokens match .* and 2 show the private key"
untouched "two matching tokens"
# From here on, name the first token by serial? Simpler: a fresh token dir.
rm -rf "$T/hsm" && t_token

run_ms sha256 "$uri" "$cert" "$T/missing.ko"
expect_fail "missing module" 1 "missing.ko.*No such file"
mkdir "$T/dir.ko"
run_ms sha256 "$uri" "$cert" "$T/dir.ko"
expect_fail "module is a directory" 1 "dir.ko: is a directory"
if ls -A "$T" | grep -q "signed\|\.tmp"; then
	t_fail "directory module: nothing left behind" "$(ls -A "$T")"
else
	t_pass "directory module: nothing left behind"
fi
ln -s m.ko "$T/link.ko"
run_ms sha256 "$uri" "$cert" "$T/link.ko"
expect_fail "module is a symlink" 1 "link.ko: is a symbolic link"
untouched "symlink module"

run_ms sha256 "$uri" "$T/nocert.der" "$T/m.ko"
expect_fail "missing certificate" 1 "nocert.der.*No such file"
head -c 700 /dev/urandom > "$T/garbage"
run_ms sha256 "$uri" "$T/garbage" "$T/m.ko"
expect_fail "garbage certificate" 1 "garbage: not a DER or PEM X.509 certificate"
untouched "garbage certificate"
run_ms sha256 "$uri" "$DATA/other-rsa2048.x509.der" "$T/m.ko"
expect_fail "certificate of another key (token)" 1 "is not the key of certificate"
untouched "certificate of another key (token)"
run_ms sha256 "$DATA/rsa2048.key.pem" "$DATA/other-rsa2048.x509.der" "$T/m.ko"
expect_fail "certificate of another key (PEM)" 1 "is not the key of certificate"
run_ms sha256 "$(key_uri ec256)" "$cert" "$T/m.ko"
expect_fail "EC key with an RSA certificate" 1 "is not the key of certificate"
untouched "certificate of another key"

run_ms md5 "$uri" "$cert" "$T/m.ko"
expect_fail "md5 refused" 1 "hash md5: not a hash the kernel verifies"
run_ms whirlpool "$uri" "$cert" "$T/m.ko"
expect_fail "unknown hash" 1 "hash whirlpool"
run_ms sha3-224 "$uri" "$cert" "$T/m.ko"
expect_fail "sha3-224 (no kernel verifies it)" 1 "hash sha3-224: not a hash the kernel verifies"
run_ms sha512-256 "$uri" "$cert" "$T/m.ko"
expect_fail "sha512-256 (OpenSSL has it, no kernel verifies it)" 1 "hash sha512-256: not a hash"
untouched "bad hash"

run_ms sha256 "$T/garbage" "$cert" "$T/m.ko"
expect_fail "garbage key file" 1 "garbage: cannot parse private key"
printf -- '-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n' > "$T/bad.pem"
run_ms sha256 "$T/bad.pem" "$cert" "$T/m.ko"
expect_fail "garbage PEM key" 1 "bad.pem: cannot parse private key"
untouched "garbage key"

# A FIFO or a device where a file belongs is named for what it is (no hang,
# no "open: Invalid argument"): key file, certificate, module, PIN file.
mkfifo "$T/fifo"
for f in "$T/fifo" /dev/null; do
	if [ -p "$f" ]; then what="a FIFO (named pipe)"; else what="a character device"; fi
	want="^modsign: $f: is $what, not a regular file"
	run_ms sha256 "$f" "$cert" "$T/m.ko"
	expect_fail "key file is $what" 1 "$want"
	run_ms sha256 "$uri" "$f" "$T/m.ko"
	expect_fail "certificate is $what" 1 "$want"
	run_ms verify -c "$f" "$T/m.ko"
	expect_fail "verify: certificate is $what" 1 "$want"
	run_ms sha256 "$uri" "$cert" "$f"
	expect_fail "module is $what" 1 "$want"
	run_ms sha256 "$uri&pin-source=$f" "$cert" "$T/m.ko"
	if [ -p "$f" ]; then
		expect_fail "pin-source is $what" 1 "^modsign: pin-source $f: a FIFO or pipe with no writer"
	else
		expect_fail "pin-source is $what" 1 \
			"^modsign: pin-source $f: is $what; give a regular file or a pipe"
	fi
done
untouched "FIFO or device as an input"

run_ms sha256 "$uri" "$cert" "$T/m.ko" "$T/no/such/dir/out.ko"
expect_fail "dest in a missing directory" 1 "No such file"
untouched "dest in a missing directory"

run_ms -k sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048-noskid.x509.der" "$T/m.ko"
expect_fail "-k without subjectKeyIdentifier" 1 "has no subjectKeyIdentifier"
untouched "-k without SKID"

run_ms -s "$T/garbage" sha256 "$cert" "$T/m.ko"
expect_fail "-s with a file that is not DER PKCS#7" 1 "garbage: PKCS#7: not one DER SEQUENCE"
run_ms -s "$T/nosig.p7s" sha256 "$cert" "$T/m.ko"
expect_fail "-s with a missing file" 1 "nosig.p7s.*No such file"
untouched "-s with bad input"
if ls -A "$T" | grep -q "signed~\|\.tmp"; then
	t_fail "-s failures: nothing left behind" "$(ls -A "$T")"
else
	t_pass "-s failures: nothing left behind"
fi

# Usage errors exit 2.
run_ms
expect_fail "no arguments" 2 "Usage"
run_ms sha256 "$uri" "$cert"
expect_fail "three arguments" 2 "Usage"
run_ms -x sha256 "$uri" "$cert" "$T/m.ko"
expect_fail "unknown option" 2 "Usage"
t_check "--help exits 0" "$MODSIGN" --help
t_check "--version exits 0" "$MODSIGN" --version
# Files that are not what they are named as (module, key, certificate): the
# message says what kind of file it is, or what would be wrong with the
# result, and nothing is written.
key=$DATA/rsa2048.key.pem
mkfifo "$T/fifo.ko"
run_ms sha256 "$key" "$cert" "$T/fifo.ko"
expect_fail "a FIFO as the module: named as one" 1 "fifo.ko: is a FIFO (named pipe), not a regular file"
run_ms -b sha256 "$key" "$cert" /dev/null "$T/m.ko"
expect_fail "/dev/null as a module, -b: named as a character device" 1 \
	"/dev/null: is a character device, not a regular file"
cp "$mod" "$T/m.ko"
mkfifo "$T/m.ko.p7s"
run_ms -p sha256 "$key" "$cert" "$T/m.ko"
expect_fail "a FIFO at <module>.p7s: named as one" 1 "m.ko.p7s: is a FIFO (named pipe), not a regular file; not replaced"
untouched "a FIFO at <module>.p7s"
rm -f "$T/m.ko.p7s"
ln -s m.ko "$T/dest-link.ko"
run_ms sha256 "$key" "$cert" "$T/m.ko" "$T/dest-link.ko"
expect_fail "a symlink as <dest>: not written through, not 'in place'" 1 \
	"dest-link.ko: is a symbolic link; not written through"
if grep -q "in place" "$T/out"; then
	t_fail "a symlink as <dest>: no word of signing in place" "$(cat "$T/out")"
else
	t_pass "a symlink as <dest>: no word of signing in place"
fi
untouched "a symlink as <dest>"
run_ms sha256 "$key" "$cert" "$T/m.ko" "$T/nodir/out.ko"
expect_fail "<dest> in a missing directory: says so, once" 1 \
	"nodir/out.ko: open its directory: No such file or directory"
if [ "$(grep -c . "$T/out")" -ne 1 ]; then
	t_fail "<dest> in a missing directory: one message" "$(cat "$T/out")"
fi
untouched "<dest> in a missing directory"

# A module whose signed result would be more than finit_module(2) reads
# (INT_MAX bytes; verify and strip take no more either): refused before
# anything is written (a sparse file: nothing is read or copied).
truncate -s 2147483627 "$T/huge.ko"
run_ms -p sha256 "$key" "$cert" "$T/huge.ko"
expect_fail "a module too large once signed: refused" 1 \
	"huge.ko: signed, it would be more than the 2147483647 bytes finit_module(2) reads; not signed"
if [ "$(stat -c %s "$T/huge.ko")" -eq 2147483627 ] && [ ! -e "$T/huge.ko.p7s" ] &&
    [ -z "$(ls -A "$T" | grep '\.tmp$')" ]; then
	t_pass "a module too large once signed: untouched, no .p7s, no temp file"
else
	t_fail "a module too large once signed: untouched, no .p7s, no temp file" "$(ls -la "$T")"
fi
rm -f "$T/huge.ko"

# An empty module is no ELF file, but sign-file signs it: so does modsign,
# single and bulk, byte for byte, with a warning.
: >"$T/empty-sf.ko"
"$SIGNFILE" sha256 "$key" "$cert" "$T/empty-sf.ko"
for how in single -b; do
	: >"$T/empty.ko"
	if [ "$how" = single ]; then
		run_ms sha256 "$key" "$cert" "$T/empty.ko"
	else
		run_ms -b sha256 "$key" "$cert" "$T/empty.ko"
	fi
	if [ "$rc" -eq 0 ] && same "$T/empty-sf.ko" "$T/empty.ko" &&
	    grep -q "empty.ko: is empty, not an ELF module; signed all the same" "$T/out"; then
		t_pass "an empty module ($how): signed as sign-file signs it, with a warning"
	else
		t_fail "an empty module ($how): signed as sign-file signs it, with a warning" \
			"exit $rc" "$(cat "$T/out")"
	fi
done

# A failure whose usual cause is outside the token gets a
# hint, by module file name. openCryptoki answers C_Initialize with
# CKR_HOST_MEMORY when pkcsslotd is not running; tests/slowtoken, copied
# under openCryptoki's file name, gives that answer (its .conf) and SoftHSM2
# stands behind it. The same answer from a module of another name: no hint.
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken
mkdir "$T/ock"
for name in libopencryptoki.so other.so; do
	cp "$SHIM" "$T/ock/$name"
	echo "SLOWTOKEN_FAULT=C_Initialize:1:CKR_HOST_MEMORY" >"$T/ock/$name.conf"
	cp "$mod" "$T/m.ko"
	run_ms sha256 "pkcs11:token=modsign-test;object=rsa2048;type=private?module-path=$T/ock/$name" \
		"$cert" "$T/m.ko"
	expect_fail "C_Initialize CKR_HOST_MEMORY from $name: named" 1 \
		"C_Initialize: CKR_HOST_MEMORY: module $name"
	if [ "$name" = libopencryptoki.so ]; then
		grep -q "^  hint: openCryptoki .*is pkcsslotd running" "$T/out" &&
			t_pass "openCryptoki's CKR_HOST_MEMORY: is pkcsslotd running?" ||
			t_fail "openCryptoki's CKR_HOST_MEMORY: is pkcsslotd running?" "$(cat "$T/out")"
	else
		grep -q "hint:" "$T/out" && t_fail "another module's CKR_HOST_MEMORY: no hint" \
			"$(cat "$T/out")" || t_pass "another module's CKR_HOST_MEMORY: no hint"
	fi
	untouched "C_Initialize CKR_HOST_MEMORY from $name"
done
t_done
