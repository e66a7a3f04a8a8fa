/*
 * codec.h: requests decoded into structs, and results rendered from them: the structs (types/types.h) are the data
 * model, and JSON, text and SVG are three renderers of them (cmark's node / renderer split). Decoders turn a parsed
 * body (a cJSON tree) into the request structs, validating every field against one table per document and naming
 * the field of each problem; the JSON encoders write result structs with mpc_json.h's one writer (mpc_out), one
 * encoder per block (the model, the fit, the warnings, a device...) shared by every document that holds it; the
 * text and SVG renderers read the same structs, never a JSON document's member names. Calls nothing of the
 * service, the store, the planner's arithmetic or the kernels: the numbers arrive computed. Inline model configs
 * are read through model/ (the readers), a floor below.
 *
 * Ownership: decoders borrow their input and fill caller-owned structs; encoders write into the caller's writer
 * (mpc_json.h: mpc_out_finish hands over the text); text renderers return heap text the caller frees (NULL when out of
 * memory).
 */
#ifndef MPC_CODEC_H
#define MPC_CODEC_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../types/types.h"
#include "mpc_json.h"

/* ----- the formats each endpoint takes: one definition each ------------------------------------------- */

#define MPC_DT(x) (1u << (x))
/* Weights: every storage format the weight model knows. */
#define MPC_WEIGHT_DTYPES                                                                                         \
	(MPC_DT(MP_DTYPE_FP32) | MPC_DT(MP_DTYPE_BF16) | MPC_DT(MP_DTYPE_FP16) | MPC_DT(MP_DTYPE_FP8_E4M3) |      \
	 MPC_DT(MP_DTYPE_FP8_E5M2) | MPC_DT(MP_DTYPE_INT8) | MPC_DT(MP_DTYPE_INT4) | MPC_DT(MP_DTYPE_NF4) |       \
	 MPC_DT(MP_DTYPE_Q8_0) | MPC_DT(MP_DTYPE_Q4_0) | MPC_DT(MP_DTYPE_Q4_K) | MPC_DT(MP_DTYPE_Q5_K) |          \
	 MPC_DT(MP_DTYPE_Q6_K) | MPC_DT(MP_DTYPE_MXFP4) | MPC_DT(MP_DTYPE_NVFP4))
/* KV cache: the float types, fp8 (vLLM), and llama.cpp's q8_0 and q4_0 cache types. */
#define MPC_KV_DTYPES                                                                                             \
	(MPC_DT(MP_DTYPE_FP32) | MPC_DT(MP_DTYPE_BF16) | MPC_DT(MP_DTYPE_FP16) | MPC_DT(MP_DTYPE_FP8_E4M3) |      \
	 MPC_DT(MP_DTYPE_FP8_E5M2) | MPC_DT(MP_DTYPE_Q8_0) | MPC_DT(MP_DTYPE_Q4_0))
/* Activations and logits (compute_dtype), and the norms format. */
#define MPC_COMPUTE_DTYPES (MPC_DT(MP_DTYPE_FP32) | MPC_DT(MP_DTYPE_BF16) | MPC_DT(MP_DTYPE_FP16))
/* Any data type (roofline operations). */
#define MPC_ALL_DTYPES (0xffffffffu & ~1u)

/* A KV-cache format by name: the MPC_KV_DTYPES names in any case and the aliases of mp_dtype_from_alias ("fp8" is
 * vLLM's fp8_e4m3). Errors: MP_EINVAL naming field with the list. */
mp_status mpc_kv_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err);
/* As mpc_kv_dtype, also taking "auto" (vLLM's default: the compute dtype) when is_auto is not NULL: then *is_auto
 * is set and *out is MP_DTYPE_INVALID, for the service to resolve. */
/* The names mpc_kv_dtype_ex / mpc_weight_dtype_ex take, as their errors and the CLI's help list them ("auto" and
 * the quantizers' names where the caller takes them), into out (len bytes). */
