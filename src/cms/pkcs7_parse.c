// SPDX-License-Identifier: GPL-2.0-only
/*
 * The PKCS#7 ContentInfo of an appended module signature, taken apart as
 * the kernel's crypto/asymmetric_keys/pkcs7.asn1 and pkcs7_parser.c do,
 * with the strict DER reader of der_parse.c. Parses untrusted input.
 * What a module signature must be beyond that is ms_pkcs7_check_module()
 * (as the kernel's pkcs7_verify.c applies its rules to what
 * pkcs7_parser.c built), and the signatures are pkcs7_verify.c's.
 *
 * The grammar is fixed and shallow, so each level is its own function and
 * nothing recurses. Where the kernel's grammar offers a choice (SET or
 * SEQUENCE, [0] or [2] certificates, ...) both are accepted as the kernel
 * accepts them; BER (indefinite lengths) is refused: sign-file writes DER.
 */
#include <string.h>

#include "cms_internal.h"

#define DER_CTX2_CONS	0xa2	/* [2], constructed: the kernel's alternatives */

/* msIndirectData 1.3.6.1.4.1.311.2.1.4 (Authenticode; kexec, not modules) */
static const uint8_t oid_ms_indirect[] = {
	0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04,
};

/* The first failure's reason; later ones never overwrite it. */
static ms_err
fail(const char **why, ms_err err, const char *reason)
{
	if (why != NULL && *why == NULL) {
		*why = reason;
	}
	return err;
}

/* Tag of the next element, 0 at the end (0 is no tag we accept). */
static uint8_t
peek(const struct ms_span *in)
{
	return in->len > 0 ? in->p[0] : 0;
}

/* ms_der_expect() that also returns the whole TLV. */
static ms_err
take_tlv(struct ms_span *in, uint8_t tag, struct ms_span *tlv, struct ms_span *body)
{
	const uint8_t *start = in->p;
	size_t before = in->len;
	ms_err err;

	err = ms_der_expect(in, tag, body);
	if (err != MS_OK) {
		return err;
	}
	tlv->p = start;
	tlv->len = before - in->len;	/* ms_der_expect() only shortens @in */
	return MS_OK;
}

/* Whether the OID content @oid equals the OID inside the TLV at @tlv. */
static bool
oid_is(struct ms_span oid, const uint8_t *tlv, size_t tlv_len)
{
	/* Our tables hold short-form OID TLVs: 06 len content. */
	if (tlv_len < 2 || tlv[0] != DER_OID || (size_t)tlv[1] != tlv_len - 2) {
		return false;
	}
	return ms_der_span_eq(oid, tlv + 2, tlv_len - 2);
}

/* An AlgorithmIdentifier row of hash.c: 30 len, then the OID TLV. */
static bool
oid_is_alg(struct ms_span oid, const uint8_t *alg_id, size_t alg_id_len)
{
	/* The OID TLV is the first element; its own length byte bounds it. */
	if (alg_id_len < 4 || (size_t)alg_id[3] + 4 > alg_id_len) {
		return false;
	}
	return oid_is(oid, alg_id + 2, (size_t)alg_id[3] + 2);
}

/* The digest algorithms of crypto/asymmetric_keys/pkcs7_parser.c we can name. */
static bool
hash_from_oid(struct ms_span oid, enum ms_hash_alg *out)
{
	int i;

	for (i = MS_HASH_SHA1; i <= MS_HASH_SHA3_512; i++) {
		const struct ms_hash_info *h = ms_hash_info((enum ms_hash_alg)i);

		if (h != NULL && oid_is_alg(oid, h->alg_id, h->alg_id_len)) {
			*out = h->alg;
			return true;
		}
	}
	return false;
}

/*
 * AlgorithmIdentifier ::= SEQUENCE {		-- RFC 5280, 4.1.1.2
 *	algorithm OBJECT IDENTIFIER, parameters ANY OPTIONAL }
 * The kernel ignores the parameters; we only require them to be one
 * well-formed element.
 */
