// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/cms/cert.c: certificate parsing, SKID, subject, signer id. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_cms.h"

static const struct {
	const char *name;
	enum ms_key_type type;
	enum ms_ec_curve curve;
	size_t bits;
	const char *skid;	/* NULL: none */
	const char *serial;
} certs[] = {
	{ "rsa2048", MS_KEY_RSA, MS_EC_NONE, 2048,
	  "20C20C4462D05D482B239D99693FC50C12B217AA", "008C95FFF63935D2C6A0" },
	{ "rsa3072", MS_KEY_RSA, MS_EC_NONE, 3072,
	  "74566C9B1F67E6592F50B1BA25E14F2D20910AB3", "14BC27AEDB33E7DADA" },
	{ "rsa4096", MS_KEY_RSA, MS_EC_NONE, 4096,
	  "775F0E7FA2170B1C3EC6787E0BF2D76BFBC358D8", "00A23F05086847F617AA" },
	{ "ec256", MS_KEY_EC, MS_EC_P256, 256,
	  "FBF54D9B724A146394E00135E14C96802F88CA07", "7D6391DEDAFFD8EE01" },
	{ "ec384", MS_KEY_EC, MS_EC_P384, 384,
	  "0B88E06258413A9BB5C97ED0E1B872C63E153FED", "71868DD783B875051B" },
	{ "ec521", MS_KEY_EC, MS_EC_P521, 521,
	  "9CEA7B66D717D340331FE5F6F3D84C36572B6CBF", "5946C3B65A12C545C7" },
	{ "other-rsa2048", MS_KEY_RSA, MS_EC_NONE, 2048,
	  "E1617E8F7FA398C38891B5B8E516E983BF3EC4AA", "3C080EB939FABDC340" },
	{ "rsa2048-noskid", MS_KEY_RSA, MS_EC_NONE, 2048, NULL, "07" },
};

#define N_CERTS (sizeof(certs) / sizeof(certs[0]))

static char *
data_name(const char *base, const char *ext)
{
	static char name[128];

	snprintf(name, sizeof(name), "%s%s", base, ext);
	return name;
}

MS_TEST(cms_cert_parse_der_key_skid_serial)
{
	for (size_t i = 0; i < N_CERTS; i++) {
		struct ms_cms_cert *cert = cms_cert(data_name(certs[i].name, ".x509.der"));
		enum ms_key_type type = (enum ms_key_type)0;
		enum ms_ec_curve curve = MS_EC_P521;
		uint8_t want[64];
		size_t bits = 0, n;

		ms_cms_cert_key(cert, &type, &curve, &bits);
		CHECK(type == certs[i].type);
		CHECK(curve == certs[i].curve);
		CHECK(bits == certs[i].bits);
		ms_cms_cert_key(cert, NULL, NULL, NULL);
		CHECK(ms_cms_cert_has_skid(cert) == (certs[i].skid != NULL));
		if (certs[i].skid != NULL) {
			n = ms_test_hex(certs[i].skid, want, sizeof(want));
			CHECK(ms_der_span_eq(cert->skid, want, n));
		}
		n = ms_test_hex(certs[i].serial, want, sizeof(want));
		CHECK(ms_der_span_eq(cert->serial, want, n));
		CHECK(cert->issuer.len > 2 && cert->issuer.p[0] == DER_SEQUENCE);
		ms_cms_cert_free(cert);
	}
}

