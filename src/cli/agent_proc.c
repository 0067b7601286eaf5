// SPDX-License-Identifier: GPL-2.0-only
/*
 * The processes around `modsign agent`: signals turned into wake-ups of the
 * server, the command started with MODSIGN_AGENT_SOCK and without the PIN,
 * the daemon's detaching and its parent's shell assignments, and `--stop`.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../agent/agent.h"
#include "agent_proc.h"
#include "args.h"
#include "msg.h"
#include "wake.h"

extern char **environ;

/* What the signal handlers and the server's on_wake share. */
static volatile sig_atomic_t got_signal;	/* the last SIGINT, SIGTERM or SIGHUP */

static void
on_signal(int sig)
{
	if (sig != SIGCHLD) {
		got_signal = sig;
	}
	ms_cli_wake_signal();
}

int
ms_cli_agent_signal(void)
{
	return got_signal;
}

/*
 * The PIN stays in the agent: KBUILD_SIGN_PIN is wiped from this process's
 * environment (where /proc shows it) once read, and the command does not
 * inherit it.
 */
void
ms_cli_agent_wipe_env_pin(void)
{
	char *v = getenv("KBUILD_SIGN_PIN");

	if (v != NULL) {
		ms_wipe(v, strlen(v));
	}
	unsetenv("KBUILD_SIGN_PIN");
}

static bool
env_is(const char *entry, const char *name)
{
	size_t n = strlen(name);

	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The command, with MODSIGN_AGENT_SOCK set and default signal handling. */
ms_err
ms_cli_agent_spawn(char **cmd, const char *sock_path, pid_t *pid, int *sys_errno)
{
	char sock_var[sizeof(MS_AGENT_ENV_SOCK) + MS_AGENT_SOCK_PATH_MAX + 1];
	posix_spawnattr_t attr;
	sigset_t def, none;
	char **env = NULL;
	size_t n = 0, k = 0;
	int rc;

	while (environ[n] != NULL) {
		n++;
	}
	env = calloc(n + 2, sizeof(*env));
	if (env == NULL) {
		*sys_errno = ENOMEM;
		return MS_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (!env_is(environ[i], MS_AGENT_ENV_SOCK) && !env_is(environ[i], MS_AGENT_ENV_PID) &&
		    !env_is(environ[i], "KBUILD_SIGN_PIN")) {
			env[k++] = environ[i];
		}
	}
	snprintf(sock_var, sizeof(sock_var), "%s=%s", MS_AGENT_ENV_SOCK, sock_path);
	env[k++] = sock_var;
	env[k] = NULL;
	/* What modsign ignores (SIGPIPE, SIGXFSZ) the command gets as usual. */
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE);
	sigaddset(&def, SIGXFSZ);
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &def);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawnp(pid, cmd[0], NULL, &attr, cmd, env);
	posix_spawnattr_destroy(&attr);
	free(env);
	*sys_errno = rc;
	return rc == 0 ? MS_OK : MS_E_IO;
}

ms_err
ms_cli_agent_wake_pipe(int fds[2])
{
	struct sigaction sa;

	if (ms_app_wake_init(fds) != MS_OK) {
		return MS_E_IO;
	}
	ms_cli_wake_arm(fds[1]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return MS_OK;
}

/* The daemon leaves the terminal and the caller's pipes, and tells the parent it is ready. */
ms_err
ms_cli_agent_detach(int ready_fd, const char *sock_path)
{
	char line[MS_AGENT_SOCK_PATH_MAX + 64];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int n;

	if (null < 0 || setsid() < 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0) {
		ms_cli_error("agent: cannot detach: %s", strerror(errno));
		return MS_E_IO;
	}
	close(null);
	if (chdir("/") != 0) {
		/* the agent opens nothing by a relative path from here on */
	}
	n = snprintf(line, sizeof(line), "READY %ld %s\n", (long)getpid(), sock_path);
	if (n < 0 || write(ready_fd, line, (size_t)n) != n) {
		return MS_E_IO;
	}
	close(ready_fd);
	return MS_OK;
}

/* A path as one word for a POSIX shell: single quotes, each ' as '\''. */
static void
print_quoted(const char *s)
{
	putchar('\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'') {
			fputs("'\\''", stdout);
		} else {
			putchar(*s);
		}
	}
	putchar('\'');
}

