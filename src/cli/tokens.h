/* SPDX-License-Identifier: GPL-2.0-only */
/* The tokens of a run given --key, opened at the same time (tokens.c). */
#ifndef MS_CLI_TOKENS_H
#define MS_CLI_TOKENS_H

#include <stddef.h>

#include "../cms/cms.h"
#include "../common/ms_common.h"
#include "../signer/signer.h"
#include "args.h"

/* A token as messages name it: "token 'label' (serial s)". */
#define MS_TOKEN_NAME 96

/*
 * The tokens of a run given --key (tokens.c), <key>'s first: signer[0]
 * is the job's own signer (borrowed here), the others are owned here, as
 * are the PINs of sources other than <key>'s (locked in memory, wiped on
 * close).
 */
struct ms_tokens {
	struct ms_signer *signer[MS_TOKENS_MAX];
	char name[MS_TOKENS_MAX][MS_TOKEN_NAME];
	size_t n;		/* 0: one key, no --key */
	struct ms_pin *pins;
};

/*
 * ms_cli_tokens_open() - open <key> (@o->key) and every --key (@o->keys),
 * each a token holding one key, all at the same time on threads: start-up,
 * one C_Login each (PIN rules as for one token; a PIN source read once, a
 * PIN offered to a second token only once a first took it), the key found,
 * lanes opened (each token its share of -j) and the key checked against
 * @cert, or, when @cert is NULL, against <key>'s token. One token named
 * twice (same manufacturer, model and serial) is refused, and so is a token
 * whose key is another. <key>'s PIN goes to @pin (the caller wipes it);
 * <key>'s signer to *@main_out (the caller frees it), the others stay in
 * @out. Prints its own errors; on failure nothing is left open.
 * Return: MS_OK, MS_E_ARG (one token twice), MS_E_MISMATCH, MS_E_PIN,
 * MS_E_TOKEN, MS_E_NOTFOUND, MS_E_NOMEM and the others of the token layer.
 */
ms_err ms_cli_tokens_open(const struct ms_opts *o, const struct ms_cms_cert *cert,
			  struct ms_pin *pin, struct ms_signer **main_out,
			  struct ms_tokens *out) MS_MUST_CHECK;
/* ms_cli_tokens_close() - free every signer but signer[0], wipe the PINs. */
void ms_cli_tokens_close(struct ms_tokens *t);
/* ms_cli_tokens_wipe() - wipe the PINs only (the process ends with a token hung). */
void ms_cli_tokens_wipe(struct ms_tokens *t);

#endif
