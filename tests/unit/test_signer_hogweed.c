// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/signer/hogweed.c: nettle's RSA signatures are mbedTLS's
 * to the byte (PKCS#1 v1.5 is deterministic) for every TEST-ONLY RSA key;
 * a key whose CRT parts do not agree, or no randomness, gives no signature;
 * GMP's allocator wipes once a key is made.
 */
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mbedtls/asn1write.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include "../../src/cms/mbedtls_compat.h"
#include "../../src/signer/signer_internal.h"
#include "test.h"
#include "test_cms.h"

/* DigestInfo of a SHA-256 digest of 0x5a bytes, as cms builds it. */
static size_t
digest_info(enum ms_hash_alg alg, uint8_t *out, size_t cap)
{
	uint8_t digest[MS_HASH_MAX_SIZE];
	size_t n = 0;

	memset(digest, 0x5a, sizeof(digest));
	CHECK(ms_cms_tbs_encode(MS_KEY_RSA, alg, digest, ms_cms_hash_size(alg), out, cap, &n) ==
	      MS_OK);
	return n;
}

MS_TEST(hogweed_equals_mbedtls)
{
	static const char *const keys[] = { "rsa2048", "rsa3072", "rsa4096", "other-rsa2048" };
	static const enum ms_hash_alg algs[] = { MS_HASH_SHA1, MS_HASH_SHA256, MS_HASH_SHA512 };

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		mbedtls_pk_context pk;
		struct ms_hogweed_key *k = NULL;

		cms_load_key(keys[i], &pk);
		CHECK_ERR(ms_signer_hogweed_new(mbedtls_pk_rsa(pk), &k), MS_OK);
		CHECK(ms_signer_hogweed_size(k) == mbedtls_rsa_get_len(mbedtls_pk_rsa(pk)));
		for (size_t j = 0; j < sizeof(algs) / sizeof(algs[0]); j++) {
			uint8_t tbs[128], want[MS_SIG_MAX], got[MS_SIG_MAX];
			size_t tbs_len = digest_info(algs[j], tbs, sizeof(tbs)), got_len = 0;

			CHECK(ms_mbed_rsa_pkcs1_v15_sign(mbedtls_pk_rsa(pk), cms_rng, NULL, tbs,
							 tbs_len, want) == 0);
			CHECK_ERR(ms_signer_hogweed_sign(k, cms_rng, NULL, tbs, tbs_len, got,
						     sizeof(got), &got_len), MS_OK);
			CHECK(got_len == ms_signer_hogweed_size(k));
			CHECK_EQ_BYTES(got, want, got_len);
			/* A fresh blinding pair each time: the same bytes each time. */
			for (int again = 0; again < 8; again++) {
				CHECK_ERR(ms_signer_hogweed_sign(k, cms_rng, NULL, tbs, tbs_len, got,
							     sizeof(got), &got_len), MS_OK);
				CHECK_EQ_BYTES(got, want, got_len);
			}
		}
		ms_signer_hogweed_free(k);
		mbedtls_pk_free(&pk);
	}
}

MS_TEST(hogweed_refuses_sizes)
{
	mbedtls_pk_context pk;
	struct ms_hogweed_key *k = NULL;
	uint8_t tbs[256] = { 0 }, sig[MS_SIG_MAX];
	size_t tbs_len = digest_info(MS_HASH_SHA256, tbs, sizeof(tbs)), sig_len = 0;

	cms_load_key("rsa2048", &pk);
	CHECK_ERR(ms_signer_hogweed_new(mbedtls_pk_rsa(pk), &k), MS_OK);
	CHECK(ms_signer_hogweed_sign(k, cms_rng, NULL, tbs, tbs_len, sig, 255, &sig_len) ==
	      MS_E_NOSPACE);
	/* At most the modulus less 11 bytes of padding (RFC 8017, 9.2). */
	CHECK(ms_signer_hogweed_sign(k, cms_rng, NULL, tbs, 246, sig, sizeof(sig), &sig_len) ==
	      MS_E_ARG);
	CHECK(ms_signer_hogweed_sign(k, cms_rng, NULL, tbs, 245, sig, sizeof(sig), &sig_len) ==
	      MS_OK);
	ms_signer_hogweed_free(k);
	ms_signer_hogweed_free(NULL);
	mbedtls_pk_free(&pk);
}

static int
no_random(void *ctx, unsigned char *out, size_t len)
{
	(void)ctx;
	(void)out;
	(void)len;
	return -1;
}

