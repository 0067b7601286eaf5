// SPDX-License-Identifier: GPL-2.0-only
/*
 * mldsatoken: a TEST DOUBLE of an HSM that signs with ML-DSA through PKCS#11
 * 3.2's CKM_ML_DSA, for tests only. No Debian PKCS#11 module implements
 * CKM_ML_DSA (SoftHSM2 2.6.1 does not), so this one holds ML-DSA-44/65/87
 * keys read from PEM files and signs with OpenSSL 3.5 or later
 * (scripts/openssl-pq.sh), linked in statically so that a process that
 * already has the system's OpenSSL 3.0 loaded (pkcs11-tool) is unaffected.
 * Keys are never written: C_GenerateKeyPair, C_CreateObject and the like
 * are not supported. README.md says how to set a token up.
 *
 * The function list is PKCS#11 2.40's (what p11-kit 0.24 loads); the
 * mechanism, key type and attributes are 3.2's (pkcs11_v32.h). One lock
 * serialises every call, as a card reader does.
 */
#include <pthread.h>

#include "mldsatoken.h"

static pthread_mutex_t mt_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The entry points: each takes the lock, checks that C_Initialize ran, and
 * calls its mt_ function. Those not listed answer CKR_FUNCTION_NOT_SUPPORTED.
 */
#define MT_LOCKED(call)                                                                 \
	do {                                                                            \
		CK_RV rv_;                                                              \
		pthread_mutex_lock(&mt_lock);                                           \
		rv_ = mt_initialized ? (call) : CKR_CRYPTOKI_NOT_INITIALIZED;            \
		pthread_mutex_unlock(&mt_lock);                                         \
		return rv_;                                                             \
	} while (0)

static CK_RV
e_initialize(CK_VOID_PTR a)
{
	CK_RV rv;

	pthread_mutex_lock(&mt_lock);
	rv = mt_initialize(a);
	pthread_mutex_unlock(&mt_lock);
	return rv;
}

static CK_RV
e_finalize(CK_VOID_PTR r)
{
	MT_LOCKED(mt_finalize(r));
}

static CK_RV
e_get_info(CK_INFO_PTR i)
{
	MT_LOCKED(mt_get_info(i));
}

static CK_RV
e_get_slot_list(CK_BBOOL p, CK_SLOT_ID_PTR l, CK_ULONG_PTR n)
{
	MT_LOCKED(mt_get_slot_list(p, l, n));
}

static CK_RV
e_get_slot_info(CK_SLOT_ID s, CK_SLOT_INFO_PTR i)
{
	MT_LOCKED(mt_get_slot_info(s, i));
}

static CK_RV
e_get_token_info(CK_SLOT_ID s, CK_TOKEN_INFO_PTR i)
{
	MT_LOCKED(mt_get_token_info(s, i));
}

static CK_RV
e_get_mechanism_list(CK_SLOT_ID s, CK_MECHANISM_TYPE_PTR m, CK_ULONG_PTR n)
{
	MT_LOCKED(mt_get_mechanism_list(s, m, n));
}

static CK_RV
e_get_mechanism_info(CK_SLOT_ID s, CK_MECHANISM_TYPE t, CK_MECHANISM_INFO_PTR i)
{
	MT_LOCKED(mt_get_mechanism_info(s, t, i));
}

static CK_RV
e_open_session(CK_SLOT_ID s, CK_FLAGS f, CK_VOID_PTR a, CK_NOTIFY cb, CK_SESSION_HANDLE_PTR h)
{
	(void)a;
	(void)cb;
	MT_LOCKED(mt_open_session(s, f, h));
}

static CK_RV
e_close_session(CK_SESSION_HANDLE h)
{
	MT_LOCKED(mt_close_session(h));
}

static CK_RV
e_close_all_sessions(CK_SLOT_ID s)
{
	MT_LOCKED(mt_close_all_sessions(s));
}

