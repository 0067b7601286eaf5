// SPDX-License-Identifier: GPL-2.0-only
/*
 * The signing job's set-up, done once per run: hash, certificate, key (one
 * token login, src/app), the key-certificate check and the signer identifier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../agent/agent.h"
#include "../cms/pkcs7.h"
#include "../modfmt/modfmt.h"
#include "../pkcs11/p11.h"
#include "args.h"
#include "cert.h"
#include "job.h"
#include "msg.h"
#include "sink.h"
#include "why.h"

#define RAW_SIG_MAX (64 * 1024)

static ms_err
job_hash(struct ms_job *job, const char *arg)
{
	char name[MS_CLI_ARG_SHOW];
	ms_err err = ms_cms_hash_from_name(arg, &job->hash);

	/* Arguments given in the wrong order may put a key URI here. */
	ms_p11_uri_redact(arg, name, sizeof(name));
	if (err != MS_OK) {
		ms_cli_error("hash %s: not a hash the kernel verifies module signatures with "
			     "(use sha256, sha384, sha512, sha3-256, sha3-384, sha3-512, sha224 "
			     "or sha1)", name);
		return err;
	}
	if (job->hash == MS_HASH_SHA1) {
		ms_cli_warn("sha1 is deprecated: kernels 7.0 and later no longer offer it for "
			    "module signing");
	}
	return MS_OK;
}

static ms_err
job_match(struct ms_job *job, const struct ms_opts *o)
{
	char subject[256], key[MS_CLI_ARG_SHOW], x509[MS_CLI_ARG_SHOW];
	ms_err err = ms_signer_match_cert(job->signer, job->cert);

	if (err == MS_OK) {
		return MS_OK;
	}
	ms_cms_cert_subject(job->cert, subject, sizeof(subject));
	ms_p11_uri_redact(o->key, key, sizeof(key));
	ms_p11_uri_redact(o->x509, x509, sizeof(x509));
	if (err == MS_E_MISMATCH) {
		ms_cli_error("key %s is not the key of certificate %s (%s): modules signed with "
			     "it would not load", key, x509, subject);
	} else {
		char why[1200];

		ms_signer_describe(job->signer, 0, why, sizeof(why));
		ms_cli_error("checking key %s against certificate %s: %s", key, x509, why);
	}
	return err;
}

/*
 * What the key signs. ML-DSA: the module itself, as the kernel takes by
 * default, or with --signed-attrs the attributes sign-file 7.2 signs under
 * OpenSSL 3.5/3.6, which hold a SHA-512 digest.
 */
static ms_err
job_form(struct ms_job *job, const struct ms_opts *o)
{
	char key[MS_CLI_ARG_SHOW];
	bool is_mldsa = ms_cms_cert_mldsa_set(job->cert) != MS_MLDSA_NONE;

	job->form = MS_SIG_DIGEST;
	if (o->signed_attrs && !is_mldsa) {
		ms_cli_error("--signed-attrs is for ML-DSA keys: RSA and EC module signatures "
			     "carry no signed attributes (sign-file makes none)");
		return MS_E_ARG;
	}
	if (!is_mldsa) {
		return MS_OK;
	}
	job->mldsa = ms_cms_cert_mldsa_set(job->cert);
	if (!ms_p11_uri_is(o->key)) {
		ms_p11_uri_redact(o->key, key, sizeof(key));
		ms_cli_error("%s: an ML-DSA certificate: modsign signs with ML-DSA keys on PKCS#11 "
			     "tokens only, not with key files (no library of Debian 12 signs "
			     "ML-DSA)", key);
		return MS_E_UNSUPPORTED;
	}
	if (!o->signed_attrs && !o->signed_attrs_env) {
		job->form = MS_SIG_MLDSA_DATA;
		return MS_OK;
	}
	if (job->hash != MS_HASH_SHA512) {
		ms_cli_error("%s: sign-file 7.2's signed attributes hold the module's SHA-512: "
			     "give sha512 as the hash", o->signed_attrs ? "--signed-attrs" :
			     "MODSIGN_SIGNED_ATTRS=1");
		return MS_E_ARG;
	}
	job->form = MS_SIG_MLDSA_ATTRS;
	return MS_OK;
}

