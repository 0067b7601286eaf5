// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fuzz target: the gzip decoder wrapper (src/modfmt/zmod.c, zcodec_gzip.c), as
 * a .ko.gz is read. Input: one byte that sets the piece size the
 * decoder is fed in, then the container. Oracles in fuzz_zdec.c.
 */
#include "fuzz.h"
#include "fuzz_zdec.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_zdec_run(MS_ZFMT_GZIP, data, size);
	return 0;
}
