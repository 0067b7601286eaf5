#!/bin/bash
# kernel-check, part "k72m": ML-DSA module signatures on Linux 7.2, the
# kernel as judge. Two kernels, both the 7.2 xz kernel of k72.sh (whose
# objects they start from) plus CONFIG_CRYPTO_MLDSA (kernel-mldsa.config)
# and the TEST-ONLY ML-DSA-44/65/87 certificates of tests/data/mldsa in the
# trusted bundle:
#   default  ML-DSA signatures without signed attributes only (the
#            signature covers the module itself)
#   waiver   also with signed attributes:
#            CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA
#            (kernel-mldsa-waive.config)
#
#   SF   sign-file 7.2 built against OpenSSL 3.6 (the cache of
#        scripts/openssl-pq.sh), the key file, sha512: signed attributes;
#        the waiver kernel loads it, the default one refuses it; a changed
#        byte is refused by both; with sha256 even the waiver kernel refuses
#   OS   the same without signed attributes, made outside modsign (OpenSSL
#        signs the module bytes, cms-noattr.py rewrites sign-file's CMS):
#        both kernels load it, a changed byte is refused by both
#   MS   modsign, the key on the ML-DSA test token (tests/mldsatoken, holding
#        the same keys): without signed attributes both kernels load it;
#        with --signed-attrs (sign-file 7.2's form) only the waiver kernel;
#        a .ko.xz signed inside loads (the kernel decompresses); a changed
#        byte is refused by both; once each: -k, the certificate from the
#        token, one -b run, and the agent (which signs ML-DSA only with
#        signed attributes)
# for each of ML-DSA-44, -65 and -87. modsign verify (--kernel-default for
# the default kernel) must agree with each kernel on every module. Without
# the OpenSSL cache (nothing
# here can sign ML-DSA then) every case is a counted SKIP line.
# Environment: see lib.sh.

MODSIGN=${MODSIGN:-$(cd "$(dirname "$0")/../.." && pwd)/modsign}
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/lib/tok_mldsa.sh
. "$TOP/tests/lib/tok_mldsa.sh"

EXT_MODS="kc_hello kc_param kc_data"
PKG=linux-source-7.2/sid
SETS="44 65 87"
MLDSA=$DATA/mldsa
AUTHATTRS_RE='Invalid module sig \(has authattrs\)'
REJECTED_RE='Key was rejected by service'

kc_setup k72m
why=$(mldsa_missing)
if [ -n "$why" ]; then
	for s in $SETS; do
		t_skip "k72m ML-DSA-$s: sign-file 7.2 and modsign (token) signatures on 7.2" "$why"
	done
	kc_done
	exit
fi
# sign-file 7.2 is built after the OpenSSL (scripts/openssl-pq.sh
# sign-file): without it only modsign's cases run.
SF_SETS=$SETS
if [ ! -x "$PQ_SIGNFILE" ]; then
	SF_SETS=""
	for s in $SETS; do
		t_skip "k72m ML-DSA-$s: sign-file 7.2's and OpenSSL's signatures" \
			"no $PQ_SIGNFILE (scripts/openssl-pq.sh sign-file builds it)"
	done
fi
need xz
kc_finit

# --- the kernels ------------------------------------------------------------

# The 7.2 xz kernel of k72.sh (built or reused, with the bundle every kernel
# trusts) is the seed: the ML-DSA ones differ from it in a few options and
# the bundle, so kbuild recompiles little.
FRAGS="kernel.config kernel-6.12.config kernel-7.2.config kernel-xz.config kernel-sha1.config"
# shellcheck disable=SC2086
kc_kernel 7.2-xz "$PKG" $FRAGS
SEED=$KB
for s in $SETS; do
	cat "$MLDSA/mldsa$s.x509.pem" >>"$T/trusted.pem"
done
# shellcheck disable=SC2086
KC_SEED=$SEED kc_kernel 7.2-mldsa "$PKG" $FRAGS kernel-mldsa.config
OBJ_D=$OBJ
KVER_D=$KVER
# shellcheck disable=SC2086
KC_SEED=$KB kc_kernel 7.2-mldsa-waive "$PKG" $FRAGS kernel-mldsa.config kernel-mldsa-waive.config
OBJ_W=$OBJ
KVER_W=$KVER
case $KVER_D in
7.*) ;;
*) die "linux-source-7.2 built kernel $KVER_D, not 7.x" ;;
esac
[ "$KVER_D" = "$KVER_W" ] || die "the two ML-DSA kernels differ in version: $KVER_D, $KVER_W"