void mpc_kv_dtype_allowed(bool with_auto, char *out, size_t len);
void mpc_weight_dtype_allowed(bool with_auto, bool with_schemes, char *out, size_t len);
mp_status mpc_kv_dtype_ex(const char *name, const char *field, mp_dtype *out, bool *is_auto, mp_error *err);
/* A weight format by name (MPC_WEIGHT_DTYPES, any case, aliases). Errors: MP_EINVAL naming field with the list. */
mp_status mpc_weight_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err);
/* As mpc_weight_dtype, also taking "gptq" and "awq" (int4 in that scheme: *int4_scheme gets the mp_int4_scheme,
 * else -1) when int4_scheme is not NULL, and "auto" (the config's quantization_config or dtype, resolved by the
 * service) when is_auto is not NULL. */
mp_status mpc_weight_dtype_ex(const char *name, const char *field, mp_dtype *out, int *int4_scheme, bool *is_auto,
			      mp_error *err);

/* ----- problems (RFC 9457) ----------------------------------------------------------------------------- */

/* The problem type's last word for a status ("invalid-value", "not-found", ...). */
const char *mpc_problem_slug(mp_status st);
/* The problem+json document for an error answered with HTTP status http (title from http; type from st, or
 * "method-not-allowed" / "unsupported-media-type" for 405 / 415). Echoed text is made well-formed UTF-8. */
void mpc_problem_write(mpc_out *w, int http, mp_status st, const mp_error *err);

/* ----- models and devices ------------------------------------------------------------------------------ */

/*
 * A request's "model" member (v, NULL when absent) at pointer ("/model", "/jobs/3/inference/model"): a stored
 * id, {"hf_config": {...}} (read by model/), {"architecture": {...}} (with an optional hf_config naming its
 * model_type and giving its training details), or {"parameters": N}. required: absence is an error (else kind
 * NONE). An inline model is decoded onto the heap (out->arch): the ref's owner frees it with
 * mpc_model_ref_release (the request releases below do it for theirs). Errors: MP_EINVAL / MP_EUNSUPPORTED naming
 * the field, MP_ENOMEM.
 */
mp_status mpc_model_ref_decode(const cJSON *v, const char *pointer, bool required, mps_model_ref *out, mp_error *err);
/* Frees an inline ref's model (r->arch NULL after; any other kind, or NULL, is a no-op). */
void mpc_model_ref_release(mps_model_ref *r);
/* The models a decoded request owns, freed (the request itself is the caller's): after mpc_inference_decode,
 * mpc_training_decode, mpc_roofline_decode and mpc_engine_check_decode, whether they succeeded or not. */
void mpc_inference_request_release(mps_inference_request *rq);
void mpc_training_request_release(mps_training_request *rq);
void mpc_roofline_request_release(mps_roofline_request *rq);
void mpc_engine_check_request_release(mps_engine_check_request *rq);
/* Whether s is a Hugging Face repo id: "name" or "owner/name", each part [A-Za-z0-9][A-Za-z0-9._-]*, at most 96
 * bytes (a model given by one is looked up among the presets' repo ids). */
bool mpc_repo_id_ok(const char *s);

/* Base64 (RFC 4648, OpenSSL's decoder: line breaks allowed) into *out (malloc'd, the caller frees it), *out_len
 * bytes. Errors: MP_EINVAL naming field, MP_ENOMEM. Worked example (tests/test_checkpoint.c): "R0dVRgM=" -> "GGUF\x03". */
mp_status mpc_base64_decode(const char *text, size_t len, const char *field, uint8_t **out, size_t *out_len,
			    mp_error *err);

/* The model block of a plan: id, model_type, parameters and their breakdown, as member `key` (mpc_json.h: mpc_out). */
void mpc_model_write(mpc_out *w, const char *key, const mps_model *m);
/* The API's stored-model document, as member key: id, model_type, parameters, source, timestamps, the Hugging Face
 * repo ids it stands for (hf_repo_ids: NULL-terminated, NULL when none), hf_config. */
void mpc_stored_model_write(mpc_out *w, const char *key, const mp_store_model *m, const char *const *hf_repo_ids);
/*
 * A model document ({"hf_config": {...}} plus read-only members, which are ignored) as a model to store with id
 * `id`. in->config_json is heap text owned by *owned (free it). Errors: MP_EINVAL / MP_EUNSUPPORTED naming the
 * field under pointer, MP_ENOMEM.
 */
mp_status mpc_stored_model_decode(const cJSON *doc, const char *pointer, const char *id, mps_model_input *in,
				  char **owned, mp_error *err);

