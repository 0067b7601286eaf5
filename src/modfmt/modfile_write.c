// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writing a signed module: module bytes from the open descriptor, the
 * PKCS#7 blob and the trailer into a temp file that replaces the target
 * only if the module did not change since it was opened.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* copy_file_range() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modfmt_internal.h"

#define COPY_CHUNK ((size_t)1 << 30)
#define BOUNCE_LEN 32768

static ms_err
wf_fail(struct ms_modfile *mf, const char *op, const char *path, int e, ms_err err)
{
	mf->op = op;
	mf->err_path = path;
	mf->sys_errno = e;
	return err;
}

/*
 * Ownership and mode of the original module. In place, the new file gets
 * the module's owner and group: root (CAP_CHOWN) can always do that; a
 * non-root user gets EPERM when the module is someone else's, which we
 * ignore: the new file is then the user's, as after any editor's save.
 * For a @dest we keep the writer's ownership (as sign-file and cp do):
 * root signing a user's module into /lib/modules must not hand the result
 * to that user. Set-id bits are kept only when the owner is the module's.
 */
static ms_err
set_owner_mode(struct ms_modfile *mf, struct ms_atomic *a, const char *target, bool in_place)
{
	struct stat tst;
	mode_t mode = mf->st.st_mode & 07777;
	bool same_owner = false;

	if (fstat(a->fd, &tst) != 0) {
		return wf_fail(mf, "fstat", target, errno, MS_E_IO);
	}
	same_owner = tst.st_uid == mf->st.st_uid && tst.st_gid == mf->st.st_gid;
	if (in_place && !same_owner) {
		if (fchown(a->fd, mf->st.st_uid, mf->st.st_gid) == 0) {
			same_owner = true;
		} else if (errno != EPERM || geteuid() == 0) {
			return wf_fail(mf, "fchown", target, errno, MS_E_IO);
		}
	}
	if (!same_owner) {
		mode &= 0777;
	}
	/* After fchown, which may clear set-id bits. */
	if (fchmod(a->fd, mode) != 0) {
		return wf_fail(mf, "fchmod", target, errno, MS_E_IO);
	}
	return MS_OK;
}

/* The portable path: pread from the module, write to the temp file. */
static ms_err
copy_bounce(struct ms_modfile *mf, struct ms_atomic *a, const char *target, uint64_t off,
	    size_t want, size_t *done)
{
	uint8_t buf[BOUNCE_LEN];
	size_t got = 0;
	int e = 0;

	if (want > sizeof(buf)) {
		want = sizeof(buf);
	}
	*done = 0;
	if (ms_pread_full(mf->fd, buf, want, off, &got, &e) != MS_OK) {
		return wf_fail(mf, "read", mf->path, e, MS_E_IO);
	}
	if (ms_write_full(a->fd, buf, got, &e) != MS_OK) {
		return wf_fail(mf, "write", target, e, MS_E_IO);
	}
	*done = got;
	return MS_OK;
}

/*
 * Exactly @size bytes from offset 0 of the open module (not its path),
 * the bytes it had at open if it did not change. copy_file_range() lets
 * the file system share or copy blocks in the kernel; EXDEV, ENOSYS,
 * EINVAL and EOPNOTSUPP mean it cannot here, so we fall back.
 */
static ms_err
copy_module(struct ms_modfile *mf, struct ms_atomic *a, const char *target, uint64_t size)
{
	uint64_t pos = 0;
	bool use_cfr = true;
	ms_err err = MS_E_INTERNAL;

	while (pos < size) {
		size_t want = size - pos > COPY_CHUNK ? COPY_CHUNK : (size_t)(size - pos);
		size_t done = 0;

		if (use_cfr) {
			off64_t in_off = (off64_t)pos;
			ssize_t r = copy_file_range(mf->fd, &in_off, a->fd, NULL, want, 0);

			if (r < 0 && errno == EINTR) {
				continue;
			}
			if (r < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL ||
				      errno == EOPNOTSUPP)) {
				use_cfr = false;
				continue;
			}
			if (r < 0) {
				return wf_fail(mf, "copy_file_range", target, errno, MS_E_IO);
			}
			done = (size_t)r;
		} else {
			err = copy_bounce(mf, a, target, pos, want, &done);
			if (err != MS_OK) {
				return err;
			}
		}
		if (done == 0) {
			/* End of file before the size seen at open. */
			return wf_fail(mf, "read", mf->path, 0, MS_E_CHANGED);
		}
		pos += done;
	}
	return MS_OK;
}

static bool
same_time(const struct timespec *x, const struct timespec *y)
{
	return x->tv_sec == y->tv_sec && x->tv_nsec == y->tv_nsec;
}

/*
 * Last look before the rename: the open module still has the size and
 * times it had at open (ctime too, which a write followed by utimensat()
 * cannot restore), and in place, the path still names that module.
 */
static ms_err
check_unchanged(struct ms_modfile *mf, struct ms_atomic *a, bool in_place)
{
	struct stat now;

	if (fstat(mf->fd, &now) != 0) {
		return wf_fail(mf, "fstat", mf->path, errno, MS_E_IO);
	}
	if (now.st_size != mf->st.st_size || !same_time(&now.st_mtim, &mf->st.st_mtim) ||
	    !same_time(&now.st_ctim, &mf->st.st_ctim)) {
		return wf_fail(mf, "fstat", mf->path, 0, MS_E_CHANGED);
	}
	if (!in_place) {
		return MS_OK;
	}
	if (fstatat(a->dir_fd, a->base, &now, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT) {
			return wf_fail(mf, "lstat", mf->path, 0, MS_E_CHANGED);
		}
		return wf_fail(mf, "lstat", mf->path, errno, MS_E_IO);
	}
	if (now.st_dev != mf->st.st_dev || now.st_ino != mf->st.st_ino) {
		return wf_fail(mf, "lstat", mf->path, 0, MS_E_CHANGED);
	}
	return MS_OK;
}

