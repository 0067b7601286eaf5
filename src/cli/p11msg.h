/* SPDX-License-Identifier: GPL-2.0-only */
/* The message of a failed token step (p11msg.c). */
#ifndef MS_CLI_P11MSG_H
#define MS_CLI_P11MSG_H

#include "../common/ms_common.h"

/*
 * ms_cli_p11_error() - "modsign: <role>: <call>: <CKR_...>: <detail>" for a
 * failed step of @p11 (NULL: only @err's text), as src/app says it.
 */
struct ms_p11;
void ms_cli_p11_error(const char *role, const struct ms_p11 *p11, ms_err err);

#endif
