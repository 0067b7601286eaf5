// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the directory set of a bulk run (src/app/dirs.c): each
 * directory is fsync'd once, as soon as its last module is done; the rest
 * at the end, with failures reported then.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/app/app.h"
#include "test.h"
#include "test_app_sink.h"

/* Index in the set of directory @dir, SIZE_MAX if absent. */
static size_t
dir_index(const struct ms_dir_set *set, const char *dir)
{
	for (size_t d = 0; d < set->n; d++) {
		if (strcmp(set->dir[d], dir) == 0) {
			return d;
		}
	}
	return SIZE_MAX;
}

MS_TEST(app_dirs_each_synced_when_its_last_module_is_done)
{
	char top[] = "/tmp/app-dirs-XXXXXX";
	char a[64], b[64], pa1[96], pa2[96], pb1[96];
	const char *paths[5];
	struct ms_dir_set set;
	size_t da, db;

	CHECK(mkdtemp(top) != NULL);
	snprintf(a, sizeof(a), "%s/a", top);
	snprintf(b, sizeof(b), "%s/b", top);
	CHECK(mkdir(a, 0700) == 0);
	CHECK(mkdir(b, 0700) == 0);
	snprintf(pa1, sizeof(pa1), "%s/x.ko", a);
	snprintf(pa2, sizeof(pa2), "%s/y.ko", a);
	snprintf(pb1, sizeof(pb1), "%s/z.ko", b);
	/* b first, a twice (once more as the same path), a NULL entry skipped */
	paths[0] = pb1;
	paths[1] = pa1;
	paths[2] = NULL;
	paths[3] = pa2;
	paths[4] = pa1;

	CHECK_ERR(ms_app_dirs_of(paths, 5, &set), MS_OK);
	CHECK(set.n == 2);
	da = dir_index(&set, a);
	db = dir_index(&set, b);
	CHECK(da != SIZE_MAX && db != SIZE_MAX);
	CHECK(set.dir_of[0] == db && set.dir_of[1] == da && set.dir_of[3] == da &&
	      set.dir_of[4] == da);
	CHECK(set.dir_of[2] == SIZE_MAX);
	CHECK(atomic_load(&set.left[da]) == 3 && atomic_load(&set.left[db]) == 1);

	ms_app_dirs_module_done(&set, 1);
	ms_app_dirs_module_done(&set, 4);
	CHECK(!atomic_load(&set.synced[da]));	/* y.ko is not done yet */
	ms_app_dirs_module_done(&set, 3);
	CHECK(atomic_load(&set.synced[da]));
	CHECK(set.sync_errno[da] == 0);
	CHECK(!atomic_load(&set.synced[db]));

	/* The end of the run: what is left is fsync'd then. */
	CHECK_ERR(ms_app_dirs_sync(&set, NULL), MS_OK);
	CHECK(atomic_load(&set.synced[db]));

	ms_app_dirs_free(&set);
	CHECK(set.dir == NULL && set.n == 0);
	rmdir(a);
	rmdir(b);
	rmdir(top);
}

MS_TEST(app_dirs_failed_sync_reported_at_the_end)
{
	char top[] = "/tmp/app-dirs-XXXXXX";
	char gone[64], p[512], q[96];
	const char *paths[2];
	struct ms_dir_set set;
	struct test_sink rec;

	test_sink_init(&rec);
	CHECK(mkdtemp(top) != NULL);
	/* A name longer than NAME_MAX: its fsync cannot open it (ENAMETOOLONG). */
	snprintf(p, sizeof(p), "%s/%0300d/m.ko", top, 0);
	/* One that does not exist holds nothing renamed: not an error. */
	snprintf(gone, sizeof(gone), "%s/gone", top);
	snprintf(q, sizeof(q), "%s/m.ko", gone);
	paths[0] = p;
	paths[1] = q;
	CHECK_ERR(ms_app_dirs_of(paths, 2, &set), MS_OK);
	ms_app_dirs_module_done(&set, 1);
	CHECK_EQ(set.sync_errno[set.dir_of[1]], 0);

	ms_app_dirs_module_done(&set, 0);
	CHECK(atomic_load(&set.synced[set.dir_of[0]]));
	CHECK_EQ(set.sync_errno[set.dir_of[0]], ENAMETOOLONG);
	/* Not tried again, but reported: the run's exit status says it. */
	CHECK_ERR(ms_app_dirs_sync(&set, &rec.sink), MS_E_IO);
	CHECK_EQ(rec.n, 1);
	CHECK(test_sink_find(&rec, MS_APP_SAY_ERROR, "fsync: File name too long") == 0);
	CHECK(strstr(rec.line[0], set.dir[set.dir_of[0]]) == rec.line[0]);

	ms_app_dirs_free(&set);
	rmdir(top);
}
