// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the text every name goes out as. Names come from file
 * systems, module lists, certificates and tokens (a signer's name from a
 * hostile certificate becomes JSON in `info --json`): ms_utf8_len() and
 * ms_json_put_str() (src/common/json.c) and the escaping of
 * ms_cli_put_escaped() (src/cli/msg.c). Input: any bytes.
 *
 * Oracles, each independent of the code under test:
 * - ms_utf8_len() at every offset agrees with a decoder written from the
 *   table of well-formed byte sequences (Unicode 15, table 3-7);
 * - the escaped text holds no control byte (C0, DEL), no C1 control and
 *   nothing that is not UTF-8, and unescaping it gives the input back;
 * - the JSON string parses (RFC 8259, 7) to the input with each byte
 *   that is not part of well-formed UTF-8 read as U+FFFD, and holds no
 *   control character or C1 control raw.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "cli/msg.h"
#include "fuzz.h"

/* Length of the well-formed sequence at @s (table 3-7), 0 if none or ASCII. */
static size_t
table_len(const uint8_t *s, size_t len)
{
	static const struct {
		uint8_t lo0, hi0, lo1, hi1;	/* first byte, second byte ranges */
		size_t n;
	} rows[] = {
		{ 0xc2, 0xdf, 0x80, 0xbf, 2 },
		{ 0xe0, 0xe0, 0xa0, 0xbf, 3 },
		{ 0xe1, 0xec, 0x80, 0xbf, 3 },
		{ 0xed, 0xed, 0x80, 0x9f, 3 },
		{ 0xee, 0xef, 0x80, 0xbf, 3 },
		{ 0xf0, 0xf0, 0x90, 0xbf, 4 },
		{ 0xf1, 0xf3, 0x80, 0xbf, 4 },
		{ 0xf4, 0xf4, 0x80, 0x8f, 4 },
	};

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		if (s[0] < rows[r].lo0 || s[0] > rows[r].hi0) {
			continue;
		}
		if (len < rows[r].n || s[1] < rows[r].lo1 || s[1] > rows[r].hi1) {
			return 0;
		}
		for (size_t k = 2; k < rows[r].n; k++) {
			if (s[k] < 0x80 || s[k] > 0xbf) {
				return 0;
			}
		}
		return rows[r].n;
	}
	return 0;
}

/* Whether @p, @len is well-formed UTF-8 without a C0, DEL or C1 control (no newline either). */
static bool
clean_text(const uint8_t *p, size_t len)
{
	size_t i = 0, n;

	while (i < len) {
		if (p[i] < 0x20 || p[i] == 0x7f) {
			return false;
		}
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = table_len(p + i, len - i);
		if (n == 0 || (p[i] == 0xc2 && p[i + 1] < 0xa0)) {
			return false;
		}
		i += n;
	}
	return true;
}

