// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for PIN input (src/cli/pin.c). The prompt on a real
 * pseudo-terminal: the echo is off while the PIN is typed, and back on
 * afterwards, also when Ctrl-C ends the prompt; off again after a stop and
 * a continue (Ctrl-Z, fg); end of input aborts. pin-source: a FIFO without
 * a writer is refused at once, a pipe with one is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../../src/cli/pin.h"
#include "test.h"

#define CHILD_NO_PIN 92	/* MS_E_PIN and no PIN set: what end of input must give */

/*
 * Child: the pty's slave as stdin and stderr, then the prompt; exits 0 on a
 * 4-byte PIN, CHILD_NO_PIN when the prompt gave up without one. Its own
 * process group, so that SIGTSTP stops it (a group is not orphaned while
 * the parent, in the same session, is in another).
 */
static void
prompt_child(int slave)
{
	struct ms_pin pin;
	ms_err err;

	/* Never outlive the test (a hung test is killed by its alarm). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || setpgid(0, 0) != 0 ||
	    dup2(slave, STDIN_FILENO) < 0 ||
	    dup2(slave, STDERR_FILENO) < 0) {
		_exit(90);
	}
	unsetenv("KBUILD_SIGN_PIN");
	err = ms_cli_pin_get(NULL, NULL, "test", &pin);
	if (err == MS_OK && pin.len == 4) {
		_exit(0);
	}
	_exit(err == MS_E_PIN && !pin.is_set ? CHILD_NO_PIN : 91);
}

static bool
echo_on(int fd)
{
	struct termios t;

	CHECK(tcgetattr(fd, &t) == 0);
	return (t.c_lflag & ECHO) != 0;
}

static void
set_echo(int fd, bool on)
{
	struct termios t;

	CHECK(tcgetattr(fd, &t) == 0);
	if (on) {
		t.c_lflag |= ECHO;
	} else {
		t.c_lflag &= ~(tcflag_t)ECHO;
	}
	CHECK(tcsetattr(fd, TCSANOW, &t) == 0);
}

/* What the child wrote to the terminal so far (at most @cap - 1 bytes, within ~5 s). */
static size_t
read_master(int master, char *out, size_t cap, const char *until)
{
	size_t len = 0;

	out[0] = '\0';
	for (int i = 0; i < 500 && len + 1 < cap && strstr(out, until) == NULL; i++) {
		struct pollfd p = { .fd = master, .events = POLLIN, .revents = 0 };
		ssize_t n;

		if (poll(&p, 1, 10) <= 0) {
			continue;
		}
		n = read(master, out + len, cap - 1 - len);
		if (n <= 0) {
			break;
		}
		len += (size_t)n;
		out[len] = '\0';
	}
	return len;
}

/* Waits (at most ~10 s) until the child has turned the echo off. */
static void
wait_echo_off(int slave)
{
	for (int i = 0; i < 1000 && echo_on(slave); i++) {
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	CHECK(!echo_on(slave));
}

static pid_t
start_prompt(int *master, int *slave)
{
	pid_t pid;

	CHECK(openpty(master, slave, NULL, NULL, NULL) == 0);
	CHECK(echo_on(*slave));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(*master);
		prompt_child(*slave);
	}
	wait_echo_off(*slave);
	return pid;
}

MS_TEST(cli_pin_prompt_echo_restored)
{
	int master = -1, slave = -1, st = 0;
	pid_t pid = start_prompt(&master, &slave);

	CHECK(write(master, "1234\n", 5) == 5);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(echo_on(slave));
	close(master);
	close(slave);
}

MS_TEST(cli_pin_prompt_interrupted_echo_restored)
{
	static const int sigs[] = { SIGINT, SIGTERM };

	if (getenv("MODSIGN_TEST_VALGRIND") != NULL) {
		/* valgrind counts every death by a signal as a crash; the ASan run has this one. */
		MS_SKIP("the child dies of the signal, which valgrind reports as a crash");
	}
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		int master = -1, slave = -1, st = 0;
		pid_t pid = start_prompt(&master, &slave);

		CHECK(kill(pid, sigs[i]) == 0);
		CHECK(waitpid(pid, &st, 0) == pid);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i]);	/* still dies of it */
		CHECK(echo_on(slave));
		close(master);
		close(slave);
	}
}

/*
 * Ctrl-Z at the prompt, then fg: the shell gives the stopped job's terminal
 * its echo back; the prompt must turn it off again when continued, before
 * the PIN is typed (readpassphrase(3) does). Also with SIGSTOP, which the
 * process cannot see coming: only SIGCONT can put things right.
 */
