// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compressed module containers (src/modfmt/zmod.c, zcodec_*.c): formats by
 * magic and name, round trips through each encoder and decoder fed in
 * pieces of every kind, the settings kbuild uses as they show in the
 * output's headers, and hostile streams: truncated at every length, one
 * byte changed at every offset, trailing bytes, a second stream, padding,
 * output past the limit.
 */
#include <fcntl.h>
#include <lzma.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "../../src/modfmt/zmod.h"
#include "test.h"
#include "test_modfmt_util.h"

static const enum ms_zfmt all_fmts[] = { MS_ZFMT_XZ, MS_ZFMT_ZSTD, MS_ZFMT_GZIP };
#define N_FMTS (sizeof(all_fmts) / sizeof(all_fmts[0]))

/* Module-like bytes: runs of text, zeros and noise, so that they compress. */
static uint8_t *
module_bytes(size_t len, unsigned seed)
{
	static const char text[] = "module_layout\0__this_module\0init_module\0license=GPL\0";
	uint8_t *p = tm_pattern(len, seed);

	for (size_t i = 0; i < len; i++) {
		switch ((i / 512) % 3) {
		case 0:
			p[i] = (uint8_t)text[i % (sizeof(text) - 1)];
			break;
		case 1:
			p[i] = 0;
			break;
		default:
			break;	/* noise from tm_pattern() */
		}
	}
	return p;
}

/* A sink into a growing buffer. */
struct zbuf {
	uint8_t *p;
	size_t len;
	size_t cap;
	size_t fail_after;	/* the write that pushes past this many bytes fails; 0: never */
};

static ms_err
zbuf_write(void *ctx, const uint8_t *p, size_t len)
{
	struct zbuf *b = ctx;

	if (b->fail_after != 0 && b->len + len > b->fail_after) {
		return MS_E_IO;
	}
	if (b->len + len > b->cap) {
		b->cap = (b->len + len) * 2;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p != NULL);
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	return MS_OK;
}

/* @len bytes of @p compressed as @fmt, fed to the encoder in pieces of @piece. */
static struct zbuf
compress(enum ms_zfmt fmt, const uint8_t *p, size_t len, size_t piece)
{
	struct zbuf b = { NULL, 0, 0, 0 };
	struct ms_mod_zsink sink = { zbuf_write, &b };
	struct ms_mod_zenc *e = NULL;

	CHECK_ERR(ms_mod_zenc_new(fmt, len, &e), MS_OK);
	for (size_t off = 0; off < len; off += piece) {
		size_t n = len - off < piece ? len - off : piece;

		CHECK_ERR(ms_mod_zenc_update(e, p + off, n, &sink), MS_OK);
	}
	CHECK_ERR(ms_mod_zenc_final(e, &sink), MS_OK);
	ms_mod_zenc_free(e);
	return b;
}

/* Decode @z in pieces of @piece with @limit; *@img gets the result on MS_OK. */
static ms_err
decompress(enum ms_zfmt fmt, const uint8_t *z, size_t len, size_t piece, uint64_t limit,
	   struct ms_mod_zimage *img, const char **why)
{
	struct ms_mod_zdec *d = NULL;
	ms_err err;

	CHECK_ERR(ms_mod_zdec_new(fmt, limit, 0, &d), MS_OK);
	err = MS_OK;
	for (size_t off = 0; off < len && err == MS_OK; off += piece) {
		size_t n = len - off < piece ? len - off : piece;

		err = ms_mod_zdec_feed(d, z + off, n);
	}
	if (err == MS_OK) {
		err = ms_mod_zdec_finish(d, img);
	}
	if (why != NULL) {
		*why = ms_mod_zdec_why(d);
	}
	if (err != MS_OK) {
		CHECK(ms_mod_zdec_why(d)[0] != '\0');
	}
	ms_mod_zdec_free(d);
	return err;
}

