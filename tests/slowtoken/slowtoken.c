// SPDX-License-Identifier: GPL-2.0-only
/*
 * slowtoken: a PKCS#11 module that forwards every call to a real one
 * (SoftHSM2) and can add latency, serialise calls as a card reader does, and
 * inject faults. Configured by SLOWTOKEN_* environment variables (README.md).
 *
 * Every entry of our CK_FUNCTION_LIST is a wrapper generated from one table:
 * count the call, pick a fault, take the lock (SLOWTOKEN_SERIAL), sleep,
 * forward (or return the fault), log. A handful of functions ("specials")
 * forward through a hand-written sp_<name>() that alters the call or reply.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "slowtoken.h"

/*
 * The PKCS#11 2.40 function list in struct order: X forwards as is, S goes
 * through sp_<name>(). Columns: name, parameters, arguments.
 */
#define ST_FUNCTIONS(X, S) \
	S(C_Initialize, (CK_VOID_PTR a), (a)) \
	S(C_Finalize, (CK_VOID_PTR r), (r)) \
	X(C_GetInfo, (CK_INFO_PTR i), (i)) \
	S(C_GetFunctionList, (CK_FUNCTION_LIST_PTR_PTR l), (l)) \
	X(C_GetSlotList, (CK_BBOOL p, CK_SLOT_ID_PTR l, CK_ULONG_PTR n), (p, l, n)) \
	S(C_GetSlotInfo, (CK_SLOT_ID s, CK_SLOT_INFO_PTR i), (s, i)) \
	S(C_GetTokenInfo, (CK_SLOT_ID s, CK_TOKEN_INFO_PTR i), (s, i)) \
	X(C_GetMechanismList, (CK_SLOT_ID s, CK_MECHANISM_TYPE_PTR m, CK_ULONG_PTR n), \
	  (s, m, n)) \
	X(C_GetMechanismInfo, (CK_SLOT_ID s, CK_MECHANISM_TYPE t, CK_MECHANISM_INFO_PTR i), \
	  (s, t, i)) \
	X(C_InitToken, (CK_SLOT_ID s, CK_UTF8CHAR_PTR p, CK_ULONG n, CK_UTF8CHAR_PTR l), \
	  (s, p, n, l)) \
	X(C_InitPIN, (CK_SESSION_HANDLE h, CK_UTF8CHAR_PTR p, CK_ULONG n), (h, p, n)) \
	X(C_SetPIN, (CK_SESSION_HANDLE h, CK_UTF8CHAR_PTR o, CK_ULONG on, CK_UTF8CHAR_PTR p, \
		     CK_ULONG n), (h, o, on, p, n)) \
	S(C_OpenSession, (CK_SLOT_ID s, CK_FLAGS f, CK_VOID_PTR a, CK_NOTIFY cb, \
			  CK_SESSION_HANDLE_PTR h), (s, f, a, cb, h)) \
	S(C_CloseSession, (CK_SESSION_HANDLE h), (h)) \
	S(C_CloseAllSessions, (CK_SLOT_ID s), (s)) \
	X(C_GetSessionInfo, (CK_SESSION_HANDLE h, CK_SESSION_INFO_PTR i), (h, i)) \
	X(C_GetOperationState, (CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG_PTR n), (h, p, n)) \
	X(C_SetOperationState, (CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n, \
				CK_OBJECT_HANDLE e, CK_OBJECT_HANDLE a), (h, p, n, e, a)) \
	S(C_Login, (CK_SESSION_HANDLE h, CK_USER_TYPE u, CK_UTF8CHAR_PTR p, CK_ULONG n), \
	  (h, u, p, n)) \
	X(C_Logout, (CK_SESSION_HANDLE h), (h)) \
	X(C_CreateObject, (CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR t, CK_ULONG n, \
			   CK_OBJECT_HANDLE_PTR o), (h, t, n, o)) \
	X(C_CopyObject, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, \
			 CK_ULONG n, CK_OBJECT_HANDLE_PTR c), (h, o, t, n, c)) \
	X(C_DestroyObject, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o), (h, o)) \
	X(C_GetObjectSize, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ULONG_PTR n), (h, o, n)) \
	X(C_GetAttributeValue, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, \
				CK_ULONG n), (h, o, t, n)) \
	X(C_SetAttributeValue, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, \
				CK_ULONG n), (h, o, t, n)) \
	X(C_FindObjectsInit, (CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR t, CK_ULONG n), (h, t, n)) \
	X(C_FindObjects, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE_PTR o, CK_ULONG m, \
			  CK_ULONG_PTR n), (h, o, m, n)) \
	X(C_FindObjectsFinal, (CK_SESSION_HANDLE h), (h)) \
	X(C_EncryptInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k), (h, m, k)) \
	X(C_Encrypt, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
		      CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_EncryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
			    CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_EncryptFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on), (h, o, on)) \
	X(C_DecryptInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k), (h, m, k)) \
	X(C_Decrypt, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
		      CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_DecryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
			    CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_DecryptFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on), (h, o, on)) \
	X(C_DigestInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m), (h, m)) \
	X(C_Digest, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
		     CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_DigestUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn), (h, d, dn)) \
	X(C_DigestKey, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE k), (h, k)) \
	X(C_DigestFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on), (h, o, on)) \
	X(C_SignInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k), (h, m, k)) \
	S(C_Sign, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
		   CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_SignUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn), (h, d, dn)) \
	X(C_SignFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on), (h, o, on)) \
	X(C_SignRecoverInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k), \
	  (h, m, k)) \
	X(C_SignRecover, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
			  CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_VerifyInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k), (h, m, k)) \
	X(C_Verify, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR s, \
		     CK_ULONG sn), (h, d, dn, s, sn)) \
	X(C_VerifyUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn), (h, d, dn)) \
	X(C_VerifyFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR s, CK_ULONG sn), (h, s, sn)) \
	X(C_VerifyRecoverInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k), \
	  (h, m, k)) \
	X(C_VerifyRecover, (CK_SESSION_HANDLE h, CK_BYTE_PTR s, CK_ULONG sn, CK_BYTE_PTR o, \
			    CK_ULONG_PTR on), (h, s, sn, o, on)) \
	X(C_DigestEncryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
				  CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_DecryptDigestUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
				  CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_SignEncryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
				CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_DecryptVerifyUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
				  CK_ULONG_PTR on), (h, d, dn, o, on)) \
	X(C_GenerateKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_ATTRIBUTE_PTR t, \
			  CK_ULONG n, CK_OBJECT_HANDLE_PTR k), (h, m, t, n, k)) \
	X(C_GenerateKeyPair, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_ATTRIBUTE_PTR pt, \
			      CK_ULONG pn, CK_ATTRIBUTE_PTR st, CK_ULONG sn, \
			      CK_OBJECT_HANDLE_PTR pk, CK_OBJECT_HANDLE_PTR sk), \
	  (h, m, pt, pn, st, sn, pk, sk)) \
	X(C_WrapKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE w, \
		      CK_OBJECT_HANDLE k, CK_BYTE_PTR o, CK_ULONG_PTR on), (h, m, w, k, o, on)) \
	X(C_UnwrapKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE u, \
			CK_BYTE_PTR w, CK_ULONG wn, CK_ATTRIBUTE_PTR t, CK_ULONG n, \
			CK_OBJECT_HANDLE_PTR k), (h, m, u, w, wn, t, n, k)) \
	X(C_DeriveKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE b, \
			CK_ATTRIBUTE_PTR t, CK_ULONG n, CK_OBJECT_HANDLE_PTR k), (h, m, b, t, n, k)) \
	X(C_SeedRandom, (CK_SESSION_HANDLE h, CK_BYTE_PTR s, CK_ULONG n), (h, s, n)) \
	X(C_GenerateRandom, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG n), (h, o, n)) \
	X(C_GetFunctionStatus, (CK_SESSION_HANDLE h), (h)) \
	X(C_CancelFunction, (CK_SESSION_HANDLE h), (h)) \
	X(C_WaitForSlotEvent, (CK_FLAGS f, CK_SLOT_ID_PTR s, CK_VOID_PTR r), (f, s, r))

