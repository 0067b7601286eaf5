// SPDX-License-Identifier: GPL-2.0-only
/*
 * One connection to the agent, on its own thread: the peer's uid checked,
 * then its requests read, parsed and served (HELLO, MATCH, SIGN, STOP), each
 * signature on a lane of the pool and logged before it is handed out. A
 * request that does not parse ends the connection with a refusal. Parses
 * untrusted input (through proto.c).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server_internal.h"

/* After a refusal, how long and how much the agent reads, and drops, before closing. */
#define DRAIN_MS 1000
#define DRAIN_MAX (256u * 1024u)

static ms_err
send_reply(struct conn *c, const struct ms_agent_reply *r)
{
	uint8_t frame[MS_AGENT_REPLY_FRAME_MAX];
	struct ms_agent_io io;
	size_t len = 0;
	ms_err err = ms_agent_reply_encode(r, frame, sizeof(frame), &len);

	if (err != MS_OK) {
		return err;
	}
	return ms_agent_frame_write(c->fd, frame, len, FRAME_MS, &io);
}

static ms_err
send_status(struct conn *c, enum ms_agent_msg type, enum ms_agent_status st, const char *text)
{
	struct ms_agent_reply r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.status = st;
	r.text.p = (const uint8_t *)text;
	r.text.len = text != NULL ? strlen(text) : 0;
	return send_reply(c, &r);
}

static ms_err
serve_hello(struct conn *c)
{
	const struct ms_agent_server_cfg *cfg = c->srv->cfg;
	struct ms_agent_reply r;

	memset(&r, 0, sizeof(r));
	r.type = MS_AGENT_HELLO;
	r.status = MS_AGENT_ST_OK;
	r.key_type = ms_signer_key_type(cfg->signer);
	r.lanes = ms_lanes_count(cfg->lanes);	/* every token's, with agent --key */
	r.key_name.p = (const uint8_t *)cfg->key_name;
	r.key_name.len = strlen(cfg->key_name);
	return send_reply(c, &r);
}

/* SHA-256 of the certificate bytes, the key of the cache of checks made. */
static ms_err
cert_hash(const struct ms_span *cert, uint8_t out[32])
{
	struct ms_cms_digest *d = NULL;
	size_t n = 0;
	ms_err err = ms_cms_digest_new(MS_HASH_SHA256, &d);

	if (err == MS_OK) {
		err = ms_cms_digest_update(d, cert->p, cert->len);
	}
	if (err == MS_OK) {
		err = ms_cms_digest_final(d, out, 32, &n);
	}
	ms_cms_digest_free(d);
	return err;
}

/*
 * The key against a certificate, as direct signing checks it. A token that
 * shows no public key is checked with a test signature on lane 0, so the
 * check holds every lane of the pool meanwhile; results are kept per
 * certificate, so a build's clients (one certificate) cost one check.
 * *@stopping: no lane could be had because the pool is stopped.
 */
static ms_err
check_cert(struct ms_agent_server *srv, const struct ms_span *der, bool *stopping, char *why,
	   size_t cap)
{
	const struct ms_agent_server_cfg *cfg = srv->cfg;
	struct ms_cms_cert *cert = NULL;
	/*
	 * Several tokens (agent --key) all show their public keys (checked at
	 * start): no test signature, so no lane is held.
	 */
	unsigned n_lanes = ms_lanes_signers(cfg->lanes) > 1 ? 0 : ms_signer_lanes(cfg->signer);
	unsigned held = 0;
	unsigned *taken = NULL;
	uint8_t h[32];
	ms_err err;

	*stopping = false;
	err = cert_hash(der, h);
	if (err != MS_OK) {
		snprintf(why, cap, "cannot hash the certificate: %s", ms_err_str(err));
		return err;
	}
	pthread_mutex_lock(&srv->match_lock);
	for (unsigned i = 0; i < srv->n_match; i++) {
		if (memcmp(srv->match[i].cert_hash, h, sizeof(h)) == 0) {
			err = srv->match[i].result;
			goto out;
		}
	}
	err = ms_cms_cert_parse(der->p, der->len, &cert);
	if (err != MS_OK) {
		snprintf(why, cap, "the certificate does not parse: %s", ms_err_str(err));
		goto out;	/* not cached: it says nothing about the key */
	}
	taken = calloc(n_lanes > 0 ? n_lanes : 1, sizeof(*taken));	/* calloc(0) may be NULL */
	if (taken == NULL) {
		err = MS_E_NOMEM;
		snprintf(why, cap, "%s", ms_err_str(err));
		goto out;
	}
	while (held < n_lanes) {
		taken[held] = ms_lanes_take(cfg->lanes);
		if (taken[held] == MS_LANE_NONE) {
			err = MS_E_IO;
			*stopping = true;
			snprintf(why, cap, "the agent is stopping");
			goto out;
		}
		held++;
	}
	err = ms_signer_match_cert(cfg->signer, cert);
	if (err != MS_OK && err != MS_E_MISMATCH) {
		ms_signer_describe(cfg->signer, 0, why, cap);
		goto out;	/* a token failure: not cached either */
	}
	memcpy(srv->match[srv->n_match % MATCH_CACHE].cert_hash, h, sizeof(h));
	srv->match[srv->n_match % MATCH_CACHE].result = err;
	if (srv->n_match < MATCH_CACHE) {
		srv->n_match++;
	}
out:
	for (unsigned i = 0; i < held; i++) {
		ms_lanes_give(cfg->lanes, taken[i]);
	}
	free(taken);
	pthread_mutex_unlock(&srv->match_lock);
	ms_cms_cert_free(cert);
	return err;
}

