// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for temp file naming and ms_file_write_atomic(). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../src/modfmt/modfmt.h"
#include "../../src/modfmt/modfmt_internal.h"
#include "test.h"
#include "test_modfmt_util.h"

MS_TEST(modfmt_tmp_name)
{
	const char *d = tm_dir();
	char target[TM_PATH], tmp[TM_PATH], want[64];
	char longname[250];
	struct ms_atomic a = MS_ATOMIC_INIT;
	const char *name = NULL;

	tm_join(target, d, "a.ko");
	CHECK_ERR(ms_atomic_begin(&a, target), MS_OK);
	name = a.tmp_name;
	snprintf(want, sizeof(want), ".a.ko.modsign-%ld-", (long)getpid());
	CHECK(strncmp(name, want, strlen(want)) == 0);
	CHECK(strlen(name) == strlen(want) + 16 + 4);
	CHECK(strcmp(name + strlen(name) - 4, ".tmp") == 0);
	tm_join(tmp, d, name);
	CHECK(tm_mode_of(tmp) == 0600);
	CHECK(tm_count_tmp(d) == 1);
	ms_atomic_abort(&a);
	ms_atomic_abort(&a);
	CHECK(tm_count(d) == 0);

	/* A name near NAME_MAX: the temp name is shortened, the result is not. */
	memset(longname, 'm', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	tm_join(target, d, longname);
	CHECK_ERR(ms_file_write_atomic(target, (const uint8_t *)"x", 1, 0644,
		      MS_WRITE_REPLACE, NULL, NULL), MS_OK);
	CHECK(tm_equals(target, (const uint8_t *)"x", 1));
	CHECK(tm_count(d) == 1);
	tm_done();
}

MS_TEST(modfmt_file_write_atomic)
{
	const char *d = tm_dir();
	char path[TM_PATH], link[TM_PATH], victim[TM_PATH], missing[TM_PATH];
	struct ms_file_fail f;

	tm_join(path, d, "a.ko.p7s");
	CHECK_ERR(ms_file_write_atomic(path, (const uint8_t *)"first", 5, 0644,
		      MS_WRITE_REPLACE, NULL, &f), MS_OK);
	CHECK(tm_equals(path, (const uint8_t *)"first", 5) && tm_mode_of(path) == 0644);
	CHECK_ERR(ms_file_write_atomic(path, (const uint8_t *)"second!", 7, 0600,
		      MS_WRITE_REPLACE, NULL, &f), MS_OK);
	CHECK(tm_equals(path, (const uint8_t *)"second!", 7) && tm_mode_of(path) == 0600);
	CHECK_ERR(ms_file_write_atomic(path, NULL, 0, 0644, MS_WRITE_REPLACE, NULL, &f), MS_OK);
	CHECK(tm_equals(path, NULL, 0));
	/* The directory's fsync left to the caller: the file is the same. */
	CHECK_ERR(ms_file_write_atomic(path, (const uint8_t *)"third", 5, 0644,
				   MS_WRITE_REPLACE_DIR_SYNC_LATER, NULL, &f), MS_OK);
	CHECK(tm_equals(path, (const uint8_t *)"third", 5) && tm_count(d) == 1);

	tm_join(victim, d, "victim");
	tm_join(link, d, "link.p7s");
	tm_write(victim, (const uint8_t *)"keep", 4, 0644);
	CHECK(symlink("victim", link) == 0);
	CHECK_ERR(ms_file_write_atomic(link, (const uint8_t *)"evil", 4, 0644,
		      MS_WRITE_REPLACE, NULL, &f), MS_E_ARG);
	CHECK(f.sys_errno == ELOOP);
	CHECK_ERR(ms_file_write_atomic(d, (const uint8_t *)"evil", 4, 0644,
		      MS_WRITE_REPLACE, NULL, &f), MS_E_ARG);
	CHECK(f.sys_errno == EISDIR);
	tm_join(missing, d, "nodir/x.p7s");
	CHECK_ERR(ms_file_write_atomic(missing, (const uint8_t *)"x", 1, 0644,
		      MS_WRITE_REPLACE, NULL, &f), MS_E_IO);
	CHECK(f.sys_errno == ENOENT && strcmp(f.op, "open its directory") == 0);
	CHECK_ERR(ms_file_write_atomic(NULL, (const uint8_t *)"x", 1, 0644,
		      MS_WRITE_REPLACE, NULL, &f), MS_E_ARG);
	CHECK_ERR(ms_file_write_atomic(path, NULL, 1, 0644, MS_WRITE_REPLACE, NULL, &f), MS_E_ARG);

	CHECK(tm_equals(victim, (const uint8_t *)"keep", 4));
	CHECK(tm_count(d) == 3);
	CHECK(tm_count_tmp(d) == 0);
	tm_done();
}

MS_TEST(modfmt_file_write_atomic_readonly_dir)
{
	const char *d = tm_dir();
	char sub[TM_PATH], path[TM_PATH];
	struct ms_file_fail f;

	if (geteuid() == 0) {
		MS_SKIP("root ignores directory permissions");
	}
	tm_join(sub, d, "ro");
	CHECK(mkdir(sub, 0555) == 0);
	tm_join(path, sub, "a.p7s");
	CHECK_ERR(ms_file_write_atomic(path, (const uint8_t *)"x", 1, 0644,
		      MS_WRITE_REPLACE, NULL, &f), MS_E_IO);
	CHECK(f.sys_errno == EACCES && strcmp(f.op, "open") == 0);
	CHECK(tm_count(sub) == 0);
	tm_done();
}

/*
 * Make the listed system calls fail with @err in this test's child
 * process only (seccomp filter), to reach error paths a healthy file
 * system never takes: no copy_file_range(), a failing fsync() or rename().
 */

/*
 * A run stopped at once: closing its temp-file set removes the temp file of
 * a write in progress, the write's rename then fails and leaves the target
 * as it was, and no new temp file can be made; without a close, the set
 * is empty again after the rename.
 */
MS_TEST(modfmt_tmp_set_close)
{
	const char *d = tm_dir();
	char target[TM_PATH];
	struct ms_tmp_set set;
	struct ms_atomic a = MS_ATOMIC_INIT, b = MS_ATOMIC_INIT;
	struct ms_file_fail f;

	CHECK_ERR(ms_tmp_set_init(&set), MS_OK);
	tm_join(target, d, "m.ko");
	tm_write(target, (const uint8_t *)"old", 3, 0644);

	a.tmps = &set;
	CHECK_ERR(ms_atomic_begin(&a, target), MS_OK);
	CHECK(set.n == 1 && tm_count_tmp(d) == 1);
	CHECK_ERR(ms_atomic_write(&a, (const uint8_t *)"new", 3), MS_OK);
	CHECK_ERR(ms_atomic_sync(&a), MS_OK);
	CHECK_ERR(ms_atomic_rename(&a), MS_OK);
	CHECK(set.n == 0 && tm_count_tmp(d) == 0);
	ms_atomic_abort(&a);
	CHECK(tm_equals(target, (const uint8_t *)"new", 3));

	b.tmps = &set;
	CHECK_ERR(ms_atomic_begin(&b, target), MS_OK);
	CHECK_ERR(ms_atomic_write(&b, (const uint8_t *)"newer", 5), MS_OK);
	CHECK_ERR(ms_atomic_sync(&b), MS_OK);
	CHECK(ms_tmp_set_close(&set) == 1);
	CHECK(tm_count_tmp(d) == 0);
	CHECK_ERR(ms_atomic_rename(&b), MS_E_IO);
	CHECK(b.sys_errno == ECANCELED);
	ms_atomic_abort(&b);
	CHECK(tm_equals(target, (const uint8_t *)"new", 3));
	CHECK(tm_count(d) == 1);

	/* Closed: nothing more is written. */
	CHECK_ERR(ms_file_write_atomic(target, (const uint8_t *)"x", 1, 0644,
		      MS_WRITE_REPLACE, &set, &f), MS_E_IO);
	CHECK(f.sys_errno == ECANCELED);
	CHECK(tm_equals(target, (const uint8_t *)"new", 3) && tm_count(d) == 1);
	ms_tmp_set_clear(&set);
	ms_tmp_set_clear(&set);
	tm_done();
}
