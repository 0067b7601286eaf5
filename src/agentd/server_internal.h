/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the two halves of the agent's server share, for src/agentd/ only: the
 * server (server.c: accept loop, connection threads, watchdog, stopping)
 * and each connection (conn.c: peer check, requests, replies).
 */
#ifndef MS_AGENTD_SERVER_INTERNAL_H
#define MS_AGENTD_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "../signer/signer.h"
#include "agentd.h"

/* A request, once begun, and a reply come whole in good time. */
#define FRAME_MS 10000
/*
 * Connections held open at once. When that many are open, each new client
 * is let in by closing the one that has waited longest for its next
 * request, so that no process can hold every connection; only when all of
 * them are being served do new clients wait in the socket's backlog.
 */
#define CONNS_MAX 256
/* Room for the new ones while the threads of the closed ones end. */
#define CONNS_RESERVE 16
/* Certificates whose check against the key is remembered. */
#define MATCH_CACHE 8

/* One client connection and its thread; owned by the server's list. */
struct conn {
	struct ms_agentd_server *srv;
	int fd;
	pthread_t thread;
	struct ms_agent_peer peer;
	bool is_busy;		/* a whole request read and being served (srv->lock) */
	bool is_done;		/* the thread has finished: join it (srv->lock) */
	bool is_stop;		/* it asked the agent to stop: its fd outlives it */
	bool is_evicted;	/* closed to make room for a new client (srv->lock) */
	int64_t idle_since;	/* accepted, or its last request served (srv->lock) */
	atomic_uint lane;	/* the pool lane it signs on, MS_LANE_NONE when none */
};

/* A certificate (by its SHA-256) and whether it is the key's. */
struct match_entry {
	uint8_t cert_hash[32];
	ms_err result;
};

/* One run of the server (ms_agentd_server_run()). */
struct ms_agentd_server {
	const struct ms_agentd_server_cfg *cfg;
	struct ms_agentd_sock *sock;
	uid_t uid;
	int wake[2];			/* conn threads wake the accept loop */

	pthread_mutex_t lock;		/* conns, is_busy, stopping, last_ms */
	struct conn *conns[CONNS_MAX + CONNS_RESERVE];
	unsigned n_conns;		/* threads not yet joined, evicted ones too */
	bool has_evicted;		/* the cap was reached once: said so */
	unsigned n_busy;
	bool stopping;
	int64_t last_ms;		/* when the last request ended, for --idle-timeout */
	char reason[MS_AGENTD_REASON_MAX];	/* why it stopped */
	atomic_bool is_token_lost;	/* it stopped because the token is gone */

	pthread_mutex_t match_lock;	/* one certificate check at a time */
	struct match_entry match[MATCH_CACHE];
	unsigned n_match;

	atomic_size_t signed_n, failed, refused, malformed;
	size_t hung;			/* lanes found hung by the watchdog */
	int stop_fd;			/* the --stop client's connection, closed last */
};

/* ms_agenti_say() - one line for the caller to print (cfg->say), formatted. */
void ms_agenti_say(struct ms_agentd_server *srv, enum ms_agentd_say kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ms_agenti_wake() - wake the accept loop (a connection ended, a stop was asked). */
void ms_agenti_wake(struct ms_agentd_server *srv);

/* ms_agenti_stop() - ask the server to stop; the first reason wins. */
void ms_agenti_stop(struct ms_agentd_server *srv, const char *reason);

/*
 * ms_agenti_conn_main() - a connection's thread: checks the peer, serves its
 * requests until it ends, closes it (unless it asked to stop: the server
 * closes that one last), marks itself done and wakes the accept loop.
 */
void *ms_agenti_conn_main(void *arg);

#endif
