// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/cms/signed_data.c and the whole encode path against
 * the kernel's sign-file output committed in tests/data/cms (see its README).
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_cms.h"

/* What we write passes the checks `-s` and `verify` apply to a module signature. */
static bool
parses_as_module(const uint8_t *p, size_t len)
{
	struct ms_pkcs7 m;

	return ms_pkcs7_parse_module(p, len, &m, NULL) == MS_OK;
}

static const struct vec {
	const char *file;
	const char *key;
	enum ms_hash_alg hash;
	bool use_skid;
	size_t half;		/* EC: r and s size; 0 for RSA */
} vecs[] = {
	{ "cms/rsa2048-sha256.p7s", "rsa2048", MS_HASH_SHA256, false, 0 },
	{ "cms/rsa2048-sha512-skid.p7s", "rsa2048", MS_HASH_SHA512, true, 0 },
	{ "cms/rsa2048-sha1.p7s", "rsa2048", MS_HASH_SHA1, false, 0 },
	{ "cms/rsa2048-sha224.p7s", "rsa2048", MS_HASH_SHA224, false, 0 },
	{ "cms/rsa2048-sha384-skid.p7s", "rsa2048", MS_HASH_SHA384, true, 0 },
	{ "cms/rsa3072-sha256.p7s", "rsa3072", MS_HASH_SHA256, false, 0 },
	{ "cms/rsa4096-sha512.p7s", "rsa4096", MS_HASH_SHA512, false, 0 },
	{ "cms/rsa2048-sha3-256.p7s", "rsa2048", MS_HASH_SHA3_256, false, 0 },
	{ "cms/rsa2048-sha3-384.p7s", "rsa2048", MS_HASH_SHA3_384, false, 0 },
	{ "cms/rsa2048-sha3-512-skid.p7s", "rsa2048", MS_HASH_SHA3_512, true, 0 },
	{ "cms/ec256-sha256.p7s", "ec256", MS_HASH_SHA256, false, 32 },
	{ "cms/ec256-sha1.p7s", "ec256", MS_HASH_SHA1, false, 32 },
	{ "cms/ec256-sha224-skid.p7s", "ec256", MS_HASH_SHA224, true, 32 },
	{ "cms/ec384-sha384-skid.p7s", "ec384", MS_HASH_SHA384, true, 48 },
	{ "cms/ec521-sha512.p7s", "ec521", MS_HASH_SHA512, false, 66 },
};

#define N_VECS (sizeof(vecs) / sizeof(vecs[0]))

static struct ms_cms_cert *
vec_cert(const struct vec *v)
{
	char name[64];

	snprintf(name, sizeof(name), "%s.x509.der", v->key);
	return cms_cert(name);
}

/* The module digest (every hash, SHA-3 included: nettle). */
static void
module_digest(enum ms_hash_alg alg, uint8_t *digest)
{
	struct ms_cms_digest *d = NULL;
	size_t len = 0, mlen = 0;
	uint8_t *mod;

	CHECK_ERR(ms_cms_digest_new(alg, &d), MS_OK);
	mod = cms_read("cms/mod.bin", &mlen);
	CHECK_ERR(ms_cms_digest_update(d, mod, mlen), MS_OK);
	CHECK_ERR(ms_cms_digest_final(d, digest, MS_HASH_MAX_SIZE, &len), MS_OK);
	CHECK(len == ms_cms_hash_size(alg));
	ms_cms_digest_free(d);
	free(mod);
}

static ms_err
sd_fn(const void *vctx, uint8_t *out, size_t cap, size_t *out_len)
{
	return ms_cms_signed_data_encode(vctx, out, cap, out_len);
}

/*
 * The whole path the CLI takes for an RSA key, with mbedTLS standing in
 * for the token: digest the module, DigestInfo, PKCS#1 v1.5 sign, sid,
 * encode. PKCS#1 v1.5 is deterministic, so the bytes must equal sign-file's.
 */
