// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the one private key and the one certificate a URI's object=,
 * id= and type= name on the chosen token (RFC 7512, 2.3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p11_internal.h"

/*
 * The URI's object attributes, CKA_CLASS replaced by @cls. The template
 * points into p11->uri and into @q, which must outlive its use. One entry
 * is left free for the caller (CKA_CERTIFICATE_TYPE).
 */
ms_err
p11_query_build(const struct ms_p11 *p11, struct p11_query *q, CK_OBJECT_CLASS cls)
{
	CK_ULONG n_attrs = 0;
	CK_ATTRIBUTE *attrs = p11_kit_uri_get_attributes(p11->uri, &n_attrs);

	q->cls = cls;
	q->n = 0;
	q->has_uri_cls = false;
	q->tmpl[q->n++] = (CK_ATTRIBUTE){ CKA_CLASS, &q->cls, sizeof(q->cls) };
	for (CK_ULONG i = 0; i < n_attrs; i++) {
		if (attrs[i].type == CKA_CLASS) {
			if (attrs[i].ulValueLen != sizeof(q->uri_cls) || attrs[i].pValue == NULL) {
				return MS_E_INTERNAL;
			}
			memcpy(&q->uri_cls, attrs[i].pValue, sizeof(q->uri_cls));
			q->has_uri_cls = true;
			continue;
		}
		if (q->n == P11_TMPL_MAX - 1) {
			return MS_E_INTERNAL;
		}
		q->tmpl[q->n++] = attrs[i];
	}
	return MS_OK;
}

/* Appends the URI's object= and id= to @f, for messages. */
void
p11_query_describe(const struct ms_p11 *p11, struct ms_p11_fail *f)
{
	CK_ATTRIBUTE *label = p11_kit_uri_get_attribute(p11->uri, CKA_LABEL);
	CK_ATTRIBUTE *id = p11_kit_uri_get_attribute(p11->uri, CKA_ID);
	char text[P11_LABEL_MAX + 1];

	if (label != NULL && label->pValue != NULL) {
		p11_text_clean(text, sizeof(text), label->pValue, label->ulValueLen);
		p11_fail_append(f, " object=\"%s\"", text);
	}
	if (id != NULL && id->pValue != NULL) {
		p11_hex(text, sizeof(text), id->pValue, id->ulValueLen);
		p11_fail_append(f, " id=%s", text);
	}
	if (label == NULL && id == NULL) {
		p11_fail_append(f, " (no object= or id= in the URI)");
	}
}

/* p11_query_describe() and the chosen token's label. */
static void
describe_objects(struct ms_p11 *p11, struct ms_p11_fail *f)
{
	p11_query_describe(p11, f);
	p11_fail_append(f, " on token \"%s\"", p11->token_label);
}

/*
 * One C_FindObjects of at most @cap handles on session @h of module @fl
 * (PKCS#11 3.0, 5.7); @cap above one is enough to tell "one" from
 * "several". Failures go to @f.
 */
ms_err
p11_find_on(CK_FUNCTION_LIST *fl, CK_SESSION_HANDLE h, CK_ATTRIBUTE *tmpl, CK_ULONG n_tmpl,
	    CK_OBJECT_HANDLE *out, size_t cap, size_t *n_out, struct ms_p11_fail *f)
{
	CK_ULONG n = 0;
	CK_RV rv;

	rv = fl->C_FindObjectsInit(h, tmpl, n_tmpl);
	if (rv != CKR_OK) {
		p11_fail_set(f, "C_FindObjectsInit", rv, "searching objects");
		return MS_E_TOKEN;
	}
	rv = fl->C_FindObjects(h, out, (CK_ULONG)cap, &n);
	(void)fl->C_FindObjectsFinal(h);
	if (rv != CKR_OK) {
		p11_fail_set(f, "C_FindObjects", rv, "searching objects");
		return MS_E_TOKEN;
	}
	if (n > cap) {
		p11_fail_set(f, "C_FindObjects", CKR_OK, "returned %lu handles for %zu", n, cap);
		return MS_E_MALFORMED;
	}
	*n_out = (size_t)n;
	return MS_OK;
}

/* p11_find_on() on the chosen token, failures in p11->fail naming it. */
ms_err
p11_find(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_ATTRIBUTE *tmpl, CK_ULONG n_tmpl,
	 CK_OBJECT_HANDLE *out, size_t cap, size_t *n_out)
{
	ms_err err = p11_find_on(p11->fl, h, tmpl, n_tmpl, out, cap, n_out, &p11->fail);

	if (err != MS_OK) {
		p11_fail_append(&p11->fail, " on token \"%s\"", p11->token_label);
	}
	return err;
}

/* Lists label and id of each object in p11->fail's detail. */
void
p11_list_candidates(struct ms_p11 *p11, const CK_OBJECT_HANDLE *objs, size_t n)
{
	uint8_t buf[P11_LABEL_MAX];
	char label[P11_LABEL_MAX + 1], id[2 * P11_ID_MAX + 1];
	struct ms_p11_fail ignore;
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "?");
		snprintf(id, sizeof(id), "?");
		if (p11_attr_get(p11, p11->sess[0].h, objs[i], CKA_LABEL, buf, sizeof(buf), &len,
				 &ignore) == MS_OK) {
			p11_text_clean(label, sizeof(label), buf, len);
		}
		if (p11_attr_get(p11, p11->sess[0].h, objs[i], CKA_ID, buf, P11_ID_MAX, &len,
				 &ignore) == MS_OK) {
			p11_hex(id, sizeof(id), buf, len);
		}
		p11_fail_append(&p11->fail, "\n  object=\"%s\" id=%s", label, id);
	}
}

