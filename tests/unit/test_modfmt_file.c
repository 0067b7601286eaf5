// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for opening, reading and judging modules. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/modfmt/modfmt.h"
#include "test.h"
#include "test_modfmt_util.h"

/* @mod_len pattern bytes, then (if @sig_len) a fake blob and a valid trailer. */
static uint8_t *
make_module(const char *path, size_t mod_len, uint32_t sig_len, size_t *len)
{
	uint8_t *p = tm_pattern(mod_len + sig_len + MS_MOD_TRAILER_LEN, 7);
	size_t t = 0;

	*len = mod_len;
	if (sig_len > 0) {
		CHECK_ERR(ms_mod_trailer_build(sig_len, p + mod_len + sig_len, MS_MOD_TRAILER_LEN,
					   &t), MS_OK);
		*len = mod_len + sig_len + t;
	}
	tm_write(path, p, *len, 0644);
	return p;
}

MS_TEST(modfmt_open_regular)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_modfile mf;
	size_t len = 0;
	uint8_t *p = NULL;

	tm_join(path, d, "a.ko");
	p = make_module(path, 1234, 0, &len);
	ms_modfile_init(&mf);
	CHECK(mf.fd == -1);
	CHECK_ERR(ms_modfile_open(&mf, path), MS_OK);
	CHECK(mf.fd >= 0);
	CHECK(mf.st.st_size == 1234);
	CHECK(mf.path == path);
	/* Opening twice without clearing is a misuse. */
	CHECK_ERR(ms_modfile_open(&mf, path), MS_E_ARG);
	ms_modfile_clear(&mf);
	CHECK(mf.fd == -1);
	ms_modfile_clear(&mf);
	ms_modfile_clear(NULL);
	/* Reusable after clear. */
	CHECK_ERR(ms_modfile_open(&mf, path), MS_OK);
	ms_modfile_clear(&mf);
	free(p);
	tm_done();
}

MS_TEST(modfmt_open_symlink_refused)
{
	const char *d = tm_dir();
	char path[TM_PATH], link[TM_PATH];
	struct ms_modfile mf;
	size_t len = 0;
	uint8_t *p = NULL;

	tm_join(path, d, "a.ko");
	tm_join(link, d, "link.ko");
	p = make_module(path, 100, 0, &len);
	CHECK(symlink("a.ko", link) == 0);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, link), MS_E_ARG);
	CHECK(mf.sys_errno == ELOOP);
	CHECK_STR_EQ(mf.op, "open");
	CHECK(mf.err_path == link);
	CHECK(mf.fd == -1);
	ms_modfile_clear(&mf);
	free(p);
	tm_done();
}

MS_TEST(modfmt_open_directory_refused)
{
	const char *d = tm_dir();
	struct ms_modfile mf;

	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, d), MS_E_ARG);
	CHECK(mf.sys_errno == EISDIR);
	CHECK_STR_EQ(mf.op, "open");
	CHECK(mf.fd == -1);
	ms_modfile_clear(&mf);
	tm_done();
}

MS_TEST(modfmt_open_missing)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_modfile mf;

	tm_join(path, d, "none.ko");
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, path), MS_E_IO);
	CHECK(mf.sys_errno == ENOENT);
	CHECK_STR_EQ(mf.op, "open");
	CHECK(mf.err_path == path);
	ms_modfile_clear(&mf);
	tm_done();
}

MS_TEST(modfmt_open_empty_and_fifo_refused)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_modfile mf;

	tm_join(path, d, "empty.ko");
	tm_write(path, NULL, 0, 0644);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, path), MS_E_ARG);
	CHECK(mf.sys_errno == ENODATA);
	ms_modfile_clear(&mf);

	/* A FIFO with no writer: refused, without blocking in open(). */
	tm_join(path, d, "fifo.ko");
	CHECK(mkfifo(path, 0600) == 0);
	CHECK_ERR(ms_modfile_open(&mf, path), MS_E_ARG);
	CHECK(mf.sys_errno == EINVAL && mf.file_type == S_IFIFO);
	ms_modfile_clear(&mf);
	/* /dev/null: a character device, said so. */
	CHECK_ERR(ms_modfile_open(&mf, "/dev/null"), MS_E_ARG);
	CHECK(mf.sys_errno == EINVAL && mf.file_type == S_IFCHR);
	ms_modfile_clear(&mf);
	CHECK_ERR(ms_modfile_open(&mf, d), MS_E_ARG);
	CHECK(mf.sys_errno == EISDIR && mf.file_type == S_IFDIR);
	ms_modfile_clear(&mf);
	tm_done();
}

