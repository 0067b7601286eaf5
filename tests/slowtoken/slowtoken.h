// SPDX-License-Identifier: GPL-2.0-only
/* slowtoken: the configuration shared by the wrappers and the parser. */
#ifndef SLOWTOKEN_H
#define SLOWTOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <p11-kit/pkcs11.h>

/* Only C_GetFunctionList leaves the shared object. */
#pragma GCC visibility push(hidden)

#define ST_FAULTS_MAX 16

enum st_fault_kind {
	ST_FAULT_RV,		/* return rv instead of calling the real module */
	ST_FAULT_HANG,		/* sleep hang_ns, then go on as usual */
	ST_FAULT_BIGLEN,	/* C_Sign: forward, then claim more than the buffer holds */
	ST_FAULT_CORRUPT,	/* C_Sign: forward, then flip a bit of the signature */
};

struct st_fault {
	unsigned fn;		/* index into the function table (enum st_fn) */
	unsigned long k;	/* 1-based call number */
	bool and_later;		/* "K+": the K-th and every later call */
	unsigned long every;	/* "K/N": the K-th and every N-th after it; 0: not */
	enum st_fault_kind kind;
	CK_RV rv;		/* ST_FAULT_RV only */
};

struct st_config {
	const char *module;	/* the real module, from the environment */
	uint64_t init_ns, login_ns, sign_ns, open_ns, hang_ns;
	bool serial;
	CK_ULONG max_sessions;	/* 0: no limit of our own */
	CK_FLAGS pin_flags;	/* SLOWTOKEN_PIN_FLAGS: ORed into C_GetTokenInfo's flags */
	struct st_fault faults[ST_FAULTS_MAX];
	size_t n_faults;
	int log_fd;		/* -1: no log */
	const char *exclusive;	/* SLOWTOKEN_EXCLUSIVE: lock file, or NULL */
	const char *init_lock;	/* SLOWTOKEN_INIT_LOCK: lock file, or NULL */
};

/*
 * Fills @cfg from the SLOWTOKEN_* settings: those of the file "<path of this
 * copy of the shim>.conf" when it exists, else the environment's. @names lists the
 * @n_names function names in table order (what FUNC in a fault may be) and
 * @sign_fn is the index of C_Sign. Returns false after printing why to
 * stderr; @cfg then holds the defaults and what parsed before the error.
 */
bool st_config_read(struct st_config *cfg, const char *const *names, size_t n_names,
		    unsigned sign_fn);

/* "CKR_OK" for 0; NULL for a value without a name. */
const char *st_rv_name(CK_RV rv);

/* The value of a CKR_ name; false if there is none. */
bool st_rv_parse(const char *name, size_t len, CK_RV *rv);

#pragma GCC visibility pop

#endif
