/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compressed modules (.ko.xz, .ko.zst, .ko.gz): the container around a
 * module's ELF bytes. Which format a file is in (by its magic bytes, and
 * what its name says), decoding a whole container into memory with a size
 * limit, and encoding one again the way kbuild's `make modules_install`
 * does, so that the kernel's own decompressor (CONFIG_MODULE_DECOMPRESS)
 * and kmod take it.
 */
#ifndef MS_MODFMT_ZMOD_H
#define MS_MODFMT_ZMOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/ms_common.h"

enum ms_zfmt {
	MS_ZFMT_NONE = 0,	/* a plain module: the ELF bytes themselves */
	MS_ZFMT_XZ,
	MS_ZFMT_ZSTD,
	MS_ZFMT_GZIP,
};

/*
 * The default ceiling on a decompressed module (--max-module-size): far
 * above any real module (Debian's largest, bcachefs, is 7 MiB), far below
 * what a small xz or zstd file can claim to expand to.
 */
#define MS_ZMOD_LIMIT_DEFAULT ((uint64_t)256 << 20)

/**
 * ms_mod_zlimit_parse() - the argument of --max-module-size: a decimal
 * number of bytes, or of KiB, MiB or GiB with a K, M or G after it; from
 * 1 to INT_MAX (what finit_module(2) reads). Parses untrusted input.
 * Return: MS_OK, MS_E_ARG (anything else: *@out untouched).
 */
ms_err ms_mod_zlimit_parse(const char *s, uint64_t *out) MS_MUST_CHECK;

/* The most magic bytes ms_mod_zfmt_sniff() looks at. */
#define MS_ZFMT_MAGIC_MAX 6

/**
 * ms_mod_zfmt_sniff() - the container format of a file that starts with
 * the @len bytes at @p (at least MS_ZFMT_MAGIC_MAX of them, or the whole
 * file): xz (FD 37 7A 58 5A 00), zstd (28 B5 2F FD), gzip (1F 8B), else
 * MS_ZFMT_NONE. Parses untrusted input.
 */
enum ms_zfmt ms_mod_zfmt_sniff(const uint8_t *p, size_t len);

/**
 * ms_mod_zfmt_of_name() - the format a module's name says: ".xz", ".zst"
 * and ".gz" at its end name a compressed module, anything else (".ko", or
 * no suffix at all, as sign-file accepts) a plain one.
 */
enum ms_zfmt ms_mod_zfmt_of_name(const char *path);

/** ms_mod_zfmt_name() - "xz", "zstd", "gzip" or "uncompressed"; static, never NULL. */
const char *ms_mod_zfmt_name(enum ms_zfmt fmt);

/**
 * ms_mod_zfmt_is_module_name() - whether `-r` takes the file @name: it
 * ends with ".ko", ".ko.xz", ".ko.zst" or ".ko.gz", as kbuild names
 * modules (CONFIG_MODULE_COMPRESS_*).
 */
bool ms_mod_zfmt_is_module_name(const char *name);

/**
 * ms_mod_zfmt_p7s_name() - where `-p` and `-d` put the detached signature
 * of @module: "<module>.p7s" for a plain module, as sign-file does; for a
 * compressed one the name without its compression suffix, then ".p7s"
 * ("foo.ko.xz" gives "foo.ko.p7s"): kbuild signs foo.ko and only then
 * compresses it, so that is the name sign-file -p leaves in a kernel build.
 * Return: MS_OK, MS_E_NOSPACE (@cap too small), MS_E_ARG.
 */
ms_err ms_mod_zfmt_p7s_name(const char *module, char *out, size_t cap) MS_MUST_CHECK;

/* A decompressed module: @len bytes at @p, malloc'd, owned by whoever holds the struct. */
struct ms_mod_zimage {
	uint8_t *p;
	size_t len;
};

/** ms_mod_zimage_clear() - free the bytes; a second call is a no-op. */
void ms_mod_zimage_clear(struct ms_mod_zimage *img);

/*
 * A streaming decoder of one container into memory. Owned by the caller
 * (ms_mod_zdec_new/ms_mod_zdec_free); not shared between threads.
 */
struct ms_mod_zdec;

/**
 * ms_mod_zdec_new() - a decoder of one @fmt stream (not MS_ZFMT_NONE)
 * whose output may not exceed @limit bytes (at most INT_MAX, what
 * finit_module(2) reads). @size_hint, when not 0, is the expected output
 * size, used only to size the first buffer.
 * Return: MS_OK, MS_E_ARG, MS_E_NOMEM.
 */
ms_err ms_mod_zdec_new(enum ms_zfmt fmt, uint64_t limit, uint64_t size_hint,
		       struct ms_mod_zdec **out) MS_MUST_CHECK;

/**
 * ms_mod_zdec_feed() - the next @len input bytes. The container must be
 * exactly one stream (one xz stream, one zstd frame, one gzip member):
 * a byte after its end is refused, be it padding, garbage or a second
 * stream. Parses untrusted input.
 * Return: MS_OK; MS_E_MALFORMED (corrupt, bytes after the end, a failed
 * integrity check); MS_E_UNSUPPORTED (the output would pass the limit, or
 * decoding needs more memory than MS_ZDEC_MEM_MAX, or a feature the
 * library lacks); MS_E_NOMEM. After a failure the decoder only answers
 * ms_mod_zdec_why() and ms_mod_zdec_free().
 */
ms_err ms_mod_zdec_feed(struct ms_mod_zdec *d, const uint8_t *in, size_t len) MS_MUST_CHECK;

/**
 * ms_mod_zdec_finish() - the input is over: hand the decoded bytes to
 * @out (the caller frees them with ms_mod_zimage_clear()).
 * Return: MS_OK; MS_E_MALFORMED (the stream is truncated, or was empty),
 * or the error an earlier feed returned. @out is untouched on failure.
 */
