#!/bin/bash
# modsign's benchmark, called by `make bench` after ./modsign and
# build/slowtoken.so are built. Not a test: it measures modsign -b against the
# kernel's sign-file called once per module (as kbuild does), prints a table
# and writes BENCHMARKS.md with the issue's targets marked PASS or FAIL. It
# exits 0 whenever it could measure, whatever the figures; 1 when it could not.
#
# Knobs (environment):
#   MODSIGN_BENCH_CACHE  cache of downloads, corpus and builds (default
#                        /var/cache/modsign-bench; survives between runs)
#   BENCH_REPS           runs of each variant of (a), (b) and (v), interleaved
#                        (default 5: a few seconds each, and the machine is
#                        shared, so the median needs them)
#   BENCH_REPS_LONG      runs of each variant of (c) and (d) (default 3)
#   BENCH_SAMPLE         modules in the "product build" sample (default 802)
#   BENCH_SLOW_SUBSET    modules in the per-module sign-file run through the
#                        slow token, extrapolated (default 10)
#   BENCH_SECTIONS       which comparisons to run (default "a b c d e f g h t v";
#                        f: the agent, bench/agent.sh; g: several HSM-like
#                        tokens holding one key, bench/tokens.sh; h: the
#                        digest microbenchmark, bench/digest.sh; t: the real
#                        tokens beside SoftHSM2, bench/tokens_real.sh; v: what
#                        verifying every signature costs, modsign against
#                        a build without the check, bench/verify.sh)
#   BENCH_Z_FMTS, BENCH_Z_N  section (e): formats, modules (bench/compressed.sh)
#   BENCH_AGENT_HSM_N, BENCH_AGENT_HSM_P  section (f), the agent's HSM-like
#                        run: modules (default 200) and processes at a time
#                        (default 4) (bench/agent.sh)
#   BENCH_OUT            report file (default BENCHMARKS.md at the top)
#   BENCH_NO_UPDATE=1    skip apt-get update
#   BENCH_SETTLE         seconds between timed runs (default 31 on ext4
#                        without a journal, else 0; see restore)
#   BENCH_KEEP=1         keep the run directory (logs, raw results)
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$TOP/bench
REPS=${BENCH_REPS:-5}
REPS_LONG=${BENCH_REPS_LONG:-3}
SAMPLE_N=${BENCH_SAMPLE:-802}
SLOW_SUBSET=${BENCH_SLOW_SUBSET:-10}
SECTIONS=${BENCH_SECTIONS:-"a b c d e f g h t v"}
OUT=${BENCH_OUT:-$TOP/BENCHMARKS.md}

MODSIGN=$TOP/modsign
SLOWTOKEN=$TOP/build/slowtoken.so
SIGNFILE=
# shellcheck source=tests/lib/signfile.sh
. "$TOP/tests/lib/signfile.sh"
SOFTHSM=/usr/lib/softhsm/libsofthsm2.so
KEY=$TOP/tests/data/rsa2048.key.pem	# TEST-ONLY key
CERT=$TOP/tests/data/rsa2048.x509.der
PIN=1234
TOKEN_URI_BASE='pkcs11:token=modsign-test;object=rsa2048;type=private'
TOKEN_URI="$TOKEN_URI_BASE?module-path=$SOFTHSM"
SLOW_URI="$TOKEN_URI_BASE?module-path=$SLOWTOKEN"
# The HSM-like token: scaled-down figures of the seed's SmartCard-HSM.
SLOW_INIT_MS=3000
SLOW_LOGIN_MS=300
SLOW_SIGN_MS=50

# shellcheck source=bench/setup.sh
. "$BENCH/setup.sh"
# shellcheck source=bench/report.sh
. "$BENCH/report.sh"

# The cache must be writable; a user without /var/cache rights gets one at home.
CACHE=${MODSIGN_BENCH_CACHE:-/var/cache/modsign-bench}
if ! mkdir -p "$CACHE" 2>/dev/null || [ ! -w "$CACHE" ]; then
	CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/modsign-bench
	mkdir -p "$CACHE"
