/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What every signer implements, for the files of src/signer/ only: a signer
 * embeds struct ms_signer as its first member and fills in its ops table;
 * callers go through the ms_signer_*() functions of signer.h.
 */
#ifndef MS_SIGNER_INTERNAL_H
#define MS_SIGNER_INTERNAL_H

#include "signer.h"

/* What a key signs: a DigestInfo (at most 19 + 64 bytes) or a digest. */
#define MS_SIGNER_TBS_MAX 128

struct ms_signer_ops {
	/*
	 * Raw signature: RSA modulus-size bytes, EC r||s. @lane and the
	 * digest's length were checked by ms_signer_sign().
	 */
	ms_err (*sign)(struct ms_signer *s, unsigned lane, const struct ms_signer_req *req,
		       uint8_t *sig, size_t cap, size_t *sig_len);
	/* MS_OK when the key is the certificate's, MS_E_MISMATCH when not. */
	ms_err (*match_cert)(struct ms_signer *s, const struct ms_cms_cert *cert);
	/*
	 * MS_OK when @s holds @ref's key, MS_E_MISMATCH when not. @ref has the
	 * same ops. NULL: MS_E_UNSUPPORTED.
	 */
	ms_err (*match_key)(const struct ms_signer *s, const struct ms_signer *ref);
	/*
	 * After a failed sign on @lane: MS_OK when the lane was brought back
	 * and the signature may be tried once more; anything else means stop.
	 * NULL: the signer never recovers.
	 */
	ms_err (*recover)(struct ms_signer *s, unsigned lane);
	/* What the last failed sign on @lane lost. NULL: never anything. */
	enum ms_signer_loss (*loss)(const struct ms_signer *s, unsigned lane);
	/* One line saying what failed last on @lane, for messages. */
	void (*describe)(const struct ms_signer *s, unsigned lane, char *buf, size_t cap);
	/* Who signs, for messages: the token, the agent's socket or the key file. */
	void (*name)(const struct ms_signer *s, char *buf, size_t cap);
	/* Frees everything; never called with NULL. */
	void (*free)(struct ms_signer *s);
};

struct ms_signer {
	const struct ms_signer_ops *ops;
	enum ms_key_type type;
	unsigned lanes;		/* valid lanes: 0 .. lanes - 1 */
};

/* ---- lanes.c ---- */

/**
 * ms_lanes_overdue() - the watchdog's test of one lane (ms_lanes_hung()):
 * whether a lane stamped busy at @since (CLOCK_MONOTONIC ns, 0 when idle)
 * has been signing for longer than @limit ns at @now. A pure function, so
 * that the unit tests can give it the clock readings a race gives rarely.
 */
bool ms_lanes_overdue(uint64_t now, uint64_t since, uint64_t limit);

/* ---- keyfile.c ---- */

/**
 * ms_signer_keyfile_is_encrypted() - whether the key file needs a passphrase
 * (for the tests and the fuzz target; a run just opens the key).
 * Return: MS_OK with *@is_encrypted set, or the error of reading or parsing
 * it (@why says which).
 */
ms_err ms_signer_keyfile_is_encrypted(const char *path, int *is_encrypted, char *why,
				      size_t why_cap) MS_MUST_CHECK;

/* ---- hogweed.c: RSA signatures of key files through nettle ---- */

struct ms_hogweed_key;
struct mbedtls_rsa_context;

/**
 * ms_signer_hogweed_new() - nettle's copy of the RSA key mbedTLS parsed
 * (modulus, exponent and the CRT parameters), for signatures that any
 * number of threads make at once, each with its own random function.
 * Return: MS_OK; MS_E_UNSUPPORTED (no CRT parameters, a modulus nettle
 * refuses or over 16384 bits); MS_E_NOMEM. The copy is wiped when freed.
 */
ms_err ms_signer_hogweed_new(const struct mbedtls_rsa_context *rsa,
			     struct ms_hogweed_key **out) MS_MUST_CHECK;

/* ms_signer_hogweed_size() - the signature length: the modulus in bytes. */
size_t ms_signer_hogweed_size(const struct ms_hogweed_key *k);

/**
 * ms_signer_hogweed_sign() - RSASSA-PKCS1-v1_5 (RFC 8017, 8.2.1) over @tbs,
 * the whole DigestInfo, as CKM_RSA_PKCS signs it; blinded with @f_rng
 * (an mbedTLS random function and its @p_rng, used by one thread at a time)
 * and checked with the public key.
 * Return: MS_OK; MS_E_NOSPACE (@cap below the modulus size); MS_E_ARG
 * (@tbs too long for the modulus); MS_E_INTERNAL (no randomness, or the
 * result did not check: a key whose parts do not agree).
 */
