/*
 * types.h: the request and result structs of memplan's use cases: the data model. codec/ decodes requests into them
 * and renders results from them (JSON, text, SVG); service/ fills the results; daemon/ and cli/ carry them from one
 * to the other. Plain values over the planner's structs and the store's rows (db/rows.h), and the names of the enums
 * the API shows (types.c): nothing here reads a file or the store, or computes a figure.
 *
 * Ownership: requests are borrowed by whoever reads them; results are caller-owned structs that service/ fills (the
 * ones holding heap pointers say how to free them). Errors name a request field as a JSON pointer built from the
 * request's `pointer` member, so a job nested in a batch is named where it sits ("/jobs/3/inference/batch_size").
 */
#ifndef MPS_TYPES_H
#define MPS_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../db/rows.h"
#include "../model/checkpoint.h"
#include "../planner/memplan.h"

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

/* ----- models --------------------------------------------------------------------------------------------- */

typedef enum mps_model_kind {
	MPS_MODEL_NONE = 0,	/* the request named none */
	MPS_MODEL_STORED,	/* `id` names a stored model */
	MPS_MODEL_INLINE,	/* `arch` holds a decoded hf_config or architecture object */
	MPS_MODEL_BARE,		/* only `parameters` (weights and optimizer states only) */
	MPS_MODEL_HF_REPO,	/* {"hf_repo": "org/name", "revision": ...}: mps_model_ref_fetch finds it (the local
				   Hugging Face cache, the Hub when the daemon may reach one, a preset) and makes the ref
				   INLINE (with its checkpoint) or STORED */
} mps_model_kind;

/* A request's "model" member, decoded (codec/mpc_model.c). */
typedef struct mps_model_ref {
	mps_model_kind kind;
	char id[MP_STORE_ID_MAX];
	char repo_id[128];		/* STORED by a Hugging Face repo id ("meta-llama/Llama-3.1-8B"), id "": the
					   service resolves it to the preset it stands for (mps_model_repo_ids) */
	/* INLINE: the decoded model (its json_pointer names where its keys sit), on the heap: owned by the request the
	 * ref belongs to (mpc_model_ref_decode allocates it, mpc_model_ref_release frees it); a copy of the ref
	 * borrows it. Kept out of the ref so that requests stay small (a model with its tensors is about 10 KB). */
	mp_model *arch;
	/* INLINE from a checkpoint's headers (gguf_header, safetensors_headers, a Hugging Face repo): the file's own
	 * tensors; heap-owned by the request as arch is (mpc_model_ref_release frees it); NULL otherwise */
	mpm_checkpoint *ckpt;
	uint64_t parameters;		/* BARE */
	char revision[96];		/* HF_REPO: a branch, tag or commit ("" = main) */
	char source[160];		/* INLINE, fetched: where from ("hf_cache:org/name@<commit>", "hub:...") */
	char pointer[64];		/* where the member sits: "/model", "/jobs/3/training/model" */
} mps_model_ref;

/* A model as the plans use it. */
typedef struct mps_model {
	char id[MP_STORE_ID_MAX];	/* stored id, or "" for an inline model */
	bool architecture_known;	/* false for {"parameters": N} */
	mp_param_count params;
	const mpm_checkpoint *ckpt;	/* the checkpoint the model was read from (borrowed from its ref), NULL none */
	char source[160];		/* where a fetched model came from: "hf_cache:org/name@<commit>", "hub:...", "" */
	mp_model arch;			/* last: mps_model_copy stops after the tensors in use (mp_model_copy) */
} mps_model;

/* ----- devices ------------------------------------------------------------------------------------------- */

/* A request's "device" member, decoded (codec/mpc_device.c): a stored id or an inline profile. */
typedef struct mps_device_ref {
	bool given;			/* false: the request names no device */
	bool inline_profile;		/* true: `profile` holds it (its id may be "") */
	char id[MP_STORE_ID_MAX];	/* the id asked for, lower-cased ("" when what was asked is no id: an alias) */
	char asked[MP_STORE_ALIAS_MAX];	/* the string as given: an id in any case or a name it goes by ("NVIDIA H100
					 * 80GB HBM3", "nvidia-h100-80gb"), found by its alias key when no id matches */
	mp_store_device profile;	/* set only when inline_profile (the decoder leaves it alone otherwise) */
	char pointer[64];		/* where the member sits: "/device" */
} mps_device_ref;

