# Shared by the kernel-check scripts (tests/kernel/{sign,kbuild,k612,k72,k72m}.sh),
# sourced after tests/lib/common.sh. Builds (and caches) the test kernels,
# packs initramfs images of cases, boots them under qemu and checks what the
# kernel said about each case. See tests/kernel/README.md.
#
# Environment: MODSIGN_KERNEL_CACHE (cache directory), MODSIGN_KERNEL_TIMEOUT
# (seconds for one qemu run, default 600), MODSIGN_KERNEL_JOBS (make -j,
# default 2), MODSIGN (the modsign binary, default ./modsign),
# MODSIGN_KERNEL_KEEP=1 (keep the work directory and print its path).

KDIR=$TOP/tests/kernel
CACHE=${MODSIGN_KERNEL_CACHE:-/var/cache/modsign-kernel}
TIMEOUT=${MODSIGN_KERNEL_TIMEOUT:-600}
JOBS=${MODSIGN_KERNEL_JOBS:-2}
BUSYBOX=/bin/busybox
# Bumped when the way a kernel is built changes, to invalidate the cache.
RECIPE=2
# How many kernel builds the cache keeps (the most recently used): 6.1,
# 6.12-xz, 6.12-zstd, 7.2-xz, 7.2-zstd, 7.2-mldsa, 7.2-mldsa-waive,
# powercut's and a spare.
KEEP_BUILDS=9

# --- helpers -----------------------------------------------------------

# die MESSAGE...: a setup step failed; report it as a failed case and stop.
die() {
	t_fail "setup" "$@"
	kc_done
	exit 1
}

kc_done() {
	phase ""
	if [ "$t_skipped" -eq 0 ]; then
		echo "$KC_NAME: $t_passed passed, $t_failed failed"
	else
		echo "$KC_NAME: $t_passed passed, $t_failed failed, $t_skipped skipped"
	fi
	[ "$t_failed" -eq 0 ]
}

# cpu_s: CPU seconds (user + system) this shell and its finished children
# used so far, from the last `times` written to $T/.times (which must run in
# this shell, not in a $(...) subshell). Unlike wall time it hardly depends
# on what else the machine runs, so it tells what a phase costs on an idle
# one.
cpu_s() {
	awk '{ for (i = 1; i <= NF; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } }
		END { printf "%d", s }' "$T/.times"
}

# phase NAME: prints how long the previous phase took, in wall and CPU time.
phase_start=$(date +%s)
phase_cpu=0
phase_name=""
phase() {
	local now cpu=0
	now=$(date +%s)
	if [ -n "${T:-}" ] && [ -d "$T" ]; then
		times >"$T/.times"
		cpu=$(cpu_s)
	fi
	[ -n "$phase_name" ] &&
		echo "TIME $KC_NAME $phase_name: $((now - phase_start))s (CPU $((cpu - phase_cpu))s)"
	phase_start=$now
	phase_cpu=$cpu
	phase_name=$1
}

quietly() {
	"$@" >"$T/.cmd" 2>&1 || die "command failed: $*" "$(tail -n 25 "$T/.cmd")"
}

need() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 ||
			die "$tool not found: install the packages listed in tests/kernel/README.md"
	done
}

# flip_byte FILE OFFSET: XOR one byte with 0x01 in place.
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N 1 "$1" | tr -d ' ')
	set_byte "$1" "$2" $((b ^ 1))
}

# set_byte FILE OFFSET VALUE: overwrite one byte in place.
set_byte() {
	printf '%b' "$(printf '\\%03o' "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

size_of() {
	stat -c %s "$1"
}

# is_signed FILE: the file ends in the module signature marker.
is_signed() {
	tail -c 28 "$1" | grep -q 'Module signature appended'
}

# kc_setup NAME: the work directory, the tools every script needs, the cache.
kc_setup() {
	KC_NAME=$1
	t_setup
	[ "${MODSIGN_KERNEL_KEEP:-0}" = 1 ] && trap 'echo "kept $T"' EXIT
	need apt-get dpkg-deb tar xz make gcc flex bison bc openssl cpio gzip flock \
		qemu-system-x86_64 timeout sha256sum softhsm2-util pkcs11-tool readelf
	[ -x "$MODSIGN" ] || die "$MODSIGN not built: run make modsign"
	[ -x "$BUSYBOX" ] || die "$BUSYBOX missing: install busybox-static"
	readelf -l "$BUSYBOX" 2>/dev/null | grep -q 'INTERP' &&
		die "$BUSYBOX is dynamically linked: install busybox-static"
	mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] ||
		die "cache directory $CACHE is not writable: set MODSIGN_KERNEL_CACHE"
	CACHE=$(cd "$CACHE" && pwd)
	# Every kernel trusts the TEST-ONLY certificates (and the key its build
	# generates); other-rsa2048 stays untrusted.
	cat "$DATA"/rsa2048.x509.pem "$DATA"/rsa4096.x509.pem "$DATA"/ec256.x509.pem \
		"$DATA"/ec384.x509.pem "$DATA"/ec521.x509.pem >"$T/trusted.pem"
}

# --- kernels -----------------------------------------------------------

# kc_apt_suite SUITE: apt-get options that make apt see only SUITE (Debian's
# unstable suite "sid", ...) of the machine's own archive: a private sources
# list in $CACHE/apt-SUITE naming the URI of the machine's release suite
# (the one without a "-updates"/"-security" part), and private package
# lists, so the machine's own apt state is neither read nor changed. Sets
# APT_OPTS.
kc_apt_suite() {
	local suite=$1 dir=$CACHE/apt-$1 uri
	uri=$("$TOP/scripts/host-mirror") || die "no Debian release suite in the machine's apt sources to take the $suite suite from"
	mkdir -p "$dir/lists/partial"
	echo "deb $uri $suite main" >"$dir/sources.list"
	APT_OPTS=(-o Dir::Etc::SourceList="$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o Dir::State::Lists="$dir/lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=)
}

