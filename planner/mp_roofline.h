/*
 * mp_roofline.h: the roofline model (Williams, Waterman, Patterson, CACM 2009): arithmetic intensity,
 * attainable FLOP/s and time floors of single operations, a transformer step (prefill and decode) built from
 * them, and Little's law for the bytes in flight a device needs. Part of the planner's public contract;
 * include "memplan.h", not this file. Pure: the caller owns every struct, nothing allocates.
 */
#ifndef MP_ROOFLINE_H
#define MP_ROOFLINE_H

#include "mp_device.h"
#include "mp_inference.h"
#include "mp_model.h"

/* ---------------------------------------------------------------------------------------------------------
 * Operations.
 *
 * Traffic is the compulsory minimum: each input read once from DRAM and each output written once (Williams
 * et al. sec. 2; forgetting the write is the classic mistake). It is a lower bound, so time_seconds is a
 * floor. FLOPs count a multiply-add as 2.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_op_kind {
	MP_OP_RAW = 0,     /* flops + bytes given */
	MP_OP_ELEMENTWISE, /* elements x (inputs read, outputs written), flops_per_element each */
	MP_OP_REDUCTION,   /* rows x cols -> rows (sum over cols): 1 FLOP per element */
	MP_OP_SOFTMAX,     /* rows x cols -> rows x cols: 5 FLOPs per element (max, sub, exp, sum, div) */
	MP_OP_LAYERNORM,   /* rows x cols + weight and bias (cols each): 8 FLOPs per element */
	MP_OP_RMSNORM,     /* rows x cols + weight (cols): 4 FLOPs per element (square, sum, scale, weight) */
	MP_OP_MATVEC,      /* (k x n matrix) x (k vector): a matmul with m = 1 */
	MP_OP_MATMUL,      /* (m x k) x (k x n) -> m x n: 2mkn FLOPs */
	MP_OP_ATTENTION,   /* scaled dot-product attention, prefill or decode, fused or eager */
	MP_OP_KIND_COUNT
} mp_op_kind;

/* The execution unit whose peak applies. */
typedef enum mp_unit {
	MP_UNIT_VECTOR = 0, /* CUDA cores / SIMD: elementwise, reductions, norms, softmax */
	MP_UNIT_MATRIX = 1, /* tensor cores / matrix engines: matmul, matvec, attention */
} mp_unit;

typedef struct mp_op {
	mp_op_kind kind;
	mp_dtype dtype; /* every operand unless overridden below; the math type of vector ops */
	/* elementwise */
	uint64_t elements;        /* values per input tensor */
	uint64_t inputs, outputs; /* tensors read and written (c = a + b: 2 and 1) */
	double flops_per_element; /* c = a + b: 1; relu: 1; copy: 0 */
	/* reduction, softmax, norms */
	uint64_t rows, cols;
	/* matmul, matvec: A is m x k (activations), B is k x n (weights), C is m x n */
	uint64_t m, k, n;
	mp_dtype a_dtype, b_dtype, c_dtype; /* MP_DTYPE_INVALID = dtype */
	mp_dtype compute_dtype;             /* MP_DTYPE_INVALID = the wider of a and b (weight-only quantized
	                                       weights are dequantized into the activation type) */
	/* attention: batch sequences, q_tokens queries each over kv_tokens keys/values */
	uint64_t batch, heads, kv_heads, head_dim, q_tokens, kv_tokens;
	bool causal;       /* query i sees keys up to kv_tokens - q_tokens + i */
	bool eager;        /* scores materialised: S written, read by softmax, P written, read */
	mp_dtype kv_dtype; /* K and V storage; MP_DTYPE_INVALID = dtype */
	/* raw */
	double flops;
	uint64_t bytes;
	uint64_t l2_bytes, shared_memory_bytes; /* traffic at those levels; 0 = same as bytes */
	mp_unit unit;                           /* raw only; the others know their unit */
	const char *json_pointer;               /* the op's place in the request ("/ops/3"): errors name its fields
	                                           under it; device fields stay "/device/..."; borrowed */
} mp_op;

/* One memory level's ceiling in a hierarchical roofline (one ceiling per level, Williams et al. sec. 5). */
typedef enum mp_level { MP_LEVEL_DRAM = 0, MP_LEVEL_L2, MP_LEVEL_SHARED, MP_LEVEL_COUNT } mp_level;

typedef struct mp_level_roof {
	bool present; /* the profile has this level's bandwidth */
	double bandwidth_bytes_per_second;
	uint64_t bytes;
	double intensity_flops_per_byte;
	double attainable_flops_per_second;
	double time_seconds; /* bytes / bandwidth */
} mp_level_roof;

