// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line: sign-file's `[-dpk] hash key x509 module [dest]` and
 * `-s raw-sig hash x509 module [dest]`, plus modsign's long options.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../modfmt/modfmt.h"
#include "../pkcs11/p11.h"
#include "args.h"
#include "listopt.h"
#include "msg.h"

/* Codes above the module-list options' (listopt.h). */
enum {
	OPT_HELP = 0x300,
	OPT_VERSION,
	OPT_APPEND,
	OPT_FINAL_TRY,
	OPT_REPLACE,
	OPT_SKIP_SIGNED,
	OPT_TOKEN_TIMEOUT,
	OPT_KEY,
	OPT_SIGNED_ATTRS,
};

static const struct option long_opts[] = {
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "append", no_argument, NULL, OPT_APPEND },
	{ "pin-final-try", no_argument, NULL, OPT_FINAL_TRY },
	{ "replace", no_argument, NULL, OPT_REPLACE },
	{ "skip-signed", no_argument, NULL, OPT_SKIP_SIGNED },
	{ "token-timeout", required_argument, NULL, OPT_TOKEN_TIMEOUT },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "signed-attrs", no_argument, NULL, OPT_SIGNED_ATTRS },
	{ "jobs", required_argument, NULL, 'j' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	MS_LISTOPT_LONG,
	{ NULL, 0, NULL, 0 },
};

static const char usage_text[] =
	"Usage: modsign [-dpk] [options] <hash> <key> <x509> <module> [<dest>]\n"
	"       modsign -s <raw-sig> <hash> <x509> <module> [<dest>]\n"
	"       modsign -b [-dpk] [options] <hash> <key> <x509> [<module>...]\n"
	"               [-r <dir>]... [--files-from <file>]...\n"
	"       modsign agent [options] <key> -- <command> [<arg>...]   (see modsign agent --help)\n";

static const char help_text[] =
	"Sign a Linux kernel module as the kernel's scripts/sign-file does, with a\n"
	"key in a PEM file or on a PKCS#11 token.\n"
	"\n"
	"  <hash>     sha256, sha384, sha512, sha224, sha1, sha3-256, sha3-384 or sha3-512\n"
	"             (case-insensitive; OpenSSL's other names for these too)\n"
	"  <key>      a PEM or DER private key file, or a pkcs11: URI (RFC 7512)\n"
	"  <x509>     a DER or PEM certificate file, or a pkcs11: URI\n"
	"  <module>   the module to sign; signed in place unless <dest> is given\n"
	"\n"
	"  -p               also write the PKCS#7 signature to <module>.p7s\n"
	"  -d               write only <module>.p7s; leave the module alone\n"
	"  -k               name the signer by subjectKeyIdentifier (CMS version 3)\n"
	"  -s <raw-sig>     append an existing detached PKCS#7 (DER) instead of signing\n"
	"  --replace        re-sign a module that is already signed: the result\n"
	"                   equals signing the unsigned module (default: refuse)\n"
	"  --skip-signed    leave modules whose signature already verifies against\n"
	"                   <x509> alone (re-running an interrupted bulk job)\n"
	"  --append         sign a signed module around its signature, as sign-file\n"
	"                   does\n"
	"  --pin-final-try  log in even when the token says one wrong PIN locks it\n"
	"  --signed-attrs   ML-DSA keys: sign CMS signed attributes holding the\n"
	"                   module's SHA-512, as sign-file 7.2 does with OpenSSL 3.5\n"
	"                   and 3.6 (a kernel needs\n"
	"                   CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA);\n"
	"                   default: the signature covers the module itself;\n"
	"                   MODSIGN_SIGNED_ATTRS=1 does the same for ML-DSA keys\n"
	"  --max-module-size <n>  refuse a compressed module (.ko.xz, .ko.zst, .ko.gz)\n"
	"                   that decompresses to more than <n> bytes (K, M, G\n"
	"                   suffixes; default 256M)\n"
	"\n"
	"Bulk signing (one key load, one token login, modules signed in place):\n"
	"  -b               sign every <module> given\n"
	"  -r <dir>         also every *.ko, *.ko.xz, *.ko.zst, *.ko.gz below <dir>\n"
	"                   (links below it not followed)\n"
	"  --files-from <f> also every module listed in <f>, one a line (- for stdin)\n"
	"  -0, --null       --files-from lists are NUL-separated, as find prints them\n"
	"  -j, --jobs <n>   parallel signers (token sessions or key copies);\n"
	"                   default: what is fastest for the key source\n"
	"  -q, --quiet      no progress line and no summary unless something failed\n"
	"  -v, --verbose    one line per module signed\n"
	"  --token-timeout <s>  stop when one signature takes longer (default 120,\n"
	"                   0: wait for ever); with --key, drop that token instead\n"
	"  --key <uri>      one more token holding <key>'s key (a pkcs11: URI,\n"
	"                   repeatable): signatures go to whichever token is free\n"
	"  --help, --version\n"
	"\n"
	"PIN (or passphrase of an encrypted key file), first that applies:\n"
	"pin-value= in the URI, pin-source=file:... in the URI, KBUILD_SIGN_PIN,\n"
	"a prompt when stdin is a terminal.\n"
	"Exit status: 0 success, 1 failure, 2 usage error.\n";

