/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The seam between the signing pipeline and the key: "sign these bytes on
 * lane n". One signer per key source (a token, a key file, an agent); the
 * caller holds a struct ms_signer * and never sees which. A signer has one or
 * more lanes; each lane may be used by one thread at a time, different lanes
 * at once.
 */
#ifndef MS_SIGNER_H
#define MS_SIGNER_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cms/cms.h"
#include "../common/ms_common.h"

struct ms_signer;
struct ms_p11;

/*
 * What a module's signature covers, which decides what the key signs
 * (ms_signer_req_message()). The kernel takes an ML-DSA signature in either
 * form (crypto/asymmetric_keys/pkcs7_parser.c).
 */
enum ms_sig_form {
	MS_SIG_DIGEST = 0,	/* RSA, EC: the module's digest (RSA: its DigestInfo) */
	/*
	 * ML-DSA, sign-file 7.2 with OpenSSL 3.5/3.6: the DER signed
	 * attributes holding the module's SHA-512 digest
	 * (ms_cms_mldsa_attrs_encode()); the kernel needs
	 * CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA for them.
	 */
	MS_SIG_MLDSA_ATTRS,
	/* ML-DSA, what the kernel takes by default: the module itself (@data) */
	MS_SIG_MLDSA_DATA,
};

/* What to sign: a module's digest, or for ML-DSA the module itself. */
struct ms_signer_req {
	enum ms_sig_form form;
	enum ms_hash_alg alg;
	const uint8_t *digest;	/* ms_cms_hash_size(alg) bytes, owned by the caller; */
	size_t digest_len;	/* NULL and 0 for MS_SIG_MLDSA_DATA */
	/* MS_SIG_MLDSA_DATA: the module's payload, the concatenation of @n_data spans */
	const struct ms_span *data;
	size_t n_data;
	const char *label;	/* the module's path, for an audit trail; may be NULL */
};

/**
 * ms_signer_sign() - sign @req on @lane: RSA PKCS#1 v1.5 over the digest's
 * DigestInfo, ECDSA over the digest, pure ML-DSA over the message
 * ms_signer_req_message() names.
 * @sig, @cap, @sig_len: caller's buffer; the raw signature: modulus-size
 * bytes for RSA, r||s for EC (ms_cms_sig_encode() makes the DER), the
 * set's signature length for ML-DSA (the CMS holds it as it is).
 * Return: MS_OK; MS_E_ARG (lane out of range, digest length not the
 * hash's, a form that is not the key's: see ms_signer_req_check()),
 * MS_E_NOSPACE, MS_E_TOKEN and others on failure (ms_signer_describe()
 * says what failed). @sig is then unspecified.
 */
ms_err ms_signer_sign(struct ms_signer *s, unsigned lane, const struct ms_signer_req *req,
		      uint8_t *sig, size_t cap, size_t *sig_len) MS_MUST_CHECK;

/**
 * ms_signer_req_check() - whether @req is well formed for a key of @type:
 * MS_SIG_DIGEST for RSA and EC with a digest of its hash's length;
 * MS_SIG_MLDSA_ATTRS for ML-DSA with a SHA-512 digest; MS_SIG_MLDSA_DATA
 * for ML-DSA with spans (any number, each with bytes or empty).
 * Return: MS_OK or MS_E_ARG.
 */
ms_err ms_signer_req_check(enum ms_key_type type, const struct ms_signer_req *req) MS_MUST_CHECK;

/*
 * What a key signs for one request (ms_signer_req_message()): pieces of
 * the message; small ones (a DigestInfo, a digest, the signed attributes)
 * are built in @buf.
 */
struct ms_signer_msg {
	uint8_t buf[128];
	struct ms_span parts[1];	/* MS_SIG_DIGEST, MS_SIG_MLDSA_ATTRS: one, in buf */
	const struct ms_span *spans;	/* the message: parts, or the request's data */
	size_t n_spans;
};

/**
 * ms_signer_req_message() - the bytes a key of @type signs for @req (which
 * ms_signer_req_check() accepted), the one definition for the signers and
 * for the check of what they return: the DigestInfo (RSA), the digest
 * (EC), the DER signed attributes (MS_SIG_MLDSA_ATTRS) or the module
 * (MS_SIG_MLDSA_DATA, @req's spans, not copied: @m points at them).
 * Return: MS_OK, MS_E_ARG.
 */