MS_TEST(zmod_sniff)
{
	static const uint8_t xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0x00, 0x00, 0x01 };
	static const uint8_t zst[] = { 0x28, 0xb5, 0x2f, 0xfd, 0x24 };
	static const uint8_t gz[] = { 0x1f, 0x8b, 0x08 };
	static const uint8_t elf[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };

	CHECK(ms_mod_zfmt_sniff(xz, sizeof(xz)) == MS_ZFMT_XZ);
	CHECK(ms_mod_zfmt_sniff(xz, 6) == MS_ZFMT_XZ);
	CHECK(ms_mod_zfmt_sniff(xz, 5) == MS_ZFMT_NONE);	/* too short to be xz */
	CHECK(ms_mod_zfmt_sniff(zst, sizeof(zst)) == MS_ZFMT_ZSTD);
	CHECK(ms_mod_zfmt_sniff(zst, 3) == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_sniff(gz, sizeof(gz)) == MS_ZFMT_GZIP);
	CHECK(ms_mod_zfmt_sniff(gz, 1) == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_sniff(elf, sizeof(elf)) == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_sniff(elf, 0) == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_sniff(NULL, 0) == MS_ZFMT_NONE);
}

MS_TEST(zmod_names)
{
	char out[32];

	CHECK(ms_mod_zfmt_of_name("a/b/e1000e.ko.xz") == MS_ZFMT_XZ);
	CHECK(ms_mod_zfmt_of_name("e1000e.ko.zst") == MS_ZFMT_ZSTD);
	CHECK(ms_mod_zfmt_of_name("e1000e.ko.gz") == MS_ZFMT_GZIP);
	CHECK(ms_mod_zfmt_of_name("e1000e.ko") == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_of_name("module") == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_of_name("x.xz.ko") == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_of_name("x.zstd") == MS_ZFMT_NONE);
	CHECK(ms_mod_zfmt_of_name(".xz") == MS_ZFMT_XZ);
	CHECK(strcmp(ms_mod_zfmt_name(MS_ZFMT_ZSTD), "zstd") == 0);
	CHECK(strcmp(ms_mod_zfmt_name(MS_ZFMT_NONE), "uncompressed") == 0);

	CHECK(ms_mod_zfmt_is_module_name("d/x.ko"));
	CHECK(ms_mod_zfmt_is_module_name("d/x.ko.xz"));
	CHECK(ms_mod_zfmt_is_module_name("d/x.ko.zst"));
	CHECK(ms_mod_zfmt_is_module_name("d/x.ko.gz"));
	CHECK(!ms_mod_zfmt_is_module_name("d/x.ko.bz2"));
	CHECK(!ms_mod_zfmt_is_module_name("d/x.xz"));
	CHECK(!ms_mod_zfmt_is_module_name("d/x.ko.p7s"));
	CHECK(!ms_mod_zfmt_is_module_name("d/x.kozst"));
	CHECK(!ms_mod_zfmt_is_module_name("ko.xz"));
	CHECK(ms_mod_zfmt_is_module_name(".ko.xz"));
	CHECK(!ms_mod_zfmt_is_module_name(NULL));

	CHECK_ERR(ms_mod_zfmt_p7s_name("d/x.ko", out, sizeof(out)), MS_OK);
	CHECK(strcmp(out, "d/x.ko.p7s") == 0);
	CHECK_ERR(ms_mod_zfmt_p7s_name("d/x.ko.xz", out, sizeof(out)), MS_OK);
	CHECK(strcmp(out, "d/x.ko.p7s") == 0);
	CHECK_ERR(ms_mod_zfmt_p7s_name("d/x.ko.zst", out, sizeof(out)), MS_OK);
	CHECK(strcmp(out, "d/x.ko.p7s") == 0);
	CHECK_ERR(ms_mod_zfmt_p7s_name("x.gz", out, sizeof(out)), MS_OK);
	CHECK(strcmp(out, "x.p7s") == 0);
	/* Every capacity: too small is MS_E_NOSPACE, never a truncated name. */
	for (size_t cap = 0; cap <= 11; cap++) {
		ms_err err = ms_mod_zfmt_p7s_name("d/x.ko.xz", out, cap);

		CHECK(cap < 11 ? err == MS_E_NOSPACE : err == MS_OK);
	}
}

