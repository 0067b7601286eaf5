// SPDX-License-Identifier: GPL-2.0-only
/* Unit tests for src/agent/proto.c: the agent's requests and replies. */
#include <string.h>

#include "../../src/agent/agent.h"
#include "test.h"

static const uint8_t digest32[32] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

static struct ms_agent_req
sign_req(void)
{
	struct ms_agent_req r;

	memset(&r, 0, sizeof(r));
	r.type = MS_AGENT_SIGN;
	r.hash = MS_HASH_SHA256;
	r.digest.p = digest32;
	r.digest.len = sizeof(digest32);
	r.module.p = (const uint8_t *)"m.ko";
	r.module.len = 4;
	return r;
}

/* The frame as PROTOCOL.md writes it, byte by byte. */
MS_TEST(agent_proto_sign_known_answer)
{
	struct ms_agent_req r = sign_req();
	uint8_t want[64], got[64];
	size_t want_len, got_len = 0, size = 0;

	want_len = ms_test_hex("00 00 00 29 03 03 20", want, sizeof(want));
	memcpy(want + want_len, digest32, 32);
	want_len += 32;
	want_len += ms_test_hex("00 04 6d 2e 6b 6f", want + want_len, sizeof(want) - want_len);
	CHECK(ms_agent_req_encode(&r, NULL, 0, &size) == MS_OK && size == want_len);
	CHECK_ERR(ms_agent_req_encode(&r, got, sizeof(got), &got_len), MS_OK);
	CHECK(got_len == want_len);
	CHECK_EQ_BYTES(got, want, want_len);
}

/* Every capacity: too small is NOSPACE, from the exact size on the same bytes, guards kept. */
MS_TEST(agent_proto_encode_every_capacity)
{
	struct ms_agent_req r = sign_req();
	uint8_t full[64], buf[80];
	size_t len = 0, n = 0;

	CHECK_ERR(ms_agent_req_encode(&r, full, sizeof(full), &len), MS_OK);
	for (size_t cap = 0; cap <= len + 1; cap++) {
		memset(buf, 0xa5, sizeof(buf));
		if (cap < len) {
			CHECK_ERR(ms_agent_req_encode(&r, buf + 8, cap, &n), MS_E_NOSPACE);
		} else {
			CHECK(ms_agent_req_encode(&r, buf + 8, cap, &n) == MS_OK && n == len);
			CHECK_EQ_BYTES(buf + 8, full, len);
		}
		for (size_t i = 0; i < 8; i++) {
			CHECK(buf[i] == 0xa5);
		}
		for (size_t i = 8 + cap; i < sizeof(buf); i++) {
			CHECK(buf[i] == 0xa5);
		}
	}
}

static void
round_trip(const struct ms_agent_req *r)
{
	uint8_t frame[MS_AGENT_REQ_FRAME_MAX];
	struct ms_agent_req back;
	size_t len = 0, body = 0;
	const char *why = NULL;

	CHECK_ERR(ms_agent_req_encode(r, frame, sizeof(frame), &len), MS_OK);
	CHECK_ERR(ms_agent_frame_len(frame, MS_AGENT_BODY_MAX, &body), MS_OK);
	CHECK(body + MS_AGENT_LEN_BYTES == len);
	CHECK_ERR(ms_agent_req_parse(frame + 4, body, &back, &why), MS_OK);
	CHECK(back.type == r->type);
	if (r->type == MS_AGENT_SIGN) {
		CHECK(back.hash == r->hash);
		CHECK(back.digest.len == r->digest.len);
		CHECK_EQ_BYTES(back.digest.p, r->digest.p, r->digest.len);
		CHECK(back.module.len == r->module.len);
		CHECK(r->module.len == 0 || memcmp(back.module.p, r->module.p, r->module.len) == 0);
	}
	if (r->type == MS_AGENT_MATCH) {
		CHECK(back.cert.len == r->cert.len);
		CHECK_EQ_BYTES(back.cert.p, r->cert.p, r->cert.len);
	}
	/* Every truncation, and one byte more, is refused. */
	for (size_t n = 0; n < body; n++) {
		CHECK_ERR(ms_agent_req_parse(frame + 4, n, &back, &why), MS_E_MALFORMED);
		CHECK(why != NULL);
	}
	frame[len] = 0;
	CHECK_ERR(ms_agent_req_parse(frame + 4, body + 1, &back, &why), MS_E_MALFORMED);
}

