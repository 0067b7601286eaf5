// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the PIN prompt (src/cli_pin.c) on a real pseudo-terminal:
 * the echo is off while the PIN is typed, and back on afterwards, also when
 * Ctrl-C ends the prompt.
 */
#include <pty.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../../src/cli.h"
#include "test.h"

/* Child: the pty's slave as stdin and stderr, then the prompt; exits 0 on a PIN. */
static void
prompt_child(int slave)
{
	struct ms_pin pin;

	if (dup2(slave, STDIN_FILENO) < 0 || dup2(slave, STDERR_FILENO) < 0) {
		_exit(90);
	}
	unsetenv("KBUILD_SIGN_PIN");
	_exit(ms_cli_pin_get(NULL, NULL, "test", &pin) == MS_OK && pin.len == 4 ? 0 : 91);
}

static bool
echo_on(int fd)
{
	struct termios t;

	CHECK(tcgetattr(fd, &t) == 0);
	return (t.c_lflag & ECHO) != 0;
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
