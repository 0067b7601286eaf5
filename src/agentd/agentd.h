/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's server (`modsign agent`): the listening socket in its private
 * directory (listen.c), the audit trail (audit.c) and the server itself
 * (server.c, conn.c), which checks each peer and signs through the same
 * signer and lane pool as bulk mode. Above src/signer/, below the CLI; the
 * wire format and the frames are src/agent/'s. Knows no module files.
 */
#ifndef MS_AGENTD_H
#define MS_AGENTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../agent/agent.h"
#include "../common/ms_common.h"

/*
 * The listening socket and the private directory it lives in. All zero
 * but @fd (-1) is a closed one: ms_agentd_sock_close() then does nothing.
 */
struct ms_agentd_sock {
	int fd;			/* -1 when closed */
	char dir[MS_AGENT_SOCK_PATH_MAX + 1];
	char path[MS_AGENT_SOCK_PATH_MAX + 1];
	/* What the agent made, removed through these and never by path. */
	bool has_base;		/* @base_fd is open: the directory @dir was made in */
	bool has_dir;		/* @dir_fd is open; @dir_dev, @dir_ino are @dir's */
	bool has_sock;		/* @sock_dev, @sock_ino are the socket bound in @dir */
	int base_fd;
	int dir_fd;
	char name[32];		/* @dir's name in @base_fd */
	dev_t dir_dev, sock_dev;
	ino_t dir_ino, sock_ino;
};

/*
 * Where the socket's directory may be made: the caller's $XDG_RUNTIME_DIR
 * and $TMPDIR (the CLI reads them; library code reads no environment).
 * Each is NULL when unset; one that is not an absolute path is not used.
 */
struct ms_agentd_sock_dirs {
	const char *runtime_dir;	/* $XDG_RUNTIME_DIR */
	const char *tmp_dir;		/* $TMPDIR */
};

/**
 * ms_agentd_sock_listen() - make a new directory, mode 0700, under
 * @dirs->runtime_dir when that is a directory of ours closed to others, else
 * under @dirs->tmp_dir (resolved) or /tmp (the first whose path fits a socket
 * address), and listen on the socket "sock" in it, mode 0600. $TMPDIR and
 * /tmp are used only when they and every directory above them are ours or
 * root's and, when others may write to them, sticky: else no other
 * directory is tried. A base path with a control character is refused.
 * Messages name the directories by their variables. @s is ready for
 * ms_agentd_sock_close() whatever happens.
 * Return: MS_OK; MS_E_IO (@why names the call and its error, or why the
 * directory is unsafe and what to set), MS_E_ARG (a control character),
 * MS_E_NOSPACE (no candidate path fits).
 */
ms_err ms_agentd_sock_listen(struct ms_agentd_sock *s, const struct ms_agentd_sock_dirs *dirs,
			    char *why, size_t why_cap) MS_MUST_CHECK;

/*
 * ms_agentd_sock_close() - close the socket, remove it and its directory
 * through the descriptors kept since they were made, each only while it is
 * still the same device and inode (a directory renamed away and replaced,
 * by a link or anything else, is left alone). Safe twice.
 */
void ms_agentd_sock_close(struct ms_agentd_sock *s);

/* The audit trail: JSON lines, one per signature, refusal, start and stop. */
struct ms_agentd_audit;

/**
 * ms_agentd_audit_open() - append to @path (created 0600), or log nowhere
 * when @path is NULL. @path must be a regular file: a symbolic link, a
 * FIFO (never waited for), a device or a socket is refused. *@out is owned
 * by the caller; NULL on failure.
 * Return: MS_OK; MS_E_IO (@why names the file and the error); MS_E_NOMEM.
 */
ms_err ms_agentd_audit_open(const char *path, struct ms_agentd_audit **out, char *why,
			   size_t why_cap) MS_MUST_CHECK;

/* ms_agentd_audit_errno() - the errno of the last line not written (0: none; @a may be NULL). */
int ms_agentd_audit_errno(struct ms_agentd_audit *a);
void ms_agentd_audit_free(struct ms_agentd_audit *a);

/* One signature request, as the audit trail records it. */
struct ms_agentd_audit_sign {
	const struct ms_agent_peer *peer;
	struct ms_span module;		/* the path the client named */
	enum ms_hash_alg hash;
	struct ms_span digest;
	const char *key;		/* the agent's key name */
	const char *token;		/* NULL, or the token that signed (agent --key) */
	const char *error;		/* NULL: signed; else what failed (with its CKR_ name) */
};

