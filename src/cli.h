/* SPDX-License-Identifier: GPL-2.0-only */
/* The command line: options, PIN input, messages and the signing job. */
#ifndef MS_CLI_H
#define MS_CLI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cms/cms.h"
#include "cms/pkcs7.h"
#include "common/ms_common.h"
#include "modfmt/modfmt.h"
#include "signer/signer.h"

#define MS_EXIT_OK 0
#define MS_EXIT_FAIL 1
#define MS_EXIT_USAGE 2
/*
 * Not an exit status: a command-line parser printed what was asked
 * (--help, --version), and the command ends with MS_EXIT_OK.
 */
#define MS_EXIT_DONE (-1)

/* Lost token sessions a run re-opens (logging in again) before it gives up. */
#define MS_RECOVERIES_MAX 3

/* What to do with a module that already ends with a signature. */
enum ms_signed_policy {
	MS_SIGNED_REFUSE = 0,	/* default: error, module untouched */
	MS_SIGNED_APPEND,	/* --append: sign-file's way, a signature around the old one */
	MS_SIGNED_REPLACE,	/* --replace: strip the old signature, then sign */
	MS_SIGNED_SKIP,		/* --skip-signed: leave it if it verifies against the cert */
	MS_SIGNED_KBUILD,	/* run as "sign-file", no policy option: leave it if it
				 * verifies with this cert and hash, else as --append */
};

/* Tokens holding one key in a run: <key> and at most 15 --key. */
#define MS_TOKENS_MAX 16

struct ms_opts {
	bool raw_sig;		/* -s: append an existing detached PKCS#7 */
	bool save_p7s;		/* -p: also write <module>.p7s */
	bool p7s_only;		/* -d: write only <module>.p7s */
	bool use_skid;		/* -k: signer named by subjectKeyIdentifier */
	bool allow_final_try;	/* --pin-final-try: log in even on the token's last try */
	enum ms_signed_policy signed_policy;
	unsigned p7s_mode;	/* 0666 less the umask, as sign-file creates it */
	const char *raw_sig_path;
	const char *hash_name;
	const char *key;	/* file path or pkcs11: URI */
	const char *keys[MS_TOKENS_MAX - 1];	/* --key: more tokens holding <key>'s key */
	size_t n_keys;
	const char *x509;	/* file path or pkcs11: URI */
	const char *module;
	const char *dest;	/* NULL: sign in place */

	/* Bulk mode: -b, or any of -r and --files-from. */
	bool bulk;
	bool null_sep;		/* -0: --files-from lists are NUL-separated */
	bool quiet;		/* -q: no progress line, no summary on success */
	bool verbose;		/* -v: one line per module */
	unsigned jobs;		/* -j N; 0: what is fastest for the key source */
	unsigned token_timeout;	/* --token-timeout: seconds a signature may take; 0 none */
	uint64_t max_module_size;	/* --max-module-size: most a compressed module decodes to */
	char **modules;		/* bulk: modules named on the command line */
	size_t n_modules;
	const char *files_from[8];	/* --files-from FILE ("-": stdin) */
	size_t n_files_from;
	const char *dirs[8];	/* -r DIR */
	size_t n_dirs;
};

/*
 * ms_cli_parse() - sign-file's command line plus our long options.
 * Return: MS_EXIT_OK to go on, MS_EXIT_USAGE after a usage message, or
 * MS_EXIT_DONE after --help or --version was printed.
 */
int ms_cli_parse(int argc, char **argv, struct ms_opts *o);

/*
 * ms_cli_key_add() - one `--key <uri>` (bulk mode and the agent): @uri must
 * be a pkcs11: URI, at most MS_TOKENS_MAX - 1 of them. Return: MS_OK;
 * MS_E_ARG after a message.
 */
ms_err ms_cli_key_add(struct ms_opts *o, const char *uri) MS_MUST_CHECK;
/*
 * ms_cli_keys_check() - once parsed: --key wants a pkcs11: <key> and no -s.
 * Return: MS_OK; MS_E_ARG after a message.
 */
