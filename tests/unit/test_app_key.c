// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for opening a run's key in the application layer
 * (src/app/key.c, src/app/tokens.c) on real SoftHSM2 tokens, with a sink
 * that records the lines and a PIN provider that records being asked: one
 * token and several take one path, a locked token or one on its last try
 * is refused before any PIN is asked for, a refused PIN is said with its
 * source, a key file's passphrase is asked for only when it is encrypted.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/app/app.h"
#include "test.h"
#include "test_app_sink.h"
#include "test_p11_fixture.h"

/* A PIN provider that gives @pin (NULL: it has none) and records what it was asked. */
struct rec_pins {
	const char *pin;
	unsigned n_asked;
	unsigned flags[4];
	char what[4][256];
};

static ms_err
rec_get(void *ctx, const struct ms_app_pin_ask *ask, struct ms_pin *pin)
{
	struct rec_pins *p = ctx;

	if (p->n_asked < 4) {
		p->flags[p->n_asked] = ask->flags;
		snprintf(p->what[p->n_asked], sizeof(p->what[0]), "%s", ask->what);
	}
	p->n_asked++;
	if (p->pin == NULL) {
		return (ask->flags & (MS_APP_PIN_NO_PROMPT | MS_APP_PIN_PROMPT_ONLY)) != 0 ?
		       MS_E_NOTFOUND : MS_E_PIN;
	}
	ms_pin_clear(pin);
	memcpy(pin->buf, p->pin, strlen(p->pin));
	pin->len = strlen(p->pin);
	pin->source = "the test";
	pin->is_set = true;
	return MS_OK;
}

struct opened {
	struct test_sink sink_rec;
	struct rec_pins pins_rec;
	struct ms_app_sink sink;
	struct ms_app_pins pins;
	struct ms_app_key_cfg cfg;
	struct ms_pin pin;
	struct ms_signer *signer;
	struct ms_tokens tokens;
	bool is_agent;
};

static void
setup(struct opened *o, const char *key, const char *pin)
{
	memset(o, 0, sizeof(*o));
	test_sink_init(&o->sink_rec);
	o->sink = o->sink_rec.sink;
	o->pins_rec.pin = pin;
	o->pins.get = rec_get;
	o->pins.ctx = &o->pins_rec;
	o->cfg.key = key;
}

static ms_err
open_key(struct opened *o)
{
	return ms_app_key_open(&o->cfg, NULL, &o->sink, &o->pins, &o->pin, &o->signer, &o->tokens,
			       &o->is_agent);
}

static void
teardown(struct opened *o)
{
	ms_app_tokens_close(&o->tokens);
	ms_signer_free(o->signer);
	ms_pin_clear(&o->pin);
}

/* The test token's RSA key through build/slowtoken.so with @flags as its PIN flags. */
static const char *
slow_uri(const char *flags)
{
	static char uri[PATH_MAX + 128];
	char so[PATH_MAX];
	struct stat st;

	if (realpath(ms_test_data("../../build/slowtoken.so"), so) == NULL || stat(so, &st) != 0) {
		MS_SKIP("build/slowtoken.so not built (make build/slowtoken.so)");
	}
	CHECK(setenv("SLOWTOKEN_PIN_FLAGS", flags, 1) == 0);
	snprintf(uri, sizeof(uri), "pkcs11:token=modsign-test;object=rsa2048;type=private"
		 "?module-path=%s", so);
	return uri;
}

MS_TEST(app_key_one_token_asks_the_provider_once)
{
	struct opened o;

	p11t_token();
	setup(&o, P11T_TOKEN ";object=rsa2048;type=private" P11T_URI_PATH, P11T_PIN);
	CHECK_ERR(open_key(&o), MS_OK);
	CHECK(o.signer != NULL);
	CHECK(!o.is_agent);
	CHECK_EQ(o.tokens.n, (size_t)0);	/* one key source: no token list */
	CHECK_EQ(o.pins_rec.n_asked, 1u);
	CHECK_EQ(o.pins_rec.flags[0], 0u);
	CHECK_STR_EQ(o.pins_rec.what[0], "token 'modsign-test'");
	CHECK(o.pin.is_set);		/* kept for lost sessions */
	CHECK_EQ(o.sink_rec.n, (size_t)0);
	teardown(&o);
}

