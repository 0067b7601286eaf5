// SPDX-License-Identifier: GPL-2.0-only
/*
 * How a run ends before its normal return: by the signal that stopped it,
 * or at once with a thread left inside a hung token (a signing run, the
 * agent), the secrets wiped first.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "exit.h"

/*
 * A run stopped by a signal ends by that signal once it has cleaned up, so
 * that the shell or make that started it sees it was interrupted (status
 * 128 + n) and stops too, as it would had we not caught it.
 */
void
ms_cli_exit_by_signal(int sig)
{
	fflush(NULL);
	signal(sig, SIG_DFL);
	raise(sig);
	_exit(128 + sig);
}

/*
 * A thread is inside the token: no C_Finalize, no freeing of what it uses,
 * no atexit handlers (_exit). Only the secrets are wiped and the streams
 * flushed.
 */
void
ms_cli_exit_stuck(struct ms_job *job, int signo, int status)
{
	ms_app_job_wipe(job);
	if (signo != 0) {
		ms_cli_exit_by_signal(signo);
	}
	fflush(NULL);
	_exit(status);
}
