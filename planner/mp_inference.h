/*
 * mp_inference.h: inference memory (weights per format, KV cache, prefill workspace, overhead) and the fit
 * solver. Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_INFERENCE_H
#define MP_INFERENCE_H

#include "mp_device.h"
#include "mp_model.h"

#define MP_MAX_BATCH_SIZE UINT64_C(1048576)       /* 2^20 sequences */
#define MP_MAX_SEQUENCE_LENGTH UINT64_C(16777216) /* 2^24 tokens */
#define MP_MAX_GPUS UINT64_C(65536)
#define MP_DEFAULT_KV_BLOCK_SIZE 16     /* vLLM's default block_size, tokens */
#define MP_DEFAULT_INT4_GROUP_SIZE 128  /* AutoGPTQ / AutoAWQ default group_size */
#define MP_PYTORCH_ALLOCATION_BYTES 512 /* c10/cuda/CUDACachingAllocator.cpp kMinBlockSize */

/* Which runtime holds the weights: it decides per-tensor rounding and the extra buffers. */
typedef enum mp_weight_layout {
	MP_LAYOUT_AUTO = 0, /* GGUF when any class uses a GGUF block format, else PACKED */
	MP_LAYOUT_PACKED,   /* the tensors as a checkpoint stores them: exact sums, no buffers */
	MP_LAYOUT_PYTORCH,  /* each tensor rounded up to 512 B (CUDA caching allocator) + RoPE inv_freq buffers */
	MP_LAYOUT_GGUF,     /* llama.cpp: + rope_freqs (f32) for llama3-type RoPE scaling */
} mp_weight_layout;

/* ---------------------------------------------------------------------------------------------------------
 * Weight formats.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_int4_scheme {
	MP_INT4_GPTQ = 0, /* AutoGPTQ QuantLinear: qweight, qzeros, scales, g_idx */
	MP_INT4_AWQ = 1,  /* AutoAWQ WQLinear_GEMM: qweight, qzeros, scales */
} mp_int4_scheme;

typedef struct mp_weight_formats {
	mp_dtype cls[MP_TC_COUNT]; /* MP_DTYPE_INVALID = the default for the class (see mp_weight_bytes) */
	uint64_t int4_group_size;  /* 0 = 128; a group larger than a row means one group per row */
	mp_int4_scheme int4_scheme;
	bool nf4_no_double_quant; /* false: absmax double-quantised (QLoRA, bnb_4bit_use_double_quant) */
	mp_weight_layout layout;
	const char *json_pointer; /* base of the request's fields in errors ("/weight_formats/mlp" under it); borrowed */
} mp_weight_formats;

typedef struct mp_weight_class_bytes {
	mp_dtype format;     /* format of the class's matrices */
	uint64_t parameters; /* whole model */
	uint64_t bytes;      /* per GPU, scales and zero points included */
} mp_weight_class_bytes;

typedef struct mp_weights {
	mp_weight_class_bytes cls[MP_TC_COUNT];
	mp_weight_layout layout; /* resolved (never AUTO) */
	uint64_t buffers_bytes;  /* per GPU: RoPE tables, router correction biases */
	uint64_t total_bytes;    /* per GPU: classes + buffers */
} mp_weights;

