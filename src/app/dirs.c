// SPDX-License-Identifier: GPL-2.0-only
/*
 * The directories a run writes to: before signing, each loses the temp
 * files that killed modsign runs left there (ms_mod_tmp_clean_dir() says
 * which); in a bulk run, each is fsync'd once to make its renames
 * durable, as soon as its last module is done, instead of once per module.
 */
#include <errno.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../modfmt/modfmt.h"
#include "app_internal.h"

/* A path's directory, and where the path is in the list. */
struct path_dir {
	char *dir;
	size_t i;
};

static int
path_dir_cmp(const void *a, const void *b)
{
	return strcmp(((const struct path_dir *)a)->dir, ((const struct path_dir *)b)->dir);
}

/* The directory part of @path as a new string, "." for a bare name. */
static char *
dir_of(const char *path)
{
	char *copy = strdup(path);
	char *dir;

	if (copy == NULL) {
		return NULL;
	}
	dir = strdup(dirname(copy));
	free(copy);
	return dir;
}

/*
 * Each path's directory once, sorted: the distinct ones go to @out->dir,
 * and each path learns its directory's index on the way.
 */
ms_err
ms_app_dirs_of(const char *const *paths, size_t n, struct ms_dir_set *out)
{
	struct path_dir *pd = calloc(n + 1, sizeof(*pd));
	size_t n_pd = 0;
	ms_err err = MS_E_NOMEM;

	memset(out, 0, sizeof(*out));
	out->dir = calloc(n + 1, sizeof(*out->dir));
	out->dir_of = calloc(n + 1, sizeof(*out->dir_of));
	out->left = calloc(n + 1, sizeof(*out->left));
	out->synced = calloc(n + 1, sizeof(*out->synced));
	out->sync_errno = calloc(n + 1, sizeof(*out->sync_errno));
	if (pd == NULL || out->dir == NULL || out->dir_of == NULL || out->left == NULL ||
	    out->synced == NULL || out->sync_errno == NULL) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		out->dir_of[i] = SIZE_MAX;
		if (paths[i] == NULL) {
			continue;
		}
		pd[n_pd].dir = dir_of(paths[i]);
		pd[n_pd].i = i;
		if (pd[n_pd++].dir == NULL) {
			goto out;
		}
	}
	qsort(pd, n_pd, sizeof(*pd), path_dir_cmp);
	for (size_t k = 0; k < n_pd; k++) {
		if (out->n > 0 && strcmp(pd[k].dir, out->dir[out->n - 1]) == 0) {
			free(pd[k].dir);
		} else {
			out->dir[out->n++] = pd[k].dir;
		}
		pd[k].dir = NULL;	/* owned by @out now, or freed */
		out->dir_of[pd[k].i] = out->n - 1;
		atomic_fetch_add(&out->left[out->n - 1], 1);
	}
	err = MS_OK;
out:
	for (size_t k = 0; k < n_pd; k++) {
		free(pd[k].dir);
	}
	free(pd);
	if (err != MS_OK) {
		ms_app_dirs_free(out);
	}
	return err;
}

/* Cleaning is a courtesy: an unreadable directory is not an error here. */
static size_t
clean_stale(const struct ms_dir_set *set)
{
	size_t total = 0;

	for (size_t i = 0; i < set->n; i++) {
		size_t removed = 0;

		if (ms_mod_tmp_clean_dir(set->dir[i], &removed) == MS_OK) {
			total += removed;
		}
	}
	return total;
}

static void
report_stale(size_t total, bool verbose, const struct ms_app_sink *sink)
{
	if (verbose && total > 0) {
		ms_app_warn(sink, "removed %zu temp file%s left by interrupted modsign runs", total,
			    total == 1 ? "" : "s");
	}
}

void
ms_app_dirs_clean_stale(const struct ms_dir_set *set, bool verbose, const struct ms_app_sink *sink)
{
	report_stale(clean_stale(set), verbose, sink);
}

static void *
stale_scan_run(void *arg)
{
	struct ms_stale_scan *scan = arg;

	scan->removed = clean_stale(scan->set);
	return NULL;
}

void
ms_app_dirs_stale_start(struct ms_stale_scan *scan, const struct ms_dir_set *set)
{
	scan->set = set;
	scan->removed = 0;
	scan->threaded = pthread_create(&scan->thread, NULL, stale_scan_run, scan) == 0;
	if (!scan->threaded) {
		scan->removed = clean_stale(set);
	}
}

void
ms_app_dirs_stale_finish(struct ms_stale_scan *scan, bool verbose, const struct ms_app_sink *sink)
{
	if (scan->threaded) {
		pthread_join(scan->thread, NULL);
		scan->threaded = false;
	}
	report_stale(scan->removed, verbose, sink);
}

/*
 * fsync directory @d once; a failure is kept for the report. A directory
 * that does not exist (a module or <dest> named in one) holds nothing we
 * renamed.
 */
static void
sync_once(struct ms_dir_set *set, size_t d)
{
	int e = 0;

	if (atomic_exchange(&set->synced[d], true)) {
		return;
	}
	if (ms_dir_sync(set->dir[d], &e) != MS_OK && e != ENOENT && e != ENOTDIR) {
		set->sync_errno[d] = e != 0 ? e : EIO;
	}
}

void
ms_app_dirs_module_done(struct ms_dir_set *set, size_t i)
{
	size_t d = set->dir_of[i];

	if (d != SIZE_MAX && atomic_fetch_sub(&set->left[d], 1) == 1) {
		sync_once(set, d);
	}
}

ms_err
ms_app_dirs_sync(struct ms_dir_set *set, const struct ms_app_sink *sink)
{
	ms_err first = MS_OK;

	for (size_t d = 0; d < set->n; d++) {
		sync_once(set, d);
		if (set->sync_errno[d] != 0) {
			ms_app_err(sink, "%s: fsync: %s: its renames may not survive a power loss",
				   set->dir[d], strerror(set->sync_errno[d]));
			first = MS_E_IO;
		}
	}
	return first;
}

void
ms_app_dirs_free(struct ms_dir_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free(set->dir[i]);
	}
	free(set->dir);
	free(set->dir_of);
	free(set->left);
	free(set->synced);
	free(set->sync_errno);
	memset(set, 0, sizeof(*set));
}
