#!/bin/bash
# `modsign verify` against `openssl cms -verify` on modules signed by modsign
# and by the kernel's sign-file (RSA and EC, every hash); tampering with the
# module, the signature or the trailer, a wrong certificate and the kernel's
# rules each FAIL with a reason naming the cause; truncated PKCS#7 at every
# length; real Debian-signed modules (skipped when the package cannot be
# fetched); strip then sign equals sign.
. "$(dirname "$0")/../lib/common.sh"
t_setup

if ! "$MODSIGN" verify --help 2>/dev/null | grep -q 'Usage: modsign verify'; then
	t_fail "modsign has a verify subcommand" "add the verify/info/strip dispatch to src/cli/main.c"
	t_done
	exit 1
fi

"$TOP/tests/lib/mkmodule.sh" "$T/src" 2 >/dev/null
mod=$T/src/mod000.ko

# be32 N: four bytes, big-endian.
be32() {
	printf "\\$(printf %03o $((($1 >> 24) & 255)))\\$(printf %03o $((($1 >> 16) & 255)))"
	printf "\\$(printf %03o $((($1 >> 8) & 255)))\\$(printf %03o $(($1 & 255)))"
}

# append_sig MODULE P7S OUT [ID_TYPE [ALGO [SIG_LEN]]]: MODULE + P7S + module_signature + marker.
append_sig() {
	local len=${6:-$(stat -c %s "$2")}
	{
		cat "$1" "$2"
		printf "\\$(printf %03o "${5:-0}")\\000\\$(printf %03o "${4:-2}")\\000\\000\\000\\000\\000"
		be32 "$len"
		printf '~Module signature appended~\n'
	} > "$3"
}

# poke FILE OFFSET BYTE: overwrite one byte (BYTE in decimal).
poke() {
	printf "\\$(printf %03o "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

# byte_at FILE OFFSET: the byte in decimal.
byte_at() {
	od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' '
}

# expect_verify NAME STATUS PATTERN ARGS...: run verify, check status and stdout+stderr.
expect_verify() {
	local name=$1 status=$2 pattern=$3
	shift 3
	run_ms verify "$@"
	expect_fail "$name" "$status" "$pattern"
}

# --- Agreement with openssl over the matrix of keys, hashes and signers -------------
cn_of() {
	echo "TEST-ONLY modsign $1"
}
algo_of() {
	case $1 in rsa*) echo rsa ;; *) echo ecdsa ;; esac
}

agree=0
disagree=""
for key in rsa2048 rsa3072 rsa4096 ec256 ec384 ec521; do
	for hash in sha1 sha224 sha256 sha384 sha512 sha3-256 sha3-384 sha3-512; do
		for signer in modsign sign-file; do
			for k in "" -k; do
				# -k for one hash per key is enough.
				[ -n "$k" ] && [ "$hash" != sha384 ] && continue
				# OpenSSL 3.0's CMS has no ecdsa-with-SHA3: sign-file cannot.
				case $signer-$key-$hash in sign-file-ec*-sha3-*) continue ;; esac
				out=$T/m-$key-$hash-$signer$k.ko
				cp "$mod" "$out"
				if [ "$signer" = modsign ]; then
					"$MODSIGN" $k "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der" \
						"$out" 2>/dev/null
				else
					"$SIGNFILE" $k "$hash" "$DATA/$key.key.pem" "$DATA/$key.x509.der" \
						"$out" 2>/dev/null
				fi
				openssl_verify "$out" "$mod" "$DATA/$key.x509.pem" && ossl=OK || ossl=FAIL
				line=$("$MODSIGN" verify -c "$DATA/$key.x509.der" "$out" 2>&1)
				want="OK $out $(cn_of $key) $hash $(algo_of $key)"
				if [ "$ossl" = OK ] && [ "$line" = "$want" ]; then
					agree=$((agree + 1))
				else
					disagree="$disagree
  $key $hash $signer$k: openssl $ossl, modsign: $line"
				fi
			done
		done
	done
done
if [ -z "$disagree" ] && [ "$agree" -eq 99 ]; then
	t_pass "verify agrees with openssl cms -verify on $agree modules (6 keys, 8 hashes with SHA-3, modsign and sign-file, -k)"
