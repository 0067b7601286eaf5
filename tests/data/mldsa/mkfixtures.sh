#!/bin/bash
# TEST-ONLY ML-DSA-44/65/87 keys and self-signed certificates, and sign-file
# 7.2's detached signature of ../cms/mod.bin with each (contentType and a
# SHA-512 messageDigest as signed attributes), made with the OpenSSL that
# scripts/openssl-pq.sh builds. Run here: ./mkfixtures.sh
set -euo pipefail
cd "$(dirname "$0")"
pq=${MODSIGN_OPENSSL_PQ_CACHE:-$(../../../scripts/openssl-pq.sh path)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in 44 65 87; do
	"$pq/bin/openssl" genpkey -algorithm "ML-DSA-$s" -out "mldsa$s.key.pem"
	"$pq/bin/openssl" req -new -x509 -config ../x509.cnf -days 36500 \
		-subj "/O=modsign test/CN=TEST-ONLY modsign ML-DSA-$s" \
		-key "mldsa$s.key.pem" -out "mldsa$s.x509.pem"
	"$pq/bin/openssl" x509 -in "mldsa$s.x509.pem" -outform DER -out "mldsa$s.x509.der"
	cp ../cms/mod.bin "$tmp/mod.bin"
	"$pq/bin/sign-file-7.2" -d sha512 "mldsa$s.key.pem" "mldsa$s.x509.pem" "$tmp/mod.bin"
	mv "$tmp/mod.bin.p7s" "signfile72-mldsa$s.p7s"
done
