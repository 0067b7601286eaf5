// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/cms/pkcs7_parse.c and cert_ids.c: sign-file and
 * openssl vectors, the kernel's rules one by one, and damaged input
 * (every truncation, every byte changed, BER, trailing bytes).
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_pkcs7.h"

struct vec {
	const char *file;
	const char *key;
	enum ms_hash_alg hash;
	bool skid;
};

static const struct vec signfile[] = {
	{ "cms/rsa2048-sha256.p7s", "rsa2048", MS_HASH_SHA256, false },
	{ "cms/rsa2048-sha1.p7s", "rsa2048", MS_HASH_SHA1, false },
	{ "cms/rsa2048-sha224.p7s", "rsa2048", MS_HASH_SHA224, false },
	{ "cms/rsa2048-sha384-skid.p7s", "rsa2048", MS_HASH_SHA384, true },
	{ "cms/rsa2048-sha512-skid.p7s", "rsa2048", MS_HASH_SHA512, true },
	{ "cms/rsa3072-sha256.p7s", "rsa3072", MS_HASH_SHA256, false },
	{ "cms/rsa4096-sha512.p7s", "rsa4096", MS_HASH_SHA512, false },
	{ "cms/rsa2048-sha3-256.p7s", "rsa2048", MS_HASH_SHA3_256, false },
	{ "cms/rsa2048-sha3-384.p7s", "rsa2048", MS_HASH_SHA3_384, false },
	{ "cms/rsa2048-sha3-512-skid.p7s", "rsa2048", MS_HASH_SHA3_512, true },
	{ "cms/ec256-sha256.p7s", "ec256", MS_HASH_SHA256, false },
	{ "cms/ec256-sha1.p7s", "ec256", MS_HASH_SHA1, false },
	{ "cms/ec256-sha224-skid.p7s", "ec256", MS_HASH_SHA224, true },
	{ "cms/ec384-sha384-skid.p7s", "ec384", MS_HASH_SHA384, true },
	{ "cms/ec521-sha512.p7s", "ec521", MS_HASH_SHA512, false },
};

#define N_SIGNFILE (sizeof(signfile) / sizeof(signfile[0]))

MS_TEST(pkcs7_parse_signfile_vectors)
{
	struct ms_cms_cert *other = cms_cert("other-rsa2048.x509.der");

	for (size_t i = 0; i < N_SIGNFILE; i++) {
		const struct vec *v = &signfile[i];
		struct ms_pkcs7 m;
		struct ms_cms_cert *cert = NULL;
		const char *why = "unset";
		char name[64];
		size_t len = 0;
		uint8_t *p = cms_read(v->file, &len);

		CHECK_ERR(ms_pkcs7_parse(p, len, &m, &why), MS_OK);
		CHECK(why == NULL);
		CHECK(m.version == (v->skid ? 3u : 1u));
		CHECK(m.n_digest_algs == 1 && m.digest_algs[0] == v->hash);
		CHECK(m.is_data && !m.has_content && m.n_certs == 0 && !m.has_crls);
		CHECK(m.n_signers == 1);
		CHECK(m.signers[0].version == m.version);
		CHECK(m.signers[0].sid_type ==
		      (v->skid ? MS_PKCS7_SID_SKID : MS_PKCS7_SID_ISSUER_SERIAL));
		CHECK(m.signers[0].hash == v->hash);
		CHECK(m.signers[0].key_type == (v->key[0] == 'r' ? MS_KEY_RSA : MS_KEY_EC));
		CHECK(m.signers[0].sig_hash == (v->key[0] == 'r' ? 0 : v->hash));
		CHECK(!m.signers[0].has_signed_attrs && !m.signers[0].has_unsigned_attrs);
		/* Every span lies inside the input. */
		CHECK(m.signers[0].signature.p > p &&
		      m.signers[0].signature.p + m.signers[0].signature.len <= p + len);
		CHECK(ms_pkcs7_check_module(&m, &why) == MS_OK && why == NULL);
		snprintf(name, sizeof(name), "%s.x509.der", v->key);
		cert = cms_cert(name);
		CHECK(ms_pkcs7_signer_match(&m.signers[0], cert));
		CHECK(!ms_pkcs7_signer_match(&m.signers[0], other));
		ms_cms_cert_free(cert);
		free(p);
	}
	ms_cms_cert_free(other);
}

