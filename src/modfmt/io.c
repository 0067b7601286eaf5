// SPDX-License-Identifier: GPL-2.0-only
/* Reads and writes that retry after EINTR and continue after short transfers. */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "modfmt_internal.h"

/* Below SSIZE_MAX and Linux's 0x7ffff000 per-call limit alike. */
#define IO_CHUNK ((size_t)1 << 30)

ms_err
ms_pread_full(int fd, uint8_t *buf, size_t len, uint64_t off, size_t *got, int *sys_errno)
{
	size_t done = 0;

	*got = 0;
	*sys_errno = 0;
	while (done < len) {
		size_t want = len - done;
		uint64_t pos = off + done;
		off_t o = (off_t)pos;
		ssize_t r;

		/* The position must survive the conversion to off_t. */
		if (pos < off || o < 0 || (uint64_t)o != pos) {
			*sys_errno = EOVERFLOW;
			return MS_E_IO;
		}
		if (want > IO_CHUNK) {
			want = IO_CHUNK;
		}
		r = pread(fd, buf + done, want, o);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			*sys_errno = errno;
			return MS_E_IO;
		}
		if (r == 0) {
			break;	/* end of file */
		}
		done += (size_t)r;
	}
	*got = done;
	return MS_OK;
}

ms_err
ms_write_full(int fd, const uint8_t *p, size_t len, int *sys_errno)
{
	size_t done = 0;

	*sys_errno = 0;
	while (done < len) {
		size_t want = len - done;
		ssize_t r;

		if (want > IO_CHUNK) {
			want = IO_CHUNK;
		}
		r = write(fd, p + done, want);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			*sys_errno = errno;
			return MS_E_IO;
		}
		if (r == 0) {
			/* No progress and no errno: do not loop forever. */
			*sys_errno = EIO;
			return MS_E_IO;
		}
		done += (size_t)r;
	}
	return MS_OK;
}
