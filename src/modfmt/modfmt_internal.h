/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internals of src/modfmt shared by its files and its unit tests: the
 * temp-file-and-rename writer and the retrying read/write helpers.
 */
#ifndef MS_MODFMT_INTERNAL_H
#define MS_MODFMT_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "modfmt.h"

/* The temp file suffix: ".<basename>.modsign-<pid>-<16 hex>.tmp". */
#define MS_TMP_TAG ".modsign-"

/*
 * One replacement in progress: the target's directory stays open so that
 * the temp file, the checks on the target and the rename all happen in the
 * same directory even if its path is renamed meanwhile. @op and
 * @sys_errno describe the first failure.
 */
struct ms_atomic {
	int dir_fd;		/* the target's directory, -1 when closed */
	int fd;			/* the temp file, -1 when closed */
	const char *base;	/* the target's last component (in the caller's path) */
	bool dir_sync_later;	/* the caller fsyncs the directory (ms_dir_sync()) */
	struct ms_tmp_set *tmps;	/* the run's temp files, or NULL */
	char tmp_name[NAME_MAX + 1];	/* temp file name inside dir_fd, "" when none */
	const char *op;
	int sys_errno;
	mode_t file_type;	/* S_IFMT of a target refused for its type */
};

#define MS_ATOMIC_INIT { .dir_fd = -1, .fd = -1 }

/**
 * ms_atomic_begin() - open the directory of @target, refuse an existing
 * @target that is a symlink (MS_E_ARG, ELOOP), a directory (EISDIR) or
 * not a regular file (EINVAL), then create the temp file with O_EXCL and
 * mode 0600.
 * @target must outlive @a. @a must be MS_ATOMIC_INIT.
 * Return: MS_OK, MS_E_ARG, MS_E_IO. On failure nothing is left on disk.
 */
ms_err ms_atomic_begin(struct ms_atomic *a, const char *target) MS_MUST_CHECK;

/** ms_atomic_write() - all @len bytes to the temp file. Return: MS_OK, MS_E_IO. */
ms_err ms_atomic_write(struct ms_atomic *a, const uint8_t *p, size_t len) MS_MUST_CHECK;

/** ms_atomic_sync() - fsync and close the temp file. Return: MS_OK, MS_E_IO. */
ms_err ms_atomic_sync(struct ms_atomic *a) MS_MUST_CHECK;

/**
 * ms_atomic_rename() - rename the synced temp file over the target, then
 * fsync the directory. A failing directory fsync is reported although the
 * target has already been replaced (completely: the rename is atomic).
 * Return: MS_OK, MS_E_IO.
 */
ms_err ms_atomic_rename(struct ms_atomic *a) MS_MUST_CHECK;

/** ms_atomic_abort() - close everything, unlink a temp file still there. Idempotent. */
void ms_atomic_abort(struct ms_atomic *a);

/**
 * ms_modfile_write_parts() - the first @prefix_len bytes of the open module
 * (0 < @prefix_len <= its size at open; 0 for an empty module), then the
 * @n_tail spans of @tail, to @dest or in place when @dest is NULL, with every
 * guarantee of ms_modfile_write_signed(). Used to sign and to strip a
 * signature. A result larger than MS_MOD_SIZE_MAX is refused before
 * anything is written (MS_E_ARG, EFBIG).
 * Return: MS_OK, MS_E_IO, MS_E_ARG, MS_E_CHANGED.
 */
ms_err ms_modfile_write_parts(struct ms_modfile *mf, const char *dest, uint64_t prefix_len,
			      const struct ms_span *tail, size_t n_tail,
			      enum ms_write_mode mode) MS_MUST_CHECK;

/**
 * ms_pread_full() - @len bytes at @off (EINTR and short reads handled);
 * *@got < @len only at end of file.
 * Return: MS_OK, MS_E_IO (errno in *@sys_errno).
 */
ms_err ms_pread_full(int fd, uint8_t *buf, size_t len, uint64_t off, size_t *got,
		     int *sys_errno) MS_MUST_CHECK;

/** ms_write_full() - all @len bytes (EINTR and short writes handled). */
ms_err ms_write_full(int fd, const uint8_t *p, size_t len, int *sys_errno) MS_MUST_CHECK;

/*
 * zmodfile.c: the container layer under the module reader and writer.
 * ms_modfile_zopen() - after the checks of open (regular, 0 < size <=
 * MS_MOD_SIZE_MAX), judge @mf's name and magic and decode a compressed
 * module; sets @mf->len, @mf->zfmt, @mf->zimg.
 * ms_modfile_pread() - @len module bytes at @off, from the decoded image
 * or the file; *@got < @len only at the module's end.
 * ms_modfile_zwrite() - the first @prefix_len module bytes and @tail into
 * the temp file of @a, compressed as @mf is.
 */
ms_err ms_modfile_zopen(struct ms_modfile *mf) MS_MUST_CHECK;
ms_err ms_modfile_pread(struct ms_modfile *mf, uint8_t *buf, size_t len, uint64_t off,
			size_t *got, int *sys_errno) MS_MUST_CHECK;
ms_err ms_modfile_zwrite(struct ms_modfile *mf, struct ms_atomic *a, uint64_t prefix_len,
			 const struct ms_span *tail, size_t n_tail) MS_MUST_CHECK;
/* Static text: a name that says @by_name on a module whose content is @content. */
const char *ms_modfile_zmismatch(enum ms_zfmt by_name, enum ms_zfmt content);

/*
 * tmpset.c: the temp file @name in @dir_fd created (openat with @flags, mode
 * 0600), renamed over @target, or removed, each entering or leaving @set
 * under its lock (@set NULL: plain openat, renameat, unlinkat). Once the set
 * is closed, create and rename fail with ECANCELED and remove does nothing
 * (ms_tmp_set_close() removed the file). Create returns the descriptor or -1,
 * rename 0 or -1, with errno.
 */
int ms_tmp_set_create(struct ms_tmp_set *set, int dir_fd, const char *name, int flags);
int ms_tmp_set_rename(struct ms_tmp_set *set, int dir_fd, const char *name, const char *target);
void ms_tmp_set_remove(struct ms_tmp_set *set, int dir_fd, const char *name);

#endif
