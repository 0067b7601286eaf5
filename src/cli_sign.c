// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signing one module: hash it on the host, have the key sign the prepared
 * bytes, encode the SignedData, then write <module>.p7s and the module.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cms/pkcs7.h"
#include "modfmt/modfmt.h"

#define RAW_SIG_MAX (64 * 1024)
#define CMS_MAX (16 * 1024)

/* "<file>: <why>" for a failed ms_modfile_*() call on @path. */
static void
say_modfile(const struct ms_modfile *mf, const char *path, ms_err err)
{
	char why[512];

	ms_cli_modfile_why(mf, err, why, sizeof(why));
	ms_cli_error("%s: %s", mf->err_path != NULL ? mf->err_path : path, why);
}

static ms_err
write_p7s(const char *module, const uint8_t *cms, size_t cms_len, unsigned mode)
{
	struct ms_file_fail fail = { 0 };
	char path[4200];
	ms_err err;

	/* foo.ko.p7s also for foo.ko.xz: kbuild signs foo.ko before compressing it. */
	if (ms_mod_zfmt_p7s_name(module, path, sizeof(path)) != MS_OK) {
		ms_cli_error("%s: name too long", module);
		return MS_E_ARG;
	}
	err = ms_file_write_atomic(path, cms, cms_len, (mode_t)mode, &fail);
	if (err == MS_E_ARG && fail.sys_errno == ELOOP) {
		ms_cli_error("%s: is a symbolic link; not written through: remove it", path);
	} else if (err != MS_OK) {
		char why[512];

		ms_cli_file_fail_why(&fail, err, why, sizeof(why));
		ms_cli_error("%s: %s%s", path, why, err == MS_E_ARG ? "; not replaced" : "");
	}
	return err;
}

/* Writes the .p7s (if asked) and then the module (unless -d). */
static ms_err
write_outputs(struct ms_modfile *mf, const struct ms_opts *o, enum ms_write_mode mode,
	      const char *module, const char *dest, uint64_t payload_len, const uint8_t *cms,
	      size_t cms_len)
{
	ms_err err;

	if (o->save_p7s) {
		err = write_p7s(module, cms, cms_len, o->p7s_mode);
		if (err != MS_OK) {
			return err;
		}
	}
	if (o->p7s_only) {
		return MS_OK;
	}
	err = ms_modfile_write_signed_prefix(mf, dest, payload_len, cms, cms_len, mode);
	if (err != MS_OK) {
		say_modfile(mf, dest != NULL ? dest : module, err);
		return err;
	}
	/* The signed module is a new file, as with sign-file: other links keep the old one. */
	if (dest == NULL && mf->st.st_nlink > 1) {
		ms_cli_warn("%s: had %ju other hard link(s); they still name the unsigned module",
			    module, (uintmax_t)(mf->st.st_nlink - 1));
	}
	return MS_OK;
}

ms_err
ms_cli_module_sign(struct ms_job *job, unsigned lane, struct ms_module_work *w)
{
	struct ms_signer *sg = job->signer;
	const struct ms_signer_req req = {
		.alg = job->hash, .digest = w->digest.d, .digest_len = w->digest.len, .label = w->path,
	};
	uint8_t raw[MS_SIG_MAX];
	uint8_t sig[MS_SIG_MAX + 16];
	size_t raw_len = 0, sig_len = 0;
	struct ms_cms_signer s;
	char why[1200];
	ms_err err;

	err = ms_signer_sign(sg, lane, &req, raw, sizeof(raw), &raw_len);
	if (err != MS_OK && ms_signer_can_recover(sg) &&
	    atomic_fetch_add(&job->recoveries, 1) < MS_RECOVERIES_MAX) {
		/* A lost session: re-open it (logging in again) and try once more. */
		ms_signer_describe(sg, lane, why, sizeof(why));
		if (ms_signer_recover(sg, lane) == MS_OK) {
			ms_cli_warn("%s: %s: session re-opened, signing again", w->path, why);
			err = ms_signer_sign(sg, lane, &req, raw, sizeof(raw), &raw_len);
		}
	}
	if (err != MS_OK) {
		ms_signer_describe(sg, lane, why, sizeof(why));
		ms_cli_error("%s: signing failed: %s", w->path, why);
		return err;
	}
	err = ms_cms_sig_encode(ms_signer_key_type(sg), raw, raw_len, sig, sizeof(sig), &sig_len);
	if (err != MS_OK) {
		ms_cli_error("%s: the key returned a malformed signature", w->path);
		return err;
	}
	s.hash = job->hash;
	s.key_type = ms_signer_key_type(sg);
	s.use_skid = job->opts->use_skid;
	s.sid.p = job->sid;
	s.sid.len = job->sid_len;
	s.sig.p = sig;
	s.sig.len = sig_len;
	err = ms_cms_signed_data_encode(&s, w->cms, CMS_MAX, &w->cms_len);
	if (err != MS_OK) {
		ms_cli_error("%s: cannot encode the signature: %s", w->path, ms_err_str(err));
	}
	return err;
}