# kc_source PKG [SUITE]: Debian's source package PKG (linux-source-6.1, ...),
# downloaded (from the machine's apt sources, or from SUITE of the same
# archive: kc_apt_suite) and unpacked in the cache. Sets SRC and DEBVER.
kc_source() {
	local pkg=$1 suite=${2:-} deb f srcdir
	phase "download $pkg"
	mkdir -p "$CACHE/deb"
	deb=$(ls "$CACHE"/deb/"${pkg}"_*_all.deb 2>/dev/null | sort -V | tail -n 1)
	if [ -z "$deb" ]; then
		APT_OPTS=()
		[ -z "$suite" ] || kc_apt_suite "$suite"
		rm -rf "$CACHE/deb/.partial"
		mkdir -p "$CACHE/deb/.partial"
		if ! (cd "$CACHE/deb/.partial" && apt-get "${APT_OPTS[@]}" download "$pkg") >"$T/.cmd" 2>&1; then
			# The package lists may be missing or stale: a private suite's
			# are ours to update; the machine's only root's.
			if [ -n "$suite" ] || [ "$(id -u)" -eq 0 ]; then
				# A failed update may still have fetched the list we need.
				apt-get "${APT_OPTS[@]}" update >"$T/.update" 2>&1
				(cd "$CACHE/deb/.partial" && apt-get "${APT_OPTS[@]}" download "$pkg") >"$T/.cmd" 2>&1 ||
					die "apt-get download $pkg ${suite:+(suite $suite) }failed" \
						"$(tail -n 5 "$T/.update")" "$(tail -n 5 "$T/.cmd")"
			else
				die "apt-get download $pkg failed (apt-get update first?)" "$(tail -n 5 "$T/.cmd")"
			fi
		fi
		for f in "$CACHE"/deb/.partial/"${pkg}"_*_all.deb; do
			dpkg-deb --info "$f" >/dev/null 2>&1 || die "apt-get download gave a broken $f"
			mv "$f" "$CACHE/deb/"
		done
		rm -rf "$CACHE/deb/.partial"
		deb=$(ls "$CACHE"/deb/"${pkg}"_*_all.deb 2>/dev/null | sort -V | tail -n 1)
		[ -n "$deb" ] || die "apt-get download $pkg left no .deb in $CACHE/deb"
		echo "downloaded $(basename "$deb")${suite:+ from $suite}"
	fi
	DEBVER=$(basename "$deb" _all.deb)
	DEBVER=${DEBVER#"${pkg}"_}

	phase "extract $pkg"
	# A Debian version may hold '~', which kbuild paths had better not.
	srcdir=$CACHE/src-${DEBVER//\~/_}
	SRC=$srcdir/$pkg
	if [ ! -e "$srcdir/.done" ]; then
		rm -rf "$srcdir"
		mkdir -p "$srcdir"
		dpkg-deb --fsys-tarfile "$deb" | tar -xO "./usr/src/$pkg.tar.xz" |
			nice -n 10 tar -xJ -C "$srcdir" ||
			die "unpacking $deb failed"
		[ -f "$SRC/Makefile" ] || die "no $SRC/Makefile after unpacking $deb"
		touch "$srcdir/.done"
		echo "unpacked $pkg $DEBVER"
	fi
}

# kc_kernel NAME PKG[/SUITE] FRAGMENT...: the kernel of Debian's source
# package PKG (from SUITE, as apt-get names it, when given: kc_source),
# `make tinyconfig` plus the config FRAGMENTs (files in tests/kernel; a later
# fragment's line for an option overrides an earlier one's) and
# CONFIG_SYSTEM_TRUSTED_KEYS, built with `make bzImage modules` under
# nice. Cached in $CACHE/build-<key>, the key a hash of everything that goes
# into it. With KC_SEED set to another build's directory (a kernel that
# differs in a few options), a cold build starts from a copy of that one's
# objects and kbuild recompiles only what the changed options touch.
# Sets SRC, OBJ (the build tree), KB (its cache directory) and KVER.
kc_kernel() {
	local name=$1 pkg=${2%%/*} suite='' key frag line opt missing old
	[ "$2" = "$pkg" ] || suite=${2#*/}
	shift 2
	# One lock for the downloads and unpacking, one per build: runs that
	# need different kernels do not wait for each other's builds.
	exec 9>"$CACHE/.lock"
	flock 9 || die "cannot lock $CACHE/.lock"
	kc_source "$pkg" "$suite"
	exec 9>&-
	for frag in "$@"; do
		[ -f "$KDIR/$frag" ] || die "no config fragment $KDIR/$frag"
	done
	key=$({ echo "recipe $RECIPE $pkg $DEBVER"; gcc --version | head -n 1;
		for frag in "$@"; do cat "$KDIR/$frag"; done; cat "$T/trusted.pem"; } |
		sha256sum | cut -c 1-16)
	KB=$CACHE/build-$key
	OBJ=$KB/obj
	exec 9>"$CACHE/.lock-$key"
	flock 9 || die "cannot lock $CACHE/.lock-$key"
	if [ -e "$KB/.done" ]; then
		phase "reuse $name"
		echo "reusing the $name kernel built in $KB"
	else
		phase "configure $name"
		rm -rf "$KB"
		mkdir -p "$KB"
		if [ -n "${KC_SEED:-}" ] && [ -e "$KC_SEED/.done" ]; then
			cp -a "$KC_SEED/obj" "$OBJ" || die "copying $KC_SEED/obj failed"
			echo "starting from the objects of $KC_SEED"
		else
			mkdir -p "$OBJ"
		fi
		cp "$T/trusted.pem" "$KB/trusted.pem"
		quietly make -C "$SRC" O="$OBJ" tinyconfig
		{ for frag in "$@"; do cat "$KDIR/$frag"; done
		  echo "CONFIG_SYSTEM_TRUSTED_KEYS=\"$KB/trusted.pem\""; } >"$KB/fragment.config"
		cat "$KB/fragment.config" >>"$OBJ/.config"
		quietly make -C "$SRC" O="$OBJ" olddefconfig
		missing=""
		# Each option's last line in the fragments is the one in effect.
		awk '{ opt = $0 }
			/^CONFIG_[A-Za-z0-9_]*=/ { sub(/=.*/, "", opt) }
			/^# CONFIG_[A-Za-z0-9_]* is not set$/ { opt = $2 }
			opt == $0 { next }
			{ last[opt] = $0; if (!(opt in seen)) { seen[opt] = 1; order[++n] = opt } }
			END { for (i = 1; i <= n; i++) print last[order[i]] }' \
			"$KB/fragment.config" >"$KB/fragment.effective"
		while IFS= read -r line; do
			case $line in
			CONFIG_*=*)
				grep -qxF "$line" "$OBJ/.config" || missing="$missing $line" ;;
			"# CONFIG_"*" is not set")
				opt=${line#\# }
				opt=${opt%% *}
				grep -q "^$opt=" "$OBJ/.config" && missing="$missing $line" ;;
			esac
		done <"$KB/fragment.effective"
		[ -z "$missing" ] || die "after olddefconfig these lines of the $name config fragments are not in effect:" $missing
		echo "config: every line of $* is in .config"

		phase "build $name"
		echo "building $pkg $DEBVER ($name: tinyconfig + $*), log in $KB/build.log"
		nice -n 10 make -C "$SRC" O="$OBJ" -j"$JOBS" bzImage modules >"$KB/build.log" 2>&1 ||
			die "kernel build failed, see $KB/build.log" "$(tail -n 25 "$KB/build.log")"
		[ -f "$OBJ/arch/x86/boot/bzImage" ] || die "no bzImage after the build"
		touch "$KB/.done"
		ls -1dt "$CACHE"/build-* 2>/dev/null | tail -n +$((KEEP_BUILDS + 1)) | while read -r old; do
			echo "removing old build $old"
			rm -rf "$old" "$CACHE/.lock-${old##*/build-}"
		done
	fi
	# The directory's time orders the builds for eviction (most recently
	# used first): a reuse counts as a use.
	touch "$KB/.done" "$KB"
	exec 9>&-
	KVER=$(cat "$OBJ/include/config/kernel.release" 2>/dev/null)
	[ -n "$KVER" ] || die "no kernel.release in $OBJ"
}

# kc_tree_copy DIR: a private copy of the build tree $OBJ in DIR (the cache
# stays as built: the kbuild cases install modsign as its scripts/sign-file
# and may run `make clean` in it). Sets TREE.
kc_tree_copy() {
	rm -rf "$1"
	cp -a "$OBJ" "$1" || die "copying $OBJ failed"
	TREE=$1
}

# kc_srctree_patched DIR PATCH: a source tree in DIR that is $SRC with
# PATCH applied to scripts/Makefile.modinst, and nothing else copied: every
# other entry is a symbolic link into $SRC. kbuild takes srctree from the
# directory of the Makefile it is given, without resolving links below it.
# Sets PSRC.
kc_srctree_patched() {
	local dir=$1 patch=$2 e
	rm -rf "$dir"
	mkdir -p "$dir/scripts"
	for e in "$SRC"/* "$SRC"/.[!.]*; do
		[ -e "$e" ] || continue
		[ "$(basename "$e")" = scripts ] && continue
		ln -s "$e" "$dir/"
	done
	for e in "$SRC"/scripts/* "$SRC"/scripts/.[!.]*; do
		[ -e "$e" ] || continue
		[ "$(basename "$e")" = Makefile.modinst ] && continue
		ln -s "$e" "$dir/scripts/"
	done
	patch -s -o "$dir/scripts/Makefile.modinst" "$SRC/scripts/Makefile.modinst" <"$patch" \
		>"$T/.patch" 2>&1 || die "$(basename "$patch") does not apply to $SRC" "$(cat "$T/.patch")"
	PSRC=$dir
}

# --- cases -------------------------------------------------------------
# Each module that goes into an initramfs is one case: an id (cNNN), the
# module name, how init loads it, and what must happen: LOADED (with an
# optional extended regular expression the kernel log must match), or
# REFUSED with one the refusal (the loader's message and the kernel's log
# lines) must match. kc_initrd starts a new initramfs; the cases added after
# it go into it, and kc_boot boots it.

ncase=0

# kc_initrd NAME: a new initramfs in $T/boot-NAME. Sets BD.
kc_initrd() {
	BD=$T/boot-$1
	rm -rf "$BD"
	mkdir -p "$BD/initrd/bin" "$BD/initrd/m"
	: >"$BD/initrd/cases"
	: >"$BD/expect"
}

# add_case NAME MODULE FILE EXPECT [PATTERN [HOW]]: FILE is copied into the
# initramfs; HOW is insmod (busybox, the default), finit (kc-finit: the
# kernel decompresses) or modprobe (busybox, by MODULE, from the
# /lib/modules tree of the initramfs; FILE is ignored). A kc_* module that
# must load must also have printed its "loaded" line.
add_case() {
	local id name=$1 mod=$2 file=$3 expect=$4 pattern=${5:-} how=${6:-insmod} ext
	ncase=$((ncase + 1))
	id=$(printf 'c%03d' "$ncase")
	case $file in
	*.ko.xz) ext=.ko.xz ;;
	*.ko.zst) ext=.ko.zst ;;
	*.ko.gz) ext=.ko.gz ;;
	*) ext=.ko ;;
	esac
	[ "$how" = modprobe ] || cp "$file" "$BD/initrd/m/$id$ext"
	if [ "$expect" = LOADED ] && [ -z "$pattern" ]; then
		case $mod in kc_*) pattern="$mod: loaded" ;; esac
	fi
	printf '%s %s %s %s\n' "$id" "$mod" "$how" "$id$ext" >>"$BD/initrd/cases"
	printf '%s\t%s\t%s\t%s\n' "$id" "$expect" "$name" "$pattern" >>"$BD/expect"
}

# kc_boot LABEL: packs $BD/initrd with busybox, init (and kc-finit when
# built), boots $OBJ's bzImage on it, checks that init ran every case, and
# leaves the console in $BD/console.txt.
kc_boot() {
	local label=$1 qrc n
	phase "boot $label"
	n=$(grep -c . "$BD/initrd/cases")
	cp "$BUSYBOX" "$BD/initrd/bin/busybox"
	cp "$KDIR/init" "$BD/initrd/init"
	[ -x "$T/kc-finit" ] && cp "$T/kc-finit" "$BD/initrd/bin/kc-finit"
	chmod 0755 "$BD/initrd/init" "$BD/initrd/bin/busybox"
	(cd "$BD/initrd" && find . | sort | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$BD/initrd.cpio.gz" ||
		die "cpio failed"
	nice -n 10 timeout "$TIMEOUT" qemu-system-x86_64 -m 256M -smp 1 \
		-kernel "$OBJ/arch/x86/boot/bzImage" -initrd "$BD/initrd.cpio.gz" \
		-append "console=ttyS0 panic=-1 loglevel=1 no_timer_check" \
		-nographic -no-reboot -monitor none -serial "file:$BD/console.log" </dev/null >"$BD/qemu.log" 2>&1
	qrc=$?
	tr -d '\r' <"$BD/console.log" | sed 's/\x1b\[[0-9;?]*[A-Za-z]//g' >"$BD/console.txt"
	[ $qrc -eq 124 ] && t_fail "boot $label: qemu ended within ${TIMEOUT}s" "$(tail -n 20 "$BD/console.txt")"
	[ $qrc -ne 0 ] && [ $qrc -ne 124 ] && t_fail "boot $label: qemu exit status $qrc" "$(cat "$BD/qemu.log")"
	if grep -q "^KC-END $n\$" "$BD/console.txt"; then
		t_pass "boot $label: $(sed -n 's/.*KC-BEGIN //p' "$BD/console.txt") booted, init ran all $n cases"
	else
		t_fail "boot $label: init ran all $n cases" "$(tail -n 20 "$BD/console.txt")"
	fi
	grep '^KC-RMMOD-FAILED' "$BD/console.txt" && t_fail "boot $label: every loaded module unloaded again"
}

# kc_results: PASS/FAIL for each case of the last boot.
kc_results() {
	local id expect name pattern line got mod mods
	phase "results"
	while IFS="$(printf '\t')" read -r id expect name pattern; do
		line=$(grep "^KC-RESULT $id " "$BD/console.txt" | head -n 1)
		got=${line#KC-RESULT $id }
		mod=$(awk -v id="$id" '$1 == id { print $2 }' "$BD/initrd/cases")
		case $expect:$got in
		LOADED:LOADED*)
			mods=${got#LOADED [}
			mods=${mods%%]*}
			if ! echo " $mods " | grep -q " $mod "; then
				t_fail "$name" "loaded, but $mod is not in /proc/modules: $got"
			elif [ -n "$pattern" ] && ! echo "$got" | grep -Eq -- "$pattern"; then
				t_fail "$name" "loaded, but the kernel log does not match $pattern: $got"
			else
				t_pass "$name"
			fi ;;
		REFUSED:REFUSED*)
			if echo "$got" | grep -Eq -- "$pattern"; then
				t_pass "$name"
				# insmod tries finit_module, then init_module: each logs once.
				echo "${got#REFUSED }" | sed 's/ *| */\n/g' | awk 'NF && !seen[$0]++ { print "    " $0 }'
			else
				t_fail "$name" "refused, but not as expected ($pattern): $got"
			fi ;;
		*:)
			t_fail "$name" "no result line for $id" ;;
		*)
			t_fail "$name" "want $expect, got: $got" ;;
		esac
	done <"$BD/expect"
	[ "$t_failed" -ne 0 ] && echo "console log: $(grep -c . "$BD/console.txt") lines; rerun with MODSIGN_KERNEL_KEEP=1 to keep $T"
	return 0
}

