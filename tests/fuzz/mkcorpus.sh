#!/bin/bash
# Regenerates the seed corpus of tests/fuzz/corpus/<target>/ from the TEST-ONLY
# files of tests/data (deterministic but for the pbes2 and encrypted key seeds:
# OpenSSL picks their salt and IV). Kept: crash-* reproducers and the inputs a
# fuzzer run added under their SHA-1 (40 hex digits), which this script cannot
# make again; every other file is remade or, if no longer made here, removed.
# Needs openssl for two SPKI and key conversions. Usage: tests/fuzz/mkcorpus.sh
set -eu
cd "$(dirname "$0")"
D=../data
C=corpus
for t in trailer pkcs7 cert key pbes2 list uri token pin agent xz zstd gzip ecsig strip text mldsa; do
	mkdir -p "$C/$t"
	find "$C/$t" -type f ! -name 'crash-*' -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -delete
done

# le64 N: 8 bytes, little-endian. be32 N: 4 bytes, big-endian.
le64() { printf "$(printf '\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) \
	$(($1 >> 24 & 255)) $(($1 >> 32 & 255)) $(($1 >> 40 & 255)) $(($1 >> 48 & 255)) \
	$(($1 >> 56 & 255)))"; }
be32() { printf "$(printf '\\%03o' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) $(($1 >> 8 & 255)) \
	$(($1 & 255)))"; }
# info ALGO HASH ID_TYPE SIG_LEN: module_signature, then the marker.
trailer() { printf "$(printf '\\%03o' "$1" "$2" "$3" 0 0 0 0 0)"; be32 "$4"; \
	printf '~Module signature appended~\n'; }
# seed NAME: stdin with its length as the 8-byte prefix.
seed_trailer() { local tmp; tmp=$(mktemp); cat >"$tmp"; { le64 "$(stat -c %s "$tmp")"; \
	cat "$tmp"; } >"$C/trailer/$1"; rm -f "$tmp"; }

p7=$D/cms/rsa2048-sha256.p7s
{ cat $D/cms/mod.bin $p7; trailer 0 0 2 "$(stat -c %s $p7)"; } | seed_trailer signed-rsa2048
{ printf 'ELFmodule'; printf 'SIGN'; trailer 0 0 2 4; } | seed_trailer small-signed
{ printf 'SIG'; trailer 0 0 2 3; } | seed_trailer sig-reaches-start
{ printf 'ELFmodule'; printf 'SIGN'; trailer 0 0 1 4; } | seed_trailer id-type-1
{ printf 'ELFmodule'; printf 'SIGN'; trailer 1 4 2 4; } | seed_trailer nonzero-algo-hash
{ printf 'ELFmodule'; printf 'SIGN'; trailer 0 0 2 4294967295; } | seed_trailer sig-len-max
{ printf 'ab'; printf '~Module signature appended~\n'; } | seed_trailer marker-too-short
head -c 64 /dev/zero | seed_trailer unsigned
{ le64 9223372036854775807; printf 'x'; trailer 0 0 2 1; } >"$C/trailer/huge-file-len"
{ le64 40; trailer 0 0 2 0; } >"$C/trailer/trailer-only"
printf '\037\213\010abc' | seed_trailer gzip-magic-in-plain-name

# strip: flags (1: to a dest), then the module file.
s=$C/strip
p7=$D/cms/rsa2048-sha256.p7s
{ printf '\000'; cat $D/cms/mod.bin $p7; trailer 0 0 2 "$(stat -c %s $p7)"; } >$s/signed
{ printf '\001'; cat $D/cms/mod.bin $p7; trailer 0 0 2 "$(stat -c %s $p7)"; } >$s/signed-dest
{ printf '\000'; cat $D/cms/mod.bin $p7; trailer 0 0 2 "$(stat -c %s $p7)"; cat $p7;
	trailer 0 0 2 "$(stat -c %s $p7)"; } >$s/signed-twice
{ printf '\000'; cat $D/cms/mod.bin; } >$s/unsigned
{ printf '\001'; printf 'ELFmodule'; printf 'SIGN'; trailer 0 0 1 4; } >$s/id-type-1
{ printf '\000'; printf 'ELFmodule'; printf 'SIGN'; trailer 0 1 2 4; } >$s/nonzero-hash
{ printf '\000'; printf 'ELFmodule'; trailer 0 0 2 0; } >$s/sig-len-0
{ printf '\001'; printf 'SIGN'; trailer 0 0 2 4; } >$s/sig-len-whole-file
{ printf '\000'; printf 'xSIGN'; trailer 0 0 2 4; } >$s/payload-one-byte
{ printf '\000'; printf '~Module signature appended~\n'; } >$s/marker-only
printf '\000' >$s/empty