#define ST_UNPAREN(...) __VA_ARGS__
#define ST_ENUM(name, params, args) F_##name,
#define ST_NAME(name, params, args) #name,
#define ST_ENTRY(name, params, args) .name = w_##name,

enum st_fn { ST_FUNCTIONS(ST_ENUM, ST_ENUM) ST_N };

static const char *const st_names[ST_N] = { ST_FUNCTIONS(ST_NAME, ST_NAME) };

/* Set once under st_once; read-only afterwards. */
static pthread_once_t st_once = PTHREAD_ONCE_INIT;
static struct st_config st_cfg;
static bool st_cfg_ok;
static CK_FUNCTION_LIST_PTR st_real;
static uint64_t st_latency_ns[ST_N];	/* C_Sign's is applied in sp_C_Sign */

static atomic_ulong st_calls[ST_N];
static atomic_ulong st_sessions;	/* sessions opened through us, still open */
static pthread_mutex_t st_lock = PTHREAD_MUTEX_INITIALIZER;
static int st_exclusive_fd = -1;	/* SLOWTOKEN_EXCLUSIVE: held from C_Initialize to C_Finalize */

struct st_call {
	enum st_fn fn;
	uint64_t t_enter;		/* CLOCK_MONOTONIC ns at entry */
	uint64_t t_start;		/* ... once the lock is held: the service starts */
	const struct st_fault *fault;	/* RV or BIGLEN to apply; NULL to forward */
	const struct st_fault *fired;	/* the fault that matched, for the log */
	bool has_slot;			/* the log names the slot (C_OpenSession, C_Login) */
	CK_SLOT_ID slot;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Sleeps to an absolute deadline, so signals (EINTR) do not shorten it. */
static void
sleep_ns(uint64_t ns)
{
	struct timespec dl;
	uint64_t end;

	if (ns == 0) {
		return;
	}
	end = now_ns() + ns;
	dl.tv_sec = (time_t)(end / 1000000000u);
	dl.tv_nsec = (long)(end % 1000000000u);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL) == EINTR) {
		continue;
	}
}

