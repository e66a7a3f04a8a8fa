/*
 * calib.h: the calibration component's C ABI (kernels/). Measures the host GPU (or CPU) and reports the
 * figures as plain values; the daemon stores them. Builds without CUDA answer MP_ENOTBUILTIN ("not built
 * in"), like curl's CURLE_NOT_BUILT_IN; in a CUDA build the GPU suites run in a helper process (below).
 * Prefix mp_calib_. Nothing here touches JSON, SQLite or HTTP: service/ and codec/ turn these structs into
 * documents and device profiles.
 */
#ifndef MP_CALIB_H
#define MP_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "../planner/memplan.h"

/* ---------------------------------------------------------------------------------------------------------
 * Suites. A run measures a set of suites, given as a mask of these bits. Names are the API's.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_calib_suite {
	MP_CALIB_MEMORY = 1u << 0,    /* gpu: cudaMemGetInfo right after context creation */
	MP_CALIB_HBM = 1u << 1,       /* gpu: copy, read, write, triad (16-byte accesses) + cudaMemcpy D2D */
	MP_CALIB_STRIDED = 1u << 2,   /* gpu: strided-read sweep, stride 1..64, useful bandwidth */
	MP_CALIB_L2 = 1u << 3,        /* gpu: read bandwidth with a working set within half the L2 */
	MP_CALIB_SMEM = 1u << 4,      /* gpu: shared-memory bandwidth, stride sweep and a padded tile */
	MP_CALIB_FMA = 1u << 5,       /* gpu: FP32 FMA peak, independent register chains */
	MP_CALIB_MATMUL = 1u << 6,    /* gpu: cuBLASLt peaks bf16, fp16, tf32, fp8 (cc >= 8.9) + cuBLAS bf16 */
	MP_CALIB_LATENCY = 1u << 7,   /* gpu: pointer chase in HBM and in L2 */
	MP_CALIB_INTENSITY = 1u << 8, /* gpu: intensity sweep 1/8 .. 1024 FLOP/B, for measured / roof */
	MP_CALIB_FIT = 1u << 9,       /* gpu: cudaMalloc an inference plan's bytes; needs the fit_* options */
	MP_CALIB_STREAM = 1u << 16,   /* cpu: multi-threaded STREAM triad */
	MP_CALIB_GEMM = 1u << 17,     /* cpu: dgemm and sgemm through OpenBLAS */
} mp_calib_suite;

#define MP_CALIB_GPU_SUITES                                                                                            \
	(MP_CALIB_MEMORY | MP_CALIB_HBM | MP_CALIB_STRIDED | MP_CALIB_L2 | MP_CALIB_SMEM | MP_CALIB_FMA |              \
	 MP_CALIB_MATMUL | MP_CALIB_LATENCY | MP_CALIB_INTENSITY | MP_CALIB_FIT)
#define MP_CALIB_GPU_DEFAULT (MP_CALIB_GPU_SUITES & ~(uint32_t)MP_CALIB_FIT)
#define MP_CALIB_CPU_SUITES (MP_CALIB_STREAM | MP_CALIB_GEMM)
#define MP_CALIB_CPU_DEFAULT MP_CALIB_CPU_SUITES
#define MP_CALIB_SUITE_BITS 18 /* bit positions 0 .. 17 */

/* The suites' API names, bit by bit: a table in the header (no code to link), so that the layers that only read
 * and write the names (codec/) need nothing of the kernels themselves. */
#define MP_CALIB_SUITE_NAMES                                                                                           \
	{MP_CALIB_MEMORY, "memory"}, {MP_CALIB_HBM, "hbm"}, {MP_CALIB_STRIDED, "strided"}, {MP_CALIB_L2, "l2"},        \
	{MP_CALIB_SMEM, "smem"}, {MP_CALIB_FMA, "fma"}, {MP_CALIB_MATMUL, "matmul"}, {MP_CALIB_LATENCY, "latency"},    \
	{MP_CALIB_INTENSITY, "intensity"}, {MP_CALIB_FIT, "fit"}, {MP_CALIB_STREAM, "stream"}, {MP_CALIB_GEMM, "gemm"}
typedef struct mp_calib_suite_entry {
	uint32_t bit;
	const char *name;
} mp_calib_suite_entry;

