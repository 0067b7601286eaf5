// SPDX-License-Identifier: GPL-2.0-only
/*
 * Helpers for the src/pkcs11 tests: a private SoftHSM2 token directory per
 * test (removed at exit, also when a CHECK fails), shell commands, openssl
 * as an oracle, and a thin wrapper around the module's function list that
 * counts or alters single replies. Tests only; never a fake token.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "test_p11_fixture.h"

static char fix_dir[64];

static void
fix_cleanup(void)
{
	char cmd[128];

	if (fix_dir[0] == '\0') {
		return;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fix_dir);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot remove %s\n", fix_dir);
	}
	fix_dir[0] = '\0';
}

int
p11t_run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int n, st;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	CHECK(n > 0 && (size_t)n < sizeof(cmd));
	fflush(NULL);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st)) {
		return -1;
	}
	return WEXITSTATUS(st);
}

const char *
p11t_dir(void)
{
	return fix_dir;
}

void
p11t_token_add(const char *label, const char *pin, const char *key)
{
	CHECK(p11t_run("softhsm2-util --init-token --free --label '%s' --so-pin 5678 --pin '%s' "
		       ">'%s/init.out' 2>&1", label, pin, fix_dir) == 0);
	if (key == NULL) {
		return;
	}
	/* "... reassigned to slot N": the new token, even beside one of its label. */
	CHECK(p11t_run("softhsm2-util --import '%s' --slot \"$(sed -n 's/.*reassigned to "
		       "slot //p' '%s/init.out')\" --label '%s' --id 01 --pin '%s' "
		       ">/dev/null 2>&1", ms_test_data(key), fix_dir, "rsa2048", pin) == 0);
}

/*
 * A temp directory holding a fresh token "modsign-test" (user PIN 1234)
 * made by tests/lib/mktoken.sh, with SOFTHSM2_CONF pointing at it.
 * Skips the test when SoftHSM2 is not installed.
 */
void
p11t_token(void)
{
	struct stat st;
	char conf[128];

	if (stat(P11T_MODULE, &st) != 0 || p11t_run("command -v softhsm2-util >/dev/null") != 0 ||
	    p11t_run("command -v pkcs11-tool >/dev/null") != 0) {
		MS_SKIP("SoftHSM2 (" P11T_MODULE ", softhsm2-util, pkcs11-tool) not installed");
	}
	strcpy(fix_dir, "/tmp/ms_p11_XXXXXX");
	CHECK(mkdtemp(fix_dir) != NULL);
	CHECK(atexit(fix_cleanup) == 0);
	snprintf(conf, sizeof(conf), "%s/softhsm2.conf", fix_dir);
	CHECK(setenv("SOFTHSM2_CONF", conf, 1) == 0);
	CHECK(p11t_run("sh '%s' '%s' >/dev/null 2>&1", ms_test_data("../lib/mktoken.sh"),
		       fix_dir) == 0);
}

/* Ends a test that passed; a failed CHECK cleans up through atexit. */
void
p11t_done(struct ms_p11 *p11)
{
	if (p11 != NULL) {
		p11t_wrap_remove(p11);
	}
	ms_p11_close(p11);
	fix_cleanup();
}

struct ms_p11 *
p11t_open(const char *uri)
{
	struct ms_p11 *p11 = NULL;
	ms_err err = ms_p11_open(uri, MS_P11_FOR_KEY, &p11);

	if (err != MS_OK) {
		fprintf(stderr, "ms_p11_open: %s: %s\n", ms_err_str(err),
			ms_p11_last_fail(p11)->detail);
	}
	CHECK_ERR(err, MS_OK);
	return p11;
}

void
p11t_pin(struct ms_pin *pin, const char *value)
{
	memset(pin, 0, sizeof(*pin));
	CHECK(strlen(value) <= MS_PIN_MAX);
	memcpy(pin->buf, value, strlen(value));
	pin->len = strlen(value);
	pin->source = "test";
	pin->is_set = true;
}

/* Opens @uri and logs in with the right PIN; @pin must outlive the context. */
struct ms_p11 *
p11t_open_login(const char *uri, struct ms_pin *pin)
{
	struct ms_p11 *p11 = p11t_open(uri);

	p11t_pin(pin, P11T_PIN);
	CHECK_ERR(ms_p11_login(p11, pin, 0), MS_OK);
	return p11;
}

/* p11t_open_login(), then the key @uri names, which must be of type @want. */
struct ms_p11 *
p11t_open_key(const char *uri, struct ms_pin *pin, enum ms_p11_key_type want)
{
	struct ms_p11 *p11 = p11t_open_login(uri, pin);
	enum ms_p11_key_type type = 0;

	CHECK_ERR(ms_p11_key_find(p11, &type), MS_OK);
	CHECK(type == want);
	return p11;
}

