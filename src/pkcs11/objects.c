// SPDX-License-Identifier: GPL-2.0-only
/*
 * Objects on the chosen token: reading attributes (every length a module
 * returns is untrusted), finding the one private key and the one
 * certificate a URI's object=, id= and type= name (RFC 7512, 2.3), the
 * facts about the key and its public half. Parses untrusted input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/fips204.h"
#include "p11_internal.h"

static const char *
attr_name(CK_ATTRIBUTE_TYPE type)
{
	switch (type) {
	case CKA_CLASS:
		return "CKA_CLASS";
	case CKA_LABEL:
		return "CKA_LABEL";
	case CKA_ID:
		return "CKA_ID";
	case CKA_VALUE:
		return "CKA_VALUE";
	case CKA_KEY_TYPE:
		return "CKA_KEY_TYPE";
	case CKA_SIGN:
		return "CKA_SIGN";
	case CKA_ALWAYS_AUTHENTICATE:
		return "CKA_ALWAYS_AUTHENTICATE";
	case CKA_MODULUS:
		return "CKA_MODULUS";
	case CKA_PUBLIC_EXPONENT:
		return "CKA_PUBLIC_EXPONENT";
	case CKA_EC_PARAMS:
		return "CKA_EC_PARAMS";
	case CKA_EC_POINT:
		return "CKA_EC_POINT";
	case CKA_PUBLIC_KEY_INFO:
		return "CKA_PUBLIC_KEY_INFO";
	case CKA_PARAMETER_SET:
		return "CKA_PARAMETER_SET";
	default:
		return "attribute";
	}
}

/*
 * Reads attribute @type of @obj into @out (@cap bytes). @out NULL asks for
 * the length only. Return: MS_OK; MS_E_NOTFOUND when the object has no such
 * attribute, it is sensitive, or its length is CK_UNAVAILABLE_INFORMATION;
 * MS_E_MALFORMED when the length is over @cap or grows between the size
 * query and the fetch; MS_E_TOKEN for any other failure (recorded in @f).
 */
static ms_err
attr_get(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj,
	 CK_ATTRIBUTE_TYPE type, uint8_t *out, size_t cap, size_t *out_len,
	 struct ms_p11_fail *f)
{
	CK_ATTRIBUTE a = { .type = type, .pValue = NULL, .ulValueLen = 0 };
	CK_ULONG want;
	CK_RV rv;

	rv = p11->fl->C_GetAttributeValue(h, obj, &a, 1);
	if (rv == CKR_ATTRIBUTE_TYPE_INVALID || rv == CKR_ATTRIBUTE_SENSITIVE) {
		return MS_E_NOTFOUND;
	}
	if (rv != CKR_OK) {
		ms_p11i_fail_set(f, "C_GetAttributeValue", rv, "%s", attr_name(type));
		return MS_E_TOKEN;
	}
	if (a.ulValueLen == CK_UNAVAILABLE_INFORMATION) {
		return MS_E_NOTFOUND;
	}
	if (a.ulValueLen > cap) {
		ms_p11i_fail_set(f, "C_GetAttributeValue", CKR_OK, "%s is %lu bytes, more than %zu",
				 attr_name(type), a.ulValueLen, cap);
		return MS_E_MALFORMED;
	}
	want = a.ulValueLen;
	if (out == NULL || want == 0) {
		*out_len = (size_t)want;
		return MS_OK;
	}
	a.pValue = out;
	a.ulValueLen = want;
	rv = p11->fl->C_GetAttributeValue(h, obj, &a, 1);
	if (rv == CKR_BUFFER_TOO_SMALL) {
		ms_p11i_fail_set(f, "C_GetAttributeValue", rv, "%s grew after its size was read",
				 attr_name(type));
		return MS_E_MALFORMED;
	}
	if (rv != CKR_OK) {
		ms_p11i_fail_set(f, "C_GetAttributeValue", rv, "%s", attr_name(type));
		return MS_E_TOKEN;
	}
	/* The module wrote into our @want bytes; a larger claim is a lie. */
	if (a.ulValueLen == CK_UNAVAILABLE_INFORMATION || a.ulValueLen > want) {
		ms_p11i_fail_set(f, "C_GetAttributeValue", CKR_OK, "%s length changed to %lu",
				 attr_name(type), a.ulValueLen);
		return MS_E_MALFORMED;
	}
	*out_len = (size_t)a.ulValueLen;
	return MS_OK;
}