ms_err ms_signer_hogweed_sign(const struct ms_hogweed_key *k,
			      int (*f_rng)(void *, unsigned char *, size_t), void *p_rng,
			      const uint8_t *tbs, size_t tbs_len, uint8_t *sig, size_t cap,
			      size_t *sig_len) MS_MUST_CHECK;

/* ms_signer_hogweed_free() - wipe and free; NULL is a no-op. */
void ms_signer_hogweed_free(struct ms_hogweed_key *k);

/* ---- pbes2.c: PKCS#8 EncryptedPrivateKeyInfo with PBES2 (untrusted input) ---- */

/*
 * The highest PBKDF2 iteration count we derive a key with. OpenSSL 3 writes
 * 2048 by default; the highest figure current advice gives (OWASP, 2023:
 * 1,300,000 for HMAC-SHA-1, 600,000 for -SHA-256, 210,000 for -SHA-512) is
 * well below it, and at it one derivation already takes seconds of CPU
 * (once per run: lanes share the decrypted key). Above it a hostile or
 * mistaken key file is refused at once instead of holding up a build for
 * minutes. Fuzz builds lower it so that a mutated count costs milliseconds.
 */
#ifndef MS_PBES2_ITER_MAX
#define MS_PBES2_ITER_MAX 5000000u
#endif
/* Longest salt read; OpenSSL writes 16 bytes (8 before 1.1.1). */
#define MS_PBES2_SALT_MAX 256

enum ms_pbes2_prf {
	MS_PBES2_HMAC_SHA1 = 1,
	MS_PBES2_HMAC_SHA224,
	MS_PBES2_HMAC_SHA256,
	MS_PBES2_HMAC_SHA384,
	MS_PBES2_HMAC_SHA512,
};

enum ms_pbes2_cipher {
	MS_PBES2_AES128_CBC = 1,
	MS_PBES2_AES192_CBC,
	MS_PBES2_AES256_CBC,
	MS_PBES2_DES_EDE3_CBC,
};

/* The parameters of one encrypted key; the spans point into the caller's DER. */
struct ms_pbes2 {
	enum ms_pbes2_prf prf;
	enum ms_pbes2_cipher cipher;
	uint64_t iterations;	/* 1 .. MS_PBES2_ITER_MAX after a successful parse */
	struct ms_span salt;	/* 1 .. MS_PBES2_SALT_MAX bytes */
	struct ms_span iv;	/* one cipher block */
	struct ms_span data;	/* encryptedData: whole blocks, at least one */
};

/**
 * ms_signer_pbes2_parse() - read a DER EncryptedPrivateKeyInfo (RFC 5958)
 * encrypted with PBES2 (RFC 8018): PBKDF2 with HMAC-SHA-1/224/256/384/512,
 * AES-128/192/256-CBC or DES-EDE3-CBC. Strict DER, every length checked.
 * @why (may be NULL) gets a one-line reason on failure.
 * Return: MS_OK; MS_E_NOTFOUND when @der is not an EncryptedPrivateKeyInfo
 * with PBES2 (another key format: not ours to judge); MS_E_MALFORMED;
 * MS_E_UNSUPPORTED (another KDF, PRF or cipher, a salt from otherSource, an
 * iteration count over MS_PBES2_ITER_MAX). *@out is unspecified on failure.
 */
ms_err ms_signer_pbes2_parse(const uint8_t *der, size_t len, struct ms_pbes2 *out, char *why,
			     size_t why_cap) MS_MUST_CHECK;

/**
 * ms_signer_pbes2_decrypt() - derive the key from @pass (@pass_len bytes,
 * may be empty) and decrypt @p's data into @out (@cap >= p->data.len),
 * checking and removing the padding. The derived key and the cipher state
 * are wiped; on failure so are the bytes written to @out. @out holds the
 * secret key: the caller wipes it.
 * Return: MS_OK with *@out_len set; MS_E_PIN (the padding is wrong: a wrong
 * passphrase, or a corrupted file); MS_E_NOSPACE; MS_E_ARG (@p not from a
 * successful parse); MS_E_NOMEM; MS_E_INTERNAL.
 */
ms_err ms_signer_pbes2_decrypt(const struct ms_pbes2 *p, const uint8_t *pass, size_t pass_len,
			       uint8_t *out, size_t cap, size_t *out_len, char *why,
			       size_t why_cap) MS_MUST_CHECK;

#endif
