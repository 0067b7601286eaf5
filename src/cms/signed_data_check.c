// SPDX-License-Identifier: GPL-2.0-only
/*
 * Checks that a ready-made CMS blob (for `-s`) is one strict DER detached
 * SignedData the kernel's pkcs7 parser will take apart. Parses untrusted
 * input.
 */
#include "cms_internal.h"

/* INTEGER 1 or 3: the only CMSVersion values the kernel accepts. */
static ms_err
get_version(struct ms_span *in, unsigned int *version)
{
	struct ms_span v = { NULL, 0 };
	ms_err err;

	err = ms_der_expect(in, DER_INTEGER, &v);
	if (err != MS_OK) {
		return err;
	}
	if (v.len != 1 || (v.p[0] != 1 && v.p[0] != 3)) {
		return MS_E_MALFORMED;
	}
	*version = v.p[0];
	return MS_OK;
}

/* Skip an element if the next tag is @tag (OPTIONAL fields). */
static ms_err
skip_optional(struct ms_span *in, uint8_t tag)
{
	struct ms_span body = { NULL, 0 };

	if (in->len == 0 || in->p[0] != tag) {
		return MS_OK;
	}
	return ms_der_expect(in, tag, &body);
}

/*
 * SignerInfo ::= SEQUENCE { version, sid, digestAlgorithm,
 *	signedAttrs [0] OPTIONAL, signatureAlgorithm, signature OCTET STRING,
 *	unsignedAttrs [1] OPTIONAL }			-- RFC 5652, 5.3
 * Version 1 goes with an issuerAndSerialNumber sid in a version 1
 * SignedData, version 3 with a [0] sid in a version 3 one (the kernel's
 * pkcs7_note_signerinfo_version()).
 */
static ms_err
check_signer_info(struct ms_span si, unsigned int sd_version)
{
	struct ms_span body = { NULL, 0 };
	unsigned int version = 0;
	ms_err err;

	err = get_version(&si, &version);
	if (err == MS_OK && version != sd_version) {
		err = MS_E_MALFORMED;
	}
	if (err == MS_OK) {
		err = ms_der_expect(&si, version == 3 ? DER_CTX0_PRIM : DER_SEQUENCE, &body);
	}
	if (err == MS_OK) {
		err = ms_der_expect(&si, DER_SEQUENCE, &body);
	}
	if (err == MS_OK) {
		err = skip_optional(&si, DER_CTX0_CONS);
	}
	if (err == MS_OK) {
		err = ms_der_expect(&si, DER_SEQUENCE, &body);
	}
	if (err == MS_OK) {
		err = ms_der_expect(&si, DER_OCTET_STRING, &body);
	}
	if (err == MS_OK) {
		err = skip_optional(&si, DER_CTX1_CONS);
	}
	if (err == MS_OK && si.len != 0) {
		err = MS_E_MALFORMED;
	}
	return err;
}

/* SET OF SEQUENCE; with @is_signer_infos, each member is a SignerInfo. */
static ms_err
check_set_of(struct ms_span set, bool is_signer_infos, unsigned int sd_version)
{
	struct ms_span member = { NULL, 0 };
	ms_err err;

	if (is_signer_infos && set.len == 0) {
		return MS_E_MALFORMED;	/* the kernel needs a signer */
	}
	while (set.len > 0) {
		err = ms_der_expect(&set, DER_SEQUENCE, &member);
		if (err != MS_OK) {
			return err;
		}
		if (is_signer_infos) {
			err = check_signer_info(member, sd_version);
			if (err != MS_OK) {
				return err;
			}
		}
	}
	return MS_OK;
}

/*
 * SignedData ::= SEQUENCE { version, digestAlgorithms SET,
 *	encapContentInfo SEQUENCE { id-data } (no eContent: detached),
 *	certificates [0] OPTIONAL, crls [1] OPTIONAL,
 *	signerInfos SET }				-- RFC 5652, 5.1
 */
static ms_err
check_signed_data(struct ms_span sd)
{
	struct ms_span algs = { NULL, 0 }, eci = { NULL, 0 }, sis = { NULL, 0 };
	struct ms_span oid = { NULL, 0 };
	unsigned int version = 0;
	ms_err err;

	err = get_version(&sd, &version);
	if (err == MS_OK) {
		err = ms_der_expect(&sd, DER_SET, &algs);
	}
	if (err == MS_OK) {
		err = check_set_of(algs, false, version);
	}
	if (err == MS_OK) {
		err = ms_der_expect(&sd, DER_SEQUENCE, &eci);
	}
	if (err == MS_OK) {
		/* Only the type: eContent present would mean attached data. */
		err = ms_der_expect_only(eci, DER_OID, &oid);
	}
	if (err == MS_OK && !ms_der_span_eq(oid, ms_oid_data + 2, sizeof(ms_oid_data) - 2)) {
		err = MS_E_MALFORMED;	/* the kernel wants id-data for modules */
	}
	if (err == MS_OK) {
		err = skip_optional(&sd, DER_CTX0_CONS);
	}
	if (err == MS_OK) {
		err = skip_optional(&sd, DER_CTX1_CONS);
	}
	if (err == MS_OK) {
		err = ms_der_expect_only(sd, DER_SET, &sis);
	}
	if (err == MS_OK) {
		err = check_set_of(sis, true, version);
	}
	return err;
}

ms_err
ms_cms_signed_data_check(const uint8_t *p, size_t len)
{
	struct ms_span ci = { NULL, 0 }, oid = { NULL, 0 };
	struct ms_span wrap = { NULL, 0 }, sd = { NULL, 0 };
	ms_err err;

	if (p == NULL || len == 0) {
		return MS_E_MALFORMED;
	}
	/* ContentInfo ::= SEQUENCE { contentType, content [0] EXPLICIT } */
	err = ms_der_expect_only((struct ms_span){ p, len }, DER_SEQUENCE, &ci);
	if (err == MS_OK) {
		err = ms_der_expect(&ci, DER_OID, &oid);
	}
	if (err == MS_OK &&
	    !ms_der_span_eq(oid, ms_oid_signed_data + 2, sizeof(ms_oid_signed_data) - 2)) {
		err = MS_E_MALFORMED;
	}
	if (err == MS_OK) {
		err = ms_der_expect_only(ci, DER_CTX0_CONS, &wrap);
	}
	if (err == MS_OK) {
		err = ms_der_expect_only(wrap, DER_SEQUENCE, &sd);
	}
	if (err == MS_OK) {
		err = check_signed_data(sd);
	}
	return (err == MS_OK) ? MS_OK : MS_E_MALFORMED;
}
