// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/modfmt/strip.c: the layout of a signed module, its
 * PKCS#7 read back, and stripping: byte for byte the module before
 * signing, atomic, mode kept, broken trailers named and left alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/modfmt/strip.h"
#include "test.h"
#include "test_modfmt_util.h"

/* Open @path, which must succeed. */
static void
open_mod(struct ms_modfile *mf, const char *path)
{
	ms_modfile_init(mf);
	CHECK_ERR(ms_modfile_open(mf, path), MS_OK);
}

MS_TEST(strip_layout_and_sig_read)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;
	struct ms_mod_layout l;
	uint8_t *buf = malloc(TM_CMS_LEN);
	const char *why = "unset";
	uint64_t n = 0;

	CHECK(buf != NULL);
	tm_fixture_make(&fx, d, "a.ko", 0644);
	open_mod(&mf, fx.path);
	CHECK_ERR(ms_mod_layout_read(&mf, &l, &why), MS_E_NOTFOUND);
	CHECK_STR_EQ(why, "not signed");
	CHECK_ERR(ms_mod_payload_len(&mf, &n), MS_E_NOTFOUND);
	ms_modfile_clear(&mf);

	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
	ms_modfile_clear(&mf);
	open_mod(&mf, fx.path);
	CHECK(ms_mod_layout_read(&mf, &l, &why) == MS_OK && why == NULL);
	CHECK(l.file_len == fx.want_len && l.payload_len == TM_MOD_LEN && l.sig_len == TM_CMS_LEN);
	CHECK(l.info.id_type == 2);
	CHECK(ms_mod_payload_len(&mf, &n) == MS_OK && n == TM_MOD_LEN);
	CHECK_ERR(ms_mod_sig_read(&mf, &l, buf, TM_CMS_LEN - 1), MS_E_NOSPACE);
	CHECK_ERR(ms_mod_sig_read(&mf, &l, buf, TM_CMS_LEN), MS_OK);
	CHECK_EQ_BYTES(buf, fx.cms, TM_CMS_LEN);
	l.sig_len++;
	CHECK_ERR(ms_mod_sig_read(&mf, &l, buf, TM_CMS_LEN), MS_E_ARG);
	ms_modfile_clear(&mf);
	free(buf);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(strip_in_place_and_dest)
{
	static const mode_t modes[] = { 0600, 0755, 0644 };
	const char *d = tm_dir();
	char dest[TM_PATH];

	tm_join(dest, d, "out.ko");
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		struct tm_fixture fx;
		struct ms_modfile mf;
		const char *why = NULL;

		tm_fixture_make(&fx, d, "a.ko", modes[i]);
		CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
		ms_modfile_clear(&mf);
		/* To a dest: the module stays signed. */
		open_mod(&mf, fx.path);
		CHECK_ERR(ms_mod_strip(&mf, dest, &why), MS_OK);
		ms_modfile_clear(&mf);
		CHECK(tm_equals(dest, fx.mod, TM_MOD_LEN));
		CHECK(tm_equals(fx.path, fx.want, fx.want_len));
		CHECK(unlink(dest) == 0);
		/* In place: byte for byte the module before signing, same mode. */
		open_mod(&mf, fx.path);
		CHECK_ERR(ms_mod_strip(&mf, NULL, &why), MS_OK);
		ms_modfile_clear(&mf);
		CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
		CHECK(tm_mode_of(fx.path) == modes[i]);
		CHECK(tm_count(d) == 1 && tm_count_tmp(d) == 0);
		/* Again: not signed any more, left alone. */
		open_mod(&mf, fx.path);
		CHECK_ERR(ms_mod_strip(&mf, NULL, &why), MS_E_NOTFOUND);
		CHECK_STR_EQ(why, "not signed");
		ms_modfile_clear(&mf);
		CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
		tm_fixture_free(&fx);
	}
	tm_done();
}

