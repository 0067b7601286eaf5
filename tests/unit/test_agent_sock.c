// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/agent: key names, framed reads and writes with
 * deadlines, the client's connect and call.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../src/agent/agent.h"
#include "../../src/pkcs11/p11.h"
#include "test.h"

static void
name_of(const char *key, char *out, size_t cap)
{
	if (ms_agent_key_name(key, out, cap) != MS_OK) {
		fprintf(stderr, "no key name for %s\n", key);
		exit(1);
	}
}

/* A pkcs11: URI is named as src/pkcs11 normalises it (test_p11_uri.c). */
MS_TEST(agent_key_name_uri)
{
	const char *uri = "PKCS11:object=mod%73ign;token=build?pin-value=1234";
	char a[4096], b[4096];

	name_of(uri, a, sizeof(a));
	CHECK_ERR(ms_p11_uri_key_name(uri, b, sizeof(b)), MS_OK);
	CHECK_STR_EQ(a, b);
	CHECK_ERR(ms_agent_key_name("pkcs11:object=%zz", a, sizeof(a)), MS_E_ARG);
	CHECK_ERR(ms_agent_key_name("", a, sizeof(a)), MS_E_ARG);
}

MS_TEST(agent_key_name_file)
{
	char dir[] = "/tmp/modsign-unit.XXXXXX";
	char path[256], link[256], rel[256], a[4096], b[4096], cwd[4096];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/key 1.pem", dir);
	snprintf(link, sizeof(link), "%s/link.pem", dir);
	f = fopen(path, "w");
	CHECK(f != NULL);
	fclose(f);
	CHECK(symlink(path, link) == 0);
	name_of(path, a, sizeof(a));
	CHECK(strncmp(a, "file:/tmp/modsign-unit.", 23) == 0);
	CHECK(strstr(a, "key%201.pem") != NULL);	/* printable ASCII only */
	name_of(link, b, sizeof(b));
	CHECK(strcmp(a, b) == 0);		/* the link's target */
	CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
	CHECK(chdir(dir) == 0);
	snprintf(rel, sizeof(rel), "./key 1.pem");
	name_of(rel, b, sizeof(b));
	CHECK(strcmp(a, b) == 0);		/* relative, same file */
	/* A file that is not here is named by its absolute path. */
	name_of("missing.pem", b, sizeof(b));
	CHECK(strncmp(b, "file:/tmp/modsign-unit.", 23) == 0);
	CHECK(strstr(b, "/missing.pem") != NULL);
	CHECK(chdir(cwd) == 0);
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void
sock_pair(int sv[2])
{
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
}

MS_TEST(agent_frame_read_cases)
{
	uint8_t buf[64];
	size_t len = 0;
	struct ms_agent_io io;
	int sv[2];

	sock_pair(sv);
	/* A whole frame. */
	CHECK(write(sv[1], "\0\0\0\3abc", 7) == 7);
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, 1000, 1000, &io), MS_OK);
	CHECK(len == 3 && memcmp(buf, "abc", 3) == 0);
	/* Nothing comes: the idle deadline. */
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, 50, 1000, &io), MS_E_IO);
	CHECK(io.end == MS_AGENT_IO_TIMEOUT);
	/* A frame begun and stalled: the frame deadline. */
	CHECK(write(sv[1], "\0\0\0\5ab", 6) == 6);
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, -1, 50, &io), MS_E_IO);
	CHECK(io.end == MS_AGENT_IO_TIMEOUT);
	close(sv[0]);
	close(sv[1]);

	/* Too long, and zero. */
	sock_pair(sv);
	CHECK(write(sv[1], "\0\0\1\0", 4) == 4);
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, 1000, 1000, &io), MS_E_MALFORMED);
	CHECK(io.end == MS_AGENT_IO_TOOBIG);
	CHECK(write(sv[1], "\0\0\0\0", 4) == 4);
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, 1000, 1000, &io), MS_E_MALFORMED);
	close(sv[0]);
	close(sv[1]);

	/* Closed mid-frame, and closed between frames. */
	sock_pair(sv);
	CHECK(write(sv[1], "\0\0\0\5ab", 6) == 6);
	close(sv[1]);
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, 1000, 1000, &io), MS_E_IO);
	CHECK(io.end == MS_AGENT_IO_CUT);
	close(sv[0]);
	sock_pair(sv);
	close(sv[1]);
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, 1000, 1000, &io), MS_E_IO);
	CHECK(io.end == MS_AGENT_IO_EOF);
	close(sv[0]);
	/* A peer gone with our request unread resets the connection: still an end. */
	sock_pair(sv);
	CHECK(write(sv[0], "\0\0\0\2\1\1", 6) == 6);
	close(sv[1]);
	CHECK_ERR(ms_agent_frame_read(sv[0], buf, sizeof(buf), &len, 1000, 1000, &io), MS_E_IO);
	CHECK(io.end == MS_AGENT_IO_EOF);
	close(sv[0]);
}

