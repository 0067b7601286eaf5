// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one check of a module's signature, by the kernel's rules, for
 * `modsign verify` and for a module found signed while signing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"

/*
 * Without certificates: those the message carries check the signature
 * math, never trusted. One that does not parse fails the module, as it
 * fails the kernel's pkcs7_extract_cert(); one with a key we do not handle
 * is left out.
 */
static ms_err
carried_certs(const struct ms_pkcs7 *msg, struct ms_cms_cert **certs, size_t *n,
	      struct ms_app_sig_check *out)
{
	ms_err err;

	*n = 0;
	for (size_t i = 0; i < msg->n_certs; i++) {
		err = ms_cms_cert_parse(msg->certs[i].p, msg->certs[i].len, &certs[*n]);
		if (err == MS_E_UNSUPPORTED) {
			continue;
		}
		if (err != MS_OK) {
			snprintf(out->why_buf, sizeof(out->why_buf),
				 "certificate %zu in the PKCS#7 does not parse", i + 1);
			out->why = out->why_buf;
			return MS_E_MALFORMED;
		}
		*n += 1;
	}
	return MS_OK;
}

/* Whether a signer of @msg signs the module itself: ML-DSA without signed attributes. */
static bool
signs_payload(const struct ms_pkcs7 *msg)
{
	for (size_t i = 0; i < msg->n_signers; i++) {
		if (msg->signers[i].key_type == MS_KEY_MLDSA && !msg->signers[i].has_signed_attrs) {
			return true;
		}
	}
	return false;
}

ms_err
ms_app_sig_verify(struct ms_modfile *mf, uint64_t payload_len, const struct ms_pkcs7 *msg,
		  const struct ms_cms_cert *const *certs, size_t n_certs,
		  enum ms_hash_alg want_hash, bool mldsa_waiver, struct ms_app_sig_check *out)
{
	struct ms_pkcs7_digest dg[MS_PKCS7_SIGNERS_MAX];
	enum ms_hash_alg algs[MS_PKCS7_SIGNERS_MAX];
	struct ms_cms_cert *own[MS_PKCS7_CERTS_MAX] = { NULL };
	struct ms_span payload = { NULL, 0 };
	uint8_t *data = NULL;
	size_t n_algs, n_own = 0;
	ms_err err = MS_E_INTERNAL;

	memset(out, 0, sizeof(*out));
	err = ms_pkcs7_check_module(msg, &out->why);
	if (err != MS_OK && mldsa_waiver &&
	    ms_pkcs7_check_module_mldsa_waiver(msg, NULL) == MS_OK) {
		/* Only signed attributes broke the default rules: ML-DSA's, which the waiver takes. */
		out->why = NULL;
		out->mldsa_waived = true;
		err = MS_OK;
	}
	if (err != MS_OK) {
		out->at_rules = true;
		return MS_E_MALFORMED;
	}
	n_algs = ms_pkcs7_digest_algs(msg, algs, MS_PKCS7_SIGNERS_MAX);
	for (size_t i = 0; want_hash != 0 && i < n_algs; i++) {
		if (algs[i] != want_hash) {
			out->why = "signed with another hash";
			return MS_E_MISMATCH;
		}
	}
	if (signs_payload(msg)) {
		/* ML-DSA over the module itself: read whole, digested in the same pass. */
		err = ms_app_payload_read(mf, payload_len, algs, n_algs, dg, &data);
		payload.p = data;
		payload.len = (size_t)payload_len;
	} else {
		err = ms_app_payload_digest(mf, payload_len, algs, n_algs, dg, NULL);
	}
	if (err != MS_OK) {
		out->at_hash = true;
		return err;
	}
	if (n_certs == 0) {
		err = carried_certs(msg, own, &n_own, out);
		if (err != MS_OK) {
			goto out;
		}
		certs = (const struct ms_cms_cert *const *)own;
		n_certs = n_own;
	}
	err = ms_pkcs7_verify_payload(msg, dg, n_algs, &payload, data != NULL ? 1 : 0, certs,
				      n_certs, out->res, &out->why);
	if (n_own > 0) {
		/* Carried certificates go with this call: no result points at them. */
		for (size_t i = 0; i < msg->n_signers && i < MS_PKCS7_SIGNERS_MAX; i++) {
			out->res[i].cert = NULL;
		}
	}
out:
	for (size_t i = 0; i < n_own; i++) {
		ms_cms_cert_free(own[i]);
	}
	free(data);
	return err;
}
