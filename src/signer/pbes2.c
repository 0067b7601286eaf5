// SPDX-License-Identifier: GPL-2.0-only
/*
 * PKCS#8 EncryptedPrivateKeyInfo with PBES2 (RFC 8018, 6.2), as OpenSSL 3
 * writes it (`openssl genpkey -aes256`, `openssl pkcs8 -topk8 -v2 ...`):
 * the parameters read by our own strict parser, the key derived with
 * mbedTLS's PBKDF2 and decrypted with its AES-CBC or DES-EDE3-CBC. mbedTLS
 * 2.28 decrypts PBES2 with DES only, so every PBES2 key file comes here
 * (with 3.6, which reads AES too, as well: one path for both).
 * Parses untrusted input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <mbedtls/cipher.h>
#include <mbedtls/md.h>

#include "../cms/mbedtls_compat.h"
#include "signer_internal.h"

/* DER tags (X.690, 8.1.2). */
#define TAG_INTEGER		0x02
#define TAG_OCTET_STRING	0x04
#define TAG_NULL		0x05
#define TAG_OID			0x06
#define TAG_SEQUENCE		0x30

/* id-PBES2 1.2.840.113549.1.5.13, id-PBKDF2 1.2.840.113549.1.5.12 (RFC 8018, A.4, A.2) */
static const uint8_t oid_pbes2[] = { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0d };
static const uint8_t oid_pbkdf2[] = { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x05, 0x0c };

struct prf {
	uint8_t oid[8];		/* 1.2.840.113549.2.x (RFC 8018, B.1) */
	enum ms_pbes2_prf id;
	mbedtls_md_type_t md;
};

static const struct prf prfs[] = {
	{ { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x07 }, MS_PBES2_HMAC_SHA1, MBEDTLS_MD_SHA1 },
	{ { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x08 }, MS_PBES2_HMAC_SHA224, MBEDTLS_MD_SHA224 },
	{ { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x09 }, MS_PBES2_HMAC_SHA256, MBEDTLS_MD_SHA256 },
	{ { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x0a }, MS_PBES2_HMAC_SHA384, MBEDTLS_MD_SHA384 },
	{ { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x02, 0x0b }, MS_PBES2_HMAC_SHA512, MBEDTLS_MD_SHA512 },
};

struct cipher {
	uint8_t oid[9];
	size_t oid_len;
	enum ms_pbes2_cipher id;
	size_t key_len;
	size_t block;		/* and IV length */
	mbedtls_cipher_type_t type;
};

static const struct cipher ciphers[] = {
	/* aes{128,192,256}-CBC-PAD 2.16.840.1.101.3.4.1.{2,22,42} (RFC 8018, B.2.5) */
	{ { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x02 }, 9, MS_PBES2_AES128_CBC, 16, 16,
	  MBEDTLS_CIPHER_AES_128_CBC },
	{ { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x16 }, 9, MS_PBES2_AES192_CBC, 24, 16,
	  MBEDTLS_CIPHER_AES_192_CBC },
	{ { 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x01, 0x2a }, 9, MS_PBES2_AES256_CBC, 32, 16,
	  MBEDTLS_CIPHER_AES_256_CBC },
	/* des-EDE3-CBC 1.2.840.113549.3.7 (RFC 8018, B.2.2) */
	{ { 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x03, 0x07 }, 8, MS_PBES2_DES_EDE3_CBC, 24, 8,
	  MBEDTLS_CIPHER_DES_EDE3_CBC },
};

#define N_PRFS (sizeof(prfs) / sizeof(prfs[0]))
#define N_CIPHERS (sizeof(ciphers) / sizeof(ciphers[0]))

static const uint8_t der_null[] = { TAG_NULL, 0x00 };

static void __attribute__((format(printf, 3, 4)))
say(char *why, size_t cap, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || cap == 0) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(why, cap, fmt, ap);
	va_end(ap);
}

