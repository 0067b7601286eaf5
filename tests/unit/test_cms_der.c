// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/cms/der.c and der_parse.c: the DER writer and reader. */
#include <string.h>

#include "test.h"
#include "test_cms.h"

static void
header_kat(size_t len, const char *hex)
{
	uint8_t want[16], buf[16];
	size_t n = ms_test_hex(hex, want, sizeof(want));
	struct ms_der_out o;

	CHECK(ms_der_header_size(len) == n);
	CHECK(ms_der_tlv_size(len) == n + len);
	ms_der_out_init(&o, buf, sizeof(buf));
	ms_der_header(&o, DER_SEQUENCE, len);
	CHECK_ERR(o.err, MS_OK);
	CHECK(o.len == n);
	CHECK_EQ_BYTES(buf, want, n);
}

MS_TEST(cms_der_header_lengths)
{
	header_kat(0, "30 00");
	header_kat(1, "30 01");
	header_kat(127, "30 7f");
	header_kat(128, "30 81 80");
	header_kat(255, "30 81 ff");
	header_kat(256, "30 82 01 00");
	header_kat(0x1a8, "30 82 01 a8");
	header_kat(65535, "30 82 ff ff");
	header_kat(65536, "30 83 01 00 00");
	header_kat(0xffffffffu, "30 84 ff ff ff ff");
}

MS_TEST(cms_der_header_refuses_high_tag)
{
	uint8_t buf[8];
	struct ms_der_out o;

	ms_der_out_init(&o, buf, sizeof(buf));
	ms_der_header(&o, 0x1f, 1);
	CHECK_ERR(o.err, MS_E_INTERNAL);
	CHECK(o.len == 0);
}

MS_TEST(cms_der_small_int)
{
	uint8_t buf[16], want[16];
	size_t n = ms_test_hex("02 01 00 02 01 01 02 01 03 02 01 7f", want, sizeof(want));
	struct ms_der_out o;

	ms_der_out_init(&o, buf, sizeof(buf));
	ms_der_small_int(&o, 0);
	ms_der_small_int(&o, 1);
	ms_der_small_int(&o, 3);
	ms_der_small_int(&o, 127);
	CHECK(o.err == MS_OK && o.len == n);
	CHECK_EQ_BYTES(buf, want, n);
	ms_der_small_int(&o, 128);
	CHECK_ERR(o.err, MS_E_INTERNAL);
	CHECK(o.len == n);
}

static void
uint_kat(const char *in_hex, const char *want_hex)
{
	uint8_t in[80], want[80], buf[80];
	size_t in_len = ms_test_hex(in_hex, in, sizeof(in));
	size_t want_len = ms_test_hex(want_hex, want, sizeof(want));
	struct ms_der_out o;

	CHECK(ms_der_tlv_size(ms_der_uint_body_size(in, in_len)) == want_len);
	ms_der_out_init(&o, buf, sizeof(buf));
	ms_der_uint(&o, in, in_len);
	CHECK(o.err == MS_OK && o.len == want_len);
	CHECK_EQ_BYTES(buf, want, want_len);
}

MS_TEST(cms_der_uint_minimal)
{
	uint_kat("01", "02 01 01");
	uint_kat("7f", "02 01 7f");
	uint_kat("80", "02 02 00 80");
	uint_kat("00 00 80", "02 02 00 80");
	uint_kat("00 00 7f ff", "02 02 7f ff");
	uint_kat("ff ff", "02 03 00 ff ff");
	uint_kat("00 01 00", "02 02 01 00");
	uint_kat("00", "02 01 00");
	uint_kat("00 00 00", "02 01 00");
}

