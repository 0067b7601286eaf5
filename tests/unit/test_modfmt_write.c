// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for writing signed modules: all or nothing, the right file, no temp file left. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/modfmt/modfmt.h"
#include "test.h"
#include "test_modfmt_util.h"

MS_TEST(modfmt_write_in_place)
{
	static const mode_t modes[] = { 0600, 0755, 0644 };
	const char *d = tm_dir();

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct tm_fixture fx;
		struct ms_modfile mf;
		struct ms_mod_sig_info info;

		tm_fixture_make(&fx, d, "a.ko", modes[i]);
		CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
		ms_modfile_clear(&mf);
		CHECK(tm_equals(fx.path, fx.want, fx.want_len));
		CHECK(tm_mode_of(fx.path) == modes[i]);
		CHECK(tm_count(d) == 1);
		/* The result reads back as signed. */
		ms_modfile_init(&mf);
		CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
		CHECK_ERR(ms_modfile_sig_state(&mf, &info, NULL), MS_OK);
		CHECK(info.sig_len == TM_CMS_LEN);
		ms_modfile_clear(&mf);
		tm_fixture_free(&fx);
	}
	tm_done();
}

MS_TEST(modfmt_write_signed_twice_appends)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;
	uint8_t *twice = NULL;

	/* modfmt has no policy: a second signature is appended, as sign-file does. */
	tm_fixture_make(&fx, d, "a.ko", 0644);
	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
	ms_modfile_clear(&mf);
	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
	ms_modfile_clear(&mf);
	twice = malloc(2 * fx.want_len - TM_MOD_LEN);
	CHECK(twice != NULL);
	memcpy(twice, fx.want, fx.want_len);
	memcpy(twice + fx.want_len, fx.want + TM_MOD_LEN, fx.want_len - TM_MOD_LEN);
	CHECK(tm_equals(fx.path, twice, 2 * fx.want_len - TM_MOD_LEN));
	CHECK(tm_count(d) == 1);
	free(twice);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_dest)
{
	const char *d = tm_dir();
	char sub[TM_PATH], dest[TM_PATH], dest2[TM_PATH], rel[TM_PATH];
	struct tm_fixture fx;
	struct ms_modfile mf;

	tm_fixture_make(&fx, d, "a.ko", 0640);
	tm_join(dest, d, "b.ko");
	tm_join(sub, d, "out");
	CHECK(mkdir(sub, 0755) == 0);
	tm_join(dest2, sub, "c.ko");

	/* Same directory, then another one; then over an existing file. */
	CHECK_ERR(tm_sign(&fx, &mf, dest), MS_OK);
	CHECK_ERR(ms_modfile_write_signed(&mf, dest2, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_OK);
	tm_write(dest, (const uint8_t *)"old", 3, 0600);
	CHECK_ERR(ms_modfile_write_signed(&mf, dest, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_OK);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
	CHECK(tm_equals(dest, fx.want, fx.want_len));
	CHECK(tm_equals(dest2, fx.want, fx.want_len));
	CHECK(tm_mode_of(dest) == 0640 && tm_mode_of(dest2) == 0640);
	CHECK(tm_count(d) == 3 && tm_count(sub) == 1);

	/* A dest with no directory part is relative to the working directory. */
	CHECK(chdir(sub) == 0);
	CHECK_ERR(tm_sign(&fx, &mf, "rel.ko"), MS_OK);
	ms_modfile_clear(&mf);
	tm_join(rel, sub, "rel.ko");
	CHECK(tm_equals(rel, fx.want, fx.want_len));
	CHECK(tm_count(sub) == 2);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_dest_refused)
{
	const char *d = tm_dir();
	char victim[TM_PATH], link[TM_PATH], dir[TM_PATH], missing[TM_PATH];
	struct tm_fixture fx;
	struct ms_modfile mf;

	tm_fixture_make(&fx, d, "a.ko", 0644);
	tm_join(victim, d, "victim");
	tm_join(link, d, "link.ko");
	tm_join(dir, d, "dir.ko");
	tm_join(missing, d, "nodir/b.ko");
	tm_write(victim, (const uint8_t *)"keep", 4, 0644);
	CHECK(symlink("victim", link) == 0);
	CHECK(mkdir(dir, 0755) == 0);

	CHECK_ERR(tm_sign(&fx, &mf, link), MS_E_ARG);
	CHECK(mf.sys_errno == ELOOP && mf.err_path == link);
	CHECK_ERR(ms_modfile_write_signed(&mf, dir, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_E_ARG);
	CHECK(mf.sys_errno == EISDIR);
	CHECK(ms_modfile_write_signed(&mf, missing, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_IO);
	CHECK(mf.sys_errno == ENOENT && strcmp(mf.op, "open its directory") == 0 && mf.err_path == missing);
	tm_join(missing, d, "a.ko/b.ko");	/* a file as the directory */
	CHECK(ms_modfile_write_signed(&mf, missing, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_IO);
	CHECK(mf.sys_errno == ENOTDIR);
	CHECK_ERR(ms_modfile_write_signed(&mf, "", fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_E_ARG);
	ms_modfile_clear(&mf);

	CHECK(tm_equals(victim, (const uint8_t *)"keep", 4));
	CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
	CHECK(tm_count(d) == 4);	/* a.ko, victim, link.ko, dir.ko */
	CHECK(tm_count(dir) == 0);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_bad_args)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;

	tm_fixture_make(&fx, d, "a.ko", 0644);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_E_ARG);
	CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
	CHECK_ERR(ms_modfile_write_signed(&mf, NULL, fx.cms, 0, MS_WRITE_REPLACE), MS_E_ARG);
	CHECK_ERR(ms_modfile_write_signed(&mf, NULL, NULL, TM_CMS_LEN, MS_WRITE_REPLACE), MS_E_ARG);
	CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, (enum ms_write_mode)7) ==
	      MS_E_ARG);
	CHECK(ms_modfile_write_signed(NULL, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_ARG);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
	CHECK(tm_count(d) == 1);
	tm_fixture_free(&fx);
	tm_done();
}

/*
 * A signed result larger than finit_module(2) reads (INT_MAX bytes) is
 * refused before anything is written; an empty module is signed (as
 * sign-file signs it) when opened with MS_MODFILE_EMPTY_OK.
 */
MS_TEST(modfmt_write_size_limits)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;
	char big[TM_PATH], empty[TM_PATH];
	uint8_t trailer[MS_MOD_TRAILER_LEN];
	size_t t = 0;
	uint8_t *want = NULL;

	tm_fixture_make(&fx, d, "a.ko", 0644);
	tm_join(big, d, "big.ko");
	tm_write(big, NULL, 0, 0644);
	/* Sparse: room for the trailer but not for the PKCS#7 too. */
	CHECK(truncate(big, (off_t)(MS_MOD_SIZE_MAX - MS_MOD_TRAILER_LEN - TM_CMS_LEN + 1)) == 0);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, big), MS_OK);
	CHECK_ERR(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_E_ARG);
	CHECK(mf.sys_errno == EFBIG && mf.err_path == big);
	ms_modfile_clear(&mf);
	CHECK(tm_count(d) == 2 && tm_count_tmp(d) == 0);
	CHECK(unlink(big) == 0);

	tm_join(empty, d, "empty.ko");
	tm_write(empty, NULL, 0, 0644);
	CHECK(ms_modfile_open(&mf, empty) == MS_E_ARG && mf.sys_errno == ENODATA);
	ms_modfile_clear(&mf);
	CHECK_ERR(ms_modfile_open_flags(&mf, empty, MS_MODFILE_EMPTY_OK), MS_OK);
	CHECK_ERR(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_OK);
	ms_modfile_clear(&mf);
	CHECK_ERR(ms_mod_trailer_build(TM_CMS_LEN, trailer, sizeof(trailer), &t), MS_OK);
	want = malloc(TM_CMS_LEN + t);
	CHECK(want != NULL);
	memcpy(want, fx.cms, TM_CMS_LEN);
	memcpy(want + TM_CMS_LEN, trailer, t);
	CHECK(tm_equals(empty, want, TM_CMS_LEN + t));
	free(want);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_source_changed)
{
	const char *d = tm_dir();
	char dest[TM_PATH];
	struct tm_fixture fx;
	struct ms_modfile mf;
	uint8_t *grown = NULL;
	struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };

	tm_fixture_make(&fx, d, "a.ko", 0644);
	tm_join(dest, d, "b.ko");
	grown = malloc(TM_MOD_LEN + 1);
	CHECK(grown != NULL);
	memcpy(grown, fx.mod, TM_MOD_LEN);
	grown[TM_MOD_LEN] = 'x';

	/* Grown after open: in place and to a dest. */
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
	tm_append(fx.path, (const uint8_t *)"x", 1);
	CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_CHANGED);
	CHECK(mf.err_path == fx.path);
	CHECK(ms_modfile_write_signed(&mf, dest, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_CHANGED);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, grown, TM_MOD_LEN + 1));
	CHECK(tm_count(d) == 1);

	/* Shrunk after open: the copy runs short. */
	tm_write(fx.path, fx.mod, TM_MOD_LEN, 0644);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
	CHECK(truncate(fx.path, 10) == 0);
	CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_CHANGED);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.mod, 10));
	CHECK(tm_count(d) == 1);

	/* Same size, other mtime. */
	tm_write(fx.path, fx.mod, TM_MOD_LEN, 0644);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
	CHECK(utimensat(AT_FDCWD, fx.path, ts, 0) == 0);
	CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_CHANGED);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
	CHECK(tm_count(d) == 1);
	free(grown);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_path_replaced)
{
	const char *d = tm_dir();
	char other[TM_PATH];
	struct tm_fixture fx;
	struct ms_modfile mf;

	/* In place, the path must still name the module we read. */
	tm_fixture_make(&fx, d, "a.ko", 0644);
	tm_join(other, d, "other");
	tm_write(other, (const uint8_t *)"other", 5, 0644);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
	CHECK(rename(other, fx.path) == 0);
	CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_CHANGED);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, (const uint8_t *)"other", 5));
	CHECK(tm_count(d) == 1);

	/* Its directory swapped for another one with a file of the same name. */
	{
		char sub[TM_PATH], old[TM_PATH], mod[TM_PATH], moved[TM_PATH];

		tm_join(sub, d, "s");
		tm_join(old, d, "s.old");
		tm_join(mod, sub, "a.ko");
		tm_join(moved, old, "a.ko");
		CHECK(mkdir(sub, 0755) == 0);
		tm_write(mod, fx.mod, TM_MOD_LEN, 0644);
		ms_modfile_init(&mf);
		CHECK_ERR(ms_modfile_open(&mf, mod), MS_OK);
		CHECK(rename(sub, old) == 0);
		CHECK(mkdir(sub, 0755) == 0);
		tm_write(mod, (const uint8_t *)"other", 5, 0644);
		CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
		      MS_E_CHANGED);
		ms_modfile_clear(&mf);
		CHECK(tm_equals(mod, (const uint8_t *)"other", 5));
		CHECK(tm_equals(moved, fx.mod, TM_MOD_LEN));
		CHECK(tm_count(sub) == 1 && tm_count(old) == 1);
	}

	/* Removed: not recreated. */
	ms_modfile_init(&mf);
	tm_write(fx.path, fx.mod, TM_MOD_LEN, 0644);
	CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
	CHECK(unlink(fx.path) == 0);
	CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_CHANGED);
	ms_modfile_clear(&mf);
	CHECK(tm_count(d) == 2);	/* s, s.old */
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_readonly_dir)
{
	const char *d = tm_dir();
	char sub[TM_PATH];
	struct tm_fixture fx;
	struct ms_modfile mf;

	if (geteuid() == 0) {
		MS_SKIP("root ignores directory permissions");
	}
	tm_join(sub, d, "ro");
	CHECK(mkdir(sub, 0755) == 0);
	tm_fixture_make(&fx, sub, "a.ko", 0644);
	CHECK(chmod(sub, 0555) == 0);
	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_E_IO);
	CHECK(mf.sys_errno == EACCES && strcmp(mf.op, "open") == 0 && mf.err_path == fx.path);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
	CHECK(tm_count(sub) == 1);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_owner_kept_in_place)
{
	const char *d = tm_dir();
	char dest[TM_PATH];
	struct tm_fixture fx;
	struct ms_modfile mf;
	struct stat st;

	if (geteuid() != 0) {
		MS_SKIP("needs root to give files away");
	}
	tm_fixture_make(&fx, d, "a.ko", 0644);
	tm_join(dest, d, "b.ko");
	CHECK(chown(fx.path, 12345, 23456) == 0);
	CHECK(chmod(fx.path, 06755) == 0);
	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
	ms_modfile_clear(&mf);
	CHECK(lstat(fx.path, &st) == 0);
	CHECK(st.st_uid == 12345 && st.st_gid == 23456);
	CHECK((st.st_mode & 07777) == 06755);

	/* A dest stays the writer's, without set-id bits. */
	CHECK_ERR(tm_sign(&fx, &mf, dest), MS_OK);
	ms_modfile_clear(&mf);
	CHECK(lstat(dest, &st) == 0);
	CHECK(st.st_uid == geteuid() && (st.st_mode & 07777) == 0755);
	tm_fixture_free(&fx);
	tm_done();
}
