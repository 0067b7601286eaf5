// SPDX-License-Identifier: GPL-2.0-only
/*
 * ML-DSA signature verification (FIPS 204, Algorithms 3 and 8), ours
 * because no library on Debian 12 has it. Verify only: public key,
 * signature and message are public, so nothing here guards against side
 * channels; every length, hint and norm rule of FIPS 204 is checked.
 * Parses untrusted input (public keys and signatures).
 */
#include <string.h>

#include "cms_internal.h"

#define Q MS_MLDSA_Q
#define D_BITS 13	/* d: dropped bits of t (FIPS 204, Table 1) */
#define RHO_LEN 32
#define TR_LEN 64
#define T1_ROW_LEN 320	/* 256 coefficients of 10 bits */

/* FIPS 204, Table 1 and Table 2. */
static const struct ms_mldsa_params params_table[] = {
	{ MS_MLDSA_44, 4, 4, 39, 78, 80, 1u << 17, (Q - 1) / 88, 32, MS_MLDSA44_PK_BYTES,
	  MS_MLDSA44_SIG_BYTES },
	{ MS_MLDSA_65, 6, 5, 49, 196, 55, 1u << 19, (Q - 1) / 32, 48, MS_MLDSA65_PK_BYTES,
	  MS_MLDSA65_SIG_BYTES },
	{ MS_MLDSA_87, 8, 7, 60, 120, 75, 1u << 19, (Q - 1) / 32, 64, MS_MLDSA87_PK_BYTES,
	  MS_MLDSA87_SIG_BYTES },
};

const struct ms_mldsa_params *
ms_mldsa_params(enum ms_mldsa_set set)
{
	size_t i;

	for (i = 0; i < sizeof(params_table) / sizeof(params_table[0]); i++) {
		if (params_table[i].set == set) {
			return &params_table[i];
		}
	}
	return NULL;
}

size_t
ms_cms_mldsa_pk_len(enum ms_mldsa_set set)
{
	const struct ms_mldsa_params *p = ms_mldsa_params(set);

	return (p == NULL) ? 0 : p->pk_len;
}

size_t
ms_cms_mldsa_sig_len(enum ms_mldsa_set set)
{
	const struct ms_mldsa_params *p = ms_mldsa_params(set);

	return (p == NULL) ? 0 : p->sig_len;
}

/* Bits of one z coefficient: bitlen(2 * gamma1 - 1), 18 or 20. */
static unsigned int
z_bits(const struct ms_mldsa_params *p)
{
	return (p->gamma1 == (1u << 17)) ? 18 : 20;
}

/* Bits of one w1 coefficient: bitlen((q - 1) / (2 * gamma2) - 1), 6 or 4. */
static unsigned int
w1_bits(const struct ms_mldsa_params *p)
{
	return (p->gamma2 == (Q - 1) / 88) ? 6 : 4;
}

/* Coefficient @i of @bits bits each, little-endian bit order (FIPS 204, Algorithm 18). */
static uint32_t
get_bits(const uint8_t *p, size_t i, unsigned int bits)
{
	size_t at = i * bits;
	uint32_t v = 0;
	unsigned int got = 0;

	while (got < bits) {
		unsigned int shift = (unsigned int)(at % 8);
		unsigned int take = 8 - shift;

		if (take > bits - got) {
			take = bits - got;
		}
		v |= (((uint32_t)p[at / 8] >> shift) & ((1u << take) - 1)) << got;
		got += take;
		at += take;
	}
	return v;
}

/*
 * z (FIPS 204, Algorithm 27 with BitUnpack, Algorithm 19): each
 * coefficient gamma1 - v, taken mod q; and ||z||_inf < gamma1 - beta
 * (Algorithm 8, step 13), checked here already: both checks must pass.
 */
static ms_err
z_decode(const struct ms_mldsa_params *p, const uint8_t *in, struct ms_mldsa_poly *z)
{
	unsigned int bits = z_bits(p);
	int64_t bound = (int64_t)p->gamma1 - p->beta;
	size_t i;

	for (i = 0; i < MS_MLDSA_N; i++) {
		int64_t v = (int64_t)p->gamma1 - get_bits(in, i, bits);

		if (v >= bound || -v >= bound) {
			return MS_E_MISMATCH;
		}
		z->c[i] = (uint32_t)((v < 0) ? v + Q : v);
	}
	return MS_OK;
}

