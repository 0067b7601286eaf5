/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Error codes, byte spans and their reader, secret wiping, reading a small
 * file, the PIN buffer and the CPU count shared by all of modsign.
 */
#ifndef MS_COMMON_H
#define MS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum {
	MS_OK = 0,
	MS_E_INTERNAL,		/* invariant broken: a bug */
	MS_E_ARG,		/* caller misuse */
	MS_E_NOMEM,
	MS_E_IO,		/* errno kept by the owning context */
	MS_E_NOSPACE,		/* output buffer too small */
	MS_E_MALFORMED,		/* input does not parse */
	MS_E_UNSUPPORTED,	/* valid, but not handled */
	MS_E_TOKEN,		/* PKCS#11 failure; CK_RV kept by the context */
	MS_E_PIN,		/* PIN missing, rejected or locked */
	MS_E_NOTFOUND,		/* token, key or certificate absent */
	MS_E_AMBIGUOUS,		/* several tokens or objects match */
	MS_E_MISMATCH,		/* key and certificate are not a pair */
	MS_E_SIGNED,		/* already signed, where the policy refuses that */
	MS_E_CHANGED,		/* a file changed while we were reading it */
} ms_err;

#define MS_MUST_CHECK __attribute__((warn_unused_result))

/**
 * ms_err_str() - static text for an error code, never NULL.
 */
const char *ms_err_str(ms_err err);

/* A read-only view of bytes owned by someone else; never outlives them. */
struct ms_span {
	const uint8_t *p;
	size_t len;
};

/*
 * Reading a span from the front (span.c), for parsers of fixed binary
 * layouts. Each call consumes what it returns; on failure @s and the
 * output are unchanged. Multi-byte integers are big-endian (network order,
 * as the kernel's __be32 sig_len and the agent's frames).
 */

/**
 * ms_span_take() - the next @n bytes of @s as *@out, which points into the
 * same buffer as @s.
 * Return: MS_OK; MS_E_MALFORMED when @s holds fewer than @n bytes;
 * MS_E_ARG for a NULL @s or @out.
 */
ms_err ms_span_take(struct ms_span *s, size_t n, struct ms_span *out) MS_MUST_CHECK;

/**
 * ms_span_get_u8(), ms_span_get_be16(), ms_span_get_be32() - the next 1, 2
 * or 4 bytes of @s as an unsigned integer in *@out.
 * Return: MS_OK; MS_E_MALFORMED when @s is shorter; MS_E_ARG for a NULL
 * @s or @out.
 */
ms_err ms_span_get_u8(struct ms_span *s, uint8_t *out) MS_MUST_CHECK;
ms_err ms_span_get_be16(struct ms_span *s, uint16_t *out) MS_MUST_CHECK;
ms_err ms_span_get_be32(struct ms_span *s, uint32_t *out) MS_MUST_CHECK;

/**
 * ms_wipe() - overwrite @len bytes at @p with zeros in a way the compiler
 * cannot drop. @p may be NULL when @len is 0.
 */
void ms_wipe(void *p, size_t len);

/**
 * ms_cpu_count() - online processors, at least 1, at most 64.
 */
unsigned ms_cpu_count(void);

/**
 * ms_clock_ns() - CLOCK_MONOTONIC in nanoseconds: for deadlines, timeouts
 * and rates, never for a date.
 */
uint64_t ms_clock_ns(void);

/* Longest version string of a library (mbedTLS asks for 18 bytes). */
#define MS_LIBVER_MAX 32

/*
 * One library a layer calls, for `modsign --version`: its name and the
 * version it tells at run time, or, where it tells none, the version of
 * the headers modsign was compiled with (@is_built_against).
 */
struct ms_libver {
	const char *name;		/* static text: "mbedTLS", "xz" */
	char version[MS_LIBVER_MAX];	/* "2.28.3" */
	bool is_built_against;
};

/**
 * ms_libver_set() - fill @v with @name (static text, kept as a pointer)
 * and a copy of @version.
 * Return: MS_OK; MS_E_ARG when @version is NULL or empty; MS_E_NOSPACE
 * when it does not fit in @v->version (never truncated). On failure @v's
 * version is empty.
 */
ms_err ms_libver_set(struct ms_libver *v, const char *name, const char *version,
		     bool is_built_against) MS_MUST_CHECK;

/*
 * Where a failed small-file read or write went wrong: @op the call, @sys_errno
 * its errno (0 when not a system error), @file_type the S_IFMT bits of a file
 * refused for its type. Filled by ms_file_read_small() here and by
 * ms_file_write_atomic() (src/modfmt).
 */
struct ms_file_fail {
	const char *op;
	int sys_errno;
	mode_t file_type;
};

/**
 * ms_file_read_small() - read a whole regular file of at most @max bytes
 * (certificate, key, raw signature, PIN file) into a malloc'd buffer owned
 * by the caller. Follows symlinks (reading through one is harmless). A
 * larger file is MS_E_ARG with sys_errno EFBIG. On failure @fail (may be
 * NULL) says which call failed and why, and *@out is NULL.
 * Return: MS_OK, MS_E_IO, MS_E_ARG, MS_E_NOMEM, MS_E_CHANGED (the file's
 * size changed while it was read).
 */
ms_err ms_file_read_small(const char *path, size_t max, uint8_t **out, size_t *out_len,
			  struct ms_file_fail *fail) MS_MUST_CHECK;

/**
 * ms_file_kind() - what a file of type @type (S_IFMT bits) is, for a
 * message: "a directory", "a FIFO (named pipe)", "a character device", ...
 */
const char *ms_file_kind(mode_t type);

/**
 * ms_file_fail_why() - the reason a small-file read or write failed with
 * @err, as a message shows it after the file's name ("is a FIFO (named
 * pipe), not a regular file", "open: No such file or directory"), into
 * @out (@cap bytes, NUL-terminated). Library code (a key file's signer) and
 * the CLI say it the same way.
 */
void ms_file_fail_why(const struct ms_file_fail *f, ms_err err, char *out, size_t cap);

/* The longest PIN or passphrase we accept; longer input is an error. */
#define MS_PIN_MAX 256

/*
 * The one PIN of a run, owned by the CLI (HACKING, "Secrets"). Library
 * code gets a const pointer. @source names where it came from for messages
 * ("pin-source file", "terminal", "KBUILD_SIGN_PIN"); the value and its
 * length are never printed.
 */
struct ms_pin {
	char buf[MS_PIN_MAX + 1];
	size_t len;
	const char *source;
	bool is_set;
};

/**
 * ms_pin_clear() - wipe the PIN buffer and forget its source. Safe to call
 * twice and on a zero-initialised struct.
 */
void ms_pin_clear(struct ms_pin *pin);

#endif
