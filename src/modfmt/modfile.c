// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening a module, reading it for hashing and judging its existing
 * signature. Parses untrusted input.
 *
 * Decisions: a 0-byte module is refused at open (MS_E_ARG, ENODATA) unless
 * the caller asks for it (MS_MODFILE_EMPTY_OK): it is no ELF file, and the
 * kernel needs at least one module byte before the PKCS#7 blob
 * (sig_len < file_len - 40); sign-file signs it all the same, so signing
 * may. A module over MS_MOD_SIZE_MAX (INT_MAX, what finit_module(2) reads)
 * is refused with EFBIG.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modfmt_internal.h"

static ms_err
mf_fail(struct ms_modfile *mf, const char *op, int e, ms_err err)
{
	mf->op = op;
	mf->err_path = mf->path;
	mf->sys_errno = e;
	return err;
}

void
ms_modfile_init(struct ms_modfile *mf)
{
	if (mf == NULL) {
		return;
	}
	memset(mf, 0, sizeof(*mf));
	mf->fd = -1;
	mf->zlimit = MS_ZMOD_LIMIT_DEFAULT;
}

/* Another run replacing the module again and again is given up on after this. */
#define LOCK_ATTEMPTS 8

/*
 * Two modsign runs on one module: the second waits here (flock, held until
 * the descriptor closes) until the first has replaced the module, then
 * finds the path naming a new file (MS_E_CHANGED) and opens that one, whose
 * signature decides what happens next. So each run works on a whole module
 * and one never overwrites the other's result with a stale copy.
 */
static ms_err
lock_current(int fd, const char *path, const struct stat *st)
{
	struct stat now;
	int rc;

	do {
		rc = flock(fd, LOCK_EX);
	} while (rc != 0 && errno == EINTR);
	if (rc != 0) {
		return MS_E_IO;
	}
	if (lstat(path, &now) != 0) {
		return MS_E_CHANGED;
	}
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		errno = 0;
		return MS_E_CHANGED;
	}
	return MS_OK;
}

ms_err
ms_modfile_open(struct ms_modfile *mf, const char *path)
{
	return ms_modfile_open_flags(mf, path, 0);
}

ms_err
ms_modfile_open_flags(struct ms_modfile *mf, const char *path, unsigned flags)
{
	ms_err err = MS_E_INTERNAL;
	int fd = -1;
	struct stat st;

	if (mf == NULL) {
		return MS_E_ARG;
	}
	if (path == NULL || mf->fd >= 0) {
		return mf_fail(mf, "open", EINVAL, MS_E_ARG);
	}
	mf->path = path;
	/*
	 * O_NOFOLLOW: signing in place replaces the path, so a symlink would
	 * be replaced by a file instead of its target being signed.
	 * O_NONBLOCK: a FIFO must not block us; it has no effect on the
	 * regular file we require.
	 */
	for (unsigned attempt = 0;; attempt++) {
		do {
			fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		} while (fd < 0 && errno == EINTR);
		if (fd < 0 && errno == ELOOP) {
			mf->file_type = S_IFLNK;
			err = mf_fail(mf, "open", ELOOP, MS_E_ARG);
			goto out;
		}
		if (fd < 0) {
			err = mf_fail(mf, "open", errno, MS_E_IO);
			goto out;
		}
		if (fstat(fd, &st) != 0) {
			err = mf_fail(mf, "fstat", errno, MS_E_IO);
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			break;		/* refused below; nothing to lock */
		}
		err = lock_current(fd, path, &st);
		/* Waiting for the lock may have changed ctime (a link count). */
		if (err == MS_OK && fstat(fd, &st) != 0) {
			err = MS_E_IO;
		}
		if (err == MS_OK) {
			break;
		}
		(void)close(fd);
		fd = -1;
		if (err != MS_E_CHANGED || attempt == LOCK_ATTEMPTS) {
			err = mf_fail(mf, err == MS_E_CHANGED ? "open" : "flock", errno,
				      err == MS_E_CHANGED ? MS_E_CHANGED : MS_E_IO);
			goto out;
		}
	}
	if (!S_ISREG(st.st_mode)) {
		mf->file_type = st.st_mode & S_IFMT;
		err = mf_fail(mf, "open", S_ISDIR(st.st_mode) ? EISDIR : EINVAL, MS_E_ARG);
		goto out;
	}
	if (st.st_size < 0 || (st.st_size == 0 && (flags & MS_MODFILE_EMPTY_OK) == 0)) {
		err = mf_fail(mf, "open", ENODATA, MS_E_ARG);
		goto out;
	}
	if ((uint64_t)st.st_size > MS_MOD_SIZE_MAX) {
		err = mf_fail(mf, "open", EFBIG, MS_E_ARG);
		goto out;
	}
	mf->fd = fd;
	fd = -1;
	mf->st = st;
	mf->read_off = 0;
	mf->op = NULL;
	mf->err_path = NULL;
	mf->sys_errno = 0;
	mf->file_type = 0;
	err = ms_modfile_zopen(mf);
	if (err != MS_OK) {
		ms_modfile_clear(mf);
	}
out:
	if (fd >= 0) {
		(void)close(fd);
	}
	return err;
}

