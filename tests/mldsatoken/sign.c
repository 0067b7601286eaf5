// SPDX-License-Identifier: GPL-2.0-only
/*
 * mldsatoken: C_SignInit, C_Sign, C_SignUpdate and C_SignFinal with
 * CKM_ML_DSA. Pure ML-DSA needs the whole message before it signs, so the
 * parts are gathered in the session and signed at the end.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "mldsatoken.h"

/* What C_SignUpdate gathers at most: a module of 1 GiB is no test. */
#define MT_MESSAGE_MAX (1UL << 30)

void
mt_sign_end(struct mt_session *s)
{
	if (s->msg != NULL) {
		OPENSSL_cleanse(s->msg, s->msg_cap);
	}
	free(s->msg);
	s->msg = NULL;
	s->msg_len = 0;
	s->msg_cap = 0;
	s->signing = false;
	s->multipart = false;
	s->key = NULL;
}

/* CKM_ML_DSA's parameter: none, or a CK_SIGN_ADDITIONAL_CONTEXT. */
static CK_RV
sign_params(struct mt_session *s, const CK_MECHANISM *m)
{
	const CK_SIGN_ADDITIONAL_CONTEXT *p = m->pParameter;

	s->deterministic = false;
	s->ctx_len = 0;
	if (m->pParameter == NULL && m->ulParameterLen == 0) {
		return CKR_OK;
	}
	if (m->pParameter == NULL || m->ulParameterLen != sizeof(*p)) {
		return CKR_MECHANISM_PARAM_INVALID;
	}
	if (p->hedgeVariant != CKH_HEDGE_PREFERRED && p->hedgeVariant != CKH_HEDGE_REQUIRED &&
	    p->hedgeVariant != CKH_DETERMINISTIC_REQUIRED) {
		return CKR_MECHANISM_PARAM_INVALID;
	}
	if (p->ulContextLen > MT_CONTEXT_MAX || (p->ulContextLen > 0 && p->pContext == NULL)) {
		return CKR_MECHANISM_PARAM_INVALID;
	}
	s->deterministic = p->hedgeVariant == CKH_DETERMINISTIC_REQUIRED;
	if (p->ulContextLen > 0) {
		memcpy(s->ctx, p->pContext, p->ulContextLen);
	}
	s->ctx_len = p->ulContextLen;
	return CKR_OK;
}

CK_RV
mt_sign_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)
{
	struct mt_session *s = mt_session_of(h);
	const struct mt_object *obj;
	CK_RV rv;

	if (s == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (m == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	if (s->signing) {
		return CKR_OPERATION_ACTIVE;
	}
	if (m->mechanism != CKM_ML_DSA) {
		return CKR_MECHANISM_INVALID;
	}
	if (!mt_logged_in) {
		return CKR_USER_NOT_LOGGED_IN;
	}
	obj = mt_object_of(k);
	if (obj == NULL) {
		return CKR_KEY_HANDLE_INVALID;
	}
	if (obj->cls != CKO_PRIVATE_KEY || obj->key == NULL) {
		return CKR_KEY_TYPE_INCONSISTENT;
	}
	rv = sign_params(s, m);
	if (rv != CKR_OK) {
		return rv;
	}
	s->key = obj->key;
	s->signing = true;
	s->multipart = false;
	s->msg_len = 0;
	return CKR_OK;
}

static CK_RV
gather(struct mt_session *s, const unsigned char *d, CK_ULONG n)
{
	unsigned char *grown;
	size_t cap;

	if (n == 0) {
		return CKR_OK;
	}
	if (n > MT_MESSAGE_MAX - s->msg_len) {
		return CKR_DATA_LEN_RANGE;
	}
	if (s->msg_len + n > s->msg_cap) {
		cap = s->msg_cap > 0 ? s->msg_cap : 4096;
		while (cap < s->msg_len + n) {
			cap *= 2;
		}
		grown = malloc(cap);
		if (grown == NULL) {
			return CKR_HOST_MEMORY;
		}
		if (s->msg_len > 0) {
			memcpy(grown, s->msg, s->msg_len);
		}
		if (s->msg != NULL) {
			OPENSSL_cleanse(s->msg, s->msg_cap);
		}
		free(s->msg);
		s->msg = grown;
		s->msg_cap = cap;
	}
	memcpy(s->msg + s->msg_len, d, n);
	s->msg_len += n;
	return CKR_OK;
}

/*
 * The end of C_Sign and C_SignFinal: a length query or a buffer too small
 * leaves the operation active (PKCS#11 2.40, 5.2); anything else ends it.
 */
static CK_RV
sign_out(struct mt_session *s, CK_BYTE_PTR sig, CK_ULONG_PTR sig_len)
{
	size_t len = 0;
	CK_RV rv;

	if (sig_len == NULL) {
		mt_sign_end(s);
		return CKR_ARGUMENTS_BAD;
	}
	if (sig == NULL) {
		*sig_len = s->key->sig_len;
		return CKR_OK;
	}
	if (*sig_len < s->key->sig_len) {
		*sig_len = s->key->sig_len;
		return CKR_BUFFER_TOO_SMALL;
	}
	rv = mt_key_sign(s->key, s->deterministic, s->ctx, s->ctx_len, s->msg, s->msg_len, sig,
			 &len);
	if (rv == CKR_OK) {
		*sig_len = len;
	}
	mt_sign_end(s);
	return rv;
}

/* The session of handle @h, which must have a signing operation active. */
static CK_RV
signing_session(CK_SESSION_HANDLE h, struct mt_session **out)
{
	struct mt_session *s = mt_session_of(h);

	if (s == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (!s->signing) {
		return CKR_OPERATION_NOT_INITIALIZED;
	}
	*out = s;
	return CKR_OK;
}

CK_RV
mt_sign(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR sig, CK_ULONG_PTR sig_len)
{
	struct mt_session *s = NULL;
	CK_RV rv = signing_session(h, &s);

	if (rv != CKR_OK) {
		return rv;
	}
	if (s->multipart) {
		return CKR_OPERATION_ACTIVE;
	}
	if (d == NULL && dn > 0) {
		mt_sign_end(s);
		return CKR_ARGUMENTS_BAD;
	}
	/* A length query, then the real call with the same data: gather once. */
	s->msg_len = 0;
	rv = gather(s, d, dn);
	if (rv != CKR_OK) {
		mt_sign_end(s);
		return rv;
	}
	return sign_out(s, sig, sig_len);
}

CK_RV
mt_sign_update(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn)
{
	struct mt_session *s = NULL;
	CK_RV rv = signing_session(h, &s);

	if (rv != CKR_OK) {
		return rv;
	}
	if (d == NULL && dn > 0) {
		mt_sign_end(s);
		return CKR_ARGUMENTS_BAD;
	}
	s->multipart = true;
	rv = gather(s, d, dn);
	if (rv != CKR_OK) {
		mt_sign_end(s);
	}
	return rv;
}

CK_RV
mt_sign_final(CK_SESSION_HANDLE h, CK_BYTE_PTR sig, CK_ULONG_PTR sig_len)
{
	struct mt_session *s = NULL;
	CK_RV rv = signing_session(h, &s);

	if (rv != CKR_OK) {
		return rv;
	}
	return sign_out(s, sig, sig_len);
}
