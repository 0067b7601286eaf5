// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether the SoftHSM2 session copy of the key still pays: the
 * CPU time (user + system, getrusage: the machine is shared, so not the
 * wall clock) of N signatures on one session, signed with the session copy
 * (what src/pkcs11 does on SoftHSM2) and with the token object, the two
 * interleaved in pairs whose order alternates. Prints one line per pair
 * with its ratio, the medians of each side and the median of the ratios
 * (the figure a drifting load disturbs least). Built and run by
 * bench/keycopy.sh.
 *
 * Usage: keycopy URI N PAIRS   (the PIN in KBUILD_SIGN_PIN)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "pkcs11/p11_internal.h"

/* P11T_DIGEST_INFO_HEX of the unit tests: SHA-256 DigestInfo of 00..1f. */
static const uint8_t tbs[] = {
	0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
	0x05, 0x00, 0x04, 0x20, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19,
	0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

static double
cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* One run: a fresh context, @n signatures; CPU microseconds per signature. */
static double
run(const char *uri, const struct ms_pin *pin, bool use_copy, unsigned n)
{
	struct ms_p11 *p11 = NULL;
	enum ms_p11_key_type type;
	uint8_t sig[1024];
	size_t sig_len = 0;
	double t0, t1;

	if (ms_p11_open(uri, MS_P11_FOR_KEY, &p11) != MS_OK ||
	    ms_p11_login(p11, pin, 0) != MS_OK || ms_p11_key_find(p11, &type) != MS_OK) {
		fprintf(stderr, "keycopy: %s\n", ms_p11_last_fail(p11)->detail);
		exit(1);
	}
	if (!p11->key_in_memory) {
		fprintf(stderr, "keycopy: not a SoftHSM2 token: nothing to compare\n");
		exit(1);
	}
	p11->key_in_memory = use_copy;
	t0 = cpu_us();
	for (unsigned i = 0; i < n; i++) {
		if (ms_p11_sign(p11, 0, tbs, sizeof(tbs), sig, sizeof(sig), &sig_len) != MS_OK) {
			fprintf(stderr, "keycopy: %s\n", ms_p11_session_fail(p11, 0)->detail);
			exit(1);
		}
	}
	t1 = cpu_us();
	if (use_copy && p11->sess[0].key_copy == CK_INVALID_HANDLE) {
		fprintf(stderr, "keycopy: the token made no copy\n");
		exit(1);
	}
	ms_p11_close(p11);
	return (t1 - t0) / n;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	struct ms_pin pin;
	const char *env = getenv("KBUILD_SIGN_PIN");
	unsigned n, pairs;
	double *with, *without, *ratio;

	if (argc != 4 || env == NULL || strlen(env) > MS_PIN_MAX) {
		fprintf(stderr, "usage: KBUILD_SIGN_PIN=... keycopy URI N PAIRS\n");
		return 2;
	}
	n = (unsigned)strtoul(argv[2], NULL, 10);
	pairs = (unsigned)strtoul(argv[3], NULL, 10);
	if (n == 0 || pairs == 0) {
		return 2;
	}
	memset(&pin, 0, sizeof(pin));
	memcpy(pin.buf, env, strlen(env));
	pin.len = strlen(env);
	pin.source = "KBUILD_SIGN_PIN";
	pin.is_set = true;
	with = calloc(pairs, sizeof(*with));
	without = calloc(pairs, sizeof(*without));
	ratio = calloc(pairs, sizeof(*ratio));
	if (with == NULL || without == NULL || ratio == NULL) {
		return 1;
	}
	for (unsigned i = 0; i < pairs; i++) {
		/* Alternate which goes first, so that a drift hits both alike. */
		if (i % 2 == 0) {
			with[i] = run(argv[1], &pin, true, n);
			without[i] = run(argv[1], &pin, false, n);
		} else {
			without[i] = run(argv[1], &pin, false, n);
			with[i] = run(argv[1], &pin, true, n);
		}
		ratio[i] = with[i] / without[i];
		printf("pair %u: copy %.1f us/sig, token object %.1f us/sig, ratio %.3f\n", i + 1,
		       with[i], without[i], ratio[i]);
		fflush(stdout);
	}
	qsort(with, pairs, sizeof(*with), cmp_double);
	qsort(without, pairs, sizeof(*without), cmp_double);
	qsort(ratio, pairs, sizeof(*ratio), cmp_double);
	printf("median CPU per signature (%u signatures a run, %u pairs): copy %.1f us, "
	       "token object %.1f us; median of the pairs' copy/object ratios %.3f\n", n, pairs,
	       with[pairs / 2], without[pairs / 2], ratio[pairs / 2]);
	ms_pin_clear(&pin);
	free(with);
	free(without);
	free(ratio);
	return 0;
}
