// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/cms/cert_key.c: does a public key (as PKCS#11 or a PEM
 * file gives it) belong to the certificate, and does a signature verify.
 * The public halves are derived here with mbedTLS from the TEST-ONLY keys.
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include "../../src/cms/mbedtls_compat.h"
#include "test.h"
#include "test_cms.h"

static const uint8_t oid_p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
static const uint8_t oid_p384[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22 };
static const uint8_t oid_p521[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23 };

/* Modulus and exponent, big-endian, as CKA_MODULUS/CKA_PUBLIC_EXPONENT. */
static void
rsa_pub(const char *name, uint8_t *n, size_t *n_len, uint8_t *e, size_t *e_len)
{
	mbedtls_pk_context pk;
	mbedtls_mpi mn, me;

	cms_load_key(name, &pk);
	mbedtls_mpi_init(&mn);
	mbedtls_mpi_init(&me);
	CHECK(mbedtls_rsa_export(mbedtls_pk_rsa(pk), &mn, NULL, NULL, NULL, &me) == 0);
	*n_len = mbedtls_mpi_size(&mn);
	*e_len = mbedtls_mpi_size(&me);
	CHECK(mbedtls_mpi_write_binary(&mn, n, *n_len) == 0);
	CHECK(mbedtls_mpi_write_binary(&me, e, *e_len) == 0);
	mbedtls_mpi_free(&mn);
	mbedtls_mpi_free(&me);
	mbedtls_pk_free(&pk);
}

/* 04||X||Y of an EC key */
static size_t
ec_point(const mbedtls_ecp_keypair *kp, uint8_t *out, size_t cap)
{
	size_t len = 0;

	CHECK(ms_mbed_ec_write_point(kp, out, cap, &len) == 0);
	return len;
}

static size_t
ec_pub(const char *name, uint8_t *out, size_t cap)
{
	mbedtls_pk_context pk;
	size_t len;

	cms_load_key(name, &pk);
	len = ec_point(mbedtls_pk_ec(pk), out, cap);
	mbedtls_pk_free(&pk);
	return len;
}

/* SubjectPublicKeyInfo DER (mbedTLS writes it at the end of the buffer). */
static size_t
spki(const char *name, uint8_t *out, size_t cap)
{
	mbedtls_pk_context pk;
	int n;

	cms_load_key(name, &pk);
	n = mbedtls_pk_write_pubkey_der(&pk, out, cap);
	CHECK(n > 0);
	memmove(out, out + cap - (size_t)n, (size_t)n);
	mbedtls_pk_free(&pk);
	return (size_t)n;
}

MS_TEST(cms_key_match_rsa)
{
	struct ms_cms_cert *cert = cms_cert("rsa2048.x509.der");
	struct ms_cms_cert *ec = cms_cert("ec256.x509.der");
	uint8_t n[520], e[8], on[512], oe[8];
	size_t n_len = 0, e_len = 0, on_len = 0, oe_len = 0;

	rsa_pub("rsa2048", n + 2, &n_len, e, &e_len);
	CHECK(n_len == 256 && e_len == 3);
	CHECK_ERR(ms_cms_cert_match_rsa(cert, n + 2, n_len, e, e_len), MS_OK);
	/* leading zeros, as some tokens return them */
	n[0] = 0;
	n[1] = 0;
	CHECK_ERR(ms_cms_cert_match_rsa(cert, n, n_len + 2, e, e_len), MS_OK);
	/* another key, another exponent, a flipped bit */
	rsa_pub("other-rsa2048", on, &on_len, oe, &oe_len);
	CHECK_ERR(ms_cms_cert_match_rsa(cert, on, on_len, oe, oe_len), MS_E_MISMATCH);
	CHECK(ms_cms_cert_match_rsa(cert, n + 2, n_len, (const uint8_t *)"\x03", 1) ==
	      MS_E_MISMATCH);
	n[2 + 100] ^= 0x10;
	CHECK_ERR(ms_cms_cert_match_rsa(cert, n + 2, n_len, e, e_len), MS_E_MISMATCH);
	n[2 + 100] ^= 0x10;
	/* an EC certificate never matches an RSA key */
	CHECK_ERR(ms_cms_cert_match_rsa(ec, n + 2, n_len, e, e_len), MS_E_MISMATCH);
	/* empty input */
	CHECK_ERR(ms_cms_cert_match_rsa(cert, n, 0, e, e_len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_rsa(cert, n + 2, n_len, e, 0), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_rsa(cert, NULL, n_len, e, e_len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_rsa(NULL, n + 2, n_len, e, e_len), MS_E_ARG);
	ms_cms_cert_free(cert);
	ms_cms_cert_free(ec);
}

static void
match_ec_one(const char *name, const uint8_t *oid, size_t oid_len)
{
	char file[64];
	struct ms_cms_cert *cert;
	uint8_t pt[140], wrapped[145];
	size_t len, wlen = 0;

	snprintf(file, sizeof(file), "%s.x509.der", name);
	cert = cms_cert(file);
	len = ec_pub(name, pt, sizeof(pt));
	/* bare 04||X||Y */
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid, oid_len, pt, len), MS_OK);
	/* DER OCTET STRING around it (PKCS#11 2.40); 0x81 form for P-521 */
	wrapped[wlen++] = 0x04;
	if (len > 127) {
		wrapped[wlen++] = 0x81;
	}
	wrapped[wlen++] = (uint8_t)len;
	memcpy(wrapped + wlen, pt, len);
	wlen += len;
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid, oid_len, wrapped, wlen), MS_OK);
	/* wrong lengths, compressed form, trailing byte */
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid, oid_len, pt, len - 1), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid, oid_len, wrapped, wlen - 1), MS_E_MALFORMED);
	pt[0] = 0x02;
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid, oid_len, pt, 1 + (len - 1) / 2), MS_E_MALFORMED);
	pt[0] = 0x04;
	wrapped[wlen] = 0;
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid, oid_len, wrapped, wlen + 1), MS_E_MALFORMED);
	/* a different point (Y changed) */
	pt[len - 1] ^= 0x01;
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid, oid_len, pt, len), MS_E_MISMATCH);
	ms_cms_cert_free(cert);
}

