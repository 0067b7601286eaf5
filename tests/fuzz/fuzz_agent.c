// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: what reaches the agent from a client, and a client from the
 * agent (src/agent/proto.c, sock.c). Input: a mode byte, then the bytes.
 * Mode 0: one request body (ms_agent_req_parse); 1-4: one reply body to
 * that request type (ms_agent_reply_parse); 5 and up: a byte stream on a
 * socket, read frame by frame as the agent reads a connection
 * (ms_agent_frame_read), each frame parsed as a request. Oracle: what the
 * parser accepts is exactly what the encoder writes for what it parsed (no
 * second spelling of a request gets through), and a refusal gives a reason.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/agent.h"
#include "fuzz.h"

static void
check_request(const uint8_t *p, size_t len)
{
	struct ms_agent_req r;
	const char *why = NULL;
	uint8_t *frame = NULL;
	size_t n = 0;
	ms_err err = ms_agent_req_parse(p, len, &r, &why);

	if (err != MS_OK) {
		if (why == NULL) {
			fuzz_die("request refused without a reason");
		}
		if (err != MS_E_MALFORMED && err != MS_E_UNSUPPORTED) {
			fuzz_die("ms_agent_req_parse: unexpected error");
		}
		return;
	}
	if (r.type == MS_AGENT_SIGN && r.digest.len != ms_cms_hash_size(r.hash)) {
		fuzz_die("SIGN accepted with a digest not of its hash's length");
	}
	frame = malloc(MS_AGENT_REQ_FRAME_MAX);
	if (frame == NULL) {
		fuzz_die("malloc");
	}
	if (ms_agent_req_encode(&r, frame, MS_AGENT_REQ_FRAME_MAX, &n) != MS_OK) {
		fuzz_die("an accepted request does not encode");
	}
	if (n != len + MS_AGENT_LEN_BYTES || memcmp(frame + MS_AGENT_LEN_BYTES, p, len) != 0) {
		fuzz_die("an accepted request encodes to other bytes");
	}
	free(frame);
}

static void
check_reply(const uint8_t *p, size_t len, enum ms_agent_msg expect)
{
	struct ms_agent_reply r;
	const char *why = NULL;
	uint8_t *frame = NULL;
	size_t n = 0;

	if (ms_agent_reply_parse(p, len, expect, &r, &why) != MS_OK) {
		if (why == NULL) {
			fuzz_die("reply refused without a reason");
		}
		return;
	}
	frame = malloc(MS_AGENT_REPLY_FRAME_MAX);
	if (frame == NULL) {
		fuzz_die("malloc");
	}
	if (ms_agent_reply_encode(&r, frame, MS_AGENT_REPLY_FRAME_MAX, &n) != MS_OK) {
		fuzz_die("an accepted reply does not encode");
	}
	if (n != len + MS_AGENT_LEN_BYTES || memcmp(frame + MS_AGENT_LEN_BYTES, p, len) != 0) {
		fuzz_die("an accepted reply encodes to other bytes");
	}
	free(frame);
}

/* The stream as a client would send it; frames read as the agent reads them. */
static void
check_stream(const uint8_t *p, size_t len)
{
	uint8_t *body = malloc(MS_AGENT_BODY_MAX);
	struct ms_agent_io io;
	size_t n = 0;
	int sv[2];

	if (body == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
		fuzz_die("socketpair");
	}
	/* What the socket buffer takes; a longer input is cut there, the same way each run. */
	if (len > 0 && send(sv[1], p, len, MSG_DONTWAIT) < 0 && errno != EAGAIN) {
		fuzz_die("send");
	}
	close(sv[1]);
	while (ms_agent_frame_read(sv[0], body, MS_AGENT_BODY_MAX, &n, 0, 0, &io) == MS_OK) {
		if (n == 0 || n > MS_AGENT_BODY_MAX) {
			fuzz_die("frame length outside 1..max");
		}
		check_request(body, n);
	}
	if (io.end == MS_AGENT_IO_DONE) {
		fuzz_die("a failed read without a reason");
	}
	close(sv[0]);
	free(body);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 256 * 1024) {
		return 0;
	}
	if (data[0] == 0) {
		check_request(data + 1, size - 1);
	} else if (data[0] <= MS_AGENT_STOP) {
		check_reply(data + 1, size - 1, (enum ms_agent_msg)data[0]);
	} else {
		check_stream(data + 1, size - 1);
	}
	return 0;
}
