// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the module list reader of bulk mode (ms_app_list_build
 * with --files-from naming a memfd that holds the input), newline- and
 * NUL-separated (-0). Input: the list file.
 *
 * Oracle: the names read are exactly the input split at the separator,
 * empty names dropped; a name of 4096 bytes or more, or (newline mode) one
 * holding a NUL or ending with CR (a DOS line end), fails the whole list.
 */
#include <string.h>

#include "app/app.h"
#include "fuzz.h"

#define NAME_MAX_LEN 4095

/* Checks @list against the input split at @sep; @err is what the reader returned. */
static void
check_list(const uint8_t *p, size_t len, char sep, const struct ms_module_list *list, ms_err err)
{
	size_t start = 0, n = 0;
	bool want_fail = false;

	for (size_t i = 0; i <= len && !want_fail; i++) {
		size_t piece;

		if (i < len && p[i] != (uint8_t)sep) {
			continue;
		}
		piece = i - start;
		if (piece > NAME_MAX_LEN || (piece > 0 && memchr(p + start, '\0', piece) != NULL) ||
		    (sep == '\n' && piece > 0 && p[start + piece - 1] == '\r')) {
			want_fail = true;
			break;
		}
		if (piece > 0) {
			if (err == MS_OK &&
			    (n >= list->n || strlen(list->path[n]) != piece ||
			     memcmp(list->path[n], p + start, piece) != 0)) {
				fuzz_die("list name differs from the input");
			}
			n++;
		}
		start = i + 1;
	}
	if (want_fail != (err != MS_OK)) {
		fuzz_die(want_fail ? "bad list accepted" : "good list refused");
	}
	if (err == MS_OK && n != list->n) {
		fuzz_die("list has a different number of names");
	}
}

static void
one_mode(const uint8_t *data, size_t size, bool null_sep)
{
	struct ms_opts o;
	struct ms_module_list list;
	ms_err err;

	memset(&o, 0, sizeof(o));
	o.bulk = true;
	o.null_sep = null_sep;
	o.files_from[0] = fuzz_memfd_path(data, size);
	o.n_files_from = 1;
	err = ms_app_list_build(&o, NULL, &list);
	check_list(data, size, null_sep ? '\0' : '\n', &list, err);
	ms_app_list_free(&list);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_mode(data, size, false);
	one_mode(data, size, true);
	return 0;
}
