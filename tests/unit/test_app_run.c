// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests for the signing run of the application layer (src/app/job.c,
 * sign.c, resign.c, run.c) with a sink that records its lines: real
 * modules signed on a real SoftHSM2 token (or with a key file) through
 * the job and the run verify against the certificate; a module that is a
 * symbolic link or missing comes out as a line naming it while the others
 * are signed; the summary and the progress go through the sink too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/app/app.h"
#include "../../src/modfmt/strip.h"
#include "test.h"
#include "test_app_sink.h"
#include "test_p11_fixture.h"

#define RUN_MODULES_MAX 8

/* A PIN provider with the fixture's user PIN. */
static ms_err
test_pin_get(void *ctx, const struct ms_app_pin_ask *ask, struct ms_pin *pin)
{
	(void)ctx;
	(void)ask;
	p11t_pin(pin, P11T_PIN);
	return MS_OK;
}

static const struct ms_app_pins test_pins = { test_pin_get, NULL };

/* A module file of @len bytes, not signed. */
static void
write_module(const char *path, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	fputs("\177ELF", f);
	for (size_t i = 4; i < len; i++) {
		putc((int)(i * 7 % 251), f);
	}
	CHECK(fclose(f) == 0);
}

/* Whether @path ends with a signature that verifies with @cert, by the kernel's rules. */
static ms_err
module_verifies(const char *path, const struct ms_cms_cert *cert)
{
	const struct ms_cms_cert *certs[1] = { cert };
	struct ms_app_sig_check c;
	struct ms_modfile mf;
	struct ms_mod_layout l;
	struct ms_pkcs7 msg;
	const char *why = NULL;
	uint8_t *blob = NULL;
	ms_err err;

	ms_modfile_init(&mf);
	err = ms_modfile_open(&mf, path);
	if (err == MS_OK) {
		err = ms_mod_layout_read(&mf, &l, &why);
	}
	if (err == MS_OK) {
		blob = malloc(l.sig_len);
		err = blob != NULL ? ms_mod_sig_read(&mf, &l, blob, l.sig_len) : MS_E_NOMEM;
	}
	if (err == MS_OK) {
		err = ms_pkcs7_parse(blob, l.sig_len, &msg, &why);
	}
	if (err == MS_OK) {
		err = ms_app_sig_verify(&mf, l.payload_len, &msg, certs, 1, MS_HASH_SHA256, false,
					&c);
	}
	free(blob);
	ms_modfile_clear(&mf);
	return err;
}

/* What one run needs, and what it said. */
struct run_case {
	char dir[64];
	char key[4096], x509[4096];	/* ms_test_data() answers in one buffer */
	char path[RUN_MODULES_MAX][128];
	char *names[RUN_MODULES_MAX];
	size_t n;
	struct ms_opts o;
	struct test_sink rec;
	struct ms_module_list list;
	struct ms_name_set set;
	struct ms_dir_set dirs;
	struct ms_job job;
	struct ms_run_end end;
};

static void
case_init(struct run_case *rc, const char *key)
{
	memset(rc, 0, sizeof(*rc));
	memcpy(rc->dir, "/tmp/app-run-XXXXXX", sizeof("/tmp/app-run-XXXXXX"));
	CHECK(mkdtemp(rc->dir) != NULL);
	test_sink_init(&rc->rec);
	rc->o.hash_name = "sha256";
	snprintf(rc->key, sizeof(rc->key), "%s", key);
	snprintf(rc->x509, sizeof(rc->x509), "%s", ms_test_data("rsa2048.x509.der"));
	rc->o.key = rc->key;
	rc->o.x509 = rc->x509;
	rc->o.p7s_mode = 0644;
	rc->o.modules = rc->names;
}

/* Adds module @name of the case's directory to the command line. */
static const char *
case_add(struct run_case *rc, const char *name)
{
	char dir[sizeof(rc->dir)];

	CHECK(rc->n < RUN_MODULES_MAX);
	memcpy(dir, rc->dir, sizeof(dir));
	snprintf(rc->path[rc->n], sizeof(rc->path[0]), "%s/%s", dir, name);
	rc->names[rc->n] = rc->path[rc->n];
	rc->o.n_modules = ++rc->n;
	return rc->path[rc->n - 1];
}

/* The list, its names and directories, the job, the run: as the command line does it. */
static void
case_run(struct run_case *rc)
{
	const struct ms_app_sink *sink = &rc->rec.sink;

	CHECK_ERR(ms_app_list_build(&rc->o, sink, &rc->list), MS_OK);
	CHECK_ERR(ms_app_names_build(&rc->list, rc->o.verbose, sink, &rc->set), MS_OK);
	CHECK_ERR(ms_app_dirs_of((const char *const *)rc->list.path, rc->list.n, &rc->dirs),
		  MS_OK);
	CHECK_ERR(ms_app_job_open(&rc->job, &rc->o, NULL, sink, &test_pins), MS_OK);
	rc->job.write_mode = MS_WRITE_REPLACE_DIR_SYNC_LATER;
	ms_app_run(&rc->job, &rc->list, &rc->set, &rc->dirs, NULL, &rc->end);
	CHECK(!rc->end.stuck);
	CHECK_EQ(rc->end.signo, 0);
	CHECK_ERR(ms_app_dirs_sync(&rc->dirs, sink), MS_OK);
}

