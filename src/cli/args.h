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

/* What to do with a module that already ends with a signature. */
enum ms_signed_policy {
	MS_SIGNED_REFUSE = 0,	/* default: error, module untouched */
	MS_SIGNED_APPEND,	/* --append: sign-file's way, a signature around the old one */
	MS_SIGNED_REPLACE,	/* --replace: strip the old signature, then sign */
	MS_SIGNED_SKIP,		/* --skip-signed: leave it if it verifies against the cert */
	MS_SIGNED_KBUILD,	/* run as "sign-file", no policy option: leave it if it
				 * verifies with this cert and hash, else as --append */
};

struct ms_opts {
	bool raw_sig;		/* -s: append an existing detached PKCS#7 */
	bool save_p7s;		/* -p: also write <module>.p7s */
	bool p7s_only;		/* -d: write only <module>.p7s */
	bool use_skid;		/* -k: signer named by subjectKeyIdentifier */
	bool allow_final_try;	/* --pin-final-try: log in even on the token's last try */
	bool signed_attrs;	/* --signed-attrs: ML-DSA over signed attributes */
	bool signed_attrs_env;	/* MODSIGN_SIGNED_ATTRS=1: the same, for ML-DSA keys only */
	enum ms_signed_policy signed_policy;
	unsigned p7s_mode;	/* 0666 less the umask, as sign-file creates it */
	const char *raw_sig_path;
	const char *hash_name;
	const char *key;	/* file path or pkcs11: URI */
	const char *keys[MS_TOKENS_MAX - 1];	/* --key: more tokens holding <key>'s key */
	size_t n_keys;
	const char *x509;	/* file path or pkcs11: URI */
	const char *module;
	const char *dest;	/* NULL: sign in place */

	/* Bulk mode: -b, or any of -r and --files-from. */
	bool bulk;
	bool null_sep;		/* -0: --files-from lists are NUL-separated */
	bool quiet;		/* -q: no progress line, no summary on success */
	bool verbose;		/* -v: one line per module */
	unsigned jobs;		/* -j N; 0: what is fastest for the key source */
	unsigned token_timeout;	/* --token-timeout: seconds a signature may take; 0 none */
	uint64_t max_module_size;	/* --max-module-size: most a compressed module decodes to */
	char **modules;		/* bulk: modules named on the command line */
	size_t n_modules;
	const char *files_from[8];	/* --files-from FILE ("-": stdin) */
	size_t n_files_from;
	const char *dirs[8];	/* -r DIR */
	size_t n_dirs;
};

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