MS_TEST(pkcs7_parse_openssl_vectors)
{
	struct ms_pkcs7 m;
	const char *why = NULL;
	size_t len = 0;
	uint8_t *p;

	p = cms_read("cms/openssl-certs.p7s", &len);
	CHECK_ERR(ms_pkcs7_parse(p, len, &m, &why), MS_OK);
	CHECK(m.n_certs == 1 && m.certs[0].p[0] == 0x30);
	CHECK_ERR(ms_pkcs7_check_module(&m, &why), MS_OK);
	free(p);

	p = cms_read("pkcs7/two-signers.p7s", &len);
	CHECK_ERR(ms_pkcs7_parse(p, len, &m, &why), MS_OK);
	CHECK(m.n_signers == 2);
	CHECK(m.signers[0].key_type == MS_KEY_EC && m.signers[1].key_type == MS_KEY_RSA);
	CHECK_ERR(ms_pkcs7_check_module(&m, &why), MS_OK);
	free(p);

	p = cms_read("pkcs7/rsa2048-attrs.p7s", &len);
	CHECK_ERR(ms_pkcs7_parse(p, len, &m, &why), MS_OK);
	CHECK(m.signers[0].has_signed_attrs);
	CHECK_ERR(ms_pkcs7_check_module(&m, &why), MS_E_MALFORMED);
	CHECK(strstr(why, "has signed attributes") != NULL);
	free(p);

	p = cms_read("pkcs7/attached.p7s", &len);
	CHECK_ERR(ms_pkcs7_parse(p, len, &m, &why), MS_OK);
	CHECK(m.has_content);
	CHECK_ERR(ms_pkcs7_check_module(&m, &why), MS_E_MALFORMED);
	CHECK(strstr(why, "not detached") != NULL);
	free(p);

	p = cms_read("pkcs7/ec384-certs.p7s", &len);
	CHECK_ERR(ms_pkcs7_parse(p, len, &m, &why), MS_OK);
	CHECK(m.n_certs == 1 && m.signers[0].hash == MS_HASH_SHA384);
	CHECK(m.signers[0].sig_hash == MS_HASH_SHA384);
	free(p);
}

/* Each prefix in a buffer of exactly its size, so ASan sees any over-read. */
static void
check_truncations(const char *file)
{
	size_t len = 0;
	uint8_t *p = cms_read(file, &len);
	struct ms_pkcs7 m;

	for (size_t n = 0; n < len; n++) {
		uint8_t *t = malloc(n + (n == 0));
		const char *why = NULL;

		CHECK(t != NULL);
		memcpy(t, p, n);
		CHECK(ms_pkcs7_parse(n == 0 ? NULL : t, n, &m, &why) != MS_OK);
		CHECK(why != NULL);
		free(t);
	}
	free(p);
}

MS_TEST(pkcs7_parse_truncations)
{
	check_truncations("cms/rsa2048-sha256.p7s");
	check_truncations("cms/ec384-sha384-skid.p7s");
	check_truncations("cms/openssl-certs.p7s");
	check_truncations("pkcs7/two-signers.p7s");
	check_truncations("pkcs7/rsa2048-attrs.p7s");
}

/*
 * What `-s` decides (ms_pkcs7_parse_module) is what `verify` decides with
 * ms_pkcs7_parse() and ms_pkcs7_check_module(), for the same reason:
 * @err, @why are the parse's, @m its output.
 */
static void
check_same_as_module_check(const uint8_t *p, size_t len, ms_err err, const struct ms_pkcs7 *m,
			   const char *why)
{
	struct ms_pkcs7 m2;
	const char *why2 = NULL;
	ms_err err2 = ms_pkcs7_parse_module(p, len, &m2, &why2);

	if (err == MS_OK) {
		err = ms_pkcs7_check_module(m, &why);
	}
	CHECK(err2 == err);
	CHECK(why2 == why);
	CHECK(err == MS_OK || why != NULL);
}

