// SPDX-License-Identifier: GPL-2.0-only
/*
 * `modsign verify`: judge each module's appended signature by the kernel's
 * rules and verify every signer against the given certificates
 * (ms_app_sig_verify(), as signing judges a signed module); one line per
 * module on stdout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../app/app.h"
#include "args.h"
#include "commands.h"
#include "inspect.h"
#include "msg.h"
#include "sink.h"

#define WHY_LEN 512
#define NAME_LEN 512

static const char usage_text[] =
	"Usage: modsign verify [-c <cert>]... [--kernel-default] [-r <dir>]...\n"
	"                      [--files-from <file> [-0]] [<module>...]\n";

static const char help_text[] =
	"Check each module's appended signature as the kernel does when it loads it:\n"
	"the module_signature trailer, the PKCS#7 structure (versions, id-data,\n"
	"detached, no signed attributes but ML-DSA's), the digest over every byte\n"
	"before the PKCS#7 (ML-DSA: the messageDigest attribute checked against it),\n"
	"and every signer's signature with the certificate it names.\n"
	"\n"
	"  -c, --cert <c>    a DER or PEM certificate file (every certificate of a PEM\n"
	"                    bundle) or a pkcs11: URI; repeatable. The signer must be\n"
	"                    one of them (issuer and serial, or subjectKeyIdentifier),\n"
	"                    as in the kernel's keyring.\n"
	"  --kernel-default  refuse ML-DSA signed attributes too, as a kernel built\n"
	"                    without CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA\n"
	"                    (the default) does. Without it they are taken, with a\n"
	"                    note on stderr: sign-file 7.2 writes them for ML-DSA.\n"
	MS_INSPECT_HELP_MODULES
	"\n"
	"Prints per module:  OK <module> <signer> <hash> <algo>\n"
	"                    FAIL <module>: <reason>\n"
	"Without -c:         UNVERIFIED <module> <signer> <hash> <algo>\n"
	"  (structure and trailer checked and the payload hashed; the signature is\n"
	"  checked only when the PKCS#7 carries the signer's certificate, which is\n"
	"  then not trusted). <signer> is the certificate's commonName (without -c:\n"
	"  the issuer's, as modinfo shows it); it may contain spaces: <hash> and\n"
	"  <algo> are the last two words; <algo> is rsa, ecdsa, or ml-dsa-44, -65,\n"
	"  -87 (the parameter set).\n"
	"Exit status: 0 when no module FAILs, 1 otherwise, 2 usage error.\n";

struct vjob {
	struct ms_cms_cert *certs[MS_APP_TRUST_MAX];
	size_t n_certs;
	uint64_t zlimit;	/* --max-module-size */
	bool kernel_default;	/* --kernel-default: no ML-DSA waiver */
	unsigned n_ok, n_unverified, n_fail;
};

/* The kernel's rule that the waiver lifts, named where it matters. */
#define WAIVER_NAME "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA"

static void
say_fail(struct vjob *j, const char *path, const char *why)
{
	ms_cli_line(stdout, "FAIL %s: %s", path, why);
	j->n_fail++;
}

/* The signer words of the OK line: each signer's name, joined by ", ". */
static void
names(const struct ms_pkcs7 *msg, const struct ms_pkcs7_signer_result *res, char *out,
      size_t cap)
{
	char one[NAME_LEN], hex[NAME_LEN - 16];
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; i < msg->n_signers; i++) {
		const struct ms_pkcs7_signer *s = &msg->signers[i];

		one[0] = '\0';
		if (res != NULL && res[i].cert != NULL &&
		    ms_cms_name_cn(ms_cms_cert_subject_name(res[i].cert), one,
				   sizeof(one)) != MS_OK) {
			one[0] = '\0';
		}
		if (one[0] == '\0') {
			ms_cli_signer_cn(s, one, sizeof(one));
		}
		if (one[0] == '\0') {
			ms_cli_hex(s->sid_type == MS_PKCS7_SID_SKID ? s->skid : s->serial, false,
				   hex, sizeof(hex));
			snprintf(one, sizeof(one), "%s:%s",
				 s->sid_type == MS_PKCS7_SID_SKID ? "skid" : "serial", hex);
		}
		n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s",
				      i > 0 ? ", " : "", one);
		if (n >= cap) {
			return;
		}
	}
}