# kc_finit: builds the static kc-finit loader into $T/kc-finit.
kc_finit() {
	quietly gcc -static -O2 -Wall -Wextra -Werror -o "$T/kc-finit" "$KDIR/kc-finit.c"
}

# kc_testmods DIR SRCDIR MODULE...: builds the out-of-tree modules of
# tests/kernel/SRCDIR against $OBJ in DIR, unsigned.
kc_testmods() {
	local dir=$1 srcdir=$2 m
	shift 2
	rm -rf "$dir"
	mkdir -p "$dir"
	cp "$KDIR/$srcdir"/Kbuild "$KDIR/$srcdir"/*.c "$dir/"
	quietly nice -n 10 make -C "$SRC" O="$OBJ" M="$dir" -j"$JOBS" modules
	for m in "$@"; do
		[ -f "$dir/$m.ko" ] || die "$m.ko was not built"
		is_signed "$dir/$m.ko" && die "$m.ko came out of the kernel build signed"
	done
	return 0
}

# --- kbuild runs -------------------------------------------------------

# kc_modules_install JOBS SRCTREE TREE EXT STAGE [MAKE-ARGS...]: `make
# -jJOBS modules_install` of the in-tree modules of TREE, then of the
# out-of-tree ones of EXT (M=), into STAGE. Exported: kinstall runs it in a
# child of `modsign agent`.
kc_modules_install() {
	local jobs=$1 src=$2 tree=$3 ext=$4 stage=$5
	shift 5
	nice -n 10 make -C "$src" O="$tree" -j"$jobs" INSTALL_MOD_PATH="$stage" "$@" modules_install &&
	nice -n 10 make -C "$src" O="$tree" -j"$jobs" M="$ext" INSTALL_MOD_PATH="$stage" "$@" modules_install
}
export -f kc_modules_install

# kinstall RUN SRCTREE TREE EXT STAGE [MAKE-ARGS...]: kc_modules_install,
# with slowtoken's call log in $T/p11-RUN.log and make's output in
# $T/make-RUN.log; with KC_AGENT set to a key, both makes run under one
# `modsign agent KC_AGENT`. Fails when either make fails.
kinstall() {
	local run=$1 src=$2 tree=$3 ext=$4 stage=$5 rc
	shift 5
	rm -rf "$stage"
	export SLOWTOKEN_LOG=$T/p11-$run.log
	: >"$SLOWTOKEN_LOG"
	${KC_AGENT:+"$MODSIGN" agent "$KC_AGENT" --} bash -c 'kc_modules_install "$@"' kinstall \
		"$JOBS" "$src" "$tree" "$ext" "$stage" "$@" >"$T/make-$run.log" 2>&1
	rc=$?
	unset SLOWTOKEN_LOG
	return $rc
}

# have_agent WHAT: modsign has `modsign agent`; without it, prints a NOTE
# that WHAT is not run, and fails.
have_agent() {
	"$MODSIGN" --help 2>&1 | grep -q 'modsign agent' && return 0
	echo "NOTE modsign has no agent: $1 not run"
	return 1
}

# make_failed NAME LOG: a failed make is a failed case, with its last lines.
make_failed() {
	t_fail "$1: make succeeds" "$(tail -n 15 "$2")"
}

# modules_of STAGE [SUFFIX]: every installed module (.ko or SUFFIX), sorted.
modules_of() {
	find "$1" -name "*${2:-.ko}" -type f | sort
}

# check_calls NAME LOG INIT LOGIN PROCS: slowtoken's LOG shows INIT
# C_Initialize and LOGIN C_Login calls from PROCS processes.
check_calls() {
	local name=$1 log=$2 i l p
	i=$(grep -c '^C_Initialize ' "$log")
	l=$(grep -c '^C_Login ' "$log")
	p=$(sed -n 's/.* pid=\([0-9]*\).*/\1/p' "$log" | sort -u | grep -c .)
	if [ "$i" -eq "$3" ] && [ "$l" -eq "$4" ] && [ "$p" -eq "$5" ]; then
		t_pass "$name: the token saw $i C_Initialize, $l C_Login from $p processes"
	else
		t_fail "$name: the token saw $3 C_Initialize, $4 C_Login from $5 processes" \
			"got $i C_Initialize, $l C_Login from $p processes"
	fi
}

