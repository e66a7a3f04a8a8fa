/*
 * mp_engine.h: the serving engines' own arithmetic. vLLM, SGLang and TensorRT-LLM size their KV cache from
 * different bases (vLLM: a fraction of the total memory; SGLang: a fraction of the memory free before the weights
 * load, for weights plus the KV pool; TensorRT-LLM: a fraction of what is free after the profile run). This
 * header holds each engine's serving defaults by device and the figures the engine prints at start-up, computed
 * the way its source computes them, from a plan's bytes. Pure arithmetic on caller-owned structs.
 * Part of the planner's public contract; include "memplan.h", not this file.
 *
 * Sources (the stored snapshots read; file and function per formula below):
 *   vLLM V1, 0.10-0.11: vllm/engine/arg_utils.py (get_batch_defaults, _set_default_max_num_seqs_and_batched_
 *     tokens_args), vllm/v1/worker/gpu_worker.py @35d5cda1 (requested_memory, determine_available_memory),
 *     vllm/utils/mem_utils.py @a6d5c390 (memory_profiling), vllm/v1/core/kv_cache_utils.py @bbf906a8
 *     (get_num_blocks, get_max_concurrency_for_kv_cache_config, check_enough_kv_cache_memory),
 *     vllm/model_executor/layers/rotary_embedding.py (cos_sin_cache), vocab_parallel_embedding.py (padding 64).
 *   SGLang: python/sglang/srt/server_args.py (_handle_gpu_memory_settings, after PR #10975),
 *     python/sglang/srt/model_executor/model_runner.py @01cc04e2 (profile_max_num_token, init_memory_pool).
 *   TensorRT-LLM, PyTorch backend (trtllm-serve): tensorrt_llm/_torch/pyexecutor/_util.py (KvCacheCreator:
 *     _get_cache_size_per_token, _cal_max_tokens), resource_manager.py (calculate_max_num_blocks).
 */
#ifndef MP_ENGINE_H
#define MP_ENGINE_H

#include "mp_inference.h"

typedef enum mp_engine {
	MP_ENGINE_NONE = 0,	/* no engine named: the plan follows vLLM's serving defaults */
	MP_ENGINE_VLLM,
	MP_ENGINE_SGLANG,
	MP_ENGINE_TRTLLM,
	MP_ENGINE_LLAMACPP,	/* llama.cpp's llama-server (llama-completion, llama-cli): mp_llamacpp.h */
	MP_ENGINE_OLLAMA,	/* Ollama, which starts llama-server with the settings it resolves (mp_llamacpp.h) */
	MP_ENGINE_COUNT
} mp_engine;

/* ---------------------------------------------------------------------------------------------------------
 * The supported release lines. Each is a row of a table (planner/engine.c mp_engine_versions), never a branch
 * on a version number: its defaults, which flags and values its own argument parser and config checks take,
 * how it budgets memory, and which memory terms it subtracts. tests/engines runs each row's printed commands
 * through that release's own code (installed from PyPI, pinned).
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_engine_budget {
	/* vLLM V0 (0.6, 0.7): total x util - (torch peak + memory outside PyTorch) (vllm/worker/worker.py
	 * determine_num_available_blocks): 0.6.4 counts all CUDA memory outside torch, the CUDA context and NCCL
	 * in it (the 0.6 row); 0.6.5 on the increase over a baseline taken after the CUDA context, NCCL in it and
	 * the context not (utils.py memory_profiling; the 0.7 row, 0.7.2) */
	MP_BUDGET_VLLM_V0,
	/* vLLM V1 (0.10-0.20): int(total x util) - (weights + torch peak increase + non-torch increase since the
	 * snapshot taken before the distributed init: NCCL and custom all-reduce buffers inside) */
	MP_BUDGET_VLLM_V1,
	/* vLLM V1 (0.21 on): ceil(total x util) - (memory consumed since a snapshot taken after NCCL and the cuBLAS
	 * handles + the transient peak + the CUDA-graph estimate) (vllm/v1/worker/gpu_worker.py, utils.py
	 * request_memory, vllm/utils/mem_utils.py memory_profiling, 0.33.0) */
	MP_BUDGET_VLLM_V1_CONSUMED,
	MP_BUDGET_SGLANG,	/* (free before the weights) x mem_fraction_static - weights */
	MP_BUDGET_TRTLLM,	/* (total - profile peak) x free_gpu_memory_fraction */
} mp_engine_budget;

