/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The mbedTLS calls whose API differs between 2.28 (Debian 12) and 3.6
 * (Debian 13): fields 3.x made private, signatures it changed, a function it
 * deprecated. Every version difference is in mbedtls_compat.c; the rest of
 * the code calls these and is the same for both. Used by src/cms, and by
 * src/signer, the other directory mbedTLS may appear in (HACKING.md,
 * Layers), and by their tests, fuzz targets and benchmarks.
 *
 * Each function returns what the mbedTLS call it stands for returns: 0 or
 * an MBEDTLS_ERR_* value, which the callers map to an ms_err as before.
 */
#ifndef MS_MBEDTLS_COMPAT_H
#define MS_MBEDTLS_COMPAT_H

#include <stddef.h>
#include <stdint.h>

#include <mbedtls/ecp.h>
#include <mbedtls/md.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>

#include "../common/ms_common.h"

/* The random function mbedTLS takes: f_rng(p_rng, out, len). */
typedef int (*ms_mbed_rng_fn)(void *, unsigned char *, size_t);

/**
 * ms_mbed_rng() - an mbedTLS random function over getrandom(2), for calls
 * that want one outside a signer's seeded CTR_DRBG (key parsing). @ctx is
 * ignored (NULL).
 * Return: 0; MBEDTLS_ERR_ENTROPY_SOURCE_FAILED if the kernel gave no bytes.
 */
int ms_mbed_rng(void *ctx, unsigned char *out, size_t len) MS_MUST_CHECK;

/**
 * ms_mbed_pk_parse_key() - mbedtls_pk_parse_key() of @key (a PEM text with
 * its NUL counted in @len, or DER) into the initialised @pk, decrypting with
 * @pass when it is an encryption mbedTLS reads. 3.x uses @f_rng (blinding
 * while it derives a missing EC public key); 2.28 ignores it.
 * Return: mbedtls_pk_parse_key()'s result.
 */
int ms_mbed_pk_parse_key(mbedtls_pk_context *pk, const uint8_t *key, size_t len,
			 const uint8_t *pass, size_t pass_len, ms_mbed_rng_fn f_rng,
			 void *p_rng) MS_MUST_CHECK;

/**
 * ms_mbed_pk_sign() - mbedtls_pk_sign() into @sig of @cap bytes (3.x checks
 * @cap; for 2.28 @cap must be at least MBEDTLS_PK_SIGNATURE_MAX_SIZE).
 * Return: mbedtls_pk_sign()'s result; MBEDTLS_ERR_PK_BAD_INPUT_DATA for a
 * @cap below MBEDTLS_PK_SIGNATURE_MAX_SIZE on 2.28.
 */
int ms_mbed_pk_sign(mbedtls_pk_context *pk, mbedtls_md_type_t md, const uint8_t *hash,
		    size_t hash_len, uint8_t *sig, size_t cap, size_t *sig_len,
		    ms_mbed_rng_fn f_rng, void *p_rng) MS_MUST_CHECK;

/**
 * ms_mbed_rsa_pkcs1_v15_sign() - the RSASSA-PKCS1-v1_5 signature of the
 * @tbs_len bytes @tbs as given (a DigestInfo: MBEDTLS_MD_NONE) with the
 * private key in @rsa, into @sig of mbedtls_rsa_get_len(@rsa) bytes.
 * Return: mbedtls_rsa_rsassa_pkcs1_v15_sign()'s result.
 */
int ms_mbed_rsa_pkcs1_v15_sign(mbedtls_rsa_context *rsa, ms_mbed_rng_fn f_rng, void *p_rng,
			       const uint8_t *tbs, size_t tbs_len, uint8_t *sig) MS_MUST_CHECK;

/* The curve of the EC key @kp (MBEDTLS_ECP_DP_NONE if none is set). */
mbedtls_ecp_group_id ms_mbed_ec_group_id(const mbedtls_ecp_keypair *kp);

/**
 * ms_mbed_ec_export() - copies of the group, the private value and the
 * public point of @kp, each into an initialised object or skipped if NULL.
 * The caller frees them (mbedtls_mpi_free() wipes @d).
 * Return: 0, MBEDTLS_ERR_MPI_ALLOC_FAILED, MBEDTLS_ERR_ECP_* from loading
 * the group.
 */
int ms_mbed_ec_export(const mbedtls_ecp_keypair *kp, mbedtls_ecp_group *grp, mbedtls_mpi *d,
		      mbedtls_ecp_point *q) MS_MUST_CHECK;

/**
 * ms_mbed_ec_write_point() - the public point of @kp, uncompressed
 * (04 || X || Y, SEC 1, 2.3.3), into @out of @cap bytes.
 * Return: 0, MBEDTLS_ERR_ECP_BUFFER_TOO_SMALL, MBEDTLS_ERR_ECP_BAD_INPUT_DATA.
 */
int ms_mbed_ec_write_point(const mbedtls_ecp_keypair *kp, uint8_t *out, size_t cap,
			   size_t *out_len) MS_MUST_CHECK;

/*
 * The bytes decoded by the last successful mbedtls_pem_read_buffer() on
 * @pem, valid until it is freed or read again.
 */
struct ms_span ms_mbed_pem_buffer(mbedtls_pem_context *pem);

/**
 * ms_mbed_pbkdf2_hmac() - PBKDF2 with HMAC-@md (RFC 8018, 5.2): @key_len
 * bytes derived from @pass and @salt with @iterations.
 * Return: 0, MBEDTLS_ERR_MD_ALLOC_FAILED, MBEDTLS_ERR_MD_BAD_INPUT_DATA
 * (unknown @md), another mbedTLS error.
 */
int ms_mbed_pbkdf2_hmac(mbedtls_md_type_t md, const uint8_t *pass, size_t pass_len,
			const uint8_t *salt, size_t salt_len, unsigned int iterations,
			uint8_t *key, size_t key_len) MS_MUST_CHECK;

#endif
