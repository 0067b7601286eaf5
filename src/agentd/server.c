// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's server: accepts connections on the agent socket, each served
 * on a thread of its own (conn.c), with the lane pool bulk mode uses; stops
 * on request, on its timeouts or when a signature hangs, finishing what is
 * being served. A client that stalls, dies or sends garbage costs only its
 * connection. Knows no module files.
 */
#define _GNU_SOURCE	/* accept4 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server_internal.h"

/* How often the accept loop looks at the watchdog and the timeouts. */
#define TICK_MS 1000

void
ms_agenti_say(struct ms_agentd_server *srv, enum ms_agentd_say kind, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (srv->cfg->say == NULL) {
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	srv->cfg->say(srv->cfg->ctx, kind, line);
}

void
ms_agenti_wake(struct ms_agentd_server *srv)
{
	if (write(srv->wake[1], "w", 1) < 0) {
		/* full: the loop is awake already */
	}
}

/* The first reason wins; the accept loop then stops. */
void
ms_agenti_stop(struct ms_agentd_server *srv, const char *reason)
{
	pthread_mutex_lock(&srv->lock);
	if (!srv->stopping) {
		srv->stopping = true;
		snprintf(srv->reason, sizeof(srv->reason), "%s", reason);
	}
	pthread_mutex_unlock(&srv->lock);
	ms_agenti_wake(srv);
}

/* Joins finished connection threads; with @all, waits for every one. */
static void
reap(struct ms_agentd_server *srv, bool all)
{
	for (;;) {
		struct conn *done = NULL;
		bool left = false;

		pthread_mutex_lock(&srv->lock);
		for (unsigned i = 0; i < srv->n_conns; i++) {
			if (srv->conns[i]->is_done) {
				done = srv->conns[i];
				srv->conns[i] = srv->conns[--srv->n_conns];
				break;
			}
		}
		left = srv->n_conns > 0;
		pthread_mutex_unlock(&srv->lock);
		if (done != NULL) {
			pthread_join(done->thread, NULL);
			if (done->is_stop) {
				/* Closed by the caller, last; of two --stop, the first returns early. */
				if (srv->stop_fd >= 0) {
					close(srv->stop_fd);
				}
				srv->stop_fd = done->fd;
			}
			free(done);
			continue;
		}
		if (!all || !left) {
			return;
		}
		/* Someone is still being served: wait for its thread to say it is done. */
		(void)poll(&(struct pollfd){ .fd = srv->wake[0], .events = POLLIN }, 1, TICK_MS);
		{
			char buf[64];

			while (read(srv->wake[0], buf, sizeof(buf)) > 0) {
			}
		}
	}
}

/*
 * Whether a new client can be let in now: fewer than CONNS_MAX connections
 * are open, or one of them is waiting for its next request and can be
 * closed for it. With @evict it is closed: the one that has waited longest,
 * so that a process holding many idle connections loses its own first and
 * no process can hold them all; *@evicted says whether one was. Called
 * with srv->lock held.
 */
static bool
room_for_one(struct ms_agentd_server *srv, bool evict, bool *evicted)
{
	struct conn *idlest = NULL;
	unsigned live = 0;

	*evicted = false;
	if (srv->n_conns >= CONNS_MAX + CONNS_RESERVE) {
		return false;	/* the closed ones' threads have not ended yet */
	}
	for (unsigned i = 0; i < srv->n_conns; i++) {
		struct conn *c = srv->conns[i];

		if (c->is_done || c->is_evicted) {
			continue;
		}
		live++;
		if (!c->is_busy && !c->is_stop &&
		    (idlest == NULL || c->idle_since < idlest->idle_since)) {
			idlest = c;
		}
	}
	if (live < CONNS_MAX) {
		return true;
	}
	if (idlest == NULL) {
		return false;	/* every one is being served: the new one waits */
	}
	if (evict) {
		/* Its read of the next request sees the end of the stream: its thread ends. */
		idlest->is_evicted = true;
		shutdown(idlest->fd, SHUT_RDWR);
		*evicted = true;
	}
	return true;
}

static void
accept_one(struct ms_agentd_server *srv)
{
	struct conn *c = NULL;
	bool evicted = false, say_full = false;
	bool has_room;
	int fd = -1;

	/* Only this loop adds connections: room seen here is still there after accept. */
	pthread_mutex_lock(&srv->lock);
	has_room = room_for_one(srv, false, &evicted);
	pthread_mutex_unlock(&srv->lock);
	if (!has_room) {
		return;
	}
	fd = accept4(srv->sock->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		return;	/* the client gave up meanwhile, or EMFILE: it will be retried */
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	c->srv = srv;
	c->fd = fd;
	c->idle_since = ms_agent_now_ms();
	atomic_init(&c->lane, MS_LANE_NONE);
	pthread_mutex_lock(&srv->lock);
	(void)room_for_one(srv, true, &evicted);
	say_full = evicted && !srv->has_evicted;
	srv->has_evicted = srv->has_evicted || evicted;
	srv->conns[srv->n_conns++] = c;
	pthread_mutex_unlock(&srv->lock);
	if (say_full) {
		ms_agenti_say(srv, MS_AGENTD_SAY_WARN, "%d connections open: each new client now "
		    "closes the one that has waited longest for its next request", CONNS_MAX);
	}
	if (pthread_create(&c->thread, NULL, ms_agenti_conn_main, c) != 0) {
		pthread_mutex_lock(&srv->lock);
		srv->conns[--srv->n_conns] = NULL;
		pthread_mutex_unlock(&srv->lock);
		close(fd);
		free(c);
	}
}

/*
 * A signature that does not come back within --token-timeout cannot be
 * cancelled: its client is cut off (it fails, its module untouched), and
 * the agent stops signing.
 */
static bool
check_hung(struct ms_agentd_server *srv)
{
	struct ms_lanes_hang hang[8];
	size_t n = ms_lanes_hung(srv->cfg->lanes, hang, sizeof(hang) / sizeof(hang[0]));

	if (n == 0) {
		return false;
	}
	for (size_t i = 0; i < n && i < sizeof(hang) / sizeof(hang[0]); i++) {
		ms_agenti_say(srv, MS_AGENTD_SAY_ERROR,
			      "%s: the token did not return the signature within %u s "
			      "(--token-timeout): stopping", hang[i].label != NULL ? hang[i].label : "?",
		    srv->cfg->token_timeout);
	}
	pthread_mutex_lock(&srv->lock);
	for (unsigned i = 0; i < srv->n_conns; i++) {
		if (atomic_load(&srv->conns[i]->lane) != MS_LANE_NONE) {
			shutdown(srv->conns[i]->fd, SHUT_RDWR);
		}
	}
	pthread_mutex_unlock(&srv->lock);
	srv->hung = n;
	return true;
}

/* How long poll may sleep: until the next tick, idle deadline or end of life. */
static int
poll_ms(struct ms_agentd_server *srv, int64_t t0)
{
	const struct ms_agentd_server_cfg *cfg = srv->cfg;
	int64_t t = ms_agent_now_ms(), wait = TICK_MS;

	if (cfg->lifetime > 0) {
		int64_t left = t0 + (int64_t)cfg->lifetime * 1000 - t;

		wait = left < wait ? left : wait;
	}
	return wait < 0 ? 0 : (int)wait;
}

/* Whether the agent has lived or idled long enough; says why in @why. */
static bool
timed_out(struct ms_agentd_server *srv, int64_t t0, char *why, size_t cap)
{
	const struct ms_agentd_server_cfg *cfg = srv->cfg;
	int64_t t = ms_agent_now_ms();
	bool out = false;

	if (cfg->lifetime > 0 && t - t0 >= (int64_t)cfg->lifetime * 1000) {
		snprintf(why, cap, "--lifetime %u s reached", cfg->lifetime);
		return true;
	}
	if (cfg->idle_timeout == 0) {
		return false;
	}
	pthread_mutex_lock(&srv->lock);
	out = srv->n_busy == 0 && t - srv->last_ms >= (int64_t)cfg->idle_timeout * 1000;
	pthread_mutex_unlock(&srv->lock);
	if (out) {
		snprintf(why, cap, "no request for %u s (--idle-timeout)", cfg->idle_timeout);
	}
	return out;
}

static void
accept_loop(struct ms_agentd_server *srv)
{
	const struct ms_agentd_server_cfg *cfg = srv->cfg;
	int64_t t0 = ms_agent_now_ms();
	char why[256];

	for (;;) {
		struct pollfd pfd[3] = {
			{ .fd = srv->wake[0], .events = POLLIN },
			{ .fd = cfg->wake_fd, .events = POLLIN },
			{ .fd = srv->sock->fd, .events = POLLIN },
		};
		nfds_t n = 2;
		bool evicted = false;
		char buf[64];

		/* No room (every connection being served): new clients wait in the backlog. */
		pthread_mutex_lock(&srv->lock);
		n = room_for_one(srv, false, &evicted) ? 3 : 2;
		pthread_mutex_unlock(&srv->lock);

		if (poll(pfd, n, poll_ms(srv, t0)) < 0 && errno != EINTR) {
			ms_agenti_stop(srv, "poll failed");
		}
		if ((pfd[0].revents & POLLIN) != 0) {
			while (read(srv->wake[0], buf, sizeof(buf)) > 0) {
			}
		}
		if ((pfd[1].revents & POLLIN) != 0) {
			while (read(cfg->wake_fd, buf, sizeof(buf)) > 0) {
			}
			if (cfg->on_wake != NULL && cfg->on_wake(cfg->ctx, why, sizeof(why))) {
				ms_agenti_stop(srv, why);
			}
		}
		if (check_hung(srv)) {
			ms_agenti_stop(srv, "the token hung");
		}
		if (timed_out(srv, t0, why, sizeof(why))) {
			ms_agenti_stop(srv, why);
		}
		reap(srv, false);
		pthread_mutex_lock(&srv->lock);
		if (srv->stopping) {
			pthread_mutex_unlock(&srv->lock);
			return;
		}
		pthread_mutex_unlock(&srv->lock);
		if (n == 3 && (pfd[2].revents & POLLIN) != 0) {
			accept_one(srv);
		}
	}
}

/*
 * Stopping: no new connection (the socket is removed), clients waiting for
 * their next request are let go, requests being served are finished.
 */
static void
wind_down(struct ms_agentd_server *srv)
{
	ms_agentd_sock_close(srv->sock);
	pthread_mutex_lock(&srv->lock);
	for (unsigned i = 0; i < srv->n_conns; i++) {
		if (!srv->conns[i]->is_busy && !srv->conns[i]->is_done) {
			/* A read waiting for the next request sees the end of the stream. */
			shutdown(srv->conns[i]->fd, SHUT_RD);
		}
	}
	pthread_mutex_unlock(&srv->lock);
}

ms_err
ms_agentd_server_run(const struct ms_agentd_server_cfg *cfg, struct ms_agentd_sock *sock,
		    struct ms_agentd_stats *stats, char *reason, size_t reason_cap)
{
	struct ms_agentd_server *srv = NULL;
	ms_err err = MS_E_INTERNAL;

	memset(stats, 0, sizeof(*stats));
	stats->stop_fd = -1;
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL) {
		return MS_E_NOMEM;
	}
	srv->cfg = cfg;
	srv->sock = sock;
	srv->uid = geteuid();
	srv->stop_fd = -1;
	srv->last_ms = ms_agent_now_ms();
	if (pipe2(srv->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		free(srv);
		return MS_E_IO;
	}
	pthread_mutex_init(&srv->lock, NULL);
	pthread_mutex_init(&srv->match_lock, NULL);

	accept_loop(srv);
	if (srv->hung > 0) {
		/*
		 * A thread is inside the token and never comes back: wake those
		 * waiting for a lane, finish what can be finished, and leave the
		 * rest to the caller's exit.
		 */
		ms_lanes_stop(cfg->lanes);
		wind_down(srv);
		err = MS_E_TOKEN;
	} else {
		/* Requests being served finish on the lanes they need. */
		wind_down(srv);
		reap(srv, true);
		ms_lanes_stop(cfg->lanes);
		err = MS_OK;
	}
	snprintf(reason, reason_cap, "%s", srv->reason);
	stats->signed_n = atomic_load(&srv->signed_n);
	stats->failed = atomic_load(&srv->failed);
	stats->refused = atomic_load(&srv->refused);
	stats->malformed = atomic_load(&srv->malformed);
	stats->hung = srv->hung;
	stats->is_token_lost = atomic_load(&srv->is_token_lost);
	stats->stop_fd = srv->stop_fd;
	if (err == MS_OK) {
		pthread_mutex_destroy(&srv->lock);
		pthread_mutex_destroy(&srv->match_lock);
		close(srv->wake[0]);
		close(srv->wake[1]);
		free(srv);
	}
	return err;
}
