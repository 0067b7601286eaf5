// SPDX-License-Identifier: GPL-2.0-only
/*
 * The SignedData of a module signature made for a request: the raw
 * signature a signer returned, encoded as sign-file writes it for the
 * key's kind, with exactly the signed attributes the key signed (for
 * ML-DSA's MS_SIG_MLDSA_ATTRS form: ms_signer_req_message() defines them
 * once for the signers, their check and the CMS).
 */
#include "signer_internal.h"

ms_err
ms_signer_signed_data(const struct ms_signer_cms *c, uint8_t *out, size_t cap, size_t *out_len)
{
	struct ms_cms_signer s = { 0 };
	struct ms_signer_msg m;
	struct ms_span attrs = { NULL, 0 };
	uint8_t sig[MS_SIG_MAX + 16];
	size_t sig_len = 0;
	ms_err err;

	if (c == NULL || c->req == NULL || c->raw_sig.p == NULL || out_len == NULL ||
	    ms_signer_req_check(c->key_type, c->req) != MS_OK) {
		return MS_E_ARG;
	}
	s.hash = c->req->alg;
	s.key_type = c->key_type;
	s.use_skid = c->use_skid;
	s.sid = c->sid;
	if (c->key_type != MS_KEY_MLDSA) {
		/* RSA as it is, ECDSA as its DER Ecdsa-Sig-Value. */
		err = ms_cms_sig_encode(c->key_type, c->raw_sig.p, c->raw_sig.len, sig, sizeof(sig),
					&sig_len);
		if (err != MS_OK) {
			return MS_E_MALFORMED;
		}
		s.sig.p = sig;
		s.sig.len = sig_len;
		return ms_cms_signed_data_encode(&s, out, cap, out_len);
	}
	if (c->raw_sig.len != ms_cms_mldsa_sig_len(c->mldsa)) {
		return MS_E_MALFORMED;
	}
	s.sig = c->raw_sig;
	if (c->req->form == MS_SIG_MLDSA_ATTRS) {
		err = ms_signer_req_message(c->key_type, c->req, &m);
		if (err != MS_OK) {
			return err;
		}
		attrs = m.spans[0];
	}
	return ms_cms_signed_data_encode_mldsa(&s, c->mldsa, attrs, out, cap, out_len);
}
