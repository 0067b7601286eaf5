// SPDX-License-Identifier: GPL-2.0-only
/*
 * A signer over a key on a PKCS#11 token: one C_Sign per module on the
 * lane's session, and the key-certificate check from the token's public
 * attributes (or, when it shows none, one test signature).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pkcs11/p11.h"
#include "signer_internal.h"

struct token_signer {
	struct ms_signer base;		/* first: callers hold a struct ms_signer * */
	struct ms_p11 *p11;
	struct ms_p11_pubkey pub;
};

/*
 * CKM_RSA_PKCS over the DigestInfo built here, CKM_ECDSA over the digest,
 * or CKM_ML_DSA over the signed attributes or the module, in parts.
 */
static ms_err
tok_sign(struct ms_signer *base, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	 size_t cap, size_t *sig_len)
{
	struct token_signer *ps = (struct token_signer *)base;
	struct ms_signer_msg m;
	ms_err err;

	err = ms_signer_req_message(base->type, req, &m);
	if (err != MS_OK) {
		return err;
	}
	if (base->type == MS_KEY_MLDSA) {
		return ms_p11_sign_parts(ps->p11, lane, m.spans, m.n_spans, sig, cap, sig_len);
	}
	return ms_p11_sign(ps->p11, lane, m.spans[0].p, m.spans[0].len, sig, cap, sig_len);
}

/* Sign a fixed digest and verify it with the certificate's key. */
static ms_err
match_by_test_signature(struct token_signer *ps, const struct ms_cms_cert *cert)
{
	static const char probe[] = "modsign: key and certificate check";
	struct ms_cms_digest *d = NULL;
	uint8_t digest[MS_HASH_MAX_SIZE];
	uint8_t tbs[MS_SIGNER_TBS_MAX];
	uint8_t sig[MS_SIG_MAX];
	size_t digest_len = 0, tbs_len = 0, sig_len = 0;
	const struct ms_span msg = { (const uint8_t *)probe, sizeof(probe) - 1 };
	ms_err err = MS_E_INTERNAL;

	if (ps->base.type == MS_KEY_MLDSA) {
		/* Pure ML-DSA signs the message itself. */
		err = ms_p11_sign_parts(ps->p11, 0, &msg, 1, sig, sizeof(sig), &sig_len);
		if (err == MS_OK) {
			err = ms_cms_cert_verify(cert, MS_HASH_SHA512, msg.p, msg.len, sig,
						 sig_len);
		}
		return err;
	}
	err = ms_cms_digest_new(MS_HASH_SHA256, &d);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_cms_digest_update(d, (const uint8_t *)probe, sizeof(probe) - 1);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_cms_digest_final(d, digest, sizeof(digest), &digest_len);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_cms_tbs_encode(ps->base.type, MS_HASH_SHA256, digest, digest_len, tbs,
				sizeof(tbs), &tbs_len);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_p11_sign(ps->p11, 0, tbs, tbs_len, sig, sizeof(sig), &sig_len);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_cms_cert_verify(cert, MS_HASH_SHA256, tbs, tbs_len, sig, sig_len);
out:
	ms_cms_digest_free(d);
	return err;
}

static ms_err
tok_match_cert(struct ms_signer *base, const struct ms_cms_cert *cert)
{
	struct token_signer *ps = (struct token_signer *)base;
	const struct ms_p11_pubkey *pub = &ps->pub;
	enum ms_key_type cert_type = MS_KEY_RSA;

	ms_cms_cert_key(cert, &cert_type, NULL, NULL);
	if (cert_type != base->type) {
		return MS_E_MISMATCH;
	}
	if (pub->has_rsa) {
		return ms_cms_cert_match_rsa(cert, pub->modulus, pub->modulus_len, pub->exponent,
					     pub->exponent_len);
	}
	if (pub->has_ec) {
		return ms_cms_cert_match_ec(cert, pub->ec_params, pub->ec_params_len,
					    pub->ec_point, pub->ec_point_len);
	}
	if (pub->has_spki) {
		return ms_cms_cert_match_spki(cert, pub->spki, pub->spki_len);
	}
	return match_by_test_signature(ps, cert);
}

/* @p, @len without leading zero bytes: an integer's value, however a token pads it. */
static void
skip_zeros(const uint8_t **p, size_t *len)
{
	while (*len > 0 && **p == 0) {
		(*p)++;
		(*len)--;
	}
}

static bool
same_int(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
	skip_zeros(&a, &a_len);
	skip_zeros(&b, &b_len);
	return a_len == b_len && memcmp(a, b, a_len) == 0;
}

static bool
same_bytes(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
	return a_len == b_len && memcmp(a, b, a_len) == 0;
}

/* Two tokens holding copies of one key show the same public half. */
static ms_err
tok_match_key(const struct ms_signer *base, const struct ms_signer *ref_base)
{
	const struct ms_p11_pubkey *a = &((const struct token_signer *)base)->pub;
	const struct ms_p11_pubkey *b = &((const struct token_signer *)ref_base)->pub;

	if (a->has_rsa && b->has_rsa) {
		return same_int(a->modulus, a->modulus_len, b->modulus, b->modulus_len) &&
		       same_int(a->exponent, a->exponent_len, b->exponent, b->exponent_len) ?
		       MS_OK : MS_E_MISMATCH;
	}
	if (a->has_ec && b->has_ec) {
		return same_bytes(a->ec_params, a->ec_params_len, b->ec_params, b->ec_params_len) &&
		       same_bytes(a->ec_point, a->ec_point_len, b->ec_point, b->ec_point_len) ?
		       MS_OK : MS_E_MISMATCH;
	}
	if (a->has_spki && b->has_spki) {
		return same_bytes(a->spki, a->spki_len, b->spki, b->spki_len) ? MS_OK :
		       MS_E_MISMATCH;
	}
	return MS_E_UNSUPPORTED;
}

