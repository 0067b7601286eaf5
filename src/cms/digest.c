// SPDX-License-Identifier: GPL-2.0-only
/*
 * Streaming module digests through mbedTLS's generic message-digest layer
 * (the mbedTLS type of each hash comes from hash.c), or SHA-NI for SHA-256
 * and SHA-224 where the CPU has it (sha256_ni.c).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include <mbedtls/md.h>

#include "cms_internal.h"

struct ms_cms_digest {
	enum ms_hash_alg alg;
	mbedtls_md_context_t md;
#if MS_HAVE_SHA_NI
	bool use_ni;
	struct ms_sha256_ni ni;
#endif
};

#if MS_HAVE_SHA_NI
/* CPUID is slow in a VM: ask once. 0 unknown, 1 no, 2 yes. */
static atomic_int ni_state;

static bool
ni_usable(enum ms_hash_alg alg)
{
	int st = atomic_load(&ni_state);

	if (alg != MS_HASH_SHA256 && alg != MS_HASH_SHA224) {
		return false;
	}
	if (st == 0) {
		st = ms_sha256_ni_available() ? 2 : 1;
		atomic_store(&ni_state, st);
	}
	return st == 2;
}
#endif

ms_err
ms_cms_digest_new(enum ms_hash_alg alg, struct ms_cms_digest **out)
{
	ms_err err = MS_E_INTERNAL;
	struct ms_cms_digest *d = NULL;
	const mbedtls_md_info_t *info = NULL;

	if (out == NULL) {
		return MS_E_ARG;
	}
	*out = NULL;
	if (ms_hash_info(alg) == NULL) {
		return MS_E_ARG;
	}
	if (!ms_digest_available(alg)) {
		return MS_E_UNSUPPORTED;
	}
	info = mbedtls_md_info_from_type((mbedtls_md_type_t)ms_cms_hash_mbedtls_md(alg));
	if (info == NULL || mbedtls_md_get_size(info) != ms_cms_hash_size(alg)) {
		return MS_E_INTERNAL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		return MS_E_NOMEM;
	}
	d->alg = alg;
	mbedtls_md_init(&d->md);
#if MS_HAVE_SHA_NI
	if (ni_usable(alg)) {
		d->use_ni = true;
		ms_sha256_ni_start(&d->ni, alg == MS_HASH_SHA224);
		*out = d;
		return MS_OK;
	}
#endif
	if (mbedtls_md_setup(&d->md, info, 0) != 0) {
		err = MS_E_NOMEM;	/* the only failure left once info is valid */
		goto out;
	}
	if (mbedtls_md_starts(&d->md) != 0) {
		err = MS_E_INTERNAL;
		goto out;
	}
	*out = d;
	d = NULL;
	err = MS_OK;
out:
	ms_cms_digest_free(d);
	return err;
}

ms_err
ms_cms_digest_update(struct ms_cms_digest *d, const uint8_t *p, size_t len)
{
	if (d == NULL || (p == NULL && len != 0)) {
		return MS_E_ARG;
	}
	if (len == 0) {
		return MS_OK;
	}
#if MS_HAVE_SHA_NI
	if (d->use_ni) {
		ms_sha256_ni_update(&d->ni, p, len);
		return MS_OK;
	}
#endif
	if (mbedtls_md_update(&d->md, p, len) != 0) {
		return MS_E_INTERNAL;
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
	size = ms_cms_hash_size(d->alg);
	if (out == NULL) {
		*out_len = size;	/* size query; the digest goes on */
		return MS_OK;
	}
	if (cap < size) {
		return MS_E_NOSPACE;
	}
#if MS_HAVE_SHA_NI
	if (d->use_ni) {
		*out_len = ms_sha256_ni_finish(&d->ni, out);
		return MS_OK;
	}
#endif
	if (mbedtls_md_finish(&d->md, out) != 0) {
		return MS_E_INTERNAL;
	}
	/* Ready for the next module (mbedtls_md_starts resets the state). */
	if (mbedtls_md_starts(&d->md) != 0) {
		return MS_E_INTERNAL;
	}
	*out_len = size;
	return MS_OK;
}

void
ms_cms_digest_free(struct ms_cms_digest *d)
{
	if (d == NULL) {
		return;
	}
	mbedtls_md_free(&d->md);
	free(d);
}
