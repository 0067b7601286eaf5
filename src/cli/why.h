/* SPDX-License-Identifier: GPL-2.0-only */
/* The text of a file's failure, without its name (why.c). */
#ifndef MS_CLI_WHY_H
#define MS_CLI_WHY_H

#include <stddef.h>
#include <sys/types.h>

#include "../common/ms_common.h"
#include "../modfmt/modfmt.h"

/*
 * The text of a failure, without the file name: "is a directory", "open:
 * Permission denied", ... ms_cli_modfile_why() for a module file (@mf after
 * a failed ms_modfile_*() call; it tells the module from a <dest> or .p7s),
 * ms_cli_file_fail_why() for a small file (certificate, key, PIN file, .p7s),
 * ms_cli_file_kind() for a file type ("a FIFO (named pipe)").
 */
void ms_cli_modfile_why(const struct ms_modfile *mf, ms_err err, char *out, size_t cap);
void ms_cli_file_fail_why(const struct ms_file_fail *f, ms_err err, char *out, size_t cap);
const char *ms_cli_file_kind(mode_t type);

#endif
