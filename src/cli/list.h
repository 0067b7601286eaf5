/* SPDX-License-Identifier: GPL-2.0-only */
/* The modules of a run: command line, --files-from lists, -r directories (list.c). */
#ifndef MS_CLI_LIST_H
#define MS_CLI_LIST_H

#include <stddef.h>

#include "../common/ms_common.h"
#include "args.h"

/* A list of module paths, owned by the list (bulk mode). */
struct ms_module_list {
	char **path;
	size_t n;
	size_t cap;
};

/*
 * ms_cli_list_build() - the modules of a bulk run: those on the command
 * line, then each --files-from list, then every *.ko below each -r
 * directory (sorted, symlinks not followed). Prints its own errors.
 */
ms_err ms_cli_list_build(const struct ms_opts *o, struct ms_module_list *list) MS_MUST_CHECK;
void ms_cli_list_free(struct ms_module_list *list);

#endif