MS_TEST(cms_key_match_ec)
{
	match_ec_one("ec256", oid_p256, sizeof(oid_p256));
	match_ec_one("ec384", oid_p384, sizeof(oid_p384));
	match_ec_one("ec521", oid_p521, sizeof(oid_p521));
}

MS_TEST(cms_key_match_ec_negative)
{
	struct ms_cms_cert *cert = cms_cert("ec256.x509.der");
	struct ms_cms_cert *rsa = cms_cert("rsa2048.x509.der");
	uint8_t pt[80], bad[16];
	size_t len = ec_pub("ec256", pt, sizeof(pt));
	mbedtls_ecp_keypair other;

	/* the other curves' parameters */
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid_p384, sizeof(oid_p384), pt, len), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid_p521, sizeof(oid_p521), pt, len), MS_E_MISMATCH);
	/* secp256k1 1.3.132.0.10: a curve we do not take */
	CHECK_ERR(ms_cms_cert_match_ec(cert, bad, ms_test_hex("06 05 2b 81 04 00 0a", bad, 16), pt,
				   len), MS_E_MISMATCH);
	/* not DER: cut, trailing byte, indefinite */
	CHECK(ms_cms_cert_match_ec(cert, oid_p256, sizeof(oid_p256) - 1, pt, len) ==
	      MS_E_MALFORMED);
	memcpy(bad, oid_p256, sizeof(oid_p256));
	bad[sizeof(oid_p256)] = 0;
	CHECK_ERR(ms_cms_cert_match_ec(cert, bad, sizeof(oid_p256) + 1, pt, len), MS_E_MALFORMED);
	CHECK(ms_cms_cert_match_ec(cert, bad, ms_test_hex("30 80 00 00", bad, 16), pt, len) ==
	      MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_ec(cert, NULL, 0, pt, len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid_p256, sizeof(oid_p256), NULL, 0), MS_E_MALFORMED);
	/* an RSA certificate */
	CHECK_ERR(ms_cms_cert_match_ec(rsa, oid_p256, sizeof(oid_p256), pt, len), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_match_ec(NULL, oid_p256, sizeof(oid_p256), pt, len), MS_E_ARG);
	/* a freshly generated P-256 key */
	mbedtls_ecp_keypair_init(&other);
	CHECK(mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, &other, cms_rng, NULL) == 0);
	len = ec_point(&other, pt, sizeof(pt));
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid_p256, sizeof(oid_p256), pt, len), MS_E_MISMATCH);
	/*
	 * A bare point whose X starts with 0x3f also parses as an OCTET
	 * STRING of 63 bytes; its length says it is bare.
	 */
	pt[1] = 0x3f;
	CHECK_ERR(ms_cms_cert_match_ec(cert, oid_p256, sizeof(oid_p256), pt, len), MS_E_MISMATCH);
	mbedtls_ecp_keypair_free(&other);
	ms_cms_cert_free(cert);
	ms_cms_cert_free(rsa);
}

MS_TEST(cms_key_match_spki)
{
	static const char *const names[] = { "rsa2048", "rsa3072", "ec256", "ec384", "ec521" };
	uint8_t der[1200];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char file[64];
		struct ms_cms_cert *cert;
		size_t len = spki(names[i], der, sizeof(der));

		snprintf(file, sizeof(file), "%s.x509.der", names[i]);
		cert = cms_cert(file);
		CHECK_ERR(ms_cms_cert_match_spki(cert, der, len), MS_OK);
		/* every truncation, a trailing byte */
		for (size_t n = 0; n < len; n++) {
			uint8_t *t = malloc(n + (n == 0));

			CHECK(t != NULL);
			memcpy(t, der, n);
			CHECK_ERR(ms_cms_cert_match_spki(cert, t, n), MS_E_MALFORMED);
			free(t);
		}
		der[len] = 0;
		CHECK_ERR(ms_cms_cert_match_spki(cert, der, len + 1), MS_E_MALFORMED);
		ms_cms_cert_free(cert);
	}
}