# The build's extract-cert, linked against the host's OpenSSL 3.0 (which
# has no ML-DSA), still turns the PEM bundle into the certificates' DER:
# it parses the X.509 structure and copies the key as it stands.
phase "certificates"
for f in "$DATA"/rsa2048 "$DATA"/rsa4096 "$DATA"/ec256 "$DATA"/ec384 "$DATA"/ec521 \
	"$MLDSA"/mldsa44 "$MLDSA"/mldsa65 "$MLDSA"/mldsa87; do
	openssl x509 -in "$f.x509.pem" -outform DER || die "openssl x509 $f.x509.pem"
done >"$T/trusted.der" 2>"$T/.cmd"
for o in "$OBJ_D" "$OBJ_W"; do
	if cmp -s "$T/trusted.der" "$o/certs/x509_certificate_list"; then
		t_pass "extract-cert (host OpenSSL $(openssl version | cut -d' ' -f2)) wrote the bundle's DER, the ML-DSA certificates byte for byte ($(basename "$(dirname "$o")"))"
	else
		t_fail "extract-cert wrote the bundle's DER, the ML-DSA certificates byte for byte ($o)" \
			"$(ls -l "$T/trusted.der" "$o/certs/x509_certificate_list")"
	fi
done

# --- modules and the token ------------------------------------------------

phase modules
OBJ=$OBJ_D
kc_testmods "$T/ext" modules $EXT_MODS
# The waiver kernel has the same version and no symbol versions: the same
# modules load on both.
xz --check=crc32 --lzma2=dict=1MiB -c "$T/ext/kc_data.ko" >"$T/kc_data.ko.xz" ||
	die "xz kc_data.ko failed"

phase token
# The test token with the keys of tests/data/mldsa (the ones the kernels
# trust), labelled mldsa44, mldsa65, mldsa87; modsign gets the PIN as
# kbuild gives it, KBUILD_SIGN_PIN.
quietly make -s -C "$TOP" build/mldsatoken.so
TOK=$T/tokens/mldsa
mkdir -p "$TOK"
printf '%s\n' "$PIN" >"$TOK/pin"
for s in $SETS; do
	cp "$MLDSA/mldsa$s.key.pem" "$TOK/mldsa$s.key.pem"
	cp "$MLDSA/mldsa$s.x509.pem" "$TOK/mldsa$s.crt.pem"
done
export MLDSATOKEN_DIR=$TOK
export KBUILD_SIGN_PIN=$PIN

# --- signing ------------------------------------------------------------------
# Each signed module goes to both kernels: ALL holds "name<TAB>module<TAB>
# file<TAB>how<TAB>default expectation<TAB>waiver expectation", an
# expectation being LOADED or REFUSED:PATTERN.

: >"$T/all"
n=0

# both NAME MODULE FILE HOW DEFAULT WAIVER: FILE goes to both kernels.
both() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$T/all"
}

# copy_of MODULE: a fresh copy of the unsigned test module (or of
# kc_data.ko.xz for "kc_data.ko.xz") in a file of its own. Sets F (not
# printed: the counter must not live in a subshell).
copy_of() {
	n=$((n + 1))
	mkdir -p "$T/w"
	case $1 in
	*.ko.xz) F=$T/w/$n.$1; cp "$T/$1" "$F" ;;
	*) F=$T/w/$n.$1.ko; cp "$T/ext/$1.ko" "$F" ;;
	esac
}

# changed_of FILE MODULE: a copy of the signed FILE with one byte of the
# module body (the middle of the unsigned module) changed. Sets C.
changed_of() {
	n=$((n + 1))
	C=$T/w/$n.changed.ko
	cp "$1" "$C"
	flip_byte "$C" $(($(size_of "$T/ext/$2.ko") / 2))
}

