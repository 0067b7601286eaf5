// SPDX-License-Identifier: GPL-2.0-only
/*
 * Several tokens holding one key (--key): each is opened, logged
 * in once and its key checked before any module is touched, all at the same
 * time on threads of their own: a real card's start-up takes seconds, and
 * four cards one after another would pay it four times.
 *
 * The PIN rules of one token hold for each: a PIN source is read once for
 * all the tokens that use it, and a PIN goes to one token first; only once
 * that token has taken it do the others get it, all at once. So a mistyped
 * PIN costs one try on one card, not one on every card (cloned cards share
 * their PIN, and would otherwise lock together).
 *
 * One token takes the same path, its lines naming it "key" as a run with
 * one key source does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../pkcs11/p11.h"
#include "app_internal.h"

/* One token of the run, on its way through the phases below. */
struct tok {
	const struct ms_app_key_cfg *cfg;
	const struct ms_app_sink *sink;
	bool is_only;			/* the run's one token: lines say "key" */
	const char *uri;
	char shown[512];	/* the URI as messages show it (PIN hidden) */
	char name[MS_TOKEN_NAME];	/* "token 'label' (serial s)" once opened */
	struct ms_p11 *p11;		/* ours until the signer takes it */
	struct ms_signer *signer;
	const struct ms_cms_cert *cert;	/* checked against; NULL: token 0's key is */
	const char *pin_value;		/* where its PIN comes from: its URI's, else <key>'s */
	const char *pin_source;
	struct ms_pin *pin;		/* the PIN it logs in with; NULL: it needs none */
	bool is_first;			/* the first token to be offered its PIN */
	bool is_logged_in;
	unsigned want_lanes;		/* 0: one (no -b) */
	ms_err err;
};

