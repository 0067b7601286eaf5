# shellcheck shell=bash
# p11-kit remoting of our own: `p11-kit server` exporting one token on a
# Unix socket, reached through the client module p11-kit-client.so
# (module-path=, P11_KIT_SERVER_ADDRESS). Sourced by
# tests/integration/token_remote.sh and bench/tokens_real.sh; bash, safe
# under set -e.
#   remote_missing                 prints what is not installed (empty: all is)
#   remote_start SOCK PROVIDER TOKEN-URI ERRLOG
#                                  (re)starts the server on SOCK with the
#                                  PKCS#11 module PROVIDER, exporting the
#                                  token TOKEN-URI names; waits for the
#                                  socket; exports P11_KIT_SERVER_ADDRESS.
#                                  Non-zero when it did not come up
#   remote_stop                    stops the server and the `p11-kit remote`
#                                  it runs per connection
# Sets REMOTE_CLIENT (the client module) and REMOTE_PID.

REMOTE_CLIENT=/usr/lib/x86_64-linux-gnu/pkcs11/p11-kit-client.so
REMOTE_PID=""

remote_missing() {
	if [ ! -e "$REMOTE_CLIENT" ] || ! p11-kit server --help >/dev/null 2>&1; then
		echo "p11-kit or p11-kit-modules"
	fi
}

remote_start() {
	remote_stop
	rm -f "$1"
	p11-kit server -f -n "$1" --provider "$2" "$3" >/dev/null 2>>"$4" &
	REMOTE_PID=$!
	export P11_KIT_SERVER_ADDRESS=unix:path=$1
	for _ in $(seq 100); do
		[ -S "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

remote_stop() {
	[ -n "$REMOTE_PID" ] || return 0
	# shellcheck disable=SC2046  # a list of pids
	kill $(pgrep -P "$REMOTE_PID") "$REMOTE_PID" 2>/dev/null || true
	wait "$REMOTE_PID" 2>/dev/null || true
	REMOTE_PID=""
}
