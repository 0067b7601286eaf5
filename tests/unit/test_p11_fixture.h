/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the src/pkcs11 tests (tests/unit/test_p11_fixture.c):
 * a private SoftHSM2 token per test and a thin function-list wrapper.
 */
#ifndef MS_TEST_P11_FIXTURE_H
#define MS_TEST_P11_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "../../src/pkcs11/p11_internal.h"

#define P11T_MODULE "/usr/lib/softhsm/libsofthsm2.so"
#define P11T_PIN "1234"
#define P11T_URI_PATH "?module-path=" P11T_MODULE
/* The token mktoken.sh makes, through its module path. */
#define P11T_TOKEN "pkcs11:token=modsign-test"
/* DigestInfo of SHA-256 (RFC 8017, 9.2) over an arbitrary fixed digest. */
#define P11T_DIGEST_INFO_HEX \
	"3031300d060960864801650304020105000420" \
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

void p11t_token(void);
void p11t_done(struct ms_p11 *p11);
const char *p11t_dir(void);
/*
 * p11t_token_add() - one more token in the fixture's token directory, user
 * PIN @pin; with @key (a tests/data file name) its key pair imported as
 * label "rsa2048", id 01 (SoftHSM2 makes a private and a public key object).
 */
void p11t_token_add(const char *label, const char *pin, const char *key);
int p11t_run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
struct ms_p11 *p11t_open(const char *uri);
void p11t_pin(struct ms_pin *pin, const char *value);
struct ms_p11 *p11t_open_login(const char *uri, struct ms_pin *pin);
struct ms_p11 *p11t_open_key(const char *uri, struct ms_pin *pin, enum ms_p11_key_type want);
const char *p11t_write(const char *name, const uint8_t *p, size_t len);

enum {
	P11T_ATTR_HUGE = 1,	/* size query answers 2^40 bytes */
	P11T_ATTR_UNAVAILABLE,	/* size query answers CK_UNAVAILABLE_INFORMATION */
	P11T_ATTR_GROWS,	/* fetch answers CKR_BUFFER_TOO_SMALL */
};

struct p11t_wrap {
	unsigned n_login;		/* C_Login calls */
	unsigned n_sign;		/* C_Sign calls */
	CK_FLAGS add_token_flags;	/* ORed into CK_TOKEN_INFO.flags */
	CK_FLAGS del_token_flags;	/* cleared from CK_TOKEN_INFO.flags */
	CK_ULONG max_sessions;		/* replaces ulMaxSessionCount unless 0 */
	bool set_min_pin_len;		/* min_pin_len replaces ulMinPinLen */
	CK_ULONG min_pin_len;
	bool set_max_pin_len;		/* max_pin_len replaces ulMaxPinLen */
	CK_ULONG max_pin_len;
	CK_ATTRIBUTE_TYPE attr_type;	/* attribute attr_mode applies to */
	int attr_mode;
	CK_ULONG sign_len_add;		/* C_Sign claims cap + this many bytes */
	uint8_t sign_data[MS_P11I_TBS_MAX];	/* what the last C_Sign was given */
	CK_ULONG sign_data_len;
};

extern struct p11t_wrap p11t_wrap;
void p11t_wrap_install(struct ms_p11 *p11);
void p11t_wrap_remove(struct ms_p11 *p11);

#endif
