// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pkcs11: URI (RFC 7512) through p11-kit's parser, plus the checks it
 * leaves out. Parses untrusted input.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "p11_internal.h"

#define URI_LEN_MAX 4096
#define URI_ATTRS_MAX 32
#define URI_NAME_MAX 32

/*
 * p11-kit 0.24 deletes these bytes from the whole URI before it reads it
 * (P11_URL_WHITESPACE in its common/url.h), so "to ken=b" is "token=b" and
 * " pkcs11:" is a URI. Everything below reads the URI as p11-kit will:
 * after this deletion. A tab or a form feed is kept, as p11-kit keeps it.
 */
static bool
is_uri_space(char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\v';
}

/*
 * Copies @s without p11-kit's whitespace into @out (@cap bytes, at least
 * URI_LEN_MAX + 1), the scheme in lower case. Return: false when @s is
 * longer than URI_LEN_MAX.
 */
static bool
uri_strip(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; s[i] != '\0'; i++) {
		if (i == URI_LEN_MAX || n + 1 >= cap) {
			return false;
		}
		if (!is_uri_space(s[i])) {
			out[n++] = s[i];
		}
	}
	out[n] = '\0';
	for (size_t i = 0; i < n && i < P11_KIT_URI_SCHEME_LEN; i++) {
		if (out[i] >= 'A' && out[i] <= 'Z') {
			out[i] = (char)(out[i] - 'A' + 'a');
		}
	}
	return true;
}

bool
ms_p11_uri_is(const char *s)
{
	static const char scheme[] = P11_KIT_URI_SCHEME ":";
	size_t n = 0;

	if (s == NULL) {
		return false;
	}
	/* RFC 3986, 3.1: the scheme is case-insensitive; p11-kit reads it so. */
	for (size_t i = 0; s[i] != '\0' && n < sizeof(scheme) - 1; i++) {
		char c = s[i];

		if (is_uri_space(c)) {
			continue;
		}
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		if (c != scheme[n]) {
			return false;
		}
		n++;
	}
	return n == sizeof(scheme) - 1;
}

/* One "name=value" piece of a stripped URI, as p11-kit splits it. */
struct uri_piece {
	const char *name;
	size_t name_len;
	const char *value;
	size_t value_len;
	char sep;		/* the byte before it: ':', ';', '?' or '&' */
};

/*
 * Walks the pieces of a stripped URI exactly as p11_kit_uri_parse() 0.24
 * does: the path is split at ';' and ends at '?' or at an empty piece; the
 * query after it (its first byte skipped, whatever it is) is split at '&'.
 */
struct uri_walk {
	const char *p;		/* next unread byte */
	bool in_query;
	bool is_odd_end;	/* the path ended at an empty piece before a ';' */
	bool is_bad;		/* a piece p11-kit refuses as bad syntax */
};

static void
walk_init(struct uri_walk *w, const char *stripped)
{
	w->p = stripped + P11_KIT_URI_SCHEME_LEN + 1;
	w->in_query = false;
	w->is_odd_end = false;
	w->is_bad = false;
}

/* Return: true with @pc filled, false at the end or on bad syntax (is_bad). */
static bool
walk_next(struct uri_walk *w, struct uri_piece *pc)
{
	const char *end, *eq;

	if (!w->in_query) {
		end = w->p + strcspn(w->p, ";?");
		if (end != w->p) {
			pc->sep = w->p[-1];
			goto piece;
		}
		/* An empty piece ends the path; p11-kit reads the rest as a query. */
		w->is_odd_end = (*w->p == ';');
		w->in_query = true;
	}
	if (*w->p == '\0') {
		return false;
	}
	pc->sep = *w->p;
	w->p++;
	end = strchr(w->p, '&');
	if (end == NULL) {
		end = w->p + strlen(w->p);
		if (end == w->p) {
			return false;
		}
	}
piece:
	eq = memchr(w->p, '=', (size_t)(end - w->p));
	if (eq == NULL || eq == w->p) {
		w->is_bad = true;
		return false;
	}
	pc->name = w->p;
	pc->name_len = (size_t)(eq - w->p);
	pc->value = eq + 1;
	pc->value_len = (size_t)(end - eq - 1);
	w->p = end;
	if (!w->in_query) {
		if (*end == ';') {
			w->p++;
		} else {
			w->in_query = true;	/* at '?' or the end */
		}
	}
	return true;
}

