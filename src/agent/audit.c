// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's audit trail (--log): JSON lines, one per signature request,
 * refused or malformed connection, start and stop. Each line is built whole
 * and written with one write(2) to an O_APPEND file, so that the lines of
 * several connection threads (or several agents sharing a log) never mix.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/json.h"
#include "agent.h"

struct ms_agent_audit {
	int fd;			/* -1: log nowhere */
};

/* The free-text fields of a line are bounded: a path, a key name, a message. */
#define FIELD_MAX 4096u

ms_err
ms_agent_audit_open(const char *path, struct ms_agent_audit **out, char *why, size_t why_cap)
{
	struct ms_agent_audit *a = calloc(1, sizeof(*a));

	*out = NULL;
	if (a == NULL) {
		snprintf(why, why_cap, "%s", ms_err_str(MS_E_NOMEM));
		return MS_E_NOMEM;
	}
	a->fd = -1;
	if (path != NULL) {
		/* O_NOFOLLOW: the trail is never written through a link someone planted. */
		a->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
			     0600);
		if (a->fd < 0) {
			snprintf(why, why_cap, "--log %s: open: %s", path,
				 errno == ELOOP ? "is a symbolic link" : strerror(errno));
			free(a);
			return MS_E_IO;
		}
	}
	*out = a;
	return MS_OK;
}

void
ms_agent_audit_free(struct ms_agent_audit *a)
{
	if (a == NULL) {
		return;
	}
	if (a->fd >= 0) {
		close(a->fd);
	}
	free(a);
}

/* ,"key":"value" with the value escaped; cut at FIELD_MAX bytes. */
static void
put_str(FILE *f, const char *key, const uint8_t *p, size_t len)
{
	fprintf(f, ",\"%s\":", key);
	ms_json_put_str(f, p, len < FIELD_MAX ? len : FIELD_MAX);
}

static void
put_cstr(FILE *f, const char *key, const char *s)
{
	put_str(f, key, (const uint8_t *)s, strlen(s));
}

/* {"time":"2026-12-01T13:40:00.123Z","event":"..." */
static void
put_head(FILE *f, const char *event)
{
	struct timespec ts;
	struct tm tm;
	char t[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	/* @event is one of our own constant words: nothing to escape. */
	fprintf(f, "{\"time\":\"%s.%03ldZ\",\"event\":\"%s\"", t, ts.tv_nsec / 1000000, event);
}

static void
put_peer(FILE *f, const struct ms_agent_peer *peer)
{
	if (peer == NULL) {
		return;
	}
	fprintf(f, ",\"pid\":%ld,\"uid\":%ld", (long)peer->pid, (long)peer->uid);
	put_cstr(f, "exe", peer->exe);
}

/*
 * Ends the line in @f (a memory stream) and appends it with one write(2):
 * a short write is a full disk, an incomplete line, and a failure.
 */
static ms_err
line_write(struct ms_agent_audit *a, FILE *f, char **buf, size_t *len)
{
	ssize_t n;

	fputs("}\n", f);
	if (fclose(f) != 0) {
		return MS_E_NOMEM;
	}
	do {
		n = write(a->fd, *buf, *len);
	} while (n < 0 && errno == EINTR);
	return n >= 0 && (size_t)n == *len ? MS_OK : MS_E_IO;
}

ms_err
ms_agent_audit_sign(struct ms_agent_audit *a, const struct ms_agent_audit_sign *rec)
{
	static const char hex[] = "0123456789abcdef";
	char digest[2 * MS_HASH_MAX_SIZE + 1];
	char *buf = NULL;
	size_t len = 0;
	size_t n = rec->digest.len < MS_HASH_MAX_SIZE ? rec->digest.len : MS_HASH_MAX_SIZE;
	FILE *f = NULL;
	ms_err err;

	if (a == NULL || a->fd < 0) {
		return MS_OK;
	}
	for (size_t i = 0; i < n; i++) {
		digest[2 * i] = hex[rec->digest.p[i] >> 4];
		digest[2 * i + 1] = hex[rec->digest.p[i] & 15];
	}
	digest[2 * n] = '\0';
	f = open_memstream(&buf, &len);
	if (f == NULL) {
		return MS_E_NOMEM;
	}
	put_head(f, "sign");
	put_peer(f, rec->peer);
	put_str(f, "module", rec->module.p, rec->module.len);
	put_cstr(f, "hash", ms_cms_hash_name(rec->hash));
	put_cstr(f, "digest", digest);
	put_cstr(f, "key", rec->key);
	if (rec->token != NULL) {
		put_cstr(f, "token", rec->token);
	}
	put_cstr(f, "outcome", rec->error == NULL ? "signed" : "failed");
	if (rec->error != NULL) {
		put_cstr(f, "error", rec->error);
	}
	err = line_write(a, f, &buf, &len);
	free(buf);
	return err;
}

ms_err
ms_agent_audit_event(struct ms_agent_audit *a, const char *event,
		     const struct ms_agent_peer *peer, const char *key, const char *detail)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = NULL;
	ms_err err;

	if (a == NULL || a->fd < 0) {
		return MS_OK;
	}
	f = open_memstream(&buf, &len);
	if (f == NULL) {
		return MS_E_NOMEM;
	}
	put_head(f, event);
	put_peer(f, peer);
	if (key != NULL) {
		put_cstr(f, "key", key);
	}
	if (detail != NULL) {
		put_cstr(f, "detail", detail);
	}
	err = line_write(a, f, &buf, &len);
	free(buf);
	return err;
}
