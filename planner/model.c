/*
 * model.c: model validation and exact parameter counts.
 * Counts follow the module structure of Hugging Face transformers' modeling files (modeling_llama.py and
 * relatives): one term per nn.Linear, nn.Embedding and norm weight. Tied embeddings are counted once, as
 * PyTorch's model.parameters() yields a shared tensor once.
 */
#include <string.h>

#include "memplan.h"

#define REQUIRE_POSITIVE(v, key)                                                                    \
	do {                                                                                        \
		if ((v) == 0)                                                                       \
			return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/" key, key " must be at least 1"); \
	} while (0)

const char *mp_model_pointer(const mp_model *m)
{
	return m->json_pointer[0] ? m->json_pointer : "/model";
}

mp_status mp_model_validate(const mp_model *m, mp_error *err)
{
	REQUIRE_POSITIVE(m->hidden_size, "hidden_size");
	REQUIRE_POSITIVE(m->num_layers, "num_hidden_layers");
	REQUIRE_POSITIVE(m->vocab_size, "vocab_size");
	REQUIRE_POSITIVE(m->num_heads, "num_attention_heads");
	if (m->num_layers > MP_MAX_LAYERS)
		return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/num_hidden_layers",
			       "num_hidden_layers is %llu; at most %d layers are supported",
			       (unsigned long long)m->num_layers, MP_MAX_LAYERS);
	if (m->attn_kind == MP_ATTN_GQA) {
		/* Case BI-03: check kv_heads >= 1, <= heads and dividing heads before any division. */
		REQUIRE_POSITIVE(m->num_kv_heads, "num_key_value_heads");
		REQUIRE_POSITIVE(m->head_dim, "head_dim");
		if (m->num_kv_heads > m->num_heads)
			return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/num_key_value_heads",
				       "num_key_value_heads (%llu) must not exceed num_attention_heads (%llu)",
				       (unsigned long long)m->num_kv_heads, (unsigned long long)m->num_heads);
		if (m->num_heads % m->num_kv_heads != 0)
			return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/num_key_value_heads",
				       "num_attention_heads (%llu) must be a multiple of num_key_value_heads "
				       "(%llu) for grouped-query attention",
				       (unsigned long long)m->num_heads, (unsigned long long)m->num_kv_heads);
	} else {
		REQUIRE_POSITIVE(m->kv_lora_rank, "kv_lora_rank");
		REQUIRE_POSITIVE(m->qk_rope_head_dim, "qk_rope_head_dim");
		REQUIRE_POSITIVE(m->qk_nope_head_dim, "qk_nope_head_dim");
		REQUIRE_POSITIVE(m->v_head_dim, "v_head_dim");
	}
	if (m->num_experts == 0 || m->first_dense_layers > 0)
		REQUIRE_POSITIVE(m->intermediate_size, "intermediate_size");
	if (m->num_experts > 0) {
		REQUIRE_POSITIVE(m->num_experts_per_tok, "num_experts_per_tok");
		REQUIRE_POSITIVE(m->moe_intermediate_size, "moe_intermediate_size");
		if (m->num_experts_per_tok > m->num_experts)
			return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/num_experts_per_tok",
				       "num_experts_per_tok (%llu) must not exceed the number of experts (%llu)",
				       (unsigned long long)m->num_experts_per_tok,
				       (unsigned long long)m->num_experts);
	}
	if (m->sliding_window_layers > m->num_layers)
		return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/layer_types",
			       "more sliding-window layers than layers");
	return MP_OK;
}

uint64_t mp_model_context_limit(const mp_model *m)
{
	if (m->learned_position_embeddings)
		return m->learned_position_embeddings;
	if (m->rope_scaling && m->rope_scaled_max_position > m->max_position_embeddings)
		return m->rope_scaled_max_position;
	return m->max_position_embeddings;
}

mp_status mp_check_context(const mp_model *m, uint64_t tokens, bool allow_beyond, const char *base, const char *field,
			   mp_error *err)
{
	uint64_t limit = mp_model_context_limit(m);

	if (limit == 0 || tokens <= limit)
		return MP_OK;
	if (m->learned_position_embeddings)
		return mp_fail_at(err, MP_EINVAL, base, field,
			       "%s needs %llu positions, more than the %llu rows of the model's learned position table",
			       field + 1, (unsigned long long)tokens, (unsigned long long)limit);
	if (allow_beyond)
		return MP_OK;
	/* case BI-05: contexts past the trained length without a RoPE scaling are refused */
	return mp_fail_at(err, MP_EINVAL, base, field,
		       "%s needs %llu positions, beyond the model's context of %llu tokens (max_position_embeddings%s); "
		       "set allow_beyond_max_position_embeddings: true to plan it anyway",
		       field + 1, (unsigned long long)tokens, (unsigned long long)limit,
		       m->rope_scaling ? " with its RoPE scaling" : ", no rope_scaling declared");
}

