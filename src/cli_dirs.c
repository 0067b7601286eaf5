// SPDX-License-Identifier: GPL-2.0-only
/*
 * The directories a run writes to: before signing, each loses the temp
 * files that killed modsign runs left there (ms_mod_tmp_clean_dir() says
 * which); after a bulk run, each is fsync'd once to make its renames
 * durable, instead of once per module.
 */
#include <libgen.h>
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

ms_err
ms_cli_dirs_of(const char *const *paths, size_t n, struct ms_dir_set *out)
{
	size_t kept = 0;

	out->n = 0;
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
	return MS_OK;
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

ms_err
ms_cli_dirs_sync(const struct ms_dir_set *set)
{
	ms_err first = MS_OK;

	for (size_t i = 0; i < set->n; i++) {
		int e = 0;
		ms_err err = ms_dir_sync(set->dir[i], &e);

		if (err != MS_OK) {
			ms_cli_error("%s: fsync: %s: its renames may not survive a power loss",
				     set->dir[i], strerror(e));
			if (first == MS_OK) {
				first = err;
			}
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
	set->dir = NULL;
	set->n = 0;
}
