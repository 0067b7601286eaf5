// SPDX-License-Identifier: GPL-2.0-only
/*
 * ML-DSA certificates (src/cms/cert_mldsa.c and the ML-DSA paths of
 * cert.c, cert_key.c, sig_verify.c), with OpenSSL 3.5.7's ML-DSA-44 test
 * certificates (tests/data/mldsa/README.md): a self-signed root and a
 * server certificate it signed. OpenSSL made their ML-DSA signatures, so
 * our verifier checking them is an oracle of its own.
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/base64.h>
#include <nettle/sha1.h>

#include "test.h"
#include "test_cms.h"

#define ROOT "mldsa/root-ml-dsa-44-cert.pem"
#define SERVER "mldsa/server-ml-dsa-44-cert.pem"

/* id-ml-dsa-44 AlgorithmIdentifier, as it opens the SPKI (RFC 9881, 2). */
static const uint8_t alg_mldsa44[] = {
	0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03, 0x11,
};

/* The SPKI TLV inside @der: 4 header bytes before its AlgorithmIdentifier. */
static struct ms_span
spki_in(struct ms_span der)
{
	const uint8_t *at = NULL;

	for (size_t i = 4; i + sizeof(alg_mldsa44) <= der.len && at == NULL; i++) {
		/* The second id-ml-dsa-44 is the key's; the first is the signature's. */
		if (memcmp(der.p + i, alg_mldsa44, sizeof(alg_mldsa44)) == 0 && der.p[i - 4] == 0x30 &&
		    der.p[i - 3] == 0x82) {
			at = der.p + i - 4;
		}
	}
	CHECK(at != NULL);
	return (struct ms_span){ at, 4 + (size_t)(at[2] << 8 | at[3]) };
}

MS_TEST(mldsa_cert_parse)
{
	struct ms_cms_cert *root = cms_cert(ROOT), *server = cms_cert(SERVER), *again = NULL;
	enum ms_key_type type = 0;
	enum ms_ec_curve curve = MS_EC_P256;
	uint8_t sha1[SHA1_DIGEST_SIZE];
	struct sha1_ctx h;
	struct ms_span der, iss, sub;
	char text[128];

	ms_cms_cert_key(server, &type, &curve, NULL);
	CHECK_EQ(type, MS_KEY_MLDSA);
	CHECK_EQ(curve, MS_EC_NONE);
	CHECK_EQ(ms_cms_cert_mldsa_set(server), MS_MLDSA_44);
	CHECK_EQ(ms_cms_cert_mldsa_set(NULL), MS_MLDSA_NONE);
	CHECK_EQ(server->mldsa_pk.len, 1312);
	/* OpenSSL's SKID is SHA-1 of the key bits (RFC 5280, 4.2.1.2, method 1). */
	sha1_init(&h);
	sha1_update(&h, server->mldsa_pk.len, server->mldsa_pk.p);
	sha1_digest(&h, sizeof(sha1), sha1);
	CHECK(ms_cms_cert_has_skid(server));
	CHECK_EQ(ms_cms_cert_skid(server).len, sizeof(sha1));
	CHECK_MEM_EQ(ms_cms_cert_skid(server).p, sha1, sizeof(sha1));
	/* serial 2 (openssl x509 -serial says so too); issued by the root's subject. */
	CHECK_EQ(ms_cms_cert_serial(server).len, 1);
	CHECK_EQ(ms_cms_cert_serial(server).p[0], 2);
	iss = ms_cms_cert_issuer(server);
	sub = ms_cms_cert_subject_name(root);
	CHECK_EQ(iss.len, sub.len);
	CHECK_MEM_EQ(iss.p, sub.p, sub.len);
	ms_cms_cert_subject(server, text, sizeof(text));
	CHECK_STR_EQ(text, "CN=mldsa44");
	ms_cms_cert_subject(root, text, sizeof(text));
	CHECK_STR_EQ(text, "CN=Root ml-dsa-44");
	/* The decoded PEM parses as DER to the same certificate. */
	ms_cms_cert_der(server, &der);
	CHECK_ERR(ms_cms_cert_parse(der.p, der.len, &again), MS_OK);
	CHECK_EQ(again->mldsa_pk.len, server->mldsa_pk.len);
	CHECK_MEM_EQ(again->mldsa_pk.p, server->mldsa_pk.p, server->mldsa_pk.len);
	CHECK_MEM_EQ(ms_cms_cert_skid(again).p, sha1, sizeof(sha1));
	ms_cms_cert_free(again);
	ms_cms_cert_free(root);
	ms_cms_cert_free(server);
}

