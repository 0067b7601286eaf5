// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the one check of a module's signature
 * (ms_app_sig_verify(), src/app/verify.c) that `modsign verify` and a
 * signing run's already-signed policy share, on sign-file's vectors over
 * tests/data/cms/mod.bin: a good signature verifies; another hash, another
 * certificate, a changed payload, a short file and a PKCS#7 against the
 * kernel's module rules each fail with the reason that says which; without
 * certificates those the message carries are used. ML-DSA: sign-file 7.2's
 * signatures (signed attributes) pass with the waiver only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/app/app.h"
#include "test.h"
#include "test_pkcs7.h"

struct vcase {
	struct ms_modfile mf;
	uint8_t *p7;
	size_t p7_len;
	struct ms_pkcs7 msg;
	struct ms_cms_cert *cert;
	struct ms_app_sig_check c;
};

static void
vcase_open(struct vcase *v, const char *p7s, const char *cert)
{
	memset(v, 0, sizeof(*v));
	ms_modfile_init(&v->mf);
	CHECK_ERR(ms_modfile_open(&v->mf, ms_test_data("cms/mod.bin")), MS_OK);
	v->p7 = cms_read(p7s, &v->p7_len);
	CHECK_ERR(ms_pkcs7_parse(v->p7, v->p7_len, &v->msg, NULL), MS_OK);
	v->cert = cert != NULL ? cms_cert(cert) : NULL;
}

static ms_err
vcase_check_as(struct vcase *v, uint64_t payload_len, enum ms_hash_alg want, bool waiver)
{
	const struct ms_cms_cert *certs[1] = { v->cert };

	return ms_app_sig_verify(&v->mf, payload_len, &v->msg, certs, v->cert != NULL ? 1 : 0,
				 want, waiver, &v->c);
}

static ms_err
vcase_check(struct vcase *v, uint64_t payload_len, enum ms_hash_alg want)
{
	return vcase_check_as(v, payload_len, want, false);
}

static void
vcase_close(struct vcase *v)
{
	ms_modfile_clear(&v->mf);
	ms_cms_cert_free(v->cert);
	free(v->p7);
}

MS_TEST(app_sig_verify_good_and_its_hash)
{
	struct vcase v;

	vcase_open(&v, "cms/rsa2048-sha256.p7s", "rsa2048.x509.der");
	CHECK_ERR(vcase_check(&v, v.mf.len, 0), MS_OK);
	CHECK(v.c.res[0].err == MS_OK && v.c.res[0].cert == v.cert);
	CHECK_ERR(vcase_check(&v, v.mf.len, MS_HASH_SHA256), MS_OK);
	CHECK_ERR(vcase_check(&v, v.mf.len, MS_HASH_SHA384), MS_E_MISMATCH);
	CHECK_STR_EQ(v.c.why, "signed with another hash");
	CHECK(!v.c.at_hash && !v.c.at_rules);
	vcase_close(&v);
}

MS_TEST(app_sig_verify_wrong_cert_changed_or_short_payload)
{
	struct vcase v;

	vcase_open(&v, "cms/rsa2048-sha256.p7s", "rsa3072.x509.der");
	CHECK_ERR(vcase_check(&v, v.mf.len, 0), MS_E_NOTFOUND);
	CHECK_ERR(v.c.res[0].err, MS_E_NOTFOUND);
	vcase_close(&v);

	vcase_open(&v, "cms/rsa2048-sha256.p7s", "rsa2048.x509.der");
	CHECK_ERR(vcase_check(&v, v.mf.len - 1, 0), MS_E_MISMATCH);
	CHECK(!v.c.at_hash);
	CHECK_STR_EQ(v.c.why, "digest mismatch: the module is not what was signed");
	/* More payload than the file holds: the module file's failure, while hashing. */
	CHECK_ERR(vcase_check(&v, v.mf.len + 1, 0), MS_E_CHANGED);
	CHECK(v.c.at_hash);
	vcase_close(&v);
}

MS_TEST(app_sig_verify_without_certs_uses_the_carried_ones)
{
	struct vcase v;

	vcase_open(&v, "cms/openssl-certs.p7s", NULL);
	CHECK_ERR(vcase_check(&v, v.mf.len, 0), MS_OK);
	CHECK(v.c.res[0].cert == NULL);	/* freed with the call: not pointed at */
	vcase_close(&v);

	vcase_open(&v, "cms/rsa2048-sha256.p7s", NULL);
	CHECK_ERR(vcase_check(&v, v.mf.len, 0), MS_E_NOTFOUND);
	vcase_close(&v);
}

MS_TEST(app_sig_verify_module_rules)
{
	struct vcase v;

	/* Signed attributes: the kernel refuses them for a module. */
	vcase_open(&v, "pkcs7/rsa2048-attrs.p7s", "rsa2048.x509.der");
	CHECK_ERR(vcase_check(&v, v.mf.len, 0), MS_E_MALFORMED);
	CHECK(v.c.at_rules && v.c.why != NULL);
	vcase_close(&v);
}

/* sign-file 7.2 with OpenSSL 3.6 over mod.bin: contentType and messageDigest signed. */
MS_TEST(app_sig_verify_mldsa_signed_attrs_by_the_waiver)
{
	static const char *const sets[] = { "44", "65", "87" };
	char p7s[64], cert[64], other[64];
	struct vcase v;

	for (size_t i = 0; i < 3; i++) {
		snprintf(p7s, sizeof(p7s), "mldsa/signfile72-mldsa%s.p7s", sets[i]);
		snprintf(cert, sizeof(cert), "mldsa/mldsa%s.x509.der", sets[i]);
		snprintf(other, sizeof(other), "mldsa/mldsa%s.x509.der", sets[(i + 1) % 3]);

		vcase_open(&v, p7s, cert);
		CHECK(v.msg.signers[0].has_signed_attrs);
		CHECK_ERR(vcase_check_as(&v, v.mf.len, 0, true), MS_OK);
		CHECK(v.c.mldsa_waived && !v.c.at_rules);
		CHECK(v.c.res[0].err == MS_OK && v.c.res[0].cert == v.cert);
		CHECK_ERR(vcase_check_as(&v, v.mf.len, MS_HASH_SHA512, true), MS_OK);
		/* The kernel's default rules: signed attributes refused. */
		CHECK_ERR(vcase_check_as(&v, v.mf.len, 0, false), MS_E_MALFORMED);
		CHECK(v.c.at_rules && !v.c.mldsa_waived && v.c.why != NULL);
		/* One payload byte less: messageDigest no longer matches. */
		CHECK(vcase_check_as(&v, v.mf.len - 1, 0, true) != MS_OK);
		CHECK(v.c.res[0].err != MS_OK);
		vcase_close(&v);

		/* Another set's certificate does not verify it. */
		vcase_open(&v, p7s, other);
		CHECK(vcase_check_as(&v, v.mf.len, 0, true) != MS_OK);
		vcase_close(&v);
	}
}

MS_TEST(app_sig_verify_waiver_leaves_rsa_attrs_refused)
{
	struct vcase v;

	vcase_open(&v, "pkcs7/rsa2048-attrs.p7s", "rsa2048.x509.der");
	CHECK_ERR(vcase_check_as(&v, v.mf.len, 0, true), MS_E_MALFORMED);
	CHECK(v.c.at_rules && !v.c.mldsa_waived);
	vcase_close(&v);
}