MS_TEST(hogweed_no_randomness_no_signature)
{
	mbedtls_pk_context pk;
	struct ms_hogweed_key *k = NULL;
	uint8_t tbs[128], sig[MS_SIG_MAX];
	size_t tbs_len = digest_info(MS_HASH_SHA256, tbs, sizeof(tbs)), sig_len = 0;

	cms_load_key("rsa2048", &pk);
	CHECK_ERR(ms_signer_hogweed_new(mbedtls_pk_rsa(pk), &k), MS_OK);
	CHECK_ERR(ms_signer_hogweed_sign(k, no_random, NULL, tbs, tbs_len, sig, sizeof(sig),
				     &sig_len), MS_E_INTERNAL);
	ms_signer_hogweed_free(k);
	mbedtls_pk_free(&pk);
}

/*
 * The TEST-ONLY key @name as an RSAPrivateKey (RFC 8017, A.1.2) whose
 * coefficient, q^-1 mod p, is off by one, parsed into @out (mbedTLS 3.x
 * keeps the CRT parameters private: the key is re-encoded, not edited).
 */
static void
load_bad_qinv(const char *name, mbedtls_pk_context *out)
{
	mbedtls_pk_context pk;
	mbedtls_mpi v[8];	/* version's successors: n e d p q dp dq qinv */
	uint8_t buf[4096];
	unsigned char *c = buf + sizeof(buf);
	size_t len = 0;
	int ret;

	cms_load_key(name, &pk);
	for (size_t i = 0; i < 8; i++) {
		mbedtls_mpi_init(&v[i]);
	}
	CHECK(mbedtls_rsa_export(mbedtls_pk_rsa(pk), &v[0], &v[3], &v[4], &v[2], &v[1]) == 0);
	CHECK(mbedtls_rsa_export_crt(mbedtls_pk_rsa(pk), &v[5], &v[6], &v[7]) == 0);
	CHECK(mbedtls_mpi_add_int(&v[7], &v[7], 1) == 0);
	/* mbedTLS writes DER backwards: last field first. */
	for (size_t i = 8; i-- > 0;) {
		ret = mbedtls_asn1_write_mpi(&c, buf, &v[i]);
		CHECK(ret > 0);
		len += (size_t)ret;
	}
	ret = mbedtls_asn1_write_int(&c, buf, 0);	/* version two-prime */
	CHECK(ret > 0);
	len += (size_t)ret;
	ret = mbedtls_asn1_write_len(&c, buf, len);
	CHECK(ret > 0);
	len += (size_t)ret;
	ret = mbedtls_asn1_write_tag(&c, buf, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE);
	CHECK(ret > 0);
	len += (size_t)ret;
	mbedtls_pk_init(out);
	CHECK(ms_mbed_pk_parse_key(out, c, len, NULL, 0, cms_rng, NULL) == 0);
	for (size_t i = 0; i < 8; i++) {
		mbedtls_mpi_free(&v[i]);
	}
	mbedtls_pk_free(&pk);
}

/* A key whose q^-1 mod p is off by one: the CRT result fails the check. */
MS_TEST(hogweed_checks_its_result)
{
	mbedtls_pk_context pk;
	mbedtls_rsa_context *rsa;
	struct ms_hogweed_key *k = NULL;
	uint8_t tbs[128], sig[MS_SIG_MAX];
	size_t tbs_len = digest_info(MS_HASH_SHA256, tbs, sizeof(tbs)), sig_len = 0;

	load_bad_qinv("rsa2048", &pk);
	rsa = mbedtls_pk_rsa(pk);
	CHECK_ERR(ms_signer_hogweed_new(rsa, &k), MS_OK);
	CHECK_ERR(ms_signer_hogweed_sign(k, cms_rng, NULL, tbs, tbs_len, sig, sizeof(sig),
				     &sig_len), MS_E_INTERNAL);
	ms_signer_hogweed_free(k);
	mbedtls_pk_free(&pk);
}

/* Each test runs in a fresh child: GMP's allocator is the default until then. */
MS_TEST(hogweed_gmp_frees_wiped)
{
	void (*before)(void *, size_t) = NULL, (*after)(void *, size_t) = NULL;
	mbedtls_pk_context pk;
	struct ms_hogweed_key *k = NULL;

	mp_get_memory_functions(NULL, NULL, &before);
	cms_load_key("rsa2048", &pk);
	CHECK_ERR(ms_signer_hogweed_new(mbedtls_pk_rsa(pk), &k), MS_OK);
	mp_get_memory_functions(NULL, NULL, &after);
	CHECK(after != before);
	ms_signer_hogweed_free(k);
	mbedtls_pk_free(&pk);
}