/* The API name of one suite bit ("hbm"), or NULL for anything that is not exactly one known bit. */
static inline const char *mp_calib_suite_name(uint32_t bit)
{
	static const mp_calib_suite_entry suites[] = {MP_CALIB_SUITE_NAMES};

	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (suites[i].bit == bit)
			return suites[i].name;
	return NULL;
}
/* The bit for an API name, or 0 when unknown. NULL-safe. */
static inline uint32_t mp_calib_suite_from_name(const char *name)
{
	static const mp_calib_suite_entry suites[] = {MP_CALIB_SUITE_NAMES};

	if (name == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (strcmp(suites[i].name, name) == 0)
			return suites[i].bit;
	return 0;
}
/* Bit position of a single-bit suite (0 .. MP_CALIB_SUITE_BITS - 1), for per-suite arrays. */
int mp_calib_suite_index(uint32_t bit);

/* The fewest timed runs a figure may come from (median and best of at least this many). */
#define MP_CALIB_MIN_RUNS 10u

/* One measured figure: the best and the median of `runs` timed runs. Rates are "higher is better"
 * (bytes/s, FLOP/s); latencies are "lower is better" (seconds) and `best` is then the lowest. runs == 0:
 * not measured. */
typedef struct mp_calib_stat {
	double best;
	double median;
	uint32_t runs;
} mp_calib_stat;

/*
 * How a run reports progress and learns that it must stop. progress() is called from the measuring thread
 * before each suite and between steps of long ones, with the fraction of the whole run done (0..1) and the
 * current suite's name; it returns false to cancel: the run then stops at the next step, frees what it
 * holds, sets `cancelled` in its results and returns MP_OK. progress may be NULL.
 */
typedef struct mp_calib_ctl {
	bool (*progress)(void *ctx, double fraction, const char *suite);
	void *ctx;
} mp_calib_ctl;

/* ---------------------------------------------------------------------------------------------------------
 * GPU
 * ------------------------------------------------------------------------------------------------------- */
typedef struct mp_calib_gpu_info {
	char name[128];        /* cudaDeviceProp.name, e.g. "NVIDIA H200" */
	uint64_t memory_bytes; /* cudaMemGetInfo total (probe: cudaDeviceProp.totalGlobalMem) */
	uint64_t free_bytes;   /* cudaMemGetInfo free right after context creation; 0 from the probe */
	uint32_t sm_count;
	uint64_t l2_cache_bytes;
	int cc_major, cc_minor;
	double clock_hz; /* peak SM clock (cudaDevAttrClockRate) */
	uint64_t shared_memory_per_sm_bytes;
	int driver_version, runtime_version; /* e.g. 13000 */
} mp_calib_gpu_info;

/*
 * The GPU suites run in a helper process, memplan-gpu (calib_gpu.cu, gpu_helper.c; calib_ipc.h), which only a
 * CUDA build makes: memplan itself never links or loads the CUDA runtime or cuBLASLt. The helper is
 * $MEMPLAN_GPU_HELPER when that is set, else memplan-gpu in the folder of the running executable; it is started
 * for each probe and each run and exits when it has answered.
 */

/* True when this build made the CUDA kernels (the helper); false for make CUDA=0 or a build without nvcc. */
bool mp_calib_built_in(void);

/*
 * Probes GPU 0 without creating a CUDA context (so polling it costs no device memory), in the helper. Fills
 * *info (free_bytes stays 0). Blocks until the helper answers (at most about 90 s). Errors: MP_ENOTBUILTIN (no
 * CUDA in this build), MP_ENODEV (no usable GPU: no driver, no device, or the driver is older than the runtime;
 * or the helper is missing, from another build, or died: err->message says which, with CUDA's words).
 */
mp_status mp_calib_gpu_probe(mp_calib_gpu_info *info, mp_error *err);

#define MP_CALIB_STRIDE_COUNT 7      /* strided read: strides 1, 2, 4, ..., 64 (4-byte elements) */
#define MP_CALIB_SMEM_STRIDE_COUNT 6 /* shared memory: strides 1, 2, 4, ..., 32 (4-byte words) */
#define MP_CALIB_INTENSITY_COUNT 14  /* intensity sweep: 2^-3 .. 2^10 FLOP per byte */

typedef struct mp_calib_gpu_options {
	uint32_t suites;      /* mask of GPU suites; 0 = MP_CALIB_GPU_DEFAULT */
	uint32_t runs;        /* timed runs per figure; 0 = 20; at least MP_CALIB_MIN_RUNS */
	uint64_t array_bytes; /* HBM arrays; 0 = max(16 x L2, 2 GiB), at most free memory / 8 */
	uint32_t matrix_size; /* matmul m = n = k; 0 = 8192 */
	/* MP_CALIB_FIT: an inference plan's parts, each allocated with its own cudaMalloc. */
	uint64_t fit_weights_bytes;
	uint64_t fit_kv_cache_bytes;
	uint64_t fit_workspace_bytes;
} mp_calib_gpu_options;

typedef struct mp_calib_matmul {
	mp_calib_stat flops_per_second; /* 2 m n k / time */
	uint32_t size;                  /* m = n = k */
	uint32_t algos_tried;           /* heuristic candidates timed before the final runs */
	double rel_error; /* ||D - ref|| / ||ref|| over sampled entries, ref in fp64 from the same inputs */
	char status[160]; /* "" when measured, else why not (unsupported, failed check, ...) */
} mp_calib_matmul;

typedef struct mp_calib_intensity_point {
	double flops_per_byte; /* 2^-3 .. 2^10 */
	mp_calib_stat flops_per_second;
	mp_calib_stat bytes_per_second;
} mp_calib_intensity_point;

typedef struct mp_calib_gpu_results {
	mp_calib_gpu_info info;
	uint32_t suites_done; /* suites fully measured */
	bool cancelled;
	double suite_seconds[MP_CALIB_SUITE_BITS]; /* wall time per suite, host clock */
	uint32_t runs;

	/* memory */
	uint64_t context_bytes; /* total - free right after context creation (other processes included) */

	/* hbm: bytes read + written per second */
	uint64_t array_bytes;
	mp_calib_stat memcpy_d2d, copy, read, write, triad;
	uint32_t copy_unroll, copy_blocks; /* the copy configuration that won the tuning sweep */

	/* strided: useful bytes (4 per element read) per second, stride 1 << i */
	mp_calib_stat strided[MP_CALIB_STRIDE_COUNT];

	/* l2 */
	uint64_t l2_working_set_bytes;
	mp_calib_stat l2_read;

	/* smem: bytes per second over all SMs; stride 1 << i words, and a 32 x 33 padded tile read by column */
	mp_calib_stat smem[MP_CALIB_SMEM_STRIDE_COUNT];
	mp_calib_stat smem_tile_column; /* 32 x 32 tile read by column: 32-way conflicts */
	mp_calib_stat smem_tile_padded; /* 32 x 33 tile read by column: conflict-free */

	/* fma */
	mp_calib_stat fma_fp32; /* FLOP/s, 2 per FMA */

	/* matmul, indexed by mp_dtype (bf16, fp16, tf32, fp8_e4m3) */
	mp_calib_matmul matmul[MP_DTYPE_COUNT];
	mp_calib_matmul cublas_bf16; /* cublasGemmEx bf16, CUBLAS_GEMM_DEFAULT: the reference */
	uint64_t matmul_workspace_bytes;

	/* latency: seconds per dependent load */
	uint64_t latency_hbm_span_bytes, latency_l2_span_bytes;
	mp_calib_stat latency_hbm, latency_l2;

	/* intensity */
	mp_calib_intensity_point intensity[MP_CALIB_INTENSITY_COUNT];
	uint64_t intensity_bytes;

	/* fit */
	bool fit_allocated;             /* every part was allocated (and written) */
	char fit_failed_part[32];       /* "weights", "kv_cache", "workspace" or "" */
	uint64_t fit_requested_bytes;   /* sum of the parts */
	uint64_t fit_free_before_bytes; /* cudaMemGetInfo free before the allocations */
	uint64_t fit_free_after_bytes;  /* free with everything allocated: the real headroom */
	uint64_t fit_total_bytes;       /* cudaMemGetInfo total */
} mp_calib_gpu_results;

/* The readings of a GPU run that the profile, the document and the table all take the same way: the memory
 * bandwidth (the better of the 16-byte copy kernel and cudaMemcpy D2D; 0 when the hbm suite did not run), a
 * matrix peak measured without error (0 otherwise), and the architecture of a compute capability ("Hopper" for
 * 9.0; "" when unknown). */
double mp_calib_gpu_bandwidth(const mp_calib_gpu_results *r);
double mp_calib_matmul_peak(const mp_calib_gpu_results *r, mp_dtype t);
const char *mp_calib_architecture(int major, int minor);

/*
 * Runs the GPU suites of *o on GPU 0, in the helper, and fills *r. Every output is poisoned before it is written
 * and checked after; inputs are never zeros; each figure is the best and median of o->runs runs timed with CUDA
 * events after warm-up. All device memory, handles and the context are released before returning, whatever
 * the outcome (the helper's process ends). ctl->progress is called from the calling thread as the helper
 * reports, and at least once a second while it is quiet; when it returns false the helper is told to stop, and
 * is killed if it has not stopped 30 s later (the run then returns MP_OK with r->cancelled). Errors:
 * MP_ENOTBUILTIN, MP_ENODEV (no usable GPU, or no usable helper), MP_EINVAL (options), MP_EINTERNAL (a CUDA
 * call failed or a kernel produced wrong data: err->message names the call and CUDA's error string; or the
 * helper died: how, and the last words of its stderr). A suite that cannot run on this device (fp8 below cc
 * 8.9) is reported in its status, not as an error.
 */
mp_status mp_calib_gpu_run(const mp_calib_gpu_options *o, const mp_calib_ctl *ctl, mp_calib_gpu_results *r,
                           mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * CPU (always built: pthreads + OpenBLAS)
 * ------------------------------------------------------------------------------------------------------- */
typedef struct mp_calib_cpu_info {
	char name[128];           /* /proc/cpuinfo "model name" */
	char vendor[32];          /* "Intel", "AMD", or vendor_id as found */
	char architecture[32];    /* uname machine: "x86_64", "aarch64" */
	uint32_t threads;         /* online logical CPUs */
	uint64_t llc_bytes;       /* the largest cache sysfs reports; 0 = unknown */
	uint64_t memory_bytes;    /* MemTotal */
	uint64_t available_bytes; /* MemAvailable when the run started */
	char blas[160];           /* openblas_get_config() */
} mp_calib_cpu_info;

/* The largest CPU matrix: a run is checked for cancellation between products, and one dgemm of 4096 is 137 GFLOP,
 * about 6 s on two cores of a 2020s server (a 16384 one would be 6 minutes, and 6.4 GB of matrices). */
#define MP_CALIB_CPU_MAX_MATRIX 4096u

typedef struct mp_calib_cpu_options {
	uint32_t suites;      /* mask of CPU suites; 0 = MP_CALIB_CPU_DEFAULT */
	uint32_t runs;        /* 0 = 10; at least MP_CALIB_MIN_RUNS */
	uint32_t threads;     /* 0 = every online CPU */
	uint64_t array_bytes; /* per triad array; 0 = 4 x LLC within [64 MiB, 512 MiB], <= MemAvailable / 16; given,
	                         at most MemAvailable / 16 */
	uint32_t matrix_size; /* dgemm/sgemm n; 0 = 2048; at most MP_CALIB_CPU_MAX_MATRIX */
} mp_calib_cpu_options;

typedef struct mp_calib_cpu_results {
	mp_calib_cpu_info info;
	uint32_t suites_done;
	bool cancelled;
	double suite_seconds[MP_CALIB_SUITE_BITS];
	uint32_t runs;
	uint32_t threads;
	uint64_t array_bytes; /* per array; three arrays of doubles */
	mp_calib_stat triad;  /* a = b + s c: (2 reads + 1 write) x 8 bytes per element, per second */
	uint32_t matrix_size;
	mp_calib_stat dgemm, sgemm;              /* FLOP/s, 2 n^3 per product */
	double dgemm_rel_error, sgemm_rel_error; /* sampled entries against an fp64 dot product */
} mp_calib_cpu_results;

/*
 * Probes the CPU: fills *info from /proc/cpuinfo, /proc/meminfo, sysfs and OpenBLAS. Errors: none in
 * practice (missing files leave fields empty); returns MP_OK.
 */
mp_status mp_calib_cpu_probe(mp_calib_cpu_info *info, mp_error *err);

/*
 * Runs the CPU suites of *o and fills *r (timed with CLOCK_MONOTONIC; best and median of o->runs runs after
 * one warm-up). Memory is freed before returning. Errors: MP_EINVAL (options), MP_ENOMEM (arrays),
 * MP_EINTERNAL (threads could not start, or a result failed its check).
 */
mp_status mp_calib_cpu_run(const mp_calib_cpu_options *o, const mp_calib_ctl *ctl, mp_calib_cpu_results *r,
                           mp_error *err);

/* Median and best of n samples (sorted in place). higher_is_better picks max or min for best. */
mp_calib_stat mp_calib_stat_of(double *samples, uint32_t n, bool higher_is_better);

#ifdef __cplusplus
}
#endif

#endif /* MP_CALIB_H */
