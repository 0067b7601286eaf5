// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the module_signature trailer, judged from memory
 * (ms_mod_trailer_parse) and from a file (ms_mod_layout_read,
 * ms_mod_sig_read). Input: 8 bytes of file length (little-endian), then
 * the tail; the tail alone is also judged as a whole module file.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "modfmt/modfmt.h"
#include "modfmt/strip.h"

static uint64_t
le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8; i++) {
		v |= (uint64_t)p[i] << (8 * i);
	}
	return v;
}

/* An accepted trailer obeys the kernel's rules and is exactly what we would build. */
static void
check_accepted(const uint8_t *tail, size_t tail_len, uint64_t file_len,
	       const struct ms_mod_sig_info *si)
{
	uint8_t built[MS_MOD_TRAILER_LEN];
	size_t built_len = 0;

	if (si->id_type != MS_MOD_ID_PKCS7 || si->algo != 0 || si->hash != 0 ||
	    si->signer_len != 0 || si->key_id_len != 0 || si->pad[0] != 0 || si->pad[1] != 0 ||
	    si->pad[2] != 0) {
		fuzz_die("trailer accepted with a non-zero field");
	}
	if (file_len < MS_MOD_TRAILER_LEN || (uint64_t)si->sig_len >= file_len - MS_MOD_TRAILER_LEN) {
		fuzz_die("trailer accepted with sig_len past the file start");
	}
	if (ms_mod_trailer_build(si->sig_len, built, sizeof(built), &built_len) != MS_OK ||
	    built_len != MS_MOD_TRAILER_LEN ||
	    memcmp(built, tail + tail_len - MS_MOD_TRAILER_LEN, MS_MOD_TRAILER_LEN) != 0) {
		fuzz_die("accepted trailer differs from the one we build");
	}
}

static ms_err
parse_mem(const uint8_t *tail, size_t tail_len, uint64_t file_len, uint32_t *sig_len,
	  const char **why)
{
	struct ms_mod_sig_info si;
	ms_err err;

	memset(&si, 0xa5, sizeof(si));
	*why = "unset";
	err = ms_mod_trailer_parse(tail, tail_len, file_len, &si, why);
	*sig_len = si.sig_len;
	if (err == MS_OK) {
		check_accepted(tail, tail_len, file_len, &si);
	} else if (err != MS_E_NOTFOUND && err != MS_E_MALFORMED && err != MS_E_ARG) {
		fuzz_die("ms_mod_trailer_parse: unexpected error");
	}
	if ((err == MS_E_NOTFOUND || err == MS_E_MALFORMED) != (*why != NULL)) {
		fuzz_die("ms_mod_trailer_parse: a reason without a refusal, or none with one");
	}
	return err;
}

/* The whole tail as a module file, opened and judged as verify/strip do. */
static void
parse_file(const uint8_t *p, size_t len, ms_err mem_err, uint32_t mem_sig_len,
	   const char *mem_why)
{
	struct ms_modfile mf;
	struct ms_mod_layout l;
	const char *why = NULL;
	const char *path = fuzz_tmp_file(p, len);
	uint8_t *blob = NULL;
	ms_err err;

	ms_modfile_init(&mf);
	err = ms_modfile_open(&mf, path);
	if (err != MS_OK) {
		/* m.ko holding a compressor's magic is refused: the name says plain. */
		if (len != 0 && !(err == MS_E_MALFORMED && ms_mod_zfmt_sniff(p, len) != MS_ZFMT_NONE &&
				  mf.why != NULL)) {
			fuzz_die("cannot open the temp module");
		}
		ms_modfile_clear(&mf);
		return;
	}
	err = ms_mod_layout_read(&mf, &l, &why);
	/*
	 * The same verdict and reason as from memory (the file's tail, or all
	 * of a file shorter than 40 bytes, goes to the same parser); except
	 * that a layout refuses an empty PKCS#7 (sig_len 0) that the kernel's
	 * trailer rules let pass.
	 */
	if (err != mem_err && !(mem_err == MS_OK && mem_sig_len == 0 && err == MS_E_MALFORMED)) {
		fuzz_die("file and memory judge the same trailer differently");
	}
	if (err == mem_err && err != MS_OK && why != NULL && mem_why != NULL &&
	    strcmp(why, mem_why) != 0) {
		fuzz_die("file and memory give different reasons for the same trailer");
	}
	if ((err == MS_E_NOTFOUND || err == MS_E_MALFORMED) && why == NULL) {
		fuzz_die("no reason for an unsigned or malformed module");
	}
	if (err == MS_OK) {
		if (l.sig_len == 0) {
			fuzz_die("layout with sig_len 0 (strip.h: >= 1); ms_mod_sig_read refuses it");
		}
		if (l.payload_len == 0 || l.file_len != len ||
		    l.payload_len + l.sig_len + MS_MOD_TRAILER_LEN != l.file_len) {
			fuzz_die("layout does not add up");
		}
		blob = malloc(l.sig_len);
		if (blob == NULL) {
			fuzz_die("malloc");
		}
		if (ms_mod_sig_read(&mf, &l, blob, l.sig_len) != MS_OK ||
		    memcmp(blob, p + l.payload_len, l.sig_len) != 0) {
			fuzz_die("ms_mod_sig_read did not return the blob");
		}
		if (l.sig_len > 1 && ms_mod_sig_read(&mf, &l, blob, l.sig_len - 1) != MS_E_NOSPACE) {
			fuzz_die("ms_mod_sig_read ignored its capacity");
		}
		free(blob);
	}
	ms_modfile_clear(&mf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *tail = NULL;
	size_t tail_len = 0;
	uint32_t sig_len = 0;
	const char *why = NULL;
	ms_err whole;

	if (size < 8) {
		return 0;
	}
	tail = data + 8;
	tail_len = size - 8;
	(void)parse_mem(tail, tail_len, le64(data), &sig_len, &why);
	whole = parse_mem(tail, tail_len, tail_len, &sig_len, &why);
	parse_file(tail, tail_len, whole, sig_len, why);
	return 0;
}
