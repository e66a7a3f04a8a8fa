/*
 * calib_common.c: what every build of the calibration component shares: the suite positions, the median / best of
 * a set of timed runs, and the readings of a result that everyone takes the same way. No hardware access here.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/mp_assert.h"
#include "calib.h"

/* every suite bit named once (kernels/calib.h MP_CALIB_SUITE_NAMES), each below MP_CALIB_SUITE_BITS (the per-suite
 * arrays' length) */
MP_STATIC_ASSERT(sizeof((mp_calib_suite_entry[]){MP_CALIB_SUITE_NAMES}) / sizeof(mp_calib_suite_entry) ==
			 __builtin_popcount(MP_CALIB_GPU_SUITES | MP_CALIB_CPU_SUITES),
		 "a name per suite bit");
MP_STATIC_ASSERT(((MP_CALIB_GPU_SUITES | MP_CALIB_CPU_SUITES) >> MP_CALIB_SUITE_BITS) == 0,
		 "every suite bit below MP_CALIB_SUITE_BITS");
/* the sweeps calib.h documents: strides 1 .. 64 and 1 .. 32 by doubling, intensities 2^-3 .. 2^10 */
MP_STATIC_ASSERT(1u << (MP_CALIB_STRIDE_COUNT - 1) == 64 && 1u << (MP_CALIB_SMEM_STRIDE_COUNT - 1) == 32 &&
		 MP_CALIB_INTENSITY_COUNT == 10 - -3 + 1,
		 "the strided, shared-memory and intensity sweeps' lengths");

int mp_calib_suite_index(uint32_t bit)
{
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (bit == (1u << i))
			return i;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

mp_calib_stat mp_calib_stat_of(double *samples, uint32_t n, bool higher_is_better)
{
	mp_calib_stat s = {0, 0, 0};

	if (n == 0)
		return s;
	qsort(samples, n, sizeof(*samples), cmp_double);
	s.runs = n;
	s.best = higher_is_better ? samples[n - 1] : samples[0];
	s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
	return s;
}

const char *mp_calib_architecture(int major, int minor)
{
	int cc = major * 10 + minor;

	if (cc >= 100)
		return "Blackwell";
	if (cc == 90)
		return "Hopper";
	if (cc == 89)
		return "Ada Lovelace";
	if (cc >= 80)
		return "Ampere";
	if (cc == 75)
		return "Turing";
	if (cc >= 70)
		return "Volta";
	return "";
}

double mp_calib_gpu_bandwidth(const mp_calib_gpu_results *r)
{
	if (!(r->suites_done & MP_CALIB_HBM))
		return 0;
	return r->copy.best > r->memcpy_d2d.best ? r->copy.best : r->memcpy_d2d.best;
}

double mp_calib_matmul_peak(const mp_calib_gpu_results *r, mp_dtype t)
{
	const mp_calib_matmul *m = &r->matmul[t];

	return (r->suites_done & MP_CALIB_MATMUL) && m->status[0] == '\0' ? m->flops_per_second.best : 0;
}