ms_err ms_signer_req_message(enum ms_key_type type, const struct ms_signer_req *req,
			     struct ms_signer_msg *m) MS_MUST_CHECK;

/* A signature made for a request, and who made it, for ms_signer_signed_data(). */
struct ms_signer_cms {
	const struct ms_signer_req *req;	/* what was signed */
	enum ms_key_type key_type;
	enum ms_mldsa_set mldsa;	/* ML-DSA: the certificate's set */
	bool use_skid;			/* sid is a subjectKeyIdentifier */
	struct ms_span sid;		/* from ms_cms_signer_id_encode() */
	struct ms_span raw_sig;		/* as ms_signer_sign() returned it */
};

/**
 * ms_signer_signed_data() - the ContentInfo holding the detached
 * SignedData of a module signature, as the kernel's sign-file writes it
 * for that key: ms_cms_signed_data_encode() for RSA and EC (the raw
 * signature made DER where CMS wants it), ms_cms_signed_data_encode_mldsa()
 * for ML-DSA, with the signed attributes the key signed for
 * MS_SIG_MLDSA_ATTRS. @out NULL asks for the size.
 * Return: MS_OK; MS_E_MALFORMED (the raw signature is not one the key's
 * kind or set makes), MS_E_ARG, MS_E_NOSPACE, MS_E_INTERNAL.
 */
ms_err ms_signer_signed_data(const struct ms_signer_cms *c, uint8_t *out, size_t cap,
			     size_t *out_len) MS_MUST_CHECK;

/**
 * ms_signer_match_cert() - whether the key is @cert's. Uses lane 0.
 * Return: MS_OK when it is, MS_E_MISMATCH when not, another code when the
 * check itself failed (ms_signer_describe() on lane 0 says why).
 */
ms_err ms_signer_match_cert(struct ms_signer *s, const struct ms_cms_cert *cert) MS_MUST_CHECK;

/**
 * ms_signer_match_key() - whether @s holds the key @ref holds (another token
 * with a copy of it, when there is no certificate to check each against),
 * from the public halves the tokens show: RSA modulus and exponent, EC
 * parameters and point, or the SubjectPublicKeyInfo.
 * Return: MS_OK when it is, MS_E_MISMATCH when not, MS_E_UNSUPPORTED when
 * the two cannot be compared (a key file, a token that shows no public key,
 * or two that show it in different forms).
 */
ms_err ms_signer_match_key(const struct ms_signer *s, const struct ms_signer *ref) MS_MUST_CHECK;

/**
 * ms_signer_can_recover() - whether ms_signer_recover() can ever bring a
 * lane back (a token's lost session); false for a key file.
 */
bool ms_signer_can_recover(const struct ms_signer *s);

/* What the last failed signature on a lane lost (ms_signer_loss()). */
enum ms_signer_loss {
	MS_SIGNER_LOSS_NONE = 0,	/* nothing: a failure of that request, or no token */
	MS_SIGNER_LOSS_SESSION,		/* the session or its login; the token still answers */
	MS_SIGNER_LOSS_TOKEN,		/* the token: CKR_DEVICE_ERROR, _DEVICE_REMOVED, ... */
};

/**
 * ms_signer_loss() - what the last failed ms_signer_sign() on @lane lost: a
 * session (ms_p11_rv_is_session_loss(): CKR_SESSION_HANDLE_INVALID,
 * CKR_SESSION_CLOSED, CKR_USER_NOT_LOGGED_IN), the token
 * (ms_p11_rv_is_token_loss(): CKR_DEVICE_ERROR, CKR_DEVICE_REMOVED,
 * CKR_TOKEN_NOT_PRESENT) or nothing (any other failure; a signer that cannot
 * recover). Whether a loss is worth ms_signer_recover() is the lane pool's
 * policy (struct ms_lanes_cfg, .recovery).
 */
enum ms_signer_loss ms_signer_loss(const struct ms_signer *s, unsigned lane);

/**
 * ms_signer_recover() - after a failed ms_signer_sign() on @lane that lost
 * a session or the token (ms_signer_loss()), bring the lane back (a new
 * token session opened in its place, logged in again with the PIN already
 * given only when the token no longer holds the login) so that the
 * signature may be tried once more. Not thread-safe with a sign on the
 * same lane.
 * Return: MS_OK when the lane was brought back; MS_E_UNSUPPORTED for a signer
 * that cannot recover; anything else means stop.
 */
