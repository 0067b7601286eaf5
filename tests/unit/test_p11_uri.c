// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for src/pkcs11's URI text handling: URIs read as p11-kit reads
 * them (whitespace deleted, aliases folded), repeats and NUL bytes refused,
 * and the redacted form messages show. No module is loaded.
 */
#include <stdio.h>
#include <string.h>

#include "../../src/pkcs11/p11.h"
#include "test.h"
#include "test_p11_fixture.h"

/* ms_p11i_uri_parse() alone, on a context set up as ms_p11_open() sets one up. */
static ms_err
parse_only(const char *uri, char *detail, size_t cap)
{
	struct ms_p11 *p11 = calloc(1, sizeof(*p11));
	ms_err err;

	CHECK(p11 != NULL);
	pthread_mutex_init(&p11->recover_lock, NULL);
	ms_p11i_fail_clear(&p11->fail);
	err = ms_p11i_uri_parse(p11, uri);
	snprintf(detail, cap, "%s", p11->fail.detail);
	ms_p11_close(p11);
	return err;
}

/*
 * Each names an attribute twice once p11-kit has deleted the whitespace
 * and folded its aliases; p11-kit alone keeps the last value, so such a
 * URI is refused rather than read one way here and another way there.
 */
MS_TEST(p11_uri_repeats_as_p11kit_reads)
{
	static const struct {
		const char *uri;
		const char *name;
	} cases[] = {
		{ "pkcs11:token=a;token=b", "token" },
		{ "pkcs11:token=a; token=b", "token" },
		{ "pkcs11:token=a;token =b", "token" },
		{ "pkcs11:token=a;to ken=b", "token" },
		{ "pkcs11:token=a;to\nken=b", "token" },
		{ "pkcs11:token=a;to\r\vken=b", "token" },
		{ "pkcs11:token=a?pin-value=1357& pin-value=2468", "pin-value" },
		{ "pkcs11:token=a;pin-value=1357?pin-value=2468", "pin-value" },
		{ "pkcs11:token=a?pinfile=/a&pin-source=/b", "pin-source" },
		{ "pkcs11:object-type=private;type=cert", "type" },
		{ "pkcs11:objecttype=private;type=private", "type" },
		{ "pkcs11:token=a?module-path=/x&module-path=/y", "module-path" },
		{ "pkcs11:token=a?x-vendor=1&x-vendor=2", "x-vendor" },
	};
	char detail[1024], want[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_ERR(parse_only(cases[i].uri, detail, sizeof(detail)), MS_E_ARG);
		snprintf(want, sizeof(want), "attribute %s given twice", cases[i].name);
		if (strstr(detail, want) == NULL) {
			fprintf(stderr, "%s: %s\n", cases[i].uri, detail);
		}
		CHECK(strstr(detail, want) != NULL);
		CHECK(strstr(detail, "1357") == NULL && strstr(detail, "2468") == NULL);
	}
	/* Different attributes, and a tab, which p11-kit keeps: no repeat. */
	CHECK_ERR(parse_only("pkcs11:token=a;object=a;id=%01?pin-value=1&module-name=x", detail,
			 sizeof(detail)), MS_OK);
	CHECK_ERR(parse_only("pkcs11:token=a;to\tken=b", detail, sizeof(detail)), MS_E_ARG);
	CHECK(strstr(detail, "unrecognized") != NULL);
}

/*
 * An empty path attribute makes p11-kit read the rest as query attributes,
 * so "pkcs11:;token=a" would match every token and ";;pin-value=" would
 * carry a PIN past the path.
 */
MS_TEST(p11_uri_empty_path_piece)
{
	static const char *const bad[] = {
		"pkcs11:;token=a",
		"pkcs11:token=a;;object=b",
		"pkcs11:token=a;;pin-value=1357",
	};
	char detail[1024];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_ERR(parse_only(bad[i], detail, sizeof(detail)), MS_E_ARG);
		CHECK(strstr(detail, "empty attribute") != NULL);
		CHECK(strstr(detail, "1357") == NULL);
	}
	/* A ';' before the query or at the end is harmless. */
	CHECK_ERR(parse_only("pkcs11:token=a;?pin-value=1", detail, sizeof(detail)), MS_OK);
	CHECK_ERR(parse_only("pkcs11:token=a;", detail, sizeof(detail)), MS_OK);
}

