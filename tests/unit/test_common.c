// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/common: error texts and wiping. */
#include <string.h>

#include "../../src/common/ms_common.h"
#include "test.h"

MS_TEST(common_err_str_every_code)
{
	for (int e = MS_OK; e <= MS_E_CHANGED; e++) {
		const char *s = ms_err_str((ms_err)e);

		CHECK(s != NULL);
		CHECK(strcmp(s, "unknown error") != 0);
	}
	CHECK(strcmp(ms_err_str((ms_err)999), "unknown error") == 0);
}

MS_TEST(common_pin_clear_wipes)
{
	struct ms_pin pin = { .len = 4, .source = "terminal", .is_set = true };

	memcpy(pin.buf, "1234", 5);
	ms_pin_clear(&pin);
	for (size_t i = 0; i < sizeof(pin.buf); i++) {
		CHECK(pin.buf[i] == 0);
	}
	CHECK(pin.len == 0 && pin.source == NULL && !pin.is_set);
	ms_pin_clear(&pin);
	ms_pin_clear(NULL);
}
