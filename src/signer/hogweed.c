// SPDX-License-Identifier: GPL-2.0-only
/*
 * RSA signatures for key files through nettle's hogweed: the key stays
 * parsed by mbedTLS (strictly, as every key file is), its CRT parameters are
 * handed to nettle, and each signature is made as rsa_pkcs1_sign_tr() makes
 * it: the input blinded, the root taken with GMP's side-channel-silent
 * mpn_sec functions (nettle's rsa_compute_root), the result checked against
 * the public key before it leaves; only the blinding pair is made faster
 * (blinding_pair). PKCS#1 v1.5 is deterministic: the bytes are mbedTLS's and
 * sign-file's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mbedtls/bignum.h>
#include <mbedtls/rsa.h>
#include <nettle/bignum.h>
#include <nettle/pkcs1.h>
#include <nettle/rsa.h>

#include "signer_internal.h"

/* Largest modulus read: RSA-16384, as MS_RSA_MAX_BYTES. */
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
	/* GMP's side-channel-silent powm (r^e below) needs an odd modulus too. */
	if (!crt_in_range(&k->priv) || !mpz_odd_p(k->pub.n)) {
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

/* The lane's mbedTLS random function (its CTR-DRBG) and its context. */
struct rng {
	int (*f)(void *, unsigned char *, size_t);
	void *ctx;
};

/* MBEDTLS_CTR_DRBG_MAX_REQUEST: the most one call returns. */
#define RNG_CHUNK 1024

/*
 * @out = a random number below the modulus, nonzero, from the lane's
 * random function: 64 bits more than the modulus, reduced (bias 2^-64).
 */
static ms_err
random_below_n(const struct ms_hogweed_key *k, const struct rng *r, mpz_t out)
{
	uint8_t buf[PART_MAX + 8];
	size_t n = k->pub.size + 8;
	ms_err err = MS_OK;

	for (size_t done = 0; done < n && err == MS_OK; done += RNG_CHUNK) {
		size_t len = n - done < RNG_CHUNK ? n - done : RNG_CHUNK;

		if (r->f(r->ctx, buf + done, len) != 0) {
			err = MS_E_INTERNAL;	/* no randomness: no signature */
		}
	}
	if (err == MS_OK) {
		nettle_mpz_set_str_256_u(out, n, buf);
		mpz_mod(out, out, k->pub.n);
		err = mpz_sgn(out) != 0 ? MS_OK : MS_E_INTERNAL;
	}
	ms_wipe(buf, sizeof(buf));
	return err;
}

/*
 * A blinding pair: @re = r^e and @ri = r^-1 (mod n) for a fresh random r.
 * The inverse comes from GMP's fast mpz_invert of r*u, u another random
 * number: r*u is uniform and independent of r, so the inversion's timing
 * tells nothing of r. (nettle's rsa_pkcs1_sign_tr inverts r with the
 * side-channel-silent mpn_sec_invert: 1.2 ms of its 2.9 ms for RSA-2048.)
 */
static ms_err
blinding_pair(const struct ms_hogweed_key *k, const struct rng *r, mpz_t re, mpz_t ri)
{
	mpz_t u, ru;
	ms_err err;

	mpz_init(u);
	mpz_init(ru);
	for (int tries = 0;; tries++) {
		err = random_below_n(k, r, re);
		if (err == MS_OK) {
			err = random_below_n(k, r, u);
		}
		if (err != MS_OK) {
			goto out;
		}
		mpz_mul(ru, re, u);
		mpz_mod(ru, ru, k->pub.n);
		if (mpz_invert(ri, ru, k->pub.n) != 0) {
			break;	/* r and u are units mod n: all but a 2^-1000 chance */
		}
		if (tries == 3) {
			err = MS_E_INTERNAL;
			goto out;
		}
	}
	mpz_mul(ri, ri, u);		/* (r u)^-1 u = r^-1 */
	mpz_mod(ri, ri, k->pub.n);
	mpz_powm_sec(re, re, k->pub.e, k->pub.n);	/* r^e; r is secret */
out:
	mpz_wipe_clear(u);
	mpz_wipe_clear(ru);
	return err;
}

ms_err
ms_signer_hogweed_sign(const struct ms_hogweed_key *k, int (*f_rng)(void *, unsigned char *, size_t),
		       void *p_rng, const uint8_t *tbs, size_t tbs_len, uint8_t *sig,
		       size_t cap, size_t *sig_len)
{
	struct rng r = { f_rng, p_rng };
	mpz_t m, re, ri, x, s;
	ms_err err = MS_E_INTERNAL;

	if (k->pub.size > cap) {
		return MS_E_NOSPACE;
	}
	/* EMSA-PKCS1-v1_5 (RFC 8017, 9.2 step 3): at least 8 bytes of 0xff padding. */
	if (k->pub.size < 11 || tbs_len > k->pub.size - 11) {
		return MS_E_ARG;
	}
	mpz_init(m);
	mpz_init(re);
	mpz_init(ri);
	mpz_init(x);
	mpz_init(s);
	if (pkcs1_rsa_digest_encode(m, k->pub.size, tbs_len, tbs) != 1) {
		err = MS_E_ARG;
		goto out;
	}
	/*
	 * s = (m r^e)^d r^-1 = m^d (mod n): the root is taken of a uniformly
	 * random number, with nettle's CRT over GMP's side-channel-silent
	 * mpn_sec_powm.
	 */
	err = blinding_pair(k, &r, re, ri);
	if (err != MS_OK) {
		goto out;
	}
	mpz_mul(s, m, re);
	mpz_mod(s, s, k->pub.n);
	rsa_compute_root(&k->priv, x, s);	/* not in place: nettle writes x first */
	mpz_mul(s, x, ri);
	mpz_mod(s, s, k->pub.n);
	/*
	 * s^e = m or nothing leaves: a CRT result broken by a fault (or by a
	 * key whose parts do not agree) would give away the factors of n.
	 * s is the signature, public: GMP's plain powm is enough.
	 */
	mpz_powm(x, s, k->pub.e, k->pub.n);
	if (mpz_cmp(x, m) != 0) {
		err = MS_E_INTERNAL;
		goto out;
	}
	nettle_mpz_get_str_256(k->pub.size, sig, s);
	*sig_len = k->pub.size;
	err = MS_OK;
out:
	mpz_wipe_clear(re);
	mpz_wipe_clear(ri);
	mpz_wipe_clear(x);
	mpz_clear(m);		/* the padded DigestInfo: public */
	mpz_wipe_clear(s);	/* the blinded input on the way, then the signature */
	return err;
}

ms_err
ms_signer_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len)
{
	*out_len = 1;
	if (out == NULL) {
		return MS_OK;
	}
	if (cap < 1) {
		return MS_E_NOSPACE;
	}
	return ms_libver_set(&out[0], "GMP", gmp_version, false);
}
