# shellcheck shell=bash
# A TPM 2.0 token of our own: tpm2-pkcs11 over swtpm, every part started in
# a directory of the caller's and named by module-path= (nothing registered
# or read system-wide is relied on). Sourced by tests/integration/token_tpm.sh
# and bench/tokens_real.sh; bash, safe under set -e.
#   tpm_missing             prints what is not installed (empty: all is)
#   tpm_start DIR PIN       swtpm on a free loopback port pair, its state
#                           in DIR/tpm; tpm2-abrmd on a private D-Bus
#                           session bus for tpm2_ptool only (without a
#                           resource manager tpm2_ptool runs the TPM out of
#                           object slots); token modsign-tpm (user PIN PIN)
#                           with tests/data/rsa2048.key.pem imported as
#                           rsa2048 (id 01). tpm2-abrmd stays up for more
#                           tpm_ptool calls until tpm_provisioned. Returns
#                           non-zero on failure (logs in DIR/*.log)
#   tpm_ptool ARGS...       tpm2_ptool through tpm2-abrmd, on the store
#   tpm_provisioned         stops tpm2-abrmd and its bus: tpm2-pkcs11
#                           talks to swtpm directly (TPM2_PKCS11_TCTI)
#   tpm_swtpm_start         (re)starts swtpm on the same ports and state
#   tpm_uri KEY             the URI of KEY on the token
#   tpm_stop                stops whatever is left
# Sets TPM_MODULE, TPM_DIR, TPM_PORT, TPM_SWTPM_PID; exports
# TPM2_PKCS11_TCTI, TPM2_PKCS11_STORE and TSS2_LOG.

TPM_MODULE=/usr/lib/x86_64-linux-gnu/pkcs11/libtpm2_pkcs11.so
TPM_DIR=""
TPM_PORT=""
TPM_SWTPM_PID=""
TPM_DBUS_PID=""
TPM_ABRMD_PID=""

tpm_missing() {
	local c missing=""
	for c in swtpm tpm2_ptool tpm2-abrmd tpm2_dictionarylockout dbus-daemon pkcs11-tool; do
		command -v "$c" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin command -v "$c" >/dev/null 2>&1 ||
			missing="$missing $c"
	done
	[ -e "$TPM_MODULE" ] || missing="$missing $TPM_MODULE"
	echo "${missing# }"
}

# tpm_port_free P: nothing listens on 127.0.0.1:P.
tpm_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# tpm_pick_port: a free pair of loopback ports in $TPM_PORT.
tpm_pick_port() {
	for _ in $(seq 1 50); do
		TPM_PORT=$((20000 + (RANDOM % 20000) * 2))
		tpm_port_free "$TPM_PORT" && tpm_port_free $((TPM_PORT + 1)) && return 0
	done
	return 1
}

tpm_swtpm_start() {
	local tries=0
	[ -n "$TPM_PORT" ] || tpm_pick_port || return 1
	until swtpm socket --tpm2 --tpmstate dir="$TPM_DIR/tpm" \
		--server type=tcp,port="$TPM_PORT",bindaddr=127.0.0.1 \
		--ctrl type=tcp,port=$((TPM_PORT + 1)),bindaddr=127.0.0.1 \
		--flags not-need-init,startup-clear --daemon --pid file="$TPM_DIR/swtpm.pid" \
		>>"$TPM_DIR/swtpm.log" 2>&1; do
		tries=$((tries + 1))
		[ $tries -lt 5 ] && tpm_pick_port || return 1
	done
	TPM_SWTPM_PID=$(cat "$TPM_DIR/swtpm.pid")
	export TPM2_PKCS11_TCTI="swtpm:port=$TPM_PORT"
	export TPM2_PKCS11_STORE=$TPM_DIR/store
}

tpm_ptool() {
	TPM2TOOLS_TCTI=tabrmd:bus_type=session DBUS_SESSION_BUS_ADDRESS=unix:path=$TPM_DIR/bus \
		tpm2_ptool "$@" --path "$TPM_DIR/store" >>"$TPM_DIR/ptool.log" 2>&1
}

tpm_start() {
	TPM_DIR=$1
	PATH=$PATH:/usr/sbin
	export TSS2_LOG=all+NONE
	mkdir -p "$TPM_DIR/tpm" "$TPM_DIR/store"
	tpm_swtpm_start || return 1
	dbus-daemon --session --fork --address="unix:path=$TPM_DIR/bus" --print-pid=3 \
		3>"$TPM_DIR/dbus.pid" >>"$TPM_DIR/provision.log" 2>&1
	TPM_DBUS_PID=$(cat "$TPM_DIR/dbus.pid" 2>/dev/null)
	DBUS_SESSION_BUS_ADDRESS=unix:path=$TPM_DIR/bus \
		tpm2-abrmd --session --allow-root --tcti="swtpm:port=$TPM_PORT" \
		>>"$TPM_DIR/provision.log" 2>&1 &
	TPM_ABRMD_PID=$!
	# abrmd takes a moment to claim its bus name.
	for _ in $(seq 1 50); do
		tpm_ptool init && break
		sleep 0.2
	done
	tpm_ptool addtoken --pid=1 --label=modsign-tpm --userpin="$2" --sopin=so-pin-tpm-0000 &&
		tpm_ptool import --label=modsign-tpm --key-label=rsa2048 --id=01 --userpin="$2" \
			--algorithm=rsa --privkey="$TOP/tests/data/rsa2048.key.pem"
}

tpm_provisioned() {
	if [ -n "$TPM_ABRMD_PID" ]; then
		kill "$TPM_ABRMD_PID" 2>/dev/null || true
		wait "$TPM_ABRMD_PID" 2>/dev/null || true
	fi
	if [ -n "$TPM_DBUS_PID" ]; then
		kill "$TPM_DBUS_PID" 2>/dev/null || true
	fi
	TPM_ABRMD_PID=""
	TPM_DBUS_PID=""
	return 0
}

tpm_uri() {
	printf 'pkcs11:token=modsign-tpm;object=%s;type=private?module-path=%s' "$1" "$TPM_MODULE"
}

tpm_stop() {
	tpm_provisioned
	if [ -n "$TPM_SWTPM_PID" ]; then
		kill "$TPM_SWTPM_PID" 2>/dev/null || true
	fi
	TPM_SWTPM_PID=""
	return 0
}
