// SPDX-License-Identifier: GPL-2.0-only
/* The calls of the signer seam, dispatched to the signer's own functions. */
#include <stdio.h>

#include "signer_internal.h"

ms_err
ms_signer_sign(struct ms_signer *s, unsigned lane, const struct ms_signer_req *req,
	       uint8_t *sig, size_t cap, size_t *sig_len)
{
	if (s == NULL || lane >= s->lanes || ms_signer_req_check(s->type, req) != MS_OK) {
		return MS_E_ARG;
	}
	return s->ops->sign(s, lane, req, sig, cap, sig_len);
}

ms_err
ms_signer_req_check(enum ms_key_type type, const struct ms_signer_req *req)
{
	bool has_digest = req != NULL && req->digest != NULL && req->digest_len != 0 &&
			  req->digest_len == ms_cms_hash_size(req->alg);
	size_t i;

	if (req == NULL) {
		return MS_E_ARG;
	}
	switch (req->form) {
	case MS_SIG_DIGEST:
		return type != MS_KEY_MLDSA && has_digest ? MS_OK : MS_E_ARG;
	case MS_SIG_MLDSA_ATTRS:
		return type == MS_KEY_MLDSA && has_digest && req->alg == MS_HASH_SHA512 ?
		       MS_OK : MS_E_ARG;
	case MS_SIG_MLDSA_DATA:
		if (type != MS_KEY_MLDSA || (req->data == NULL && req->n_data != 0)) {
			return MS_E_ARG;
		}
		for (i = 0; i < req->n_data; i++) {
			if (req->data[i].p == NULL && req->data[i].len != 0) {
				return MS_E_ARG;
			}
		}
		return MS_OK;
	}
	return MS_E_ARG;
}

ms_err
ms_signer_req_message(enum ms_key_type type, const struct ms_signer_req *req,
		      struct ms_signer_msg *m)
{
	size_t len = 0;
	ms_err err;

	if (ms_signer_req_check(type, req) != MS_OK || m == NULL) {
		return MS_E_ARG;
	}
	if (req->form == MS_SIG_MLDSA_DATA) {
		m->spans = req->data;
		m->n_spans = req->n_data;
		return MS_OK;
	}
	if (req->form == MS_SIG_MLDSA_ATTRS) {
		err = ms_cms_mldsa_attrs_encode(req->digest, req->digest_len, m->buf,
						sizeof(m->buf), &len);
	} else {
		err = ms_cms_tbs_encode(type, req->alg, req->digest, req->digest_len, m->buf,
					sizeof(m->buf), &len);
	}
	if (err != MS_OK) {
		return err == MS_E_NOSPACE ? MS_E_INTERNAL : err;
	}
	m->parts[0].p = m->buf;
	m->parts[0].len = len;
	m->spans = m->parts;
	m->n_spans = 1;
	return MS_OK;
}

ms_err
ms_signer_match_cert(struct ms_signer *s, const struct ms_cms_cert *cert)
{
	if (s == NULL || cert == NULL) {
		return MS_E_ARG;
	}
	return s->ops->match_cert(s, cert);
}

ms_err
ms_signer_match_key(const struct ms_signer *s, const struct ms_signer *ref)
{
	if (s == NULL || ref == NULL) {
		return MS_E_ARG;
	}
	if (s->ops != ref->ops || s->ops->match_key == NULL) {
		return MS_E_UNSUPPORTED;
	}
	if (s->type != ref->type) {
		return MS_E_MISMATCH;
	}
	return s->ops->match_key(s, ref);
}

bool
ms_signer_can_recover(const struct ms_signer *s)
{
	return s != NULL && s->ops->recover != NULL;
}

ms_err
ms_signer_recover(struct ms_signer *s, unsigned lane)
{
	if (s == NULL || lane >= s->lanes) {
		return MS_E_ARG;
	}
	if (s->ops->recover == NULL) {
		return MS_E_UNSUPPORTED;
	}
	return s->ops->recover(s, lane);
}

enum ms_signer_loss
ms_signer_loss(const struct ms_signer *s, unsigned lane)
{
	if (s == NULL || lane >= s->lanes || s->ops->loss == NULL) {
		return MS_SIGNER_LOSS_NONE;
	}
	return s->ops->loss(s, lane);
}

void
ms_signer_describe(const struct ms_signer *s, unsigned lane, char *buf, size_t cap)
{
	if (buf == NULL || cap == 0) {
		return;
	}
	if (s == NULL) {
		snprintf(buf, cap, "no key");
		return;
	}
	s->ops->describe(s, lane, buf, cap);
}

void
ms_signer_name(const struct ms_signer *s, char *buf, size_t cap)
{
	if (buf == NULL || cap == 0) {
		return;
	}
	if (s == NULL) {
		snprintf(buf, cap, "no key");
		return;
	}
	s->ops->name(s, buf, cap);
}

enum ms_key_type
ms_signer_key_type(const struct ms_signer *s)
{
	return s->type;
}

unsigned
ms_signer_lanes(const struct ms_signer *s)
{
	return s == NULL ? 0 : s->lanes;
}

void
ms_signer_free(struct ms_signer *s)
{
	if (s != NULL) {
		s->ops->free(s);
	}
}
