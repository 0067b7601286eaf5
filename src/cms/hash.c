// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hash names, sizes and the pre-encoded DER that names each hash: its
 * AlgorithmIdentifier, PKCS#1 DigestInfo prefix and ecdsa-with-<hash>;
 * the names OpenSSL (so sign-file) takes for it; and the one mapping of our
 * hashes to mbedTLS's. Every other file of
 * src/cms builds on this one; it calls none of them.
 */
#include <mbedtls/md.h>

#include "cms_internal.h"

/*
 * AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }
 * (RFC 5280, 4.1.1.2). sign-file (OpenSSL CMS) writes digestAlgorithm with
 * the parameters absent (RFC 5754, 2: "SHOULD omit").
 */
static const uint8_t alg_sha1[] = {	/* 1.3.14.3.2.26 */
	0x30, 0x07, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a,
};
static const uint8_t alg_sha224[] = {	/* 2.16.840.1.101.3.4.2.4 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x04,
};
static const uint8_t alg_sha256[] = {	/* 2.16.840.1.101.3.4.2.1 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
};
static const uint8_t alg_sha384[] = {	/* 2.16.840.1.101.3.4.2.2 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x02,
};
static const uint8_t alg_sha512[] = {	/* 2.16.840.1.101.3.4.2.3 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x03,
};
static const uint8_t alg_sha3_256[] = {	/* 2.16.840.1.101.3.4.2.8 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x08,
};
static const uint8_t alg_sha3_384[] = {	/* 2.16.840.1.101.3.4.2.9 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x09,
};
static const uint8_t alg_sha3_512[] = {	/* 2.16.840.1.101.3.4.2.10 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x0a,
};

/*
 * DigestInfo ::= SEQUENCE { digestAlgorithm AlgorithmIdentifier,
 *	digest OCTET STRING }	(RFC 8017, 9.2, note 1: parameters NULL)
 * Each prefix is everything up to the digest bytes; the kernel's
 * crypto/rsassa-pkcs1.c holds the same bytes.
 */
static const uint8_t di_sha1[] = {
	0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e, 0x03, 0x02, 0x1a, 0x05, 0x00,
	0x04, 0x14,
};
static const uint8_t di_sha224[] = {
	0x30, 0x2d, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	0x02, 0x04, 0x05, 0x00, 0x04, 0x1c,
};
static const uint8_t di_sha256[] = {
	0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	0x02, 0x01, 0x05, 0x00, 0x04, 0x20,
};
static const uint8_t di_sha384[] = {
	0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	0x02, 0x02, 0x05, 0x00, 0x04, 0x30,
};
static const uint8_t di_sha512[] = {
	0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	0x02, 0x03, 0x05, 0x00, 0x04, 0x40,
};
static const uint8_t di_sha3_256[] = {
	0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	0x02, 0x08, 0x05, 0x00, 0x04, 0x20,
};
static const uint8_t di_sha3_384[] = {
	0x30, 0x41, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	0x02, 0x09, 0x05, 0x00, 0x04, 0x30,
};
static const uint8_t di_sha3_512[] = {
	0x30, 0x51, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
	0x02, 0x0a, 0x05, 0x00, 0x04, 0x40,
};

/* signatureAlgorithm for ECDSA, parameters absent (RFC 5758, 3.2; RFC 5480). */
static const uint8_t alg_ecdsa_sha1[] = {	/* 1.2.840.10045.4.1 */
	0x30, 0x09, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01,
};
static const uint8_t alg_ecdsa_sha224[] = {	/* 1.2.840.10045.4.3.1 */
	0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x01,
};
static const uint8_t alg_ecdsa_sha256[] = {	/* 1.2.840.10045.4.3.2 */
	0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02,
};
static const uint8_t alg_ecdsa_sha384[] = {	/* 1.2.840.10045.4.3.3 */
	0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03,
};
static const uint8_t alg_ecdsa_sha512[] = {	/* 1.2.840.10045.4.3.4 */
	0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x04,
};
static const uint8_t alg_ecdsa_sha3_256[] = {	/* 2.16.840.1.101.3.4.3.10 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0a,
};
static const uint8_t alg_ecdsa_sha3_384[] = {	/* 2.16.840.1.101.3.4.3.11 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0b,
};
static const uint8_t alg_ecdsa_sha3_512[] = {	/* 2.16.840.1.101.3.4.3.12 */
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x0c,
};

/* { rsaEncryption 1.2.840.113549.1.1.1, NULL } as OpenSSL CMS writes it. */
const uint8_t ms_alg_rsa_encryption[15] = {
	0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
	0x05, 0x00,
};
/* id-signedData 1.2.840.113549.1.7.2 (RFC 5652, 5.1) */
const uint8_t ms_oid_signed_data[11] = {
	0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02,
};
/* id-data 1.2.840.113549.1.7.1 (RFC 5652, 4) */
const uint8_t ms_oid_data[11] = {
	0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01,
};

/*
 * The other names OpenSSL 3.0 takes for each hash, so sign-file takes them
 * too (EVP_get_digestbyname(), case-insensitive; `openssl list
 * -digest-algorithms` on Debian 12): the provider's names and OID, and the
 * legacy names of the RSA signature algorithms, which it maps to their
 * digest. Lower case; NULL-terminated.
 */
static const char *const names_sha1[] = {
	"sha-1", "ssl3-sha1", "1.3.14.3.2.26", "rsa-sha1", "rsa-sha1-2",
	"sha1withrsaencryption", NULL,
};
static const char *const names_sha224[] = {
	"sha-224", "sha2-224", "2.16.840.1.101.3.4.2.4", "rsa-sha224",
	"sha224withrsaencryption", NULL,
};
static const char *const names_sha256[] = {
	"sha-256", "sha2-256", "2.16.840.1.101.3.4.2.1", "rsa-sha256",
	"sha256withrsaencryption", NULL,
};
static const char *const names_sha384[] = {
	"sha-384", "sha2-384", "2.16.840.1.101.3.4.2.2", "rsa-sha384",
	"sha384withrsaencryption", NULL,
};
static const char *const names_sha512[] = {
	"sha-512", "sha2-512", "2.16.840.1.101.3.4.2.3", "rsa-sha512",
	"sha512withrsaencryption", NULL,
};
static const char *const names_sha3_256[] = {
	"2.16.840.1.101.3.4.2.8", "rsa-sha3-256", "id-rsassa-pkcs1-v1_5-with-sha3-256", NULL,
};
static const char *const names_sha3_384[] = {
	"2.16.840.1.101.3.4.2.9", "rsa-sha3-384", "id-rsassa-pkcs1-v1_5-with-sha3-384", NULL,
};
static const char *const names_sha3_512[] = {
	"2.16.840.1.101.3.4.2.10", "rsa-sha3-512", "id-rsassa-pkcs1-v1_5-with-sha3-512", NULL,
};

#define ROW(a, n, more, sz, id, di, ec) \
	{ (a), (n), (more), (sz), (id), sizeof(id), (di), sizeof(di), (ec), sizeof(ec) }

static const struct ms_hash_info hashes[] = {
	ROW(MS_HASH_SHA1, "sha1", names_sha1, 20, alg_sha1, di_sha1, alg_ecdsa_sha1),
	ROW(MS_HASH_SHA224, "sha224", names_sha224, 28, alg_sha224, di_sha224,
	    alg_ecdsa_sha224),
	ROW(MS_HASH_SHA256, "sha256", names_sha256, 32, alg_sha256, di_sha256,
	    alg_ecdsa_sha256),
	ROW(MS_HASH_SHA384, "sha384", names_sha384, 48, alg_sha384, di_sha384,
	    alg_ecdsa_sha384),
	ROW(MS_HASH_SHA512, "sha512", names_sha512, 64, alg_sha512, di_sha512,
	    alg_ecdsa_sha512),
	ROW(MS_HASH_SHA3_256, "sha3-256", names_sha3_256, 32, alg_sha3_256, di_sha3_256,
	    alg_ecdsa_sha3_256),
	ROW(MS_HASH_SHA3_384, "sha3-384", names_sha3_384, 48, alg_sha3_384, di_sha3_384,
	    alg_ecdsa_sha3_384),
	ROW(MS_HASH_SHA3_512, "sha3-512", names_sha3_512, 64, alg_sha3_512, di_sha3_512,
	    alg_ecdsa_sha3_512),
};

#define N_HASHES (sizeof(hashes) / sizeof(hashes[0]))

const struct ms_hash_info *
ms_hash_info(enum ms_hash_alg alg)
{
	size_t i;

	for (i = 0; i < N_HASHES; i++) {
		if (hashes[i].alg == alg) {
			return &hashes[i];
		}
	}
	return NULL;
}

/* ASCII-only case-insensitive equality, independent of the locale. */
static bool
name_eq(const char *a, const char *b)
{
	for (; *a != '\0' && *b != '\0'; a++, b++) {
		char ca = (*a >= 'A' && *a <= 'Z') ? (char)(*a - 'A' + 'a') : *a;

		if (ca != *b) {
			return false;
		}
	}
	return *a == *b;
}

/*
 * MBEDTLS_MD_NONE when mbedTLS 2.28 cannot compute @alg: SHA-3 arrived in
 * 3.5, and 3.6's is not used either, so that a key file signs the same with
 * both. Our digests are nettle's (digest.c); mbedTLS's hash is only wanted
 * by the key-file signer for the HMAC of deterministic ECDSA (RFC 6979).
 */
static mbedtls_md_type_t
md_type(enum ms_hash_alg alg)
{
	switch (alg) {
	case MS_HASH_SHA1:
		return MBEDTLS_MD_SHA1;
	case MS_HASH_SHA224:
		return MBEDTLS_MD_SHA224;
	case MS_HASH_SHA256:
		return MBEDTLS_MD_SHA256;
	case MS_HASH_SHA384:
		return MBEDTLS_MD_SHA384;
	case MS_HASH_SHA512:
		return MBEDTLS_MD_SHA512;
	case MS_HASH_SHA3_256:
	case MS_HASH_SHA3_384:
	case MS_HASH_SHA3_512:
		return MBEDTLS_MD_NONE;
	}
	return MBEDTLS_MD_NONE;
}

int
ms_cms_hash_mbedtls_md(enum ms_hash_alg alg)
{
	return (int)md_type(alg);
}

ms_err
ms_cms_hash_from_name(const char *name, enum ms_hash_alg *out)
{
	size_t i;

	if (name == NULL || out == NULL) {
		return MS_E_ARG;
	}
	for (i = 0; i < N_HASHES; i++) {
		const char *const *more = hashes[i].more_names;
		bool is = name_eq(name, hashes[i].name);

		for (; !is && *more != NULL; more++) {
			is = name_eq(name, *more);
		}
		if (is) {
			*out = hashes[i].alg;
			return MS_OK;
		}
	}
	/* md4, md5 and anything else: the kernel no longer verifies them. */
	return MS_E_ARG;
}

const char *
ms_cms_hash_name(enum ms_hash_alg alg)
{
	const struct ms_hash_info *h = ms_hash_info(alg);

	return (h == NULL) ? "unknown" : h->name;
}

size_t
ms_cms_hash_size(enum ms_hash_alg alg)
{
	const struct ms_hash_info *h = ms_hash_info(alg);

	return (h == NULL) ? 0 : h->size;
}
