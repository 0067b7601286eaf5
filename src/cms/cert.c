// SPDX-License-Identifier: GPL-2.0-only
/*
 * The signer's X.509 certificate: parsed by mbedTLS, with the issuer,
 * serial and subjectKeyIdentifier bytes the SignerInfo needs. Parses
 * untrusted input.
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include "cms_internal.h"

/* OID TLV of id-ce-subjectKeyIdentifier 2.5.29.14 (RFC 5280, 4.2.1.2) */
static const uint8_t oid_skid[] = { 0x06, 0x03, 0x55, 0x1d, 0x0e };

/*
 * Extension ::= SEQUENCE {			-- RFC 5280, 4.1
 *	extnID OBJECT IDENTIFIER,
 *	critical BOOLEAN DEFAULT FALSE,
 *	extnValue OCTET STRING }
 * For 2.5.29.14 extnValue holds the DER of KeyIdentifier ::= OCTET STRING.
 */
static ms_err
ext_skid(struct ms_span ext, bool *is_skid, struct ms_span *skid)
{
	struct ms_span oid = { NULL, 0 }, val = { NULL, 0 }, crit = { NULL, 0 };
	ms_err err;

	err = ms_der_expect(&ext, DER_OID, &oid);
	if (err != MS_OK) {
		return err;
	}
	if (ext.len > 0 && ext.p[0] == 0x01) {	/* BOOLEAN critical */
		err = ms_der_expect(&ext, 0x01, &crit);
		if (err != MS_OK) {
			return err;
		}
	}
	err = ms_der_expect_only(ext, DER_OCTET_STRING, &val);
	if (err != MS_OK) {
		return err;
	}
	*is_skid = ms_der_span_eq(oid, oid_skid + 2, sizeof(oid_skid) - 2);
	if (!*is_skid) {
		return MS_OK;
	}
	err = ms_der_expect_only(val, DER_OCTET_STRING, skid);
	if (err != MS_OK) {
		return err;
	}
	/* An empty key identifier cannot name a key. */
	return (skid->len == 0) ? MS_E_MALFORMED : MS_OK;
}

ms_err
ms_cert_find_skid(struct ms_span exts, struct ms_span *skid)
{
	struct ms_span list = { NULL, 0 }, ext = { NULL, 0 }, found = { NULL, 0 };
	bool is_skid = false;
	ms_err err;

	/* Extensions ::= SEQUENCE SIZE (1..MAX) OF Extension */
	err = ms_der_expect_only(exts, DER_SEQUENCE, &list);
	if (err != MS_OK) {
		return err;
	}
	while (list.len > 0) {
		struct ms_span id = { NULL, 0 };

		err = ms_der_expect(&list, DER_SEQUENCE, &ext);
		if (err != MS_OK) {
			return err;
		}
		err = ext_skid(ext, &is_skid, &id);
		if (err != MS_OK) {
			return err;
		}
		if (!is_skid) {
			continue;
		}
		/* RFC 5280, 4.2: at most one instance of an extension. */
		if (found.len != 0) {
			return MS_E_MALFORMED;
		}
		found = id;
	}
	*skid = found;
	return MS_OK;
}

/* mbedTLS error codes are high-level + low-level; keep the high part. */
static ms_err
map_parse_err(int ret)
{
	int hi = -((-ret) & 0xff80);

	if (hi == MBEDTLS_ERR_X509_ALLOC_FAILED || hi == MBEDTLS_ERR_PK_ALLOC_FAILED) {
		return MS_E_NOMEM;
	}
	if (hi == MBEDTLS_ERR_PK_UNKNOWN_PK_ALG || hi == MBEDTLS_ERR_PK_UNKNOWN_NAMED_CURVE ||
	    hi == MBEDTLS_ERR_X509_UNKNOWN_SIG_ALG || hi == MBEDTLS_ERR_X509_FEATURE_UNAVAILABLE) {
		return MS_E_UNSUPPORTED;
	}
	return MS_E_MALFORMED;
}

/* DER if it starts as a SEQUENCE; else PEM, which mbedTLS wants NUL-terminated. */
static ms_err
parse_any(mbedtls_x509_crt *crt, const uint8_t *p, size_t len)
{
	struct ms_span in = { p, len }, body = { NULL, 0 };
	uint8_t *pem = NULL;
	int ret;

	if (p[0] == DER_SEQUENCE) {
		/* mbedTLS ignores bytes after the certificate; we do not. */
		if (ms_der_expect_only(in, DER_SEQUENCE, &body) != MS_OK) {
			return MS_E_MALFORMED;
		}
		ret = mbedtls_x509_crt_parse_der(crt, p, len);
		return (ret == 0) ? MS_OK : map_parse_err(ret);
	}
	pem = malloc(len + 1);
	if (pem == NULL) {
		return MS_E_NOMEM;
	}
	memcpy(pem, p, len);
	pem[len] = '\0';
	/*
	 * Every CERTIFICATE block must parse (a private key block before it,
	 * as in certs/signing_key.pem, is skipped); the first one is used,
	 * as sign-file's PEM_read_bio_X509() takes the first.
	 */
	ret = mbedtls_x509_crt_parse(crt, pem, len + 1);
	free(pem);
	if (ret < 0) {
		return map_parse_err(ret);
	}
	return (ret == 0) ? MS_OK : MS_E_MALFORMED;
}

