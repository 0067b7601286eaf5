// SPDX-License-Identifier: GPL-2.0-only
/*
 * Verifying each signer of a parsed module signature against given
 * certificates, as the kernel's pkcs7_verify.c and public_key.c do: the
 * certificate found by issuer and serial or subjectKeyIdentifier, then
 * RSA PKCS#1 v1.5 over the DigestInfo or ECDSA over the digest. The
 * signature value is untrusted input.
 */
#include <string.h>

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/x509_crt.h>

#include "cms_internal.h"

/* Largest DigestInfo: prefix (19) + SHA-512 digest (64). */
#define DI_MAX (32 + MS_HASH_MAX_SIZE)

/* The content of a TLV we already know to be well formed, else an empty span. */
static struct ms_span
content_of(struct ms_span tlv)
{
	struct ms_span body = { NULL, 0 };
	uint8_t tag = 0;

	if (ms_der_get(&tlv, &tag, &body) != MS_OK || tlv.len != 0) {
		body.p = NULL;
		body.len = 0;
	}
	return body;
}

/*
 * The kernel builds a key id from the serial content and the issuer Name
 * content (asymmetric_key_generate_id(), in pkcs7_note_signed_info() and
 * x509_cert_parse()) and compares those bytes: no re-encoding, no
 * normalisation. A subjectKeyIdentifier id is its octets.
 */
bool
ms_pkcs7_signer_match(const struct ms_pkcs7_signer *s, const struct ms_cms_cert *cert)
{
	struct ms_span want = { NULL, 0 }, have = { NULL, 0 };

	if (s == NULL || cert == NULL) {
		return false;
	}
	if (s->sid_type == MS_PKCS7_SID_SKID) {
		return cert->skid.len != 0 && ms_der_span_eq(s->skid, cert->skid.p, cert->skid.len);
	}
	if (s->sid_type != MS_PKCS7_SID_ISSUER_SERIAL ||
	    !ms_der_span_eq(s->serial, cert->serial.p, cert->serial.len)) {
		return false;
	}
	want = content_of(s->issuer);
	have = content_of(cert->issuer);
	return want.p != NULL && have.p != NULL && ms_der_span_eq(want, have.p, have.len);
}

/*
 * One INTEGER of an Ecdsa-Sig-Value: DER-minimal and positive, at most
 * @half bytes once a sign byte is dropped; written right-aligned into @out.
 */
static ms_err
ec_int(struct ms_span *in, size_t half, uint8_t *out)
{
	struct ms_span v = { NULL, 0 };

	if (ms_der_expect(in, DER_INTEGER, &v) != MS_OK || v.len == 0) {
		return MS_E_MALFORMED;
	}
	if ((v.p[0] & 0x80) != 0) {
		return MS_E_MALFORMED;	/* negative */
	}
	if (v.p[0] == 0 && v.len > 1) {
		if ((v.p[1] & 0x80) == 0) {
			return MS_E_MALFORMED;	/* non-minimal */
		}
		v.p++;
		v.len--;
	}
	if (v.len > half) {
		return MS_E_MALFORMED;
	}
	memset(out, 0, half - v.len);
	memcpy(out + (half - v.len), v.p, v.len);
	return MS_OK;
}

/*
 * Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }	-- RFC 5480, 2.2.3
 * to r||s, each @half bytes, as ms_cms_cert_verify() takes it.
 */