/*
 * Weight bytes per GPU for `tp` tensor-parallel ranks. `weight_dtype` is the default format of every matrix;
 * defaults per class: embeddings and lm_head keep `compute_dtype` when weight_dtype is fp8_*, int8, int4 or
 * nf4 (bitsandbytes skips lm_head, AutoGPTQ/AWQ and FP8 checkpoints quantise nn.Linear layers of the
 * decoder only) and take weight_dtype for float and GGUF formats; norms and every vector default to fp32
 * under GGUF formats (llama.cpp keeps 1-D tensors f32) and to compute_dtype otherwise.
 * Layouts per matrix of r rows x c cols:
 *   fp32/bf16/fp16: r c x size.  fp8_e4m3/e5m2: r c + one fp32 weight_scale (vLLM Fp8LinearMethod, per-tensor).
 *   int8: r c + r fp32 scales (per output channel; bitsandbytes Int8Params.SCB).
 *   int4 GPTQ: qweight r c / 2 + qzeros ceil(c/g) x ceil(r/8) x 4 + scales ceil(c/g) x r x 2 (fp16)
 *     + g_idx c x 4 (AutoGPTQ qlinear); AWQ: the same without g_idx (AutoAWQ WQLinear_GEMM).
 *   nf4: r c / 2 + absmax per 64-value block (fp32; with double quantisation uint8 + fp32 per 256 blocks
 *     + an fp32 offset + the 256-entry fp32 nested code) + the 16-entry fp32 NF4 code
 *     (bitsandbytes functional.quantize_4bit, QuantState.as_dict).
 *   q8_0 q4_0 q4_K q5_K q6_K: r x ceil(c / block) x block bytes (ggml-common.h).
 * Worked example (case BR-07 B): Llama-3-8B, q8_0 matrices, fp32 norms -> 8,532,934,656 bytes.
 * Errors: MP_EINVAL naming "/weight_formats/<class>", MP_EOVERFLOW.
 */
mp_status mp_weight_bytes(const mp_model *m, mp_dtype weight_dtype, mp_dtype compute_dtype, const mp_weight_formats *f,
                          uint64_t tp, mp_weights *out, mp_error *err);

/* One tensor of the inventory under a weights answer's formats (mp_weight_tensors). */
typedef struct mp_tensor_bytes {
	mp_dtype dtype;		/* the format it is stored in; a buffer: fp32 (MP_DTYPE_INVALID for int64 values) */
	uint64_t parameters;	/* values of all its copies and layers (0 for a buffer, and when not counted) */
	uint64_t bytes;		/* on one of tp ranks, all its copies and layers (0 when not counted) */
	bool counted;		/* false: a state_dict entry no checkpoint or engine holds (MP_TF_UNCOUNTED) */
} mp_tensor_bytes;

/*
 * mp_weight_bytes (into *w), and each inventory entry's share of it into rows[i], entry i of
 * mp_inventory_at(&m->inv, i): the sum of rows[].bytes over parameters and buffers is w->total_bytes less the
 * layout's own RoPE tables (mp_weights.buffers_bytes holds both). n_rows must be at least mp_inventory_size(&m->inv)
 * (the caller owns rows). Errors: those of mp_weight_bytes; MP_EINTERNAL when rows is too short.
 * Worked example (tests/test_types.c): Helium's default config in bf16 at tp 1: model.layers.{i}.self_attn.q_proj.weight,
 * 24 layers of [2560, 2560], 157,286,400 parameters, 314,572,800 bytes.
 */
