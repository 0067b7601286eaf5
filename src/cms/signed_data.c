// SPDX-License-Identifier: GPL-2.0-only
/*
 * The SignerIdentifier and the detached ContentInfo/SignedData, byte for
 * byte as the kernel's sign-file (OpenSSL CMS with NOCERTS, DETACHED,
 * BINARY, NOSMIMECAP, NOATTR; for ML-DSA under OpenSSL 3.5/3.6 with its
 * two signed attributes) writes them: sizes first, then forward.
 */
#include "cms_internal.h"

/*
 * SignerIdentifier ::= CHOICE {			-- RFC 5652, 5.3
 *	issuerAndSerialNumber IssuerAndSerialNumber,
 *	subjectKeyIdentifier [0] SubjectKeyIdentifier }
 * IssuerAndSerialNumber ::= SEQUENCE {		-- RFC 5652, 10.2.4
 *	issuer Name, serialNumber CertificateSerialNumber }
 * The kernel matches issuer and serial bytes against its keyring's
 * certificates, so both are copied from the certificate, never re-encoded.
 */
static size_t
ias_body_size(const struct ms_cms_cert *cert)
{
	return cert->issuer.len + ms_der_tlv_size(cert->serial.len);
}

static void
put_sid(struct ms_der_out *o, const struct ms_cms_cert *cert, bool use_skid)
{
	if (use_skid) {
		ms_der_header(o, DER_CTX0_PRIM, cert->skid.len);
		ms_der_bytes(o, cert->skid.p, cert->skid.len);
		return;
	}
	ms_der_header(o, DER_SEQUENCE, ias_body_size(cert));
	ms_der_bytes(o, cert->issuer.p, cert->issuer.len);	/* Name TLV */
	ms_der_header(o, DER_INTEGER, cert->serial.len);
	ms_der_bytes(o, cert->serial.p, cert->serial.len);
}

ms_err
ms_cms_signer_id_encode(const struct ms_cms_cert *cert, bool use_skid,
			uint8_t *out, size_t cap, size_t *out_len)
{
	struct ms_der_out o;
	size_t need;

	if (cert == NULL || out_len == NULL) {
		return MS_E_ARG;
	}
	if (use_skid && cert->skid.len == 0) {
		return MS_E_NOTFOUND;
	}
	/* Spans bounded by MS_CMS_CERT_MAX in ms_cms_cert_parse(). */
	need = use_skid ? ms_der_tlv_size(cert->skid.len) : ms_der_tlv_size(ias_body_size(cert));
	if (out == NULL) {
		*out_len = need;
		return MS_OK;
	}
	if (cap < need) {
		return MS_E_NOSPACE;
	}
	ms_der_out_init(&o, out, cap);
	put_sid(&o, cert, use_skid);
	if (o.err != MS_OK) {
		return o.err;
	}
	if (o.len != need) {
		return MS_E_INTERNAL;
	}
	*out_len = need;
	return MS_OK;
}

/* The pre-encoded pieces of one SignedData, checked once. */
struct sd_parts {
	unsigned int version;		/* 1, or 3 with a [0] sid (RFC 5652, 5.1) */
	const struct ms_hash_info *hash;
	const uint8_t *sig_alg;
	size_t sig_alg_len;
	struct ms_span sid;
	struct ms_span sig;
	struct ms_span attrs;		/* ML-DSA: the SET OF content written as [0]; may be empty */
	bool has_attrs;
};

/* An ML-DSA signer's algorithm, signature length and signed attributes. */
static ms_err
parts_mldsa(const struct ms_cms_signer *s, enum ms_mldsa_set set, struct ms_span attrs,
	    struct sd_parts *p)
{
	struct ms_span body = { NULL, 0 };

	p->sig_alg = ms_mldsa_alg_id(set, &p->sig_alg_len);
	if (p->sig_alg == NULL || s->sig.p == NULL || s->sig.len != ms_cms_mldsa_sig_len(set)) {
		return MS_E_ARG;
	}
	if (attrs.len == 0) {
		return MS_OK;
	}
	/* The kernel's public_key.c takes only SHA-512 with ML-DSA's signed attributes. */
	if (s->hash != MS_HASH_SHA512 || attrs.p == NULL || attrs.len > MS_CMS_CERT_MAX ||
	    ms_der_expect_only(attrs, DER_SET, &body) != MS_OK) {
		return MS_E_ARG;
	}
	p->attrs = body;
	p->has_attrs = true;
	return MS_OK;
}

