/* SPDX-License-Identifier: GPL-2.0-only */
/* The signing job: what a run loads once and shares by every module (job.c). */
#ifndef MS_CLI_JOB_H
#define MS_CLI_JOB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../app/app.h"
#include "../cms/cms.h"
#include "../common/ms_common.h"
#include "../modfmt/modfmt.h"
#include "../signer/signer.h"
#include "args.h"
#include "cert.h"

/* Everything loaded once per run and shared by every module signed. */
struct ms_job {
	const struct ms_opts *opts;
	enum ms_hash_alg hash;
	enum ms_sig_form form;		/* what the key signs: the key's kind, --signed-attrs */
	enum ms_mldsa_set mldsa;	/* ML-DSA: the certificate's parameter set */
	struct ms_signer *signer;
	struct ms_cms_cert *cert;	/* <x509>: its first certificate, as sign-file */
	/* --skip-signed: every certificate of <x509> (a PEM bundle), trusted as verify -c */
	struct ms_cms_cert *trust[MS_CLI_TRUST_MAX];
	size_t n_trust;
	enum ms_write_mode write_mode;	/* directories are fsync'd by the run */
	struct ms_tmp_set *tmps;	/* the run's temp files in progress */
	atomic_uint *n_opening;		/* the run's count of modules being opened */
	uint8_t *raw_cms;		/* -s: the signature to append, instead of a key */
	size_t raw_cms_len;
	struct ms_mod_zpool *zpool;	/* bulk: encoders of compressed modules, one per CPU */
	struct ms_tokens tokens;	/* --key: every token holding the key (src/app) */
	uint8_t sid[4096];	/* SignerIdentifier TLV, from the certificate */
	size_t sid_len;
	struct ms_pin pin;
};

/*
 * ms_cli_job_open() - parse the hash name, load the certificate, open the
 * key (logging in to a token once), check that they are a pair and encode
 * the signer identifier. Prints its own error message.
 */
ms_err ms_cli_job_open(struct ms_job *job, const struct ms_opts *o) MS_MUST_CHECK;
/*
 * ms_cli_job_open_raw() - `-s`: the job appends the detached PKCS#7 of
 * @o->raw_sig_path (read, and checked to be a DER SignedData with detached
 * content) instead of signing: no hash, key or certificate.
 */
ms_err ms_cli_job_open_raw(struct ms_job *job, const struct ms_opts *o) MS_MUST_CHECK;
void ms_cli_job_close(struct ms_job *job);

#endif
