/* SPDX-License-Identifier: GPL-2.0-only */
/* The command line of `modsign` signing: exit statuses, options, their parser. */
#ifndef MS_CLI_ARGS_H
#define MS_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../app/app.h"
#include "../common/ms_common.h"

#define MS_EXIT_OK 0
#define MS_EXIT_FAIL 1
#define MS_EXIT_USAGE 2
/*
 * Not an exit status: a command-line parser printed what was asked
 * (--help, --version), and the command ends with MS_EXIT_OK.
 */
#define MS_EXIT_DONE (-1)

/*
 * ms_cli_parse() - sign-file's command line plus our long options.
 * Return: MS_EXIT_OK to go on, MS_EXIT_USAGE after a usage message, or
 * MS_EXIT_DONE after --help or --version was printed.
 */
int ms_cli_parse(int argc, char **argv, struct ms_opts *o);

/*
 * ms_cli_key_add() - one `--key <uri>` (bulk mode and the agent): @uri must
 * be a pkcs11: URI, at most MS_TOKENS_MAX - 1 of them. Return: MS_OK;
 * MS_E_ARG after a message.
 */
ms_err ms_cli_key_add(struct ms_opts *o, const char *uri) MS_MUST_CHECK;
/*
 * ms_cli_keys_check() - once parsed: --key wants a pkcs11: <key> and no -s.
 * Return: MS_OK; MS_E_ARG after a message.
 */
ms_err ms_cli_keys_check(const struct ms_opts *o) MS_MUST_CHECK;

/*
 * ms_cli_parse_uint() - a decimal number in @min..@max (no sign, no
 * blanks). Return: MS_OK with *@out; MS_E_ARG (*@out untouched).
 */
ms_err ms_cli_parse_uint(const char *s, unsigned long min, unsigned long max,
			 unsigned *out) MS_MUST_CHECK;

/*
 * ms_cli_version_print() (version.c) - `modsign --version` on @f: our
 * version, then one line per library ("  mbedTLS 2.28.3, static"), p11-kit
 * marked "(built against)" as it tells no version at run time. Return:
 * MS_EXIT_OK, or MS_EXIT_FAIL with a message when a library's version is
 * missing or too long.
 */
int ms_cli_version_print(FILE *f);

#endif
