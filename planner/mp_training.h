/*
 * mp_training.h: training memory (model states, activations, logits) by precision regime and optimizer.
 * Part of the planner's public contract; include "memplan.h", not this file.
 */
#ifndef MP_TRAINING_H
#define MP_TRAINING_H

#include "mp_device.h"
#include "mp_model.h"

/* ---------------------------------------------------------------------------------------------------------
 * Training memory: model states. Activations come later (see mp_training_memory.activations_known).
 * ------------------------------------------------------------------------------------------------------- */
typedef enum mp_precision {
	MP_PRECISION_MIXED_BF16 = 0,	/* bf16 weights + grads, fp32 master weights (Megatron/DeepSpeed) */
} mp_precision;

typedef enum mp_optimizer {
	MP_OPTIMIZER_ADAMW = 0,
} mp_optimizer;

typedef struct mp_training_req {
	mp_precision precision;
	mp_optimizer optimizer;
	uint64_t micro_batch_size;
	uint64_t sequence_length;
	uint64_t num_gpus;
} mp_training_req;

typedef struct mp_training_memory {
	uint64_t weights_bytes;
	uint64_t gradients_bytes;
	uint64_t optimizer_states_bytes;
	uint64_t master_weights_bytes;
	uint64_t activations_bytes;
	uint64_t logits_bytes;
	uint64_t overhead_bytes;
	uint64_t total_bytes;
	bool activations_known;		/* false: activations and logits are not modelled yet (0 above) */
	/* bytes per parameter of each model-state term, echoed so callers see the convention used */
	uint32_t weight_bytes_per_parameter;
	uint32_t gradient_bytes_per_parameter;
	uint32_t master_weight_bytes_per_parameter;
	uint32_t optimizer_bytes_per_parameter;
} mp_training_memory;

/*
 * Training model states for mixed-precision AdamW (ZeRO paper, arXiv 1910.02054 sec. 3.1): 2 (bf16 weights)
 * + 2 (bf16 gradients) + 4 (fp32 master weights) + 4 + 4 (Adam moments) = 16 bytes per parameter.
 * Worked example: 7e9 parameters -> 112,000,000,000 bytes. Errors: MP_EINVAL, MP_EOVERFLOW.
 */
mp_status mp_plan_training(const mp_param_count *pc, const mp_training_req *req, mp_training_memory *mem,
			   mp_error *err);

#endif /* MP_TRAINING_H */
