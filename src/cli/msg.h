/* SPDX-License-Identifier: GPL-2.0-only */
/* Output: every line that may hold a name, escaped (msg.c). */
#ifndef MS_CLI_MSG_H
#define MS_CLI_MSG_H

#include <stddef.h>
#include <stdio.h>

/*
 * Output (msg.c). Every line that may hold a name (a path, a list
 * entry, a certificate or token field) goes through these, which escape
 * it: a backslash as \\, \n, \t, \r, any other control character (C0,
 * DEL, C1) and any byte that is not UTF-8 as \xHH. So a name cannot start
 * a line of its own or send a terminal escape sequence.
 *
 * ms_cli_error(), ms_cli_warn() - "modsign: " (+ "warning: ") and the text
 * on stderr. ms_cli_error_detail() adds ": " and @detail, the PKCS#11
 * layer's text whose further lines start with "\n" (candidates): each
 * printed as a line of its own, escaped.
 * ms_cli_line() - one line on @f (a result line: "OK <module> ...").
 */
void ms_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ms_cli_error_detail(const char *detail, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ms_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ms_cli_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * ms_cli_msg_hook_set() - around each line the printers above write to
 * stderr, call @hook->before(ctx) and @hook->after(ctx) on the printing
 * thread (the bulk run clears and redraws its progress line); NULL: none.
 * @hook must stay valid until it is replaced.
 */
struct ms_cli_msg_hook {
	void (*before)(void *ctx);
	void (*after)(void *ctx);
	void *ctx;
};
void ms_cli_msg_hook_set(const struct ms_cli_msg_hook *hook);
/* ms_cli_put_escaped() - @len bytes of @s, escaped as above, no newline. */
void ms_cli_put_escaped(FILE *f, const char *s, size_t len);
/*
 * ms_cli_put_json_str() - @s as a JSON string (RFC 8259, 7): quotes,
 * backslashes and control characters (C1 too) escaped, valid UTF-8 kept,
 * any other byte as U+FFFD.
 */
void ms_cli_put_json_str(FILE *f, const char *s);
/* ms_cli_utf8_len() - length of the valid UTF-8 sequence at @s (RFC 3629, 4) within @len; 0 if none. */
size_t ms_cli_utf8_len(const unsigned char *s, size_t len);

#endif
