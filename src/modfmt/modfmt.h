/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The signed module file format (kernel's module_signature trailer and
 * marker) and safe file writes: a module is either untouched or completely
 * signed, never half-written. No crypto.
 */
#ifndef MS_MODFMT_H
#define MS_MODFMT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../common/ms_common.h"
#include "zmod.h"

/* include/linux/module_signature.h: the marker ends the file, no NUL. */
#define MS_MOD_MAGIC "~Module signature appended~\n"
#define MS_MOD_MAGIC_LEN 28
#define MS_MOD_INFO_LEN 12	/* struct module_signature */
#define MS_MOD_TRAILER_LEN (MS_MOD_INFO_LEN + MS_MOD_MAGIC_LEN)
#define MS_MOD_ID_PKCS7 2	/* PKEY_ID_PKCS7, the only id_type accepted */

/* The 12-byte module_signature, field by field. */
struct ms_mod_sig_info {
	uint8_t algo;
	uint8_t hash;
	uint8_t id_type;
	uint8_t signer_len;
	uint8_t key_id_len;
	uint8_t pad[3];
	uint32_t sig_len;	/* host order here; big-endian in the file */
};

/**
 * ms_mod_trailer_build() - the 40 bytes that follow a PKCS#7 blob of
 * @sig_len bytes: module_signature {0, 0, 2, 0, 0, {0,0,0}, be32 sig_len}
 * then the marker. @cap must be at least MS_MOD_TRAILER_LEN.
 * Return: MS_OK, MS_E_NOSPACE.
 */