# no_pin_in_make_logs: no make output of this part shows the PIN.
no_pin_in_make_logs() {
	if grep -lF "$PIN" "$T"/make-*.log >"$T/.cmd" 2>/dev/null; then
		t_fail "no PIN in the output of make" "$(cat "$T/.cmd")"
	else
		t_pass "no PIN in the output of make ($(ls "$T"/make-*.log | wc -l) logs)"
	fi
}

# token_key LABEL ID OBJ: the signing key of the kernel build OBJ
# (certs/signing_key.pem) onto the test token.
token_key() {
	openssl pkey -in "$3/certs/signing_key.pem" -out "$T/signing.key.pem" 2>"$T/.cmd" ||
		die "openssl pkey: $(cat "$T/.cmd")"
	quietly softhsm2-util --import "$T/signing.key.pem" --token modsign-test --label "$1" \
		--id "$2" --pin "$PIN"
	rm -f "$T/signing.key.pem"
}

# cert_uri NAME: the URI of a certificate on the test token, by label.
cert_uri() {
	printf 'pkcs11:token=modsign-test;object=%s;type=cert?module-path=%s' "$1" "$SOFTHSM"
}

# --- compressed modules (k612.sh, k72.sh) --------------------------------
# These use the caller's n_all (modules each install holds), CERT (the
# kernel's certificate) and, for direct, DIRECT_MODS (the directory of the
# unsigned out-of-tree test modules).

