// SPDX-License-Identifier: GPL-2.0-only
/*
 * Verifies signatures with a certificate's public key, through nettle: every
 * signature a signer hands back is checked here before a module is written,
 * and `verify` checks modules here. The key is loaded once, when the
 * certificate is parsed, and only read afterwards, so any number of threads
 * verify with one certificate at once (mbedTLS's EC code fills a table in
 * the group on first use, and its RSA context takes a lock). Public data
 * only: nothing here needs to be side-channel silent. Parses untrusted input
 * (the signatures).
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/x509_crt.h>
#include <nettle/bignum.h>
#include <nettle/dsa.h>
#include <nettle/ecc-curve.h>
#include <nettle/ecc.h>
#include <nettle/ecdsa.h>
#include <nettle/rsa.h>

#include "cms_internal.h"

/* Uncompressed point 04 || X || Y of P-521, as mbedtls_pk_write_pubkey() writes it. */
#define EC_POINT_MAX (1 + 2 * MS_CMS_EC_HALF_MAX)

struct ms_cert_pub {
	enum ms_key_type type;
	size_t sig_len;			/* RSA: modulus bytes; EC: r||s bytes; ML-DSA: the set's */
	struct rsa_public_key rsa;	/* RSA */
	struct ecc_point q;		/* EC */
	enum ms_mldsa_set mldsa;	/* ML-DSA */
	struct ms_span mldsa_pk;	/* ML-DSA: points into the certificate's DER */
};

static const struct ecc_curve *
nettle_curve(enum ms_ec_curve curve)
{
	switch (curve) {
	case MS_EC_P256:
		return nettle_get_secp_256r1();
	case MS_EC_P384:
		return nettle_get_secp_384r1();
	case MS_EC_P521:
		return nettle_get_secp_521r1();
	default:
		return NULL;
	}
}

static ms_err
load_rsa(const struct ms_cms_cert *cert, struct ms_cert_pub *pub)
{
	const mbedtls_rsa_context *rsa = mbedtls_pk_rsa(cert->crt->pk);
	uint8_t n[MS_RSA_MAX_BYTES], e[MS_RSA_MAX_BYTES];
	size_t n_len = mbedtls_rsa_get_len(rsa);

	/* read_key() refused moduli over MS_RSA_MAX_BYTES. */
	if (n_len == 0 || n_len > sizeof(n)) {
		return MS_E_UNSUPPORTED;
	}
	/* Exporting public parts of a parsed key writes fixed-size buffers. */
	if (mbedtls_rsa_export_raw(rsa, n, n_len, NULL, 0, NULL, 0, NULL, 0, e, sizeof(e)) != 0) {
		return MS_E_MALFORMED;
	}
	rsa_public_key_init(&pub->rsa);
	nettle_mpz_set_str_256_u(pub->rsa.n, n_len, n);
	nettle_mpz_set_str_256_u(pub->rsa.e, sizeof(e), e);
	pub->type = MS_KEY_RSA;
	/* rsa_public_key_prepare() refuses a modulus too small for any DigestInfo. */
	if (!rsa_public_key_prepare(&pub->rsa) || pub->rsa.size != n_len) {
		return MS_E_UNSUPPORTED;
	}
	pub->sig_len = n_len;
	return MS_OK;
}

static ms_err
load_ec(const struct ms_cms_cert *cert, struct ms_cert_pub *pub)
{
	const struct ecc_curve *ecc = nettle_curve(cert->curve);
	uint8_t buf[EC_POINT_MAX + 64];
	uint8_t *p = buf + sizeof(buf);
	size_t half = (cert->bits + 7) / 8;
	mpz_t x, y;
	int n, ok;

	if (ecc == NULL || half == 0 || half > MS_CMS_EC_HALF_MAX) {
		return MS_E_UNSUPPORTED;
	}
	/*
	 * The public API in mbedTLS 2.28 and 3.x alike: for an EC key it writes
	 * the point backwards from the end of @buf, uncompressed.
	 */
	n = mbedtls_pk_write_pubkey(&p, buf, &cert->crt->pk);
	if (n != (int)(1 + 2 * half) || p[0] != 0x04) {
		return MS_E_MALFORMED;
	}
	mpz_init(x);
	mpz_init(y);
	nettle_mpz_set_str_256_u(x, half, p + 1);
	nettle_mpz_set_str_256_u(y, half, p + 1 + half);
	ecc_point_init(&pub->q, ecc);
	pub->type = MS_KEY_EC;
	/* ecc_point_set() refuses a point that is not on the curve. */
	ok = ecc_point_set(&pub->q, x, y);
	mpz_clear(x);
	mpz_clear(y);
	if (!ok) {
		return MS_E_MALFORMED;
	}
	pub->sig_len = 2 * half;
	return MS_OK;
}

