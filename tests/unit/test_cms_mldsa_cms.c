// SPDX-License-Identifier: GPL-2.0-only
/*
 * ML-DSA module signatures in CMS (RFC 9882), both shapes sign-file 7.2
 * writes: the signature over the module itself, or over the signed
 * attributes contentType and messageDigest (SHA-512). Built by
 * signed_data.c, read back by pkcs7_parse.c and checked by pkcs7_verify.c.
 * The only ML-DSA signatures at hand are OpenSSL's in its test
 * certificates, so the "module" of the first shape is the server
 * certificate's tbsCertificate, signed by the root's key.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_cms.h"

#define ROOT "mldsa/root-ml-dsa-44-cert.pem"
#define SERVER "mldsa/server-ml-dsa-44-cert.pem"
#define OUT_CAP 16384

/* The SignedData of @signer over @sig, as sign-file would write it for @cert. */
static size_t
build(const struct ms_cms_cert *cert, bool use_skid, struct ms_span sig, enum ms_hash_alg hash,
      struct ms_span attrs, uint8_t *out)
{
	static uint8_t sid[1024];
	size_t sid_len = 0, len = 0;
	struct ms_cms_signer s;

	CHECK_ERR(ms_cms_signer_id_encode(cert, use_skid, sid, sizeof(sid), &sid_len), MS_OK);
	memset(&s, 0, sizeof(s));
	s.hash = hash;
	s.key_type = MS_KEY_MLDSA;
	s.use_skid = use_skid;
	s.sid = (struct ms_span){ sid, sid_len };
	s.sig = sig;
	CHECK_ERR(ms_cms_signed_data_encode_mldsa(&s, MS_MLDSA_44, attrs, out, OUT_CAP, &len),
		  MS_OK);
	return len;
}

static void
sha512_of(struct ms_span m, struct ms_pkcs7_digest *dg)
{
	struct ms_cms_digest *d = NULL;

	CHECK_ERR(ms_cms_digest_new(MS_HASH_SHA512, &d), MS_OK);
	CHECK_ERR(ms_cms_digest_update(d, m.p, m.len), MS_OK);
	dg->alg = MS_HASH_SHA512;
	CHECK_ERR(ms_cms_digest_final(d, dg->d, sizeof(dg->d), &dg->len), MS_OK);
	ms_cms_digest_free(d);
}

/* Without signed attributes: the signature covers the payload, given in pieces. */
MS_TEST(mldsa_cms_module_signed_itself)
{
	struct ms_cms_cert *root = cms_cert(ROOT), *server = cms_cert(SERVER);
	struct ms_cms_cert *rsa = cms_cert("rsa2048.x509.der");
	const struct ms_cms_cert *certs[2] = { rsa, root };
	struct ms_pkcs7_signer_result res[1];
	struct ms_pkcs7_digest dg;
	struct ms_span payload[2];
	struct ms_pkcs7 msg;
	uint8_t *out = malloc(OUT_CAP), *changed = malloc(server->tbs.len);
	const char *why = NULL;
	size_t len;

	CHECK(out != NULL && changed != NULL);
	sha512_of(server->tbs, &dg);
	payload[0] = (struct ms_span){ server->tbs.p, 100 };
	payload[1] = (struct ms_span){ server->tbs.p + 100, server->tbs.len - 100 };
	for (int use_skid = 0; use_skid <= 1; use_skid++) {
		len = build(root, use_skid != 0, server->sig_value, MS_HASH_SHA512,
			    (struct ms_span){ NULL, 0 }, out);
		CHECK_ERR(ms_pkcs7_parse_module(out, len, &msg, &why), MS_OK);
		CHECK_EQ(msg.version, use_skid != 0 ? 3 : 1);
		CHECK_EQ(msg.signers[0].key_type, MS_KEY_MLDSA);
		CHECK_EQ(msg.signers[0].mldsa, MS_MLDSA_44);
		CHECK_STR_EQ(ms_pkcs7_sig_alg_name(msg.signers[0].key_type), "ml-dsa");
		CHECK_ERR(ms_pkcs7_verify_payload(&msg, &dg, 1, payload, 2, certs, 2, res, &why),
			  MS_OK);
		CHECK(res[0].cert == root);
		/* Without the payload it cannot be checked. */
		CHECK_ERR(ms_pkcs7_verify(&msg, &dg, 1, certs, 2, res, &why), MS_E_ARG);
		/* A changed payload, or the server's own key, fails. */
		memcpy(changed, server->tbs.p, server->tbs.len);
		changed[server->tbs.len / 2] ^= 0x20;
		payload[0] = (struct ms_span){ changed, server->tbs.len };
		CHECK_ERR(ms_pkcs7_verify_payload(&msg, &dg, 1, payload, 1, certs, 2, res, &why),
			  MS_E_MISMATCH);
		payload[0] = (struct ms_span){ server->tbs.p, 100 };
		certs[1] = server;
		CHECK_ERR(ms_pkcs7_verify_payload(&msg, &dg, 1, payload, 2, certs, 2, res, &why),
			  MS_E_NOTFOUND);
		certs[1] = root;
	}
	free(changed);
	free(out);
	ms_cms_cert_free(rsa);
	ms_cms_cert_free(root);
	ms_cms_cert_free(server);
}

