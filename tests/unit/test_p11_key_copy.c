// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the session copy of the key that SoftHSM2 signs with
 * (src/pkcs11/sign.c, sign_key()): one copy per session, the same
 * signatures, and the token object whenever there is no copy to use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/pkcs11/p11.h"
#include "test.h"
#include "test_p11_fixture.h"

#define KEY_URI P11T_TOKEN ";object=rsa2048" P11T_URI_PATH

/* The private keys session @h sees that are session objects (copies). */
static size_t
session_keys(struct ms_p11 *p11, CK_SESSION_HANDLE h)
{
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_BBOOL no = CK_FALSE;
	CK_ATTRIBUTE tmpl[] = {
		{ CKA_CLASS, &cls, sizeof(cls) },
		{ CKA_TOKEN, &no, sizeof(no) },
	};
	CK_OBJECT_HANDLE objs[8];
	size_t n = 0;
	struct ms_p11_fail f;

	CHECK_ERR(ms_p11i_find_on(p11->fl, h, tmpl, 2, objs, 8, &n, &f), MS_OK);
	return n;
}

/* Signs the fixed DigestInfo on @session; the signature must be @want's. */
static void
sign_as(struct ms_p11 *p11, unsigned session, const uint8_t *want, size_t want_len)
{
	uint8_t tbs[64], sig[512];
	size_t tbs_len, sig_len = 0;

	tbs_len = ms_test_hex(P11T_DIGEST_INFO_HEX, tbs, sizeof(tbs));
	CHECK_ERR(ms_p11_sign(p11, session, tbs, tbs_len, sig, sizeof(sig), &sig_len), MS_OK);
	CHECK(sig_len == want_len);
	CHECK_EQ_BYTES(sig, want, sig_len);
}

/* The token object's signature, made with the copy turned off. */
static uint8_t *
reference_signature(struct ms_p11 *p11, size_t *len)
{
	uint8_t tbs[64], *sig = malloc(512);
	size_t tbs_len;
	bool was = p11->key_in_memory;

	CHECK(sig != NULL);
	tbs_len = ms_test_hex(P11T_DIGEST_INFO_HEX, tbs, sizeof(tbs));
	p11->key_in_memory = false;
	CHECK_ERR(ms_p11_sign(p11, 0, tbs, tbs_len, sig, 512, len), MS_OK);
	p11->key_in_memory = was;
	CHECK(p11->sess[0].key_copy == CK_INVALID_HANDLE && !p11->sess[0].copy_tried);
	return sig;
}

MS_TEST(p11_key_copy_softhsm_detected)
{
	CK_TOKEN_INFO info;

	memset(&info, ' ', sizeof(info));
	memcpy(info.manufacturerID, "SoftHSM project", 15);
	CHECK(ms_p11i_token_is_softhsm(&info));
	info.manufacturerID[15] = 'X';	/* a longer name is another maker */
	CHECK(!ms_p11i_token_is_softhsm(&info));
	memset(info.manufacturerID, ' ', sizeof(info.manufacturerID));
	memcpy(info.manufacturerID, "SoftHSM", 7);
	CHECK(!ms_p11i_token_is_softhsm(&info));
}

/* One copy per session, made at its first signature, and the same bytes. */
MS_TEST(p11_key_copy_one_per_session)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	uint8_t *want;
	size_t want_len = 0;
	unsigned index = 0;

	p11t_token();
	p11 = p11t_open_key(KEY_URI, &pin, MS_P11_KEY_RSA);
	CHECK(p11->key_in_memory);	/* the fixture's token is SoftHSM2 */
	want = reference_signature(p11, &want_len);
	CHECK(session_keys(p11, p11->sess[0].h) == 0);
	for (int i = 0; i < 3; i++) {
		sign_as(p11, 0, want, want_len);
	}
	CHECK(p11->sess[0].key_copy != CK_INVALID_HANDLE);
	CHECK(p11->sess[0].key_copy != atomic_load(&p11->key));
	CHECK(session_keys(p11, p11->sess[0].h) == 1);
	CHECK(ms_p11_session_add(p11, &index) == MS_OK && index == 1);
	sign_as(p11, 1, want, want_len);
	CHECK(p11->sess[1].key_copy != CK_INVALID_HANDLE);
	CHECK(p11->sess[1].key_copy != p11->sess[0].key_copy);
	free(want);
	p11t_done(p11);
}

