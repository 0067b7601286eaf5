// SPDX-License-Identifier: GPL-2.0-only
/*
 * A signer over a private key file, parsed by mbedTLS: RSA PKCS#1 v1.5 over
 * the DigestInfo (as CKM_RSA_PKCS signs it) through nettle's hogweed
 * (hogweed.c), deterministic ECDSA (RFC 6979) through mbedTLS, giving r||s. Keys mbedTLS reads (PEM, DER, traditional
 * encrypted PEM, PKCS#8 with PKCS#12 PBE), and PKCS#8 encrypted with PBES2
 * through pbes2.c. Parses untrusted input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ecdsa.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/pem.h>
#include <mbedtls/pk.h>
#include <mbedtls/pkcs12.h>
#include <mbedtls/pkcs5.h>
#include <mbedtls/rsa.h>

#include "../cms/mbedtls_compat.h"
#include "../common/ms_common.h"
#include "signer_internal.h"

#define KEY_FILE_MAX (64 * 1024)
#define SPKI_MAX 2600

/*
 * An EC key is parsed once per lane: an mbedTLS context signs for one thread
 * at a time. An RSA key is parsed once, into lane 0, and signs through one
 * nettle copy that every lane reads; each lane has its own random generator.
 */
struct pem_lane {
	mbedtls_pk_context pk;		/* EC: every lane; RSA: lane 0 only */
	mbedtls_ecp_group grp;		/* EC: the lane's copies of the curve */
	mbedtls_mpi d;			/* and of the private value (secret) */
	mbedtls_ctr_drbg_context drbg;	/* RSA blinding, ECDSA blinding */
	int last_ret;			/* the last mbedTLS error */
	const char *fail;		/* or what else failed last, static text */
};

struct pem_signer {
	struct ms_signer base;		/* first: callers hold a struct ms_signer * */
	mbedtls_entropy_context entropy;
	struct ms_hogweed_key *rsa;	/* RSA keys: nettle's copy, shared by the lanes */
	struct pem_lane *lane;
	unsigned n_lanes;
	char path[1024];
};

static const char personalisation[] = "modsign pem signer";

/* The hash RFC 6979 derives the ECDSA nonce with: the digest's own where mbedTLS has it. */
static mbedtls_md_type_t
md_type(enum ms_hash_alg alg)
{
	int t = ms_cms_hash_mbedtls_md(alg);

	/*
	 * RFC 6979 needs only an HMAC there: for a digest mbedTLS cannot
	 * compute (SHA-3 on 2.28) HMAC-SHA-512 stands in, so k is still a
	 * deterministic PRF of the key and the digest, never a reused value.
	 */
	return t == MBEDTLS_MD_NONE ? MBEDTLS_MD_SHA512 : (mbedtls_md_type_t)t;
}

static ms_err
sign_rsa(const struct ms_hogweed_key *rsa, struct pem_lane *l, const struct ms_signer_req *req,
	 uint8_t *sig, size_t cap, size_t *sig_len)
{
	uint8_t tbs[MS_SIGNER_TBS_MAX];
	size_t tbs_len = 0;
	ms_err err;

	err = ms_cms_tbs_encode(MS_KEY_RSA, req->alg, req->digest, req->digest_len, tbs,
				sizeof(tbs), &tbs_len);
	if (err != MS_OK) {
		return err;
	}
	err = ms_signer_hogweed_sign(rsa, mbedtls_ctr_drbg_random, &l->drbg, tbs, tbs_len, sig,
				     cap, sig_len);
	if (err == MS_E_INTERNAL) {
		l->fail = "nettle: the RSA signature did not check against the public key, "
			  "or no random bytes for its blinding";
	}
	return err;
}

