// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lane pool: the lanes of a signer (token sessions, key copies, agent
 * connections) lent to threads one signature at a time. A thread takes a
 * free lane (waiting for one), signs on it, and gives it back. Signing
 * brings a lost session (for the agent, a lost token too) back a bounded
 * number of times, and stamps the lane busy meanwhile, so that the owner's
 * watchdog can see a token call that never returns: such a call cannot be
 * cancelled, only reported.
 * What is brought back, and how often, differs between a bulk run and the
 * agent in one place, may_recover(). A failed signature does not stop the
 * pool: the owner decides (a bulk run stops; the agent fails that request,
 * or stops when the token is lost for good). Nothing is printed here.
 *
 * Several signers (tokens holding copies of one key, --key) may stand
 * behind one pool, their lanes numbered on from the first's: a signature
 * goes to whichever lane is free first. A signer that fails (a removed
 * token, CKR_DEVICE_ERROR, a signature past the token timeout) is dropped
 * while another is alive: its lanes are lent no more, and the signature is
 * made on another signer's lane before ms_lanes_sign() returns, so no
 * caller sees the failure. A call into a token cannot be cancelled, so to
 * leave a hung one behind, the signatures of a pool of several signers are
 * made on each lane's own thread, the caller waiting at most the token
 * timeout. The last signer alive is never dropped: its failure is the
 * caller's, as with one signer, and a hang of it is for the watchdog.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "signer_internal.h"

/* A lane's own thread (pools of several signers): what it is doing. */
enum lane_state {
	LANE_IDLE = 0,
	LANE_ASKED,		/* a request waits for the lane's thread */
	LANE_DONE,		/* the result waits for the caller */
	LANE_LEFT,		/* the caller left (token timeout): the thread is inside the token */
	LANE_QUIT,		/* the pool is being freed */
};

/* One signer behind the pool. */
struct member {
	struct ms_signer *signer;
	atomic_bool is_dropped;
	atomic_size_t signatures;
};

struct lane {
	struct ms_signer *signer;
	unsigned member;		/* index in the pool's members */
	unsigned index;			/* the signer's own lane number */
	_Atomic uint64_t busy_since;	/* ns when its signature began, 0 idle */
	const char *_Atomic label;	/* the request being signed */

	/* Pools of several signers: the lane's thread and its one request. */
	bool has_thread;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* on CLOCK_MONOTONIC */
	enum lane_state state;		/* guarded by mu */
	struct ms_signer_req req;	/* a copy; the digest is in digest[], a module in data */
	uint8_t digest[MS_HASH_MAX_SIZE];
	/*
	 * ML-DSA over the module: the lane's own copy, since a caller that
	 * leaves a hung lane frees its module while the token may still read.
	 */
	uint8_t *data;
	size_t data_cap;
	struct ms_span data_span;
	uint8_t sig[MS_SIG_MAX];
	size_t sig_len;
	ms_err err;
	struct ms_lanes_result res;
};

struct ms_lanes {
	struct ms_lanes_cfg cfg;
	struct ms_lanes *self;		/* for the lane threads' argument */
	struct lane *lane;
	unsigned n;
	struct member *member;
	unsigned n_members;
	bool is_threaded;		/* several signers and a token timeout */

	/* The lanes not in use: a stack guarded by lock. */
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned *free_lane;
	unsigned n_free;
	unsigned n_alive;		/* members not dropped; guarded by lock */
	atomic_bool stopped;
	atomic_uint recoveries;		/* lost sessions brought back so far (a run) */
	uint64_t window_start;		/* a long-lived owner's recoveries: guarded by lock */
	unsigned window_n;
	atomic_uint n_left;		/* lane threads left inside a token */
};

/* What a lane's thread gets: the pool and its lane. */
struct lane_arg {
	struct ms_lanes *p;
	unsigned lane;
};

