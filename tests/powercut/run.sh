#!/bin/bash
# make powercut-check: "each module original or signed" under a
# real power cut. A Linux 6.1 guest under qemu signs a few hundred real
# modules on a virtio disk that qemu opens with cache=none (O_DIRECT), and
# the host SIGKILLs qemu at a random moment of the run: what the guest had
# only in its page cache is gone, as in a power cut. The next boot replays
# the journal, runs fsck, lists every file with its hash, finishes the job
# (--skip-signed), lists and fscks again; the host compares each module with
# its original bytes and with what sign-file makes of it. See README.md.
#
# Prints PASS/FAIL lines (two per cut), TIME lines, the summary line
#   powercut: N cuts (I inside a run), M modules checked, A original, B signed, C corrupted
# and ends with "powercut: N passed, N failed".
#
# Environment (and tests/kernel/lib.sh's MODSIGN_KERNEL_*):
#   POWERCUT_CUTS      cuts per file system (default 50)
#   POWERCUT_FS        file systems (default "ext4 ext4-noauto xfs")
#   POWERCUT_MODULES   modules per tree (default 300)
#   POWERCUT_SEED      seed of the random choices (default: random, printed)
#   POWERCUT_STOP      1: stop a file system at its first failed cut (mutants)
#   POWERCUT_DIRTY     "expire writeback" centiseconds for the guest's
#                      vm.dirty_* during a run (default: the kernel's, 3000 500)
#   MODSIGN            the modsign binary (default ./modsign, the release build)

MODSIGN=${MODSIGN:-$(cd "$(dirname "$0")/../.." && pwd)/modsign}
. "$(dirname "$0")/../lib/common.sh"
. "$TOP/tests/kernel/lib.sh"
. "$TOP/tests/lib/debkernel.sh"
# The cache holds kernel-check's three kernels and this one: keep them all.
[ "$KEEP_BUILDS" -lt 5 ] && KEEP_BUILDS=5

PDIR=$TOP/tests/powercut
CUTS=${POWERCUT_CUTS:-50}
FSES=${POWERCUT_FS:-ext4 ext4-noauto xfs}
NMOD=${POWERCUT_MODULES:-300}
SEED=${POWERCUT_SEED:-$(od -An -tu2 -N2 /dev/urandom | tr -d ' ')}
STOP=${POWERCUT_STOP:-0}
DIRTY=${POWERCUT_DIRTY:-}
# What a round runs; cut k of file system number f takes MODES[(k + 2f) % 7].
MODES=(bulk-pem bulk-token single-pem replace-token strip single-token replace-pem)
# Every how many modules of the sample one goes to the single-module loop.
SINGLE_EVERY=8
GUEST_MEM=512M
IMG_SIZE=512M
RANDOM=$SEED

# --- setup -------------------------------------------------------------

kc_setup powercut
need mke2fs e2fsck mkfs.xfs xfs_repair ldd truncate
[ -x "$SIGNFILE" ] || die "$SIGNFILE missing: scripts/install-deps.sh installs it"
echo "seed $SEED (POWERCUT_SEED=$SEED repeats the choices of modes and cut times)"

# Disk images need a file system that takes O_DIRECT (qemu's cache=none):
# not tmpfs. $T first, else the cache directory (on disk by its nature).
odirect_ok() {
	dd if=/dev/zero of="$1/.odirect" bs=4096 count=1 oflag=direct status=none 2>/dev/null
	local ok=$?
	rm -f "$1/.odirect"
	return $ok
}
IMG=$T/img
mkdir -p "$IMG"
if ! odirect_ok "$IMG"; then
	IMG=$(mktemp -d "$CACHE/powercut-img.XXXXXX")
	trap 'rm -rf "$IMG"; t_cleanup' EXIT
	odirect_ok "$IMG" || die "neither $T nor $CACHE takes O_DIRECT: qemu cannot open a disk with cache=none"
fi
t_pass "O_DIRECT accepted for the disk images in $IMG ($(findmnt -n -o FSTYPE -T "$IMG"))"

# --- modules -----------------------------------------------------------
# A sample of Debian 12's linux-image-6.1.0-*-amd64 (as verify.sh fetches
# it), Debian's signatures cut off: the unsigned tree u/; s/ holds the same
# modules signed by sign-file with rsa4096 (for --replace and strip).
# expect.tsv: path, sha256 of the unsigned module, of sign-file's sha256
# rsa2048 signature of it, of the rsa4096 one. Cached by package, sample
# size and the TEST-ONLY keys.

