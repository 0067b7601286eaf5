// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for what an ML-DSA key signs and how the signature is written
 * (src/signer/signer.c, signed_data.c): which request forms each key kind
 * takes, the one definition of the signed bytes (the DER signed attributes
 * holding the module's SHA-512, or the module itself, not copied), and the
 * SignedData around a signature: given the signature sign-file 7.2 made
 * (tests/data/mldsa/signfile72-mldsa*.p7s, over tests/data/cms/mod.bin),
 * ms_signer_signed_data() writes sign-file's bytes exactly, and a signature
 * of another length is refused as malformed.
 */
#include <stdlib.h>
#include <string.h>

#include "../../src/signer/signer_internal.h"
#include "test.h"
#include "test_cms.h"

static const uint8_t digest64[64] = { 1, 2, 3 };

MS_TEST(signer_req_check_forms)
{
	const uint8_t bytes[4] = { 1, 2, 3, 4 };
	struct ms_span spans[2] = { { bytes, sizeof(bytes) }, { NULL, 0 } };
	struct ms_signer_req r = { 0 };

	r.form = MS_SIG_DIGEST;
	r.alg = MS_HASH_SHA512;
	r.digest = digest64;
	r.digest_len = 64;
	CHECK_ERR(ms_signer_req_check(MS_KEY_RSA, &r), MS_OK);
	CHECK_ERR(ms_signer_req_check(MS_KEY_EC, &r), MS_OK);
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_E_ARG);
	r.digest_len = 32;	/* not SHA-512's length */
	CHECK_ERR(ms_signer_req_check(MS_KEY_RSA, &r), MS_E_ARG);
	/* The signed attributes: ML-DSA with a SHA-512 digest only. */
	r.form = MS_SIG_MLDSA_ATTRS;
	r.digest_len = 64;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_OK);
	CHECK_ERR(ms_signer_req_check(MS_KEY_RSA, &r), MS_E_ARG);
	r.alg = MS_HASH_SHA256;
	r.digest_len = 32;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_E_ARG);
	/* The module itself: spans, empty ones too; none is the empty module. */
	memset(&r, 0, sizeof(r));
	r.form = MS_SIG_MLDSA_DATA;
	r.data = spans;
	r.n_data = 2;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_OK);
	CHECK_ERR(ms_signer_req_check(MS_KEY_EC, &r), MS_E_ARG);
	r.n_data = 0;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_OK);
	r.data = NULL;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_OK);
	r.n_data = 1;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_E_ARG);
	spans[1].len = 3;	/* a NULL span with a length */
	r.data = spans;
	r.n_data = 2;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_E_ARG);
	r.form = (enum ms_sig_form)7;
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, &r), MS_E_ARG);
	CHECK_ERR(ms_signer_req_check(MS_KEY_MLDSA, NULL), MS_E_ARG);
}

MS_TEST(signer_req_message_forms)
{
	const uint8_t bytes[5] = { 9, 8, 7, 6, 5 };
	const struct ms_span span = { bytes, sizeof(bytes) };
	uint8_t attrs[128];
	size_t attrs_len = 0;
	struct ms_signer_req r = { 0 };
	struct ms_signer_msg m;

	r.form = MS_SIG_MLDSA_ATTRS;
	r.alg = MS_HASH_SHA512;
	r.digest = digest64;
	r.digest_len = sizeof(digest64);
	CHECK_ERR(ms_signer_req_message(MS_KEY_MLDSA, &r, &m), MS_OK);
	CHECK_ERR(ms_cms_mldsa_attrs_encode(digest64, sizeof(digest64), attrs, sizeof(attrs),
					    &attrs_len), MS_OK);
	CHECK_EQ(m.n_spans, 1);
	CHECK_EQ(m.spans[0].len, attrs_len);
	CHECK_MEM_EQ(m.spans[0].p, attrs, attrs_len);
	/* The module itself: the request's own spans, not a copy. */
	memset(&r, 0, sizeof(r));
	r.form = MS_SIG_MLDSA_DATA;
	r.data = &span;
	r.n_data = 1;
	CHECK_ERR(ms_signer_req_message(MS_KEY_MLDSA, &r, &m), MS_OK);
	CHECK(m.spans == &span && m.n_spans == 1);
	/* RSA: the DigestInfo, 19 bytes of prefix for SHA-512. */
	r.form = MS_SIG_DIGEST;
	r.alg = MS_HASH_SHA512;
	r.digest = digest64;
	r.digest_len = sizeof(digest64);
	CHECK_ERR(ms_signer_req_message(MS_KEY_RSA, &r, &m), MS_OK);
	CHECK_EQ(m.spans[0].len, 19 + 64);
	CHECK_MEM_EQ(m.spans[0].p + 19, digest64, 64);
	CHECK_ERR(ms_signer_req_message(MS_KEY_MLDSA, &r, &m), MS_E_ARG);
}

