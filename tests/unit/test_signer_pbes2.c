// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/signer/pbes2.c: PKCS#8 EncryptedPrivateKeyInfo with
 * PBES2. Encrypted keys are built here from the TEST-ONLY
 * tests/data/rsa2048.key.pem (PBKDF2 and CBC from mbedTLS, the DER by a small
 * writer below), one field changed at a time; the file OpenSSL wrote
 * (tests/data/rsa2048.pkcs8-aes.key.pem) is read and decrypted too.
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/cipher.h>
#include <mbedtls/md.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>

#include "../../src/cms/mbedtls_compat.h"
#include "../../src/signer/signer_internal.h"
#include "test.h"

#define PASS "test-passphrase"		/* tests/lib/common.sh KEY_PASS */
#define WRONG_PASS "wrong-passphrase"

/* A growing DER buffer: content first, then wrapped in a tag. */
struct der {
	uint8_t b[4096];
	size_t n;
};

static void
put(struct der *d, const uint8_t *p, size_t n)
{
	CHECK(n <= sizeof(d->b) - d->n);
	memcpy(d->b + d->n, p, n);
	d->n += n;
}

static void
put_hex(struct der *d, const char *hex)
{
	uint8_t tmp[1024];
	size_t n = ms_test_hex(hex, tmp, sizeof(tmp));

	put(d, tmp, n);
}

/* @out gets tag, DER length and the content of @c. */
static void
put_tlv(struct der *out, uint8_t tag, const uint8_t *c, size_t n)
{
	uint8_t h[4] = { tag, 0, 0, 0 };
	size_t hn;

	if (n < 0x80) {
		h[1] = (uint8_t)n;
		hn = 2;
	} else if (n < 0x100) {
		h[1] = 0x81;
		h[2] = (uint8_t)n;
		hn = 3;
	} else {
		CHECK(n < 0x10000);
		h[1] = 0x82;
		h[2] = (uint8_t)(n >> 8);
		h[3] = (uint8_t)n;
		hn = 4;
	}
	put(out, h, hn);
	put(out, c, n);
}

/* Each part as hex, already a whole TLV (or empty where it is optional). */
struct parts {
	const char *pbes2_oid;
	const char *kdf_oid;
	const char *salt;
	const char *iter;
	const char *key_len;
	const char *prf;
	const char *enc_oid;
	const char *iv;
	const char *after_pbkdf2;	/* bytes inside PBKDF2-params after the prf */
	const char *after_epki;		/* bytes after the outer SEQUENCE */
	const uint8_t *data;		/* encryptedData content */
	size_t data_len;
};

static const uint8_t zero_data[32];

static const struct parts good = {
	.pbes2_oid = "06 09 2a 86 48 86 f7 0d 01 05 0d",
	.kdf_oid = "06 09 2a 86 48 86 f7 0d 01 05 0c",
	.salt = "04 08 01 02 03 04 05 06 07 08",
	.iter = "02 02 08 00",
	.key_len = "",
	.prf = "30 0c 06 08 2a 86 48 86 f7 0d 02 09 05 00",		/* hmacWithSHA256, NULL */
	.enc_oid = "06 09 60 86 48 01 65 03 04 01 2a",		/* aes256-CBC */
	.iv = "04 10 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff",
	.after_pbkdf2 = "",
	.after_epki = "",
	.data = zero_data,
	.data_len = sizeof(zero_data),
};

static void
build(const struct parts *p, struct der *out)
{
	struct der pbkdf2 = { .n = 0 }, kdf = { .n = 0 }, enc = { .n = 0 }, params = { .n = 0 };
	struct der alg = { .n = 0 }, epki = { .n = 0 };

	put_hex(&pbkdf2, p->salt);
	put_hex(&pbkdf2, p->iter);
	put_hex(&pbkdf2, p->key_len);
	put_hex(&pbkdf2, p->prf);
	put_hex(&pbkdf2, p->after_pbkdf2);
	put_hex(&kdf, p->kdf_oid);
	put_tlv(&kdf, 0x30, pbkdf2.b, pbkdf2.n);
	put_hex(&enc, p->enc_oid);
	put_hex(&enc, p->iv);
	put_tlv(&params, 0x30, kdf.b, kdf.n);
	put_tlv(&params, 0x30, enc.b, enc.n);
	put_hex(&alg, p->pbes2_oid);
	put_tlv(&alg, 0x30, params.b, params.n);
	put_tlv(&epki, 0x30, alg.b, alg.n);
	put_tlv(&epki, 0x04, p->data, p->data_len);
	out->n = 0;
	put_tlv(out, 0x30, epki.b, epki.n);
	put_hex(out, p->after_epki);
}

