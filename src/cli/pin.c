// SPDX-License-Identifier: GPL-2.0-only
/*
 * PIN input: from a pin-source file, KBUILD_SIGN_PIN or the terminal, read
 * with read(2) into the one struct ms_pin so that no stdio buffer keeps a
 * copy. The value and its length never appear in a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "msg.h"
#include "pin.h"

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

/* How long a pipe that has a writer may take to deliver the PIN. */
#define PIN_PIPE_WAIT_S 60

enum pin_from {
	PIN_FROM_FILE,		/* a regular file: read to the end */
	PIN_FROM_PIPE,		/* a FIFO or pipe, opened O_NONBLOCK: a writer, within PIN_PIPE_WAIT_S */
	PIN_FROM_TERMINAL,	/* the prompt: one line, ended by Enter */
};

static long long
now_ms(void)
{
	return (long long)(ms_clock_ns() / 1000000u);
}

/* Waits until @fd (a pipe with a writer) is readable, at most until @deadline_ms. */
static ms_err
pipe_wait(int fd, const char *name, long long deadline_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN, .revents = 0 };
	long long left = deadline_ms - now_ms();
	int n;

	if (left <= 0) {
		ms_cli_error("pin-source %s: no PIN came through the pipe within %d s", name,
			     PIN_PIPE_WAIT_S);
		return MS_E_PIN;
	}
	n = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
	if (n < 0 && errno != EINTR) {
		ms_cli_error("pin-source %s: poll: %s", name, strerror(errno));
		return MS_E_IO;
	}
	return MS_OK;	/* readable, hung up, interrupted or timed out: read() tells */
}

/*
 * Reads up to MS_PIN_MAX + 2 bytes from @fd, then trims. A pipe must have a
 * writer and deliver within PIN_PIPE_WAIT_S, to its end or a line whose
 * writer holds on; at the terminal only a line ended by Enter is a PIN: end
 * of input (Ctrl-D) aborts, nothing is tried. @source is what messages
 * and @pin call the source ("terminal"); @name the file, for messages.
 */
static ms_err
pin_read_fd(int fd, struct ms_pin *pin, const char *source, const char *name,
	    enum pin_from from)
{
	char buf[MS_PIN_MAX + 3];
	size_t len = 0;
	long long deadline_ms = now_ms() + PIN_PIPE_WAIT_S * 1000LL;
	bool first = true;
	ms_err err = MS_E_PIN;

	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, from == PIN_FROM_TERMINAL ? 1 : sizeof(buf) - len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && from == PIN_FROM_PIPE) {
			if (len > 0 && buf[len - 1] == '\n') {
				break;	/* a whole line, and a writer that keeps its end open */
			}
			first = false;	/* a writer is there: wait for it */
			err = pipe_wait(fd, name, deadline_ms);
			if (err != MS_OK) {
				goto out;
			}
			err = MS_E_PIN;
			continue;
		}
		if (n < 0) {
			ms_cli_error("reading the PIN from %s: %s", name, strerror(errno));
			err = MS_E_IO;
			goto out;
		}
		if (n == 0 && from == PIN_FROM_PIPE && first) {
			/* O_NONBLOCK: a FIFO nobody has open for writing reads as empty at once. */
			ms_cli_error("pin-source %s: a FIFO or pipe with no writer: nothing to read "
				     "the PIN from", name);
			goto out;
		}
		if (n == 0 && from == PIN_FROM_TERMINAL) {
			ms_cli_error("end of input at the PIN prompt: no PIN given, no login tried");
			goto out;
		}
		if (n == 0) {
			break;
		}
		first = false;
		len += (size_t)n;
		if (from == PIN_FROM_TERMINAL && buf[len - 1] == '\n') {
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
	struct stat st;
	enum pin_from from = PIN_FROM_FILE;
	int fd = -1;
	ms_err err = MS_E_PIN;

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
	/*
	 * O_NONBLOCK: opening a FIFO would otherwise wait, silently and for
	 * ever, for a writer that may never come.
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		ms_cli_error("pin-source %s: %s", path, strerror(errno));
		return MS_E_IO;
	}
	if (fstat(fd, &st) != 0) {
		ms_cli_error("pin-source %s: fstat: %s", path, strerror(errno));
		err = MS_E_IO;
		goto out;
	}
	if (S_ISFIFO(st.st_mode)) {
		from = PIN_FROM_PIPE;
	} else if (!S_ISREG(st.st_mode)) {
		ms_cli_error("pin-source %s: is %s; give a regular file or a pipe", path,
			     ms_file_kind(st.st_mode));
		goto out;
	}
	err = pin_read_fd(fd, pin, "pin-source file", path, from);
out:
	close(fd);
	return err;
}

/* The terminal as it was before the prompt turned its echo off, and as the prompt set it. */
static struct termios tty_saved, tty_prompt;
static volatile sig_atomic_t tty_quiet;
/* The prompt, escaped, for the SIGCONT handler to show again. */
static char prompt_text[600];
static size_t prompt_len;

/* Ctrl-C (or a kill) at the prompt: the terminal gets its echo back, then we die of it. */
static void
on_prompt_signal(int sig)
{
	int saved_errno = errno;
	sigset_t set;

	if (tty_quiet) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &tty_saved);
	}
	/*
	 * Die of it, or stop (Ctrl-Z): the default action, now. @sig is
	 * blocked while its handler runs, so unblock it first, or it would
	 * only be delivered on return, to whatever handler is set then.
	 */
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	/* Continued after a stop: the prompt's handler again; SIGCONT turned the echo off. */
	signal(sig, on_prompt_signal);
	errno = saved_errno;
}

