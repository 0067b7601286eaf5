/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the inspection subcommands `modsign verify`, `modsign info` and
 * `modsign strip` share (inspect.c).
 */
#ifndef MS_CLI_INSPECT_H
#define MS_CLI_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cms/pkcs7.h"
#include "../modfmt/modfmt.h"
#include "../modfmt/strip.h"
#include "args.h"

#define MS_INSPECT_CERTS_MAX 16

/* Which options a subcommand takes. */
enum {
	MS_INSPECT_OPT_CERT = 1u,	/* -c, --cert FILE|URI */
	MS_INSPECT_OPT_JSON = 2u,	/* --json */
	MS_INSPECT_OPT_KERNEL_DEFAULT = 4u,	/* --kernel-default */
};

struct ms_inspect_args {
	struct ms_opts list;	/* only the module-list fields are used */
	const char *certs[MS_INSPECT_CERTS_MAX];
	size_t n_certs;
	bool json;
	bool kernel_default;	/* no CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA */
};

/* --help lines of the module-list options ms_cli_inspect_args() takes. */
#define MS_INSPECT_HELP_MODULES \
	"  -r <dir>          every *.ko, *.ko.xz, *.ko.zst, *.ko.gz below <dir>\n" \
	"                    (links below it not followed)\n" \
	"  --files-from <f>  every module listed in <f>, one a line (- for stdin)\n" \
	"  -0, --null        --files-from lists are NUL-separated\n" \
	"  --max-module-size <n>  refuse a compressed module that decompresses to\n" \
	"                    more than <n> bytes (K, M, G suffixes; default 256M)\n"

/*
 * ms_cli_inspect_args() - parse "[options] [--] [MODULE...]": -r DIR,
 * --files-from FILE, -0/--null, --max-module-size N, and the options
 * @allowed names; prints
 * @usage on a usage error and @help for -h/--help.
 * Return: MS_EXIT_OK to go on, MS_EXIT_USAGE, or MS_EXIT_DONE after --help.
 */
int ms_cli_inspect_args(int argc, char **argv, unsigned allowed, const char *usage,
			const char *help, struct ms_inspect_args *a);

/* A module opened for inspection; ms_cli_sigmod_clear() releases it. */
struct ms_sigmod {
	struct ms_modfile mf;
	bool is_open;
	char *real_path;		/* a named symlink's target, malloc'd; else NULL */
	struct ms_mod_layout layout;	/* valid when signed */
	uint8_t *blob;			/* the PKCS#7, layout.sig_len bytes; malloc'd */
	struct ms_pkcs7 msg;		/* spans into @blob; valid when parse_err == MS_OK */
	ms_err parse_err;
	const char *parse_why;		/* static reason when parse_err != MS_OK */
};

/*
 * ms_cli_sigmod_open() - open @path (a symlink's target when @path is one:
 * reading follows a link the user named; a compressed module decoded up to
 * @zlimit bytes), judge its trailer, read and parse its PKCS#7. A module whose PKCS#7 does not parse is still MS_OK here, with
 * @m->parse_err set.
 * @why:	@why_cap bytes of text for any other failure.
 * Return: MS_OK (signed); MS_E_NOTFOUND (not signed); another error.
 */
ms_err ms_cli_sigmod_open(const char *path, uint64_t zlimit, struct ms_sigmod *m, char *why,
			  size_t why_cap) MS_MUST_CHECK;
void ms_cli_sigmod_clear(struct ms_sigmod *m);

/* Bytes as hex into @out: upper case with ':' between bytes (modinfo), or plain lower case. */
void ms_cli_hex(struct ms_span s, bool modinfo_style, char *out, size_t cap);

/*
 * The signer as modinfo names it: the issuer's commonName for an
 * issuerAndSerialNumber sid; "" for a subjectKeyIdentifier.
 */
void ms_cli_signer_cn(const struct ms_pkcs7_signer *s, char *out, size_t cap);

/*
 * modinfo's sig_key: the serial without leading zero bytes, modinfo style;
 * the SKID for a version 3 sid.
 */
void ms_cli_sig_key(const struct ms_pkcs7_signer *s, char *out, size_t cap);

#endif
