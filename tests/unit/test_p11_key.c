// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/pkcs11: finding keys and certificates, public halves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/pkcs11/p11.h"
#include "test.h"
#include "test_p11_fixture.h"

#define URI(path_attrs) P11T_TOKEN ";" path_attrs P11T_URI_PATH

static enum ms_p11_key_type
find_key(const char *uri)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	enum ms_p11_key_type type = 0;
	ms_err err;

	p11 = p11t_open_login(uri, &pin);
	err = ms_p11_key_find(p11, &type);
	if (err != MS_OK) {
		fprintf(stderr, "%s: %s\n", ms_err_str(err), ms_p11_last_fail(p11)->detail);
	}
	CHECK_ERR(err, MS_OK);
	CHECK(!ms_p11_key_always_authenticate(p11));
	ms_p11_close(p11);
	return type;
}

MS_TEST(p11_key_find_by_label_id_type)
{
	p11t_token();
	CHECK(find_key(URI("object=rsa2048")) == MS_P11_KEY_RSA);
	CHECK(find_key(URI("id=%01")) == MS_P11_KEY_RSA);
	CHECK(find_key(URI("object=rsa2048;type=private")) == MS_P11_KEY_RSA);
	CHECK(find_key(URI("object=rsa4096;id=%03")) == MS_P11_KEY_RSA);
	CHECK(find_key(URI("object=ec256")) == MS_P11_KEY_EC);
	CHECK(find_key(URI("id=%06")) == MS_P11_KEY_EC);
	p11t_done(NULL);
}

MS_TEST(p11_key_find_errors)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	enum ms_p11_key_type type;

	p11t_token();
	p11 = p11t_open(URI("object=rsa2048"));
	/* Before the login SoftHSM2 hides private keys; the message says so. */
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_NOTFOUND);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "not logged in") != NULL);
	ms_p11_close(p11);

	p11 = p11t_open_login(URI("object=nope"), &pin);
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_NOTFOUND);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "object=\"nope\"") != NULL);
	ms_p11_close(p11);

	p11 = p11t_open_login(URI("object=rsa2048;id=%02"), &pin);
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_NOTFOUND);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "id=02") != NULL);
	ms_p11_close(p11);

	p11 = p11t_open_login(URI("object=rsa2048;type=cert"), &pin);
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_ARG);
	ms_p11_close(p11);

	/* No object= nor id=: six private keys match. */
	p11 = p11t_open_login(P11T_TOKEN P11T_URI_PATH, &pin);
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_AMBIGUOUS);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "6 objects") != NULL);
	CHECK_ERR(ms_p11_key_public(p11, &(struct ms_p11_pubkey){ 0 }), MS_E_ARG);
	p11t_done(p11);
}

MS_TEST(p11_key_find_ambiguous_label)
{
	struct ms_p11 *p11;
	struct ms_pin pin;
	enum ms_p11_key_type type;
	const char *d;

	p11t_token();
	for (int i = 0; i < 2; i++) {
		CHECK(p11t_run("softhsm2-util --import '%s' --token modsign-test --label dup "
			       "--id %s --pin " P11T_PIN " >/dev/null 2>&1",
			       ms_test_data("rsa2048.key.pem"), i == 0 ? "0a" : "0b") == 0);
	}
	p11 = p11t_open_login(URI("object=dup"), &pin);
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_AMBIGUOUS);
	d = ms_p11_last_fail(p11)->detail;
	CHECK(strstr(d, "2 objects") != NULL);
	CHECK(strstr(d, "object=\"dup\" id=0a") != NULL);
	CHECK(strstr(d, "object=\"dup\" id=0b") != NULL);
	ms_p11_close(p11);
	CHECK(find_key(URI("object=dup;id=%0b")) == MS_P11_KEY_RSA);
	p11t_done(NULL);
}

/* The modulus as `openssl rsa -noout -modulus` prints it, as bytes. */
static size_t
openssl_modulus(const char *key, uint8_t *out, size_t cap)
{
	char path[128];
	unsigned char *text;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/modulus.txt", p11t_dir());
	CHECK(p11t_run("openssl rsa -in '%s' -noout -modulus > '%s'", ms_test_data(key),
		       path) == 0);
	text = ms_test_read(path, &len);
	text[len] = '\0';
	CHECK(strncmp((char *)text, "Modulus=", 8) == 0);
	len = ms_test_hex((char *)text + 8, out, cap);
	free(text);
	return len;
}

MS_TEST(p11_key_public_rsa)
{
	static uint8_t want[1024];
	struct ms_p11_pubkey pub;
	struct ms_p11 *p11;
	struct ms_pin pin;
	enum ms_p11_key_type type;
	size_t want_len;

	p11t_token();
	want_len = openssl_modulus("rsa2048.key.pem", want, sizeof(want));
	CHECK(want_len == 256);
	p11 = p11t_open_login(URI("object=rsa2048"), &pin);
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_OK);
	CHECK_ERR(ms_p11_key_public(p11, &pub), MS_OK);
	CHECK(pub.has_rsa && !pub.has_ec);
	CHECK(pub.modulus_len == want_len);
	CHECK_EQ_BYTES(pub.modulus, want, want_len);
	CHECK(pub.exponent_len == 3);
	CHECK_EQ_BYTES(pub.exponent, "\x01\x00\x01", 3);
	p11t_done(p11);
}

