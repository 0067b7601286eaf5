// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the module_signature trailer: known bytes, capacities, the kernel's rules. */
#include <stdint.h>
#include <string.h>

#include "../../src/modfmt/modfmt.h"
#include "test.h"

/* "~Module signature appended~\n" */
#define MAGIC_HEX "7e 4d 6f 64 75 6c 65 20 73 69 67 6e 61 74 75 72 65 20" \
		  "61 70 70 65 6e 64 65 64 7e 0a"

/* A valid 40-byte trailer for @sig_len, built by hand (not by the code under test). */
static void
good_tail(uint8_t tail[MS_MOD_TRAILER_LEN], uint32_t sig_len)
{
	memset(tail, 0, MS_MOD_TRAILER_LEN);
	tail[2] = 2;
	tail[8] = (uint8_t)(sig_len >> 24);
	tail[9] = (uint8_t)(sig_len >> 16);
	tail[10] = (uint8_t)(sig_len >> 8);
	tail[11] = (uint8_t)sig_len;
	memcpy(tail + 12, "~Module signature appended~\n", 28);
}

MS_TEST(modfmt_trailer_known_bytes)
{
	uint8_t want[64];
	uint8_t out[MS_MOD_TRAILER_LEN];
	size_t want_len = ms_test_hex("00 00 02 00 00 00 00 00 00 00 01 93" MAGIC_HEX, want,
				      sizeof(want));
	size_t out_len = 0;

	CHECK_EQ(want_len, MS_MOD_TRAILER_LEN);
	CHECK_EQ(strlen(MS_MOD_MAGIC), MS_MOD_MAGIC_LEN);
	CHECK_ERR(ms_mod_trailer_build(0x0193, out, sizeof(out), &out_len), MS_OK);
	CHECK_EQ(out_len, MS_MOD_TRAILER_LEN);
	CHECK_EQ_BYTES(out, want, MS_MOD_TRAILER_LEN);

	/* Big-endian, every byte distinct. */
	want_len = ms_test_hex("00 00 02 00 00 00 00 00 01 02 03 04" MAGIC_HEX, want, sizeof(want));
	CHECK_ERR(ms_mod_trailer_build(0x01020304, out, sizeof(out), &out_len), MS_OK);
	CHECK(out_len == want_len);
	CHECK_EQ_BYTES(out, want, want_len);

	want_len = ms_test_hex("00 00 02 00 00 00 00 00 ff ff ff ff" MAGIC_HEX, want, sizeof(want));
	CHECK_ERR(ms_mod_trailer_build(0xffffffff, out, sizeof(out), &out_len), MS_OK);
	CHECK_EQ_BYTES(out, want, want_len);
}

MS_TEST(modfmt_trailer_size_query)
{
	size_t out_len = 0;

	CHECK_ERR(ms_mod_trailer_build(5, NULL, 0, &out_len), MS_OK);
	CHECK_EQ(out_len, MS_MOD_TRAILER_LEN);
	CHECK_ERR(ms_mod_trailer_build(5, NULL, 0, NULL), MS_E_ARG);
}

MS_TEST(modfmt_trailer_every_capacity)
{
	uint8_t want[MS_MOD_TRAILER_LEN];
	uint8_t buf[4 + 41 + 4];

	good_tail(want, 0x0193);
	for (size_t cap = 0; cap <= 41; cap++) {
		size_t out_len = 0;
		ms_err err;

		memset(buf, 0xa5, sizeof(buf));
		err = ms_mod_trailer_build(0x0193, buf + 4, cap, &out_len);
		for (size_t i = 0; i < 4; i++) {
			CHECK(buf[i] == 0xa5);
		}
		if (cap < MS_MOD_TRAILER_LEN) {
			CHECK_ERR(err, MS_E_NOSPACE);
			for (size_t i = 4; i < sizeof(buf); i++) {
				CHECK(buf[i] == 0xa5);
			}
			continue;
		}
		CHECK_ERR(err, MS_OK);
		CHECK_EQ(out_len, MS_MOD_TRAILER_LEN);
		CHECK_EQ_BYTES(buf + 4, want, MS_MOD_TRAILER_LEN);
		for (size_t i = 4 + MS_MOD_TRAILER_LEN; i < sizeof(buf); i++) {
			CHECK(buf[i] == 0xa5);
		}
	}
}

MS_TEST(modfmt_trailer_parse_round_trip)
{
	uint8_t tail[MS_MOD_TRAILER_LEN];
	size_t len = 0;
	struct ms_mod_sig_info info;

	CHECK_ERR(ms_mod_trailer_build(0x0193, tail, sizeof(tail), &len), MS_OK);
	memset(&info, 0xee, sizeof(info));
	CHECK_ERR(ms_mod_trailer_parse(tail, len, 1000, &info, NULL), MS_OK);
	CHECK(info.sig_len == 0x0193);
	CHECK_EQ(info.id_type, MS_MOD_ID_PKCS7);
	CHECK(info.algo == 0 && info.hash == 0 && info.signer_len == 0 && info.key_id_len == 0);
	CHECK(info.pad[0] == 0 && info.pad[1] == 0 && info.pad[2] == 0);
}