typedef struct mp_engine_version {
	mp_engine engine;
	const char *name;		/* the version line a request names: "0.33", "0.11", "0.7", "0.6", "0.5", "1.2" */
	const char *release;		/* the release the row was read from and tested against: "0.33.0" */
	const char *source;		/* the files of that release the row follows */
	mp_engine_budget budget;
	double memory_fraction;		/* gpu_memory_utilization / free_gpu_memory_fraction default (SGLang: its
					 * fallback when the GPU's memory is unknown) */
	uint64_t block_size;		/* the default block (page) size on CUDA for standard attention */
	uint64_t mla_block_size;	/* vLLM: the block size the MLA backend it picks on sm90 takes (0: no MLA
					 * backend: the release caches MLA keys and values expanded) */
	uint64_t mla_block_size_sm100;	/* the same on sm100 (B200) */
	uint64_t mla_block_size_fp8;	/* the same on sm90 with an fp8 (e4m3) cache, where the backend picked for a
					 * 16-bit cache takes no fp8 (0: mla_block_size) */
	bool mla_no_fp8_e5m2;		/* no MLA backend of the release takes an fp8_e5m2 cache */
	const char *multimodal_off_types;	/* SGLang: the multimodal model types it serves text-only unless
						 * --enable-multimodal (space-separated model_type values; NULL: none) */
	bool chunked_local_unified;	/* vLLM: chunked local attention turns the hybrid KV cache manager off (unless
					 * VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1), so every layer caches the
					 * whole context as full attention, one group */
	uint64_t block_size_mask;	/* bit n set: a block size of 2^n tokens is accepted (0: any) */
	/* memory outside PyTorch (bytes per GPU) */
	uint64_t non_torch_bytes;	/* what the profile adds on one GPU (cuBLAS workspaces, attention buffers) */
	uint64_t nccl_bytes_per_peer;	/* NCCL's buffers per other rank of the TP group */
	uint64_t custom_allreduce_bytes;	/* the custom all-reduce's IPC buffers (TP 2-8) */
	bool nccl_in_budget;		/* NCCL and custom all-reduce allocated after the baseline snapshot */
	bool context_in_budget;		/* the CUDA context counts inside the budget (V0) */
	uint64_t context_bytes;		/* the CUDA context as the release's own figure counts it, where the device
					 * profile has none (0: the device's, or memplan's default) */
	/* CUDA graphs subtracted from the budget (vLLM 0.21 on): base + per capture size */
	uint64_t cuda_graph_base_bytes;
	uint64_t cuda_graph_bytes_per_size;
	/* what the release's parsers accept */
	bool has_bitsandbytes;		/* --quantization bitsandbytes (int8, nf4 loaded 4-bit) */
	bool has_gguf;			/* --quantization gguf */
	bool has_nvfp4;			/* a ModelOpt NVFP4 checkpoint (--quantization modelopt_fp4 in vLLM, SGLang) */
	bool no_prefix_flags;		/* BooleanOptionalAction flags (--no-enable-chunked-prefill); else
					 * --enable-chunked-prefill false */
	bool chunked_prefill_flag;	/* chunked prefill must be asked for when the chunk is below max_model_len */
	bool awq_needs_float16;		/* AWQ runs in float16 only (SGLang; vLLM's plain awq before auto_awq) */
	bool gptq_needs_float16;	/* GPTQ runs in float16 only (vLLM's plain gptq before auto_gptq) */
	bool gptq_marlin_only;		/* SGLang: GPTQ is gptq_marlin on CUDA */
	bool chunk_divisible_by_page;	/* SGLang: chunked_prefill_size % page_size == 0 */
	const char *mxfp4_experts_name;	/* vLLM: the quantization a checkpoint's MXFP4 experts (gpt-oss) resolve to
					 * (NULL: the release has no such model) */
	const char *fp8_kv_name;	/* the --kv-cache-dtype value for fp8 e4m3 */
	const char *awq_name, *gptq_name;	/* the --quantization values of AWQ and GPTQ checkpoints, as the
						 * release resolves them (vLLM 0.33: auto_awq, auto_gptq) */
} mp_engine_version;

