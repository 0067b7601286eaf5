/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the CPU-time microbenchmarks of bench/ (rsa_cpu.c, verify_cpu.c,
 * digest.c): the process's CPU clock, and the median of a set of timings.
 */
#ifndef MS_BENCH_CPU_CLOCK_H
#define MS_BENCH_CPU_CLOCK_H

#include <stdlib.h>
#include <time.h>

/* User + system seconds of this process, as the shared machine disturbs it least. */
static inline double
bench_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of @n timings; sorts @v. */
static inline double
bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(v[0]), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
