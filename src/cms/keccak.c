// SPDX-License-Identifier: GPL-2.0-only
/*
 * SHAKE128 and SHAKE256 (FIPS 202) with incremental absorb and squeeze, as
 * ML-DSA needs them: nettle 3.8 (Debian 12) has no SHAKE128 and squeezes
 * SHAKE256 only once. The sponge is ours; the Keccak-f[1600] permutation is
 * nettle's sha3_permute(), the one SHA-3 of modsign (digest.c). Public data
 * only: nothing here needs to be side-channel silent.
 */
#include <string.h>

#include <nettle/sha3.h>

#include "cms_internal.h"

_Static_assert(sizeof(((struct sha3_state *)0)->a) == sizeof(((struct ms_keccak *)0)->a),
	       "nettle's Keccak state is 25 lanes of 64 bits");

/* nettle keeps the lanes in its own struct; a copy costs little next to the rounds. */
static void
permute(struct ms_keccak *k)
{
	struct sha3_state st;

	memcpy(st.a, k->a, sizeof(st.a));
	sha3_permute(&st);
	memcpy(k->a, st.a, sizeof(k->a));
}

static void
xor_byte(struct ms_keccak *k, size_t at, uint8_t b)
{
	/* FIPS 202, B.1: byte i of the state is byte i % 8 of lane i / 8, little-endian. */
	k->a[at / 8] ^= (uint64_t)b << (8 * (at % 8));
}

void
ms_keccak_init(struct ms_keccak *k, size_t rate)
{
	memset(k, 0, sizeof(*k));
	k->rate = rate;
}

void
ms_keccak_absorb(struct ms_keccak *k, const uint8_t *p, size_t len)
{
	size_t i;

	/* Input after the first squeeze would be a bug of ours: dropped, never a crash. */
	if (k->is_squeezing || k->rate == 0 || k->rate > MS_KECCAK_WIDTH) {
		return;
	}
	while (len > 0) {
		if (k->pos % 8 == 0 && len >= 8 && k->rate - k->pos >= 8) {
			uint64_t lane = 0;

			for (i = 0; i < 8; i++) {
				lane |= (uint64_t)p[i] << (8 * i);
			}
			k->a[k->pos / 8] ^= lane;
			k->pos += 8;
			p += 8;
			len -= 8;
		} else {
			xor_byte(k, k->pos, *p);
			k->pos++;
			p++;
			len--;
		}
		if (k->pos == k->rate) {
			permute(k);
			k->pos = 0;
		}
	}
}

void
ms_keccak_squeeze(struct ms_keccak *k, uint8_t *out, size_t len)
{
	if (k->rate == 0 || k->rate > MS_KECCAK_WIDTH) {
		memset(out, 0, len);
		return;
	}
	if (!k->is_squeezing) {
		/* SHAKE's domain bits 1111 and pad10*1 (FIPS 202, 6.2 and 5.1). */
		xor_byte(k, k->pos, 0x1f);
		xor_byte(k, k->rate - 1, 0x80);
		permute(k);
		k->pos = 0;
		k->is_squeezing = true;
	}
	while (len > 0) {
		if (k->pos == k->rate) {
			permute(k);
			k->pos = 0;
		}
		*out = (uint8_t)(k->a[k->pos / 8] >> (8 * (k->pos % 8)));
		k->pos++;
		out++;
		len--;
	}
}
