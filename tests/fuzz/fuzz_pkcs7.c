// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the PKCS#7 parser `modsign verify`, `info`, --replace and
 * `-s` use (ms_pkcs7_parse, ms_pkcs7_check_module, ms_pkcs7_parse_module),
 * then, when it parses, the verification of every signer (ms_pkcs7_verify)
 * against the TEST-ONLY certificates of tests/data and the message's own
 * certificates.
 *
 * Oracle beyond the sanitizers: `-s` (ms_pkcs7_parse_module) refuses
 * exactly what `verify` refuses, for the same reason.
 *
 * Input: one flags byte, 64 bytes of digest material when FLAG_DIGEST_BYTES
 * is set, then the PKCS#7 blob.
 */
#include <stdlib.h>
#include <string.h>

#include "cms/cms_internal.h"
#include "fuzz.h"

#define FLAG_MOD_DIGESTS	0x01u	/* digests of tests/data/cms/mod.bin: signatures can verify */
#define FLAG_MSG_CERTS		0x02u	/* also try the certificates the message carries */
#define FLAG_DIGEST_BYTES	0x04u	/* 64 bytes of digest material follow the flags */
#define FLAG_DROP_DIGEST	0x08u	/* leave out the last digest the signers need */

static const char *const fixed_names[] = {
	"rsa2048.x509.der", "rsa2048-noskid.x509.der", "rsa3072.x509.der", "rsa4096.x509.der",
	"ec256.x509.der", "ec384.x509.der", "ec521.x509.der", "other-rsa2048.x509.der",
};
#define N_FIXED (sizeof(fixed_names) / sizeof(fixed_names[0]))

static struct ms_cms_cert *fixed[N_FIXED];
static const uint8_t *mod_bin;
static size_t mod_bin_len;

static void
setup(void)
{
	fuzz_certs_load(fixed_names, fixed, N_FIXED);
	if (mod_bin == NULL) {
		mod_bin = fuzz_data_load("cms/mod.bin", &mod_bin_len);
	}
}

/* The digest of mod.bin (every hash a parsed signer names is one we compute). */
static void
mod_digest(struct ms_pkcs7_digest *dg)
{
	struct ms_cms_digest *d = NULL;
	size_t len = 0;

	if (ms_cms_digest_new(dg->alg, &d) != MS_OK ||
	    ms_cms_digest_update(d, mod_bin, mod_bin_len) != MS_OK ||
	    ms_cms_digest_final(d, dg->d, sizeof(dg->d), &len) != MS_OK || len != dg->len) {
		fuzz_die("hashing mod.bin");
	}
	ms_cms_digest_free(d);
}

/* Every span of a parsed message lies inside the input. */
static void
check_span(struct ms_span s, const uint8_t *p, size_t len)
{
	if (s.len == 0) {
		return;
	}
	if (s.p == NULL || s.p < p || s.len > len || (size_t)(s.p - p) > len - s.len) {
		fuzz_die("ms_pkcs7_parse: span outside the input");
	}
}

static void
check_parsed(const struct ms_pkcs7 *m, const uint8_t *p, size_t len)
{
	if (m->n_signers == 0 || m->n_signers > MS_PKCS7_SIGNERS_MAX ||
	    m->n_certs > MS_PKCS7_CERTS_MAX || m->n_digest_algs > MS_PKCS7_ALGS_MAX) {
		fuzz_die("ms_pkcs7_parse: counts out of range");
	}
	if (m->version != 1 && m->version != 3) {
		fuzz_die("ms_pkcs7_parse: SignedData version not 1 or 3");
	}
	for (size_t i = 0; i < m->n_certs; i++) {
		check_span(m->certs[i], p, len);
	}
	for (size_t i = 0; i < m->n_signers; i++) {
		const struct ms_pkcs7_signer *s = &m->signers[i];

		if (s->version != m->version) {
			fuzz_die("ms_pkcs7_parse: SignerInfo version differs from SignedData's");
		}
		if (ms_cms_hash_size(s->hash) == 0) {
			fuzz_die("ms_pkcs7_parse: signer hash unknown");
		}
		check_span(s->issuer, p, len);
		check_span(s->serial, p, len);
		check_span(s->skid, p, len);
		check_span(s->signature, p, len);
	}
}

/* What `info` and `verify` print about each signer. */
static void
describe_signers(const struct ms_pkcs7 *m)
{
	char text[512], small[4];

	for (size_t i = 0; i < m->n_signers; i++) {
		const struct ms_pkcs7_signer *s = &m->signers[i];

		(void)ms_pkcs7_sig_alg_name(s->key_type);
		(void)ms_cms_hash_name(s->hash);
		if (s->sid_type != MS_PKCS7_SID_ISSUER_SERIAL) {
			continue;
		}
		if (ms_cms_name_text(s->issuer, text, sizeof(text)) == MS_OK &&
		    strnlen(text, sizeof(text)) == sizeof(text)) {
			fuzz_die("ms_cms_name_text: no NUL within cap");
		}
		(void)ms_cms_name_text(s->issuer, small, sizeof(small));
		if (ms_cms_name_cn(s->issuer, text, sizeof(text)) == MS_OK &&
		    strnlen(text, sizeof(text)) == sizeof(text)) {
			fuzz_die("ms_cms_name_cn: no NUL within cap");
		}
		(void)ms_cms_name_cn(s->issuer, small, sizeof(small));
	}
}

