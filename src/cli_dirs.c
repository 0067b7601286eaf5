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

#include "cli.h"

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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

/* Which directory of the (sorted) set each path is in, and how many each has. */
static ms_err
index_paths(const char *const *paths, size_t n, struct ms_dir_set *set)
{
	set->dir_of = calloc(n + 1, sizeof(*set->dir_of));
	set->left = calloc(set->n + 1, sizeof(*set->left));
	set->synced = calloc(set->n + 1, sizeof(*set->synced));
	set->sync_errno = calloc(set->n + 1, sizeof(*set->sync_errno));
	if (set->dir_of == NULL || set->left == NULL || set->synced == NULL ||
	    set->sync_errno == NULL) {
		return MS_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char *dir;
		char **hit;

		set->dir_of[i] = SIZE_MAX;
		if (paths[i] == NULL) {
			continue;
		}
		dir = dir_of(paths[i]);
		if (dir == NULL) {
			return MS_E_NOMEM;
		}
		hit = bsearch(&dir, set->dir, set->n, sizeof(*set->dir), str_cmp);
		free(dir);
		if (hit == NULL) {
			return MS_E_INTERNAL;
		}
		set->dir_of[i] = (size_t)(hit - set->dir);
		atomic_fetch_add(&set->left[set->dir_of[i]], 1);
	}
	return MS_OK;
}

ms_err
ms_cli_dirs_of(const char *const *paths, size_t n, struct ms_dir_set *out)
{
	size_t kept = 0;
	ms_err err;

	memset(out, 0, sizeof(*out));
	out->dir = calloc(n + 1, sizeof(*out->dir));
	if (out->dir == NULL) {
		return MS_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (paths[i] == NULL) {
			continue;
		}
		out->dir[out->n] = dir_of(paths[i]);
		if (out->dir[out->n] == NULL) {
			ms_cli_dirs_free(out);
			return MS_E_NOMEM;
		}
		out->n++;
	}
	qsort(out->dir, out->n, sizeof(*out->dir), str_cmp);
	for (size_t i = 0; i < out->n; i++) {
		if (kept > 0 && strcmp(out->dir[i], out->dir[kept - 1]) == 0) {
			free(out->dir[i]);
			continue;
		}
		out->dir[kept++] = out->dir[i];
	}
	out->n = kept;
	err = index_paths(paths, n, out);
	if (err != MS_OK) {
		ms_cli_dirs_free(out);
	}
	return err;
}

void
ms_cli_dirs_clean_stale(const struct ms_dir_set *set, bool verbose)
{
	size_t total = 0;

	for (size_t i = 0; i < set->n; i++) {
		size_t removed = 0;

		/* Cleaning is a courtesy: an unreadable directory is not an error here. */
		if (ms_mod_tmp_clean_dir(set->dir[i], &removed) == MS_OK) {
			total += removed;
		}
	}
	if (verbose && total > 0) {
		ms_cli_warn("removed %zu temp file%s left by interrupted modsign runs", total,
			    total == 1 ? "" : "s");
	}
}

/* fsync directory @d once; a failure is kept for the report. */
static void
sync_once(struct ms_dir_set *set, size_t d)
{
	int e = 0;

	if (atomic_exchange(&set->synced[d], true)) {
		return;
	}
	if (ms_dir_sync(set->dir[d], &e) != MS_OK) {
		set->sync_errno[d] = e != 0 ? e : EIO;
	}
}

void
ms_cli_dirs_module_done(struct ms_dir_set *set, size_t i)
{
	size_t d = set->dir_of[i];

	if (d != SIZE_MAX && atomic_fetch_sub(&set->left[d], 1) == 1) {
		sync_once(set, d);
	}
}

ms_err
ms_cli_dirs_sync(struct ms_dir_set *set)
{
	ms_err first = MS_OK;

	for (size_t d = 0; d < set->n; d++) {
		sync_once(set, d);
		if (set->sync_errno[d] != 0) {
			ms_cli_error("%s: fsync: %s: its renames may not survive a power loss",
				     set->dir[d], strerror(set->sync_errno[d]));
			first = MS_E_IO;
		}
	}
	return first;
}

void
ms_cli_dirs_free(struct ms_dir_set *set)
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
