# shellcheck shell=bash
# Sourced by bench/report.sh: the data files of BENCHMARKS.md's charts, from
# the same results ($RES) as its tables, and their SVGs (bench/plot.sh).
# Every file is written into $CHARTS (bench/charts beside the report) as
# NAME.tsv, drawn as NAME.svg; each names the machine and the date of the
# run. A chart none of whose figures was measured in this run is not written.

# chart_val ID [N]: ID's median wall seconds, or milliseconds per module
# when N modules are given; "-" (plot.sh's missing value) when not measured.
chart_val() {
	local v
	has_runs "$1" || { echo -; return; }
	v=$(median_of "$1")
	[ -z "${2:-}" ] || v=$(calc "$v * 1000 / $2")
	case $v in
	n/a | "") echo - ;;
	*) printf '%.4g\n' "$v" ;;
	esac
}

# chart_write NAME KIND TITLE XLABEL YLABEL LOG: $CHARTS/NAME.tsv from the
# tab-separated rows in $CHARTS/rows (the header row first; a file, not a
# pipe: CHART_NAMES must outlive the call); series (columns) and rows with
# no figure are left out, and no file at all when nothing is left. Appends
# NAME to CHART_NAMES.
chart_write() {
	local name=$1 f=$CHARTS/$1.tsv
	{
		printf '# chart: %s\n# title: %s\n# machine: %s\n# date: %s\n' "$2" "$3" "$CHART_MACHINE" \
			"$CHART_DATE"
		printf '# xlabel: %s\n# ylabel: %s\n' "$4" "$5"
		[ -z "$6" ] || printf '# log: %s\n' "$6"
		awk -F '\t' -v OFS='\t' '
			{ n = NR; nf = NF; for (i = 1; i <= NF; i++) c[NR, i] = $i }
			END {
				for (i = 2; i <= nf; i++)
					for (r = 2; r <= n; r++) if (c[r, i] != "-") keep[i] = 1
				for (r = 1; r <= n; r++) {
					any = (r == 1)
					for (i = 2; i <= nf; i++) if (keep[i] && c[r, i] != "-") any = 1
					if (!any) continue
					line = c[r, 1]
					for (i = 2; i <= nf; i++) if (keep[i]) line = line OFS c[r, i]
					print line
				}
			}' "$CHARTS/rows"
	} > "$f.tmp"
	rm -f "$CHARTS/rows"
	# Only the header row: nothing measured.
	if [ "$(grep -vc '^#' "$f.tmp")" -lt 2 ] || ! awk -F '\t' '!/^#/ { n = NF } END { exit n < 2 }' "$f.tmp"; then
		rm -f "$f.tmp"
		return 0
	fi
	mv "$f.tmp" "$f"
	CHART_NAMES+=("$name")
}

# chart_per_module: milliseconds per module by signer and key, from (a), (b),
# (c), (f) and the Debian 13 peer (p).
chart_per_module() {
	local n=$SAMPLE_REAL_N t
	t=$(printf '\t')
	{
		echo "signer${t}PEM key${t}SoftHSM2${t}HSM-like token (slowtoken)${t}SoftHSM2 on Debian 13 (sign-file: pkcs11-provider)"
		echo "sign-file loop$t$(chart_val a_sf_loop "$n")$t$(chart_val b_sf_loop "$n")$t$(chart_val c_sf_subset "$SLOW_SUBSET")$t$(chart_val p_sf_loop "${P_N_REAL:-}")"
		echo "sign-file -b$t$(chart_val a_sfb "$n")$t$(chart_val b_sfb "$n")$t-$t-"
		echo "modsign -b$t$(chart_val a_ms_def "$n")$t$(chart_val b_ms_def "$n")$t$(chart_val c_ms_def "$n")$t$(chart_val p_ms_b "${P_N_REAL:-}")"
		echo "modsign loop$t$(chart_val a_ms_loop "$n")$t-$t$(chart_val f_hsm_direct "$SLOW_SUBSET")$t$(chart_val p_ms_loop "${P_N_REAL:-}")"
		echo "modsign loop, agent$t$(chart_val f_pem_agent "$n")$t$(chart_val f_soft_agent "$n")$t$(chart_val f_hsm_agent_loop "$AGENT_HSM_N")$t$(chart_val p_ms_agent "${P_N_REAL:-}")"
	} > "$CHARTS/rows"
	chart_write per-module bars "Time per module by signer and key (median wall time / modules)" \
		"loop: one process per module, as kbuild calls sign-file; -b: one process for all (sign-file -b: the seed's patch)" \
		"ms per module (log scale)" y
}

# chart_modules: modsign -b's wall time over module counts, from (d).
chart_modules() {
	local k t
	t=$(printf '\t')
	{
		echo "modules${t}modsign -b, PEM key${t}modsign -b, SoftHSM2 key"
		for k in $D_COUNTS; do
			echo "$k$t$(chart_val "d_n${k}_pem")$t$(chart_val "d_n${k}_tok")"
		done
		echo "$FULL_N$t$(chart_val d_ms_pem)$t$(chart_val d_ms_token)"
	} > "$CHARTS/rows"
	chart_write modules lines "Scaling with the module count (modules spread evenly over the full set)" \
		"modules (log scale)" "seconds (median, log scale)" xy
}

