// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the token layer (src/pkcs11) against a PKCS#11 module whose
 * every answer comes from the fuzzer's bytes: return values, slot and token
 * info, object handles, attribute lengths and contents (CKA_MODULUS with
 * leading zeros, EC parameters, certificates), session states, signature
 * lengths and bytes. Drives what a run does: choose the token (several
 * slots: the search without a login), log in, find the key and its public
 * half, sign, read a certificate, count and add sessions, recover one,
 * close.
 *
 * Input: a config byte (bit 0: the key is EC; bit 1: the token says it is
 * SoftHSM2; bits 2-3: which URI; bit 4: MS_P11_LOGIN_ALLOW_FINAL_TRY;
 * bits 5-7: 0 an 8-byte PIN, n one of n - 1 bytes), then the answers, read in the order the calls
 * come. A zero byte is always the ordinary, successful answer, so an input
 * of zeros walks the whole path; a byte that runs out makes every later call
 * fail with CKR_GENERAL_ERROR. The fake writes only inside the buffers it is
 * given; the lengths it reports are whatever the bytes say.
 *
 * Oracles: lengths the layer hands back are within their buffers and agree
 * with the key; a PIN is never offered to a token that was not chosen, never
 * again after the token refused it, never empty or shorter than the token's
 * ulMinPinLen; failure details are NUL-terminated.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pkcs11/p11_internal.h"

/* The input, read as the calls come. */
static const uint8_t *in_p;
static size_t in_len;
static bool in_out;		/* ran out: every call fails from here */

static uint8_t cfg;
#define CFG_EC 0x01
#define CFG_SOFTHSM 0x02
#define CFG_FINAL_TRY 0x10

/* What the oracles need to know about the calls made. */
static struct {
	CK_SLOT_ID session_slot[256];	/* slot of each handle we gave out (low byte) */
	bool pin_refused;		/* a C_Login with the PIN was answered with a PIN error */
	CK_ULONG min_pin_len;		/* the last ulMinPinLen reported */
	bool pap;			/* the last token info said PROTECTED_AUTHENTICATION_PATH */
	bool pin_sent;			/* a C_Login carried the PIN: the next two are set */
	CK_ULONG pin_min_len;		/* min_pin_len and pap when the PIN first went out: */
	bool pin_pap;			/* a login again after a session loss resends it */
} seen;

static uint8_t
take(void)
{
	if (in_len == 0) {
		in_out = true;
		return 0;
	}
	in_len--;
	return *in_p++;
}

static CK_ULONG
take_ulong(void)
{
	CK_ULONG v = 0;

	for (size_t i = 0; i < sizeof(v); i++) {
		v = (v << 8) | take();
	}
	return v;
}

/* Fills @p with @n bytes of input (zeros once it runs out). */
static void
take_bytes(void *p, size_t n)
{
	uint8_t *d = p;

	for (size_t i = 0; i < n; i++) {
		d[i] = take();
	}
}

/* A return value: 0 is CKR_OK; others pick from what tokens say. */
static CK_RV
take_rv(void)
{
	static const CK_RV rvs[] = {
		CKR_GENERAL_ERROR, CKR_DEVICE_ERROR, CKR_DEVICE_REMOVED, CKR_TOKEN_NOT_PRESENT,
		CKR_SESSION_HANDLE_INVALID, CKR_SESSION_CLOSED, CKR_USER_NOT_LOGGED_IN,
		CKR_PIN_INCORRECT, CKR_PIN_LOCKED, CKR_PIN_LEN_RANGE, CKR_USER_ALREADY_LOGGED_IN,
		CKR_BUFFER_TOO_SMALL, CKR_ATTRIBUTE_TYPE_INVALID, CKR_ATTRIBUTE_SENSITIVE,
		CKR_KEY_HANDLE_INVALID, CKR_OBJECT_HANDLE_INVALID, CKR_FUNCTION_FAILED,
		CKR_OPERATION_ACTIVE, CKR_SESSION_COUNT, CKR_ARGUMENTS_BAD, CKR_VENDOR_DEFINED + 1,
	};
	uint8_t b = take();

	if (in_out) {
		return CKR_GENERAL_ERROR;
	}
	if (b < 0x80) {
		return CKR_OK;
	}
	return rvs[b % (sizeof(rvs) / sizeof(rvs[0]))];
}

/* A blank-padded PKCS#11 text field: @text, or input bytes when @b says. */
static void
put_field(CK_UTF8CHAR *f, size_t n, const char *text, uint8_t b)
{
	memset(f, ' ', n);
	if (b == 0) {
		memcpy(f, text, strlen(text) < n ? strlen(text) : n);
	} else {
		take_bytes(f, n);
	}
}

