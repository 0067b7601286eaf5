/* SPDX-License-Identifier: GPL-2.0-only */
/* PIN input: URI, PIN file, KBUILD_SIGN_PIN or the terminal (pin.c). */
#ifndef MS_CLI_PIN_H
#define MS_CLI_PIN_H

#include "../common/ms_common.h"

/*
 * ms_cli_pin_get() - the PIN (or PEM passphrase), from the first source that
 * applies: @uri_pin_value (warned about), @uri_pin_source (file: URI or
 * path), KBUILD_SIGN_PIN, a no-echo prompt when stdin is a terminal.
 * @what names the thing for the prompt ("token 'x'", "key file k.pem").
 * Return: MS_OK, MS_E_PIN (no source; message printed), MS_E_IO.
 */
ms_err ms_cli_pin_get(const char *uri_pin_value, const char *uri_pin_source, const char *what,
		      struct ms_pin *pin) MS_MUST_CHECK;

#endif
