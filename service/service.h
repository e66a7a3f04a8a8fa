/*
 * service.h: memplan's use cases. Resolves a request's model and device (stored or given inline), calls the
 * planner, and fills result structs: inference and training plans with their fit and performance blocks, the
 * fleet-wide fit and capacity, the roofline, the device and model store, calibration jobs (calib.h). The one layer
 * that combines the store, the planner and the kernels. No JSON and no HTTP: requests arrive decoded (codec/),
 * results leave as structs to be encoded (codec/) by the daemon or the command line.
 *
 * Ownership: requests are borrowed for the call; results are caller-owned structs the service fills (the ones
 * holding heap pointers say how to free them). Errors name the request field as a JSON pointer built from the
 * request's `pointer` member, so a job nested in a batch is named where it sits ("/jobs/3/inference/batch_size").
 * Thread-safe: one service may serve every worker thread of the daemon.
 */
#ifndef MPS_SERVICE_H
#define MPS_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../db/store.h"
#include "../planner/memplan.h"

typedef struct mps_service mps_service; /* opaque: the store, the decoded-model memo, the GPU probe */

/* ----- opening ------------------------------------------------------------------------------------------ */

/*
 * Opens (creating parent folders and the file as needed) the database at db_path, migrates it and seeds the
 * presets built into the binary (service/presets.c). *out is released with mps_close. Errors: MP_EDB naming
 * "--db" or SQLite's message, MP_ENOMEM.
 */
mp_status mps_open(const char *db_path, mps_service **out, mp_error *err);
/* As mps_open, migrating only up to schema `version` (tests build old databases with it). */
mp_status mps_open_at(const char *db_path, int version, mps_service **out, mp_error *err);
void mps_close(mps_service *s);

/* The store underneath (borrowed; lives as long as s). For the readers that page through rows. */
mp_store *mps_store(mps_service *s);
/* The path it was opened at (borrowed). */
const char *mps_db_path(const mps_service *s);

/* The presets built into the binary (generated from db/presets at build time), as the store takes them. */
const mp_store_presets *mps_presets(void);

/* ----- health ----------------------------------------------------------------------------------------- */

typedef struct mps_health {
	const char *db_path;		/* borrowed from the service */
	int schema_version;
	bool db_writable;		/* false: writes are refused (db_problem says why); reads still work */
	char db_problem[600];		/* "" when writable */
	bool gpu_available;
	bool kernels_built_in;
	char gpu_name[128];
	uint64_t gpu_memory_bytes;
	char gpu_reason[320];		/* why no GPU is usable, "" when one is */
} mps_health;

/* Fills *h. The GPU is probed once per process (and again after each calibration), not on every call. */
void mps_health_get(mps_service *s, mps_health *h);
/* Forgets the GPU probe's answer, so the next health read probes again (a calibration just ran). */
void mps_health_refresh(mps_service *s);

/* ----- models --------------------------------------------------------------------------------------------- */

typedef enum mps_model_kind {
	MPS_MODEL_NONE = 0,	/* the request named none */
	MPS_MODEL_STORED,	/* `id` names a stored model */
	MPS_MODEL_INLINE,	/* `arch` holds a decoded hf_config or architecture object */
	MPS_MODEL_BARE,		/* only `parameters` (weights and optimizer states only) */
} mps_model_kind;

/* A request's "model" member, decoded (codec/model.c). */
typedef struct mps_model_ref {
	mps_model_kind kind;
	char id[MP_STORE_ID_MAX];
	mp_model arch;			/* INLINE; its json_pointer names where its keys sit */
	uint64_t parameters;		/* BARE */
	char pointer[64];		/* where the member sits: "/model", "/jobs/3/training/model" */
} mps_model_ref;

/* A model as the plans use it. */
typedef struct mps_model {
	char id[MP_STORE_ID_MAX];	/* stored id, or "" for an inline model */
	bool architecture_known;	/* false for {"parameters": N} */
	mp_model arch;
	mp_param_count params;
} mps_model;

/*
 * Resolves ref into *out: a stored model from the memo of decoded models (parsed once per store change, not per
 * request), an inline one counted. Errors: MP_EINVAL naming ref->pointer when kind is NONE, MP_ENOTFOUND, MP_EDB,
 * the planner's errors naming the config keys (under arch.json_pointer).
 */
