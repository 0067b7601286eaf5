// SPDX-License-Identifier: GPL-2.0-only
/*
 * A signing run, of one module or of many: worker threads each take the
 * next module, hash it on the host, borrow a lane (a token session or a
 * parsed key copy) just for the signature, and write the module while
 * others sign. There are more workers than lanes, so a lane handed back is
 * taken at once by a worker with a hashed module waiting: with a slow token
 * the lanes never wait for a hash or a write, with a fast one every core is
 * busy, and a module never changes threads on its way.
 *
 * The main thread only watches: for the workers to finish, for a signature
 * that does not come back within --token-timeout, and for a stop the caller
 * asks for (the command line's SIGINT, SIGTERM and SIGHUP). The first stop
 * (a signal, a hung token, a failed signature) lets the modules in hand be
 * finished and takes no more; a second signal ends the run at once, after
 * removing the temp files of the writes in progress. Every line, the
 * progress and the summary go out through the job's sink.
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_internal.h"
#include "module.h"

enum mod_state {
	MOD_PENDING = 0,
	MOD_SIGNED,
	MOD_FAILED,
	MOD_REFUSED,		/* signed already, and the policy refuses it */
	MOD_SKIPPED,		/* --skip-signed: already verifies */
};

struct run {
	struct ms_job *job;
	const struct ms_module_list *list;
	const struct ms_name_set *names;
	struct ms_dir_set *dirs;	/* fsync'd as their modules are done */
	const struct ms_app_sink *sink;	/* the job's */
	const struct ms_app_stop *asked;	/* the caller's stop requests, or NULL */
	const char *dest;		/* single mode: <dest>, or NULL */
	bool single;
	atomic_uchar *state;		/* enum mod_state per module */
	atomic_size_t next;		/* next module to take */
	atomic_bool stop;		/* sign no more */
	atomic_size_t n_state[MOD_SKIPPED + 1];

	struct ms_lanes *pool;		/* the key's lanes; NULL for -s */
	size_t hung;			/* lanes found hung (a token call cannot be cancelled) */

	/* Workers: how many returned, how many are opening a module. */
	atomic_uint n_done;
	atomic_uint n_opening;
	int wake[2];			/* the main thread's pipe: a worker ended */

	struct ms_tmp_set tmps;		/* the temp files of the writes in progress */
	bool at_once;			/* a second signal came */
	double t0;
};

static const char *
signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" :
									   "a signal";
}

static double
now(void)
{
	return (double)ms_clock_ns() / 1e9;
}

/* Sign no more: hashed modules stay untouched, waiters for a lane return. */
static void
stop_all(struct run *r)
{
	atomic_store(&r->stop, true);
	if (r->pool != NULL) {
		ms_lanes_stop(r->pool);
	}
}

static size_t
n_finished(struct run *r)
{
	return atomic_load(&r->n_state[MOD_SIGNED]) + atomic_load(&r->n_state[MOD_FAILED]) +
	       atomic_load(&r->n_state[MOD_REFUSED]) + atomic_load(&r->n_state[MOD_SKIPPED]);
}


/* The sink hears of the progress of a bulk run; @is_last: the summary follows. */
static void
say_progress(struct run *r, bool is_last)
{
	if (!r->single && r->sink != NULL && r->sink->progress != NULL) {
		r->sink->progress(r->sink->ctx, n_finished(r), r->list->n, is_last);
	}
}

static void
finish_module(struct run *r, size_t i, enum mod_state st)
{
	atomic_store(&r->state[i], (unsigned char)st);
	atomic_fetch_add(&r->n_state[st], 1);
	if (r->job->opts->verbose && st == MOD_SIGNED && !r->single) {
		ms_app_say(r->sink, MS_APP_SAY_LINE, NULL, "signed %s", r->list->path[i]);
	}
	say_progress(r, false);
	ms_app_dirs_module_done(r->dirs, i);
}

