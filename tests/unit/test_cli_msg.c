// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the output of src/cli/msg.c: names escaped so that they
 * cannot start a line or reach the terminal as control characters, JSON
 * strings, and UTF-8 recognised as RFC 3629 defines it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cli/msg.h"
#include "test.h"

/* What ms_cli_put_escaped() writes for @len bytes of @in, malloc'd. */
static char *
escaped(const char *in, size_t len)
{
	char *out = NULL;
	size_t out_len = 0;
	FILE *f = open_memstream(&out, &out_len);

	CHECK(f != NULL);
	ms_cli_put_escaped(f, in, len);
	CHECK(fclose(f) == 0);
	return out;
}

static char *
json(const char *in)
{
	char *out = NULL;
	size_t out_len = 0;
	FILE *f = open_memstream(&out, &out_len);

	CHECK(f != NULL);
	ms_cli_put_json_str(f, in);
	CHECK(fclose(f) == 0);
	return out;
}

#define CHECK_ESCAPED(in, want)						\
	do {								\
		char *got_ = escaped((in), sizeof(in) - 1);		\
		CHECK_STR_EQ(got_, (want));				\
		free(got_);						\
	} while (0)

#define CHECK_JSON(in, want)						\
	do {								\
		char *got_ = json(in);					\
		CHECK_STR_EQ(got_, (want));				\
		free(got_);						\
	} while (0)

MS_TEST(cli_msg_escape_controls)
{
	CHECK_ESCAPED("plain/path-1.ko", "plain/path-1.ko");
	CHECK_ESCAPED("a.ko\nOK b.ko", "a.ko\\nOK b.ko");
	CHECK_ESCAPED("t\tr\rx", "t\\tr\\rx");
	CHECK_ESCAPED("\033[31mred\033[0m", "\\x1b[31mred\\x1b[0m");
	CHECK_ESCAPED("\001\037\177", "\\x01\\x1f\\x7f");
	/* The escape character itself, so that the text reads back unambiguously. */
	CHECK_ESCAPED("a\\nb", "a\\\\nb");
	/* A NUL inside the given length is a byte like any other. */
	CHECK_ESCAPED("a\0b", "a\\x00b");
}

MS_TEST(cli_msg_escape_utf8)
{
	/* Valid UTF-8 is kept: é, €, U+1F600. */
	CHECK_ESCAPED("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* C1 controls (U+009B is CSI), raw or UTF-8 encoded, are escaped. */
	CHECK_ESCAPED("\x9b", "\\x9b");
	CHECK_ESCAPED("\xc2\x9b[2J", "\\xc2\\x9b[2J");
	CHECK_ESCAPED("\xc2\xa0", "\xc2\xa0");	/* U+00A0 is not a control */
	/* Overlong, surrogate, past U+10FFFF, truncated: byte by byte. */
	CHECK_ESCAPED("\xc0\xaf", "\\xc0\\xaf");
	CHECK_ESCAPED("\xed\xa0\x80", "\\xed\\xa0\\x80");
	CHECK_ESCAPED("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	CHECK_ESCAPED("\xe2\x82", "\\xe2\\x82");
	CHECK_ESCAPED("\xe9t\xe9", "\\xe9t\\xe9");	/* Latin-1 */
}

MS_TEST(cli_msg_utf8_len_bounded)
{
	static const unsigned char euro[] = { 0xe2, 0x82, 0xac };

	CHECK_EQ(ms_cli_utf8_len(euro, 3), 3);
	/* A sequence longer than what is left is not one: nothing past @len is read. */
	CHECK_EQ(ms_cli_utf8_len(euro, 2), 0);
	CHECK_EQ(ms_cli_utf8_len(euro, 0), 0);
	CHECK_EQ(ms_cli_utf8_len((const unsigned char *)"a", 1), 0);
}

MS_TEST(cli_msg_line_one_line)
{
	char *out = NULL;
	size_t out_len = 0;
	char long_name[6000];
	FILE *f = open_memstream(&out, &out_len);

	CHECK(f != NULL);
	ms_cli_line(f, "OK %s %s", "x.ko\nOK forged.ko", "signer\033]0;title\007");
	CHECK(fflush(f) == 0);
	CHECK_STR_EQ(out, "OK x.ko\\nOK forged.ko signer\\x1b]0;title\\x07\n");
	/* Longer than the stack line: formatted whole on the heap, not cut. */
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	ms_cli_line(f, "FAIL %s: %s", long_name, "why");
	CHECK(fclose(f) == 0);
	CHECK_EQ(strlen(out), strlen("OK x.ko\\nOK forged.ko signer\\x1b]0;title\\x07\n") +
				      strlen("FAIL ") + sizeof(long_name) - 1 + strlen(": why\n"));
	CHECK(strstr(out, ": why\n") != NULL);
	free(out);
}

MS_TEST(cli_msg_json)
{
	CHECK_JSON("a\"b\\c", "\"a\\\"b\\\\c\"");
	CHECK_JSON("x\ny\033\177", "\"x\\u000ay\\u001b\\u007f\"");
	CHECK_JSON("\xc3\xa9", "\"\xc3\xa9\"");
	CHECK_JSON("\xc2\x9b", "\"\\u009b\"");
	CHECK_JSON("\xff.ko", "\"\\ufffd.ko\"");
}