/* PEM gives the same certificate as DER. */
MS_TEST(cms_cert_parse_pem_equals_der)
{
	for (size_t i = 0; i < N_CERTS; i++) {
		struct ms_cms_cert *der, *pem;
		uint8_t a[512], b[512];
		size_t la = 0, lb = 0;

		if (strcmp(certs[i].name, "rsa2048-noskid") == 0) {
			continue;	/* no PEM copy committed */
		}
		der = cms_cert(data_name(certs[i].name, ".x509.der"));
		pem = cms_cert(data_name(certs[i].name, ".x509.pem"));
		CHECK_ERR(ms_cms_signer_id_encode(der, false, a, sizeof(a), &la), MS_OK);
		CHECK_ERR(ms_cms_signer_id_encode(pem, false, b, sizeof(b), &lb), MS_OK);
		CHECK(la == lb && memcmp(a, b, la) == 0);
		CHECK_ERR(ms_cms_signer_id_encode(der, true, a, sizeof(a), &la), MS_OK);
		CHECK_ERR(ms_cms_signer_id_encode(pem, true, b, sizeof(b), &lb), MS_OK);
		CHECK(la == lb && memcmp(a, b, la) == 0);
		CHECK(der->crt != NULL && pem->crt != NULL);
		ms_cms_cert_free(der);
		ms_cms_cert_free(pem);
	}
}

/* Like certs/signing_key.pem: a private key block, then the certificate. */
MS_TEST(cms_cert_parse_pem_after_key)
{
	size_t klen = 0, clen = 0;
	uint8_t *key = cms_read("rsa2048.key.pem", &klen);
	uint8_t *crt = cms_read("rsa2048.x509.pem", &clen);
	uint8_t *both = malloc(klen + clen);
	struct ms_cms_cert *cert = NULL;
	char subject[128];

	CHECK(both != NULL);
	memcpy(both, key, klen);
	memcpy(both + klen, crt, clen);
	CHECK_ERR(ms_cms_cert_parse(both, klen + clen, &cert), MS_OK);
	ms_cms_cert_subject(cert, subject, sizeof(subject));
	CHECK_STR_EQ(subject, "O=modsign test, CN=TEST-ONLY modsign rsa2048");
	ms_cms_cert_free(cert);
	/* The key alone holds no certificate. */
	CHECK_ERR(ms_cms_cert_parse(key, klen, &cert), MS_E_MALFORMED);
	CHECK(cert == NULL);
	ms_wipe(both, klen + clen);
	ms_wipe(key, klen);
	free(both);
	free(key);
	free(crt);
}

MS_TEST(cms_cert_subject_text)
{
	struct ms_cms_cert *cert = cms_cert("ec384.x509.der");
	char out[64];

	ms_cms_cert_subject(cert, out, sizeof(out));
	CHECK_STR_EQ(out, "O=modsign test, CN=TEST-ONLY modsign ec384");
	memset(out, 'x', sizeof(out));
	ms_cms_cert_subject(cert, out, 5);
	CHECK_STR_EQ(out, "O=mo");
	CHECK(out[5] == 'x');
	ms_cms_cert_subject(cert, out, 1);
	CHECK(out[0] == '\0');
	out[0] = 'y';
	ms_cms_cert_subject(cert, out, 0);
	CHECK(out[0] == 'y');
	ms_cms_cert_subject(cert, NULL, 10);
	ms_cms_cert_free(cert);
	cert = cms_cert("rsa2048-noskid.x509.der");
	ms_cms_cert_subject(cert, out, sizeof(out));
	CHECK_STR_EQ(out, "CN=TEST-ONLY modsign key without SKID");
	ms_cms_cert_free(cert);
}

MS_TEST(cms_cert_parse_garbage)
{
	static const char *const junk[] = {
		"x",
		"not a certificate",
		"-----BEGIN CERTIFICATE-----\n",
		("-----BEGIN CERTIFICATE-----\nAAAA\n"
		 "-----END CERTIFICATE-----\n"),
	};
	struct ms_cms_cert *cert = (struct ms_cms_cert *)&cert;
	uint8_t buf[64];

	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		CHECK(ms_cms_cert_parse((const uint8_t *)junk[i], strlen(junk[i]), &cert) ==
		      MS_E_MALFORMED);
		CHECK(cert == NULL);
	}
	CHECK(ms_cms_cert_parse(buf, ms_test_hex("30 03 02 01 01", buf, sizeof(buf)), &cert) ==
	      MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_parse(buf, 0, &cert), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_parse(NULL, 10, &cert), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_parse(buf, 5, NULL), MS_E_ARG);
	ms_cms_cert_free(NULL);
}

