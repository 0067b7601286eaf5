// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the one token a URI names among the slots of the loaded modules
 * (RFC 7512 matching through p11-kit) and opening sessions on it.
 */
#include <string.h>

#include "p11_internal.h"

/* Slots one module may report; more is treated as a broken module. */
#define SLOTS_MAX 256
/* Candidates listed in an ambiguity or not-found message. */
#define LIST_MAX 8

struct token_hit {
	size_t mod;
	CK_SLOT_ID slot;
	CK_FLAGS slot_flags;	/* CK_SLOT_INFO.flags, read by slot_matches() */
	CK_TOKEN_INFO info;
};

struct token_search {
	struct token_hit hits[LIST_MAX];
	size_t n_hits;		/* may exceed LIST_MAX; only the first are kept */
	struct token_hit seen[LIST_MAX];
	size_t n_seen;		/* initialised tokens of the searched modules */
};

static void
list_token(struct ms_p11 *p11, struct ms_p11_fail *f, const struct token_hit *t)
{
	char label[33], serial[17], manuf[33];

	p11_text_clean(label, sizeof(label), t->info.label, sizeof(t->info.label));
	p11_text_clean(serial, sizeof(serial), t->info.serialNumber,
		       sizeof(t->info.serialNumber));
	p11_text_clean(manuf, sizeof(manuf), t->info.manufacturerID,
		       sizeof(t->info.manufacturerID));
	p11_fail_append(f, "\n  token=\"%s\" serial=\"%s\" manufacturer=\"%s\" slot-id=%lu module %s",
			label, serial, manuf, t->slot, p11->mods[t->mod].name);
}

/*
 * SoftHSM2 opens, locks, reads and parses a token object's file at every
 * C_SignInit on it; a session copy of the key stays in its memory, and
 * signing with it took 5% less CPU per signature (1.07-1.09 ms against
 * 1.13-1.16 ms, 1,000 signatures, four runs each). Only SoftHSM2, and not
 * in a hardware slot: on an HSM a key copy may be audited, refused or use
 * up its storage.
 */
bool
p11_token_is_softhsm(const CK_TOKEN_INFO *info)
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
		p11_fail_append(notes, "\n  module %s: C_GetSlotList: %s", p11->mods[mi].name,
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
		if (s->n_hits < LIST_MAX) {
			s->hits[s->n_hits] = t;
		}
		s->n_hits++;
	}
}

static ms_err
report_search(struct ms_p11 *p11, const struct token_search *s, const struct ms_p11_fail *notes)
{
	struct ms_p11_fail *f = &p11->fail;

	if (s->n_hits == 0) {
		p11_fail_set(f, NULL, CKR_OK, "no token matches ");
		p11_uri_describe(p11, f);
		p11_fail_append(f, "; initialised tokens present: %zu", s->n_seen);
		for (size_t i = 0; i < s->n_seen && i < LIST_MAX; i++) {
			list_token(p11, f, &s->seen[i]);
		}
		p11_fail_append(f, "%s", notes->detail);
		return MS_E_NOTFOUND;
	}
	p11_fail_set(f, NULL, CKR_OK, "%zu tokens match ", s->n_hits);
	p11_uri_describe(p11, f);
	p11_fail_append(f, "; use serial= or slot-id= to pick one:");
	for (size_t i = 0; i < s->n_hits && i < LIST_MAX; i++) {
		list_token(p11, f, &s->hits[i]);
	}
	return MS_E_AMBIGUOUS;
}

/*
 * Picks the one initialised token that matches the URI's module, slot and
 * token attributes, and opens session 0 on it.
 */
ms_err
p11_token_select(struct ms_p11 *p11)
{
	struct token_search s;
	struct ms_p11_fail notes;
	const struct token_hit *t = NULL;
	ms_err err = MS_E_INTERNAL;

	memset(&s, 0, sizeof(s));
	p11_fail_clear(&notes);
	for (size_t i = 0; i < p11->n_mods; i++) {
		search_module(p11, i, &s, &notes);
	}
	if (s.n_hits != 1) {
		return report_search(p11, &s, &notes);
	}
	t = &s.hits[0];
	p11->fl = p11->mods[t->mod].fl;
	p11->mod_index = t->mod;
	p11->slot = t->slot;
	p11->token_flags = t->info.flags;
	p11->slot_flags = t->slot_flags;
	p11_text_clean(p11->token_label, sizeof(p11->token_label), t->info.label,
		       sizeof(t->info.label));
	p11->has_token = true;
	p11->key_in_memory = p11_token_is_softhsm(&t->info) && !ms_p11_token_is_hardware(p11);
	err = p11_session_open(p11, &p11->sess[0].h, &p11->fail);
	if (err != MS_OK) {
		return err;
	}
	p11->sess[0].is_open = true;
	p11->n_sess = 1;
	return MS_OK;
}

/* A read-only serial session is all signing needs (PKCS#11 3.0, 5.6). */
ms_err
p11_session_open(struct ms_p11 *p11, CK_SESSION_HANDLE *h, struct ms_p11_fail *f)
{
	CK_RV rv;

	rv = p11->fl->C_OpenSession(p11->slot, CKF_SERIAL_SESSION, NULL, NULL, h);
	if (rv != CKR_OK) {
		p11_fail_set(f, "C_OpenSession", rv, "token \"%s\"", p11->token_label);
		return MS_E_TOKEN;
	}
	return MS_OK;
}