static ms_err
parts_init(const struct ms_cms_signer *s, enum ms_mldsa_set set, struct ms_span attrs,
	   struct sd_parts *p)
{
	struct ms_span body = { NULL, 0 };

	p->hash = ms_hash_info(s->hash);
	p->has_attrs = false;
	p->attrs = (struct ms_span){ NULL, 0 };
	if (p->hash == NULL) {
		return MS_E_ARG;
	}
	/* ML-DSA exactly when a set is given: the kernel refuses signed attributes but for it. */
	if ((s->key_type == MS_KEY_MLDSA) != (set != MS_MLDSA_NONE)) {
		return MS_E_ARG;
	}
	if (s->key_type == MS_KEY_MLDSA) {
		if (parts_mldsa(s, set, attrs, p) != MS_OK) {
			return MS_E_ARG;
		}
	} else if (s->key_type == MS_KEY_RSA) {
		p->sig_alg = ms_alg_rsa_encryption;
		p->sig_alg_len = sizeof(ms_alg_rsa_encryption);
	} else if (s->key_type == MS_KEY_EC) {
		p->sig_alg = p->hash->ecdsa_alg_id;
		p->sig_alg_len = p->hash->ecdsa_alg_id_len;
	} else {
		return MS_E_ARG;
	}
	/* The sid must be one TLV of the kind the version announces. */
	if (s->sid.p == NULL || s->sid.len > MS_CMS_CERT_MAX ||
	    ms_der_expect_only(s->sid, s->use_skid ? DER_CTX0_PRIM : DER_SEQUENCE, &body) != MS_OK) {
		return MS_E_ARG;
	}
	if (s->key_type != MS_KEY_MLDSA &&
	    (s->sig.p == NULL || s->sig.len == 0 || s->sig.len > MS_RSA_MAX_BYTES)) {
		return MS_E_ARG;
	}
	p->version = s->use_skid ? 3 : 1;
	p->sid = s->sid;
	p->sig = s->sig;
	return MS_OK;
}

/*
 * SignerInfo ::= SEQUENCE {			-- RFC 5652, 5.3
 *	version CMSVersion, sid SignerIdentifier,
 *	digestAlgorithm DigestAlgorithmIdentifier,
 *	signatureAlgorithm SignatureAlgorithmIdentifier,
 *	signature SignatureValue }
 * No signedAttrs (the kernel refuses them for modules, but for ML-DSA
 * with CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA: then
 * signedAttrs [0] IMPLICIT SET OF Attribute after digestAlgorithm) and no
 * unsignedAttrs. rsaEncryption carries NULL parameters, ecdsa-with-* and
 * id-ml-dsa-* none.
 */
static size_t
signer_info_body_size(const struct sd_parts *p)
{
	return 3 + p->sid.len + p->hash->alg_id_len +
	       (p->has_attrs ? ms_der_tlv_size(p->attrs.len) : 0) + p->sig_alg_len +
	       ms_der_tlv_size(p->sig.len);
}

static void
put_signer_info(struct ms_der_out *o, const struct sd_parts *p)
{
	ms_der_header(o, DER_SEQUENCE, signer_info_body_size(p));
	ms_der_small_int(o, p->version);
	ms_der_bytes(o, p->sid.p, p->sid.len);		/* pre-encoded TLV */
	ms_der_bytes(o, p->hash->alg_id, p->hash->alg_id_len);
	if (p->has_attrs) {
		ms_der_header(o, DER_CTX0_CONS, p->attrs.len);
		ms_der_bytes(o, p->attrs.p, p->attrs.len);
	}
	ms_der_bytes(o, p->sig_alg, p->sig_alg_len);
	ms_der_header(o, DER_OCTET_STRING, p->sig.len);
	ms_der_bytes(o, p->sig.p, p->sig.len);
}

