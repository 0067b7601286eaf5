// SPDX-License-Identifier: GPL-2.0-only
/* The number of processors, for sizing lanes and worker threads. */
#include <unistd.h>

#include "ms_common.h"

unsigned
ms_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1u : n > 64 ? 64u : (unsigned)n;
}
