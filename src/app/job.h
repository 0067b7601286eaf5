/* SPDX-License-Identifier: GPL-2.0-only */
/* The signing job: what a run loads once and shares by every module (job.c); included by app.h. */
#ifndef MS_APP_JOB_H
#define MS_APP_JOB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../cms/cms.h"
#include "../common/ms_common.h"
#include "../modfmt/modfmt.h"
#include "../signer/signer.h"
#include "cert.h"
#include "opts.h"

/* Everything loaded once per run and shared by every module signed. */
struct ms_job {
	const struct ms_opts *opts;
	const struct ms_app_sink *sink;	/* where the job's and its run's lines go */
	enum ms_hash_alg hash;
	enum ms_sig_form form;		/* what the key signs: the key's kind, --signed-attrs */
	enum ms_mldsa_set mldsa;	/* ML-DSA: the certificate's parameter set */
	struct ms_signer *signer;
	struct ms_cms_cert *cert;	/* <x509>: its first certificate, as sign-file */
	/* --skip-signed: every certificate of <x509> (a PEM bundle), trusted as verify -c */
	struct ms_cms_cert *trust[MS_APP_TRUST_MAX];
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
 * ms_app_job_open() - parse the hash name, load the certificate, open the
 * key (ms_app_key_open(), PINs from @pins; under `modsign agent`, whose
 * socket is @agent_sock (NULL: none), the agent's when it holds the key),
 * check that they are a pair and encode the signer identifier. @o and
 * @sink must outlive the job; the job's lines, and its run's, go to @sink.
 * Return: MS_OK; else the error, said through @sink (close the job all the
 * same: ms_app_job_close()).
 */
ms_err ms_app_job_open(struct ms_job *job, const struct ms_opts *o, const char *agent_sock,
		       const struct ms_app_sink *sink,
		       const struct ms_app_pins *pins) MS_MUST_CHECK;
/*
 * ms_app_job_open_raw() - `-s`: the job appends the detached PKCS#7 of
 * @o->raw_sig_path (read, and checked to be a DER SignedData with detached
 * content) instead of signing: no hash, key or certificate. Return: as
 * ms_app_job_open().
 */
ms_err ms_app_job_open_raw(struct ms_job *job, const struct ms_opts *o,
			   const struct ms_app_sink *sink) MS_MUST_CHECK;
/* ms_app_job_close() - free what the job holds and wipe its PINs; again is harmless. */
void ms_app_job_close(struct ms_job *job);

#endif
