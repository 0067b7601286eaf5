// SPDX-License-Identifier: GPL-2.0-only
/*
 * Digest microbenchmark (bench/digest.sh builds and runs it): the CPU time
 * of hashing real module files, already in memory, with modsign's digest
 * interface (src/cms/digest.c: nettle) side by side with what it replaced:
 * mbedTLS 2.28's md layer for every hash, and for SHA-256/224 the former
 * src/cms/sha256_ni.c (built from git history as bench/digest.sh finds it;
 * -DMS_BENCH_OLD_NI). Rounds interleave the variants (A, B, C, A, B, C,
 * ...) so a busy spell of the shared machine hits them alike; CPU time
 * (CLOCK_PROCESS_CPUTIME_ID), not wall time; medians; one markdown table.
 *
 * Usage: digest ROUNDS FILE...
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/md.h>

#include "cpu_clock.h"
#include "cms/cms.h"

#ifndef MS_BENCH_OLD_NI
#define MS_BENCH_OLD_NI 0
#endif

#if MS_BENCH_OLD_NI
/* The former src/cms/sha256_ni.c's interface, as its cms_internal.h declared it. */
struct ms_sha256_ni {
	uint32_t h[8];
	uint64_t total;
	uint8_t buf[64];
	size_t used;
	bool is224;
};
bool ms_sha256_ni_available(void);
void ms_sha256_ni_start(struct ms_sha256_ni *c, bool is224);
void ms_sha256_ni_update(struct ms_sha256_ni *c, const uint8_t *p, size_t len);
size_t ms_sha256_ni_finish(struct ms_sha256_ni *c, uint8_t *out);
#endif

#define ROUNDS_MAX 101

struct file {
	uint8_t *p;
	size_t len;
};

static struct file *files;
static size_t n_files, total_bytes;

enum backend { NEW_NETTLE, OLD_MBEDTLS, OLD_NI, N_BACKENDS };

static const char *const backend_name[N_BACKENDS] = {
	"nettle (new)", "mbedTLS 2.28", "sha256_ni.c",
};

static const struct {
	enum ms_hash_alg alg;
	mbedtls_md_type_t md;	/* MBEDTLS_MD_NONE: mbedTLS 2.28 has none */
} hashes[] = {
	{ MS_HASH_SHA1, MBEDTLS_MD_SHA1 }, { MS_HASH_SHA224, MBEDTLS_MD_SHA224 },
	{ MS_HASH_SHA256, MBEDTLS_MD_SHA256 }, { MS_HASH_SHA384, MBEDTLS_MD_SHA384 },
	{ MS_HASH_SHA512, MBEDTLS_MD_SHA512 }, { MS_HASH_SHA3_256, MBEDTLS_MD_NONE },
	{ MS_HASH_SHA3_384, MBEDTLS_MD_NONE }, { MS_HASH_SHA3_512, MBEDTLS_MD_NONE },
};

#define N_HASHES (sizeof(hashes) / sizeof(hashes[0]))

static void
die(const char *what)
{
	fprintf(stderr, "digest: %s\n", what);
	exit(1);
}


static void
load(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct file *fl;
	long n = -1;

	if (f != NULL && fseek(f, 0, SEEK_END) == 0) {
		n = ftell(f);
	}
	if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
		die(path);
	}
	files = realloc(files, (n_files + 1) * sizeof(*files));
	if (files == NULL) {
		die("out of memory");
	}
	fl = &files[n_files++];
	fl->len = (size_t)n;
	fl->p = malloc(fl->len + 1);
	if (fl->p == NULL || fread(fl->p, 1, fl->len, f) != fl->len) {
		die(path);
	}
	fclose(f);
	total_bytes += fl->len;
}

