# Helpers of the agent's integration tests (sourced after common.sh and
# t_setup): a directory of the test's own for the agents' sockets, daemons
# started and stopped, and token calls counted in slowtoken logs.
#   agent_setup        $RUN (made $XDG_RUNTIME_DIR, searchable by others for
#                      the uid test), $SLOW (the rsa2048 key through the shim),
#                      $CERT; kills the test's daemons and removes $RUN on exit
#   daemon ARGS...     modsign agent --daemon ARGS (KBUILD_SIGN_PIN=$PIN),
#                      then MODSIGN_AGENT_SOCK and MODSIGN_AGENT_PID are set
#   calls FUNC LOG     how many FUNC calls a slowtoken log shows (0: no log)
#   RAW, frame HEX     tests/lib/agent_raw.pl, and a frame of body HEX
#   gone PID           the process has ended (a zombie nobody reaped counts)
#   wait_gone PID      waits up to 15 s for that; fails if it has not

# shellcheck source=tests/lib/slowtoken.sh
. "$TOP/tests/lib/slowtoken.sh"

agent_setup() {
	t_slowtoken
	SLOW=$(slow_key_uri rsa2048)
	CERT=$DATA/rsa2048.x509.der
	RUN=$(mktemp -d /tmp/modsign-agent-test.XXXXXX)
	chmod 0711 "$RUN"
	export XDG_RUNTIME_DIR=$RUN
	unset MODSIGN_AGENT_SOCK MODSIGN_AGENT_PID KBUILD_SIGN_PIN
	AGENT_DAEMONS=""
	trap 'agent_cleanup; t_cleanup' EXIT
}

agent_cleanup() {
	for p in $AGENT_DAEMONS; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$RUN"
}

daemon() {
	KBUILD_SIGN_PIN=$PIN "$MODSIGN" agent --daemon --lifetime 600 "$@" >"$T/daemon.env" \
		2>"$T/daemon.err"
	rc=$?
	cat "$T/daemon.err" >>"$MS_LOG"
	[ "$rc" -eq 0 ] || return 1
	eval "$(cat "$T/daemon.env")"
	AGENT_DAEMONS="$AGENT_DAEMONS $MODSIGN_AGENT_PID"
}

calls() {
	if [ -e "$2" ]; then
		grep -c "^$1 " "$2"
	else
		echo 0
	fi
}

RAW=$TOP/tests/lib/agent_raw.pl
frame() { perl "$RAW" frame "$@"; }
gone() { ! kill -0 "$1" 2>/dev/null || ps -o stat= -p "$1" | grep -q Z; }
wait_gone() {
	for _ in $(seq 1 150); do
		gone "$1" && return 0
		sleep 0.1
	done
	return 1
}