static void
load_real(void)
{
	void *h = dlopen(st_cfg.module, RTLD_NOW | RTLD_LOCAL);
	CK_C_GetFunctionList get = NULL;
	CK_FUNCTION_LIST_PTR fl = NULL;

	if (h == NULL) {
		fprintf(stderr, "slowtoken: SLOWTOKEN_MODULE: %s\n", dlerror());
		return;
	}
	/* POSIX dlsym returns an object pointer; this is the sanctioned cast. */
	*(void **)&get = dlsym(h, "C_GetFunctionList");
	if (get == NULL || get(&fl) != CKR_OK || fl == NULL) {
		fprintf(stderr, "slowtoken: %s: no usable C_GetFunctionList\n", st_cfg.module);
		dlclose(h);
		return;
	}
	st_real = fl;	/* the handle stays open for the life of the process */
}

static void
setup(void)
{
	st_cfg_ok = st_config_read(&st_cfg, st_names, ST_N, F_C_Sign);
	st_latency_ns[F_C_Initialize] = st_cfg.init_ns;
	st_latency_ns[F_C_Login] = st_cfg.login_ns;
	st_latency_ns[F_C_OpenSession] = st_cfg.open_ns;
	if (st_cfg_ok) {
		load_real();
	}
}

static const struct st_fault *
fault_find(enum st_fn fn, unsigned long n)
{
	for (size_t i = 0; i < st_cfg.n_faults; i++) {
		const struct st_fault *f = &st_cfg.faults[i];

		if (f->fn == (unsigned)fn && (n == f->k || (f->and_later && n > f->k) ||
					      (f->every != 0 && n > f->k && (n - f->k) % f->every == 0))) {
			return f;
		}
	}
	return NULL;
}

