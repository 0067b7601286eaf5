// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lane pool: the lanes of a signer (token sessions, key copies, agent
 * connections) lent to threads one signature at a time. A thread takes a
 * free lane (waiting for one), signs on it, and gives it back. Signing
 * brings a lost session back a bounded number of times in all, and stamps
 * the lane busy meanwhile, so that the owner's watchdog can see a token
 * call that never returns: such a call cannot be cancelled, only reported.
 * A failed signature does not stop the pool: the owner decides (a bulk run
 * stops, the agent fails that request). Nothing is printed here.
 *
 * Lanes are numbered across the pool, so that lanes of several signers
 * (several tokens holding one key) can stand behind it later.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "signer_internal.h"

struct lane {
	struct ms_signer *signer;
	unsigned index;			/* the signer's own lane number */
	_Atomic uint64_t busy_since;	/* ns when its signature began, 0 idle */
	const char *_Atomic label;	/* the request being signed */
};

struct ms_lanes {
	struct ms_lanes_cfg cfg;
	struct lane *lane;
	unsigned n;

	/* The lanes not in use: a stack guarded by lock. */
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned *free_lane;
	unsigned n_free;
	atomic_bool stopped;
	atomic_uint recoveries;		/* lost sessions brought back so far */
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

ms_err
ms_lanes_new(struct ms_signer *s, const struct ms_lanes_cfg *cfg, struct ms_lanes **out)
{
	struct ms_lanes *p = NULL;
	unsigned n = 0;

	*out = NULL;
	if (s == NULL || cfg == NULL || ms_signer_lanes(s) == 0) {
		return MS_E_ARG;
	}
	n = ms_signer_lanes(s);
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return MS_E_NOMEM;
	}
	p->lane = calloc(n, sizeof(*p->lane));
	p->free_lane = calloc(n, sizeof(*p->free_lane));
	if (p->lane == NULL || p->free_lane == NULL) {
		free(p->lane);
		free(p->free_lane);
		free(p);
		return MS_E_NOMEM;
	}
	p->cfg = *cfg;
	p->n = n;
	for (unsigned l = 0; l < n; l++) {
		p->lane[l].signer = s;
		p->lane[l].index = l;
		/* Lane 0 on top: a caller that needs one lane uses the first session. */
		p->free_lane[p->n_free++] = n - 1 - l;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->freed, NULL);
	*out = p;
	return MS_OK;
}

void
ms_lanes_free(struct ms_lanes *p)
{
	if (p == NULL) {
		return;
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->freed);
	free(p->free_lane);
	free(p->lane);
	free(p);
}

unsigned
ms_lanes_count(const struct ms_lanes *p)
{
	return p->n;
}

unsigned
ms_lanes_take(struct ms_lanes *p)
{
	unsigned lane = MS_LANE_NONE;

	pthread_mutex_lock(&p->lock);
	while (p->n_free == 0 && !atomic_load(&p->stopped)) {
		pthread_cond_wait(&p->freed, &p->lock);
	}
	if (p->n_free > 0 && !atomic_load(&p->stopped)) {
		lane = p->free_lane[--p->n_free];
	}
	pthread_mutex_unlock(&p->lock);
	return lane;
}

/* Signals after unlocking, so that the woken thread does not block on the lock. */
void
ms_lanes_give(struct ms_lanes *p, unsigned lane)
{
	if (lane >= p->n) {
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->free_lane[p->n_free++] = lane;
	pthread_mutex_unlock(&p->lock);
	pthread_cond_signal(&p->freed);
}

void
ms_lanes_stop(struct ms_lanes *p)
{
	atomic_store(&p->stopped, true);
	pthread_mutex_lock(&p->lock);
	pthread_cond_broadcast(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

bool
ms_lanes_stopped(const struct ms_lanes *p)
{
	return atomic_load(&p->stopped);
}

/* The signature itself, with the busy stamp around it for the watchdog. */
static ms_err
sign_stamped(struct ms_lanes *p, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	     size_t cap, size_t *sig_len)
{
	struct lane *l = &p->lane[lane];
	ms_err err;

	atomic_store(&l->label, req->label);
	atomic_store(&l->busy_since, now_ns());
	err = ms_signer_sign(l->signer, l->index, req, sig, cap, sig_len);
	atomic_store(&l->busy_since, 0);
	return err;
}

ms_err
ms_lanes_sign(struct ms_lanes *p, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	      size_t cap, size_t *sig_len, struct ms_lanes_result *res)
{
	struct lane *l = NULL;
	ms_err err;

	res->recovered = false;
	res->why[0] = '\0';
	if (lane >= p->n) {
		snprintf(res->why, sizeof(res->why), "no such lane");
		return MS_E_ARG;
	}
	l = &p->lane[lane];
	err = sign_stamped(p, lane, req, sig, cap, sig_len);
	if (err != MS_OK && ms_signer_can_recover(l->signer) &&
	    atomic_fetch_add(&p->recoveries, 1) < p->cfg.recoveries_max) {
		/* A lost session: re-open it (logging in again) and try once more. */
		ms_signer_describe(l->signer, l->index, res->why, sizeof(res->why));
		if (ms_signer_recover(l->signer, l->index) == MS_OK) {
			res->recovered = true;
			err = sign_stamped(p, lane, req, sig, cap, sig_len);
		}
	}
	if (err != MS_OK) {
		ms_signer_describe(l->signer, l->index, res->why, sizeof(res->why));
	}
	return err;
}

size_t
ms_lanes_hung(struct ms_lanes *p, struct ms_lanes_hang *out, size_t cap)
{
	uint64_t limit = (uint64_t)p->cfg.token_timeout * 1000000000u;
	uint64_t t = now_ns();
	size_t n = 0;

	if (p->cfg.token_timeout == 0) {
		return 0;
	}
	for (unsigned l = 0; l < p->n; l++) {
		uint64_t since = atomic_load(&p->lane[l].busy_since);

		/*
		 * A lane may stamp busy_since after t was read: since > t
		 * then, and t - since would wrap to a huge "age".
		 */
		if (since == 0 || t <= since || t - since <= limit) {
			continue;
		}
		if (n < cap) {
			out[n].lane = l;
			out[n].label = atomic_load(&p->lane[l].label);
			out[n].seconds = (unsigned)((t - since) / 1000000000u);
		}
		n++;
	}
	return n;
}

struct ms_signer *
ms_lanes_signer(const struct ms_lanes *p, unsigned lane)
{
	return lane < p->n ? p->lane[lane].signer : NULL;
}