uint64_t mp_model_sequence_ceiling(const mp_model *m, bool allow_beyond)
{
	uint64_t limit = mp_model_context_limit(m);

	if (limit == 0 || limit > MP_MAX_SEQUENCE_LENGTH || (allow_beyond && !m->learned_position_embeddings))
		return MP_MAX_SEQUENCE_LENGTH;
	return limit;
}

/* Parameters of one linear layer in -> out, with or without bias. */
static bool linear(uint64_t *acc, uint64_t in, uint64_t out, bool bias)
{
	return mp_muladd_u64(acc, in, out) && (!bias || mp_add_u64(*acc, out, acc));
}

/* One norm of width h: RMSNorm has a weight, LayerNorm a weight and a bias. */
static bool norm(uint64_t *acc, const mp_model *m, uint64_t h)
{
	return mp_muladd_u64(acc, m->norm_kind == MP_NORM_LAYER ? 2 : 1, h);
}

/* One MLP of width f: gated = gate + up + down, plain = up + down (biases on each when mlp_bias). */
static bool mlp(uint64_t *acc, const mp_model *m, uint64_t f)
{
	uint64_t h = m->hidden_size;
	bool ok = linear(acc, h, f, m->mlp_bias) && linear(acc, f, h, m->mlp_bias);

	if (ok && m->ffn_kind == MP_FFN_GATED)
		ok = linear(acc, h, f, m->mlp_bias);
	return ok;
}

/* Attention block of one layer (projections, biases, qk norms). */
static bool attention(uint64_t *acc, const mp_model *m)
{
	uint64_t h = m->hidden_size, q_width, kv_width;

	if (m->attn_kind == MP_ATTN_MLA) {
		/* DeepSeek-V3 (modeling_deepseek_v3.py): q_a (h -> q_lora) + q_a_norm + q_b (q_lora -> heads x
		 * (nope + rope)), kv_a_with_mqa (h -> kv_lora + rope) + kv_a_norm + kv_b (kv_lora -> heads x
		 * (nope + v)), o (heads x v -> h). */
		uint64_t qk_head = m->qk_nope_head_dim + m->qk_rope_head_dim, qh, kvh, vo;

		if (!mp_mul_u64(m->num_heads, qk_head, &qh) ||
		    !mp_mul_u64(m->num_heads, m->qk_nope_head_dim + m->v_head_dim, &kvh) ||
		    !mp_mul_u64(m->num_heads, m->v_head_dim, &vo))
			return false;
		if (m->q_lora_rank > 0) {
			if (!linear(acc, h, m->q_lora_rank, m->qkv_bias) || !mp_add_u64(*acc, m->q_lora_rank, acc) ||
			    !linear(acc, m->q_lora_rank, qh, false))
				return false;
		} else if (!linear(acc, h, qh, false)) {
			return false;
		}
		return linear(acc, h, m->kv_lora_rank + m->qk_rope_head_dim, m->qkv_bias) &&
		       mp_add_u64(*acc, m->kv_lora_rank, acc) && linear(acc, m->kv_lora_rank, kvh, false) &&
		       linear(acc, vo, h, m->o_bias);
	}
	if (!mp_mul_u64(m->num_heads, m->head_dim, &q_width) || !mp_mul_u64(m->num_kv_heads, m->head_dim, &kv_width))
		return false;
	if (!linear(acc, h, q_width, m->qkv_bias) || !linear(acc, h, kv_width, m->qkv_bias) ||
	    !linear(acc, h, kv_width, m->qkv_bias) || !linear(acc, q_width, h, m->o_bias))
		return false;
	return !m->qk_norm || mp_muladd_u64(acc, 2, m->head_dim);
}

bool mp_model_is_moe_layer(const mp_model *m, uint64_t i)
{
	if (m->num_experts == 0 || i < m->first_dense_layers)
		return false;
	if (i < MP_MAX_LAYERS && (m->dense_layer_mask[i / 8] >> (i % 8)) & 1)
		return false;
	if (m->moe_layer_step > 1)
		return (i + 1) % m->moe_layer_step == 0;
	return true;
}

uint64_t mp_model_sliding_layers(const mp_model *m)
{
	if (m->sliding_window == 0)
		return 0;
	return m->sliding_window_layers ? m->sliding_window_layers : m->num_layers;
}

/* Experts of one MoE layer: router + routed experts + shared experts (+ shared gate). Sets *active to
 * what one token touches. */
