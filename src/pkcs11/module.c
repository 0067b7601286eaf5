// SPDX-License-Identifier: GPL-2.0-only
/*
 * Loading the PKCS#11 modules a URI selects through p11-kit: the one at
 * module-path=, the registered ones called module-name=, or all registered.
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
module_name(struct p11_module *m)
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
	p11_text_clean(m->name, sizeof(m->name), (const unsigned char *)(show ? show : "?"),
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
	struct p11_module *m = &p11->mods[0];
	CK_RV rv;

	m->fl = p11_kit_module_load(path, 0);
	if (m->fl == NULL) {
		const char *msg = p11_kit_message();
		char text[160];

		p11_text_clean(text, sizeof(text), (const unsigned char *)path, strlen(path));
		p11_fail_set(&p11->fail, "p11_kit_module_load", CKR_OK,
			     "cannot load module-path \"%s\": %s", text,
			     msg != NULL ? msg : "unknown error");
		return MS_E_NOTFOUND;
	}
	p11->n_mods = 1;
	module_name(m);
	rv = p11_kit_module_initialize(m->fl);
	if (rv != CKR_OK) {
		p11_fail_set(&p11->fail, "C_Initialize", rv, "module %s", m->name);
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
		p11_fail_set(&p11->fail, "p11_kit_modules_load", CKR_OK, "%s",
			     p11_kit_message() != NULL ? p11_kit_message() : "failed");
		return MS_E_TOKEN;
	}
	/* Only the matching modules are initialised: the others never run. */
	for (size_t i = 0; p11->list[i] != NULL; i++) {
		struct p11_module *m = NULL;

		if (!module_name_matches(p11->list[i], want)) {
			continue;
		}
		if (p11->n_mods == P11_MODULES_MAX) {
			p11_fail_set(&p11->fail, NULL, CKR_OK, "more than %d modules",
				     P11_MODULES_MAX);
			return MS_E_TOKEN;
		}
		m = &p11->mods[p11->n_mods];
		m->fl = p11->list[i];
		p11->n_mods++;
		module_name(m);
		rv = p11_kit_module_initialize(m->fl);
		if (rv != CKR_OK) {
			p11_fail_set(&p11->fail, "C_Initialize", rv, "module %s", m->name);
			return MS_E_TOKEN;
		}
		m->is_init = true;
	}
	if (p11->n_mods == 0) {
		p11_text_clean(text, sizeof(text), (const unsigned char *)want, strlen(want));
		p11_fail_set(&p11->fail, NULL, CKR_OK,
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
		p11_fail_set(&p11->fail, "p11_kit_modules_load_and_initialize", CKR_OK, "%s",
			     p11_kit_message() != NULL ? p11_kit_message() : "failed");
		return MS_E_TOKEN;
	}
	p11->list_all_init = true;
	for (size_t i = 0; p11->list[i] != NULL; i++) {
		if (p11->n_mods == P11_MODULES_MAX) {
			p11_fail_set(&p11->fail, NULL, CKR_OK, "more than %d modules",
				     P11_MODULES_MAX);
			return MS_E_TOKEN;
		}
		p11->mods[p11->n_mods].fl = p11->list[i];
		module_name(&p11->mods[p11->n_mods]);
		p11->n_mods++;
	}
	if (p11->n_mods == 0) {
		p11_fail_set(&p11->fail, NULL, CKR_OK,
			     "no PKCS#11 module is registered with p11-kit");
		return MS_E_NOTFOUND;
	}
	return MS_OK;
}

ms_err
p11_modules_load(struct ms_p11 *p11)
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
void
p11_modules_release(struct ms_p11 *p11)
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