/* sign-file 7.2's SignedData for @set, rebuilt from its own signature. */
static void
signfile_cms_rebuilt(const char *set, size_t sig_len, enum ms_mldsa_set want_set)
{
	char name[64];
	struct ms_cms_cert *cert;
	struct ms_cms_digest *d = NULL;
	struct ms_signer_req req = { 0 };
	struct ms_signer_cms c = { 0 };
	uint8_t digest[64], sid[512], out[8192];
	size_t digest_len = 0, sid_len = 0, out_len = 0, p7_len = 0, mod_len = 0;
	uint8_t *p7, *mod;

	snprintf(name, sizeof(name), "mldsa/mldsa%s.x509.der", set);
	cert = cms_cert(name);
	CHECK_EQ(ms_cms_cert_mldsa_set(cert), want_set);
	snprintf(name, sizeof(name), "mldsa/signfile72-mldsa%s.p7s", set);
	p7 = cms_read(name, &p7_len);
	mod = cms_read("cms/mod.bin", &mod_len);
	CHECK(p7 != NULL && mod != NULL && p7_len > sig_len);
	CHECK_ERR(ms_cms_digest_new(MS_HASH_SHA512, &d), MS_OK);
	CHECK_ERR(ms_cms_digest_update(d, mod, mod_len), MS_OK);
	CHECK_ERR(ms_cms_digest_final(d, digest, sizeof(digest), &digest_len), MS_OK);
	ms_cms_digest_free(d);
	CHECK_ERR(ms_cms_signer_id_encode(cert, false, sid, sizeof(sid), &sid_len), MS_OK);
	req.form = MS_SIG_MLDSA_ATTRS;
	req.alg = MS_HASH_SHA512;
	req.digest = digest;
	req.digest_len = digest_len;
	c.req = &req;
	c.key_type = MS_KEY_MLDSA;
	c.mldsa = want_set;
	c.sid.p = sid;
	c.sid.len = sid_len;
	/* The signature is the SignerInfo's last field: the file's last bytes. */
	c.raw_sig.p = p7 + p7_len - sig_len;
	c.raw_sig.len = sig_len;
	CHECK_ERR(ms_signer_signed_data(&c, out, sizeof(out), &out_len), MS_OK);
	CHECK_EQ(out_len, p7_len);
	CHECK_MEM_EQ(out, p7, p7_len);
	/* The signature sign-file made verifies over the attributes we sign. */
	{
		struct ms_signer_msg m;

		CHECK_ERR(ms_signer_req_message(MS_KEY_MLDSA, &req, &m), MS_OK);
		CHECK_ERR(ms_cms_cert_verify_parts(cert, MS_HASH_SHA512, m.spans, m.n_spans,
						   c.raw_sig.p, c.raw_sig.len), MS_OK);
		/* Not over the module itself. */
		m.parts[0].p = mod;
		m.parts[0].len = mod_len;
		CHECK_ERR(ms_cms_cert_verify_parts(cert, MS_HASH_SHA512, m.parts, 1,
						   c.raw_sig.p, c.raw_sig.len), MS_E_MISMATCH);
	}
	/* A signature one byte short is not one of this set. */
	c.raw_sig.len = sig_len - 1;
	CHECK_ERR(ms_signer_signed_data(&c, out, sizeof(out), &out_len), MS_E_MALFORMED);
	/* The form must be the key's: a digest request for an ML-DSA key. */
	c.raw_sig.len = sig_len;
	req.form = MS_SIG_DIGEST;
	CHECK_ERR(ms_signer_signed_data(&c, out, sizeof(out), &out_len), MS_E_ARG);
	free(p7);
	free(mod);
	ms_cms_cert_free(cert);
}

MS_TEST(signer_signed_data_mldsa_is_signfile72s)
{
	signfile_cms_rebuilt("44", 2420, MS_MLDSA_44);
	signfile_cms_rebuilt("65", 3309, MS_MLDSA_65);
	signfile_cms_rebuilt("87", 4627, MS_MLDSA_87);
}
