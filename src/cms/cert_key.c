// SPDX-License-Identifier: GPL-2.0-only
/*
 * Does a key belong to the certificate? Compares public keys given in the
 * forms PKCS#11 and PEM files use, through mbedTLS (signatures are verified
 * in sig_verify.c). Parses untrusted input.
 */
#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/x509_crt.h>

#include "cms_internal.h"
#include "mbedtls_compat.h"

/* Named-curve OID TLVs (RFC 5480, 2.1.1.1), as CKA_EC_PARAMS holds them. */
static const uint8_t oid_p256[] = {	/* 1.2.840.10045.3.1.7 */
	0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
};
static const uint8_t oid_p384[] = {	/* 1.3.132.0.34 */
	0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22,
};
static const uint8_t oid_p521[] = {	/* 1.3.132.0.35 */
	0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23,
};

/* The certificate's RSA key against N and E: MS_OK, MS_E_MISMATCH, MS_E_NOMEM. */
static ms_err
rsa_cmp(const struct ms_cms_cert *cert, const mbedtls_mpi *n, const mbedtls_mpi *e)
{
	ms_err err = MS_E_MISMATCH;
	mbedtls_mpi cn, ce;

	mbedtls_mpi_init(&cn);
	mbedtls_mpi_init(&ce);
	if (cert->type != MS_KEY_RSA) {
		goto out;
	}
	/* Copying public parts of a parsed key can only fail to allocate. */
	if (mbedtls_rsa_export(mbedtls_pk_rsa(cert->crt->pk), &cn, NULL, NULL, NULL, &ce) != 0) {
		err = MS_E_NOMEM;
		goto out;
	}
	if (mbedtls_mpi_cmp_mpi(&cn, n) == 0 && mbedtls_mpi_cmp_mpi(&ce, e) == 0) {
		err = MS_OK;
	}
out:
	mbedtls_mpi_free(&cn);
	mbedtls_mpi_free(&ce);
	return err;
}

/* The certificate's EC key against a point on curve @id: MS_OK, MS_E_MISMATCH, MS_E_NOMEM. */
static ms_err
ec_cmp(const struct ms_cms_cert *cert, mbedtls_ecp_group_id id, const mbedtls_ecp_point *q)
{
	const mbedtls_ecp_keypair *kp;
	mbedtls_ecp_point cq;
	ms_err err = MS_E_MISMATCH;

	mbedtls_ecp_point_init(&cq);
	if (cert->type != MS_KEY_EC) {
		goto out;
	}
	kp = mbedtls_pk_ec(cert->crt->pk);
	if (ms_mbed_ec_group_id(kp) != id) {
		goto out;
	}
	/* Copying the public point of a parsed key can only fail to allocate. */
	if (ms_mbed_ec_export(kp, NULL, NULL, &cq) != 0) {
		err = MS_E_NOMEM;
		goto out;
	}
	if (mbedtls_ecp_point_cmp(&cq, q) == 0) {
		err = MS_OK;
	}
out:
	mbedtls_ecp_point_free(&cq);
	return err;
}

ms_err
ms_cms_cert_match_rsa(const struct ms_cms_cert *cert, const uint8_t *n, size_t n_len,
		      const uint8_t *e, size_t e_len)
{
	ms_err err = MS_E_MALFORMED;
	mbedtls_mpi mn, me;

	mbedtls_mpi_init(&mn);
	mbedtls_mpi_init(&me);
	if (cert == NULL) {
		err = MS_E_ARG;
		goto out;
	}
	/* CKA_MODULUS and CKA_PUBLIC_EXPONENT as the token returned them. */
	if (n == NULL || e == NULL || n_len == 0 || e_len == 0 ||
	    n_len > MS_CMS_CERT_MAX || e_len > MS_CMS_CERT_MAX) {
		goto out;
	}
	if (mbedtls_mpi_read_binary(&mn, n, n_len) != 0 ||
	    mbedtls_mpi_read_binary(&me, e, e_len) != 0) {
		err = MS_E_NOMEM;
		goto out;
	}
	err = rsa_cmp(cert, &mn, &me);
out:
	mbedtls_mpi_free(&mn);
	mbedtls_mpi_free(&me);
	return err;
}

