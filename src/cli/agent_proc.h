/* SPDX-License-Identifier: GPL-2.0-only */
/* The process side of `modsign agent` (agent_proc.c), for agent.c. */
#ifndef MS_CLI_AGENT_H
#define MS_CLI_AGENT_H

#include <sys/types.h>

#include "../common/ms_common.h"

/*
 * ms_cli_agent_wake_pipe() - a wake-up pipe (ms_app_wake_init()) whose
 * write end SIGINT, SIGTERM, SIGHUP and SIGCHLD write to (the server's
 * cfg->wake_fd is fds[0]); SIGPIPE ignored. Closed by ms_cli_wake_close().
 * Return: MS_OK; MS_E_IO with errno.
 */
ms_err ms_cli_agent_wake_pipe(int fds[2]) MS_MUST_CHECK;

/* ms_cli_agent_signal() - the last SIGINT, SIGTERM or SIGHUP received, 0 if none. */
int ms_cli_agent_signal(void);

/*
 * ms_cli_agent_wipe_env_pin() - KBUILD_SIGN_PIN overwritten where the
 * process's environment keeps it (and /proc/PID/environ shows it), then unset.
 */
void ms_cli_agent_wipe_env_pin(void);

/*
 * ms_cli_agent_spawn() - run @cmd (argv, found in PATH) with
 * MODSIGN_AGENT_SOCK=@sock_path, without KBUILD_SIGN_PIN and an inherited
 * MODSIGN_AGENT_PID, and with the default handling of every signal.
 * Return: MS_OK with *@pid; MS_E_IO or MS_E_NOMEM with *@sys_errno.
 */
ms_err ms_cli_agent_spawn(char **cmd, const char *sock_path, pid_t *pid,
			  int *sys_errno) MS_MUST_CHECK;

/*
 * ms_cli_agent_detach() - the daemon leaves its session, terminal and the
 * caller's pipes, and writes "READY <pid> <socket>" to @ready_fd (closed).
 * Return: MS_OK; MS_E_IO (after a message when it could not detach).
 */
ms_err ms_cli_agent_detach(int ready_fd, const char *sock_path) MS_MUST_CHECK;

/*
 * ms_cli_agent_daemon_parent() - waits for the daemon @child's READY line on
 * @ready_fd and prints the shell assignments. Return: the exit status.
 */
int ms_cli_agent_daemon_parent(pid_t child, int ready_fd);

/*
 * ms_cli_agent_stop() - `--stop`: ask the agent of MODSIGN_AGENT_SOCK to
 * stop and wait (up to @token_timeout + 30 s; 0: for ever) until it has
 * closed its token. Return: the exit status.
 */
int ms_cli_agent_stop(unsigned token_timeout);

#endif