/* Every byte changed three ways: any verdict, but no crash and spans in bounds. */
static void
check_corruptions(const char *file)
{
	static const uint8_t flips[] = { 0x01, 0x80, 0xff };
	size_t len = 0;
	uint8_t *p = cms_read(file, &len);

	for (size_t i = 0; i < len; i++) {
		for (size_t f = 0; f < sizeof(flips); f++) {
			uint8_t *t = malloc(len);
			struct ms_pkcs7 m;
			const char *why = NULL;
			ms_err err;

			CHECK(t != NULL);
			memcpy(t, p, len);
			t[i] ^= flips[f];
			err = ms_pkcs7_parse(t, len, &m, &why);
			if (err == MS_OK) {
				for (size_t s = 0; s < m.n_signers; s++) {
					const struct ms_span *g = &m.signers[s].signature;

					CHECK(g->p >= t && g->p + g->len <= t + len);
				}
			} else {
				CHECK(why != NULL);
			}
			check_same_as_module_check(t, len, err, &m, why);
			free(t);
		}
	}
	free(p);
}

MS_TEST(pkcs7_parse_corruptions)
{
	check_corruptions("cms/rsa2048-sha256.p7s");
	check_corruptions("cms/ec256-sha224-skid.p7s");
	check_corruptions("pkcs7/two-signers.p7s");
	check_corruptions("pkcs7/rsa2048-attrs.p7s");
}

