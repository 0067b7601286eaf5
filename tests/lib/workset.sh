# Helpers for tests that sign copies of $T/src in $T/w and judge each module
# against $T/ref (the same modules signed beforehand): sourced after
# common.sh, with $LOG the slow token's call log.

# fresh: a new unsigned work copy, no call log.
fresh() {
	rm -rf "$T/w" "$LOG" && cp -a "$T/src" "$T/w"
}

# count_state: $signed and $orig over $T/w; $broken lists the others.
count_state() {
	signed=0 orig=0 broken=""
	for m in "$T"/w/*.ko; do
		b=$(basename "$m")
		if same "$m" "$T/ref/$b"; then signed=$((signed + 1))
		elif same "$m" "$T/src/$b"; then orig=$((orig + 1))
		else broken="$broken $b"; fi
	done
}

# n_calls FUNC: how many FUNC calls the call log shows.
n_calls() {
	local n
	n=$(grep -c "^$1 " "$LOG" 2>/dev/null)	# nothing while the log is not there yet
	echo "${n:-0}"
}
