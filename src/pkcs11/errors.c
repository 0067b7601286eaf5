// SPDX-License-Identifier: GPL-2.0-only
/*
 * Failure records, the safe text helpers that fill their details, the
 * names and kinds of PKCS#11 return values (CK_RV), and the hints for
 * failures whose cause lies outside the token, by module file name.
 */
#include <stdio.h>
#include <stdlib.h>
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
ms_p11_rv_is_token_loss(unsigned long rv)
{
	return rv == CKR_DEVICE_ERROR || rv == CKR_DEVICE_REMOVED || rv == CKR_TOKEN_NOT_PRESENT;
}

bool
ms_p11i_rv_is_pin_error(CK_RV rv)
{
	return rv == CKR_PIN_INCORRECT || rv == CKR_PIN_LOCKED || rv == CKR_PIN_EXPIRED ||
	       rv == CKR_PIN_LEN_RANGE || rv == CKR_PIN_INVALID ||
	       rv == CKR_USER_PIN_NOT_INITIALIZED;
}

/*
 * Modules whose failure usually has a cause outside the token, and what to
 * check. @file is a part of the module's file name or p11-kit name.
 */
struct module_hint {
	const char *file;
	enum ms_p11i_hint_when when;
	CK_RV rv;		/* C_Initialize's answer, for MS_P11I_HINT_INIT */
	const char *text;
};

#define HINT_NSS "NSS's softokn needs init parameters, which a URI cannot carry: " \
	"name it in a p11-kit module file (nss.module: \"module: <path of libsoftokn3.so>\", " \
	"\"x-init-reserved: configdir='sql:<NSS DB directory>' certPrefix='' keyPrefix='' " \
	"secmod='secmod.db' flags=\"; in ~/.config/pkcs11/modules/, or " \
	"/etc/pkcs11/modules/ for root) and use module-name=nss instead of module-path="
#define HINT_OCK "openCryptoki fails so when its slot daemon is not running: " \
	"is pkcsslotd running (systemctl start pkcsslotd)?"
#define HINT_CLIENT "p11-kit-client.so shows the tokens of a \"p11-kit server\" at " \
	"P11_KIT_SERVER_ADDRESS: is that set here (unix:path=<socket>) and the server running?"

static const struct module_hint module_hints[] = {
	{ "softokn3", MS_P11I_HINT_INIT, CKR_ARGUMENTS_BAD, HINT_NSS },
	{ "opencryptoki", MS_P11I_HINT_INIT, CKR_HOST_MEMORY, HINT_OCK },
	{ "opencryptoki", MS_P11I_HINT_INIT, CKR_FUNCTION_FAILED, HINT_OCK },
	{ "PKCS11_API", MS_P11I_HINT_INIT, CKR_HOST_MEMORY, HINT_OCK },
	{ "PKCS11_API", MS_P11I_HINT_INIT, CKR_FUNCTION_FAILED, HINT_OCK },
	{ "p11-kit-client", MS_P11I_HINT_INIT, CKR_OK, HINT_CLIENT },
	{ "p11-kit-client", MS_P11I_HINT_NO_TOKEN, CKR_OK, HINT_CLIENT },
};

/* Whether @part is in the module's p11-kit name or file basename. */
static bool
module_is(CK_FUNCTION_LIST *fl, const char *part)
{
	char *name = p11_kit_module_get_name(fl);
	char *file = p11_kit_module_get_filename(fl);
	const char *base = file;
	bool is_match = false;

	if (file != NULL && strrchr(file, '/') != NULL) {
		base = strrchr(file, '/') + 1;
	}
	is_match = (name != NULL && strstr(name, part) != NULL) ||
		   (base != NULL && strstr(base, part) != NULL);
	free(name);
	free(file);
	return is_match;
}

void
ms_p11i_hint_append(struct ms_p11_fail *f, CK_FUNCTION_LIST *fl, enum ms_p11i_hint_when when,
		    CK_RV rv)
{
	for (size_t i = 0; i < sizeof(module_hints) / sizeof(module_hints[0]); i++) {
		const struct module_hint *h = &module_hints[i];

		if (h->when != when || !module_is(fl, h->file)) {
			continue;
		}
		/* CKR_OK in an INIT entry: whatever C_Initialize answered. */
		if (when == MS_P11I_HINT_INIT && h->rv != CKR_OK && h->rv != rv) {
			continue;
		}
		ms_p11i_fail_append(f, "\n  hint: %s", h->text);
		return;
	}
}
