/*
 * mp_llamacpp.h: llama.cpp's own memory arithmetic. Where llama.cpp puts each tensor of a GGUF file (-ngl layers on
 * the GPUs, the rest in host memory, the output layer, --n-cpu-moe and -ot overrides, --tensor-split), the model
 * buffers it allocates per device, the KV cache it allocates (-c padded, -np streams, --cache-type-k/-v, SWA
 * layers), the compute buffers the graph reserve takes (-b/-ub, flash attention), and the largest -ngl and context
 * that fit a budget. Pure arithmetic on caller-owned structs; the tensors come from the GGUF reader (model/gguf.h)
 * through the service. Part of the planner's public contract; include "memplan.h", not this file.
 *
 * Source: llama.cpp 0c1e5709 as llama-cpp-python 0.3.36 vendors it (PyPI sdist), the files named per formula:
 * src/llama-model.cpp (load_tensors: the layer split, the buffers per buffer type), src/llama-model-loader.cpp
 * (create_tensor: buffer type per tensor, get_mapping_range), src/llama-context.cpp (the context: n_ctx padded to
 * 256, n_ctx_seq, n_batch and n_ubatch, the output buffer), src/llama-kv-cache.cpp and llama-kv-cache-iswa.cpp
 * (the caches), ggml/src/ggml-alloc.c (ggml_backend_alloc_ctx_tensors_from_buft), ggml/src/ggml-backend.cpp (the
 * CPU buffer type: 32-byte alignment), ggml/src/ggml-cuda/ggml-cuda.cu (128-byte alignment, quantised rows padded
 * to 512 values). tests/ref/llamacpp/runs.json holds what that build printed for every reference run
 * (tools/groundtruth/llamacpp), and tests/test_llamacpp.c checks each figure against it.
 */
#ifndef MP_LLAMACPP_H
#define MP_LLAMACPP_H

#include "mp_ggml.h"
#include "mp_model.h"

#define MP_LLAMACPP_MAX_DEVICES 16	/* llama.cpp LLAMA_MAX_DEVICES */
#define MP_LLAMACPP_CTX_PAD 256		/* llama-context.cpp: cparams.n_ctx = GGML_PAD(n_ctx, 256) */
#define MP_LLAMACPP_MAX_SEQ 256		/* llama-cparams.h LLAMA_MAX_SEQ */

/* The kind of a device's default buffer type: how ggml pads a tensor in it. */
typedef enum mp_llamacpp_backend {
	MP_LLAMACPP_CPU = 0,	/* the CPU buffer type (and RPC servers of it): 32-byte alignment, ggml_nbytes */
	MP_LLAMACPP_CUDA = 1,	/* CUDA: 128-byte alignment; a quantised tensor whose rows are not a multiple of 512
				 * values gets the bytes of (512 - ne0 % 512) values more (MATRIX_ROW_PADDING) */
} mp_llamacpp_backend;

/* Where a tensor sits in llama.cpp's layer structure (llama-arch.cpp llm_tensor_info: LAYER_INPUT, _OUTPUT,
 * _REPEATING). */
#define MP_LLAMACPP_INPUT (-1)	/* token_embd, position_embd, token_types: always on the host */
#define MP_LLAMACPP_OUTPUT (-2)	/* output_norm, output: the output layer (layer n_layer of the split) */

/* One tensor of the file, as the loader sees it. */
typedef struct mp_llamacpp_tensor {
	uint32_t type;		/* ggml type */
	uint64_t ne0;		/* values per row */
	uint64_t bytes;		/* ggml_nbytes */
	uint64_t file_offset;	/* absolute: the file's data offset + the tensor's offset */
	uint32_t file;		/* which file of a split model */
	int32_t layer;		/* a repeating layer (0-based), MP_LLAMACPP_INPUT or MP_LLAMACPP_OUTPUT */
	bool expert;		/* a routed experts' tensor (ffn_*_exps: --n-cpu-moe, -ot "exps=CPU") */
	bool ffn;		/* a feed-forward tensor (name ffn_*: -ot "ffn_.*=CPU") */
	bool every_layer;	/* created once per layer as a duplicate (rope_freqs): one copy per buffer */
	bool duplicate;		/* token_embd created again as the output of a tied model (TENSOR_DUPLICATED): layer
				 * MP_LLAMACPP_OUTPUT, the same offset; it costs bytes only off the host */
} mp_llamacpp_tensor;