static CK_RV
f_initialize(CK_VOID_PTR a)
{
	(void)a;
	return CKR_OK;
}

static CK_RV
f_finalize(CK_VOID_PTR r)
{
	(void)r;
	return CKR_OK;
}

static CK_RV
f_get_info(CK_INFO_PTR i)
{
	CK_RV rv = take_rv();

	memset(i, 0, sizeof(*i));
	put_field(i->manufacturerID, sizeof(i->manufacturerID), "fuzz", take());
	put_field(i->libraryDescription, sizeof(i->libraryDescription), "fuzz token", take());
	return rv;
}

/* Slots: 0 gives one slot (id 1); n gives n slots; 0xff claims more than asked. */
static CK_RV
f_get_slot_list(CK_BBOOL present, CK_SLOT_ID_PTR list, CK_ULONG_PTR n)
{
	CK_RV rv = take_rv();
	uint8_t b = take();
	CK_ULONG have = b == 0 ? 1 : b == 0xff ? take_ulong() : (CK_ULONG)(b % 9);

	(void)present;
	if (rv != CKR_OK) {
		return rv;
	}
	if (list != NULL) {
		for (CK_ULONG i = 0; i < have && i < *n; i++) {
			list[i] = i + 1;
		}
	}
	*n = have;
	return CKR_OK;
}

static CK_RV
f_get_slot_info(CK_SLOT_ID s, CK_SLOT_INFO_PTR i)
{
	CK_RV rv = take_rv();
	uint8_t b = take();

	(void)s;
	memset(i, 0, sizeof(*i));
	put_field(i->slotDescription, sizeof(i->slotDescription), "fuzz slot", 0);
	put_field(i->manufacturerID, sizeof(i->manufacturerID), "fuzz", 0);
	i->flags = CKF_TOKEN_PRESENT | (b == 0 ? 0 : take_ulong());
	return rv;
}

static CK_RV
f_get_token_info(CK_SLOT_ID s, CK_TOKEN_INFO_PTR i)
{
	CK_RV rv = take_rv();
	uint8_t b = take();

	(void)s;
	memset(i, 0, sizeof(*i));
	put_field(i->label, sizeof(i->label), "t", b & 1);
	put_field(i->manufacturerID, sizeof(i->manufacturerID),
		  (cfg & CFG_SOFTHSM) != 0 ? "SoftHSM project" : "fuzz", b & 2);
	put_field(i->model, sizeof(i->model), "fuzz", 0);
	put_field(i->serialNumber, sizeof(i->serialNumber), "1", 0);
	i->flags = CKF_TOKEN_INITIALIZED | CKF_LOGIN_REQUIRED | CKF_USER_PIN_INITIALIZED;
	i->ulMinPinLen = 4;
	i->ulMaxPinLen = 64;
	i->ulMaxSessionCount = CK_EFFECTIVELY_INFINITE;
	if ((b & 4) != 0) {
		i->flags = take_ulong();
	}
	if ((b & 8) != 0) {
		i->ulMinPinLen = take_ulong();
	}
	if ((b & 16) != 0) {
		i->ulMaxSessionCount = take_ulong();
		i->ulSessionCount = take_ulong();
	}
	if (rv == CKR_OK) {
		seen.min_pin_len = i->ulMinPinLen;
		seen.pap = (i->flags & CKF_PROTECTED_AUTHENTICATION_PATH) != 0;
	}
	return rv;
}

static CK_RV
f_open_session(CK_SLOT_ID s, CK_FLAGS f, CK_VOID_PTR a, CK_NOTIFY cb, CK_SESSION_HANDLE_PTR h)
{
	CK_RV rv = take_rv();
	CK_SESSION_HANDLE handle = 1 + take();

	(void)f;
	(void)a;
	(void)cb;
	if (rv == CKR_OK) {
		*h = handle;
		seen.session_slot[handle & 0xff] = s;
	}
	return rv;
}

static CK_RV
f_close_session(CK_SESSION_HANDLE h)
{
	(void)h;
	return take_rv();
}

static CK_RV
f_get_session_info(CK_SESSION_HANDLE h, CK_SESSION_INFO_PTR i)
{
	CK_RV rv = take_rv();

	memset(i, 0, sizeof(*i));
	i->slotID = seen.session_slot[h & 0xff];
	i->state = take() % 5;
	return rv;
}

/* The PIN oracles: the chosen token only, never refused before, never short. */
static struct ms_p11 *g_p11;

