// SPDX-License-Identifier: GPL-2.0-only
/* Names of the PKCS#11 return values (CK_RV) for one-line messages. */
#include "p11_internal.h"

struct rv_name {
	CK_RV rv;
	const char *name;
};

static const struct rv_name rv_names[] = {
#define MS_CKR(x) { x, #x },
#include "ckr_list.h"
#undef MS_CKR
};

const char *
ms_p11_rv_name(unsigned long rv)
{
	for (size_t i = 0; i < sizeof(rv_names) / sizeof(rv_names[0]); i++) {
		if (rv_names[i].rv == rv) {
			return rv_names[i].name;
		}
	}
	/* Vendor values carry no standard meaning; name their range. */
	if (rv >= CKR_VENDOR_DEFINED) {
		return "CKR_VENDOR_DEFINED";
	}
	return "CKR_(unknown)";
}
