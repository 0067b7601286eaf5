// SPDX-License-Identifier: GPL-2.0-only
/*
 * The token context: loading the PKCS#11 modules a URI selects through
 * p11-kit (the one at module-path=, the registered ones called
 * module-name=, or all registered), open from a URI, accessors, and an
 * orderly close.
 *
 * Every module is loaded managed (flags 0). For a managed module p11-kit
 * calls C_Initialize with CKF_OS_LOCKING_OK set (and its own mutex
 * callbacks), so the module must be safe for our parallel signers; checked
 * with p11-kit 0.24.1 through a logging wrapper module. An unmanaged load
 * would pass NULL, which promises single-threaded use.
 */
#include <stdlib.h>
#include <string.h>

#include "p11_internal.h"

/* A display name: p11-kit's config name, else the file's basename. */
static void
module_name(struct ms_p11i_module *m)
{
	char *name = p11_kit_module_get_name(m->fl);
	char *file = NULL;
	const char *show = name;

	if (show == NULL) {
		file = p11_kit_module_get_filename(m->fl);
		show = file;
		if (file != NULL && strrchr(file, '/') != NULL) {
			show = strrchr(file, '/') + 1;
		}
	}
	ms_p11i_text_clean(m->name, sizeof(m->name), (const unsigned char *)(show ? show : "?"),
			   strlen(show ? show : "?"));
	free(name);
	free(file);
}

/*
 * module-name= (RFC 7512, 2.3) names a library "without the path and the
 * file extension". p11-kit names registered modules after their config file
 * ("softhsm2" for softhsm2.module), so both forms are accepted: the config
 * name, or the file basename with or without ".so" and a leading "lib".
 * Comparisons are case-sensitive, as file names are.
 */
static bool
module_name_matches(CK_FUNCTION_LIST *fl, const char *want)
{
	char *name = p11_kit_module_get_name(fl);
	char *file = p11_kit_module_get_filename(fl);
	const char *base = NULL;
	bool is_match = false;

	if (name != NULL && strcmp(name, want) == 0) {
		is_match = true;
	}
	if (!is_match && file != NULL) {
		size_t len;

		base = strrchr(file, '/') != NULL ? strrchr(file, '/') + 1 : file;
		len = strlen(base);
		if (len > 3 && strcmp(base + len - 3, ".so") == 0) {
			len -= 3;
		}
		if (strcmp(base, want) == 0 ||
		    (strlen(want) == len && strncmp(base, want, len) == 0) ||
		    (len > 3 && strncmp(base, "lib", 3) == 0 && strlen(want) == len - 3 &&
		     strncmp(base + 3, want, len - 3) == 0)) {
			is_match = true;
		}
	}
	free(name);
	free(file);
	return is_match;
}

static ms_err
load_path(struct ms_p11 *p11, const char *path)
{
	struct ms_p11i_module *m = &p11->mods[0];
	CK_RV rv;

	m->fl = p11_kit_module_load(path, 0);
	if (m->fl == NULL) {
		const char *msg = p11_kit_message();
		char text[160];

		ms_p11i_text_clean(text, sizeof(text), (const unsigned char *)path, strlen(path));
		ms_p11i_fail_set(&p11->fail, "p11_kit_module_load", CKR_OK,
				 "cannot load module-path \"%s\": %s", text,
				 msg != NULL ? msg : "unknown error");
		return MS_E_NOTFOUND;
	}
	p11->n_mods = 1;
	module_name(m);
	rv = p11_kit_module_initialize(m->fl);
	if (rv != CKR_OK) {
		ms_p11i_fail_set(&p11->fail, "C_Initialize", rv, "module %s", m->name);
		return MS_E_TOKEN;
	}
	m->is_init = true;
	return MS_OK;
}

