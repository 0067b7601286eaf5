// SPDX-License-Identifier: GPL-2.0-only
/* slowtoken: every CKR_ name of p11-kit's pkcs11.h (PKCS#11 2.40), both ways. */
#include <string.h>

#include "slowtoken.h"

static const struct {
	const char *name;
	CK_RV rv;
} rv_table[] = {
#define MS_CKR(x) { #x, x },
#include "../../src/pkcs11/ckr_list.inc"
#undef MS_CKR
};

const char *
st_rv_name(CK_RV rv)
{
	for (size_t i = 0; i < sizeof(rv_table) / sizeof(rv_table[0]); i++) {
		if (rv_table[i].rv == rv) {
			return rv_table[i].name;
		}
	}
	return NULL;
}

bool
st_rv_parse(const char *name, size_t len, CK_RV *rv)
{
	for (size_t i = 0; i < sizeof(rv_table) / sizeof(rv_table[0]); i++) {
		if (strlen(rv_table[i].name) == len && memcmp(rv_table[i].name, name, len) == 0) {
			*rv = rv_table[i].rv;
			return true;
		}
	}
	return false;
}