ms_err ms_mod_trailer_build(uint32_t sig_len, uint8_t *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

/**
 * ms_mod_trailer_parse() - judge the last @tail_len bytes of a file of
 * @file_len bytes by the kernel's rules (kernel/module/signing.c,
 * kernel/module_signature.c mod_check_sig): marker present (and the file
 * longer than it), room for the info block and a module byte, sig_len
 * within the file, id_type 2, other fields zero. The one judge of a
 * trailer: ms_modfile_sig_state() and ms_mod_layout_read() (strip.h) ask
 * it. Parses untrusted input.
 * @tail_len:	at least 40, or the whole file (@tail_len == @file_len).
 * @why:	for MS_E_NOTFOUND and MS_E_MALFORMED, a static reason naming
 *		the first rule broken, in the kernel's order: "not signed",
 *		"trailer: file too short to hold a signature", "trailer:
 *		sig_len reaches past the start of the file", "trailer: id_type
 *		is not 2 (PKCS#7)", "trailer: non-zero algo, hash, signer_len,
 *		key_id_len or pad in module_signature"; else NULL. May be NULL.
 * Return: MS_OK (signed; *@out filled; sig_len may be 0, which the kernel's
 * trailer check lets through), MS_E_NOTFOUND (no marker: unsigned),
 * MS_E_MALFORMED (marker present but a rule broken), MS_E_ARG.
 */
ms_err ms_mod_trailer_parse(const uint8_t *tail, size_t tail_len, uint64_t file_len,
			    struct ms_mod_sig_info *out, const char **why) MS_MUST_CHECK;

/*
 * Largest module we read or write, signed or not. finit_module(2) reads the
 * file with kernel_read_file(..., INT_MAX, ...), so a bigger file cannot be
 * loaded; the ceiling also keeps every size below SIZE_MAX on 32-bit hosts.
 */
#define MS_MOD_SIZE_MAX ((uint64_t)INT_MAX)

/* How a signed module reaches the disk. */
enum ms_write_mode {
	/* New file beside the target (O_EXCL, original mode), fsync, rename, dir fsync. */
	MS_WRITE_REPLACE = 0,
	/*
	 * The same without the directory fsync, which the caller does once per
	 * directory later (ms_dir_sync()): until then a power loss may undo the
	 * rename and leave the original module (and a synced temp file, which
	 * the next run removes), never a partial one.
	 */
	MS_WRITE_REPLACE_DIR_SYNC_LATER,
};

/*
 * The temp files of a run's writes in progress (tmpset.c), owned by the run
 * and shared by its threads: give it to each struct ms_modfile (@tmps) and
 * to ms_file_write_atomic(), and a run told to stop at once removes them all
 * with ms_tmp_set_close() from any thread.
 */
struct ms_tmp_slot {
	int dir_fd;			/* the writer's; valid while the slot is used */
	char name[NAME_MAX + 1];
};

struct ms_tmp_set {
	pthread_mutex_t lock;
	struct ms_tmp_slot *slot;
	size_t n, cap;
	bool is_closed;
	bool is_init;
};

/** ms_tmp_set_init() - an empty set. Return: MS_OK, MS_E_NOMEM, MS_E_ARG. */
ms_err ms_tmp_set_init(struct ms_tmp_set *set) MS_MUST_CHECK;

/** ms_tmp_set_clear() - release an empty set; a no-op on one never initialised. */
void ms_tmp_set_clear(struct ms_tmp_set *set);

/**
 * ms_tmp_set_close() - remove every temp file in the set and let the set's
 * writers create and rename no more (they fail with ECANCELED, leaving their
 * target as it was). For a run about to end at once.
 * Return: the number of temp files removed.
 */
size_t ms_tmp_set_close(struct ms_tmp_set *set);

/*
 * One module being signed. Owns its file descriptor; the caller owns the
 * struct (ms_modfile_init/ms_modfile_clear). On failure, @op names the
 * failing call ("open", "rename", ...), @err_path the file it was about,
 * @sys_errno the errno (0 when not a system error) and, when a file was
 * refused for its type (MS_E_ARG), @file_type its S_IFMT bits; a module
 * whose container is broken (MS_E_MALFORMED, MS_E_UNSUPPORTED from open or
 * write) has a static reason in @why instead.
 *
 * A compressed module (.ko.xz, .ko.zst, .ko.gz: zmod.h) is decoded whole
 * at open, and everything below reads and signs its ELF bytes (@len of
 * them); a write compresses again the same way, so callers do not tell
 * the two apart. @st stays the file's own.
 */
struct ms_modfile {
	const char *path;	/* caller's string, must outlive the struct */
	int fd;			/* -1 when closed */
	struct stat st;		/* at open */
	uint64_t len;		/* the module's bytes: st_size, or the decompressed size */
	enum ms_zfmt zfmt;	/* the container; MS_ZFMT_NONE for a plain module */
	uint64_t zlimit;	/* set before open: most bytes a compressed module may decode to */
	struct ms_mod_zpool *zpool;	/* set before a write: the run's encoders; NULL: a new one */
	struct ms_mod_zimage zimg;	/* the decoded module when zfmt is not NONE */
	const char *why;	/* a container's static reason for refusing it, or NULL */
	uint64_t read_off;	/* for ms_modfile_read() */
	const char *op;
	const char *err_path;
	int sys_errno;
	mode_t file_type;
	struct ms_tmp_set *tmps;	/* the caller's, set after init; NULL: none */
};

void ms_modfile_init(struct ms_modfile *mf);

/**
 * ms_modfile_open() - open @path read-only without following a symlink
 * (a symlink is MS_E_ARG with op "open" and sys_errno ELOOP, since signing
 * in place would replace the link, not sign its target). Must be a regular
 * file (a directory or device is MS_E_ARG, @file_type says which). The
 * module is locked (flock) until ms_modfile_clear(): another open of it
 * waits until then, also one in this process under another name (a flock
 * belongs to its open file description), so a run hands the names of one
 * inode to one thread in turn.
 * A compressed module is decoded here (at most @mf->zlimit bytes): a name
 * that says another format than its magic bytes, a broken, truncated or
 * multi-stream container, or one that decodes past the limit is
 * MS_E_MALFORMED or MS_E_UNSUPPORTED with @mf->why.
 * Return: MS_OK, MS_E_IO, MS_E_ARG, MS_E_CHANGED, MS_E_MALFORMED,
 * MS_E_UNSUPPORTED, MS_E_NOMEM.
 */
ms_err ms_modfile_open(struct ms_modfile *mf, const char *path) MS_MUST_CHECK;

/* ms_modfile_open_flags(): an empty module is opened too (to sign it as sign-file does). */
#define MS_MODFILE_EMPTY_OK 1u

/**
 * ms_modfile_open_flags() - ms_modfile_open() with @flags (MS_MODFILE_*).
 * Return: as ms_modfile_open().
 */
ms_err ms_modfile_open_flags(struct ms_modfile *mf, const char *path,
			     unsigned flags) MS_MUST_CHECK;

/**
 * ms_modfile_read() - next bytes of the module, from its first byte after
 * ms_modfile_open() or ms_modfile_rewind(), for hashing; *@n == 0 at the
 * end. The size read must equal the size at open, else MS_E_CHANGED.
 */
ms_err ms_modfile_read(struct ms_modfile *mf, uint8_t *buf, size_t cap, size_t *n) MS_MUST_CHECK;

/**
 * ms_modfile_rewind() - the next ms_modfile_read() starts again from the
 * module's first byte.
 * Return: MS_OK, MS_E_ARG (not open).
 */
ms_err ms_modfile_rewind(struct ms_modfile *mf) MS_MUST_CHECK;

/**
 * ms_modfile_sig_state() - whether the module already ends with a
 * signature: its last 40 bytes (or all of a shorter module) judged by
 * ms_mod_trailer_parse(), which sets @why (may be NULL).
 * Return: MS_OK (signed, *@info filled), MS_E_NOTFOUND (unsigned),
 * MS_E_MALFORMED (marker with a broken info block), MS_E_IO, MS_E_CHANGED,
 * MS_E_ARG.
 */
ms_err ms_modfile_sig_state(struct ms_modfile *mf, struct ms_mod_sig_info *info,
			    const char **why) MS_MUST_CHECK;

/**
 * ms_modfile_write_signed() - write module bytes + @cms + trailer to @dest,
 * or over the module itself when @dest is NULL, as @mode says. The module
 * bytes come from the open descriptor; if the module changed since open
 * (size or mtime), nothing is written and MS_E_CHANGED is returned. A @dest
 * that is a symlink or a directory is refused, and so is a result larger
 * than finit_module(2) reads (INT_MAX bytes: MS_E_ARG, EFBIG). On any
 * failure the target is unchanged and no temp file is left.
 * Return: MS_OK, MS_E_IO, MS_E_ARG, MS_E_CHANGED.
 */
ms_err ms_modfile_write_signed(struct ms_modfile *mf, const char *dest, const uint8_t *cms,
			       size_t cms_len, enum ms_write_mode mode) MS_MUST_CHECK;

/**
 * ms_modfile_write_signed_prefix() - as ms_modfile_write_signed(), but only
 * the module's first @prefix_len bytes precede @cms: with the payload
 * length of an already signed module (ms_mod_payload_len(), strip.h) this
 * replaces its signature (`--replace`), giving exactly the bytes signing
 * the unsigned module gives.
 * Return: MS_OK, MS_E_IO, MS_E_ARG (also @prefix_len 0 or past the end), MS_E_CHANGED.
 */
ms_err ms_modfile_write_signed_prefix(struct ms_modfile *mf, const char *dest,
				      uint64_t prefix_len, const uint8_t *cms, size_t cms_len,
				      enum ms_write_mode mode) MS_MUST_CHECK;

/** ms_modfile_clear() - close descriptors, remove a leftover temp file. */
void ms_modfile_clear(struct ms_modfile *mf);

/**
 * ms_file_write_atomic() - create or replace @path with @len bytes from @p,
 * mode @mode, through a temp file in the same directory, fsync and rename,
 * then fsync the directory unless @how is MS_WRITE_REPLACE_DIR_SYNC_LATER;
 * refuses a @path that is a symlink or a directory (MS_E_ARG). The temp
 * file is in @tmps while it exists (may be NULL).
 * Return: MS_OK, MS_E_IO, MS_E_ARG.
 */
ms_err ms_file_write_atomic(const char *path, const uint8_t *p, size_t len, mode_t mode,
			    enum ms_write_mode how, struct ms_tmp_set *tmps,
			    struct ms_file_fail *fail) MS_MUST_CHECK;

/**
 * ms_dir_sync() - fsync directory @dir, making the renames done in it with
 * MS_WRITE_REPLACE_DIR_SYNC_LATER durable. A file system that cannot sync a
 * directory (EINVAL) counts as done.
 * Return: MS_OK, MS_E_IO (errno in *@sys_errno).
 */
ms_err ms_dir_sync(const char *dir, int *sys_errno) MS_MUST_CHECK;

/**
 * ms_mod_tmp_clean_dir() - remove from @dir the temp files that modsign runs
 * killed before they finished left behind: names modsign makes, regular
 * files owned by the effective user, whose process no longer exists.
 * Anything else, other users' files and live runs' files included, stays.
 * Return: MS_OK (count in *@removed), MS_E_IO (directory unreadable).
 */
ms_err ms_mod_tmp_clean_dir(const char *dir, size_t *removed) MS_MUST_CHECK;

/**
 * ms_mod_lib_versions() - the libraries src/modfmt calls and their versions,
 * for `modsign --version`: liblzma (as "xz"), libzstd (as "zstd") and zlib,
 * each through its codec.
 * @out: @cap entries, filled by the call; NULL asks for the count only.
 * @out_len: the count (set on MS_OK, and on MS_E_NOSPACE).
 * Return: MS_OK; MS_E_NOSPACE when @cap is below the count; MS_E_ARG or
 * MS_E_NOSPACE when a library gives no version or one longer than
 * MS_LIBVER_MAX. On failure the entries are unspecified.
 */
ms_err ms_mod_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

#endif