/* The API's device document, as member key (every profile field, null where unknown). */
void mpc_device_write(mpc_out *w, const char *key, const mp_store_device *d);
/*
 * A device document (a PUT body, an export entry, a preset) into *out with id `id` (NULL: the document's own
 * "id", which must then be valid). Null members mean absent; read-only members (created_at, updated_at) are
 * ignored; "id", when present, must equal id. source defaults to `default_source` ("user" for the API). The one
 * range table of every device field. Errors: MP_EINVAL naming the field under pointer.
 */
mp_status mpc_device_decode(const cJSON *doc, const char *pointer, const char *id, const char *default_source,
			    mp_store_device *out, mp_error *err);
/*
 * A request's "device" member at pointer: a stored id, or an inline profile (the same table as a stored one,
 * with only memory_bandwidth_bytes_per_second and peak_flops_per_second required, and the roofline's extras:
 * vector_flops_per_second, l2/shared-memory bandwidth, memory_latency_seconds or _cycles). NULL: not given.
 */
mp_status mpc_device_ref_decode(const cJSON *v, const char *pointer, mps_device_ref *out, mp_error *err);
/* Plans and fits judge memory: an inline profile there must give memory_bytes or usable_memory_bytes (a stored id
 * or no device passes). Errors: MP_EINVAL naming "<pointer>/memory_bytes". */
mp_status mpc_device_ref_require_memory(const mps_device_ref *d, mp_error *err);
/* A list of device kinds ("gpu", "gpu,accelerator", "all") into a MP_STORE_KIND_* mask. Errors: MP_EINVAL naming
 * field with the names allowed. */
mp_status mpc_kinds(const char *list, const char *field, unsigned *mask, mp_error *err);

/* Applies a JSON merge patch (RFC 7396) to target in place: null members delete, objects merge, anything else
 * replaces. Errors: MP_EINVAL when patch is not an object, MP_ENOMEM. */
mp_status mpc_merge_patch(cJSON *target, const cJSON *patch, mp_error *err);

/* ----- plans ---------------------------------------------------------------------------------------------- */

/* An inference body's engine_options (v, NULL when absent) for engine, under pointer (the body's): llama.cpp's and
 * Ollama's launch knobs (mpc_llamacpp.c). Every "not given" value is left for the service to resolve (-1, 0,
 * MP_GGML_TYPE_COUNT); a knob Ollama has no setting for is refused with engine ollama, and engine_options with
 * any other engine. Errors: MP_EINVAL naming each bad member (mp_problems), MP_ENOMEM. */
mp_status mpc_llamacpp_opts_decode(const cJSON *v, const char *pointer, mp_engine engine, mps_llamacpp_opts *out,
				   mp_error *err);
/* The engine block of a llama.cpp or Ollama plan as member key (p->llama set). */
void mpc_llamacpp_block_write(mpc_out *w, const char *key, const mps_inference_plan *p);
/* The command an engine block gives, for people and scripts: vLLM, SGLang and TensorRT-LLM's launch line
 * (mpc_engine_command); llama.cpp's; Ollama's environment and `ollama serve`. Heap text (free it), NULL when the
 * plan names no engine or memory ran out. */
char *mpc_plan_engine_command(const mps_inference_plan *p);

/* llama.cpp's start-up log (and Ollama's around it, engine ollama) into *r (mpc_llamacpp_log.c): the buffer lines of each
 * device, the caches' size lines, the offloaded layers, the context; Ollama's llama-server command and default
 * context. pointer names the text in errors. Errors: MP_EINVAL when no line is one it reads (naming what it looks
 * for). */
mp_status mpc_llama_report_parse(mp_engine engine, const char *text, const char *pointer, mps_llama_report *r,
				 mp_error *err);
/* Whether an engine-check body names engine llamacpp or ollama (read by mpc_llama_check_decode, not
 * mpc_engine_check_decode). */
bool mpc_llama_check_engine(const cJSON *body);
/* POST /v1/engine-check for llamacpp / ollama: {engine, log, plan}; the plan decoded as naming the engine. The
 * request's model is released with mpc_inference_request_release(&out->plan). Errors: every problem at once. */
mp_status mpc_llama_check_decode(const cJSON *body, mps_llama_check_request *out, mp_error *err);
void mpc_llama_check_write(mpc_out *w, const mps_llama_check_request *rq, const mps_llama_check *c);