ms_err
ms_cli_job_open_raw(struct ms_job *job, const struct ms_opts *o)
{
	struct ms_file_fail fail = { 0 };
	struct ms_pkcs7 msg;
	const char *rule = NULL;
	char why[512];
	ms_err err;

	memset(job, 0, sizeof(*job));
	job->opts = o;
	err = ms_file_read_small(o->raw_sig_path, RAW_SIG_MAX, &job->raw_cms, &job->raw_cms_len,
				 &fail);
	if (err != MS_OK) {
		ms_cli_file_fail_why(&fail, err, why, sizeof(why));
		ms_cli_error("%s: %s", o->raw_sig_path, why);
		return err;
	}
	/* The parser and the module rules of `verify`, so its reason too. */
	err = ms_pkcs7_parse_module(job->raw_cms, job->raw_cms_len, &msg, &rule);
	if (err != MS_OK) {
		ms_cli_error("%s: PKCS#7: %s; nothing appended", o->raw_sig_path, rule);
	}
	return err;
}

ms_err
ms_cli_job_open(struct ms_job *job, const struct ms_opts *o)
{
	struct ms_app_key_cfg cfg;
	char x509[MS_CLI_ARG_SHOW];
	bool is_agent = false;
	ms_err err;

	memset(job, 0, sizeof(*job));
	job->opts = o;
	err = job_hash(job, o->hash_name);
	if (err != MS_OK) {
		return err;
	}
	err = ms_cli_cert_load(o->x509, &job->cert);
	if (err != MS_OK) {
		return err;
	}
	/* Before the key is opened: a refusal costs no login. */
	err = job_form(job, o);
	if (err != MS_OK) {
		return err;
	}
	if (o->signed_policy == MS_SIGNED_SKIP) {
		err = ms_cli_cert_load_all(o->x509, job->trust, MS_CLI_TRUST_MAX, &job->n_trust);
		if (err != MS_OK) {
			return err;
		}
	}
	err = ms_cms_signer_id_encode(job->cert, o->use_skid, job->sid, sizeof(job->sid),
				      &job->sid_len);
	ms_p11_uri_redact(o->x509, x509, sizeof(x509));
	if (err == MS_E_NOTFOUND) {
		ms_cli_error("-k: certificate %s has no subjectKeyIdentifier, so the kernel "
			     "could not find the signer", x509);
		return err;
	}
	if (err != MS_OK) {
		ms_cli_error("%s: cannot encode the signer identifier: %s", x509,
			     ms_err_str(err));
		return err;
	}
	/* More xz encoders than processors would only hold more memory (zmod.h). */
	if (o->bulk) {
		err = ms_mod_zpool_new(ms_cpu_count(), &job->zpool);
		if (err != MS_OK) {
			ms_cli_error("%s", ms_err_str(err));
			return err;
		}
	}
	/* Under `modsign agent` (MODSIGN_AGENT_SOCK set) the agent signs when it holds the key. */
	ms_cli_key_cfg(o, getenv(MS_AGENT_ENV_SOCK), &cfg);
	err = ms_app_key_open(&cfg, job->cert, ms_cli_sink(), ms_cli_pins(), &job->pin,
			      &job->signer, &job->tokens, &is_agent);
	if (err != MS_OK) {
		return err;
	}
	if (is_agent && job->form == MS_SIG_MLDSA_DATA) {
		ms_cli_error("agent at %s holds this ML-DSA key, and an agent signs module "
			     "digests only: without --signed-attrs the key signs the whole module; "
			     "give --signed-attrs or MODSIGN_SIGNED_ATTRS=1 (for a kernel with "
			     "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA) or sign without "
			     "the agent (MODSIGN_AGENT_SOCK unset); nothing signed",
			     cfg.agent_sock);
		return MS_E_UNSUPPORTED;
	}
	/* Several tokens: each was checked against the certificate as it opened. */
	return job->tokens.n > 0 ? MS_OK : job_match(job, o);
}

void
ms_cli_job_close(struct ms_job *job)
{
	ms_app_tokens_close(&job->tokens);
	ms_signer_free(job->signer);
	job->signer = NULL;
	ms_cms_cert_free(job->cert);
	job->cert = NULL;
	ms_mod_zpool_free(job->zpool);
	job->zpool = NULL;
	free(job->raw_cms);
	job->raw_cms = NULL;
	for (size_t i = 0; i < job->n_trust; i++) {
		ms_cms_cert_free(job->trust[i]);
		job->trust[i] = NULL;
	}
	job->n_trust = 0;
	ms_pin_clear(&job->pin);
}
