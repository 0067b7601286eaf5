/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The signing agent (`modsign agent`): one key, loaded and logged in once,
 * served to the processes of one user over a Unix socket in a private
 * directory. This header has the parts the agent and its client signer
 * (src/signer/agent.c) share: key names, the socket, framed reads and
 * writes, peer credentials; and the server itself (server.c), which signs
 * through the same signer and lane pool as bulk mode and knows no module
 * files. The wire format is proto.h's (src/agent/PROTOCOL.md).
 */
#ifndef MS_AGENT_H
#define MS_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/ms_common.h"
#include "proto.h"

/* The environment variable a client finds the agent's socket in. */
#define MS_AGENT_ENV_SOCK "MODSIGN_AGENT_SOCK"
/* The agent's pid, printed by --daemon next to the socket. */
#define MS_AGENT_ENV_PID "MODSIGN_AGENT_PID"

/* The agent closes a connection after this long without a request... */
#define MS_AGENT_IDLE_MS 60000
/* ...so a client opens a new one after half as long: it never asks on a closing one. */
#define MS_AGENT_CLIENT_IDLE_MS 30000

/*
 * A client gives up connecting after this long: an agent whose backlog
 * stays full is stuck, or is no agent.
 */
#define MS_AGENT_CONNECT_MS 5000

/* sun_path of struct sockaddr_un, less its terminating NUL. */
#define MS_AGENT_SOCK_PATH_MAX 107

/**
 * ms_agent_key_name() - the normalised name of a key argument, which the
 * agent announces and a client compares with its own: a pkcs11: URI (scheme
 * in any case) parsed by p11-kit and formatted again without pin-value,
 * pin-source, module-name, module-path and type (modsign always looks for
 * the private key), so that attribute order, percent-encoding and PIN
 * source do not matter; a file as "file:" and its absolute path (symlinks
 * resolved when the file exists here), percent-encoded to printable ASCII.
 * Never holds a PIN.
 * Return: MS_OK; MS_E_ARG (a URI p11-kit does not parse), MS_E_NOSPACE,
 * MS_E_IO (no working directory for a relative path), MS_E_NOMEM.
 */
ms_err ms_agent_key_name(const char *key, char *out, size_t cap) MS_MUST_CHECK;

/* ms_agent_now_ms() - CLOCK_MONOTONIC in milliseconds, for the deadlines of both sides. */
int64_t ms_agent_now_ms(void);

/* How a framed read or write ended, beyond its ms_err. */
enum ms_agent_io_end {
	MS_AGENT_IO_DONE = 0,
	MS_AGENT_IO_EOF,	/* the peer closed before a frame began: a clean end */
	MS_AGENT_IO_CUT,	/* the peer closed in the middle of a frame */
	MS_AGENT_IO_TIMEOUT,	/* no frame, or not all of it, in time */
	MS_AGENT_IO_TOOBIG,	/* the announced length is 0 or over the ceiling */
	MS_AGENT_IO_ERRNO,	/* a system call failed: sys_errno says which */
};

struct ms_agent_io {
	enum ms_agent_io_end end;
	int sys_errno;
};

/* ms_agent_io_text() - a few words for @io, for messages ("closed the connection"). */
const char *ms_agent_io_text(const struct ms_agent_io *io);

/**
 * ms_agent_frame_read() - read one frame from @fd into @buf: its body, of
 * at most @cap bytes, length in *@len. Waits up to @idle_ms (-1: for ever)
 * for the frame to begin and then up to @frame_ms for the rest of it, so
 * that a client that stalls mid-request is given up on.
 * Return: MS_OK; MS_E_IO (EOF, cut, timeout, errno: see @io), MS_E_MALFORMED
 * (length 0 or over @cap: @io->end is MS_AGENT_IO_TOOBIG).
 */
ms_err ms_agent_frame_read(int fd, uint8_t *buf, size_t cap, size_t *len, int idle_ms,
			   int frame_ms, struct ms_agent_io *io) MS_MUST_CHECK;

/**
 * ms_agent_frame_write() - write all of @p, @len (a whole frame) within
 * @ms milliseconds (-1: for ever); never raises SIGPIPE.
 * Return: MS_OK; MS_E_IO (see @io).
 */