/* How answers name a device: its id, or for an inline profile without one the name it was given ("RTX A6000 48GB"),
 * else "the inline profile" (types.c). Borrowed from d. */
const char *mps_device_label(const mp_store_device *d);

/* ----- inference plan ------------------------------------------------------------------------------------ */

/* The serving engine a request names, and the engine knobs it sets (service/mps_engine.c resolves the rest). */
typedef struct mps_engine_opts {
	mp_engine engine;		/* MP_ENGINE_NONE: no engine block; the defaults follow vLLM's */
	int chunked_prefill;		/* 0: not given (on, as every engine's default; a zeroed job is that), -1 off, 1 on */
	bool utilization_given;		/* gpu_memory_utilization came from the request */
	bool block_size_given;		/* kv_block_size came from the request */
	double mem_fraction_static;	/* SGLang's knob; 0 = its default for the device */
	double free_gpu_memory_fraction;	/* TensorRT-LLM's knob; 0 = its default (0.9) */
	char served_model[256];		/* the model argument of the command line; "" = the preset's repository */
	const mp_engine_version *version;	/* the release line (engine_version); NULL = the engine's newest */
	const char *version_from;	/* where version came from when not the request ("log": the engine check's
					 * log format); NULL = "request", or "default" without a version */
	bool enforce_eager;		/* no CUDA graphs (vLLM --enforce-eager, SGLang --disable-cuda-graph) */
	bool observed_terms_off;	/* "observed_terms": false: the engine block keeps its model's terms */
} mps_engine_opts;

/* llama.cpp's and Ollama's launch knobs: the request's engine_options (codec/mpc_llamacpp.c decodes them; service/
 * llamacpp.c resolves what is left out). Each "not given" value is the engine's own default. */
typedef enum mps_llamacpp_program {
	MPS_LLAMACPP_SERVER = 0,	/* llama-server (the default) */
	MPS_LLAMACPP_COMPLETION,	/* llama-completion: one sequence, -np 1 */
	MPS_LLAMACPP_CLI,		/* llama-cli (the chat front end of the same common arguments) */
	MPS_LLAMACPP_PROGRAM_COUNT
} mps_llamacpp_program;

typedef struct mps_llamacpp_opts {
	bool given;			/* engine_options was in the request */
	mps_llamacpp_program program;
	int32_t gpu_layers;		/* -ngl (Ollama num_gpu); -1: the largest that fits (every layer without a device) */
	uint32_t cache_type_k, cache_type_v;	/* ggml types; MP_GGML_TYPE_COUNT: from kv_cache_dtype, else f16 */
	int flash_attention;		/* -1 auto (the default), 0 off, 1 on */
	uint32_t n_tensor_split;	/* -ts proportions given (0: by each GPU's memory) */
	double tensor_split[MP_LLAMACPP_MAX_DEVICES];
	uint32_t n_batch, n_ubatch;	/* -b, -ub (Ollama num_batch: both); 0 = the default */
	int32_t n_cpu_moe;		/* --n-cpu-moe N; -1 not given */
	bool cpu_moe;			/* --cpu-moe: every layer's experts on the host */
	bool no_kv_offload;		/* -nkvo */
	bool no_mmap;			/* --load-mode none (Ollama use_mmap false) */
	bool swa_full;			/* --swa-full */
	bool no_repack;			/* --no-repack: the host's weights stay in the mapped file (llama.cpp's default
					 * copies those its CPU can repack into REPACK / AMX buffers: not modelled) */
	bool mmap_given;		/* use_mmap was in the request (Ollama's CPU-only default is off) */
	int backend;			/* -1: from the device's vendor; else mp_llamacpp_backend */
	uint64_t gpu_margin_bytes;	/* memory left free on each GPU beside the buffers; margin_given */
	bool margin_given;
	bool host_device_given;		/* engine_options.host_device (decoded into the request's host_device) */
	bool no_gpu;			/* the host alone (the engine check of a log that shows no GPU) */
} mps_llamacpp_opts;