/* A tensor override of -ot: tensors of a class kept in host memory. */
typedef enum mp_llamacpp_override {
	MP_LLAMACPP_OT_NONE = 0,
	MP_LLAMACPP_OT_EXPERTS = 1,	/* -ot "exps=CPU" (what --cpu-moe writes: common/arg.cpp llm_ffn_exps_cpu_override) */
	MP_LLAMACPP_OT_FFN = 2,		/* -ot "ffn_.*=CPU" */
} mp_llamacpp_override;

typedef struct mp_llamacpp_params {
	/* the model (from the GGUF metadata) */
	uint32_t n_layer;			/* block_count */
	uint32_t n_embd, n_head, n_ff, n_vocab;	/* widths for the compute buffer; n_ff the widest dense layer */
	uint32_t n_expert, n_expert_used, n_ff_exp, n_ff_shexp;
	uint32_t n_embd_head_k, n_embd_head_v;	/* one head's key and value widths (attention.key_length, .value_length;
						 * n_embd / n_head when absent): the block rule of a quantised cache */
	uint32_t n_embd_k_gqa[MP_MAX_LAYERS];	/* per layer: key width (head_dim_k x kv heads); 0 = no KV cache */
	uint32_t n_embd_v_gqa[MP_MAX_LAYERS];
	uint8_t is_swa[MP_MAX_LAYERS];		/* the layer keeps the sliding window */
	uint32_t n_swa;				/* the window (attention.sliding_window) */
	uint32_t n_ctx_train;			/* context_length: -c 0 takes it */
	uint32_t head_count_kv_min;		/* attention.head_count_kv as the file states it, the smallest of a
						 * per-layer array; 0 absent (Ollama's estimate reads it so) */
	uint32_t head_count_max;		/* attention.head_count, the largest of an array */
	bool fused_qkv;				/* one attn_qkv projection (phi3, gpt2): K and V are views of its output */
	bool plain_ffn;				/* up, activation, down (gpt2): no gate */
	bool fused_gate_up;			/* one ffn_up of 2 x n_ff holding gate and up (phi3): no ffn_gate */
	bool learned_positions;			/* a position_embd table the host gathers from (gpt2) */
	/* the launch */
	int32_t n_gpu_layers;			/* -ngl; negative: all (llama.cpp's -1 is n_layer + 1) */
	uint32_t n_devices;			/* GPUs (0: host only) */
	mp_llamacpp_backend backend;
	double tensor_split[MP_LLAMACPP_MAX_DEVICES];	/* -ts proportions; all 0: by device_free_bytes */
	uint64_t device_free_bytes[MP_LLAMACPP_MAX_DEVICES];
	bool mmap;				/* --load-mode mmap (default): host tensors are the mapped file */
	bool kv_offload;			/* the default; -nkvo keeps every layer's KV in host memory */
	uint32_t n_cpu_moe;			/* --n-cpu-moe N: the experts of layers 0..N-1 in host memory */
	mp_llamacpp_override override;		/* -ot */
	uint32_t n_ctx;				/* -c; 0 = n_ctx_train */
	uint32_t n_seq_max;			/* -np (>= 1) */
	bool kv_unified;			/* one stream for every sequence (llama-server's default with auto slots) */
	uint32_t n_batch, n_ubatch;		/* -b (default 2048), -ub (512) */
	uint32_t type_k, type_v;		/* ggml types (f16 default) */
	bool flash_attn;			/* resolved: on, or auto on a backend that runs it */
	bool swa_full;				/* --swa-full */
	bool no_pipeline;			/* plan as llama.cpp's retry without pipeline parallelism (its compute
						 * buffers failed to allocate with 4 copies); false: as it first tries */
} mp_llamacpp_params;