MS_TEST(cms_der_writer_sticky_nospace)
{
	uint8_t buf[4];
	const uint8_t five[5] = { 1, 2, 3, 4, 5 };
	struct ms_der_out o;

	memset(buf, 0xee, sizeof(buf));
	ms_der_out_init(&o, buf, sizeof(buf));
	ms_der_bytes(&o, five, 3);
	CHECK(o.err == MS_OK && o.len == 3);
	ms_der_bytes(&o, five, 2);
	CHECK(o.err == MS_E_NOSPACE && o.len == 3);
	CHECK(buf[3] == 0xee);
	/* Sticky: a later write that would fit does nothing. */
	ms_der_bytes(&o, five, 1);
	CHECK(o.err == MS_E_NOSPACE && o.len == 3);
	CHECK(buf[3] == 0xee);

	/* A NULL buffer has no room at all. */
	ms_der_out_init(&o, NULL, 100);
	CHECK(o.cap == 0);
	ms_der_bytes(&o, five, 0);
	CHECK_ERR(o.err, MS_OK);
	ms_der_bytes(&o, five, 1);
	CHECK_ERR(o.err, MS_E_NOSPACE);
}

/* One OCTET STRING TLV of 200 bytes, through the every-capacity check. */
struct octets_ctx {
	const uint8_t *p;
	size_t len;
};

static ms_err
put_octets(const void *vctx, uint8_t *out, size_t cap, size_t *out_len)
{
	const struct octets_ctx *c = vctx;
	size_t need = ms_der_tlv_size(c->len);
	struct ms_der_out o;

	if (out == NULL) {
		*out_len = need;
		return MS_OK;
	}
	if (cap < need) {
		return MS_E_NOSPACE;
	}
	ms_der_out_init(&o, out, cap);
	ms_der_header(&o, DER_OCTET_STRING, c->len);
	ms_der_bytes(&o, c->p, c->len);
	*out_len = o.len;
	return o.err;
}

MS_TEST(cms_der_every_capacity_octets)
{
	uint8_t body[200], want[203];
	struct octets_ctx c = { body, sizeof(body) };

	for (size_t i = 0; i < sizeof(body); i++) {
		body[i] = (uint8_t)i;
	}
	want[0] = 0x04;
	want[1] = 0x81;
	want[2] = 200;
	memcpy(want + 3, body, sizeof(body));
	cms_every_cap(put_octets, &c, want, sizeof(want));
}

/* Reader: accepted encodings. */
static void
get_ok(const char *hex, uint8_t want_tag, size_t want_body, size_t want_rest)
{
	uint8_t buf[300];
	size_t n = ms_test_hex(hex, buf, sizeof(buf));
	struct ms_span in = { buf, n }, body = { NULL, 0 };
	uint8_t tag = 0;

	CHECK_ERR(ms_der_get(&in, &tag, &body), MS_OK);
	CHECK(tag == want_tag);
	CHECK(body.len == want_body);
	CHECK(in.len == want_rest);
	CHECK(in.p == buf + n - want_rest);
	CHECK(body.p + body.len == in.p);
}

/* Reader: refused encodings leave the input span unchanged. */
static void
get_bad(const uint8_t *buf, size_t n)
{
	struct ms_span in = { buf, n }, body = { NULL, 0 };
	uint8_t tag = 0;

	CHECK_ERR(ms_der_get(&in, &tag, &body), MS_E_MALFORMED);
	CHECK(in.p == buf && in.len == n);
}

static void
get_bad_hex(const char *hex)
{
	uint8_t buf[300];
	size_t n = ms_test_hex(hex, buf, sizeof(buf));

	get_bad(buf, n);
}

MS_TEST(cms_der_get_accepts)
{
	uint8_t buf[300];

	get_ok("05 00", 0x05, 0, 0);
	get_ok("04 02 aa bb cc", 0x04, 2, 1);
	get_ok("a0 03 02 01 01", 0xa0, 3, 0);
	memset(buf, 0, sizeof(buf));
	buf[0] = 0x04;
	buf[1] = 0x81;
	buf[2] = 0x80;
	{
		struct ms_span in = { buf, 3 + 0x80 }, body;
		uint8_t tag;

		CHECK_ERR(ms_der_get(&in, &tag, &body), MS_OK);
		CHECK(body.len == 0x80 && in.len == 0);
	}
}