static ms_err
serve_match(struct conn *c, const struct ms_agent_req *req)
{
	char why[1024] = "";
	bool stopping;
	ms_err err = check_cert(c->srv, &req->cert, &stopping, why, sizeof(why));

	if (err == MS_OK) {
		return send_status(c, MS_AGENT_MATCH, MS_AGENT_ST_OK, NULL);
	}
	if (err == MS_E_MISMATCH) {
		return send_status(c, MS_AGENT_MATCH, MS_AGENT_ST_MISMATCH, NULL);
	}
	return send_status(c, MS_AGENT_MATCH, stopping ? MS_AGENT_ST_STOPPING :
			   MS_AGENT_ST_FAILED, why);
}

/*
 * The last token's session or the token itself is gone and the pool could
 * not bring it back (its recovery policy: new sessions, a login only when
 * the token forgot it): the agent can sign no more. It stops now rather
 * than answer each later request with the token's error: the pool stops
 * (requests waiting for a lane are told the agent is stopping) and the
 * socket goes, so that new clients fail at once to connect.
 */
static void
token_lost(struct ms_agent_server *srv, const struct ms_lanes_result *res)
{
	struct ms_lanes_signer_stat st;
	char who[600], reason[MS_AGENT_REASON_MAX];

	ms_lanes_signer_stat(srv->cfg->lanes, res->signer, &st);
	ms_signer_name(st.signer, who, sizeof(who));
	snprintf(reason, sizeof(reason), "%s lost: %s; it could not be brought back", who,
		 res->why);
	ms_agenti_say(srv, MS_AGENT_SAY_ERROR, "%s: stopping", reason);
	atomic_store(&srv->is_token_lost, true);
	ms_lanes_stop(srv->cfg->lanes);
	ms_agenti_stop(srv, reason);
}

