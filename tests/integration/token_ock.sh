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

OCK_MODULE=/usr/lib/x86_64-linux-gnu/opencryptoki/libopencryptoki.so.0
missing=""
for c in pkcsslotd pkcs11-tool unshare nsenter; do
	PATH=$PATH:/usr/sbin command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
[ -e "$OCK_MODULE" ] || missing="$missing $OCK_MODULE"
if [ -n "$missing" ]; then
	t_skip "openCryptoki tests" "not installed:$missing (scripts/install-deps.sh ock)"
	t_done
	exit 0
fi
PATH=$PATH:/usr/sbin

# openCryptoki 3.8.1 leaks about 3 KiB per process in code it has unloaded
# (dlclose) before LeakSanitizer reports, so no suppression can name it.
# modsign's own leaks are checked by every other script.
export ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0
CERT=$DATA/rsa2048.x509.der
OCK=$T/ock
NS_PID=""
SLOTD_PID=""

ock_cleanup() {
	[ -n "$SLOTD_PID" ] && kill "$SLOTD_PID" 2>/dev/null
	[ -n "$NS_PID" ] && kill "$NS_PID" 2>/dev/null
}
trap 'ock_cleanup; t_cleanup' EXIT

# ns CMD...: CMD in the namespace (whose mounts the holder process keeps).
ns() {
	nsenter -t "$NS_PID" -m -i -- "$@"
}

# The configuration: one slot, the soft token. Directories as the package
# makes them (group pkcs11, 0770), since pkcsslotd and the library check.
mkdir -p "$OCK/etc" "$T/tokens/ock/swtok/TOK_OBJ" "$OCK/run/lock/opencryptoki/swtok"
cat >"$OCK/etc/opencryptoki.conf" <<'EOF'
version opencryptoki-3.1

slot 3
{
stdll = libpkcs11_sw.so
}
EOF
chgrp -R pkcs11 "$T/tokens/ock" "$OCK/run/lock/opencryptoki" 2>/dev/null
chmod -R 0770 "$T/tokens/ock" "$OCK/run/lock/opencryptoki"
chmod 1777 "$OCK/run/lock"
unshare --mount --ipc --propagation private sleep 100000 &
NS_PID=$!
sleep 0.2
if ! ns sh -c 'mount --bind "$1/etc" /etc/opencryptoki &&
	mount --bind "$2" /var/lib/opencryptoki && mount --bind "$1/run" /run' \
	sh "$OCK" "$T/tokens/ock" >"$T/ns.out" 2>&1; then
	t_skip "openCryptoki tests" "no private mount namespace here: $(head -n 1 "$T/ns.out")"
	t_done
	exit 0
fi

# slotd_start: pkcsslotd in the namespace; it forks and writes its pid.
slotd_start() {
	rm -f "$OCK/run/pkcsslotd.pid"
	ns pkcsslotd >>"$T/slotd.log" 2>&1 || return 1
	for _ in $(seq 1 50); do
		[ -s "$OCK/run/pkcsslotd.pid" ] && break
		sleep 0.1
	done
	SLOTD_PID=$(cat "$OCK/run/pkcsslotd.pid" 2>/dev/null)
	[ -n "$SLOTD_PID" ]
}

p11() {
	ns pkcs11-tool --module "$OCK_MODULE" "$@" >>"$T/tokens/provision.log" 2>&1
}
# The soft token's SO PIN is 87654321 until changed; init wants it.
if slotd_start &&
	p11 --slot 3 --init-token --label modsign-ock --so-pin 87654321 &&
	p11 --slot 3 --init-pin --login --login-type so --so-pin 87654321 --new-pin "$OCK_PIN" &&
	p11 --slot 3 --write-object "$DATA/rsa2048.key.pem" --type privkey --id 01 \
		--label rsa2048 --login --pin "$OCK_PIN"; then
	t_pass "pkcsslotd of our own; soft token initialised, rsa2048 imported"
else
	t_fail "pkcsslotd of our own; soft token initialised, rsa2048 imported" \
		"$(tail -n 5 "$T/slotd.log")" "$(grep -v -i pin "$T/tokens/provision.log" | tail -n 5)"
	t_done
	exit 1
fi