fi
# Work copies live next to the pristine corpus: same disk, cp -a stays cheap.
WORK=$CACHE/work
RUN=$(mktemp -d "${TMPDIR:-/tmp}/modsign-bench.XXXXXX")
RES=$RUN/results.tsv
# BENCH_KEEP=1 keeps the run's logs and results (for debugging the bench).
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	trap 'rm -rf "$WORK" "$CACHE/trash"; say "kept $RUN"' EXIT
else
	trap 'rm -rf "$RUN" "$WORK" "$CACHE/trash"' EXIT
fi
mkdir -p "$RUN/log"
: > "$RES"
MEASURE_FAILED=0

# ---------------------------------------------------------------- running

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

# ms ARGS...: modsign in bulk mode under /usr/bin/time for its peak RSS.
ms() {
	/usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -b "$@"
}

# ---------------------------------------------------------------- the variants
# Each is a function over $LIST (absolute paths in $WORK); CMDTEXT says what
# it runs, for the report.
declare -A CMDTEXT

# (a) PEM key
# shellcheck disable=SC2016  # the loop as text, not to expand
CMDTEXT[a_sf_loop]='for m in $(cat list); do sign-file sha256 rsa2048.key.pem rsa2048.x509.der $m; done'
# each_module CMD...: CMD MODULE for every module of $LIST, one process each, in turn.
each_module() {
	local m
	while IFS= read -r m; do
		"$@" "$m" || return 1
	done < "$LIST"
}
a_sf_loop() { each_module "$SIGNFILE" sha256 "$KEY" "$CERT"; }
CMDTEXT[a_sf_xargs]='xargs -P 2 -n 1 sign-file sha256 rsa2048.key.pem rsa2048.x509.der < list'
a_sf_xargs() {
	xargs -d '\n' -P 2 -n 1 -a "$LIST" "$SIGNFILE" sha256 "$KEY" "$CERT"
}
CMDTEXT[a_ms_j1]='modsign -b -j 1 --files-from list sha256 rsa2048.key.pem rsa2048.x509.der'
a_ms_j1() { ms -j 1 --files-from "$LIST" sha256 "$KEY" "$CERT"; }
CMDTEXT[a_ms_j2]='modsign -b -j 2 --files-from list sha256 rsa2048.key.pem rsa2048.x509.der'
a_ms_j2() { ms -j 2 --files-from "$LIST" sha256 "$KEY" "$CERT"; }
# Where the time goes: without fsync (eatmydata turns fsync and friends
# into no-ops) and without rewriting the module (-d writes only the .p7s).
CMDTEXT[a_ms_j1_nosync]='eatmydata modsign -b -j 1 --files-from list sha256 rsa2048.key.pem rsa2048.x509.der'
a_ms_j1_nosync() { eatmydata /usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -b -j 1 --files-from "$LIST" sha256 "$KEY" "$CERT"; }
CMDTEXT[a_ms_j1_d]='modsign -b -d -j 1 --files-from list sha256 rsa2048.key.pem rsa2048.x509.der'
a_ms_j1_d() { ms -d -j 1 --files-from "$LIST" sha256 "$KEY" "$CERT"; }
# modsign as kbuild and DKMS call sign-file: one process per module, in turn
# (target: at least as fast as the sign-file loop).
# shellcheck disable=SC2016
CMDTEXT[a_ms_loop]='for m in $(cat list); do modsign sha256 rsa2048.key.pem rsa2048.x509.der $m; done'
a_ms_loop() { each_module "$MODSIGN" sha256 "$KEY" "$CERT"; }
# The seed's bulk sign-file (bench/sign-file-bulk-6.1.patch): one process,
# key read once, modules signed one after the other on one core.
CMDTEXT[a_sfb]='sign-file -b sha256 rsa2048.key.pem rsa2048.x509.der $(cat list)   (the seed'"'"'s patch 1/2)'
a_sfb() {
	local mods
	mapfile -t mods < "$LIST"
	"$SIGNFILE_BULK" -b sha256 "$KEY" "$CERT" "${mods[@]}"
}

