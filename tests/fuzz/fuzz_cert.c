// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: certificate loading (ms_cms_cert_parse, DER or PEM) and
 * every accessor of a parsed certificate: key facts, subject text, issuer,
 * serial and SKID, the SignerIdentifier in both forms, and the key
 * comparisons with SPKI, RSA and EC public keys as tokens return them. The
 * input is also used as an SPKI, RSA key or EC point against the TEST-ONLY
 * certificates, and as a signature to verify.
 *
 * Oracles: the SignerIdentifier size query matches the encoding and a
 * one-byte-short buffer is refused; a parsed certificate matches its own
 * public key in every form (SPKI, n/e, params/point) as mbedTLS writes it,
 * an ML-DSA one its own SPKI as RFC 9881 writes it.
 */
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/oid.h>
#include <mbedtls/pk.h>
#include <mbedtls/rsa.h>
#include <mbedtls/x509_crt.h>

#include "cms/cms_internal.h"
#include "cms/mbedtls_compat.h"
#include "cms/pkcs7.h"
#include "fuzz.h"

#define SPKI_CAP 4096

static const char *const fixed_names[] = {
	"rsa2048.x509.der", "ec256.x509.der", "ec521.x509.der",
};
#define N_FIXED (sizeof(fixed_names) / sizeof(fixed_names[0]))

static struct ms_cms_cert *fixed[N_FIXED];

static void
check_text(const char *text, size_t cap)
{
	if (strnlen(text, cap) == cap) {
		fuzz_die("text output not NUL-terminated within its capacity");
	}
}

static void
names(const struct ms_cms_cert *cert)
{
	static const size_t caps[] = { 1, 4, 64, 1024 };
	char *buf = NULL;

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		/* Exact-size heap buffers: ASan sees a write past @cap. */
		buf = malloc(caps[i]);
		if (buf == NULL) {
			fuzz_die("malloc");
		}
		ms_cms_cert_subject(cert, buf, caps[i]);
		check_text(buf, caps[i]);
		if (ms_cms_name_text(ms_cms_cert_issuer(cert), buf, caps[i]) == MS_OK) {
			check_text(buf, caps[i]);
		}
		if (ms_cms_name_text(ms_cms_cert_subject_name(cert), buf, caps[i]) == MS_OK) {
			check_text(buf, caps[i]);
		}
		if (ms_cms_name_cn(ms_cms_cert_issuer(cert), buf, caps[i]) == MS_OK) {
			check_text(buf, caps[i]);
		}
		if (ms_cms_name_cn(ms_cms_cert_subject_name(cert), buf, caps[i]) == MS_OK) {
			check_text(buf, caps[i]);
		}
		free(buf);
	}
}

/* Both sid forms: size query, exact buffer, one byte short. */
static void
signer_ids(const struct ms_cms_cert *cert)
{
	for (int use_skid = 0; use_skid <= 1; use_skid++) {
		size_t need = 0, len = 0;
		uint8_t *out = NULL;
		ms_err err = ms_cms_signer_id_encode(cert, use_skid != 0, NULL, 0, &need);

		if (use_skid != 0 && !ms_cms_cert_has_skid(cert)) {
			if (err != MS_E_NOTFOUND) {
				fuzz_die("skid sid without a SKID");
			}
			continue;
		}
		if (err != MS_OK || need == 0) {
			fuzz_die("sid size query failed");
		}
		out = malloc(need);
		if (out == NULL) {
			fuzz_die("malloc");
		}
		if (ms_cms_signer_id_encode(cert, use_skid != 0, out, need, &len) != MS_OK ||
		    len != need) {
			fuzz_die("sid encoding differs from its size query");
		}
		if (ms_cms_signer_id_encode(cert, use_skid != 0, out, need - 1, &len) !=
		    MS_E_NOSPACE) {
			fuzz_die("sid encoding ignored its capacity");
		}
		free(out);
	}
}

