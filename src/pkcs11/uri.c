// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pkcs11: URI (RFC 7512) through p11-kit's parser, plus the checks it
 * leaves out. Parses untrusted input.
 */
#include <string.h>
#include <strings.h>

#include "p11_internal.h"

#define URI_LEN_MAX 4096
#define URI_ATTRS_MAX 32
#define URI_NAME_MAX 32

/* Records the attribute name of one "name=value" piece; refuses a repeat. */
static ms_err
uri_note_name(char names[][URI_NAME_MAX + 1], size_t *n, const char *p, size_t len,
	      struct ms_p11_fail *f)
{
	size_t nlen = strcspn(p, "=");

	if (nlen >= len) {
		return MS_OK;	/* no '=': p11-kit judges the piece */
	}
	if (nlen > URI_NAME_MAX || *n == URI_ATTRS_MAX) {
		p11_fail_set(f, "p11_kit_uri_parse", CKR_OK,
			     "URI attribute name too long or too many attributes");
		return MS_E_ARG;
	}
	memcpy(names[*n], p, nlen);
	names[*n][nlen] = '\0';
	for (size_t i = 0; i < *n; i++) {
		if (strcmp(names[i], names[*n]) == 0) {
			p11_fail_set(f, "p11_kit_uri_parse", CKR_OK,
				     "URI attribute %s given twice (RFC 7512)", names[*n]);
			return MS_E_ARG;
		}
	}
	(*n)++;
	return MS_OK;
}

/*
 * RFC 7512, 2.3: an attribute appears at most once. p11-kit keeps the last
 * of a repeated attribute silently, so "token=a;token=b" or two module-path
 * values would pick something the user may not have meant: refuse them.
 * The path (after "pkcs11:", up to '?') is split at ';', the query at '&'.
 * Names are compared as written; p11-kit does not decode them either.
 */
static ms_err
uri_check_repeats(const char *s, struct ms_p11_fail *f)
{
	char names[URI_ATTRS_MAX][URI_NAME_MAX + 1];
	size_t n = 0;
	const char *p = s + P11_KIT_URI_SCHEME_LEN + 1;
	const char *seps = ";?";
	ms_err err = MS_OK;

	while (*p != '\0') {
		size_t len = strcspn(p, seps);

		err = uri_note_name(names, &n, p, len, f);
		if (err != MS_OK) {
			return err;
		}
		p += len;
		if (*p == '?') {
			seps = "&";	/* the query starts: '?' is plain text now */
		}
		if (*p != '\0') {
			p++;
		}
	}
	return MS_OK;
}

/*
 * Parses @s into p11->uri. Messages never echo @s: it may hold a pin-value
 * in the path or the query, spelled in ways a redactor could miss.
 */
ms_err
p11_uri_parse(struct ms_p11 *p11, const char *s)
{
	ms_err err = MS_E_INTERNAL;
	int r;

	if (s == NULL || strnlen(s, URI_LEN_MAX + 1) > URI_LEN_MAX) {
		p11_fail_set(&p11->fail, NULL, CKR_OK, "no URI, or a URI over %d bytes",
			     URI_LEN_MAX);
		return MS_E_ARG;
	}
	/* RFC 3986, 3.1: the scheme is case-insensitive; nothing may precede it. */
	if (strncasecmp(s, P11_KIT_URI_SCHEME ":", P11_KIT_URI_SCHEME_LEN + 1) != 0) {
		p11_fail_set(&p11->fail, "p11_kit_uri_parse", CKR_OK, "%s",
			     p11_kit_uri_message(P11_KIT_URI_BAD_SCHEME));
		return MS_E_ARG;
	}
	err = uri_check_repeats(s, &p11->fail);
	if (err != MS_OK) {
		return err;
	}
	p11->uri = p11_kit_uri_new();
	if (p11->uri == NULL) {
		p11_fail_set(&p11->fail, "p11_kit_uri_new", CKR_OK, "out of memory");
		return MS_E_NOMEM;
	}
	r = p11_kit_uri_parse(s, P11_KIT_URI_FOR_ANY, p11->uri);
	if (r != P11_KIT_URI_OK) {
		const char *msg = p11_kit_uri_message(r);

		p11_fail_set(&p11->fail, "p11_kit_uri_parse", CKR_OK, "%s",
			     msg != NULL ? msg : "URI does not parse");
		return MS_E_ARG;
	}
	/* p11-kit would then match nothing; say why instead of "not found". */
	if (p11_kit_uri_any_unrecognized(p11->uri)) {
		p11_fail_set(&p11->fail, "p11_kit_uri_parse", CKR_OK,
			     "URI has an unrecognized attribute or type= value");
		return MS_E_ARG;
	}
	return MS_OK;
}

