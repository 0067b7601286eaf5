/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a signing run was asked to do: the options of sign-file's command
 * line and ours, parsed by the command line, read by the application.
 */
#ifndef MS_APP_OPTS_H
#define MS_APP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Tokens holding one key in a run: <key> and at most 15 --key. */
#define MS_TOKENS_MAX 16

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

#endif
