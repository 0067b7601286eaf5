// SPDX-License-Identifier: GPL-2.0-only
/*
 * The PKCS#7 ContentInfo of an appended module signature, taken apart as
 * the kernel's crypto/asymmetric_keys/pkcs7.asn1 and pkcs7_parser.c do,
 * with the strict DER reader of der_parse.c; the SignerInfos are read by
 * pkcs7_signer.c. Parses untrusted input.
 *
 * The grammar is fixed and shallow, so each level is its own function and
 * nothing recurses. Where the kernel's grammar offers a choice (SET or
 * SEQUENCE, [0] or [2] certificates, ...) both are accepted as the kernel
 * accepts them; BER (indefinite lengths) is refused: sign-file writes DER.
 */
#include <string.h>

#include "pkcs7_internal.h"

/* msIndirectData 1.3.6.1.4.1.311.2.1.4 (Authenticode; kexec, not modules) */
static const uint8_t oid_ms_indirect[] = {
	0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04,
};

/* The first failure's reason; later ones never overwrite it. */
ms_err
ms_pkcs7_fail(const char **why, ms_err err, const char *reason)
{
	if (why != NULL && *why == NULL) {
		*why = reason;
	}
	return err;
}

/* Tag of the next element, 0 at the end (0 is no tag we accept). */
uint8_t
ms_pkcs7_peek(const struct ms_span *in)
{
	return in->len > 0 ? in->p[0] : 0;
}

/* ms_der_expect() that also returns the whole TLV. */
ms_err
ms_pkcs7_take_tlv(struct ms_span *in, uint8_t tag, struct ms_span *tlv, struct ms_span *body)
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
bool
ms_pkcs7_oid_is(struct ms_span oid, const uint8_t *tlv, size_t tlv_len)
{
	/* Our tables hold short-form OID TLVs: 06 len content. */
	if (tlv_len < 2 || tlv[0] != DER_OID || (size_t)tlv[1] != tlv_len - 2) {
		return false;
	}
	return ms_der_span_eq(oid, tlv + 2, tlv_len - 2);
}

/* An AlgorithmIdentifier row of hash.c: 30 len, then the OID TLV. */
bool
ms_pkcs7_oid_is_alg(struct ms_span oid, const uint8_t *alg_id, size_t alg_id_len)
{
	/* The OID TLV is the first element; its own length byte bounds it. */
	if (alg_id_len < 4 || (size_t)alg_id[3] + 4 > alg_id_len) {
		return false;
	}
	return ms_pkcs7_oid_is(oid, alg_id + 2, (size_t)alg_id[3] + 2);
}

