# shellcheck shell=bash
# Sourced by bench/run.sh: turns $RES (one line per timed run: id, run,
# seconds, peak RSS KiB, ok|fail) into the table on stdout and BENCHMARKS.md,
# with its charts (bench/charts.sh).

# shellcheck source=bench/charts.sh
. "$BENCH/charts.sh"

# stat_get ID: sets S_N (good runs), S_MED, S_MIN, S_MAX (wall seconds),
# S_RSS (median peak RSS, KiB), S_RSSMAX, S_FAIL (failed runs), S_CPU (median
# CPU seconds, user + system). S_N=0: no figure.
stat_get() {
	read -r S_N S_MED S_MIN S_MAX S_RSS S_RSSMAX S_FAIL S_CPU < <(awk -F '\t' -v id="$1" '
		function median(a, n,   i, j, t) {
			for (i = 2; i <= n; i++)	# insertion sort: a handful of runs
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		$1 == id && $5 == "fail" { fail++ }
		$1 == id && $5 == "ok" {
			s[++n] = $3
			c[n] = $6
			if ($4 != "-") r[++nr] = $4
		}
		END {
			if (n == 0) { print 0, "n/a", "n/a", "n/a", "n/a", "n/a", fail + 0, "n/a"; exit }
			med = median(s, n); lo = s[1]; hi = s[n]
			rmed = "n/a"; rmax = "n/a"
			if (nr > 0) { rmed = median(r, nr); rmax = r[nr] }
			printf "%d %.3f %.3f %.3f %s %s %d %.3f\n", n, med, lo, hi, rmed, rmax, fail, median(c, n)
		}' "$RES")
}

# Missing figures are "n/a" throughout; every helper passes them on.
# calc EXPR: floating-point arithmetic.
calc() {
	case $1 in
	*n/a*) echo n/a ;;
	*) awk "BEGIN { printf \"%.6g\", $1 }" ;;
	esac
}

# fmt FORMAT VALUE: printf unless the value is missing.
# shellcheck disable=SC2059  # the format is the caller's constant
fmt() {
	case $2 in
	n/a | "") echo n/a ;;
	*) printf "$1" "$2" ;;
	esac
}

# median_of ID: median wall seconds.
median_of() {
	stat_get "$1"
	echo "$S_MED"
}

# cpu_of ID: median CPU seconds (user + system, all processes of the run).
cpu_of() {
	stat_get "$1"
	echo "$S_CPU"
}

# ratio A B: A / B with two decimals.
ratio() {
	case "$1 $2" in *n/a*) echo n/a; return ;; esac
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}

# own_ms ID: median of modsign's own "ms per module" summary over the runs.
own_ms() {
	local f v all=()
	for f in "$RUN"/log/"$1".*; do
		[ -f "$f" ] || continue
		v=$(sed -n 's/.*, \([0-9.]*\) ms per module.*/\1/p' "$f" | tail -n 1)
		[ -n "$v" ] && all+=("$v")
	done
	[ "${#all[@]}" -gt 0 ] || { echo n/a; return; }
	printf '%s\n' "${all[@]}" | sort -g |
		awk '{ a[NR] = $1 } END { printf "%.3f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# verify ID REF: how ID's modules compare with REF's for the paths both have.
verify() {
	local id=$1 ref=$2
	if [ ! -s "$RUN/md5.$id" ] || [ ! -s "$RUN/md5.$ref" ]; then
		echo "not checked"
		return
	fi
	awk 'NR == FNR { ref[$2] = $1; next }
		($2 in ref) { n++; if (ref[$2] == $1) same++ }
		END {
			if (n == 0) print "not checked"
			else if (same == n) printf "identical to %s (%d of %d)\n", "REF", same, n
			else printf "DIFFERS from %s in %d of %d\n", "REF", n - same, n
		}' "$RUN/md5.$ref" "$RUN/md5.$id" | sed "s/REF/$(label_of "$ref")/"
}

# The sign-file reference a module tree is compared with: the PEM loop when
# it ran (RSA signatures are deterministic: same key, same bytes).
ref_of() {
	local v
	for v in a_sf_loop b_sf_loop f_pem_sf_loop f_soft_sf_loop; do
		if [ -s "$RUN/md5.$v" ]; then echo "$v"; return; fi
	done
	echo b_sf_loop
}

label_of() {
	case $1 in
	a_sf_loop) echo "sign-file (PEM) loop" ;;
	a_sf_xargs) echo "sign-file (PEM), xargs -P 2" ;;
	a_ms_j1) echo "modsign -b -j 1" ;;
	a_ms_j2) echo "modsign -b -j 2" ;;
	a_ms_def) echo "modsign -b (default -j)" ;;
	a_ms_j[0-9]* | b_ms_j[0-9]*) echo "modsign -b -j ${1##*_j}" ;;
	a_ms_j1_nosync) echo "modsign -b -j 1, fsync disabled (eatmydata)" ;;
	a_ms_j1_d) echo "modsign -b -j 1 -d (.p7s only)" ;;
	a_ms_loop) echo "modsign loop, one process per module" ;;
	a_sfb) echo "sign-file -b (the seed's bulk patch)" ;;
	b_sf_loop) echo "sign-file (ENGINE, SoftHSM2) loop" ;;
	b_sf_xargs) echo "sign-file (ENGINE, SoftHSM2), xargs -P 2" ;;
	b_ms_j1) echo "modsign -b -j 1" ;;
	b_ms_j2) echo "modsign -b -j 2" ;;
	b_ms_def) echo "modsign -b (default -j)" ;;
	b_ms_def_nosync) echo "modsign -b, fsync disabled (eatmydata)" ;;
	b_sfb) echo "sign-file -b (ENGINE, SoftHSM2)" ;;
	c_ms_def) echo "modsign -b (default -j)" ;;
	c_sf_subset) echo "sign-file (ENGINE) loop, $SLOW_SUBSET modules" ;;
	d_ms_pem) echo "modsign -b, PEM key" ;;
	d_ms_token) echo "modsign -b, SoftHSM2 key" ;;
	d_n*_pem) d_k=${1#d_n}; echo "modsign -b, PEM key, ${d_k%_pem} modules" ;;
	d_n*_tok) d_k=${1#d_n}; echo "modsign -b, SoftHSM2 key, ${d_k%_tok} modules" ;;
	p_*) p_label "$1" ;;
	e_*) echo "$(z_label "$1") [${1##*_}]" ;;
	g_ms_1) echo "modsign -b, one HSM-like token" ;;
	g_ms_*) echo "modsign -b, ${1##*_} HSM-like tokens (--key)" ;;
	f_*) f_label "$1" ;;
	v_*) v_label "$1" ;;
	*) echo "$1" ;;
	esac
}

