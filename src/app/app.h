/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The signing application, below the command line: opening the key a run
 * signs with (a key file, `modsign agent`, or 1 to 16 tokens holding one
 * key), hashing a module's payload, verifying a module's signature, and
 * the signing run itself: the job (job.h), its modules, their names and
 * directories (list.h, names.h, dirs.h) and the bulk engine (run.h). It
 * prints nothing, reads no environment variable and no terminal, never
 * exits: its lines go out through a sink, PINs come in through a provider,
 * a stop through the run's struct ms_app_stop, all given by the caller.
 */
#ifndef MS_APP_H
#define MS_APP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "../cms/cms.h"
#include "../cms/pkcs7.h"
#include "../common/ms_common.h"
#include "../modfmt/modfmt.h"
#include "../signer/signer.h"
#include "opts.h"

/* A token as messages name it: "token 'label' (serial s)". */
#define MS_TOKEN_NAME 96

/*
 * A key or certificate argument as lines show it (ms_p11_uri_redact(): a
 * URI's PIN hidden). Callers give a buffer of MS_APP_ARG_SHOW bytes.
 */
#define MS_APP_ARG_SHOW 512

/* What a line of the sink is. */
enum ms_app_say_kind {
	MS_APP_SAY_ERROR = 0,	/* the command line prints "modsign: <text>" */
	MS_APP_SAY_WARN,	/* "modsign: warning: <text>" */
	MS_APP_SAY_INFO,	/* "modsign: <text>", not a failure: a run's summary */
	MS_APP_SAY_LINE,	/* "<text>" as it is: "signed <module>" */
};

/*
 * Where the application's lines go. say() gets the text (names in it not
 * escaped yet: the printer escapes) and @detail, the token layer's text
 * whose further lines start with "\n" (NULL: none). Called from the
 * threads that open tokens and sign modules too: say() must be
 * thread-safe. progress() (NULL: none) hears of each module a run has
 * finished, @done of @total; @is_last: the run's summary follows, no
 * progress after it.
 */
struct ms_app_sink {
	void (*say)(void *ctx, enum ms_app_say_kind kind, const char *text, const char *detail);
	void *ctx;
	void (*progress)(void *ctx, size_t done, size_t total, bool is_last);
};

/* How a PIN may be found (flags of struct ms_app_pin_ask). */
enum {
	/*
	 * Only a source that needs no terminal (the URI's, the caller's
	 * environment): MS_E_NOTFOUND, and nothing said, when there is none.
	 */
	MS_APP_PIN_NO_PROMPT = 1u,
	/* Only the terminal: MS_E_NOTFOUND, and nothing said, when there is none. */
	MS_APP_PIN_PROMPT_ONLY = 2u,
};

/* One PIN (or key file passphrase) asked for. */
struct ms_app_pin_ask {
	const char *uri_value;	/* the URI's pin-value, NULL: none */
	const char *uri_source;	/* the URI's pin-source, NULL: none */
	const char *what;	/* the thing, for a prompt: "token 'x'", "key.pem" */
	unsigned flags;		/* MS_APP_PIN_* */
};

/*
 * Where PINs come from. get() fills @pin (the caller's, locked in memory)
 * from the first source that applies, saying itself what went wrong.
 * Return: MS_OK; MS_E_NOTFOUND (only as the flags allow); MS_E_PIN (no
 * source: said); MS_E_IO.
 */
struct ms_app_pins {
	ms_err (*get)(void *ctx, const struct ms_app_pin_ask *ask, struct ms_pin *pin);
	void *ctx;
};

/* Which key a run signs with, and how. */
struct ms_app_key_cfg {
	const char *key;			/* a key file path or a pkcs11: URI */
	const char *keys[MS_TOKENS_MAX - 1];	/* more tokens holding @key's key (pkcs11: URIs) */
	size_t n_keys;
	bool allow_final_try;	/* log in even on a token's last PIN try */
	bool bulk;		/* lanes as @jobs asks; else one */
	unsigned jobs;		/* 0: what is fastest for the key source */
	unsigned token_timeout;	/* seconds the agent may take for a signature; 0 none */
	bool verbose;		/* say when the agent holds another key */
	const char *agent_sock;	/* `modsign agent`'s socket; NULL or "": none */
};

/*
 * The tokens of a run given more than one (--key), <key>'s first:
 * signer[0] is the key's own signer (borrowed here), the others are owned
 * here, as are the PINs of sources other than <key>'s (locked in memory,
 * wiped on close).
 */
struct ms_tokens {
	struct ms_signer *signer[MS_TOKENS_MAX];
	char name[MS_TOKENS_MAX][MS_TOKEN_NAME];
	size_t n;		/* 0: one key source */
	struct ms_pin *pins;
};

