// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the conversion of a raw signature as a PKCS#11 token returns
 * it into the SignerInfo signature value (ms_cms_sig_encode: ms_ec_split
 * and ec_sig_encode in src/cms/tbs.c for EC r||s, unchanged bytes for RSA),
 * and ms_cms_cert_verify(), which takes a token's raw r||s the same way.
 * Today only mbedTLS output reaches it in the tests; a token's reply is
 * untrusted input.
 *
 * Input: one flags byte (bit 0: also verify it, when its halves are 32, 48
 * or 66 bytes, against the TEST-ONLY P-256, P-384 or P-521 certificate over
 * a fixed digest; bit 1: the RSA path instead of EC), then the raw signature.
 *
 * Oracles: EC input is accepted exactly when it is a non-empty, even-length
 * r||s of at most 2 x 66 bytes with neither half zero (PKCS#11 2.40, 2.3.1;
 * SEC 1, 4.1.4); the size query and the encoding agree; every capacity
 * below the size is refused without a byte written past it; the output is
 * one DER SEQUENCE of two minimal positive INTEGERs whose values are the
 * two halves. RSA output is the input.
 */
#include <stdlib.h>
#include <string.h>

#include "cms/cms_internal.h"
#include "fuzz.h"

#define FLAG_VERIFY	0x01u
#define FLAG_RSA	0x02u

static const char *const cert_names[] = { "ec256.x509.der", "ec384.x509.der", "ec521.x509.der" };
static struct ms_cms_cert *certs[3];

/* The reference rule, written out apart from ms_ec_split(). */
static bool
ec_acceptable(const uint8_t *p, size_t len)
{
	size_t half = len / 2;
	bool r_nonzero = false, s_nonzero = false;

	if (len == 0 || len % 2 != 0 || len > 2 * MS_CMS_EC_HALF_MAX) {
		return false;
	}
	for (size_t i = 0; i < half; i++) {
		r_nonzero = r_nonzero || p[i] != 0;
		s_nonzero = s_nonzero || p[half + i] != 0;
	}
	return r_nonzero && s_nonzero;
}

/* One INTEGER of the output: minimal, positive, and the value of @want (big-endian). */
static void
check_int(struct ms_span *seq, const uint8_t *want, size_t want_len)
{
	struct ms_span v = { NULL, 0 };

	if (ms_der_expect(seq, DER_INTEGER, &v) != MS_OK || v.len == 0) {
		fuzz_die("Ecdsa-Sig-Value: not an INTEGER");
	}
	if ((v.p[0] & 0x80) != 0) {
		fuzz_die("Ecdsa-Sig-Value: negative INTEGER");
	}
	if (v.len > 1 && v.p[0] == 0 && (v.p[1] & 0x80) == 0) {
		fuzz_die("Ecdsa-Sig-Value: non-minimal INTEGER");
	}
	while (want_len > 0 && want[0] == 0) {
		want++;
		want_len--;
	}
	if (v.p[0] == 0) {
		v.p++;
		v.len--;
	}
	if (!ms_der_span_eq(v, want, want_len)) {
		fuzz_die("Ecdsa-Sig-Value: INTEGER is not the half it came from");
	}
}

/* Every capacity below @need: MS_E_NOSPACE, nothing written past it (exact-size buffers). */
static void
check_caps(enum ms_key_type type, const uint8_t *p, size_t len, size_t need)
{
	for (size_t cap = 0; cap < need; cap++) {
		uint8_t *buf = malloc(cap + 1);
		size_t got = 0;

		if (buf == NULL) {
			fuzz_die("malloc");
		}
		if (ms_cms_sig_encode(type, p, len, buf, cap, &got) != MS_E_NOSPACE) {
			fuzz_die("ms_cms_sig_encode: a short buffer not refused");
		}
		free(buf);
	}
}

static void
check_ec(const uint8_t *p, size_t len, unsigned flags)
{
	bool ok = ec_acceptable(p, len);
	size_t need = 0, got = 0, half = len / 2;
	struct ms_span r = { NULL, 0 }, s = { NULL, 0 }, seq = { NULL, 0 };
	uint8_t *out = NULL;
	ms_err err;

	err = ms_ec_split(p, len, &r, &s);
	if ((err == MS_OK) != ok || (err != MS_OK && err != MS_E_MALFORMED)) {
		fuzz_die("ms_ec_split: verdict differs from the rule");
	}
	err = ms_cms_sig_encode(MS_KEY_EC, p, len, NULL, 0, &need);
	if ((err == MS_OK) != ok || (err != MS_OK && err != MS_E_MALFORMED)) {
		fuzz_die("ms_cms_sig_encode: verdict differs from the rule");
	}
	if (!ok) {
		return;
	}
	if (r.p != p || r.len != half || s.p != p + half || s.len != half) {
		fuzz_die("ms_ec_split: halves are not the input's");
	}
	out = malloc(need);
	if (out == NULL) {
		fuzz_die("malloc");
	}
	if (ms_cms_sig_encode(MS_KEY_EC, p, len, out, need, &got) != MS_OK || got != need) {
		fuzz_die("ms_cms_sig_encode: the size query and the encoding disagree");
	}
	if (ms_der_expect_only((struct ms_span){ out, got }, DER_SEQUENCE, &seq) != MS_OK) {
		fuzz_die("Ecdsa-Sig-Value: not one DER SEQUENCE");
	}
	check_int(&seq, p, half);
	check_int(&seq, p + half, half);
	if (seq.len != 0) {
		fuzz_die("Ecdsa-Sig-Value: bytes after s");
	}
	check_caps(MS_KEY_EC, p, len, need);
	free(out);
	/* A verification costs milliseconds: only for r||s of a curve's own size. */
	if ((flags & FLAG_VERIFY) != 0 && (half == 32 || half == 48 || half == 66)) {
		static const uint8_t digest[32] = { 1, 2, 3 };
		const struct ms_cms_cert *c = half == 32 ? certs[0] : half == 48 ? certs[1] :
					      certs[2];

		/* Random r||s: a forgery would be news; any other answer is a failure. */
		err = ms_cms_cert_verify(c, MS_HASH_SHA256, digest, sizeof(digest), p, len);
		if (err != MS_E_MISMATCH) {
			fuzz_die("ms_cms_cert_verify: random r||s not a mismatch");
		}
	}
}

static void
check_rsa(const uint8_t *p, size_t len)
{
	size_t need = 0, got = 0;
	uint8_t *out = NULL;
	ms_err err;

	err = ms_cms_sig_encode(MS_KEY_RSA, p, len, NULL, 0, &need);
	if ((err == MS_OK) != (len != 0 && len <= MS_SIG_MAX)) {
		fuzz_die("ms_cms_sig_encode (RSA): verdict differs from the rule");
	}
	if (err != MS_OK) {
		return;
	}
	out = malloc(need);
	if (out == NULL || need != len) {
		fuzz_die("ms_cms_sig_encode (RSA): size is not the input's");
	}
	if (ms_cms_sig_encode(MS_KEY_RSA, p, len, out, need, &got) != MS_OK || got != len ||
	    memcmp(out, p, len) != 0) {
		fuzz_die("ms_cms_sig_encode (RSA): output is not the input");
	}
	free(out);
	if (len < 64) {
		check_caps(MS_KEY_RSA, p, len, need);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned flags;

	fuzz_certs_load(cert_names, certs, 3);
	if (size < 1) {
		return 0;
	}
	flags = data[0];
	data++;
	size--;
	if ((flags & FLAG_RSA) != 0) {
		check_rsa(data, size);
	} else {
		check_ec(data, size, flags);
	}
	return 0;
}