ms_err ms_signer_recover(struct ms_signer *s, unsigned lane) MS_MUST_CHECK;

/**
 * ms_signer_describe() - one line saying what failed last on @lane (the
 * PKCS#11 function and its CKR_ name, or the key file and the library's
 * reason), for messages. Never the PIN. @buf is always NUL-terminated when
 * @cap > 0.
 */
void ms_signer_describe(const struct ms_signer *s, unsigned lane, char *buf, size_t cap);

/**
 * ms_signer_name() - who signs, for messages: "token 'LABEL' (serial S)",
 * "agent at SOCKET" or "key file PATH". @buf is always NUL-terminated when
 * @cap > 0.
 */
void ms_signer_name(const struct ms_signer *s, char *buf, size_t cap);

/* ms_signer_key_type() - MS_KEY_RSA, MS_KEY_EC or MS_KEY_MLDSA (a token's). */
enum ms_key_type ms_signer_key_type(const struct ms_signer *s);

/* ms_signer_lanes() - how many lanes: valid lanes are 0 .. n-1. */
unsigned ms_signer_lanes(const struct ms_signer *s);

/**
 * ms_signer_free() - close the key (token sessions and login, or the parsed
 * key copies, wiped) and free @s. NULL is a no-op.
 */
void ms_signer_free(struct ms_signer *s);

/**
 * ms_signer_keyfile_open() - load a PEM or DER private key file (RSA or EC)
 * through mbedTLS, decrypting it with @pass when encrypted, with @lanes
 * independent copies (an mbedTLS RSA context serialises its users).
 * Return: MS_OK, MS_E_PIN (encrypted and @pass NULL or wrong), MS_E_IO,
 * MS_E_MALFORMED, MS_E_UNSUPPORTED, MS_E_NOMEM, MS_E_ARG (@lanes 0). @why
 * gets a one-line reason naming the file; *@out is NULL on failure.
 */
ms_err ms_signer_keyfile_open(const char *path, const struct ms_pin *pass, unsigned lanes,
			      struct ms_signer **out, char *why, size_t why_cap) MS_MUST_CHECK;

/**
 * ms_signer_token_new() - a signer over a logged-in token; finds the URI's
 * key (ms_p11_key_find()) and reads its public half. Takes ownership of @p11
 * on success only: on failure the caller reads ms_p11_last_fail() and closes
 * it. Lane n uses session n; the signer starts with one lane.
 */
ms_err ms_signer_token_new(struct ms_p11 *p11, struct ms_signer **out) MS_MUST_CHECK;

/**
 * ms_signer_token_add_lanes() - open sessions until the signer has @want
 * lanes or the token allows no more (its ulMaxSessionCount, or a failed
 * C_OpenSession after the first lane). @want 0: one lane for a token in a
 * hardware slot, one per processor and one more otherwise. Not thread-safe:
 * call before signing. @s must come from ms_signer_token_new().
 * Return: MS_OK (possibly with fewer lanes), MS_E_ARG, MS_E_INTERNAL.
 */
ms_err ms_signer_token_add_lanes(struct ms_signer *s, unsigned want) MS_MUST_CHECK;

/*
 * The lane pool (lanes.c): a signer's lanes lent to threads one signature
 * at a time, for the bulk run and the agent. A thread takes a lane
 * (waiting for a free one), signs on it and gives it back. Signing brings a
 * lost session (and for a long-lived owner a lost token) back a bounded
 * number of times (enum ms_lanes_recovery) and stamps the
 * lane busy meanwhile, so that the owner's watchdog (ms_lanes_hung()) sees
 * a token call that never returns. A failed signature does not stop the
 * pool; the owner decides (ms_lanes_stop()). Nothing is printed. Lane
 * numbers are the pool's, so that lanes of several signers can stand
 * behind one pool. Thread-safe, except new and free.
 */
struct ms_lanes;

#define MS_LANE_NONE UINT_MAX

/*
 * What a pool brings back after a failed signature, and how often: the one
 * place where a bulk run and the agent differ (lanes.c, may_recover()).
 */