const char *
ms_p11_uri_pin_value(const struct ms_p11 *p11)
{
	if (p11 == NULL || p11->uri == NULL) {
		return NULL;
	}
	return p11_kit_uri_get_pin_value(p11->uri);
}

const char *
ms_p11_uri_pin_source(const struct ms_p11 *p11)
{
	if (p11 == NULL || p11->uri == NULL) {
		return NULL;
	}
	return p11_kit_uri_get_pin_source(p11->uri);
}

/* One fixed-size URI field; p11-kit leaves unset fields all zero. */
static void
describe_field(struct ms_p11_fail *f, const char *name, const CK_UTF8CHAR *v, size_t len,
	       bool *any)
{
	char text[80];

	if (v[0] == 0) {
		return;
	}
	p11_text_clean(text, sizeof(text), v, len);
	p11_fail_append(f, "%s%s=\"%s\"", *any ? " " : "", name, text);
	*any = true;
}

static void
describe_string(struct ms_p11_fail *f, const char *name, const char *v, bool *any)
{
	char text[160];

	if (v == NULL) {
		return;
	}
	p11_text_clean(text, sizeof(text), (const unsigned char *)v, strlen(v));
	p11_fail_append(f, "%s%s=\"%s\"", *any ? " " : "", name, text);
	*any = true;
}

/*
 * Appends what the URI asks for at token, slot and module level to @f's
 * detail. Built from the parsed fields, never from the URI text, so no PIN
 * can reach a message.
 */
void
p11_uri_describe(struct ms_p11 *p11, struct ms_p11_fail *f)
{
	const CK_TOKEN_INFO *t = p11_kit_uri_get_token_info(p11->uri);
	const CK_SLOT_INFO *s = p11_kit_uri_get_slot_info(p11->uri);
	const CK_INFO *m = p11_kit_uri_get_module_info(p11->uri);
	CK_SLOT_ID slot_id = p11_kit_uri_get_slot_id(p11->uri);
	bool any = false;

	describe_field(f, "token", t->label, sizeof(t->label), &any);
	describe_field(f, "manufacturer", t->manufacturerID, sizeof(t->manufacturerID), &any);
	describe_field(f, "model", t->model, sizeof(t->model), &any);
	describe_field(f, "serial", t->serialNumber, sizeof(t->serialNumber), &any);
	describe_field(f, "slot-description", s->slotDescription,
		       sizeof(s->slotDescription), &any);
	describe_field(f, "slot-manufacturer", s->manufacturerID, sizeof(s->manufacturerID),
		       &any);
	if (slot_id != (CK_SLOT_ID)-1) {
		p11_fail_append(f, "%sslot-id=%lu", any ? " " : "", slot_id);
		any = true;
	}
	describe_field(f, "library-manufacturer", m->manufacturerID, sizeof(m->manufacturerID),
		       &any);
	describe_field(f, "library-description", m->libraryDescription,
		       sizeof(m->libraryDescription), &any);
	describe_string(f, "module-name", p11_kit_uri_get_module_name(p11->uri), &any);
	describe_string(f, "module-path", p11_kit_uri_get_module_path(p11->uri), &any);
	if (!any) {
		p11_fail_append(f, "any token");
	}
}
