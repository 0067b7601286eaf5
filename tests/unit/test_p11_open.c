// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/pkcs11: CK_RV names, URIs, token selection and login. */
#include <stdio.h>
#include <string.h>

#include "../../src/pkcs11/p11.h"
#include "test.h"
#include "test_p11_fixture.h"

static unsigned
count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

MS_TEST(p11_rv_names)
{
	CHECK(strcmp(ms_p11_rv_name(CKR_PIN_INCORRECT), "CKR_PIN_INCORRECT") == 0);
	CHECK(strcmp(ms_p11_rv_name(CKR_OK), "CKR_OK") == 0);
	CHECK(strcmp(ms_p11_rv_name(CKR_UNWRAPPING_KEY_HANDLE_INVALID),
		     "CKR_UNWRAPPING_KEY_HANDLE_INVALID") == 0);
	CHECK(strcmp(ms_p11_rv_name(CKR_FUNCTION_REJECTED), "CKR_FUNCTION_REJECTED") == 0);
	CHECK(strcmp(ms_p11_rv_name(0x202), "CKR_OPERATION_CANCEL_FAILED") == 0);
	CHECK(strcmp(ms_p11_rv_name(0x4), "CKR_(unknown)") == 0);
	CHECK(strcmp(ms_p11_rv_name(0x7fffffffUL), "CKR_(unknown)") == 0);
	CHECK(strcmp(ms_p11_rv_name(CKR_VENDOR_DEFINED + 5), "CKR_VENDOR_DEFINED") == 0);
}

/* URIs refused before any module is loaded; no token needed. */
MS_TEST(p11_uri_rejects)
{
	static const char *const bad[] = {
		"file:/etc/passwd",
		"\tpkcs11:token=a",
		"pkcs11:token=a%zz",
		"pkcs11:token=a;token=b",
		"pkcs11:token=a?module-path=/x&module-path=/y",
		"pkcs11:token=a;foo=bar",
		"pkcs11:type=bogus",
		"",
	};
	struct ms_p11 *p11 = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_ERR(ms_p11_open(bad[i], MS_P11_FOR_KEY, &p11), MS_E_ARG);
		CHECK(p11 != NULL);
		CHECK(ms_p11_last_fail(p11)->detail[0] != '\0');
		ms_p11_close(p11);
		p11 = NULL;
	}
	CHECK_ERR(ms_p11_open(NULL, MS_P11_FOR_KEY, &p11), MS_E_ARG);
	ms_p11_close(p11);
	CHECK_ERR(ms_p11_open("pkcs11:", MS_P11_FOR_KEY, NULL), MS_E_ARG);
	CHECK(ms_p11_last_fail(NULL) != NULL);
	ms_p11_close(NULL);
}

MS_TEST(p11_uri_scheme_message)
{
	struct ms_p11 *p11 = NULL;

	CHECK_ERR(ms_p11_open("file:/x", MS_P11_FOR_KEY, &p11), MS_E_ARG);
	CHECK(strcmp(ms_p11_last_fail(p11)->call, "p11_kit_uri_parse") == 0);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "pkcs11") != NULL);
	ms_p11_close(p11);
}

/* A PIN in a URI never reaches a message, wherever the URI puts it. */
MS_TEST(p11_uri_pin_never_echoed)
{
	static const char *const uris[] = {
		"pkcs11:token=nope;pin-value=s3cr3t9876;foo=bar",
		"pkcs11:token=nope?pin-value=s3cr3t9876&pin-value=s3cr3t9876",
		"pkcs11:token=nope%zz?pin-value=s3cr3t9876",
	};
	struct ms_p11 *p11 = NULL;

	for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
		CHECK_ERR(ms_p11_open(uris[i], MS_P11_FOR_KEY, &p11), MS_E_ARG);
		CHECK(strstr(ms_p11_last_fail(p11)->detail, "s3cr3t") == NULL);
		ms_p11_close(p11);
	}
}

MS_TEST(p11_open_module_path_label)
{
	struct ms_p11 *p11;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	CHECK(strcmp(ms_p11_token_label(p11), "modsign-test") == 0);
	CHECK(ms_p11_needs_pin(p11));
	CHECK(ms_p11_uri_pin_value(p11) == NULL);
	CHECK(ms_p11_uri_pin_source(p11) == NULL);
	p11t_done(p11);
}

/* No module attribute: every module registered with p11-kit is searched. */
MS_TEST(p11_open_registry_token_only)
{
	struct ms_p11 *p11;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN);
	CHECK(strcmp(ms_p11_token_label(p11), "modsign-test") == 0);
	p11t_done(p11);
}

