// SPDX-License-Identifier: GPL-2.0-only
/*
 * PIN input: from a pin-source file, KBUILD_SIGN_PIN or the terminal, read
 * with read(2) into the one struct ms_pin so that no stdio buffer keeps a
 * copy. The value and its length never appear in a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "cli.h"

/* Takes @len bytes of @p, less one trailing newline (CR LF too). */
static ms_err
pin_set(struct ms_pin *pin, const char *p, size_t len, const char *source)
{
	if (len > 0 && p[len - 1] == '\n') {
		len--;
		if (len > 0 && p[len - 1] == '\r') {
			len--;
		}
	}
	if (len > MS_PIN_MAX) {
		ms_cli_error("PIN from %s is longer than %d bytes", source, MS_PIN_MAX);
		return MS_E_PIN;
	}
	if (memchr(p, '\0', len) != NULL) {
		ms_cli_error("PIN from %s contains a NUL byte", source);
		return MS_E_PIN;
	}
	memcpy(pin->buf, p, len);
	pin->buf[len] = '\0';
	pin->len = len;
	pin->source = source;
	pin->is_set = true;
	return MS_OK;
}

/* Reads up to MS_PIN_MAX + 2 bytes from @fd into @pin->buf, then trims. */
static ms_err
pin_read_fd(int fd, struct ms_pin *pin, const char *source, bool stop_at_newline)
{
	char buf[MS_PIN_MAX + 3];
	size_t len = 0;
	ms_err err = MS_E_PIN;

	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, stop_at_newline ? 1 : sizeof(buf) - len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ms_cli_error("reading the PIN from %s: %s", source, strerror(errno));
			err = MS_E_IO;
			goto out;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
		if (stop_at_newline && buf[len - 1] == '\n') {
			break;
		}
	}
	if (len == sizeof(buf)) {
		ms_cli_error("PIN from %s is longer than %d bytes", source, MS_PIN_MAX);
		goto out;
	}
	err = pin_set(pin, buf, len, source);
out:
	ms_wipe(buf, sizeof(buf));
	return err;
}

static ms_err
pin_from_file(const char *source_uri, struct ms_pin *pin)
{
	const char *path = source_uri;
	int fd;
	ms_err err;

	/* RFC 7512 pin-source is a URI; file: is the one scheme we read. */
	if (strncmp(path, "file:", 5) == 0) {
		path += 5;
		if (strncmp(path, "//", 2) == 0) {
			path += 2;
		}
	} else if (strchr(path, ':') != NULL && path[0] != '/' && path[0] != '.') {
		ms_cli_error("pin-source %s: only file: sources are supported", source_uri);
		return MS_E_PIN;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ms_cli_error("pin-source %s: %s", path, strerror(errno));
		return MS_E_IO;
	}
	err = pin_read_fd(fd, pin, "pin-source file", false);
	close(fd);
	return err;
}

/* The terminal as it was before the prompt turned its echo off. */
static struct termios tty_saved;
static volatile sig_atomic_t tty_quiet;

/* Ctrl-C (or a kill) at the prompt: the terminal gets its echo back, then we die of it. */
static void
on_prompt_signal(int sig)
{
	if (tty_quiet) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tty_saved);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int prompt_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define N_PROMPT_SIGNALS (sizeof(prompt_signals) / sizeof(prompt_signals[0]))

static ms_err
pin_from_terminal(const char *what, struct ms_pin *pin)
{
	struct sigaction sa, old[N_PROMPT_SIGNALS];
	struct termios quiet;
	ms_err err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prompt_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_PROMPT_SIGNALS; i++) {
		sigaction(prompt_signals[i], &sa, &old[i]);
	}
	if (tcgetattr(STDIN_FILENO, &tty_saved) == 0) {
		quiet = tty_saved;
		quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		quiet.c_lflag |= ICANON;
		tty_quiet = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
	}
	/* @what holds a token label or a file name: escaped like every name printed. */
	fputs("Enter PIN for ", stderr);
	ms_cli_put_escaped(stderr, what, strlen(what));
	fputs(": ", stderr);
	fflush(stderr);
	err = pin_read_fd(STDIN_FILENO, pin, "terminal", true);
	fputs("\n", stderr);
	if (tty_quiet) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tty_saved);
		tty_quiet = 0;
	}
	for (size_t i = 0; i < N_PROMPT_SIGNALS; i++) {
		sigaction(prompt_signals[i], &old[i], NULL);
	}
	return err;
}

ms_err
ms_cli_pin_get(const char *uri_pin_value, const char *uri_pin_source, const char *what,
	       struct ms_pin *pin)
{
	const char *env;

	ms_pin_clear(pin);
	if (uri_pin_value != NULL) {
		ms_cli_warn("the PIN is in the pkcs11: URI (pin-value=), visible in the process "
			    "list; prefer pin-source=file:... or KBUILD_SIGN_PIN");
		return pin_set(pin, uri_pin_value, strlen(uri_pin_value), "pin-value in the URI");
	}
	if (uri_pin_source != NULL) {
		return pin_from_file(uri_pin_source, pin);
	}
	env = getenv("KBUILD_SIGN_PIN");
	if (env != NULL) {
		return pin_set(pin, env, strlen(env), "KBUILD_SIGN_PIN");
	}
	if (isatty(STDIN_FILENO)) {
		return pin_from_terminal(what, pin);
	}
	ms_cli_error("%s needs a PIN: set KBUILD_SIGN_PIN, add pin-source=file:... to the "
		     "URI, or run on a terminal", what);
	return MS_E_PIN;
}
