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
	 * After a failed sign on @lane: MS_OK when the lane was brought back
	 * and the signature may be tried once more; anything else means stop.
	 * NULL: the signer never recovers.
	 */
	ms_err (*recover)(struct ms_signer *s, unsigned lane);
	/* One line saying what failed last on @lane, for messages. */
	void (*describe)(const struct ms_signer *s, unsigned lane, char *buf, size_t cap);
	/* Frees everything; never called with NULL. */
	void (*free)(struct ms_signer *s);
};

struct ms_signer {
	const struct ms_signer_ops *ops;
	enum ms_key_type type;
	unsigned lanes;		/* valid lanes: 0 .. lanes - 1 */
};

#endif