/*
 * HintBitUnpack (FIPS 204, Algorithm 21): @y holds omega positions, then k
 * running totals. Each row's positions strictly increasing, totals never
 * falling or above omega, unused positions zero: so every hint vector has
 * exactly one encoding (strong unforgeability).
 */
static ms_err
hint_decode(const struct ms_mldsa_params *p, const uint8_t *y, uint8_t h[][MS_MLDSA_N])
{
	size_t index = 0, i;

	memset(h, 0, p->k * sizeof(h[0]));
	for (i = 0; i < p->k; i++) {
		size_t end = y[p->omega + i], first = index;

		if (end < index || end > p->omega) {
			return MS_E_MISMATCH;
		}
		for (; index < end; index++) {
			if (index > first && y[index - 1] >= y[index]) {
				return MS_E_MISMATCH;
			}
			h[i][y[index]] = 1;
		}
	}
	for (; index < p->omega; index++) {
		if (y[index] != 0) {
			return MS_E_MISMATCH;
		}
	}
	return MS_OK;
}

/* Row @r of t1 times 2^d (FIPS 204, Algorithm 23): 1023 * 2^13 = q - 1, no reduction. */
static void
t1_row(const uint8_t *pk, size_t r, struct ms_mldsa_poly *t)
{
	const uint8_t *row = pk + RHO_LEN + r * T1_ROW_LEN;
	size_t i;

	for (i = 0; i < MS_MLDSA_N; i++) {
		t->c[i] = get_bits(row, i, 10) << D_BITS;
	}
}

/* w1Encode of one row (FIPS 204, Algorithm 28) into @out: 192 or 128 bytes. */
static size_t
w1_row_encode(const struct ms_mldsa_params *p, const struct ms_mldsa_poly *w,
	      const uint8_t *hint, uint8_t *out)
{
	unsigned int bits = w1_bits(p);
	uint32_t acc = 0;
	unsigned int have = 0;
	size_t n = 0, i;

	for (i = 0; i < MS_MLDSA_N; i++) {
		acc |= ms_mldsa_use_hint(w->c[i], hint[i] != 0, p->gamma2) << have;
		have += bits;
		while (have >= 8) {
			out[n++] = (uint8_t)acc;
			acc >>= 8;
			have -= 8;
		}
	}
	return n;
}

/* What verification keeps: about 13 KiB, on the caller's stack. */
struct verify_state {
	struct ms_mldsa_poly zhat[MS_MLDSA_L_MAX];
	struct ms_mldsa_poly chat, a, t, w;
	uint8_t h[MS_MLDSA_K_MAX][MS_MLDSA_N];
	uint8_t w1[192];
};

ms_err
ms_mldsa_sig_decode(const struct ms_mldsa_params *p, const uint8_t *sig,
		    struct ms_mldsa_poly z[MS_MLDSA_L_MAX], uint8_t h[MS_MLDSA_K_MAX][MS_MLDSA_N])
{
	const size_t z_len = MS_MLDSA_N * z_bits(p) / 8;
	const uint8_t *zs = sig + p->ctilde_len;
	size_t s;
	ms_err err;

	if (p->l > MS_MLDSA_L_MAX || p->k > MS_MLDSA_K_MAX) {
		return MS_E_INTERNAL;
	}
	err = hint_decode(p, zs + p->l * z_len, h);
	for (s = 0; s < p->l && err == MS_OK; s++) {
		err = z_decode(p, zs + s * z_len, &z[s]);
	}
	return err;
}

/*
 * ML-DSA.Verify_internal (FIPS 204, Algorithm 8) from step 6 on, given mu;
 * the lengths of @pk and @sig are the parameter set's.
 */