/* Build @p into @d and parse it; @out's spans point into @d. */
static ms_err
parse_parts(const struct parts *p, struct der *d, struct ms_pbes2 *out, char *why, size_t cap)
{
	build(p, d);
	return ms_signer_pbes2_parse(d->b, d->n, out, why, cap);
}

/* One changed part must give @want and a reason containing @text. */
static void
expect(const struct parts *p, ms_err want, const char *text)
{
	struct ms_pbes2 out;
	struct der d;
	char why[512] = "";
	ms_err err = parse_parts(p, &d, &out, why, sizeof(why));

	if (err != want || (text != NULL && strstr(why, text) == NULL)) {
		fprintf(stderr, "got %s \"%s\", want %s \"%s\"\n", ms_err_str(err), why,
			ms_err_str(want), text != NULL ? text : "");
		exit(1);
	}
}

MS_TEST(pbes2_parse_fields)
{
	struct der d;
	struct ms_pbes2 out;
	char why[256];

	CHECK_ERR(parse_parts(&good, &d, &out, why, sizeof(why)), MS_OK);
	CHECK(out.prf == MS_PBES2_HMAC_SHA256);
	CHECK(out.cipher == MS_PBES2_AES256_CBC);
	CHECK(out.iterations == 2048);
	CHECK(out.salt.len == 8 && out.salt.p[0] == 1 && out.salt.p[7] == 8);
	CHECK(out.iv.len == 16 && out.iv.p[15] == 0xff);
	CHECK(out.data.len == 32);
}

MS_TEST(pbes2_parse_optional_fields)
{
	struct der d;
	struct parts p = good;
	struct ms_pbes2 out;
	char why[256];

	/* prf absent: the DEFAULT, hmacWithSHA1 (RFC 8018, A.2). */
	p.prf = "";
	CHECK_ERR(parse_parts(&p, &d, &out, why, sizeof(why)), MS_OK);
	CHECK(out.prf == MS_PBES2_HMAC_SHA1);
	/* prf without its NULL, as some writers leave it. */
	p.prf = "30 0a 06 08 2a 86 48 86 f7 0d 02 0b";
	CHECK_ERR(parse_parts(&p, &d, &out, why, sizeof(why)), MS_OK);
	CHECK(out.prf == MS_PBES2_HMAC_SHA512);
	/* keyLength equal to the cipher's. */
	p.key_len = "02 01 20";
	CHECK_ERR(parse_parts(&p, &d, &out, why, sizeof(why)), MS_OK);
	p.key_len = "02 01 10";
	p.enc_oid = "06 09 60 86 48 01 65 03 04 01 02";	/* aes128-CBC */
	CHECK_ERR(parse_parts(&p, &d, &out, why, sizeof(why)), MS_OK);
	CHECK(out.cipher == MS_PBES2_AES128_CBC);
	/* DES-EDE3-CBC: an 8-byte IV, whole 8-byte blocks. */
	p = good;
	p.enc_oid = "06 08 2a 86 48 86 f7 0d 03 07";
	p.iv = "04 08 01 02 03 04 05 06 07 08";
	p.data_len = 24;
	CHECK_ERR(parse_parts(&p, &d, &out, why, sizeof(why)), MS_OK);
	CHECK(out.cipher == MS_PBES2_DES_EDE3_CBC);
	/* The ceiling itself is accepted. */
	p = good;
	p.iter = "02 03 4c 4b 40";	/* 5000000 */
	CHECK_ERR(parse_parts(&p, &d, &out, why, sizeof(why)), MS_OK);
	CHECK(out.iterations == MS_PBES2_ITER_MAX);
}