# unpack FILE OUT: the module inside a .ko.xz or .ko.zst.
unpack() {
	case $1 in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -q -dc "$1" >"$2" ;;
	esac
}

# check_compressed RUN STAGE SUFFIX COUNT CERT [unsigned]: COUNT modules
# with SUFFIX and no .ko left; each a stream the kernel's decoder takes (xz:
# a CRC32 check; zstd: one frame), and the module inside signed and
# verified against CERT (or, with "unsigned", not signed).
check_compressed() {
	local run=$1 stage=$2 suffix=$3 want=$4 cert=$5 mode=${6:-signed} n f bad=""
	n=$(modules_of "$stage" "$suffix" | grep -c .)
	if [ "$n" -ne "$want" ] || [ -n "$(modules_of "$stage" .ko)" ]; then
		t_fail "$run: $want $suffix modules installed, no .ko" "$(find "$stage" -name '*.ko*')"
		return
	fi
	for f in $(modules_of "$stage" "$suffix"); do
		case $suffix in
		.ko.xz)
			xz --robot --list "$f" 2>/dev/null | grep -q '^file.*	CRC32	' ||
				bad="$bad ${f#"$stage"/}(not xz with CRC32)" ;;
		.ko.zst)
			zstd -q -t "$f" 2>/dev/null || bad="$bad ${f#"$stage"/}(not zstd)" ;;
		esac
		unpack "$f" "$T/.unpacked.ko" || bad="$bad ${f#"$stage"/}(does not decompress)"
		if [ "$mode" = unsigned ]; then
			is_signed "$T/.unpacked.ko" && bad="$bad ${f#"$stage"/}(signed)"
		elif ! is_signed "$T/.unpacked.ko"; then
			bad="$bad ${f#"$stage"/}(unsigned inside)"
		elif ! "$MODSIGN" verify -c "$cert" "$T/.unpacked.ko" >"$T/.verify" 2>&1; then
			bad="$bad ${f#"$stage"/}($(head -n 1 "$T/.verify"))"
		fi
	done
	if [ -z "$bad" ]; then
		t_pass "$run: $n $suffix modules installed, each $mode inside"
	else
		t_fail "$run: $want $suffix modules, each $mode inside" "bad:$bad"
	fi
}

