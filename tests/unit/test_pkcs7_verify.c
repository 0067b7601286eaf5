// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/cms/pkcs7_verify.c: sign-file vectors verify over
 * their module; a changed module, signature, certificate or key type each
 * fail with the reason that says which; every signer must verify.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_pkcs7.h"

struct vec {
	const char *file;
	const char *cert;
	enum ms_hash_alg hash;
};

static const struct vec vectors[] = {
	{ "cms/rsa2048-sha256.p7s", "rsa2048.x509.der", MS_HASH_SHA256 },
	{ "cms/rsa2048-sha1.p7s", "rsa2048.x509.der", MS_HASH_SHA1 },
	{ "cms/rsa2048-sha224.p7s", "rsa2048.x509.der", MS_HASH_SHA224 },
	{ "cms/rsa2048-sha384-skid.p7s", "rsa2048.x509.der", MS_HASH_SHA384 },
	{ "cms/rsa2048-sha512-skid.p7s", "rsa2048.x509.der", MS_HASH_SHA512 },
	{ "cms/rsa3072-sha256.p7s", "rsa3072.x509.der", MS_HASH_SHA256 },
	{ "cms/rsa4096-sha512.p7s", "rsa4096.x509.der", MS_HASH_SHA512 },
	{ "cms/rsa2048-sha3-256.p7s", "rsa2048.x509.der", MS_HASH_SHA3_256 },
	{ "cms/rsa2048-sha3-384.p7s", "rsa2048.x509.der", MS_HASH_SHA3_384 },
	{ "cms/rsa2048-sha3-512-skid.p7s", "rsa2048.x509.der", MS_HASH_SHA3_512 },
	{ "cms/ec256-sha256.p7s", "ec256.x509.der", MS_HASH_SHA256 },
	{ "cms/ec256-sha1.p7s", "ec256.x509.der", MS_HASH_SHA1 },
	{ "cms/ec256-sha224-skid.p7s", "ec256.x509.der", MS_HASH_SHA224 },
	{ "cms/ec384-sha384-skid.p7s", "ec384.x509.der", MS_HASH_SHA384 },
	{ "cms/ec521-sha512.p7s", "ec521.x509.der", MS_HASH_SHA512 },
};

#define N_VECTORS (sizeof(vectors) / sizeof(vectors[0]))

/* Verify @p over mod.bin (one byte changed when @flip >= 0) with @certs. */
static ms_err
verify_with(const uint8_t *p, size_t len, long flip, struct ms_cms_cert **certs, size_t n_certs,
	    struct ms_pkcs7_signer_result *res, const char **why)
{
	struct ms_pkcs7 m;
	struct ms_pkcs7_digest dg[MS_PKCS7_SIGNERS_MAX];
	enum ms_hash_alg algs[MS_PKCS7_SIGNERS_MAX];
	size_t n, i;

	CHECK_ERR(ms_pkcs7_parse(p, len, &m, NULL), MS_OK);
	n = ms_pkcs7_digest_algs(&m, algs, MS_PKCS7_SIGNERS_MAX);
	for (i = 0; i < n; i++) {
		dg[i].alg = algs[i];
		dg[i].len = p7_mod_digest(algs[i], flip, dg[i].d);
	}
	return ms_pkcs7_verify(&m, dg, n, (const struct ms_cms_cert *const *)certs, n_certs, res,
			       why);
}

MS_TEST(pkcs7_verify_signfile_vectors)
{
	for (size_t i = 0; i < N_VECTORS; i++) {
		struct ms_cms_cert *cert = cms_cert(vectors[i].cert);
		struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
		const char *why = "unset";
		size_t len = 0;
		uint8_t *p = cms_read(vectors[i].file, &len);

		CHECK_ERR(verify_with(p, len, -1, &cert, 1, res, &why), MS_OK);
		CHECK(why == NULL && res[0].err == MS_OK && res[0].cert == cert);
		ms_cms_cert_free(cert);
		free(p);
	}
}

