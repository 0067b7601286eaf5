// SPDX-License-Identifier: GPL-2.0-only
/* The versions of mbedTLS and nettle, as the libraries tell them. */
#include <stdio.h>

#include <mbedtls/version.h>
#include <nettle/version.h>

#include "cms.h"

#define CMS_N_LIBS 2

ms_err
ms_cms_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len)
{
	/* mbedtls_version_get_string() writes at most 18 bytes (version.h). */
	char buf[MS_LIBVER_MAX];
	ms_err err = MS_E_INTERNAL;
	int n;

	*out_len = CMS_N_LIBS;
	if (out == NULL) {
		return MS_OK;
	}
	if (cap < CMS_N_LIBS) {
		return MS_E_NOSPACE;
	}
#if defined(MBEDTLS_VERSION_C)
	mbedtls_version_get_string(buf);
	err = ms_libver_set(&out[0], "mbedTLS", buf, false);
#else
	err = ms_libver_set(&out[0], "mbedTLS", MBEDTLS_VERSION_STRING, true);
#endif
	if (err != MS_OK) {
		return err;
	}
	n = snprintf(buf, sizeof(buf), "%d.%d", nettle_version_major(), nettle_version_minor());
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		return MS_E_NOSPACE;
	}
	return ms_libver_set(&out[1], "nettle", buf, false);
}
