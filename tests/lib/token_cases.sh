# What every token of tests/integration/token_*.sh is proven on,
# with the token's side counted in a tests/slowtoken call log: sourced after
# common.sh and t_setup. The test defines
#   tc_token [SETTING...]  the token's shim gets these slowtoken settings
#                          (and logs to $LOG, emptied) for the runs after it
#   tc_ms ARGS...          modsign against the token: output in $T/out
#                          (appended to $MS_LOG), status in $rc
# and calls tc_refs, then the cases with the key's URI through the shim:
#   tc_refs          $N modules in $T/src, sign-file's results in $T/ref
#   tc_single URI    one module: sign-file's bytes
#   tc_bulk URI      -b over all: sign-file's bytes, one C_Login, a C_Sign each
#   tc_jobs URI      -j 8 over a 3-session limit: two signers beside session 0
#   tc_agent URI     the agent, a modsign per module: one C_Login for all
#   tc_wrong_pin URI a wrong PIN: refused after one C_Login, nothing touched
# shellcheck source=tests/lib/workset.sh
. "$TOP/tests/lib/workset.sh"
TC_CERT=$DATA/rsa2048.x509.der

tc_refs() {
	"$TOP/tests/lib/mkmodule.sh" "$T/src" "$N" 4 >/dev/null
	mkdir "$T/ref"
	for m in "$T"/src/*.ko; do
		"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$TC_CERT" "$m" "$T/ref/$(basename "$m")"
	done
}

# signs_ok: the signatures the token made.
signs_ok() {
	local n
	n=$(grep -c '^C_Sign rv=CKR_OK' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}

tc_single() {
	tc_token
	cp "$T/src/mod000.ko" "$T/m.ko"
	KBUILD_SIGN_PIN=$PIN tc_ms sha256 "$1" "$TC_CERT" "$T/m.ko"
	if [ "$rc" -eq 0 ] && same "$T/ref/mod000.ko" "$T/m.ko"; then
		t_pass "one module: byte-identical to sign-file"
	else
		t_fail "one module: byte-identical to sign-file" "status $rc" "$(cat "$T/out")"
	fi
}

tc_bulk() {
	tc_token
	fresh
	KBUILD_SIGN_PIN=$PIN tc_ms -b sha256 "$1" "$TC_CERT" "$T"/w/*.ko
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Login)" -eq 1 ] &&
		[ "$(signs_ok)" -eq "$N" ]; then
		t_pass "-b over $N modules: each sign-file's bytes, one C_Login, one C_Sign each"
	else
		t_fail "-b over $N modules: each sign-file's bytes, one C_Login, one C_Sign each" \
			"status $rc, $signed signed, $(n_calls C_Login) C_Login, $(signs_ok) C_Sign" \
			"$(tail -n 5 "$T/out")"
	fi
}

# signers_opened: sessions opened after the C_Login (before it, the module or
# `p11-kit remote` may open and close its own).
signers_opened() {
	sed -n '/^C_Login /,$p' "$LOG" | grep -c '^C_OpenSession rv=CKR_OK'
}

tc_jobs() {
	tc_token SLOWTOKEN_MAX_SESSIONS=3
	fresh
	KBUILD_SIGN_PIN=$PIN tc_ms -j 8 -r "$T/w" sha256 "$1" "$TC_CERT"
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && ! grep -q CKR_SESSION_COUNT "$LOG" &&
		[ "$(n_calls C_Login)" -eq 1 ] && [ "$(signers_opened)" -eq 2 ]; then
		t_pass "-j 8 over a 3-session limit: all signed, two signers beside session 0, one C_Login"
	else
		t_fail "-j 8 over a 3-session limit: all signed, two signers beside session 0" \
			"status $rc, $signed signed, $(grep -c CKR_SESSION_COUNT "$LOG") CKR_SESSION_COUNT," \
			"$(signers_opened) sessions opened after the login (want 2)" \
			"$(tail -n 5 "$T/out")"
	fi
}

tc_agent() {
	tc_token
	fresh
	mkdir -p -m 0700 "$T/run"
	cat >"$T/per-module.sh" <<EOF
#!/bin/sh
for m in "$T"/w/*.ko; do
	"$MODSIGN" sha256 '$1' "$TC_CERT" "\$m" || exit 1
done
EOF
	chmod +x "$T/per-module.sh"
	KBUILD_SIGN_PIN=$PIN XDG_RUNTIME_DIR=$T/run tc_ms agent "$1" -- "$T/per-module.sh"
	count_state
	if [ "$rc" -eq 0 ] && [ "$signed" -eq "$N" ] && [ "$(n_calls C_Login)" -eq 1 ] &&
		[ "$(signs_ok)" -eq "$N" ]; then
		t_pass "agent, a modsign per module: each sign-file's bytes, one C_Login for all"
	else
		t_fail "agent, a modsign per module: each sign-file's bytes, one C_Login for all" \
			"status $rc, $signed signed, $(n_calls C_Login) C_Login, $(signs_ok) C_Sign" \
			"$(tail -n 5 "$T/out")"
	fi
}

tc_wrong_pin() {
	tc_token
	fresh
	KBUILD_SIGN_PIN=$WRONG_PIN tc_ms -b sha256 "$1" "$TC_CERT" "$T"/w/*.ko
	count_state
	expect_fail "wrong PIN: refused" 1 \
		"C_Login: PIN from KBUILD_SIGN_PIN rejected: CKR_PIN_INCORRECT"
	[ "$(n_calls C_Login)" -eq 1 ] && [ "$orig" -eq "$N" ] &&
		t_pass "wrong PIN: one C_Login, no retry, every module untouched" ||
		t_fail "wrong PIN: one C_Login, no retry, every module untouched" \
			"$(n_calls C_Login) C_Login, $orig untouched"
}