MS_TEST(pbes2_parse_not_ours)
{
	struct der d;
	struct parts p = good;
	struct ms_pbes2 out;
	uint8_t plain[] = { 0x30, 0x03, 0x02, 0x01, 0x00 };

	/* PKCS#12 PBE (pbeWithSHAAnd3-KeyTripleDES-CBC): mbedTLS reads it. */
	p.pbes2_oid = "06 0a 2a 86 48 86 f7 0d 01 0c 01 03";
	CHECK_ERR(parse_parts(&p, &d, &out, NULL, 0), MS_E_NOTFOUND);
	/* A plain key (SEQUENCE { INTEGER ... }), nothing, garbage. */
	CHECK_ERR(ms_signer_pbes2_parse(plain, sizeof(plain), &out, NULL, 0), MS_E_NOTFOUND);
	CHECK_ERR(ms_signer_pbes2_parse(NULL, 0, &out, NULL, 0), MS_E_NOTFOUND);
	CHECK(ms_signer_pbes2_parse((const uint8_t *)"-----BEGIN", 10, &out, NULL, 0) ==
	      MS_E_NOTFOUND);
}

MS_TEST(pbes2_parse_iterations)
{
	struct parts p = good;

	p.iter = "02 03 4c 4b 41";		/* 5000001 */
	expect(&p, MS_E_UNSUPPORTED, "iteration count 5000001 is over modsign's limit of 5000000");
	p.iter = "02 05 00 ff ff ff ff";	/* 2^32 - 1 */
	expect(&p, MS_E_UNSUPPORTED, "iteration count 4294967295 is over");
	p.iter = "02 09 00 ff ff ff ff ff ff ff ff";
	expect(&p, MS_E_UNSUPPORTED, "iteration count over 2^64 is over");
	p.iter = "02 20 7f ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff"
		 "ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff ff";
	expect(&p, MS_E_UNSUPPORTED, "over 2^64");
	p.iter = "02 01 00";
	expect(&p, MS_E_MALFORMED, "iteration count: not a positive DER INTEGER");
	p.iter = "02 01 80";			/* -128 */
	expect(&p, MS_E_MALFORMED, "iteration count");
	p.iter = "02 02 00 05";			/* non-minimal 5 */
	expect(&p, MS_E_MALFORMED, "iteration count");
	p.iter = "02 00";
	expect(&p, MS_E_MALFORMED, "iteration count");
	p.iter = "04 02 08 00";			/* not an INTEGER */
	expect(&p, MS_E_MALFORMED, "iteration count");
	p.iter = "";
	expect(&p, MS_E_MALFORMED, "iteration count");
}

MS_TEST(pbes2_parse_refusals)
{
	struct parts p;

	p = good;
	p.kdf_oid = "06 09 2b 06 01 04 01 da 47 04 0b";	/* scrypt 1.3.6.1.4.1.11591.4.11 */
	expect(&p, MS_E_UNSUPPORTED, "key derivation function 1.3.6.1.4.1.11591.4.11 is not "
	       "supported");
	p = good;
	p.prf = "30 0c 06 08 2a 86 48 86 f7 0d 02 0d 05 00";	/* hmacWithSHA512-256 */
	expect(&p, MS_E_UNSUPPORTED, "pseudo-random function 1.2.840.113549.2.13 is not supported");
	p = good;
	p.prf = "30 0d 06 08 2a 86 48 86 f7 0d 02 09 04 01 00";	/* parameters not NULL */
	expect(&p, MS_E_MALFORMED, "parameters are not NULL");
	p = good;
	p.prf = "30 0a 06 08 2a 86 48 86 f7 0d 02 06";		/* hmacWithMD5 */
	expect(&p, MS_E_UNSUPPORTED, "pseudo-random function 1.2.840.113549.2.6 is not");
	p.prf = "30 06 06 04 2a 86 48 86";			/* the last arc cut */
	expect(&p, MS_E_UNSUPPORTED, "pseudo-random function 1.2.840.(cut) is not");
	p = good;
	p.enc_oid = "06 09 60 86 48 01 65 03 04 01 2e";	/* aes256-GCM */
	expect(&p, MS_E_UNSUPPORTED, "cipher 2.16.840.1.101.3.4.1.46 is not supported");
	p = good;
	p.enc_oid = "06 05 2b 0e 03 02 07";		/* desCBC (single DES) */
	p.iv = "04 08 01 02 03 04 05 06 07 08";
	expect(&p, MS_E_UNSUPPORTED, "cipher 1.3.14.3.2.7 is not supported");
	p = good;
	p.salt = "30 0b 06 09 2a 86 48 86 f7 0d 01 05 0c";
	expect(&p, MS_E_UNSUPPORTED, "otherSource");
}