/* POST /v1/plan/inference bodies (and the inference jobs of /v1/fit, a calibration's fit_plan) at pointer.
 * allow_device: a "device" member is taken (fit jobs name none). */
mp_status mpc_inference_decode(const cJSON *body, const char *pointer, bool allow_device, mps_inference_request *out,
			       mp_error *err);
/*
 * The answer document of POST /v1/plan/inference, written as text straight into w (mpc_json.h: mpc_out; no tree: this
 * is the per-request path); mpc_inference_plan_print returns it as heap text (free(); NULL when out of memory).
 * Borrowed: rq, p.
 */
void mpc_inference_plan_write(mpc_out *w, const mps_inference_request *rq, const mps_inference_plan *p);
/* The same answer as member `name` of the object w is writing (the engine checks' "plan"); an encoder that runs out
 * of memory marks w failed. */
void mpc_inference_plan_member(mpc_out *w, const char *name, const mps_inference_request *rq,
			       const mps_inference_plan *p);
char *mpc_inference_plan_print(const mps_inference_request *rq, const mps_inference_plan *p, size_t *len);
/* The defaults of an inference job before any field is read: what every decoder of one (the plan body, fit jobs, a
 * calibration's fit_plan, the capacity query) starts from: fused attention, double-quantised nf4, weight and KV
 * dtypes "auto". Keeps j->pointer. */
void mpc_inference_job_init(mps_inference_job *j);
/* An inference job's weight_dtype and kv_cache_dtype as given (NULL: absent = "auto"), into j (req dtypes, the
 * *_auto flags, an int4 scheme from "gptq"/"awq"); errors name weight_field / kv_field. The plan body, the fit jobs
 * and the capacity query all read them here. */
mp_status mpc_inference_dtypes(const char *weight, const char *kv, const char *weight_field, const char *kv_field,
			       mps_inference_job *j, mp_error *err);
/* A plan's warnings as member "warnings": an array of strings (always an array), the last saying how many were
 * left out when some were (types.h). */
void mpc_warnings_write(mpc_out *w, const mps_warnings *warnings);
/* The long explanation of a defaulted prefill chunk, once per answer (its warning is one short sentence). */
#define MPC_PREFILL_NOTE                                                                                               \
	"prefill chunk: without max_num_batched_tokens the prefill runs in forwards of the engine's default for the "   \
	"device (no engine named: vLLM's), capped at batch_size x sequence_length: vLLM 0.11 8192 tokens on a GPU of "   \
	"70 GiB or more that is not an A100, else 2048 (vllm/engine/arg_utils.py get_batch_defaults); SGLang by its "    \
	"memory (server_args.py _handle_gpu_memory_settings); TensorRT-LLM max_num_tokens. activations_bytes is one "  \
	"forward's; give max_num_batched_tokens to plan another chunk, chunked_prefill false for vLLM's rule without "    \
	"chunking."
/* The members of a plan's fit block (inside the object the caller opens): the device, the verdict, the capacity and
 * its source, headroom, binding term, the largest batch and sequence, the budget and reserve, and min_gpus (null
 * when 0: no count fits). The inference and training plans' one encoder of it. */
void mpc_fit_members_write(mpc_out *w, const mp_fit *fit, const mp_store_device *dev, uint64_t min_gpus);

/* The engine block of an inference plan that names an engine (p->have_engine), as member key: name, source,
 * command, args, defaults, predicted (with the engine's log lines in its own formats; null without a device),
 * notes. */
void mpc_engine_block_write(mpc_out *w, const char *key, const mps_inference_job *j, const mps_inference_plan *p);
/* The block's command line, one shell-quoted line ("vllm serve meta-llama/Meta-Llama-3-8B --tensor-parallel-size
 * 1 ..."). Heap (free()); NULL when out of memory. */
char *mpc_engine_command(const mps_engine_block *b);

/*
 * Reads the figures an engine printed from text (a start-up log, or with metrics a Prometheus exposition holding
 * vllm:cache_config_info) into *r: version-tolerant patterns per engine (vLLM V0 and V1, SGLang, TensorRT-LLM's
 * PyTorch backend and C++ runtime); lines it does not know are skipped. Errors: MP_EINVAL naming pointer when no
 * line is one it knows (the message lists what it looks for).
 */
mp_status mpc_engine_report_parse(mp_engine engine, const char *text, bool metrics, const char *pointer,
				  mps_engine_report *r, mp_error *err);