/* Key type, curve and size; only what the kernel and we can both use. */
static ms_err
read_key(struct ms_cms_cert *cert)
{
	const mbedtls_pk_context *pk = &cert->crt->pk;
	mbedtls_pk_type_t t = mbedtls_pk_get_type(pk);

	cert->bits = mbedtls_pk_get_bitlen(pk);
	if (t == MBEDTLS_PK_RSA) {
		cert->type = MS_KEY_RSA;
		cert->curve = MS_EC_NONE;
		return ((cert->bits + 7) / 8 > MS_SIG_MAX) ? MS_E_UNSUPPORTED : MS_OK;
	}
	if (t != MBEDTLS_PK_ECKEY && t != MBEDTLS_PK_ECDSA) {
		return MS_E_UNSUPPORTED;
	}
	cert->type = MS_KEY_EC;
	/* 2.28 field access; 3.x: mbedtls_ecp_keypair_get_group_id(). */
	switch (mbedtls_pk_ec(*pk)->grp.id) {
	case MBEDTLS_ECP_DP_SECP256R1:
		cert->curve = MS_EC_P256;
		return MS_OK;
	case MBEDTLS_ECP_DP_SECP384R1:
		cert->curve = MS_EC_P384;
		return MS_OK;
	case MBEDTLS_ECP_DP_SECP521R1:
		cert->curve = MS_EC_P521;
		return MS_OK;
	default:
		return MS_E_UNSUPPORTED;
	}
}

/* The spans the sid is built from, each checked here once. */
static ms_err
read_ids(struct ms_cms_cert *cert)
{
	const mbedtls_x509_crt *crt = cert->crt;
	struct ms_span name = { NULL, 0 }, exts = { NULL, 0 };
	ms_err err;

	/* issuer_raw is the whole Name TLV (tag and length included). */
	cert->issuer.p = crt->issuer_raw.p;
	cert->issuer.len = crt->issuer_raw.len;
	err = ms_der_expect_only(cert->issuer, DER_SEQUENCE, &name);
	if (err != MS_OK) {
		return err;
	}
	/* serial holds the INTEGER's content bytes; mbedTLS also allows [2]. */
	if (crt->serial.tag != DER_INTEGER || crt->serial.len == 0) {
		return MS_E_MALFORMED;
	}
	cert->serial.p = crt->serial.p;
	cert->serial.len = crt->serial.len;
	cert->skid.p = NULL;
	cert->skid.len = 0;
	if (crt->v3_ext.p == NULL || crt->v3_ext.len == 0) {
		return MS_OK;
	}
	/* v3_ext covers the content of [3]: the Extensions SEQUENCE TLV. */
	exts.p = crt->v3_ext.p;
	exts.len = crt->v3_ext.len;
	return ms_cert_find_skid(exts, &cert->skid);
}

ms_err
ms_cms_cert_parse(const uint8_t *p, size_t len, struct ms_cms_cert **out)
{
	ms_err err = MS_E_INTERNAL;
	struct ms_cms_cert *cert = NULL;

	if (out == NULL) {
		return MS_E_ARG;
	}
	*out = NULL;
	if (p == NULL || len == 0 || len > MS_CMS_CERT_MAX) {
		return MS_E_MALFORMED;
	}
	cert = calloc(1, sizeof(*cert));
	if (cert == NULL) {
		return MS_E_NOMEM;
	}
	cert->crt = calloc(1, sizeof(*cert->crt));
	if (cert->crt == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	mbedtls_x509_crt_init(cert->crt);
	err = parse_any(cert->crt, p, len);
	if (err != MS_OK) {
		goto out;
	}
	err = read_key(cert);
	if (err != MS_OK) {
		goto out;
	}
	err = read_ids(cert);
	if (err != MS_OK) {
		goto out;
	}
	*out = cert;
	cert = NULL;
out:
	ms_cms_cert_free(cert);
	return err;
}

void
ms_cms_cert_free(struct ms_cms_cert *cert)
{
	if (cert == NULL) {
		return;
	}
	if (cert->crt != NULL) {
		mbedtls_x509_crt_free(cert->crt);
		free(cert->crt);
	}
	free(cert);
}

void
ms_cms_cert_key(const struct ms_cms_cert *cert, enum ms_key_type *type,
		enum ms_ec_curve *curve, size_t *bits)
{
	if (type != NULL) {
		*type = (cert == NULL) ? (enum ms_key_type)0 : cert->type;
	}
	if (curve != NULL) {
		*curve = (cert == NULL) ? MS_EC_NONE : cert->curve;
	}
	if (bits != NULL) {
		*bits = (cert == NULL) ? 0 : cert->bits;
	}
}

bool
ms_cms_cert_has_skid(const struct ms_cms_cert *cert)
{
	return cert != NULL && cert->skid.len != 0;
}

void
ms_cms_cert_subject(const struct ms_cms_cert *cert, char *out, size_t cap)
{
	char tmp[1024];
	const char *text = tmp;
	size_t n;

	if (out == NULL || cap == 0) {
		return;
	}
	if (cert == NULL || mbedtls_x509_dn_gets(tmp, sizeof(tmp), &cert->crt->subject) < 0) {
		text = "(subject not printable)";
	}
	n = strnlen(text, cap - 1);
	memcpy(out, text, n);
	out[n] = '\0';
}