static ms_err
attrs_fn(const void *ctx, uint8_t *out, size_t cap, size_t *out_len)
{
	return ms_cms_mldsa_attrs_encode(ctx, 64, out, cap, out_len);
}

/*
 * SignedAttributes as sign-file 7.2 writes them under OpenSSL 3.5/3.6
 * (RFC 5652, 5.3 and 11.1-11.2): SET { SEQUENCE { contentType SET { id-data } },
 * SEQUENCE { messageDigest SET { OCTET STRING sha512 } } }, every capacity.
 */
MS_TEST(mldsa_cms_attrs_encoding)
{
	uint8_t want[128], digest[64];
	size_t n, len = 0;

	for (size_t i = 0; i < sizeof(digest); i++) {
		digest[i] = (uint8_t)(i + 1);
	}
	n = ms_test_hex("31 6b"
			" 30 18 06 09 2a 86 48 86 f7 0d 01 09 03 31 0b 06 09 2a 86 48 86 f7 0d 01 07 01"
			" 30 4f 06 09 2a 86 48 86 f7 0d 01 09 04 31 42 04 40", want, sizeof(want));
	memcpy(want + n, digest, sizeof(digest));
	cms_every_cap(attrs_fn, digest, want, n + sizeof(digest));
	CHECK_ERR(ms_cms_mldsa_attrs_encode(digest, 32, want, sizeof(want), &len), MS_E_ARG);
}

/*
 * With signed attributes: refused by a kernel's default rules, taken with
 * the waiver; the messageDigest must be the module's SHA-512 and the
 * signature cover the attributes (OpenSSL's certificate signature does
 * not: MISMATCH is the best an honest test without an ML-DSA signer gets).
 */