/* ----- warnings: what an answer rests on that the request did not say ------------------------------------ */

/* An answer keeps its first MPS_MAX_WARNINGS warnings and counts the rest: a warning that does not fit is never
 * dropped silently, the list says how many were left out (mps_warnings_left_out). A warning longer than
 * MPS_WARNING_BYTES - 1 bytes ends in "...". */
#define MPS_MAX_WARNINGS 8
#define MPS_WARNING_BYTES 768
typedef struct mps_warnings {
	size_t n;
	size_t dropped;			/* distinct warnings found after the first MPS_MAX_WARNINGS, not kept */
	char text[MPS_MAX_WARNINGS][MPS_WARNING_BYTES];
} mps_warnings;

/* The last entry of a warnings list that left some out, as every renderer shows it, into buf (len bytes):
 * "warnings: 2 more were left out (an answer keeps the first 8)"; false (buf "") when none was left out (types.c).
 * Worked example (tests/test_pipeline.c). */
bool mps_warnings_left_out(const mps_warnings *w, char *buf, size_t len);

/* ----- a model's tensors ---------------------------------------------------------------------------- */

/* What a tensor listing is asked for (mps_tensors_of): the formats and the tensor-parallel degree. */
typedef struct mps_tensors_query {
	mp_dtype weight_dtype;		/* MP_DTYPE_INVALID: the config's dtype when a float one, else bf16 */
	mp_dtype compute_dtype;		/* MP_DTYPE_INVALID: bf16 */
	uint64_t tensor_parallel_size;	/* 0 = 1 */
	const mp_weight_formats *formats; /* per-class formats; NULL = none (borrowed) */
} mps_tensors_query;

/* One entry of the inventory as the API lists it. */
typedef struct mps_tensor_row {
	char name[256];			/* the state_dict name, "{i}" for the layer: "model.layers.{i}.self_attn.q_proj.weight" */
	uint32_t shape[MP_TENSOR_MAX_DIMS];
	uint8_t ndim;
	uint32_t layers;		/* how many of it (the layers or blocks it repeats over) */
	mp_tensor_kind kind;		/* the API's "class": embedding, attention, mlp, expert, ... */
	mp_tensor_class format_class;	/* the weight_formats class whose format it takes */
	bool buffer;			/* a registered buffer, not a parameter */
	mp_tensor_bytes b;		/* its format, parameters and bytes per rank */
} mps_tensor_row;

/* A model's tensors (mps_tensors_of fills it; mps_tensor_list_release frees rows). */
typedef struct mps_tensor_list {
	mps_tensor_row *rows;		/* heap */
	size_t n;
	mp_dtype weight_dtype;		/* resolved */
	const char *weight_dtype_from;	/* static: "request", "config_dtype", "default" */
	uint64_t tensor_parallel_size;
	mp_weights weights;		/* the classes' formats and bytes (mp_weight_bytes) */
	uint64_t parameters;		/* sum over rows */
	uint64_t layout_buffers_bytes;	/* the layout's own tables (RoPE under the PyTorch layout), in no row */
} mps_tensor_list;

/* Everything of an inference request but the device, so a scheduler's batch can be evaluated against many
 * devices and GPU counts. */
typedef struct mps_inference_job {
	mps_model_ref model;
	mp_inference_req req;		/* req.json_pointer points at `pointer` */
	mp_inference_opts opts;		/* as given: max_num_batched_tokens 0 = the engine's default (resolved per device) */
	char pointer[64];		/* the request's own pointer: "" for a body, "/jobs/3/inference", "/fit_plan" */
	mps_engine_opts engine;
	mps_llamacpp_opts llama;	/* engine llamacpp or ollama: engine_options */
	/* what the request left to the defaults, resolved per model and device by mps_inference_defaults */
	bool weight_dtype_auto;		/* weight_dtype absent or "auto" */
	bool kv_cache_dtype_auto;	/* kv_cache_dtype absent or "auto" */
	bool kv_cache_dtype_from_engine_options;	/* llama.cpp / Ollama: taken from engine_options' one cache type */
	bool compute_dtype_given;	/* compute_dtype was in the request */
	bool int4_scheme_given;		/* int4_scheme, or weight_dtype gptq / awq, was in the request */
	bool int4_group_size_given;
	bool include_tensors;		/* "include": ["tensors"]: the plan lists the model's tensors (a single plan) */
	bool prefill_warned_by_answer;	/* a capacity row: the answer warns of a defaulted prefill chunk once, so the
					   row's plan does not */
} mps_inference_job;

