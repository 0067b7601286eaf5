// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the one token a URI names among the slots of the loaded modules
 * (RFC 7512 matching through p11-kit, then the object it must hold) and
 * the sessions on it: session 0 and those of parallel signers.
 */
#include <string.h>

#include "p11_internal.h"

/* Slots one module may report; more is treated as a broken module. */
#define SLOTS_MAX 256
/* Candidates listed in an ambiguity or not-found message. */
#define LIST_MAX 8
/* Matching tokens searched for the object; more is ambiguous at once. */
#define HITS_MAX 32

/* Whether a matching token holds the object the context is opened for. */
enum token_fit {
	FIT_NO = 1,	/* cannot hold it: left out */
	FIT_MAYBE,	/* may hide it behind its login */
	FIT_HOLDS,	/* shows it, or its public half, without a login */
};

struct token_hit {
	size_t mod;
	CK_SLOT_ID slot;
	CK_FLAGS slot_flags;	/* CK_SLOT_INFO.flags, read by slot_matches() */
	CK_TOKEN_INFO info;
	enum token_fit fit;
};

struct token_search {
	struct token_hit hits[HITS_MAX];
	size_t n_hits;		/* may exceed HITS_MAX; only the first are kept */
	struct token_hit seen[LIST_MAX];
	size_t n_seen;		/* initialised tokens of the searched modules */
};

static void
list_token(struct ms_p11 *p11, struct ms_p11_fail *f, const struct token_hit *t)
{
	char label[33], serial[17], manuf[33];

	ms_p11i_text_clean(label, sizeof(label), t->info.label, sizeof(t->info.label));
	ms_p11i_text_clean(serial, sizeof(serial), t->info.serialNumber,
			   sizeof(t->info.serialNumber));
	ms_p11i_text_clean(manuf, sizeof(manuf), t->info.manufacturerID,
			   sizeof(t->info.manufacturerID));
	ms_p11i_fail_append(f, "\n  token=\"%s\" serial=\"%s\" manufacturer=\"%s\" "
			    "slot-id=%lu module %s", label, serial, manuf, t->slot,
			    p11->mods[t->mod].name);
}

/*
 * SoftHSM2 opens, locks, reads and parses a token object's file at every
 * C_SignInit on it; a session copy of the key stays in its memory and costs
 * less CPU per signature (bench/keycopy.sh; figures in BENCHMARKS.md). Only
 * SoftHSM2, and not in a hardware slot: on an HSM a key copy may be
 * audited, refused or use up its storage.
 */
bool
ms_p11i_token_is_softhsm(const CK_TOKEN_INFO *info)
{
	static const char manuf[] = "SoftHSM project";
	size_t n = sizeof(manuf) - 1;

	/* manufacturerID is blank-padded, not NUL-terminated. */
	if (memcmp(info->manufacturerID, manuf, n) != 0) {
		return false;
	}
	for (size_t i = n; i < sizeof(info->manufacturerID); i++) {
		if (info->manufacturerID[i] != ' ') {
			return false;
		}
	}
	return true;
}