/* Figures per device: index 0 is the host (llama.cpp's "CPU"), 1.. the GPUs in order. */
#define MP_LLAMACPP_SLOTS (MP_LLAMACPP_MAX_DEVICES + 1)

typedef struct mp_llamacpp_plan {
	/* llama-context.cpp */
	uint32_t n_ctx;			/* -c padded to 256 (and to n_seq_max x n_ctx_seq) */
	uint32_t n_ctx_seq;		/* cells per stream */
	uint32_t n_stream;		/* KV streams: 1 unified, else n_seq_max */
	uint32_t n_batch, n_ubatch;
	uint32_t kv_size_swa;		/* cells of the SWA cache (0 without SWA layers) */
	/* layers */
	uint32_t gpu_layers;		/* what "offloaded X/Y layers to GPU" prints as X (the output layer counted) */
	uint32_t layer_device[MP_MAX_LAYERS + 1];	/* slot of each repeating layer, then the output layer's */
	uint32_t kv_layers;		/* layers with a KV cache */
	uint32_t slot_layers[MP_LLAMACPP_MAX_DEVICES + 1];	/* repeating layers per slot (0 the host) */
	/* buffers, bytes */
	uint64_t model_bytes[MP_LLAMACPP_SLOTS];	/* "<dev> model buffer size" (host: the mapped range under mmap,
							 * summed over the files of a split model) */
	uint64_t model_buffers_host;			/* how many host model buffers (one per file under mmap) */
	uint64_t kv_bytes[MP_LLAMACPP_SLOTS];		/* "<dev> KV buffer size" (both caches of an SWA model) */
	uint64_t kv_bytes_swa[MP_LLAMACPP_SLOTS];	/* of which the SWA cache's buffer (printed on a line of its own) */
	uint32_t kv_layers_swa;				/* layers of the SWA cache (kv_layers - this: the other's) */
	uint64_t k_bytes, v_bytes;			/* "K (type): X MiB, V (type): Y MiB", the non-SWA cache */
	uint64_t k_bytes_swa, v_bytes_swa;		/* the SWA cache's */
	uint64_t compute_bytes[MP_LLAMACPP_SLOTS];	/* "<dev> compute buffer size", modelled (see llamacpp.c) */
	uint32_t sched_copies;				/* "sched copies = N": 4 (GGML_SCHED_MAX_COPIES) with pipeline
							 * parallelism, else 1 */
	bool pipeline_fallback;				/* set by the searches below: the pipeline-parallel plan did not
							 * fit and this is llama.cpp's retry without it */
	uint64_t output_bytes;				/* "CPU output buffer size": logits and embeddings slots */
	uint64_t total_bytes[MP_LLAMACPP_SLOTS];	/* model + KV + compute (+ output on the host) */
} mp_llamacpp_plan;

/*
 * The context llama.cpp makes (llama-context.cpp llama_context::llama_context): n_ctx = GGML_PAD(c ? c : n_ctx_train,
 * 256); unified: n_ctx_seq = n_ctx; else n_ctx_seq = GGML_PAD(n_ctx / n_seq_max, 256) and n_ctx = n_ctx_seq x
 * n_seq_max; n_batch = min(the n_ctx asked for, b) (computed before the padding), n_ubatch = min(n_batch, ub).
 * Worked example: -c 1000 -> n_ctx 1,024, n_batch 1,000; -c 4096 -np 3 -> n_ctx_seq 1,536, n_ctx 4,608. Errors: MP_EINVAL (n_seq_max 0 or above 256, no context).
 */
mp_status mp_llamacpp_context(const mp_llamacpp_params *p, mp_llamacpp_plan *out, mp_error *err);