static ms_err
alg_id_get(struct ms_span *in, struct ms_span *oid)
{
	struct ms_span body = { NULL, 0 }, params = { NULL, 0 };
	uint8_t tag = 0;
	ms_err err;

	err = ms_der_expect(in, DER_SEQUENCE, &body);
	if (err == MS_OK) {
		err = ms_der_expect(&body, DER_OID, oid);
	}
	if (err == MS_OK && oid->len == 0) {
		err = MS_E_MALFORMED;
	}
	if (err == MS_OK && body.len > 0) {
		err = ms_der_get(&body, &tag, &params);
	}
	if (err == MS_OK && body.len != 0) {
		err = MS_E_MALFORMED;
	}
	return err;
}

/* CMSVersion as the kernel reads it: one content byte, 1 or 3. */
static ms_err
version_get(struct ms_span *in, unsigned int *version)
{
	struct ms_span v = { NULL, 0 };
	ms_err err;

	err = ms_der_expect(in, DER_INTEGER, &v);
	if (err != MS_OK) {
		return err;
	}
	if (v.len != 1 || (v.p[0] != 1 && v.p[0] != 3)) {
		return MS_E_UNSUPPORTED;
	}
	*version = v.p[0];
	return MS_OK;
}

/* ---- SignerInfo ---- */

/* rsaEncryption, ecdsa-with-<hash> or id-ml-dsa-* (pkcs7_sig_note_pkey_algo()). */
static bool
sig_alg_from_oid(struct ms_span oid, enum ms_key_type *type, enum ms_hash_alg *sig_hash,
		 enum ms_mldsa_set *mldsa)
{
	int i;

	*mldsa = ms_mldsa_set_of_oid(oid);
	if (*mldsa != MS_MLDSA_NONE) {
		*type = MS_KEY_MLDSA;
		*sig_hash = (enum ms_hash_alg)0;
		return true;
	}

	if (oid_is_alg(oid, ms_alg_rsa_encryption, sizeof(ms_alg_rsa_encryption))) {
		*type = MS_KEY_RSA;
		*sig_hash = (enum ms_hash_alg)0;
		return true;
	}
	for (i = MS_HASH_SHA1; i <= MS_HASH_SHA3_512; i++) {
		const struct ms_hash_info *h = ms_hash_info((enum ms_hash_alg)i);

		if (h != NULL && oid_is_alg(oid, h->ecdsa_alg_id, h->ecdsa_alg_id_len)) {
			*type = MS_KEY_EC;
			*sig_hash = h->alg;
			return true;
		}
	}
	return false;
}

/*
 * Name ::= SEQUENCE OF RelativeDistinguishedName
 * RelativeDistinguishedName ::= SET OF AttributeTypeAndValue
 * AttributeTypeAndValue ::= SEQUENCE { type OID, value ANY }
 *						-- RFC 5280, 4.1.2.4
 * Checked for shape only: the signer is matched by these bytes.
 */
static ms_err
check_name(struct ms_span name)
{
	struct ms_span rdns = { NULL, 0 }, rdn = { NULL, 0 };
	struct ms_span oid = { NULL, 0 }, value = { NULL, 0 };
	uint8_t tag = 0;
	ms_err err;

	err = ms_der_expect_only(name, DER_SEQUENCE, &rdns);
	while (err == MS_OK && rdns.len > 0) {
		err = ms_der_expect(&rdns, DER_SET, &rdn);
		if (err == MS_OK && rdn.len == 0) {
			err = MS_E_MALFORMED;
		}
		while (err == MS_OK && rdn.len > 0) {
			err = ms_der_name_atv(&rdn, &oid, &tag, &value);
		}
	}
	return err;
}

/*
 * SignerIdentifier ::= CHOICE {			-- RFC 5652, 5.3
 *	issuerAndSerialNumber IssuerAndSerialNumber,
 *	subjectKeyIdentifier [0] SubjectKeyIdentifier }
 * IssuerAndSerialNumber ::= SEQUENCE { issuer Name, serialNumber INTEGER }
 * The kernel picks the form from the SignerInfo version
 * (pkcs7_note_signerinfo_version(): expect_skid); a form that disagrees
 * would leave it an empty key id that matches nothing, so we refuse it.
 */
