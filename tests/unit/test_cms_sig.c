// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for ms_cms_sig_encode(): raw PKCS#11 signatures to SignerInfo values. */
#include <string.h>

#include "test.h"
#include "test_cms.h"

struct sig_ctx {
	enum ms_key_type type;
	const uint8_t *raw;
	size_t raw_len;
};

static ms_err
sig_fn(const void *vctx, uint8_t *out, size_t cap, size_t *out_len)
{
	const struct sig_ctx *c = vctx;

	return ms_cms_sig_encode(c->type, c->raw, c->raw_len, out, cap, out_len);
}

/* r||s as hex in, Ecdsa-Sig-Value as hex out, through every capacity. */
static void
ec_kat(const char *raw_hex, const char *want_hex)
{
	uint8_t raw[200], want[220];
	struct sig_ctx c = { MS_KEY_EC, raw, ms_test_hex(raw_hex, raw, sizeof(raw)) };
	size_t want_len = ms_test_hex(want_hex, want, sizeof(want));

	cms_every_cap(sig_fn, &c, want, want_len);
}

MS_TEST(cms_sig_ec_small_kat)
{
	/* Plain, high bit (0x00 added), leading zeros (stripped). */
	ec_kat("01 02", "30 06 02 01 01 02 01 02");
	ec_kat("80 ff", "30 08 02 02 00 80 02 02 00 ff");
	ec_kat("00 01 00 80", "30 07 02 01 01 02 02 00 80");
	ec_kat("00 00 7f 00 00 01", "30 06 02 01 7f 02 01 01");
	ec_kat("00 80 01 7f ff 00", "30 0a 02 03 00 80 01 02 03 7f ff 00");
}

/* P-256 sized halves: 32 bytes each, high bit on r, leading zero on s. */
MS_TEST(cms_sig_ec_p256)
{
	uint8_t raw[64], want[80];
	struct sig_ctx c = { MS_KEY_EC, raw, sizeof(raw) };
	size_t n = 0;

	memset(raw, 0x11, sizeof(raw));
	raw[0] = 0xc0;			/* r: high bit -> 33-byte INTEGER */
	raw[32] = 0x00;			/* s: leading zero -> 31-byte INTEGER */
	raw[33] = 0x00;			/* ... and a second one -> 30 bytes */
	want[n++] = 0x30;
	want[n++] = 2 + 33 + 2 + 30;
	want[n++] = 0x02;
	want[n++] = 33;
	want[n++] = 0x00;
	memcpy(want + n, raw, 32);
	n += 32;
	want[n++] = 0x02;
	want[n++] = 30;
	memcpy(want + n, raw + 34, 30);
	n += 30;
	cms_every_cap(sig_fn, &c, want, n);
}

/* P-521: 66-byte halves; the SEQUENCE passes 127 bytes and takes 0x81. */
MS_TEST(cms_sig_ec_p521_long_form)
{
	uint8_t raw[132], want[150];
	struct sig_ctx c = { MS_KEY_EC, raw, sizeof(raw) };
	size_t n = 0;

	memset(raw, 0xff, sizeof(raw));
	raw[0] = 0x01;			/* 66 bytes, top bit clear */
	want[n++] = 0x30;
	want[n++] = 0x81;
	want[n++] = 2 + 66 + 2 + 67;
	want[n++] = 0x02;
	want[n++] = 66;
	memcpy(want + n, raw, 66);
	n += 66;
	want[n++] = 0x02;
	want[n++] = 67;			/* 0xff.. needs the 0x00 */
	want[n++] = 0x00;
	memcpy(want + n, raw + 66, 66);
	n += 66;
	CHECK(n == 3 + 0x89);
	cms_every_cap(sig_fn, &c, want, n);

	/* Both with the 0x00: 2 * 69 = 138 = 0x8a. */
	raw[0] = 0x80;
	{
		uint8_t out[150];
		size_t len = 0;

		CHECK(ms_cms_sig_encode(MS_KEY_EC, raw, sizeof(raw), out, sizeof(out), &len) ==
		      MS_OK);
		CHECK(len == 3 + 138);
		CHECK(out[0] == 0x30 && out[1] == 0x81 && out[2] == 0x8a);
	}
	/* Short r and s after stripping: short form again. */
	memset(raw, 0, sizeof(raw));
	raw[65] = 0x05;
	raw[131] = 0x06;
	{
		uint8_t short_want[8];
		size_t sn = ms_test_hex("30 06 02 01 05 02 01 06", short_want, sizeof(short_want));

		cms_every_cap(sig_fn, &c, short_want, sn);
	}
}

MS_TEST(cms_sig_ec_refused)
{
	uint8_t raw[140], out[200];
	size_t len = 0;

	memset(raw, 0x22, sizeof(raw));
	/* empty, odd, longer than P-521's 2 * 66 */
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 0, out, sizeof(out), &len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 63, out, sizeof(out), &len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 1, NULL, 0, &len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 134, out, sizeof(out), &len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, NULL, 64, out, sizeof(out), &len), MS_E_MALFORMED);
	/* r all zero, s all zero */
	memset(raw, 0, 32);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 64, out, sizeof(out), &len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 64, NULL, 0, &len), MS_E_MALFORMED);
	memset(raw, 0x22, 32);
	memset(raw + 32, 0, 32);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 64, out, sizeof(out), &len), MS_E_MALFORMED);
	raw[63] = 1;
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 64, out, sizeof(out), &len), MS_OK);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, 64, out, sizeof(out), NULL), MS_E_ARG);
	CHECK(ms_cms_sig_encode((enum ms_key_type)7, raw, 64, out, sizeof(out), &len) ==
	      MS_E_ARG);
}

MS_TEST(cms_sig_rsa_unchanged)
{
	static uint8_t raw[MS_RSA_MAX_BYTES + 1];
	struct sig_ctx c = { MS_KEY_RSA, raw, 256 };
	uint8_t out[8];
	size_t len = 0;

	for (size_t i = 0; i < sizeof(raw); i++) {
		raw[i] = (uint8_t)(i ^ 0x5c);
	}
	raw[0] = 0;	/* a leading zero stays: the value is modulus-sized */
	cms_every_cap(sig_fn, &c, raw, 256);
	c.raw_len = MS_RSA_MAX_BYTES;
	cms_every_cap(sig_fn, &c, raw, MS_RSA_MAX_BYTES);
	CHECK(ms_cms_sig_encode(MS_KEY_RSA, raw, MS_RSA_MAX_BYTES + 1, NULL, 0, &len) ==
	      MS_E_MALFORMED);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_RSA, raw, 0, out, sizeof(out), &len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_RSA, NULL, 4, out, sizeof(out), &len), MS_E_MALFORMED);
}
