// SPDX-License-Identifier: GPL-2.0-only
/*
 * The identifiers a SignerInfo names a certificate by (issuer, serial,
 * subjectKeyIdentifier) and X.501 Names as text for messages. Parses
 * untrusted input.
 */
#include <stdio.h>
#include <string.h>

#include <mbedtls/x509_crt.h>

#include "cms_internal.h"

struct ms_span
ms_cms_cert_issuer(const struct ms_cms_cert *cert)
{
	struct ms_span none = { NULL, 0 };

	return cert == NULL ? none : cert->issuer;
}

struct ms_span
ms_cms_cert_serial(const struct ms_cms_cert *cert)
{
	struct ms_span none = { NULL, 0 };

	return cert == NULL ? none : cert->serial;
}

struct ms_span
ms_cms_cert_skid(const struct ms_cms_cert *cert)
{
	struct ms_span none = { NULL, 0 };

	return cert == NULL ? none : cert->skid;
}

struct ms_span
ms_cms_cert_subject_name(const struct ms_cms_cert *cert)
{
	struct ms_span name = { NULL, 0 };

	/* subject_raw covers the whole Name TLV, as issuer_raw does (cert.c). */
	if (cert != NULL && cert->crt != NULL) {
		name.p = cert->crt->subject_raw.p;
		name.len = cert->crt->subject_raw.len;
	} else if (cert != NULL) {
		name = cert->subject;	/* ML-DSA: cert_mldsa.c */
	}
	return name;
}

/* Attribute types with a short name (RFC 4514, 3; RFC 5280, 4.1.2.4). */
struct attr_name {
	const uint8_t *oid;	/* OID content bytes */
	size_t len;
	const char *name;
};

static const uint8_t oid_cn[] = { 0x55, 0x04, 0x03 };	/* 2.5.4.3 */
static const uint8_t oid_sn[] = { 0x55, 0x04, 0x05 };	/* 2.5.4.5 */
static const uint8_t oid_c[] = { 0x55, 0x04, 0x06 };	/* 2.5.4.6 */
static const uint8_t oid_l[] = { 0x55, 0x04, 0x07 };	/* 2.5.4.7 */
static const uint8_t oid_st[] = { 0x55, 0x04, 0x08 };	/* 2.5.4.8 */
static const uint8_t oid_o[] = { 0x55, 0x04, 0x0a };	/* 2.5.4.10 */
static const uint8_t oid_ou[] = { 0x55, 0x04, 0x0b };	/* 2.5.4.11 */
static const uint8_t oid_email[] = {			/* 1.2.840.113549.1.9.1 */
	0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01,
};
static const uint8_t oid_dc[] = {			/* 0.9.2342.19200300.100.1.25 */
	0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19,
};

#define ROW(o, n) { (o), sizeof(o), (n) }
static const struct attr_name attr_names[] = {
	ROW(oid_cn, "CN"), ROW(oid_sn, "serialNumber"), ROW(oid_c, "C"), ROW(oid_l, "L"),
	ROW(oid_st, "ST"), ROW(oid_o, "O"), ROW(oid_ou, "OU"), ROW(oid_email, "emailAddress"),
	ROW(oid_dc, "DC"),
};
#undef ROW

/* A bounded text cursor: always NUL-terminated, silently truncating. */
struct text {
	char *buf;
	size_t cap;	/* > 0 */
	size_t len;	/* < cap */
};

static void
text_putc(struct text *t, char c)
{
	if (t->len + 1 < t->cap) {
		t->buf[t->len++] = c;
		t->buf[t->len] = '\0';
	}
}

static void
text_puts(struct text *t, const char *s)
{
	for (; *s != '\0'; s++) {
		text_putc(t, *s);
	}
}