# chart_jobs: modsign -b's wall time over -j, from (a) and (b).
chart_jobs() {
	local k t
	t=$(printf '\t')
	{
		echo "-j${t}modsign -b, PEM key${t}modsign -b, SoftHSM2 key"
		for k in $JOBS; do
			echo "$k$t$(chart_val "a_ms_j$k")$t$(chart_val "b_ms_j$k")"
		done
	} > "$CHARTS/rows"
	chart_write jobs lines "Scaling with -j, $SAMPLE_REAL_N modules on $(nproc) CPUs" \
		"-j (parallel signers)" "seconds (median)" ""
}

# chart_tokens: modsign -b over several HSM-like tokens holding one key, from (g).
chart_tokens() {
	local k t
	t=$(printf '\t')
	{
		echo "tokens${t}modsign -b --key ... (measured)${t}floor (start-up, login, signatures shared out)"
		for k in $G_TOKENS; do
			echo "$k$t$(chart_val "g_ms_$k")$t$(has_runs "g_ms_$k" && printf '%.4g' "$(g_floor "$k")" || echo -)"
		done
	} > "$CHARTS/rows"
	chart_write tokens lines "Scaling with the number of HSM-like tokens, $SAMPLE_REAL_N modules" \
		"tokens holding the key" "seconds (median)" ""
}

# chart_compressed: compressed modules, modsign against recompressing alone, from (e).
chart_compressed() {
	local f t name
	t=$(printf '\t')
	{
		echo "format${t}modsign -r${t}recompressing alone (xargs -P 2)${t}modsign -d -r (no compression)${t}per module: decompress, sign-file, compress"
		for f in $Z_FMTS; do
			case $f in zst) name=zstd ;; gz) name=gzip ;; *) name=$f ;; esac
			echo "$name$t$(chart_val "e_ms_$f")$t$(chart_val "e_rz_$f")$t$(chart_val "e_ms_d_$f")$t$(chart_val "e_user_$f")"
		done
	} > "$CHARTS/rows"
	chart_write compressed bars "Compressed modules: modsign -r against recompressing alone, ${Z_N_REAL:-?} modules" \
		"" "seconds (median, log scale)" y
}

# write_charts DATE: every chart's data file, then the SVGs; CHART_NOTE says
# why there are none when plot.sh failed.
write_charts() {
	CHARTS=${BENCH_CHARTS:-$(dirname "$OUT")/bench/charts}
	CHART_NAMES=() CHART_NOTE=""
	CHART_DATE=$1
	# Not "$1$([ quick ] && printf ...)": under set -e that assignment's
	# status is the test's, and a full run stopped there without a word.
	[ "$QUICK" != 1 ] || CHART_DATE="$CHART_DATE (quick mode: smoke figures)"
	CHART_MACHINE="$(nproc) CPUs ($(awk -F ': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r), load $LOAD_BEFORE"
	mkdir -p "$CHARTS"
	# Charts of an earlier run would not match this run's tables.
	rm -f "$CHARTS"/*.tsv "$CHARTS"/*.svg
	chart_per_module
	chart_modules
	chart_jobs
	chart_tokens
	chart_compressed
	[ "${#CHART_NAMES[@]}" -gt 0 ] || return 0
	local name files=()
	for name in "${CHART_NAMES[@]}"; do
		files+=("$CHARTS/$name.tsv")
	done
	if ! "$BENCH/plot.sh" "${files[@]}" 2> "$RUN/log/plot"; then
		CHART_NOTE="the data files are in ${CHARTS#"$(dirname "$OUT")"/}, but bench/plot.sh failed: $(head -n 3 "$RUN/log/plot" | tr '\n' ' ')"
		say "charts: $CHART_NOTE"
	fi
}

# chart_refs: the Markdown of the charts section: each chart as an image,
# with its data file.
chart_refs() {
	local name rel
	[ "${#CHART_NAMES[@]}" -gt 0 ] || return 0
	rel=$(realpath -m --relative-to="$(dirname "$OUT")" "$CHARTS")
	printf '## Charts\n\n'
	printf 'Drawn by bench/plot.sh (gnuplot) from the figures of the tables below, same run; the data of each is the .tsv beside it.\n\n'
	if [ -n "$CHART_NOTE" ]; then
		printf 'NOT DRAWN: %s\n\n' "$CHART_NOTE"
	fi
	for name in "${CHART_NAMES[@]}"; do
		printf '![%s](%s/%s.svg) ([data](%s/%s.tsv))\n\n' "$(sed -n 's/^# title: //p' "$CHARTS/$name.tsv")" \
			"$rel" "$name" "$rel" "$name"
	done
}
