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

static uint64_t layers_with(const mp_model *m, unsigned flag);

const char *mp_model_pointer(const mp_model *m)
{
	return m->json_pointer[0] ? m->json_pointer : "/model";
}

/* The widths the linear mixers and the image tower multiply out (planner/recurrent.c, weights.c, vision.c) fit 64
 * bits with room for the small factors (2, 3, 5) those files apply unchecked: each below 2^60. */
static bool sizes_fit(const mp_model *m)
{
	const mp_ssm *s = &m->ssm;
	const mp_vision *v = &m->vision;
	const uint64_t cap = UINT64_C(1) << 60;
	uint64_t kd, vd, hm, m2;

	if (!mp_mul_u64(s->n_groups, s->d_state, &kd) || !mp_mul_u64(s->n_heads, s->head_dim, &vd) || kd >= cap / 4 ||
	    vd >= cap / 4 || s->dt_rank >= cap || m->hidden_size >= cap / 8)
		return false;
	if (!mp_mul_u64(v->merge, v->merge, &m2) || !mp_mul_u64(v->hidden, m2 ? m2 : 1, &hm) || hm >= cap ||
	    v->hidden >= cap / 4 || v->layers >= cap / 4 || v->deepstack >= cap || v->feature_layers >= cap)
		return false;
	return !(v->feature_layers && !mp_mul_u64(v->hidden, v->feature_layers, &hm));
}

mp_status mp_model_validate(const mp_model *m, mp_error *err)
{
	REQUIRE_POSITIVE(m->hidden_size, "hidden_size");
	REQUIRE_POSITIVE(m->num_layers, "num_hidden_layers");
	REQUIRE_POSITIVE(m->vocab_size, "vocab_size");
	if (m->num_layers > MP_MAX_LAYERS)
		return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/num_hidden_layers",
			       "num_hidden_layers is %llu; at most %d layers are supported",
			       (unsigned long long)m->num_layers, MP_MAX_LAYERS);
	for (size_t i = 0; i < m->n_extra && i < MP_MAX_EXTRA_TENSORS; i++) {
		uint64_t n;

		if (!mp_mul_u64(m->extra[i].rows, m->extra[i].cols, &n) || !mp_mul_u64(n, m->extra[i].count, &n))
			return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the model's %s tensors overflow 64 bits",
			               m->extra[i].name);
	}
	if (!sizes_fit(m))
		return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m),
		               "the model's recurrent mixer or image tower widths overflow 64 bits");
	if (m->ssm.kind >= MP_SSM_GATED_DELTANET) {
		REQUIRE_POSITIVE(m->ssm.n_heads, "linear_num_heads");
		if (m->ssm.kind != MP_SSM_SHORT_CONV)
			REQUIRE_POSITIVE(m->ssm.head_dim, "linear_head_dim");
		if (m->ssm.kind != MP_SSM_LIGHTNING)
			REQUIRE_POSITIVE(m->ssm.conv_kernel, "linear_conv_kernel_dim");
		if (m->ssm.kind == MP_SSM_GATED_DELTANET) {
			REQUIRE_POSITIVE(m->ssm.n_groups, "linear_num_key_heads");
			REQUIRE_POSITIVE(m->ssm.d_state, "linear_key_head_dim");
			if (m->ssm.n_heads % m->ssm.n_groups != 0)
				return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/linear_num_value_heads",
				               "linear_num_value_heads (%llu) must be a multiple of linear_num_key_heads (%llu)",
				               (unsigned long long)m->ssm.n_heads, (unsigned long long)m->ssm.n_groups);
		}
	} else if (m->ssm.kind != MP_SSM_NONE) {
		REQUIRE_POSITIVE(m->ssm.d_inner, "intermediate_size");
		REQUIRE_POSITIVE(m->ssm.d_state, "state_size");
		REQUIRE_POSITIVE(m->ssm.conv_kernel, "conv_kernel");
		if (m->ssm.kind == MP_SSM_MAMBA2) {
			REQUIRE_POSITIVE(m->ssm.n_heads, "num_heads");
			REQUIRE_POSITIVE(m->ssm.n_groups, "n_groups");
		}
	}
	if (mp_model_attention_layers(m) == 0)
		goto ffn; /* a recurrent model: no attention to check */
	REQUIRE_POSITIVE(m->num_heads, "num_attention_heads");
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
		if (m->attn_per_layer && layers_with(m, MP_LAYER_GLOBAL)) {
			/* the global layers' widths (Gemma 4 per_layer_config) obey the same rules */
			REQUIRE_POSITIVE(m->global_head_dim, "per_layer_config");
			REQUIRE_POSITIVE(m->global_kv_heads, "per_layer_config");
			if (m->global_kv_heads > m->num_heads || m->num_heads % m->global_kv_heads != 0)
				return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/per_layer_config",
				               "num_attention_heads (%llu) must be a multiple of the full-attention layers' "
				               "num_key_value_heads (%llu)",
				               (unsigned long long)m->num_heads, (unsigned long long)m->global_kv_heads);
		}
	} else {
		REQUIRE_POSITIVE(m->kv_lora_rank, "kv_lora_rank");
		REQUIRE_POSITIVE(m->qk_rope_head_dim, "qk_rope_head_dim");
		REQUIRE_POSITIVE(m->qk_nope_head_dim, "qk_nope_head_dim");
		REQUIRE_POSITIVE(m->v_head_dim, "v_head_dim");
	}