mp_status mps_model_resolve(mps_service *s, const mps_model_ref *ref, mps_model *out, mp_error *err);
/* As mps_model_resolve and mps_device_resolve, at a store generation the caller has just read
 * (mp_store_generation): a request that resolves both reads it once (db/store.h: mp_store_device_get_at). */
mp_status mps_model_resolve_at(mps_service *s, const mps_model_ref *ref, uint64_t gen, mps_model *out, mp_error *err);
/* How many stored-model resolutions the memo answered, and how many read and parsed the row. */
void mps_model_memo_stats(mps_service *s, uint64_t *hits, uint64_t *misses);

/* ----- devices ------------------------------------------------------------------------------------------- */

/* A request's "device" member, decoded (codec/device.c): a stored id or an inline profile. */
typedef struct mps_device_ref {
	bool given;			/* false: the request names no device */
	bool inline_profile;		/* true: `profile` holds it (its id may be "") */
	char id[MP_STORE_ID_MAX];
	mp_store_device profile;	/* set only when inline_profile (the decoder leaves it alone otherwise) */
	char pointer[64];		/* where the member sits: "/device" */
} mps_device_ref;

/* Resolves ref into *out (a stored profile read, an inline one copied). Errors: MP_ENOTFOUND naming ref->pointer,
 * MP_EINVAL (not a valid id), MP_EDB. */
mp_status mps_device_resolve(mps_service *s, const mps_device_ref *ref, mp_store_device *out, mp_error *err);
mp_status mps_device_resolve_at(mps_service *s, const mps_device_ref *ref, uint64_t gen, mp_store_device *out,
				mp_error *err);

/* ----- inference plan ------------------------------------------------------------------------------------ */

/* Everything of an inference request but the device, so a scheduler's batch can be evaluated against many
 * devices and GPU counts. */
typedef struct mps_inference_job {
	mps_model_ref model;
	mp_inference_req req;		/* req.json_pointer points at `pointer` */
	mp_inference_opts opts;
	char pointer[64];		/* the request's own pointer: "" for a body, "/jobs/3/inference", "/fit_plan" */
} mps_inference_job;

typedef struct mps_inference_request {
	mps_inference_job job;
	mps_device_ref device;
} mps_inference_request;

/* The inference plan's performance block: roofline floors of one decode step at the last token of
 * sequence_length and of the prefill of sequence_length tokens, per GPU (planner/step.c). */
typedef struct mps_performance {
	mp_step decode, prefill;
	uint64_t compute_bound_batch;	/* smallest batch whose decode step turns compute-bound; 0 = none */
	uint64_t tensor_parallel_size;
} mps_performance;

/* mps_plan_inference clears every member except `device` and perf's two steps (filled before they are read): a new
 * member goes anywhere else. */
typedef struct mps_inference_plan {
	mps_model model;
	mp_inference_memory mem;
	bool have_device;
	mp_store_device device;
	mp_fit fit;			/* zeroed without a device */
	uint64_t tp_degrees[MP_MAX_TP_DEGREES];	/* valid tensor-parallel degrees */
	size_t ntp;
	mps_performance perf;		/* with a device */
} mps_inference_plan;

/*
 * POST /v1/plan/inference: the memory plan; with a device its fit and performance. *out is large (about 40 KB):
 * callers allocate it. Errors: MP_EINVAL naming the request field (a bare parameter count: "/model"),
 * MP_ENOTFOUND, MP_EOVERFLOW, MP_EDB.
 */
mp_status mps_plan_inference(mps_service *s, const mps_inference_request *rq, mps_inference_plan *out, mp_error *err);

/* ----- training plan ------------------------------------------------------------------------------------- */

typedef struct mps_training_job {
	mps_model_ref model;
	mp_training_req req;		/* req.json_pointer points at `pointer`; req.no_dropout from "dropout" */
	char pointer[64];
} mps_training_job;

typedef struct mps_training_request {
	mps_training_job job;
	mps_device_ref device;
} mps_training_request;