/* The EC named-curve OID as DER, as CKA_EC_PARAMS holds it. */
static size_t
ec_params(mbedtls_ecp_group_id id, uint8_t *out, size_t cap)
{
	const char *oid = NULL;
	size_t oid_len = 0;

	if (mbedtls_oid_get_oid_by_ec_grp(id, &oid, &oid_len) != 0 || oid_len + 2 > cap ||
	    oid_len > 127) {
		fuzz_die("no OID for a curve the certificate parser accepted");
	}
	out[0] = 0x06;
	out[1] = (uint8_t)oid_len;
	memcpy(out + 2, oid, oid_len);
	return oid_len + 2;
}

/*
 * An ML-DSA certificate (our parser, no mbedTLS key) matches its own SPKI
 * written here (RFC 9881, 2), and no RSA or EC key; its own signature
 * check (the issuer's, unknown here) must only not crash.
 */
static void
self_match_mldsa(const struct ms_cms_cert *cert)
{
	static const uint8_t alg[] = { 0x30, 0x0b, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01,
				       0x65, 0x03, 0x04, 0x03, 0x00 };
	size_t pk_len = ms_cms_mldsa_pk_len(cert->mldsa), bits = pk_len + 1;
	size_t body = sizeof(alg) + 4 + bits;
	uint8_t *spki = malloc(4 + body);

	if (spki == NULL) {
		fuzz_die("malloc");
	}
	if (pk_len == 0 || cert->mldsa_pk.len != pk_len || cert->curve != MS_EC_NONE) {
		fuzz_die("ML-DSA key facts inconsistent");
	}
	spki[0] = 0x30;
	spki[1] = 0x82;
	spki[2] = (uint8_t)(body >> 8);
	spki[3] = (uint8_t)body;
	memcpy(spki + 4, alg, sizeof(alg));
	spki[4 + sizeof(alg) - 1] = (uint8_t)(0x10 + cert->mldsa);	/* .17, .18, .19 */
	spki[4 + sizeof(alg)] = 0x03;
	spki[5 + sizeof(alg)] = 0x82;
	spki[6 + sizeof(alg)] = (uint8_t)(bits >> 8);
	spki[7 + sizeof(alg)] = (uint8_t)bits;
	spki[8 + sizeof(alg)] = 0;
	memcpy(spki + 9 + sizeof(alg), cert->mldsa_pk.p, pk_len);
	if (ms_cms_cert_match_spki(cert, spki, 4 + body) != MS_OK) {
		fuzz_die("ML-DSA certificate does not match its own SPKI");
	}
	if (ms_cms_cert_match_rsa(cert, spki, 8, spki, 3) != MS_E_MISMATCH) {
		fuzz_die("ML-DSA certificate matched an RSA key");
	}
	(void)ms_cms_cert_verify(cert, MS_HASH_SHA256, cert->tbs.p, cert->tbs.len,
				 cert->sig_value.p, cert->sig_value.len);
	free(spki);
}

