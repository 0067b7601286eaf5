/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading an appended module signature as the kernel does: a strict DER
 * parser of the PKCS#7/CMS ContentInfo (crypto/asymmetric_keys/pkcs7.asn1
 * and pkcs7_parser.c), the module rules of kernel/module/signing.c, and the
 * verification of every signer against given certificates. No I/O.
 */
#ifndef MS_PKCS7_H
#define MS_PKCS7_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cms.h"

/* Ceilings (HACKING, "Untrusted input"): an excess is an error. */
#define MS_PKCS7_MAX		(256 * 1024)	/* the whole PKCS#7 blob */
#define MS_PKCS7_SIGNERS_MAX	8
#define MS_PKCS7_ALGS_MAX	8		/* digestAlgorithms members */
#define MS_PKCS7_CERTS_MAX	8		/* certificates carried in the message */

enum ms_pkcs7_sid_type {
	MS_PKCS7_SID_ISSUER_SERIAL = 1,	/* issuerAndSerialNumber (version 1) */
	MS_PKCS7_SID_SKID,		/* [0] subjectKeyIdentifier (version 3) */
};

/*
 * One SignerInfo. Every span points into the buffer given to
 * ms_pkcs7_parse() and lives as long as it.
 */
struct ms_pkcs7_signer {
	unsigned int version;		/* 1 or 3 */
	enum ms_pkcs7_sid_type sid_type;
	struct ms_span issuer;		/* issuer Name TLV (ISSUER_SERIAL) */
	struct ms_span serial;		/* serialNumber INTEGER content bytes (ISSUER_SERIAL) */
	struct ms_span skid;		/* SubjectKeyIdentifier octets (SKID) */
	enum ms_hash_alg hash;		/* digestAlgorithm */
	enum ms_key_type key_type;	/* rsaEncryption: RSA; ecdsa-with-*: EC; id-ml-dsa-*: ML-DSA */
	enum ms_hash_alg sig_hash;	/* the hash an ecdsa-with-* OID names; 0 for RSA */
	enum ms_mldsa_set mldsa;	/* the set id-ml-dsa-* names; MS_MLDSA_NONE otherwise */
	bool has_signed_attrs;		/* [0] (or the kernel's [2]) authenticatedAttributes */
	struct ms_span signed_attrs;	/* their whole TLV as in the message; len 0 if none */
	bool has_unsigned_attrs;
	struct ms_span signature;	/* the signature OCTET STRING content */
};

/* A parsed ContentInfo holding a SignedData; spans as above. */
struct ms_pkcs7 {
	unsigned int version;		/* SignedData version: 1 or 3 */
	enum ms_hash_alg digest_algs[MS_PKCS7_ALGS_MAX];	/* known ones, in order */
	size_t n_digest_algs;
	bool is_data;			/* eContentType is id-data */
	bool has_content;		/* eContent present: not detached */
	struct ms_span certs[MS_PKCS7_CERTS_MAX];	/* each Certificate TLV */
	size_t n_certs;
	bool has_crls;
	struct ms_pkcs7_signer signers[MS_PKCS7_SIGNERS_MAX];
	size_t n_signers;		/* at least 1 after a successful parse */
};

/**
 * ms_pkcs7_parse() - parse @p as exactly one strict DER ContentInfo of type
 * signedData, with the rules the kernel's PKCS#7 parser applies: SignedData
 * version 1 or 3, SignerInfo version 1 only in a version 1 SignedData with
 * an issuerAndSerialNumber, version 3 only in a version 3 one with a
 * subjectKeyIdentifier, at least one signer, signed attributes present on
 * all signers or none. Indefinite and non-minimal lengths and trailing
 * bytes are refused (the kernel takes BER; sign-file writes DER). Parses
 * untrusted input; no recursion.
 * @p, @len:	the PKCS#7 blob; @out's spans point into it.
 * @out:	filled on success; unspecified on failure.
 * @why:	on failure a static reason ("SignedData-SignerInfo version
 *		mismatch", ...); may be NULL.
 * Return: MS_OK; MS_E_MALFORMED (breaks DER or a rule); MS_E_UNSUPPORTED
 * (a digest or signature algorithm the kernel does not verify, more
 * signers, algorithms or certificates than the ceilings); MS_E_ARG.
 */
ms_err ms_pkcs7_parse(const uint8_t *p, size_t len, struct ms_pkcs7 *out,
		      const char **why) MS_MUST_CHECK;

/**
 * ms_pkcs7_check_module() - the rules kernel/module/signing.c adds for a
 * module signature (mod_verify_sig, verify_pkcs7_signature,
 * pkcs7_verify): content type id-data, detached content, no signed
 * attributes ("Invalid module sig (has authattrs)").
 * Return: MS_OK, MS_E_MALFORMED with a static reason in *@why (may be NULL).
 */
ms_err ms_pkcs7_check_module(const struct ms_pkcs7 *msg, const char **why) MS_MUST_CHECK;

/**
 * ms_pkcs7_check_module_mldsa_waiver() - ms_pkcs7_check_module() as a
 * kernel with CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA applies it:
 * signed attributes are taken when every signer is ML-DSA (what sign-file
 * 7.2 writes with OpenSSL 3.5/3.6). ms_pkcs7_verify() checks them.
 * Return: MS_OK, MS_E_MALFORMED with a static reason in *@why (may be NULL).
 */
ms_err ms_pkcs7_check_module_mldsa_waiver(const struct ms_pkcs7 *msg,
					  const char **why) MS_MUST_CHECK;

