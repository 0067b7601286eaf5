// SPDX-License-Identifier: GPL-2.0-only
/*
 * Facts about the found private key (type, usage, signature size) and its
 * public half, read from the key or from its public key object.
 */
#include <string.h>

#include "p11_internal.h"

/* An optional attribute: absent is fine, any other failure is not. */
static ms_err
optional(ms_err err, bool *is_present)
{
	*is_present = (err == MS_OK);
	return err == MS_E_NOTFOUND ? MS_OK : err;
}

static ms_err
key_type(struct ms_p11 *p11, CK_OBJECT_HANDLE key)
{
	CK_ULONG kt = 0;
	ms_err err;

	err = p11_attr_ulong(p11, p11->sess[0].h, key, CKA_KEY_TYPE, &kt, &p11->fail);
	if (err == MS_E_NOTFOUND) {
		p11_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
			     "the private key has no readable CKA_KEY_TYPE");
		return MS_E_TOKEN;
	}
	if (err != MS_OK) {
		return err;
	}
	if (kt == CKK_RSA) {
		p11->key_type = MS_P11_KEY_RSA;
	} else if (kt == CKK_EC) {
		p11->key_type = MS_P11_KEY_EC;
	} else {
		p11_fail_set(&p11->fail, NULL, CKR_OK,
			     "key type 0x%lx is neither CKK_RSA nor CKK_EC", kt);
		return MS_E_UNSUPPORTED;
	}
	return MS_OK;
}

/* The length C_Sign must return: r||s for EC, the modulus for RSA. */
static ms_err
key_sig_len(struct ms_p11 *p11, CK_OBJECT_HANDLE key)
{
	uint8_t buf[P11_MODULUS_MAX];
	size_t len = 0, field = 0, skip = 0;
	bool is_present = false;
	ms_err err;

	p11->key_sig_len = 0;
	if (p11->key_type == MS_P11_KEY_EC) {
		err = p11_attr_get(p11, p11->sess[0].h, key, CKA_EC_PARAMS, buf,
				   P11_EC_PARAMS_MAX, &len, &p11->fail);
		if (err == MS_E_NOTFOUND) {
			p11_fail_set(&p11->fail, "C_GetAttributeValue", CKR_OK,
				     "the EC key has no readable CKA_EC_PARAMS");
			return MS_E_TOKEN;
		}
		if (err != MS_OK) {
			return err;
		}
		field = p11_ec_field_len(buf, len);
		if (field == 0) {
			p11_fail_set(&p11->fail, NULL, CKR_OK,
				     "EC key on a curve other than P-256, P-384 or P-521");
			return MS_E_UNSUPPORTED;
		}
		p11->key_sig_len = 2 * field;
		return MS_OK;
	}
	/* RSA: unknown (0) if the key hides its modulus; C_Sign then decides. */
	err = optional(p11_attr_get(p11, p11->sess[0].h, key, CKA_MODULUS, buf, sizeof(buf),
				    &len, &p11->fail), &is_present);
	if (err != MS_OK || !is_present) {
		return err;
	}
	while (skip < len && buf[skip] == 0) {
		skip++;
	}
	p11->key_sig_len = len - skip;
	return MS_OK;
}

/* Fills the cached facts about the key that ms_p11_sign() relies on. */
ms_err
p11_key_facts(struct ms_p11 *p11, CK_OBJECT_HANDLE key)
{
	CK_SESSION_HANDLE h = p11->sess[0].h;
	bool is_present = false, can_sign = false, always = false;
	ms_err err;

	err = key_type(p11, key);
	if (err != MS_OK) {
		return err;
	}
	err = optional(p11_attr_bool(p11, h, key, CKA_SIGN, &can_sign, &p11->fail), &is_present);
	if (err != MS_OK) {
		return err;
	}
	if (is_present && !can_sign) {
		p11_fail_set(&p11->fail, NULL, CKR_OK, "the private key has CKA_SIGN false");
		return MS_E_UNSUPPORTED;
	}
	err = optional(p11_attr_bool(p11, h, key, CKA_ALWAYS_AUTHENTICATE, &always, &p11->fail),
		       &is_present);
	if (err != MS_OK) {
		return err;
	}
	p11->key_always_auth = is_present && always;
	err = optional(p11_attr_get(p11, h, key, CKA_ID, p11->key_id, sizeof(p11->key_id),
				    &p11->key_id_len, &p11->fail), &p11->key_has_id);
	if (err != MS_OK) {
		return err;
	}
	return key_sig_len(p11, key);
}

static ms_err
read_rsa(struct ms_p11 *p11, CK_OBJECT_HANDLE obj, struct ms_p11_pubkey *out)
{
	bool has_mod = false, has_exp = false;
	ms_err err;

	err = optional(p11_attr_get(p11, p11->sess[0].h, obj, CKA_MODULUS, out->modulus,
				    sizeof(out->modulus), &out->modulus_len, &p11->fail),
		       &has_mod);
	if (err != MS_OK) {
		return err;
	}
	err = optional(p11_attr_get(p11, p11->sess[0].h, obj, CKA_PUBLIC_EXPONENT,
				    out->exponent, sizeof(out->exponent), &out->exponent_len,
				    &p11->fail), &has_exp);
	out->has_rsa = has_mod && has_exp && out->modulus_len > 0 && out->exponent_len > 0;
	if (!out->has_rsa) {
		out->modulus_len = 0;
		out->exponent_len = 0;
	}
	return err;
}