typedef struct mps_training_plan {
	mps_model model;
	mp_training_memory mem;
	bool have_device;
	mp_store_device device;
	mp_training_fit fit;		/* with a device */
	uint64_t formula_bytes[MP_FORMULA_COUNT];	/* the published activation formulas for the same shape */
	bool formula_known[MP_FORMULA_COUNT];
} mps_training_plan;

/* POST /v1/plan/training. Errors: as mps_plan_inference. */
mp_status mps_plan_training(mps_service *s, const mps_training_request *rq, mps_training_plan *out, mp_error *err);

/* ----- fit: many jobs x devices x GPU counts ------------------------------------------------------------- */

#define MPS_FIT_MAX_JOBS 4096
#define MPS_FIT_MAX_DEVICES 1000
#define MPS_FIT_MAX_GPU_COUNTS 16
#define MPS_FIT_MAX_PAIRS 100000

typedef struct mps_fit_job {
	char id[MP_STORE_ID_MAX];	/* the job's id, or its index */
	bool training;
	union {
		mps_inference_job inference;	/* training false */
		mps_training_job train;		/* training true */
	} u;
} mps_fit_job;

typedef struct mps_fit_request {
	mps_fit_job *jobs;		/* borrowed */
	size_t njobs;
	mps_device_ref *devices;	/* borrowed; NULL: every stored device */
	size_t ndevices;
	uint64_t gpu_counts[MPS_FIT_MAX_GPU_COUNTS];
	size_t ngpu_counts;
} mps_fit_request;

/* One answer: a job on one device with one GPU count. A GPU count the job's layout cannot use does not fit,
 * with total 0 and binding_term "invalid_layout". */
typedef struct mps_fit_row {
	uint64_t gpu_count;
	bool fits;
	uint64_t total_bytes;		/* per GPU */
	int64_t headroom_bytes;
	const char *binding_term;	/* static string */
} mps_fit_row;

/* A device as the fit holds it: its id and the figures the verdict reads (not the whole 4 KB store row, so every
 * stored device can be held: 23,588 of them in 11 MB). */
typedef struct mps_fit_device {
	char id[MP_STORE_ID_MAX];
	mp_device hw;
} mps_fit_device;

/* Where the answers go, one job at a time, in request order (the encoder writes them out as they come, so the
 * whole answer is never held). Each callback returns MP_OK to go on. Borrowed arguments. */
typedef struct mps_fit_sink {
	/* once the devices are known, before the first job */
	mp_status (*begin)(void *ctx, const mps_fit_request *rq, size_t ndevices);
	mp_status (*job_begin)(void *ctx, const mps_fit_job *job, const mps_model *model);
	mp_status (*device)(void *ctx, const mps_fit_device *dev, const mps_fit_row *rows, size_t nrows,
			    uint64_t smallest_gpu_count);
	mp_status (*job_end)(void *ctx);
} mps_fit_sink;

/*
 * A fit in two halves, so that every error is known before the first byte of the answer is sent and the answer can
 * then be written job by job while the connection takes it (daemon/h_fit.c streams it):
 * - mps_fit_prepare resolves every model and device and plans every job at every GPU count (memory does not depend
 *   on the device except through its CUDA context, planner/mp_inference.h: mp_inference_overhead_bytes), keeping
 *   per job and GPU count the five byte terms only (48 bytes; 3 MB for the largest fit). Errors: the jobs' own,
 *   naming them ("/jobs/3/inference/batch_size"; a job no GPU count can plan is a 422 with the first count's
 *   reason), MP_ETOOLARGE (over MPS_FIT_MAX_PAIRS job x device pairs), MP_ENOTFOUND, MP_EDB, MP_ENOMEM.
 * - mps_fit_emit_begin then mps_fit_emit for job 0, 1, ... judge each job on every device (the plan endpoints'
 *   own verdicts) and give the rows to the sink; they fail only with what the sink returns.
 * rq is borrowed and must outlive *out; mps_fit_plan_free releases it.
 */
typedef struct mps_fit_plan mps_fit_plan;
mp_status mps_fit_prepare(mps_service *s, const mps_fit_request *rq, mps_fit_plan **out, mp_error *err);
size_t mps_fit_plan_devices(const mps_fit_plan *p);
size_t mps_fit_plan_jobs(const mps_fit_plan *p);
mp_status mps_fit_emit_begin(const mps_fit_plan *p, const mps_fit_sink *sink, void *ctx);
mp_status mps_fit_emit(const mps_fit_plan *p, size_t job, const mps_fit_sink *sink, void *ctx);
void mps_fit_plan_free(mps_fit_plan *p);

