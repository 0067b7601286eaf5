#!/bin/sh
# Creates a private SoftHSM2 token holding the TEST-ONLY keys of tests/data.
# Usage: mktoken.sh DIR [LABEL] [USER-PIN]
# USER-PIN defaults to 1234, the unit tests' PIN (tests/unit/test_p11_fixture.h);
# integration tests pass the distinctive $PIN of tests/lib/common.sh, which
# tests/run.sh looks for in every output.
# Writes DIR/softhsm2.conf; callers export SOFTHSM2_CONF=DIR/softhsm2.conf.
# Objects (private key, public key and certificate share label and id):
#   rsa2048 01, rsa3072 02, rsa4096 03, ec256 04, ec384 05, ec521 06
set -eu
dir=$1
label=${2:-modsign-test}
pin=${3:-1234}
data=$(cd "$(dirname "$0")/../data" && pwd)
module=/usr/lib/softhsm/libsofthsm2.so

mkdir -p "$dir/tokens"
printf 'directories.tokendir = %s/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' \
	"$dir" > "$dir/softhsm2.conf"
SOFTHSM2_CONF=$dir/softhsm2.conf
export SOFTHSM2_CONF

softhsm2-util --init-token --free --label "$label" --so-pin 5678 --pin "$pin" >/dev/null
for entry in rsa2048:01 rsa3072:02 rsa4096:03 ec256:04 ec384:05 ec521:06; do
	name=${entry%:*}
	id=${entry#*:}
	softhsm2-util --import "$data/$name.key.pem" --token "$label" \
		--label "$name" --id "$id" --pin "$pin" >/dev/null
	pkcs11-tool --module "$module" --token-label "$label" --login --pin "$pin" \
		--write-object "$data/$name.x509.der" --type cert \
		--id "$id" --label "$name" >/dev/null 2>&1
done
