// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/cms/hash.c, digest.c and ms_cms_tbs_encode(). */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>

#include "test.h"
#include "test_cms.h"

/*
 * Digests of "abc" (FIPS 180-2 / FIPS 202 examples) inside the DigestInfo
 * that `openssl pkeyutl -verifyrecover` returned for `openssl dgst -<hash>
 * -sign` signatures: an oracle independent of our prefix table.
 */
static const struct {
	enum ms_hash_alg alg;
	const char *name;
	size_t size;
	const char *digest_info;
} kat[] = {
	{ MS_HASH_SHA1, "sha1", 20,
	  "3021300906052b0e03021a05000414a9993e364706816aba3e25717850c26c9cd0d89d" },
	{ MS_HASH_SHA224, "sha224", 28,
	  "302d300d06096086480165030402040500041c23097d223405d8228642a477bda255b32aadbce4bd"
	  "a0b3f7e36c9da7" },
	{ MS_HASH_SHA256, "sha256", 32,
	  "3031300d060960864801650304020105000420ba7816bf8f01cfea414140de5dae2223b00361a396"
	  "177a9cb410ff61f20015ad" },
	{ MS_HASH_SHA384, "sha384", 48,
	  "3041300d060960864801650304020205000430cb00753f45a35e8bb5a03d699ac65007272c32ab0e"
	  "ded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7" },
	{ MS_HASH_SHA512, "sha512", 64,
	  "3051300d060960864801650304020305000440ddaf35a193617abacc417349ae20413112e6fa4e89"
	  "a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa5"
	  "4ca49f" },
	{ MS_HASH_SHA3_256, "sha3-256", 32,
	  "3031300d0609608648016503040208050004203a985da74fe225b2045c172d6bd390bd855f086e3e"
	  "9d525b46bfe24511431532" },
	{ MS_HASH_SHA3_384, "sha3-384", 48,
	  "3041300d060960864801650304020905000430ec01498288516fc926459f58e2c6ad8df9b473cb0f"
	  "c08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25" },
	{ MS_HASH_SHA3_512, "sha3-512", 64,
	  "3051300d060960864801650304020a05000440b751850b1a57168a5693cd924b6b096e08f6218274"
	  "44f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274e"
	  "ec53f0" },
};

#define N_KAT (sizeof(kat) / sizeof(kat[0]))

MS_TEST(cms_hash_names_and_sizes)
{
	for (size_t i = 0; i < N_KAT; i++) {
		CHECK(strcmp(ms_cms_hash_name(kat[i].alg), kat[i].name) == 0);
		CHECK(ms_cms_hash_size(kat[i].alg) == kat[i].size);
		CHECK(ms_cms_hash_size(kat[i].alg) <= MS_HASH_MAX_SIZE);
	}
	CHECK(ms_cms_hash_size((enum ms_hash_alg)0) == 0);
	CHECK(ms_cms_hash_size((enum ms_hash_alg)99) == 0);
	CHECK(ms_cms_hash_name((enum ms_hash_alg)0) != NULL);
	CHECK(strcmp(ms_cms_hash_name((enum ms_hash_alg)99), "unknown") == 0);
}

