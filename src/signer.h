/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The small interface every key source offers the signing loop: sign the
 * bytes cms prepared, and prove that the key is the certificate's. A signer
 * has one or more lanes; each lane may be used by one thread at a time.
 */
#ifndef MS_SIGNER_H
#define MS_SIGNER_H

#include <stddef.h>
#include <stdint.h>

#include "cms/cms.h"
#include "common/ms_common.h"

struct ms_signer;

struct ms_signer_ops {
	/* Raw signature: RSA modulus-size bytes, EC r||s. */
	ms_err (*sign)(struct ms_signer *s, unsigned lane, enum ms_hash_alg alg,
		       const uint8_t *tbs, size_t tbs_len,
		       uint8_t *sig, size_t cap, size_t *sig_len);
	/* MS_OK when the key is the certificate's, MS_E_MISMATCH when not. */
	ms_err (*match_cert)(struct ms_signer *s, const struct ms_cms_cert *cert);
	/*
	 * After a failed sign on @lane: MS_OK when the lane was brought back
	 * (a lost token session re-opened, logged in again) and the signature
	 * may be tried once more; anything else means stop. NULL: never.
	 */
	ms_err (*recover)(struct ms_signer *s, unsigned lane);
	/* One line saying what failed last on @lane, for messages. */
	void (*describe)(const struct ms_signer *s, unsigned lane, char *buf, size_t cap);
	void (*free)(struct ms_signer *s);
};

struct ms_signer {
	const struct ms_signer_ops *ops;
	enum ms_key_type type;
	unsigned lanes;
};

/*
 * ms_signer_pem_open() - load a PEM or DER private key file (RSA or EC)
 * through mbedTLS, decrypting it with @pass when encrypted, with @lanes
 * independent copies (an mbedTLS RSA context serialises its users).
 * Return: MS_OK, MS_E_PIN (encrypted and @pass NULL or wrong), MS_E_IO,
 * MS_E_MALFORMED, MS_E_UNSUPPORTED, MS_E_NOMEM. @why gets a one-line reason.
 */
ms_err ms_signer_pem_open(const char *path, const struct ms_pin *pass, unsigned lanes,
			  struct ms_signer **out, char *why, size_t why_cap) MS_MUST_CHECK;

/* ms_signer_pem_is_encrypted() - whether the key file needs a passphrase. */
ms_err ms_signer_pem_is_encrypted(const char *path, int *is_encrypted, char *why,
				  size_t why_cap) MS_MUST_CHECK;

struct ms_p11;

/*
 * ms_signer_p11_new() - a signer over a logged-in token; finds the URI's key
 * (ms_p11_key_find()) and reads its public half. Takes ownership
 * of @p11 on success only: on failure the caller reads ms_p11_last_fail()
 * and closes it. Lane n uses session n.
 */
ms_err ms_signer_p11_new(struct ms_p11 *p11, struct ms_signer **out) MS_MUST_CHECK;

/*
 * ms_signer_p11_add_lanes() - open sessions until the signer has @want lanes
 * or the token allows no more (its ulMaxSessionCount, or a failed
 * C_OpenSession after the first lane). @want 0: one lane for a token in a
 * hardware slot, one per processor and one more otherwise.
 */
ms_err ms_signer_p11_add_lanes(struct ms_signer *s, unsigned want) MS_MUST_CHECK;

void ms_signer_free(struct ms_signer *s);

#endif
