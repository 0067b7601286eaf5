/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The layout of a signed module (payload, PKCS#7 blob, trailer), reading
 * the blob, and removing the outermost signature atomically. No crypto.
 */
#ifndef MS_MODFMT_STRIP_H
#define MS_MODFMT_STRIP_H

#include <stddef.h>
#include <stdint.h>

#include "modfmt.h"

/*
 * A signed module: [payload][PKCS#7, sig_len bytes][module_signature][marker].
 * The payload is what the outermost signature covers, and the module as it
 * was before that signature was appended (kernel/module/signing.c).
 */
struct ms_mod_layout {
	uint64_t file_len;
	uint64_t payload_len;	/* >= 1 */
	uint32_t sig_len;	/* >= 1 */
	struct ms_mod_sig_info info;
};

/**
 * ms_mod_layout_read() - judge the trailer of the open module @mf by the
 * kernel's rules (ms_mod_trailer_parse()) and, when signed, give the
 * layout; a trailer with sig_len 0, which those rules let through, has no
 * PKCS#7 to read and is refused here. Parses untrusted input.
 * @why:	for MS_E_NOTFOUND and MS_E_MALFORMED, a static reason naming
 *		the rule: ms_mod_trailer_parse()'s ("not signed", "trailer:
 *		id_type is not 2 (PKCS#7)", ...), or "trailer: sig_len is 0
 *		(no PKCS#7)"; else NULL. May be NULL.
 * Return: MS_OK (signed, *@out filled); MS_E_NOTFOUND (no marker);
 * MS_E_MALFORMED; MS_E_IO or MS_E_CHANGED (details in @mf); MS_E_ARG.
 */
ms_err ms_mod_layout_read(struct ms_modfile *mf, struct ms_mod_layout *out,
			  const char **why) MS_MUST_CHECK;

/**
 * ms_mod_payload_len() - the payload length of the open, signed module @mf:
 * sign only its first *@out bytes to replace the signature (`--replace`).
 * Return: as ms_mod_layout_read().
 */
ms_err ms_mod_payload_len(struct ms_modfile *mf, uint64_t *out) MS_MUST_CHECK;

/**
 * ms_mod_sig_read() - read the PKCS#7 blob of @l (from ms_mod_layout_read()
 * on the same @mf) into @buf of @cap >= @l->sig_len bytes.
 * Return: MS_OK, MS_E_NOSPACE, MS_E_IO, MS_E_CHANGED (file shorter now), MS_E_ARG.
 */
ms_err ms_mod_sig_read(struct ms_modfile *mf, const struct ms_mod_layout *l, uint8_t *buf,
		       size_t cap) MS_MUST_CHECK;

/**
 * ms_mod_strip() - write the payload of the open, signed module @mf (its
 * first payload_len bytes: byte for byte the module before its outermost
 * signature) to @dest, or over the module itself when @dest is NULL, with
 * the guarantees of ms_modfile_write_signed(): a temp file beside the
 * target, the original's mode (and owner in place), fsync, rename,
 * directory fsync; if the module changed since it was opened nothing is
 * written. On any failure the target is unchanged and no temp file is left.
 * Only the outermost signature goes: a module signed twice (--append)
 * keeps the inner one.
 * @why:	as for ms_mod_layout_read() when the module is not signed or
 *		its trailer breaks a rule; may be NULL.
 * Return: MS_OK; MS_E_NOTFOUND (not signed); MS_E_MALFORMED; MS_E_IO,
 * MS_E_CHANGED, MS_E_ARG (symlink or directory @dest), details in @mf.
 */
ms_err ms_mod_strip(struct ms_modfile *mf, const char *dest, const char **why) MS_MUST_CHECK;

#endif
