// SPDX-License-Identifier: GPL-2.0-only
/*
 * mldsatoken: the token's state, sessions, login, objects and their
 * attributes (the PKCS#11 calls but C_Sign*; README.md). Each mt_ function
 * here and in sign.c runs under the lock its entry point in mldsatoken.c
 * holds.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "mldsatoken.h"

bool mt_initialized;
bool mt_logged_in;
struct mt_token mt_tok;
struct mt_session mt_sessions[MT_SESSIONS_MAX];

static void
pad(CK_UTF8CHAR *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	memset(dst, ' ', cap);
	memcpy(dst, src, n < cap ? n : cap);
}

struct mt_session *
mt_session_of(CK_SESSION_HANDLE h)
{
	if (h == 0 || h > MT_SESSIONS_MAX || !mt_sessions[h - 1].open) {
		return NULL;
	}
	return &mt_sessions[h - 1];
}

/* The object of handle @h, if the session may see it (private ones after C_Login). */
struct mt_object *
mt_object_of(CK_OBJECT_HANDLE h)
{
	struct mt_object *obj;

	if (h == 0 || h > mt_tok.n_objects) {
		return NULL;
	}
	obj = &mt_tok.objects[h - 1];
	if (obj->is_private && !mt_logged_in) {
		return NULL;
	}
	return obj;
}

static void
session_close(struct mt_session *s)
{
	mt_sign_end(s);
	memset(s, 0, sizeof(*s));
}

static void
close_all(void)
{
	for (size_t i = 0; i < MT_SESSIONS_MAX; i++) {
		session_close(&mt_sessions[i]);
	}
	mt_logged_in = false;
}

/* The token logs out when its last session closes (PKCS#11 2.40, 5.6). */
static void
logout_if_idle(void)
{
	for (size_t i = 0; i < MT_SESSIONS_MAX; i++) {
		if (mt_sessions[i].open) {
			return;
		}
	}
	mt_logged_in = false;
}

/*
 * A copy of the module (cp build/mldsatoken.so x.so) reads its directory
 * from x.so.dir when that file exists, so that one process can load two
 * tokens (modsign --key), as slowtoken's copies read x.so.conf.
 */
static bool
copy_dir(char *buf, size_t cap)
{
	Dl_info info;
	char path[4096];
	size_t len = 0;

	if (dladdr((void *)(uintptr_t)mt_initialize, &info) == 0 || info.dli_fname == NULL ||
	    snprintf(path, sizeof(path), "%s.dir", info.dli_fname) >= (int)sizeof(path)) {
		return false;
	}
	return mt_read_line(path, buf, cap, &len) && len > 0;
}

CK_RV
mt_initialize(CK_VOID_PTR a)
{
	CK_C_INITIALIZE_ARGS *args = a;
	const char *dir = NULL;
	static char own[4096];

	if (mt_initialized) {
		return CKR_CRYPTOKI_ALREADY_INITIALIZED;
	}
	/* p11-kit passes a module config's x-init-reserved as pReserved. */
	if (args != NULL && args->pReserved != NULL) {
		dir = args->pReserved;
	} else if (copy_dir(own, sizeof(own))) {
		dir = own;
	} else {
		dir = getenv("MLDSATOKEN_DIR");
	}
	if (dir == NULL || dir[0] == '\0') {
		fprintf(stderr, "mldsatoken: no key directory: set MLDSATOKEN_DIR or "
				"x-init-reserved\n");
		return CKR_GENERAL_ERROR;
	}
	if (!mt_token_load(&mt_tok, dir)) {
		mt_token_free(&mt_tok);
		return CKR_GENERAL_ERROR;
	}
	mt_initialized = true;
	mt_logged_in = false;
	return CKR_OK;
}