MS_TEST(modfmt_trailer_parse_unsigned)
{
	uint8_t tail[MS_MOD_TRAILER_LEN];
	struct ms_mod_sig_info info;

	memset(tail, 0, sizeof(tail));
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, NULL), MS_E_NOTFOUND);
	/* Any single byte of the marker wrong: not a signature at all. */
	for (size_t i = 12; i < MS_MOD_TRAILER_LEN; i++) {
		good_tail(tail, 100);
		tail[i] ^= 0x01;
		CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, NULL),
			  MS_E_NOTFOUND);
	}
	/* The marker must end the tail, not just appear in it. */
	{
		uint8_t big[MS_MOD_TRAILER_LEN + 1];

		good_tail(big, 100);
		big[MS_MOD_TRAILER_LEN] = '\n';
		CHECK_ERR(ms_mod_trailer_parse(big, sizeof(big), 4096, &info, NULL), MS_E_NOTFOUND);
	}
}

MS_TEST(modfmt_trailer_parse_nonzero_fields)
{
	static const size_t must_be_zero[] = { 0, 1, 3, 4, 5, 6, 7 };
	uint8_t tail[MS_MOD_TRAILER_LEN];
	struct ms_mod_sig_info info;

	for (size_t i = 0; i < sizeof(must_be_zero) / sizeof(must_be_zero[0]); i++) {
		for (unsigned v = 1; v <= 255; v += 127) {
			good_tail(tail, 100);
			tail[must_be_zero[i]] = (uint8_t)v;
			CHECK(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, NULL) ==
			      MS_E_MALFORMED);
		}
	}
	/* id_type: PKEY_ID_PGP (0), PKEY_ID_X509 (1) and unknown values. */
	for (unsigned v = 0; v <= 255; v++) {
		if (v == MS_MOD_ID_PKCS7) {
			continue;
		}
		good_tail(tail, 100);
		tail[2] = (uint8_t)v;
		CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, NULL),
			  MS_E_MALFORMED);
	}
}

MS_TEST(modfmt_trailer_parse_sig_len_limits)
{
	uint8_t tail[MS_MOD_TRAILER_LEN];
	struct ms_mod_sig_info info;

	/* sig_len < file_len - 40: at least one module byte. */
	good_tail(tail, 1000 - 41);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 1000, &info, NULL), MS_OK);
	CHECK(info.sig_len == 959);
	good_tail(tail, 1000 - 40);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 1000, &info, NULL), MS_E_MALFORMED);
	good_tail(tail, 1000);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 1000, &info, NULL), MS_E_MALFORMED);

	/* Smallest files: 41 bytes with an empty blob, 40 bytes never. */
	good_tail(tail, 0);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 41, &info, NULL), MS_OK);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 40, &info, NULL), MS_E_MALFORMED);

	/* Largest sig_len: no wrap-around at either end. */
	good_tail(tail, 0xffffffff);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, NULL), MS_E_MALFORMED);
	CHECK(ms_mod_trailer_parse(tail, sizeof(tail), 0xffffffffull + 40, &info, NULL) ==
	      MS_E_MALFORMED);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 0xffffffffull + 41, &info, NULL), MS_OK);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), UINT64_MAX, &info, NULL), MS_OK);
	CHECK(info.sig_len == 0xffffffff);
	good_tail(tail, 0x80000000);
	CHECK(ms_mod_trailer_parse(tail, sizeof(tail), 0x80000000ull + 40, &info, NULL) ==
	      MS_E_MALFORMED);
}

MS_TEST(modfmt_trailer_parse_bad_args)
{
	uint8_t tail[MS_MOD_TRAILER_LEN + 8];
	struct ms_mod_sig_info info;

	memset(tail, 0, sizeof(tail));
	good_tail(tail + 8, 5);
	/* Truncated tails (shorter than 40 bytes, not the whole file) are the caller's error. */
	for (size_t n = 0; n < MS_MOD_TRAILER_LEN; n++) {
		CHECK_ERR(ms_mod_trailer_parse(tail + sizeof(tail) - n, n, 4096, &info, NULL),
			  MS_E_ARG);
	}
	CHECK_ERR(ms_mod_trailer_parse(tail + 8, MS_MOD_TRAILER_LEN, 39, &info, NULL), MS_E_ARG);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), MS_MOD_TRAILER_LEN, &info, NULL),
		  MS_E_ARG);
	CHECK_ERR(ms_mod_trailer_parse(NULL, MS_MOD_TRAILER_LEN, 4096, &info, NULL), MS_E_ARG);
	CHECK_ERR(ms_mod_trailer_parse(tail + 8, MS_MOD_TRAILER_LEN, 4096, NULL, NULL), MS_E_ARG);
	/* A longer tail: only its last 40 bytes count. */
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, NULL), MS_OK);
	CHECK(info.sig_len == 5);
}

