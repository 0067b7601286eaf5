// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's socket, both sides' part of it: reads and writes of whole
 * frames with deadlines, so that a client that stalls costs only its own
 * connection; the peer's credentials; and the client's connect and call.
 * The listening socket and its directory are the server's (src/agentd/).
 */
#define _GNU_SOURCE	/* struct ucred, SO_PEERCRED */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"

/* A frame once begun, in either direction, arrives whole within this. */
#define FRAME_WRITE_MS 10000
/* How often a connect to a full backlog is tried again. */
#define CONNECT_RETRY_MS 20
/* How long a refusal the agent sent before closing may take to be read. */
#define REFUSAL_READ_MS 1000

int64_t
ms_agent_now_ms(void)
{
	return (int64_t)(ms_clock_ns() / 1000000u);
}

/* Milliseconds left until @deadline (-1: none) for poll(2). */
static int
left_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0) {
		return -1;
	}
	left = deadline - ms_agent_now_ms();
	return left <= 0 ? 0 : left > 1000000000 ? 1000000000 : (int)left;
}

static int64_t
deadline_of(int ms)
{
	return ms < 0 ? -1 : ms_agent_now_ms() + ms;
}

const char *
ms_agent_io_text(const struct ms_agent_io *io)
{
	switch (io->end) {
	case MS_AGENT_IO_DONE:
		return "done";
	case MS_AGENT_IO_EOF:
	case MS_AGENT_IO_CUT:
		return "closed the connection";
	case MS_AGENT_IO_TIMEOUT:
		return "timed out";
	case MS_AGENT_IO_TOOBIG:
		return "sent a frame of length 0 or over the limit";
	case MS_AGENT_IO_ERRNO:
		return strerror(io->sys_errno);
	}
	return "failed";
}

static ms_err
io_fail(struct ms_agent_io *io, enum ms_agent_io_end end, int e)
{
	io->end = end;
	io->sys_errno = e;
	return MS_E_IO;
}

/* Waits until @fd is ready for @events (or has hung up) or @deadline passes. */
static ms_err
wait_ready(int fd, short events, int64_t deadline, struct ms_agent_io *io)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		int r = poll(&pfd, 1, left_ms(deadline));

		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			return io_fail(io, MS_AGENT_IO_ERRNO, errno);
		}
		if (r == 0) {
			return io_fail(io, MS_AGENT_IO_TIMEOUT, ETIMEDOUT);
		}
		return MS_OK;
	}
}

/*
 * Reads exactly @n bytes by @deadline. @started says whether a byte of this
 * frame came before: an end of file then cuts a frame, else it ends the
 * connection cleanly.
 */
static ms_err
read_exact(int fd, uint8_t *buf, size_t n, int64_t deadline, bool started,
	   struct ms_agent_io *io)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k;

		if (wait_ready(fd, POLLIN, deadline, io) != MS_OK) {
			return MS_E_IO;
		}
		k = recv(fd, buf + got, n - got, MSG_DONTWAIT);
		if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
			continue;
		}
		/*
		 * A peer that dies with bytes of ours unread resets the
		 * connection: an end like any other.
		 */
		if (k < 0 && errno == ECONNRESET) {
			return io_fail(io, started || got > 0 ? MS_AGENT_IO_CUT : MS_AGENT_IO_EOF,
				       ECONNRESET);
		}
		if (k < 0) {
			return io_fail(io, MS_AGENT_IO_ERRNO, errno);
		}
		if (k == 0) {
			return io_fail(io, started || got > 0 ? MS_AGENT_IO_CUT : MS_AGENT_IO_EOF, 0);
		}
		got += (size_t)k;
	}
	return MS_OK;
}

ms_err
ms_agent_frame_read(int fd, uint8_t *buf, size_t cap, size_t *len, int idle_ms, int frame_ms,
		    struct ms_agent_io *io)
{
	uint8_t hdr[MS_AGENT_LEN_BYTES];
	int64_t deadline;
	ms_err err;

	io->end = MS_AGENT_IO_DONE;
	io->sys_errno = 0;
	/* The first byte may be long in coming (a client between modules)... */
	err = read_exact(fd, hdr, 1, deadline_of(idle_ms), false, io);
	if (err != MS_OK) {
		return err;
	}
	/* ...but once a frame has begun, all of it comes in good time. */
	deadline = deadline_of(frame_ms);
	err = read_exact(fd, hdr + 1, sizeof(hdr) - 1, deadline, true, io);
	if (err != MS_OK) {
		return err;
	}
	if (ms_agent_frame_len(hdr, cap, len) != MS_OK) {
		io->end = MS_AGENT_IO_TOOBIG;
		return MS_E_MALFORMED;
	}
	return read_exact(fd, buf, *len, deadline, true, io);
}

ms_err
ms_agent_frame_write(int fd, const uint8_t *p, size_t len, int ms, struct ms_agent_io *io)
{
	int64_t deadline = deadline_of(ms);
	size_t done = 0;

	io->end = MS_AGENT_IO_DONE;
	io->sys_errno = 0;
	while (done < len) {
		ssize_t k;

		if (wait_ready(fd, POLLOUT, deadline, io) != MS_OK) {
			return MS_E_IO;
		}
		/* MSG_NOSIGNAL: a peer that died is an EPIPE here, not a SIGPIPE. */
		k = send(fd, p + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
			continue;
		}
		if (k < 0) {
			return io_fail(io, errno == EPIPE || errno == ECONNRESET ? MS_AGENT_IO_CUT :
				       MS_AGENT_IO_ERRNO, errno);
		}
		done += (size_t)k;
	}
	return MS_OK;
}