/*
 * Finds exactly one object of the query. Return: MS_OK with *@obj set,
 * MS_E_NOTFOUND, MS_E_AMBIGUOUS (candidates listed), MS_E_TOKEN.
 */
static ms_err
find_one(struct ms_p11 *p11, struct p11_query *q, const char *what, CK_OBJECT_HANDLE *obj)
{
	CK_OBJECT_HANDLE objs[P11_FIND_MAX];
	size_t n = 0;
	ms_err err;

	err = p11_find(p11, p11->sess[0].h, q->tmpl, q->n, objs, P11_FIND_MAX, &n);
	if (err != MS_OK) {
		return err;
	}
	if (n == 0) {
		p11_fail_set(&p11->fail, NULL, CKR_OK, "no %s matches", what);
		describe_objects(p11, &p11->fail);
		if (q->cls == CKO_PRIVATE_KEY && !p11->login_done && ms_p11_needs_pin(p11)) {
			p11_fail_append(&p11->fail, " (not logged in: private keys are hidden)");
		}
		return MS_E_NOTFOUND;
	}
	if (n > 1) {
		p11_fail_set(&p11->fail, NULL, CKR_OK, "%s%zu objects of type %s match",
			     n == P11_FIND_MAX ? "at least " : "", n, what);
		describe_objects(p11, &p11->fail);
		p11_fail_append(&p11->fail, "; use object= and id= to pick one:");
		p11_list_candidates(p11, objs, n);
		return MS_E_AMBIGUOUS;
	}
	*obj = objs[0];
	return MS_OK;
}

ms_err
ms_p11_key_find(struct ms_p11 *p11, enum ms_p11_key_type *type_out)
{
	struct p11_query q;
	CK_OBJECT_HANDLE key = CK_INVALID_HANDLE;
	ms_err err = MS_E_INTERNAL;

	if (p11 == NULL || type_out == NULL || !p11->has_token || !p11->sess[0].is_open) {
		return MS_E_ARG;
	}
	p11->has_key = false;
	err = p11_query_build(p11, &q, CKO_PRIVATE_KEY);
	if (err != MS_OK) {
		return err;
	}
	if (q.has_uri_cls && q.uri_cls != CKO_PRIVATE_KEY) {
		p11_fail_set(&p11->fail, NULL, CKR_OK,
			     "the key URI has a type= other than \"private\"");
		return MS_E_ARG;
	}
	err = find_one(p11, &q, "private key", &key);
	if (err != MS_OK) {
		return err;
	}
	err = p11_key_facts(p11, key);
	if (err != MS_OK) {
		return err;
	}
	p11->key = key;
	p11->has_key = true;
	*type_out = p11->key_type;
	return MS_OK;
}

