// SPDX-License-Identifier: GPL-2.0-only
/* UTF-8 sequences and JSON string escaping (RFC 3629, RFC 8259). Parses untrusted input. */
#include "json.h"

size_t
ms_utf8_len(const unsigned char *s, size_t len)
{
	size_t n, i;
	unsigned int cp;

	if (len == 0) {
		return 0;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1fu;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0fu;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (n > len) {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;
		}
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	/* Overlong forms, surrogates and values past U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff)) {
		return 0;
	}
	return n;
}

void
ms_json_put_str(FILE *f, const uint8_t *s, size_t len)
{
	size_t i = 0, n;

	putc('"', f);
	while (i < len) {
		if (s[i] == '"' || s[i] == '\\') {
			fprintf(f, "\\%c", s[i]);
			i++;
		} else if (s[i] < 0x20 || s[i] == 0x7f) {
			fprintf(f, "\\u%04x", s[i]);
			i++;
		} else if (s[i] < 0x80) {
			putc(s[i], f);
			i++;
		} else {
			n = ms_utf8_len(s + i, len - i);
			if (n == 0) {
				fputs("\\ufffd", f);
				i++;
			} else if (n == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0) {
				/* C1 controls as escapes too: the JSON may be shown on a terminal. */
				fprintf(f, "\\u%04x", (unsigned)s[i + 1]);
				i += n;
			} else {
				fwrite(s + i, 1, n, f);
				i += n;
			}
		}
	}
	putc('"', f);
}
