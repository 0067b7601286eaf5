// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lane pool of a run's key, one set-up for the bulk run and the agent:
 * the key's lanes and, with several tokens, every other token's behind the
 * same pool.
 */
#include "app_internal.h"

ms_err
ms_app_lanes_open(struct ms_signer *signer, const struct ms_tokens *tokens,
		  const struct ms_lanes_cfg *cfg, struct ms_lanes **out)
{
	struct ms_lanes *pool = NULL;
	ms_err err = MS_E_INTERNAL;

	*out = NULL;
	err = ms_lanes_new(signer, cfg, &pool);
	for (size_t k = 1; err == MS_OK && k < tokens->n; k++) {
		err = ms_lanes_add(pool, tokens->signer[k]);
	}
	if (err != MS_OK) {
		ms_lanes_free(pool);
		return err;
	}
	*out = pool;
	return MS_OK;
}

const char *
ms_app_tokens_name(const struct ms_tokens *tokens, unsigned k)
{
	return k < tokens->n ? tokens->name[k] : "a token";
}