/* One pass over every file with @b; XORs each digest into @acc (checked after). */
static void
pass(enum backend b, size_t hi, uint8_t *acc)
{
	uint8_t out[MS_HASH_MAX_SIZE];
	size_t len = 0;

	for (size_t i = 0; i < n_files; i++) {
		const struct file *f = &files[i];

		memset(out, 0, sizeof(out));
		if (b == NEW_NETTLE) {
			struct ms_cms_digest *d = NULL;

			if (ms_cms_digest_new(hashes[hi].alg, &d) != MS_OK ||
			    ms_cms_digest_update(d, f->p, f->len) != MS_OK ||
			    ms_cms_digest_final(d, out, sizeof(out), &len) != MS_OK) {
				die("ms_cms_digest");
			}
			ms_cms_digest_free(d);
		} else if (b == OLD_MBEDTLS) {
			if (mbedtls_md(mbedtls_md_info_from_type(hashes[hi].md), f->p, f->len, out) != 0) {
				die("mbedtls_md");
			}
		} else {
#if MS_BENCH_OLD_NI
			struct ms_sha256_ni c;

			ms_sha256_ni_start(&c, hashes[hi].alg == MS_HASH_SHA224);
			ms_sha256_ni_update(&c, f->p, f->len);
			ms_sha256_ni_finish(&c, out);
#endif
		}
		for (size_t k = 0; k < sizeof(out); k++) {
			acc[k] ^= out[k];
		}
	}
}



int
main(int argc, char **argv)
{
	static double t[N_HASHES][N_BACKENDS][ROUNDS_MAX];
	bool has[N_HASHES][N_BACKENDS];
	int rounds;

	if (argc < 3) {
		die("usage: digest ROUNDS FILE...");
	}
	rounds = atoi(argv[1]);
	if (rounds < 1 || rounds > ROUNDS_MAX) {
		die("ROUNDS: 1 to 101");
	}
	for (int i = 2; i < argc; i++) {
		load(argv[i]);
	}
	for (size_t h = 0; h < N_HASHES; h++) {
		has[h][NEW_NETTLE] = true;
		has[h][OLD_MBEDTLS] = hashes[h].md != MBEDTLS_MD_NONE;
		has[h][OLD_NI] = false;
#if MS_BENCH_OLD_NI
		has[h][OLD_NI] = ms_sha256_ni_available() &&
				 (hashes[h].alg == MS_HASH_SHA256 || hashes[h].alg == MS_HASH_SHA224);
#endif
	}
	for (int r = 0; r < rounds; r++) {
		for (size_t h = 0; h < N_HASHES; h++) {
			uint8_t acc[N_BACKENDS][MS_HASH_MAX_SIZE];

			memset(acc, 0, sizeof(acc));
			for (int b = 0; b < N_BACKENDS; b++) {
				/* Alternate the order each round: neither side always goes first. */
				int bb = (r % 2) ? N_BACKENDS - 1 - b : b;
				double t0;

				if (!has[h][bb]) {
					continue;
				}
				t0 = bench_cpu_now();
				pass((enum backend)bb, h, acc[bb]);
				t[h][bb][r] = bench_cpu_now() - t0;
			}
			for (int b = 1; b < N_BACKENDS; b++) {
				if (has[h][b] && memcmp(acc[b], acc[NEW_NETTLE], sizeof(acc[b])) != 0) {
					die("backends disagree on a digest");
				}
			}
		}
	}
	printf("%zu module files, %.1f MiB, %d rounds; CPU seconds per pass (median), "
	       "MB/s in brackets\n\n", n_files, (double)total_bytes / 1048576.0, rounds);
	printf("| hash | new: nettle | old: mbedTLS 2.28 | old: sha256_ni.c | old / new |\n");
	printf("| --- | --- | --- | --- | --- |\n");
	for (size_t h = 0; h < N_HASHES; h++) {
		double m[N_BACKENDS] = { 0 };
		int old = has[h][OLD_NI] ? OLD_NI : OLD_MBEDTLS;

		printf("| %s |", ms_cms_hash_name(hashes[h].alg));
		for (int b = 0; b < N_BACKENDS; b++) {
			if (!has[h][b]) {
				printf(" %s |", b == OLD_MBEDTLS ? "none" : "-");
				continue;
			}
			m[b] = bench_median(t[h][b], (size_t)rounds);
			printf(" %.4f s (%.0f) |", m[b], (double)total_bytes / 1e6 / m[b]);
		}
		if (has[h][old] && m[NEW_NETTLE] > 0) {
			printf(" %.2fx (%s) |\n", m[old] / m[NEW_NETTLE], backend_name[old]);
		} else {
			printf(" new only |\n");
		}
	}
	return 0;
}