else
	t_fail "verify agrees with openssl cms -verify ($agree agreed)" "$disagree"
fi

# PEM certificates and a certificate on a token work as -c.
r=$T/m-rsa2048-sha256-modsign.ko
expect_verify "-c with a PEM certificate" 0 "^OK $r " -c "$DATA/rsa2048.x509.pem" "$r"
t_token
curi="pkcs11:token=modsign-test;object=rsa2048;type=cert?module-path=$SOFTHSM"
expect_verify "-c with a pkcs11: certificate URI" 0 "^OK $r " -c "$curi" "$r"
expect_verify "-c with a missing token certificate" 1 "certificate:" \
	-c "pkcs11:token=modsign-test;object=nosuch;type=cert?module-path=$SOFTHSM" "$r"
expect_verify "-c with an unreadable file" 1 "nosuch.der: " -c "$T/nosuch.der" "$r"

# --- One changed byte: module, signature, trailer; wrong certificate ------------------
for key in rsa2048 ec384; do
	s=$T/m-$key-sha256-modsign.ko
	size=$(stat -c %s "$s")
	cp "$s" "$T/t.ko" && poke "$T/t.ko" 100 $(( $(byte_at "$T/t.ko" 100) ^ 1 ))
	if [ "$key" = rsa2048 ]; then
		want="digest mismatch: the module is not what was signed"
	else
		want="ECDSA signature does not verify"
	fi
	expect_verify "$key: one changed module byte: $want" 1 "FAIL $T/t.ko: $want" \
		-c "$DATA/$key.x509.der" "$T/t.ko"
	cp "$mod" "$T/tm" && poke "$T/tm" 100 $(( $(byte_at "$T/tm" 100) ^ 1 ))
	if openssl_verify "$s" "$T/tm" "$DATA/$key.x509.pem"; then
		t_fail "$key: openssl rejects the changed module too"
	else
		t_pass "$key: openssl rejects the changed module too"
	fi
	# The signature value ends the PKCS#7, just before the 40-byte trailer.
	cp "$s" "$T/t.ko" && poke "$T/t.ko" $((size - 41)) $(( $(byte_at "$T/t.ko" $((size - 41))) ^ 1 ))
	[ "$key" = rsa2048 ] && want="RSA signature invalid"
	expect_verify "$key: one changed signature byte: $want" 1 "FAIL $T/t.ko: $want" \
		-c "$DATA/$key.x509.der" "$T/t.ko"
	# Trailer: id_type, a reserved field, sig_len, the marker.
	cp "$s" "$T/t.ko" && poke "$T/t.ko" $((size - 38)) 1
	expect_verify "$key: trailer id_type 1" 1 "FAIL $T/t.ko: trailer: id_type is not 2" \
		-c "$DATA/$key.x509.der" "$T/t.ko"
	cp "$s" "$T/t.ko" && poke "$T/t.ko" $((size - 40)) 1
	expect_verify "$key: trailer with a non-zero info field" 1 "FAIL $T/t.ko: trailer: non-zero" \
		-c "$DATA/$key.x509.der" "$T/t.ko"
	cp "$s" "$T/t.ko" && poke "$T/t.ko" $((size - 32)) 1
	expect_verify "$key: trailer sig_len past the start of the file" 1 \
		"FAIL $T/t.ko: trailer: sig_len reaches past the start" -c "$DATA/$key.x509.der" "$T/t.ko"
	cp "$s" "$T/t.ko" && poke "$T/t.ko" $((size - 29)) 1
	expect_verify "$key: trailer sig_len changed in its low byte" 1 "FAIL $T/t.ko: PKCS#7: " \
		-c "$DATA/$key.x509.der" "$T/t.ko"
	cp "$s" "$T/t.ko" && poke "$T/t.ko" $((size - 2)) 33
	expect_verify "$key: changed marker: not signed" 1 "FAIL $T/t.ko: not signed" \
		-c "$DATA/$key.x509.der" "$T/t.ko"
	expect_verify "$key: wrong certificate" 1 \
		"FAIL $s: no given certificate has the signer's issuer and serial number" \
		-c "$DATA/other-rsa2048.x509.der" "$s"
