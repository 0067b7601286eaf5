// SPDX-License-Identifier: GPL-2.0-only
/* Extra sessions on the chosen token for parallel signers. */
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

bool
ms_p11_token_is_hardware(const struct ms_p11 *p11)
{
	CK_SLOT_INFO info;

	if (p11 == NULL || !p11->has_token) {
		return false;
	}
	memset(&info, 0, sizeof(info));
	if (p11->fl->C_GetSlotInfo(p11->slot, &info) != CKR_OK) {
		return true;	/* unknown: assume the cautious answer */
	}
	return (info.flags & CKF_HW_SLOT) != 0;
}
