// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one place that knows which mbedTLS it is built with: 2.28 (Debian 12)
 * or 3.x (Debian 13 has 3.6). Where 3.x made a field private it has a
 * public accessor, used here; 2.28 has only the field.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/random.h>

#include <mbedtls/entropy.h>
#include <mbedtls/pkcs5.h>
#include <mbedtls/version.h>

#include "mbedtls_compat.h"

#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#define MS_MBED3 1
#else
#define MS_MBED3 0
#endif

int
ms_mbed_rng(void *ctx, unsigned char *out, size_t len)
{
	size_t done = 0;
	ssize_t n;

	(void)ctx;
	while (done < len) {
		n = getrandom(out + done, len - done, 0);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
		}
		done += (size_t)n;
	}
	return 0;
}

int
ms_mbed_pk_parse_key(mbedtls_pk_context *pk, const uint8_t *key, size_t len,
		     const uint8_t *pass, size_t pass_len, ms_mbed_rng_fn f_rng, void *p_rng)
{
#if MS_MBED3
	return mbedtls_pk_parse_key(pk, key, len, pass, pass_len, f_rng, p_rng);
#else
	(void)f_rng;
	(void)p_rng;
	return mbedtls_pk_parse_key(pk, key, len, pass, pass_len);
#endif
}

int
ms_mbed_pk_sign(mbedtls_pk_context *pk, mbedtls_md_type_t md, const uint8_t *hash,
		size_t hash_len, uint8_t *sig, size_t cap, size_t *sig_len, ms_mbed_rng_fn f_rng,
		void *p_rng)
{
#if MS_MBED3
	return mbedtls_pk_sign(pk, md, hash, hash_len, sig, cap, sig_len, f_rng, p_rng);
#else
	/* 2.28 writes up to MBEDTLS_PK_SIGNATURE_MAX_SIZE without being told the room. */
	if (cap < MBEDTLS_PK_SIGNATURE_MAX_SIZE) {
		return MBEDTLS_ERR_PK_BAD_INPUT_DATA;
	}
	return mbedtls_pk_sign(pk, md, hash, hash_len, sig, sig_len, f_rng, p_rng);
#endif
}

int
ms_mbed_rsa_pkcs1_v15_sign(mbedtls_rsa_context *rsa, ms_mbed_rng_fn f_rng, void *p_rng,
			   const uint8_t *tbs, size_t tbs_len, uint8_t *sig)
{
	if (tbs_len > UINT32_MAX) {
		return MBEDTLS_ERR_RSA_BAD_INPUT_DATA;
	}
#if MS_MBED3
	return mbedtls_rsa_rsassa_pkcs1_v15_sign(rsa, f_rng, p_rng, MBEDTLS_MD_NONE,
						 (unsigned int)tbs_len, tbs, sig);
#else
	return mbedtls_rsa_rsassa_pkcs1_v15_sign(rsa, f_rng, p_rng, MBEDTLS_RSA_PRIVATE,
						 MBEDTLS_MD_NONE, (unsigned int)tbs_len, tbs, sig);
#endif
}

mbedtls_ecp_group_id
ms_mbed_ec_group_id(const mbedtls_ecp_keypair *kp)
{
#if MS_MBED3
	return mbedtls_ecp_keypair_get_group_id(kp);
#else
	return kp->grp.id;
#endif
}

int
ms_mbed_ec_export(const mbedtls_ecp_keypair *kp, mbedtls_ecp_group *grp, mbedtls_mpi *d,
		  mbedtls_ecp_point *q)
{
#if MS_MBED3
	return mbedtls_ecp_export(kp, grp, d, q);
#else
	int ret = 0;

	if (grp != NULL) {
		ret = mbedtls_ecp_group_copy(grp, &kp->grp);
	}
	if (ret == 0 && d != NULL) {
		ret = mbedtls_mpi_copy(d, &kp->d);
	}
	if (ret == 0 && q != NULL) {
		ret = mbedtls_ecp_copy(q, &kp->Q);
	}
	return ret;
#endif
}

int
ms_mbed_ec_write_point(const mbedtls_ecp_keypair *kp, uint8_t *out, size_t cap,
		       size_t *out_len)
{
#if MS_MBED3
	return mbedtls_ecp_write_public_key(kp, MBEDTLS_ECP_PF_UNCOMPRESSED, out_len, out, cap);
#else
	return mbedtls_ecp_point_write_binary(&kp->grp, &kp->Q, MBEDTLS_ECP_PF_UNCOMPRESSED,
					      out_len, out, cap);
#endif
}

struct ms_span
ms_mbed_pem_buffer(mbedtls_pem_context *pem)
{
	struct ms_span s = { NULL, 0 };

#if MS_MBED3
	s.p = mbedtls_pem_get_buffer(pem, &s.len);
#else
	s.p = pem->buf;
	s.len = pem->buflen;
#endif
	return s;
}

int
ms_mbed_pbkdf2_hmac(mbedtls_md_type_t md, const uint8_t *pass, size_t pass_len,
		    const uint8_t *salt, size_t salt_len, unsigned int iterations, uint8_t *key,
		    size_t key_len)
{
	if (key_len > UINT32_MAX) {
		return MBEDTLS_ERR_MD_BAD_INPUT_DATA;
	}
#if MS_MBED3
	/* mbedtls_pkcs5_pbkdf2_hmac() is deprecated in 3.x (so an error under -Werror). */
	return mbedtls_pkcs5_pbkdf2_hmac_ext(md, pass, pass_len, salt, salt_len, iterations,
					     (uint32_t)key_len, key);
#else
	const mbedtls_md_info_t *info = mbedtls_md_info_from_type(md);
	mbedtls_md_context_t hmac;
	int ret;

	if (info == NULL) {
		return MBEDTLS_ERR_MD_BAD_INPUT_DATA;
	}
	mbedtls_md_init(&hmac);
	ret = mbedtls_md_setup(&hmac, info, 1);
	if (ret == 0) {
		ret = mbedtls_pkcs5_pbkdf2_hmac(&hmac, pass, pass_len, salt, salt_len, iterations,
						(uint32_t)key_len, key);
	}
	mbedtls_md_free(&hmac);	/* zeroises the HMAC state */
	return ret;
#endif
}
