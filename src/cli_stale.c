// SPDX-License-Identifier: GPL-2.0-only
/*
 * Before signing, each directory a run writes to loses the temp files that
 * killed modsign runs left there (ms_mod_tmp_clean_dir() says which).
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

void
ms_cli_clean_stale(const char *const *paths, size_t n, bool verbose)
{
	char **dirs = calloc(n + 1, sizeof(*dirs));
	size_t n_dirs = 0, total = 0;

	if (dirs == NULL) {
		return;		/* cleaning is a courtesy: never a reason to fail */
	}
	for (size_t i = 0; i < n; i++) {
		dirs[n_dirs] = dir_of(paths[i]);
		if (dirs[n_dirs] != NULL) {
			n_dirs++;
		}
	}
	qsort(dirs, n_dirs, sizeof(*dirs), str_cmp);
	for (size_t i = 0; i < n_dirs; i++) {
		size_t removed = 0;

		if (i > 0 && strcmp(dirs[i], dirs[i - 1]) == 0) {
			continue;
		}
		if (ms_mod_tmp_clean_dir(dirs[i], &removed) == MS_OK) {
			total += removed;
		}
	}
	if (verbose && total > 0) {
		ms_cli_warn("removed %zu temp file%s left by interrupted modsign runs", total,
			    total == 1 ? "" : "s");
	}
	for (size_t i = 0; i < n_dirs; i++) {
		free(dirs[i]);
	}
	free(dirs);
}
