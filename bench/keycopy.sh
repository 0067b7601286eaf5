#!/bin/bash
# Does the SoftHSM2 session copy of the key still pay? Builds bench/keycopy.c
# (optimised, no sanitizers) against src/pkcs11, makes a TEST-ONLY token in a
# temp dir and runs it: CPU time per signature with the copy and with the
# token object, interleaved pairs, medians and their ratio.
# Usage: bench/keycopy.sh [SIGNATURES-A-RUN [PAIRS]]   (default 2000 5)
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-2000}
PAIRS=${2:-5}
T=$(mktemp -d /tmp/modsign-keycopy.XXXXXX)
trap 'rm -rf "$T"' EXIT
# shellcheck disable=SC2046  # pkg-config's words
cc -std=c11 -D_DEFAULT_SOURCE -O2 -I"$TOP/src" $(pkg-config --cflags p11-kit-1) \
	-o "$T/keycopy" "$TOP/bench/keycopy.c" "$TOP"/src/pkcs11/*.c "$TOP"/src/common/*.c \
	$(pkg-config --libs p11-kit-1) -pthread
"$TOP/tests/lib/mktoken.sh" "$T/hsm" modsign-test 1234
SOFTHSM2_CONF=$T/hsm/softhsm2.conf KBUILD_SIGN_PIN=1234 "$T/keycopy" \
	"pkcs11:token=modsign-test;object=rsa2048;type=private?module-path=/usr/lib/softhsm/libsofthsm2.so" \
	"$N" "$PAIRS"