/* A certificate matches its own public key in every form a token gives it. */
static void
self_match(const struct ms_cms_cert *cert)
{
	mbedtls_pk_context *pk = NULL;
	uint8_t *spki = NULL;
	int n;

	if (cert->type == MS_KEY_MLDSA) {
		self_match_mldsa(cert);
		return;
	}
	pk = &cert->crt->pk;
	spki = malloc(SPKI_CAP);
	if (spki == NULL) {
		fuzz_die("malloc");
	}
	n = mbedtls_pk_write_pubkey_der(pk, spki, SPKI_CAP);
	if (n <= 0) {
		fuzz_die("mbedTLS cannot write the key it parsed");
	}
	if (ms_cms_cert_match_spki(cert, spki + SPKI_CAP - n, (size_t)n) != MS_OK) {
		fuzz_die("certificate does not match its own SPKI");
	}
	if (cert->type == MS_KEY_RSA) {
		mbedtls_rsa_context *rsa = mbedtls_pk_rsa(*pk);
		size_t nlen = mbedtls_rsa_get_len(rsa);
		uint8_t e[8];

		if (nlen == 0 || nlen > SPKI_CAP ||
		    mbedtls_rsa_export_raw(rsa, spki, nlen, NULL, 0, NULL, 0, NULL, 0, e,
					   sizeof(e)) != 0) {
			/* An exponent over 8 bytes: legal, just not compared here. */
			free(spki);
			return;
		}
		if (ms_cms_cert_match_rsa(cert, spki, nlen, e, sizeof(e)) != MS_OK) {
			fuzz_die("certificate does not match its own modulus and exponent");
		}
	} else {
		mbedtls_ecp_keypair *kp = mbedtls_pk_ec(*pk);
		uint8_t params[64];
		size_t params_len = ec_params(ms_mbed_ec_group_id(kp), params, sizeof(params));
		size_t qlen = 0, hdr = 0;

		if (ms_mbed_ec_write_point(kp, spki + 3, SPKI_CAP - 3, &qlen) != 0 || qlen > 255) {
			fuzz_die("mbedTLS cannot write the point it parsed");
		}
		if (ms_cms_cert_match_ec(cert, params, params_len, spki + 3, qlen) != MS_OK) {
			fuzz_die("certificate does not match its own bare EC point");
		}
		/* OCTET STRING, as PKCS#11 2.40 wraps CKA_EC_POINT; P-521 needs 0x81 len. */
		if (qlen < 128) {
			spki[1] = 0x04;
			spki[2] = (uint8_t)qlen;
			hdr = 1;
		} else {
			spki[0] = 0x04;
			spki[1] = 0x81;
			spki[2] = (uint8_t)qlen;
			hdr = 0;
		}
		if (ms_cms_cert_match_ec(cert, params, params_len, spki + hdr, qlen + 3 - hdr) !=
		    MS_OK) {
			fuzz_die("certificate does not match its own wrapped EC point");
		}
	}
	free(spki);
}

/* The input as untrusted key material and signature against @cert. */
static void
input_against(const struct ms_cms_cert *cert, const uint8_t *data, size_t size)
{
	size_t cut = size == 0 ? 0 : data[0] % (size + 1);
	enum ms_hash_alg alg = (enum ms_hash_alg)(size == 0 ? 1 : 1 + data[size - 1] % 8);

	(void)ms_cms_cert_match_spki(cert, data, size);
	(void)ms_cms_cert_match_rsa(cert, data, cut, data + cut, size - cut);
	(void)ms_cms_cert_match_ec(cert, data, cut, data + cut, size - cut);
	(void)ms_cms_cert_verify(cert, alg, data, cut, data + cut, size - cut);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ms_cms_cert *cert = NULL;
	enum ms_key_type type = 0;
	enum ms_ec_curve curve = MS_EC_NONE;
	size_t bits = 0;
	struct ms_span skid;
	ms_err err;

	fuzz_certs_load(fixed_names, fixed, N_FIXED);
	for (size_t i = 0; i < N_FIXED; i++) {
		input_against(fixed[i], data, size);
	}
	err = ms_cms_cert_parse(data, size, &cert);
	if (err != MS_OK) {
		if (cert != NULL) {
			fuzz_die("ms_cms_cert_parse: output set on failure");
		}
		return 0;
	}
	ms_cms_cert_key(cert, &type, &curve, &bits);
	if (type == MS_KEY_MLDSA) {
		if (curve != MS_EC_NONE || bits != 0 ||
		    ms_cms_cert_mldsa_set(cert) == MS_MLDSA_NONE) {
			fuzz_die("ML-DSA key facts inconsistent");
		}
	} else if ((type == MS_KEY_RSA) != (curve == MS_EC_NONE) || bits == 0 ||
		   ms_cms_cert_mldsa_set(cert) != MS_MLDSA_NONE) {
		fuzz_die("key facts inconsistent");
	}
	skid = ms_cms_cert_skid(cert);
	if (ms_cms_cert_has_skid(cert) != (skid.len != 0)) {
		fuzz_die("has_skid disagrees with the SKID span");
	}
	(void)ms_cms_cert_serial(cert);
	names(cert);
	signer_ids(cert);
	self_match(cert);
	input_against(cert, data, size);
	ms_cms_cert_free(cert);
	return 0;
}
