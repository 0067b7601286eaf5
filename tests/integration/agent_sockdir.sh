#!/bin/bash
# Nobody can take over the agent's socket directory: $TMPDIR is
# used only when no other user can move what the agent makes in it (ours
# or root's, and sticky when others may write to it, all the way up), a
# socket path with a control character is refused, and the agent's cleanup
# removes only what it made: a directory renamed away and replaced by a
# link to someone's files leaves those files alone. Runs as root (chown,
# another user's directories); a counted SKIP otherwise.
. "$(dirname "$0")/../lib/common.sh"
t_setup
# shellcheck source=tests/lib/agent.sh
. "$TOP/tests/lib/agent.sh"
agent_setup
KEY=$DATA/rsa2048.key.pem

if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
	t_skip agent_sockdir "needs root and the user nobody (directories of another user)"
	t_done
	exit
fi


# in_tmpdir DIR NAME: the agent, with TMPDIR=DIR and no $XDG_RUNTIME_DIR,
# around a command that prints its socket path into $T/sockpath.
in_tmpdir() {
	env -u XDG_RUNTIME_DIR TMPDIR="$1" "$MODSIGN" agent "$KEY" -- \
		sh -c 'printf "%s\n" "$MODSIGN_AGENT_SOCK"' >"$T/sockpath" 2>"$T/out"
	rc=$?
	cat "$T/out" >>"$MS_LOG"
}

# refused NAME DIR PATTERN: the agent does not start under TMPDIR=DIR, says
# why (PATTERN) and what to set, and leaves nothing in DIR.
refused() {
	in_tmpdir "$2"
	if [ "$rc" -eq 1 ] && grep -q -- "$3" "$T/out" && grep -q "set XDG_RUNTIME_DIR" "$T/out" &&
	    ! grep -q "agent: pid" "$T/out" && [ -z "$(ls -A "$2")" ]; then
		t_pass "$1"
	else
		t_fail "$1" "rc $rc" "$(cat "$T/out")" "$(ls -A "$2")"
	fi
}

# --- TMPDIR: whose, and who may write to it.
mkdir -m 0755 "$T/theirs"
chown nobody "$T/theirs"
refused "TMPDIR owned by another user: refused, says why" "$T/theirs" \
	"TMPDIR: $T/theirs is owned by another user, so its user could replace"
mkdir -m 0777 "$T/open"
refused "TMPDIR writable by all, not sticky: refused, says why" "$T/open" \
	"TMPDIR: $T/open is writable by others and not sticky"
mkdir -m 0775 "$T/group"
refused "TMPDIR writable by its group, not sticky: refused" "$T/group" \
	"is writable by others and not sticky"
mkdir -m 0755 "$T/theirs2"
chown nobody "$T/theirs2"
mkdir -m 0700 "$T/theirs2/mine"
refused "TMPDIR of ours inside another user's directory: refused" "$T/theirs2/mine" \
	"TMPDIR: $T/theirs2 is owned by another user"
ln -s "$T/theirs" "$T/link-to-theirs"
refused "TMPDIR a link to another user's directory: refused (checked where it leads)" \
	"$T/link-to-theirs" "is owned by another user"

mkdir -m 1777 "$T/sticky"
in_tmpdir "$T/sticky"
case $(cat "$T/sockpath") in
"$T"/sticky/modsign-agent.*/sock)
	[ "$rc" -eq 0 ] && [ -z "$(ls -A "$T/sticky")" ] &&
		t_pass "TMPDIR sticky and writable by all (as /tmp): used, cleaned up" ||
		t_fail "TMPDIR sticky and writable by all (as /tmp): used, cleaned up" "rc $rc" \
			"$(cat "$T/out")" "$(ls -A "$T/sticky")"
	;;