MS_TEST(app_key_wrong_pin_said_with_its_source)
{
	struct opened o;

	p11t_token();
	setup(&o, P11T_TOKEN ";object=rsa2048;type=private" P11T_URI_PATH, "9999");
	CHECK_ERR(open_key(&o), MS_E_PIN);
	CHECK(o.signer == NULL);
	CHECK_EQ(o.sink_rec.n, (size_t)1);
	CHECK_EQ(o.sink_rec.kind[0], MS_APP_SAY_ERROR);
	CHECK(strstr(o.sink_rec.line[0], "C_Login: PIN from the test rejected: CKR_PIN_INCORRECT") ==
	      o.sink_rec.line[0]);
	CHECK(strstr(o.sink_rec.line[0], "9999") == NULL);
	teardown(&o);
}

MS_TEST(app_key_locked_token_refused_before_the_pin_is_asked)
{
	struct opened o;

	p11t_token();
	setup(&o, slow_uri("LOCKED"), P11T_PIN);
	CHECK_ERR(open_key(&o), MS_E_PIN);
	CHECK_EQ(o.pins_rec.n_asked, 0u);
	CHECK(o.signer == NULL);
	CHECK_EQ(o.sink_rec.n, (size_t)1);
	/* One token: named "key", as a run with one key source says it. */
	CHECK(strncmp(o.sink_rec.line[0], "key: ", 5) == 0);
	CHECK(strstr(o.sink_rec.line[0], "locked") != NULL);
	teardown(&o);
}

MS_TEST(app_key_final_try_refused_unless_allowed)
{
	struct opened o;

	p11t_token();
	setup(&o, slow_uri("FINAL_TRY"), P11T_PIN);
	CHECK_ERR(open_key(&o), MS_E_PIN);
	CHECK_EQ(o.pins_rec.n_asked, 0u);
	CHECK_EQ(o.sink_rec.n, (size_t)1);
	CHECK(strstr(o.sink_rec.line[0], "--pin-final-try") != NULL);
	teardown(&o);

	setup(&o, slow_uri("FINAL_TRY"), P11T_PIN);
	o.cfg.allow_final_try = true;
	CHECK_ERR(open_key(&o), MS_OK);
	CHECK_EQ(o.pins_rec.n_asked, 1u);
	CHECK(o.signer != NULL);
	teardown(&o);
}

MS_TEST(app_key_several_tokens_locked_none_asked)
{
	struct opened o;
	char second[PATH_MAX + 160];
	const char *uri;

	p11t_token();
	p11t_token_add("second", P11T_PIN, "rsa2048.key.pem");
	/* Both through slowtoken: one SoftHSM2 loaded twice would be finalized twice. */
	uri = slow_uri("LOCKED");
	setup(&o, uri, P11T_PIN);
	snprintf(second, sizeof(second), "pkcs11:token=second;%s", strchr(uri, ';') + 1);
	o.cfg.keys[0] = second;
	o.cfg.n_keys = 1;
	CHECK_ERR(open_key(&o), MS_E_PIN);
	CHECK_EQ(o.pins_rec.n_asked, 0u);
	CHECK(o.sink_rec.n >= 1);
	CHECK(strstr(o.sink_rec.line[0], "no token is offered a PIN") != NULL);
	teardown(&o);
}