/* Names p11-kit gives one meaning under two spellings. */
static const char *const name_aliases[][2] = {
	{ "objecttype", "type" },
	{ "object-type", "type" },
	{ "pinfile", "pin-source" },
};

/* The name of @pc as p11-kit understands it, into @out (URI_NAME_MAX + 1). */
static bool
piece_name(const struct uri_piece *pc, char *out)
{
	if (pc->name_len > URI_NAME_MAX) {
		return false;
	}
	memcpy(out, pc->name, pc->name_len);
	out[pc->name_len] = '\0';
	for (size_t i = 0; i < sizeof(name_aliases) / sizeof(name_aliases[0]); i++) {
		if (strcmp(out, name_aliases[i][0]) == 0) {
			strcpy(out, name_aliases[i][1]);
		}
	}
	return true;
}

/* Whether @v (@len bytes, percent-encoded) decodes to a NUL byte. */
static bool
has_pct_nul(const char *v, size_t len)
{
	for (size_t i = 0; len >= 3 && i <= len - 3; i++) {
		if (v[i] == '%' && v[i + 1] == '0' && v[i + 2] == '0') {
			return true;
		}
	}
	return false;
}

/*
 * The checks p11-kit leaves out, on the stripped URI @s:
 * - RFC 7512, 2.3: an attribute appears at most once. p11-kit keeps the last
 *   of a repeated attribute silently, so "token=a;token=b" or two
 *   module-path values would pick something the user may not have meant.
 *   Names are compared as p11-kit reads them: whitespace deleted, aliases
 *   ("pinfile", "object-type") folded, not percent-decoded (p11-kit does not
 *   decode names either).
 * - A decoded NUL: p11-kit keeps C strings for the PIN, the pin-source, the
 *   module and the token fields, so "12%0034" would log in with "12". Only
 *   id= is binary (a CKA_ID holds any byte, p11-kit keeps its length).
 * - An empty path piece before more text (";;"): p11-kit would read the
 *   rest as query attributes, so "pkcs11:;token=a" would match any token.
 * Bad syntax is left to p11-kit's own message.
 */
static ms_err
uri_check_pieces(const char *s, struct ms_p11_fail *f)
{
	char names[URI_ATTRS_MAX][URI_NAME_MAX + 1];
	char shown[URI_NAME_MAX + 1];
	struct uri_walk w;
	struct uri_piece pc;
	size_t n = 0;

	walk_init(&w, s);
	while (walk_next(&w, &pc)) {
		if (w.is_odd_end) {
			ms_p11i_fail_set(f, "p11_kit_uri_parse", CKR_OK,
					 "URI path has an empty attribute (\";;\")");
			return MS_E_ARG;
		}
		if (n == URI_ATTRS_MAX || !piece_name(&pc, names[n])) {
			ms_p11i_fail_set(f, "p11_kit_uri_parse", CKR_OK,
					 "URI attribute name too long or too many attributes");
			return MS_E_ARG;
		}
		ms_p11i_text_clean(shown, sizeof(shown), (const unsigned char *)names[n],
				   strlen(names[n]));
		for (size_t i = 0; i < n; i++) {
			if (strcmp(names[i], names[n]) == 0) {
				ms_p11i_fail_set(f, "p11_kit_uri_parse", CKR_OK,
						 "URI attribute %s given twice (RFC 7512)", shown);
				return MS_E_ARG;
			}
		}
		if (strcmp(names[n], "id") != 0 && has_pct_nul(pc.value, pc.value_len)) {
			ms_p11i_fail_set(f, "p11_kit_uri_parse", CKR_OK,
					 "URI attribute %s holds a NUL byte (%%00)", shown);
			return MS_E_ARG;
		}
		n++;
	}
	return MS_OK;
}

/*
 * Parses @s into p11->uri. Messages never echo @s: it may hold a pin-value
 * in the path or the query, spelled in ways a redactor could miss. The
 * stripped copy holds the PIN too and is wiped.
 */