/* "%00" would cut a C string short ("12%0034" logs in with "12"): refused. */
MS_TEST(p11_uri_nul_refused)
{
	static const struct {
		const char *uri;
		const char *name;
	} cases[] = {
		{ "pkcs11:token=a?pin-value=13%0057", "pin-value" },
		{ "pkcs11:token=a;pin-value=13%0057", "pin-value" },
		{ "pkcs11:token=a?pin-source=file:/tmp/a%00b", "pin-source" },
		{ "pkcs11:token=a?pinfile=/tmp/a%00b", "pin-source" },
		{ "pkcs11:token=a%00b", "token" },
		{ "pkcs11:object=k%00ey", "object" },
		{ "pkcs11:token=a?module-path=/usr/lib/x.so%00y", "module-path" },
		{ "pkcs11:token=a?module-name=x%00", "module-name" },
		{ "pkcs11:serial=%001", "serial" },
		/* Split by whitespace p11-kit deletes. */
		{ "pkcs11:token=a?pin-value=13%0 057", "pin-value" },
		{ "pkcs11:token=a?pin-value=13% 0\n057", "pin-value" },
	};
	char detail[1024], want[80];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_ERR(parse_only(cases[i].uri, detail, sizeof(detail)), MS_E_ARG);
		snprintf(want, sizeof(want), "attribute %s holds a NUL byte", cases[i].name);
		if (strstr(detail, want) == NULL) {
			fprintf(stderr, "%s: %s\n", cases[i].uri, detail);
		}
		CHECK(strstr(detail, want) != NULL);
		CHECK(strstr(detail, "13") == NULL && strstr(detail, "57") == NULL);
	}
	/* A CKA_ID is bytes: a zero byte in id= is a key's real id. */
	CHECK_ERR(parse_only("pkcs11:id=%00%01;object=k", detail, sizeof(detail)), MS_OK);
	CHECK_ERR(parse_only("pkcs11:token=a?pin-value=%2500", detail, sizeof(detail)), MS_OK);
}

/* RFC 3986, 3.1, and p11-kit's whitespace deletion decide what a URI is. */
MS_TEST(p11_uri_is)
{
	char detail[1024];

	CHECK(ms_p11_uri_is("pkcs11:token=a"));
	CHECK(ms_p11_uri_is("PKCS11:token=a"));
	CHECK(ms_p11_uri_is("Pkcs11:"));
	CHECK(ms_p11_uri_is(" pkcs11:token=a"));
	CHECK(ms_p11_uri_is("\n\r\v pkcs11:token=a"));
	CHECK(ms_p11_uri_is("pk cs11 :token=a"));
	CHECK(!ms_p11_uri_is("\tpkcs11:token=a"));	/* p11-kit keeps a tab */
	CHECK(!ms_p11_uri_is("pkcs11"));
	CHECK(!ms_p11_uri_is("pkcs11x:token=a"));
	CHECK(!ms_p11_uri_is("./pkcs11:token=a"));
	CHECK(!ms_p11_uri_is("key.pem"));
	CHECK(!ms_p11_uri_is(""));
	CHECK(!ms_p11_uri_is(NULL));
	/* What ms_p11_uri_is() accepts, the parser accepts. */
	CHECK_ERR(parse_only("PKCS11:token=a", detail, sizeof(detail)), MS_OK);
	CHECK_ERR(parse_only(" pkcs11:token=a", detail, sizeof(detail)), MS_OK);
	CHECK_ERR(parse_only("pK cS11:token=a", detail, sizeof(detail)), MS_OK);
	CHECK_ERR(parse_only("\tpkcs11:token=a", detail, sizeof(detail)), MS_E_ARG);
}

static void
check_redact(const char *arg, const char *want)
{
	char out[512];

	ms_p11_uri_redact(arg, out, sizeof(out));
	if (strcmp(out, want) != 0) {
		fprintf(stderr, "redact(%s):\n  got  %s\n  want %s\n", arg, out, want);
	}
	CHECK(strcmp(out, want) == 0);
}