static void
call_begin(struct st_call *c, enum st_fn fn)
{
	unsigned long n;

	pthread_once(&st_once, setup);
	c->fn = fn;
	c->has_slot = false;
	c->t_enter = now_ns();
	n = atomic_fetch_add(&st_calls[fn], 1) + 1;
	c->fault = fault_find(fn, n);
	c->fired = c->fault;
	if (st_cfg.serial) {
		pthread_mutex_lock(&st_lock);
	}
	c->t_start = now_ns();
	if (c->fault != NULL && c->fault->kind == ST_FAULT_HANG) {
		sleep_ns(st_cfg.hang_ns);
		c->fault = NULL;
	}
	if (c->fault == NULL || c->fault->kind != ST_FAULT_RV) {
		sleep_ns(st_latency_ns[fn]);
	}
}

/*
 * "C_Sign rv=CKR_OK 20.081ms wait=0.002ms span=1234567-1254648 pid=42": the
 * time from taking the lock to the return, the time spent waiting for the
 * lock, that interval in CLOCK_MONOTONIC microseconds; " fault=X" follows
 * when a fault was injected. One write() of the whole line to an O_APPEND
 * descriptor, so lines from threads and processes never interleave.
 */
static void
call_end(const struct st_call *c, CK_RV rv)
{
	uint64_t t_end = now_ns();
	const char *name = st_rv_name(rv);
	char rvbuf[24];
	char fault[48] = "";
	char slot[32] = "";
	char line[288];
	int len;

	if (st_cfg.serial) {
		pthread_mutex_unlock(&st_lock);
	}
	if (st_cfg.log_fd < 0) {
		return;
	}
	if (name == NULL) {
		snprintf(rvbuf, sizeof(rvbuf), "0x%lx", rv);
		name = rvbuf;
	}
	if (c->fired != NULL) {
		const char *what = c->fired->kind == ST_FAULT_HANG ? "HANG" :
				   c->fired->kind == ST_FAULT_BIGLEN ? "BIGLEN" :
				   c->fired->kind == ST_FAULT_CORRUPT ? "CORRUPT" :
				   st_rv_name(c->fired->rv);

		if (what != NULL) {
			snprintf(fault, sizeof(fault), " fault=%s", what);
		} else {
			snprintf(fault, sizeof(fault), " fault=0x%lx", c->fired->rv);
		}
	}
	if (c->has_slot) {
		snprintf(slot, sizeof(slot), " slot=%lu", c->slot);
	}
	len = snprintf(line, sizeof(line),
		       "%s rv=%s %.3fms wait=%.3fms span=%llu-%llu pid=%ld%s%s\n",
		       st_names[c->fn], name, (double)(t_end - c->t_start) / 1e6,
		       (double)(c->t_start - c->t_enter) / 1e6,
		       (unsigned long long)(c->t_start / 1000), (unsigned long long)(t_end / 1000),
		       (long)getpid(), slot, fault);
	if (len > 0 && (size_t)len < sizeof(line)) {
		ssize_t w = write(st_cfg.log_fd, line, (size_t)len);

		(void)w;	/* a lost log line shows as a failed count */
	}
}

/* Calls before a real module is loaded (bad configuration) fail here. */
#define ST_REAL(name, args) \
	(st_real == NULL ? CKR_GENERAL_ERROR : \
	 st_real->name == NULL ? CKR_FUNCTION_NOT_SUPPORTED : st_real->name args)