/* POST /v1/engine-check bodies: engine, log or metrics (one of them), plan (an inference plan request). */
mp_status mpc_engine_check_decode(const cJSON *body, mps_engine_check_request *out, mp_error *err);
/* The answer of POST /v1/engine-check: each figure beside the prediction and what the log implies, a summary, the
 * plan (the inference plan's own document) and notes. */
void mpc_engine_check_write(mpc_out *w, const mps_engine_check_request *rq, const mps_engine_check *c);

mp_status mpc_training_decode(const cJSON *body, const char *pointer, bool allow_device, mps_training_request *out,
			      mp_error *err);
/* The answer document of POST /v1/plan/training, into w. Borrowed: rq, p. */
void mpc_training_plan_write(mpc_out *w, const mps_training_request *rq, const mps_training_plan *p);
char *mpc_training_plan_print(const mps_training_request *rq, const mps_training_plan *p, size_t *len);

/* ----- fit ------------------------------------------------------------------------------------------------ */

/* POST /v1/fit. *out's arrays are heap (mpc_fit_request_free). */
mp_status mpc_fit_decode(const cJSON *body, mps_fit_request *out, mp_error *err);
void mpc_fit_request_free(mps_fit_request *rq);

/*
 * The fit answer written as text as it is computed (mpc_json.h: mpc_out; no tree): the head at the sink's begin, each
 * job's object as the service gives its rows. Whole (mpc_fit_writer_finish after mps_fit) or streamed: after each
 * job mpc_fit_writer_take hands over the text written so far, and mpc_fit_writer_end writes the tail.
 */
typedef struct mpc_fit_writer mpc_fit_writer;
mpc_fit_writer *mpc_fit_writer_new(const mps_fit_request *rq);
const mps_fit_sink *mpc_fit_sink(void);	/* pass the writer as ctx */
/* The text written since the last take (heap, free(); *len bytes), NULL with *len 0 when none or out of memory
 * (mpc_fit_writer_failed tells which). */
char *mpc_fit_writer_take(mpc_fit_writer *w, size_t *len);
bool mpc_fit_writer_failed(const mpc_fit_writer *w);
/* Writes the tail after the last job (the note, the closing brace). */
void mpc_fit_writer_end(mpc_fit_writer *w);
/* The whole text (heap, free()) once mps_fit returned MP_OK; frees the writer. NULL when out of memory. */
char *mpc_fit_writer_finish(mpc_fit_writer *w);
void mpc_fit_writer_free(mpc_fit_writer *w);

/* ----- capacity --------------------------------------------------------------------------------------------- */

/* A query string: the value of one argument, or NULL when absent. */
typedef const char *(*mpc_query_fn)(void *ctx, const char *name);

/* GET /v1/capacity's arguments (model, sequence_length, weight_dtype, kv_cache_dtype, tensor_parallel_size,
 * num_gpus, vendor, source, kind, format) into the same inference job the plan body would give (batch_size 1,
 * mpc_inference_job_init's defaults). *text says whether format=text was asked for. Every problem is recorded.
 * Errors: MP_EINVAL naming "?<name>". */
mp_status mpc_capacity_decode(mpc_query_fn get, void *ctx, mps_capacity_request *out, bool *text, mp_error *err);

/* Collects capacity rows (mps_capacity's callback, ctx = the collector) as they come: each row's JSON written at
 * once, and what the text for people shows of it. Borrowed: rq (must outlive the collector). */
typedef struct mpc_capacity_doc mpc_capacity_doc;
mpc_capacity_doc *mpc_capacity_doc_new(const mps_capacity_request *rq);
mp_status mpc_capacity_row(void *ctx, const mps_capacity_row *row);
/* The doc's next_cursor buffer (MP_STORE_ID_MAX bytes) for mps_capacity to fill; printed as next_cursor (null when ""). */
char *mpc_capacity_doc_cursor(mpc_capacity_doc *c);
/* The answer once the model is known: the JSON document (heap text, *len bytes; once per collector, it takes the
 * rows' text), or the same answer as an aligned table for people (GB/GiB labelled). NULL when out of memory. */
char *mpc_capacity_json(mpc_capacity_doc *c, const mps_model *m, size_t *len);
char *mpc_capacity_text(const mpc_capacity_doc *c, const mps_model *m);
void mpc_capacity_doc_free(mpc_capacity_doc *c);