/* Every format, sizes around the buffer sizes, fed in pieces of every kind, decoded alike. */
MS_TEST(zmod_round_trip)
{
	static const size_t lens[] = { 0, 1, 39, 65535, 65536, 65537, 300001 };
	static const size_t pieces[] = { 1, 7, 4096, 65536, (size_t)1 << 30 };

	for (size_t f = 0; f < N_FMTS; f++) {
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			uint8_t *m = module_bytes(lens[l], (unsigned)l);
			struct zbuf z = compress(all_fmts[f], m, lens[l], 65536);
			struct zbuf z1 = compress(all_fmts[f], m, lens[l], 1000);

			/* How the input is cut does not change the output. */
			CHECK(z.len == z1.len && memcmp(z.p, z1.p, z.len) == 0);
			CHECK(ms_mod_zfmt_sniff(z.p, z.len) == all_fmts[f]);
			for (size_t k = 0; k < sizeof(pieces) / sizeof(pieces[0]); k++) {
				struct ms_mod_zimage img = { NULL, 0 };

				/* Byte by byte only for the small ones: it is slow. */
				if (pieces[k] == 1 && z.len > 70000) {
					continue;
				}
				CHECK_ERR(decompress(all_fmts[f], z.p, z.len, pieces[k],
						 MS_ZMOD_LIMIT_DEFAULT, &img, NULL), MS_OK);
				CHECK(img.len == lens[l]);
				CHECK(lens[l] == 0 || memcmp(img.p, m, lens[l]) == 0);
				ms_mod_zimage_clear(&img);
				ms_mod_zimage_clear(&img);	/* a second clear is a no-op */
			}
			free(z.p);
			free(z1.p);
			free(m);
		}
	}
}

/* The xz settings kbuild asks for, as `xz -lvv` would show them. */
MS_TEST(zmod_xz_kbuild_settings)
{
	uint8_t *m = module_bytes(200000, 3);
	struct zbuf z = compress(MS_ZFMT_XZ, m, 200000, 65536);
	lzma_stream_flags flags;
	lzma_filter filters[LZMA_FILTERS_MAX + 1];
	lzma_block block;
	const lzma_options_lzma *opt = NULL;

	/* Stream header: 12 bytes, check type CRC32 (the kernel's decoder takes no CRC64). */
	CHECK(lzma_stream_header_decode(&flags, z.p) == LZMA_OK);
	CHECK(flags.check == LZMA_CHECK_CRC32);
	/* One block, its header right after: LZMA2 alone, dictionary 1 MiB. */
	memset(&block, 0, sizeof(block));
	block.version = 1;
	block.check = flags.check;
	block.filters = filters;
	block.header_size = lzma_block_header_size_decode(z.p[12]);
	CHECK(lzma_block_header_decode(&block, NULL, z.p + 12) == LZMA_OK);
	CHECK(filters[0].id == LZMA_FILTER_LZMA2);
	CHECK(filters[1].id == LZMA_VLI_UNKNOWN);
	opt = filters[0].options;
	CHECK(opt->dict_size == (uint32_t)1 << 20);
	free(filters[0].options);
	free(z.p);
	free(m);
}

MS_TEST(zmod_zstd_kbuild_settings)
{
	uint8_t *m = module_bytes(200000, 4);
	struct zbuf z = compress(MS_ZFMT_ZSTD, m, 200000, 65536);
	uint8_t fhd;

	/* RFC 8878, 3.1.1.1.1: Frame_Header_Descriptor after the 4-byte magic. */
	CHECK(z.len > 5);
	fhd = z.p[4];
	CHECK((fhd & 0x04) != 0);	/* Content_Checksum_flag, as the zstd command writes */
	CHECK((fhd & 0x03) == 0);	/* no Dictionary_ID */
	CHECK((fhd & 0xc0) != 0 || (fhd & 0x20) != 0);	/* Frame_Content_Size present */
	CHECK(ZSTD_getFrameContentSize(z.p, z.len) == 200000);	/* the size pledged */
	CHECK(ZSTD_findFrameCompressedSize(z.p, z.len) == z.len);	/* one frame */
	free(z.p);
	free(m);
}