/* Every truncation and one trailing byte of a DER certificate. */
MS_TEST(cms_cert_parse_truncated_and_trailing)
{
	size_t len = 0;
	uint8_t *p = cms_read("ec256.x509.der", &len);
	uint8_t *q = malloc(len + 1);
	struct ms_cms_cert *cert = NULL;

	CHECK(q != NULL);
	for (size_t n = 0; n < len; n++) {
		uint8_t *t = malloc(n + (n == 0));	/* exactly sized, for ASan */

		CHECK(t != NULL);
		memcpy(t, p, n);
		CHECK_ERR(ms_cms_cert_parse(t, n, &cert), MS_E_MALFORMED);
		CHECK(cert == NULL);
		free(t);
	}
	memcpy(q, p, len);
	q[len] = 0x00;
	CHECK_ERR(ms_cms_cert_parse(q, len + 1, &cert), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_cert_parse(q, len, &cert), MS_OK);
	ms_cms_cert_free(cert);
	free(p);
	free(q);
}

MS_TEST(cms_cert_unsupported_keys)
{
	static const char *const names[] = { "cms/ed25519.x509.der", "cms/secp256k1.x509.der" };
	struct ms_cms_cert *cert = NULL;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t len = 0;
		uint8_t *p = cms_read(names[i], &len);

		CHECK_ERR(ms_cms_cert_parse(p, len, &cert), MS_E_UNSUPPORTED);
		CHECK(cert == NULL);
		free(p);
	}
}

/*
 * Certificates signed with SHA-3 (what a kernel configured for SHA-3 module
 * signatures generates as signing_key.x509): mbedTLS 2.28 knows none of
 * these OIDs; the key, serial, SKID and issuer must come out as for any
 * other, and the sid bytes be the certificate's own.
 */
