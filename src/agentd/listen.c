// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's listening socket: a private directory and a 0600 socket in
 * it, made where no other user can move them, and removed by descriptor.
 * Where to look comes from the caller (the CLI reads the environment).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agentd.h"

#define LISTEN_BACKLOG 128
#define SOCK_NAME "sock"

/* A control character (a newline above all) would cut the line --daemon prints for eval. */
static bool
has_control(const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f) {
			return true;
		}
	}
	return false;
}

/*
 * Why another user could rename or replace what we make in the directory
 * @st, or NULL when none can: it must be ours or root's, and others may
 * write to it only when it is sticky (where only an entry's owner may
 * rename or remove it, as in /tmp).
 */
static const char *
dir_unsafe(const struct stat *st)
{
	if (!S_ISDIR(st->st_mode)) {
		return "is not a directory";
	}
	if (st->st_uid != geteuid() && st->st_uid != 0) {
		return "is owned by another user";
	}
	if ((st->st_mode & 0022) != 0 && (st->st_mode & S_ISVTX) == 0) {
		return "is writable by others and not sticky";
	}
	return NULL;
}

/* $XDG_RUNTIME_DIR only when it is a real directory of ours, not writable by others. */
static bool
runtime_dir_ok(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && st->st_uid == geteuid() && (st->st_mode & 0022) == 0;
}

/*
 * @base (resolved, no symbolic links left) and each directory above it
 * pass dir_unsafe(): nobody else can move the directory we make, nor any
 * directory on the way to it.
 */
static ms_err
path_check(const char *base, const char *var, char *why, size_t why_cap)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s", base);
	for (;;) {
		const char *bad;
		char *slash;

		if (lstat(p, &st) != 0) {
			snprintf(why, why_cap, "socket directory: %s: %s: %s", var, p,
				 strerror(errno));
			return MS_E_IO;
		}
		bad = dir_unsafe(&st);
		if (bad != NULL) {
			snprintf(why, why_cap, "socket directory: %s: %s %s, so its user "
				 "could replace the agent's socket: set XDG_RUNTIME_DIR to a "
				 "directory of yours (mode 0700), or TMPDIR to a private "
				 "directory", var, p, bad);
			return MS_E_IO;
		}
		slash = strrchr(p, '/');
		if (slash == NULL || slash == p) {
			break;
		}
		*slash = '\0';
	}
	if (strcmp(base, "/") != 0 && (lstat("/", &st) != 0 || dir_unsafe(&st) != NULL)) {
		snprintf(why, why_cap, "socket directory: / is not safe");
		return MS_E_IO;
	}
	return MS_OK;
}

/*
 * Opens @base (not through a link in its last part) as the directory to
 * make the socket's in, and checks the directory opened: *@fit is false
 * when "<base>/modsign-agent.XXXXXX/sock" does not fit a socket address.
 */
static ms_err
open_base(struct ms_agentd_sock *s, const char *base, bool is_runtime, const char *var,
	  bool *fit, char *why, size_t why_cap)
{
	struct stat st;
	const char *bad;
	int fd;

	*fit = strlen(base) + sizeof("/modsign-agent.XXXXXX/" SOCK_NAME) - 1 <=
	       MS_AGENT_SOCK_PATH_MAX;
	if (!*fit) {
		return MS_OK;
	}
	if (has_control(base)) {
		snprintf(why, why_cap, "socket directory: %s holds a control character, which the "
			 "socket path may not: set %s to a plain path", var, var);
		return MS_E_ARG;
	}
	fd = open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_cap, "socket directory: %s: %s: %s", var, base, strerror(errno));
		return MS_E_IO;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(why, why_cap, "socket directory: %s: %s: %s", var, base, strerror(errno));
		close(fd);
		return MS_E_IO;
	}
	/* The checks hold for the directory opened, which is the one used from here on. */
	bad = is_runtime ? (runtime_dir_ok(&st) ? NULL : "is not a directory of yours closed "
			    "to others") : dir_unsafe(&st);
	if (bad != NULL) {
		snprintf(why, why_cap, "socket directory: %s: %s %s: set XDG_RUNTIME_DIR to "
			 "a directory of yours (mode 0700), or TMPDIR to a private directory",
			 var, base, bad);
		close(fd);
		return MS_E_IO;
	}
	s->base_fd = fd;
	s->has_base = true;
	return MS_OK;
}