static ms_err
get_sid(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span ias = { NULL, 0 }, body = { NULL, 0 };

	if (s->version == 3) {
		if (peek(si) != DER_CTX0_PRIM) {
			return fail(why, MS_E_MALFORMED,
				    "SignerInfo version 3 without a subjectKeyIdentifier");
		}
		if (ms_der_expect(si, DER_CTX0_PRIM, &s->skid) != MS_OK || s->skid.len == 0) {
			return fail(why, MS_E_MALFORMED, "bad subjectKeyIdentifier in SignerInfo");
		}
		s->sid_type = MS_PKCS7_SID_SKID;
		return MS_OK;
	}
	if (peek(si) != DER_SEQUENCE) {
		return fail(why, MS_E_MALFORMED,
			    "SignerInfo version 1 without an issuerAndSerialNumber");
	}
	if (ms_der_expect(si, DER_SEQUENCE, &ias) != MS_OK ||
	    take_tlv(&ias, DER_SEQUENCE, &s->issuer, &body) != MS_OK ||
	    check_name(s->issuer) != MS_OK ||
	    ms_der_expect(&ias, DER_INTEGER, &s->serial) != MS_OK ||
	    s->serial.len == 0 || ias.len != 0) {
		return fail(why, MS_E_MALFORMED, "bad issuerAndSerialNumber in SignerInfo");
	}
	s->sid_type = MS_PKCS7_SID_ISSUER_SERIAL;
	return MS_OK;
}

/*
 * Attributes: SET OF Attribute, Attribute ::= SEQUENCE { attrType OID,
 * attrValues SET OF AttributeValue }	-- RFC 5652, 5.3. @list is the content
 * of the [0]/[1] IMPLICIT SET or of the kernel's [2]/[3] alternatives.
 */
static ms_err
check_attrs(struct ms_span list)
{
	struct ms_span attr = { NULL, 0 }, oid = { NULL, 0 }, values = { NULL, 0 };
	ms_err err = MS_OK;

	while (err == MS_OK && list.len > 0) {
		err = ms_der_expect(&list, DER_SEQUENCE, &attr);
		if (err == MS_OK) {
			err = ms_der_expect(&attr, DER_OID, &oid);
		}
		if (err == MS_OK) {
			err = ms_der_expect(&attr, DER_SET, &values);
		}
		if (err == MS_OK && attr.len != 0) {
			err = MS_E_MALFORMED;
		}
	}
	return err;
}

/*
 * signedAttrs: [0] IMPLICIT SET OF, or the kernel's [2] EXPLICIT SEQUENCE OF
 * (pkcs7.asn1, aaSequence).
 */
static ms_err
get_signed_attrs(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span body = { NULL, 0 }, seq = { NULL, 0 }, before = *si;
	uint8_t tag = peek(si);
	ms_err err;

	if (tag != DER_CTX0_CONS && tag != DER_CTX2_CONS) {
		return MS_OK;
	}
	err = ms_der_expect(si, tag, &body);
	s->signed_attrs.p = before.p;
	s->signed_attrs.len = before.len - si->len;
	if (err == MS_OK && tag == DER_CTX2_CONS) {
		err = ms_der_expect_only(body, DER_SEQUENCE, &seq);
		body = seq;
	}
	if (err == MS_OK) {
		err = check_attrs(body);
	}
	if (err != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad signed attributes in SignerInfo");
	}
	s->has_signed_attrs = true;
	return MS_OK;
}

/* unsignedAttrs: [1] IMPLICIT SET OF, or [3] IMPLICIT SEQUENCE OF. */
static ms_err
get_unsigned_attrs(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span body = { NULL, 0 };
	uint8_t tag = peek(si);

	if (tag != DER_CTX1_CONS && tag != DER_CTX3_CONS) {
		return MS_OK;
	}
	if (ms_der_expect(si, tag, &body) != MS_OK || check_attrs(body) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad unsigned attributes in SignerInfo");
	}
	s->has_unsigned_attrs = true;
	return MS_OK;
}

