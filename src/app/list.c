// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module list of a bulk run: names on the command line, --files-from
 * lists (newline- or NUL-separated, "-" for stdin) and every module below a
 * -r directory (*.ko, and compressed: *.ko.xz, *.ko.zst, *.ko.gz). Parses
 * untrusted input.
 */
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../modfmt/modfmt.h"
#include "app_internal.h"

/*
 * gcc 12's -fanalyzer (make analyze) loses track of a name stored into the
 * realloc'd path array and calls it leaked. ms_app_list_free() frees every
 * name; ASan's leak checker and valgrind confirm it on every test run.
 */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

#define LIST_MAX 1000000	/* modules in one run */
#define PATH_LEN_MAX 4096

static ms_err
list_add(struct ms_module_list *list, const struct ms_app_sink *sink, const char *p, size_t len)
{
	char *copy;

	if (len == 0) {
		return MS_OK;	/* blank lines separate nothing */
	}
	if (len >= PATH_LEN_MAX || memchr(p, '\0', len) != NULL) {
		ms_app_err(sink, "module list: a name of %zu bytes is too long or has a NUL", len);
		return MS_E_MALFORMED;
	}
	if (list->n == LIST_MAX) {
		ms_app_err(sink, "module list: more than %d modules", LIST_MAX);
		return MS_E_ARG;
	}
	if (list->n == list->cap) {
		size_t cap = list->cap == 0 ? 256 : list->cap * 2;
		char **grown = realloc(list->path, cap * sizeof(*grown));

		if (grown == NULL) {
			return MS_E_NOMEM;
		}
		list->path = grown;
		list->cap = cap;
	}
	copy = malloc(len + 1);
	if (copy == NULL) {
		return MS_E_NOMEM;
	}
	memcpy(copy, p, len);
	copy[len] = '\0';
	list->path[list->n++] = copy;
	return MS_OK;
}

/*
 * A newline-separated name that ends with CR is a list written with DOS
 * line ends: refused with the line number rather than looked for as a
 * file named "a.ko\r" (-0 takes any name as it is).
 */
static ms_err
list_take(struct ms_module_list *list, const struct ms_app_sink *sink, const char *name, char sep,
	  size_t line,
	  const char *p, size_t len)
{
	if (sep == '\n' && len > 0 && p[len - 1] == '\r') {
		ms_app_err(sink, "%s: line %zu ends with CR (a DOS line end): convert the list "
			   "(dos2unix) or give it NUL-separated with -0", name, line);
		return MS_E_MALFORMED;
	}
	return list_add(list, sink, p, len);
}

/* Reads @fd to the end, adding each @sep-terminated name. */
static ms_err
list_read_fd(struct ms_module_list *list, const struct ms_app_sink *sink, int fd, const char *name,
	     char sep)
{
	char buf[65536];
	char *name_buf = NULL;
	size_t len = 0, line = 1;
	ms_err err = MS_OK;

	name_buf = malloc(PATH_LEN_MAX);
	if (name_buf == NULL) {
		return MS_E_NOMEM;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			ms_app_err(sink, "%s: read: %s", name, strerror(errno));
			err = MS_E_IO;
			goto out;
		}
		if (n == 0) {
			break;
		}
		for (size_t i = 0; i < (size_t)n; i++) {
			if (buf[i] == sep) {
				err = list_take(list, sink, name, sep, line, name_buf, len);
				if (err != MS_OK) {
					goto out;
				}
				len = 0;
				line++;
			} else if (len == PATH_LEN_MAX - 1) {
				ms_app_err(sink, "%s: a name longer than %d bytes", name,
					   PATH_LEN_MAX - 1);
				err = MS_E_MALFORMED;
				goto out;
			} else {
				name_buf[len++] = buf[i];
			}
		}
	}
	/* The last name may lack its separator. */
	err = list_take(list, sink, name, sep, line, name_buf, len);
out:
	free(name_buf);
	return err;
}

static ms_err
list_from_file(struct ms_module_list *list, const struct ms_app_sink *sink, const char *name,
	       bool null_sep)
{
	int fd = STDIN_FILENO;
	ms_err err;

	if (strcmp(name, "-") != 0) {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ms_app_err(sink, "%s: open: %s", name, strerror(errno));
			return MS_E_IO;
		}
	}
	err = list_read_fd(list, sink, fd, strcmp(name, "-") == 0 ? "standard input" : name,
			   null_sep ? '\0' : '\n');
	if (fd != STDIN_FILENO) {
		close(fd);
	}
	return err;
}

static int
path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* *.ko, *.ko.xz, *.ko.zst, *.ko.gz: what kbuild installs (modfmt/zmod.h). */
static bool
is_ko(const char *path)
{
	return ms_mod_zfmt_is_module_name(path);
}

