// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: `modsign strip` as a whole (ms_mod_strip: the layout read
 * from the module's trailer, then the payload written through a temp file
 * and a rename), on a real file, in place or to a dest.
 *
 * Input: one flags byte (bit 0: write to a dest beside the module instead
 * of in place), then the module file's bytes.
 *
 * Oracles, against the kernel's trailer rules written out here apart from
 * src/modfmt (kernel/module/signing.c, mod_check_sig()): a module without
 * the marker is MS_E_NOTFOUND; one with the marker and a broken rule
 * (id_type not 2, a non-zero algo/hash/signer_len/key_id_len/pad, sig_len
 * reaching the file start, or 0) is MS_E_MALFORMED, each with a reason;
 * a signed one becomes exactly its first file_len - 40 - sig_len bytes. On
 * failure the module is untouched and no dest is written; in every case
 * no temp file is left in the directory.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "modfmt/modfmt.h"
#include "modfmt/strip.h"
#include "modfmt/zmod.h"

#define FLAG_DEST	0x01u

static bool dir_chosen;

/* What the kernel's rules make of @p: MS_OK with the payload length, or the verdict. */
static ms_err
reference(const uint8_t *p, size_t len, size_t *payload)
{
	const uint8_t *info;
	uint32_t sig_len;

	/* module_sig_check(): the marker counts only in a file longer than it. */
	if (len <= MS_MOD_MAGIC_LEN ||
	    memcmp(p + len - MS_MOD_MAGIC_LEN, MS_MOD_MAGIC, MS_MOD_MAGIC_LEN) != 0) {
		return MS_E_NOTFOUND;
	}
	/* mod_verify_sig(): no room for the module_signature. */
	if (len <= MS_MOD_TRAILER_LEN) {
		return MS_E_MALFORMED;
	}
	info = p + len - MS_MOD_TRAILER_LEN;
	sig_len = (uint32_t)info[8] << 24 | (uint32_t)info[9] << 16 | (uint32_t)info[10] << 8 |
		  info[11];
	if (sig_len >= len - MS_MOD_TRAILER_LEN || info[2] != MS_MOD_ID_PKCS7 ||
	    info[0] != 0 || info[1] != 0 || info[3] != 0 || info[4] != 0 || info[5] != 0 ||
	    info[6] != 0 || info[7] != 0 || sig_len == 0) {
		return MS_E_MALFORMED;
	}
	*payload = len - MS_MOD_TRAILER_LEN - sig_len;
	return MS_OK;
}

/* The whole of @path into a malloc'd buffer (or NULL when it does not exist). */
static uint8_t *
slurp(const char *path, size_t *len)
{
	uint8_t *buf = NULL;
	size_t cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	*len = 0;
	if (fd < 0) {
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (*len == cap) {
			cap = cap == 0 ? 4096 : 2 * cap;
			buf = realloc(buf, cap);
			if (buf == NULL) {
				fuzz_die("realloc");
			}
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0) {
			fuzz_die("read back");
		}
		if (n == 0) {
			break;
		}
		*len += (size_t)n;
	}
	close(fd);
	return buf;
}

/* Only m.ko (and the dest, when @dest_ok) are left in the module's directory. */
static void
check_dir(const char *path, const char *dest_name, bool dest_ok)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct dirent *e;
	DIR *d;

	if (slash == NULL || (size_t)(slash - path) >= sizeof(dir)) {
		fuzz_die("temp path");
	}
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	d = opendir(dir);
	if (d == NULL) {
		fuzz_die("opendir");
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, slash + 1) == 0 ||
		    (dest_ok && strcmp(e->d_name, dest_name) == 0)) {
			continue;
		}
		fuzz_die(dest_ok || strcmp(e->d_name, dest_name) != 0 ?
			 "strip left a temp file behind" : "strip wrote a dest after a failure");
	}
	closedir(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ms_modfile mf;
	char dest[4096 + 16];
	const char *path, *why = NULL;
	const char *slash;
	bool to_dest;
	size_t payload = 0, got_len = 0;
	uint8_t *got = NULL;
	ms_err want, err;

	if (size < 1) {
		return 0;
	}
	/*
	 * Each strip fsyncs a file and a directory: on a tmpfs that costs
	 * nothing, on a disk it caps the run at ~100 inputs a second.
	 */
	if (!dir_chosen) {
		dir_chosen = true;
		if (access("/dev/shm", W_OK | X_OK) == 0) {
			setenv("TMPDIR", "/dev/shm", 1);
		}
	}
	to_dest = (data[0] & FLAG_DEST) != 0;
	data++;
	size--;
	path = fuzz_tmp_file(data, size);
	slash = strrchr(path, '/');
	snprintf(dest, sizeof(dest), "%.*s/stripped.ko", (int)(slash - path), path);
	unlink(dest);
	want = reference(data, size, &payload);

	ms_modfile_init(&mf);
	err = ms_modfile_open(&mf, path);
	if (err != MS_OK) {
		/*
		 * Only a file with nothing in it, or whose first bytes are a
		 * compressed container's magic (its name, plain, must agree),
		 * may be refused before its trailer is read.
		 */
		if (size != 0 && ms_mod_zfmt_sniff(data, size) == MS_ZFMT_NONE) {
			fuzz_die("cannot open the temp module");
		}
		ms_modfile_clear(&mf);
		return 0;
	}
	err = ms_mod_strip(&mf, to_dest ? dest : NULL, &why);
	ms_modfile_clear(&mf);
	if (err != want) {
		fuzz_die("ms_mod_strip: verdict differs from the kernel's rules");
	}
	if (err != MS_OK && why == NULL) {
		fuzz_die("ms_mod_strip: refused without a reason");
	}
	got = slurp(to_dest && err == MS_OK ? dest : path, &got_len);
	if (got == NULL && !(got_len == 0 && size == 0)) {
		fuzz_die("the module (or its dest) is gone");
	}
	if (err == MS_OK) {
		if (got_len != payload || memcmp(got, data, payload) != 0) {
			fuzz_die("stripped module is not the payload");
		}
		if (to_dest) {
			free(got);
			got = slurp(path, &got_len);
			if (got_len != size || memcmp(got, data, size) != 0) {
				fuzz_die("strip to a dest changed the module");
			}
		}
	} else if (got_len != size || (size != 0 && memcmp(got, data, size) != 0)) {
		fuzz_die("a refused strip changed the module");
	}
	free(got);
	check_dir(path, "stripped.ko", err == MS_OK && to_dest);
	unlink(dest);
	return 0;
}
