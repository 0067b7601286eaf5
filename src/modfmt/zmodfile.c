// SPDX-License-Identifier: GPL-2.0-only
/*
 * The container layer under the module reader and writer: a compressed
 * module is recognised by its magic bytes (and must be named as such),
 * decoded whole at open, read from memory, and compressed again on the
 * way into the temp file. Parses untrusted input.
 */
#include <errno.h>
#include <string.h>

#include "modfmt_internal.h"

/* "name says <by name>, content is <by bytes>", indexed [by name][by bytes]. */
static const char *const mismatch[4][4] = {
	[MS_ZFMT_NONE] = {
		[MS_ZFMT_XZ] = "the name has no .xz suffix, but the content is xz-compressed",
		[MS_ZFMT_ZSTD] = "the name has no .zst suffix, but the content is zstd-compressed",
		[MS_ZFMT_GZIP] = "the name has no .gz suffix, but the content is gzip-compressed",
	},
	[MS_ZFMT_XZ] = {
		[MS_ZFMT_NONE] = "the name says xz (.xz), but the content is not xz",
		[MS_ZFMT_ZSTD] = "the name says xz (.xz), but the content is zstd-compressed",
		[MS_ZFMT_GZIP] = "the name says xz (.xz), but the content is gzip-compressed",
	},
	[MS_ZFMT_ZSTD] = {
		[MS_ZFMT_NONE] = "the name says zstd (.zst), but the content is not zstd",
		[MS_ZFMT_XZ] = "the name says zstd (.zst), but the content is xz-compressed",
		[MS_ZFMT_GZIP] = "the name says zstd (.zst), but the content is gzip-compressed",
	},
	[MS_ZFMT_GZIP] = {
		[MS_ZFMT_NONE] = "the name says gzip (.gz), but the content is not gzip",
		[MS_ZFMT_XZ] = "the name says gzip (.gz), but the content is xz-compressed",
		[MS_ZFMT_ZSTD] = "the name says gzip (.gz), but the content is zstd-compressed",
	},
};

const char *
ms_modfile_zmismatch(enum ms_zfmt by_name, enum ms_zfmt content)
{
	if ((unsigned)by_name > MS_ZFMT_GZIP || (unsigned)content > MS_ZFMT_GZIP ||
	    mismatch[by_name][content] == NULL) {
		return "the name and the content disagree";
	}
	return mismatch[by_name][content];
}

static ms_err
zfail(struct ms_modfile *mf, const char *op, int e, const char *why, ms_err err)
{
	mf->op = op;
	mf->err_path = mf->path;
	mf->sys_errno = e;
	mf->why = why;
	return err;
}

ms_err
ms_modfile_zopen(struct ms_modfile *mf)
{
	uint8_t head[MS_ZFMT_MAGIC_MAX];
	uint64_t size = (uint64_t)mf->st.st_size;	/* 0 < size <= MS_MOD_SIZE_MAX */
	size_t want = size < sizeof(head) ? (size_t)size : sizeof(head);
	enum ms_zfmt by_bytes, by_name;
	struct ms_mod_zfail fail;
	uint64_t limit;
	size_t got = 0;
	int e = 0;
	ms_err err;

	mf->len = size;
	mf->zfmt = MS_ZFMT_NONE;
	mf->why = NULL;
	err = ms_pread_full(mf->fd, head, want, 0, &got, &e);
	if (err != MS_OK) {
		return zfail(mf, "read", e, NULL, MS_E_IO);
	}
	if (got != want) {
		return zfail(mf, "read", 0, NULL, MS_E_CHANGED);
	}
	by_bytes = ms_mod_zfmt_sniff(head, got);
	by_name = ms_mod_zfmt_of_name(mf->path);
	if (by_bytes != by_name) {
		return zfail(mf, "open", 0, ms_modfile_zmismatch(by_name, by_bytes),
			     MS_E_MALFORMED);
	}
	if (by_bytes == MS_ZFMT_NONE) {
		return MS_OK;
	}
	limit = mf->zlimit != 0 ? mf->zlimit : MS_ZMOD_LIMIT_DEFAULT;
	err = ms_mod_zdec_fd(mf->fd, size, by_bytes, limit, &mf->zimg, &fail);
	if (err == MS_E_IO) {
		return zfail(mf, fail.op != NULL ? fail.op : "read", fail.sys_errno, NULL, err);
	}
	if (err == MS_E_CHANGED) {
		return zfail(mf, "read", 0, NULL, err);
	}
	if (err != MS_OK) {
		return zfail(mf, "decompress", 0, fail.why, err);
	}
	if (mf->zimg.len == 0) {
		/* As for a plain module: the kernel needs a byte before the PKCS#7. */
		ms_mod_zimage_clear(&mf->zimg);
		return zfail(mf, "open", ENODATA, NULL, MS_E_ARG);
	}
	mf->len = mf->zimg.len;
	mf->zfmt = by_bytes;
	return MS_OK;
}

ms_err
ms_modfile_pread(struct ms_modfile *mf, uint8_t *buf, size_t len, uint64_t off, size_t *got,
		 int *sys_errno)
{
	size_t n = 0;

	if (mf->zfmt == MS_ZFMT_NONE) {
		return ms_pread_full(mf->fd, buf, len, off, got, sys_errno);
	}
	*sys_errno = 0;
	if (off < mf->len) {
		n = mf->len - off < (uint64_t)len ? (size_t)(mf->len - off) : len;
		memcpy(buf, mf->zimg.p + off, n);
	}
	*got = n;
	return MS_OK;
}

static ms_err
to_temp_file(void *ctx, const uint8_t *p, size_t len)
{
	return ms_atomic_write(ctx, p, len);
}

ms_err
ms_modfile_zwrite(struct ms_modfile *mf, struct ms_atomic *a, uint64_t prefix_len,
		  const struct ms_span *tail, size_t n_tail)
{
	struct ms_mod_zsink sink = { to_temp_file, a };
	struct ms_mod_zenc *e = NULL;
	uint64_t total = prefix_len;
	ms_err err = MS_E_INTERNAL;
	size_t i;

	/* The caller checked 0 < prefix_len <= mf->len, the image's length. */
	for (i = 0; i < n_tail; i++) {
		total += tail[i].len;	/* a few KiB on top of at most INT_MAX */
	}
	if (mf->zpool != NULL) {
		err = ms_mod_zpool_take(mf->zpool, mf->zfmt, total, &e);
	} else {
		err = ms_mod_zenc_new(mf->zfmt, total, &e);
	}
	if (err == MS_OK) {
		err = ms_mod_zenc_update(e, mf->zimg.p, (size_t)prefix_len, &sink);
	}
	for (i = 0; i < n_tail && err == MS_OK; i++) {
		err = ms_mod_zenc_update(e, tail[i].p, tail[i].len, &sink);
	}
	if (err == MS_OK) {
		err = ms_mod_zenc_final(e, &sink);
	}
	if (mf->zpool != NULL) {
		ms_mod_zpool_give(mf->zpool, e);
	} else {
		ms_mod_zenc_free(e);
	}
	/* A failed write has set a->op; the encoder's own failures have not. */
	if (err != MS_OK && err != MS_E_IO) {
		a->op = "compress";
		a->sys_errno = err == MS_E_NOMEM ? ENOMEM : 0;
	}
	return err;
}
