/* SPDX-License-Identifier: GPL-2.0-only */
/* What the files of src/app/ share, and their tests. */
#ifndef MS_APP_INTERNAL_H
#define MS_APP_INTERNAL_H

#include "app.h"

/* The longest line the application says; longer ones are cut. */
#define MS_APP_LINE_MAX 2048

/*
 * ms_app_say() - format a line and hand it to @sink with @detail (NULL:
 * none); a NULL @sink or say() drops it.
 */
void ms_app_say(const struct ms_app_sink *sink, enum ms_app_say_kind kind, const char *detail,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* ms_app_err(), ms_app_warn(), ms_app_info() - ms_app_say() of that kind, without a detail. */
void ms_app_err(const struct ms_app_sink *sink, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ms_app_warn(const struct ms_app_sink *sink, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ms_app_info(const struct ms_app_sink *sink, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * ms_app_tokens_open() - the tokens part of ms_app_key_open(): @cfg->key
 * and every @cfg->keys (1 to MS_TOKENS_MAX tokens). With one token the
 * lines name it as "key" and the key is not checked against @cert here.
 */
ms_err ms_app_tokens_open(const struct ms_app_key_cfg *cfg, const struct ms_cms_cert *cert,
			  const struct ms_app_sink *sink, const struct ms_app_pins *pins,
			  struct ms_pin *pin, struct ms_signer **main_out,
			  struct ms_tokens *out) MS_MUST_CHECK;

#endif