MS_TEST(cms_cert_sha3_signed)
{
	static const struct {
		const char *file;
		enum ms_key_type type;
		const char *serial;
		const char *skid;
		const char *key;
	} v[] = {
		{ "cms/rsa2048-sha3sig.x509.pem", MS_KEY_RSA, "05A3",
		  "20C20C4462D05D482B239D99693FC50C12B217AA", "rsa2048" },
		{ "cms/ec384-sha3sig.x509.der", MS_KEY_EC, "05A4",
		  "0B88E06258413A9BB5C97ED0E1B872C63E153FED", "ec384" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct ms_cms_cert *cert = cms_cert(v[i].file);
		struct ms_cms_cert *plain = cms_cert(data_name(v[i].key, ".x509.der"));
		enum ms_key_type type = (enum ms_key_type)0;
		uint8_t want[64], sid[512];
		size_t n, sid_len = 0;

		ms_cms_cert_key(cert, &type, NULL, NULL);
		CHECK(type == v[i].type);
		n = ms_test_hex(v[i].serial, want, sizeof(want));
		CHECK(ms_der_span_eq(cert->serial, want, n));
		n = ms_test_hex(v[i].skid, want, sizeof(want));
		CHECK(ms_der_span_eq(cert->skid, want, n));
		/* Self-signed: the issuer is the subject, as the certificate writes it. */
		CHECK(ms_der_span_eq(cert->issuer, ms_cms_cert_subject_name(cert).p,
				     ms_cms_cert_subject_name(cert).len));
		CHECK_ERR(ms_cms_signer_id_encode(cert, false, sid, sizeof(sid), &sid_len), MS_OK);
		CHECK(sid_len > cert->issuer.len + cert->serial.len);
		/* The same key as the plain certificate of that key. */
		CHECK(ms_der_span_eq(cert->skid, plain->skid.p, plain->skid.len));
		ms_cms_cert_free(plain);
		ms_cms_cert_free(cert);
	}
}

/* SHA3-224 (no kernel takes it), or the two signature algorithms differing: refused. */
MS_TEST(cms_cert_sha3_signed_refused)
{
	/* OID TLV of ecdsa-with-SHA3-*, but for its last byte (0x0b: SHA3-384) */
	static const uint8_t ecdsa_sha3[] = {
		0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x03,
	};
	struct ms_cms_cert *cert = NULL;
	size_t len = 0, i, hits = 0;
	uint8_t *p = cms_read("cms/rsa2048-sha3-224sig.x509.der", &len);

	CHECK_ERR(ms_cms_cert_parse(p, len, &cert), MS_E_UNSUPPORTED);
	CHECK(cert == NULL);
	free(p);
	/* ec384-sha3sig with tbsCertificate's signature made ecdsa-with-SHA3-512. */
	p = cms_read("cms/ec384-sha3sig.x509.der", &len);
	for (i = 0; i + sizeof(ecdsa_sha3) < len; i++) {
		if (memcmp(p + i, ecdsa_sha3, sizeof(ecdsa_sha3)) == 0 &&
		    p[i + sizeof(ecdsa_sha3)] == 0x0b) {
			if (hits++ == 0) {
				p[i + sizeof(ecdsa_sha3)] = 0x0c;
			}
		}
	}
	CHECK(hits == 2);
	CHECK_ERR(ms_cms_cert_parse(p, len, &cert), MS_E_UNSUPPORTED);
	CHECK(cert == NULL);
	free(p);
}

MS_TEST(cms_cert_too_big)
{
	uint8_t *p = calloc(1, MS_CMS_CERT_MAX + 1);
	struct ms_cms_cert *cert = NULL;

	CHECK(p != NULL);
	p[0] = 0x30;
	CHECK_ERR(ms_cms_cert_parse(p, MS_CMS_CERT_MAX + 1, &cert), MS_E_MALFORMED);
	free(p);
}

/* ms_cert_find_skid() over hand-built Extensions. */
static ms_err
find_skid_hex(const char *hex, struct ms_span *skid)
{
	static uint8_t buf[256];
	size_t n = ms_test_hex(hex, buf, sizeof(buf));

	return ms_cert_find_skid((struct ms_span){ buf, n }, skid);
}

MS_TEST(cms_cert_find_skid)
{
	struct ms_span skid = { NULL, 0 };

	/* basicConstraints critical, then SKID 01 02 03 */
	CHECK_ERR(find_skid_hex("30 1c 30 0c 06 03 55 1d 13 01 01 ff 04 02 30 00"
			    " 30 0c 06 03 55 1d 0e 04 05 04 03 01 02 03", &skid), MS_OK);
	CHECK(skid.len == 3 && skid.p[0] == 1 && skid.p[2] == 3);
	/* an empty key identifier names nothing */
	CHECK(find_skid_hex("30 0e 30 0c 06 03 55 1d 0e 01 01 ff 04 02 04 00", &skid) ==
	      MS_E_MALFORMED);
	/* SKID marked critical: odd, but allowed */
	CHECK(find_skid_hex("30 0f 30 0d 06 03 55 1d 0e 01 01 ff 04 03 04 01 aa", &skid) ==
	      MS_OK);
	CHECK(skid.len == 1 && skid.p[0] == 0xaa);
	/* absent */
	CHECK_ERR(find_skid_hex("30 0e 30 0c 06 03 55 1d 13 01 01 ff 04 02 30 00", &skid), MS_OK);
	CHECK(skid.len == 0);
	/* twice */
	CHECK_ERR(find_skid_hex("30 18 30 0a 06 03 55 1d 0e 04 03 04 01 01"
			    " 30 0a 06 03 55 1d 0e 04 03 04 01 02", &skid), MS_E_MALFORMED);
	/* KeyIdentifier not an OCTET STRING, or with bytes after it */
	CHECK_ERR(find_skid_hex("30 0b 30 09 06 03 55 1d 0e 04 02 05 00", &skid), MS_E_MALFORMED);
	CHECK(find_skid_hex("30 0c 30 0a 06 03 55 1d 0e 04 03 04 00 00", &skid) ==
	      MS_E_MALFORMED);
	/* extnValue missing; bytes after the list; indefinite length */
	CHECK_ERR(find_skid_hex("30 07 30 05 06 03 55 1d 0e", &skid), MS_E_MALFORMED);
	CHECK(find_skid_hex("30 0c 30 0a 06 03 55 1d 0e 04 03 04 01 01 00", &skid) ==
	      MS_E_MALFORMED);
	CHECK(find_skid_hex("30 80 30 09 06 03 55 1d 0e 04 02 04 00 00 00", &skid) ==
	      MS_E_MALFORMED);
}

struct sid_ctx {
	const struct ms_cms_cert *cert;
	bool use_skid;
};

static ms_err
sid_fn(const void *vctx, uint8_t *out, size_t cap, size_t *out_len)
{
	const struct sid_ctx *c = vctx;

	return ms_cms_signer_id_encode(c->cert, c->use_skid, out, cap, out_len);
}

/* Known answers from openssl x509 output, through every capacity. */
MS_TEST(cms_cert_signer_id_kat)
{
	struct ms_cms_cert *cert = cms_cert("rsa2048.x509.der");
	struct sid_ctx c = { cert, true };
	uint8_t want[128];
	size_t n;

	n = ms_test_hex("80 14 20C20C4462D05D482B239D99693FC50C12B217AA", want, sizeof(want));
	cms_every_cap(sid_fn, &c, want, n);
	/*
	 * SEQUENCE { Name { SET { O=modsign test } SET { CN=TEST-ONLY modsign
	 * rsa2048 } }, INTEGER 00 8c 95 ff f6 39 35 d2 c6 a0 }
	 */
	n = ms_test_hex("30 49 30 3b 31 15 30 13 06 03 55 04 0a 0c 0c"
			" 6d 6f 64 73 69 67 6e 20 74 65 73 74"
			" 31 22 30 20 06 03 55 04 03 0c 19"
			" 54 45 53 54 2d 4f 4e 4c 59 20 6d 6f 64 73 69 67 6e 20"
			" 72 73 61 32 30 34 38"
			" 02 0a 00 8c 95 ff f6 39 35 d2 c6 a0", want, sizeof(want));
	c.use_skid = false;
	cms_every_cap(sid_fn, &c, want, n);
	ms_cms_cert_free(cert);
}

MS_TEST(cms_cert_signer_id_noskid)
{
	struct ms_cms_cert *cert = cms_cert("rsa2048-noskid.x509.der");
	uint8_t out[256];
	size_t len = 0;

	CHECK(!ms_cms_cert_has_skid(cert));
	CHECK(!ms_cms_cert_has_skid(NULL));
	CHECK_ERR(ms_cms_signer_id_encode(cert, true, out, sizeof(out), &len), MS_E_NOTFOUND);
	CHECK_ERR(ms_cms_signer_id_encode(cert, true, NULL, 0, &len), MS_E_NOTFOUND);
	CHECK_ERR(ms_cms_signer_id_encode(cert, false, out, sizeof(out), &len), MS_OK);
	CHECK(out[0] == 0x30 && out[len - 3] == 0x02 && out[len - 2] == 0x01 &&
	      out[len - 1] == 0x07);
	CHECK_ERR(ms_cms_signer_id_encode(NULL, false, out, sizeof(out), &len), MS_E_ARG);
	CHECK_ERR(ms_cms_signer_id_encode(cert, false, out, sizeof(out), NULL), MS_E_ARG);
	ms_cms_cert_free(cert);
}

/* Concatenates the named tests/data files into one malloc'd buffer. */
static uint8_t *
cat_data(const char *const *names, size_t n, size_t *len)
{
	uint8_t *all = NULL;

	*len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t l = 0;
		uint8_t *one = cms_read(names[i], &l);
		uint8_t *grown = realloc(all, *len + l);

		CHECK(grown != NULL);
		all = grown;
		memcpy(all + *len, one, l);
		*len += l;
		free(one);
	}
	return all;
}