/*
 * Every buffer of one launch: the layer split, the model buffers per device, the KV cache, the compute buffers.
 * Layers (llama-model.cpp load_tensors): i_gpu_start = max(n_layer + 1 - ngl, 0); layer il (the output layer is
 * il = n_layer) is on a GPU when il >= i_gpu_start, the GPU whose cumulative split share first exceeds
 * (il - i_gpu_start) / min(ngl, n_layer + 1) (std::upper_bound over the normalised -ts prefix sums); the input layer
 * is always on the host. A tensor takes its layer's device, unless --n-cpu-moe or -ot keeps it on the host.
 * Model buffers: on the host under mmap, the file range the host tensors span (get_mapping_range: max(offset +
 * bytes) - min(offset), per file); elsewhere the sum of each tensor's alloc size padded to the buffer type's
 * alignment (ggml-alloc.c). A tied output (no output.weight) is token_embd created again in the output layer's
 * buffer (TENSOR_DUPLICATED: the caller lists it with `duplicate` set), so it costs its bytes there unless that is
 * the host.
 * KV (llama-kv-cache.cpp): per layer with a cache, K = row(type_k, n_embd_k_gqa) x kv_size x n_stream, V the same
 * with n_embd_v_gqa (without flash attention V is transposed and every layer's V row is the widest), on the layer's
 * device (the host with -nkvo); an SWA layer's kv_size is min(n_ctx_seq, GGML_PAD(n_swa x (unified ? n_seq_max : 1)
 * + n_ubatch, 256)) (llama-kv-cache-iswa.cpp), n_ctx_seq with --swa-full.
 * Compute buffers: a model of ggml-alloc's widest moment on each device and the split inputs the scheduler copies
 * into it; with pipeline parallelism (several GPUs, every layer offloaded, KV offloaded, no override) sched_copies = 4
 * and every input copy and host graph input is kept 4 times (llamacpp.c compute_bytes has the terms and their
 * sources; tests/ref/llamacpp/README.md the error per class).
 * Worked example (tests/test_llamacpp.c, tests/ref/llamacpp/runs.json): the llama reference in q8_0, -c 4096 ->
 * CPU_Mapped 4.26 MiB, KV 8.00 MiB (K 4.00, V 4.00); the llama reference in f16, -c 2048 -ngl 99 -ts 1,1 on two GPUs
 * -> compute CPU 10.52, GPU0 16.02, GPU1 16.02 MiB (llama.cpp printed 10.55, 16.04, 15.55). Errors: those of mp_llamacpp_context, MP_EINVAL (a tensor's
 * layer beyond n_layer, a type that is not ggml's, more than 16 devices), MP_EOVERFLOW.
 */
mp_status mp_llamacpp_plan_buffers(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
				   mp_llamacpp_plan *out, mp_error *err);

/*
 * The largest -ngl (0 to n_layer + 1) whose every GPU total stays within budget_bytes[gpu] (index 0 unused), and its
 * plan in *out; -1 when not even ngl 0 fits the GPUs (the compute buffer of the first GPU). A pipeline-parallel
 * plan (several GPUs, every layer) that does not fit is tried again without pipeline parallelism, as llama.cpp
 * retries when its compute buffers fail to allocate (llama-context.cpp sched_reserve); *out then has sched_copies 1
 * and pipeline_fallback set, and the launch's plan is that of p with no_pipeline. Worked example
 * (tests/test_llamacpp.c): the llama reference in f16, -c 2048 on two GPUs -ts 1,1, with budgets of the plan
 * without pipeline parallelism -> -ngl 5 with sched_copies 1 (4 copies need 16.02 MiB of compute on the first
 * GPU, 8.01 without). Errors: those of mp_llamacpp_plan_buffers.
 */
mp_status mp_llamacpp_max_gpu_layers(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
				     const uint64_t *budget_bytes, int32_t *ngl, mp_llamacpp_plan *out, mp_error *err);

/*
 * The largest -c (a multiple of 256, at most limit) at which the launch p (its -ngl as given) fits budget_bytes on
 * every GPU, with llama.cpp's retry without pipeline parallelism as above; 0 when not even 256 does. Errors: those
 * of mp_llamacpp_plan_buffers.
 */
mp_status mp_llamacpp_max_context(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
				  const uint64_t *budget_bytes, uint32_t limit, uint32_t *n_ctx, mp_error *err);

/* The KV cache types llama.cpp's --cache-type-k/-v take (common/arg.cpp kv_cache_types): f32, f16, bf16, q8_0,
 * q4_0, q4_1, iq4_nl, q5_0, q5_1. */
bool mp_llamacpp_kv_type_ok(uint32_t type);