/* The locals' names cannot clash with a parameter name of the table. */
#define ST_PLAIN(name, params, args) \
	static CK_RV w_##name params \
	{ \
		struct st_call st_c_; \
		CK_RV st_rv_; \
		call_begin(&st_c_, F_##name); \
		st_rv_ = st_c_.fault != NULL ? st_c_.fault->rv : ST_REAL(name, args); \
		call_end(&st_c_, st_rv_); \
		return st_rv_; \
	}

#define ST_SPECIAL(name, params, args) \
	static CK_RV w_##name params \
	{ \
		struct st_call st_c_; \
		CK_RV st_rv_; \
		call_begin(&st_c_, F_##name); \
		st_rv_ = sp_##name(&st_c_, ST_UNPAREN args); \
		call_end(&st_c_, st_rv_); \
		return st_rv_; \
	}

static CK_FUNCTION_LIST st_list;

/* Special: the shim's own function list, whether or not the real one loaded. */
static CK_RV
sp_C_GetFunctionList(const struct st_call *c, CK_FUNCTION_LIST_PTR_PTR l)
{
	if (c->fault != NULL) {
		return c->fault->rv;
	}
	if (l == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	*l = &st_list;
	return CKR_OK;
}

/* An exclusive flock on @path (created if missing), named by @setting in errors: the descriptor, or -1. */
static int
lock_file(const char *path, const char *setting)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0) {
		fprintf(stderr, "slowtoken: %s=%s: %s\n", setting, path, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			fprintf(stderr, "slowtoken: flock %s: %s\n", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

/*
 * SLOWTOKEN_EXCLUSIVE: one process on the token at a time, as a card one
 * PC/SC client holds. SoftHSM2 2.6.1's file store fails now and then when two
 * processes start on one token at the same moment; a real token arbitrates.
 * The lock is taken before the real C_Initialize and dropped after the real
 * C_Finalize (or by the process's exit). The wait counts as C_Initialize's
 * service time in the log.
 */
static CK_RV
exclusive_take(void)
{
	if (st_cfg.exclusive == NULL || st_exclusive_fd >= 0) {
		return CKR_OK;
	}
	st_exclusive_fd = lock_file(st_cfg.exclusive, "SLOWTOKEN_EXCLUSIVE");
	return st_exclusive_fd >= 0 ? CKR_OK : CKR_GENERAL_ERROR;
}

static void
exclusive_drop(void)
{
	if (st_exclusive_fd >= 0) {
		close(st_exclusive_fd);	/* releases the flock */
		st_exclusive_fd = -1;
	}
}

/*
 * The arguments (CKF_OS_LOCKING_OK, mutex callbacks) are forwarded as they are.
 * SLOWTOKEN_INIT_LOCK is held around the real C_Initialize only: two copies of
 * SoftHSM2 in one process (two "cards") then never read their one token
 * directory at the same moment, which SoftHSM2 2.6.1's file store does not
 * survive, while the shims' start-ups (SLOWTOKEN_INIT_MS) still overlap.
 */
static CK_RV
sp_C_Initialize(const struct st_call *c, CK_VOID_PTR a)
{
	CK_RV rv;
	int init_fd = -1;

	if (c->fault != NULL) {
		return c->fault->rv;
	}
	if (!st_cfg_ok) {
		return CKR_GENERAL_ERROR;
	}
	rv = exclusive_take();
	if (rv != CKR_OK) {
		return rv;
	}
	if (st_cfg.init_lock != NULL) {
		init_fd = lock_file(st_cfg.init_lock, "SLOWTOKEN_INIT_LOCK");
		if (init_fd < 0) {
			exclusive_drop();
			return CKR_GENERAL_ERROR;
		}
	}
	rv = ST_REAL(C_Initialize, (a));
	if (init_fd >= 0) {
		close(init_fd);	/* releases the flock */
	}
	if (rv != CKR_OK && rv != CKR_CRYPTOKI_ALREADY_INITIALIZED) {
		exclusive_drop();
	}
	return rv;
}

static CK_RV
sp_C_Finalize(const struct st_call *c, CK_VOID_PTR r)
{
	CK_RV rv;

	if (c->fault != NULL) {
		return c->fault->rv;
	}
	rv = ST_REAL(C_Finalize, (r));
	if (rv == CKR_OK) {
		atomic_store(&st_sessions, 0);
		exclusive_drop();
	}
	return rv;
}

/* SLOWTOKEN_SERIAL: a reader slot with a card, as the reader says. */
static CK_RV
sp_C_GetSlotInfo(const struct st_call *c, CK_SLOT_ID s, CK_SLOT_INFO_PTR i)
{
	CK_RV rv;

	if (c->fault != NULL) {
		return c->fault->rv;
	}
	rv = ST_REAL(C_GetSlotInfo, (s, i));
	if (rv == CKR_OK && st_cfg.serial) {
		i->flags |= CKF_HW_SLOT;
	}
	return rv;
}

static CK_RV
sp_C_GetTokenInfo(const struct st_call *c, CK_SLOT_ID s, CK_TOKEN_INFO_PTR i)
{
	CK_RV rv;

	if (c->fault != NULL) {
		return c->fault->rv;
	}
	rv = ST_REAL(C_GetTokenInfo, (s, i));
	if (rv == CKR_OK && st_cfg.max_sessions != 0) {
		i->ulMaxSessionCount = st_cfg.max_sessions;
		i->ulMaxRwSessionCount = st_cfg.max_sessions;
	}
	if (rv == CKR_OK) {
		i->flags |= st_cfg.pin_flags;	/* the flags only: C_Login still reaches the token */
	}
	return rv;
}

/* SLOWTOKEN_MAX_SESSIONS: a place is reserved before the real call. */
static CK_RV
sp_C_OpenSession(struct st_call *c, CK_SLOT_ID s, CK_FLAGS f, CK_VOID_PTR a,
		 CK_NOTIFY cb, CK_SESSION_HANDLE_PTR h)
{
	unsigned long cur = atomic_load(&st_sessions);
	CK_RV rv;

	c->has_slot = true;
	c->slot = s;
	if (c->fault != NULL) {
		return c->fault->rv;
	}
	do {
		if (st_cfg.max_sessions != 0 && cur >= st_cfg.max_sessions) {
			return CKR_SESSION_COUNT;
		}
	} while (!atomic_compare_exchange_weak(&st_sessions, &cur, cur + 1));
	rv = ST_REAL(C_OpenSession, (s, f, a, cb, h));
	if (rv != CKR_OK) {
		atomic_fetch_sub(&st_sessions, 1);
	}
	return rv;
}

/*
 * The log names the token a login went to (tests count logins per token):
 * the real module says which slot the session is on, in a call not logged.
 */
static CK_RV
sp_C_Login(struct st_call *c, CK_SESSION_HANDLE h, CK_USER_TYPE u, CK_UTF8CHAR_PTR p,
	   CK_ULONG n)
{
	CK_SESSION_INFO info;

	memset(&info, 0, sizeof(info));
	if (ST_REAL(C_GetSessionInfo, (h, &info)) == CKR_OK) {
		c->has_slot = true;
		c->slot = info.slotID;
	}
	if (c->fault != NULL) {
		return c->fault->rv;
	}
	return ST_REAL(C_Login, (h, u, p, n));
}

static CK_RV
sp_C_CloseSession(const struct st_call *c, CK_SESSION_HANDLE h)
{
	unsigned long cur = atomic_load(&st_sessions);
	CK_RV rv;

	if (c->fault != NULL) {
		return c->fault->rv;
	}
	rv = ST_REAL(C_CloseSession, (h));
	if (rv != CKR_OK) {
		return rv;
	}
	while (cur > 0 && !atomic_compare_exchange_weak(&st_sessions, &cur, cur - 1)) {
		continue;
	}
	return rv;
}

/* Counts sessions for all slots as one: the shim is for one-token tests. */
static CK_RV
sp_C_CloseAllSessions(const struct st_call *c, CK_SLOT_ID s)
{
	CK_RV rv;

	if (c->fault != NULL) {
		return c->fault->rv;
	}
	rv = ST_REAL(C_CloseAllSessions, (s));
	if (rv == CKR_OK) {
		atomic_store(&st_sessions, 0);
	}
	return rv;
}

/*
 * An injected error ends the real signing operation too, as a failing C_Sign
 * does on a real token (PKCS#11 2.40, 5.12): the signature goes to scratch.
 */
static void
sign_discard(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn)
{
	CK_BYTE scratch[2048];
	CK_ULONG n = sizeof(scratch);
	CK_BYTE_PTR big = NULL;

	if (ST_REAL(C_Sign, (h, d, dn, scratch, &n)) != CKR_BUFFER_TOO_SMALL) {
		return;
	}
	big = malloc(n);
	if (big == NULL) {
		return;
	}
	(void)ST_REAL(C_Sign, (h, d, dn, big, &n));
	free(big);
}

/*
 * SLOWTOKEN_SIGN_MS is how long a call that makes a signature takes in all:
 * the real module's own work stands for the token's computation, and the
 * rest is slept, so the floor of a run is exactly N x SIGN_MS. Length
 * queries (o == NULL) are free: a token answers them from the key size.
 * CKR_BUFFER_TOO_SMALL sets the length the real module needs and leaves the
 * operation active, as the spec asks; BIGLEN claims one byte more than the
 * caller's buffer (or the real length, on a query) but writes nothing past it;
 * CORRUPT returns CKR_OK with one bit of the real signature flipped.
 */
static CK_RV
sp_C_Sign(const struct st_call *c, CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn,
	  CK_BYTE_PTR o, CK_ULONG_PTR on)
{
	CK_ULONG cap = (o != NULL && on != NULL) ? *on : 0;
	CK_ULONG need = 0;
	CK_RV rv;

	if (c->fault != NULL && c->fault->kind == ST_FAULT_RV) {
		if (c->fault->rv == CKR_BUFFER_TOO_SMALL) {
			if (on != NULL && ST_REAL(C_Sign, (h, d, dn, NULL, &need)) == CKR_OK) {
				*on = need;
			}
		} else if (c->fault->rv != CKR_OK) {
			sign_discard(h, d, dn);
		}
		return c->fault->rv;
	}
	rv = ST_REAL(C_Sign, (h, d, dn, o, on));
	if (o != NULL) {
		uint64_t spent = now_ns() - c->t_start;

		sleep_ns(spent < st_cfg.sign_ns ? st_cfg.sign_ns - spent : 0);
	}
	if (rv == CKR_OK && on != NULL && c->fault != NULL && c->fault->kind == ST_FAULT_BIGLEN) {
		*on = (cap > *on ? cap : *on) + 1;
	}
	/* A token's fault: a signature that is not one, reported as CKR_OK. */
	if (rv == CKR_OK && o != NULL && on != NULL && *on > 0 && c->fault != NULL &&
	    c->fault->kind == ST_FAULT_CORRUPT) {
		o[*on - 1] ^= 0x01;
	}
	return rv;
}

ST_FUNCTIONS(ST_PLAIN, ST_SPECIAL)

static CK_FUNCTION_LIST st_list = {
	.version = { CRYPTOKI_VERSION_MAJOR, CRYPTOKI_VERSION_MINOR },
	ST_FUNCTIONS(ST_ENTRY, ST_ENTRY)
};

/* The one exported symbol; works before C_Initialize, as PKCS#11 requires. */
__attribute__((visibility("default"))) CK_RV
C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR l)
{
	return w_C_GetFunctionList(l);
}