ms_err
ms_p11i_uri_parse(struct ms_p11 *p11, const char *s)
{
	char text[URI_LEN_MAX + 1];
	ms_err err = MS_E_INTERNAL;
	int r;

	if (s == NULL || !uri_strip(s, text, sizeof(text))) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "no URI, or a URI over %d bytes",
				 URI_LEN_MAX);
		err = MS_E_ARG;
		goto out;
	}
	/* Nothing but p11-kit's whitespace may precede the scheme. */
	if (strncmp(text, P11_KIT_URI_SCHEME ":", P11_KIT_URI_SCHEME_LEN + 1) != 0) {
		ms_p11i_fail_set(&p11->fail, "p11_kit_uri_parse", CKR_OK, "%s",
				 p11_kit_uri_message(P11_KIT_URI_BAD_SCHEME));
		err = MS_E_ARG;
		goto out;
	}
	err = uri_check_pieces(text, &p11->fail);
	if (err != MS_OK) {
		goto out;
	}
	p11->uri = p11_kit_uri_new();
	if (p11->uri == NULL) {
		ms_p11i_fail_set(&p11->fail, "p11_kit_uri_new", CKR_OK, "out of memory");
		err = MS_E_NOMEM;
		goto out;
	}
	/* The stripped text: the scheme is lower case for any p11-kit version. */
	r = p11_kit_uri_parse(text, P11_KIT_URI_FOR_ANY, p11->uri);
	if (r != P11_KIT_URI_OK) {
		const char *msg = p11_kit_uri_message(r);

		ms_p11i_fail_set(&p11->fail, "p11_kit_uri_parse", CKR_OK, "%s",
				 msg != NULL ? msg : "URI does not parse");
		err = MS_E_ARG;
		goto out;
	}
	/* p11-kit would then match nothing; say why instead of "not found". */
	if (p11_kit_uri_any_unrecognized(p11->uri)) {
		ms_p11i_fail_set(&p11->fail, "p11_kit_uri_parse", CKR_OK,
				 "URI has an unrecognized attribute or type= value");
		err = MS_E_ARG;
		goto out;
	}
	err = MS_OK;
out:
	ms_wipe(text, sizeof(text));
	return err;
}

/* Attributes whose values never hold a secret: shown as written. */
static const char *const shown_names[] = {
	"token", "manufacturer", "serial", "model", "object", "id", "type",
	"slot-description", "slot-manufacturer", "slot-id", "library-description",
	"library-manufacturer", "library-version", "module-name", "module-path",
};

static bool
is_shown_name(const char *name)
{
	for (size_t i = 0; i < sizeof(shown_names) / sizeof(shown_names[0]); i++) {
		if (strcmp(name, shown_names[i]) == 0) {
			return true;
		}
	}
	return false;
}

