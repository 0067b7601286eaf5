// SPDX-License-Identifier: GPL-2.0-only
/*
 * The DER writer: a bounds-checked forward cursor with a sticky error, and
 * the size functions its callers use to compute lengths before writing.
 */
#include <string.h>

#include "cms_internal.h"

void
ms_der_out_init(struct ms_der_out *o, uint8_t *buf, size_t cap)
{
	o->buf = buf;
	o->cap = (buf == NULL) ? 0 : cap;
	o->len = 0;
	o->err = MS_OK;
}

/*
 * Definite length octets (X.690, 8.1.3 and 10.1): one byte below 128, else
 * 0x80 | n followed by n big-endian bytes, n minimal.
 */
static size_t
len_octets(size_t content_len)
{
	size_t n = 1;

	if (content_len < 0x80) {
		return 1;
	}
	while (content_len > 0) {
		n++;
		content_len >>= 8;
	}
	return n;
}

size_t
ms_der_header_size(size_t content_len)
{
	/* Only low tag numbers (one byte) are written. */
	return 1 + len_octets(content_len);
}

size_t
ms_der_tlv_size(size_t content_len)
{
	/*
	 * Callers bound every content by MS_CMS_CERT_MAX-sized inputs, so
	 * this sum cannot wrap; saturate anyway so a bug fails as NOSPACE.
	 */
	size_t h = ms_der_header_size(content_len);

	if (content_len > SIZE_MAX - h) {
		return SIZE_MAX;
	}
	return h + content_len;
}

void
ms_der_bytes(struct ms_der_out *o, const void *p, size_t n)
{
	if (o->err != MS_OK || n == 0) {
		return;
	}
	if (o->buf == NULL || n > o->cap - o->len) {
		o->err = MS_E_NOSPACE;
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

void
ms_der_header(struct ms_der_out *o, uint8_t tag, size_t content_len)
{
	uint8_t h[1 + 1 + sizeof(size_t)];
	size_t n = len_octets(content_len);
	size_t i;

	if ((tag & 0x1f) == 0x1f || n > 5) {
		/* High tag numbers and lengths >= 2^32 are never ours. */
		if (o->err == MS_OK) {
			o->err = MS_E_INTERNAL;
		}
		return;
	}
	h[0] = tag;
	if (n == 1) {
		h[1] = (uint8_t)content_len;
	} else {
		h[1] = (uint8_t)(0x80 | (n - 1));
		for (i = 0; i < n - 1; i++) {
			h[1 + n - 1 - i] = (uint8_t)(content_len >> (8 * i));
		}
	}
	ms_der_bytes(o, h, 1 + n);
}

void
ms_der_small_int(struct ms_der_out *o, unsigned int v)
{
	uint8_t b;

	if (v > 0x7f) {
		if (o->err == MS_OK) {
			o->err = MS_E_INTERNAL;
		}
		return;
	}
	b = (uint8_t)v;
	ms_der_header(o, DER_INTEGER, 1);
	ms_der_bytes(o, &b, 1);
}

/* Leading zero bytes of @p, at most @len. */
static size_t
leading_zeros(const uint8_t *p, size_t len)
{
	size_t z = 0;

	while (z < len && p[z] == 0) {
		z++;
	}
	return z;
}

size_t
ms_der_uint_body_size(const uint8_t *p, size_t len)
{
	size_t z = leading_zeros(p, len);

	if (z == len) {
		return 1;	/* zero is one 0x00 byte (X.690, 8.3.2) */
	}
	/* A set top bit needs a 0x00 in front to stay positive. */
	return (len - z) + ((p[z] & 0x80) != 0 ? 1 : 0);
}

void
ms_der_uint(struct ms_der_out *o, const uint8_t *p, size_t len)
{
	static const uint8_t zero = 0;
	size_t z = leading_zeros(p, len);

	ms_der_header(o, DER_INTEGER, ms_der_uint_body_size(p, len));
	if (z == len || (p[z] & 0x80) != 0) {
		ms_der_bytes(o, &zero, 1);
	}
	ms_der_bytes(o, p + z, len - z);
}
