// SPDX-License-Identifier: GPL-2.0-only
/* Extra sessions on the chosen token for parallel signers. */
#include <pthread.h>
#include <string.h>

#include "p11_internal.h"

unsigned
ms_p11_session_count_max(const struct ms_p11 *p11, unsigned want)
{
	CK_TOKEN_INFO info;
	CK_ULONG max, used;

	if (p11 == NULL || !p11->has_token || want <= 1) {
		return 1;
	}
	if (want > P11_SESSIONS_MAX) {
		want = P11_SESSIONS_MAX;
	}
	memset(&info, 0, sizeof(info));
	if (p11->fl->C_GetTokenInfo(p11->slot, &info) != CKR_OK) {
		return 1;
	}
	max = info.ulMaxSessionCount;
	used = info.ulSessionCount;
	/* PKCS#11 3.0, 3.2: 0 means no practical limit; ~0 that the token won't say. */
	if (max == CK_EFFECTIVELY_INFINITE || max == CK_UNAVAILABLE_INFORMATION) {
		return want;
	}
	/* Our own open sessions count even if the token's number is missing or low. */
	if (used == CK_UNAVAILABLE_INFORMATION || used < p11->n_sess) {
		used = p11->n_sess;
	}
	if (max <= 1 || used >= max || max - used < 2) {
		return 1;
	}
	if (max - used + p11->n_sess < want) {
		return (unsigned)(max - used + p11->n_sess);
	}
	return want;
}

ms_err
ms_p11_session_add(struct ms_p11 *p11, unsigned *index)
{
	struct p11_session *s = NULL;
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;
	ms_err err = MS_E_INTERNAL;

	if (p11 == NULL || index == NULL || !p11->has_token || p11->n_sess == 0) {
		return MS_E_ARG;
	}
	if (p11->n_sess >= P11_SESSIONS_MAX) {
		p11_fail_set(&p11->fail, NULL, CKR_OK, "at most %d sessions", P11_SESSIONS_MAX);
		return MS_E_NOMEM;
	}
	err = p11_session_open(p11, &h, &p11->fail);
	if (err != MS_OK) {
		return err;
	}
	s = &p11->sess[p11->n_sess];
	s->h = h;
	s->is_open = true;
	p11_fail_clear(&s->fail);
	*index = p11->n_sess;
	p11->n_sess++;
	return MS_OK;
}

void
p11_session_replace(struct p11_session *s, CK_SESSION_HANDLE h)
{
	s->h = h;
	s->key_copy = CK_INVALID_HANDLE;	/* closed with the old session */
	s->copy_tried = false;
}

bool
ms_p11_token_is_hardware(const struct ms_p11 *p11)
{
	/* The slot's flags were read when the token was chosen. */
	return p11 != NULL && p11->has_token && (p11->slot_flags & CKF_HW_SLOT) != 0;
}

bool
ms_p11_rv_is_session_loss(unsigned long rv)
{
	return rv == CKR_SESSION_HANDLE_INVALID || rv == CKR_SESSION_CLOSED ||
	       rv == CKR_USER_NOT_LOGGED_IN;
}

/*
 * Logs in on @h when the token has forgotten our login (*@relogged then
 * true); @s->fail on failure.
 */
static ms_err
login_again(struct ms_p11 *p11, struct p11_session *s, CK_SESSION_HANDLE h, bool *relogged)
{
	CK_SESSION_INFO info;
	CK_RV rv;

	if (!p11->login_done || (p11->token_flags & CKF_LOGIN_REQUIRED) == 0) {
		return MS_OK;
	}
	memset(&info, 0, sizeof(info));
	rv = p11->fl->C_GetSessionInfo(h, &info);
	if (rv != CKR_OK) {
		p11_fail_set(&s->fail, "C_GetSessionInfo", rv, "after re-opening a session");
		return MS_E_TOKEN;
	}
	if (info.state == CKS_RO_USER_FUNCTIONS || info.state == CKS_RW_USER_FUNCTIONS) {
		return MS_OK;
	}
	if (atomic_load(&p11->pin_rejected)) {
		p11_fail_set(&s->fail, "C_Login", CKR_OK, "a PIN was refused before; not offered again");
		return MS_E_PIN;
	}
	rv = p11_call_login(p11, h, CKU_USER, p11->pin);
	if (rv == CKR_OK || rv == CKR_USER_ALREADY_LOGGED_IN) {
		p11->logged_in = p11->logged_in || rv == CKR_OK;
		*relogged = rv == CKR_OK;
		return MS_OK;
	}
	if (rv == CKR_PIN_INCORRECT || rv == CKR_PIN_LOCKED || rv == CKR_PIN_EXPIRED ||
	    rv == CKR_PIN_LEN_RANGE || rv == CKR_PIN_INVALID) {
		atomic_store(&p11->pin_rejected, true);
		p11_fail_set(&s->fail, "C_Login", rv, "logging in again after a session loss");
		return MS_E_PIN;
	}
	p11_fail_set(&s->fail, "C_Login", rv, "logging in again after a session loss");
	return MS_E_TOKEN;
}

ms_err
ms_p11_session_recover(struct ms_p11 *p11, unsigned session)
{
	struct p11_session *s;
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;
	bool relogged = false;
	ms_err err;

	if (p11 == NULL || !p11->has_token || session >= p11->n_sess) {
		return MS_E_ARG;
	}
	s = &p11->sess[session];
	pthread_mutex_lock(&p11->recover_lock);
	err = p11_session_open(p11, &h, &s->fail);
	if (err != MS_OK) {
		goto out;
	}
	/* The old handle is dead or dying; what closing it says does not matter. */
	(void)p11->fl->C_CloseSession(s->h);
	p11_session_replace(s, h);
	err = login_again(p11, s, h, &relogged);
	if (err == MS_OK && relogged && p11->has_key) {
		err = p11_key_refind(p11, h);
		if (err != MS_OK) {
			s->fail = p11->fail;
		}
	}
out:
	pthread_mutex_unlock(&p11->recover_lock);
	return err;
}
