#!/bin/bash
# make bench's charts without a bench run: bench/plot.sh turns small data
# files (bars by category, lines over a number, a missing value) into SVG
# documents that parse as XML and name the machine and the date of the run,
# and refuses a file that does not say whose figures they are; and the
# report's chart writer (bench/charts.sh) turns timed runs into such a file,
# in milliseconds per module, leaving out what was not measured.
. "$(dirname "$0")/../lib/common.sh"
t_setup

if ! command -v gnuplot >/dev/null; then
	t_skip bench_plot "gnuplot is missing (scripts/install-deps.sh bench installs gnuplot-nox)"
	t_done
	exit
fi
if ! command -v python3 >/dev/null; then
	t_skip bench_plot "python3 is missing (scripts/install-deps.sh)"
	t_done
	exit
fi

# svg_ok SVG TEXT...: SVG is a well-formed <svg> document whose text holds
# every TEXT.
svg_ok() {
	python3 - "$@" <<'EOF'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
if root.tag != "{http://www.w3.org/2000/svg}svg":
    sys.exit("root element %s, not svg" % root.tag)
text = " ".join(t for t in root.itertext())
for want in sys.argv[2:]:
    if want not in text:
        sys.exit("no text %r in the SVG" % want)
EOF
}

machine="2 CPUs (Test CPU $$), kernel $(uname -r)"
date=$(date -u '+%Y-%m-%d %H:%M UTC')
t=$(printf '\t')
{
	printf '# chart: bars\n# title: Time per module by signer\n# machine: %s\n# date: %s\n' "$machine" "$date"
	printf '# xlabel: signer\n# ylabel: ms per module\n# log: y\n'
	echo "signer${t}PEM key${t}SoftHSM2"
	echo "sign-file loop${t}8.8${t}13.7"
	echo "sign-file -b${t}1.24${t}-"
	echo "modsign -b${t}1.09${t}0.91"
} > "$T/bars.tsv"
{
	printf '# chart: lines\n# title: Scaling with the module count\n# machine: %s\n# date: %s\n' "$machine" "$date"
	printf '# xlabel: modules\n# ylabel: seconds\n'
	echo "modules${t}modsign -b, PEM key"
	echo "100${t}0.15"
	echo "1000${t}1.3"
} > "$T/lines.tsv"

if "$TOP/bench/plot.sh" "$T/bars.tsv" "$T/lines.tsv" > "$T/plot.out" 2>&1; then
	t_pass "plot.sh draws both charts"
else
	t_fail "plot.sh draws both charts" "$(cat "$T/plot.out")"
fi
for c in bars lines; do
	if [ -f "$T/$c.svg" ] && svg_ok "$T/$c.svg" "$machine; $date" > "$T/svg.out" 2>&1; then
		t_pass "$c.svg is an SVG document naming the machine and the date"
	else
		t_fail "$c.svg is an SVG document naming the machine and the date" "$(cat "$T/svg.out" 2>/dev/null)"
	fi
done
t_check "bars.svg names its series and categories" svg_ok "$T/bars.svg" "PEM key" SoftHSM2 "sign-file -b"

# Whose figures are they: a file without the machine is refused, no SVG left.
grep -v '^# machine:' "$T/bars.tsv" > "$T/anon.tsv"
if "$TOP/bench/plot.sh" "$T/anon.tsv" > "$T/plot.out" 2>&1; then
	t_fail "a data file without the machine is refused" "plot.sh exited 0"
elif [ -e "$T/anon.svg" ] || [ -e "$T/anon.svg.tmp" ]; then
	t_fail "a data file without the machine is refused" "an SVG was left: $(ls "$T"/anon.svg*)"
elif grep -q 'machine' "$T/plot.out"; then
	t_pass "a data file without the machine is refused"
else
	t_fail "a data file without the machine is refused" "message: $(cat "$T/plot.out")"
fi

# The chart writer over a results file as bench/run.sh's measure() writes
# it (id, run, seconds, peak RSS, status, CPU seconds): the per-module chart
# holds each signer's median over its modules, in ms; what did not run (the
# HSM-like token, the Debian 13 peer) is no series.
mkdir -p "$T/run/log"
RES=$T/run/results.tsv
{
	printf 'a_sf_loop\t1\t0.80\t-\tok\t0.7\n'
	printf 'a_sf_loop\t2\t0.90\t-\tok\t0.7\n'
	printf 'a_sf_loop\t3\t1.00\t-\tok\t0.7\n'
	printf 'a_ms_def\t1\t0.12\t7000\tok\t0.2\n'
	printf 'b_sf_loop\t1\t1.50\t-\tok\t1.3\n'
	printf 'b_ms_def\t1\t0.10\t9000\tok\t0.2\n'
	printf 'b_ms_def\t2\t0.30\t9000\tfail\t0.2\n'
} > "$RES"
# A bash of its own, with bench/run.sh's options: a command that fails stops
# the report there (a subshell would not: "if" turns set -e off inside it).
chart_env() {
	TOP=$TOP T=$T RES=$RES date=$date LC_ALL=C bash -euo pipefail -c '
		# shellcheck disable=SC2034  # read by the sourced report.sh and charts.sh
		BENCH=$TOP/bench RUN=$T/run OUT=$T/out/BENCHMARKS.md QUICK=0 LOAD_BEFORE="0.1 0.2 0.3"
		SAMPLE_REAL_N=100 SLOW_SUBSET=10 AGENT_HSM_N=20 D_COUNTS="" FULL_N=4000 JOBS=""
		G_TOKENS="" Z_FMTS="" Z_N_REAL=0 P_N_REAL=""
		say() { echo "$*" >&2; }
		# shellcheck source=bench/report.sh
		. "$TOP/bench/report.sh"
		write_charts "$date"
		chart_refs'
}
if chart_env > "$T/refs.md" 2> "$T/charts.err"; then
	t_pass "write_charts runs on a small results file"
else
	t_fail "write_charts runs on a small results file" "$(cat "$T/charts.err")"
fi
pm=$T/out/bench/charts/per-module.tsv
# Medians: sign-file PEM 0.9 s, SoftHSM2 1.5 s; modsign -b 0.12 s and 0.10 s
# (the failed run left out); 100 modules.
want="sign-file loop${t}9${t}15
modsign -b${t}1.2${t}1"
got=$(grep -v '^#' "$pm" 2>/dev/null | sed 1d)
if [ "$got" = "$want" ]; then
	t_pass "per-module.tsv: ms per module from the medians, unmeasured rows left out"
else
	t_fail "per-module.tsv: ms per module from the medians, unmeasured rows left out" "got:" "$got" "want:" "$want"
fi
if grep -qx "signer${t}PEM key${t}SoftHSM2" "$pm" 2>/dev/null; then
	t_pass "per-module.tsv: only the measured series"
else
	t_fail "per-module.tsv: only the measured series" "$(cat "$pm" 2>/dev/null)"
fi
if [ -f "${pm%.tsv}.svg" ] && svg_ok "${pm%.tsv}.svg" "$(nproc) CPUs" "; $date" > "$T/svg.out" 2>&1; then
	t_pass "per-module.svg names this machine and the run's date"
else
	t_fail "per-module.svg names this machine and the run's date" "$(cat "$T/svg.out" 2>/dev/null)"
fi
if grep -qF '](bench/charts/per-module.svg)' "$T/refs.md" && ! grep -q 'modules.svg' "$T/refs.md"; then
	t_pass "the report shows the charts written, and only those"
else
	t_fail "the report shows the charts written, and only those" "$(cat "$T/refs.md")"
fi

t_done
