#!/bin/bash
# The bash completion (contrib/bash-completion/modsign), driven as bash
# drives it (COMP_LINE, COMP_POINT, COMP_WORDS, then COMPREPLY) in a bash
# subshell: it registers for modsign, offers the sub-commands and the hash
# names of --help first, every option each form's --help lists, directories
# after -r, and after "pkcs11:" the tokens of p11-kit's registry as URIs,
# which name the token: modsign signs with the completed URI byte for byte
# as sign-file does.
. "$(dirname "$0")/../lib/common.sh"
t_setup
COMPLETION=$TOP/contrib/bash-completion/modsign
mkdir -p "$T/bin" "$T/files/somedir"
ln -s "$MODSIGN" "$T/bin/modsign"
: >"$T/files/somefile.ko"

# comp LINE: the completions bash would offer at the end of LINE, one a line.
comp() {
	PATH="$T/bin:$PATH" bash --norc --noprofile -c '
		. "$1" || exit 1
		COMP_LINE=$2
		COMP_POINT=${#2}
		read -r -a COMP_WORDS <<<"$2"
		[[ $2 == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_modsign
		printf "%s\n" "${COMPREPLY[@]}"' comp "$COMPLETION" "$1" 2>"$T/comp.err"
}

# has NAME LINE WORD...: every WORD is among the completions of LINE.
has() {
	local name=$1 line=$2 out missing="" w
	shift 2
	out=$(comp "$line")
	for w in "$@"; do
		grep -qxF -- "$w" <<<"$out" || missing="$missing $w"
	done
	[ -z "$missing" ] && t_pass "$name" ||
		t_fail "$name" "missing:$missing" "got: $(echo $out)" "$(cat "$T/comp.err")"
}

# The options of a --help: what an option line holds before its
# description (two spaces apart).
help_opts() {
	"$MODSIGN" "$@" --help | awk -F'  ' '/^  -/ { print $2 }' |
		grep -oE -- '(^|[ ,])--?[a-z0-9][a-z0-9-]*' | tr -d ' ,' | sort -u
}

out=$(bash --norc --noprofile -c '. "$1" && complete -p modsign' x "$COMPLETION" 2>&1)
[ "$out" = "complete -F _modsign modsign" ] && t_pass "complete -p modsign: _modsign" ||
	t_fail "complete -p modsign: _modsign" "$out"

hashes=$("$MODSIGN" --help | sed -n '/^  <hash>/,/^  <key>/p' | grep -oE 'sha[0-9][a-z0-9-]*' | sort -u)
[ "$(echo $hashes)" = "sha1 sha224 sha256 sha3-256 sha3-384 sha3-512 sha384 sha512" ] &&
	t_pass "--help names the eight hashes" || t_fail "--help names the eight hashes" "$hashes"
# shellcheck disable=SC2086
has "first word: sub-commands and hash names" "modsign " agent verify info strip $hashes
out=$(comp "modsign ")
grep -qx md5 <<<"$out" && t_fail "first word: no md5" "$out" || t_pass "first word: no md5"
has "first word, prefix: modsign ve -> verify" "modsign ve" verify
[ "$(comp "modsign ve")" = verify ] && t_pass "prefix ve: verify alone" ||
	t_fail "prefix ve: verify alone" "$(comp "modsign ve")"

for sub in "" verify info strip agent; do
	# shellcheck disable=SC2046,SC2086
	has "options of modsign $sub --help" "modsign $sub${sub:+ }-" $(help_opts $sub)
done
out=$(comp "modsign verify --")
grep -qx -- --replace <<<"$out" && t_fail "verify: no signing options" "$out" ||
	t_pass "verify: no signing options"

out=$(cd "$T/files" && comp "modsign -r s")
[ "$out" = somedir ] && t_pass "-r: directories only" || t_fail "-r: directories only" "$out"
out=$(cd "$T/files" && comp "modsign sha256 k.pem c.der some")
[ "$(echo $out)" = "somedir somefile.ko" ] && t_pass "module position: file names" ||
	t_fail "module position: file names" "$out"
has "hash position after options: hash names" "modsign -b -j 3 sha3" sha3-256 sha3-384 sha3-512

# Two tokens in p11-kit's registry (SoftHSM2's module file), one labelled
# with characters RFC 7512 must percent-encode.
t_token
"$TOP/tests/lib/mktoken.sh" "$T/hsm" "key store;2" "$PIN"
if ! command -v p11-kit >/dev/null; then
	t_skip "pkcs11: token URIs" "no p11-kit command (package p11-kit)"
else
	# After "pkcs11:" readline keeps what precedes the last ':' or '='.
	has "pkcs11: -> the registry's tokens" "modsign sha256 pkcs11:" \
		"token=modsign-test" "token=key%20store%3B2"
	has "pkcs11:token=key -> the label, percent-encoded" "modsign sha256 pkcs11:token=key" \
		"key%20store%3B2"
	has "verify -c pkcs11: -> the tokens" "modsign verify -c pkcs11:" "token=modsign-test"
	has "agent pkcs11: -> the tokens" "modsign agent pkcs11:" "token=modsign-test"
	has "key position, pk -> pkcs11:" "modsign sha256 pk" "pkcs11:" "pkcs11:token=modsign-test"
	# The completed URI names the token: sign with it, compare with sign-file
	# (module-path given: the registry's other modules are not under test).
	uri="pkcs11:$(comp "modsign sha256 pkcs11:" | grep -x 'token=key%20store.*')"
	"$TOP/tests/lib/mkmodule.sh" "$T/mods" 1 16 >/dev/null
	cp "$T/mods/mod000.ko" "$T/ref.ko"
	"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$DATA/rsa2048.x509.der" "$T/ref.ko"
	KBUILD_SIGN_PIN=$PIN run_ms sha256 "$uri;object=rsa2048;type=private?module-path=$SOFTHSM" \
		"$DATA/rsa2048.x509.der" "$T/mods/mod000.ko"
	if [ "$rc" -eq 0 ] && same "$T/mods/mod000.ko" "$T/ref.ko"; then
		t_pass "the completed URI ($uri) signs as sign-file does"
	else
		t_fail "the completed URI ($uri) signs as sign-file does" "status $rc" "$(cat "$T/out")"
	fi
fi
t_done