ffn:
	if (mp_model_ffn_layers(m) > 0 && (m->num_experts == 0 || m->first_dense_layers > 0))
		REQUIRE_POSITIVE(m->intermediate_size, "intermediate_size");
	if (m->num_experts > 0) {
		REQUIRE_POSITIVE(m->num_experts_per_tok, "num_experts_per_tok");
		REQUIRE_POSITIVE(m->moe_intermediate_size, "moe_intermediate_size");
		if (m->zero_experts >= (UINT64_C(1) << 40) || m->num_experts >= (UINT64_C(1) << 40))
		return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the expert counts overflow 64 bits");
	if (m->num_experts_per_tok > m->num_experts + m->zero_experts)
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
	if (m->max_position_defaulted)
		/* the config never stated the context: say so, rather than blame a limit the user never set */
		return mp_fail_at(err, MP_EINVAL, base, field,
			       "%s needs %llu positions, beyond %llu tokens: that is the %s default of "
			       "max_position_embeddings, because the config does not state it; give max_position_embeddings "
			       "in the config, or set allow_beyond_max_position_embeddings: true",
			       field + 1, (unsigned long long)tokens, (unsigned long long)limit,
			       m->model_type[0] ? m->model_type : "model type's");
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
	return mp_muladd_u64(acc, m->norm_kind == MP_NORM_LAYER ? 2 : m->norm_kind == MP_NORM_NONE ? 0 : 1, h);
}

/* One MLP of width f: gated = gate + up + down, plain = up + down (biases on each when mlp_bias). */
static bool mlp(uint64_t *acc, const mp_model *m, uint64_t f)
{
	uint64_t h = m->hidden_size;
	bool ok = linear(acc, h, f, m->mlp_bias) && linear(acc, f, h, m->mlp_bias);

	if (ok && m->ffn_kind == MP_FFN_GATED)
		ok = linear(acc, h, f, m->mlp_bias);
	return ok && mp_add_u64(*acc, m->activation_params, acc) && mp_add_u64(*acc, m->ffn_sub_norm, acc);
}

/* DeepSeek-V3.2's indexer of one layer (modeling_deepseek_v32.py DeepseekV32Indexer): wq_b (q_lora_rank ->
 * heads x dim), wk (hidden -> dim), k_norm (LayerNorm of dim: weight and bias), weights_proj (hidden -> heads).
 * Worked example (DeepseekV32Config: 64 heads of 128, q_lora 1536, hidden 7168): 12,582,912 + 917,504 + 256 +
 * 458,752 = 13,959,424 per layer. */
static bool indexer(uint64_t *acc, const mp_model *m)
{
	uint64_t q;

	if (m->indexer_head_dim == 0)
		return true;
	return mp_mul_u64(m->indexer_heads, m->indexer_head_dim, &q) && linear(acc, m->q_lora_rank, q, false) &&
	       linear(acc, m->hidden_size, m->indexer_head_dim, false) && mp_muladd_u64(acc, 2, m->indexer_head_dim) &&
	       linear(acc, m->hidden_size, m->indexer_heads, false);
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
	if ((m->attn_output_gate && !linear(acc, h, q_width, m->qkv_bias)) || /* the gate's rows of q_proj */
	    !linear(acc, h, q_width, m->qkv_bias) || !linear(acc, h, kv_width, m->qkv_bias) ||
	    !linear(acc, h, kv_width, m->qkv_bias) || !linear(acc, q_width, h, m->o_bias))
		return false;
	if (m->attention_sinks && !mp_add_u64(*acc, m->num_heads, acc))
		return false;
	if (m->qk_norm_layer && !mp_muladd_u64(acc, 4, m->head_dim))
		return false;
	if (m->qk_norm_full) /* OLMo-2: RMSNorm over the whole q and k projections (modeling_olmo2.py) */
		return mp_add_u64(*acc, q_width, acc) && mp_add_u64(*acc, kv_width, acc);
	return !m->qk_norm || mp_muladd_u64(acc, 2, m->head_dim);
}

