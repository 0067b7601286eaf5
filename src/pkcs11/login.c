// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one user login of a run (HACKING.md, Secrets): token flags are
 * read first so that a locked or last-try PIN is never spent, and a
 * rejected PIN is never retried; after a lost session, a new session and,
 * when the token forgot the login, the same PIN once more.
 */
#include <string.h>

#include "p11_internal.h"

/*
 * The one wrapper that casts the PIN's const away: C_Login takes a
 * CK_UTF8CHAR_PTR but only reads it (PKCS#11 3.0, 5.6). The caller's buffer
 * goes to the module directly; no copy is made. A NULL @pin logs in through
 * the protected authentication path. The length was checked against
 * MS_PIN_MAX by the caller.
 */
CK_RV
ms_p11i_call_login(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_USER_TYPE user,
		   const struct ms_pin *pin)
{
	CK_UTF8CHAR *p = NULL;
	CK_ULONG len = 0;

	if (pin != NULL) {
		p = (CK_UTF8CHAR *)(uintptr_t)(const void *)pin->buf;
		len = (CK_ULONG)pin->len;
	}
	return p11->fl->C_Login(h, user, p, len);
}

/* How a locked user PIN is unlocked (PKCS#11 3.0, 5.5: C_InitPIN, by the SO). */
#define UNLOCK_HINT "the security officer must reset the user PIN (C_InitPIN) to unlock it"

/* The PIN's state as the token's flags say it: locked, or one try left. */
static ms_err
pin_state_check(struct ms_p11 *p11, CK_FLAGS tf, unsigned flags)
{
	if ((tf & CKF_USER_PIN_LOCKED) != 0) {
		ms_p11i_fail_set(&p11->fail, "C_GetTokenInfo", CKR_OK,
				 "token \"%s\": user PIN is locked (CKF_USER_PIN_LOCKED); "
				 "no login tried; " UNLOCK_HINT, p11->token_label);
		return MS_E_PIN;
	}
	if ((tf & CKF_USER_PIN_FINAL_TRY) != 0 && (flags & MS_P11_LOGIN_ALLOW_FINAL_TRY) == 0) {
		ms_p11i_fail_set(&p11->fail, "C_GetTokenInfo", CKR_OK,
				 "token \"%s\": one PIN attempt left before it locks "
				 "(CKF_USER_PIN_FINAL_TRY); no login tried", p11->token_label);
		return MS_E_PIN;
	}
	return MS_OK;
}

/*
 * A PKCS#11 PIN length limit (PKCS#11 3.0, 3.2): 0 (CK_EFFECTIVELY_INFINITE)
 * or CK_UNAVAILABLE_INFORMATION state none.
 */
static bool
len_limit_is_set(CK_ULONG n)
{
	return n != CK_EFFECTIVELY_INFINITE && n != CK_UNAVAILABLE_INFORMATION;
}

/*
 * A PIN outside [ulMinPinLen, ulMaxPinLen] is one the token cannot accept:
 * openCryptoki counts a longer one as a wrong try. The message names the
 * limits and the PIN's source, never the PIN or its length.
 */
static ms_err
pin_len_check(struct ms_p11 *p11, const struct ms_pin *pin, const CK_TOKEN_INFO *info)
{
	bool has_min = len_limit_is_set(info->ulMinPinLen);
	bool has_max = len_limit_is_set(info->ulMaxPinLen);
	bool is_short = has_min && pin->len < info->ulMinPinLen;
	bool is_long = has_max && pin->len > info->ulMaxPinLen;

	if (!is_short && !is_long) {
		return MS_OK;
	}
	ms_p11i_fail_set(&p11->fail, "C_Login", CKR_OK,
			 "the PIN from %s is %s than token \"%s\" allows (",
			 pin->source != NULL ? pin->source : "the caller",
			 is_short ? "shorter" : "longer", p11->token_label);
	if (has_min) {
		ms_p11i_fail_append(&p11->fail, "ulMinPinLen %lu%s", info->ulMinPinLen,
				    has_max ? ", " : "");
	}
	if (has_max) {
		ms_p11i_fail_append(&p11->fail, "ulMaxPinLen %lu", info->ulMaxPinLen);
	}
	ms_p11i_fail_append(&p11->fail, " bytes); not offered to it");
	return MS_E_PIN;
}

/*
 * Refuses, before any C_Login, what the token info says cannot end well.
 * An empty PIN, or one shorter than ulMinPinLen, would only spend one of
 * the token's tries (SoftHSM2 counts it; a 3-try card locks after two
 * stray Enters and a typo): it is never sent, nor one longer than
 * ulMaxPinLen. A PIN pad token gets no PIN.
 */