static ms_err
load_named(struct ms_p11 *p11, const char *want)
{
	char text[160];
	CK_RV rv;

	p11->list = p11_kit_modules_load(NULL, 0);
	if (p11->list == NULL) {
		ms_p11i_fail_set(&p11->fail, "p11_kit_modules_load", CKR_OK, "%s",
				 p11_kit_message() != NULL ? p11_kit_message() : "failed");
		return MS_E_TOKEN;
	}
	/* Only the matching modules are initialised: the others never run. */
	for (size_t i = 0; p11->list[i] != NULL; i++) {
		struct ms_p11i_module *m = NULL;

		if (!module_name_matches(p11->list[i], want)) {
			continue;
		}
		if (p11->n_mods == MS_P11I_MODULES_MAX) {
			ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "more than %d modules",
					 MS_P11I_MODULES_MAX);
			return MS_E_TOKEN;
		}
		m = &p11->mods[p11->n_mods];
		m->fl = p11->list[i];
		p11->n_mods++;
		module_name(m);
		rv = p11_kit_module_initialize(m->fl);
		if (rv != CKR_OK) {
			ms_p11i_fail_set(&p11->fail, "C_Initialize", rv, "module %s", m->name);
			return MS_E_TOKEN;
		}
		m->is_init = true;
	}
	if (p11->n_mods == 0) {
		ms_p11i_text_clean(text, sizeof(text), (const unsigned char *)want, strlen(want));
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
				 "no module registered with p11-kit is called \"%s\"", text);
		return MS_E_NOTFOUND;
	}
	return MS_OK;
}

/* Every registered module; p11-kit drops those that fail to initialise. */
static ms_err
load_all(struct ms_p11 *p11)
{
	p11->list = p11_kit_modules_load_and_initialize(0);
	if (p11->list == NULL) {
		ms_p11i_fail_set(&p11->fail, "p11_kit_modules_load_and_initialize", CKR_OK, "%s",
				 p11_kit_message() != NULL ? p11_kit_message() : "failed");
		return MS_E_TOKEN;
	}
	p11->list_all_init = true;
	for (size_t i = 0; p11->list[i] != NULL; i++) {
		if (p11->n_mods == MS_P11I_MODULES_MAX) {
			ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "more than %d modules",
					 MS_P11I_MODULES_MAX);
			return MS_E_TOKEN;
		}
		p11->mods[p11->n_mods].fl = p11->list[i];
		module_name(&p11->mods[p11->n_mods]);
		p11->n_mods++;
	}
	if (p11->n_mods == 0) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK,
				 "no PKCS#11 module is registered with p11-kit");
		return MS_E_NOTFOUND;
	}
	return MS_OK;
}

static ms_err
modules_load(struct ms_p11 *p11)
{
	const char *path = p11_kit_uri_get_module_path(p11->uri);
	const char *name = p11_kit_uri_get_module_name(p11->uri);

	if (path != NULL) {
		/* module-path wins over module-name (RFC 7512, 2.3). */
		return load_path(p11, path);
	}
	if (name != NULL) {
		return load_named(p11, name);
	}
	return load_all(p11);
}

/* Finalises what we initialised and releases every module. Idempotent. */
static void
modules_release(struct ms_p11 *p11)
{
	if (p11->list != NULL && p11->list_all_init) {
		p11_kit_modules_finalize_and_release(p11->list);
	} else {
		for (size_t i = 0; i < p11->n_mods; i++) {
			if (p11->mods[i].is_init) {
				(void)p11_kit_module_finalize(p11->mods[i].fl);
			}
			if (p11->list == NULL) {
				p11_kit_module_release(p11->mods[i].fl);
			}
		}
		if (p11->list != NULL) {
			p11_kit_modules_release(p11->list);
		}
	}
	p11->list = NULL;
	p11->list_all_init = false;
	memset(p11->mods, 0, sizeof(p11->mods));
	p11->n_mods = 0;
	p11->fl = NULL;
}