/* Room for @n_lanes lanes and @n_members members in all. */
static ms_err
grow(struct ms_lanes *p, unsigned n_lanes, unsigned n_members)
{
	struct lane *lane = realloc(p->lane, n_lanes * sizeof(*lane));
	unsigned *free_lane = NULL;
	struct member *member = NULL;

	if (lane == NULL) {
		return MS_E_NOMEM;
	}
	p->lane = lane;
	free_lane = realloc(p->free_lane, n_lanes * sizeof(*free_lane));
	if (free_lane == NULL) {
		return MS_E_NOMEM;
	}
	p->free_lane = free_lane;
	member = realloc(p->member, n_members * sizeof(*member));
	if (member == NULL) {
		return MS_E_NOMEM;
	}
	p->member = member;
	return MS_OK;
}

/* Puts every lane of @s behind the pool, free, lowest number on top. */
static ms_err
add_member(struct ms_lanes *p, struct ms_signer *s)
{
	unsigned n = ms_signer_lanes(s);
	unsigned first = p->n;
	struct member *m = NULL;
	ms_err err;

	if (n == 0 || n > UINT_MAX - 1 - p->n) {
		return MS_E_ARG;
	}
	err = grow(p, p->n + n, p->n_members + 1);
	if (err != MS_OK) {
		return err;
	}
	m = &p->member[p->n_members];
	m->signer = s;
	atomic_init(&m->is_dropped, false);
	atomic_init(&m->signatures, 0);
	for (unsigned l = 0; l < n; l++) {
		struct lane *ln = &p->lane[first + l];

		memset(ln, 0, sizeof(*ln));
		ln->signer = s;
		ln->member = p->n_members;
		ln->index = l;
		atomic_init(&ln->busy_since, 0);
		atomic_init(&ln->label, NULL);
	}
	/* The stack's top is its end: the new lanes go under the old ones. */
	memmove(p->free_lane + n, p->free_lane, p->n_free * sizeof(*p->free_lane));
	for (unsigned l = 0; l < n; l++) {
		p->free_lane[l] = first + n - 1 - l;
	}
	p->n_free += n;
	p->n += n;
	p->n_members++;
	p->n_alive++;
	return MS_OK;
}

ms_err
ms_lanes_new(struct ms_signer *s, const struct ms_lanes_cfg *cfg, struct ms_lanes **out)
{
	struct ms_lanes *p = NULL;
	ms_err err;

	*out = NULL;
	if (s == NULL || cfg == NULL || ms_signer_lanes(s) == 0) {
		return MS_E_ARG;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return MS_E_NOMEM;
	}
	p->cfg = *cfg;
	p->self = p;
	err = add_member(p, s);
	if (err != MS_OK) {
		free(p->lane);
		free(p->free_lane);
		free(p->member);
		free(p);
		return err;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->freed, NULL);
	*out = p;
	return MS_OK;
}

/* The signature with the bounded recovery of a lost session, stamped busy. */
static ms_err
sign_stamped(struct ms_lanes *p, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	     size_t cap, size_t *sig_len)
{
	struct lane *l = &p->lane[lane];
	ms_err err;

	atomic_store(&l->label, req->label);
	atomic_store(&l->busy_since, ms_clock_ns());
	err = ms_signer_sign(l->signer, l->index, req, sig, cap, sig_len);
	atomic_store(&l->busy_since, 0);
	return err;
}

/*
 * The recovery policy (enum ms_lanes_recovery), the one place where a bulk
 * run and the agent differ: whether @loss is brought back, counting the
 * recovery when it is. A run brings back lost sessions only,
 * recoveries_max in all: a run is short, and a token that failed is better
 * looked at than signed with again; its modules are signed later with
 * --skip-signed. An agent lives for days: a token that failed once and
 * answers again (a reset card, a remote token's link back) is worth new
 * sessions, recoveries_max per lane within MS_LANES_RECOVERY_WINDOW
 * seconds, so that a token failing for good is given up at once.
 */
static bool
may_recover(struct ms_lanes *p, enum ms_signer_loss loss)
{
	uint64_t window = (uint64_t)MS_LANES_RECOVERY_WINDOW * 1000000000u;
	uint64_t now = 0, budget = (uint64_t)p->cfg.recoveries_max * p->n;
	bool is_ok = false;

	if (loss == MS_SIGNER_LOSS_NONE) {
		return false;
	}
	if (p->cfg.recovery != MS_LANES_RECOVER_LONG) {
		return loss == MS_SIGNER_LOSS_SESSION &&
		       atomic_fetch_add(&p->recoveries, 1) < p->cfg.recoveries_max;
	}
	now = ms_clock_ns();
	pthread_mutex_lock(&p->lock);
	if (p->window_n == 0 || now - p->window_start >= window) {
		p->window_start = now;
		p->window_n = 0;
	}
	is_ok = p->window_n < budget;
	if (is_ok) {
		p->window_n++;
	}
	pthread_mutex_unlock(&p->lock);
	return is_ok;
}