static CK_RV
e_get_session_info(CK_SESSION_HANDLE h, CK_SESSION_INFO_PTR i)
{
	MT_LOCKED(mt_get_session_info(h, i));
}

static CK_RV
e_login(CK_SESSION_HANDLE h, CK_USER_TYPE u, CK_UTF8CHAR_PTR p, CK_ULONG n)
{
	MT_LOCKED(mt_login(h, u, p, n));
}

static CK_RV
e_logout(CK_SESSION_HANDLE h)
{
	MT_LOCKED(mt_logout(h));
}

static CK_RV
e_get_attribute_value(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, CK_ULONG n)
{
	MT_LOCKED(mt_get_attribute_value(h, o, t, n));
}

static CK_RV
e_find_objects_init(CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR t, CK_ULONG n)
{
	MT_LOCKED(mt_find_objects_init(h, t, n));
}

static CK_RV
e_find_objects(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE_PTR o, CK_ULONG m, CK_ULONG_PTR n)
{
	MT_LOCKED(mt_find_objects(h, o, m, n));
}

static CK_RV
e_find_objects_final(CK_SESSION_HANDLE h)
{
	MT_LOCKED(mt_find_objects_final(h));
}

static CK_RV
e_sign_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)
{
	MT_LOCKED(mt_sign_init(h, m, k));
}

static CK_RV
e_sign(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, CK_ULONG_PTR on)
{
	MT_LOCKED(mt_sign(h, d, dn, o, on));
}

static CK_RV
e_sign_update(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn)
{
	MT_LOCKED(mt_sign_update(h, d, dn));
}

static CK_RV
e_sign_final(CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on)
{
	MT_LOCKED(mt_sign_final(h, o, on));
}

/*
 * Every other function of the 2.40 list: a token that cannot do it. Columns:
 * name, parameters.
 */