*) t_fail "TMPDIR sticky and writable by all (as /tmp): used, cleaned up" "$(cat "$T/out")" ;;
esac
mkdir -m 0700 "$T/private"
in_tmpdir "$T/private"
case $(cat "$T/sockpath") in
"$T"/private/modsign-agent.*/sock) t_pass "TMPDIR private and ours: used" ;;
*) t_fail "TMPDIR private and ours: used" "rc $rc" "$(cat "$T/out")" ;;
esac

# --- A control character in the socket path: refused, not printed for eval.
nl_dir="$T/new
line"
mkdir -m 0700 "$nl_dir"
env -u XDG_RUNTIME_DIR TMPDIR="$nl_dir" "$MODSIGN" agent --daemon "$KEY" >"$T/daemon.env" 2>"$T/out"
rc=$?
cat "$T/out" >>"$MS_LOG"
if [ "$rc" -ne 0 ] && [ ! -s "$T/daemon.env" ] && grep -q "TMPDIR holds a control character" \
    "$T/out" && [ -z "$(ls -A "$nl_dir")" ]; then
	t_pass "newline in TMPDIR: --daemon refuses, prints no assignment"
else
	t_fail "newline in TMPDIR: --daemon refuses, prints no assignment" "rc $rc" \
		"$(cat "$T/daemon.env" "$T/out")"
	kill "$(sed -n 's/^MODSIGN_AGENT_PID=\([0-9]*\);.*/\1/p' "$T/daemon.env")" 2>/dev/null
fi
tab_dir="$T/tab	x"
mkdir -m 0700 "$tab_dir"
env TMPDIR=/tmp XDG_RUNTIME_DIR="$tab_dir" "$MODSIGN" agent "$KEY" -- true >"$T/out" 2>&1
rc=$?
cat "$T/out" >>"$MS_LOG"
[ "$rc" -eq 1 ] && grep -q "XDG_RUNTIME_DIR holds a control character" "$T/out" &&
	t_pass "tab in XDG_RUNTIME_DIR: refused" || t_fail "tab in XDG_RUNTIME_DIR: refused" \
	"rc $rc" "$(cat "$T/out")"

# --- Cleanup removes what the agent made, and nothing a swapped path leads to.
if daemon "$KEY"; then
	pid=$MODSIGN_AGENT_PID
	dir=$(dirname "$MODSIGN_AGENT_SOCK")
	mkdir "$T/precious"
	echo keep >"$T/precious/sock"
	mv "$dir" "$dir.away"
	ln -s "$T/precious" "$dir"
	kill -TERM "$pid"
	if wait_gone "$pid" && [ -f "$T/precious/sock" ] && [ -L "$dir" ]; then
		t_pass "socket directory swapped for a link: SIGTERM leaves the link's target alone"
	else
		t_fail "socket directory swapped for a link: SIGTERM leaves the link's target alone" \
			"$(ls -la "$T/precious" "$dir" 2>&1)"
	fi
	[ ! -e "$dir.away/sock" ] && t_pass "...and removes its own socket, where it was moved" ||
		t_fail "...and removes its own socket, where it was moved" "$(ls -la "$dir.away")"
	rm -rf "$dir" "$dir.away"
else
	t_fail "daemon started" "$(cat "$T/daemon.err")"
fi
if daemon "$KEY"; then
	pid=$MODSIGN_AGENT_PID
	dir=$(dirname "$MODSIGN_AGENT_SOCK")
	mv "$dir" "$dir.away"
	mkdir -m 0700 "$dir"
	echo keep >"$dir/sock"
	kill -TERM "$pid"
	if wait_gone "$pid" && [ -f "$dir/sock" ] && [ ! -e "$dir.away/sock" ]; then
		t_pass "socket directory swapped for another directory: that one left alone"
	else
		t_fail "socket directory swapped for another directory: that one left alone" \
			"$(ls -la "$dir" "$dir.away" 2>&1)"
	fi
	rm -rf "$dir" "$dir.away"
else
	t_fail "daemon started" "$(cat "$T/daemon.err")"
fi
t_done
