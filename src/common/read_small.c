// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading a whole small file (certificate, key, raw signature, PIN file)
 * with read(2) into one buffer, wiped before it is freed on failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ms_common.h"

static ms_err
rs_fail(struct ms_file_fail *f, const char *op, int e, ms_err err)
{
	f->op = op;
	f->sys_errno = e;
	return err;
}

/* Read up to @cap bytes until end of file; *@got is how many came. */
static ms_err
read_all(int fd, uint8_t *buf, size_t cap, size_t *got, struct ms_file_fail *f)
{
	size_t done = 0;

	while (done < cap) {
		ssize_t r = read(fd, buf + done, cap - done);

		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			return rs_fail(f, "read", errno, MS_E_IO);
		}
		if (r == 0) {
			break;
		}
		done += (size_t)r;
	}
	*got = done;
	return MS_OK;
}

/*
 * The buffer has one byte more than the file, which both detects a file
 * that grew since fstat (MS_E_CHANGED, never a silent truncation) and
 * holds the terminating NUL for text parsers. The caller owns *@out and
 * wipes it if it holds a secret.
 */
ms_err
ms_file_read_small(const char *path, size_t max, uint8_t **out, size_t *out_len,
		   struct ms_file_fail *fail)
{
	ms_err err = MS_E_INTERNAL;
	struct ms_file_fail ignored = { NULL, 0, 0 };
	struct ms_file_fail *f = fail != NULL ? fail : &ignored;
	struct stat st;
	int fd = -1;
	uint8_t *buf = NULL;
	size_t len = 0;
	size_t got = 0;

	f->op = NULL;
	f->sys_errno = 0;
	f->file_type = 0;
	if (path == NULL || out == NULL || out_len == NULL) {
		return rs_fail(f, "open", EINVAL, MS_E_ARG);
	}
	*out = NULL;
	*out_len = 0;
	/* O_NONBLOCK: opening a FIFO must not hang; no effect on regular files. */
	do {
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		err = rs_fail(f, "open", errno, MS_E_IO);
		goto out;
	}
	if (fstat(fd, &st) != 0) {
		err = rs_fail(f, "fstat", errno, MS_E_IO);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		f->file_type = st.st_mode & S_IFMT;
		err = rs_fail(f, "open", S_ISDIR(st.st_mode) ? EISDIR : EINVAL, MS_E_ARG);
		goto out;
	}
	if (st.st_size < 0) {
		err = rs_fail(f, "open", EINVAL, MS_E_ARG);
		goto out;
	}
	/* Also keeps len + 1 from wrapping. */
	if ((uint64_t)st.st_size > (uint64_t)max || (uint64_t)st.st_size >= (uint64_t)SIZE_MAX) {
		err = rs_fail(f, "read", EFBIG, MS_E_ARG);
		goto out;
	}
	len = (size_t)st.st_size;
	buf = malloc(len + 1);
	if (buf == NULL) {
		err = rs_fail(f, "malloc", ENOMEM, MS_E_NOMEM);
		goto out;
	}
	err = read_all(fd, buf, len + 1, &got, f);
	if (err != MS_OK) {
		goto out;
	}
	if (got != len) {
		err = rs_fail(f, "read", 0, MS_E_CHANGED);
		goto out;
	}
	buf[len] = 0;
	*out = buf;
	*out_len = len;
	buf = NULL;
	err = MS_OK;
out:
	if (buf != NULL) {
		ms_wipe(buf, len + 1);
		free(buf);
	}
	if (fd >= 0) {
		(void)close(fd);
	}
	return err;
}

const char *
ms_file_kind(mode_t type)
{
	switch (type & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO (named pipe)";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

void
ms_file_fail_why(const struct ms_file_fail *f, ms_err err, char *out, size_t cap)
{
	if (err == MS_E_ARG && f->file_type != 0) {
		snprintf(out, cap, "is %s, not a regular file", ms_file_kind(f->file_type));
	} else if (err == MS_E_CHANGED) {
		snprintf(out, cap, "changed while being read");
	} else if (f->sys_errno != 0) {
		snprintf(out, cap, "%s: %s", f->op != NULL ? f->op : "read",
			 strerror(f->sys_errno));
	} else {
		snprintf(out, cap, "%s%s%s", f->op != NULL ? f->op : "",
			 f->op != NULL ? ": " : "", ms_err_str(err));
	}
}
