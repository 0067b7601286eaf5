/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Digests, certificates (through mbedTLS), the bytes a key signs and the
 * PKCS#7/CMS SignedData the kernel's sign-file emits, in our own DER.
 * No I/O, no PKCS#11.
 */
#ifndef MS_CMS_H
#define MS_CMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/fips204.h"
#include "../common/ms_common.h"

enum ms_hash_alg {
	MS_HASH_SHA1 = 1,
	MS_HASH_SHA224,
	MS_HASH_SHA256,
	MS_HASH_SHA384,
	MS_HASH_SHA512,
	MS_HASH_SHA3_256,
	MS_HASH_SHA3_384,
	MS_HASH_SHA3_512,
};

#define MS_HASH_MAX_SIZE 64

enum ms_key_type {
	MS_KEY_RSA = 1,
	MS_KEY_EC,
	MS_KEY_MLDSA,		/* FIPS 204; the parameter set in enum ms_mldsa_set */
};

/* ML-DSA parameter sets (FIPS 204, 4): id-ml-dsa-44/65/87, 2.16.840.1.101.3.4.3.17-19. */
enum ms_mldsa_set {
	MS_MLDSA_NONE = 0,
	MS_MLDSA_44,
	MS_MLDSA_65,
	MS_MLDSA_87,
};

enum ms_ec_curve {
	MS_EC_NONE = 0,
	MS_EC_P256,
	MS_EC_P384,
	MS_EC_P521,
};

/* Largest RSA modulus we handle, in bytes: RSA-16384. */
#define MS_RSA_MAX_BYTES 2048
/* Largest signature we handle: ML-DSA-87's (FIPS 204, Table 2). */
#define MS_SIG_MAX MS_MLDSA87_SIG_BYTES

/**
 * ms_cms_hash_from_name() - look up a hash the way sign-file takes its first
 * argument (case-insensitive): sha1, sha224, sha256, sha384, sha512,
 * sha3-256, sha3-384, sha3-512, and the other names OpenSSL 3.0 gives these
 * (SHA2-256, SHA-256, 2.16.840.1.101.3.4.2.1, RSA-SHA256, ...).
 * Return: MS_OK; MS_E_ARG for any other name (md5, unknown).
 */
ms_err ms_cms_hash_from_name(const char *name, enum ms_hash_alg *out) MS_MUST_CHECK;

/** ms_cms_hash_name() - canonical lower-case name ("sha256"); never NULL. */
const char *ms_cms_hash_name(enum ms_hash_alg alg);

/** ms_cms_hash_size() - digest length in bytes, 0 for an invalid value. */
size_t ms_cms_hash_size(enum ms_hash_alg alg);

/**
 * ms_cms_hash_mbedtls_md() - the mbedtls_md_type_t of @alg, for the one
 * other user of mbedTLS hashes (the key-file signer's RFC 6979 HMAC);
 * MBEDTLS_MD_NONE (0) for SHA-3, which mbedTLS 2.28 lacks (with 3.6 too:
 * one path for both). Module digests do not depend on it: ms_cms_digest_*
 * computes every hash here (nettle).
 */
int ms_cms_hash_mbedtls_md(enum ms_hash_alg alg);

/* Streaming digest; heap object owned by the caller. */
struct ms_cms_digest;

/**
 * ms_cms_digest_new() - start a digest of @alg (any of enum ms_hash_alg).
 * Thread-safe; each object is used by one thread at a time.
 * Return: MS_OK, MS_E_ARG, MS_E_NOMEM. *@out is NULL on failure.
 */
ms_err ms_cms_digest_new(enum ms_hash_alg alg, struct ms_cms_digest **out) MS_MUST_CHECK;
ms_err ms_cms_digest_update(struct ms_cms_digest *d, const uint8_t *p, size_t len) MS_MUST_CHECK;
/**
 * ms_cms_digest_final() - write the digest to @out (@cap >= hash size) and
 * reset @d so that it can hash the next module.
 */
ms_err ms_cms_digest_final(struct ms_cms_digest *d, uint8_t *out, size_t cap,
			   size_t *out_len) MS_MUST_CHECK;
void ms_cms_digest_free(struct ms_cms_digest *d);

/**
 * ms_cms_tbs_encode() - the bytes the key signs for a module digest: for RSA
 * the PKCS#1 DigestInfo (RFC 8017, 9.2) for CKM_RSA_PKCS, for EC the digest
 * itself for CKM_ECDSA. @out NULL asks for the size in *@out_len.
 * Return: MS_OK, MS_E_ARG (digest length not the hash's), MS_E_NOSPACE.
 */