/* "rsa", "ecdsa", or for ML-DSA its set: "ml-dsa-65". */
static const char *
key_word(const struct ms_pkcs7_signer *s)
{
	if (s->key_type == MS_KEY_MLDSA) {
		switch (s->mldsa) {
		case MS_MLDSA_44:
			return "ml-dsa-44";
		case MS_MLDSA_65:
			return "ml-dsa-65";
		case MS_MLDSA_87:
			return "ml-dsa-87";
		default:
			break;
		}
	}
	return ms_pkcs7_sig_alg_name(s->key_type);
}

/* "sha256 rsa", or for several signers "sha256,sha384 rsa,ecdsa". */
static void
algs_text(const struct ms_pkcs7 *msg, char *out, size_t cap)
{
	char hashes[128] = "", keys[128] = "";
	size_t i, nh = 0, nk = 0;

	for (i = 0; i < msg->n_signers; i++) {
		nh += (size_t)snprintf(hashes + nh, nh < sizeof(hashes) ? sizeof(hashes) - nh : 0,
				       "%s%s", i > 0 ? "," : "",
				       ms_cms_hash_name(msg->signers[i].hash));
		nk += (size_t)snprintf(keys + nk, nk < sizeof(keys) ? sizeof(keys) - nk : 0,
				       "%s%s", i > 0 ? "," : "",
				       key_word(&msg->signers[i]));
	}
	snprintf(out, cap, "%s %s", hashes, keys);
}

/* "why", or "signer N: why" when there are several. */
static void
signer_why(const struct ms_pkcs7 *msg, const struct ms_pkcs7_signer_result *res, char *out,
	   size_t cap)
{
	size_t i;

	for (i = 0; i < msg->n_signers; i++) {
		if (res[i].err == MS_OK) {
			continue;
		}
		if (msg->n_signers > 1) {
			snprintf(out, cap, "signer %zu of %zu: %s", i + 1, msg->n_signers,
				 res[i].why != NULL ? res[i].why : ms_err_str(res[i].err));
		} else {
			snprintf(out, cap, "%s",
				 res[i].why != NULL ? res[i].why : ms_err_str(res[i].err));
		}
		return;
	}
	snprintf(out, cap, "does not verify");
}

/* The line of a module whose PKCS#7 parsed: OK, UNVERIFIED or FAIL. */
static void
check_signers(struct vjob *j, const char *path, struct ms_sigmod *m)
{
	const struct ms_cms_cert *const *certs = (const struct ms_cms_cert *const *)j->certs;
	struct ms_app_sig_check c;
	char why[WHY_LEN] = "", who[NAME_LEN * 2], algs[300];
	size_t i;
	ms_err err;

	err = ms_app_sig_verify(&m->mf, m->layout.payload_len, &m->msg, certs, j->n_certs, 0,
				!j->kernel_default, &c);
	if (c.at_rules) {
		/* The rule's text names the ML-DSA waiver where it applies. */
		snprintf(why, sizeof(why), "PKCS#7: %s", c.why);
		say_fail(j, path, why);
		return;
	}
	if (c.at_hash) {
		if (err == MS_E_IO || err == MS_E_CHANGED) {
			ms_app_modfile_why(&m->mf, err, why, sizeof(why));
		} else {
			snprintf(why, sizeof(why), "cannot hash the module: %s", ms_err_str(err));
		}
		say_fail(j, path, why);
		return;
	}
	if (err == MS_E_MALFORMED && c.why == c.why_buf) {
		say_fail(j, path, c.why);	/* a certificate it carries does not parse */
		return;
	}
	algs_text(&m->msg, algs, sizeof(algs));
	if (c.mldsa_waived && (err == MS_OK || err == MS_E_NOTFOUND)) {
		ms_cli_line(stderr,
			"modsign: note: %s: ML-DSA with signed attributes (contentType, "
			"messageDigest), as sign-file 7.2 writes: a 7.x kernel takes them only "
			"with " WAIVER_NAME "=y (--kernel-default refuses them)", path);
	}
	if (err == MS_OK && j->n_certs > 0) {
		names(&m->msg, c.res, who, sizeof(who));
		ms_cli_line(stdout, "OK %s %s %s", path, who, algs);
		j->n_ok++;
		return;
	}
	if (j->n_certs == 0 && (err == MS_OK || err == MS_E_NOTFOUND)) {
		/* Only a signer whose carried certificate failed the math is an error. */
		for (i = 0; i < m->msg.n_signers; i++) {
			if (c.res[i].err != MS_OK && c.res[i].err != MS_E_NOTFOUND) {
				err = c.res[i].err;
			}
		}
		if (err == MS_OK || err == MS_E_NOTFOUND) {
			names(&m->msg, NULL, who, sizeof(who));
			ms_cli_line(stdout, "UNVERIFIED %s %s %s", path, who, algs);
			j->n_unverified++;
			return;
		}
	}
	signer_why(&m->msg, c.res, why, sizeof(why));
	say_fail(j, path, why);
}

