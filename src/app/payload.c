// SPDX-License-Identifier: GPL-2.0-only
/*
 * What signing, re-signing and `verify` share about a module file: the
 * digests of its payload, hashed in one streaming pass through the module
 * reader.
 */
#include <stdint.h>
#include <stdlib.h>

#include "app.h"

#define READ_CHUNK (256 * 1024)

/*
 * The one pass over the first @len bytes of @mf: each piece into the @n
 * digests @d and, when @copy is not NULL, to @copy.
 */
static ms_err
payload_pass(struct ms_modfile *mf, uint64_t len, struct ms_cms_digest **d, size_t n,
	     uint8_t *copy)
{
	uint8_t *buf = copy;
	size_t i, got = 0;
	ms_err err;

	if (copy == NULL) {
		buf = malloc(READ_CHUNK);
		if (buf == NULL) {
			return MS_E_NOMEM;
		}
	}
	err = ms_modfile_rewind(mf);
	while (err == MS_OK && len > 0) {
		err = ms_modfile_read(mf, buf, len < READ_CHUNK ? (size_t)len : READ_CHUNK, &got);
		if (err == MS_OK && got == 0) {
			/* Shorter than the caller's length: read from a file that shrank. */
			mf->op = "read";
			mf->err_path = mf->path;
			mf->sys_errno = 0;
			err = MS_E_CHANGED;
		}
		for (i = 0; i < n && err == MS_OK; i++) {
			err = ms_cms_digest_update(d[i], buf, got);
		}
		len -= got;
		if (copy != NULL) {
			buf += got;
		}
	}
	if (copy == NULL) {
		free(buf);
	}
	return err;
}

/* The digests of @algs over the first @len bytes of @mf, in one pass that also fills @copy when not NULL. */
static ms_err
payload_digests(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs, size_t n,
		struct ms_pkcs7_digest *out, size_t *bad_alg, uint8_t *copy)
{
	struct ms_cms_digest *d[MS_PKCS7_SIGNERS_MAX] = { NULL };
	size_t i;
	ms_err err = MS_OK;

	if (n > MS_PKCS7_SIGNERS_MAX) {
		return MS_E_ARG;
	}
	for (i = 0; i < n; i++) {
		err = ms_cms_digest_new(algs[i], &d[i]);
		if (err != MS_OK) {
			if (bad_alg != NULL) {
				*bad_alg = i;
			}
			goto out;
		}
	}
	err = payload_pass(mf, len, d, n, copy);
	for (i = 0; i < n && err == MS_OK; i++) {
		out[i].alg = algs[i];
		err = ms_cms_digest_final(d[i], out[i].d, sizeof(out[i].d), &out[i].len);
	}
out:
	for (i = 0; i < n; i++) {
		ms_cms_digest_free(d[i]);
	}
	return err;
}

ms_err
ms_app_payload_digest(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs,
		      size_t n, struct ms_pkcs7_digest *out, size_t *bad_alg)
{
	return payload_digests(mf, len, algs, n, out, bad_alg, NULL);
}

ms_err
ms_app_payload_read(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs, size_t n,
		    struct ms_pkcs7_digest *digests, uint8_t **out)
{
	uint8_t *data = NULL;
	ms_err err;

	*out = NULL;
	if (len > SIZE_MAX - 1) {
		return MS_E_NOMEM;
	}
	/* One byte more, so that an empty module has an address too. */
	data = malloc((size_t)len + 1);
	if (data == NULL) {
		return MS_E_NOMEM;
	}
	err = payload_digests(mf, len, algs, n, digests, NULL, data);
	if (err != MS_OK) {
		free(data);
		return err;
	}
	*out = data;
	return MS_OK;
}
