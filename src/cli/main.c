// SPDX-License-Identifier: GPL-2.0-only
/* modsign: sign Linux kernel modules with a PKCS#11 token or a PEM key. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../agent/agent.h"
#include "../app/app.h"
#include "args.h"
#include "commands.h"
#include "exit.h"
#include "msg.h"
#include "progress.h"
#include "sink.h"
#include "stop.h"

/*
 * Where the run writes: each module in place, or the single module's
 * <dest> (and its .p7s beside the module). Their directories lose the temp
 * files of killed runs before signing, and are fsync'd as they are done.
 */
static ms_err
run_dirs(const struct ms_opts *o, const struct ms_module_list *list, struct ms_dir_set *dirs)
{
	const char *targets[2] = { NULL, NULL };

	if (o->bulk) {
		return ms_app_dirs_of((const char *const *)list->path, list->n, dirs);
	}
	targets[0] = o->dest != NULL ? o->dest : list->path[0];
	if (o->dest != NULL && (o->save_p7s || o->p7s_only)) {
		targets[1] = list->path[0];
	}
	return ms_app_dirs_of(targets, 2, dirs);
}

/*
 * Signing, of one module or of many: one path, src/app's. The module list
 * comes first: a bad list costs no token login. The lines go through
 * @out (with the progress line of a bulk run on a terminal); SIGINT,
 * SIGTERM and SIGHUP stop the run through ms_cli_stop_catch().
 */
static int
sign_modules(const struct ms_opts *opts, struct ms_job *job, struct ms_cli_progress *out)
{
	const struct ms_app_sink *sink = &out->sink;
	const struct ms_app_stop *stop = NULL;
	struct ms_module_list list = { NULL, 0, 0 };
	struct ms_name_set names = { NULL, NULL, NULL };
	struct ms_dir_set dirs = { 0 };
	struct ms_stale_scan scan;
	struct ms_run_end end = { false, 0, false, false };
	int rc = MS_EXIT_FAIL;
	char *one[1] = { NULL };
	ms_err err = MS_E_NOMEM;

	memset(job, 0, sizeof(*job));
	if (opts->bulk) {
		err = ms_app_list_build(opts, sink, &list);
	} else {
		struct ms_opts single = { 0 };

		single.modules = one;
		single.n_modules = 1;
		one[0] = strdup(opts->module);
		if (one[0] != NULL) {
			err = ms_app_list_build(&single, sink, &list);
		}
		free(one[0]);
	}
	if (err != MS_OK) {
		goto out;
	}
	if (list.n == 0) {
		ms_cli_error("no modules to sign");
		goto out;
	}
	if (ms_app_names_build(&list, opts->verbose, sink, &names) != MS_OK) {
		goto out;
	}
	if (run_dirs(opts, &list, &dirs) != MS_OK) {
		ms_cli_error("%s", ms_err_str(MS_E_NOMEM));
		goto out;
	}
	/* Killed runs' temp files go while the token starts: neither needs the other. */
	ms_app_dirs_stale_start(&scan, &dirs);
	/* Under `modsign agent` (MODSIGN_AGENT_SOCK set) the agent signs when it holds the key. */
	err = opts->raw_sig ? ms_app_job_open_raw(job, opts, sink) :
			      ms_app_job_open(job, opts, getenv(MS_AGENT_ENV_SOCK), sink,
					      ms_cli_pins());
	ms_app_dirs_stale_finish(&scan, opts->verbose, sink);
	if (err != MS_OK) {
		if (opts->bulk) {
			ms_cli_error("nothing signed: %zu module%s left untouched", list.n,
				     list.n == 1 ? "" : "s");
		}
		goto out;
	}
	stop = ms_cli_stop_catch();
	if (stop == NULL) {
		ms_cli_error("%s", ms_err_str(MS_E_NOMEM));
		goto out;
	}
	/* One fsync per directory, when its last module is done, not one per module. */
	job->write_mode = MS_WRITE_REPLACE_DIR_SYNC_LATER;
	ms_cli_progress_begin(out);
	ms_app_run(job, &list, &names, &dirs, stop, &end);
	ms_cli_progress_end(out);
	ms_cli_stop_release();
	rc = end.ok ? MS_EXIT_OK : MS_EXIT_FAIL;
	if (end.stuck) {
		/*
		 * A thread is stuck inside the token (or waits for another
		 * process's lock): no clean finalize is possible, and what the
		 * threads use stays. What was signed is made durable first,
		 * unless a second signal asked to stop at once.
		 */
		if (!end.at_once && ms_app_dirs_sync(&dirs, sink) != MS_OK) {
			rc = MS_EXIT_FAIL;
		}
		/* rc 0: every module signed, only a dropped token (--key) hung. */
		ms_cli_exit_stuck(job, end.signo, rc);
	}
	if (ms_app_dirs_sync(&dirs, sink) != MS_OK) {
		rc = MS_EXIT_FAIL;
	}
out:
	ms_app_job_close(job);
	ms_app_dirs_free(&dirs);
	ms_app_names_free(&names);
	ms_app_list_free(&list);
	if (end.signo != 0) {
		ms_cli_exit_by_signal(end.signo);
	}
	return rc;
}

int
main(int argc, char **argv)
{
	struct rlimit no_core = { 0, 0 };
	struct ms_opts opts;
	struct ms_job job;
	struct ms_cli_progress out;
	mode_t mask;
	int rc;

	/* A core dump would carry the PIN and any key file we read. */
	setrlimit(RLIMIT_CORE, &no_core);
	/* A file size limit should fail the write (EFBIG), not kill the run. */
	signal(SIGXFSZ, SIG_IGN);
	/* A reader that went away (| head) is EPIPE on the write: we stop printing, not working. */
	signal(SIGPIPE, SIG_IGN);
	/* Subcommands; sign-file's form starts with a hash name, never these words. */
	if (argc >= 2 && strcmp(argv[1], "verify") == 0) {
		return ms_cli_verify(argc - 1, argv + 1);
	}
	if (argc >= 2 && strcmp(argv[1], "info") == 0) {
		return ms_cli_info(argc - 1, argv + 1);
	}
	if (argc >= 2 && strcmp(argv[1], "strip") == 0) {
		return ms_cli_strip(argc - 1, argv + 1);
	}
	if (argc >= 2 && strcmp(argv[1], "agent") == 0) {
		return ms_cli_agent(argc - 1, argv + 1);
	}
	rc = ms_cli_parse(argc, argv, &opts);
	if (rc != MS_EXIT_OK) {
		return rc == MS_EXIT_DONE ? MS_EXIT_OK : rc;
	}
	mask = umask(0);
	umask(mask);
	opts.p7s_mode = 0666u & ~(unsigned)mask;

	/* A progress line only for a person watching a bulk run. */
	ms_cli_progress_init(&out, opts.bulk && !opts.quiet && isatty(STDERR_FILENO));
	/* Keep the PIN out of swap while a token may still need it. */
	mlock(&job.pin, sizeof(job.pin));
	rc = sign_modules(&opts, &job, &out);
	munlock(&job.pin, sizeof(job.pin));
	return rc;
}