/* Runs @fn on a thread for each token @pick chooses, and waits for all. */
static void
run_phase(struct tok *t, size_t n, bool (*pick)(const struct tok *), void *(*fn)(void *))
{
	pthread_t th[MS_TOKENS_MAX];
	bool started[MS_TOKENS_MAX];

	for (size_t i = 0; i < n; i++) {
		started[i] = false;
		if (!pick(&t[i])) {
			continue;
		}
		if (pthread_create(&th[i], NULL, fn, &t[i]) == 0) {
			started[i] = true;
		} else {
			(void)fn(&t[i]);	/* no thread: in turn, slower but the same */
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (started[i]) {
			pthread_join(th[i], NULL);
		}
	}
}

static bool
pick_all(const struct tok *t)
{
	(void)t;
	return true;
}

/* Phase 1: load the module, find the token (its start-up). No login. */
static void *
open_one(void *arg)
{
	struct tok *t = arg;
	char role[sizeof(t->shown) + 8];

	t->err = ms_p11_open(t->uri, MS_P11_FOR_KEY, &t->p11);
	if (t->err != MS_OK) {
		snprintf(role, sizeof(role), "key%s%s", t->is_only ? "" : " ",
			 t->is_only ? "" : t->shown);
		ms_app_p11_error(t->sink, role, t->p11, t->err);
		return NULL;
	}
	snprintf(t->name, sizeof(t->name), "token '%s' (serial %s)", ms_p11_token_label(t->p11),
		 ms_p11_token_serial(t->p11));
	return NULL;
}

static void
login_one(struct tok *t)
{
	unsigned flags = t->cfg->allow_final_try ? MS_P11_LOGIN_ALLOW_FINAL_TRY : 0;

	t->err = ms_p11_login(t->p11, t->pin, flags);
	if (t->err == MS_OK) {
		t->is_logged_in = true;
		return;
	}
	ms_app_p11_login_error(t->sink, t->is_only ? NULL : t->name, t->p11, t->err, t->pin,
			       t->cfg->allow_final_try,
			       t->is_only ? "" : "; no other token is offered it");
}

/*
 * Phase 1b, every token at once: a token whose PIN is locked or on its
 * final try is refused before any token is offered a PIN, so that no card
 * spends a try on a run that cannot start.
 */
static void *
pin_check_one(void *arg)
{
	struct tok *t = arg;
	unsigned flags = t->cfg->allow_final_try ? MS_P11_LOGIN_ALLOW_FINAL_TRY : 0;

	t->err = ms_p11_pin_check(t->p11, flags);
	if (t->err == MS_E_PIN && t->is_only) {
		/* The line a refused login would give: no PIN was asked for. */
		ms_app_p11_login_error(t->sink, NULL, t->p11, t->err, NULL,
				       t->cfg->allow_final_try, "");
	} else if (t->err == MS_E_PIN) {
		ms_app_say(t->sink, MS_APP_SAY_ERROR, NULL,
			   "%s (key %s): %s: refused; no token is offered a PIN%s", t->name,
			   t->shown, ms_p11_last_fail(t->p11)->detail,
			   ms_p11_pin_is_final_try(t->p11) && !t->cfg->allow_final_try &&
			   !ms_p11_pin_is_locked(t->p11) ?
			   " (--pin-final-try spends the last try)" : "");
	} else if (t->err != MS_OK) {
		ms_app_p11_error(t->sink, t->is_only ? "key" : t->name, t->p11, t->err);
	}
	return NULL;
}

/* Phase 2: the first token of each PIN, and those that need none, log in. */
static bool
pick_first(const struct tok *t)
{
	return t->is_first;
}

static void *
login_first(void *arg)
{
	login_one(arg);
	return NULL;
}

/*
 * Phase 3, every token at once: the rest log in with the PIN a token has
 * taken; then each finds the key, opens its sessions and checks the key
 * against the certificate (with a test signature when the token shows no
 * public key).
 */
static void *
finish_one(void *arg)
{
	struct tok *t = arg;
	char subject[256];

	if (!t->is_logged_in) {
		login_one(t);
		if (t->err != MS_OK) {
			return NULL;
		}
	}
	t->err = ms_signer_token_new(t->p11, &t->signer);
	if (t->err != MS_OK) {
		ms_app_p11_error(t->sink, t->is_only ? "key" : t->name, t->p11, t->err);
		return NULL;
	}
	t->p11 = NULL;	/* the signer's now */
	if (t->want_lanes > 0) {
		t->err = ms_signer_token_add_lanes(t->signer, t->want_lanes);
		if (t->err != MS_OK) {
			ms_app_say(t->sink, MS_APP_SAY_ERROR, NULL, "%s: cannot open its sessions: %s",
				   t->name, ms_err_str(t->err));
			return NULL;
		}
	}
	if (t->cert == NULL) {
		return NULL;	/* compared with token 0's key once all are done */
	}
	t->err = ms_signer_match_cert(t->signer, t->cert);
	if (t->err == MS_E_MISMATCH) {
		ms_cms_cert_subject(t->cert, subject, sizeof(subject));
		ms_app_say(t->sink, MS_APP_SAY_ERROR, NULL,
			   "%s (key %s) holds another key than the certificate (%s): refused; "
			   "modules signed with it would not load", t->name, t->shown, subject);
	} else if (t->err != MS_OK) {
		char why[1200];

		ms_signer_describe(t->signer, 0, why, sizeof(why));
		ms_app_say(t->sink, MS_APP_SAY_ERROR, NULL,
			   "%s: checking its key against the certificate: %s", t->name, why);
	}
	return NULL;
}

static bool
pick_ok(const struct tok *t)
{
	return t->err == MS_OK;
}

/* A pin-source names a file: "file:/x", "file:///x" and "/x" are one source. */
static const char *
source_path(const char *s)
{
	if (s != NULL && strncmp(s, "file:", 5) == 0) {
		s += 5;
		if (strncmp(s, "//", 2) == 0) {
			s += 2;
		}
	}
	return s;
}

static bool
same_text(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static bool
same_source(const struct tok *a, const struct tok *b)
{
	return same_text(a->pin_value, b->pin_value) &&
	       same_text(source_path(a->pin_source), source_path(b->pin_source));
}

/*
 * Reads each PIN source the tokens need once, in the order the tokens were
 * named; <key>'s PIN goes to @main_pin (the run's), the others to @pins.
 * The first token of each source is marked to be offered it first.
 */
static ms_err
read_pins(struct tok *t, size_t n, const struct ms_app_pins *provider, struct ms_pin *main_pin,
	  struct ms_pin *pins)
{
	size_t n_pins = 0;

	for (size_t i = 0; i < n; i++) {
		struct ms_app_pin_ask ask = { NULL, NULL, NULL, 0 };
		char what[400];
		size_t len = 0;
		unsigned users = 0;
		struct ms_pin *pin = NULL;
		ms_err err;

		if (t[i].pin != NULL || !ms_p11_needs_pin(t[i].p11)) {
			t[i].is_first = t[i].pin == NULL;	/* a PIN pad, or no login */
			continue;
		}
		/* A new source: who uses it, for the prompt (cut short when long). */
		what[0] = '\0';
		for (size_t j = i; j < n; j++) {
			int k;

			if (!ms_p11_needs_pin(t[j].p11) || !same_source(&t[i], &t[j])) {
				continue;
			}
			k = snprintf(what + len, sizeof(what) - len, "%s%s", users == 0 ? "" : ", ",
				     t[j].name);
			users++;
			if (k < 0 || (size_t)k >= sizeof(what) - len) {
				break;
			}
			len += (size_t)k;
		}
		pin = same_source(&t[i], &t[0]) ? main_pin : &pins[n_pins++];
		if (t[i].is_only) {
			/* As a run with one key source names it: its label alone. */
			snprintf(what, sizeof(what), "token '%s'", ms_p11_token_label(t[i].p11));
		}
		ask.uri_value = t[i].pin_value;
		ask.uri_source = t[i].pin_source;
		ask.what = what;
		err = provider->get(provider->ctx, &ask, pin);
		if (err != MS_OK) {
			return err;
		}
		t[i].is_first = true;
		for (size_t j = i; j < n; j++) {
			if (ms_p11_needs_pin(t[j].p11) && same_source(&t[i], &t[j])) {
				t[j].pin = pin;
			}
		}
	}
	return MS_OK;
}

/*
 * Each token's share of -j; without -j, one lane for a token in a hardware
 * slot (it serialises anyway) and a share of the software tokens' default
 * (one per processor and one more) for the others. At least one each.
 */
static void
share_lanes(struct tok *t, size_t n)
{
	const struct ms_app_key_cfg *o = t[0].cfg;
	unsigned total = o->jobs;
	size_t n_share = n, k = 0;

	if (!o->bulk) {
		return;	/* one module: one lane each */
	}
	if (total == 0) {
		total = ms_cpu_count() + 1;
		n_share = 0;
		for (size_t i = 0; i < n; i++) {
			n_share += !ms_p11_token_is_hardware(t[i].p11);
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (n_share == 0 || (o->jobs == 0 && ms_p11_token_is_hardware(t[i].p11))) {
			t[i].want_lanes = 1;
			continue;
		}
		t[i].want_lanes = total / (unsigned)n_share + (k < total % n_share ? 1 : 0);
		if (t[i].want_lanes == 0) {
			t[i].want_lanes = 1;
		}
		k++;
	}
}

/* No token twice: its PIN would go to it twice, and its lanes be counted twice. */
static ms_err
check_distinct(const struct tok *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			if (ms_p11_same_token(t[i].p11, t[j].p11)) {
				ms_app_say(t[i].sink, MS_APP_SAY_ERROR, NULL,
					   "key %s and key %s name one token, %s: give each token "
					   "once", t[i].shown, t[j].shown, t[i].name);
				return MS_E_ARG;
			}
		}
	}
	return MS_OK;
}

/* Without a certificate (the agent): every token must hold token 0's key. */
static ms_err
check_same_key(const struct tok *t, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		ms_err err = ms_signer_match_key(t[i].signer, t[0].signer);

		if (err == MS_E_MISMATCH) {
			ms_app_say(t[i].sink, MS_APP_SAY_ERROR, NULL,
				   "%s (key %s) holds another key than %s (key %s): refused",
				   t[i].name, t[i].shown, t[0].name, t[0].shown);
			return err;
		}
		if (err != MS_OK) {
			ms_app_say(t[i].sink, MS_APP_SAY_ERROR, NULL,
				   "%s (key %s): cannot tell whether it holds the key of %s: the "
				   "tokens do not show their public keys alike", t[i].name,
				   t[i].shown, t[0].name);
			return err;
		}
	}
	return MS_OK;
}