MS_TEST(p11_open_module_name)
{
	struct ms_p11 *p11 = NULL;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN "?module-name=softhsm2");
	ms_p11_close(p11);
	p11 = p11t_open(P11T_TOKEN "?module-name=libsofthsm2.so");
	ms_p11_close(p11);
	p11 = NULL;
	CHECK(ms_p11_open(P11T_TOKEN "?module-name=SoftHSM2", MS_P11_FOR_KEY, &p11) ==
	      MS_E_NOTFOUND);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "SoftHSM2") != NULL);
	p11t_done(p11);
}

/* Two tokens of one label that both show the key: a true tie. */
MS_TEST(p11_open_ambiguous_tokens)
{
	struct ms_p11 *p11 = NULL;
	const char *d;

	p11t_token();
	p11t_token_add("modsign-test", "4321", "rsa2048.key.pem");
	CHECK_ERR(ms_p11_open(P11T_TOKEN P11T_URI_PATH, MS_P11_FOR_KEY, &p11), MS_E_AMBIGUOUS);
	d = ms_p11_last_fail(p11)->detail;
	CHECK(strstr(d, "2 tokens match") != NULL);
	CHECK(strstr(d, "and 2 show the private key") != NULL);
	CHECK(count(d, "token=\"modsign-test\" serial=") == 2);
	CHECK(count(d, "manufacturer=\"SoftHSM project\"") == 2);
	CHECK(count(d, "module libsofthsm2.so") == 2);
	ms_p11_close(p11);
	/* The registry path lists the same two. */
	p11 = NULL;
	CHECK_ERR(ms_p11_open(P11T_TOKEN, MS_P11_FOR_KEY, &p11), MS_E_AMBIGUOUS);
	CHECK(count(ms_p11_last_fail(p11)->detail, "token=\"modsign-test\" serial=") == 2);
	p11t_done(p11);
}

MS_TEST(p11_open_unknown_token)
{
	struct ms_p11 *p11 = NULL;
	const char *d;

	p11t_token();
	CHECK_ERR(ms_p11_open("pkcs11:token=nope" P11T_URI_PATH "&pin-value=s3cr3t9876",
			  MS_P11_FOR_KEY, &p11), MS_E_NOTFOUND);
	d = ms_p11_last_fail(p11)->detail;
	CHECK(strstr(d, "token=\"nope\"") != NULL);
	CHECK(strstr(d, "module-path=\"" P11T_MODULE "\"") != NULL);
	CHECK(strstr(d, "token=\"modsign-test\"") != NULL);	/* what exists */
	CHECK(strstr(d, "s3cr3t") == NULL);
	CHECK(strcmp(ms_p11_uri_pin_value(p11), "s3cr3t9876") == 0);
	ms_p11_close(p11);
	p11 = NULL;
	CHECK(ms_p11_open(P11T_TOKEN ";slot-id=4242" P11T_URI_PATH, MS_P11_FOR_KEY, &p11) ==
	      MS_E_NOTFOUND);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "slot-id=4242") != NULL);
	ms_p11_close(p11);
	p11 = NULL;
	CHECK(ms_p11_open(P11T_TOKEN "?module-path=/nonexistent/libnone.so", MS_P11_FOR_KEY,
			  &p11) ==
	      MS_E_NOTFOUND);
	CHECK(strcmp(ms_p11_last_fail(p11)->call, "p11_kit_module_load") == 0);
	p11t_done(p11);
}

MS_TEST(p11_open_pin_source)
{
	struct ms_p11 *p11;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH "&pin-source=file:/some/file");
	CHECK(strcmp(ms_p11_uri_pin_source(p11), "file:/some/file") == 0);
	p11t_done(p11);
}

MS_TEST(p11_login_right_pin)
{
	struct ms_p11 *p11;
	struct ms_pin pin;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	p11t_wrap_install(p11);
	p11t_pin(&pin, P11T_PIN);
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_OK);
	CHECK(p11t_wrap.n_login == 1);
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_OK);	/* no second C_Login */
	CHECK(p11t_wrap.n_login == 1);
	p11t_done(p11);
}

MS_TEST(p11_login_wrong_pin_once)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	CK_TOKEN_INFO info;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	p11t_wrap_install(p11);
	p11t_pin(&pin, "0000");
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
	CHECK(strcmp(ms_p11_last_fail(p11)->call, "C_Login") == 0);
	CHECK(ms_p11_last_fail(p11)->rv == CKR_PIN_INCORRECT);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "0000") == NULL);
	CHECK(p11t_wrap.n_login == 1);
	/* Never retried, not even with the right PIN. */
	p11t_pin(&pin, P11T_PIN);
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
	CHECK(p11t_wrap.n_login == 1);
	/* SoftHSM2 counts the attempt: CKF_USER_PIN_COUNT_LOW. */
	CHECK(p11->fl->C_GetTokenInfo(p11->slot, &info) == CKR_OK);
	CHECK((info.flags & CKF_USER_PIN_COUNT_LOW) != 0);
	p11t_done(p11);
}

