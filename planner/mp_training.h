/*
 * mp_training.h: training memory per GPU, phase by phase: model states by precision regime, optimizer and
 * sharding; activations and logits per layer from first principles; parallel layouts; LoRA/QLoRA; the fit.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_TRAINING_H
#define MP_TRAINING_H

#include "mp_device.h"
#include "mp_inference.h"
#include "mp_model.h"

/* ---------------------------------------------------------------------------------------------------------
 * Request.
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_precision {
	MP_PRECISION_MIXED_BF16 = 0,	/* bf16 weights + grads, fp32 master weights (Megatron/DeepSpeed) */
	MP_PRECISION_MIXED_FP16,	/* the same with fp16 (plus a loss scale) */
	MP_PRECISION_FP32,		/* fp32 weights and math */
	MP_PRECISION_AMP_BF16,		/* fp32 weights, torch.autocast(bf16): 16-bit weight copies in fwd/bwd */
	MP_PRECISION_AMP_FP16,		/* the same with fp16 and a GradScaler */
	MP_PRECISION_BF16,		/* pure bf16 weights, gradients and optimizer state */
	MP_PRECISION_COUNT
} mp_precision;

/* Bytes-per-parameter convention of the mixed regimes (case BR-12). Ignored by the other regimes. */
typedef enum mp_state_convention {
	MP_CONVENTION_16 = 0,	/* ZeRO: 2 weights + 2 grads + 4 master + 8 Adam (arXiv 1910.02054 sec. 3.1) */
	MP_CONVENTION_18,	/* Megatron: 2 weights + 4 fp32 grads (main_grad) + 4 master + 8 Adam (Megatron-LM#654) */
	MP_CONVENTION_20,	/* NLG-530B: 2 weights + 2 grads + 4 fp32 grads + 4 master + 8 Adam (MS-AMP#173) */
} mp_state_convention;

typedef enum mp_optimizer {
	MP_OPTIMIZER_ADAMW = 0,
	MP_OPTIMIZER_ADAM,
	MP_OPTIMIZER_ADAMW_8BIT,	/* bitsandbytes: block-wise int8 moments, fp32 absmax per 256 values */
	MP_OPTIMIZER_SGD,
	MP_OPTIMIZER_SGD_MOMENTUM,
	MP_OPTIMIZER_ADAFACTOR,		/* factored second moment: row + column vectors of 2-D parameters */
	MP_OPTIMIZER_LION,		/* one moment */
	MP_OPTIMIZER_COUNT
} mp_optimizer;

typedef enum mp_recompute {
	MP_RECOMPUTE_NONE = 0,
	MP_RECOMPUTE_SELECTIVE,	/* Korthikanti et al. sec. 5: recompute the attention core (scores, softmax, dropout) */
	MP_RECOMPUTE_FULL,	/* every layer keeps only its input (gradient checkpointing of every layer) */
} mp_recompute;

typedef enum mp_train_attention {
	MP_TRAIN_ATTENTION_FUSED = 0,	/* flash / memory-efficient SDPA: no score matrix kept, log-sum-exp only */
	MP_TRAIN_ATTENTION_EAGER,	/* scores materialised: softmax output, dropout mask, dropped probabilities */
} mp_train_attention;

typedef enum mp_sharding {
	MP_SHARDING_NONE = 0,	/* DDP: everything replicated (ZeRO stage 0) */
	MP_SHARDING_ZERO1,	/* optimizer states + master weights sharded */
	MP_SHARDING_ZERO2,	/* + gradients */
	MP_SHARDING_ZERO3,	/* + weights, gathered per layer */
	MP_SHARDING_FSDP_FULL,	/* FSDP FULL_SHARD: as ZeRO-3 */
	MP_SHARDING_FSDP_GRAD_OP,	/* FSDP SHARD_GRAD_OP: as ZeRO-2 */
} mp_sharding;

typedef enum mp_finetune {
	MP_FINETUNE_FULL = 0,
	MP_FINETUNE_LORA,	/* frozen 16-bit base, trainable adapters */
	MP_FINETUNE_QLORA,	/* frozen nf4 base (double-quantised scales), trainable adapters */
} mp_finetune;

/* LoRA target modules (mask bits). */
#define MP_LORA_Q (1u << 0)
#define MP_LORA_K (1u << 1)
#define MP_LORA_V (1u << 2)
#define MP_LORA_O (1u << 3)
#define MP_LORA_GATE (1u << 4)
#define MP_LORA_UP (1u << 5)
#define MP_LORA_DOWN (1u << 6)
#define MP_LORA_ALL 0x7Fu

/* PyTorch's cuBLAS workspace per handle on sm90 (CUBLAS_WORKSPACE_CONFIG default ":4096:8", i.e.
 * 4096 KiB x 8 = 32 MiB; aten/src/ATen/cuda/CublasHandlePool.cpp, getChosenWorkspaceSize). */
