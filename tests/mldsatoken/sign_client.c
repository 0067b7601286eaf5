// SPDX-License-Identifier: GPL-2.0-only
/*
 * mldsatoken-sign: a minimal PKCS#11 client that signs a file with
 * CKM_ML_DSA, for the tests of tests/mldsatoken (pkcs11-tool of Debian 12
 * knows no ML-DSA and has no buffer for its signatures).
 *
 * Usage: mldsatoken-sign [options] MODULE LABEL PINFILE IN OUT
 *   -p N   multi-part: C_SignUpdate in N-byte parts, then C_SignFinal
 *          (default: one C_Sign)
 *   -d     CK_SIGN_ADDITIONAL_CONTEXT with CKH_DETERMINISTIC_REQUIRED
 *   -c STR CK_SIGN_ADDITIONAL_CONTEXT with STR as the context string
 *   -H     CK_SIGN_ADDITIONAL_CONTEXT with CKH_HEDGE_REQUIRED, no context
 *   -r STR C_Initialize's pReserved: STR, as p11-kit passes a module
 *          config's x-init-reserved
 * Exits 0 with the signature in OUT; 1 with the failing call and its CK_RV
 * (hex) on stderr; 2 on bad usage.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <p11-kit/pkcs11.h>

#include "../../src/pkcs11/pkcs11_v32.h"

#define MAX_FILE (64UL << 20)

static int
fail(const char *call, CK_RV rv)
{
	fprintf(stderr, "mldsatoken-sign: %s: CK_RV 0x%lx\n", call, rv);
	return 1;
}

static unsigned char *
read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(MAX_FILE);
	size_t n = 0;

	if (f == NULL || buf == NULL) {
		if (f != NULL) {
			fclose(f);
		}
		free(buf);
		return NULL;
	}
	n = fread(buf, 1, MAX_FILE, f);
	if (ferror(f) || !feof(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	*len = n;
	return buf;
}

static int
usage(void)
{
	fprintf(stderr, "usage: mldsatoken-sign [-p N] [-d] [-c STR] [-H] [-r STR] MODULE LABEL "
			"PINFILE IN OUT\n");
	return 2;
}

int
main(int argc, char **argv)
{
	CK_FUNCTION_LIST_PTR f = NULL;
	CK_C_GetFunctionList get_list;
	CK_C_INITIALIZE_ARGS init = {.flags = CKF_OS_LOCKING_OK};
	CK_SLOT_ID slot;
	CK_ULONG n_slots = 1, n_found = 0, sig_len = 0;
	CK_SESSION_HANDLE h;
	CK_OBJECT_HANDLE key;
	CK_OBJECT_CLASS cls = CKO_PRIVATE_KEY;
	CK_SIGN_ADDITIONAL_CONTEXT extra = {.hedgeVariant = CKH_HEDGE_PREFERRED};
	CK_MECHANISM mech = {.mechanism = CKM_ML_DSA};
	unsigned char *msg, *sig, pin[128];
	size_t msg_len = 0, part = 0, pin_len;
	const char *ctx = NULL;
	bool with_param = false;
	FILE *pf, *out;
	void *lib;
	CK_RV rv;
	int opt;

	while ((opt = getopt(argc, argv, "p:dc:Hr:")) != -1) {
		switch (opt) {
		case 'p':
			part = strtoul(optarg, NULL, 10);
			if (part == 0) {
				return usage();
			}
			break;
		case 'd':
			extra.hedgeVariant = CKH_DETERMINISTIC_REQUIRED;
			with_param = true;
			break;
		case 'c':
			ctx = optarg;
			with_param = true;
			break;
		case 'H':
			extra.hedgeVariant = CKH_HEDGE_REQUIRED;
			with_param = true;
			break;
		case 'r':
			init.pReserved = optarg;
			break;
		default:
			return usage();
		}
	}
	if (argc - optind != 5) {
		return usage();
	}
	if (with_param) {
		extra.pContext = (CK_BYTE_PTR)(size_t)ctx;
		extra.ulContextLen = ctx != NULL ? strlen(ctx) : 0;
		mech.pParameter = &extra;
		mech.ulParameterLen = sizeof(extra);
	}
	pf = fopen(argv[optind + 2], "r");
	if (pf == NULL || fgets((char *)pin, sizeof(pin), pf) == NULL) {
		fprintf(stderr, "mldsatoken-sign: cannot read the PIN file\n");
		return 1;
	}
	fclose(pf);
	pin_len = strcspn((char *)pin, "\r\n");
	msg = read_all(argv[optind + 3], &msg_len);
	if (msg == NULL) {
		fprintf(stderr, "mldsatoken-sign: cannot read %s\n", argv[optind + 3]);
		return 1;
	}
	lib = dlopen(argv[optind], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "mldsatoken-sign: %s\n", dlerror());
		return 1;
	}
	*(void **)&get_list = dlsym(lib, "C_GetFunctionList");
	if (get_list == NULL || (rv = get_list(&f)) != CKR_OK) {
		return fail("C_GetFunctionList", get_list == NULL ? CKR_GENERAL_ERROR : rv);
	}
	if ((rv = f->C_Initialize(&init)) != CKR_OK) {
		return fail("C_Initialize", rv);
	}
	if ((rv = f->C_GetSlotList(CK_TRUE, &slot, &n_slots)) != CKR_OK || n_slots < 1) {
		return fail("C_GetSlotList", rv);
	}
	if ((rv = f->C_OpenSession(slot, CKF_SERIAL_SESSION, NULL, NULL, &h)) != CKR_OK) {
		return fail("C_OpenSession", rv);
	}
	if ((rv = f->C_Login(h, CKU_USER, pin, pin_len)) != CKR_OK) {
		return fail("C_Login", rv);
	}
	CK_ATTRIBUTE tmpl[] = {
		{CKA_CLASS, &cls, sizeof(cls)},
		{CKA_LABEL, argv[optind + 1], strlen(argv[optind + 1])},
	};
	if ((rv = f->C_FindObjectsInit(h, tmpl, 2)) != CKR_OK ||
	    (rv = f->C_FindObjects(h, &key, 1, &n_found)) != CKR_OK ||
	    (rv = f->C_FindObjectsFinal(h)) != CKR_OK) {
		return fail("C_FindObjects", rv);
	}
	if (n_found != 1) {
		fprintf(stderr, "mldsatoken-sign: no private key labelled %s\n", argv[optind + 1]);
		return 1;
	}
	if ((rv = f->C_SignInit(h, &mech, key)) != CKR_OK) {
		return fail("C_SignInit", rv);
	}
	if (part == 0) {
		if ((rv = f->C_Sign(h, msg, msg_len, NULL, &sig_len)) != CKR_OK) {
			return fail("C_Sign (length)", rv);
		}
		sig = malloc(sig_len);
		if (sig == NULL || (rv = f->C_Sign(h, msg, msg_len, sig, &sig_len)) != CKR_OK) {
			return fail("C_Sign", sig == NULL ? CKR_HOST_MEMORY : rv);
		}
	} else {
		for (size_t off = 0; off < msg_len; off += part) {
			size_t n = msg_len - off < part ? msg_len - off : part;

			if ((rv = f->C_SignUpdate(h, msg + off, n)) != CKR_OK) {
				return fail("C_SignUpdate", rv);
			}
		}
		if ((rv = f->C_SignFinal(h, NULL, &sig_len)) != CKR_OK) {
			return fail("C_SignFinal (length)", rv);
		}
		sig = malloc(sig_len);
		if (sig == NULL || (rv = f->C_SignFinal(h, sig, &sig_len)) != CKR_OK) {
			return fail("C_SignFinal", sig == NULL ? CKR_HOST_MEMORY : rv);
		}
	}
	f->C_Logout(h);
	f->C_CloseSession(h);
	f->C_Finalize(NULL);
	out = fopen(argv[optind + 4], "wb");
	if (out == NULL || fwrite(sig, 1, sig_len, out) != sig_len || fclose(out) != 0) {
		fprintf(stderr, "mldsatoken-sign: cannot write %s\n", argv[optind + 4]);
		return 1;
	}
	free(sig);
	free(msg);
	return 0;
}
