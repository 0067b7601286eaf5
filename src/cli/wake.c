// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line's signal handlers wake a poll(2) loop (the signing
 * run's main thread, the agent's server) through the self-pipe of
 * src/app/wake.c: the handler writes one byte to the end armed here.
 */
#include <signal.h>

#include "wake.h"

/* The write end signal handlers write to; -1: none. */
static volatile sig_atomic_t armed_fd = -1;

void
ms_cli_wake_arm(int fd)
{
	armed_fd = fd;
}

void
ms_cli_wake_signal(void)
{
	ms_app_wake_write(armed_fd);
}

void
ms_cli_wake_close(int fds[2])
{
	/* A late signal then writes nowhere, not to a descriptor reused meanwhile. */
	if (fds[0] >= 0 && armed_fd == fds[1]) {
		armed_fd = -1;
	}
	ms_app_wake_close(fds);
}
