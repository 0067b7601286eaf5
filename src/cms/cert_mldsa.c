// SPDX-License-Identifier: GPL-2.0-only
/*
 * Certificates with an ML-DSA key (RFC 9881: id-ml-dsa-44/65/87,
 * 2.16.840.1.101.3.4.3.17-19, no parameters, the raw public key in the
 * BIT STRING), which mbedTLS 2.28 cannot parse: read with our DER reader,
 * for what modsign takes from a certificate (issuer, serial,
 * subjectKeyIdentifier, subject, the key). The certificate's own signature
 * is not checked, as for every certificate (the kernel trusts the one it
 * was built with). Parses untrusted input.
 */
#include <stdlib.h>
#include <string.h>

#include "cms_internal.h"

#define DER_BIT_STRING	0x03
#define DER_CTX1_PRIM	0x81	/* issuerUniqueID [1] IMPLICIT */
#define DER_CTX2_PRIM	0x82	/* subjectUniqueID [2] IMPLICIT */

/*
 * SubjectPublicKeyInfo ::= SEQUENCE {		-- RFC 5280, 4.1
 *	algorithm AlgorithmIdentifier,		-- { id-ml-dsa-*, parameters ABSENT } (RFC 9881, 2)
 *	subjectPublicKey BIT STRING }		-- 0 unused bits, then pk (FIPS 204, Table 2)
 */
ms_err
ms_cert_mldsa_spki(struct ms_span spki, enum ms_mldsa_set *set, struct ms_span *pk)
{
	struct ms_span body = { NULL, 0 }, alg = { NULL, 0 }, oid = { NULL, 0 };
	struct ms_span bits = { NULL, 0 };
	enum ms_mldsa_set s;

	if (ms_der_expect_only(spki, DER_SEQUENCE, &body) != MS_OK ||
	    ms_der_expect(&body, DER_SEQUENCE, &alg) != MS_OK ||
	    ms_der_expect(&alg, DER_OID, &oid) != MS_OK) {
		return MS_E_UNSUPPORTED;
	}
	s = ms_mldsa_set_of_oid(oid);
	if (s == MS_MLDSA_NONE) {
		return MS_E_UNSUPPORTED;
	}
	/* From here on it claims to be ML-DSA: anything off is malformed. */
	if (alg.len != 0 || ms_der_expect_only(body, DER_BIT_STRING, &bits) != MS_OK ||
	    bits.len != 1 + ms_cms_mldsa_pk_len(s) || bits.p[0] != 0) {
		return MS_E_MALFORMED;
	}
	*set = s;
	pk->p = bits.p + 1;
	pk->len = bits.len - 1;
	return MS_OK;
}

/* AlgorithmIdentifier TLV off @in, whole; its content must start with an OID. */
static ms_err
alg_id(struct ms_span *in, struct ms_span *tlv)
{
	struct ms_span before = *in, body = { NULL, 0 }, oid = { NULL, 0 };
	ms_err err;

	err = ms_der_expect(in, DER_SEQUENCE, &body);
	if (err == MS_OK) {
		err = ms_der_expect(&body, DER_OID, &oid);
	}
	if (err == MS_OK) {
		tlv->p = before.p;
		tlv->len = before.len - in->len;
	}
	return err;
}

/* A Name TLV off @in, whole (RFC 5280, 4.1.2.4): a SEQUENCE. */
static ms_err
name_tlv(struct ms_span *in, struct ms_span *tlv)
{
	struct ms_span before = *in, body = { NULL, 0 };
	ms_err err;

	err = ms_der_expect(in, DER_SEQUENCE, &body);
	if (err == MS_OK) {
		tlv->p = before.p;
		tlv->len = before.len - in->len;
	}
	return err;
}

/*
 * TBSCertificate ::= SEQUENCE {		-- RFC 5280, 4.1
 *	version [0] EXPLICIT Version DEFAULT v1, serialNumber INTEGER,
 *	signature AlgorithmIdentifier, issuer Name, validity Validity,
 *	subject Name, subjectPublicKeyInfo,
 *	issuerUniqueID [1] IMPLICIT OPTIONAL, subjectUniqueID [2] IMPLICIT OPTIONAL,
 *	extensions [3] EXPLICIT Extensions OPTIONAL }
 * Up to the SPKI, a mismatch is MS_E_UNSUPPORTED: not ours to judge, mbedTLS
 * parses it. Once the key is ML-DSA, this parser has the last word.
 */
