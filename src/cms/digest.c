// SPDX-License-Identifier: GPL-2.0-only
/*
 * Streaming module digests through nettle (Debian's libnettle8): every hash
 * of hash.c, SHA-3 included. nettle's fat build picks the CPU's SHA
 * extensions for SHA-1 and SHA-256/224 at run time. The only file of src
 * that includes nettle's hash headers, but for keccak.c, which takes
 * nettle's Keccak permutation for ML-DSA's SHAKE.
 */
#include <stdlib.h>

#include <nettle/nettle-meta.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <nettle/sha3.h>

#include "cms_internal.h"

/* One context of any of our hashes: one allocation, aligned for each. */
union hash_ctx {
	struct sha1_ctx sha1;
	struct sha256_ctx sha256;	/* also SHA-224 */
	struct sha512_ctx sha512;	/* also SHA-384 */
	struct sha3_256_ctx sha3_256;
	struct sha3_384_ctx sha3_384;
	struct sha3_512_ctx sha3_512;
};

struct ms_cms_digest {
	enum ms_hash_alg alg;
	const struct nettle_hash *h;
	union hash_ctx ctx;
};

/* nettle's description of @alg; NULL outside the enum. */
static const struct nettle_hash *
nettle_of(enum ms_hash_alg alg)
{
	switch (alg) {
	case MS_HASH_SHA1:
		return &nettle_sha1;
	case MS_HASH_SHA224:
		return &nettle_sha224;
	case MS_HASH_SHA256:
		return &nettle_sha256;
	case MS_HASH_SHA384:
		return &nettle_sha384;
	case MS_HASH_SHA512:
		return &nettle_sha512;
	case MS_HASH_SHA3_256:
		return &nettle_sha3_256;
	case MS_HASH_SHA3_384:
		return &nettle_sha3_384;
	case MS_HASH_SHA3_512:
		return &nettle_sha3_512;
	}
	return NULL;
}

ms_err
ms_cms_digest_new(enum ms_hash_alg alg, struct ms_cms_digest **out)
{
	const struct nettle_hash *h = nettle_of(alg);
	struct ms_cms_digest *d = NULL;

	if (out == NULL) {
		return MS_E_ARG;
	}
	*out = NULL;
	if (h == NULL || ms_hash_info(alg) == NULL) {
		return MS_E_ARG;
	}
	/* Our table and nettle must agree, and the union must hold nettle's context. */
	if (h->digest_size != ms_cms_hash_size(alg) || h->context_size > sizeof(d->ctx)) {
		return MS_E_INTERNAL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		return MS_E_NOMEM;
	}
	d->alg = alg;
	d->h = h;
	h->init(&d->ctx);
	*out = d;
	return MS_OK;
}

ms_err
ms_cms_digest_update(struct ms_cms_digest *d, const uint8_t *p, size_t len)
{
	if (d == NULL || (p == NULL && len != 0)) {
		return MS_E_ARG;
	}
	if (len != 0) {
		d->h->update(&d->ctx, len, p);
	}
	return MS_OK;
}

ms_err
ms_cms_digest_final(struct ms_cms_digest *d, uint8_t *out, size_t cap, size_t *out_len)
{
	size_t size;

	if (d == NULL || out_len == NULL) {
		return MS_E_ARG;
	}
	size = d->h->digest_size;
	if (out == NULL) {
		*out_len = size;	/* size query; the digest goes on */
		return MS_OK;
	}
	if (cap < size) {
		return MS_E_NOSPACE;
	}
	/* nettle's digest functions also reset the context: ready for the next module. */
	d->h->digest(&d->ctx, size, out);
	*out_len = size;
	return MS_OK;
}

void
ms_cms_digest_free(struct ms_cms_digest *d)
{
	free(d);
}