/* The rows, newest first within each engine; *n gets their count. */
const mp_engine_version *mp_engine_versions(size_t *n);
/*
 * The row of engine e named name ("0.33", "0.33.0", "0.11", "0.11.2", "0.6.5": a release resolves to its line by
 * the longest row name it starts with at a dot boundary); name NULL or "" = the newest row of e. NULL when there
 * is none (the caller's 422 lists mp_engine_version_names). MP_ENGINE_NONE reads as vLLM.
 */
const mp_engine_version *mp_engine_version_find(mp_engine e, const char *name);
/* "0.33, 0.11, 0.7, 0.6" for engine e into buf (cut to len). */
void mp_engine_version_names(mp_engine e, char *buf, size_t len);

/* "none", "vllm", "sglang", "trtllm", "llamacpp", "ollama"; "invalid" otherwise. */
const char *mp_engine_name(mp_engine e);
/* The engine of that name, MP_ENGINE_COUNT when there is none. NULL-safe. */
mp_engine mp_engine_from_name(const char *name);

/* ---------------------------------------------------------------------------------------------------------
 * Serving defaults by device.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct mp_engine_defaults {
	/* tokens one forward may hold: vLLM max_num_batched_tokens, SGLang chunked_prefill_size, TensorRT-LLM
	 * max_num_tokens */
	uint64_t max_num_batched_tokens;
	/* concurrent sequences: vLLM max_num_seqs, SGLang 0 (derived from the pool), TensorRT-LLM max_batch_size */
	uint64_t max_num_seqs;
	/* vLLM gpu_memory_utilization, SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction */
	double memory_fraction;
	uint64_t block_size;		/* vLLM block_size 16, SGLang page_size 1, TensorRT-LLM tokens_per_block 32 */
	uint64_t cuda_graph_max_bs;	/* SGLang only */
	double reserved_mib;		/* SGLang only: the reserve mem_fraction_static leaves, MiB */
	const char *device_class;	/* static text: the branch of the engine's rule the device took */
	uint64_t prefill_graph_sizes;	/* SGLang only: prefill CUDA-graph capture sizes (8 MiB each reserved) */
	uint64_t device_memory_bytes;	/* the GPU memory the rule read (SGLang: nvidia-smi's; 0 = unknown) */
	const mp_engine_version *version;	/* the row the defaults are from */
} mp_engine_defaults;