static void
verify_one(struct vjob *j, const char *path)
{
	struct ms_sigmod m;
	char why[WHY_LEN] = "";
	ms_err err;

	err = ms_cli_sigmod_open(path, j->zlimit, &m, why, sizeof(why));
	if (err != MS_OK) {
		say_fail(j, path, why);
		goto out;
	}
	if (m.parse_err != MS_OK) {
		snprintf(why, sizeof(why), "PKCS#7: %s", m.parse_why);
		say_fail(j, path, why);
		goto out;
	}
	check_signers(j, path, &m);
out:
	ms_cli_sigmod_clear(&m);
	fflush(stdout);
}

int
ms_cli_verify(int argc, char **argv)
{
	struct ms_inspect_args a;
	struct ms_module_list list = { NULL, 0, 0 };
	struct vjob j;
	size_t i;
	int rc;

	memset(&j, 0, sizeof(j));
	rc = ms_cli_inspect_args(argc, argv, MS_INSPECT_OPT_CERT | MS_INSPECT_OPT_KERNEL_DEFAULT, usage_text, help_text, &a);
	if (rc != MS_EXIT_OK) {
		return rc == MS_EXIT_DONE ? MS_EXIT_OK : rc;
	}
	rc = MS_EXIT_FAIL;
	j.zlimit = a.list.max_module_size;
	j.kernel_default = a.kernel_default;
	for (i = 0; i < a.n_certs; i++) {
		size_t n = 0;

		/* Each -c may be a bundle (the kernel's trusted keys): every certificate in it. */
		if (ms_app_cert_load_all(a.certs[i], ms_cli_sink(), j.certs + j.n_certs,
					 MS_APP_TRUST_MAX - j.n_certs, &n) != MS_OK) {
			goto out;
		}
		j.n_certs += n;
	}
	if (ms_app_list_build(&a.list, ms_cli_sink(), &list) != MS_OK) {
		goto out;
	}
	if (list.n == 0) {
		ms_cli_error("no modules to verify");
		goto out;
	}
	if (j.n_certs == 0) {
		ms_cli_warn("no -c certificate: signers are not verified, only the structure "
			    "and the payload digest (UNVERIFIED lines)");
	}
	for (i = 0; i < list.n; i++) {
		verify_one(&j, list.path[i]);
	}
	rc = j.n_fail == 0 ? MS_EXIT_OK : MS_EXIT_FAIL;
	if (list.n > 1) {
		fprintf(stderr, "modsign: verify: %u OK, %u unverified, %u failed\n", j.n_ok,
			j.n_unverified, j.n_fail);
	}
out:
	ms_app_list_free(&list);
	for (i = 0; i < j.n_certs; i++) {
		ms_cms_cert_free(j.certs[i]);
	}
	return rc;
}
