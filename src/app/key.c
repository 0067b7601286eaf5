// SPDX-License-Identifier: GPL-2.0-only
/*
 * The key a run signs with, one path for every source: `modsign agent`
 * when it holds the key, a key file, or 1 to 16 tokens (tokens.c).
 */
#include <stdio.h>
#include <string.h>

#include "../pkcs11/p11.h"
#include "app_internal.h"

/*
 * A key file; its passphrase only when it is encrypted: first from a
 * source that needs no terminal (as sign-file: KBUILD_SIGN_PIN), else,
 * once the file turned out encrypted, from the terminal. Asking after a
 * first try without any passphrase is not a retry.
 */
static ms_err
file_key(const struct ms_app_key_cfg *cfg, const struct ms_app_sink *sink,
	 const struct ms_app_pins *pins, struct ms_pin *pin, struct ms_signer **out)
{
	struct ms_app_pin_ask ask = { NULL, NULL, cfg->key, MS_APP_PIN_NO_PROMPT };
	char why[1400] = "";
	/* Each lane parses its own copy: an mbedTLS RSA context signs one at a time. */
	unsigned lanes = !cfg->bulk ? 1 : cfg->jobs != 0 ? cfg->jobs : ms_cpu_count();
	ms_err err;

	err = pins->get(pins->ctx, &ask, pin);
	if (err != MS_OK && err != MS_E_NOTFOUND) {
		goto out;
	}
	err = ms_signer_keyfile_open(cfg->key, pin->is_set ? pin : NULL, lanes, out, why,
				     sizeof(why));
	if (err == MS_E_PIN && !pin->is_set) {
		ms_err got;

		ask.flags = MS_APP_PIN_PROMPT_ONLY;
		got = pins->get(pins->ctx, &ask, pin);
		if (got != MS_OK && got != MS_E_NOTFOUND) {
			err = got;
			goto out;
		}
		if (got == MS_OK) {
			err = ms_signer_keyfile_open(cfg->key, pin, lanes, out, why, sizeof(why));
		}
	}
	if (err != MS_OK) {
		if (err == MS_E_PIN && !pin->is_set) {
			ms_app_say(sink, MS_APP_SAY_ERROR, NULL,
				   "%s (set KBUILD_SIGN_PIN to its passphrase)", why);
		} else {
			ms_app_say(sink, MS_APP_SAY_ERROR, NULL, "%s", why);
		}
	}
out:
	ms_pin_clear(pin);	/* a key file's passphrase is not needed again */
	return err;
}

/*
 * Under `modsign agent` the agent signs when it holds this key; when it
 * holds another, the key is opened here as usual. An agent that cannot be
 * reached is an error: never a silent login per module.
 */
static ms_err
agent_key(const struct ms_app_key_cfg *cfg, const struct ms_app_sink *sink,
	  struct ms_signer **out, bool *is_agent)
{
	char why[1400];
	ms_err err;

	*is_agent = false;
	if (cfg->agent_sock == NULL || cfg->agent_sock[0] == '\0') {
		return MS_OK;
	}
	err = ms_signer_agent_open(cfg->agent_sock, cfg->key, cfg->bulk ? cfg->jobs : 1,
				   cfg->token_timeout, out, why, sizeof(why));
	if (err == MS_E_NOTFOUND) {
		if (cfg->verbose) {
			ms_app_say(sink, MS_APP_SAY_WARN, NULL, "%s; signing with the key directly",
				   why);
		}
		return MS_OK;
	}
	if (err != MS_OK) {
		ms_app_say(sink, MS_APP_SAY_ERROR, NULL, "%s; nothing signed", why);
		return err;
	}
	*is_agent = true;
	return MS_OK;
}

ms_err
ms_app_key_open(const struct ms_app_key_cfg *cfg, const struct ms_cms_cert *cert,
		const struct ms_app_sink *sink, const struct ms_app_pins *pins,
		struct ms_pin *pin, struct ms_signer **out, struct ms_tokens *tokens,
		bool *is_agent)
{
	ms_err err;

	*out = NULL;
	*is_agent = false;
	memset(tokens, 0, sizeof(*tokens));
	if (cfg->key == NULL || pins == NULL || pins->get == NULL) {
		return MS_E_ARG;
	}
	err = agent_key(cfg, sink, out, is_agent);
	if (err != MS_OK || *is_agent) {
		return err;
	}
	if (ms_p11_uri_is(cfg->key)) {
		return ms_app_tokens_open(cfg, cert, sink, pins, pin, out, tokens);
	}
	if (cfg->n_keys > 0) {
		return MS_E_ARG;	/* more tokens need <key> on a token too */
	}
	return file_key(cfg, sink, pins, pin, out);
}