MS_TEST(cms_der_get_refuses)
{
	uint8_t big[300];

	get_bad(NULL, 0);
	get_bad_hex("30");
	get_bad_hex("30 01");			/* content missing */
	get_bad_hex("30 02 05");
	get_bad_hex("1f 01 00");		/* high tag number */
	get_bad_hex("3f 81 00");
	get_bad_hex("30 80 05 00 00 00");	/* indefinite */
	get_bad_hex("30 81 7f");		/* non-minimal: short form fits */
	get_bad_hex("30 81 05 05 00 05 00 00");
	get_bad_hex("30 82 00 81");		/* non-minimal: leading zero */
	get_bad_hex("30 85 00 00 00 00 01 00");	/* length field over 4 bytes */
	get_bad_hex("30 ff");			/* reserved */
	get_bad_hex("30 82 01");		/* length octets cut */
	get_bad_hex("30 84 ff ff ff ff 00");	/* longer than the input */
	memset(big, 0, sizeof(big));
	big[0] = 0x04;
	big[1] = 0x82;
	big[2] = 0x01;
	big[3] = 0x00;
	get_bad(big, 4 + 255);			/* one byte short */
	/* Non-minimal lengths with the content present in full. */
	big[1] = 0x81;
	big[2] = 0x7f;
	get_bad(big, 3 + 0x7f);
	big[2] = 0x00;
	get_bad(big, 3);
	big[1] = 0x82;
	big[2] = 0x00;
	big[3] = 0x81;
	get_bad(big, 4 + 0x81);
	big[1] = 0x83;
	big[2] = 0x00;
	big[3] = 0x00;
	big[4] = 0x05;
	get_bad(big, 5 + 5);
}

MS_TEST(cms_der_expect_only)
{
	uint8_t buf[8];
	size_t n = ms_test_hex("30 03 02 01 05", buf, sizeof(buf));
	struct ms_span body, in = { buf, n };

	CHECK_ERR(ms_der_expect_only((struct ms_span){ buf, n }, DER_SEQUENCE, &body), MS_OK);
	CHECK(body.len == 3 && body.p == buf + 2);
	CHECK_ERR(ms_der_expect_only((struct ms_span){ buf, n }, DER_SET, &body), MS_E_MALFORMED);
	CHECK_ERR(ms_der_expect(&in, DER_SET, &body), MS_E_MALFORMED);
	CHECK(in.p == buf && in.len == n);
	buf[n] = 0x00;
	CHECK(ms_der_expect_only((struct ms_span){ buf, n + 1 }, DER_SEQUENCE, &body) ==
	      MS_E_MALFORMED);
	CHECK(ms_der_span_eq((struct ms_span){ buf, 2 }, (const uint8_t *)"\x30\x03", 2));
	CHECK(!ms_der_span_eq((struct ms_span){ buf, 2 }, (const uint8_t *)"\x30\x04", 2));
	CHECK(!ms_der_span_eq((struct ms_span){ buf, 2 }, buf, 3));
	CHECK(ms_der_span_eq((struct ms_span){ NULL, 0 }, NULL, 0));
}

/* What the writer makes, the reader takes back. */
MS_TEST(cms_der_round_trip)
{
	static const size_t lens[] = { 0, 1, 127, 128, 255, 256, 1000, 70000 };
	static uint8_t buf[70010];

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct ms_der_out o;
		struct ms_span in, body;
		uint8_t tag = 0;

		memset(buf, 0x5a, sizeof(buf));
		ms_der_out_init(&o, buf, sizeof(buf));
		ms_der_header(&o, DER_OCTET_STRING, lens[i]);
		CHECK_ERR(o.err, MS_OK);
		in.p = buf;
		in.len = o.len + lens[i];
		CHECK_ERR(ms_der_get(&in, &tag, &body), MS_OK);
		CHECK(tag == DER_OCTET_STRING && body.len == lens[i] && in.len == 0);
	}
}