/* What a *.ko entry that is not a regular file is, for the -v note. */
static const char *
entry_kind(const FTSENT *e)
{
	if (e->fts_info == FTS_SL || e->fts_info == FTS_SLNONE) {
		return "a symbolic link (not followed)";
	}
	if (e->fts_statp != NULL && S_ISFIFO(e->fts_statp->st_mode)) {
		return "a FIFO";
	}
	if (e->fts_statp != NULL && S_ISSOCK(e->fts_statp->st_mode)) {
		return "a socket";
	}
	if (e->fts_statp != NULL &&
	    (S_ISCHR(e->fts_statp->st_mode) || S_ISBLK(e->fts_statp->st_mode))) {
		return "a device";
	}
	return "not a regular file";
}

/*
 * Every regular *.ko below @dir, as find -H finds them: @dir itself is
 * followed when it is a symbolic link (the user named it), nothing below
 * it is. Other *.ko entries (FIFOs, devices, links) are skipped, with a
 * note when @verbose.
 */
static ms_err
list_from_dir(struct ms_module_list *list, const struct ms_app_sink *sink, const char *dir,
	      bool verbose)
{
	char *roots[2] = { NULL, NULL };
	size_t first = list->n, len;
	FTS *fts = NULL;
	FTSENT *e = NULL;
	ms_err err = MS_OK;

	/* fts_open() takes char *const *: a copy rather than a cast. */
	roots[0] = strdup(dir);
	if (roots[0] == NULL) {
		return MS_E_NOMEM;
	}
	fts = fts_open(roots, FTS_PHYSICAL | FTS_COMFOLLOW | FTS_NOCHDIR, NULL);
	if (fts == NULL) {
		ms_app_err(sink, "%s: %s", dir, strerror(errno));
		free(roots[0]);
		return MS_E_IO;
	}
	while (err == MS_OK) {
		errno = 0;
		e = fts_read(fts);
		if (e == NULL) {
			if (errno != 0) {
				ms_app_err(sink, "%s: %s", dir, strerror(errno));
				err = MS_E_IO;
			}
			break;
		}
		len = strlen(e->fts_path);	/* fts_pathlen is an unsigned short */
		switch (e->fts_info) {
		case FTS_DNR:
		case FTS_ERR:
		case FTS_NS:
			ms_app_err(sink, "%s: cannot read while looking for modules: %s",
				   e->fts_path, strerror(e->fts_errno));
			err = MS_E_IO;
			break;
		case FTS_F:
			if (is_ko(e->fts_path)) {
				err = list_add(list, sink, e->fts_path, len);
			}
			break;
		case FTS_D:
		case FTS_DP:
		case FTS_DC:
		case FTS_DOT:
			break;
		default:
			if (e->fts_level == 0) {
				ms_app_err(sink, "%s: %s: not a directory of modules", e->fts_path,
					   entry_kind(e));
				err = MS_E_ARG;
			} else if (verbose && is_ko(e->fts_path)) {
				ms_app_warn(sink, "%s: %s; skipped", e->fts_path, entry_kind(e));
			}
			break;
		}
	}
	if (fts_close(fts) != 0 && err == MS_OK) {
		ms_app_err(sink, "%s: %s", dir, strerror(errno));
		err = MS_E_IO;
	}
	free(roots[0]);
	if (err == MS_OK && list->n > first) {
		qsort(list->path + first, list->n - first, sizeof(*list->path), path_cmp);
	}
	return err;
}

ms_err
ms_app_list_build(const struct ms_opts *o, const struct ms_app_sink *sink,
		  struct ms_module_list *list)
{
	ms_err err = MS_OK;

	memset(list, 0, sizeof(*list));
	for (size_t i = 0; i < o->n_modules && err == MS_OK; i++) {
		err = list_add(list, sink, o->modules[i], strlen(o->modules[i]));
	}
	for (size_t i = 0; i < o->n_files_from && err == MS_OK; i++) {
		err = list_from_file(list, sink, o->files_from[i], o->null_sep);
	}
	for (size_t i = 0; i < o->n_dirs && err == MS_OK; i++) {
		err = list_from_dir(list, sink, o->dirs[i], o->verbose);
	}
	if (err == MS_E_NOMEM) {
		ms_app_err(sink, "module list: %s", ms_err_str(err));
	}
	return err;
}

void
ms_app_list_free(struct ms_module_list *list)
{
	for (size_t i = 0; i < list->n; i++) {
		free(list->path[i]);
	}
	free(list->path);
	memset(list, 0, sizeof(*list));
}
