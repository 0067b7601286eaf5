/* SPDX-License-Identifier: GPL-2.0-only */
/* The bulk engine: every module of a run signed on the key's lanes (run.c); included by app.h. */
#ifndef MS_APP_RUN_H
#define MS_APP_RUN_H

#include <signal.h>
#include <stdbool.h>

#include "dirs.h"
#include "job.h"
#include "list.h"
#include "names.h"

/* Lost token sessions a run re-opens (logging in again) before it gives up. */
#define MS_RECOVERIES_MAX 3

/*
 * How the caller asks a run to stop (the command line: from its SIGINT,
 * SIGTERM and SIGHUP handlers, which may only set these and write to
 * their self-pipe). The run reads them, never writes them.
 */
struct ms_app_stop {
	int fd;				/* readable when a stop was asked for; -1 none */
	volatile sig_atomic_t signo;	/* the first stop asked for (its signal), 0 none */
	volatile sig_atomic_t n;	/* how many: a second stops the run at once */
};

/* How a run ended (run.c). */
struct ms_run_end {
	bool ok;		/* every module was signed or skipped */
	int signo;		/* the stop's signal, 0 none */
	bool stuck;		/* threads are left running (a hung token, another's lock) */
	bool at_once;		/* a second stop: ended without finishing */
};

/*
 * ms_app_run() - sign every module of @list with the job's key (or append
 * the job's -s signature): worker threads hash while the key signs on its
 * lanes. A module's own failure is said through the job's sink and the
 * others go on; a failure of the key, a signature past --token-timeout or a
 * stop through @stop (NULL: none) stops the run: the modules being written
 * are finished, the rest stay untouched; a second stop ends it at once,
 * removing the temp files of the writes in progress. In bulk mode the
 * sink hears the progress and a summary. When @end->stuck, threads still
 * use @job, @list, @names and @dirs: the caller must end the process
 * without freeing them (only ms_app_job_wipe()).
 */
void ms_app_run(struct ms_job *job, const struct ms_module_list *list,
		const struct ms_name_set *names, struct ms_dir_set *dirs,
		const struct ms_app_stop *stop, struct ms_run_end *end);

#endif
