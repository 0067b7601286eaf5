# shellcheck shell=bash disable=SC2034  # its globals are read by run.sh and report.sh
# Sourced by bench/run.sh, and by bench/peer_trixie.sh inside the Debian 13
# chroot: how a variant is timed. Needs CACHE, WORK, RUN, RES and CMDTEXT
# set, and setup.sh's say and ext4_without_journal.

# restore PRISTINE: a fresh unsigned copy in $WORK, flushed to disk so that
# the timed run neither pays nor is helped by the copy's write-back. The
# previous copy is moved aside, not deleted: deleting hundreds of files just
# before a timed run makes every file the run creates slower (ext4 without a
# journal, as here, skips inodes freed in the last ~30 s one by one at each
# creation; perf showed up to a quarter of modsign's CPU in find_inode_bit),
# which would charge the bench's clean-up, or the previous run's renames, to
# whichever tool runs next. So on such a file system each timed run also
# starts SETTLE seconds after the last one ended (settle). The copies are
# deleted between sections (empty_trash), or early if the disk runs low.
TRASH=$CACHE/trash
LAST_END=0
if [ -z "${BENCH_SETTLE:-}" ]; then
	BENCH_SETTLE=0
	if ext4_without_journal "$CACHE"; then
		BENCH_SETTLE=31
	fi
fi

# settle: wait until BENCH_SETTLE seconds have passed since the last timed
# run ended (or the trash was emptied).
settle() {
	local left
	left=$(awk -v now="$EPOCHREALTIME" -v last="$LAST_END" -v s="$BENCH_SETTLE" \
		'BEGIN { l = last + s - now; printf "%.1f", (l > 0 ? l : 0) }')
	if [ "$left" != 0.0 ]; then
		sleep "$left"
	fi
}
restore() {
	local need
	need=$(du -sk "$1" | cut -f1)
	mkdir -p "$TRASH"
	if [ -e "$WORK" ]; then
		mv "$WORK" "$TRASH/$EPOCHREALTIME"
	fi
	if [ "$(df -Pk "$CACHE" | awk 'NR == 2 { print $4 }')" -lt $((need * 4)) ]; then
		empty_trash
	fi
	cp -a "$1" "$WORK"
	sync
}

# empty_trash: deletes the copies moved aside; the next timed run settles.
empty_trash() {
	if [ -d "$TRASH" ] && [ -n "$(ls -A "$TRASH")" ]; then
		rm -rf "$TRASH"
		sync
		LAST_END=$EPOCHREALTIME
	fi
}

# abs_list RELLIST: the list with $WORK/ in front of each entry.
abs_list() {
	sed "s|^|$WORK/|" "$1"
}

# cpu_seconds TIMESFILE: user + system seconds of the waited-for children,
# from the second line of the `times` builtin ("0m1.234s 0m0.567s").
cpu_seconds() {
	awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1"
}

# measure ID REP CMD...: times CMD, appends "ID REP wall-seconds
# peak-RSS-KiB status CPU-seconds" to $RES. Peak RSS comes from /usr/bin/time
# when the command wrote $RUN/rss (the modsign cases do); CPU time (user +
# system of every process the variant ran) from the shell's own accounting,
# which a busy shared machine disturbs far less than the wall clock.
measure() {
	local id=$1 rep=$2 log t0 t1 secs cpu rss=- status=ok
	shift 2
	log=$RUN/log/$id.$rep
	MEASURE_TAG=$id.$rep	# for variants that leave notes about their run
	rm -f "$RUN/rss"
	settle
	# `times` is a builtin: redirected, it still reports this shell's children.
	times > "$RUN/times0"
	t0=$EPOCHREALTIME
	if ! "$@" >"$log" 2>&1; then
		status=fail
	fi
	t1=$EPOCHREALTIME
	LAST_END=$t1
	times > "$RUN/times1"
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	cpu=$(awk -v a="$(cpu_seconds "$RUN/times0")" -v b="$(cpu_seconds "$RUN/times1")" \
		'BEGIN { printf "%.3f", b - a }')
	if [ -s "$RUN/rss" ]; then
		rss=$(tail -n 1 "$RUN/rss")
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$id" "$rep" "$secs" "$rss" "$status" "$cpu" >> "$RES"
	if [ "$status" = fail ]; then
		MEASURE_FAILED=1
		say "FAILED: $id (run $rep): ${CMDTEXT[$id]}"
		sed 's/^/    /' "$log" | tail -n 15 >&2
	fi
	printf '  %-14s run %s: %8.3f s, CPU %8.3f s%s\n' "$id" "$rep" "$secs" "$cpu" \
		"$([ "$rss" = - ] || printf ', max RSS %s KiB' "$rss")" >&2
}

# fingerprint ID RELLIST: md5 of every module of the list as left in $WORK,
# one "md5  path" line each, to compare the variants' outputs afterwards;
# and how many .p7s files the run wrote (-d writes only those).
fingerprint() {
	(cd "$WORK" && xargs -d '\n' md5sum) < "$2" > "$RUN/md5.$1"
	find "$WORK" -name '*.p7s' | wc -l > "$RUN/p7s.$1"
}

# compare_runs N PRISTINE RELLIST VARIANT...: N rounds, each running every
# variant once on a fresh copy, in turn (A, B, C, A, B, C, ...), so that a
# slow spell of the shared machine hits all variants alike. After each
# variant's first run, its outputs are fingerprinted, and FIRST_RUN_HOOK, when
# set, is called as FIRST_RUN_HOOK VARIANT RELLIST (untimed, $WORK as left).
# COMPARE_REVERSE=1 runs the even rounds in reverse order (A, B, C, C, B, A,
# ...), so that of two variants next to each other each runs first as often.
compare_runs() {
	local reps=$1 pristine=$2 rel=$3 rep v order
	shift 3
	LIST=$RUN/list.abs
	abs_list "$rel" > "$LIST"
	for rep in $(seq 1 "$reps"); do
		order=("$@")
		if [ "${COMPARE_REVERSE:-0}" = 1 ] && [ $((rep % 2)) = 0 ]; then
			order=()
			for v in "$@"; do
				order=("$v" "${order[@]}")
			done
		fi
		for v in "${order[@]}"; do
			restore "$pristine"
			measure "$v" "$rep" "$v"
			if [ "$rep" = 1 ]; then
				fingerprint "$v" "$rel"
				[ -z "${FIRST_RUN_HOOK:-}" ] || "$FIRST_RUN_HOOK" "$v" "$rel"
			fi
		done
	done
}

# each_module CMD...: CMD MODULE for every module of $LIST, one process each, in turn.
each_module() {
	local m
	while IFS= read -r m; do
		"$@" "$m" || return 1
	done < "$LIST"
}

# ms ARGS...: modsign in bulk mode under /usr/bin/time for its peak RSS.
ms() {
	/usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -b "$@"
}