CK_RV
mt_finalize(CK_VOID_PTR r)
{
	if (r != NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	close_all();
	mt_token_free(&mt_tok);
	mt_initialized = false;
	return CKR_OK;
}

CK_RV
mt_get_info(CK_INFO_PTR info)
{
	if (info == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	memset(info, 0, sizeof(*info));
	info->cryptokiVersion.major = 2;
	info->cryptokiVersion.minor = 40;
	pad(info->manufacturerID, sizeof(info->manufacturerID), "modsign tests");
	pad(info->libraryDescription, sizeof(info->libraryDescription),
	    "mldsatoken ML-DSA test double");
	info->libraryVersion.major = 1;
	return CKR_OK;
}

/* A list of one @item, as C_GetSlotList and C_GetMechanismList return it. */
static CK_RV
one_item(CK_ULONG item, CK_ULONG_PTR list, CK_ULONG_PTR n)
{
	if (n == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	if (list != NULL) {
		if (*n < 1) {
			*n = 1;
			return CKR_BUFFER_TOO_SMALL;
		}
		list[0] = item;
	}
	*n = 1;
	return CKR_OK;
}

CK_RV
mt_get_slot_list(CK_BBOOL present, CK_SLOT_ID_PTR list, CK_ULONG_PTR n)
{
	(void)present;
	return one_item(MT_SLOT, list, n);
}

CK_RV
mt_get_slot_info(CK_SLOT_ID slot, CK_SLOT_INFO_PTR info)
{
	if (slot != MT_SLOT) {
		return CKR_SLOT_ID_INVALID;
	}
	if (info == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	memset(info, 0, sizeof(*info));
	pad(info->slotDescription, sizeof(info->slotDescription), "mldsatoken slot");
	pad(info->manufacturerID, sizeof(info->manufacturerID), "modsign tests");
	info->flags = CKF_TOKEN_PRESENT;
	return CKR_OK;
}

CK_RV
mt_get_token_info(CK_SLOT_ID slot, CK_TOKEN_INFO_PTR info)
{
	CK_ULONG n = 0;

	if (slot != MT_SLOT) {
		return CKR_SLOT_ID_INVALID;
	}
	if (info == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	memset(info, 0, sizeof(*info));
	pad(info->label, sizeof(info->label), mt_tok.label);
	pad(info->manufacturerID, sizeof(info->manufacturerID), "modsign tests");
	pad(info->model, sizeof(info->model), "mldsatoken");
	pad(info->serialNumber, sizeof(info->serialNumber), mt_tok.serial);
	info->flags = CKF_TOKEN_INITIALIZED | CKF_LOGIN_REQUIRED | CKF_USER_PIN_INITIALIZED |
		      CKF_WRITE_PROTECTED;
	for (size_t i = 0; i < MT_SESSIONS_MAX; i++) {
		n += mt_sessions[i].open ? 1 : 0;
	}
	info->ulMaxSessionCount = MT_SESSIONS_MAX;
	info->ulSessionCount = n;
	info->ulMaxRwSessionCount = 0;
	info->ulRwSessionCount = 0;
	info->ulMaxPinLen = sizeof(mt_tok.pin);
	info->ulMinPinLen = 1;
	info->ulTotalPublicMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulFreePublicMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulTotalPrivateMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulFreePrivateMemory = CK_UNAVAILABLE_INFORMATION;
	info->hardwareVersion.major = 1;
	info->firmwareVersion.major = 1;
	return CKR_OK;
}

CK_RV
mt_get_mechanism_list(CK_SLOT_ID slot, CK_MECHANISM_TYPE_PTR list, CK_ULONG_PTR n)
{
	if (slot != MT_SLOT) {
		return CKR_SLOT_ID_INVALID;
	}
	return one_item(CKM_ML_DSA, list, n);
}

CK_RV
mt_get_mechanism_info(CK_SLOT_ID slot, CK_MECHANISM_TYPE type, CK_MECHANISM_INFO_PTR info)
{
	if (slot != MT_SLOT) {
		return CKR_SLOT_ID_INVALID;
	}
	if (info == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	if (type != CKM_ML_DSA) {
		return CKR_MECHANISM_INVALID;
	}
	/* PKCS#11 3.2: for ML-DSA, the public key lengths in bytes (FIPS 204). */
	info->ulMinKeySize = 1312;	/* ML-DSA-44 */
	info->ulMaxKeySize = 2592;	/* ML-DSA-87 */
	info->flags = CKF_SIGN;
	return CKR_OK;
}

CK_RV
mt_open_session(CK_SLOT_ID slot, CK_FLAGS flags, CK_SESSION_HANDLE_PTR h)
{
	if (slot != MT_SLOT) {
		return CKR_SLOT_ID_INVALID;
	}
	if (h == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	if (!(flags & CKF_SERIAL_SESSION)) {
		return CKR_SESSION_PARALLEL_NOT_SUPPORTED;
	}
	if (flags & CKF_RW_SESSION) {
		return CKR_TOKEN_WRITE_PROTECTED;
	}
	for (size_t i = 0; i < MT_SESSIONS_MAX; i++) {
		if (!mt_sessions[i].open) {
			memset(&mt_sessions[i], 0, sizeof(mt_sessions[i]));
			mt_sessions[i].open = true;
			mt_sessions[i].flags = flags;
			*h = i + 1;
			return CKR_OK;
		}
	}
	return CKR_SESSION_COUNT;
}

CK_RV
mt_close_session(CK_SESSION_HANDLE h)
{
	struct mt_session *s = mt_session_of(h);

	if (s == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	session_close(s);
	logout_if_idle();
	return CKR_OK;
}

CK_RV
mt_close_all_sessions(CK_SLOT_ID slot)
{
	if (slot != MT_SLOT) {
		return CKR_SLOT_ID_INVALID;
	}
	close_all();
	return CKR_OK;
}

CK_RV
mt_get_session_info(CK_SESSION_HANDLE h, CK_SESSION_INFO_PTR info)
{
	struct mt_session *s = mt_session_of(h);

	if (s == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (info == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	memset(info, 0, sizeof(*info));
	info->slotID = MT_SLOT;
	info->state = mt_logged_in ? CKS_RO_USER_FUNCTIONS : CKS_RO_PUBLIC_SESSION;
	info->flags = s->flags;
	return CKR_OK;
}

CK_RV
mt_login(CK_SESSION_HANDLE h, CK_USER_TYPE user, CK_UTF8CHAR_PTR pin, CK_ULONG len)
{
	if (mt_session_of(h) == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (user != CKU_USER) {
		return CKR_USER_TYPE_INVALID;
	}
	if (mt_logged_in) {
		return CKR_USER_ALREADY_LOGGED_IN;
	}
	if (pin == NULL && len > 0) {
		return CKR_ARGUMENTS_BAD;
	}
	if (len != mt_tok.pin_len || CRYPTO_memcmp(pin, mt_tok.pin, len) != 0) {
		return CKR_PIN_INCORRECT;
	}
	mt_logged_in = true;
	return CKR_OK;
}

CK_RV
mt_logout(CK_SESSION_HANDLE h)
{
	if (mt_session_of(h) == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (!mt_logged_in) {
		return CKR_USER_NOT_LOGGED_IN;
	}
	mt_logged_in = false;
	return CKR_OK;
}

CK_RV
mt_get_attribute_value(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t,
		       CK_ULONG n)
{
	const struct mt_object *obj;
	CK_RV rv = CKR_OK;

	if (mt_session_of(h) == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	obj = mt_object_of(o);
	if (obj == NULL) {
		return CKR_OBJECT_HANDLE_INVALID;
	}
	if (t == NULL && n > 0) {
		return CKR_ARGUMENTS_BAD;
	}
	/* Every attribute is answered; the last error is returned (PKCS#11 2.40, 5.7). */
	for (CK_ULONG i = 0; i < n; i++) {
		const struct mt_attr *a = mt_attr_find(obj, t[i].type);

		if (obj->cls == CKO_PRIVATE_KEY &&
		    (t[i].type == CKA_VALUE || t[i].type == CKA_SEED)) {
			t[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			rv = CKR_ATTRIBUTE_SENSITIVE;
		} else if (a == NULL) {
			t[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			rv = CKR_ATTRIBUTE_TYPE_INVALID;
		} else if (t[i].pValue == NULL) {
			t[i].ulValueLen = a->len;
		} else if (t[i].ulValueLen < a->len) {
			t[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			rv = CKR_BUFFER_TOO_SMALL;
		} else {
			memcpy(t[i].pValue, a->val, a->len);
			t[i].ulValueLen = a->len;
		}
	}
	return rv;
}

static bool
matches(const struct mt_object *obj, const CK_ATTRIBUTE *t, CK_ULONG n)
{
	for (CK_ULONG i = 0; i < n; i++) {
		const struct mt_attr *a = mt_attr_find(obj, t[i].type);

		if (a == NULL || a->len != t[i].ulValueLen ||
		    (a->len > 0 && (t[i].pValue == NULL || memcmp(a->val, t[i].pValue, a->len) != 0))) {
			return false;
		}
	}
	return true;
}

CK_RV
mt_find_objects_init(CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR t, CK_ULONG n)
{
	struct mt_session *s = mt_session_of(h);

	if (s == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (t == NULL && n > 0) {
		return CKR_ARGUMENTS_BAD;
	}
	if (s->finding) {
		return CKR_OPERATION_ACTIVE;
	}
	s->n_found = 0;
	s->next_found = 0;
	for (size_t i = 0; i < mt_tok.n_objects; i++) {
		if (mt_object_of(i + 1) != NULL && matches(&mt_tok.objects[i], t, n)) {
			s->found[s->n_found++] = i + 1;
		}
	}
	s->finding = true;
	return CKR_OK;
}

CK_RV
mt_find_objects(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE_PTR o, CK_ULONG max, CK_ULONG_PTR n)
{
	struct mt_session *s = mt_session_of(h);

	if (s == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (!s->finding) {
		return CKR_OPERATION_NOT_INITIALIZED;
	}
	if (o == NULL || n == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	*n = 0;
	while (*n < max && s->next_found < s->n_found) {
		o[(*n)++] = s->found[s->next_found++];
	}
	return CKR_OK;
}

CK_RV
mt_find_objects_final(CK_SESSION_HANDLE h)
{
	struct mt_session *s = mt_session_of(h);

	if (s == NULL) {
		return CKR_SESSION_HANDLE_INVALID;
	}
	if (!s->finding) {
		return CKR_OPERATION_NOT_INITIALIZED;
	}
	s->finding = false;
	return CKR_OK;
}
