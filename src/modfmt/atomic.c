// SPDX-License-Identifier: GPL-2.0-only
/*
 * Replacing a file atomically: a new temp file beside the target (O_EXCL,
 * no symlink followed), fsync, rename over the target, fsync the directory.
 * Readers see the old file or the new one, never a mix.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "modfmt_internal.h"

/* Temp names are random; a clash only costs a retry (O_EXCL). */
#define TMP_TRIES 16

/* Longest "<MS_TMP_TAG><pid>-<16 hex>.tmp" plus the leading dot. */
#define TMP_EXTRA (1 + (sizeof(MS_TMP_TAG) - 1) + 20 + 1 + 16 + 4)

static ms_err
fail(struct ms_atomic *a, const char *op, int e, ms_err err)
{
	a->op = op;
	a->sys_errno = e;
	return err;
}

static uint64_t
tmp_random(unsigned int attempt)
{
	uint64_t r = 0;
	struct timespec ts = { 0, 0 };

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r)) {
		return r;
	}
	/*
	 * The name only has to be unlikely to exist: O_EXCL|O_NOFOLLOW make
	 * a guessed name harmless, so a clock is an acceptable fallback.
	 */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec ^ attempt;
}

/*
 * ".<basename>.modsign-<pid>-<random hex>.tmp", recognisable so that stale
 * ones can be found; a long basename is shortened to keep within NAME_MAX.
 */
static ms_err
tmp_name_make(struct ms_atomic *a, unsigned int attempt)
{
	size_t base_len = strlen(a->base);
	int n;

	if (base_len > NAME_MAX - TMP_EXTRA) {
		base_len = NAME_MAX - TMP_EXTRA;
	}
	n = snprintf(a->tmp_name, sizeof(a->tmp_name), ".%.*s" MS_TMP_TAG "%ld-%016llx.tmp",
		     (int)base_len, a->base, (long)getpid(),
		     (unsigned long long)tmp_random(attempt));
	if (n < 0 || (size_t)n >= sizeof(a->tmp_name)) {
		a->tmp_name[0] = '\0';
		return fail(a, "open", ENAMETOOLONG, MS_E_INTERNAL);
	}
	return MS_OK;
}

/* An existing target must be a regular file: never replace a link or a directory. */
static ms_err
check_target(struct ms_atomic *a)
{
	struct stat st;

	if (fstatat(a->dir_fd, a->base, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT) {
			return MS_OK;
		}
		return fail(a, "lstat", errno, MS_E_IO);
	}
	if (S_ISREG(st.st_mode)) {
		return MS_OK;
	}
	a->file_type = st.st_mode & S_IFMT;
	if (S_ISLNK(st.st_mode)) {
		return fail(a, "open", ELOOP, MS_E_ARG);
	}
	if (S_ISDIR(st.st_mode)) {
		return fail(a, "open", EISDIR, MS_E_ARG);
	}
	return fail(a, "open", EINVAL, MS_E_ARG);
}

/* Split @target into its directory and a->base, and open the directory. */
static ms_err
open_dir(struct ms_atomic *a, const char *target)
{
	const char *slash = strrchr(target, '/');
	size_t prefix_len = 0;
	char dir[PATH_MAX] = ".";

	if (slash != NULL) {
		prefix_len = (size_t)(slash - target) + 1;	/* keeps the '/' */
	}
	a->base = target + prefix_len;
	if (a->base[0] == '\0' || strcmp(a->base, ".") == 0 || strcmp(a->base, "..") == 0) {
		return fail(a, "open", EISDIR, MS_E_ARG);
	}
	if (prefix_len >= sizeof(dir)) {
		return fail(a, "open", ENAMETOOLONG, MS_E_ARG);
	}
	if (prefix_len > 0) {
		memcpy(dir, target, prefix_len);
		dir[prefix_len] = '\0';
	}
	do {
		a->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} while (a->dir_fd < 0 && errno == EINTR);
	if (a->dir_fd < 0) {
		return fail(a, "open its directory", errno, MS_E_IO);
	}
	return MS_OK;
}

ms_err
ms_atomic_begin(struct ms_atomic *a, const char *target)
{
	ms_err err = MS_E_INTERNAL;
	unsigned int i;

	if (a == NULL || target == NULL || a->dir_fd != -1 || a->fd != -1) {
		return MS_E_ARG;
	}
	err = open_dir(a, target);
	if (err != MS_OK) {
		goto out;
	}
	err = check_target(a);
	if (err != MS_OK) {
		goto out;
	}
	for (i = 0; i < TMP_TRIES; i++) {
		err = tmp_name_make(a, i);
		if (err != MS_OK) {
			goto out;
		}
		a->fd = ms_tmp_set_create(a->tmps, a->dir_fd, a->tmp_name,
					  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC);
		if (a->fd >= 0) {
			break;
		}
		if (errno != EEXIST && errno != EINTR) {
			a->tmp_name[0] = '\0';
			err = fail(a, "open", errno, MS_E_IO);
			goto out;
		}
	}
	if (a->fd < 0) {
		a->tmp_name[0] = '\0';
		err = fail(a, "open", EEXIST, MS_E_IO);
		goto out;
	}
	err = MS_OK;
out:
	if (err != MS_OK) {
		ms_atomic_abort(a);
	}
	return err;
}