/*
 * Makes "modsign-agent.XXXXXX" (mode 0700) in the base directory, through
 * its descriptor, and keeps a descriptor of it and its device and inode:
 * ms_agentd_sock_close() removes that directory and no other.
 */
static ms_err
make_in_base(struct ms_agentd_sock *s, const char *base, char *why, size_t why_cap)
{
	static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789";
	struct stat st;
	int fd, n;

	for (unsigned tries = 0;; tries++) {
		uint8_t r[6];

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
			snprintf(why, why_cap, "getrandom: %s", strerror(errno));
			return MS_E_IO;
		}
		snprintf(s->name, sizeof(s->name), "modsign-agent.%c%c%c%c%c%c",
			 chars[r[0] % 62], chars[r[1] % 62], chars[r[2] % 62], chars[r[3] % 62],
			 chars[r[4] % 62], chars[r[5] % 62]);
		if (mkdirat(s->base_fd, s->name, 0700) == 0) {
			break;
		}
		if (errno != EEXIST || tries == 100) {
			snprintf(why, why_cap, "mkdir %s/%s: %s", base, s->name, strerror(errno));
			return MS_E_IO;
		}
	}
	fd = openat(s->base_fd, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 0077) != 0) {
		snprintf(why, why_cap, "%s/%s: not the directory just made", base, s->name);
		if (fd >= 0) {
			close(fd);
		}
		return MS_E_IO;
	}
	s->dir_fd = fd;
	s->dir_dev = st.st_dev;
	s->dir_ino = st.st_ino;
	s->has_dir = true;
	n = snprintf(s->dir, sizeof(s->dir), "%s/%s", base, s->name);
	if (n < 0 || (size_t)n >= sizeof(s->dir)) {
		return MS_E_INTERNAL;	/* measured in open_base() */
	}
	n = snprintf(s->path, sizeof(s->path), "%s/%s", s->dir, SOCK_NAME);
	if (n < 0 || (size_t)n >= sizeof(s->path)) {
		return MS_E_INTERNAL;
	}
	return MS_OK;
}

/*
 * The base directory: $XDG_RUNTIME_DIR when it is ours and closed to
 * others, else $TMPDIR (resolved) or /tmp, when no other user can move
 * what is made in it; the first whose socket path fits. The caller read
 * the variables (@dirs).
 */
static ms_err
make_dir(struct ms_agentd_sock *s, const struct ms_agentd_sock_dirs *dirs, char *why,
	 size_t why_cap)
{
	const char *xdg = dirs->runtime_dir;
	const char *tmp = dirs->tmp_dir;
	char real[PATH_MAX];
	bool fit = false;
	ms_err err;

	if (xdg != NULL && xdg[0] == '/') {
		struct stat st;

		if (has_control(xdg)) {
			snprintf(why, why_cap, "socket directory: XDG_RUNTIME_DIR holds a "
				 "control character, which the socket path may not: set it to "
				 "a plain path");
			return MS_E_ARG;
		}
		if (lstat(xdg, &st) == 0 && runtime_dir_ok(&st)) {
			err = open_base(s, xdg, true, "XDG_RUNTIME_DIR", &fit, why, why_cap);
			if (err != MS_OK) {
				return err;
			}
			if (fit) {
				return make_in_base(s, xdg, why, why_cap);
			}
		}
	}
	if (tmp != NULL && tmp[0] == '/') {
		if (has_control(tmp)) {
			snprintf(why, why_cap, "socket directory: TMPDIR holds a control "
				 "character, which the socket path may not: set TMPDIR to a "
				 "plain path");
			return MS_E_ARG;
		}
		/* The user named it: links in it are followed, then every part checked. */
		if (realpath(tmp, real) == NULL) {
			snprintf(why, why_cap, "socket directory: TMPDIR %s: %s", tmp,
				 strerror(errno));
			return MS_E_IO;
		}
		err = path_check(real, "TMPDIR", why, why_cap);
		if (err == MS_OK) {
			err = open_base(s, real, false, "TMPDIR", &fit, why, why_cap);
		}
		if (err != MS_OK) {
			return err;
		}
		if (fit) {
			return make_in_base(s, real, why, why_cap);
		}
	}
	err = path_check("/tmp", "/tmp", why, why_cap);
	if (err == MS_OK) {
		err = open_base(s, "/tmp", false, "/tmp", &fit, why, why_cap);
	}
	if (err != MS_OK) {
		return err;
	}
	if (fit) {
		return make_in_base(s, "/tmp", why, why_cap);
	}
	snprintf(why, why_cap, "no directory for the socket: $XDG_RUNTIME_DIR, $TMPDIR and /tmp "
		 "give paths over %d bytes", MS_AGENT_SOCK_PATH_MAX);
	return MS_E_NOSPACE;
}