/* ECDSA signs the digest itself (CKM_ECDSA's input too). */
static ms_err
sign_ec(struct pem_lane *l, const struct ms_signer_req *req, uint8_t *sig, size_t cap,
	size_t *sig_len)
{
	size_t half = (l->grp.pbits + 7) / 8;
	mbedtls_mpi r, s;
	ms_err err = MS_E_INTERNAL;

	mbedtls_mpi_init(&r);
	mbedtls_mpi_init(&s);
	if (2 * half > cap) {
		err = MS_E_NOSPACE;
		goto out;
	}
	l->last_ret = mbedtls_ecdsa_sign_det_ext(&l->grp, &r, &s, &l->d, req->digest,
						 req->digest_len, md_type(req->alg),
						 mbedtls_ctr_drbg_random, &l->drbg);
	if (l->last_ret != 0) {
		goto out;
	}
	l->last_ret = mbedtls_mpi_write_binary(&r, sig, half);
	if (l->last_ret != 0) {
		goto out;
	}
	l->last_ret = mbedtls_mpi_write_binary(&s, sig + half, half);
	if (l->last_ret != 0) {
		goto out;
	}
	*sig_len = 2 * half;
	err = MS_OK;
out:
	mbedtls_mpi_free(&r);
	mbedtls_mpi_free(&s);
	return err;
}

static ms_err
pem_sign(struct ms_signer *base, unsigned lane, const struct ms_signer_req *req, uint8_t *sig,
	 size_t cap, size_t *sig_len)
{
	struct pem_signer *ps = (struct pem_signer *)base;

	if (lane >= ps->n_lanes) {
		return MS_E_ARG;
	}
	if (base->type == MS_KEY_RSA) {
		return sign_rsa(ps->rsa, &ps->lane[lane], req, sig, cap, sig_len);
	}
	return sign_ec(&ps->lane[lane], req, sig, cap, sig_len);
}

static ms_err
pem_match_cert(struct ms_signer *base, const struct ms_cms_cert *cert)
{
	struct pem_signer *ps = (struct pem_signer *)base;
	uint8_t *spki = NULL;
	int n;
	ms_err err = MS_E_INTERNAL;

	spki = malloc(SPKI_MAX);
	if (spki == NULL) {
		return MS_E_NOMEM;
	}
	/* mbedTLS writes DER backwards from the end of the buffer. */
	n = mbedtls_pk_write_pubkey_der(&ps->lane[0].pk, spki, SPKI_MAX);
	if (n <= 0) {
		ps->lane[0].last_ret = n;
		goto out;
	}
	err = ms_cms_cert_match_spki(cert, spki + SPKI_MAX - (size_t)n, (size_t)n);
out:
	free(spki);
	return err;
}

static void
pem_describe(const struct ms_signer *base, unsigned lane, char *buf, size_t cap)
{
	const struct pem_signer *ps = (const struct pem_signer *)base;
	char text[160];
	int ret = lane < ps->n_lanes ? ps->lane[lane].last_ret : 0;

	if (lane < ps->n_lanes && ps->lane[lane].fail != NULL) {
		snprintf(buf, cap, "%s: %s", ps->path, ps->lane[lane].fail);
		return;
	}
	mbedtls_strerror(ret, text, sizeof(text));
	snprintf(buf, cap, "%s: mbedTLS: %s", ps->path, text);
}

static void
pem_free(struct ms_signer *base)
{
	struct pem_signer *ps = (struct pem_signer *)base;

	if (ps == NULL) {
		return;
	}
	for (unsigned i = 0; i < ps->n_lanes; i++) {
		/* mbedtls_pk_free and mbedtls_mpi_free zeroise the key material. */
		mbedtls_pk_free(&ps->lane[i].pk);
		mbedtls_ecp_group_free(&ps->lane[i].grp);
		mbedtls_mpi_free(&ps->lane[i].d);
		mbedtls_ctr_drbg_free(&ps->lane[i].drbg);
	}
	free(ps->lane);
	ms_signer_hogweed_free(ps->rsa);
	mbedtls_entropy_free(&ps->entropy);
	free(ps);
}

static void
pem_name(const struct ms_signer *base, char *buf, size_t cap)
{
	const struct pem_signer *ps = (const struct pem_signer *)base;

	snprintf(buf, cap, "key file %s", ps->path);
}

static const struct ms_signer_ops pem_ops = {
	.sign = pem_sign,
	.match_cert = pem_match_cert,
	.describe = pem_describe,
	.name = pem_name,
	.free = pem_free,
};

static void
say(char *why, size_t cap, const char *path, const char *what, int ret)
{
	char text[160] = "";

	if (ret != 0) {
		mbedtls_strerror(ret, text, sizeof(text));
	}
	snprintf(why, cap, "%s: %s%s%s", path, what, ret != 0 ? ": " : "", text);
}