/*
 * The engine's defaults on one GPU of total_memory_bytes (0 = unknown: the engine's own fallback) named
 * device_name (vLLM's A100 exception; NULL = ""), at tensor-parallel degree tp (SGLang's reserve).
 *   vLLM (API server, arg_utils.get_batch_defaults): total >= 70 GiB and "a100" not in the lower-cased name:
 *     max_num_batched_tokens 8192, max_num_seqs 1024; else 2048 and 256 (a device vLLM cannot query counts as
 *     0 bytes). gpu_memory_utilization 0.9, block_size 16.
 *   SGLang (_handle_gpu_memory_settings; gpu_mem = nvidia-smi memory.total, MiB): chunked_prefill_size and
 *     cuda_graph_max_bs by bucket (< 20 GiB 2048/8, < 35 GiB 2048/24 (80 at tp >= 4), < 60 GiB 4096/32 (160),
 *     < 90 GiB 8192/256 (512), < 160 GiB 8192/256 (512), else 16384/512; unknown 4096/160), then
 *     reserved = 512 + 1.5 max(chunk, 2048) + 2 cuda_graph_max_bs + 1024 tp / 8 MiB, at least 10240 MiB above
 *     60 GiB, and mem_fraction_static = round((gpu_mem - reserved) / gpu_mem, 3) (0.88 when unknown).
 *   TensorRT-LLM (KvCacheConfig, TorchLlmArgs): free_gpu_memory_fraction 0.9, tokens_per_block 32,
 *     max_num_tokens 8192, max_batch_size 2048.
 *   llama.cpp and Ollama (common/common.h common_params at 0c1e5709; Ollama 0.32.15 api/types.go DefaultOptions):
 *     a forward is one ubatch, 512 tokens (-ub; Ollama's num_batch 512, passed as -b and -ub); one sequence
 *     (llama-completion's -np 1, Ollama's OLLAMA_NUM_PARALLEL 1); the whole device (memory_fraction 1); the context
 *     padded to 256 cells per stream (block_size 256).
 * Worked examples (tests/test_engine.c): vLLM, H100 (85,520,809,984 B) -> 8192 / 1024; A100 80GB -> 2048 / 256;
 * SGLang, H100 at 81,559 MiB, tp 1 -> reserved 13,440 MiB, mem_fraction_static 0.835.
 * llama.cpp and Ollama (no release rows): n_ubatch 512, one sequence, fraction 1, the context padding as block_size.
 * Errors: MP_EINVAL for an engine outside the enum (MP_ENGINE_NONE gives vLLM's).
 */
mp_status mp_engine_defaults_for(mp_engine e, uint64_t total_memory_bytes, const char *device_name, uint64_t tp,
                                 mp_engine_defaults *out, mp_error *err);

/* The launch knobs a release's default rule reads (SGLang's mem_fraction_static). */
typedef struct mp_engine_launch {
	uint64_t chunk;			/* the chunked_prefill_size the command passes; 0 = the bucket's */
	uint64_t max_running_requests;	/* SGLang caps its decode CUDA-graph batch at it; 0 = none */
	bool mla;			/* SGLang's MLA backends reserve 1.5 GiB for prefill graphs, cap them at 8192 */
	/* a multimodal model (vit_hidden > 0): SGLang captures no prefill graphs for it and scales the fraction by
	 * its ViT's size: vision_config.num_hidden_layers (24 where the config names it otherwise, as Qwen's
	 * "depth": getattr's default), vision_config.hidden_size */
	uint64_t vit_layers, vit_hidden;
} mp_engine_launch;

/*
 * The defaults of one release line v (mp_engine_defaults_for is this with e's newest row and no launch knobs;
 * launch may be NULL).
 *   SGLang 0.5.23 (python/sglang/srt/arg_groups/memory_hook.py handle_gpu_memory_settings, reserve_for_graph_mb,
 *   adjust_mem_fraction_for_vlm; cuda_graph_hook.py generate_prefill_cuda_graph_batch_sizes): buckets by
 *   nvidia-smi MiB (< 20 GiB 2048 / 8; < 35 GiB 4096 / 48 (160 at tp >= 4); < 60 GiB 4096 / 32 (160); < 90 and
 *   < 160 GiB 8192 / 256 (512); else 16384 / 512; unknown 4096 / 160, fraction 0.95); decode max_bs capped at
 *   max_running_requests; reserved = 512 + 1.5 max(chunk, 2048) + 1024 tp / 8 + 2 decode_max_bs + (MLA ? 1536
 *   : 8 x prefill capture sizes; none for a multimodal model) MiB, at least 10240 above 60 GiB; fraction =
 *   round((mem - reserved) / mem, 3), then for a multimodal model x 0.95 x clamp(1 - 0.1 (L h^2 / (24 x 1024^2)
 *   - 1), 0.8, 1.05) (unrounded).
 * Worked example (tests/test_engine.c): SGLang 0.5.23, H100 81,559 MiB, tp 1, chunk 8192, 16 running requests:
 * 512 + 12288 + 128 + 32 + 8 x 58 = 13,424 MiB -> 0.835.
 */
