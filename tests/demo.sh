#!/bin/bash
# The demo: a private SoftHSM2 token with the TEST-ONLY RSA-2048 key, eight
# small modules signed by one bulk modsign run through PKCS#11, each checked with
# `openssl cms -verify` and compared with the kernel's sign-file output.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
MODSIGN=${MODSIGN:-$TOP/modsign}
. "$TOP/tests/lib/common.sh"
t_setup
echo "== token: SoftHSM2 in $T/hsm (TEST-ONLY keys, PIN from KBUILD_SIGN_PIN)"
t_token
export KBUILD_SIGN_PIN=$PIN
uri="pkcs11:token=modsign-test;object=rsa2048;type=private?module-path=$SOFTHSM"
echo "== key: $uri"
"$TOP/tests/lib/mkmodule.sh" "$T/mods" 8 64 >/dev/null
mkdir "$T/unsigned" && cp "$T"/mods/*.ko "$T/unsigned/"
echo "== signing 8 modules in bulk: one token login, one C_Sign per module"
"$MODSIGN" -b sha256 "$uri" "$DATA/rsa2048.x509.der" "$T"/mods/*.ko
printf '%-12s %8s %8s  %-22s %s\n' module unsigned signed "openssl cms -verify" "sign-file"
ok=0
for m in "$T"/mods/*.ko; do
	b=$(basename "$m")
	v=FAILED
	openssl_verify "$m" "$T/unsigned/$b" "$DATA/rsa2048.x509.der" && v=ok
	cp "$T/unsigned/$b" "$T/ref.ko"
	"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/ref.ko"
	s=DIFFERENT
	cmp -s "$T/ref.ko" "$m" && s=identical
	[ "$v" = ok ] && [ "$s" = identical ] && ok=$((ok + 1))
	printf '%-12s %8s %8s  %-22s %s\n' "$b" "$(stat -c %s "$T/unsigned/$b")" \
		"$(stat -c %s "$m")" "$v" "$s"
done
echo "== $ok of 8 modules verified and byte-identical to sign-file's output"
[ "$ok" -eq 8 ]
