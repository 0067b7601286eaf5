# shellcheck shell=bash
# openCryptoki's soft token of our own (libpkcs11_sw.so behind
# libopencryptoki.so.0) with a pkcsslotd of our own: openCryptoki 3.8.1
# reads its configuration, token directory, daemon socket and lock
# directory only from fixed paths (/etc/opencryptoki, /var/lib/opencryptoki,
# /run), so directories of the caller's are bound over them in a private
# mount and IPC namespace (unshare), pkcsslotd is started there and every
# command runs in it (nsenter): nothing on the machine is read or changed,
# and the shared memory segment is the namespace's. Sourced by
# tests/integration/token_ock.sh and bench/tokens_real.sh; bash, safe under
# set -e.
#   ock_missing           prints what is not installed (empty: all is)
#   ock_ns_start DIR      the namespace, its directories in DIR/ock
#                         (configuration: one slot, 3, the soft token) and
#                         DIR/tokens; non-zero, the reason in DIR/ns.out,
#                         when no private mount namespace can be made
#   ock_slotd_start       (re)starts pkcsslotd in it; sets OCK_SLOTD_PID
#   ock_token PIN         initialises token modsign-ock (user PIN PIN, 4 to
#                         8 bytes) and imports tests/data/rsa2048.key.pem as
#                         rsa2048 (id 01); logs in DIR/tokens/provision.log
#   ock_ns CMD...         CMD in the namespace
#   ock_uri               the URI of rsa2048 on the token
#   ock_stop              stops pkcsslotd and the namespace
# Sets OCK_MODULE.

OCK_MODULE=/usr/lib/x86_64-linux-gnu/opencryptoki/libopencryptoki.so.0
OCK_DIR=""
OCK_NS_PID=""
OCK_SLOTD_PID=""

ock_missing() {
	local c missing=""
	for c in pkcsslotd pkcs11-tool unshare nsenter; do
		PATH=$PATH:/usr/sbin command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	[ -e "$OCK_MODULE" ] || missing="$missing $OCK_MODULE"
	echo "${missing# }"
}

ock_ns() {
	nsenter -t "$OCK_NS_PID" -m -i -- "$@"
}

ock_ns_start() {
	local ock=$1/ock tok=$1/tokens/ock
	OCK_DIR=$1
	PATH=$PATH:/usr/sbin
	# Directories as the package makes them (group pkcs11, 0770), since
	# pkcsslotd and the library check.
	mkdir -p "$ock/etc" "$tok/swtok/TOK_OBJ" "$ock/run/lock/opencryptoki/swtok"
	printf 'version opencryptoki-3.1\n\nslot 3\n{\nstdll = libpkcs11_sw.so\n}\n' \
		>"$ock/etc/opencryptoki.conf"
	chgrp -R pkcs11 "$tok" "$ock/run/lock/opencryptoki" 2>/dev/null || true
	chmod -R 0770 "$tok" "$ock/run/lock/opencryptoki"
	chmod 1777 "$ock/run/lock"
	unshare --mount --ipc --propagation private sleep 100000 &
	OCK_NS_PID=$!
	sleep 0.2
	ock_ns sh -c 'mount --bind "$1/etc" /etc/opencryptoki &&
		mount --bind "$2" /var/lib/opencryptoki && mount --bind "$1/run" /run' \
		sh "$ock" "$tok" >"$1/ns.out" 2>&1
}

ock_slotd_start() {
	local run=$OCK_DIR/ock/run
	rm -f "$run/pkcsslotd.pid"
	ock_ns pkcsslotd >>"$OCK_DIR/slotd.log" 2>&1 || return 1
	for _ in $(seq 1 50); do
		[ -s "$run/pkcsslotd.pid" ] && break
		sleep 0.1
	done
	OCK_SLOTD_PID=$(cat "$run/pkcsslotd.pid" 2>/dev/null || true)
	[ -n "$OCK_SLOTD_PID" ]
}

# ock_p11 ARGS...: pkcs11-tool on the token, in the namespace.
ock_p11() {
	ock_ns pkcs11-tool --module "$OCK_MODULE" "$@" >>"$OCK_DIR/tokens/provision.log" 2>&1
}

ock_token() {
	# The soft token's SO PIN is 87654321 until changed; init wants it.
	ock_p11 --slot 3 --init-token --label modsign-ock --so-pin 87654321 &&
		ock_p11 --slot 3 --init-pin --login --login-type so --so-pin 87654321 \
			--new-pin "$1" &&
		ock_p11 --slot 3 --write-object "$TOP/tests/data/rsa2048.key.pem" --type privkey \
			--id 01 --label rsa2048 --login --pin "$1"
}

ock_uri() {
	printf 'pkcs11:token=modsign-ock;object=rsa2048;type=private?module-path=%s' "$OCK_MODULE"
}

ock_stop() {
	if [ -n "$OCK_SLOTD_PID" ]; then
		kill "$OCK_SLOTD_PID" 2>/dev/null || true
	fi
	if [ -n "$OCK_NS_PID" ]; then
		kill "$OCK_NS_PID" 2>/dev/null || true
	fi
	OCK_SLOTD_PID=""
	OCK_NS_PID=""
}
