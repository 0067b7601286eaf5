// SPDX-License-Identifier: GPL-2.0-only
/* Text for each ms_err code. */
#include "ms_common.h"

const char *
ms_err_str(ms_err err)
{
	switch (err) {
	case MS_OK:
		return "success";
	case MS_E_INTERNAL:
		return "internal error";
	case MS_E_ARG:
		return "invalid argument";
	case MS_E_NOMEM:
		return "out of memory";
	case MS_E_IO:
		return "input/output error";
	case MS_E_NOSPACE:
		return "output buffer too small";
	case MS_E_MALFORMED:
		return "malformed input";
	case MS_E_UNSUPPORTED:
		return "not supported";
	case MS_E_TOKEN:
		return "token error";
	case MS_E_PIN:
		return "PIN missing, rejected or locked";
	case MS_E_NOTFOUND:
		return "not found";
	case MS_E_AMBIGUOUS:
		return "more than one match";
	case MS_E_MISMATCH:
		return "key does not match certificate";
	case MS_E_SIGNED:
		return "already signed";
	case MS_E_CHANGED:
		return "file changed while being read";
	}
	return "unknown error";
}