/* One signature: on a lane of the pool, logged before the client gets it. */
static ms_err
serve_sign(struct conn *c, const struct ms_agent_req *req)
{
	struct ms_agent_server *srv = c->srv;
	const struct ms_agent_server_cfg *cfg = srv->cfg;
	char label[MS_AGENT_PATH_MAX + 1];
	uint8_t sig[MS_SIG_MAX];
	size_t sig_len = 0;
	struct ms_signer_req lr = { .form = MS_SIG_DIGEST };
	struct ms_lanes_result res;
	struct ms_agent_audit_sign rec;
	struct ms_agent_reply r;
	unsigned lane;
	ms_err err;

	memcpy(label, req->module.p, req->module.len);	/* checked: no NUL, at most 4096 */
	label[req->module.len] = '\0';
	memset(&res, 0, sizeof(res));
	if (ms_signer_key_type(cfg->signer) == MS_KEY_MLDSA && req->hash != MS_HASH_SHA512) {
		ms_agenti_say(srv, MS_AGENT_SAY_ERROR, "%s: refused: an ML-DSA key signs only "
			      "signed attributes holding a SHA-512 digest", label);
		atomic_fetch_add(&srv->failed, 1);
		return send_status(c, MS_AGENT_SIGN, MS_AGENT_ST_FAILED,
				   "an ML-DSA key signs only signed attributes holding a SHA-512 "
				   "digest (--signed-attrs with sha512)");
	}
	lane = ms_lanes_take(cfg->lanes);
	if (lane == MS_LANE_NONE) {
		return send_status(c, MS_AGENT_SIGN, MS_AGENT_ST_STOPPING, "the agent is stopping");
	}
	atomic_store(&c->lane, lane);
	/* ML-DSA: the signed attributes holding the digest (sign-file 7.2's), never a blob. */
	if (ms_signer_key_type(cfg->signer) == MS_KEY_MLDSA) {
		lr.form = MS_SIG_MLDSA_ATTRS;
	}
	lr.alg = req->hash;
	lr.digest = req->digest.p;	/* the digest only: the signer builds the DigestInfo */
	lr.digest_len = req->digest.len;
	lr.label = label;
	err = ms_lanes_sign(cfg->lanes, lane, &lr, sig, sizeof(sig), &sig_len, &res);
	atomic_store(&c->lane, MS_LANE_NONE);
	ms_lanes_give(cfg->lanes, lane);
	if (res.recovered && err == MS_OK) {
		ms_agenti_say(srv, MS_AGENT_SAY_WARN, "%s: %s: session re-opened, signed again",
			      label, res.why);
	}

	memset(&rec, 0, sizeof(rec));
	rec.peer = &c->peer;
	rec.module = req->module;
	rec.hash = req->hash;
	if (err == MS_OK && cfg->signer_names != NULL && res.signer < ms_lanes_signers(cfg->lanes)) {
		rec.token = cfg->signer_names[res.signer];
	}
	rec.digest = req->digest;
	rec.key = cfg->key_name;
	rec.error = err == MS_OK ? NULL : res.why;
	if (ms_agent_audit_sign(cfg->audit, &rec) != MS_OK) {
		/* An audited key hands out no signature the trail does not show. */
		ms_agenti_say(srv, MS_AGENT_SAY_ERROR, "--log: cannot write the audit line for %s: "
		    "signature withheld", label);
		atomic_fetch_add(&srv->failed, 1);
		return send_status(c, MS_AGENT_SIGN, MS_AGENT_ST_FAILED,
				   "the agent cannot write its audit log: signature withheld");
	}
	if (err != MS_OK) {
		ms_agenti_say(srv, MS_AGENT_SAY_ERROR, "%s: signing failed: %s", label, res.why);
		atomic_fetch_add(&srv->failed, 1);
		if (res.is_lost) {
			token_lost(srv, &res);
		}
		return send_status(c, MS_AGENT_SIGN, MS_AGENT_ST_FAILED, res.why);
	}
	atomic_fetch_add(&srv->signed_n, 1);
	memset(&r, 0, sizeof(r));
	r.type = MS_AGENT_SIGN;
	r.status = MS_AGENT_ST_OK;
	r.sig.p = sig;
	r.sig.len = sig_len;
	return send_reply(c, &r);
}

/* A whole request is in: serve it, unless the agent is stopping. */
static bool
request_begin(struct conn *c)
{
	struct ms_agent_server *srv = c->srv;
	bool ok;

	pthread_mutex_lock(&srv->lock);
	/* Closed for a new client (server.c room_for_one()) as the request came in: not served. */
	ok = !srv->stopping && !c->is_evicted;
	if (ok) {
		c->is_busy = true;
		srv->n_busy++;
	}
	pthread_mutex_unlock(&srv->lock);
	return ok;
}

/* The request is served; true when the agent is stopping (serve no more). */
static bool
request_end(struct conn *c)
{
	struct ms_agent_server *srv = c->srv;
	bool stopping;

	pthread_mutex_lock(&srv->lock);
	c->is_busy = false;
	srv->n_busy--;
	srv->last_ms = ms_agent_now_ms();
	c->idle_since = srv->last_ms;
	stopping = srv->stopping;
	pthread_mutex_unlock(&srv->lock);
	return stopping;
}

/*
 * After a refusal: no more to send (the client reads the refusal, then the
 * end of the stream), and what the client sent meanwhile is read and
 * dropped, for up to DRAIN_MS and DRAIN_MAX bytes, until it closes. A
 * connection closed with bytes unread is reset, and a reset can destroy
 * the refusal before the client has read it.
 */
static void
drain(struct conn *c)
{
	int64_t deadline = ms_agent_now_ms() + DRAIN_MS;
	size_t total = 0;
	uint8_t buf[4096];

	if (shutdown(c->fd, SHUT_WR) != 0) {
		return;
	}
	while (total < DRAIN_MAX) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int64_t left = deadline - ms_agent_now_ms();
		ssize_t k;
		int r;

		if (left <= 0) {
			return;
		}
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			return;
		}
		k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
			continue;
		}
		if (k <= 0) {
			return;	/* the client closed (or reset): nothing left unread */
		}
		total += (size_t)k;
	}
}

