// SPDX-License-Identifier: GPL-2.0-only
/*
 * .ko.xz through liblzma: one xz stream decoded, and encoded the way
 * kbuild does (`xz --check=crc32 --lzma2=dict=1MiB`, with the xz of the
 * liblzma version in use). Parses untrusted input.
 */
#include <lzma.h>
#include <stdlib.h>

#include "zcodec.h"

/* kbuild since 6.2 (scripts/Makefile.modinst); before, 2 MiB and CRC64. */
#define XZ_DICT ((uint32_t)1 << 20)

static ms_err
xz_new(void **st)
{
	lzma_stream *s = malloc(sizeof(*s));
	lzma_stream init = LZMA_STREAM_INIT;

	if (s == NULL) {
		return MS_E_NOMEM;
	}
	*s = init;
	*st = s;
	return MS_OK;
}

static void
xz_free(void *st)
{
	lzma_stream *s = st;

	if (s == NULL) {
		return;
	}
	lzma_end(s);
	free(s);
}

/*
 * No LZMA_CONCATENATED: the decoder ends after one stream, and the caller
 * refuses whatever follows (stream padding too: kbuild writes none, and
 * the kernel's decoder stops at the first stream's end). An integrity
 * check liblzma cannot verify is refused rather than skipped.
 */
/* After lzma_*_init: keep the stream on LZMA_OK, else free it. */
static ms_err
xz_started(lzma_ret rc, void **st)
{
	if (rc == LZMA_OK) {
		return MS_OK;
	}
	xz_free(*st);
	*st = NULL;
	return rc == LZMA_MEM_ERROR ? MS_E_NOMEM : MS_E_INTERNAL;
}

/* One lzma_code() call over @io's buffers. */
static lzma_ret
xz_code(lzma_stream *s, struct ms_zio *io, lzma_action action)
{
	lzma_ret rc;

	s->next_in = io->in + io->in_used;
	s->avail_in = io->in_len - io->in_used;
	s->next_out = io->out + io->out_len;
	s->avail_out = io->out_cap - io->out_len;
	rc = lzma_code(s, action);
	io->in_used = io->in_len - s->avail_in;
	io->out_len = io->out_cap - s->avail_out;
	return rc;
}

/*
 * No LZMA_CONCATENATED: the decoder ends after one stream, and the caller
 * refuses whatever follows (stream padding too: kbuild writes none, and
 * the kernel's decoder stops at the first stream's end). An integrity
 * check liblzma cannot verify is refused rather than skipped.
 */
static ms_err
xz_dec_new(void **st)
{
	ms_err err = xz_new(st);

	if (err != MS_OK) {
		return err;
	}
	return xz_started(lzma_stream_decoder(*st, MS_ZDEC_MEM_MAX, LZMA_TELL_UNSUPPORTED_CHECK),
			  st);
}

static ms_err
xz_dec_step(void *st, struct ms_zio *io, bool *end, const char **why)
{
	switch (xz_code(st, io, LZMA_RUN)) {
	case LZMA_OK:
	case LZMA_BUF_ERROR:	/* no progress possible now: the loop decides */
		return MS_OK;
	case LZMA_STREAM_END:
		*end = true;
		return MS_OK;
	case LZMA_FORMAT_ERROR:
		*why = "xz: not an xz stream";
		return MS_E_MALFORMED;
	case LZMA_DATA_ERROR:
		*why = "xz: corrupt data, or a failed integrity check";
		return MS_E_MALFORMED;
	case LZMA_OPTIONS_ERROR:
		*why = "xz: filters or options this liblzma does not know";
		return MS_E_UNSUPPORTED;
	case LZMA_UNSUPPORTED_CHECK:
		*why = "xz: an integrity check type this liblzma cannot verify";
		return MS_E_UNSUPPORTED;
	case LZMA_MEMLIMIT_ERROR:
		*why = "xz: its dictionary needs more than 128 MiB of memory";
		return MS_E_UNSUPPORTED;
	case LZMA_MEM_ERROR:
		*why = "xz: out of memory";
		return MS_E_NOMEM;
	default:
		*why = "xz: liblzma failed";
		return MS_E_INTERNAL;
	}
}

