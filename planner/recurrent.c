/*
 * recurrent.c: the state each sequence keeps in the recurrent layers (Mamba, Mamba-2, the linear-attention mixers) of
 * recurrent and hybrid models (their tensors are decoder.c's). The state is constant per sequence (it never grows with the tokens), so it is
 * charged per sequence, beside the KV cache that grows with them. Pure arithmetic, every product checked.
 */
#include <string.h>

#include "memplan.h"

/* x / tp rounded up, at least 1: a rank holds its share of channels, heads or groups (vLLM's MambaMixer2 keeps
 * whole groups on every rank when the groups do not divide: one group per rank at least). */
static uint64_t share(uint64_t x, uint64_t tp)
{
	if (tp <= 1)
		return x;
	return x >= tp ? x / tp + (x % tp != 0) : 1;
}

/*
 * The state one sequence keeps in every recurrent layer, on one of tp tensor-parallel ranks, in the engine's layout
 * (vLLM mamba_utils.py MambaStateShapeCalculator): the conv state keeps the last conv_kernel - 1 inputs of each
 * conv channel (transformers keeps conv_kernel, one column more); the SSM state is d_inner x d_state (Mamba) or
 * n_heads x head_dim x d_state (Mamba-2). conv_dtype is the model's dtype; state_dtype fp32 (transformers and vLLM
 * keep the scan's state in fp32 for a bf16 model, see tests/ref/hf). Worked example: mamba-130m, 24 layers, bf16
 * conv, fp32 state -> 24 x (3 x 1536 x 2 + 1536 x 16 x 4) = 24 x 107,520 = 2,580,480 bytes per sequence.
 * MP_SSM_LISTED: the reader's counts, listed_model_values in conv_dtype and listed_fp32_values in fp32 (RWKV-4 7B in
 * bf16, transformers' RwkvModel state: 32 layers x (2 x 4096 x 2 + 3 x 4096 x 4) = 2,621,440 bytes per sequence).
 * Errors: MP_EOVERFLOW.
 */
mp_status mp_recurrent_state_bytes(const mp_model *m, mp_dtype conv_dtype, mp_dtype state_dtype, uint64_t tp,
                                   mp_recurrent_state *out, mp_error *err)
{
	return mp_recurrent_state_bytes_in(m, conv_dtype, state_dtype, tp, MP_CACHE_ENGINE, out, err);
}

/*
 * MP_SSM_KV_CONV (Inkling): per MP_LAYER_SSM layer four conv windows of `columns` inputs in fp32, over the k and v
 * projections (the layer's KV heads, split with them as the KV cache is, x its head_dim, each) and over the attention
 * and MLP outputs (hidden_size each, the row-parallel reductions' outputs: whole on every rank). out's per-layer
 * figure is the widest layer's. Worked example (InklingTextConfig's tiny copy: hidden 6144, 5 sliding layers of 16
 * KV heads and a full one of 8, head_dim 128, kernel 4): engine layout (3 columns) 5 x 4 x 3 x (2 x 2,048 + 2 x
 * 6,144) + 4 x 3 x (2 x 1,024 + 2 x 6,144) = 1,155,072 bytes per sequence (tests/ref/hf/groundtruth.json).
 */
static bool kv_conv_state(const mp_model *m, uint64_t tp, uint64_t columns, mp_recurrent_state *out)
{
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
		unsigned f = m->layer_flags[i];
		bool global = (f & MP_LAYER_GLOBAL) != 0;
		uint64_t kv = share(global ? m->global_kv_heads : m->num_kv_heads, tp);
		uint64_t d = global ? m->global_head_dim : m->head_dim, ch, bytes;

		if (!(f & MP_LAYER_SSM))
			continue;
		if (!mp_mul_u64(kv, d, &ch) || !mp_add_u64(ch, m->hidden_size, &ch) || !mp_mul_u64(ch, 2 * columns, &ch) ||
		    !mp_dtype_bytes(MP_DTYPE_FP32, ch, &bytes) || !mp_add_u64(out->bytes_per_sequence, bytes,
		                                                               &out->bytes_per_sequence))
			return false;
		if (bytes > out->conv_bytes_per_layer)
			out->conv_bytes_per_layer = bytes;
	}
	return true;
}

/* The same in either layout: transformers' conv states (MambaCache, the linear-attention layers' conv_states) keep
 * conv_kernel inputs, one more than the engines'. */
