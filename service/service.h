/*
 * service.h: memplan's use cases. Resolves a request's model and device (stored or given inline), calls the
 * planner, and fills result structs: inference and training plans with their fit and performance blocks, the
 * fleet-wide fit and capacity, the roofline, the device and model store, calibration jobs (mps_calib.h), the names
 * people type for stored things (mps_suggest.h: Hugging Face repo ids, the nearest ids of a 404). The one layer
 * that combines the store, the planner and the kernels. No JSON and no HTTP: requests arrive decoded (codec/),
 * results leave as structs to be encoded (codec/) by the daemon or the command line.
 *
 * The requests and results are the structs of types/types.h. Ownership: requests are borrowed for the call;
 * results are caller-owned structs the service fills (the ones holding heap pointers say how to free them). The
 * store is the service's own: daemon/ and cli/ reach it only through these functions. Thread-safe: one service may
 * serve every worker thread of the daemon.
 */
#ifndef MPS_SERVICE_H
#define MPS_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../types/types.h"
#include "mps_suggest.h"

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

/* The path it was opened at (borrowed). */
const char *mps_db_path(const mps_service *s);
/* A counter that moves whenever what the store holds may have changed (a write through this service, or a commit
 * by another connection): equal values mean nothing changed in between (db/store.h: mp_store_generation). The
 * daemon's response cache and ETags follow it. Thread-safe. */
uint64_t mps_generation(mps_service *s);
/* The schema version the open database is at. */
int mps_schema_version(mps_service *s);
/* Whether a write would be kept; when not, why (len bytes, may be NULL) says so for an operator (db/store.h:
 * mp_store_write_state: the file moved or was deleted while open, or is read-only). */
bool mps_writable(mps_service *s, char *why, size_t len);
/* What opening the store did that an operator should know (a -wal that did not belong to the file, moved aside:
 * db/store.h mp_store_open_notice), or "" (borrowed from the service, alive until mps_close). */
const char *mps_open_notice(mps_service *s);


/* ----- health ----------------------------------------------------------------------------------------- */

/* Fills *h. The GPU is probed once per process (and again after each calibration), not on every call. */
void mps_health_get(mps_service *s, mps_health *h);
/* Forgets the GPU probe's answer, so the next health read probes again (a calibration just ran). */
void mps_health_refresh(mps_service *s);

/* ----- models --------------------------------------------------------------------------------------------- */

/* *src into *dst, up to the model's tensors in use (mp_model_copy); dst == src is a no-op. */
void mps_model_copy(mps_model *dst, const mps_model *src);

/*
 * Resolves ref into *out: a stored model from the memo of decoded models (parsed once per store change, not per
 * request), an inline one counted. Errors: MP_EINVAL naming ref->pointer when kind is NONE, MP_ENOTFOUND, MP_EDB,
 * the planner's errors naming the config keys (under arch.json_pointer).
 */
mp_status mps_model_resolve(mps_service *s, const mps_model_ref *ref, mps_model *out, mp_error *err);
/* As mps_model_resolve and mps_device_resolve, at a store generation the caller has just read
 * (mp_store_generation): a request that resolves both reads it once (db/store.h: mp_store_device_get_at). */
mp_status mps_model_resolve_at(mps_service *s, const mps_model_ref *ref, uint64_t gen, mps_model *out, mp_error *err);
/*
 * A model named by Hugging Face repository ({"hf_repo": ...}, MPS_MODEL_HF_REPO) made into one the plans take, in
 * place: its config.json and safetensors headers from the local Hugging Face cache (hub/hub.h: HF_HUB_CACHE,
 * HF_HOME/hub, ~/.cache/huggingface/hub) as an INLINE model with its checkpoint (owned by the ref, freed by
 * mpc_model_ref_release), else the preset that stands for the repo id (STORED). Any other ref is left as it is.
 * *fetched (may be NULL) says whether files outside the store were read (the answer then is not the store's alone).
 * Errors: MP_ENOTFOUND naming ref->pointer with where it looked, the readers' (MP_EINVAL naming the file's tensor
 * and rule), MP_ENOMEM.
 */
