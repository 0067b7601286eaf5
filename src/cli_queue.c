// SPDX-License-Identifier: GPL-2.0-only
/* A bounded, closable queue of pointers between the stages of a bulk run. */
#include <stdlib.h>

#include "cli_queue.h"

bool
ms_queue_init(struct ms_queue *q, size_t cap)
{
	q->item = calloc(cap, sizeof(*q->item));
	q->cap = cap;
	q->head = 0;
	q->n = 0;
	q->closed = false;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->changed, NULL);
	return q->item != NULL;
}

void
ms_queue_clear(struct ms_queue *q)
{
	free(q->item);
	q->item = NULL;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->changed);
}

bool
ms_queue_push(struct ms_queue *q, void *p)
{
	bool added = false;

	pthread_mutex_lock(&q->lock);
	while (q->n == q->cap && !q->closed) {
		pthread_cond_wait(&q->changed, &q->lock);
	}
	if (!q->closed) {
		q->item[(q->head + q->n) % q->cap] = p;
		q->n++;
		added = true;
		pthread_cond_broadcast(&q->changed);
	}
	pthread_mutex_unlock(&q->lock);
	return added;
}

static void *
take(struct ms_queue *q)
{
	void *p = q->item[q->head];

	q->head = (q->head + 1) % q->cap;
	q->n--;
	pthread_cond_broadcast(&q->changed);
	return p;
}

void *
ms_queue_pop(struct ms_queue *q)
{
	void *p = NULL;

	pthread_mutex_lock(&q->lock);
	while (q->n == 0 && !q->closed) {
		pthread_cond_wait(&q->changed, &q->lock);
	}
	if (q->n > 0) {
		p = take(q);
	}
	pthread_mutex_unlock(&q->lock);
	return p;
}

void *
ms_queue_try_pop(struct ms_queue *q)
{
	void *p = NULL;

	pthread_mutex_lock(&q->lock);
	if (q->n > 0) {
		p = take(q);
	}
	pthread_mutex_unlock(&q->lock);
	return p;
}

void
ms_queue_close(struct ms_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}
