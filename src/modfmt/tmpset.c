// SPDX-License-Identifier: GPL-2.0-only
/*
 * The temp files of a run's writes in progress. The atomic writer enters
 * each temp file here when it creates it and takes it out when it renames
 * or removes it, so that a run told to stop at once (a second signal) can
 * remove every one from another thread before the process ends. The run
 * owns the set; nothing here is global.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "modfmt_internal.h"

ms_err
ms_tmp_set_init(struct ms_tmp_set *set)
{
	if (set == NULL) {
		return MS_E_ARG;
	}
	memset(set, 0, sizeof(*set));
	if (pthread_mutex_init(&set->lock, NULL) != 0) {
		return MS_E_NOMEM;
	}
	set->is_init = true;
	return MS_OK;
}

void
ms_tmp_set_clear(struct ms_tmp_set *set)
{
	if (set == NULL || !set->is_init) {
		return;
	}
	pthread_mutex_destroy(&set->lock);
	free(set->slot);
	memset(set, 0, sizeof(*set));
}

size_t
ms_tmp_set_close(struct ms_tmp_set *set)
{
	size_t removed = 0;

	pthread_mutex_lock(&set->lock);
	for (size_t i = 0; i < set->n; i++) {
		if (unlinkat(set->slot[i].dir_fd, set->slot[i].name, 0) == 0) {
			removed++;
		}
	}
	set->n = 0;
	set->is_closed = true;
	pthread_mutex_unlock(&set->lock);
	return removed;
}

/*
 * Creates the temp file @name in @dir_fd with openat(@flags, 0600) and
 * enters it, under the lock: a temp file exists on disk only while it is
 * in the set (or the set is NULL). *@fd < 0 and errno set on failure;
 * ECANCELED once the set is closed.
 */
int
ms_tmp_set_create(struct ms_tmp_set *set, int dir_fd, const char *name, int flags)
{
	struct ms_tmp_slot *grown = NULL;
	int fd = -1;
	int e = 0;

	if (set == NULL) {
		return openat(dir_fd, name, flags, 0600);
	}
	pthread_mutex_lock(&set->lock);
	if (set->is_closed) {
		e = ECANCELED;
		goto out;
	}
	if (set->n == set->cap) {
		size_t cap = set->cap == 0 ? 16 : 2 * set->cap;

		grown = realloc(set->slot, cap * sizeof(*grown));
		if (grown == NULL) {
			e = ENOMEM;
			goto out;
		}
		set->slot = grown;
		set->cap = cap;
	}
	fd = openat(dir_fd, name, flags, 0600);
	if (fd < 0) {
		e = errno;
		goto out;
	}
	set->slot[set->n].dir_fd = dir_fd;
	/* @name is a temp name made to fit (atomic.c): never truncated here. */
	memcpy(set->slot[set->n].name, name, strlen(name) + 1);
	set->n++;
out:
	pthread_mutex_unlock(&set->lock);
	errno = e;
	return fd;
}

static void
forget(struct ms_tmp_set *set, int dir_fd, const char *name)
{
	for (size_t i = 0; i < set->n; i++) {
		if (set->slot[i].dir_fd == dir_fd && strcmp(set->slot[i].name, name) == 0) {
			set->slot[i] = set->slot[--set->n];
			return;
		}
	}
}

int
ms_tmp_set_rename(struct ms_tmp_set *set, int dir_fd, const char *name, const char *target)
{
	int rc = 0;
	int e = 0;

	if (set == NULL) {
		return renameat(dir_fd, name, dir_fd, target);
	}
	pthread_mutex_lock(&set->lock);
	if (set->is_closed) {
		e = ECANCELED;	/* the temp file is gone: the target stays as it was */
		rc = -1;
	} else {
		rc = renameat(dir_fd, name, dir_fd, target);
		e = errno;
		if (rc == 0) {
			forget(set, dir_fd, name);
		}
	}
	pthread_mutex_unlock(&set->lock);
	errno = e;
	return rc;
}

void
ms_tmp_set_remove(struct ms_tmp_set *set, int dir_fd, const char *name)
{
	if (set == NULL) {
		(void)unlinkat(dir_fd, name, 0);
		return;
	}
	pthread_mutex_lock(&set->lock);
	if (!set->is_closed) {
		(void)unlinkat(dir_fd, name, 0);
		forget(set, dir_fd, name);
	}
	pthread_mutex_unlock(&set->lock);
}
