// SPDX-License-Identifier: GPL-2.0-only
/*
 * The size of an ECDSA r||s signature from a key's CKA_EC_PARAMS.
 * Parses untrusted input (by exact comparison only).
 */
#include <string.h>

#include "p11_internal.h"

struct ec_curve {
	const uint8_t *oid;	/* DER OBJECT IDENTIFIER, tag and length included */
	size_t oid_len;
	size_t field_len;	/* bytes in r and in s */
};

/* 1.2.840.10045.3.1.7 prime256v1 / NIST P-256 */
static const uint8_t oid_p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
/* 1.3.132.0.34 secp384r1 / NIST P-384 */
static const uint8_t oid_p384[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x22 };
/* 1.3.132.0.35 secp521r1 / NIST P-521 */
static const uint8_t oid_p521[] = { 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00, 0x23 };

/* The curves the kernel's ECDSA verifier knows (crypto/ecdsa.c), P-192 aside. */
static const struct ec_curve curves[] = {
	{ oid_p256, sizeof(oid_p256), 32 },
	{ oid_p384, sizeof(oid_p384), 48 },
	{ oid_p521, sizeof(oid_p521), 66 },
};

/*
 * @params is the DER ECParameters of CKA_EC_PARAMS; only the namedCurve
 * choice of a known curve is accepted (PKCS#11 3.0, 2.3.3).
 * Return: bytes in each of r and s, 0 for any other value.
 */
size_t
p11_ec_field_len(const uint8_t *params, size_t len)
{
	for (size_t i = 0; i < sizeof(curves) / sizeof(curves[0]); i++) {
		if (len == curves[i].oid_len && memcmp(params, curves[i].oid, len) == 0) {
			return curves[i].field_len;
		}
	}
	return 0;
}
