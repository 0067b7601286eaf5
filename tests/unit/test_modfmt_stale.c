// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for ms_mod_tmp_clean_dir: only dead runs' own temp files go. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/modfmt/modfmt.h"
#include "test.h"

static void
touch(const char *dir, const char *name)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK(write(fd, "x", 1) == 1);
	close(fd);
}

static bool
exists(const char *dir, const char *name)
{
	char path[4200];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

/* A pid that is certainly gone: a child that has exited and been reaped. */
static long
dead_pid(void)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		_exit(0);
	}
	CHECK(waitpid(pid, NULL, 0) == pid);
	return (long)pid;
}

MS_TEST(modfmt_stale_only_dead_runs_own_files)
{
	char dir[] = "/tmp/modfmt-stale-XXXXXX";
	char dead[128], live[128], link_name[128], path[4200];
	long pid = dead_pid();
	size_t removed = 99;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(dead, sizeof(dead), ".a.ko.modsign-%ld-0123456789abcdef.tmp", pid);
	snprintf(live, sizeof(live), ".b.ko.modsign-%ld-0123456789abcdef.tmp", (long)getppid());
	snprintf(link_name, sizeof(link_name), ".c.ko.modsign-%ld-0123456789abcdef.tmp", pid);
	touch(dir, dead);
	touch(dir, live);
	touch(dir, "a.ko");
	touch(dir, ".d.ko.modsign-1x-0123456789abcdef.tmp");	/* not a pid */
	touch(dir, ".e.ko.modsign-12-0123456789abcdeg.tmp");	/* not hex */
	touch(dir, ".modsign-12-0123456789abcdef.tmp");	/* no module name */
	touch(dir, "f.ko.modsign-12-0123456789abcdef.tmp");	/* no leading dot */
	snprintf(path, sizeof(path), "%s/%s", dir, link_name);
	CHECK(symlink("a.ko", path) == 0);

	CHECK_ERR(ms_mod_tmp_clean_dir(dir, &removed), MS_OK);
	CHECK(removed == 1);
	CHECK(!exists(dir, dead));
	CHECK(exists(dir, live));
	CHECK(exists(dir, link_name));
	CHECK(exists(dir, "a.ko"));
	CHECK(exists(dir, ".d.ko.modsign-1x-0123456789abcdef.tmp"));
	CHECK(exists(dir, ".e.ko.modsign-12-0123456789abcdeg.tmp"));
	CHECK(exists(dir, ".modsign-12-0123456789abcdef.tmp"));
	CHECK(exists(dir, "f.ko.modsign-12-0123456789abcdef.tmp"));
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK(system(path) == 0);
}

MS_TEST(modfmt_stale_missing_dir)
{
	size_t removed = 5;

	CHECK_ERR(ms_mod_tmp_clean_dir("/nonexistent/modsign-stale", &removed), MS_E_IO);
	CHECK(removed == 0);
}
