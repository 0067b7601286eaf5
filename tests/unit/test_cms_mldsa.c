// SPDX-License-Identifier: GPL-2.0-only
/*
 * ML-DSA verification (src/cms/mldsa_*.c, keccak.c) against the NIST ACVP
 * and Wycheproof vectors in tests/data/mldsa/ (see its README), every case
 * of each file, the expected failures included; and every valid signature
 * must fail once a bit of the signature, the key or the message flips.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_cms.h"

#include <nettle/sha3.h>

#define HEX_MAX 8192	/* bytes of the longest field (a message) */

struct kat_case {
	enum ms_mldsa_set set;
	bool is_ok;
	bool is_mu;
	uint8_t pk[HEX_MAX];
	size_t pk_len;
	uint8_t ctx[HEX_MAX];
	size_t ctx_len;
	uint8_t msg[HEX_MAX];
	size_t msg_len;
	uint8_t sig[HEX_MAX];
	size_t sig_len;
};

struct kat_count {
	size_t ok, bad, bad_key, flipped;
};

static enum ms_mldsa_set
set_of(const char *s)
{
	if (strcmp(s, "44") == 0) {
		return MS_MLDSA_44;
	}
	if (strcmp(s, "65") == 0) {
		return MS_MLDSA_65;
	}
	CHECK(strcmp(s, "87") == 0);
	return MS_MLDSA_87;
}

static size_t
field_hex(const char *s, uint8_t *out)
{
	return strcmp(s, "-") == 0 ? 0 : ms_test_hex(s, out, HEX_MAX);
}

static ms_err
kat_verify(const struct kat_case *c, const uint8_t *pk, const uint8_t *msg, const uint8_t *sig)
{
	struct ms_span m = { msg, c->msg_len };

	if (c->is_mu) {
		CHECK_EQ(c->msg_len, MS_MLDSA_MU_LEN);
		return ms_mldsa_verify_mu(c->set, pk, c->pk_len, msg, sig, c->sig_len);
	}
	return ms_cms_mldsa_verify(c->set, pk, c->pk_len, c->ctx, c->ctx_len, &m, 1, sig,
				   c->sig_len);
}

/* A valid case must fail with any one bit flipped: some of the signature, key and message. */
static void
kat_flips(const struct kat_case *c, struct kat_count *n)
{
	uint8_t *pk = malloc(c->pk_len), *msg = malloc(c->msg_len + 1), *sig = malloc(c->sig_len);
	size_t i;

	CHECK(pk != NULL && msg != NULL && sig != NULL);
	memcpy(pk, c->pk, c->pk_len);
	memcpy(msg, c->msg, c->msg_len);
	memcpy(sig, c->sig, c->sig_len);
	/* c-tilde, z and the hints: a byte in every stretch of 149, each bit in turn. */
	for (i = 0; i < c->sig_len; i += 149) {
		sig[i] ^= (uint8_t)(1u << (i % 8));
		CHECK(kat_verify(c, pk, msg, sig) != MS_OK);
		sig[i] ^= (uint8_t)(1u << (i % 8));
		n->flipped++;
	}
	sig[c->sig_len - 1] ^= 0x80;	/* the last hint count */
	CHECK(kat_verify(c, pk, msg, sig) != MS_OK);
	sig[c->sig_len - 1] ^= 0x80;
	/*
	 * rho and t1. Only with mu computed here: a low bit of t1 moves w by
	 * 2^13 c, often below what its high bits show; the key is bound
	 * through tr = H(pk) in mu (FIPS 204, Algorithm 8, steps 6 and 7).
	 */
	for (i = 0; i < c->pk_len && !c->is_mu; i += 331) {
		pk[i] ^= 0x01;
		CHECK_ERR(kat_verify(c, pk, msg, sig), MS_E_MISMATCH);
		pk[i] ^= 0x01;
		n->flipped++;
	}
	if (c->msg_len > 0) {
		msg[c->msg_len / 2] ^= 0x10;
		CHECK_ERR(kat_verify(c, pk, msg, sig), MS_E_MISMATCH);
		msg[c->msg_len / 2] ^= 0x10;
		n->flipped++;
	}
	/* And unchanged, it still verifies: the flips undid themselves. */
	CHECK_ERR(kat_verify(c, pk, msg, sig), MS_OK);
	free(pk);
	free(msg);
	free(sig);
}