/*
 * ms_app_key_open() - open the key of @cfg, one path for every source:
 * under `modsign agent` the agent's signer when it holds the key (another
 * key: opened here as usual; an agent not reached: an error); a key file
 * (its passphrase asked for only when it is encrypted); or the tokens of
 * @cfg->key and every @cfg->keys, on threads: start-up, then the PIN state
 * of every token checked (locked, final try, count low) before any PIN is
 * asked for, one C_Login each (a PIN source read once, a PIN offered to a
 * second token only once a first took it), key found, lanes opened (each
 * token its share of @cfg->jobs) and, with more than one token, each key
 * checked against @cert (NULL: against <key>'s token's key). One token
 * named twice is refused. <key>'s PIN stays in @pin for lost sessions (the
 * caller wipes it; a key file's passphrase is wiped here). *@out is the
 * caller's (ms_signer_free()); @tokens holds the others
 * (ms_app_tokens_close()). *@is_agent says whether the agent took it.
 * Return: MS_OK; MS_E_PIN, MS_E_TOKEN, MS_E_NOTFOUND, MS_E_MISMATCH,
 * MS_E_ARG (one token twice), MS_E_IO, MS_E_NOMEM and the others of the
 * layers below, each said through @sink. On failure nothing is left open.
 */
ms_err ms_app_key_open(const struct ms_app_key_cfg *cfg, const struct ms_cms_cert *cert,
		       const struct ms_app_sink *sink, const struct ms_app_pins *pins,
		       struct ms_pin *pin, struct ms_signer **out, struct ms_tokens *tokens,
		       bool *is_agent) MS_MUST_CHECK;

/*
 * ms_app_key_cfg_init() - the key settings of @o into @cfg, with @agent_sock
 * (NULL: no agent) as the agent's socket.
 */
void ms_app_key_cfg_init(const struct ms_opts *o, const char *agent_sock,
			 struct ms_app_key_cfg *cfg);

/*
 * ms_app_job_wipe() - wipe the job's PIN and its --key tokens' PINs, freeing
 * nothing (a thread is left inside a token); again is harmless.
 */
struct ms_job;
void ms_app_job_wipe(struct ms_job *job);

/*
 * ms_app_payload_digest() - the digests of the first @len bytes of the open
 * module @mf, one for each of the @n (at most MS_PKCS7_SIGNERS_MAX) hashes
 * in @algs, into @out, in one streaming pass from the module's first byte
 * through the module reader (as mbedtls_md_file() hashes a file).
 * Return: MS_OK; MS_E_UNSUPPORTED (hash @algs[*@bad_alg] is not in this
 * build; @bad_alg may be NULL); MS_E_IO, MS_E_CHANGED (details in @mf, for
 * the caller's text of a module file's failure); MS_E_NOMEM; MS_E_ARG. @out is unspecified on failure.
 */
ms_err ms_app_payload_digest(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs,
			     size_t n, struct ms_pkcs7_digest *out, size_t *bad_alg) MS_MUST_CHECK;

/*
 * ms_app_payload_read() - the first @len bytes of the open module @mf
 * (decompressed, as ms_app_payload_digest() reads them) into a new buffer
 * *@out of @len bytes, which the caller frees: what an ML-DSA key signs
 * when the signature covers the module itself. In the same pass, the
 * digests of the @n hashes @algs into @digests (@n may be 0).
 * Return: MS_OK; MS_E_IO, MS_E_CHANGED (details in @mf); MS_E_NOMEM.
 * *@out is NULL on failure.
 */
ms_err ms_app_payload_read(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs, size_t n,
			   struct ms_pkcs7_digest *digests, uint8_t **out) MS_MUST_CHECK;

/* What ms_app_sig_verify() found, beyond its return value. */
struct ms_app_sig_check {
	const char *why;	/* static text of why not (a rule, another hash), or NULL */
	char why_buf[128];	/* @why when it had to be formatted */
	bool at_rules;		/* the failure is of the kernel's module rules (@why the rule) */
	bool at_hash;		/* the failure is the module file's, while hashing */
	bool mldsa_waived;	/* ML-DSA signed attributes, taken by the waiver only */
	struct ms_pkcs7_signer_result res[MS_PKCS7_SIGNERS_MAX];	/* per signer */
};

