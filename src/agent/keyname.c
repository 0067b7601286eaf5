// SPDX-License-Identifier: GPL-2.0-only
/*
 * The normalised name of a key argument, by which a client tells whether
 * the agent holds its key: a pkcs11: URI as src/pkcs11/ normalises it
 * (ms_p11_uri_key_name()), a file by its path.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../pkcs11/p11.h"
#include "agent.h"

/* "file:" and @path, every byte but [A-Za-z0-9/._~-] as %XX. */
static ms_err
file_name(const char *path, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (cap < 6) {
		return MS_E_NOSPACE;
	}
	memcpy(out, "file:", 5);
	n = 5;
	for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || strchr("/._~-", *p) != NULL;

		if (cap - n < (plain ? 2u : 4u)) {
			return MS_E_NOSPACE;
		}
		if (plain) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
	return MS_OK;
}

ms_err
ms_agent_key_name(const char *key, char *out, size_t cap)
{
	char *real = NULL;
	char cwd[PATH_MAX];
	char abs[2 * PATH_MAX + 2];
	ms_err err = MS_E_INTERNAL;

	if (key == NULL || *key == '\0') {
		return MS_E_ARG;
	}
	if (ms_p11_uri_is(key)) {
		return ms_p11_uri_key_name(key, out, cap);
	}
	/*
	 * The file itself where it exists here; otherwise (a client on a
	 * machine without the key file, through a forwarded socket) the path
	 * as given, made absolute.
	 */
	real = realpath(key, NULL);
	if (real != NULL) {
		err = file_name(real, out, cap);
		free(real);
		return err;
	}
	if (key[0] == '/') {
		return file_name(key, out, cap);
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL) {
		return MS_E_IO;
	}
	if ((size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, key) >= sizeof(abs)) {
		return MS_E_NOSPACE;
	}
	return file_name(abs, out, cap);
}
