// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/common: error texts, wiping and the span reader. */
#include <stdint.h>
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

MS_TEST(common_span_reads_in_order)
{
	static const uint8_t b[] = { 0x81, 0x01, 0x02, 0xfe, 0xdc, 0xba, 0x98, 0x7f, 0x00, 0xaa };
	struct ms_span s = { b, sizeof(b) };
	struct ms_span sub = { NULL, 0 };
	uint8_t u8 = 0;
	uint16_t u16 = 0;
	uint32_t u32 = 0;

	CHECK_ERR(ms_span_get_u8(&s, &u8), MS_OK);
	CHECK_EQ(u8, 0x81);
	CHECK(s.p == b + 1 && s.len == 9);
	CHECK_ERR(ms_span_get_be16(&s, &u16), MS_OK);
	CHECK_EQ(u16, 0x0102);
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK_EQ(u32, 0xfedcba98u);
	CHECK(s.p == b + 7 && s.len == 3);
	CHECK_ERR(ms_span_take(&s, 2, &sub), MS_OK);
	CHECK(sub.p == b + 7 && sub.len == 2);
	CHECK(s.p == b + 9 && s.len == 1);
	CHECK_ERR(ms_span_take(&s, 0, &sub), MS_OK);
	CHECK(sub.p == b + 9 && sub.len == 0 && s.len == 1);
	CHECK_ERR(ms_span_get_u8(&s, &u8), MS_OK);
	CHECK_EQ(u8, 0xaa);
	CHECK(s.len == 0);
	CHECK_ERR(ms_span_take(&s, 0, &sub), MS_OK);
	CHECK_ERR(ms_span_get_u8(&s, &u8), MS_E_MALFORMED);
}

MS_TEST(common_span_be_extremes)
{
	static const uint8_t ff[] = { 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[] = { 0, 0, 0, 0 };
	static const uint8_t top[] = { 0x80, 0, 0, 1 };
	struct ms_span s;
	uint16_t u16 = 1;
	uint32_t u32 = 1;

	s = (struct ms_span){ ff, 4 };
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK(u32 == 0xffffffffu);
	s = (struct ms_span){ ff, 4 };
	CHECK_ERR(ms_span_get_be16(&s, &u16), MS_OK);
	CHECK_EQ(u16, 0xffff);
	s = (struct ms_span){ zero, 4 };
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK_EQ(u32, 0);
	s = (struct ms_span){ top, 4 };
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK(u32 == 0x80000001u);
}

/* Every read of n bytes from every shorter span: MS_E_MALFORMED, nothing consumed or written. */
MS_TEST(common_span_short_input_unchanged)
{
	static const uint8_t b[] = { 1, 2, 3, 4 };
	static const uint8_t guard[] = { 0xa5, 0xa5, 0xa5, 0xa5 };

	for (size_t len = 0; len < 4; len++) {
		struct ms_span s = { b, len };
		struct ms_span sub = { guard, 4 };
		uint8_t u8 = 0xa5;
		uint16_t u16 = 0xa5a5;
		uint32_t u32 = 0xa5a5a5a5u;

		CHECK_ERR(ms_span_get_be32(&s, &u32), MS_E_MALFORMED);
		CHECK(u32 == 0xa5a5a5a5u);
		if (len < 2) {
			CHECK_ERR(ms_span_get_be16(&s, &u16), MS_E_MALFORMED);
			CHECK_EQ(u16, 0xa5a5);
		}
		if (len < 1) {
			CHECK_ERR(ms_span_get_u8(&s, &u8), MS_E_MALFORMED);
			CHECK_EQ(u8, 0xa5);
		}
		CHECK_ERR(ms_span_take(&s, len + 1, &sub), MS_E_MALFORMED);
		CHECK_ERR(ms_span_take(&s, SIZE_MAX, &sub), MS_E_MALFORMED);
		CHECK(sub.p == guard && sub.len == 4);
		CHECK(s.p == b && s.len == len);
	}
}

MS_TEST(common_span_bad_args)
{
	static const uint8_t b[] = { 1, 2, 3, 4 };
	struct ms_span s = { b, sizeof(b) };
	struct ms_span sub;
	uint8_t u8 = 0;
	uint16_t u16 = 0;
	uint32_t u32 = 0;

	CHECK_ERR(ms_span_take(NULL, 1, &sub), MS_E_ARG);
	CHECK_ERR(ms_span_take(&s, 1, NULL), MS_E_ARG);
	CHECK_ERR(ms_span_get_u8(NULL, &u8), MS_E_ARG);
	CHECK_ERR(ms_span_get_u8(&s, NULL), MS_E_ARG);
	CHECK_ERR(ms_span_get_be16(NULL, &u16), MS_E_ARG);
	CHECK_ERR(ms_span_get_be16(&s, NULL), MS_E_ARG);
	CHECK_ERR(ms_span_get_be32(NULL, &u32), MS_E_ARG);
	CHECK_ERR(ms_span_get_be32(&s, NULL), MS_E_ARG);
	CHECK(s.p == b && s.len == sizeof(b));
}
