#!/bin/bash
# kernel-check, part "kbuild": modsign where modules are signed in real
# builds (kbuild, the agent, DKMS), on Linux 6.1, proven by the booted kernel
# (CONFIG_MODULE_SIG_FORCE) loading what each build installed.
#
# The key is the 6.1 build's own signing key (certs/signing_key.pem), moved
# onto a SoftHSM2 token this script creates and reached through the
# slowtoken shim (build/slowtoken.so), whose call log counts C_Initialize
# and C_Login per run; kbuild passes certs/signing_key.x509 as the
# certificate, which the kernel has built in. Every run installs the six
# in-tree modules of kernel.config and the three out-of-tree modules of
# tests/kernel/modules (make M=... modules_install).
#
#   R0  the tree's own sign-file, the PEM key as kbuild writes it (baseline)
#   R1  modsign installed as scripts/sign-file, `make -j2 modules_install`,
#       CONFIG_MODULE_SIG_KEY a pkcs11: URI; and with the PEM key (R1p)
#   R3  the same with contrib/kbuild's Makefile.modinst patch: one
#       `sign-file -b` call, one login; and with the PEM key (R3p)
#   R4  `make modules_sign` over R1's signed modules, and over modules
#       signed by another key; over unsigned ones under the agent (R4a)
#   R2  R1 under `modsign agent <key> -- make ...`: one login
#   R6  two-stage BSP build: base modules and an out-of-tree module that
#       needs one of them installed unsigned into one INSTALL_MOD_PATH, one
#       `modsign -b -r`, depmod, modprobe in the VM
#   R7  DKMS (Debian's dkms, sign_file= modsign, mok_signing_key= the URI),
#       and under the agent (R7a)
# RSA signatures are deterministic: every signed module must equal R0's.
# Environment: see lib.sh.

MODSIGN=${MODSIGN:-$(cd "$(dirname "$0")/../.." && pwd)/modsign}
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"

SLOWTOKEN=$TOP/build/slowtoken.so
EXT_MODS="kc_hello kc_param kc_data"

kc_setup kbuild
need depmod patch xargs
[ -f "$SLOWTOKEN" ] || die "$SLOWTOKEN not built: run make build/slowtoken.so"
kc_kernel 6.1 linux-source-6.1 kernel.config kernel-6.1.config
CERT=$OBJ/certs/signing_key.x509
[ -f "$CERT" ] && [ -f "$OBJ/certs/signing_key.pem" ] ||
	die "the 6.1 build has no certs/signing_key.{pem,x509}"

# --- helpers -----------------------------------------------------------

# check_signed RUN STAGE COUNT: COUNT modules installed, every one signed
# and verified by `modsign verify` against the kernel's certificate.
check_signed() {
	local run=$1 stage=$2 want=$3 n unsigned=""
	n=$(modules_of "$stage" | grep -c .)
	for f in $(modules_of "$stage"); do
		is_signed "$f" || unsigned="$unsigned ${f#"$stage"/}"
	done
	if [ "$n" -ne "$want" ]; then
		t_fail "$run: $want modules installed" "found $n" "$(modules_of "$stage")"
	elif [ -n "$unsigned" ]; then
		t_fail "$run: every installed module signed" "unsigned:$unsigned"
	elif ! "$MODSIGN" verify -c "$CERT" -r "$stage" >"$T/.verify" 2>&1; then
		t_fail "$run: modsign verify -c certs/signing_key.x509 accepts every module" "$(cat "$T/.verify")"
	else
		t_pass "$run: $n modules installed and signed, modsign verify OK"
	fi
}