ms_err
ms_agent_sock_addr(const char *path, struct sockaddr_un *sa)
{
	size_t len = strlen(path);

	if (len == 0 || len > MS_AGENT_SOCK_PATH_MAX) {
		return MS_E_ARG;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, len + 1);
	return MS_OK;
}

/*
 * Non-blocking, so that a listener whose backlog is full (an agent that
 * stopped accepting, or a socket squatted on by a process that never
 * accepts) cannot hold the client in connect(2) for ever: Linux answers a
 * non-blocking connect to a full Unix socket backlog with EAGAIN (net/unix/
 * af_unix.c, unix_stream_connect), and there is nothing to poll for, so
 * the connect is tried again every CONNECT_RETRY_MS until the deadline.
 */
ms_err
ms_agent_sock_connect(const char *path, int ms, int *fd, int *sys_errno)
{
	struct sockaddr_un sa;
	struct ms_agent_io io;
	int64_t deadline = deadline_of(ms);
	socklen_t elen = sizeof(int);
	int s = -1, e = 0;
	ms_err err = MS_E_INTERNAL;

	*fd = -1;
	*sys_errno = 0;
	if (ms_agent_sock_addr(path, &sa) != MS_OK) {
		return MS_E_ARG;
	}
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0) {
		*sys_errno = errno;
		return MS_E_IO;
	}
	err = MS_E_IO;
	for (;;) {
		int left;

		if (connect(s, (const struct sockaddr *)&sa, sizeof(sa)) == 0) {
			break;
		}
		e = errno;
		if (e == EINTR) {
			continue;
		}
		if (e == EINPROGRESS) {
			/* Not what AF_UNIX does today, but the portable answer. */
			if (wait_ready(s, POLLOUT, deadline, &io) != MS_OK) {
				e = io.sys_errno;
				goto out;
			}
			if (getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &elen) != 0) {
				e = errno;
			}
			if (e != 0) {
				goto out;
			}
			break;
		}
		if (e != EAGAIN) {
			goto out;
		}
		left = left_ms(deadline);
		if (left == 0) {
			e = ETIMEDOUT;
			goto out;
		}
		poll(NULL, 0, left < 0 || left > CONNECT_RETRY_MS ? CONNECT_RETRY_MS : left);
	}
	*fd = s;
	s = -1;
	e = 0;
	err = MS_OK;
out:
	if (s >= 0) {
		close(s);
	}
	*sys_errno = e;
	return err;
}

ms_err
ms_agent_peer_get(int fd, struct ms_agent_peer *peer)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char link[64];
	ssize_t n;

	memset(peer, 0, sizeof(*peer));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred)) {
		return MS_E_IO;
	}
	peer->pid = cred.pid;
	peer->uid = cred.uid;
	peer->gid = cred.gid;
	/* For the audit trail only: the pid may be gone or reused by now. */
	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)cred.pid);
	n = readlink(link, peer->exe, sizeof(peer->exe) - 1);
	peer->exe[n > 0 ? n : 0] = '\0';
	return MS_OK;
}

/*
 * The request could not be written because the agent has closed the
 * connection (EPIPE, ECONNRESET). An agent that refuses a client sends its
 * refusal and drains the connection before closing it, but may close before
 * all of the request arrived: its refusal then waits, already received, on
 * our side of the socket. That is the answer; only without one is the
 * connection simply lost (the write's own @call->io).
 */
static ms_err
refusal_read(int fd, const struct ms_agent_req *req, struct ms_agent_call *call)
{
	struct ms_agent_io cut = call->io;
	struct ms_agent_io io;
	const char *why = NULL;
	size_t len = 0;

	if (ms_agent_frame_read(fd, call->body, sizeof(call->body), &len, REFUSAL_READ_MS,
				FRAME_WRITE_MS, &io) != MS_OK ||
	    ms_agent_reply_parse(call->body, len, req->type, &call->reply, &why) != MS_OK ||
	    (call->reply.status != MS_AGENT_ST_REFUSED &&
	     call->reply.status != MS_AGENT_ST_STOPPING)) {
		memset(&call->reply, 0, sizeof(call->reply));
		call->io = cut;
		return MS_E_IO;
	}
	return MS_OK;
}

ms_err
ms_agent_call(int fd, const struct ms_agent_req *req, int timeout_ms, struct ms_agent_call *call)
{
	uint8_t frame[MS_AGENT_REQ_FRAME_MAX];
	size_t len = 0;
	ms_err err;

	call->why = NULL;
	call->io.end = MS_AGENT_IO_DONE;
	call->io.sys_errno = 0;
	err = ms_agent_req_encode(req, frame, sizeof(frame), &len);
	if (err != MS_OK) {
		return MS_E_ARG;
	}
	err = ms_agent_frame_write(fd, frame, len, FRAME_WRITE_MS, &call->io);
	if (err != MS_OK && call->io.end == MS_AGENT_IO_CUT) {
		return refusal_read(fd, req, call);
	}
	if (err != MS_OK) {
		return err;
	}
	err = ms_agent_frame_read(fd, call->body, sizeof(call->body), &len, timeout_ms,
				  FRAME_WRITE_MS, &call->io);
	if (err == MS_E_MALFORMED) {
		call->why = "a reply of length 0 or over the limit";
		return err;
	}
	if (err != MS_OK) {
		return err;
	}
	return ms_agent_reply_parse(call->body, len, req->type, &call->reply, &call->why);
}
