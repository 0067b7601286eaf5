#!/bin/bash
# Modules in awkward places (doc/guarantees.md, "Files as they come"),
# single and bulk, each compared with sign-file: a full disk (small tmpfs:
# no room for the copy, for the signature, for an inode, a dest; in bulk a
# disk filling up mid-run), a
# read-only directory as a non-root user, a read-only module, hard links, a
# module replaced or changed by another process while it is signed (slow
# token, tests/slowtoken), and what is kept of mode, owner and timestamps.
# Needs root (mount, chown, setpriv); parts that cannot run say SKIP.
# NOTE lines state facts (mostly sign-file's behaviour) without judging them.
. "$(dirname "$0")/../lib/common.sh"
t_setup
if [ "$(id -u)" -ne 0 ]; then
	t_skip file_cases "needs root (tmpfs mounts, chown, running as nobody)"
	t_done
	exit 0
fi
t_token
export KBUILD_SIGN_PIN=$PIN
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken

key=$DATA/rsa2048.key.pem
cert=$DATA/rsa2048.x509.der
uri=$(key_uri rsa2048)
slow_uri=$(slow_key_uri rsa2048)
NOBODY=65534
NOGROUP=$(id -g nobody 2>/dev/null || echo 65534)
MARKER='~Module signature appended~'
mounts=""
bg_pid=""

# Every modsign run here is bounded: a run that hangs (as the hard link
# checks once did) is killed and fails its check instead of blocking the suite.
# modsign handles SIGTERM itself, hence the KILL after 3 s more.
# Under valgrind (tests/valgrind/run.sh) modsign is ~20x slower: longer
# limits, and a longer moment after it takes a lock.
# The slow token's signing time (SLOWTOKEN_SIGN_MS) is the window the tests
# act in; it grows by SLOW_X.
LIMIT=15
SETTLE=0.1
SLOW_X=1
if [ -n "${MODSIGN_TEST_VALGRIND:-}" ]; then
	LIMIT=90
	SETTLE=0.5
	SLOW_X=4
fi
ms() {
	timeout -k 3 "$LIMIT" "$MODSIGN" "$@"
}
# Runs in the background are "timeout ... &" itself, so that $! is timeout.
run_ms() {
	ms "$@" >"$T/out" 2>&1
	rc=$?
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || echo "(killed: still running after $LIMIT s)" >>"$T/out"
	cat "$T/out" >>"${MS_LOG:-/dev/null}"	# run.sh looks for PINs there
}

fc_cleanup() {
	if [ -n "$bg_pid" ] && kill -0 "$bg_pid" 2>/dev/null; then
		kill "$bg_pid" 2>/dev/null
		wait "$bg_pid" 2>/dev/null
	fi
	for mp in $mounts; do
		umount "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null
	done
	t_cleanup
}
trap fc_cleanup EXIT