/* The digest algorithms of crypto/asymmetric_keys/pkcs7_parser.c we can name. */
bool
ms_pkcs7_hash_from_oid(struct ms_span oid, enum ms_hash_alg *out)
{
	int i;

	for (i = MS_HASH_SHA1; i <= MS_HASH_SHA3_512; i++) {
		const struct ms_hash_info *h = ms_hash_info((enum ms_hash_alg)i);

		if (h != NULL && ms_pkcs7_oid_is_alg(oid, h->alg_id, h->alg_id_len)) {
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
ms_err
ms_pkcs7_alg_id_get(struct ms_span *in, struct ms_span *oid)
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
ms_err
ms_pkcs7_version_get(struct ms_span *in, unsigned int *version)
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

/* signerInfos: SET OF or SEQUENCE OF SignerInfo (pkcs7.asn1). */
static ms_err
get_signers(struct ms_span *sd, struct ms_pkcs7 *m, const char **why)
{
	struct ms_span list = { NULL, 0 }, si = { NULL, 0 };
	uint8_t tag = ms_pkcs7_peek(sd);
	size_t i;
	ms_err err;

	if ((tag != DER_SET && tag != DER_SEQUENCE) || ms_der_expect(sd, tag, &list) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad signerInfos");
	}
	while (list.len > 0) {
		if (m->n_signers == MS_PKCS7_SIGNERS_MAX) {
			return ms_pkcs7_fail(why, MS_E_UNSUPPORTED, "more than 8 signers");
		}
		if (ms_der_expect(&list, DER_SEQUENCE, &si) != MS_OK) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad SignerInfo");
		}
		err = ms_pkcs7_signer_parse(si, m->version, &m->signers[m->n_signers], why);
		if (err != MS_OK) {
			return err;
		}
		m->n_signers++;
	}
	if (m->n_signers == 0) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "no SignerInfo");
	}
	/* pkcs7_check_authattrs(): "Inconsistently supplied authAttrs". */
	for (i = 1; i < m->n_signers; i++) {
		if (m->signers[i].has_signed_attrs != m->signers[0].has_signed_attrs) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED,
					     "signed attributes on some signers only");
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
	uint8_t tag = ms_pkcs7_peek(sd);

	if ((tag != DER_SET && tag != DER_SEQUENCE) || ms_der_expect(sd, tag, &list) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad digestAlgorithms");
	}
	while (list.len > 0) {
		if (ms_pkcs7_alg_id_get(&list, &oid) != MS_OK) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad digestAlgorithms");
		}
		if (!ms_pkcs7_hash_from_oid(oid, &a)) {
			continue;
		}
		if (m->n_digest_algs == MS_PKCS7_ALGS_MAX) {
			return ms_pkcs7_fail(why, MS_E_UNSUPPORTED,
					     "more than 8 digest algorithms");
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
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad encapContentInfo");
	}
	if (ms_pkcs7_oid_is(oid, ms_oid_data, sizeof(ms_oid_data))) {
		m->is_data = true;
	} else if (!ms_der_span_eq(oid, oid_ms_indirect, sizeof(oid_ms_indirect))) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "content type neither id-data nor msIndirectData");
	}
	if (eci.len == 0) {
		return MS_OK;
	}
	/* [0] EXPLICIT: exactly one element inside, nothing after it. */
	if (ms_der_expect(&eci, DER_CTX0_CONS, &wrap) != MS_OK ||
	    ms_der_get(&wrap, &tag, &inner) != MS_OK || wrap.len != 0 || eci.len != 0) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad eContent");
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
	uint8_t tag = ms_pkcs7_peek(sd);

	if (tag == DER_CTX0_CONS || tag == DER_CTX2_CONS) {
		if (ms_der_expect(sd, tag, &list) != MS_OK) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad certificates");
		}
		while (list.len > 0) {
			if (m->n_certs == MS_PKCS7_CERTS_MAX) {
				return ms_pkcs7_fail(why, MS_E_UNSUPPORTED,
						     "more than 8 certificates");
			}
			if (ms_pkcs7_take_tlv(&list, DER_SEQUENCE, &tlv, &body) != MS_OK) {
				return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad certificate");
			}
			m->certs[m->n_certs++] = tlv;
		}
	}
	tag = ms_pkcs7_peek(sd);
	if (tag == DER_CTX1_CONS || tag == DER_CTX3_CONS) {
		if (ms_der_expect(sd, tag, &list) != MS_OK) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad crls");
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

	err = ms_pkcs7_version_get(&sd, &m->version);
	if (err == MS_E_UNSUPPORTED) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "unsupported SignedData version (not 1 or 3)");
	}
	if (err != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad SignedData version");
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
		err = ms_pkcs7_fail(why, MS_E_MALFORMED, "bytes after signerInfos");
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
		return ms_pkcs7_fail(why, MS_E_ARG, "no input");
	}
	memset(out, 0, sizeof(*out));
	if (len == 0) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "empty PKCS#7");
	}
	if (len > MS_PKCS7_MAX) {
		return ms_pkcs7_fail(why, MS_E_UNSUPPORTED, "PKCS#7 larger than 256 KiB");
	}
	/* ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT } (RFC 5652, 3) */
	if (ms_der_expect_only((struct ms_span){ p, len }, DER_SEQUENCE, &ci) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "not one DER SEQUENCE (truncated, BER or trailing bytes)");
	}
	if (ms_der_expect(&ci, DER_OID, &oid) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad ContentInfo");
	}
	if (!ms_pkcs7_oid_is(oid, ms_oid_signed_data, sizeof(ms_oid_signed_data))) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "ContentInfo is not signedData");
	}
	if (ci.len == 0) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "ContentInfo without content");
	}
	if (ms_der_expect_only(ci, DER_CTX0_CONS, &wrap) != MS_OK ||
	    ms_der_expect_only(wrap, DER_SEQUENCE, &sd) != MS_OK) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "bad SignedData");
	}
	err = get_signed_data(sd, out, &reason);
	if (err != MS_OK) {
		return ms_pkcs7_fail(why, err, reason != NULL ? reason : "bad SignedData");
	}
	return MS_OK;
}

/*
 * kernel/module/signing.c mod_verify_sig() -> verify_pkcs7_signature()
 * (certs/system_keyring.c) -> pkcs7_verify(VERIFYING_MODULE_SIGNATURE).
 */
ms_err
ms_pkcs7_check_module(const struct ms_pkcs7 *msg, const char **why)
{
	size_t i;

	if (why != NULL) {
		*why = NULL;
	}
	if (msg == NULL) {
		return ms_pkcs7_fail(why, MS_E_ARG, "no message");
	}
	if (!msg->is_data) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "content type is not id-data (not pkcs7-data)");
	}
	if (msg->has_content) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED,
				     "not detached: the PKCS#7 carries its content");
	}
	for (i = 0; i < msg->n_signers; i++) {
		if (msg->signers[i].has_signed_attrs) {
			return ms_pkcs7_fail(why, MS_E_MALFORMED,
					     "has signed attributes (authattrs)");
		}
	}
	if (msg->n_signers == 0) {
		return ms_pkcs7_fail(why, MS_E_MALFORMED, "no SignerInfo");
	}
	return MS_OK;
}

const char *
ms_pkcs7_sig_alg_name(enum ms_key_type type)
{
	switch (type) {
	case MS_KEY_RSA:
		return "rsa";
	case MS_KEY_EC:
		return "ecdsa";
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