static ms_err
sign_recovering(struct ms_lanes *p, unsigned lane, const struct ms_signer_req *req,
		uint8_t *sig, size_t cap, size_t *sig_len, struct ms_lanes_result *res)
{
	struct lane *l = &p->lane[lane];
	enum ms_signer_loss loss = MS_SIGNER_LOSS_NONE;
	bool is_tried = false;
	char last[sizeof(res->why)];
	ms_err err;

	err = sign_stamped(p, lane, req, sig, cap, sig_len);
	if (err != MS_OK) {
		loss = ms_signer_loss(l->signer, l->index);
	}
	if (err != MS_OK && ms_signer_can_recover(l->signer) && may_recover(p, loss)) {
		/* A lost session or token: re-open it (logging in again) and try once more. */
		ms_signer_describe(l->signer, l->index, res->why, sizeof(res->why));
		is_tried = true;
		if (ms_signer_recover(l->signer, l->index) == MS_OK) {
			res->recovered = true;
			err = sign_stamped(p, lane, req, sig, cap, sig_len);
			/* Brought back: only a new loss is one. */
			loss = err != MS_OK ? ms_signer_loss(l->signer, l->index) : MS_SIGNER_LOSS_NONE;
		}
	}
	if (err != MS_OK) {
		/* After a recovery: what was lost, then what failed in bringing it back. */
		ms_signer_describe(l->signer, l->index, last, sizeof(last));
		if (is_tried) {
			char first[sizeof(res->why)];

			memcpy(first, res->why, sizeof(first));
			snprintf(res->why, sizeof(res->why), "%.500s; then %.600s", first, last);
		} else {
			memcpy(res->why, last, sizeof(res->why));
		}
		res->is_lost = loss != MS_SIGNER_LOSS_NONE;
	}
	return err;
}

/*
 * A lane's own thread: makes the signatures asked of its lane. When its
 * caller has left (the token timeout passed), the lane's signer is dropped:
 * the thread ends as soon as the token lets it go, if ever.
 */
