/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Token access: loads PKCS#11 modules through p11-kit, finds the one token a
 * pkcs11: URI (RFC 7512) names, logs in once, finds the key or certificate
 * once, then signs with one C_Sign per call. Knows nothing of CMS or files.
 */
#ifndef MS_P11_H
#define MS_P11_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/ms_common.h"

struct ms_p11;

/* The call that failed last and what it returned, for one-line messages. */
struct ms_p11_fail {
	const char *call;	/* "C_Login", "C_Sign", "p11_kit_uri_parse", ...; NULL if none */
	unsigned long rv;	/* CK_RV; CKR_OK (0) when the failure is not a token's */
	char detail[1024];	/* human text: candidates when ambiguous, what was searched, ... */
};

enum ms_p11_key_type {
	MS_P11_KEY_RSA = 1,
	MS_P11_KEY_EC,
	/* PKCS#11 3.2 CKK_ML_DSA, by its CKA_PARAMETER_SET (FIPS 204) */
	MS_P11_KEY_MLDSA44,
	MS_P11_KEY_MLDSA65,
	MS_P11_KEY_MLDSA87,
};

/*
 * Public half of the found key, read from the private key's attributes or
 * from the public key / certificate object with the same CKA_ID. Fixed
 * ceilings; a longer attribute is an error, never a truncation.
 */
struct ms_p11_pubkey {
	bool has_rsa;		/* modulus and exponent set */
	uint8_t modulus[1024];	/* up to RSA-8192 */
	size_t modulus_len;
	uint8_t exponent[16];
	size_t exponent_len;
	bool has_ec;		/* ec_params and ec_point set */
	uint8_t ec_params[128];	/* DER ECParameters (named-curve OID) */
	size_t ec_params_len;
	uint8_t ec_point[160];	/* CKA_EC_POINT as the token returns it */
	size_t ec_point_len;
	bool has_spki;		/* CKA_PUBLIC_KEY_INFO, DER SubjectPublicKeyInfo */
	uint8_t spki[2688];	/* up to ML-DSA-87's: 2592 bytes of key and 22 of DER */
	size_t spki_len;
};

/**
 * ms_p11_rv_name() - "CKR_PIN_INCORRECT" for a CK_RV; "CKR_0x..." style text
 * in a static buffer is never used: unknown values give "CKR_(unknown)".
 */
const char *ms_p11_rv_name(unsigned long rv);

/**
 * ms_p11_uri_is() - whether @s is a pkcs11: URI as p11-kit reads one: the
 * scheme in any case (RFC 3986, 3.1), whitespace (space, CR, LF, VT)
 * anywhere ignored, since p11-kit deletes it before parsing. NULL is not.
 */
bool ms_p11_uri_is(const char *s);

/**
 * ms_p11_uri_redact() - @arg (a key or certificate argument) as a message may
 * show it, into @out (@cap bytes, always NUL-terminated when @cap > 0,
 * "..." at the end when cut). A pkcs11: URI is shown as p11-kit reads it
 * (whitespace deleted), with the value of every attribute that may hold a
 * secret (pin-value, pin-source, anything unknown) replaced by "(hidden)";
 * anything else is copied with control bytes as '?'.
 */
void ms_p11_uri_redact(const char *arg, char *out, size_t cap);

/**
 * ms_p11_uri_key_name() - the normalised name of the key a pkcs11: URI
 * @uri names (the agent's key name, src/agent/keyname.c): the URI (scheme
 * in any case, whitespace deleted as p11-kit deletes it) parsed by p11-kit
 * and formatted again without pin-value, pin-source, module-name,
 * module-path and type (modsign always looks for the private key), so that
 * attribute order, percent-encoding and PIN source do not matter. Written
 * to @out (@cap bytes, NUL included); never holds a PIN. Parses untrusted
 * input.
 * Return: MS_OK; MS_E_ARG (not a pkcs11: URI, over 4096 bytes, or one
 * p11-kit does not parse), MS_E_NOSPACE, MS_E_NOMEM. @out is unspecified
 * on failure.
 */
ms_err ms_p11_uri_key_name(const char *uri, char *out, size_t cap) MS_MUST_CHECK;