ms_err ms_cms_tbs_encode(enum ms_key_type type, enum ms_hash_alg alg,
			 const uint8_t *digest, size_t digest_len,
			 uint8_t *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

/**
 * ms_cms_sig_encode() - turn a raw signature as PKCS#11 returns it into the
 * SignerInfo signature value: RSA unchanged; EC r||s (two equal halves) into
 * DER Ecdsa-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER } with minimal
 * INTEGERs. @out NULL asks for the size.
 * Return: MS_OK, MS_E_MALFORMED (odd or empty r||s, r or s zero), MS_E_NOSPACE.
 */
ms_err ms_cms_sig_encode(enum ms_key_type type, const uint8_t *raw, size_t raw_len,
			 uint8_t *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

/* A parsed X.509 certificate; heap object owned by the caller. */
struct ms_cms_cert;

/**
 * ms_cms_cert_parse() - parse a DER or PEM certificate (untrusted input).
 * ML-DSA certificates (RFC 9881), which mbedTLS cannot parse, are read by
 * our own DER parser, one per input (not in a PEM bundle here: read a
 * bundle with ms_cms_cert_parse_all()).
 * Return: MS_OK, MS_E_MALFORMED, MS_E_UNSUPPORTED (key neither RSA, EC
 * P-256/384/521 nor ML-DSA-44/65/87; an ML-DSA certificate in a PEM
 * bundle), MS_E_NOMEM. *@out is NULL on failure.
 */
ms_err ms_cms_cert_parse(const uint8_t *p, size_t len, struct ms_cms_cert **out) MS_MUST_CHECK;
void ms_cms_cert_free(struct ms_cms_cert *cert);

/**
 * ms_cms_cert_parse_all() - every certificate of a DER file (one) or a PEM
 * file (each CERTIFICATE block, in order: the kernel's trusted-keys bundle,
 * ML-DSA certificates among the others), each parsed by ms_cms_cert_parse()
 * from its own DER into @out[i] (owned by the caller), at most @cap.
 * Return: MS_OK (*@n_out >= 1), the errors of ms_cms_cert_parse() for any
 * block, MS_E_NOSPACE (more than @cap), MS_E_ARG. On failure @out holds
 * nothing to free and *@n_out is 0.
 */
ms_err ms_cms_cert_parse_all(const uint8_t *p, size_t len, struct ms_cms_cert **out, size_t cap,
			     size_t *n_out) MS_MUST_CHECK;

/**
 * ms_cms_cert_key() - the certificate's key type, curve (MS_EC_NONE for RSA)
 * and size in bits. Any out pointer may be NULL.
 */
void ms_cms_cert_key(const struct ms_cms_cert *cert, enum ms_key_type *type,
		     enum ms_ec_curve *curve, size_t *bits);

/**
 * ms_cms_cert_mldsa_set() - the ML-DSA parameter set of the certificate's
 * key; MS_MLDSA_NONE for any other key (and for NULL).
 */
enum ms_mldsa_set ms_cms_cert_mldsa_set(const struct ms_cms_cert *cert);

/**
 * ms_cms_cert_der() - the certificate's DER encoding (a PEM input decoded),
 * as @der pointing into @cert: valid while @cert is.
 */
void ms_cms_cert_der(const struct ms_cms_cert *cert, struct ms_span *der);

/**
 * ms_cms_cert_subject() - the subject as text ("O=..., CN=...") into @out,
 * NUL-terminated and truncated to @cap, for messages only.
 */
void ms_cms_cert_subject(const struct ms_cms_cert *cert, char *out, size_t cap);

/**
 * ms_cms_cert_match_rsa() - compare the certificate's key with an RSA public
 * key given as big-endian modulus and exponent (leading zeros allowed).
 * Return: MS_OK if equal, MS_E_MISMATCH if not (also for an EC certificate),
 * MS_E_MALFORMED for empty input, MS_E_NOMEM.
 */
ms_err ms_cms_cert_match_rsa(const struct ms_cms_cert *cert, const uint8_t *n, size_t n_len,
			     const uint8_t *e, size_t e_len) MS_MUST_CHECK;

/**
 * ms_cms_cert_match_ec() - compare with an EC public key: @params is the DER
 * ECParameters (a named-curve OID, as CKA_EC_PARAMS holds it), @point the
 * point as CKA_EC_POINT holds it: either a DER OCTET STRING wrapping
 * 04||X||Y (PKCS#11 2.40) or the bare 04||X||Y (some tokens).
 * Return: MS_OK, MS_E_MISMATCH, MS_E_MALFORMED, MS_E_NOMEM.
 */
ms_err ms_cms_cert_match_ec(const struct ms_cms_cert *cert, const uint8_t *params, size_t params_len,
			    const uint8_t *point, size_t point_len) MS_MUST_CHECK;

/**
 * ms_cms_cert_match_spki() - compare with a DER SubjectPublicKeyInfo (as a
 * PEM key's public half or CKA_PUBLIC_KEY_INFO gives it).
 * Return: MS_OK, MS_E_MISMATCH, MS_E_MALFORMED, MS_E_NOMEM.
 */
ms_err ms_cms_cert_match_spki(const struct ms_cms_cert *cert, const uint8_t *spki,
			      size_t spki_len) MS_MUST_CHECK;

/**
 * ms_cms_cert_verify() - verify a signature made over @tbs (as
 * ms_cms_tbs_encode() built it) with the certificate's public key: RSA
 * PKCS#1 v1.5 over the exact DigestInfo (@sig exactly the modulus's
 * length), or ECDSA over the digest with @sig as the raw r||s (each half
 * the curve's size, r and s in [1, q - 1]). Every signature a signer hands
 * back passes here before it is written; `verify` and the check of a key
 * that exposes no public attributes use it too. Thread-safe: the key was
 * loaded when the certificate was parsed and is only read.
 * An ML-DSA key verifies pure ML-DSA with the empty context over @tbs as
 * the whole message (the module, or the DER of the signed attributes);
 * @alg is not used then. For a message in pieces see ms_cms_mldsa_verify().
 * Return: MS_OK, MS_E_MISMATCH (does not verify), MS_E_ARG.
 */
ms_err ms_cms_cert_verify(const struct ms_cms_cert *cert, enum ms_hash_alg alg,
			  const uint8_t *tbs, size_t tbs_len,
			  const uint8_t *sig, size_t sig_len) MS_MUST_CHECK;

/**
 * ms_cms_cert_verify_parts() - ms_cms_cert_verify() of a message in
 * pieces, @msg's @n_msg spans: an ML-DSA signature over their
 * concatenation (a module verified in place), or for RSA and EC over the
 * one span (@n_msg 1) that ms_cms_cert_verify() takes as @tbs.
 * Return: MS_OK, MS_E_MISMATCH, MS_E_ARG.
 */
ms_err ms_cms_cert_verify_parts(const struct ms_cms_cert *cert, enum ms_hash_alg alg,
				const struct ms_span *msg, size_t n_msg, const uint8_t *sig,
				size_t sig_len) MS_MUST_CHECK;

/**
 * ms_cms_signer_id_encode() - the SignerInfo sid, as one DER TLV:
 * IssuerAndSerialNumber with issuer Name and serial INTEGER copied byte for
 * byte from the certificate, or with @use_skid the [0] IMPLICIT
 * SubjectKeyIdentifier (RFC 5652, 5.3). @out NULL asks for the size.
 * Return: MS_OK, MS_E_NOTFOUND (@use_skid and no SKID), MS_E_NOSPACE.
 */
ms_err ms_cms_signer_id_encode(const struct ms_cms_cert *cert, bool use_skid,
			       uint8_t *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

struct ms_cms_signer {
	enum ms_hash_alg hash;
	enum ms_key_type key_type;
	bool use_skid;		/* versions 3 and a [0] sid instead of 1 */
	struct ms_span sid;	/* from ms_cms_signer_id_encode() */
	struct ms_span sig;	/* from ms_cms_sig_encode(); ML-DSA: the raw signature */
};

/**
 * ms_cms_mldsa_attrs_encode() - the signed attributes sign-file 7.2 writes
 * for an ML-DSA key under OpenSSL 3.5/3.6: the DER SET OF { contentType
 * id-data, messageDigest @sha512 } (RFC 5652, 5.3 and 11), which is what
 * the key signs (pure ML-DSA, empty context) and what
 * ms_cms_signed_data_encode_mldsa() writes, as [0], in the SignerInfo.
 * @sha512: the SHA-512 of the module, 64 bytes. @out NULL asks for the size.
 * Return: MS_OK, MS_E_ARG, MS_E_NOSPACE.
 */
ms_err ms_cms_mldsa_attrs_encode(const uint8_t *sha512, size_t sha512_len, uint8_t *out,
				 size_t cap, size_t *out_len) MS_MUST_CHECK;

/**
 * ms_cms_signed_data_encode() - the ContentInfo holding a detached SignedData
 * exactly as the kernel's sign-file emits it (OpenSSL CMS with NOCERTS,
 * DETACHED, BINARY, NOSMIMECAP, NOATTR): no certificates, no signed
 * attributes, digestAlgorithm without parameters, rsaEncryption with NULL
 * or ecdsa-with-SHA* without parameters (ML-DSA: see
 * ms_cms_signed_data_encode_mldsa()). @out NULL asks for the size.
 * Return: MS_OK, MS_E_ARG, MS_E_NOSPACE, MS_E_INTERNAL.
 */
ms_err ms_cms_signed_data_encode(const struct ms_cms_signer *s, uint8_t *out, size_t cap,
				 size_t *out_len) MS_MUST_CHECK;

/**
 * ms_cms_signed_data_encode_mldsa() - as ms_cms_signed_data_encode() for
 * an ML-DSA signer (@s->key_type MS_KEY_MLDSA, RFC 9882): id-ml-dsa-@set
 * without parameters, @s->sig the raw signature (the set's length). With
 * @signed_attrs empty the signature is over the module itself (sign-file
 * 7.2 with OpenSSL >= 4, what the kernel takes by default); else
 * @signed_attrs is ms_cms_mldsa_attrs_encode()'s SET, written as [0], the
 * signature is over it and @s->hash must be SHA-512 (sign-file 7.2 with
 * OpenSSL 3.5/3.6; the kernel needs
 * CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA).
 * Return: MS_OK, MS_E_ARG, MS_E_NOSPACE, MS_E_INTERNAL.
 */
ms_err ms_cms_signed_data_encode_mldsa(const struct ms_cms_signer *s, enum ms_mldsa_set set,
				       struct ms_span signed_attrs, uint8_t *out, size_t cap,
				       size_t *out_len) MS_MUST_CHECK;

/**
 * ms_cms_mldsa_pk_len() - public key bytes of ML-DSA @set: 1312, 1952 or
 * 2592 (FIPS 204, Table 2); 0 for a value outside the enum.
 */
size_t ms_cms_mldsa_pk_len(enum ms_mldsa_set set);

/**
 * ms_cms_mldsa_sig_len() - signature bytes of ML-DSA @set: 2420, 3309 or
 * 4627; 0 for a value outside the enum.
 */
size_t ms_cms_mldsa_sig_len(enum ms_mldsa_set set);

/**
 * ms_cms_mldsa_verify() - ML-DSA.Verify (FIPS 204, Algorithm 3): pure
 * ML-DSA of the message M, the concatenation of the @n_msg spans of @msg
 * (none, or empty ones, for an empty message), under the context string
 * @ctx (the kernel and sign-file use the empty one: NULL, 0). The message
 * is hashed as it is read, so a module of any size is verified in place;
 * nothing is copied or kept. Public data only: not constant-time.
 * Thread-safe (no shared state).
 * @pk, @pk_len: the public key, exactly ms_cms_mldsa_pk_len(@set) bytes.
 * @sig, @sig_len: the signature; any length but the set's does not verify.
 * Return: MS_OK (the signature verifies); MS_E_MISMATCH (it does not: wrong
 * length, a hint encoding FIPS 204 refuses, z out of bounds, or the
 * challenge differs); MS_E_MALFORMED (@pk_len is not the set's);
 * MS_E_ARG (@set unknown, @ctx_len over 255, a NULL pointer with a
 * length).
 */
ms_err ms_cms_mldsa_verify(enum ms_mldsa_set set, const uint8_t *pk, size_t pk_len,
			   const uint8_t *ctx, size_t ctx_len, const struct ms_span *msg,
			   size_t n_msg, const uint8_t *sig, size_t sig_len) MS_MUST_CHECK;

/*
 * The strict DER reader (der_parse.c), for every parser of untrusted DER in
 * modsign (the PBES2 parameters of an encrypted key file too): one reader.
 */

/*
 * ms_der_get() - take one TLV off the front of @in. Rejects high tag numbers,
 * indefinite or non-minimal lengths, length fields over 4 bytes and a
 * length longer than what is left. On success @in is advanced past the
 * element and @body covers its content; on failure @in is unchanged.
 */
ms_err ms_der_get(struct ms_span *in, uint8_t *tag, struct ms_span *body) MS_MUST_CHECK;
/* ms_der_get() that also requires the tag to be @tag. */
ms_err ms_der_expect(struct ms_span *in, uint8_t tag, struct ms_span *body) MS_MUST_CHECK;
/* ms_der_expect() of the whole of @in: exactly one element, nothing after. */
ms_err ms_der_expect_only(struct ms_span in, uint8_t tag, struct ms_span *body) MS_MUST_CHECK;
/* Whether @s holds exactly the bytes @p, @len. */
bool ms_der_span_eq(struct ms_span s, const uint8_t *p, size_t len);

/**
 * ms_cms_lib_versions() - the libraries src/cms calls and their versions, for
 * `modsign --version`: mbedTLS (its run-time version when built with
 * MBEDTLS_VERSION_C, else the header's) and nettle (its hogweed is the same
 * release).
 * @out: @cap entries, filled by the call; NULL asks for the count only.
 * @out_len: the count (set on MS_OK, and on MS_E_NOSPACE).
 * Return: MS_OK; MS_E_NOSPACE when @cap is below the count; MS_E_ARG or
 * MS_E_NOSPACE when a library gives no version or one longer than
 * MS_LIBVER_MAX. On failure the entries are unspecified.
 */
ms_err ms_cms_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

#endif