MS_TEST(p11_key_public_ec)
{
	static const uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01,
					0x07 };
	struct ms_p11_pubkey pub;
	struct ms_p11 *p11;
	struct ms_pin pin;
	enum ms_p11_key_type type;
	unsigned char *spki;
	char path[128];
	size_t spki_len = 0;

	p11t_token();
	snprintf(path, sizeof(path), "%s/ec256.spki", p11t_dir());
	CHECK(p11t_run("openssl pkey -in '%s' -pubout -outform DER -out '%s'",
		       ms_test_data("ec256.key.pem"), path) == 0);
	spki = ms_test_read(path, &spki_len);
	CHECK(spki_len == 91);
	p11 = p11t_open_login(URI("object=ec256"), &pin);
	CHECK(ms_p11_key_find(p11, &type) == MS_OK && type == MS_P11_KEY_EC);
	CHECK_ERR(ms_p11_key_public(p11, &pub), MS_OK);
	CHECK(pub.has_ec && !pub.has_rsa);
	CHECK(pub.ec_params_len == sizeof(p256));
	CHECK_EQ_BYTES(pub.ec_params, p256, sizeof(p256));
	/* SoftHSM2 wraps the point in an OCTET STRING (PKCS#11 2.40 style). */
	CHECK(pub.ec_point_len == 67);
	CHECK(pub.ec_point[0] == 0x04 && pub.ec_point[1] == 65);
	CHECK_EQ_BYTES(pub.ec_point + 2, spki + spki_len - 65, 65);
	if (pub.has_spki) {
		CHECK(pub.spki_len == spki_len);
		CHECK_EQ_BYTES(pub.spki, spki, spki_len);
	}
	free(spki);
	p11t_done(p11);
}

MS_TEST(p11_cert_find)
{
	static const char *const uris[] = {
		URI("object=rsa2048"),
		URI("id=%01"),
		URI("object=rsa2048;type=cert"),
		URI("object=rsa2048;type=private"),
	};
	struct ms_p11 *p11;
	unsigned char *want;
	uint8_t *der = NULL;
	size_t want_len = 0, der_len = 0;

	p11t_token();
	want = ms_test_read(ms_test_data("rsa2048.x509.der"), &want_len);
	for (size_t i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
		p11 = p11t_open(uris[i]);	/* certificates are public: no login */
		CHECK_ERR(ms_p11_cert_find(p11, &der, &der_len), MS_OK);
		CHECK(der_len == want_len);
		CHECK_EQ_BYTES(der, want, want_len);
		free(der);
		ms_p11_close(p11);
	}
	free(want);
	p11 = p11t_open(URI("object=nope"));
	CHECK_ERR(ms_p11_cert_find(p11, &der, &der_len), MS_E_NOTFOUND);
	CHECK(der == NULL);
	ms_p11_close(p11);
	p11 = p11t_open(P11T_TOKEN P11T_URI_PATH);
	CHECK_ERR(ms_p11_cert_find(p11, &der, &der_len), MS_E_AMBIGUOUS);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "object=\"ec521\" id=06") != NULL);
	ms_p11_close(p11);
	p11 = p11t_open(URI("object=rsa2048;type=secret-key"));
	CHECK_ERR(ms_p11_cert_find(p11, &der, &der_len), MS_E_ARG);
	p11t_done(p11);
}

/* Lengths a real token never sends, through the wrapper. */
MS_TEST(p11_attr_hostile_lengths)
{
	struct ms_p11_pubkey pub;
	struct ms_p11 *p11;
	struct ms_pin pin;
	enum ms_p11_key_type type;
	uint8_t *der = NULL;
	size_t der_len = 0;

	p11t_token();
	p11 = p11t_open_login(URI("object=rsa2048"), &pin);
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_OK);
	p11t_wrap_install(p11);
	p11t_wrap.attr_type = CKA_MODULUS;
	p11t_wrap.attr_mode = P11T_ATTR_HUGE;
	CHECK_ERR(ms_p11_key_public(p11, &pub), MS_E_MALFORMED);
	p11t_wrap.attr_mode = P11T_ATTR_GROWS;
	CHECK_ERR(ms_p11_key_public(p11, &pub), MS_E_MALFORMED);
	CHECK(strstr(ms_p11_last_fail(p11)->detail, "grew") != NULL);
	p11t_wrap.attr_mode = P11T_ATTR_HUGE;
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_MALFORMED);	/* and no key after */
	CHECK_ERR(ms_p11_key_public(p11, &pub), MS_E_ARG);
	p11t_wrap.attr_type = CKA_KEY_TYPE;
	p11t_wrap.attr_mode = P11T_ATTR_UNAVAILABLE;
	CHECK_ERR(ms_p11_key_find(p11, &type), MS_E_TOKEN);
	p11t_wrap.attr_type = CKA_VALUE;
	p11t_wrap.attr_mode = P11T_ATTR_GROWS;
	CHECK_ERR(ms_p11_cert_find(p11, &der, &der_len), MS_E_MALFORMED);
	CHECK(der == NULL);
	p11t_wrap.attr_mode = P11T_ATTR_HUGE;
	CHECK_ERR(ms_p11_cert_find(p11, &der, &der_len), MS_E_MALFORMED);
	p11t_wrap.attr_mode = P11T_ATTR_UNAVAILABLE;
	CHECK_ERR(ms_p11_cert_find(p11, &der, &der_len), MS_E_MALFORMED);
	p11t_done(p11);
}