MS_TEST(p11_login_refusals)
{
	struct ms_p11 *p11;
	struct ms_pin pin;

	p11t_token();
	p11t_pin(&pin, P11T_PIN);
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	p11t_wrap_install(p11);
	CHECK_ERR(ms_p11_login(p11, NULL, 0), MS_E_PIN);		/* no PIN, no pad */
	p11t_wrap.add_token_flags = CKF_USER_PIN_LOCKED;
	CHECK_ERR(ms_p11_login(p11, &pin, MS_P11_LOGIN_ALLOW_FINAL_TRY), MS_E_PIN);
	p11t_wrap.add_token_flags = CKF_USER_PIN_FINAL_TRY;
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "CKF_USER_PIN_FINAL_TRY") != NULL);
	CHECK(p11t_wrap.n_login == 0);
	CHECK_ERR(ms_p11_login(p11, &pin, MS_P11_LOGIN_ALLOW_FINAL_TRY), MS_OK);
	CHECK(p11t_wrap.n_login == 1);
	p11t_done(p11);
}

/* A token that needs no login: nothing to do, no C_Login. */
MS_TEST(p11_login_not_required)
{
	struct ms_p11 *p11;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	p11t_wrap_install(p11);
	p11t_wrap.del_token_flags = CKF_LOGIN_REQUIRED;
	CHECK_ERR(ms_p11_login(p11, NULL, 0), MS_OK);
	CHECK(p11t_wrap.n_login == 0);
	CHECK(!ms_p11_needs_pin(p11));
	p11t_done(p11);
}

/*
 * An empty PIN, or one shorter than the token's ulMinPinLen, would only
 * spend one of the token's tries; it is refused without a C_Login.
 */
MS_TEST(p11_login_empty_or_short_pin_not_sent)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	CK_TOKEN_INFO info;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	p11t_wrap_install(p11);
	CHECK(p11->fl->C_GetTokenInfo(p11->slot, &info) == CKR_OK);
	CHECK(info.ulMinPinLen == 4);		/* SoftHSM2's */
	p11t_pin(&pin, "");
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "PIN from test is empty") != NULL);
	p11t_pin(&pin, "123");
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "ulMinPinLen 4") != NULL);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "123") == NULL);
	CHECK(p11t_wrap.n_login == 0);
	/* The token counted no wrong try. */
	CHECK(p11->fl->C_GetTokenInfo(p11->slot, &info) == CKR_OK);
	CHECK((info.flags & (CKF_USER_PIN_COUNT_LOW | CKF_USER_PIN_FINAL_TRY)) == 0);
	/* A token that does not say its minimum: only the empty PIN is kept back. */
	p11t_wrap.set_min_pin_len = true;
	p11t_wrap.min_pin_len = CK_UNAVAILABLE_INFORMATION;
	p11t_pin(&pin, "");
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
	CHECK(p11t_wrap.n_login == 0);
	/* A minimum the PIN meets exactly is no reason to hold it back. */
	p11t_wrap.min_pin_len = sizeof(P11T_PIN) - 1;
	p11t_pin(&pin, P11T_PIN);
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_OK);
	CHECK(p11t_wrap.n_login == 1);
	p11t_done(p11);
}

/*
 * A PIN longer than ulMaxPinLen is refused without a C_Login
 * (openCryptoki counts one as a wrong try); 0 and CK_UNAVAILABLE_INFORMATION
 * state no limit. The message names both limits, never the PIN.
 */
