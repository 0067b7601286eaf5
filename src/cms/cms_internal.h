/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Internals of src/cms shared by its files and its unit tests: the DER
 * writer and reader, the hash and algorithm tables, the parsed
 * certificate, and the functions only the unit tests and fuzz targets
 * call. Nothing here is part of the public API.
 */
#ifndef MS_CMS_INTERNAL_H
#define MS_CMS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cms.h"
#include "pkcs7.h"

/* DER tags we write or read (X.690, 8.1.2). */
#define DER_INTEGER		0x02
#define DER_OCTET_STRING	0x04
#define DER_NULL		0x05
#define DER_OID			0x06
#define DER_SEQUENCE		0x30
#define DER_SET			0x31
#define DER_CTX0_PRIM		0x80	/* [0] IMPLICIT, primitive */
#define DER_CTX0_CONS		0xa0	/* [0], constructed */
#define DER_CTX1_CONS		0xa1	/* [1], constructed */
#define DER_CTX3_CONS		0xa3	/* [3], constructed */

/*
 * Ceilings (HACKING, "Untrusted input"): an excess is an error, never a
 * truncation.
 * MS_CMS_CERT_MAX bounds the certificate and so every span taken from it,
 * which keeps all the size sums below far from SIZE_MAX.
 */
#define MS_CMS_CERT_MAX		65536
#define MS_CMS_EC_HALF_MAX	66	/* P-521: ceil(521 / 8) */

/* ---- der.c: bounds-checked forward writer ---- */

struct ms_der_out {
	uint8_t *buf;		/* NULL only while cap == 0 */
	size_t cap;
	size_t len;		/* invariant: len <= cap */
	ms_err err;		/* sticky: the first failure wins */
};

void ms_der_out_init(struct ms_der_out *o, uint8_t *buf, size_t cap);
/* Bytes of tag plus length octets for @content_len bytes of content. */
size_t ms_der_header_size(size_t content_len);
/* A whole TLV: ms_der_header_size(@content_len) + @content_len. */
size_t ms_der_tlv_size(size_t content_len);
void ms_der_header(struct ms_der_out *o, uint8_t tag, size_t content_len);
void ms_der_bytes(struct ms_der_out *o, const void *p, size_t n);
/* INTEGER 0..127 (one content byte); larger values set MS_E_INTERNAL. */
void ms_der_small_int(struct ms_der_out *o, unsigned int v);
/* Content length of a minimal INTEGER holding the unsigned big-endian @p. */
size_t ms_der_uint_body_size(const uint8_t *p, size_t len);
/* Minimal INTEGER TLV of the unsigned big-endian @p (not all zero). */
void ms_der_uint(struct ms_der_out *o, const uint8_t *p, size_t len);

/* ---- der_parse.c: strict DER reader (untrusted input); the rest is in cms.h ---- */

/*
 * ms_der_name_atv() - take one AttributeTypeAndValue ::= SEQUENCE { type OID,
 * value ANY } off the front of @rdn (the content of a Name's SET), nothing
 * after the value (RFC 5280, 4.1.2.4).
 */
ms_err ms_der_name_atv(struct ms_span *rdn, struct ms_span *oid, uint8_t *tag,
		       struct ms_span *value) MS_MUST_CHECK;

/* ---- hash.c: per-hash constants ---- */

struct ms_hash_info {
	enum ms_hash_alg alg;
	const char *name;		/* sign-file's name, lower case */
	const char *const *more_names;	/* OpenSSL's other names, lower case, NULL-ended */
	size_t size;			/* digest bytes */
	const uint8_t *alg_id;		/* AlgorithmIdentifier, no params */
	size_t alg_id_len;
	const uint8_t *di_prefix;	/* DigestInfo up to the digest */
	size_t di_prefix_len;
	const uint8_t *ecdsa_alg_id;	/* ecdsa-with-<hash> AlgorithmIdentifier */
	size_t ecdsa_alg_id_len;
};

/* The table row of @alg, or NULL for a value outside the enum. */
const struct ms_hash_info *ms_hash_info(enum ms_hash_alg alg);

/* AlgorithmIdentifier { rsaEncryption, NULL } (RFC 8017, A.1). */
extern const uint8_t ms_alg_rsa_encryption[15];
/* OID TLVs of the ContentInfo types (RFC 5652, 3 and 4). */
extern const uint8_t ms_oid_signed_data[11];
extern const uint8_t ms_oid_data[11];

/* ---- cert.c ---- */

struct mbedtls_x509_crt;

/*
 * A parsed certificate. @crt owns a copy of the DER; the spans point into
 * @crt->raw and live as long as @crt. An ML-DSA certificate, which mbedTLS
 * cannot parse, has no @crt: @der owns its DER and the spans point there.
 */
