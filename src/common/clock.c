// SPDX-License-Identifier: GPL-2.0-only
/* The one monotonic clock of deadlines, timeouts and rates. */
#include <time.h>

#include "ms_common.h"

uint64_t
ms_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
