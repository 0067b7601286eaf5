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
#   BENCH_SECTIONS       which comparisons to run (default "a b c d e f g h t v p";
#                        f: the agent, bench/agent.sh; g: several HSM-like
#                        tokens holding one key, bench/tokens.sh; h: the
#                        digest microbenchmark, bench/digest.sh; t: the real
#                        tokens beside SoftHSM2, bench/tokens_real.sh; v: what
#                        verifying every signature costs, modsign against
#                        a build without the check, bench/verify.sh; p: the
#                        kernel's sign-file through pkcs11-provider on
#                        Debian 13 (a chroot), bench/peer.sh)
#   BENCH_Z_FMTS, BENCH_Z_N  section (e): formats, modules (bench/compressed.sh)
#   BENCH_AGENT_HSM_N, BENCH_AGENT_HSM_P  section (f), the agent's HSM-like
#                        run: modules (default 200) and processes at a time
#                        (default 4) (bench/agent.sh)
#   BENCH_JOBS           the -j values of modsign -b in (a) and (b), for the
#                        -j chart (default "1 2 4")
#   BENCH_D_COUNTS       module counts of (d)'s scaling runs, spread over the
#                        full set, beside the full set itself (default
#                        "100 250 500 1000 2000")
#   BENCH_P_N            section (p), the Debian 13 peer: modules (default
#                        the sample) (bench/peer.sh)
#   BENCH_OUT            report file (default BENCHMARKS.md at the top; in
#                        quick mode a file in $TMPDIR, never the committed one)
#   BENCH_CHARTS         where the charts go (default bench/charts beside
#                        BENCH_OUT)
#   BENCH_QUICK=1        quick mode: every section on a few modules, one run
#                        each, no settling: proves the sections and the charts
#                        work, on any machine; its figures are smoke figures,
#                        never benchmarks (each knob above still wins)
#   BENCH_NO_UPDATE=1    skip apt-get update
#   BENCH_SETTLE         seconds between timed runs (default 31 on ext4
#                        without a journal, else 0; see restore)
#   BENCH_KEEP=1         keep the run directory (logs, raw results)
set -euo pipefail
export LC_ALL=C

TOP=$(cd "$(dirname "$0")/.." && pwd)
BENCH=$TOP/bench
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	# Defaults of the quick mode; a knob set by the caller still wins.
	: "${BENCH_REPS:=1}" "${BENCH_REPS_LONG:=1}" "${BENCH_SAMPLE:=40}" "${BENCH_SLOW_SUBSET:=2}"
	: "${BENCH_Z_N:=40}" "${BENCH_AGENT_HSM_N:=20}" "${BENCH_T_N:=20}" "${BENCH_SETTLE:=0}"
	: "${BENCH_D_COUNTS:=10 20}" "${BENCH_P_N:=20}"
	: "${BENCH_OUT:=${TMPDIR:-/tmp}/modsign-bench-quick/BENCHMARKS.md}"
	export BENCH_Z_N BENCH_AGENT_HSM_N BENCH_T_N BENCH_P_N
	mkdir -p "$(dirname "$BENCH_OUT")"
fi
REPS=${BENCH_REPS:-5}
REPS_LONG=${BENCH_REPS_LONG:-3}
SAMPLE_N=${BENCH_SAMPLE:-802}
SLOW_SUBSET=${BENCH_SLOW_SUBSET:-10}
SECTIONS=${BENCH_SECTIONS:-"a b c d e f g h t v p"}
JOBS=${BENCH_JOBS:-"1 2 4"}
D_COUNTS=${BENCH_D_COUNTS:-"100 250 500 1000 2000"}
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

# shellcheck source=bench/measure.sh
. "$BENCH/measure.sh"

# ---------------------------------------------------------------- the variants
# Each is a function over $LIST (absolute paths in $WORK); CMDTEXT says what
# it runs, for the report.
declare -A CMDTEXT

