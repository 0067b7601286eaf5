#!/bin/bash
# make check-valgrind: the unit tests and the integration scripts with
# build/vg/unit and build/vg/modsign under valgrind memcheck, through
# tests/valgrind/vg-exec. Fails when a test fails (a valgrind error makes
# the program exit 97, which the tests see) or when any report in
# build/vg/logs shows an error, a definite or indirect leak, or a crash.
# Usage: tests/valgrind/run.sh [SCRIPT-NAME...]   (default: all but EXCLUDE)
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD

# Scripts left out, none of which runs build/vg/modsign:
#   kill         runs the release ./modsign (what reaches the disk under
#                SIGKILL), with kill times taken from a timed run
#   build        checks the release ./modsign (linking, install, man page)
#   fuzz_corpus  builds and runs its own ASan+UBSan stdin drivers
#   signals      runs the release ./modsign under strace and signals (what
#                reaches the disk, and when)
# Scripts read MODSIGN_TEST_VALGRIND=1 to lengthen waits that valgrind's
# slowdown would break (file_cases.sh).
#   version, sbom  read the binary's ELF (NEEDED, static archives), which
#                the valgrind wrapper script is not
#   completion   bash completion reading --help: no memory to check
#   doc_links    checks Markdown links, runs no modsign
EXCLUDE="kill build fuzz_corpus signals version sbom completion doc_links"

if ! command -v valgrind >/dev/null; then
	echo "FAIL check-valgrind: valgrind is not installed (apt-get install valgrind)"
	exit 1
fi
for f in build/vg/modsign build/vg/unit; do
	if [ ! -x "$f" ]; then
		echo "FAIL check-valgrind: no $f (make check-valgrind builds it)"
		exit 1
	fi
done

logdir=$TOP/build/vg/logs
rm -rf "$logdir" && mkdir -p "$logdir" || exit 1
chmod 1777 "$logdir"	# modsign also runs as another user (setpriv) in tests
export MODSIGN_TEST_VALGRIND=1
# Memcheck runs one thread at a time: one script per core (47 min one at a
# time on CI's 2 cores, 2026-12-05).
export MODSIGN_TEST_JOBS=${MODSIGN_TEST_JOBS:-$(nproc)}
export MODSIGN_VG_LOGDIR=$logdir
export MODSIGN=$TOP/tests/valgrind/modsign
export MODSIGN_UNIT=${MODSIGN_UNIT:-"$TOP/tests/valgrind/vg-exec $TOP/build/vg/unit"}

if [ $# -gt 0 ]; then
	scripts=("$@")
else
	scripts=()
	for t in tests/integration/*.sh; do
		b=$(basename "$t" .sh)
		case " $EXCLUDE " in
		*" $b "*) continue ;;
		esac
		scripts+=("$b")
	done
fi
echo "== valgrind memcheck: unit, ${scripts[*]} (reports in build/vg/logs)"
tests/run.sh "${scripts[@]}"
tests_status=$?

# The reports. One per process: <test>.<program>.<pid>.log. A report with
# no ERROR SUMMARY is a process that ended in exec (the unit tests' system()
# children, before the shell runs) or was SIGKILLed; modsign does neither
# in these scripts, so only the unit tests may leave such reports.
reports=0 bad=0 open=0
for f in "$logdir"/*.log; do
	[ -e "$f" ] || continue
	reports=$((reports + 1))
	name=${f#"$logdir"/}
	errors=$(sed -n 's/^==[0-9]*== ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$f")
	crash=$(grep -m 1 'Process terminating with default action' "$f")
	# A run stopped by a signal ends by that signal (src/cli/exit.c:
	# ms_cli_exit_by_signal() raises it again, so that the shell sees
	# 128 + n): not a crash. Matched by function name, not file name.
	if [ -n "$crash" ] && grep -A 4 'Process terminating with default action' "$f" |
	    grep -q ': ms_cli_exit_by_signal ([a-z_]*\.c:'; then
		crash=""
	fi
	why=""
	if [ -z "$errors" ]; then
		case $name in
		unit.*) [ -z "$crash" ] && { open=$((open + 1)); continue; } ;;
		esac
		# A child that a process under valgrind forked and that then
		# exec'd another program (modsign agent starting its command)
		# ends its report there too: its parent has a report of its own.
		ppid=$(sed -n 's/^==[0-9]*== Parent PID: \([0-9]*\)$/\1/p' "$f")
		if [ -z "$crash" ] && [ -n "$ppid" ] && ls "$logdir"/*."$ppid".log >/dev/null 2>&1; then
			open=$((open + 1))
			continue
		fi
		why="no ERROR SUMMARY: killed or crashed"
	elif [ "$errors" -ne 0 ]; then
		why="$errors errors"
	fi
	[ -n "$crash" ] && why="${why:+$why; }crashed"
	[ -z "$why" ] && continue
	bad=$((bad + 1))
	echo "FAIL valgrind: build/vg/logs/$name: $why"
	[ "$bad" -le 5 ] || continue	# the details of the first five
	grep -m 1 '^==[0-9]*== Command:' "$f" | cut -c 1-300 | sed 's/^/    /'
	# The first error or leak record, up to 40 lines, from its heading.
	awk '/^==[0-9]+== [A-Z0-9]/ && !/(Memcheck|Copyright|Using Valgrind|Command:|Parent PID|HEAP SUMMARY|LEAK SUMMARY|ERROR SUMMARY|For lists|For counts|All heap)/ { on = 1 }
	     on && n < 40 { print "    " $0; n++ }
	     on && /^==[0-9]+== $/ { exit }' "$f"
done
echo "valgrind: $reports reports, $bad with errors, leaks or crashes" \
	"($open children ended in exec: the unit tests' and the agent's commands)"
[ "$tests_status" -eq 0 ] && [ "$bad" -eq 0 ]