static int
hex_val(uint8_t c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

/* Undoes ms_cli_put_escaped(): \\ \n \t \r \xHH; dies on anything else after '\'. */
static size_t
unescape(const uint8_t *p, size_t len, uint8_t *out)
{
	size_t i = 0, n = 0;

	while (i < len) {
		if (p[i] != '\\') {
			out[n++] = p[i++];
			continue;
		}
		if (i + 1 >= len) {
			fuzz_die("escaped text ends with a lone backslash");
		}
		switch (p[i + 1]) {
		case '\\':
			out[n++] = '\\';
			i += 2;
			break;
		case 'n':
			out[n++] = '\n';
			i += 2;
			break;
		case 't':
			out[n++] = '\t';
			i += 2;
			break;
		case 'r':
			out[n++] = '\r';
			i += 2;
			break;
		case 'x':
			if (i + 3 >= len || hex_val(p[i + 2]) < 0 || hex_val(p[i + 3]) < 0) {
				fuzz_die("bad \\x escape");
			}
			out[n++] = (uint8_t)(hex_val(p[i + 2]) << 4 | hex_val(p[i + 3]));
			i += 4;
			break;
		default:
			fuzz_die("unknown escape");
		}
	}
	return n;
}

/* Appends the UTF-8 of @cp to @out at *@n. */
static void
put_utf8(uint8_t *out, size_t *n, unsigned cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (uint8_t)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (uint8_t)(0xc0 | cp >> 6);
		out[(*n)++] = (uint8_t)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (uint8_t)(0xe0 | cp >> 12);
		out[(*n)++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (uint8_t)(0x80 | (cp & 0x3f));
	}
}

/*
 * Parses the JSON string @p, @len (quotes included) into @out as UTF-8;
 * dies on anything RFC 8259 does not allow in a string, and on a raw C1
 * control (ms_json_put_str() escapes those too).
 */
static size_t
json_decode(const uint8_t *p, size_t len, uint8_t *out)
{
	size_t i = 1, n = 0, k;

	if (len < 2 || p[0] != '"' || p[len - 1] != '"') {
		fuzz_die("JSON string not in quotes");
	}
	len--;
	while (i < len) {
		if (p[i] == '"') {
			fuzz_die("raw quote inside the JSON string");
		}
		if (p[i] < 0x20 || p[i] == 0x7f) {
			fuzz_die("raw control character in the JSON string");
		}
		if (p[i] >= 0x80) {
			k = table_len(p + i, len - i);
			if (k == 0 || (p[i] == 0xc2 && p[i + 1] < 0xa0)) {
				fuzz_die("JSON string is not clean UTF-8");
			}
			memcpy(out + n, p + i, k);
			n += k;
			i += k;
			continue;
		}
		if (p[i] != '\\') {
			out[n++] = p[i++];
			continue;
		}
		if (i + 1 >= len) {
			fuzz_die("JSON string ends in a backslash");
		}
		if (p[i + 1] == '"' || p[i + 1] == '\\' || p[i + 1] == '/') {
			out[n++] = p[i + 1];
			i += 2;
		} else if (p[i + 1] == 'u') {
			unsigned cp = 0;

			for (k = 2; k < 6; k++) {
				if (i + k >= len || hex_val(p[i + k]) < 0) {
					fuzz_die("bad \\u escape");
				}
				cp = cp << 4 | (unsigned)hex_val(p[i + k]);
			}
			if (cp >= 0xd800 && cp <= 0xdfff) {
				fuzz_die("surrogate escape");	/* never needed: nothing past the BMP is escaped */
			}
			put_utf8(out, &n, cp);
			i += 6;
		} else {
			fuzz_die("unknown JSON escape");
		}
	}
	return n;
}

/* What the JSON must decode to: each byte outside well-formed UTF-8 as U+FFFD. */
static size_t
json_want(const uint8_t *p, size_t len, uint8_t *out)
{
	size_t i = 0, n = 0, k;

	while (i < len) {
		k = p[i] < 0x80 ? 1 : table_len(p + i, len - i);
		if (k == 0) {
			put_utf8(out, &n, 0xfffd);
			i++;
			continue;
		}
		memcpy(out + n, p + i, k);
		n += k;
		i += k;
	}
	return n;
}

/* What ms_cli_put_escaped() writes for @p, @len; the caller frees it. */
static uint8_t *
capture_escaped(const uint8_t *p, size_t len, size_t *out_len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, out_len);

	if (f == NULL) {
		fuzz_die("open_memstream");
	}
	ms_cli_put_escaped(f, (const char *)p, len);
	fclose(f);
	return (uint8_t *)buf;
}

/* What ms_json_put_str() writes for @p, @len; the caller frees it. */
static uint8_t *
capture_json(const uint8_t *p, size_t len, size_t *out_len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, out_len);

	if (f == NULL) {
		fuzz_die("open_memstream");
	}
	ms_json_put_str(f, p, len);
	fclose(f);
	return (uint8_t *)buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *esc = NULL, *js = NULL, *back = NULL, *want = NULL;
	size_t esc_len = 0, js_len = 0, n, w;

	for (size_t i = 0; i < size; i++) {
		if (ms_utf8_len(data + i, size - i) != table_len(data + i, size - i)) {
			fuzz_die("ms_utf8_len disagrees with the table of well-formed sequences");
		}
	}
	esc = capture_escaped(data, size, &esc_len);
	if (!clean_text(esc, esc_len)) {
		fuzz_die("escaped text holds a control character or bytes that are not UTF-8");
	}
	back = malloc(esc_len + 1);
	if (back == NULL) {
		fuzz_die("malloc");
	}
	n = unescape(esc, esc_len, back);
	if (n != size || (size > 0 && memcmp(back, data, size) != 0)) {
		fuzz_die("unescaping does not give the input back");
	}
	js = capture_json(data, size, &js_len);
	free(back);
	/* Decoding never makes the text longer; U+FFFD is 3 bytes for each input byte at most. */
	back = malloc(js_len + 1);
	want = malloc(3 * size + 1);
	if (back == NULL || want == NULL) {
		fuzz_die("malloc");
	}
	n = json_decode(js, js_len, back);
	w = json_want(data, size, want);
	if (n != w || (n > 0 && memcmp(back, want, n) != 0)) {
		fuzz_die("the JSON string does not decode to the input");
	}
	free(want);
	free(back);
	free(js);
	free(esc);
	return 0;
}