/**
 * ms_pkcs7_parse_module() - ms_pkcs7_parse() then ms_pkcs7_check_module():
 * whether @p, @len is a PKCS#7 the kernel takes as a module signature in
 * form (the signatures are not checked). What `-s` appends, judged with
 * the same parser and rules, and so the same reasons, as `verify`.
 * @out:	filled as ms_pkcs7_parse() fills it; unspecified on failure.
 * @why:	on failure the static reason either function gives; may be NULL.
 * Return: MS_OK or the error of the step that failed.
 */
ms_err ms_pkcs7_parse_module(const uint8_t *p, size_t len, struct ms_pkcs7 *out,
			     const char **why) MS_MUST_CHECK;

/** ms_pkcs7_sig_alg_name() - "rsa", "ecdsa" or "ml-dsa", as the kernel names them. */
const char *ms_pkcs7_sig_alg_name(enum ms_key_type type);

/* One digest of the module payload (every byte before the PKCS#7 blob). */
struct ms_pkcs7_digest {
	enum ms_hash_alg alg;
	uint8_t d[MS_HASH_MAX_SIZE];
	size_t len;
};

/* What verifying one signer found. */
struct ms_pkcs7_signer_result {
	const struct ms_cms_cert *cert;	/* the matching certificate, or NULL */
	ms_err err;			/* MS_OK: the signature verifies */
	const char *why;		/* static reason when err != MS_OK */
};

/**
 * ms_pkcs7_verify() - verify every signer of @msg over the payload digests
 * @digests (one per hash the signers use; see ms_pkcs7_digest_algs()). Each
 * signer's certificate is looked up in @certs (@n_certs, any may be NULL)
 * by issuer Name and serial byte for byte, or by subjectKeyIdentifier, as
 * the kernel's pkcs7_find_key() / find_asymmetric_key() do. RSA: PKCS#1
 * v1.5 with the DigestInfo of the signer's digestAlgorithm; ECDSA: the DER
 * Ecdsa-Sig-Value as r||s. Every signer must verify (the kernel's rule).
 * @res:	@msg->n_signers results (caller storage), each filled.
 * @why:	static reason of the first failure; may be NULL.
 * Return: MS_OK when all verify; else the first failing signer's error:
 * MS_E_NOTFOUND (no certificate matches), MS_E_MISMATCH (signature does not
 * verify), MS_E_UNSUPPORTED (key type differs from the signature
 * algorithm), MS_E_ARG (a digest missing), MS_E_MALFORMED (ECDSA value).
 */
ms_err ms_pkcs7_verify(const struct ms_pkcs7 *msg, const struct ms_pkcs7_digest *digests,
		       size_t n_digests, const struct ms_cms_cert *const *certs, size_t n_certs,
		       struct ms_pkcs7_signer_result *res, const char **why) MS_MUST_CHECK;

/**
 * ms_pkcs7_verify_payload() - ms_pkcs7_verify() also given the payload
 * itself (@payload, @n_payload spans, concatenated; not copied), which an
 * ML-DSA signer without signed attributes signs (the kernel's
 * algo_takes_data, hash "none"). ML-DSA with signed attributes: their
 * messageDigest must equal the payload's SHA-512 in @digests, contentType
 * be id-data, and the signature cover their DER as a SET OF; ms_pkcs7_verify()
 * checks those without the payload. An ML-DSA signer without signed
 * attributes and no payload given fails with MS_E_ARG.
 * Return: as ms_pkcs7_verify().
 */
ms_err ms_pkcs7_verify_payload(const struct ms_pkcs7 *msg, const struct ms_pkcs7_digest *digests,
			       size_t n_digests, const struct ms_span *payload, size_t n_payload,
			       const struct ms_cms_cert *const *certs, size_t n_certs,
			       struct ms_pkcs7_signer_result *res, const char **why) MS_MUST_CHECK;

/**
 * ms_pkcs7_digest_algs() - the distinct digest algorithms of @msg's signers,
 * in signer order, into @out (@cap entries, MS_PKCS7_SIGNERS_MAX is always
 * enough). Return: the count.
 */
size_t ms_pkcs7_digest_algs(const struct ms_pkcs7 *msg, enum ms_hash_alg *out, size_t cap);

/* ---- cert_ids.c: the identifiers of a certificate and of a Name ---- */

/** ms_cms_cert_subject_name() - the subject Name TLV as in the certificate. */
struct ms_span ms_cms_cert_subject_name(const struct ms_cms_cert *cert);

/**
 * ms_cms_name_text() - a DER Name TLV (untrusted) as text ("CN=x, O=y")
 * into @out (@cap bytes, NUL-terminated, truncated to fit); bytes outside
 * printable ASCII show as '?'. For messages only.
 * Return: MS_OK, MS_E_MALFORMED (not a Name; @out is then ""), MS_E_ARG.
 */
ms_err ms_cms_name_text(struct ms_span name, char *out, size_t cap) MS_MUST_CHECK;

/**
 * ms_cms_name_cn() - the first commonName of a DER Name TLV (untrusted),
 * its string bytes as they are (as modinfo prints the signer), into @out
 * (@cap bytes, NUL-terminated, truncated to fit; a NUL or control byte
 * shows as '?'). @out is "" when there is no commonName.
 * Return: MS_OK, MS_E_MALFORMED (not a Name; @out is then "").
 */
ms_err ms_cms_name_cn(struct ms_span name, char *out, size_t cap) MS_MUST_CHECK;

#endif