/* What a context is opened for: it decides which token holds the object. */
enum ms_p11_for {
	MS_P11_FOR_KEY = 1,	/* a private key to sign with (after a login) */
	MS_P11_FOR_CERT,	/* a certificate, read without logging in */
};

/**
 * ms_p11_open() - parse @uri, load the module it names (module-path= or
 * module-name=) or every module registered with p11-kit, and pick the one
 * token that matches the URI's token, slot and library attributes; open a
 * session on it. When several tokens match (a URI without token=, and
 * p11-kit's trust module matches any), each is searched without logging in
 * for the object @what wants: a token that shows it (for a key: the private
 * key, or the public key or certificate with the URI's object= and id=) is
 * taken; a token that cannot hold it (for a key: one that needs no login
 * and shows no such private key, or has no user PIN; for a certificate: one
 * that does not show it) is left out; of the rest, the one left is taken.
 * Two or more left are MS_E_AMBIGUOUS with the candidates listed in the
 * failure detail. No token is ever logged in to here. On failure *@out is
 * still a context (or NULL for MS_E_NOMEM) so that ms_p11_last_fail() can
 * be read; the caller always calls ms_p11_close().
 * Return: MS_OK, MS_E_ARG (not a pkcs11: URI / unparsable), MS_E_NOTFOUND,
 * MS_E_AMBIGUOUS, MS_E_TOKEN, MS_E_NOMEM.
 */
ms_err ms_p11_open(const char *uri, enum ms_p11_for what, struct ms_p11 **out) MS_MUST_CHECK;

/** ms_p11_close() - log out, close sessions, release modules. NULL is a no-op. */
void ms_p11_close(struct ms_p11 *p11);

/** ms_p11_last_fail() - details of the last failure in this context. */
const struct ms_p11_fail *ms_p11_last_fail(const struct ms_p11 *p11);

/**
 * ms_p11_uri_pin_value() / ms_p11_uri_pin_source() - the URI's pin-value or
 * pin-source attribute, NULL if absent. Owned by the context.
 */
const char *ms_p11_uri_pin_value(const struct ms_p11 *p11);
const char *ms_p11_uri_pin_source(const struct ms_p11 *p11);

/** ms_p11_token_label() - the chosen token's label, trimmed; owned by the context. */
const char *ms_p11_token_label(const struct ms_p11 *p11);

/** ms_p11_token_serial() - the chosen token's serial number, trimmed; owned by the context. */
const char *ms_p11_token_serial(const struct ms_p11 *p11);

/**
 * ms_p11_same_token() - whether contexts @a and @b chose one token, through
 * one module or two: CK_TOKEN_INFO's manufacturerID, model and
 * serialNumber equal byte for byte (and the label too when the serial is
 * blank, since then nothing else tells two tokens apart). False when either
 * has no token.
 */
bool ms_p11_same_token(const struct ms_p11 *a, const struct ms_p11 *b);

/**
 * ms_p11_needs_pin() - true when the token requires a login
 * (CKF_LOGIN_REQUIRED) and has no protected authentication path.
 */
bool ms_p11_needs_pin(const struct ms_p11 *p11);

/**
 * ms_p11_pin_is_locked() - whether the token's user PIN is locked: C_Login
 * returned CKR_PIN_LOCKED, or the flags last read say CKF_USER_PIN_LOCKED.
 * Then no PIN was refused: a message says "locked", not "rejected".
 */
bool ms_p11_pin_is_locked(const struct ms_p11 *p11);

/**
 * ms_p11_pin_is_final_try() - whether the token's flags, as last read, say
 * one wrong PIN locks it (CKF_USER_PIN_FINAL_TRY).
 */
bool ms_p11_pin_is_final_try(const struct ms_p11 *p11);

#define MS_P11_LOGIN_ALLOW_FINAL_TRY 1u

