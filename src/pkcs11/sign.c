// SPDX-License-Identifier: GPL-2.0-only
/*
 * One signature per call: C_SignInit, a context-specific login when the key
 * demands one, and C_Sign into the caller's buffer. Sessions are
 * independent, so different sessions may sign from different threads.
 */
#include <string.h>

#include "p11_internal.h"

/*
 * The one wrapper that casts the data's const away: C_Sign takes a
 * CK_BYTE_PTR for pData but only reads it (PKCS#11 3.0, 5.11). @tbs_len was
 * checked against MS_P11I_TBS_MAX; CK_ULONG is as wide as size_t.
 */
static CK_RV
call_sign(struct ms_p11 *p11, CK_SESSION_HANDLE h, const uint8_t *tbs, size_t tbs_len,
	  uint8_t *sig, CK_ULONG *sig_len)
{
	CK_BYTE *data = (CK_BYTE *)(uintptr_t)(const void *)tbs;

	return p11->fl->C_Sign(h, data, (CK_ULONG)tbs_len, sig, sig_len);
}

/*
 * Replaces session @s after a failure that may leave its signing operation
 * active (a failed context-specific login, CKR_BUFFER_TOO_SMALL): before
 * PKCS#11 3.0 nothing cancels one. The new session is opened first so that
 * the token keeps its login state, which ends with the last session.
 */
static void
session_reset(struct ms_p11 *p11, struct ms_p11i_session *s)
{
	struct ms_p11_fail ignore;
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;

	if (ms_p11i_session_open(p11, &h, &ignore) != MS_OK) {
		return;		/* the next C_SignInit reports the stuck operation */
	}
	(void)p11->fl->C_CloseSession(s->h);
	ms_p11i_session_replace(s, h);
}

/*
 * The key to sign with on session @s: on SoftHSM2 (ms_p11i_token_is_softhsm()
 * says why) a session copy made at the session's first signature, else the
 * token object. The copy never leaves the token and goes with the session;
 * a token that refuses to copy (CKA_COPYABLE false) signs with the key
 * itself. A key that wants the PIN for each signature is not copied.
 */
static CK_OBJECT_HANDLE
sign_key(struct ms_p11 *p11, struct ms_p11i_session *s)
{
	if (p11->key_in_memory && !p11->key_always_auth && !s->copy_tried) {
		CK_BBOOL no = CK_FALSE;
		CK_ATTRIBUTE tmpl[] = { { CKA_TOKEN, &no, sizeof(no) } };
		CK_OBJECT_HANDLE h = CK_INVALID_HANDLE;

		s->copy_tried = true;
		if (p11->fl->C_CopyObject(s->h, atomic_load(&p11->key), tmpl, 1, &h) == CKR_OK) {
			s->key_copy = h;
		}
	}
	return s->key_copy != CK_INVALID_HANDLE ? s->key_copy : atomic_load(&p11->key);
}

/*
 * CKA_ALWAYS_AUTHENTICATE (PKCS#11 3.0, 4.9): the PIN again, right after
 * C_SignInit, as CKU_CONTEXT_SPECIFIC. A PIN the token refused once, here or
 * in ms_p11_login(), is not offered again by any thread.
 */
static ms_err
context_login(struct ms_p11 *p11, struct ms_p11i_session *s)
{
	CK_RV rv;

	rv = ms_p11i_call_login(p11, s->h, CKU_CONTEXT_SPECIFIC, p11->pin);
	if (rv == CKR_OK) {
		return MS_OK;
	}
	if (ms_p11i_rv_is_pin_error(rv)) {
		atomic_store(&p11->pin_rejected, true);
		ms_p11i_fail_set(&s->fail, "C_Login", rv, "context-specific login refused");
		return MS_E_PIN;
	}
	ms_p11i_fail_set(&s->fail, "C_Login", rv, "context-specific login");
	return MS_E_TOKEN;
}

