/* SPDX-License-Identifier: GPL-2.0-only */
/* The directories of a run: stale temp files removed, each fsync'd once (dirs.c). */
#ifndef MS_APP_DIRS_H
#define MS_APP_DIRS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "../common/ms_common.h"

struct ms_app_sink;

/*
 * The distinct directories of a list of paths (dirs.c), and for a bulk
 * run which directory each module is in, so that a directory is fsync'd as
 * soon as its last module is done rather than all at the end.
 */
struct ms_dir_set {
	char **dir;
	size_t n;
	size_t *dir_of;		/* per path: index in @dir, SIZE_MAX for a NULL path */
	atomic_size_t *left;	/* per directory: modules not done yet */
	atomic_bool *synced;	/* per directory: fsync'd already */
	int *sync_errno;	/* per directory: why its fsync failed, 0 if it did not */
};

/* ms_app_dirs_of() - the directories of @paths (NULL entries skipped), sorted, once each. */
ms_err ms_app_dirs_of(const char *const *paths, size_t n, struct ms_dir_set *out) MS_MUST_CHECK;
/*
 * ms_app_dirs_clean_stale() - remove killed runs' temp files
 * (ms_mod_tmp_clean_dir()), saying how many under @verbose.
 */
void ms_app_dirs_clean_stale(const struct ms_dir_set *set, bool verbose,
			     const struct ms_app_sink *sink);
/*
 * ms_app_dirs_stale_start() / _finish() - the same on a thread of its own
 * (or at once, if none can be made), so that a token's start-up and login
 * need not wait for it; _finish() waits and says what was removed.
 */
struct ms_stale_scan {
	const struct ms_dir_set *set;
	size_t removed;
	pthread_t thread;
	bool threaded;
};
void ms_app_dirs_stale_start(struct ms_stale_scan *scan, const struct ms_dir_set *set);
void ms_app_dirs_stale_finish(struct ms_stale_scan *scan, bool verbose,
			      const struct ms_app_sink *sink);
/*
 * ms_app_dirs_module_done() - path @i of the set is done (signed, failed or
 * skipped): fsync its directory if that was the last of it. Thread-safe; a
 * failure is kept for ms_app_dirs_sync() to report.
 */
void ms_app_dirs_module_done(struct ms_dir_set *set, size_t i);
/*
 * ms_app_dirs_sync() - fsync each directory not fsync'd yet; says each
 * failure through @sink. Return: MS_OK; MS_E_IO.
 */
ms_err ms_app_dirs_sync(struct ms_dir_set *set, const struct ms_app_sink *sink) MS_MUST_CHECK;
void ms_app_dirs_free(struct ms_dir_set *set);

#endif
