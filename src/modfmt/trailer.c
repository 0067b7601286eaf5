// SPDX-License-Identifier: GPL-2.0-only
/*
 * The 40 bytes after a module's PKCS#7 blob: struct module_signature and
 * the marker, built and judged field by field. Parses untrusted input.
 */
#include <string.h>

#include "modfmt.h"

/*
 * Byte offsets inside struct module_signature (include/linux/module_signature.h),
 * for the builder; the parser reads the same fields in this order.
 */
#define OFF_ALGO	0
#define OFF_HASH	1
#define OFF_ID_TYPE	2
#define OFF_SIGNER_LEN	3
#define OFF_KEY_ID_LEN	4
#define OFF_PAD		5	/* 3 bytes */
#define OFF_SIG_LEN	8	/* __be32 */

ms_err
ms_mod_trailer_build(uint32_t sig_len, uint8_t *out, size_t cap, size_t *out_len)
{
	if (out_len == NULL) {
		return MS_E_ARG;
	}
	*out_len = MS_MOD_TRAILER_LEN;
	if (out == NULL) {
		return MS_OK;
	}
	if (cap < MS_MOD_TRAILER_LEN) {
		return MS_E_NOSPACE;
	}
	/* sign-file: { .id_type = PKEY_ID_PKCS7 }, everything else zero. */
	out[OFF_ALGO] = 0;
	out[OFF_HASH] = 0;
	out[OFF_ID_TYPE] = MS_MOD_ID_PKCS7;
	out[OFF_SIGNER_LEN] = 0;
	out[OFF_KEY_ID_LEN] = 0;
	out[OFF_PAD] = 0;
	out[OFF_PAD + 1] = 0;
	out[OFF_PAD + 2] = 0;
	out[OFF_SIG_LEN] = (uint8_t)(sig_len >> 24);
	out[OFF_SIG_LEN + 1] = (uint8_t)(sig_len >> 16);
	out[OFF_SIG_LEN + 2] = (uint8_t)(sig_len >> 8);
	out[OFF_SIG_LEN + 3] = (uint8_t)sig_len;
	memcpy(out + MS_MOD_INFO_LEN, MS_MOD_MAGIC, MS_MOD_MAGIC_LEN);
	return MS_OK;
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
 * The kernel's order (kernel/module/signing.c module_sig_check, then
 * mod_verify_sig and kernel/module_signature.c mod_check_sig): the marker
 * decides signed or not, and counts only in a file longer than it; then,
 * with modlen the size without the marker, modlen <= 12 leaves no room for
 * the info block (-EBADMSG), sig_len >= modlen - 12 is -EBADMSG, id_type
 * != PKEY_ID_PKCS7 is -ENOPKG, any other nonzero field is -EBADMSG. Every
 * one of those is MS_E_MALFORMED here, each with its own reason.
 * sig_len < file_len - 40 also means at least one module byte precedes
 * the PKCS#7 blob.
 */
ms_err
ms_mod_trailer_parse(const uint8_t *tail, size_t tail_len, uint64_t file_len,
		     struct ms_mod_sig_info *out, const char **why)
{
	const uint8_t *info = NULL;
	struct ms_span in;
	struct ms_mod_sig_info si;

	if (why != NULL) {
		*why = NULL;
	}
	if (tail == NULL || out == NULL || (uint64_t)tail_len > file_len ||
	    (tail_len < MS_MOD_TRAILER_LEN && (uint64_t)tail_len != file_len)) {
		return MS_E_ARG;
	}
	if (tail_len <= MS_MOD_MAGIC_LEN ||
	    memcmp(tail + (tail_len - MS_MOD_MAGIC_LEN), MS_MOD_MAGIC, MS_MOD_MAGIC_LEN) != 0) {
		return say(why, "not signed", MS_E_NOTFOUND);
	}
	/* Here a tail shorter than 40 bytes is the whole file, so this catches it. */
	if (file_len <= MS_MOD_TRAILER_LEN) {
		return say(why, "trailer: file too short to hold a signature", MS_E_MALFORMED);
	}
	/* Only the last 40 bytes of the tail matter. */
	info = tail + (tail_len - MS_MOD_TRAILER_LEN);
	/* The fields in the order of struct module_signature; 12 bytes, so none can fail. */
	in.p = info;
	in.len = MS_MOD_INFO_LEN;
	if (ms_span_get_u8(&in, &si.algo) != MS_OK ||
	    ms_span_get_u8(&in, &si.hash) != MS_OK ||
	    ms_span_get_u8(&in, &si.id_type) != MS_OK ||
	    ms_span_get_u8(&in, &si.signer_len) != MS_OK ||
	    ms_span_get_u8(&in, &si.key_id_len) != MS_OK ||
	    ms_span_get_u8(&in, &si.pad[0]) != MS_OK ||
	    ms_span_get_u8(&in, &si.pad[1]) != MS_OK ||
	    ms_span_get_u8(&in, &si.pad[2]) != MS_OK ||
	    ms_span_get_be32(&in, &si.sig_len) != MS_OK || in.len != 0) {
		return MS_E_INTERNAL;
	}

	/* file_len > 40 was checked above: no wrap-around. */
	if ((uint64_t)si.sig_len >= file_len - MS_MOD_TRAILER_LEN) {
		return say(why, "trailer: sig_len reaches past the start of the file",
			   MS_E_MALFORMED);
	}
	if (si.id_type != MS_MOD_ID_PKCS7) {
		return say(why, "trailer: id_type is not 2 (PKCS#7)", MS_E_MALFORMED);
	}
	if (si.algo != 0 || si.hash != 0 || si.signer_len != 0 || si.key_id_len != 0 ||
	    si.pad[0] != 0 || si.pad[1] != 0 || si.pad[2] != 0) {
		return say(why, "trailer: non-zero algo, hash, signer_len, key_id_len or pad "
			   "in module_signature", MS_E_MALFORMED);
	}
	*out = si;
	return MS_OK;
}
