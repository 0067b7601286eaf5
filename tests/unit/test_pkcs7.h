/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by tests/unit/test_pkcs7_*.c: building SignedData variants. */
#ifndef MS_TEST_PKCS7_H
#define MS_TEST_PKCS7_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/cms/pkcs7.h"
#include "test_cms.h"

#define P7_SIGNERS 10
#define P7_BUF 32768

/* One SignerInfo, from pre-encoded parts (TLVs unless said otherwise). */
struct p7_signer {
	unsigned version;
	uint8_t sid[1024];
	size_t sid_len;
	const uint8_t *digest_alg;
	size_t digest_alg_len;
	const uint8_t *attrs;		/* whole [0] or [2] TLV; NULL for none */
	size_t attrs_len;
	const uint8_t *sig_alg;
	size_t sig_alg_len;
	uint8_t sig[2100];		/* signature OCTET STRING content */
	size_t sig_len;
	const uint8_t *uattrs;		/* whole [1] TLV; NULL for none */
	size_t uattrs_len;
};

/* A ContentInfo; every NULL TLV takes the sign-file default. */
struct p7_msg {
	const uint8_t *outer_oid;	/* OID TLV; default signedData */
	size_t outer_oid_len;
	unsigned version;
	uint8_t digest_algs_tag;	/* 0: SET */
	uint8_t signer_infos_tag;	/* 0: SET */
	const uint8_t *eci;		/* EncapsulatedContentInfo TLV; default { id-data } */
	size_t eci_len;
	const uint8_t *certs;		/* whole [0]/[2] TLV, NULL for none */
	size_t certs_len;
	struct p7_signer s[P7_SIGNERS];
	size_t n;
};

/*
 * A signer signing @digest of @alg with tests/data/<key>.key.pem (sid from
 * <key>.x509.der, by SKID with @skid), as sign-file would.
 */
void p7_signer_make(struct p7_signer *s, const char *key, enum ms_hash_alg alg, bool skid,
		    const uint8_t *digest, size_t digest_len);

/* An empty message of SignedData @version: add signers to s[] and n. */
void p7_msg_init(struct p7_msg *m, unsigned version);

/* Encode into @out (P7_BUF bytes); returns the length. */
size_t p7_encode(const struct p7_msg *m, uint8_t *out);

/* SHA-x of tests/data/cms/mod.bin (or of its bytes with byte @flip xor 1 if >= 0). */
size_t p7_mod_digest(enum ms_hash_alg alg, long flip, uint8_t *out);

#endif
