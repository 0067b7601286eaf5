// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/agent: key names, the socket and its directory, peer
 * credentials, framed reads and writes with deadlines, the audit trail,
 * and the JSON strings it is made of (src/common/json.c).
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
#include "../../src/common/json.h"
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

/* The JSON strings of the audit log (common/json.c, shared with the CLI's printer). */
static void
json_of(const uint8_t *in, size_t len, char **out)
{
	size_t n = 0;
	FILE *f = open_memstream(out, &n);

	CHECK(f != NULL);
	ms_json_put_str(f, in, len);
	CHECK(fclose(f) == 0);
}

MS_TEST(agent_json_str)
{
	const uint8_t in[] = { 'a', '"', '\\', '\n', 0x7f, 0xc3, 0xa9, 0xc2, 0x9b, 0xff, 'z' };
	char *out = NULL;

	json_of(in, sizeof(in), &out);
	CHECK_STR_EQ(out, "\"a\\\"\\\\\\u000a\\u007f\xc3\xa9\\u009b\\ufffdz\"");
	free(out);
	/* A sequence cut by the end of the field is not read past. */
	json_of(in, 6, &out);
	CHECK_STR_EQ(out, "\"a\\\"\\\\\\u000a\\u007f\\ufffd\"");
	free(out);
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

MS_TEST(agent_sock_listen_connect_peer)
{
	struct ms_agent_sock s;
	struct ms_agent_sock_dirs dirs = { .runtime_dir = NULL, .tmp_dir = NULL };
	struct ms_agent_peer peer;
	struct stat st;
	char why[256] = "";
	char dir[] = "/tmp/modsign-unit.XXXXXX";
	int c = -1, a = -1, e = 0;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(chmod(dir, 0700) == 0);
	dirs.runtime_dir = dir;
	CHECK_ERR(ms_agent_sock_listen(&s, &dirs, why, sizeof(why)), MS_OK);
	CHECK(strncmp(s.path, dir, strlen(dir)) == 0);
	CHECK(lstat(s.dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700);
	CHECK(lstat(s.path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 07777) == 0600);
	CHECK_ERR(ms_agent_sock_connect(s.path, 1000, &c, &e), MS_OK);
	a = accept(s.fd, NULL, NULL);
	CHECK(a >= 0);
	CHECK_ERR(ms_agent_peer_get(a, &peer), MS_OK);
	CHECK(peer.pid == getpid() && peer.uid == geteuid());
	CHECK(strlen(peer.exe) > 0);
	close(a);
	close(c);
	ms_agent_sock_close(&s);
	ms_agent_sock_close(&s);
	CHECK(lstat(s.dir, &st) != 0);
	/* Gone: a clear errno for the client. */
	CHECK(ms_agent_sock_connect("/nonexistent/modsign/sock", 1000, &c, &e) == MS_E_IO &&
	      e == ENOENT);
	CHECK_ERR(ms_agent_sock_connect("", 1000, &c, &e), MS_E_ARG);

	/* A runtime directory others may write to is not used. */
	CHECK(chmod(dir, 0777) == 0);
	dirs.tmp_dir = "/tmp";
	CHECK_ERR(ms_agent_sock_listen(&s, &dirs, why, sizeof(why)), MS_OK);
	CHECK(strncmp(s.path, "/tmp/modsign-agent.", 19) == 0);
	ms_agent_sock_close(&s);
	/* Neither variable set: /tmp. */
	dirs.runtime_dir = NULL;
	dirs.tmp_dir = NULL;
	CHECK_ERR(ms_agent_sock_listen(&s, &dirs, why, sizeof(why)), MS_OK);
	CHECK(strncmp(s.path, "/tmp/modsign-agent.", 19) == 0);
	ms_agent_sock_close(&s);
	/* A control character would cut the line --daemon prints: refused, not skipped. */
	dirs.tmp_dir = "/tmp/a\nb";
	CHECK_ERR(ms_agent_sock_listen(&s, &dirs, why, sizeof(why)), MS_E_ARG);
	CHECK(strstr(why, "TMPDIR holds a control character") != NULL);
	ms_agent_sock_close(&s);
	rmdir(dir);
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

MS_TEST(agent_audit_lines)
{
	char dir[] = "/tmp/modsign-unit.XXXXXX";
	char path[256], link[256], why[512];
	struct ms_agent_audit *a = NULL;
	struct ms_agent_peer peer = { .pid = 42, .uid = 7 };
	struct ms_agent_audit_sign rec;
	uint8_t digest[32] = { 0xab, 0xcd };
	unsigned char *text = NULL;
	size_t len = 0;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	snprintf(link, sizeof(link), "%s/link.log", dir);
	snprintf(peer.exe, sizeof(peer.exe), "/usr/bin/make");
	CHECK_ERR(ms_agent_audit_open(path, &a, why, sizeof(why)), MS_OK);
	memset(&rec, 0, sizeof(rec));
	rec.peer = &peer;
	rec.module.p = (const uint8_t *)"drivers/a\"b\n.ko";
	rec.module.len = 15;
	rec.hash = MS_HASH_SHA256;
	rec.digest.p = digest;
	rec.digest.len = sizeof(digest);
	rec.key = "pkcs11:token=t;object=k";
	CHECK_ERR(ms_agent_audit_sign(a, &rec), MS_OK);
	rec.error = "C_Sign: CKR_DEVICE_ERROR";
	CHECK_ERR(ms_agent_audit_sign(a, &rec), MS_OK);
	CHECK_ERR(ms_agent_audit_event(a, "refused", &peer, NULL, "uid 7 is not 0"), MS_OK);
	ms_agent_audit_free(a);

	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	text = ms_test_read(path, &len);
	text[len] = '\0';
	CHECK(strstr((char *)text, "\"event\":\"sign\",\"pid\":42,\"uid\":7,\"exe\":\"/usr/bin/make\","
		     "\"module\":\"drivers/a\\\"b\\u000a.ko\",\"hash\":\"sha256\",\"digest\":\"abcd00") !=
	      NULL);
	CHECK(strstr((char *)text, "\"key\":\"pkcs11:token=t;object=k\",\"outcome\":\"signed\"}\n") !=
	      NULL);
	CHECK(strstr((char *)text, "\"outcome\":\"failed\",\"error\":\"C_Sign: CKR_DEVICE_ERROR\"}\n") !=
	      NULL);
	CHECK(strstr((char *)text, "\"event\":\"refused\",\"pid\":42") != NULL);
	CHECK(strncmp((char *)text, "{\"time\":\"20", 11) == 0);
	free(text);

	/* Never through a symbolic link; no log at all is fine. */
	CHECK(symlink(path, link) == 0);
	CHECK_ERR(ms_agent_audit_open(link, &a, why, sizeof(why)), MS_E_IO);
	CHECK(strstr(why, "symbolic link") != NULL);
	CHECK_ERR(ms_agent_audit_open(NULL, &a, why, sizeof(why)), MS_OK);
	CHECK_ERR(ms_agent_audit_sign(a, &rec), MS_OK);
	ms_agent_audit_free(a);
	unlink(link);
	unlink(path);
	rmdir(dir);
}