MS_TEST(pkcs7_verify_changed_module)
{
	for (size_t i = 0; i < N_VECTORS; i++) {
		struct ms_cms_cert *cert = cms_cert(vectors[i].cert);
		struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
		const char *why = NULL;
		size_t len = 0;
		uint8_t *p = cms_read(vectors[i].file, &len);

		CHECK_ERR(verify_with(p, len, 700, &cert, 1, res, &why), MS_E_MISMATCH);
		if (vectors[i].cert[0] == 'r') {
			CHECK(strcmp(why, "digest mismatch: the module is not what was "
				     "signed") == 0);
		} else {
			CHECK(strstr(why, "ECDSA signature does not verify") != NULL);
		}
		CHECK(res[0].err == MS_E_MISMATCH && res[0].cert == cert);
		ms_cms_cert_free(cert);
		free(p);
	}
}

MS_TEST(pkcs7_verify_changed_signature)
{
	for (size_t i = 0; i < N_VECTORS; i++) {
		struct ms_cms_cert *cert = cms_cert(vectors[i].cert);
		struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
		const char *why = NULL;
		size_t len = 0;
		uint8_t *p = cms_read(vectors[i].file, &len);

		/* The last byte of the blob is the signature's (s for ECDSA). */
		p[len - 1] ^= 0x01;
		CHECK_ERR(verify_with(p, len, -1, &cert, 1, res, &why), MS_E_MISMATCH);
		if (vectors[i].cert[0] == 'r') {
			CHECK(strstr(why, "RSA signature invalid") != NULL);
		} else {
			CHECK(strstr(why, "ECDSA signature does not verify") != NULL);
		}
		ms_cms_cert_free(cert);
		free(p);
	}
}

MS_TEST(pkcs7_verify_wrong_certificate)
{
	struct ms_cms_cert *certs[2] = { cms_cert("other-rsa2048.x509.der"),
					 cms_cert("ec256.x509.der") };
	struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
	const char *why = NULL;
	size_t len = 0;
	uint8_t *p = cms_read("cms/rsa2048-sha256.p7s", &len);

	CHECK_ERR(verify_with(p, len, -1, certs, 2, res, &why), MS_E_NOTFOUND);
	CHECK(strstr(why, "issuer and serial") != NULL && res[0].cert == NULL);
	CHECK_ERR(verify_with(p, len, -1, certs, 0, res, &why), MS_E_NOTFOUND);
	free(p);
	p = cms_read("cms/rsa2048-sha384-skid.p7s", &len);
	CHECK_ERR(verify_with(p, len, -1, certs, 2, res, &why), MS_E_NOTFOUND);
	CHECK(strstr(why, "subjectKeyIdentifier") != NULL);
	free(p);
	ms_cms_cert_free(certs[0]);
	ms_cms_cert_free(certs[1]);
}

MS_TEST(pkcs7_verify_key_type_mismatch)
{
	struct ms_cms_cert *cert = cms_cert("rsa2048.x509.der");
	struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
	struct ms_pkcs7_digest dg;
	struct ms_pkcs7 m;
	const char *why = NULL;
	size_t len = 0;
	uint8_t *p = cms_read("cms/rsa2048-sha256.p7s", &len);

	CHECK_ERR(ms_pkcs7_parse(p, len, &m, NULL), MS_OK);
	dg.alg = MS_HASH_SHA256;
	dg.len = p7_mod_digest(MS_HASH_SHA256, -1, dg.d);
	m.signers[0].key_type = MS_KEY_EC;
	CHECK_ERR(ms_pkcs7_verify(&m, &dg, 1, (const struct ms_cms_cert *const *)&cert, 1, res,
			      &why), MS_E_UNSUPPORTED);
	CHECK(strstr(why, "key is RSA but the signature is ECDSA") != NULL);
	/* No digest for the signer's hash. */
	m.signers[0].key_type = MS_KEY_RSA;
	dg.alg = MS_HASH_SHA384;
	CHECK_ERR(ms_pkcs7_verify(&m, &dg, 1, (const struct ms_cms_cert *const *)&cert, 1, res,
			      &why), MS_E_ARG);
	CHECK_ERR(ms_pkcs7_verify(NULL, &dg, 1, NULL, 0, res, &why), MS_E_ARG);
	ms_cms_cert_free(cert);
	free(p);
}