/* A fixed-size attribute: exactly @size bytes into @buf. */
static ms_err
attr_exact(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj,
	   CK_ATTRIBUTE_TYPE type, uint8_t *buf, size_t size, struct ms_p11_fail *f)
{
	size_t len = 0;
	ms_err err;

	err = attr_get(p11, h, obj, type, buf, size, &len, f);
	if (err != MS_OK) {
		return err;
	}
	if (len != size) {
		ms_p11i_fail_set(f, "C_GetAttributeValue", CKR_OK, "%s is %zu bytes, not %zu",
				 attr_name(type), len, size);
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

/* A CK_ULONG attribute (CKA_KEY_TYPE, CKA_CLASS): exactly sizeof(CK_ULONG). */
static ms_err
attr_ulong(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj,
	   CK_ATTRIBUTE_TYPE type, CK_ULONG *out, struct ms_p11_fail *f)
{
	uint8_t buf[sizeof(CK_ULONG)];
	ms_err err = attr_exact(p11, h, obj, type, buf, sizeof(buf), f);

	if (err == MS_OK) {
		memcpy(out, buf, sizeof(buf));
	}
	return err;
}

/* A CK_BBOOL attribute: exactly one byte, non-zero is true. */
static ms_err
attr_bool(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj,
	  CK_ATTRIBUTE_TYPE type, bool *out, struct ms_p11_fail *f)
{
	uint8_t buf[sizeof(CK_BBOOL)];
	ms_err err = attr_exact(p11, h, obj, type, buf, sizeof(buf), f);

	if (err == MS_OK) {
		*out = buf[0] != CK_FALSE;
	}
	return err;
}

struct ec_curve {
	const uint8_t *oid;	/* DER OBJECT IDENTIFIER, tag and length included */
	size_t oid_len;
	size_t field_len;	/* bytes in r and in s */
	size_t widen_len;	/* a shorter digest is widened to this (sign.c) */
};

/* 1.2.840.10045.3.1.7 prime256v1 / NIST P-256 */
static const uint8_t oid_p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
/* 1.3.132.0.34 secp384r1 / NIST P-384 */
static const uint8_t oid_p384[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22 };
/* 1.3.132.0.35 secp521r1 / NIST P-521 */
static const uint8_t oid_p521[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23 };

/* The curves the kernel's ECDSA verifier knows (crypto/ecdsa.c), P-192 aside. */
static const struct ec_curve curves[] = {
	{ oid_p256, sizeof(oid_p256), 32, 32 },
	{ oid_p384, sizeof(oid_p384), 48, 48 },
	{ oid_p521, sizeof(oid_p521), 66, 64 },	/* 64 bytes: 512 of the order's 521 bits */
};

/*
 * @params is the DER ECParameters of CKA_EC_PARAMS; only the namedCurve
 * choice of a known curve is accepted (PKCS#11 3.0, 2.3.3).
 * Return: the curve's entry, NULL for any other value.
 */
static const struct ec_curve *
ec_curve_find(const uint8_t *params, size_t len)
{
	for (size_t i = 0; i < sizeof(curves) / sizeof(curves[0]); i++) {
		if (len == curves[i].oid_len && memcmp(params, curves[i].oid, len) == 0) {
			return &curves[i];
		}
	}
	return NULL;
}

/*
 * The URI's object attributes, CKA_CLASS replaced by @cls. The template
 * points into p11->uri and into @q, which must outlive its use. One entry
 * is left free for the caller (CKA_CERTIFICATE_TYPE).
 */
ms_err
ms_p11i_query_build(const struct ms_p11 *p11, struct ms_p11i_query *q, CK_OBJECT_CLASS cls)
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
		if (q->n == MS_P11I_TMPL_MAX - 1) {
			return MS_E_INTERNAL;
		}
		q->tmpl[q->n++] = attrs[i];
	}
	return MS_OK;
}

