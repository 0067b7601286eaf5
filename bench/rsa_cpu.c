// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU time of RSA PKCS#1 v1.5 signatures with a key file, side by side:
 * mbedTLS (mbedtls_rsa_rsassa_pkcs1_v15_sign, blinded) against nettle's
 * hogweed (src/signer/hogweed.c: blinded, the root side-channel-silent,
 * checked). The two run in interleaved batches (A B,
 * B A, ...), each batch timed with the process's CPU clock (user + system),
 * so that a busy shared machine hits both alike; the medians and their ratio
 * are printed. Every signature of both is compared byte for byte.
 *
 * Usage: build/rsa-cpu KEY.pem [ROUNDS [BATCH]]   (make build/rsa-cpu)
 * Not a test and not part of `make bench`: the figure that chose nettle for
 * RSA with a key file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include "cpu_clock.h"
#include "../src/cms/mbedtls_compat.h"
#include "../src/signer/signer_internal.h"

/* The key file, NUL-terminated (mbedTLS counts the NUL of a PEM text), or NULL. */
static uint8_t *
read_key(const char *path, size_t *len)
{
	static uint8_t buf[64 * 1024];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	*len = n + 1;
	return buf;
}

int
main(int argc, char **argv)
{
	/* DigestInfo of SHA-256 over 32 bytes of 0x5a: what a module signature signs. */
	uint8_t tbs[51] = { 0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65,
			    0x03, 0x04, 0x02, 0x01, 0x05, 0x00, 0x04, 0x20 };
	static uint8_t a[MS_SIG_MAX], b[MS_SIG_MAX];
	int rounds = argc > 2 ? atoi(argv[2]) : 15;
	int batch = argc > 3 ? atoi(argv[3]) : 200;
	double *ta, *tb;
	mbedtls_pk_context pk;
	mbedtls_entropy_context ent;
	mbedtls_ctr_drbg_context drbg;
	struct ms_hogweed_key *hog = NULL;
	size_t n, len = 0, key_len = 0;
	const uint8_t *key;

	if (argc < 2 || rounds < 1 || batch < 1) {
		fprintf(stderr, "usage: %s KEY.pem [ROUNDS [BATCH]]\n", argv[0]);
		return 2;
	}
	memset(tbs + 19, 0x5a, 32);
	mbedtls_pk_init(&pk);
	mbedtls_entropy_init(&ent);
	mbedtls_ctr_drbg_init(&drbg);
	key = read_key(argv[1], &key_len);
	if (key == NULL || mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &ent, NULL, 0) != 0 ||
	    ms_mbed_pk_parse_key(&pk, key, key_len, NULL, 0, mbedtls_ctr_drbg_random, &drbg) != 0 ||
	    !mbedtls_pk_can_do(&pk, MBEDTLS_PK_RSA) ||
	    ms_signer_hogweed_new(mbedtls_pk_rsa(pk), &hog) != MS_OK) {
		fprintf(stderr, "%s: cannot load the RSA key\n", argv[1]);
		return 1;
	}
	n = mbedtls_rsa_get_len(mbedtls_pk_rsa(pk));
	ta = calloc((size_t)rounds, sizeof(*ta));
	tb = calloc((size_t)rounds, sizeof(*tb));
	if (ta == NULL || tb == NULL) {
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int half = 0; half < 2; half++) {
			int nettle_first = r % 2;
			int use_nettle = half == 0 ? nettle_first : !nettle_first;
			double t0 = bench_cpu_now();

			for (int i = 0; i < batch; i++) {
				if (use_nettle) {
					if (ms_signer_hogweed_sign(hog, mbedtls_ctr_drbg_random, &drbg, tbs,
								   sizeof(tbs), b, sizeof(b), &len) != MS_OK) {
						fprintf(stderr, "nettle signature failed\n");
						return 1;
					}
				} else if (ms_mbed_rsa_pkcs1_v15_sign(mbedtls_pk_rsa(pk),
								      mbedtls_ctr_drbg_random, &drbg,
								      tbs, sizeof(tbs), a) != 0) {
					fprintf(stderr, "mbedTLS signature failed\n");
					return 1;
				}
			}
			(use_nettle ? tb : ta)[r] = (bench_cpu_now() - t0) / batch * 1000;
		}
		if (len != n || memcmp(a, b, n) != 0) {
			fprintf(stderr, "the two signatures differ\n");
			return 1;
		}
	}
	printf("RSA-%zu, %d rounds of %d signatures each, interleaved; CPU ms per signature\n",
	       n * 8, rounds, batch);
	for (int r = 0; r < rounds; r++) {
		printf("  round %2d: mbedTLS %.3f  nettle %.3f\n", r + 1, ta[r], tb[r]);
	}
	{
		double ma = bench_median(ta, (size_t)rounds), mb = bench_median(tb, (size_t)rounds);

		printf("median: mbedTLS %.3f ms, nettle (hogweed, blinded) %.3f ms; mbedTLS / nettle = "
		       "%.2fx; signatures identical\n", ma, mb, ma / mb);
	}
	ms_signer_hogweed_free(hog);
	mbedtls_pk_free(&pk);
	mbedtls_ctr_drbg_free(&drbg);
	mbedtls_entropy_free(&ent);
	free(ta);
	free(tb);
	return 0;
}