static enum ms_signer_loss
tok_loss(const struct ms_signer *base, unsigned lane)
{
	const struct token_signer *ps = (const struct token_signer *)base;
	const struct ms_p11_fail *f = ms_p11_session_fail(ps->p11, lane);

	if (f == NULL || f->call == NULL) {
		return MS_SIGNER_LOSS_NONE;
	}
	if (ms_p11_rv_is_session_loss(f->rv)) {
		return MS_SIGNER_LOSS_SESSION;
	}
	if (ms_p11_rv_is_token_loss(f->rv)) {
		return MS_SIGNER_LOSS_TOKEN;
	}
	return MS_SIGNER_LOSS_NONE;
}

/*
 * Only a loss is worth a second try: a session, or (when the pool's policy
 * asks) the token. Any other failure is the request's.
 */
static ms_err
tok_recover(struct ms_signer *base, unsigned lane)
{
	struct token_signer *ps = (struct token_signer *)base;

	if (tok_loss(base, lane) == MS_SIGNER_LOSS_NONE) {
		return MS_E_TOKEN;
	}
	return ms_p11_session_recover(ps->p11, lane);
}

static void
tok_describe(const struct ms_signer *base, unsigned lane, char *buf, size_t cap)
{
	const struct token_signer *ps = (const struct token_signer *)base;
	const struct ms_p11_fail *f = ms_p11_session_fail(ps->p11, lane);

	if (f == NULL || f->call == NULL) {
		snprintf(buf, cap, "token signature failed");
		return;
	}
	snprintf(buf, cap, "%s: %s%s%s", f->call, ms_p11_rv_name(f->rv),
		 f->detail[0] != '\0' ? ": " : "", f->detail);
}

static void
tok_name(const struct ms_signer *base, char *buf, size_t cap)
{
	const struct token_signer *ps = (const struct token_signer *)base;

	snprintf(buf, cap, "token '%s' (serial %s)", ms_p11_token_label(ps->p11),
		 ms_p11_token_serial(ps->p11));
}

static void
tok_free(struct ms_signer *base)
{
	struct token_signer *ps = (struct token_signer *)base;

	if (ps == NULL) {
		return;
	}
	ms_p11_close(ps->p11);
	free(ps);
}

static const struct ms_signer_ops tok_ops = {
	.sign = tok_sign,
	.match_cert = tok_match_cert,
	.match_key = tok_match_key,
	.recover = tok_recover,
	.loss = tok_loss,
	.describe = tok_describe,
	.name = tok_name,
	.free = tok_free,
};

ms_err
ms_signer_token_new(struct ms_p11 *p11, struct ms_signer **out)
{
	struct token_signer *ps = NULL;
	enum ms_p11_key_type kt = MS_P11_KEY_RSA;
	ms_err err = MS_E_INTERNAL;

	*out = NULL;
	ps = calloc(1, sizeof(*ps));
	if (ps == NULL) {
		return MS_E_NOMEM;
	}
	ps->p11 = p11;
	ps->base.ops = &tok_ops;
	ps->base.lanes = 1;
	err = ms_p11_key_find(p11, &kt);
	if (err != MS_OK) {
		goto out;
	}
	ps->base.type = kt == MS_P11_KEY_RSA ? MS_KEY_RSA : kt == MS_P11_KEY_EC ? MS_KEY_EC :
			MS_KEY_MLDSA;
	err = ms_p11_key_public(p11, &ps->pub);
	if (err != MS_OK) {
		goto out;
	}
	*out = &ps->base;
	ps = NULL;
out:
	if (ps != NULL) {
		/* Keep the context for the caller's message: it closes it. */
		free(ps);
	}
	return err;
}

ms_err
ms_signer_token_add_lanes(struct ms_signer *base, unsigned want)
{
	struct token_signer *ps = (struct token_signer *)base;
	unsigned max;

	if (base == NULL || base->ops != &tok_ops) {
		return MS_E_ARG;
	}
	/*
	 * Default: a token in a hardware slot gets one lane (a smart card
	 * serialises anyway). A software token signs on our cores: one lane per
	 * core and one more, so that a core whose lane holder was preempted by
	 * file work still finds a lane free (measured: BENCHMARKS.md).
	 */
	if (want == 0) {
		want = ms_p11_token_is_hardware(ps->p11) ? 1 : ms_cpu_count() + 1;
	}
	max = ms_p11_session_count_max(ps->p11, want);

	while (base->lanes < max) {
		unsigned index = 0;

		/* A token short of sessions still signs, on fewer lanes. */
		if (ms_p11_session_add(ps->p11, &index) != MS_OK) {
			break;
		}
		if (index != base->lanes) {
			return MS_E_INTERNAL;
		}
		base->lanes++;
	}
	return MS_OK;
}