/* Writes @len bytes to @name in the token directory; returns the path. */
const char *
p11t_write(const char *name, const uint8_t *p, size_t len)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fix_dir, name);
	f = fopen(path, "wb");
	CHECK(f != NULL);
	CHECK(fwrite(p, 1, len, f) == len);
	CHECK(fclose(f) == 0);
	return path;
}

/*
 * The wrapper: a copy of the module's function list whose entries forward
 * to the originals, installed as the context's module. Tests choose what
 * one entry alters through struct p11t_wrap.
 */
struct p11t_wrap p11t_wrap;
static CK_FUNCTION_LIST wrap_list;
static CK_FUNCTION_LIST *wrap_real;

static CK_RV
wrap_login(CK_SESSION_HANDLE h, CK_USER_TYPE user, CK_UTF8CHAR_PTR pin, CK_ULONG len)
{
	p11t_wrap.n_login++;
	return wrap_real->C_Login(h, user, pin, len);
}

static CK_RV
wrap_token_info(CK_SLOT_ID slot, CK_TOKEN_INFO_PTR info)
{
	CK_RV rv = wrap_real->C_GetTokenInfo(slot, info);

	if (rv == CKR_OK) {
		info->flags |= p11t_wrap.add_token_flags;
		info->flags &= ~p11t_wrap.del_token_flags;
		if (p11t_wrap.max_sessions != 0) {
			info->ulMaxSessionCount = p11t_wrap.max_sessions;
		}
		if (p11t_wrap.set_min_pin_len) {
			info->ulMinPinLen = p11t_wrap.min_pin_len;
		}
		if (p11t_wrap.set_max_pin_len) {
			info->ulMaxPinLen = p11t_wrap.max_pin_len;
		}
	}
	return rv;
}

static CK_RV
wrap_attr(CK_SESSION_HANDLE h, CK_OBJECT_HANDLE obj, CK_ATTRIBUTE_PTR t, CK_ULONG n)
{
	CK_RV rv;

	if (n == 1 && t[0].type == p11t_wrap.attr_type && p11t_wrap.attr_mode != 0) {
		if (t[0].pValue == NULL && p11t_wrap.attr_mode == P11T_ATTR_HUGE) {
			t[0].ulValueLen = 1UL << 40;
			return CKR_OK;
		}
		if (t[0].pValue == NULL && p11t_wrap.attr_mode == P11T_ATTR_UNAVAILABLE) {
			t[0].ulValueLen = CK_UNAVAILABLE_INFORMATION;
			return CKR_OK;
		}
		if (t[0].pValue != NULL && p11t_wrap.attr_mode == P11T_ATTR_GROWS) {
			t[0].ulValueLen += 1;
			return CKR_BUFFER_TOO_SMALL;
		}
	}
	rv = wrap_real->C_GetAttributeValue(h, obj, t, n);
	return rv;
}

static CK_RV
wrap_sign(CK_SESSION_HANDLE h, CK_BYTE_PTR data, CK_ULONG len, CK_BYTE_PTR sig,
	  CK_ULONG_PTR sig_len)
{
	CK_ULONG cap = *sig_len;
	CK_RV rv = wrap_real->C_Sign(h, data, len, sig, sig_len);

	p11t_wrap.n_sign++;
	p11t_wrap.sign_data_len = 0;
	if (len <= sizeof(p11t_wrap.sign_data)) {
		memcpy(p11t_wrap.sign_data, data, len);
		p11t_wrap.sign_data_len = len;
	}
	if (rv == CKR_OK && p11t_wrap.sign_len_add != 0) {
		*sig_len = cap + p11t_wrap.sign_len_add;	/* claims more than it may */
	}
	return rv;
}

void
p11t_wrap_install(struct ms_p11 *p11)
{
	memset(&p11t_wrap, 0, sizeof(p11t_wrap));
	wrap_real = p11->fl;
	wrap_list = *p11->fl;
	wrap_list.C_Login = wrap_login;
	wrap_list.C_GetTokenInfo = wrap_token_info;
	wrap_list.C_GetAttributeValue = wrap_attr;
	wrap_list.C_Sign = wrap_sign;
	p11->fl = &wrap_list;
}

/* Restores the real list so that ms_p11_close() finalises what it loaded. */
void
p11t_wrap_remove(struct ms_p11 *p11)
{
	if (wrap_real != NULL) {
		p11->fl = wrap_real;
		wrap_real = NULL;
	}
}
