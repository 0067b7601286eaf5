// SPDX-License-Identifier: GPL-2.0-only
/* The entries of `modsign --version`: a library's name and version. */
#include <string.h>

#include "ms_common.h"

ms_err
ms_libver_set(struct ms_libver *v, const char *name, const char *version, bool is_built_against)
{
	size_t len;

	v->name = name;
	v->version[0] = '\0';
	v->is_built_against = is_built_against;
	if (version == NULL || version[0] == '\0') {
		return MS_E_ARG;
	}
	len = strlen(version);
	if (len >= sizeof(v->version)) {
		return MS_E_NOSPACE;
	}
	memcpy(v->version, version, len + 1);
	return MS_OK;
}
