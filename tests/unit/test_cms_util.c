// SPDX-License-Identifier: GPL-2.0-only
/* Helpers shared by the src/cms unit tests (no tests of their own). */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>

#include "../../src/cms/mbedtls_compat.h"
#include "test.h"
#include "test_cms.h"

#define GUARD 16
#define GUARD_BYTE 0xa5

void
cms_every_cap(cms_enc_fn fn, const void *ctx, const uint8_t *want, size_t want_len)
{
	size_t got = 0;

	CHECK_ERR(fn(ctx, NULL, 0, &got), MS_OK);
	CHECK(got == want_len);
	CHECK_ERR(fn(ctx, NULL, 4096, &got), MS_OK);
	CHECK(got == want_len);
	for (size_t cap = 0; cap <= want_len + 1; cap++) {
		uint8_t *buf = malloc(cap + 2 * GUARD);
		ms_err err;

		CHECK(buf != NULL);
		memset(buf, GUARD_BYTE, cap + 2 * GUARD);
		got = 12345;
		err = fn(ctx, buf + GUARD, cap, &got);
		if (cap < want_len) {
			CHECK_ERR(err, MS_E_NOSPACE);
			for (size_t i = 0; i < cap + 2 * GUARD; i++) {
				CHECK(buf[i] == GUARD_BYTE);
			}
		} else {
			CHECK_ERR(err, MS_OK);
			CHECK(got == want_len);
			CHECK_EQ_BYTES(buf + GUARD, want, want_len);
			for (size_t i = 0; i < GUARD; i++) {
				CHECK(buf[i] == GUARD_BYTE);
			}
			for (size_t i = GUARD + want_len; i < cap + 2 * GUARD; i++) {
				CHECK(buf[i] == GUARD_BYTE);
			}
		}
		free(buf);
	}
}

uint8_t *
cms_read(const char *name, size_t *len)
{
	return ms_test_read(ms_test_data(name), len);
}

struct ms_cms_cert *
cms_cert(const char *name)
{
	struct ms_cms_cert *cert = NULL;
	size_t len = 0;
	uint8_t *p = cms_read(name, &len);

	CHECK_ERR(ms_cms_cert_parse(p, len, &cert), MS_OK);
	CHECK(cert != NULL);
	free(p);
	return cert;
}

int
cms_rng(void *ctx, unsigned char *out, size_t len)
{
	static mbedtls_entropy_context entropy;
	static mbedtls_ctr_drbg_context drbg;
	static int seeded;

	(void)ctx;
	if (!seeded) {
		mbedtls_entropy_init(&entropy);
		mbedtls_ctr_drbg_init(&drbg);
		CHECK(mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy,
					    (const unsigned char *)"modsign-test", 12) == 0);
		seeded = 1;
	}
	return mbedtls_ctr_drbg_random(&drbg, out, len);
}

void
cms_p7s_parts(const uint8_t *p, size_t len, struct ms_span *sid, struct ms_span *sig)
{
	struct ms_span in = { p, len }, ci, wrap, sd, set, si, tmp;
	uint8_t tag = 0;

	CHECK_ERR(ms_der_expect_only(in, DER_SEQUENCE, &ci), MS_OK);
	CHECK_ERR(ms_der_expect(&ci, DER_OID, &tmp), MS_OK);
	CHECK_ERR(ms_der_expect_only(ci, DER_CTX0_CONS, &wrap), MS_OK);
	CHECK_ERR(ms_der_expect_only(wrap, DER_SEQUENCE, &sd), MS_OK);
	CHECK_ERR(ms_der_expect(&sd, DER_INTEGER, &tmp), MS_OK);
	CHECK_ERR(ms_der_expect(&sd, DER_SET, &tmp), MS_OK);
	CHECK_ERR(ms_der_expect(&sd, DER_SEQUENCE, &tmp), MS_OK);
	CHECK_ERR(ms_der_expect_only(sd, DER_SET, &set), MS_OK);
	CHECK_ERR(ms_der_expect_only(set, DER_SEQUENCE, &si), MS_OK);
	CHECK_ERR(ms_der_expect(&si, DER_INTEGER, &tmp), MS_OK);
	sid->p = si.p;
	CHECK_ERR(ms_der_get(&si, &tag, &tmp), MS_OK);
	sid->len = (size_t)(si.p - sid->p);
	CHECK_ERR(ms_der_expect(&si, DER_SEQUENCE, &tmp), MS_OK);
	CHECK_ERR(ms_der_expect(&si, DER_SEQUENCE, &tmp), MS_OK);
	CHECK_ERR(ms_der_expect_only(si, DER_OCTET_STRING, sig), MS_OK);
}

