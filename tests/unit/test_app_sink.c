// SPDX-License-Identifier: GPL-2.0-only
/* A sink that records the application's lines, for its tests; thread-safe as say() must be. */
#include <stdio.h>
#include <string.h>

#include "test_app_sink.h"

static void
rec_say(void *ctx, enum ms_app_say_kind kind, const char *text, const char *detail)
{
	struct test_sink *r = ctx;

	pthread_mutex_lock(&r->lock);
	if (r->n < TEST_SINK_LINES) {
		snprintf(r->line[r->n], sizeof(r->line[r->n]), "%s%s%s", text,
			 detail != NULL && detail[0] != '\0' ? ": " : "",
			 detail != NULL ? detail : "");
		r->kind[r->n] = kind;
		r->n++;
	}
	pthread_mutex_unlock(&r->lock);
}

static void
rec_progress(void *ctx, size_t done, size_t total, bool is_last)
{
	struct test_sink *r = ctx;

	(void)total;
	pthread_mutex_lock(&r->lock);
	r->progress_n++;
	r->progress_done = done;
	r->progress_last = r->progress_last || is_last;
	pthread_mutex_unlock(&r->lock);
}

void
test_sink_init(struct test_sink *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->sink.say = rec_say;
	r->sink.progress = rec_progress;
	r->sink.ctx = r;
}

int
test_sink_find(struct test_sink *r, enum ms_app_say_kind kind, const char *part)
{
	int found = -1;

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < r->n && found < 0; i++) {
		if (r->kind[i] == kind && strstr(r->line[i], part) != NULL) {
			found = (int)i;
		}
	}
	pthread_mutex_unlock(&r->lock);
	return found;
}
