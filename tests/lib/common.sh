# Shared helpers for tests/integration/*.sh (sourced, POSIX sh + bash).
# Each test script: sources this, calls t_setup, runs checks, calls t_done.
# Prints "PASS name" / "FAIL name" / "SKIP name: why" lines and ends with
# "<script>: N passed, N failed, N skipped" (tests/run.sh adds them up and
# checks that every SKIP line was counted).
#
# No secret in any output: the PINs and passphrases below are strings no
# output contains by accident, and tests/run.sh fails a script when one of
# them (t_secrets) appears in its output, in the modsign output run_ms and
# t_check collect in $MS_LOG, or in a file left under $T at cleanup (where
# t_cleanup copies it into $MODSIGN_TEST_LOGDIR). Tests use $PIN, $WRONG_PIN
# and $KEY_PASS, never other literals, and append the output of modsign runs
# they make themselves to "$MS_LOG" rather than to /dev/null.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DATA=$TOP/tests/data
MODSIGN=${MODSIGN:-$TOP/build/san/modsign}
# shellcheck source=tests/lib/signfile.sh
. "$TOP/tests/lib/signfile.sh"
SOFTHSM=/usr/lib/softhsm/libsofthsm2.so
PIN=tPIN-q7Kx-M3z9	# user PIN of the t_token token
WRONG_PIN=wPIN-v2Jd-B8n4	# a PIN every test token refuses
OCK_PIN=oP8v-Zk2		# openCryptoki's user PIN (its PINs are 4 to 8 bytes)
OCK_WRONG_PIN=wQ3n-Hy6	# one it refuses, of a length it accepts
KEY_PASS=test-passphrase	# of tests/data/rsa2048.enc.key.pem (fixed by the data)
WRONG_KEY_PASS=wrong-passphrase
t_passed=0
t_failed=0
t_skipped=0

export P11_KIT_STRICT=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$TOP/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# t_secrets: every PIN and passphrase the tests give modsign, one a line.
t_secrets() {
	printf '%s\n' "$PIN" "$WRONG_PIN" "$KEY_PASS" "$WRONG_KEY_PASS" "$OCK_PIN" "$OCK_WRONG_PIN"
}

t_setup() {
	T=$(mktemp -d /tmp/modsign-test.XXXXXX)
	T_NAME=$(basename "$0" .sh)
	# Where run_ms and t_check keep every output: run.sh's log directory,
	# or $T when run alone.
	MS_LOG=${MODSIGN_TEST_LOGDIR:-$T}/$T_NAME.modsign.log
	trap 't_cleanup' EXIT
	# A suite started from a shell inside `modsign agent` must not sign
	# through that agent (nor fail on its dead socket): tests start their own.
	unset KBUILD_SIGN_PIN MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID
}

# Files under $T that hold a secret are kept for run.sh to report: all but
# the token store (tokens/), PIN files given to modsign (*.pin) and the
# call logs of OpenSC's pkcs11-spy (*spy*.log), which show the C_Login PIN.
t_cleanup() {
	if [ -n "${MODSIGN_TEST_LOGDIR:-}" ] && [ -d "$T" ]; then
		t_secrets >"$T/.secrets"
		grep -rlaF -f "$T/.secrets" --exclude-dir=tokens --exclude='*.pin' \
			--exclude='*spy*.log' --exclude=.secrets "$T" 2>/dev/null |
		while IFS= read -r f; do
			dst=$MODSIGN_TEST_LOGDIR/$T_NAME.left/${f#"$T"/}
			mkdir -p "$(dirname "$dst")" && cp "$f" "$dst"
		done
	fi
	rm -rf "$T"
}

# t_token: a fresh SoftHSM2 token with every TEST-ONLY key, in $T/hsm.
t_token() {
	"$TOP/tests/lib/mktoken.sh" "$T/hsm" modsign-test "$PIN"
	export SOFTHSM2_CONF=$T/hsm/softhsm2.conf
}

# t_registry_stock: from here on $MODSIGN sees p11-kit's registry as stock
# Debian has it, whatever else is installed (tests/lib/stock-registry).
# $MODSIGN_REAL stays the binary itself, for a namespace of a test's own.
t_registry_stock() {
	MODSIGN_REAL=$MODSIGN
	printf '#!/bin/sh\nexec "%s" "%s" "%s" "$@"\n' "$TOP/tests/lib/stock-registry" \
		"$T/stock-registry" "$MODSIGN_REAL" >"$T/modsign-stock"
	chmod 0755 "$T/modsign-stock"
	MODSIGN=$T/modsign-stock
}

# key_uri NAME: the URI of a key on the test token, by label, module-path given.
key_uri() {
	printf 'pkcs11:token=modsign-test;object=%s;type=private?module-path=%s' "$1" "$SOFTHSM"
}

t_pass() {
	echo "PASS $1"
	t_passed=$((t_passed + 1))
}

t_fail() {
	echo "FAIL $1"
	shift
	[ $# -gt 0 ] && printf '    %s\n' "$@"
	t_failed=$((t_failed + 1))
}

# t_skip NAME WHY: a check that cannot run here (no root, no network); counted.
t_skip() {
	echo "SKIP $1: $2"
	t_skipped=$((t_skipped + 1))
}

# t_check NAME COMMAND...: passes when the command succeeds.
t_check() {
	name=$1
	shift
	if "$@" >"$T/.out" 2>&1; then
		t_pass "$name"
	else
		t_fail "$name" "command: $*" "$(tail -n 15 "$T/.out")"
	fi
	cat "$T/.out" >>"${MS_LOG:-/dev/null}"
}

t_done() {
	echo "$(basename "$0" .sh): $t_passed passed, $t_failed failed, $t_skipped skipped"
	[ "$t_failed" -eq 0 ]
}

# run_ms ARGS...: modsign with output captured in $T/out, status in $rc.
run_ms() {
	"$MODSIGN" "$@" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"${MS_LOG:-/dev/null}"
	return 0
}

# expect_fail NAME STATUS PATTERN: after run_ms, the status and a message.
expect_fail() {
	if [ "$rc" -eq "$2" ] && grep -q -- "$3" "$T/out"; then
		t_pass "$1"
	else
		t_fail "$1" "status $rc (want $2), want message matching: $3" "$(cat "$T/out")"
	fi
}

# sig_of SIGNED OUT: extract the PKCS#7 blob of a signed module.
sig_of() {
	size=$(stat -c %s "$1")
	set -- "$1" "$2" $(tail -c 32 "$1" | head -c 4 | od -An -tu1)
	siglen=$(( ($3 << 24) | ($4 << 16) | ($5 << 8) | $6 ))
	tail -c $((siglen + 40)) "$1" | head -c "$siglen" > "$2"
}

# openssl_verify SIGNED UNSIGNED CERT: the signature verifies over UNSIGNED.
openssl_verify() {
	sig_of "$1" "$T/.sig.p7s"
	openssl cms -verify -binary -inform DER -in "$T/.sig.p7s" -content "$2" \
		-certfile "$3" -nointern -noverify -out /dev/null 2>"$T/.verify"
}

same() {
	cmp -s "$1" "$2"
}
