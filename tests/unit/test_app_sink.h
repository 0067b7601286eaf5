/* SPDX-License-Identifier: GPL-2.0-only */
/* A sink for the application's tests that records its lines (test_app_sink.c). */
#ifndef MS_TEST_APP_SINK_H
#define MS_TEST_APP_SINK_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../src/app/app.h"

#define TEST_SINK_LINES 64

/* The lines said, in order (the first TEST_SINK_LINES), and the progress heard. */
struct test_sink {
	pthread_mutex_t lock;
	char line[TEST_SINK_LINES][1024];
	enum ms_app_say_kind kind[TEST_SINK_LINES];
	size_t n;
	size_t progress_n;	/* progress() calls */
	size_t progress_done;	/* the last @done */
	bool progress_last;	/* a progress() with @is_last came */
	struct ms_app_sink sink;
};

/* test_sink_init() - an empty recorder; @r->sink is the sink to hand over. */
void test_sink_init(struct test_sink *r);
/* test_sink_find() - the index of the first line of @kind holding @part; -1 none. */
int test_sink_find(struct test_sink *r, enum ms_app_say_kind kind, const char *part);

#endif