static void
case_done(struct run_case *rc)
{
	ms_app_job_close(&rc->job);
	ms_app_job_close(&rc->job);	/* again: harmless */
	ms_app_dirs_free(&rc->dirs);
	ms_app_names_free(&rc->set);
	ms_app_list_free(&rc->list);
	for (size_t i = 0; i < rc->n; i++) {
		char p7s[160];

		unlink(rc->path[i]);
		snprintf(p7s, sizeof(p7s), "%s.p7s", rc->path[i]);
		unlink(p7s);
	}
	rmdir(rc->dir);
}

static struct ms_cms_cert *
test_cert(void)
{
	struct ms_cms_cert *cert = NULL;

	CHECK_ERR(ms_app_cert_load(ms_test_data("rsa2048.x509.der"), NULL, &cert), MS_OK);
	return cert;
}

MS_TEST(app_run_token_signs_modules_a_link_and_a_missing_one_are_said)
{
	struct run_case rc;
	struct ms_cms_cert *cert = NULL;
	const char *a, *b, *c, *link_ko, *missing;
	char line[256];

	p11t_token();
	case_init(&rc, P11T_TOKEN ";object=rsa2048;type=private" P11T_URI_PATH);
	rc.o.bulk = true;
	rc.o.verbose = true;
	a = case_add(&rc, "a.ko");
	link_ko = case_add(&rc, "link.ko");
	b = case_add(&rc, "b.ko");
	missing = case_add(&rc, "missing.ko");
	c = case_add(&rc, "c.ko");
	write_module(a, 3000);
	write_module(b, 1);
	write_module(c, 70000);
	CHECK(symlink("a.ko", link_ko) == 0);
	case_run(&rc);
	cert = test_cert();

	CHECK(!rc.end.ok);
	CHECK_ERR(module_verifies(a, cert), MS_OK);
	CHECK_ERR(module_verifies(b, cert), MS_OK);
	CHECK_ERR(module_verifies(c, cert), MS_OK);
	/* The link's and the missing module's own lines, naming them; the link stays a link. */
	snprintf(line, sizeof(line), "%s: is a symbolic link", link_ko);
	CHECK(test_sink_find(&rc.rec, MS_APP_SAY_ERROR, line) >= 0);
	snprintf(line, sizeof(line), "%s: ", missing);
	CHECK(test_sink_find(&rc.rec, MS_APP_SAY_ERROR, line) >= 0);
	CHECK(access(missing, F_OK) != 0);
	{
		struct stat st;

		CHECK(lstat(link_ko, &st) == 0 && S_ISLNK(st.st_mode));
	}
	/* -v: one line per module signed; the summary and the last progress. */
	snprintf(line, sizeof(line), "signed %s", b);
	CHECK(test_sink_find(&rc.rec, MS_APP_SAY_LINE, line) >= 0);
	CHECK(test_sink_find(&rc.rec, MS_APP_SAY_INFO,
			     "3 signed, 2 failed, 0 refused (signed already), 0 skipped "
			     "(signature verified), 0 not signed, of 5;") >= 0);
	CHECK(rc.rec.progress_last);
	CHECK_EQ(rc.rec.progress_done, (size_t)5);

	ms_cms_cert_free(cert);
	case_done(&rc);
}

MS_TEST(app_run_key_file_single_module_and_the_signed_policy)
{
	struct run_case rc;
	struct ms_cms_cert *cert = NULL;
	const char *a;
	char line[256];

	case_init(&rc, ms_test_data("rsa2048.key.pem"));
	a = case_add(&rc, "one.ko");
	write_module(a, 5000);
	case_run(&rc);
	cert = test_cert();
	CHECK(rc.end.ok);
	CHECK_ERR(module_verifies(a, cert), MS_OK);
	CHECK_EQ(rc.rec.n, (size_t)0);		/* one module, all well: nothing said */
	CHECK_EQ(rc.rec.progress_n, (size_t)0);	/* no progress outside bulk mode */
	case_done(&rc);

	/* Signed again: refused by default, with the line naming it; left as it is. */
	case_init(&rc, ms_test_data("rsa2048.key.pem"));
	a = case_add(&rc, "one.ko");
	write_module(a, 5000);
	case_run(&rc);
	CHECK(rc.end.ok);
	ms_app_job_close(&rc.job);
	ms_app_dirs_free(&rc.dirs);
	ms_app_names_free(&rc.set);
	ms_app_list_free(&rc.list);
	memset(&rc.end, 0, sizeof(rc.end));
	case_run(&rc);
	CHECK(!rc.end.ok);
	snprintf(line, sizeof(line), "%s: already ends with a module signature", a);
	CHECK(test_sink_find(&rc.rec, MS_APP_SAY_ERROR, line) >= 0);
	CHECK_ERR(module_verifies(a, cert), MS_OK);
	ms_cms_cert_free(cert);
	case_done(&rc);
}
