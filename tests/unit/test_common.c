// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/common: errors, wiping, the span reader, small files. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/common/ms_common.h"
#include "test.h"
/* tm_dir(), tm_join(), tm_write(): a private temp directory and files. */
#include "test_modfmt_util.h"

MS_TEST(common_err_str_every_code)
{
	for (int e = MS_OK; e <= MS_E_CHANGED; e++) {
		const char *s = ms_err_str((ms_err)e);

		CHECK(s != NULL);
		CHECK(strcmp(s, "unknown error") != 0);
	}
	CHECK(strcmp(ms_err_str((ms_err)999), "unknown error") == 0);
}

MS_TEST(common_pin_clear_wipes)
{
	struct ms_pin pin = { .len = 4, .source = "terminal", .is_set = true };

	memcpy(pin.buf, "1234", 5);
	ms_pin_clear(&pin);
	for (size_t i = 0; i < sizeof(pin.buf); i++) {
		CHECK(pin.buf[i] == 0);
	}
	CHECK(pin.len == 0 && pin.source == NULL && !pin.is_set);
	ms_pin_clear(&pin);
	ms_pin_clear(NULL);
}

MS_TEST(common_span_reads_in_order)
{
	static const uint8_t b[] = { 0x81, 0x01, 0x02, 0xfe, 0xdc, 0xba, 0x98, 0x7f, 0x00, 0xaa };
	struct ms_span s = { b, sizeof(b) };
	struct ms_span sub = { NULL, 0 };
	uint8_t u8 = 0;
	uint16_t u16 = 0;
	uint32_t u32 = 0;

	CHECK_ERR(ms_span_get_u8(&s, &u8), MS_OK);
	CHECK_EQ(u8, 0x81);
	CHECK(s.p == b + 1 && s.len == 9);
	CHECK_ERR(ms_span_get_be16(&s, &u16), MS_OK);
	CHECK_EQ(u16, 0x0102);
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK_EQ(u32, 0xfedcba98u);
	CHECK(s.p == b + 7 && s.len == 3);
	CHECK_ERR(ms_span_take(&s, 2, &sub), MS_OK);
	CHECK(sub.p == b + 7 && sub.len == 2);
	CHECK(s.p == b + 9 && s.len == 1);
	CHECK_ERR(ms_span_take(&s, 0, &sub), MS_OK);
	CHECK(sub.p == b + 9 && sub.len == 0 && s.len == 1);
	CHECK_ERR(ms_span_get_u8(&s, &u8), MS_OK);
	CHECK_EQ(u8, 0xaa);
	CHECK(s.len == 0);
	CHECK_ERR(ms_span_take(&s, 0, &sub), MS_OK);
	CHECK_ERR(ms_span_get_u8(&s, &u8), MS_E_MALFORMED);
}