MS_TEST(pbes2_parse_malformed)
{
	struct parts p;

	p = good;
	p.salt = "04 00";
	expect(&p, MS_E_MALFORMED, "salt: empty");
	p = good;
	p.salt = "02 01 08";
	expect(&p, MS_E_MALFORMED, "salt: malformed");
	p = good;
	p.key_len = "02 01 10";				/* 16 for AES-256 */
	expect(&p, MS_E_MALFORMED, "key length: not the cipher's");
	p = good;
	p.key_len = "02 01 00";
	expect(&p, MS_E_MALFORMED, "key length: not a positive");
	p = good;
	p.iv = "04 0f 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee";
	expect(&p, MS_E_MALFORMED, "the IV is not one OCTET STRING of a block");
	p = good;
	p.iv = "";
	expect(&p, MS_E_MALFORMED, "the IV");
	p = good;
	p.iv = "04 10 00 11 22 33 44 55 66 77 88 99 aa bb cc dd ee ff 05 00";
	expect(&p, MS_E_MALFORMED, "the IV");
	p = good;
	p.after_pbkdf2 = "05 00";
	expect(&p, MS_E_MALFORMED, "PBKDF2 parameters: bytes after the last field");
	p = good;
	p.after_epki = "00";
	expect(&p, MS_E_MALFORMED, "bytes after the EncryptedPrivateKeyInfo");
	p = good;
	p.data_len = 31;
	expect(&p, MS_E_MALFORMED, "not whole cipher blocks");
	p = good;
	p.data_len = 0;
	expect(&p, MS_E_MALFORMED, "not whole cipher blocks");
	p = good;
	p.kdf_oid = "";
	expect(&p, MS_E_MALFORMED, "key derivation function: malformed");
}

/* Every truncation of a good key, every byte of its parameters changed. */
MS_TEST(pbes2_parse_truncated_and_corrupted)
{
	struct der d;
	struct ms_pbes2 out;
	char why[512];
	size_t params_end;

	build(&good, &d);
	for (size_t n = 0; n < d.n; n++) {
		uint8_t *copy = malloc(n + 1);	/* exact size: ASan sees any overread */

		CHECK(copy != NULL);
		memcpy(copy, d.b, n);
		CHECK(ms_signer_pbes2_parse(copy, n, &out, why, sizeof(why)) != MS_OK);
		free(copy);
	}
	params_end = d.n - good.data_len;
	for (size_t i = 0; i < params_end; i++) {
		for (unsigned bit = 0; bit < 8; bit++) {
			uint8_t *copy = malloc(d.n);
			ms_err err;

			CHECK(copy != NULL);
			memcpy(copy, d.b, d.n);
			copy[i] ^= (uint8_t)(1u << bit);
			err = ms_signer_pbes2_parse(copy, d.n, &out, why, sizeof(why));
			if (err == MS_OK) {
				/* Whatever changed, what parsed is inside the input and sane. */
				CHECK(out.salt.p >= copy && out.salt.p + out.salt.len <= copy + d.n);
				CHECK(out.iv.p >= copy && out.iv.p + out.iv.len <= copy + d.n);
				CHECK(out.data.p >= copy && out.data.p + out.data.len <= copy + d.n);
				CHECK(out.iterations >= 1 && out.iterations <= MS_PBES2_ITER_MAX);
				CHECK(out.salt.len >= 1 && out.salt.len <= MS_PBES2_SALT_MAX);
			}
			free(copy);
		}
	}
}

