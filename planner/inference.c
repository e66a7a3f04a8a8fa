/*
 * inference.c: inference memory (weights, KV cache, overhead) and the fit verdict for one GPU.
 * Pure arithmetic on the caller's structs; every byte count is checked for 64-bit overflow.
 */
#include <string.h>

#include "memplan.h"

/* Bytes of one token's K and V over all layers: 2 x layers x kv_heads x head_dim x bytes. */
static mp_status kv_values_per_token(const mp_model *m, uint64_t *out, mp_error *err)
{
	uint64_t v = 2;

	if (m->attn_kind != MP_ATTN_GQA)
		return mp_fail(err, MP_EUNSUPPORTED, "/model", "KV cache of MLA attention is not modelled yet");
	if (!mp_mul_u64(v, m->num_layers, &v) || !mp_mul_u64(v, m->num_kv_heads, &v) ||
	    !mp_mul_u64(v, m->head_dim, &v))
		return mp_fail(err, MP_EOVERFLOW, "/model", "KV cache width overflows 64 bits");
	*out = v;
	return MP_OK;
}

mp_status mp_kv_cache_bytes(const mp_model *m, mp_dtype kv_dtype, uint64_t sequence_length, uint64_t batch_size,
			    uint64_t *out, mp_error *err)
{
	uint64_t values;
	mp_status st = kv_values_per_token(m, &values, err);

	if (st != MP_OK)
		return st;
	if (!mp_mul_u64(values, sequence_length, &values) || !mp_mul_u64(values, batch_size, &values) ||
	    !mp_dtype_bytes(kv_dtype, values, out))
		return mp_fail(err, MP_EOVERFLOW, "/sequence_length",
			       "the KV cache for %llu tokens x %llu sequences overflows 64 bits",
			       (unsigned long long)sequence_length, (unsigned long long)batch_size);
	return MP_OK;
}

static mp_status check_req(const mp_inference_req *req, mp_error *err)
{
	if (mp_dtype_layout_of(req->weight_dtype).block_values == 0)
		return mp_fail(err, MP_EINVAL, "/weight_dtype", "weight_dtype is not a known format");
	if (mp_dtype_layout_of(req->kv_cache_dtype).block_values == 0)
		return mp_fail(err, MP_EINVAL, "/kv_cache_dtype", "kv_cache_dtype is not a known format");
	if (req->batch_size < 1 || req->batch_size > MP_MAX_BATCH_SIZE)
		return mp_fail(err, MP_EINVAL, "/batch_size", "batch_size must be between 1 and %llu",
			       (unsigned long long)MP_MAX_BATCH_SIZE);
	if (req->sequence_length < 1 || req->sequence_length > MP_MAX_SEQUENCE_LENGTH)
		return mp_fail(err, MP_EINVAL, "/sequence_length", "sequence_length must be between 1 and %llu",
			       (unsigned long long)MP_MAX_SEQUENCE_LENGTH);
	return MP_OK;
}

/* The largest n in [0, limit] with base + n * per <= capacity (0 when even n = 1 does not fit). */
static uint64_t largest_fitting(uint64_t capacity, uint64_t base, uint64_t per, uint64_t limit)
{
	uint64_t n;

	if (base >= capacity || per == 0)
		return 0;
	n = (capacity - base) / per;
	return n > limit ? limit : n;
}

mp_status mp_plan_inference(const mp_model *m, const mp_param_count *pc, const mp_inference_req *req,
			    const mp_device *dev, mp_inference_memory *mem, mp_fit *fit, mp_error *err)
{
	mp_status st;
	uint64_t per_token_values, base;

	memset(mem, 0, sizeof(*mem));
	if (fit)
		memset(fit, 0, sizeof(*fit));
	st = check_req(req, err);
	if (st != MP_OK)
		return st;

	if (!mp_dtype_bytes(req->weight_dtype, pc->total, &mem->weights_bytes))
		return mp_fail(err, MP_EOVERFLOW, "/model", "weight bytes overflow 64 bits");
	st = kv_values_per_token(m, &per_token_values, err);
	if (st != MP_OK)
		return st;
	if (!mp_dtype_bytes(req->kv_cache_dtype, per_token_values, &mem->kv_cache_bytes_per_token))
		return mp_fail(err, MP_EOVERFLOW, "/model", "KV cache width overflows 64 bits");
	st = mp_kv_cache_bytes(m, req->kv_cache_dtype, req->sequence_length, req->batch_size, &mem->kv_cache_bytes,
			       err);
	if (st != MP_OK)
		return st;

	mem->overhead_bytes = req->cuda_context_bytes ? req->cuda_context_bytes
			      : (dev && dev->cuda_context_bytes) ? dev->cuda_context_bytes
							      : MP_DEFAULT_CUDA_CONTEXT_BYTES;
	mem->total_bytes = mem->weights_bytes;
	if (!mp_add_u64(mem->total_bytes, mem->kv_cache_bytes, &mem->total_bytes) ||
	    !mp_add_u64(mem->total_bytes, mem->activations_bytes, &mem->total_bytes) ||
	    !mp_add_u64(mem->total_bytes, mem->overhead_bytes, &mem->total_bytes))
		return mp_fail(err, MP_EOVERFLOW, "/sequence_length", "total bytes overflow 64 bits");

	if (dev == NULL || fit == NULL)
		return MP_OK;

	fit->capacity_bytes = mp_device_capacity_bytes(dev);
	fit->fits = mem->total_bytes <= fit->capacity_bytes;
	fit->headroom_bytes = (int64_t)fit->capacity_bytes - (int64_t)mem->total_bytes;
	fit->binding_term = mem->kv_cache_bytes > mem->weights_bytes ? "kv_cache" : "weights";
	base = mem->weights_bytes + mem->activations_bytes + mem->overhead_bytes;
	/* KV cache is linear in batch and in length: solve each with the other held. */
	{
		uint64_t per_seq = 0, per_len = 0;

		if (mp_mul_u64(mem->kv_cache_bytes_per_token, req->sequence_length, &per_seq))
			fit->max_batch_size = largest_fitting(fit->capacity_bytes, base, per_seq, MP_MAX_BATCH_SIZE);
		if (mp_mul_u64(mem->kv_cache_bytes_per_token, req->batch_size, &per_len))
			fit->max_sequence_length = largest_fitting(fit->capacity_bytes, base, per_len,
								   MP_MAX_SEQUENCE_LENGTH);
	}
	return MP_OK;
}
