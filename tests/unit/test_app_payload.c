// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the one payload hasher (src/app/payload.c) that signing,
 * re-signing and verify share: several digests in one streaming pass, from
 * the module's first byte whatever was read before (no caller resets a read
 * offset by hand), and a module shorter than the caller's length is a
 * change, not a digest of fewer bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/app/app.h"
#include "test.h"

/* Over two of the hasher's 256 KiB reads, and not a multiple of one. */
#define PL_LEN (600 * 1024 + 13)

/* The digest of @p in one update: what the chunked pass must agree with. */
static void
digest_of(enum ms_hash_alg alg, const uint8_t *p, size_t len, struct ms_pkcs7_digest *out)
{
	struct ms_cms_digest *d = NULL;

	CHECK_ERR(ms_cms_digest_new(alg, &d), MS_OK);
	CHECK_ERR(ms_cms_digest_update(d, p, len), MS_OK);
	CHECK_ERR(ms_cms_digest_final(d, out->d, sizeof(out->d), &out->len), MS_OK);
	out->alg = alg;
	ms_cms_digest_free(d);
}

MS_TEST(app_payload_digest_one_pass_from_the_first_byte)
{
	static const enum ms_hash_alg algs[] = { MS_HASH_SHA256, MS_HASH_SHA512, MS_HASH_SHA3_384 };
	const size_t n = sizeof(algs) / sizeof(algs[0]);
	const uint64_t lens[] = { PL_LEN - 700, PL_LEN, 0 };
	char path[] = "/tmp/cli-payload-XXXXXX";
	struct ms_pkcs7_digest got[3], want;
	struct ms_modfile mf;
	uint8_t *buf = malloc(PL_LEN), skip[100];
	size_t n_read = 0;
	int fd = mkstemp(path);

	CHECK(buf != NULL && fd >= 0);
	for (size_t i = 0; i < PL_LEN; i++) {
		buf[i] = (uint8_t)(i * 131u + (i >> 9));
	}
	CHECK(write(fd, buf, PL_LEN) == (ssize_t)PL_LEN);
	CHECK(close(fd) == 0);

	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, path), MS_OK);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		/* Bytes read before: the hasher starts from byte 0 all the same. */
		CHECK_ERR(ms_modfile_read(&mf, skip, sizeof(skip), &n_read), MS_OK);
		memset(got, 0, sizeof(got));
		CHECK_ERR(ms_app_payload_digest(&mf, lens[k], algs, n, got, NULL), MS_OK);
		for (size_t i = 0; i < n; i++) {
			digest_of(algs[i], buf, (size_t)lens[k], &want);
			CHECK_EQ(got[i].alg, algs[i]);
			CHECK_EQ(got[i].len, want.len);
			CHECK(memcmp(got[i].d, want.d, want.len) == 0);
		}
	}

	/* Longer than the module: the file shrank under us, "changed while being read". */
	{
		char why[256];

		CHECK_EQ(ms_app_payload_digest(&mf, (uint64_t)PL_LEN + 1, algs, 1, got, NULL),
			 MS_E_CHANGED);
		ms_app_modfile_why(&mf, MS_E_CHANGED, why, sizeof(why));
		CHECK_STR_EQ(why, "changed while being read");
	}
	ms_modfile_clear(&mf);
	CHECK(unlink(path) == 0);
	free(buf);
}
