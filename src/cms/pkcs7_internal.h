/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by pkcs7_parse.c and pkcs7_signer.c (and their unit tests): the
 * small readers both use. Not part of the API.
 */
#ifndef MS_PKCS7_INTERNAL_H
#define MS_PKCS7_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cms_internal.h"
#include "pkcs7.h"

#define DER_CTX2_CONS	0xa2	/* [2], constructed: the kernel's alternatives */

/* Set *@why to @reason unless a reason is there already; returns @err. */
ms_err ms_pkcs7_fail(const char **why, ms_err err, const char *reason);

/* Tag of the next element of @in, 0 at its end (0 is no tag we accept). */
uint8_t ms_pkcs7_peek(const struct ms_span *in);

/* ms_der_expect() that also gives the whole TLV in @tlv. */
ms_err ms_pkcs7_take_tlv(struct ms_span *in, uint8_t tag, struct ms_span *tlv,
			 struct ms_span *body) MS_MUST_CHECK;

/* Whether OID content @oid is the OID of the short-form OID TLV @tlv. */
bool ms_pkcs7_oid_is(struct ms_span oid, const uint8_t *tlv, size_t tlv_len);

/* Whether OID content @oid is the algorithm of the AlgorithmIdentifier TLV @alg_id. */
bool ms_pkcs7_oid_is_alg(struct ms_span oid, const uint8_t *alg_id, size_t alg_id_len);

/* The hash a digest algorithm OID names; false for one the kernel does not verify. */
bool ms_pkcs7_hash_from_oid(struct ms_span oid, enum ms_hash_alg *out);

/* AlgorithmIdentifier: its OID content in @oid; parameters, if any, one element. */
ms_err ms_pkcs7_alg_id_get(struct ms_span *in, struct ms_span *oid) MS_MUST_CHECK;

/* CMSVersion as the kernel reads it: MS_E_UNSUPPORTED unless one byte, 1 or 3. */
ms_err ms_pkcs7_version_get(struct ms_span *in, unsigned int *version) MS_MUST_CHECK;

/*
 * ms_pkcs7_signer_parse() - one SignerInfo (content of its SEQUENCE) in a
 * SignedData of @sd_version, with the kernel's version rules.
 * Return: MS_OK; MS_E_MALFORMED or MS_E_UNSUPPORTED with *@why set.
 */
ms_err ms_pkcs7_signer_parse(struct ms_span si, unsigned int sd_version,
			     struct ms_pkcs7_signer *s, const char **why) MS_MUST_CHECK;

#endif
