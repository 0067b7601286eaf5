# A real OpenSSH sshd on the loopback interface for tests that forward a
# Unix socket with `ssh -R` (sourced after common.sh and t_setup): its own
# config, host key and user key in $T/ssh, a high port, nothing from ~/.ssh.
#   sshd_setup   starts it: $port, $sshd_pid set; returns 1 with the reason
#                in $sshd_why when it cannot run here (the caller skips)
#   sshd_stop    kills it (for the caller's EXIT trap)
#   ssh_t ARGS   ssh with the test's own client settings
#   ssh_env      the VAR=value words a modsign on the "remote" side needs to
#                run as here (for `env` in a script run there)

sshd_pid=""

sshd_stop() {
	[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null
	sshd_pid=""
}

# sshd_start PORT: sshd on 127.0.0.1:PORT; 1 when it does not come up.
sshd_start() {
	port=$1
	cat >"$S/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $S/host_key
PidFile $S/sshd.pid
AuthorizedKeysFile $S/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
StreamLocalBindMask 0177
LogLevel ERROR
EOF
	"$SSHD" -f "$S/sshd_config" -D -e 2>"$S/sshd.log" &
	sshd_pid=$!
	for _ in $(seq 1 50); do
		grep -q "Address already in use" "$S/sshd.log" && return 1
		kill -0 "$sshd_pid" 2>/dev/null || return 1
		ssh-keyscan -p "$port" 127.0.0.1 >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

sshd_setup() {
	S=$T/ssh
	mkdir -p "$S"
	SSHD=$(command -v sshd || echo /usr/sbin/sshd)
	if ! [ -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
		sshd_why="no OpenSSH server or client (scripts/install-deps.sh installs openssh-server)"
		return 1
	fi
	if [ "$(id -u)" -ne 0 ]; then
		sshd_why="sshd logs in only the user it runs as when not root; run as root"
		return 1
	fi
	# sshd's privilege separation wants its empty directory, which the package's service makes.
	if ! [ -d /run/sshd ] && ! mkdir -p -m 0755 /run/sshd 2>/dev/null; then
		sshd_why="no /run/sshd"
		return 1
	fi
	if ! ssh-keygen -q -t ed25519 -N '' -f "$S/host_key" ||
		! ssh-keygen -q -t ed25519 -N '' -f "$S/id"; then
		sshd_why="ssh-keygen failed"
		return 1
	fi
	cp "$S/id.pub" "$S/authorized_keys"
	for _ in 1 2 3 4 5; do
		sshd_start "$((20000 + RANDOM % 40000))" && break
		kill "$sshd_pid" 2>/dev/null
		wait "$sshd_pid" 2>/dev/null
		sshd_pid=""
	done
	if [ -z "$sshd_pid" ]; then
		sshd_why="sshd did not start: $(head -n 3 "$S/sshd.log")"
		return 1
	fi
	if ! ssh_t root@127.0.0.1 true >"$S/login.out" 2>&1; then
		sshd_why="cannot log in to the test sshd: $(cat "$S/login.out")"
		return 1
	fi
}

ssh_t() {
	ssh -F /dev/null -i "$S/id" -o IdentitiesOnly=yes -o BatchMode=yes \
		-o StrictHostKeyChecking=no -o UserKnownHostsFile="$S/known_hosts" \
		-o ExitOnForwardFailure=yes -o LogLevel=ERROR -p "$port" "$@"
}

ssh_env() {
	local e="ASAN_OPTIONS=$ASAN_OPTIONS LSAN_OPTIONS=$LSAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
	e="$e P11_KIT_STRICT=1"
	# Under tests/valgrind/run.sh, $MODSIGN needs its settings on the other side too.
	for v in MODSIGN_VG_LOGDIR MODSIGN_VG_BIN MODSIGN_TEST_NAME MODSIGN_VG_EXTRA; do
		[ -n "${!v:-}" ] && e="$e $v=${!v}"
	done
	echo "$e"
}