ms_err ms_agent_frame_write(int fd, const uint8_t *p, size_t len, int ms,
			    struct ms_agent_io *io) MS_MUST_CHECK;

/*
 * The listening socket and the private directory it lives in. All zero
 * but @fd (-1) is a closed one: ms_agent_sock_close() then does nothing.
 */
struct ms_agent_sock {
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
struct ms_agent_sock_dirs {
	const char *runtime_dir;	/* $XDG_RUNTIME_DIR */
	const char *tmp_dir;		/* $TMPDIR */
};

/**
 * ms_agent_sock_listen() - make a new directory, mode 0700, under
 * @dirs->runtime_dir when that is a directory of ours closed to others, else
 * under @dirs->tmp_dir (resolved) or /tmp (the first whose path fits a socket
 * address), and listen on the socket "sock" in it, mode 0600. $TMPDIR and
 * /tmp are used only when they and every directory above them are ours or
 * root's and, when others may write to them, sticky: else no other
 * directory is tried. A base path with a control character is refused.
 * Messages name the directories by their variables. @s is ready for
 * ms_agent_sock_close() whatever happens.
 * Return: MS_OK; MS_E_IO (@why names the call and its error, or why the
 * directory is unsafe and what to set), MS_E_ARG (a control character),
 * MS_E_NOSPACE (no candidate path fits).
 */
ms_err ms_agent_sock_listen(struct ms_agent_sock *s, const struct ms_agent_sock_dirs *dirs,
			    char *why, size_t why_cap) MS_MUST_CHECK;

/*
 * ms_agent_sock_close() - close the socket, remove it and its directory
 * through the descriptors kept since they were made, each only while it is
 * still the same device and inode (a directory renamed away and replaced,
 * by a link or anything else, is left alone). Safe twice.
 */
void ms_agent_sock_close(struct ms_agent_sock *s);

/**
 * ms_agent_sock_connect() - connect to the agent socket @path within @ms
 * milliseconds (-1: for ever), trying again while the listener's backlog is
 * full. *@fd is non-blocking (every framed read and write polls). Who
 * listens is not checked here: see ms_agent_peer_get().
 * Return: MS_OK with *@fd; MS_E_IO with *@sys_errno (ENOENT, ECONNREFUSED,
 * EACCES, ..., ETIMEDOUT: the backlog stayed full until @ms passed);
 * MS_E_ARG (@path empty or too long for a socket address).
 */
ms_err ms_agent_sock_connect(const char *path, int ms, int *fd, int *sys_errno) MS_MUST_CHECK;

/* A request sent and its reply read, on the client's side of a connection. */
struct ms_agent_call {
	uint8_t body[MS_AGENT_REPLY_FRAME_MAX];	/* the reply's bytes: @reply points here */
	struct ms_agent_reply reply;
	struct ms_agent_io io;				/* how the I/O ended on failure */
	const char *why;				/* what was wrong with the reply */
};

/**
 * ms_agent_call() - send @req on @fd and read its reply into @call, waiting
 * up to @timeout_ms (-1: for ever) for it to begin. When the agent has
 * closed the connection before all of @req could be written, a refusal it
 * sent first (status REFUSED or STOPPING) is still read and returned.
 * Return: MS_OK (the reply parsed; its status may still be a failure);
 * MS_E_IO (the agent closed the connection, timed out, or a system call
 * failed: @call->io says which); MS_E_MALFORMED (a reply that does not
 * parse: @call->why); MS_E_ARG (@req breaks a rule).
 */
ms_err ms_agent_call(int fd, const struct ms_agent_req *req, int timeout_ms,
		     struct ms_agent_call *call) MS_MUST_CHECK;

/* Who is at the other end of a connection, from SO_PEERCRED. */
struct ms_agent_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char exe[4096];		/* /proc/<pid>/exe, or "" when unreadable */
};

/**
 * ms_agent_peer_get() - the peer credentials of the connected socket @fd
 * (as the kernel recorded them at connect) and the peer's executable.
 * Return: MS_OK, MS_E_IO.
 */
ms_err ms_agent_peer_get(int fd, struct ms_agent_peer *peer) MS_MUST_CHECK;

/* The audit trail: JSON lines, one per signature, refusal, start and stop. */
struct ms_agent_audit;

