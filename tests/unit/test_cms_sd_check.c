// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/cms/signed_data_check.c: the strict check of a
 * ready-made CMS blob for `-s`, against sign-file output and hand-built
 * variants.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "test_cms.h"

static const char *const good[] = {
	"cms/rsa2048-sha256.p7s", "cms/rsa2048-sha512-skid.p7s", "cms/rsa2048-sha1.p7s",
	"cms/rsa2048-sha224.p7s", "cms/rsa2048-sha384-skid.p7s", "cms/rsa3072-sha256.p7s",
	"cms/rsa4096-sha512.p7s", "cms/rsa2048-sha3-256.p7s", "cms/rsa2048-sha3-384.p7s",
	"cms/rsa2048-sha3-512-skid.p7s", "cms/ec256-sha256.p7s", "cms/ec256-sha1.p7s",
	"cms/ec256-sha224-skid.p7s", "cms/ec384-sha384-skid.p7s", "cms/ec521-sha512.p7s",
	/* openssl cms -sign: detached, with [0] certificates */
	"cms/openssl-certs.p7s",
};

MS_TEST(cms_sd_check_accepts)
{
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		size_t len = 0;
		uint8_t *p = cms_read(good[i], &len);

		CHECK(ms_cms_signed_data_check(p, len) == MS_OK);
		free(p);
	}
}

/* Every length short of the whole, each in an exactly sized buffer. */
static void
check_truncations(const char *file)
{
	size_t len = 0;
	uint8_t *p = cms_read(file, &len);

	for (size_t n = 0; n < len; n++) {
		uint8_t *t = malloc(n + (n == 0));

		CHECK(t != NULL);
		memcpy(t, p, n);
		CHECK(ms_cms_signed_data_check(t, n) == MS_E_MALFORMED);
		free(t);
	}
	free(p);
}

MS_TEST(cms_sd_check_truncations)
{
	check_truncations("cms/rsa2048-sha256.p7s");
	check_truncations("cms/ec384-sha384-skid.p7s");
	check_truncations("cms/openssl-certs.p7s");
	CHECK(ms_cms_signed_data_check(NULL, 0) == MS_E_MALFORMED);
}

MS_TEST(cms_sd_check_trailing_and_outer)
{
	size_t len = 0;
	uint8_t *p = cms_read("cms/rsa2048-sha256.p7s", &len);
	uint8_t *q = malloc(2 * len + 4);

	CHECK(q != NULL);
	CHECK(p[0] == 0x30 && p[1] == 0x82 && p[2] == 0x01 && p[3] == 0xa8);
	/* trailing zero byte; two blobs back to back */
	memcpy(q, p, len);
	q[len] = 0;
	CHECK(ms_cms_signed_data_check(q, len + 1) == MS_E_MALFORMED);
	memcpy(q + len, p, len);
	CHECK(ms_cms_signed_data_check(q, 2 * len) == MS_E_MALFORMED);
	/* wrong contentType: id-data instead of id-signedData */
	memcpy(q, p, len);
	CHECK(q[14] == 0x02);
	q[14] = 0x01;
	CHECK(ms_cms_signed_data_check(q, len) == MS_E_MALFORMED);
	/* indefinite outer length with its end-of-contents octets */
	q[0] = 0x30;
	q[1] = 0x80;
	memcpy(q + 2, p + 4, len - 4);
	q[len - 2] = 0;
	q[len - 1] = 0;
	CHECK(ms_cms_signed_data_check(q, len) == MS_E_MALFORMED);
	/* non-minimal outer length: 30 83 00 01 a8 */
	q[0] = 0x30;
	q[1] = 0x83;
	q[2] = 0x00;
	q[3] = 0x01;
	q[4] = 0xa8;
	memcpy(q + 5, p + 4, len - 4);
	CHECK(ms_cms_signed_data_check(q, len + 1) == MS_E_MALFORMED);
	free(q);
	free(p);
}