static ms_err
login_precheck(struct ms_p11 *p11, const struct ms_pin *pin, unsigned flags,
	       const CK_TOKEN_INFO *info)
{
	CK_FLAGS tf = info->flags;
	ms_err err = pin_state_check(p11, tf, flags);

	if (err != MS_OK) {
		return err;
	}
	if (pin == NULL && (tf & CKF_PROTECTED_AUTHENTICATION_PATH) == 0) {
		ms_p11i_fail_set(&p11->fail, "C_Login", CKR_OK,
				 "token \"%s\" needs a PIN and none was given", p11->token_label);
		return MS_E_PIN;
	}
	if (pin == NULL) {
		return MS_OK;
	}
	if (pin->len == 0) {
		ms_p11i_fail_set(&p11->fail, "C_Login", CKR_OK,
				 "the PIN from %s is empty; not offered to token \"%s\"",
				 pin->source != NULL ? pin->source : "the caller",
				 p11->token_label);
		return MS_E_PIN;
	}
	if (pin_len_check(p11, pin, info) != MS_OK) {
		return MS_E_PIN;
	}
	return MS_OK;
}

/* The token's info afresh (its flags change as PINs are tried); @p11->fail on failure. */
static ms_err
read_info(struct ms_p11 *p11, CK_TOKEN_INFO *info)
{
	CK_RV rv;

	memset(info, 0, sizeof(*info));
	rv = p11->fl->C_GetTokenInfo(p11->slot, info);
	if (rv != CKR_OK) {
		ms_p11i_fail_set(&p11->fail, "C_GetTokenInfo", rv, "token \"%s\"",
				 p11->token_label);
		return MS_E_TOKEN;
	}
	p11->token_flags = info->flags;
	return MS_OK;
}

ms_err
ms_p11_login(struct ms_p11 *p11, const struct ms_pin *pin, unsigned flags)
{
	CK_TOKEN_INFO info;
	ms_err err = MS_E_INTERNAL;
	CK_RV rv;

	if (p11 == NULL || !p11->has_token || !p11->sess[0].is_open) {
		return MS_E_ARG;
	}
	if (pin != NULL && !pin->is_set) {
		pin = NULL;
	}
	if (pin != NULL && pin->len > MS_PIN_MAX) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "PIN longer than %d bytes", MS_PIN_MAX);
		return MS_E_ARG;
	}
	if (p11->login_done) {
		return MS_OK;
	}
	if (p11->login_tried) {
		ms_p11i_fail_set(&p11->fail, "C_Login", CKR_OK,
				 "an earlier login failed; not retried");
		return MS_E_PIN;
	}
	if (read_info(p11, &info) != MS_OK) {
		return MS_E_TOKEN;
	}
	if ((info.flags & CKF_LOGIN_REQUIRED) == 0) {
		p11->pin = pin;
		p11->login_done = true;
		return MS_OK;
	}
	err = login_precheck(p11, pin, flags, &info);
	if (err != MS_OK) {
		return err;
	}
	p11->login_tried = true;
	rv = ms_p11i_call_login(p11, p11->sess[0].h, CKU_USER, pin);
	if (rv == CKR_OK || rv == CKR_USER_ALREADY_LOGGED_IN) {
		/* Log out at close only what we logged in ourselves. */
		p11->logged_in = (rv == CKR_OK);
		p11->pin = pin;
		p11->login_done = true;
		return MS_OK;
	}
	if (rv == CKR_PIN_LOCKED && ms_p11i_token_is_tpm(p11)) {
		/*
		 * A TPM counts wrong PINs itself and then refuses every one, the
		 * right one too (tpm2-pkcs11 maps TPM_RC_LOCKOUT): no security
		 * officer resets that.
		 */
		atomic_store(&p11->pin_rejected, true);
		ms_p11i_fail_set(&p11->fail, "C_Login", rv, "token \"%s\" is locked by the "
				 "TPM's dictionary-attack protection (too many wrong PINs or "
				 "authorisations); `tpm2_dictionarylockout --clear-lockout` with "
				 "the TPM's lockout authorisation resets it, or it unlocks by "
				 "itself after the TPM's recovery time (TPM2_PT_LOCKOUT_RECOVERY)",
				 p11->token_label);
		return MS_E_PIN;
	}
	if (rv == CKR_PIN_LOCKED) {
		/* Locked by earlier tries, or by this one: either way not "rejected". */
		atomic_store(&p11->pin_rejected, true);
		ms_p11i_fail_set(&p11->fail, "C_Login", rv,
				 "token \"%s\" is locked: its user PIN is blocked; " UNLOCK_HINT,
				 p11->token_label);
		return MS_E_PIN;
	}
	if (ms_p11i_rv_is_pin_error(rv)) {
		atomic_store(&p11->pin_rejected, true);
		ms_p11i_fail_set(&p11->fail, "C_Login", rv, "token \"%s\" refused the PIN from %s",
				 p11->token_label,
				 pin == NULL ? "the PIN pad" :
				 (pin->source != NULL ? pin->source : "the caller"));
		return MS_E_PIN;
	}
	ms_p11i_fail_set(&p11->fail, "C_Login", rv, "token \"%s\"", p11->token_label);
	return MS_E_TOKEN;
}

