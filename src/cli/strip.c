// SPDX-License-Identifier: GPL-2.0-only
/*
 * `modsign strip`: remove the appended signature of each module in place,
 * atomically, leaving the module byte for byte as it was before signing.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "inspect.h"
#include "msg.h"
#include "sink.h"

#define WHY_LEN 512

static const char usage_text[] =
	"Usage: modsign strip [-r <dir>]... [--files-from <file> [-0]] [<module>...]\n";

static const char help_text[] =
	"Remove the appended signature of each module, in place and atomically (a\n"
	"temp file beside it, fsync, rename), leaving the module as it was before\n"
	"it was signed. Only the outermost signature goes: a module signed twice\n"
	"(--append) keeps the inner one. A module that is not signed is left\n"
	"alone with a warning; one whose trailer breaks the kernel's rules is\n"
	"left alone with an error.\n"
	"\n"
	MS_INSPECT_HELP_MODULES
	"\n"
	"Exit status: 0 when every signed module was stripped, 1 otherwise, 2 usage\n"
	"error.\n";

/* MS_OK also for a module that is not signed (warned about). */
static ms_err
strip_one(const char *path, uint64_t zlimit)
{
	struct ms_modfile mf;
	const char *reason = NULL;
	char why[WHY_LEN];
	ms_err err;

	ms_modfile_init(&mf);
	mf.zlimit = zlimit;
	err = ms_modfile_open(&mf, path);
	if (err == MS_OK) {
		err = ms_mod_strip(&mf, NULL, &reason);
	}
	if (err == MS_E_NOTFOUND) {
		ms_cli_warn("%s: not signed; left as it is", path);
		err = MS_OK;
	} else if (err == MS_E_MALFORMED) {
		ms_cli_error("%s: %s; left as it is", path, reason != NULL ? reason : "malformed");
	} else if (err != MS_OK) {
		ms_app_modfile_why(&mf, err, why, sizeof(why));
		ms_cli_error("%s: %s; left as it is",
			     mf.err_path != NULL ? mf.err_path : path, why);
	}
	ms_modfile_clear(&mf);
	return err;
}

int
ms_cli_strip(int argc, char **argv)
{
	struct ms_inspect_args a;
	struct ms_module_list list = { NULL, 0, 0 };
	struct ms_dir_set dirs = { 0 };
	unsigned n_fail = 0;
	size_t i;
	int rc;

	rc = ms_cli_inspect_args(argc, argv, 0, usage_text, help_text, &a);
	if (rc != MS_EXIT_OK) {
		return rc == MS_EXIT_DONE ? MS_EXIT_OK : rc;
	}
	if (ms_app_list_build(&a.list, ms_cli_sink(), &list) != MS_OK) {
		return MS_EXIT_FAIL;
	}
	if (list.n == 0) {
		ms_cli_error("no modules to strip");
		ms_app_list_free(&list);
		return MS_EXIT_FAIL;
	}
	/* As a signing run does: the temp files killed runs left where we write go first. */
	if (ms_app_dirs_of((const char *const *)list.path, list.n, &dirs) != MS_OK) {
		ms_cli_error("%s", ms_err_str(MS_E_NOMEM));
		ms_app_list_free(&list);
		return MS_EXIT_FAIL;
	}
	ms_app_dirs_clean_stale(&dirs, false, ms_cli_sink());
	ms_app_dirs_free(&dirs);
	for (i = 0; i < list.n; i++) {
		if (strip_one(list.path[i], a.list.max_module_size) != MS_OK) {
			n_fail++;
		}
	}
	ms_app_list_free(&list);
	return n_fail == 0 ? MS_EXIT_OK : MS_EXIT_FAIL;
}
