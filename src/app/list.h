/* SPDX-License-Identifier: GPL-2.0-only */
/* The modules of a run: command line, --files-from lists, -r directories (list.c). */
#ifndef MS_APP_LIST_H
#define MS_APP_LIST_H

#include <stddef.h>

#include "../common/ms_common.h"
#include "opts.h"

struct ms_app_sink;

/* A list of module paths, owned by the list (bulk mode). */
struct ms_module_list {
	char **path;
	size_t n;
	size_t cap;
};

/*
 * ms_app_list_build() - the modules of a bulk run: those on the command
 * line, then each --files-from list, then every *.ko below each -r
 * directory (sorted, symlinks not followed). Says its own errors through
 * @sink (with @o->verbose, a note for each *.ko entry skipped).
 * Return: MS_OK; MS_E_MALFORMED, MS_E_ARG, MS_E_IO, MS_E_NOMEM.
 */
ms_err ms_app_list_build(const struct ms_opts *o, const struct ms_app_sink *sink,
			 struct ms_module_list *list) MS_MUST_CHECK;
/* ms_app_list_free() - free every name and the list; again is harmless. */
void ms_app_list_free(struct ms_module_list *list);

#endif
