// SPDX-License-Identifier: GPL-2.0-only
/* modsign: sign Linux kernel modules with a PKCS#11 token or a PEM key. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "cli_inspect.h"

/* A single module's token call that never returns: nothing was written yet. */
static void
on_alarm(int sig)
{
	static const char msg[] = "modsign: the token did not answer within --token-timeout: "
				  "stopping; the module is untouched\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* stderr is gone: the exit status still says it */
	}
	_exit(MS_EXIT_FAIL);
}

/* The module list comes first: a bad list costs no token login. */
static int
bulk(const struct ms_opts *opts, struct ms_job *job)
{
	struct ms_module_list list;
	struct ms_dir_set dirs = { 0 };
	struct ms_stale_scan scan;
	int rc = MS_EXIT_FAIL;
	ms_err err;

	if (ms_cli_list_build(opts, &list) != MS_OK) {
		goto out;
	}
	if (list.n == 0) {
		ms_cli_error("no modules to sign");
		goto out;
	}
	if (ms_cli_dirs_of((const char *const *)list.path, list.n, &dirs) != MS_OK) {
		ms_cli_error("%s", ms_err_str(MS_E_NOMEM));
		goto out;
	}
	/* Killed runs' temp files go while the token starts: neither needs the other. */
	ms_cli_dirs_stale_start(&scan, &dirs);
	err = ms_cli_job_open(job, opts);
	ms_cli_dirs_stale_finish(&scan, opts->verbose);
	if (err != MS_OK) {
		ms_cli_error("nothing signed: %zu modules left untouched", list.n);
		ms_cli_job_close(job);
		goto out;
	}
	/* One fsync per directory, when its last module is done, not one per module. */
	job->write_mode = MS_WRITE_REPLACE_DIR_SYNC_LATER;
	rc = ms_cli_bulk_run(job, &list, &dirs);
	if (ms_cli_dirs_sync(&dirs) != MS_OK) {
		rc = MS_EXIT_FAIL;
	}
	ms_cli_job_close(job);
out:
	ms_cli_dirs_free(&dirs);
	ms_cli_list_free(&list);
	return rc;
}

int
main(int argc, char **argv)
{
	struct rlimit no_core = { 0, 0 };
	struct ms_opts opts;
	struct ms_job job;
	mode_t mask;
	ms_err err;
	int rc;

	/* A core dump would carry the PIN and any key file we read. */
	setrlimit(RLIMIT_CORE, &no_core);
	/* A file size limit should fail the write (EFBIG), not kill the run. */
	signal(SIGXFSZ, SIG_IGN);
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
	rc = ms_cli_parse(argc, argv, &opts);
	if (rc != MS_EXIT_OK) {
		return rc < 0 ? MS_EXIT_OK : rc;
	}
	mask = umask(0);
	umask(mask);
	opts.p7s_mode = 0666u & ~(unsigned)mask;

	if (opts.raw_sig) {
		err = ms_cli_raw_sig(&opts);
		return err == MS_OK ? MS_EXIT_OK : MS_EXIT_FAIL;
	}
	/* Keep the PIN out of swap while a token may still need it. */
	mlock(&job.pin, sizeof(job.pin));
	if (opts.bulk) {
		rc = bulk(&opts, &job);
		munlock(&job.pin, sizeof(job.pin));
		return rc;
	}
	err = ms_cli_job_open(&job, &opts);
	if (err == MS_OK) {
		const char *targets[2] = { opts.module, opts.dest };
		struct ms_dir_set dirs = { 0 };

		if (ms_cli_dirs_of(targets, 2, &dirs) == MS_OK) {
			ms_cli_dirs_clean_stale(&dirs, false);
		}
		ms_cli_dirs_free(&dirs);
		if (opts.token_timeout > 0) {
			signal(SIGALRM, on_alarm);
			alarm(opts.token_timeout);
		}
		err = ms_cli_sign_module(&job, opts.module, opts.dest);
		alarm(0);
	}
	ms_cli_job_close(&job);
	munlock(&job.pin, sizeof(job.pin));
	return err == MS_OK ? MS_EXIT_OK : MS_EXIT_FAIL;
}
