// SPDX-License-Identifier: GPL-2.0-only
/*
 * Modules that already end with a signature: refused (default), signed
 * around it (--append, as sign-file does), re-signed from the unsigned
 * bytes (--replace), or left alone when the signature already verifies
 * against the run's certificate (--skip-signed). Run as "sign-file"
 * without one of those options (args.c says why): left alone when it
 * verifies with the run's certificate and hash, else signed around it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../cms/pkcs7.h"
#include "../modfmt/strip.h"
#include "../pkcs11/p11.h"
#include "module.h"

/*
 * Whether the signature @mf ends with verifies, by the kernel's rules,
 * against one of @certs (and, when @want_hash is not 0, uses only that
 * digest): MS_OK yes, MS_E_MISMATCH no (@why says why), else an error.
 * The check is `modsign verify`'s (ms_app_sig_verify()).
 */
static ms_err
verifies_with(struct ms_modfile *mf, const struct ms_mod_layout *l,
	      const struct ms_cms_cert *const *certs, size_t n_certs, enum ms_hash_alg want_hash,
	      const char **why)
{
	struct ms_app_sig_check c;
	struct ms_pkcs7 msg;
	uint8_t *blob = malloc(l->sig_len);
	ms_err err = MS_E_NOMEM;

	if (blob == NULL) {
		goto out;
	}
	err = ms_mod_sig_read(mf, l, blob, l->sig_len);
	if (err != MS_OK) {
		goto out;
	}
	if (ms_pkcs7_parse(blob, l->sig_len, &msg, why) != MS_OK) {
		err = MS_E_MISMATCH;
		goto out;
	}
	err = ms_app_sig_verify(mf, l->payload_len, &msg, certs, n_certs, want_hash, false, &c);
	if (c.why != NULL && c.why != c.why_buf) {
		*why = c.why;	/* static: a rule, another hash, or the verifier's reason */
	}
	if (err != MS_OK && !c.at_hash && err != MS_E_IO && err != MS_E_NOMEM &&
	    err != MS_E_CHANGED) {
		err = MS_E_MISMATCH;
	}
out:
	free(blob);
	return err;
}

/* "<module>: <doing>: <why>", the why from the module file when it failed. */
static void
say_why(const struct ms_app_sink *sink, const struct ms_modfile *mf, const char *path,
	const char *doing, ms_err err)
{
	char why[512];

	if (err == MS_E_IO || err == MS_E_CHANGED) {
		ms_app_modfile_why(mf, err, why, sizeof(why));
	} else {
		snprintf(why, sizeof(why), "%s", ms_err_str(err));
	}
	ms_app_err(sink, "%s: %s: %s", path, doing, why);
}

ms_err
ms_app_signed_policy(struct ms_job *job, struct ms_modfile *mf, const char *path,
		     uint64_t *payload_len, bool *skip)
{
	enum ms_signed_policy policy = job->opts->signed_policy;
	struct ms_mod_layout l;
	const char *why = NULL;
	ms_err err;

	*skip = false;
	*payload_len = mf->len;
	err = ms_mod_layout_read(mf, &l, &why);
	if (err == MS_E_NOTFOUND) {
		return MS_OK;	/* not signed */
	}
	if (policy == MS_SIGNED_APPEND) {
		return MS_OK;	/* sign-file's way: the old signature becomes payload */
	}
	if (policy == MS_SIGNED_KBUILD) {
		if (err == MS_OK) {
			err = verifies_with(mf, &l, (const struct ms_cms_cert *const *)&job->cert,
					    1, job->hash, &why);
		}
		if (err == MS_OK) {
			*skip = true;	/* signed by this key with this hash: nothing to do */
			return MS_OK;
		}
		if (err != MS_E_MISMATCH && err != MS_E_MALFORMED) {
			say_why(job->sink, mf, path, "checking its signature", err);
			return err;
		}
		ms_app_warn(job->sink, "%s: already signed, but not with %s and %s (%s): signed "
			    "around the old signature, as sign-file does", path,
			    job->opts->hash_name, job->opts->x509, why != NULL ? why : "malformed");
		return MS_OK;
	}
	if (err == MS_E_MALFORMED) {
		ms_app_err(job->sink, "%s: ends with a module signature marker but a broken "
			   "trailer (%s); left as it is", path, why != NULL ? why : "malformed");
		return MS_E_MALFORMED;
	}
	if (err != MS_OK) {
		say_why(job->sink, mf, path, "reading its signature", err);
		return err;
	}
	if (policy == MS_SIGNED_REPLACE) {
		*payload_len = l.payload_len;
		return MS_OK;
	}
	if (policy == MS_SIGNED_SKIP) {
		/* Every certificate of <x509>: the same rule as verify -c with a bundle. */
		err = verifies_with(mf, &l, (const struct ms_cms_cert *const *)job->trust,
				    job->n_trust, 0, &why);
		if (err == MS_OK) {
			*skip = true;
			return MS_OK;
		}
		if (err == MS_E_MISMATCH) {
			char x509[MS_APP_ARG_SHOW];

			ms_p11_uri_redact(job->opts->x509, x509, sizeof(x509));
			ms_app_err(job->sink, "%s: already signed, but its signature does not "
				   "verify against %s (%s); --replace signs it anew", path, x509,
				   why != NULL ? why : "mismatch");
			return MS_E_MISMATCH;
		}
		say_why(job->sink, mf, path, "checking its signature", err);
		return err;
	}
	ms_app_err(job->sink, "%s: already ends with a module signature; not signed again "
		   "(--replace re-signs it, --skip-signed leaves it if it verifies, --append "
		   "signs around it as sign-file does)", path);
	return MS_E_SIGNED;
}