/* A copy that vanished: the key itself signs, and a new session copies again. */
MS_TEST(p11_key_copy_gone)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	uint8_t *want;
	size_t want_len = 0;

	p11t_token();
	p11 = p11t_open_key(KEY_URI, &pin, MS_P11_KEY_RSA);
	want = reference_signature(p11, &want_len);

	/* Vanished: the next C_SignInit fails on the copy, the key itself signs. */
	sign_as(p11, 0, want, want_len);
	CHECK(p11->fl->C_DestroyObject(p11->sess[0].h, p11->sess[0].key_copy) == CKR_OK);
	sign_as(p11, 0, want, want_len);
	CHECK(p11->sess[0].key_copy == CK_INVALID_HANDLE);
	sign_as(p11, 0, want, want_len);
	CHECK(session_keys(p11, p11->sess[0].h) == 0);	/* not copied again */

	/* A new session (as after a lost one) copies again. */
	CHECK(p11->fl->C_Logout(p11->sess[0].h) == CKR_OK);
	CHECK_ERR(ms_p11_session_recover(p11, 0), MS_OK);
	CHECK(!p11->sess[0].copy_tried);
	sign_as(p11, 0, want, want_len);
	CHECK(session_keys(p11, p11->sess[0].h) == 1);

	free(want);
	p11t_done(p11);
}

/*
 * Makes an RSA key pair labelled "nocopy" whose private key has CKA_COPYABLE
 * false (PKCS#11 2.40, 4.4; SoftHSM2 refuses to change it afterwards).
 */
static void
make_nocopy_key(void)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	CK_SESSION_HANDLE rw = CK_INVALID_HANDLE;
	CK_MECHANISM mech = { CKM_RSA_PKCS_KEY_PAIR_GEN, NULL, 0 };
	CK_ULONG bits = 1024;
	CK_BYTE e[] = { 1, 0, 1 }, id[] = { 0x0d };
	CK_BBOOL yes = CK_TRUE, no = CK_FALSE;
	char label[] = "nocopy";
	CK_ATTRIBUTE pub[] = {
		{ CKA_TOKEN, &yes, sizeof(yes) }, { CKA_MODULUS_BITS, &bits, sizeof(bits) },
		{ CKA_PUBLIC_EXPONENT, e, sizeof(e) }, { CKA_LABEL, label, sizeof(label) - 1 },
		{ CKA_ID, id, sizeof(id) }, { CKA_VERIFY, &yes, sizeof(yes) },
	};
	CK_ATTRIBUTE priv[] = {
		{ CKA_TOKEN, &yes, sizeof(yes) }, { CKA_PRIVATE, &yes, sizeof(yes) },
		{ CKA_SENSITIVE, &yes, sizeof(yes) }, { CKA_SIGN, &yes, sizeof(yes) },
		{ CKA_LABEL, label, sizeof(label) - 1 }, { CKA_ID, id, sizeof(id) },
		{ CKA_COPYABLE, &no, sizeof(no) },
	};
	CK_OBJECT_HANDLE hpub, hpriv;

	p11 = p11t_open_login(KEY_URI, &pin);
	CHECK(p11->fl->C_OpenSession(p11->slot, CKF_SERIAL_SESSION | CKF_RW_SESSION, NULL, NULL,
				     &rw) == CKR_OK);
	CHECK(p11->fl->C_GenerateKeyPair(rw, &mech, pub, sizeof(pub) / sizeof(pub[0]), priv,
					 sizeof(priv) / sizeof(priv[0]), &hpub, &hpriv) == CKR_OK);
	CHECK(p11->fl->C_CloseSession(rw) == CKR_OK);
	ms_p11_close(p11);	/* the token stays for the test */
}

/* A key that may not be copied signs as itself. */
MS_TEST(p11_key_copy_refused)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	uint8_t *want;
	size_t want_len = 0;

	p11t_token();
	make_nocopy_key();
	p11 = p11t_open_key(P11T_TOKEN ";object=nocopy" P11T_URI_PATH, &pin, MS_P11_KEY_RSA);
	want = reference_signature(p11, &want_len);
	CHECK(want_len == 128);
	sign_as(p11, 0, want, want_len);
	CHECK(p11->sess[0].copy_tried && p11->sess[0].key_copy == CK_INVALID_HANDLE);
	CHECK(session_keys(p11, p11->sess[0].h) == 0);
	sign_as(p11, 0, want, want_len);
	free(want);
	p11t_done(p11);
}