/* Version, with the kernel's pkcs7_note_signerinfo_version() rules. */
static ms_err
get_signer_version(struct ms_span *si, unsigned int sd_version, struct ms_pkcs7_signer *s,
		   const char **why)
{
	ms_err err;

	err = version_get(si, &s->version);
	if (err == MS_E_UNSUPPORTED) {
		return fail(why, MS_E_MALFORMED, "unsupported SignerInfo version (not 1 or 3)");
	}
	if (err != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad SignerInfo version");
	}
	if ((s->version == 1 && sd_version != 1) || (s->version == 3 && sd_version == 1)) {
		return fail(why, MS_E_MALFORMED, "SignedData-SignerInfo version mismatch");
	}
	return MS_OK;
}

/* digestAlgorithm: one the kernel's pkcs7_sig_note_digest_algo() knows. */
static ms_err
get_digest_alg(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span oid = { NULL, 0 };

	if (alg_id_get(si, &oid) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad digestAlgorithm in SignerInfo");
	}
	if (!hash_from_oid(oid, &s->hash)) {
		return fail(why, MS_E_UNSUPPORTED,
			    "digest algorithm is not one the kernel verifies");
	}
	return MS_OK;
}

/* signatureAlgorithm and signature. */
static ms_err
get_signature(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span oid = { NULL, 0 };

	if (alg_id_get(si, &oid) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad signatureAlgorithm in SignerInfo");
	}
	if (!sig_alg_from_oid(oid, &s->key_type, &s->sig_hash, &s->mldsa)) {
		return fail(why, MS_E_UNSUPPORTED,
			    "signature algorithm is not one the kernel "
			    "verifies (rsaEncryption, ecdsa-with-*, id-ml-dsa-*)");
	}
	if (ms_der_expect(si, DER_OCTET_STRING, &s->signature) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad signature in SignerInfo");
	}
	/* ML-DSA signatures are raw and of one length per set (FIPS 204, Table 2). */
	if (s->key_type == MS_KEY_MLDSA) {
		if (s->signature.len != ms_cms_mldsa_sig_len(s->mldsa)) {
			return fail(why, MS_E_MALFORMED,
				    "ML-DSA signature is not its parameter set's length");
		}
		return MS_OK;
	}
	if (s->signature.len == 0 || s->signature.len > MS_RSA_MAX_BYTES) {
		return fail(why, MS_E_MALFORMED, "signature empty or longer than 2048 bytes");
	}
	return MS_OK;
}

/*
 * SignerInfo ::= SEQUENCE { version, sid, digestAlgorithm,
 *	signedAttrs [0] IMPLICIT OPTIONAL, signatureAlgorithm,
 *	signature OCTET STRING, unsignedAttrs [1] IMPLICIT OPTIONAL }
 *						-- RFC 5652, 5.3
 */
static ms_err
signer_parse(struct ms_span si, unsigned int sd_version, struct ms_pkcs7_signer *s,
		      const char **why)
{
	ms_err err;

	memset(s, 0, sizeof(*s));
	err = get_signer_version(&si, sd_version, s, why);
	if (err == MS_OK) {
		err = get_sid(&si, s, why);
	}
	if (err == MS_OK) {
		err = get_digest_alg(&si, s, why);
	}
	if (err == MS_OK) {
		err = get_signed_attrs(&si, s, why);
	}
	if (err == MS_OK) {
		err = get_signature(&si, s, why);
	}
	if (err == MS_OK) {
		err = get_unsigned_attrs(&si, s, why);
	}
	if (err == MS_OK && si.len != 0) {
		err = fail(why, MS_E_MALFORMED, "bytes after the end of a SignerInfo");
	}
	/* public_key.c: ML-DSA over signed attributes takes their SHA-512 only. */
	if (err == MS_OK && s->key_type == MS_KEY_MLDSA && s->has_signed_attrs &&
	    s->hash != MS_HASH_SHA512) {
		err = fail(why, MS_E_UNSUPPORTED,
			   "ML-DSA with signed attributes and a digest other than SHA-512");
	}
	return err;
}


/* ---- SignedData ---- */