# ecsig: flags (1: also verify against the EC certificate of that size,
# 2: the RSA path), then a raw signature as a token returns it: r||s from
# sign-file's EC vectors, and edge cases of the DER INTEGER rules.
e=$C/ecsig
hex() { printf "$(printf '%s' "$1" | sed 's/../\\x&/g')"; }
# rs FILE HALF: the r||s of the one SignerInfo of a sign-file .p7s.
rs() {
	local off hl len v
	read -r off hl len < <(openssl asn1parse -inform DER -in "$1" | tail -n 1 |
		sed -E 's/^ *([0-9]+):d=[0-9]+ +hl=([0-9]+) +l= *([0-9]+).*/\1 \2 \3/')
	tail -c +$((off + hl + 1)) "$1" | head -c "$len" >"$e/.der"
	for v in $(openssl asn1parse -inform DER -in "$e/.der" | sed -n 's/.*INTEGER *://p'); do
		printf '%*s' $((2 * $2)) "$v" | tr ' ' 0
	done
	rm -f "$e/.der"
}
{ printf '\001'; hex "$(rs $D/cms/ec256-sha256.p7s 32)"; } >$e/ec256
{ printf '\001'; hex "$(rs $D/cms/ec384-sha384-skid.p7s 48)"; } >$e/ec384
{ printf '\001'; hex "$(rs $D/cms/ec521-sha512.p7s 66)"; } >$e/ec521
{ printf '\000'; head -c 31 /dev/zero; printf '\001'; head -c 31 /dev/zero; printf '\377'; } >$e/small-values
{ printf '\000'; printf '\200'; head -c 31 /dev/zero; printf '\177'; head -c 31 /dev/zero; } >$e/high-bit
{ printf '\000'; head -c 32 /dev/zero | tr '\0' '\377'; head -c 32 /dev/zero; } >$e/s-zero
{ printf '\000'; head -c 63 /dev/zero | tr '\0' 'A'; } >$e/odd
{ printf '\000'; head -c 134 /dev/zero | tr '\0' 'A'; } >$e/too-long
printf '\000' >$e/empty
{ printf '\002'; head -c 256 $D/cms/mod.bin; } >$e/rsa-2048

