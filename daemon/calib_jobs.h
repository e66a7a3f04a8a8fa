/*
 * calib_jobs.h: calibration jobs. calib_jobs.c runs each job on its own worker thread (one job per target
 * at a time), tracks progress and cancellation, and stores the outcome; calib_doc.c turns the kernels'
 * plain results into the job document, the measured device profile and the CLI's table. Used by the HTTP
 * handlers (h_calibrations.c) and by `memplan calibrate`, so both run the same code.
 */
#ifndef MPD_CALIB_JOBS_H
#define MPD_CALIB_JOBS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../db/store.h"
#include "../kernels/calib.h"

#define MPD_CALIB_ID_MAX 40 /* fits mp_store_calibration.id */

/* A decoded POST /v1/calibrations body (also built by the CLI). Plain values: the caller owns nothing. */
typedef struct mpd_calib_request {
	bool gpu;        /* target "gpu:0"; false: "cpu" */
	uint32_t suites; /* mask of mp_calib_suite bits; 0 = the target's default */
	uint32_t runs;   /* 0 = the kernels' default */
	uint64_t array_bytes;
	uint32_t matrix_size;
	uint32_t threads; /* cpu only */
	/* fit check: an inference plan's bytes (from POST /v1/plan/inference's memory block) */
	bool has_fit;
	uint64_t fit_weights_bytes, fit_kv_cache_bytes, fit_workspace_bytes, fit_overhead_bytes, fit_total_bytes;
} mpd_calib_request;

typedef struct mpd_calib_jobs mpd_calib_jobs; /* opaque: jobs, threads, a mutex */

/* Creates the job manager over store (borrowed; must outlive the manager). Errors: MP_ENOMEM. */
mp_status mpd_calib_jobs_create(mp_store *store, mpd_calib_jobs **out, mp_error *err);
/* Publishes each successful run's figures as memplan_calibration_* gauges of metrics (borrowed; must outlive
 * the manager; NULL = none): memory bandwidth, dense peak per dtype and usable memory, labelled by the
 * measured profile's id. */
struct mpd_metrics;
void mpd_calib_jobs_set_metrics(mpd_calib_jobs *j, struct mpd_metrics *metrics);

/* Cancels running jobs, waits for their threads and frees everything. NULL-safe. */
void mpd_calib_jobs_destroy(mpd_calib_jobs *j);

/*
 * Decodes a request body into *rq: "target" (required: "gpu:0" or "cpu"), "suites" (names for that target),
 * "options" {runs, array_bytes, matrix_size, threads} and "fit_plan" (an inference plan request, run here
 * through the planner to get its bytes; gpu only). Errors: MP_EINVAL naming the field, and the plan's own
 * errors with their field under "/fit_plan".
 */
mp_status mpd_calib_decode(mp_store *store, const cJSON *body, mpd_calib_request *rq, mp_error *err);

/*
 * Starts a job for rq and copies its id into id (MPD_CALIB_ID_MAX bytes). Errors: MP_ENOTBUILTIN (gpu target,
 * no CUDA in this build), MP_ENODEV (gpu target, no usable GPU: err says why), MP_EBUSY (a job for this
 * target is queued or running: err names it), MP_ENOMEM, MP_EDB, MP_EINTERNAL (no thread).
 */
mp_status mpd_calib_start(mpd_calib_jobs *j, const mpd_calib_request *rq, char *id, mp_error *err);

/* The job document for id (caller owns it): live jobs from memory, past ones from the store.
 * Errors: MP_ENOTFOUND, MP_EDB, MP_ENOMEM, MP_EPARSE (a stored document that is not JSON). */
mp_status mpd_calib_get(mpd_calib_jobs *j, const char *id, cJSON **out, mp_error *err);

/* Asks a queued or running job to stop (it ends as "cancelled") and returns its document. Errors:
 * MP_ENOTFOUND, MP_ECONFLICT (the job has already finished: err gives its state). */
mp_status mpd_calib_cancel(mpd_calib_jobs *j, const char *id, cJSON **out, mp_error *err);

/* Waits for the job to finish, calling tick (may be NULL) about every 100 ms with the percent done and the
 * current suite; tick returns false to cancel the job. Errors: MP_ENOTFOUND. */
mp_status mpd_calib_wait(mpd_calib_jobs *j, const char *id, bool (*tick)(void *ctx, double percent, const char *suite),
                         void *ctx, mp_error *err);

/* ----- calib_doc.c: documents and profiles ------------------------------------------------------------- */

/* The datasheet profile id for a CUDA device name ("NVIDIA H200" -> "h200-sxm-141gb"), or NULL. */
const char *mpd_calib_datasheet_for(const char *cuda_name);

/* "measured-gpu0-<host>" / "measured-cpu-<host>": the host name as a lowercase slug. */
void mpd_calib_profile_id(bool gpu, char *out, size_t len);

/* Suite names of a mask as a JSON array (caller owns it). */
cJSON *mpd_calib_suites_json(uint32_t suites);

/*
 * Encodes a finished run: sets "device", "results", "ratios", "targets" and "warnings" on doc, and fills
 * *profile with the measured device profile to store (*have_profile false when the run measured too little
 * for one: a warning says why). datasheet (NULL if none) is the linked datasheet profile; previous (NULL if
 * none) an earlier measured profile of the same id whose figures are kept where this run measured nothing.
 * job_id, now (ISO 8601) and elapsed go into the profile's source note. Errors: MP_ENOMEM.
 */
mp_status mpd_calib_gpu_doc(const mp_calib_gpu_results *r, const mpd_calib_request *rq,
                            const mp_store_device *datasheet, const mp_store_device *previous, const char *job_id,
                            const char *now, double elapsed_seconds, cJSON *doc, mp_store_device *profile,
                            bool *have_profile);
mp_status mpd_calib_cpu_doc(const mp_calib_cpu_results *r, const mp_store_device *previous, const char *job_id,
                            const char *now, cJSON *doc, mp_store_device *profile, bool *have_profile);

/* Prints a job document as the CLI's table (figures, ratios, targets). */
void mpd_calib_print_table(FILE *f, const cJSON *doc);

#endif /* MPD_CALIB_JOBS_H */