static ms_err
ec_der_to_raw(struct ms_span sig, size_t half, uint8_t *raw)
{
	struct ms_span seq = { NULL, 0 };

	if (half == 0 || half > MS_CMS_EC_HALF_MAX) {
		return MS_E_MALFORMED;
	}
	if (ms_der_expect_only(sig, DER_SEQUENCE, &seq) != MS_OK) {
		return MS_E_MALFORMED;
	}
	if (ec_int(&seq, half, raw) != MS_OK || ec_int(&seq, half, raw + half) != MS_OK ||
	    seq.len != 0) {
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

/*
 * After a failed RSA verification, say why: recover the encoded message
 * with the public key (RFC 8017, 8.2.2 steps 2 and 3) and compare it with
 * EMSA-PKCS1-v1_5 (9.2) of what we expected. Diagnosis only: the verdict
 * was mbedTLS's.
 */
static const char *
rsa_why(const struct ms_cms_cert *cert, enum ms_hash_alg alg, const struct ms_span sig)
{
	mbedtls_rsa_context *rsa = mbedtls_pk_rsa(cert->crt->pk);
	const struct ms_hash_info *h = ms_hash_info(alg);
	uint8_t em[MS_RSA_MAX_BYTES];
	size_t k = mbedtls_rsa_get_len(rsa), ps, t_len;
	const uint8_t *t = NULL;
	int a;

	if (h == NULL || sig.len != k || k > sizeof(em) || k < 11 + DI_MAX) {
		return "RSA signature length is not the key's: another key signed it";
	}
	if (mbedtls_rsa_public(rsa, sig.p, em) != 0) {
		return "RSA signature invalid: signature damaged or made with another key";
	}
	/* EM = 0x00 || 0x01 || PS (0xff, at least 8) || 0x00 || T */
	ps = 0;
	while (2 + ps < k && em[2 + ps] == 0xff) {
		ps++;
	}
	if (em[0] != 0x00 || em[1] != 0x01 || ps < 8 || 2 + ps >= k || em[2 + ps] != 0x00) {
		return "RSA signature invalid: signature damaged or made with another key";
	}
	t = em + 3 + ps;
	t_len = k - 3 - ps;
	if (t_len == h->di_prefix_len + h->size &&
	    memcmp(t, h->di_prefix, h->di_prefix_len) == 0) {
		/* Our key, our hash, another digest: the signed bytes differ. */
		return "digest mismatch: the module is not what was signed";
	}
	for (a = MS_HASH_SHA1; a <= MS_HASH_SHA3_512; a++) {
		const struct ms_hash_info *x = ms_hash_info((enum ms_hash_alg)a);

		if (x != NULL && t_len == x->di_prefix_len + x->size &&
		    memcmp(t, x->di_prefix, x->di_prefix_len) == 0) {
			return "the signature's DigestInfo names another hash than digestAlgorithm";
		}
	}
	return "RSA signature invalid: no DigestInfo inside";
}

static ms_err
verify_rsa(const struct ms_pkcs7_signer *s, const struct ms_pkcs7_digest *dg,
	   const struct ms_cms_cert *cert, const char **why)
{
	uint8_t di[DI_MAX];
	size_t di_len = 0;
	ms_err err;

	err = ms_cms_tbs_encode(MS_KEY_RSA, s->hash, dg->d, dg->len, di, sizeof(di), &di_len);
	if (err != MS_OK) {
		*why = "internal: cannot encode the DigestInfo";
		return MS_E_INTERNAL;
	}
	err = ms_cms_cert_verify(cert, s->hash, di, di_len, s->signature.p, s->signature.len);
	if (err == MS_OK) {
		return MS_OK;
	}
	*why = rsa_why(cert, s->hash, s->signature);
	return MS_E_MISMATCH;
}

static ms_err
verify_ec(const struct ms_pkcs7_signer *s, const struct ms_pkcs7_digest *dg,
	  const struct ms_cms_cert *cert, const char **why)
{
	uint8_t raw[2 * MS_CMS_EC_HALF_MAX];
	size_t half = (cert->bits + 7) / 8;

	if (ec_der_to_raw(s->signature, half, raw) != MS_OK) {
		*why = "ECDSA signature is not a DER Ecdsa-Sig-Value for the key's curve";
		return MS_E_MALFORMED;
	}
	/* The kernel's public_key_verify_signature(): the digest itself. */
	if (ms_cms_cert_verify(cert, s->hash, dg->d, dg->len, raw, 2 * half) != MS_OK) {
		*why = "ECDSA signature does not verify: the module changed, the signature "
		       "is damaged, or another key signed it";
		return MS_E_MISMATCH;
	}
	return MS_OK;
}

/* The payload's digest of the signer's hash, or NULL. */
static const struct ms_pkcs7_digest *
digest_of(const struct ms_pkcs7_signer *s, const struct ms_pkcs7_digest *digests,
	  size_t n_digests)
{
	const struct ms_pkcs7_digest *dg = NULL;
	size_t i;

	for (i = 0; i < n_digests; i++) {
		if (digests[i].alg == s->hash) {
			dg = &digests[i];
		}
	}
	if (dg == NULL || dg->len != ms_cms_hash_size(s->hash)) {
		return NULL;
	}
	return dg;
}

/*
 * ML-DSA (the kernel's public_key.c, algo_takes_data): without signed
 * attributes over the payload itself; with them over their DER as a SET
 * OF (RFC 5652, 5.4: the [0] tag read as SET), their messageDigest being
 * the payload's SHA-512. Pure ML-DSA, empty context, both ways.
 */
static ms_err
verify_mldsa(const struct ms_pkcs7_signer *s, const struct ms_pkcs7_digest *digests,
	     size_t n_digests, const struct ms_span *payload, size_t n_payload,
	     const struct ms_cms_cert *cert, const char **why)
{
	static const uint8_t set_tag = DER_SET;
	const struct ms_pkcs7_digest *dg = NULL;
	struct ms_span attrs = { NULL, 0 }, md = { NULL, 0 }, msg[2];
	uint8_t tag = 0;
	ms_err err;

	if (cert->mldsa != s->mldsa) {
		*why = "the certificate's ML-DSA parameter set is not the signature's";
		return MS_E_UNSUPPORTED;
	}
	if (!s->has_signed_attrs) {
		if (payload == NULL) {
			*why = "ML-DSA without signed attributes signs the module itself, "
			       "which was not given";
			return MS_E_ARG;
		}
		err = ms_cms_mldsa_verify(cert->mldsa, cert->mldsa_pk.p, cert->mldsa_pk.len, NULL, 0,
					  payload, n_payload, s->signature.p, s->signature.len);
	} else {
		dg = digest_of(s, digests, n_digests);
		if (dg == NULL) {
			*why = "no digest of the module for the signer's hash";
			return MS_E_ARG;
		}
		attrs = s->signed_attrs;
		if (ms_der_get(&attrs, &tag, &md) != MS_OK || tag != DER_CTX0_CONS) {
			*why = "ML-DSA signed attributes not in the [0] IMPLICIT SET form";
			return MS_E_UNSUPPORTED;
		}
		err = ms_mldsa_attrs_read(md, &md, why);
		if (err != MS_OK) {
			return err;
		}
		if (!ms_der_span_eq(md, dg->d, dg->len)) {
			*why = "the messageDigest attribute is not the module's digest: "
			       "the module changed";
			return MS_E_MISMATCH;
		}
		msg[0] = (struct ms_span){ &set_tag, 1 };
		msg[1] = (struct ms_span){ s->signed_attrs.p + 1, s->signed_attrs.len - 1 };
		err = ms_cms_mldsa_verify(cert->mldsa, cert->mldsa_pk.p, cert->mldsa_pk.len, NULL, 0,
					  msg, 2, s->signature.p, s->signature.len);
	}
	if (err != MS_OK) {
		*why = "ML-DSA signature does not verify: the module changed, the signature "
		       "is damaged, or another key signed it";
		return MS_E_MISMATCH;
	}
	return MS_OK;
}

/* Why a key of @key cannot check a signature of @sig (the two differ). */
static const char *
type_mismatch_why(enum ms_key_type key, enum ms_key_type sig)
{
	if (key == MS_KEY_RSA) {
		return sig == MS_KEY_EC ? "the certificate's key is RSA but the signature is ECDSA" :
		       "the certificate's key is RSA but the signature is ML-DSA";
	}
	if (key == MS_KEY_EC) {
		return sig == MS_KEY_RSA ? "the certificate's key is EC but the signature is RSA" :
		       "the certificate's key is EC but the signature is ML-DSA";
	}
	return "the certificate's key is ML-DSA but the signature is not";
}

static ms_err
verify_one(const struct ms_pkcs7_signer *s, const struct ms_pkcs7_digest *digests,
	   size_t n_digests, const struct ms_span *payload, size_t n_payload,
	   const struct ms_cms_cert *cert, const char **why)
{
	const struct ms_pkcs7_digest *dg = NULL;

	/* public_key_verify_signature(): the key's algorithm must be the signature's. */
	if (cert->type != s->key_type) {
		*why = type_mismatch_why(cert->type, s->key_type);
		return MS_E_UNSUPPORTED;
	}
	if (s->key_type == MS_KEY_MLDSA) {
		return verify_mldsa(s, digests, n_digests, payload, n_payload, cert, why);
	}
	dg = digest_of(s, digests, n_digests);
	if (dg == NULL) {
		*why = "no digest of the module for the signer's hash";
		return MS_E_ARG;
	}
	if (s->key_type == MS_KEY_RSA) {
		return verify_rsa(s, dg, cert, why);
	}
	return verify_ec(s, dg, cert, why);
}

ms_err
ms_pkcs7_verify_payload(const struct ms_pkcs7 *msg, const struct ms_pkcs7_digest *digests,
			size_t n_digests, const struct ms_span *payload, size_t n_payload,
			const struct ms_cms_cert *const *certs, size_t n_certs,
			struct ms_pkcs7_signer_result *res, const char **why)
{
	ms_err first = MS_OK;
	size_t i, j;

	if (why != NULL) {
		*why = NULL;
	}
	if (msg == NULL || res == NULL || (digests == NULL && n_digests != 0) ||
	    (certs == NULL && n_certs != 0) || (payload == NULL && n_payload != 0) ||
	    msg->n_signers == 0 ||
	    msg->n_signers > MS_PKCS7_SIGNERS_MAX) {
		if (why != NULL) {
			*why = "nothing to verify";
		}
		return MS_E_ARG;
	}
	for (i = 0; i < msg->n_signers; i++) {
		const struct ms_pkcs7_signer *s = &msg->signers[i];
		struct ms_pkcs7_signer_result *r = &res[i];

		r->cert = NULL;
		r->err = MS_E_NOTFOUND;
		r->why = s->sid_type == MS_PKCS7_SID_SKID ?
			"no given certificate has the signer's subjectKeyIdentifier" :
			"no given certificate has the signer's issuer and serial number";
		for (j = 0; j < n_certs && r->cert == NULL; j++) {
			if (ms_pkcs7_signer_match(s, certs[j])) {
				r->cert = certs[j];
			}
		}
		if (r->cert != NULL) {
			r->why = NULL;
			r->err = verify_one(s, digests, n_digests, payload, n_payload, r->cert,
					    &r->why);
		}
		if (r->err != MS_OK && first == MS_OK) {
			first = r->err;
			if (why != NULL) {
				*why = r->why;
			}
		}
	}
	return first;
}

ms_err
ms_pkcs7_verify(const struct ms_pkcs7 *msg, const struct ms_pkcs7_digest *digests,
		size_t n_digests, const struct ms_cms_cert *const *certs, size_t n_certs,
		struct ms_pkcs7_signer_result *res, const char **why)
{
	return ms_pkcs7_verify_payload(msg, digests, n_digests, NULL, 0, certs, n_certs, res,
				       why);
}