MS_TEST(cms_sd_sign_file_rsa_byte_for_byte)
{
	size_t done = 0;

	for (size_t i = 0; i < N_VECS; i++) {
		const struct vec *v = &vecs[i];
		struct ms_cms_cert *cert;
		uint8_t digest[MS_HASH_MAX_SIZE], tbs[128], raw[MS_SIG_MAX];
		uint8_t sig[MS_SIG_MAX], sid[512], *want, *out;
		size_t tbs_len = 0, raw_len, sig_len = 0, sid_len = 0, want_len = 0, len = 0;
		struct ms_cms_signer s;

		if (v->half != 0) {
			continue;
		}
		module_digest(v->hash, digest);
		cert = vec_cert(v);
		want = cms_read(v->file, &want_len);
		CHECK_ERR(ms_cms_tbs_encode(MS_KEY_RSA, v->hash, digest, ms_cms_hash_size(v->hash), tbs,
					sizeof(tbs), &tbs_len), MS_OK);
		raw_len = cms_token_sign(v->key, v->hash, tbs, tbs_len, raw, 0);
		CHECK_ERR(ms_cms_cert_verify(cert, v->hash, tbs, tbs_len, raw, raw_len), MS_OK);
		CHECK(ms_cms_sig_encode(MS_KEY_RSA, raw, raw_len, sig, sizeof(sig), &sig_len) ==
		      MS_OK);
		CHECK(ms_cms_signer_id_encode(cert, v->use_skid, sid, sizeof(sid), &sid_len) ==
		      MS_OK);
		s.hash = v->hash;
		s.key_type = MS_KEY_RSA;
		s.use_skid = v->use_skid;
		s.sid = (struct ms_span){ sid, sid_len };
		s.sig = (struct ms_span){ sig, sig_len };
		CHECK_ERR(ms_cms_signed_data_encode(&s, NULL, 0, &len), MS_OK);
		CHECK(len == want_len);
		out = malloc(len);
		CHECK(out != NULL);
		CHECK_ERR(ms_cms_signed_data_encode(&s, out, len, &len), MS_OK);
		CHECK(len == want_len && memcmp(out, want, len) == 0);
		CHECK(parses_as_module(out, len));
		cms_every_cap(sd_fn, &s, want, want_len);
		free(out);
		free(want);
		ms_cms_cert_free(cert);
		done++;
	}
	CHECK(done == 10);	/* every RSA vector, SHA-3 ones included */
}

/*
 * Every vector, EC and SHA-3 included, rebuilt from its own signature:
 * sid from the certificate, r||s back through ms_cms_sig_encode(); the
 * signature must verify over the module's digest, and not over another.
 */
MS_TEST(cms_sd_sign_file_reencode_all)
{
	for (size_t i = 0; i < N_VECS; i++) {
		const struct vec *v = &vecs[i];
		struct ms_cms_cert *cert = vec_cert(v);
		struct ms_span sid_in, sig_in;
		uint8_t sid[512], raw[MS_SIG_MAX], sig[MS_SIG_MAX], out[1024];
		uint8_t digest[MS_HASH_MAX_SIZE], tbs[128];
		size_t want_len = 0, sid_len = 0, raw_len, sig_len = 0, len = 0, tbs_len = 0;
		uint8_t *want = cms_read(v->file, &want_len);
		enum ms_key_type type = v->half ? MS_KEY_EC : MS_KEY_RSA;
		struct ms_cms_signer s;

		cms_p7s_parts(want, want_len, &sid_in, &sig_in);
		CHECK(ms_cms_signer_id_encode(cert, v->use_skid, sid, sizeof(sid), &sid_len) ==
		      MS_OK);
		CHECK(ms_der_span_eq(sid_in, sid, sid_len));
		if (v->half != 0) {
			raw_len = 2 * v->half;
			cms_ec_der_to_raw(sig_in, v->half, raw);
		} else {
			raw_len = sig_in.len;
			memcpy(raw, sig_in.p, raw_len);
		}
		CHECK_ERR(ms_cms_sig_encode(type, raw, raw_len, sig, sizeof(sig), &sig_len), MS_OK);
		CHECK(ms_der_span_eq(sig_in, sig, sig_len));
		s.hash = v->hash;
		s.key_type = type;
		s.use_skid = v->use_skid;
		s.sid = (struct ms_span){ sid, sid_len };
		s.sig = (struct ms_span){ sig, sig_len };
		CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_OK);
		CHECK(len == want_len && memcmp(out, want, len) == 0);
		module_digest(v->hash, digest);
		CHECK_ERR(ms_cms_tbs_encode(type, v->hash, digest, ms_cms_hash_size(v->hash), tbs,
					sizeof(tbs), &tbs_len), MS_OK);
		CHECK_ERR(ms_cms_cert_verify(cert, v->hash, tbs, tbs_len, raw, raw_len), MS_OK);
		digest[0] ^= 1;
		CHECK_ERR(ms_cms_tbs_encode(type, v->hash, digest, ms_cms_hash_size(v->hash), tbs,
					sizeof(tbs), &tbs_len), MS_OK);
		CHECK_ERR(ms_cms_cert_verify(cert, v->hash, tbs, tbs_len, raw, raw_len), MS_E_MISMATCH);
		free(want);
		ms_cms_cert_free(cert);
	}
}