MS_TEST(cms_hash_from_name)
{
	/* Names OpenSSL 3.0 takes for a hash the kernel does not verify, or none. */
	static const char *const bad[] = {
		"md5", "MD5", "md4", "", "sha", "sha2", "sha_256", "sha256 ", " sha256",
		"sha2566", "sha25", "sha3", "sha3-", "sha3_256", "rmd160", "sm3", "streebog256",
		"sha512-256", "SHA2-512/256", "sha-512/224", "sha3-224", "shake256",
		"ssl3-md5", "rsa-md5", "md5withrsaencryption", "md5-sha1", "2.16.840.1.101.3.4.2.5",
		"2.16.840.1.101.3.4.2", "2.16.840.1.101.3.4.2.11", "rsa-sha",
	};
	/* Other names of ours that `openssl list -digest-algorithms` shows. */
	static const struct {
		const char *name;
		enum ms_hash_alg alg;
	} more[] = {
		{ "SHA256", MS_HASH_SHA256 }, { "Sha512", MS_HASH_SHA512 },
		{ "SHA1", MS_HASH_SHA1 }, { "SHA-1", MS_HASH_SHA1 }, { "SSL3-SHA1", MS_HASH_SHA1 },
		{ "1.3.14.3.2.26", MS_HASH_SHA1 }, { "RSA-SHA1", MS_HASH_SHA1 },
		{ "RSA-SHA1-2", MS_HASH_SHA1 }, { "sha1WithRSAEncryption", MS_HASH_SHA1 },
		{ "SHA2-224", MS_HASH_SHA224 }, { "SHA-224", MS_HASH_SHA224 },
		{ "2.16.840.1.101.3.4.2.4", MS_HASH_SHA224 }, { "RSA-SHA224", MS_HASH_SHA224 },
		{ "SHA2-256", MS_HASH_SHA256 }, { "sha-256", MS_HASH_SHA256 },
		{ "2.16.840.1.101.3.4.2.1", MS_HASH_SHA256 },
		{ "sha256WithRSAEncryption", MS_HASH_SHA256 }, { "SHA2-384", MS_HASH_SHA384 },
		{ "SHA-384", MS_HASH_SHA384 }, { "2.16.840.1.101.3.4.2.2", MS_HASH_SHA384 },
		{ "RSA-SHA384", MS_HASH_SHA384 }, { "SHA2-512", MS_HASH_SHA512 },
		{ "SHA-512", MS_HASH_SHA512 }, { "2.16.840.1.101.3.4.2.3", MS_HASH_SHA512 },
		{ "sha512WithRSAEncryption", MS_HASH_SHA512 }, { "SHA3-256", MS_HASH_SHA3_256 },
		{ "2.16.840.1.101.3.4.2.8", MS_HASH_SHA3_256 },
		{ "RSA-SHA3-256", MS_HASH_SHA3_256 },
		{ "id-rsassa-pkcs1-v1_5-with-sha3-256", MS_HASH_SHA3_256 },
		{ "SHA3-384", MS_HASH_SHA3_384 }, { "2.16.840.1.101.3.4.2.9", MS_HASH_SHA3_384 },
		{ "SHA3-512", MS_HASH_SHA3_512 }, { "2.16.840.1.101.3.4.2.10", MS_HASH_SHA3_512 },
		{ "ID-RSASSA-PKCS1-V1_5-WITH-SHA3-512", MS_HASH_SHA3_512 },
	};
	enum ms_hash_alg alg = (enum ms_hash_alg)0;

	for (size_t i = 0; i < N_KAT; i++) {
		alg = (enum ms_hash_alg)0;
		CHECK_ERR(ms_cms_hash_from_name(kat[i].name, &alg), MS_OK);
		CHECK(alg == kat[i].alg);
	}
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		alg = (enum ms_hash_alg)0;
		CHECK_ERR(ms_cms_hash_from_name(more[i].name, &alg), MS_OK);
		CHECK(alg == more[i].alg);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_ERR(ms_cms_hash_from_name(bad[i], &alg), MS_E_ARG);
	}
	CHECK_ERR(ms_cms_hash_from_name(NULL, &alg), MS_E_ARG);
	CHECK_ERR(ms_cms_hash_from_name("sha256", NULL), MS_E_ARG);
}

/* The digest of "abc" is the tail of each DigestInfo above. */
static size_t
kat_digest(size_t i, uint8_t *out)
{
	uint8_t di[128];
	size_t n = ms_test_hex(kat[i].digest_info, di, sizeof(di));

	CHECK(n > kat[i].size);
	memcpy(out, di + n - kat[i].size, kat[i].size);
	return kat[i].size;
}

MS_TEST(cms_digest_kat_and_reuse)
{
	for (size_t i = 0; i < N_KAT; i++) {
		struct ms_cms_digest *d = NULL;
		uint8_t want[MS_HASH_MAX_SIZE], got[MS_HASH_MAX_SIZE + 1];
		size_t len = 0;

		kat_digest(i, want);
		CHECK_ERR(ms_cms_digest_new(kat[i].alg, &d), MS_OK);
		CHECK(ms_cms_digest_final(d, NULL, 0, &len) == MS_OK && len == kat[i].size);
		CHECK_ERR(ms_cms_digest_update(d, (const uint8_t *)"abc", 3), MS_OK);
		CHECK_ERR(ms_cms_digest_final(d, got, kat[i].size - 1, &len), MS_E_NOSPACE);
		CHECK_ERR(ms_cms_digest_final(d, got, sizeof(got), &len), MS_OK);
		CHECK(len == kat[i].size);
		CHECK_EQ_BYTES(got, want, len);
		/* final resets: the next "module" hashes from scratch, in pieces. */
		CHECK_ERR(ms_cms_digest_update(d, (const uint8_t *)"a", 1), MS_OK);
		CHECK_ERR(ms_cms_digest_update(d, NULL, 0), MS_OK);
		CHECK_ERR(ms_cms_digest_update(d, (const uint8_t *)"bc", 2), MS_OK);
		CHECK_ERR(ms_cms_digest_final(d, got, kat[i].size, &len), MS_OK);
		CHECK_EQ_BYTES(got, want, kat[i].size);
		CHECK_ERR(ms_cms_digest_update(d, NULL, 1), MS_E_ARG);
		ms_cms_digest_free(d);
	}
}