/* Signs @w on a borrowed lane; false when the run stopped or the key failed. */
static bool
sign_on_lane(struct run *r, struct ms_module_work *w)
{
	unsigned lane = 0;
	ms_err err;

	if (r->pool == NULL) {
		return ms_app_module_sign(r->job, NULL, 0, w) == MS_OK;	/* -s: no key */
	}
	lane = ms_lanes_take(r->pool);
	if (lane == MS_LANE_NONE) {
		return false;	/* the run stopped: left untouched */
	}
	err = ms_app_module_sign(r->job, r->pool, lane, w);
	if (err != MS_OK) {
		stop_all(r);	/* before the lane is free: no signature after this one */
		ms_app_wake_write(r->wake[1]);
	}
	ms_lanes_give(r->pool, lane);
	return err == MS_OK;	/* a failure leaves the module untouched */
}

/* Opens and hashes module @i, signs it and writes it. */
static void
sign_one(struct run *r, size_t i)
{
	struct ms_module_work w;
	ms_err err;

	err = ms_app_module_prepare(r->job, r->list->path[i], &w);
	w.later_links = r->names->later_links[i];
	if (err != MS_OK || w.skipped) {
		ms_app_module_clear(&w);
		finish_module(r, i, err == MS_OK ? MOD_SKIPPED : err == MS_E_SIGNED ? MOD_REFUSED :
			      MOD_FAILED);
		return;
	}
	if (!atomic_load(&r->stop) && sign_on_lane(r, &w)) {
		err = ms_app_module_write(r->job, &w, r->dest);
		ms_app_module_clear(&w);
		finish_module(r, i, err == MS_OK ? MOD_SIGNED : MOD_FAILED);
		return;
	}
	ms_app_module_clear(&w);	/* the run stopped: left untouched */
}

static void *
worker(void *arg)
{
	struct run *r = arg;

	while (!atomic_load(&r->stop)) {
		size_t i = atomic_fetch_add(&r->next, 1);

		if (i >= r->list->n) {
			break;
		}
		if (r->names->is_later_link[i]) {
			continue;	/* signed after the earlier name of its inode */
		}
		for (size_t k = i; k != SIZE_MAX && !atomic_load(&r->stop);
		     k = r->names->next_link[k]) {
			sign_one(r, k);
		}
	}
	atomic_fetch_add(&r->n_done, 1);
	ms_app_wake_write(r->wake[1]);
	return NULL;
}

/* One of several tokens failed mid-run (--key): the others sign its share. */
static void
on_drop(void *ctx, unsigned k, const char *why)
{
	struct run *r = ctx;

	ms_app_warn(r->sink, "%s dropped: %s; the other tokens sign the rest",
		    ms_app_tokens_name(&r->job->tokens, k), why);
}

/* Names each lane whose signature has run past --token-timeout; how many. */
static size_t
report_hung(struct run *r)
{
	struct ms_lanes_hang h[16];
	size_t n = ms_lanes_hung(r->pool, h, sizeof(h) / sizeof(h[0]));

	for (size_t k = 0; k < n && k < sizeof(h) / sizeof(h[0]); k++) {
		ms_app_err(r->sink, "%s: the token did not return the signature within %u s "
			   "(--token-timeout): stopping", h[k].label != NULL ? h[k].label : "?",
			   r->job->opts->token_timeout);
	}
	return n;
}

/* A second signal: the writes in progress lose their temp files, the run ends now. */
static void
stop_at_once(struct run *r)
{
	size_t removed = ms_tmp_set_close(&r->tmps);

	say_progress(r, true);
	ms_app_err(r->sink, "a second signal: stopped at once; %zu temp file%s of modules being "
		   "written removed", removed, removed == 1 ? "" : "s");
}

/*
 * Waits for the workers, watching for a signature that does not come back
 * within --token-timeout and for the caller's stop requests (signals).
 * After a stop, a worker still opening a module (it may wait in flock() for
 * another process's lock, which writes nothing) or stuck in the token is
 * not waited for: the run ends without it.
 * Return: whether workers are left running (the caller must not free what
 * they use).
 */
