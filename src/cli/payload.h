/* SPDX-License-Identifier: GPL-2.0-only */
/* The digests of a module's payload in one streaming pass (payload.c). */
#ifndef MS_CLI_PAYLOAD_H
#define MS_CLI_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "../cms/pkcs7.h"
#include "../modfmt/modfmt.h"

/*
 * ms_cli_payload_digest() - the digests of the first @len bytes of the open
 * module @mf, one for each of the @n (at most MS_PKCS7_SIGNERS_MAX) hashes
 * in @algs, into @out, in one streaming pass from the module's first byte
 * through the module reader (as mbedtls_md_file() hashes a file).
 * Return: MS_OK; MS_E_UNSUPPORTED (hash @algs[*@bad_alg] is not in this
 * build; @bad_alg may be NULL); MS_E_IO, MS_E_CHANGED (details in @mf, for
 * ms_cli_modfile_why()); MS_E_NOMEM; MS_E_ARG. @out is unspecified on failure.
 */
ms_err ms_cli_payload_digest(struct ms_modfile *mf, uint64_t len, const enum ms_hash_alg *algs,
			     size_t n, struct ms_pkcs7_digest *out, size_t *bad_alg) MS_MUST_CHECK;

#endif
