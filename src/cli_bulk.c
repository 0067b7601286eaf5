// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bulk signing as a pipeline: worker threads take the next module and hash
 * it on the host; one signer thread per lane (a token session or a parsed
 * key copy) signs hashed modules back to back; the workers write what was
 * signed. With a slow token the lanes never wait for a hash or a handover;
 * with a fast one every core is busy. A few hashed modules per lane are
 * queued; workers write before they hash more, so open files stay few.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_queue.h"

enum mod_state {
	MOD_PENDING = 0,
	MOD_SIGNED,
	MOD_FAILED,
	MOD_SKIPPED,		/* --skip-signed: already verifies */
};

/* One module on its way through the pipeline. */
struct item {
	struct ms_module_work w;
	size_t i;		/* index in the list */
};

struct bulk {
	struct ms_job *job;
	const struct ms_module_list *list;
	unsigned char *state;		/* enum mod_state per module */
	atomic_size_t next;		/* next module to take */
	atomic_bool stop;		/* a key failure: sign no more */
	atomic_size_t signed_n, failed_n, skipped_n;

	struct ms_queue hashed;		/* workers -> signers */
	struct ms_queue signed_q;	/* signers -> workers */
	unsigned n_workers;
	atomic_uint producers_done;	/* workers that will take no more modules */
	unsigned signers_done;		/* guarded by done_lock */

	pthread_mutex_t out_lock;	/* one writer on stderr at a time */

	/* The watchdog: a token call that never returns cannot be cancelled. */
	_Atomic uint64_t *busy_since;	/* per lane: ns when its signature began, 0 idle */
	_Atomic size_t *busy_module;	/* per lane: the module being signed */
	pthread_mutex_t done_lock;	/* guards n_done, signers_done, hung */
	pthread_cond_t done_cond;
	unsigned n_done;		/* threads that have returned */
	size_t hung;			/* lanes found hung */
	bool progress;			/* stderr is a terminal and not -q */
	double t0, last_draw;
};

static volatile sig_atomic_t interrupted;

static void
on_signal(int sig)
{
	interrupted = sig;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

unsigned
ms_cli_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1u : n > 64 ? 64u : (unsigned)n;
}

/* A key failure or a hung token: hashed modules are signed no more. */
static void
stop_all(struct bulk *b)
{
	atomic_store(&b->stop, true);
	ms_queue_close(&b->hashed);
}

/* Redraws the progress line at most ten times a second; caller holds out_lock. */
static void
draw_progress(struct bulk *b, bool force)
{
	double t = now();
	size_t done = atomic_load(&b->signed_n) + atomic_load(&b->failed_n) +
		      atomic_load(&b->skipped_n);
	double rate, eta;

	if (!b->progress || (!force && t - b->last_draw < 0.1)) {
		return;
	}
	b->last_draw = t;
	rate = t > b->t0 ? (double)done / (t - b->t0) : 0.0;
	eta = rate > 0 ? (double)(b->list->n - done) / rate : 0.0;
	fprintf(stderr, "\r\033[Kmodsign: %zu/%zu, %.1f modules/s, ETA %d:%02d", done, b->list->n,
		rate, (int)eta / 60, (int)eta % 60);
}

static void
finish_module(struct bulk *b, size_t i, enum mod_state st)
{
	b->state[i] = (unsigned char)st;
	atomic_fetch_add(st == MOD_SIGNED ? &b->signed_n : st == MOD_SKIPPED ? &b->skipped_n :
			 &b->failed_n, 1);
	pthread_mutex_lock(&b->out_lock);
	if (b->job->opts->verbose && st == MOD_SIGNED) {
		if (b->progress) {
			fputs("\r\033[K", stderr);
		}
		fprintf(stderr, "signed %s\n", b->list->path[i]);
	}
	draw_progress(b, false);
	pthread_mutex_unlock(&b->out_lock);
}

static void
item_drop(struct item *it)
{
	ms_cli_module_clear(&it->w);
	free(it);
}