enum ms_lanes_recovery {
	/*
	 * A run: a lost session only (MS_SIGNER_LOSS_SESSION), @recoveries_max
	 * times in all; a device error or a removed token ends the run, whose
	 * modules are then signed again with --skip-signed.
	 */
	MS_LANES_RECOVER_RUN = 0,
	/*
	 * A long-lived owner (the agent): a lost token too (its sessions
	 * re-opened), @recoveries_max times per lane within
	 * MS_LANES_RECOVERY_WINDOW seconds, so that a token that comes back
	 * now and then is served for days while one that is gone is given up
	 * within a request (ms_lanes_result.is_lost).
	 */
	MS_LANES_RECOVER_LONG,
};

#define MS_LANES_RECOVERY_WINDOW 60

struct ms_lanes_cfg {
	unsigned recoveries_max;	/* lost sessions brought back (3), as .recovery says */
	enum ms_lanes_recovery recovery;
	unsigned token_timeout;		/* seconds before a signature counts as hung; 0 never */
	/*
	 * Pools of several signers: called once for each signer dropped (0 is
	 * ms_lanes_new()'s, then ms_lanes_add()'s in turn), from the thread
	 * that dropped it, with what failed. NULL: nobody is told.
	 */
	void (*on_drop)(void *ctx, unsigned signer, const char *why);
	void *ctx;
	/*
	 * Every signature is verified with this certificate's key before
	 * ms_lanes_sign() returns it; one that does not verify is the signer's
	 * failure (MS_E_MISMATCH; another signer of the pool makes it). NULL:
	 * not checked here (the agent serving clients, which check).
	 */
	const struct ms_cms_cert *cert;
};

/* What ms_lanes_sign() had to do, for the owner's messages. */
struct ms_lanes_result {
	bool recovered;		/* a lost session was re-opened and the signature tried again */
	/*
	 * After a failure: the signer lost its session or token (ms_signer_loss())
	 * and it was not brought back (not this pool's policy, its recoveries
	 * spent, or the recovery or the signature after it failed). With one
	 * signer alive, the pool can sign no more.
	 */
	bool is_lost;
	unsigned signer;	/* the signer that made it, or that failed (ms_lanes_signer_stat()) */
	char why[1200];		/* if recovered: what was lost; after a failure: what failed */
};

/* A lane busy for longer than the token timeout. */
struct ms_lanes_hang {
	unsigned lane;
	const char *label;	/* the request's label, as given to ms_lanes_sign() */
	unsigned seconds;	/* how long it has been signing */
};

/**
 * ms_lanes_new() - a pool over every lane of @s, which stays the caller's
 * and must outlive the pool. Return: MS_OK, MS_E_ARG, MS_E_NOMEM.
 */
ms_err ms_lanes_new(struct ms_signer *s, const struct ms_lanes_cfg *cfg,
		    struct ms_lanes **out) MS_MUST_CHECK;
void ms_lanes_free(struct ms_lanes *p);

/* ms_lanes_count() - lanes in the pool: valid lanes are 0 .. n-1. */
unsigned ms_lanes_count(const struct ms_lanes *p);

/* ms_lanes_take() - a free lane, waiting for one; MS_LANE_NONE once the pool is stopped. */
unsigned ms_lanes_take(struct ms_lanes *p);

/* ms_lanes_give() - hand @lane back; wakes one waiter. */
void ms_lanes_give(struct ms_lanes *p, unsigned lane);

/**
 * ms_lanes_sign() - sign @req on @lane (taken by this thread), as
 * ms_signer_sign() does; a lost session is re-opened and the signature
 * tried once more while the pool's recoveries last. With cfg.cert, the
 * signature is verified with it before it is returned. @res says what
 * happened. @req->label must stay valid until the call returns.
 * Return: MS_OK, MS_E_MISMATCH (the signature did not verify: @res->why
 * names the signer), or the signer's error (@res->why says what failed).
 */
ms_err ms_lanes_sign(struct ms_lanes *p, unsigned lane, const struct ms_signer_req *req,
		     uint8_t *sig, size_t cap, size_t *sig_len,
		     struct ms_lanes_result *res) MS_MUST_CHECK;

/* ms_lanes_stop() - no more lanes are lent: waiting takers get MS_LANE_NONE. */
void ms_lanes_stop(struct ms_lanes *p);
bool ms_lanes_stopped(const struct ms_lanes *p);

