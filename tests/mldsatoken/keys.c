// SPDX-License-Identifier: GPL-2.0-only
/*
 * mldsatoken: loads the token's keys and certificates from a directory and
 * signs with OpenSSL (3.5 or later: the first with ML-DSA). Each key becomes
 * three objects, as an HSM shows them: the private key, its public key and
 * its certificate, all with the key's CKA_LABEL and CKA_ID.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "mldsatoken.h"

/* ML-DSA-87's public key, the largest, is 2592 bytes. */
#define MT_PUB_MAX 4096

static bool
add_attr(struct mt_object *obj, CK_ATTRIBUTE_TYPE type, const void *val, size_t len)
{
	struct mt_attr *a;

	if (obj->n_attrs == MT_ATTRS_MAX) {
		fprintf(stderr, "mldsatoken: too many attributes (a bug)\n");
		return false;
	}
	a = &obj->attrs[obj->n_attrs];
	a->val = malloc(len > 0 ? len : 1);
	if (a->val == NULL) {
		fprintf(stderr, "mldsatoken: out of memory\n");
		return false;
	}
	if (len > 0) {
		memcpy(a->val, val, len);
	}
	a->type = type;
	a->len = (CK_ULONG)len;
	obj->n_attrs++;
	return true;
}

static bool
add_ulong(struct mt_object *obj, CK_ATTRIBUTE_TYPE type, CK_ULONG v)
{
	return add_attr(obj, type, &v, sizeof(v));
}

static bool
add_bool(struct mt_object *obj, CK_ATTRIBUTE_TYPE type, bool v)
{
	CK_BBOOL b = v ? CK_TRUE : CK_FALSE;

	return add_attr(obj, type, &b, sizeof(b));
}

/* add_der: the DER of an OpenSSL object (i2d_* of @der/@len, freed here). */
static bool
add_der(struct mt_object *obj, CK_ATTRIBUTE_TYPE type, unsigned char *der, int len)
{
	bool ok;

	if (len <= 0) {
		fprintf(stderr, "mldsatoken: DER encoding of attribute 0x%lx failed\n", type);
		return false;
	}
	ok = add_attr(obj, type, der, (size_t)len);
	OPENSSL_free(der);
	return ok;
}

const struct mt_attr *
mt_attr_find(const struct mt_object *obj, CK_ATTRIBUTE_TYPE type)
{
	for (size_t i = 0; i < obj->n_attrs; i++) {
		if (obj->attrs[i].type == type) {
			return &obj->attrs[i];
		}
	}
	return NULL;
}

/* The attributes every object of a key has: class, label, id and storage. */
static bool
add_common(struct mt_object *obj, CK_OBJECT_CLASS cls, bool is_private, const char *label,
	   const unsigned char *id, size_t id_len)
{
	obj->cls = cls;
	obj->is_private = is_private;
	return add_ulong(obj, CKA_CLASS, cls) && add_bool(obj, CKA_TOKEN, true) &&
	       add_bool(obj, CKA_PRIVATE, is_private) && add_bool(obj, CKA_MODIFIABLE, false) &&
	       add_bool(obj, CKA_DESTROYABLE, false) &&
	       add_attr(obj, CKA_LABEL, label, strlen(label)) && add_attr(obj, CKA_ID, id, id_len);
}

static bool
add_key_common(struct mt_object *obj, const struct mt_key *key, X509 *cert)
{
	unsigned char *der = NULL;
	int len;

	if (!add_ulong(obj, CKA_KEY_TYPE, CKK_ML_DSA) ||
	    !add_ulong(obj, CKA_PARAMETER_SET, key->param_set) ||
	    !add_bool(obj, CKA_LOCAL, false) || !add_bool(obj, CKA_DERIVE, false) ||
	    !add_ulong(obj, CKA_KEY_GEN_MECHANISM, CK_UNAVAILABLE_INFORMATION)) {
		return false;
	}
	len = i2d_PUBKEY(key->pkey, &der);
	if (!add_der(obj, CKA_PUBLIC_KEY_INFO, der, len)) {
		return false;
	}
	der = NULL;
	len = i2d_X509_NAME(X509_get_subject_name(cert), &der);
	return add_der(obj, CKA_SUBJECT, der, len);
}

