#!/bin/bash
# Mutation check: each tests/mutants/NAME.patch is a small, plausible bug in
# a guarantee of doc/guarantees.md, to show the tests can fail. For each mutant this copies
# the working tree into a scratch directory, applies the patch, builds, runs
# the tests the patch names ("# scripts:"), and reports
#     KILLED NAME: SCRIPT failed N checks      (a test saw the bug)
#     SURVIVED NAME                            (no named test saw it)
#     ERROR NAME: ...                          (patch does not apply, no build)
# A survivor or an error fails the run (exit 1). Not part of `make check`.
#
# Usage: tests/mutants/run.sh [options] [NAME...]
#   NAME...          only these mutants (a gap mutant runs when named)
#   --list           list the mutants and what each breaks, run nothing
#   --all-scripts    run every script a mutant names, not only up to the first kill
#   --no-baseline    skip running the named scripts on the unmutated copy first
#   --with-gaps      include the "# gap:" mutants, known to survive (README)
#   --keep           keep the scratch directory (its path is printed)
#   --timeout S      limit each script run to S seconds (default: the patch's
#                    "# timeout:", else 900)
#
# The working tree is copied once (git ls-files -co --exclude-standard, so no
# build/), built once (make build/san/modsign build/san/unit modsign
# build/slowtoken.so), and the baseline run checks that every named script
# passes unmutated (a script failing there would make any kill meaningless).
# Each mutant then gets a copy of that tree, build/ included, so only the
# patched file is recompiled. Scripts run through the copy's tests/run.sh, so
# its secret check counts too; TOP, MODSIGN and the rest follow from the
# copy's own location. Everything runs under nice -n 10, one mutant at a time.
# Patch header lines: "# scripts: a b" (integration script names, "unit", or
# "powercut": tests/powercut/run.sh, POWERCUT_CUTS (default 5) cuts on ext4
# with noauto_da_alloc and on xfs, each stopped at its first failed cut),
# "# timeout: S" (per script, default 900), "# gap: why" (skipped unless named
# or --with-gaps). KILL_TEST_KILLS defaults to 10 here (kill.sh's SIGKILL
# rounds; its SIGTERM/SIGINT checks are unchanged).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$(cd "$HERE/../.." && pwd)
export KILL_TEST_KILLS=${KILL_TEST_KILLS:-10}
unset MODSIGN MODSIGN_UNIT MODSIGN_TEST_LOGDIR

list=0 all_scripts=0 baseline=1 gaps=0 keep=0 timeout=""
names=()
while [ $# -gt 0 ]; do
	a=$1
	shift
	case $a in
	--timeout)
		timeout=${1:-}
		case $timeout in
		'' | *[!0-9]*) echo "run.sh: --timeout needs a number of seconds" >&2; exit 2 ;;
		esac
		shift
		;;
	--list) list=1 ;;
	--all-scripts) all_scripts=1 ;;
	--no-baseline) baseline=0 ;;
	--with-gaps) gaps=1 ;;
	--keep) keep=1 ;;
	-h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option $a" >&2; exit 2 ;;
	*) names+=("$a") ;;
	esac
done

# field PATCH KEY: the value of "# KEY: value" in the patch header.
field() {
	sed -n "s/^# $2: //p" "$1" | head -n 1
}