/**
 * ms_lanes_hung() - the lanes whose signature has taken longer than the
 * token timeout (none when it is 0): up to @cap of them into @out (a label
 * stays valid while its lane hangs: copy it at once).
 * Return: how many lanes are hung (may exceed @cap).
 */
size_t ms_lanes_hung(struct ms_lanes *p, struct ms_lanes_hang *out, size_t cap);

/* ms_lanes_signer() - the signer behind @lane (NULL for no such lane). */
struct ms_signer *ms_lanes_signer(const struct ms_lanes *p, unsigned lane);

/**
 * ms_lanes_add() - put every lane of @s (another token holding the same
 * key; it stays the caller's and must outlive the pool) behind the pool,
 * numbered on from the lanes already there. Before the first take only.
 * From then on a signer that fails (after the bounded recovery; not for
 * MS_E_ARG, MS_E_NOSPACE, MS_E_NOMEM) or whose signature takes longer than
 * the token timeout is dropped while another is alive: its lanes are lent
 * no more, cfg.on_drop is told, and ms_lanes_sign() makes the signature on
 * another signer's lane before it returns, so its caller sees MS_OK. The
 * last signer alive is never dropped: its failure is the caller's, as with
 * one signer. With a token timeout, the signatures of such a pool are made
 * on each lane's own thread, so that a hung token can be left behind
 * (ms_lanes_stuck()). Return: MS_OK, MS_E_ARG, MS_E_NOMEM.
 */
ms_err ms_lanes_add(struct ms_lanes *p, struct ms_signer *s) MS_MUST_CHECK;

/* ms_lanes_signers() - the signers behind the pool (1 without ms_lanes_add()). */
unsigned ms_lanes_signers(const struct ms_lanes *p);

struct ms_lanes_signer_stat {
	const struct ms_signer *signer;
	size_t signatures;	/* made on its lanes so far */
	bool is_dropped;
};

/* ms_lanes_signer_stat() - signer @k's share of the work (all zero for no such signer). */
void ms_lanes_signer_stat(const struct ms_lanes *p, unsigned k, struct ms_lanes_signer_stat *out);

/**
 * ms_lanes_stuck() - whether a dropped signer's lane thread is still inside
 * its token: then ms_lanes_free() leaves the pool to it, and the owner must
 * free neither the signers nor what they use, and end the process without
 * finalizing the tokens.
 */
bool ms_lanes_stuck(const struct ms_lanes *p);

/**
 * ms_signer_agent_open() - a signer over `modsign agent` at @sock_path
 * (src/agent/PROTOCOL.md) when the agent holds the key @key names: the key
 * names of both (ms_agent_key_name()) are equal. Each lane is a connection,
 * opened when first used: up to @lanes (0: as many as the agent has). A
 * reply may take @token_timeout seconds (0: for ever). The signer never
 * recovers: an agent lost in the middle of a request is an error.
 * Return: MS_OK; MS_E_NOTFOUND when the agent holds another key, or @key
 * names nothing comparable (the caller then opens @key itself); MS_E_IO (no agent there, it refused, or it went
 * away), MS_E_MALFORMED, MS_E_UNSUPPORTED, MS_E_ARG, MS_E_NOMEM: errors,
 * never a reason to open the key instead. @why gets a line naming the socket.
 */
ms_err ms_signer_agent_open(const char *sock_path, const char *key, unsigned lanes,
			    unsigned token_timeout, struct ms_signer **out, char *why,
			    size_t why_cap) MS_MUST_CHECK;

/**
 * ms_signer_lib_versions() - the libraries src/signer calls and their versions,
 * for `modsign --version`: GMP, under hogweed (mbedTLS and nettle, which the
 * signers call too, are ms_cms_lib_versions()'s).
 * @out: @cap entries, filled by the call; NULL asks for the count only.
 * @out_len: the count (set on MS_OK, and on MS_E_NOSPACE).
 * Return: MS_OK; MS_E_NOSPACE when @cap is below the count; MS_E_ARG or
 * MS_E_NOSPACE when a library gives no version or one longer than
 * MS_LIBVER_MAX. On failure the entries are unspecified.
 */
ms_err ms_signer_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

#endif
