/*
 * calib.h: the calibration component's C ABI (kernels/). Measures the host GPU (or CPU) and reports the
 * figures as plain values; the daemon stores them. Builds without CUDA answer MP_ENOTBUILTIN ("not built
 * in"), like curl's CURLE_NOT_BUILT_IN. Prefix mp_calib_.
 */
#ifndef MP_CALIB_H
#define MP_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#include "../planner/memplan.h"

typedef struct mp_calib_gpu_info {
	char name[128];
	uint64_t memory_bytes;		/* cudaMemGetInfo total */
	uint64_t free_bytes;		/* cudaMemGetInfo free right after context creation */
	uint32_t sm_count;
	uint64_t l2_cache_bytes;
	int cc_major, cc_minor;
} mp_calib_gpu_info;

/* True when this build contains the CUDA kernels. */
bool mp_calib_built_in(void);

/* Probes GPU 0. Errors: MP_ENOTBUILTIN (no CUDA in this build), MP_ENODEV (no usable GPU; err says why). */
mp_status mp_calib_gpu_probe(mp_calib_gpu_info *info, mp_error *err);

#endif /* MP_CALIB_H */
