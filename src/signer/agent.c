// SPDX-License-Identifier: GPL-2.0-only
/*
 * A signer over `modsign agent`: the key is the agent's, reached through
 * its socket (src/agent/PROTOCOL.md). Each lane is one connection, opened
 * when the lane is first used. Only digests travel: the agent builds what
 * its key signs. Nothing falls back to opening the key here: an agent that
 * cannot be reached, or is lost in the middle of a request, is an error.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../agent/agent.h"
#include "signer_internal.h"

#define WHY_MAX 1200
/* An agent answers HELLO at once: it needs neither its token nor a lane. */
#define HELLO_MS 10000

struct agent_lane {
	int fd;			/* -1 until first used, and after a failure */
	int64_t last_ms;	/* when its last reply came */
	char why[WHY_MAX];	/* what failed last, for describe */
};

struct agent_signer {
	struct ms_signer base;		/* first: callers hold a struct ms_signer * */
	char path[MS_AGENT_SOCK_PATH_MAX + 1];
	char key_name[MS_AGENT_NAME_MAX + 1];
	int reply_ms;			/* how long a signature may take; -1: for ever */
	struct agent_lane *lane;
	unsigned n_lanes;
};

/* What an I/O failure means to someone waiting for a signature. */
static void
lost(struct agent_signer *as, struct agent_lane *l, const struct ms_agent_call *call)
{
	if (call->why != NULL) {
		snprintf(l->why, sizeof(l->why), "agent at %s: malformed reply: %s", as->path,
			 call->why);
	} else if (call->io.end == MS_AGENT_IO_EOF || call->io.end == MS_AGENT_IO_CUT) {
		snprintf(l->why, sizeof(l->why), "agent at %s closed the connection in the middle "
			 "of a request (stopped or killed?)", as->path);
	} else if (call->io.end == MS_AGENT_IO_TIMEOUT) {
		snprintf(l->why, sizeof(l->why), "agent at %s did not answer in time: timed out",
			 as->path);
	} else {
		snprintf(l->why, sizeof(l->why), "agent at %s: %s", as->path,
			 ms_agent_io_text(&call->io));
	}
	if (l->fd >= 0) {
		close(l->fd);
		l->fd = -1;
	}
}

/* A reply that is not OK: the agent's own words, or its status. */
static ms_err
refused(struct agent_signer *as, struct agent_lane *l, const struct ms_agent_reply *r)
{
	static const char *const what[] = {
		"", "not the certificate's key", "failed", "refused", "is stopping",
	};
	int n = (int)(r->text.len < 512 ? r->text.len : 512);

	snprintf(l->why, sizeof(l->why), "agent at %s %s%s%.*s", as->path, what[r->status],
		 n > 0 ? ": " : "", n, (const char *)r->text.p);
	return r->status == MS_AGENT_ST_FAILED ? MS_E_TOKEN : MS_E_IO;
}

/*
 * Whoever listens at the socket path answers HELLO, MATCH and SIGN, and what
 * it answers to SIGN goes into the module: the listener must be of our own
 * uid, as the agent accepts only clients of its own (the kernel records the
 * listener's credentials at connect, SO_PEERCRED, unix(7)). An agent
 * forwarded with `ssh -R` is served by the user's own sshd session, so it
 * passes. Checked before a byte is sent, so another user's listener learns
 * nothing, not even which key we want.
 */
static ms_err
peer_check(struct agent_signer *as, struct agent_lane *l)
{
	struct ms_agent_peer peer;

	if (ms_agent_peer_get(l->fd, &peer) != MS_OK) {
		snprintf(l->why, sizeof(l->why), "agent at %s: cannot read who serves it "
			 "(SO_PEERCRED): %s: refused; nothing sent", as->path, strerror(errno));
		return MS_E_IO;
	}
	if (peer.uid != geteuid()) {
		snprintf(l->why, sizeof(l->why), "agent at %s is served by uid %ld, not ours (%ld): "
			 "refused; nothing sent", as->path, (long)peer.uid, (long)geteuid());
		return MS_E_IO;
	}
	return MS_OK;
}

/*
 * Connects lane @l, checks who listens, and asks who is there: the key name
 * must be the one the agent announced first (a socket path now served by
 * another agent is another key). Connect and HELLO each have a deadline: a
 * listener that never accepts or never answers costs seconds, not the build.
 */