done
expect_verify "-k signature, wrong certificate" 1 \
	"no given certificate has the signer's subjectKeyIdentifier" \
	-c "$DATA/ec384.x509.der" "$T/m-rsa2048-sha384-modsign-k.ko"

# --- Exit status over several modules, without -c -----------------------------------
run_ms verify -c "$DATA/rsa2048.x509.der" -c "$DATA/ec384.x509.der" \
	"$T/m-rsa2048-sha256-modsign.ko" "$T/m-ec384-sha512-sign-file.ko"
expect_fail "several certificates, all OK: exit 0" 0 "^OK .*m-ec384-sha512-sign-file.ko "
run_ms verify -c "$DATA/rsa2048.x509.der" "$T/m-rsa2048-sha256-modsign.ko" "$mod"
expect_fail "one unsigned module of two: exit 1" 1 "FAIL $mod: not signed"
run_ms verify "$T/m-rsa2048-sha256-modsign.ko" "$T/m-ec256-sha1-sign-file.ko"
expect_fail "without -c: UNVERIFIED lines, exit 0" 0 \
	"^UNVERIFIED $T/m-ec256-sha1-sign-file.ko TEST-ONLY modsign ec256 sha1 ecdsa$"
grep -q "warning: no -c certificate" "$T/out" || t_fail "without -c: a warning says so"
cp "$T/m-rsa2048-sha256-modsign.ko" "$T/t.ko"
poke "$T/t.ko" 100 $(( $(byte_at "$T/t.ko" 100) ^ 1 ))
run_ms verify "$T/t.ko"
expect_fail "without -c a changed module is not detected (no key): UNVERIFIED" 0 "^UNVERIFIED "
expect_verify "no modules: usage" 2 "no modules given"
expect_verify "unknown option: usage" 2 "unknown option --frob" --frob "$mod"
expect_verify "-c without an argument: usage" 2 "needs an argument" -c

# --- Kernel rules on PKCS#7 made by openssl -------------------------------------------
osign() {	# osign OUT.p7s EXTRA...: openssl cms over the unsigned module
	local out=$1
	shift
	openssl cms -sign -binary -outform DER -nocerts -in "$mod" -md sha256 -out "$out" "$@"
}
osign "$T/noattr.p7s" -noattr -signer "$DATA/rsa2048.x509.pem" -inkey "$DATA/rsa2048.key.pem"
append_sig "$mod" "$T/noattr.p7s" "$T/noattr.ko"
expect_verify "openssl cms -noattr: OK" 0 "^OK $T/noattr.ko " -c "$DATA/rsa2048.x509.der" "$T/noattr.ko"
osign "$T/attrs.p7s" -signer "$DATA/rsa2048.x509.pem" -inkey "$DATA/rsa2048.key.pem"
append_sig "$mod" "$T/attrs.p7s" "$T/attrs.ko"
expect_verify "signed attributes: FAIL" 1 "FAIL $T/attrs.ko: PKCS#7: has signed attributes" \
	-c "$DATA/rsa2048.x509.der" "$T/attrs.ko"
osign "$T/two.p7s" -noattr -signer "$DATA/rsa2048.x509.pem" -inkey "$DATA/rsa2048.key.pem" \
	-signer "$DATA/ec256.x509.pem" -inkey "$DATA/ec256.key.pem"
append_sig "$mod" "$T/two.p7s" "$T/two.ko"
expect_verify "two signers, both verify" 0 \
	"^OK $T/two.ko TEST-ONLY modsign ec256, TEST-ONLY modsign rsa2048 sha256,sha256 ecdsa,rsa$" \
	-c "$DATA/rsa2048.x509.der" -c "$DATA/ec256.x509.der" "$T/two.ko"
expect_verify "two signers, one certificate missing" 1 "FAIL $T/two.ko: signer 1 of 2: no given" \
	-c "$DATA/rsa2048.x509.der" "$T/two.ko"
