// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CMS pieces of an ML-DSA module signature (RFC 9882): the
 * AlgorithmIdentifiers, and the signed attributes sign-file 7.2 writes
 * with OpenSSL 3.5/3.6 (contentType id-data and messageDigest SHA-512 of
 * the module, nothing else), written and read. Reads untrusted input.
 */
#include <string.h>

#include "cms_internal.h"

/* id-ml-dsa-44/65/87 with parameters absent (RFC 9882, 2; RFC 9881, 2). */
static const uint8_t alg_mldsa[3][13] = {
	{ 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11 },
	{ 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x12 },
	{ 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x13 },
};

/* id-contentType 1.2.840.113549.1.9.3, id-messageDigest 1.2.840.113549.1.9.4 (RFC 5652, 11). */
static const uint8_t oid_content_type[] = {
	0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x03,
};
static const uint8_t oid_message_digest[] = {
	0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x04,
};

const uint8_t *
ms_mldsa_alg_id(enum ms_mldsa_set set, size_t *len)
{
	*len = sizeof(alg_mldsa[0]);
	switch (set) {
	case MS_MLDSA_44:
		return alg_mldsa[0];
	case MS_MLDSA_65:
		return alg_mldsa[1];
	case MS_MLDSA_87:
		return alg_mldsa[2];
	case MS_MLDSA_NONE:
		break;
	}
	*len = 0;
	return NULL;
}

enum ms_mldsa_set
ms_mldsa_set_of_oid(struct ms_span oid)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		/* The OID content: after 30 0b 06 09. */
		if (ms_der_span_eq(oid, alg_mldsa[i] + 4, sizeof(alg_mldsa[i]) - 4)) {
			return (enum ms_mldsa_set)(MS_MLDSA_44 + i);
		}
	}
	return MS_MLDSA_NONE;
}

/*
 * SignedAttributes ::= SET SIZE (1..MAX) OF Attribute	-- RFC 5652, 5.3
 * Attribute ::= SEQUENCE { attrType OID, attrValues SET OF AttributeValue }
 * Here: contentType { id-data }, messageDigest { OCTET STRING digest }, in
 * the order DER sorts a SET OF (X.690, 11.6): the contentType encoding is
 * the shorter and differs at its second byte, so it comes first.
 */
static size_t
ct_body_size(void)
{
	return sizeof(oid_content_type) + ms_der_tlv_size(sizeof(ms_oid_data));
}

static size_t
md_body_size(size_t digest_len)
{
	return sizeof(oid_message_digest) + ms_der_tlv_size(ms_der_tlv_size(digest_len));
}

ms_err
ms_cms_mldsa_attrs_encode(const uint8_t *sha512, size_t sha512_len, uint8_t *out, size_t cap,
			  size_t *out_len)
{
	struct ms_der_out o;
	size_t body, need;

	if (sha512 == NULL || out_len == NULL || sha512_len != ms_cms_hash_size(MS_HASH_SHA512)) {
		return MS_E_ARG;
	}
	body = ms_der_tlv_size(ct_body_size()) + ms_der_tlv_size(md_body_size(sha512_len));
	need = ms_der_tlv_size(body);
	if (out == NULL) {
		*out_len = need;
		return MS_OK;
	}
	if (cap < need) {
		return MS_E_NOSPACE;
	}
	ms_der_out_init(&o, out, cap);
	ms_der_header(&o, DER_SET, body);
	ms_der_header(&o, DER_SEQUENCE, ct_body_size());
	ms_der_bytes(&o, oid_content_type, sizeof(oid_content_type));
	ms_der_header(&o, DER_SET, sizeof(ms_oid_data));
	ms_der_bytes(&o, ms_oid_data, sizeof(ms_oid_data));
	ms_der_header(&o, DER_SEQUENCE, md_body_size(sha512_len));
	ms_der_bytes(&o, oid_message_digest, sizeof(oid_message_digest));
	ms_der_header(&o, DER_SET, ms_der_tlv_size(sha512_len));
	ms_der_header(&o, DER_OCTET_STRING, sha512_len);
	ms_der_bytes(&o, sha512, sha512_len);
	if (o.err != MS_OK) {
		return o.err;
	}
	if (o.len != need) {
		return MS_E_INTERNAL;
	}
	*out_len = need;
	return MS_OK;
}

/*
 * The kernel's rules for signed attributes (pkcs7_parser.c,
 * pkcs7_sig_note_authenticated_attr() and pkcs7_check_authattrs()):
 * contentType and messageDigest each once, with one value; contentType
 * id-data. Anything else sign-file does not write is refused too.
 */
ms_err
ms_mldsa_attrs_read(struct ms_span list, struct ms_span *message_digest, const char **why)
{
	struct ms_span attr = { NULL, 0 }, oid = { NULL, 0 }, values = { NULL, 0 };
	struct ms_span value = { NULL, 0 }, ct = { NULL, 0 };
	bool has_ct = false, has_md = false;

	while (list.len > 0) {
		if (ms_der_expect(&list, DER_SEQUENCE, &attr) != MS_OK ||
		    ms_der_expect(&attr, DER_OID, &oid) != MS_OK ||
		    ms_der_expect_only(attr, DER_SET, &values) != MS_OK) {
			*why = "bad signed attribute";
			return MS_E_MALFORMED;
		}
		if (ms_der_span_eq(oid, oid_content_type + 2, sizeof(oid_content_type) - 2)) {
			if (has_ct || ms_der_expect_only(values, DER_OID, &ct) != MS_OK) {
				*why = "contentType attribute repeated or not one OID";
				return MS_E_MALFORMED;
			}
			if (!ms_der_span_eq(ct, ms_oid_data + 2, sizeof(ms_oid_data) - 2)) {
				*why = "contentType attribute is not id-data";
				return MS_E_MALFORMED;
			}
			has_ct = true;
		} else if (ms_der_span_eq(oid, oid_message_digest + 2,
					  sizeof(oid_message_digest) - 2)) {
			if (has_md || ms_der_expect_only(values, DER_OCTET_STRING, &value) != MS_OK) {
				*why = "messageDigest attribute repeated or not one OCTET STRING";
				return MS_E_MALFORMED;
			}
			*message_digest = value;
			has_md = true;
		} else {
			*why = "a signed attribute other than contentType and messageDigest";
			return MS_E_UNSUPPORTED;
		}
	}
	if (!has_ct || !has_md) {
		*why = "missing required signed attribute (contentType, messageDigest)";
		return MS_E_MALFORMED;
	}
	return MS_OK;
}
