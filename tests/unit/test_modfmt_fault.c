// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for failures in the middle of a write (file size limit,
 * seccomp-injected errors): the target stays untouched, no temp file left.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../src/modfmt/modfmt.h"
#include "test.h"
#include "test_modfmt_util.h"

MS_TEST(modfmt_write_fails_midway)
{
	static const rlim_t limits[] = { 0, 4096, TM_MOD_LEN + 10, TM_MOD_LEN + TM_CMS_LEN + 39 };
	const char *d = tm_dir();
	struct tm_fixture fx;

	/*
	 * RLIMIT_FSIZE makes the copy or a write fail with EFBIG at a chosen
	 * point, as ENOSPC would, for root as well.
	 */
	tm_fixture_make(&fx, d, "a.ko", 0644);
	CHECK(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		struct rlimit old, rl;
		struct ms_modfile mf;
		ms_err err;

		CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
		rl = old;
		rl.rlim_cur = limits[i];
		ms_modfile_init(&mf);
		CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
		CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		err = ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE);
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
		CHECK_ERR(err, MS_E_IO);
		CHECK(mf.sys_errno == EFBIG);
		CHECK(mf.err_path == fx.path);
		CHECK(strcmp(mf.op, "write") == 0 || strcmp(mf.op, "copy_file_range") == 0);
		ms_modfile_clear(&mf);
		CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
		CHECK(tm_count(d) == 1);
	}
	tm_fixture_free(&fx);
	tm_done();
}

static void
fail_syscalls(const long *nrs, size_t n, int err)
{
	struct sock_filter f[2 + 2 * 8];
	struct sock_fprog prog;
	size_t k = 0;

	CHECK(n <= 8);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	for (size_t i = 0; i < n; i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nrs[i],
						      0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ERRNO |
						      ((uint32_t)err & SECCOMP_RET_DATA));
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)k;
	prog.filter = f;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		MS_SKIP("seccomp filters unavailable");
	}
}

MS_TEST(modfmt_write_copy_fallback)
{
	static const long cfr[] = { SYS_copy_file_range };
	static const int errs[] = { ENOSYS, EXDEV, EINVAL, EOPNOTSUPP };
	const char *d = tm_dir();
	char dest[TM_PATH];
	struct tm_fixture fx;
	struct ms_modfile mf;

	/* Each errno that means "cannot here" falls back to read and write. */
	tm_fixture_make(&fx, d, "a.ko", 0644);
	tm_join(dest, d, "b.ko");
	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		fail_syscalls(cfr, 1, errs[i]);
		CHECK_ERR(tm_sign(&fx, &mf, dest), MS_OK);
		ms_modfile_clear(&mf);
		CHECK(tm_equals(dest, fx.want, fx.want_len));
		CHECK(unlink(dest) == 0);
	}
	/* The fallback fails cleanly too. */
	{
		struct rlimit old, rl;

		CHECK(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
		CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
		rl = old;
		rl.rlim_cur = 40000;
		ms_modfile_init(&mf);
		CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
		CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
		CHECK(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE) ==
		      MS_E_IO);
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
		CHECK(mf.sys_errno == EFBIG && strcmp(mf.op, "write") == 0);
		ms_modfile_clear(&mf);
	}
	CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
	CHECK(tm_count(d) == 1);
	tm_fixture_free(&fx);
	tm_done();
}

/* Sign @fx in place with @nrs failing with @err; expect MS_E_IO at @op, nothing changed. */
static void
sign_failing(const long *nrs, size_t n, int err, const char *op)
{
	const char *d = tm_dir();
	struct tm_fixture fx;
	struct ms_modfile mf;

	tm_fixture_make(&fx, d, "a.ko", 0644);
	ms_modfile_init(&mf);
	CHECK_ERR(ms_modfile_open(&mf, fx.path), MS_OK);
	fail_syscalls(nrs, n, err);
	CHECK_ERR(ms_modfile_write_signed(&mf, NULL, fx.cms, TM_CMS_LEN, MS_WRITE_REPLACE), MS_E_IO);
	CHECK(mf.sys_errno == err && strcmp(mf.op, op) == 0 && mf.err_path == fx.path);
	ms_modfile_clear(&mf);
	CHECK(tm_equals(fx.path, fx.mod, TM_MOD_LEN));
	CHECK(tm_count(d) == 1);
	tm_fixture_free(&fx);
	tm_done();
}

MS_TEST(modfmt_write_copy_error)
{
	static const long nrs[] = { SYS_copy_file_range };

	sign_failing(nrs, 1, EIO, "copy_file_range");
}

MS_TEST(modfmt_write_fsync_error)
{
	static const long nrs[] = { SYS_fsync };

	/* ENOSPC can first appear at fsync (delayed allocation). */
	sign_failing(nrs, 1, ENOSPC, "fsync");
}

MS_TEST(modfmt_write_rename_error)
{
#ifdef SYS_rename
	static const long nrs[] = { SYS_rename, SYS_renameat, SYS_renameat2 };
#else
	static const long nrs[] = { SYS_renameat, SYS_renameat2 };
#endif

	sign_failing(nrs, sizeof(nrs) / sizeof(nrs[0]), EIO, "rename");
}

MS_TEST(modfmt_file_write_atomic_fsync_error)
{
	static const long nrs[] = { SYS_fsync };
	const char *d = tm_dir();
	char path[TM_PATH];
	struct ms_file_fail f;

	tm_join(path, d, "a.p7s");
	tm_write(path, (const uint8_t *)"old", 3, 0644);
	fail_syscalls(nrs, 1, EIO);
	CHECK_ERR(ms_file_write_atomic(path, (const uint8_t *)"new", 3, 0644, MS_WRITE_REPLACE, NULL,
				   &f), MS_E_IO);
	CHECK(f.sys_errno == EIO && strcmp(f.op, "fsync") == 0);
	CHECK(tm_equals(path, (const uint8_t *)"old", 3));
	CHECK(tm_count(d) == 1);
	tm_done();
}
