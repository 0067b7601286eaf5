// SPDX-License-Identifier: GPL-2.0-only
/*
 * slowtoken: reads the SLOWTOKEN_* settings (README.md): from the file
 * "<this copy's path>.conf" when it exists, else from the environment.
 */
#define _GNU_SOURCE	/* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "slowtoken.h"

#define DEFAULT_MODULE "/usr/lib/softhsm/libsofthsm2.so"
#define DEFAULT_HANG_MS 3600000.0
#define MS_MAX 1e9		/* about eleven days: enough for any "hang" */

/*
 * The per-copy file: two copies of the shim loaded in one process (one per
 * token) share the environment but not their globals, so each reads its
 * own settings. Read once under the wrappers' pthread_once; the values
 * point into conf_text for the life of the process.
 */
#define CONF_BYTES 8192
#define CONF_VARS 32

static const char *const conf_names[] = {
	"SLOWTOKEN_MODULE", "SLOWTOKEN_INIT_MS", "SLOWTOKEN_LOGIN_MS", "SLOWTOKEN_SIGN_MS",
	"SLOWTOKEN_OPEN_MS", "SLOWTOKEN_SERIAL", "SLOWTOKEN_MAX_SESSIONS", "SLOWTOKEN_FAULT",
	"SLOWTOKEN_EXCLUSIVE", "SLOWTOKEN_HANG_MS", "SLOWTOKEN_LOG", "SLOWTOKEN_PIN_FLAGS",
	"SLOWTOKEN_INIT_LOCK",
};

static char conf_text[CONF_BYTES + 1];
static const char *conf_name[CONF_VARS];
static const char *conf_value[CONF_VARS];
static size_t conf_n;
static bool conf_used;		/* the file exists: the environment is not read */

/* A setting: from this copy's file when it has one, else the environment. */
static const char *
setting(const char *var)
{
	if (!conf_used) {
		return getenv(var);
	}
	for (size_t i = 0; i < conf_n; i++) {
		if (strcmp(conf_name[i], var) == 0) {
			return conf_value[i];
		}
	}
	return NULL;
}

static bool
conf_known(const char *name)
{
	for (size_t i = 0; i < sizeof(conf_names) / sizeof(conf_names[0]); i++) {
		if (strcmp(conf_names[i], name) == 0) {
			return true;
		}
	}
	return false;
}

/* NAME=VALUE lines; blank lines and lines starting with '#' are skipped. */
static bool
conf_parse(const char *path)
{
	char *line = conf_text;

	while (*line != '\0') {
		char *end = strchr(line, '\n');
		char *eq = NULL;

		if (end != NULL) {
			*end = '\0';
		}
		if (line[0] != '\0' && line[0] != '#') {
			eq = strchr(line, '=');
			if (eq == NULL || conf_n == CONF_VARS) {
				fprintf(stderr, "slowtoken: %s: want NAME=VALUE lines (at most %d)\n",
					path, CONF_VARS);
				return false;
			}
			*eq = '\0';
			if (!conf_known(line)) {
				fprintf(stderr, "slowtoken: %s: unknown setting %s\n", path, line);
				return false;
			}
			conf_name[conf_n] = line;
			conf_value[conf_n] = eq + 1;
			conf_n++;
		}
		if (end == NULL) {
			break;
		}
		line = end + 1;
	}
	return true;
}

/*
 * "<path of this copy of the shim>.conf", if it exists: its settings replace
 * the environment's. Returns false after saying why on stderr.
 */
static bool
conf_load(void)
{
	Dl_info info;
	char path[4096];
	ssize_t len = 0;
	int fd;

	memset(&info, 0, sizeof(info));
	if (dladdr((const void *)conf_load, &info) == 0 || info.dli_fname == NULL) {
		return true;	/* no path known: the environment */
	}
	if ((size_t)snprintf(path, sizeof(path), "%s.conf", info.dli_fname) >= sizeof(path)) {
		return true;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			return true;
		}
		fprintf(stderr, "slowtoken: %s: %s\n", path, strerror(errno));
		return false;
	}
	conf_used = true;
	for (;;) {
		ssize_t n = read(fd, conf_text + len, CONF_BYTES - (size_t)len);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			break;
		}
		len += n;
		if (len == CONF_BYTES) {
			fprintf(stderr, "slowtoken: %s: longer than %d bytes\n", path, CONF_BYTES);
			close(fd);
			return false;
		}
	}
	close(fd);
	conf_text[len] = '\0';
	return conf_parse(path);
}

