// SPDX-License-Identifier: GPL-2.0-only
/* mldsatoken: the token's objects and sessions, shared by its files. */
#ifndef MLDSATOKEN_H
#define MLDSATOKEN_H

#include <stdbool.h>
#include <stddef.h>

#include <p11-kit/pkcs11.h>
#include <openssl/evp.h>

#include "../../src/pkcs11/pkcs11_v32.h"

/* Only C_GetFunctionList leaves the shared object. */
#pragma GCC visibility push(hidden)

#define MT_KEYS_MAX 16
#define MT_ATTRS_MAX 24
#define MT_CONTEXT_MAX 255	/* FIPS 204: a context string has at most 255 bytes */
#define MT_SLOT 1
#define MT_SESSIONS_MAX 64

struct mt_attr {
	CK_ATTRIBUTE_TYPE type;
	unsigned char *val;
	CK_ULONG len;
};

struct mt_key {
	EVP_PKEY *pkey;
	CK_ULONG param_set;	/* CKP_ML_DSA_44, _65 or _87 */
	size_t sig_len;		/* the parameter set's signature length */
};

/* A private key, its public key or its certificate. */
struct mt_object {
	CK_OBJECT_CLASS cls;
	bool is_private;	/* CKA_PRIVATE: seen only after C_Login */
	struct mt_key *key;	/* the private key's; NULL for the others */
	struct mt_attr attrs[MT_ATTRS_MAX];
	size_t n_attrs;
};

struct mt_token {
	char label[33];
	char serial[17];
	unsigned char pin[64];
	size_t pin_len;
	struct mt_key keys[MT_KEYS_MAX];
	size_t n_keys;
	struct mt_object objects[3 * MT_KEYS_MAX];	/* handle = index + 1 */
	size_t n_objects;
};

/*
 * Loads every "<label>.key.pem" (an unencrypted ML-DSA private key) of @dir
 * with its "<label>.crt.pem", the user PIN from "pin" and the token label
 * from "label" (default "mldsa-test"). Returns false after printing why to
 * stderr; mt_token_free() then releases what was loaded.
 */
bool mt_token_load(struct mt_token *tok, const char *dir);

/* Releases every key and attribute of @tok and zeroes it. */
void mt_token_free(struct mt_token *tok);

/* The attribute @type of @obj, or NULL. */
const struct mt_attr *mt_attr_find(const struct mt_object *obj, CK_ATTRIBUTE_TYPE type);

/*
 * Pure ML-DSA (FIPS 204 ML-DSA.Sign, message as given) of @msg with @key's
 * private key and context string @ctx; hedged unless @deterministic.
 * @sig holds @key->sig_len bytes; *@sig_len receives the length written.
 */
/* mt_read_line: the first line of file @path, without its end, into @buf (at most @cap - 1 bytes). */
bool mt_read_line(const char *path, char *buf, size_t cap, size_t *len);

CK_RV mt_key_sign(const struct mt_key *key, bool deterministic, const unsigned char *ctx,
		  size_t ctx_len, const unsigned char *msg, size_t msg_len, unsigned char *sig,
		  size_t *sig_len);

struct mt_session {
	bool open;
	CK_FLAGS flags;
	/* C_FindObjects */
	bool finding;
	CK_OBJECT_HANDLE found[3 * MT_KEYS_MAX];
	size_t n_found, next_found;
	/* C_Sign*: pure ML-DSA needs the whole message, so it is gathered here */
	bool signing, multipart;
	const struct mt_key *key;
	bool deterministic;
	unsigned char ctx[MT_CONTEXT_MAX];
	size_t ctx_len;
	unsigned char *msg;
	size_t msg_len, msg_cap;
};

/* The one token (token.c); every access is under the entry points' lock. */
extern bool mt_initialized;
extern bool mt_logged_in;
extern struct mt_token mt_tok;
extern struct mt_session mt_sessions[MT_SESSIONS_MAX];

/* The open session of handle @h, or NULL. */
struct mt_session *mt_session_of(CK_SESSION_HANDLE h);

/* The object of handle @h, if the caller may see it (private ones after C_Login). */
struct mt_object *mt_object_of(CK_OBJECT_HANDLE h);

/* Ends @s's signing operation and wipes the message it gathered. */
void mt_sign_end(struct mt_session *s);

/*
 * The PKCS#11 functions the token implements (token.c, sign.c), called by
 * the entry points of mldsatoken.c with the lock held and after checking
 * that C_Initialize ran (but mt_initialize).
 */
CK_RV mt_initialize(CK_VOID_PTR a);
CK_RV mt_finalize(CK_VOID_PTR r);
CK_RV mt_get_info(CK_INFO_PTR info);
CK_RV mt_get_slot_list(CK_BBOOL present, CK_SLOT_ID_PTR list, CK_ULONG_PTR n);
CK_RV mt_get_slot_info(CK_SLOT_ID slot, CK_SLOT_INFO_PTR info);
CK_RV mt_get_token_info(CK_SLOT_ID slot, CK_TOKEN_INFO_PTR info);
CK_RV mt_get_mechanism_list(CK_SLOT_ID slot, CK_MECHANISM_TYPE_PTR list, CK_ULONG_PTR n);
CK_RV mt_get_mechanism_info(CK_SLOT_ID slot, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO_PTR info);
CK_RV mt_open_session(CK_SLOT_ID slot, CK_FLAGS flags, CK_SESSION_HANDLE_PTR h);
CK_RV mt_close_session(CK_SESSION_HANDLE h);
CK_RV mt_close_all_sessions(CK_SLOT_ID slot);
CK_RV mt_get_session_info(CK_SESSION_HANDLE h, CK_SESSION_INFO_PTR info);
CK_RV mt_login(CK_SESSION_HANDLE h, CK_USER_TYPE user, CK_UTF8CHAR_PTR pin, CK_ULONG len);
CK_RV mt_logout(CK_SESSION_HANDLE h);
CK_RV mt_get_attribute_value(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t,
			     CK_ULONG n);
CK_RV mt_find_objects_init(CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR t, CK_ULONG n);
CK_RV mt_find_objects(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE_PTR o, CK_ULONG max, CK_ULONG_PTR n);
CK_RV mt_find_objects_final(CK_SESSION_HANDLE h);
CK_RV mt_sign_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k);
CK_RV mt_sign(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR sig,
	      CK_ULONG_PTR sig_len);
CK_RV mt_sign_update(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn);
CK_RV mt_sign_final(CK_SESSION_HANDLE h, CK_BYTE_PTR sig, CK_ULONG_PTR sig_len);

#pragma GCC visibility pop

#endif
