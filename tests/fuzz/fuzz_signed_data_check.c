// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the check `modsign -s <raw-sig>` applies before appending a
 * ready-made PKCS#7 (ms_cms_signed_data_check). Input: the PKCS#7 blob.
 *
 * Oracle: a blob the verify parser accepts as a module signature
 * (ms_pkcs7_parse and ms_pkcs7_check_module) passes the -s check too, or
 * modsign would refuse to append what it verifies. One difference is by
 * design: the verify parser takes digestAlgorithms and signerInfos as
 * SEQUENCE OF as well, as the kernel's pkcs7.asn1 does; -s wants SET OF.
 */
#include <string.h>

#include "cms/cms_internal.h"
#include "cms/pkcs7.h"
#include "fuzz.h"

/* Whether digestAlgorithms or signerInfos (first and last after the version) is a SEQUENCE. */
static bool
uses_sequence_of(const uint8_t *p, size_t len)
{
	struct ms_span in = { p, len }, body = { NULL, 0 }, sd = { NULL, 0 };
	uint8_t tag = 0, first = 0, last = 0;

	if (ms_der_get(&in, &tag, &body) != MS_OK || ms_der_get(&body, &tag, &sd) != MS_OK ||
	    ms_der_get(&body, &tag, &sd) != MS_OK || ms_der_get(&sd, &tag, &body) != MS_OK ||
	    ms_der_get(&body, &tag, &sd) != MS_OK) {
		return false;
	}
	in = body;
	while (in.len > 0) {
		if (ms_der_get(&in, &tag, &sd) != MS_OK) {
			return false;
		}
		first = first == 0 ? tag : first;
		last = tag;
	}
	return first == DER_SEQUENCE || last == DER_SEQUENCE;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ms_pkcs7 m;
	ms_err err;

	err = ms_cms_signed_data_check(data, size);
	if (err != MS_OK && err != MS_E_MALFORMED) {
		fuzz_die("ms_cms_signed_data_check: unexpected error");
	}
	memset(&m, 0, sizeof(m));
	if (err != MS_OK && ms_pkcs7_parse(data, size, &m, NULL) == MS_OK &&
	    ms_pkcs7_check_module(&m, NULL) == MS_OK && !uses_sequence_of(data, size)) {
		fuzz_die("verify accepts a module signature the -s check refuses");
	}
	return 0;
}
