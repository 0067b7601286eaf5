/* SPDX-License-Identifier: GPL-2.0-only */
/* The decoder fuzz targets' shared driver (fuzz_zdec.c). Test code only. */
#ifndef MS_FUZZ_ZDEC_H
#define MS_FUZZ_ZDEC_H

#include <stddef.h>
#include <stdint.h>

#include "modfmt/zmod.h"

/*
 * fuzz_zdec_run() - decode @data (first byte: how to cut the rest into
 * pieces; the rest: the container) as @fmt and check the oracles.
 */
void fuzz_zdec_run(enum ms_zfmt fmt, const uint8_t *data, size_t size);

#endif