typedef struct mp_roof {
	double flops;
	uint64_t bytes;                  /* DRAM traffic, compulsory */
	double intensity_flops_per_byte; /* flops / bytes (0 when bytes == 0) */
	mp_unit unit;
	mp_dtype compute_dtype; /* the dtype whose peak was asked for: the op's compute dtype */
	mp_dtype peak_dtype; /* the dtype whose peak applies (after fallbacks) */
	bool peak_fallback;  /* the profile lacked the exact unit/dtype peak; see mp_device_peak */
	double peak_flops_per_second;
	double ridge_flops_per_byte;        /* peak / DRAM bandwidth */
	double attainable_flops_per_second; /* min(peak, intensity x bandwidth) over every level */
	double fraction_of_peak;            /* attainable / peak */
	bool compute_bound;                 /* intensity >= ridge at every level */
	double memory_time_seconds;         /* the slowest level's bytes / bandwidth */
	double compute_time_seconds;        /* flops / peak */
	double time_seconds;                /* max of the two: the floor */
	mp_level binding_level;             /* the level whose time is memory_time_seconds */
	mp_level_roof level[MP_LEVEL_COUNT];
} mp_roof;

/*
 * The dense peak that applies to `dt` on `unit`, and whether it needed a fallback.
 * Matrix: peak_flops_per_second[dt]; missing sub-16-bit and block formats fall back to bf16 then fp16 (the
 * dequantised path), bf16 to fp16, tf32 to fp32, fp16 to fp32. Vector: vector_flops_per_second[dt], else
 * the fp32 vector rate (vector_flops_per_second[fp32], else peak_flops_per_second[fp32]: the datasheet's
 * FP32 is the CUDA-core rate, and frameworks do 16-bit elementwise math in fp32 registers), else the matrix
 * peak of dt (a profile that gives one peak only, as the reference texts do). Returns 0 when nothing applies.
 * Example: h100-sxm5-80gb, bf16 matrix -> 989.4e12; bf16 vector -> 66.9e12 (fp32, fallback).
 */
double mp_device_peak(const mp_device *d, mp_dtype dt, mp_unit unit, mp_dtype *used, bool *fallback);

/*
 * Ridge point = matrix peak of dt / DRAM bandwidth, in FLOP/byte (0 when either is missing).
 * Example (seed cases): H100 SXM5 989.4e12 / 3.352e12 = 295.17; A100 80GB 312e12 / 2.039e12 = 153.02.
 */
double mp_device_ridge(const mp_device *d, mp_dtype dt);

/*
 * FLOPs and compulsory DRAM bytes of an operation (no device needed).
 * Example: matmul 512 x 1024 x 4096 bf16 -> 4,294,967,296 FLOPs over 13,631,488 B = 315.08 FLOP/B;
 * elementwise add (2 in, 1 out, 1 FLOP) on bf16 -> 1/6 FLOP/B.
 * Errors: MP_EINVAL naming the op's field ("/k"), MP_EOVERFLOW when the bytes do not fit 64 bits.
 */
mp_status mp_op_cost(const mp_op *op, double *flops, uint64_t *bytes, mp_error *err);

/*
 * The roofline of one operation on a device: intensity, applicable peak, attainable FLOP/s, bound and the
 * time floor max(bytes / bandwidth, flops / peak), with one ceiling per memory level the profile has.
 * Example (seed case): matmul 256^3 bf16 on the H100 -> 85.33 FLOP/B, 286.0 TFLOP/s, 28.9% of peak, memory.
 * Errors: as mp_op_cost; MP_EINVAL "/device/memory_bandwidth_bytes_per_second" without a bandwidth,
 * MP_EUNSUPPORTED "/device/peak_flops_per_second" when no peak applies.
 */
mp_status mp_roofline(const mp_device *d, const mp_op *op, mp_roof *out, mp_error *err);

/*
 * A measured time against an operation's roofline (case BR-14): the effective bandwidth and FLOP/s it
 * implies, the fraction of the floor it achieved (floor / measured, <= 1 for an honest measurement) and
 * above_roof when it beat the floor, which means the roof (the profile) is wrong or the chip misidentified.
 * Example: 3,791,273,984 B per token reported at 71.9 GB/s on a 68.25 GB/s M1 -> above_roof.
 */
typedef struct mp_measurement_check {
	double measured_seconds;
	double effective_bandwidth_bytes_per_second;
	double effective_flops_per_second;
	double achieved_fraction;
	bool above_roof;
} mp_measurement_check;

void mp_check_measurement(const mp_roof *r, double measured_seconds, mp_measurement_check *out);

/*
 * The smallest batch (rows m) at which a linear layer k -> n (weights dt, activations dt) reaches the ridge;
 * intensity(b) = 2bkn / bytes(bk + kn + bn) grows with b. 0 when it never does below MP_MAX_BATCH_SIZE.
 * Example (seed cases): 4096 -> 4096 bf16: 345 on the H100 SXM5, 166 on the A100 80GB.
 */
