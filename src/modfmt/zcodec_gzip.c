// SPDX-License-Identifier: GPL-2.0-only
/*
 * .ko.gz through zlib: one gzip member decoded, and encoded as kbuild's
 * `gzip -n` does in form. Parses untrusted input.
 *
 * What matches `gzip -n` byte for byte: the 10-byte header (no name, mtime
 * 0, XFL 0 for level 6, OS 3) and the 8-byte trailer (CRC-32, size). The
 * deflate data between them is zlib's at gzip's default level 6; GNU gzip
 * has a deflate of its own, whose blocks come out a little different (and
 * about 1-3% smaller or larger by module), so those bytes differ. Both
 * inflate to the same module with `gzip -t`, zlib or the kernel's inflate.
 */
#include <limits.h>
#include <stdlib.h>

#define ZLIB_CONST	/* next_in is const: zlib only reads the input */
#include <zlib.h>

#include "zcodec.h"

#define GZIP_LEVEL 6		/* gzip's default; kbuild passes only -n */
#define GZIP_WBITS (15 + 16)	/* a 32 KiB window, gzip header and trailer only */
#define GZIP_MEM_LEVEL 8	/* zlib's default */

/* zlib counts in uInt: a step sees at most UINT_MAX bytes each way. */
static void
io_to_z(const struct ms_zio *io, z_stream *z)
{
	size_t in_left = io->in_len - io->in_used;
	size_t out_left = io->out_cap - io->out_len;

	z->next_in = io->in + io->in_used;
	z->avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
	z->next_out = io->out + io->out_len;
	z->avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
}

static void
z_to_io(const z_stream *z, struct ms_zio *io)
{
	io->in_used = (size_t)(z->next_in - (const Bytef *)io->in);
	io->out_len = (size_t)(z->next_out - io->out);
}

static ms_err
gz_dec_new(void **st)
{
	z_stream *z = calloc(1, sizeof(*z));
	int rc;

	if (z == NULL) {
		return MS_E_NOMEM;
	}
	rc = inflateInit2(z, GZIP_WBITS);
	if (rc != Z_OK) {
		free(z);
		return rc == Z_MEM_ERROR ? MS_E_NOMEM : MS_E_INTERNAL;
	}
	*st = z;
	return MS_OK;
}

static void
gz_dec_free(void *st)
{
	if (st == NULL) {
		return;
	}
	(void)inflateEnd(st);
	free(st);
}

/*
 * inflate() returns Z_STREAM_END after the member's trailer (CRC-32 and
 * size both checked) and leaves the bytes after it unread: the caller
 * refuses them (a second member, trailing zeros, garbage).
 */
static ms_err
gz_dec_step(void *st, struct ms_zio *io, bool *end, const char **why)
{
	z_stream *z = st;
	int rc;

	io_to_z(io, z);
	rc = inflate(z, Z_NO_FLUSH);
	z_to_io(z, io);
	switch (rc) {
	case Z_OK:
	case Z_BUF_ERROR:	/* no progress possible now: the loop decides */
		return MS_OK;
	case Z_STREAM_END:
		*end = true;
		return MS_OK;
	case Z_MEM_ERROR:
		*why = "gzip: out of memory";
		return MS_E_NOMEM;
	case Z_NEED_DICT:
		*why = "gzip: needs a preset dictionary";
		return MS_E_MALFORMED;
	default:
		/* Z_DATA_ERROR: bad header, bad block, CRC-32 or size mismatch. */
		*why = "gzip: corrupt data, or a failed CRC-32 or size check";
		return MS_E_MALFORMED;
	}
}

static ms_err
gz_enc_new(void **st, uint64_t total_len)
{
	z_stream *z = calloc(1, sizeof(*z));
	int rc;

	(void)total_len;	/* the trailer's size comes from the data itself */
	if (z == NULL) {
		return MS_E_NOMEM;
	}
	/* No deflateSetHeader(): no name, no comment, mtime 0, as gzip -n. */
	rc = deflateInit2(z, GZIP_LEVEL, Z_DEFLATED, GZIP_WBITS, GZIP_MEM_LEVEL,
			  Z_DEFAULT_STRATEGY);
	if (rc != Z_OK) {
		free(z);
		return rc == Z_MEM_ERROR ? MS_E_NOMEM : MS_E_INTERNAL;
	}
	*st = z;
	return MS_OK;
}

/* Level, window and header settings stay; the stream starts anew. */
static ms_err
gz_enc_reset(void *st, uint64_t total_len)
{
	(void)total_len;
	return deflateReset(st) == Z_OK ? MS_OK : MS_E_INTERNAL;
}

static void
gz_enc_free(void *st)
{
	if (st == NULL) {
		return;
	}
	(void)deflateEnd(st);
	free(st);
}

static ms_err
gz_enc_step(void *st, struct ms_zio *io, bool finish, bool *end)
{
	z_stream *z = st;
	int rc;

	io_to_z(io, z);
	rc = deflate(z, finish ? Z_FINISH : Z_NO_FLUSH);
	z_to_io(z, io);
	switch (rc) {
	case Z_OK:
	case Z_BUF_ERROR:
		return MS_OK;
	case Z_STREAM_END:
		*end = true;
		return MS_OK;
	default:
		return MS_E_INTERNAL;
	}
}

static const char *
gzip_lib_version(void)
{
	return zlibVersion();
}

const struct ms_zcodec ms_zcodec_gzip = {
	.fmt = MS_ZFMT_GZIP,
	.lib_name = "zlib",
	.lib_version = gzip_lib_version,
	.dec_new = gz_dec_new,
	.dec_step = gz_dec_step,
	.dec_free = gz_dec_free,
	.enc_new = gz_enc_new,
	.enc_reset = gz_enc_reset,
	.enc_step = gz_enc_step,
	.enc_free = gz_enc_free,
};