/*
 * Continued after a stop (Ctrl-Z then fg, or SIGSTOP): the shell gave the
 * terminal its echo back when the job stopped. Turn it off again before
 * another key is read, and show the prompt again, as readpassphrase(3) does.
 */
static void
on_prompt_cont(int sig)
{
	int saved_errno = errno;

	(void)sig;
	if (tty_quiet) {
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_prompt);
		if (write(STDERR_FILENO, prompt_text, prompt_len) < 0) {
			/* Nothing to do: the echo is off, which is what matters. */
		}
	}
	errno = saved_errno;
}

static const int prompt_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT,
};
#define N_PROMPT_SIGNALS (sizeof(prompt_signals) / sizeof(prompt_signals[0]))

/* "Enter PIN for <what>: ", @what escaped (a token label or a file name). */
static void
prompt_make(const char *what)
{
	FILE *f = fmemopen(prompt_text, sizeof(prompt_text), "w");
	long end;

	prompt_len = 0;
	if (f == NULL) {
		return;
	}
	/* Too long a name is cut short: the prompt is only a hint. */
	setvbuf(f, NULL, _IONBF, 0);
	fputs("Enter PIN for ", f);
	ms_cli_put_escaped(f, what, strlen(what));
	fputs(": ", f);
	end = ftell(f);
	fclose(f);
	prompt_len = end > 0 && (size_t)end < sizeof(prompt_text) ? (size_t)end : 0;
}

static ms_err
pin_from_terminal(const char *what, struct ms_pin *pin)
{
	struct sigaction sa, old[N_PROMPT_SIGNALS];
	ms_err err;

	prompt_make(what);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_PROMPT_SIGNALS; i++) {
		sa.sa_handler = prompt_signals[i] == SIGCONT ? on_prompt_cont : on_prompt_signal;
		sigaction(prompt_signals[i], &sa, &old[i]);
	}
	if (tcgetattr(STDIN_FILENO, &tty_saved) == 0) {
		tty_prompt = tty_saved;
		tty_prompt.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
		tty_prompt.c_lflag |= ICANON;
		tty_quiet = tcsetattr(STDIN_FILENO, TCSAFLUSH, &tty_prompt) == 0;
	}
	fwrite(prompt_text, 1, prompt_len, stderr);
	fflush(stderr);
	err = pin_read_fd(STDIN_FILENO, pin, "terminal", "the terminal", PIN_FROM_TERMINAL);
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
