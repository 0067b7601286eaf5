// SPDX-License-Identifier: GPL-2.0-only
/* The message of a failed token step, worded by src/app, printed here. */
#include "../app/app.h"
#include "p11msg.h"
#include "sink.h"

void
ms_cli_p11_error(const char *role, const struct ms_p11 *p11, ms_err err)
{
	ms_app_p11_error(ms_cli_sink(), role, p11, err);
}
