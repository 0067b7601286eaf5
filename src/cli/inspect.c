// SPDX-License-Identifier: GPL-2.0-only
/*
 * What `modsign verify`, `info` and `strip` share: their options and
 * module lists, certificates from files or tokens, and a signed module
 * opened, its trailer judged and its PKCS#7 read and parsed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../modfmt/modfmt.h"
#include "../pkcs11/p11.h"
#include "args.h"
#include "inspect.h"
#include "listopt.h"
#include "msg.h"

/* Above the module-list options' codes (listopt.h). */
enum {
	OPT_JSON = 0x300,
	OPT_KERNEL_DEFAULT,
};

/* Every option of the three; a command drops those its @allowed lacks. */
static const struct option all_long_opts[] = {
	MS_LISTOPT_LONG,
	{ "cert", required_argument, NULL, 'c' },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "kernel-default", no_argument, NULL, OPT_KERNEL_DEFAULT },
	{ "help", no_argument, NULL, 'h' },
};

#define N_LONG_OPTS (sizeof(all_long_opts) / sizeof(all_long_opts[0]))

/* "modsign: <what><text>", then the usage lines. */
static int
usage_error(const char *usage, const char *what, const char *text)
{
	ms_cli_error("%s%s", what, text);
	fputs(usage, stderr);
	return MS_EXIT_USAGE;
}

/* Whether the option with getopt_long() code @val is one the command takes. */
static bool
is_allowed(int val, unsigned allowed)
{
	if (val == 'c') {
		return (allowed & MS_INSPECT_OPT_CERT) != 0;
	}
	if (val == OPT_JSON) {
		return (allowed & MS_INSPECT_OPT_JSON) != 0;
	}
	if (val == OPT_KERNEL_DEFAULT) {
		return (allowed & MS_INSPECT_OPT_KERNEL_DEFAULT) != 0;
	}
	return true;
}

/*
 * The option getopt_long() could not take, as the user typed it. optopt is
 * the letter of a short option, 0 for an unknown long option and the code
 * of a known one given a value it does not take: a long option is shown
 * whole (the argument just behind optind), a short one by its letter.
 */
static void
bad_option(char **argv, const char *shorts, char *out, size_t cap)
{
	const char *prev = optind > 0 ? argv[optind - 1] : "";

	if (optopt == 0 || optopt > 0xff || strchr(shorts, optopt) != NULL) {
		snprintf(out, cap, "%s", prev);
	} else {
		snprintf(out, cap, "-%c", optopt);
	}
}

/* One option the command takes: MS_EXIT_OK, or MS_EXIT_USAGE after a message. */
static int
one_option(int opt, const char *arg, const char *usage, struct ms_inspect_args *a)
{
	ms_err err;

	if (opt == 'c') {
		if (a->n_certs == MS_INSPECT_CERTS_MAX) {
			return usage_error(usage, "-c", ": too many certificates");
		}
		a->certs[a->n_certs++] = arg;
		return MS_EXIT_OK;
	}
	if (opt == OPT_JSON) {
		a->json = true;
		return MS_EXIT_OK;
	}
	if (opt == OPT_KERNEL_DEFAULT) {
		a->kernel_default = true;
		return MS_EXIT_OK;
	}
	err = ms_cli_list_opt(&a->list, opt, arg);
	if (err == MS_E_NOSPACE) {
		return usage_error(usage, opt == 'r' ? "-r" : "--files-from",
				   opt == 'r' ? ": too many directories" : ": too many lists");
	}
	if (err == MS_E_ARG) {
		return usage_error(usage, "--max-module-size ",
				   "wants bytes from 1 to 2G-1 (K, M, G suffixes)");
	}
	return err == MS_OK ? MS_EXIT_OK : usage_error(usage, "unknown option ", "?");
}

int
ms_cli_inspect_args(int argc, char **argv, unsigned allowed, const char *usage,
		    const char *help, struct ms_inspect_args *a)
{
	struct option long_opts[N_LONG_OPTS + 1];
	char shorts[16] = ":h" MS_LISTOPT_SHORT;
	char bad[128];
	size_t i, n = 0;
	int opt, rc;

	memset(a, 0, sizeof(*a));
	memset(long_opts, 0, sizeof(long_opts));
	a->list.max_module_size = MS_ZMOD_LIMIT_DEFAULT;
	for (i = 0; i < N_LONG_OPTS; i++) {
		if (is_allowed(all_long_opts[i].val, allowed)) {
			long_opts[n++] = all_long_opts[i];
		}
	}
	if ((allowed & MS_INSPECT_OPT_CERT) != 0) {
		strcat(shorts, "c:");
	}
	/* Module names may come before, between and after the options, as getopt permutes them. */
	opterr = 0;
	optind = 0;	/* 0, not 1: getopt_long() also forgets a half-read argument */
	for (;;) {
		opt = getopt_long(argc, argv, shorts, long_opts, NULL);
		if (opt == -1) {
			break;
		}
		if (opt == 'h') {
			fputs(usage, stdout);
			fputs(help, stdout);
			return MS_EXIT_DONE;
		}
		if (opt == ':') {
			bad_option(argv, shorts, bad, sizeof(bad));
			return usage_error(usage, bad, ": needs an argument");
		}
		if (opt == '?') {
			bad_option(argv, shorts, bad, sizeof(bad));
			return usage_error(usage, "unknown option ", bad);
		}
		rc = one_option(opt, optarg, usage, a);
		if (rc != MS_EXIT_OK) {
			return rc;
		}
	}
	a->list.modules = argv + optind;
	a->list.n_modules = (size_t)(argc - optind);
	if (a->list.n_modules == 0 && a->list.n_dirs == 0 && a->list.n_files_from == 0) {
		return usage_error(usage, "no modules given", "");
	}
	return MS_EXIT_OK;
}