phase "sign-file 7.2"
# The oracle: sign-file 7.2 with OpenSSL 3.6 can sign ML-DSA only with
# signed attributes (contentType, messageDigest).
for s in $SF_SETS; do
	copy_of kc_hello
	if "$PQ_SIGNFILE" sha512 "$MLDSA/mldsa$s.key.pem" "$MLDSA/mldsa$s.x509.pem" "$F" \
		>"$T/.sign" 2>&1 && is_signed "$F"; then
		both "SF ML-DSA-$s sign-file 7.2 sha512 (signed attributes)" kc_hello "$F" insmod \
			"REFUSED:$AUTHATTRS_RE" LOADED
		changed_of "$F" kc_hello
		both "SF ML-DSA-$s sign-file 7.2, one byte of the module changed" kc_hello "$C" insmod \
			"REFUSED:$AUTHATTRS_RE" "REFUSED:$REJECTED_RE.*Message digest doesn't match"
	else
		t_fail "SF ML-DSA-$s: sign-file 7.2 sha512 signs" "$(cat "$T/.sign")"
	fi
done
# 7.2's public_key takes ML-DSA only with the hash "none" (no signed
# attributes) or sha512: sign-file's sha256 messageDigest is refused even
# with the waiver (-EINVAL from public_key, which the trust check turns
# into -EKEYREJECTED; nothing logged).
# The signer named by subjectKeyIdentifier (-k): 7.2 finds ML-DSA keys so.
for s in $SF_SETS; do
	[ "$s" = 44 ] || continue
	copy_of kc_hello
	if "$PQ_SIGNFILE" -k sha512 "$MLDSA/mldsa$s.key.pem" "$MLDSA/mldsa$s.x509.pem" "$F" \
		>"$T/.sign" 2>&1 && is_signed "$F"; then
		both "SF ML-DSA-$s sign-file 7.2 -k sha512 (signed attributes)" kc_hello "$F" insmod \
			"REFUSED:$AUTHATTRS_RE" LOADED
	else
		t_fail "SF ML-DSA-$s: sign-file 7.2 -k sha512 signs" "$(cat "$T/.sign")"
	fi
done
for s in $SF_SETS; do
	[ "$s" = 65 ] || continue
	copy_of kc_hello
	if "$PQ_SIGNFILE" sha256 "$MLDSA/mldsa$s.key.pem" "$MLDSA/mldsa$s.x509.pem" "$F" \
		>"$T/.sign" 2>&1 && is_signed "$F"; then
		both "SF ML-DSA-$s sign-file 7.2 sha256 (signed attributes)" kc_hello "$F" insmod \
			"REFUSED:$AUTHATTRS_RE" "REFUSED:$REJECTED_RE"
	else
		t_fail "SF ML-DSA-$s: sign-file 7.2 sha256 signs" "$(cat "$T/.sign")"
	fi
done

phase "OpenSSL, no signed attributes"
# The form without signed attributes from outside modsign: OpenSSL's pure
# ML-DSA signature of the module (empty context) in sign-file's CMS with
# the signed attributes taken out (cms-noattr.py), appended with the
# module signature trailer (PKCS#7, the length big-endian, the marker).
# append_p7s MODULE P7S
append_p7s() {
	local len
	len=$(size_of "$2")
	{ cat "$2"
	  printf '%b' "$(printf '\\%03o' 0 0 2 0 0 0 0 0 $((len >> 24 & 255)) $((len >> 16 & 255)) \
		$((len >> 8 & 255)) $((len & 255)))"
	  printf '~Module signature appended~\n'; } >>"$1"
}
need python3
for s in $SF_SETS; do
	copy_of kc_hello
	key=$MLDSA/mldsa$s.key.pem
	if "$PQ_SIGNFILE" -d sha512 "$key" "$MLDSA/mldsa$s.x509.pem" "$F" >"$T/.sign" 2>&1 &&
		"$PQ_OPENSSL" pkeyutl -sign -rawin -inkey "$key" -in "$F" -out "$F.raw" >>"$T/.sign" 2>&1 &&
		python3 "$KDIR/cms-noattr.py" "$F.p7s" "$F.raw" "$F.noattr.p7s" >>"$T/.sign" 2>&1; then
		append_p7s "$F" "$F.noattr.p7s"
		both "OS ML-DSA-$s OpenSSL's pure signature, no signed attributes" kc_hello "$F" insmod \
			LOADED LOADED
		changed_of "$F" kc_hello
		both "OS ML-DSA-$s OpenSSL's, one byte of the module changed" kc_hello "$C" insmod \
			"REFUSED:$REJECTED_RE" "REFUSED:$REJECTED_RE"
	else
		t_fail "OS ML-DSA-$s: OpenSSL's signature without signed attributes" "$(cat "$T/.sign")"
	fi