/* Whether the blank-padded field @p (@len bytes) contains @word. */
static bool
field_has(const unsigned char *p, size_t len, const char *word)
{
	size_t n = strlen(word);

	for (size_t i = 0; n <= len && i <= len - n; i++) {
		if (memcmp(p + i, word, n) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * A token whose PINs a TPM guards: tpm2-pkcs11 sets no PIN-count flags, the
 * TPM's dictionary-attack protection counts wrong authorisations itself
 * (TPM 2.0 Part 1, 19.8). Known by the module (tpm2-pkcs11's library
 * description "TPM2.0 Cryptoki", its file libtpm2_pkcs11) or by a token
 * model naming a TPM (swtpm: "SW   TPM"); a real TPM's model is its vendor
 * string, so the module is the sure sign.
 */
bool
ms_p11i_token_is_tpm(const struct ms_p11 *p11)
{
	CK_INFO minfo;

	if (!p11->has_token) {
		return false;
	}
	if (field_has(p11->token_info.model, sizeof(p11->token_info.model), "TPM") ||
	    strstr(p11->mods[p11->mod_index].name, "tpm2_pkcs11") != NULL) {
		return true;
	}
	memset(&minfo, 0, sizeof(minfo));
	if (p11->fl->C_GetInfo(&minfo) != CKR_OK) {
		return false;
	}
	return field_has(minfo.libraryDescription, sizeof(minfo.libraryDescription), "TPM");
}

/* Whether the URI's slot attributes match @slot; its flags in *@flags. */
static bool
slot_matches(struct ms_p11 *p11, CK_FUNCTION_LIST *fl, CK_SLOT_ID slot, CK_FLAGS *flags)
{
	CK_SLOT_ID want = p11_kit_uri_get_slot_id(p11->uri);
	CK_SLOT_INFO info;

	if (want != (CK_SLOT_ID)-1 && want != slot) {
		return false;
	}
	memset(&info, 0, sizeof(info));
	if (fl->C_GetSlotInfo(slot, &info) != CKR_OK) {
		return false;
	}
	*flags = info.flags;
	return p11_kit_uri_match_slot_info(p11->uri, &info) != 0;
}

/* Walks the present slots of module @mi and records matches in @s. */
static void
search_module(struct ms_p11 *p11, size_t mi, struct token_search *s, struct ms_p11_fail *notes)
{
	CK_FUNCTION_LIST *fl = p11->mods[mi].fl;
	CK_SLOT_ID slots[SLOTS_MAX];
	CK_ULONG n = 0;
	CK_INFO minfo;
	CK_RV rv;

	memset(&minfo, 0, sizeof(minfo));
	rv = fl->C_GetInfo(&minfo);
	if (rv != CKR_OK || !p11_kit_uri_match_module_info(p11->uri, &minfo)) {
		return;
	}
	rv = fl->C_GetSlotList(CK_TRUE, NULL, &n);
	if (rv == CKR_OK) {
		n = SLOTS_MAX;
		rv = fl->C_GetSlotList(CK_TRUE, slots, &n);
	}
	if (rv != CKR_OK || n > SLOTS_MAX) {
		ms_p11i_fail_append(notes, "\n  module %s: C_GetSlotList: %s", p11->mods[mi].name,
				    rv != CKR_OK ? ms_p11_rv_name(rv) : "too many slots");
		return;
	}
	for (CK_ULONG i = 0; i < n; i++) {
		struct token_hit t = { .mod = mi, .slot = slots[i] };

		if (fl->C_GetTokenInfo(slots[i], &t.info) != CKR_OK) {
			continue;
		}
		/* An uninitialised token (SoftHSM2's spare slot) holds no keys. */
		if ((t.info.flags & CKF_TOKEN_INITIALIZED) == 0) {
			continue;
		}
		if (s->n_seen < LIST_MAX) {
			s->seen[s->n_seen] = t;
		}
		s->n_seen++;
		if (!slot_matches(p11, fl, slots[i], &t.slot_flags) ||
		    !p11_kit_uri_match_token_info(p11->uri, &t.info)) {
			continue;
		}
		if (s->n_hits < HITS_MAX) {
			s->hits[s->n_hits] = t;
		}
		s->n_hits++;
	}
}

/*
 * Whether session @h shows an object of class @cls with the URI's object=
 * and id= (an X.509 certificate when @cls is CKO_CERTIFICATE). A failed
 * search shows nothing.
 */
static bool
token_shows(struct ms_p11 *p11, CK_FUNCTION_LIST *fl, CK_SESSION_HANDLE h,
	    CK_OBJECT_CLASS cls)
{
	struct ms_p11i_query q;
	struct ms_p11_fail ignore;
	CK_OBJECT_HANDLE objs[1];
	size_t n = 0;

	if (ms_p11i_query_build(p11, &q, cls) != MS_OK) {
		return false;
	}
	if (cls == CKO_CERTIFICATE) {
		q.cert_type = CKC_X_509;
		q.tmpl[q.n++] = (CK_ATTRIBUTE){ CKA_CERTIFICATE_TYPE, &q.cert_type,
						sizeof(q.cert_type) };
	}
	return ms_p11i_find_on(fl, h, q.tmpl, q.n, objs, 1, &n, &ignore) == MS_OK && n > 0;
}

/*
 * Looks for the object on token @t in a public session: never a login, so
 * no PIN reaches a token that is not chosen. A token we cannot look into
 * is not ruled out.
 */
static enum token_fit
token_probe(struct ms_p11 *p11, const struct token_hit *t)
{
	CK_FUNCTION_LIST *fl = p11->mods[t->mod].fl;
	CK_FLAGS tf = t->info.flags;
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;
	enum token_fit fit = FIT_MAYBE;

	/* Private keys belong to the user: no user PIN, no private key. */
	if (p11->open_for == MS_P11_FOR_KEY && (tf & CKF_LOGIN_REQUIRED) != 0 &&
	    (tf & CKF_USER_PIN_INITIALIZED) == 0) {
		return FIT_NO;
	}
	if (fl->C_OpenSession(t->slot, CKF_SERIAL_SESSION, NULL, NULL, &h) != CKR_OK) {
		return FIT_MAYBE;
	}
	if (p11->open_for == MS_P11_FOR_CERT) {
		/* Certificates are read without a login: one not shown is not there. */
		fit = token_shows(p11, fl, h, CKO_CERTIFICATE) ? FIT_HOLDS : FIT_NO;
	} else if (token_shows(p11, fl, h, CKO_PRIVATE_KEY)) {
		fit = FIT_HOLDS;
	} else if ((tf & CKF_LOGIN_REQUIRED) == 0) {
		/* Nothing hides behind a login we never make (trust stores). */
		fit = FIT_NO;
	} else if (token_shows(p11, fl, h, CKO_PUBLIC_KEY) ||
		   token_shows(p11, fl, h, CKO_CERTIFICATE)) {
		fit = FIT_HOLDS;	/* the public half kept beside a private key */
	}
	(void)fl->C_CloseSession(h);
	return fit;
}

/*
 * Of several matching tokens, the one that holds the object: the only one
 * that shows it, else the only one that may hide it. *@chosen is NULL when
 * that is not one token; @s->hits[].fit says why.
 */
static void
token_choose(struct ms_p11 *p11, struct token_search *s, const struct token_hit **chosen)
{
	const struct token_hit *holds = NULL, *maybe = NULL;
	size_t n_holds = 0, n_maybe = 0;

	*chosen = NULL;
	if (s->n_hits > HITS_MAX) {
		return;
	}
	for (size_t i = 0; i < s->n_hits; i++) {
		s->hits[i].fit = token_probe(p11, &s->hits[i]);
		if (s->hits[i].fit == FIT_HOLDS) {
			holds = &s->hits[i];
			n_holds++;
		} else if (s->hits[i].fit == FIT_MAYBE) {
			maybe = &s->hits[i];
			n_maybe++;
		}
	}
	if (n_holds == 1) {
		*chosen = holds;
	} else if (n_holds == 0 && n_maybe == 1) {
		*chosen = maybe;
	}
}

/* Lists the hits whose fit is @fit (all when 0). */
static void
list_hits(struct ms_p11 *p11, struct ms_p11_fail *f, const struct token_search *s,
	  enum token_fit fit)
{
	size_t listed = 0;

	for (size_t i = 0; i < s->n_hits && i < HITS_MAX; i++) {
		if (fit != 0 && s->hits[i].fit != fit) {
			continue;
		}
		if (listed == LIST_MAX) {
			ms_p11i_fail_append(f, "\n  ...");
			break;
		}
		list_token(p11, f, &s->hits[i]);
		listed++;
	}
}

/* Several tokens match: say which hold the object, and how to pick one. */
static ms_err
report_choice(struct ms_p11 *p11, const struct token_search *s)
{
	struct ms_p11_fail *f = &p11->fail;
	const char *what = p11->open_for == MS_P11_FOR_KEY ? "private key" : "certificate";
	size_t n_holds = 0, n_maybe = 0;

	for (size_t i = 0; i < s->n_hits && i < HITS_MAX; i++) {
		n_holds += s->hits[i].fit == FIT_HOLDS;
		n_maybe += s->hits[i].fit == FIT_MAYBE;
	}
	if (s->n_hits > HITS_MAX) {
		ms_p11i_fail_set(f, NULL, CKR_OK, "%zu tokens match ", s->n_hits);
		ms_p11i_uri_describe(p11, f);
		ms_p11i_fail_append(f, "; use token=, serial= or slot-id= to pick one:");
		list_hits(p11, f, s, 0);
		return MS_E_AMBIGUOUS;
	}
	if (n_holds > 1 || n_maybe > 1) {
		ms_p11i_fail_set(f, NULL, CKR_OK, "%zu tokens match ", s->n_hits);
		ms_p11i_uri_describe(p11, f);
		ms_p11i_fail_append(f, " and %zu %s the %s", n_holds > 1 ? n_holds : n_maybe,
				    n_holds > 1 ? "show" : "may hold (behind their login)", what);
		ms_p11i_query_describe(p11, f);
		ms_p11i_fail_append(f, "; use token=, serial= or slot-id= to pick one:");
		list_hits(p11, f, s, n_holds > 1 ? FIT_HOLDS : FIT_MAYBE);
		return MS_E_AMBIGUOUS;
	}
	ms_p11i_fail_set(f, NULL, CKR_OK, "%zu tokens match ", s->n_hits);
	ms_p11i_uri_describe(p11, f);
	ms_p11i_fail_append(f, " and none can hold the %s", what);
	ms_p11i_query_describe(p11, f);
	ms_p11i_fail_append(f, " (searched without logging in):");
	list_hits(p11, f, s, 0);
	return MS_E_NOTFOUND;
}

static ms_err
report_search(struct ms_p11 *p11, const struct token_search *s, const struct ms_p11_fail *notes)
{
	struct ms_p11_fail *f = &p11->fail;

	if (s->n_hits == 0) {
		ms_p11i_fail_set(f, NULL, CKR_OK, "no token matches ");
		ms_p11i_uri_describe(p11, f);
		ms_p11i_fail_append(f, "; initialised tokens present: %zu", s->n_seen);
		for (size_t i = 0; i < s->n_seen && i < LIST_MAX; i++) {
			list_token(p11, f, &s->seen[i]);
		}
		ms_p11i_fail_append(f, "%s", notes->detail);
		for (size_t i = 0; i < p11->n_mods; i++) {
			ms_p11i_hint_append(f, p11->mods[i].fl, MS_P11I_HINT_NO_TOKEN, CKR_OK);
		}
		return MS_E_NOTFOUND;
	}
	return report_choice(p11, s);
}

/*
 * Picks the one initialised token that matches the URI's module, slot and
 * token attributes (of several, the one that holds the object: see
 * ms_p11_open()), and opens session 0 on it.
 */
ms_err
ms_p11i_token_select(struct ms_p11 *p11)
{
	struct token_search s;
	struct ms_p11_fail notes;
	const struct token_hit *t = NULL;
	ms_err err = MS_E_INTERNAL;

	memset(&s, 0, sizeof(s));
	ms_p11i_fail_clear(&notes);
	for (size_t i = 0; i < p11->n_mods; i++) {
		search_module(p11, i, &s, &notes);
	}
	if (s.n_hits == 1) {
		t = &s.hits[0];
	} else if (s.n_hits > 1) {
		token_choose(p11, &s, &t);
	}
	if (t == NULL) {
		return report_search(p11, &s, &notes);
	}
	p11->fl = p11->mods[t->mod].fl;
	p11->mod_index = t->mod;
	p11->slot = t->slot;
	p11->token_flags = t->info.flags;
	p11->slot_flags = t->slot_flags;
	ms_p11i_text_clean(p11->token_label, sizeof(p11->token_label), t->info.label,
			   sizeof(t->info.label));
	ms_p11i_text_clean(p11->token_serial, sizeof(p11->token_serial), t->info.serialNumber,
			   sizeof(t->info.serialNumber));
	p11->token_info = t->info;
	p11->has_token = true;
	p11->key_in_memory = ms_p11i_token_is_softhsm(&t->info) && !ms_p11_token_is_hardware(p11);
	err = ms_p11i_session_open(p11, &p11->sess[0].h, &p11->fail);
	if (err != MS_OK) {
		return err;
	}
	p11->sess[0].is_open = true;
	p11->n_sess = 1;
	return MS_OK;
}

/* A read-only serial session is all signing needs (PKCS#11 3.0, 5.6). */
ms_err
ms_p11i_session_open(struct ms_p11 *p11, CK_SESSION_HANDLE *h, struct ms_p11_fail *f)
{
	CK_RV rv;

	rv = p11->fl->C_OpenSession(p11->slot, CKF_SERIAL_SESSION, NULL, NULL, h);
	if (rv != CKR_OK) {
		ms_p11i_fail_set(f, "C_OpenSession", rv, "token \"%s\"", p11->token_label);
		return MS_E_TOKEN;
	}
	return MS_OK;
}

void
ms_p11i_session_replace(struct ms_p11i_session *s, CK_SESSION_HANDLE h)
{
	s->h = h;
	s->key_copy = CK_INVALID_HANDLE;	/* closed with the old session */
	s->copy_tried = false;
}

unsigned
ms_p11_session_count_max(const struct ms_p11 *p11, unsigned want)
{
	CK_TOKEN_INFO info;
	CK_ULONG max, used;

	if (p11 == NULL || !p11->has_token || want <= 1) {
		return 1;
	}
	if (want > MS_P11I_SESSIONS_MAX) {
		want = MS_P11I_SESSIONS_MAX;
	}
	memset(&info, 0, sizeof(info));
	if (p11->fl->C_GetTokenInfo(p11->slot, &info) != CKR_OK) {
		return 1;
	}
	max = info.ulMaxSessionCount;
	used = info.ulSessionCount;
	/* PKCS#11 3.0, 3.2: 0 means no practical limit; ~0 that the token won't say. */
	if (max == CK_EFFECTIVELY_INFINITE || max == CK_UNAVAILABLE_INFORMATION) {
		return want;
	}
	/* Our own open sessions count even if the token's number is missing or low. */
	if (used == CK_UNAVAILABLE_INFORMATION || used < p11->n_sess) {
		used = p11->n_sess;
	}
	if (max <= 1 || used >= max || max - used < 2) {
		return 1;
	}
	if (max - used + p11->n_sess < want) {
		return (unsigned)(max - used + p11->n_sess);
	}
	return want;
}

ms_err
ms_p11_session_add(struct ms_p11 *p11, unsigned *index)
{
	struct ms_p11i_session *s = NULL;
	CK_SESSION_HANDLE h = CK_INVALID_HANDLE;
	ms_err err = MS_E_INTERNAL;

	if (p11 == NULL || index == NULL || !p11->has_token || p11->n_sess == 0) {
		return MS_E_ARG;
	}
	if (p11->n_sess >= MS_P11I_SESSIONS_MAX) {
		ms_p11i_fail_set(&p11->fail, NULL, CKR_OK, "at most %d sessions",
				 MS_P11I_SESSIONS_MAX);
		return MS_E_NOMEM;
	}
	err = ms_p11i_session_open(p11, &h, &p11->fail);
	if (err != MS_OK) {
		return err;
	}
	s = &p11->sess[p11->n_sess];
	s->h = h;
	s->is_open = true;
	ms_p11i_fail_clear(&s->fail);
	*index = p11->n_sess;
	p11->n_sess++;
	return MS_OK;
}

bool
ms_p11_token_is_hardware(const struct ms_p11 *p11)
{
	/* The slot's flags were read when the token was chosen. */
	return p11 != NULL && p11->has_token && (p11->slot_flags & CKF_HW_SLOT) != 0;
}
