// SPDX-License-Identifier: GPL-2.0-only
/*
 * The progress line of a bulk run on a terminal: redrawn at most ten times
 * a second from what the application's run says, cleared before every
 * message line and drawn again after it, so that each message gets a line
 * of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "progress.h"
#include "sink.h"

static double
now(void)
{
	return (double)ms_clock_ns() / 1e9;
}

/* The terminal's width, 80 when unknown. */
static size_t
term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		return ws.ws_col;
	}
	return 80;
}

/*
 * The progress line, at most ten times a second. It must stay shorter than
 * the terminal is wide, or it wraps and scrolls: the rate, then the ETA go
 * when it does not fit, and the bare count is cut as a last resort. Caller
 * holds the lock.
 */
static void
draw(struct ms_cli_progress *p, bool force)
{
	double t = now();
	size_t done = p->done, total = p->total;
	size_t width = term_width();
	double rate, eta;
	char line[256];
	int n = 0;

	if (!p->on || (!force && t - p->last_draw < 0.1)) {
		return;
	}
	p->last_draw = t;
	rate = t > p->t0 ? (double)done / (t - p->t0) : 0.0;
	eta = rate > 0 ? (double)(total - done) / rate : 0.0;
	for (int form = 0; form < 3; form++) {
		if (form == 0) {
			n = snprintf(line, sizeof(line), "modsign: %zu/%zu, %.1f modules/s, ETA %d:%02d",
				     done, total, rate, (int)eta / 60, (int)eta % 60);
		} else if (form == 1) {
			n = snprintf(line, sizeof(line), "modsign: %zu/%zu, ETA %d:%02d", done,
				     total, (int)eta / 60, (int)eta % 60);
		} else {
			n = snprintf(line, sizeof(line), "%zu/%zu", done, total);
		}
		if (n >= 0 && (size_t)n < width) {
			break;
		}
	}
	if (n < 0) {
		return;
	}
	if ((size_t)n >= width) {
		line[width > 1 ? width - 1 : 0] = '\0';
	}
	fprintf(stderr, "\r\033[K%s", line);
	if (fflush(stderr) == EOF && errno == EPIPE) {
		p->on = false;	/* nobody reads it any more */
	}
}

/* Clears the progress line before a message; caller holds the lock. */
static void
clear(struct ms_cli_progress *p)
{
	if (p->on) {
		fputs("\r\033[K", stderr);
	}
}

/* Around every message line: it gets a line of its own, then the progress line is back. */
static void
msg_before(void *ctx)
{
	struct ms_cli_progress *p = ctx;

	pthread_mutex_lock(&p->lock);
	clear(p);
}

static void
msg_after(void *ctx)
{
	struct ms_cli_progress *p = ctx;

	draw(p, true);
	pthread_mutex_unlock(&p->lock);
}

static void
on_progress(void *ctx, size_t done, size_t total, bool is_last)
{
	struct ms_cli_progress *p = ctx;

	pthread_mutex_lock(&p->lock);
	p->done = done;
	p->total = total;
	if (is_last) {
		clear(p);
		p->on = false;
	} else {
		draw(p, false);
	}
	pthread_mutex_unlock(&p->lock);
}

void
ms_cli_progress_init(struct ms_cli_progress *p, bool on)
{
	pthread_mutexattr_t ma;

	memset(p, 0, sizeof(*p));
	p->sink = *ms_cli_sink();
	p->sink.ctx = p;
	p->sink.progress = on ? on_progress : NULL;
	p->on = on;
	/* Recursive: a message printed while the progress line is held. */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&p->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	p->hook.before = msg_before;
	p->hook.after = msg_after;
	p->hook.ctx = p;
}

void
ms_cli_progress_begin(struct ms_cli_progress *p)
{
	p->t0 = now();
	if (p->on) {
		ms_cli_msg_hook_set(&p->hook);
	}
}

void
ms_cli_progress_end(struct ms_cli_progress *p)
{
	ms_cli_msg_hook_set(NULL);
	pthread_mutex_lock(&p->lock);
	clear(p);
	p->on = false;
	pthread_mutex_unlock(&p->lock);
}