ock_uri() {
	printf 'pkcs11:token=modsign-ock;object=rsa2048;type=private?module-path=%s' "$OCK_MODULE"
}
# The same key through tests/slowtoken, which logs every call.
slow_uri() {
	printf 'pkcs11:token=modsign-ock;object=rsa2048;type=private?module-path=%s' "$SHIM"
}
export SLOWTOKEN_MODULE=$OCK_MODULE
calls() { if [ -e "$2" ]; then grep -c "^$1 " "$2"; else echo 0; fi; }
# ms ARGS...: run_ms in the namespace.
ms() {
	ns "$MODSIGN" "$@" >"$T/out" 2>&1
	rc=$?
	cat "$T/out" >>"$MS_LOG"
}

N=50
"$TOP/tests/lib/mkmodule.sh" "$T/src" $N 2 >/dev/null
mod=$T/src/mod000.ko
mkdir "$T/ref"
for f in "$T"/src/*.ko; do
	"$SIGNFILE" sha256 "$DATA/rsa2048.key.pem" "$CERT" "$f" "$T/ref/$(basename "$f")"
done
fresh() { rm -rf "$T/w" && mkdir "$T/w" && cp "$T"/src/*.ko "$T/w/"; }
n_same() { n=0; for f in "$T"/w/*.ko; do same "$f" "$T/ref/$(basename "$f")" && n=$((n + 1)); done; echo $n; }
n_orig() { n=0; for f in "$T"/w/*.ko; do same "$f" "$T/src/$(basename "$f")" && n=$((n + 1)); done; echo $n; }
n_tmp() { find "$T/w" -name '.*.modsign-*.tmp' | wc -l; }
export KBUILD_SIGN_PIN=$OCK_PIN

# --- One module: byte for byte what sign-file makes with the PEM file.
cp "$mod" "$T/m.ko"
ms sha256 "$(ock_uri)" "$CERT" "$T/m.ko"
if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref/mod000.ko"; then
	t_pass "one module: identical to sign-file with the PEM key"
else
	t_fail "one module: identical to sign-file with the PEM key" "status $rc" "$(tail -n 5 "$T/out")"
fi

# --- -b over 50 modules: one C_Login.
fresh
SLOWTOKEN_LOG=$T/bulk.log ms -b sha256 "$(slow_uri)" "$CERT" "$T"/w/*.ko
if [ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] && [ "$(calls C_Login "$T/bulk.log")" = 1 ]; then
	t_pass "-b over $N modules: one C_Login, every module identical to sign-file"
else
	t_fail "-b over $N modules: one C_Login, every module identical to sign-file" \
		"status $rc, $(n_same) equal" "$(awk '{print $1}' "$T/bulk.log" | sort | uniq -c)"
fi

# --- -j above the token's session limit: the soft token states no real
# limit (ulMaxSessionCount 2^64 - 2), so the shim sets 3.
fresh
SLOWTOKEN_MAX_SESSIONS=3 SLOWTOKEN_LOG=$T/jobs.log ms -b -j 16 sha256 "$(slow_uri)" "$CERT" \
	"$T"/w/*.ko
if [ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] && [ "$(calls C_Login "$T/jobs.log")" = 1 ]; then
	t_pass "-j 16 on a token allowing 3 sessions: all $N signed, one C_Login"
else
	t_fail "-j 16 on a token allowing 3 sessions: all $N signed, one C_Login" \
		"status $rc, $(n_same) equal" "$(tail -n 5 "$T/out")"
fi
fresh
ms -b -j 64 sha256 "$(ock_uri)" "$CERT" "$T"/w/*.ko
if [ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ]; then
	t_pass "-j 64 on the soft token: all $N identical to sign-file"
else
	t_fail "-j 64 on the soft token: all $N identical to sign-file" "status $rc, $(n_same) equal" \
		"$(tail -n 5 "$T/out")"
fi

# --- 50 per-module modsign processes under the agent: one C_Login.
fresh
mkdir -m 0700 "$T/run"
cat >"$T/loop.sh" <<EOF
#!/bin/sh
for f in "$T"/w/*.ko; do
	"$MODSIGN" sha256 "$(slow_uri)" "$CERT" "\$f" || exit 1
done
EOF
chmod +x "$T/loop.sh"
XDG_RUNTIME_DIR=$T/run SLOWTOKEN_LOG=$T/agent.log ms agent "$(slow_uri)" -- "$T/loop.sh"
if [ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] && [ "$(calls C_Login "$T/agent.log")" = 1 ] &&
	[ "$(calls C_Sign "$T/agent.log")" -ge $N ]; then
	t_pass "agent: $N modsign processes, one C_Login, every module identical to sign-file"
else
	t_fail "agent: $N modsign processes, one C_Login, every module identical to sign-file" \
		"status $rc, $(n_same) equal" "$(awk '{print $1}' "$T/agent.log" | sort | uniq -c)" \
		"$(tail -n 5 "$T/out")"
fi

# --- A wrong PIN (of a length the token takes): one C_Login, the module
# untouched; the right PIN signs afterwards.
cp "$mod" "$T/m.ko"
KBUILD_SIGN_PIN=$OCK_WRONG_PIN SLOWTOKEN_LOG=$T/wrong.log ms sha256 "$(slow_uri)" "$CERT" "$T/m.ko"
expect_fail "wrong PIN: refused" 1 "C_Login.*CKR_PIN_INCORRECT"
if [ "$(calls C_Login "$T/wrong.log")" = 1 ] && same "$T/m.ko" "$mod"; then
	t_pass "wrong PIN: one C_Login, module untouched"
else
	t_fail "wrong PIN: one C_Login, module untouched" "$(calls C_Login "$T/wrong.log") C_Login"
fi
ms sha256 "$(ock_uri)" "$CERT" "$T/m.ko"
if [ "$rc" -eq 0 ] && same "$T/m.ko" "$T/ref/mod000.ko"; then
	t_pass "wrong PIN: the right PIN signs afterwards"
else
	t_fail "wrong PIN: the right PIN signs afterwards" "status $rc" "$(tail -n 5 "$T/out")"
fi

# --- pkcsslotd stopped in the middle of a bulk run (each signature slowed
# to 50 ms so that there is a middle): each module untouched or signed, no
# temp file; pkcsslotd restarted, --skip-signed finishes the job.
fresh
: >"$T/kill.log"
ns env SLOWTOKEN_SIGN_MS=50 SLOWTOKEN_LOG="$T/kill.log" timeout 300 "$MODSIGN" -b -j 2 sha256 \
	"$(slow_uri)" "$CERT" "$T"/w/*.ko >"$T/out" 2>&1 &
ms_pid=$!
for _ in $(seq 1 600); do
	[ "$(calls C_Sign "$T/kill.log")" -ge 10 ] && break
	kill -0 "$ms_pid" 2>/dev/null || break
	sleep 0.05
done
kill -9 "$SLOTD_PID"
SLOTD_PID=""
wait "$ms_pid"
rc=$?
cat "$T/out" >>"$MS_LOG"
signed=$(n_same)
orig=$(n_orig)
if [ "$signed" -gt 0 ] && [ $((signed + orig)) -eq $N ] && [ "$(n_tmp)" -eq 0 ]; then
	t_pass "pkcsslotd killed mid-run: exit $rc, $signed signed, $orig untouched, none half-written, no temp file"
else
	t_fail "pkcsslotd killed mid-run: each module untouched or signed, no temp file" \
		"exit $rc, $signed signed, $orig untouched, $(n_tmp) temp files" "$(tail -n 5 "$T/out")"
fi
# A new run without pkcsslotd: openCryptoki's C_Initialize fails; nothing is touched.
cp "$mod" "$T/m.ko"
ms sha256 "$(ock_uri)" "$CERT" "$T/m.ko"
if [ "$rc" -eq 1 ] && grep -q "C_Initialize\|no token" "$T/out" && same "$T/m.ko" "$mod"; then
	t_pass "no pkcsslotd: an error ($(grep -o 'CKR_[A-Z_]*' "$T/out" | head -n 1)), module untouched"
else
	t_fail "no pkcsslotd: an error, module untouched" "status $rc" "$(tail -n 5 "$T/out")"
fi
if slotd_start; then
	ms -b --skip-signed sha256 "$(ock_uri)" "$CERT" "$T"/w/*.ko
	if [ "$rc" -eq 0 ] && [ "$(n_same)" -eq $N ] && [ "$(n_tmp)" -eq 0 ]; then
		t_pass "pkcsslotd restarted: --skip-signed leaves all $N identical to sign-file"
	else
		t_fail "pkcsslotd restarted: --skip-signed leaves all $N identical to sign-file" \
			"status $rc, $(n_same) equal" "$(tail -n 5 "$T/out")"
	fi
else
	t_fail "pkcsslotd restarts" "$(tail -n 5 "$T/slotd.log")"
fi
t_done
