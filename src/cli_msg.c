// SPDX-License-Identifier: GPL-2.0-only
/* One-line messages on stderr, each prefixed with the program name. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void vsay(const char *kind, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void
vsay(const char *kind, const char *fmt, va_list ap)
{
	char line[2048];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "modsign: %s%s\n", kind, line);
}

void
ms_cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

void
ms_cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay("warning: ", fmt, ap);
	va_end(ap);
}

bool
ms_cli_is_pkcs11_uri(const char *s)
{
	return strncmp(s, "pkcs11:", 7) == 0;
}