/**
 * ms_agent_audit_open() - append to @path (created 0600), or log nowhere
 * when @path is NULL. @path must be a regular file: a symbolic link, a
 * FIFO (never waited for), a device or a socket is refused. *@out is owned
 * by the caller; NULL on failure.
 * Return: MS_OK; MS_E_IO (@why names the file and the error); MS_E_NOMEM.
 */
ms_err ms_agent_audit_open(const char *path, struct ms_agent_audit **out, char *why,
			   size_t why_cap) MS_MUST_CHECK;

/* ms_agent_audit_errno() - the errno of the last line not written (0: none; @a may be NULL). */
int ms_agent_audit_errno(struct ms_agent_audit *a);
void ms_agent_audit_free(struct ms_agent_audit *a);

/* One signature request, as the audit trail records it. */
struct ms_agent_audit_sign {
	const struct ms_agent_peer *peer;
	struct ms_span module;		/* the path the client named */
	enum ms_hash_alg hash;
	struct ms_span digest;
	const char *key;		/* the agent's key name */
	const char *token;		/* NULL, or the token that signed (agent --key) */
	const char *error;		/* NULL: signed; else what failed (with its CKR_ name) */
};

/**
 * ms_agent_audit_sign() - one line for one signature request: time, peer pid,
 * uid and executable, module, hash, digest, key, the token that signed (when
 * the agent has several) and outcome. One write(2)
 * to an O_APPEND file under a lock, so lines of several threads (and
 * agents) never mix; a line written short is cut off again (ftruncate to
 * the size before it), so the file holds whole lines only.
 * Return: MS_OK (also when logging nowhere); MS_E_IO when the line could not
 * be written (ms_agent_audit_errno() says why): the agent then does not
 * hand out the signature.
 */
ms_err ms_agent_audit_sign(struct ms_agent_audit *a,
			   const struct ms_agent_audit_sign *rec) MS_MUST_CHECK;

/**
 * ms_agent_audit_event() - one line for anything else: @event ("start",
 * "stop", "refused", "malformed"), the peer when there is one (else NULL),
 * and @detail (free text: a reason, a socket path, a count).
 * Return: MS_OK, MS_E_IO.
 */
ms_err ms_agent_audit_event(struct ms_agent_audit *a, const char *event,
			    const struct ms_agent_peer *peer, const char *key,
			    const char *detail) MS_MUST_CHECK;

struct ms_signer;
struct ms_lanes;

/* What kind of line the server hands the caller to print. */
enum ms_agent_say {
	MS_AGENT_SAY_INFO = 0,
	MS_AGENT_SAY_WARN,
	MS_AGENT_SAY_ERROR,
};

struct ms_agent_server_cfg {
	struct ms_signer *signer;	/* borrowed: the key, for its type, lanes and checks */
	struct ms_lanes *lanes;		/* borrowed: the pool every signature goes through */
	struct ms_agent_audit *audit;	/* borrowed */
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
	void (*say)(void *ctx, enum ms_agent_say kind, const char *line);
	void *ctx;
};

/* What a run of the server did. */
struct ms_agent_stats {
	size_t signed_n;
	size_t failed;		/* signatures the key or token refused, or not logged */
	size_t refused;		/* connections of another uid */
	size_t malformed;	/* connections ended for a request that did not parse */
	size_t hung;		/* lanes whose signature never came back */
	int stop_fd;		/* the --stop client's connection, or -1: close it last */
};

/**
 * ms_agent_server_run() - serve @sock (listening) until a STOP request,
 * cfg->on_wake, --idle-timeout, --lifetime or a hung token says stop. Then
 * the socket and its directory are removed, connections waiting for their
 * next request are closed, and requests being served are finished. The
 * caller then frees the pool and the signer (C_Finalize) and closes
 * @stats->stop_fd, in that order, so that `--stop` returns when all is done.
 * @reason gets why it stopped.
 * Return: MS_OK; MS_E_TOKEN when a signature never came back (a thread is
 * still inside the token: the caller must not finalize, only wipe, report
 * and _exit); MS_E_NOMEM, MS_E_IO (nothing served).
 */
ms_err ms_agent_server_run(const struct ms_agent_server_cfg *cfg, struct ms_agent_sock *sock,
			   struct ms_agent_stats *stats, char *reason,
			   size_t reason_cap) MS_MUST_CHECK;

#endif