/* Positions of the last length octet of each element the check walks. */
static size_t
walked_length_bytes(const uint8_t *p, size_t len, size_t *pos)
{
	struct ms_span in = { p, len }, ci, wrap, sd, algs, eci, sis, si, b;
	size_t n = 0;

#define NOTE(span) (pos[n++] = (size_t)((span).p - p) - 1)
	CHECK(ms_der_expect_only(in, DER_SEQUENCE, &ci) == MS_OK);
	NOTE(ci);
	CHECK(ms_der_expect(&ci, DER_OID, &b) == MS_OK);
	NOTE(b);
	CHECK(ms_der_expect_only(ci, DER_CTX0_CONS, &wrap) == MS_OK);
	NOTE(wrap);
	CHECK(ms_der_expect_only(wrap, DER_SEQUENCE, &sd) == MS_OK);
	NOTE(sd);
	CHECK(ms_der_expect(&sd, DER_INTEGER, &b) == MS_OK);
	NOTE(b);
	CHECK(ms_der_expect(&sd, DER_SET, &algs) == MS_OK);
	NOTE(algs);
	CHECK(ms_der_expect_only(algs, DER_SEQUENCE, &b) == MS_OK);
	NOTE(b);
	CHECK(ms_der_expect(&sd, DER_SEQUENCE, &eci) == MS_OK);
	NOTE(eci);
	CHECK(ms_der_expect_only(eci, DER_OID, &b) == MS_OK);
	NOTE(b);
	CHECK(ms_der_expect_only(sd, DER_SET, &sis) == MS_OK);
	NOTE(sis);
	CHECK(ms_der_expect_only(sis, DER_SEQUENCE, &si) == MS_OK);
	NOTE(si);
	CHECK(ms_der_expect(&si, DER_INTEGER, &b) == MS_OK);
	NOTE(b);
	CHECK(ms_der_expect(&si, DER_SEQUENCE, &b) == MS_OK);	/* sid */
	NOTE(b);
	CHECK(ms_der_expect(&si, DER_SEQUENCE, &b) == MS_OK);
	NOTE(b);
	CHECK(ms_der_expect(&si, DER_SEQUENCE, &b) == MS_OK);
	NOTE(b);
	CHECK(ms_der_expect_only(si, DER_OCTET_STRING, &b) == MS_OK);
	NOTE(b);
#undef NOTE
	return n;
}

/* Each walked length one more or one less: always refused. */
MS_TEST(cms_sd_check_length_bytes)
{
	size_t len = 0, pos[32], n;
	uint8_t *p = cms_read("cms/rsa2048-sha256.p7s", &len);

	n = walked_length_bytes(p, len, pos);
	CHECK(n == 16);
	for (size_t i = 0; i < n; i++) {
		uint8_t keep = p[pos[i]];

		p[pos[i]] = (uint8_t)(keep + 1);
		CHECK(ms_cms_signed_data_check(p, len) == MS_E_MALFORMED);
		p[pos[i]] = (uint8_t)(keep - 1);
		CHECK(ms_cms_signed_data_check(p, len) == MS_E_MALFORMED);
		p[pos[i]] = keep;
	}
	/* Any single byte changed: no crash, and a clean answer. */
	for (size_t i = 0; i < len; i++) {
		uint8_t keep = p[i];

		for (unsigned int d = 1; d < 256; d <<= 1) {
			ms_err err;

			p[i] = (uint8_t)(keep ^ d);
			err = ms_cms_signed_data_check(p, len);
			CHECK(err == MS_OK || err == MS_E_MALFORMED);
		}
		p[i] = keep;
	}
	CHECK(ms_cms_signed_data_check(p, len) == MS_OK);
	free(p);
}

/* A small hand-built ContentInfo, one field at a time off the norm. */
struct variant {
	uint8_t ci_oid_last;	/* 0x02 signedData */
	uint8_t sd_version;
	uint8_t si_version;
	uint8_t sid_tag;
	uint8_t algs_tag;	/* SET */
	uint8_t eci_oid_last;	/* 0x01 id-data */
	bool econtent;
	bool certs, crls;
	bool signed_attrs, unsigned_attrs;
	unsigned int n_signers;
	bool junk_in_si, junk_in_sd;
	uint8_t sig_tag;	/* OCTET STRING */
};

static const struct variant norm = {
	0x02, 1, 1, DER_SEQUENCE, DER_SET, 0x01, false, false, false, false, false, 1,
	false, false, DER_OCTET_STRING,
};

struct tbuf {
	uint8_t b[1024];
	size_t n;
};

static void
add(struct tbuf *t, const uint8_t *p, size_t n)
{
	CHECK(n <= sizeof(t->b) - t->n);
	memcpy(t->b + t->n, p, n);
	t->n += n;
}

static void
add_hex(struct tbuf *t, const char *hex)
{
	uint8_t tmp[128];

	add(t, tmp, ms_test_hex(hex, tmp, sizeof(tmp)));
}

/* Append TLV(@tag, @inner) to @t. */
static void
add_tlv(struct tbuf *t, uint8_t tag, const struct tbuf *inner)
{
	struct ms_der_out o;

	ms_der_out_init(&o, t->b + t->n, sizeof(t->b) - t->n);
	ms_der_header(&o, tag, inner->n);
	CHECK(o.err == MS_OK);
	t->n += o.len;
	add(t, inner->b, inner->n);
}