ms_err
ms_cert_pub_load(struct ms_cms_cert *cert)
{
	struct ms_cert_pub *pub;
	ms_err err;

	pub = calloc(1, sizeof(*pub));
	if (pub == NULL) {
		return MS_E_NOMEM;
	}
	if (cert->type == MS_KEY_MLDSA) {
		/* cert_mldsa.c checked the key's length; any 10-bit t1 is a key. */
		pub->type = MS_KEY_MLDSA;
		pub->mldsa = cert->mldsa;
		pub->mldsa_pk = cert->mldsa_pk;
		pub->sig_len = ms_cms_mldsa_sig_len(cert->mldsa);
		err = (pub->sig_len == 0) ? MS_E_UNSUPPORTED : MS_OK;
	} else {
		err = cert->type == MS_KEY_RSA ? load_rsa(cert, pub) : load_ec(cert, pub);
	}
	if (err != MS_OK && pub->type == 0) {
		free(pub);
		return err;
	}
	/* Even a failed load holds nettle's storage: freed by the one path. */
	cert->pub = pub;
	return err;
}

void
ms_cert_pub_free(struct ms_cert_pub *pub)
{
	if (pub == NULL) {
		return;
	}
	if (pub->type == MS_KEY_RSA) {
		rsa_public_key_clear(&pub->rsa);
	} else if (pub->type == MS_KEY_EC) {
		ecc_point_clear(&pub->q);
	}
	free(pub);
}

/* RSASSA-PKCS1-v1_5 (RFC 8017, 8.2.2) over @di, a whole DigestInfo. */
static ms_err
verify_rsa(const struct ms_cert_pub *pub, const uint8_t *di, size_t di_len,
	   const uint8_t *sig, size_t sig_len)
{
	mpz_t s;
	int ok;

	/* A signature is exactly k bytes (8.2.2 step 1). */
	if (sig_len != pub->sig_len) {
		return MS_E_MISMATCH;
	}
	mpz_init(s);
	nettle_mpz_set_str_256_u(s, sig_len, sig);
	/* nettle refuses s >= n and compares the whole encoded message. */
	ok = rsa_pkcs1_verify(&pub->rsa, di_len, di, s);
	mpz_clear(s);
	return ok ? MS_OK : MS_E_MISMATCH;
}

/* ECDSA over @digest with @sig as r||s, each half the bytes. */
static ms_err
verify_ec(const struct ms_cert_pub *pub, const uint8_t *digest, size_t digest_len,
	  const uint8_t *sig, size_t sig_len)
{
	struct dsa_signature rs;
	size_t half = sig_len / 2;
	int ok;

	if (sig_len != pub->sig_len) {
		return MS_E_MISMATCH;
	}
	dsa_signature_init(&rs);
	nettle_mpz_set_str_256_u(rs.r, half, sig);
	nettle_mpz_set_str_256_u(rs.s, half, sig + half);
	/* ecdsa_verify() refuses r or s outside [1, q - 1] (SEC 1, 4.1.4 step 1). */
	ok = ecdsa_verify(&pub->q, digest_len, digest, &rs);
	dsa_signature_clear(&rs);
	return ok ? MS_OK : MS_E_MISMATCH;
}

ms_err
ms_cms_cert_verify_parts(const struct ms_cms_cert *cert, enum ms_hash_alg alg,
			 const struct ms_span *msg, size_t n_msg, const uint8_t *sig,
			 size_t sig_len)
{
	if (cert == NULL || cert->pub == NULL || sig == NULL || (msg == NULL && n_msg != 0)) {
		return MS_E_ARG;
	}
	if (cert->type == MS_KEY_MLDSA) {
		return ms_cms_mldsa_verify(cert->pub->mldsa, cert->pub->mldsa_pk.p,
					   cert->pub->mldsa_pk.len, NULL, 0, msg, n_msg, sig,
					   sig_len);
	}
	if (n_msg != 1) {
		return MS_E_ARG;
	}
	return ms_cms_cert_verify(cert, alg, msg[0].p, msg[0].len, sig, sig_len);
}

ms_err
ms_cms_cert_verify(const struct ms_cms_cert *cert, enum ms_hash_alg alg,
		   const uint8_t *tbs, size_t tbs_len,
		   const uint8_t *sig, size_t sig_len)
{
	const struct ms_hash_info *h = ms_hash_info(alg);
	struct ms_span msg = { tbs, tbs_len };

	if (cert == NULL || cert->pub == NULL || tbs == NULL || sig == NULL) {
		return MS_E_ARG;
	}
	/* Pure ML-DSA signs the message itself, with the empty context (FIPS 204, 5.2). */
	if (cert->type == MS_KEY_MLDSA) {
		return ms_cms_mldsa_verify(cert->pub->mldsa, cert->pub->mldsa_pk.p,
					   cert->pub->mldsa_pk.len, NULL, 0, &msg, 1, sig, sig_len);
	}
	if (h == NULL) {
		return MS_E_ARG;
	}
	/* @tbs must be as long as ms_cms_tbs_encode() makes it for this key. */
	if (tbs_len != h->size + (cert->type == MS_KEY_RSA ? h->di_prefix_len : 0)) {
		return MS_E_ARG;
	}
	if (cert->type == MS_KEY_RSA) {
		return verify_rsa(cert->pub, tbs, tbs_len, sig, sig_len);
	}
	return verify_ec(cert->pub, tbs, tbs_len, sig, sig_len);
}