/* signerInfos: SET OF or SEQUENCE OF SignerInfo (pkcs7.asn1). */
static ms_err
get_signers(struct ms_span *sd, struct ms_pkcs7 *m, const char **why)
{
	struct ms_span list = { NULL, 0 }, si = { NULL, 0 };
	uint8_t tag = peek(sd);
	size_t i;
	ms_err err;

	if ((tag != DER_SET && tag != DER_SEQUENCE) || ms_der_expect(sd, tag, &list) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad signerInfos");
	}
	while (list.len > 0) {
		if (m->n_signers == MS_PKCS7_SIGNERS_MAX) {
			return fail(why, MS_E_UNSUPPORTED, "more than 8 signers");
		}
		if (ms_der_expect(&list, DER_SEQUENCE, &si) != MS_OK) {
			return fail(why, MS_E_MALFORMED, "bad SignerInfo");
		}
		err = signer_parse(si, m->version, &m->signers[m->n_signers], why);
		if (err != MS_OK) {
			return err;
		}
		m->n_signers++;
	}
	if (m->n_signers == 0) {
		return fail(why, MS_E_MALFORMED, "no SignerInfo");
	}
	/* pkcs7_check_authattrs(): "Inconsistently supplied authAttrs". */
	for (i = 1; i < m->n_signers; i++) {
		if (m->signers[i].has_signed_attrs != m->signers[0].has_signed_attrs) {
			return fail(why, MS_E_MALFORMED, "signed attributes on some signers only");
		}
	}
	return MS_OK;
}

/* digestAlgorithms: SET OF or SEQUENCE OF AlgorithmIdentifier; unknown ones are ignored. */
static ms_err
get_digest_algs(struct ms_span *sd, struct ms_pkcs7 *m, const char **why)
{
	struct ms_span list = { NULL, 0 }, oid = { NULL, 0 };
	enum ms_hash_alg a = (enum ms_hash_alg)0;
	uint8_t tag = peek(sd);

	if ((tag != DER_SET && tag != DER_SEQUENCE) || ms_der_expect(sd, tag, &list) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad digestAlgorithms");
	}
	while (list.len > 0) {
		if (alg_id_get(&list, &oid) != MS_OK) {
			return fail(why, MS_E_MALFORMED, "bad digestAlgorithms");
		}
		if (!hash_from_oid(oid, &a)) {
			continue;
		}
		if (m->n_digest_algs == MS_PKCS7_ALGS_MAX) {
			return fail(why, MS_E_UNSUPPORTED, "more than 8 digest algorithms");
		}
		m->digest_algs[m->n_digest_algs++] = a;
	}
	return MS_OK;
}

/*
 * EncapsulatedContentInfo ::= SEQUENCE { eContentType OID,
 *	eContent [0] EXPLICIT OCTET STRING OPTIONAL }	-- RFC 5652, 5.2
 * pkcs7_note_content() takes id-data and msIndirectData only.
 */
static ms_err
get_content_info(struct ms_span *sd, struct ms_pkcs7 *m, const char **why)
{
	struct ms_span eci = { NULL, 0 }, oid = { NULL, 0 };
	struct ms_span wrap = { NULL, 0 }, inner = { NULL, 0 };
	uint8_t tag = 0;

	if (ms_der_expect(sd, DER_SEQUENCE, &eci) != MS_OK ||
	    ms_der_expect(&eci, DER_OID, &oid) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad encapContentInfo");
	}
	if (oid_is(oid, ms_oid_data, sizeof(ms_oid_data))) {
		m->is_data = true;
	} else if (!ms_der_span_eq(oid, oid_ms_indirect, sizeof(oid_ms_indirect))) {
		return fail(why, MS_E_MALFORMED, "content type neither id-data nor msIndirectData");
	}
	if (eci.len == 0) {
		return MS_OK;
	}
	/* [0] EXPLICIT: exactly one element inside, nothing after it. */
	if (ms_der_expect(&eci, DER_CTX0_CONS, &wrap) != MS_OK ||
	    ms_der_get(&wrap, &tag, &inner) != MS_OK || wrap.len != 0 || eci.len != 0) {
		return fail(why, MS_E_MALFORMED, "bad eContent");
	}
	m->has_content = true;
	return MS_OK;
}

