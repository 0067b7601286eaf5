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

#include "../modfmt/modfmt.h"
#include "module.h"

#define CMS_MAX (16 * 1024)

/* "<file>: <why>" for a failed ms_modfile_*() call on @path. */
static void
say_modfile(const struct ms_app_sink *sink, const struct ms_modfile *mf, const char *path,
	    ms_err err)
{
	char why[512];

	ms_app_modfile_why(mf, err, why, sizeof(why));
	ms_app_err(sink, "%s: %s", mf->err_path != NULL ? mf->err_path : path, why);
}

/* finit_module(2), `verify` and `strip` read at most INT_MAX bytes: a signed module must fit. */
static void
say_too_big(const struct ms_app_sink *sink, const char *path, uint64_t signed_len)
{
	if (signed_len != 0) {
		ms_app_err(sink, "%s: signed, it would be %ju bytes, more than the %ju bytes "
			   "finit_module(2) reads; not signed", path, (uintmax_t)signed_len,
			   (uintmax_t)MS_MOD_SIZE_MAX);
	} else {
		ms_app_err(sink, "%s: signed, it would be more than the %ju bytes "
			   "finit_module(2) reads; not signed", path, (uintmax_t)MS_MOD_SIZE_MAX);
	}
}

static ms_err
write_p7s(const struct ms_app_sink *sink, const char *module, const uint8_t *cms, size_t cms_len,
	  unsigned mode, enum ms_write_mode how, struct ms_tmp_set *tmps)
{
	struct ms_file_fail fail = { 0 };
	char path[4200];
	ms_err err;

	/* foo.ko.p7s also for foo.ko.xz: kbuild signs foo.ko before compressing it. */
	if (ms_mod_zfmt_p7s_name(module, path, sizeof(path)) != MS_OK) {
		ms_app_err(sink, "%s: name too long", module);
		return MS_E_ARG;
	}
	/* Its directory is the module's: the run fsyncs it once (run_dirs()). */
	err = ms_file_write_atomic(path, cms, cms_len, (mode_t)mode, how, tmps, &fail);
	if (err == MS_E_ARG && fail.sys_errno == ELOOP) {
		ms_app_err(sink, "%s: is a symbolic link; not written through: remove it", path);
	} else if (err != MS_OK) {
		char why[512];

		ms_file_fail_why(&fail, err, why, sizeof(why));
		ms_app_err(sink, "%s: %s%s", path, why, err == MS_E_ARG ? "; not replaced" : "");
	}
	return err;
}

ms_err
ms_app_module_sign(struct ms_job *job, struct ms_lanes *pool, unsigned lane,
		   struct ms_module_work *w)
{
	struct ms_signer *sg = job->signer;
	const struct ms_span data = { w->data, (size_t)w->payload_len };
	const struct ms_signer_req req = {
		.form = job->form, .alg = job->hash, .label = w->path,
		.digest = job->form == MS_SIG_MLDSA_DATA ? NULL : w->digest.d,
		.digest_len = job->form == MS_SIG_MLDSA_DATA ? 0 : w->digest.len,
		.data = &data, .n_data = job->form == MS_SIG_MLDSA_DATA ? 1 : 0,
	};
	struct ms_lanes_result res;
	uint8_t raw[MS_SIG_MAX];
	size_t raw_len = 0;
	struct ms_signer_cms c;
	ms_err err;

	if (job->raw_cms != NULL) {
		/* -s: the signature was made elsewhere; prepare sized the buffer. */
		memcpy(w->cms, job->raw_cms, job->raw_cms_len);
		w->cms_len = job->raw_cms_len;
		return MS_OK;
	}
	err = ms_lanes_sign(pool, lane, &req, raw, sizeof(raw), &raw_len, &res);
	if (res.recovered) {
		ms_app_warn(job->sink, "%s: %s: session re-opened, signing again", w->path,
			    res.why);
	}
	if (err != MS_OK) {
		ms_app_err(job->sink, "%s: signing failed: %s", w->path, res.why);
		return err;
	}
	c.req = &req;
	c.key_type = ms_signer_key_type(sg);
	c.mldsa = job->mldsa;
	c.use_skid = job->opts->use_skid;
	c.sid.p = job->sid;
	c.sid.len = job->sid_len;
	c.raw_sig.p = raw;
	c.raw_sig.len = raw_len;
	err = ms_signer_signed_data(&c, w->cms, CMS_MAX, &w->cms_len);
	if (err == MS_E_MALFORMED) {
		ms_app_err(job->sink, "%s: the key returned a malformed signature", w->path);
	} else if (err != MS_OK) {
		ms_app_err(job->sink, "%s: cannot encode the signature: %s", w->path,
			   ms_err_str(err));
	}
	return err;
}