struct ms_cms_cert {
	struct mbedtls_x509_crt *crt;	/* heap; non-const even in a const cert; NULL for ML-DSA */
	enum ms_key_type type;
	enum ms_ec_curve curve;
	size_t bits;
	struct ms_span issuer;		/* issuer Name TLV, as in the certificate */
	struct ms_span serial;		/* serialNumber INTEGER content bytes */
	struct ms_span skid;		/* SubjectKeyIdentifier value; len 0 if absent */
	struct ms_cert_pub *pub;	/* the public key as sig_verify.c uses it */
	/* ML-DSA only (cert_mldsa.c): */
	uint8_t *der;			/* heap, @der_len bytes */
	size_t der_len;
	struct ms_span subject;		/* subject Name TLV */
	enum ms_mldsa_set mldsa;
	struct ms_span mldsa_pk;	/* the raw public key (FIPS 204, pkEncode) */
	struct ms_span tbs;		/* tbsCertificate TLV, signed by the issuer */
	struct ms_span sig_alg;		/* signatureAlgorithm TLV */
	struct ms_span sig_value;	/* signatureValue bits (no unused-bits byte) */
};

/* ---- mldsa_cms.c ---- */

/* AlgorithmIdentifier TLV of id-ml-dsa-@set, no parameters; NULL (*@len 0) for none. */
const uint8_t *ms_mldsa_alg_id(enum ms_mldsa_set set, size_t *len);
/* The set an OID (content bytes) names; MS_MLDSA_NONE if none. */
enum ms_mldsa_set ms_mldsa_set_of_oid(struct ms_span oid);
/*
 * ms_mldsa_attrs_read() - the content of a SignerInfo's signedAttrs
 * (untrusted): contentType id-data and messageDigest, each once, nothing
 * else. @message_digest gets the digest octets.
 * Return: MS_OK; MS_E_MALFORMED or MS_E_UNSUPPORTED with a static *@why.
 */
ms_err ms_mldsa_attrs_read(struct ms_span list, struct ms_span *message_digest,
			   const char **why) MS_MUST_CHECK;

/* ---- cert_mldsa.c ---- */

/*
 * ms_cert_mldsa_spki() - an ML-DSA SubjectPublicKeyInfo TLV (RFC 9881):
 * its parameter set and the raw key (pointing into @spki).
 * Return: MS_OK; MS_E_UNSUPPORTED (not an ML-DSA key); MS_E_MALFORMED
 * (ML-DSA with parameters, a key of the wrong length, unused bits).
 */
ms_err ms_cert_mldsa_spki(struct ms_span spki, enum ms_mldsa_set *set,
			  struct ms_span *pk) MS_MUST_CHECK;

/*
 * ms_cert_mldsa_parse() - fill @cert (issuer, serial, skid, subject, the
 * ML-DSA fields, type) from the DER certificate @der, which must outlive
 * @cert (its @der). Return: MS_OK; MS_E_UNSUPPORTED (not an ML-DSA
 * certificate: mbedTLS's to parse; @cert's fields then unspecified);
 * MS_E_MALFORMED (an ML-DSA certificate that breaks RFC 5280 or 9881).
 */
ms_err ms_cert_mldsa_parse(const uint8_t *der, size_t len, struct ms_cms_cert *cert) MS_MUST_CHECK;

/* ---- sig_verify.c ---- */

struct ms_cert_pub;

/**
 * ms_cert_pub_load() - load @cert's public key (type, curve and bits set)
 * for ms_cms_cert_verify(), into @cert->pub. Once, at parse time: from
 * then on it is only read, so threads share it.
 * Return: MS_OK, MS_E_NOMEM, MS_E_MALFORMED (an EC point not on its curve),
 * MS_E_UNSUPPORTED. @cert->pub may be set on failure too
 * (ms_cms_cert_free() frees it).
 */
ms_err ms_cert_pub_load(struct ms_cms_cert *cert) MS_MUST_CHECK;
void ms_cert_pub_free(struct ms_cert_pub *pub);

/*
 * ms_cert_find_skid() - find subjectKeyIdentifier (2.5.29.14) in the
 * Extensions SEQUENCE TLV @exts (RFC 5280, 4.1 and 4.2.1.2). @skid gets the
 * KeyIdentifier octets or len 0 if the extension is absent.
 * Return: MS_OK, MS_E_MALFORMED.
 */
ms_err ms_cert_find_skid(struct ms_span exts, struct ms_span *skid) MS_MUST_CHECK;

/* ---- cert.c, cert_ids.c: a certificate's identifiers, for tests ---- */

/* Whether the certificate has a subjectKeyIdentifier. */
bool ms_cms_cert_has_skid(const struct ms_cms_cert *cert);
/* The issuer Name TLV as in the certificate. */
struct ms_span ms_cms_cert_issuer(const struct ms_cms_cert *cert);
/* The serialNumber INTEGER content bytes. */
struct ms_span ms_cms_cert_serial(const struct ms_cms_cert *cert);
/* The subjectKeyIdentifier octets; len 0 if absent. */
struct ms_span ms_cms_cert_skid(const struct ms_cms_cert *cert);

/* ---- keccak.c: the SHAKE sponge (FIPS 202) over nettle's Keccak-f[1600] ---- */

#define MS_KECCAK_WIDTH		200	/* state bytes */
#define MS_SHAKE128_RATE	168
#define MS_SHAKE256_RATE	136

