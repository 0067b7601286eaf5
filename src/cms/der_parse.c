// SPDX-License-Identifier: GPL-2.0-only
/*
 * The strict DER reader: one TLV at a time off a span, each constructed
 * element read as a sub-span of exactly its length. Parses untrusted input.
 */
#include <string.h>

#include "cms_internal.h"

/*
 * Identifier octet (X.690, 8.1.2): tag numbers 31 and up take more octets;
 * nothing we read uses them, so they are refused.
 * Length octets (X.690, 8.1.3; DER 10.1): 0x80 (indefinite) and 0xff are
 * refused, the long form must be minimal (no leading 0x00, not below 128)
 * and have at most 4 octets.
 */
ms_err
ms_der_get(struct ms_span *in, uint8_t *tag, struct ms_span *body)
{
	size_t pos = 0;
	size_t len = 0;
	size_t n, i;
	uint8_t t, l;

	if (in->len < 2) {
		return MS_E_MALFORMED;
	}
	t = in->p[pos++];
	if ((t & 0x1f) == 0x1f) {
		return MS_E_MALFORMED;
	}
	l = in->p[pos++];
	if (l < 0x80) {
		len = l;
	} else {
		n = (size_t)(l & 0x7f);
		if (n == 0 || n > 4) {
			return MS_E_MALFORMED;
		}
		if (n > in->len - pos) {
			return MS_E_MALFORMED;
		}
		if (in->p[pos] == 0) {
			return MS_E_MALFORMED;	/* non-minimal: leading zero */
		}
		for (i = 0; i < n; i++) {
			len = (len << 8) | in->p[pos++];
		}
		if (len < 0x80) {
			return MS_E_MALFORMED;	/* non-minimal: fits short form */
		}
	}
	/* pos <= in->len here: at most 2 + n bytes, each checked above. */
	if (len > in->len - pos) {
		return MS_E_MALFORMED;
	}
	*tag = t;
	body->p = in->p + pos;
	body->len = len;
	in->p += pos + len;
	in->len -= pos + len;
	return MS_OK;
}

ms_err
ms_der_expect(struct ms_span *in, uint8_t tag, struct ms_span *body)
{
	struct ms_span tmp = *in;
	struct ms_span b = { NULL, 0 };
	uint8_t t = 0;
	ms_err err;

	err = ms_der_get(&tmp, &t, &b);
	if (err != MS_OK) {
		return err;
	}
	if (t != tag) {
		return MS_E_MALFORMED;
	}
	*in = tmp;
	*body = b;
	return MS_OK;
}

ms_err
ms_der_expect_only(struct ms_span in, uint8_t tag, struct ms_span *body)
{
	ms_err err;

	err = ms_der_expect(&in, tag, body);
	if (err != MS_OK) {
		return err;
	}
	if (in.len != 0) {
		return MS_E_MALFORMED;	/* bytes after the element */
	}
	return MS_OK;
}

bool
ms_der_span_eq(struct ms_span s, const uint8_t *p, size_t len)
{
	return s.len == len && (len == 0 || memcmp(s.p, p, len) == 0);
}

ms_err
ms_der_name_atv(struct ms_span *rdn, struct ms_span *oid, uint8_t *tag, struct ms_span *value)
{
	struct ms_span atv = { NULL, 0 };
	ms_err err;

	err = ms_der_expect(rdn, DER_SEQUENCE, &atv);
	if (err == MS_OK) {
		err = ms_der_expect(&atv, DER_OID, oid);
	}
	if (err == MS_OK) {
		err = ms_der_get(&atv, tag, value);
	}
	if (err == MS_OK && atv.len != 0) {
		err = MS_E_MALFORMED;
	}
	return err;
}