/*
 * ms_app_sig_verify() - the one check of a module's signature, for
 * `modsign verify` and for a module found signed while signing
 * (--skip-signed, the run as sign-file): @msg, parsed from the module @mf,
 * must keep the kernel's module rules, use only @want_hash (0: any), and
 * each signer must verify over the digest of @mf's first @payload_len bytes
 * with one of @certs. With no @certs, the certificates @msg carries are
 * used to check the signature math, never trusted (`verify` without -c).
 * @mldsa_waiver: judge as a kernel built with
 * CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA, which takes the signed
 * attributes sign-file 7.2 writes for ML-DSA (@out->mldsa_waived then
 * says the module needs it); false: the kernel's default rules.
 * Return: MS_OK; MS_E_MALFORMED (module rules broken, or a carried
 * certificate that does not parse; @out->why); MS_E_MISMATCH (another
 * hash; @out->why); the errors of ms_app_payload_digest() with
 * @out->at_hash; else ms_pkcs7_verify()'s, with @out->res and @out->why.
 */
ms_err ms_app_sig_verify(struct ms_modfile *mf, uint64_t payload_len, const struct ms_pkcs7 *msg,
			 const struct ms_cms_cert *const *certs, size_t n_certs,
			 enum ms_hash_alg want_hash, bool mldsa_waiver,
			 struct ms_app_sig_check *out) MS_MUST_CHECK;

/*
 * ms_app_lanes_open() - the lane pool of a run's key, for the bulk run and
 * the agent alike: @signer's lanes (lane pool signer 0), then those of every
 * other token of @tokens in turn, with @cfg (its on_drop gets the index of
 * the token dropped: ms_app_tokens_name() names it). @signer and @tokens
 * must outlive the pool. Return: MS_OK with *@out (ms_lanes_free());
 * MS_E_ARG, MS_E_NOMEM (*@out NULL).
 */
ms_err ms_app_lanes_open(struct ms_signer *signer, const struct ms_tokens *tokens,
			 const struct ms_lanes_cfg *cfg, struct ms_lanes **out) MS_MUST_CHECK;
/* ms_app_tokens_name() - token @k of @tokens as lines name it; "a token" when it has none. */
const char *ms_app_tokens_name(const struct ms_tokens *tokens, unsigned k);

/* ms_app_tokens_close() - free every signer but signer[0], wipe the PINs; again is harmless. */
void ms_app_tokens_close(struct ms_tokens *t);
/* ms_app_tokens_wipe() - wipe the PINs only (the process ends with a token hung). */
void ms_app_tokens_wipe(struct ms_tokens *t);

/*
 * ms_app_p11_error() - "<role>: <call>: <CKR_...>: <detail>" through @sink
 * for a failed step of @p11 (NULL: only @err's text).
 */
struct ms_p11;
void ms_app_p11_error(const struct ms_app_sink *sink, const char *role,
		      const struct ms_p11 *p11, ms_err err);
/*
 * ms_app_p11_login_error() - the line for a failed ms_p11_login() or
 * ms_p11_pin_check() of @p11: "[<who>: ]C_Login: PIN from <source>
 * rejected: <CKR_...><tail>" when the token refused the PIN, else as
 * ms_app_p11_error() with @who (NULL: "key") as the role, naming
 * --pin-final-try when the token's last try was spared for want of
 * @allow_final_try.
 */
void ms_app_p11_login_error(const struct ms_app_sink *sink, const char *who,
			    const struct ms_p11 *p11, ms_err err, const struct ms_pin *pin,
			    bool allow_final_try, const char *tail);

/*
 * ms_app_modfile_why() - the text of a module file's failure, without the
 * file name ("is a directory", "open: Permission denied", ...): @mf after a
 * failed ms_modfile_*() call (it tells the module from a <dest> or .p7s).
 */
void ms_app_modfile_why(const struct ms_modfile *mf, ms_err err, char *out, size_t cap);

/*
 * The self-pipe that wakes a poll(2) loop (wake.c): a thread or a signal
 * handler writes a byte to fds[1], the loop polls fds[0].
 * ms_app_wake_init() - a non-blocking, close-on-exec pipe in @fds.
 * Return: MS_OK; MS_E_IO with errno (@fds both -1).
 * ms_app_wake_write() - one byte to @fd (-1: nothing); a full pipe is a
 * wake-up already waiting. Async-signal-safe, keeps errno.
 * ms_app_wake_close() - close both ends, both -1 (fds[0] -1: nothing to do).
 */
ms_err ms_app_wake_init(int fds[2]) MS_MUST_CHECK;
void ms_app_wake_write(int fd);
void ms_app_wake_close(int fds[2]);

/* The run: certificates, the job, the module list, its names and directories, the engine. */
#include "cert.h"
#include "dirs.h"
#include "job.h"
#include "list.h"
#include "names.h"
#include "run.h"

#endif
