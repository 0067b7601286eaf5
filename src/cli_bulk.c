// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bulk signing on worker threads: each takes the next module, hashes it on
 * the host, borrows a lane (a token session or a parsed key copy) just for
 * the signature, and writes the module while others sign. There are more
 * workers than lanes, so a lane handed back is taken at once by a worker
 * with a hashed module waiting: with a slow token the lanes never wait for
 * a hash or a write, with a fast one every core is busy, and a module never
 * changes threads on its way (no hand-overs, few context switches).
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

enum mod_state {
	MOD_PENDING = 0,
	MOD_SIGNED,
	MOD_FAILED,
	MOD_SKIPPED,		/* --skip-signed: already verifies */
};

struct bulk {
	struct ms_job *job;
	const struct ms_module_list *list;
	struct ms_dir_set *dirs;	/* fsync'd as their modules are done */
	unsigned char *state;		/* enum mod_state per module */
	atomic_size_t next;		/* next module to take */
	atomic_bool stop;		/* a key failure: sign no more */
	atomic_size_t signed_n, failed_n, skipped_n;

	/* The lanes not in use: a stack guarded by lane_lock. */
	pthread_mutex_t lane_lock;
	pthread_cond_t lane_freed;
	unsigned *free_lane;
	unsigned n_free;

	pthread_mutex_t out_lock;	/* one writer on stderr at a time */