ms_err ms_mod_zdec_finish(struct ms_mod_zdec *d, struct ms_mod_zimage *out) MS_MUST_CHECK;

/**
 * ms_mod_zdec_why() - after a failure, a static reason naming the format
 * ("xz: truncated stream", "gzip: trailing bytes after the stream", ...);
 * "" before one.
 */
const char *ms_mod_zdec_why(const struct ms_mod_zdec *d);

/** ms_mod_zdec_free() - release the decoder and any bytes not handed out. NULL is a no-op. */
void ms_mod_zdec_free(struct ms_mod_zdec *d);

/* Where a whole-file decode failed: the call and errno, or a reason. */
struct ms_mod_zfail {
	const char *op;		/* "read", or NULL for a format error */
	int sys_errno;
	const char *why;	/* static, for format errors; NULL otherwise */
};

/**
 * ms_mod_zdec_fd() - decode the whole container of @file_len bytes that
 * the open descriptor @fd holds, from offset 0 (pread: the file offset is
 * not moved), with the rules of ms_mod_zdec_feed(). Memory: the input is
 * read in chunks; only the output is whole. A file shorter or longer
 * than @file_len is MS_E_CHANGED.
 * Return: MS_OK (*@out filled, owned by the caller), MS_E_IO, MS_E_CHANGED,
 * MS_E_MALFORMED, MS_E_UNSUPPORTED, MS_E_NOMEM, MS_E_ARG; *@fail says more.
 */
ms_err ms_mod_zdec_fd(int fd, uint64_t file_len, enum ms_zfmt fmt, uint64_t limit,
		      struct ms_mod_zimage *out, struct ms_mod_zfail *fail) MS_MUST_CHECK;

/* Where an encoder's output goes, in order; a failure ends the encoding. */
struct ms_mod_zsink {
	ms_err (*write)(void *ctx, const uint8_t *p, size_t len);
	void *ctx;
};

/*
 * A streaming encoder, as kbuild compresses a module (scripts/Makefile.modinst):
 * xz: `xz --check=crc32 --lzma2=dict=1MiB` (preset 6 otherwise; the kernel's
 *     xz decoder takes CRC32 and no CRC64 or SHA-256 check);
 * zstd: `zstd` (level 3, content size and XXH64 checksum in the frame);
 * gzip: `gzip -n` (level 6, no name, mtime 0; zlib's deflate, see zcodec_gzip.c).
 * The xz and zstd output is byte for byte what those commands write.
 */
struct ms_mod_zenc;

/**
 * ms_mod_zenc_new() - an encoder of @fmt (not MS_ZFMT_NONE) for exactly
 * @total_len input bytes (the zstd frame records the size).
 * Return: MS_OK, MS_E_ARG, MS_E_NOMEM.
 */
ms_err ms_mod_zenc_new(enum ms_zfmt fmt, uint64_t total_len,
		       struct ms_mod_zenc **out) MS_MUST_CHECK;

/**
 * ms_mod_zenc_update() - compress the next @len bytes; output goes to
 * @sink as it is made.
 * Return: MS_OK, the sink's error, MS_E_ARG (more input than @total_len),
 * MS_E_INTERNAL (the library failed).
 */
ms_err ms_mod_zenc_update(struct ms_mod_zenc *e, const uint8_t *p, size_t len,
			  const struct ms_mod_zsink *sink) MS_MUST_CHECK;

/**
 * ms_mod_zenc_final() - end the stream, write what remains to @sink.
 * Return: MS_OK, the sink's error, MS_E_ARG (less input than @total_len),
 * MS_E_INTERNAL.
 */
ms_err ms_mod_zenc_final(struct ms_mod_zenc *e, const struct ms_mod_zsink *sink) MS_MUST_CHECK;

/** ms_mod_zenc_free() - NULL is a no-op. */
void ms_mod_zenc_free(struct ms_mod_zenc *e);

/*
 * A run's encoders: at most @n at work at once, each kept for the next
 * module. An xz encoder at kbuild's settings holds 13 MiB (the match finder
 * of a 1 MiB dictionary) and keeps a processor busy, so more encoders than
 * processors would only hold more memory, and one made anew for each module
 * would take that memory from the system again each time. Owned by the run
 * (ms_mod_zpool_new/_free); modules reach it through struct ms_modfile's
 * zpool. Thread-safe.
 */
struct ms_mod_zpool;

/**
 * ms_mod_zpool_new() - a pool of @n (>= 1) encoders.
 * Return: MS_OK, MS_E_ARG, MS_E_NOMEM.
 */
ms_err ms_mod_zpool_new(unsigned n, struct ms_mod_zpool **out) MS_MUST_CHECK;

/**
 * ms_mod_zpool_take() - wait until one of the pool's encoders is free, and
 * ready it for @fmt and @total_len input bytes, as ms_mod_zenc_new() would
 * (the output is the same). Give it back with ms_mod_zpool_give().
 * Return: MS_OK, MS_E_ARG, MS_E_NOMEM, MS_E_INTERNAL.
 */
ms_err ms_mod_zpool_take(struct ms_mod_zpool *p, enum ms_zfmt fmt, uint64_t total_len,
			 struct ms_mod_zenc **out) MS_MUST_CHECK;

/** ms_mod_zpool_give() - @e, from ms_mod_zpool_take() on @p, is free again; NULL is a no-op. */
void ms_mod_zpool_give(struct ms_mod_zpool *p, struct ms_mod_zenc *e);

/** ms_mod_zpool_free() - the pool and its encoders; none may be taken. NULL is a no-op. */
void ms_mod_zpool_free(struct ms_mod_zpool *p);

#endif