/* Appends @len bytes of @p to @out (@cap, NUL-terminated), control bytes as '?'. */
static void
put_text(char *out, size_t cap, size_t *n, const char *p, size_t len)
{
	for (size_t i = 0; i < len && *n + 1 < cap; i++) {
		unsigned char c = (unsigned char)p[i];

		out[(*n)++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[*n] = '\0';
}

/*
 * The length of @v to show: up to a "pin" that may begin a PIN the user
 * meant to give with the wrong separator ("module-path=/x;pin-value=1"
 * is one module path to p11-kit).
 */
static size_t
shown_len(const char *v, size_t len)
{
	for (size_t i = 0; len >= 3 && i <= len - 3; i++) {
		if (strncasecmp(v + i, "pin", 3) == 0) {
			return i;
		}
	}
	return len;
}

void
ms_p11_uri_redact(const char *arg, char *out, size_t cap)
{
	char text[URI_LEN_MAX + 1] = "";	/* zeroed: scan-build cannot see uri_strip() fill it */
	char name[URI_NAME_MAX + 1];
	struct uri_walk w;
	struct uri_piece pc;
	size_t n = 0;

	if (out == NULL || cap == 0) {
		return;
	}
	out[0] = '\0';
	if (arg == NULL) {
		return;
	}
	if (!ms_p11_uri_is(arg)) {
		put_text(out, cap, &n, arg, strlen(arg));
		goto out;
	}
	if (!uri_strip(arg, text, sizeof(text))) {
		put_text(out, cap, &n, "pkcs11:(too long to show)", 25);
		goto out;
	}
	put_text(out, cap, &n, text, P11_KIT_URI_SCHEME_LEN + 1);
	walk_init(&w, text);
	while (walk_next(&w, &pc)) {
		bool is_shown = piece_name(&pc, name) && is_shown_name(name);
		size_t vlen = is_shown ? shown_len(pc.value, pc.value_len) : 0;

		if (pc.sep != ':') {
			put_text(out, cap, &n, &pc.sep, 1);
		}
		put_text(out, cap, &n, pc.name, pc.name_len > URI_NAME_MAX ? URI_NAME_MAX :
			 pc.name_len);
		put_text(out, cap, &n, "=", 1);
		put_text(out, cap, &n, pc.value, vlen);
		if (!is_shown || vlen < pc.value_len) {
			put_text(out, cap, &n, "(hidden)", 8);
		}
	}
	if (w.is_bad) {
		put_text(out, cap, &n, "(rest hidden)", 13);
	}
out:
	if (n + 1 >= cap && cap >= 4) {
		memcpy(out + cap - 4, "...", 4);
	}
	ms_wipe(text, sizeof(text));
}

/*
 * A pkcs11: URI without what does not name the key: the PIN and where it
 * comes from, which library reaches the token (the agent may use a shim or
 * another path to the same token) and the object class. p11-kit writes
 * what is left in a fixed order with its own percent-encoding.
 */
ms_err
ms_p11_uri_key_name(const char *uri, char *out, size_t cap)
{
	char buf[URI_LEN_MAX + 1];
	P11KitUri *parsed = NULL;
	char *text = NULL;
	size_t len = 0;
	ms_err err = MS_E_ARG;

	if (!ms_p11_uri_is(uri)) {
		return MS_E_ARG;
	}
	/* As p11-kit reads it (ms_p11_uri_is()): whitespace anywhere deleted... */
	for (const char *p = uri; *p != '\0'; p++) {
		if (is_uri_space(*p)) {
			continue;
		}
		if (len == URI_LEN_MAX) {
			goto out;
		}
		buf[len++] = *p;
	}
	buf[len] = '\0';
	/* ...and the scheme in any case (RFC 3986, 3.1), which p11-kit wants lower-case. */
	if (len < P11_KIT_URI_SCHEME_LEN + 1) {
		goto out;
	}
	memcpy(buf, P11_KIT_URI_SCHEME ":", P11_KIT_URI_SCHEME_LEN + 1);
	parsed = p11_kit_uri_new();
	if (parsed == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	if (p11_kit_uri_parse(buf, P11_KIT_URI_FOR_ANY, parsed) != P11_KIT_URI_OK) {
		err = MS_E_ARG;
		goto out;
	}
	p11_kit_uri_set_pin_value(parsed, NULL);
	p11_kit_uri_set_pin_source(parsed, NULL);
	p11_kit_uri_set_module_name(parsed, NULL);
	p11_kit_uri_set_module_path(parsed, NULL);
	if (p11_kit_uri_clear_attribute(parsed, CKA_CLASS) != P11_KIT_URI_OK) {
		err = MS_E_INTERNAL;
		goto out;
	}
	if (p11_kit_uri_format(parsed, P11_KIT_URI_FOR_ANY, &text) != P11_KIT_URI_OK) {
		err = MS_E_ARG;
		goto out;
	}
	if (strlen(text) >= cap) {
		err = MS_E_NOSPACE;
		goto out;
	}
	memcpy(out, text, strlen(text) + 1);
	err = MS_OK;
out:
	ms_wipe(buf, sizeof(buf));	/* it may have held a pin-value */
	free(text);
	p11_kit_uri_free(parsed);
	return err;
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
	ms_p11i_text_clean(text, sizeof(text), v, len);
	ms_p11i_fail_append(f, "%s%s=\"%s\"", *any ? " " : "", name, text);
	*any = true;
}

static void
describe_string(struct ms_p11_fail *f, const char *name, const char *v, bool *any)
{
	char text[160];

	if (v == NULL) {
		return;
	}
	ms_p11i_text_clean(text, sizeof(text), (const unsigned char *)v, strlen(v));
	ms_p11i_fail_append(f, "%s%s=\"%s\"", *any ? " " : "", name, text);
	*any = true;
}

/*
 * Appends what the URI asks for at token, slot and module level to @f's
 * detail. Built from the parsed fields, never from the URI text, so no PIN
 * can reach a message.
 */
void
ms_p11i_uri_describe(struct ms_p11 *p11, struct ms_p11_fail *f)
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
		ms_p11i_fail_append(f, "%sslot-id=%lu", any ? " " : "", slot_id);
		any = true;
	}
	describe_field(f, "library-manufacturer", m->manufacturerID, sizeof(m->manufacturerID),
		       &any);
	describe_field(f, "library-description", m->libraryDescription,
		       sizeof(m->libraryDescription), &any);
	describe_string(f, "module-name", p11_kit_uri_get_module_name(p11->uri), &any);
	describe_string(f, "module-path", p11_kit_uri_get_module_path(p11->uri), &any);
	if (!any) {
		ms_p11i_fail_append(f, "any token");
	}
}