/* gzip -n: ID, deflate, no flags (no name), mtime 0, XFL 0 (level 6), OS 3 (Unix). */
MS_TEST(zmod_gzip_header_as_gzip_n)
{
	static const uint8_t want[10] = { 0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03 };
	uint8_t *m = module_bytes(100000, 5);
	struct zbuf z = compress(MS_ZFMT_GZIP, m, 100000, 65536);
	uint32_t isize;

	CHECK(z.len > 18);
	CHECK(memcmp(z.p, want, sizeof(want)) == 0);
	isize = (uint32_t)z.p[z.len - 4] | (uint32_t)z.p[z.len - 3] << 8 |
		(uint32_t)z.p[z.len - 2] << 16 | (uint32_t)z.p[z.len - 1] << 24;
	CHECK(isize == 100000);
	free(z.p);
	free(m);
}

/* A stream cut at any length is refused; so is the empty input. */
MS_TEST(zmod_truncated_everywhere)
{
	uint8_t *m = module_bytes(3000, 6);

	for (size_t f = 0; f < N_FMTS; f++) {
		struct zbuf z = compress(all_fmts[f], m, 3000, 65536);

		for (size_t cut = 0; cut < z.len; cut++) {
			struct ms_mod_zimage img = { NULL, 0 };

			CHECK_ERR(decompress(all_fmts[f], z.p, cut, 4096, MS_ZMOD_LIMIT_DEFAULT, &img,
					 NULL), MS_E_MALFORMED);
			CHECK(img.p == NULL);
		}
		free(z.p);
	}
	free(m);
}

/* One changed bit anywhere: refused, or (a bit nothing depends on) the same module. */
MS_TEST(zmod_one_byte_changed_everywhere)
{
	uint8_t *m = module_bytes(3000, 7);

	for (size_t f = 0; f < N_FMTS; f++) {
		struct zbuf z = compress(all_fmts[f], m, 3000, 65536);
		size_t accepted = 0;

		for (size_t i = 0; i < z.len; i++) {
			struct ms_mod_zimage img = { NULL, 0 };
			ms_err err;

			z.p[i] ^= 0x01;
			err = decompress(all_fmts[f], z.p, z.len, 4096, MS_ZMOD_LIMIT_DEFAULT, &img,
					 NULL);
			z.p[i] ^= 0x01;
			if (err == MS_OK) {
				CHECK(img.len == 3000 && memcmp(img.p, m, 3000) == 0);
				accepted++;
			} else {
				CHECK(err == MS_E_MALFORMED || err == MS_E_UNSUPPORTED);
			}
			ms_mod_zimage_clear(&img);
		}
		/*
		 * What may pass: gzip's unchecked header bytes (FTEXT, mtime, XFL,
		 * OS) and unused padding bits of a zstd bitstream; never xz, whose
		 * headers have CRC32s of their own.
		 */
		CHECK(all_fmts[f] == MS_ZFMT_XZ ? accepted == 0 : accepted <= 8);
		free(z.p);
	}
	free(m);
}