/* ECParameters ::= CHOICE { namedCurve OID, ... }; our three curves only. */
static ms_err
params_curve(const uint8_t *params, size_t params_len, enum ms_ec_curve *curve)
{
	const struct ms_span all = { params, params_len };
	struct ms_span in = all, body = { NULL, 0 };
	uint8_t tag = 0;

	if (params == NULL || ms_der_get(&in, &tag, &body) != MS_OK || in.len != 0) {
		return MS_E_MALFORMED;
	}
	if (ms_der_span_eq(all, oid_p256, sizeof(oid_p256))) {
		*curve = MS_EC_P256;
	} else if (ms_der_span_eq(all, oid_p384, sizeof(oid_p384))) {
		*curve = MS_EC_P384;
	} else if (ms_der_span_eq(all, oid_p521, sizeof(oid_p521))) {
		*curve = MS_EC_P521;
	} else {
		*curve = MS_EC_NONE;	/* explicit parameters or another curve */
	}
	return MS_OK;
}

/*
 * CKA_EC_POINT is DER OCTET STRING { 04 || X || Y } (PKCS#11 2.40, 2.3.3);
 * some tokens give the bare point. The bare form has a fixed length for
 * the curve, which also tells the two apart (a bare point can look like a
 * TLV when X starts with the right byte).
 */
static ms_err
point_bytes(const struct ms_cms_cert *cert, const uint8_t *point, size_t point_len,
	    struct ms_span *q)
{
	size_t bare = 1 + 2 * ((cert->bits + 7) / 8);

	if (point == NULL || point_len == 0) {
		return MS_E_MALFORMED;
	}
	if (point_len == bare && point[0] == 0x04) {
		q->p = point;
		q->len = point_len;
		return MS_OK;
	}
	return ms_der_expect_only((struct ms_span){ point, point_len }, DER_OCTET_STRING, q);
}

ms_err
ms_cms_cert_match_ec(const struct ms_cms_cert *cert, const uint8_t *params, size_t params_len,
		     const uint8_t *point, size_t point_len)
{
	ms_err err = MS_E_INTERNAL;
	enum ms_ec_curve curve = MS_EC_NONE;
	struct ms_span q = { NULL, 0 };
	const mbedtls_ecp_keypair *kp;
	mbedtls_ecp_group grp;
	mbedtls_ecp_point pt;

	mbedtls_ecp_group_init(&grp);
	mbedtls_ecp_point_init(&pt);
	if (cert == NULL) {
		err = MS_E_ARG;
		goto out;
	}
	err = params_curve(params, params_len, &curve);
	if (err != MS_OK) {
		goto out;
	}
	if (cert->type != MS_KEY_EC || curve != cert->curve) {
		err = MS_E_MISMATCH;
		goto out;
	}
	err = point_bytes(cert, point, point_len, &q);
	if (err != MS_OK) {
		goto out;
	}
	kp = mbedtls_pk_ec(cert->crt->pk);
	if (mbedtls_ecp_group_load(&grp, ms_mbed_ec_group_id(kp)) != 0) {
		err = MS_E_NOMEM;	/* the certificate's curve, loaded when it was parsed */
		goto out;
	}
	/* Rejects compressed points, wrong lengths and the point at infinity. */
	if (q.len < 2 || mbedtls_ecp_point_read_binary(&grp, &pt, q.p, q.len) != 0) {
		err = MS_E_MALFORMED;
		goto out;
	}
	err = ec_cmp(cert, grp.id, &pt);
out:
	mbedtls_ecp_point_free(&pt);
	mbedtls_ecp_group_free(&grp);
	return err;
}