ms_err
ms_atomic_write(struct ms_atomic *a, const uint8_t *p, size_t len)
{
	int e = 0;

	if (a->fd < 0) {
		return fail(a, "write", EBADF, MS_E_INTERNAL);
	}
	if (ms_write_full(a->fd, p, len, &e) != MS_OK) {
		return fail(a, "write", e, MS_E_IO);
	}
	return MS_OK;
}

ms_err
ms_atomic_sync(struct ms_atomic *a)
{
	int rc;

	if (a->fd < 0) {
		return fail(a, "fsync", EBADF, MS_E_INTERNAL);
	}
	/* ENOSPC or EIO may first show here (delayed allocation, NFS). */
	if (fsync(a->fd) != 0) {
		return fail(a, "fsync", errno, MS_E_IO);
	}
	rc = close(a->fd);
	a->fd = -1;	/* closed even when close() fails (Linux) */
	if (rc != 0) {
		return fail(a, "close", errno, MS_E_IO);
	}
	return MS_OK;
}

ms_err
ms_atomic_rename(struct ms_atomic *a)
{
	if (a->fd != -1 || a->dir_fd < 0 || a->tmp_name[0] == '\0') {
		return fail(a, "rename", EBADF, MS_E_INTERNAL);
	}
	if (ms_tmp_set_rename(a->tmps, a->dir_fd, a->tmp_name, a->base) != 0) {
		return fail(a, "rename", errno, MS_E_IO);
	}
	a->tmp_name[0] = '\0';
	if (a->dir_sync_later) {
		return MS_OK;
	}
	/*
	 * Make the rename durable. EINVAL means the file system cannot sync
	 * a directory at all; there is nothing more we could do then.
	 */
	if (fsync(a->dir_fd) != 0 && errno != EINVAL) {
		return fail(a, "fsync", errno, MS_E_IO);
	}
	return MS_OK;
}

void
ms_atomic_abort(struct ms_atomic *a)
{
	if (a == NULL) {
		return;
	}
	if (a->fd >= 0) {
		(void)close(a->fd);
		a->fd = -1;
	}
	if (a->tmp_name[0] != '\0' && a->dir_fd >= 0) {
		ms_tmp_set_remove(a->tmps, a->dir_fd, a->tmp_name);
	}
	a->tmp_name[0] = '\0';
	if (a->dir_fd >= 0) {
		(void)close(a->dir_fd);
		a->dir_fd = -1;
	}
}

ms_err
ms_file_write_atomic(const char *path, const uint8_t *p, size_t len, mode_t mode,
		     enum ms_write_mode how, struct ms_tmp_set *tmps, struct ms_file_fail *failp)
{
	ms_err err = MS_E_INTERNAL;
	struct ms_atomic a = MS_ATOMIC_INIT;

	a.op = "open";
	if (path == NULL || (p == NULL && len > 0)) {
		err = fail(&a, "open", EINVAL, MS_E_ARG);
		goto out;
	}
	a.tmps = tmps;
	a.dir_sync_later = how == MS_WRITE_REPLACE_DIR_SYNC_LATER;
	err = ms_atomic_begin(&a, path);
	if (err != MS_OK) {
		goto out;
	}
	/* Explicit mode, not reduced by the umask: the caller chose it. */
	if (fchmod(a.fd, mode & 07777) != 0) {
		err = fail(&a, "fchmod", errno, MS_E_IO);
		goto out;
	}
	err = ms_atomic_write(&a, p, len);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_atomic_sync(&a);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_atomic_rename(&a);
out:
	if (failp != NULL) {
		failp->op = err == MS_OK ? NULL : a.op;
		failp->sys_errno = err == MS_OK ? 0 : a.sys_errno;
		failp->file_type = err == MS_OK ? 0 : a.file_type;
	}
	ms_atomic_abort(&a);
	return err;
}

ms_err
ms_dir_sync(const char *dir, int *sys_errno)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	*sys_errno = 0;
	if (fd < 0) {
		*sys_errno = errno;
		return MS_E_IO;
	}
	rc = fsync(fd);
	if (rc != 0 && errno != EINVAL) {
		*sys_errno = errno;
	}
	close(fd);
	return *sys_errno == 0 ? MS_OK : MS_E_IO;
}