/*
 * The bytes mbedTLS parses each lane's key from: the file as it is, or, for
 * a PKCS#8 key encrypted with PBES2 (PEM or DER), the PrivateKeyInfo
 * decrypted once here.
 */
struct key_bytes {
	const uint8_t *p;
	size_t len;		/* the file's without its NUL */
	bool is_pbes2;
	uint8_t *plain;		/* the decrypted key: secret, wiped by key_bytes_clear() */
	size_t plain_cap;
};

static void
key_bytes_clear(struct key_bytes *kb)
{
	if (kb->plain != NULL) {
		ms_wipe(kb->plain, kb->plain_cap);
		free(kb->plain);
	}
	memset(kb, 0, sizeof(*kb));
}

static bool
is_pem(const uint8_t *buf, size_t len)
{
	return len >= 10 && memcmp(buf, "-----BEGIN", 10) == 0;
}

/*
 * Decrypt @der when it is a PBES2 EncryptedPrivateKeyInfo: into kb->plain,
 * checked to be one DER SEQUENCE (as mbedTLS checks its own decryptions),
 * else the passphrase was wrong. @derive false: only say whether it is one.
 */
static ms_err
pbes2_unwrap(const uint8_t *der, size_t der_len, const struct ms_pin *pass, bool derive,
	     struct key_bytes *kb, const char *path, char *why, size_t why_cap)
{
	struct ms_pbes2 p;
	struct ms_span body = { NULL, 0 };
	char detail[256] = "";
	size_t plain_len = 0;
	ms_err err;

	err = ms_signer_pbes2_parse(der, der_len, &p, detail, sizeof(detail));
	if (err == MS_E_NOTFOUND) {
		return MS_OK;		/* another format: mbedTLS reads the file */
	}
	if (err != MS_OK) {
		snprintf(why, why_cap, "%s: encrypted PKCS#8 key: %s", path, detail);
		return err;
	}
	kb->is_pbes2 = true;
	if (!derive) {
		return MS_OK;
	}
	if (pass == NULL || !pass->is_set) {
		say(why, why_cap, path, "key is encrypted and no passphrase was given", 0);
		return MS_E_PIN;
	}
	kb->plain = malloc(p.data.len);
	if (kb->plain == NULL) {
		return MS_E_NOMEM;
	}
	kb->plain_cap = p.data.len;
	err = ms_signer_pbes2_decrypt(&p, (const uint8_t *)pass->buf, pass->len, kb->plain,
				      kb->plain_cap, &plain_len, detail, sizeof(detail));
	if (err == MS_OK &&
	    ms_der_expect_only((struct ms_span){ kb->plain, plain_len }, 0x30, &body) != MS_OK) {
		err = MS_E_PIN;	/* the padding matched by chance */
	}
	if (err == MS_E_PIN) {
		say(why, why_cap, path, "wrong passphrase for the key, or the key file is corrupted",
		    0);
		return err;
	}
	if (err != MS_OK) {
		snprintf(why, why_cap, "%s: encrypted PKCS#8 key: %s", path, detail);
		return err;
	}
	kb->p = kb->plain;
	kb->len = plain_len;
	return MS_OK;
}

/*
 * The file's bytes, with a PBES2-encrypted key decrypted (@derive) or only
 * recognised. A PEM file is NUL-terminated (ms_file_read_small()).
 */
static ms_err
key_bytes_get(const uint8_t *buf, size_t len, const struct ms_pin *pass, bool derive,
	      struct key_bytes *kb, const char *path, char *why, size_t why_cap)
{
	mbedtls_pem_context pem;
	struct ms_span der = { NULL, 0 };
	size_t used = 0;
	int ret;
	ms_err err = MS_OK;

	kb->p = buf;
	kb->len = len;
	if (!is_pem(buf, len)) {
		return pbes2_unwrap(buf, len, pass, derive, kb, path, why, why_cap);
	}
	mbedtls_pem_init(&pem);
	ret = mbedtls_pem_read_buffer(&pem, "-----BEGIN ENCRYPTED PRIVATE KEY-----",
				      "-----END ENCRYPTED PRIVATE KEY-----", buf, NULL, 0, &used);
	if (ret == 0) {
		der = ms_mbed_pem_buffer(&pem);
		err = pbes2_unwrap(der.p, der.len, pass, derive, kb, path, why, why_cap);
	} else if (ret != MBEDTLS_ERR_PEM_NO_HEADER_FOOTER_PRESENT) {
		say(why, why_cap, path, "cannot parse private key", ret);
		err = MS_E_MALFORMED;
	}
	mbedtls_pem_free(&pem);
	return err;
}