/*
 * certificates [0] IMPLICIT SET OF, or the kernel's [2] IMPLICIT SEQUENCE
 * OF; each must be a SEQUENCE (pkcs7_extract_cert()). crls [1] or [3] are
 * skipped as the kernel ignores them.
 */
static ms_err
get_certs(struct ms_span *sd, struct ms_pkcs7 *m, const char **why)
{
	struct ms_span list = { NULL, 0 }, tlv = { NULL, 0 }, body = { NULL, 0 };
	uint8_t tag = peek(sd);

	if (tag == DER_CTX0_CONS || tag == DER_CTX2_CONS) {
		if (ms_der_expect(sd, tag, &list) != MS_OK) {
			return fail(why, MS_E_MALFORMED, "bad certificates");
		}
		while (list.len > 0) {
			if (m->n_certs == MS_PKCS7_CERTS_MAX) {
				return fail(why, MS_E_UNSUPPORTED, "more than 8 certificates");
			}
			if (take_tlv(&list, DER_SEQUENCE, &tlv, &body) != MS_OK) {
				return fail(why, MS_E_MALFORMED, "bad certificate");
			}
			m->certs[m->n_certs++] = tlv;
		}
	}
	tag = peek(sd);
	if (tag == DER_CTX1_CONS || tag == DER_CTX3_CONS) {
		if (ms_der_expect(sd, tag, &list) != MS_OK) {
			return fail(why, MS_E_MALFORMED, "bad crls");
		}
		m->has_crls = true;
	}
	return MS_OK;
}

/*
 * SignedData ::= SEQUENCE { version CMSVersion,
 *	digestAlgorithms SET OF DigestAlgorithmIdentifier,
 *	encapContentInfo EncapsulatedContentInfo,
 *	certificates [0] IMPLICIT CertificateSet OPTIONAL,
 *	crls [1] IMPLICIT RevocationInfoChoices OPTIONAL,
 *	signerInfos SET OF SignerInfo }		-- RFC 5652, 5.1
 */
static ms_err
get_signed_data(struct ms_span sd, struct ms_pkcs7 *m, const char **why)
{
	ms_err err;

	err = version_get(&sd, &m->version);
	if (err == MS_E_UNSUPPORTED) {
		return fail(why, MS_E_MALFORMED, "unsupported SignedData version (not 1 or 3)");
	}
	if (err != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad SignedData version");
	}
	err = get_digest_algs(&sd, m, why);
	if (err == MS_OK) {
		err = get_content_info(&sd, m, why);
	}
	if (err == MS_OK) {
		err = get_certs(&sd, m, why);
	}
	if (err == MS_OK) {
		err = get_signers(&sd, m, why);
	}
	if (err == MS_OK && sd.len != 0) {
		err = fail(why, MS_E_MALFORMED, "bytes after signerInfos");
	}
	return err;
}

ms_err
ms_pkcs7_parse(const uint8_t *p, size_t len, struct ms_pkcs7 *out, const char **why)
{
	struct ms_span ci = { NULL, 0 }, oid = { NULL, 0 };
	struct ms_span wrap = { NULL, 0 }, sd = { NULL, 0 };
	const char *reason = NULL;
	ms_err err;

	if (why != NULL) {
		*why = NULL;
	}
	if (out == NULL || (p == NULL && len != 0)) {
		return fail(why, MS_E_ARG, "no input");
	}
	memset(out, 0, sizeof(*out));
	if (len == 0) {
		return fail(why, MS_E_MALFORMED, "empty PKCS#7");
	}
	if (len > MS_PKCS7_MAX) {
		return fail(why, MS_E_UNSUPPORTED, "PKCS#7 larger than 256 KiB");
	}
	/* ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT } (RFC 5652, 3) */
	if (ms_der_expect_only((struct ms_span){ p, len }, DER_SEQUENCE, &ci) != MS_OK) {
		return fail(why, MS_E_MALFORMED,
			    "not one DER SEQUENCE (truncated, BER or trailing bytes)");
	}
	if (ms_der_expect(&ci, DER_OID, &oid) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad ContentInfo");
	}
	if (!oid_is(oid, ms_oid_signed_data, sizeof(ms_oid_signed_data))) {
		return fail(why, MS_E_MALFORMED, "ContentInfo is not signedData");
	}
	if (ci.len == 0) {
		return fail(why, MS_E_MALFORMED, "ContentInfo without content");
	}
	if (ms_der_expect_only(ci, DER_CTX0_CONS, &wrap) != MS_OK ||
	    ms_der_expect_only(wrap, DER_SEQUENCE, &sd) != MS_OK) {
		return fail(why, MS_E_MALFORMED, "bad SignedData");
	}
	err = get_signed_data(sd, out, &reason);
	if (err != MS_OK) {
		return fail(why, err, reason != NULL ? reason : "bad SignedData");
	}
	return MS_OK;
}