MS_TEST(strip_twice_signed_keeps_inner)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;

	tm_fixture_make(&fx, d, "a.ko", 0644);
	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
	ms_modfile_clear(&mf);
	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
	ms_modfile_clear(&mf);
	open_mod(&mf, fx.path);
	CHECK_ERR(ms_mod_strip(&mf, NULL, NULL), MS_OK);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.want, fx.want_len));
	tm_fixture_free(&fx);
	tm_done();
}

/* Sign, then overwrite byte @off from the end with @val; strip must refuse. */
static void
broken_trailer(size_t off_from_end, uint8_t val, const char *want_why)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;
	const char *why = NULL;

	tm_fixture_make(&fx, d, "a.ko", 0644);
	fx.want[fx.want_len - off_from_end] = val;
	tm_write(fx.path, fx.want, fx.want_len, 0644);
	open_mod(&mf, fx.path);
	CHECK_ERR(ms_mod_strip(&mf, NULL, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, want_why);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.want, fx.want_len));
	CHECK(tm_count(d) == 1);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(strip_broken_trailers)
{
	/* struct module_signature is the 12 bytes before the 28-byte marker. */
	const size_t info = MS_MOD_TRAILER_LEN;

	broken_trailer(info - 2, 1, "trailer: id_type is not 2 (PKCS#7)");
	broken_trailer(info - 0, 1, "trailer: non-zero algo, hash, signer_len, key_id_len or pad "
		       "in module_signature");
	broken_trailer(info - 6, 1, "trailer: non-zero algo, hash, signer_len, key_id_len or pad "
		       "in module_signature");
	/* sig_len's top byte: past the start of the file. */
	broken_trailer(info - 8, 0x7f, "trailer: sig_len reaches past the start of the file");
}

/*
 * A marker with no room for the info block and a module byte: every length
 * from 29 to 40 bytes is a broken signature; 28 bytes (the marker alone)
 * is no signature at all. Either way the file stays as it was.
 */
MS_TEST(strip_short_file_with_marker)
{
	const char *d = tm_dir();
	char path[TM_PATH];
	uint8_t buf[MS_MOD_TRAILER_LEN];
	struct ms_modfile mf;
	const char *why = NULL;

	tm_join(path, d, "short.ko");
	for (size_t len = MS_MOD_MAGIC_LEN; len <= MS_MOD_TRAILER_LEN; len++) {
		memset(buf, 0, sizeof(buf));
		memcpy(buf + len - MS_MOD_MAGIC_LEN, MS_MOD_MAGIC, MS_MOD_MAGIC_LEN);
		tm_write(path, buf, len, 0644);
		open_mod(&mf, path);
		if (len == MS_MOD_MAGIC_LEN) {
			CHECK_ERR(ms_mod_strip(&mf, NULL, &why), MS_E_NOTFOUND);
			CHECK_STR_EQ(why, "not signed");
		} else {
			CHECK_ERR(ms_mod_strip(&mf, NULL, &why), MS_E_MALFORMED);
			CHECK_STR_EQ(why, "trailer: file too short to hold a signature");
		}
		ms_modfile_clear(&mf);
		CHECK(tm_equals(path, buf, len));
		CHECK(tm_count(d) == 1);
	}
	tm_done();
}

/*
 * sig_len 0 passes the kernel's trailer check (mod_check_sig) and fails
 * later on the empty PKCS#7: the layout refuses it with its own reason.
 */
