// SPDX-License-Identifier: GPL-2.0-only
/* Helpers of the fuzz targets: inputs as files, TEST-ONLY data. Test code only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"


/* Writes all of @p at offset 0 of @fd and cuts the file there. */
static void
rewrite(int fd, const uint8_t *p, size_t len)
{
	size_t done = 0;

	if (ftruncate(fd, 0) != 0) {
		fuzz_die("ftruncate");
	}
	while (done < len) {
		ssize_t n = pwrite(fd, p + done, len - done, (off_t)done);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			fuzz_die("pwrite");
		}
		done += (size_t)n;
	}
}

const char *
fuzz_memfd_path(const uint8_t *p, size_t len)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("modsign-fuzz", MFD_CLOEXEC);
		if (fd < 0) {
			fuzz_die("memfd_create");
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	rewrite(fd, p, len);
	return path;
}

static char tmp_dir[4096];
static char tmp_path[4096 + 16];

static void
tmp_remove(void)
{
	if (tmp_dir[0] != '\0') {
		unlink(tmp_path);
		rmdir(tmp_dir);
		tmp_dir[0] = '\0';
	}
}

void
fuzz_die(const char *what)
{
	fprintf(stderr, "fuzz: invariant broken: %s\n", what);
	tmp_remove();	/* abort() skips atexit() */
	abort();
}

const char *
fuzz_tmp_file(const uint8_t *p, size_t len)
{
	int fd;

	if (tmp_dir[0] == '\0') {
		const char *base = getenv("TMPDIR");

		snprintf(tmp_dir, sizeof(tmp_dir), "%s/modsign-fuzz.XXXXXX",
			 base != NULL && base[0] != '\0' ? base : "/tmp");
		if (mkdtemp(tmp_dir) == NULL) {
			tmp_dir[0] = '\0';
			fuzz_die("mkdtemp");
		}
		snprintf(tmp_path, sizeof(tmp_path), "%s/m.ko", tmp_dir);
		atexit(tmp_remove);
	}
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		fuzz_die("open temp file");
	}
	rewrite(fd, p, len);
	close(fd);
	return tmp_path;
}

uint8_t *
fuzz_data_load(const char *name, size_t *len)
{
	char path[4096];
	FILE *f = NULL;
	uint8_t *buf = NULL;
	long size;

	snprintf(path, sizeof(path), "%s/%s", MS_FUZZ_DATA_DIR, name);
	f = fopen(path, "rb");
	if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
		fprintf(stderr, "fuzz: cannot read %s\n", path);
		abort();
	}
	size = ftell(f);
	if (size <= 0 || fseek(f, 0, SEEK_SET) != 0) {
		fuzz_die("test data file empty or unreadable");
	}
	buf = malloc((size_t)size);
	if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fuzz_die("reading test data");
	}
	fclose(f);
	*len = (size_t)size;
	return buf;
}