ms_err ms_cli_keys_check(const struct ms_opts *o) MS_MUST_CHECK;

/*
 * ms_cli_parse_uint() - a decimal number in @min..@max (no sign, no
 * blanks). Return: MS_OK with *@out; MS_E_ARG (*@out untouched).
 */
ms_err ms_cli_parse_uint(const char *s, unsigned long min, unsigned long max,
			 unsigned *out) MS_MUST_CHECK;

/*
 * Output (cli_msg.c). Every line that may hold a name (a path, a list
 * entry, a certificate or token field) goes through these, which escape
 * it: a backslash as \\, \n, \t, \r, any other control character (C0,
 * DEL, C1) and any byte that is not UTF-8 as \xHH. So a name cannot start
 * a line of its own or send a terminal escape sequence.
 *
 * ms_cli_error(), ms_cli_warn() - "modsign: " (+ "warning: ") and the text
 * on stderr. ms_cli_error_detail() adds ": " and @detail, the PKCS#11
 * layer's text whose further lines start with "\n" (candidates): each
 * printed as a line of its own, escaped.
 * ms_cli_line() - one line on @f (a result line: "OK <module> ...").
 */
void ms_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ms_cli_error_detail(const char *detail, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ms_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ms_cli_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * ms_cli_version_print() (cli_version.c) - `modsign --version` on @f: our
 * version, then one line per library ("  mbedTLS 2.28.3, static"), p11-kit
 * marked "(built against)" as it tells no version at run time. Return:
 * MS_EXIT_OK, or MS_EXIT_FAIL with a message when a library's version is
 * missing or too long.
 */
int ms_cli_version_print(FILE *f);
/*
 * ms_cli_p11_error() (cli_job.c) - "modsign: <role>: <call>: <CKR_...>: <detail>" for a
 * failed step of @p11 (NULL: only @err's text).
 */
struct ms_p11;
void ms_cli_p11_error(const char *role, const struct ms_p11 *p11, ms_err err);
/*
 * ms_cli_p11_login_error() (cli_job.c) - the message for a failed
 * ms_p11_login() of @p11 under @o: "[<who>: ]C_Login: PIN from <source>
 * rejected: <CKR_...><tail>" when the token refused the PIN, else as
 * ms_cli_p11_error() with @who (NULL: "key") as the role, naming
 * --pin-final-try when the token's last try was spared for want of it.
 */
void ms_cli_p11_login_error(const char *who, const struct ms_p11 *p11, ms_err err,
			    const struct ms_pin *pin, const struct ms_opts *o, const char *tail);
/*
 * ms_cli_msg_hook_set() - around each line the printers above write to
 * stderr, call @hook->before(ctx) and @hook->after(ctx) on the printing
 * thread (the bulk run clears and redraws its progress line); NULL: none.
 * @hook must stay valid until it is replaced.
 */
struct ms_cli_msg_hook {
	void (*before)(void *ctx);
	void (*after)(void *ctx);
	void *ctx;
};
void ms_cli_msg_hook_set(const struct ms_cli_msg_hook *hook);
/* ms_cli_put_escaped() - @len bytes of @s, escaped as above, no newline. */
void ms_cli_put_escaped(FILE *f, const char *s, size_t len);
/*
 * ms_cli_put_json_str() - @s as a JSON string (RFC 8259, 7): quotes,
 * backslashes and control characters (C1 too) escaped, valid UTF-8 kept,
 * any other byte as U+FFFD.
 */
void ms_cli_put_json_str(FILE *f, const char *s);
/* ms_cli_utf8_len() - length of the valid UTF-8 sequence at @s (RFC 3629, 4) within @len; 0 if none. */
size_t ms_cli_utf8_len(const unsigned char *s, size_t len);

/*
 * A key or certificate argument as messages show it (ms_p11_uri_redact():
 * a URI's PIN hidden). Callers give a buffer of MS_CLI_ARG_SHOW bytes.
 */
#define MS_CLI_ARG_SHOW 512

/*
 * ms_cli_pin_get() - the PIN (or PEM passphrase), from the first source that
 * applies: @uri_pin_value (warned about), @uri_pin_source (file: URI or
 * path), KBUILD_SIGN_PIN, a no-echo prompt when stdin is a terminal.
 * @what names the thing for the prompt ("token 'x'", "key file k.pem").
 * Return: MS_OK, MS_E_PIN (no source; message printed), MS_E_IO.
 */
ms_err ms_cli_pin_get(const char *uri_pin_value, const char *uri_pin_source, const char *what,
		      struct ms_pin *pin) MS_MUST_CHECK;

/* A token as messages name it: "token 'label' (serial s)". */
#define MS_TOKEN_NAME 96

/*
 * The tokens of a run given --key (cli_tokens.c), <key>'s first: signer[0]
 * is the job's own signer (borrowed here), the others are owned here, as
 * are the PINs of sources other than <key>'s (locked in memory, wiped on
 * close).
 */
struct ms_tokens {
	struct ms_signer *signer[MS_TOKENS_MAX];
	char name[MS_TOKENS_MAX][MS_TOKEN_NAME];
	size_t n;		/* 0: one key, no --key */
	struct ms_pin *pins;
};

/*
 * ms_cli_tokens_open() - open <key> (@o->key) and every --key (@o->keys),
 * each a token holding one key, all at the same time on threads: start-up,
 * one C_Login each (PIN rules as for one token; a PIN source read once, a
 * PIN offered to a second token only once a first took it), the key found,
 * lanes opened (each token its share of -j) and the key checked against
 * @cert, or, when @cert is NULL, against <key>'s token. One token named
 * twice (same manufacturer, model and serial) is refused, and so is a token
 * whose key is another. <key>'s PIN goes to @pin (the caller wipes it);
 * <key>'s signer to *@main_out (the caller frees it), the others stay in
 * @out. Prints its own errors; on failure nothing is left open.
 * Return: MS_OK, MS_E_ARG (one token twice), MS_E_MISMATCH, MS_E_PIN,
 * MS_E_TOKEN, MS_E_NOTFOUND, MS_E_NOMEM and the others of the token layer.
 */
ms_err ms_cli_tokens_open(const struct ms_opts *o, const struct ms_cms_cert *cert,
			  struct ms_pin *pin, struct ms_signer **main_out,
			  struct ms_tokens *out) MS_MUST_CHECK;
/* ms_cli_tokens_close() - free every signer but signer[0], wipe the PINs. */
void ms_cli_tokens_close(struct ms_tokens *t);
/* ms_cli_tokens_wipe() - wipe the PINs only (the process ends with a token hung). */
void ms_cli_tokens_wipe(struct ms_tokens *t);

/* Certificates one run may trust: every verify -c, each file a PEM bundle of them. */
#define MS_CLI_TRUST_MAX 64

/* Everything loaded once per run and shared by every module signed. */
struct ms_job {
	const struct ms_opts *opts;
	enum ms_hash_alg hash;
	struct ms_signer *signer;
	struct ms_cms_cert *cert;	/* <x509>: its first certificate, as sign-file */
	/* --skip-signed: every certificate of <x509> (a PEM bundle), trusted as verify -c */
	struct ms_cms_cert *trust[MS_CLI_TRUST_MAX];
	size_t n_trust;
	enum ms_write_mode write_mode;	/* directories are fsync'd by the run */
	struct ms_tmp_set *tmps;	/* the run's temp files in progress */
	atomic_uint *n_opening;		/* the run's count of modules being opened */
	uint8_t *raw_cms;		/* -s: the signature to append, instead of a key */
	size_t raw_cms_len;
	struct ms_mod_zpool *zpool;	/* bulk: encoders of compressed modules, one per CPU */
	struct ms_tokens tokens;	/* --key: every token holding the key */
	uint8_t sid[4096];	/* SignerIdentifier TLV, from the certificate */
	size_t sid_len;
	struct ms_pin pin;
};

/*
 * ms_cli_key_open() - open @o->key: a pkcs11: URI (one C_Login, the PIN
 * from the URI, KBUILD_SIGN_PIN or the terminal, left in @pin for lost
 * sessions: the caller wipes it, ms_pin_clear()) or a key file (its
 * passphrase from KBUILD_SIGN_PIN or the terminal, wiped before return).
 * With @o->bulk, as many lanes as -j (@o->jobs) asks, else one. Prints its
 * own error. *@out is the caller's (ms_signer_free()).
 */
ms_err ms_cli_key_open(const struct ms_opts *o, struct ms_pin *pin,
		       struct ms_signer **out) MS_MUST_CHECK;

/*
 * ms_cli_job_open() - parse the hash name, load the certificate, open the
 * key (logging in to a token once), check that they are a pair and encode
 * the signer identifier. Prints its own error message.
 */
ms_err ms_cli_job_open(struct ms_job *job, const struct ms_opts *o) MS_MUST_CHECK;
/*
 * ms_cli_job_open_raw() - `-s`: the job appends the detached PKCS#7 of
 * @o->raw_sig_path (read, and checked to be a DER SignedData with detached
 * content) instead of signing: no hash, key or certificate.
 */
ms_err ms_cli_job_open_raw(struct ms_job *job, const struct ms_opts *o) MS_MUST_CHECK;
void ms_cli_job_close(struct ms_job *job);

/* One module on its way through hashing, signing and writing. */
struct ms_module_work {
	const char *path;
	struct ms_modfile *mf;
	uint64_t payload_len;	/* the bytes signed and kept: less than the file with --replace */
	bool skipped;		/* --skip-signed found it signed already: nothing to do */
	unsigned later_links;	/* names of its inode the run signs after this one */
	struct ms_pkcs7_digest digest;	/* of the payload, with the job's hash */
	uint8_t *cms;
	size_t cms_len;
};

/*
 * ms_cli_payload_digest() - the digests of the first @len bytes of the open
 * module @mf, one for each of the @n (at most MS_PKCS7_SIGNERS_MAX) hashes
 * in @algs, into @out, in one streaming pass from the module's first byte
 * through the module reader (as mbedtls_md_file() hashes a file).
 * Return: MS_OK; MS_E_UNSUPPORTED (hash @algs[*@bad_alg] is not in this
 * build; @bad_alg may be NULL); MS_E_IO, MS_E_CHANGED (details in @mf, for
 * ms_cli_modfile_why()); MS_E_NOMEM; MS_E_ARG. @out is unspecified on failure.
 */
ms_err ms_cli_payload_digest(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs,
			     size_t n, struct ms_pkcs7_digest *out, size_t *bad_alg) MS_MUST_CHECK;

/*
 * The text of a failure, without the file name: "is a directory", "open:
 * Permission denied", ... ms_cli_modfile_why() for a module file (@mf after
 * a failed ms_modfile_*() call; it tells the module from a <dest> or .p7s),
 * ms_cli_file_fail_why() for a small file (certificate, key, PIN file, .p7s),
 * ms_cli_file_kind() for a file type ("a FIFO (named pipe)").
 */
void ms_cli_modfile_why(const struct ms_modfile *mf, ms_err err, char *out, size_t cap);
void ms_cli_file_fail_why(const struct ms_file_fail *f, ms_err err, char *out, size_t cap);
const char *ms_cli_file_kind(mode_t type);

/*
 * ms_cli_signed_policy() - the already-signed policy for the open module
 * @mf: *@payload_len gets the bytes to sign and keep, *@skip whether to
 * leave the module alone. Prints its own error: MS_E_SIGNED when the
 * policy refuses a signed module, MS_E_MALFORMED for a broken trailer,
 * MS_E_MISMATCH when --skip-signed finds another key's signature.
 */
ms_err ms_cli_signed_policy(struct ms_job *job, struct ms_modfile *mf, const char *path,
			    uint64_t *payload_len, bool *skip) MS_MUST_CHECK;

/*
 * The three steps of signing one module, each printing its own error:
 * prepare (open, already-signed policy, hash on the host), sign (with the
 * key, on @lane of @pool, taken by the caller: a failure here is the key's,
 * not the module's; -s needs no pool), write
 * (<module>.p7s and the module, unless -d). ms_cli_module_clear() releases
 * @w whatever happened.
 */
ms_err ms_cli_module_prepare(struct ms_job *job, const char *path,
			     struct ms_module_work *w) MS_MUST_CHECK;
ms_err ms_cli_module_sign(struct ms_job *job, struct ms_lanes *pool, unsigned lane,
			  struct ms_module_work *w) MS_MUST_CHECK;
ms_err ms_cli_module_write(struct ms_job *job, struct ms_module_work *w,
			   const char *dest) MS_MUST_CHECK;
void ms_cli_module_clear(struct ms_module_work *w);


/* A list of module paths, owned by the list (bulk mode). */
struct ms_module_list {
	char **path;
	size_t n;
	size_t cap;
};

/*
 * ms_cli_list_build() - the modules of a bulk run: those on the command
 * line, then each --files-from list, then every *.ko below each -r
 * directory (sorted, symlinks not followed). Prints its own errors.
 */
ms_err ms_cli_list_build(const struct ms_opts *o, struct ms_module_list *list) MS_MUST_CHECK;
void ms_cli_list_free(struct ms_module_list *list);

/*
 * The distinct directories of a list of paths (cli_dirs.c), and for a bulk
 * run which directory each module is in, so that a directory is fsync'd as
 * soon as its last module is done rather than all at the end.
 */
struct ms_dir_set {
	char **dir;
	size_t n;
	size_t *dir_of;		/* per path: index in @dir, SIZE_MAX for a NULL path */
	atomic_size_t *left;	/* per directory: modules not done yet */
	atomic_bool *synced;	/* per directory: fsync'd already */
	int *sync_errno;	/* per directory: why its fsync failed, 0 if it did not */
};

/*
 * The names of a run's modules (cli_names.c). A module is a directory
 * entry: names of one entry (a.ko, ./a.ko, its absolute path, -r and a
 * name) are one module. Hard links (other entries of one inode) are
 * separate modules, chained so that one thread signs them one after the
 * other. Indices are those of the list after ms_cli_names_build().
 */
struct ms_name_set {
	size_t *next_link;	/* per module: the next name of its inode, SIZE_MAX none */
	bool *is_later_link;	/* per module: signed after an earlier name of its inode */
	unsigned *later_links;	/* per module: how many names of its inode follow it */
};

/*
 * ms_cli_names_build() - stat each name of @list, drop each that names the
 * same directory entry as an earlier one (a note under @verbose) and chain
 * hard links. A name that cannot be stat'ed stays, for the run to report.
 * Prints its own error. Return: MS_OK, MS_E_NOMEM.
 */
ms_err ms_cli_names_build(struct ms_module_list *list, bool verbose,
			  struct ms_name_set *out) MS_MUST_CHECK;
void ms_cli_names_free(struct ms_name_set *set);

/* How a run ended (cli_bulk.c). */
struct ms_run_end {
	int rc;			/* MS_EXIT_OK when every module was signed or skipped */
	int signo;		/* the signal that stopped it, 0 none */
	bool stuck;		/* threads are left running (a hung token, another's lock) */
	bool at_once;		/* a second signal: stopped without finishing */
};

/*
 * ms_cli_run() - sign every module of @list with the job's key (or append
 * the job's -s signature): worker threads hash while the key signs on its
 * lanes. A module's own failure is reported and the others go on; a
 * failure of the key, a signature past --token-timeout or SIGINT, SIGTERM
 * or SIGHUP stops the run: the modules being written are finished, the rest
 * stay untouched; a second signal ends it at once, removing the temp files
 * of the writes in progress. In bulk mode a progress line and a summary on
 * stderr. When @end->stuck, threads still use @job, @list, @names and
 * @dirs: the caller must end the process without freeing them.
 */
void ms_cli_run(struct ms_job *job, const struct ms_module_list *list,
		const struct ms_name_set *names, struct ms_dir_set *dirs, struct ms_run_end *end);

/*
 * The self-pipe that wakes a poll(2) loop (cli_wake.c): a signal handler
 * or another thread writes a byte to fds[1], the loop polls fds[0].
 * ms_cli_wake_init() - a non-blocking, close-on-exec pipe in @fds.
 * Return: MS_OK; MS_E_IO with errno (@fds both -1).
 * ms_cli_wake_arm() - the write end ms_cli_wake_signal() writes to (-1: none).
 * ms_cli_wake_write() - one byte to @fd (-1: nothing); a full pipe is a
 * wake-up already waiting. Async-signal-safe, keeps errno.
 * ms_cli_wake_signal() - ms_cli_wake_write() to the armed end, from a
 * signal handler.
 * ms_cli_wake_close() - disarm (if armed), close both ends, both -1 (fds[0]
 * -1: nothing to do).
 */
ms_err ms_cli_wake_init(int fds[2]) MS_MUST_CHECK;
void ms_cli_wake_arm(int fd);
void ms_cli_wake_write(int fd);
void ms_cli_wake_signal(void);
void ms_cli_wake_close(int fds[2]);

/*
 * Ending early (cli_exit.c).
 * ms_cli_exit_by_signal() - flush the streams and end by @sig (its default
 * action), else with status 128 + @sig.
 * ms_cli_job_wipe() - wipe @job's PIN and its --key tokens' PINs; again is
 * harmless.
 * ms_cli_exit_stuck() - a thread is left inside a token (@end->stuck, a
 * hung lane): wipe the job's secrets, flush, and end by @signo if not 0,
 * else with @status, freeing nothing the thread may use.
 */
_Noreturn void ms_cli_exit_by_signal(int sig);
void ms_cli_job_wipe(struct ms_job *job);
_Noreturn void ms_cli_exit_stuck(struct ms_job *job, int signo, int status);

/* ms_cli_dirs_of() - the directories of @paths (NULL entries skipped), sorted, once each. */
ms_err ms_cli_dirs_of(const char *const *paths, size_t n, struct ms_dir_set *out) MS_MUST_CHECK;
/* ms_cli_dirs_clean_stale() - remove killed runs' temp files (ms_mod_tmp_clean_dir()). */
void ms_cli_dirs_clean_stale(const struct ms_dir_set *set, bool verbose);
/*
 * ms_cli_dirs_stale_start() / _finish() - the same on a thread of its own
 * (or at once, if none can be made), so that a token's start-up and login
 * need not wait for it; _finish() waits and says what was removed.
 */
struct ms_stale_scan {
	const struct ms_dir_set *set;
	size_t removed;
	pthread_t thread;
	bool threaded;
};
void ms_cli_dirs_stale_start(struct ms_stale_scan *scan, const struct ms_dir_set *set);
void ms_cli_dirs_stale_finish(struct ms_stale_scan *scan, bool verbose);
/*
 * ms_cli_dirs_module_done() - path @i of the set is done (signed, failed or
 * skipped): fsync its directory if that was the last of it. Thread-safe; a
 * failure is kept for ms_cli_dirs_sync() to report.
 */
void ms_cli_dirs_module_done(struct ms_dir_set *set, size_t i);
/* ms_cli_dirs_sync() - fsync each directory not fsync'd yet; prints each failure. */
ms_err ms_cli_dirs_sync(struct ms_dir_set *set) MS_MUST_CHECK;
void ms_cli_dirs_free(struct ms_dir_set *set);


/* ms_cli_agent() - `modsign agent ...` (cli_agent.c); argv[0] is "agent". */
int ms_cli_agent(int argc, char **argv);

#endif