static int
usage(void)
{
	fputs(usage_text, stderr);
	return MS_EXIT_USAGE;
}

ms_err
ms_cli_parse_uint(const char *s, unsigned long min, unsigned long max, unsigned *out)
{
	char *end = NULL;
	unsigned long v;

	if (*s < '0' || *s > '9') {
		return MS_E_ARG;	/* strtoul would take "-1" and " 1" */
	}
	v = strtoul(s, &end, 10);
	if (end == s || *end != '\0' || v < min || v > max) {
		return MS_E_ARG;
	}
	*out = (unsigned)v;
	return MS_OK;
}

/* -b hash key x509 [module...]: no dest, no -s. */
static int
parse_bulk(int argc, char **argv, struct ms_opts *o)
{
	if (o->raw_sig) {
		ms_cli_error("-s appends one given signature: it does not combine with bulk signing");
		return usage();
	}
	if (argc < 3) {
		return usage();
	}
	o->hash_name = argv[0];
	o->key = argv[1];
	o->x509 = argv[2];
	o->modules = argv + 3;
	o->n_modules = (size_t)argc - 3;
	return MS_EXIT_OK;
}

/* sign-file's own form: hash key x509 module [dest], or -s raw-sig hash x509 module [dest]. */
static int
parse_single(int argc, char **argv, struct ms_opts *o)
{
	if (argc < 4 || argc > 5) {
		return usage();
	}
	if (o->raw_sig) {
		if (o->p7s_only || o->use_skid || o->signed_policy == MS_SIGNED_SKIP ||
		    o->signed_attrs) {
			ms_cli_error("-s appends a finished signature: -d, -k, --skip-signed and "
				     "--signed-attrs do not apply");
			return usage();
		}
		o->raw_sig_path = argv[0];
		o->hash_name = argv[1];
	} else {
		o->hash_name = argv[0];
		o->key = argv[1];
	}
	o->x509 = argv[2];
	o->module = argv[3];
	/* As sign-file: a dest equal to the module means in place. */
	if (argc == 5 && strcmp(argv[3], argv[4]) != 0) {
		o->dest = argv[4];
	}
	return MS_EXIT_OK;
}

/*
 * Run under the name "sign-file": modsign installed as a kernel tree's
 * scripts/sign-file, called as kbuild (modules_install, modules_sign) and
 * DKMS call sign-file. A drop-in must not fail a build that worked with
 * sign-file, and `make modules_sign` after a signing `modules_install` hands
 * it modules that are signed already: without a policy option those are
 * left alone when their signature verifies with this certificate and hash
 * (nothing to do, and re-runs do not grow the module), and otherwise
 * signed around the old signature, as sign-file does. A dest, -p, -d or -s
 * always get sign-file's way. Typed as "modsign", the refusal stays.
 */
static bool
run_as_sign_file(const char *argv0)
{
	const char *slash = argv0 != NULL ? strrchr(argv0, '/') : NULL;
	const char *base = slash != NULL ? slash + 1 : argv0;

	return base != NULL && strcmp(base, "sign-file") == 0;
}

/* A module-list option (listopt.c), or a usage error in sign-file's words. */
static int
list_opt(struct ms_opts *o, int opt, const char *arg)
{
	ms_err err = ms_cli_list_opt(o, opt, arg);

	if (err == MS_OK) {
		return MS_EXIT_OK;
	}
	if (err == MS_E_NOSPACE) {
		ms_cli_error(opt == 'r' ? "too many -r directories" :
			     "too many --files-from lists");
	} else if (err == MS_E_ARG) {
		ms_cli_error("--max-module-size %s: want bytes from 1 to 2G-1 (K, M, G suffixes)",
			     arg);
	}
	return usage();
}

ms_err
ms_cli_key_add(struct ms_opts *o, const char *uri)
{
	if (o->n_keys == sizeof(o->keys) / sizeof(o->keys[0])) {
		ms_cli_error("--key: at most %zu more tokens", sizeof(o->keys) / sizeof(o->keys[0]));
		return MS_E_ARG;
	}
	if (!ms_p11_uri_is(uri)) {
		ms_cli_error("--key names a token: give a pkcs11: URI");
		return MS_E_ARG;
	}
	o->keys[o->n_keys++] = uri;
	return MS_OK;
}