/* An OID's dotted text, for messages ("1.2.840.113549.2.12"). */
static void
oid_text(struct ms_span oid, char *out, size_t cap)
{
	size_t used = 0;
	uint64_t v = 0;
	bool first = true;

	out[0] = '\0';
	for (size_t i = 0; i < oid.len && used < cap; i++) {
		int n;

		/* Arcs over 2^56 are not worth printing exactly. */
		if (v > (UINT64_MAX >> 8)) {
			snprintf(out, cap, "(an OID with a huge arc)");
			return;
		}
		v = (v << 7) | (oid.p[i] & 0x7f);
		if ((oid.p[i] & 0x80) != 0) {
			continue;
		}
		if (first) {
			/* X.690, 8.19.4: the first subidentifier holds two arcs. */
			uint64_t a = v < 80 ? v / 40 : 2;

			n = snprintf(out + used, cap - used, "%llu.%llu", (unsigned long long)a,
				     (unsigned long long)(v - a * 40));
			first = false;
		} else {
			n = snprintf(out + used, cap - used, ".%llu", (unsigned long long)v);
		}
		if (n < 0) {
			return;
		}
		used += (size_t)n;
		v = 0;
	}
	if (out[0] == '\0') {
		snprintf(out, cap, "(an empty OID)");
	} else if ((oid.p[oid.len - 1] & 0x80) != 0 && used < cap) {
		snprintf(out + used, cap - used, ".(cut)");
	}
}

/*
 * INTEGER (1..MAX) (RFC 8018, A.2) as DER writes it: minimal, positive.
 * A value over UINT64_MAX reads as UINT64_MAX: every ceiling refuses it.
 */
static ms_err
get_count(struct ms_span *in, uint64_t *out)
{
	struct ms_span b = { NULL, 0 };
	uint64_t v = 0;
	ms_err err;

	err = ms_der_expect(in, TAG_INTEGER, &b);
	if (err != MS_OK) {
		return err;
	}
	if (b.len == 0 || (b.p[0] & 0x80) != 0) {
		return MS_E_MALFORMED;		/* empty or negative */
	}
	if (b.len > 1 && b.p[0] == 0 && (b.p[1] & 0x80) == 0) {
		return MS_E_MALFORMED;		/* non-minimal (X.690, 8.3.2) */
	}
	for (size_t i = 0; i < b.len; i++) {
		if (v > (UINT64_MAX >> 8)) {
			*out = UINT64_MAX;
			return MS_OK;
		}
		v = (v << 8) | b.p[i];
	}
	if (v == 0) {
		return MS_E_MALFORMED;
	}
	*out = v;
	return MS_OK;
}

/*
 * AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }
 * (RFC 5280, 4.1.1.2). @params gets the parameters' whole TLV (empty when
 * absent).
 */
static ms_err
get_alg(struct ms_span *in, struct ms_span *oid, struct ms_span *params)
{
	struct ms_span seq = { NULL, 0 };
	ms_err err;

	err = ms_der_expect(in, TAG_SEQUENCE, &seq);
	if (err == MS_OK) {
		err = ms_der_expect(&seq, TAG_OID, oid);
	}
	if (err == MS_OK) {
		*params = seq;
	}
	return err;
}

/*
 * prf AlgorithmIdentifier {{PBKDF2-PRFs}} DEFAULT algid-hmacWithSHA1
 * (RFC 8018, A.2): the HMAC OIDs take NULL parameters (B.1.1); OpenSSL
 * writes the NULL, other writers leave it out. Both are read.
 */
static ms_err
get_prf(struct ms_span *in, struct ms_pbes2 *out, char *why, size_t why_cap)
{
	struct ms_span oid = { NULL, 0 }, params = { NULL, 0 };
	char text[96];
	ms_err err;

	err = get_alg(in, &oid, &params);
	if (err != MS_OK) {
		say(why, why_cap, "PBKDF2 pseudo-random function: %s", "malformed");
		return err;
	}
	if (params.len != 0 && !ms_der_span_eq(params, der_null, sizeof(der_null))) {
		say(why, why_cap, "PBKDF2 pseudo-random function: %s", "parameters are not NULL");
		return MS_E_MALFORMED;
	}
	for (size_t i = 0; i < N_PRFS; i++) {
		if (ms_der_span_eq(oid, prfs[i].oid, sizeof(prfs[i].oid))) {
			out->prf = prfs[i].id;
			return MS_OK;
		}
	}
	oid_text(oid, text, sizeof(text));
	say(why, why_cap, "PBKDF2 pseudo-random function %s is not supported (modsign reads "
	    "hmacWithSHA1, -224, -256, -384 and -512)", text);
	return MS_E_UNSUPPORTED;
}