/* The PKCS#8 PrivateKeyInfo of the TEST-ONLY rsa2048 key, from its PEM file. */
static uint8_t *
plain_key(size_t *len)
{
	mbedtls_pem_context pem;
	struct ms_span der = { NULL, 0 };
	size_t n = 0, used = 0;
	uint8_t *pemtext = ms_test_read(ms_test_data("rsa2048.key.pem"), &n);
	uint8_t *out;

	mbedtls_pem_init(&pem);
	CHECK(mbedtls_pem_read_buffer(&pem, "-----BEGIN PRIVATE KEY-----",
				      "-----END PRIVATE KEY-----", pemtext, NULL, 0, &used) == 0);
	der = ms_mbed_pem_buffer(&pem);
	out = malloc(der.len);
	CHECK(out != NULL);
	memcpy(out, der.p, der.len);
	*len = der.len;
	mbedtls_pem_free(&pem);
	free(pemtext);
	return out;
}

struct combo {
	const char *prf;		/* TLV, "" for the default */
	mbedtls_md_type_t md;
	const char *enc_oid;
	mbedtls_cipher_type_t cipher;
	size_t key_len, block;
};

static const struct combo combos[] = {
	{ "", MBEDTLS_MD_SHA1, "06 09 60 86 48 01 65 03 04 01 02", MBEDTLS_CIPHER_AES_128_CBC,
	  16, 16 },
	{ "30 0c 06 08 2a 86 48 86 f7 0d 02 08 05 00", MBEDTLS_MD_SHA224,
	  "06 09 60 86 48 01 65 03 04 01 16", MBEDTLS_CIPHER_AES_192_CBC, 24, 16 },
	{ "30 0c 06 08 2a 86 48 86 f7 0d 02 09 05 00", MBEDTLS_MD_SHA256,
	  "06 09 60 86 48 01 65 03 04 01 2a", MBEDTLS_CIPHER_AES_256_CBC, 32, 16 },
	{ "30 0c 06 08 2a 86 48 86 f7 0d 02 0a 05 00", MBEDTLS_MD_SHA384,
	  "06 08 2a 86 48 86 f7 0d 03 07", MBEDTLS_CIPHER_DES_EDE3_CBC, 24, 8 },
	{ "30 0c 06 08 2a 86 48 86 f7 0d 02 0b 05 00", MBEDTLS_MD_SHA512,
	  "06 09 60 86 48 01 65 03 04 01 2a", MBEDTLS_CIPHER_AES_256_CBC, 32, 16 },
};

/*
 * Encrypt @plain as PBES2 would, with @pad_value as every padding byte
 * (@pad_len of them; the right value is @pad_len) into @out.
 */
