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

static ms_err
say(const char **why, const char *reason, ms_err err)
{
	if (why != NULL) {
		*why = reason;
	}
	return err;
}

/*
 * ms_modfile_sig_state() said the marker is there but a rule is broken:
 * name the rule, checked in the kernel's order (mod_check_sig(), see
 * trailer.c). Offsets as in include/linux/module_signature.h.
 */
static ms_err
trailer_why(struct ms_modfile *mf, const char **why)
{
	uint8_t t[MS_MOD_TRAILER_LEN];
	uint64_t size = mf->len;	/* > 0, checked at open */
	uint32_t sig_len;
	size_t got = 0;
	int e = 0;

	if (size <= MS_MOD_TRAILER_LEN) {
		return say(why, "trailer: file too short to hold a signature", MS_E_MALFORMED);
	}
	if (ms_modfile_pread(mf, t, sizeof(t), size - sizeof(t), &got, &e) != MS_OK) {
		return sfail(mf, "read", mf->path, e, MS_E_IO);
	}
	if (got != sizeof(t)) {
		return sfail(mf, "read", mf->path, 0, MS_E_CHANGED);
	}
	sig_len = (uint32_t)t[8] << 24 | (uint32_t)t[9] << 16 | (uint32_t)t[10] << 8 |
		  (uint32_t)t[11];
	if ((uint64_t)sig_len >= size - MS_MOD_TRAILER_LEN) {
		return say(why, "trailer: sig_len reaches past the start of the file",
			   MS_E_MALFORMED);
	}
	if (t[2] != MS_MOD_ID_PKCS7) {
		return say(why, "trailer: id_type is not 2 (PKCS#7)", MS_E_MALFORMED);
	}
	return say(why, "trailer: non-zero algo, hash, signer_len, key_id_len or pad "
		   "in module_signature", MS_E_MALFORMED);
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
	err = ms_modfile_sig_state(mf, &info);
	if (err == MS_E_NOTFOUND) {
		return say(why, "not signed", err);
	}
	if (err == MS_E_MALFORMED) {
		return trailer_why(mf, why);
	}
	if (err != MS_OK) {
		return err;
	}
	out->file_len = mf->len;
	/*
	 * The kernel's trailer check lets sig_len 0 through and fails later, on
	 * the empty PKCS#7: a marker with nothing to parse is a broken signature.
	 */
	if (info.sig_len == 0) {
		return say(why, "trailer: sig_len is 0 (no PKCS#7)", MS_E_MALFORMED);
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
