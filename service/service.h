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

/* The Hugging Face repo ids a model preset stands for (db/presets/model_repo_ids.json, checked at build time). */
typedef struct mps_repo_alias {
	const char *id;			/* the preset's id */
	const char *const *repo_ids;	/* NULL-terminated: "meta-llama/Llama-3.1-8B-Instruct", ... */
} mps_repo_alias;
/* Every preset's aliases, ending with { NULL, NULL }. */
const mps_repo_alias *mps_preset_repo_ids(void);
/* The repo ids preset `id` stands for (NULL-terminated), or NULL when it is no preset or has none. */
const char *const *mps_model_repo_ids(const char *id);

/* ----- health ----------------------------------------------------------------------------------------- */

typedef struct mps_health {
	const char *db_path;		/* borrowed from the service */
	int schema_version;
	bool db_writable;		/* false: writes are refused (db_problem says why); reads still work */
	char db_problem[1400];		/* "" when writable */
	char db_notice[2400];		/* what opening the store did that an operator should know (a -wal moved
					 * aside, mp_store_open_notice), "" when nothing */
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
	char repo_id[128];		/* STORED by a Hugging Face repo id ("meta-llama/Llama-3.1-8B"), id "": the
					   service resolves it to the preset it stands for (mps_model_repo_ids) */
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

/* The serving engine a request names, and the engine knobs it sets (service/engine.c resolves the rest). */
typedef struct mps_engine_opts {
	mp_engine engine;		/* MP_ENGINE_NONE: no engine block; the defaults follow vLLM's */
	int chunked_prefill;		/* 0: not given (on, as every engine's default; a zeroed job is that), -1 off, 1 on */
	bool utilization_given;		/* gpu_memory_utilization came from the request */
	bool block_size_given;		/* kv_block_size came from the request */
	double mem_fraction_static;	/* SGLang's knob; 0 = its default for the device */
	double free_gpu_memory_fraction;	/* TensorRT-LLM's knob; 0 = its default (0.9) */
	char served_model[256];		/* the model argument of the command line; "" = the preset's repository */
} mps_engine_opts;

/* ----- warnings: what an answer rests on that the request did not say ------------------------------------ */

#define MPS_MAX_WARNINGS 8
#define MPS_WARNING_BYTES 768
typedef struct mps_warnings {
	size_t n;
	char text[MPS_MAX_WARNINGS][MPS_WARNING_BYTES];
} mps_warnings;

/* Adds one warning (printf-style; cut at MPS_MAX_WARNINGS, an exact repeat skipped). */
void mps_warn(mps_warnings *w, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* Everything of an inference request but the device, so a scheduler's batch can be evaluated against many
 * devices and GPU counts. */
typedef struct mps_inference_job {
	mps_model_ref model;
	mp_inference_req req;		/* req.json_pointer points at `pointer` */
	mp_inference_opts opts;		/* as given: max_num_batched_tokens 0 = the engine's default (resolved per device) */
	char pointer[64];		/* the request's own pointer: "" for a body, "/jobs/3/inference", "/fit_plan" */
	mps_engine_opts engine;
	/* --- issue 15: what the request left to the defaults, resolved per model and device by
	 * mps_inference_defaults --- */
	bool weight_dtype_auto;		/* weight_dtype absent or "auto" */
	bool kv_cache_dtype_auto;	/* kv_cache_dtype absent or "auto" */
	bool compute_dtype_given;	/* compute_dtype was in the request */
	bool int4_scheme_given;		/* int4_scheme, or weight_dtype gptq / awq, was in the request */
	bool int4_group_size_given;
} mps_inference_job;

/* How the prefill chunk (max_num_batched_tokens) of a plan was chosen. */
typedef struct mps_prefill_choice {
	uint64_t max_num_batched_tokens;	/* the chunk the plan used */
	bool defaulted;			/* the request gave none: the engine's default for the device */
	bool chunked_prefill;		/* false: the engine's rule without chunking (at least max_model_len) */
	mp_engine basis;		/* whose rule (MP_ENGINE_VLLM when no engine is named) */
	uint64_t engine_default;	/* the engine's default for the device, before the caps below */
	const char *device_class;	/* static text: the branch of the engine's rule */
} mps_prefill_choice;

/*
 * The options a job runs with on dev (NULL: no device): the request's own, with what it left out taken from the
 * engine it names (vLLM when none), as that engine would on that device (planner/mp_engine.h):
 * max_num_batched_tokens (vLLM: min(max_num_seqs x max_model_len, the device's default), with max_num_seqs =
 * batch_size and max_model_len = sequence_length; chunked prefill off: at least max_model_len), kv_block_size
 * (vLLM 16, SGLang 1, TensorRT-LLM 32) and, for vLLM, gpu_memory_utilization 0.9. A request with attention
 * "none" has no prefill and keeps max_num_batched_tokens 0. choice (may be NULL) says what was chosen.
 * Errors: MP_EINVAL from the engine's defaults.
 */
mp_status mps_inference_opts_for(const mps_inference_job *j, const mp_store_device *dev, mp_inference_opts *out,
				 mps_prefill_choice *choice, mp_error *err);
/* The same from the figures the rule reads: hw (NULL: no device), the device's name and NVML total (0: unknown). */
mp_status mps_inference_opts_on(const mps_inference_job *j, const mp_device *hw, const char *name,
				uint64_t nvml_memory_bytes, mp_inference_opts *out, mps_prefill_choice *choice,
				mp_error *err);

/* One launch argument of an engine's command line. */
typedef struct mps_engine_arg {
	const char *flag;		/* static: "--tensor-parallel-size" */
	char value[256];		/* "" for a switch */
	const char *source;		/* static: "plan" (realises the plan), "request", "default" (the engine's) */
} mps_engine_arg;

#define MPS_ENGINE_MAX_ARGS 24

/* The engine block of an inference plan: the arguments that realise it and what the engine will print. */
typedef struct mps_engine_block {
	mp_engine engine;
	const char *program;		/* static: "vllm serve", "python3 -m sglang.launch_server", "trtllm-serve" */
	const char *model_flag;		/* static: NULL (positional) or "--model-path" */
	char model_arg[256];		/* the served model (a Hugging Face repository or a path) */
	bool model_arg_known;		/* false: the request's model id stands in (give served_model) */
	mps_engine_arg args[MPS_ENGINE_MAX_ARGS];
	size_t nargs;
	char extra_options_yaml[256];	/* TensorRT-LLM's --extra_llm_api_options file, "" when none is needed */
	mp_engine_defaults defaults;	/* the engine's defaults on the device */
	bool have_prediction;		/* with a device */
	mp_engine_inputs inputs;	/* what the prediction started from (per GPU) */
	mp_engine_prediction predicted;
	const char *source;		/* static: the engine version and files the arithmetic follows */
} mps_engine_block;

/* How an inference job's "auto" values were resolved (echoed in the answer's request block). */
typedef struct mps_dtype_choice {
	const char *weight_dtype_from;	/* "request", "quantization_config", "config_dtype", "default" */
	const char *kv_cache_dtype_from;	/* "request" or "compute_dtype" */
	const char *compute_dtype_from;	/* "request", "weight_dtype", "config_dtype", "default" */
} mps_dtype_choice;

/*
 * Resolves the job's defaults for model m on dev (NULL: no device) in place, as vLLM resolves --dtype auto and
 * --kv-cache-dtype auto (vllm/config/model.py _get_and_verify_dtype and _resolve_auto_dtype, vLLM 0.11):
 *   compute_dtype: the request's, else a float weight_dtype (fp32, bf16, fp16), else the model's dtype: the
 *     config's dtype, with float32 (or no dtype stated: vLLM reads that as float32) served in the device's
 *     preferred type, bf16 where the device has a bf16 path and fp16 where not; fp16 is never chosen for
 *     gemma2, gemma3, gemma3_text, plamo2 and glm4 (_FLOAT16_NOT_SUPPORTED_MODELS: bf16, or fp32 without bf16).
 *   weight_dtype auto: the config's quantization_config (gptq/awq -> int4 with that scheme and group_size, fp8,
 *     bitsandbytes nf4/int8), else the compute dtype.
 *   kv_cache_dtype auto: the compute dtype (vLLM CacheConfig cache_dtype "auto").
 * Adds a warning for each choice that rests on an assumption (no dtype in the config, an fp32 checkpoint served
 * in 16 bits). choice may be NULL. No errors.
 * Worked example (tests/test_answers.c): llama-3-8b (dtype bfloat16), nothing given -> bf16 weights, bf16 KV.
 */
void mps_inference_defaults(const mp_model *m, const mp_device *dev, mps_inference_job *job, mps_dtype_choice *choice,
			    mps_warnings *w);

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

/* mps_plan_inference_on clears every member except the model, the job and the device (copied in) and perf's two steps
 * (filled before they are read): a new member goes anywhere else. */
typedef struct mps_inference_plan {
	mps_model model;
	mps_inference_job job;		/* the request's job with its defaults resolved (what was planned) */
	mps_dtype_choice choice;
	mps_warnings warnings;
	mp_inference_memory mem;
	bool have_device;
	mp_store_device device;
	mp_fit fit;			/* zeroed without a device */
	uint64_t tp_degrees[MP_MAX_TP_DEGREES];	/* valid tensor-parallel degrees */
	size_t ntp;
	mps_performance perf;		/* with a device (recurrent layers included: planner/step.c) */
	mp_inference_opts opts;		/* the options the plan ran with (mps_inference_opts_for) */
	mps_prefill_choice prefill;
	bool have_engine;		/* the request named an engine */
	mps_engine_block engine;
} mps_inference_plan;

/*
 * The engine block of plan p for job j (p computed by mps_plan_inference with the options of
 * mps_inference_opts_for): the arguments that realise the plan and, with a device, what the engine will print.
 * Sets p->have_engine; nothing when j names no engine. Errors: MP_EINVAL naming the field an engine cannot take
 * (kv_cache_dtype, weight_dtype, sequence_length_scope), MP_EOVERFLOW.
 */
mp_status mps_engine_block_for(const mps_inference_job *j, mps_inference_plan *p, mp_error *err);

/*
 * POST /v1/plan/inference: the memory plan; with a device its fit and performance. *out is large (about 40 KB):
 * callers allocate it. Errors: MP_EINVAL naming the request field (a bare parameter count: "/model"),
 * MP_ENOTFOUND, MP_EOVERFLOW, MP_EDB.
 */
mp_status mps_plan_inference(mps_service *s, const mps_inference_request *rq, mps_inference_plan *out, mp_error *err);

/* ----- engine check: what an engine printed beside memplan's prediction ------------------------------------ */

#define MPS_ENGINE_MAX_FIGURES 64

/* The figures an engine prints at start-up; mps_figure_name gives each its API name, the unit in the name. */
typedef enum mps_figure {
	MPS_FIG_WEIGHTS_LOADED_GIB = 0,	/* vLLM "Model loading took", SGLang "mem usage", TensorRT-LLM "inside torch" */
	MPS_FIG_TOTAL_GPU_MEMORY_GIB,	/* the engine's total: CUDA's (vLLM, TensorRT-LLM), free before load (SGLang) */
	MPS_FIG_FREE_GPU_MEMORY_GIB,	/* vLLM's start-up free memory (the utilisation error) */
	MPS_FIG_MEMORY_FRACTION,	/* gpu_memory_utilization, mem_fraction_static, free_gpu_memory_fraction */
	MPS_FIG_REQUESTED_MEMORY_GIB,	/* vLLM total x utilisation */
	MPS_FIG_NON_TORCH_MEMORY_GIB,	/* vLLM V0 non_torch_memory */
	MPS_FIG_ACTIVATION_PEAK_GIB,	/* the profile run's peak over the weights */
	MPS_FIG_PEAK_TORCH_MEMORY_GIB,	/* vLLM V0.6: weights + activation peak; TensorRT-LLM: the profile's peak */
	MPS_FIG_AVAILABLE_KV_CACHE_GIB,	/* the KV budget */
	MPS_FIG_NUM_GPU_BLOCKS,		/* vLLM num_gpu_blocks, TensorRT-LLM blocks in the primary pool */
	MPS_FIG_KV_CACHE_TOKENS,	/* vLLM "GPU KV cache size", SGLang "#tokens", TensorRT-LLM max tokens */
	MPS_FIG_MAX_CONCURRENCY,	/* vLLM "Maximum concurrency for N tokens per request" */
	MPS_FIG_NEEDED_KV_CACHE_GIB,	/* vLLM's start-up check: one request of max_model_len */
	MPS_FIG_ESTIMATED_MAX_MODEL_LEN,	/* vLLM's estimate when max_model_len does not fit */
	MPS_FIG_BLOCK_SIZE,		/* tokens per block (vllm:cache_config_info) */
	MPS_FIG_AVAILABLE_AFTER_WEIGHTS_GIB,	/* SGLang "Load weight end. avail mem", TensorRT-LLM C++ "available" */
	MPS_FIG_K_CACHE_GIB,		/* SGLang K size (its "GB" are GiB) */
	MPS_FIG_V_CACHE_GIB,
	MPS_FIG_AVAILABLE_AFTER_POOL_GIB,	/* SGLang "Memory pool end. avail mem" */
	MPS_FIG_MAX_RUNNING_REQUESTS,
	MPS_FIG_CHUNKED_PREFILL_SIZE,	/* SGLang chunked_prefill_size */
	MPS_FIG_CONTEXT_LEN,		/* SGLang context_len */
	MPS_FIG_KV_SIZE_PER_TOKEN_BYTES,	/* TensorRT-LLM "kv size is" */
	MPS_FIG_KV_CACHE_BYTES,		/* TensorRT-LLM "Allocate N bytes for k/v cache" */
	MPS_FIG_COUNT
} mps_figure;

/* "weights_loaded_gib", "kv_cache_tokens", ...; "invalid" outside the enum. */
const char *mps_figure_name(mps_figure f);

/* One figure an engine printed at start-up (codec/ reads them from a log or a metrics exposition). */
typedef struct mps_engine_figure {
	mps_figure kind;
	double reported;		/* in the unit of the name, as printed */
	int decimals;			/* decimals printed: the rounding the engine applied */
	uint64_t tokens_per_request;	/* max_concurrency, needed_kv_cache_gib, ...: the length the line names */
	uint32_t line;			/* 1-based line of the text */
	char text[200];			/* the line, cut at 199 bytes (well-formed UTF-8) */
} mps_engine_figure;

typedef struct mps_engine_report {
	mp_engine engine;
	uint32_t lines;			/* lines read */
	uint32_t lines_recognised;	/* lines that gave at least one figure */
	size_t nfigures;
	mps_engine_figure figures[MPS_ENGINE_MAX_FIGURES];
	bool truncated;			/* more figures than MPS_ENGINE_MAX_FIGURES: the later ones were left out */
	bool from_metrics;		/* a Prometheus exposition (vllm:cache_config_info) rather than a log */
} mps_engine_report;

typedef struct mps_engine_check_request {
	mps_inference_request plan;	/* the plan to compare with; its job's engine is the report's */
	mps_engine_report report;
} mps_engine_check_request;

/* One reported figure against memplan. */
typedef struct mps_engine_comparison {
	bool have_predicted;
	double predicted;		/* memplan's plan through the engine's arithmetic, in the figure's unit */
	double tolerance;		/* half a unit of the last digit the engine printed (0 for counts) */
	bool within_tolerance;		/* |reported - predicted| <= tolerance */
	bool have_implied;		/* the engine's own arithmetic applied to the log's other figures */
	double implied_min, implied_max;	/* what those figures allow, their rounding included */
	bool consistent;		/* reported within [implied_min - tolerance, implied_max + tolerance] */
	const char *implied_from;	/* static: the figure(s) it follows from */
	const char *basis;		/* static: "engine arithmetic" (exact from the plan's bytes) or "modelled" */
} mps_engine_comparison;

typedef struct mps_engine_check {
	mps_inference_plan plan;	/* with its engine block */
	mps_engine_comparison rows[MPS_ENGINE_MAX_FIGURES];	/* one per figure of the report, in its order */
	size_t predicted, within_tolerance, checked, consistent;
} mps_engine_check;

/*
 * POST /v1/engine-check: plans rq->plan (the engine named), then sets each figure the engine printed beside the
 * prediction and beside what the log's other figures imply by the engine's arithmetic (blocks from the KV memory,
 * tokens from blocks, concurrency from tokens, the start-up check's bytes from max_model_len), with the tolerance
 * the printed rounding allows. With tensor parallelism vLLM keeps the smallest worker's blocks, so a figure that
 * follows from one worker's line is bounded from above only. *out is large: callers allocate it. Errors: those of
 * mps_plan_inference; MP_EINVAL naming "/plan/device" when the plan names no device (the engines size their pool
 * from it).
 */
mp_status mps_engine_check_run(mps_service *s, const mps_engine_check_request *rq, mps_engine_check *out,
			       mp_error *err);

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
	mps_warnings warnings;
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
	unsigned kinds;			/* without devices: the stored devices of these kinds (MP_STORE_KIND_*); 0 = GPUs */
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
	char name[128];			/* the profile's name: an inline profile's rows are told apart by it; vLLM's
					   defaults test it for "A100" */
	uint64_t nvml_memory_bytes;	/* NVML's total (SGLang's defaults read it); 0 = unknown */
	char nvml_name[MP_STORE_ALIAS_MAX];	/* the first alias that is an NVML name (it has a blank: "NVIDIA H100 80GB
						   HBM3"), from which Slurm's AutoDetect=nvml GRES type follows; "" none */
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

/* The whole fit in one call, each job planned just before it goes to the sink (one job's cells held, not every
 * job's: about 22 KB instead of 90 MB for the largest fit). Errors: as mps_fit_prepare, then those the sink returns;
 * a job's error comes after the jobs before it were given to the sink, whose output the caller drops. */
mp_status mps_fit(mps_service *s, const mps_fit_request *rq, const mps_fit_sink *sink, void *ctx, mp_error *err);

/* ----- capacity ------------------------------------------------------------------------------------------- */

typedef struct mps_capacity_request {
	char model[MP_STORE_ID_MAX];	/* stored model id (or what the job's model ref names) */
	uint64_t sequence_length;	/* tokens per sequence */
	/* the plan each row is: the job POST /v1/plan/inference would decode from the same arguments (batch_size 1,
	 * the plan's defaults, dtypes "auto" unless given, tensor_parallel_size / num_gpus) */
	mps_inference_job job;
	char vendor[64], source[16];	/* device filters, "" = all */
	unsigned kinds;			/* MP_STORE_KIND_* mask; 0 = GPUs only */
	uint64_t limit;			/* devices in this page (1 to MPS_CAPACITY_MAX_LIMIT; 0 = the maximum) */
	char after[MP_STORE_ID_MAX];	/* the cursor: devices after this id ("" = from the first) */
} mps_capacity_request;

#define MPS_CAPACITY_MAX_LIMIT 1000

/* One device's row: the inference plan at batch 1 on that device. */
typedef struct mps_capacity_row {
	const mp_store_device *device;	/* borrowed for the callback */
	const mps_inference_plan *plan;	/* borrowed for the callback: the plan endpoint's own answer for this row */
	mp_inference_memory mem;	/* the plan at batch 1 */
	mp_fit fit;
	uint64_t replicas_per_gpu;
	uint64_t max_concurrent_sequences;	/* = plan->fit.max_batch_size when it fits, else 0 */
	double decode_tokens_per_second_per_sequence;	/* 0 = unknown or does not fit */
	double decode_tokens_per_second_at_max_concurrency;
	bool decode_compute_bound;
} mps_capacity_row;

typedef mp_status (*mps_capacity_fn)(void *ctx, const mps_capacity_row *row);

/* GET /v1/capacity: the model, then one row per matching device in id order (GPUs unless rq->kinds says
 * otherwise), a page of at most rq->limit devices after rq->after; next_cursor (MP_STORE_ID_MAX bytes) gets the id
 * to continue after, "" when this page ends the list. Each row is mps_plan_inference for the same job on that
 * device: its max_concurrent_sequences is the plan's max_batch_size. Errors: MP_ENOTFOUND naming "?model", the
 * planner's, MP_EDB; those fn returns. */
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
	/* the model and the data types as the inference plan takes them (codec's mpc_inference_dtypes): weight and KV
	 * dtypes "auto" unless given, compute_dtype, resolved per model and device by mps_inference_defaults, so the
	 * steps are the plan's performance block for the same question */
	mps_inference_job job;
	mp_step_req req;		/* batch, context, prompt, activation dtype, attention; its dtypes are job's */
	bool batch_given, context_given, prompt_given;	/* else 1 and the 4096-token defaults (stopped at the
							   model's context) */
	bool activation_given;
	char pointer[24];		/* "/transformer", or "?" for the chart's query */
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
	/* what the answer rests on that the request did not say: a peak taken from another dtype, the transformer
	 * form's defaults and dtype assumptions (the plan's own warnings) */
	mps_warnings warnings;
	bool have_transformer;
	mps_model model;		/* the transformer's */
	/* the transformer's request as analysed: step (json_pointer NULL) with the dtypes resolved, and where each
	 * value came from */
	mp_step_req step;
	mps_dtype_choice choice;	/* weight, KV and compute dtypes: as the plan's request echo */
	mp_dtype compute_dtype;
	mp_int4_scheme int4_scheme;	/* when step.weight_dtype is int4 */
	const char *batch_size_from;	/* static: "request" or "default" */
	const char *context_tokens_from;	/* static: "request", "default" (4096) or "model_context" (the default
						   stopped below the model's context) */
	const char *prompt_tokens_from;	/* static: "request", "default" or "model_context" */
	const char *activation_dtype_from;	/* static: "request" or "default" (mp_step_activation_dtype) */
	mp_step decode, prefill;
	uint64_t decode_compute_bound_batch;	/* 0 = none */
} mps_roofline_result;

/*
 * POST /v1/roofline and the roofline chart. The transformer form resolves its data types as POST
 * /v1/plan/inference does (mps_inference_defaults: quantization_config, the config's dtype as vLLM serves it on the
 * device, "auto"), so its decode step at context_tokens S - 1 and its prefill of S tokens are the plan's
 * performance block at sequence_length S (tests/test_roofline.c checks an AWQ config and a bf16 preset). Adds a
 * warning for each transformer default that changes the answer (batch_size, context_tokens when the model has
 * attention layers, prompt_tokens) and for each peak taken from another dtype (vector work at the CUDA-core fp32
 * rate is the model, mp_device_peak, and is not warned about). *out is large: callers allocate it. Errors:
 * MP_EINVAL naming the field ("/ops/3/k", "/device", "/ridge_dtype"), MP_EUNSUPPORTED, MP_EOVERFLOW,
 * MP_ENOTFOUND.
 */
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

/*
 * A write's precondition (RFC 9110 section 13.1: If-Match, If-None-Match), judged inside the write's own
 * transaction on the row it would replace or remove: current is that row, or NULL when there is none. It returns
 * MP_OK to go on, anything else (MP_EPRECONDITION) to abandon the write with its error.
 */
typedef mp_status (*mps_device_precondition)(void *ctx, const mp_store_device *current, mp_error *err);
/* mps_device_put and mps_device_delete with check(ctx, current) first, in one transaction: no other write can come
 * between the check and the write. check NULL = none. Errors: check's, then those of the unchecked calls. */
mp_status mps_device_put_if(mps_service *s, const mp_store_device *d, const char *actor, mps_device_precondition check,
			    void *ctx, bool *created, mp_error *err);
mp_status mps_device_delete_if(mps_service *s, const char *id, const char *actor, mps_device_precondition check,
			       void *ctx, mp_error *err);

/* A model to store: its config text (owned by the caller) and the architecture decoded from it (codec/). */
typedef struct mps_model_input {
	char id[MP_STORE_ID_MAX];
	const char *config_json;
	mp_model arch;
	/* what the body said of the members the store derives (a GET's answer PUT back carries them): checked
	 * against hf_config, never stored as given */
	char stated_model_type[64];	/* "" = not stated */
	bool stated_parameters_given;
	uint64_t stated_parameters;
} mps_model_input;

/* Counts the parameters of in->arch and writes the model (source "user"). Errors: MP_EINVAL naming /model_type or
 * /parameters when the body states one that hf_config contradicts (both when both do), the planner's naming the
 * config keys, the store's. */
mp_status mps_model_put(mps_service *s, const mps_model_input *in, const char *actor, bool *created, mp_error *err);
mp_status mps_model_get(mps_service *s, const char *id, mp_store_model *out, mp_error *err);
mp_status mps_model_delete(mps_service *s, const char *id, const char *actor, mp_error *err);
/* As mps_device_update, for a model: change gets the stored row and fills *in with the new model. */
mp_status mps_model_update(mps_service *s, const char *id, const char *actor,
			   mp_status (*change)(void *ctx, const mp_store_model *m, mps_model_input *in, char **owned,
					       mp_error *err),
			   void *ctx, mp_error *err);

/* As mps_device_precondition, for a model (current: the stored row, NULL when there is none). */
typedef mp_status (*mps_model_precondition)(void *ctx, const mp_store_model *current, mp_error *err);
/* mps_model_put and mps_model_delete with check(ctx, current) first, in one transaction (as mps_device_put_if). */
mp_status mps_model_put_if(mps_service *s, const mps_model_input *in, const char *actor, mps_model_precondition check,
			   void *ctx, bool *created, mp_error *err);
mp_status mps_model_delete_if(mps_service *s, const char *id, const char *actor, mps_model_precondition check,
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