/**
 * ms_p11_login() - one C_Login as CKU_USER. @pin NULL logs in through the
 * protected authentication path (PIN pad) or skips the login when the token
 * needs none. Refuses (MS_E_PIN, no C_Login call) when the token flags say
 * CKF_USER_PIN_LOCKED, or CKF_USER_PIN_FINAL_TRY without
 * MS_P11_LOGIN_ALLOW_FINAL_TRY in @flags, and a PIN that is empty or
 * outside the token's [ulMinPinLen, ulMaxPinLen]. A rejected PIN is never
 * retried.
 * The context keeps @pin (not a copy) for context-specific logins of
 * CKA_ALWAYS_AUTHENTICATE keys: it must stay valid until ms_p11_close().
 * Return: MS_OK, MS_E_PIN (rejected, locked, final try, missing), MS_E_TOKEN.
 */
ms_err ms_p11_login(struct ms_p11 *p11, const struct ms_pin *pin, unsigned flags) MS_MUST_CHECK;

/**
 * ms_p11_pin_check() - the token's PIN state, without a login: the token
 * info is read afresh and a CKF_USER_PIN_LOCKED (or, without
 * MS_P11_LOGIN_ALLOW_FINAL_TRY in @flags, CKF_USER_PIN_FINAL_TRY) token is
 * refused as ms_p11_login() would refuse it. For runs of several tokens
 * (--key): a token that cannot log in is refused before any token is
 * offered a PIN. Return: MS_OK (also when no login is needed), MS_E_PIN
 * (ms_p11_last_fail() says why), MS_E_TOKEN, MS_E_ARG.
 */
ms_err ms_p11_pin_check(struct ms_p11 *p11, unsigned flags) MS_MUST_CHECK;

/**
 * ms_p11_key_find() - the one private key (CKO_PRIVATE_KEY) matching the
 * URI's object= (CKA_LABEL) and id= (CKA_ID); an RSA or EC key that can sign.
 * Return: MS_OK, MS_E_NOTFOUND, MS_E_AMBIGUOUS (candidates in the detail),
 * MS_E_UNSUPPORTED (other key type), MS_E_TOKEN.
 */
ms_err ms_p11_key_find(struct ms_p11 *p11, enum ms_p11_key_type *type_out) MS_MUST_CHECK;

/** ms_p11_key_always_authenticate() - CKA_ALWAYS_AUTHENTICATE of the found key. */
bool ms_p11_key_always_authenticate(const struct ms_p11 *p11);

/**
 * ms_p11_key_public() - the public half of the found key (see struct
 * ms_p11_pubkey). Sets none of the has_* flags when the token exposes none.
 * Return: MS_OK, MS_E_TOKEN, MS_E_MALFORMED (attribute over a ceiling).
 */
ms_err ms_p11_key_public(struct ms_p11 *p11, struct ms_p11_pubkey *out) MS_MUST_CHECK;

/**
 * ms_p11_cert_find() - the DER value (CKA_VALUE) of the one certificate
 * object matching the URI's object= and id=. *@der_out is malloc'd and owned
 * by the caller (free()); at most 64 KiB.
 * Return: MS_OK, MS_E_NOTFOUND, MS_E_AMBIGUOUS, MS_E_TOKEN, MS_E_MALFORMED,
 * MS_E_NOMEM.
 */
ms_err ms_p11_cert_find(struct ms_p11 *p11, uint8_t **der_out, size_t *der_len) MS_MUST_CHECK;

/**
 * ms_p11_session_count_max() - how many sessions may sign in parallel on this
 * token: 1 when the token reports ulMaxSessionCount 1 or fewer than two
 * sessions free; otherwise the reported limit capped at @want.
 */
unsigned ms_p11_session_count_max(const struct ms_p11 *p11, unsigned want);

/**
 * ms_p11_token_is_hardware() - whether the token sits in a hardware slot
 * (CKF_HW_SLOT): smart cards and USB HSMs, which usually serialise
 * operations, so parallel sessions gain nothing.
 */
bool ms_p11_token_is_hardware(const struct ms_p11 *p11);

/**
 * ms_p11_session_add() - open one more session on the logged-in token for a
 * parallel signer; its index (1, 2, ...) is returned in *@index. Session 0
 * is the one ms_p11_open() opened. Not thread-safe: call before the signers
 * start.
 * Return: MS_OK, MS_E_TOKEN, MS_E_NOMEM.
 */
ms_err ms_p11_session_add(struct ms_p11 *p11, unsigned *index) MS_MUST_CHECK;