# (a) PEM key
# shellcheck disable=SC2016  # the loop as text, not to expand
CMDTEXT[a_sf_loop]='for m in $(cat list); do sign-file sha256 rsa2048.key.pem rsa2048.x509.der $m; done'
a_sf_loop() { each_module "$SIGNFILE" sha256 "$KEY" "$CERT"; }
CMDTEXT[a_sf_xargs]='xargs -P 2 -n 1 sign-file sha256 rsa2048.key.pem rsa2048.x509.der < list'
a_sf_xargs() {
	xargs -d '\n' -P 2 -n 1 -a "$LIST" "$SIGNFILE" sha256 "$KEY" "$CERT"
}
CMDTEXT[a_ms_j1]='modsign -b -j 1 --files-from list sha256 rsa2048.key.pem rsa2048.x509.der'
a_ms_j1() { ms -j 1 --files-from "$LIST" sha256 "$KEY" "$CERT"; }
CMDTEXT[a_ms_j2]='modsign -b -j 2 --files-from list sha256 rsa2048.key.pem rsa2048.x509.der'
a_ms_j2() { ms -j 2 --files-from "$LIST" sha256 "$KEY" "$CERT"; }
CMDTEXT[a_ms_def]='modsign -b --files-from list sha256 rsa2048.key.pem rsa2048.x509.der'
a_ms_def() { ms --files-from "$LIST" sha256 "$KEY" "$CERT"; }
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

# The -j chart's further points (BENCH_JOBS beyond 1 and 2, which the
# targets use): modsign -b -j K in (a) and (b).
JOBS_MORE=""
for _k in $JOBS; do
	case $_k in
	1 | 2) continue ;;
	*[!0-9]* | "") die "BENCH_JOBS: '$_k' is not a number" ;;
	esac
	JOBS_MORE="$JOBS_MORE $_k"
	CMDTEXT[a_ms_j$_k]="modsign -b -j $_k --files-from list sha256 rsa2048.key.pem rsa2048.x509.der"
	eval "a_ms_j$_k() { ms -j $_k --files-from \"\$LIST\" sha256 \"\$KEY\" \"\$CERT\"; }"
	CMDTEXT[b_ms_j$_k]="KBUILD_SIGN_PIN=$PIN modsign -b -j $_k --files-from list sha256 '$TOKEN_URI' rsa2048.x509.der"
	eval "b_ms_j$_k() { KBUILD_SIGN_PIN=\$PIN ms -j $_k --files-from \"\$LIST\" sha256 \"\$TOKEN_URI\" \"\$CERT\"; }"
done

# (d)'s scaling runs: the full set's variants on BENCH_D_COUNTS modules
# spread over it (d_n<count>_pem, d_n<count>_tok).
SECTION_D_COUNTS=""
for _k in $D_COUNTS; do
	case $_k in
	*[!0-9]* | "" | 0) die "BENCH_D_COUNTS: '$_k' is not a module count" ;;
	esac
	SECTION_D_COUNTS="$SECTION_D_COUNTS d_n${_k}_pem d_n${_k}_tok"
	CMDTEXT[d_n${_k}_pem]="modsign -b --files-from list-of-$_k sha256 rsa2048.key.pem rsa2048.x509.der"
	eval "d_n${_k}_pem() { d_ms_pem; }"
	CMDTEXT[d_n${_k}_tok]="KBUILD_SIGN_PIN=$PIN modsign -b --files-from list-of-$_k sha256 '$TOKEN_URI' rsa2048.x509.der"
	eval "d_n${_k}_tok() { d_ms_token; }"
done
unset _k

# ---------------------------------------------------------------- sections

SECTION_A="a_sf_loop a_sf_xargs a_ms_j1 a_ms_j2 a_ms_def a_ms_j1_nosync a_ms_j1_d a_ms_loop a_sfb$(for k in $JOBS_MORE; do printf ' a_ms_j%s' "$k"; done)"
SECTION_B="b_sf_loop b_sf_xargs b_ms_j1 b_ms_j2 b_ms_def b_ms_def_nosync b_sfb$(for k in $JOBS_MORE; do printf ' b_ms_j%s' "$k"; done)"
SECTION_C="c_ms_def c_sf_subset"
SECTION_D="d_ms_pem d_ms_token$SECTION_D_COUNTS"

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

# (p) the peer on Debian 13, sign-file through pkcs11-provider: bench/peer.sh.
# shellcheck source=bench/peer.sh
. "$BENCH/peer.sh"

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

	local s k
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
			say "(d) full set, $FULL_N modules, and $D_COUNTS of them"
			compare_runs "$REPS_LONG" "$CORPUS_DIR/full" "$CORPUS_DIR/full.list" d_ms_pem d_ms_token
			for k in $D_COUNTS; do
				prepare_count_set "$k"
				compare_runs "$REPS_LONG" "$CORPUS_DIR/n-$k" "$CORPUS_DIR/n-$k.list" \
					"d_n${k}_pem" "d_n${k}_tok"
			done ;;
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
		p)
			say "(p) the peer on Debian 13: sign-file through pkcs11-provider, in a chroot"
			run_section_p ;;
		*)
			die "BENCH_SECTIONS: unknown section '$s' (a, b, c, d, e, f, g, h, t, v, p)" ;;
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