# (b) the same key on SoftHSM2; sign-file is the ENGINE build, libp11 finds
# the module in PKCS11_MODULE_PATH and the PIN in KBUILD_SIGN_PIN as kbuild
# passes it.
CMDTEXT[b_sf_loop]="PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN; for m in \$(cat list); do sign-file-engine sha256 '$TOKEN_URI_BASE' rsa2048.x509.der \$m; done"
b_sf_loop() {
	(
		export PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN
		while IFS= read -r m; do
			"$SIGNFILE_ENGINE" sha256 "$TOKEN_URI_BASE" "$CERT" "$m" || exit 1
		done < "$LIST"
	)
}
CMDTEXT[b_sf_xargs]="PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN xargs -P 2 -n 1 sign-file-engine sha256 '$TOKEN_URI_BASE' rsa2048.x509.der < list"
# Two sign-file processes on one SoftHSM2 token race: each C_Login rewrites
# the token's files, and a process that reads them meanwhile finds no token
# (a few % of the calls fail). xargs goes on after a failed call and exits
# 123; the failed calls are counted and reported, the run is kept.
b_sf_xargs() {
	local rc=0
	PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN \
		xargs -d '\n' -P 2 -n 1 -a "$LIST" "$SIGNFILE_ENGINE" sha256 "$TOKEN_URI_BASE" "$CERT" ||
		rc=$?
	# sign-file's last words on a failure: "sign-file-engine: <what failed>".
	grep -c "^${SIGNFILE_ENGINE##*/}: " "$RUN/log/$MEASURE_TAG" > "$RUN/failed.$MEASURE_TAG" || true
	[ "$rc" = 0 ] || [ "$rc" = 123 ]
}
CMDTEXT[b_ms_j1]="KBUILD_SIGN_PIN=$PIN modsign -b -j 1 --files-from list sha256 '$TOKEN_URI' rsa2048.x509.der"
b_ms_j1() { KBUILD_SIGN_PIN=$PIN ms -j 1 --files-from "$LIST" sha256 "$TOKEN_URI" "$CERT"; }
CMDTEXT[b_ms_j2]="KBUILD_SIGN_PIN=$PIN modsign -b -j 2 --files-from list sha256 '$TOKEN_URI' rsa2048.x509.der"
b_ms_j2() { KBUILD_SIGN_PIN=$PIN ms -j 2 --files-from "$LIST" sha256 "$TOKEN_URI" "$CERT"; }
CMDTEXT[b_ms_def]="KBUILD_SIGN_PIN=$PIN modsign -b --files-from list sha256 '$TOKEN_URI' rsa2048.x509.der"
b_ms_def() { KBUILD_SIGN_PIN=$PIN ms --files-from "$LIST" sha256 "$TOKEN_URI" "$CERT"; }
# What durability costs with the key on the token: the same run
# with every fsync a no-op (eatmydata; the directories' too), the most group
# commit could save.
CMDTEXT[b_ms_def_nosync]="KBUILD_SIGN_PIN=$PIN eatmydata modsign -b --files-from list sha256 '$TOKEN_URI' rsa2048.x509.der"
b_ms_def_nosync() {
	KBUILD_SIGN_PIN=$PIN eatmydata /usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -b \
		--files-from "$LIST" sha256 "$TOKEN_URI" "$CERT"
}
# The seed's bulk sign-file with the key on the token (target T7's peer): the
# ENGINE build of bench/sign-file-bulk-6.1.patch, one process, one login, the
# modules signed one after the other.
CMDTEXT[b_sfb]="PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN sign-file-bulk-engine -b sha256 '$TOKEN_URI_BASE' rsa2048.x509.der \$(cat list)   (the seed's patch 1/2)"
b_sfb() {
	local mods
	mapfile -t mods < "$LIST"
	PKCS11_MODULE_PATH=$SOFTHSM KBUILD_SIGN_PIN=$PIN \
		"$SIGNFILE_BULK_ENGINE" -b sha256 "$TOKEN_URI_BASE" "$CERT" "${mods[@]}"
}

