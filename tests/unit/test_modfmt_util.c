// SPDX-License-Identifier: GPL-2.0-only
/* Temp directories and small file utilities for the src/modfmt unit tests. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/modfmt/modfmt.h"
#include "test.h"
#include "test_modfmt_util.h"

static char tm_root[TM_PATH];

/* Our own test tree, at most a few levels deep: recursion is bounded. */
static void
rm_tree(const char *path)
{
	struct stat st;
	DIR *d = NULL;
	struct dirent *e = NULL;
	char sub[TM_PATH];

	if (lstat(path, &st) != 0) {
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		(void)unlink(path);
		return;
	}
	(void)chmod(path, 0700);	/* undo read-only test directories */
	d = opendir(path);
	if (d != NULL) {
		for (e = readdir(d); e != NULL; e = readdir(d)) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
				continue;
			}
			tm_join(sub, path, e->d_name);
			rm_tree(sub);
		}
		closedir(d);
	}
	(void)rmdir(path);
}

static void
tm_cleanup(void)
{
	if (tm_root[0] != '\0') {
		rm_tree(tm_root);
		tm_root[0] = '\0';
	}
}

void
tm_done(void)
{
	tm_cleanup();
}

const char *
tm_dir(void)
{
	CHECK(tm_root[0] == '\0');
	strcpy(tm_root, "/tmp/modfmt-test-XXXXXX");
	CHECK(mkdtemp(tm_root) != NULL);
	CHECK(atexit(tm_cleanup) == 0);
	return tm_root;
}

void
tm_join(char *out, const char *dir, const char *name)
{
	int n = snprintf(out, TM_PATH, "%s/%s", dir, name);

	CHECK(n > 0 && n < TM_PATH);
}

void
tm_write(const char *path, const uint8_t *p, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	CHECK(len == 0 || write(fd, p, len) == (ssize_t)len);
	CHECK(fchmod(fd, mode) == 0);
	CHECK(close(fd) == 0);
}

void
tm_append(const char *path, const uint8_t *p, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(write(fd, p, len) == (ssize_t)len);
	CHECK(close(fd) == 0);
}

int
tm_equals(const char *path, const uint8_t *p, size_t len)
{
	size_t got = 0;
	unsigned char *buf = ms_test_read(path, &got);
	int same = got == len && (len == 0 || memcmp(buf, p, len) == 0);

	free(buf);
	return same;
}

static unsigned
count(const char *dir, const char *needle)
{
	DIR *d = opendir(dir);
	struct dirent *e = NULL;
	unsigned n = 0;

	CHECK(d != NULL);
	for (e = readdir(d); e != NULL; e = readdir(d)) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		if (needle == NULL || strstr(e->d_name, needle) != NULL) {
			n++;
		}
	}
	closedir(d);
	return n;
}

unsigned
tm_count(const char *dir)
{
	return count(dir, NULL);
}

unsigned
tm_count_tmp(const char *dir)
{
	return count(dir, ".modsign-");
}

uint8_t *
tm_pattern(size_t len, unsigned seed)
{
	uint8_t *p = malloc(len + 1);
	uint32_t x = seed * 2654435761u + 1;

	CHECK(p != NULL);
	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
	return p;
}

void
tm_fixture_make(struct tm_fixture *fx, const char *dir, const char *name, mode_t mode)
{
	size_t t = 0;

	tm_join(fx->path, dir, name);
	fx->mod = tm_pattern(TM_MOD_LEN, 1);
	fx->cms = tm_pattern(TM_CMS_LEN, 2);
	fx->want_len = TM_MOD_LEN + TM_CMS_LEN + MS_MOD_TRAILER_LEN;
	fx->want = malloc(fx->want_len);
	CHECK(fx->want != NULL);
	memcpy(fx->want, fx->mod, TM_MOD_LEN);
	memcpy(fx->want + TM_MOD_LEN, fx->cms, TM_CMS_LEN);
	CHECK_ERR(ms_mod_trailer_build(TM_CMS_LEN, fx->want + TM_MOD_LEN + TM_CMS_LEN,
				   MS_MOD_TRAILER_LEN, &t), MS_OK);
	tm_write(fx->path, fx->mod, TM_MOD_LEN, mode);
}

void
tm_fixture_free(struct tm_fixture *fx)
{
	free(fx->mod);
	free(fx->cms);
	free(fx->want);
}

mode_t
tm_mode_of(const char *path)
{
	struct stat st;

	CHECK(lstat(path, &st) == 0);
	return st.st_mode & 07777;
}

ms_err
tm_sign(struct tm_fixture *fx, struct ms_modfile *mf, const char *dest)
{
	ms_modfile_init(mf);
	CHECK_ERR(ms_modfile_open(mf, fx->path), MS_OK);
	return ms_modfile_write_signed(mf, dest, fx->cms, TM_CMS_LEN, MS_WRITE_REPLACE);
}