ms_err
ms_p11_open(const char *uri, enum ms_p11_for what, struct ms_p11 **out)
{
	struct ms_p11 *p11 = NULL;
	ms_err err = MS_E_INTERNAL;

	if (out == NULL || (what != MS_P11_FOR_KEY && what != MS_P11_FOR_CERT)) {
		return MS_E_ARG;
	}
	*out = NULL;
	p11 = calloc(1, sizeof(*p11));
	if (p11 == NULL) {
		return MS_E_NOMEM;
	}
	p11->open_for = what;
	atomic_init(&p11->pin_rejected, false);
	pthread_mutex_init(&p11->recover_lock, NULL);
	ms_p11i_fail_clear(&p11->fail);
	for (size_t i = 0; i < MS_P11I_SESSIONS_MAX; i++) {
		ms_p11i_fail_clear(&p11->sess[i].fail);
	}
	/* From here on the caller gets the context even on failure. */
	*out = p11;
	err = ms_p11i_uri_parse(p11, uri);
	if (err != MS_OK) {
		goto out;
	}
	err = modules_load(p11);
	if (err != MS_OK) {
		goto out;
	}
	err = ms_p11i_token_select(p11);
out:
	return err;
}

void
ms_p11_close(struct ms_p11 *p11)
{
	if (p11 == NULL) {
		return;
	}
	if (p11->logged_in && p11->sess[0].is_open) {
		(void)p11->fl->C_Logout(p11->sess[0].h);
	}
	p11->logged_in = false;
	for (size_t i = 0; i < p11->n_sess; i++) {
		if (p11->sess[i].is_open) {
			(void)p11->fl->C_CloseSession(p11->sess[i].h);
			p11->sess[i].is_open = false;
		}
	}
	p11->n_sess = 0;
	modules_release(p11);
	/* p11-kit frees its pin-value copy without wiping; it came from argv. */
	p11_kit_uri_free(p11->uri);
	p11->uri = NULL;
	p11->pin = NULL;
	pthread_mutex_destroy(&p11->recover_lock);
	free(p11);
}

/* What a NULL context (ms_p11_open() out of memory) reports. */
static const struct ms_p11_fail no_context = {
	.call = NULL,
	.rv = CKR_OK,
	.detail = "no token context (out of memory)",
};

const struct ms_p11_fail *
ms_p11_last_fail(const struct ms_p11 *p11)
{
	if (p11 == NULL) {
		return &no_context;
	}
	return &p11->fail;
}

const char *
ms_p11_token_label(const struct ms_p11 *p11)
{
	if (p11 == NULL || !p11->has_token) {
		return NULL;
	}
	return p11->token_label;
}

const char *
ms_p11_token_serial(const struct ms_p11 *p11)
{
	if (p11 == NULL || !p11->has_token) {
		return NULL;
	}
	return p11->token_serial;
}

/* A blank-padded CK_TOKEN_INFO field that holds only blanks. */
static bool
field_blank(const CK_UTF8CHAR *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (p[i] != ' ') {
			return false;
		}
	}
	return true;
}

bool
ms_p11_same_token(const struct ms_p11 *a, const struct ms_p11 *b)
{
	const CK_TOKEN_INFO *x = NULL, *y = NULL;

	if (a == NULL || b == NULL || !a->has_token || !b->has_token) {
		return false;
	}
	x = &a->token_info;
	y = &b->token_info;
	if (memcmp(x->manufacturerID, y->manufacturerID, sizeof(x->manufacturerID)) != 0 ||
	    memcmp(x->model, y->model, sizeof(x->model)) != 0 ||
	    memcmp(x->serialNumber, y->serialNumber, sizeof(x->serialNumber)) != 0) {
		return false;
	}
	/* No serial to tell them apart: one label too is taken as one token. */
	if (field_blank(x->serialNumber, sizeof(x->serialNumber))) {
		return memcmp(x->label, y->label, sizeof(x->label)) == 0;
	}
	return true;
}


/* The Makefile passes `pkg-config --modversion p11-kit-1`; other builds (fuzz replays) may not. */
#ifndef MS_P11_KIT_VERSION
#define MS_P11_KIT_VERSION "unknown"
#endif

ms_err
ms_p11_lib_versions(struct ms_libver *out, size_t cap, size_t *out_len)
{
	*out_len = 1;
	if (out == NULL) {
		return MS_OK;
	}
	if (cap < 1) {
		return MS_E_NOSPACE;
	}
	return ms_libver_set(&out[0], "p11-kit", MS_P11_KIT_VERSION, true);
}
