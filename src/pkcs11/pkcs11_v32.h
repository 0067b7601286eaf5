// SPDX-License-Identifier: GPL-2.0-only
/*
 * The PKCS#11 3.2 names ML-DSA signing needs, for a pkcs11.h older than 3.2
 * (p11-kit 0.24, Debian 12, follows 2.40). Values from OASIS's pkcs11t.h
 * (github.com/oasis-tcs/pkcs11, working/headers/pkcs11t.h, the 3.2
 * headers); each is defined only when pkcs11.h has not, so that a newer
 * p11-kit header wins without a clash. Include after <p11-kit/pkcs11.h>.
 */
#ifndef PKCS11_V32_H
#define PKCS11_V32_H

#ifndef CKK_ML_DSA
#define CKK_ML_DSA 0x4aUL
#endif

#ifndef CKA_PARAMETER_SET
#define CKA_PARAMETER_SET 0x61dUL
#endif

/* A post-quantum private key's seed (sensitive, as CKA_VALUE is). */
#ifndef CKA_SEED
#define CKA_SEED 0x637UL
#endif

#ifndef CKM_ML_DSA_KEY_PAIR_GEN
#define CKM_ML_DSA_KEY_PAIR_GEN 0x1cUL
#endif
#ifndef CKM_ML_DSA
#define CKM_ML_DSA 0x1dUL
#endif

/* CKA_PARAMETER_SET of a CKK_ML_DSA key: the FIPS 204 parameter set. */
#ifndef CKP_ML_DSA_44
#define CKP_ML_DSA_44 0x1UL
#define CKP_ML_DSA_65 0x2UL
#define CKP_ML_DSA_87 0x3UL
#endif

#ifndef CKR_PARAMETER_SET_NOT_SUPPORTED
#define CKR_PARAMETER_SET_NOT_SUPPORTED 0x209UL
#endif

/*
 * CKM_ML_DSA's optional parameter: hedged (randomised, the default) or
 * deterministic signing, and the FIPS 204 context string (at most 255
 * bytes; the kernel's module signatures use none).
 */
#ifndef CKH_HEDGE_PREFERRED
typedef CK_ULONG CK_HEDGE_TYPE;
#define CKH_HEDGE_PREFERRED 0x0UL
#define CKH_HEDGE_REQUIRED 0x1UL
#define CKH_DETERMINISTIC_REQUIRED 0x2UL

typedef struct CK_SIGN_ADDITIONAL_CONTEXT {
	CK_HEDGE_TYPE hedgeVariant;
	CK_BYTE_PTR pContext;
	CK_ULONG ulContextLen;
} CK_SIGN_ADDITIONAL_CONTEXT;
#endif

#endif
