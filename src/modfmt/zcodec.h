/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Inside src/modfmt: one decoder and one encoder per container format, each
 * a thin wrapper of its library (liblzma, libzstd, zlib) with the same
 * step interface, driven by the loops of zmod.c.
 */
#ifndef MS_MODFMT_ZCODEC_H
#define MS_MODFMT_ZCODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zmod.h"

/*
 * Most memory a decoder may use: an xz dictionary or zstd window up to
 * 128 MiB (`xz -9` needs 65 MiB, kbuild's settings 1 or 2 MiB). A header
 * asking for more is refused instead of allocated.
 */
#define MS_ZDEC_MEM_MAX ((uint64_t)128 << 20)

/*
 * One step's buffers. A step reads from in[0..in_len) and writes to
 * out[0..out_cap); it advances @in_used and @out_len by what it consumed
 * and produced.
 */
struct ms_zio {
	const uint8_t *in;
	size_t in_len;
	size_t in_used;
	uint8_t *out;
	size_t out_cap;
	size_t out_len;
};

struct ms_zcodec {
	enum ms_zfmt fmt;
	/* The library, for `modsign --version`: its name and the version it tells. */
	const char *lib_name;
	const char *(*lib_version)(void);
	/* A decoder of one stream in *@st. MS_OK, MS_E_NOMEM. */
	ms_err (*dec_new)(void **st);
	/*
	 * Decode from @io. *@end is set once the stream's last byte (its
	 * check, index, footer) has been consumed; further input is the
	 * caller's to refuse. MS_OK; MS_E_MALFORMED, MS_E_UNSUPPORTED or
	 * MS_E_NOMEM with a static *@why.
	 */
	ms_err (*dec_step)(void *st, struct ms_zio *io, bool *end, const char **why);
	void (*dec_free)(void *st);
	/* An encoder for @total_len input bytes. MS_OK, MS_E_NOMEM, MS_E_INTERNAL. */
	ms_err (*enc_new)(void **st, uint64_t total_len);
	/*
	 * The same encoder, ready for a new stream of @total_len bytes, its
	 * memory kept: the output is the same as a new encoder's.
	 */
	ms_err (*enc_reset)(void *st, uint64_t total_len);
	/*
	 * Encode from @io; with @finish, also end the stream: *@end is set
	 * when all of it has been written to @io's output.
	 */
	ms_err (*enc_step)(void *st, struct ms_zio *io, bool finish, bool *end);
	void (*enc_free)(void *st);
};

extern const struct ms_zcodec ms_zcodec_xz;
extern const struct ms_zcodec ms_zcodec_zstd;
extern const struct ms_zcodec ms_zcodec_gzip;

#endif
