// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/agentd: the socket and its directory, peer
 * credentials as the server reads them, the audit trail, and the JSON
 * strings it is made of (src/common/json.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/agentd/agentd.h"
#include "../../src/common/json.h"
#include "test.h"

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

MS_TEST(agent_sock_listen_connect_peer)
{
	struct ms_agentd_sock s;
	struct ms_agentd_sock_dirs dirs = { .runtime_dir = NULL, .tmp_dir = NULL };
	struct ms_agent_peer peer;
	struct stat st;
	char why[256] = "";
	char dir[] = "/tmp/modsign-unit.XXXXXX";
	int c = -1, a = -1, e = 0;

	CHECK(mkdtemp(dir) != NULL);
	CHECK(chmod(dir, 0700) == 0);
	dirs.runtime_dir = dir;
	CHECK_ERR(ms_agentd_sock_listen(&s, &dirs, why, sizeof(why)), MS_OK);
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
	ms_agentd_sock_close(&s);
	ms_agentd_sock_close(&s);
	CHECK(lstat(s.dir, &st) != 0);
	/* Gone: a clear errno for the client. */
	CHECK(ms_agent_sock_connect("/nonexistent/modsign/sock", 1000, &c, &e) == MS_E_IO &&
	      e == ENOENT);
	CHECK_ERR(ms_agent_sock_connect("", 1000, &c, &e), MS_E_ARG);

	/* A runtime directory others may write to is not used. */
	CHECK(chmod(dir, 0777) == 0);
	dirs.tmp_dir = "/tmp";
	CHECK_ERR(ms_agentd_sock_listen(&s, &dirs, why, sizeof(why)), MS_OK);
	CHECK(strncmp(s.path, "/tmp/modsign-agent.", 19) == 0);
	ms_agentd_sock_close(&s);
	/* Neither variable set: /tmp. */
	dirs.runtime_dir = NULL;
	dirs.tmp_dir = NULL;
	CHECK_ERR(ms_agentd_sock_listen(&s, &dirs, why, sizeof(why)), MS_OK);
	CHECK(strncmp(s.path, "/tmp/modsign-agent.", 19) == 0);
	ms_agentd_sock_close(&s);
	/* A control character would cut the line --daemon prints: refused, not skipped. */
	dirs.tmp_dir = "/tmp/a\nb";
	CHECK_ERR(ms_agentd_sock_listen(&s, &dirs, why, sizeof(why)), MS_E_ARG);
	CHECK(strstr(why, "TMPDIR holds a control character") != NULL);
	ms_agentd_sock_close(&s);
	rmdir(dir);
}

MS_TEST(agent_audit_lines)
{
	char dir[] = "/tmp/modsign-unit.XXXXXX";
	char path[256], link[256], why[512];
	struct ms_agentd_audit *a = NULL;
	struct ms_agent_peer peer = { .pid = 42, .uid = 7 };
	struct ms_agentd_audit_sign rec;
	uint8_t digest[32] = { 0xab, 0xcd };
	unsigned char *text = NULL;
	size_t len = 0;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	snprintf(link, sizeof(link), "%s/link.log", dir);
	snprintf(peer.exe, sizeof(peer.exe), "/usr/bin/make");
	CHECK_ERR(ms_agentd_audit_open(path, &a, why, sizeof(why)), MS_OK);
	memset(&rec, 0, sizeof(rec));
	rec.peer = &peer;
	rec.module.p = (const uint8_t *)"drivers/a\"b\n.ko";
	rec.module.len = 15;
	rec.hash = MS_HASH_SHA256;
	rec.digest.p = digest;
	rec.digest.len = sizeof(digest);
	rec.key = "pkcs11:token=t;object=k";
	CHECK_ERR(ms_agentd_audit_sign(a, &rec), MS_OK);
	rec.error = "C_Sign: CKR_DEVICE_ERROR";
	CHECK_ERR(ms_agentd_audit_sign(a, &rec), MS_OK);
	CHECK_ERR(ms_agentd_audit_event(a, "refused", &peer, NULL, "uid 7 is not 0"), MS_OK);
	ms_agentd_audit_free(a);

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
	CHECK_ERR(ms_agentd_audit_open(link, &a, why, sizeof(why)), MS_E_IO);
	CHECK(strstr(why, "symbolic link") != NULL);
	CHECK_ERR(ms_agentd_audit_open(NULL, &a, why, sizeof(why)), MS_OK);
	CHECK_ERR(ms_agentd_audit_sign(a, &rec), MS_OK);
	ms_agentd_audit_free(a);
	unlink(link);
	unlink(path);
	rmdir(dir);
}
