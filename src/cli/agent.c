// SPDX-License-Identifier: GPL-2.0-only
/*
 * `modsign agent`: load a key once (one token login) and serve it over a
 * private socket (src/agentd/) to the signing commands of a build: around
 * one command, as a daemon for a shell, and `--stop` to end a daemon.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../agent/agent.h"
#include "../agentd/agentd.h"
#include "../app/app.h"
#include "../pkcs11/p11.h"
#include "../signer/signer.h"
#include "agent_proc.h"
#include "args.h"
#include "commands.h"
#include "exit.h"
#include "msg.h"
#include "sink.h"
#include "wake.h"

enum {
	OPT_HELP = 256,
	OPT_DAEMON,
	OPT_STOP,
	OPT_LOG,
	OPT_IDLE,
	OPT_LIFETIME,
	OPT_TOKEN_TIMEOUT,
	OPT_FINAL_TRY,
	OPT_KEY,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "daemon", no_argument, NULL, OPT_DAEMON },
	{ "stop", no_argument, NULL, OPT_STOP },
	{ "log", required_argument, NULL, OPT_LOG },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE },
	{ "lifetime", required_argument, NULL, OPT_LIFETIME },
	{ "token-timeout", required_argument, NULL, OPT_TOKEN_TIMEOUT },
	{ "pin-final-try", no_argument, NULL, OPT_FINAL_TRY },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "jobs", required_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
	"Usage: modsign agent [options] <key> -- <command> [<arg>...]\n"
	"       eval \"$(modsign agent --daemon [options] <key>)\"\n"
	"       eval \"$(modsign agent --stop)\"\n";

static const char help_text[] =
	"Load <key> (a key file or a pkcs11: URI) once, logging in to its token\n"
	"once, and sign for every modsign run that finds MODSIGN_AGENT_SOCK and\n"
	"names the same key: the command's, or the shell's with --daemon.\n"
	"\n"
	"  -j, --jobs <n>         lanes: token sessions or key copies (as with -b)\n"
	"  --log <file>           append a JSON line per signature and refusal (a\n"
	"                         regular file; a signature whose line cannot be\n"
	"                         written is withheld)\n"
	"  --idle-timeout <s>     stop after <s> seconds without a request\n"
	"  --lifetime <s>         stop <s> seconds after starting\n"
	"  --token-timeout <s>    stop when one signature takes longer (default 120;\n"
	"                         with --key: drop that token while others live)\n"
	"  --pin-final-try        log in even when one wrong PIN locks the token\n"
	"  --key <uri>            one more token holding <key>'s key (a pkcs11: URI,\n"
	"                         repeatable): the lanes span every token, and one\n"
	"                         that fails is dropped while the others sign on\n"
	"  -q, --quiet            no start and stop lines on stderr\n"
	"  --daemon               detach and print the shell assignments\n"
	"  --stop                 stop the agent of MODSIGN_AGENT_SOCK and wait for it\n"
	"\n"
	"Without --daemon the agent exits with the command's status.\n";

struct agent_args {
	struct ms_opts o;	/* key, --key, -j, --token-timeout, --pin-final-try */
	const char *log;
	unsigned idle_timeout;
	unsigned lifetime;
	bool is_daemon;
	bool is_stop;
	char **cmd;		/* NULL-terminated, as argv */
};

struct run {
	const struct agent_args *a;
	const struct ms_tokens *tokens;	/* --key: every token, <key>'s first */
	struct ms_agentd_audit *audit;
	const char *key_name;
	pid_t child;
	bool child_done;
	int child_status;	/* as waitpid reports it */
};

static int
usage(void)
{
	fputs(usage_text, stderr);
	return MS_EXIT_USAGE;
}

