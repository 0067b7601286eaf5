/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The unit test harness: MS_TEST(name) defines and registers a test in the
 * "ms_tests" linker section; tests/unit/main.c runs each in a forked child.
 * CHECK() ends the child with status 1 and prints where (CHECK_EQ(),
 * CHECK_STR_EQ(), CHECK_ERR() and CHECK_MEM_EQ() also both values);
 * MS_SKIP() with 77.
 */
#ifndef MS_TEST_H
#define MS_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ms_test {
	const char *name;
	void (*fn)(void);
};

#define MS_TEST(id)							\
	static void id(void);						\
	static const struct ms_test ms_test_##id = { #id, id };	\
	__attribute__((used, section("ms_tests")))			\
	static const struct ms_test *const ms_test_ptr_##id = &ms_test_##id; \
	static void id(void)

#define CHECK(expr)							\
	do {								\
		if (!(expr)) {						\
			fprintf(stderr, "%s:%d: CHECK(%s) failed\n",	\
				__FILE__, __LINE__, #expr);		\
			exit(1);					\
		}							\
	} while (0)

/*
 * CHECK_EQ(got, want) - integers compared as long long; a failure prints
 * both values (as p11-kit's assert_num_eq). CHECK_STR_EQ(got, want) - C
 * strings (NULL allowed), both printed on failure.
 */
#define CHECK_EQ(got, want)						\
	do {								\
		long long got_v_ = (long long)(got);			\
		long long want_v_ = (long long)(want);			\
		if (got_v_ != want_v_) {				\
			fprintf(stderr, "%s:%d: CHECK_EQ(%s, %s) failed: "	\
				"got %lld, want %lld\n", __FILE__, __LINE__,	\
				#got, #want, got_v_, want_v_);		\
			exit(1);					\
		}							\
	} while (0)

#define CHECK_STR_EQ(got, want)						\
	do {								\
		const char *got_s_ = (got);				\
		const char *want_s_ = (want);				\
		if (got_s_ == NULL || want_s_ == NULL ?			\
		    got_s_ != want_s_ : strcmp(got_s_, want_s_) != 0) {	\
			fprintf(stderr, "%s:%d: CHECK_STR_EQ(%s, %s) failed:\n" \
				"    got  \"%s\"\n    want \"%s\"\n",	\
				__FILE__, __LINE__, #got, #want,	\
				got_s_ != NULL ? got_s_ : "(null)",	\
				want_s_ != NULL ? want_s_ : "(null)");	\
			exit(1);					\
		}							\
	} while (0)

/*
 * CHECK_ERR(expr, want) - an ms_err result: a failure prints both codes by
 * name ("got MS_E_MISMATCH, want MS_OK").
 */
#define CHECK_ERR(expr, want)						\
	do {								\
		int got_e_ = (int)(expr);				\
		int want_e_ = (int)(want);				\
		if (got_e_ != want_e_) {				\
			fprintf(stderr, "%s:%d: CHECK_ERR(%s) failed: "	\
				"got %s, want %s\n", __FILE__, __LINE__,	\
				#expr, ms_test_err_name(got_e_),	\
				ms_test_err_name(want_e_));		\
			exit(1);					\
		}							\
	} while (0)

/*
 * CHECK_MEM_EQ(got, want, n) - @n bytes; a failure prints the first
 * differing offset and both sides in hex around it (as OpenSSH's
 * assert_mem does).
 */
#define CHECK_MEM_EQ(got, want, n)					\
	do {								\
		size_t n_m_ = (size_t)(n);				\
		if (memcmp((got), (want), n_m_) != 0) {			\
			fprintf(stderr, "%s:%d: CHECK_MEM_EQ(%s, %s, %s) failed\n", \
				__FILE__, __LINE__, #got, #want, #n);	\
			ms_test_mem_diff((got), (want), n_m_);		\
			exit(1);					\
		}							\
	} while (0)

#define CHECK_EQ_BYTES(a, b, n) CHECK_MEM_EQ(a, b, n)

#define MS_SKIP(why)							\
	do {								\
		fprintf(stderr, "skip: %s\n", (why));			\
		exit(77);						\
	} while (0)

/* The name of an ms_err code ("MS_E_MISMATCH"), for CHECK_ERR(). */
const char *ms_test_err_name(int err);

/* Prints where @a and @b (@n bytes) first differ, 16 bytes of each from there. */
void ms_test_mem_diff(const void *a, const void *b, size_t n);

/* Hex string ("30 0b 06 ..", spaces ignored) to bytes; returns the count. */
size_t ms_test_hex(const char *hex, unsigned char *out, size_t cap);

/* Path of a file in tests/data (MS_TEST_DATA or "tests/data"). */
const char *ms_test_data(const char *name);

/* Whole file into a malloc'd buffer; exits the test on failure. */
unsigned char *ms_test_read(const char *path, size_t *len);

#endif