MS_TEST(cms_digest_bad_args)
{
	struct ms_cms_digest *d = (struct ms_cms_digest *)&d;
	uint8_t out[64];
	size_t len;

	CHECK_ERR(ms_cms_digest_new((enum ms_hash_alg)0, &d), MS_E_ARG);
	CHECK(d == NULL);
	CHECK_ERR(ms_cms_digest_new((enum ms_hash_alg)42, &d), MS_E_ARG);
	CHECK_ERR(ms_cms_digest_new(MS_HASH_SHA256, NULL), MS_E_ARG);
	CHECK_ERR(ms_cms_digest_update(NULL, out, 1), MS_E_ARG);
	CHECK_ERR(ms_cms_digest_final(NULL, out, sizeof(out), &len), MS_E_ARG);
	ms_cms_digest_free(NULL);
}

/* @n bytes of @p hashed in pieces of 1, 4, 13, 40, ... bytes, final into @out. */
static void
digest_in_pieces(enum ms_hash_alg alg, const uint8_t *p, size_t n, uint8_t *out)
{
	struct ms_cms_digest *d = NULL;
	size_t len = 0;

	CHECK_ERR(ms_cms_digest_new(alg, &d), MS_OK);
	for (size_t off = 0, step = 1; off < n; off += step, step = step * 3 + 1) {
		size_t k = (n - off < step) ? n - off : step;

		CHECK_ERR(ms_cms_digest_update(d, p + off, k), MS_OK);
	}
	CHECK_ERR(ms_cms_digest_final(d, out, MS_HASH_MAX_SIZE, &len), MS_OK);
	CHECK(len == ms_cms_hash_size(alg));
	ms_cms_digest_free(d);
}

/*
 * SHA-1 and SHA-2 (nettle, SHA-NI where the CPU has it) equal mbedTLS's, an
 * independent implementation: every length from 0 to 300 (all the padding
 * cases of both block sizes), then 100,000 bytes in uneven pieces.
 */
MS_TEST(cms_digest_sha2_matches_mbedtls)
{
	static const struct {
		enum ms_hash_alg alg;
		mbedtls_md_type_t md;
	} algs[] = {
		{ MS_HASH_SHA1, MBEDTLS_MD_SHA1 }, { MS_HASH_SHA224, MBEDTLS_MD_SHA224 },
		{ MS_HASH_SHA256, MBEDTLS_MD_SHA256 }, { MS_HASH_SHA384, MBEDTLS_MD_SHA384 },
		{ MS_HASH_SHA512, MBEDTLS_MD_SHA512 },
	};
	size_t n = 100000;
	uint8_t *buf = malloc(n);
	uint8_t got[MS_HASH_MAX_SIZE], want[MS_HASH_MAX_SIZE];

	CHECK(buf != NULL);
	for (size_t i = 0; i < n; i++) {
		buf[i] = (uint8_t)(i * 7 + 3);
	}
	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		const mbedtls_md_info_t *md = mbedtls_md_info_from_type(algs[a].md);
		size_t size = ms_cms_hash_size(algs[a].alg);

		CHECK(md != NULL && mbedtls_md_get_size(md) == size);
		CHECK(ms_cms_hash_mbedtls_md(algs[a].alg) == (int)algs[a].md);
		for (size_t len = 0; len <= 300; len++) {
			CHECK(mbedtls_md(md, buf, len, want) == 0);
			digest_in_pieces(algs[a].alg, buf, len, got);
			CHECK_EQ_BYTES(got, want, size);
		}
		CHECK(mbedtls_md(md, buf, n, want) == 0);
		digest_in_pieces(algs[a].alg, buf, n, got);
		CHECK_EQ_BYTES(got, want, size);
	}
	free(buf);
}

/*
 * SHA-3 (FIPS 202) against OpenSSL 3.0 (`openssl dgst -sha3-*`): of
 * tests/data/cms/mod.bin, 1500 bytes in uneven pieces (more than one
 * block of each), and SHA3-256 of a million 'a'.
 */
