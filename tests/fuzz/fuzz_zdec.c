// SPDX-License-Identifier: GPL-2.0-only
/*
 * The decoder fuzz targets' driver: one container decoded by the wrapper
 * of src/modfmt/zmod.c in pieces, in one piece and from a file, with the
 * oracles that the verdict and the bytes do not depend on how the input
 * is cut or read, that the limit holds, and that what is accepted comes
 * back unchanged through our encoder. Test code only.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "fuzz_zdec.h"

/* Small, so that bombs are found at once: 1 MiB of output. */
#define LIMIT ((uint64_t)1 << 20)
/* Only outputs this small go through the encoder again (an xz encoder is slow to set up). */
#define REENCODE_MAX ((size_t)64 * 1024)

struct out_buf {
	uint8_t *p;
	size_t len;
	size_t cap;
};

static ms_err
buf_write(void *ctx, const uint8_t *p, size_t len)
{
	struct out_buf *b = ctx;

	if (len > b->cap - b->len) {
		size_t cap = (b->len + len) * 2;
		uint8_t *q = realloc(b->p, cap);

		if (q == NULL) {
			fuzz_die("realloc");
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	return MS_OK;
}

static ms_err
decode(enum ms_zfmt fmt, const uint8_t *p, size_t len, size_t piece, struct ms_mod_zimage *img)
{
	struct ms_mod_zdec *d = NULL;
	ms_err err;

	if (ms_mod_zdec_new(fmt, LIMIT, 0, &d) != MS_OK) {
		fuzz_die("ms_mod_zdec_new");
	}
	err = MS_OK;
	for (size_t off = 0; off < len && err == MS_OK; off += piece) {
		err = ms_mod_zdec_feed(d, p + off, len - off < piece ? len - off : piece);
	}
	if (err == MS_OK) {
		err = ms_mod_zdec_finish(d, img);
	}
	if (err != MS_OK && ms_mod_zdec_why(d)[0] == '\0') {
		fuzz_die("a refused stream without a reason");
	}
	if (err != MS_OK && err != MS_E_MALFORMED && err != MS_E_UNSUPPORTED &&
	    err != MS_E_NOMEM) {
		fuzz_die("unexpected decoder error");
	}
	ms_mod_zdec_free(d);
	return err;
}

static void
same_result(ms_err a, const struct ms_mod_zimage *ia, ms_err b, const struct ms_mod_zimage *ib,
	    const char *what)
{
	if (a != b) {
		fuzz_die(what);
	}
	if (a == MS_OK && (ia->len != ib->len ||
			   (ia->len > 0 && memcmp(ia->p, ib->p, ia->len) != 0))) {
		fuzz_die(what);
	}
}

/* What was accepted goes through our encoder and back unchanged. */
static void
round_trip(enum ms_zfmt fmt, const struct ms_mod_zimage *img)
{
	struct out_buf z = { NULL, 0, 0 };
	struct ms_mod_zsink sink = { buf_write, &z };
	struct ms_mod_zenc *e = NULL;
	struct ms_mod_zimage back = { NULL, 0 };

	if (ms_mod_zenc_new(fmt, img->len, &e) != MS_OK ||
	    ms_mod_zenc_update(e, img->p, img->len, &sink) != MS_OK ||
	    ms_mod_zenc_final(e, &sink) != MS_OK) {
		fuzz_die("encoding what was decoded failed");
	}
	ms_mod_zenc_free(e);
	if (ms_mod_zfmt_sniff(z.p, z.len) != fmt) {
		fuzz_die("our encoder's output has another format's magic");
	}
	if (decode(fmt, z.p, z.len, z.len, &back) != MS_OK || back.len != img->len ||
	    (img->len > 0 && memcmp(back.p, img->p, img->len) != 0)) {
		fuzz_die("round trip through our encoder changed the module");
	}
	ms_mod_zimage_clear(&back);
	free(z.p);
}

void
fuzz_zdec_run(enum ms_zfmt fmt, const uint8_t *data, size_t size)
{
	struct ms_mod_zimage a = { NULL, 0 }, b = { NULL, 0 }, c = { NULL, 0 };
	struct ms_mod_zfail fail;
	const uint8_t *p = NULL;
	size_t len = 0, piece = 0;
	ms_err ea, eb, ec;
	int fd = -1;

	if (size < 1) {
		return;
	}
	piece = (size_t)data[0] * 13 + 1;
	p = data + 1;
	len = size - 1;
	ea = decode(fmt, p, len, piece, &a);
	eb = decode(fmt, p, len, len == 0 ? 1 : len, &b);
	same_result(ea, &a, eb, &b, "the verdict depends on how the input is cut");
	/* From a file, as modsign reads a module. */
	fd = open(fuzz_memfd_path(p, len), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fuzz_die("open memfd");
	}
	ec = ms_mod_zdec_fd(fd, len, fmt, LIMIT, &c, &fail);
	close(fd);
	same_result(ea, &a, ec, &c, "a file and memory are decoded differently");
	if (ec != MS_OK && fail.why == NULL) {
		fuzz_die("a file refused without a reason");
	}
	if (ea == MS_OK) {
		if (a.len > LIMIT) {
			fuzz_die("output past the limit accepted");
		}
		if (ms_mod_zfmt_sniff(p, len) != fmt) {
			fuzz_die("accepted a stream without the format's magic");
		}
		if (a.len <= REENCODE_MAX) {
			round_trip(fmt, &a);
		}
	}
	ms_mod_zimage_clear(&a);
	ms_mod_zimage_clear(&b);
	ms_mod_zimage_clear(&c);
}
