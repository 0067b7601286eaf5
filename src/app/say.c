// SPDX-License-Identifier: GPL-2.0-only
/* The application's lines, formatted once and handed to the caller's sink. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_internal.h"

static void vsay(const struct ms_app_sink *sink, enum ms_app_say_kind kind, const char *detail,
		 const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

static void
vsay(const struct ms_app_sink *sink, enum ms_app_say_kind kind, const char *detail,
     const char *fmt, va_list ap)
{
	char line[MS_APP_LINE_MAX];
	char *text = line;
	va_list again;
	int n;

	if (sink == NULL || sink->say == NULL) {
		return;
	}
	va_copy(again, ap);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0) {
		line[0] = '\0';
	} else if ((size_t)n >= sizeof(line)) {
		/* Most lines fit; a longer one is formatted on the heap, else cut. */
		text = malloc((size_t)n + 1);
		if (text == NULL || vsnprintf(text, (size_t)n + 1, fmt, again) != n) {
			free(text);
			text = line;
		}
	}
	va_end(again);
	sink->say(sink->ctx, kind, text, detail);
	if (text != line) {
		free(text);
	}
}

void
ms_app_say(const struct ms_app_sink *sink, enum ms_app_say_kind kind, const char *detail,
	   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(sink, kind, detail, fmt, ap);
	va_end(ap);
}

void
ms_app_err(const struct ms_app_sink *sink, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(sink, MS_APP_SAY_ERROR, NULL, fmt, ap);
	va_end(ap);
}

void
ms_app_warn(const struct ms_app_sink *sink, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(sink, MS_APP_SAY_WARN, NULL, fmt, ap);
	va_end(ap);
}

void
ms_app_info(const struct ms_app_sink *sink, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(sink, MS_APP_SAY_INFO, NULL, fmt, ap);
	va_end(ap);
}