/* Writes a signed module and counts it. */
static void
write_one(struct bulk *b, struct item *it)
{
	ms_err err = ms_cli_module_write(b->job, &it->w, NULL);
	size_t i = it->i;

	item_drop(it);
	finish_module(b, i, err == MS_OK ? MOD_SIGNED : MOD_FAILED);
}

/*
 * Module @i is a second name (a hard link, or the path listed twice) of a
 * module this run holds: it can be opened once that one is written. Until
 * then write what the signers hand over, so that the wait always ends.
 * False when the run stops meanwhile.
 */
static bool
help_until_released(struct bulk *b)
{
	struct item *it;

	if (atomic_load(&b->stop) || interrupted) {
		return false;
	}
	it = ms_queue_try_pop(&b->signed_q);
	if (it != NULL) {
		write_one(b, it);
	} else {
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	return true;
}

/* Opens and hashes module @i, then hands it to the signers. */
static void
hash_one(struct bulk *b, size_t i)
{
	struct item *it = calloc(1, sizeof(*it));
	ms_err err;

	if (it == NULL) {
		ms_cli_error("%s: %s", b->list->path[i], ms_err_str(MS_E_NOMEM));
		finish_module(b, i, MOD_FAILED);
		return;
	}
	it->i = i;
	while ((err = ms_cli_module_prepare(b->job, b->list->path[i], &it->w)) == MS_E_BUSY) {
		ms_cli_module_clear(&it->w);
		if (!help_until_released(b)) {
			item_drop(it);	/* the run stopped: left untouched */
			return;
		}
	}
	if (err != MS_OK || it->w.skipped) {
		item_drop(it);
		finish_module(b, i, err == MS_OK ? MOD_SKIPPED : MOD_FAILED);
		return;
	}
	if (!ms_queue_push(&b->hashed, it)) {
		item_drop(it);	/* the run stopped: left untouched */
	}
}

static void
thread_done(struct bulk *b, bool is_signer)
{
	pthread_mutex_lock(&b->done_lock);
	b->n_done++;
	if (is_signer) {
		b->signers_done++;
	}
	/* The last signer (hung ones aside): nothing more will be signed. */
	if (b->signers_done + b->hung == b->job->signer->lanes) {
		ms_queue_close(&b->signed_q);
	}
	pthread_cond_broadcast(&b->done_cond);
	pthread_mutex_unlock(&b->done_lock);
}

/*
 * A worker writes what was signed first, so that modules leave the
 * pipeline as fast as they enter; otherwise it hashes the next module
 * (waiting while the signers have enough queued); when there are no more
 * modules, it writes what the signers still hand over.
 */
static void *
worker(void *arg)
{
	struct bulk *b = arg;
	bool producing = true;
	struct item *it;

	for (;;) {
		it = ms_queue_try_pop(&b->signed_q);
		if (it != NULL) {
			write_one(b, it);
			continue;
		}
		if (producing) {
			size_t i = SIZE_MAX;

			if (!atomic_load(&b->stop) && !interrupted) {
				i = atomic_fetch_add(&b->next, 1);
			}
			if (i < b->list->n) {
				hash_one(b, i);
				continue;
			}
			producing = false;
			if (atomic_fetch_add(&b->producers_done, 1) + 1 == b->n_workers) {
				ms_queue_close(&b->hashed);
			}
		}
		it = ms_queue_pop(&b->signed_q);
		if (it == NULL) {
			break;		/* closed and empty: every signer is done */
		}
		write_one(b, it);
	}
	thread_done(b, false);
	return NULL;
}

struct signer_arg {
	struct bulk *b;
	unsigned lane;
};

/* Signs hashed modules back to back on one lane. */
static void *
signer(void *arg)
{
	struct signer_arg *sa = arg;
	struct bulk *b = sa->b;
	unsigned lane = sa->lane;
	struct item *it;

	while ((it = ms_queue_pop(&b->hashed)) != NULL) {
		ms_err err;

		if (atomic_load(&b->stop)) {
			item_drop(it);	/* left untouched */
			continue;
		}
		atomic_store(&b->busy_module[lane], it->i);
		atomic_store(&b->busy_since[lane], now_ns());
		err = ms_cli_module_sign(b->job, lane, &it->w);
		atomic_store(&b->busy_since[lane], 0);
		if (err != MS_OK) {
			stop_all(b);
			item_drop(it);	/* left untouched */
			continue;
		}
		if (!ms_queue_push(&b->signed_q, it)) {
			item_drop(it);	/* cannot happen: closed after the signers */
		}
	}
	thread_done(b, true);
	return NULL;
}

/* Lanes whose signature has run past the token timeout; names each once. */
static size_t
hung_lanes(struct bulk *b)
{
	uint64_t limit = (uint64_t)b->job->opts->token_timeout * 1000000000u;
	uint64_t t = now_ns();
	size_t n = 0;

	for (unsigned l = 0; l < b->job->signer->lanes; l++) {
		uint64_t since = atomic_load(&b->busy_since[l]);

		if (since != 0 && t - since > limit) {
			n++;
		}
	}
	return n;
}

/*
 * Waits for every thread, watching for a signature that does not come back
 * within --token-timeout. Such a call cannot be cancelled, so the run stops:
 * the others finish the modules in hand, and the caller reports and exits
 * without waiting for the hung one.
 */
static void
wait_threads(struct bulk *b, unsigned total)
{
	pthread_mutex_lock(&b->done_lock);
	while (b->n_done + b->hung < total) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&b->done_cond, &b->done_lock, &ts);
		if (b->hung != 0 || b->job->opts->token_timeout == 0) {
			continue;
		}
		b->hung = hung_lanes(b);
		if (b->hung == 0) {
			continue;
		}
		for (unsigned l = 0; l < b->job->signer->lanes; l++) {
			if (atomic_load(&b->busy_since[l]) != 0) {
				ms_cli_error("%s: the token did not return the signature within "
					     "%u s (--token-timeout): stopping",
					     b->list->path[atomic_load(&b->busy_module[l])],
					     b->job->opts->token_timeout);
			}
		}
		stop_all(b);
		if (b->signers_done + b->hung == b->job->signer->lanes) {
			ms_queue_close(&b->signed_q);
		}
	}
	pthread_mutex_unlock(&b->done_lock);
}

