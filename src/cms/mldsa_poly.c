// SPDX-License-Identifier: GPL-2.0-only
/*
 * The polynomial arithmetic of ML-DSA verification (FIPS 204): the NTT over
 * Z_q[X]/(X^256 + 1), the sampling of A and of the challenge c, and
 * UseHint. Plain arithmetic on public data, every coefficient kept in
 * [0, q): clear before fast, and nothing here needs to be constant-time.
 */
#include <string.h>

#include "cms_internal.h"

#define Q MS_MLDSA_Q

/* zetas[i] = 1753^BitRev8(i) mod q (FIPS 204, Appendix B); 1753 is a 512th root of unity. */
static const uint32_t zetas[MS_MLDSA_N] = {
	1, 4808194, 3765607, 3761513, 5178923, 5496691, 5234739, 5178987,
	7778734, 3542485, 2682288, 2129892, 3764867, 7375178, 557458, 7159240,
	5010068, 4317364, 2663378, 6705802, 4855975, 7946292, 676590, 7044481,
	5152541, 1714295, 2453983, 1460718, 7737789, 4795319, 2815639, 2283733,
	3602218, 3182878, 2740543, 4793971, 5269599, 2101410, 3704823, 1159875,
	394148, 928749, 1095468, 4874037, 2071829, 4361428, 3241972, 2156050,
	3415069, 1759347, 7562881, 4805951, 3756790, 6444618, 6663429, 4430364,
	5483103, 3192354, 556856, 3870317, 2917338, 1853806, 3345963, 1858416,
	3073009, 1277625, 5744944, 3852015, 4183372, 5157610, 5258977, 8106357,
	2508980, 2028118, 1937570, 4564692, 2811291, 5396636, 7270901, 4158088,
	1528066, 482649, 1148858, 5418153, 7814814, 169688, 2462444, 5046034,
	4213992, 4892034, 1987814, 5183169, 1736313, 235407, 5130263, 3258457,
	5801164, 1787943, 5989328, 6125690, 3482206, 4197502, 7080401, 6018354,
	7062739, 2461387, 3035980, 621164, 3901472, 7153756, 2925816, 3374250,
	1356448, 5604662, 2683270, 5601629, 4912752, 2312838, 7727142, 7921254,
	348812, 8052569, 1011223, 6026202, 4561790, 6458164, 6143691, 1744507,
	1753, 6444997, 5720892, 6924527, 2660408, 6600190, 8321269, 2772600,
	1182243, 87208, 636927, 4415111, 4423672, 6084020, 5095502, 4663471,
	8352605, 822541, 1009365, 5926272, 6400920, 1596822, 4423473, 4620952,
	6695264, 4969849, 2678278, 4611469, 4829411, 635956, 8129971, 5925040,
	4234153, 6607829, 2192938, 6653329, 2387513, 4768667, 8111961, 5199961,
	3747250, 2296099, 1239911, 4541938, 3195676, 2642980, 1254190, 8368000,
	2998219, 141835, 8291116, 2513018, 7025525, 613238, 7070156, 6161950,
	7921677, 6458423, 4040196, 4908348, 2039144, 6500539, 7561656, 6201452,
	6757063, 2105286, 6006015, 6346610, 586241, 7200804, 527981, 5637006,
	6903432, 1994046, 2491325, 6987258, 507927, 7192532, 7655613, 6545891,
	5346675, 8041997, 2647994, 3009748, 5767564, 4148469, 749577, 4357667,
	3980599, 2569011, 6764887, 1723229, 1665318, 2028038, 1163598, 5011144,
	3994671, 8368538, 7009900, 3020393, 3363542, 214880, 545376, 7609976,
	3105558, 7277073, 508145, 7826699, 860144, 3430436, 140244, 6866265,
	6195333, 3123762, 2358373, 6187330, 5365997, 6663603, 2926054, 7987710,
	8077412, 3531229, 4405932, 4606686, 1900052, 7598542, 1054478, 7648983,
};

static uint32_t
mulq(uint32_t a, uint32_t b)
{
	return (uint32_t)(((uint64_t)a * b) % Q);
}

static uint32_t
addq(uint32_t a, uint32_t b)
{
	uint32_t s = a + b;	/* both below q < 2^23: no overflow */

	return (s >= Q) ? s - Q : s;
}

static uint32_t
subq(uint32_t a, uint32_t b)
{
	return (a >= b) ? a - b : a + Q - b;
}

/* NTT (FIPS 204, Algorithm 41), in place. */
void
ms_mldsa_ntt(struct ms_mldsa_poly *w)
{
	size_t m = 0, len, start, j;

	for (len = 128; len >= 1; len /= 2) {
		for (start = 0; start < MS_MLDSA_N; start += 2 * len) {
			uint32_t z = zetas[++m];

			for (j = start; j < start + len; j++) {
				uint32_t t = mulq(z, w->c[j + len]);

				w->c[j + len] = subq(w->c[j], t);
				w->c[j] = addq(w->c[j], t);
			}
		}
	}
}