/* ----- roofline --------------------------------------------------------------------------------------------- */

/* POST /v1/roofline bodies. */
mp_status mpc_roofline_decode(const cJSON *body, mps_roofline_request *out, mp_error *err);
/* A compact operation spec ("matmul:m=1,k=4096,n=4096,dtype=bf16"; numbers may use exponents when integral),
 * as the SVG route's ?op= arguments and the CLI's arguments give them, into *op, errors naming field ("?op",
 * "argv[3]"). */
mp_status mpc_op_spec_decode(const char *spec, const char *field, mps_roofline_op *op, mp_error *err);
/* The same spec as the JSON operation object POST /v1/roofline takes (caller owns it). */
mp_status mpc_op_spec_json(const char *spec, const char *field, cJSON **out, mp_error *err);
/* The answer of POST /v1/roofline: the device's roofs, the ridge, each operation on its roof, the warnings, the
 * transformer's steps and notes. */
void mpc_roofline_write(mpc_out *w, const mps_roofline_request *rq, const mps_roofline_result *r);
/* The transformer analysis from query arguments (the SVG route's ?model=ID&batch_size=&context_tokens=
 * &prompt_tokens=&weight_dtype=&kv_cache_dtype=), decoded by the table POST /v1/roofline's transformer object uses.
 * Errors: MP_EINVAL naming "?<name>", MP_ENOMEM. */
mp_status mpc_transformer_query_decode(mpc_query_fn get, void *ctx, mps_roofline_transformer *out, mp_error *err);

/* A roofline chart's contents, from a result: the operations and, with a transformer, its decode and prefill
 * operations as points; one compute roof for each (data type, unit) peak among them plus the ridge's. */
/* room for every point and roof a result can give: its operations and steps; one roof per data type and unit, and
 * the ridge's */
#define MPC_CHART_MAX_POINTS (MPS_ROOFLINE_MAX_OPS + 2 * MP_STEP_MAX_OPS)
#define MPC_CHART_MAX_ROOFS (2 * MP_DTYPE_COUNT + 1)
typedef struct mpc_chart_point {
	char label[64];
	double intensity;  /* FLOP/byte */
	double attainable; /* FLOP/s */
	bool compute_bound;
	size_t roof;       /* index into roofs: the compute roof that caps it */
} mpc_chart_point;

typedef struct mpc_chart_roof {
	char label[48];               /* "bf16 matrix", "fp8_e4m3 matrix", "fp32 vector"; data types sharing a peak
	                                 are listed together ("bf16, fp16 matrix") */
	double flops_per_second;
	bool vector;
} mpc_chart_roof;

typedef struct mpc_chart {
	char title[160];
	double bandwidth;    /* DRAM, bytes/s */
	double peak;         /* matrix peak of the ridge dtype, FLOP/s (roofs[0]) */
	char peak_label[32]; /* "bf16 tensor" */
	double vector_peak;  /* 0 = none */
	double l2_bandwidth; /* 0 = none drawn */
	size_t nroofs;       /* roofs[0] is the ridge's */
	mpc_chart_roof roofs[MPC_CHART_MAX_ROOFS];
	size_t npoints;
	mpc_chart_point points[MPC_CHART_MAX_POINTS];
	/* the model's steps the points come from (POST /v1/roofline's transformer, as analysed): the SVG carries them in
	 * data-* attributes of <g id="steps">, so a page can check its chart against the plan it drew it for */
	bool have_steps;
	char weight_dtype[16], kv_cache_dtype[16];
	uint64_t batch_size, context_tokens, prompt_tokens, tensor_parallel_size;
	double decode_step_seconds, prefill_seconds;
} mpc_chart;

void mpc_chart_from_result(const mps_roofline_request *rq, const mps_roofline_result *r, mpc_chart *c);
/*
 * An SVG chart: log-log axes (decades labelled), the bandwidth ceiling and one compute roof per chart roof, the
 * ridge (a marked point with id "ridge"), each operation as a point (class "op"; blue memory-bound, red
 * compute-bound) with its label placed where it overlaps no other label or point and stays inside the plot (a
 * leader line when it sits away from its point); a label with no room is replaced by a number listed in a table
 * under the plot, and points drawn on the same spot share one label. A legend beside the plot explains the lines
 * and the colours. Every element carries its data in data-* attributes; every text element placed in the plot has
 * class "label". Caller frees. NULL when out of memory.
 */