/* The module rules -s applies, with the reasons verify prints after "PKCS#7: ". */
MS_TEST(pkcs7_parse_module_rules)
{
	static const struct {
		const char *file;
		ms_err err;
		const char *why;
	} cases[] = {
		{ "cms/rsa2048-sha256.p7s", MS_OK, NULL },
		{ "cms/ec384-sha384-skid.p7s", MS_OK, NULL },
		{ "cms/rsa2048-sha3-512-skid.p7s", MS_OK, NULL },
		{ "cms/openssl-certs.p7s", MS_OK, NULL },
		{ "pkcs7/two-signers.p7s", MS_OK, NULL },
		{ "pkcs7/rsa2048-attrs.p7s", MS_E_MALFORMED, "has signed attributes (authattrs)" },
		{ "pkcs7/attached.p7s", MS_E_MALFORMED,
		  "not detached: the PKCS#7 carries its content" },
		{ "cms/mod.bin", MS_E_MALFORMED,
		  "not one DER SEQUENCE (truncated, BER or trailing bytes)" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ms_pkcs7 m;
		const char *why = "unset";
		size_t len = 0;
		uint8_t *p = cms_read(cases[i].file, &len);

		CHECK(ms_pkcs7_parse_module(p, len, &m, &why) == cases[i].err);
		CHECK(cases[i].why == NULL ? why == NULL : strcmp(why, cases[i].why) == 0);
		CHECK(ms_pkcs7_parse_module(p, len, &m, NULL) == cases[i].err);
		free(p);
	}
}

MS_TEST(pkcs7_parse_ber_and_trailing)
{
	size_t len = 0;
	uint8_t *p = cms_read("cms/rsa2048-sha256.p7s", &len);
	uint8_t *t = malloc(len + 4);
	struct ms_pkcs7 m;
	const char *why = NULL;

	CHECK(t != NULL);
	/* Trailing byte. */
	memcpy(t, p, len);
	t[len] = 0;
	CHECK_ERR(ms_pkcs7_parse(t, len + 1, &m, &why), MS_E_MALFORMED);
	CHECK(strstr(why, "not one DER SEQUENCE") != NULL);
	/* Indefinite outer length with an end-of-contents, as BER allows. */
	CHECK(p[0] == 0x30 && p[1] == 0x82);
	t[0] = 0x30;
	t[1] = 0x80;
	memcpy(t + 2, p + 4, len - 4);
	t[len - 2] = 0;
	t[len - 1] = 0;
	CHECK_ERR(ms_pkcs7_parse(t, len, &m, &why), MS_E_MALFORMED);
	/* Non-minimal: the same length in three bytes. */
	t[0] = 0x30;
	t[1] = 0x83;
	t[2] = 0x00;
	memcpy(t + 3, p + 2, len - 2);
	CHECK_ERR(ms_pkcs7_parse(t, len + 1, &m, &why), MS_E_MALFORMED);
	/* Empty and absurd sizes. */
	CHECK_ERR(ms_pkcs7_parse(p, 0, &m, &why), MS_E_MALFORMED);
	CHECK_ERR(ms_pkcs7_parse(NULL, 0, &m, &why), MS_E_MALFORMED);
	CHECK_ERR(ms_pkcs7_parse(p, MS_PKCS7_MAX + 1, &m, &why), MS_E_UNSUPPORTED);
	CHECK_ERR(ms_pkcs7_parse(p, len, NULL, &why), MS_E_ARG);
	free(t);
	free(p);
}

/* A one-signer message of @version with the signer's own version and sid form. */
static ms_err
parse_built(struct p7_msg *m, const char **why, struct ms_pkcs7 *out)
{
	static uint8_t buf[P7_BUF];
	size_t len = p7_encode(m, buf);
	uint8_t *copy = malloc(len);
	ms_err err;

	/* Exactly sized for ASan; the spans in @out are not used after. */
	CHECK(copy != NULL);
	memcpy(copy, buf, len);
	err = ms_pkcs7_parse(copy, len, out, why);
	check_same_as_module_check(copy, len, err, out, *why);
	free(copy);
	return err;
}

static void
one_signer(struct p7_msg *m, unsigned sd_version, const char *key, bool skid,
	   enum ms_hash_alg alg)
{
	uint8_t d[MS_HASH_MAX_SIZE];
	size_t n = p7_mod_digest(alg, -1, d);

	p7_msg_init(m, sd_version);
	p7_signer_make(&m->s[0], key, alg, skid, d, n);
	m->n = 1;
}

MS_TEST(pkcs7_parse_versions)
{
	static struct p7_msg m;
	struct ms_pkcs7 out;
	const char *why = NULL;

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	one_signer(&m, 3, "rsa2048", true, MS_HASH_SHA256);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);

	/* SignedData 1 with a version 3 SignerInfo, and the other way round. */
	one_signer(&m, 1, "rsa2048", true, MS_HASH_SHA256);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strcmp(why, "SignedData-SignerInfo version mismatch") == 0);
	one_signer(&m, 3, "rsa2048", false, MS_HASH_SHA256);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strcmp(why, "SignedData-SignerInfo version mismatch") == 0);

	/* Versions other than 1 and 3. */
	one_signer(&m, 2, "rsa2048", false, MS_HASH_SHA256);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strstr(why, "unsupported SignedData version") != NULL);
	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].version = 2;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strstr(why, "unsupported SignerInfo version") != NULL);

	/* The sid form must follow the SignerInfo version. */
	one_signer(&m, 1, "rsa2048", true, MS_HASH_SHA256);
	m.s[0].version = 1;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strstr(why, "version 1 without an issuerAndSerialNumber") != NULL);
	one_signer(&m, 3, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].version = 3;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strstr(why, "version 3 without a subjectKeyIdentifier") != NULL);
}

MS_TEST(pkcs7_parse_signer_counts)
{
	static struct p7_msg m;
	struct ms_pkcs7 out;
	const char *why = NULL;

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.n = 0;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strcmp(why, "no SignerInfo") == 0);
	for (size_t i = 1; i < P7_SIGNERS; i++) {
		m.s[i] = m.s[0];
	}
	m.n = MS_PKCS7_SIGNERS_MAX;
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.n_signers == MS_PKCS7_SIGNERS_MAX);
	m.n = MS_PKCS7_SIGNERS_MAX + 1;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_UNSUPPORTED);
	CHECK(strcmp(why, "more than 8 signers") == 0);
}

/* signedAttrs [0] { SEQUENCE { contentType, SET { id-data } } } */
static const uint8_t attrs0[] = {
	0xa0, 0x18, 0x30, 0x16, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09,
	0x03, 0x31, 0x09, 0x06, 0x07, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01,
};
/* The same as the kernel's [2] EXPLICIT SEQUENCE OF alternative. */
static const uint8_t attrs2[] = {
	0xa2, 0x1a, 0x30, 0x18, 0x30, 0x16, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d,
	0x01, 0x09, 0x03, 0x31, 0x09, 0x06, 0x07, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01,
};
/* unsignedAttrs [1] with the same attribute. */
static const uint8_t uattrs1[] = {
	0xa1, 0x18, 0x30, 0x16, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09,
	0x03, 0x31, 0x09, 0x06, 0x07, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01,
};

