/* SPDX-License-Identifier: GPL-2.0-only */
/* The sink of a signing run: its lines, and the progress line on a terminal (progress.c). */
#ifndef MS_CLI_PROGRESS_H
#define MS_CLI_PROGRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "../app/app.h"
#include "msg.h"

/*
 * The lines of src/app as ms_cli_sink() prints them and, when @on, a
 * progress line on stderr that every message clears first and draws again
 * after (through the message hook).
 */
struct ms_cli_progress {
	struct ms_app_sink sink;	/* hand this to the application */
	pthread_mutex_t lock;		/* one writer on stderr at a time (recursive) */
	struct ms_cli_msg_hook hook;
	bool on;			/* stderr is a terminal, a bulk run, not -q */
	size_t done, total;
	double t0, last_draw;
};

/* ms_cli_progress_init() - the sink, the progress line only when @on. */
void ms_cli_progress_init(struct ms_cli_progress *p, bool on);
/* ms_cli_progress_begin() - the run starts now: its rate counts from here. */
void ms_cli_progress_begin(struct ms_cli_progress *p);
/* ms_cli_progress_end() - the run is over: messages print as they are again. */
void ms_cli_progress_end(struct ms_cli_progress *p);

#endif