static void
verify(const struct ms_pkcs7 *m, unsigned flags, const uint8_t *material)
{
	const struct ms_cms_cert *certs[N_FIXED + MS_PKCS7_CERTS_MAX];
	struct ms_cms_cert *own[MS_PKCS7_CERTS_MAX] = { NULL };
	enum ms_hash_alg algs[MS_PKCS7_SIGNERS_MAX];
	struct ms_pkcs7_digest dg[MS_PKCS7_SIGNERS_MAX];
	struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX], res2[MS_PKCS7_SIGNERS_MAX];
	struct ms_span payload = { mod_bin, mod_bin_len };
	size_t n_certs = 0, n_algs;
	const char *why = NULL;
	char cn[128];
	ms_err err;

	n_algs = ms_pkcs7_digest_algs(m, algs, MS_PKCS7_SIGNERS_MAX);
	if (n_algs == 0 || n_algs > m->n_signers) {
		fuzz_die("ms_pkcs7_digest_algs: count out of range");
	}
	memset(dg, 0, sizeof(dg));
	for (size_t i = 0; i < n_algs; i++) {
		dg[i].alg = algs[i];
		dg[i].len = ms_cms_hash_size(algs[i]);
		if ((flags & FLAG_MOD_DIGESTS) != 0) {
			mod_digest(&dg[i]);
		} else if (material != NULL) {
			memcpy(dg[i].d, material, dg[i].len);
		}
	}
	if ((flags & FLAG_DROP_DIGEST) != 0) {
		n_algs--;
	}
	if ((flags & FLAG_MSG_CERTS) != 0) {
		/* As cli_verify.c: the message's certificates first; one that fails is left out. */
		for (size_t i = 0; i < m->n_certs; i++) {
			if (ms_cms_cert_parse(m->certs[i].p, m->certs[i].len, &own[i]) == MS_OK) {
				certs[n_certs++] = own[i];
			}
		}
	}
	for (size_t i = 0; i < N_FIXED; i++) {
		certs[n_certs++] = fixed[i];
	}
	for (size_t i = 0; i < m->n_signers; i++) {
		for (size_t j = 0; j < n_certs; j++) {
			(void)ms_pkcs7_signer_match(&m->signers[i], certs[j]);
		}
	}
	memset(res, 0, sizeof(res));
	err = ms_pkcs7_verify(m, dg, n_algs, certs, n_certs, res, &why);
	if (err != MS_OK && why == NULL) {
		fuzz_die("ms_pkcs7_verify: failure without a reason");
	}
	for (size_t i = 0; i < m->n_signers; i++) {
		if (res[i].err == MS_OK && res[i].cert == NULL) {
			fuzz_die("ms_pkcs7_verify: a signer verified without a certificate");
		}
		if (res[i].cert != NULL) {
			(void)ms_cms_name_cn(ms_cms_cert_subject_name(res[i].cert), cn, sizeof(cn));
		}
	}
	/*
	 * With the payload (mod.bin), which ML-DSA without signed attributes
	 * signs itself: every signer of another kind fares as without it.
	 */
	memset(res2, 0, sizeof(res2));
	(void)ms_pkcs7_verify_payload(m, dg, n_algs, &payload, 1, certs, n_certs, res2, &why);
	for (size_t i = 0; i < m->n_signers; i++) {
		if (m->signers[i].key_type != MS_KEY_MLDSA && res2[i].err != res[i].err) {
			fuzz_die("ms_pkcs7_verify_payload: a non-ML-DSA signer fared otherwise");
		}
		if (res2[i].err == MS_OK && res2[i].cert == NULL) {
			fuzz_die("ms_pkcs7_verify_payload: a signer verified without a certificate");
		}
	}
	for (size_t i = 0; i < m->n_certs; i++) {
		ms_cms_cert_free(own[i]);
	}
}

/* `-s` takes what verify's parse and module rules (@err, @why) take, and says why not alike. */
static void
same_as_raw_sig_check(const uint8_t *p, size_t len, ms_err err, const char *why)
{
	struct ms_pkcs7 m;
	const char *why2 = NULL;

	if (ms_pkcs7_parse_module(p, len, &m, &why2) != err || why2 != why) {
		fuzz_die("-s and verify disagree on a PKCS#7");
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ms_pkcs7 m;
	const uint8_t *material = NULL;
	const char *why = NULL;
	unsigned flags;
	ms_err err;

	setup();
	if (size < 1) {
		return 0;
	}
	flags = data[0];
	data++;
	size--;
	if ((flags & FLAG_DIGEST_BYTES) != 0) {
		if (size < MS_HASH_MAX_SIZE) {
			return 0;
		}
		material = data;
		data += MS_HASH_MAX_SIZE;
		size -= MS_HASH_MAX_SIZE;
	}
	memset(&m, 0, sizeof(m));
	err = ms_pkcs7_parse(data, size, &m, &why);
	if (err != MS_OK) {
		if (why == NULL && err != MS_E_ARG) {
			fuzz_die("ms_pkcs7_parse: failure without a reason");
		}
		same_as_raw_sig_check(data, size, err, why);
		return 0;
	}
	check_parsed(&m, data, size);
	describe_signers(&m);
	why = NULL;
	err = ms_pkcs7_check_module(&m, &why);
	if (err != MS_OK && why == NULL) {
		fuzz_die("ms_pkcs7_check_module: failure without a reason");
	}
	same_as_raw_sig_check(data, size, err, why);
	verify(&m, flags, material);
	return 0;
}