/* How the prefill chunk (max_num_batched_tokens) of a plan was chosen. */
typedef struct mps_prefill_choice {
	uint64_t max_num_batched_tokens;	/* the chunk the plan used */
	bool defaulted;			/* the request gave none: the engine's default for the device */
	bool chunked_prefill;		/* false: the engine's rule without chunking (at least max_model_len) */
	mp_engine basis;		/* whose rule (MP_ENGINE_VLLM when no engine is named) */
	uint64_t engine_default;	/* the engine's default for the device, before the caps below */
	const char *device_class;	/* static text: the branch of the engine's rule */
	double memory_fraction;		/* the same engine's default share of the GPU (vLLM gpu_memory_utilization,
					   SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction) */
} mps_prefill_choice;

/* One launch argument of an engine's command line. */
typedef struct mps_engine_arg {
	const char *flag;		/* static: "--tensor-parallel-size" */
	char value[256];		/* "" for a switch */
	const char *source;		/* static: "plan" (realises the plan), "request", "default" (the engine's) */
} mps_engine_arg;

#define MPS_ENGINE_MAX_ARGS 24

/* The memory terms an observation of a running engine can measure (types/fleet_types.h), and a plan can take from
 * observations instead of its model (service/mps_observe.c). */
typedef enum mps_obs_term {
	MPS_OBS_NON_TORCH = 0,		/* vLLM: what its budget holds beyond the weights and the modelled activation
					 * peak (memory outside PyTorch, and what the model misses), measured from the
					 * blocks the engine allocated */
	MPS_OBS_CONTEXT,		/* SGLang: memory taken before the weights (CUDA context, NCCL), measured from
					 * the tokens its pool got */
	MPS_OBS_TERM_COUNT
} mps_obs_term;

/* "non_torch_bytes", "context_bytes" (the names of the plan's members); "invalid". */
const char *mps_obs_term_name(mps_obs_term t);

/* A term of the engine block taken from observations: the median of how many (0: the model's). */
typedef struct mps_observed_term {
	bool observed;			/* the prediction uses the median of observations */
	uint64_t observations;
	int64_t modelled_bytes;		/* what the model has for the term */
	int64_t observed_bytes;		/* the median used */
} mps_observed_term;

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
	const mp_engine_version *version;	/* the release line the block follows */
	const char *version_from;	/* static: "request" or "default" (the newest) */
	uint64_t replicas;		/* data-parallel replicas of the TP group (num_gpus / tp) */
	const char *quantization;	/* static: the --quantization value, "" for none */
	const char *quantization_how;	/* static: "checkpoint" (a quantised repository), "on_load" (the flag
					 * quantises the base weights while loading), "" */
	char yaml_file[64];		/* the name the command gives extra_options_yaml */
	mps_observed_term observed[MPS_OBS_TERM_COUNT];	/* service/mps_observe.c */
	char observed_version_line[16];	/* the engine version line the observations are of ("" = every version) */
} mps_engine_block;

/* ----- llama.cpp and Ollama: the placement of an inference plan (service/mps_llamacpp.c) ---------------------- */

