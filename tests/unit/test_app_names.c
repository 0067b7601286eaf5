// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the names of a run's modules (src/app/names.c): names of
 * one directory entry are one module, the first listed stays; hard links
 * are separate modules chained in list order; a name that cannot be
 * stat'ed keeps its place.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/app/app.h"
#include "test.h"
#include "test_app_sink.h"

static void
touch(const char *path)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	fputs("module", f);
	CHECK(fclose(f) == 0);
}

static size_t
index_of(const struct ms_module_list *list, const char *path)
{
	for (size_t i = 0; i < list->n; i++) {
		if (strcmp(list->path[i], path) == 0) {
			return i;
		}
	}
	return SIZE_MAX;
}

MS_TEST(app_names_same_entry_once_hard_links_chained)
{
	char top[] = "/tmp/app-names-XXXXXX";
	char sub[64], a[96], a_dot[96], a_up[96], b[96], c[96], sub_b[96], missing[96];
	char *names[9];
	struct ms_opts o;
	struct ms_module_list list;
	struct ms_name_set set;
	size_t ia, ib, isb, ic;
	struct test_sink rec;

	test_sink_init(&rec);
	CHECK(mkdtemp(top) != NULL);
	snprintf(sub, sizeof(sub), "%s/sub", top);
	CHECK(mkdir(sub, 0700) == 0);
	snprintf(a, sizeof(a), "%s/a.ko", top);
	snprintf(a_dot, sizeof(a_dot), "%s/./a.ko", top);
	snprintf(a_up, sizeof(a_up), "%s/sub/../a.ko", top);
	snprintf(b, sizeof(b), "%s/b.ko", top);
	snprintf(c, sizeof(c), "%s/c.ko", top);
	snprintf(sub_b, sizeof(sub_b), "%s/sub/b.ko", top);
	snprintf(missing, sizeof(missing), "%s/missing.ko", top);
	touch(a);
	touch(c);
	CHECK(link(a, b) == 0);		/* b.ko and sub/b.ko: hard links of a.ko */
	CHECK(link(a, sub_b) == 0);

	/* c, a, missing, b, a again (two ways), sub/b, missing again, c again */
	names[0] = c;
	names[1] = a;
	names[2] = missing;
	names[3] = b;
	names[4] = a_dot;
	names[5] = a_up;
	names[6] = sub_b;
	names[7] = missing;
	names[8] = c;
	memset(&o, 0, sizeof(o));
	o.modules = names;
	o.n_modules = 9;
	CHECK_ERR(ms_app_list_build(&o, &rec.sink, &list), MS_OK);
	CHECK_EQ(list.n, 9);
	CHECK_EQ(rec.n, 0);
	CHECK_ERR(ms_app_names_build(&list, true, &rec.sink, &set), MS_OK);
	/* -v: a note for each name dropped (a.ko twice, c.ko once) and one for the links. */
	CHECK_EQ(rec.n, 4);
	CHECK(test_sink_find(&rec, MS_APP_SAY_ERROR, "/./a.ko names the same module as") >= 0);
	CHECK(test_sink_find(&rec, MS_APP_SAY_ERROR, "and 2 more name(s) are hard links") >= 0);

	/* a.ko twice more and c.ko once more dropped; a missing name is kept each time. */
	CHECK(list.n == 6);
	ia = index_of(&list, a);
	ib = index_of(&list, b);
	isb = index_of(&list, sub_b);
	ic = index_of(&list, c);
	CHECK(ic == 0 && ia == 1 && ib == 3 && isb == 4);
	CHECK(strcmp(list.path[2], missing) == 0 && strcmp(list.path[5], missing) == 0);
	CHECK(index_of(&list, a_dot) == SIZE_MAX && index_of(&list, a_up) == SIZE_MAX);

	/* a -> b -> sub/b, in list order; the others stand alone. */
	CHECK(set.next_link[ia] == ib && set.next_link[ib] == isb && set.next_link[isb] == SIZE_MAX);
	CHECK(!set.is_later_link[ia] && set.is_later_link[ib] && set.is_later_link[isb]);
	CHECK(set.later_links[ia] == 2 && set.later_links[ib] == 1 && set.later_links[isb] == 0);
	CHECK(set.next_link[ic] == SIZE_MAX && !set.is_later_link[ic] && set.later_links[ic] == 0);
	CHECK(set.next_link[2] == SIZE_MAX && set.next_link[5] == SIZE_MAX);
	CHECK(!set.is_later_link[2] && !set.is_later_link[5]);

	ms_app_names_free(&set);
	ms_app_names_free(&set);
	ms_app_list_free(&list);
	unlink(a);
	unlink(b);
	unlink(c);
	unlink(sub_b);
	rmdir(sub);
	rmdir(top);
}
