// SPDX-License-Identifier: GPL-2.0-only
/* Wiping secrets so that no copy of a PIN or key outlives its use. */
#include <string.h>

#include "ms_common.h"

void
ms_wipe(void *p, size_t len)
{
	if (p == NULL || len == 0) {
		return;
	}
	/* explicit_bzero (glibc 2.25+) is never optimised away. */
	explicit_bzero(p, len);
}

void
ms_pin_clear(struct ms_pin *pin)
{
	if (pin == NULL) {
		return;
	}
	ms_wipe(pin->buf, sizeof(pin->buf));
	pin->len = 0;
	pin->source = NULL;
	pin->is_set = false;
}