/* Whatever follows the one stream is refused: garbage, padding, a second stream. */
MS_TEST(zmod_after_the_end)
{
	uint8_t *m = module_bytes(5000, 8);

	for (size_t f = 0; f < N_FMTS; f++) {
		struct zbuf z = compress(all_fmts[f], m, 5000, 65536);
		struct zbuf two = { NULL, 0, 0, 0 };
		struct ms_mod_zimage img = { NULL, 0 };
		static const uint8_t zeros[4] = { 0 };
		const char *why = NULL;

		CHECK_ERR(zbuf_write(&two, z.p, z.len), MS_OK);
		CHECK_ERR(zbuf_write(&two, (const uint8_t *)"x", 1), MS_OK);
		CHECK_ERR(decompress(all_fmts[f], two.p, two.len, 65536, MS_ZMOD_LIMIT_DEFAULT, &img,
				 &why), MS_E_MALFORMED);
		CHECK(strstr(why, "after the end") != NULL);
		/* The extra byte in a call of its own. */
		CHECK_ERR(decompress(all_fmts[f], two.p, two.len, z.len, MS_ZMOD_LIMIT_DEFAULT, &img,
				 NULL), MS_E_MALFORMED);
		two.len = z.len;
		/* xz stream padding (4 zero bytes, which `xz -d` accepts). */
		CHECK_ERR(zbuf_write(&two, zeros, sizeof(zeros)), MS_OK);
		CHECK_ERR(decompress(all_fmts[f], two.p, two.len, 65536, MS_ZMOD_LIMIT_DEFAULT, &img,
				 NULL), MS_E_MALFORMED);
		two.len = z.len;
		/* A second whole stream, as `cat a.xz b.xz` makes. */
		CHECK_ERR(zbuf_write(&two, z.p, z.len), MS_OK);
		CHECK_ERR(decompress(all_fmts[f], two.p, two.len, 65536, MS_ZMOD_LIMIT_DEFAULT, &img,
				 NULL), MS_E_MALFORMED);
		CHECK(img.p == NULL);
		free(two.p);
		free(z.p);
	}
	free(m);
}

/* The limit: exactly the size passes, a byte less is refused, a bomb stops early. */
MS_TEST(zmod_limit)
{
	size_t big = (size_t)32 << 20;
	uint8_t *zeros = calloc(1, big);
	uint8_t *m = module_bytes(100000, 9);

	CHECK(zeros != NULL);
	for (size_t f = 0; f < N_FMTS; f++) {
		struct zbuf z = compress(all_fmts[f], m, 100000, 65536);
		struct zbuf bomb = compress(all_fmts[f], zeros, big, (size_t)1 << 30);
		struct ms_mod_zimage img = { NULL, 0 };
		const char *why = NULL;

		CHECK_ERR(decompress(all_fmts[f], z.p, z.len, 4096, 100000, &img, NULL), MS_OK);
		CHECK(img.len == 100000);
		ms_mod_zimage_clear(&img);
		CHECK(decompress(all_fmts[f], z.p, z.len, 4096, 99999, &img, &why) ==
		      MS_E_UNSUPPORTED);
		CHECK(strstr(why, "--max-module-size") != NULL);
		CHECK(img.p == NULL);
		/* 32 MiB of zeros in a few KiB, refused at 1 MiB. */
		CHECK(bomb.len < big / 100);
		CHECK_ERR(decompress(all_fmts[f], bomb.p, bomb.len, bomb.len, (uint64_t)1 << 20, &img,
				 NULL), MS_E_UNSUPPORTED);
		free(bomb.p);
		free(z.p);
	}
	free(zeros);
	free(m);
}

/* What kbuild wrote before 6.2 (2 MiB dictionary, CRC64) still decodes; so does xz -9. */
MS_TEST(zmod_xz_other_settings_decode)
{
	uint8_t *m = module_bytes(50000, 10);
	size_t cap = 60000;
	uint8_t *z = malloc(cap);
	size_t zlen = 0;
	struct ms_mod_zimage img = { NULL, 0 };

	CHECK(z != NULL);
	CHECK(lzma_easy_buffer_encode(9, LZMA_CHECK_CRC64, NULL, m, 50000, z, &zlen, cap) ==
	      LZMA_OK);
	CHECK_ERR(decompress(MS_ZFMT_XZ, z, zlen, 4096, MS_ZMOD_LIMIT_DEFAULT, &img, NULL), MS_OK);
	CHECK(img.len == 50000 && memcmp(img.p, m, 50000) == 0);
	ms_mod_zimage_clear(&img);
	zlen = 0;
	CHECK(lzma_easy_buffer_encode(6, LZMA_CHECK_SHA256, NULL, m, 50000, z, &zlen, cap) ==
	      LZMA_OK);
	CHECK_ERR(decompress(MS_ZFMT_XZ, z, zlen, 4096, MS_ZMOD_LIMIT_DEFAULT, &img, NULL), MS_OK);
	ms_mod_zimage_clear(&img);
	/* The wrong decoder for the bytes: refused, not guessed. */
	CHECK(decompress(MS_ZFMT_ZSTD, z, zlen, 4096, MS_ZMOD_LIMIT_DEFAULT, &img, NULL) ==
	      MS_E_MALFORMED);
	CHECK(decompress(MS_ZFMT_GZIP, z, zlen, 4096, MS_ZMOD_LIMIT_DEFAULT, &img, NULL) ==
	      MS_E_MALFORMED);
	free(z);
	free(m);
}

