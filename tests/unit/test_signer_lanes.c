// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the lane pool (src/signer/lanes.c) over a stand-in signer
 * whose lanes lose their session or hang on command: lanes lent one at a
 * time and handed back, takers woken by a stop, lost sessions brought back
 * at most recoveries_max times in all (a lost token only under the
 * long-lived policy, and said to be lost when it stays so), a signature
 * past the token timeout
 * reported with its label, the watchdog's age test on chosen clock readings
 * (a lane stamped busy after the clock was read is not hung); several
 * signers behind one pool, a failing or hanging one dropped and its
 * signature made on another's lane, the last one never dropped. The pool
 * over real tokens is tested through the bulk run (token_faults.sh,
 * mutant_gaps.sh).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../src/signer/signer_internal.h"
#include "test.h"

struct stub {
	struct ms_signer base;
	atomic_int losses;		/* signatures still to fail with a lost session */
	atomic_bool hang;		/* the next signature waits for release */
	pthread_mutex_t lock;
	pthread_cond_t released;
	atomic_int signs, recovers;
	atomic_int loss;		/* what a failure lost: 0 a session, -1 nothing, else this */
};

static ms_err
stub_sign(struct ms_signer *s, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	  size_t cap, size_t *sig_len)
{
	struct stub *st = (struct stub *)s;

	(void)lane;
	(void)req;
	atomic_fetch_add(&st->signs, 1);
	if (atomic_exchange(&st->hang, false)) {
		pthread_mutex_lock(&st->lock);
		pthread_cond_wait(&st->released, &st->lock);
		pthread_mutex_unlock(&st->lock);
	}
	if (atomic_fetch_sub(&st->losses, 1) > 0) {
		return MS_E_TOKEN;
	}
	CHECK(cap >= 4);
	memcpy(sig, "sig!", 4);
	*sig_len = 4;
	return MS_OK;
}

static ms_err
stub_match(struct ms_signer *s, const struct ms_cms_cert *cert)
{
	(void)s;
	(void)cert;
	return MS_OK;
}

static ms_err
stub_recover(struct ms_signer *s, unsigned lane)
{
	(void)lane;
	atomic_fetch_add(&((struct stub *)s)->recovers, 1);
	return MS_OK;
}

static enum ms_signer_loss
stub_loss(const struct ms_signer *s, unsigned lane)
{
	int loss = atomic_load(&((const struct stub *)s)->loss);

	(void)lane;
	if (loss < 0) {
		return MS_SIGNER_LOSS_NONE;
	}
	return loss != 0 ? (enum ms_signer_loss)loss : MS_SIGNER_LOSS_SESSION;
}

static void
stub_describe(const struct ms_signer *s, unsigned lane, char *buf, size_t cap)
{
	(void)s;
	snprintf(buf, cap, "lane %u: session lost", lane);
}

static void
stub_free(struct ms_signer *s)
{
	(void)s;
}

static void
stub_name(const struct ms_signer *s, char *buf, size_t cap)
{
	(void)s;
	snprintf(buf, cap, "stub");
}

static const struct ms_signer_ops stub_ops = {
	.sign = stub_sign,
	.match_cert = stub_match,
	.recover = stub_recover,
	.loss = stub_loss,
	.describe = stub_describe,
	.name = stub_name,
	.free = stub_free,
};

static void
stub_init(struct stub *st, unsigned lanes)
{
	memset(st, 0, sizeof(*st));
	st->base.ops = &stub_ops;
	st->base.type = MS_KEY_RSA;
	st->base.lanes = lanes;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->released, NULL);
}

static const uint8_t digest[32] = { 1, 2, 3 };

static ms_err
sign_one(struct ms_lanes *p, unsigned lane, const char *label, struct ms_lanes_result *res)
{
	const struct ms_signer_req req = {
		.alg = MS_HASH_SHA256, .digest = digest, .digest_len = sizeof(digest), .label = label,
	};
	uint8_t sig[64];
	size_t sig_len = 0;

	return ms_lanes_sign(p, lane, &req, sig, sizeof(sig), &sig_len, res);
}

static void *
take_one(void *arg)
{
	static unsigned got;

	got = ms_lanes_take(arg);
	return &got;
}

