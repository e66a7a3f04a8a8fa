/*
 * recurrent.c: the state-space mixers (Mamba, Mamba-2) of recurrent and hybrid models: their parameters and the
 * state each sequence keeps. The state is constant per sequence (it never grows with the tokens), so it is
 * charged per sequence, beside the KV cache that grows with them. Pure arithmetic, every product checked.
 */
#include <string.h>

#include "memplan.h"

/* Mamba-2's convolution runs over x, B and C together: d_inner + 2 x n_groups x d_state channels. */
static bool conv_channels(const mp_ssm *s, uint64_t *out)
{
	uint64_t bc;

	if (s->kind == MP_SSM_MAMBA1) {
		*out = s->d_inner;
		return true;
	}
	return mp_mul_u64(2 * s->n_groups, s->d_state, &bc) && mp_add_u64(s->d_inner, bc, out);
}

/*
 * Parameters of one layer's mixer, as transformers builds it:
 *   Mamba (modeling_mamba.py MambaMixer): in_proj h -> 2 d_inner, conv1d d_inner x K (+ d_inner bias), x_proj
 *     d_inner -> dt_rank + 2 N, dt_proj dt_rank -> d_inner with bias, A_log d_inner x N, D d_inner, out_proj
 *     d_inner -> h; in_proj and out_proj with biases when use_bias; Jamba (modeling_jamba.py JambaMambaMixer) adds
 *     RMSNorm weights on dt, B and C (dt_rank + 2 N).
 *   Mamba-2 (modeling_mamba2.py Mamba2Mixer): in_proj h -> 2 d_inner + 2 G N + H, conv1d over conv_channels x K
 *     (+ bias), dt_bias, A_log and D of H each, the gated norm's d_inner weight, out_proj d_inner -> h.
 * Worked example (tests/test_models.c): mamba-130m (h 768, d_inner 1536, N 16, K 4, dt_rank 48) -> 2,359,296 +
 * 7,680 + 122,880 + 75,264 + 24,576 + 1,536 + 1,179,648 = 3,770,880 per layer.
 */
/*
 * The linear-attention mixers, as transformers builds them (weights.c lists the same tensors):
 *   gated delta net (modeling_qwen3_next.py Qwen3NextGatedDeltaNet): in_proj_qkvz h -> 2 Kd + 2 Vd, in_proj_ba
 *     h -> 2 Hv, conv1d over 2 Kd + Vd channels x K, dt_bias and A_log of Hv, the gated norm of head_v_dim,
 *     out_proj Vd -> h (Kd = key heads x key head dim, Vd = value heads x value head dim);
 *   KDA (modeling_kimi_linear.py KimiDeltaAttention): q, k, v h -> H d, conv1d over 3 H d x K, A_log H, dt_bias H d,
 *     low-rank forget and output gates (h -> r -> H d each), b_proj h -> H, o_norm d, o_proj H d -> h;
 *   lightning (modeling_minimax.py MiniMaxLightningAttention): qkv_proj h -> 3 H d, output_gate h -> H d, norm H d,
 *     out_proj H d -> h;
 *   short conv (modeling_lfm2.py Lfm2ShortConv): in_proj h -> 3 h, conv h x K, out_proj h -> h (+ biases with
 *     conv_bias).
 * Worked example (tests/test_models.c, Qwen3NextConfig: h 2048, 16 key heads of 128, 32 value heads of 128, K 4):
 * 25,165,824 + 131,072 + 32,768 + 64 + 128 + 8,388,608 = 33,718,464 per layer.
 */
