// SPDX-License-Identifier: GPL-2.0-only
/*
 * Every line modsign prints about a module, a key or a certificate: error
 * and warning messages on stderr, result lines on stdout, and JSON strings.
 * Names come from the file system, lists, certificates and tokens, so each
 * line is escaped here, in one place, before it reaches a terminal: a file
 * named "a.ko\nOK b.ko" must not print a second line. Parses untrusted input.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json.h"
#include "msg.h"

#define LINE_LEN 2048	/* most lines fit; longer ones are formatted on the heap */

size_t
ms_cli_utf8_len(const unsigned char *s, size_t len)
{
	return ms_utf8_len(s, len);
}

static void
put_hex_byte(FILE *f, unsigned char c)
{
	fprintf(f, "\\x%02x", c);
}

void
ms_cli_put_escaped(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n;

	while (i < len) {
		unsigned char c = s[i];

		if (c == '\\') {
			fputs("\\\\", f);
		} else if (c == '\n') {
			fputs("\\n", f);
		} else if (c == '\t') {
			fputs("\\t", f);
		} else if (c == '\r') {
			fputs("\\r", f);
		} else if (c < 0x20 || c == 0x7f) {
			put_hex_byte(f, c);
		} else if (c < 0x80) {
			putc(c, f);
		} else {
			n = ms_cli_utf8_len(s + i, len - i);
			if (n == 0 || (n == 2 && c == 0xc2 && s[i + 1] < 0xa0)) {
				/*
				 * Not UTF-8, or a C1 control (U+0080..U+009F:
				 * U+009B is CSI to some terminals): each byte as \xHH.
				 */
				n = n == 0 ? 1 : n;
				for (size_t k = 0; k < n; k++) {
					put_hex_byte(f, s[i + k]);
				}
			} else {
				fwrite(s + i, 1, n, f);
			}
			i += n;
			continue;
		}
		i++;
	}
}

void
ms_cli_put_json_str(FILE *f, const char *str)
{
	ms_json_put_str(f, (const uint8_t *)str, strlen(str));
}

static void vline(FILE *f, const char *prefix, const char *detail, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* The bulk run's hook around lines on stderr (its progress line), or NULL. */
static const struct ms_cli_msg_hook *_Atomic stderr_hook;

void
ms_cli_msg_hook_set(const struct ms_cli_msg_hook *hook)
{
	atomic_store(&stderr_hook, hook);
}

/* Writes @len bytes of @s escaped; the first line of @detail follows after ": ". */
static void
put_text(FILE *f, const char *s, size_t len, const char *detail)
{
	const char *nl = NULL;

	ms_cli_put_escaped(f, s, len);
	if (detail == NULL || detail[0] == '\0') {
		putc('\n', f);
		return;
	}
	/* The PKCS#11 layer's detail: a first part, then lines that start with "\n  ". */
	nl = strchr(detail, '\n');
	fputs(": ", f);
	ms_cli_put_escaped(f, detail, nl != NULL ? (size_t)(nl - detail) : strlen(detail));
	putc('\n', f);
	while (nl != NULL) {
		const char *line = nl + 1;

		nl = strchr(line, '\n');
		ms_cli_put_escaped(f, line, nl != NULL ? (size_t)(nl - line) : strlen(line));
		putc('\n', f);
	}
}

/*
 * @prefix (trusted text), then the formatted text escaped, then @detail
 * (may be NULL) and a newline, in one write under the stream's lock so
 * that lines of the bulk run's threads, and of other processes, do not mix.
 */
static void
vline(FILE *f, const char *prefix, const char *detail, const char *fmt, va_list ap)
{
	char line[LINE_LEN];
	char *text = line;
	const struct ms_cli_msg_hook *hook = NULL;
	/*
	 * The line is put together first and written with one call: stderr is
	 * unbuffered, so piece by piece the lines of processes sharing it (an
	 * agent and its clients, kbuild's parallel sign-file calls) mixed
	 * character by character.
	 */
	FILE *whole = NULL;
	char *buf = NULL;
	size_t buf_len = 0;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0) {
		n = 0;
		line[0] = '\0';
	} else if ((size_t)n >= sizeof(line)) {
		text = malloc((size_t)n + 1);
		if (text == NULL || vsnprintf(text, (size_t)n + 1, fmt, again) != n) {
			free(text);
			text = line;	/* out of memory: the truncated line is better than none */
			n = (int)strlen(line);
		}
	}
	va_end(again);
	whole = open_memstream(&buf, &buf_len);
	if (whole != NULL) {
		fputs(prefix, whole);
		put_text(whole, text, (size_t)n, detail);
		if (fclose(whole) != 0) {
			free(buf);
			buf = NULL;
		}
	}
	hook = f == stderr ? atomic_load(&stderr_hook) : NULL;
	if (hook != NULL) {
		hook->before(hook->ctx);
	}
	flockfile(f);
	if (buf != NULL) {
		fwrite(buf, 1, buf_len, f);
	} else {
		fputs(prefix, f);	/* out of memory: piece by piece */
		put_text(f, text, (size_t)n, detail);
	}
	funlockfile(f);
	free(buf);
	if (hook != NULL) {
		hook->after(hook->ctx);
	}
	if (text != line) {
		free(text);
	}
}

void
ms_cli_line(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(f, "", NULL, fmt, ap);
	va_end(ap);
}

void
ms_cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(stderr, "modsign: ", NULL, fmt, ap);
	va_end(ap);
}

void
ms_cli_error_detail(const char *detail, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(stderr, "modsign: ", detail, fmt, ap);
	va_end(ap);
}

void
ms_cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline(stderr, "modsign: warning: ", NULL, fmt, ap);
	va_end(ap);
}