MS_TEST(signer_lanes_take_give_stop)
{
	struct stub st;
	struct ms_lanes_cfg cfg = { .recoveries_max = 3, .token_timeout = 0 };
	struct ms_lanes *p = NULL;
	pthread_t t;
	void *got = NULL;
	unsigned a, b;

	stub_init(&st, 2);
	CHECK_ERR(ms_lanes_new(&st.base, &cfg, &p), MS_OK);
	CHECK_EQ(ms_lanes_count(p), 2u);
	a = ms_lanes_take(p);
	b = ms_lanes_take(p);
	CHECK(a == 0 && b == 1);	/* lane 0 first: one signer uses the first session */
	CHECK(ms_lanes_signer(p, a) == &st.base && ms_lanes_signer(p, 2) == NULL);
	ms_lanes_give(p, b);
	CHECK_EQ(ms_lanes_take(p), 1u);
	/* Both out: a third taker waits until the pool stops. */
	CHECK(pthread_create(&t, NULL, take_one, p) == 0);
	usleep(50000);
	CHECK(!ms_lanes_stopped(p));
	ms_lanes_stop(p);
	CHECK(pthread_join(t, &got) == 0);
	CHECK_EQ(*(unsigned *)got, MS_LANE_NONE);
	CHECK(ms_lanes_stopped(p));
	ms_lanes_give(p, a);
	CHECK_EQ(ms_lanes_take(p), MS_LANE_NONE);	/* stopped: no more lent */
	ms_lanes_free(p);
	ms_lanes_free(NULL);
}

MS_TEST(signer_lanes_recoveries_bounded)
{
	struct stub st;
	struct ms_lanes_cfg cfg = { .recoveries_max = 3, .token_timeout = 0 };
	struct ms_lanes *p = NULL;
	struct ms_lanes_result res;

	stub_init(&st, 1);
	CHECK_ERR(ms_lanes_new(&st.base, &cfg, &p), MS_OK);
	CHECK(sign_one(p, 0, "a.ko", &res) == MS_OK && !res.recovered);
	/* Three losses, each cured by one re-open. */
	for (int k = 0; k < 3; k++) {
		atomic_store(&st.losses, 1);
		CHECK_ERR(sign_one(p, 0, "b.ko", &res), MS_OK);
		CHECK(res.recovered && strcmp(res.why, "lane 0: session lost") == 0);
	}
	CHECK_EQ(atomic_load(&st.recovers), 3);
	/* The fourth is not brought back: the pool's recoveries are spent. */
	atomic_store(&st.losses, 1);
	CHECK_ERR(sign_one(p, 0, "c.ko", &res), MS_E_TOKEN);
	CHECK(!res.recovered && strcmp(res.why, "lane 0: session lost") == 0);
	CHECK_EQ(atomic_load(&st.recovers), 3);
	/* A failure does not stop the pool: the owner decides. */
	CHECK(!ms_lanes_stopped(p));
	CHECK_ERR(sign_one(p, 0, "d.ko", &res), MS_OK);
	CHECK_ERR(sign_one(p, 1, "e.ko", &res), MS_E_ARG);	/* no such lane */
	ms_lanes_free(p);
}

/*
 * A lost token: a run gives up at once (no recovery); a long-lived owner
 * re-opens, recoveries_max per lane within the window, and says when the
 * token is lost for good (is_lost).
 */
MS_TEST(signer_lanes_lost_token_policy)
{
	struct stub st;
	struct ms_lanes_cfg run = { .recoveries_max = 3 };
	struct ms_lanes_cfg agent = { .recoveries_max = 1, .recovery = MS_LANES_RECOVER_LONG };
	struct ms_lanes *p = NULL;
	struct ms_lanes_result res;

	stub_init(&st, 1);
	atomic_store(&st.loss, MS_SIGNER_LOSS_TOKEN);
	CHECK_ERR(ms_lanes_new(&st.base, &run, &p), MS_OK);
	atomic_store(&st.losses, 1);
	CHECK_ERR(sign_one(p, 0, "a.ko", &res), MS_E_TOKEN);
	CHECK(!res.recovered && res.is_lost);
	CHECK_EQ(atomic_load(&st.recovers), 0);
	ms_lanes_free(p);

	CHECK_ERR(ms_lanes_new(&st.base, &agent, &p), MS_OK);
	atomic_store(&st.losses, 1);
	CHECK_ERR(sign_one(p, 0, "b.ko", &res), MS_OK);
	CHECK(res.recovered && !res.is_lost);
	CHECK_EQ(atomic_load(&st.recovers), 1);
	/* The window's one recovery is spent: lost for good. */
	atomic_store(&st.losses, 1);
	CHECK_ERR(sign_one(p, 0, "c.ko", &res), MS_E_TOKEN);
	CHECK(!res.recovered && res.is_lost);
	CHECK_EQ(atomic_load(&st.recovers), 1);
	ms_lanes_free(p);

	/* Re-opened, and the signature after it fails again: lost. */
	CHECK_ERR(ms_lanes_new(&st.base, &agent, &p), MS_OK);
	atomic_store(&st.losses, 2);
	CHECK_ERR(sign_one(p, 0, "d.ko", &res), MS_E_TOKEN);
	CHECK(res.recovered && res.is_lost);
	ms_lanes_free(p);

	/* A failure that loses nothing is the request's: no recovery, not lost. */
	CHECK_ERR(ms_lanes_new(&st.base, &agent, &p), MS_OK);
	atomic_store(&st.loss, -1);
	atomic_store(&st.losses, 1);
	CHECK_ERR(sign_one(p, 0, "e.ko", &res), MS_E_TOKEN);
	CHECK(!res.recovered && !res.is_lost);
	ms_lanes_free(p);
}