mp_status mps_model_ref_fetch(mps_service *s, mps_model_ref *ref, bool *fetched, mp_error *err);
/*
 * Lets mps_model_ref_fetch reach the Hugging Face Hub at endpoint ("https://huggingface.co"; NULL or "" = never, the
 * default) when the local cache lacks a repository: token (NULL: none) is sent to the endpoint's host alone and never
 * logged; fetched files are kept under cache_dir (NULL: not kept) up to cache_max_bytes; each request waits at most
 * timeout_seconds. A repository the Hub refuses or fails for falls back to the preset that stands for it, if any;
 * otherwise the Hub's 404 is a 404 and its refusals, timeouts and over-limit bodies are MP_EUPSTREAM (502) naming the
 * repository. Call before serving requests (not thread-safe against them).
 */
void mps_set_hub(mps_service *s, const char *endpoint, const char *token, const char *cache_dir,
		 uint64_t cache_max_bytes, unsigned timeout_seconds);
bool mps_hub_enabled(const mps_service *s);

/* How many stored-model resolutions the memo answered, and how many read and parsed the row. */
void mps_model_memo_stats(mps_service *s, uint64_t *hits, uint64_t *misses);

/* ----- devices ------------------------------------------------------------------------------------------- */

/* Resolves ref into *out (a stored profile read, an inline one copied). Errors: MP_ENOTFOUND naming ref->pointer,
 * MP_EINVAL (not a valid id), MP_EDB. */
mp_status mps_device_resolve(mps_service *s, const mps_device_ref *ref, mp_store_device *out, mp_error *err);
mp_status mps_device_resolve_at(mps_service *s, const mps_device_ref *ref, uint64_t gen, mp_store_device *out,
				mp_error *err);

/* ----- warnings: what an answer rests on that the request did not say ------------------------------------ */

/* Adds one warning (printf-style; an exact repeat of one kept is skipped; past MPS_MAX_WARNINGS it is counted in
 * w->dropped, past MPS_WARNING_BYTES it ends in "..."). */
