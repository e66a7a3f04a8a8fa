/*
 * calib_types.h: a calibration job as its callers see it: the request (a decoded POST /v1/calibrations body), the
 * figures the service derives from a GPU run, and the job with its results (the kernels' structs, kernels/calib.h)
 * and the device profiles it compares and stores. service/mps_calib.h runs the jobs; codec/mpc_calib.h renders them.
 */
#ifndef MPS_CALIB_TYPES_H
#define MPS_CALIB_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "../kernels/calib.h"
#include "types.h"

#define MPS_CALIB_ID_MAX 40 /* fits mp_store_calibration.id */

/* A decoded POST /v1/calibrations body (also built by the CLI). Plain values. */
typedef struct mps_calib_request {
	bool gpu;        /* target "gpu:0"; false: "cpu" */
	uint32_t suites; /* mask of mp_calib_suite bits; 0 = the target's default */
	uint32_t runs;   /* 0 = the kernels' default */
	uint64_t array_bytes;
	uint32_t matrix_size;
	uint32_t threads; /* cpu only */
	/* fit check: an inference plan's bytes per GPU (mps_calib_fit_from_plan) */
	bool has_fit;
	uint64_t fit_weights_bytes, fit_kv_cache_bytes, fit_workspace_bytes, fit_overhead_bytes, fit_total_bytes;
} mps_calib_request;

/*
 * Figures derived from a finished GPU run by the kernels' own rules, filled by the service so the codec only
 * prints: the HBM bandwidth (mp_calib_gpu_bandwidth: the best of read, copy and triad, bytes/s), each dtype's
 * tensor-core matmul peak (mp_calib_matmul_peak, FLOP/s; 0 = not measured) and the architecture name
 * (mp_calib_architecture, static string).
 */
typedef struct mps_calib_gpu_figures {
	double memory_bandwidth_bytes_per_second;
	double matmul_peak_flops_per_second[MP_DTYPE_COUNT];
	const char *architecture;
} mps_calib_gpu_figures;

/* A job as the caller sees it: a copy taken under the jobs' lock (service/mps_calib.h: mps_calib_job_free). */
typedef struct mps_calib_job {
	char id[MPS_CALIB_ID_MAX];
	mps_calib_request rq;
	char state[16]; /* queued, running, succeeded, failed, cancelled */
	double percent;
	char suite[24]; /* the suite running now, "" when none */
	bool cancel_requested;
	char created_at[32], started_at[32], finished_at[32]; /* ISO 8601 UTC, "" until then */
	double elapsed_seconds;
	char device_id[MP_STORE_ID_MAX];    /* the measured profile stored, "" when none */
	char datasheet_id[MP_STORE_ID_MAX]; /* the datasheet profile compared with, "" when none */
	/* once the kernels returned (a finished job held in memory) */
	bool have_results;
	mp_calib_gpu_results *gpu; /* rq.gpu: the figures (heap, owned) */
	mps_calib_gpu_figures gpu_figures; /* derived from gpu */
	mp_calib_cpu_results *cpu; /* !rq.gpu */
	bool have_datasheet;
	mp_store_device datasheet;
	bool have_profile; /* the run measured enough for a profile */
	mp_store_device profile;
	/* why it did not succeed: "" when it did */
	char error_status[24]; /* mp_status_str of the failure, or "cancelled", "interrupted" */
	char error_message[320];
	/* a past job read back from the store (not in memory): its record as the store kept it (heap, owned),
	 * the row's columns above being the truth */
	char *record;
} mps_calib_job;

#endif /* MPS_CALIB_TYPES_H */