#define MP_DEFAULT_CUBLAS_WORKSPACE_BYTES (UINT64_C(4096) * 8 * 1024)
/* DeepSpeed's default reduce_bucket_size / allgather_bucket_size: 5e8 elements (deepspeed/runtime/zero/config.py). */
#define MP_DEFAULT_ZERO_BUCKET_ELEMENTS UINT64_C(500000000)

typedef struct mp_training_req {
	mp_precision precision;
	mp_state_convention convention;	/* mixed regimes only */
	mp_optimizer optimizer;
	mp_dtype optimizer_state_dtype;	/* MP_DTYPE_INVALID: follows the regime (fp32, or bf16 for bf16) */
	uint64_t micro_batch_size;	/* sequences per GPU per forward, >= 1 */
	uint64_t sequence_length;	/* tokens per sequence, >= 1 */
	uint64_t global_batch_size;	/* 0 = micro_batch_size x data-parallel degree (no accumulation) */
	mp_recompute recompute;
	mp_train_attention attention;
	bool no_dropout;		/* true: dropout off even where the config has it */
	bool states_only;		/* true: model states only (a bare parameter count needs this) */

	/* parallel layout; 0 means 1 */
	uint64_t num_gpus;
	uint64_t tensor_parallel_size;
	bool sequence_parallel;
	uint64_t pipeline_parallel_size;
	uint64_t context_parallel_size;
	uint64_t expert_parallel_size;
	mp_sharding sharding;
	uint64_t zero_bucket_elements;	/* 0 = MP_DEFAULT_ZERO_BUCKET_ELEMENTS */

	/* parameter-efficient fine-tuning */
	mp_finetune finetune;
	uint64_t lora_rank;
	uint32_t lora_targets;		/* MP_LORA_* mask; 0 = MP_LORA_ALL */

	/* runtime overheads; 0 = defaults */
	uint64_t cuda_context_bytes;	/* 0 = device's, else MP_DEFAULT_CUDA_CONTEXT_BYTES */
	uint64_t cublas_workspace_bytes;	/* 0 = MP_DEFAULT_CUBLAS_WORKSPACE_BYTES */
	bool host_memory;		/* on a CPU (mp_device.host_memory): no CUDA context and no cuBLAS workspaces
					   unless the two fields above give them */

	/* accept sequence_length > the model's context without RoPE scaling (mp_check_context); the fit solver's
	 * max_sequence_length is bounded by the context otherwise */
	bool allow_beyond_max_position;

	/* where the request sits in the caller's document (NULL or "": the top): error fields are named under it */
	const char *json_pointer;
} mp_training_req;

/* ---------------------------------------------------------------------------------------------------------
 * Result.
 * ------------------------------------------------------------------------------------------------------- */

/* Saved activations of ONE layer for one micro-batch on one GPU, by term (bytes). */
typedef struct mp_layer_activations {
	uint64_t norms;			/* norm inputs and statistics */
	uint64_t projection_inputs;	/* inputs the projections keep (autocast 16-bit copies under amp) */
	uint64_t attention;		/* q, k, v, attention output, softmax statistics */
	uint64_t attention_scores;	/* eager: softmax output, dropout mask, dropped probabilities */
	uint64_t mlp;			/* activation-function tensors, gate x up products */
	uint64_t moe;			/* router logits and probabilities, dispatched token copies */
	uint64_t dropout_masks;		/* hidden dropout masks (one byte per value) */
	uint64_t total;			/* sum of the above */
} mp_layer_activations;

typedef struct mp_activation_memory {
	mp_layer_activations layer;	/* one layer, no recomputation */
	uint64_t layers_on_gpu;		/* layers of the busiest stage */
	uint64_t microbatches_in_flight;	/* 1F1B: stage 1 holds up to p micro-batches */
	uint64_t saved_per_layer;	/* what a layer keeps under the recomputation chosen */
	uint64_t layers_bytes;		/* saved_per_layer x layers x micro-batches in flight */
	uint64_t embedding_bytes;	/* token ids, embedding dropout mask */
	uint64_t head_bytes;		/* final norm + lm_head input */
	uint64_t recompute_bytes;	/* full/selective: one layer's recomputed activations during backward */
	uint64_t backward_transient_bytes;	/* one layer's backward temporaries (gradients of its largest tensors) */
	uint64_t autocast_weight_copies_bytes;	/* amp: 16-bit copies of the matmul weights saved for backward */
	uint64_t total;			/* activations_bytes: saved at the end of forward (without logits) */
} mp_activation_memory;