/* The whole fit in one call: prepare, then every job to the sink. Errors: as mps_fit_prepare, then those the sink
 * returns. */
mp_status mps_fit(mps_service *s, const mps_fit_request *rq, const mps_fit_sink *sink, void *ctx, mp_error *err);

/* ----- capacity ------------------------------------------------------------------------------------------- */

typedef struct mps_capacity_request {
	char model[MP_STORE_ID_MAX];	/* stored model id */
	uint64_t sequence_length;	/* tokens per sequence */
	mp_dtype weight_dtype, kv_cache_dtype;
	char vendor[64], source[16];	/* device filters, "" = all */
	uint64_t limit;			/* devices in this page (1 to MPS_CAPACITY_MAX_LIMIT; 0 = the maximum) */
	char after[MP_STORE_ID_MAX];	/* the cursor: devices after this id ("" = from the first) */
} mps_capacity_request;

#define MPS_CAPACITY_MAX_LIMIT 1000

/* One device's row. */
typedef struct mps_capacity_row {
	const mp_store_device *device;	/* borrowed for the callback */
	mp_inference_memory mem;	/* the plan at batch 1 */
	mp_fit fit;
	uint64_t replicas_per_gpu;
	uint64_t max_concurrent_sequences;
	double decode_tokens_per_second_per_sequence;	/* 0 = unknown or does not fit */
	double decode_tokens_per_second_at_max_concurrency;
	bool decode_compute_bound;
} mps_capacity_row;

typedef mp_status (*mps_capacity_fn)(void *ctx, const mps_capacity_row *row);

/* GET /v1/capacity: the model, then one row per matching device in id order, a page of at most rq->limit devices
 * after rq->after; next_cursor (MP_STORE_ID_MAX bytes) gets the id to continue after, "" when this page ends the
 * list. Errors: MP_ENOTFOUND naming "?model", the planner's, MP_EDB; those fn returns. */
mp_status mps_capacity(mps_service *s, const mps_capacity_request *rq, mps_model *model, mps_capacity_fn fn, void *ctx,
		       char *next_cursor, mp_error *err);

/* ----- roofline ---------------------------------------------------------------------------------------- */

#define MPS_ROOFLINE_MAX_OPS 64

/* One operation of a roofline request (codec/roofline.c decodes it into a planner op). */
typedef struct mps_roofline_op {
	mp_op op;
	char kind[16];			/* the API's name: "matmul", "decode", ... */
	char label[64];
	bool decode;			/* a weights + KV decode step (tokens/s are reported) */
	uint64_t batch;			/* decode: sequences */
	double measured_seconds;	/* 0 = none given */
	char pointer[24];		/* "/ops/3" or "?op" */
} mps_roofline_op;

/* The optional transformer step analysis. */
typedef struct mps_roofline_transformer {
	bool given;
	mps_model_ref model;
	mp_step_req req;
	bool context_given, prompt_given;	/* else the 4096-token defaults stop at the model's context */
	char pointer[24];		/* "/transformer" */
} mps_roofline_transformer;

typedef struct mps_roofline_request {
	mps_device_ref device;
	mp_dtype ridge_dtype;		/* bf16 unless given */
	bool ridge_dtype_given;
	char ridge_pointer[24];		/* where it was given: "/ridge_dtype" or "?ridge_dtype" */
	mps_roofline_op ops[MPS_ROOFLINE_MAX_OPS];
	size_t nops;
	bool ops_given;
	mps_roofline_transformer transformer;
} mps_roofline_request;

typedef struct mps_roofline_op_result {
	mp_roof roof;
	bool measured;
	mp_measurement_check check;
} mps_roofline_op_result;

