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
# build/san/unit; word-split, so a wrapper may precede it),
# MODSIGN_TEST_JOBS (how many scripts run at once, default 1; each script
# has its own temp dir, token and sockets, and its output is shown whole,
# in the usual order, when it and those before it have ended),
# MODSIGN_TEST_DEADLINE (seconds since the epoch: a script not started by
# then is not started, and counts as one SKIP saying so; for CI's time
# limit).
set -u
cd "$(dirname "$0")/.." || exit 1
passed=0
failed=0
skipped=0
logdir=$(mktemp -d /tmp/modsign-testlogs.XXXXXX)
export MODSIGN_TEST_LOGDIR=$logdir
secrets=$logdir/.secrets
bash -c '. tests/lib/common.sh && t_secrets' >"$secrets"
if [ "$(grep -c . "$secrets")" -lt 2 ]; then
	echo "FAIL run.sh: no secrets from tests/lib/common.sh t_secrets"
	failed=$((failed + 1))
fi
kept=""

# check_secrets NAME BASE OUT: no secret in the script's output (file OUT)
# or logs. Shows where one is, with the secret masked.
check_secrets() {
	local name=$1 base=$2 out=$3 hits
	hits=$( {
		grep -naF -f "$secrets" "$out" | sed 's/^/output:/'
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

# report NAME OUT STATUS: shows a finished script's output and counts its
# closing line.
report() {
	local name=$1 out=$2 status=$3 line p f s
	cat "$out"
	line=$(grep -E '^([A-Za-z0-9_.-]+: )?[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" |
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
	if [ "$(grep -c '^SKIP ' "$out")" -ne "$s" ]; then
		echo "FAIL $name: $(grep -c '^SKIP ' "$out") SKIP lines, $s counted as skipped"
		failed=$((failed + 1))
	fi
	if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited with status $status"
		failed=$((failed + 1))
	fi
}

# The runs: unit first, then the integration scripts asked for.
names=(unit)
for t in tests/integration/*.sh; do
	base=$(basename "$t" .sh)
	if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$base"; then
		continue
	fi
	names+=("$base")
done
outdir=$logdir/.out
mkdir -p "$outdir"

# start BASE: runs one in the background, its output and status in outdir.
# MODSIGN_TEST_NAME names the test for wrappers (tests/valgrind/vg-exec).
start() {
	local base=$1
	if [ -n "${MODSIGN_TEST_DEADLINE:-}" ] && [ "$(date +%s)" -ge "$MODSIGN_TEST_DEADLINE" ]; then
		{
			echo "SKIP $base: not started: MODSIGN_TEST_DEADLINE passed"
			echo "$base: 0 passed, 0 failed, 1 skipped"
		} >"$outdir/$base.out"
		echo 0 >"$outdir/$base.rc"
		return
	fi
	(
		export MODSIGN_TEST_NAME=$base
		if [ "$base" = unit ]; then
			# MODSIGN_UNIT may be a wrapper and its binary (word-split);
			# the registry tests among the unit tests see stock Debian's
			# registry only.
			# shellcheck disable=SC2086
			tests/lib/stock-registry "$logdir/stock-registry" \
				${MODSIGN_UNIT:-build/san/unit} >"$outdir/$base.out" 2>&1
		else
			"tests/integration/$base.sh" >"$outdir/$base.out" 2>&1
		fi
		echo $? >"$outdir/$base.rc.tmp" && mv "$outdir/$base.rc.tmp" "$outdir/$base.rc"
	) &
}

# flush: reports, in order, the finished runs no unfinished one precedes.
shown=0
flush() {
	local base name
	while [ "$shown" -lt "${#names[@]}" ]; do
		base=${names[$shown]}
		[ -e "$outdir/$base.rc" ] || return 0
		name=$base
		[ "$base" = unit ] || name=tests/integration/$base.sh
		report "$name" "$outdir/$base.out" "$(cat "$outdir/$base.rc")"
		[ "$base" = unit ] || check_secrets "$name" "$base" "$outdir/$base.out"
		rm -f "$outdir/$base.out"
		shown=$((shown + 1))
	done
}

jobs=${MODSIGN_TEST_JOBS:-1}
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac
for base in "${names[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
		flush
	done
	start "$base"
done
wait
flush
rm -rf "$outdir"
if [ -n "$kept" ]; then
	echo "logs of$kept kept in $logdir"
else
	rm -rf "$logdir"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