static void
summary(struct bulk *b)
{
	const struct ms_opts *o = b->job->opts;
	size_t n = b->list->n;
	size_t ok = atomic_load(&b->signed_n), bad = atomic_load(&b->failed_n);
	size_t skipped = atomic_load(&b->skipped_n);
	size_t pending = n - ok - bad - skipped;
	double secs = now() - b->t0;

	if (b->progress) {
		fputs("\r\033[K", stderr);
	}
	if (pending > 0) {
		size_t shown = 0;

		if (interrupted) {
			ms_cli_error("interrupted by signal %d", (int)interrupted);
		}
		ms_cli_error("stopped: %zu module%s not signed and left untouched%s", pending,
			     pending == 1 ? "" : "s", o->verbose || pending <= 20 ? ":" :
			     " (-v lists them all); the first:");
		for (size_t i = 0; i < n && (o->verbose || shown < 20); i++) {
			if (b->state[i] == MOD_PENDING) {
				fprintf(stderr, "  not signed: %s\n", b->list->path[i]);
				shown++;
			}
		}
	}
	if (!o->quiet || bad > 0 || pending > 0) {
		fprintf(stderr, "modsign: %zu signed, %zu failed, %zu skipped (signed already), "
			"%zu not signed, of %zu; %.2f s, %.2f ms per module\n", ok, bad, skipped,
			pending, n, secs, n > 0 ? secs * 1000.0 / (double)n : 0.0);
	}
}

/*
 * Two workers per core: a worker spends much of a write waiting in fsync,
 * and while it waits the others hash and write. (On the benchmark's 802
 * modules with SoftHSM2 and two cores: 1.07 s against 1.13 s, medians.)
 */
static unsigned
worker_count(size_t n_modules)
{
	unsigned w = 2 * (ms_cli_cpu_count() < 2 ? 2 : ms_cli_cpu_count());

	return n_modules < w ? (unsigned)(n_modules == 0 ? 1 : n_modules) : w;
}