/*
 * PBKDF2-params ::= SEQUENCE {				-- RFC 8018, A.2
 *	salt CHOICE { specified OCTET STRING, otherSource AlgorithmIdentifier },
 *	iterationCount INTEGER (1..MAX),
 *	keyLength INTEGER (1..MAX) OPTIONAL,
 *	prf AlgorithmIdentifier DEFAULT algid-hmacWithSHA1 }
 */
static ms_err
get_pbkdf2(struct ms_span params, struct ms_pbes2 *out, uint64_t *key_len, char *why,
	   size_t why_cap)
{
	struct ms_span seq = { NULL, 0 };
	struct ms_span rest = { NULL, 0 }, body = { NULL, 0 };
	uint8_t tag = 0;
	char text[64];
	ms_err err;

	err = ms_der_expect_only(params, TAG_SEQUENCE, &seq);
	if (err != MS_OK) {
		say(why, why_cap, "PBKDF2 parameters: %s", "malformed");
		return err;
	}
	rest = seq;
	err = ms_der_get(&rest, &tag, &body);
	if (err != MS_OK || (tag != TAG_OCTET_STRING && tag != TAG_SEQUENCE)) {
		say(why, why_cap, "PBKDF2 salt: %s", "malformed");
		return MS_E_MALFORMED;
	}
	if (tag == TAG_SEQUENCE) {
		say(why, why_cap, "PBKDF2 salt: %s is not supported", "otherSource");
		return MS_E_UNSUPPORTED;
	}
	if (body.len == 0 || body.len > MS_PBES2_SALT_MAX) {
		say(why, why_cap, "PBKDF2 salt: %s", body.len == 0 ? "empty" : "over 256 bytes");
		return MS_E_MALFORMED;
	}
	out->salt = body;
	err = get_count(&rest, &out->iterations);
	if (err != MS_OK) {
		say(why, why_cap, "PBKDF2 iteration count: %s", "not a positive DER INTEGER");
		return err;
	}
	if (out->iterations > MS_PBES2_ITER_MAX) {
		if (out->iterations == UINT64_MAX) {
			snprintf(text, sizeof(text), "over 2^64");
		} else {
			snprintf(text, sizeof(text), "%llu", (unsigned long long)out->iterations);
		}
		say(why, why_cap, "PBKDF2 iteration count %s is over modsign's limit of %u", text,
		    (unsigned)MS_PBES2_ITER_MAX);
		return MS_E_UNSUPPORTED;
	}
	*key_len = 0;
	if (rest.len > 0 && rest.p[0] == TAG_INTEGER) {
		err = get_count(&rest, key_len);
		if (err != MS_OK) {
			say(why, why_cap, "PBKDF2 key length: %s", "not a positive DER INTEGER");
			return err;
		}
	}
	out->prf = MS_PBES2_HMAC_SHA1;
	if (rest.len > 0) {
		err = get_prf(&rest, out, why, why_cap);
		if (err != MS_OK) {
			return err;
		}
	}
	if (rest.len != 0) {
		say(why, why_cap, "PBKDF2 parameters: %s", "bytes after the last field");
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

/*
 * encryptionScheme AlgorithmIdentifier {{PBES2-Encs}} (RFC 8018, A.4): the
 * CBC ciphers' parameters are the IV, an OCTET STRING of one block (B.2.2,
 * B.2.5).
 */
static ms_err
get_cipher(struct ms_span *in, struct ms_pbes2 *out, size_t *key_len, char *why,
	   size_t why_cap)
{
	struct ms_span oid = { NULL, 0 }, params = { NULL, 0 }, iv = { NULL, 0 };
	const struct cipher *c = NULL;
	char text[96];
	ms_err err;

	err = get_alg(in, &oid, &params);
	if (err != MS_OK) {
		say(why, why_cap, "PBES2 encryption scheme: %s", "malformed");
		return err;
	}
	for (size_t i = 0; i < N_CIPHERS; i++) {
		if (ms_der_span_eq(oid, ciphers[i].oid, ciphers[i].oid_len)) {
			c = &ciphers[i];
		}
	}
	if (c == NULL) {
		oid_text(oid, text, sizeof(text));
		say(why, why_cap, "PBES2 cipher %s is not supported (modsign reads AES-128-CBC, "
		    "AES-192-CBC, AES-256-CBC and DES-EDE3-CBC)", text);
		return MS_E_UNSUPPORTED;
	}
	err = ms_der_expect_only(params, TAG_OCTET_STRING, &iv);
	if (err != MS_OK || iv.len != c->block) {
		say(why, why_cap, "PBES2 cipher: %s", "the IV is not one OCTET STRING of a block");
		return MS_E_MALFORMED;
	}
	out->cipher = c->id;
	out->iv = iv;
	*key_len = c->key_len;
	return MS_OK;
}

static const struct cipher *
cipher_of(enum ms_pbes2_cipher id)
{
	for (size_t i = 0; i < N_CIPHERS; i++) {
		if (ciphers[i].id == id) {
			return &ciphers[i];
		}
	}
	return NULL;
}

/*
 * EncryptedPrivateKeyInfo ::= SEQUENCE {		-- RFC 5958, 3
 *	encryptionAlgorithm AlgorithmIdentifier { id-PBES2, PBES2-params },
 *	encryptedData OCTET STRING }
 * PBES2-params ::= SEQUENCE {				-- RFC 8018, A.4
 *	keyDerivationFunc AlgorithmIdentifier { id-PBKDF2, PBKDF2-params },
 *	encryptionScheme AlgorithmIdentifier {{PBES2-Encs}} }
 */
ms_err
ms_signer_pbes2_parse(const uint8_t *der, size_t len, struct ms_pbes2 *out, char *why,
		      size_t why_cap)
{
	struct ms_span in = { der, len };
	struct ms_span epki = { NULL, 0 }, oid = { NULL, 0 }, params = { NULL, 0 };
	struct ms_span pbes2 = { NULL, 0 }, kdf_oid = { NULL, 0 }, kdf_params = { NULL, 0 };
	uint64_t want_key_len = 0;
	size_t key_len = 0;
	const struct cipher *c = NULL;
	char text[96];
	ms_err err;

	memset(out, 0, sizeof(*out));
	if (why != NULL && why_cap > 0) {
		why[0] = '\0';
	}
	/* Up to the algorithm's OID: anything else is not ours to read. */
	if (der == NULL || ms_der_expect(&in, TAG_SEQUENCE, &epki) != MS_OK ||
	    get_alg(&epki, &oid, &params) != MS_OK || !ms_der_span_eq(oid, oid_pbes2,
								      sizeof(oid_pbes2))) {
		return MS_E_NOTFOUND;
	}
	if (in.len != 0) {
		say(why, why_cap, "PBES2: %s", "bytes after the EncryptedPrivateKeyInfo");
		return MS_E_MALFORMED;
	}
	err = ms_der_expect_only(params, TAG_SEQUENCE, &pbes2);
	if (err != MS_OK) {
		say(why, why_cap, "PBES2 parameters: %s", "malformed");
		return err;
	}
	err = get_alg(&pbes2, &kdf_oid, &kdf_params);
	if (err != MS_OK) {
		say(why, why_cap, "PBES2 key derivation function: %s", "malformed");
		return err;
	}
	if (!ms_der_span_eq(kdf_oid, oid_pbkdf2, sizeof(oid_pbkdf2))) {
		oid_text(kdf_oid, text, sizeof(text));
		say(why, why_cap, "PBES2 key derivation function %s is not supported (only PBKDF2 "
		    "is)", text);
		return MS_E_UNSUPPORTED;
	}
	err = get_pbkdf2(kdf_params, out, &want_key_len, why, why_cap);
	if (err != MS_OK) {
		return err;
	}
	err = get_cipher(&pbes2, out, &key_len, why, why_cap);
	if (err != MS_OK) {
		return err;
	}
	if (pbes2.len != 0) {
		say(why, why_cap, "PBES2 parameters: %s", "bytes after the encryption scheme");
		return MS_E_MALFORMED;
	}
	/* RFC 8018, A.2: keyLength, when given, is the cipher's key length. */
	if (want_key_len != 0 && want_key_len != key_len) {
		say(why, why_cap, "PBKDF2 key length: %s", "not the cipher's key length");
		return MS_E_MALFORMED;
	}
	err = ms_der_expect(&epki, TAG_OCTET_STRING, &out->data);
	if (err != MS_OK || epki.len != 0) {
		say(why, why_cap, "PBES2: %s", "the encrypted data is not one OCTET STRING");
		return MS_E_MALFORMED;
	}
	c = cipher_of(out->cipher);
	if (c == NULL) {
		return MS_E_INTERNAL;
	}
	/* CBC with padding (RFC 8018, 6.2.1 step 4): whole blocks, at least one. */
	if (out->data.len == 0 || out->data.len % c->block != 0) {
		say(why, why_cap, "PBES2: %s", "the encrypted data is not whole cipher blocks");
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

ms_err
ms_signer_pbes2_decrypt(const struct ms_pbes2 *p, const uint8_t *pass, size_t pass_len,
			uint8_t *out, size_t cap, size_t *out_len, char *why, size_t why_cap)
{
	static const uint8_t empty[1] = { 0 };
	const struct cipher *c = cipher_of(p->cipher);
	mbedtls_md_type_t md = MBEDTLS_MD_NONE;
	mbedtls_cipher_context_t cbc;
	uint8_t key[32];
	size_t olen = 0;
	size_t pad;
	uint8_t bad = 0;
	int ret;
	ms_err err = MS_E_INTERNAL;

	mbedtls_cipher_init(&cbc);
	if (c == NULL || c->key_len > sizeof(key) || p->iterations == 0 ||
	    p->iterations > MS_PBES2_ITER_MAX || p->data.len == 0 ||
	    p->data.len % c->block != 0 || p->iv.len != c->block) {
		err = MS_E_ARG;
		goto out;
	}
	if (cap < p->data.len) {
		err = MS_E_NOSPACE;
		goto out;
	}
	for (size_t i = 0; i < N_PRFS; i++) {
		if (prfs[i].id == p->prf) {
			md = prfs[i].md;
		}
	}
	if (md == MBEDTLS_MD_NONE) {
		err = MS_E_ARG;
		goto out;
	}
	if (pass == NULL) {
		pass = empty;
		pass_len = 0;
	}
	/* RFC 8018, 6.2.2 steps 3-4: DK = PBKDF2(P, S, c, dkLen). */
	ret = ms_mbed_pbkdf2_hmac(md, pass, pass_len, p->salt.p, p->salt.len,
				  (unsigned int)p->iterations, key, c->key_len);
	if (ret != 0) {
		say(why, why_cap, "PBKDF2: %s", ret == MBEDTLS_ERR_MD_ALLOC_FAILED ?
		    "out of memory" : "failed");
		err = ret == MBEDTLS_ERR_MD_ALLOC_FAILED ? MS_E_NOMEM : MS_E_INTERNAL;
		goto out;
	}
	/* Step 5: decrypt with the IV; the padding is checked here, below. */
	ret = mbedtls_cipher_setup(&cbc, mbedtls_cipher_info_from_type(c->type));
	if (ret == 0) {
		ret = mbedtls_cipher_setkey(&cbc, key, (int)(c->key_len * 8), MBEDTLS_DECRYPT);
	}
	if (ret == 0) {
		ret = mbedtls_cipher_set_padding_mode(&cbc, MBEDTLS_PADDING_NONE);
	}
	if (ret == 0) {
		ret = mbedtls_cipher_crypt(&cbc, p->iv.p, p->iv.len, p->data.p, p->data.len, out,
					   &olen);
	}
	if (ret != 0 || olen != p->data.len) {
		say(why, why_cap, "PBES2: %s", "decryption failed");
		err = MS_E_INTERNAL;
		goto out;
	}
	/*
	 * Step 6: the PKCS#5 padding, 1 to one block of bytes of its length
	 * (RFC 8018, 6.1.1 step 4). A wrong passphrase almost always breaks it.
	 * A local key file offers no padding oracle, but the check reads every
	 * byte anyway.
	 */
	pad = out[olen - 1];
	if (pad == 0 || pad > c->block) {
		bad = 1;
		pad = 1;
	}
	for (size_t i = olen - pad; i < olen; i++) {
		bad |= (uint8_t)(out[i] ^ (uint8_t)pad);
	}
	if (bad != 0) {
		say(why, why_cap, "%s", "wrong passphrase for the key");
		err = MS_E_PIN;
		goto out;
	}
	*out_len = olen - pad;
	err = MS_OK;
out:
	ms_wipe(key, sizeof(key));
	mbedtls_cipher_free(&cbc);	/* zeroises the key schedule */
	if (err != MS_OK && out != NULL && err != MS_E_NOSPACE) {
		ms_wipe(out, cap < p->data.len ? cap : p->data.len);
	}
	return err;
}