MS_TEST(app_key_several_tokens_one_pin_source_read_once)
{
	struct ms_lanes_cfg lc = { .recoveries_max = 1 };
	struct ms_lanes *pool = NULL;
	struct opened o;
	char second[PATH_MAX + 160];
	unsigned lanes;

	p11t_token();
	p11t_token_add("second", P11T_PIN, "rsa2048.key.pem");
	setup(&o, P11T_TOKEN ";object=rsa2048;type=private" P11T_URI_PATH, P11T_PIN);
	snprintf(second, sizeof(second), "pkcs11:token=second;object=rsa2048;type=private"
		 P11T_URI_PATH);
	o.cfg.keys[0] = second;
	o.cfg.n_keys = 1;
	o.cfg.bulk = true;
	o.cfg.jobs = 2;
	CHECK_ERR(open_key(&o), MS_OK);
	CHECK_EQ(o.pins_rec.n_asked, 1u);
	CHECK_EQ(o.tokens.n, (size_t)2);
	CHECK(o.tokens.signer[0] == o.signer);
	CHECK(strstr(o.tokens.name[1], "token 'second'") == o.tokens.name[1]);
	CHECK_EQ(o.sink_rec.n, (size_t)0);
	/* One pool over both tokens' lanes, as the bulk run and the agent build it. */
	lanes = ms_signer_lanes(o.tokens.signer[0]) + ms_signer_lanes(o.tokens.signer[1]);
	CHECK_ERR(ms_app_lanes_open(o.signer, &o.tokens, &lc, &pool), MS_OK);
	CHECK_EQ(ms_lanes_signers(pool), 2u);
	CHECK_EQ(ms_lanes_count(pool), lanes);
	CHECK_STR_EQ(ms_app_tokens_name(&o.tokens, 1), o.tokens.name[1]);
	CHECK_STR_EQ(ms_app_tokens_name(&o.tokens, 7), "a token");
	ms_lanes_free(pool);
	teardown(&o);
}

MS_TEST(app_key_file_passphrase_only_when_encrypted)
{
	struct opened o;

	setup(&o, ms_test_data("rsa2048.key.pem"), NULL);
	CHECK_ERR(open_key(&o), MS_OK);
	/* Asked once for a source without a terminal; it had none, and none was needed. */
	CHECK_EQ(o.pins_rec.n_asked, 1u);
	CHECK_EQ(o.pins_rec.flags[0], (unsigned)MS_APP_PIN_NO_PROMPT);
	teardown(&o);

	setup(&o, ms_test_data("rsa2048.enc.key.pem"), NULL);
	CHECK_ERR(open_key(&o), MS_E_PIN);
	/* Encrypted: asked again, for the terminal only; none there. */
	CHECK_EQ(o.pins_rec.n_asked, 2u);
	CHECK_EQ(o.pins_rec.flags[1], (unsigned)MS_APP_PIN_PROMPT_ONLY);
	CHECK_EQ(o.sink_rec.n, (size_t)1);
	CHECK(strstr(o.sink_rec.line[0], "set KBUILD_SIGN_PIN") != NULL);
	teardown(&o);

	setup(&o, ms_test_data("rsa2048.enc.key.pem"), "test-passphrase");
	CHECK_ERR(open_key(&o), MS_OK);
	CHECK_EQ(o.pins_rec.n_asked, 1u);
	CHECK(!o.pin.is_set);		/* a key file's passphrase is wiped at once */
	teardown(&o);
}

MS_TEST(app_key_agent_not_reached_is_an_error)
{
	struct opened o;

	setup(&o, ms_test_data("rsa2048.key.pem"), NULL);
	o.cfg.agent_sock = "/nonexistent/modsign-agent.sock";
	CHECK(open_key(&o) != MS_OK);
	CHECK(o.signer == NULL);
	CHECK_EQ(o.pins_rec.n_asked, 0u);
	CHECK_EQ(o.sink_rec.n, (size_t)1);
	CHECK(strstr(o.sink_rec.line[0], "nothing signed") != NULL);
	teardown(&o);
}
