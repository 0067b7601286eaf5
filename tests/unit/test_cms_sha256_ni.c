// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/cms/sha256_ni.c: SHA-256 and SHA-224 by SHA-NI equal
 * mbedTLS's for every length around the block and padding edges, fed whole
 * and in uneven pieces. Skipped (with a note) on a CPU without SHA-NI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/md.h>

#include "test.h"
#include "test_cms.h"

#if MS_HAVE_SHA_NI

static bool
ni_or_note(void)
{
	if (!ms_sha256_ni_available()) {
		fprintf(stderr, "note: this CPU has no SHA-NI; sha256_ni tests skipped\n");
		return false;
	}
	return true;
}

static void
fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* Our digest of @p in pieces of @step bytes (0: one piece) against mbedTLS. */
static void
check_one(const uint8_t *p, size_t n, bool is224, size_t step)
{
	struct ms_sha256_ni c;
	uint8_t got[32], want[32];
	mbedtls_md_type_t t = is224 ? MBEDTLS_MD_SHA224 : MBEDTLS_MD_SHA256;
	size_t len;

	CHECK(mbedtls_md(mbedtls_md_info_from_type(t), p, n, want) == 0);
	ms_sha256_ni_start(&c, is224);
	for (size_t off = 0; off < n;) {
		size_t k = step == 0 || n - off < step ? n - off : step;

		ms_sha256_ni_update(&c, p + off, k);
		off += k;
	}
	len = ms_sha256_ni_finish(&c, got);
	CHECK(len == (is224 ? 28u : 32u));
	CHECK_EQ_BYTES(got, want, len);
	/* finish() starts again: the same bytes give the same digest. */
	ms_sha256_ni_update(&c, p, n);
	CHECK(ms_sha256_ni_finish(&c, got) == len);
	CHECK_EQ_BYTES(got, want, len);
}

MS_TEST(sha256_ni_every_length_to_300)
{
	uint8_t buf[300];

	if (!ni_or_note()) {
		return;
	}
	fill(buf, sizeof(buf), 1);
	for (size_t n = 0; n <= sizeof(buf); n++) {
		check_one(buf, n, false, 0);
		check_one(buf, n, true, 0);
		check_one(buf, n, false, 7);
	}
}

MS_TEST(sha256_ni_long_inputs_in_pieces)
{
	static const size_t steps[] = { 0, 1, 63, 64, 65, 4096, 131072 };
	size_t n = 1000003;
	uint8_t *buf = malloc(n);

	CHECK(buf != NULL);
	if (!ni_or_note()) {
		free(buf);
		return;
	}
	fill(buf, n, 7);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		check_one(buf, n, false, steps[i]);
	}
	check_one(buf, n, true, 4096);
	free(buf);
}

/* FIPS 180-2, appendix B.3: a million 'a'. */
MS_TEST(sha256_ni_million_a)
{
	static const uint8_t want[32] = {
		0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92, 0x81, 0xa1, 0xc7,
		0xe2, 0x84, 0xd7, 0x3e, 0x67, 0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97,
		0x20, 0x0e, 0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0,
	};
	uint8_t a[1000], got[32];
	struct ms_sha256_ni c;

	if (!ni_or_note()) {
		return;
	}
	memset(a, 'a', sizeof(a));
	ms_sha256_ni_start(&c, false);
	for (int i = 0; i < 1000; i++) {
		ms_sha256_ni_update(&c, a, sizeof(a));
	}
	CHECK(ms_sha256_ni_finish(&c, got) == 32);
	CHECK_EQ_BYTES(got, want, 32);
}

#endif /* MS_HAVE_SHA_NI */