# (c) the HSM-like token: slowtoken in front of SoftHSM2, serialised.
SLOW_ENV="SLOWTOKEN_INIT_MS=$SLOW_INIT_MS SLOWTOKEN_LOGIN_MS=$SLOW_LOGIN_MS SLOWTOKEN_SIGN_MS=$SLOW_SIGN_MS SLOWTOKEN_SERIAL=1"
# slow_env CMD...: CMD with the slow token's settings (and a call log on the
# first run, to count what each side asks of the token).
slow_env() {
	local logvar=()
	if [ -n "${SLOW_LOG:-}" ]; then
		logvar=(SLOWTOKEN_LOG="$SLOW_LOG")
	fi
	env SLOWTOKEN_INIT_MS=$SLOW_INIT_MS SLOWTOKEN_LOGIN_MS=$SLOW_LOGIN_MS \
		SLOWTOKEN_SIGN_MS=$SLOW_SIGN_MS SLOWTOKEN_SERIAL=1 "${logvar[@]}" "$@"
}
CMDTEXT[c_ms_def]="$SLOW_ENV KBUILD_SIGN_PIN=$PIN modsign -b --files-from list sha256 '$SLOW_URI' rsa2048.x509.der"
c_ms_def() {
	SLOW_LOG=${SLOW_LOG_MS:-} slow_env KBUILD_SIGN_PIN=$PIN \
		/usr/bin/time -f %M -o "$RUN/rss" "$MODSIGN" -b --files-from "$LIST" sha256 "$SLOW_URI" "$CERT"
}
CMDTEXT[c_sf_subset]="$SLOW_ENV PKCS11_MODULE_PATH=$SLOWTOKEN KBUILD_SIGN_PIN=$PIN; for m in \$(head -n $SLOW_SUBSET list); do sign-file-engine sha256 '$TOKEN_URI_BASE' rsa2048.x509.der \$m; done"
c_sf_subset() {
	local m
	head -n "$SLOW_SUBSET" "$LIST" | while IFS= read -r m; do
		SLOW_LOG=${SLOW_LOG_SF:-} slow_env PKCS11_MODULE_PATH="$SLOWTOKEN" KBUILD_SIGN_PIN=$PIN \
			"$SIGNFILE_ENGINE" sha256 "$TOKEN_URI_BASE" "$CERT" "$m" || exit 1
	done
}

# (d) the full module set: wall time and peak RSS.
CMDTEXT[d_ms_pem]='modsign -b --files-from full-list sha256 rsa2048.key.pem rsa2048.x509.der'
d_ms_pem() { ms --files-from "$LIST" sha256 "$KEY" "$CERT"; }
CMDTEXT[d_ms_token]="KBUILD_SIGN_PIN=$PIN modsign -b --files-from full-list sha256 '$TOKEN_URI' rsa2048.x509.der"
d_ms_token() { KBUILD_SIGN_PIN=$PIN ms --files-from "$LIST" sha256 "$TOKEN_URI" "$CERT"; }

# ---------------------------------------------------------------- sections

SECTION_A="a_sf_loop a_sf_xargs a_ms_j1 a_ms_j2 a_ms_j1_nosync a_ms_j1_d a_ms_loop a_sfb"
SECTION_B="b_sf_loop b_sf_xargs b_ms_j1 b_ms_j2 b_ms_def b_ms_def_nosync b_sfb"
SECTION_C="c_ms_def c_sf_subset"
SECTION_D="d_ms_pem d_ms_token"

# (e) compressed modules: bench/compressed.sh (its variants fill CMDTEXT too).
# shellcheck source=bench/compressed.sh
. "$BENCH/compressed.sh"
SECTION_E=$(section_e_variants)

# (f) `modsign agent`: bench/agent.sh (SECTION_F, run_section_f, its report).
# shellcheck source=bench/agent.sh
. "$BENCH/agent.sh"

# (g) several tokens holding one key: bench/tokens.sh.
# shellcheck source=bench/tokens.sh
. "$BENCH/tokens.sh"
SECTION_G=$(section_g_variants)

# (t) the real tokens beside SoftHSM2: bench/tokens_real.sh.
# shellcheck source=bench/tokens_real.sh
. "$BENCH/tokens_real.sh"

# (v) what verifying every signature costs: bench/verify.sh (after agent.sh:
# it runs agent.sh's loop).
# shellcheck source=bench/verify.sh
. "$BENCH/verify.sh"

