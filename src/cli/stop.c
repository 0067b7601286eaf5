// SPDX-License-Identifier: GPL-2.0-only
/*
 * The signals that stop a signing run: the handler may only note the
 * signal and write to the self-pipe; the run's main thread (src/app/run.c)
 * does the rest.
 */
#include <signal.h>
#include <string.h>

#include "stop.h"
#include "wake.h"

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define N_STOP_SIGNALS (sizeof(stop_signals) / sizeof(stop_signals[0]))

static struct ms_app_stop stop = { .fd = -1 };
static int stop_pipe[2] = { -1, -1 };
static struct sigaction old[N_STOP_SIGNALS];

static void
on_signal(int sig)
{
	if (stop.signo == 0) {
		stop.signo = sig;
	}
	stop.n++;
	ms_cli_wake_signal();
}

const struct ms_app_stop *
ms_cli_stop_catch(void)
{
	struct sigaction sa;

	if (ms_app_wake_init(stop_pipe) != MS_OK) {
		return NULL;
	}
	stop.signo = 0;
	stop.n = 0;
	stop.fd = stop_pipe[0];
	ms_cli_wake_arm(stop_pipe[1]);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
		sigaddset(&sa.sa_mask, stop_signals[i]);	/* one handler at a time */
	}
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
		sigaction(stop_signals[i], &sa, &old[i]);
	}
	return &stop;
}

void
ms_cli_stop_release(void)
{
	for (size_t i = 0; i < N_STOP_SIGNALS; i++) {
		sigaction(stop_signals[i], &old[i], NULL);
	}
	ms_cli_wake_close(stop_pipe);
	stop.fd = -1;
}
