// SPDX-License-Identifier: GPL-2.0-only
/*
 * What signing, re-signing and `verify` share about a module file: the
 * digests of its payload, hashed in one streaming pass through the module
 * reader, and the text of a module file's failure.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

#define READ_CHUNK (256 * 1024)

ms_err
ms_cli_payload_digest(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs,
		      size_t n, struct ms_pkcs7_digest *out, size_t *bad_alg)
{
	struct ms_cms_digest *d[MS_PKCS7_SIGNERS_MAX] = { NULL };
	uint8_t *buf = NULL;
	size_t i, got = 0;
	ms_err err = MS_E_INTERNAL;

	if (n > MS_PKCS7_SIGNERS_MAX) {
		return MS_E_ARG;
	}
	for (i = 0; i < n; i++) {
		err = ms_cms_digest_new(algs[i], &d[i]);
		if (err != MS_OK) {
			if (bad_alg != NULL) {
				*bad_alg = i;
			}
			goto out;
		}
	}
	buf = malloc(READ_CHUNK);
	if (buf == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	err = ms_modfile_rewind(mf);
	while (err == MS_OK && len > 0) {
		err = ms_modfile_read(mf, buf, len < READ_CHUNK ? (size_t)len : READ_CHUNK, &got);
		if (err == MS_OK && got == 0) {
			/* Shorter than the caller's length: read from a file that shrank. */
			mf->op = "read";
			mf->err_path = mf->path;
			mf->sys_errno = 0;
			err = MS_E_CHANGED;
		}
		for (i = 0; i < n && err == MS_OK; i++) {
			err = ms_cms_digest_update(d[i], buf, got);
		}
		len -= got;
	}
	for (i = 0; i < n && err == MS_OK; i++) {
		out[i].alg = algs[i];
		err = ms_cms_digest_final(d[i], out[i].d, sizeof(out[i].d), &out[i].len);
	}
out:
	for (i = 0; i < n; i++) {
		ms_cms_digest_free(d[i]);
	}
	free(buf);
	return err;
}

/* The library's wording (modfmt.h), under the names the CLI files know. */
const char *
ms_cli_file_kind(mode_t type)
{
	return ms_file_kind(type);
}

void
ms_cli_modfile_why(const struct ms_modfile *mf, ms_err err, char *out, size_t cap)
{
	/* A failure about the module itself, not about a <dest> or .p7s. */
	bool is_module = mf->err_path == NULL || mf->err_path == mf->path;

	if (mf->why != NULL) {
		/* A compressed module's container (modfmt/zmodfile.c) says what is wrong. */
		snprintf(out, cap, "%s", mf->why);
	} else if (err == MS_E_ARG && mf->sys_errno == ELOOP && is_module) {
		snprintf(out, cap, "is a symbolic link; replacing it in place would replace the "
			 "link, not its target: name the target instead");
	} else if (err == MS_E_ARG && mf->sys_errno == ELOOP) {
		snprintf(out, cap, "is a symbolic link; not written through: remove it or "
			 "name another file");
	} else if (err == MS_E_ARG && mf->file_type != 0) {
		snprintf(out, cap, "is %s, not a regular file", ms_cli_file_kind(mf->file_type));
	} else if (err == MS_E_ARG && mf->sys_errno == ENODATA) {
		snprintf(out, cap, "is empty");
	} else if (err == MS_E_ARG && mf->sys_errno == EFBIG && is_module) {
		snprintf(out, cap, "is larger than %d bytes, the most finit_module(2) reads",
			 INT_MAX);
	} else if (err == MS_E_CHANGED && mf->op != NULL && strcmp(mf->op, "read") == 0) {
		snprintf(out, cap, "changed while being read");
	} else if (err == MS_E_CHANGED) {
		snprintf(out, cap, "changed by another process meanwhile; left as it is");
	} else if (mf->sys_errno != 0) {
		snprintf(out, cap, "%s: %s", mf->op != NULL ? mf->op : "io",
			 strerror(mf->sys_errno));
	} else {
		snprintf(out, cap, "%s%s%s", mf->op != NULL ? mf->op : "",
			 mf->op != NULL ? ": " : "", ms_err_str(err));
	}
}

void
ms_cli_file_fail_why(const struct ms_file_fail *f, ms_err err, char *out, size_t cap)
{
	ms_file_fail_why(f, err, out, cap);
}