/* A public key of the wrong length is refused whatever the signature. */
static void
kat_bad_key(const struct kat_case *c)
{
	size_t sig_len = ms_cms_mldsa_sig_len(c->set);
	uint8_t *sig = calloc(1, sig_len);
	struct ms_span m = { (const uint8_t *)"", 0 };

	CHECK(sig != NULL);
	CHECK(c->pk_len != ms_cms_mldsa_pk_len(c->set));
	CHECK_ERR(ms_cms_mldsa_verify(c->set, c->pk, c->pk_len, NULL, 0, &m, 1, sig, sig_len),
		  MS_E_MALFORMED);
	free(sig);
}

/*
 * One file of tests/data/mldsa/, lines as its header says:
 *   k <set> <ok|bad> <pk>
 *   v <set> <ok|bad> <pure|mu> <ctx|-> <msg|-> <sig>
 */
static void
kat_file(const char *name, struct kat_count *n, bool flip)
{
	struct kat_case *c = calloc(1, sizeof(*c));
	size_t len = 0;
	uint8_t *raw = cms_read(name, &len);
	char *text = malloc(len + 1), *save = NULL, *line;

	CHECK(c != NULL && text != NULL);
	memcpy(text, raw, len);
	text[len] = '\0';
	free(raw);
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *f[8], *fs = NULL;
		size_t nf = 0;

		if (line[0] == '#') {
			continue;
		}
		for (f[nf] = strtok_r(line, " ", &fs); f[nf] != NULL && nf < 7;
		     f[++nf] = strtok_r(NULL, " ", &fs)) {
		}
		CHECK(nf >= 4);
		c->set = set_of(f[1]);
		c->is_ok = strcmp(f[2], "ok") == 0;
		if (strcmp(f[0], "k") == 0) {
			CHECK_EQ(nf, 4);
			c->pk_len = field_hex(f[3], c->pk);
			if (!c->is_ok) {
				kat_bad_key(c);
				n->bad_key++;
			}
			continue;
		}
		CHECK(strcmp(f[0], "v") == 0 && nf == 7);
		c->is_mu = strcmp(f[3], "mu") == 0;
		c->ctx_len = field_hex(f[4], c->ctx);
		c->msg_len = field_hex(f[5], c->msg);
		c->sig_len = field_hex(f[6], c->sig);
		if (c->is_ok) {
			CHECK_ERR(kat_verify(c, c->pk, c->msg, c->sig), MS_OK);
			n->ok++;
			if (flip) {
				kat_flips(c, n);
			}
		} else {
			/* Refused as not verifying; only an over-long context is misuse. */
			CHECK_ERR(kat_verify(c, c->pk, c->msg, c->sig),
				  c->ctx_len > 255 ? MS_E_ARG : MS_E_MISMATCH);
			n->bad++;
		}
	}
	free(text);
	free(c);
}

MS_TEST(mldsa_acvp)
{
	struct kat_count n = { 0, 0, 0, 0 };

	kat_file("mldsa/acvp.txt", &n, true);
	/* All 90 sigVer cases (72 must fail) and 18 sigGen signatures. */
	CHECK_EQ(n.ok, 36);
	CHECK_EQ(n.bad, 72);
	CHECK(n.flipped > 36 * 20);
}

/* A Wycheproof file: @n_ok valid, @n_bad to refuse, two keys of the wrong length. */
static void
wycheproof(const char *name, size_t n_ok, size_t n_bad)
{
	struct kat_count n = { 0, 0, 0, 0 };

	kat_file(name, &n, false);
	CHECK_EQ(n.ok, n_ok);
	CHECK_EQ(n.bad, n_bad);
	CHECK_EQ(n.bad_key, 2);
}

