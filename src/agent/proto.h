/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's wire protocol (src/agent/PROTOCOL.md): length-prefixed frames
 * on a Unix stream socket, encoded and parsed field by field. Used by the
 * agent (requests in, replies out) and by its client signer
 * (src/signer/agent.c, requests out, replies in). Knows nothing of tokens,
 * files or sockets.
 */
#ifndef MS_AGENT_PROTO_H
#define MS_AGENT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "../cms/cms.h"
#include "../common/ms_common.h"

#define MS_AGENT_PROTO_VERSION 1

/* A frame: 4-byte big-endian length of what follows, then that many bytes. */
#define MS_AGENT_LEN_BYTES 4
/* Ceilings. A certificate is at most 64 KiB (style guide, section 5). */
#define MS_AGENT_CERT_MAX (64u * 1024u)
#define MS_AGENT_PATH_MAX 4096u		/* the module path a client names */
#define MS_AGENT_NAME_MAX 4096u		/* the key name of a HELLO reply */
#define MS_AGENT_TEXT_MAX 1024u		/* a reply's message */
/* The longest frame body either side accepts: a MATCH with the largest certificate. */
#define MS_AGENT_BODY_MAX (MS_AGENT_CERT_MAX + 16u)

enum ms_agent_msg {
	MS_AGENT_HELLO = 1,	/* version; reply: key type, lanes, key name */
	MS_AGENT_MATCH = 2,	/* a certificate; reply: is the agent's key its key */
	MS_AGENT_SIGN = 3,	/* hash, digest, module path; reply: the raw signature */
	MS_AGENT_STOP = 4,	/* `modsign agent --stop`; reply, then the agent stops */
};

#define MS_AGENT_REPLY_BIT 0x80u	/* a reply's type is its request's with this bit */
#define MS_AGENT_REFUSAL 0xffu		/* the reply to a request that did not parse */

enum ms_agent_status {
	MS_AGENT_ST_OK = 0,
	MS_AGENT_ST_MISMATCH = 1,	/* MATCH: not the certificate's key */
	MS_AGENT_ST_FAILED = 2,		/* the key or token failed; text says how */
	MS_AGENT_ST_REFUSED = 3,	/* malformed, not allowed, or another uid */
	MS_AGENT_ST_STOPPING = 4,	/* the agent is shutting down: nothing more signed */
};

/* A parsed request; spans point into the frame body it was parsed from. */
struct ms_agent_req {
	enum ms_agent_msg type;
	unsigned version;		/* HELLO */
	struct ms_span cert;		/* MATCH: DER or PEM, 1..MS_AGENT_CERT_MAX bytes */
	enum ms_hash_alg hash;		/* SIGN */
	struct ms_span digest;		/* SIGN: exactly ms_cms_hash_size(hash) bytes */
	struct ms_span module;		/* SIGN: 0..MS_AGENT_PATH_MAX bytes, no NUL */
};

/* A parsed reply; spans point into the frame body it was parsed from. */
struct ms_agent_reply {
	enum ms_agent_msg type;		/* which request it answers (0 for a refusal) */
	enum ms_agent_status status;
	struct ms_span text;		/* printable, 0..MS_AGENT_TEXT_MAX bytes */
	/* HELLO, status OK */
	unsigned version;
	enum ms_key_type key_type;
	unsigned lanes;			/* 1..65535 */
	struct ms_span key_name;	/* printable, 1..MS_AGENT_NAME_MAX bytes */
	/* SIGN, status OK */
	struct ms_span sig;		/* 1..MS_SIG_MAX bytes */
};

/**
 * ms_agent_frame_len() - the body length announced by a frame's 4-byte
 * header @hdr. Parses untrusted input.
 * Return: MS_OK with *@len in 1..@max; MS_E_MALFORMED for 0 or over @max.
 */
ms_err ms_agent_frame_len(const uint8_t hdr[MS_AGENT_LEN_BYTES], size_t max,
			  size_t *len) MS_MUST_CHECK;

/**
 * ms_agent_req_parse() - parse one request frame body @p, @len (the bytes
 * after the length). Strict: the type's fields in order, each length
 * checked against its ceiling, nothing left over. A SIGN names a hash the
 * kernel verifies modules with and carries a digest of exactly its length.
 * Parses untrusted input. @out's spans point into @p.
 * Return: MS_OK; MS_E_MALFORMED (with @why a static reason), MS_E_UNSUPPORTED
 * (a HELLO of another protocol version). @out is unspecified on failure.
 */
ms_err ms_agent_req_parse(const uint8_t *p, size_t len, struct ms_agent_req *out,
			  const char **why) MS_MUST_CHECK;

/**
 * ms_agent_req_encode() - the whole frame (length header included) of @r,
 * with the same rules the parser applies. @out NULL asks for the size.
 * Return: MS_OK, MS_E_ARG (@r breaks a rule), MS_E_NOSPACE.
 */
ms_err ms_agent_req_encode(const struct ms_agent_req *r, uint8_t *out, size_t cap,
			   size_t *out_len) MS_MUST_CHECK;

/**
 * ms_agent_reply_parse() - parse one reply frame body. A reply to another
 * request than @expect (other than a refusal) is malformed. Parses
 * untrusted input: texts and the key name must be printable ASCII or UTF-8
 * bytes (no control characters), so that messages quoting them cannot
 * forge output.
 * Return: MS_OK, MS_E_MALFORMED (@why says why). @out is unspecified on failure.
 */
ms_err ms_agent_reply_parse(const uint8_t *p, size_t len, enum ms_agent_msg expect,
			    struct ms_agent_reply *out, const char **why) MS_MUST_CHECK;

/**
 * ms_agent_reply_encode() - the whole frame of @r, with the parser's rules.
 * A text with control characters has them replaced by '?'; a longer one is
 * cut at MS_AGENT_TEXT_MAX bytes (it is a message, not data).
 * Return: MS_OK, MS_E_ARG, MS_E_NOSPACE.
 */
ms_err ms_agent_reply_encode(const struct ms_agent_reply *r, uint8_t *out, size_t cap,
			     size_t *out_len) MS_MUST_CHECK;

/* The largest frame (header included) ms_agent_reply_encode() writes. */
#define MS_AGENT_REPLY_FRAME_MAX (MS_AGENT_LEN_BYTES + 16u + MS_AGENT_TEXT_MAX + \
				  MS_AGENT_NAME_MAX + MS_SIG_MAX)
/* The largest request frame, header included. */
#define MS_AGENT_REQ_FRAME_MAX (MS_AGENT_LEN_BYTES + MS_AGENT_BODY_MAX)

#endif