MS_TEST(common_span_be_extremes)
{
	static const uint8_t ff[] = { 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[] = { 0, 0, 0, 0 };
	static const uint8_t top[] = { 0x80, 0, 0, 1 };
	struct ms_span s;
	uint16_t u16 = 1;
	uint32_t u32 = 1;

	s = (struct ms_span){ ff, 4 };
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK(u32 == 0xffffffffu);
	s = (struct ms_span){ ff, 4 };
	CHECK_ERR(ms_span_get_be16(&s, &u16), MS_OK);
	CHECK_EQ(u16, 0xffff);
	s = (struct ms_span){ zero, 4 };
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK_EQ(u32, 0);
	s = (struct ms_span){ top, 4 };
	CHECK_ERR(ms_span_get_be32(&s, &u32), MS_OK);
	CHECK(u32 == 0x80000001u);
}

/* Every read of n bytes from every shorter span: MS_E_MALFORMED, nothing consumed or written. */
MS_TEST(common_span_short_input_unchanged)
{
	static const uint8_t b[] = { 1, 2, 3, 4 };
	static const uint8_t guard[] = { 0xa5, 0xa5, 0xa5, 0xa5 };

	for (size_t len = 0; len < 4; len++) {
		struct ms_span s = { b, len };
		struct ms_span sub = { guard, 4 };
		uint8_t u8 = 0xa5;
		uint16_t u16 = 0xa5a5;
		uint32_t u32 = 0xa5a5a5a5u;

		CHECK_ERR(ms_span_get_be32(&s, &u32), MS_E_MALFORMED);
		CHECK(u32 == 0xa5a5a5a5u);
		if (len < 2) {
			CHECK_ERR(ms_span_get_be16(&s, &u16), MS_E_MALFORMED);
			CHECK_EQ(u16, 0xa5a5);
		}
		if (len < 1) {
			CHECK_ERR(ms_span_get_u8(&s, &u8), MS_E_MALFORMED);
			CHECK_EQ(u8, 0xa5);
		}
		CHECK_ERR(ms_span_take(&s, len + 1, &sub), MS_E_MALFORMED);
		CHECK_ERR(ms_span_take(&s, SIZE_MAX, &sub), MS_E_MALFORMED);
		CHECK(sub.p == guard && sub.len == 4);
		CHECK(s.p == b && s.len == len);
	}
}

MS_TEST(common_span_bad_args)
{
	static const uint8_t b[] = { 1, 2, 3, 4 };
	struct ms_span s = { b, sizeof(b) };
	struct ms_span sub;
	uint8_t u8 = 0;
	uint16_t u16 = 0;
	uint32_t u32 = 0;

	CHECK_ERR(ms_span_take(NULL, 1, &sub), MS_E_ARG);
	CHECK_ERR(ms_span_take(&s, 1, NULL), MS_E_ARG);
	CHECK_ERR(ms_span_get_u8(NULL, &u8), MS_E_ARG);
	CHECK_ERR(ms_span_get_u8(&s, NULL), MS_E_ARG);
	CHECK_ERR(ms_span_get_be16(NULL, &u16), MS_E_ARG);
	CHECK_ERR(ms_span_get_be16(&s, NULL), MS_E_ARG);
	CHECK_ERR(ms_span_get_be32(NULL, &u32), MS_E_ARG);
	CHECK_ERR(ms_span_get_be32(&s, NULL), MS_E_ARG);
	CHECK(s.p == b && s.len == sizeof(b));
}

MS_TEST(common_read_small_ok)
{
	const char *d = tm_dir();
	char path[TM_PATH], link[TM_PATH];
	struct ms_file_fail f;
	uint8_t *out = NULL;
	size_t out_len = 0;

	tm_join(path, d, "pin");
	tm_join(link, d, "pin-link");
	tm_write(path, (const uint8_t *)"1234\n", 5, 0600);
	CHECK_ERR(ms_file_read_small(path, 5, &out, &out_len, &f), MS_OK);
	CHECK(out_len == 5 && memcmp(out, "1234\n", 6) == 0);	/* NUL-terminated */
	free(out);
	/* Through a symlink too; no failure record needed. */
	CHECK(symlink("pin", link) == 0);
	CHECK_ERR(ms_file_read_small(link, 4096, &out, &out_len, NULL), MS_OK);
	CHECK(out_len == 5 && out[5] == 0);
	free(out);
	/* Empty file. */
	tm_write(path, NULL, 0, 0600);
	CHECK_ERR(ms_file_read_small(path, 0, &out, &out_len, &f), MS_OK);
	CHECK(out_len == 0 && out != NULL && out[0] == 0);
	free(out);
	tm_done();
}

MS_TEST(common_read_small_errors)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_file_fail f;
	uint8_t *out = NULL;
	size_t out_len = 0;

	tm_join(path, d, "cert");
	tm_write(path, (const uint8_t *)"123456", 6, 0644);
	CHECK_ERR(ms_file_read_small(path, 5, &out, &out_len, &f), MS_E_ARG);
	CHECK(f.sys_errno == EFBIG && out == NULL);
	CHECK_ERR(ms_file_read_small(d, 4096, &out, &out_len, &f), MS_E_ARG);
	CHECK(f.sys_errno == EISDIR && strcmp(f.op, "open") == 0);
	tm_join(path, d, "none");
	CHECK_ERR(ms_file_read_small(path, 4096, &out, &out_len, &f), MS_E_IO);
	CHECK(f.sys_errno == ENOENT && strcmp(f.op, "open") == 0);
	tm_join(path, d, "fifo");
	CHECK(mkfifo(path, 0600) == 0);
	CHECK_ERR(ms_file_read_small(path, 4096, &out, &out_len, &f), MS_E_ARG);
	CHECK(f.sys_errno == EINVAL && f.file_type == S_IFIFO);
	CHECK_ERR(ms_file_read_small("/dev/null", 4096, &out, &out_len, &f), MS_E_ARG);
	CHECK(f.sys_errno == EINVAL && f.file_type == S_IFCHR);
	CHECK_ERR(ms_file_read_small(NULL, 4096, &out, &out_len, &f), MS_E_ARG);
	CHECK_ERR(ms_file_read_small(path, 4096, NULL, &out_len, &f), MS_E_ARG);
	tm_done();
}

MS_TEST(common_read_small_size_changed)
{
	struct stat st;
	struct ms_file_fail f;
	uint8_t *out = NULL;
	size_t out_len = 0;

	/* A /proc file claims 0 bytes and then has more: never silently cut. */
	if (stat("/proc/self/status", &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0) {
		MS_SKIP("no /proc");
	}
	CHECK_ERR(ms_file_read_small("/proc/self/status", 4096, &out, &out_len, &f), MS_E_CHANGED);
	CHECK(out == NULL && strcmp(f.op, "read") == 0);
}

MS_TEST(common_read_small_unreadable)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_file_fail f;
	uint8_t *out = NULL;
	size_t out_len = 0;

	if (geteuid() == 0) {
		MS_SKIP("root reads any file");
	}
	tm_join(path, d, "key");
	tm_write(path, (const uint8_t *)"secret", 6, 0000);
	CHECK_ERR(ms_file_read_small(path, 4096, &out, &out_len, &f), MS_E_IO);
	CHECK(f.sys_errno == EACCES && strcmp(f.op, "open") == 0);
	tm_done();
}

MS_TEST(common_file_fail_why)
{
	struct ms_file_fail f = { "open", ENOENT, 0 };
	char buf[128];

	ms_file_fail_why(&f, MS_E_IO, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "open: No such file or directory");
	f = (struct ms_file_fail){ "open", EINVAL, S_IFIFO };
	ms_file_fail_why(&f, MS_E_ARG, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "is a FIFO (named pipe), not a regular file");
	f = (struct ms_file_fail){ "read", 0, 0 };
	ms_file_fail_why(&f, MS_E_CHANGED, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "changed while being read");
	ms_file_fail_why(&f, MS_E_NOMEM, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "read: out of memory");
	f = (struct ms_file_fail){ NULL, 0, 0 };
	ms_file_fail_why(&f, MS_E_IO, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "input/output error");
	CHECK_STR_EQ(ms_file_kind(S_IFDIR), "a directory");
	CHECK_STR_EQ(ms_file_kind(S_IFCHR | 0644), "a character device");
	CHECK_STR_EQ(ms_file_kind(S_IFREG), "not a regular file");
}