/*
 * The attention of one layer when it differs per layer (m->attn_per_layer; Gemma 4's Gemma4TextAttention and Gemma
 * 3n's Gemma3nTextAttention, transformers 5.24): q_proj (hidden -> heads x d), o_proj (heads x d -> hidden) and q_norm
 * (d) in every layer; k_proj and v_proj (hidden -> kv x d) and k_norm (d) only in a layer with a cache of its own
 * (not MP_LAYER_KV_SHARED); no v_proj in a global layer of attention_k_eq_v; v_norm has no weight. d and kv are
 * global_head_dim and global_kv_heads in an MP_LAYER_GLOBAL layer. Worked example (Gemma4TextConfig defaults:
 * hidden 2304, 8 heads, kv 4 of 256 on sliding layers, kv 4 of 512 on the full ones): 14,156,288 per sliding layer,
 * 28,312,576 per full layer (tests/test_models.c, gemma4-default).
 */
static bool attention_of_layer(uint64_t *acc, const mp_model *m, unsigned flags)
{
	bool global = (flags & MP_LAYER_GLOBAL) != 0, shared = (flags & MP_LAYER_KV_SHARED) != 0;
	uint64_t h = m->hidden_size, d = global ? m->global_head_dim : m->head_dim;
	uint64_t kv = global ? m->global_kv_heads : m->num_kv_heads, q_width, kv_width;

	if (!mp_mul_u64(m->num_heads, d, &q_width) || !mp_mul_u64(kv, d, &kv_width))
		return false;
	if (!linear(acc, h, q_width, m->qkv_bias) || !linear(acc, q_width, h, m->o_bias) ||
	    (m->qk_norm && !mp_add_u64(*acc, d, acc)))
		return false;
	if (shared)
		return true;
	return linear(acc, h, kv_width, m->qkv_bias) &&
	       (global && m->global_k_eq_v ? true : linear(acc, h, kv_width, m->qkv_bias)) &&
	       (!m->qk_norm || mp_add_u64(*acc, d, acc));
}

/* All attention layers' attention blocks when they differ per layer (m->attn_per_layer). */
static bool attention_per_layer(uint64_t *acc, const mp_model *m)
{
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		if ((m->layer_flags[i] & MP_LAYER_ATTENTION) && !attention_of_layer(acc, m, m->layer_flags[i]))
			return false;
	return true;
}

static uint64_t layers_with(const mp_model *m, unsigned flag)
{
	uint64_t n = 0;

	if (!m->layer_pattern)
		return flag == MP_LAYER_SSM ? 0 : m->num_layers;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		n += (m->layer_flags[i] & flag) != 0;
	return n;
}

uint64_t mp_model_attention_layers(const mp_model *m)
{
	return layers_with(m, MP_LAYER_ATTENTION);
}

uint64_t mp_model_ssm_layers(const mp_model *m)
{
	return layers_with(m, MP_LAYER_SSM);
}

uint64_t mp_model_ffn_layers(const mp_model *m)
{
	return layers_with(m, MP_LAYER_FFN);
}

bool mp_model_is_moe_layer(const mp_model *m, uint64_t i)
{
	if (m->layer_pattern && i < MP_MAX_LAYERS && !(m->layer_flags[i] & MP_LAYER_FFN))
		return false;
	if (m->num_experts == 0 || i < m->first_dense_layers)
		return false;
	if (i < MP_MAX_LAYERS && (m->dense_layer_mask[i / 8] >> (i % 8)) & 1)
		return false;
	if (m->moe_layer_step > 1)
		return (i + 1) % m->moe_layer_step == 0;
	return true;
}

uint64_t mp_model_indexer_layers(const mp_model *m)
{
	uint64_t attn = mp_model_attention_layers(m);

	if (m->indexer_head_dim == 0)
		return 0;
	return m->indexer_layers && m->indexer_layers < attn ? m->indexer_layers : attn;
}

uint64_t mp_model_sliding_layers(const mp_model *m)
{
	if (m->sliding_window == 0)
		return 0;
	return m->sliding_window_layers ? m->sliding_window_layers : mp_model_attention_layers(m);
}

/* Experts of one MoE layer: router + routed experts + shared experts (+ shared gate). Sets *active to
 * what one token touches. */
