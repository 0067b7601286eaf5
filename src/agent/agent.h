/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The signing agent (`modsign agent`): one key, loaded and logged in once,
 * served to the processes of one user over a Unix socket in a private
 * directory. This header has what the agent's server (src/agentd/) and its
 * client signer (src/signer/agent.c) share: the wire protocol
 * (src/agent/PROTOCOL.md: length-prefixed frames on a Unix stream socket,
 * encoded and parsed field by field in proto.c), key names, framed reads
 * and writes, peer credentials; and the client's side: connect and call.
 * Opens no token and knows no signer and no module files.
 */
#ifndef MS_AGENT_H
#define MS_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "../cms/cms.h"
#include "../common/ms_common.h"

#define MS_AGENT_PROTO_VERSION 1

/* A frame: 4-byte big-endian length of what follows, then that many bytes. */
#define MS_AGENT_LEN_BYTES 4
/* Ceilings (HACKING.md, Untrusted input). A certificate is at most 64 KiB. */
#define MS_AGENT_CERT_MAX (64u * 1024u)
#define MS_AGENT_PATH_MAX 4096u		/* the module path a client names */
#define MS_AGENT_NAME_MAX 4096u		/* the key name of a HELLO reply */
#define MS_AGENT_TEXT_MAX 1024u		/* a reply's message */
/* The longest frame body either side accepts: a MATCH with the largest certificate. */
#define MS_AGENT_BODY_MAX (MS_AGENT_CERT_MAX + 16u)

enum ms_agent_msg {
	MS_AGENT_HELLO = 1,	/* version; reply: key type, lanes, key name */
	MS_AGENT_MATCH = 2,	/* a certificate; reply: is the agent's key its key */
	MS_AGENT_SIGN = 3,	/* hash, digest, module path; reply: the raw signature */
	MS_AGENT_STOP = 4,	/* `modsign agent --stop`; reply, then the agent stops */
};

#define MS_AGENT_REPLY_BIT 0x80u	/* a reply's type is its request's with this bit */
#define MS_AGENT_REFUSAL 0xffu		/* the reply to a request that did not parse */

enum ms_agent_status {
	MS_AGENT_ST_OK = 0,
	MS_AGENT_ST_MISMATCH = 1,	/* MATCH: not the certificate's key */
	MS_AGENT_ST_FAILED = 2,		/* the key or token failed; text says how */
	MS_AGENT_ST_REFUSED = 3,	/* malformed, not allowed, or another uid */
	MS_AGENT_ST_STOPPING = 4,	/* the agent is shutting down: nothing more signed */
};

/* A parsed request; spans point into the frame body it was parsed from. */
struct ms_agent_req {
	enum ms_agent_msg type;
	unsigned version;		/* HELLO */
	struct ms_span cert;		/* MATCH: DER or PEM, 1..MS_AGENT_CERT_MAX bytes */
	enum ms_hash_alg hash;		/* SIGN */
	struct ms_span digest;		/* SIGN: exactly ms_cms_hash_size(hash) bytes */
	struct ms_span module;		/* SIGN: 0..MS_AGENT_PATH_MAX bytes, no NUL */
};

/* A parsed reply; spans point into the frame body it was parsed from. */
struct ms_agent_reply {
	enum ms_agent_msg type;		/* which request it answers (0 for a refusal) */
	enum ms_agent_status status;
	struct ms_span text;		/* printable, 0..MS_AGENT_TEXT_MAX bytes */
	/* HELLO, status OK */
	unsigned version;
	enum ms_key_type key_type;
	unsigned lanes;			/* 1..65535 */
	struct ms_span key_name;	/* printable, 1..MS_AGENT_NAME_MAX bytes */
	/* SIGN, status OK */
	struct ms_span sig;		/* 1..MS_SIG_MAX bytes */
};

/**
 * ms_agent_frame_len() - the body length announced by a frame's 4-byte
 * header @hdr. Parses untrusted input.
 * Return: MS_OK with *@len in 1..@max; MS_E_MALFORMED for 0 or over @max.
 */
ms_err ms_agent_frame_len(const uint8_t hdr[MS_AGENT_LEN_BYTES], size_t max,
			  size_t *len) MS_MUST_CHECK;

/**
 * ms_agent_req_parse() - parse one request frame body @p, @len (the bytes
 * after the length). Strict: the type's fields in order, each length
 * checked against its ceiling, nothing left over. A SIGN names a hash the
 * kernel verifies modules with and carries a digest of exactly its length.
 * Parses untrusted input. @out's spans point into @p.
 * Return: MS_OK; MS_E_MALFORMED (with @why a static reason), MS_E_UNSUPPORTED
 * (a HELLO of another protocol version). @out is unspecified on failure.
 */
ms_err ms_agent_req_parse(const uint8_t *p, size_t len, struct ms_agent_req *out,
			  const char **why) MS_MUST_CHECK;

/**
 * ms_agent_req_encode() - the whole frame (length header included) of @r,
 * with the same rules the parser applies. @out NULL asks for the size.
 * Return: MS_OK, MS_E_ARG (@r breaks a rule), MS_E_NOSPACE.
 */
ms_err ms_agent_req_encode(const struct ms_agent_req *r, uint8_t *out, size_t cap,
			   size_t *out_len) MS_MUST_CHECK;

/**
 * ms_agent_reply_parse() - parse one reply frame body. A reply to another
 * request than @expect (other than a refusal) is malformed. Parses
 * untrusted input: texts and the key name must be printable ASCII or UTF-8
 * bytes (no control characters), so that messages quoting them cannot
 * forge output.
 * Return: MS_OK, MS_E_MALFORMED (@why says why). @out is unspecified on failure.
 */
ms_err ms_agent_reply_parse(const uint8_t *p, size_t len, enum ms_agent_msg expect,
			    struct ms_agent_reply *out, const char **why) MS_MUST_CHECK;

/**
 * ms_agent_reply_encode() - the whole frame of @r, with the parser's rules.
 * A text with control characters has them replaced by '?'; a longer one is
 * cut at MS_AGENT_TEXT_MAX bytes (it is a message, not data).
 * Return: MS_OK, MS_E_ARG, MS_E_NOSPACE.
 */
ms_err ms_agent_reply_encode(const struct ms_agent_reply *r, uint8_t *out, size_t cap,
			     size_t *out_len) MS_MUST_CHECK;

/* The largest frame (header included) ms_agent_reply_encode() writes. */
#define MS_AGENT_REPLY_FRAME_MAX (MS_AGENT_LEN_BYTES + 16u + MS_AGENT_TEXT_MAX + \
				  MS_AGENT_NAME_MAX + MS_SIG_MAX)
/* The largest request frame, header included. */
#define MS_AGENT_REQ_FRAME_MAX (MS_AGENT_LEN_BYTES + MS_AGENT_BODY_MAX)

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
 * Never holds a PIN. A URI is named by ms_p11_uri_key_name() (src/pkcs11/).
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

/**
 * ms_agent_sock_addr() - the socket address of @path, for connect(2) and
 * bind(2).
 * Return: MS_OK; MS_E_ARG (@path empty or over MS_AGENT_SOCK_PATH_MAX bytes).
 */
ms_err ms_agent_sock_addr(const char *path, struct sockaddr_un *sa) MS_MUST_CHECK;

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

#endif