static struct ms_lanes *hang_pool;

static void *
sign_hanging(void *arg)
{
	static ms_err err;
	struct ms_lanes_result res;

	(void)arg;
	err = sign_one(hang_pool, 1, "slow.ko", &res);
	return &err;
}

MS_TEST(signer_lanes_hung_reported)
{
	struct stub st;
	struct ms_lanes_cfg cfg = { .recoveries_max = 3, .token_timeout = 1 };
	struct ms_lanes_hang h[4];
	struct ms_lanes *p = NULL;
	pthread_t t;
	void *got = NULL;

	stub_init(&st, 2);
	CHECK_ERR(ms_lanes_new(&st.base, &cfg, &p), MS_OK);
	hang_pool = p;
	atomic_store(&st.hang, true);
	CHECK(pthread_create(&t, NULL, sign_hanging, NULL) == 0);
	/* Past the 1 s timeout the hanging lane is reported, with its label. */
	for (int k = 0; k < 100 && ms_lanes_hung(p, h, 4) == 0; k++) {
		usleep(50000);
	}
	CHECK_EQ(ms_lanes_hung(p, h, 4), (size_t)1);
	CHECK(h[0].lane == 1 && strcmp(h[0].label, "slow.ko") == 0 && h[0].seconds >= 1);
	CHECK_EQ(ms_lanes_hung(p, h, 0), (size_t)1);	/* counted even without room */
	pthread_mutex_lock(&st.lock);
	pthread_cond_signal(&st.released);
	pthread_mutex_unlock(&st.lock);
	CHECK(pthread_join(t, &got) == 0);
	CHECK_ERR(*(ms_err *)got, MS_OK);
	CHECK_EQ(ms_lanes_hung(p, h, 4), (size_t)0);
	ms_lanes_free(p);

	/* Timeout 0: never reported. */
	cfg.token_timeout = 0;
	CHECK_ERR(ms_lanes_new(&st.base, &cfg, &p), MS_OK);
	CHECK_EQ(ms_lanes_hung(p, h, 4), (size_t)0);
	ms_lanes_free(p);
}

/* What the pool told its owner about dropped signers. */
struct drops {
	atomic_int n;
	unsigned signer;
	char why[200];
};

static void
note_drop(void *ctx, unsigned signer, const char *why)
{
	struct drops *d = ctx;

	d->signer = signer;
	snprintf(d->why, sizeof(d->why), "%s", why);
	atomic_fetch_add(&d->n, 1);
}

MS_TEST(signer_lanes_several_signers_drop)
{
	struct stub a, b;
	struct drops d = { 0 };
	struct ms_lanes_cfg cfg = { .recoveries_max = 0, .token_timeout = 0, .on_drop = note_drop,
				    .ctx = &d };
	struct ms_lanes_signer_stat st;
	struct ms_lanes_result res;
	struct ms_lanes *p = NULL;
	unsigned l0, l1;

	stub_init(&a, 1);
	stub_init(&b, 1);
	CHECK_ERR(ms_lanes_new(&a.base, &cfg, &p), MS_OK);
	CHECK_ERR(ms_lanes_add(p, &b.base), MS_OK);
	CHECK_EQ(ms_lanes_count(p), 2u);
	CHECK_EQ(ms_lanes_signers(p), 2u);
	l0 = ms_lanes_take(p);
	l1 = ms_lanes_take(p);
	CHECK(l0 == 0 && l1 == 1);	/* signer 0's lanes first, the added ones after */
	CHECK(ms_lanes_signer(p, l1) == &b.base);
	CHECK_ERR(sign_one(p, l1, "a.ko", &res), MS_OK);
	ms_lanes_signer_stat(p, 1, &st);
	CHECK(st.signer == &b.base && st.signatures == 1 && !st.is_dropped);
	ms_lanes_give(p, l0);
	/* b fails: dropped, and the signature made on a's lane; the caller sees MS_OK. */
	atomic_store(&b.losses, 100);
	CHECK_ERR(sign_one(p, l1, "b.ko", &res), MS_OK);
	CHECK_EQ(atomic_load(&d.n), 1);
	CHECK(d.signer == 1 && strcmp(d.why, "lane 0: session lost") == 0);
	ms_lanes_signer_stat(p, 1, &st);
	CHECK(st.signatures == 1 && st.is_dropped);
	ms_lanes_signer_stat(p, 0, &st);
	CHECK(st.signer == &a.base && st.signatures == 1 && !st.is_dropped);
	/* b's lane given back is retired: only a's is lent from now on. */
	ms_lanes_give(p, l1);
	CHECK_EQ(ms_lanes_take(p), 0u);
	/* The last signer alive is never dropped: its failure is the caller's. */
	atomic_store(&a.losses, 100);
	CHECK_ERR(sign_one(p, 0, "c.ko", &res), MS_E_TOKEN);
	CHECK_EQ(atomic_load(&d.n), 1);
	ms_lanes_signer_stat(p, 0, &st);
	CHECK(!st.is_dropped);
	ms_lanes_signer_stat(p, 2, &st);
	CHECK(st.signer == NULL && st.signatures == 0);	/* no such signer */
	CHECK(!ms_lanes_stuck(p));
	ms_lanes_give(p, 0);
	ms_lanes_free(p);
}

