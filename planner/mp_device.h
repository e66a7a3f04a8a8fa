/*
 * mp_device.h: the device profile the planner computes with.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_DEVICE_H
#define MP_DEVICE_H

#include "mp_core.h"

/* ---------------------------------------------------------------------------------------------------------
 * Device profile: the numbers the planner needs. Metadata (name, vendor, source) lives in the store.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct mp_device {
	uint64_t memory_bytes;			/* label or as the driver reports */
	uint64_t usable_memory_bytes;		/* cudaMemGetInfo total; 0 = unknown (memory_bytes is used) */
	double memory_bandwidth_bytes_per_second;
	double peak_flops_per_second[MP_DTYPE_COUNT];	/* dense; 0 = the type has no such path */
	uint64_t l2_cache_bytes;
	uint32_t sm_count;
	double boost_clock_hz;
	uint64_t cuda_context_bytes;		/* per-process context overhead; 0 = the default below */
	/* roofline extras (append only); 0 = unknown. Inline profiles carry them; see mp_roofline.h. */
	double vector_flops_per_second[MP_DTYPE_COUNT];	/* non-tensor (CUDA-core) dense rates */
	double l2_bandwidth_bytes_per_second;
	double shared_memory_bandwidth_bytes_per_second;	/* all SMs together */
	double memory_latency_seconds;		/* a dependent DRAM load (pointer chase) */
	/* a CPU (the store's kind "cpu"): its memory is the host's RAM and it has no CUDA context, so a plan's overhead
	 * is 0 unless cuda_context_bytes says otherwise (mp_inference_overhead_bytes) */
	bool host_memory;
} mp_device;

/* CUDA context overhead measured right after context creation on an H200 with CUDA 13.0:
 * total - free from cudaMemGetInfo = 150,109,880,320 - 149,557,477,376 (shared/groundtruth/h200). */
#define MP_DEFAULT_CUDA_CONTEXT_BYTES UINT64_C(552402944)

/* The bytes a plan may use on one GPU: usable_memory_bytes, else memory_bytes. */
uint64_t mp_device_capacity_bytes(const mp_device *d);

#endif /* MP_DEVICE_H */