/* A PEM bundle (the kernel's trusted keys): every certificate, in order. */
MS_TEST(cms_cert_parse_all_bundle)
{
	static const char *const names[] = {
		"rsa2048.x509.pem", "ec256.x509.pem", "rsa4096.x509.pem",
	};
	static const char *const subjects[] = {
		"O=modsign test, CN=TEST-ONLY modsign rsa2048",
		"O=modsign test, CN=TEST-ONLY modsign ec256",
		"O=modsign test, CN=TEST-ONLY modsign rsa4096",
	};
	struct ms_cms_cert *out[4] = { NULL };
	char subject[128];
	size_t len = 0, n = 0;
	uint8_t *all = cat_data(names, 3, &len);

	CHECK_ERR(ms_cms_cert_parse_all(all, len, out, 4, &n), MS_OK);
	CHECK_EQ(n, 3);
	for (size_t i = 0; i < n; i++) {
		ms_cms_cert_subject(out[i], subject, sizeof(subject));
		CHECK_STR_EQ(subject, subjects[i]);
		ms_cms_cert_free(out[i]);
	}
	/* Room for two: refused whole, nothing left to free. */
	out[0] = out[1] = NULL;
	CHECK_ERR(ms_cms_cert_parse_all(all, len, out, 2, &n), MS_E_NOSPACE);
	CHECK_EQ(n, 0);
	CHECK(out[0] == NULL);
	free(all);
}