/* Parse the key bytes into @pk; @pass only for formats mbedTLS decrypts itself. */
static ms_err
parse_key(mbedtls_pk_context *pk, const struct key_bytes *kb, const struct ms_pin *pass,
	  const char *path, char *why, size_t why_cap)
{
	const unsigned char *pw = NULL;
	size_t pw_len = 0;
	size_t len = kb->len;
	int ret;

	if (pass != NULL && pass->is_set && !kb->is_pbes2) {
		pw = (const unsigned char *)pass->buf;
		pw_len = pass->len;
	}
	/* A PEM parse wants the terminating NUL counted in the length. */
	if (!kb->is_pbes2 && is_pem(kb->p, len)) {
		len++;
	}
	/* getrandom(2) for the blinding mbedTLS 3.x does while it parses. */
	ret = ms_mbed_pk_parse_key(pk, kb->p, len, pw, pw_len, ms_mbed_rng, NULL);
	if (ret == MBEDTLS_ERR_PK_PASSWORD_REQUIRED) {
		say(why, why_cap, path, "key is encrypted and no passphrase was given", 0);
		return MS_E_PIN;
	}
	if (ret == MBEDTLS_ERR_PK_PASSWORD_MISMATCH) {
		say(why, why_cap, path, "wrong passphrase for the key", 0);
		return MS_E_PIN;
	}
	if (ret == MBEDTLS_ERR_PKCS5_FEATURE_UNAVAILABLE ||
	    ret == MBEDTLS_ERR_PKCS12_FEATURE_UNAVAILABLE || ret == MBEDTLS_ERR_PK_FEATURE_UNAVAILABLE) {
		say(why, why_cap, path, "cannot parse private key (encrypted in a way modsign "
		    "does not read: re-encrypt with `openssl pkcs8 -topk8 -v2 aes-256-cbc`)", ret);
		return MS_E_UNSUPPORTED;
	}
	if (ret == MBEDTLS_ERR_PK_UNKNOWN_PK_ALG) {
		say(why, why_cap, path, "key is neither RSA nor EC", 0);
		return MS_E_UNSUPPORTED;
	}
	if (ret != 0) {
		/* Decrypted with the right passphrase, yet not a key mbedTLS reads. */
		say(why, why_cap, path, kb->is_pbes2 ? "cannot parse the decrypted private key "
		    "(modsign reads RSA and EC keys)" : "cannot parse private key", ret);
		return MS_E_MALFORMED;
	}
	if (!mbedtls_pk_can_do(pk, MBEDTLS_PK_RSA) && !mbedtls_pk_can_do(pk, MBEDTLS_PK_ECKEY)) {
		say(why, why_cap, path, "key is neither RSA nor EC", 0);
		return MS_E_UNSUPPORTED;
	}
	return MS_OK;
}

static ms_err
read_key_file(const char *path, uint8_t **buf, size_t *len, char *why, size_t why_cap)
{
	struct ms_file_fail fail = { 0 };
	ms_err err = ms_file_read_small(path, KEY_FILE_MAX, buf, len, &fail);

	char text[160];

	if (err != MS_OK) {
		/* "k.pem: is a FIFO (named pipe), not a regular file", as for a certificate. */
		ms_file_fail_why(&fail, err, text, sizeof(text));
		snprintf(why, why_cap, "%s: %s", path, text);
	}
	return err;
}

ms_err
ms_signer_keyfile_is_encrypted(const char *path, int *is_encrypted, char *why, size_t why_cap)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	struct key_bytes kb = { 0 };
	mbedtls_pk_context pk;
	ms_err err;

	mbedtls_pk_init(&pk);
	*is_encrypted = 0;
	err = read_key_file(path, &buf, &len, why, why_cap);
	if (err != MS_OK) {
		goto out;
	}
	err = key_bytes_get(buf, len, NULL, false, &kb, path, why, why_cap);
	if (err != MS_OK || kb.is_pbes2) {
		*is_encrypted = kb.is_pbes2;
		goto out;
	}
	err = parse_key(&pk, &kb, NULL, path, why, why_cap);
	*is_encrypted = err == MS_E_PIN;
	if (err == MS_E_PIN) {
		err = MS_OK;
	}
