#!/bin/bash
# openCryptoki's soft token (libpkcs11_sw.so behind libopencryptoki.so.0),
# with a pkcsslotd of the test's own: openCryptoki 3.8.1 reads its
# configuration, token directory, daemon socket and lock directory only from
# fixed paths (/etc/opencryptoki, /var/lib/opencryptoki, /run), so the test
# binds directories of $T over them in a private mount and IPC namespace
# (unshare), starts pkcsslotd there and runs every command in it (nsenter):
# nothing on the machine is read or changed, and the shared memory segment
# is the namespace's. The key imported from tests/data/rsa2048.key.pem signs
# byte for byte as sign-file does with the PEM file: one module, -b over 50
# with one C_Login, 50 modsign processes under the agent, -j above the
# token's session limit. A wrong PIN costs one C_Login; pkcsslotd stopped in
# the middle of a bulk run leaves every module untouched or signed and no
# temp file, and --skip-signed after its restart finishes the job.
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"
t_slowtoken

# shellcheck source=tests/lib/tok_ock.sh
. "$TOP/tests/lib/tok_ock.sh"
missing=$(ock_missing)
if [ -n "$missing" ]; then
	t_skip "openCryptoki tests" "not installed: $missing (scripts/install-deps.sh ock)"
	t_done
	exit 0
fi
PATH=$PATH:/usr/sbin

# openCryptoki 3.8.1 leaks about 3 KiB per process in code it has unloaded
# (dlclose) before LeakSanitizer reports, so no suppression can name it.
# modsign's own leaks are checked by every other script.
export ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0
trap 'ock_stop; t_cleanup' EXIT

# The namespace and the token (tests/lib/tok_ock.sh).
if ! ock_ns_start "$T"; then
	t_skip "openCryptoki tests" "no private mount namespace here: $(head -n 1 "$T/ns.out")"
	t_done
	exit 0
fi
if ock_slotd_start && ock_token "$OCK_PIN"; then
	t_pass "pkcsslotd of our own; soft token initialised, rsa2048 imported"
else
	t_fail "pkcsslotd of our own; soft token initialised, rsa2048 imported" \
		"$(tail -n 5 "$T/slotd.log")" "$(grep -v -i pin "$T/tokens/provision.log" | tail -n 5)"
	t_done
	exit 1
fi

# The checks of tests/lib/token_cases.sh, every command in the namespace,
# counted through a copy of the shim.
TC_IN=ock_ns
TC_MODULE=$OCK_MODULE
TC_SHIM=$T/st.so
cp "$SHIM" "$TC_SHIM"
TC_URI=$(ock_uri)
TC_SLOW="pkcs11:token=modsign-ock;object=rsa2048;type=private?module-path=$TC_SHIM"
TC_PIN=$OCK_PIN
TC_WRONG=$OCK_WRONG_PIN
# shellcheck source=tests/lib/token_cases.sh
. "$TOP/tests/lib/token_cases.sh"
tc_refs 50
export KBUILD_SIGN_PIN=$OCK_PIN

# --- One module, -b, -j, the agent, a wrong PIN.
tc_single
tc_bulk
tc_jobs
tc_agent
tc_wrong_pin

# --- pkcsslotd killed in the middle of a bulk run (each signature slowed to
# 50 ms so that there is a middle): the soft token signs in the process, so
# the run goes on; each module untouched or signed, no temp file. A new run
# without pkcsslotd fails in C_Initialize with nothing touched; after a
# restart --skip-signed finishes the job.
TC_SIGN_MS=50 tc_kill_midrun pkcsslotd kill -9 "$OCK_SLOTD_PID"
OCK_SLOTD_PID=""
cp "$T/src/mod000.ko" "$T/m.ko"
tc_ms sha256 "$TC_URI" "$TC_CERT" "$T/m.ko"
if [ "$rc" -eq 1 ] && grep -q "C_Initialize\|no token" "$T/out" && same "$T/m.ko" "$T/src/mod000.ko"; then
	t_pass "no pkcsslotd: an error ($(grep -o 'CKR_[A-Z_]*' "$T/out" | head -n 1)), module untouched"
else
	t_fail "no pkcsslotd: an error, module untouched" "status $rc" "$(tail -n 5 "$T/out")"
fi
if ock_slotd_start; then
	tc_finish "pkcsslotd restarted"
else
	t_fail "pkcsslotd restarts" "$(tail -n 5 "$T/slotd.log")"
fi
t_done
