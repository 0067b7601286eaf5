// SPDX-License-Identifier: GPL-2.0-only
/*
 * The agent's wire protocol: requests and replies built and read field by
 * field, in the order of src/agent/PROTOCOL.md. Parses untrusted input.
 */
#include <string.h>

#include "agent.h"

/* Wire codes of the hashes: fixed by the protocol, not by enum ms_hash_alg. */
static const struct {
	uint8_t code;
	enum ms_hash_alg alg;
} hash_codes[] = {
	{ 1, MS_HASH_SHA1 },
	{ 2, MS_HASH_SHA224 },
	{ 3, MS_HASH_SHA256 },
	{ 4, MS_HASH_SHA384 },
	{ 5, MS_HASH_SHA512 },
	{ 6, MS_HASH_SHA3_256 },
	{ 7, MS_HASH_SHA3_384 },
	{ 8, MS_HASH_SHA3_512 },
};

#define N_HASH_CODES (sizeof(hash_codes) / sizeof(hash_codes[0]))

static ms_err
hash_of_code(uint8_t code, enum ms_hash_alg *alg)
{
	for (size_t i = 0; i < N_HASH_CODES; i++) {
		if (hash_codes[i].code == code) {
			*alg = hash_codes[i].alg;
			return MS_OK;
		}
	}
	return MS_E_MALFORMED;
}

static ms_err
code_of_hash(enum ms_hash_alg alg, uint8_t *code)
{
	for (size_t i = 0; i < N_HASH_CODES; i++) {
		if (hash_codes[i].alg == alg) {
			*code = hash_codes[i].code;
			return MS_OK;
		}
	}
	return MS_E_ARG;
}

/* Reading: a span consumed from the front (ms_span_take() and friends, src/common). */

/* A length-prefixed (u16) field of @min..@max bytes. */
static ms_err
take_field16(struct ms_span *in, size_t min, size_t max, struct ms_span *out)
{
	uint16_t n = 0;

	if (ms_span_get_be16(in, &n) != MS_OK || n < min || n > max) {
		return MS_E_MALFORMED;
	}
	return ms_span_take(in, n, out);
}

static bool
is_printable(const struct ms_span *s)
{
	for (size_t i = 0; i < s->len; i++) {
		if (s->p[i] < 0x20 || s->p[i] > 0x7e) {
			return false;
		}
	}
	return true;
}

ms_err
ms_agent_frame_len(const uint8_t hdr[MS_AGENT_LEN_BYTES], size_t max, size_t *len)
{
	struct ms_span h = { hdr, MS_AGENT_LEN_BYTES };
	uint32_t n = 0;

	if (ms_span_get_be32(&h, &n) != MS_OK || n == 0 || n > max) {
		return MS_E_MALFORMED;
	}
	*len = n;
	return MS_OK;
}

static ms_err
parse_sign(struct ms_span *in, struct ms_agent_req *r, const char **why)
{
	uint8_t code = 0, dlen = 0;

	if (ms_span_get_u8(in, &code) != MS_OK || hash_of_code(code, &r->hash) != MS_OK) {
		*why = "SIGN: not a hash the kernel verifies modules with";
		return MS_E_MALFORMED;
	}
	if (ms_span_get_u8(in, &dlen) != MS_OK || dlen != ms_cms_hash_size(r->hash)) {
		*why = "SIGN: the digest is not as long as its hash's";
		return MS_E_MALFORMED;
	}
	if (ms_span_take(in, dlen, &r->digest) != MS_OK) {
		*why = "SIGN: truncated digest";
		return MS_E_MALFORMED;
	}
	if (take_field16(in, 0, MS_AGENT_PATH_MAX, &r->module) != MS_OK) {
		*why = "SIGN: module path truncated or over 4096 bytes";
		return MS_E_MALFORMED;
	}
	if (memchr(r->module.p, '\0', r->module.len) != NULL) {
		*why = "SIGN: module path holds a NUL byte";
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

ms_err
ms_agent_req_parse(const uint8_t *p, size_t len, struct ms_agent_req *out, const char **why)
{
	struct ms_span in = { p, len };
	uint8_t type = 0, version = 0;
	uint32_t n = 0;
	ms_err err = MS_E_MALFORMED;

	memset(out, 0, sizeof(*out));
	*why = "empty request";
	if (len > MS_AGENT_BODY_MAX) {
		*why = "request over the size limit";
		return MS_E_MALFORMED;
	}
	if (ms_span_get_u8(&in, &type) != MS_OK) {
		return MS_E_MALFORMED;
	}
	switch (type) {
	case MS_AGENT_HELLO:
		out->type = MS_AGENT_HELLO;
		if (ms_span_get_u8(&in, &version) != MS_OK) {
			*why = "HELLO: no version";
			return MS_E_MALFORMED;
		}
		out->version = version;
		err = MS_OK;
		break;
	case MS_AGENT_MATCH:
		out->type = MS_AGENT_MATCH;
		if (ms_span_get_be32(&in, &n) != MS_OK || n == 0 || n > MS_AGENT_CERT_MAX ||
		    ms_span_take(&in, n, &out->cert) != MS_OK) {
			*why = "MATCH: certificate empty, truncated or over 64 KiB";
			return MS_E_MALFORMED;
		}
		err = MS_OK;
		break;
	case MS_AGENT_SIGN:
		out->type = MS_AGENT_SIGN;
		err = parse_sign(&in, out, why);
		break;
	case MS_AGENT_STOP:
		out->type = MS_AGENT_STOP;
		err = MS_OK;
		break;
	default:
		*why = "unknown request type";
		return MS_E_MALFORMED;
	}
	if (err != MS_OK) {
		return err;
	}
	if (in.len != 0) {
		*why = "bytes after the request";
		return MS_E_MALFORMED;
	}
	if (out->type == MS_AGENT_HELLO && out->version != MS_AGENT_PROTO_VERSION) {
		*why = "HELLO: another protocol version";
		return MS_E_UNSUPPORTED;
	}
	*why = NULL;
	return MS_OK;
}

/* Writing: a bounds-checked cursor with a sticky error, as the DER writer's. */
struct out {
	uint8_t *buf;		/* NULL: count only */
	size_t cap;
	size_t len;
	ms_err err;
};

static void
put(struct out *o, const void *p, size_t n)
{
	if (o->err != MS_OK || n == 0) {
		return;
	}
	if (o->buf != NULL) {
		if (n > o->cap - o->len) {
			o->err = MS_E_NOSPACE;
			return;
		}
		memcpy(o->buf + o->len, p, n);
	}
	o->len += n;
}

static void
put_u8(struct out *o, unsigned v)
{
	uint8_t b = (uint8_t)v;

	put(o, &b, 1);
}

static void
put_u16(struct out *o, size_t v)
{
	uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };

	put(o, b, 2);
}

static void
put_u32(struct out *o, size_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };

	put(o, b, 4);
}

