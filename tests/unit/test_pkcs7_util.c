// SPDX-License-Identifier: GPL-2.0-only
/* Helpers for tests/unit/test_pkcs7_*.c: SignedData variants built from parts. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_pkcs7.h"

void
p7_signer_make(struct p7_signer *s, const char *key, enum ms_hash_alg alg, bool skid,
	       const uint8_t *digest, size_t digest_len)
{
	const struct ms_hash_info *h = ms_hash_info(alg);
	struct ms_cms_cert *cert = NULL;
	enum ms_key_type type = MS_KEY_RSA;
	enum ms_ec_curve curve = MS_EC_NONE;
	uint8_t tbs[128], raw[600];
	size_t bits = 0, tbs_len = 0, raw_len;
	char name[64];

	CHECK(h != NULL);
	memset(s, 0, sizeof(*s));
	snprintf(name, sizeof(name), "%s.x509.der", key);
	cert = cms_cert(name);
	ms_cms_cert_key(cert, &type, &curve, &bits);
	CHECK_ERR(ms_cms_signer_id_encode(cert, skid, s->sid, sizeof(s->sid), &s->sid_len), MS_OK);
	s->version = skid ? 3 : 1;
	s->digest_alg = h->alg_id;
	s->digest_alg_len = h->alg_id_len;
	s->sig_alg = type == MS_KEY_RSA ? ms_alg_rsa_encryption : h->ecdsa_alg_id;
	s->sig_alg_len = type == MS_KEY_RSA ? sizeof(ms_alg_rsa_encryption) : h->ecdsa_alg_id_len;
	CHECK(ms_cms_tbs_encode(type, alg, digest, digest_len, tbs, sizeof(tbs), &tbs_len) ==
	      MS_OK);
	raw_len = cms_token_sign(key, alg, tbs, tbs_len, raw, (bits + 7) / 8);
	CHECK_ERR(ms_cms_sig_encode(type, raw, raw_len, s->sig, sizeof(s->sig), &s->sig_len), MS_OK);
	ms_cms_cert_free(cert);
}

void
p7_msg_init(struct p7_msg *m, unsigned version)
{
	memset(m, 0, sizeof(*m));
	m->version = version;
}

/* { id-data } */
static const uint8_t eci_data[] = {
	0x30, 0x0b, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01,
};

static size_t
si_body(const struct p7_signer *s)
{
	return 3 + s->sid_len + s->digest_alg_len + s->attrs_len + s->sig_alg_len +
	       ms_der_tlv_size(s->sig_len) + s->uattrs_len;
}

size_t
p7_encode(const struct p7_msg *m, uint8_t *out)
{
	struct ms_der_out o;
	const uint8_t *eci = m->eci != NULL ? m->eci : eci_data;
	size_t eci_len = m->eci != NULL ? m->eci_len : sizeof(eci_data);
	const uint8_t *oid = m->outer_oid != NULL ? m->outer_oid : ms_oid_signed_data;
	size_t oid_len = m->outer_oid != NULL ? m->outer_oid_len : sizeof(ms_oid_signed_data);
	size_t algs = 0, sis = 0, sd, i, j;

	for (i = 0; i < m->n; i++) {
		bool dup = false;

		for (j = 0; j < i; j++) {
			if (m->s[j].digest_alg == m->s[i].digest_alg) {
				dup = true;
			}
		}
		if (!dup) {
			algs += m->s[i].digest_alg_len;
		}
		sis += ms_der_tlv_size(si_body(&m->s[i]));
	}
	sd = 3 + ms_der_tlv_size(algs) + eci_len + m->certs_len + ms_der_tlv_size(sis);
	ms_der_out_init(&o, out, P7_BUF);
	ms_der_header(&o, DER_SEQUENCE, oid_len + ms_der_tlv_size(ms_der_tlv_size(sd)));
	ms_der_bytes(&o, oid, oid_len);
	ms_der_header(&o, DER_CTX0_CONS, ms_der_tlv_size(sd));
	ms_der_header(&o, DER_SEQUENCE, sd);
	ms_der_small_int(&o, m->version);
	ms_der_header(&o, m->digest_algs_tag != 0 ? m->digest_algs_tag : DER_SET, algs);
	for (i = 0; i < m->n; i++) {
		bool dup = false;

		for (j = 0; j < i; j++) {
			if (m->s[j].digest_alg == m->s[i].digest_alg) {
				dup = true;
			}
		}
		if (!dup) {
			ms_der_bytes(&o, m->s[i].digest_alg, m->s[i].digest_alg_len);
		}
	}
	ms_der_bytes(&o, eci, eci_len);
	ms_der_bytes(&o, m->certs, m->certs_len);
	ms_der_header(&o, m->signer_infos_tag != 0 ? m->signer_infos_tag : DER_SET, sis);
	for (i = 0; i < m->n; i++) {
		const struct p7_signer *s = &m->s[i];

		ms_der_header(&o, DER_SEQUENCE, si_body(s));
		ms_der_small_int(&o, s->version);
		ms_der_bytes(&o, s->sid, s->sid_len);
		ms_der_bytes(&o, s->digest_alg, s->digest_alg_len);
		ms_der_bytes(&o, s->attrs, s->attrs_len);
		ms_der_bytes(&o, s->sig_alg, s->sig_alg_len);
		ms_der_header(&o, DER_OCTET_STRING, s->sig_len);
		ms_der_bytes(&o, s->sig, s->sig_len);
		ms_der_bytes(&o, s->uattrs, s->uattrs_len);
	}
	CHECK_ERR(o.err, MS_OK);
	return o.len;
}

size_t
p7_mod_digest(enum ms_hash_alg alg, long flip, uint8_t *out)
{
	struct ms_cms_digest *d = NULL;
	size_t len = 0, n = 0;
	uint8_t *mod = cms_read("cms/mod.bin", &len);

	if (flip >= 0) {
		CHECK((size_t)flip < len);
		mod[flip] ^= 1;
	}
	CHECK_ERR(ms_cms_digest_new(alg, &d), MS_OK);
	CHECK_ERR(ms_cms_digest_update(d, mod, len), MS_OK);
	CHECK_ERR(ms_cms_digest_final(d, out, MS_HASH_MAX_SIZE, &n), MS_OK);
	ms_cms_digest_free(d);
	free(mod);
	return n;
}