/* Appends the URI's object= and id= to @f, for messages. */
void
ms_p11i_query_describe(const struct ms_p11 *p11, struct ms_p11_fail *f)
{
	CK_ATTRIBUTE *label = p11_kit_uri_get_attribute(p11->uri, CKA_LABEL);
	CK_ATTRIBUTE *id = p11_kit_uri_get_attribute(p11->uri, CKA_ID);
	char text[MS_P11I_LABEL_MAX + 1];

	if (label != NULL && label->pValue != NULL) {
		ms_p11i_text_clean(text, sizeof(text), label->pValue, label->ulValueLen);
		ms_p11i_fail_append(f, " object=\"%s\"", text);
	}
	if (id != NULL && id->pValue != NULL) {
		ms_p11i_hex(text, sizeof(text), id->pValue, id->ulValueLen);
		ms_p11i_fail_append(f, " id=%s", text);
	}
	if (label == NULL && id == NULL) {
		ms_p11i_fail_append(f, " (no object= or id= in the URI)");
	}
}

/* ms_p11i_query_describe() and the chosen token's label. */
static void
describe_objects(struct ms_p11 *p11, struct ms_p11_fail *f)
{
	ms_p11i_query_describe(p11, f);
	ms_p11i_fail_append(f, " on token \"%s\"", p11->token_label);
}

/*
 * One C_FindObjects of at most @cap handles on session @h of module @fl
 * (PKCS#11 3.0, 5.7); @cap above one is enough to tell "one" from
 * "several". Failures go to @f.
 */
ms_err
ms_p11i_find_on(CK_FUNCTION_LIST *fl, CK_SESSION_HANDLE h, CK_ATTRIBUTE *tmpl, CK_ULONG n_tmpl,
		CK_OBJECT_HANDLE *out, size_t cap, size_t *n_out, struct ms_p11_fail *f)
{
	CK_ULONG n = 0;
	CK_RV rv;

	rv = fl->C_FindObjectsInit(h, tmpl, n_tmpl);
	if (rv != CKR_OK) {
		ms_p11i_fail_set(f, "C_FindObjectsInit", rv, "searching objects");
		return MS_E_TOKEN;
	}
	rv = fl->C_FindObjects(h, out, (CK_ULONG)cap, &n);
	(void)fl->C_FindObjectsFinal(h);
	if (rv != CKR_OK) {
		ms_p11i_fail_set(f, "C_FindObjects", rv, "searching objects");
		return MS_E_TOKEN;
	}
	if (n > cap) {
		ms_p11i_fail_set(f, "C_FindObjects", CKR_OK, "returned %lu handles for %zu", n,
				 cap);
		return MS_E_MALFORMED;
	}
	*n_out = (size_t)n;
	return MS_OK;
}

/* ms_p11i_find_on() on the chosen token, failures in p11->fail naming it. */
static ms_err
find_objects(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_ATTRIBUTE *tmpl, CK_ULONG n_tmpl,
	     CK_OBJECT_HANDLE *out, size_t cap, size_t *n_out)
{
	ms_err err = ms_p11i_find_on(p11->fl, h, tmpl, n_tmpl, out, cap, n_out, &p11->fail);

	if (err != MS_OK) {
		ms_p11i_fail_append(&p11->fail, " on token \"%s\"", p11->token_label);
	}
	return err;
}

/* Lists label and id of each object in p11->fail's detail. */
static void
list_candidates(struct ms_p11 *p11, const CK_OBJECT_HANDLE *objs, size_t n)
{
	uint8_t buf[MS_P11I_LABEL_MAX];
	char label[MS_P11I_LABEL_MAX + 1], id[2 * MS_P11I_ID_MAX + 1];
	struct ms_p11_fail ignore;
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "?");
		snprintf(id, sizeof(id), "?");
		if (attr_get(p11, p11->sess[0].h, objs[i], CKA_LABEL, buf, sizeof(buf), &len,
			     &ignore) == MS_OK) {
			ms_p11i_text_clean(label, sizeof(label), buf, len);
		}
		if (attr_get(p11, p11->sess[0].h, objs[i], CKA_ID, buf, MS_P11I_ID_MAX, &len,
			     &ignore) == MS_OK) {
			ms_p11i_hex(id, sizeof(id), buf, len);
		}
		ms_p11i_fail_append(&p11->fail, "\n  object=\"%s\" id=%s", label, id);
	}
}

