// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/pkcs11 signing: RSA against openssl's deterministic
 * PKCS#1 v1.5 output, ECDSA verified by openssl, parallel sessions, and
 * replies a real token never sends (through the fixture's wrapper).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/pkcs11/p11.h"
#include "test.h"
#include "test_p11_fixture.h"

#define URI(path_attrs) P11T_TOKEN ";" path_attrs P11T_URI_PATH

/* openssl's PKCS#1 v1.5 signature (type 1 padding) of @tbs with @key. */
static unsigned char *
openssl_rsa_sign(const char *key, const uint8_t *tbs, size_t tbs_len, size_t *len)
{
	char in[128], out[128];

	snprintf(in, sizeof(in), "%s", p11t_write("tbs.bin", tbs, tbs_len));
	snprintf(out, sizeof(out), "%s/sig.bin", p11t_dir());
	CHECK(p11t_run("openssl pkeyutl -sign -inkey '%s' -in '%s' -out '%s'",
		       ms_test_data(key), in, out) == 0);
	return ms_test_read(out, len);
}

MS_TEST(p11_sign_rsa_matches_openssl)
{
	static const struct {
		const char *uri, *key;
		size_t len;
	} keys[] = {
		{ URI("object=rsa2048"), "rsa2048.key.pem", 256 },
		{ URI("id=%02"), "rsa3072.key.pem", 384 },
		{ URI("object=rsa4096"), "rsa4096.key.pem", 512 },
	};
	uint8_t tbs[64], sig[600];
	struct ms_pin pin;
	size_t tbs_len, sig_len = 0, want_len = 0;

	p11t_token();
	tbs_len = ms_test_hex(P11T_DIGEST_INFO_HEX, tbs, sizeof(tbs));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct ms_p11 *p11 = p11t_open_key(keys[i].uri, &pin, MS_P11_KEY_RSA);
		unsigned char *want = openssl_rsa_sign(keys[i].key, tbs, tbs_len, &want_len);

		CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, NULL, 0, &sig_len), MS_OK);
		CHECK(sig_len == keys[i].len);
		CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, sig, sizeof(sig), &sig_len), MS_OK);
		CHECK(sig_len == keys[i].len && want_len == sig_len);
		CHECK_EQ_BYTES(sig, want, sig_len);
		free(want);
		ms_p11_close(p11);
	}
	p11t_done(NULL);
}

/* DER INTEGER of one big-endian half of r||s. */
static size_t
der_int(uint8_t *out, const uint8_t *p, size_t n)
{
	size_t o = 0;

	while (n > 1 && p[0] == 0) {
		p++;
		n--;
	}
	out[o++] = 0x02;
	out[o++] = (uint8_t)(n + (p[0] >> 7));
	if (p[0] & 0x80) {
		out[o++] = 0;
	}
	memcpy(out + o, p, n);
	return o + n;
}

/* openssl verifies the r||s signature over @digest. */
static void
openssl_ec_verify(const char *key, const uint8_t *digest, size_t dlen, const uint8_t *rs,
		  size_t rs_len)
{
	uint8_t body[200], der[210];
	char in[128], sigf[128];
	size_t blen, dl = 0;

	blen = der_int(body, rs, rs_len / 2);
	blen += der_int(body + blen, rs + rs_len / 2, rs_len / 2);
	der[dl++] = 0x30;
	if (blen > 127) {
		der[dl++] = 0x81;
	}
	der[dl++] = (uint8_t)blen;
	memcpy(der + dl, body, blen);
	snprintf(in, sizeof(in), "%s", p11t_write("digest.bin", digest, dlen));
	snprintf(sigf, sizeof(sigf), "%s", p11t_write("sig.der", der, dl + blen));
	CHECK(p11t_run("openssl pkeyutl -verify -inkey '%s' -in '%s' -sigfile '%s' >/dev/null",
		       ms_test_data(key), in, sigf) == 0);
	/* And a forgery fails. */
	der[dl + blen - 1] ^= 1;
	p11t_write("sig.der", der, dl + blen);
	CHECK(p11t_run("openssl pkeyutl -verify -inkey '%s' -in '%s' -sigfile '%s' "
		       ">/dev/null 2>&1", ms_test_data(key), in, sigf) != 0);
}

