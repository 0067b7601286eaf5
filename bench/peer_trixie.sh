#!/bin/bash
# Section (p) of the bench, inside the Debian 13 chroot (bench/peer.sh runs
# it there with scripts/trixie-chroot.sh, the directory it prepared at /src:
# tree/ a copy of modsign's tree, pristine/ the modules, pristine.list).
# Installs what it needs, builds modsign, sets up the SoftHSM2 token and
# OpenSSL's configuration for pkcs11-provider, probes what sign-file does
# with the PIN, then times the variants of bench/peer.sh with
# bench/measure.sh, REPS interleaved rounds. Leaves in /src/run: results.tsv
# (measure.sh's lines), log/, md5.<id>, probes.md, versions.md, peer.log.
# Usage: bash tree/bench/peer_trixie.sh REPS   (in /src)
set -euo pipefail
export LC_ALL=C

REPS=${1:-1}
SRC=/src
TOP=$SRC/tree
BENCH=$TOP/bench
RUN=$SRC/run
RES=$RUN/results.tsv
CACHE=$SRC
WORK=$SRC/work
PIN=1234
SOFTHSM=/usr/lib/softhsm/libsofthsm2.so
CERT=$TOP/tests/data/rsa2048.x509.der
URI_BASE='pkcs11:token=modsign-test;object=rsa2048;type=private'
TOKEN_URI="$URI_BASE?module-path=$SOFTHSM"
MODSIGN=$TOP/modsign
MEASURE_FAILED=0
declare -A CMDTEXT

rm -rf "$RUN"
mkdir -p "$RUN/log"
: > "$RES"
exec 2> >(tee "$RUN/peer.log" >&2)

# shellcheck source=bench/setup.sh
. "$BENCH/setup.sh"
# shellcheck source=bench/measure.sh
. "$BENCH/measure.sh"

say "(p) in the Debian 13 chroot: packages"
# base: the build and the release's linux-kbuild (sign-file); time: RSS.
"$TOP/scripts/install-deps.sh" base pkcs11-provider time >&2 ||
	die "scripts/install-deps.sh base pkcs11-provider time failed"
# shellcheck source=tests/lib/signfile.sh
. "$TOP/tests/lib/signfile.sh"
[ -x "$SIGNFILE" ] || die "no sign-file: $SIGNFILE"
PROVIDER=$(dpkg -L pkcs11-provider | grep '/ossl-modules/pkcs11\.so$' | head -n 1)
[ -n "$PROVIDER" ] || die "pkcs11-provider installs no ossl-modules/pkcs11.so"

say "(p) building modsign"
nice make -C "$TOP" -j 2 modsign > "$RUN/log/make" 2>&1 ||
	die "make modsign failed: $(tail -n 5 "$RUN/log/make")"

"$TOP/tests/lib/mktoken.sh" "$RUN/token" modsign-test "$PIN" > /dev/null ||
	die "tests/lib/mktoken.sh failed"
export SOFTHSM2_CONF=$RUN/token/softhsm2.conf

# provider_conf FILE [PIN-LINE]: OpenSSL's configuration loading
# pkcs11-provider over SoftHSM2 (and the default provider, which loading
# another one would otherwise leave out), with PIN-LINE in its section.
provider_conf() {
	cat > "$1" <<EOF
openssl_conf = openssl_init
[openssl_init]
providers = provider_sect
[provider_sect]
default = default_sect
pkcs11 = pkcs11_sect
[default_sect]
activate = 1
[pkcs11_sect]
module = $PROVIDER
pkcs11-module-path = $SOFTHSM
${2:-}
activate = 1
EOF
}
printf '%s' "$PIN" > "$RUN/pin"
chmod 600 "$RUN/pin"
provider_conf "$RUN/provider-with-pin.cnf" "pkcs11-module-token-pin = file:$RUN/pin"
provider_conf "$RUN/provider.cnf"

{
	printf -- '- Debian %s; sign-file: `%s` from %s; pkcs11-provider %s, OpenSSL %s, SoftHSM2 %s\n' \
		"$(cat /etc/debian_version)" "$SIGNFILE" "$(dpkg -S "$SIGNFILE" | cut -d: -f1)" \
		"$(pkgver pkcs11-provider)" "$(pkgver openssl)" "$(pkgver softhsm2)"
	printf -- '- %s built there against mbedTLS %s, p11-kit %s\n' \
		"$("$MODSIGN" --version 2>&1 | head -n 1)" "$(pkgver libmbedtls-dev)" "$(pkgver libp11-kit0)"
	printf -- '- the provider'"'"'s configuration (OPENSSL_CONF): `[pkcs11_sect]` with `module = %s`, `pkcs11-module-path = %s`, `pkcs11-module-token-pin = file:<a file holding the PIN>` (or the PIN in the URI: `pin-value=`)\n' \
		"$PROVIDER" "$SOFTHSM"
} > "$RUN/versions.md"