MS_TEST(strip_sig_len_zero)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;
	struct ms_mod_layout l;
	const char *why = NULL;
	uint8_t *sig_len;

	tm_fixture_make(&fx, d, "a.ko", 0644);
	/* The __be32 sig_len: bytes 8 to 11 of the 12-byte module_signature. */
	sig_len = fx.want + fx.want_len - MS_MOD_TRAILER_LEN + 8;
	memset(sig_len, 0, 4);
	tm_write(fx.path, fx.want, fx.want_len, 0644);
	open_mod(&mf, fx.path);
	CHECK_ERR(ms_mod_layout_read(&mf, &l, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, "trailer: sig_len is 0 (no PKCS#7)");
	why = NULL;
	CHECK_ERR(ms_mod_strip(&mf, NULL, &why), MS_E_MALFORMED);
	CHECK_STR_EQ(why, "trailer: sig_len is 0 (no PKCS#7)");
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.want, fx.want_len));
	CHECK(tm_count(d) == 1);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(strip_refuses_symlink_dest_and_changed_module)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;
	char link[TM_PATH], dir[TM_PATH];
	static const uint8_t extra[] = { 1, 2, 3 };

	tm_fixture_make(&fx, d, "a.ko", 0644);
	CHECK_ERR(tm_sign(&fx, &mf, NULL), MS_OK);
	ms_modfile_clear(&mf);
	tm_join(link, d, "link.ko");
	CHECK(symlink(fx.path, link) == 0);
	open_mod(&mf, fx.path);
	CHECK_ERR(ms_mod_strip(&mf, link, NULL), MS_E_ARG);
	CHECK(mf.sys_errno == ELOOP);
	ms_modfile_clear(&mf);
	tm_join(dir, d, "sub");
	CHECK(mkdir(dir, 0755) == 0);
	open_mod(&mf, fx.path);
	CHECK_ERR(ms_mod_strip(&mf, dir, NULL), MS_E_ARG);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.want, fx.want_len));
	/* The module grows between open and strip: nothing is written. */
	open_mod(&mf, fx.path);
	tm_append(fx.path, extra, sizeof(extra));
	CHECK_ERR(ms_mod_strip(&mf, NULL, NULL), MS_E_CHANGED);
	ms_modfile_clear(&mf);
	CHECK(tm_count_tmp(d) == 0);
	CHECK(unlink(link) == 0 && rmdir(dir) == 0);
	CHECK(tm_count(d) == 1);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(strip_bad_arguments)
{
	struct ms_modfile mf;
	struct ms_mod_layout l;
	uint64_t n = 0;

	ms_modfile_init(&mf);
	CHECK_ERR(ms_mod_strip(NULL, NULL, NULL), MS_E_ARG);
	CHECK_ERR(ms_mod_strip(&mf, NULL, NULL), MS_E_ARG);
	CHECK_ERR(ms_mod_layout_read(&mf, &l, NULL), MS_E_ARG);
	CHECK_ERR(ms_mod_payload_len(&mf, NULL), MS_E_ARG);
	CHECK_ERR(ms_mod_payload_len(&mf, &n), MS_E_ARG);
}

MS_TEST(strip_replace_signature_by_prefix)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;
	uint64_t n = 0;
	static const uint8_t other[] = { 0x30, 0x03, 0x02, 0x01, 0x07 };

	/* A module signed with another blob, re-signed over its payload: as if never signed. */
	tm_fixture_make(&fx, d, "a.ko", 0640);
	open_mod(&mf, fx.path);
	CHECK_ERR(ms_modfile_write_signed(&mf, NULL, other, sizeof(other), MS_WRITE_REPLACE), MS_OK);
	ms_modfile_clear(&mf);
	open_mod(&mf, fx.path);
	CHECK(ms_mod_payload_len(&mf, &n) == MS_OK && n == TM_MOD_LEN);
	CHECK(ms_modfile_write_signed_prefix(&mf, NULL, n, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_OK);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.want, fx.want_len));
	CHECK(tm_mode_of(fx.path) == 0640 && tm_count(d) == 1);
	open_mod(&mf, fx.path);
	CHECK(ms_modfile_write_signed_prefix(&mf, NULL, 0, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
	      MS_E_ARG);
	CHECK_ERR(ms_modfile_write_signed_prefix(&mf, NULL, fx.want_len + 1, fx.cms, TM_CMS_LEN,
					     MS_WRITE_REPLACE), MS_E_ARG);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.want, fx.want_len));
	tm_fixture_free(&fx);
	tm_done();
}
