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
 *     d_inner -> h; in_proj and out_proj with biases when use_bias.
 *   Mamba-2 (modeling_mamba2.py Mamba2Mixer): in_proj h -> 2 d_inner + 2 G N + H, conv1d over conv_channels x K
 *     (+ bias), dt_bias, A_log and D of H each, the gated norm's d_inner weight, out_proj d_inner -> h.
 * Worked example (tests/test_models.c): mamba-130m (h 768, d_inner 1536, N 16, K 4, dt_rank 48) -> 2,359,296 +
 * 7,680 + 122,880 + 75,264 + 24,576 + 1,536 + 1,179,648 = 3,770,880 per layer.
 */
bool mp_ssm_layer_parameters(const mp_model *m, uint64_t *out)
{
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, conv, proj, acc = 0;

	*out = 0;
	if (s->kind == MP_SSM_NONE)
		return true;
	if (!conv_channels(s, &conv))
		return false;
	if (s->kind == MP_SSM_MAMBA1) {
		if (!mp_mul_u64(2, s->d_inner, &proj) || !mp_muladd_u64(&acc, h, proj) ||
		    (s->proj_bias && !mp_add_u64(acc, proj, &acc)) || !mp_muladd_u64(&acc, conv, s->conv_kernel) ||
		    (s->conv_bias && !mp_add_u64(acc, conv, &acc)) ||
		    !mp_muladd_u64(&acc, s->d_inner, s->dt_rank + 2 * s->d_state) ||
		    !mp_muladd_u64(&acc, s->dt_rank + 1, s->d_inner) || !mp_muladd_u64(&acc, s->d_inner, s->d_state + 1))
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
	if (s->kind == MP_SSM_MAMBA1) {
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