/* Ollama 0.32.15's settings for the launch, and what it resolves from them (planner/llamacpp.c mp_ollama_*). */
typedef struct mps_ollama_settings {
	uint32_t num_ctx;		/* per request (options.num_ctx): the plan's sequence_length */
	uint32_t num_parallel;		/* OLLAMA_NUM_PARALLEL: the plan's batch_size */
	uint32_t num_batch;		/* options.num_batch: passed as -b and -ub */
	bool num_batch_auto;		/* not given: Ollama's automaticGenerationBatch chose it */
	int32_t num_gpu;		/* options.num_gpu: -ngl (the plan's gpu_layers) */
	uint32_t default_num_ctx;	/* what Ollama takes when num_ctx and OLLAMA_CONTEXT_LENGTH are unset (0 = no device) */
	uint64_t predicted_vram_bytes;	/* llm.PredictServerVRAM: the file and an f16 cache */
	uint64_t available_bytes;	/* the GPUs' free memory Ollama's batch rule reads */
	bool mmap_off;			/* Ollama turns mmap off by default (CPU only): --load-mode none */
	const char *flash_attention_env;	/* OLLAMA_FLASH_ATTENTION value, NULL when unset (auto) */
	const char *kv_cache_type_env;	/* OLLAMA_KV_CACHE_TYPE value, NULL when unset (f16) */
} mps_ollama_settings;

typedef struct mps_llamacpp_block {
	mp_engine engine;		/* MP_ENGINE_LLAMACPP or MP_ENGINE_OLLAMA */
	mps_llamacpp_program program;
	mp_llamacpp_params params;	/* the file's model and the resolved launch */
	mp_llamacpp_plan plan;		/* the buffers of that launch */
	bool have_device;		/* the GPUs' memory is known: the search and the fit ran */
	bool host_only;			/* the device is a CPU: no layer is offloaded */
	uint64_t capacity_bytes;	/* per GPU: usable_memory_bytes, else memory_bytes */
	uint64_t context_bytes;		/* per GPU: the CUDA context outside the buffers */
	uint64_t margin_bytes;		/* per GPU: left free beside them (llama.cpp's --fit-target default, 1024 MiB) */
	uint64_t budget_bytes;		/* per GPU: floor(capacity x gpu_memory_utilization) - context - margin */
	const char *gpu_layers_from;	/* static: "request", "largest_that_fits", "all_layers" (no device), "host_only" */
	int32_t max_gpu_layers;		/* the largest -ngl whose buffers fit every GPU (-1: not even -ngl 0) */
	uint32_t max_context;		/* the largest -c (a multiple of 256) that fits at the chosen -ngl; 0 none */
	uint32_t context_limit;		/* the search's upper end: the model's context_length */
	bool fits;			/* every GPU's buffers within budget_bytes */
	uint64_t host_bytes;		/* the host's buffers: model (the mapped file under mmap), KV, compute, output */
	uint64_t host_memory_bytes;	/* the host profile's memory (0: no host profile) */
	bool host_fits;			/* host_bytes within host_memory_bytes (false when unknown) */
	mp_llamacpp_backend backend;
	const char *backend_from;	/* static: "request" or "device_vendor" */
	bool flash_attention_auto;	/* -fa auto: taken as on (the CPU and CUDA backends run it) */
	uint32_t n_ctx_asked;		/* the -c of the command */
	/* speed bounds (roofline over the devices) */
	bool have_speed;		/* every device with work has rates */
	mp_llamacpp_speed speed;
	mp_llamacpp_speed_req speed_req;
	char host_name[128];		/* the host profile's label, "" none */
	mps_ollama_settings ollama;	/* engine ollama */
} mps_llamacpp_block;

/* How an inference job's "auto" values were resolved (echoed in the answer's request block). */
typedef struct mps_dtype_choice {
	const char *weight_dtype_from;	/* "request", "quantization_config", "config_dtype", "default" */
	const char *kv_cache_dtype_from;	/* "request" or "compute_dtype" */
	const char *compute_dtype_from;	/* "request", "weight_dtype", "config_dtype", "default" */
} mps_dtype_choice;

