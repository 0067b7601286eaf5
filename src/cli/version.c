// SPDX-License-Identifier: GPL-2.0-only
/*
 * `modsign --version`: our version, then each library we call, with the
 * version it tells (or that its headers had, "built against") and how this
 * binary links it.
 */
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>

#include "../cms/cms.h"
#include "../modfmt/modfmt.h"
#include "../pkcs11/p11.h"
#include "../signer/signer.h"
#include "args.h"
#include "msg.h"

#ifndef MS_VERSION
#define MS_VERSION "unknown"
#endif

/*
 * The Makefile's LINK=static (its default, for build/rel only) takes
 * mbedTLS, nettle, GMP, xz, zstd and zlib from their static archives and
 * passes MS_LINK_STATIC=1; p11-kit and glibc are always shared. Every
 * other build (LINK=shared, the sanitizer and valgrind builds) links all
 * of them shared.
 */
#ifndef MS_LINK_STATIC
#define MS_LINK_STATIC 0
#endif

#define VERSION_LIBS_MAX 16

typedef ms_err (*lib_versions_fn)(struct ms_libver *out, size_t cap, size_t *out_len);

/* The layers, in the order they are printed; glibc comes last. */
static const lib_versions_fn layers[] = {
	ms_p11_lib_versions,
	ms_cms_lib_versions,
	ms_signer_lib_versions,
	ms_mod_lib_versions,
};

static const char *
link_of(const char *name)
{
	if (!MS_LINK_STATIC || strcmp(name, "p11-kit") == 0 || strcmp(name, "glibc") == 0) {
		return "shared";
	}
	return "static";
}

int
ms_cli_version_print(FILE *f)
{
	struct ms_libver libs[VERSION_LIBS_MAX];
	size_t n = 0;
	size_t got = 0;
	ms_err err = MS_E_INTERNAL;

	for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); i++) {
		err = layers[i](libs + n, VERSION_LIBS_MAX - 1 - n, &got);
		if (err != MS_OK) {
			ms_cli_error("--version: %s", ms_err_str(err));
			return MS_EXIT_FAIL;
		}
		n += got;
	}
	err = ms_libver_set(&libs[n], "glibc", gnu_get_libc_version(), false);
	if (err != MS_OK) {
		ms_cli_error("--version: glibc: %s", ms_err_str(err));
		return MS_EXIT_FAIL;
	}
	n++;
	ms_cli_line(f, "modsign %s", MS_VERSION);
	for (size_t i = 0; i < n; i++) {
		ms_cli_line(f, "  %s %s%s, %s", libs[i].name, libs[i].version,
			    libs[i].is_built_against ? " (built against)" : "",
			    link_of(libs[i].name));
	}
	return MS_EXIT_OK;
}
