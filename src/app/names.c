// SPDX-License-Identifier: GPL-2.0-only
/*
 * The names of a run's modules, by what they name on disk. A module is a
 * directory entry: signing replaces the entry with a new file. Two names of
 * one entry (a.ko, ./a.ko, its absolute path, a -r walk and a name) are one
 * module, signed once. Two entries of one inode (hard links) are two
 * modules, each given its own signed file, as sign-file run on each name
 * does; they go to one thread one after the other, since a flock() taken
 * on the inode under the first name would make a second thread wait.
 */
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app_internal.h"

/* What a name resolves to: the file's inode and its directory entry. */
struct name_key {
	size_t i;		/* index in the list */
	bool ok;		/* both stats worked */
	dev_t dev, dir_dev;
	ino_t ino, dir_ino;
	const char *base;	/* the last component, in the list's own path */
};

static int
key_cmp(const void *pa, const void *pb)
{
	const struct name_key *a = pa, *b = pb;
	int c;

	if (a->ok != b->ok) {
		return a->ok ? -1 : 1;
	}
	if (a->ok && (a->dev != b->dev || a->ino != b->ino)) {
		return a->dev != b->dev ? (a->dev < b->dev ? -1 : 1) : (a->ino < b->ino ? -1 : 1);
	}
	if (a->ok && (a->dir_dev != b->dir_dev || a->dir_ino != b->dir_ino)) {
		return a->dir_dev != b->dir_dev ? (a->dir_dev < b->dir_dev ? -1 : 1) :
						  (a->dir_ino < b->dir_ino ? -1 : 1);
	}
	c = a->ok ? strcmp(a->base, b->base) : 0;
	if (c != 0) {
		return c;
	}
	return a->i < b->i ? -1 : a->i > b->i ? 1 : 0;
}

static bool
same_inode(const struct name_key *a, const struct name_key *b)
{
	return a->ok && b->ok && a->dev == b->dev && a->ino == b->ino;
}

static bool
same_entry(const struct name_key *a, const struct name_key *b)
{
	return same_inode(a, b) && a->dir_dev == b->dir_dev && a->dir_ino == b->dir_ino &&
	       strcmp(a->base, b->base) == 0;
}

/*
 * lstat() the name itself (a symlink is its own entry, refused later), stat()
 * its directory (through symlinks, as open() resolves it). A name either
 * stat fails for keeps its own place: opening it reports why.
 */
static ms_err
key_of(const char *path, size_t i, struct name_key *k)
{
	struct stat st, dst;
	char *dcopy = NULL;

	memset(k, 0, sizeof(*k));
	k->i = i;
	dcopy = strdup(path);
	if (dcopy == NULL) {
		return MS_E_NOMEM;
	}
	/* As basename(): a name that ends in '/' fails lstat() below unless a directory. */
	k->base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
	if (lstat(path, &st) == 0 && stat(dirname(dcopy), &dst) == 0) {
		k->ok = true;
		k->dev = st.st_dev;
		k->ino = st.st_ino;
		k->dir_dev = dst.st_dev;
		k->dir_ino = dst.st_ino;
	}
	free(dcopy);
	return MS_OK;
}

static int
index_cmp(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;

	return a < b ? -1 : a > b ? 1 : 0;
}

/*
 * Chains the kept names of one inode (@k[0..@n), sorted by entry) in list
 * order: each points to the next, all but the first are reached that way.
 * @idx has room for @n indices.
 */
static void
chain_links(const struct name_key *k, size_t n, const bool *drop, size_t *idx,
	    struct ms_name_set *set)
{
	size_t m = 0;

	for (size_t t = 0; t < n; t++) {
		if (!drop[k[t].i]) {
			idx[m++] = k[t].i;
		}
	}
	qsort(idx, m, sizeof(*idx), index_cmp);
	for (size_t t = 0; t < m; t++) {
		set->next_link[idx[t]] = t + 1 < m ? idx[t + 1] : SIZE_MAX;
		set->is_later_link[idx[t]] = t > 0;
		set->later_links[idx[t]] = (unsigned)(m - 1 - t);
	}
}

/* Drops the names marked in @drop from @list and @set, renumbering the chains. */
static ms_err
compact(struct ms_module_list *list, const bool *drop, struct ms_name_set *set)
{
	size_t n = list->n, w = 0;
	size_t *new_index = calloc(n + 1, sizeof(*new_index));

	if (new_index == NULL) {
		return MS_E_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		new_index[i] = drop[i] ? SIZE_MAX : w++;
	}
	w = 0;
	for (size_t i = 0; i < n; i++) {
		if (drop[i]) {
			free(list->path[i]);
			continue;
		}
		list->path[w] = list->path[i];
		set->next_link[w] = set->next_link[i] == SIZE_MAX ? SIZE_MAX :
				    new_index[set->next_link[i]];
		set->is_later_link[w] = set->is_later_link[i];
		set->later_links[w] = set->later_links[i];
		w++;
	}
	list->n = w;
	free(new_index);
	return MS_OK;
}

ms_err
ms_app_names_build(struct ms_module_list *list, bool verbose, const struct ms_app_sink *sink,
		   struct ms_name_set *out)
{
	struct name_key *k = NULL;
	bool *drop = NULL;
	size_t *idx = NULL;
	size_t n = list->n;
	ms_err err = MS_E_NOMEM;

	memset(out, 0, sizeof(*out));
	k = calloc(n + 1, sizeof(*k));
	drop = calloc(n + 1, sizeof(*drop));
	idx = calloc(n + 1, sizeof(*idx));
	out->next_link = calloc(n + 1, sizeof(*out->next_link));
	out->is_later_link = calloc(n + 1, sizeof(*out->is_later_link));
	out->later_links = calloc(n + 1, sizeof(*out->later_links));
	if (k == NULL || drop == NULL || idx == NULL || out->next_link == NULL ||
	    out->is_later_link == NULL || out->later_links == NULL) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		out->next_link[i] = SIZE_MAX;
		err = key_of(list->path[i], i, &k[i]);
		if (err != MS_OK) {
			goto out;
		}
	}
	qsort(k, n, sizeof(*k), key_cmp);
	/* Names of one entry are adjacent, the first listed first: it stays. */
	for (size_t s = 0, first = 0; s < n; s++) {
		if (s == 0 || !same_entry(&k[first], &k[s])) {
			first = s;
			continue;
		}
		drop[k[s].i] = true;
		if (verbose) {
			ms_app_err(sink, "%s names the same module as %s: signed once",
				   list->path[k[s].i], list->path[k[first].i]);
		}
	}
	for (size_t s = 0, e; s < n; s = e) {
		for (e = s + 1; e < n && same_inode(&k[s], &k[e]); e++) {
		}
		chain_links(k + s, e - s, drop, idx, out);
		if (verbose && out->later_links[idx[0]] > 0) {
			ms_app_err(sink, "%s and %u more name(s) are hard links of one file: each "
				   "name gets its own signed file, one after the other",
				   list->path[idx[0]], out->later_links[idx[0]]);
		}
	}
	err = compact(list, drop, out);
out:
	free(k);
	free(drop);
	free(idx);
	if (err != MS_OK) {
		ms_app_names_free(out);
		ms_app_err(sink, "module list: %s", ms_err_str(err));
	}
	return err;
}

void
ms_app_names_free(struct ms_name_set *set)
{
	free(set->next_link);
	free(set->is_later_link);
	free(set->later_links);
	memset(set, 0, sizeof(*set));
}