/* Checks made before any call, so that a refused request costs nothing. */
static ms_err
sign_precheck(struct ms_p11 *p11, struct ms_p11i_session *s, size_t cap)
{
	if (p11->key_sig_len != 0 && cap < p11->key_sig_len) {
		ms_p11i_fail_set(&s->fail, NULL, CKR_OK,
				 "signature needs %zu bytes, buffer has %zu", p11->key_sig_len,
				 cap);
		return MS_E_NOSPACE;
	}
	if (!p11->key_always_auth) {
		return MS_OK;
	}
	if (atomic_load(&p11->pin_rejected)) {
		ms_p11i_fail_set(&s->fail, "C_Login", CKR_OK,
				 "the PIN was refused before; not retried");
		return MS_E_PIN;
	}
	if (p11->pin == NULL && (p11->token_flags & CKF_PROTECTED_AUTHENTICATION_PATH) == 0) {
		ms_p11i_fail_set(&s->fail, "C_Login", CKR_OK,
				 "the key needs the PIN for each signature and none was given");
		return MS_E_PIN;
	}
	return MS_OK;
}

/*
 * CKM_ECDSA takes the hash value itself, of any length (PKCS#11 3.0
 * mechanisms, 2.3.6), and ECDSA signs the integer made of its leftmost
 * bits, as many as the curve order has (FIPS 186-4, 6.4; SEC 1 v2, 4.1.3).
 * tpm2-pkcs11 tells the hash by the length and refuses a 28-byte SHA-224
 * digest (CKR_GENERAL_ERROR). So a shorter digest is left-padded with zeros
 * to the widest of 32, 48 and 64 bytes that the order's bit length takes
 * whole (key_ec_widen_len: P-256 32, P-384 48, P-521 64): the integer is
 * the same, so is the signature's meaning, and the CMS still names the
 * digest's own hash. Wider padding would be cut by the token and change
 * the value. @buf holds @cap bytes.
 */
static void
ec_widen(const struct ms_p11 *p11, const uint8_t **tbs, size_t *tbs_len, uint8_t *buf,
	 size_t cap)
{
	size_t want = p11->key_ec_widen_len;

	if (p11->key_mech != CKM_ECDSA || *tbs_len >= want || want > cap) {
		return;
	}
	memset(buf, 0, want - *tbs_len);
	memcpy(buf + (want - *tbs_len), *tbs, *tbs_len);
	*tbs = buf;
	*tbs_len = want;
}

