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

static bool
is_sha3(enum ms_hash_alg alg)
{
	return alg == MS_HASH_SHA3_256 || alg == MS_HASH_SHA3_384 || alg == MS_HASH_SHA3_512;
}

#if defined(MBEDTLS_SHA3_C)
#define HAVE_SHA3 true
#else
#define HAVE_SHA3 false
#endif

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
	static const char *const bad[] = {
		"md5", "MD5", "md4", "", "sha", "sha2", "sha-256", "sha256 ", " sha256",
		"sha2566", "sha25", "sha3", "sha3-", "rmd160", "sm3", "streebog256",
	};
	enum ms_hash_alg alg = (enum ms_hash_alg)0;

	for (size_t i = 0; i < N_KAT; i++) {
		ms_err want = (is_sha3(kat[i].alg) && !HAVE_SHA3) ? MS_E_UNSUPPORTED : MS_OK;

		alg = (enum ms_hash_alg)0;
		CHECK(ms_cms_hash_from_name(kat[i].name, &alg) == want);
		if (want == MS_OK) {
			CHECK(alg == kat[i].alg);
		}
	}
	CHECK(ms_cms_hash_from_name("SHA256", &alg) == MS_OK && alg == MS_HASH_SHA256);
	CHECK(ms_cms_hash_from_name("Sha512", &alg) == MS_OK && alg == MS_HASH_SHA512);
	CHECK(ms_cms_hash_from_name("SHA1", &alg) == MS_OK && alg == MS_HASH_SHA1);
	CHECK(ms_cms_hash_from_name("SHA3-256", &alg) == (HAVE_SHA3 ? MS_OK : MS_E_UNSUPPORTED));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(ms_cms_hash_from_name(bad[i], &alg) == MS_E_ARG);
	}
	CHECK(ms_cms_hash_from_name(NULL, &alg) == MS_E_ARG);
	CHECK(ms_cms_hash_from_name("sha256", NULL) == MS_E_ARG);
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

		if (is_sha3(kat[i].alg) && !HAVE_SHA3) {
			CHECK(ms_cms_digest_new(kat[i].alg, &d) == MS_E_UNSUPPORTED);
			CHECK(d == NULL);
			continue;
		}
		kat_digest(i, want);
		CHECK(ms_cms_digest_new(kat[i].alg, &d) == MS_OK);
		CHECK(ms_cms_digest_final(d, NULL, 0, &len) == MS_OK && len == kat[i].size);
		CHECK(ms_cms_digest_update(d, (const uint8_t *)"abc", 3) == MS_OK);
		CHECK(ms_cms_digest_final(d, got, kat[i].size - 1, &len) == MS_E_NOSPACE);
		CHECK(ms_cms_digest_final(d, got, sizeof(got), &len) == MS_OK);
		CHECK(len == kat[i].size);
		CHECK_EQ_BYTES(got, want, len);
		/* final resets: the next "module" hashes from scratch, in pieces. */
		CHECK(ms_cms_digest_update(d, (const uint8_t *)"a", 1) == MS_OK);
		CHECK(ms_cms_digest_update(d, NULL, 0) == MS_OK);
		CHECK(ms_cms_digest_update(d, (const uint8_t *)"bc", 2) == MS_OK);
		CHECK(ms_cms_digest_final(d, got, kat[i].size, &len) == MS_OK);
		CHECK_EQ_BYTES(got, want, kat[i].size);
		CHECK(ms_cms_digest_update(d, NULL, 1) == MS_E_ARG);
		ms_cms_digest_free(d);
	}
}

MS_TEST(cms_digest_bad_args)
{
	struct ms_cms_digest *d = (struct ms_cms_digest *)&d;
	uint8_t out[64];
	size_t len;

	CHECK(ms_cms_digest_new((enum ms_hash_alg)0, &d) == MS_E_ARG);
	CHECK(d == NULL);
	CHECK(ms_cms_digest_new((enum ms_hash_alg)42, &d) == MS_E_ARG);
	CHECK(ms_cms_digest_new(MS_HASH_SHA256, NULL) == MS_E_ARG);
	CHECK(ms_cms_digest_update(NULL, out, 1) == MS_E_ARG);
	CHECK(ms_cms_digest_final(NULL, out, sizeof(out), &len) == MS_E_ARG);
	ms_cms_digest_free(NULL);
}

/* A long input, fed in uneven pieces, equals the one-shot mbedTLS digest. */
MS_TEST(cms_digest_streaming_matches_one_shot)
{
	size_t len = 0, n = 100000;
	uint8_t *buf = malloc(n);
	uint8_t got[64], want[64];
	struct ms_cms_digest *d = NULL;

	CHECK(buf != NULL);
	for (size_t i = 0; i < n; i++) {
		buf[i] = (uint8_t)(i * 7 + 3);
	}
	CHECK(mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_SHA512), buf, n, want) == 0);
	CHECK(ms_cms_digest_new(MS_HASH_SHA512, &d) == MS_OK);
	for (size_t off = 0, step = 1; off < n; off += step, step = step * 3 + 1) {
		size_t k = (n - off < step) ? n - off : step;

		CHECK(ms_cms_digest_update(d, buf + off, k) == MS_OK);
	}
	CHECK(ms_cms_digest_final(d, got, sizeof(got), &len) == MS_OK && len == 64);
	CHECK_EQ_BYTES(got, want, 64);
	ms_cms_digest_free(d);
	free(buf);
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
	CHECK(ms_cms_tbs_encode(MS_KEY_RSA, MS_HASH_SHA256, digest, 31, out, sizeof(out),
				&len) == MS_E_ARG);
	CHECK(ms_cms_tbs_encode(MS_KEY_EC, MS_HASH_SHA256, digest, 33, out, sizeof(out),
				&len) == MS_E_ARG);
	CHECK(ms_cms_tbs_encode(MS_KEY_EC, MS_HASH_SHA1, digest, 32, NULL, 0, &len) == MS_E_ARG);
	CHECK(ms_cms_tbs_encode((enum ms_key_type)0, MS_HASH_SHA256, digest, 32, out,
				sizeof(out), &len) == MS_E_ARG);
	CHECK(ms_cms_tbs_encode(MS_KEY_RSA, (enum ms_hash_alg)0, digest, 32, out, sizeof(out),
				&len) == MS_E_ARG);
	CHECK(ms_cms_tbs_encode(MS_KEY_RSA, MS_HASH_SHA256, NULL, 32, out, sizeof(out),
				&len) == MS_E_ARG);
	CHECK(ms_cms_tbs_encode(MS_KEY_RSA, MS_HASH_SHA256, digest, 32, out, sizeof(out),
				NULL) == MS_E_ARG);
}