/* Copy the first failure of the atomic writer into @mf. */
static ms_err
take_atomic_fail(struct ms_modfile *mf, const struct ms_atomic *a, const char *target,
		 ms_err err)
{
	mf->file_type = a->file_type;
	return wf_fail(mf, a->op != NULL ? a->op : "write", target, a->sys_errno, err);
}

ms_err
ms_modfile_write_parts(struct ms_modfile *mf, const char *dest, uint64_t prefix_len,
		       const struct ms_span *tail, size_t n_tail, enum ms_write_mode mode)
{
	ms_err err = MS_E_INTERNAL;
	struct ms_atomic a = MS_ATOMIC_INIT;
	const char *target = NULL;
	bool in_place = dest == NULL;
	uint64_t total = 0;
	size_t i;

	if (mf == NULL) {
		return MS_E_ARG;
	}
	target = in_place ? mf->path : dest;
	/*
	 * len <= MS_MOD_SIZE_MAX was checked at open; an empty prefix only of an
	 * empty module (MS_MODFILE_EMPTY_OK), which sign-file signs.
	 */
	if (mf->fd < 0 || target == NULL || (prefix_len == 0 && mf->len != 0) ||
	    prefix_len > mf->len || (tail == NULL && n_tail != 0)) {
		err = wf_fail(mf, "write", target, EINVAL, MS_E_ARG);
		goto out;
	}
	/* The copy is in the module's container: a name that says another is refused. */
	if (!in_place && ms_mod_zfmt_of_name(dest) != mf->zfmt) {
		err = wf_fail(mf, "write", target, 0, MS_E_ARG);
		mf->why = ms_modfile_zmismatch(ms_mod_zfmt_of_name(dest), mf->zfmt);
		goto out;
	}
	/*
	 * What finit_module(2) and our own readers take (of the module's own
	 * bytes, before any compression): refused before anything is written.
	 */
	total = prefix_len;
	for (i = 0; i < n_tail; i++) {
		/* total <= MS_MOD_SIZE_MAX here: the sum cannot wrap. */
		if ((uint64_t)tail[i].len > MS_MOD_SIZE_MAX - total) {
			err = wf_fail(mf, "write", target, EFBIG, MS_E_ARG);
			goto out;
		}
		total += tail[i].len;
	}
	a.dir_sync_later = mode == MS_WRITE_REPLACE_DIR_SYNC_LATER;
	a.tmps = mf->tmps;
	err = ms_atomic_begin(&a, target);
	if (err != MS_OK) {
		err = take_atomic_fail(mf, &a, target, err);
		goto out;
	}
	err = set_owner_mode(mf, &a, target, in_place);
	if (err != MS_OK) {
		goto out;
	}
	if (mf->zfmt != MS_ZFMT_NONE) {
		err = ms_modfile_zwrite(mf, &a, prefix_len, tail, n_tail);
	} else {
		err = copy_module(mf, &a, target, prefix_len);
		if (err != MS_OK) {
			goto out;
		}
		for (i = 0; i < n_tail && err == MS_OK; i++) {
			err = ms_atomic_write(&a, tail[i].p, tail[i].len);
		}
	}
	if (err == MS_OK) {
		err = ms_atomic_sync(&a);
	}
	if (err != MS_OK) {
		err = take_atomic_fail(mf, &a, target, err);
		goto out;
	}
	err = check_unchanged(mf, &a, in_place);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_atomic_rename(&a);
	if (err != MS_OK) {
		err = take_atomic_fail(mf, &a, target, err);
		goto out;
	}
	mf->op = NULL;
	mf->err_path = NULL;
	mf->sys_errno = 0;
out:
	ms_atomic_abort(&a);	/* removes the temp file unless renamed */
	return err;
}

ms_err
ms_modfile_write_signed_prefix(struct ms_modfile *mf, const char *dest, uint64_t prefix_len,
			       const uint8_t *cms, size_t cms_len, enum ms_write_mode mode)
{
	uint8_t trailer[MS_MOD_TRAILER_LEN];
	size_t trailer_len = 0;
	struct ms_span parts[2];
	ms_err err;

	if (mf == NULL) {
		return MS_E_ARG;
	}
	if (cms == NULL || cms_len == 0 || cms_len > UINT32_MAX ||
	    (mode != MS_WRITE_REPLACE && mode != MS_WRITE_REPLACE_DIR_SYNC_LATER)) {
		return wf_fail(mf, "write", dest != NULL ? dest : mf->path, EINVAL, MS_E_ARG);
	}
	err = ms_mod_trailer_build((uint32_t)cms_len, trailer, sizeof(trailer), &trailer_len);
	if (err != MS_OK) {
		return err;
	}
	parts[0].p = cms;
	parts[0].len = cms_len;
	parts[1].p = trailer;
	parts[1].len = trailer_len;
	return ms_modfile_write_parts(mf, dest, prefix_len, parts, 2, mode);
}

ms_err
ms_modfile_write_signed(struct ms_modfile *mf, const char *dest, const uint8_t *cms,
			size_t cms_len, enum ms_write_mode mode)
{
	if (mf == NULL) {
		return MS_E_ARG;
	}
	if (mf->fd < 0) {
		return wf_fail(mf, "write", dest != NULL ? dest : mf->path, EINVAL, MS_E_ARG);
	}
	return ms_modfile_write_signed_prefix(mf, dest, mf->len, cms, cms_len, mode);
}
