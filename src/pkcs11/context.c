// SPDX-License-Identifier: GPL-2.0-only
/* The token context: open from a URI, accessors, and orderly close. */
#include <stdlib.h>
#include <string.h>

#include "p11_internal.h"

ms_err
ms_p11_open(const char *uri, enum ms_p11_for what, struct ms_p11 **out)
{
	struct ms_p11 *p11 = NULL;
	ms_err err = MS_E_INTERNAL;

	if (out == NULL || (what != MS_P11_FOR_KEY && what != MS_P11_FOR_CERT)) {
		return MS_E_ARG;
	}
	*out = NULL;
	p11 = calloc(1, sizeof(*p11));
	if (p11 == NULL) {
		return MS_E_NOMEM;
	}
	p11->open_for = what;
	atomic_init(&p11->pin_rejected, false);
	pthread_mutex_init(&p11->recover_lock, NULL);
	p11_fail_clear(&p11->fail);
	for (size_t i = 0; i < P11_SESSIONS_MAX; i++) {
		p11_fail_clear(&p11->sess[i].fail);
	}
	/* From here on the caller gets the context even on failure. */
	*out = p11;
	err = p11_uri_parse(p11, uri);
	if (err != MS_OK) {
		goto out;
	}
	err = p11_modules_load(p11);
	if (err != MS_OK) {
		goto out;
	}
	err = p11_token_select(p11);
out:
	return err;
}

void
ms_p11_close(struct ms_p11 *p11)
{
	if (p11 == NULL) {
		return;
	}
	if (p11->logged_in && p11->sess[0].is_open) {
		(void)p11->fl->C_Logout(p11->sess[0].h);
	}
	p11->logged_in = false;
	for (size_t i = 0; i < p11->n_sess; i++) {
		if (p11->sess[i].is_open) {
			(void)p11->fl->C_CloseSession(p11->sess[i].h);
			p11->sess[i].is_open = false;
		}
	}
	p11->n_sess = 0;
	p11_modules_release(p11);
	/* p11-kit frees its pin-value copy without wiping; it came from argv. */
	p11_kit_uri_free(p11->uri);
	p11->uri = NULL;
	p11->pin = NULL;
	pthread_mutex_destroy(&p11->recover_lock);
	free(p11);
}

/* What a NULL context (ms_p11_open() out of memory) reports. */
static const struct ms_p11_fail no_context = {
	.call = NULL,
	.rv = CKR_OK,
	.detail = "no token context (out of memory)",
};

const struct ms_p11_fail *
ms_p11_last_fail(const struct ms_p11 *p11)
{
	if (p11 == NULL) {
		return &no_context;
	}
	return &p11->fail;
}

const char *
ms_p11_token_label(const struct ms_p11 *p11)
{
	if (p11 == NULL || !p11->has_token) {
		return NULL;
	}
	return p11->token_label;
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