typedef struct mp_logits_memory {
	uint64_t tokens;		/* tokens on the GPU that computes the loss */
	uint64_t logits_bytes;		/* tokens x vocab/tp in the compute dtype */
	uint64_t upcast_bytes;		/* the fp32 copy the loss makes (0 when logits are fp32 already) */
	uint64_t log_probs_bytes;	/* log_softmax output kept for backward (fp32) */
	uint64_t forward_peak_bytes;	/* at log_softmax: logits + upcast + log-probs */
	uint64_t backward_peak_bytes;	/* at log_softmax backward: log-probs + their gradient + logits gradient */
	uint64_t softcap_bytes;		/* final_logit_softcapping: the tanh output autograd keeps (in both peaks) */
} mp_logits_memory;

typedef enum mp_train_phase {
	MP_TRAIN_PHASE_FORWARD = 0,		/* end of forward (incl. the loss) */
	MP_TRAIN_PHASE_BACKWARD,		/* backward peak */
	MP_TRAIN_PHASE_OPTIMIZER,		/* optimizer step */
	MP_TRAIN_PHASE_COUNT
} mp_train_phase;

typedef struct mp_phase_memory {
	uint64_t allocated_bytes;	/* allocator bytes at the phase's peak (no CUDA context) */
	const char *binding_term;	/* the largest term at that moment (static string) */
	const char *moment;		/* when inside the phase (static string) */
} mp_phase_memory;

typedef struct mp_training_memory {
	/* per GPU; the api.md names */
	uint64_t weights_bytes;
	uint64_t gradients_bytes;
	uint64_t optimizer_states_bytes;
	uint64_t master_weights_bytes;
	uint64_t activations_bytes;	/* saved activations at the end of forward, without logits */
	uint64_t logits_bytes;		/* logits + loss at their peak (log_softmax backward) */
	uint64_t overhead_bytes;	/* CUDA context + framework workspaces + communication buffers */
	uint64_t total_bytes;		/* peak phase's allocated bytes + CUDA context */

	/* overhead detail */
	uint64_t cuda_context_bytes;
	uint64_t workspace_bytes;	/* cuBLAS workspaces held between steps */
	uint64_t comm_buffer_bytes;	/* DDP buckets, ZeRO buckets, gathered ZeRO-3/FSDP parameters */
	uint64_t optimizer_transient_bytes;	/* temporaries of the optimizer step */
	uint64_t states_bytes;		/* what stays allocated between steps: weights + master + optimizer + workspaces */
	bool activations_known;		/* false: states_only (activations and logits are 0) */

	/* bytes per parameter of each model-state term (trainable parameters, before sharding) */
	double weight_bytes_per_parameter;	/* frozen LoRA base: its bytes over its parameters (QLoRA's nf4 layers
						   with their double-quantised scales beside the 16-bit rest) */
	uint32_t gradient_bytes_per_parameter;
	uint32_t master_weight_bytes_per_parameter;
	double optimizer_bytes_per_parameter;	/* 8-bit and factored optimizers are not whole numbers */
	const char *convention;		/* "16", "18", "20" for mixed regimes, else the regime's name */
	const char *composition;	/* human-readable composition (static string) */

	/* parameters */
	uint64_t parameters_on_gpu;	/* after tensor/pipeline/expert split, before ZeRO sharding */
	uint64_t trainable_parameters;	/* whole model (LoRA: adapters only) */
	uint64_t lora_parameters;
	uint64_t lora_base_bytes;	/* frozen base weights (per GPU), nf4 incl. double-quantised scales */

	/* layout */
	uint64_t data_parallel_size;
	uint64_t gradient_accumulation_steps;

	mp_activation_memory activations;
	mp_logits_memory logits;
	mp_phase_memory phases[MP_TRAIN_PHASE_COUNT];
	mp_train_phase peak_phase;
	const char *binding_term;	/* the largest term of the peak phase */
	/* --- appended for issue 15 --- */
	const char *attention_kernel;	/* what runs: "eager", or SDPA's "flash", "efficient", "math" (mp_sdpa_kernel_of);
					   NULL without the architecture */
} mp_training_memory;

/* ---------------------------------------------------------------------------------------------------------
 * Functions.
 * ------------------------------------------------------------------------------------------------------- */

/*
 * Saved activations of one layer (bytes) for `tokens` tokens of `batch` sequences of `seq` tokens on one GPU
 * (tensor-parallel degree tp, sequence parallel sp). Korthikanti et al. 2022 (arXiv 2205.05198) eq. 1
 * counts sbh(34 + 5as/h) for a GPT layer in 16-bit with fused-nothing eager PyTorch; this extends it term by
 * term to what PyTorch autograd keeps for the regime (see activations.c). Worked example: GPT-2 (h 768,
 * 12 heads, FFN 3072, gelu_new, dropout 0.1), amp_bf16, fused attention, b 4, s 512 -> 135,397,376 bytes.
 * Errors: MP_EOVERFLOW, MP_EUNSUPPORTED.
 */