static bool
add_private(struct mt_object *obj, struct mt_key *key, X509 *cert, const char *label,
	    const unsigned char *id, size_t id_len)
{
	obj->key = key;
	/* CKA_VALUE and CKA_SEED are absent: sensitive, never extractable. */
	return add_common(obj, CKO_PRIVATE_KEY, true, label, id, id_len) &&
	       add_key_common(obj, key, cert) && add_bool(obj, CKA_SIGN, true) &&
	       add_bool(obj, CKA_SIGN_RECOVER, false) && add_bool(obj, CKA_DECRYPT, false) &&
	       add_bool(obj, CKA_UNWRAP, false) && add_bool(obj, CKA_SENSITIVE, true) &&
	       add_bool(obj, CKA_ALWAYS_SENSITIVE, true) && add_bool(obj, CKA_EXTRACTABLE, false) &&
	       add_bool(obj, CKA_NEVER_EXTRACTABLE, true) &&
	       add_bool(obj, CKA_ALWAYS_AUTHENTICATE, false);
}

static bool
add_public(struct mt_object *obj, const struct mt_key *key, X509 *cert, const char *label,
	   const unsigned char *id, size_t id_len, const unsigned char *pub, size_t pub_len)
{
	return add_common(obj, CKO_PUBLIC_KEY, false, label, id, id_len) &&
	       add_key_common(obj, key, cert) && add_bool(obj, CKA_VERIFY, true) &&
	       add_bool(obj, CKA_VERIFY_RECOVER, false) && add_bool(obj, CKA_ENCRYPT, false) &&
	       add_bool(obj, CKA_WRAP, false) && add_attr(obj, CKA_VALUE, pub, pub_len);
}

static bool
add_cert(struct mt_object *obj, X509 *cert, const char *label, const unsigned char *id,
	 size_t id_len)
{
	unsigned char *der = NULL;
	int len;

	if (!add_common(obj, CKO_CERTIFICATE, false, label, id, id_len) ||
	    !add_ulong(obj, CKA_CERTIFICATE_TYPE, CKC_X_509) ||
	    !add_bool(obj, CKA_TRUSTED, false) ||
	    !add_ulong(obj, CKA_CERTIFICATE_CATEGORY, 1 /* token user */)) {
		return false;
	}
	len = i2d_X509(cert, &der);
	if (!add_der(obj, CKA_VALUE, der, len)) {
		return false;
	}
	der = NULL;
	len = i2d_X509_NAME(X509_get_subject_name(cert), &der);
	if (!add_der(obj, CKA_SUBJECT, der, len)) {
		return false;
	}
	der = NULL;
	len = i2d_X509_NAME(X509_get_issuer_name(cert), &der);
	if (!add_der(obj, CKA_ISSUER, der, len)) {
		return false;
	}
	der = NULL;
	len = i2d_ASN1_INTEGER(X509_get_serialNumber(cert), &der);
	return add_der(obj, CKA_SERIAL_NUMBER, der, len);
}

/* The CKP_ value of an ML-DSA key, or 0 for any other key. */
static CK_ULONG
param_set_of(EVP_PKEY *pkey)
{
	if (EVP_PKEY_is_a(pkey, "ML-DSA-44")) {
		return CKP_ML_DSA_44;
	}
	if (EVP_PKEY_is_a(pkey, "ML-DSA-65")) {
		return CKP_ML_DSA_65;
	}
	if (EVP_PKEY_is_a(pkey, "ML-DSA-87")) {
		return CKP_ML_DSA_87;
	}
	return 0;
}

static EVP_PKEY *
read_key(const char *path)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *pkey;

	if (f == NULL) {
		return NULL;
	}
	pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return pkey;
}