static void
encrypt(const struct combo *c, const uint8_t *plain, size_t len, size_t pad_len,
	uint8_t pad_value, uint8_t *out, size_t *out_len)
{
	static const uint8_t salt[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t iv[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	mbedtls_cipher_context_t cbc;
	uint8_t key[32];
	uint8_t *in = malloc(len + pad_len);
	size_t olen = 0;

	CHECK(in != NULL);
	memcpy(in, plain, len);
	memset(in + len, pad_value, pad_len);
	CHECK((len + pad_len) % c->block == 0);
	CHECK(ms_mbed_pbkdf2_hmac(c->md, (const uint8_t *)PASS, strlen(PASS), salt, sizeof(salt),
				  1000, key, c->key_len) == 0);
	mbedtls_cipher_init(&cbc);
	CHECK(mbedtls_cipher_setup(&cbc, mbedtls_cipher_info_from_type(c->cipher)) == 0);
	CHECK(mbedtls_cipher_setkey(&cbc, key, (int)c->key_len * 8, MBEDTLS_ENCRYPT) == 0);
	CHECK(mbedtls_cipher_set_padding_mode(&cbc, MBEDTLS_PADDING_NONE) == 0);
	CHECK(mbedtls_cipher_crypt(&cbc, iv, c->block, in, len + pad_len, out, &olen) == 0);
	*out_len = olen;
	mbedtls_cipher_free(&cbc);
	free(in);
}

static void
combo_parts(const struct combo *c, struct parts *p, const uint8_t *data, size_t data_len)
{
	*p = good;
	p->iter = "02 02 03 e8";	/* 1000 */
	p->prf = c->prf;
	p->enc_oid = c->enc_oid;
	if (c->block == 8) {
		p->iv = "04 08 00 11 22 33 44 55 66 77";
	}
	p->data = data;
	p->data_len = data_len;
}

/* Every PRF and cipher: decrypts to the key; mbedTLS reads it as rsa2048. */
MS_TEST(pbes2_decrypt_round_trip)
{
	size_t plain_len = 0;
	uint8_t *plain = plain_key(&plain_len);
	uint8_t enc[2048], dec[2048];

	for (size_t i = 0; i < sizeof(combos) / sizeof(combos[0]); i++) {
		const struct combo *c = &combos[i];
		size_t pad = c->block - plain_len % c->block;
		size_t enc_len = 0, dec_len = 0;
		struct parts p;
		struct ms_pbes2 pb;
		struct der d;
		char why[256];
		mbedtls_pk_context pk;

		encrypt(c, plain, plain_len, pad, (uint8_t)pad, enc, &enc_len);
		combo_parts(c, &p, enc, enc_len);
		build(&p, &d);
		CHECK_ERR(ms_signer_pbes2_parse(d.b, d.n, &pb, why, sizeof(why)), MS_OK);
		/* One byte short of the data: refused before anything is written. */
		CHECK(ms_signer_pbes2_decrypt(&pb, (const uint8_t *)PASS, strlen(PASS), dec,
					      enc_len - 1, &dec_len, why, sizeof(why)) ==
		      MS_E_NOSPACE);
		CHECK_ERR(ms_signer_pbes2_decrypt(&pb, (const uint8_t *)PASS, strlen(PASS), dec,
					      sizeof(dec), &dec_len, why, sizeof(why)), MS_OK);
		CHECK(dec_len == plain_len);
		CHECK(memcmp(dec, plain, plain_len) == 0);
		mbedtls_pk_init(&pk);
		CHECK(ms_mbed_pk_parse_key(&pk, dec, dec_len, NULL, 0, ms_mbed_rng, NULL) == 0);
		CHECK(mbedtls_pk_can_do(&pk, MBEDTLS_PK_RSA));
		mbedtls_pk_free(&pk);
		/* The wrong passphrase: the padding does not come out. */
		memset(dec, 0x5a, sizeof(dec));
		CHECK(ms_signer_pbes2_decrypt(&pb, (const uint8_t *)WRONG_PASS, strlen(WRONG_PASS),
					      dec, sizeof(dec), &dec_len, why, sizeof(why)) ==
		      MS_E_PIN);
		CHECK(strstr(why, "wrong passphrase") != NULL);
		/* What was written is wiped on failure. */
		for (size_t k = 0; k < enc_len; k++) {
			CHECK(dec[k] == 0);
		}
	}
	free(plain);
}

/* The padding: 1 to a block of bytes of its length, checked to the last. */
MS_TEST(pbes2_decrypt_padding)
{
	const struct combo *c = &combos[2];	/* AES-256 */
	static const uint8_t msg[32] = { 0x30, 0x1e };
	uint8_t enc[64], dec[64];
	size_t enc_len = 0, dec_len = 0;
	struct parts p;
	struct ms_pbes2 pb;
	struct der d;
	char why[256];
	static const struct {
		size_t len, pad;
		uint8_t value;
		ms_err want;
		size_t out_len;
	} cases[] = {
		{ 32, 16, 16, MS_OK, 32 },	/* a whole block of padding */
		{ 31, 1, 1, MS_OK, 31 },
		{ 30, 2, 1, MS_OK, 31 },	/* ... 01 01: one byte of padding */
		{ 32, 16, 0, MS_E_PIN, 0 },	/* pad byte 0 */
		{ 32, 16, 17, MS_E_PIN, 0 },	/* longer than a block */
		{ 16, 16, 32, MS_E_PIN, 0 },	/* longer than the block and the data */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		encrypt(c, msg, cases[i].len, cases[i].pad, cases[i].value, enc, &enc_len);
		combo_parts(c, &p, enc, enc_len);
		build(&p, &d);
		CHECK_ERR(ms_signer_pbes2_parse(d.b, d.n, &pb, why, sizeof(why)), MS_OK);
		CHECK(ms_signer_pbes2_decrypt(&pb, (const uint8_t *)PASS, strlen(PASS), dec,
					      sizeof(dec), &dec_len, why, sizeof(why)) ==
		      cases[i].want);
		if (cases[i].want == MS_OK) {
			CHECK(dec_len == cases[i].out_len);
			CHECK(memcmp(dec, msg, cases[i].len) == 0);
		}
	}
	/* One wrong byte inside otherwise good padding (…03 07 03 03). */
	{
		uint8_t in[32];

		memcpy(in, msg, 28);
		in[28] = 3;
		in[29] = 7;
		in[30] = 3;
		in[31] = 3;
		encrypt(c, in, 32, 0, 0, enc, &enc_len);
		combo_parts(c, &p, enc, enc_len);
		build(&p, &d);
		CHECK_ERR(ms_signer_pbes2_parse(d.b, d.n, &pb, why, sizeof(why)), MS_OK);
		CHECK_ERR(ms_signer_pbes2_decrypt(&pb, (const uint8_t *)PASS, strlen(PASS), dec,
					      sizeof(dec), &dec_len, why, sizeof(why)), MS_E_PIN);
	}
}

MS_TEST(pbes2_decrypt_refuses_unparsed)
{
	struct der d;
	struct ms_pbes2 pb;
	uint8_t dec[64];
	size_t dec_len = 0;

	memset(&pb, 0, sizeof(pb));
	CHECK(ms_signer_pbes2_decrypt(&pb, NULL, 0, dec, sizeof(dec), &dec_len, NULL, 0) ==
	      MS_E_ARG);
	CHECK_ERR(parse_parts(&good, &d, &pb, NULL, 0), MS_OK);
	pb.iterations = (uint64_t)MS_PBES2_ITER_MAX + 1;
	CHECK(ms_signer_pbes2_decrypt(&pb, NULL, 0, dec, sizeof(dec), &dec_len, NULL, 0) ==
	      MS_E_ARG);
}

/* The file OpenSSL 3 wrote (PBKDF2-HMAC-SHA-256, AES-256-CBC), PEM. */
MS_TEST(pbes2_openssl_file)
{
	struct ms_pin pass = { .len = strlen(PASS), .source = "test", .is_set = true };
	struct ms_pin wrong = { .len = strlen(WRONG_PASS), .source = "test", .is_set = true };
	struct ms_signer *s = NULL;
	char why[512] = "";
	int enc = 0;

	memcpy(pass.buf, PASS, pass.len);
	memcpy(wrong.buf, WRONG_PASS, wrong.len);
	CHECK_ERR(ms_signer_keyfile_is_encrypted(ms_test_data("rsa2048.pkcs8-aes.key.pem"), &enc,
					     why, sizeof(why)), MS_OK);
	CHECK(enc == 1);
	CHECK_ERR(ms_signer_keyfile_open(ms_test_data("rsa2048.pkcs8-aes.key.pem"), NULL, 1, &s, why,
				     sizeof(why)), MS_E_PIN);
	CHECK(strstr(why, "no passphrase") != NULL);
	CHECK_ERR(ms_signer_keyfile_open(ms_test_data("rsa2048.pkcs8-aes.key.pem"), &wrong, 1, &s,
				     why, sizeof(why)), MS_E_PIN);
	CHECK(strstr(why, "wrong passphrase") != NULL);
	CHECK(s == NULL);
	CHECK_ERR(ms_signer_keyfile_open(ms_test_data("rsa2048.pkcs8-aes.key.pem"), &pass, 3, &s, why,
				     sizeof(why)), MS_OK);
	CHECK(ms_signer_key_type(s) == MS_KEY_RSA);
	CHECK(ms_signer_lanes(s) == 3);
	ms_signer_free(s);
	ms_pin_clear(&pass);
	ms_pin_clear(&wrong);
}