# Module sources: small ones (signing keeps them within 2 pages) and "big"
# ones of 8000 bytes (2 pages; signed, 8468 bytes: 3 pages), with sign-file's
# result for each.
"$TOP/tests/lib/mkmodule.sh" "$T/src" 8 4 >/dev/null
mkdir "$T/big" "$T/ref" "$T/bigref"
for m in "$T"/src/*.ko; do
	n=$(basename "$m")
	cp "$m" "$T/big/$n" && truncate -s 8000 "$T/big/$n"
	cp "$m" "$T/ref/$n" && "$SIGNFILE" sha256 "$key" "$cert" "$T/ref/$n"
	cp "$T/big/$n" "$T/bigref/$n" && "$SIGNFILE" sha256 "$key" "$cert" "$T/bigref/$n"
done
[ "$(stat -c %s "$T/bigref/mod000.ko")" -gt 8192 ] ||
	t_fail "test set-up: a signed big module needs a third page" "$(stat -c %s "$T/bigref/mod000.ko")"

# wait_locked FILE: until modsign holds FILE's lock (taken at open, held
# until it is written); then a moment for the open's own checks to finish.
wait_locked() {
	for _ in $(seq 400); do
		if ! flock -n "$1" true 2>/dev/null; then
			sleep "$SETTLE"
			return 0
		fi
		sleep 0.02
	done
	return 1
}

# temps DIR: temporary files modsign or sign-file left below DIR.
temps() {
	find "$1" \( -name '.*.modsign-*.tmp' -o -name '*~signed~' \) 2>/dev/null
}

no_temps() {
	local left
	left=$(temps "$2")
	if [ -z "$left" ]; then
		t_pass "$1"
	else
		t_fail "$1" "$left"
	fi
}

# summary_is NAME "S signed, F failed, R refused (signed already), K skipped (signature verified), N not signed, of T"
summary_is() {
	if grep -qF -- "$2" "$T/out"; then
		t_pass "$1"
	else
		t_fail "$1" "want: $2" "$(cat "$T/out")"
	fi
}

# tally DIR SRC REF: every *.ko in DIR is SRC's original or REF's signed copy
# (REF is sign-file's result, so those verify); sets n_signed, n_orig, odd, and
# orig_names (the untouched ones).
tally() {
	n_signed=0 n_orig=0 odd="" orig_names=""
	for m in "$1"/*.ko; do
		n=$(basename "$m")
		if same "$3/$n" "$m"; then
			n_signed=$((n_signed + 1))
		elif same "$2/$n" "$m"; then
			n_orig=$((n_orig + 1))
			orig_names="$orig_names $n"
		else
			odd="$odd $n"
		fi
	done
}

# bulk_truth NAME DIR SRC REF ERRNO_TEXT: after a bulk run that was expected
# to fail some modules: each module complete or untouched, the summary's
# counts equal what is on disk, each untouched module named with the error,
# exit status 1, at least one signed and one not.
bulk_truth() {
	local name=$1 dir=$2 s f r k ns tot missing="" line
	tally "$dir" "$3" "$4"
	if [ -z "$odd" ]; then
		t_pass "$name: every module original or complete and verifying"
	else
		t_fail "$name: every module original or complete and verifying" "neither:$odd"
	fi
	line=$(grep -o '[0-9]* signed, [0-9]* failed, [0-9]* refused (signed already), [0-9]* skipped (signature verified), [0-9]* not signed, of [0-9]*' "$T/out" | tail -n 1)
	read -r s f r k ns tot <<<"$(echo "$line" | sed 's/[^0-9 ]//g; s/  */ /g')"
	if [ -n "$line" ] && [ "$s" -eq "$n_signed" ] && [ $((f + ns)) -eq "$n_orig" ] &&
		[ "$r" -eq 0 ] && [ "$k" -eq 0 ] && [ "$tot" -eq $((n_signed + n_orig)) ]; then
		t_pass "$name: summary counts what is on disk ($line)"
	else
		t_fail "$name: summary counts what is on disk" \
			"on disk: $n_signed signed, $n_orig original; summary: ${line:-none}" "$(cat "$T/out")"
	fi
	for n in $orig_names; do
		grep -q "$dir/$n: .*$5" "$T/out" || missing="$missing $n"
	done
	if [ "$f" = "$n_orig" ] && [ -z "$missing" ]; then
		t_pass "$name: each module not signed is named with '$5'"
	else
		t_fail "$name: each module not signed is named with '$5'" "not named:$missing" \
			"failed in summary: $f, untouched: $n_orig" "$(cat "$T/out")"
	fi
	if [ "$rc" -eq 1 ] && [ "$n_signed" -ge 1 ] && [ "$n_orig" -ge 1 ]; then
		t_pass "$name: exit 1, some signed ($n_signed), some not ($n_orig)"
	else
		t_fail "$name: exit 1, some signed, some not" \
			"status $rc, $n_signed signed, $n_orig untouched" "$(cat "$T/out")"
	fi
	no_temps "$name: no temporary file left" "$dir"
}

# ---------------------------------------------------------------------------
# 1. A full disk: a small tmpfs.

# disk NAME SIZE [OPTS]: a fresh tmpfs at $T/NAME; fails if mounting is refused.
disk() {
	mkdir -p "$T/$1"
	mount -t tmpfs -o "size=$2,mode=0755${3:+,$3}" "modsign-test-$1" "$T/$1" 2>"$T/mount.err" ||
		return 1
	mounts="$T/$1 $mounts"
}

# fill_leaving DIR PAGES: fill DIR's file system but PAGES free 4 KiB pages.
fill_leaving() {
	dd if=/dev/zero of="$1/.fill" bs=4096 2>/dev/null
	truncate -s $(($(stat -c %s "$1/.fill") - $2 * 4096)) "$1/.fill"
	[ "$(stat -f -c %f "$1")" -eq "$2" ] ||
		t_fail "test set-up: $1 has $2 free pages" "$(stat -f -c %f "$1") free"
}

