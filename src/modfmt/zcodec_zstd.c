// SPDX-License-Identifier: GPL-2.0-only
/*
 * .ko.zst through libzstd: one zstd frame decoded, and encoded the way
 * kbuild does (`zstd`: level 3, with the content size and a checksum).
 * Parses untrusted input.
 */
#include <zstd.h>
#include <zstd_errors.h>

#include "zcodec.h"

/* The zstd command's default level; kbuild passes none (scripts/Makefile.modinst). */
#define ZSTD_LEVEL 3
/* 2^27 = 128 MiB = MS_ZDEC_MEM_MAX: a frame asking for a larger window is refused. */
#define ZSTD_WINDOW_LOG_MAX 27

static ms_err
zstd_dec_new(void **st)
{
	ZSTD_DCtx *d = ZSTD_createDCtx();

	if (d == NULL) {
		return MS_E_NOMEM;
	}
	if (ZSTD_isError(ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX))) {
		ZSTD_freeDCtx(d);
		return MS_E_INTERNAL;
	}
	*st = d;
	return MS_OK;
}

static void
zstd_dec_free(void *st)
{
	ZSTD_freeDCtx(st);
}

static ms_err
zstd_why(size_t rc, const char **why)
{
	switch (ZSTD_getErrorCode(rc)) {
	case ZSTD_error_prefix_unknown:
		*why = "zstd: not a zstd frame";
		return MS_E_MALFORMED;
	case ZSTD_error_checksum_wrong:
		*why = "zstd: checksum mismatch";
		return MS_E_MALFORMED;
	case ZSTD_error_frameParameter_windowTooLarge:
		*why = "zstd: its window needs more than 128 MiB of memory";
		return MS_E_UNSUPPORTED;
	case ZSTD_error_dictionary_wrong:
	case ZSTD_error_dictionary_corrupted:
		*why = "zstd: the frame needs a dictionary";
		return MS_E_UNSUPPORTED;
	case ZSTD_error_frameParameter_unsupported:
	case ZSTD_error_version_unsupported:
		*why = "zstd: frame parameters this libzstd does not know";
		return MS_E_UNSUPPORTED;
	case ZSTD_error_memory_allocation:
		*why = "zstd: out of memory";
		return MS_E_NOMEM;
	default:
		*why = "zstd: corrupt data";
		return MS_E_MALFORMED;
	}
}

/*
 * ZSTD_decompressStream() returns 0 once a frame is decoded (its checksum
 * checked) and flushed, and stops there: the bytes after it stay unread
 * for the caller to refuse (a second frame, a skippable frame, garbage).
 */
static ms_err
zstd_dec_step(void *st, struct ms_zio *io, bool *end, const char **why)
{
	ZSTD_inBuffer in = { io->in, io->in_len, io->in_used };
	ZSTD_outBuffer out = { io->out, io->out_cap, io->out_len };
	size_t rc = ZSTD_decompressStream(st, &out, &in);

	io->in_used = in.pos;
	io->out_len = out.pos;
	if (ZSTD_isError(rc)) {
		return zstd_why(rc, why);
	}
	if (rc == 0) {
		*end = true;
	}
	return MS_OK;
}

static ms_err
zstd_enc_new(void **st, uint64_t total_len)
{
	ZSTD_CCtx *c = ZSTD_createCCtx();

	if (c == NULL) {
		return MS_E_NOMEM;
	}
	/*
	 * As the zstd command on a file: the level, a checksum (its default),
	 * and the size pledged, which puts it in the frame header and lets
	 * zstd fit its window to the input: the same bytes as `zstd` writes.
	 */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(c, (unsigned long long)total_len))) {
		ZSTD_freeCCtx(c);
		return MS_E_INTERNAL;
	}
	*st = c;
	return MS_OK;
}

/* The level and flags stay set; the size is the new stream's. */
static ms_err
zstd_enc_reset(void *st, uint64_t total_len)
{
	if (ZSTD_isError(ZSTD_CCtx_reset(st, ZSTD_reset_session_only)) ||
	    ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(st, (unsigned long long)total_len))) {
		return MS_E_INTERNAL;
	}
	return MS_OK;
}

static void
zstd_enc_free(void *st)
{
	ZSTD_freeCCtx(st);
}

static ms_err
zstd_enc_step(void *st, struct ms_zio *io, bool finish, bool *end)
{
	ZSTD_inBuffer in = { io->in, io->in_len, io->in_used };
	ZSTD_outBuffer out = { io->out, io->out_cap, io->out_len };
	size_t rc = ZSTD_compressStream2(st, &out, &in, finish ? ZSTD_e_end : ZSTD_e_continue);

	io->in_used = in.pos;
	io->out_len = out.pos;
	if (ZSTD_isError(rc)) {
		if (ZSTD_getErrorCode(rc) == ZSTD_error_srcSize_wrong) {
			return MS_E_ARG;	/* not the size pledged */
		}
		if (ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation) {
			return MS_E_NOMEM;
		}
		return MS_E_INTERNAL;
	}
	if (finish && rc == 0) {
		*end = true;
	}
	return MS_OK;
}

static const char *
zstd_lib_version(void)
{
	return ZSTD_versionString();
}

const struct ms_zcodec ms_zcodec_zstd = {
	.fmt = MS_ZFMT_ZSTD,
	.lib_name = "zstd",
	.lib_version = zstd_lib_version,
	.dec_new = zstd_dec_new,
	.dec_step = zstd_dec_step,
	.dec_free = zstd_dec_free,
	.enc_new = zstd_enc_new,
	.enc_reset = zstd_enc_reset,
	.enc_step = zstd_enc_step,
	.enc_free = zstd_enc_free,
};