/* NTT^-1 (FIPS 204, Algorithm 42), in place. */
void
ms_mldsa_ntt_inv(struct ms_mldsa_poly *w)
{
	/* 256^-1 mod q */
	static const uint32_t f = 8347681;
	size_t m = MS_MLDSA_N, len, start, j;

	for (len = 1; len < MS_MLDSA_N; len *= 2) {
		for (start = 0; start < MS_MLDSA_N; start += 2 * len) {
			uint32_t z = Q - zetas[--m];

			for (j = start; j < start + len; j++) {
				uint32_t t = w->c[j];

				w->c[j] = addq(t, w->c[j + len]);
				w->c[j + len] = mulq(z, subq(t, w->c[j + len]));
			}
		}
	}
	for (j = 0; j < MS_MLDSA_N; j++) {
		w->c[j] = mulq(f, w->c[j]);
	}
}

void
ms_mldsa_mul_acc(struct ms_mldsa_poly *acc, const struct ms_mldsa_poly *a,
		 const struct ms_mldsa_poly *b)
{
	size_t i;

	for (i = 0; i < MS_MLDSA_N; i++) {
		acc->c[i] = addq(acc->c[i], mulq(a->c[i], b->c[i]));
	}
}

void
ms_mldsa_mul_sub(struct ms_mldsa_poly *acc, const struct ms_mldsa_poly *a,
		 const struct ms_mldsa_poly *b)
{
	size_t i;

	for (i = 0; i < MS_MLDSA_N; i++) {
		acc->c[i] = subq(acc->c[i], mulq(a->c[i], b->c[i]));
	}
}

/*
 * A-hat[r][s] = RejNTTPoly(rho || s || r) (FIPS 204, Algorithms 30 and 32):
 * SHAKE128 read 3 bytes at a time, 23 bits each, values below q kept.
 */
void
ms_mldsa_expand_a(struct ms_mldsa_poly *a, const uint8_t rho[32], uint8_t r, uint8_t s)
{
	struct ms_keccak k;
	uint8_t seed[34], buf[MS_SHAKE128_RATE];
	size_t n = 0, i;

	memcpy(seed, rho, 32);
	seed[32] = s;
	seed[33] = r;
	ms_keccak_init(&k, MS_SHAKE128_RATE);
	ms_keccak_absorb(&k, seed, sizeof(seed));
	/* The rate is 56 triples: a block never splits one. */
	while (n < MS_MLDSA_N) {
		ms_keccak_squeeze(&k, buf, sizeof(buf));
		for (i = 0; i + 3 <= sizeof(buf) && n < MS_MLDSA_N; i += 3) {
			uint32_t v = (uint32_t)buf[i] | (uint32_t)buf[i + 1] << 8 |
				     (uint32_t)(buf[i + 2] & 0x7f) << 16;

			if (v < Q) {
				a->c[n++] = v;
			}
		}
	}
}

/*
 * SampleInBall (FIPS 204, Algorithm 29): @tau coefficients +-1, the rest 0,
 * from SHAKE256 of the whole c-tilde. The loop ends: each byte drawn is a
 * fresh SHAKE output, and a byte <= i comes with probability >= 196/256.
 */
void
ms_mldsa_sample_in_ball(struct ms_mldsa_poly *c, const uint8_t *ctilde, size_t ctilde_len,
			unsigned int tau)
{
	struct ms_keccak k;
	uint8_t signs[8], j = 0;
	size_t i;

	memset(c, 0, sizeof(*c));
	ms_keccak_init(&k, MS_SHAKE256_RATE);
	ms_keccak_absorb(&k, ctilde, ctilde_len);
	ms_keccak_squeeze(&k, signs, sizeof(signs));
	for (i = MS_MLDSA_N - tau; i < MS_MLDSA_N; i++) {
		size_t bit = i + tau - MS_MLDSA_N;

		do {
			ms_keccak_squeeze(&k, &j, 1);
		} while (j > i);
		c->c[i] = c->c[j];
		c->c[j] = ((signs[bit / 8] >> (bit % 8)) & 1) ? Q - 1 : 1;
	}
}

/*
 * UseHint (FIPS 204, Algorithm 40) with Decompose (Algorithm 36) for
 * @r in [0, q): the high bits of r, moved by one (mod m) where @hint says.
 */
uint32_t
ms_mldsa_use_hint(uint32_t r, bool hint, uint32_t gamma2)
{
	uint32_t m = (Q - 1) / (2 * gamma2);
	int64_t r0 = (int64_t)(r % (2 * gamma2));
	uint32_t r1;

	if (r0 > (int64_t)gamma2) {
		r0 -= 2 * (int64_t)gamma2;
	}
	if ((int64_t)r - r0 == (int64_t)Q - 1) {
		r1 = 0;
		r0 -= 1;
	} else {
		r1 = (uint32_t)(((int64_t)r - r0) / (2 * (int64_t)gamma2));
	}
	if (!hint) {
		return r1;
	}
	return (r0 > 0) ? (r1 + 1) % m : (r1 + m - 1) % m;
}
