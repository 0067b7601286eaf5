/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The token context and the helpers shared by the files of src/pkcs11/ and
 * their unit tests (ms_p11i_: p11_ is p11-kit's prefix). Only this
 * directory includes the p11-kit headers.
 */
#ifndef MS_P11_INTERNAL_H
#define MS_P11_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <p11-kit/p11-kit.h>
#include <p11-kit/pkcs11.h>
#include <p11-kit/uri.h>

#include "p11.h"
#include "pkcs11_v32.h"

/* CK_ULONG and size_t convert only in src/pkcs11/, and losslessly. */
_Static_assert(sizeof(CK_ULONG) >= sizeof(size_t), "CK_ULONG narrower than size_t");

/* Modules a URI may select at once (module-name= can match several). */
#define MS_P11I_MODULES_MAX 32
/* Sessions on the chosen token: session 0 plus parallel signers. */
#define MS_P11I_SESSIONS_MAX 64
/* Objects one search reports; more than one is already ambiguous. */
#define MS_P11I_FIND_MAX 16
/* Ceilings for attributes we read from a module (untrusted lengths). */
#define MS_P11I_LABEL_MAX 256
#define MS_P11I_ID_MAX 128
#define MS_P11I_CERT_MAX (64u * 1024u)
#define MS_P11I_MODULUS_MAX 1024	/* RSA-8192, as struct ms_p11_pubkey */
#define MS_P11I_EC_PARAMS_MAX 128	/* as struct ms_p11_pubkey */
/* Longest data we hand to C_Sign: a DigestInfo, a digest or ML-DSA's signed attributes. */
#define MS_P11I_TBS_MAX 1024
/* Longest part handed to one C_SignUpdate: a module crosses to the token in parts. */
#define MS_P11I_PART_MAX (1024u * 1024u)

/* One module selected by the URI and whether we initialised it ourselves. */
struct ms_p11i_module {
	CK_FUNCTION_LIST *fl;
	bool is_init;		/* p11_kit_module_initialize() succeeded */
	char name[64];		/* p11-kit config name or file basename, display only */
};

/* One open session and the last ms_p11_sign() failure on it. */
struct ms_p11i_session {
	CK_SESSION_HANDLE h;
	bool is_open;
	struct ms_p11_fail fail;
	/* A session copy of the key (see key_in_memory); dies with the session. */
	CK_OBJECT_HANDLE key_copy;	/* CK_INVALID_HANDLE: sign with the token object */
	bool copy_tried;
};

struct ms_p11 {
	P11KitUri *uri;			/* parsed URI, owns the pin-value text */
	enum ms_p11_for open_for;	/* the object the token must hold */
	CK_FUNCTION_LIST **list;	/* p11-kit registry list, or NULL */
	bool list_all_init;		/* list came from _load_and_initialize */
	struct ms_p11i_module mods[MS_P11I_MODULES_MAX];
	size_t n_mods;

	/* The chosen token (valid once has_token). */
	bool has_token;
	CK_FUNCTION_LIST *fl;		/* borrowed from mods[] */
	size_t mod_index;
	CK_SLOT_ID slot;
	CK_FLAGS token_flags;		/* CK_TOKEN_INFO.flags at open */
	CK_FLAGS slot_flags;		/* CK_SLOT_INFO.flags at open */
	char token_label[33];		/* trimmed, control bytes replaced */
	char token_serial[17];		/* likewise */
	CK_TOKEN_INFO token_info;	/* as the token gave it at open */
	bool key_in_memory;		/* SoftHSM2: sign with a session copy of the key */

	struct ms_p11i_session sess[MS_P11I_SESSIONS_MAX];
	unsigned n_sess;

	/* Login state (one C_Login per run: HACKING.md, Secrets). */
	bool login_tried;		/* C_Login(CKU_USER) was called */
	bool login_done;		/* ms_p11_login() succeeded */
	bool logged_in;			/* our C_Login succeeded: C_Logout at close */
	const struct ms_pin *pin;	/* the caller's, never copied */
	atomic_bool pin_rejected;	/* set by any thread on a PIN failure */
	pthread_mutex_t recover_lock;	/* one session recovery at a time */

	/* The found private key (valid once has_key). */
	bool has_key;
	_Atomic CK_OBJECT_HANDLE key;	/* replaced when a lost login is recovered */
	enum ms_p11_key_type key_type;
	bool key_always_auth;
	size_t key_sig_len;		/* expected C_Sign length; 0 unknown (RSA only) */
	CK_MECHANISM_TYPE key_mech;	/* CKM_RSA_PKCS, CKM_ECDSA or CKM_ML_DSA */
	size_t key_ec_widen_len;	/* EC: shorter digests are left-padded to this */
	uint8_t key_id[MS_P11I_ID_MAX];
	size_t key_id_len;
	bool key_has_id;

	struct ms_p11_fail fail;
};

/*
 * The files and what each calls in the others; no file calls one that
 * calls it back:
 *   errors.c   failure records, safe text, CK_RV names and kinds
 *   uri.c      the pkcs11: URI                         -> errors
 *   objects.c  attributes, key and certificate lookup  -> errors
 *   token.c    token choice, sessions                  -> objects, uri, errors
 *   module.c   modules, open and close, accessors      -> token, uri, errors
 *   login.c    the login, recovery of a lost session   -> token, objects, errors
 *   sign.c     C_Sign                                  -> token, login, module, errors
 */

/* errors.c */
void ms_p11i_fail_clear(struct ms_p11_fail *f);
void ms_p11i_fail_set(struct ms_p11_fail *f, const char *call, CK_RV rv, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ms_p11i_fail_append(struct ms_p11_fail *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ms_p11i_text_clean(char *dst, size_t cap, const unsigned char *src, size_t len);
void ms_p11i_hex(char *dst, size_t cap, const uint8_t *src, size_t len);
/* Whether @rv says the token refused the PIN (C_Login). */
bool ms_p11i_rv_is_pin_error(CK_RV rv);

/* When a failure may have a cause outside the token (ms_p11i_hint_append()). */
enum ms_p11i_hint_when {
	MS_P11I_HINT_INIT = 1,		/* C_Initialize failed with @rv */
	MS_P11I_HINT_NO_TOKEN,		/* the module showed no matching token */
};
/*
 * Appends to @f a "\n  hint: ..." line on what to check outside the token
 * when module @fl is one whose such failure usually has a cause there
 * (NSS's softokn without init parameters, openCryptoki without pkcsslotd,
 * p11-kit-client.so without a server); nothing for other modules. The
 * hints live in one table in errors.c, keyed by module file name.
 */
void ms_p11i_hint_append(struct ms_p11_fail *f, CK_FUNCTION_LIST *fl,
			 enum ms_p11i_hint_when when, CK_RV rv);

/* uri.c */
ms_err ms_p11i_uri_parse(struct ms_p11 *p11, const char *uri) MS_MUST_CHECK;
void ms_p11i_uri_describe(struct ms_p11 *p11, struct ms_p11_fail *f);

/* objects.c */
/* Object attributes p11-kit takes from a URI: CKA_CLASS, CKA_LABEL, CKA_ID. */
#define MS_P11I_TMPL_MAX 8

/* A search template: the URI's object attributes with our own class. */
struct ms_p11i_query {
	CK_ATTRIBUTE tmpl[MS_P11I_TMPL_MAX];
	CK_ULONG n;
	CK_OBJECT_CLASS cls;		/* the class we search; tmpl points here */
	CK_CERTIFICATE_TYPE cert_type;	/* CKC_X_509 for certificates */
	bool has_uri_cls;
	CK_OBJECT_CLASS uri_cls;	/* type= of the URI */
};

ms_err ms_p11i_query_build(const struct ms_p11 *p11, struct ms_p11i_query *q,
			   CK_OBJECT_CLASS cls) MS_MUST_CHECK;
void ms_p11i_query_describe(const struct ms_p11 *p11, struct ms_p11_fail *f);
ms_err ms_p11i_find_on(CK_FUNCTION_LIST *fl, CK_SESSION_HANDLE h, CK_ATTRIBUTE *tmpl,
		       CK_ULONG n_tmpl, CK_OBJECT_HANDLE *out, size_t cap, size_t *n_out,
		       struct ms_p11_fail *f) MS_MUST_CHECK;
/*
 * ms_p11i_key_refind() - look the key up again on session @h, by the same URI
 * query: a token that forgot our login may also have dropped the handles of
 * private objects (SoftHSM2 does). Caller holds recover_lock.
 */
ms_err ms_p11i_key_refind(struct ms_p11 *p11, CK_SESSION_HANDLE h) MS_MUST_CHECK;

/* token.c */
ms_err ms_p11i_token_select(struct ms_p11 *p11) MS_MUST_CHECK;
bool ms_p11i_token_is_softhsm(const CK_TOKEN_INFO *info);
/* Whether a TPM guards the chosen token's PINs (token.c says how it is told). */
bool ms_p11i_token_is_tpm(const struct ms_p11 *p11);
ms_err ms_p11i_session_open(struct ms_p11 *p11, CK_SESSION_HANDLE *h, struct ms_p11_fail *f)
	MS_MUST_CHECK;
/* @s now runs on new session @h; what was tied to the old one is gone. */
void ms_p11i_session_replace(struct ms_p11i_session *s, CK_SESSION_HANDLE h);

/* login.c */
CK_RV ms_p11i_call_login(struct ms_p11 *p11, CK_SESSION_HANDLE h, CK_USER_TYPE user,
			 const struct ms_pin *pin);

#endif
