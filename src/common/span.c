// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading a span from the front: sub-spans and big-endian integers, for
 * every parser of a fixed binary layout (the agent's frames, the module
 * trailer). Parses untrusted input.
 */
#include "ms_common.h"

ms_err
ms_span_take(struct ms_span *s, size_t n, struct ms_span *out)
{
	if (s == NULL || out == NULL) {
		return MS_E_ARG;
	}
	if (n > s->len) {		/* compare lengths, never pointers */
		return MS_E_MALFORMED;
	}
	out->p = s->p;
	out->len = n;
	s->p += n;
	s->len -= n;
	return MS_OK;
}

ms_err
ms_span_get_u8(struct ms_span *s, uint8_t *out)
{
	struct ms_span b;
	ms_err err;

	if (out == NULL) {
		return MS_E_ARG;
	}
	err = ms_span_take(s, 1, &b);
	if (err != MS_OK) {
		return err;
	}
	*out = b.p[0];
	return MS_OK;
}

ms_err
ms_span_get_be16(struct ms_span *s, uint16_t *out)
{
	struct ms_span b;
	ms_err err;

	if (out == NULL) {
		return MS_E_ARG;
	}
	err = ms_span_take(s, 2, &b);
	if (err != MS_OK) {
		return err;
	}
	*out = (uint16_t)((unsigned)b.p[0] << 8 | b.p[1]);
	return MS_OK;
}

ms_err
ms_span_get_be32(struct ms_span *s, uint32_t *out)
{
	struct ms_span b;
	ms_err err;

	if (out == NULL) {
		return MS_E_ARG;
	}
	err = ms_span_take(s, 4, &b);
	if (err != MS_OK) {
		return err;
	}
	*out = (uint32_t)b.p[0] << 24 | (uint32_t)b.p[1] << 16 | (uint32_t)b.p[2] << 8 |
	       (uint32_t)b.p[3];
	return MS_OK;
}
