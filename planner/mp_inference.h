/*
 * mp_inference.h: inference memory (weights, KV cache, workspace, overhead) and the fit solver.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_INFERENCE_H
#define MP_INFERENCE_H

#include "mp_device.h"
#include "mp_model.h"

/* ---------------------------------------------------------------------------------------------------------
 * Inference memory.
 * ------------------------------------------------------------------------------------------------------- */
#define MP_MAX_BATCH_SIZE UINT64_C(1048576)		/* 2^20 sequences */
#define MP_MAX_SEQUENCE_LENGTH UINT64_C(16777216)	/* 2^24 tokens */
#define MP_MAX_GPUS UINT64_C(65536)

typedef struct mp_inference_req {
	mp_dtype weight_dtype;
	mp_dtype kv_cache_dtype;
	uint64_t batch_size;		/* concurrent sequences (parallel slots), >= 1 */
	uint64_t sequence_length;	/* tokens per sequence (prompt + generated), >= 1 */
	uint64_t num_gpus;		/* >= 1; tensor-parallel split when > 1 */
	uint64_t cuda_context_bytes;	/* 0 = device's, else MP_DEFAULT_CUDA_CONTEXT_BYTES */
} mp_inference_req;

typedef struct mp_inference_memory {
	uint64_t weights_bytes;		/* per GPU */
	uint64_t kv_cache_bytes;	/* per GPU */
	uint64_t activations_bytes;	/* per GPU: transient peak of the forward pass */
	uint64_t overhead_bytes;	/* per GPU: CUDA context */
	uint64_t total_bytes;		/* per GPU: sum of the above */
	uint64_t kv_cache_bytes_per_token;	/* whole model, one token of one sequence */
} mp_inference_memory;

typedef struct mp_fit {
	bool fits;
	uint64_t capacity_bytes;	/* per GPU */
	int64_t headroom_bytes;		/* capacity - total; negative when it does not fit */
	const char *binding_term;	/* the largest term: "weights", "kv_cache", ... (static string) */
	uint64_t max_batch_size;	/* largest batch at this length that fits (0 = none) */
	uint64_t max_sequence_length;	/* longest sequence at this batch that fits (0 = none) */
} mp_fit;

/* KV cache bytes for the whole model (all layers), one GPU:
 *   2 (K and V) x layers x kv_heads x head_dim x sequence_length x batch_size x bytes(kv dtype)
 * Worked example (case BR-02 B): Llama-3-8B, 32 layers, 8 KV heads, head_dim 128, 4096 tokens, batch 1,
 * fp16 -> 536,870,912 bytes (512 MiB). Errors: MP_EINVAL, MP_EOVERFLOW. */
mp_status mp_kv_cache_bytes(const mp_model *m, mp_dtype kv_dtype, uint64_t sequence_length,
			    uint64_t batch_size, uint64_t *out, mp_error *err);

/*
 * The inference plan: weights (params x format), KV cache, activations, overhead. When dev is not NULL,
 * fills fit (else fit is zeroed). Errors: MP_EINVAL naming the field, MP_EOVERFLOW.
 */
mp_status mp_plan_inference(const mp_model *m, const mp_param_count *pc, const mp_inference_req *req,
			    const mp_device *dev, mp_inference_memory *mem, mp_fit *fit, mp_error *err);

#endif /* MP_INFERENCE_H */
