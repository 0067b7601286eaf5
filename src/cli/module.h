/* SPDX-License-Identifier: GPL-2.0-only */
/* One module signed: prepare, sign, write, the already-signed policy (sign.c, resign.c). */
#ifndef MS_CLI_MODULE_H
#define MS_CLI_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cms/pkcs7.h"
#include "../modfmt/modfmt.h"
#include "../signer/signer.h"
#include "job.h"

/* One module on its way through hashing, signing and writing. */
struct ms_module_work {
	const char *path;
	struct ms_modfile *mf;
	uint64_t payload_len;	/* the bytes signed and kept: less than the file with --replace */
	bool skipped;		/* --skip-signed found it signed already: nothing to do */
	unsigned later_links;	/* names of its inode the run signs after this one */
	struct ms_pkcs7_digest digest;	/* of the payload, with the job's hash */
	uint8_t *data;		/* ML-DSA over the module: the payload, read whole */
	uint8_t *cms;
	size_t cms_len;
};

/*
 * ms_cli_signed_policy() - the already-signed policy for the open module
 * @mf: *@payload_len gets the bytes to sign and keep, *@skip whether to
 * leave the module alone. Prints its own error: MS_E_SIGNED when the
 * policy refuses a signed module, MS_E_MALFORMED for a broken trailer,
 * MS_E_MISMATCH when --skip-signed finds another key's signature.
 */
ms_err ms_cli_signed_policy(struct ms_job *job, struct ms_modfile *mf, const char *path,
			    uint64_t *payload_len, bool *skip) MS_MUST_CHECK;

/*
 * The three steps of signing one module, each printing its own error:
 * prepare (open, already-signed policy, hash on the host), sign (with the
 * key, on @lane of @pool, taken by the caller: a failure here is the key's,
 * not the module's; -s needs no pool), write
 * (<module>.p7s and the module, unless -d). ms_cli_module_clear() releases
 * @w whatever happened.
 */
ms_err ms_cli_module_prepare(struct ms_job *job, const char *path,
			     struct ms_module_work *w) MS_MUST_CHECK;
ms_err ms_cli_module_sign(struct ms_job *job, struct ms_lanes *pool, unsigned lane,
			  struct ms_module_work *w) MS_MUST_CHECK;
ms_err ms_cli_module_write(struct ms_job *job, struct ms_module_work *w,
			   const char *dest) MS_MUST_CHECK;
void ms_cli_module_clear(struct ms_module_work *w);

#endif