/*
 * Finds exactly one object of the query. Return: MS_OK with *@obj set,
 * MS_E_NOTFOUND, MS_E_AMBIGUOUS (candidates listed), MS_E_TOKEN.
 */
static ms_err
find_one(struct ms_p11 *p11, struct ms_p11i_query *q, const char *what, CK_OBJECT_HANDLE *obj)
{
	CK_OBJECT_HANDLE objs[MS_P11I_FIND_MAX];
	size_t n = 0;
	ms_err err;

	err = find_objects(p11, p11->sess[0].h, q->tmpl, q->n, objs, MS_P11I_FIND_MAX, &n);
	if (err != MS_OK) {
		return err;
	}
	if (n == 0) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "no %s matches", what);
		describe_objects(p11, &p11->fail);
		if (q->cls == CKO_PRIVATE_KEY && !p11->login_done &&
		    (p11->token_flags & CKF_LOGIN_REQUIRED) != 0) {
			ms_p11i_fail_append(&p11->fail,
					    " (not logged in: private keys are hidden)");
		}
		return MS_E_NOTFOUND;
	}
	if (n > 1) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "%s%zu objects of type %s match",
				 n == MS_P11I_FIND_MAX ? "at least " : "", n, what);
		describe_objects(p11, &p11->fail);
		ms_p11i_fail_append(&p11->fail, "; use object= and id= to pick one:");
		list_candidates(p11, objs, n);
		return MS_E_AMBIGUOUS;
	}
	*obj = objs[0];
	return MS_OK;
}

/* An optional attribute: absent is fine, any other failure is not. */
static ms_err
optional(ms_err err, bool *is_present)
{
	*is_present = (err == MS_OK);
	return err == MS_E_NOTFOUND ? MS_OK : err;
}

/* CKA_PARAMETER_SET of a CKK_ML_DSA key: which of FIPS 204's sets (PKCS#11 3.2). */
static ms_err
key_mldsa_set(struct ms_p11 *p11, CK_OBJECT_HANDLE key)
{
	CK_ULONG set = 0;
	ms_err err;

	err = attr_ulong(p11, p11->sess[0].h, key, CKA_PARAMETER_SET, &set, &p11->fail);
	if (err == MS_E_NOTFOUND) {
		ms_p11i_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
				 "the ML-DSA key has no readable CKA_PARAMETER_SET");
		return MS_E_TOKEN;
	}
	if (err != MS_OK) {
		return err;
	}
	switch (set) {
	case CKP_ML_DSA_44:
		p11->key_type = MS_P11_KEY_MLDSA44;
		return MS_OK;
	case CKP_ML_DSA_65:
		p11->key_type = MS_P11_KEY_MLDSA65;
		return MS_OK;
	case CKP_ML_DSA_87:
		p11->key_type = MS_P11_KEY_MLDSA87;
		return MS_OK;
	default:
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
				 "ML-DSA key of parameter set 0x%lx, none of ML-DSA-44, -65, -87",
				 set);
		return MS_E_UNSUPPORTED;
	}
}

static ms_err
key_type(struct ms_p11 *p11, CK_OBJECT_HANDLE key)
{
	CK_ULONG kt = 0;
	ms_err err;

	err = attr_ulong(p11, p11->sess[0].h, key, CKA_KEY_TYPE, &kt, &p11->fail);
	if (err == MS_E_NOTFOUND) {
		ms_p11i_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
				 "the private key has no readable CKA_KEY_TYPE");
		return MS_E_TOKEN;
	}
	if (err != MS_OK) {
		return err;
	}
	if (kt == CKK_RSA) {
		p11->key_type = MS_P11_KEY_RSA;
		p11->key_mech = CKM_RSA_PKCS;
	} else if (kt == CKK_EC) {
		p11->key_type = MS_P11_KEY_EC;
		p11->key_mech = CKM_ECDSA;
	} else if (kt == CKK_ML_DSA) {
		p11->key_mech = CKM_ML_DSA;
		return key_mldsa_set(p11, key);
	} else {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
				 "key type 0x%lx is none of CKK_RSA, CKK_EC, CKK_ML_DSA", kt);
		return MS_E_UNSUPPORTED;
	}
	return MS_OK;
}