/* A URI in a message never shows a PIN, however it is spelled. */
MS_TEST(p11_uri_redact)
{
	char out[32];

	check_redact("pkcs11:token=t;object=k;type=private?module-path=/m.so&pin-value=1357",
		     "pkcs11:token=t;object=k;type=private?module-path=/m.so&pin-value=(hidden)");
	check_redact("pkcs11:token=t;pin-value=1357;object=k",
		     "pkcs11:token=t;pin-value=(hidden);object=k");
	check_redact("PKCS11:token=t?pin-source=file:/run/1357.pin",
		     "pkcs11:token=t?pin-source=(hidden)");
	check_redact("pkcs11:token=t?pinfile=/run/1357", "pkcs11:token=t?pinfile=(hidden)");
	check_redact(" pkcs11:token=t?pin- value=1357", "pkcs11:token=t?pin-value=(hidden)");
	check_redact("pkcs11:token=t?x-pin=1357", "pkcs11:token=t?x-pin=(hidden)");
	/* A PIN the user meant to give with the wrong separator. */
	check_redact("pkcs11:token=t?module-path=/m.so;pin-value=1357",
		     "pkcs11:token=t?module-path=/m.so;(hidden)");
	check_redact("pkcs11:object=keyPIN1357", "pkcs11:object=key(hidden)");
	/* What p11-kit reads as a query after an empty path attribute. */
	check_redact("pkcs11:token=t;;object=k;pin-value=1357",
		     "pkcs11:token=t;object=k;(hidden)");
	/* Bad syntax: what follows is not shown. */
	check_redact("pkcs11:token=t;1357", "pkcs11:token=t(rest hidden)");
	check_redact("pkcs11:token=t?pin-value=1357&&x=1",
		     "pkcs11:token=t?pin-value=(hidden)(rest hidden)");
	/* Control bytes p11-kit keeps are shown as '?'. */
	check_redact("pkcs11:token=t\tx\033", "pkcs11:token=t?x?");
	/* Not a URI: copied, control bytes replaced. */
	check_redact("keys/signing.pem", "keys/signing.pem");
	check_redact("a\nb", "a?b");
	/* Cut to the buffer, marked. */
	ms_p11_uri_redact("pkcs11:token=a-rather-long-token-label;object=k", out, sizeof(out));
	CHECK(strlen(out) == sizeof(out) - 1);
	CHECK(strcmp(out + sizeof(out) - 4, "...") == 0);
	ms_p11_uri_redact(NULL, out, sizeof(out));
	CHECK(out[0] == '\0');
}

/* The key name of @uri, which must have one. */
static void
key_name_of(const char *uri, char *out, size_t cap)
{
	CHECK_ERR(ms_p11_uri_key_name(uri, out, cap), MS_OK);
}

MS_TEST(p11_uri_key_name)
{
	char a[4096], b[4096];

	key_name_of("pkcs11:token=build;object=modsign;type=private", a, sizeof(a));
	/* Order, scheme case, percent-encoding, PIN, library and class do not matter. */
	key_name_of("PKCS11:object=mod%73ign;token=build?pin-value=1234&module-path=/x.so", b,
		    sizeof(b));
	CHECK(strcmp(a, b) == 0);
	key_name_of("pkcs11:token=build;object=modsign?pin-source=file:/p&module-name=softhsm2",
		    b, sizeof(b));
	CHECK(strcmp(a, b) == 0);
	/* Whitespace, which p11-kit deletes, anywhere; the scheme in any case. */
	key_name_of(" Pkcs11:token=bu ild;\nobject=modsign", b, sizeof(b));
	CHECK_STR_EQ(a, b);
	CHECK(strstr(a, "1234") == NULL && strstr(a, "pin") == NULL);
	CHECK(strncmp(a, "pkcs11:", 7) == 0);
	/* Another key, another token: another name. */
	key_name_of("pkcs11:token=build;object=other", b, sizeof(b));
	CHECK(strcmp(a, b) != 0);
	key_name_of("pkcs11:token=test;object=modsign", b, sizeof(b));
	CHECK(strcmp(a, b) != 0);
	key_name_of("pkcs11:token=build;object=modsign;id=%01", b, sizeof(b));
	CHECK(strcmp(a, b) != 0);
	CHECK(ms_p11_uri_key_name("pkcs11:token=a;token=", a, sizeof(a)) == MS_OK ||
	      ms_p11_uri_key_name("pkcs11:token=a;token=", a, sizeof(a)) == MS_E_ARG);
	CHECK_ERR(ms_p11_uri_key_name("pkcs11:object=%zz", a, sizeof(a)), MS_E_ARG);
	CHECK_ERR(ms_p11_uri_key_name("pkcs11:token=build", a, 8), MS_E_NOSPACE);
	CHECK_ERR(ms_p11_uri_key_name("", a, sizeof(a)), MS_E_ARG);
	/* A file is not a URI: src/agent names it. */
	CHECK_ERR(ms_p11_uri_key_name("/etc/key.pem", a, sizeof(a)), MS_E_ARG);
}