/*
 * ML-DSA certificates in a bundle (a 7.x kernel's trusted keys): each block
 * is parsed on its own, so they keep their place among RSA and EC ones.
 */
MS_TEST(cms_cert_parse_all_bundle_mldsa)
{
	static const char *const names[] = {
		"rsa2048.x509.pem", "mldsa/mldsa65.x509.pem", "ec256.x509.pem",
		"mldsa/mldsa87.x509.pem",
	};
	static const enum ms_key_type types[] = { MS_KEY_RSA, MS_KEY_MLDSA, MS_KEY_EC, MS_KEY_MLDSA };
	static const size_t bits[] = { 2048, 0, 256, 0 };
	struct ms_cms_cert *out[5] = { NULL }, *one = NULL;
	enum ms_key_type type = 0;
	size_t b = 0;
	size_t len = 0, n = 0;
	uint8_t *all = cat_data(names, 4, &len);

	CHECK_ERR(ms_cms_cert_parse_all(all, len, out, 5, &n), MS_OK);
	CHECK_EQ(n, 4);
	for (size_t i = 0; i < n; i++) {
		ms_cms_cert_key(out[i], &type, NULL, &b);
		CHECK_EQ(type, types[i]);
		if (bits[i] != 0) {
			CHECK_EQ(b, bits[i]);
		}
		ms_cms_cert_free(out[i]);
	}
	/* One certificate wanted (the signer's <x509>): a bundle led by ML-DSA is refused. */
	free(all);
	all = cat_data(names + 1, 3, &len);
	CHECK_ERR(ms_cms_cert_parse(all, len, &one), MS_E_UNSUPPORTED);
	CHECK(one == NULL);
	free(all);
}

/* DER is one certificate; one broken PEM block fails the whole bundle. */
MS_TEST(cms_cert_parse_all_der_and_broken)
{
	struct ms_cms_cert *out[4] = { NULL };
	size_t len = 0, n = 0;
	uint8_t *der = cms_read("ec384.x509.der", &len);
	uint8_t *pem = NULL, *grown = NULL;
	static const char *const names[] = { "rsa2048.x509.pem", "ec256.x509.pem" };
	static const char junk[] = "-----BEGIN CERTIFICATE-----\nMAMCAQA=\n-----END CERTIFICATE-----\n";

	CHECK_ERR(ms_cms_cert_parse_all(der, len, out, 4, &n), MS_OK);
	CHECK_EQ(n, 1);
	ms_cms_cert_free(out[0]);
	free(der);
	pem = cat_data(names, 2, &len);
	/* A third block that is no certificate. */
	grown = realloc(pem, len + sizeof(junk) - 1);
	CHECK(grown != NULL);
	pem = grown;
	memcpy(pem + len, junk, sizeof(junk) - 1);
	len += sizeof(junk) - 1;
	CHECK(ms_cms_cert_parse_all(pem, len, out, 4, &n) != MS_OK);
	CHECK_EQ(n, 0);
	free(pem);
}