# verdict MEASURED OP LIMIT: PASS, FAIL, or "NOT MEASURED".
verdict() {
	if [ "$1" = n/a ]; then echo "NOT MEASURED"; return; fi
	awk -v m="$1" -v l="$3" -v op="$2" 'BEGIN {
		ok = (op == ">=") ? m >= l : (op == "<=") ? m <= l : (op == ">") ? m > l : m < l
		print ok ? "PASS" : "FAIL" }'
}

# variant_rows N VARIANT...: one Markdown row per variant; speed-ups against
# the section's sign-file loop and xargs runs (the first two variants).
variant_rows() {
	local n=$1 loop xargs v per out rss failed
	shift
	loop=$(median_of "$1")
	xargs=$(median_of "$2")
	for v in "$@"; do
		stat_get "$v"
		if [ "$S_N" -eq 0 ]; then
			printf '| %s | not measured (%s failed runs) | | | | | | |\n' "$(label_of "$v")" "$S_FAIL"
			continue
		fi
		per=$(calc "$S_MED * 1000 / $n")
		if [ "$v" = "$1" ]; then
			out="reference"
		elif [ -s "$RUN/p7s.$v" ] && [ "$(cat "$RUN/p7s.$v")" -gt 0 ]; then
			out="$(cat "$RUN/p7s.$v") .p7s written"
		else
			out=$(verify "$v" "$(ref_of)")
		fi
		failed=$(failed_calls "$v")
		if [ -n "$failed" ] && [ "$failed" != 0 ]; then
			out="$out; **$failed sign-file calls failed** (median of the runs)"
		fi
		rss=$(fmt '%.1f' "$(calc "$S_RSS / 1024")")
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(label_of "$v")" \
			"$S_MED" "$S_MIN" "$S_MAX" "$(fmt '%.3f' "$per")" \
			"$(ratio "$loop" "$S_MED")" "$(ratio "$xargs" "$S_MED")" \
			"$(fmt '%.3f' "$(calc "$S_CPU * 1000 / $n")")" "$rss" "$out"
	done
}

# plain_rows N LABEL_FN OUT_FN VARIANT...: one Markdown row per variant
# over N modules: LABEL_FN V, median, min, max s, ms/module, CPU ms/module,
# OUT_FN V (its output check).
plain_rows() {
	local n=$1 label=$2 outf=$3 v
	shift 3
	for v in "$@"; do
		stat_get "$v"
		if [ "$S_N" -eq 0 ]; then
			printf '| %s | not measured (%s failed runs) | | | | | |\n' "$("$label" "$v")" "$S_FAIL"
			continue
		fi
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$("$label" "$v")" "$S_MED" "$S_MIN" \
			"$S_MAX" "$(fmt '%.3f' "$(calc "$S_MED * 1000 / $n")")" \
			"$(fmt '%.3f' "$(calc "$S_CPU * 1000 / $n")")" "$("$outf" "$v")"
	done
}

TABLE_HEAD='| variant | median s | min s | max s | ms/module | speed-up vs loop | vs xargs -P 2 | CPU ms/module | peak RSS MiB | output check |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |'

# ---------------------------------------------------------------- targets
# Each sets T_<n>_MEASURED (a figure), T_<n>_TEXT (what it is), T_<n>.

