// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for the library versions each layer reports (modsign --version). */
#include <string.h>

#include "../../src/cms/cms.h"
#include "../../src/common/ms_common.h"
#include "../../src/modfmt/modfmt.h"
#include "../../src/pkcs11/p11.h"
#include "../../src/signer/signer.h"
#include "test.h"

MS_TEST(libver_set_copies_or_refuses)
{
	struct ms_libver v;
	char longest[MS_LIBVER_MAX + 1];

	CHECK_ERR(ms_libver_set(&v, "zlib", "1.2.13", false), MS_OK);
	CHECK_STR_EQ(v.name, "zlib");
	CHECK_STR_EQ(v.version, "1.2.13");
	CHECK(!v.is_built_against);
	memset(longest, '9', sizeof(longest) - 1);
	longest[sizeof(longest) - 1] = '\0';
	CHECK_ERR(ms_libver_set(&v, "x", longest, true), MS_E_NOSPACE);
	CHECK_STR_EQ(v.version, "");
	longest[MS_LIBVER_MAX - 1] = '\0';	/* the longest that fits */
	CHECK_ERR(ms_libver_set(&v, "x", longest, true), MS_OK);
	CHECK(v.is_built_against);
	CHECK_ERR(ms_libver_set(&v, "x", "", false), MS_E_ARG);
	CHECK_ERR(ms_libver_set(&v, "x", NULL, false), MS_E_ARG);
}

typedef ms_err (*lib_versions_fn)(struct ms_libver *out, size_t cap, size_t *out_len);

/* Size query, one entry short, then the names in order, each with a version. */
static void
check_layer(lib_versions_fn fn, const char *const *names, size_t n)
{
	struct ms_libver v[8];
	size_t len = 99;

	CHECK_ERR(fn(NULL, 0, &len), MS_OK);
	CHECK_EQ(len, n);
	len = 99;
	CHECK_ERR(fn(v, n - 1, &len), MS_E_NOSPACE);
	CHECK_EQ(len, n);
	memset(v, 0, sizeof(v));
	CHECK_ERR(fn(v, sizeof(v) / sizeof(v[0]), &len), MS_OK);
	CHECK_EQ(len, n);
	for (size_t i = 0; i < n; i++) {
		CHECK_STR_EQ(v[i].name, names[i]);
		/* A version starts with a digit: "2.28.3", "3.8", "1.2.13". */
		CHECK(v[i].version[0] >= '0' && v[i].version[0] <= '9');
		CHECK(strchr(v[i].version, '.') != NULL);
	}
}

MS_TEST(libver_layers)
{
	static const char *const p11[] = { "p11-kit" };
	static const char *const cms[] = { "mbedTLS", "nettle" };
	static const char *const signer[] = { "GMP" };
	static const char *const mod[] = { "xz", "zstd", "zlib" };
	struct ms_libver v;
	size_t len = 0;

	check_layer(ms_p11_lib_versions, p11, 1);
	check_layer(ms_cms_lib_versions, cms, 2);
	check_layer(ms_signer_lib_versions, signer, 1);
	check_layer(ms_mod_lib_versions, mod, 3);
	/* p11-kit tells no version at run time: the build's is marked so. */
	CHECK_ERR(ms_p11_lib_versions(&v, 1, &len), MS_OK);
	CHECK(v.is_built_against);
	CHECK_ERR(ms_mod_lib_versions(NULL, 0, &len), MS_OK);
}