MS_TEST(mldsa_wycheproof)
{
	wycheproof("mldsa/wycheproof_44.txt", 63, 15);
	wycheproof("mldsa/wycheproof_65.txt", 65, 16);
	wycheproof("mldsa/wycheproof_87.txt", 56, 18);
}

/* Wycheproof's first ML-DSA-44 case: "Hello world", empty context. */
static void
hello_case(struct kat_case *c)
{
	size_t len = 0;
	uint8_t *raw = cms_read("mldsa/wycheproof_44.txt", &len);
	char *text = malloc(len + 1), *k, *v, *sp;

	CHECK(text != NULL);
	memcpy(text, raw, len);
	text[len] = '\0';
	free(raw);
	k = strstr(text, "\nk 44 ok ");
	v = strstr(text, "\nv 44 ok pure - 48656c6c6f20776f726c64 ");
	CHECK(k != NULL && v != NULL);
	k += strlen("\nk 44 ok ");
	v += strlen("\nv 44 ok pure - 48656c6c6f20776f726c64 ");
	*strchr(k, '\n') = '\0';
	sp = strchr(v, '\n');
	if (sp != NULL) {
		*sp = '\0';
	}
	c->set = MS_MLDSA_44;
	c->pk_len = ms_test_hex(k, c->pk, HEX_MAX);
	c->sig_len = ms_test_hex(v, c->sig, HEX_MAX);
	memcpy(c->msg, "Hello world", 11);
	c->msg_len = 11;
	free(text);
}

MS_TEST(mldsa_message_in_pieces)
{
	struct kat_case *c = calloc(1, sizeof(*c));
	struct ms_span m[4];
	size_t cut;

	CHECK(c != NULL);
	hello_case(c);
	/* Any split, empty pieces among them, hashes as the whole message. */
	for (cut = 0; cut <= c->msg_len; cut++) {
		m[0] = (struct ms_span){ c->msg, cut };
		m[1] = (struct ms_span){ NULL, 0 };
		m[2] = (struct ms_span){ c->msg + cut, c->msg_len - cut };
		m[3] = (struct ms_span){ c->msg, 0 };
		CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, NULL, 0, m, 4,
					      c->sig, c->sig_len), MS_OK);
	}
	/* A piece more, or a byte less, is another message. */
	m[3] = (struct ms_span){ c->msg, 1 };
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, NULL, 0, m, 4, c->sig,
				      c->sig_len), MS_E_MISMATCH);
	m[0] = (struct ms_span){ c->msg, c->msg_len - 1 };
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, NULL, 0, m, 1, c->sig,
				      c->sig_len), MS_E_MISMATCH);
	free(c);
}

MS_TEST(mldsa_arguments)
{
	struct kat_case *c = calloc(1, sizeof(*c));
	struct ms_span m;
	uint8_t ctx[256] = { 0 };

	CHECK(c != NULL);
	hello_case(c);
	m = (struct ms_span){ c->msg, c->msg_len };
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, ctx, 256, &m, 1, c->sig,
				      c->sig_len), MS_E_ARG);
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, NULL, 1, &m, 1, c->sig,
				      c->sig_len), MS_E_ARG);
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_NONE, c->pk, c->pk_len, NULL, 0, &m, 1, c->sig,
				      c->sig_len), MS_E_ARG);
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, NULL, 0, NULL, 1, c->sig,
				      c->sig_len), MS_E_ARG);
	/* The key of one set is malformed for another; a signature a byte short fails. */
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_65, c->pk, c->pk_len, NULL, 0, &m, 1, c->sig,
				      c->sig_len), MS_E_MALFORMED);
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, NULL, 0, &m, 1, c->sig,
				      c->sig_len - 1), MS_E_MISMATCH);
	CHECK_EQ(ms_cms_mldsa_pk_len(MS_MLDSA_87), 2592);
	CHECK_EQ(ms_cms_mldsa_sig_len(MS_MLDSA_65), 3309);
	CHECK_EQ(ms_cms_mldsa_sig_len(MS_MLDSA_NONE), 0);
	free(c);
}