MS_TEST(pkcs7_verify_two_signers)
{
	struct ms_cms_cert *certs[2] = { cms_cert("rsa2048.x509.der"), cms_cert("ec256.x509.der") };
	struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
	const char *why = NULL;
	size_t len = 0;
	uint8_t *p = cms_read("pkcs7/two-signers.p7s", &len);

	CHECK_ERR(verify_with(p, len, -1, certs, 2, res, &why), MS_OK);
	CHECK(res[0].cert == certs[1] && res[1].cert == certs[0]);
	/* One certificate only: the other signer is not found; the kernel needs all. */
	CHECK_ERR(verify_with(p, len, -1, certs, 1, res, &why), MS_E_NOTFOUND);
	CHECK(res[0].err == MS_E_NOTFOUND && res[1].err == MS_OK);
	/* The RSA signer's signature damaged (it ends the blob): one bad of two. */
	p[len - 1] ^= 0x40;
	CHECK_ERR(verify_with(p, len, -1, certs, 2, res, &why), MS_E_MISMATCH);
	CHECK(res[0].err == MS_OK && res[1].err == MS_E_MISMATCH);
	CHECK(strstr(why, "RSA signature invalid") != NULL);
	free(p);
	ms_cms_cert_free(certs[0]);
	ms_cms_cert_free(certs[1]);
}

MS_TEST(pkcs7_verify_embedded_certificate)
{
	struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
	struct ms_cms_cert *cert = NULL;
	struct ms_pkcs7 m;
	const char *why = NULL;
	size_t len = 0;
	uint8_t *p = cms_read("pkcs7/ec384-certs.p7s", &len);

	CHECK_ERR(ms_pkcs7_parse(p, len, &m, NULL), MS_OK);
	CHECK_ERR(ms_cms_cert_parse(m.certs[0].p, m.certs[0].len, &cert), MS_OK);
	CHECK_ERR(verify_with(p, len, -1, &cert, 1, res, &why), MS_OK);
	ms_cms_cert_free(cert);
	free(p);
}

/* Encode a one-signer message and verify it over mod.bin. */
static ms_err
verify_built(const struct p7_msg *m, const char *cert_name, const char **why)
{
	static uint8_t buf[P7_BUF];
	struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
	struct ms_cms_cert *cert = cms_cert(cert_name);
	size_t len = p7_encode(m, buf);
	ms_err err;

	err = verify_with(buf, len, -1, &cert, 1, res, why);
	ms_cms_cert_free(cert);
	return err;
}

/*
 * SHA-3 with every key type, as the kernel 6.7+ verifies it: RSA with the
 * SHA-3 DigestInfo under rsaEncryption, ECDSA under ecdsa-with-SHA3-*
 * (2.16.840.1.101.3.4.3.10-12; OpenSSL 3.0 cannot make these, so they are
 * built here). Each verifies over mod.bin and fails over one changed byte.
 */
MS_TEST(pkcs7_verify_sha3_every_key)
{
	static const enum ms_hash_alg algs[] = {
		MS_HASH_SHA3_256, MS_HASH_SHA3_384, MS_HASH_SHA3_512,
	};
	static const char *const keys[] = { "rsa2048", "ec256", "ec384", "ec521" };
	static struct p7_msg m;
	static uint8_t buf[P7_BUF];

	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
			struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];
			struct ms_cms_cert *cert = NULL;
			uint8_t d[MS_HASH_MAX_SIZE];
			const char *why = NULL;
			char name[64];
			size_t n = p7_mod_digest(algs[a], -1, d), len;

			snprintf(name, sizeof(name), "%s.x509.der", keys[k]);
			cert = cms_cert(name);
			p7_msg_init(&m, 3);
			p7_signer_make(&m.s[0], keys[k], algs[a], true, d, n);
			m.n = 1;
			len = p7_encode(&m, buf);
			CHECK_ERR(verify_with(buf, len, -1, &cert, 1, res, &why), MS_OK);
			CHECK_ERR(verify_with(buf, len, 7, &cert, 1, res, &why), MS_E_MISMATCH);
			ms_cms_cert_free(cert);
		}
	}
}