/*
 * SignedData ::= SEQUENCE {			-- RFC 5652, 5.1
 *	version CMSVersion,
 *	digestAlgorithms SET OF DigestAlgorithmIdentifier,
 *	encapContentInfo EncapsulatedContentInfo,
 *	certificates [0] IMPLICIT CertificateSet OPTIONAL,	-- omitted
 *	crls [1] IMPLICIT RevocationInfoChoices OPTIONAL,	-- omitted
 *	signerInfos SET OF SignerInfo }
 * EncapsulatedContentInfo ::= SEQUENCE {		-- RFC 5652, 5.2
 *	eContentType id-data, eContent absent (detached) }
 * Both SETs have one member, so DER needs no sorting.
 */
static size_t
signed_data_body_size(const struct sd_parts *p)
{
	return 3 + ms_der_tlv_size(p->hash->alg_id_len) +
	       ms_der_tlv_size(sizeof(ms_oid_data)) +
	       ms_der_tlv_size(ms_der_tlv_size(signer_info_body_size(p)));
}

static void
put_signed_data(struct ms_der_out *o, const struct sd_parts *p)
{
	ms_der_header(o, DER_SEQUENCE, signed_data_body_size(p));
	ms_der_small_int(o, p->version);
	ms_der_header(o, DER_SET, p->hash->alg_id_len);
	ms_der_bytes(o, p->hash->alg_id, p->hash->alg_id_len);
	ms_der_header(o, DER_SEQUENCE, sizeof(ms_oid_data));
	ms_der_bytes(o, ms_oid_data, sizeof(ms_oid_data));
	ms_der_header(o, DER_SET, ms_der_tlv_size(signer_info_body_size(p)));
	put_signer_info(o, p);
}

/*
 * ContentInfo ::= SEQUENCE {			-- RFC 5652, 3
 *	contentType id-signedData,
 *	content [0] EXPLICIT SignedData }
 */
static size_t
content_info_body_size(const struct sd_parts *p)
{
	return sizeof(ms_oid_signed_data) +
	       ms_der_tlv_size(ms_der_tlv_size(signed_data_body_size(p)));
}

static void
put_content_info(struct ms_der_out *o, const struct sd_parts *p)
{
	ms_der_header(o, DER_SEQUENCE, content_info_body_size(p));
	ms_der_bytes(o, ms_oid_signed_data, sizeof(ms_oid_signed_data));
	ms_der_header(o, DER_CTX0_CONS, ms_der_tlv_size(signed_data_body_size(p)));
	put_signed_data(o, p);
}

static ms_err
encode(const struct ms_cms_signer *s, enum ms_mldsa_set set, struct ms_span attrs, uint8_t *out,
       size_t cap, size_t *out_len)
{
	struct sd_parts parts;
	struct ms_der_out o;
	size_t need;
	ms_err err;

	if (s == NULL || out_len == NULL) {
		return MS_E_ARG;
	}
	err = parts_init(s, set, attrs, &parts);
	if (err != MS_OK) {
		return err;
	}
	/* sid, attrs <= MS_CMS_CERT_MAX, sig <= 4627 bytes (ML-DSA-87): no sum can wrap. */
	need = ms_der_tlv_size(content_info_body_size(&parts));
	if (out == NULL) {
		*out_len = need;
		return MS_OK;
	}
	if (cap < need) {
		return MS_E_NOSPACE;
	}
	ms_der_out_init(&o, out, cap);
	put_content_info(&o, &parts);
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
ms_cms_signed_data_encode(const struct ms_cms_signer *s, uint8_t *out, size_t cap,
			  size_t *out_len)
{
	return encode(s, MS_MLDSA_NONE, (struct ms_span){ NULL, 0 }, out, cap, out_len);
}

ms_err
ms_cms_signed_data_encode_mldsa(const struct ms_cms_signer *s, enum ms_mldsa_set set,
				struct ms_span signed_attrs, uint8_t *out, size_t cap,
				size_t *out_len)
{
	if (set == MS_MLDSA_NONE) {
		return MS_E_ARG;
	}
	return encode(s, set, signed_attrs, out, cap, out_len);
}