mp_status mp_engine_defaults_at(const mp_engine_version *v, uint64_t total_memory_bytes, const char *device_name,
                                uint64_t tp, const mp_engine_launch *launch, mp_engine_defaults *out, mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * What the engine prints at start-up.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct mp_engine_inputs {
	mp_engine engine;
	uint64_t total_memory_bytes;	/* per GPU, as CUDA reports it (torch.cuda.mem_get_info()[1]) */
	uint64_t context_bytes;		/* per process before the weights: CUDA context (and NCCL) */
	double memory_fraction;		/* the resolved gpu_memory_utilization / mem_fraction_static / fraction */
	uint64_t block_size;		/* tokens per KV block (SGLang: page size) */
	uint64_t max_model_len;		/* tokens one request may hold */
	uint64_t max_num_seqs;		/* concurrent sequences the launch asks for */
	uint64_t max_num_batched_tokens;	/* the profile run's tokens */
	uint64_t weights_bytes;		/* per GPU, as the engine allocates them (see mp_engine_weights_bytes) */
	uint64_t activation_bytes;	/* per GPU: the profile run's peak over the weights */
	uint64_t non_torch_bytes;	/* per GPU: memory outside PyTorch that the profile adds; 0 = not modelled */
	uint64_t kv_row_bytes;		/* per GPU: K and V of one token in one layer, in the KV dtype */
	uint64_t full_layers;		/* layers with a full-attention KV cache */
	uint64_t window_layers;		/* layers with a sliding-window KV cache */
	uint64_t sliding_window;	/* tokens (window_layers > 0) */
	uint64_t batch_size;		/* the plan's concurrent sequences, for the utilisation they need */
	/* the release and the terms it subtracts beyond the plan's (0 / NULL: the older arithmetic alone) */
	const mp_engine_version *version;	/* NULL: the engine's newest row */
	uint64_t tp;			/* tensor-parallel degree (NCCL buffers, the unsharded activations) */
	uint64_t hidden_size;		/* the residual stream, full on every rank */
	uint64_t vocab_size;		/* the profile's sampler logits */
	uint64_t compute_bytes;		/* bytes of one activation value (2 for bf16) */
	bool cuda_graphs;		/* the engine captures CUDA graphs (no --enforce-eager) */
	bool custom_allreduce;		/* vLLM's custom all-reduce (TP 2-8 over NVLink) */
	/* vLLM V0's profile forward (mp_engine_v0_profile_bytes), for a dense decoder with a gated MLP and
	 * grouped-query attention (llama, qwen2, mistral): 0 ffn_size = another kind, the plan's activations then */
	uint64_t ffn_size;		/* the MLP's intermediate width (whole model) */
	uint64_t q_width, kv_width;	/* heads x head_dim and max(KV heads, tp) x head_dim: divided by tp, a rank's */
	uint64_t cublas_workspace_bytes;	/* cuBLAS's workspace in the caching allocator (the first matmul) */
	bool gate_up_kept;		/* the MLP keeps gate_up bound through down_proj (qwen2.py; llama.py rebinds x) */
	/* a term measured on running engines of this release and device, in place of the model's (service/mps_observe.c):
	 * vLLM the budget beyond the weights and the profile's peak, SGLang the memory taken before the weights */
	bool observed;
	uint64_t observed_bytes;	/* per GPU, when observed */
} mp_engine_inputs;

/* One memory term the engine subtracts, as memplan models it (mp_engine_prediction.terms). */
typedef struct mp_engine_term {
	const char *name;		/* static: "cuda_context", "nccl_buffers", "non_torch", "profile_activation",
					 * "sampler", "cuda_graphs", "non_torch_given", "observed_non_torch",
					 * "observed_context" */
	uint64_t bytes;			/* per GPU */
	bool in_budget;			/* taken from the engine's budget (else it only lowers the free memory) */
	const char *source;		/* static: the file and release the term follows */
} mp_engine_term;

#define MP_ENGINE_MAX_TERMS 8

typedef struct mp_engine_prediction {
	/* vLLM */
	uint64_t requested_memory_bytes;	/* int(total x gpu_memory_utilization) */
	uint64_t non_kv_cache_bytes;		/* weights + activation peak + non-torch increase */
	int64_t available_kv_cache_bytes;	/* "Available KV cache memory: %.2f GiB" (negative: none) */
	uint64_t page_bytes;			/* one block of one layer: block_size x kv_row_bytes */
	uint64_t num_gpu_blocks;		/* available // page // layers per group */
	uint64_t kv_cache_tokens;		/* "GPU KV cache size: %s tokens" */
	uint64_t blocks_per_request;		/* blocks one request of max_model_len takes (all groups) */
	double max_concurrency;			/* "Maximum concurrency for %s tokens per request: %.2fx" */
	uint64_t needed_kv_cache_bytes;		/* for one request of max_model_len (the start-up check) */
	bool serves_max_model_len;		/* false: the engine refuses to start (the max_model_len error) */
	uint64_t estimated_max_model_len;	/* the longest request the pool holds (vLLM's binary search) */
	uint64_t kv_groups;			/* vLLM KV cache groups (1 unless full and window layers mix) */
	uint64_t group_layers;			/* layers per group */
	double required_memory_fraction;	/* the smallest fraction whose pool holds batch_size x max_model_len */
	/* SGLang */
	double total_gpu_memory_gib;		/* free after the distributed init, before the weights (GiB) */
	double available_after_weights_gib;	/* "Load weight end. ... avail mem=%.2f GB" */
	double rest_memory_gib;			/* available_after - total x (1 - mem_fraction_static) */
	uint64_t cell_size_bytes;		/* one token, all layers: K and V */
	uint64_t max_total_num_tokens;		/* "KV Cache is allocated. #tokens: %d" */
	uint64_t k_size_bytes;			/* "K size: %.2f GB" (GiB) */
	uint64_t max_running_requests;
	/* TensorRT-LLM */
	uint64_t kv_size_per_token_bytes;	/* "kv size is %d" */
	uint64_t peak_memory_bytes;		/* weights + activations + non-torch (context included) */
	uint64_t max_tokens;			/* "Estimated max tokens in KV cache : %d" */
	uint64_t blocks_in_primary_pool;	/* ceil(max_tokens / tokens_per_block) */
	/* every term beyond weights and KV, with its source (in order: outside the budget first) */
	mp_engine_term terms[MP_ENGINE_MAX_TERMS];
	size_t nterms;
	uint64_t cuda_graph_bytes;		/* vLLM 0.21 on: the CUDA-graph estimate taken from the budget */
	uint64_t profile_peak_bytes;		/* the profile run's transient peak per rank (forward or sampler) */
} mp_engine_prediction;

/*
 * The engine's start-up figures for in (per GPU).
 *   vLLM V1: requested = int(total x util); available = requested - (weights + activation peak + non-torch
 *     increase) (the context, measured before the baseline snapshot, lies outside the budget); page = block_size
 *     x kv_row_bytes; one group of all layers when the layers are uniform, else groups of min(full, window)
 *     layers; num_gpu_blocks = available // page // group_layers; kv_cache_tokens = num_gpu_blocks // groups x
 *     block_size; blocks_per_request = groups of full layers x cdiv(max_model_len, block_size) + groups of window
 *     layers x (cdiv(min(window - 1 + max_num_batched_tokens, max_model_len), block_size) + 1); max_concurrency =
 *     num_gpu_blocks / blocks_per_request; the start-up check needs blocks_per_request x page x group_layers.
 *   SGLang: total = (total_memory - context) / 2^30; after = total - weights / 2^30; rest = after - total x
 *     (1 - mem_fraction_static); cell = kv_row_bytes x layers; max_total_num_tokens = int(rest x 2^30 // cell),
 *     rounded down to the page size; K size = tokens x cell / 2; max_running_requests = the launch's
 *     max_num_seqs, else min(max(int(tokens / max_model_len x 512), 2048), 4096).
 *   TensorRT-LLM (PyTorch backend): kv_size_per_token = kv_row_bytes x layers; peak = weights + activations +
 *     context + non-torch; max_tokens = int((total - peak) x fraction // kv_size_per_token) (the profile's own
 *     KV allocation cancels: _cal_max_tokens adds it back); blocks = ceil(max_tokens / tokens_per_block).
 * With in->version set, every term the release subtracts beyond the weights and KV is computed and listed in
 * out->terms (name, bytes, inside the budget or not, source):
 *   cuda_context: in->context_bytes; inside the budget for vLLM V0 (non_torch_memory counted it), outside
 *     from V1 on (measured before the baseline snapshot), SGLang (before "Load weight begin") and TensorRT-LLM
 *     (in its profile's peak).
 *   nccl_buffers (tp > 1): (tp - 1) x nccl_bytes_per_peer + custom_allreduce_bytes (tp <= 8); inside the budget
 *     where the release allocates them after its snapshot (vLLM before 0.21: init_worker_distributed_environment
 *     ran after MemorySnapshot), outside from 0.21 on (gpu_worker.py init_device: "Initialize the distributed
 *     environment BEFORE taking memory snapshot").
 *   non_torch: the row's non_torch_bytes (cuBLAS workspaces, attention buffers the profile adds).
 *   profile_activation: in->activation_bytes + (tp > 1: 2 x tokens x hidden x compute_bytes x (tp - 1) / tp, the
 *     residual stream and the all-reduced outputs every rank holds whole); sampler (vLLM): min(max_num_seqs,
 *     max_num_batched_tokens) x vocab x (compute_bytes + 4 + 4 + 8) (the dummy sampler's logits, their float32
 *     copy, the top-k/top-p sort's values and int64 indices); the peak is the larger.
 *     vLLM V0 (0.6, 0.7) with in->ffn_size set (a llama/mistral/qwen2 dense decoder): the V0 profile run instead,
 *     per token max(attention: 2h + q + 2kv + q + h [+ h], SiluAndMul: 3h + 3F, down_proj: 3h [+ 2F kept] + F + h
 *     [+ h]) x compute_bytes + 24 B of int64 inputs, x tokens, + cublas_workspace_bytes (h whole, q, kv, F per rank,
 *     [+ h] the all-reduced output where tp > 1); its sampler on the driver: min(max_num_seqs, tokens) x (padded
 *     vocab x compute_bytes + vocab x 36) + tokens x h x compute_bytes + the same inputs and workspace
 *     (planner/engine.c v0_profile names the lines of vLLM 0.6.4 and 0.7.2 it follows).
 *   cuda_graphs (vLLM 0.21 on, cuda_graphs): cuda_graph_base_bytes + cuda_graph_bytes_per_size x the capture
 *     sizes up to min(2 x max_num_seqs, 512).
 *   non_torch_given: in->non_torch_bytes, inside the budget, when given.
 * With in->observed, the terms observations measured replace the model's (service/mps_observe.c): vLLM, every term
 *   inside the budget but the profile's peak becomes one observed_non_torch of in->observed_bytes (cuda_graph_bytes
 *   then 0: the observation holds it); SGLang, every term outside becomes one observed_context.
 * vLLM 0.21 on requests ceil(total x util), before int(). With in->version NULL the older arithmetic holds
 * (activation_bytes and non_torch_bytes as given, nothing else; observed_bytes in place of non_torch_bytes for vLLM,
 * of context_bytes for SGLang).
 * Worked example (tests/test_engine.c, vllm #10517 on an RTX 3090): Llama-3.1-8B, bf16, 1,952 blocks of 16 ->
 * 31,232 tokens, concurrency 1.56x for 20,000 tokens; tests/test_engine_check.c test_predicted_from_plan holds
 * 0.33's terms (ceil(total x 0.92), 64 MiB outside PyTorch, the sampler's 32 x 128,256 x 18 B, 342 MiB of CUDA
 * graphs for Llama-3-8B at 32 sequences). Errors: MP_EINVAL (no layers, block size 0, an engine outside the
 * enum), MP_EOVERFLOW.
 */
mp_status mp_engine_predict(const mp_engine_inputs *in, mp_engine_prediction *out, mp_error *err);

/*
 * The bytes an engine's weights take per GPU: the plan's weights plus what the engine's model code adds.
 * vLLM and SGLang: one RoPE cos_sin_cache per distinct rotary embedding, positions x rotary_dim in the compute
 * dtype (positions: max_position_embeddings; linear, dynamic and yarn scalings: the scaled length), and the
 * vocabulary padded to a multiple of 64 rows (VocabParallelEmbedding) in the embeddings and lm_head classes.
 * Then, vLLM and SGLang, for a dense decoder with grouped-query attention and a gated MLP in a float format, what
 * torch's caching allocator counts beyond each of vLLM's fused parameters (qkv_proj, o_proj, gate_up_proj,
 * down_proj per layer, the embedding and lm_head shards): a parameter of 10 MiB or more takes a segment rounded up
 * to 2 MiB, unsplit when at most 1 MiB would remain (c10/cuda/CUDACachingAllocator.cpp should_split).
 * TensorRT-LLM: the plan's weights. Worked example: Llama-3.1-8B bf16, tp 1: 16,060,522,496 + 131,072 x 128 x 2
 * = 16,094,076,928 bytes (every parameter a 2 MiB multiple), which vLLM prints as "Loading model weights took
 * 14.9888 GB" (vllm #10517); Qwen2.5-14B bf16 at tp 2: 14,770,530,304 + 131,072 x 128 x 2 + 48 layers x 3.5 MiB
 * (35, 25, 135 and 67.5 MiB shards) = 14,980,245,504 bytes, 13.9514 GiB against the 13.9476 vllm #13061 printed.
 * Errors: MP_EOVERFLOW.
 */
mp_status mp_engine_weights_bytes(mp_engine e, const mp_model *m, const mp_weights *w, mp_dtype compute_dtype,
                                  uint64_t tp, uint64_t *out, mp_error *err);

/* The engines' arithmetic on figures a log printed (the check of a pasted log). */

/* vLLM: blocks from available bytes: int(available // page // layers), 0 when available <= 0. */
uint64_t mp_vllm_num_blocks(double available_bytes, uint64_t page_bytes, uint64_t layers);
/* vLLM: num_blocks / cdiv(max_model_len, block_size) for uniform full attention (0 when max_model_len is 0). */
double mp_vllm_max_concurrency(uint64_t num_blocks, uint64_t block_size, uint64_t max_model_len);
/* SGLang: int(rest_gib x 2^30 // cell_size), rest = after - total x (1 - fraction), 0 when not positive. */
uint64_t mp_sglang_max_total_num_tokens(double total_gib, double after_weights_gib, double fraction,
                                        uint64_t cell_size);
/* TensorRT-LLM: int(available_bytes // kv_size_per_token) and ceil(tokens / tokens_per_block). */
uint64_t mp_trtllm_max_tokens(double available_bytes, uint64_t kv_size_per_token);
uint64_t mp_trtllm_blocks(uint64_t max_tokens, uint64_t tokens_per_block);

#endif /* MP_ENGINE_H */