ms_err
ms_cli_keys_check(const struct ms_opts *o)
{
	if (o->n_keys == 0 || (!o->raw_sig && ms_p11_uri_is(o->key))) {
		return MS_OK;
	}
	ms_cli_error(o->raw_sig ? "-s appends a given signature: --key does not apply" :
		     "--key adds tokens holding <key>'s key: <key> must be a pkcs11: URI too");
	return MS_E_ARG;
}

int
ms_cli_parse(int argc, char **argv, struct ms_opts *o)
{
	const char *argv0 = argc > 0 ? argv[0] : NULL;
	const char *env;
	int opt;
	int rc;

	memset(o, 0, sizeof(*o));
	o->token_timeout = 120;
	o->max_module_size = MS_ZMOD_LIMIT_DEFAULT;
	opterr = 1;
	for (;;) {
		opt = getopt_long(argc, argv, "sdpkbqvj:" MS_LISTOPT_SHORT, long_opts, NULL);
		if (opt == -1) {
			break;
		}
		switch (opt) {
		case 's':
			o->raw_sig = true;
			break;
		case 'p':
			o->save_p7s = true;
			break;
		case 'd':
			o->p7s_only = true;
			o->save_p7s = true;
			break;
		case 'k':
			o->use_skid = true;
			break;
		case 'b':
			o->bulk = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'j':
			if (ms_cli_parse_uint(optarg, 1, 256, &o->jobs) != MS_OK) {
				ms_cli_error("-j %s: want a number from 1 to 256", optarg);
				return usage();
			}
			break;
		case OPT_TOKEN_TIMEOUT:
			if (ms_cli_parse_uint(optarg, 0, 86400, &o->token_timeout) != MS_OK) {
				ms_cli_error("--token-timeout %s: want seconds from 0 to 86400", optarg);
				return usage();
			}
			break;
		case OPT_KEY:
			if (ms_cli_key_add(o, optarg) != MS_OK) {
				return usage();
			}
			break;
		case OPT_APPEND:
		case OPT_REPLACE:
		case OPT_SKIP_SIGNED:
			if (o->signed_policy != MS_SIGNED_REFUSE) {
				ms_cli_error("--append, --replace and --skip-signed exclude each other");
				return usage();
			}
			o->signed_policy = opt == OPT_APPEND ? MS_SIGNED_APPEND :
					   opt == OPT_REPLACE ? MS_SIGNED_REPLACE : MS_SIGNED_SKIP;
			break;
		case OPT_FINAL_TRY:
			o->allow_final_try = true;
			break;
		case OPT_SIGNED_ATTRS:
			o->signed_attrs = true;
			break;
		case OPT_HELP:
			fputs(usage_text, stdout);
			fputs("\n", stdout);
			fputs(help_text, stdout);
			return MS_EXIT_DONE;
		case OPT_VERSION:
			return ms_cli_version_print(stdout) == MS_EXIT_OK ? MS_EXIT_DONE : MS_EXIT_FAIL;
		default:
			/* A module-list option; else getopt_long() said what is wrong. */
			rc = list_opt(o, opt, optarg);
			if (rc != MS_EXIT_OK) {
				return rc;
			}
			break;
		}
	}
	argc -= optind;
	argv += optind;
	/* For callers that pass no options, kbuild's sign-file: --signed-attrs for ML-DSA keys. */
	env = getenv("MODSIGN_SIGNED_ATTRS");
	if (env != NULL && env[0] != '\0' && strcmp(env, "0") != 0 && strcmp(env, "1") != 0) {
		ms_cli_error("MODSIGN_SIGNED_ATTRS=%.20s: want 1 (ML-DSA keys sign signed "
			     "attributes) or 0", env);
		return usage();
	}
	o->signed_attrs_env = env != NULL && strcmp(env, "1") == 0;
	rc = o->bulk ? parse_bulk(argc, argv, o) : parse_single(argc, argv, o);
	if (rc == MS_EXIT_OK && ms_cli_keys_check(o) != MS_OK) {
		return usage();
	}
	if (rc == MS_EXIT_OK && o->signed_policy == MS_SIGNED_REFUSE && run_as_sign_file(argv0)) {
		o->signed_policy = o->raw_sig || o->dest != NULL || o->save_p7s ?
				   MS_SIGNED_APPEND : MS_SIGNED_KBUILD;
	}
	return rc;
}