len=$(stat -c %s "$T/two.p7s")
poke "$T/two.p7s" $((len - 1)) $(( $(byte_at "$T/two.p7s" $((len - 1))) ^ 1 ))
append_sig "$mod" "$T/two.p7s" "$T/two-bad.ko"
expect_verify "two signers, one bad" 1 "FAIL $T/two-bad.ko: signer 2 of 2: RSA signature invalid" \
	-c "$DATA/rsa2048.x509.der" -c "$DATA/ec256.x509.der" "$T/two-bad.ko"
# SignedData version 1 around a version 3 (subjectKeyIdentifier) SignerInfo.
sig_of "$T/m-rsa2048-sha384-modsign-k.ko" "$T/k.p7s"
if [ "$(byte_at "$T/k.p7s" 23)" = 2 ] && [ "$(byte_at "$T/k.p7s" 25)" = 3 ]; then
	poke "$T/k.p7s" 25 1
	append_sig "$mod" "$T/k.p7s" "$T/vm.ko"
	expect_verify "SignedData-SignerInfo version mismatch" 1 \
		"FAIL $T/vm.ko: PKCS#7: SignedData-SignerInfo version mismatch" \
		-c "$DATA/rsa2048.x509.der" "$T/vm.ko"
else
	t_fail "SignedData version byte where expected in the -k signature"
fi
append_sig "$mod" "$T/noattr.p7s" "$T/id1.ko" 1
expect_verify "id_type 1 (X.509)" 1 "FAIL $T/id1.ko: trailer: id_type is not 2" "$T/id1.ko"
append_sig "$mod" "$T/noattr.p7s" "$T/algo.ko" 2 7
expect_verify "non-zero algo field" 1 "FAIL $T/algo.ko: trailer: non-zero" "$T/algo.ko"
append_sig "$mod" "$T/noattr.p7s" "$T/long.ko" 2 0 $(( $(stat -c %s "$mod") + $(stat -c %s "$T/noattr.p7s") ))
expect_verify "sig_len past the start of the file" 1 "FAIL $T/long.ko: trailer: sig_len reaches past" \
	"$T/long.ko"

# Truncated PKCS#7 at every length, each framed as a well-formed trailer: all FAIL, no crash.
sig_of "$T/m-rsa2048-sha256-sign-file.ko" "$T/full.p7s"
full=$(stat -c %s "$T/full.p7s")
mkdir -p "$T/trunc"
: > "$T/trunc.list"
n=1
while [ "$n" -lt "$full" ]; do
	head -c "$n" "$T/full.p7s" > "$T/trunc/p"
	append_sig "$mod" "$T/trunc/p" "$T/trunc/t$n.ko"
	echo "$T/trunc/t$n.ko" >> "$T/trunc.list"
	n=$((n + 1))
done
run_ms verify -c "$DATA/rsa2048.x509.der" --files-from "$T/trunc.list"
nfail=$(grep -c '^FAIL .*: PKCS#7: ' "$T/out")
if [ "$rc" -eq 1 ] && [ "$nfail" -eq $((full - 1)) ] && ! grep -q -e '^OK' -e 'Sanitizer' -e 'runtime error' "$T/out"; then
	t_pass "truncated PKCS#7 at each of $((full - 1)) lengths: FAIL, no crash"
else
	t_fail "truncated PKCS#7 at every length" "status $rc, $nfail FAIL lines" "$(grep -v '^FAIL' "$T/out" | head)"
fi

# --- strip, then sign, equals signing the original ------------------------------------
for signer in modsign sign-file; do
	for key in rsa2048 ec256; do
		cp "$mod" "$T/a.ko"
		if [ "$signer" = modsign ]; then
			"$MODSIGN" sha256 "$DATA/$key.key.pem" "$DATA/$key.x509.der" "$T/a.ko"
		else
			"$SIGNFILE" sha256 "$DATA/$key.key.pem" "$DATA/$key.x509.der" "$T/a.ko"
		fi
		cp "$T/a.ko" "$T/b.ko"
		run_ms strip "$T/b.ko"
		if [ "$rc" -eq 0 ] && same "$T/b.ko" "$mod"; then
			t_pass "strip of a $signer $key signature gives the module back"
		else
			t_fail "strip of a $signer $key signature gives the module back" "$(cat "$T/out")"
		fi
		"$MODSIGN" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/b.ko"
		cp "$mod" "$T/c.ko"
		"$MODSIGN" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/c.ko"
		if same "$T/b.ko" "$T/c.ko"; then
			t_pass "strip then sign equals sign ($signer $key)"
		else
			t_fail "strip then sign equals sign ($signer $key)"
		fi
	done
