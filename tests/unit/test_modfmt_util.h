/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers for the src/modfmt unit tests: a private temp directory per test
 * (removed at exit, even after a failed CHECK), small file utilities.
 */
#ifndef MS_TEST_MODFMT_UTIL_H
#define MS_TEST_MODFMT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../src/modfmt/modfmt.h"

#define TM_PATH 4096

/* A new directory under /tmp, removed (recursively) when the test exits. */
const char *tm_dir(void);

/* Remove the directory now (tests end with _exit(), which skips atexit). */
void tm_done(void);

/* @dir/@name into @out (TM_PATH bytes). */
void tm_join(char *out, const char *dir, const char *name);

/* Create or truncate @path with @len bytes of @p and mode @mode. */
void tm_write(const char *path, const uint8_t *p, size_t len, mode_t mode);

/* Append @len bytes to @path through a new descriptor. */
void tm_append(const char *path, const uint8_t *p, size_t len);

/* Whether @path's content is exactly @p/@len. */
int tm_equals(const char *path, const uint8_t *p, size_t len);

/* Number of entries in @dir (without "." and ".."). */
unsigned tm_count(const char *dir);

/* Number of entries in @dir that look like our temp files. */
unsigned tm_count_tmp(const char *dir);

/* @len bytes of a fixed pseudo-random pattern seeded by @seed. */
uint8_t *tm_pattern(size_t len, unsigned seed);

#define TM_MOD_LEN 70001
#define TM_CMS_LEN 403

/* A module of TM_MOD_LEN pattern bytes in a file, a fake CMS blob, the signed result. */
struct tm_fixture {
	char path[TM_PATH];
	uint8_t *mod;		/* TM_MOD_LEN bytes */
	uint8_t *cms;		/* TM_CMS_LEN bytes */
	uint8_t *want;		/* mod + cms + trailer */
	size_t want_len;
};

/* Write @dir/@name with the module bytes and mode @mode. */
void tm_fixture_make(struct tm_fixture *fx, const char *dir, const char *name, mode_t mode);

void tm_fixture_free(struct tm_fixture *fx);

/* lstat mode bits of @path. */
mode_t tm_mode_of(const char *path);

/* Init @mf, open the fixture's module and write it signed to @dest (NULL: in place). */
ms_err tm_sign(struct tm_fixture *fx, struct ms_modfile *mf, const char *dest);

#endif