/* The certificates' own ML-DSA signatures (OpenSSL's): the root's by itself, the server's by the root. */
MS_TEST(mldsa_cert_signatures_verify)
{
	struct ms_cms_cert *root = cms_cert(ROOT), *server = cms_cert(SERVER);
	uint8_t *sig = malloc(server->sig_value.len);

	CHECK(sig != NULL);
	CHECK_EQ(server->sig_value.len, ms_cms_mldsa_sig_len(MS_MLDSA_44));
	CHECK_ERR(ms_cms_cert_verify(root, MS_HASH_SHA512, root->tbs.p, root->tbs.len,
				     root->sig_value.p, root->sig_value.len), MS_OK);
	CHECK_ERR(ms_cms_cert_verify(root, MS_HASH_SHA512, server->tbs.p, server->tbs.len,
				     server->sig_value.p, server->sig_value.len), MS_OK);
	/* Not by the server's own key; nor with a bit changed; nor over the root's tbs. */
	CHECK_ERR(ms_cms_cert_verify(server, MS_HASH_SHA512, server->tbs.p, server->tbs.len,
				     server->sig_value.p, server->sig_value.len), MS_E_MISMATCH);
	memcpy(sig, server->sig_value.p, server->sig_value.len);
	sig[100] ^= 0x04;
	CHECK_ERR(ms_cms_cert_verify(root, MS_HASH_SHA512, server->tbs.p, server->tbs.len, sig,
				     server->sig_value.len), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_verify(root, MS_HASH_SHA512, root->tbs.p, root->tbs.len,
				     server->sig_value.p, server->sig_value.len), MS_E_MISMATCH);
	free(sig);
	ms_cms_cert_free(root);
	ms_cms_cert_free(server);
}

MS_TEST(mldsa_cert_match_spki)
{
	struct ms_cms_cert *root = cms_cert(ROOT), *server = cms_cert(SERVER);
	struct ms_cms_cert *rsa = cms_cert("rsa2048.x509.der");
	struct ms_span der, spki;
	uint8_t *copy;

	ms_cms_cert_der(server, &der);
	spki = spki_in(der);
	CHECK_ERR(ms_cms_cert_match_spki(server, spki.p, spki.len), MS_OK);
	CHECK_ERR(ms_cms_cert_match_spki(root, spki.p, spki.len), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_cert_match_spki(rsa, spki.p, spki.len), MS_E_MISMATCH);
	copy = malloc(spki.len);
	CHECK(copy != NULL);
	memcpy(copy, spki.p, spki.len);
	copy[spki.len - 1] ^= 1;	/* the last key byte */
	CHECK_ERR(ms_cms_cert_match_spki(server, copy, spki.len), MS_E_MISMATCH);
	copy[spki.len - 1] ^= 1;
	copy[16] = 0x12;		/* id-ml-dsa-65: that set's key is longer */
	CHECK_ERR(ms_cms_cert_match_spki(server, copy, spki.len), MS_E_MALFORMED);
	free(copy);
	ms_cms_cert_free(rsa);
	ms_cms_cert_free(root);
	ms_cms_cert_free(server);
}

/* OpenSSL's ML-DSA-65 and -87 public keys: the SPKI of each set parses, with the set's length. */
MS_TEST(mldsa_cert_spki_sets)
{
	static const char *const names[] = {
		"mldsa/testmldsa44pub.pem", "mldsa/testmldsa65pub.pem", "mldsa/testmldsa87pub.pem",
	};
	static const enum ms_mldsa_set sets[] = { MS_MLDSA_44, MS_MLDSA_65, MS_MLDSA_87 };

	for (size_t i = 0; i < 3; i++) {
		size_t len = 0, b64_len;
		uint8_t *pem = cms_read(names[i], &len), *der = malloc(len);
		enum ms_mldsa_set set = MS_MLDSA_NONE;
		struct ms_span pk = { NULL, 0 };
		char *b64 = malloc(len + 1);
		size_t der_len = 0;

		CHECK(der != NULL && b64 != NULL);
		/* The base64 between the armour lines, decoded by mbedTLS. */
		memcpy(b64, pem, len);
		b64[len] = '\0';
		CHECK(strstr(b64, "-----END") != NULL);
		*strstr(b64, "-----END") = '\0';
		b64_len = strlen(b64) - strlen("-----BEGIN PUBLIC KEY-----\n");
		CHECK(mbedtls_base64_decode(der, len, &der_len,
					    (const unsigned char *)b64 +
					    strlen("-----BEGIN PUBLIC KEY-----\n"), b64_len) == 0);
		CHECK_ERR(ms_cert_mldsa_spki((struct ms_span){ der, der_len }, &set, &pk), MS_OK);
		CHECK_EQ(set, sets[i]);
		CHECK_EQ(pk.len, ms_cms_mldsa_pk_len(sets[i]));
		/* Every shorter prefix is refused, as malformed or as not ML-DSA. */
		for (size_t n = 0; n < der_len; n++) {
			CHECK(ms_cert_mldsa_spki((struct ms_span){ der, n }, &set, &pk) != MS_OK);
		}
		free(b64);
		free(der);
		free(pem);
	}
}

/* Every prefix of the certificate is refused, and so is a byte after it. */
MS_TEST(mldsa_cert_truncated_and_trailing)
{
	struct ms_cms_cert *server = cms_cert(SERVER), *cert = NULL;
	struct ms_span der;
	uint8_t *copy;

	ms_cms_cert_der(server, &der);
	copy = malloc(der.len + 1);
	CHECK(copy != NULL);
	memcpy(copy, der.p, der.len);
	for (size_t n = 1; n < der.len; n += 7) {
		CHECK(ms_cms_cert_parse(copy, n, &cert) != MS_OK);
		CHECK(cert == NULL);
	}
	copy[der.len] = 0;
	CHECK_ERR(ms_cms_cert_parse(copy, der.len + 1, &cert), MS_E_MALFORMED);
	CHECK(cert == NULL);
	free(copy);
	ms_cms_cert_free(server);
}
