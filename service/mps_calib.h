/*
 * mps_calib.h: calibration jobs. Each job runs the kernels (kernels/calib.h) on its own worker thread, one job per
 * target ("gpu:0", "cpu") at a time; progress and cancellation pass through the kernels' callback. A finished
 * run becomes a measured device profile (the datasheet's or an earlier measurement's figures, overwritten with
 * what was measured), stored beside the datasheet one, and the job's record is kept in the store's history.
 * Used by the HTTP handlers and by `memplan calibrate`, so both run the same code. No JSON: the record the store
 * keeps is written by the encoder the caller gives (codec/mpc_calib.h).
 */
#ifndef MPS_CALIB_H
#define MPS_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#include "../types/calib_types.h"
#include "service.h"

/* The fit check's bytes from an inference plan: weights, KV cache, the prefill workspace (activations_bytes),
 * the CUDA context (which the measuring process itself holds) and their total. */
void mps_calib_fit_from_plan(const mps_inference_plan *plan, mps_calib_request *rq);

/* Fills f from r. No errors. */
void mps_calib_gpu_figures_of(const mp_calib_gpu_results *r, mps_calib_gpu_figures *f);

void mps_calib_job_free(mps_calib_job *job);

/* Writes a finished job's record for the store (heap text, free()), or NULL when out of memory. */
typedef char *(*mps_calib_encode_fn)(const mps_calib_job *job);
/* Told of every measured profile stored (the daemon publishes its figures as metrics). */
typedef void (*mps_calib_profile_fn)(void *ctx, const mp_store_device *profile);

typedef struct mps_calib_jobs mps_calib_jobs; /* opaque: jobs, threads, a mutex */

/* Creates the job manager over the service (borrowed; must outlive the manager). Errors: MP_ENOMEM. */
mp_status mps_calib_jobs_create(mps_service *s, mps_calib_encode_fn encode, mps_calib_jobs **out, mp_error *err);
/* Registers fn (ctx borrowed; NULL = none); call before the first job starts. */
void mps_calib_jobs_on_profile(mps_calib_jobs *j, mps_calib_profile_fn fn, void *ctx);
/* Cancels running jobs, waits for their threads and frees everything. NULL-safe. */
void mps_calib_jobs_destroy(mps_calib_jobs *j);

/*
 * Starts a job for rq and copies its id into id (MPS_CALIB_ID_MAX bytes). Errors: MP_ENOTBUILTIN (gpu target,
 * no CUDA in this build), MP_ENODEV (gpu target, no usable GPU: err says why), MP_EBUSY (a job for this
 * target is queued or running: err names it), MP_ENOMEM, MP_EDB, MP_EINTERNAL (no thread).
 */
mp_status mps_calib_start(mps_calib_jobs *j, const mps_calib_request *rq, char *id, mp_error *err);
/* A copy of job id (live jobs from memory, past ones from the store). Errors: MP_ENOTFOUND, MP_EDB, MP_ENOMEM. */
mp_status mps_calib_get(mps_calib_jobs *j, const char *id, mps_calib_job **out, mp_error *err);
/* Asks a queued or running job to stop (it ends as "cancelled") and returns a copy. Errors: MP_ENOTFOUND,
 * MP_ECONFLICT (the job has already finished: err gives its state). */
mp_status mps_calib_cancel(mps_calib_jobs *j, const char *id, mps_calib_job **out, mp_error *err);
/* Waits for the job to finish, calling tick (may be NULL) about every 100 ms with the percent done and the
 * current suite; tick returns false to cancel the job. Errors: MP_ENOTFOUND. */
mp_status mps_calib_wait(mps_calib_jobs *j, const char *id, bool (*tick)(void *ctx, double percent, const char *suite),
			 void *ctx, mp_error *err);

/* The datasheet profile id for a CUDA device name ("NVIDIA H200" -> "h200-sxm-141gb"), or NULL. */
const char *mps_calib_datasheet_for(const char *cuda_name);
/* "measured-gpu0-<host>" / "measured-cpu-<host>": the host name as a lowercase slug. */
void mps_calib_profile_id(bool gpu, char *out, size_t len);
/*
 * The measured profile of a GPU run: base (an earlier measured profile of the same id, else the datasheet, else
 * none) overwritten with what the run measured (memory, bandwidth, fp32 FMA, matrix peaks, CUDA context), with a
 * source note that says how each figure was measured and which were kept. *have_profile: the run measured enough
 * (a bandwidth and a memory size). Worked example (tests/test_calib.c): a run with hbm only keeps the datasheet
 * peaks and says so.
 */
void mps_calib_gpu_profile(const mp_calib_gpu_results *r, const mp_store_device *datasheet,
			   const mp_store_device *previous, const char *job_id, const char *now, double elapsed_seconds,
			   mp_store_device *profile, bool *have_profile);
void mps_calib_cpu_profile(const mp_calib_cpu_results *r, const mp_store_device *previous, const char *job_id,
			   const char *now, mp_store_device *profile, bool *have_profile);
#endif /* MPS_CALIB_H */