static ms_err
read_ec(struct ms_p11 *p11, CK_OBJECT_HANDLE obj, struct ms_p11_pubkey *out)
{
	bool has_params = false, has_point = false;
	ms_err err;

	err = optional(p11_attr_get(p11, p11->sess[0].h, obj, CKA_EC_PARAMS, out->ec_params,
				    sizeof(out->ec_params), &out->ec_params_len, &p11->fail),
		       &has_params);
	if (err != MS_OK) {
		return err;
	}
	err = optional(p11_attr_get(p11, p11->sess[0].h, obj, CKA_EC_POINT, out->ec_point,
				    sizeof(out->ec_point), &out->ec_point_len, &p11->fail),
		       &has_point);
	out->has_ec = has_params && has_point && out->ec_params_len > 0 &&
		      out->ec_point_len > 0;
	if (!out->has_ec) {
		out->ec_params_len = 0;
		out->ec_point_len = 0;
	}
	return err;
}

static ms_err
read_spki(struct ms_p11 *p11, CK_OBJECT_HANDLE obj, struct ms_p11_pubkey *out)
{
	bool has_spki = false;
	ms_err err;

	err = optional(p11_attr_get(p11, p11->sess[0].h, obj, CKA_PUBLIC_KEY_INFO, out->spki,
				    sizeof(out->spki), &out->spki_len, &p11->fail), &has_spki);
	out->has_spki = has_spki && out->spki_len > 0;
	if (!out->has_spki) {
		out->spki_len = 0;
	}
	return err;
}

/*
 * The CKO_PUBLIC_KEY object of the pair: same CKA_ID, same key type, and
 * the URI's object= when it has one. MS_E_NOTFOUND unless exactly one.
 */
static ms_err
find_public(struct ms_p11 *p11, CK_OBJECT_HANDLE *pub)
{
	CK_OBJECT_CLASS cls = CKO_PUBLIC_KEY;
	CK_KEY_TYPE kt = p11->key_type == MS_P11_KEY_RSA ? CKK_RSA : CKK_EC;
	CK_ATTRIBUTE *label = p11_kit_uri_get_attribute(p11->uri, CKA_LABEL);
	CK_ATTRIBUTE tmpl[4];
	CK_OBJECT_HANDLE objs[2];
	CK_ULONG n = 0;
	size_t found = 0;
	ms_err err;

	if (!p11->key_has_id && label == NULL) {
		return MS_E_NOTFOUND;	/* nothing ties a public key to ours */
	}
	tmpl[n++] = (CK_ATTRIBUTE){ CKA_CLASS, &cls, sizeof(cls) };
	tmpl[n++] = (CK_ATTRIBUTE){ CKA_KEY_TYPE, &kt, sizeof(kt) };
	if (p11->key_has_id) {
		tmpl[n++] = (CK_ATTRIBUTE){ CKA_ID, p11->key_id, (CK_ULONG)p11->key_id_len };
	}
	if (label != NULL) {
		tmpl[n++] = *label;
	}
	err = p11_find(p11, p11->sess[0].h, tmpl, n, objs, 2, &found);
	if (err != MS_OK) {
		return err;
	}
	if (found != 1) {
		return MS_E_NOTFOUND;
	}
	*pub = objs[0];
	return MS_OK;
}

ms_err
ms_p11_key_public(struct ms_p11 *p11, struct ms_p11_pubkey *out)
{
	CK_OBJECT_HANDLE pub = CK_INVALID_HANDLE;
	bool is_rsa, has_pub = false;
	ms_err err = MS_E_INTERNAL;

	if (p11 == NULL || out == NULL || !p11->has_key) {
		return MS_E_ARG;
	}
	memset(out, 0, sizeof(*out));
	is_rsa = p11->key_type == MS_P11_KEY_RSA;
	err = is_rsa ? read_rsa(p11, p11->key, out) : read_ec(p11, p11->key, out);
	if (err == MS_OK) {
		err = read_spki(p11, p11->key, out);
	}
	if (err != MS_OK || (out->has_spki && (is_rsa ? out->has_rsa : out->has_ec))) {
		goto out;
	}
	err = optional(find_public(p11, &pub), &has_pub);
	if (err != MS_OK || !has_pub) {
		goto out;
	}
	if (is_rsa && !out->has_rsa) {
		err = read_rsa(p11, pub, out);
	} else if (!is_rsa && !out->has_ec) {
		err = read_ec(p11, pub, out);
	}
	if (err == MS_OK && !out->has_spki) {
		err = read_spki(p11, pub, out);
	}
out:
	return err;
}