/* An encoder takes exactly the bytes it was promised; a sink's failure ends it. */
MS_TEST(zmod_encoder_contract)
{
	uint8_t *m = module_bytes(200000, 11);

	for (size_t f = 0; f < N_FMTS; f++) {
		struct zbuf b = { NULL, 0, 0, 0 };
		struct ms_mod_zsink sink = { zbuf_write, &b };
		struct ms_mod_zenc *e = NULL;

		CHECK_ERR(ms_mod_zenc_new(all_fmts[f], 100, &e), MS_OK);
		CHECK_ERR(ms_mod_zenc_update(e, m, 101, &sink), MS_E_ARG);
		CHECK_ERR(ms_mod_zenc_update(e, m, 60, &sink), MS_OK);
		CHECK_ERR(ms_mod_zenc_final(e, &sink), MS_E_ARG);	/* 40 short */
		CHECK_ERR(ms_mod_zenc_update(e, m + 60, 40, &sink), MS_OK);
		CHECK_ERR(ms_mod_zenc_final(e, &sink), MS_OK);
		CHECK_ERR(ms_mod_zenc_final(e, &sink), MS_E_ARG);	/* ended already */
		ms_mod_zenc_free(e);
		free(b.p);

		memset(&b, 0, sizeof(b));
		b.fail_after = 100;
		CHECK_ERR(ms_mod_zenc_new(all_fmts[f], 200000, &e), MS_OK);
		{
			ms_err err = ms_mod_zenc_update(e, m, 200000, &sink);

			if (err == MS_OK) {
				err = ms_mod_zenc_final(e, &sink);
			}
			CHECK_ERR(err, MS_E_IO);
		}
		ms_mod_zenc_free(e);
		free(b.p);
	}
	CHECK_ERR(ms_mod_zenc_new(MS_ZFMT_NONE, 1, NULL), MS_E_ARG);
	ms_mod_zenc_free(NULL);
	free(m);
}

MS_TEST(zmod_decoder_args)
{
	struct ms_mod_zdec *d = NULL;
	struct ms_mod_zimage img = { NULL, 0 };

	CHECK(ms_mod_zdec_new(MS_ZFMT_NONE, 100, 0, &d) == MS_E_ARG && d == NULL);
	CHECK_ERR(ms_mod_zdec_new(MS_ZFMT_XZ, 0, 0, &d), MS_E_ARG);
	CHECK_ERR(ms_mod_zdec_new(MS_ZFMT_XZ, (uint64_t)1 << 40, 0, &d), MS_E_ARG);
	CHECK_ERR(ms_mod_zdec_new(MS_ZFMT_XZ, 100, 0, &d), MS_OK);
	CHECK(strcmp(ms_mod_zdec_why(d), "") == 0);
	CHECK_ERR(ms_mod_zdec_finish(d, &img), MS_E_MALFORMED);	/* nothing given */
	CHECK(strcmp(ms_mod_zdec_why(d), "empty file") == 0);
	/* Sticky: the decoder stays failed. */
	CHECK_ERR(ms_mod_zdec_feed(d, (const uint8_t *)"x", 1), MS_E_MALFORMED);
	ms_mod_zdec_free(d);
	ms_mod_zdec_free(NULL);
	/* A legacy zstd v0.7 frame (magic 0xFD2FB527), which libzstd would decode: refused. */
	{
		static const uint8_t v07[] = { 0x27, 0xb5, 0x2f, 0xfd, 0x3d, 0x64, 0x00, 0x00,
					       0x00, 0xc1, 0x00 };
		const char *why = NULL;

		CHECK_ERR(decompress(MS_ZFMT_ZSTD, v07, sizeof(v07), 1, MS_ZMOD_LIMIT_DEFAULT, &img,
				 &why), MS_E_MALFORMED);
		CHECK(strstr(why, "magic") != NULL);
		CHECK_ERR(decompress(MS_ZFMT_ZSTD, v07, sizeof(v07), 64, MS_ZMOD_LIMIT_DEFAULT, &img,
				 NULL), MS_E_MALFORMED);
	}
}