static bool experts(uint64_t *acc, uint64_t *active, const mp_model *m)
{
	uint64_t one = 0, shared = 0, router = 0;

	if (!mlp(&one, m, m->moe_intermediate_size) || !linear(&router, m->hidden_size, m->num_experts, false))
		return false;
	if (m->router_bias && !mp_add_u64(router, m->num_experts, &router))
		return false;
	if (m->shared_expert_intermediate_size > 0 && !mlp(&shared, m, m->shared_expert_intermediate_size))
		return false;
	if (m->shared_expert_gate && !linear(&shared, m->hidden_size, 1, false))
		return false;
	*active = router + shared;
	return mp_muladd_u64(active, m->num_experts_per_tok, one) && mp_muladd_u64(acc, m->num_experts, one) &&
	       mp_add_u64(*acc, router + shared, acc);
}

/*
 * An overflowing count names the config key that drives it: every term is a product of these dimensions, so the
 * largest one is the value to check (issue 19: hidden_size 2^40 was reported as the whole model, and before that as
 * /sequence_length). Example: hidden_size 1,099,511,627,776 -> "/hidden_size".
 */
mp_status mp_model_overflow(const mp_model *m, const char *what, mp_error *err)
{
	const struct {
		const char *field;
		uint64_t v;
	} dims[] = { { "/hidden_size", m->hidden_size },
		     { "/intermediate_size", m->intermediate_size },
		     { "/moe_intermediate_size", m->moe_intermediate_size },
		     { "/vocab_size", m->vocab_size },
		     { "/num_hidden_layers", m->num_layers },
		     { "/head_dim", m->head_dim },
		     { "/num_attention_heads", m->num_heads },
		     { "/num_local_experts", m->num_experts } };
	size_t big = 0;

	for (size_t i = 1; i < sizeof(dims) / sizeof(dims[0]); i++)
		if (dims[i].v > dims[big].v)
			big = i;
	return mp_fail_at(err, MP_EOVERFLOW, mp_model_pointer(m), dims[big].field,
			  "%s (%llu) makes %s overflow 64 bits: no model is that large; check the value",
			  dims[big].field + 1, (unsigned long long)dims[big].v, what);
}

mp_status mp_count_parameters(const mp_model *m, mp_param_count *out, mp_error *err)
{
	mp_status st;
	uint64_t attn_one = 0, norms_one = 0, mlp_one = 0, exp_one = 0, exp_active = 0, moe_layers = 0;
	uint64_t active_trunk;

	memset(out, 0, sizeof(*out));
	st = mp_model_validate(m, err);
	if (st != MP_OK)
		return st;

	if (!mp_muladd_u64(&out->embedding, m->vocab_size, m->hidden_size) ||
	    !mp_muladd_u64(&out->position_embedding, m->learned_position_embeddings, m->hidden_size))
		goto overflow;
	if (!attention(&attn_one, m) || !mp_mul_u64(attn_one, m->num_layers, &out->attention))
		goto overflow;
	for (uint64_t i = 0; i < m->norms_per_layer; i++)
		if (!norm(&norms_one, m, m->hidden_size))
			goto overflow;
	if (!mp_mul_u64(norms_one, m->num_layers, &out->norms))
		goto overflow;
	if (m->final_norm && !norm(&out->norms, m, m->hidden_size))
		goto overflow;

	for (uint64_t i = 0; i < m->num_layers; i++)
		moe_layers += mp_model_is_moe_layer(m, i);
	if (moe_layers > 0 && !experts(&exp_one, &exp_active, m))
		goto overflow;
	if (m->intermediate_size > 0 && !mlp(&mlp_one, m, m->intermediate_size))
		goto overflow;
	if (!mp_mul_u64(mlp_one, m->num_layers - moe_layers, &out->mlp) ||
	    !mp_mul_u64(exp_one, moe_layers, &out->experts))
		goto overflow;

	if (!m->tie_word_embeddings && !linear(&out->lm_head, m->hidden_size, m->vocab_size, m->lm_head_bias))
		goto overflow;
	if (m->tie_word_embeddings && m->lm_head_bias && !mp_add_u64(out->lm_head, m->vocab_size, &out->lm_head))
		goto overflow;

	out->total = out->embedding;
	if (!mp_add_u64(out->total, out->position_embedding, &out->total) ||
	    !mp_add_u64(out->total, out->attention, &out->total) || !mp_add_u64(out->total, out->mlp, &out->total) ||
	    !mp_add_u64(out->total, out->experts, &out->total) || !mp_add_u64(out->total, out->norms, &out->total) ||
	    !mp_add_u64(out->total, out->lm_head, &out->total))
		goto overflow;
	active_trunk = out->total - out->experts;
	if (!mp_muladd_u64(&active_trunk, exp_active, moe_layers))
		goto overflow;
	out->active_per_token = active_trunk;
	return MP_OK;
overflow:
	return mp_model_overflow(m, "the parameter count", err);
}
