/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the libFuzzer targets of tests/fuzz/ share: the entry point, inputs
 * handed to code that reads files (a memfd, a temp file), and the TEST-ONLY
 * data of tests/data the targets compare against. Test code only.
 */
#ifndef MS_FUZZ_H
#define MS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Where tests/data is; the Makefile and the replay script pass an absolute path. */
#ifndef MS_FUZZ_DATA_DIR
#define MS_FUZZ_DATA_DIR "tests/data"
#endif

/* libFuzzer's entry point; fuzz_stdin.c calls it without libFuzzer. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * fuzz_die() - a broken invariant: print @what (never input bytes) and
 * abort, which libFuzzer and the stdin driver both report as a crash.
 */
void fuzz_die(const char *what) __attribute__((noreturn));

/*
 * fuzz_memfd_path() - a path that open(2) reads as a regular file holding
 * exactly @p, @len: "/proc/self/fd/N" of one memfd per process, rewritten
 * on each call. The string is static.
 */
const char *fuzz_memfd_path(const uint8_t *p, size_t len);

/*
 * fuzz_tmp_file() - a real file (not a link) in a private temp directory
 * holding exactly @p, @len, for code that opens with O_NOFOLLOW. The same
 * path each call; the directory is removed at exit.
 */
const char *fuzz_tmp_file(const uint8_t *p, size_t len);

/*
 * fuzz_data_load() - the file @name of tests/data (e.g. "rsa2048.x509.der")
 * into a malloc'd buffer the caller owns; aborts if it is missing.
 */
uint8_t *fuzz_data_load(const char *name, size_t *len);

struct ms_cms_cert;

/*
 * fuzz_certs_load() - parse the @n tests/data certificates @names into @out,
 * or die (tests/fuzz/fuzz_certs.c; linked by the targets that use src/cms).
 * Once per process: nothing is done when @out[0] is already set.
 */
void fuzz_certs_load(const char *const *names, struct ms_cms_cert **out, size_t n);

#endif
