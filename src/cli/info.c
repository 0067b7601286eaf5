// SPDX-License-Identifier: GPL-2.0-only
/*
 * `modsign info`: what each module's appended signature says (signed or
 * not, lengths, signers, hash, algorithm, modinfo's fields), as text or
 * JSON. Nothing is verified here; `modsign verify` does that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "inspect.h"
#include "msg.h"
#include "sink.h"

#define WHY_LEN 512
#define TEXT_LEN 1024
#define COL 16		/* key column, as modinfo aligns it */

/* The kernel's option that takes ML-DSA signed attributes. */
#define WAIVER_NAME "CONFIG_PKCS7_WAIVE_AUTHATTRS_REJECTION_FOR_MLDSA"
#define WAIVER_NOTE \
	"ML-DSA with signed attributes: a 7.x kernel takes them only with " WAIVER_NAME "=y"

static const char usage_text[] =
	"Usage: modsign info [--json] [--kernel-default] [-r <dir>]... [--files-from <file> [-0]]\n"
	"                    [<module>...]\n";

static const char help_text[] =
	"Show each module's appended signature: signed or not, the lengths, each\n"
	"signer (issuer and serial, or subjectKeyIdentifier), hash and algorithm,\n"
	"and the fields modinfo shows (signer, sig_key, sig_hashalgo). Nothing is\n"
	"verified: use `modsign verify`.\n"
	"\n"
	"  --json            one JSON array, an object per module\n"
	"  --kernel-default  ML-DSA signed attributes (sign-file 7.2's) break the rules,\n"
	"                    as in a kernel without " WAIVER_NAME ";\n"
	"                    without it they are taken, with a note\n"
	MS_INSPECT_HELP_MODULES
	"\n"
	"Exit status: 0 when every module was read and is unsigned or carries a\n"
	"signature the kernel's rules accept in form; 1 otherwise; 2 usage error.\n";

static void
json_key_str(const char *key, const char *v, bool comma)
{
	printf("%s\"%s\": ", comma ? ", " : "", key);
	ms_cli_put_json_str(stdout, v);
}

static const char *
sig_alg_long(const struct ms_pkcs7_signer *s)
{
	static const char *const ecdsa[] = {
		"", "ecdsa-with-SHA1", "ecdsa-with-SHA224", "ecdsa-with-SHA256",
		"ecdsa-with-SHA384", "ecdsa-with-SHA512", "ecdsa-with-SHA3-256",
		"ecdsa-with-SHA3-384", "ecdsa-with-SHA3-512",
	};
	static const char *const mldsa[] = { "ML-DSA", "ML-DSA-44", "ML-DSA-65", "ML-DSA-87" };
	size_t i = (size_t)s->sig_hash;

	if (s->key_type == MS_KEY_MLDSA) {
		i = (size_t)s->mldsa;
		return i < sizeof(mldsa) / sizeof(mldsa[0]) ? mldsa[i] : "ML-DSA";
	}
	if (s->key_type == MS_KEY_RSA) {
		return "rsaEncryption";
	}
	return i < sizeof(ecdsa) / sizeof(ecdsa[0]) ? ecdsa[i] : "ecdsa";
}

/* The fields of one signer, text form; @tag is "" or "signer 2 ". */
static void
text_signer(const struct ms_pkcs7_signer *s, const char *tag)
{
	char text[TEXT_LEN];

	if (s->sid_type == MS_PKCS7_SID_ISSUER_SERIAL) {
		if (ms_cms_name_text(s->issuer, text, sizeof(text)) != MS_OK) {
			snprintf(text, sizeof(text), "(not printable)");
		}
		ms_cli_line(stdout, "%s%-*s%s", tag, COL, "issuer:", text);
		ms_cli_hex(s->serial, false, text, sizeof(text));
		ms_cli_line(stdout, "%s%-*s%s", tag, COL, "serial:", text);
	} else {
		ms_cli_hex(s->skid, false, text, sizeof(text));
		ms_cli_line(stdout, "%s%-*s%s", tag, COL, "skid:", text);
	}
	ms_cli_line(stdout, "%s%-*s%s", tag, COL, "hash:", ms_cms_hash_name(s->hash));
	ms_cli_line(stdout, "%s%-*s%s (%s)", tag, COL, "algorithm:",
		    ms_pkcs7_sig_alg_name(s->key_type), sig_alg_long(s));
	ms_cli_line(stdout, "%s%-*s%zu", tag, COL, "signature_len:", s->signature.len);
	if (s->has_signed_attrs) {
		ms_cli_line(stdout, "%s%-*s%s", tag, COL, "signed_attrs:", "yes");
	}
}