done

# --- Real modules signed by Debian ----------------------------------------------------
# linux-image-6.1.0-*-amd64 (signed, not -unsigned); the .deb is cached outside git.
. "$TOP/tests/lib/debkernel.sh"
if deb=$(deb_fetch linux-image-amd64 'linux-image-6\.1\.0-[0-9]+-amd64'); then
	mkdir -p "$T/deb"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$T/deb" --wildcards \
		'./boot/vmlinuz-*' './lib/modules/*/kernel/drivers/net/ethernet/intel/*' \
		'./lib/modules/*/kernel/fs/*' 2>/dev/null
	find "$T/deb" -name '*.ko' | sort > "$T/deb.list"
	ndeb=$(wc -l < "$T/deb.list")
	run_ms verify --files-from "$T/deb.list"
	nun=$(grep -c "^UNVERIFIED .* Build time autogenerated kernel key sha256 rsa$" "$T/out")
	if [ "$ndeb" -gt 20 ] && [ "$rc" -eq 0 ] && [ "$nun" -eq "$ndeb" ]; then
		t_pass "Debian modules: verify without -c accepts structure and digest ($ndeb modules)"
	else
		t_fail "Debian modules: verify without -c" "status $rc, $nun of $ndeb" "$(grep -v ^UNVERIFIED "$T/out" | head)"
	fi
	if deb_cert "$(ls "$T"/deb/boot/vmlinuz-*)" "$T/debkey.der"; then
		run_ms verify -c "$T/debkey.der" --files-from "$T/deb.list"
		nok=$(grep -c "^OK .* Build time autogenerated kernel key sha256 rsa$" "$T/out")
		if [ "$rc" -eq 0 ] && [ "$nok" -eq "$ndeb" ]; then
			t_pass "Debian modules verify with the certificate built into vmlinuz ($ndeb)"
		else
			t_fail "Debian modules verify with the vmlinuz certificate" "status $rc, $nok of $ndeb"
		fi
	else
		t_skip "Debian-signed modules" "Debian certificate not found in vmlinuz"
	fi
	m1=$(head -n 1 "$T/deb.list")
	run_ms info "$m1"
	mi=$(modinfo "$m1" 2>/dev/null | grep -E '^(sig_id|signer|sig_key|sig_hashalgo):' | tr -s ' ')
	ours=$(grep -E '^(sig_id|signer|sig_key|sig_hashalgo):' "$T/out" | tr -s ' ')
	if [ -n "$mi" ] && [ "$mi" = "$ours" ] && grep -q '^signer: *Build time autogenerated kernel key$' "$T/out" &&
		grep -q '^hash: *sha256$' "$T/out"; then
		t_pass "Debian module: info shows the Debian signer and hash, as modinfo does"
	else
		t_fail "Debian module: info vs modinfo" "modinfo: $mi" "ours: $ours"
	fi
	cp "$m1" "$T/deb1.ko"
	run_ms strip "$T/deb1.ko"
	size=$(stat -c %s "$m1")
	run_ms info --json "$m1"
	plen=$(sed -n 's/.*"payload_len": \([0-9]*\).*/\1/p' "$T/out")
	if [ -n "$plen" ] && [ "$(stat -c %s "$T/deb1.ko")" -eq "$plen" ] && cmp -s -n "$plen" "$T/deb1.ko" "$m1"; then
		t_pass "Debian module: strip leaves the payload"
	else
		t_fail "Debian module: strip leaves the payload"
	fi
else
	t_skip "Debian-signed modules" "linux-image-6.1.0-*-amd64 could not be fetched into $DEBCACHE"
fi
t_done