ms_err
p11_key_refind(struct ms_p11 *p11, CK_SESSION_HANDLE h)
{
	struct p11_query q;
	CK_OBJECT_HANDLE objs[2];
	size_t n = 0;
	ms_err err;

	err = p11_query_build(p11, &q, CKO_PRIVATE_KEY);
	if (err == MS_OK) {
		err = p11_find(p11, h, q.tmpl, q.n, objs, 2, &n);
	}
	if (err != MS_OK) {
		return err;
	}
	if (n != 1) {
		p11_fail_set(&p11->fail, NULL, CKR_OK,
			     "%zu private keys match after logging in again", n);
		return n == 0 ? MS_E_NOTFOUND : MS_E_AMBIGUOUS;
	}
	atomic_store(&p11->key, objs[0]);
	return MS_OK;
}

bool
ms_p11_key_always_authenticate(const struct ms_p11 *p11)
{
	return p11 != NULL && p11->has_key && p11->key_always_auth;
}

ms_err
ms_p11_cert_find(struct ms_p11 *p11, uint8_t **der_out, size_t *der_len)
{
	struct p11_query q;
	CK_OBJECT_HANDLE cert = CK_INVALID_HANDLE;
	uint8_t *der = NULL;
	size_t len = 0, got = 0;
	ms_err err = MS_E_INTERNAL;

	if (p11 == NULL || der_out == NULL || der_len == NULL || !p11->has_token ||
	    !p11->sess[0].is_open) {
		return MS_E_ARG;
	}
	*der_out = NULL;
	*der_len = 0;
	err = p11_query_build(p11, &q, CKO_CERTIFICATE);
	if (err != MS_OK) {
		goto out;
	}
	/*
	 * kbuild passes one URI, often with type=private, for key and
	 * certificate alike: a key type= selects the certificate of that pair.
	 */
	if (q.has_uri_cls && q.uri_cls != CKO_CERTIFICATE && q.uri_cls != CKO_PRIVATE_KEY &&
	    q.uri_cls != CKO_PUBLIC_KEY) {
		p11_fail_set(&p11->fail, NULL, CKR_OK,
			     "the certificate URI's type= is not cert, private or public");
		err = MS_E_ARG;
		goto out;
	}
	q.cert_type = CKC_X_509;
	q.tmpl[q.n++] = (CK_ATTRIBUTE){ CKA_CERTIFICATE_TYPE, &q.cert_type,
					sizeof(q.cert_type) };
	err = find_one(p11, &q, "X.509 certificate", &cert);
	if (err != MS_OK) {
		goto out;
	}
	err = p11_attr_get(p11, p11->sess[0].h, cert, CKA_VALUE, NULL, P11_CERT_MAX, &len,
			   &p11->fail);
	if (err == MS_E_NOTFOUND || (err == MS_OK && len == 0)) {
		p11_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
			     "the certificate object has no CKA_VALUE");
		err = MS_E_MALFORMED;
	}
	if (err != MS_OK) {
		goto out;
	}
	der = malloc(len);
	if (der == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	err = p11_attr_get(p11, p11->sess[0].h, cert, CKA_VALUE, der, len, &got, &p11->fail);
	if (err == MS_OK && got != len) {
		p11_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
			     "CKA_VALUE changed length between calls");
		err = MS_E_MALFORMED;
	}
	if (err == MS_E_NOTFOUND) {
		err = MS_E_TOKEN;
	}
	if (err != MS_OK) {
		goto out;
	}
	*der_out = der;
	*der_len = len;
	der = NULL;
out:
	free(der);
	return err;
}