static ms_err
first_error(const struct tok *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (t[i].err != MS_OK) {
			return t[i].err;
		}
	}
	return MS_OK;
}

static void
toks_clear(struct tok *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ms_signer_free(t[i].signer);
		ms_p11_close(t[i].p11);
		t[i].signer = NULL;
		t[i].p11 = NULL;
	}
}

ms_err
ms_app_tokens_open(const struct ms_app_key_cfg *cfg, const struct ms_cms_cert *cert,
		   const struct ms_app_sink *sink, const struct ms_app_pins *pins,
		   struct ms_pin *pin, struct ms_signer **main_out, struct ms_tokens *out)
{
	struct tok *t = NULL;
	size_t n = 1 + cfg->n_keys;
	ms_err err = MS_E_NOMEM;

	memset(out, 0, sizeof(*out));
	*main_out = NULL;
	if (n > MS_TOKENS_MAX || pins == NULL || pins->get == NULL) {
		return MS_E_ARG;
	}
	t = calloc(n, sizeof(*t));
	/* PINs of other sources than <key>'s: only with more than one token. */
	out->pins = n > 1 ? calloc(MS_TOKENS_MAX, sizeof(*out->pins)) : NULL;
	if (t == NULL || (n > 1 && out->pins == NULL)) {
		ms_app_say(sink, MS_APP_SAY_ERROR, NULL, "%s", ms_err_str(MS_E_NOMEM));
		goto out;
	}
	/* PINs stay in memory until the run ends (lost sessions): not in swap. */
	if (out->pins != NULL) {
		(void)mlock(out->pins, MS_TOKENS_MAX * sizeof(*out->pins));
	}
	for (size_t i = 0; i < n; i++) {
		t[i].cfg = cfg;
		t[i].sink = sink;
		t[i].is_only = n == 1;
		t[i].uri = i == 0 ? cfg->key : cfg->keys[i - 1];
		/* One token's key is checked by the caller, with a line of its own. */
		t[i].cert = n == 1 ? NULL : cert;
		ms_p11_uri_redact(t[i].uri, t[i].shown, sizeof(t[i].shown));
	}
	run_phase(t, n, pick_all, open_one);
	err = first_error(t, n);
	if (err == MS_OK) {
		err = check_distinct(t, n);
	}
	if (err == MS_OK) {
		/* Locked, on its last try: refused before any PIN is asked for. */
		run_phase(t, n, pick_all, pin_check_one);
		err = first_error(t, n);
	}
	if (err != MS_OK) {
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct tok *src = ms_p11_uri_pin_value(t[i].p11) != NULL ||
					ms_p11_uri_pin_source(t[i].p11) != NULL ? &t[i] : &t[0];

		t[i].pin_value = ms_p11_uri_pin_value(src->p11);
		t[i].pin_source = ms_p11_uri_pin_source(src->p11);
	}
	err = read_pins(t, n, pins, pin, out->pins);
	if (err != MS_OK) {
		goto out;
	}
	share_lanes(t, n);
	run_phase(t, n, pick_first, login_first);
	err = first_error(t, n);
	if (err != MS_OK) {
		goto out;	/* a refused PIN goes to no other token */
	}
	run_phase(t, n, pick_ok, finish_one);
	err = first_error(t, n);
	if (err == MS_OK && cert == NULL) {
		err = check_same_key(t, n);
	}
	if (err != MS_OK) {
		goto out;
	}
	*main_out = t[0].signer;
	t[0].signer = NULL;
	if (n > 1) {
		out->signer[0] = *main_out;	/* borrowed: the caller frees it */
		for (size_t i = 0; i < n; i++) {
			if (i > 0) {
				out->signer[i] = t[i].signer;
				t[i].signer = NULL;
			}
			snprintf(out->name[i], sizeof(out->name[i]), "%s", t[i].name);
		}
		out->n = n;
	}
out:
	if (t != NULL) {
		toks_clear(t, n);
		free(t);
	}
	if (err != MS_OK) {
		ms_app_tokens_close(out);
	}
	return err;
}

void
ms_app_tokens_wipe(struct ms_tokens *t)
{
	for (size_t i = 0; t->pins != NULL && i < MS_TOKENS_MAX; i++) {
		ms_pin_clear(&t->pins[i]);
	}
}

void
ms_app_tokens_close(struct ms_tokens *t)
{
	for (size_t i = 1; i < t->n; i++) {
		ms_signer_free(t->signer[i]);
	}
	if (t->pins != NULL) {
		ms_app_tokens_wipe(t);
		(void)munlock(t->pins, MS_TOKENS_MAX * sizeof(*t->pins));
		free(t->pins);
	}
	memset(t, 0, sizeof(*t));
}
