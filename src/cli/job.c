// SPDX-License-Identifier: GPL-2.0-only
/*
 * The signing job's set-up, done once per run: hash, certificate, key (one
 * token login), the key-certificate check and the signer identifier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../agent/agent.h"
#include "../cms/pkcs7.h"
#include "../modfmt/modfmt.h"
#include "../pkcs11/p11.h"
#include "args.h"
#include "cert.h"
#include "job.h"
#include "msg.h"
#include "p11msg.h"
#include "pin.h"
#include "tokens.h"
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
token_key(const struct ms_opts *o, struct ms_pin *pin, struct ms_signer **out)
{
	struct ms_p11 *p11 = NULL;
	char what[300];
	unsigned flags = o->allow_final_try ? MS_P11_LOGIN_ALLOW_FINAL_TRY : 0;
	ms_err err;

	err = ms_p11_open(o->key, MS_P11_FOR_KEY, &p11);
	if (err != MS_OK) {
		ms_cli_p11_error("key", p11, err);
		goto out;
	}
	if (ms_p11_needs_pin(p11)) {
		snprintf(what, sizeof(what), "token '%s'", ms_p11_token_label(p11));
		err = ms_cli_pin_get(ms_p11_uri_pin_value(p11), ms_p11_uri_pin_source(p11), what,
				     pin);
		if (err != MS_OK) {
			goto out;
		}
	}
	err = ms_p11_login(p11, pin->is_set ? pin : NULL, flags);
	if (err != MS_OK) {
		ms_cli_p11_login_error(NULL, p11, err, pin, o, "");
		goto out;
	}
	err = ms_signer_token_new(p11, out);
	if (err != MS_OK) {
		ms_cli_p11_error("key", p11, err);
		goto out;
	}
	/*
	 * The PIN stays (locked in memory) until the caller wipes it: keys with
	 * CKA_ALWAYS_AUTHENTICATE need it before each signature, and a lost
	 * session is logged in again with it rather than by asking anew.
	 */
	p11 = NULL;	/* owned by the signer now */
	if (o->bulk) {
		err = ms_signer_token_add_lanes(*out, o->jobs);
	}
out:
	ms_p11_close(p11);
	return err;
}

static ms_err
file_key(const struct ms_opts *o, struct ms_pin *pin, struct ms_signer **out)
{
	char why[1400] = "";
	const char *env = getenv("KBUILD_SIGN_PIN");
	/* Each lane parses its own copy: an mbedTLS RSA context signs one at a time. */
	unsigned lanes = !o->bulk ? 1 : o->jobs != 0 ? o->jobs : ms_cpu_count();
	ms_err err;

	/* As sign-file: KBUILD_SIGN_PIN is the passphrase of an encrypted key. */
	if (env != NULL) {
		err = ms_cli_pin_get(NULL, NULL, o->key, pin);
		if (err != MS_OK) {
			goto out;
		}
	}
	err = ms_signer_keyfile_open(o->key, pin->is_set ? pin : NULL, lanes, out, why,
				     sizeof(why));
	if (err == MS_E_PIN && !pin->is_set && isatty(STDIN_FILENO)) {
		/* First try had no passphrase at all: asking is not a retry. */
		err = ms_cli_pin_get(NULL, NULL, o->key, pin);
		if (err != MS_OK) {
			goto out;
		}
		err = ms_signer_keyfile_open(o->key, pin, lanes, out, why, sizeof(why));
	}
	if (err != MS_OK) {
		if (err == MS_E_PIN && !pin->is_set) {
			ms_cli_error("%s (set KBUILD_SIGN_PIN to its passphrase)", why);
		} else {
			ms_cli_error("%s", why);
		}
	}
out:
	ms_pin_clear(pin);	/* a key file's passphrase is not needed again */
	return err;
}

ms_err
ms_cli_key_open(const struct ms_opts *o, struct ms_pin *pin, struct ms_signer **out)
{
	*out = NULL;
	if (ms_p11_uri_is(o->key)) {
		return token_key(o, pin, out);
	}
	return file_key(o, pin, out);
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
 * Under `modsign agent` (MODSIGN_AGENT_SOCK set), the agent signs when it
 * holds this key; when it holds another, the key is opened here as usual.
 * An agent that cannot be reached is an error: never a silent login per
 * module. *@is_agent says whether the agent took the job.
 */
static ms_err
job_agent_key(struct ms_job *job, const struct ms_opts *o, bool *is_agent)
{
	const char *sock = getenv(MS_AGENT_ENV_SOCK);
	char why[1400];
	ms_err err;

	*is_agent = false;
	if (sock == NULL || sock[0] == '\0') {
		return MS_OK;
	}
	err = ms_signer_agent_open(sock, o->key, o->bulk ? o->jobs : 1, o->token_timeout,
				   &job->signer, why, sizeof(why));
	if (err == MS_E_NOTFOUND) {
		if (o->verbose) {
			ms_cli_warn("%s; signing with the key directly", why);
		}
		return MS_OK;
	}
	if (err != MS_OK) {
		ms_cli_error("%s; nothing signed", why);
		return err;
	}
	*is_agent = true;
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
	err = job_agent_key(job, o, &is_agent);
	if (err != MS_OK) {
		return err;
	}
	if (!is_agent && o->n_keys > 0) {
		/* Several tokens: each checked against the certificate as it opens. */
		return ms_cli_tokens_open(o, job->cert, &job->pin, &job->signer, &job->tokens);
	}
	if (!is_agent) {
		err = ms_cli_key_open(o, &job->pin, &job->signer);
	}
	if (err != MS_OK) {
		return err;
	}
	return job_match(job, o);
}

void
ms_cli_job_close(struct ms_job *job)
{
	ms_cli_tokens_close(&job->tokens);
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