compute_targets() {
	local loop def xargs j2 ms floor rss_a rss_b
	loop=$(median_of b_sf_loop)
	def=$(median_of b_ms_def)
	T1_VAL=$(ratio "$loop" "$def")
	T1=$(verdict "$T1_VAL" ">=" 15)
	T1_TEXT="${T1_VAL}x (sign-file loop $loop s, modsign -b $def s)"

	xargs=$(median_of a_sf_xargs)
	j2=$(median_of a_ms_j2)
	T2_VAL=$(ratio "$xargs" "$j2")
	T2=$(verdict "$T2_VAL" ">=" 1.5)
	T2_TEXT="${T2_VAL}x (xargs -P 2 sign-file $xargs s, modsign -b -j 2 $j2 s)"

	ms=$(median_of c_ms_def)
	floor=$(calc "($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SAMPLE_REAL_N * $SLOW_SIGN_MS) / 1000")
	SLOW_FLOOR=$floor
	T3_VAL=$(calc "($ms - $floor) * 100 / $floor")
	T3=$(verdict "$T3_VAL" "<=" 5)
	T3_TEXT="$(fmt '%+.2f' "$T3_VAL")% over the floor (modsign -b $ms s, floor $(fmt '%.1f' "$floor") s)"

	stat_get d_ms_pem
	rss_a=$S_RSSMAX
	stat_get d_ms_token
	rss_b=$S_RSSMAX
	T4_VAL=$(printf '%s\n%s\n' "$rss_a" "$rss_b" | { grep -v n/a || true; } | sort -n | tail -n 1)
	T4_VAL=$(calc "${T4_VAL:-n/a} / 1024")
	T4=$(verdict "$T4_VAL" "<" 64)
	T4_TEXT="$(fmt '%.1f' "$T4_VAL") MiB, highest of all runs (PEM key $(fmt '%.1f' "$(calc "$rss_a / 1024")") MiB, SoftHSM2 $(fmt '%.1f' "$(calc "$rss_b / 1024")") MiB)"

	# Targets T5, T6: a PEM key one process per module, and in bulk against the seed's -b.
	local pem_loop ms_loop sfb j1
	pem_loop=$(median_of a_sf_loop)
	ms_loop=$(median_of a_ms_loop)
	T5_VAL=$(ratio "$pem_loop" "$ms_loop")
	T5=$(verdict "$T5_VAL" ">=" 1)
	T5_TEXT="${T5_VAL}x (sign-file loop $pem_loop s, modsign loop $ms_loop s; CPU $(ratio "$(cpu_of a_sf_loop)" "$(cpu_of a_ms_loop)")x)"
	sfb=$(median_of a_sfb)
	j1=$(median_of a_ms_j1)
	j2=$(median_of a_ms_j2)
	T6_VAL=$(ratio "$sfb" "$j2")
	T6=$([ "$T6_VAL" = n/a ] && echo "NOT MEASURED" || echo "reported")
	T6_TEXT="sign-file -b / modsign -b -j 2 = ${T6_VAL}x, / modsign -b -j 1 = $(ratio "$sfb" "$j1")x (sign-file -b $sfb s on one core, modsign -j 2 $j2 s, -j 1 $j1 s; CPU sign-file -b / -j 1 = $(ratio "$(cpu_of a_sfb)" "$(cpu_of a_ms_j1)")x)"

	# Target T7: the key on SoftHSM2, bulk against the seed's -b (two cores'
	# CPU-bound limit is about 2.5).
	sfb=$(median_of b_sfb)
	def=$(median_of b_ms_def)
	T7_VAL=$(ratio "$sfb" "$def")
	T7=$(verdict "$T7_VAL" ">=" 2.3)
	T7_TEXT="${T7_VAL}x (sign-file -b $sfb s on one core, modsign -b $def s; CPU sign-file -b / modsign -b = $(ratio "$(cpu_of b_sfb)" "$(cpu_of b_ms_def)")x, / modsign -b -j 1 in wall time $(ratio "$sfb" "$(median_of b_ms_j1)")x)"
}

# slow_calls LOG: how many of each token call a slowtoken log shows, and the
# token's busy time (sum of the calls' service times, sleeps included).
slow_calls() {
	local f=$1
	[ -s "$f" ] || { echo "no call log"; return; }
	awk '{ n[$1]++; t = $3; sub(/ms$/, "", t); busy += t }
		END {
			split("C_Initialize C_OpenSession C_Login C_FindObjectsInit C_Sign C_Finalize", f, " ")
			for (i = 1; i <= 6; i++) printf "%s %d, ", f[i], n[f[i]]
			printf "%d calls in all; token busy %.1f s", NR, busy / 1000
		}' "$f"
}

# slow_timeline LOG WALL: where the wall time of a run through slowtoken went,
# from the call spans of its log: the token's busy time, the token idle
# between the first and the last C_Sign (what modsign did not hide), and
# the time outside the token's first and last calls (process start, exit).
slow_timeline() {
	[ -s "$1" ] || { echo "no call log"; return; }
	awk -v wall="$2" -v lat="$SLOW_SIGN_MS" '
		{
			split($0, a, "span=")
			split(a[2], sp, "[- ]")
			st = sp[1] + 0; en = sp[2] + 0
			if (NR == 1 || st < first) first = st
			if (en > last) last = en
			busy += en - st
			if ($1 == "C_Sign") {
				ns++; sbusy += en - st
				if (fs == 0 || st < fs) fs = st
				if (en > ls) ls = en
			}
			start[NR] = st; stop[NR] = en
		}
		END {
			for (i = 1; i <= NR; i++)
				if (start[i] >= fs && stop[i] <= ls) inside += stop[i] - start[i]
			idle = (ls - fs) - inside
			outside = wall * 1e6 - (last - first)
			printf "token busy %.2f s of %.2f s wall; each C_Sign took %.2f ms on average (%d ms latency + the real signature); ", busy / 1e6, wall, sbusy / ns / 1000, lat
			printf "no token call in progress between its first and last C_Sign for %.2f s in all (%.2f ms per module); ", idle / 1e6, idle / 1000 / (ns > 1 ? ns - 1 : 1)
			printf "outside the first and last token call %.2f s (process start-up, exit)", outside / 1e6
		}' "$1"
	printf '; %s' "$(sign_gaps "$1")"
}