mp_status mp_weight_tensors(const mp_model *m, mp_dtype weight_dtype, mp_dtype compute_dtype,
			    const mp_weight_formats *f, uint64_t tp, mp_weights *w, mp_tensor_bytes *rows, size_t n_rows,
			    mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * Inference request and result.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_attention_impl {
	MP_ATTENTION_NONE = 0, /* no prefill workspace: weights + KV cache + overhead (steady decode) */
	MP_ATTENTION_FUSED,    /* sdpa / flash attention: no score matrix is kept */
	MP_ATTENTION_EAGER,    /* scores materialised: batch x heads x tokens x tokens */
} mp_attention_impl;

typedef enum mp_length_scope {
	MP_LENGTH_PER_SEQUENCE = 0, /* every one of batch_size slots holds sequence_length tokens (ollama) */
	MP_LENGTH_SHARED = 1,       /* sequence_length tokens in all, shared by the slots (llama.cpp -c) */
} mp_length_scope;

typedef enum mp_mla_cache {
	MP_MLA_LATENT = 0,   /* kv_lora_rank + qk_rope_head_dim per token per layer (vLLM, SGLang, llama.cpp) */
	MP_MLA_EXPANDED = 1, /* full K (heads x (nope + rope)) and V (heads x v) per token (transformers) */
} mp_mla_cache;

typedef struct mp_inference_req {
	mp_dtype weight_dtype;
	mp_dtype kv_cache_dtype;
	uint64_t batch_size;         /* concurrent sequences (parallel slots), >= 1 */
	uint64_t sequence_length;    /* tokens per sequence (prompt + generated), >= 1 */
	uint64_t num_gpus;           /* >= 1; tensor-parallel split when > 1 */
	uint64_t cuda_context_bytes; /* 0 = device's, else MP_DEFAULT_CUDA_CONTEXT_BYTES */
	const char *json_pointer;    /* where the request sits in the caller's document ("" or NULL: the top,
	                                "/jobs/3/inference"): error fields are named under it. Borrowed. */
} mp_inference_req;

/* Everything beyond the basic request; a zeroed struct (or NULL) means every documented default. */
typedef struct mp_inference_opts {
	uint64_t tensor_parallel_size; /* 0 = num_gpus */
	mp_weight_formats formats;
	mp_dtype compute_dtype; /* activations and logits; MP_DTYPE_INVALID = bf16 */
	uint64_t kv_block_size; /* paged KV: tokens per block; 0 = 16, 1 = contiguous */
	mp_length_scope length_scope;
	mp_mla_cache mla_cache;
	mp_attention_impl attention;
	uint64_t max_num_batched_tokens; /* prefill chunk; 0 = the whole batch in one forward */
	uint64_t logits_positions;       /* kept logits per sequence; 0 = 1 (the last position) */
	double gpu_memory_utilization;   /* fraction of capacity the plan may use, (0, 1]; 0 = 1 */
	bool allow_beyond_max_position;  /* accept sequence_length > the model's context without RoPE scaling */
	/* the weights per GPU as a checkpoint holds them at this plan's tensor-parallel degree (its own tensors'
	 * exact bytes, model/checkpoint.h); NULL = computed from the inventory and the formats. Borrowed. Other
	 * degrees (the smallest GPU count's search) are computed. */
	const struct mp_weights *weights;
} mp_inference_opts;

typedef struct mp_kv_detail {
	uint64_t bytes_per_token;            /* per GPU, all layers, one token of one sequence, full-attention layers */
	uint64_t values_per_token_per_layer; /* per GPU: K and V (or the MLA latent) of one layer */
	uint64_t kv_heads_per_gpu;           /* 0 for the latent MLA cache */
	uint64_t kv_head_replication;        /* ranks sharing one KV head's copy (1 = none) */
	uint64_t full_layers, window_layers;
	uint64_t tokens_full;   /* allocated per sequence (or in all, shared) on full-attention layers */
	uint64_t tokens_window; /* allocated on sliding-window layers */
	uint64_t block_size;    /* tokens per block (1 = contiguous) */
	/* --- appended for issue 14: the constant state of recurrent layers (Mamba) --- */
	uint64_t recurrent_layers;                   /* layers with a recurrent state */
	uint64_t recurrent_state_bytes_per_sequence; /* per GPU, all recurrent layers, one sequence */
	uint64_t recurrent_state_bytes;              /* per GPU: per sequence x sequences (included in the KV bytes) */
	uint64_t shared_kv_layers;                   /* attention layers that reuse another layer's K and V */
} mp_kv_detail;

/* The state one sequence keeps in the recurrent layers, per GPU (planner/recurrent.c). */
typedef struct mp_recurrent_state {
	uint64_t layers;
	uint64_t conv_bytes_per_layer; /* the conv state: conv_kernel - 1 inputs per conv channel, conv dtype */
	uint64_t ssm_bytes_per_layer;  /* the scan's state, state dtype */
	uint64_t bytes_per_sequence;   /* all layers */
} mp_recurrent_state;

/* See planner/recurrent.c for the layout and its source. Errors: MP_EOVERFLOW. Fills *out. */
mp_status mp_recurrent_state_bytes(const mp_model *m, mp_dtype conv_dtype, mp_dtype state_dtype, uint64_t tp,
                                   mp_recurrent_state *out, mp_error *err);

typedef struct mp_workspace {
	uint64_t prefill_tokens;        /* tokens in one prefill forward (the chunk) */
	uint64_t attention_phase_bytes; /* live transient at the attention of the last layer */
	uint64_t mlp_phase_bytes;       /* live transient at the MLP of the last layer */
	uint64_t head_phase_bytes;      /* live transient at the final norm and lm_head */
	uint64_t scores_bytes;          /* eager: the score matrices alive at the softmax (0 for fused) */
	uint64_t mask_bytes;            /* the materialised attention mask */
	uint64_t logits_bytes;          /* the kept logits: batch x positions x vocab x compute dtype */
	const char *peak_phase;         /* "attention", "mlp" or "head" (static string) */
} mp_workspace;

typedef struct mp_inference_memory {
	uint64_t weights_bytes;     /* per GPU */
	uint64_t kv_cache_bytes;    /* per GPU */
	uint64_t activations_bytes; /* per GPU: transient peak of the prefill forward (the kept logits included) */
	uint64_t overhead_bytes;    /* per GPU: CUDA context */
	uint64_t total_bytes;       /* per GPU: sum of the above */
	uint64_t kv_cache_bytes_per_token; /* per GPU, all layers, one token of one sequence */
	/* --- appended for issue #3 --- */
	mp_weights weights;
	mp_kv_detail kv;
	mp_workspace workspace;
	uint64_t tensor_parallel_size;
	uint64_t context_limit; /* longest sequence the model accepts (0 = unbounded by the request) */
} mp_inference_memory;

#define MP_MAX_TP_DEGREES 64

typedef struct mp_fit {
	bool fits;
	uint64_t capacity_bytes;      /* per GPU */
	int64_t headroom_bytes;       /* budget - total; negative when it does not fit */
	const char *binding_term;     /* the largest term: "weights", "kv_cache", ... (static string) */
	uint64_t max_batch_size;      /* largest batch at this length that fits (0 = none) */
	uint64_t max_sequence_length; /* longest sequence at this batch that fits (0 = none) */
	/* --- appended for issue #3 --- */
	uint64_t budget_bytes;  /* floor(capacity x gpu_memory_utilization) */
	uint64_t reserve_bytes; /* capacity - budget */
	uint64_t min_gpus;      /* smallest valid tensor-parallel degree that fits; 0 = none */
	/* max_sequence_length is the model's context (mp_model_sequence_ceiling), not memory: it fits there and the
	 * search stops (allow_beyond_max_position_embeddings lifts it) */
	bool max_sequence_length_at_context;
} mp_fit;

/* KV cache bytes for the whole model (all layers), one GPU, contiguous, every sequence its own length:
 *   2 (K and V) x layers x kv_heads x head_dim x sequence_length x batch_size x bytes(kv dtype)
 * (per row of kv_heads x head_dim values, so block formats carry their scales; MLA: the latent).
 * Worked example (case BR-02 B): Llama-3-8B, 32 layers, 8 KV heads, head_dim 128, 4096 tokens, batch 1,
 * fp16 -> 536,870,912 bytes (512 MiB). Errors: MP_EINVAL, MP_EOVERFLOW. */
mp_status mp_kv_cache_bytes(const mp_model *m, mp_dtype kv_dtype, uint64_t sequence_length, uint64_t batch_size,
                            uint64_t *out, mp_error *err);

/*
 * The KV cache under every option of req (paging, windows, MLA form, tensor parallelism, length scope), per
 * GPU. Worked example (case BR-05): DeepSeek-V3 MLA latent (61 layers x 576 values), 32768 tokens, q8_0 ->
 * 61 x 32768 x 576 x 34 / 32 = 1,223,294,976 bytes. Errors: MP_EINVAL, MP_EOVERFLOW.
 */
mp_status mp_kv_cache(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *opts, uint64_t *bytes,
                      mp_kv_detail *detail, mp_error *err);

/*
 * The transient peak of one prefill forward over what persists (weights, KV cache), per GPU, following the
 * tensors transformers' modeling files keep alive (see workspace.c for each term and its source). Fills ws.
 * Errors: MP_EOVERFLOW.
 */
mp_status mp_prefill_workspace(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *opts,
                               mp_workspace *ws, mp_error *err);

/*
 * Valid tensor-parallel degrees: t divides the attention heads, every FFN width (dense, expert, shared), and
 * KV heads either divide by t or t is a multiple of them (heads replicated). Fills up to MP_MAX_TP_DEGREES
 * ascending values; returns how many there are in all. Worked example (case BI-01): 52 heads, 52 KV heads,
 * FFN 26624 -> 1, 2, 4, 13, 26, 52.
 */
size_t mp_valid_tp_degrees(const mp_model *m, uint64_t *out, size_t cap);

/* Whether t is a valid tensor-parallel degree by the rule of mp_valid_tp_degrees (t = 0 is not). */
bool mp_tp_degree_ok(const mp_model *m, uint64_t t);

/*
 * The one tensor-parallel check of every planner (inference, training): MP_OK when mp_tp_degree_ok, else
 * MP_EINVAL naming /tensor_parallel_size with the rule and the list of valid degrees. Worked example: 52
 * heads, FFN 17920, tp 8 -> "... valid: 1, 2, 4" (13, 26 and 52 divide the heads but not the FFN width).
 */
mp_status mp_check_tp_degree(const mp_model *m, uint64_t tp, const char *base, mp_error *err);

/*
 * The inference plan: weights (per class and format), KV cache, prefill workspace, overhead. When dev is not
 * NULL, fills fit (else fit is zeroed): the verdict against floor(capacity x gpu_memory_utilization), the
 * largest batch and length that fit, and the smallest GPU count that does. opts may be NULL (defaults; no
 * prefill workspace). pc is the model's parameter count (mp_count_parameters). Errors: MP_EINVAL naming the
 * field, MP_EOVERFLOW.
 */
mp_status mp_plan_inference_ex(const mp_model *m, const mp_param_count *pc, const mp_inference_req *req,
                               const mp_inference_opts *opts, const mp_device *dev, mp_inference_memory *mem,
                               mp_fit *fit, mp_error *err);

/*
 * The verdict alone, for a plan already computed (mem) on dev: capacity, budget (capacity x
 * gpu_memory_utilization), fits, headroom and the binding (largest) term; the solved fields (max_batch_size,
 * max_sequence_length, min_gpus) are left 0. Cheap: no further planning, so a scheduler's many device x GPU
 * count pairs cost one mp_plan_inference_ex (without fit) each. Worked example: 17,638,465,536 bytes on an
 * H200 (150,109,880,320 usable) -> fits, headroom 132,471,414,784, binding "weights". No errors.
 */
void mp_fit_verdict(const mp_inference_memory *mem, const mp_inference_opts *opts, const mp_device *dev, mp_fit *fit);

/*
 * The one term of an inference plan that depends on the device: the per-GPU overhead, the request's
 * cuda_context_bytes, else the device's (dev may be NULL), else MP_DEFAULT_CUDA_CONTEXT_BYTES. Every other term
 * is the device's business only through the verdict, so a scheduler's batch plans each job once per GPU count
 * and rebases it per device (mp_inference_on_device). Example: no override, an H200 profile without its own
 * figure -> 552,402,944.
 */
uint64_t mp_inference_overhead_bytes(const mp_inference_req *req, const mp_device *dev);

/*
 * mem (planned with dev NULL) as mp_plan_inference_ex would have planned it on dev: the overhead and the total
 * move with the device's CUDA context. false when the total would pass 2^53 (mp_plan_inference_ex's MP_EOVERFLOW).
 * Worked example (tests/test_inference.c): a device with cuda_context_bytes 1 GiB adds 521,338,880 bytes to a
 * Llama-3-8B plan's total. out may be mem.
 */
bool mp_inference_on_device(const mp_inference_memory *mem, const mp_inference_req *req, const mp_device *dev,
                            mp_inference_memory *out);

/* mp_plan_inference_ex with every option at its default (no prefill workspace: weights + KV + overhead). */
mp_status mp_plan_inference(const mp_model *m, const mp_param_count *pc, const mp_inference_req *req,
                            const mp_device *dev, mp_inference_memory *mem, mp_fit *fit, mp_error *err);

#endif /* MP_INFERENCE_H */