typedef struct mps_roofline_result {
	mp_store_device device;
	mp_dtype ridge_dtype;		/* the roof the ridge uses (the device's own when bf16 was not given and it has none) */
	double peak_flops_per_second;	/* matrix peak of ridge_dtype */
	mp_dtype peak_dtype;
	double vector_flops_per_second;	/* 0 = none */
	double ridge_flops_per_byte;
	bool have_littles_law;
	mp_littles_law littles_law;
	mps_roofline_op_result ops[MPS_ROOFLINE_MAX_OPS];
	size_t nops;
	bool have_transformer;
	mps_model model;		/* the transformer's */
	mp_step decode, prefill;
	uint64_t decode_compute_bound_batch;	/* 0 = none */
} mps_roofline_result;

/* POST /v1/roofline and the roofline chart. *out is large: callers allocate it. Errors: MP_EINVAL naming the field
 * ("/ops/3/k", "/device", "/ridge_dtype"), MP_EUNSUPPORTED, MP_EOVERFLOW, MP_ENOTFOUND. */
mp_status mps_roofline(mps_service *s, const mps_roofline_request *rq, mps_roofline_result *out, mp_error *err);

/* ----- device and model store ----------------------------------------------------------------------------- */

/* Writes are audited with actor ("api", "import", "calibration"). A linked_device_id must name a stored device
 * (MP_EINVAL naming "<pointer>/linked_device_id"). Errors: those of the store (db/store.h). */
mp_status mps_device_get(mps_service *s, const char *id, mp_store_device *out, mp_error *err);
mp_status mps_device_put(mps_service *s, const mp_store_device *d, const char *actor, const char *pointer,
			 bool *created, mp_error *err);
mp_status mps_device_delete(mps_service *s, const char *id, const char *actor, mp_error *err);
/*
 * Read-modify-write of one device in one transaction: reads id, lets change(ctx, &device) edit it (a merge patch),
 * writes the result. change returns MP_OK to write, anything else to abandon (its error is returned). Errors: the
 * store's, MP_ENOTFOUND, change's.
 */
mp_status mps_device_update(mps_service *s, const char *id, const char *actor,
			    mp_status (*change)(void *ctx, mp_store_device *d, mp_error *err), void *ctx, mp_error *err);

/* A model to store: its config text (owned by the caller) and the architecture decoded from it (codec/). */
typedef struct mps_model_input {
	char id[MP_STORE_ID_MAX];
	const char *config_json;
	mp_model arch;
} mps_model_input;

/* Counts the parameters of in->arch and writes the model (source "user"). Errors: the planner's naming the config
 * keys, the store's. */
mp_status mps_model_put(mps_service *s, const mps_model_input *in, const char *actor, bool *created, mp_error *err);
mp_status mps_model_get(mps_service *s, const char *id, mp_store_model *out, mp_error *err);
mp_status mps_model_delete(mps_service *s, const char *id, const char *actor, mp_error *err);
/* As mps_device_update, for a model: change gets the stored row and fills *in with the new model. */
mp_status mps_model_update(mps_service *s, const char *id, const char *actor,
			   mp_status (*change)(void *ctx, const mp_store_model *m, mps_model_input *in, char **owned,
					       mp_error *err),
			   void *ctx, mp_error *err);

/* Every device and every user model, in id order, through the callbacks (ctx passed on). Errors: the store's,
 * those the callbacks return. */
mp_status mps_export(mps_service *s, mp_store_device_fn device, mp_store_model_fn model, void *ctx, mp_error *err);

/* A page of a listing (mp_store_device_find / mp_store_model_find). */
mp_status mps_device_find(mps_service *s, const mp_store_device_filter *f, const char *after, int limit,
			  mp_store_device_fn fn, void *ctx, int *more, mp_error *err);
mp_status mps_model_find(mps_service *s, const mp_store_model_filter *f, const char *after, int limit,
			 mp_store_model_fn fn, void *ctx, int *more, mp_error *err);

/* An import: devices and models written all or nothing, audited as "import"; profiles linking to another are
 * written after the rest. Errors: the first write's, naming devices[i] or models[i] by their pointers. */
typedef struct mps_import {
	mp_store_device *devices;
	char (*device_pointers)[32];	/* "/devices/3" per device */
	size_t ndevices;
	mps_model_input *models;
	char (*model_pointers)[32];
	char **model_texts;		/* the models' config texts (owned by whoever decoded them) */
	size_t nmodels;
} mps_import;
mp_status mps_import_run(mps_service *s, const mps_import *im, mp_error *err);

#endif /* MPS_SERVICE_H */
