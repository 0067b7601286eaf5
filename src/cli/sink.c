// SPDX-License-Identifier: GPL-2.0-only
/* The command line's side of the application layer: its printer and its PIN sources. */
#include <stdlib.h>
#include <unistd.h>

#include "msg.h"
#include "pin.h"
#include "sink.h"

static void
say(void *ctx, enum ms_app_say_kind kind, const char *text, const char *detail)
{
	(void)ctx;
	if (kind == MS_APP_SAY_WARN) {
		ms_cli_warn("%s", text);
	} else if (kind == MS_APP_SAY_LINE) {
		ms_cli_line(stderr, "%s", text);
	} else {
		ms_cli_error_detail(detail, "%s", text);
	}
}

static const struct ms_app_sink cli_sink = { say, NULL, NULL };

const struct ms_app_sink *
ms_cli_sink(void)
{
	return &cli_sink;
}

static ms_err
pin_get(void *ctx, const struct ms_app_pin_ask *ask, struct ms_pin *pin)
{
	bool has_quiet_source = ask->uri_value != NULL || ask->uri_source != NULL ||
				getenv("KBUILD_SIGN_PIN") != NULL;

	(void)ctx;
	if ((ask->flags & MS_APP_PIN_NO_PROMPT) != 0 && !has_quiet_source) {
		return MS_E_NOTFOUND;
	}
	if ((ask->flags & MS_APP_PIN_PROMPT_ONLY) != 0 &&
	    (has_quiet_source || !isatty(STDIN_FILENO))) {
		return MS_E_NOTFOUND;
	}
	return ms_cli_pin_get(ask->uri_value, ask->uri_source, ask->what, pin);
}

static const struct ms_app_pins cli_pins = { pin_get, NULL };

const struct ms_app_pins *
ms_cli_pins(void)
{
	return &cli_pins;
}
