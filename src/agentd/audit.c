// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's audit trail (--log): JSON lines, one per signature request,
 * refused or malformed connection, start and stop. Each line is built whole
 * and written with one write(2) to an O_APPEND regular file, under a lock
 * (a mutex for this agent's threads, flock(2) for other agents sharing the
 * log), so that lines never mix; a line written short (a full disk) is cut
 * off again, so that the file holds whole lines only and the next line is
 * never glued onto a broken one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/json.h"
#include "agentd.h"

struct ms_agentd_audit {
	int fd;			/* -1: log nowhere */
	pthread_mutex_t lock;	/* one line at a time; @sys_errno */
	int sys_errno;		/* why the last line failed */
};

/* The free-text fields of a line are bounded: a path, a key name, a message. */
#define FIELD_MAX 4096u
/*
 * How long a line waits for another process's lock on the log: a process
 * that holds it for ever fails the line (and withholds its signature)
 * instead of hanging every signature.
 */
#define LOCK_WAIT_MS 10000
#define LOCK_TRY_MS 10

/* What a file that is not a regular one is, for the message. */
static const char *
kind_of(mode_t mode)
{
	if (S_ISFIFO(mode)) {
		return "a FIFO";
	}
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		return "a device";
	}
	if (S_ISSOCK(mode)) {
		return "a socket";
	}
	if (S_ISDIR(mode)) {
		return "a directory";
	}
	return "not a regular file";
}

ms_err
ms_agentd_audit_open(const char *path, struct ms_agentd_audit **out, char *why, size_t why_cap)
{
	struct ms_agentd_audit *a = calloc(1, sizeof(*a));
	struct stat st;
	int fl;

	*out = NULL;
	if (a == NULL) {
		snprintf(why, why_cap, "%s", ms_err_str(MS_E_NOMEM));
		return MS_E_NOMEM;
	}
	a->fd = -1;
	pthread_mutex_init(&a->lock, NULL);
	if (path != NULL) {
		/*
		 * O_NOFOLLOW: the trail is never written through a link someone
		 * planted. O_NONBLOCK: a FIFO nobody reads fails here (ENXIO)
		 * instead of hanging the agent. Read access: a line cut short
		 * before (a crash) is found and cut off before the next.
		 */
		a->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK |
			     O_CLOEXEC | O_NOCTTY, 0600);
		if (a->fd < 0) {
			snprintf(why, why_cap, "--log %s: open: %s", path,
				 errno == ELOOP ? "is a symbolic link" :
				 errno == ENXIO ? "not a regular file (a FIFO or socket)" :
				 strerror(errno));
			goto fail;
		}
		if (fstat(a->fd, &st) != 0) {
			snprintf(why, why_cap, "--log %s: fstat: %s", path, strerror(errno));
			goto fail;
		}
		/* A FIFO, a device (/dev/full) or a socket could not be cut back to whole lines. */
		if (!S_ISREG(st.st_mode)) {
			snprintf(why, why_cap, "--log %s: %s: the audit log must be a regular file",
				 path, kind_of(st.st_mode));
			goto fail;
		}
		fl = fcntl(a->fd, F_GETFL);
		if (fl < 0 || fcntl(a->fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
			snprintf(why, why_cap, "--log %s: fcntl: %s", path, strerror(errno));
			goto fail;
		}
	}
	*out = a;
	return MS_OK;
fail:
	if (a->fd >= 0) {
		close(a->fd);
	}
	pthread_mutex_destroy(&a->lock);
	free(a);
	return MS_E_IO;
}

int
ms_agentd_audit_errno(struct ms_agentd_audit *a)
{
	int e;

	if (a == NULL) {
		return 0;
	}
	pthread_mutex_lock(&a->lock);
	e = a->sys_errno;
	pthread_mutex_unlock(&a->lock);
	return e;
}

void
ms_agentd_audit_free(struct ms_agentd_audit *a)
{
	if (a == NULL) {
		return;
	}
	if (a->fd >= 0) {
		close(a->fd);
	}
	pthread_mutex_destroy(&a->lock);
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

/* Where the last whole line of the first @size bytes of @fd ends (0: none). */
static ms_err
whole_lines_end(int fd, off_t size, off_t *end)
{
	char buf[4096];
	off_t pos = size;

	while (pos > 0) {
		size_t n = pos < (off_t)sizeof(buf) ? (size_t)pos : sizeof(buf);
		ssize_t k = pread(fd, buf, n, pos - (off_t)n);

		if (k < 0 || (size_t)k != n) {
			return MS_E_IO;
		}
		for (size_t i = n; i > 0; i--) {
			if (buf[i - 1] == '\n') {
				*end = pos - (off_t)n + (off_t)i;
				return MS_OK;
			}
		}
		pos -= (off_t)n;
	}
	*end = 0;
	return MS_OK;
}

/*
 * Appends @p, @len (one whole line) with one write(2). Called with the lock
 * held and flock()ed. The file ends with a whole line first (a line left
 * cut short by a crash or a failed cut is cut off); a line written short
 * is cut off again, back to the size before it.
 */
static ms_err
append_line(struct ms_agentd_audit *a, const char *p, size_t len)
{
	struct stat st;
	off_t size = 0;
	char last = '\n';
	ssize_t n;

	if (fstat(a->fd, &st) != 0) {
		a->sys_errno = errno;
		return MS_E_IO;
	}
	size = st.st_size;
	if (size > 0 && pread(a->fd, &last, 1, size - 1) != 1) {
		a->sys_errno = errno;
		return MS_E_IO;
	}
	if (last != '\n') {
		if (whole_lines_end(a->fd, size, &size) != MS_OK || ftruncate(a->fd, size) != 0) {
			a->sys_errno = errno;
			return MS_E_IO;
		}
	}
	do {
		n = write(a->fd, p, len);
	} while (n < 0 && errno == EINTR);
	if (n >= 0 && (size_t)n == len) {
		return MS_OK;
	}
	/* A short write is a full disk (or a file size limit): nothing more was written. */
	a->sys_errno = n < 0 ? errno : ENOSPC;
	if (n > 0 && ftruncate(a->fd, size) != 0) {
		/* the next line cuts it off, or fails too */
	}
	return MS_E_IO;
}

/* Ends the line in @f (a memory stream) and appends it whole, or not at all. */
static ms_err
line_write(struct ms_agentd_audit *a, FILE *f, char **buf, size_t *len)
{
	ms_err err = MS_E_INTERNAL;

	fputs("}\n", f);
	if (fclose(f) != 0) {
		return MS_E_NOMEM;
	}
	pthread_mutex_lock(&a->lock);
	/* flock: other agents writing to the same log wait, so a cut removes only our bytes. */
	for (unsigned waited = 0; flock(a->fd, LOCK_EX | LOCK_NB) != 0; waited += LOCK_TRY_MS) {
		struct timespec ts = { .tv_sec = 0, .tv_nsec = LOCK_TRY_MS * 1000000L };

		if ((errno != EINTR && errno != EWOULDBLOCK) || waited >= LOCK_WAIT_MS) {
			a->sys_errno = errno;
			err = MS_E_IO;
			goto out;
		}
		(void)nanosleep(&ts, NULL);
	}
	err = append_line(a, *buf, *len);
	(void)flock(a->fd, LOCK_UN);
out:
	pthread_mutex_unlock(&a->lock);
	return err;
}

ms_err
ms_agentd_audit_sign(struct ms_agentd_audit *a, const struct ms_agentd_audit_sign *rec)
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
ms_agentd_audit_event(struct ms_agentd_audit *a, const char *event,
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