/* The reasons as users see them (modsign info, strip, verify). */
#define WHY_UNSIGNED	"not signed"
#define WHY_SHORT	"trailer: file too short to hold a signature"
#define WHY_PAST	"trailer: sig_len reaches past the start of the file"
#define WHY_ID_TYPE	"trailer: id_type is not 2 (PKCS#7)"
#define WHY_NONZERO	"trailer: non-zero algo, hash, signer_len, key_id_len or pad " \
			"in module_signature"

/* Each refusal names its rule: the first one broken, in the kernel's order. */
MS_TEST(modfmt_trailer_parse_reasons)
{
	static const size_t must_be_zero[] = { 0, 1, 3, 4, 5, 6, 7 };
	uint8_t tail[MS_MOD_TRAILER_LEN];
	struct ms_mod_sig_info info;
	const char *why = "unset";

	good_tail(tail, 100);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, &why), MS_OK);
	CHECK_STR_EQ(why, NULL);

	memset(tail, 0, sizeof(tail));
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, &why), MS_E_NOTFOUND);
	CHECK_STR_EQ(why, WHY_UNSIGNED);

	good_tail(tail, 0);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 40, &info, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, WHY_SHORT);

	good_tail(tail, 4096 - 40);
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, WHY_PAST);

	good_tail(tail, 100);
	tail[2] = 1;
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, WHY_ID_TYPE);

	for (size_t i = 0; i < sizeof(must_be_zero) / sizeof(must_be_zero[0]); i++) {
		good_tail(tail, 100);
		tail[must_be_zero[i]] = 0x80;
		why = NULL;
		CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, &why),
			  MS_E_MALFORMED);
		CHECK_STR_EQ(why, WHY_NONZERO);
	}

	/* Several rules broken: sig_len first, then id_type, then the other fields. */
	good_tail(tail, 5000);
	tail[2] = 1;
	tail[0] = 1;
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, WHY_PAST);
	good_tail(tail, 100);
	tail[2] = 1;
	tail[0] = 1;
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 4096, &info, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, WHY_ID_TYPE);
	/* The file's size decides "too short" before any field is read. */
	good_tail(tail, 5000);
	tail[2] = 1;
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 40, &info, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, WHY_SHORT);

	/* A caller's error has no reason. */
	why = "unset";
	CHECK_ERR(ms_mod_trailer_parse(tail, sizeof(tail), 39, &info, &why), MS_E_ARG);
	CHECK_STR_EQ(why, NULL);
}

/*
 * A file shorter than 40 bytes is judged whole (module_sig_check: the
 * marker counts only in a file longer than it; mod_verify_sig: no room
 * for the info block is -EBADMSG).
 */
MS_TEST(modfmt_trailer_parse_short_whole_file)
{
	uint8_t buf[MS_MOD_TRAILER_LEN];
	struct ms_mod_sig_info info;
	const char *why = NULL;

	for (size_t len = 0; len <= MS_MOD_TRAILER_LEN; len++) {
		memset(buf, 0, sizeof(buf));
		CHECK_ERR(ms_mod_trailer_parse(buf, len, len, &info, &why), MS_E_NOTFOUND);
		CHECK_STR_EQ(why, WHY_UNSIGNED);
		if (len < MS_MOD_MAGIC_LEN) {
			continue;
		}
		memcpy(buf + len - MS_MOD_MAGIC_LEN, MS_MOD_MAGIC, MS_MOD_MAGIC_LEN);
		if (len == MS_MOD_MAGIC_LEN) {
			CHECK_ERR(ms_mod_trailer_parse(buf, len, len, &info, &why), MS_E_NOTFOUND);
			CHECK_STR_EQ(why, WHY_UNSIGNED);
		} else {
			CHECK_ERR(ms_mod_trailer_parse(buf, len, len, &info, &why),
				  MS_E_MALFORMED);
			CHECK_STR_EQ(why, WHY_SHORT);
		}
		/* The same bytes as the end of a longer file: the caller's error. */
		if (len < MS_MOD_TRAILER_LEN) {
			CHECK_ERR(ms_mod_trailer_parse(buf, len, len + 1, &info, &why), MS_E_ARG);
			CHECK_STR_EQ(why, NULL);
		}
	}
}
