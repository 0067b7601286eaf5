/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The module-list options, one parser for every command that takes a list
 * of modules (signing, verify, info, strip): -r, --files-from, -0/--null
 * and --max-module-size (listopt.c).
 */
#ifndef MS_CLI_LISTOPT_H
#define MS_CLI_LISTOPT_H

#include <getopt.h>

#include "../common/ms_common.h"
#include "args.h"

/* getopt_long() codes of the module-list options without a short name. */
enum {
	MS_LISTOPT_FILES_FROM = 0x200,
	MS_LISTOPT_MAX_MODULE_SIZE,
};

/* Their short options, for a getopt_long() option string. */
#define MS_LISTOPT_SHORT "0r:"

/* Their long options, entries of a getopt_long() table. */
#define MS_LISTOPT_LONG \
	{ "files-from", required_argument, NULL, MS_LISTOPT_FILES_FROM }, \
	{ "max-module-size", required_argument, NULL, MS_LISTOPT_MAX_MODULE_SIZE }, \
	{ "null", no_argument, NULL, '0' }

/*
 * ms_cli_list_opt() - take the module-list option getopt_long() returned as
 * @opt, with its argument @arg, into @o (a -r or --files-from makes the run
 * a bulk run). Prints nothing: the command says what was wrong in its words.
 * Return: MS_OK; MS_E_NOTFOUND when @opt is no module-list option;
 * MS_E_NOSPACE for one -r or --files-from too many; MS_E_ARG for a
 * --max-module-size that is not a size. @o is unchanged on failure.
 */
ms_err ms_cli_list_opt(struct ms_opts *o, int opt, const char *arg) MS_MUST_CHECK;

#endif