#define MT_UNSUPPORTED(X) \
	X(C_InitToken, (CK_SLOT_ID s, CK_UTF8CHAR_PTR p, CK_ULONG n, CK_UTF8CHAR_PTR l)) \
	X(C_InitPIN, (CK_SESSION_HANDLE h, CK_UTF8CHAR_PTR p, CK_ULONG n)) \
	X(C_SetPIN, (CK_SESSION_HANDLE h, CK_UTF8CHAR_PTR o, CK_ULONG on, CK_UTF8CHAR_PTR p, \
		     CK_ULONG n)) \
	X(C_GetOperationState, (CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG_PTR n)) \
	X(C_SetOperationState, (CK_SESSION_HANDLE h, CK_BYTE_PTR p, CK_ULONG n, \
				CK_OBJECT_HANDLE e, CK_OBJECT_HANDLE a)) \
	X(C_CreateObject, (CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR t, CK_ULONG n, \
			   CK_OBJECT_HANDLE_PTR o)) \
	X(C_CopyObject, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, \
			 CK_ULONG n, CK_OBJECT_HANDLE_PTR c)) \
	X(C_DestroyObject, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o)) \
	X(C_GetObjectSize, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ULONG_PTR n)) \
	X(C_SetAttributeValue, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, \
				CK_ULONG n)) \
	X(C_EncryptInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)) \
	X(C_Encrypt, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
		      CK_ULONG_PTR on)) \
	X(C_EncryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
			    CK_ULONG_PTR on)) \
	X(C_EncryptFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on)) \
	X(C_DecryptInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)) \
	X(C_Decrypt, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
		      CK_ULONG_PTR on)) \
	X(C_DecryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
			    CK_ULONG_PTR on)) \
	X(C_DecryptFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on)) \
	X(C_DigestInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m)) \
	X(C_Digest, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
		     CK_ULONG_PTR on)) \
	X(C_DigestUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn)) \
	X(C_DigestKey, (CK_SESSION_HANDLE h, CK_OBJECT_HANDLE k)) \
	X(C_DigestFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG_PTR on)) \
	X(C_SignRecoverInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)) \
	X(C_SignRecover, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
			  CK_ULONG_PTR on)) \
	X(C_VerifyInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)) \
	X(C_Verify, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR s, \
		     CK_ULONG sn)) \
	X(C_VerifyUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn)) \
	X(C_VerifyFinal, (CK_SESSION_HANDLE h, CK_BYTE_PTR s, CK_ULONG sn)) \
	X(C_VerifyRecoverInit, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)) \
	X(C_VerifyRecover, (CK_SESSION_HANDLE h, CK_BYTE_PTR s, CK_ULONG sn, CK_BYTE_PTR o, \
			    CK_ULONG_PTR on)) \
	X(C_DigestEncryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, \
				  CK_BYTE_PTR o, CK_ULONG_PTR on)) \
	X(C_DecryptDigestUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, \
				  CK_BYTE_PTR o, CK_ULONG_PTR on)) \
	X(C_SignEncryptUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, \
				CK_ULONG_PTR on)) \
	X(C_DecryptVerifyUpdate, (CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, \
				  CK_BYTE_PTR o, CK_ULONG_PTR on)) \
	X(C_GenerateKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_ATTRIBUTE_PTR t, \
			  CK_ULONG n, CK_OBJECT_HANDLE_PTR k)) \
	X(C_GenerateKeyPair, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_ATTRIBUTE_PTR pt, \
			      CK_ULONG pn, CK_ATTRIBUTE_PTR st, CK_ULONG sn, \
			      CK_OBJECT_HANDLE_PTR pk, CK_OBJECT_HANDLE_PTR sk)) \
	X(C_WrapKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE w, \
		      CK_OBJECT_HANDLE k, CK_BYTE_PTR o, CK_ULONG_PTR on)) \
	X(C_UnwrapKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE u, \
			CK_BYTE_PTR w, CK_ULONG wn, CK_ATTRIBUTE_PTR t, CK_ULONG n, \
			CK_OBJECT_HANDLE_PTR k)) \
	X(C_DeriveKey, (CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE b, \
			CK_ATTRIBUTE_PTR t, CK_ULONG n, CK_OBJECT_HANDLE_PTR k)) \
	X(C_SeedRandom, (CK_SESSION_HANDLE h, CK_BYTE_PTR s, CK_ULONG n)) \
	X(C_GenerateRandom, (CK_SESSION_HANDLE h, CK_BYTE_PTR o, CK_ULONG n)) \
	X(C_GetFunctionStatus, (CK_SESSION_HANDLE h)) \
	X(C_CancelFunction, (CK_SESSION_HANDLE h)) \
	X(C_WaitForSlotEvent, (CK_FLAGS f, CK_SLOT_ID_PTR s, CK_VOID_PTR r))

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define MT_STUB(name, params) \
	static CK_RV ns_##name params \
	{ \
		return CKR_FUNCTION_NOT_SUPPORTED; \
	}
MT_UNSUPPORTED(MT_STUB)
#pragma GCC diagnostic pop

static CK_RV e_get_function_list(CK_FUNCTION_LIST_PTR_PTR l);