MS_TEST(agent_proto_round_trips)
{
	static uint8_t cert[MS_AGENT_CERT_MAX];
	static uint8_t path[MS_AGENT_PATH_MAX];
	uint8_t d64[64] = { 1 };
	struct ms_agent_req r;

	memset(&r, 0, sizeof(r));
	r.type = MS_AGENT_HELLO;
	r.version = MS_AGENT_PROTO_VERSION;
	round_trip(&r);
	r.type = MS_AGENT_STOP;
	round_trip(&r);
	r.type = MS_AGENT_MATCH;
	memset(cert, 0x30, sizeof(cert));
	r.cert.p = cert;
	r.cert.len = 1;
	round_trip(&r);
	r.cert.len = sizeof(cert);
	round_trip(&r);

	r = sign_req();
	round_trip(&r);
	r.module.len = 0;	/* a client need not name a module */
	round_trip(&r);
	r.module.p = NULL;	/* nor have a buffer for none */
	round_trip(&r);
	memset(path, 'a', sizeof(path));
	r.module.p = path;
	r.module.len = sizeof(path);
	round_trip(&r);
	r.hash = MS_HASH_SHA512;
	r.digest.p = d64;
	r.digest.len = 64;
	round_trip(&r);
}

static ms_err
parse_hex(const char *hex)
{
	uint8_t buf[256];
	size_t n = ms_test_hex(hex, buf, sizeof(buf));
	struct ms_agent_req r;
	const char *why = NULL;

	return ms_agent_req_parse(buf, n, &r, &why);
}

MS_TEST(agent_proto_refuses)
{
	struct ms_agent_req r = sign_req();
	uint8_t frame[128];
	size_t len = 0;
	const char *why = NULL;
	struct ms_agent_req back;

	CHECK_ERR(parse_hex(""), MS_E_MALFORMED);
	CHECK_ERR(parse_hex("00"), MS_E_MALFORMED);	/* no such type */
	CHECK_ERR(parse_hex("05"), MS_E_MALFORMED);
	CHECK_ERR(parse_hex("01"), MS_E_MALFORMED);	/* HELLO without version */
	CHECK_ERR(parse_hex("01 02"), MS_E_UNSUPPORTED);	/* another version */
	CHECK_ERR(parse_hex("01 01"), MS_OK);
	CHECK_ERR(parse_hex("04 00"), MS_E_MALFORMED);	/* STOP with a byte after it */
	CHECK_ERR(parse_hex("02 00 00 00 00"), MS_E_MALFORMED);	/* empty certificate */
	CHECK_ERR(parse_hex("02 00 01 00 01 30"), MS_E_MALFORMED);	/* over 64 KiB */
	CHECK_ERR(parse_hex("02 00 00 00 02 30"), MS_E_MALFORMED);	/* truncated */
	/* SIGN: md5 (no code), a code past the table, a sha1 digest under sha256. */
	CHECK_ERR(parse_hex("03 00 10 00 00"), MS_E_MALFORMED);
	CHECK_ERR(parse_hex("03 09 40"), MS_E_MALFORMED);

	CHECK_ERR(ms_agent_req_encode(&r, frame, sizeof(frame), &len), MS_OK);
	frame[6] = 20;		/* digest length of sha1 under sha256 */
	CHECK_ERR(ms_agent_req_parse(frame + 4, len - 4, &back, &why), MS_E_MALFORMED);
	frame[6] = 32;
	frame[5] = 9;		/* unknown hash code */
	CHECK_ERR(ms_agent_req_parse(frame + 4, len - 4, &back, &why), MS_E_MALFORMED);
	frame[5] = 3;
	frame[len - 2] = '\0';	/* a NUL in the module path */
	CHECK_ERR(ms_agent_req_parse(frame + 4, len - 4, &back, &why), MS_E_MALFORMED);
	frame[len - 2] = 'k';
	CHECK_ERR(ms_agent_req_parse(frame + 4, len - 4, &back, &why), MS_OK);
	frame[4 + 3 + 32] = 0x10;	/* path length 4096 + 4 */
	CHECK_ERR(ms_agent_req_parse(frame + 4, len - 4, &back, &why), MS_E_MALFORMED);

	/* The encoder keeps the same rules. */
	r.digest.len = 20;
	CHECK_ERR(ms_agent_req_encode(&r, frame, sizeof(frame), &len), MS_E_ARG);
	r = sign_req();
	r.hash = (enum ms_hash_alg)99;
	CHECK_ERR(ms_agent_req_encode(&r, frame, sizeof(frame), &len), MS_E_ARG);
}

MS_TEST(agent_proto_frame_len)
{
	uint8_t hdr[4] = { 0, 0, 0, 0 };
	size_t n = 0;

	CHECK_ERR(ms_agent_frame_len(hdr, 100, &n), MS_E_MALFORMED);
	hdr[3] = 100;
	CHECK(ms_agent_frame_len(hdr, 100, &n) == MS_OK && n == 100);
	hdr[3] = 101;
	CHECK_ERR(ms_agent_frame_len(hdr, 100, &n), MS_E_MALFORMED);
	hdr[0] = 0x80;
	hdr[3] = 1;
	CHECK_ERR(ms_agent_frame_len(hdr, 100, &n), MS_E_MALFORMED);
}

