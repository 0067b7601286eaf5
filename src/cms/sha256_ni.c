// SPDX-License-Identifier: GPL-2.0-only
/*
 * SHA-256 and SHA-224 with the x86 SHA extensions (SHA-NI). mbedTLS 2.28
 * has no such path and hashes at about a quarter of this speed; in a bulk
 * run with a fast token that was a fifth of all CPU time. Used only when
 * the CPU has the instructions; the tests check it against mbedTLS.
 * The round code follows Intel's published sample (Gulley et al., "Intel
 * SHA Extensions", 2013).
 */
#include <string.h>

#include "cms_internal.h"

#if MS_HAVE_SHA_NI

#include <cpuid.h>
#include <immintrin.h>

static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

bool
ms_sha256_ni_available(void)
{
	unsigned int a, b, c, d;

	/* SSSE3 and SSE4.1 (leaf 1, ECX bits 9 and 19), SHA (leaf 7, EBX bit 29). */
	if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 9)) == 0 ||
	    (c & (1u << 19)) == 0) {
		return false;
	}
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) {
		return false;
	}
	return (b & (1u << 29)) != 0;
}

/* Four rounds of group @g on message words @w, then the next group's words. */
#define ROUNDS4(w, g)                                                               \
	do {                                                                        \
		__m128i m_ = _mm_add_epi32((w), _mm_loadu_si128(                     \
						       (const __m128i *)&k256[4 * (g)])); \
		s1 = _mm_sha256rnds2_epu32(s1, s0, m_);                             \
		m_ = _mm_shuffle_epi32(m_, 0x0e);                                   \
		s0 = _mm_sha256rnds2_epu32(s0, s1, m_);                             \
	} while (0)

/* W[g+4] from W[g], W[g+1], W[g+2], W[g+3], four words at a time. */
#define SCHEDULE(w0, w1, w2, w3) \
	(w0) = _mm_sha256msg2_epu32( \
		_mm_add_epi32(_mm_sha256msg1_epu32((w0), (w1)), _mm_alignr_epi8((w3), (w2), 4)), (w3))

__attribute__((target("sha,sse4.1,ssse3"))) static void
blocks_ni(uint32_t state[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
	__m128i s0, s1, t, abef, cdgh, w0, w1, w2, w3;

	/* The state as the instructions want it: ABEF and CDGH. */
	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xb1);
	s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1b);
	s0 = _mm_alignr_epi8(t, s1, 8);
	s1 = _mm_blend_epi16(s1, t, 0xf0);

	for (; n > 0; n--, p += 64) {
		abef = s0;
		cdgh = s1;
		w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 0)), bswap);
		w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), bswap);
		w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), bswap);
		w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), bswap);
		for (int g = 0; g < 12; g += 4) {
			ROUNDS4(w0, g);
			SCHEDULE(w0, w1, w2, w3);
			ROUNDS4(w1, g + 1);
			SCHEDULE(w1, w2, w3, w0);
			ROUNDS4(w2, g + 2);
			SCHEDULE(w2, w3, w0, w1);
			ROUNDS4(w3, g + 3);
			SCHEDULE(w3, w0, w1, w2);
		}
		ROUNDS4(w0, 12);
		ROUNDS4(w1, 13);
		ROUNDS4(w2, 14);
		ROUNDS4(w3, 15);
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}

	/* Back to A..H. */
	t = _mm_shuffle_epi32(s0, 0x1b);
	s1 = _mm_shuffle_epi32(s1, 0xb1);
	_mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(t, s1, 0xf0));
	_mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(s1, t, 8));
}

static const uint32_t iv256[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};
static const uint32_t iv224[8] = {
	0xc1059ed8, 0x367cd507, 0x3070dd17, 0xf70e5939,
	0xffc00b31, 0x68581511, 0x64f98fa7, 0xbefa4fa4,
};

void
ms_sha256_ni_start(struct ms_sha256_ni *c, bool is224)
{
	memcpy(c->h, is224 ? iv224 : iv256, sizeof(c->h));
	c->total = 0;
	c->used = 0;
	c->is224 = is224;
}

void
ms_sha256_ni_update(struct ms_sha256_ni *c, const uint8_t *p, size_t len)
{
	c->total += len;
	if (c->used > 0) {
		size_t take = sizeof(c->buf) - c->used;

		if (take > len) {
			take = len;
		}
		memcpy(c->buf + c->used, p, take);
		c->used += take;
		p += take;
		len -= take;
		if (c->used < sizeof(c->buf)) {
			return;
		}
		blocks_ni(c->h, c->buf, 1);
		c->used = 0;
	}
	if (len >= 64) {
		blocks_ni(c->h, p, len / 64);
		p += len - len % 64;
		len %= 64;
	}
	if (len > 0) {
		memcpy(c->buf, p, len);
		c->used = len;
	}
}

size_t
ms_sha256_ni_finish(struct ms_sha256_ni *c, uint8_t *out)
{
	uint64_t bits = c->total * 8;
	size_t words = c->is224 ? 7 : 8;

	/* 0x80, zeros up to 56 mod 64, the bit length big-endian. */
	c->buf[c->used++] = 0x80;
	if (c->used > 56) {
		memset(c->buf + c->used, 0, 64 - c->used);
		blocks_ni(c->h, c->buf, 1);
		c->used = 0;
	}
	memset(c->buf + c->used, 0, 56 - c->used);
	for (int i = 0; i < 8; i++) {
		c->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	}
	blocks_ni(c->h, c->buf, 1);
	for (size_t i = 0; i < words; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
	ms_sha256_ni_start(c, c->is224);
	return words * 4;
}

#else /* !MS_HAVE_SHA_NI */

bool
ms_sha256_ni_available(void)
{
	return false;
}

#endif