typedef struct mps_inference_request {
	mps_inference_job job;
	mps_device_ref device;
	mps_device_ref host_device;	/* engine_options.host_device: the host of a llama.cpp placement (a CPU profile) */
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
	const char *budget_from;	/* static: where opts.gpu_memory_utilization came from (mps_budget_from) */
	bool have_engine;		/* the request named an engine */
	mps_engine_block engine;
	mps_tensor_list tensors;	/* job.include_tensors: rows on the heap (mps_inference_plan_release) */
	/* engine llamacpp or ollama: llama.cpp's placement and buffers, on the heap (mps_inference_plan_release frees
	 * it; re-planning into the same struct without releasing it first leaks it) */
	struct mps_llamacpp_block *llama;
	/* a model from a checkpoint with weight_dtype auto at tensor-parallel degree 1: the file's own bytes are the
	 * weights (opts.weights points here) */
	bool weights_from_checkpoint;
	mp_weights checkpoint_weights;
	uint64_t inventory_weights_bytes;	/* what the inventory in the checkpoint's format gives, for the note */
} mps_inference_plan;

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
	MPS_FIG_CUDA_GRAPH_GIB,		/* vLLM 0.21 on: "Estimated CUDA graph memory", "for CUDAGraph memory" */
	MPS_FIG_KV_CACHE_GIB,		/* SGLang MLA "KV size" (one latent pool) */
	MPS_FIG_COUNT
} mps_figure;

/* "weights_loaded_gib", "kv_cache_tokens", ...; "invalid" outside the enum (types.c). */
const char *mps_figure_name(mps_figure f);

/* One figure an engine printed at start-up (codec/ reads them from a log or a metrics exposition). */
typedef struct mps_engine_figure {
	mps_figure kind;
	double reported;		/* in the unit of the name, as printed */
	int decimals;			/* decimals printed: the rounding the engine applied */
	uint64_t tokens_per_request;	/* max_concurrency, needed_kv_cache_gib, ...: the length the line names */
	uint32_t line;			/* 1-based line of the text */
	char text[200];			/* the line (well-formed UTF-8); a longer one is cut at 196 bytes and ends in
					   "..." */
	bool refusal;			/* the line is the engine refusing max_model_len (read on the whole line) */
} mps_engine_figure;

typedef struct mps_engine_report {
	mp_engine engine;
	uint32_t lines;			/* lines read */
	uint32_t lines_recognised;	/* lines that gave at least one figure */
	size_t nfigures;
	mps_engine_figure figures[MPS_ENGINE_MAX_FIGURES];
	size_t figures_left_out;	/* figures found after the first MPS_ENGINE_MAX_FIGURES: counted, not kept */
	bool from_metrics;		/* a Prometheus exposition (vllm:cache_config_info) rather than a log */
	/* vLLM: the release line the lines' formats belong to ("0.6", "0.7", "0.33"; NULL: none, or V1's lines
	 * alone, which 0.11 and 0.33 print alike: then v1_only), and the line that decided it (its keyword) */
	const char *format_line;
	const char *format_keyword;
	bool v1_only;
} mps_engine_report;

typedef struct mps_engine_check_request {
	mps_inference_request plan;	/* the plan to compare with; its job's engine is the report's */
	mps_engine_report report;
	bool version_from_log;		/* plan.engine_version was left out and taken from report.format_line */
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
	/* a KV figure off its prediction: the memory term whose printed figure is furthest from memplan's, "" when
	 * none is off (then the log shows no term to blame) */
	char explained_by[192];
} mps_engine_comparison;

typedef struct mps_engine_check {
	mps_inference_plan plan;	/* with its engine block */
	mps_engine_comparison rows[MPS_ENGINE_MAX_FIGURES];	/* one per figure of the report, in its order */
	size_t predicted, within_tolerance, checked, consistent;
} mps_engine_check;

/* ----- engine check of llama.cpp and Ollama: the buffer lines a log printed beside the plan's --------------- */

