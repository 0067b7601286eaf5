// SPDX-License-Identifier: GPL-2.0-only
/*
 * RSA signatures for key files through nettle's hogweed: the key stays
 * parsed by mbedTLS (strictly, as every key file is), its CRT parameters are
 * handed to nettle, and each signature is made with rsa_pkcs1_sign_tr(),
 * which blinds the input, computes with GMP's side-channel-silent mpn_sec
 * functions and checks the result against the public key before returning
 * it. PKCS#1 v1.5 is deterministic: the bytes are mbedTLS's and sign-file's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mbedtls/bignum.h>
#include <mbedtls/rsa.h>
#include <nettle/bignum.h>
#include <nettle/rsa.h>

#include "signer_internal.h"

/* Largest modulus read: RSA-16384, as MS_SIG_MAX. */
#define PART_MAX (16384 / 8)

struct ms_hogweed_key {
	struct rsa_public_key pub;
	struct rsa_private_key priv;
};

/*
 * GMP frees its temporaries without wiping them, and the CRT exponents and
 * the blinded intermediate values of a signature pass through them. These
 * replace GMP's allocation functions, process-wide and once, with ones that
 * wipe every block before it is freed: GMP hands the old size to both.
 * Nothing else in modsign uses GMP.
 */
static void *
gmp_alloc(size_t n)
{
	void *p = malloc(n);

	if (p == NULL) {
		abort();	/* GMP itself aborts on a failed allocation */
	}
	return p;
}

static void
gmp_free_wiped(void *p, size_t n)
{
	ms_wipe(p, n);
	free(p);
}

static void *
gmp_realloc_wiped(void *old, size_t old_n, size_t new_n)
{
	void *p = gmp_alloc(new_n);

	memcpy(p, old, old_n < new_n ? old_n : new_n);
	gmp_free_wiped(old, old_n);
	return p;
}

static pthread_once_t gmp_wiping_once = PTHREAD_ONCE_INIT;

static void
gmp_wiping_install(void)
{
	mp_set_memory_functions(gmp_alloc, gmp_realloc_wiped, gmp_free_wiped);
}

/* Wipe every limb @x owns, then free it. */
static void
mpz_wipe_clear(mpz_t x)
{
	ms_wipe(x->_mp_d, (size_t)x->_mp_alloc * sizeof(mp_limb_t));
	mpz_clear(x);
}

/* @out = @in, through a wiped big-endian buffer. */
static ms_err
mpi_to_mpz(const mbedtls_mpi *in, mpz_t out)
{
	uint8_t buf[PART_MAX];
	size_t n = mbedtls_mpi_size(in);
	ms_err err = MS_OK;

	if (n == 0 || n > sizeof(buf) || mbedtls_mpi_write_binary(in, buf, n) != 0) {
		err = MS_E_UNSUPPORTED;
	} else {
		nettle_mpz_set_str_256_u(out, n, buf);
	}
	ms_wipe(buf, sizeof(buf));
	return err;
}

void
ms_signer_hogweed_free(struct ms_hogweed_key *k)
{
	if (k == NULL) {
		return;
	}
	mpz_wipe_clear(k->priv.d);
	mpz_wipe_clear(k->priv.p);
	mpz_wipe_clear(k->priv.q);
	mpz_wipe_clear(k->priv.a);
	mpz_wipe_clear(k->priv.b);
	mpz_wipe_clear(k->priv.c);
	rsa_public_key_clear(&k->pub);
	ms_wipe(k, sizeof(*k));
	free(k);
}

/*
 * What nettle's CRT code assumes of a key and asserts (aborting) rather than
 * checks: odd primes (the side-channel-silent powm needs an odd modulus),
 * a < p, b < q, c < p. mbedTLS parses a key file without checking its CRT
 * parameters, so a hostile file can break each (fuzz target key found one).
 */
static bool
crt_in_range(const struct rsa_private_key *k)
{
	return mpz_cmp_ui(k->p, 1) > 0 && mpz_cmp_ui(k->q, 1) > 0 &&
	       mpz_odd_p(k->p) && mpz_odd_p(k->q) &&
	       mpz_sgn(k->a) > 0 && mpz_cmp(k->a, k->p) < 0 &&
	       mpz_sgn(k->b) > 0 && mpz_cmp(k->b, k->q) < 0 &&
	       mpz_sgn(k->c) > 0 && mpz_cmp(k->c, k->p) < 0;
}

/*
 * nettle's private key (RFC 8017, 3.2, second form): p, q,
 * a = d mod (p - 1), b = d mod (q - 1), c = q^-1 mod p, which are mbedTLS's
 * P, Q, DP, DQ, QP. d itself is not used by the CRT and is left 0.
 */
