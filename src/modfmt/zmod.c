// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compressed module containers: the format by magic bytes and by name,
 * and the loops that drive a codec (zcodec_*.c) over a whole stream,
 * decoding into memory under a size limit and encoding into a sink.
 * Parses untrusted input.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modfmt_internal.h"
#include "zcodec.h"

/* Input read from a file, and encoder output, in pieces of this size. */
#define ZCHUNK ((size_t)64 * 1024)
/* First output buffer when nothing better is known: modules shrink 4-6x in xz. */
#define ZRATIO_GUESS 4
#define ZFIRST_MIN ((size_t)64 * 1024)

static const uint8_t magic_xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00 };
static const uint8_t magic_zstd[] = { 0x28, 0xb5, 0x2f, 0xfd };	/* 0xFD2FB528 LE */
static const uint8_t magic_gzip[] = { 0x1f, 0x8b };

/* Stands for a NULL input of no bytes: the codecs add offsets to it (NULL + 0 is undefined). */
static const uint8_t no_input[1];

static bool
starts_with(const uint8_t *p, size_t len, const uint8_t *magic, size_t magic_len)
{
	return len >= magic_len && memcmp(p, magic, magic_len) == 0;
}

enum ms_zfmt
ms_mod_zfmt_sniff(const uint8_t *p, size_t len)
{
	if (p == NULL) {
		return MS_ZFMT_NONE;
	}
	if (starts_with(p, len, magic_xz, sizeof(magic_xz))) {
		return MS_ZFMT_XZ;
	}
	if (starts_with(p, len, magic_zstd, sizeof(magic_zstd))) {
		return MS_ZFMT_ZSTD;
	}
	if (starts_with(p, len, magic_gzip, sizeof(magic_gzip))) {
		return MS_ZFMT_GZIP;
	}
	return MS_ZFMT_NONE;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s);
	size_t m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The compression suffixes kbuild appends after ".ko". */
static const struct {
	const char *suffix;
	enum ms_zfmt fmt;
} suffixes[] = {
	{ ".xz", MS_ZFMT_XZ },
	{ ".zst", MS_ZFMT_ZSTD },
	{ ".gz", MS_ZFMT_GZIP },
};

#define N_SUFFIXES (sizeof(suffixes) / sizeof(suffixes[0]))

enum ms_zfmt
ms_mod_zfmt_of_name(const char *path)
{
	if (path == NULL) {
		return MS_ZFMT_NONE;
	}
	for (size_t i = 0; i < N_SUFFIXES; i++) {
		if (ends_with(path, suffixes[i].suffix)) {
			return suffixes[i].fmt;
		}
	}
	return MS_ZFMT_NONE;
}

const char *
ms_mod_zfmt_name(enum ms_zfmt fmt)
{
	switch (fmt) {
	case MS_ZFMT_XZ:
		return "xz";
	case MS_ZFMT_ZSTD:
		return "zstd";
	case MS_ZFMT_GZIP:
		return "gzip";
	case MS_ZFMT_NONE:
		break;
	}
	return "uncompressed";
}

/* Length of @name without its compression suffix (all of it for a plain name). */
static size_t
stem_len(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < N_SUFFIXES; i++) {
		if (ends_with(name, suffixes[i].suffix)) {
			return n - strlen(suffixes[i].suffix);
		}
	}
	return n;
}

bool
ms_mod_zfmt_is_module_name(const char *name)
{
	size_t n;

	if (name == NULL) {
		return false;
	}
	n = stem_len(name);
	return n >= 3 && memcmp(name + n - 3, ".ko", 3) == 0;
}

ms_err
ms_mod_zfmt_p7s_name(const char *module, char *out, size_t cap)
{
	size_t n;
	int w;

	if (module == NULL || out == NULL) {
		return MS_E_ARG;
	}
	n = stem_len(module);
	if (n > (size_t)INT_MAX) {
		return MS_E_ARG;
	}
	w = snprintf(out, cap, "%.*s.p7s", (int)n, module);
	if (w < 0 || (size_t)w >= cap) {
		return MS_E_NOSPACE;
	}
	return MS_OK;
}