MS_TEST(pkcs7_verify_digestinfo_of_another_hash)
{
	static struct p7_msg m;
	uint8_t d[MS_HASH_MAX_SIZE];
	const char *why = NULL;
	size_t n = p7_mod_digest(MS_HASH_SHA512, -1, d);

	/* Signed over DigestInfo(sha512), labelled sha256. */
	p7_msg_init(&m, 1);
	p7_signer_make(&m.s[0], "rsa2048", MS_HASH_SHA512, false, d, n);
	m.s[0].digest_alg = ms_hash_info(MS_HASH_SHA256)->alg_id;
	m.s[0].digest_alg_len = ms_hash_info(MS_HASH_SHA256)->alg_id_len;
	m.n = 1;
	CHECK_ERR(verify_built(&m, "rsa2048.x509.der", &why), MS_E_MISMATCH);
	CHECK(strstr(why, "names another hash") != NULL);
	/* A signature one byte short of the modulus. */
	p7_msg_init(&m, 1);
	n = p7_mod_digest(MS_HASH_SHA256, -1, d);
	p7_signer_make(&m.s[0], "rsa2048", MS_HASH_SHA256, false, d, n);
	m.s[0].sig_len--;
	m.n = 1;
	CHECK_ERR(verify_built(&m, "rsa2048.x509.der", &why), MS_E_MISMATCH);
	CHECK(strstr(why, "length is not the key's") != NULL);
}

MS_TEST(pkcs7_verify_ecdsa_value_rules)
{
	static struct p7_msg m;
	uint8_t d[MS_HASH_MAX_SIZE];
	const char *why = NULL;
	size_t n = p7_mod_digest(MS_HASH_SHA256, -1, d);
	uint8_t *sig;

	p7_msg_init(&m, 1);
	p7_signer_make(&m.s[0], "ec256", MS_HASH_SHA256, false, d, n);
	m.n = 1;
	CHECK_ERR(verify_built(&m, "ec256.x509.der", &why), MS_OK);
	/* r with a needless leading zero: SEQUENCE { 02 len+1 00 r.. } */
	sig = m.s[0].sig;
	CHECK(sig[0] == 0x30 && sig[2] == 0x02);
	{
		uint8_t tmp[200];
		size_t rlen = sig[3];

		CHECK(m.s[0].sig_len + 1 < sizeof(tmp) && (sig[4] & 0x80) == 0);
		tmp[0] = 0x30;
		tmp[1] = (uint8_t)(sig[1] + 1);
		tmp[2] = 0x02;
		tmp[3] = (uint8_t)(rlen + 1);
		tmp[4] = 0x00;
		memcpy(tmp + 5, sig + 4, m.s[0].sig_len - 4);
		memcpy(sig, tmp, m.s[0].sig_len + 1);
		m.s[0].sig_len++;
	}
	CHECK_ERR(verify_built(&m, "ec256.x509.der", &why), MS_E_MALFORMED);
	CHECK(strstr(why, "not a DER Ecdsa-Sig-Value") != NULL);
	/* Wrong curve: a P-256 value checked with the P-384 key (and its id). */
	p7_msg_init(&m, 1);
	p7_signer_make(&m.s[0], "ec384", MS_HASH_SHA256, false, d, n);
	m.n = 1;
	CHECK_ERR(verify_built(&m, "ec384.x509.der", &why), MS_OK);
	m.s[0].sig[m.s[0].sig_len - 1] ^= 1;
	CHECK_ERR(verify_built(&m, "ec384.x509.der", &why), MS_E_MISMATCH);
}
