/* SPDX-License-Identifier: GPL-2.0-only */
/* The messages of a failed token step (p11msg.c). */
#ifndef MS_CLI_P11MSG_H
#define MS_CLI_P11MSG_H

#include "../common/ms_common.h"
#include "args.h"

/*
 * ms_cli_p11_error() (p11msg.c) - "modsign: <role>: <call>: <CKR_...>: <detail>" for a
 * failed step of @p11 (NULL: only @err's text).
 */
struct ms_p11;
void ms_cli_p11_error(const char *role, const struct ms_p11 *p11, ms_err err);
/*
 * ms_cli_p11_login_error() (p11msg.c) - the message for a failed
 * ms_p11_login() of @p11 under @o: "[<who>: ]C_Login: PIN from <source>
 * rejected: <CKR_...><tail>" when the token refused the PIN, else as
 * ms_cli_p11_error() with @who (NULL: "key") as the role, naming
 * --pin-final-try when the token's last try was spared for want of it.
 */
void ms_cli_p11_login_error(const char *who, const struct ms_p11 *p11, ms_err err,
			    const struct ms_pin *pin, const struct ms_opts *o, const char *tail);

#endif