MS_TEST(pkcs7_parse_attributes)
{
	static struct p7_msg m;
	struct ms_pkcs7 out;
	const char *why = NULL;

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].attrs = attrs0;
	m.s[0].attrs_len = sizeof(attrs0);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.signers[0].has_signed_attrs);
	CHECK_ERR(ms_pkcs7_check_module(&out, &why), MS_E_MALFORMED);
	CHECK(strstr(why, "has signed attributes") != NULL);

	m.s[0].attrs = attrs2;
	m.s[0].attrs_len = sizeof(attrs2);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.signers[0].has_signed_attrs);

	/* Present on one signer of two: the kernel's "Inconsistently supplied authAttrs". */
	m.s[1] = m.s[0];
	m.s[1].attrs = NULL;
	m.s[1].attrs_len = 0;
	m.n = 2;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strcmp(why, "signed attributes on some signers only") == 0);

	/* Unsigned attributes are allowed and ignored, as by the kernel. */
	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].uattrs = uattrs1;
	m.s[0].uattrs_len = sizeof(uattrs1);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.signers[0].has_unsigned_attrs && !out.signers[0].has_signed_attrs);
	CHECK_ERR(ms_pkcs7_check_module(&out, &why), MS_OK);

	/* An attribute without its SET of values. */
	m.s[0].uattrs = NULL;
	m.s[0].uattrs_len = 0;
	{
		uint8_t bad[sizeof(attrs0)];

		memcpy(bad, attrs0, sizeof(bad));
		bad[15] = 0x30;
		m.s[0].attrs = bad;
		m.s[0].attrs_len = sizeof(bad);
		CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
		CHECK(strstr(why, "signed attributes") != NULL);
	}
}

/* 1.2.840.113549.1.1.11 sha256WithRSAEncryption, NULL parameters */
static const uint8_t alg_sha256_rsa[] = {
	0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b, 0x05, 0x00,
};
/* 1.2.840.113549.2.5 md5 */
static const uint8_t alg_md5[] = {
	0x30, 0x0a, 0x06, 0x08, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x05,
};
/* rsaEncryption without the NULL: the kernel ignores parameters. */
static const uint8_t alg_rsa_noparams[] = {
	0x30, 0x0b, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
};
/* sha256 with two parameter elements. */
static const uint8_t alg_sha256_two[] = {
	0x30, 0x0f, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
	0x05, 0x00, 0x05, 0x00,
};

MS_TEST(pkcs7_parse_algorithms)
{
	static struct p7_msg m;
	struct ms_pkcs7 out;
	const char *why = NULL;

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].sig_alg = alg_sha256_rsa;
	m.s[0].sig_alg_len = sizeof(alg_sha256_rsa);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_UNSUPPORTED);
	CHECK(strstr(why, "signature algorithm") != NULL);

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].digest_alg = alg_md5;
	m.s[0].digest_alg_len = sizeof(alg_md5);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_UNSUPPORTED);
	CHECK(strstr(why, "digest algorithm") != NULL);

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].sig_alg = alg_rsa_noparams;
	m.s[0].sig_alg_len = sizeof(alg_rsa_noparams);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.signers[0].key_type == MS_KEY_RSA);

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].digest_alg = alg_sha256_two;
	m.s[0].digest_alg_len = sizeof(alg_sha256_two);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strstr(why, "digestAlgorithm") != NULL);

	/* ecdsa-with-SHA384 over SHA-256: the kernel takes the hash from digestAlgorithm. */
	one_signer(&m, 1, "ec256", false, MS_HASH_SHA256);
	m.s[0].sig_alg = ms_hash_info(MS_HASH_SHA384)->ecdsa_alg_id;
	m.s[0].sig_alg_len = ms_hash_info(MS_HASH_SHA384)->ecdsa_alg_id_len;
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.signers[0].hash == MS_HASH_SHA256 && out.signers[0].sig_hash == MS_HASH_SHA384);

	/* Empty and oversized signatures. */
	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.s[0].sig_len = 0;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	m.s[0].sig_len = MS_RSA_MAX_BYTES + 1;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strstr(why, "signature empty or longer") != NULL);
}