mp_status mp_recurrent_state_bytes_in(const mp_model *m, mp_dtype conv_dtype, mp_dtype state_dtype, uint64_t tp,
                                      mp_cache_layout layout, mp_recurrent_state *out, mp_error *err)
{
	const mp_ssm *s = &m->ssm;
	uint64_t columns = layout == MP_CACHE_TRANSFORMERS ? s->conv_kernel : s->conv_kernel > 0 ? s->conv_kernel - 1 : 0;
	uint64_t conv, conv_values, state_values, layers = mp_model_ssm_layers(m);

	memset(out, 0, sizeof(*out));
	if (s->kind == MP_SSM_NONE || layers == 0)
		return MP_OK;
	out->layers = layers;
	if (s->state_in_model_dtype)
		state_dtype = conv_dtype;
	if (s->kind == MP_SSM_KV_CONV) {
		if (!kv_conv_state(m, tp, columns, out))
			goto overflow;
		return MP_OK;
	}
	if (s->kind == MP_SSM_LISTED) {
		/* the reader's own count of values (mp_ssm.listed_*), shared out over the ranks with its channels */
		uint64_t d = s->d_inner ? s->d_inner : 1, per = share(d, tp), mv, fv;

		if (!mp_mul_u64(s->listed_model_values, per, &mv) || !mp_mul_u64(s->listed_fp32_values, per, &fv))
			goto overflow;
		mv = mv / d + (mv % d != 0);
		fv = fv / d + (fv % d != 0);
		if (!mp_dtype_bytes(conv_dtype, mv, &out->conv_bytes_per_layer) ||
		    !mp_dtype_bytes(MP_DTYPE_FP32, fv, &out->ssm_bytes_per_layer) ||
		    !mp_add_u64(out->conv_bytes_per_layer, out->ssm_bytes_per_layer, &out->bytes_per_sequence) ||
		    !mp_mul_u64(out->bytes_per_sequence, layers, &out->bytes_per_sequence))
			goto overflow;
		return MP_OK;
	}
	if (s->kind >= MP_SSM_GATED_DELTANET) {
		/* vLLM MambaStateShapeCalculator.gated_delta_net_state_shape / kda_state_shape / linear_attention_state_shape
		 * / short_conv_state_shape: conv over q, k, v (short conv: hidden) for conv_kernel - 1 steps; the recurrent
		 * state heads x key dim x value dim (none for the short conv) */
		uint64_t vh = share(s->n_heads, tp), kh = share(s->n_groups, tp), kdim, vdim;

		conv = state_values = 0;
		if (!mp_mul_u64(kh, s->d_state, &kdim) || !mp_mul_u64(vh, s->head_dim, &vdim))
			goto overflow;
		switch (s->kind) {
		case MP_SSM_GATED_DELTANET:
			if (!mp_muladd_u64(&conv, 2, kdim) || !mp_add_u64(conv, vdim, &conv) ||
			    !mp_mul_u64(s->d_state, vdim, &state_values))
				goto overflow;
			break;
		case MP_SSM_KDA:
			if (!mp_mul_u64(3, vdim, &conv) || !mp_mul_u64(vdim, s->head_dim, &state_values))
				goto overflow;
			break;
		case MP_SSM_LIGHTNING:
			if (!mp_mul_u64(vdim, s->head_dim, &state_values))
				goto overflow;
			break;
		default: /* short conv */
			conv = share(m->hidden_size, tp);
			break;
		}
	} else if (s->kind == MP_SSM_MAMBA1) {
		conv = share(s->d_inner, tp);
		if (!mp_mul_u64(conv, s->d_state, &state_values))
			goto overflow;
	} else {
		uint64_t heads = share(s->n_heads, tp), groups = share(s->n_groups, tp), bc;

		if (!mp_mul_u64(2 * groups, s->d_state, &bc) || !mp_mul_u64(heads, s->head_dim, &conv) ||
		    !mp_mul_u64(conv, s->d_state, &state_values) || !mp_add_u64(conv, bc, &conv))
			goto overflow;
	}
	if (!mp_mul_u64(conv, columns, &conv_values) ||
	    !mp_dtype_bytes(conv_dtype, conv_values, &out->conv_bytes_per_layer) ||
	    !mp_dtype_bytes(state_dtype, state_values, &out->ssm_bytes_per_layer) ||
	    !mp_add_u64(out->conv_bytes_per_layer, out->ssm_bytes_per_layer, &out->bytes_per_sequence) ||
	    !mp_mul_u64(out->bytes_per_sequence, layers, &out->bytes_per_sequence))
		goto overflow;
	return MP_OK;
overflow:
	return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the recurrent state overflows 64 bits");
}