static bool linear_mixer_parameters(const mp_model *m, uint64_t *out)
{
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, kd, vd, acc = 0;

	if (!mp_mul_u64(s->n_groups, s->d_state, &kd) || !mp_mul_u64(s->n_heads, s->head_dim, &vd))
		return false;
	switch (s->kind) {
	case MP_SSM_GATED_DELTANET:
		if (!mp_muladd_u64(&acc, h, 2 * kd + 2 * vd) || !mp_muladd_u64(&acc, h, 2 * s->n_heads) ||
		    !mp_muladd_u64(&acc, 2 * kd + vd, s->conv_kernel) || !mp_muladd_u64(&acc, 2, s->n_heads) ||
		    !mp_add_u64(acc, s->head_dim, &acc) || !mp_muladd_u64(&acc, vd, h))
			return false;
		break;
	case MP_SSM_KDA:
		if (!mp_muladd_u64(&acc, 3 * h, vd) || !mp_muladd_u64(&acc, 3 * vd, s->conv_kernel) ||
		    !mp_add_u64(acc, s->n_heads + vd, &acc) || !mp_muladd_u64(&acc, 2 * s->d_state, h + vd) ||
		    !mp_muladd_u64(&acc, s->n_heads, h) || !mp_add_u64(acc, s->head_dim, &acc) || !mp_muladd_u64(&acc, vd, h))
			return false;
		break;
	case MP_SSM_LIGHTNING:
		if (!mp_muladd_u64(&acc, 5 * h, vd) || !mp_add_u64(acc, vd, &acc))
			return false;
		break;
	case MP_SSM_SHORT_CONV:
		if (!mp_muladd_u64(&acc, 4 * h, h) || !mp_muladd_u64(&acc, h, s->conv_kernel) ||
		    (s->conv_bias && !mp_muladd_u64(&acc, 5, h)))
			return false;
		break;
	default:
		break;
	}
	*out = acc;
	return true;
}

bool mp_ssm_layer_parameters(const mp_model *m, uint64_t *out)
{
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, conv, proj, acc = 0;

	*out = 0;
	if (s->kind == MP_SSM_NONE)
		return true;
	if (s->kind >= MP_SSM_GATED_DELTANET)
		return linear_mixer_parameters(m, out);
	if (!conv_channels(s, &conv))
		return false;
	if (s->kind == MP_SSM_MAMBA1) {
		if (!mp_mul_u64(2, s->d_inner, &proj) || !mp_muladd_u64(&acc, h, proj) ||
		    (s->proj_bias && !mp_add_u64(acc, proj, &acc)) || !mp_muladd_u64(&acc, conv, s->conv_kernel) ||
		    (s->conv_bias && !mp_add_u64(acc, conv, &acc)) ||
		    !mp_muladd_u64(&acc, s->d_inner, s->dt_rank + 2 * s->d_state) ||
		    !mp_muladd_u64(&acc, s->dt_rank + 1, s->d_inner) || !mp_muladd_u64(&acc, s->d_inner, s->d_state + 1) ||
		    (s->dt_bc_norms && !mp_add_u64(acc, s->dt_rank + 2 * s->d_state, &acc)))
			return false;
	} else {
		if (!mp_add_u64(s->d_inner, conv, &proj) || !mp_add_u64(proj, s->n_heads, &proj) ||
		    !mp_muladd_u64(&acc, h, proj) || (s->proj_bias && !mp_add_u64(acc, proj, &acc)) ||
		    !mp_muladd_u64(&acc, conv, s->conv_kernel) || (s->conv_bias && !mp_add_u64(acc, conv, &acc)) ||
		    !mp_muladd_u64(&acc, 3, s->n_heads) || (s->gated_norm && !mp_add_u64(acc, s->d_inner, &acc)))
			return false;
	}
	if (!mp_muladd_u64(&acc, s->d_inner, h) || (s->proj_bias && !mp_add_u64(acc, h, &acc)))
		return false;
	*out = acc;
	return true;
}

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
 * Errors: MP_EOVERFLOW.
 */
mp_status mp_recurrent_state_bytes(const mp_model *m, mp_dtype conv_dtype, mp_dtype state_dtype, uint64_t tp,
                                   mp_recurrent_state *out, mp_error *err)
{
	const mp_ssm *s = &m->ssm;
	uint64_t conv, conv_values, state_values, layers = mp_model_ssm_layers(m);

	memset(out, 0, sizeof(*out));
	if (s->kind == MP_SSM_NONE || layers == 0)
		return MP_OK;
	out->layers = layers;
	if (s->state_in_model_dtype)
		state_dtype = conv_dtype;
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
	if (!mp_mul_u64(conv, s->conv_kernel > 0 ? s->conv_kernel - 1 : 0, &conv_values) ||
	    !mp_dtype_bytes(conv_dtype, conv_values, &out->conv_bytes_per_layer) ||
	    !mp_dtype_bytes(state_dtype, state_values, &out->ssm_bytes_per_layer) ||
	    !mp_add_u64(out->conv_bytes_per_layer, out->ssm_bytes_per_layer, &out->bytes_per_sequence) ||
	    !mp_mul_u64(out->bytes_per_sequence, layers, &out->bytes_per_sequence))
		goto overflow;
	return MP_OK;
overflow:
	return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the recurrent state overflows 64 bits");
}