# single_full NAME PAGES PATTERN [ARGS...]: sign $D/m.ko (8000 bytes) with
# PAGES free pages; it must fail, naming the file and PATTERN, and leave it.
single_full() {
	local what=$1 pages=$2 pat=$3
	shift 3
	rm -f "$D"/* "$D"/.fill && cp "$T/big/mod000.ko" "$D/m.ko"
	fill_leaving "$D" "$pages"
	run_ms "$@" sha256 "$key" "$cert" "$D/m.ko"
	expect_fail "full disk, $what: exit 1 naming the module and the errno" 1 \
		"$D/m.ko: $pat: No space left on device"
	t_check "full disk, $what: module byte-identical to its original" same "$T/big/mod000.ko" "$D/m.ko"
	no_temps "full disk, $what: no temporary file left" "$D"
}

if disk full 64k; then
	D=$T/full
	# No room for the copy (2 pages needed, 1 free); room for the copy but
	# not for the signature that makes it 3 pages (2 free).
	single_full "no room for the copy" 1 "\(copy_file_range\|write\)"
	single_full "no room for the signature" 2 "write"
	# -p: the .p7s is written first (as sign-file does): it takes the page
	# the module copy needed. If it stays, it must be a signature of the
	# module as it is.
	single_full "-p, the .p7s takes the last page" 2 "\(copy_file_range\|write\)" -p
	if [ -e "$D/m.ko.p7s" ]; then
		echo "NOTE full disk, -p: the .p7s written before the module failed is left"
		if openssl cms -verify -binary -inform DER -in "$D/m.ko.p7s" -content "$D/m.ko" \
			-certfile "$cert" -nointern -noverify -out /dev/null 2>"$T/.verify"; then
			t_pass "full disk, -p: the .p7s left verifies over the untouched module"
		else
			t_fail "full disk, -p: the .p7s left verifies over the untouched module" "$(cat "$T/.verify")"
		fi
	fi

	# A dest on the full disk: named in the error; an existing dest and the
	# module stay as they were.
	rm -f "$D"/* "$D"/.fill
	echo "previous dest" >"$D/out.ko"
	cp "$T/big/mod000.ko" "$T/m-dest.ko"
	fill_leaving "$D" 1
	run_ms sha256 "$key" "$cert" "$T/m-dest.ko" "$D/out.ko"
	expect_fail "full disk, dest: exit 1 naming the dest" 1 "$D/out.ko: .*No space left on device"
	t_check "full disk, dest: the old dest kept" grep -qx "previous dest" "$D/out.ko"
	t_check "full disk, dest: module untouched" same "$T/big/mod000.ko" "$T/m-dest.ko"
	no_temps "full disk, dest: no temporary file left" "$D"
else
	for c in "no room for the copy" "no room for the signature" "-p" "dest"; do
		t_skip "full disk, $c" "mount -t tmpfs refused: $(head -n 1 "$T/mount.err")"
	done
fi

# No inode left for the temp file.
if disk inodes 64k nr_inodes=3; then
	D=$T/inodes
	cp "$T/src/mod000.ko" "$D/m.ko"
	touch "$D/.fill" 2>/dev/null	# the root, m.ko and this: none left
	if touch "$D/.probe" 2>/dev/null; then
		t_fail "test set-up: no inode left on $D"
	fi
	run_ms sha256 "$key" "$cert" "$D/m.ko"
	expect_fail "no inode left: exit 1 naming the module and the errno" 1 \
		"$D/m.ko: open: No space left on device"
	t_check "no inode left: module untouched" same "$T/src/mod000.ko" "$D/m.ko"
else
	t_skip "no inode left" "mount -t tmpfs refused"
fi

# Bulk, -r, PEM key: every big module grows by a page when signed, so the
# disk (4 pages free at start) fills up during the run: the first ones fit,
# the others fail. Then, with room made, --skip-signed finishes the job.
if disk bulkfull 160k; then
	D=$T/bulkfull
	cp "$T"/big/*.ko "$D/"
	fill_leaving "$D" 4
	run_ms -r "$D" sha256 "$key" "$cert"
	bulk_truth "full disk, -r, PEM key" "$D" "$T/big" "$T/bigref" "No space left on device"
	rm -f "$D/.fill"
	run_ms -r "$D" --skip-signed sha256 "$key" "$cert"
	tally "$D" "$T/big" "$T/bigref"
	if [ "$rc" -eq 0 ] && [ "$n_signed" -eq 8 ]; then
		t_pass "full disk, -r: a re-run with --skip-signed after freeing space signs the rest"
	else
		t_fail "full disk, -r: a re-run with --skip-signed after freeing space signs the rest" \
			"status $rc, $n_signed of 8 signed" "$(cat "$T/out")"
	fi
else
	t_skip "full disk, bulk -r" "mount -t tmpfs refused"
fi

# Bulk, -b, token through the slow shim: another process fills the disk as
# soon as the first module is signed, and keeps it full: the space a
# replaced module frees when modsign closes it would otherwise let the next
# one fit, and that one the next (seen: all six signed). The second
# signature is held (HANG) for 3 s, so that the filler is sure to have
# filled the disk before the second module is written, however loaded the
# machine (a 400 ms signature alone was not always enough).
if disk midrun 128k; then
	D=$T/midrun
	cp "$T"/big/mod00[0-5].ko "$D/"
	SLOWTOKEN_SIGN_MS=$((400 * SLOW_X)) SLOWTOKEN_FAULT=C_Sign:2:HANG \
		SLOWTOKEN_HANG_MS=$((3000 * SLOW_X)) timeout -k 3 "$LIMIT" "$MODSIGN" -b -j 1 sha256 \
		"$slow_uri" "$cert" "$D"/*.ko >"$T/out" 2>&1 &
	bg_pid=$!
	for _ in $(seq 300); do
		tail -c 28 "$D/mod000.ko" | grep -qF "$MARKER" && break
		sleep 0.05
	done
	(
		k=0
		while kill -0 "$bg_pid" 2>/dev/null; do
			dd if=/dev/zero of="$D/.fill$k" bs=4096 2>/dev/null
			k=$((k + 1))
			sleep 0.02
		done
	) &
	filler=$!
	wait "$bg_pid"
	rc=$?
	bg_pid=""
	wait "$filler"
	bulk_truth "disk filled mid-run, -b, token" "$D" "$T/big" "$T/bigref" "No space left on device"
else
	t_skip "disk filled mid-run" "mount -t tmpfs refused"
fi

# ---------------------------------------------------------------------------
# 2. A read-only directory, as a non-root user (nobody).

as_nobody() {
	setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups "$@"
}

chmod 755 "$T"
U=$T/u
mkdir -p "$U/rootdir" "$U/ro555" "$U/rw" "$U/rw2"
cp "$key" "$U/key.pem" && chmod 644 "$U/key.pem"	# TEST-ONLY key
# The checkout may be where nobody cannot go (a 0700 home or mktemp
# directory): nobody's runs take copies of the certificate and the binary.
cp "$cert" "$U/cert.der" && chmod 644 "$U/cert.der"
MS_NOBODY=$MODSIGN
if ! as_nobody test -x "$MS_NOBODY" 2>/dev/null; then
	mkdir -m 755 "$U/bin" && cp "$MODSIGN" "$U/bin/modsign" && chmod 755 "$U/bin/modsign"
	MS_NOBODY=$U/bin/modsign
fi
cp "$T"/src/mod00[0-2].ko "$U/rootdir/"
cp "$T"/src/mod00[3-4].ko "$U/ro555/"
cp "$T"/src/mod00[5-7].ko "$U/rw/"
chown -R "$NOBODY:$NOGROUP" "$U/rootdir"/*.ko "$U/ro555" "$U/rw" "$U/rw2"
chmod 555 "$U/ro555"
if ! as_nobody true 2>"$T/setpriv.err"; then
	t_skip "read-only directory" "setpriv refused: $(head -n 1 "$T/setpriv.err")"
elif as_nobody touch "$U/rootdir/.probe" 2>/dev/null || as_nobody touch "$U/ro555/.probe" 2>/dev/null; then
	t_fail "test set-up: nobody cannot write $U/rootdir and $U/ro555"
else
	run_ms_nobody() {
		as_nobody timeout -k 3 "$LIMIT" "$MS_NOBODY" "$@" >"$T/out" 2>&1
		rc=$?
	}
	run_ms_nobody sha256 "$U/key.pem" "$U/cert.der" "$U/rootdir/mod000.ko"
	expect_fail "read-only directory (root's, 0755), single: exit 1 naming the module" 1 \
		"$U/rootdir/mod000.ko: open: Permission denied"
	t_check "read-only directory, single: module untouched" same "$T/src/mod000.ko" "$U/rootdir/mod000.ko"

	run_ms_nobody -b sha256 "$U/key.pem" "$U/cert.der" "$U"/rootdir/*.ko "$U"/ro555/*.ko "$U"/rw/*.ko
	expect_fail "read-only directories, -b as nobody: exit 1" 1 "Permission denied"
	bad=""
	for m in "$U"/rootdir/*.ko "$U"/ro555/*.ko; do
		n=$(basename "$m")
		same "$T/src/$n" "$m" || bad="$bad $m(changed)"
		grep -q "$m: open: Permission denied" "$T/out" || bad="$bad $m(not named)"
	done
	for m in "$U"/rw/*.ko; do
		same "$T/ref/$(basename "$m")" "$m" || bad="$bad $m(not signed)"
	done
	if [ -z "$bad" ]; then
		t_pass "read-only directories, -b: those named and untouched, the writable one signed"
	else
		t_fail "read-only directories, -b: those named and untouched, the writable one signed" \
			"$bad" "$(cat "$T/out")"
	fi
	summary_is "read-only directories, -b: summary" \
		"3 signed, 5 failed, 0 refused (signed already), 0 skipped (signature verified), 0 not signed, of 8"

	cp "$T"/src/mod00[5-7].ko "$U/rw/" && chown "$NOBODY:$NOGROUP" "$U"/rw/*.ko
	run_ms_nobody -r "$U/rootdir" -r "$U/ro555" -r "$U/rw" sha256 "$U/key.pem" "$U/cert.der"
	tally "$U/rw" "$T/src" "$T/ref"
	if [ "$rc" -eq 1 ] && [ "$n_signed" -eq 3 ] &&
		[ "$(grep -c ': open: Permission denied' "$T/out")" -eq 5 ]; then
		t_pass "read-only directories, -r as nobody: 5 named, the writable directory signed"
	else
		t_fail "read-only directories, -r as nobody: 5 named, the writable directory signed" \
			"status $rc, $n_signed of 3 signed" "$(cat "$T/out")"
	fi
	tally "$U/rootdir" "$T/src" "$T/ref"
	r1=$n_orig
	tally "$U/ro555" "$T/src" "$T/ref"
	t_check "read-only directories, -r: their modules untouched" test "$r1$n_orig" = 32
	no_temps "read-only directories: no temporary file left" "$U"
fi

# ---------------------------------------------------------------------------
# 3. A read-only module (0444) in a writable directory. sign-file writes
# <module>.~signed~ (mode from its umask) and renames it over the module.

mkdir "$T/ro"
cp "$T/src/mod000.ko" "$T/ro/m.ko" && cp "$T/src/mod000.ko" "$T/ro/sf.ko"
chmod 444 "$T/ro/m.ko" "$T/ro/sf.ko"
(umask 022 && "$SIGNFILE" sha256 "$key" "$cert" "$T/ro/sf.ko") >"$T/sf.out" 2>&1
echo "NOTE sign-file on a 0444 module as root: status $?, result mode $(stat -c %a "$T/ro/sf.ko")"
run_ms sha256 "$key" "$cert" "$T/ro/m.ko"
t_check "0444 module, root: signed (status $rc)" same "$T/ref/mod000.ko" "$T/ro/m.ko"
t_check "0444 module, root: mode 0444 kept" test "$(stat -c %a "$T/ro/m.ko")" = 444
if as_nobody true 2>/dev/null; then
	mkdir "$U/ro444"
	cp "$T/src/mod000.ko" "$U/ro444/m.ko" && cp "$T/src/mod000.ko" "$U/ro444/sf.ko"
	chmod 444 "$U"/ro444/*.ko && chown -R "$NOBODY:$NOGROUP" "$U/ro444"
	(umask 022 && as_nobody "$SIGNFILE" sha256 "$U/key.pem" "$U/cert.der" "$U/ro444/sf.ko") >"$T/sf.out" 2>&1
	echo "NOTE sign-file on its own 0444 module as nobody: status $?, result mode" \
		"$(stat -c %a "$U/ro444/sf.ko"), signed: $(same "$T/ref/mod000.ko" "$U/ro444/sf.ko" && echo yes || echo no)"
	as_nobody timeout -k 3 "$LIMIT" "$MS_NOBODY" sha256 "$U/key.pem" "$U/cert.der" "$U/ro444/m.ko" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$U/ro444/m.ko" &&
		[ "$(stat -c '%a %u' "$U/ro444/m.ko")" = "444 $NOBODY" ]; then
		t_pass "0444 module, its owner (nobody): signed, mode 0444 and owner kept"
	else
		t_fail "0444 module, its owner (nobody): signed, mode 0444 and owner kept" \
			"status $rc, $(stat -c '%a %u' "$U/ro444/m.ko")" "$(cat "$T/out")"
	fi
fi
rm -rf "$T/ro" && mkdir "$T/ro" && cp "$T"/src/*.ko "$T/ro/"
chmod 444 "$T"/ro/mod00[0-3].ko
run_ms -r "$T/ro" sha256 "$uri" "$cert"
tally "$T/ro" "$T/src" "$T/ref"
modes=$(stat -c %a "$T"/ro/*.ko | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ "$n_signed" -eq 8 ] && [ "$modes" = "444 444 444 444 644 644 644 644 " ]; then
	t_pass "0444 modules, -r, token: all signed, modes kept"
else
	t_fail "0444 modules, -r, token: all signed, modes kept" "status $rc, $n_signed signed, modes $modes" \
		"$(cat "$T/out")"
fi

# ---------------------------------------------------------------------------
# 4. Hard links: one module, two names. Signing writes a new file and renames
# it over the name given, so the other name keeps the original bytes; sign-
# file does the same.

mkdir "$T/hl"
cp "$T/src/mod000.ko" "$T/hl/a.ko" && ln "$T/hl/a.ko" "$T/hl/b.ko"
cp "$T/src/mod000.ko" "$T/hl/sa.ko" && ln "$T/hl/sa.ko" "$T/hl/sb.ko"
"$SIGNFILE" sha256 "$key" "$cert" "$T/hl/sa.ko"
run_ms sha256 "$key" "$cert" "$T/hl/a.ko"
t_check "hard link, single: the name given is signed (status $rc)" same "$T/ref/mod000.ko" "$T/hl/a.ko"
t_check "hard link, single: the other name keeps the original bytes" same "$T/src/mod000.ko" "$T/hl/b.ko"
t_check "hard link, single: both names now separate files" \
	test "$(stat -c %h "$T/hl/a.ko") $(stat -c %h "$T/hl/b.ko")" = "1 1"
if same "$T/hl/a.ko" "$T/hl/sa.ko" && same "$T/hl/b.ko" "$T/hl/sb.ko"; then
	t_pass "hard link, single: the same outcome as sign-file for both names"
else
	t_fail "hard link, single: the same outcome as sign-file for both names"
fi
# sign-file says nothing; modsign warns (exit status unchanged).
t_check "hard link, single: a warning names the module and the other link" \
	grep -qF "$T/hl/a.ko: had 1 other hard link(s); they still name the unsigned module" "$T/out"
# Both names in one bulk run: each name ends signed, as with sign-file run on
# each name. Once a bug: a worker opening the second name blocked in flock()
# on the inode this same run held under the first (flock locks belong to
# open file descriptions, so two opens in one process conflict); with every
# worker blocked so, the run hung for ever. And the second name failed with
# a false "changed while being signed": its stat was taken before the wait,
# and the first name's rename changed the inode's ctime (link count).
hl_bug="hard links in one bulk run (flock on an inode the run already holds; stale stat)"
hardlinked() {
	rm -rf "$T/hl" && mkdir -p "$T/hl/x" "$T/hl/y"
	cp "$T"/src/mod00[0-5].ko "$T/hl/x/"
	for n in 0 1 2 3 4 5; do ln "$T/hl/x/mod00$n.ko" "$T/hl/y/mod00$n.ko"; done
}
# hl_check NAME: both directories fully signed, exit 0.
hl_check() {
	tally "$T/hl/x" "$T/src" "$T/ref"
	x=$n_signed
	tally "$T/hl/y" "$T/src" "$T/ref"
	if [ "$rc" -eq 0 ] && [ "$x $n_signed" = "6 6" ]; then
		t_pass "$1"
	else
		t_fail "$1" "$hl_bug" "status $rc, signed: $x of x/, $n_signed of y/" "$(tail -n 5 "$T/out")"
	fi
}
# Two runs at once, one per name (the first on a slow token): the second
# waits for the first's lock, then must sign its name's original bytes
# (the stale stat above made it report "changed" and sign nothing).
rm -rf "$T/hl" && mkdir "$T/hl"
cp "$T/src/mod000.ko" "$T/hl/a.ko" && ln "$T/hl/a.ko" "$T/hl/b.ko"
SLOWTOKEN_SIGN_MS=$((1500 * SLOW_X)) timeout -k 3 "$LIMIT" "$MODSIGN" sha256 "$slow_uri" "$cert" "$T/hl/a.ko" >"$T/out1" 2>&1 &
bg_pid=$!
wait_locked "$T/hl/a.ko" || echo "(the first run was not seen holding a.ko)" >>"$T/out1"
run_ms sha256 "$key" "$cert" "$T/hl/b.ko"
wait "$bg_pid"
rc1=$?
bg_pid=""
if [ "$rc1" -eq 0 ] && [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/hl/a.ko" &&
	same "$T/ref/mod000.ko" "$T/hl/b.ko"; then
	t_pass "hard link, two runs at once, one per name: both names signed"
else
	t_fail "hard link, two runs at once, one per name: both names signed" \
		"ms_modfile_open keeps the stat taken before flock() waited?" \
		"first run: status $rc1 $(cat "$T/out1")" "second run: status $rc $(cat "$T/out")"
fi
# These normally take a second: a shorter limit for the hang.
hardlinked
LIMIT=$((LIMIT / 2 + 1)) run_ms -j 2 -r "$T/hl" sha256 "$uri" "$cert"
hl_check "hard links, -r over both directories, token, -j 2: every name signed"
hardlinked
LIMIT=$((LIMIT / 2 + 1)) run_ms -j 1 -b sha256 "$key" "$cert" "$T"/hl/x/mod00[0-2].ko "$T"/hl/y/mod00[0-2].ko \
	"$T"/hl/x/mod00[3-5].ko "$T"/hl/y/mod00[3-5].ko
hl_check "hard links, -b, PEM key, -j 1: every name signed"
no_temps "hard links: no temporary file left" "$T/hl"

# ---------------------------------------------------------------------------
# 5. A module replaced (mv) or changed in place by another process while it
# is being signed (slow token): left exactly as that process made it, named
# as changed, exit 1; the others signed.

cp "$T/src/mod007.ko" "$T/other.ko"
# Single module, replaced by mv.
mkdir -p "$T/rep"
cp "$T/src/mod000.ko" "$T/rep/m.ko"
SLOWTOKEN_SIGN_MS=$((1500 * SLOW_X)) timeout -k 3 "$LIMIT" "$MODSIGN" sha256 "$slow_uri" "$cert" "$T/rep/m.ko" >"$T/out" 2>&1 &
bg_pid=$!
caught=no
if wait_locked "$T/rep/m.ko"; then
	caught=yes
	cp "$T/other.ko" "$T/rep/.new" && mv "$T/rep/.new" "$T/rep/m.ko"
fi
wait "$bg_pid"
rc=$?
bg_pid=""
t_check "replaced during the run, single: caught modsign holding the module" test $caught = yes
expect_fail "replaced during the run, single: exit 1, named as changed" 1 \
	"$T/rep/m.ko: changed by another process"
t_check "replaced during the run, single: the replacement left as written" same "$T/other.ko" "$T/rep/m.ko"
no_temps "replaced during the run, single: no temporary file left" "$T/rep"

# Bulk, -j 1: mod001 replaced by mv, mod002 appended to, mod003 changed
# in place with its size and mtime restored (only ctime tells).
rm -rf "$T/rep" && mkdir "$T/rep" && cp "$T"/src/mod00[0-5].ko "$T/rep/"
SLOWTOKEN_SIGN_MS=$((700 * SLOW_X)) timeout -k 3 "$LIMIT" "$MODSIGN" -b -j 1 sha256 "$slow_uri" "$cert" "$T"/rep/*.ko \
	>"$T/out" 2>&1 &
bg_pid=$!
caught=""
wait_locked "$T/rep/mod001.ko" && caught="$caught 1" &&
	cp "$T/other.ko" "$T/rep/.new" && mv "$T/rep/.new" "$T/rep/mod001.ko"
wait_locked "$T/rep/mod002.ko" && caught="$caught 2" &&
	printf 'X' >>"$T/rep/mod002.ko"
if wait_locked "$T/rep/mod003.ko"; then
	caught="$caught 3"
	mt=$(stat -c %.9Y "$T/rep/mod003.ko")
	printf 'Z' | dd of="$T/rep/mod003.ko" bs=1 seek=100 conv=notrunc 2>/dev/null
	touch -m -d "@$mt" "$T/rep/mod003.ko"
fi
wait "$bg_pid"
rc=$?
bg_pid=""
cp "$T/src/mod002.ko" "$T/want2.ko" && printf 'X' >>"$T/want2.ko"
cp "$T/src/mod003.ko" "$T/want3.ko"
printf 'Z' | dd of="$T/want3.ko" bs=1 seek=100 conv=notrunc 2>/dev/null
t_check "changed during the run, -b: caught modsign holding each module" test "$caught" = " 1 2 3"
bad=""
for n in 1 2 3; do
	grep -q "$T/rep/mod00$n.ko: changed by another process" "$T/out" || bad="$bad mod00$n"
done
if [ "$rc" -eq 1 ] && [ -z "$bad" ]; then
	t_pass "changed during the run, -b: exit 1, each named as changed"
else
	t_fail "changed during the run, -b: exit 1, each named as changed" "status $rc, not named:$bad" \
		"$(cat "$T/out")"
fi
t_check "changed during the run, -b: the mv replacement left as written" \
	same "$T/other.ko" "$T/rep/mod001.ko"
t_check "changed during the run, -b: the appended module left as written" \
	same "$T/want2.ko" "$T/rep/mod002.ko"
t_check "changed during the run, -b: the module changed in place (mtime restored) left as written" \
	same "$T/want3.ko" "$T/rep/mod003.ko"
bad=""
for n in 0 4 5; do
	same "$T/ref/mod00$n.ko" "$T/rep/mod00$n.ko" || bad="$bad mod00$n"
done
if [ -z "$bad" ]; then
	t_pass "changed during the run, -b: the others signed"
else
	t_fail "changed during the run, -b: the others signed" "not signed:$bad" "$(cat "$T/out")"
fi
summary_is "changed during the run, -b: summary" \
	"3 signed, 3 failed, 0 refused (signed already), 0 skipped (signature verified), 0 not signed, of 6"
no_temps "changed during the run, -b: no temporary file left" "$T/rep"

# ---------------------------------------------------------------------------
# 6. Mode, owner and timestamps (as root), compared with sign-file.

mkdir "$T/own"
start=$(date +%s)
for w in ms sf; do
	cp "$T/src/mod000.ko" "$T/own/$w.ko"
	chown "$NOBODY:$NOGROUP" "$T/own/$w.ko" && chmod 640 "$T/own/$w.ko"
	touch -d 2001-02-03 "$T/own/$w.ko"
done
ino_before=$(stat -c %i "$T/own/ms.ko")
(umask 022 && "$SIGNFILE" sha256 "$key" "$cert" "$T/own/sf.ko")
echo "NOTE sign-file in place, module nobody:nogroup 0640 mtime 2001: result" \
	"$(stat -c '%U:%G %a' "$T/own/sf.ko"), mtime $(date -r "$T/own/sf.ko" +%F)"
run_ms sha256 "$key" "$cert" "$T/own/ms.ko"
t_check "owner: module signed (status $rc)" same "$T/ref/mod000.ko" "$T/own/ms.ko"
t_check "owner: nobody:nogroup kept" test "$(stat -c '%u:%g' "$T/own/ms.ko")" = "$NOBODY:$NOGROUP"
t_check "mode: 0640 kept" test "$(stat -c %a "$T/own/ms.ko")" = 640
# The content changed: mtime is the signing time, as with sign-file (make and
# rsync see a new file); it is a new inode (atomic rename), as with sign-file.
t_check "mtime: the signing time, as sign-file" test "$(stat -c %Y "$T/own/ms.ko")" -ge "$start"
t_check "inode: a new one, as sign-file" test "$(stat -c %i "$T/own/ms.ko")" != "$ino_before"

# A dest is the writer's (root's), mode from the module.
cp "$T/src/mod000.ko" "$T/own/d.ko" && chown "$NOBODY:$NOGROUP" "$T/own/d.ko" && chmod 640 "$T/own/d.ko"
cp -p "$T/own/d.ko" "$T/own/sd.ko"
(umask 022 && "$SIGNFILE" sha256 "$key" "$cert" "$T/own/sd.ko" "$T/own/sd-out.ko")
run_ms sha256 "$key" "$cert" "$T/own/d.ko" "$T/own/d-out.ko"
echo "NOTE with a dest: sign-file's is $(stat -c '%U:%G %a' "$T/own/sd-out.ko")," \
	"modsign's $(stat -c '%U:%G %a' "$T/own/d-out.ko") (module nobody:nogroup 0640)"
if [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/own/d-out.ko" &&
	[ "$(stat -c '%u %a' "$T/own/d-out.ko")" = "0 640" ] && same "$T/src/mod000.ko" "$T/own/d.ko"; then
	t_pass "dest: the writer's (root), the module's mode 0640, module untouched"
else
	t_fail "dest: the writer's (root), the module's mode 0640, module untouched" \
		"status $rc, $(stat -c '%u %a' "$T/own/d-out.ko")" "$(cat "$T/out")"
fi

# Bulk -r, PEM key: owners, groups and modes of every kind kept.
rm -rf "$T/own" && mkdir "$T/own" && cp "$T"/src/*.ko "$T/own/"
set -- "$NOBODY:$NOGROUP 600" "0:$NOGROUP 640" "12345:54321 644" "$NOBODY:0 755" \
	"0:0 400" "12345:0 444" "$NOBODY:$NOGROUP 660" "0:0 644"
i=0
want=""
for spec in "$@"; do
	m="$T/own/mod00$i.ko"
	chown "${spec% *}" "$m" && chmod "${spec#* }" "$m"
	want="$want$(stat -c '%u:%g %a' "$m");"
	i=$((i + 1))
done
run_ms -r "$T/own" sha256 "$key" "$cert"
got=""
for m in "$T"/own/*.ko; do got="$got$(stat -c '%u:%g %a' "$m");"; done
tally "$T/own" "$T/src" "$T/ref"
if [ "$rc" -eq 0 ] && [ "$n_signed" -eq 8 ] && [ "$got" = "$want" ]; then
	t_pass "-r, PEM key: every owner, group and mode kept"
else
	t_fail "-r, PEM key: every owner, group and mode kept" "status $rc, $n_signed signed" \
		"want $want" "got  $got" "$(cat "$T/out")"
fi

# Not root: a module of root's in the user's own directory can only become
# the user's (as after any editor's save, and with sign-file).
if as_nobody true 2>/dev/null; then
	cp "$T/src/mod000.ko" "$U/rw2/m.ko" && cp "$T/src/mod000.ko" "$U/rw2/sf.ko"
	(umask 022 && as_nobody "$SIGNFILE" sha256 "$U/key.pem" "$U/cert.der" "$U/rw2/sf.ko")
	as_nobody timeout -k 3 "$LIMIT" "$MS_NOBODY" sha256 "$U/key.pem" "$U/cert.der" "$U/rw2/m.ko" >"$T/out" 2>&1
	rc=$?
	echo "NOTE nobody signing root's 0644 module in its own directory: sign-file's result" \
		"$(stat -c '%U %a' "$U/rw2/sf.ko"), modsign's $(stat -c '%U %a' "$U/rw2/m.ko")"
	if [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$U/rw2/m.ko" &&
		[ "$(stat -c '%u %a' "$U/rw2/m.ko")" = "$NOBODY 644" ]; then
		t_pass "not root, someone else's module: signed, now the user's, mode kept"
	else
		t_fail "not root, someone else's module: signed, now the user's, mode kept" \
			"status $rc, $(stat -c '%u %a' "$U/rw2/m.ko")" "$(cat "$T/out")"
	fi
fi

no_temps "no temporary file left anywhere" "$T"
t_done