/* From a file: the whole container, and a file that is not what its size said. */
MS_TEST(zmod_decode_fd)
{
	const char *dir = tm_dir();
	char path[TM_PATH];
	uint8_t *m = module_bytes(150000, 12);
	struct zbuf z = compress(MS_ZFMT_ZSTD, m, 150000, 65536);
	struct ms_mod_zimage img = { NULL, 0 };
	struct ms_mod_zfail fail;
	int fd;

	tm_join(path, dir, "m.ko.zst");
	tm_write(path, z.p, z.len, 0644);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK_ERR(ms_mod_zdec_fd(fd, z.len, MS_ZFMT_ZSTD, MS_ZMOD_LIMIT_DEFAULT, &img, &fail), MS_OK);
	CHECK(img.len == 150000 && memcmp(img.p, m, 150000) == 0);
	ms_mod_zimage_clear(&img);
	/* Longer than said (it grew), shorter than said (it shrank). */
	CHECK(ms_mod_zdec_fd(fd, z.len - 1, MS_ZFMT_ZSTD, MS_ZMOD_LIMIT_DEFAULT, &img, &fail) ==
	      MS_E_CHANGED);
	CHECK(ms_mod_zdec_fd(fd, z.len + 1, MS_ZFMT_ZSTD, MS_ZMOD_LIMIT_DEFAULT, &img, &fail) ==
	      MS_E_CHANGED);
	CHECK(img.p == NULL);
	/* A format error says why. */
	CHECK(ms_mod_zdec_fd(fd, z.len, MS_ZFMT_XZ, MS_ZMOD_LIMIT_DEFAULT, &img, &fail) ==
	      MS_E_MALFORMED);
	CHECK(fail.why != NULL && strncmp(fail.why, "xz: ", 4) == 0 && fail.op == NULL);
	close(fd);
	/* A descriptor that cannot be read: the call and errno. */
	CHECK(ms_mod_zdec_fd(fd, z.len, MS_ZFMT_ZSTD, MS_ZMOD_LIMIT_DEFAULT, &img, &fail) ==
	      MS_E_IO);
	CHECK(fail.op != NULL && strcmp(fail.op, "read") == 0 && fail.sys_errno != 0);
	free(z.p);
	free(m);
	tm_done();
}

/* @len bytes of @p through an encoder of @pool. */
static struct zbuf
compress_pooled(struct ms_mod_zpool *pool, enum ms_zfmt fmt, const uint8_t *p, size_t len)
{
	struct zbuf b = { NULL, 0, 0, 0 };
	struct ms_mod_zsink sink = { zbuf_write, &b };
	struct ms_mod_zenc *e = NULL;

	CHECK_ERR(ms_mod_zpool_take(pool, fmt, len, &e), MS_OK);
	CHECK_ERR(ms_mod_zenc_update(e, p, len, &sink), MS_OK);
	CHECK_ERR(ms_mod_zenc_final(e, &sink), MS_OK);
	ms_mod_zpool_give(pool, e);
	return b;
}