/* Counts a thread that could not be started as one that has finished. */
static void
not_started(struct bulk *b, bool is_signer)
{
	if (!is_signer && atomic_fetch_add(&b->producers_done, 1) + 1 == b->n_workers) {
		ms_queue_close(&b->hashed);
	}
	thread_done(b, is_signer);
}

int
ms_cli_bulk_run(struct ms_job *job, const struct ms_module_list *list)
{
	struct bulk b;
	struct sigaction sa;
	pthread_t *th = NULL;
	struct signer_arg *sargs = NULL;
	unsigned lanes = job->signer->lanes;
	unsigned n_workers = worker_count(list->n), total = 0;
	bool *joinable = NULL;
	int rc = MS_EXIT_FAIL;

	memset(&b, 0, sizeof(b));
	b.job = job;
	b.list = list;
	b.n_workers = n_workers;

	b.state = calloc(list->n + 1, 1);
	b.busy_since = calloc(lanes, sizeof(*b.busy_since));
	b.busy_module = calloc(lanes, sizeof(*b.busy_module));
	th = calloc(n_workers + lanes, sizeof(*th));
	joinable = calloc(n_workers + lanes, sizeof(*joinable));
	sargs = calloc(lanes, sizeof(*sargs));
	if (b.state == NULL || b.busy_since == NULL || b.busy_module == NULL || th == NULL ||
	    joinable == NULL || sargs == NULL ||
	    /* A few hashed modules per lane keep it busy; more would hold files open. */
	    !ms_queue_init(&b.hashed, 2 * (size_t)lanes + 1) ||
	    /* Room for every module: a signer never waits to hand one over. */
	    !ms_queue_init(&b.signed_q, list->n + 1)) {
		ms_cli_error("%s", ms_err_str(MS_E_NOMEM));
		goto out;
	}
	pthread_mutex_init(&b.out_lock, NULL);
	pthread_mutex_init(&b.done_lock, NULL);
	pthread_cond_init(&b.done_cond, NULL);
	b.progress = !job->opts->quiet && isatty(STDERR_FILENO);
	b.t0 = now();

	/* SIGINT/SIGTERM: finish the modules in hand, sign no more, report. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	for (unsigned l = 0; l < lanes; l++, total++) {
		sargs[l].b = &b;
		sargs[l].lane = l;
		joinable[total] = pthread_create(&th[total], NULL, signer, &sargs[l]) == 0;
		if (!joinable[total]) {
			ms_cli_error("cannot start a signing thread");
			stop_all(&b);
			not_started(&b, true);
		}
	}
	for (unsigned w = 0; w < n_workers; w++, total++) {
		joinable[total] = pthread_create(&th[total], NULL, worker, &b) == 0;
		if (!joinable[total]) {
			ms_cli_error("cannot start a worker thread");
			not_started(&b, false);
		}
	}
	wait_threads(&b, total);
	summary(&b);
	if (b.hung > 0) {
		/* A thread is stuck inside the token: no clean finalize is possible. */
		fflush(NULL);
		free(joinable);	/* only this thread uses them; no leak at _exit */
		free(th);
		_exit(MS_EXIT_FAIL);
	}
	for (unsigned t = 0; t < total; t++) {
		if (joinable[t]) {
			pthread_join(th[t], NULL);
		}
	}
	if (atomic_load(&b.signed_n) + atomic_load(&b.skipped_n) == list->n && list->n > 0) {
		rc = MS_EXIT_OK;
	} else if (list->n == 0) {
		ms_cli_error("no modules to sign");
	}
	pthread_mutex_destroy(&b.out_lock);
	pthread_mutex_destroy(&b.done_lock);
	pthread_cond_destroy(&b.done_cond);
	ms_queue_clear(&b.hashed);
	ms_queue_clear(&b.signed_q);
out:
	free(sargs);
	free(joinable);
	free(th);
	free(b.busy_since);
	free(b.busy_module);
	free(b.state);
	return rc;
}