char *mpc_roofline_svg(const mpc_chart *c);
/* A text log-log chart for terminals: axes labelled, the roofs, the ridge marked, points numbered (points in one
 * cell marked '*' and listed together), a legend with every label in full. Caller frees. */
char *mpc_roofline_text(const mpc_chart *c);
/* The width in pixels a text of font-size px is given by the chart's layout (a conservative estimate for
 * sans-serif fonts: 0.62 em per character), which tests use to check that no two labels overlap. */
double mpc_svg_text_width(const char *utf8, double px);
/* Escapes &, <, >, " and ' for XML text and attribute values into out (always NUL-terminated; truncates at
 * a character boundary). Returns the length written. */
size_t mpc_xml_escape(const char *in, char *out, size_t len);
/* The roofline table the CLI prints (the ridge, one row per operation, then the transformer's steps). Caller
 * frees. */
char *mpc_roofline_table_text(const mps_roofline_request *rq, const mps_roofline_result *r);

/* ----- store documents -------------------------------------------------------------------------------------- */

/* A page of a listing, written as its rows come: {"items": [...], "next_cursor": the last id when more follow, else
 * null}. mpc_page_add_device and mpc_page_add_model are mps_device_find's and mps_model_find's callbacks (ctx = the
 * page); mpc_page_finish returns the text (heap; NULL when out of memory) and releases the page. */
typedef struct mpc_page {
	mpc_out w;
	char last[MP_STORE_ID_MAX];
} mpc_page;
void mpc_page_begin(mpc_page *p);
mp_status mpc_page_add_device(const mp_store_device *d, void *page);
mp_status mpc_page_add_model(const mp_store_model *m, const char *const *hf_repo_ids, void *page);
char *mpc_page_finish(mpc_page *p, bool more, size_t *len);
/* GET /v1/health. */
void mpc_health_write(mpc_out *w, const mps_health *h);

/* The export document, {"format": "memplan-export", "version": 1, "schema_version", "devices": [...all...],
 * "models": [...user models: id + hf_config...]}, written as mps_export gives the rows to its two callbacks (ctx =
 * the export, which mpc_export_finish turns into its text: heap, NULL when out of memory). */
typedef struct mpc_export {
	mpc_out w;
	bool models;			/* the models' list is open */
} mpc_export;
void mpc_export_begin(mpc_export *e, int schema_version);
mp_status mpc_export_add_device(const mp_store_device *d, void *export_doc);
mp_status mpc_export_add_model(const mp_store_model *m, const char *const *hf_repo_ids, void *export_doc);
char *mpc_export_finish(mpc_export *e, size_t *len);
/* An export document as an import (mps_import_run). *out's arrays and texts are heap (mpc_import_free). Errors:
 * MP_EINVAL naming the field ("/devices/3/memory_bytes"), MP_ENOMEM. */
mp_status mpc_import_decode(const cJSON *doc, mps_import *out, mp_error *err);
void mpc_import_free(mps_import *im);

/* ----- a model's tensors (mpc_tensors.c) ------------------------------------------------------------------- */

/* A plan request's "include" (absent, null or an array of "tensors"): *tensors when it asks for the tensor list.
 * Errors: MP_EINVAL naming field with what is allowed. */
mp_status mpc_include_decode(const cJSON *v, const char *field, bool *tensors, mp_error *err);
/* The rows of l as array member key: {name, shape, layers, class, format_class, dtype, parameters, bytes[, counted:
 * false]} each. */
void mpc_tensor_rows_write(mpc_out *w, const char *key, const mps_tensor_list *l);
/* l as object member key (a plan's "tensors"): weight_dtype and its _from, weight_layout, tensor_parallel_size,
 * parameters, bytes_per_gpu, layout_buffers_bytes, tensors. */
void mpc_tensors_write(mpc_out *w, const char *key, const mps_tensor_list *l);
/* GET /v1/models/{id}/tensors: {"model": model_id (null when NULL), the members above}. Heap; NULL when out of
 * memory. */