ms_err
ms_modfile_read(struct ms_modfile *mf, uint8_t *buf, size_t cap, size_t *n)
{
	uint64_t size = 0;
	uint64_t left = 0;
	size_t want = 0;
	size_t got = 0;
	uint8_t probe = 0;
	int e = 0;

	if (mf == NULL || n == NULL) {
		return MS_E_ARG;
	}
	*n = 0;
	if (mf->fd < 0 || buf == NULL || cap == 0) {
		return mf_fail(mf, "read", EINVAL, MS_E_ARG);
	}
	/* Checked at open: 0 < len <= MS_MOD_SIZE_MAX. */
	size = mf->len;
	if (mf->read_off > size) {
		return mf_fail(mf, "read", 0, MS_E_INTERNAL);
	}
	left = size - mf->read_off;
	if (left == 0) {
		/* The end as of open: one more byte means the module grew. */
		if (ms_modfile_pread(mf, &probe, 1, size, &got, &e) != MS_OK) {
			return mf_fail(mf, "read", e, MS_E_IO);
		}
		if (got != 0) {
			return mf_fail(mf, "read", 0, MS_E_CHANGED);
		}
		return MS_OK;
	}
	want = left < (uint64_t)cap ? (size_t)left : cap;
	if (ms_modfile_pread(mf, buf, want, mf->read_off, &got, &e) != MS_OK) {
		return mf_fail(mf, "read", e, MS_E_IO);
	}
	if (got != want) {
		/* End of file before the size seen at open: it shrank. */
		return mf_fail(mf, "read", 0, MS_E_CHANGED);
	}
	mf->read_off += got;
	*n = got;
	return MS_OK;
}

ms_err
ms_modfile_rewind(struct ms_modfile *mf)
{
	if (mf == NULL) {
		return MS_E_ARG;
	}
	if (mf->fd < 0) {
		return mf_fail(mf, "read", EBADF, MS_E_ARG);
	}
	mf->read_off = 0;
	return MS_OK;
}

/* The last 40 bytes, or the whole of a shorter module, for the one trailer judge. */
ms_err
ms_modfile_sig_state(struct ms_modfile *mf, struct ms_mod_sig_info *info, const char **why)
{
	uint8_t tail[MS_MOD_TRAILER_LEN];
	uint64_t size = 0;
	size_t len = 0;
	size_t got = 0;
	int e = 0;

	if (why != NULL) {
		*why = NULL;
	}
	if (mf == NULL) {
		return MS_E_ARG;
	}
	if (mf->fd < 0 || info == NULL) {
		return mf_fail(mf, "read", EINVAL, MS_E_ARG);
	}
	size = mf->len;
	len = size < MS_MOD_TRAILER_LEN ? (size_t)size : MS_MOD_TRAILER_LEN;
	if (ms_modfile_pread(mf, tail, len, size - len, &got, &e) != MS_OK) {
		return mf_fail(mf, "read", e, MS_E_IO);
	}
	if (got != len) {
		return mf_fail(mf, "read", 0, MS_E_CHANGED);
	}
	return ms_mod_trailer_parse(tail, len, size, info, why);
}

void
ms_modfile_clear(struct ms_modfile *mf)
{
	if (mf == NULL) {
		return;
	}
	if (mf->fd >= 0) {
		(void)close(mf->fd);	/* releases the flock */
	}
	mf->fd = -1;
	ms_mod_zimage_clear(&mf->zimg);
	mf->zfmt = MS_ZFMT_NONE;
	mf->len = 0;
	mf->read_off = 0;
}