/* Our sponge against nettle's one-shot SHAKE256, in pieces across the 136-byte rate. */
MS_TEST(mldsa_shake256_pieces)
{
	static const size_t in_lens[] = { 0, 1, 135, 136, 137, 300, 1000 };
	uint8_t in[1000], want[700], got[700];
	size_t i, j;

	for (i = 0; i < sizeof(in); i++) {
		in[i] = (uint8_t)(i * 7 + 3);
	}
	for (i = 0; i < sizeof(in_lens) / sizeof(in_lens[0]); i++) {
		struct sha3_256_ctx ref;
		struct ms_keccak k;
		size_t at = 0, step = 1;

		sha3_256_init(&ref);
		sha3_256_update(&ref, in_lens[i], in);
		sha3_256_shake(&ref, sizeof(want), want);
		ms_keccak_init(&k, MS_SHAKE256_RATE);
		for (j = 0; j < in_lens[i]; j += step, step = step * 3 + 1) {
			size_t n = in_lens[i] - j < step ? in_lens[i] - j : step;

			ms_keccak_absorb(&k, in + j, n);
		}
		for (step = 1; at < sizeof(got); at += step, step = step * 2 + 1) {
			size_t n = sizeof(got) - at < step ? sizeof(got) - at : step;

			ms_keccak_squeeze(&k, got + at, n);
		}
		CHECK_MEM_EQ(got, want, sizeof(want));
	}
}

/* Coefficient 0 of z[0] set to gamma1 - @v: its 18 bits at the start of z (ML-DSA-44). */
static void
set_z0(uint8_t *sig, uint32_t v)
{
	uint8_t *z = sig + 32;

	z[0] = (uint8_t)v;
	z[1] = (uint8_t)(v >> 8);
	z[2] = (uint8_t)((z[2] & 0xfc) | ((v >> 16) & 0x03));
}

/* ||z||_inf < gamma1 - beta, at the edge on both sides (FIPS 204, Algorithm 8, step 13). */
MS_TEST(mldsa_z_bound)
{
	const struct ms_mldsa_params *p = ms_mldsa_params(MS_MLDSA_44);
	struct kat_case *c = calloc(1, sizeof(*c));
	struct ms_mldsa_poly z[MS_MLDSA_L_MAX];
	uint8_t h[MS_MLDSA_K_MAX][MS_MLDSA_N];
	uint32_t g1 = 1u << 17, beta = 78;

	CHECK(c != NULL && p != NULL && p->gamma1 == g1 && p->beta == beta);
	hello_case(c);
	CHECK_ERR(ms_mldsa_sig_decode(p, c->sig, z, h), MS_OK);
	set_z0(c->sig, beta + 1);		/* z = gamma1 - beta - 1 */
	CHECK_ERR(ms_mldsa_sig_decode(p, c->sig, z, h), MS_OK);
	CHECK_EQ(z[0].c[0], g1 - beta - 1);
	set_z0(c->sig, beta);			/* z = gamma1 - beta */
	CHECK_ERR(ms_mldsa_sig_decode(p, c->sig, z, h), MS_E_MISMATCH);
	CHECK_ERR(ms_cms_mldsa_verify(MS_MLDSA_44, c->pk, c->pk_len, NULL, 0, NULL, 0, c->sig,
				      c->sig_len), MS_E_MISMATCH);
	set_z0(c->sig, 2 * g1 - beta - 1);	/* z = -(gamma1 - beta - 1) */
	CHECK_ERR(ms_mldsa_sig_decode(p, c->sig, z, h), MS_OK);
	CHECK_EQ(z[0].c[0], MS_MLDSA_Q - (g1 - beta - 1));
	set_z0(c->sig, 2 * g1 - beta);		/* z = -(gamma1 - beta) */
	CHECK_ERR(ms_mldsa_sig_decode(p, c->sig, z, h), MS_E_MISMATCH);
	set_z0(c->sig, 0);			/* z = gamma1, the largest encodable */
	CHECK_ERR(ms_mldsa_sig_decode(p, c->sig, z, h), MS_E_MISMATCH);
	free(c);
}