ms_err
ms_cli_sigmod_open(const char *path, uint64_t zlimit, struct ms_sigmod *m, char *why,
		   size_t why_cap)
{
	const char *reason = NULL;
	ms_err err;

	memset(m, 0, sizeof(*m));
	ms_modfile_init(&m->mf);
	m->mf.zlimit = zlimit;
	m->parse_err = MS_E_INTERNAL;
	m->parse_why = "not parsed";
	err = ms_modfile_open(&m->mf, path);
	if (err == MS_E_ARG && m->mf.sys_errno == ELOOP) {
		/*
		 * Reading through a link the user named is harmless (only
		 * writing in place must not follow one): open its target.
		 */
		m->real_path = realpath(path, NULL);
		if (m->real_path != NULL) {
			ms_modfile_init(&m->mf);
			m->mf.zlimit = zlimit;
			err = ms_modfile_open(&m->mf, m->real_path);
		}
	}
	if (err != MS_OK) {
		ms_app_modfile_why(&m->mf, err, why, why_cap);
		return err;
	}
	m->is_open = true;
	err = ms_mod_layout_read(&m->mf, &m->layout, &reason);
	if (err == MS_E_NOTFOUND || err == MS_E_MALFORMED) {
		snprintf(why, why_cap, "%s", reason != NULL ? reason : ms_err_str(err));
		return err;
	}
	if (err != MS_OK) {
		ms_app_modfile_why(&m->mf, err, why, why_cap);
		return err;
	}
	if (m->layout.sig_len > MS_PKCS7_MAX) {
		m->parse_err = MS_E_UNSUPPORTED;
		m->parse_why = "PKCS#7 larger than 256 KiB";
		return MS_OK;
	}
	m->blob = malloc(m->layout.sig_len);
	if (m->blob == NULL) {
		snprintf(why, why_cap, "%s", ms_err_str(MS_E_NOMEM));
		return MS_E_NOMEM;
	}
	err = ms_mod_sig_read(&m->mf, &m->layout, m->blob, m->layout.sig_len);
	if (err != MS_OK) {
		ms_app_modfile_why(&m->mf, err, why, why_cap);
		return err;
	}
	m->parse_err = ms_pkcs7_parse(m->blob, m->layout.sig_len, &m->msg, &m->parse_why);
	return MS_OK;
}

void
ms_cli_sigmod_clear(struct ms_sigmod *m)
{
	if (m->is_open) {
		ms_modfile_clear(&m->mf);
	}
	m->is_open = false;
	free(m->blob);
	m->blob = NULL;
	free(m->real_path);
	m->real_path = NULL;
}

void
ms_cli_hex(struct ms_span s, bool modinfo_style, char *out, size_t cap)
{
	static const char lower[] = "0123456789abcdef";
	static const char upper[] = "0123456789ABCDEF";
	const char *digits = modinfo_style ? upper : lower;
	size_t i, n = 0;

	if (cap == 0) {
		return;
	}
	for (i = 0; i < s.len; i++) {
		size_t need = (modinfo_style && i > 0) ? 3 : 2;

		if (n + need + 1 > cap) {
			break;
		}
		if (modinfo_style && i > 0) {
			out[n++] = ':';
		}
		out[n++] = digits[s.p[i] >> 4];
		out[n++] = digits[s.p[i] & 0x0f];
	}
	out[n] = '\0';
}

void
ms_cli_signer_cn(const struct ms_pkcs7_signer *s, char *out, size_t cap)
{
	if (cap == 0) {
		return;
	}
	out[0] = '\0';
	if (s->sid_type == MS_PKCS7_SID_ISSUER_SERIAL &&
	    ms_cms_name_cn(s->issuer, out, cap) != MS_OK) {
		out[0] = '\0';
	}
}

/*
 * kmod reads the serial through a BIGNUM (BN_bn2bin), which drops leading
 * zero bytes; we print it the same way.
 */
void
ms_cli_sig_key(const struct ms_pkcs7_signer *s, char *out, size_t cap)
{
	struct ms_span v = s->sid_type == MS_PKCS7_SID_SKID ? s->skid : s->serial;

	while (s->sid_type == MS_PKCS7_SID_ISSUER_SERIAL && v.len > 0 && v.p[0] == 0) {
		v.p++;
		v.len--;
	}
	ms_cli_hex(v, true, out, cap);
}
