// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plain driver of a fuzz target, built with -DMS_FUZZ_STDIN instead of
 * libFuzzer: runs LLVMFuzzerTestOneInput() once per file named on the
 * command line, or once on standard input ("-" or no argument), so that a
 * corpus replays under any compiler's sanitizers. Test code only.
 */
#ifndef MS_FUZZ_STDIN
#error "fuzz_stdin.c is the -DMS_FUZZ_STDIN driver; libFuzzer builds leave it out"
#endif

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

#define INPUT_MAX (16u * 1024u * 1024u)

/* Reads @fd to the end into an exact-size buffer, so ASan sees any overread. */
static int
run_fd(int fd, const char *name)
{
	uint8_t *buf = NULL, *exact = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (len == cap) {
			uint8_t *grown = NULL;

			if (cap == INPUT_MAX) {
				fprintf(stderr, "%s: input over %u bytes\n", name, INPUT_MAX);
				free(buf);
				return 1;
			}
			cap = cap == 0 ? 4096 : cap * 2;
			grown = realloc(buf, cap);
			if (grown == NULL) {
				free(buf);
				return 1;
			}
			buf = grown;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			perror(name);
			free(buf);
			return 1;
		}
		if (n == 0) {
			break;
		}
		len += (size_t)n;
	}
	exact = malloc(len == 0 ? 1 : len);
	if (exact == NULL) {
		free(buf);
		return 1;
	}
	if (len > 0) {
		memcpy(exact, buf, len);
	}
	free(buf);
	(void)LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2) {
		return run_fd(STDIN_FILENO, "standard input");
	}
	for (int i = 1; i < argc; i++) {
		int fd = STDIN_FILENO;

		if (strcmp(argv[i], "-") != 0) {
			fd = open(argv[i], O_RDONLY | O_CLOEXEC);
			if (fd < 0) {
				perror(argv[i]);
				rc = 1;
				continue;
			}
		}
		if (run_fd(fd, argv[i]) != 0) {
			rc = 1;
		}
		if (fd != STDIN_FILENO) {
			close(fd);
		}
	}
	return rc;
}