static void *
lane_thread(void *arg)
{
	struct lane_arg *a = arg;
	struct ms_lanes *p = a->p;
	struct lane *l = &p->lane[a->lane];
	unsigned lane = a->lane;

	free(a);
	pthread_mutex_lock(&l->mu);
	for (;;) {
		ms_err err;

		while (l->state != LANE_ASKED && l->state != LANE_QUIT) {
			pthread_cond_wait(&l->cv, &l->mu);
		}
		if (l->state == LANE_QUIT) {
			break;
		}
		pthread_mutex_unlock(&l->mu);
		err = sign_recovering(p, lane, &l->req, l->sig, sizeof(l->sig), &l->sig_len, &l->res);
		pthread_mutex_lock(&l->mu);
		if (l->state == LANE_LEFT) {
			atomic_fetch_sub(&p->n_left, 1);
			l->state = LANE_QUIT;	/* a dropped signer's lane: never asked again */
			break;
		}
		l->err = err;
		l->state = LANE_DONE;
		pthread_cond_broadcast(&l->cv);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

static ms_err
lane_thread_start(struct ms_lanes *p, unsigned lane)
{
	struct lane *l = &p->lane[lane];
	struct lane_arg *a = NULL;
	pthread_condattr_t ca;

	if (l->has_thread) {
		return MS_OK;
	}
	a = malloc(sizeof(*a));
	if (a == NULL) {
		return MS_E_NOMEM;
	}
	a->p = p;
	a->lane = lane;
	pthread_mutex_init(&l->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	l->state = LANE_IDLE;
	if (pthread_create(&l->thread, NULL, lane_thread, a) != 0) {
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
		free(a);
		return MS_E_NOMEM;
	}
	l->has_thread = true;
	return MS_OK;
}

ms_err
ms_lanes_add(struct ms_lanes *p, struct ms_signer *s)
{
	ms_err err;

	if (p == NULL || s == NULL) {
		return MS_E_ARG;
	}
	err = add_member(p, s);
	if (err != MS_OK) {
		return err;
	}
	/* A hung token can only be left behind by a thread that waits for it. */
	p->is_threaded = p->cfg.token_timeout > 0;
	for (unsigned l = 0; l < p->n && p->is_threaded; l++) {
		err = lane_thread_start(p, l);
		if (err != MS_OK) {
			return err;
		}
	}
	return MS_OK;
}

void
ms_lanes_free(struct ms_lanes *p)
{
	if (p == NULL) {
		return;
	}
	if (atomic_load(&p->n_left) > 0) {
		return;	/* a thread is inside a token and uses the pool: it stays */
	}
	for (unsigned l = 0; l < p->n; l++) {
		struct lane *ln = &p->lane[l];

		if (!ln->has_thread) {
			continue;
		}
		pthread_mutex_lock(&ln->mu);
		ln->state = LANE_QUIT;
		pthread_cond_broadcast(&ln->cv);
		pthread_mutex_unlock(&ln->mu);
		pthread_join(ln->thread, NULL);
		pthread_mutex_destroy(&ln->mu);
		pthread_cond_destroy(&ln->cv);
		free(ln->data);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->freed);
	free(p->free_lane);
	free(p->lane);
	free(p->member);
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
	if (atomic_load(&p->member[p->lane[lane].member].is_dropped)) {
		pthread_mutex_unlock(&p->lock);
		return;	/* a dropped signer's lane is retired */
	}
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

/*
 * Drops member @m unless it is the last alive: its free lanes leave the
 * stack and its lanes in use are retired as they come back. True when @m is
 * dropped (by this call or an earlier one); the owner hears of it once.
 */
static bool
drop(struct ms_lanes *p, unsigned m, const char *why)
{
	bool is_new = false;
	unsigned kept = 0;

	pthread_mutex_lock(&p->lock);
	if (atomic_load(&p->member[m].is_dropped)) {
		pthread_mutex_unlock(&p->lock);
		return true;
	}
	if (p->n_alive <= 1) {
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	atomic_store(&p->member[m].is_dropped, true);
	p->n_alive--;
	is_new = true;
	for (unsigned i = 0; i < p->n_free; i++) {
		if (p->lane[p->free_lane[i]].member != m) {
			p->free_lane[kept++] = p->free_lane[i];
		}
	}
	p->n_free = kept;
	pthread_mutex_unlock(&p->lock);
	if (is_new && p->cfg.on_drop != NULL) {
		p->cfg.on_drop(p->cfg.ctx, m, why);
	}
	return true;
}

/*
 * gcc 12's -fanalyzer (make analyze) loses track of the buffer stored in
 * the lane, an element of the pool's heap array, and calls it leaked where
 * sign_threaded() calls this. ms_lanes_free() frees it; ASan's leak checker
 * and valgrind see it freed (sign_mldsa.sh signs through two tokens).
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

/* The request's module, if any, into the lane's own buffer (l->data_span). */
static ms_err
lane_copy_data(struct lane *l, const struct ms_signer_req *req)
{
	size_t total = 0, off = 0;
	uint8_t *grown;

	for (size_t i = 0; i < req->n_data; i++) {
		if (req->data[i].len > SIZE_MAX - 1 - total) {
			return MS_E_NOMEM;
		}
		total += req->data[i].len;
	}
	if (req->n_data == 0) {
		return MS_OK;
	}
	if (total + 1 > l->data_cap) {
		grown = realloc(l->data, total + 1);
		if (grown == NULL) {
			return MS_E_NOMEM;
		}
		l->data = grown;
		l->data_cap = total + 1;
	}
	for (size_t i = 0; i < req->n_data; i++) {
		if (req->data[i].len > 0) {
			memcpy(l->data + off, req->data[i].p, req->data[i].len);
			off += req->data[i].len;
		}
	}
	l->data_span.p = l->data;
	l->data_span.len = total;
	return MS_OK;
}

/*
 * On the lane's own thread: waits for the signature at most the token
 * timeout while another signer is alive to take over; then drops the
 * lane's signer and leaves the thread inside the token. With none alive
 * but this one it waits on, as a caller's own thread inside the token
 * would: the owner's watchdog sees the hang.
 * Return: the signature's result; MS_E_TOKEN with *@left set after leaving.
 */
static ms_err
sign_threaded(struct ms_lanes *p, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	      size_t cap, size_t *sig_len, struct ms_lanes_result *res, bool *left)
{
	struct lane *l = &p->lane[lane];
	uint64_t deadline = ms_clock_ns() + (uint64_t)p->cfg.token_timeout * 1000000000u;
	struct timespec ts;
	bool is_timed = true;
	ms_err err;

	*left = false;
	if (req->digest_len > sizeof(l->digest)) {
		return MS_E_ARG;
	}
	/* The lane is idle (taken by this thread): its buffers are ours until asked. */
	if (lane_copy_data(l, req) != MS_OK) {
		return MS_E_NOMEM;
	}
	ts.tv_sec = (time_t)(deadline / 1000000000u);
	ts.tv_nsec = (long)(deadline % 1000000000u);
	pthread_mutex_lock(&l->mu);
	if (req->digest_len > 0) {
		memcpy(l->digest, req->digest, req->digest_len);
	}
	l->req = *req;
	l->req.digest = l->digest;
	if (req->n_data > 0) {
		l->req.data = &l->data_span;
		l->req.n_data = 1;
	}
	memset(&l->res, 0, sizeof(l->res));
	l->state = LANE_ASKED;
	pthread_cond_broadcast(&l->cv);
	while (l->state == LANE_ASKED) {
		if (!is_timed) {
			pthread_cond_wait(&l->cv, &l->mu);
			continue;
		}
		if (pthread_cond_timedwait(&l->cv, &l->mu, &ts) == 0 || l->state != LANE_ASKED) {
			continue;
		}
		if (ms_clock_ns() < deadline) {
			continue;
		}
		/* Late. Drop its signer (decided under the pool's lock), then leave. */
		snprintf(l->res.why, sizeof(l->res.why), "no signature within %u s (the token "
			 "timeout)", p->cfg.token_timeout);
		pthread_mutex_unlock(&l->mu);
		is_timed = drop(p, l->member, l->res.why);
		pthread_mutex_lock(&l->mu);
		if (is_timed && l->state == LANE_ASKED) {
			l->state = LANE_LEFT;
			atomic_fetch_add(&p->n_left, 1);
			atomic_store(&l->busy_since, 0);	/* not the watchdog's: left behind */
			snprintf(res->why, sizeof(res->why), "%s", l->res.why);
			*left = true;
			pthread_mutex_unlock(&l->mu);
			return MS_E_TOKEN;
		}
		is_timed = false;	/* the last signer alive: the watchdog's */
	}
	/* Done, perhaps just after its signer was dropped: the signature is good. */
	err = l->err;
	*res = l->res;
	if (err == MS_OK) {
		if (l->sig_len > cap) {
			err = MS_E_NOSPACE;
		} else {
			memcpy(sig, l->sig, l->sig_len);
			*sig_len = l->sig_len;
		}
	}
	l->state = LANE_IDLE;
	pthread_mutex_unlock(&l->mu);
	return err;
}

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#pragma GCC diagnostic pop
#endif

/*
 * No signature leaves the pool unchecked: whatever made it (a token with a
 * fault, a token holding another key under the label, an agent, a key
 * file), it must verify with the certificate's key over the bytes that
 * were meant to be signed.
 */
static ms_err
check_signature(const struct ms_lanes *p, const struct lane *l, const struct ms_signer_req *req,
		const uint8_t *sig, size_t sig_len, struct ms_lanes_result *res)
{
	struct ms_signer_msg m;
	enum ms_key_type type;
	char who[600];

	if (p->cfg.cert == NULL) {
		return MS_OK;
	}
	ms_cms_cert_key(p->cfg.cert, &type, NULL, NULL);
	if (ms_signer_req_message(type, req, &m) != MS_OK) {
		snprintf(res->why, sizeof(res->why), "cannot encode what was signed");
		return MS_E_INTERNAL;
	}
	if (ms_cms_cert_verify_parts(p->cfg.cert, req->alg, m.spans, m.n_spans, sig,
				     sig_len) == MS_OK) {
		return MS_OK;
	}
	ms_signer_name(l->signer, who, sizeof(who));
	snprintf(res->why, sizeof(res->why), "%s: its signature did not verify with the "
		 "certificate", who);
	return MS_E_MISMATCH;
}

/* Failures that are the signer's (its token), not the caller's request. */
static bool
is_signer_fault(ms_err err)
{
	return err != MS_E_ARG && err != MS_E_NOSPACE && err != MS_E_NOMEM;
}

ms_err
ms_lanes_sign(struct ms_lanes *p, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	      size_t cap, size_t *sig_len, struct ms_lanes_result *res)
{
	struct lane *l = NULL;
	unsigned other;
	bool left = false;
	ms_err err;

	res->recovered = false;
	res->is_lost = false;
	res->signer = 0;
	res->why[0] = '\0';
	if (lane >= p->n) {
		snprintf(res->why, sizeof(res->why), "no such lane");
		return MS_E_ARG;
	}
	l = &p->lane[lane];
	if (l->has_thread) {
		err = sign_threaded(p, lane, req, sig, cap, sig_len, res, &left);
	} else {
		err = sign_recovering(p, lane, req, sig, cap, sig_len, res);
	}
	if (err == MS_OK) {
		err = check_signature(p, l, req, sig, *sig_len, res);
	}
	if (err == MS_OK) {
		atomic_fetch_add(&p->member[l->member].signatures, 1);
		res->signer = l->member;
		return MS_OK;
	}
	res->signer = l->member;
	if (p->n_members == 1 || !is_signer_fault(err) ||
	    (!left && !drop(p, l->member, res->why))) {
		return err;	/* the last signer alive: the caller's failure */
	}
	/* Another signer makes it; the caller's lane is retired when given back. */
	other = ms_lanes_take(p);
	if (other == MS_LANE_NONE) {
		return err;	/* the pool stopped meanwhile */
	}
	err = ms_lanes_sign(p, other, req, sig, cap, sig_len, res);
	ms_lanes_give(p, other);
	return err;
}

bool
ms_lanes_overdue(uint64_t now, uint64_t since, uint64_t limit)
{
	/*
	 * A lane may stamp busy_since after now was read: since > now then,
	 * and now - since would wrap to a huge "age".
	 */
	return since != 0 && now > since && now - since > limit;
}

size_t
ms_lanes_hung(struct ms_lanes *p, struct ms_lanes_hang *out, size_t cap)
{
	uint64_t limit = (uint64_t)p->cfg.token_timeout * 1000000000u;
	uint64_t t = 0;
	size_t n = 0;
	unsigned alive;

	if (p->cfg.token_timeout == 0) {
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	alive = p->n_alive;
	pthread_mutex_unlock(&p->lock);
	if (p->is_threaded && alive > 1) {
		return 0;	/* a late signature moves to another signer by itself */
	}
	t = ms_clock_ns();
	for (unsigned l = 0; l < p->n; l++) {
		uint64_t since = atomic_load(&p->lane[l].busy_since);

		/* A dropped signer's lane was left behind on purpose. */
		if (!ms_lanes_overdue(t, since, limit) ||
		    atomic_load(&p->member[p->lane[l].member].is_dropped)) {
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

unsigned
ms_lanes_signers(const struct ms_lanes *p)
{
	return p->n_members;
}

void
ms_lanes_signer_stat(const struct ms_lanes *p, unsigned k, struct ms_lanes_signer_stat *out)
{
	memset(out, 0, sizeof(*out));
	if (k >= p->n_members) {
		return;
	}
	out->signer = p->member[k].signer;
	out->signatures = atomic_load(&p->member[k].signatures);
	out->is_dropped = atomic_load(&p->member[k].is_dropped);
}

bool
ms_lanes_stuck(const struct ms_lanes *p)
{
	return p != NULL && atomic_load(&p->n_left) > 0;
}