/*
 * Whether llama.cpp accepts the cache types with flash attention on or off (llama-context.cpp
 * llama_init_from_model at 0c1e5709): a quantised V cache needs flash attention ("quantized V cache was requested,
 * but this requires Flash Attention"); with flash attention a quantised K (V) type's block must divide
 * n_embd_head_k (n_embd_head_v). Errors: MP_EINVAL naming the field (pointer_k / pointer_v) and the rule.
 * Worked example (tests/test_llamacpp_engine.c): -ctv q8_0 -fa off -> refused; q4_0 keys on the gpt2 reference's
 * 64-value heads -> accepted.
 */
mp_status mp_llamacpp_check_cache_types(const mp_llamacpp_params *p, const char *pointer_k, const char *pointer_v,
					mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * Speed bounds of a placement: a roofline over the layers on each device.
 * ------------------------------------------------------------------------------------------------------- */

/* What one device moves and computes at (0 = unknown: its time is not bounded). */
typedef struct mp_llamacpp_rate {
	double bandwidth_bytes_per_second;	/* its memory's (the host's: STREAM triad, POST /v1/calibrations cpu) */
	double flops_per_second;		/* the dense rate its matrix products run at */
} mp_llamacpp_rate;

typedef struct mp_llamacpp_speed_req {
	mp_llamacpp_rate rate[MP_LLAMACPP_SLOTS];	/* 0 the host, 1.. the GPUs of the plan */
	uint32_t sequences;		/* decoding at once (busy -np slots), >= 1 */
	uint64_t context_tokens;	/* cached tokens per sequence at the decode step */
	uint64_t prompt_tokens;		/* per sequence, for the prefill */
} mp_llamacpp_speed_req;

typedef struct mp_llamacpp_phase {
	double bytes[MP_LLAMACPP_SLOTS];	/* moved on each device */
	double flops[MP_LLAMACPP_SLOTS];
	double seconds[MP_LLAMACPP_SLOTS];	/* max(bytes / bandwidth, flops / rate); 0 where it has no work */
	bool compute_bound[MP_LLAMACPP_SLOTS];
	bool unknown[MP_LLAMACPP_SLOTS];	/* work there but no rate given */
	bool known;				/* every device with work has its rates */
	double seconds_total;			/* the devices one after another (the layers run in order) */
} mp_llamacpp_phase;

typedef struct mp_llamacpp_speed {
	mp_llamacpp_phase decode, prefill;
	double decode_tokens_per_second_per_sequence;	/* 1 / decode.seconds_total (0 when not known) */
	double decode_tokens_per_second_total;		/* sequences / decode.seconds_total */
	double prefill_tokens_per_second;		/* sequences x prompt_tokens / prefill.seconds_total */
	double expert_fraction_decode;			/* the share of each expert tensor a decode step reads */
} mp_llamacpp_speed;

/*
 * Floors on a decode step and a prefill of the placement pl (mp_llamacpp_plan_buffers of p and t): each tensor is
 * charged to the device that holds it (llama.cpp runs a layer's operations where its weights are), each layer's
 * attention where its cache is (the host with -nkvo), and each device's time is max(bytes / bandwidth, FLOPs /
 * rate); the devices work one after another for one batch, so the step is their sum (llama.cpp's pipeline
 * parallelism overlaps micro-batches of a prefill, not the layers of one token).
 *   Decode (one token for each of `sequences`): every weight is read once per step, a routed expert tensor in the
 *   share of its experts the step touches, E x (1 - (1 - k/E)^sequences) / E with k used of E (each token's
 *   experts independent and uniform: the expected distinct experts), token_embd as its gathered rows; each
 *   sequence reads its K and V over context_tokens cells (a sliding-window layer min(context, n_swa)); FLOPs are 2
 *   per weight value and token (experts: k/E of their values) and 2 x (n_embd_head_k + n_embd_head_v) x n_head per
 *   cached cell and layer.
 *   Prefill (prompt_tokens for each sequence, in ubatches of n_ubatch): the weights are read once per ubatch (every
 *   expert touched), K and V written once and read causally (half the square of the prompt per ubatch width); the
 *   FLOPs of the decode per token over every prompt token, attention over the causal half. The host computes its
 *   own layers: llama.cpp's default offload of large-batch host matmuls to the GPU (op offload, weights copied
 *   over PCIe per ubatch) is not modelled.
 * Worked example (tests/test_llamacpp_engine.c): the llama reference in q8_0 wholly on one GPU of 1e12 B/s and 1e14
 * FLOP/s, one sequence at 4,095 cached tokens: every tensor but token_embd (4,465,664 - 557,056 = 3,908,608 bytes)
 * and 4,095 cells x 4 layers x 512 bytes of f16 cache, 12,295,168 bytes: a 12.3 us memory-bound step.
 * Errors: MP_EINVAL (sequences 0; a tensor as mp_llamacpp_plan_buffers refuses it).
 */
mp_status mp_llamacpp_speed_of(const mp_llamacpp_params *p, const mp_llamacpp_tensor *t, size_t n_tensors,
			       const mp_llamacpp_plan *pl, const mp_llamacpp_speed_req *rq, mp_llamacpp_speed *out,
			       mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * Ollama 0.32.15's own rules around the llama-server it starts (the source read: github.com/ollama/ollama at tag
 * v0.32.15, the files named per rule). Ollama builds the llama-server command from its settings (llm/
 * llama_server.go startLlamaServer): -c num_ctx x OLLAMA_NUM_PARALLEL, -np OLLAMA_NUM_PARALLEL, -b and -ub
 * num_batch, -ngl num_gpu (none when unset: llama-server's --fit places the layers), --cache-type-k/-v
 * OLLAMA_KV_CACHE_TYPE, --flash-attn from OLLAMA_FLASH_ATTENTION (auto when unset).
 * ------------------------------------------------------------------------------------------------------- */

/*
 * The context Ollama takes when neither num_ctx nor OLLAMA_CONTEXT_LENGTH is set (server/routes.go Serve: the
 * GPUs' total memory less OLLAMA_GPU_OVERHEAD each, summed): at least 47 GiB -> 262,144; at least 23 GiB -> 32,768;
 * else 4,096. Worked example (tests/test_llamacpp_engine.c): one 24 GiB RTX 4090 -> 32,768; an H100 -> 262,144.
 */
uint32_t mp_ollama_default_num_ctx(uint64_t total_vram_bytes);

/*
 * Ollama's estimate of a model's VRAM (llm/llama_server.go PredictServerVRAM): the file's bytes + 2 x block_count x
 * head_count_kv (the smallest, 1 when absent) x (embedding_length / head_count, the largest) x num_ctx x 2 (an f16
 * cache). num_ctx is the effective context: min(num_ctx, context_length) x OLLAMA_NUM_PARALLEL. Never fails
 * (saturates at UINT64_MAX).
 */
uint64_t mp_ollama_predict_server_vram(uint64_t file_bytes, uint64_t block_count, uint64_t head_count_kv_min,
				       uint64_t head_dim, uint64_t num_ctx);

/*
 * num_batch when the request and the model set none (server/sched.go automaticGenerationBatch): without flash
 * attention on CUDA, 256 when the context exceeds 4,096 and a CUDA GPU has at most 8 GiB, else 512; otherwise 2,048
 * above a 32,768 context, 1,024 above 4,096, else 512, lowered (2,048 -> 1,024 -> 512) while it does not fit:
 * predicted above 80% of available, or (2,048) above 60%, (1,024) above 75%, or the batch's surcharge (2,048: 2 GiB;
 * 1,024: 768 MiB) above 80% of available less predicted. available 0 or predicted 0: it fits. smallest_gpu_bytes is
 * the smallest CUDA GPU's memory. Worked example (tests/test_llamacpp_engine.c): a 32,768 context with 4 GiB
 * predicted on 24 GiB -> 1,024.
 */
uint32_t mp_ollama_auto_num_batch(uint64_t effective_ctx, uint64_t predicted_vram, uint64_t available,
				  bool flash_attention_disabled, bool cuda, uint64_t smallest_gpu_bytes);

#endif /* MP_LLAMACPP_H */