MS_TEST(agent_frame_write_to_dead_peer)
{
	static uint8_t big[1 << 20];
	struct ms_agent_io io;
	int sv[2];

	/* No SIGPIPE: the default action would end this test with a signal. */
	signal(SIGPIPE, SIG_DFL);
	sock_pair(sv);
	close(sv[1]);
	CHECK_ERR(ms_agent_frame_write(sv[0], big, 16, 1000, &io), MS_E_IO);
	CHECK(io.end == MS_AGENT_IO_CUT);
	close(sv[0]);
	/* A peer that reads nothing: the write deadline. */
	sock_pair(sv);
	CHECK_ERR(ms_agent_frame_write(sv[0], big, sizeof(big), 100, &io), MS_E_IO);
	CHECK(io.end == MS_AGENT_IO_TIMEOUT);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A listener that never accepts, its backlog full: connect gives up at its
 * deadline with ETIMEDOUT (a blocking connect would wait for ever: the
 * alarm ends this test then).
 */
MS_TEST(agent_sock_connect_full_backlog_times_out)
{
	struct sockaddr_un sa;
	char dir[] = "/tmp/modsign-unit.XXXXXX";
	int held[64];
	int n_held = 0, ls = -1, c = -1, e = 0;

	CHECK(mkdtemp(dir) != NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", dir);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(ls >= 0);
	CHECK(bind(ls, (const struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(ls, 0) == 0);
	/* Fill the backlog: connections that wait to be accepted, until EAGAIN. */
	for (;;) {
		int h = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

		CHECK(h >= 0 && n_held < 64);
		if (connect(h, (const struct sockaddr *)&sa, sizeof(sa)) != 0) {
			CHECK(errno == EAGAIN);
			close(h);
			break;
		}
		held[n_held++] = h;
	}
	alarm(20);
	CHECK_ERR(ms_agent_sock_connect(sa.sun_path, 300, &c, &e), MS_E_IO);
	CHECK_EQ(e, ETIMEDOUT);
	CHECK(c == -1);
	/* Room again: connected at once. */
	close(ls);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	unlink(sa.sun_path);
	CHECK(bind(ls, (const struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(listen(ls, 4) == 0);
	CHECK(ms_agent_sock_connect(sa.sun_path, 300, &c, &e) == MS_OK && c >= 0);
	close(c);
	for (int i = 0; i < n_held; i++) {
		close(held[i]);
	}
	close(ls);
	unlink(sa.sun_path);
	rmdir(dir);
}

/*
 * An agent that refused and closed before reading our request: the write
 * fails (EPIPE), but the refusal it sent first is the answer, not "closed
 * the connection".
 */
MS_TEST(agent_call_refusal_after_broken_write)
{
	static const uint8_t refusal[] = {
		0, 0, 0, 24, 0xff, 3, 0, 20,
		'n', 'o', 't', ' ', 't', 'h', 'e', ' ', 'a', 'g', 'e', 'n', 't', '\'', 's', ' ',
		'u', 's', 'e', 'r',
	};
	struct ms_agent_req req = { .type = MS_AGENT_HELLO, .version = MS_AGENT_PROTO_VERSION };
	struct ms_agent_call call;
	int sv[2];

	sock_pair(sv);
	CHECK(write(sv[1], refusal, sizeof(refusal)) == (ssize_t)sizeof(refusal));
	close(sv[1]);
	CHECK_ERR(ms_agent_call(sv[0], &req, 1000, &call), MS_OK);
	CHECK_EQ(call.reply.status, MS_AGENT_ST_REFUSED);
	CHECK(call.reply.text.len == 20 &&
	      memcmp(call.reply.text.p, "not the agent's user", 20) == 0);
	close(sv[0]);
	/* Closed with nothing said: the connection is lost, as before. */
	sock_pair(sv);
	close(sv[1]);
	CHECK_ERR(ms_agent_call(sv[0], &req, 1000, &call), MS_E_IO);
	CHECK(call.io.end == MS_AGENT_IO_CUT);
	close(sv[0]);
}