void mps_warn(mps_warnings *w, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

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
/*
 * Every problem at once: after a decoder refused a request (st, its first problem in err), the stored model and the
 * device it names are still looked up, and each that is not found is added to err's list (err->all) with its
 * suggestions; err's first problem and st stay. Returns st. A model or device given inline, or not given, adds
 * nothing. Borrowed: m, d (NULL: none).
 */
mp_status mps_lookups_note(mps_service *s, const mps_model_ref *m, const mps_device_ref *d, mp_status st,
			   mp_error *err);
/* Frees what a plan holds on the heap (its tensor list); the struct itself stays the caller's, who allocates it
 * zeroed (calloc) so that a plan that failed early is released alike. NULL-safe. */
void mps_inference_plan_release(mps_inference_plan *p);

/* ----- a model's tensors: the inventory with each tensor's format and bytes ---------------------------------- */

/*
 * m's tensors (its inventory, planner/mp_inventory.h) under q's formats at q's tensor-parallel degree, into *out
 * (rows on the heap: mps_tensor_list_release). The weight dtype left out is the config's float dtype, else bf16
 * (weight_dtype_from says which). Errors: those of mp_weight_tensors (MP_EINVAL naming "/weight_formats/<class>",
 * MP_EOVERFLOW), MP_ENOMEM. Borrowed: m, q.
 * Worked example (tests/test_http.c test_model_tensors): llama-3-8b in bf16 at tensor_parallel_size 1 -> 8,030,261,248
 * parameters in 12 rows, model.layers.{i}.self_attn.k_proj.weight [1024, 4096] x 32 layers, 268,435,456 bytes.
 */
mp_status mps_tensors_of(const mp_model *m, const mps_tensors_query *q, mps_tensor_list *out, mp_error *err);
/* GET /v1/models/{id}/tensors: mps_tensors_of a stored model (or one a request names: ref). Errors: those of
 * mps_model_resolve (MP_ENOTFOUND naming "/id") and mps_tensors_of. */
mp_status mps_model_tensors(mps_service *s, const mps_model_ref *ref, const mps_tensors_query *q, mps_tensor_list *out,
			    mp_error *err);
void mps_tensor_list_release(mps_tensor_list *l);

/* ----- engine check: what an engine printed beside memplan's prediction ------------------------------------ */

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

/*
 * POST /v1/engine-check for llama.cpp and Ollama (mps_llamacpp_check.c): what the plan leaves out of the launch is taken
 * from the log (gpu_layers from "offloaded X/Y" or Ollama's -ngl, num_gpus and the backend from the GPU buffers'
 * names, the cache types from the size line: rq->plan.job is updated), the plan is made, and each figure the log
 * printed is set beside the placement's (model and KV buffers exact to the printed rounding, compute buffers
 * within 10%). *out is large: callers allocate it and release out->plan (mps_inference_plan_release). Errors: those
 * of mps_plan_inference (a model not from a GGUF file among them).
 */
mp_status mps_llama_check_run(mps_service *s, mps_llama_check_request *rq, mps_llama_check *out, mp_error *err);

/* ----- training plan ------------------------------------------------------------------------------------- */

/* POST /v1/plan/training. Errors: as mps_plan_inference. */
mp_status mps_plan_training(mps_service *s, const mps_training_request *rq, mps_training_plan *out, mp_error *err);

/* ----- fit: many jobs x devices x GPU counts ------------------------------------------------------------- */

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
/*
 * Each job's model given by Hugging Face repository ({"hf_repo": ...}) made into one the fit takes, before
 * mps_fit_prepare: mps_model_ref_fetch's (the local Hugging Face cache, the Hub where the daemon may reach one, the
 * preset that stands for it); a repository an earlier job named at the same revision is copied from it, not fetched
 * again. *fetched (may be NULL): files outside the store were read. Errors: every job's (mp_problems: a 404 naming
 * "/jobs/N/.../model", a 502 from the Hub), MP_ENOMEM.
 */
mp_status mps_fit_fetch_models(mps_service *s, mps_fit_request *rq, bool *fetched, mp_error *err);
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

/* GET /v1/capacity: the model, then one row per matching device in id order (GPUs unless rq->kinds says
 * otherwise), a page of at most rq->limit devices after rq->after; next_cursor (MP_STORE_ID_MAX bytes) gets the id
 * to continue after, "" when this page ends the list. Each row is mps_plan_inference for the same job on that
 * device: its max_concurrent_sequences is the plan's max_batch_size. Errors: MP_ENOTFOUND naming "?model", the
 * planner's, MP_EDB; those fn returns. */
mp_status mps_capacity(mps_service *s, const mps_capacity_request *rq, mps_model *model, mps_capacity_fn fn, void *ctx,
		       char *next_cursor, mp_error *err);

/* ----- roofline ---------------------------------------------------------------------------------------- */

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
 * Read-modify-write of one device: reads id, lets change(ctx, &device) edit a copy (a merge patch) with no lock of
 * the store held, and writes the result in a transaction that first reads the row again: when another writer
 * changed it in between, the new row is read and changed again (so change may run more than once, each time on a
 * fresh copy; no update is lost). change returns MP_OK to write, anything else to abandon (its error is returned).
 * Errors: the store's, MP_ENOTFOUND, change's, MP_ECONFLICT (the row changed under it 16 times in a row).
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

/* Counts the parameters of in->arch and writes the model (source "user"). Errors: MP_EINVAL naming /model_type or
 * /parameters when the body states one that hf_config contradicts (both when both do), the planner's naming the
 * config keys, the store's. */
mp_status mps_model_put(mps_service *s, const mps_model_input *in, const char *actor, bool *created, mp_error *err);
mp_status mps_model_get(mps_service *s, const char *id, mp_store_model *out, mp_error *err);
/* Releases what mps_model_get filled in (its config text). NULL-safe. */
void mps_model_free(mp_store_model *m);
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

/* Every device and every user model, in id order, through the callbacks (ctx passed on), each row a copy read with
 * the store's lock released before the callback runs. Errors: the store's, those the callbacks return. */
mp_status mps_export(mps_service *s, mps_device_fn device, mps_model_fn model, void *ctx, mp_error *err);

/* A page of a listing: at most limit rows after `after`, each given to fn with no lock of the store held (the store
 * copies rows out a page at a time); *more says whether further rows match. */
mp_status mps_device_find(mps_service *s, const mp_store_device_filter *f, const char *after, int limit,
			  mps_device_fn fn, void *ctx, int *more, mp_error *err);
mp_status mps_model_find(mps_service *s, const mp_store_model_filter *f, const char *after, int limit,
			 mps_model_fn fn, void *ctx, int *more, mp_error *err);

/* An import: devices and models written all or nothing, audited as "import"; profiles linking to another are
 * written after the rest. Errors: the first write's, naming devices[i] or models[i] by their pointers. */
mp_status mps_import_run(mps_service *s, const mps_import *im, mp_error *err);

#endif /* MPS_SERVICE_H */