# ---------------------------------------------------------------- probes
# probe TEXT EXPECTED CMD...: CMD on a fresh copy of one module, stdin
# /dev/null, no terminal, at most 20 s; one Markdown line with its exit
# status, its last message and whether the module got a signature.
probe() {
	local text=$1 expected=$2 rc=0 out signed=no
	shift 2
	cp "$SRC/pristine/$(head -n 1 "$SRC/pristine.list")" "$RUN/probe.ko"
	out=$(setsid timeout 20 "$@" "$RUN/probe.ko" < /dev/null 2>&1) || rc=$?
	if tail -c 28 "$RUN/probe.ko" | grep -q 'Module signature appended'; then
		signed=yes
	fi
	# Its last messages on one line (OpenSSL's "At main.c:..." left out).
	out=$(printf '%s\n' "$out" | sed '/^$/d; /^At main/d' | tail -n 3 | sed 's/^- //' |
		tr '\n' ' ' | sed 's/ *$//; s/`/'"'"'/g')
	case $rc in
	124) out="no answer after 20 s: killed by timeout${out:+ ($out)}" ;;
	esac
	printf -- '- %s: exit %s, module signed: %s%s. Expected: %s.\n' "$text" "$rc" "$signed" \
		"${out:+; \`$out\`}" "$expected" >> "$RUN/probes.md"
}
: > "$RUN/probes.md"
say "(p) probes: sign-file and the PIN"
probe "PIN in the provider's configuration" "signed" \
	env OPENSSL_CONF="$RUN/provider-with-pin.cnf" "$SIGNFILE" sha256 "$URI_BASE" "$CERT"
probe "PIN in the URI (\`pin-value=\`)" "signed" \
	env OPENSSL_CONF="$RUN/provider.cnf" "$SIGNFILE" sha256 "$URI_BASE?pin-value=$PIN" "$CERT"
probe "PIN in KBUILD_SIGN_PIN only, as kbuild passes it" \
	"ignored (sign-file reads it in its ENGINE branch only): the provider prompts, reads no PIN without a terminal, and OpenSSL finds a key that does not match the certificate" \
	env OPENSSL_CONF="$RUN/provider.cnf" KBUILD_SIGN_PIN=$PIN "$SIGNFILE" sha256 "$URI_BASE" "$CERT"
probe "no OPENSSL_CONF, PIN in the URI" \
	"sign-file loads pkcs11-provider itself with its defaults: the p11-kit proxy and every module registered with p11-kit (here SoftHSM2, p11-kit-trust, OpenSC), and does not come back" \
	env -u OPENSSL_CONF "$SIGNFILE" sha256 "$URI_BASE?pin-value=$PIN" "$CERT"

# ---------------------------------------------------------------- variants

LIST=$RUN/list.abs
abs_list "$SRC/pristine.list" > "$LIST"
p_sf_loop() { OPENSSL_CONF=$RUN/provider-with-pin.cnf each_module "$SIGNFILE" sha256 "$URI_BASE" "$CERT"; }
p_sf_loop_uri() { OPENSSL_CONF=$RUN/provider.cnf each_module "$SIGNFILE" sha256 "$URI_BASE?pin-value=$PIN" "$CERT"; }
p_ms_loop() { KBUILD_SIGN_PIN=$PIN each_module "$MODSIGN" sha256 "$TOKEN_URI" "$CERT"; }
# shellcheck disable=SC2016  # expanded by the inner bash
p_ms_agent() {
	KBUILD_SIGN_PIN=$PIN "$MODSIGN" agent -q "$TOKEN_URI" -- bash -c \
		'while IFS= read -r m; do "$0" sha256 "$1" "$2" "$m" || exit 1; done < "$3"' \
		"$MODSIGN" "$TOKEN_URI" "$CERT" "$LIST"
}
p_ms_b() { KBUILD_SIGN_PIN=$PIN ms --files-from "$LIST" sha256 "$TOKEN_URI" "$CERT"; }
for v in p_sf_loop p_sf_loop_uri p_ms_loop p_ms_agent p_ms_b; do
	CMDTEXT[$v]=$v
done

say "(p) $REPS rounds, $(wc -l < "$SRC/pristine.list") modules"
COMPARE_REVERSE=1 compare_runs "$REPS" "$SRC/pristine" "$SRC/pristine.list" \
	p_sf_loop p_sf_loop_uri p_ms_loop p_ms_agent p_ms_b
rm -rf "$WORK" "$SRC/trash" "$RUN/token" "$RUN/pin"
exit "$MEASURE_FAILED"
