// SPDX-License-Identifier: GPL-2.0-only
/* The module-list options, taken the same way by every command. */
#include <stddef.h>

#include "../modfmt/modfmt.h"
#include "args.h"
#include "listopt.h"

ms_err
ms_cli_list_opt(struct ms_opts *o, int opt, const char *arg)
{
	uint64_t size = 0;

	switch (opt) {
	case '0':
		o->null_sep = true;
		return MS_OK;
	case 'r':
		if (o->n_dirs == sizeof(o->dirs) / sizeof(o->dirs[0])) {
			return MS_E_NOSPACE;
		}
		o->dirs[o->n_dirs++] = arg;
		o->bulk = true;
		return MS_OK;
	case MS_LISTOPT_FILES_FROM:
		if (o->n_files_from == sizeof(o->files_from) / sizeof(o->files_from[0])) {
			return MS_E_NOSPACE;
		}
		o->files_from[o->n_files_from++] = arg;
		o->bulk = true;
		return MS_OK;
	case MS_LISTOPT_MAX_MODULE_SIZE:
		if (ms_mod_zlimit_parse(arg, &size) != MS_OK) {
			return MS_E_ARG;
		}
		o->max_module_size = size;
		return MS_OK;
	default:
		return MS_E_NOTFOUND;
	}
}
