# shellcheck shell=bash
# An ML-DSA token of our own: tests/mldsatoken (build/mldsatoken.so, a test
# double of an HSM with PKCS#11 3.2's CKM_ML_DSA) over TEST-ONLY keys and
# self-signed certificates made in a directory with the OpenSSL that
# scripts/openssl-pq.sh builds into its cache (`make pq-deps`). Nothing here
# builds that OpenSSL: it takes minutes, so a test skips without it.
# Sourced after common.sh; bash, safe under set -e.
#   mldsa_missing            prints why the token cannot be made here
#                            (empty: it can)
#   mldsa_start DIR PIN [SETS]
#                            builds the module and tests/mldsatoken's client
#                            (make), then makes in DIR one key per parameter
#                            set of SETS (default "44 65 87"), labelled
#                            mldsa44, mldsa65, mldsa87: DIR/LABEL.key.pem,
#                            LABEL.crt.pem and LABEL.crt.der, LABEL.pub.pem;
#                            PIN is the user PIN (DIR/pin: put DIR under
#                            $T/tokens/, which the secret scan skips).
#                            Exports MLDSATOKEN_DIR=DIR. Non-zero on failure,
#                            with the reason in DIR/setup.log
#   mldsa_test_token WHAT    in a test after t_setup: the script skips
#                            WHAT (one counted SKIP) when mldsa_missing
#                            says why, fails when the token cannot be made,
#                            else has a token in $tok ($T/tokens/mldsa)
#   mldsa_uri LABEL          the URI of key LABEL through the module
# Set on sourcing: PQ_CACHE, PQ_OPENSSL (its bin/openssl), PQ_SIGNFILE
# (its sign-file 7.2, which may be absent), MLDSA_MODULE, MLDSA_SIGN (the
# client: mldsatoken-sign [-p N] [-d] [-c CTX] [-H] MODULE LABEL PINFILE IN OUT).

# shellcheck disable=SC2034
PQ_CACHE=${MODSIGN_OPENSSL_PQ_CACHE:-/var/cache/modsign-openssl-pq}
PQ_OPENSSL=$PQ_CACHE/bin/openssl
# shellcheck disable=SC2034
PQ_SIGNFILE=$PQ_CACHE/bin/sign-file-7.2
MLDSA_MODULE=$TOP/build/mldsatoken.so
# shellcheck disable=SC2034
MLDSA_SIGN=$TOP/build/mldsatoken-sign

mldsa_missing() {
	if [ ! -f "$PQ_CACHE/.openssl-stamp" ] || [ ! -x "$PQ_OPENSSL" ]; then
		echo "no OpenSSL >= 3.5 in $PQ_CACHE (make pq-deps builds it: about 30 minutes on two busy cores)"
	fi
}

mldsa_start() {
	local dir=$1 pin=$2 sets=${3:-44 65 87} s label
	mkdir -p "$dir"
	: >"$dir/setup.log"
	if ! make -s -C "$TOP" build/mldsatoken.so build/mldsatoken-sign >>"$dir/setup.log" 2>&1; then
		return 1
	fi
	printf '%s\n' "$pin" >"$dir/pin"
	for s in $sets; do
		label=mldsa$s
		"$PQ_OPENSSL" genpkey -algorithm "ML-DSA-$s" -out "$dir/$label.key.pem" \
			>>"$dir/setup.log" 2>&1 &&
			"$PQ_OPENSSL" req -new -x509 -config "$TOP/tests/data/x509.cnf" \
				-subj "/O=modsign test/CN=TEST-ONLY modsign ML-DSA-$s key" \
				-days 36500 -key "$dir/$label.key.pem" -out "$dir/$label.crt.pem" \
				>>"$dir/setup.log" 2>&1 &&
			"$PQ_OPENSSL" x509 -in "$dir/$label.crt.pem" -outform DER \
				-out "$dir/$label.crt.der" >>"$dir/setup.log" 2>&1 &&
			"$PQ_OPENSSL" pkey -in "$dir/$label.key.pem" -pubout \
				-out "$dir/$label.pub.pem" >>"$dir/setup.log" 2>&1 || return 1
	done
	export MLDSATOKEN_DIR=$dir
}

mldsa_test_token() {
	local why
	why=$(mldsa_missing)
	if [ -n "$why" ]; then
		t_skip "$1" "$why"
		t_done
		exit 0
	fi
	tok=$T/tokens/mldsa
	if ! mldsa_start "$tok" "$PIN"; then
		t_fail "ML-DSA token set up (build/mldsatoken.so, keys)" "$(tail -n 20 "$tok/setup.log")"
		t_done
		exit 1
	fi
}

mldsa_uri() {
	printf 'pkcs11:token=mldsa-test;object=%s;type=private?module-path=%s' "$1" "$MLDSA_MODULE"
}