/* Backs the body length into the header the frame began with. */
static ms_err
frame_end(struct out *o, size_t *out_len)
{
	size_t body = o->len - MS_AGENT_LEN_BYTES;

	if (o->err != MS_OK) {
		return o->err;
	}
	if (o->buf != NULL) {
		o->buf[0] = (uint8_t)(body >> 24);
		o->buf[1] = (uint8_t)(body >> 16);
		o->buf[2] = (uint8_t)(body >> 8);
		o->buf[3] = (uint8_t)body;
	}
	*out_len = o->len;
	return MS_OK;
}

static ms_err
check_req(const struct ms_agent_req *r, uint8_t *code)
{
	switch (r->type) {
	case MS_AGENT_HELLO:
		return r->version <= 0xff ? MS_OK : MS_E_ARG;
	case MS_AGENT_MATCH:
		return r->cert.len >= 1 && r->cert.len <= MS_AGENT_CERT_MAX ? MS_OK : MS_E_ARG;
	case MS_AGENT_SIGN:
		if (code_of_hash(r->hash, code) != MS_OK ||
		    r->digest.len != ms_cms_hash_size(r->hash) ||
		    r->module.len > MS_AGENT_PATH_MAX ||
		    (r->module.len > 0 && memchr(r->module.p, '\0', r->module.len) != NULL)) {
			return MS_E_ARG;
		}
		return MS_OK;
	case MS_AGENT_STOP:
		return MS_OK;
	}
	return MS_E_ARG;
}

ms_err
ms_agent_req_encode(const struct ms_agent_req *r, uint8_t *out, size_t cap, size_t *out_len)
{
	struct out o = { out, cap, 0, MS_OK };
	uint8_t code = 0;

	if (check_req(r, &code) != MS_OK) {
		return MS_E_ARG;
	}
	put_u32(&o, 0);		/* the length, filled in at the end */
	put_u8(&o, r->type);
	switch (r->type) {
	case MS_AGENT_HELLO:
		put_u8(&o, r->version);
		break;
	case MS_AGENT_MATCH:
		put_u32(&o, r->cert.len);
		put(&o, r->cert.p, r->cert.len);
		break;
	case MS_AGENT_SIGN:
		put_u8(&o, code);
		put_u8(&o, (unsigned)r->digest.len);
		put(&o, r->digest.p, r->digest.len);
		put_u16(&o, r->module.len);
		put(&o, r->module.p, r->module.len);
		break;
	case MS_AGENT_STOP:
		break;
	}
	return frame_end(&o, out_len);
}

