/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ML-DSA's sizes (FIPS 204, Table 2), in one place: the token layer checks
 * what C_Sign returns against them, the CMS layer parses and verifies with
 * them, and neither layer includes the other.
 */
#ifndef MS_FIPS204_H
#define MS_FIPS204_H

#define MS_MLDSA44_PK_BYTES 1312
#define MS_MLDSA65_PK_BYTES 1952
#define MS_MLDSA87_PK_BYTES 2592

#define MS_MLDSA44_SIG_BYTES 2420
#define MS_MLDSA65_SIG_BYTES 3309
#define MS_MLDSA87_SIG_BYTES 4627

#endif