/* Caller storage; no resources, nothing to clear (public data only). */
struct ms_keccak {
	uint64_t a[25];		/* lanes, as nettle's struct sha3_state */
	size_t rate;		/* MS_SHAKE128_RATE or MS_SHAKE256_RATE */
	size_t pos;		/* next byte of the rate to absorb or squeeze */
	bool is_squeezing;
};

void ms_keccak_init(struct ms_keccak *k, size_t rate);
/* Absorb more input; none after the first squeeze. */
void ms_keccak_absorb(struct ms_keccak *k, const uint8_t *p, size_t len);
/* Pad on the first call, then output as many bytes as asked, call after call. */
void ms_keccak_squeeze(struct ms_keccak *k, uint8_t *out, size_t len);

/* ---- mldsa_poly.c, mldsa_verify.c: ML-DSA verification (FIPS 204) ---- */

#define MS_MLDSA_N	256
#define MS_MLDSA_Q	8380417u
#define MS_MLDSA_MU_LEN	64
#define MS_MLDSA_K_MAX	8	/* ML-DSA-87 */
#define MS_MLDSA_L_MAX	7

/* A polynomial of R_q, each coefficient in [0, q). */
struct ms_mldsa_poly {
	uint32_t c[MS_MLDSA_N];
};

/* One parameter set (FIPS 204, Tables 1 and 2). */
struct ms_mldsa_params {
	enum ms_mldsa_set set;
	size_t k, l;		/* A is k x l */
	unsigned int tau;	/* nonzero coefficients of c */
	uint32_t beta;		/* tau * eta */
	size_t omega;		/* most hints */
	uint32_t gamma1, gamma2;
	size_t ctilde_len;	/* lambda / 4 */
	size_t pk_len, sig_len;
};

/* The row of @set; NULL outside the enum. */
const struct ms_mldsa_params *ms_mldsa_params(enum ms_mldsa_set set);

void ms_mldsa_ntt(struct ms_mldsa_poly *w);
void ms_mldsa_ntt_inv(struct ms_mldsa_poly *w);
/* @acc += @a * @b, and @acc -= @a * @b, coefficient-wise (NTT domain). */
void ms_mldsa_mul_acc(struct ms_mldsa_poly *acc, const struct ms_mldsa_poly *a,
		      const struct ms_mldsa_poly *b);
void ms_mldsa_mul_sub(struct ms_mldsa_poly *acc, const struct ms_mldsa_poly *a,
		      const struct ms_mldsa_poly *b);
/* A-hat[@r][@s] of the seed @rho (FIPS 204, Algorithm 32). */
void ms_mldsa_expand_a(struct ms_mldsa_poly *a, const uint8_t rho[32], uint8_t r, uint8_t s);
/* c = SampleInBall(c-tilde) (FIPS 204, Algorithm 29). */
void ms_mldsa_sample_in_ball(struct ms_mldsa_poly *c, const uint8_t *ctilde, size_t ctilde_len,
			     unsigned int tau);
/* UseHint (FIPS 204, Algorithm 40) for @r in [0, q). */
uint32_t ms_mldsa_use_hint(uint32_t r, bool hint, uint32_t gamma2);

/*
 * ms_mldsa_sig_decode() - z and the hints of @sig (p->sig_len bytes) into
 * @z (mod q) and @h (0 or 1 each), after the checks of FIPS 204: the hint
 * encoding (Algorithm 21) and ||z||_inf < gamma1 - beta (Algorithm 8).
 * Return: MS_OK, MS_E_MISMATCH (a check fails), MS_E_INTERNAL.
 */
ms_err ms_mldsa_sig_decode(const struct ms_mldsa_params *p, const uint8_t *sig,
			   struct ms_mldsa_poly z[MS_MLDSA_L_MAX],
			   uint8_t h[MS_MLDSA_K_MAX][MS_MLDSA_N]) MS_MUST_CHECK;

/*
 * ms_mldsa_verify_mu() - ML-DSA.Verify_internal (FIPS 204, Algorithm 8)
 * with mu given ("external mu", as the ACVP vectors have it); for the
 * tests: modsign computes mu in ms_cms_mldsa_verify(). Returns as that.
 */
ms_err ms_mldsa_verify_mu(enum ms_mldsa_set set, const uint8_t *pk, size_t pk_len,
			  const uint8_t mu[MS_MLDSA_MU_LEN], const uint8_t *sig,
			  size_t sig_len) MS_MUST_CHECK;

/* ---- pkcs7_verify.c ---- */

/*
 * ms_pkcs7_signer_match() - whether @cert is the certificate @s names:
 * issuer Name TLV and serial content byte for byte, or the SKID octets.
 */
bool ms_pkcs7_signer_match(const struct ms_pkcs7_signer *s, const struct ms_cms_cert *cert);

/* ---- tbs.c ---- */

/* Split raw r||s into halves after checking the rules of ms_cms_sig_encode(). */
ms_err ms_ec_split(const uint8_t *raw, size_t raw_len, struct ms_span *r,
		   struct ms_span *s) MS_MUST_CHECK;

#endif
