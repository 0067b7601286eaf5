// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading object attributes with C_GetAttributeValue's two calls, treating
 * every length the module returns as untrusted.
 */
#include <string.h>

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
ms_err
p11_attr_get(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj,
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
		p11_fail_set(f, "C_GetAttributeValue", rv, "%s", attr_name(type));
		return MS_E_TOKEN;
	}
	if (a.ulValueLen == CK_UNAVAILABLE_INFORMATION) {
		return MS_E_NOTFOUND;
	}
	if (a.ulValueLen > cap) {
		p11_fail_set(f, "C_GetAttributeValue", CKR_OK, "%s is %lu bytes, more than %zu",
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
		p11_fail_set(f, "C_GetAttributeValue", rv, "%s grew after its size was read",
			     attr_name(type));
		return MS_E_MALFORMED;
	}
	if (rv != CKR_OK) {
		p11_fail_set(f, "C_GetAttributeValue", rv, "%s", attr_name(type));
		return MS_E_TOKEN;
	}
	/* The module wrote into our @want bytes; a larger claim is a lie. */
	if (a.ulValueLen == CK_UNAVAILABLE_INFORMATION || a.ulValueLen > want) {
		p11_fail_set(f, "C_GetAttributeValue", CKR_OK, "%s length changed to %lu",
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

	err = p11_attr_get(p11, h, obj, type, buf, size, &len, f);
	if (err != MS_OK) {
		return err;
	}
	if (len != size) {
		p11_fail_set(f, "C_GetAttributeValue", CKR_OK, "%s is %zu bytes, not %zu",
			     attr_name(type), len, size);
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

/* A CK_ULONG attribute (CKA_KEY_TYPE, CKA_CLASS): exactly sizeof(CK_ULONG). */
ms_err
p11_attr_ulong(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj,
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
ms_err
p11_attr_bool(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj,
	      CK_ATTRIBUTE_TYPE type, bool *out, struct ms_p11_fail *f)
{
	uint8_t buf[sizeof(CK_BBOOL)];
	ms_err err = attr_exact(p11, h, obj, type, buf, sizeof(buf), f);

	if (err == MS_OK) {
		*out = buf[0] != CK_FALSE;
	}
	return err;
}