ms_err
ms_app_module_prepare(struct ms_job *job, const char *path, struct ms_module_work *w)
{
	ms_err err;

	memset(w, 0, sizeof(*w));
	w->path = path;
	w->mf = malloc(sizeof(*w->mf));
	if (w->mf != NULL) {
		ms_modfile_init(w->mf);
		w->mf->zlimit = job->opts->max_module_size;
		w->mf->zpool = job->zpool;
		w->mf->tmps = job->tmps;
	}
	w->cms = malloc(job->raw_cms != NULL ? job->raw_cms_len : CMS_MAX);
	if (w->mf == NULL || w->cms == NULL) {
		ms_app_err(job->sink, "%s: %s", path, ms_err_str(MS_E_NOMEM));
		return MS_E_NOMEM;
	}
	/* Opening may wait for another process's lock: the run need not wait for that. */
	if (job->n_opening != NULL) {
		atomic_fetch_add(job->n_opening, 1);
	}
	err = ms_modfile_open_flags(w->mf, path, MS_MODFILE_EMPTY_OK);
	if (job->n_opening != NULL) {
		atomic_fetch_sub(job->n_opening, 1);
	}
	if (err != MS_OK) {
		say_modfile(job->sink, w->mf, path, err);
		return err;
	}
	if (w->mf->len == 0) {
		ms_app_warn(job->sink, "%s: is empty, not an ELF module; signed all the same, as "
			    "sign-file signs it", path);
	}
	err = ms_app_signed_policy(job, w->mf, path, &w->payload_len, &w->skipped);
	if (err != MS_OK || w->skipped) {
		return err;
	}
	/* The trailer and one byte of PKCS#7 already pass the limit: not worth a hash. */
	if (w->payload_len + MS_MOD_TRAILER_LEN + 1 > MS_MOD_SIZE_MAX) {
		say_too_big(job->sink, path, 0);
		return MS_E_ARG;
	}
	if (job->raw_cms != NULL) {
		return MS_OK;
	}
	if (job->form == MS_SIG_MLDSA_DATA) {
		/* The key signs the module itself: it crosses to the token whole. */
		err = ms_app_payload_read(w->mf, w->payload_len, NULL, 0, NULL, &w->data);
	} else {
		err = ms_app_payload_digest(w->mf, w->payload_len, &job->hash, 1, &w->digest,
					    NULL);
	}
	if (err != MS_OK) {
		say_modfile(job->sink, w->mf, path, err);
	}
	return err;
}

/*
 * Writes the .p7s (if asked) and then the module (unless -d), once it is
 * sure that the signed module is one the kernel and our tools can read.
 */
ms_err
ms_app_module_write(struct ms_job *job, struct ms_module_work *w, const char *dest)
{
	const struct ms_opts *o = job->opts;
	struct ms_modfile *mf = w->mf;
	uint64_t signed_len = w->payload_len + w->cms_len + MS_MOD_TRAILER_LEN;
	ms_err err;

	if (signed_len > MS_MOD_SIZE_MAX) {
		say_too_big(job->sink, w->path, signed_len);
		return MS_E_ARG;
	}
	if (o->save_p7s) {
		err = write_p7s(job->sink, w->path, w->cms, w->cms_len, o->p7s_mode,
				job->write_mode, job->tmps);
		if (err != MS_OK) {
			return err;
		}
	}
	if (o->p7s_only) {
		return MS_OK;
	}
	err = ms_modfile_write_signed_prefix(mf, dest, w->payload_len, w->cms, w->cms_len,
					     job->write_mode);
	if (err != MS_OK) {
		say_modfile(job->sink, mf, dest != NULL ? dest : w->path, err);
		return err;
	}
	/*
	 * The signed module is a new file, as with sign-file: other links keep
	 * the old one, unless the run signs them next.
	 */
	if (dest == NULL && w->later_links == 0 && mf->st.st_nlink > 1) {
		ms_app_warn(job->sink, "%s: had %ju other hard link(s); they still name the "
			    "unsigned module", w->path, (uintmax_t)(mf->st.st_nlink - 1));
	} else if (dest == NULL && mf->st.st_nlink > 1 + (nlink_t)w->later_links) {
		ms_app_warn(job->sink, "%s: had %ju other hard link(s); %ju of them, not in this "
			    "run, still name the unsigned module", w->path,
			    (uintmax_t)(mf->st.st_nlink - 1),
			    (uintmax_t)(mf->st.st_nlink - 1 - w->later_links));
	}
	return MS_OK;
}

void
ms_app_module_clear(struct ms_module_work *w)
{
	if (w->mf != NULL) {
		ms_modfile_clear(w->mf);
		free(w->mf);
	}
	free(w->cms);
	free(w->data);
	memset(w, 0, sizeof(*w));
}
