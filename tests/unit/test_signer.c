// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the signer seam (src/signer/signer.h) over the key-file
 * signer: every lane signs what the certificate verifies, the key matches
 * its own certificate only, lanes out of range and calls a key file cannot
 * serve are refused, and free/describe take NULL; a lane pool given the
 * certificate returns no signature that does not verify with it (a key
 * that is not the certificate's: refused and named, or dropped while
 * another signer makes the signature). The TEST-ONLY keys of tests/data
 * are the inputs.
 */
#include <stdlib.h>
#include <string.h>

#include "../../src/signer/signer_internal.h"
#include "test.h"
#include "test_cms.h"

/* Opens tests/data/<name>.key.pem with @lanes lanes; must succeed. */
static struct ms_signer *
open_key(const char *name, unsigned lanes)
{
	char file[64];
	char why[512] = "";
	struct ms_signer *s = NULL;

	snprintf(file, sizeof(file), "%s.key.pem", name);
	if (ms_signer_keyfile_open(ms_test_data(file), NULL, lanes, &s, why, sizeof(why)) !=
	    MS_OK) {
		fprintf(stderr, "%s\n", why);
		exit(1);
	}
	CHECK(s != NULL);
	return s;
}

/* Signs a fixed SHA-256 digest on @lane and verifies it with @cert_name. */
static void
sign_and_verify(struct ms_signer *s, unsigned lane, const char *cert_name)
{
	struct ms_cms_cert *cert = cms_cert(cert_name);
	uint8_t digest[32], tbs[128], sig[MS_SIG_MAX];
	size_t tbs_len = 0, sig_len = 0;
	const struct ms_signer_req req = {
		.alg = MS_HASH_SHA256, .digest = digest, .digest_len = sizeof(digest),
		.label = "test",
	};

	memset(digest, 0xa5, sizeof(digest));
	CHECK_ERR(ms_signer_sign(s, lane, &req, sig, sizeof(sig), &sig_len), MS_OK);
	/* What the key signed: the DigestInfo (RSA) or the digest (EC). */
	CHECK_ERR(ms_cms_tbs_encode(ms_signer_key_type(s), MS_HASH_SHA256, digest, sizeof(digest),
				tbs, sizeof(tbs), &tbs_len), MS_OK);
	CHECK_ERR(ms_cms_cert_verify(cert, MS_HASH_SHA256, tbs, tbs_len, sig, sig_len), MS_OK);
	/* One changed byte of what was signed must not verify. */
	tbs[tbs_len - 1] ^= 1;
	CHECK(ms_cms_cert_verify(cert, MS_HASH_SHA256, tbs, tbs_len, sig, sig_len) ==
	      MS_E_MISMATCH);
	ms_cms_cert_free(cert);
}

MS_TEST(signer_keyfile_rsa_lanes)
{
	struct ms_signer *s = open_key("rsa2048", 3);

	CHECK(ms_signer_key_type(s) == MS_KEY_RSA);
	CHECK(ms_signer_lanes(s) == 3);
	for (unsigned lane = 0; lane < 3; lane++) {
		sign_and_verify(s, lane, "rsa2048.x509.der");
	}
	ms_signer_free(s);
}

MS_TEST(signer_keyfile_ec)
{
	struct ms_signer *s = open_key("ec384", 1);

	CHECK(ms_signer_key_type(s) == MS_KEY_EC);
	CHECK(ms_signer_lanes(s) == 1);
	sign_and_verify(s, 0, "ec384.x509.der");
	ms_signer_free(s);
}

MS_TEST(signer_match_cert)
{
	struct ms_signer *s = open_key("rsa2048", 1);
	struct ms_cms_cert *own = cms_cert("rsa2048.x509.der");
	struct ms_cms_cert *other = cms_cert("other-rsa2048.x509.der");
	struct ms_cms_cert *ec = cms_cert("ec256.x509.der");

	CHECK_ERR(ms_signer_match_cert(s, own), MS_OK);
	CHECK_ERR(ms_signer_match_cert(s, other), MS_E_MISMATCH);
	CHECK_ERR(ms_signer_match_cert(s, ec), MS_E_MISMATCH);
	CHECK_ERR(ms_signer_match_cert(s, NULL), MS_E_ARG);
	ms_cms_cert_free(own);
	ms_cms_cert_free(other);
	ms_cms_cert_free(ec);
	ms_signer_free(s);
}