# sign_gaps LOG: from each C_Sign's return to the next C_SignInit: the
# hand-off between one signature and the next, which a serialising token
# cannot overlap with anything.
sign_gaps() {
	awk '$1 == "C_Sign" || $1 == "C_SignInit" {
			split($0, a, "span="); split(a[2], sp, "[- ]"); print sp[1], sp[2], $1 }' "$1" |
		sort -n |
		awk '$3 == "C_SignInit" && prev != "" { print $1 - prev } $3 == "C_Sign" { prev = $2 }' |
		sort -n |
		awk '{ g[NR] = $1 }
			END {
				if (NR == 0) { print "no C_Sign pairs"; exit }
				p90 = int(NR * 0.9)
				if (p90 < 1) p90 = 1
				printf "from a C_Sign return to the next C_SignInit: median %.3f ms, 90th percentile %.3f ms, max %.3f ms", g[int((NR + 1) / 2)] / 1000, g[p90] / 1000, g[NR] / 1000
			}'
}

# first_run ID: seconds of the variant's first run.
first_run() {
	awk -F '\t' -v id="$1" '$1 == id && $2 == 1 { print $3; found = 1 } END { if (!found) print "n/a" }' "$RES"
}

# slow_over_busy: modsign's first slow-token run against the token's busy time.
slow_over_busy() {
	local wall busy
	wall=$(first_run c_ms_def)
	[ -s "$RUN/slowlog.c_ms_def" ] || { echo n/a; return; }
	busy=$(awk '{ split($0, a, "span="); split(a[2], sp, "[- ]"); b += sp[2] - sp[1] }
		END { printf "%.6f", b / 1e6 }' "$RUN/slowlog.c_ms_def")
	calc "($wall - $busy) * 100 / $busy"
}

# failed_calls ID: median count of failed sign-file calls over the runs,
# when the variant counts them ("" otherwise).
failed_calls() {
	local f all=()
	for f in "$RUN"/failed."$1".*; do
		[ -f "$f" ] && all+=("$(cat "$f")")
	done
	[ "${#all[@]}" -gt 0 ] || return 0
	printf '%s\n' "${all[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%s", a[int((NR + 1) / 2)] }'
}

# ---------------------------------------------------------------- report

# fs_journal_note: ", no journal" when $CACHE is on ext4 without one.
fs_journal_note() {
	if ext4_without_journal "$CACHE"; then
		printf ', no journal'
	fi
}