static ms_err
parse_hello_ok(struct ms_span *in, struct ms_agent_reply *r)
{
	uint8_t version = 0, kt = 0;
	uint16_t lanes = 0;

	if (ms_span_get_u8(in, &version) != MS_OK || ms_span_get_u8(in, &kt) != MS_OK ||
	    ms_span_get_be16(in, &lanes) != MS_OK) {
		return MS_E_MALFORMED;
	}
	r->version = version;
	if (r->version != MS_AGENT_PROTO_VERSION ||
	    (kt != MS_KEY_RSA && kt != MS_KEY_EC && kt != MS_KEY_MLDSA) || lanes == 0) {
		return MS_E_MALFORMED;
	}
	r->key_type = kt == MS_KEY_RSA ? MS_KEY_RSA : kt == MS_KEY_EC ? MS_KEY_EC : MS_KEY_MLDSA;
	r->lanes = lanes;
	if (take_field16(in, 1, MS_AGENT_NAME_MAX, &r->key_name) != MS_OK ||
	    !is_printable(&r->key_name)) {
		return MS_E_MALFORMED;
	}
	return MS_OK;
}

ms_err
ms_agent_reply_parse(const uint8_t *p, size_t len, enum ms_agent_msg expect,
		     struct ms_agent_reply *out, const char **why)
{
	struct ms_span in = { p, len };
	uint8_t type = 0, status = 0;

	memset(out, 0, sizeof(*out));
	*why = "reply truncated";
	if (ms_span_get_u8(&in, &type) != MS_OK || ms_span_get_u8(&in, &status) != MS_OK) {
		return MS_E_MALFORMED;
	}
	if (type != MS_AGENT_REFUSAL && type != (expect | MS_AGENT_REPLY_BIT)) {
		*why = "reply to another request";
		return MS_E_MALFORMED;
	}
	if (status > MS_AGENT_ST_STOPPING ||
	    (type == MS_AGENT_REFUSAL && status != MS_AGENT_ST_REFUSED)) {
		*why = "unknown reply status";
		return MS_E_MALFORMED;
	}
	out->type = type == MS_AGENT_REFUSAL ? 0 : expect;
	out->status = (enum ms_agent_status)status;
	if (take_field16(&in, 0, MS_AGENT_TEXT_MAX, &out->text) != MS_OK ||
	    !is_printable(&out->text)) {
		*why = "reply message truncated or not printable";
		return MS_E_MALFORMED;
	}
	if (out->status == MS_AGENT_ST_OK && out->type == MS_AGENT_HELLO &&
	    parse_hello_ok(&in, out) != MS_OK) {
		*why = "HELLO reply: bad version, key type, lanes or key name";
		return MS_E_MALFORMED;
	}
	if (out->status == MS_AGENT_ST_OK && out->type == MS_AGENT_SIGN &&
	    take_field16(&in, 1, MS_SIG_MAX, &out->sig) != MS_OK) {
		*why = "SIGN reply: signature empty, truncated or too long";
		return MS_E_MALFORMED;
	}
	if (in.len != 0) {
		*why = "bytes after the reply";
		return MS_E_MALFORMED;
	}
	*why = NULL;
	return MS_OK;
}

/* A message, cut to the ceiling and with control characters made harmless. */
static void
put_text(struct out *o, const struct ms_span *t)
{
	size_t n = t->len < MS_AGENT_TEXT_MAX ? t->len : MS_AGENT_TEXT_MAX;

	put_u16(o, n);
	for (size_t i = 0; i < n; i++) {
		put_u8(o, t->p[i] < 0x20 || t->p[i] > 0x7e ? '?' : t->p[i]);
	}
}

ms_err
ms_agent_reply_encode(const struct ms_agent_reply *r, uint8_t *out, size_t cap, size_t *out_len)
{
	struct out o = { out, cap, 0, MS_OK };
	bool refusal = r->type == 0;
	bool ok = r->status == MS_AGENT_ST_OK;

	if (r->status > MS_AGENT_ST_STOPPING || (refusal && r->status != MS_AGENT_ST_REFUSED) ||
	    (!refusal && (r->type < MS_AGENT_HELLO || r->type > MS_AGENT_STOP))) {
		return MS_E_ARG;
	}
	if (ok && r->type == MS_AGENT_HELLO &&
	    (r->lanes == 0 || r->lanes > 0xffff || r->key_name.len == 0 ||
	     r->key_name.len > MS_AGENT_NAME_MAX || !is_printable(&r->key_name))) {
		return MS_E_ARG;
	}
	if (ok && r->type == MS_AGENT_SIGN && (r->sig.len == 0 || r->sig.len > MS_SIG_MAX)) {
		return MS_E_ARG;
	}
	put_u32(&o, 0);
	put_u8(&o, refusal ? MS_AGENT_REFUSAL : (r->type | MS_AGENT_REPLY_BIT));
	put_u8(&o, r->status);
	put_text(&o, &r->text);
	if (ok && r->type == MS_AGENT_HELLO) {
		put_u8(&o, MS_AGENT_PROTO_VERSION);
		put_u8(&o, r->key_type);
		put_u16(&o, r->lanes);
		put_u16(&o, r->key_name.len);
		put(&o, r->key_name.p, r->key_name.len);
	}
	if (ok && r->type == MS_AGENT_SIGN) {
		put_u16(&o, r->sig.len);
		put(&o, r->sig.p, r->sig.len);
	}
	return frame_end(&o, out_len);
}
