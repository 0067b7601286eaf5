// SPDX-License-Identifier: GPL-2.0-only
/*
 * One SignerInfo of a module signature, read as the kernel's pkcs7.asn1 and
 * pkcs7_parser.c read it: version and signer identifier form, digest and
 * signature algorithms, attributes, signature. Parses untrusted input.
 */
#include <string.h>

#include "pkcs7_internal.h"

/* rsaEncryption, or ecdsa-with-<hash> (pkcs7_sig_note_pkey_algo()). */
static bool
sig_alg_from_oid(struct ms_span oid, enum ms_key_type *type, enum ms_hash_alg *sig_hash)
{
	int i;

	if (ms_pkcs7_oid_is_alg(oid, ms_alg_rsa_encryption, sizeof(ms_alg_rsa_encryption))) {
		*type = MS_KEY_RSA;
		*sig_hash = (enum ms_hash_alg)0;
		return true;
	}
	for (i = MS_HASH_SHA1; i <= MS_HASH_SHA3_512; i++) {
		const struct ms_hash_info *h = ms_hash_info((enum ms_hash_alg)i);

		if (h != NULL && ms_pkcs7_oid_is_alg(oid, h->ecdsa_alg_id, h->ecdsa_alg_id_len)) {
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
		if (ms_pkcs7_peek(si) != DER_CTX0_PRIM) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED,
					     "SignerInfo version 3 without a subjectKeyIdentifier");
		}
		if (ms_der_expect(si, DER_CTX0_PRIM, &s->skid) != MS_OK || s->skid.len == 0) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED,
					     "bad subjectKeyIdentifier in SignerInfo");
		}
		s->sid_type = MS_PKCS7_SID_SKID;
		return MS_OK;
	}
	if (ms_pkcs7_peek(si) != DER_SEQUENCE) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "SignerInfo version 1 without an issuerAndSerialNumber");
	}
	if (ms_der_expect(si, DER_SEQUENCE, &ias) != MS_OK ||
	    ms_pkcs7_take_tlv(&ias, DER_SEQUENCE, &s->issuer, &body) != MS_OK ||
	    check_name(s->issuer) != MS_OK ||
	    ms_der_expect(&ias, DER_INTEGER, &s->serial) != MS_OK ||
	    s->serial.len == 0 || ias.len != 0) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "bad issuerAndSerialNumber in SignerInfo");
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
	struct ms_span body = { NULL, 0 }, seq = { NULL, 0 };
	uint8_t tag = ms_pkcs7_peek(si);
	ms_err err;

	if (tag != DER_CTX0_CONS && tag != DER_CTX2_CONS) {
		return MS_OK;
	}
	err = ms_der_expect(si, tag, &body);
	if (err == MS_OK && tag == DER_CTX2_CONS) {
		err = ms_der_expect_only(body, DER_SEQUENCE, &seq);
		body = seq;
	}
	if (err == MS_OK) {
		err = check_attrs(body);
	}
	if (err != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad signed attributes in SignerInfo");
	}
	s->has_signed_attrs = true;
	return MS_OK;
}

/* unsignedAttrs: [1] IMPLICIT SET OF, or [3] IMPLICIT SEQUENCE OF. */
static ms_err
get_unsigned_attrs(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span body = { NULL, 0 };
	uint8_t tag = ms_pkcs7_peek(si);

	if (tag != DER_CTX1_CONS && tag != DER_CTX3_CONS) {
		return MS_OK;
	}
	if (ms_der_expect(si, tag, &body) != MS_OK || check_attrs(body) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad unsigned attributes in SignerInfo");
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

	err = ms_pkcs7_version_get(si, &s->version);
	if (err == MS_E_UNSUPPORTED) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "unsupported SignerInfo version (not 1 or 3)");
	}
	if (err != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad SignerInfo version");
	}
	if ((s->version == 1 && sd_version != 1) || (s->version == 3 && sd_version == 1)) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "SignedData-SignerInfo version mismatch");
	}
	return MS_OK;
}

/* digestAlgorithm: one the kernel's pkcs7_sig_note_digest_algo() knows. */
static ms_err
get_digest_alg(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span oid = { NULL, 0 };

	if (ms_pkcs7_alg_id_get(si, &oid) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad digestAlgorithm in SignerInfo");
	}
	if (!ms_pkcs7_hash_from_oid(oid, &s->hash)) {
		return ms_pkcs7_fail(why, MS_E_UNSUPPORTED,
				     "digest algorithm is not one the kernel verifies");
	}
	return MS_OK;
}

/* signatureAlgorithm and signature. */
static ms_err
get_signature(struct ms_span *si, struct ms_pkcs7_signer *s, const char **why)
{
	struct ms_span oid = { NULL, 0 };

	if (ms_pkcs7_alg_id_get(si, &oid) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad signatureAlgorithm in SignerInfo");
	}
	if (!sig_alg_from_oid(oid, &s->key_type, &s->sig_hash)) {
		return ms_pkcs7_fail(why, MS_E_UNSUPPORTED,
				     "signature algorithm is not one the kernel "
				     "verifies (rsaEncryption, ecdsa-with-*)");
	}
	if (ms_der_expect(si, DER_OCTET_STRING, &s->signature) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad signature in SignerInfo");
	}
	if (s->signature.len == 0 || s->signature.len > MS_SIG_MAX) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "signature empty or longer than 2048 bytes");
	}
	return MS_OK;
}

/*
 * SignerInfo ::= SEQUENCE { version, sid, digestAlgorithm,
 *	signedAttrs [0] IMPLICIT OPTIONAL, signatureAlgorithm,
 *	signature OCTET STRING, unsignedAttrs [1] IMPLICIT OPTIONAL }
 *						-- RFC 5652, 5.3
 */
ms_err
ms_pkcs7_signer_parse(struct ms_span si, unsigned int sd_version, struct ms_pkcs7_signer *s,
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
		err = ms_pkcs7_fail(why, MS_E_MALFORMED, "bytes after the end of a SignerInfo");
	}
	return err;
}

