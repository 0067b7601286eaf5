// SPDX-License-Identifier: GPL-2.0-only
/*
 * Certificates for signing and verifying: a DER or PEM file (a PEM bundle
 * read whole or its first certificate), or the certificate object a pkcs11:
 * URI names, read without a login.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../pkcs11/p11.h"
#include "app_internal.h"

#define CERT_FILE_MAX (64 * 1024)

static ms_err
cert_from_token(const char *uri, const struct ms_app_sink *sink, uint8_t **der, size_t *der_len)
{
	struct ms_p11 *p11 = NULL;
	ms_err err;

	err = ms_p11_open(uri, MS_P11_FOR_CERT, &p11);
	if (err == MS_OK) {
		err = ms_p11_cert_find(p11, der, der_len);
	}
	if (err != MS_OK) {
		ms_app_p11_error(sink, "certificate", p11, err);
	}
	ms_p11_close(p11);
	return err;
}

/*
 * The bytes of a certificate file, or of the certificate object a pkcs11:
 * URI names; @shown is the argument as messages show it.
 */
static ms_err
cert_bytes(const char *x509, const char *shown, const struct ms_app_sink *sink, uint8_t **der,
	   size_t *der_len)
{
	struct ms_file_fail fail = { 0 };
	char why[256];
	ms_err err;

	if (ms_p11_uri_is(x509)) {
		return cert_from_token(x509, sink, der, der_len);
	}
	err = ms_file_read_small(x509, CERT_FILE_MAX, der, der_len, &fail);
	if (err != MS_OK) {
		ms_file_fail_why(&fail, err, why, sizeof(why));
		ms_app_err(sink, "%s: %s", shown, why);
	}
	return err;
}

static void
cert_say(const struct ms_app_sink *sink, const char *shown, ms_err err)
{
	if (err == MS_E_UNSUPPORTED) {
		ms_app_err(sink, "%s: certificate key is neither RSA nor EC P-256/P-384/P-521",
			   shown);
	} else if (err == MS_E_NOSPACE) {
		ms_app_err(sink, "%s: more than %d certificates in all", shown,
			   MS_APP_TRUST_MAX);
	} else if (err != MS_OK) {
		ms_app_err(sink, "%s: not a DER or PEM X.509 certificate", shown);
	}
}

ms_err
ms_app_cert_load(const char *x509, const struct ms_app_sink *sink, struct ms_cms_cert **out)
{
	char shown[MS_APP_ARG_SHOW];
	uint8_t *der = NULL;
	size_t der_len = 0;
	ms_err err;

	*out = NULL;
	ms_p11_uri_redact(x509, shown, sizeof(shown));
	err = cert_bytes(x509, shown, sink, &der, &der_len);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_cms_cert_parse(der, der_len, out);
	cert_say(sink, shown, err);
out:
	free(der);
	return err;
}

ms_err
ms_app_cert_load_all(const char *x509, const struct ms_app_sink *sink, struct ms_cms_cert **out,
		     size_t cap, size_t *n)
{
	char shown[MS_APP_ARG_SHOW];
	uint8_t *der = NULL;
	size_t der_len = 0;
	ms_err err;

	*n = 0;
	ms_p11_uri_redact(x509, shown, sizeof(shown));
	if (cap == 0) {
		cert_say(sink, shown, MS_E_NOSPACE);
		return MS_E_NOSPACE;
	}
	err = cert_bytes(x509, shown, sink, &der, &der_len);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_cms_cert_parse_all(der, der_len, out, cap, n);
	cert_say(sink, shown, err);
out:
	free(der);
	return err;
}
