#!/bin/bash
# Runs libFuzzer targets one at a time (the Makefile's `fuzz` target):
#   tests/fuzz/run.sh SECONDS TARGET...
# Each build/fuzz/fuzz_TARGET runs for SECONDS on a working corpus
# (build/fuzz/corpus/TARGET, new inputs land there) seeded from
# tests/fuzz/corpus/TARGET; its log is build/fuzz/logs/TARGET.log and a
# crashing input goes to build/fuzz/crashes/TARGET-crash-<sha1>. Prints one
# line per target with the coverage reached; exits 1 if any target failed.
set -u
cd "$(dirname "$0")/../.."
secs=${1:?usage: run.sh SECONDS TARGET...}
shift
F=build/fuzz
mkdir -p $F/crashes $F/logs $F/tmp
# Temp files of the targets (fuzz_tmp_file), here rather than in /tmp if a crash leaves one.
export TMPDIR=$PWD/$F/tmp
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
for t in "$@"; do
	bin=$F/fuzz_$t
	work=$F/corpus/$t
	log=$F/logs/$t.log
	mkdir -p "$work"
	dict=()
	if [ -f "tests/fuzz/$t.dict" ]; then
		dict=(-dict="tests/fuzz/$t.dict")
	fi
	"$bin" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$F/crashes/$t-" "${dict[@]}" "$work" "tests/fuzz/corpus/$t" \
		>"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	cov=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 |
		sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [0-9]+\/[0-9]+[a-zA-Z]*).*/\1/')
	if [ "$rc" -eq 0 ]; then
		echo "PASS fuzz_$t: ${secs}s, ${runs:-?} runs, ${cov:-no coverage line}"
	else
		failed=$((failed + 1))
		echo "FAIL fuzz_$t: exit $rc after ${runs:-?} runs, ${cov:-no coverage line} (log: $log)"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: |.*runtime error|artifact_prefix|Test unit written)' \
			"$log" | head -n 8 | sed 's/^/    /'
	fi
done
echo "fuzz: $(($# - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