MS_TEST(signer_refuses_what_it_cannot_do)
{
	struct ms_signer *s = open_key("rsa2048", 2);
	uint8_t digest[64] = { 0 }, sig[MS_SIG_MAX];
	size_t sig_len = 0;
	struct ms_signer_req req = {
		.alg = MS_HASH_SHA256, .digest = digest, .digest_len = 32,
	};
	char why[512];

	/* Lanes 0 and 1 exist; 2 does not. */
	CHECK_ERR(ms_signer_sign(s, 2, &req, sig, sizeof(sig), &sig_len), MS_E_ARG);
	/* A digest whose length is not its hash's, or none. */
	req.digest_len = 48;
	CHECK_ERR(ms_signer_sign(s, 0, &req, sig, sizeof(sig), &sig_len), MS_E_ARG);
	req.digest_len = 32;
	req.digest = NULL;
	CHECK_ERR(ms_signer_sign(s, 0, &req, sig, sizeof(sig), &sig_len), MS_E_ARG);
	req.digest = digest;
	CHECK_ERR(ms_signer_sign(s, 0, NULL, sig, sizeof(sig), &sig_len), MS_E_ARG);
	CHECK_ERR(ms_signer_recover(s, 2), MS_E_ARG);
	/* A key file has no session to bring back. */
	CHECK(!ms_signer_can_recover(s));
	CHECK_ERR(ms_signer_recover(s, 0), MS_E_UNSUPPORTED);
	/* Lanes are added only to a token signer. */
	CHECK_ERR(ms_signer_token_add_lanes(s, 4), MS_E_ARG);
	CHECK(ms_signer_lanes(s) == 2);
	/* A buffer too small for the 256-byte signature. */
	CHECK_ERR(ms_signer_sign(s, 0, &req, sig, 255, &sig_len), MS_E_NOSPACE);
	CHECK_ERR(ms_signer_sign(s, 1, &req, sig, 256, &sig_len), MS_OK);
	CHECK(sig_len == 256);
	ms_signer_describe(s, 0, why, sizeof(why));
	CHECK(strstr(why, "rsa2048.key.pem") != NULL);
	ms_signer_free(s);
}

MS_TEST(signer_null_safe)
{
	char why[32] = "x";

	ms_signer_free(NULL);
	CHECK(ms_signer_lanes(NULL) == 0);
	CHECK(!ms_signer_can_recover(NULL));
	CHECK_ERR(ms_signer_recover(NULL, 0), MS_E_ARG);
	CHECK_ERR(ms_signer_match_cert(NULL, NULL), MS_E_ARG);
	ms_signer_describe(NULL, 0, why, sizeof(why));
	CHECK(strcmp(why, "no key") == 0);
	ms_signer_describe(NULL, 0, why, 0);
}

MS_TEST(signer_keyfile_open_errors)
{
	struct ms_signer *s = (struct ms_signer *)1;
	char why[512] = "";
	int enc = -1;

	CHECK_ERR(ms_signer_keyfile_open(ms_test_data("rsa2048.key.pem"), NULL, 0, &s, why,
				     sizeof(why)), MS_E_ARG);
	CHECK(s == NULL);
	CHECK_ERR(ms_signer_keyfile_open(ms_test_data("no-such.key.pem"), NULL, 1, &s, why,
				     sizeof(why)), MS_E_IO);
	CHECK(strstr(why, "no-such.key.pem") != NULL);
	/* A certificate is not a key. */
	CHECK_ERR(ms_signer_keyfile_open(ms_test_data("rsa2048.x509.pem"), NULL, 1, &s, why,
				     sizeof(why)), MS_E_MALFORMED);
	CHECK(s == NULL);
	CHECK_ERR(ms_signer_keyfile_is_encrypted(ms_test_data("rsa2048.enc.key.pem"), &enc, why,
					     sizeof(why)), MS_OK);
	CHECK(enc == 1);
	CHECK_ERR(ms_signer_keyfile_is_encrypted(ms_test_data("rsa2048.key.pem"), &enc, why,
					     sizeof(why)), MS_OK);
	CHECK(enc == 0);
	CHECK_ERR(ms_signer_keyfile_open(ms_test_data("rsa2048.enc.key.pem"), NULL, 1, &s, why,
				     sizeof(why)), MS_E_PIN);
	CHECK(s == NULL);
}

/*
 * SHA-3 digests (mbedTLS 2.28 has no SHA-3): RSA signs their DigestInfo;
 * ECDSA's RFC 6979 nonce is derived with HMAC-SHA-512 standing in for the
 * digest's own hash, so the signature is still deterministic, and verifies.
 */