mutants=()
if [ ${#names[@]} -gt 0 ]; then
	for n in "${names[@]}"; do
		if [ ! -f "$HERE/$n.patch" ]; then
			echo "run.sh: no mutant $n ($HERE/$n.patch)" >&2
			exit 2
		fi
		mutants+=("$n")
	done
else
	for p in "$HERE"/*.patch; do
		n=$(basename "$p" .patch)
		if [ -n "$(field "$p" gap)" ] && [ "$gaps" -eq 0 ]; then
			continue
		fi
		mutants+=("$n")
	done
fi

if [ "$list" -eq 1 ]; then
	for n in "${mutants[@]}"; do
		p=$HERE/$n.patch
		printf '%-28s %s\n%-28s   tests: %s%s\n' "$n" "$(field "$p" breaks)" "" \
			"$(field "$p" scripts)" "$([ -n "$(field "$p" gap)" ] && echo " (gap: $(field "$p" gap))")"
	done
	exit 0
fi

start=$(date +%s)
W=$(mktemp -d /tmp/modsign-mutants.XXXXXX)
# file_cases.sh runs modsign as nobody from the copy: it must be reachable.
chmod 755 "$W"
cleanup() {
	if [ "$keep" -eq 1 ]; then
		echo "scratch kept in $W"
	else
		rm -rf "$W"
	fi
}
trap cleanup EXIT

build() {
	nice -n 10 make -s -j2 -C "$1" build/san/modsign build/san/unit modsign build/slowtoken.so \
		>"$1.build.log" 2>&1
}

# run_script DIR SCRIPT TIMEOUT LOG: runs one test through DIR/tests/run.sh;
# sets $verdict to "pass", or to why it failed.
run_script() {
	local dir=$1 s=$2 to=$3 log=$4 rc line f
	if [ "$s" = unit ]; then
		# An argument that names no integration script: the unit tests only.
		(cd "$dir" && nice -n 10 timeout -k 10 "$to" tests/run.sh -unit-only-) >"$log" 2>&1
	elif [ "$s" = powercut ]; then
		# make powercut-check on the copy's release build, shortened: the
		# file systems that do not hide a missing fsync, each stopped at its
		# first failed cut (tests/powercut/README.md).
		(cd "$dir" && POWERCUT_STOP=1 POWERCUT_CUTS=${POWERCUT_CUTS:-5} \
			POWERCUT_FS=${POWERCUT_FS:-ext4-noauto xfs} \
			nice -n 10 timeout -k 10 "$to" tests/powercut/run.sh) >"$log" 2>&1
	else
		(cd "$dir" && MODSIGN_UNIT='echo unit: 0 passed, 0 failed, 0 skipped' \
			nice -n 10 timeout -k 10 "$to" tests/run.sh "$s") >"$log" 2>&1
	fi
	rc=$?
	line=$(grep -E '^(powercut: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -n 1)
	f=$(echo "$line" | sed -nE 's/^(powercut: )?[0-9]+ passed, ([0-9]+) failed(, [0-9]+ skipped)?$/\2/p')
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		verdict="did not finish within $to s"
	elif [ -z "$f" ]; then
		verdict="ended without a summary (status $rc)"
	elif [ "$f" -gt 0 ]; then
		verdict="failed $f check$([ "$f" -eq 1 ] || echo s)"
	elif [ "$rc" -ne 0 ]; then
		verdict="exited with status $rc"
	else
		verdict=pass
	fi
}

script_name() {
	case $1 in
	unit) echo "unit tests" ;;
	powercut) echo "powercut-check" ;;
	*) echo "$1.sh" ;;
	esac
}

first_fail() {
	grep -m 1 '^FAIL' "$1" | cut -c 1-160
}

echo "mutants: ${#mutants[@]} ($(printf '%s ' "${mutants[@]}"))"
echo "scratch: $W"
git -C "$SRC" ls-files -co --exclude-standard -z |
	(cd "$SRC" && tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
	(mkdir "$W/base" && tar -xf - -C "$W/base")
if ! build "$W/base"; then
	echo "ERROR: the unmutated copy does not build:"
	tail -n 20 "$W/base.build.log"
	exit 1
fi
echo "base build: $(( $(date +%s) - start )) s"

if [ "$baseline" -eq 1 ]; then
	needed=$(for n in "${mutants[@]}"; do field "$HERE/$n.patch" scripts | tr ' ' '\n'; done |
		grep . | sort -u)
	bad=0
	for s in $needed; do
		t0=$(date +%s)
		run_script "$W/base" "$s" 900 "$W/baseline.$s.log"
		echo "baseline $(script_name "$s"): $verdict ($(( $(date +%s) - t0 )) s)"
		if [ "$verdict" != pass ]; then
			first_fail "$W/baseline.$s.log" | sed 's/^/    /'
			bad=1
		fi
	done
	if [ "$bad" -ne 0 ]; then
		keep=1
		echo "ERROR: a named script fails without any mutant; fix that first"
		exit 1
	fi
fi

killed=0 survived=0 errors=0
for n in "${mutants[@]}"; do
	p=$HERE/$n.patch
	M=$W/m-$n
	t0=$(date +%s)
	to=${timeout:-$(field "$p" timeout)}
	to=${to:-900}
	cp -a "$W/base" "$M"
	if ! patch -d "$M" -p1 -s -f --no-backup-if-mismatch <"$p" >"$M.patch.log" 2>&1; then
		echo "ERROR $n: the patch does not apply (the code moved?)"
		sed 's/^/    /' "$M.patch.log" | head -n 5
		errors=$((errors + 1))
		[ "$keep" -eq 1 ] || rm -rf "$M"
		continue
	fi
	if ! build "$M"; then
		echo "ERROR $n: does not build"
		grep -m 3 'error' "$M.build.log" | sed 's/^/    /'
		errors=$((errors + 1))
		[ "$keep" -eq 1 ] || rm -rf "$M"
		continue
	fi
	kills="" dead=0
	for s in $(field "$p" scripts); do
		run_script "$M" "$s" "$to" "$M.$s.log"
		if [ "$verdict" = pass ]; then
			[ "$all_scripts" -eq 1 ] && kills="$kills; $(script_name "$s") passed"
			continue
		fi
		dead=1
		kills="$kills; $(script_name "$s") $verdict"
		why=$(first_fail "$M.$s.log")
		[ -n "$why" ] && kills="$kills [first: ${why#FAIL }]"
		[ "$all_scripts" -eq 1 ] || break
	done
	secs=$(( $(date +%s) - t0 ))
	if [ "$dead" -eq 1 ]; then
		echo "KILLED $n: ${kills#; } (${secs} s)"
		killed=$((killed + 1))
	else
		echo "SURVIVED $n: $(field "$p" scripts | sed 's/ /, /g') all passed (${secs} s)"
		survived=$((survived + 1))
	fi
	[ "$keep" -eq 1 ] || rm -rf "$M"
done

echo "mutants: $killed killed, $survived survived, $errors errors, of ${#mutants[@]};" \
	"$(( $(date +%s) - start )) s, $(date '+%F %T')"
[ "$survived" -eq 0 ] && [ "$errors" -eq 0 ]