/* { msIndirectData } and { 1.2.3 } as eContentType */
static const uint8_t eci_indirect[] = {
	0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x04,
};
static const uint8_t eci_other[] = { 0x30, 0x04, 0x06, 0x02, 0x2a, 0x03 };
/* { id-data, [0] { OCTET STRING "x" } } and with an empty [0] */
static const uint8_t eci_attached[] = {
	0x30, 0x10, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01,
	0xa0, 0x03, 0x04, 0x01, 0x78,
};
static const uint8_t eci_empty0[] = {
	0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01, 0xa0, 0x00,
};

MS_TEST(pkcs7_parse_content_types)
{
	static struct p7_msg m;
	struct ms_pkcs7 out;
	const char *why = NULL;

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.outer_oid = ms_oid_data;
	m.outer_oid_len = sizeof(ms_oid_data);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strcmp(why, "ContentInfo is not signedData") == 0);

	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.eci = eci_indirect;
	m.eci_len = sizeof(eci_indirect);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK_ERR(ms_pkcs7_check_module(&out, &why), MS_E_MALFORMED);
	CHECK(strstr(why, "not id-data") != NULL);

	m.eci = eci_other;
	m.eci_len = sizeof(eci_other);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strstr(why, "neither id-data") != NULL);

	m.eci = eci_attached;
	m.eci_len = sizeof(eci_attached);
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.has_content);
	CHECK_ERR(ms_pkcs7_check_module(&out, &why), MS_E_MALFORMED);

	m.eci = eci_empty0;
	m.eci_len = sizeof(eci_empty0);
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strcmp(why, "bad eContent") == 0);
}

MS_TEST(pkcs7_parse_kernel_alternatives)
{
	static struct p7_msg m;
	struct ms_pkcs7 out;
	const char *why = NULL;
	size_t len = 0;
	uint8_t *cert = cms_read("rsa2048.x509.der", &len);
	uint8_t *certs = malloc(len + 8);
	struct ms_der_out o;

	CHECK(certs != NULL);
	/* digestAlgorithms and signerInfos as SEQUENCE OF (pkcs7.asn1 daSequence, siSequence). */
	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.digest_algs_tag = DER_SEQUENCE;
	m.signer_infos_tag = DER_SEQUENCE;
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);

	/* certificates [2] IMPLICIT SEQUENCE OF (certSequence). */
	ms_der_out_init(&o, certs, len + 8);
	ms_der_header(&o, 0xa2, len);
	ms_der_bytes(&o, cert, len);
	CHECK_ERR(o.err, MS_OK);
	one_signer(&m, 1, "rsa2048", false, MS_HASH_SHA256);
	m.certs = certs;
	m.certs_len = o.len;
	CHECK_ERR(parse_built(&m, &why, &out), MS_OK);
	CHECK(out.n_certs == 1 && out.certs[0].len == len);

	/* A certificate that is not a SEQUENCE (pkcs7_extract_cert()). */
	certs[o.len - len] = 0x31;
	CHECK_ERR(parse_built(&m, &why, &out), MS_E_MALFORMED);
	CHECK(strcmp(why, "bad certificate") == 0);
	free(certs);
	free(cert);
}

MS_TEST(pkcs7_parse_empty_signed_data)
{
	/* ContentInfo { signedData, [0] { 1, {}, { id-data }, {} } } */
	static const char *hex =
		"30 23 06 09 2a 86 48 86 f7 0d 01 07 02 a0 16 30 14 02 01 01 31 00"
		"30 0b 06 09 2a 86 48 86 f7 0d 01 07 01 31 00";
	uint8_t buf[64];
	size_t len = ms_test_hex(hex, buf, sizeof(buf));
	struct ms_pkcs7 m;
	const char *why = NULL;

	CHECK_ERR(ms_pkcs7_parse(buf, len, &m, &why), MS_E_MALFORMED);
	CHECK(strcmp(why, "no SignerInfo") == 0);
	/* Without the SignedData at all. */
	buf[1] = 0x0b;
	CHECK_ERR(ms_pkcs7_parse(buf, 13, &m, &why), MS_E_MALFORMED);
	CHECK(strcmp(why, "ContentInfo without content") == 0);
}

