/*
 * training.c: training memory. Today: model states of mixed-precision AdamW, each term separately.
 * Activations and logits are not modelled yet; the result says so (activations_known = false).
 */
#include <string.h>

#include "memplan.h"

mp_status mp_plan_training(const mp_param_count *pc, const mp_training_req *req, mp_training_memory *mem,
			   mp_error *err)
{
	uint64_t p = pc->total;

	memset(mem, 0, sizeof(*mem));
	if (req->precision != MP_PRECISION_MIXED_BF16)
		return mp_fail(err, MP_EINVAL, "/precision", "precision must be mixed_bf16");
	if (req->optimizer != MP_OPTIMIZER_ADAMW)
		return mp_fail(err, MP_EINVAL, "/optimizer", "optimizer must be adamw");
	if (req->micro_batch_size < 1 || req->micro_batch_size > MP_MAX_BATCH_SIZE)
		return mp_fail(err, MP_EINVAL, "/micro_batch_size", "micro_batch_size must be between 1 and %llu",
			       (unsigned long long)MP_MAX_BATCH_SIZE);
	if (req->sequence_length < 1 || req->sequence_length > MP_MAX_SEQUENCE_LENGTH)
		return mp_fail(err, MP_EINVAL, "/sequence_length", "sequence_length must be between 1 and %llu",
			       (unsigned long long)MP_MAX_SEQUENCE_LENGTH);

	/* ZeRO paper (arXiv 1910.02054) sec. 3.1: 2 + 2 + (4 + 4 + 4) = 16 bytes per parameter. */
	mem->weight_bytes_per_parameter = 2;
	mem->gradient_bytes_per_parameter = 2;
	mem->master_weight_bytes_per_parameter = 4;
	mem->optimizer_bytes_per_parameter = 8;
	if (!mp_mul_u64(p, mem->weight_bytes_per_parameter, &mem->weights_bytes) ||
	    !mp_mul_u64(p, mem->gradient_bytes_per_parameter, &mem->gradients_bytes) ||
	    !mp_mul_u64(p, mem->master_weight_bytes_per_parameter, &mem->master_weights_bytes) ||
	    !mp_mul_u64(p, mem->optimizer_bytes_per_parameter, &mem->optimizer_states_bytes))
		return mp_fail(err, MP_EOVERFLOW, "/model", "model-state bytes overflow 64 bits");
	mem->total_bytes = mem->weights_bytes;
	if (!mp_add_u64(mem->total_bytes, mem->gradients_bytes, &mem->total_bytes) ||
	    !mp_add_u64(mem->total_bytes, mem->master_weights_bytes, &mem->total_bytes) ||
	    !mp_add_u64(mem->total_bytes, mem->optimizer_states_bytes, &mem->total_bytes))
		return mp_fail(err, MP_EOVERFLOW, "/model", "model-state bytes overflow 64 bits");
	mem->activations_known = false;
	return MP_OK;
}