static ms_err
lane_connect(struct agent_signer *as, struct agent_lane *l, struct ms_agent_call *call)
{
	struct ms_agent_req req = { .type = MS_AGENT_HELLO, .version = MS_AGENT_PROTO_VERSION };
	int e = 0;
	ms_err err;

	err = ms_agent_sock_connect(as->path, MS_AGENT_CONNECT_MS, &l->fd, &e);
	if (err != MS_OK && e == ETIMEDOUT) {
		snprintf(l->why, sizeof(l->why), "agent at %s (%s): cannot connect: timed out after "
			 "%d s (its backlog stayed full)", as->path, MS_AGENT_ENV_SOCK,
			 MS_AGENT_CONNECT_MS / 1000);
		return MS_E_IO;
	}
	if (err != MS_OK) {
		snprintf(l->why, sizeof(l->why), "agent at %s (%s): cannot connect: %s", as->path,
			 MS_AGENT_ENV_SOCK, e != 0 ? strerror(e) : "not a socket path");
		return MS_E_IO;
	}
	err = peer_check(as, l);
	if (err != MS_OK) {
		close(l->fd);
		l->fd = -1;
		return err;
	}
	err = ms_agent_call(l->fd, &req, HELLO_MS, call);
	if (err != MS_OK) {
		lost(as, l, call);
		return err == MS_E_MALFORMED ? MS_E_MALFORMED : MS_E_IO;
	}
	if (call->reply.status != MS_AGENT_ST_OK) {
		err = refused(as, l, &call->reply);
		close(l->fd);
		l->fd = -1;
		return err;
	}
	return MS_OK;
}

/*
 * A lane's connection, made on first use, or made anew when it has been
 * idle long enough for the agent to close it (MS_AGENT_IDLE_MS) or the
 * agent has closed it: nothing was asked on it yet, so nothing is lost.
 */
static ms_err
lane_ready(struct agent_signer *as, struct agent_lane *l)
{
	struct ms_agent_call call;
	struct pollfd pfd;
	ms_err err;

	if (l->fd >= 0 && ms_agent_now_ms() - l->last_ms > MS_AGENT_CLIENT_IDLE_MS) {
		close(l->fd);
		l->fd = -1;
	}
	if (l->fd >= 0) {
		pfd.fd = l->fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 0) == 0) {
			return MS_OK;	/* nothing pending: still open */
		}
		close(l->fd);	/* an idle connection has nothing to say but its end */
		l->fd = -1;
	}
	err = lane_connect(as, l, &call);
	if (err != MS_OK) {
		return err;
	}
	l->last_ms = ms_agent_now_ms();
	if (call.reply.key_name.len != strlen(as->key_name) ||
	    memcmp(call.reply.key_name.p, as->key_name, call.reply.key_name.len) != 0) {
		snprintf(l->why, sizeof(l->why), "agent at %s now holds another key", as->path);
		close(l->fd);
		l->fd = -1;
		return MS_E_IO;
	}
	return MS_OK;
}

/* The digest travels; the module path only goes to the agent's audit log. */
static ms_err
agent_sign_digest(struct agent_signer *as, unsigned lane, enum ms_hash_alg alg,
		  const uint8_t *digest, size_t digest_len, const char *label, uint8_t *sig,
		  size_t cap, size_t *sig_len)
{
	struct agent_lane *l = NULL;
	struct ms_agent_req req;
	struct ms_agent_call call;
	size_t label_len = label != NULL ? strlen(label) : 0;
	ms_err err;

	if (lane >= as->n_lanes) {
		return MS_E_ARG;
	}
	l = &as->lane[lane];
	err = lane_ready(as, l);
	if (err != MS_OK) {
		return err;
	}
	memset(&req, 0, sizeof(req));
	req.type = MS_AGENT_SIGN;
	req.hash = alg;
	req.digest.p = digest;
	req.digest.len = digest_len;
	/* A path over the protocol's ceiling is logged by its last 4096 bytes. */
	req.module.p = (const uint8_t *)label + (label_len > MS_AGENT_PATH_MAX ?
						 label_len - MS_AGENT_PATH_MAX : 0);
	req.module.len = label_len > MS_AGENT_PATH_MAX ? MS_AGENT_PATH_MAX : label_len;
	err = ms_agent_call(l->fd, &req, as->reply_ms, &call);
	if (err != MS_OK) {
		lost(as, l, &call);
		return err == MS_E_ARG ? MS_E_ARG : MS_E_IO;
	}
	if (call.reply.status != MS_AGENT_ST_OK) {
		return refused(as, l, &call.reply);
	}
	if (call.reply.sig.len > cap) {
		snprintf(l->why, sizeof(l->why), "agent at %s: signature longer than expected",
			 as->path);
		return MS_E_NOSPACE;
	}
	memcpy(sig, call.reply.sig.p, call.reply.sig.len);
	*sig_len = call.reply.sig.len;
	l->last_ms = ms_agent_now_ms();
	return MS_OK;
}

static ms_err
agent_sign(struct ms_signer *base, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	   size_t cap, size_t *sig_len)
{
	/*
	 * An agent signs module digests only: for an ML-DSA key the signed
	 * attributes holding one, never the module itself.
	 */
	if (req->form == MS_SIG_MLDSA_DATA) {
		return MS_E_ARG;
	}
	return agent_sign_digest((struct agent_signer *)base, lane, req->alg, req->digest,
				 req->digest_len, req->label, sig, cap, sig_len);
}

