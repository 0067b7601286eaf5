// SPDX-License-Identifier: GPL-2.0-only
/*
 * The self-pipe that wakes a poll(2) loop (the signing run's main thread,
 * the agent's server): a signal handler or a thread writes one byte, the
 * loop drains the pipe and looks at what changed.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "wake.h"

/* The write end signal handlers write to; -1: none. */
static volatile sig_atomic_t armed_fd = -1;

ms_err
ms_cli_wake_init(int fds[2])
{
	/* Non-blocking: a full pipe means a wake-up is waiting already. */
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
		fds[0] = fds[1] = -1;
		return MS_E_IO;
	}
	return MS_OK;
}

void
ms_cli_wake_arm(int fd)
{
	armed_fd = fd;
}

void
ms_cli_wake_write(int fd)
{
	int saved = errno;

	if (fd >= 0 && write(fd, "w", 1) < 0) {
		/* full: the loop has a wake-up to read already */
	}
	errno = saved;
}

void
ms_cli_wake_signal(void)
{
	ms_cli_wake_write(armed_fd);
}

void
ms_cli_wake_close(int fds[2])
{
	if (fds[0] < 0) {
		return;
	}
	/* A late signal then writes nowhere, not to a descriptor reused meanwhile. */
	if (armed_fd == fds[1]) {
		armed_fd = -1;
	}
	close(fds[0]);
	close(fds[1]);
	fds[0] = fds[1] = -1;
}