MS_TEST(cms_key_match_spki_negative)
{
	struct ms_cms_cert *rsa = cms_cert("rsa2048.x509.der");
	struct ms_cms_cert *ec = cms_cert("ec384.x509.der");
	uint8_t der[1200];
	size_t len;

	len = spki("other-rsa2048", der, sizeof(der));
	CHECK_ERR(ms_cms_cert_match_spki(rsa, der, len), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_match_spki(ec, der, len), MS_E_MISMATCH);
	len = spki("ec256", der, sizeof(der));
	CHECK_ERR(ms_cms_cert_match_spki(ec, der, len), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_match_spki(rsa, der, len), MS_E_MISMATCH);
	/* Ed25519 SubjectPublicKeyInfo: well formed, not ours */
	len = ms_test_hex("30 2a 30 05 06 03 2b 65 70 03 21 00"
			  " 19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1",
			  der, sizeof(der));
	CHECK_ERR(ms_cms_cert_match_spki(rsa, der, len), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_match_spki(rsa, NULL, 0), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_spki(rsa, der, ms_test_hex("30 00", der, 4)), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_match_spki(NULL, der, 2), MS_E_ARG);
	ms_cms_cert_free(rsa);
	ms_cms_cert_free(ec);
}

static void
verify_one(const char *name, enum ms_hash_alg alg, size_t half)
{
	char file[64];
	struct ms_cms_cert *cert, *other;
	uint8_t digest[64], tbs[128], sig[600];
	size_t tbs_len = 0, sig_len;
	enum ms_key_type type;

	snprintf(file, sizeof(file), "%s.x509.der", name);
	cert = cms_cert(file);
	other = cms_cert(half == 0 ? "other-rsa2048.x509.der" : "ec384.x509.der");
	if (half == 48) {
		ms_cms_cert_free(other);
		other = cms_cert("ec256.x509.der");
	}
	ms_cms_cert_key(cert, &type, NULL, NULL);
	for (size_t i = 0; i < sizeof(digest); i++) {
		digest[i] = (uint8_t)(i * 13 + 1);
	}
	CHECK_ERR(ms_cms_tbs_encode(type, alg, digest, ms_cms_hash_size(alg), tbs, sizeof(tbs),
				&tbs_len), MS_OK);
	sig_len = cms_token_sign(name, alg, tbs, tbs_len, sig, half);
	CHECK_ERR(ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig, sig_len), MS_OK);
	CHECK(ms_cms_cert_verify(other, alg, tbs, tbs_len, sig, sig_len) != MS_OK);
	/* a flipped bit in the signature, then in the signed bytes */
	sig[sig_len / 2] ^= 0x04;
	CHECK_ERR(ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig, sig_len), MS_E_MISMATCH);
	sig[sig_len / 2] ^= 0x04;
	/* (the digest's first byte: ECDSA drops what exceeds the order) */
	tbs[tbs_len - ms_cms_hash_size(alg)] ^= 0x01;
	CHECK_ERR(ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig, sig_len), MS_E_MISMATCH);
	tbs[tbs_len - ms_cms_hash_size(alg)] ^= 0x01;
	/* wrong lengths */
	CHECK_ERR(ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig, sig_len - 1), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_verify(cert, alg, tbs, tbs_len - 1, sig, sig_len), MS_E_ARG);
	CHECK(ms_cms_cert_verify(cert, (enum ms_hash_alg)0, tbs, tbs_len, sig, sig_len) ==
	      MS_E_ARG);
	CHECK_ERR(ms_cms_cert_verify(NULL, alg, tbs, tbs_len, sig, sig_len), MS_E_ARG);
	/* out of range: r = s = 0, then both over the order (RSA: 0, then s >= n) */
	memset(sig, 0, sig_len);
	CHECK_ERR(ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig, sig_len), MS_E_MISMATCH);
	memset(sig, 0xff, sig_len);
	CHECK_ERR(ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig, sig_len), MS_E_MISMATCH);
	ms_cms_cert_free(cert);
	ms_cms_cert_free(other);
}

MS_TEST(cms_key_verify_rsa)
{
	verify_one("rsa2048", MS_HASH_SHA256, 0);
	verify_one("rsa2048", MS_HASH_SHA1, 0);
	verify_one("rsa4096", MS_HASH_SHA512, 0);
}

MS_TEST(cms_key_verify_ec)
{
	verify_one("ec256", MS_HASH_SHA256, 32);
	verify_one("ec384", MS_HASH_SHA384, 48);
	verify_one("ec521", MS_HASH_SHA512, 66);
	verify_one("ec256", MS_HASH_SHA512, 32);	/* digest longer than the order */
}

MS_TEST(cms_key_verify_ec_zero_r)
{
	struct ms_cms_cert *cert = cms_cert("ec256.x509.der");
	uint8_t digest[32] = { 1 }, sig[64];

	memset(sig, 0, 32);
	memset(sig + 32, 0x11, 32);
	CHECK_ERR(ms_cms_cert_verify(cert, MS_HASH_SHA256, digest, 32, sig, 64), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_verify(cert, MS_HASH_SHA256, digest, 32, sig, 63), MS_E_MISMATCH);
	ms_cms_cert_free(cert);
}