/* A request that does not parse: the client is told why, and the connection ends. */
static void
malformed(struct conn *c, const char *why)
{
	struct ms_agent_server *srv = c->srv;

	atomic_fetch_add(&srv->malformed, 1);
	if (send_status(c, 0, MS_AGENT_ST_REFUSED, why) != MS_OK) {
		/* the client is gone: nothing to tell */
	}
	if (ms_agent_audit_event(srv->cfg->audit, "malformed", &c->peer, NULL, why) != MS_OK) {
		ms_agenti_say(srv, MS_AGENT_SAY_ERROR, "--log: cannot write the audit line");
	}
	ms_agenti_say(srv, MS_AGENT_SAY_WARN, "malformed request from pid %ld (%s): %s; connection closed",
	    (long)c->peer.pid, c->peer.exe[0] != '\0' ? c->peer.exe : "?", why);
	drain(c);
}

static bool
peer_allowed(struct conn *c)
{
	struct ms_agent_server *srv = c->srv;
	char why[128];

	if (ms_agent_peer_get(c->fd, &c->peer) != MS_OK) {
		return false;
	}
	if (c->peer.uid == srv->uid) {
		return true;
	}
	snprintf(why, sizeof(why), "uid %ld is not the agent's (%ld)", (long)c->peer.uid,
		 (long)srv->uid);
	atomic_fetch_add(&srv->refused, 1);
	if (send_status(c, 0, MS_AGENT_ST_REFUSED, "refused: not the agent's user") != MS_OK) {
		/* nothing more to tell it */
	}
	if (ms_agent_audit_event(srv->cfg->audit, "refused", &c->peer, NULL, why) != MS_OK) {
		ms_agenti_say(srv, MS_AGENT_SAY_ERROR, "--log: cannot write the audit line");
	}
	ms_agenti_say(srv, MS_AGENT_SAY_WARN, "refused a connection from pid %ld (%s): %s",
	    (long)c->peer.pid, c->peer.exe[0] != '\0' ? c->peer.exe : "?", why);
	drain(c);
	return false;
}

static ms_err
dispatch(struct conn *c, const struct ms_agent_req *req)
{
	switch (req->type) {
	case MS_AGENT_HELLO:
		return serve_hello(c);
	case MS_AGENT_MATCH:
		return serve_match(c, req);
	case MS_AGENT_SIGN:
		return serve_sign(c, req);
	case MS_AGENT_STOP:
		c->is_stop = true;
		ms_agenti_stop(c->srv, "asked to stop (--stop)");
		return send_status(c, MS_AGENT_STOP, MS_AGENT_ST_OK, "stopping");
	}
	return MS_E_INTERNAL;
}

static void
serve_conn(struct conn *c, uint8_t *body)
{
	struct ms_agent_req req;
	struct ms_agent_io io;
	const char *why = NULL;
	size_t len = 0;
	ms_err err;

	for (;;) {
		err = ms_agent_frame_read(c->fd, body, MS_AGENT_BODY_MAX, &len, MS_AGENT_IDLE_MS, FRAME_MS,
					  &io);
		if (err == MS_E_MALFORMED) {
			malformed(c, "frame length 0 or over the limit");
			return;
		}
		if (err != MS_OK) {
			return;	/* closed, stalled or cut: the connection ends, nothing else */
		}
		err = ms_agent_req_parse(body, len, &req, &why);
		if (err != MS_OK) {
			malformed(c, why);
			return;
		}
		if (!request_begin(c)) {
			(void)send_status(c, req.type, MS_AGENT_ST_STOPPING, "the agent is stopping");
			return;
		}
		err = dispatch(c, &req);
		if (request_end(c) || err != MS_OK || req.type == MS_AGENT_STOP) {
			return;	/* stopping: this request was the last */
		}
	}
}

void *
ms_agenti_conn_main(void *arg)
{
	struct conn *c = arg;
	struct ms_agent_server *srv = c->srv;
	uint8_t *body = malloc(MS_AGENT_BODY_MAX);

	if (body != NULL && peer_allowed(c)) {
		serve_conn(c, body);
	}
	free(body);
	pthread_mutex_lock(&srv->lock);
	if (!c->is_stop) {
		close(c->fd);
		c->fd = -1;
	}
	c->is_done = true;
	pthread_mutex_unlock(&srv->lock);
	ms_agenti_wake(srv);
	return NULL;
}