done

phase "modsign"
# ms NAME MODULE FILE MODSIGN-ARGS...: FILE signed in place by modsign with
# the key on the token and the certificate as DER file; fails the case
# (and returns non-zero) when modsign fails.
ms() {
	local name=$1 mod=$2 f=$3
	shift 3
	if "$MODSIGN" "$@" "$f" >"$T/.sign" 2>&1; then
		return 0
	fi
	t_fail "sign: $name" "modsign $* $f" "$(cat "$T/.sign")"
	return 1
}

for s in $SETS; do
	uri=$(mldsa_uri "mldsa$s")
	cert=$MLDSA/mldsa$s.x509.der
	# Without signed attributes: what every ML-DSA kernel takes.
	name="MS ML-DSA-$s modsign sha512 token (no signed attributes)"
	copy_of kc_param
	if ms "$name" kc_param "$F" sha512 "$uri" "$cert"; then
		both "$name" kc_param "$F" insmod LOADED LOADED
		changed_of "$F" kc_param
		both "MS ML-DSA-$s modsign, one byte of the module changed" kc_param "$C" insmod \
			"REFUSED:$REJECTED_RE" "REFUSED:$REJECTED_RE"
	fi
	# With them, as sign-file 7.2 writes them: only the waiver kernel.
	name="MS ML-DSA-$s modsign --signed-attrs sha512 token"
	copy_of kc_param
	if ms "$name" kc_param "$F" --signed-attrs sha512 "$uri" "$cert"; then
		both "$name" kc_param "$F" insmod "REFUSED:$AUTHATTRS_RE" LOADED
		changed_of "$F" kc_param
		both "MS ML-DSA-$s modsign --signed-attrs, one byte of the module changed" kc_param \
			"$C" insmod "REFUSED:$AUTHATTRS_RE" "REFUSED:$REJECTED_RE.*Message digest doesn't match"
	fi
	# A compressed module, signed inside its .ko.xz; the kernel decompresses.
	name="MS ML-DSA-$s modsign sha512 token, kc_data.ko.xz signed inside"
	copy_of kc_data.ko.xz
	if ms "$name" kc_data "$F" sha512 "$uri" "$cert"; then
		if xz -dc "$F" >"$T/.unpacked.ko" && is_signed "$T/.unpacked.ko"; then
			both "$name" kc_data "$F" finit LOADED LOADED
		else
			t_fail "$name: a signed module inside" "$(xz -l "$F" 2>&1)"
		fi
	fi
done

# The other ways to sign, once each, without signed attributes (what both
# kernels take): the signer named by subjectKeyIdentifier (-k), the
# certificate from the token, one -b run over three modules.
uri=$(mldsa_uri mldsa65)
name="MS ML-DSA-65 modsign -k sha512 token (subjectKeyIdentifier)"
copy_of kc_hello
ms "$name" kc_hello "$F" -k sha512 "$uri" "$MLDSA/mldsa65.x509.der" &&
	both "$name" kc_hello "$F" insmod LOADED LOADED
name="MS ML-DSA-87 modsign sha512, key and certificate from the token"
copy_of kc_hello
ms "$name" kc_hello "$F" sha512 "$(mldsa_uri mldsa87)" \
	"$(mldsa_uri mldsa87 | sed 's/;type=private?/;type=cert?/')" &&
	both "$name" kc_hello "$F" insmod LOADED LOADED
mkdir -p "$T/bulk"
cp "$T"/ext/kc_*.ko "$T/bulk/"
if "$MODSIGN" -b sha512 "$(mldsa_uri mldsa44)" "$MLDSA/mldsa44.x509.der" "$T"/bulk/kc_*.ko \
	>"$T/.sign" 2>&1; then
	for m in $EXT_MODS; do
		both "MS ML-DSA-44 modsign -b sha512 token, one run for three: $m" "$m" "$T/bulk/$m.ko" \
			insmod LOADED LOADED
	done