/**
 * ms_p11_sign() - one C_SignInit + C_Sign on session @session with the found
 * key: CKM_RSA_PKCS over @tbs (a DigestInfo) or CKM_ECDSA over @tbs (a
 * digest; one shorter than the curve's order is left-padded with zeros to
 * 32, 48 or 64 bytes, which keeps its value: sign.c says why) or CKM_ML_DSA
 * over @tbs (the message: pure ML-DSA, hedged, the empty context), after a
 * context-specific login when the key needs one. RSA gives
 * modulus-length bytes, EC gives r||s, ML-DSA its set's signature length.
 * Different sessions may be used from
 * different threads at once; the failure of a call on session @session is
 * kept for ms_p11_session_fail().
 * Return: MS_OK, MS_E_TOKEN, MS_E_PIN, MS_E_NOSPACE, MS_E_MALFORMED (token
 * returned a length over @cap or a bad r||s size), MS_E_ARG.
 */
ms_err ms_p11_sign(struct ms_p11 *p11, unsigned session, const uint8_t *tbs, size_t tbs_len,
		   uint8_t *sig, size_t cap, size_t *sig_len) MS_MUST_CHECK;

/**
 * ms_p11_rv_is_session_loss() - whether @rv says a session (or the login it
 * carried) is gone while the token itself still answers:
 * CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED, CKR_USER_NOT_LOGGED_IN.
 */
bool ms_p11_rv_is_session_loss(unsigned long rv);

/**
 * ms_p11_rv_is_token_loss() - whether @rv says the token itself failed or
 * went away, taking its sessions (and perhaps the login) with it:
 * CKR_DEVICE_ERROR, CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT. Whether to
 * open new sessions on it is the caller's policy.
 */
bool ms_p11_rv_is_token_loss(unsigned long rv);

/**
 * ms_p11_sign_parts() - as ms_p11_sign() for an ML-DSA key and a message of
 * any length, the concatenation of @parts (none for the empty message):
 * C_SignUpdate in pieces of at most 1 MiB and C_SignFinal, so that a
 * module crosses to the token without a copy; one C_Sign when it fits in
 * one piece, or when the token refuses C_SignUpdate and the message is one
 * part. A @sig of NULL asks for the length.
 * Return: as ms_p11_sign(); MS_E_ARG for a key other than ML-DSA (its
 * mechanisms are single-part).
 */
ms_err ms_p11_sign_parts(struct ms_p11 *p11, unsigned session, const struct ms_span *parts,
			 size_t n_parts, uint8_t *sig, size_t cap, size_t *sig_len) MS_MUST_CHECK;

/**
 * ms_p11_session_recover() - after a session loss on @session (or a token
 * loss, when the caller's policy says the token may come back): open a new
 * session in its place and, when the token no longer has our login, log in
 * again with the PIN given to ms_p11_login() (never one the token refused).
 * Thread-safe: one recovery at a time; other sessions may go on signing.
 * Return: MS_OK, MS_E_PIN (a PIN was refused), MS_E_TOKEN (the token does
 * not answer: the failure is in ms_p11_session_fail()), MS_E_ARG.
 */
ms_err ms_p11_session_recover(struct ms_p11 *p11, unsigned session) MS_MUST_CHECK;

/** ms_p11_session_fail() - the last failure of ms_p11_sign() on @session. */
const struct ms_p11_fail *ms_p11_session_fail(const struct ms_p11 *p11, unsigned session);

/**
 * ms_p11_lib_versions() - the libraries src/pkcs11 calls and their versions,
 * for `modsign --version`: p11-kit. It tells no version at run time (0.24 has
 * no call and no version macro): the entry is the version pkg-config gave the
 * build (MS_P11_KIT_VERSION), marked built against.
 * @out: @cap entries, filled by the call; NULL asks for the count only.
 * @out_len: the count (set on MS_OK, and on MS_E_NOSPACE).
 * Return: MS_OK; MS_E_NOSPACE when @cap is below the count; MS_E_ARG or
 * MS_E_NOSPACE when a library gives no version or one longer than
 * MS_LIBVER_MAX. On failure the entries are unspecified.
 */
ms_err ms_p11_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len) MS_MUST_CHECK;

#endif