uint64_t mp_first_compute_bound_batch(const mp_device *d, uint64_t k, uint64_t n, mp_dtype dt);

/* ---------------------------------------------------------------------------------------------------------
 * Weights-only decode bound (the reference texts' model): every weight byte read once per step, 2 FLOPs per
 * parameter per sequence. step = max(weight_bytes / bandwidth, 2 x parameters x batch / peak[dt]).
 * Example (seed cases): 14e9 B, 7e9 parameters, H100, batch 1 -> 4.177 ms, 239.4 tokens/s; batch 512 ->
 * 7.245 ms, 70,671 tokens/s in total, 138.0 per sequence.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct mp_decode_bound {
	double step_seconds;
	double memory_seconds, compute_seconds;
	double tokens_per_second_per_sequence;
	double tokens_per_second_total;
	bool compute_bound;
} mp_decode_bound;

mp_status mp_weights_decode_bound(const mp_device *d, uint64_t weight_bytes, uint64_t parameters, uint64_t batch,
                                  mp_dtype dt, mp_decode_bound *out, mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * Little's law (Little 1961; applied to memory by Volkov 2016): bytes in flight = bandwidth x latency.
 * Example (seed case, Jia et al. 2018 V100): 750 GiB/s x (375 cycles / 1.38 GHz = 271.7 ns) = 218,833 B
 * (214 KiB); over 80 SMs 2,735 B each.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct mp_littles_law {
	double latency_seconds;
	double bytes_in_flight;
	double bytes_in_flight_per_sm; /* 0 when sm_count is 0 */
} mp_littles_law;

mp_status mp_little(double bandwidth_bytes_per_second, double latency_seconds, uint32_t sm_count, mp_littles_law *out,
                    mp_error *err);

/* ---------------------------------------------------------------------------------------------------------
 * Transformer step analysis: the per-layer operations of one prefill or one decode step of a model, each
 * placed on the device's roofline; kernels run one after another, so the step floor is the sum of the
 * operations' floors.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_phase { MP_PHASE_PREFILL = 0, MP_PHASE_DECODE = 1 } mp_phase;

typedef struct mp_step_req {
	mp_dtype weight_dtype; /* matrices */
	mp_dtype kv_cache_dtype;
	mp_dtype activation_dtype; /* MP_DTYPE_INVALID = bf16 (fp32 when the weights are fp32) */
	uint64_t batch_size;       /* sequences, >= 1 */
	uint64_t context_tokens;   /* decode: tokens already in each sequence's KV cache (>= 1) */
	uint64_t prompt_tokens;    /* prefill: prompt length per sequence (>= 1) */
	bool eager_attention;      /* prefill attention materialises the scores */
	bool matmuls_only;         /* only the weight matrix products (to compare with a GEMM chain) */
	bool allow_beyond_max_position; /* accept contexts past the model's (mp_check_context) */
	uint64_t tensor_parallel_size;  /* GPUs sharing each layer (Megatron TP); 0 or 1 = one GPU. The step is
	                                   per GPU: heads, KV heads (one each when tp exceeds them), FFN and
	                                   expert widths and the vocabulary split tp ways; norms, embeddings and
	                                   residuals replicated; the all-reduces between GPUs are not modelled */
	const char *json_pointer;       /* where the request sits ("/transformer"): error fields under it; borrowed */
	/* The whole model's weights as the plan stores them (mp_weight_bytes at tensor_parallel_size 1; NULL: every
	 * matrix in weight_dtype at its plain size). Each matrix then reads its class's format (an lm_head kept in 16
	 * bit beside int4 layers, a checkpoint's MXFP4 experts) at that class's bytes per weight, scales and zero
	 * points included (AWQ int4 at group 128: 0.5 + 2/128 + 0.5/128 bytes). Borrowed. */
	const struct mp_weights *weights;
} mp_step_req;

/* The activations' dtype of a step: req->activation_dtype, else fp32 under fp32 weights, else bf16 (the
 * activations of every 16-bit and quantised path). Example: weight_dtype int4, no activation dtype -> bf16. */
mp_dtype mp_step_activation_dtype(const mp_step_req *req);

#define MP_STEP_MAX_OPS 32

typedef struct mp_step_op {
	const char *name; /* static: "qkv", "attention", "o_proj", "mlp_up", "experts_down", "lm_head", ... */
	uint64_t count; /* how many times per step (layers that have it) */
	mp_op op;
	mp_roof roof;          /* one instance */
	double time_seconds;   /* count x roof.time_seconds */
	uint64_t weight_bytes; /* per instance: the part of roof.bytes that is weights (0 for none) */
	uint64_t fixed_bytes;  /* per instance: the part of roof.bytes that does not grow with the batch: the
	                          weights and a norm's weight vector (decode; mp_step_crossing_batch) */
	uint64_t expert_weight_bytes; /* routed-expert ops: the weights of one expert (weight_bytes is
	                                 active_experts x this, rounded); 0 for every other op */
} mp_step_op;

