/* SPDX-License-Identifier: GPL-2.0-only */
/* The bulk engine: every module of a run signed on the key's lanes (bulk.c). */
#ifndef MS_CLI_RUN_H
#define MS_CLI_RUN_H

#include <stdbool.h>

#include "job.h"

/* Lost token sessions a run re-opens (logging in again) before it gives up. */
#define MS_RECOVERIES_MAX 3

/* How a run ended (bulk.c). */
struct ms_run_end {
	int rc;			/* MS_EXIT_OK when every module was signed or skipped */
	int signo;		/* the signal that stopped it, 0 none */
	bool stuck;		/* threads are left running (a hung token, another's lock) */
	bool at_once;		/* a second signal: stopped without finishing */
};

/*
 * ms_cli_run() - sign every module of @list with the job's key (or append
 * the job's -s signature): worker threads hash while the key signs on its
 * lanes. A module's own failure is reported and the others go on; a
 * failure of the key, a signature past --token-timeout or SIGINT, SIGTERM
 * or SIGHUP stops the run: the modules being written are finished, the rest
 * stay untouched; a second signal ends it at once, removing the temp files
 * of the writes in progress. In bulk mode a progress line and a summary on
 * stderr. When @end->stuck, threads still use @job, @list, @names and
 * @dirs: the caller must end the process without freeing them.
 */
void ms_cli_run(struct ms_job *job, const struct ms_module_list *list,
		const struct ms_name_set *names, struct ms_dir_set *dirs, struct ms_run_end *end);

#endif