/*
 * kernel/module/signing.c mod_verify_sig() -> verify_pkcs7_signature()
 * (certs/system_keyring.c) -> pkcs7_verify(VERIFYING_MODULE_SIGNATURE).
 */
static ms_err
check_module(const struct ms_pkcs7 *msg, bool waive_mldsa, const char **why)
{
	bool all_mldsa = true;
	size_t i;

	if (why != NULL) {
		*why = NULL;
	}
	if (msg == NULL) {
		return fail(why, MS_E_ARG, "no message");
	}
	if (!msg->is_data) {
		return fail(why, MS_E_MALFORMED, "content type is not id-data (not pkcs7-data)");
	}
	if (msg->has_content) {
		return fail(why, MS_E_MALFORMED, "not detached: the PKCS#7 carries its content");
	}
	for (i = 0; i < msg->n_signers; i++) {
		all_mldsa = all_mldsa && msg->signers[i].key_type == MS_KEY_MLDSA;
	}
	for (i = 0; i < msg->n_signers; i++) {
		if (!msg->signers[i].has_signed_attrs || (waive_mldsa && all_mldsa)) {
			continue;
		}
		return fail(why, MS_E_MALFORMED, all_mldsa ?
			    "has signed attributes (authattrs): only a kernel with "
			    "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA takes them" :
			    "has signed attributes (authattrs)");
	}
	if (msg->n_signers == 0) {
		return fail(why, MS_E_MALFORMED, "no SignerInfo");
	}
	return MS_OK;
}

ms_err
ms_pkcs7_check_module(const struct ms_pkcs7 *msg, const char **why)
{
	return check_module(msg, false, why);
}

ms_err
ms_pkcs7_check_module_mldsa_waiver(const struct ms_pkcs7 *msg, const char **why)
{
	return check_module(msg, true, why);
}

ms_err
ms_pkcs7_parse_module(const uint8_t *p, size_t len, struct ms_pkcs7 *out, const char **why)
{
	ms_err err;

	err = ms_pkcs7_parse(p, len, out, why);
	if (err != MS_OK) {
		return err;
	}
	return ms_pkcs7_check_module(out, why);
}

const char *
ms_pkcs7_sig_alg_name(enum ms_key_type type)
{
	switch (type) {
	case MS_KEY_RSA:
		return "rsa";
	case MS_KEY_EC:
		return "ecdsa";
	case MS_KEY_MLDSA:
		return "ml-dsa";
	}
	return "unknown";
}

size_t
ms_pkcs7_digest_algs(const struct ms_pkcs7 *msg, enum ms_hash_alg *out, size_t cap)
{
	size_t n = 0, i, j;

	if (msg == NULL || out == NULL) {
		return 0;
	}
	for (i = 0; i < msg->n_signers && i < MS_PKCS7_SIGNERS_MAX; i++) {
		bool seen = false;

		for (j = 0; j < n; j++) {
			if (out[j] == msg->signers[i].hash) {
				seen = true;
			}
		}
		if (!seen && n < cap) {
			out[n++] = msg->signers[i].hash;
		}
	}
	return n;
}
