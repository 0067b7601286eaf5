// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU time of verifying one module signature, the packaged verifiers side by
 * side: mbedTLS (mbedtls_pk_verify with the certificate's key, what
 * ms_cms_cert_verify() used before) against nettle (src/cms/sig_verify.c,
 * what it uses now). For each TEST-ONLY key of tests/data the key file signs
 * one digest, then both verify it in interleaved batches (A B, B A, ...),
 * each batch timed with the process's CPU clock, so that a busy shared
 * machine hits both alike; the medians and their ratio are printed, and
 * what a verification adds to a module of a bulk run that takes MS_PER_MODULE
 * milliseconds (default 1.35: modsign -b -j 1 on SoftHSM2, BENCHMARKS.md (f)).
 * Both must accept the signature and refuse it with a bit flipped.
 *
 * Usage: build/verify-cpu DATA_DIR [ROUNDS [BATCH [MS_PER_MODULE]]]
 * (make build/verify-cpu). Not a test: the decision figure for verifying
 * every signature before it is written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mbedtls/pk.h>
#include <mbedtls/x509_crt.h>

#include "cpu_clock.h"
#include "../src/cms/cms_internal.h"
#include "../src/signer/signer.h"




static struct ms_cms_cert *
load_cert(const char *path)
{
	static uint8_t buf[16384];
	struct ms_cms_cert *cert = NULL;
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		return NULL;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (ms_cms_cert_parse(buf, n, &cert) != MS_OK) {
		return NULL;
	}
	return cert;
}

/* mbedTLS's verification of what ms_cms_cert_verify() takes: 0 when it verifies. */
static int
mbedtls_verify(const struct ms_cms_cert *cert, const uint8_t *tbs, size_t tbs_len,
	       const uint8_t *raw, size_t raw_len)
{
	uint8_t der[160];
	size_t der_len = raw_len;
	const uint8_t *sig = raw;

	if (cert->type == MS_KEY_EC) {
		if (ms_cms_sig_encode(MS_KEY_EC, raw, raw_len, der, sizeof(der), &der_len) != MS_OK) {
			return -1;
		}
		sig = der;
	}
	return mbedtls_pk_verify(&cert->crt->pk, MBEDTLS_MD_NONE, tbs, tbs_len, sig, der_len);
}

static int
one_key(const char *dir, const char *name, enum ms_hash_alg alg, int rounds, int batch,
	double ms_module)
{
	char path[1024], why[512];
	struct ms_cms_cert *cert;
	struct ms_signer *s = NULL;
	uint8_t digest[64], tbs[128], sig[MS_SIG_MAX];
	size_t tbs_len = 0, sig_len = 0;
	const struct ms_signer_req req = {
		.alg = alg, .digest = digest, .digest_len = ms_cms_hash_size(alg), .label = "bench",
	};
	double *ta = calloc((size_t)rounds, sizeof(double));
	double *tb = calloc((size_t)rounds, sizeof(double));
	enum ms_key_type type;
	int bad = 0;

	snprintf(path, sizeof(path), "%s/%s.x509.der", dir, name);
	cert = load_cert(path);
	snprintf(path, sizeof(path), "%s/%s.key.pem", dir, name);
	if (cert == NULL || ta == NULL || tb == NULL ||
	    ms_signer_keyfile_open(path, NULL, 1, &s, why, sizeof(why)) != MS_OK) {
		fprintf(stderr, "%s: cannot load the key or its certificate\n", name);
		return 1;
	}
	memset(digest, 0x5a, sizeof(digest));
	ms_cms_cert_key(cert, &type, NULL, NULL);
	if (ms_signer_sign(s, 0, &req, sig, sizeof(sig), &sig_len) != MS_OK ||
	    ms_cms_tbs_encode(type, alg, digest, req.digest_len, tbs, sizeof(tbs),
			      &tbs_len) != MS_OK) {
		fprintf(stderr, "%s: cannot sign\n", name);
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int half = 0; half < 2; half++) {
			int use_nettle = half == 0 ? r % 2 : !(r % 2);
			double t0 = bench_cpu_now();

			for (int i = 0; i < batch; i++) {
				if (use_nettle) {
					bad |= ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig,
								  sig_len) != MS_OK;
				} else {
					bad |= mbedtls_verify(cert, tbs, tbs_len, sig, sig_len) != 0;
				}
			}
			(use_nettle ? tb : ta)[r] = (bench_cpu_now() - t0) / batch * 1e6;
		}
	}
	sig[sig_len - 1] ^= 1;
	bad |= ms_cms_cert_verify(cert, alg, tbs, tbs_len, sig, sig_len) == MS_OK;
	bad |= mbedtls_verify(cert, tbs, tbs_len, sig, sig_len) == 0;
	if (bad) {
		fprintf(stderr, "%s: a verifier disagrees\n", name);
		return 1;
	}
	{
		double ma = bench_median(ta, (size_t)rounds), mb = bench_median(tb, (size_t)rounds);

		printf("| %s, %s | %.1f | %.1f | %.2fx | %.2f%% |\n", name, ms_cms_hash_name(alg), ma,
		       mb, ma / mb, mb / 10.0 / ms_module);
	}
	ms_signer_free(s);
	ms_cms_cert_free(cert);
	free(ta);
	free(tb);
	return 0;
}

int
main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 11;
	int batch = argc > 3 ? atoi(argv[3]) : 200;
	double ms_module = argc > 4 ? atof(argv[4]) : 1.35;
	int rc = 0;

	if (argc < 2 || rounds < 1 || batch < 1 || ms_module <= 0) {
		fprintf(stderr, "usage: %s DATA_DIR [ROUNDS [BATCH [MS_PER_MODULE]]]\n", argv[0]);
		return 2;
	}
	printf("Verifying one module signature, %d rounds of %d each, interleaved; "
	       "CPU microseconds, medians\n\n", rounds, batch);
	printf("| key, hash | mbedTLS | nettle | mbedTLS / nettle | nettle's share of a "
	       "%.2f ms module |\n|---|---|---|---|---|\n", ms_module);
	rc |= one_key(argv[1], "rsa2048", MS_HASH_SHA256, rounds, batch, ms_module);
	rc |= one_key(argv[1], "rsa4096", MS_HASH_SHA512, rounds, batch, ms_module);
	rc |= one_key(argv[1], "ec256", MS_HASH_SHA256, rounds, batch, ms_module);
	rc |= one_key(argv[1], "ec384", MS_HASH_SHA384, rounds, batch, ms_module);
	rc |= one_key(argv[1], "ec521", MS_HASH_SHA512, rounds, batch, ms_module);
	return rc;
}
