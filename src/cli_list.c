// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module list of a bulk run: names on the command line, --files-from
 * lists (newline- or NUL-separated, "-" for stdin) and every *.ko below a
 * -r directory. Parses untrusted input.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define LIST_MAX 1000000	/* modules in one run */
#define PATH_LEN_MAX 4096

static ms_err
list_add(struct ms_module_list *list, const char *p, size_t len)
{
	char *copy;

	if (len == 0) {
		return MS_OK;	/* blank lines separate nothing */
	}
	if (len >= PATH_LEN_MAX || memchr(p, '\0', len) != NULL) {
		ms_cli_error("module list: a name of %zu bytes is too long or has a NUL", len);
		return MS_E_MALFORMED;
	}
	if (list->n == LIST_MAX) {
		ms_cli_error("module list: more than %d modules", LIST_MAX);
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

/* Reads @fd to the end, adding each @sep-terminated name. */
static ms_err
list_read_fd(struct ms_module_list *list, int fd, const char *name, char sep)
{
	char buf[65536];
	char *name_buf = NULL;
	size_t len = 0;
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
			ms_cli_error("%s: read: %s", name, strerror(errno));
			err = MS_E_IO;
			goto out;
		}
		if (n == 0) {
			break;
		}
		for (size_t i = 0; i < (size_t)n; i++) {
			if (buf[i] == sep) {
				err = list_add(list, name_buf, len);
				if (err != MS_OK) {
					goto out;
				}
				len = 0;
			} else if (len == PATH_LEN_MAX - 1) {
				ms_cli_error("%s: a name longer than %d bytes", name, PATH_LEN_MAX - 1);
				err = MS_E_MALFORMED;
				goto out;
			} else {
				name_buf[len++] = buf[i];
			}
		}
	}
	/* The last name may lack its separator. */
	err = list_add(list, name_buf, len);
out:
	free(name_buf);
	return err;
}

static ms_err
list_from_file(struct ms_module_list *list, const char *name, bool null_sep)
{
	int fd = STDIN_FILENO;
	ms_err err;

	if (strcmp(name, "-") != 0) {
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			ms_cli_error("%s: open: %s", name, strerror(errno));
			return MS_E_IO;
		}
	}
	err = list_read_fd(list, fd, strcmp(name, "-") == 0 ? "standard input" : name,
			   null_sep ? '\0' : '\n');
	if (fd != STDIN_FILENO) {
		close(fd);
	}
	return err;
}

/* nftw() has no user pointer: the walk's state lives here for its duration. */
static struct ms_module_list *walk_list;
static ms_err walk_err;

static int
walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t len = strlen(path);

	(void)st;
	(void)ftw;
	if (type == FTW_DNR || type == FTW_NS) {
		ms_cli_error("%s: cannot read while looking for modules", path);
		walk_err = MS_E_IO;
		return 1;
	}
	if (type != FTW_F || len < 3 || strcmp(path + len - 3, ".ko") != 0) {
		return 0;
	}
	walk_err = list_add(walk_list, path, len);
	return walk_err != MS_OK;
}

static int
path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static ms_err
list_from_dir(struct ms_module_list *list, const char *dir)
{
	size_t first = list->n;

	walk_list = list;
	walk_err = MS_OK;
	/* FTW_PHYS: a symlink is not followed, and not a module to sign. */
	if (nftw(dir, walk_one, 32, FTW_PHYS) != 0 && walk_err == MS_OK) {
		ms_cli_error("%s: %s", dir, strerror(errno));
		walk_err = MS_E_IO;
	}
	walk_list = NULL;
	if (walk_err == MS_OK) {
		qsort(list->path + first, list->n - first, sizeof(*list->path), path_cmp);
	}
	return walk_err;
}

ms_err
ms_cli_list_build(const struct ms_opts *o, struct ms_module_list *list)
{
	ms_err err = MS_OK;

	memset(list, 0, sizeof(*list));
	for (size_t i = 0; i < o->n_modules && err == MS_OK; i++) {
		err = list_add(list, o->modules[i], strlen(o->modules[i]));
	}
	for (size_t i = 0; i < o->n_files_from && err == MS_OK; i++) {
		err = list_from_file(list, o->files_from[i], o->null_sep);
	}
	for (size_t i = 0; i < o->n_dirs && err == MS_OK; i++) {
		err = list_from_dir(list, o->dirs[i]);
	}
	if (err == MS_E_NOMEM) {
		ms_cli_error("module list: %s", ms_err_str(err));
	}
	return err;
}

void
ms_cli_list_free(struct ms_module_list *list)
{
	for (size_t i = 0; i < list->n; i++) {
		free(list->path[i]);
	}
	free(list->path);
	memset(list, 0, sizeof(*list));
}
