// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the pkcs11: URI handling of src/pkcs11/uri.c that
 * ms_p11_open() runs first (p11_uri_parse: length and scheme checks, the
 * RFC 7512 repeated-attribute check, p11-kit's parser, unrecognised
 * attributes), then what the context reads back from a parsed URI (the
 * description used in "not found" messages, pin-value, pin-source). No
 * module is loaded: the internal entry point is called on a context built
 * as ms_p11_open() builds it. Input: the URI text (up to its first NUL).
 *
 * Oracle: a URI that names a known attribute twice is refused (RFC 7512,
 * 2.3); p11-kit alone would keep the last one.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pkcs11/p11_internal.h"

/* Whether the parsed URI @s names one of these attributes twice, path and query together. */
static bool
has_repeat(const char *s)
{
	static const char *const names[] = {
		"token=", "manufacturer=", "serial=", "model=", "object=", "id=", "type=",
		"slot-id=", "pin-value=", "pin-source=", "module-path=", "module-name=",
	};
	const char *path = s + 7;	/* after "pkcs11:", any case */

	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		size_t nlen = strlen(names[k]);
		unsigned seen = 0;
		const char *p = path;
		bool in_query = false;

		while (*p != '\0') {
			size_t len = strcspn(p, in_query ? "&" : ";?");

			if (len >= nlen && strncmp(p, names[k], nlen) == 0) {
				seen++;
			}
			p += len;
			if (!in_query && *p == '?') {
				in_query = true;
			}
			if (*p != '\0') {
				p++;
			}
		}
		if (seen > 1) {
			return true;
		}
	}
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ms_p11 *p11 = NULL;
	struct ms_p11_fail f;
	char *s = NULL;
	ms_err err;

	s = malloc(size + 1);
	p11 = calloc(1, sizeof(*p11));
	if (s == NULL || p11 == NULL) {
		fuzz_die("malloc");
	}
	memcpy(s, data, size);
	s[size] = '\0';
	/* As ms_p11_open() sets up its context. */
	atomic_init(&p11->pin_rejected, false);
	p11_fail_clear(&p11->fail);
	for (size_t i = 0; i < P11_SESSIONS_MAX; i++) {
		p11_fail_clear(&p11->sess[i].fail);
	}
	err = p11_uri_parse(p11, s);
	if (err == MS_OK) {
		if (p11->uri == NULL) {
			fuzz_die("parsed without a URI object");
		}
		if (has_repeat(s)) {
			fuzz_die("a repeated attribute was accepted");
		}
		p11_fail_clear(&f);
		p11_uri_describe(p11, &f);
		if (strnlen(f.detail, sizeof(f.detail)) == sizeof(f.detail)) {
			fuzz_die("description not NUL-terminated");
		}
		(void)ms_p11_uri_pin_value(p11);
		(void)ms_p11_uri_pin_source(p11);
	} else if (err != MS_E_ARG && err != MS_E_NOMEM) {
		fuzz_die("p11_uri_parse: unexpected error");
	}
	if (strnlen(p11->fail.detail, sizeof(p11->fail.detail)) == sizeof(p11->fail.detail)) {
		fuzz_die("failure detail not NUL-terminated");
	}
	ms_p11_close(p11);
	free(s);
	return 0;
}
