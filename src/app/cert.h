/* SPDX-License-Identifier: GPL-2.0-only */
/* Certificates from files or tokens (cert.c); included by app.h. */
#ifndef MS_APP_CERT_H
#define MS_APP_CERT_H

#include <stddef.h>

#include "../cms/cms.h"
#include "../common/ms_common.h"

struct ms_app_sink;

/* Certificates one run may trust: every verify -c, each file a PEM bundle of them. */
#define MS_APP_TRUST_MAX 64

/*
 * ms_app_cert_load() - a DER or PEM certificate file (a PEM bundle: its first
 * certificate, as sign-file takes it), or the certificate object a pkcs11:
 * URI names (no login). Says its own error through @sink.
 * Return: MS_OK or the error; *@out is owned by the caller.
 */
ms_err ms_app_cert_load(const char *x509, const struct ms_app_sink *sink,
			struct ms_cms_cert **out) MS_MUST_CHECK;

/*
 * ms_app_cert_load_all() - every certificate of a DER or PEM file (a PEM
 * bundle: each CERTIFICATE block), or the one a pkcs11: URI names, into
 * @out[0..*@n) (owned by the caller), at most @cap. Says its own error
 * through @sink.
 */
ms_err ms_app_cert_load_all(const char *x509, const struct ms_app_sink *sink,
			    struct ms_cms_cert **out, size_t cap, size_t *n) MS_MUST_CHECK;

#endif