/* The figures llama.cpp (and Ollama around it) prints at start-up; mps_llama_figure_name gives each its API name. */
typedef enum mps_llama_fig {
	MPS_LF_MODEL_BUFFER_MIB = 0,	/* load_tensors: <dev> model buffer size = X MiB */
	MPS_LF_KV_BUFFER_MIB,		/* llama_kv_cache: <dev> KV buffer size = X MiB */
	MPS_LF_COMPUTE_BUFFER_MIB,	/* sched_reserve: <dev> compute buffer size = X MiB */
	MPS_LF_OUTPUT_BUFFER_MIB,	/* llama_context: <dev> output buffer size = X MiB */
	MPS_LF_KV_SIZE_MIB,		/* llama_kv_cache: size = X MiB (a cache: K + V) */
	MPS_LF_K_MIB,			/* ..., K (type): X MiB */
	MPS_LF_V_MIB,			/* ..., V (type): X MiB */
	MPS_LF_KV_CELLS,		/* ... (N cells, ...) */
	MPS_LF_OFFLOADED_LAYERS,	/* load_tensors: offloaded X/Y layers to GPU */
	MPS_LF_N_CTX,			/* llama_context: n_ctx = N */
	MPS_LF_N_CTX_SEQ,
	MPS_LF_N_BATCH,
	MPS_LF_N_UBATCH,
	MPS_LF_N_SEQ_MAX,
	MPS_LF_DEFAULT_NUM_CTX,		/* Ollama: msg="vram-based default context" default_num_ctx=N */
	MPS_LF_LAUNCH_CTX,		/* Ollama: msg="starting llama-server" cmd="... -c N ..." */
	MPS_LF_LAUNCH_PARALLEL,		/* ... -np N */
	MPS_LF_LAUNCH_GPU_LAYERS,	/* ... -ngl N */
	MPS_LF_LAUNCH_BATCH,		/* ... -b N */
	MPS_LF_LAUNCH_UBATCH,		/* ... -ub N */
	MPS_LF_COUNT
} mps_llama_fig;

/* "model_buffer_mib", "kv_cells", ...; "invalid" outside the enum (types.c). */
const char *mps_llama_figure_name(mps_llama_fig f);

#define MPS_LLAMA_MAX_FIGURES 96

typedef struct mps_llama_figure {
	mps_llama_fig kind;
	char device[48];		/* the buffer's name as printed ("CUDA0", "CPU_Mapped", "RPC0[127.0.0.1:50052]") */
	int slot;			/* 0 the host, 1.. the GPUs (CUDA<i> is i + 1; other names by first appearance) */
	int cache;			/* the KV cache lines: 0 the full-attention cache, 1 the sliding-window one */
	double reported;
	int decimals;
	uint32_t line;
	char text[200];			/* the line (well-formed UTF-8), cut at 196 bytes with "..." */
	bool replaced;			/* a later line printed the same buffer again (the fit's probe, a reload) */
	char type[16];			/* MPS_LF_K_MIB / V: the cache type printed */
} mps_llama_figure;

typedef struct mps_llama_report {
	mp_engine engine;		/* MP_ENGINE_LLAMACPP or MP_ENGINE_OLLAMA */
	uint32_t lines, lines_recognised;
	size_t n;
	mps_llama_figure figures[MPS_LLAMA_MAX_FIGURES];
	size_t left_out;		/* figures past MPS_LLAMA_MAX_FIGURES: counted, not kept */
	uint32_t gpus;			/* distinct GPU buffer names seen */
	bool cuda_names;		/* the GPUs print as CUDA<i> / ROCm<i> (else RPC servers of the CPU backend) */
	bool ollama_command;		/* Ollama's "starting llama-server" line was read */
	bool host_repack;		/* a REPACK / AMX host buffer was printed: the host's weights were repacked */
} mps_llama_report;

typedef struct mps_llama_check_request {
	mps_inference_request plan;	/* the plan to compare with (its engine is the report's) */
	mps_llama_report report;
} mps_llama_check_request;

typedef struct mps_llama_comparison {
	bool have_predicted;
	double predicted;		/* in the figure's unit */
	double tolerance;		/* half a unit of the last digit printed (a modelled figure: 10% of it) */
	bool within_tolerance;
	const char *basis;		/* static: "llama.cpp's arithmetic", "modelled", "the launch" */
} mps_llama_comparison;

typedef struct mps_llama_check {
	mps_inference_plan plan;	/* with its llama block */
	mps_llama_comparison rows[MPS_LLAMA_MAX_FIGURES];
	size_t predicted, within_tolerance;
	size_t exact, exact_within;	/* the model and KV figures: llama.cpp's arithmetic to the byte */
	/* what the check took from the log because the plan left it out */
	bool gpu_layers_from_log, gpus_from_log, cache_types_from_log, backend_from_log;
} mps_llama_check;