MS_TEST(signer_keyfile_sha3)
{
	static const struct {
		const char *key, *cert;
		enum ms_hash_alg alg;
	} cases[] = {
		{ "ec256", "ec256.x509.der", MS_HASH_SHA3_256 },
		{ "ec384", "ec384.x509.der", MS_HASH_SHA3_384 },
		{ "ec521", "ec521.x509.der", MS_HASH_SHA3_512 },
		{ "ec256", "ec256.x509.der", MS_HASH_SHA3_512 },
		{ "rsa2048", "rsa2048.x509.der", MS_HASH_SHA3_256 },
		{ "rsa3072", "rsa3072.x509.der", MS_HASH_SHA3_512 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ms_signer *s = open_key(cases[i].key, 1);
		struct ms_cms_cert *cert = cms_cert(cases[i].cert);
		uint8_t digest[MS_HASH_MAX_SIZE], tbs[128], a[MS_SIG_MAX], b[MS_SIG_MAX];
		size_t tbs_len = 0, a_len = 0, b_len = 0;
		struct ms_signer_req req = {
			.alg = cases[i].alg, .digest = digest,
			.digest_len = ms_cms_hash_size(cases[i].alg),
		};

		memset(digest, 0x3c, sizeof(digest));
		CHECK_ERR(ms_signer_sign(s, 0, &req, a, sizeof(a), &a_len), MS_OK);
		CHECK_ERR(ms_signer_sign(s, 0, &req, b, sizeof(b), &b_len), MS_OK);
		CHECK(a_len == b_len && memcmp(a, b, a_len) == 0);
		CHECK_ERR(ms_cms_tbs_encode(ms_signer_key_type(s), cases[i].alg, digest,
					req.digest_len, tbs, sizeof(tbs), &tbs_len), MS_OK);
		CHECK_ERR(ms_cms_cert_verify(cert, cases[i].alg, tbs, tbs_len, a, a_len), MS_OK);
		/* Another digest, another signature that does not verify the first. */
		digest[0] ^= 1;
		CHECK_ERR(ms_signer_sign(s, 0, &req, b, sizeof(b), &b_len), MS_OK);
		CHECK(memcmp(a, b, a_len) != 0);
		CHECK(ms_cms_cert_verify(cert, cases[i].alg, tbs, tbs_len, b, b_len) ==
		      MS_E_MISMATCH);
		ms_cms_cert_free(cert);
		ms_signer_free(s);
	}
}

/* Signs a fixed digest through @p on a lane it lends; the result's code. */
static ms_err
pool_sign(struct ms_lanes *p, enum ms_hash_alg alg, struct ms_lanes_result *res)
{
	uint8_t digest[64], sig[MS_SIG_MAX];
	size_t sig_len = 0;
	const struct ms_signer_req req = {
		.alg = alg, .digest = digest, .digest_len = ms_cms_hash_size(alg), .label = "m.ko",
	};
	unsigned lane = ms_lanes_take(p);
	ms_err err;

	memset(digest, 0x3c, sizeof(digest));
	err = ms_lanes_sign(p, lane, &req, sig, sizeof(sig), &sig_len, res);
	ms_lanes_give(p, lane);
	return err;
}

MS_TEST(signer_lanes_verify_before_return)
{
	struct ms_cms_cert *own = cms_cert("rsa2048.x509.der");
	struct ms_cms_cert *ec = cms_cert("ec256.x509.der");
	struct ms_signer *good = open_key("rsa2048", 1);
	struct ms_signer *bad = open_key("other-rsa2048", 1);
	struct ms_signer *ec_key = open_key("ec256", 1);
	struct ms_lanes_cfg cfg = { .cert = own };
	struct ms_lanes_signer_stat st;
	struct ms_lanes_result res;
	struct ms_lanes *p = NULL;
	char name[256];

	/* The certificate's key: signed and returned. */
	CHECK_ERR(ms_lanes_new(good, &cfg, &p), MS_OK);
	CHECK_ERR(pool_sign(p, MS_HASH_SHA256, &res), MS_OK);
	ms_lanes_free(p);
	/* Another key: no signature returned, the key file named. */
	CHECK_ERR(ms_lanes_new(bad, &cfg, &p), MS_OK);
	CHECK_ERR(pool_sign(p, MS_HASH_SHA512, &res), MS_E_MISMATCH);
	ms_signer_name(bad, name, sizeof(name));
	CHECK(strstr(name, "key file ") == name && strstr(name, "other-rsa2048.key.pem") != NULL);
	CHECK(strstr(res.why, name) == res.why);
	CHECK(strstr(res.why, ": its signature did not verify with the certificate") != NULL);
	/* Without the certificate the pool does not check (the agent's pool). */
	ms_lanes_free(p);
	cfg.cert = NULL;
	CHECK_ERR(ms_lanes_new(bad, &cfg, &p), MS_OK);
	CHECK_ERR(pool_sign(p, MS_HASH_SHA256, &res), MS_OK);
	ms_lanes_free(p);
	/* Two signers, the first of another key: dropped, the second signs. */
	cfg.cert = own;
	CHECK_ERR(ms_lanes_new(bad, &cfg, &p), MS_OK);
	CHECK_ERR(ms_lanes_add(p, good), MS_OK);
	CHECK_ERR(pool_sign(p, MS_HASH_SHA256, &res), MS_OK);
	CHECK_EQ(res.signer, 1u);
	ms_lanes_signer_stat(p, 0, &st);
	CHECK(st.is_dropped && st.signatures == 0);
	ms_lanes_free(p);
	/* EC: an RSA key's signature for an EC certificate, and the EC key's own. */
	cfg.cert = ec;
	CHECK_ERR(ms_lanes_new(good, &cfg, &p), MS_OK);
	CHECK_ERR(pool_sign(p, MS_HASH_SHA256, &res), MS_E_MISMATCH);
	ms_lanes_free(p);
	CHECK_ERR(ms_lanes_new(ec_key, &cfg, &p), MS_OK);
	CHECK_ERR(pool_sign(p, MS_HASH_SHA384, &res), MS_OK);
	ms_lanes_free(p);
	ms_signer_free(good);
	ms_signer_free(bad);
	ms_signer_free(ec_key);
	ms_cms_cert_free(own);
	ms_cms_cert_free(ec);
}