MS_TEST(cli_pin_prompt_stop_continue_echo_off)
{
	static const int stops[] = { SIGTSTP, SIGSTOP };

	if (getenv("MODSIGN_TEST_VALGRIND") != NULL) {
		MS_SKIP("valgrind's own signal handling stops and continues differently");
	}
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		int master = -1, slave = -1, st = 0;
		char out[512];
		pid_t pid = start_prompt(&master, &slave);

		read_master(master, out, sizeof(out), "Enter PIN for test: ");
		CHECK(kill(pid, stops[i]) == 0);
		CHECK(waitpid(pid, &st, WUNTRACED) == pid);
		CHECK(WIFSTOPPED(st));
		if (stops[i] == SIGTSTP) {
			/* Given back before stopping, as readpassphrase(3) does. */
			CHECK(echo_on(slave));
		}
		set_echo(slave, true);	/* what the shell does when a job stops */
		CHECK(kill(pid, SIGCONT) == 0);
		wait_echo_off(slave);
		/* The prompt is shown again. */
		read_master(master, out, sizeof(out), "Enter PIN for test: ");
		CHECK(strstr(out, "Enter PIN for test: ") != NULL);
		CHECK(write(master, "1234\n", 5) == 5);
		CHECK(waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st));
		CHECK_EQ(WEXITSTATUS(st), 0);
		CHECK(echo_on(slave));
		close(master);
		close(slave);
	}
}

/* Ctrl-D at the prompt: no PIN (an empty one would cost a token retry), a message, echo back. */
MS_TEST(cli_pin_prompt_end_of_input_aborts)
{
	static const char *const typed[] = { "\004", "12\004\004" };

	for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
		int master = -1, slave = -1, st = 0;
		char out[512];
		pid_t pid = start_prompt(&master, &slave);

		CHECK(write(master, typed[i], strlen(typed[i])) == (ssize_t)strlen(typed[i]));
		read_master(master, out, sizeof(out), "no login tried");
		CHECK(strstr(out, "end of input at the PIN prompt") != NULL);
		CHECK(waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st));
		CHECK_EQ(WEXITSTATUS(st), CHILD_NO_PIN);
		CHECK(echo_on(slave));
		close(master);
		close(slave);
	}
}

/* A private directory for a FIFO; removed by the caller. */
static void
fifo_make(char *dir, size_t dir_cap, char *fifo, size_t fifo_cap)
{
	snprintf(dir, dir_cap, "%s", "/tmp/modsign-unit-fifo.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, fifo_cap, "%s/pin", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
}

/*
 * pin-source naming a FIFO nobody writes to: refused at once with a
 * message, where open(2) used to wait for ever (the alarm ends a hang).
 */
MS_TEST(cli_pin_source_fifo_without_writer)
{
	char dir[64], fifo[96], uri[128];
	struct ms_pin pin;

	fifo_make(dir, sizeof(dir), fifo, sizeof(fifo));
	snprintf(uri, sizeof(uri), "file:%s", fifo);
	alarm(20);
	CHECK_ERR(ms_cli_pin_get(NULL, uri, "test", &pin), MS_E_PIN);
	alarm(0);
	CHECK(!pin.is_set);
	unlink(fifo);
	rmdir(dir);
}

/* A pipe whose writer gave the PIN: read, also while the writer keeps its end open. */
MS_TEST(cli_pin_source_pipe_with_writer)
{
	int p[2];
	char uri[64];
	struct ms_pin pin;

	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "1234\n", 5) == 5);
	snprintf(uri, sizeof(uri), "file:/proc/self/fd/%d", p[0]);
	alarm(20);
	CHECK_ERR(ms_cli_pin_get(NULL, uri, "test", &pin), MS_OK);
	alarm(0);
	CHECK_EQ(pin.len, 4);
	CHECK(memcmp(pin.buf, "1234", 4) == 0);
	ms_pin_clear(&pin);
	/* Closed by the writer without a newline: read to the end. */
	CHECK(write(p[1], "56", 2) == 2);
	CHECK(close(p[1]) == 0);
	CHECK_ERR(ms_cli_pin_get(NULL, uri, "test", &pin), MS_OK);
	CHECK_EQ(pin.len, 2);
	ms_pin_clear(&pin);
	close(p[0]);
}

/* Things that cannot hold a PIN are named for what they are. */
MS_TEST(cli_pin_source_not_a_file)
{
	struct ms_pin pin;

	CHECK_ERR(ms_cli_pin_get(NULL, "file:/tmp", "test", &pin), MS_E_PIN);
	CHECK_ERR(ms_cli_pin_get(NULL, "file:/dev/null", "test", &pin), MS_E_PIN);
	CHECK(!pin.is_set);
}