MS_TEST(p11_sign_ec_sizes_and_verify)
{
	static const struct {
		const char *uri, *key;
		size_t len;
	} keys[] = {
		{ URI("object=ec256"), "ec256.key.pem", 64 },
		{ URI("object=ec384"), "ec384.key.pem", 96 },
		{ URI("id=%06"), "ec521.key.pem", 132 },
	};
	uint8_t digest[32], sig[200];
	struct ms_pin pin;
	size_t sig_len = 0;

	p11t_token();
	for (size_t i = 0; i < sizeof(digest); i++) {
		digest[i] = (uint8_t)(0xa0 + i);
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		struct ms_p11 *p11 = p11t_open_key(keys[i].uri, &pin, MS_P11_KEY_EC);

		CHECK_ERR(ms_p11_sign(p11, 0, digest, sizeof(digest), NULL, 0, &sig_len), MS_OK);
		CHECK(sig_len == keys[i].len);
		CHECK(ms_p11_sign(p11, 0, digest, sizeof(digest), sig, sizeof(sig), &sig_len) ==
		      MS_OK);
		CHECK(sig_len == keys[i].len);
		openssl_ec_verify(keys[i].key, digest, sizeof(digest), sig, sig_len);
		ms_p11_close(p11);
	}
	p11t_done(NULL);
}

/*
 * A digest shorter than the curve takes reaches C_Sign left-padded with
 * zeros to 32, 48 or 64 bytes (tpm2-pkcs11 refuses 28 bytes), never past
 * the order's bit length; the signature verifies over the digest itself.
 */
MS_TEST(p11_sign_ec_short_digest_widened)
{
	static const struct {
		const char *uri, *key;
		size_t digest_len, want_len;
	} cases[] = {
		{ URI("object=ec256"), "ec256.key.pem", 28, 32 },	/* SHA-224 */
		{ URI("object=ec256"), "ec256.key.pem", 20, 32 },	/* SHA-1 */
		{ URI("object=ec256"), "ec256.key.pem", 48, 48 },	/* SHA-384: cut by ECDSA */
		{ URI("object=ec384"), "ec384.key.pem", 32, 48 },
		{ URI("object=ec384"), "ec384.key.pem", 28, 48 },
		{ URI("id=%06"), "ec521.key.pem", 48, 64 },
		{ URI("id=%06"), "ec521.key.pem", 28, 64 },
		{ URI("id=%06"), "ec521.key.pem", 64, 64 },
	};
	uint8_t digest[64], sig[200];
	struct ms_pin pin;
	size_t sig_len = 0;

	p11t_token();
	for (size_t i = 0; i < sizeof(digest); i++) {
		digest[i] = (uint8_t)(0x81 + i);	/* top bit set: a lost zero shows */
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ms_p11 *p11 = p11t_open_key(cases[i].uri, &pin, MS_P11_KEY_EC);
		size_t n = cases[i].digest_len, pad = cases[i].want_len - n;

		p11t_wrap_install(p11);
		CHECK_ERR(ms_p11_sign(p11, 0, digest, n, sig, sizeof(sig), &sig_len), MS_OK);
		CHECK_EQ(p11t_wrap.sign_data_len, cases[i].want_len);
		for (size_t j = 0; j < pad; j++) {
			CHECK_EQ(p11t_wrap.sign_data[j], 0);
		}
		CHECK_MEM_EQ(p11t_wrap.sign_data + pad, digest, n);
		openssl_ec_verify(cases[i].key, digest, n, sig, sig_len);
		p11t_wrap_remove(p11);
		ms_p11_close(p11);
	}
	p11t_done(NULL);
}