/* modinfo's lines, from the first signer (kmod reads only that one). */
static void
text_modinfo(const struct ms_pkcs7_signer *s)
{
	char text[TEXT_LEN];

	ms_cli_line(stdout, "%-*s%s", COL, "sig_id:", "PKCS#7");
	ms_cli_signer_cn(s, text, sizeof(text));
	if (text[0] != '\0') {
		ms_cli_line(stdout, "%-*s%s", COL, "signer:", text);
	}
	ms_cli_sig_key(s, text, sizeof(text));
	ms_cli_line(stdout, "%-*s%s", COL, "sig_key:", text);
	ms_cli_line(stdout, "%-*s%s", COL, "sig_hashalgo:", ms_cms_hash_name(s->hash));
}

static void
text_module(const char *path, const struct ms_sigmod *m, ms_err err, const char *why,
	    const char *problem, const char *note)
{
	size_t i;
	char tag[32];

	ms_cli_line(stdout, "%-*s%s", COL, "module:", path);
	if (m->is_open && m->mf.zfmt != MS_ZFMT_NONE) {
		ms_cli_line(stdout, "%-*s%s", COL, "compression:", ms_mod_zfmt_name(m->mf.zfmt));
	}
	/* A container that does not decode is an error of the file, not of its trailer. */
	if (err == MS_E_MALFORMED && !m->is_open) {
		err = MS_E_IO;
	}
	if (err == MS_E_NOTFOUND) {
		ms_cli_line(stdout, "%-*s%s", COL, "signed:", "no");
		ms_cli_line(stdout, "%s", "");
		return;
	}
	if (err != MS_OK && err != MS_E_MALFORMED) {
		ms_cli_line(stdout, "%-*s%s", COL, "error:", why);
		ms_cli_line(stdout, "%s", "");
		return;
	}
	ms_cli_line(stdout, "%-*s%s", COL, "signed:", err == MS_OK ? "yes" : "malformed");
	if (err != MS_OK) {
		ms_cli_line(stdout, "%-*s%s", COL, "error:", why);
		ms_cli_line(stdout, "%s", "");
		return;
	}
	ms_cli_line(stdout, "%-*s%u", COL, "sig_len:", m->layout.sig_len);
	ms_cli_line(stdout, "%-*s%llu", COL, "payload_len:",
		    (unsigned long long)m->layout.payload_len);
	if (m->parse_err == MS_OK) {
		ms_cli_line(stdout, "%-*s%zu", COL, "signers:", m->msg.n_signers);
		for (i = 0; i < m->msg.n_signers; i++) {
			snprintf(tag, sizeof(tag), i == 0 ? "" : "signer %zu ", i + 1);
			text_signer(&m->msg.signers[i], tag);
		}
		ms_cli_line(stdout, "%-*s%zu", COL, "certificates:", m->msg.n_certs);
		text_modinfo(&m->msg.signers[0]);
	}
	if (problem != NULL) {
		ms_cli_line(stdout, "%-*s%s", COL, "error:", problem);
	}
	if (note != NULL) {
		ms_cli_line(stdout, "%-*s%s", COL, "note:", note);
	}
	ms_cli_line(stdout, "%s", "");
}

static void
json_signer(const struct ms_pkcs7_signer *s, bool comma)
{
	char text[TEXT_LEN];

	printf("%s{\"version\": %u, ", comma ? ", " : "", s->version);
	if (s->sid_type == MS_PKCS7_SID_ISSUER_SERIAL) {
		printf("\"sid\": \"issuer_serial\", ");
		if (ms_cms_name_text(s->issuer, text, sizeof(text)) != MS_OK) {
			text[0] = '\0';
		}
		json_key_str("issuer", text, false);
		ms_cli_hex(s->serial, false, text, sizeof(text));
		json_key_str("serial", text, true);
	} else {
		printf("\"sid\": \"skid\", ");
		ms_cli_hex(s->skid, false, text, sizeof(text));
		json_key_str("skid", text, false);
	}
	json_key_str("hash", ms_cms_hash_name(s->hash), true);
	json_key_str("algorithm", ms_pkcs7_sig_alg_name(s->key_type), true);
	json_key_str("signature_algorithm", sig_alg_long(s), true);
	printf(", \"signature_len\": %zu, \"signed_attrs\": %s}", s->signature.len,
	       s->has_signed_attrs ? "true" : "false");
}