/* The parent of a daemon: waits for "READY <pid> <socket>", prints the assignments. */
int
ms_cli_agent_daemon_parent(pid_t child, int ready_fd)
{
	char buf[MS_AGENT_SOCK_PATH_MAX + 64];
	size_t len = 0;
	long pid = 0;
	char *path = NULL, *nl = NULL;
	int st = 0;

	for (;;) {
		ssize_t n = read(ready_fd, buf + len, sizeof(buf) - 1 - len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		len += (size_t)n;
		if (len == sizeof(buf) - 1) {
			break;
		}
	}
	close(ready_fd);
	buf[len] = '\0';
	nl = strchr(buf, '\n');
	if (strncmp(buf, "READY ", 6) != 0 || nl == NULL) {
		/* The child said why on stderr; its status says it failed. */
		while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
		}
		return MS_EXIT_FAIL;
	}
	*nl = '\0';
	pid = strtol(buf + 6, &path, 10);
	if (path == NULL || *path != ' ') {
		return MS_EXIT_FAIL;
	}
	path++;
	printf("%s=", MS_AGENT_ENV_SOCK);
	print_quoted(path);
	printf("; export %s;\n%s=%ld; export %s;\n", MS_AGENT_ENV_SOCK, MS_AGENT_ENV_PID, pid,
	       MS_AGENT_ENV_PID);
	return fflush(stdout) == 0 ? MS_EXIT_OK : MS_EXIT_FAIL;
}

/* --stop: ask the agent of MODSIGN_AGENT_SOCK to stop, and wait until it has. */
int
ms_cli_agent_stop(unsigned token_timeout)
{
	const char *path = getenv(MS_AGENT_ENV_SOCK);
	struct ms_agent_req req = { .type = MS_AGENT_STOP };
	struct ms_agent_call call;
	uint8_t byte[8];
	size_t len = 0;
	int fd = -1, e = 0;
	int wait_ms = token_timeout == 0 ? -1 : (int)(token_timeout + 30) * 1000;
	int rc = MS_EXIT_FAIL;

	if (path == NULL || path[0] == '\0') {
		ms_cli_error("agent --stop: %s is not set: no agent to stop", MS_AGENT_ENV_SOCK);
		return MS_EXIT_FAIL;
	}
	if (ms_agent_sock_connect(path, MS_AGENT_CONNECT_MS, &fd, &e) != MS_OK) {
		ms_cli_error("agent --stop: %s=%s: cannot connect: %s", MS_AGENT_ENV_SOCK, path,
			     e != 0 ? strerror(e) : "not a socket path");
		return MS_EXIT_FAIL;
	}
	if (ms_agent_call(fd, &req, 10000, &call) != MS_OK ||
	    call.reply.status != MS_AGENT_ST_OK) {
		ms_cli_error("agent --stop: %s: the agent did not accept the request: %s", path,
			     call.why != NULL ? call.why : ms_agent_io_text(&call.io));
		goto out;
	}
	/* The agent closes this connection last, after its token is closed. */
	if (ms_agent_frame_read(fd, byte, sizeof(byte), &len, wait_ms, 1000, &call.io) != MS_E_IO ||
	    call.io.end != MS_AGENT_IO_EOF) {
		ms_cli_error("agent --stop: %s: the agent did not finish stopping in time", path);
		goto out;
	}
	printf("unset %s %s;\n", MS_AGENT_ENV_SOCK, MS_AGENT_ENV_PID);
	rc = fflush(stdout) == 0 ? MS_EXIT_OK : MS_EXIT_FAIL;
out:
	close(fd);
	return rc;
}