# shellcheck disable=SC2086  # $SECTION_x are lists of variants
write_report() {
	local date cpu fs kver nsample
	date=$(date -u '+%Y-%m-%d %H:%M UTC')
	cpu=$(awk -F ': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	fs=$(findmnt -n -o FSTYPE -T "$CACHE" 2>/dev/null || stat -f -c %T "$CACHE")
	kver=$(uname -r)
	nsample=$SAMPLE_REAL_N
	compute_targets
	write_charts "$date"
	{
	cat <<EOF
# modsign benchmarks

Written by \`make bench\` (\`bench/run.sh\`) on $date; regenerate, do not edit.
Each comparison runs its variants side by side, interleaved (A, B, C, A, B, C,
...), $REPS runs each in (a) and (b), $REPS_LONG in (c) and (d), every run on a fresh unsigned copy of the modules
restored (and synced) outside the timed section$( [ "$BENCH_SETTLE" != 0 ] && printf ', and started %s s after the previous one ended (the work directory is on ext4 without a journal, where files freed in the last ~30 s slow down every file created: see `restore` in bench/run.sh)' "$BENCH_SETTLE"). Times are wall-clock seconds,
medians with min and max. The keys are the TEST-ONLY keys of \`tests/data\`.

$( [ "$QUICK" = 1 ] && printf '%s' '**Quick mode (BENCH_QUICK=1): a few modules, one run each, no settling. Smoke figures that prove the sections and charts work; not benchmarks.**')

## Targets (issue 3)

| target | measured | result |
| --- | --- | --- |
| SoftHSM2 key, $nsample modules: \`modsign -b\` at least 15x faster than the sign-file loop | $T1_TEXT | **$T1** |
| PEM key, $nsample modules, both on two cores: \`modsign -b -j 2\` at least 1.5x faster than \`xargs -P 2\` sign-file | $T2_TEXT | **$T2** |
| HSM-like token: \`modsign -b\` wall time within 5% of the floor | $T3_TEXT | **$T3** |
| Full set ($FULL_N modules): peak RSS of \`modsign -b\` under 64 MiB | $T4_TEXT | **$T4** |
| PEM key, $nsample modules, one process per module (as kbuild calls sign-file): the modsign loop at least as fast as the sign-file loop (issue 18) | $T5_TEXT | **$T5** |
| PEM key, $nsample modules, bulk: \`modsign -b\` against the seed's \`sign-file -b\` (issue 18: reported) | $T6_TEXT | **$T6** |
| SoftHSM2 key, $nsample modules, bulk: the seed's \`sign-file -b\` / \`modsign -b\` at least 2.3 (issue 15) | $T7_TEXT | **$T7** |

The first target sets the sign-file loop as kbuild runs it (one call per
module, one after the other) against \`modsign -b\` at its default \`-j\`;
the second sets both on two cores. Each is a ratio of medians of wall time.

## Machine and versions

- $(nproc) CPUs ($cpu, SHA extensions: $(grep -qw sha_ni /proc/cpuinfo && echo "yes, so modsign hashes SHA-256 with them" || echo "no, so modsign hashes with mbedTLS")), $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, kernel $kver; work directory on $fs$(fs_journal_note) (\`$CACHE\`)
- load average before / after: $LOAD_BEFORE / $LOAD_AFTER (the machine is shared); whole bench $BENCH_SECS s
- $("$MODSIGN" --version 2>&1 | head -n 1) (\`$MODSIGN\`)
- sign-file (PEM): \`$SIGNFILE\` from $(dpkg -S "$SIGNFILE" 2>/dev/null | cut -d: -f1) $(pkgver "$(dpkg -S "$SIGNFILE" 2>/dev/null | cut -d: -f1)")
- sign-file (token): \`scripts/sign-file.c\` of linux-source-6.1 $SIGNFILE_SRC_VER built with its OpenSSL ENGINE branch, libengine-pkcs11-openssl $(pkgver libengine-pkcs11-openssl) (libp11)
- sign-file -b (bulk): the same \`scripts/sign-file.c\` with \`bench/sign-file-bulk-6.1.patch\` (the seed's patch 1/2, made to apply to 6.1), built against OpenSSL 3 like Debian's for the PEM key, and with its ENGINE branch (libp11, as above) for the key on SoftHSM2
- SoftHSM2 $(pkgver softhsm2), $(openssl version 2>/dev/null | cut -d' ' -f1-2) (libssl3 $(pkgver libssl3)), mbedTLS $(pkgver libmbedtls-dev), p11-kit $(pkgver libp11-kit0)
- corpus: $CORPUS_PKG $CORPUS_VER, $FULL_N modules, $(calc "$FULL_BYTES / 1000000") MB uncompressed; sample: $nsample modules, $(calc "$SAMPLE_BYTES / 1000000") MB (entry floor(i x $FULL_N / $nsample) of the sorted list, i = 0..$((nsample - 1)))
- HSM-like token: \`build/slowtoken.so\` over SoftHSM2 with SLOWTOKEN_INIT_MS=$SLOW_INIT_MS SLOWTOKEN_LOGIN_MS=$SLOW_LOGIN_MS SLOWTOKEN_SIGN_MS=$SLOW_SIGN_MS SLOWTOKEN_SERIAL=1

"speed-up" is the sign-file run's median wall time divided by the variant's.
"CPU" is user + system time of every process of the run (median), which a
busy shared machine disturbs less than the wall clock. "output check" compares
every module the variant signed with the sign-file (PEM) loop's result for the
same module, byte for byte.

EOF
	chart_refs
	if has_runs a_sf_loop; then
		cat <<EOF
## (a) PEM key, $nsample modules

$TABLE_HEAD
$(variant_rows "$nsample" $SECTION_A)

- one core each: sign-file loop / \`modsign -b -j 1\` = $(ratio "$(median_of a_sf_loop)" "$(median_of a_ms_j1)")x in wall time
- two cores each: \`xargs -P 2\` sign-file / \`modsign -b -j 2\` = $(ratio "$(median_of a_sf_xargs)" "$(median_of a_ms_j2)")x in wall time
- CPU time (user + system of all processes), sign-file loop / \`modsign -b -j 1\` = $(ratio "$(cpu_of a_sf_loop)" "$(cpu_of a_ms_j1)")x, \`xargs -P 2\` / \`modsign -b -j 2\` = $(ratio "$(cpu_of a_sf_xargs)" "$(cpu_of a_ms_j2)")x
- modsign's own summary, ms per module (median): -j 1 $(own_ms a_ms_j1), -j 2 $(own_ms a_ms_j2), -j 1 without fsync $(own_ms a_ms_j1_nosync), -j 1 -d $(own_ms a_ms_j1_d)
- one process per module, as kbuild and DKMS call sign-file: sign-file loop / modsign loop = $(ratio "$(median_of a_sf_loop)" "$(median_of a_ms_loop)")x in wall time, $(ratio "$(cpu_of a_sf_loop)" "$(cpu_of a_ms_loop)")x in CPU time
- bulk against the seed's \`sign-file -b\` (one process, one core): sign-file -b / \`modsign -b -j 1\` = $(ratio "$(median_of a_sfb)" "$(median_of a_ms_j1)")x, / \`modsign -b -j 2\` = $(ratio "$(median_of a_sfb)" "$(median_of a_ms_j2)")x in wall time

EOF
		where_time_goes
	fi
	if has_runs b_sf_loop; then
		cat <<EOF
## (b) The same key on SoftHSM2, $nsample modules

$TABLE_HEAD
$(variant_rows "$nsample" $SECTION_B)

- one core each: sign-file loop / \`modsign -b -j 1\` = $(ratio "$(median_of b_sf_loop)" "$(median_of b_ms_j1)")x in wall time
- two cores each: \`xargs -P 2\` sign-file / \`modsign -b -j 2\` = $(ratio "$(median_of b_sf_xargs)" "$(median_of b_ms_j2)")x in wall time
- CPU time, sign-file loop / \`modsign -b\` (default) = $(ratio "$(cpu_of b_sf_loop)" "$(cpu_of b_ms_def)")x, loop / \`-j 1\` = $(ratio "$(cpu_of b_sf_loop)" "$(cpu_of b_ms_j1)")x
- modsign's own summary, ms per module (median): -j 1 $(own_ms b_ms_j1), -j 2 $(own_ms b_ms_j2), default $(own_ms b_ms_def)
- bulk against the seed's \`sign-file -b\` (ENGINE, one process, one login, one core): sign-file -b / \`modsign -b\` (default) = $(ratio "$(median_of b_sfb)" "$(median_of b_ms_def)")x, / \`-j 1\` = $(ratio "$(median_of b_sfb)" "$(median_of b_ms_j1)")x in wall time; CPU sign-file -b / \`modsign -b\` = $(ratio "$(cpu_of b_sfb)" "$(cpu_of b_ms_def)")x
- what durability costs (issue 15: the most group commit could save): \`modsign -b\` with every fsync a no-op (eatmydata) / with them = $(ratio "$(median_of b_ms_def_nosync)" "$(median_of b_ms_def)")x in wall time, $(ratio "$(cpu_of b_ms_def_nosync)" "$(cpu_of b_ms_def)")x in CPU time (CPU: without fsync the kernel's flusher threads write the data later, outside the run's accounting)
- libp11 takes the PIN from KBUILD_SIGN_PIN (used here, as kbuild passes it) and equally from \`pin-value=\` in the URI.
$(xargs_note)

EOF
	fi
	if [ "$SLOW_MISSING" = 1 ]; then
		printf '## (c) HSM-like token\n\nNOT MEASURED: %s was missing.\n\n' "$SLOWTOKEN"
	elif has_runs c_ms_def || has_runs c_sf_subset; then
		slow_section
	fi
	if has_runs d_ms_pem || has_runs d_ms_token; then
		full_section
	fi
	if peer_has_runs; then
		peer_section
	fi
	if has_runs e_ms_xz || has_runs e_ms_zst || has_runs e_ms_gz; then
		compressed_section
	fi
	if agent_has_runs; then
		agent_section
	fi
	if has_runs g_ms_1; then
		tokens_section
	fi
	case " $SECTIONS " in
	*" t "*) tokens_real_section ;;
	esac
	digest_section
	case " $SECTIONS " in
	*" v "*) verify_section ;;
	esac
	notes_section
	commands_section
	raw_section
	} > "$OUT.tmp"
	mv "$OUT.tmp" "$OUT"
	print_summary
	say "wrote $OUT"
}

# xargs_note: why sign-file calls fail under xargs -P 2 on SoftHSM2, when they did.
xargs_note() {
	local failed
	failed=$(failed_calls b_sf_xargs)
	[ -n "$failed" ] && [ "$failed" != 0 ] || return 0
	printf -- '- %s\n' "\`xargs -P 2\` sign-file on SoftHSM2: $failed of $SAMPLE_REAL_N calls failed (median) with \"No matching initialized token\" or \"Failed to enumerate slots\": SoftHSM2 rewrites the token's \`token.object\` and \`generation\` files at each login, and a second process reading them meanwhile finds no token. kbuild's \`make -j2 modules_install\` would stop there. The failed calls are shorter than good ones, so this time flatters sign-file; modsign's sessions share one process and do not race."
}

has_runs() {
	grep -q "^$1	" "$RES"
}

where_time_goes() {
	local j1 j2 ns d n=$SAMPLE_REAL_N
	j1=$(median_of a_ms_j1)
	j2=$(median_of a_ms_j2)
	ns=$(median_of a_ms_j1_nosync)
	d=$(median_of a_ms_j1_d)
	cat <<EOF
### Where modsign's time goes (PEM key, $n modules, one signer)

| | wall ms per module | CPU ms per module |
| --- | ---: | ---: |
| \`modsign -b -j 1\`, whole run | $(fmt '%.3f' "$(calc "$j1 * 1000 / $n")") | $(fmt '%.3f' "$(calc "$(cpu_of a_ms_j1) * 1000 / $n")") |
| the same with fsync disabled (eatmydata) | $(fmt '%.3f' "$(calc "$ns * 1000 / $n")") | $(fmt '%.3f' "$(calc "$(cpu_of a_ms_j1_nosync) * 1000 / $n")") |
| so fsync costs (difference) | $(fmt '%.3f' "$(calc "($j1 - $ns) * 1000 / $n")") | $(fmt '%.3f' "$(calc "($(cpu_of a_ms_j1) - $(cpu_of a_ms_j1_nosync)) * 1000 / $n")") |
| \`-d\`: the module is read and hashed but not rewritten; a .p7s is written instead (new file, fsync, rename, directory fsync, as for a module) | $(fmt '%.3f' "$(calc "$d * 1000 / $n")") | $(fmt '%.3f' "$(calc "$(cpu_of a_ms_j1_d) * 1000 / $n")") |
| so rewriting the module instead of writing a 0.4 KB .p7s costs (difference) | $(fmt '%.3f' "$(calc "($j1 - $d) * 1000 / $n")") | $(fmt '%.3f' "$(calc "($(cpu_of a_ms_j1) - $(cpu_of a_ms_j1_d)) * 1000 / $n")") |
| \`-j 2\` speed-up over \`-j 1\` (wall) | $(ratio "$j1" "$j2")x | |

EOF
}

slow_section() {
	local ms sf per extra floor_sf n=$SAMPLE_REAL_N
	ms=$(median_of c_ms_def)
	sf=$(median_of c_sf_subset)
	per=$(calc "$sf / $SLOW_SUBSET")
	extra=$(calc "$per * $n")
	floor_sf=$(calc "$n * ($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SLOW_SIGN_MS) / 1000")
	stat_get c_ms_def
	cat <<EOF
## (c) HSM-like token (slowtoken: ${SLOW_INIT_MS} ms start-up, ${SLOW_LOGIN_MS} ms login, ${SLOW_SIGN_MS} ms per signature, serialised), $n modules

| variant | median s | min s | max s | floor s | over the floor | output check |
| --- | ---: | ---: | ---: | ---: | ---: | --- |
| \`modsign -b\` (default -j), $n modules | $S_MED | $S_MIN | $S_MAX | $(fmt '%.1f' "$SLOW_FLOOR") | $(fmt '%+.2f' "$T3_VAL")% | $(verify c_ms_def "$(ref_of)") |
EOF
	stat_get c_sf_subset
	cat <<EOF
| sign-file (ENGINE) loop, $SLOW_SUBSET modules, measured | $S_MED | $S_MIN | $S_MAX | $(fmt '%.2f' "$(calc "$SLOW_SUBSET * ($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SLOW_SIGN_MS) / 1000")") | $(fmt '%+.2f' "$(calc "($sf - $SLOW_SUBSET * ($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SLOW_SIGN_MS) / 1000) * 100 / ($SLOW_SUBSET * ($SLOW_INIT_MS + $SLOW_LOGIN_MS + $SLOW_SIGN_MS) / 1000)")")% | $(verify c_sf_subset "$(ref_of)") |
| sign-file (ENGINE) loop, $n modules, **extrapolated** ($SLOW_SUBSET-module median / $SLOW_SUBSET x $n) | $(fmt '%.1f' "$extra") | | | $(fmt '%.1f' "$floor_sf") | $(fmt '%+.2f' "$(calc "($extra - $floor_sf) * 100 / $floor_sf")")% | |

- floors: modsign ${SLOW_INIT_MS} ms + ${SLOW_LOGIN_MS} ms + $n x ${SLOW_SIGN_MS} ms; sign-file $n x (${SLOW_INIT_MS} + ${SLOW_LOGIN_MS} + ${SLOW_SIGN_MS}) ms, each call paying the start-up and the login
- extrapolated sign-file loop / \`modsign -b\` = $(ratio "$extra" "$ms")x ($(fmt '%.1f' "$(calc "$extra / 60")") min against $(fmt '%.1f' "$ms") s)
- token calls in the first run (slowtoken log): modsign, $n modules: $(slow_calls "$RUN/slowlog.c_ms_def"); sign-file, $SLOW_SUBSET modules: $(slow_calls "$RUN/slowlog.c_sf_subset")
- modsign's first run, from the token's log: $(slow_timeline "$RUN/slowlog.c_ms_def" "$(first_run c_ms_def)")
- over the token's own busy time (the floor plus what SoftHSM2 behind the shim and the sleeps' overshoot add): $(fmt '%+.2f' "$(slow_over_busy)")% for modsign's first run. slowtoken makes each C_Sign last SLOWTOKEN_SIGN_MS in all (SoftHSM2's own work included), so the token's busy time exceeds the floor only by the calls around the signatures and the sleeps' overshoot; the target is computed against the floor.

EOF
}

full_section() {
	local v n=$FULL_N
	cat <<EOF
## (d) Full module set, $n modules ($(calc "$FULL_BYTES / 1000000") MB)

| variant | median s | min s | max s | ms/module | CPU ms/module | peak RSS MiB, median | highest | output check |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
EOF
	for v in d_ms_pem d_ms_token; do
		stat_get "$v"
		if [ "$S_N" -eq 0 ]; then
			printf '| %s | not measured | | | | | | | |\n' "$(label_of "$v")"
			continue
		fi
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(label_of "$v")" "$S_MED" "$S_MIN" \
			"$S_MAX" "$(fmt '%.3f' "$(calc "$S_MED * 1000 / $n")")" \
			"$(fmt '%.3f' "$(calc "$S_CPU * 1000 / $n")")" \
			"$(fmt '%.1f' "$(calc "$S_RSS / 1024")")" "$(fmt '%.1f' "$(calc "$S_RSSMAX / 1024")")" \
			"$(verify "$v" "$(ref_of)"); $(verify "$v" d_ms_pem | sed 's/^identical to .*(/same as the PEM run (/')"
	done
	stat_get a_ms_j2
	local rss802=$S_RSS
	stat_get b_ms_def
	cat <<EOF

- peak RSS on the $SAMPLE_REAL_N-module sample, for comparison: PEM key -j 2 $(fmt '%.1f' "$(calc "$rss802 / 1024")") MiB, SoftHSM2 default $(fmt '%.1f' "$(calc "$S_RSS / 1024")") MiB
- modsign's own summary, ms per module (median): PEM $(own_ms d_ms_pem), SoftHSM2 $(own_ms d_ms_token)

EOF
	count_rows
}

# count_rows: (d)'s scaling runs, when they ran: the same variants on fewer
# modules spread over the full set, for the module count chart.
count_rows() {
	local k
	has_runs "d_n${D_COUNTS%% *}_pem" || has_runs "d_n${D_COUNTS%% *}_tok" || return 0
	cat <<EOF
Scaling with the module count: the same runs on $(echo "$D_COUNTS" | sed 's/ /, /g') modules spread over the full set (as the sample is), $REPS_LONG interleaved runs each.

| modules | PEM key, median s | ms/module | SoftHSM2 key, median s | ms/module | output check (SoftHSM2) |
| ---: | ---: | ---: | ---: | ---: | --- |
EOF
	for k in $D_COUNTS; do
		printf '| %s | %s | %s | %s | %s | %s |\n' "$k" "$(median_of "d_n${k}_pem")" \
			"$(fmt '%.3f' "$(calc "$(median_of "d_n${k}_pem") * 1000 / $k")")" \
			"$(median_of "d_n${k}_tok")" \
			"$(fmt '%.3f' "$(calc "$(median_of "d_n${k}_tok") * 1000 / $k")")" \
			"$(verify "d_n${k}_tok" "d_n${k}_pem" | sed 's/^identical to .*(/same as the PEM run (/')"
	done
	printf '\n'
}

# digest_section: bench/digest.sh's table, when section (h) ran.
digest_section() {
	[ -s "$RUN/digest.md" ] || return 0
	printf '## (h) Digests: nettle against what it replaced

'
	printf 'bench/digest.sh over every tenth module of the full set, in memory, one thread;
'
	printf 'old / new above 1 means nettle is faster.

'
	cat "$RUN/digest.md"
	printf '
'
}

# notes_section: bench/notes.md as it is (design measurements the code cites).
notes_section() {
	[ -f "$BENCH/notes.md" ] || return 0
	cat "$BENCH/notes.md"
	printf '\n'
}

# shellcheck disable=SC2016  # backquotes for Markdown, not for the shell
commands_section() {
	local v
	printf '## Commands\n\n'
	printf 'Run: `make bench` (or `bench/run.sh`; knobs BENCH_REPS, BENCH_REPS_LONG, BENCH_SAMPLE, BENCH_SLOW_SUBSET, BENCH_SECTIONS, BENCH_JOBS, BENCH_D_COUNTS, BENCH_G_TOKENS, BENCH_T_N, BENCH_P_N, BENCH_QUICK, MODSIGN_BENCH_CACHE; see bench/run.sh). `list` holds the absolute paths of the work copy, one a line.\n\n'
	for v in $SECTION_A $SECTION_B $SECTION_C $SECTION_D $SECTION_E $SECTION_F $SECTION_G $SECTION_V $SECTION_P; do
		has_runs "$v" || continue
		printf -- '- %s: `%s`\n' "$v" "${CMDTEXT[$v]}"
	done
	printf '\n'
}

raw_section() {
	printf '## Every run (seconds, in order)\n\n'
	awk -F '\t' '{ t[$1] = t[$1] (t[$1] == "" ? "" : ", ") $3 ($5 == "fail" ? " (failed)" : "")
		if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
		END { for (i = 1; i <= n; i++) printf "- %s: %s\n", order[i], t[order[i]] }' "$RES"
}

# print_summary: the plain-text table on stdout.
print_summary() {
	local v
	printf '\n%-16s %-44s %9s %9s %9s %9s %10s\n' id variant median min max CPU RSS_KiB
	for v in $SECTION_A $SECTION_B $SECTION_C $SECTION_D $SECTION_E $SECTION_F $SECTION_G $SECTION_V $SECTION_P; do
		has_runs "$v" || continue
		stat_get "$v"
		printf '%-16s %-44s %9s %9s %9s %9s %10s\n' "$v" "$(label_of "$v")" "$S_MED" "$S_MIN" "$S_MAX" \
			"$S_CPU" "$S_RSSMAX"
	done
	printf '\nTargets:\n'
	printf '  %-12s SoftHSM2 key, modsign -b >= 15x the sign-file loop: %s\n' "$T1" "$T1_TEXT"
	printf '  %-12s PEM key, two cores, modsign -b -j 2 >= 1.5x xargs -P 2: %s\n' "$T2" "$T2_TEXT"
	printf '  %-12s HSM-like token, within 5%% of the floor: %s\n' "$T3" "$T3_TEXT"
	printf '  %-12s full set, peak RSS < 64 MiB: %s\n' "$T4" "$T4_TEXT"
	printf '  %-12s PEM key, one process per module, modsign loop >= sign-file loop: %s\n' "$T5" "$T5_TEXT"
	printf '  %-12s PEM key, bulk against the seed'"'"'s sign-file -b: %s\n' "$T6" "$T6_TEXT"
	printf '  %-12s SoftHSM2 key, seed'"'"'s sign-file -b / modsign -b >= 2.3: %s\n' "$T7" "$T7_TEXT"
	agent_summary
	g_targets
	v_summary
}