MS_TEST(p11_sign_refusals)
{
	uint8_t tbs[64], sig[512];
	struct ms_p11 *p11;
	struct ms_pin pin;
	size_t tbs_len, sig_len = 0;

	p11t_token();
	tbs_len = ms_test_hex(P11T_DIGEST_INFO_HEX, tbs, sizeof(tbs));
	p11 = p11t_open_login(URI("object=rsa2048"), &pin);
	/* No key found yet. */
	CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, sig, sizeof(sig), &sig_len), MS_E_ARG);
	ms_p11_close(p11);
	p11 = p11t_open_key(URI("object=rsa2048"), &pin, MS_P11_KEY_RSA);
	p11t_wrap_install(p11);
	CHECK_ERR(ms_p11_sign(p11, 1, tbs, tbs_len, sig, sizeof(sig), &sig_len), MS_E_ARG);
	CHECK_ERR(ms_p11_sign(p11, 0, tbs, 0, sig, sizeof(sig), &sig_len), MS_E_ARG);
	CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, sig, 255, &sig_len), MS_E_NOSPACE);
	CHECK(strstr(ms_p11_session_fail(p11, 0)->detail, "256") != NULL);
	CHECK(p11t_wrap.n_sign == 0);
	/* A module claiming more bytes than the buffer holds. */
	p11t_wrap.sign_len_add = 1;
	CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, sig, sizeof(sig), &sig_len), MS_E_MALFORMED);
	CHECK(strcmp(ms_p11_session_fail(p11, 0)->call, "C_Sign") == 0);
	p11t_wrap.sign_len_add = 0;
	CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, sig, sizeof(sig), &sig_len), MS_OK);
	CHECK(ms_p11_session_fail(p11, 0)->call == NULL);
	/* A message in parts is ML-DSA's: CKM_RSA_PKCS is single-part. */
	{
		const struct ms_span part = { tbs, tbs_len };
		unsigned n_sign = p11t_wrap.n_sign;

		CHECK_ERR(ms_p11_sign_parts(p11, 0, &part, 1, sig, sizeof(sig), &sig_len),
			  MS_E_ARG);
		CHECK(strstr(ms_p11_session_fail(p11, 0)->detail, "ML-DSA") != NULL);
		CHECK(p11t_wrap.n_sign == n_sign);
	}
	p11t_done(p11);
}

MS_TEST(p11_session_count_max)
{
	struct ms_p11 *p11;

	p11t_token();
	p11 = p11t_open(URI("object=rsa2048"));
	CHECK(ms_p11_session_count_max(p11, 4) == 4);	/* SoftHSM2: no limit */
	CHECK(ms_p11_session_count_max(p11, 1) == 1);
	CHECK(ms_p11_session_count_max(p11, 0) == 1);
	p11t_wrap_install(p11);
	p11t_wrap.max_sessions = 1;
	CHECK(ms_p11_session_count_max(p11, 4) == 1);
	p11t_wrap.max_sessions = 2;		/* one free: keep to one */
	CHECK(ms_p11_session_count_max(p11, 4) == 1);
	p11t_wrap.max_sessions = 3;
	CHECK(ms_p11_session_count_max(p11, 8) == 3);
	p11t_wrap.max_sessions = CK_UNAVAILABLE_INFORMATION;
	CHECK(ms_p11_session_count_max(p11, 8) == 8);
	CHECK(ms_p11_session_count_max(NULL, 8) == 1);
	p11t_done(p11);
}

struct signer {
	struct ms_p11 *p11;
	unsigned session;
	const uint8_t *tbs, *want;
	size_t tbs_len, want_len;
	int ok;
};

static void *
signer_run(void *arg)
{
	struct signer *s = arg;
	uint8_t sig[512];
	size_t sig_len = 0;

	for (int i = 0; i < 40; i++) {
		if (ms_p11_sign(s->p11, s->session, s->tbs, s->tbs_len, sig, sizeof(sig),
				&sig_len) != MS_OK ||
		    sig_len != s->want_len || memcmp(sig, s->want, sig_len) != 0) {
			return NULL;
		}
	}
	s->ok = 1;
	return NULL;
}

