/* SPDX-License-Identifier: GPL-2.0-only */
/* Ending a run early: by its signal, or with a token hung (exit.c). */
#ifndef MS_CLI_EXIT_H
#define MS_CLI_EXIT_H

#include "../app/app.h"

/*
 * Ending early (exit.c).
 * ms_cli_exit_by_signal() - flush the streams and end by @sig (its default
 * action), else with status 128 + @sig.
 * ms_cli_exit_stuck() - a thread is left inside a token (@end->stuck, a
 * hung lane): wipe the job's secrets, flush, and end by @signo if not 0,
 * else with @status, freeing nothing the thread may use.
 */
_Noreturn void ms_cli_exit_by_signal(int sig);
_Noreturn void ms_cli_exit_stuck(struct ms_job *job, int signo, int status);

#endif