static X509 *
read_cert(const char *path)
{
	FILE *f = fopen(path, "r");
	X509 *cert;

	if (f == NULL) {
		return NULL;
	}
	cert = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	return cert;
}

/* One key of the directory: its three objects. */
static bool
load_key(struct mt_token *tok, const char *dir, const char *label)
{
	char path[4096];
	struct mt_key *key = &tok->keys[tok->n_keys];
	X509 *cert = NULL;
	unsigned char pub[MT_PUB_MAX], id[20];
	size_t pub_len = 0;
	bool ok = false;

	snprintf(path, sizeof(path), "%s/%s.key.pem", dir, label);
	key->pkey = read_key(path);
	if (key->pkey == NULL) {
		fprintf(stderr, "mldsatoken: %s: not a private key in PEM\n", path);
		goto out;
	}
	tok->n_keys++;
	key->param_set = param_set_of(key->pkey);
	if (key->param_set == 0) {
		fprintf(stderr, "mldsatoken: %s: not an ML-DSA key\n", path);
		goto out;
	}
	key->sig_len = (size_t)EVP_PKEY_get_size(key->pkey);
	snprintf(path, sizeof(path), "%s/%s.crt.pem", dir, label);
	cert = read_cert(path);
	if (cert == NULL) {
		fprintf(stderr, "mldsatoken: %s: no certificate in PEM\n", path);
		goto out;
	}
	if (EVP_PKEY_eq(X509_get0_pubkey(cert), key->pkey) != 1) {
		fprintf(stderr, "mldsatoken: %s: not the certificate of %s.key.pem\n", path, label);
		goto out;
	}
	if (EVP_PKEY_get_octet_string_param(key->pkey, OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof(pub),
					    &pub_len) != 1) {
		fprintf(stderr, "mldsatoken: %s: no public key\n", label);
		goto out;
	}
	/* CKA_ID as many tokens make it: the SHA-1 of the public key. */
	if (EVP_Digest(pub, pub_len, id, NULL, EVP_sha1(), NULL) != 1) {
		fprintf(stderr, "mldsatoken: SHA-1 failed\n");
		goto out;
	}
	if (!add_private(&tok->objects[tok->n_objects++], key, cert, label, id, sizeof(id)) ||
	    !add_public(&tok->objects[tok->n_objects++], key, cert, label, id, sizeof(id), pub,
			pub_len) ||
	    !add_cert(&tok->objects[tok->n_objects++], cert, label, id, sizeof(id))) {
		goto out;
	}
	ok = true;
out:
	X509_free(cert);
	return ok;
}

bool
mt_read_line(const char *path, char *buf, size_t cap, size_t *len)
{
	FILE *f;
	size_t n;

	f = fopen(path, "r");
	if (f == NULL) {
		return false;
	}
	if (fgets(buf, (int)cap, f) == NULL) {
		buf[0] = '\0';
	}
	fclose(f);
	n = strcspn(buf, "\r\n");
	buf[n] = '\0';
	*len = n;
	return true;
}

/* read_line: mt_read_line() of @dir/@name. */
static bool
read_line(const char *dir, const char *name, char *buf, size_t cap, size_t *len)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return mt_read_line(path, buf, cap, len);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The labels of the directory's keys, sorted, so that handles do not move between runs. */
static bool
list_labels(const char *dir, char **labels, size_t *n)
{
	static const char suffix[] = ".key.pem";
	DIR *d = opendir(dir);
	struct dirent *e;

	*n = 0;
	if (d == NULL) {
		fprintf(stderr, "mldsatoken: cannot open the key directory %s\n", dir);
		return false;
	}
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len <= sizeof(suffix) - 1 ||
		    strcmp(e->d_name + len - (sizeof(suffix) - 1), suffix) != 0) {
			continue;
		}
		if (*n == MT_KEYS_MAX) {
			fprintf(stderr, "mldsatoken: more than %d keys in %s\n", MT_KEYS_MAX, dir);
			closedir(d);
			return false;
		}
		labels[*n] = strndup(e->d_name, len - (sizeof(suffix) - 1));
		if (labels[*n] == NULL) {
			closedir(d);
			return false;
		}
		(*n)++;
	}
	closedir(d);
	qsort(labels, *n, sizeof(labels[0]), cmp_names);
	return true;
}