mp_status mp_layer_activation_bytes(const mp_model *m, const mp_training_req *req, uint64_t batch, uint64_t seq,
				    mp_layer_activations *out, mp_error *err);

/*
 * The training plan for one GPU (the busiest): model states by regime, optimizer and sharding; activations
 * and logits; overheads; memory at the end of forward, the backward peak and the optimizer step. `m` may be
 * NULL (bare parameter count): then req->states_only must be true.
 * Worked example: 7e9 parameters, mixed_bf16, adamw, 16 B/param -> 112,000,000,000 bytes of states.
 * Errors: MP_EINVAL naming the field (impossible layouts: "/tensor_parallel_size" ...), MP_EOVERFLOW,
 * MP_EUNSUPPORTED.
 */
mp_status mp_plan_training(const mp_model *m, const mp_param_count *pc, const mp_training_req *req,
			   mp_training_memory *mem, mp_error *err);

/* Training fit extras, beyond mp_fit (filled by mp_plan_training_fit). */
typedef struct mp_training_fit {
	mp_fit fit;			/* fits, capacity, headroom, binding_term, max_batch_size (micro), max_sequence_length */
	uint64_t min_num_gpus;		/* smallest GPU count (same tp x pp x cp, data parallel grown) that fits; 0 = none
					   (the API's min_gpus, null for none) */
} mp_training_fit;

/*
 * The one training verdict (the plan endpoint and the scheduler's batch both use it): the plan's total_bytes (the
 * peak phase plus the CUDA context, per GPU) against dev's capacity (usable memory, else the label); headroom and
 * the binding term; the solved fields are left 0. Worked example: 112,000,000,000 bytes on an H200 (150,109,880,320
 * usable) -> fits, headroom 38,109,880,320. No errors.
 */
void mp_training_verdict(const mp_training_memory *mem, const mp_device *dev, mp_fit *fit);

/*
 * The plan plus its fit against dev: largest micro-batch and longest sequence by bisection on the plan itself
 * (memory is monotone in both); the smallest GPU count (same tp x pp x cp, data parallelism grown in steps of
 * the expert-parallel degree) by evaluating the counts: the first 64 one by one (one to two replicas adds DDP's or
 * ZeRO's buckets, so two GPUs may need more per GPU than one), then bisection where every term is constant or a
 * shrinking share of sharded states. fits (at the requested count) implies min_num_gpus <= that count.
 * Worked example (tests/test_answers.c): llama-3.1-8b, mixed_bf16, AdamW, 1 x 4096, no sharding, on an H200:
 * fits on 1 GPU, min_num_gpus 1 (2 GPUs need DDP's buckets on top and do not fit). Errors: as mp_plan_training.
 */
mp_status mp_plan_training_fit(const mp_model *m, const mp_param_count *pc, const mp_training_req *req,
			       const mp_device *dev, mp_training_memory *mem, mp_training_fit *tf, mp_error *err);

/* Published activation formulas (case BR-13), whole model, bytes, no recomputation, no parallelism. */
typedef enum mp_activation_formula {
	MP_FORMULA_KORTHIKANTI = 0,	/* s b h L (34 + 5 a s / h): arXiv 2205.05198 eq. 1, 16-bit, eager attention */
	MP_FORMULA_KORTHIKANTI_FUSED,	/* s b h L 34: the same without the score term (flash attention) */
	MP_FORMULA_ZERO,		/* 12 h b s L values x 2 bytes (ZeRO-R, arXiv 1910.02054 sec. 3.2 rule) */
	MP_FORMULA_MEGATRON_GATED,	/* s b h L (18 + 4 ffn / h): Megatron's gated-FFN term (Megatron-LM#6782) */
	MP_FORMULA_COUNT
} mp_activation_formula;

/*
 * The formula's value for batch b and sequence s (exact integers: the fractional terms are expanded, e.g.
 * sbh x 5as/h = 5 a s^2 b). Worked example (BR-13): LLaMA-7B, b 8, s 512 -> Korthikanti 28,991,029,248 B
 * (27.0 GiB). Errors: MP_EINVAL (unknown formula), MP_EOVERFLOW.
 */
mp_status mp_activation_formula_bytes(const mp_model *m, uint64_t b, uint64_t s, mp_activation_formula f,
				      uint64_t *out, mp_error *err);
/* "korthikanti", "korthikanti_fused", "zero", "megatron_gated"; "invalid" outside the range. */
const char *mp_activation_formula_name(mp_activation_formula f);

/* Names (API spelling) of the enums; "invalid" outside the range. */
const char *mp_precision_name(mp_precision p);
const char *mp_optimizer_name(mp_optimizer o);

#endif /* MP_TRAINING_H */