static int
parse(int argc, char **argv, struct agent_args *a)
{
	int opt;

	memset(a, 0, sizeof(*a));
	a->o.token_timeout = 120;
	a->o.bulk = true;	/* lanes as in bulk mode */
	optind = 1;
	for (;;) {
		/* "+": options end at the key; what follows "--" is the command's. */
		opt = getopt_long(argc, argv, "+j:q", long_opts, NULL);
		if (opt == -1) {
			break;
		}
		switch (opt) {
		case 'j':
			if (ms_cli_parse_uint(optarg, 1, 256, &a->o.jobs) != MS_OK) {
				ms_cli_error("agent: -j %s: want a number from 1 to 256", optarg);
				return usage();
			}
			break;
		case 'q':
			a->o.quiet = true;
			break;
		case OPT_DAEMON:
			a->is_daemon = true;
			break;
		case OPT_STOP:
			a->is_stop = true;
			break;
		case OPT_LOG:
			a->log = optarg;
			break;
		case OPT_IDLE:
		case OPT_LIFETIME:
		case OPT_TOKEN_TIMEOUT:
			if (ms_cli_parse_uint(optarg, 0, 31u * 86400u, opt == OPT_IDLE ? &a->idle_timeout :
					      opt == OPT_LIFETIME ? &a->lifetime :
					      &a->o.token_timeout) != MS_OK) {
				ms_cli_error("agent: %s: want seconds from 0 to 2678400", optarg);
				return usage();
			}
			break;
		case OPT_FINAL_TRY:
			a->o.allow_final_try = true;
			break;
		case OPT_KEY:
			if (ms_cli_key_add(&a->o, optarg) != MS_OK) {
				return usage();
			}
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			fputs("\n", stdout);
			fputs(help_text, stdout);
			return MS_EXIT_DONE;
		default:
			return usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (a->is_stop) {
		return argc == 0 && !a->is_daemon && a->o.n_keys == 0 ? MS_EXIT_OK : usage();
	}
	if (argc < 1) {
		return usage();
	}
	a->o.key = argv[0];
	if (ms_cli_keys_check(&a->o) != MS_OK) {
		return usage();
	}
	if (a->is_daemon) {
		return argc == 1 ? MS_EXIT_OK : usage();
	}
	if (argc < 3 || strcmp(argv[1], "--") != 0) {
		ms_cli_error("agent: give the command to run after --, or use --daemon");
		return usage();
	}
	a->cmd = argv + 2;
	return MS_EXIT_OK;
}

static bool
on_wake(void *ctx, char *why, size_t cap)
{
	struct run *r = ctx;
	int sig = ms_cli_agent_signal();
	int st = 0;

	if (sig != 0) {
		/* SIGINT reaches the command from the terminal; the others we pass on. */
		if (r->child > 0 && !r->child_done && (sig == SIGTERM || sig == SIGHUP)) {
			kill(r->child, sig);
		}
		snprintf(why, cap, "signal %d", sig);
		return true;
	}
	if (r->child > 0 && !r->child_done && waitpid(r->child, &st, WNOHANG) == r->child) {
		r->child_done = true;
		r->child_status = st;
		if (WIFEXITED(st)) {
			snprintf(why, cap, "the command exited with status %d", WEXITSTATUS(st));
		} else {
			snprintf(why, cap, "the command was killed by signal %d", WTERMSIG(st));
		}
		return true;
	}
	return false;
}

static void
say_line(void *ctx, enum ms_agentd_say kind, const char *line)
{
	const struct run *r = ctx;

	if (kind == MS_AGENTD_SAY_ERROR) {
		ms_cli_error("agent: %s", line);
	} else if (kind == MS_AGENTD_SAY_WARN) {
		ms_cli_warn("agent: %s", line);
	} else if (!r->a->o.quiet) {
		ms_cli_error("agent: %s", line);
	}
}

/* One of several tokens (--key) failed: logged, and the others sign on. */
static void
on_drop(void *ctx, unsigned k, const char *why)
{
	const struct run *r = ctx;
	char text[1500];

	snprintf(text, sizeof(text), "%s dropped: %s; the other tokens sign on",
		 ms_app_tokens_name(r->tokens, k), why);
	ms_cli_warn("agent: %s", text);
	if (ms_agentd_audit_event(r->audit, "drop", NULL, r->key_name, text) != MS_OK) {
		ms_cli_error("agent: --log: cannot write the audit line");
	}
}

/* --key: "; token 'a' (serial 1): 3 signatures, token 'b' ...: 2 signatures, dropped" */
static void
token_counts(const struct run *r, const struct ms_lanes *lanes, char *out, size_t cap)
{
	unsigned n = lanes != NULL ? ms_lanes_signers(lanes) : 0;
	size_t len = 0;

	out[0] = '\0';
	for (unsigned k = 0; n > 1 && k < n && k < r->tokens->n; k++) {
		struct ms_lanes_signer_stat st;
		int w;

		ms_lanes_signer_stat(lanes, k, &st);
		w = snprintf(out + len, cap - len, "%s%s: %zu signature%s%s", k == 0 ? "; " : ", ",
			     r->tokens->name[k], st.signatures, st.signatures == 1 ? "" : "s",
			     st.is_dropped ? ", dropped" : "");
		if (w < 0 || (size_t)w >= cap - len) {
			return;	/* cut short: the line stays whole */
		}
		len += (size_t)w;
	}
}

static int
exit_status(const struct run *r, ms_err served)
{
	int rc = MS_EXIT_OK;

	if (r->child > 0) {
		if (WIFEXITED(r->child_status)) {
			rc = WEXITSTATUS(r->child_status);
		} else if (WIFSIGNALED(r->child_status)) {
			rc = 128 + WTERMSIG(r->child_status);
		}
	}
	return served != MS_OK && rc == MS_EXIT_OK ? MS_EXIT_FAIL : rc;
}

static void
say_stop(const struct run *r, struct ms_agentd_audit *audit, const char *key_name,
	 const char *reason, const struct ms_agentd_stats *st, const struct ms_lanes *lanes)
{
	char text[MS_AGENTD_REASON_MAX + 256 + MS_TOKENS_MAX * (MS_TOKEN_NAME + 40)];
	char counts[MS_TOKENS_MAX * (MS_TOKEN_NAME + 40)];

	token_counts(r, lanes, counts, sizeof(counts));
	snprintf(text, sizeof(text), "stopped (%s): %zu signed, %zu failed, %zu refused, "
		 "%zu malformed%s", reason[0] != '\0' ? reason : "done", st->signed_n, st->failed,
		 st->refused, st->malformed, counts);
	if (ms_agentd_audit_event(audit, "stop", NULL, key_name, text) != MS_OK) {
		ms_cli_error("agent: --log: cannot write the audit line");
	}
	if (!r->a->o.quiet || st->failed > 0 || st->hung > 0) {
		ms_cli_error("agent: %s", text);
	}
}

/* Everything between the key's loading and its closing. */
static int
serve(const struct agent_args *a, struct ms_job *job, struct ms_agentd_audit *audit, int ready_fd)
{
	struct ms_agentd_sock sock = { .fd = -1 };
	const struct ms_agentd_sock_dirs dirs = {
		.runtime_dir = getenv("XDG_RUNTIME_DIR"), .tmp_dir = getenv("TMPDIR"),
	};
	struct ms_agentd_server_cfg cfg;
	struct ms_agentd_stats st = { .stop_fd = -1 };
	struct ms_lanes_cfg lc = {
		/* An agent lives long: a lost token is worth new sessions (may_recover()). */
		.recoveries_max = MS_RECOVERIES_MAX, .recovery = MS_LANES_RECOVER_LONG,
		.token_timeout = a->o.token_timeout,
	};
	struct ms_lanes *lanes = NULL;
	struct run r = { .a = a, .tokens = &job->tokens, .audit = audit, .child = -1 };
	const char *names[MS_TOKENS_MAX];
	char key_name[MS_AGENT_NAME_MAX + 1];
	char why[512 + MS_TOKENS_MAX * (MS_TOKEN_NAME + 2)] = "", reason[MS_AGENTD_REASON_MAX] = "";
	size_t len;
	int fds[2] = { -1, -1 };
	int sys_errno = 0;
	bool spawn_failed = false;
	ms_err err;

	err = ms_agent_key_name(a->o.key, key_name, sizeof(key_name));
	if (err != MS_OK) {
		char shown[MS_APP_ARG_SHOW];

		ms_p11_uri_redact(a->o.key, shown, sizeof(shown));
		ms_cli_error("agent: %s: cannot name the key: %s", shown, ms_err_str(err));
		goto out;
	}
	r.key_name = key_name;
	lc.on_drop = on_drop;
	lc.ctx = &r;
	/* --key: the other tokens' lanes behind the same pool, as in bulk mode. */
	err = ms_app_lanes_open(job->signer, &job->tokens, &lc, &lanes);
	if (err != MS_OK) {
		ms_cli_error("agent: %s", ms_err_str(err));
		goto out;
	}
	for (size_t k = 0; k < job->tokens.n; k++) {
		names[k] = job->tokens.name[k];
	}
	err = ms_agentd_sock_listen(&sock, &dirs, why, sizeof(why));
	if (err != MS_OK) {
		ms_cli_error("agent: %s", why);
		goto out;
	}
	len = (size_t)snprintf(why, sizeof(why), "socket %s, %u lanes", sock.path,
			       ms_lanes_count(lanes));
	/* --key: which tokens, with their lanes; the stop line counts their signatures. */
	for (size_t k = 0; k < job->tokens.n && len < sizeof(why); k++) {
		len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s: %u", k == 0 ?
					"; tokens: " : ", ", job->tokens.name[k],
					ms_signer_lanes(job->tokens.signer[k]));
	}
	/* An audited agent whose trail cannot even begin signs nothing: it does not start. */
	if (ms_agentd_audit_event(audit, "start", NULL, key_name, why) != MS_OK) {
		err = MS_E_IO;
		ms_cli_error("agent: --log %s: cannot write the start line: %s; not started",
			     a->log, strerror(ms_agentd_audit_errno(audit)));
		goto out;
	}
	if (ms_cli_agent_wake_pipe(fds) != MS_OK) {
		err = MS_E_IO;
		ms_cli_error("agent: pipe: %s", strerror(errno));
		goto out;
	}
	if (a->is_daemon) {
		if (ms_cli_agent_detach(ready_fd, sock.path) != MS_OK) {
			err = MS_E_IO;
			goto out;
		}
	} else {
		err = ms_cli_agent_spawn(a->cmd, sock.path, &r.child, &sys_errno);
		if (err != MS_OK) {
			ms_cli_error("agent: cannot run %s: %s", a->cmd[0], strerror(sys_errno));
			r.child = -1;
			spawn_failed = true;
			/* The start line is written: the trail says why it ends at once. */
			if (ms_agentd_audit_event(audit, "stop", NULL, key_name,
						 "stopped (cannot run the command)") != MS_OK) {
				ms_cli_error("agent: --log: cannot write the audit line");
			}
			goto out;
		}
	}
	if (!a->o.quiet) {
		ms_cli_error("agent: pid %ld, key %s, %u lane%s, socket %s", (long)getpid(), key_name,
			     ms_lanes_count(lanes), ms_lanes_count(lanes) == 1 ? "" : "s", sock.path);
		for (size_t k = 0; k < job->tokens.n; k++) {
			unsigned n = ms_signer_lanes(job->tokens.signer[k]);

			ms_cli_error("agent: %s: %u lane%s", job->tokens.name[k], n, n == 1 ? "" : "s");
		}
	}

	memset(&cfg, 0, sizeof(cfg));
	cfg.signer = job->signer;
	cfg.lanes = lanes;
	cfg.audit = audit;
	cfg.key_name = key_name;
	cfg.signer_names = job->tokens.n > 1 ? names : NULL;
	cfg.idle_timeout = a->idle_timeout;
	cfg.lifetime = a->lifetime;
	cfg.token_timeout = a->o.token_timeout;
	cfg.wake_fd = fds[0];
	cfg.on_wake = on_wake;
	cfg.say = say_line;
	cfg.ctx = &r;
	err = ms_agentd_server_run(&cfg, &sock, &st, reason, sizeof(reason));
	say_stop(&r, audit, key_name, reason, &st, lanes);
	if (err == MS_E_TOKEN || ms_lanes_stuck(lanes)) {
		/*
		 * A signature never came back (or a dropped token's never did):
		 * its thread is inside the token, so no C_Finalize. The PINs are
		 * wiped, the socket is gone; the command is waited for, and its
		 * status (or 1) is the agent's.
		 */
		ms_app_job_wipe(job);
		while (r.child > 0 && !r.child_done && waitpid(r.child, &r.child_status, 0) < 0 &&
		       errno == EINTR) {
		}
		r.child_done = true;
		ms_cli_exit_stuck(job, 0, exit_status(&r, err));
	}
	if (err == MS_OK && st.is_token_lost) {
		/*
		 * The token is gone (the stop line says which and why): a daemon
		 * exits 1; around a command, the command was left to fail at its
		 * next signature ("cannot connect") and its status is the agent's,
		 * or 1 if it succeeded.
		 */
		err = MS_E_TOKEN;
	}
out:
	ms_agentd_sock_close(&sock);
	ms_lanes_free(lanes);
	/* The key and its tokens are closed before --stop hears that it is done. */
	ms_signer_free(job->signer);
	job->signer = NULL;
	ms_app_tokens_close(&job->tokens);
	if (st.stop_fd >= 0) {
		close(st.stop_fd);
	}
	while (r.child > 0 && !r.child_done) {
		if (waitpid(r.child, &r.child_status, 0) == r.child || errno != EINTR) {
			r.child_done = true;
		}
	}
	ms_cli_wake_close(fds);
	if (spawn_failed) {
		return 127;	/* as a shell says "command not found" */
	}
	return exit_status(&r, err);
}

/* Load the key and serve; the caller made the process a daemon's child or not. */
static int
agent_run(const struct agent_args *a, int ready_fd)
{
	struct ms_agentd_audit *audit = NULL;
	struct ms_app_key_cfg cfg;
	struct ms_job job;
	char why[1200];
	bool is_agent = false;
	int rc = MS_EXIT_FAIL;

	memset(&job, 0, sizeof(job));
	job.opts = &a->o;
	/* Keep the PIN out of swap while a token may still need it. */
	(void)mlock(&job.pin, sizeof(job.pin));
	/* A bad --log costs no token login. */
	if (ms_agentd_audit_open(a->log, &audit, why, sizeof(why)) != MS_OK) {
		ms_cli_error("agent: %s", why);
		goto out;
	}
	/* A wrong PIN, or a token of another key, stops here, before anything listens. */
	ms_app_key_cfg_init(&a->o, NULL, &cfg);
	if (ms_app_key_open(&cfg, NULL, ms_cli_sink(), ms_cli_pins(), &job.pin, &job.signer,
			    &job.tokens, &is_agent) != MS_OK) {
		ms_cli_agent_wipe_env_pin();
		ms_cli_error("agent: not started");
		goto out;
	}
	ms_cli_agent_wipe_env_pin();
	rc = serve(a, &job, audit, ready_fd);
out:
	ms_app_job_close(&job);
	(void)munlock(&job.pin, sizeof(job.pin));
	ms_agentd_audit_free(audit);
	return rc;
}

static int
agent_daemon(const struct agent_args *a)
{
	int ready[2];
	pid_t pid;

	/* Forked before the key is loaded: a token library is never used across fork(). */
	if (pipe2(ready, O_CLOEXEC) != 0) {
		ms_cli_error("agent: pipe: %s", strerror(errno));
		return MS_EXIT_FAIL;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		ms_cli_error("agent: fork: %s", strerror(errno));
		return MS_EXIT_FAIL;
	}
	if (pid > 0) {
		close(ready[1]);
		return ms_cli_agent_daemon_parent(pid, ready[0]);
	}
	close(ready[0]);
	return agent_run(a, ready[1]);
}

int
ms_cli_agent(int argc, char **argv)
{
	struct agent_args a;
	int rc = parse(argc, argv, &a);

	if (rc != MS_EXIT_OK) {
		return rc == MS_EXIT_DONE ? MS_EXIT_OK : rc;
	}
	if (a.is_stop) {
		return ms_cli_agent_stop(a.o.token_timeout);
	}
	if (a.is_daemon) {
		return agent_daemon(&a);
	}
	return agent_run(&a, -1);
}