/* SLOWTOKEN_X_MS: milliseconds, fractional allowed; unset or empty is @dflt. */
static bool
read_ms(const char *var, double dflt, uint64_t *ns)
{
	const char *s = setting(var);
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
	const char *s = setting(var);
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

/* SLOWTOKEN_PIN_FLAGS: COUNT_LOW, FINAL_TRY, LOCKED, comma-separated. */
static bool
read_pin_flags(CK_FLAGS *out)
{
	static const struct {
		const char *name;
		CK_FLAGS flag;
	} known[] = {
		{ "COUNT_LOW", CKF_USER_PIN_COUNT_LOW },
		{ "FINAL_TRY", CKF_USER_PIN_FINAL_TRY },
		{ "LOCKED", CKF_USER_PIN_LOCKED },
	};
	const char *s = setting("SLOWTOKEN_PIN_FLAGS");
	const char *p = s;

	*out = 0;
	while (p != NULL && *p != '\0') {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		bool found = false;

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (strlen(known[i].name) == len && memcmp(known[i].name, p, len) == 0) {
				*out |= known[i].flag;
				found = true;
			}
		}
		if (!found) {
			fprintf(stderr, "slowtoken: SLOWTOKEN_PIN_FLAGS=%s: want COUNT_LOW, "
				"FINAL_TRY, LOCKED, comma-separated\n", s);
			return false;
		}
		p = comma != NULL ? comma + 1 : NULL;
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

/* RV: HANG, BIGLEN, CORRUPT, a CKR_ name, or a number (0x30). */
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
	if (len == 7 && memcmp(s, "CORRUPT", 7) == 0) {
		f->kind = ST_FAULT_CORRUPT;
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

/* One "FUNC:K[+|/N]:RV" of @len bytes at @s. */
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
	f->every = 0;
	if (errno == 0 && !f->and_later && *end == '/' && end[1] >= '1' && end[1] <= '9') {
		f->every = strtoul(end + 1, &end, 10);
	}
	if (errno != 0 || *end != '\0' || f->k == 0) {
		return false;
	}
	if (!parse_action(c2 + 1, len - (size_t)(c2 + 1 - s), f)) {
		return false;
	}
	return (f->kind != ST_FAULT_BIGLEN && f->kind != ST_FAULT_CORRUPT) || f->fn == sign_fn;
}

static bool
read_faults(struct st_config *cfg, const char *const *names, size_t n_names, unsigned sign_fn)
{
	const char *spec = setting("SLOWTOKEN_FAULT");
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
				"FUNC:K[+|/N]:RV, RV a CKR_ name, a number, HANG, or BIGLEN "
				"or CORRUPT (C_Sign only)\n", (int)len, p);
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
	if (!conf_load()) {
		return false;
	}
	s = setting("SLOWTOKEN_MODULE");
	if (s != NULL && *s != '\0') {
		cfg->module = s;
	}
	s = setting("SLOWTOKEN_SERIAL");
	cfg->serial = s != NULL && *s != '\0' && strcmp(s, "0") != 0;
	ok = read_ms("SLOWTOKEN_INIT_MS", 0, &cfg->init_ns) && ok;
	ok = read_ms("SLOWTOKEN_LOGIN_MS", 0, &cfg->login_ns) && ok;
	ok = read_ms("SLOWTOKEN_SIGN_MS", 0, &cfg->sign_ns) && ok;
	ok = read_ms("SLOWTOKEN_OPEN_MS", 0, &cfg->open_ns) && ok;
	ok = read_ms("SLOWTOKEN_HANG_MS", DEFAULT_HANG_MS, &cfg->hang_ns) && ok;
	ok = read_ulong("SLOWTOKEN_MAX_SESSIONS", &max) && ok;
	cfg->max_sessions = max;
	ok = read_faults(cfg, names, n_names, sign_fn) && ok;
	ok = read_pin_flags(&cfg->pin_flags) && ok;
	s = setting("SLOWTOKEN_EXCLUSIVE");
	if (s != NULL && *s != '\0') {
		cfg->exclusive = s;
	}
	s = setting("SLOWTOKEN_INIT_LOCK");
	if (s != NULL && *s != '\0') {
		cfg->init_lock = s;
	}
	s = setting("SLOWTOKEN_LOG");
	if (s != NULL && *s != '\0') {
		cfg->log_fd = open(s, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (cfg->log_fd < 0) {
			fprintf(stderr, "slowtoken: SLOWTOKEN_LOG=%s: %s\n", s, strerror(errno));
			ok = false;
		}
	}
	return ok;
}
