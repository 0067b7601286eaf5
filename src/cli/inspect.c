// SPDX-License-Identifier: GPL-2.0-only
/*
 * What `modsign verify`, `info` and `strip` share: their options and
 * module lists, certificates from files or tokens, and a signed module
 * opened, its trailer judged and its PKCS#7 read and parsed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../modfmt/modfmt.h"
#include "../pkcs11/p11.h"
#include "args.h"
#include "inspect.h"
#include "msg.h"
#include "payload.h"
#include "why.h"

#define CERT_FILE_MAX (64 * 1024)

/*
 * Whether argv[*@i] is the option @shrt or @lng, as "--name=value",
 * "--name value", "-xvalue" or "-x value". When it is, *@value is its value,
 * or NULL with *@missing set when none follows (*@i then stays).
 */
static bool
opt_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
	  const char **value, bool *missing)
{
	const char *arg = argv[*i];
	size_t n = lng != NULL ? strlen(lng) : 0;

	*value = NULL;
	*missing = false;
	if (lng != NULL && strncmp(arg, lng, n) == 0 && arg[n] == '=') {
		*value = arg + n + 1;
		return true;
	}
	if ((lng != NULL && strcmp(arg, lng) == 0) || (shrt != NULL && strcmp(arg, shrt) == 0)) {
		if (*i + 1 >= argc) {
			*missing = true;
			return true;
		}
		*i += 1;
		*value = argv[*i];
		return true;
	}
	if (shrt != NULL && strncmp(arg, shrt, 2) == 0 && arg[2] != '\0') {
		*value = arg + 2;
		return true;
	}
	return false;
}

/* "modsign: <what><text>", then the usage lines. */
static int
usage_error(const char *usage, const char *what, const char *text)
{
	ms_cli_error("%s%s", what, text);
	fputs(usage, stderr);
	return MS_EXIT_USAGE;
}

/* One option at argv[*i]: MS_EXIT_OK, MS_EXIT_USAGE, or 1 for "not an option we know". */
static int
one_option(int argc, char **argv, int *i, unsigned allowed, const char *usage,
	   struct ms_inspect_args *a)
{
	const char *opt = argv[*i], *v = NULL;
	bool missing = false;

	if ((allowed & MS_INSPECT_OPT_CERT) != 0 &&
	    opt_value(argc, argv, i, "-c", "--cert", &v, &missing)) {
		if (missing) {
			return usage_error(usage, opt, ": needs an argument");
		}
		if (a->n_certs == MS_INSPECT_CERTS_MAX) {
			return usage_error(usage, "-c", ": too many certificates");
		}
		a->certs[a->n_certs++] = v;
		return MS_EXIT_OK;
	}
	if (opt_value(argc, argv, i, "-r", NULL, &v, &missing)) {
		if (missing) {
			return usage_error(usage, opt, ": needs an argument");
		}
		if (a->list.n_dirs == sizeof(a->list.dirs) / sizeof(a->list.dirs[0])) {
			return usage_error(usage, "-r", ": too many directories");
		}
		a->list.dirs[a->list.n_dirs++] = v;
		return MS_EXIT_OK;
	}
	if (opt_value(argc, argv, i, NULL, "--max-module-size", &v, &missing)) {
		if (missing) {
			return usage_error(usage, opt, ": needs an argument");
		}
		if (ms_mod_zlimit_parse(v, &a->list.max_module_size) != MS_OK) {
			return usage_error(usage, "--max-module-size ",
					   "wants bytes from 1 to 2G-1 (K, M, G suffixes)");
		}
		return MS_EXIT_OK;
	}
	if (opt_value(argc, argv, i, NULL, "--files-from", &v, &missing)) {
		if (missing) {
			return usage_error(usage, opt, ": needs an argument");
		}
		if (a->list.n_files_from ==
		    sizeof(a->list.files_from) / sizeof(a->list.files_from[0])) {
			return usage_error(usage, "--files-from", ": too many lists");
		}
		a->list.files_from[a->list.n_files_from++] = v;
		return MS_EXIT_OK;
	}
	if (strcmp(opt, "-0") == 0 || strcmp(opt, "--null") == 0) {
		a->list.null_sep = true;
		return MS_EXIT_OK;
	}
	if ((allowed & MS_INSPECT_OPT_JSON) != 0 && strcmp(opt, "--json") == 0) {
		a->json = true;
		return MS_EXIT_OK;
	}
	return 1;
}

int
ms_cli_inspect_args(int argc, char **argv, unsigned allowed, const char *usage,
		    const char *help, struct ms_inspect_args *a)
{
	int i, w = 1, rc;
	bool only_names = false;

	memset(a, 0, sizeof(*a));
	a->list.max_module_size = MS_ZMOD_LIMIT_DEFAULT;
	/*
	 * Module names are gathered at the front of argv, after argv[0]: each
	 * is moved to a slot already read (w <= i), so nothing is lost.
	 */
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (only_names || arg[0] != '-' || arg[1] == '\0') {
			argv[w++] = argv[i];
			continue;
		}
		if (strcmp(arg, "--") == 0) {
			only_names = true;
			continue;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
			fputs(usage, stdout);
			fputs(help, stdout);
			return MS_EXIT_DONE;
		}
		rc = one_option(argc, argv, &i, allowed, usage, a);
		if (rc == 1) {
			return usage_error(usage, "unknown option ", arg);
		}
		if (rc != MS_EXIT_OK) {
			return rc;
		}
	}
	a->list.modules = argv + 1;
	a->list.n_modules = (size_t)(w - 1);
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
		ms_cli_modfile_why(&m->mf, err, why, why_cap);
		return err;
	}
	m->is_open = true;
	err = ms_mod_layout_read(&m->mf, &m->layout, &reason);
	if (err == MS_E_NOTFOUND || err == MS_E_MALFORMED) {
		snprintf(why, why_cap, "%s", reason != NULL ? reason : ms_err_str(err));
		return err;
	}
	if (err != MS_OK) {
		ms_cli_modfile_why(&m->mf, err, why, why_cap);
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
		ms_cli_modfile_why(&m->mf, err, why, why_cap);
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