/*
 * xz 5.6 made multi-threaded mode its default (-T0): kbuild's command, which
 * passes no -T, then writes blocks of three dictionaries (3 MiB) with their
 * sizes in the block headers, and the same bytes for any number of threads.
 * Earlier xz writes one block without sizes. xz and liblzma come from one
 * source package, so the running liblzma's version says which the
 * machine's kbuild writes.
 */
#define XZ_MT_DEFAULT_VERSION 50060000U

/*
 * Preset 6 (xz's default) with the dictionary kbuild asks for, CRC32 check,
 * in the mode the xz command of this liblzma's version uses by default
 * (with one worker thread: the output does not depend on the count).
 * On a stream that already encoded, liblzma keeps the match finder's
 * memory when the settings are the same, and only clears its hash table.
 */
static ms_err
xz_enc_start(lzma_stream *s)
{
	lzma_options_lzma opt;
	lzma_filter filters[2];
	lzma_mt mt = { 0 };
	lzma_ret rc;

	if (lzma_lzma_preset(&opt, LZMA_PRESET_DEFAULT)) {
		return MS_E_INTERNAL;
	}
	opt.dict_size = XZ_DICT;
	filters[0].id = LZMA_FILTER_LZMA2;
	filters[0].options = &opt;
	filters[1].id = LZMA_VLI_UNKNOWN;
	filters[1].options = NULL;
	if (lzma_version_number() >= XZ_MT_DEFAULT_VERSION) {
		mt.threads = 1;
		mt.block_size = 0;	/* liblzma's default, as xz: 3 dictionaries */
		mt.timeout = 0;
		mt.filters = filters;
		mt.check = LZMA_CHECK_CRC32;
		rc = lzma_stream_encoder_mt(s, &mt);
	} else {
		rc = lzma_stream_encoder(s, filters, LZMA_CHECK_CRC32);
	}
	switch (rc) {
	case LZMA_OK:
		return MS_OK;
	case LZMA_MEM_ERROR:
		return MS_E_NOMEM;
	default:
		return MS_E_INTERNAL;
	}
}

/*
 * The xz command takes no size up front (in multi-threaded mode it records
 * each block's sizes once the block is done): @total_len is unused.
 */
static ms_err
xz_enc_new(void **st, uint64_t total_len)
{
	ms_err err;

	(void)total_len;
	err = xz_new(st);
	if (err != MS_OK) {
		return err;
	}
	err = xz_enc_start(*st);
	if (err != MS_OK) {
		xz_free(*st);
		*st = NULL;
	}
	return err;
}

static ms_err
xz_enc_reset(void *st, uint64_t total_len)
{
	(void)total_len;
	return xz_enc_start(st);
}

static ms_err
xz_enc_step(void *st, struct ms_zio *io, bool finish, bool *end)
{
	switch (xz_code(st, io, finish ? LZMA_FINISH : LZMA_RUN)) {
	case LZMA_OK:
	case LZMA_BUF_ERROR:
		return MS_OK;
	case LZMA_STREAM_END:
		*end = true;
		return MS_OK;
	case LZMA_MEM_ERROR:
		return MS_E_NOMEM;
	default:
		return MS_E_INTERNAL;
	}
}

static const char *
xz_lib_version(void)
{
	return lzma_version_string();
}

const struct ms_zcodec ms_zcodec_xz = {
	.fmt = MS_ZFMT_XZ,
	.lib_name = "xz",
	.lib_version = xz_lib_version,
	.dec_new = xz_dec_new,
	.dec_step = xz_dec_step,
	.dec_free = xz_free,
	.enc_new = xz_enc_new,
	.enc_reset = xz_enc_reset,
	.enc_step = xz_enc_step,
	.enc_free = xz_free,
};