# load_compressed RUN STAGE SUFFIX: each installed module must load,
# decompressed by the kernel (kc-finit).
load_compressed() {
	local run=$1 stage=$2 suffix=$3 f mod
	for f in $(modules_of "$stage" "$suffix"); do
		mod=$(basename "$f" "$suffix")
		mod=${mod//-/_}
		add_case "$run: loads ${f#"$stage"/lib/modules/*/}" "$mod" "$f" LOADED "" finit
	done
}

# same_files NAME STAGE REF-STAGE SUFFIX: every module of STAGE byte for byte
# as in REF-STAGE.
same_files() {
	local name=$1 stage=$2 ref=$3 f differ=""
	for f in $(modules_of "$stage" "$4"); do
		cmp -s "$f" "$ref/${f#"$stage"/}" || differ="$differ ${f#"$stage"/}"
	done
	if [ -z "$differ" ]; then
		t_pass "$name: every ${4} byte for byte as $(basename "$ref")'s"
	else
		t_fail "$name: every ${4} byte for byte as $(basename "$ref")'s" "differ:$differ"
	fi
}

# dropin RUN TREE EXT STAGE SUFFIX URI [SRCTREE CALLS]: modsign as TREE's
# scripts/sign-file, `make -j2 modules_install` with the key URI: kbuild
# signs each module, then compresses it; one token start-up and login per
# module (under KC_AGENT: one in all), or CALLS of each with the kbuild
# source tree SRCTREE (a patched one: kc_srctree_patched).
dropin() {
	local run=$1 tree=$2 ext=$3 stage=$4 suffix=$5 uri=$6 src=${7:-$SRC} calls=${8:-$n_all}
	[ -n "${KC_AGENT:-}" ] && calls=1
	if kinstall "${run%% *}" "$src" "$tree" "$ext" "$stage" CONFIG_MODULE_SIG_ALL=y \
		CONFIG_MODULE_SIG_KEY="$uri"; then
		check_compressed "$run" "$stage" "$suffix" "$n_all" "$CERT"
		check_calls "$run (${KC_AGENT:+under the agent: }$calls login$([ "$calls" = 1 ] || echo s))" \
			"$T/p11-${run%% *}.log" "$calls" "$calls" "$calls"
		load_compressed "$run" "$stage" "$suffix"
	else
		make_failed "$run" "$T/make-${run%% *}.log"
	fi
}

# two_stage RUN STAGE SUFFIX URI: STAGE, installed unsigned and compressed,
# signed by one `modsign -b -r`: each module signed inside, one login.
two_stage() {
	local run=$1 stage=$2 suffix=$3 uri=$4
	export SLOWTOKEN_LOG=$T/p11-${run%% *}.log
	: >"$SLOWTOKEN_LOG"
	if "$MODSIGN" -b -r "$stage/lib/modules" sha512 "$uri" "$CERT" >"$T/.sign" 2>&1; then
		check_compressed "$run: one modsign -b -r" "$stage" "$suffix" "$n_all" "$CERT"
		check_calls "$run: one modsign -b -r" "$SLOWTOKEN_LOG" 1 1 1
		load_compressed "$run" "$stage" "$suffix"
	else
		t_fail "$run: modsign -b -r" "$(cat "$T/.sign")"
	fi
	unset SLOWTOKEN_LOG
}

# direct NAME MODULE EXPECT PATTERN -- MODSIGN-ARGS: a fresh copy of the
# uncompressed test module MODULE of DIRECT_MODS, signed by modsign with
# MODSIGN-ARGS, loaded by insmod. Sets LAST to the signed file ("" when
# modsign failed) and leaves modsign's output in $T/.sign.
direct() {
	local name=$1 mod=$2 expect=$3 pattern=$4 f
	shift 5
	f=$T/w/$ncase.$mod.ko
	mkdir -p "$T/w"
	cp "$DIRECT_MODS/$mod.ko" "$f"
	if "$MODSIGN" "$@" "$f" >"$T/.sign" 2>&1; then
		add_case "$name" "$mod" "$f" "$expect" "$pattern"
		LAST=$f
	else
		t_fail "sign: $name" "modsign $* $f" "$(cat "$T/.sign")"
		LAST=""
	fi
}

# sign_matrix PREFIX MODULE HASHES KEYS: for each hash of HASHES and each
# TEST-ONLY key of KEYS, from the PEM file and from the token (direct):
# MODULE signed by modsign loads, and `openssl cms -verify` accepts the
# signature.
sign_matrix() {
	local prefix=$1 mod=$2 hashes=$3 keys=$4 h k src
	for h in $hashes; do
		for k in $keys; do
			for src in pem token; do
				if [ $src = pem ]; then
					set -- "$DATA/$k.key.pem" "$DATA/$k.x509.pem"
				else
					set -- "$(key_uri "$k")" "$(cert_uri "$k")"
				fi
				direct "$prefix: modsign $h $k $src loads" "$mod" LOADED "" -- "$h" "$@"
				[ -n "$LAST" ] || continue
				if openssl_verify "$LAST" "$DIRECT_MODS/$mod.ko" "$DATA/$k.x509.pem"; then
					t_pass "$prefix: openssl cms -verify accepts modsign's $h $k $src signature"
				else
					t_fail "$prefix: openssl cms -verify accepts modsign's $h $k $src signature" \
						"$(cat "$T/.verify")"
				fi
			done
		done
	done
}

# signfile_case NAME MODULE HASH KEY: MODULE of DIRECT_MODS signed by the
# kernel's own sign-file (OpenSSL) with HASH and the TEST-ONLY key KEY
# must load: the oracle that the kernel takes what modsign's cases test.
signfile_case() {
	local f=$T/w/$ncase.signfile.ko
	mkdir -p "$T/w"
	cp "$DIRECT_MODS/$2.ko" "$f"
	if "$OBJ/scripts/sign-file" "$3" "$DATA/$4.key.pem" "$DATA/$4.x509.pem" "$f" >"$T/.sign" 2>&1; then
		add_case "$1" "$2" "$f" LOADED
	else
		t_fail "$1: sign-file $3" "$(cat "$T/.sign")"
	fi
}

# --- a pair of kernels, xz and zstd (k612.sh, k72.sh) ----------------------
# Both scripts build one kernel per compression format and share this
# layout: OBJ_XZ/OBJ_ZST (builds), $T/ext-xz, $T/ext-zst (the test modules
# built against each), $T/tree-{xz,zst}-{sf,ms} (private tree copies, the
# -ms ones with modsign as scripts/sign-file), URI_XZ/URI_ZST (each build's
# own key on the test token, through the slowtoken shim).

# kc_use xz|zst: the cases from here on are for that kernel: OBJ, KVER and
# CERT (its certificate) are its, and a new initramfs is started.
kc_use() {
	if [ "$1" = xz ]; then
		OBJ=$OBJ_XZ
		KVER=$KVER_XZ
	else
		OBJ=$OBJ_ZST
		KVER=$KVER_ZST
	fi
	CERT=$OBJ/certs/signing_key.x509
	kc_initrd "$1"
}

# kc_pair_setup LABEL ID: the test modules, the token with both build keys
# (labels LABELxz and LABELzst, ids ID and ID+1) and the four trees. Sets
# n_in, n_all, URI_XZ, URI_ZST.
kc_pair_setup() {
	local label=$1 id=$2
	phase modules
	OBJ=$OBJ_XZ
	kc_testmods "$T/ext-xz" modules $EXT_MODS
	OBJ=$OBJ_ZST
	kc_testmods "$T/ext-zst" modules $EXT_MODS
	n_in=$(grep -c . "$OBJ_XZ/modules.order")
	n_all=$((n_in + 3))
	echo "$n_in in-tree modules in $KVER_XZ, 3 out-of-tree test modules"

	phase token
	t_token
	token_key "${label}xz" "$id" "$OBJ_XZ"
	token_key "${label}zst" $((id + 1)) "$OBJ_ZST"
	export KBUILD_SIGN_PIN=$PIN
	URI_XZ="pkcs11:token=modsign-test;object=${label}xz;type=private?module-path=$SLOWTOKEN"
	URI_ZST="pkcs11:token=modsign-test;object=${label}zst;type=private?module-path=$SLOWTOKEN"
	# One process on the token at a time (kbuild.sh says why).
	export SLOWTOKEN_EXCLUSIVE=$T/token.lock

	phase trees
	OBJ=$OBJ_XZ
	kc_tree_copy "$T/tree-xz-sf"
	kc_tree_copy "$T/tree-xz-ms"
	install -m 0755 "$MODSIGN" "$T/tree-xz-ms/scripts/sign-file"
	OBJ=$OBJ_ZST
	kc_tree_copy "$T/tree-zst-sf"
	kc_tree_copy "$T/tree-zst-ms"
	install -m 0755 "$MODSIGN" "$T/tree-zst-ms/scripts/sign-file"
}

# kc_x5 VER: on the xz kernel (OBJ, CERT set), X5: installed unsigned and
# compressed, two of them must be refused as they are, and one with
# sign-file's signature appended to the .ko.xz (the wrong order: the kernel
# decompresses and finds no signature); then one `modsign -b -r` signs the
# whole staging tree and every module loads.
kc_x5() {
	local ver=$1 f mod
	phase "X5 two-stage xz"
	if ! kinstall X5 "$SRC" "$T/tree-xz-sf" "$T/ext-xz" "$T/x5"; then
		make_failed "X5 unsigned install, xz" "$T/make-X5.log"
		return
	fi
	check_compressed "X5 unsigned install, xz" "$T/x5" .ko.xz "$n_all" "$CERT" unsigned
	for f in $(modules_of "$T/x5" .ko.xz | head -n 2); do
		mod=$(basename "$f" .ko.xz)
		add_case "$ver refuses: unsigned ${mod}.ko.xz" "${mod//-/_}" "$f" REFUSED \
			'Loading of unsigned module is rejected' finit
	done
	f=$(modules_of "$T/x5" .ko.xz | head -n 1)
	mod=$(basename "$f" .ko.xz)
	cp "$f" "$T/appended.ko.xz"
	if "$OBJ/scripts/sign-file" sha512 "$OBJ/certs/signing_key.pem" "$CERT" "$T/appended.ko.xz" \
		>"$T/.sign" 2>&1; then
		add_case "$ver refuses: sign-file's signature appended to a .ko.xz" "${mod//-/_}" \
			"$T/appended.ko.xz" REFUSED 'Loading of unsigned module is rejected' finit
	else
		t_fail "sign-file on a .ko.xz" "$(cat "$T/.sign")"
	fi
	two_stage "X5 two-stage xz" "$T/x5" .ko.xz "$URI_XZ"
}

# kc_x8 VER: on the xz kernel, X8: the drop-in as kbuild calls it with a
# SHA-3 hash (CONFIG_MODULE_SIG_HASH=sha3-384); every module loads.
kc_x8() {
	phase "X8 sha3-384 xz"
	if kinstall X8 "$SRC" "$T/tree-xz-ms" "$T/ext-xz" "$T/x8" CONFIG_MODULE_SIG_ALL=y \
		CONFIG_MODULE_SIG_KEY="$URI_XZ" CONFIG_MODULE_SIG_HASH=sha3-384; then
		check_compressed "X8 $1 drop-in, xz, sha3-384" "$T/x8" .ko.xz "$n_all" "$CERT"
		load_compressed "X8 $1 drop-in, xz, sha3-384" "$T/x8" .ko.xz
	else
		make_failed "X8 $1 drop-in, xz, sha3-384" "$T/make-X8.log"
	fi
}

# kc_xz_mt VER: on the xz kernel (OBJ, CERT set), modules in the form xz
# 5.6 and later write by default (multithreaded, block headers carrying the
# sizes), which kbuild's `xz --check=crc32 --lzma2=dict=1MiB` makes on such
# a host (Debian 13's xz 5.8): `xz -T2` writes those bytes here, checked
# against Debian 13's xz when its chroot (scripts/trixie-chroot.sh) is
# there. A module modsign signed, then compressed so, loads; so does one
# compressed so and then signed by modsign (which decodes it and writes
# its own one-thread form, as Debian 12's kbuild does).
kc_xz_mt() {
	local ver=$1 d=$T/xzmt trixie=${MODSIGN_TRIXIE_CACHE:-/var/cache/modsign-trixie}/root
	phase "xz 5.6+ form"
	rm -rf "$d" && mkdir -p "$d"
	cp "$T/ext-xz/kc_hello.ko" "$T/ext-xz/kc_param.ko" "$d/"
	if ! "$MODSIGN" sha512 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem" \
		"$d/kc_hello.ko" >"$T/.sign" 2>&1; then
		t_fail "sign: $ver xz 5.6+ form" "$(cat "$T/.sign")"
		return
	fi
	xz -T2 -k --check=crc32 --lzma2=dict=1MiB "$d/kc_hello.ko" "$d/kc_param.ko"
	if xz --robot -lvv "$d/kc_hello.ko.xz" | grep -q '^block	.*	cu	'; then
		t_pass "$ver xz 5.6+ form: xz -T2 writes block headers with sizes"
	else
		t_fail "$ver xz 5.6+ form: xz -T2 writes block headers with sizes" \
			"$(xz --robot -lvv "$d/kc_hello.ko.xz" | grep '^block')"
	fi
	if [ -x "$trixie/usr/bin/xz" ]; then
		chroot "$trixie" xz -c --check=crc32 --lzma2=dict=1MiB <"$d/kc_hello.ko" >"$d/trixie.xz"
		if cmp -s "$d/trixie.xz" "$d/kc_hello.ko.xz"; then
			t_pass "$ver xz 5.6+ form: Debian 13's xz writes the same bytes by default"
		else
			t_fail "$ver xz 5.6+ form: Debian 13's xz writes the same bytes by default"
		fi
	else
		t_skip "$ver xz 5.6+ form: the same bytes as Debian 13's xz" \
			"no chroot in $trixie (scripts/trixie-chroot.sh create)"
	fi
	add_case "$ver: signed, then compressed by xz 5.6+ (multithreaded form): loads" kc_hello \
		"$d/kc_hello.ko.xz" LOADED "" finit
	if "$MODSIGN" sha512 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.pem" \
		"$d/kc_param.ko.xz" >"$T/.sign" 2>&1; then
		add_case "$ver: a .ko.xz of xz 5.6+ signed by modsign: loads" kc_param \
			"$d/kc_param.ko.xz" LOADED "" finit
	else
		t_fail "sign: $ver a .ko.xz of xz 5.6+" "$(cat "$T/.sign")"
	fi
}

# kc_zstd_cases VER: on the zstd kernel, Z1 (the drop-in) and Z5 (two
# stages), and X1's signed .ko.xz refused: one kernel decompresses one
# format. Starts the zstd initramfs; the caller may add cases, then boots.
kc_zstd_cases() {
	local ver=$1 f mod
	kc_use zst

	phase "Z1 drop-in zstd"
	dropin "Z1 $ver drop-in, zstd" "$T/tree-zst-ms" "$T/ext-zst" "$T/z1" .ko.zst "$URI_ZST"
	f=$(modules_of "$T/x1" .ko.xz 2>/dev/null | head -n 1)
	if [ -n "$f" ]; then
		mod=$(basename "$f" .ko.xz)
		add_case "$ver refuses: a signed .ko.xz on the zstd kernel" "${mod//-/_}" "$f" REFUSED \
			'Invalid argument.*not a zstd compressed module' finit
	fi

	phase "Z5 two-stage zstd"
	if kinstall Z5 "$SRC" "$T/tree-zst-sf" "$T/ext-zst" "$T/z5"; then
		two_stage "Z5 two-stage zstd" "$T/z5" .ko.zst "$URI_ZST"
	else
		make_failed "Z5 unsigned install, zstd" "$T/make-Z5.log"
	fi
}

# kc_boot_certs VER KEY...: the boot of $BD loaded each TEST-ONLY KEY's
# certificate as a built-in trusted key.
kc_boot_certs() {
	local ver=$1 k
	shift
	for k in "$@"; do
		if grep -q "^KC-BOOT Loaded X.509 cert 'modsign test: TEST-ONLY modsign $k: " "$BD/console.txt"; then
			t_pass "boot $ver: the $k certificate is a built-in trusted key"
		else
			t_fail "boot $ver: the $k certificate is a built-in trusted key" \
				"$(grep '^KC-BOOT' "$BD/console.txt")"
		fi
	done
}