ms_err
ms_signer_hogweed_new(const mbedtls_rsa_context *rsa, struct ms_hogweed_key **out)
{
	struct ms_hogweed_key *k = NULL;
	mbedtls_mpi n, p, q, e, dp, dq, qp;
	ms_err err = MS_E_INTERNAL;

	*out = NULL;
	pthread_once(&gmp_wiping_once, gmp_wiping_install);
	mbedtls_mpi_init(&n);
	mbedtls_mpi_init(&p);
	mbedtls_mpi_init(&q);
	mbedtls_mpi_init(&e);
	mbedtls_mpi_init(&dp);
	mbedtls_mpi_init(&dq);
	mbedtls_mpi_init(&qp);
	k = calloc(1, sizeof(*k));
	if (k == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	rsa_public_key_init(&k->pub);
	rsa_private_key_init(&k->priv);
	if (mbedtls_rsa_export(rsa, &n, &p, &q, NULL, &e) != 0 ||
	    mbedtls_rsa_export_crt(rsa, &dp, &dq, &qp) != 0) {
		err = MS_E_UNSUPPORTED;	/* no CRT parameters */
		goto out;
	}
	err = mpi_to_mpz(&n, k->pub.n);
	if (err == MS_OK) {
		err = mpi_to_mpz(&e, k->pub.e);
	}
	if (err == MS_OK) {
		err = mpi_to_mpz(&p, k->priv.p);
	}
	if (err == MS_OK) {
		err = mpi_to_mpz(&q, k->priv.q);
	}
	if (err == MS_OK) {
		err = mpi_to_mpz(&dp, k->priv.a);
	}
	if (err == MS_OK) {
		err = mpi_to_mpz(&dq, k->priv.b);
	}
	if (err == MS_OK) {
		err = mpi_to_mpz(&qp, k->priv.c);
	}
	if (err != MS_OK) {
		goto out;
	}
	if (!crt_in_range(&k->priv)) {
		err = MS_E_MALFORMED;
		goto out;
	}
	/* Both compute the signature size; they must agree. */
	if (rsa_public_key_prepare(&k->pub) != 1 || rsa_private_key_prepare(&k->priv) != 1 ||
	    k->pub.size != k->priv.size || k->pub.size != mbedtls_rsa_get_len(rsa)) {
		err = MS_E_UNSUPPORTED;
		goto out;
	}
	*out = k;
	k = NULL;
	err = MS_OK;
out:
	ms_signer_hogweed_free(k);
	/* mbedtls_mpi_free zeroises. */
	mbedtls_mpi_free(&n);
	mbedtls_mpi_free(&p);
	mbedtls_mpi_free(&q);
	mbedtls_mpi_free(&e);
	mbedtls_mpi_free(&dp);
	mbedtls_mpi_free(&dq);
	mbedtls_mpi_free(&qp);
	return err;
}

size_t
ms_signer_hogweed_size(const struct ms_hogweed_key *k)
{
	return k->pub.size;
}

/* An mbedTLS random function (the lane's CTR-DRBG) as nettle calls one. */
struct rng {
	int (*f)(void *, unsigned char *, size_t);
	void *ctx;
	int failed;
};

/* MBEDTLS_CTR_DRBG_MAX_REQUEST: the most one call returns. */
#define RNG_CHUNK 1024

static void
rng_nettle(void *ctx, size_t len, uint8_t *dst)
{
	struct rng *r = ctx;

	while (len > 0) {
		size_t n = len < RNG_CHUNK ? len : RNG_CHUNK;

		if (r->f(r->ctx, dst, n) != 0) {
			/*
			 * nettle cannot be told: the caller is, and drops the
			 * signature. Not zeros: nettle draws blinding values
			 * until one is invertible, and 0 never is.
			 */
			r->failed = 1;
			memset(dst, 0xa5, len);
			return;
		}
		dst += n;
		len -= n;
	}
}

ms_err
ms_signer_hogweed_sign(const struct ms_hogweed_key *k, int (*f_rng)(void *, unsigned char *, size_t),
		       void *p_rng, const uint8_t *tbs, size_t tbs_len, uint8_t *sig,
		       size_t cap, size_t *sig_len)
{
	struct rng r = { f_rng, p_rng, 0 };
	mpz_t s;
	ms_err err = MS_E_INTERNAL;

	if (k->pub.size > cap) {
		return MS_E_NOSPACE;
	}
	/* EMSA-PKCS1-v1_5 (RFC 8017, 9.2 step 3): at least 8 bytes of 0xff padding. */
	if (k->pub.size < 11 || tbs_len > k->pub.size - 11) {
		return MS_E_ARG;
	}
	mpz_init(s);
	/* Blinded, side-channel-silent, and s^e mod n checked against the input. */
	if (rsa_pkcs1_sign_tr(&k->pub, &k->priv, &r, rng_nettle, tbs_len, tbs, s) != 1 ||
	    r.failed != 0) {
		goto out;
	}
	nettle_mpz_get_str_256(k->pub.size, sig, s);
	*sig_len = k->pub.size;
	err = MS_OK;
out:
	mpz_clear(s);		/* the signature: public */
	return err;
}
