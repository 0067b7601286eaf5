// SPDX-License-Identifier: GPL-2.0-only
/*
 * The modules this process holds open and flock()ed, by inode. flock()
 * locks belong to each open file description, so a second open of one
 * inode (a hard link, a path listed twice) would wait for our own lock,
 * and for ever if the thread holding it is stuck in a token call.
 * ms_modfile_open() asks here first and returns MS_E_BUSY instead, and
 * the caller decides how to wait. Few entries: one per worker.
 */
#include <pthread.h>
#include <stdlib.h>

#include "modfmt_internal.h"

struct held_inode {
	dev_t dev;
	ino_t ino;
};

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held_inode *held;
static size_t held_n, held_cap;

ms_err
ms_held_take(dev_t dev, ino_t ino)
{
	ms_err err = MS_OK;

	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < held_n; i++) {
		if (held[i].dev == dev && held[i].ino == ino) {
			err = MS_E_BUSY;
			goto out;
		}
	}
	if (held_n == held_cap) {
		size_t cap = held_cap == 0 ? 16 : 2 * held_cap;
		struct held_inode *p = realloc(held, cap * sizeof(*p));

		if (p == NULL) {
			err = MS_E_NOMEM;
			goto out;
		}
		held = p;
		held_cap = cap;
	}
	held[held_n].dev = dev;
	held[held_n].ino = ino;
	held_n++;
out:
	pthread_mutex_unlock(&held_lock);
	return err;
}

void
ms_held_drop(dev_t dev, ino_t ino)
{
	pthread_mutex_lock(&held_lock);
	for (size_t i = 0; i < held_n; i++) {
		if (held[i].dev == dev && held[i].ino == ino) {
			held[i] = held[--held_n];
			break;
		}
	}
	if (held_n == 0) {
		free(held);	/* nothing left over at exit for leak checkers */
		held = NULL;
		held_cap = 0;
	}
	pthread_mutex_unlock(&held_lock);
}