/* An encoder used again (for other sizes, after a failed stream) writes what a new one writes. */
MS_TEST(zmod_pool_reuse_same_bytes)
{
	static const size_t lens[] = { 300001, 100, 70000, 0, 150000 };
	struct ms_mod_zpool *pool = NULL;

	CHECK(ms_mod_zpool_new(0, &pool) == MS_E_ARG && pool == NULL);
	CHECK_ERR(ms_mod_zpool_new(1, &pool), MS_OK);
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
		for (size_t f = 0; f < N_FMTS; f++) {
			uint8_t *m = module_bytes(lens[l], (unsigned)(l + 20));
			struct zbuf fresh = compress(all_fmts[f], m, lens[l], 65536);
			struct zbuf pooled = compress_pooled(pool, all_fmts[f], m, lens[l]);

			CHECK(fresh.len == pooled.len && memcmp(fresh.p, pooled.p, fresh.len) == 0);
			free(fresh.p);
			free(pooled.p);
			free(m);
		}
	}
	/* A stream left half done (its sink failed) does not leak into the next. */
	for (size_t f = 0; f < N_FMTS; f++) {
		uint8_t *m = module_bytes(200000, 30);
		struct zbuf b = { NULL, 0, 0, 100 };
		struct ms_mod_zsink sink = { zbuf_write, &b };
		struct ms_mod_zenc *e = NULL;
		struct zbuf fresh = compress(all_fmts[f], m, 5000, 65536);
		struct zbuf pooled;
		ms_err err;

		CHECK_ERR(ms_mod_zpool_take(pool, all_fmts[f], 200000, &e), MS_OK);
		err = ms_mod_zenc_update(e, m, 200000, &sink);
		if (err == MS_OK) {
			err = ms_mod_zenc_final(e, &sink);
		}
		CHECK_ERR(err, MS_E_IO);
		ms_mod_zpool_give(pool, e);
		pooled = compress_pooled(pool, all_fmts[f], m, 5000);
		CHECK(fresh.len == pooled.len && memcmp(fresh.p, pooled.p, fresh.len) == 0);
		free(fresh.p);
		free(pooled.p);
		free(b.p);
		free(m);
	}
	ms_mod_zpool_give(pool, NULL);
	ms_mod_zpool_free(pool);
	ms_mod_zpool_free(NULL);
}

struct pool_worker {
	struct ms_mod_zpool *pool;
	unsigned seed;
	int ok;
};

static void *
pool_work(void *arg)
{
	struct pool_worker *w = arg;

	w->ok = 1;
	for (unsigned i = 0; i < 6; i++) {
		enum ms_zfmt fmt = all_fmts[(w->seed + i) % N_FMTS];
		size_t len = 20000 + 1000 * (size_t)(w->seed + i);
		uint8_t *m = module_bytes(len, w->seed * 10 + i);
		struct zbuf z = compress_pooled(w->pool, fmt, m, len);
		struct ms_mod_zimage img = { NULL, 0 };

		ms_err err = decompress(fmt, z.p, z.len, 65536, MS_ZMOD_LIMIT_DEFAULT, &img, NULL);

		if (err != MS_OK || img.len != len || memcmp(img.p, m, len) != 0) {
			w->ok = 0;
		}
		ms_mod_zimage_clear(&img);
		free(z.p);
		free(m);
	}
	return NULL;
}

/* Six threads on a pool of two: each stream whole and right. */
MS_TEST(zmod_pool_threads)
{
	struct ms_mod_zpool *pool = NULL;
	pthread_t t[6];
	struct pool_worker w[6];

	CHECK_ERR(ms_mod_zpool_new(2, &pool), MS_OK);
	for (unsigned i = 0; i < 6; i++) {
		w[i].pool = pool;
		w[i].seed = i;
		w[i].ok = 0;
		CHECK(pthread_create(&t[i], NULL, pool_work, &w[i]) == 0);
	}
	for (unsigned i = 0; i < 6; i++) {
		CHECK(pthread_join(t[i], NULL) == 0);
		CHECK(w[i].ok == 1);
	}
	ms_mod_zpool_free(pool);
}