static void
json_module(const char *path, const struct ms_sigmod *m, ms_err err, const char *why,
	    const char *problem, const char *note, bool comma)
{
	char text[TEXT_LEN];
	size_t i;

	printf("%s{", comma ? ",\n " : "");
	json_key_str("module", path, false);
	if (m->is_open && m->mf.zfmt != MS_ZFMT_NONE) {
		json_key_str("compression", ms_mod_zfmt_name(m->mf.zfmt), true);
	}
	if (err == MS_E_MALFORMED && !m->is_open) {
		err = MS_E_IO;
	}
	if (err != MS_OK && err != MS_E_NOTFOUND && err != MS_E_MALFORMED) {
		printf(", \"signed\": null");
		json_key_str("error", why, true);
		printf("}");
		return;
	}
	/* As the text form says it: a trailer the kernel refuses is "malformed". */
	printf(", \"signed\": %s",
	       err == MS_E_NOTFOUND ? "false" : err == MS_E_MALFORMED ? "\"malformed\"" : "true");
	if (err != MS_OK) {
		if (err == MS_E_MALFORMED) {
			json_key_str("error", why, true);
		}
		printf("}");
		return;
	}
	printf(", \"sig_len\": %u, \"payload_len\": %llu", m->layout.sig_len,
	       (unsigned long long)m->layout.payload_len);
	if (m->parse_err == MS_OK) {
		const struct ms_pkcs7_signer *s = &m->msg.signers[0];

		json_key_str("sig_id", "PKCS#7", true);
		ms_cli_signer_cn(s, text, sizeof(text));
		json_key_str("signer", text, true);
		ms_cli_sig_key(s, text, sizeof(text));
		json_key_str("sig_key", text, true);
		json_key_str("sig_hashalgo", ms_cms_hash_name(s->hash), true);
		printf(", \"certificates\": %zu, \"signers\": [", m->msg.n_certs);
		for (i = 0; i < m->msg.n_signers; i++) {
			json_signer(&m->msg.signers[i], i > 0);
		}
		printf("]");
	}
	if (problem != NULL) {
		json_key_str("error", problem, true);
	}
	if (note != NULL) {
		json_key_str("note", note, true);
	}
	printf("}");
}

int
ms_cli_info(int argc, char **argv)
{
	struct ms_inspect_args a;
	struct ms_module_list list = { NULL, 0, 0 };
	unsigned n_bad = 0;
	size_t i;
	int rc;

	rc = ms_cli_inspect_args(argc, argv, MS_INSPECT_OPT_JSON | MS_INSPECT_OPT_KERNEL_DEFAULT, usage_text, help_text, &a);
	if (rc != MS_EXIT_OK) {
		return rc == MS_EXIT_DONE ? MS_EXIT_OK : rc;
	}
	if (ms_app_list_build(&a.list, ms_cli_sink(), &list) != MS_OK) {
		return MS_EXIT_FAIL;
	}
	if (a.json) {
		printf("[");
	}
	if (list.n == 0) {
		/* As verify, strip and signing say it: an empty -r directory is an error. */
		ms_cli_error("no modules to show");
		n_bad++;
	}
	for (i = 0; i < list.n; i++) {
		struct ms_sigmod m;
		char why[WHY_LEN] = "", problem[WHY_LEN] = "";
		const char *rule = NULL, *note = NULL;
		bool has_problem = false;
		ms_err err;

		err = ms_cli_sigmod_open(list.path[i], a.list.max_module_size, &m, why,
					 sizeof(why));
		if (err == MS_OK && m.parse_err != MS_OK) {
			snprintf(problem, sizeof(problem), "PKCS#7: %s", m.parse_why);
			has_problem = true;
		} else if (err == MS_OK && ms_pkcs7_check_module(&m.msg, &rule) != MS_OK) {
			if (!a.kernel_default &&
			    ms_pkcs7_check_module_mldsa_waiver(&m.msg, NULL) == MS_OK) {
				note = WAIVER_NOTE;
			} else {
				snprintf(problem, sizeof(problem), "PKCS#7: %s", rule);
				has_problem = true;
			}
		}
		if (has_problem || (err != MS_OK && err != MS_E_NOTFOUND)) {
			n_bad++;
		}
		if (a.json) {
			json_module(list.path[i], &m, err, why, has_problem ? problem : NULL,
				    note, i > 0);
		} else {
			text_module(list.path[i], &m, err, why, has_problem ? problem : NULL,
				    note);
		}
		ms_cli_sigmod_clear(&m);
	}
	if (a.json) {
		printf("]\n");
	}
	ms_app_list_free(&list);
	return n_bad == 0 ? MS_EXIT_OK : MS_EXIT_FAIL;
}
