// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the one parser of the module-list options
 * (src/cli/listopt.c) and the inspection commands' use of it
 * (ms_cli_inspect_args() in src/cli/inspect.c): -r and --files-from up to
 * their ceilings, a bad --max-module-size refused with nothing changed,
 * module names before, between and after options, "--" ending options and
 * an option a command does not take refused.
 */
#include <stdint.h>
#include <string.h>

#include "../../src/cli/args.h"
#include "../../src/cli/inspect.h"
#include "../../src/cli/listopt.h"
#include "../../src/modfmt/modfmt.h"
#include "test.h"

#define ARGS_MAX 16

/* A writable argv (getopt_long() permutes it) of @words, NULL-terminated; its length. */
static int
args(char store[ARGS_MAX][32], char *argv[ARGS_MAX + 1], const char *const *words)
{
	int n = 0;

	for (; words[n] != NULL; n++) {
		CHECK(n < ARGS_MAX && strlen(words[n]) < 32);
		strcpy(store[n], words[n]);
		argv[n] = store[n];
	}
	argv[n] = NULL;
	return n;
}

MS_TEST(cli_listopt_ceilings_and_values)
{
	struct ms_opts o;
	size_t i;

	memset(&o, 0, sizeof(o));
	for (i = 0; i < sizeof(o.dirs) / sizeof(o.dirs[0]); i++) {
		CHECK_ERR(ms_cli_list_opt(&o, 'r', "d"), MS_OK);
	}
	CHECK(o.bulk);
	CHECK_ERR(ms_cli_list_opt(&o, 'r', "one-too-many"), MS_E_NOSPACE);
	CHECK_EQ(o.n_dirs, sizeof(o.dirs) / sizeof(o.dirs[0]));
	for (i = 0; i < sizeof(o.files_from) / sizeof(o.files_from[0]); i++) {
		CHECK_ERR(ms_cli_list_opt(&o, MS_LISTOPT_FILES_FROM, "-"), MS_OK);
	}
	CHECK_ERR(ms_cli_list_opt(&o, MS_LISTOPT_FILES_FROM, "x"), MS_E_NOSPACE);
	CHECK_EQ(o.n_files_from, sizeof(o.files_from) / sizeof(o.files_from[0]));

	o.max_module_size = 7;
	CHECK_ERR(ms_cli_list_opt(&o, MS_LISTOPT_MAX_MODULE_SIZE, "12x"), MS_E_ARG);
	CHECK_EQ(o.max_module_size, (uint64_t)7);
	CHECK_ERR(ms_cli_list_opt(&o, MS_LISTOPT_MAX_MODULE_SIZE, "2K"), MS_OK);
	CHECK_EQ(o.max_module_size, (uint64_t)2048);

	CHECK(!o.null_sep);
	CHECK_ERR(ms_cli_list_opt(&o, '0', NULL), MS_OK);
	CHECK(o.null_sep);
	CHECK_ERR(ms_cli_list_opt(&o, 'j', "4"), MS_E_NOTFOUND);
}

MS_TEST(cli_inspect_args_names_anywhere_and_double_dash)
{
	static const char *const words[] = { "verify", "a.ko", "-c", "c.pem", "b.ko",
		"--files-from=l", "-r", "dir", "-0", "--max-module-size", "1M", "--", "-c",
		NULL };
	char store[ARGS_MAX][32];
	char *argv[ARGS_MAX + 1];
	int argc = args(store, argv, words);
	struct ms_inspect_args a;

	CHECK_EQ(ms_cli_inspect_args(argc, argv, MS_INSPECT_OPT_CERT, "usage\n", "help\n", &a),
		 MS_EXIT_OK);
	CHECK_EQ(a.n_certs, (size_t)1);
	CHECK_STR_EQ(a.certs[0], "c.pem");
	CHECK_EQ(a.list.n_files_from, (size_t)1);
	CHECK_STR_EQ(a.list.files_from[0], "l");
	CHECK_EQ(a.list.n_dirs, (size_t)1);
	CHECK_STR_EQ(a.list.dirs[0], "dir");
	CHECK(a.list.null_sep);
	CHECK_EQ(a.list.max_module_size, (uint64_t)1 << 20);
	/* Names in their order; "-c" after "--" is a name. */
	CHECK_EQ(a.list.n_modules, (size_t)3);
	CHECK_STR_EQ(a.list.modules[0], "a.ko");
	CHECK_STR_EQ(a.list.modules[1], "b.ko");
	CHECK_STR_EQ(a.list.modules[2], "-c");
}

MS_TEST(cli_inspect_args_refuses_what_the_command_does_not_take)
{
	static const char *const json[] = { "strip", "--json", "m.ko", NULL };
	static const char *const cert[] = { "info", "-c", "c.pem", "m.ko", NULL };
	static const char *const missing[] = { "verify", "m.ko", "-r", NULL };
	static const char *const none[] = { "verify", "-0", NULL };
	static const char *const bad_size[] = { "info", "--max-module-size=3Q", "m.ko", NULL };
	static const char *const ok[] = { "info", "--json", "m.ko", NULL };
	char store[ARGS_MAX][32];
	char *argv[ARGS_MAX + 1];
	struct ms_inspect_args a;

	CHECK_EQ(ms_cli_inspect_args(args(store, argv, json), argv, 0, "u\n", "h\n", &a),
		 MS_EXIT_USAGE);
	CHECK_EQ(ms_cli_inspect_args(args(store, argv, cert), argv, MS_INSPECT_OPT_JSON, "u\n",
				     "h\n", &a), MS_EXIT_USAGE);
	CHECK_EQ(ms_cli_inspect_args(args(store, argv, missing), argv, MS_INSPECT_OPT_CERT, "u\n",
				     "h\n", &a), MS_EXIT_USAGE);
	CHECK_EQ(ms_cli_inspect_args(args(store, argv, none), argv, MS_INSPECT_OPT_CERT, "u\n",
				     "h\n", &a), MS_EXIT_USAGE);
	CHECK_EQ(ms_cli_inspect_args(args(store, argv, bad_size), argv, MS_INSPECT_OPT_JSON, "u\n",
				     "h\n", &a), MS_EXIT_USAGE);
	/* The same parser, state reset: a command that takes --json gets it. */
	CHECK_EQ(ms_cli_inspect_args(args(store, argv, ok), argv, MS_INSPECT_OPT_JSON, "u\n",
				     "h\n", &a), MS_EXIT_OK);
	CHECK(a.json);
	CHECK_EQ(a.list.n_modules, (size_t)1);
}