MS_TEST(mldsa_cms_signed_attributes)
{
	struct ms_cms_cert *root = cms_cert(ROOT), *server = cms_cert(SERVER);
	const struct ms_cms_cert *certs[1] = { root };
	struct ms_pkcs7_signer_result res[1];
	struct ms_pkcs7_digest dg;
	struct ms_pkcs7 msg;
	uint8_t *out = malloc(OUT_CAP), attrs[128], sid[512];
	const char *why = NULL;
	size_t len, attrs_len = 0, sid_len = 0;
	struct ms_cms_signer s;

	CHECK(out != NULL);
	sha512_of(server->tbs, &dg);
	CHECK_ERR(ms_cms_mldsa_attrs_encode(dg.d, dg.len, attrs, sizeof(attrs), &attrs_len), MS_OK);
	len = build(root, false, server->sig_value, MS_HASH_SHA512,
		    (struct ms_span){ attrs, attrs_len }, out);
	CHECK_ERR(ms_pkcs7_parse(out, len, &msg, &why), MS_OK);
	CHECK(msg.signers[0].has_signed_attrs);
	/* Written as [0] IMPLICIT: the SET's bytes but the tag. */
	CHECK_EQ(msg.signers[0].signed_attrs.len, attrs_len);
	CHECK_EQ(msg.signers[0].signed_attrs.p[0], 0xa0);
	CHECK_MEM_EQ(msg.signers[0].signed_attrs.p + 1, attrs + 1, attrs_len - 1);
	CHECK_ERR(ms_pkcs7_check_module(&msg, &why), MS_E_MALFORMED);
	CHECK(strstr(why, "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA") != NULL);
	CHECK_ERR(ms_pkcs7_check_module_mldsa_waiver(&msg, &why), MS_OK);
	CHECK_ERR(ms_pkcs7_verify(&msg, &dg, 1, certs, 1, res, &why), MS_E_MISMATCH);
	CHECK(strstr(why, "ML-DSA signature does not verify") != NULL);
	dg.d[0] ^= 1;	/* another module */
	CHECK_ERR(ms_pkcs7_verify(&msg, &dg, 1, certs, 1, res, &why), MS_E_MISMATCH);
	CHECK(strstr(why, "messageDigest") != NULL);
	/* Signed attributes need SHA-512 and an ML-DSA key; ML-DSA needs its own encoder. */
	CHECK_ERR(ms_cms_signer_id_encode(root, false, sid, sizeof(sid), &sid_len), MS_OK);
	memset(&s, 0, sizeof(s));
	s.hash = MS_HASH_SHA512;
	s.key_type = MS_KEY_MLDSA;
	s.sid = (struct ms_span){ sid, sid_len };
	s.sig = server->sig_value;
	CHECK_ERR(ms_cms_signed_data_encode_mldsa(&s, MS_MLDSA_44, (struct ms_span){ attrs, attrs_len },
						  out, OUT_CAP, &len), MS_OK);
	s.hash = MS_HASH_SHA256;
	CHECK_ERR(ms_cms_signed_data_encode_mldsa(&s, MS_MLDSA_44, (struct ms_span){ attrs, attrs_len },
						  out, OUT_CAP, &len), MS_E_ARG);
	CHECK_ERR(ms_cms_signed_data_encode(&s, out, OUT_CAP, &len), MS_E_ARG);
	s.key_type = MS_KEY_RSA;
	CHECK_ERR(ms_cms_signed_data_encode_mldsa(&s, MS_MLDSA_44, (struct ms_span){ NULL, 0 }, out,
						  OUT_CAP, &len), MS_E_ARG);
	free(out);
	ms_cms_cert_free(root);
	ms_cms_cert_free(server);
}

/* A signature of another set's length under id-ml-dsa-65 is refused when parsed. */
MS_TEST(mldsa_cms_parse_wrong_length)
{
	struct ms_cms_cert *root = cms_cert(ROOT), *server = cms_cert(SERVER);
	static const uint8_t oid44[] = { 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04,
					 0x03, 0x11 };
	uint8_t *out = malloc(OUT_CAP), *at = NULL;
	struct ms_pkcs7 msg;
	const char *why = NULL;
	size_t len;

	CHECK(out != NULL);
	len = build(root, false, server->sig_value, MS_HASH_SHA512, (struct ms_span){ NULL, 0 }, out);
	for (size_t i = 0; i + sizeof(oid44) <= len && at == NULL; i++) {
		if (memcmp(out + i, oid44, sizeof(oid44)) == 0) {
			at = out + i + sizeof(oid44) - 1;
		}
	}
	CHECK(at != NULL);
	*at = 0x12;
	CHECK_ERR(ms_pkcs7_parse(out, len, &msg, &why), MS_E_MALFORMED);
	CHECK(strstr(why, "parameter set's length") != NULL);
	*at = 0x14;	/* no such set */
	CHECK_ERR(ms_pkcs7_parse(out, len, &msg, &why), MS_E_UNSUPPORTED);
	free(out);
	ms_cms_cert_free(root);
	ms_cms_cert_free(server);
}