MS_TEST(modfmt_read_whole)
{
	static const size_t caps[] = { 1, 7, 4096, 65536, 1 << 20 };
	const char *d = tm_dir();
	char path[TM_PATH];
	size_t len = 0;
	uint8_t *p = NULL;
	uint8_t *buf = malloc(1 << 20);

	CHECK(buf != NULL);
	tm_join(path, d, "a.ko");
	p = make_module(path, 100003, 0, &len);
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct ms_modfile mf;
		size_t off = 0;
		size_t n = 0;

		ms_modfile_init(&mf);
		CHECK_ERR(ms_modfile_open(&mf, path), MS_OK);
		for (;;) {
			CHECK_ERR(ms_modfile_read(&mf, buf, caps[c], &n), MS_OK);
			if (n == 0) {
				break;
			}
			CHECK(n <= caps[c] && off + n <= len);
			CHECK_EQ_BYTES(buf, p + off, n);
			off += n;
		}
		CHECK(off == len);
		/* Still the end when asked again. */
		CHECK(ms_modfile_read(&mf, buf, caps[c], &n) == MS_OK && n == 0);
		CHECK_ERR(ms_modfile_read(&mf, buf, 0, &n), MS_E_ARG);
		/* From the first byte again after a rewind. */
		CHECK_ERR(ms_modfile_rewind(&mf), MS_OK);
		CHECK_ERR(ms_modfile_read(&mf, buf, caps[c], &n), MS_OK);
		CHECK(n == (caps[c] < len ? caps[c] : len));
		CHECK_EQ_BYTES(buf, p, n);
		ms_modfile_clear(&mf);
		CHECK_ERR(ms_modfile_rewind(&mf), MS_E_ARG);
	}
	free(buf);
	free(p);
	tm_done();
}

MS_TEST(modfmt_read_detects_growth_and_shrink)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_modfile mf;
	uint8_t buf[64];
	size_t len = 0;
	size_t n = 0;
	uint8_t *p = NULL;

	tm_join(path, d, "a.ko");
	p = make_module(path, 100, 0, &len);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, path), MS_OK);
	tm_append(path, (const uint8_t *)"x", 1);
	CHECK(ms_modfile_read(&mf, buf, sizeof(buf), &n) == MS_OK && n == 64);
	CHECK(ms_modfile_read(&mf, buf, sizeof(buf), &n) == MS_OK && n == 36);
	CHECK_ERR(ms_modfile_read(&mf, buf, sizeof(buf), &n), MS_E_CHANGED);
	ms_modfile_clear(&mf);

	CHECK_ERR(ms_modfile_open(&mf, path), MS_OK);
	CHECK(truncate(path, 50) == 0);
	CHECK_ERR(ms_modfile_read(&mf, buf, sizeof(buf), &n), MS_E_CHANGED);
	ms_modfile_clear(&mf);
	free(p);
	tm_done();
}

/* Write @bytes as the whole file and return ms_modfile_sig_state() on it. */
static ms_err
state_of(const char *path, const uint8_t *bytes, size_t len, struct ms_mod_sig_info *info)
{
	struct ms_modfile mf;
	ms_err err;

	tm_write(path, bytes, len, 0644);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, path), MS_OK);
	err = ms_modfile_sig_state(&mf, info, NULL);
	ms_modfile_clear(&mf);
	return err;
}

MS_TEST(modfmt_sig_state)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_mod_sig_info info;
	uint8_t buf[2048];
	size_t t = 0;

	tm_join(path, d, "a.ko");
	memset(buf, 0x5a, sizeof(buf));
	CHECK_ERR(state_of(path, buf, 1, &info), MS_E_NOTFOUND);
	CHECK_ERR(state_of(path, buf, 40, &info), MS_E_NOTFOUND);
	CHECK_ERR(state_of(path, buf, sizeof(buf), &info), MS_E_NOTFOUND);

	/* Signed: 100 module bytes, a 403-byte blob, the trailer. */
	CHECK_ERR(ms_mod_trailer_build(403, buf + 503, 40, &t), MS_OK);
	memset(&info, 0, sizeof(info));
	CHECK_ERR(state_of(path, buf, 543, &info), MS_OK);
	CHECK(info.sig_len == 403 && info.id_type == 2);
	/* The same trailer with no module byte before the blob. */
	CHECK_ERR(state_of(path, buf + 100, 443, &info), MS_E_MALFORMED);
	/* id_type 1 (PKEY_ID_X509). */
	buf[503 + 2] = 1;
	CHECK_ERR(state_of(path, buf, 543, &info), MS_E_MALFORMED);

	/* Files too short to hold a signature, ending in the marker. */
	memcpy(buf, MS_MOD_MAGIC, MS_MOD_MAGIC_LEN);
	CHECK_ERR(state_of(path, buf, MS_MOD_MAGIC_LEN, &info), MS_E_NOTFOUND);
	for (size_t len = MS_MOD_MAGIC_LEN + 1; len <= MS_MOD_TRAILER_LEN; len++) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf + len - MS_MOD_MAGIC_LEN, MS_MOD_MAGIC, MS_MOD_MAGIC_LEN);
		CHECK_ERR(state_of(path, buf, len, &info), MS_E_MALFORMED);
	}
	tm_done();
}