MS_TEST(cms_digest_sha3_matches_openssl)
{
	static const struct {
		enum ms_hash_alg alg;
		const char *hex;
	} mod[] = {
		{ MS_HASH_SHA3_256,
		  "acad3d9761836ca5741b2f63cb6e9ab1a200e6b91b9e36b9467f4c9a9905cc6b" },
		{ MS_HASH_SHA3_384,
		  "6d33faf2fc139e07a8369350ada1ea9e463bb6003bb8da5a6734452f9b8bbc4e"
		  "1dba6ec4d7bdd4cf2e20bf9328f7b14e" },
		{ MS_HASH_SHA3_512,
		  "88c7d2b9d1b96b1f214ecfa2b263efbb7f1037dfc5d9303c38f98685033e502b"
		  "0619a6d283b44731a5e571a2f6473897bd988ad01ee57b2fb257ebdef9c90d4d" },
	};
	uint8_t got[MS_HASH_MAX_SIZE], want[MS_HASH_MAX_SIZE];
	size_t len = 0, n = 1000000;
	uint8_t *p = cms_read("cms/mod.bin", &len);
	uint8_t *a = malloc(n);

	CHECK(len == 1500 && a != NULL);
	for (size_t i = 0; i < sizeof(mod) / sizeof(mod[0]); i++) {
		size_t w = ms_test_hex(mod[i].hex, want, sizeof(want));

		CHECK(w == ms_cms_hash_size(mod[i].alg));
		digest_in_pieces(mod[i].alg, p, len, got);
		CHECK_EQ_BYTES(got, want, w);
	}
	memset(a, 'a', n);
	ms_test_hex("5c8875ae474a3634ba4fd55ec85bffd661f32aca75c6d699d0cdcb6c115891c1", want,
		    sizeof(want));
	digest_in_pieces(MS_HASH_SHA3_256, a, n, got);
	CHECK_EQ_BYTES(got, want, 32);
	free(a);
	free(p);
}

struct tbs_ctx {
	enum ms_key_type type;
	enum ms_hash_alg alg;
	const uint8_t *digest;
	size_t digest_len;
};

static ms_err
tbs_fn(const void *vctx, uint8_t *out, size_t cap, size_t *out_len)
{
	const struct tbs_ctx *c = vctx;

	return ms_cms_tbs_encode(c->type, c->alg, c->digest, c->digest_len, out, cap, out_len);
}

/* RSA: the DigestInfo (RFC 8017, 9.2); EC: the digest. Every capacity. */
MS_TEST(cms_tbs_digest_info_every_hash)
{
	for (size_t i = 0; i < N_KAT; i++) {
		uint8_t di[128], digest[MS_HASH_MAX_SIZE];
		size_t di_len = ms_test_hex(kat[i].digest_info, di, sizeof(di));
		struct tbs_ctx c = { MS_KEY_RSA, kat[i].alg, digest, kat_digest(i, digest) };

		cms_every_cap(tbs_fn, &c, di, di_len);
		c.type = MS_KEY_EC;
		cms_every_cap(tbs_fn, &c, digest, kat[i].size);
	}
}

MS_TEST(cms_tbs_bad_args)
{
	uint8_t digest[64] = { 0 }, out[128];
	size_t len;

	/* The digest length must be the hash's. */
	CHECK_ERR(ms_cms_tbs_encode(MS_KEY_RSA, MS_HASH_SHA256, digest, 31, out, sizeof(out),
				&len), MS_E_ARG);
	CHECK_ERR(ms_cms_tbs_encode(MS_KEY_EC, MS_HASH_SHA256, digest, 33, out, sizeof(out),
				&len), MS_E_ARG);
	CHECK_ERR(ms_cms_tbs_encode(MS_KEY_EC, MS_HASH_SHA1, digest, 32, NULL, 0, &len), MS_E_ARG);
	CHECK_ERR(ms_cms_tbs_encode((enum ms_key_type)0, MS_HASH_SHA256, digest, 32, out,
				sizeof(out), &len), MS_E_ARG);
	CHECK_ERR(ms_cms_tbs_encode(MS_KEY_RSA, (enum ms_hash_alg)0, digest, 32, out, sizeof(out),
				&len), MS_E_ARG);
	CHECK_ERR(ms_cms_tbs_encode(MS_KEY_RSA, MS_HASH_SHA256, NULL, 32, out, sizeof(out),
				&len), MS_E_ARG);
	CHECK_ERR(ms_cms_tbs_encode(MS_KEY_RSA, MS_HASH_SHA256, digest, 32, out, sizeof(out),
				NULL), MS_E_ARG);
}