# pkcs7: flags (1: digests of mod.bin, 2: message certificates, 4: 64 digest
# bytes follow, 8: drop a digest), then the blob. The flags-0 copies are the
# seeds of the former signed_data_check target (-s), which this one absorbed.
for f in $D/cms/*.p7s $D/pkcs7/*.p7s; do
	n=$(basename "$f" .p7s)
	{ printf '\001'; cat "$f"; } >"$C/pkcs7/$n"
	{ printf '\000'; cat "$f"; } >"$C/pkcs7/$n-flags0"
done
{ printf '\003'; cat $D/cms/openssl-certs.p7s; } >"$C/pkcs7/openssl-certs-own"
{ printf '\003'; cat $D/pkcs7/ec384-certs.p7s; } >"$C/pkcs7/ec384-certs-own"
{ printf '\004'; head -c 64 /dev/zero | tr '\0' 'Z'; cat $D/cms/ec256-sha256.p7s; } \
	>"$C/pkcs7/ec256-sha256-wrong-digest"
{ printf '\011'; cat $D/pkcs7/two-signers.p7s; } >"$C/pkcs7/two-signers-drop-digest"

# cert: every certificate in DER and PEM, unsupported keys, a key before the
# certificate (certs/signing_key.pem), SPKIs.
for f in $D/*.x509.der $D/*.x509.pem $D/cms/*.x509.der $D/cms/*.x509.pem; do
	cp "$f" "$C/cert/$(basename "$f")"
done
cat $D/rsa2048.key.pem $D/rsa2048.x509.pem >"$C/cert/signing_key.pem"
openssl x509 -in $D/rsa2048.x509.der -inform DER -noout -pubkey |
	openssl pkey -pubin -outform DER >"$C/cert/rsa2048.spki.der"
openssl x509 -in $D/ec256.x509.der -inform DER -noout -pubkey |
	openssl pkey -pubin -outform DER >"$C/cert/ec256.spki.der"
# ML-DSA-44 (OpenSSL's test certificates), PEM and DER (our own parser).
for f in $D/mldsa/*-cert.pem; do
	cp "$f" "$C/cert/$(basename "$f")"
	openssl x509 -in "$f" -outform DER >"$C/cert/$(basename "$f" .pem).der"
done

# key: every TEST-ONLY key form modsign reads.
for f in $D/*.key.pem $D/*.key.der; do
	cp "$f" "$C/key/$(basename "$f")"
done
openssl pkey -in $D/ec256.key.pem -outform DER >"$C/key/ec256.key.der"
openssl pkey -in $D/ec384.key.pem >"$C/key/ec384.pkcs8.key.pem"
# PKCS#8 encrypted with PBES2 as OpenSSL 3 writes it, passphrase test-passphrase
# (tests/lib/common.sh KEY_PASS), few iterations so that a run decrypts fast.
pass=pass:test-passphrase
openssl pkey -in $D/ec256.key.pem -aes128 -passout $pass >"$C/key/ec256.pbes2-aes128.key.pem"
openssl pkcs8 -topk8 -in $D/rsa2048.key.pem -v2 des-ede3-cbc -v2prf hmacWithSHA1 -iter 64 \
	-passout $pass -outform DER >"$C/key/rsa2048.pbes2-des3-sha1.key.der"
openssl pkcs8 -topk8 -in $D/ec384.key.pem -v2 aes-192-cbc -v2prf hmacWithSHA384 -iter 64 \
	-passout $pass >"$C/key/ec384.pbes2-aes192-sha384.key.pem"

# pbes2: the DER EncryptedPrivateKeyInfo, every PRF and cipher modsign reads
# (64 iterations: the target decrypts up to 256), and OpenSSL's default.
for prf in hmacWithSHA1 hmacWithSHA224 hmacWithSHA256 hmacWithSHA384 hmacWithSHA512; do
	for c in aes-128-cbc aes-192-cbc aes-256-cbc des-ede3-cbc; do
		openssl pkcs8 -topk8 -in $D/ec256.key.pem -v2 $c -v2prf $prf -iter 64 \
			-passout $pass -outform DER >"$C/pbes2/ec256-$c-$prf.der"
	done
done
openssl pkcs8 -topk8 -in $D/rsa2048.key.pem -v2 aes-256-cbc -passout $pass -outform DER \
	>"$C/pbes2/rsa2048-openssl-default.der"
openssl pkcs8 -topk8 -in $D/ec256.key.pem -v2 aes-256-cbc -iter 1 -passout $pass -outform DER \
	>"$C/pbes2/ec256-iter1.der"
openssl pkcs8 -topk8 -in $D/ec256.key.pem -scrypt -passout $pass -outform DER \
	>"$C/pbes2/ec256-scrypt.der"
openssl pkcs8 -topk8 -in $D/ec256.key.pem -v2 camellia-128-cbc -iter 64 -passout $pass \
	-outform DER >"$C/pbes2/ec256-camellia.der"
openssl pkcs8 -topk8 -in $D/ec256.key.pem -v1 PBE-SHA1-3DES -iter 64 -passout $pass \
	-outform DER >"$C/pbes2/ec256-pkcs12-pbe.der"

# list: the --files-from file (each target run reads it in both separator modes).
printf 'a.ko\nkernel/drivers/b.ko\n' >"$C/list/two"
printf 'a.ko\000kernel/drivers/b.ko\000' >"$C/list/two-nul"
printf '\n\na.ko\n\nb.ko' >"$C/list/blanks-no-final"
printf 'a.ko\nb.ko\r\nc.ko\n' >"$C/list/crlf"
printf 'a\000b.ko\n' >"$C/list/nul-in-name"
{ head -c 4095 /dev/zero | tr '\0' 'x'; printf '\n'; } >"$C/list/name-4095"
{ head -c 4096 /dev/zero | tr '\0' 'x'; printf '\n'; } >"$C/list/name-4096"

# text: names as they go out (escaped lines, JSON strings): forged lines,
# terminal escapes, C1 controls, UTF-8 edges, a signer name with a bidi override.
printf 'drivers/net/e1000e.ko' >"$C/text/plain"
printf 'a.ko\nOK b.ko Build time autogenerated kernel key sha256 rsa\n' >"$C/text/forged-line"
printf 'x\033[31mred\033[0m\033]0;title\007\r\t\\.ko' >"$C/text/escapes"
printf '\302\2332J \233 \302\200 \302\237 \302\240' >"$C/text/c1"
printf '\300\257 \340\200\257 \355\240\200 \364\220\200\200 \365 \342\202 \360\237\230\200 \357\277\277 \351t\351' \
	>"$C/text/utf8-edges"
printf 'a\000b"q\\' >"$C/text/nul-quote"
printf 'O=modsign test, CN=TEST-ONLY modsign rsa2048 \342\200\256' >"$C/text/signer-name"

# uri: pkcs11: URIs (RFC 7512) as users write them.
u=$C/uri
printf 'pkcs11:token=build;object=modsign;type=private?module-path=/nonexistent/libx.so' >$u/module-path
printf 'pkcs11:token=build;id=%%01;type=private' >$u/id
printf 'pkcs11:token=SmartCard-HSM%%20%%28UserPIN%%29;object=kernel;type=cert?module-name=opensc-pkcs11' >$u/module-name
printf 'pkcs11:token=t;object=k?pin-source=file:/nonexistent/pin&module-name=softhsm2' >$u/pin-source
printf 'pkcs11:token=t;object=k;pin-value=1234' >$u/pin-value-path
printf 'pkcs11:token=t;object=k?pin-value=1234' >$u/pin-value-query
printf 'pkcs11:model=SoftHSM%%20v2;manufacturer=SoftHSM%%20project;serial=1234abcd;slot-id=7' >$u/token-attrs
printf 'pkcs11:library-manufacturer=x;library-description=y;library-version=1.2;slot-description=z;slot-manufacturer=w' >$u/library-attrs
printf 'pkcs11:token=a;token=b' >$u/repeat
printf 'PKCS11:token=a' >$u/scheme-upper
printf 'pkcs11:token=a;bogus=1' >$u/unknown-attr
printf 'pkcs11:type=secret-key' >$u/unknown-type
printf 'pkcs11:' >$u/empty
printf 'pkcs12:token=a' >$u/bad-scheme
printf 'pkcs11:id=%%zz' >$u/bad-percent
# URIs p11-kit reads differently: repeats p11-kit reads through its whitespace deletion and aliases,
# a decoded NUL, and an empty path attribute that turns the rest into a query.
printf 'pkcs11:token=a; token=b' >$u/repeat-after-space
printf 'pkcs11:token=a;token =b' >$u/repeat-space-in-name
printf 'pkcs11:token=a;to ken=b' >$u/repeat-split-name
printf 'pkcs11:token=a;to\nken=b' >$u/repeat-newline-in-name
printf 'pkcs11:token=a?pin-value=1& pin-value=2' >$u/repeat-query-space
printf 'pkcs11:token=a;pin-value=1?pin-value=2' >$u/repeat-path-and-query
printf 'pkcs11:object-type=private;type=cert' >$u/repeat-alias-type
printf 'pkcs11:token=a?pinfile=/a&pin-source=/b' >$u/repeat-alias-pinfile
printf 'pkcs11:token=a?pin-value=12%%0034' >$u/nul-pin-value
printf 'pkcs11:token=a?pin-source=file:/tmp/a%%00b' >$u/nul-pin-source
printf 'pkcs11:token=a?pin-value=12%%0 034' >$u/nul-split-by-space
printf 'pkcs11:id=%%00%%01;object=k' >$u/id-with-zero-byte
printf 'pkcs11:;token=a' >$u/empty-path-piece
printf 'pkcs11:token=a;;pin-value=1' >$u/double-semicolon
printf ' pkcs11:token=a' >$u/leading-space
printf 'pkcs11:token=t?module-path=/m.so;pin-value=1' >$u/pin-after-wrong-separator

# token: a config byte (bit 0 EC key, bit 1 SoftHSM2's manufacturer, bits 2-3
# the URI, bit 4 --pin-final-try, bits 5-7 the PIN's length), then the answers
# of the fake module in call order; a zero is always the ordinary answer, so
# zeros walk open, login, key, public half, three signatures and the certificate.
k=$C/token
zeros() { head -c "$1" /dev/zero; }
zeros 4096 >$k/rsa-all-ordinary
{ printf '\001'; zeros 4096; } >$k/ec-all-ordinary
{ printf '\003'; zeros 4096; } >$k/ec-softhsm-key-copy
{ printf '\004'; zeros 4096; } >$k/token-less-uri
{ printf '\014'; zeros 4096; } >$k/certificate-uri
{ printf '\040'; zeros 4096; } >$k/empty-pin
{ printf '\100'; zeros 4096; } >$k/one-byte-pin
zeros 40 >$k/runs-out-early

# pin: a mode byte (0-3: pin-source file: / file:// / path / FILE:,
# 4: KBUILD_SIGN_PIN, 8: pin-value), then the text.
p=$C/pin
printf '\0001234\n' >$p/file
printf '\0011234\r\n' >$p/file-slashes-crlf
printf '\0021234' >$p/path
printf '\0031234' >$p/scheme-upper
printf '\0041234' >$p/env
printf '\0101234\n' >$p/pin-value
printf '\000' >$p/empty
printf '\00012\00034' >$p/nul
{ printf '\000'; head -c 256 /dev/zero | tr '\0' '7'; } >$p/max
{ printf '\000'; head -c 256 /dev/zero | tr '\0' '7'; printf '\r\n'; } >$p/max-crlf
{ printf '\000'; head -c 257 /dev/zero | tr '\0' '7'; } >$p/over
{ printf '\010'; head -c 257 /dev/zero | tr '\0' '7'; } >$p/over-value
# agent: a mode byte (0: a request body, 1-4: a reply body to HELLO, MATCH,
# SIGN, STOP, 5: a stream of framed requests), then the bytes
# (src/agent/PROTOCOL.md). be16 N: 2 bytes, big-endian.
a=$C/agent
be16() { printf "$(printf '\\%03o' $(($1 >> 8 & 255)) $(($1 & 255)))"; }
zeros() { head -c "$1" /dev/zero; }
sign_body() { printf '\003'; printf "$(printf '\\%03o' "$1" "$2")"; zeros "$2" | tr '\0' 'D'; \
	be16 ${#3}; printf '%s' "$3"; }
frame() { local tmp; tmp=$(mktemp); cat >"$tmp"; be32 "$(stat -c %s "$tmp")"; cat "$tmp"; \
	rm -f "$tmp"; }
printf '\000\001\001' >$a/req-hello
printf '\000\001\002' >$a/req-hello-v2
printf '\000\004' >$a/req-stop
{ printf '\000'; sign_body 3 32 drivers/net/e1000e.ko; } >$a/req-sign-sha256
{ printf '\000'; sign_body 5 64 m.ko; } >$a/req-sign-sha512
{ printf '\000'; sign_body 1 20 ''; } >$a/req-sign-sha1-no-path
{ printf '\000'; sign_body 6 32 m.ko; } >$a/req-sign-sha3-256
{ printf '\000'; sign_body 3 20 m.ko; } >$a/req-sign-short-digest
{ printf '\000'; sign_body 0 16 m.ko; } >$a/req-sign-md5
{ printf '\000\002'; be32 "$(stat -c %s $D/rsa2048.x509.der)"; cat $D/rsa2048.x509.der; } \
	>$a/req-match-rsa2048
{ printf '\000\002'; be32 70000; printf '0'; } >$a/req-match-over
name='pkcs11:token=modsign-test;object=rsa2048'
{ printf '\001\201\000'; be16 0; printf '\001\001'; be16 3; be16 ${#name}; printf '%s' "$name"; } \
	>$a/reply-hello
{ printf '\002\202\001'; be16 0; } >$a/reply-match-mismatch
{ printf '\003\203\000'; be16 0; be16 256; zeros 256 | tr '\0' 'S'; } >$a/reply-sign
{ printf '\003\203\002'; be16 24; printf 'C_Sign: CKR_DEVICE_ERROR'; } >$a/reply-sign-failed
{ printf '\003\377\003'; be16 22; printf 'SIGN: truncated digest'; } >$a/reply-refusal
{ printf '\004\204\004'; be16 8; printf 'stopping'; } >$a/reply-stop
{ printf '\005'; printf '\001\001' | frame; sign_body 3 32 a.ko | frame; \
	sign_body 4 48 b.ko | frame; printf '\004' | frame; } >$a/stream-session
{ printf '\005'; printf '\001\001' | frame; be32 200000; printf 'x'; } >$a/stream-too-long
{ printf '\005'; printf '\001\001' | frame; be32 40; printf '\003\003'; } >$a/stream-cut

# xz, zstd, gzip: a byte that sets the piece size the decoder is fed in
# (0: byte by byte), then the container. Made with the reference tools at
# kbuild's settings and others, and the hostile forms modsign refuses.
# xz's mode is named (-T1: one block, no sizes, what kbuild's command
# writes with xz before 5.6; -T+1: blocks with their sizes, what it writes
# with xz 5.6 and later), so that every xz makes the same seeds.
m=$D/cms/mod.bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
head -c 2097152 /dev/zero >"$tmp/zeros"	# 2 MiB: past the targets' 1 MiB limit
cp $m "$tmp/mod.ko"
touch -d '2020-01-01 00:00:00 UTC' "$tmp/mod.ko"
# zseed FMT NAME: stdin as a seed of target FMT, piece byte 0xff.
zseed() { { printf '\377'; cat; } >"$C/$1/$2"; }
xz -T1 --check=crc32 --lzma2=dict=1MiB -c $m >"$tmp/k.xz"
zseed xz kbuild <"$tmp/k.xz"
{ printf '\000'; cat "$tmp/k.xz"; } >"$C/xz/kbuild-bytewise"
xz -T+1 --check=crc32 --lzma2=dict=1MiB -c $m | zseed xz kbuild-mt
xz -T1 -c --check=crc64 $m | zseed xz crc64
xz -T1 -c -9 --check=sha256 $m | zseed xz sha256-dict64m
xz -T1 -c --check=none $m | zseed xz check-none
xz -T1 --check=crc32 --lzma2=dict=1MiB -c "$tmp/zeros" | zseed xz bomb-2m
cat "$tmp/k.xz" "$tmp/k.xz" | zseed xz two-streams
{ cat "$tmp/k.xz"; head -c 4 /dev/zero; } | zseed xz stream-padding
{ cat "$tmp/k.xz"; printf 'x'; } | zseed xz trailing-byte
head -c $(($(stat -c %s "$tmp/k.xz") / 2)) "$tmp/k.xz" | zseed xz truncated
printf '' | zseed xz empty
zstd -q -c $m >"$tmp/k.zst"
zseed zstd kbuild <"$tmp/k.zst"
{ printf '\000'; cat "$tmp/k.zst"; } >"$C/zstd/kbuild-bytewise"
zstd -q -c -19 --no-check $m | zseed zstd level19-no-check
zstd -q -c "$tmp/zeros" | zseed zstd bomb-2m
zstd -q -c <"$tmp/zeros" | zseed zstd bomb-2m-no-size
cat "$tmp/k.zst" "$tmp/k.zst" | zseed zstd two-frames
{ cat "$tmp/k.zst"; printf '\120\052\115\030\004\000\000\000skip'; } | zseed zstd skippable-after
{ cat "$tmp/k.zst"; printf 'x'; } | zseed zstd trailing-byte
head -c $(($(stat -c %s "$tmp/k.zst") / 2)) "$tmp/k.zst" | zseed zstd truncated
gzip -n -c $m >"$tmp/k.gz"
zseed gzip kbuild <"$tmp/k.gz"
{ printf '\000'; cat "$tmp/k.gz"; } >"$C/gzip/kbuild-bytewise"
gzip -N -9 -c "$tmp/mod.ko" | zseed gzip name-mtime-9
gzip -n -c "$tmp/zeros" | zseed gzip bomb-2m
cat "$tmp/k.gz" "$tmp/k.gz" | zseed gzip two-members
{ cat "$tmp/k.gz"; head -c 8 /dev/zero; } | zseed gzip trailing-zeros
head -c $(($(stat -c %s "$tmp/k.gz") - 4)) "$tmp/k.gz" | zseed gzip no-size

# mldsa: a byte for the set (0, 1, 2: ML-DSA-44, 65, 87; +4 the message in
# two pieces), the public key, the signature: Wycheproof's first case of each
# set ("Hello world", empty context, tests/data/mldsa), whole and broken.
ml=$C/mldsa
# kat SET FILE: the pk and sig hex of FILE's first valid "Hello world" case.
kat() {
	grep -m 1 '^k ' "$2" | cut -d' ' -f4 | tr -d '\n'
	grep -m 1 '^v .* ok pure - 48656c6c6f20776f726c64 ' "$2" | cut -d' ' -f7 | tr -d '\n'
}
i=0
for set in 44 65 87; do
	{ printf "$(printf '\\%03o' $i)"; hex "$(kat $set $D/mldsa/wycheproof_$set.txt)"; } >$ml/hello-$set
	{ printf "$(printf '\\%03o' $((i + 4)))"; tail -c +2 $ml/hello-$set; } >$ml/hello-$set-split
	i=$((i + 1))
done
# pkcs7: an ML-DSA-44 module signature without signed attributes (RFC 9882)
# put together here: the root certificate's issuer and serial as sid, the
# server certificate's signature (by the root's key) as signature value.
hexof() { od -An -v -tx1 | tr -d ' \n'; }
# tlv TAG HEX: one DER TLV, hex.
tlv() {
	local n=$((${#2} / 2))
	if [ $n -lt 128 ]; then
		printf '%s%02x%s' "$1" $n "$2"
	elif [ $n -lt 256 ]; then
		printf '%s81%02x%s' "$1" $n "$2"
	else
		printf '%s82%04x%s' "$1" $n "$2"
	fi
}
# tlvat DER OFFSET: the whole TLV at OFFSET, hex.
tlvat() {
	local hl l
	read -r hl l < <(openssl asn1parse -inform DER -in "$1" |
		sed -nE "s/^ *$2:d=[0-9]+ +hl=([0-9]+) +l= *([0-9]+).*/\1 \2/p")
	tail -c +$(($2 + 1)) "$1" | head -c $((hl + l)) | hexof
}
openssl x509 -in $D/mldsa/root-ml-dsa-44-cert.pem -outform DER >"$ml/.root"
openssl x509 -in $D/mldsa/server-ml-dsa-44-cert.pem -outform DER >"$ml/.server"
# Certificate: SEQUENCE { tbs, alg, BIT STRING { 00, signature } }: the serial at 13, issuer at 29.
sig=$(tail -c 2420 "$ml/.server" | hexof)
sid=$(tlv 30 "$(tlvat "$ml/.root" 29)$(tlvat "$ml/.root" 13)")
sha512=300b0609608648016503040203
si=$(tlv 30 "020101${sid}${sha512}300b0609608648016503040311$(tlv 04 "$sig")")
sd=$(tlv 30 "020101$(tlv 31 $sha512)300b06092a864886f70d010701$(tlv 31 "$si")")
{ printf '\001'; hex "$(tlv 30 "06092a864886f70d010702$(tlv a0 "$sd")")"; } >$C/pkcs7/mldsa44-no-attrs
rm -f "$ml/.root" "$ml/.server"
head -c 1000 $ml/hello-44 >$ml/short-key-44
head -c -1 $ml/hello-65 >$ml/short-sig-65
{ head -c -1 $ml/hello-87; printf '\377'; } >$ml/bad-hint-count-87
echo "corpus: $(find "$C" -type f | wc -l) files"