MS_TEST(pkcs7_parse_digest_algs_helper)
{
	size_t len = 0;
	uint8_t *p = cms_read("pkcs7/two-signers.p7s", &len);
	struct ms_pkcs7 m;
	enum ms_hash_alg algs[MS_PKCS7_SIGNERS_MAX];

	CHECK_ERR(ms_pkcs7_parse(p, len, &m, NULL), MS_OK);
	CHECK(ms_pkcs7_digest_algs(&m, algs, MS_PKCS7_SIGNERS_MAX) == 1);
	CHECK(algs[0] == MS_HASH_SHA256);
	m.signers[1].hash = MS_HASH_SHA512;
	CHECK(ms_pkcs7_digest_algs(&m, algs, MS_PKCS7_SIGNERS_MAX) == 2);
	CHECK(algs[1] == MS_HASH_SHA512);
	CHECK(ms_pkcs7_digest_algs(&m, algs, 1) == 1);
	CHECK(strcmp(ms_pkcs7_sig_alg_name(MS_KEY_EC), "ecdsa") == 0);
	free(p);
}

MS_TEST(pkcs7_name_text)
{
	struct ms_cms_cert *cert = cms_cert("rsa2048.x509.der");
	struct ms_span issuer = ms_cms_cert_issuer(cert);
	char out[256], tiny[8];
	/* Name { SET { CN "a\x01b" } SET { 2.5.4.99 "x" + C (value missing) } } */
	static const char *hex =
		"30 21 31 0c 30 0a 06 03 55 04 03 0c 03 61 01 62"
		"31 11 30 08 06 03 55 04 63 13 01 78 30 05 06 03 55 04 06";
	uint8_t name[64];
	size_t name_len = ms_test_hex(hex, name, sizeof(name));

	CHECK_ERR(ms_cms_name_text(issuer, out, sizeof(out)), MS_OK);
	CHECK(strcmp(out, "O=modsign test, CN=TEST-ONLY modsign rsa2048") == 0);
	CHECK_ERR(ms_cms_name_cn(issuer, out, sizeof(out)), MS_OK);
	CHECK(strcmp(out, "TEST-ONLY modsign rsa2048") == 0);
	CHECK_ERR(ms_cms_name_text(issuer, tiny, sizeof(tiny)), MS_OK);
	CHECK(strcmp(tiny, "O=modsi") == 0);
	CHECK(ms_cms_cert_serial(cert).len > 0 && ms_cms_cert_skid(cert).len == 20);
	CHECK(ms_cms_cert_subject_name(cert).len > 0);

	/* The last ATV lacks its value: malformed, and the output is emptied. */
	CHECK(ms_cms_name_text((struct ms_span){ name, name_len }, out, sizeof(out)) ==
	      MS_E_MALFORMED);
	CHECK(out[0] == '\0');
	/* With the value: control bytes and unknown OIDs handled. */
	{
		static const char *hex2 =
			"30 26 31 0c 30 0a 06 03 55 04 03 0c 03 61 01 62"
			"31 16 30 08 06 03 55 04 63 13 01 78 30 0a 06 03 55 04 06 0c 03 c3 a9 21";
		name_len = ms_test_hex(hex2, name, sizeof(name));
		CHECK(ms_cms_name_text((struct ms_span){ name, name_len }, out, sizeof(out)) ==
		      MS_OK);
		CHECK(strcmp(out, "CN=a?b, 2.5.4.99=x + C=?" "?!") == 0);
		CHECK(ms_cms_name_cn((struct ms_span){ name, name_len }, out, sizeof(out)) ==
		      MS_OK);
		CHECK(strcmp(out, "a?b") == 0);
	}
	CHECK_ERR(ms_cms_name_cn((struct ms_span){ name, 3 }, out, sizeof(out)), MS_E_MALFORMED);
	ms_cms_cert_free(cert);
}
