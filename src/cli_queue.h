/* SPDX-License-Identifier: GPL-2.0-only */
/* A bounded, closable queue of pointers between the stages of a bulk run. */
#ifndef MS_CLI_QUEUE_H
#define MS_CLI_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct ms_queue {
	void **item;		/* ring of @cap pointers */
	size_t cap, head, n;
	bool closed;
	pthread_mutex_t lock;
	pthread_cond_t changed;
};

bool ms_queue_init(struct ms_queue *q, size_t cap);
void ms_queue_clear(struct ms_queue *q);
/* Adds @p, waiting while full; false (nothing added) once closed. */
bool ms_queue_push(struct ms_queue *q, void *p);
/* Takes the oldest item, waiting while empty; NULL once closed and empty. */
void *ms_queue_pop(struct ms_queue *q);
/* Takes the oldest item if there is one, without waiting; else NULL. */
void *ms_queue_try_pop(struct ms_queue *q);
/* No more pushes; waiting poppers get what is left, then NULL. */
void ms_queue_close(struct ms_queue *q);

#endif
