/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the command line gives the application layer (sink.c): a sink that
 * prints its lines as messages and a PIN provider over the URI,
 * KBUILD_SIGN_PIN and the terminal.
 */
#ifndef MS_CLI_SINK_H
#define MS_CLI_SINK_H

#include "../app/app.h"

/* ms_cli_sink() - the lines of src/app as "modsign: ..." on stderr (msg.c). */
const struct ms_app_sink *ms_cli_sink(void);

/*
 * ms_cli_pins() - PINs as ms_cli_pin_get() finds them; with
 * MS_APP_PIN_NO_PROMPT only from the URI or KBUILD_SIGN_PIN, with
 * MS_APP_PIN_PROMPT_ONLY only from a terminal on stdin.
 */
const struct ms_app_pins *ms_cli_pins(void);

#endif