static bool experts(uint64_t *acc, uint64_t *active, const mp_model *m)
{
	uint64_t one = 0, shared = 0, router = 0;

	if (!mlp(&one, m, m->moe_intermediate_size) ||
	    !linear(&router, m->hidden_size, m->num_experts + m->zero_experts, false))
		return false;
	if (m->router_bias && !mp_add_u64(router, m->num_experts + m->zero_experts, &router))
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
	uint64_t attn_one = 0, norms_one = 0, mlp_one = 0, exp_one = 0, exp_active = 0, moe_layers = 0, ssm_one = 0;
	uint64_t active_trunk, attn_layers = mp_model_attention_layers(m), ffn_layers = mp_model_ffn_layers(m);
	uint64_t extra_experts = 0;

	memset(out, 0, sizeof(*out));
	st = mp_model_validate(m, err);
	if (st != MP_OK)
		return st;

	if (!mp_muladd_u64(&out->embedding, m->vocab_size, m->hidden_size) ||
	    !mp_muladd_u64(&out->position_embedding, m->learned_position_embeddings, m->hidden_size))
		goto overflow;
	if (m->attn_per_layer ? !attention_per_layer(&out->attention, m)
	                      : (!attention(&attn_one, m) ||
	                         !mp_mul_u64(attn_one, m->shared_block_params ? 0 : attn_layers, &out->attention)))
		goto overflow;
	{
		uint64_t idx_one = 0;

		if (!indexer(&idx_one, m) || !mp_muladd_u64(&out->attention, idx_one, mp_model_indexer_layers(m)))
			goto overflow;
	}
	if (m->ssm.kind != MP_SSM_NONE &&
	    (!mp_ssm_layer_parameters(m, &ssm_one) || !mp_mul_u64(ssm_one, mp_model_ssm_layers(m), &out->recurrent)))
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
	if (!mp_mul_u64(mlp_one,
	                m->shared_block_params ? 0 : m->moe_beside_dense ? ffn_layers : ffn_layers - moe_layers,
	                &out->mlp) ||
	    !mp_mul_u64(exp_one, moe_layers, &out->experts))
		goto overflow;

	{
		mp_tensor vt[MP_MAX_VISION_TENSORS];
		size_t nv = mp_vision_tensors(m, vt, MP_MAX_VISION_TENSORS);

		for (size_t i = 0; i < nv && i < MP_MAX_VISION_TENSORS; i++) {
			uint64_t n;

			if (!mp_mul_u64(vt[i].rows, vt[i].cols, &n) || !mp_muladd_u64(&out->vision, n, vt[i].count))
				goto overflow;
		}
	}
	for (size_t i = 0; i < m->n_extra && i < MP_MAX_EXTRA_TENSORS; i++) {
		const mp_extra_tensor *e = &m->extra[i];
		uint64_t n, *to = e->cls == MP_TC_EMBEDDINGS ? &out->embedding /* Gemma's per-layer token table */
		                  : e->cls == MP_TC_VISION ? &out->vision /* Gemma 3n's towers, described by shape */
		                  : e->cls == MP_TC_ATTENTION ? &out->attention
		                  : e->cls == MP_TC_MLP     ? &out->mlp
		                  : e->cls == MP_TC_NORMS   ? &out->norms
		                  : e->cls == MP_TC_EXPERTS ? &out->experts
		                                            : &out->recurrent;

		if (!mp_mul_u64(e->rows, e->cols, &n) || !mp_muladd_u64(to, n, e->count))
			goto overflow;
		/* an expert-class extra is the router's own (Gemma 4's router scales): every token reads it */
		if (e->cls == MP_TC_EXPERTS && !mp_muladd_u64(&extra_experts, n, e->count))
			goto overflow;
	}
	if (!m->tie_word_embeddings && !linear(&out->lm_head, m->hidden_size, m->vocab_size, m->lm_head_bias))
		goto overflow;
	if (m->tie_word_embeddings && m->lm_head_bias && !mp_add_u64(out->lm_head, m->vocab_size, &out->lm_head))
		goto overflow;

	out->total = out->embedding;
	if (!mp_add_u64(out->total, out->position_embedding, &out->total) ||
	    !mp_add_u64(out->total, out->attention, &out->total) || !mp_add_u64(out->total, out->mlp, &out->total) ||
	    !mp_add_u64(out->total, out->experts, &out->total) || !mp_add_u64(out->total, out->norms, &out->total) ||
	    !mp_add_u64(out->total, out->lm_head, &out->total) || !mp_add_u64(out->total, out->recurrent, &out->total) ||
	    !mp_add_u64(out->total, out->vision, &out->total))
		goto overflow;
	active_trunk = out->total - out->experts;
	if (!mp_muladd_u64(&active_trunk, exp_active, moe_layers) || !mp_add_u64(active_trunk, extra_experts, &active_trunk))
		goto overflow;
	out->active_per_token = active_trunk;
	return MP_OK;
overflow:
	return mp_model_overflow(m, "the parameter count", err);
}