static void
reply_round_trip(const struct ms_agent_reply *r, enum ms_agent_msg expect)
{
	uint8_t frame[MS_AGENT_REPLY_FRAME_MAX];
	struct ms_agent_reply back;
	size_t len = 0;
	const char *why = NULL;

	CHECK_ERR(ms_agent_reply_encode(r, frame, sizeof(frame), &len), MS_OK);
	CHECK(len <= MS_AGENT_REPLY_FRAME_MAX);
	CHECK_ERR(ms_agent_reply_parse(frame + 4, len - 4, expect, &back, &why), MS_OK);
	CHECK(back.type == r->type && back.status == r->status);
	CHECK(back.text.len == r->text.len);
	if (r->type == MS_AGENT_HELLO && r->status == MS_AGENT_ST_OK) {
		CHECK(back.key_type == r->key_type && back.lanes == r->lanes);
		CHECK(back.key_name.len == r->key_name.len);
		CHECK_EQ_BYTES(back.key_name.p, r->key_name.p, r->key_name.len);
	}
	if (r->type == MS_AGENT_SIGN && r->status == MS_AGENT_ST_OK) {
		CHECK(back.sig.len == r->sig.len);
		CHECK_EQ_BYTES(back.sig.p, r->sig.p, r->sig.len);
	}
	for (size_t n = 0; n < len - 4; n++) {
		CHECK_ERR(ms_agent_reply_parse(frame + 4, n, expect, &back, &why), MS_E_MALFORMED);
	}
	/* A reply to another request is not this one's. */
	CHECK(r->type == 0 ||
	      ms_agent_reply_parse(frame + 4, len - 4, expect == MS_AGENT_SIGN ? MS_AGENT_MATCH :
				   MS_AGENT_SIGN, &back, &why) == MS_E_MALFORMED);
}

MS_TEST(agent_proto_replies)
{
	static const uint8_t sig[256] = { 0x42 };
	static const char name[] = "pkcs11:token=t;object=k";
	struct ms_agent_reply r;

	memset(&r, 0, sizeof(r));
	r.type = MS_AGENT_HELLO;
	r.status = MS_AGENT_ST_OK;
	r.key_type = MS_KEY_EC;
	r.lanes = 3;
	r.key_name.p = (const uint8_t *)name;
	r.key_name.len = sizeof(name) - 1;
	reply_round_trip(&r, MS_AGENT_HELLO);

	memset(&r, 0, sizeof(r));
	r.type = MS_AGENT_SIGN;
	r.status = MS_AGENT_ST_OK;
	r.sig.p = sig;
	r.sig.len = sizeof(sig);
	reply_round_trip(&r, MS_AGENT_SIGN);
	r.status = MS_AGENT_ST_FAILED;
	r.text.p = (const uint8_t *)"C_Sign: CKR_DEVICE_ERROR";
	r.text.len = 24;
	reply_round_trip(&r, MS_AGENT_SIGN);

	memset(&r, 0, sizeof(r));
	r.type = MS_AGENT_MATCH;
	r.status = MS_AGENT_ST_MISMATCH;
	reply_round_trip(&r, MS_AGENT_MATCH);

	/* A refusal answers any request. */
	memset(&r, 0, sizeof(r));
	r.status = MS_AGENT_ST_REFUSED;
	r.text.p = (const uint8_t *)"bad";
	r.text.len = 3;
	reply_round_trip(&r, MS_AGENT_SIGN);
	reply_round_trip(&r, MS_AGENT_HELLO);
	r.status = MS_AGENT_ST_OK;	/* a refusal is never OK */
	CHECK_ERR(ms_agent_reply_encode(&r, NULL, 0, &(size_t){ 0 }), MS_E_ARG);
}

MS_TEST(agent_proto_reply_text_is_printable)
{
	struct ms_agent_reply r, back;
	uint8_t frame[2 * MS_AGENT_TEXT_MAX];
	char text[MS_AGENT_TEXT_MAX + 10];
	size_t len = 0;
	const char *why = NULL;

	memset(&r, 0, sizeof(r));
	memset(text, 'x', sizeof(text));
	text[3] = '\n';
	text[4] = '\033';
	r.type = MS_AGENT_SIGN;
	r.status = MS_AGENT_ST_FAILED;
	r.text.p = (const uint8_t *)text;
	r.text.len = sizeof(text);
	/* The encoder cuts and cleans a message... */
	CHECK_ERR(ms_agent_reply_encode(&r, frame, sizeof(frame), &len), MS_OK);
	CHECK_ERR(ms_agent_reply_parse(frame + 4, len - 4, MS_AGENT_SIGN, &back, &why), MS_OK);
	CHECK(back.text.len == MS_AGENT_TEXT_MAX);
	CHECK(back.text.p[3] == '?' && back.text.p[4] == '?');
	/* ...and the parser refuses a control character from an agent that did not. */
	frame[4 + 4 + 3] = '\n';
	CHECK_ERR(ms_agent_reply_parse(frame + 4, len - 4, MS_AGENT_SIGN, &back, &why), MS_E_MALFORMED);
}