/* A P-521 signature long enough for two-byte lengths, every capacity. */
MS_TEST(cms_sd_ec521_every_capacity)
{
	struct ms_cms_cert *cert = cms_cert("ec521.x509.der");
	uint8_t raw[132], sig[150], sid[256];
	size_t sig_len = 0, sid_len = 0, len = 0;
	struct ms_cms_signer s;
	uint8_t *out;

	memset(raw, 0xff, sizeof(raw));		/* both INTEGERs get a 0x00 */
	CHECK_ERR(ms_cms_sig_encode(MS_KEY_EC, raw, sizeof(raw), sig, sizeof(sig), &sig_len), MS_OK);
	CHECK_ERR(ms_cms_signer_id_encode(cert, true, sid, sizeof(sid), &sid_len), MS_OK);
	s.hash = MS_HASH_SHA3_512;
	s.key_type = MS_KEY_EC;
	s.use_skid = true;
	s.sid = (struct ms_span){ sid, sid_len };
	s.sig = (struct ms_span){ sig, sig_len };
	CHECK_ERR(ms_cms_signed_data_encode(&s, NULL, 0, &len), MS_OK);
	out = malloc(len);
	CHECK(out != NULL);
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, len, &len), MS_OK);
	CHECK(parses_as_module(out, len));
	/* ecdsa-with-SHA3-512 2.16.840.1.101.3.4.3.12, no parameters */
	{
		uint8_t alg[16];
		size_t n = ms_test_hex("30 0b 06 09 60 86 48 01 65 03 04 03 0c 04 81 8d", alg,
				       sizeof(alg));

		bool found = false;

		for (size_t i = 0; i + n <= len; i++) {
			found = found || memcmp(out + i, alg, n) == 0;
		}
		CHECK(found);
	}
	cms_every_cap(sd_fn, &s, out, len);
	free(out);
	ms_cms_cert_free(cert);
}

MS_TEST(cms_sd_encode_bad_args)
{
	uint8_t sid[4] = { 0x30, 0x02, 0x05, 0x00 }, skid[4] = { 0x80, 0x02, 0xaa, 0xbb };
	static const uint8_t ias[] = {
		0x30, 0x11, 0x30, 0x0c, 0x31, 0x0a, 0x30, 0x08, 0x06, 0x03, 0x55, 0x04, 0x03,
		0x0c, 0x01, 0x58, 0x02, 0x01, 0x07,
	};
	static uint8_t sig[MS_RSA_MAX_BYTES + 1];
	uint8_t out[4096];
	size_t len = 0;
	struct ms_cms_signer ok = {
		MS_HASH_SHA256, MS_KEY_RSA, false, { sid, 4 }, { sig, 256 },
	};
	struct ms_cms_signer s;

	CHECK_ERR(ms_cms_signed_data_encode(&ok, out, sizeof(out), &len), MS_OK);
	CHECK_ERR(ms_cms_signed_data_encode(NULL, out, sizeof(out), &len), MS_E_ARG);
	CHECK_ERR(ms_cms_signed_data_encode(&ok, out, sizeof(out), NULL), MS_E_ARG);
	s = ok;
	s.hash = (enum ms_hash_alg)0;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s = ok;
	s.key_type = (enum ms_key_type)3;
	CHECK_ERR(ms_cms_signed_data_encode(&s, NULL, 0, &len), MS_E_ARG);
	s = ok;
	s.use_skid = true;	/* version 3 needs a [0] sid */
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s.sid = (struct ms_span){ skid, 4 };
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_OK);
	s.use_skid = false;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s = ok;
	s.sid.len = 3;		/* not one whole TLV */
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s.sid.len = 0;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s.sid.p = NULL;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s = ok;
	s.sig.len = 0;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s.sig.len = MS_RSA_MAX_BYTES + 1;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
	s.sig.len = MS_RSA_MAX_BYTES;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_OK);
	/* With a real issuerAndSerialNumber (CN=X, serial 7) it is a module signature. */
	s.sid = (struct ms_span){ ias, sizeof(ias) };
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_OK);
	CHECK(parses_as_module(out, len));
	s.sig.p = NULL;
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, sizeof(out), &len), MS_E_ARG);
}
