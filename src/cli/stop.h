/* SPDX-License-Identifier: GPL-2.0-only */
/* SIGINT, SIGTERM and SIGHUP noted for a signing run (stop.c). */
#ifndef MS_CLI_STOP_H
#define MS_CLI_STOP_H

#include "../app/app.h"

/*
 * ms_cli_stop_catch() - from now on SIGINT, SIGTERM and SIGHUP only note
 * themselves in the returned stop (and wake its fd), for ms_app_run().
 * Return: the stop; NULL when no pipe could be made (nothing changed).
 * ms_cli_stop_release() - the handlers before ms_cli_stop_catch() again,
 * the pipe closed. Its signal number stays for the caller to end by.
 */
const struct ms_app_stop *ms_cli_stop_catch(void);
void ms_cli_stop_release(void);

#endif
