// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: PIN input (ms_cli_pin_get in src/cli/pin.c) from a
 * pin-source file (a memfd holding the data, named as file:PATH,
 * file://PATH, PATH, or the unsupported FILE:PATH), from pin-value in the
 * URI, or from KBUILD_SIGN_PIN. Input: one mode byte, then the PIN text.
 * The messages pin.c prints are captured here, in place of msg.c's
 * ms_cli_error()/ms_cli_warn() (and ms_cli_put_escaped(), which only the
 * terminal prompt uses).
 *
 * Oracles: the PIN is exactly the text less one trailing newline (CR LF
 * too), refused when longer than MS_PIN_MAX or holding a NUL;
 * ms_pin_clear() leaves the buffer zero; and the messages do not depend on
 * the PIN's value: the same input with every other byte replaced (NUL, CR
 * and LF kept, so the same rules apply) must print exactly the same text.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/msg.h"
#include "cli/pin.h"
#include "fuzz.h"

#define MODE_FORM	0x03u	/* pin-source spelling: 0 file:, 1 file://, 2 bare path, 3 FILE: */
#define MODE_ENV	0x04u	/* KBUILD_SIGN_PIN instead of a pin-source */
#define MODE_VALUE	0x08u	/* pin-value in the URI, which wins over everything */

/* Every message of one ms_cli_pin_get() call, one a line. */
static char msg_log[8192];
static size_t msg_len;

static void say(const char *kind, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static void
say(const char *kind, const char *fmt, va_list ap)
{
	char line[2048];
	int n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = snprintf(msg_log + msg_len, sizeof(msg_log) - msg_len, "%s%s\n", kind, line);
	if (n > 0) {
		msg_len += (size_t)n < sizeof(msg_log) - msg_len ? (size_t)n :
			   sizeof(msg_log) - msg_len - 1;
	}
#ifdef MS_FUZZ_STDIN
	fprintf(stderr, "modsign: %s%s\n", kind, line);
#endif
}

void
ms_cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("", fmt, ap);
	va_end(ap);
}

void
ms_cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say("warning: ", fmt, ap);
	va_end(ap);
}

/* The prompt's name printer: stdin is never a terminal here, so it is not reached. */
void
ms_cli_put_escaped(FILE *f, const char *s, size_t len)
{
	(void)f;
	(void)s;
	(void)len;
	fuzz_die("the terminal prompt was reached");
}

/*
 * Whether pin.c must accept @p, @len, and the PIN's length if so. For
 * a file at most MS_PIN_MAX + 2 bytes are read before a longer one is
 * refused.
 */
static bool
expected(const uint8_t *p, size_t len, bool is_file, size_t *out_len)
{
	if (is_file && len >= MS_PIN_MAX + 3) {
		return false;
	}
	if (len > 0 && p[len - 1] == '\n') {
		len--;
		if (len > 0 && p[len - 1] == '\r') {
			len--;
		}
	}
	if (len > MS_PIN_MAX || memchr(p, '\0', len) != NULL) {
		return false;
	}
	*out_len = len;
	return true;
}

/* One ms_cli_pin_get() on @p, @len as @mode says; checks the PIN read. */
static void
get_pin(unsigned mode, const uint8_t *p, size_t len)
{
	static const char *const forms[] = { "file:", "file://", "", "FILE:" };
	struct ms_pin pin;
	char source[128];
	char *text = NULL;
	const uint8_t *want = p;
	bool want_ok;
	size_t want_len = 0;
	ms_err err;

	/* URI attributes and environment variables end at a NUL. */
	text = malloc(len + 1);
	if (text == NULL) {
		fuzz_die("malloc");
	}
	memcpy(text, p, len);
	text[len] = '\0';
	unsetenv("KBUILD_SIGN_PIN");
	memset(&pin, 0x5a, sizeof(pin));
	msg_len = 0;
	msg_log[0] = '\0';
	if ((mode & (MODE_VALUE | MODE_ENV)) != 0) {
		want = (const uint8_t *)text;
		want_ok = expected(want, strlen(text), false, &want_len);
		if ((mode & MODE_VALUE) != 0) {
			err = ms_cli_pin_get(text, NULL, "token 'fuzz'", &pin);
		} else {
			setenv("KBUILD_SIGN_PIN", text, 1);
			err = ms_cli_pin_get(NULL, NULL, "token 'fuzz'", &pin);
			unsetenv("KBUILD_SIGN_PIN");
		}
	} else {
		snprintf(source, sizeof(source), "%s%s", forms[mode & MODE_FORM],
			 fuzz_memfd_path(p, len));
		want_ok = (mode & MODE_FORM) != 3 && expected(p, len, true, &want_len);
		err = ms_cli_pin_get(NULL, source, "token 'fuzz'", &pin);
	}
	if (want_ok != (err == MS_OK)) {
		fuzz_die(want_ok ? "a good PIN was refused" : "a bad PIN was accepted");
	}
	if (err == MS_OK &&
	    (!pin.is_set || pin.len != want_len || memcmp(pin.buf, want, want_len) != 0 ||
	     pin.buf[want_len] != '\0' || pin.source == NULL)) {
		fuzz_die("the PIN read differs from the input");
	}
	if (err != MS_OK && pin.is_set) {
		fuzz_die("PIN set after a failure");
	}
	ms_pin_clear(&pin);
	for (size_t i = 0; i < sizeof(pin.buf); i++) {
		if (pin.buf[i] != 0) {
			fuzz_die("ms_pin_clear left PIN bytes");
		}
	}
	if (pin.len != 0 || pin.is_set) {
		fuzz_die("ms_pin_clear left the PIN set");
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char first[sizeof(msg_log)];
	uint8_t *other = NULL;
	unsigned mode;

	if (size < 1) {
		return 0;
	}
	mode = data[0];
	data++;
	size--;
	get_pin(mode, data, size);
	memcpy(first, msg_log, msg_len + 1);
	/* The same shape, other bytes: 'A' for each, 'B' for an 'A'. */
	other = malloc(size + 1);
	if (other == NULL) {
		fuzz_die("malloc");
	}
	for (size_t i = 0; i < size; i++) {
		uint8_t b = data[i];

		other[i] = (b == 0 || b == '\n' || b == '\r') ? b : (b == 'A' ? 'B' : 'A');
	}
	get_pin(mode, other, size);
	if (strcmp(first, msg_log) != 0) {
		fuzz_die("a message depends on the PIN's value");
	}
	free(other);
	return 0;
}
