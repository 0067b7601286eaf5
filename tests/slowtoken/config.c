// SPDX-License-Identifier: GPL-2.0-only
/* slowtoken: reads the SLOWTOKEN_* environment variables (README.md). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slowtoken.h"

#define DEFAULT_MODULE "/usr/lib/softhsm/libsofthsm2.so"
#define DEFAULT_HANG_MS 3600000.0
#define MS_MAX 1e9		/* about eleven days: enough for any "hang" */

/* SLOWTOKEN_X_MS: milliseconds, fractional allowed; unset or empty is @dflt. */
static bool
read_ms(const char *var, double dflt, uint64_t *ns)
{
	const char *s = getenv(var);
	char *end = NULL;
	double ms = dflt;

	if (s != NULL && *s != '\0') {
		errno = 0;
		ms = strtod(s, &end);
		if (errno != 0 || *end != '\0' || !isfinite(ms) || ms < 0 || ms > MS_MAX) {
			fprintf(stderr, "slowtoken: %s=%s: want milliseconds from 0 to %.0f\n",
				var, s, MS_MAX);
			return false;
		}
	}
	*ns = (uint64_t)(ms * 1e6 + 0.5);
	return true;
}

static bool
read_ulong(const char *var, unsigned long *out)
{
	const char *s = getenv(var);
	char *end = NULL;

	*out = 0;
	if (s == NULL || *s == '\0') {
		return true;
	}
	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || *s == '-' || *s == '+') {
		fprintf(stderr, "slowtoken: %s=%s: want a number\n", var, s);
		return false;
	}
	return true;
}

static bool
find_name(const char *s, size_t len, const char *const *names, size_t n_names, unsigned *fn)
{
	for (size_t i = 0; i < n_names; i++) {
		if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0) {
			*fn = (unsigned)i;
			return true;
		}
	}
	return false;
}

/* RV: HANG, BIGLEN, a CKR_ name, or a number (0x30). */
static bool
parse_action(const char *s, size_t len, struct st_fault *f)
{
	char num[32];
	char *end = NULL;

	if (len == 4 && memcmp(s, "HANG", 4) == 0) {
		f->kind = ST_FAULT_HANG;
		return true;
	}
	if (len == 6 && memcmp(s, "BIGLEN", 6) == 0) {
		f->kind = ST_FAULT_BIGLEN;
		return true;
	}
	f->kind = ST_FAULT_RV;
	if (st_rv_parse(s, len, &f->rv)) {
		return true;
	}
	if (len == 0 || len >= sizeof(num) || s[0] < '0' || s[0] > '9') {
		return false;
	}
	memcpy(num, s, len);
	num[len] = '\0';
	errno = 0;
	f->rv = strtoul(num, &end, 0);
	return errno == 0 && *end == '\0';
}

/* One "FUNC:K[+]:RV" of @len bytes at @s. */
static bool
parse_fault(const char *s, size_t len, const char *const *names, size_t n_names,
	    unsigned sign_fn, struct st_fault *f)
{
	const char *c1 = memchr(s, ':', len);
	const char *c2 = c1 != NULL ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s)) : NULL;
	char num[32];
	size_t klen;
	char *end = NULL;

	if (c2 == NULL) {
		return false;
	}
	if (!find_name(s, (size_t)(c1 - s), names, n_names, &f->fn)) {
		return false;
	}
	klen = (size_t)(c2 - (c1 + 1));
	if (klen == 0 || klen >= sizeof(num)) {
		return false;
	}
	memcpy(num, c1 + 1, klen);
	num[klen] = '\0';
	f->and_later = num[klen - 1] == '+';
	if (f->and_later) {
		num[klen - 1] = '\0';
	}
	if (num[0] < '0' || num[0] > '9') {
		return false;
	}
	errno = 0;
	f->k = strtoul(num, &end, 10);
	if (errno != 0 || *end != '\0' || f->k == 0) {
		return false;
	}
	if (!parse_action(c2 + 1, len - (size_t)(c2 + 1 - s), f)) {
		return false;
	}
	return f->kind != ST_FAULT_BIGLEN || f->fn == sign_fn;
}

static bool
read_faults(struct st_config *cfg, const char *const *names, size_t n_names, unsigned sign_fn)
{
	const char *spec = getenv("SLOWTOKEN_FAULT");
	const char *p = spec;

	if (spec == NULL || *spec == '\0') {
		return true;
	}
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);

		if (cfg->n_faults == ST_FAULTS_MAX) {
			fprintf(stderr, "slowtoken: SLOWTOKEN_FAULT: at most %d faults\n",
				ST_FAULTS_MAX);
			return false;
		}
		if (!parse_fault(p, len, names, n_names, sign_fn, &cfg->faults[cfg->n_faults])) {
			fprintf(stderr, "slowtoken: SLOWTOKEN_FAULT: bad entry '%.*s': want "
				"FUNC:K[+]:RV, RV a CKR_ name, a number, HANG or BIGLEN "
				"(C_Sign only)\n", (int)len, p);
			return false;
		}
		cfg->n_faults++;
		if (comma == NULL) {
			return true;
		}
		p = comma + 1;
	}
}

bool
st_config_read(struct st_config *cfg, const char *const *names, size_t n_names,
	       unsigned sign_fn)
{
	const char *s;
	unsigned long max = 0;
	bool ok = true;

	memset(cfg, 0, sizeof(*cfg));
	cfg->log_fd = -1;
	cfg->module = DEFAULT_MODULE;
	s = getenv("SLOWTOKEN_MODULE");
	if (s != NULL && *s != '\0') {
		cfg->module = s;
	}
	s = getenv("SLOWTOKEN_SERIAL");
	cfg->serial = s != NULL && *s != '\0' && strcmp(s, "0") != 0;
	ok = read_ms("SLOWTOKEN_INIT_MS", 0, &cfg->init_ns) && ok;
	ok = read_ms("SLOWTOKEN_LOGIN_MS", 0, &cfg->login_ns) && ok;
	ok = read_ms("SLOWTOKEN_SIGN_MS", 0, &cfg->sign_ns) && ok;
	ok = read_ms("SLOWTOKEN_OPEN_MS", 0, &cfg->open_ns) && ok;
	ok = read_ms("SLOWTOKEN_HANG_MS", DEFAULT_HANG_MS, &cfg->hang_ns) && ok;
	ok = read_ulong("SLOWTOKEN_MAX_SESSIONS", &max) && ok;
	cfg->max_sessions = max;
	ok = read_faults(cfg, names, n_names, sign_fn) && ok;
	s = getenv("SLOWTOKEN_EXCLUSIVE");
	if (s != NULL && *s != '\0') {
		cfg->exclusive = s;
	}
	s = getenv("SLOWTOKEN_LOG");
	if (s != NULL && *s != '\0') {
		cfg->log_fd = open(s, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (cfg->log_fd < 0) {
			fprintf(stderr, "slowtoken: SLOWTOKEN_LOG=%s: %s\n", s, strerror(errno));
			ok = false;
		}
	}
	return ok;
}