static bool
watch(struct run *r, unsigned started)
{
	unsigned timeout_s = r->job->opts->token_timeout;
	int stop_fd = r->asked != NULL ? r->asked->fd : -1;
	bool noted = false;

	for (;;) {
		unsigned done = atomic_load(&r->n_done);
		struct pollfd pfd[2] = {
			{ .fd = r->wake[0], .events = POLLIN },
			{ .fd = stop_fd, .events = POLLIN },	/* -1: ignored by poll() */
		};
		char buf[64];
		int signo, n_signals;

		if (done == started) {
			return false;
		}
		if (atomic_load(&r->stop) &&
		    done + atomic_load(&r->n_opening) + r->hung >= started) {
			return true;
		}
		if (poll(pfd, 2, timeout_s > 0 && r->hung == 0 ? 1000 : -1) > 0) {
			for (size_t k = 0; k < 2; k++) {
				while (pfd[k].fd >= 0 && (pfd[k].revents & POLLIN) != 0 &&
				       read(pfd[k].fd, buf, sizeof(buf)) > 0) {
				}
			}
		}
		signo = r->asked != NULL ? r->asked->signo : 0;
		n_signals = r->asked != NULL ? r->asked->n : 0;
		if (n_signals > 1) {
			stop_at_once(r);
			r->at_once = true;
			return true;
		}
		if (signo != 0 && !noted) {
			noted = true;
			stop_all(r);
			ms_app_err(r->sink, "interrupted by signal %d (%s): finishing the "
				   "module%s in hand, signing no more; a second signal stops "
				   "at once", signo, signal_name(signo), r->single ? "" : "s");
		}
		if (timeout_s > 0 && r->hung == 0 && r->pool != NULL) {
			r->hung = report_hung(r);
			if (r->hung > 0) {
				stop_all(r);
			}
		}
	}
}

/* --key: how many signatures each token made, and which were dropped. */
static void
token_summary(struct run *r)
{
	unsigned n = r->pool != NULL ? ms_lanes_signers(r->pool) : 0;

	for (unsigned k = 0; k < n && n > 1 && k < r->job->tokens.n; k++) {
		struct ms_lanes_signer_stat st;

		ms_lanes_signer_stat(r->pool, k, &st);
		if (!r->job->opts->quiet || st.is_dropped) {
			ms_app_info(r->sink, "%s: %zu signature%s%s", r->job->tokens.name[k],
				    st.signatures, st.signatures == 1 ? "" : "s",
				    st.is_dropped ? ", dropped" : "");
		}
	}
}

