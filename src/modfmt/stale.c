// SPDX-License-Identifier: GPL-2.0-only
/*
 * Removing temp files that an earlier modsign run left behind when it was
 * killed: only names modsign makes (".<name>.modsign-<pid>-<16 hex>.tmp"),
 * only regular files owned by us, and only when that pid is gone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "modfmt.h"
#include "modfmt_internal.h"

/* Parses the pid out of a temp name; 0 when @name is not one of ours. */
static long
tmp_name_pid(const char *name)
{
	const char *tag = NULL, *p = NULL;
	size_t len = strlen(name);
	char *end = NULL;
	long pid;

	if (name[0] != '.' || len < 1 + strlen(MS_TMP_TAG) + 2 + 16 + 4 ||
	    strcmp(name + len - 4, ".tmp") != 0) {
		return 0;
	}
	/* The last tag: a module's own name may contain the text too. */
	for (p = strstr(name, MS_TMP_TAG); p != NULL; p = strstr(p + 1, MS_TMP_TAG)) {
		tag = p;
	}
	if (tag == NULL || tag == name) {	/* ".modsign-...": no module name */
		return 0;
	}
	p = tag + strlen(MS_TMP_TAG);
	if (*p < '1' || *p > '9') {
		return 0;
	}
	errno = 0;
	pid = strtol(p, &end, 10);
	if (errno != 0 || pid <= 0 || *end != '-') {
		return 0;
	}
	end++;
	for (int i = 0; i < 16; i++) {
		bool hex = (end[i] >= '0' && end[i] <= '9') || (end[i] >= 'a' && end[i] <= 'f');

		if (!hex) {
			return 0;
		}
	}
	return strcmp(end + 16, ".tmp") == 0 ? pid : 0;
}

static bool
pid_is_gone(long pid)
{
	/* EPERM: alive under another user; only ESRCH means gone. */
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

ms_err
ms_mod_tmp_clean_dir(const char *dir, size_t *removed)
{
	DIR *d = NULL;
	struct dirent *e;
	int dfd;

	*removed = 0;
	d = opendir(dir);
	if (d == NULL) {
		return MS_E_IO;
	}
	dfd = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		long pid = tmp_name_pid(e->d_name);

		if (pid == 0 || pid == (long)getpid() || !pid_is_gone(pid)) {
			continue;
		}
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
			continue;
		}
		if (unlinkat(dfd, e->d_name, 0) == 0) {
			(*removed)++;
		}
	}
	closedir(d);
	return MS_OK;
}
