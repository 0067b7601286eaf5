// SPDX-License-Identifier: GPL-2.0-only
/*
 * Failure records, the safe text helpers that fill their details, and the
 * names and kinds of PKCS#11 return values (CK_RV).
 */
#include <stdio.h>
#include <string.h>

#include "p11_internal.h"

void
ms_p11i_fail_clear(struct ms_p11_fail *f)
{
	f->call = NULL;
	f->rv = CKR_OK;
	f->detail[0] = '\0';
}

static void __attribute__((format(printf, 2, 0)))
fail_vappend(struct ms_p11_fail *f, const char *fmt, va_list ap)
{
	size_t used = strnlen(f->detail, sizeof(f->detail));
	size_t room;
	int n;

	if (used >= sizeof(f->detail) - 1) {
		return;
	}
	room = sizeof(f->detail) - used;
	n = vsnprintf(f->detail + used, room, fmt, ap);
	if (n < 0) {
		f->detail[used] = '\0';
		return;
	}
	if ((size_t)n >= room) {
		/* Truncated: say so instead of ending mid-word silently. */
		memcpy(f->detail + sizeof(f->detail) - 4, "...", 4);
	}
}

void
ms_p11i_fail_set(struct ms_p11_fail *f, const char *call, CK_RV rv, const char *fmt, ...)
{
	va_list ap;

	f->call = call;
	f->rv = rv;
	f->detail[0] = '\0';
	va_start(ap, fmt);
	fail_vappend(f, fmt, ap);
	va_end(ap);
}

void
ms_p11i_fail_append(struct ms_p11_fail *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fail_vappend(f, fmt, ap);
	va_end(ap);
}

/*
 * Copies @len bytes of untrusted text (a space-padded CK_TOKEN_INFO field, a
 * CKA_LABEL, a URI value) into @dst for a message: trailing blanks dropped,
 * control bytes and quotes replaced with '?', always NUL-terminated,
 * truncated to @cap - 1 bytes.
 */
void
ms_p11i_text_clean(char *dst, size_t cap, const unsigned char *src, size_t len)
{
	size_t n = 0;

	if (cap == 0) {
		return;
	}
	while (len > 0 && (src[len - 1] == ' ' || src[len - 1] == '\0')) {
		len--;
	}
	for (size_t i = 0; i < len && n < cap - 1; i++) {
		unsigned char c = src[i];

		if (c < 0x20 || c == 0x7f || c == '"') {
			c = '?';
		}
		dst[n++] = (char)c;
	}
	dst[n] = '\0';
}

/* Lower-case hex of @src for a message, "..." when it does not fit. */
void
ms_p11i_hex(char *dst, size_t cap, const uint8_t *src, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 0;

	if (cap == 0) {
		return;
	}
	for (size_t i = 0; i < len; i++) {
		if (cap - n < 3) {
			if (cap >= 4) {
				memcpy(dst + cap - 4, "...", 3);
				n = cap - 1;
			}
			break;
		}
		dst[n++] = digits[src[i] >> 4];
		dst[n++] = digits[src[i] & 0x0f];
	}
	dst[n] = '\0';
}

/* The names of the PKCS#11 return values (CK_RV) for one-line messages. */
struct rv_name {
	CK_RV rv;
	const char *name;
};

static const struct rv_name rv_names[] = {
#define MS_CKR(x) { x, #x },
#include "ckr_list.inc"
#undef MS_CKR
};

const char *
ms_p11_rv_name(unsigned long rv)
{
	for (size_t i = 0; i < sizeof(rv_names) / sizeof(rv_names[0]); i++) {
		if (rv_names[i].rv == rv) {
			return rv_names[i].name;
		}
	}
	/* Vendor values carry no standard meaning; name their range. */
	if (rv >= CKR_VENDOR_DEFINED) {
		return "CKR_VENDOR_DEFINED";
	}
	return "CKR_(unknown)";
}

bool
ms_p11_rv_is_session_loss(unsigned long rv)
{
	return rv == CKR_SESSION_HANDLE_INVALID || rv == CKR_SESSION_CLOSED ||
	       rv == CKR_USER_NOT_LOGGED_IN;
}

bool
ms_p11i_rv_is_pin_error(CK_RV rv)
{
	return rv == CKR_PIN_INCORRECT || rv == CKR_PIN_LOCKED || rv == CKR_PIN_EXPIRED ||
	       rv == CKR_PIN_LEN_RANGE || rv == CKR_PIN_INVALID ||
	       rv == CKR_USER_PIN_NOT_INITIALIZED;
}
