#!/bin/bash
# make kernel-check: the proof on real kernels (tests/kernel/README.md).
# Runs each part, prints its PASS/FAIL lines and TIME lines, and ends with
# "kernel-check: N passed, N failed".
#   sign    modsign called directly; Linux 6.1 loads or refuses each module
#   kbuild  modsign inside kbuild and DKMS runs on Linux 6.1
#   k612    Linux 6.12: the kbuild patch, compressed modules, SHA-3
#   k72     Linux 7.2 (Debian unstable): what k612 proves, the agent, SHA-1
#   k72m    Linux 7.2 with ML-DSA, with and without the signed-attribute
#           waiver: sign-file 7.2's and modsign's (token) ML-DSA signatures
# Usage: tests/kernel/run.sh [PART...]   (default: all, in this order)
#
# A part fails when it omits its closing line ("<part>: N passed, N failed",
# with ", N skipped" when it skipped cases), when its SKIP lines do not
# match that count, or when a test PIN appears in its output (the kbuild
# runs' logs go there too: KBUILD_SIGN_PIN must never reach a command line
# or a message).
cd "$(dirname "$0")/../.." || exit 1
[ $# -gt 0 ] || set -- sign kbuild k612 k72 k72m
passed=0
failed=0
skipped=0
log=$(mktemp /tmp/modsign-kernel-check.XXXXXX)
secrets=$log.secrets
trap 'rm -f "$log" "$secrets"' EXIT
bash -c '. tests/lib/common.sh && t_secrets' >"$secrets"
for part in "$@"; do
	if [ ! -x "tests/kernel/$part.sh" ]; then
		echo "FAIL run.sh: no tests/kernel/$part.sh"
		failed=$((failed + 1))
		continue
	fi
	start=$(date +%s)
	"tests/kernel/$part.sh" >"$log" 2>&1
	status=$?
	cat "$log"
	echo "TIME $part (all): $(($(date +%s) - start))s"
	line=$(grep -E "^$part: [0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?\$" "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $part: no closing '$part: N passed, N failed' line (status $status)"
		failed=$((failed + 1))
		continue
	fi
	set -- $line
	passed=$((passed + $2))
	failed=$((failed + $4))
	skipped=$((skipped + ${6:-0}))
	if [ "$(grep -c '^SKIP ' "$log")" -ne "${6:-0}" ]; then
		echo "FAIL $part: $(grep -c '^SKIP ' "$log") SKIP lines, ${6:-0} counted"
		failed=$((failed + 1))
	fi
	if [ "$4" -eq 0 ] && [ "$status" -ne 0 ]; then
		echo "FAIL $part: exit status $status"
		failed=$((failed + 1))
	fi
	if grep -qaF -f "$secrets" "$log"; then
		echo "FAIL $part: a test PIN appears in its output"
		failed=$((failed + 1))
	fi
done
if [ "$skipped" -eq 0 ]; then
	echo "kernel-check: $passed passed, $failed failed"
else
	echo "kernel-check: $passed passed, $failed failed, $skipped skipped"
fi
[ "$failed" -eq 0 ]