run_section_c() {
	if [ ! -f "$SLOWTOKEN" ]; then
		say "$SLOWTOKEN is missing (make build/slowtoken.so): (c) not measured"
		SLOW_MISSING=1
		MEASURE_FAILED=1
		return 0
	fi
	# The first run of each side logs every token call; later runs do not.
	local rep
	LIST=$RUN/list.abs
	abs_list "$CORPUS_DIR/sample.list" > "$LIST"
	for rep in $(seq 1 "$REPS_LONG"); do
		SLOW_LOG_MS="" SLOW_LOG_SF=""
		if [ "$rep" = 1 ]; then
			SLOW_LOG_MS=$RUN/slowlog.c_ms_def SLOW_LOG_SF=$RUN/slowlog.c_sf_subset
		fi
		restore "$CORPUS_DIR/sample"
		measure c_ms_def "$rep" c_ms_def
		if [ "$rep" = 1 ]; then
			fingerprint c_ms_def "$CORPUS_DIR/sample.list"
		fi
		restore "$CORPUS_DIR/sample"
		measure c_sf_subset "$rep" c_sf_subset
		if [ "$rep" = 1 ]; then
			head -n "$SLOW_SUBSET" "$CORPUS_DIR/sample.list" > "$RUN/subset.list"
			fingerprint c_sf_subset "$RUN/subset.list"
		fi
	done
	SLOW_LOG_MS="" SLOW_LOG_SF=""
}

main() {
	local t_start=$EPOCHREALTIME
	[ -x "$MODSIGN" ] || die "$MODSIGN is missing: run make (or make bench)"
	install_packages
	apt_update
	prepare_corpus
	say "corpus: $CORPUS_PKG $CORPUS_VER, $FULL_N modules ($FULL_BYTES bytes), sample $SAMPLE_REAL_N ($SAMPLE_BYTES bytes)"
	case " $SECTIONS " in
	*" e "*)
		prepare_zcorpus
		say "compressed corpus: $ZCORPUS_PKG $ZCORPUS_VER, $Z_N_REAL modules ($Z_BYTES bytes)" ;;
	esac
	build_signfile_engine
	build_signfile_bulk
	make_token
	MODSIGN_NOCHECK="" NOCHECK_WHY="" VERIFY_CPU_WHY=""
	case " $SECTIONS " in
	*" v "*)
		build_nocheck
		build_verify_cpu ;;
	esac
	LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
	SLOW_MISSING=0

	local s
	for s in $SECTIONS; do
		empty_trash
		case $s in
		a)
			say "(a) PEM key, $SAMPLE_REAL_N modules"
			# shellcheck disable=SC2086  # a list of variants
			compare_runs "$REPS" "$CORPUS_DIR/sample" "$CORPUS_DIR/sample.list" $SECTION_A ;;
		b)
			say "(b) key on SoftHSM2, $SAMPLE_REAL_N modules"
			# shellcheck disable=SC2086
			compare_runs "$REPS" "$CORPUS_DIR/sample" "$CORPUS_DIR/sample.list" $SECTION_B ;;
		c)
			say "(c) HSM-like token (slowtoken), $SAMPLE_REAL_N modules"
			run_section_c ;;
		d)
			say "(d) full set, $FULL_N modules"
			# shellcheck disable=SC2086
			compare_runs "$REPS_LONG" "$CORPUS_DIR/full" "$CORPUS_DIR/full.list" $SECTION_D ;;
		e)
			say "(e) compressed modules ($Z_FMTS), $Z_N_REAL modules"
			run_section_e ;;
		f)
			say "(f) modsign agent: one modsign process per module"
			run_section_f ;;
		g)
			say "(g) HSM-like tokens holding one key ($G_TOKENS of them), $SAMPLE_REAL_N modules"
			run_section_g ;;
		h)
			say "(h) digests, old backend against nettle, CPU time"
			mapfile -t dfiles < <(sed "s|^|$CORPUS_DIR/full/|" "$CORPUS_DIR/full.list" |
				awk 'NR % 10 == 0')
			"$BENCH/digest.sh" "$REPS" "${dfiles[@]}" > "$RUN/digest.md" ||
				{ say "(h) digest benchmark failed"; MEASURE_FAILED=1; } ;;
		t)
			say "(t) real tokens beside SoftHSM2, $T_N modules"
			run_section_t ;;
		v)
			say "(v) the signature check: with and without, $SAMPLE_REAL_N modules"
			run_section_v ;;
		*)
			die "BENCH_SECTIONS: unknown section '$s' (a, b, c, d, e, f, g, h, t, v)" ;;
		esac
	done
	LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
	BENCH_SECS=$(awk -v a="$t_start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
	write_report
	if [ "$MEASURE_FAILED" != 0 ]; then
		say "some figures could not be measured (see above and $OUT)"
		exit 1
	fi
}

main "$@"