ms_err
ms_p11_pin_check(struct ms_p11 *p11, unsigned flags)
{
	CK_TOKEN_INFO info;

	if (p11 == NULL || !p11->has_token) {
		return MS_E_ARG;
	}
	if (p11->login_done) {
		return MS_OK;
	}
	if (read_info(p11, &info) != MS_OK) {
		return MS_E_TOKEN;
	}
	if ((info.flags & CKF_LOGIN_REQUIRED) == 0) {
		return MS_OK;
	}
	return pin_state_check(p11, info.flags, flags);
}

bool
ms_p11_pin_is_locked(const struct ms_p11 *p11)
{
	if (p11 == NULL || !p11->has_token) {
		return false;
	}
	return p11->fail.rv == CKR_PIN_LOCKED || (p11->token_flags & CKF_USER_PIN_LOCKED) != 0;
}

bool
ms_p11_pin_is_final_try(const struct ms_p11 *p11)
{
	if (p11 == NULL || !p11->has_token) {
		return false;
	}
	return (p11->token_flags & CKF_USER_PIN_FINAL_TRY) != 0;
}

bool
ms_p11_needs_pin(const struct ms_p11 *p11)
{
	if (p11 == NULL || !p11->has_token) {
		return false;
	}
	return (p11->token_flags & CKF_LOGIN_REQUIRED) != 0 &&
	       (p11->token_flags & CKF_PROTECTED_AUTHENTICATION_PATH) == 0;
}

/*
 * Logs in on @h when the token has forgotten our login (*@relogged then
 * true); @s->fail on failure.
 */
static ms_err
login_again(struct ms_p11 *p11, struct ms_p11i_session *s, CK_SESSION_HANDLE h, bool *relogged)
{
	CK_SESSION_INFO info;
	CK_RV rv;

	if (!p11->login_done || (p11->token_flags & CKF_LOGIN_REQUIRED) == 0) {
		return MS_OK;
	}
	memset(&info, 0, sizeof(info));
	rv = p11->fl->C_GetSessionInfo(h, &info);
	if (rv != CKR_OK) {
		ms_p11i_fail_set(&s->fail, "C_GetSessionInfo", rv, "after re-opening a session");
		return MS_E_TOKEN;
	}
	if (info.state == CKS_RO_USER_FUNCTIONS || info.state == CKS_RW_USER_FUNCTIONS) {
		return MS_OK;
	}
	if (atomic_load(&p11->pin_rejected)) {
		ms_p11i_fail_set(&s->fail, "C_Login", CKR_OK,
				 "a PIN was refused before; not offered again");
		return MS_E_PIN;
	}
	rv = ms_p11i_call_login(p11, h, CKU_USER, p11->pin);
	if (rv == CKR_OK || rv == CKR_USER_ALREADY_LOGGED_IN) {
		p11->logged_in = p11->logged_in || rv == CKR_OK;
		*relogged = rv == CKR_OK;
		return MS_OK;
	}
	if (ms_p11i_rv_is_pin_error(rv)) {
		atomic_store(&p11->pin_rejected, true);
		ms_p11i_fail_set(&s->fail, "C_Login", rv, "logging in again after a session loss");
		return MS_E_PIN;
	}
	ms_p11i_fail_set(&s->fail, "C_Login", rv, "logging in again after a session loss");
	return MS_E_TOKEN;
}

ms_err
ms_p11_session_recover(struct ms_p11 *p11, unsigned session)
{
	struct ms_p11i_session *s;
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;
	bool relogged = false;
	ms_err err;

	if (p11 == NULL || !p11->has_token || session >= p11->n_sess) {
		return MS_E_ARG;
	}
	s = &p11->sess[session];
	pthread_mutex_lock(&p11->recover_lock);
	err = ms_p11i_session_open(p11, &h, &s->fail);
	if (err != MS_OK) {
		goto out;
	}
	/* The old handle is dead or dying; what closing it says does not matter. */
	(void)p11->fl->C_CloseSession(s->h);
	ms_p11i_session_replace(s, h);
	err = login_again(p11, s, h, &relogged);
	if (err == MS_OK && relogged && p11->has_key) {
		err = ms_p11i_key_refind(p11, h);
		if (err != MS_OK) {
			s->fail = p11->fail;
		}
	}
out:
	pthread_mutex_unlock(&p11->recover_lock);
	return err;
}
