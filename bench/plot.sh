#!/bin/bash
# Draws one SVG chart per data file with gnuplot, for `make bench` (called by
# bench/report.sh with the files it wrote in the same run) or by hand.
# Usage: bench/plot.sh FILE.tsv...   writes FILE.svg beside each FILE.tsv
#
# A data file is tab-separated: "# key: value" lines first, then a header row
# (the x label or category column, then one column per series) and one row per
# x value or category; "-" is a missing value (no bar, no point).
#   # chart: bars | lines   clustered bars by category, or lines over a
#                           numeric first column
#   # title: ...            the chart's title
#   # machine: ...          the machine the figures come from  } both on every
#   # date: ...             when they were measured            } chart, under the title
#   # xlabel: ..., # ylabel: ...
#   # log: x | y | xy       logarithmic axes (optional)
# Exits 1 when gnuplot is missing or a file is not such a data file.
set -euo pipefail
export LC_ALL=C

die() { printf 'plot: %s\n' "$*" >&2; exit 1; }

command -v gnuplot >/dev/null || die "gnuplot is missing (scripts/install-deps.sh bench: gnuplot-nox)"
[ $# -gt 0 ] || die "usage: bench/plot.sh FILE.tsv..."

# meta FILE KEY: the value of the file's "# KEY: value" line, empty without one.
meta() {
	sed -n "s/^# $2: //p" "$1" | head -n 1
}

# gp_str TEXT: TEXT as a gnuplot double-quoted string (backslash and quote escaped).
gp_str() {
	local s=${1//\\/\\\\}
	printf '"%s"' "${s//\"/\\\"}"
}

# plot_one FILE: FILE's chart into FILE.svg (through a temporary file, so
# that a failed run leaves no half chart).
plot_one() {
	local f=$1 out=${1%.tsv}.svg kind title machine date xl yl log ncol rows
	kind=$(meta "$f" chart)
	title=$(meta "$f" title)
	machine=$(meta "$f" machine)
	date=$(meta "$f" date)
	xl=$(meta "$f" xlabel)
	yl=$(meta "$f" ylabel)
	log=$(meta "$f" log)
	case $kind in
	bars | lines) ;;
	*) die "$f: no '# chart: bars' or '# chart: lines' line" ;;
	esac
	[ -n "$title" ] && [ -n "$machine" ] && [ -n "$date" ] ||
		die "$f: the title, machine and date lines are required"
	ncol=$(awk -F '\t' '!/^#/ { print NF; exit }' "$f")
	rows=$(awk -F '\t' '!/^#/ { n++ } END { print n - 1 }' "$f")
	[ "${ncol:-0}" -ge 2 ] && [ "$rows" -ge 1 ] || die "$f: no header row and data rows"
	{
		echo 'set terminal svg size 960,560 dynamic noenhanced font "sans,12" background rgb "white"'
		echo "set output $(gp_str "$out.tmp")"
		# Two lines: the chart, then whose figures (gnuplot reads \n in "").
		echo "set title $(gp_str "$title" | sed 's/"$//')\\n$(gp_str "$machine; $date" | sed 's/^"//')"
		echo "set xlabel $(gp_str "$xl")"
		echo "set ylabel $(gp_str "$yl")"
		echo 'set datafile separator "\t"'
		echo 'set datafile missing "-"'
		# Below the plot: the plot takes the width, the title stays centred on it.
		echo 'set key below'
		echo 'set grid ytics'
		echo 'set border 3'
		echo 'set tics nomirror'
		case $log in
		*x*) echo 'set logscale x' ;;
		esac
		case $log in
		*y*) echo 'set logscale y' ;;
		*) echo 'set yrange [0:*]' ;;
		esac
		if [ "$kind" = bars ]; then
			echo 'set style data histograms'
			echo 'set style histogram clustered gap 1'
			echo 'set style fill solid 0.85 border -1'
			echo 'set boxwidth 0.9'
			echo 'set xtics scale 0'
			echo "plot for [i=2:$ncol] $(gp_str "$f") using i:xtic(1) title columnheader(i)"
		else
			# A tick at each measured x, labelled with it.
			echo 'set offsets graph 0.04, graph 0.04, graph 0.05, 0'
			echo "plot for [i=2:$ncol] $(gp_str "$f") using 1:i:xtic(1) with linespoints lw 2 pt 7 title columnheader(i)"
		fi
	} > "$out.gp"
	if ! gnuplot "$out.gp" 2> "$out.err"; then
		rm -f "$out.tmp"
		die "$f: gnuplot failed: $(head -n 5 "$out.err")"
	fi
	rm -f "$out.gp" "$out.err"
	mv "$out.tmp" "$out"
}

for f in "$@"; do
	plot_one "$f"
done