	/* The watchdog: a token call that never returns cannot be cancelled. */
	_Atomic uint64_t *busy_since;	/* per lane: ns when its signature began, 0 idle */
	_Atomic size_t *busy_module;	/* per lane: the module being signed */
	pthread_mutex_t done_lock;	/* guards n_done, hung */
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

/* A key failure or a hung token: hashed modules are signed no more. */
static void
stop_all(struct bulk *b)
{
	atomic_store(&b->stop, true);
	pthread_mutex_lock(&b->lane_lock);
	pthread_cond_broadcast(&b->lane_freed);
	pthread_mutex_unlock(&b->lane_lock);
}

/* A free lane, waiting for one; UINT_MAX once the run stops. */
static unsigned
lane_take(struct bulk *b)
{
	unsigned lane = UINT_MAX;

	pthread_mutex_lock(&b->lane_lock);
	while (b->n_free == 0 && !atomic_load(&b->stop) && !interrupted) {
		pthread_cond_wait(&b->lane_freed, &b->lane_lock);
	}
	if (b->n_free > 0 && !atomic_load(&b->stop) && !interrupted) {
		lane = b->free_lane[--b->n_free];
	} else {
		/* Stopping: a signal does not wake waiters, so pass the wake-up on. */
		pthread_cond_broadcast(&b->lane_freed);
	}
	pthread_mutex_unlock(&b->lane_lock);
	return lane;
}

/* Signals after unlocking, so that the woken worker does not block on the lock. */
static void
lane_give(struct bulk *b, unsigned lane)
{
	pthread_mutex_lock(&b->lane_lock);
	b->free_lane[b->n_free++] = lane;
	pthread_mutex_unlock(&b->lane_lock);
	pthread_cond_signal(&b->lane_freed);
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
	if (b->job->opts->verbose || b->progress) {
		pthread_mutex_lock(&b->out_lock);
		if (b->job->opts->verbose && st == MOD_SIGNED) {
			if (b->progress) {
				fputs("\r\033[K", stderr);
			}
			ms_cli_line(stderr, "signed %s", b->list->path[i]);
		}
		draw_progress(b, false);
		pthread_mutex_unlock(&b->out_lock);
	}
	ms_cli_dirs_module_done(b->dirs, i);
}

/* Signs module @i on a borrowed lane; false when the key failed. */
static bool
sign_on_lane(struct bulk *b, size_t i, struct ms_module_work *w)
{
	unsigned lane = lane_take(b);
	ms_err err;

	if (lane == UINT_MAX) {
		return false;	/* the run stopped: left untouched */
	}
	atomic_store(&b->busy_module[lane], i);
	atomic_store(&b->busy_since[lane], now_ns());
	err = ms_cli_module_sign(b->job, lane, w);
	atomic_store(&b->busy_since[lane], 0);
	if (err != MS_OK) {
		stop_all(b);	/* before the lane is free: no signature after this one */
	}
	lane_give(b, lane);
	return err == MS_OK;	/* a failure leaves the module untouched */
}

/*
 * Opens and hashes module @i, signs it and writes it. A module that is a
 * second name (a hard link, or the path listed twice) of one another
 * worker holds is opened once that one is written: the other worker needs
 * nothing from this one to finish, and a run that stops (a hung token
 * that never lets go) ends the wait.
 */
static void
sign_one(struct bulk *b, size_t i)
{
	struct ms_module_work w;
	ms_err err;

	while ((err = ms_cli_module_prepare(b->job, b->list->path[i], &w)) == MS_E_BUSY) {
		ms_cli_module_clear(&w);
		if (atomic_load(&b->stop) || interrupted) {
			return;	/* the run stopped: left untouched */
		}
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	if (err != MS_OK || w.skipped) {
		ms_cli_module_clear(&w);
		finish_module(b, i, err == MS_OK ? MOD_SKIPPED : MOD_FAILED);
		return;
	}
	if (!atomic_load(&b->stop) && !interrupted && sign_on_lane(b, i, &w)) {
		err = ms_cli_module_write(b->job, &w, NULL);
		ms_cli_module_clear(&w);
		finish_module(b, i, err == MS_OK ? MOD_SIGNED : MOD_FAILED);
		return;
	}
	ms_cli_module_clear(&w);	/* the run stopped: left untouched */
}

static void
thread_done(struct bulk *b)
{
	pthread_mutex_lock(&b->done_lock);
	b->n_done++;
	pthread_cond_broadcast(&b->done_cond);
	pthread_mutex_unlock(&b->done_lock);
}

static void *
worker(void *arg)
{
	struct bulk *b = arg;

	while (!atomic_load(&b->stop) && !interrupted) {
		size_t i = atomic_fetch_add(&b->next, 1);

		if (i >= b->list->n) {
			break;
		}
		sign_one(b, i);
	}
	thread_done(b);
	return NULL;
}

/* Lanes whose signature has run past the token timeout; names each once. */
static size_t
hung_lanes(struct bulk *b)
{
	uint64_t limit = (uint64_t)b->job->opts->token_timeout * 1000000000u;
	uint64_t t = now_ns();
	size_t n = 0;

	for (unsigned l = 0; l < ms_signer_lanes(b->job->signer); l++) {
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
		for (unsigned l = 0; l < ms_signer_lanes(b->job->signer); l++) {
			if (atomic_load(&b->busy_since[l]) != 0) {
				ms_cli_error("%s: the token did not return the signature within "
					     "%u s (--token-timeout): stopping",
					     b->list->path[atomic_load(&b->busy_module[l])],
					     b->job->opts->token_timeout);
			}
		}
		stop_all(b);
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
				ms_cli_line(stderr, "  not signed: %s", b->list->path[i]);
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
 * Eight workers per core (at most 64), and always a core's worth more than
 * lanes: a worker spends much of its module blocked (fsync, the discard of
 * the replaced file, waiting for a lane), and meanwhile the others hash,
 * sign and write (measured: bench/notes.md).
 */
static unsigned
worker_count(size_t n_modules, unsigned lanes)
{
	unsigned cpus = ms_cpu_count();
	unsigned w = 8 * cpus < 64 ? 8 * cpus : 64;

	if (w < lanes + cpus) {
		w = lanes + cpus;
	}
	return n_modules < w ? (unsigned)(n_modules == 0 ? 1 : n_modules) : w;
}

int
ms_cli_bulk_run(struct ms_job *job, const struct ms_module_list *list, struct ms_dir_set *dirs)
{
	struct bulk b;
	struct sigaction sa;
	pthread_t *th = NULL;
	unsigned lanes = ms_signer_lanes(job->signer);
	unsigned n_workers = worker_count(list->n, lanes), started = 0;
	int rc = MS_EXIT_FAIL;

	memset(&b, 0, sizeof(b));
	b.job = job;
	b.list = list;
	b.dirs = dirs;

	b.state = calloc(list->n + 1, 1);
	b.busy_since = calloc(lanes, sizeof(*b.busy_since));
	b.busy_module = calloc(lanes, sizeof(*b.busy_module));
	b.free_lane = calloc(lanes, sizeof(*b.free_lane));
	th = calloc(n_workers, sizeof(*th));
	if (b.state == NULL || b.busy_since == NULL || b.busy_module == NULL ||
	    b.free_lane == NULL || th == NULL) {
		ms_cli_error("%s", ms_err_str(MS_E_NOMEM));
		goto out;
	}
	/* Lane 0 on top: a run that needs one lane uses the first session. */
	for (unsigned l = 0; l < lanes; l++) {
		b.free_lane[b.n_free++] = lanes - 1 - l;
	}
	pthread_mutex_init(&b.lane_lock, NULL);
	pthread_cond_init(&b.lane_freed, NULL);
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

	for (unsigned w = 0; w < n_workers; w++) {
		if (pthread_create(&th[started], NULL, worker, &b) != 0) {
			ms_cli_error("cannot start a worker thread");
			break;	/* the ones started do the work */
		}
		started++;
	}
	if (started == 0) {
		stop_all(&b);
	}
	wait_threads(&b, started);
	summary(&b);
	if (b.hung > 0) {
		/*
		 * A thread is stuck inside the token: no clean finalize is possible.
		 * What was signed is made durable first, as on a normal exit.
		 */
		if (ms_cli_dirs_sync(dirs) != MS_OK) {
			/* reported; the exit status is 1 anyway */
		}
		fflush(NULL);
		free(th);	/* only this thread uses it; no leak at _exit */
		_exit(MS_EXIT_FAIL);
	}
	for (unsigned t = 0; t < started; t++) {
		pthread_join(th[t], NULL);
	}
	if (atomic_load(&b.signed_n) + atomic_load(&b.skipped_n) == list->n && list->n > 0) {
		rc = MS_EXIT_OK;
	} else if (list->n == 0) {
		ms_cli_error("no modules to sign");
	}
	pthread_mutex_destroy(&b.out_lock);
	pthread_mutex_destroy(&b.done_lock);
	pthread_cond_destroy(&b.done_cond);
	pthread_mutex_destroy(&b.lane_lock);
	pthread_cond_destroy(&b.lane_freed);
out:
	free(th);
	free(b.free_lane);
	free(b.busy_since);
	free(b.busy_module);
	free(b.state);
	return rc;
}
