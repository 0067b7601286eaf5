// SPDX-License-Identifier: GPL-2.0-only
/*
 * The normalised name of a key argument, by which a client tells whether
 * the agent holds its key. Parses untrusted input (through p11-kit's URI
 * parser).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <p11-kit/p11-kit.h>
#include <p11-kit/uri.h>

#include "../pkcs11/p11.h"
#include "agent.h"

#define URI_SCHEME "pkcs11:"
#define URI_SCHEME_LEN 7
#define URI_LEN_MAX 4096

/*
 * A pkcs11: URI without what does not name the key: the PIN and where it
 * comes from, which library reaches the token (the agent may use a shim or
 * another path to the same token) and the object class. p11-kit writes
 * what is left in a fixed order with its own percent-encoding.
 */
static ms_err
uri_name(const char *key, char *out, size_t cap)
{
	char buf[URI_LEN_MAX + 1];
	P11KitUri *uri = NULL;
	char *text = NULL;
	size_t len = 0;
	ms_err err = MS_E_ARG;

	/* As p11-kit reads it (ms_p11_uri_is()): whitespace anywhere deleted... */
	for (const char *p = key; *p != '\0'; p++) {
		if (strchr(" \r\n\v", *p) != NULL) {
			continue;
		}
		if (len == URI_LEN_MAX) {
			goto out;
		}
		buf[len++] = *p;
	}
	buf[len] = '\0';
	/* ...and the scheme in any case (RFC 3986, 3.1), which p11-kit wants lower-case. */
	if (len < URI_SCHEME_LEN) {
		goto out;
	}
	memcpy(buf, URI_SCHEME, URI_SCHEME_LEN);
	uri = p11_kit_uri_new();
	if (uri == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	if (p11_kit_uri_parse(buf, P11_KIT_URI_FOR_ANY, uri) != P11_KIT_URI_OK) {
		err = MS_E_ARG;
		goto out;
	}
	p11_kit_uri_set_pin_value(uri, NULL);
	p11_kit_uri_set_pin_source(uri, NULL);
	p11_kit_uri_set_module_name(uri, NULL);
	p11_kit_uri_set_module_path(uri, NULL);
	if (p11_kit_uri_clear_attribute(uri, CKA_CLASS) != P11_KIT_URI_OK) {
		err = MS_E_INTERNAL;
		goto out;
	}
	if (p11_kit_uri_format(uri, P11_KIT_URI_FOR_ANY, &text) != P11_KIT_URI_OK) {
		err = MS_E_ARG;
		goto out;
	}
	if (strlen(text) >= cap) {
		err = MS_E_NOSPACE;
		goto out;
	}
	memcpy(out, text, strlen(text) + 1);
	err = MS_OK;
out:
	ms_wipe(buf, sizeof(buf));	/* it may have held a pin-value */
	free(text);
	p11_kit_uri_free(uri);
	return err;
}

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
		return uri_name(key, out, cap);
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
