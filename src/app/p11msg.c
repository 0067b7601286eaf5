// SPDX-License-Identifier: GPL-2.0-only
/*
 * The line for a failed token step: the role, the PKCS#11 call and its
 * CKR_ name, the token layer's detail; a refused PIN named by its source.
 */
#include <stdio.h>

#include "../pkcs11/p11.h"
#include "app_internal.h"

/* ms_app_p11_error() with @hint ("" for none) after the failure's detail. */
static void
p11_error_hint(const struct ms_app_sink *sink, const char *role, const struct ms_p11 *p11,
	       ms_err err, const char *hint)
{
	const struct ms_p11_fail *f = p11 != NULL ? ms_p11_last_fail(p11) : NULL;
	char detail[sizeof(f->detail) + 64];

	if (f == NULL || (f->call == NULL && f->detail[0] == '\0')) {
		ms_app_say(sink, MS_APP_SAY_ERROR, NULL, "%s: %s%s", role, ms_err_str(err), hint);
		return;
	}
	snprintf(detail, sizeof(detail), "%s%s", f->detail, hint);
	if (f->rv != 0) {
		ms_app_say(sink, MS_APP_SAY_ERROR, detail, "%s: %s: %s", role,
			   f->call != NULL ? f->call : "PKCS#11", ms_p11_rv_name(f->rv));
	} else {
		ms_app_say(sink, MS_APP_SAY_ERROR, detail, "%s: %s", role,
			   f->call != NULL ? f->call : ms_err_str(err));
	}
}

void
ms_app_p11_error(const struct ms_app_sink *sink, const char *role, const struct ms_p11 *p11,
		 ms_err err)
{
	p11_error_hint(sink, role, p11, err, "");
}

void
ms_app_p11_login_error(const struct ms_app_sink *sink, const char *who,
		       const struct ms_p11 *p11, ms_err err, const struct ms_pin *pin,
		       bool allow_final_try, const char *tail)
{
	const struct ms_p11_fail *f = ms_p11_last_fail(p11);
	const char *role = who != NULL ? who : "key";

	/* A locked token refused no PIN: its own message says how to unlock it. */
	if (err == MS_E_PIN && f->rv != 0 && !ms_p11_pin_is_locked(p11)) {
		ms_app_say(sink, MS_APP_SAY_ERROR, NULL, "%s%s%s: PIN from %s rejected: %s%s",
			   who != NULL ? who : "", who != NULL ? ": " : "",
			   f->call != NULL ? f->call : "C_Login",
			   pin != NULL && pin->source != NULL ? pin->source : "none",
			   ms_p11_rv_name(f->rv), tail);
		return;
	}
	/* Refused before any C_Login because one wrong PIN would lock the token. */
	if (err == MS_E_PIN && f->rv == 0 && !allow_final_try &&
	    ms_p11_pin_is_final_try(p11) && !ms_p11_pin_is_locked(p11)) {
		p11_error_hint(sink, role, p11, err, "; --pin-final-try spends that last try");
		return;
	}
	ms_app_p11_error(sink, role, p11, err);
}
