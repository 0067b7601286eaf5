#!/bin/bash
# Runs the unit tests and every integration script; each prints PASS/FAIL
# lines and a closing "N passed, N failed" line. A runner that crashes or
# omits that line counts as a failure. Ends with the total.
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
log=$(mktemp)

run_one() {
	name=$1
	shift
	"$@" >"$log" 2>&1
	status=$?
	cat "$log"
	line=$(grep -E '^([A-Za-z0-9_.-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $name: no closing 'N passed, N failed' line (status $status)"
		failed=$((failed + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^(.*[^0-9])?([0-9]+) passed.*/\2/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited with status $status"
		failed=$((failed + 1))
	fi
}

run_one unit build/san/unit
for t in tests/integration/*.sh; do
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$(basename "$t" .sh)"; then
		continue
	fi
	run_one "$t" "$t"
done
rm -f "$log"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
