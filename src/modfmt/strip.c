// SPDX-License-Identifier: GPL-2.0-only
/*
 * The layout of a signed module, its PKCS#7 blob, and removing the
 * outermost signature through a temp file and rename. Parses untrusted
 * input.
 */
#include <stdbool.h>
#include <string.h>

#include "modfmt_internal.h"
#include "strip.h"

static ms_err
sfail(struct ms_modfile *mf, const char *op, const char *path, int e, ms_err err)
{
	mf->op = op;
	mf->err_path = path;
	mf->sys_errno = e;
	return err;
}

ms_err
ms_mod_layout_read(struct ms_modfile *mf, struct ms_mod_layout *out, const char **why)
{
	struct ms_mod_sig_info info;
	ms_err err;

	if (why != NULL) {
		*why = NULL;
	}
	if (mf == NULL || out == NULL || mf->fd < 0) {
		return MS_E_ARG;
	}
	/* The trailer's one judge (ms_mod_trailer_parse()) names the rule broken. */
	err = ms_modfile_sig_state(mf, &info, why);
	if (err != MS_OK) {
		return err;
	}
	out->file_len = mf->len;
	/*
	 * The kernel's trailer check lets sig_len 0 through and fails later, on
	 * the empty PKCS#7: a marker with nothing to parse is a broken signature.
	 */
	if (info.sig_len == 0) {
		if (why != NULL) {
			*why = "trailer: sig_len is 0 (no PKCS#7)";
		}
		return MS_E_MALFORMED;
	}
	out->sig_len = info.sig_len;
	out->info = info;
	/* ms_mod_trailer_parse(): sig_len < file_len - 40, so at least one byte. */
	out->payload_len = out->file_len - MS_MOD_TRAILER_LEN - info.sig_len;
	return MS_OK;
}

ms_err
ms_mod_payload_len(struct ms_modfile *mf, uint64_t *out)
{
	struct ms_mod_layout l;
	ms_err err;

	if (out == NULL) {
		return MS_E_ARG;
	}
	err = ms_mod_layout_read(mf, &l, NULL);
	if (err == MS_OK) {
		*out = l.payload_len;
	}
	return err;
}

ms_err
ms_mod_sig_read(struct ms_modfile *mf, const struct ms_mod_layout *l, uint8_t *buf, size_t cap)
{
	size_t got = 0;
	int e = 0;

	if (mf == NULL || l == NULL || buf == NULL || mf->fd < 0 || l->sig_len == 0 ||
	    l->payload_len + l->sig_len + MS_MOD_TRAILER_LEN != l->file_len) {
		return MS_E_ARG;
	}
	if (cap < l->sig_len) {
		return MS_E_NOSPACE;
	}
	if (ms_modfile_pread(mf, buf, l->sig_len, l->payload_len, &got, &e) != MS_OK) {
		return sfail(mf, "read", mf->path, e, MS_E_IO);
	}
	if (got != l->sig_len) {
		return sfail(mf, "read", mf->path, 0, MS_E_CHANGED);
	}
	return MS_OK;
}

ms_err
ms_mod_strip(struct ms_modfile *mf, const char *dest, const char **why)
{
	struct ms_mod_layout l;
	ms_err err;

	if (why != NULL) {
		*why = NULL;
	}
	if (mf == NULL) {
		return MS_E_ARG;
	}
	err = ms_mod_layout_read(mf, &l, why);
	if (err != MS_OK) {
		return err;
	}
	/* The payload alone: the module as it was before this signature. */
	return ms_modfile_write_parts(mf, dest, l.payload_len, NULL, 0, MS_WRITE_REPLACE);
}
