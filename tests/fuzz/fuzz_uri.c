// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the pkcs11: URI handling of src/pkcs11/uri.c that
 * ms_p11_open() runs first (ms_p11i_uri_parse: length and scheme checks, the
 * RFC 7512 repeated-attribute check, p11-kit's parser, unrecognised
 * attributes), then what the context reads back from a parsed URI (the
 * description used in "not found" messages, pin-value, pin-source). No
 * module is loaded: the internal entry point is called on a context built
 * as ms_p11_open() builds it. Input: the URI text (up to its first NUL).
 *
 * Oracles: a URI that names an attribute twice as p11-kit reads it is
 * refused (RFC 7512, 2.3; p11-kit alone would keep the last one), so is a
 * %00 outside id= and an empty path attribute before more text; the
 * redacted form of any input shows no value after a "pin" name.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "pkcs11/p11_internal.h"

/*
 * The oracles read the URI as p11-kit 0.24 reads it, written apart from
 * src/pkcs11/uri.c: p11-kit first deletes " \n\r\v" everywhere, then splits
 * the path at ';' until '?' or an empty piece, skips one byte, and splits
 * the rest at '&'. Names are compared after that deletion, with p11-kit's
 * aliases folded.
 */
#define ORACLE_PIECES 64

struct oracle_piece {
	char name[40];		/* "" when the piece has no '=' or a long name */
	const char *value;
	size_t value_len;
};

/* Splits @t (stripped, after "pkcs11:") into @pc; sets *@odd for ";;". */
static size_t
oracle_split(const char *t, struct oracle_piece *pc, bool *odd)
{
	size_t n = 0;
	const char *p = t;
	bool query = false;

	*odd = false;
	while (n < ORACLE_PIECES) {
		const char *end, *eq;

		if (!query) {
			end = p + strcspn(p, ";?");
			if (end == p) {
				*odd = (*p == ';' && p[1] != '\0');
				query = true;
				continue;
			}
		} else {
			if (*p == '\0') {
				break;
			}
			p++;
			end = strchr(p, '&');
			if (end == NULL) {
				end = p + strlen(p);
				if (end == p) {
					break;
				}
			}
		}
		eq = memchr(p, '=', (size_t)(end - p));
		memset(&pc[n], 0, sizeof(pc[n]));
		if (eq != NULL && eq != p && (size_t)(eq - p) < sizeof(pc[n].name)) {
			memcpy(pc[n].name, p, (size_t)(eq - p));
			pc[n].value = eq + 1;
			pc[n].value_len = (size_t)(end - eq - 1);
		}
		if (strcmp(pc[n].name, "objecttype") == 0 ||
		    strcmp(pc[n].name, "object-type") == 0) {
			strcpy(pc[n].name, "type");
		}
		if (strcmp(pc[n].name, "pinfile") == 0) {
			strcpy(pc[n].name, "pin-source");
		}
		n++;
		if (eq == NULL || eq == p) {
			break;
		}
		p = end;
		if (!query) {
			if (*p == ';') {
				p++;
			} else {
				query = true;
			}
		}
	}
	return n;
}

/* @s without p11-kit's whitespace, in a malloc'd string. */
static char *
oracle_strip(const char *s)
{
	char *t = malloc(strlen(s) + 1);
	size_t n = 0;

	if (t == NULL) {
		fuzz_die("malloc");
	}
	for (; *s != '\0'; s++) {
		if (*s != ' ' && *s != '\n' && *s != '\r' && *s != '\v') {
			t[n++] = *s;
		}
	}
	t[n] = '\0';
	return t;
}

/* What an accepted URI must not contain: a repeat, a %00 outside id=, ";;". */
static const char *
oracle_refusal(const char *s)
{
	static struct oracle_piece pc[ORACLE_PIECES];
	char *t = oracle_strip(s);
	const char *why = NULL;
	bool odd = false;
	size_t n = oracle_split(t + 7, pc, &odd);

	if (odd) {
		why = "an empty path attribute before more text was accepted";
	}
	for (size_t i = 0; i < n && why == NULL; i++) {
		for (size_t j = 0; j < i && why == NULL; j++) {
			if (pc[i].name[0] != '\0' && strcmp(pc[i].name, pc[j].name) == 0) {
				why = "a repeated attribute was accepted";
			}
		}
		for (size_t k = 0; k + 3 <= pc[i].value_len && why == NULL; k++) {
			if (strcmp(pc[i].name, "id") != 0 &&
			    memcmp(pc[i].value + k, "%00", 3) == 0) {
				why = "a %00 outside id= was accepted";
			}
		}
	}
	free(t);
	return why;
}

/*
 * In what ms_p11_uri_redact() shows, every "pin" (any case) is in the name
 * of an attribute whose value reads "(hidden)".
 */
static void
oracle_redacted(const char *s)
{
	char out[600];
	size_t len;
	bool is_cut;

	ms_p11_uri_redact(s, out, sizeof(out));
	len = strnlen(out, sizeof(out));
	if (len == sizeof(out)) {
		fuzz_die("redacted text not NUL-terminated");
	}
	if (!ms_p11_uri_is(s)) {
		return;
	}
	/* A cut text ends in "..." over its last three bytes. */
	is_cut = len == sizeof(out) - 1;
	for (size_t i = 0; i + 3 <= len; i++) {
		const char *eq;

		if (strncasecmp(out + i, "pin", 3) != 0) {
			continue;
		}
		eq = strchr(out + i, '=');
		if (eq != NULL && strncmp(eq + 1, "(hidden)", 8) == 0) {
			continue;
		}
		if (is_cut && (eq == NULL || (size_t)(eq + 1 - out) + 8 > len - 3)) {
			break;
		}
		fuzz_die("a pin attribute's value is shown");
	}
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
	ms_p11i_fail_clear(&p11->fail);
	for (size_t i = 0; i < MS_P11I_SESSIONS_MAX; i++) {
		ms_p11i_fail_clear(&p11->sess[i].fail);
	}
	err = ms_p11i_uri_parse(p11, s);
	if (err == MS_OK) {
		if (p11->uri == NULL) {
			fuzz_die("parsed without a URI object");
		}
		if (oracle_refusal(s) != NULL) {
			fuzz_die(oracle_refusal(s));
		}
		ms_p11i_fail_clear(&f);
		ms_p11i_uri_describe(p11, &f);
		if (strnlen(f.detail, sizeof(f.detail)) == sizeof(f.detail)) {
			fuzz_die("description not NUL-terminated");
		}
		(void)ms_p11_uri_pin_value(p11);
		(void)ms_p11_uri_pin_source(p11);
	} else if (err != MS_E_ARG && err != MS_E_NOMEM) {
		fuzz_die("ms_p11i_uri_parse: unexpected error");
	}
	if (strnlen(p11->fail.detail, sizeof(p11->fail.detail)) == sizeof(p11->fail.detail)) {
		fuzz_die("failure detail not NUL-terminated");
	}
	oracle_redacted(s);
	ms_p11_close(p11);
	free(s);
	return 0;
}