/* FIPS 204, Table 2: an ML-DSA signature's one length per set. */
static size_t
mldsa_sig_len(enum ms_p11_key_type type)
{
	switch (type) {
	case MS_P11_KEY_MLDSA44:
		return MS_MLDSA44_SIG_BYTES;
	case MS_P11_KEY_MLDSA65:
		return MS_MLDSA65_SIG_BYTES;
	case MS_P11_KEY_MLDSA87:
		return MS_MLDSA87_SIG_BYTES;
	default:
		return 0;
	}
}

/* The length C_Sign must return: r||s for EC, the modulus for RSA, ML-DSA's set's. */
static ms_err
key_sig_len(struct ms_p11 *p11, CK_OBJECT_HANDLE key)
{
	uint8_t buf[MS_P11I_MODULUS_MAX];
	const struct ec_curve *curve = NULL;
	size_t len = 0, skip = 0;
	bool is_present = false;
	ms_err err;

	p11->key_sig_len = 0;
	p11->key_ec_widen_len = 0;
	if (p11->key_mech == CKM_ML_DSA) {
		p11->key_sig_len = mldsa_sig_len(p11->key_type);
		return MS_OK;
	}
	if (p11->key_type == MS_P11_KEY_EC) {
		err = attr_get(p11, p11->sess[0].h, key, CKA_EC_PARAMS, buf,
			       MS_P11I_EC_PARAMS_MAX, &len, &p11->fail);
		if (err == MS_E_NOTFOUND) {
			ms_p11i_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
					 "the EC key has no readable CKA_EC_PARAMS");
			return MS_E_TOKEN;
		}
		if (err != MS_OK) {
			return err;
		}
		curve = ec_curve_find(buf, len);
		if (curve == NULL) {
			ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
					 "EC key on a curve other than P-256, P-384 or P-521");
			return MS_E_UNSUPPORTED;
		}
		p11->key_sig_len = 2 * curve->field_len;
		p11->key_ec_widen_len = curve->widen_len;
		return MS_OK;
	}
	/* RSA: unknown (0) if the key hides its modulus; C_Sign then decides. */
	err = optional(attr_get(p11, p11->sess[0].h, key, CKA_MODULUS, buf, sizeof(buf),
				&len, &p11->fail), &is_present);
	if (err != MS_OK || !is_present) {
		return err;
	}
	while (skip < len && buf[skip] == 0) {
		skip++;
	}
	p11->key_sig_len = len - skip;
	return MS_OK;
}

/* Fills the cached facts about the key that ms_p11_sign() relies on. */
static ms_err
key_facts(struct ms_p11 *p11, CK_OBJECT_HANDLE key)
{
	CK_SESSION_HANDLE h = p11->sess[0].h;
	bool is_present = false, can_sign = false, always = false;
	ms_err err;

	err = key_type(p11, key);
	if (err != MS_OK) {
		return err;
	}
	err = optional(attr_bool(p11, h, key, CKA_SIGN, &can_sign, &p11->fail), &is_present);
	if (err != MS_OK) {
		return err;
	}
	if (is_present && !can_sign) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "the private key has CKA_SIGN false");
		return MS_E_UNSUPPORTED;
	}
	err = optional(attr_bool(p11, h, key, CKA_ALWAYS_AUTHENTICATE, &always, &p11->fail),
		       &is_present);
	if (err != MS_OK) {
		return err;
	}
	p11->key_always_auth = is_present && always;
	err = optional(attr_get(p11, h, key, CKA_ID, p11->key_id, sizeof(p11->key_id),
				&p11->key_id_len, &p11->fail), &p11->key_has_id);
	if (err != MS_OK) {
		return err;
	}
	return key_sig_len(p11, key);
}

