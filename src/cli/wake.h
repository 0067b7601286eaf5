/* SPDX-License-Identifier: GPL-2.0-only */
/* Signal handlers waking a poll(2) loop through src/app's self-pipe (wake.c). */
#ifndef MS_CLI_WAKE_H
#define MS_CLI_WAKE_H

#include "../app/app.h"

/*
 * ms_cli_wake_arm() - the write end ms_cli_wake_signal() writes to (-1: none).
 * ms_cli_wake_signal() - ms_app_wake_write() to the armed end, from a
 * signal handler.
 * ms_cli_wake_close() - disarm (if armed), then ms_app_wake_close().
 */
void ms_cli_wake_arm(int fd);
void ms_cli_wake_signal(void);
void ms_cli_wake_close(int fds[2]);

#endif