phase modules
deb=$(deb_fetch linux-image-amd64 'linux-image-6\.1\.0-[0-9]+-amd64') ||
	die "cannot fetch linux-image-6.1.0-*-amd64 (apt-get update first?)"
key=$({ basename "$deb"; echo "$NMOD 1"; cat "$DATA"/rsa2048.x509.pem "$DATA"/rsa4096.x509.pem
	"$SIGNFILE" 2>&1 | head -n 1; } | sha256sum | cut -c 1-16)
MODS=$CACHE/powercut-mods-$key
if [ ! -e "$MODS/.done" ]; then
	rm -rf "$MODS"
	mkdir -p "$MODS/deb"
	dpkg-deb --fsys-tarfile "$deb" | tar -t | grep '^\./lib/modules/.*/kernel/.*\.ko$' | sort \
		>"$MODS/all.list" || die "cannot list $deb"
	(. "$TOP/bench/setup.sh"; sample_list "$NMOD") <"$MODS/all.list" >"$MODS/sample.list"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$MODS/deb" -T "$MODS/sample.list" ||
		die "cannot unpack $deb"
	n=$(sed "s|^\.|$MODS/deb|" "$MODS/sample.list" |
		(. "$TOP/bench/setup.sh"; strip_signatures))
	[ "$n" -eq "$NMOD" ] || die "cut Debian's signature off $n of $NMOD modules"
	: >"$MODS/expect.tsv"
	while IFS= read -r m; do
		rel=${m#./lib/modules/*/kernel/}
		for t in u s; do mkdir -p "$MODS/tree/$t/$(dirname "$rel")"; done
		cp "$MODS/deb/$m" "$MODS/tree/u/$rel"
		"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem" \
			"$MODS/tree/u/$rel" "$MODS/a.ko" || die "sign-file failed on $rel"
		"$SIGNFILE" sha256 "$DATA/rsa4096.key.pem" "$DATA/rsa4096.x509.pem" \
			"$MODS/tree/u/$rel" "$MODS/tree/s/$rel" || die "sign-file failed on $rel"
		printf '%s\t%s\t%s\t%s\n' "$rel" \
			"$(sha256sum <"$MODS/tree/u/$rel" | cut -c 1-64)" \
			"$(sha256sum <"$MODS/a.ko" | cut -c 1-64)" \
			"$(sha256sum <"$MODS/tree/s/$rel" | cut -c 1-64)" >>"$MODS/expect.tsv"
	done <"$MODS/sample.list"
	rm -rf "$MODS/deb" "$MODS/a.ko"
	touch "$MODS/.done"
fi
EXPECT=$MODS/expect.tsv
awk -F '\t' 'NR % '"$SINGLE_EVERY"' == 1 { print "u/" $1 }' "$EXPECT" >"$T/single.list"
echo "$(grep -c . "$EXPECT") modules of $(basename "$deb") in $MODS" \
	"($(du -sm "$MODS/tree/u" | cut -f 1) MB unsigned), $(grep -c . "$T/single.list") in the single-module loop"

# --- the guest ---------------------------------------------------------
# Uncompressed initramfs: busybox, init, and each program with the shared
# libraries ldd names (and the loader) at their own paths.

phase initramfs
R=$T/initrd
mkdir -p "$R/bin" "$R/pc/bin" "$R/pc/keys" "$R/pc/hsm" "$R/etc"

# copy_elf FILE DEST: FILE at DEST in the initramfs, with its libraries.
copy_elf() {
	local lib
	mkdir -p "$R$(dirname "$2")"
	cp -L "$1" "$R$2" || die "cannot copy $1"
	ldd "$1" >"$T/.ldd" 2>&1 || die "ldd $1: $(cat "$T/.ldd")"
	for lib in $(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' "$T/.ldd"); do
		[ -e "$R$lib" ] && continue
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib" || die "cannot copy $lib"
	done
}
cp "$BUSYBOX" "$R/bin/busybox"
cp "$PDIR/init" "$R/init"
chmod 0755 "$R/init" "$R/bin/busybox"
copy_elf "$MODSIGN" /pc/bin/modsign
for tool in e2fsck mke2fs xfs_repair mkfs.xfs; do
	copy_elf "$(command -v "$tool")" "/pc/bin/$tool"
done
copy_elf "$SOFTHSM" "$SOFTHSM"
cp /etc/mke2fs.conf "$R/etc/" 2>/dev/null
cp "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem" "$R/pc/keys/"
"$TOP/tests/lib/mktoken.sh" "$T/hsm" modsign-test "$PIN" || die "mktoken.sh failed"
cp -a "$T/hsm/tokens" "$R/pc/hsm/"
printf 'directories.tokendir = /pc/hsm/tokens\nobjectstore.backend = file\nlog.level = ERROR\n' \
	>"$R/pc/hsm/softhsm2.conf"
(umask 077 && printf '%s' "$PIN" >"$R/pc/pin")
cp "$T/single.list" "$R/pc/single.list"
(cd "$R" && find . | sort | cpio -o -H newc -R 0:0 --quiet) >"$T/initrd.cpio" || die "cpio failed"
echo "initramfs: $(du -m "$T/initrd.cpio" | cut -f 1) MB, modsign $("$MODSIGN" --version 2>&1 | head -n 1)"

# The trees, on an ext4 image the setup boots copy from (mke2fs -d).
truncate -s 0 "$T/empty.img"
truncate -s 1M "$T/empty.img"
quietly mke2fs -q -F -t ext4 -d "$MODS/tree" "$IMG/src.img" 256M

kc_kernel powercut linux-source-6.1 kernel.config ../powercut/kernel-powercut.config

# --- boots -------------------------------------------------------------

BOOT_TIMEOUT=${MODSIGN_KERNEL_TIMEOUT:-600}
nboot=0

# boot_start LABEL VDA VDB ARGS...: starts qemu in the background (QPID),
# the console in $BD/console.log, the guest's lists on $BD/res.img (vdc).
boot_start() {
	local label=$1 vda=$2 vdb=$3
	shift 3
	nboot=$((nboot + 1))
	BD=$T/boot-$label
	mkdir -p "$BD"
	rm -f "$BD/res.img"
	truncate -s 4M "$BD/res.img"
	qemu-system-x86_64 -m "$GUEST_MEM" -smp 1 \
		-kernel "$OBJ/arch/x86/boot/bzImage" -initrd "$T/initrd.cpio" \
		-append "console=ttyS0 panic=-1 loglevel=1 no_timer_check $*" \
		-nographic -no-reboot -monitor none -serial "file:$BD/console.log" \
		-drive "file=$vda,format=raw,if=virtio,cache=none" \
		-drive "file=$vdb,format=raw,if=virtio,cache=none" \
		-drive "file=$BD/res.img,format=raw,if=virtio,cache=none" \
		-device virtio-rng-pci </dev/null >"$BD/qemu.log" 2>&1 &
	QPID=$!
}

# wait_for PATTERN SECONDS: 0 once the console shows PATTERN, 1 when qemu
# ended without it, 2 after SECONDS.
wait_for() {
	local end=$(($(date +%s) + $2))
	while :; do
		grep -aq -- "$1" "$BD/console.log" 2>/dev/null && return 0
		if ! kill -0 "$QPID" 2>/dev/null; then
			grep -aq -- "$1" "$BD/console.log" 2>/dev/null && return 0
			return 1
		fi
		[ "$(date +%s)" -ge "$end" ] && return 2
		sleep 0.05
	done
}

# power_cut: SIGKILL to qemu, the guest's power cut.
power_cut() {
	kill -KILL "$QPID" 2>/dev/null
	wait "$QPID" 2>/dev/null
}

# boot_end: waits for qemu to end by itself (the guest reboots).
boot_end() {
	local i=0
	while kill -0 "$QPID" 2>/dev/null && [ $i -lt $((BOOT_TIMEOUT * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -0 "$QPID" 2>/dev/null && power_cut
	wait "$QPID" 2>/dev/null
}

# results: the guest's lists of the last boot, in $BD/res.txt.
results() {
	tr -d '\0' <"$BD/res.img" | sed '/^END$/q' >"$BD/res.txt"
	tr -d '\r' <"$BD/console.log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' >"$BD/console.txt"
}

console_tail() {
	tail -n 25 "$BD/console.txt" 2>/dev/null
}

# ms_now: milliseconds since the epoch.
ms_now() {
	date +%s%3N
}

# rand_ms MAX: a random number of milliseconds in [0, MAX].
rand_ms() {
	echo $(((RANDOM * 32768 + RANDOM) % ($1 + 1)))
}

# --- checking ----------------------------------------------------------

# classify RES MODE DONE ENDED: the check lists of one cut (RES) against
# expect.tsv for a run of MODE; DONE lists the modules whose single-module
# call returned; ENDED is 1 when the run had ended. Prints "key value" lines:
#   before_orig/before_res/before_bad  the run's modules after the cut
#   temp_before, temp_after            modsign temp files before/after
#   after_bad                          modules not as the finished job leaves them
#   stray                              other files, other module changes
# and "why ..." lines naming each problem.
classify() {
	awk -v mode="$2" -v donefile="$3" -v ended="$4" -v single="$T/single.list" -F '\t' '
	BEGIN {
		tree = "u"; ocol = 2; rcol = 3
		if (mode ~ /^replace-/) { tree = "s"; ocol = 4; rcol = 3 }
		if (mode == "strip") { tree = "s"; ocol = 4; rcol = 2 }
		if (mode ~ /^single-/)
			while ((getline l < single) > 0) inset[l] = 1
		while ((getline l < donefile) > 0) done[l] = 1
	}
	FNR == NR {
		exp_u["u/" $1] = $2; exp_s["s/" $1] = $4
		res["u/" $1] = $3; res["s/" $1] = (mode == "strip") ? $2 : $3
		next
	}
	{
		split($0, w, " ")
		kind = w[1]; ph = w[2]
		if (kind == "H") { h[ph, w[4]] = w[3]; seen[ph, w[4]] = 1; files[ph, w[4]] = 1 }
		else if (kind == "Z") size[ph, w[4]] = w[3]
		else if (kind == "O") { stray++; print "why " ph ": not a regular file: " substr($0, index($0, w[3])) }
		else if (kind == "FSCK") fsck[ph] = w[3]
		else if (kind == "FINISH") finish = w[2]
		else if (kind == "MOUNT") mountfail = 1
	}
	END {
		for (p in exp_u) check(p, exp_u[p])
		for (p in exp_s) check(p, exp_s[p])
		for (k in files) {
			split(k, a, SUBSEP)
			if ((a[2] in exp_u) || (a[2] in exp_s)) continue
			# modsign temp names; 16 hex digits spelled out: mawk has
			# no {n}.
			if (a[2] ~ /(^|\/)\.[^\/]*\.modsign-[1-9][0-9]*-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]\.tmp$/ &&
			    substr(a[2], 1, 2) == tree "/") {
				t[a[1]]++
				if (a[1] == "after") print "why after: temp file left: " a[2]
				continue
			}
			stray++
			print "why " a[1] ": unexpected file " a[2] " (" size[a[1], a[2]] " bytes)"
		}
		printf "before_orig %d\nbefore_res %d\nbefore_bad %d\nafter_bad %d\n", bo, br, bb, ab
		printf "temp_before %d\ntemp_after %d\nstray %d\n", t["before"], t["after"], stray
		printf "fsck_cut %s\nfsck_finished %s\nfinish %s\nmount_failed %d\n", \
			fsck["cut"], fsck["finished"], finish, mountfail
	}
	function check(p, orig,   job, want, hb, ha) {
		job = substr(p, 1, 1) == tree && (mode !~ /^single-/ || (p in inset))
		hb = h["before", p]; ha = h["after", p]
		if (!seen["before", p]) {
			print "why before: " p " missing"; if (job) bb++; else stray++
		} else if (job) {
			if (hb == orig) bo++
			else if (hb == res[p]) br++
			else { bb++; print "why before: " p ": neither original nor signed (" size["before", p] " bytes)" }
			if ((ended || (p in done)) && hb != res[p])
				print "why before: " p ": its run had finished, but the disk has the " (hb == orig ? "original" : "damaged module")
		} else if (hb != orig) {
			stray++; print "why before: " p ": changed, though the run did not touch it"
		}
		want = (substr(p, 1, 1) == tree) ? res[p] : orig
		if (ha != want) {
			ab++; print "why after: " p ": " (seen["after", p] ? "not as the finished job leaves it" : "missing")
		}
	}' "$EXPECT" - <"$1"
}

# Totals of the summary line.
n_cuts=0 n_checked=0 n_orig=0 n_signed=0 n_bad=0

# judge LABEL MODE DONE ENDED: PASS/FAIL lines of one cut from $BD/res.txt.
judge() {
	local label=$1 mode=$2 k val ok=1 whyb whya
	local -A v
	classify "$BD/res.txt" "$mode" "$3" "$4" >"$BD/judged" 2>&1
	while read -r k val; do
		[ "$k" = why ] || v[$k]=$val
	done <"$BD/judged"
	mapfile -t whyb < <(grep '^why before' "$BD/judged" | cut -c 5- | head -n 12)
	mapfile -t whya < <(grep '^why after' "$BD/judged" | cut -c 5- | head -n 8)
	n_cuts=$((n_cuts + 1))
	n_checked=$((n_checked + v[before_orig] + v[before_res] + v[before_bad]))
	n_orig=$((n_orig + v[before_orig]))
	n_signed=$((n_signed + v[before_res]))
	n_bad=$((n_bad + v[before_bad]))
	if [ "${v[mount_failed]}" != 0 ] || [ "${v[fsck_cut]}" != 0 ] || [ "${v[before_bad]}" != 0 ] ||
		grep -q '^why before' "$BD/judged"; then
		ok=0
		t_fail "$label: after the cut, fsck clean and each module original or signed" \
			"fsck status ${v[fsck_cut]:-none}, ${v[before_orig]} original, ${v[before_res]} signed," \
			"${v[before_bad]} neither, ${v[temp_before]} temp files" "${whyb[@]}"
	else
		t_pass "$label: after the cut, fsck clean; ${v[before_orig]} original, ${v[before_res]} signed, 0 corrupted, ${v[temp_before]} temp files"
	fi
	if [ "${v[finish]}" != 0 ] || [ "${v[after_bad]}" != 0 ] || [ "${v[temp_after]}" != 0 ] ||
		[ "${v[fsck_finished]}" != 0 ] || grep -q '^why after' "$BD/judged"; then
		ok=0
		t_fail "$label: the job finished again leaves every module done, no temp file, fsck clean" \
			"status ${v[finish]:-none}, ${v[after_bad]} modules not done, ${v[temp_after]} temp files," \
			"fsck ${v[fsck_finished]:-none}" "${whya[@]}"
	else
		t_pass "$label: the job finished again: every module done, no temp file, fsck clean"
	fi
	[ $ok -eq 1 ]
}

# --- rounds ------------------------------------------------------------

declare -A calib	# mode -> milliseconds its uncut runs took (median)
declare -A lens		# mode -> those lengths, separated by spaces
n_inrun=0

# learn MODE MS: one more length of an uncut run of MODE; calib takes the
# median of them, so that a first run slowed by a cold cache or a busy host
# does not push every later cut of the mode past its end.
learn() {
	lens[$1]="${lens[$1]:-} $2"
	# shellcheck disable=SC2086  # split on purpose: one length per line
	calib[$1]=$(printf '%s\n' ${lens[$1]} | sort -n |
		awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
}
fsi=0
for fs in $FSES; do
	phase "setup $fs"
	pristine=$IMG/pristine-$fs.img
	rm -f "$pristine"
	truncate -s "$IMG_SIZE" "$pristine"
	boot_start "setup-$fs" "$pristine" "$IMG/src.img" "pc.step=setup pc.fs=$fs"
	boot_end
	results
	if grep -q '^SETUP ok' "$BD/res.txt" && grep -q '^FSCK setup 0' "$BD/res.txt"; then
		t_pass "$fs: file system made and the trees copied ($(grep -c . "$EXPECT") modules each)"
	else
		t_fail "$fs: file system made and the trees copied" "$(cat "$BD/res.txt")" "$(console_tail)"
		fsi=$((fsi + 1))
		continue
	fi

	phase "cuts $fs"
	prev_disk="" prev_mode="" prev_label="" caught=0
	for ((k = 1; k <= CUTS + 1; k++)); do
		mode="" disk=$T/empty.img
		if [ $k -le "$CUTS" ] && [ $caught -eq 0 ]; then
			mode=${MODES[$(((k + 2 * fsi) % ${#MODES[@]}))]}
			disk=$IMG/cut-$fs-$k.img
			cp --sparse=always "$pristine" "$disk"
		fi
		[ -z "$mode" ] && [ -z "$prev_mode" ] && break
		args="pc.step=round pc.fs=$fs${prev_mode:+ pc.check=$prev_mode}${mode:+ pc.run=$mode}"
		[ -n "$DIRTY" ] && args="$args pc.dirty=${DIRTY// /,}"
		boot_start "$fs-$k" "${prev_disk:-$T/empty.img}" "$disk" "$args"
		cut_at="" ran="" calibrating=0
		if [ -n "$mode" ]; then
			if wait_for 'PC-RUN-START' "$BOOT_TIMEOUT"; then
				t0=$(ms_now)
				if [ -z "${calib[$mode]:-}" ]; then
					# First run of this mode: let it end, learn how long it
					# takes, cut soon after its end.
					wait_for 'PC-RUN-END' "$BOOT_TIMEOUT"
					learn "$mode" $(($(ms_now) - t0))
					calibrating=1
					sleep "$(printf '0.%03d' "$(rand_ms 999)")"
				else
					# Anywhere in the run, or up to 30 % after its end.
					d=$(rand_ms $((calib[$mode] * 13 / 10)))
					sleep "$((d / 1000)).$(printf '%03d' $((d % 1000)))"
				fi
				cut_at=$(($(ms_now) - t0))
				power_cut
				ran="at $((cut_at / 1000)).$(printf '%03d' $((cut_at % 1000))) s of a $((calib[$mode] / 1000)).$(printf '%03d' $((calib[$mode] % 1000))) s run"
			else
				power_cut
			fi
		else
			boot_end
		fi
		results
		# The previous cut's disk was checked in this boot.
		if [ -n "$prev_mode" ]; then
			if grep -q '^END$' "$BD/res.txt" && grep -q 'PC-CHECK-END' "$BD/console.txt"; then
				judge "$prev_label" "$prev_mode" "$prev_done" "$prev_ended" || {
					[ "$STOP" = 1 ] && caught=1
					echo "    console of the check boot: $BD/console.txt"
				}
			else
				t_fail "$prev_label: the check boot ran" "$(console_tail)"
			fi
			rm -f "$prev_disk"
		fi
		prev_disk="" prev_mode="" prev_label=""
		if [ -n "$mode" ]; then
			if [ -z "$cut_at" ]; then
				t_fail "$fs cut $k ($mode): the run started" "$(console_tail)"
				rm -f "$disk"
				continue
			fi
			grep -a '^PC-DONE ' "$BD/console.txt" | cut -d ' ' -f 2 >"$BD/done.list"
			prev_disk=$disk prev_mode=$mode prev_done=$BD/done.list
			prev_ended=0
			grep -aq '^PC-RUN-END' "$BD/console.txt" && prev_ended=1
			if [ $prev_ended = 0 ]; then
				n_inrun=$((n_inrun + 1))
			elif [ $calibrating = 0 ] && len=$(grep -a '^PC-RUN-END ' "$BD/console.txt" |
				awk 'NR == 1 && $3 ~ /^[0-9]+$/ { print $3; ok = 1 } END { exit !ok }'); then
				learn "$mode" "$len"	# it ended before the cut: its length is known
				echo "    $mode: a run of $len ms; its cuts now over 1.3 x ${calib[$mode]} ms"
			fi
			grep -aq '^PC-RUN-END 0' "$BD/console.txt" || [ $prev_ended = 0 ] ||
				t_fail "$fs cut $k ($mode): the run ended with status 0" "$(grep -a -A 20 '^PC-RUN-END' "$BD/console.txt")"
			prev_label="$fs cut $k ($mode, $ran$([ $prev_ended = 1 ] && echo ", after its end"))"
		fi
	done
	rm -f "$pristine"
	fsi=$((fsi + 1))
done

phase ""
if grep -laF "$PIN" "$T"/boot-*/console.txt >"$T/.pinhits" 2>/dev/null; then
	t_fail "no test PIN in any guest console" "$(cat "$T/.pinhits")"
else
	t_pass "no test PIN in any guest console ($nboot boots)"
fi
echo "powercut: $n_cuts cuts ($n_inrun inside a run), $n_checked modules checked, $n_orig original, $n_signed signed, $n_bad corrupted"
kc_done