# check_same RUN STAGE REF-STAGE: every module byte for byte as in REF-STAGE.
check_same() {
	local run=$1 stage=$2 ref=$3 f differ=""
	for f in $(modules_of "$ref"); do
		cmp -s "$f" "$stage/${f#"$ref"/}" || differ="$differ ${f#"$ref"/}"
	done
	if [ -z "$differ" ] && [ "$(modules_of "$stage" | grep -c .)" -eq "$(modules_of "$ref" | grep -c .)" ]; then
		t_pass "$run: every module byte for byte as $(basename "$ref") made it"
	else
		t_fail "$run: every module byte for byte as $(basename "$ref") made it" "differ:$differ"
	fi
}

# load_all RUN STAGE: each installed module must load (insmod).
load_all() {
	local run=$1 stage=$2 f mod
	for f in $(modules_of "$stage"); do
		mod=$(basename "$f" .ko)
		mod=${mod//-/_}
		add_case "$run: loads ${f#"$stage"/lib/modules/$KVER/}" "$mod" "$f" LOADED
	done
}

# --- modules, token, trees ---------------------------------------------

phase modules
kc_testmods "$T/ext" modules $EXT_MODS
kc_testmods "$T/oot" bsp kc_oot
n_in=$(grep -c . "$OBJ/modules.order")
n_all=$((n_in + 3))
[ "$n_in" -ge 5 ] || die "the 6.1 build has $n_in in-tree modules (modules.order), want the six of kernel.config"
echo "$n_in in-tree modules in $KVER, 3 out-of-tree test modules, kc_oot"

# R2, R4a and R7a need `modsign agent`: skipped, with a NOTE, without it.
if "$MODSIGN" --help 2>&1 | grep -q 'modsign agent'; then
	HAVE_AGENT=1
else
	HAVE_AGENT=0
	echo "NOTE modsign has no agent: R2 (modules_install under the agent), R4a (modules_sign under the agent) and R7a (DKMS under the agent) not run"
fi

phase token
t_token
token_key kernel 10 "$OBJ"
export KBUILD_SIGN_PIN=$PIN
URI="pkcs11:token=modsign-test;object=kernel;type=private?module-path=$SLOWTOKEN"
# One process on the token at a time: SoftHSM2 2.6.1's file store fails now
# and then when two processes start on one token at the same moment
# (tests/slowtoken/README.md); a real token arbitrates itself.
export SLOWTOKEN_EXCLUSIVE=$T/token.lock

phase trees
kc_tree_copy "$T/tree-sf"
kc_tree_copy "$T/tree-ms"
install -m 0755 "$MODSIGN" "$T/tree-ms/scripts/sign-file"
kc_srctree_patched "$T/src-bulk" "$TOP/contrib/kbuild/linux-6.1-bulk-sign.patch"
kc_initrd kbuild

# --- R0: the tree's own sign-file, PEM key -------------------------------

phase "R0 sign-file PEM"
R0=$T/stage0
if kinstall R0 "$SRC" "$T/tree-sf" "$T/ext" "$R0" CONFIG_MODULE_SIG_ALL=y; then
	check_signed "R0 sign-file, PEM" "$R0" "$n_all"
	load_all "R0 sign-file, PEM" "$R0"
else
	make_failed "R0 sign-file, PEM" "$T/make-R0.log"
fi

# --- R1: modsign as scripts/sign-file ------------------------------------

phase "R1 drop-in token"
if kinstall R1 "$SRC" "$T/tree-ms" "$T/ext" "$T/stage1" CONFIG_MODULE_SIG_ALL=y \
	CONFIG_MODULE_SIG_KEY="$URI"; then
	check_signed "R1 drop-in, pkcs11: key" "$T/stage1" "$n_all"
	check_calls "R1 drop-in, pkcs11: key (one sign-file per module)" "$T/p11-R1.log" \
		"$n_all" "$n_all" "$n_all"
	check_same "R1 drop-in, pkcs11: key" "$T/stage1" "$R0"
	load_all "R1 drop-in, pkcs11: key" "$T/stage1"
else
	make_failed "R1 drop-in, pkcs11: key" "$T/make-R1.log"
fi

phase "R1p drop-in PEM"
if kinstall R1p "$SRC" "$T/tree-ms" "$T/ext" "$T/stage1p" CONFIG_MODULE_SIG_ALL=y; then
	check_signed "R1p drop-in, PEM key as kbuild writes it" "$T/stage1p" "$n_all"
	check_same "R1p drop-in, PEM key as kbuild writes it" "$T/stage1p" "$R0"
	load_all "R1p drop-in, PEM key" "$T/stage1p"
else
	make_failed "R1p drop-in, PEM key" "$T/make-R1p.log"
fi

# --- R2: the same install under the agent --------------------------------

phase "R2 agent"
if [ "$HAVE_AGENT" = 1 ]; then
	export SLOWTOKEN_LOG=$T/p11-R2.log
	: >"$SLOWTOKEN_LOG"
	rm -rf "$T/stage2"
	if "$MODSIGN" agent "$URI" -- sh -c '
		nice -n 10 make -C "$1" O="$2" -j"$3" INSTALL_MOD_PATH="$4" CONFIG_MODULE_SIG_ALL=y \
			CONFIG_MODULE_SIG_KEY="$5" modules_install &&
		nice -n 10 make -C "$1" O="$2" -j"$3" M="$6" INSTALL_MOD_PATH="$4" CONFIG_MODULE_SIG_ALL=y \
			CONFIG_MODULE_SIG_KEY="$5" modules_install' \
		sh "$SRC" "$T/tree-ms" "$JOBS" "$T/stage2" "$URI" "$T/ext" >"$T/make-R2.log" 2>&1; then
		unset SLOWTOKEN_LOG
		check_signed "R2 drop-in under modsign agent" "$T/stage2" "$n_all"
		check_calls "R2 drop-in under modsign agent (one login for both makes)" "$T/p11-R2.log" 1 1 1
		check_same "R2 drop-in under modsign agent" "$T/stage2" "$T/stage1"
		load_all "R2 drop-in under modsign agent" "$T/stage2"
	else
		unset SLOWTOKEN_LOG
		make_failed "R2 drop-in under modsign agent" "$T/make-R2.log"
	fi
fi

# --- R3: the bulk kbuild patch -------------------------------------------

phase "R3 bulk patch"
if kinstall R3 "$PSRC" "$T/tree-ms" "$T/ext" "$T/stage3" CONFIG_MODULE_SIG_ALL=y \
	CONFIG_MODULE_SIG_KEY="$URI"; then
	check_signed "R3 kbuild patch, pkcs11: key" "$T/stage3" "$n_all"
	# One sign-file -b for the in-tree modules, one for the M= install.
	check_calls "R3 kbuild patch, pkcs11: key (one sign-file -b per make)" "$T/p11-R3.log" 2 2 2
	check_same "R3 kbuild patch, pkcs11: key" "$T/stage3" "$R0"
	load_all "R3 kbuild patch, pkcs11: key" "$T/stage3"
	if grep -q "SIGN *$n_in modules, one sign-file -b call" "$T/make-R3.log"; then
		t_pass "R3 kbuild patch: make says SIGN $n_in modules, one sign-file -b call"
	else
		t_fail "R3 kbuild patch: make says SIGN $n_in modules, one sign-file -b call" \
			"$(grep SIGN "$T/make-R3.log")"
	fi
else
	make_failed "R3 kbuild patch, pkcs11: key" "$T/make-R3.log"
fi

phase "R3p bulk patch PEM"
if kinstall R3p "$PSRC" "$T/tree-ms" "$T/ext" "$T/stage3p" CONFIG_MODULE_SIG_ALL=y; then
	check_same "R3p kbuild patch, PEM key (signed one by one, as before)" "$T/stage3p" "$R0"
	if grep -q 'sign-file -b' "$T/make-R3p.log"; then
		t_fail "R3p kbuild patch, PEM key: no bulk call" "$(grep SIGN "$T/make-R3p.log")"
	else
		t_pass "R3p kbuild patch, PEM key: $(grep -c '^ *SIGN ' "$T/make-R3p.log") SIGN lines, no bulk call"
	fi
else
	make_failed "R3p kbuild patch, PEM key" "$T/make-R3p.log"
fi

# --- R4: make modules_sign over signed modules ---------------------------

# ksign RUN STAGE: `make modules_sign` over the in-tree modules of STAGE
# (6.1 has no modules_sign for M=, and signs only with
# CONFIG_MODULE_SIG_ALL=y) with the token key.
ksign() {
	export SLOWTOKEN_LOG=$T/p11-$1.log
	: >"$SLOWTOKEN_LOG"
	nice -n 10 make -C "$SRC" O="$T/tree-ms" -j"$JOBS" INSTALL_MOD_PATH="$2" \
		CONFIG_MODULE_SIG_ALL=y CONFIG_MODULE_SIG_KEY="$URI" modules_sign >"$T/make-$1.log" 2>&1
	local rc=$?
	unset SLOWTOKEN_LOG
	return $rc
}

phase "R4 modules_sign"
if [ -d "$T/stage1" ]; then
	cp -a "$T/stage1" "$T/stage4"
	if ksign R4 "$T/stage4"; then
		t_pass "R4 modules_sign after a signing modules_install: make succeeds"
		check_same "R4 modules_sign over modules signed by this key: left as they were" \
			"$T/stage4" "$T/stage1"
	else
		make_failed "R4 modules_sign after a signing modules_install" "$T/make-R4.log"
	fi
fi
# Modules signed by another key: modules_sign signs them around that
# signature (sign-file's way); the kernel checks the outer signature.
if [ -d "$T/stage1" ]; then
	cp -a "$T/stage1" "$T/stage4o"
	if "$MODSIGN" -q -r "$T/stage4o/lib/modules/$KVER/kernel" --replace sha256 \
		"$DATA/other-rsa2048.key.pem" "$DATA/other-rsa2048.x509.pem" >"$T/.sign" 2>&1; then
		if ksign R4o "$T/stage4o"; then
			t_pass "R4 modules_sign over modules signed by another key: make succeeds"
			check_signed "R4 modules_sign over another key's signatures" "$T/stage4o" "$n_all"
			load_all "R4 modules_sign over another key's signatures" "$T/stage4o"
		else
			make_failed "R4 modules_sign over modules signed by another key" "$T/make-R4o.log"
		fi
	else
		t_fail "R4: modsign -r --replace with other-rsa2048" "$(cat "$T/.sign")"
	fi
fi
# Under the agent (R4a): an unsigned install, then `make modules_sign`
# inside `modsign agent`: each sign-file is a client of the agent, so the
# token sees one login for all of them, and each module equals R1's.
if [ "$HAVE_AGENT" = 1 ] && [ -d "$T/stage1" ]; then
	R4a=$T/stage4a
	rm -rf "$R4a"
	if nice -n 10 make -C "$SRC" O="$T/tree-sf" -j"$JOBS" INSTALL_MOD_PATH="$R4a" \
		modules_install >"$T/make-R4a.log" 2>&1; then
		export SLOWTOKEN_LOG=$T/p11-R4a.log
		: >"$SLOWTOKEN_LOG"
		"$MODSIGN" agent "$URI" -- nice -n 10 make -C "$SRC" O="$T/tree-ms" -j"$JOBS" \
			INSTALL_MOD_PATH="$R4a" CONFIG_MODULE_SIG_ALL=y CONFIG_MODULE_SIG_KEY="$URI" \
			modules_sign >>"$T/make-R4a.log" 2>&1
		rc=$?
		unset SLOWTOKEN_LOG
		if [ "$rc" -eq 0 ]; then
			check_signed "R4a modules_sign under modsign agent" "$R4a" "$n_in"
			check_calls "R4a modules_sign under modsign agent (one login)" "$T/p11-R4a.log" 1 1 1
			differ=""
			for f in $(modules_of "$R4a"); do
				cmp -s "$f" "$T/stage1/${f#"$R4a"/}" || differ="$differ ${f#"$R4a"/}"
			done
			if [ -z "$differ" ]; then
				t_pass "R4a modules_sign under modsign agent: every module byte for byte as R1 made it"
			else
				t_fail "R4a modules_sign under modsign agent: every module byte for byte as R1 made it" \
					"differ:$differ"
			fi
			load_all "R4a modules_sign under modsign agent" "$R4a"
		else
			make_failed "R4a modules_sign under modsign agent" "$T/make-R4a.log"
		fi
	else
		make_failed "R4a unsigned modules_install" "$T/make-R4a.log"
	fi
fi

# --- R6: two-stage BSP build ---------------------------------------------

phase "R6 two-stage BSP"
R6=$T/stage6
rm -rf "$R6"
if nice -n 10 make -C "$SRC" O="$T/tree-sf" -j"$JOBS" INSTALL_MOD_PATH="$R6" \
	modules_install >"$T/make-R6.log" 2>&1 &&
	nice -n 10 make -C "$SRC" O="$T/tree-sf" -j"$JOBS" M="$T/oot" INSTALL_MOD_PATH="$R6" \
	modules_install >>"$T/make-R6.log" 2>&1; then
	n6=$(modules_of "$R6" | grep -c .)
	signed6=0
	for f in $(modules_of "$R6"); do
		is_signed "$f" && signed6=$((signed6 + 1))
	done
	echo "R6: $n6 modules installed in two stages, $signed6 signed"
	export SLOWTOKEN_LOG=$T/p11-R6.log
	: >"$SLOWTOKEN_LOG"
	if "$MODSIGN" -b -r "$R6/lib/modules" sha512 "$URI" "$CERT" >"$T/.sign" 2>&1; then
		unset SLOWTOKEN_LOG
		check_signed "R6 BSP: one modsign -b -r over both stages" "$R6" $((n_in + 1))
		check_calls "R6 BSP: one modsign -b -r over both stages" "$T/p11-R6.log" 1 1 1
		if depmod -b "$R6" "$KVER" 2>"$T/.cmd" &&
			grep -q '^extra/kc_oot.ko: kernel/lib/crc-itu-t.ko$' "$R6/lib/modules/$KVER/modules.dep"; then
			t_pass "R6 BSP: depmod: kc_oot.ko needs kernel/lib/crc-itu-t.ko"
		else
			t_fail "R6 BSP: depmod: kc_oot.ko needs kernel/lib/crc-itu-t.ko" "$(cat "$T/.cmd")" \
				"$(cat "$R6/lib/modules/$KVER/modules.dep" 2>/dev/null)"
		fi
		mkdir -p "$BD/initrd/lib/modules"
		cp -a "$R6/lib/modules/$KVER" "$BD/initrd/lib/modules/"
		add_case "R6 BSP: modprobe kc_oot loads crc-itu-t first" kc_oot - LOADED \
			'^LOADED \[[^]]*crc_itu_t[^]]*\].*kc_oot: loaded, crc_itu_t=31c3' modprobe
		add_case "R6 BSP: modprobe test_module" test_module - LOADED 'Hello, world' modprobe
	else
		unset SLOWTOKEN_LOG
		t_fail "R6 BSP: modsign -b -r" "$(cat "$T/.sign")"
	fi
else
	make_failed "R6 BSP: unsigned modules_install, in-tree and M=" "$T/make-R6.log"
fi

# --- R7: DKMS, directly and under the agent ------------------------------

# Debian's dkms reads only /etc/dkms/framework.conf{,.d/*.conf}: it runs in
# a private mount namespace with the test's /etc/dkms bound over the real
# one, and keeps its trees (--dkmstree, --sourcetree) in $T. `dkms build`
# strips, then runs "$sign_file" "$sign_hash" "$mok_signing_key"
# "$mok_certificate" <module> once per module (it ignores the status: the
# booted kernel is the judge).
#
# dkms_build RUN [AGENT-KEY]: builds kc-dkms in a fresh DKMS tree, under
# `modsign agent AGENT-KEY --` when one is given; its modules load.
dkms_build() {
	local run=$1 built
	rm -rf "$T/dkms-tree"
	mkdir -p "$T/dkms-tree"
	export SLOWTOKEN_LOG=$T/p11-${run%% *}.log
	: >"$SLOWTOKEN_LOG"
	if ${2:+"$MODSIGN" agent "$2" --} unshare --mount --propagation private sh -c '
		mount --bind "$1" /etc/dkms &&
		dkms build -m kc-dkms -v 1.0 -k "$2" --kernelsourcedir "$3" \
			--dkmstree "$4" --sourcetree "$5"' \
		sh "$T/etc-dkms" "$KVER" "$T/tree-sf" "$T/dkms-tree" "$T/dkms-src" \
		>"$T/make-${run%% *}.log" 2>&1; then
		unset SLOWTOKEN_LOG
		built=$T/dkms-tree/kc-dkms/1.0/$KVER/x86_64/module
		check_signed "$run" "$built" 2
		if [ -n "${2:-}" ]; then
			check_calls "$run: two sign_file calls, one login" "$T/p11-${run%% *}.log" 1 1 1
		else
			check_calls "$run: one sign_file call per module" "$T/p11-${run%% *}.log" 2 2 2
		fi
		if grep -q "Sign command: $MODSIGN" "$T/make-${run%% *}.log"; then
			t_pass "$run: its sign_file is modsign, from the test's framework.conf"
		else
			t_fail "$run: its sign_file is modsign" "$(cat "$T/make-${run%% *}.log")"
		fi
		mkdir -p "$T/${run%% *}"
		for f in "$built"/*.ko; do
			cp "$f" "$T/${run%% *}/"
			add_case "$run: loads $(basename "$f")" "$(basename "$f" .ko)" "$f" LOADED
		done
	else
		unset SLOWTOKEN_LOG
		make_failed "$run" "$T/make-${run%% *}.log"
	fi
}

phase "R7 DKMS"
if [ "$(id -u)" -eq 0 ] && command -v dkms >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1; then
	mkdir -p "$T/etc-dkms/framework.conf.d" "$T/dkms-src/kc-dkms-1.0"
	cp "$KDIR"/dkms/dkms.conf "$KDIR"/dkms/Kbuild "$KDIR"/dkms/*.c "$T/dkms-src/kc-dkms-1.0/"
	{
		echo "sign_file=\"$MODSIGN\""
		echo "mok_signing_key=\"$URI\""
		echo "mok_certificate=\"$CERT\""
	} >"$T/etc-dkms/framework.conf"
	dkms_build "R7 DKMS build, pkcs11: key"
	[ "$HAVE_AGENT" = 1 ] && dkms_build "R7a DKMS build under modsign agent" "$URI"
else
	echo "NOTE R7 DKMS needs root, dkms and unshare: not run"
fi

# --- the drop-in stays across make clean ---------------------------------

phase "make clean"
if nice -n 10 make -C "$SRC" O="$T/tree-ms" clean >"$T/make-clean.log" 2>&1 &&
	cmp -s "$MODSIGN" "$T/tree-ms/scripts/sign-file"; then
	t_pass "drop-in: make clean keeps modsign as scripts/sign-file"
else
	t_fail "drop-in: make clean keeps modsign as scripts/sign-file" "$(tail -n 5 "$T/make-clean.log")"
fi

# No PIN in any make output (run.sh checks this script's own output).
no_pin_in_make_logs

# --- boot --------------------------------------------------------------

echo "$ncase cases packed"
kc_boot 6.1
kc_results
kc_done
