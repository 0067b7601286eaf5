// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bytes a key signs (PKCS#1 DigestInfo or the bare digest) and the
 * conversion of a raw PKCS#11 signature into the SignerInfo signature value.
 */
#include "cms_internal.h"

/*
 * For CKM_RSA_PKCS the token pads whatever it is given, so we hand it
 * DigestInfo ::= SEQUENCE { digestAlgorithm, digest OCTET STRING }
 * (RFC 8017, 9.2 step 2). CKM_ECDSA signs the digest itself (PKCS#11 2.40,
 * 2.3.6); the kernel truncates it to the order's size as ECDSA requires.
 */
ms_err
ms_cms_tbs_encode(enum ms_key_type type, enum ms_hash_alg alg,
		  const uint8_t *digest, size_t digest_len,
		  uint8_t *out, size_t cap, size_t *out_len)
{
	const struct ms_hash_info *h = ms_hash_info(alg);
	struct ms_der_out o;
	size_t need;

	if (h == NULL || out_len == NULL || digest == NULL || digest_len != h->size) {
		return MS_E_ARG;
	}
	if (type == MS_KEY_RSA) {
		need = h->di_prefix_len + h->size;
	} else if (type == MS_KEY_EC) {
		need = h->size;
	} else {
		return MS_E_ARG;
	}
	if (out == NULL) {
		*out_len = need;
		return MS_OK;
	}
	if (cap < need) {
		return MS_E_NOSPACE;
	}
	ms_der_out_init(&o, out, cap);
	if (type == MS_KEY_RSA) {
		ms_der_bytes(&o, h->di_prefix, h->di_prefix_len);
	}
	ms_der_bytes(&o, digest, digest_len);
	if (o.err != MS_OK) {
		return o.err;
	}
	if (o.len != need) {
		return MS_E_INTERNAL;
	}
	*out_len = need;
	return MS_OK;
}

ms_err
ms_ec_split(const uint8_t *raw, size_t raw_len, struct ms_span *r, struct ms_span *s)
{
	size_t half, i;
	bool r_zero = true, s_zero = true;

	/* PKCS#11 2.40, 2.3.1: r and s, each exactly nLen bytes. */
	if (raw == NULL || raw_len == 0 || raw_len % 2 != 0 ||
	    raw_len > 2 * MS_CMS_EC_HALF_MAX) {
		return MS_E_MALFORMED;
	}
	half = raw_len / 2;
	for (i = 0; i < half; i++) {
		if (raw[i] != 0) {
			r_zero = false;
		}
		if (raw[half + i] != 0) {
			s_zero = false;
		}
	}
	/* 0 < r, s < n (SEC 1, 4.1.4): a zero never comes from a real signer. */
	if (r_zero || s_zero) {
		return MS_E_MALFORMED;
	}
	r->p = raw;
	r->len = half;
	s->p = raw + half;
	s->len = half;
	return MS_OK;
}

/*
 * Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }	-- RFC 5480, 2.2.3;
 * RFC 5753, 7.1.3 puts its DER in the SignerInfo signature.
 */
static ms_err
ec_sig_encode(const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap, size_t *out_len)
{
	struct ms_span r = { NULL, 0 }, s = { NULL, 0 };
	struct ms_der_out o;
	size_t body, need;
	ms_err err;

	err = ms_ec_split(raw, raw_len, &r, &s);
	if (err != MS_OK) {
		return err;
	}
	body = ms_der_tlv_size(ms_der_uint_body_size(r.p, r.len)) +
	       ms_der_tlv_size(ms_der_uint_body_size(s.p, s.len));
	need = ms_der_tlv_size(body);
	if (out == NULL) {
		*out_len = need;
		return MS_OK;
	}
	if (cap < need) {
		return MS_E_NOSPACE;
	}
	ms_der_out_init(&o, out, cap);
	ms_der_header(&o, DER_SEQUENCE, body);
	ms_der_uint(&o, r.p, r.len);
	ms_der_uint(&o, s.p, s.len);
	if (o.err != MS_OK) {
		return o.err;
	}
	if (o.len != need) {
		return MS_E_INTERNAL;
	}
	*out_len = need;
	return MS_OK;
}

/* RSASSA-PKCS1-v1_5 output is the signature value as is (RFC 5652, 5.3). */
static ms_err
rsa_sig_encode(const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap, size_t *out_len)
{
	struct ms_der_out o;

	if (raw == NULL || raw_len == 0 || raw_len > MS_RSA_MAX_BYTES) {
		return MS_E_MALFORMED;
	}
	if (out == NULL) {
		*out_len = raw_len;
		return MS_OK;
	}
	if (cap < raw_len) {
		return MS_E_NOSPACE;
	}
	ms_der_out_init(&o, out, cap);
	ms_der_bytes(&o, raw, raw_len);
	if (o.err != MS_OK) {
		return o.err;
	}
	*out_len = raw_len;
	return MS_OK;
}

ms_err
ms_cms_sig_encode(enum ms_key_type type, const uint8_t *raw, size_t raw_len,
		  uint8_t *out, size_t cap, size_t *out_len)
{
	if (out_len == NULL) {
		return MS_E_ARG;
	}
	if (type == MS_KEY_RSA) {
		return rsa_sig_encode(raw, raw_len, out, cap, out_len);
	}
	if (type == MS_KEY_EC) {
		return ec_sig_encode(raw, raw_len, out, cap, out_len);
	}
	return MS_E_ARG;
}