char *mpc_model_tensors_print(const char *model_id, const mps_tensor_list *l, size_t *len);
/* The same for people: a heading (tensors, parameters, bytes per GPU in GB and GiB, the format and why), then one
 * line per tensor (name, shape, layers, class, dtype, bytes per GPU). Heap; NULL when out of memory. */
char *mpc_model_tensors_text(const char *model, const mps_tensor_list *l);

/* ----- numbers for people (mpc_human.c) ----------------------------------------------------------------------- */

/* Each writes into buf (always NUL-terminated, cut at len) and returns buf. Worked examples (tests/test_codec.c):
 *   mpc_fmt_count(8030261248)        "8,030,261,248"     (exact integers: thousands separators)
 *   mpc_fmt_sig3(308.5)              "309"               (3 significant digits; >= 1000 grouped: "61,300")
 *   mpc_fmt_bytes(17638465536)       "17.6 GB (16.4 GiB)" (GB = 1e9, GiB = 2^30; "537 MB (512 MiB)"; "512 B")
 *   mpc_fmt_seconds(0.003241)        "3.24 ms"           (ns, us, ms, s)
 *   mpc_fmt_si(989.4e12, "FLOP/s")   "989 TFLOP/s"       (k M G T P E; below 1: "0.125 FLOP/B")
 *   mpc_fmt_percent(0.9106)          "91.1%"
 */
char *mpc_fmt_count(char *buf, size_t len, double v);
char *mpc_fmt_sig3(char *buf, size_t len, double v);
char *mpc_fmt_bytes(char *buf, size_t len, double bytes);
char *mpc_fmt_seconds(char *buf, size_t len, double seconds);
char *mpc_fmt_si(char *buf, size_t len, double v, const char *unit);
char *mpc_fmt_percent(char *buf, size_t len, double fraction);

/* ----- text for people (mpc_text.c) ------------------------------------------------------------------------------ */

/* Every member of a document, indented, figures by the unit their name ends in: "_bytes" as "16,060,522,496 B
 * (16.1 GB, 15.0 GiB)", "_seconds", "_flops_per_second", "_bytes_per_second" and "_flops_per_byte" to 3 significant
 * digits with the unit, whole numbers with thousands separators, lists of strings as bullets. Members it has no
 * rule for are printed as they are: a new member never breaks it. Caller frees; NULL when out of memory. */
char *mpc_doc_text(const cJSON *doc);

/*
 * A plan for people (POST /v1/plan/inference or /v1/plan/training, ?format=text), from the plan's structs, the
 * answer first: fits or does not fit, the total against the budget (GB and GiB), the headroom, the binding term,
 * the largest batch, the longest sequence, the smallest GPU count, the performance floors, the engine's launch
 * and the warnings; then the memory terms as a table and the request as planned; with `verbose` every member of
 * the JSON answer (mpc_doc_text). `hint` (may be NULL) ends the text ("--verbose prints every figure"). Caller
 * frees; NULL when out of memory. Borrowed: rq, p.
 */
char *mpc_inference_plan_text(const mps_inference_request *rq, const mps_inference_plan *p, bool verbose,
			      const char *hint);
char *mpc_training_plan_text(const mps_training_request *rq, const mps_training_plan *p, bool verbose,
			     const char *hint);

/* The fields of a request body for people, one entry each, from the decoders' own tables (name, required, what it
 * means, the allowed values or range): kind "inference" or "training" (a plan body, as --name value), "roofline"
 * (each operation kind as KIND:key=value,...), "transformer" (POST /v1/roofline's transformer object). Caller frees;
 * NULL when out of memory or for an unknown kind (an empty text). */
char *mpc_request_fields_text(const char *kind);

/* POST /v1/fit as text: per job, the verdict (how many devices it fits, the fewest GPUs and where), then a table of
 * devices x GPU counts (fits or not, total per GPU). Written as mps_fit computes it, like mpc_fit_writer. */
typedef struct mpc_fit_text mpc_fit_text;
mpc_fit_text *mpc_fit_text_new(const mps_fit_request *rq);
const mps_fit_sink *mpc_fit_text_sink(void); /* pass the writer as ctx */
/* The whole text (heap, free()) once mps_fit returned MP_OK; frees the writer. NULL when out of memory. */
char *mpc_fit_text_finish(mpc_fit_text *w);
void mpc_fit_text_free(mpc_fit_text *w);

#endif /* MPC_CODEC_H */