static CK_RV
f_login(CK_SESSION_HANDLE h, CK_USER_TYPE user, CK_UTF8CHAR_PTR pin, CK_ULONG len)
{
	CK_RV rv;

	if (g_p11 == NULL || !g_p11->has_token || seen.session_slot[h & 0xff] != g_p11->slot) {
		fuzz_die("C_Login on a token that was not chosen");
	}
	if (pin != NULL && seen.pin_refused) {
		fuzz_die("C_Login with a PIN the token refused before");
	}
	/*
	 * Checked against the token info that came before the PIN first went
	 * out (the one ms_p11_login read): a later C_GetTokenInfo may say
	 * another ulMinPinLen, which a real token never does.
	 */
	if (pin != NULL && user == CKU_USER && !seen.pin_sent) {
		seen.pin_sent = true;
		seen.pin_min_len = seen.min_pin_len;
		seen.pin_pap = seen.pap;
	}
	if (pin != NULL && user == CKU_USER && !seen.pin_pap &&
	    (len == 0 || (seen.pin_min_len != CK_UNAVAILABLE_INFORMATION &&
			  len < seen.pin_min_len))) {
		fuzz_die("C_Login with an empty or too short PIN");
	}
	rv = take_rv();
	if (pin != NULL && ms_p11i_rv_is_pin_error(rv)) {
		seen.pin_refused = true;
	}
	return rv;
}

static CK_RV
f_logout(CK_SESSION_HANDLE h)
{
	(void)h;
	return take_rv();
}

static CK_RV
f_find_init(CK_SESSION_HANDLE h, CK_ATTRIBUTE_PTR t, CK_ULONG n)
{
	(void)h;
	(void)t;
	(void)n;
	return take_rv();
}

/* Objects: 0 gives one; n gives n; 0xff claims more than asked for. */
static CK_RV
f_find(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE_PTR o, CK_ULONG max, CK_ULONG_PTR n)
{
	CK_RV rv = take_rv();
	uint8_t b = take();
	CK_ULONG have = b == 0 ? 1 : b == 0xff ? max + 1 + take() : (CK_ULONG)(b % 20);

	(void)h;
	for (CK_ULONG i = 0; i < have && i < max; i++) {
		o[i] = 100 + i;
	}
	*n = have;
	return rv;
}

static CK_RV
f_find_final(CK_SESSION_HANDLE h)
{
	(void)h;
	return take_rv();
}

/* The ordinary value of an attribute, for a zero mode byte. */
static size_t
canned(CK_ATTRIBUTE_TYPE type, uint8_t *out, size_t cap)
{
	static const uint8_t p256[] = { 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 };
	uint8_t v[600];
	size_t n = 0;
	CK_ULONG ul;

	memset(v, 0, sizeof(v));
	switch (type) {
	case CKA_KEY_TYPE:
		ul = (cfg & CFG_EC) != 0 ? CKK_EC : CKK_RSA;
		memcpy(v, &ul, sizeof(ul));
		n = sizeof(ul);
		break;
	case CKA_SIGN:
		v[0] = CK_TRUE;
		n = 1;
		break;
	case CKA_ALWAYS_AUTHENTICATE:
		v[0] = CK_FALSE;
		n = 1;
		break;
	case CKA_ID:
		v[0] = 1;
		n = 1;
		break;
	case CKA_LABEL:
		v[0] = 'k';
		n = 1;
		break;
	case CKA_MODULUS:
		v[0] = 0x80;
		n = 256;
		break;
	case CKA_PUBLIC_EXPONENT:
		v[0] = 1;
		v[2] = 1;
		n = 3;
		break;
	case CKA_EC_PARAMS:
		memcpy(v, p256, sizeof(p256));
		n = sizeof(p256);
		break;
	case CKA_EC_POINT:
		v[0] = 0x04;
		v[1] = 0x41;
		v[2] = 0x04;
		n = 67;
		break;
	case CKA_VALUE:
		v[0] = 0x30;
		v[1] = 0x82;
		v[2] = 0x01;
		v[3] = 0x00;
		n = 260;
		break;
	default:
		return SIZE_MAX;	/* CKR_ATTRIBUTE_TYPE_INVALID */
	}
	if (out != NULL) {
		memcpy(out, v, n < cap ? n : cap);
	}
	return n;
}

/*
 * Each attribute: a mode byte. 0: the ordinary value; 1: no such attribute;
 * 2: sensitive; 3: CK_UNAVAILABLE_INFORMATION; 4: a length and content from
 * the input; 5: a length of 2^40; 6: a length that changes between the two
 * calls; 7: CKR_BUFFER_TOO_SMALL on the fetch.
 */
