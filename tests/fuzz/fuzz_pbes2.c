// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the PBES2 parameters of an encrypted PKCS#8 key file
 * (ms_signer_pbes2_parse in src/signer/pbes2.c), and, when the iteration
 * count is small, the decryption with the TEST-ONLY passphrase of
 * tests/lib/common.sh. Input: the DER EncryptedPrivateKeyInfo.
 *
 * Oracles: what a successful parse returns lies inside the input and within
 * the ceilings; the IV is one block of its cipher and the data whole blocks;
 * a second parse gives the same answer; a decryption removes 1 to a block
 * of padding, and after a failure the output buffer holds no key bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "signer/signer_internal.h"

#define PASSPHRASE "test-passphrase"
/* Decrypt only when it is cheap: a mutated count must not slow the run. */
#define DECRYPT_ITER_MAX 256

static bool
inside(struct ms_span s, const uint8_t *data, size_t size)
{
	return s.len <= size && s.p >= data && (size_t)(s.p - data) <= size - s.len;
}

static size_t
block_of(enum ms_pbes2_cipher c)
{
	switch (c) {
	case MS_PBES2_AES128_CBC:
	case MS_PBES2_AES192_CBC:
	case MS_PBES2_AES256_CBC:
		return 16;
	case MS_PBES2_DES_EDE3_CBC:
		return 8;
	}
	return 0;
}

static void
check_decrypt(const struct ms_pbes2 *p)
{
	size_t block = block_of(p->cipher);
	uint8_t *out = malloc(p->data.len);
	size_t out_len = 0;
	char why[256];
	ms_err err;

	if (out == NULL) {
		fuzz_die("malloc");
	}
	err = ms_signer_pbes2_decrypt(p, (const uint8_t *)PASSPHRASE, strlen(PASSPHRASE), out,
				      p->data.len, &out_len, why, sizeof(why));
	if (err == MS_OK) {
		if (out_len >= p->data.len || p->data.len - out_len > block) {
			fuzz_die("decrypted length: padding out of range");
		}
	} else {
		if (err != MS_E_PIN) {
			fuzz_die("decrypt of a parsed key failed other than by its padding");
		}
		for (size_t i = 0; i < p->data.len; i++) {
			if (out[i] != 0) {
				fuzz_die("decrypted bytes left after a failure");
			}
		}
	}
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ms_pbes2 a, b;
	char why[512];
	size_t block;
	ms_err err;

	err = ms_signer_pbes2_parse(data, size, &a, why, sizeof(why));
	if (ms_signer_pbes2_parse(data, size, &b, NULL, 0) != err) {
		fuzz_die("two parses of one input disagree");
	}
	if (err != MS_OK) {
		if (err != MS_E_NOTFOUND && err != MS_E_MALFORMED && err != MS_E_UNSUPPORTED) {
			fuzz_die("parse error out of the documented set");
		}
		if (err != MS_E_NOTFOUND && why[0] == '\0') {
			fuzz_die("a refusal without a reason");
		}
		return 0;
	}
	block = block_of(a.cipher);
	if (!inside(a.salt, data, size) || !inside(a.iv, data, size) ||
	    !inside(a.data, data, size)) {
		fuzz_die("a span outside the input");
	}
	if (a.iterations < 1 || a.iterations > MS_PBES2_ITER_MAX || a.salt.len < 1 ||
	    a.salt.len > MS_PBES2_SALT_MAX) {
		fuzz_die("iterations or salt out of range");
	}
	if (block == 0 || a.iv.len != block || a.data.len == 0 || a.data.len % block != 0) {
		fuzz_die("IV or data not in whole blocks of the cipher");
	}
	if (a.prf < MS_PBES2_HMAC_SHA1 || a.prf > MS_PBES2_HMAC_SHA512) {
		fuzz_die("prf out of range");
	}
	if (a.iterations <= DECRYPT_ITER_MAX) {
		check_decrypt(&a);
	}
	return 0;
}