#define MT_NS(f) ns_##f
static CK_FUNCTION_LIST mt_list = {
	.version = {2, 40},
	.C_Initialize = e_initialize,
	.C_Finalize = e_finalize,
	.C_GetInfo = e_get_info,
	.C_GetFunctionList = e_get_function_list,
	.C_GetSlotList = e_get_slot_list,
	.C_GetSlotInfo = e_get_slot_info,
	.C_GetTokenInfo = e_get_token_info,
	.C_GetMechanismList = e_get_mechanism_list,
	.C_GetMechanismInfo = e_get_mechanism_info,
	.C_InitToken = MT_NS(C_InitToken),
	.C_InitPIN = MT_NS(C_InitPIN),
	.C_SetPIN = MT_NS(C_SetPIN),
	.C_OpenSession = e_open_session,
	.C_CloseSession = e_close_session,
	.C_CloseAllSessions = e_close_all_sessions,
	.C_GetSessionInfo = e_get_session_info,
	.C_GetOperationState = MT_NS(C_GetOperationState),
	.C_SetOperationState = MT_NS(C_SetOperationState),
	.C_Login = e_login,
	.C_Logout = e_logout,
	.C_CreateObject = MT_NS(C_CreateObject),
	.C_CopyObject = MT_NS(C_CopyObject),
	.C_DestroyObject = MT_NS(C_DestroyObject),
	.C_GetObjectSize = MT_NS(C_GetObjectSize),
	.C_GetAttributeValue = e_get_attribute_value,
	.C_SetAttributeValue = MT_NS(C_SetAttributeValue),
	.C_FindObjectsInit = e_find_objects_init,
	.C_FindObjects = e_find_objects,
	.C_FindObjectsFinal = e_find_objects_final,
	.C_EncryptInit = MT_NS(C_EncryptInit),
	.C_Encrypt = MT_NS(C_Encrypt),
	.C_EncryptUpdate = MT_NS(C_EncryptUpdate),
	.C_EncryptFinal = MT_NS(C_EncryptFinal),
	.C_DecryptInit = MT_NS(C_DecryptInit),
	.C_Decrypt = MT_NS(C_Decrypt),
	.C_DecryptUpdate = MT_NS(C_DecryptUpdate),
	.C_DecryptFinal = MT_NS(C_DecryptFinal),
	.C_DigestInit = MT_NS(C_DigestInit),
	.C_Digest = MT_NS(C_Digest),
	.C_DigestUpdate = MT_NS(C_DigestUpdate),
	.C_DigestKey = MT_NS(C_DigestKey),
	.C_DigestFinal = MT_NS(C_DigestFinal),
	.C_SignInit = e_sign_init,
	.C_Sign = e_sign,
	.C_SignUpdate = e_sign_update,
	.C_SignFinal = e_sign_final,
	.C_SignRecoverInit = MT_NS(C_SignRecoverInit),
	.C_SignRecover = MT_NS(C_SignRecover),
	.C_VerifyInit = MT_NS(C_VerifyInit),
	.C_Verify = MT_NS(C_Verify),
	.C_VerifyUpdate = MT_NS(C_VerifyUpdate),
	.C_VerifyFinal = MT_NS(C_VerifyFinal),
	.C_VerifyRecoverInit = MT_NS(C_VerifyRecoverInit),
	.C_VerifyRecover = MT_NS(C_VerifyRecover),
	.C_DigestEncryptUpdate = MT_NS(C_DigestEncryptUpdate),
	.C_DecryptDigestUpdate = MT_NS(C_DecryptDigestUpdate),
	.C_SignEncryptUpdate = MT_NS(C_SignEncryptUpdate),
	.C_DecryptVerifyUpdate = MT_NS(C_DecryptVerifyUpdate),
	.C_GenerateKey = MT_NS(C_GenerateKey),
	.C_GenerateKeyPair = MT_NS(C_GenerateKeyPair),
	.C_WrapKey = MT_NS(C_WrapKey),
	.C_UnwrapKey = MT_NS(C_UnwrapKey),
	.C_DeriveKey = MT_NS(C_DeriveKey),
	.C_SeedRandom = MT_NS(C_SeedRandom),
	.C_GenerateRandom = MT_NS(C_GenerateRandom),
	.C_GetFunctionStatus = MT_NS(C_GetFunctionStatus),
	.C_CancelFunction = MT_NS(C_CancelFunction),
	.C_WaitForSlotEvent = MT_NS(C_WaitForSlotEvent),
};

static CK_RV
e_get_function_list(CK_FUNCTION_LIST_PTR_PTR l)
{
	if (l == NULL) {
		return CKR_ARGUMENTS_BAD;
	}
	*l = &mt_list;
	return CKR_OK;
}

__attribute__((visibility("default"))) CK_RV
C_GetFunctionList(CK_FUNCTION_LIST_PTR_PTR l)
{
	return e_get_function_list(l);
}