ms_err
ms_mod_zlimit_parse(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;

	if (s == NULL || out == NULL || *s < '0' || *s > '9') {
		return MS_E_ARG;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > MS_MOD_SIZE_MAX) {
			return MS_E_ARG;
		}
	}
	if (*s == 'K' || *s == 'k') {
		shift = 10;
	} else if (*s == 'M' || *s == 'm') {
		shift = 20;
	} else if (*s == 'G' || *s == 'g') {
		shift = 30;
	}
	if (shift != 0) {
		s++;
	}
	/* v <= INT_MAX < 2^31, so v << 30 fits 64 bits. */
	v <<= shift;
	if (*s != '\0' || v == 0 || v > MS_MOD_SIZE_MAX) {
		return MS_E_ARG;
	}
	*out = v;
	return MS_OK;
}

void
ms_mod_zimage_clear(struct ms_mod_zimage *img)
{
	if (img == NULL) {
		return;
	}
	free(img->p);
	img->p = NULL;
	img->len = 0;
}

/* The magic bytes a stream of @fmt starts with. */
static struct ms_span
magic_of(enum ms_zfmt fmt)
{
	struct ms_span m = { NULL, 0 };

	switch (fmt) {
	case MS_ZFMT_XZ:
		m.p = magic_xz;
		m.len = sizeof(magic_xz);
		break;
	case MS_ZFMT_ZSTD:
		m.p = magic_zstd;
		m.len = sizeof(magic_zstd);
		break;
	case MS_ZFMT_GZIP:
		m.p = magic_gzip;
		m.len = sizeof(magic_gzip);
		break;
	case MS_ZFMT_NONE:
		break;
	}
	return m;
}

static const struct ms_zcodec *
codec_of(enum ms_zfmt fmt)
{
	switch (fmt) {
	case MS_ZFMT_XZ:
		return &ms_zcodec_xz;
	case MS_ZFMT_ZSTD:
		return &ms_zcodec_zstd;
	case MS_ZFMT_GZIP:
		return &ms_zcodec_gzip;
	case MS_ZFMT_NONE:
		break;
	}
	return NULL;
}

ms_err
ms_mod_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len)
{
	static const enum ms_zfmt fmts[] = { MS_ZFMT_XZ, MS_ZFMT_ZSTD, MS_ZFMT_GZIP };
	const struct ms_zcodec *codec;
	ms_err err = MS_E_INTERNAL;

	*out_len = sizeof(fmts) / sizeof(fmts[0]);
	if (out == NULL) {
		return MS_OK;
	}
	if (cap < *out_len) {
		return MS_E_NOSPACE;
	}
	for (size_t i = 0; i < *out_len; i++) {
		codec = codec_of(fmts[i]);
		if (codec == NULL) {
			return MS_E_INTERNAL;
		}
		err = ms_libver_set(&out[i], codec->lib_name, codec->lib_version(), false);
		if (err != MS_OK) {
			return err;
		}
	}
	return MS_OK;
}

/* ---- decoding -------------------------------------------------------- */

struct ms_mod_zdec {
	const struct ms_zcodec *codec;
	void *st;
	uint64_t limit;		/* <= MS_MOD_SIZE_MAX, so limit + 1 fits a size_t */
	uint8_t *buf;
	size_t len;		/* decoded so far, <= limit */
	size_t cap;		/* <= limit + 1 */
	uint64_t fed;		/* input bytes given */
	struct ms_span magic;	/* what the first input bytes must be */
	bool ended;		/* the stream's last byte was decoded */
	ms_err err;		/* sticky: the first failure */
	const char *why;
};

static ms_err
dec_fail(struct ms_mod_zdec *d, ms_err err, const char *why)
{
	d->err = err;
	d->why = why;
	return err;
}