static ms_err
parse_tbs(struct ms_span tbs, struct ms_cms_cert *cert, struct ms_span *sig_alg)
{
	struct ms_span v = { NULL, 0 }, vi = { NULL, 0 }, skip = { NULL, 0 }, spki = { NULL, 0 };
	struct ms_span before = { NULL, 0 }, exts = { NULL, 0 };
	ms_err err;

	if (tbs.len > 0 && tbs.p[0] == DER_CTX0_CONS) {
		if (ms_der_expect(&tbs, DER_CTX0_CONS, &v) != MS_OK ||
		    ms_der_expect_only(v, DER_INTEGER, &vi) != MS_OK) {
			return MS_E_UNSUPPORTED;
		}
	}
	if (ms_der_expect(&tbs, DER_INTEGER, &cert->serial) != MS_OK ||
	    alg_id(&tbs, sig_alg) != MS_OK || name_tlv(&tbs, &cert->issuer) != MS_OK ||
	    ms_der_expect(&tbs, DER_SEQUENCE, &skip) != MS_OK ||
	    name_tlv(&tbs, &cert->subject) != MS_OK) {
		return MS_E_UNSUPPORTED;
	}
	before = tbs;
	if (ms_der_expect(&tbs, DER_SEQUENCE, &skip) != MS_OK) {
		return MS_E_UNSUPPORTED;
	}
	spki.p = before.p;
	spki.len = before.len - tbs.len;
	err = ms_cert_mldsa_spki(spki, &cert->mldsa, &cert->mldsa_pk);
	if (err != MS_OK) {
		return err;
	}
	/*
	 * Version 1, 2 or 3 (0, 1, 2) in one content byte; a serial of 1 to 32
	 * octets (4.1.2.2 says 20; mbedTLS, which reads the others, takes 32).
	 */
	if ((vi.len != 0 && (vi.len != 1 || vi.p[0] > 2)) || cert->serial.len == 0 ||
	    cert->serial.len > 32) {
		return MS_E_MALFORMED;
	}
	if (tbs.len > 0 && tbs.p[0] == DER_CTX1_PRIM &&
	    ms_der_expect(&tbs, DER_CTX1_PRIM, &skip) != MS_OK) {
		return MS_E_MALFORMED;
	}
	if (tbs.len > 0 && tbs.p[0] == DER_CTX2_PRIM &&
	    ms_der_expect(&tbs, DER_CTX2_PRIM, &skip) != MS_OK) {
		return MS_E_MALFORMED;
	}
	cert->skid.p = NULL;
	cert->skid.len = 0;
	if (tbs.len > 0) {
		/* [3] holds the Extensions SEQUENCE TLV, and nothing may follow it. */
		if (ms_der_expect_only(tbs, DER_CTX3_CONS, &exts) != MS_OK ||
		    ms_cert_find_skid(exts, &cert->skid) != MS_OK) {
			return MS_E_MALFORMED;
		}
	}
	return MS_OK;
}

/*
 * Certificate ::= SEQUENCE {			-- RFC 5280, 4.1
 *	tbsCertificate, signatureAlgorithm AlgorithmIdentifier,
 *	signatureValue BIT STRING }
 * signatureAlgorithm must equal tbsCertificate's signature (4.1.1.2).
 */
ms_err
ms_cert_mldsa_parse(const uint8_t *der, size_t len, struct ms_cms_cert *cert)
{
	struct ms_span body = { NULL, 0 }, tbs = { NULL, 0 }, alg_in = { NULL, 0 };
	struct ms_span alg_out = { NULL, 0 }, sig = { NULL, 0 }, before = { NULL, 0 };
	ms_err err;

	if (ms_der_expect_only((struct ms_span){ der, len }, DER_SEQUENCE, &body) != MS_OK) {
		return MS_E_UNSUPPORTED;
	}
	before = body;
	if (ms_der_expect(&body, DER_SEQUENCE, &tbs) != MS_OK) {
		return MS_E_UNSUPPORTED;
	}
	err = parse_tbs(tbs, cert, &alg_in);
	if (err != MS_OK) {
		return err;
	}
	cert->tbs.p = before.p;
	cert->tbs.len = before.len - body.len;
	if (alg_id(&body, &alg_out) != MS_OK ||
	    !ms_der_span_eq(alg_out, alg_in.p, alg_in.len) ||
	    ms_der_expect_only(body, DER_BIT_STRING, &sig) != MS_OK || sig.len == 0 ||
	    sig.p[0] != 0) {
		return MS_E_MALFORMED;
	}
	cert->sig_alg = alg_out;
	cert->sig_value.p = sig.p + 1;
	cert->sig_value.len = sig.len - 1;
	cert->type = MS_KEY_MLDSA;
	cert->curve = MS_EC_NONE;
	cert->bits = 0;
	return MS_OK;
}