/* A parsed SubjectPublicKeyInfo against the certificate's key. */
static ms_err
pk_cmp(const struct ms_cms_cert *cert, const mbedtls_pk_context *pk)
{
	mbedtls_pk_type_t t = mbedtls_pk_get_type(pk);
	const mbedtls_ecp_keypair *kp;
	ms_err err = MS_E_MISMATCH;
	mbedtls_mpi n, e;
	mbedtls_ecp_point q;

	mbedtls_mpi_init(&n);
	mbedtls_mpi_init(&e);
	mbedtls_ecp_point_init(&q);
	if (t == MBEDTLS_PK_RSA) {
		if (mbedtls_rsa_export(mbedtls_pk_rsa(*pk), &n, NULL, NULL, NULL, &e) != 0) {
			err = MS_E_NOMEM;
			goto out;
		}
		err = rsa_cmp(cert, &n, &e);
	} else if (t == MBEDTLS_PK_ECKEY || t == MBEDTLS_PK_ECDSA) {
		kp = mbedtls_pk_ec(*pk);
		if (ms_mbed_ec_export(kp, NULL, NULL, &q) != 0) {
			err = MS_E_NOMEM;
			goto out;
		}
		err = ec_cmp(cert, ms_mbed_ec_group_id(kp), &q);
	}
out:
	mbedtls_mpi_free(&n);
	mbedtls_mpi_free(&e);
	mbedtls_ecp_point_free(&q);
	return err;
}

/* An ML-DSA certificate against a SubjectPublicKeyInfo: the same set and key bytes. */
static ms_err
mldsa_cmp(const struct ms_cms_cert *cert, struct ms_span spki)
{
	enum ms_mldsa_set set = MS_MLDSA_NONE;
	struct ms_span pk = { NULL, 0 };
	ms_err err;

	err = ms_cert_mldsa_spki(spki, &set, &pk);
	if (err == MS_E_UNSUPPORTED) {
		return MS_E_MISMATCH;	/* a key of another kind */
	}
	if (err != MS_OK) {
		return err;
	}
	if (set != cert->mldsa || !ms_der_span_eq(pk, cert->mldsa_pk.p, cert->mldsa_pk.len)) {
		return MS_E_MISMATCH;
	}
	return MS_OK;
}

ms_err
ms_cms_cert_match_spki(const struct ms_cms_cert *cert, const uint8_t *spki, size_t spki_len)
{
	ms_err err = MS_E_INTERNAL;
	struct ms_span body = { NULL, 0 };
	mbedtls_pk_context pk;
	int ret, hi;

	mbedtls_pk_init(&pk);
	if (cert == NULL) {
		err = MS_E_ARG;
		goto out;
	}
	/* mbedTLS would ignore bytes after the SEQUENCE; we refuse them. */
	if (spki == NULL || spki_len > MS_CMS_CERT_MAX ||
	    ms_der_expect_only((struct ms_span){ spki, spki_len }, DER_SEQUENCE, &body) != MS_OK) {
		err = MS_E_MALFORMED;
		goto out;
	}
	if (cert->type == MS_KEY_MLDSA) {
		err = mldsa_cmp(cert, (struct ms_span){ spki, spki_len });
		goto out;
	}
	ret = mbedtls_pk_parse_public_key(&pk, spki, spki_len);
	if (ret != 0) {
		hi = -((-ret) & 0xff80);
		/* A well-formed key of another kind is simply not ours. */
		err = (hi == MBEDTLS_ERR_PK_UNKNOWN_PK_ALG ||
		       hi == MBEDTLS_ERR_PK_UNKNOWN_NAMED_CURVE) ? MS_E_MISMATCH : MS_E_MALFORMED;
		goto out;
	}
	err = pk_cmp(cert, &pk);
out:
	mbedtls_pk_free(&pk);
	return err;
}