/* ----- training plan ------------------------------------------------------------------------------------- */

typedef struct mps_training_job {
	mps_model_ref model;
	mp_training_req req;		/* req.json_pointer points at `pointer`; req.no_dropout from "dropout" */
	char pointer[64];
	bool recompute_given;		/* activation_recomputation was in the request (else mps_training_defaults) */
} mps_training_job;

typedef struct mps_training_request {
	mps_training_job job;
	mps_device_ref device;
} mps_training_request;

typedef struct mps_training_plan {
	mps_model model;
	mp_training_req req;		/* the request as planned: its defaults resolved (mps_training_defaults) */
	const char *recompute_from;	/* static: "request", "finetune" (QLoRA's recipe) or "default" */
	mps_warnings warnings;
	mp_training_memory mem;
	bool have_device;
	mp_store_device device;
	mp_training_fit fit;		/* with a device */
	uint64_t formula_bytes[MP_FORMULA_COUNT];	/* the published activation formulas for the same shape */
	bool formula_known[MP_FORMULA_COUNT];
} mps_training_plan;

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
	/* warnings: what the job's verdicts rest on that it did not say (the budget, a defaulted recomputation) */
	mp_status (*job_begin)(void *ctx, const mps_fit_job *job, const mps_model *model, const mps_warnings *warnings);
	mp_status (*device)(void *ctx, const mps_fit_device *dev, const mps_fit_row *rows, size_t nrows,
			    uint64_t smallest_gpu_count);
	mp_status (*job_end)(void *ctx);
} mps_fit_sink;

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
	const mp_store_device *device;	/* borrowed for the callback; NULL: no row, the answer's warnings changed (a
					 * device whose profile cannot answer the plan was left out, and they say why) */
	const mps_inference_plan *plan;	/* borrowed for the callback: the plan endpoint's own answer for this row */
	mp_inference_memory mem;	/* the plan at batch 1 */
	mp_fit fit;
	uint64_t replicas_per_gpu;
	uint64_t max_concurrent_sequences;	/* = plan->fit.max_batch_size when it fits, else 0 */
	double decode_tokens_per_second_per_sequence;	/* 0 = unknown or does not fit */
	double decode_tokens_per_second_at_max_concurrency;
	bool decode_compute_bound;
	/* what the whole answer rests on, once (a defaulted prefill chunk, whose value each row names), so far; borrowed
	 * for the callback */
	const mps_warnings *answer_warnings;
} mps_capacity_row;

typedef mp_status (*mps_capacity_fn)(void *ctx, const mps_capacity_row *row);

/* ----- roofline ---------------------------------------------------------------------------------------- */

#define MPS_ROOFLINE_MAX_OPS 64

/* One operation of a roofline request (codec/mpc_roofline.c decodes it into a planner op). */
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
	bool tp_given;			/* req.tensor_parallel_size given (else 1: one GPU) */
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
	const char *tensor_parallel_size_from;	/* static: "request" or "default" (1) */
	mp_step decode, prefill;
	uint64_t decode_compute_bound_batch;	/* 0 = none */
} mps_roofline_result;

/* ----- device and model store ----------------------------------------------------------------------------- */

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

/* An import (mps_import_run): devices and models to write, each with the pointer its errors name. */
typedef struct mps_import {
	mp_store_device *devices;
	char (*device_pointers)[32];	/* "/devices/3" per device */
	size_t ndevices;
	mps_model_input *models;
	char (*model_pointers)[32];
	char **model_texts;		/* the models' config texts (owned by whoever decoded them) */
	size_t nmodels;
} mps_import;

/* ----- listings ----------------------------------------------------------------------------------------- */

/* A listing's rows, one at a time, borrowed for the call (mps_device_find, mps_model_find, mps_export); return
 * MP_OK to go on. A stored model comes with the Hugging Face repo ids it stands for (a preset's; NULL when none). */
typedef mp_status (*mps_device_fn)(const mp_store_device *d, void *ctx);
typedef mp_status (*mps_model_fn)(const mp_store_model *m, const char *const *hf_repo_ids, void *ctx);

#endif /* MPS_TYPES_H */