/* Dotted form of an OID with arcs up to 2^56 (longer ones print as "?"). */
static void
text_oid(struct text *t, struct ms_span oid)
{
	uint64_t arc = 0;
	size_t i, n_bytes = 0;
	char num[24];
	bool first = true;

	for (i = 0; i < oid.len; i++) {
		if (n_bytes == 8) {
			text_puts(t, "?");
			return;
		}
		arc = (arc << 7) | (oid.p[i] & 0x7f);
		n_bytes++;
		if ((oid.p[i] & 0x80) != 0) {
			continue;
		}
		if (first) {
			/* X.690, 8.19.4: the first two arcs share one number. */
			unsigned int top = arc < 40 ? 0 : (arc < 80 ? 1 : 2);

			snprintf(num, sizeof(num), "%u.%llu", top,
				 (unsigned long long)(arc - 40u * top));
			first = false;
		} else {
			snprintf(num, sizeof(num), ".%llu", (unsigned long long)arc);
		}
		text_puts(t, num);
		arc = 0;
		n_bytes = 0;
	}
}

/*
 * A string value's bytes; anything but printable ASCII shows as '?'
 * (@keep_utf8: only control bytes do, as modinfo shows the signer).
 */
static void
text_value(struct text *t, struct ms_span v, bool keep_utf8)
{
	size_t i;

	for (i = 0; i < v.len; i++) {
		uint8_t c = v.p[i];

		if (c < 0x20 || c == 0x7f || (!keep_utf8 && c > 0x7e)) {
			text_putc(t, '?');
		} else {
			text_putc(t, (char)c);
		}
	}
}

static const char *
attr_short_name(struct ms_span oid)
{
	size_t i;

	for (i = 0; i < sizeof(attr_names) / sizeof(attr_names[0]); i++) {
		if (ms_der_span_eq(oid, attr_names[i].oid, attr_names[i].len)) {
			return attr_names[i].name;
		}
	}
	return NULL;
}

/*
 * Walks Name ::= SEQUENCE OF SET OF SEQUENCE { type OID, value ANY }
 * (RFC 5280, 4.1.2.4): all attributes as "T=v, T=v" into @t, or with
 * @cn_only only the first commonName's value.
 */
static ms_err
name_walk(struct ms_span name, struct text *t, bool cn_only)
{
	struct ms_span rdns = { NULL, 0 }, rdn = { NULL, 0 };
	struct ms_span oid = { NULL, 0 }, value = { NULL, 0 };
	bool first_rdn = true;
	uint8_t tag = 0;
	ms_err err;

	err = ms_der_expect_only(name, DER_SEQUENCE, &rdns);
	while (err == MS_OK && rdns.len > 0) {
		bool first_atv = true;

		err = ms_der_expect(&rdns, DER_SET, &rdn);
		while (err == MS_OK && rdn.len > 0) {
			const char *short_name = NULL;

			err = ms_der_name_atv(&rdn, &oid, &tag, &value);
			if (err != MS_OK) {
				break;
			}
			short_name = attr_short_name(oid);
			if (cn_only) {
				if (short_name != NULL && strcmp(short_name, "CN") == 0) {
					text_value(t, value, true);
					return MS_OK;
				}
				continue;
			}
			text_puts(t, first_atv ? (first_rdn ? "" : ", ") : " + ");
			if (short_name != NULL) {
				text_puts(t, short_name);
			} else {
				text_oid(t, oid);
			}
			text_putc(t, '=');
			text_value(t, value, false);
			first_atv = false;
			first_rdn = false;
		}
	}
	return err;
}

static ms_err
name_text(struct ms_span name, char *out, size_t cap, bool cn_only)
{
	struct text t = { out, cap, 0 };
	ms_err err;

	if (out == NULL || cap == 0) {
		return MS_E_ARG;
	}
	out[0] = '\0';
	err = name_walk(name, &t, cn_only);
	if (err != MS_OK) {
		out[0] = '\0';
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

ms_err
ms_cms_name_text(struct ms_span name, char *out, size_t cap)
{
	return name_text(name, out, cap, false);
}

ms_err
ms_cms_name_cn(struct ms_span name, char *out, size_t cap)
{
	return name_text(name, out, cap, true);
}
