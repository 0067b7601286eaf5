// SPDX-License-Identifier: GPL-2.0-only
/*
 * The self-pipe that wakes a poll(2) loop (the signing run's main thread;
 * the command line's signal handlers and the agent's server through
 * src/cli/wake.c): a thread or a signal handler writes one byte, the loop
 * drains the pipe and looks at what changed.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "app_internal.h"

ms_err
ms_app_wake_init(int fds[2])
{
	/* Non-blocking: a full pipe means a wake-up is waiting already. */
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
		fds[0] = fds[1] = -1;
		return MS_E_IO;
	}
	return MS_OK;
}

void
ms_app_wake_write(int fd)
{
	int saved = errno;

	if (fd >= 0 && write(fd, "w", 1) < 0) {
		/* full: the loop has a wake-up to read already */
	}
	errno = saved;
}

void
ms_app_wake_close(int fds[2])
{
	if (fds[0] < 0) {
		return;
	}
	close(fds[0]);
	close(fds[1]);
	fds[0] = fds[1] = -1;
}
