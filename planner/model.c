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
	if (!sizes_fit(m))
		return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m),
		               "the model's recurrent mixer or image tower widths overflow 64 bits");
	if (m->ssm.kind == MP_SSM_LISTED) {
		if (m->ssm.listed_model_values == 0 && m->ssm.listed_fp32_values == 0)
			return mp_fail(err, MP_EINVAL, mp_model_pointer(m), "the recurrent layers keep no state");
	} else if (m->ssm.kind == MP_SSM_KV_CONV) {
		REQUIRE_POSITIVE(m->ssm.conv_kernel, "conv_kernel_size");
	} else if (m->ssm.kind >= MP_SSM_GATED_DELTANET) {
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
			uint64_t gh = m->global_heads ? m->global_heads : m->num_heads;

			if (m->global_kv_heads > gh || gh % m->global_kv_heads != 0)
				return mp_fail_at(err, MP_EINVAL, mp_model_pointer(m), "/per_layer_config",
				               "num_attention_heads (%llu) must be a multiple of the full-attention layers' "
				               "num_key_value_heads (%llu)",
				               (unsigned long long)gh, (unsigned long long)m->global_kv_heads);
		}
	} else {
		REQUIRE_POSITIVE(m->kv_lora_rank, "kv_lora_rank");
		/* every MLA layer NoPE (GLM-5.3-Flash: qk_rope_head_dim 0 by design) needs no RoPE key */
		if (m->mla_nope_layers < mp_model_attention_layers(m))
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
	if (m->max_position_defaulted && limit == m->max_position_embeddings)
		/* the config never stated the context: say so, rather than blame a limit the user never set */
		return mp_fail_at(err, MP_EINVAL, base, field,
			       "%s needs %llu positions, beyond %llu tokens: that is the %s default of "
			       "max_position_embeddings%s, because the config does not state it; give "
			       "max_position_embeddings in the config, or set allow_beyond_max_position_embeddings: true",
			       field + 1, (unsigned long long)tokens, (unsigned long long)limit,
			       m->model_type[0] ? m->model_type : "model type's",
			       m->rope_scaling ? " (its rope_scaling taken as already in it)" : "");
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

/* The component of mp_param_count a tensor's parameters add to. */
static uint64_t *component(mp_param_count *pc, const mp_tensor *t)
{
	switch ((mp_tensor_kind)t->kind) {
	case MP_TK_EMBEDDING:
		return (t->flags & MP_TF_POSITIONS) ? &pc->position_embedding : &pc->embedding;
	case MP_TK_ATTENTION:
		return &pc->attention;
	case MP_TK_MLP:
		return &pc->mlp;
	case MP_TK_EXPERT:
	case MP_TK_SHARED_EXPERT:
		return &pc->experts;
	case MP_TK_NORM:
		return &pc->norms;
	case MP_TK_VISION:
	case MP_TK_PROJECTOR:
		return &pc->vision;
	case MP_TK_RECURRENT:
		return &pc->recurrent;
	default:
		return &pc->lm_head;
	}
}

mp_status mp_count_parameters(const mp_model *m, mp_param_count *out, mp_error *err)
{
	uint64_t routed = 0, routed_active = 0;
	mp_status st;

	memset(out, 0, sizeof(*out));
	st = mp_model_validate(m, err);
	if (st != MP_OK)
		return st;
	if (!m->inv.built)
		return mp_fail(err, MP_EINTERNAL, mp_model_pointer(m), "the model's tensors were not built (mp_model_build)");
	for (size_t i = 0; i < mp_inventory_size(&m->inv); i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);
		uint64_t v, *to;

		if (t->flags & (MP_TF_BUFFER | MP_TF_UNCOUNTED))
			continue;
		if (!mp_tensor_values(t, &v) || !mp_mul_u64(v, t->count, &v))
			goto overflow;
		to = component(out, t);
		if (!mp_add_u64(*to, v, to) || !mp_add_u64(out->total, v, &out->total))
			goto overflow;
		if (t->flags & MP_TF_OTHER_MODALITY) {
			/* another modality's experts or router: a text token runs none of them */
			if (!mp_add_u64(routed, v, &routed))
				goto overflow;
		} else if ((t->flags & MP_TF_ROUTED) && m->num_experts) {
			/* a token runs num_experts_per_tok of the num_experts copies this tensor holds per layer */
			uint64_t one = v / m->num_experts;

			if (!mp_add_u64(routed, v, &routed) || !mp_muladd_u64(&routed_active, one, m->num_experts_per_tok))
				goto overflow;
		}
	}
	out->active_per_token = out->total - routed;
	if (!mp_add_u64(out->active_per_token, routed_active, &out->active_per_token))
		goto overflow;
	return MP_OK;
overflow:
	return mp_model_overflow(m, "the parameter count", err);
}
