// SPDX-License-Identifier: GPL-2.0-only
/* The application's lines, formatted once and handed to the caller's sink. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_internal.h"

void
ms_app_say(const struct ms_app_sink *sink, enum ms_app_say_kind kind, const char *detail,
	   const char *fmt, ...)
{
	char line[MS_APP_LINE_MAX];
	char *text = line;
	va_list ap, again;
	int n;

	if (sink == NULL || sink->say == NULL) {
		return;
	}
	va_start(ap, fmt);
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
	va_end(ap);
	sink->say(sink->ctx, kind, text, detail);
	if (text != line) {
		free(text);
	}
}