static ms_err
check_variant(const struct variant *v)
{
	struct tbuf si = { .n = 0 }, sis = { .n = 0 }, sd = { .n = 0 }, tmp = { .n = 0 };
	struct tbuf ci = { .n = 0 }, wrap = { .n = 0 }, out = { .n = 0 };
	uint8_t ver[3] = { DER_INTEGER, 1, 0 };

	ver[2] = v->si_version;
	add(&si, ver, 3);
	if (v->sid_tag == DER_CTX0_PRIM) {
		add_hex(&tmp, "01 02 03 04");				/* a SKID */
	} else {
		add_hex(&tmp, "30 05 31 03 0c 01 58 02 01 07");	/* stand-in Name, serial 7 */
	}
	add_tlv(&si, v->sid_tag, &tmp);
	add_hex(&si, "30 0b 06 09 60 86 48 01 65 03 04 02 01");
	if (v->signed_attrs) {
		add_hex(&si, "a0 00");
	}
	add_hex(&si, "30 0d 06 09 2a 86 48 86 f7 0d 01 01 01 05 00");
	tmp.n = 0;
	add_hex(&tmp, "de ad be ef");
	add_tlv(&si, v->sig_tag, &tmp);
	if (v->unsigned_attrs) {
		add_hex(&si, "a1 00");
	}
	if (v->junk_in_si) {
		add_hex(&si, "05 00");
	}
	for (unsigned int i = 0; i < v->n_signers; i++) {
		add_tlv(&sis, DER_SEQUENCE, &si);
	}
	ver[2] = v->sd_version;
	add(&sd, ver, 3);
	tmp.n = 0;
	add_hex(&tmp, "30 0b 06 09 60 86 48 01 65 03 04 02 01");
	add_tlv(&sd, v->algs_tag, &tmp);
	tmp.n = 0;
	add_hex(&tmp, "06 09 2a 86 48 86 f7 0d 01 07");
	add(&tmp, &v->eci_oid_last, 1);
	if (v->econtent) {
		add_hex(&tmp, "a0 03 04 01 00");
	}
	add_tlv(&sd, DER_SEQUENCE, &tmp);
	if (v->certs) {
		add_hex(&sd, "a0 04 30 02 05 00");
	}
	if (v->crls) {
		add_hex(&sd, "a1 00");
	}
	add_tlv(&sd, DER_SET, &sis);
	if (v->junk_in_sd) {
		add_hex(&sd, "05 00");
	}
	add_tlv(&wrap, DER_SEQUENCE, &sd);
	add_hex(&ci, "06 09 2a 86 48 86 f7 0d 01 07");
	add(&ci, &v->ci_oid_last, 1);
	add_tlv(&ci, DER_CTX0_CONS, &wrap);
	add_tlv(&out, DER_SEQUENCE, &ci);
	return ms_cms_signed_data_check(out.b, out.n);
}

MS_TEST(cms_sd_check_variants)
{
	struct variant v;

	CHECK(check_variant(&norm) == MS_OK);
#define TRY(field, value, want)				\
	do {						\
		v = norm;				\
		v.field = (value);			\
		CHECK(check_variant(&v) == (want));	\
	} while (0)
	TRY(certs, true, MS_OK);
	TRY(crls, true, MS_OK);
	TRY(signed_attrs, true, MS_OK);
	TRY(unsigned_attrs, true, MS_OK);
	TRY(n_signers, 2, MS_OK);
	TRY(n_signers, 0, MS_E_MALFORMED);
	TRY(ci_oid_last, 0x01, MS_E_MALFORMED);
	TRY(eci_oid_last, 0x02, MS_E_MALFORMED);
	TRY(econtent, true, MS_E_MALFORMED);
	TRY(sd_version, 2, MS_E_MALFORMED);
	TRY(sd_version, 3, MS_E_MALFORMED);	/* v1 SignerInfo in v3 SignedData */
	TRY(si_version, 3, MS_E_MALFORMED);	/* v3 SignerInfo in v1 SignedData */
	TRY(sid_tag, DER_CTX0_PRIM, MS_E_MALFORMED);
	TRY(algs_tag, DER_SEQUENCE, MS_E_MALFORMED);
	TRY(sig_tag, DER_SEQUENCE, MS_E_MALFORMED);
	TRY(junk_in_si, true, MS_E_MALFORMED);
	TRY(junk_in_sd, true, MS_E_MALFORMED);
	/* the -k form: version 3 both, [0] sid */
	v = norm;
	v.sd_version = 3;
	v.si_version = 3;
	v.sid_tag = DER_CTX0_PRIM;
	CHECK(check_variant(&v) == MS_OK);
	v.sid_tag = DER_SEQUENCE;
	CHECK(check_variant(&v) == MS_E_MALFORMED);
#undef TRY
}