ms_err
ms_agentd_sock_listen(struct ms_agentd_sock *s, const struct ms_agentd_sock_dirs *dirs, char *why,
		     size_t why_cap)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t mask;
	int r;
	ms_err err;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->base_fd = -1;
	s->dir_fd = -1;
	err = make_dir(s, dirs, why, why_cap);
	if (err != MS_OK) {
		return err;
	}
	if (ms_agent_sock_addr(s->path, &sa) != MS_OK) {
		snprintf(why, why_cap, "%s: path too long for a socket", s->path);
		return MS_E_NOSPACE;
	}
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		snprintf(why, why_cap, "socket: %s", strerror(errno));
		return MS_E_IO;
	}
	/* The socket is born 0600: no moment at which it is wider. */
	mask = umask(0177);
	r = bind(s->fd, (const struct sockaddr *)&sa, sizeof(sa));
	umask(mask);
	if (r != 0) {
		snprintf(why, why_cap, "bind %s: %s", s->path, strerror(errno));
		return MS_E_IO;
	}
	/* What was bound is in the directory we made: that is what cleanup removes. */
	if (fstatat(s->dir_fd, SOCK_NAME, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode)) {
		snprintf(why, why_cap, "%s: the socket is not in the directory made for it",
			 s->path);
		return MS_E_IO;
	}
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	s->has_sock = true;
	if (listen(s->fd, LISTEN_BACKLOG) != 0) {
		snprintf(why, why_cap, "listen %s: %s", s->path, strerror(errno));
		return MS_E_IO;
	}
	return MS_OK;
}

/* Whether @name in @dir_fd is still the file (@dev, @ino): not one put in its place. */
static bool
is_same(int dir_fd, const char *name, dev_t dev, ino_t ino)
{
	struct stat st;

	return fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev &&
	       st.st_ino == ino;
}

void
ms_agentd_sock_close(struct ms_agentd_sock *s)
{
	if (s->fd >= 0) {
		close(s->fd);
		s->fd = -1;
	}
	/*
	 * Removed through the descriptors kept since they were made, each
	 * checked by device and inode: never by a path, where a directory
	 * renamed away and a link put in its place would lead elsewhere.
	 */
	if (s->has_sock) {
		if (is_same(s->dir_fd, SOCK_NAME, s->sock_dev, s->sock_ino)) {
			(void)unlinkat(s->dir_fd, SOCK_NAME, 0);
		}
		s->has_sock = false;
	}
	s->path[0] = '\0';
	if (s->has_dir) {
		if (s->has_base && is_same(s->base_fd, s->name, s->dir_dev, s->dir_ino)) {
			(void)unlinkat(s->base_fd, s->name, AT_REMOVEDIR);
		}
		close(s->dir_fd);
		s->dir_fd = -1;
		s->has_dir = false;
	}
	s->dir[0] = '\0';
	if (s->has_base) {
		close(s->base_fd);
		s->base_fd = -1;
		s->has_base = false;
	}
}