ms_err
ms_mod_zdec_new(enum ms_zfmt fmt, uint64_t limit, uint64_t size_hint, struct ms_mod_zdec **out)
{
	const struct ms_zcodec *codec = codec_of(fmt);
	struct ms_mod_zdec *d = NULL;
	ms_err err = MS_E_INTERNAL;

	if (out == NULL) {
		return MS_E_ARG;
	}
	*out = NULL;
	if (codec == NULL || limit == 0 || limit > MS_MOD_SIZE_MAX) {
		return MS_E_ARG;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		return MS_E_NOMEM;
	}
	d->codec = codec;
	d->magic = magic_of(fmt);
	d->limit = limit;
	d->why = "";
	/*
	 * One byte more than expected: a stream that fills the buffer exactly
	 * still has room to show its end, and needs no second buffer.
	 */
	d->cap = size_hint > 0 && size_hint < limit ? (size_t)size_hint + 1 : ZFIRST_MIN;
	if (d->cap < ZFIRST_MIN) {
		d->cap = ZFIRST_MIN;
	}
	if (d->cap > (size_t)limit + 1) {
		d->cap = (size_t)limit + 1;
	}
	d->buf = malloc(d->cap);
	if (d->buf == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	err = codec->dec_new(&d->st);
	if (err != MS_OK) {
		goto out;
	}
	*out = d;
	d = NULL;
out:
	ms_mod_zdec_free(d);
	return err;
}

static const char limit_why[] =
	"decompresses to more than the module size limit (--max-module-size)";

/* Room for more output: double the buffer, up to limit + 1 bytes. */
static ms_err
dec_grow(struct ms_mod_zdec *d)
{
	size_t most = (size_t)d->limit + 1;
	size_t cap = d->cap > most / 2 ? most : 2 * d->cap;
	uint8_t *p = NULL;

	if (d->cap >= most) {
		return dec_fail(d, MS_E_UNSUPPORTED, limit_why);
	}
	p = realloc(d->buf, cap);
	if (p == NULL) {
		return dec_fail(d, MS_E_NOMEM, "out of memory for the decompressed module");
	}
	d->buf = p;
	d->cap = cap;
	return MS_OK;
}

static const char *
magic_why(enum ms_zfmt fmt)
{
	switch (fmt) {
	case MS_ZFMT_XZ:
		return "xz: does not start with the xz magic bytes";
	case MS_ZFMT_ZSTD:
		return "zstd: does not start with the zstd frame magic bytes";
	default:
		return "gzip: does not start with the gzip magic bytes";
	}
}

static const char *
trailing_why(enum ms_zfmt fmt)
{
	switch (fmt) {
	case MS_ZFMT_XZ:
		return "xz: bytes after the end of the stream "
		       "(padding, a second stream or garbage)";
	case MS_ZFMT_ZSTD:
		return "zstd: bytes after the end of the frame (a second frame or garbage)";
	default:
		return "gzip: bytes after the end of the stream (a second member or garbage)";
	}
}

ms_err
ms_mod_zdec_feed(struct ms_mod_zdec *d, const uint8_t *in, size_t len)
{
	size_t pos = 0;

	if (d == NULL || (in == NULL && len > 0)) {
		return MS_E_ARG;
	}
	if (d->err != MS_OK) {
		return d->err;
	}
	if (in == NULL) {
		in = no_input;
	}
	/*
	 * The format's own magic, checked here rather than left to the
	 * library: libzstd also decodes legacy (v0.5-v0.7) frames, with
	 * other magics, which neither the kernel nor the zstd command makes.
	 */
	for (size_t i = 0; i < len && d->fed + i < d->magic.len; i++) {
		if (in[i] != d->magic.p[d->fed + i]) {
			return dec_fail(d, MS_E_MALFORMED, magic_why(d->codec->fmt));
		}
	}
	d->fed += len;
	for (;;) {
		struct ms_zio io;
		const char *why = "";
		bool progress = false;
		ms_err err;

		if (d->ended) {
			if (pos < len) {
				return dec_fail(d, MS_E_MALFORMED, trailing_why(d->codec->fmt));
			}
			return MS_OK;
		}
		if (d->len == d->cap) {
			err = dec_grow(d);
			if (err != MS_OK) {
				return err;
			}
		}
		io.in = in;
		io.in_len = len;
		io.in_used = pos;
		io.out = d->buf;
		io.out_cap = d->cap;
		io.out_len = d->len;
		err = d->codec->dec_step(d->st, &io, &d->ended, &why);
		if (io.in_used < pos || io.in_used > len || io.out_len < d->len ||
		    io.out_len > d->cap) {
			return dec_fail(d, MS_E_INTERNAL, "decoder went outside its buffers");
		}
		progress = io.in_used != pos || io.out_len != d->len;
		pos = io.in_used;
		d->len = io.out_len;
		if (err != MS_OK) {
			return dec_fail(d, err, why);
		}
		if (d->len > d->limit) {
			return dec_fail(d, MS_E_UNSUPPORTED, limit_why);
		}
		/*
		 * With room left in the output, a decoder stops only when it
		 * needs more input: every library here flushes what it can.
		 */
		if (!d->ended && d->len < d->cap && (pos == len || !progress)) {
			return MS_OK;
		}
	}
}

ms_err
ms_mod_zdec_finish(struct ms_mod_zdec *d, struct ms_mod_zimage *out)
{
	if (d == NULL || out == NULL) {
		return MS_E_ARG;
	}
	if (d->err != MS_OK) {
		return d->err;
	}
	if (d->fed == 0) {
		return dec_fail(d, MS_E_MALFORMED, "empty file");
	}
	if (!d->ended) {
		switch (d->codec->fmt) {
		case MS_ZFMT_XZ:
			return dec_fail(d, MS_E_MALFORMED, "xz: truncated stream");
		case MS_ZFMT_ZSTD:
			return dec_fail(d, MS_E_MALFORMED, "zstd: truncated frame");
		default:
			return dec_fail(d, MS_E_MALFORMED, "gzip: truncated stream");
		}
	}
	out->p = d->buf;
	out->len = d->len;
	d->buf = NULL;
	d->len = 0;
	d->cap = 0;
	return MS_OK;
}

const char *
ms_mod_zdec_why(const struct ms_mod_zdec *d)
{
	return d != NULL && d->why != NULL ? d->why : "";
}

void
ms_mod_zdec_free(struct ms_mod_zdec *d)
{
	if (d == NULL) {
		return;
	}
	if (d->st != NULL) {
		d->codec->dec_free(d->st);
	}
	free(d->buf);
	free(d);
}

ms_err
ms_mod_zdec_fd(int fd, uint64_t file_len, enum ms_zfmt fmt, uint64_t limit,
	       struct ms_mod_zimage *out, struct ms_mod_zfail *fail)
{
	struct ms_mod_zdec *d = NULL;
	uint8_t *chunk = NULL;
	uint64_t off = 0;
	uint64_t hint = 0;
	size_t got = 0;
	uint8_t probe = 0;
	int e = 0;
	ms_err err = MS_E_INTERNAL;

	if (fail == NULL || out == NULL) {
		return MS_E_ARG;
	}
	fail->op = NULL;
	fail->sys_errno = 0;
	fail->why = NULL;
	hint = file_len <= limit / ZRATIO_GUESS ? file_len * ZRATIO_GUESS : limit;
	err = ms_mod_zdec_new(fmt, limit, hint, &d);
	if (err != MS_OK) {
		goto out;
	}
	chunk = malloc(ZCHUNK);
	if (chunk == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	while (off < file_len) {
		size_t want = file_len - off < ZCHUNK ? (size_t)(file_len - off) : ZCHUNK;

		err = ms_pread_full(fd, chunk, want, off, &got, &e);
		if (err != MS_OK) {
			fail->op = "read";
			fail->sys_errno = e;
			goto out;
		}
		if (got != want) {
			err = MS_E_CHANGED;	/* shorter than at open */
			goto out;
		}
		off += got;
		err = ms_mod_zdec_feed(d, chunk, got);
		if (err != MS_OK) {
			fail->why = ms_mod_zdec_why(d);
			goto out;
		}
	}
	/* One byte more than at open means the file grew. */
	err = ms_pread_full(fd, &probe, 1, file_len, &got, &e);
	if (err != MS_OK) {
		fail->op = "read";
		fail->sys_errno = e;
		goto out;
	}
	if (got != 0) {
		err = MS_E_CHANGED;
		goto out;
	}
	err = ms_mod_zdec_finish(d, out);
	if (err != MS_OK) {
		fail->why = ms_mod_zdec_why(d);
	}
out:
	free(chunk);
	ms_mod_zdec_free(d);
	return err;
}

/* ---- encoding -------------------------------------------------------- */

struct ms_mod_zenc {
	const struct ms_zcodec *codec;
	void *st;
	uint64_t total;		/* input bytes promised */
	uint64_t fed;		/* input bytes given */
	bool ended;
	unsigned slot;		/* its place in a pool (ms_mod_zpool_take()) */
	uint8_t out[ZCHUNK];
};

ms_err
ms_mod_zenc_new(enum ms_zfmt fmt, uint64_t total_len, struct ms_mod_zenc **out)
{
	const struct ms_zcodec *codec = codec_of(fmt);
	struct ms_mod_zenc *e = NULL;
	ms_err err;

	if (out == NULL) {
		return MS_E_ARG;
	}
	*out = NULL;
	if (codec == NULL) {
		return MS_E_ARG;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		return MS_E_NOMEM;
	}
	e->codec = codec;
	e->total = total_len;
	err = codec->enc_new(&e->st, total_len);
	if (err != MS_OK) {
		free(e);
		return err;
	}
	*out = e;
	return MS_OK;
}

/* Steps until the input is taken and (with @finish) the stream ended; output to @sink. */
static ms_err
enc_run(struct ms_mod_zenc *e, const uint8_t *p, size_t len, bool finish,
	const struct ms_mod_zsink *sink)
{
	struct ms_zio io = { p, len, 0, e->out, sizeof(e->out), 0 };
	ms_err err;

	for (;;) {
		size_t used = io.in_used;

		io.out_len = 0;
		err = e->codec->enc_step(e->st, &io, finish, &e->ended);
		if (err != MS_OK) {
			return err;
		}
		if (io.in_used < used || io.in_used > len || io.out_len > sizeof(e->out)) {
			return MS_E_INTERNAL;
		}
		if (io.out_len > 0) {
			err = sink->write(sink->ctx, e->out, io.out_len);
			if (err != MS_OK) {
				return err;
			}
		}
		/* A full output buffer may mean more is pending. */
		if (io.out_len == sizeof(e->out)) {
			continue;
		}
		if (finish ? e->ended : io.in_used == len) {
			return MS_OK;
		}
		if (io.in_used == used && io.out_len == 0) {
			return MS_E_INTERNAL;	/* no progress with input and room */
		}
	}
}

ms_err
ms_mod_zenc_update(struct ms_mod_zenc *e, const uint8_t *p, size_t len,
		   const struct ms_mod_zsink *sink)
{
	if (e == NULL || sink == NULL || sink->write == NULL || (p == NULL && len > 0) ||
	    e->ended) {
		return MS_E_ARG;
	}
	if (len > e->total - e->fed) {
		return MS_E_ARG;
	}
	if (len == 0) {
		return MS_OK;
	}
	e->fed += len;
	return enc_run(e, p, len, false, sink);
}

ms_err
ms_mod_zenc_final(struct ms_mod_zenc *e, const struct ms_mod_zsink *sink)
{
	if (e == NULL || sink == NULL || sink->write == NULL || e->ended) {
		return MS_E_ARG;
	}
	if (e->fed != e->total) {
		return MS_E_ARG;
	}
	return enc_run(e, no_input, 0, true, sink);
}

void
ms_mod_zenc_free(struct ms_mod_zenc *e)
{
	if (e == NULL) {
		return;
	}
	if (e->st != NULL) {
		e->codec->enc_free(e->st);
	}
	free(e);
}

/* ---- the run's encoders -------------------------------------------------- */

#define N_FMTS (MS_ZFMT_GZIP + 1)

struct zslot {
	bool busy;
	struct ms_mod_zenc *enc[N_FMTS];	/* made on first use, kept */
};

struct ms_mod_zpool {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	unsigned n;
	struct zslot *slot;	/* n of them */
};

ms_err
ms_mod_zpool_new(unsigned n, struct ms_mod_zpool **out)
{
	struct ms_mod_zpool *p = NULL;

	if (out == NULL) {
		return MS_E_ARG;
	}
	*out = NULL;
	if (n == 0) {
		return MS_E_ARG;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL) {
		return MS_E_NOMEM;
	}
	p->slot = calloc(n, sizeof(*p->slot));
	if (p->slot == NULL) {
		free(p);
		return MS_E_NOMEM;
	}
	if (pthread_mutex_init(&p->lock, NULL) != 0) {
		free(p->slot);
		free(p);
		return MS_E_NOMEM;
	}
	if (pthread_cond_init(&p->freed, NULL) != 0) {
		pthread_mutex_destroy(&p->lock);
		free(p->slot);
		free(p);
		return MS_E_NOMEM;
	}
	p->n = n;
	*out = p;
	return MS_OK;
}

static void
slot_release(struct ms_mod_zpool *p, unsigned i)
{
	pthread_mutex_lock(&p->lock);
	p->slot[i].busy = false;
	pthread_mutex_unlock(&p->lock);
	pthread_cond_signal(&p->freed);
}

ms_err
ms_mod_zpool_take(struct ms_mod_zpool *p, enum ms_zfmt fmt, uint64_t total_len,
		  struct ms_mod_zenc **out)
{
	struct ms_mod_zenc **e = NULL;
	unsigned i = 0;
	ms_err err = MS_E_INTERNAL;

	if (out == NULL) {
		return MS_E_ARG;
	}
	*out = NULL;
	if (p == NULL || codec_of(fmt) == NULL) {
		return MS_E_ARG;
	}
	pthread_mutex_lock(&p->lock);
	for (;;) {
		i = 0;
		while (i < p->n && p->slot[i].busy) {
			i++;
		}
		if (i < p->n) {
			break;
		}
		pthread_cond_wait(&p->freed, &p->lock);
	}
	p->slot[i].busy = true;
	pthread_mutex_unlock(&p->lock);
	/* The slot is ours: its encoders are touched outside the lock. */
	e = &p->slot[i].enc[fmt];
	if (*e != NULL) {
		err = (*e)->codec->enc_reset((*e)->st, total_len);
		if (err == MS_OK) {
			(*e)->total = total_len;
			(*e)->fed = 0;
			(*e)->ended = false;
		} else {
			ms_mod_zenc_free(*e);
			*e = NULL;
		}
	}
	if (*e == NULL) {
		/* Through a local: gcc -fanalyzer loses track of a pointer made straight into the slot. */
		struct ms_mod_zenc *made = NULL;

		err = ms_mod_zenc_new(fmt, total_len, &made);
		*e = made;
	}
	if (err != MS_OK) {
		slot_release(p, i);
		return err;
	}
	(*e)->slot = i;
	*out = *e;
	return MS_OK;
}

void
ms_mod_zpool_give(struct ms_mod_zpool *p, struct ms_mod_zenc *e)
{
	if (p == NULL || e == NULL || e->slot >= p->n) {
		return;
	}
	slot_release(p, e->slot);
}

void
ms_mod_zpool_free(struct ms_mod_zpool *p)
{
	if (p == NULL) {
		return;
	}
	for (unsigned i = 0; i < p->n; i++) {
		for (size_t f = 0; f < N_FMTS; f++) {
			ms_mod_zenc_free(p->slot[i].enc[f]);
		}
	}
	pthread_cond_destroy(&p->freed);
	pthread_mutex_destroy(&p->lock);
	free(p->slot);
	free(p);
}