ms_err
ms_cli_module_prepare(struct ms_job *job, const char *path, struct ms_module_work *w)
{
	ms_err err;

	memset(w, 0, sizeof(*w));
	w->path = path;
	w->mf = malloc(sizeof(*w->mf));
	if (w->mf != NULL) {
		ms_modfile_init(w->mf);
		w->mf->zlimit = job->opts->max_module_size;
		w->mf->zpool = job->zpool;
	}
	w->cms = malloc(CMS_MAX);
	if (w->mf == NULL || w->cms == NULL) {
		ms_cli_error("%s: %s", path, ms_err_str(MS_E_NOMEM));
		return MS_E_NOMEM;
	}
	err = ms_modfile_open(w->mf, path);
	if (err == MS_E_BUSY) {
		return err;	/* another name of a module in hand: the caller waits */
	}
	if (err != MS_OK) {
		say_modfile(w->mf, path, err);
		return err;
	}
	err = ms_cli_signed_policy(job, w->mf, path, &w->payload_len, &w->skipped);
	if (err != MS_OK || w->skipped) {
		return err;
	}
	err = ms_cli_payload_digest(w->mf, w->payload_len, &job->hash, 1, &w->digest, NULL);
	if (err != MS_OK) {
		say_modfile(w->mf, path, err);
	}
	return err;
}

ms_err
ms_cli_module_write(struct ms_job *job, struct ms_module_work *w, const char *dest)
{
	return write_outputs(w->mf, job->opts, job->write_mode, w->path, dest, w->payload_len,
			     w->cms, w->cms_len);
}

void
ms_cli_module_clear(struct ms_module_work *w)
{
	if (w->mf != NULL) {
		ms_modfile_clear(w->mf);
		free(w->mf);
	}
	free(w->cms);
	memset(w, 0, sizeof(*w));
}

ms_err
ms_cli_sign_module(struct ms_job *job, const char *module, const char *dest)
{
	struct ms_module_work w;
	ms_err err;

	err = ms_cli_module_prepare(job, module, &w);
	if (err == MS_OK && w.skipped) {
		ms_cli_module_clear(&w);
		return MS_OK;
	}
	if (err == MS_OK) {
		err = ms_cli_module_sign(job, 0, &w);
	}
	if (err == MS_OK) {
		err = ms_cli_module_write(job, &w, dest);
	}
	ms_cli_module_clear(&w);
	return err;
}

ms_err
ms_cli_raw_sig(const struct ms_opts *o)
{
	struct ms_file_fail fail = { 0 };
	struct ms_job job = { .opts = o };	/* no key, no certificate: policy only */
	struct ms_modfile mf;
	struct ms_pkcs7 msg;
	const char *rule = NULL;
	uint8_t *sig = NULL;
	size_t sig_len = 0;
	uint64_t payload_len = 0;
	bool skip = false;
	ms_err err = MS_E_INTERNAL;

	ms_modfile_init(&mf);
	mf.zlimit = o->max_module_size;
	err = ms_file_read_small(o->raw_sig_path, RAW_SIG_MAX, &sig, &sig_len, &fail);
	if (err != MS_OK) {
		char why[512];

		ms_cli_file_fail_why(&fail, err, why, sizeof(why));
		ms_cli_error("%s: %s", o->raw_sig_path, why);
		goto out;
	}
	/* The parser and the module rules of `verify`, so its reason too. */
	err = ms_pkcs7_parse_module(sig, sig_len, &msg, &rule);
	if (err != MS_OK) {
		ms_cli_error("%s: PKCS#7: %s; nothing appended", o->raw_sig_path, rule);
		goto out;
	}
	err = ms_modfile_open(&mf, o->module);
	if (err != MS_OK) {
		say_modfile(&mf, o->module, err);
		goto out;
	}
	err = ms_cli_signed_policy(&job, &mf, o->module, &payload_len, &skip);
	if (err != MS_OK) {
		goto out;
	}
	err = write_outputs(&mf, o, MS_WRITE_REPLACE, o->module, o->dest, payload_len, sig, sig_len);
out:
	ms_modfile_clear(&mf);
	free(sig);
	return err;
}