typedef struct mp_step {
	/* every member before ops is cleared by mp_step_analyze: keep ops last */
	mp_phase phase;
	size_t nops;
	double flops;                          /* whole step */
	double bytes;                          /* whole step (double: summed over layers) */
	double weight_bytes;                   /* of which weights */
	double kv_read_bytes;                  /* of which KV cache reads (decode: each sequence its own) */
	double memory_seconds;                 /* sum of the memory-bound ops' times */
	double compute_seconds;                /* sum of the compute-bound ops' times */
	double step_seconds;                   /* sum of every op's floor */
	double tokens_per_second_per_sequence; /* decode: 1 / step; prefill: prompt_tokens / step */
	double tokens_per_second_total;        /* x batch */
	bool compute_bound;                    /* compute-bound ops take most of the step */
	double active_experts;                 /* MoE: expected experts read per MoE layer (0 when dense) */
	uint64_t tokens;                       /* rows of each per-token op: batch (decode), batch x prompt */
	uint64_t num_experts, experts_per_token; /* MoE routing the expert ops follow (0 when dense) */
	mp_step_op ops[MP_STEP_MAX_OPS];       /* the first nops are set; the rest are not touched */
} mp_step;

/*
 * One step of model m on device d. Decode: batch tokens, each attending over its own context_tokens + 1
 * keys (KV reads do not batch); MoE layers read E x (1 - (1 - k/E)^tokens) experts (uniform routing: top-k
 * of E at small batch, all of them at large batch). Prefill: batch x prompt_tokens tokens per matrix
 * product, causal attention, lm_head on the last position of each sequence only.
 * Example: Llama-3-8B matrices only, bf16, batch 1 -> 15,009,316,864 weight bytes (shared/groundtruth/h200).
 * With tensor_parallel_size t > 1 the step is that of one of the t GPUs (Megatron-LM column/row-parallel
 * layers, vLLM's vocabulary-parallel head): e.g. Mixtral-8x7B decode with t = 2 reads exactly half the KV
 * cache per GPU (8 KV heads -> 4) and half the sharded weights (tests/test_roofline.c checks both). t must
 * pass mp_check_tp_degree (MP_EINVAL naming /tensor_parallel_size).
 * Errors: MP_EINVAL naming the request field, MP_EUNSUPPORTED, MP_EOVERFLOW.
 */
mp_status mp_step_analyze(const mp_model *m, const mp_device *d, mp_phase phase, const mp_step_req *req, mp_step *out,
                          mp_error *err);

/*
 * The smallest batch at which the decode step's FLOP time reaches its byte time (sum of flops / peak >= sum of
 * bytes / bandwidth over the ops). 0 when it never does up to MP_STEP_MAX_SEARCH_BATCH (long contexts: the KV
 * reads grow with the batch as fast as the FLOPs). req->batch_size is ignored: one decode step at batch 1 is
 * analysed and mp_step_crossing_batch solves for the batch.
 * Example: the Llama-3-8B matrix chain on the H200 ceilings measured in shared/groundtruth/h200 -> 192.
 */
#define MP_STEP_MAX_SEARCH_BATCH UINT64_C(65536)
mp_status mp_step_compute_bound_batch(const mp_model *m, const mp_device *d, const mp_step_req *req, uint64_t *out,
                                      mp_error *err);

/*
 * The same crossing from a decode step already analysed at any batch B (the plan's own step: the analysis runs
 * once). In a decode step every op's FLOPs and its non-weight bytes (activations, each sequence's KV reads) are
 * proportional to the batch, and its weight bytes are fixed, except routed experts, which read
 * E (1 - (1 - k/E)^b) experts of expert_weight_bytes each. So each op's balance at batch b is
 *   count x (compute_time x b/B - memory_time x bytes(b) / bytes(B)),  bytes(b) = W + (bytes(B) - W) b/B,
 * whose sum is linear in b for a dense model: balance(b) = alpha b - beta, crossing at ceil(beta / alpha), no
 * search. For an MoE model the sum is convex in b (the concave expert reads enter with a minus sign) and the
 * crossing search (mp_search_crossing) runs on this closed form, not on new step analyses. Exact up to
 * floating-point rounding against analysing the step at every batch (tests/test_roofline.c checks both ways).
 * Example: Llama-3-8B bf16, context 0, on 3.352 TB/s and 989.4 TFLOP/s (tests/test_roofline.c): 250 < b < 420.
 * Returns 0 in *out when never (or when step is not a decode step).
 */
void mp_step_crossing_batch(const mp_step *decode, uint64_t *out);

#endif /* MP_ROOFLINE_H */