/* Judges what C_Sign returned; the module's length is untrusted. */
static ms_err
sign_check(struct ms_p11 *p11, struct ms_p11i_session *s, CK_ULONG got, size_t cap)
{
	if (got == 0 || got > cap) {
		ms_p11i_fail_set(&s->fail, "C_Sign", CKR_OK,
				 "returned %lu bytes for a %zu-byte buffer", got, cap);
		return MS_E_MALFORMED;
	}
	/* RSA: the modulus length; ECDSA: r||s, each the curve's field size. */
	if (p11->key_sig_len != 0 && got != p11->key_sig_len) {
		ms_p11i_fail_set(&s->fail, "C_Sign", CKR_OK, "returned %lu bytes, expected %zu",
				 got, p11->key_sig_len);
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

/*
 * C_SignInit with the key's mechanism (CKM_ML_DSA without a parameter:
 * hedged, the empty context, as the kernel verifies), then the
 * context-specific login of a key that wants one.
 */
static ms_err
sign_begin(struct ms_p11 *p11, struct ms_p11i_session *s)
{
	CK_MECHANISM mech = { .mechanism = p11->key_mech, .pParameter = NULL,
			      .ulParameterLen = 0 };
	CK_OBJECT_HANDLE key = sign_key(p11, s);
	ms_err err;
	CK_RV rv;

	rv = p11->fl->C_SignInit(s->h, &mech, key);
	if ((rv == CKR_KEY_HANDLE_INVALID || rv == CKR_OBJECT_HANDLE_INVALID) &&
	    key == s->key_copy) {
		/* The copy is gone: the key itself. Other failures are the token's. */
		s->key_copy = CK_INVALID_HANDLE;
		rv = p11->fl->C_SignInit(s->h, &mech, atomic_load(&p11->key));
	}
	if (rv != CKR_OK) {
		ms_p11i_fail_set(&s->fail, "C_SignInit", rv, "token \"%s\"", p11->token_label);
		return MS_E_TOKEN;
	}
	if (p11->key_always_auth) {
		err = context_login(p11, s);
		if (err != MS_OK) {
			session_reset(p11, s);
			return err;
		}
	}
	return MS_OK;
}

/* What C_Sign or C_SignFinal (@call) returned, judged. */
static ms_err
sign_end(struct ms_p11 *p11, struct ms_p11i_session *s, const char *call, CK_RV rv,
	 CK_ULONG got, size_t cap, size_t *sig_len)
{
	ms_err err;

	if (rv == CKR_BUFFER_TOO_SMALL) {
		/* Leaves the operation active (PKCS#11 3.0, 5.2). */
		ms_p11i_fail_set(&s->fail, call, rv, "signature needs %lu bytes, buffer has %zu",
				 got, cap);
		session_reset(p11, s);
		return MS_E_NOSPACE;
	}
	if (rv != CKR_OK) {
		ms_p11i_fail_set(&s->fail, call, rv, "token \"%s\"", p11->token_label);
		return MS_E_TOKEN;
	}
	err = sign_check(p11, s, got, cap);
	if (err != MS_OK) {
		return err;
	}
	*sig_len = (size_t)got;
	return MS_OK;
}

/* The session @session of @p11 ready to sign, or NULL with the failure set. */
static struct ms_p11i_session *
sign_session(struct ms_p11 *p11, unsigned session, bool has_data, uint8_t *sig, size_t *sig_len)
{
	struct ms_p11i_session *s;

	if (p11 == NULL || sig_len == NULL || session >= p11->n_sess) {
		return NULL;
	}
	s = &p11->sess[session];
	ms_p11i_fail_clear(&s->fail);
	if (!p11->has_key || !s->is_open || !has_data) {
		ms_p11i_fail_set(&s->fail, NULL, CKR_OK, "no key found, or no data to sign");
		return NULL;
	}
	if (sig == NULL) {
		/* Size query: exact when known, else our ceiling. */
		*sig_len = p11->key_sig_len != 0 ? p11->key_sig_len : MS_P11I_MODULUS_MAX;
	}
	return s;
}

ms_err
ms_p11_sign(struct ms_p11 *p11, unsigned session, const uint8_t *tbs, size_t tbs_len,
	    uint8_t *sig, size_t cap, size_t *sig_len)
{
	struct ms_p11i_session *s = sign_session(p11, session, tbs != NULL, sig, sig_len);
	uint8_t wide[64];
	CK_ULONG got = 0;
	ms_err err;
	CK_RV rv;

	if (s == NULL || sig == NULL) {
		return s == NULL ? MS_E_ARG : MS_OK;
	}
	if (tbs_len == 0 || tbs_len > MS_P11I_TBS_MAX) {
		ms_p11i_fail_set(&s->fail, NULL, CKR_OK, "%zu bytes to sign; expected 1 to %d",
				 tbs_len, MS_P11I_TBS_MAX);
		return MS_E_ARG;
	}
	err = sign_precheck(p11, s, cap);
	if (err != MS_OK) {
		return err;
	}
	ec_widen(p11, &tbs, &tbs_len, wide, sizeof(wide));
	err = sign_begin(p11, s);
	if (err != MS_OK) {
		return err;
	}
	got = (CK_ULONG)cap;
	rv = call_sign(p11, s->h, tbs, tbs_len, sig, &got);
	return sign_end(p11, s, "C_Sign", rv, got, cap, sig_len);
}

/*
 * The one wrapper that casts a part's const away: C_SignUpdate takes a
 * CK_BYTE_PTR but only reads it (PKCS#11 3.0, 5.11). @len is at most
 * MS_P11I_PART_MAX.
 */
static CK_RV
call_sign_update(struct ms_p11 *p11, CK_SESSION_HANDLE h, const uint8_t *part, size_t len)
{
	CK_BYTE *data = (CK_BYTE *)(uintptr_t)(const void *)part;

	return p11->fl->C_SignUpdate(h, data, (CK_ULONG)len);
}

/* C_SignUpdate over @parts in pieces of at most MS_P11I_PART_MAX bytes, then C_SignFinal. */
static ms_err
sign_multipart(struct ms_p11 *p11, struct ms_p11i_session *s, const struct ms_span *parts,
	       size_t n, uint8_t *sig, size_t cap, size_t *sig_len, CK_RV *update_rv)
{
	CK_ULONG got = (CK_ULONG)cap;
	size_t i, off, len;
	ms_err err;
	CK_RV rv;

	*update_rv = CKR_OK;
	err = sign_begin(p11, s);
	if (err != MS_OK) {
		return err;
	}
	for (i = 0; i < n; i++) {
		for (off = 0; off < parts[i].len; off += len) {
			len = parts[i].len - off;
			len = len > MS_P11I_PART_MAX ? MS_P11I_PART_MAX : len;
			rv = call_sign_update(p11, s->h, parts[i].p + off, len);
			if (rv != CKR_OK) {
				/* An error ends the operation (PKCS#11 3.0, 5.11). */
				*update_rv = rv;
				ms_p11i_fail_set(&s->fail, "C_SignUpdate", rv, "token \"%s\"",
						 p11->token_label);
				return MS_E_TOKEN;
			}
		}
	}
	rv = p11->fl->C_SignFinal(s->h, sig, &got);
	return sign_end(p11, s, "C_SignFinal", rv, got, cap, sig_len);
}

ms_err
ms_p11_sign_parts(struct ms_p11 *p11, unsigned session, const struct ms_span *parts,
		  size_t n_parts, uint8_t *sig, size_t cap, size_t *sig_len)
{
	struct ms_p11i_session *s = sign_session(p11, session, parts != NULL || n_parts == 0,
						 sig, sig_len);
	static const uint8_t none[1];
	CK_ULONG got = (CK_ULONG)cap;
	CK_RV update_rv = CKR_OK, rv;
	ms_err err;

	if (s == NULL || sig == NULL) {
		return s == NULL ? MS_E_ARG : MS_OK;
	}
	if (p11->key_mech != CKM_ML_DSA) {
		/* CKM_RSA_PKCS and CKM_ECDSA are single-part mechanisms. */
		ms_p11i_fail_set(&s->fail, NULL, CKR_OK,
				 "only an ML-DSA key signs a message in parts");
		return MS_E_ARG;
	}
	err = sign_precheck(p11, s, cap);
	if (err != MS_OK) {
		return err;
	}
	/* Up to one part, or a token that signs in one part only: one C_Sign. */
	if (n_parts <= 1 && (n_parts == 0 || parts[0].len <= MS_P11I_PART_MAX)) {
		err = sign_begin(p11, s);
		if (err != MS_OK) {
			return err;
		}
		rv = call_sign(p11, s->h, n_parts == 0 ? none : parts[0].p,
			       n_parts == 0 ? 0 : parts[0].len, sig, &got);
		return sign_end(p11, s, "C_Sign", rv, got, cap, sig_len);
	}
	err = sign_multipart(p11, s, parts, n_parts, sig, cap, sig_len, &update_rv);
	if (err == MS_E_TOKEN && n_parts == 1 &&
	    (update_rv == CKR_FUNCTION_NOT_SUPPORTED || update_rv == CKR_MECHANISM_INVALID ||
	     update_rv == CKR_KEY_FUNCTION_NOT_PERMITTED)) {
		err = sign_begin(p11, s);
		if (err != MS_OK) {
			return err;
		}
		got = (CK_ULONG)cap;
		rv = call_sign(p11, s->h, parts[0].p, parts[0].len, sig, &got);
		return sign_end(p11, s, "C_Sign", rv, got, cap, sig_len);
	}
	return err;
}

const struct ms_p11_fail *
ms_p11_session_fail(const struct ms_p11 *p11, unsigned session)
{
	if (p11 == NULL || session >= p11->n_sess) {
		return ms_p11_last_fail(p11);
	}
	return &p11->sess[session].fail;
}