/* The agent checks the certificate against its key, as direct signing would here. */
static ms_err
agent_match_cert(struct ms_signer *base, const struct ms_cms_cert *cert)
{
	struct agent_signer *as = (struct agent_signer *)base;
	struct agent_lane *l = &as->lane[0];
	struct ms_agent_req req;
	struct ms_agent_call call;
	ms_err err;

	memset(&req, 0, sizeof(req));
	req.type = MS_AGENT_MATCH;
	ms_cms_cert_der(cert, &req.cert);
	err = lane_ready(as, l);
	if (err != MS_OK) {
		return err;
	}
	err = ms_agent_call(l->fd, &req, as->reply_ms, &call);
	if (err != MS_OK) {
		lost(as, l, &call);
		return MS_E_IO;
	}
	if (call.reply.status == MS_AGENT_ST_MISMATCH) {
		return MS_E_MISMATCH;
	}
	if (call.reply.status != MS_AGENT_ST_OK) {
		return refused(as, l, &call.reply);
	}
	return MS_OK;
}

static void
agent_describe(const struct ms_signer *base, unsigned lane, char *buf, size_t cap)
{
	const struct agent_signer *as = (const struct agent_signer *)base;

	snprintf(buf, cap, "%s", lane < as->n_lanes && as->lane[lane].why[0] != '\0' ?
		 as->lane[lane].why : "the agent failed");
}

static void
agent_name(const struct ms_signer *base, char *buf, size_t cap)
{
	const struct agent_signer *as = (const struct agent_signer *)base;

	snprintf(buf, cap, "agent at %s", as->path);
}

static void
agent_free(struct ms_signer *base)
{
	struct agent_signer *as = (struct agent_signer *)base;

	if (as == NULL) {
		return;
	}
	for (unsigned i = 0; as->lane != NULL && i < as->n_lanes; i++) {
		if (as->lane[i].fd >= 0) {
			close(as->lane[i].fd);
		}
	}
	free(as->lane);
	free(as);
}

static const struct ms_signer_ops agent_ops = {
	.sign = agent_sign,
	.match_cert = agent_match_cert,
	.recover = NULL,	/* a lost agent is an error, never a reason to log in here */
	.describe = agent_describe,
	.name = agent_name,
	.free = agent_free,
};

ms_err
ms_signer_agent_open(const char *sock_path, const char *key, unsigned lanes,
		     unsigned token_timeout, struct ms_signer **out, char *why, size_t why_cap)
{
	struct agent_signer *as = NULL;
	struct ms_agent_call call;
	char mine[MS_AGENT_NAME_MAX + 1];
	ms_err err = MS_E_INTERNAL;

	*out = NULL;
	why[0] = '\0';
	if (strlen(sock_path) > MS_AGENT_SOCK_PATH_MAX) {
		snprintf(why, why_cap, "%s=%s: path too long for a socket", MS_AGENT_ENV_SOCK,
			 sock_path);
		return MS_E_ARG;
	}
	/* A key argument that names nothing cannot be the agent's: opening it says why. */
	if (ms_agent_key_name(key, mine, sizeof(mine)) != MS_OK) {
		snprintf(why, why_cap, "the key argument cannot be compared with the agent's key");
		return MS_E_NOTFOUND;
	}
	as = calloc(1, sizeof(*as));
	if (as == NULL) {
		return MS_E_NOMEM;
	}
	as->base.ops = &agent_ops;
	snprintf(as->path, sizeof(as->path), "%s", sock_path);
	as->reply_ms = token_timeout == 0 ? -1 : (int)token_timeout * 1000;
	as->lane = calloc(1, sizeof(*as->lane));
	if (as->lane == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	as->n_lanes = 1;	/* only once there is a lane: agent_free() walks them */
	as->lane[0].fd = -1;
	err = lane_connect(as, &as->lane[0], &call);
	if (err != MS_OK) {
		snprintf(why, why_cap, "%s", as->lane[0].why);
		goto out;
	}
	as->lane[0].last_ms = ms_agent_now_ms();
	if (call.reply.key_name.len != strlen(mine) ||
	    memcmp(call.reply.key_name.p, mine, call.reply.key_name.len) != 0) {
		snprintf(why, why_cap, "agent at %s holds %.*s, not %s", sock_path,
			 (int)call.reply.key_name.len, (const char *)call.reply.key_name.p, mine);
		err = MS_E_NOTFOUND;
		goto out;
	}
	memcpy(as->key_name, mine, strlen(mine) + 1);
	as->base.type = call.reply.key_type;
	/* As many connections as the agent has lanes, or fewer when asked. */
	as->base.lanes = lanes == 0 || lanes > call.reply.lanes ? call.reply.lanes : lanes;
	if (as->base.lanes > 1) {
		struct agent_lane *more = realloc(as->lane, as->base.lanes * sizeof(*more));

		if (more == NULL) {
			err = MS_E_NOMEM;
			goto out;
		}
		as->lane = more;
		for (unsigned i = 1; i < as->base.lanes; i++) {
			as->lane[i].fd = -1;
			as->lane[i].why[0] = '\0';
		}
		as->n_lanes = as->base.lanes;
	}
	*out = &as->base;
	as = NULL;
	err = MS_OK;
out:
	agent_free(as == NULL ? NULL : &as->base);
	return err;
}
