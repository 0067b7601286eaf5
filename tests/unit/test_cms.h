/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the tests/unit/test_cms_*.c files. */
#ifndef MS_TEST_CMS_H
#define MS_TEST_CMS_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/pk.h>

#include "../../src/cms/cms_internal.h"

/* An encoder under test: writes into (out, cap, out_len) like the API. */
typedef ms_err (*cms_enc_fn)(const void *ctx, uint8_t *out, size_t cap, size_t *out_len);

/*
 * How every encoder is tested: the size query (out == NULL), then every
 * capacity from 0 to len + 1 with guard bytes on both sides: MS_E_NOSPACE
 * and an untouched buffer below len, exactly @want from len up, guards
 * intact.
 */
void cms_every_cap(cms_enc_fn fn, const void *ctx, const uint8_t *want, size_t want_len);

/* tests/data/<name> read whole (exits the test on failure). */
uint8_t *cms_read(const char *name, size_t *len);

/* ms_cms_cert_parse() of tests/data/<name>, which must succeed. */
struct ms_cms_cert *cms_cert(const char *name);

/* tests/data/<name>.key.pem parsed into @pk (free with mbedtls_pk_free). */
void cms_load_key(const char *name, mbedtls_pk_context *pk);

/*
 * Sign @tbs with tests/data/<name>.key.pem as a token would: RSA PKCS#1
 * v1.5 over the DigestInfo (CKM_RSA_PKCS), ECDSA over the digest
 * (CKM_ECDSA) returned as r||s of @half bytes each. Returns the length.
 */
size_t cms_token_sign(const char *name, enum ms_hash_alg alg, const uint8_t *tbs,
		      size_t tbs_len, uint8_t *sig, size_t half);

/* A seeded CTR-DRBG for mbedTLS calls that want randomness (tests only). */
int cms_rng(void *ctx, unsigned char *out, size_t len);

/*
 * From a sign-file .p7s: the sid TLV and the signature OCTET STRING
 * content of its one SignerInfo (walked with the internal reader).
 */
void cms_p7s_parts(const uint8_t *p, size_t len, struct ms_span *sid, struct ms_span *sig);

/* DER Ecdsa-Sig-Value to r||s, each left-padded to @half bytes. */
void cms_ec_der_to_raw(struct ms_span der, size_t half, uint8_t *raw);

#endif