ms_err
ms_p11_key_find(struct ms_p11 *p11, enum ms_p11_key_type *type_out)
{
	struct ms_p11i_query q;
	CK_OBJECT_HANDLE key = CK_INVALID_HANDLE;
	ms_err err = MS_E_INTERNAL;

	if (p11 == NULL || type_out == NULL || !p11->has_token || !p11->sess[0].is_open) {
		return MS_E_ARG;
	}
	p11->has_key = false;
	err = ms_p11i_query_build(p11, &q, CKO_PRIVATE_KEY);
	if (err != MS_OK) {
		return err;
	}
	if (q.has_uri_cls && q.uri_cls != CKO_PRIVATE_KEY) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
				 "the key URI has a type= other than \"private\"");
		return MS_E_ARG;
	}
	err = find_one(p11, &q, "private key", &key);
	if (err != MS_OK) {
		return err;
	}
	err = key_facts(p11, key);
	if (err != MS_OK) {
		return err;
	}
	p11->key = key;
	p11->has_key = true;
	*type_out = p11->key_type;
	return MS_OK;
}

ms_err
ms_p11i_key_refind(struct ms_p11 *p11, CK_SESSION_HANDLE h)
{
	struct ms_p11i_query q;
	CK_OBJECT_HANDLE objs[2];
	size_t n = 0;
	ms_err err;

	err = ms_p11i_query_build(p11, &q, CKO_PRIVATE_KEY);
	if (err == MS_OK) {
		err = find_objects(p11, h, q.tmpl, q.n, objs, 2, &n);
	}
	if (err != MS_OK) {
		return err;
	}
	if (n != 1) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
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
	struct ms_p11i_query q;
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
	err = ms_p11i_query_build(p11, &q, CKO_CERTIFICATE);
	if (err != MS_OK) {
		goto out;
	}
	/*
	 * kbuild passes one URI, often with type=private, for key and
	 * certificate alike: a key type= selects the certificate of that pair.
	 */
	if (q.has_uri_cls && q.uri_cls != CKO_CERTIFICATE && q.uri_cls != CKO_PRIVATE_KEY &&
	    q.uri_cls != CKO_PUBLIC_KEY) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
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
	err = attr_get(p11, p11->sess[0].h, cert, CKA_VALUE, NULL, MS_P11I_CERT_MAX, &len,
		       &p11->fail);
	if (err == MS_E_NOTFOUND || (err == MS_OK && len == 0)) {
		ms_p11i_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
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
	err = attr_get(p11, p11->sess[0].h, cert, CKA_VALUE, der, len, &got, &p11->fail);
	if (err == MS_OK && got != len) {
		ms_p11i_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
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

static ms_err
read_rsa(struct ms_p11 *p11, CK_OBJECT_HANDLE obj, struct ms_p11_pubkey *out)
{
	bool has_mod = false, has_exp = false;
	ms_err err;

	err = optional(attr_get(p11, p11->sess[0].h, obj, CKA_MODULUS, out->modulus,
				sizeof(out->modulus), &out->modulus_len, &p11->fail),
		       &has_mod);
	if (err != MS_OK) {
		return err;
	}
	err = optional(attr_get(p11, p11->sess[0].h, obj, CKA_PUBLIC_EXPONENT,
				out->exponent, sizeof(out->exponent), &out->exponent_len,
				&p11->fail), &has_exp);
	out->has_rsa = has_mod && has_exp && out->modulus_len > 0 && out->exponent_len > 0;
	if (!out->has_rsa) {
		out->modulus_len = 0;
		out->exponent_len = 0;
	}
	return err;
}

static ms_err
read_ec(struct ms_p11 *p11, CK_OBJECT_HANDLE obj, struct ms_p11_pubkey *out)
{
	bool has_params = false, has_point = false;
	ms_err err;

	err = optional(attr_get(p11, p11->sess[0].h, obj, CKA_EC_PARAMS, out->ec_params,
				sizeof(out->ec_params), &out->ec_params_len, &p11->fail),
		       &has_params);
	if (err != MS_OK) {
		return err;
	}
	err = optional(attr_get(p11, p11->sess[0].h, obj, CKA_EC_POINT, out->ec_point,
				sizeof(out->ec_point), &out->ec_point_len, &p11->fail),
		       &has_point);
	out->has_ec = has_params && has_point && out->ec_params_len > 0 &&
		      out->ec_point_len > 0;
	if (!out->has_ec) {
		out->ec_params_len = 0;
		out->ec_point_len = 0;
	}
	return err;
}

static ms_err
read_spki(struct ms_p11 *p11, CK_OBJECT_HANDLE obj, struct ms_p11_pubkey *out)
{
	bool has_spki = false;
	ms_err err;

	err = optional(attr_get(p11, p11->sess[0].h, obj, CKA_PUBLIC_KEY_INFO, out->spki,
				sizeof(out->spki), &out->spki_len, &p11->fail), &has_spki);
	out->has_spki = has_spki && out->spki_len > 0;
	if (!out->has_spki) {
		out->spki_len = 0;
	}
	return err;
}

/*
 * The CKO_PUBLIC_KEY object of the pair: same CKA_ID, same key type, and
 * the URI's object= when it has one. MS_E_NOTFOUND unless exactly one.
 */
static ms_err
find_public(struct ms_p11 *p11, CK_OBJECT_HANDLE *pub)
{
	CK_OBJECT_CLASS cls = CKO_PUBLIC_KEY;
	CK_KEY_TYPE kt = p11->key_mech == CKM_RSA_PKCS ? CKK_RSA :
			 p11->key_mech == CKM_ECDSA ? CKK_EC : CKK_ML_DSA;
	CK_ATTRIBUTE *label = p11_kit_uri_get_attribute(p11->uri, CKA_LABEL);
	CK_ATTRIBUTE tmpl[4];
	CK_OBJECT_HANDLE objs[2];
	CK_ULONG n = 0;
	size_t found = 0;
	ms_err err;

	if (!p11->key_has_id && label == NULL) {
		return MS_E_NOTFOUND;	/* nothing ties a public key to ours */
	}
	tmpl[n++] = (CK_ATTRIBUTE){ CKA_CLASS, &cls, sizeof(cls) };
	tmpl[n++] = (CK_ATTRIBUTE){ CKA_KEY_TYPE, &kt, sizeof(kt) };
	if (p11->key_has_id) {
		tmpl[n++] = (CK_ATTRIBUTE){ CKA_ID, p11->key_id, (CK_ULONG)p11->key_id_len };
	}
	if (label != NULL) {
		tmpl[n++] = *label;
	}
	err = find_objects(p11, p11->sess[0].h, tmpl, n, objs, 2, &found);
	if (err != MS_OK) {
		return err;
	}
	if (found != 1) {
		return MS_E_NOTFOUND;
	}
	*pub = objs[0];
	return MS_OK;
}

ms_err
ms_p11_key_public(struct ms_p11 *p11, struct ms_p11_pubkey *out)
{
	CK_OBJECT_HANDLE pub = CK_INVALID_HANDLE;
	bool is_rsa, is_ec, has_pub = false;
	ms_err err = MS_E_INTERNAL;

	if (p11 == NULL || out == NULL || !p11->has_key) {
		return MS_E_ARG;
	}
	memset(out, 0, sizeof(*out));
	is_rsa = p11->key_type == MS_P11_KEY_RSA;
	is_ec = p11->key_type == MS_P11_KEY_EC;
	/* ML-DSA shows its public half as CKA_PUBLIC_KEY_INFO only. */
	err = is_rsa ? read_rsa(p11, p11->key, out) : is_ec ? read_ec(p11, p11->key, out) : MS_OK;
	if (err == MS_OK) {
		err = read_spki(p11, p11->key, out);
	}
	if (err != MS_OK ||
	    (out->has_spki && (is_rsa ? out->has_rsa : is_ec ? out->has_ec : true))) {
		goto out;
	}
	err = optional(find_public(p11, &pub), &has_pub);
	if (err != MS_OK || !has_pub) {
		goto out;
	}
	if (is_rsa && !out->has_rsa) {
		err = read_rsa(p11, pub, out);
	} else if (is_ec && !out->has_ec) {
		err = read_ec(p11, pub, out);
	}
	if (err == MS_OK && !out->has_spki) {
		err = read_spki(p11, pub, out);
	}
out:
	return err;
}