MS_TEST(p11_login_long_pin_not_sent)
{
	static const CK_ULONG no_limit[] = { CK_EFFECTIVELY_INFINITE, CK_UNAVAILABLE_INFORMATION };
	const size_t len = sizeof(P11T_PIN) - 1;
	struct ms_p11 *p11;
	struct ms_pin pin;
	CK_TOKEN_INFO info;

	p11t_token();
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	p11t_wrap_install(p11);
	CHECK(p11->fl->C_GetTokenInfo(p11->slot, &info) == CKR_OK);
	CHECK_EQ(info.ulMaxPinLen, 255);		/* SoftHSM2's */
	p11t_wrap.set_max_pin_len = true;
	p11t_wrap.max_pin_len = len - 1;
	p11t_pin(&pin, P11T_PIN);
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
	CHECK_STR_EQ(ms_p11_last_fail(p11)->call, "C_Login");
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "PIN from test is longer than token") != NULL);
	CHECK(strstr(ms_p11_last_fail(p11)->detail,
		     "(ulMinPinLen 4, ulMaxPinLen 3 bytes)") != NULL);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, P11T_PIN) == NULL);
	CHECK(p11t_wrap.n_login == 0);
	for (size_t i = 0; i < sizeof(no_limit) / sizeof(no_limit[0]); i++) {
		p11t_wrap.max_pin_len = no_limit[i];
		p11t_pin(&pin, "123");	/* still under the minimum, named alone */
		CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_E_PIN);
		CHECK(strstr(ms_p11_last_fail(p11)->detail, "(ulMinPinLen 4 bytes)") != NULL);
		CHECK(p11t_wrap.n_login == 0);
	}
	/* A maximum the PIN meets exactly is no reason to hold it back. */
	p11t_wrap.max_pin_len = len;
	p11t_pin(&pin, P11T_PIN);
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_OK);
	CHECK(p11t_wrap.n_login == 1);
	p11t_done(p11);
}

/*
 * A URI without token= and two tokens, of which one holds the key. The
 * other shows nothing without a login: the one that shows the key's
 * public half is taken, and only it is logged in to.
 */
MS_TEST(p11_open_two_tokens_one_holds)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	uint8_t *der = NULL;
	size_t len = 0;

	p11t_token();
	p11t_token_add("other", "4321", NULL);
	p11 = p11t_open("pkcs11:object=rsa2048;type=private" P11T_URI_PATH);
	CHECK(strcmp(ms_p11_token_label(p11), "modsign-test") == 0);
	p11t_wrap_install(p11);
	p11t_pin(&pin, P11T_PIN);
	CHECK_ERR(ms_p11_login(p11, &pin, 0), MS_OK);
	CHECK(p11t_wrap.n_login == 1);
	p11t_wrap_remove(p11);
	ms_p11_close(p11);
	/* By id alone, and for the certificate. */
	p11 = p11t_open("pkcs11:id=%01" P11T_URI_PATH);
	CHECK(strcmp(ms_p11_token_label(p11), "modsign-test") == 0);
	ms_p11_close(p11);
	p11 = NULL;
	CHECK_ERR(ms_p11_open("pkcs11:object=rsa2048;type=cert" P11T_URI_PATH, MS_P11_FOR_CERT,
			  &p11), MS_OK);
	CHECK(strcmp(ms_p11_token_label(p11), "modsign-test") == 0);
	CHECK_ERR(ms_p11_cert_find(p11, &der, &len), MS_OK);
	free(der);
	p11t_done(p11);
}

/* Neither token shows the object: both may hide a key, neither a certificate. */
MS_TEST(p11_open_two_tokens_none_shows)
{
	struct ms_p11 *p11 = NULL;
	const char *d;

	p11t_token();
	p11t_token_add("other", "4321", NULL);
	CHECK_ERR(ms_p11_open("pkcs11:object=nosuch;type=private" P11T_URI_PATH, MS_P11_FOR_KEY,
			  &p11), MS_E_AMBIGUOUS);
	d = ms_p11_last_fail(p11)->detail;
	CHECK(strstr(d, "2 tokens match") != NULL);
	CHECK(strstr(d, "2 may hold (behind their login) the private key object=\"nosuch\"") !=
	      NULL);
	CHECK(strstr(d, "token=\"modsign-test\"") != NULL);
	CHECK(strstr(d, "token=\"other\"") != NULL);
	ms_p11_close(p11);
	p11 = NULL;
	CHECK_ERR(ms_p11_open("pkcs11:object=nosuch;type=cert" P11T_URI_PATH, MS_P11_FOR_CERT,
			  &p11), MS_E_NOTFOUND);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "none can hold the certificate") != NULL);
	ms_p11_close(p11);
	p11 = NULL;
	/* The key on both: listed as showing it. */
	p11t_token_add("third", "4321", "rsa2048.key.pem");
	CHECK_ERR(ms_p11_open("pkcs11:object=rsa2048;type=private" P11T_URI_PATH, MS_P11_FOR_KEY,
			  &p11), MS_E_AMBIGUOUS);
	d = ms_p11_last_fail(p11)->detail;
	CHECK(strstr(d, "3 tokens match") != NULL);
	CHECK(strstr(d, "and 2 show the private key") != NULL);
	CHECK(strstr(d, "token=\"third\"") != NULL);
	CHECK(strstr(d, "token=\"other\"") == NULL);
	p11t_done(p11);
}