static ms_err
verify_mu(const struct ms_mldsa_params *p, const uint8_t *pk, const uint8_t mu[MS_MLDSA_MU_LEN],
	  const uint8_t *sig, struct verify_state *st)
{
	const uint8_t *ctilde = sig;
	uint8_t check[64];
	struct ms_keccak h;
	size_t r, s, n;
	ms_err err;

	if (p->ctilde_len > sizeof(check)) {
		return MS_E_INTERNAL;
	}
	/* sigDecode (Algorithm 27); a hint that does not decode is "return false". */
	err = ms_mldsa_sig_decode(p, sig, st->zhat, st->h);
	if (err != MS_OK) {
		return err;
	}
	for (s = 0; s < p->l; s++) {
		ms_mldsa_ntt(&st->zhat[s]);
	}
	ms_mldsa_sample_in_ball(&st->chat, ctilde, p->ctilde_len, p->tau);
	ms_mldsa_ntt(&st->chat);
	/* c-tilde' = H(mu || w1Encode(w1'), lambda / 4), w1' a row at a time. */
	ms_keccak_init(&h, MS_SHAKE256_RATE);
	ms_keccak_absorb(&h, mu, MS_MLDSA_MU_LEN);
	for (r = 0; r < p->k; r++) {
		memset(&st->w, 0, sizeof(st->w));
		for (s = 0; s < p->l; s++) {
			ms_mldsa_expand_a(&st->a, pk, (uint8_t)r, (uint8_t)s);
			ms_mldsa_mul_acc(&st->w, &st->a, &st->zhat[s]);
		}
		t1_row(pk, r, &st->t);
		ms_mldsa_ntt(&st->t);
		ms_mldsa_mul_sub(&st->w, &st->chat, &st->t);
		ms_mldsa_ntt_inv(&st->w);
		n = w1_row_encode(p, &st->w, st->h[r], st->w1);
		ms_keccak_absorb(&h, st->w1, n);
	}
	ms_keccak_squeeze(&h, check, p->ctilde_len);
	return (memcmp(check, ctilde, p->ctilde_len) == 0) ? MS_OK : MS_E_MISMATCH;
}

static ms_err
check_lengths(const struct ms_mldsa_params *p, const uint8_t *pk, size_t pk_len,
	      const uint8_t *sig, size_t sig_len)
{
	if (p == NULL || pk == NULL || sig == NULL) {
		return MS_E_ARG;
	}
	if (pk_len != p->pk_len) {
		return MS_E_MALFORMED;
	}
	if (sig_len != p->sig_len) {
		return MS_E_MISMATCH;
	}
	return MS_OK;
}

ms_err
ms_mldsa_verify_mu(enum ms_mldsa_set set, const uint8_t *pk, size_t pk_len,
		   const uint8_t mu[MS_MLDSA_MU_LEN], const uint8_t *sig, size_t sig_len)
{
	const struct ms_mldsa_params *p = ms_mldsa_params(set);
	struct verify_state st;
	ms_err err;

	err = check_lengths(p, pk, pk_len, sig, sig_len);
	if (err != MS_OK) {
		return err;
	}
	if (mu == NULL) {
		return MS_E_ARG;
	}
	return verify_mu(p, pk, mu, sig, &st);
}

ms_err
ms_cms_mldsa_verify(enum ms_mldsa_set set, const uint8_t *pk, size_t pk_len,
		    const uint8_t *ctx, size_t ctx_len, const struct ms_span *msg, size_t n_msg,
		    const uint8_t *sig, size_t sig_len)
{
	const struct ms_mldsa_params *p = ms_mldsa_params(set);
	uint8_t tr[TR_LEN], mu[MS_MLDSA_MU_LEN], head[2];
	struct ms_keccak h;
	size_t i;
	ms_err err;

	err = check_lengths(p, pk, pk_len, sig, sig_len);
	if (err != MS_OK) {
		return err;
	}
	/* Algorithm 3, step 1: a context longer than 255 bytes is an error. */
	if (ctx_len > 255 || (ctx == NULL && ctx_len != 0) || (msg == NULL && n_msg != 0)) {
		return MS_E_ARG;
	}
	for (i = 0; i < n_msg; i++) {
		if (msg[i].p == NULL && msg[i].len != 0) {
			return MS_E_ARG;
		}
	}
	/* tr = H(pk, 64); mu = H(tr || M', 64), M' = 0 || |ctx| || ctx || M (Algorithms 3 and 8). */
	ms_keccak_init(&h, MS_SHAKE256_RATE);
	ms_keccak_absorb(&h, pk, pk_len);
	ms_keccak_squeeze(&h, tr, sizeof(tr));
	ms_keccak_init(&h, MS_SHAKE256_RATE);
	ms_keccak_absorb(&h, tr, sizeof(tr));
	head[0] = 0;
	head[1] = (uint8_t)ctx_len;
	ms_keccak_absorb(&h, head, sizeof(head));
	if (ctx_len != 0) {
		ms_keccak_absorb(&h, ctx, ctx_len);
	}
	for (i = 0; i < n_msg; i++) {
		if (msg[i].len != 0) {
			ms_keccak_absorb(&h, msg[i].p, msg[i].len);
		}
	}
	ms_keccak_squeeze(&h, mu, sizeof(mu));
	return ms_mldsa_verify_mu(set, pk, pk_len, mu, sig, sig_len);
}
