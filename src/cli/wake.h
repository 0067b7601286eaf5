/* SPDX-License-Identifier: GPL-2.0-only */
/* The self-pipe that wakes a poll(2) loop (wake.c). */
#ifndef MS_CLI_WAKE_H
#define MS_CLI_WAKE_H

#include "../common/ms_common.h"

/*
 * The self-pipe that wakes a poll(2) loop (wake.c): a signal handler
 * or another thread writes a byte to fds[1], the loop polls fds[0].
 * ms_cli_wake_init() - a non-blocking, close-on-exec pipe in @fds.
 * Return: MS_OK; MS_E_IO with errno (@fds both -1).
 * ms_cli_wake_arm() - the write end ms_cli_wake_signal() writes to (-1: none).
 * ms_cli_wake_write() - one byte to @fd (-1: nothing); a full pipe is a
 * wake-up already waiting. Async-signal-safe, keeps errno.
 * ms_cli_wake_signal() - ms_cli_wake_write() to the armed end, from a
 * signal handler.
 * ms_cli_wake_close() - disarm (if armed), close both ends, both -1 (fds[0]
 * -1: nothing to do).
 */
ms_err ms_cli_wake_init(int fds[2]) MS_MUST_CHECK;
void ms_cli_wake_arm(int fd);
void ms_cli_wake_write(int fd);
void ms_cli_wake_signal(void);
void ms_cli_wake_close(int fds[2]);

#endif
