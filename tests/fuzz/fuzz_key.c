// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: private key file loading (ms_signer_keyfile_is_encrypted
 * and ms_signer_keyfile_open in src/signer/keyfile.c: PEM or DER, RSA or EC, encrypted
 * or not) through a memfd, as the CLI opens a <key> file: first without a
 * passphrase, then, when the key says it is encrypted, with the TEST-ONLY
 * passphrase of tests/data/rsa2048.enc.key.pem. A key that loads signs
 * one DigestInfo and is compared with the TEST-ONLY certificates.
 * Input: the key file.
 */
#include <stdlib.h>
#include <string.h>

#include "common/ms_common.h"
#include "fuzz.h"
#include "signer/signer_internal.h"

#define PASSPHRASE "test-passphrase"
/* RSA-4096 at most: a larger fuzzed key is refused by capacity, not signed slowly. */
#define SIG_CAP 512

static const char *const fixed_names[] = {
	"rsa2048.x509.der", "ec256.x509.der",
};
#define N_FIXED (sizeof(fixed_names) / sizeof(fixed_names[0]))

static struct ms_cms_cert *fixed[N_FIXED];

static void
use_key(struct ms_signer *s)
{
	uint8_t digest[32], sig[SIG_CAP];
	size_t sig_len = 0;
	struct ms_signer_req req = {
		.alg = MS_HASH_SHA256, .digest = digest, .digest_len = sizeof(digest),
	};
	char text[256];
	ms_err err;

	if (ms_signer_lanes(s) != 1 ||
	    (ms_signer_key_type(s) != MS_KEY_RSA && ms_signer_key_type(s) != MS_KEY_EC)) {
		fuzz_die("signer facts out of range");
	}
	memset(digest, 0x5a, sizeof(digest));
	err = ms_signer_sign(s, 0, &req, sig, sizeof(sig), &sig_len);
	if (err == MS_OK && (sig_len == 0 || sig_len > sizeof(sig))) {
		fuzz_die("signature length out of range");
	}
	(void)ms_signer_sign(s, 1, &req, sig, sizeof(sig), &sig_len);
	for (size_t i = 0; i < N_FIXED; i++) {
		(void)ms_signer_match_cert(s, fixed[i]);
	}
	ms_signer_describe(s, 0, text, sizeof(text));
	ms_signer_describe(s, 7, text, sizeof(text));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ms_signer *s = NULL;
	struct ms_pin pass;
	char why[512];
	const char *path;
	int is_encrypted = 0;
	ms_err err;

	fuzz_certs_load(fixed_names, fixed, N_FIXED);
	memset(&pass, 0, sizeof(pass));
	path = fuzz_memfd_path(data, size);
	why[0] = '\0';
	err = ms_signer_keyfile_is_encrypted(path, &is_encrypted, why, sizeof(why));
	if (err != MS_OK) {
		is_encrypted = 0;
	}
	err = ms_signer_keyfile_open(path, NULL, 1, &s, why, sizeof(why));
	if (err == MS_E_PIN) {
		if (s != NULL) {
			fuzz_die("signer returned with an error");
		}
		memcpy(pass.buf, PASSPHRASE, sizeof(PASSPHRASE));
		pass.len = sizeof(PASSPHRASE) - 1;
		pass.source = "KBUILD_SIGN_PIN";
		pass.is_set = true;
		err = ms_signer_keyfile_open(path, &pass, 1, &s, why, sizeof(why));
		ms_pin_clear(&pass);
	} else if (is_encrypted != 0) {
		fuzz_die("is_encrypted said yes, open without a passphrase did not ask for one");
	}
	if (err != MS_OK) {
		if (s != NULL) {
			fuzz_die("signer returned with an error");
		}
		if (strnlen(why, sizeof(why)) == sizeof(why) || why[0] == '\0') {
			fuzz_die("no reason for a key that does not load");
		}
		return 0;
	}
	use_key(s);
	ms_signer_free(s);
	return 0;
}