void
cms_ec_der_to_raw(struct ms_span der, size_t half, uint8_t *raw)
{
	struct ms_span seq, r, s;

	CHECK_ERR(ms_der_expect_only(der, DER_SEQUENCE, &seq), MS_OK);
	CHECK_ERR(ms_der_expect(&seq, DER_INTEGER, &r), MS_OK);
	CHECK_ERR(ms_der_expect_only(seq, DER_INTEGER, &s), MS_OK);
	if (r.len == half + 1 && r.p[0] == 0) {
		r.p++;
		r.len--;
	}
	if (s.len == half + 1 && s.p[0] == 0) {
		s.p++;
		s.len--;
	}
	CHECK(r.len <= half && s.len <= half);
	memset(raw, 0, 2 * half);
	memcpy(raw + half - r.len, r.p, r.len);
	memcpy(raw + 2 * half - s.len, s.p, s.len);
}

void
cms_load_key(const char *name, mbedtls_pk_context *pk)
{
	char file[64];
	size_t len = 0;
	uint8_t *p, *z;

	snprintf(file, sizeof(file), "%s.key.pem", name);
	p = cms_read(file, &len);
	z = malloc(len + 1);	/* mbedTLS wants PEM NUL-terminated */
	CHECK(z != NULL);
	memcpy(z, p, len);
	z[len] = 0;
	mbedtls_pk_init(pk);
	CHECK(ms_mbed_pk_parse_key(pk, z, len + 1, NULL, 0, cms_rng, NULL) == 0);
	ms_wipe(z, len + 1);
	ms_wipe(p, len);
	free(z);
	free(p);
}

/*
 * The mbedTLS digest that ECDSA's deterministic nonce (RFC 6979) uses:
 * SHA-512 for SHA-3, which mbedTLS 2.28 lacks (the HMAC only derives the
 * nonce; the signature is over @tbs whatever it is).
 */
static mbedtls_md_type_t
md_of(enum ms_hash_alg alg)
{
	int t = ms_cms_hash_mbedtls_md(alg);

	return t == MBEDTLS_MD_NONE ? MBEDTLS_MD_SHA512 : (mbedtls_md_type_t)t;
}

size_t
cms_token_sign(const char *name, enum ms_hash_alg alg, const uint8_t *tbs, size_t tbs_len,
	       uint8_t *sig, size_t half)
{
	mbedtls_pk_context pk;
	mbedtls_ecp_group grp;
	mbedtls_mpi d, r, s;
	uint8_t der[MBEDTLS_PK_SIGNATURE_MAX_SIZE];
	size_t len = 0;

	cms_load_key(name, &pk);
	if (mbedtls_pk_get_type(&pk) == MBEDTLS_PK_RSA) {
		CHECK(ms_mbed_pk_sign(&pk, MBEDTLS_MD_NONE, tbs, tbs_len, der, sizeof(der), &len,
				      cms_rng, NULL) == 0);
		mbedtls_pk_free(&pk);
		memcpy(sig, der, len);
		return len;
	}
	/* ECDSA over the digest itself, as CKM_ECDSA: r||s, @half bytes each. */
	mbedtls_ecp_group_init(&grp);
	mbedtls_mpi_init(&d);
	mbedtls_mpi_init(&r);
	mbedtls_mpi_init(&s);
	CHECK(ms_mbed_ec_export(mbedtls_pk_ec(pk), &grp, &d, NULL) == 0);
	CHECK(mbedtls_ecdsa_sign_det_ext(&grp, &r, &s, &d, tbs, tbs_len, md_of(alg), cms_rng,
					 NULL) == 0);
	CHECK(mbedtls_mpi_write_binary(&r, sig, half) == 0);
	CHECK(mbedtls_mpi_write_binary(&s, sig + half, half) == 0);
	mbedtls_mpi_free(&r);
	mbedtls_mpi_free(&s);
	mbedtls_mpi_free(&d);
	mbedtls_ecp_group_free(&grp);
	mbedtls_pk_free(&pk);
	return 2 * half;
}