static void
summary(struct run *r)
{
	const struct ms_opts *o = r->job->opts;
	size_t n = r->list->n;
	size_t ok = atomic_load(&r->n_state[MOD_SIGNED]), bad = atomic_load(&r->n_state[MOD_FAILED]);
	size_t refused = atomic_load(&r->n_state[MOD_REFUSED]);
	size_t skipped = atomic_load(&r->n_state[MOD_SKIPPED]);
	size_t pending = n - n_finished(r);
	double secs = now() - r->t0;

	say_progress(r, true);
	if (r->single) {
		if (pending > 0) {
			ms_app_err(r->sink, "%s: not signed; left as it is", r->list->path[0]);
		}
		return;
	}
	if (pending > 0) {
		size_t shown = 0;

		ms_app_err(r->sink, "stopped: %zu module%s not signed and left untouched%s",
			   pending, pending == 1 ? "" : "s", o->verbose || pending <= 20 ? ":" :
			   " (-v lists them all); the first:");
		for (size_t i = 0; i < n && (o->verbose || shown < 20); i++) {
			if (atomic_load(&r->state[i]) == MOD_PENDING) {
				ms_app_say(r->sink, MS_APP_SAY_LINE, NULL, "  not signed: %s",
					   r->list->path[i]);
				shown++;
			}
		}
	}
	if (!o->quiet || bad > 0 || refused > 0 || pending > 0) {
		ms_app_info(r->sink, "%zu signed, %zu failed, %zu refused (signed already), "
			    "%zu skipped (signature verified), %zu not signed, of %zu; %.2f s, "
			    "%.2f ms per module signed", ok, bad, refused, skipped, pending, n,
			    secs, ok > 0 ? secs * 1000.0 / (double)ok : 0.0);
	}
	token_summary(r);
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

/* The key's lanes: every token's with --key. */
static unsigned
job_lanes(const struct ms_job *job)
{
	unsigned lanes = job->signer != NULL ? ms_signer_lanes(job->signer) : 0;

	for (size_t k = 1; job->signer != NULL && k < job->tokens.n; k++) {
		lanes += ms_signer_lanes(job->tokens.signer[k]);
	}
	return lanes;
}

/* The run on the heap: when threads are left running, it stays for them. */
static struct run *
run_new(struct ms_job *job, const struct ms_module_list *list, const struct ms_name_set *names,
	struct ms_dir_set *dirs, const struct ms_app_stop *stop)
{
	struct ms_lanes_cfg cfg = {
		.recoveries_max = MS_RECOVERIES_MAX,
		.token_timeout = job->opts->token_timeout,
		.on_drop = on_drop,
		.cert = job->cert,	/* every signature verified before it is written */
	};
	struct run *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		return NULL;
	}
	cfg.ctx = r;
	r->job = job;
	r->list = list;
	r->names = names;
	r->dirs = dirs;
	r->sink = job->sink;
	r->asked = stop;
	r->single = !job->opts->bulk;
	r->dest = r->single ? job->opts->dest : NULL;
	r->state = calloc(list->n + 1, sizeof(*r->state));
	/* --key: the other tokens' lanes behind the same pool. */
	if (r->state == NULL || ms_tmp_set_init(&r->tmps) != MS_OK ||
	    (job->signer != NULL &&
	     ms_app_lanes_open(job->signer, &job->tokens, &cfg, &r->pool) != MS_OK)) {
		goto fail;
	}
	if (ms_app_wake_init(r->wake) != MS_OK) {
		goto fail;
	}
	r->t0 = now();
	job->tmps = &r->tmps;
	job->n_opening = &r->n_opening;
	return r;
fail:
	ms_lanes_free(r->pool);
	ms_tmp_set_clear(&r->tmps);
	free(r->state);
	free(r);
	return NULL;
}

static void
run_free(struct run *r)
{
	r->job->tmps = NULL;
	r->job->n_opening = NULL;
	ms_app_wake_close(r->wake);
	ms_lanes_free(r->pool);
	ms_tmp_set_clear(&r->tmps);
	free(r->state);
	free(r);
}

void
ms_app_run(struct ms_job *job, const struct ms_module_list *list,
	   const struct ms_name_set *names, struct ms_dir_set *dirs, const struct ms_app_stop *stop,
	   struct ms_run_end *end)
{
	struct run *r = NULL;
	pthread_t *th = NULL;
	unsigned n_workers = worker_count(list->n, job_lanes(job)), started = 0;

	memset(end, 0, sizeof(*end));
	th = calloc(n_workers, sizeof(*th));
	r = th != NULL ? run_new(job, list, names, dirs, stop) : NULL;
	if (r == NULL) {
		ms_app_err(job->sink, "%s", ms_err_str(MS_E_NOMEM));
		free(th);
		return;
	}
	for (unsigned w = 0; w < n_workers; w++) {
		if (pthread_create(&th[started], NULL, worker, r) != 0) {
			ms_app_err(r->sink, "cannot start a worker thread");
			break;	/* the ones started do the work */
		}
		started++;
	}
	if (started == 0) {
		stop_all(r);
	}
	end->stuck = watch(r, started);
	summary(r);
	if (!end->stuck) {
		for (unsigned t = 0; t < started; t++) {
			pthread_join(th[t], NULL);
		}
	}
	if (n_finished(r) == list->n && list->n > 0 &&
	    atomic_load(&r->n_state[MOD_FAILED]) + atomic_load(&r->n_state[MOD_REFUSED]) == 0) {
		end->ok = true;
	}
	/* A dropped token's thread still inside it: no freeing, no C_Finalize. */
	if (r->pool != NULL && ms_lanes_stuck(r->pool)) {
		end->stuck = true;
	}
	end->signo = stop != NULL ? stop->signo : 0;
	end->at_once = r->at_once;
	free(th);
	if (!end->stuck) {
		run_free(r);
	}
	/* else the threads still use it; the process ends without freeing it */
}
