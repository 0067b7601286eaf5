// SPDX-License-Identifier: GPL-2.0-only
/* Fuzz harness support: the fixed TEST-ONLY certificates some targets verify against. */
#include <stdlib.h>

#include "cms/cms.h"
#include "fuzz.h"

void
fuzz_certs_load(const char *const *names, struct ms_cms_cert **out, size_t n)
{
	if (n > 0 && out[0] != NULL) {
		return;		/* loaded by an earlier input */
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		uint8_t *der = fuzz_data_load(names[i], &len);

		if (ms_cms_cert_parse(der, len, &out[i]) != MS_OK) {
			fuzz_die("a TEST-ONLY certificate does not parse");
		}
		free(der);
	}
}