out:
	key_bytes_clear(&kb);
	mbedtls_pk_free(&pk);
	if (buf != NULL) {
		ms_wipe(buf, len);
		free(buf);
	}
	return err;
}

ms_err
ms_signer_keyfile_open(const char *path, const struct ms_pin *pass, unsigned lanes,
		       struct ms_signer **out, char *why, size_t why_cap)
{
	struct pem_signer *ps = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	struct key_bytes kb = { 0 };
	ms_err err = MS_E_INTERNAL;
	int ret;

	*out = NULL;
	if (lanes == 0) {
		return MS_E_ARG;
	}
	err = read_key_file(path, &buf, &len, why, why_cap);
	if (err != MS_OK) {
		goto out;
	}
	/* A PBES2 key is derived and decrypted once, whatever the lanes. */
	err = key_bytes_get(buf, len, pass, true, &kb, path, why, why_cap);
	if (err != MS_OK) {
		goto out;
	}
	ps = calloc(1, sizeof(*ps));
	if (ps == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	mbedtls_entropy_init(&ps->entropy);
	ps->lane = calloc(lanes, sizeof(*ps->lane));
	if (ps->lane == NULL) {
		err = MS_E_NOMEM;
		goto out;
	}
	ps->base.ops = &pem_ops;
	snprintf(ps->path, sizeof(ps->path), "%s", path);
	for (unsigned i = 0; i < lanes; i++) {
		mbedtls_pk_init(&ps->lane[i].pk);
		mbedtls_ecp_group_init(&ps->lane[i].grp);
		mbedtls_mpi_init(&ps->lane[i].d);
		mbedtls_ctr_drbg_init(&ps->lane[i].drbg);
		ps->n_lanes = i + 1;
		if (i == 0 || ps->rsa == NULL) {
			err = parse_key(&ps->lane[i].pk, &kb, pass, path, why, why_cap);
			if (err != MS_OK) {
				goto out;
			}
		}
		if (i == 0 && mbedtls_pk_can_do(&ps->lane[0].pk, MBEDTLS_PK_RSA)) {
			err = ms_signer_hogweed_new(mbedtls_pk_rsa(ps->lane[0].pk), &ps->rsa);
			if (err != MS_OK) {
				say(why, why_cap, path, err == MS_E_NOMEM ? "out of memory" :
				    err == MS_E_MALFORMED ? "its RSA CRT parameters are inconsistent "
				    "(p and q odd, d mod (p-1) below p, d mod (q-1) below q, q^-1 mod p below p)" :
				    "nettle refuses the RSA key (it reads moduli up to 16384 bits "
				    "with their CRT parameters)", 0);
				goto out;
			}
		}
		if (ps->rsa == NULL) {
			/* EC: the curve and private value this lane signs with. */
			ret = ms_mbed_ec_export(mbedtls_pk_ec(ps->lane[i].pk), &ps->lane[i].grp,
						&ps->lane[i].d, NULL);
			if (ret != 0) {
				say(why, why_cap, path, "cannot copy the EC key", ret);
				err = ret == MBEDTLS_ERR_MPI_ALLOC_FAILED ? MS_E_NOMEM :
				      MS_E_INTERNAL;
				goto out;
			}
		}
		ret = mbedtls_ctr_drbg_seed(&ps->lane[i].drbg, mbedtls_entropy_func, &ps->entropy,
					    (const unsigned char *)personalisation,
					    sizeof(personalisation) - 1);
		if (ret != 0) {
			say(why, why_cap, path, "cannot seed the random generator", ret);
			err = MS_E_INTERNAL;
			goto out;
		}
	}
	ps->base.type = ps->rsa != NULL ? MS_KEY_RSA : MS_KEY_EC;
	ps->base.lanes = lanes;
	*out = &ps->base;
	ps = NULL;
	err = MS_OK;
out:
	pem_free(ps == NULL ? NULL : &ps->base);
	key_bytes_clear(&kb);
	if (buf != NULL) {
		ms_wipe(buf, len);
		free(buf);
	}
	return err;
}
