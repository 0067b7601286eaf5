// SPDX-License-Identifier: GPL-2.0-only
/*
 * Runs every MS_TEST (or those named on the command line) in a forked
 * child, so that a crash or sanitizer abort counts as one failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/common/ms_common.h"
#include "test.h"

extern const struct ms_test *const __start_ms_tests[];
extern const struct ms_test *const __stop_ms_tests[];

const char *
ms_test_err_name(int err)
{
	/* Every code of enum ms_err, in its order. */
	static const char *const names[] = {
		"MS_OK", "MS_E_INTERNAL", "MS_E_ARG", "MS_E_NOMEM", "MS_E_IO", "MS_E_NOSPACE",
		"MS_E_MALFORMED", "MS_E_UNSUPPORTED", "MS_E_TOKEN", "MS_E_PIN", "MS_E_NOTFOUND",
		"MS_E_AMBIGUOUS", "MS_E_MISMATCH", "MS_E_SIGNED", "MS_E_CHANGED",
	};
	_Static_assert(sizeof(names) / sizeof(names[0]) == MS_E_CHANGED + 1,
		       "a name for every ms_err");

	if (err < 0 || (size_t)err >= sizeof(names) / sizeof(names[0])) {
		return "(not an ms_err)";
	}
	return names[err];
}

void
ms_test_mem_diff(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	size_t at = 0;

	while (at < n && x[at] == y[at]) {
		at++;
	}
	fprintf(stderr, "    first difference at offset %zu of %zu\n    got ", at, n);
	for (size_t i = at; i < n && i < at + 16; i++) {
		fprintf(stderr, " %02x", x[i]);
	}
	fprintf(stderr, "\n    want");
	for (size_t i = at; i < n && i < at + 16; i++) {
		fprintf(stderr, " %02x", y[i]);
	}
	fprintf(stderr, "\n");
}

size_t
ms_test_hex(const char *hex, unsigned char *out, size_t cap)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex != '\0'; hex++) {
		int v;

		if (isspace((unsigned char)*hex) || *hex == ':') {
			continue;
		}
		if (!isxdigit((unsigned char)*hex)) {
			fprintf(stderr, "bad hex digit '%c'\n", *hex);
			exit(1);
		}
		v = isdigit((unsigned char)*hex) ? *hex - '0' : (tolower((unsigned char)*hex) - 'a' + 10);
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (n >= cap) {
			fprintf(stderr, "hex longer than %zu bytes\n", cap);
			exit(1);
		}
		out[n++] = (unsigned char)(hi << 4 | v);
		hi = -1;
	}
	if (hi >= 0) {
		fprintf(stderr, "odd number of hex digits\n");
		exit(1);
	}
	return n;
}

const char *
ms_test_data(const char *name)
{
	static char path[4096];
	const char *dir = getenv("MS_TEST_DATA");

	if (dir == NULL) {
		dir = "tests/data";
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

unsigned char *
ms_test_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long size;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	buf = malloc((size_t)size + 1);
	if (buf == NULL || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (size_t)size;
	return buf;
}

static int
run_in_child(const struct ms_test *t)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		/* A hung test fails instead of hanging the run. */
		alarm(300);
		t->fn();
		fflush(NULL);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0) {
		return 1;
	}
	if (WIFEXITED(st)) {
		return WEXITSTATUS(st);
	}
	fprintf(stderr, "%s: killed by signal %d\n", t->name, WTERMSIG(st));
	return 1;
}

static bool
selected(const char *name, int argc, char **argv)
{
	if (argc < 2) {
		return true;
	}
	for (int i = 1; i < argc; i++) {
		if (strncmp(name, argv[i], strlen(argv[i])) == 0) {
			return true;
		}
	}
	return false;
}

int
main(int argc, char **argv)
{
	unsigned passed = 0, failed = 0, skipped = 0;

	for (const struct ms_test *const *t = __start_ms_tests; t < __stop_ms_tests; t++) {
		int st;

		if (!selected((*t)->name, argc, argv)) {
			continue;
		}
		st = run_in_child(*t);
		if (st == 77) {
			printf("SKIP %s\n", (*t)->name);
			skipped++;
		} else if (st == 0) {
			printf("PASS %s\n", (*t)->name);
			passed++;
		} else {
			printf("FAIL %s\n", (*t)->name);
			failed++;
		}
	}
	printf("unit: %u passed, %u failed, %u skipped\n", passed, failed, skipped);
	return (failed == 0 && passed > 0) ? 0 : 1;
}
