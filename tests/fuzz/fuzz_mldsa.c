// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: ML-DSA verification (ms_cms_mldsa_verify and its sigDecode,
 * ms_mldsa_sig_decode) on a hostile public key and signature, as a
 * certificate and a module's SignerInfo hand them over.
 *
 * Input: one byte choosing the parameter set (value % 3: 44, 65, 87) and
 * whether the message is split in two (bit 2), then the public key (the
 * set's length, or all that is left when shorter), then the signature.
 * The message is "Hello world", the context empty.
 *
 * Oracles, written apart from mldsa_verify.c (FIPS 204, Algorithms 8, 19,
 * 21 and 27): the key is refused as malformed exactly when its length is
 * not the set's; a signature of another length never verifies; with both
 * lengths right, sigDecode succeeds exactly when the hint bytes follow
 * Algorithm 21 and every z coefficient lies strictly within gamma1 - beta,
 * and a signature whose decoding fails never verifies; only MS_OK,
 * MS_E_MISMATCH and MS_E_MALFORMED ever come back; splitting the message
 * changes nothing.
 */
#include <string.h>

#include "cms/cms_internal.h"
#include "fuzz.h"

#define SPLIT 0x04u

static const enum ms_mldsa_set sets[3] = { MS_MLDSA_44, MS_MLDSA_65, MS_MLDSA_87 };

/* Algorithm 21's rules, read as "counts rise to at most omega, positions rise, rest zero". */
static bool
hints_ok(const struct ms_mldsa_params *p, const uint8_t *y)
{
	size_t prev_end = 0, i, j;

	for (i = 0; i < p->k; i++) {
		size_t end = y[p->omega + i];

		if (end < prev_end || end > p->omega) {
			return false;
		}
		for (j = prev_end + 1; j < end; j++) {
			if (y[j] <= y[j - 1]) {
				return false;
			}
		}
		prev_end = end;
	}
	for (j = prev_end; j < p->omega; j++) {
		if (y[j] != 0) {
			return false;
		}
	}
	return true;
}

/* Every z coefficient, read one bit at a time, within the bound. */
static bool
z_ok(const struct ms_mldsa_params *p, const uint8_t *z)
{
	unsigned int bits = (p->gamma1 == (1u << 17)) ? 18 : 20;
	size_t n = p->l * MS_MLDSA_N, i, b;
	long long bound = (long long)p->gamma1 - p->beta;

	for (i = 0; i < n; i++) {
		long long v = 0, c;

		for (b = 0; b < bits; b++) {
			size_t at = i * bits + b;

			v |= (long long)((z[at / 8] >> (at % 8)) & 1) << b;
		}
		c = (long long)p->gamma1 - v;
		if (c >= bound || c <= -bound) {
			return false;
		}
	}
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t msg[] = "Hello world";
	struct ms_mldsa_poly z[MS_MLDSA_L_MAX];
	uint8_t h[MS_MLDSA_K_MAX][MS_MLDSA_N];
	const struct ms_mldsa_params *p;
	struct ms_span whole = { msg, sizeof(msg) - 1 }, parts[2];
	const uint8_t *pk, *sig;
	size_t pk_len, sig_len;
	ms_err err, err2, dec;
	bool decodes;

	if (size < 1) {
		return 0;
	}
	p = ms_mldsa_params(sets[data[0] % 3]);
	if (p == NULL) {
		fuzz_die("no parameters for a set");
	}
	pk = data + 1;
	pk_len = size - 1 < p->pk_len ? size - 1 : p->pk_len;
	sig = pk + pk_len;
	sig_len = size - 1 - pk_len;
	err = ms_cms_mldsa_verify(p->set, pk, pk_len, NULL, 0, &whole, 1, sig, sig_len);
	parts[0] = (struct ms_span){ msg, 5 };
	parts[1] = (struct ms_span){ msg + 5, sizeof(msg) - 1 - 5 };
	if ((data[0] & SPLIT) != 0) {
		err2 = ms_cms_mldsa_verify(p->set, pk, pk_len, NULL, 0, parts, 2, sig, sig_len);
		if (err2 != err) {
			fuzz_die("the message in two pieces verified otherwise");
		}
	}
	if (err != MS_OK && err != MS_E_MISMATCH && err != MS_E_MALFORMED) {
		fuzz_die("an error other than MISMATCH or MALFORMED");
	}
	if ((err == MS_E_MALFORMED) != (pk_len != p->pk_len)) {
		fuzz_die("MALFORMED exactly for a key of the wrong length");
	}
	if (pk_len != p->pk_len) {
		return 0;
	}
	if (sig_len != p->sig_len) {
		if (err != MS_E_MISMATCH) {
			fuzz_die("a signature of the wrong length was not refused");
		}
		return 0;
	}
	decodes = hints_ok(p, sig + sig_len - p->omega - p->k) && z_ok(p, sig + p->ctilde_len);
	dec = ms_mldsa_sig_decode(p, sig, z, h);
	if ((dec == MS_OK) != decodes || (dec != MS_OK && dec != MS_E_MISMATCH)) {
		fuzz_die("sigDecode disagrees with the reference rules");
	}
	if (!decodes && err != MS_E_MISMATCH) {
		fuzz_die("a signature that does not decode verified");
	}
	return 0;
}