else
	t_fail "sign: MS ML-DSA-44 modsign -b sha512 token" "$(cat "$T/.sign")"
fi
# The agent signs digests, never a module: ML-DSA only with signed
# attributes, so only the waiver kernel loads what it signs.
if have_agent "the ML-DSA agent case"; then
	name="MS ML-DSA-65 modsign --signed-attrs sha512 under modsign agent"
	copy_of kc_param
	: >"$T/agent.log"
	if "$MODSIGN" agent --log "$T/agent.log" "$uri" -- "$MODSIGN" --signed-attrs sha512 "$uri" \
		"$MLDSA/mldsa65.x509.der" "$F" >"$T/.sign" 2>&1; then
		if [ "$(grep -c . "$T/agent.log")" -ge 1 ]; then
			both "$name" kc_param "$F" insmod "REFUSED:$AUTHATTRS_RE" LOADED
		else
			t_fail "$name: the agent signed (a line in its --log)" "$(cat "$T/.sign")"
		fi
	else
		t_fail "sign: $name" "$(cat "$T/.sign")"
	fi
fi

# --- the two boots ----------------------------------------------------------

# boot_one LABEL OBJ COLUMN: the cases of ALL for one kernel (COLUMN 5:
# default, 6: waiver), booted, judged.
boot_one() {
	local label=$1 col=$3 name mod file how want expect pattern
	OBJ=$2
	kc_initrd "$label"
	while IFS="$(printf '\t')" read -r name mod file how w5 w6; do
		[ "$col" = 5 ] && want=$w5 || want=$w6
		expect=${want%%:*}
		pattern=""
		[ "$expect" = "$want" ] || pattern=${want#*:}
		add_case "$name: $label kernel $([ "$expect" = LOADED ] && echo loads || echo refuses)" \
			"$mod" "$file" "$expect" "$pattern" "$how"
	done <"$T/all"
	echo "$(grep -c . "$T/all") cases for the $label kernel"
	kc_boot "7.2 ML-DSA $label"
	kc_boot_certs "7.2 ML-DSA $label" rsa2048 ML-DSA-44 ML-DSA-65 ML-DSA-87
	kc_results
}

boot_one default "$OBJ_D" 5
boot_one waiver "$OBJ_W" 6
# The waiver says so once per boot, at the first module with signed
# attributes (when there was one that only the waiver lets in).
if awk -F '\t' '$5 ~ /has authattrs/ && $6 == "LOADED" { f = 1 } END { exit !f }' "$T/all"; then
	if grep -q 'Waived invalid module sig (has authattrs)' "$BD/console.txt"; then
		t_pass "waiver kernel: 'Waived invalid module sig (has authattrs)' in its log"
	else
		t_fail "waiver kernel: 'Waived invalid module sig (has authattrs)' in its log" \
			"$(grep -c . "$BD/console.txt") console lines"
	fi
fi

# modsign's verifier as a judge agrees with both kernels on every module
# they were given: `verify --kernel-default` says OK exactly where the
# default kernel loaded, plain `verify` exactly where the waiver kernel did.
phase "modsign verify"
for col in 5 6; do
	bad=""
	while IFS="$(printf '\t')" read -r name mod file how w5 w6; do
		ps=$(printf '%s' "$name" | sed -n 's/.*ML-DSA-\([0-9][0-9]\).*/\1/p')
		if [ "$col" = 5 ]; then
			want=${w5%%:*}
			set -- --kernel-default
		else
			want=${w6%%:*}
			set --
		fi
		got=REFUSED
		"$MODSIGN" verify "$@" -c "$MLDSA/mldsa$ps.x509.der" "$file" >"$T/.verify" 2>&1 && got=LOADED
		[ "$got" = "$want" ] || bad="$bad ${file##*/}(verify: $got, kernel: $want: $(head -n 1 "$T/.verify"))"
	done <"$T/all"
	[ "$col" = 5 ] && what="verify --kernel-default agrees with the default kernel" ||
		what="verify agrees with the waiver kernel"
	if [ -z "$bad" ]; then
		t_pass "modsign $what on all $(grep -c . "$T/all") modules"
	else
		t_fail "modsign $what on all $(grep -c . "$T/all") modules" "differ:$bad"
	fi
done

kc_done
