/* SPDX-License-Identifier: GPL-2.0-only */
/* The names of a run's modules: duplicates dropped, hard links chained (names.c). */
#ifndef MS_APP_NAMES_H
#define MS_APP_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#include "../common/ms_common.h"
#include "list.h"

struct ms_app_sink;

/*
 * The names of a run's modules (names.c). A module is a directory
 * entry: names of one entry (a.ko, ./a.ko, its absolute path, -r and a
 * name) are one module. Hard links (other entries of one inode) are
 * separate modules, chained so that one thread signs them one after the
 * other. Indices are those of the list after ms_app_names_build().
 */
struct ms_name_set {
	size_t *next_link;	/* per module: the next name of its inode, SIZE_MAX none */
	bool *is_later_link;	/* per module: signed after an earlier name of its inode */
	unsigned *later_links;	/* per module: how many names of its inode follow it */
};

/*
 * ms_app_names_build() - stat each name of @list, drop each that names the
 * same directory entry as an earlier one (a note through @sink under
 * @verbose) and chain hard links. A name that cannot be stat'ed stays, for
 * the run to report. Says its own error. Return: MS_OK, MS_E_NOMEM.
 */
ms_err ms_app_names_build(struct ms_module_list *list, bool verbose, const struct ms_app_sink *sink,
			  struct ms_name_set *out) MS_MUST_CHECK;
/* ms_app_names_free() - free @set; again is harmless. */
void ms_app_names_free(struct ms_name_set *set);

#endif
