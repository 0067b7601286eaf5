#!/bin/bash
# Runs the unit tests and every integration script; each prints PASS/FAIL/
# SKIP lines and a closing "N passed, N failed, N skipped" line. A runner
# that crashes, omits that line, or prints more SKIP lines than it counts
# is a failure. Ends with the totals, "N passed, N failed, N skipped".
# Usage: tests/run.sh [SCRIPT-NAME...]   (only these integration scripts)
#
# No secret in any output: a script fails when a PIN or passphrase of
# tests/lib/common.sh (t_secrets) appears in its output, in the modsign
# output its run_ms and t_check calls collected, or in a file it left under
# its temp dir (common.sh keeps these in $MODSIGN_TEST_LOGDIR).
#
# Environment: MODSIGN (the binary the scripts test, default
# build/san/modsign), MODSIGN_UNIT (the unit test command, default
# build/san/unit; word-split, so a wrapper may precede it).
set -u
cd "$(dirname "$0")/.." || exit 1
passed=0
failed=0
skipped=0
log=$(mktemp)
logdir=$(mktemp -d /tmp/modsign-testlogs.XXXXXX)
export MODSIGN_TEST_LOGDIR=$logdir
secrets=$logdir/.secrets
bash -c '. tests/lib/common.sh && t_secrets' >"$secrets"
if [ "$(grep -c . "$secrets")" -lt 2 ]; then
	echo "FAIL run.sh: no secrets from tests/lib/common.sh t_secrets"
	failed=$((failed + 1))
fi
kept=""

# check_secrets NAME BASE: no secret in the script's output or logs. Shows
# where one is, with the secret masked.
check_secrets() {
	local name=$1 base=$2 hits
	hits=$( {
		grep -naF -f "$secrets" "$log" | sed 's/^/output:/'
		[ -e "$logdir/$base.modsign.log" ] &&
			grep -naF -f "$secrets" "$logdir/$base.modsign.log" | sed 's/^/modsign.log:/'
		[ -d "$logdir/$base.left" ] &&
			grep -rnaF -f "$secrets" "$logdir/$base.left" | sed "s|^$logdir/$base.left/|left in \$T/|"
	} | head -n 10)
	if [ -n "$hits" ]; then
		while IFS= read -r s; do
			hits=${hits//"$s"/<SECRET>}
		done <"$secrets"
		echo "FAIL $name: a PIN or passphrase appears in its output or files"
		printf '%s\n' "$hits" | cut -c 1-200 | sed 's/^/    /'
		failed=$((failed + 1))
		kept="$kept $base"
	fi
}

run_one() {
	name=$1
	shift
	"$@" >"$log" 2>&1
	status=$?
	cat "$log"
	line=$(grep -E '^([A-Za-z0-9_.-]+: )?[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" |
		tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $name: no closing 'N passed, N failed, N skipped' line (status $status)"
		failed=$((failed + 1))
		return
	fi
	p=$(echo "$line" | sed -E 's/^(.*[^0-9])?([0-9]+) passed.*/\2/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -E 's/.* ([0-9]+) skipped$/\1/')
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	# A skip must show in the totals: every SKIP line counted by its runner.
	if [ "$(grep -c '^SKIP ' "$log")" -ne "$s" ]; then
		echo "FAIL $name: $(grep -c '^SKIP ' "$log") SKIP lines, $s counted as skipped"
		failed=$((failed + 1))
	fi
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited with status $status"
		failed=$((failed + 1))
	fi
}

# MODSIGN_TEST_NAME names the test for wrappers (tests/valgrind/vg-exec).
export MODSIGN_TEST_NAME=unit
# MODSIGN_UNIT may be a wrapper and its binary (word-split); the registry
# tests among the unit tests see stock Debian's registry only.
# shellcheck disable=SC2086
run_one unit tests/lib/stock-registry "$logdir/stock-registry" ${MODSIGN_UNIT:-build/san/unit}
for t in tests/integration/*.sh; do
	base=$(basename "$t" .sh)
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$base"; then
		continue
	fi
	MODSIGN_TEST_NAME=$base
	run_one "$t" "$t"
	check_secrets "$t" "$base"
done
rm -f "$log"
if [ -n "$kept" ]; then
	echo "logs of$kept kept in $logdir"
else
	rm -rf "$logdir"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