/**
 * ms_agentd_audit_sign() - one line for one signature request: time, peer pid,
 * uid and executable, module, hash, digest, key, the token that signed (when
 * the agent has several) and outcome. One write(2)
 * to an O_APPEND file under a lock, so lines of several threads (and
 * agents) never mix; a line written short is cut off again (ftruncate to
 * the size before it), so the file holds whole lines only.
 * Return: MS_OK (also when logging nowhere); MS_E_IO when the line could not
 * be written (ms_agentd_audit_errno() says why): the agent then does not
 * hand out the signature.
 */
ms_err ms_agentd_audit_sign(struct ms_agentd_audit *a,
			   const struct ms_agentd_audit_sign *rec) MS_MUST_CHECK;

/**
 * ms_agentd_audit_event() - one line for anything else: @event ("start",
 * "stop", "refused", "malformed"), the peer when there is one (else NULL),
 * and @detail (free text: a reason, a socket path, a count).
 * Return: MS_OK, MS_E_IO.
 */
ms_err ms_agentd_audit_event(struct ms_agentd_audit *a, const char *event,
			    const struct ms_agent_peer *peer, const char *key,
			    const char *detail) MS_MUST_CHECK;

struct ms_signer;
struct ms_lanes;

/* What kind of line the server hands the caller to print. */
enum ms_agentd_say {
	MS_AGENTD_SAY_INFO = 0,
	MS_AGENTD_SAY_WARN,
	MS_AGENTD_SAY_ERROR,
};

struct ms_agentd_server_cfg {
	struct ms_signer *signer;	/* borrowed: the key, for its type, lanes and checks */
	struct ms_lanes *lanes;		/* borrowed: the pool every signature goes through */
	struct ms_agentd_audit *audit;	/* borrowed */
	const char *key_name;		/* ms_agent_key_name() of the key: HELLO, audit */
	/* agent --key: a name per signer of @lanes (audit "token"); NULL: one signer */
	const char *const *signer_names;
	unsigned idle_timeout;		/* stop after this many seconds without a request; 0 never */
	unsigned lifetime;		/* stop this many seconds after starting; 0 never */
	unsigned token_timeout;		/* the pool's, for the message when a signature hangs */
	int wake_fd;			/* non-blocking; readable: call on_wake (signals, a child) */
	/* Returns true (with a reason) when the agent should stop. */
	bool (*on_wake)(void *ctx, char *why, size_t why_cap);
	/* One line for a person: refusals, malformed requests, token failures. */
	void (*say)(void *ctx, enum ms_agentd_say kind, const char *line);
	void *ctx;
};

/* Room for why the server stopped (ms_agentd_server_run()'s @reason). */
#define MS_AGENTD_REASON_MAX 2048

/* What a run of the server did. */
struct ms_agentd_stats {
	size_t signed_n;
	size_t failed;		/* signatures the key or token refused, or not logged */
	size_t refused;		/* connections of another uid */
	size_t malformed;	/* connections ended for a request that did not parse */
	size_t hung;		/* lanes whose signature never came back */
	bool is_token_lost;	/* stopped because the (last) token is gone for good */
	int stop_fd;		/* the --stop client's connection, or -1: close it last */
};

/**
 * ms_agentd_server_run() - serve @sock (listening) until a STOP request,
 * cfg->on_wake, --idle-timeout, --lifetime, a hung token or a lost one (a
 * signature failed with the session or token gone, and the pool could not
 * bring it back: ms_lanes_result.is_lost) says stop. A lost token stops
 * the pool at once, so that requests waiting for a lane are told the agent
 * is stopping instead of each failing on the token. Then
 * the socket and its directory are removed, connections waiting for their
 * next request are closed, and requests being served are finished. The
 * caller then frees the pool and the signer (C_Finalize) and closes
 * @stats->stop_fd, in that order, so that `--stop` returns when all is done.
 * @reason gets why it stopped.
 * Return: MS_OK; MS_E_TOKEN when a signature never came back (a thread is
 * still inside the token: the caller must not finalize, only wipe, report
 * and _exit); MS_E_NOMEM, MS_E_IO (nothing served).
 */
ms_err ms_agentd_server_run(const struct ms_agentd_server_cfg *cfg, struct ms_agentd_sock *sock,
			   struct ms_agentd_stats *stats, char *reason,
			   size_t reason_cap) MS_MUST_CHECK;

#endif