bool
mt_token_load(struct mt_token *tok, const char *dir)
{
	char *labels[MT_KEYS_MAX];
	char pin[sizeof(tok->pin) + 2];
	size_t n = 0, len = 0;
	bool ok = false;

	memset(tok, 0, sizeof(*tok));
	if (!read_line(dir, "label", tok->label, sizeof(tok->label), &len)) {
		strcpy(tok->label, "mldsa-test");
	}
	if (!read_line(dir, "serial", tok->serial, sizeof(tok->serial), &len)) {
		strcpy(tok->serial, "0001");
	}
	if (!read_line(dir, "pin", pin, sizeof(pin), &len) || len == 0 ||
	    len > sizeof(tok->pin)) {
		fprintf(stderr, "mldsatoken: %s/pin: no user PIN (1 to %zu bytes)\n", dir,
			sizeof(tok->pin));
		OPENSSL_cleanse(pin, sizeof(pin));
		return false;
	}
	memcpy(tok->pin, pin, len);
	tok->pin_len = len;
	OPENSSL_cleanse(pin, sizeof(pin));
	if (!list_labels(dir, labels, &n)) {
		goto out;
	}
	ok = true;
	for (size_t i = 0; i < n && ok; i++) {
		ok = load_key(tok, dir, labels[i]);
	}
out:
	for (size_t i = 0; i < n; i++) {
		free(labels[i]);
	}
	return ok;
}

void
mt_token_free(struct mt_token *tok)
{
	for (size_t i = 0; i < tok->n_objects; i++) {
		for (size_t j = 0; j < tok->objects[i].n_attrs; j++) {
			free(tok->objects[i].attrs[j].val);
		}
	}
	for (size_t i = 0; i < tok->n_keys; i++) {
		EVP_PKEY_free(tok->keys[i].pkey);
	}
	OPENSSL_cleanse(tok, sizeof(*tok));
}

CK_RV
mt_key_sign(const struct mt_key *key, bool deterministic, const unsigned char *ctx,
	    size_t ctx_len, const unsigned char *msg, size_t msg_len, unsigned char *sig,
	    size_t *sig_len)
{
	static const unsigned char empty[1];
	EVP_PKEY_CTX *pctx = NULL;
	EVP_SIGNATURE *alg = NULL;
	OSSL_PARAM params[3];
	int det = deterministic ? 1 : 0;
	size_t n = 0;
	CK_RV rv = CKR_FUNCTION_FAILED;

	params[n++] = OSSL_PARAM_construct_int(OSSL_SIGNATURE_PARAM_DETERMINISTIC, &det);
	if (ctx_len > 0) {
		params[n++] = OSSL_PARAM_construct_octet_string(OSSL_SIGNATURE_PARAM_CONTEXT_STRING,
								(void *)(size_t)ctx, ctx_len);
	}
	params[n] = OSSL_PARAM_construct_end();
	pctx = EVP_PKEY_CTX_new_from_pkey(NULL, key->pkey, NULL);
	alg = EVP_SIGNATURE_fetch(NULL, EVP_PKEY_get0_type_name(key->pkey), NULL);
	if (pctx == NULL || alg == NULL ||
	    EVP_PKEY_sign_message_init(pctx, alg, params) != 1) {
		goto out;
	}
	*sig_len = key->sig_len;
	if (EVP_PKEY_sign(pctx, sig, sig_len, msg_len > 0 ? msg : empty, msg_len) != 1) {
		goto out;
	}
	rv = CKR_OK;
out:
	EVP_SIGNATURE_free(alg);
	EVP_PKEY_CTX_free(pctx);
	return rv;
}
