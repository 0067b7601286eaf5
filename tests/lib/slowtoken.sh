# The set-up of tests that sign through tests/slowtoken (build/slowtoken.so,
# a forwarding shim over the SoftHSM2 token of t_token): sourced after
# common.sh, then t_slowtoken after t_setup.
#   t_slowtoken        builds the shim ($SHIM; a failed build fails the
#                      script there) and clears every SLOWTOKEN_* setting
#                      of the environment, so that each test sets its own,
#                      for one command only (or in a copy's .conf)
#   slow_key_uri NAME  the URI of key NAME on the t_token token through the
#                      shim (as key_uri, with the shim as module-path)

t_slowtoken() {
	SHIM=$TOP/build/slowtoken.so
	if ! make -s -C "$TOP" build/slowtoken.so >"$T/make.out" 2>&1; then
		t_fail "build/slowtoken.so builds" "$(tail -n 20 "$T/make.out")"
		t_done
		exit 1
	fi
	unset "${!SLOWTOKEN_@}"
}

slow_key_uri() {
	printf 'pkcs11:token=modsign-test;object=%s;type=private?module-path=%s' "$1" "$SHIM"
}