MS_TEST(signer_lanes_several_signers_timeout)
{
	struct stub a, b;
	struct drops d = { 0 };
	struct ms_lanes_cfg cfg = { .recoveries_max = 3, .token_timeout = 1, .on_drop = note_drop,
				    .ctx = &d };
	struct ms_lanes_hang h[4];
	struct ms_lanes_result res;
	struct ms_lanes *p = NULL;

	stub_init(&a, 1);
	stub_init(&b, 1);
	CHECK_ERR(ms_lanes_new(&a.base, &cfg, &p), MS_OK);
	CHECK_ERR(ms_lanes_add(p, &b.base), MS_OK);
	CHECK_EQ(ms_lanes_take(p), 0u);
	CHECK_EQ(ms_lanes_take(p), 1u);
	ms_lanes_give(p, 0);
	/* b hangs: after the 1 s timeout it is dropped and a signs; the caller sees MS_OK. */
	atomic_store(&b.hang, true);
	CHECK_ERR(sign_one(p, 1, "slow.ko", &res), MS_OK);
	CHECK_EQ(atomic_load(&d.n), 1);
	CHECK(d.signer == 1 && strstr(d.why, "no signature within 1 s") != NULL);
	CHECK_EQ(atomic_load(&a.signs), 1);
	/* b's thread is still inside its token: the pool must stay; no watchdog report. */
	CHECK(ms_lanes_stuck(p));
	CHECK_EQ(ms_lanes_hung(p, h, 4), (size_t)0);
	ms_lanes_give(p, 1);
	pthread_mutex_lock(&b.lock);
	pthread_cond_signal(&b.released);
	pthread_mutex_unlock(&b.lock);
	for (int k = 0; k < 100 && ms_lanes_stuck(p); k++) {
		usleep(20000);
	}
	CHECK(!ms_lanes_stuck(p));
	CHECK_ERR(sign_one(p, 0, "next.ko", &res), MS_OK);	/* a's lane, on its thread */
	ms_lanes_free(p);	/* joins the lane threads */
}

/*
 * The watchdog's test of one lane on chosen clock readings: a lane stamped
 * busy after the watchdog read the clock (since > now, which a real run
 * gives only in a rare race) is not hung; it once was, its "age" now - since
 * wrapping to 2^64 - 1 ns (8d0cb94: "not returned within 120 s" after 3.87 s).
 */
MS_TEST(signer_lanes_overdue)
{
	const uint64_t s = 1000000000u;	/* 1 s in ns */

	CHECK(!ms_lanes_overdue(100 * s, 0, 2 * s));		/* idle */
	CHECK(!ms_lanes_overdue(100 * s, 99 * s, 2 * s));	/* 1 s of 2 */
	CHECK(!ms_lanes_overdue(100 * s, 98 * s, 2 * s));	/* exactly the limit */
	CHECK(ms_lanes_overdue(100 * s, 98 * s - 1, 2 * s));	/* 1 ns past it */
	CHECK(ms_lanes_overdue(100 * s, 1, 2 * s));		/* busy since the clock's start */
	CHECK(!ms_lanes_overdue(100 * s, 100 * s, 2 * s));	/* stamped at the reading */
	/* Stamped after the reading: 1 ns, and more than the limit. */
	CHECK(!ms_lanes_overdue(100 * s, 100 * s + 1, 2 * s));
	CHECK(!ms_lanes_overdue(100 * s, 103 * s, 2 * s));
}