static CK_RV
f_get_attr(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, CK_ULONG n)
{
	CK_RV rv = take_rv();

	(void)h;
	(void)o;
	for (CK_ULONG i = 0; i < n; i++) {
		uint8_t mode = take() % 8;
		size_t len;

		switch (mode) {
		case 0:
			len = canned(t[i].type, NULL, 0);
			if (len == SIZE_MAX) {
				t[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
				rv = CKR_ATTRIBUTE_TYPE_INVALID;
			} else if (t[i].pValue == NULL) {
				t[i].ulValueLen = len;
			} else {
				canned(t[i].type, t[i].pValue, t[i].ulValueLen);
				t[i].ulValueLen = len;
			}
			break;
		case 1:
			t[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			rv = CKR_ATTRIBUTE_TYPE_INVALID;
			break;
		case 2:
			t[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			rv = CKR_ATTRIBUTE_SENSITIVE;
			break;
		case 3:
			t[i].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			break;
		case 4:
			len = ((size_t)take() << 8) | take();
			if (t[i].pValue != NULL) {
				take_bytes(t[i].pValue, len < t[i].ulValueLen ? len : t[i].ulValueLen);
			}
			t[i].ulValueLen = len;
			break;
		case 5:
			t[i].ulValueLen = (CK_ULONG)1 << 40;
			break;
		case 6:
			t[i].ulValueLen = t[i].pValue == NULL ? take() : t[i].ulValueLen + 1 + take();
			break;
		default:
			if (t[i].pValue != NULL) {
				t[i].ulValueLen += 1;
				rv = CKR_BUFFER_TOO_SMALL;
			} else {
				t[i].ulValueLen = take();
			}
			break;
		}
	}
	return rv;
}

static CK_RV
f_copy(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE o, CK_ATTRIBUTE_PTR t, CK_ULONG n,
       CK_OBJECT_HANDLE_PTR c)
{
	CK_RV rv = take_rv();

	(void)h;
	(void)o;
	(void)t;
	(void)n;
	if (rv == CKR_OK) {
		*c = 200 + take();
	}
	return rv;
}

static CK_RV
f_sign_init(CK_SESSION_HANDLE h, CK_MECHANISM_PTR m, CK_OBJECT_HANDLE k)
{
	(void)h;
	(void)m;
	(void)k;
	return take_rv();
}

/* The signature: 0 gives the key's length; else a length from the input. */
static CK_RV
f_sign(CK_SESSION_HANDLE h, CK_BYTE_PTR d, CK_ULONG dn, CK_BYTE_PTR o, CK_ULONG_PTR on)
{
	CK_RV rv = take_rv();
	uint8_t b = take();
	CK_ULONG len = (cfg & CFG_EC) != 0 ? 64 : 256;

	(void)h;
	(void)d;
	(void)dn;
	if (b != 0) {
		len = b == 0xff ? take_ulong() : ((CK_ULONG)take() << 8) | take();
	}
	if (rv == CKR_OK && o != NULL) {
		take_bytes(o, len < *on ? len : *on);
	}
	*on = len;
	return rv;
}

static CK_FUNCTION_LIST fake = {
	.version = { 2, 40 },
	.C_Initialize = f_initialize,
	.C_Finalize = f_finalize,
	.C_GetInfo = f_get_info,
	.C_GetSlotList = f_get_slot_list,
	.C_GetSlotInfo = f_get_slot_info,
	.C_GetTokenInfo = f_get_token_info,
	.C_OpenSession = f_open_session,
	.C_CloseSession = f_close_session,
	.C_GetSessionInfo = f_get_session_info,
	.C_Login = f_login,
	.C_Logout = f_logout,
	.C_FindObjectsInit = f_find_init,
	.C_FindObjects = f_find,
	.C_FindObjectsFinal = f_find_final,
	.C_GetAttributeValue = f_get_attr,
	.C_CopyObject = f_copy,
	.C_SignInit = f_sign_init,
	.C_Sign = f_sign,
};

static void
check_detail(const struct ms_p11_fail *f)
{
	if (strnlen(f->detail, sizeof(f->detail)) == sizeof(f->detail)) {
		fuzz_die("failure detail not NUL-terminated");
	}
}

/* What a run does with the key once the token is chosen. */
static void
use_token(struct ms_p11 *p11, const struct ms_pin *pin)
{
	static const uint8_t tbs[51] = { 0x30, 0x31 };
	struct ms_p11_pubkey pub;
	enum ms_p11_key_type type;
	uint8_t sig[1100];
	uint8_t *der = NULL;
	size_t sig_len = 0, der_len = 0;
	unsigned idx = 0, n_lanes;

	if (ms_p11_login(p11, pin, (cfg & CFG_FINAL_TRY) != 0 ? MS_P11_LOGIN_ALLOW_FINAL_TRY : 0) !=
	    MS_OK) {
		return;
	}
	if (ms_p11_key_find(p11, &type) != MS_OK) {
		return;
	}
	if (ms_p11_key_public(p11, &pub) == MS_OK &&
	    (pub.modulus_len > sizeof(pub.modulus) || pub.exponent_len > sizeof(pub.exponent) ||
	     pub.ec_params_len > sizeof(pub.ec_params) || pub.ec_point_len > sizeof(pub.ec_point) ||
	     pub.spki_len > sizeof(pub.spki) || (pub.has_rsa && pub.modulus_len == 0))) {
		fuzz_die("public half over its buffer");
	}
	n_lanes = ms_p11_session_count_max(p11, 8);
	if (n_lanes == 0 || n_lanes > 8) {
		fuzz_die("session count out of 1..8");
	}
	if (ms_p11_session_add(p11, &idx) != MS_OK) {
		idx = 0;
	}
	for (unsigned i = 0; i < 3; i++) {
		unsigned s = i == 1 ? idx : 0;
		size_t cap = i == 2 ? 10 : sizeof(sig);

		sig_len = SIZE_MAX;
		if (ms_p11_sign(p11, s, tbs, type == MS_P11_KEY_EC ? 32 : sizeof(tbs), sig, cap,
				&sig_len) == MS_OK) {
			if (sig_len == 0 || sig_len > cap) {
				fuzz_die("signature length over the buffer");
			}
			if (p11->key_sig_len != 0 && sig_len != p11->key_sig_len) {
				fuzz_die("signature length is not the key's");
			}
		} else if (ms_p11_rv_is_session_loss(ms_p11_session_fail(p11, s)->rv) &&
			   ms_p11_session_recover(p11, s) != MS_OK) {
			check_detail(ms_p11_session_fail(p11, s));
		}
		check_detail(ms_p11_session_fail(p11, s));
	}
	if (ms_p11_cert_find(p11, &der, &der_len) == MS_OK &&
	    (der_len == 0 || der_len > MS_P11I_CERT_MAX)) {
		fuzz_die("certificate length out of bounds");
	}
	free(der);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const uris[] = {
		"pkcs11:token=t;object=k;type=private",
		"pkcs11:object=k;type=private",
		"pkcs11:id=%01",
		"pkcs11:token=t;object=k;type=cert",
	};
	struct ms_p11 *p11 = calloc(1, sizeof(*p11));
	struct ms_pin pin;
	uint8_t c;

	if (p11 == NULL || size == 0) {
		free(p11);
		return 0;
	}
	in_p = data;
	in_len = size;
	in_out = false;
	memset(&seen, 0, sizeof(seen));
	c = take();
	cfg = c;
	memset(&pin, 0, sizeof(pin));
	memcpy(pin.buf, "12345678", 8);
	pin.len = (c >> 5) == 0 ? 8 : (size_t)(c >> 5) - 1;	/* empty and short PINs too */
	pin.source = "fuzz";
	pin.is_set = true;
	/* As ms_p11_open() sets up its context, with our module as the one loaded. */
	pthread_mutex_init(&p11->recover_lock, NULL);
	atomic_init(&p11->pin_rejected, false);
	ms_p11i_fail_clear(&p11->fail);
	for (size_t i = 0; i < MS_P11I_SESSIONS_MAX; i++) {
		ms_p11i_fail_clear(&p11->sess[i].fail);
	}
	p11->open_for = ((c >> 2) & 3) == 3 ? MS_P11_FOR_CERT : MS_P11_FOR_KEY;
	if (ms_p11i_uri_parse(p11, uris[(c >> 2) & 3]) != MS_OK) {
		fuzz_die("a fixed URI does not parse");
	}
	p11->mods[0].fl = &fake;
	p11->n_mods = 1;
	snprintf(p11->mods[0].name, sizeof(p11->mods[0].name), "fuzz");
	g_p11 = p11;
	if (ms_p11i_token_select(p11) == MS_OK) {
		if (p11->open_for == MS_P11_FOR_KEY) {
			use_token(p11, &pin);
		} else {
			uint8_t *der = NULL;
			size_t len = 0;

			if (ms_p11_cert_find(p11, &der, &len) == MS_OK && len > MS_P11I_CERT_MAX) {
				fuzz_die("certificate length out of bounds");
			}
			free(der);
		}
	}
	check_detail(ms_p11_last_fail(p11));
	/* Our module is not p11-kit's to release. */
	p11->n_mods = 0;
	ms_p11_close(p11);
	g_p11 = NULL;
	return 0;
}