MS_TEST(p11_sign_two_sessions_two_threads)
{
	struct signer s[2];
	pthread_t th[2];
	uint8_t tbs[64];
	struct ms_p11 *p11;
	struct ms_pin pin;
	unsigned char *want;
	size_t tbs_len, want_len = 0;
	unsigned index = 0;

	p11t_token();
	tbs_len = ms_test_hex(P11T_DIGEST_INFO_HEX, tbs, sizeof(tbs));
	want = openssl_rsa_sign("rsa2048.key.pem", tbs, tbs_len, &want_len);
	p11 = p11t_open_key(URI("object=rsa2048"), &pin, MS_P11_KEY_RSA);
	CHECK(ms_p11_session_count_max(p11, 2) == 2);
	CHECK_ERR(ms_p11_session_add(p11, &index), MS_OK);
	CHECK(index == 1);
	for (unsigned i = 0; i < 2; i++) {
		s[i] = (struct signer){ p11, i, tbs, want, tbs_len, want_len, 0 };
		CHECK(pthread_create(&th[i], NULL, signer_run, &s[i]) == 0);
	}
	for (unsigned i = 0; i < 2; i++) {
		CHECK(pthread_join(th[i], NULL) == 0);
		CHECK(s[i].ok);
	}
	free(want);
	p11t_done(p11);
}

/* CKA_ALWAYS_AUTHENTICATE: one context-specific C_Login per signature. */
MS_TEST(p11_sign_always_authenticate)
{
	uint8_t digest[32] = { 1, 2, 3 }, sig[64];
	enum ms_p11_key_type type = 0;
	struct ms_p11 *p11;
	struct ms_pin pin;
	size_t sig_len = 0;

	p11t_token();
	CHECK(p11t_run("pkcs11-tool --module " P11T_MODULE " --login --pin " P11T_PIN
		       " --keypairgen --key-type EC:prime256v1 --always-auth --label aa "
		       "--id 0c >/dev/null 2>&1") == 0);
	p11 = p11t_open_login(URI("object=aa"), &pin);
	CHECK(ms_p11_key_find(p11, &type) == MS_OK && type == MS_P11_KEY_EC);
	CHECK(ms_p11_key_always_authenticate(p11));
	p11t_wrap_install(p11);
	for (int i = 0; i < 3; i++) {
		CHECK(ms_p11_sign(p11, 0, digest, sizeof(digest), sig, sizeof(sig), &sig_len) ==
		      MS_OK);
		CHECK(sig_len == 64);
	}
	CHECK(p11t_wrap.n_login == 3);
	p11t_done(p11);
}

/*
 * A lost session whose token also forgot the login: recovery logs in again
 * with the PIN already given, once, finds the key again (SoftHSM2 drops the
 * handles of private objects at logout) and signs; a PIN refused before is
 * never offered again. (Written with the mutation check, tests/mutants.)
 */
MS_TEST(p11_session_recover_login_again)
{
	uint8_t tbs[64], sig[512];
	struct ms_p11 *p11;
	struct ms_pin pin;
	size_t tbs_len, sig_len = 0;

	p11t_token();
	tbs_len = ms_test_hex(P11T_DIGEST_INFO_HEX, tbs, sizeof(tbs));
	p11 = p11t_open_key(URI("object=rsa2048"), &pin, MS_P11_KEY_RSA);
	p11t_wrap_install(p11);
	CHECK(p11->fl->C_Logout(p11->sess[0].h) == CKR_OK);	/* the token forgets */
	CHECK_ERR(ms_p11_session_recover(p11, 0), MS_OK);
	CHECK(p11t_wrap.n_login == 1);
	CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, sig, sizeof(sig), &sig_len), MS_OK);
	CHECK(sig_len == 256);
	CHECK(p11->fl->C_Logout(p11->sess[0].h) == CKR_OK);
	atomic_store(&p11->pin_rejected, true);	/* as after a refused login */
	CHECK_ERR(ms_p11_session_recover(p11, 0), MS_E_PIN);
	CHECK(p11t_wrap.n_login == 1);
	p11t_done(p11);
}
