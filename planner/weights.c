/*
 * weights.c: the model's tensors (one row per shape and role) and their bytes in every storage format, per
 * tensor-parallel rank. The tensor list follows the modules of transformers' modeling files, so its
 * parameters equal mp_count_parameters (the tests hold both to the same references). Formats never reach
 * the parameter count; the parameter count never depends on a format.
 */
#include <string.h>

#include "memplan.h"

const char *mp_tensor_class_name(mp_tensor_class c)
{
	static const char *const names[MP_TC_COUNT] = {"embeddings", "attention", "mlp", "experts", "lm_head", "norms",
	                                                       "recurrent", "vision"};

	return (unsigned)c < MP_TC_COUNT ? names[c] : "invalid";
}

typedef struct builder {
	mp_tensor_list *l;
	bool full;
} builder;

static void add_t(builder *b, const char *name, mp_tensor_class cls, uint64_t rows, uint64_t cols, uint64_t count,
                  mp_tp_split split, bool vector, bool buffer)
{
	mp_tensor *t;

	if (count == 0 || rows == 0 || cols == 0)
		return;
	if (b->l->n == MP_MAX_TENSOR_KINDS) {
		b->full = true;
		return;
	}
	t = &b->l->t[b->l->n++];
	t->name = name;
	t->cls = cls;
	t->rows = rows;
	t->cols = cols;
	t->count = count;
	t->split = split;
	t->vector = vector;
	t->buffer = buffer;
	t->router = false;
}

/* A matrix rows x cols, a vector of `values`, a buffer (fp32, not a parameter). */
#define MAT(b, name, cls, rows, cols, count, split)                                                                    \
	add_t((b), (name), (cls), (rows), (cols), (count), (split), false, false)
#define VEC(b, name, cls, values, count, split) add_t((b), (name), (cls), 1, (values), (count), (split), true, false)
#define BUF(b, name, values, count) add_t((b), (name), MP_TC_NORMS, 1, (values), (count), MP_SPLIT_NONE, true, true)

/* A linear layer out x in with an optional bias; the bias follows the output split (a row-parallel layer's
 * bias is replicated: vLLM RowParallelLinear adds it once after the reduction). */
static void linear(builder *b, const char *name, const char *bias_name, mp_tensor_class cls, uint64_t out, uint64_t in,
                   bool bias, uint64_t count, mp_tp_split split)
{
	MAT(b, name, cls, out, in, count, split);
	if (bias)
		VEC(b, bias_name, cls, out, count, split == MP_SPLIT_COLS ? MP_SPLIT_NONE : split);
}

static void mlp(builder *b, const mp_model *m, const char *gate, const char *up, const char *down, mp_tensor_class cls,
                uint64_t f, uint64_t count, const char *const bias_names[3])
{
	if (m->ffn_kind == MP_FFN_GATED)
		linear(b, gate, bias_names[0], cls, f, m->hidden_size, m->mlp_bias, count, MP_SPLIT_ROWS);
	linear(b, up, bias_names[1], cls, f, m->hidden_size, m->mlp_bias, count, MP_SPLIT_ROWS);
	linear(b, down, bias_names[2], cls, m->hidden_size, f, m->mlp_bias, count, MP_SPLIT_COLS);
	if (m->activation_params && count)
		VEC(b, "act_fn.alpha", cls, m->activation_params, count, MP_SPLIT_NONE);
	if (m->ffn_sub_norm && count)
		VEC(b, "mlp.ffn_sub_norm", cls, m->ffn_sub_norm, count, MP_SPLIT_ROWS);
}

/* The linear-attention mixers' tensors (planner/recurrent.c names each module and its source), `count` layers.
 * Heads split over tensor-parallel ranks (vLLM's GatedDeltaNet, KimiDeltaAttention, MiniMaxText01LinearAttention and
 * ShortConv shard their projections by head). */
static void linear_mixer_tensors(builder *b, const mp_model *m, uint64_t count)
{
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, kd = s->n_groups * s->d_state, vd = s->n_heads * s->head_dim;

	switch (s->kind) {
	case MP_SSM_GATED_DELTANET:
		MAT(b, "linear_attn.in_proj_qkvz", MP_TC_RECURRENT, 2 * kd + 2 * vd, h, count, MP_SPLIT_ROWS);
		MAT(b, "linear_attn.in_proj_ba", MP_TC_RECURRENT, 2 * s->n_heads, h, count, MP_SPLIT_ROWS);
		MAT(b, "linear_attn.conv1d", MP_TC_RECURRENT, 2 * kd + vd, s->conv_kernel, count, MP_SPLIT_ROWS);
		VEC(b, "linear_attn.dt_bias_A_log", MP_TC_RECURRENT, 2 * s->n_heads, count, MP_SPLIT_ROWS);
		VEC(b, "linear_attn.norm", MP_TC_RECURRENT, s->head_dim, count, MP_SPLIT_NONE);
		MAT(b, "linear_attn.out_proj", MP_TC_RECURRENT, h, vd, count, MP_SPLIT_COLS);
		return;
	case MP_SSM_KDA:
		MAT(b, "self_attn.q_k_v_proj", MP_TC_RECURRENT, vd, h, 3 * count, MP_SPLIT_ROWS);
		MAT(b, "self_attn.conv1d", MP_TC_RECURRENT, 3 * vd, s->conv_kernel, count, MP_SPLIT_ROWS);
		VEC(b, "self_attn.forget_gate.A_log", MP_TC_RECURRENT, s->n_heads, count, MP_SPLIT_ROWS);
		VEC(b, "self_attn.forget_gate.dt_bias", MP_TC_RECURRENT, vd, count, MP_SPLIT_ROWS);
		MAT(b, "self_attn.f_g_a_proj", MP_TC_RECURRENT, s->d_state, h, 2 * count, MP_SPLIT_NONE);
		MAT(b, "self_attn.f_g_b_proj", MP_TC_RECURRENT, vd, s->d_state, 2 * count, MP_SPLIT_ROWS);
		MAT(b, "self_attn.b_proj", MP_TC_RECURRENT, s->n_heads, h, count, MP_SPLIT_ROWS);
		VEC(b, "self_attn.o_norm", MP_TC_RECURRENT, s->head_dim, count, MP_SPLIT_NONE);
		MAT(b, "self_attn.o_proj", MP_TC_RECURRENT, h, vd, count, MP_SPLIT_COLS);
		return;
	case MP_SSM_LIGHTNING:
		MAT(b, "self_attn.qkv_proj", MP_TC_RECURRENT, 3 * vd, h, count, MP_SPLIT_ROWS);
		MAT(b, "self_attn.output_gate", MP_TC_RECURRENT, vd, h, count, MP_SPLIT_ROWS);
		VEC(b, "self_attn.norm", MP_TC_RECURRENT, vd, count, MP_SPLIT_ROWS);
		MAT(b, "self_attn.out_proj", MP_TC_RECURRENT, h, vd, count, MP_SPLIT_COLS);
		return;
	case MP_SSM_SHORT_CONV:
		linear(b, "conv.in_proj", "conv.in_proj.bias", MP_TC_RECURRENT, 3 * h, h, s->conv_bias, count,
		       MP_SPLIT_ROWS);
		MAT(b, "conv.conv", MP_TC_RECURRENT, h, s->conv_kernel, count, MP_SPLIT_ROWS);
		if (s->conv_bias)
			VEC(b, "conv.conv.bias", MP_TC_RECURRENT, h, count, MP_SPLIT_ROWS);
		linear(b, "conv.out_proj", "conv.out_proj.bias", MP_TC_RECURRENT, h, h, s->conv_bias, count,
		       MP_SPLIT_COLS);
		return;
	default:
		return;
	}
}

/* The recurrent mixer's tensors (planner/recurrent.c names each and its source), `count` layers. Channel
 * dimensions split over tensor-parallel ranks as vLLM's MambaMixer/MambaMixer2 split them. */
static void ssm_tensors(builder *b, const mp_model *m, uint64_t count)
{
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, conv = s->d_inner;

	if (s->kind == MP_SSM_NONE || count == 0)
		return;
	if (s->kind >= MP_SSM_GATED_DELTANET) {
		linear_mixer_tensors(b, m, count);
		return;
	}
	if (s->kind == MP_SSM_MAMBA2)
		conv = s->d_inner + 2 * s->n_groups * s->d_state;
	linear(b, "mixer.in_proj", "mixer.in_proj.bias", MP_TC_RECURRENT,
	       s->kind == MP_SSM_MAMBA1 ? 2 * s->d_inner : s->d_inner + conv + s->n_heads, h, s->proj_bias, count,
	       MP_SPLIT_ROWS);
	MAT(b, "mixer.conv1d", MP_TC_RECURRENT, conv, s->conv_kernel, count, MP_SPLIT_ROWS);
	if (s->conv_bias)
		VEC(b, "mixer.conv1d.bias", MP_TC_RECURRENT, conv, count, MP_SPLIT_ROWS);
	if (s->kind == MP_SSM_MAMBA1) {
		MAT(b, "mixer.x_proj", MP_TC_RECURRENT, s->dt_rank + 2 * s->d_state, s->d_inner, count, MP_SPLIT_COLS);
		linear(b, "mixer.dt_proj", "mixer.dt_proj.bias", MP_TC_RECURRENT, s->d_inner, s->dt_rank, true, count,
		       MP_SPLIT_ROWS);
		MAT(b, "mixer.A_log", MP_TC_RECURRENT, s->d_inner, s->d_state, count, MP_SPLIT_ROWS);
		VEC(b, "mixer.D", MP_TC_RECURRENT, s->d_inner, count, MP_SPLIT_ROWS);
		if (s->dt_bc_norms)
			VEC(b, "mixer.dt_b_c_layernorm", MP_TC_RECURRENT, s->dt_rank + 2 * s->d_state, count, MP_SPLIT_NONE);
	} else {
		VEC(b, "mixer.dt_bias", MP_TC_RECURRENT, s->n_heads, count, MP_SPLIT_ROWS);
		VEC(b, "mixer.A_log", MP_TC_RECURRENT, s->n_heads, count, MP_SPLIT_ROWS);
		VEC(b, "mixer.D", MP_TC_RECURRENT, s->n_heads, count, MP_SPLIT_ROWS);
		if (s->gated_norm)
			VEC(b, "mixer.norm", MP_TC_RECURRENT, s->d_inner, count, MP_SPLIT_ROWS);
	}
	linear(b, "mixer.out_proj", "mixer.out_proj.bias", MP_TC_RECURRENT, h, s->d_inner, s->proj_bias, count,
	       MP_SPLIT_COLS);
}

/* A norm of `width`: RMSNorm a weight, LayerNorm a weight and a bias. */
static void norm(builder *b, bool layer_norm, const char *w, const char *bias, mp_tensor_class cls, uint64_t width,
                 uint64_t count)
{
	if (w == NULL)
		return; /* a norm without parameters */
	VEC(b, w, cls, width, count, MP_SPLIT_NONE);
	if (layer_norm)
		VEC(b, bias, cls, width, count, MP_SPLIT_NONE);
}

/* The attention tensors when they differ per layer (m->attn_per_layer; planner/model.c attention_of_layer names each
 * module): one row per kind of layer (the model's widths, then the global ones under "global."), each counted over
 * the layers that hold it. */
static void attention_per_layer(builder *b, const mp_model *m)
{
	static const char *const names[2][6] = {
	    {"q_proj", "k_proj", "v_proj", "o_proj", "q_norm", "k_norm"},
	    {"global.q_proj", "global.k_proj", "global.v_proj", "global.o_proj", "global.q_norm", "global.k_norm"}};
	static const char *const biases[2][4] = {{"q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias"},
	                                         {"global.q_proj.bias", "global.k_proj.bias", "global.v_proj.bias",
	                                          "global.o_proj.bias"}};

	for (int g = 0; g < 2; g++) {
		uint64_t all = 0, own = 0, d = g ? m->global_head_dim : m->head_dim;
		uint64_t kv = g ? m->global_kv_heads : m->num_kv_heads;

		for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
			unsigned f = m->layer_flags[i];

			if (!(f & MP_LAYER_ATTENTION) || ((f & MP_LAYER_GLOBAL) != 0) != (g == 1))
				continue;
			all++;
			own += !(f & MP_LAYER_KV_SHARED);
		}
		linear(b, names[g][0], biases[g][0], MP_TC_ATTENTION, m->num_heads * d, m->hidden_size, m->qkv_bias, all,
		       MP_SPLIT_ROWS);
		linear(b, names[g][1], biases[g][1], MP_TC_ATTENTION, kv * d, m->hidden_size, m->qkv_bias, own,
		       MP_SPLIT_KV_ROWS);
		if (!(g && m->global_k_eq_v))
			linear(b, names[g][2], biases[g][2], MP_TC_ATTENTION, kv * d, m->hidden_size, m->qkv_bias, own,
			       MP_SPLIT_KV_ROWS);
		linear(b, names[g][3], biases[g][3], MP_TC_ATTENTION, m->hidden_size, m->num_heads * d, m->o_bias, all,
		       MP_SPLIT_COLS);
		if (m->qk_norm) {
			norm(b, false, names[g][4], NULL, MP_TC_ATTENTION, d, all);
			norm(b, false, names[g][5], NULL, MP_TC_ATTENTION, d, own);
		}
	}
}

static bool mul3(uint64_t a, uint64_t b, uint64_t c, uint64_t *out)
{
	return mp_mul_u64(a, b, out) && mp_mul_u64(*out, c, out);
}

mp_status mp_model_tensors(const mp_model *m, mp_weight_layout layout, mp_tensor_list *out, mp_error *err)
{
	builder b = {out, false};
	uint64_t L = mp_model_attention_layers(m), h = m->hidden_size, moe_layers = 0, q_width, kv_width, w;
	uint64_t ffn_layers = mp_model_ffn_layers(m);
	const char *nw = m->norm_kind == MP_NORM_NONE ? NULL : "layernorm";
	mp_status st;
	static const char *const mlp_bias_names[3] = {"mlp.gate_proj.bias", "mlp.up_proj.bias", "mlp.down_proj.bias"};
	static const char *const exp_bias_names[3] = {"experts.gate_proj.bias", "experts.up_proj.bias",
	                                              "experts.down_proj.bias"};
	static const char *const sh_bias_names[3] = {"shared_expert.gate_proj.bias", "shared_expert.up_proj.bias",
	                                             "shared_expert.down_proj.bias"};

	memset(out, 0, sizeof(*out));
	st = mp_model_validate(m, err);
	if (st != MP_OK)
		return st;
	for (uint64_t i = 0; i < m->num_layers; i++)
		moe_layers += mp_model_is_moe_layer(m, i);

	/* embeddings (nn.Embedding vocab x hidden; VocabParallelEmbedding splits the vocabulary) */
	MAT(&b, "embed_tokens", MP_TC_EMBEDDINGS, m->vocab_size, h, 1, MP_SPLIT_ROWS);
	MAT(&b, "embed_positions", MP_TC_EMBEDDINGS, m->learned_position_embeddings, h, 1, MP_SPLIT_NONE);

	/* attention (a model whose attention and MLP weights are shared blocks lists them below, with the extras) */
	if (m->shared_block_params)
		L = 0;
	if (m->attn_kind == MP_ATTN_MLA) {
		uint64_t qk = m->qk_nope_head_dim + m->qk_rope_head_dim, qh, kvh, vo;

		if (!mp_mul_u64(m->num_heads, qk, &qh) ||
		    !mp_mul_u64(m->num_heads, m->qk_nope_head_dim + m->v_head_dim, &kvh) ||
		    !mp_mul_u64(m->num_heads, m->v_head_dim, &vo))
			goto overflow;
		if (m->q_lora_rank > 0) {
			linear(&b, "q_a_proj", "q_a_proj.bias", MP_TC_ATTENTION, m->q_lora_rank, h, m->qkv_bias, L,
			       MP_SPLIT_NONE);
			norm(&b, false, "q_a_layernorm", NULL, MP_TC_ATTENTION, m->q_lora_rank, L);
			linear(&b, "q_b_proj", NULL, MP_TC_ATTENTION, qh, m->q_lora_rank, false, L, MP_SPLIT_ROWS);
		} else {
			linear(&b, "q_proj", NULL, MP_TC_ATTENTION, qh, h, false, L, MP_SPLIT_ROWS);
		}
		linear(&b, "kv_a_proj_with_mqa", "kv_a_proj_with_mqa.bias", MP_TC_ATTENTION,
		       m->kv_lora_rank + m->qk_rope_head_dim, h, m->qkv_bias, L, MP_SPLIT_NONE);
		norm(&b, false, "kv_a_layernorm", NULL, MP_TC_ATTENTION, m->kv_lora_rank, L);
		linear(&b, "kv_b_proj", NULL, MP_TC_ATTENTION, kvh, m->kv_lora_rank, false, L, MP_SPLIT_ROWS);
		linear(&b, "o_proj", "o_proj.bias", MP_TC_ATTENTION, h, vo, m->o_bias, L, MP_SPLIT_COLS);
		if (m->indexer_head_dim) {
			/* DeepSeek-V3.2's indexer (planner/model.c); vLLM replicates it on every rank */
			uint64_t IL = mp_model_indexer_layers(m);

			MAT(&b, "indexer.wq_b", MP_TC_ATTENTION, m->indexer_heads * m->indexer_head_dim, m->q_lora_rank,
			    IL, MP_SPLIT_NONE);
			MAT(&b, "indexer.wk", MP_TC_ATTENTION, m->indexer_head_dim, h, IL, MP_SPLIT_NONE);
			norm(&b, true, "indexer.k_norm", "indexer.k_norm.bias", MP_TC_ATTENTION, m->indexer_head_dim, IL);
			MAT(&b, "indexer.weights_proj", MP_TC_ATTENTION, m->indexer_heads, h, IL, MP_SPLIT_NONE);
		}
	} else if (m->attn_per_layer) {
		/* the widest of the two kinds of layer bounds every product attention_per_layer makes */
		uint64_t d = m->head_dim > m->global_head_dim ? m->head_dim : m->global_head_dim;
		uint64_t kv = m->num_kv_heads > m->global_kv_heads ? m->num_kv_heads : m->global_kv_heads;

		if (!mp_mul_u64(m->num_heads, d, &q_width) || !mp_mul_u64(kv, d, &kv_width))
			goto overflow;
		attention_per_layer(&b, m);
	} else {
		if (!mp_mul_u64(m->num_heads, m->head_dim, &q_width) ||
		    !mp_mul_u64(m->num_kv_heads, m->head_dim, &kv_width))
			goto overflow;
		linear(&b, "q_proj", "q_proj.bias", MP_TC_ATTENTION, q_width * (m->attn_output_gate ? 2 : 1), h,
		       m->qkv_bias, L, MP_SPLIT_ROWS);
		linear(&b, "k_proj", "k_proj.bias", MP_TC_ATTENTION, kv_width, h, m->qkv_bias, L, MP_SPLIT_KV_ROWS);
		linear(&b, "v_proj", "v_proj.bias", MP_TC_ATTENTION, kv_width, h, m->qkv_bias, L, MP_SPLIT_KV_ROWS);
		linear(&b, "o_proj", "o_proj.bias", MP_TC_ATTENTION, h, q_width, m->o_bias, L, MP_SPLIT_COLS);
		if (m->qk_norm_full) {
			/* one weight per value of the whole q and k projections (OLMo-2); split with them */
			VEC(&b, "q_norm", MP_TC_ATTENTION, q_width, L, MP_SPLIT_ROWS);
			VEC(&b, "k_norm", MP_TC_ATTENTION, kv_width, L, MP_SPLIT_KV_ROWS);
		} else if (m->qk_norm) {
			norm(&b, false, "q_norm", NULL, MP_TC_ATTENTION, m->head_dim, L);
			norm(&b, false, "k_norm", NULL, MP_TC_ATTENTION, m->head_dim, L);
		}
		if (m->qk_norm_layer) { /* Phi: q_layernorm and k_layernorm, LayerNorm(head_dim) each */
			norm(&b, true, "q_layernorm", "q_layernorm.bias", MP_TC_ATTENTION, m->head_dim, L);
			norm(&b, true, "k_layernorm", "k_layernorm.bias", MP_TC_ATTENTION, m->head_dim, L);
		}
		if (m->attention_sinks) /* gpt_oss: a sink logit per head, split with the heads */
			VEC(&b, "sinks", MP_TC_ATTENTION, m->num_heads, L, MP_SPLIT_ROWS);
	}
	ssm_tensors(&b, m, mp_model_ssm_layers(m));

	/* dense MLPs */
	mlp(&b, m, "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj", MP_TC_MLP, m->intermediate_size,
	    m->intermediate_size && !m->shared_block_params ? (m->moe_beside_dense ? ffn_layers : ffn_layers - moe_layers)
	                                                    : 0,
	    mlp_bias_names);

	/* experts */
	if (moe_layers > 0) {
		if (!mp_mul_u64(moe_layers, m->num_experts, &w))
			goto overflow;
		mlp(&b, m, "experts.gate_proj", "experts.up_proj", "experts.down_proj", MP_TC_EXPERTS,
		    m->moe_intermediate_size, w, exp_bias_names);
		MAT(&b, "router", MP_TC_EXPERTS, m->num_experts + m->zero_experts, h, moe_layers, MP_SPLIT_NONE);
		if (out->n)
			out->t[out->n - 1].router = true;
		if (m->router_bias)
			VEC(&b, "router.bias", MP_TC_EXPERTS, m->num_experts + m->zero_experts, moe_layers, MP_SPLIT_NONE);
		mlp(&b, m, "shared_expert.gate_proj", "shared_expert.up_proj", "shared_expert.down_proj", MP_TC_EXPERTS,
		    m->shared_expert_intermediate_size, m->shared_expert_intermediate_size ? moe_layers : 0,
		    sh_bias_names);
		if (m->shared_expert_gate)
			MAT(&b, "shared_expert_gate", MP_TC_EXPERTS, 1, h, moe_layers, MP_SPLIT_NONE);
		if (m->router_correction_buffer)
			BUF(&b, "router.e_score_correction_bias", m->num_experts + m->zero_experts,
			    moe_layers > m->hash_router_layers ? moe_layers - m->hash_router_layers : 0);
		/* DeepSeek-V4's hash-routed layers: tid2eid, vocab x top-k int64 (two fp32-sized values each), in place of
		 * the correction bias (modeling_deepseek_v4.py DeepseekV4HashRouter, a persistent buffer) */
		if (m->hash_router_layers && m->num_experts_per_tok &&
		    m->vocab_size <= UINT64_MAX / 2 / m->num_experts_per_tok)
			BUF(&b, "router.tid2eid", 2 * m->vocab_size * m->num_experts_per_tok, m->hash_router_layers);
	}

	/* norms */
	if (!mp_mul_u64(m->num_layers, m->norms_per_layer, &w))
		goto overflow;
	norm(&b, m->norm_kind == MP_NORM_LAYER, nw, "layernorm.bias", MP_TC_NORMS, h, w);
	if (m->final_norm)
		norm(&b, m->norm_kind == MP_NORM_LAYER, nw ? "norm" : NULL, "norm.bias", MP_TC_NORMS, h, 1);

	/* head */
	if (!m->tie_word_embeddings)
		MAT(&b, "lm_head", MP_TC_LM_HEAD, m->vocab_size, h, 1, MP_SPLIT_ROWS);
	if (m->lm_head_bias)
		VEC(&b, "lm_head.bias", MP_TC_LM_HEAD, m->vocab_size, 1, MP_SPLIT_ROWS);

	/* modules the reader describes by shape (mp_model.extra) */
	for (size_t i = 0; i < m->n_extra && i < MP_MAX_EXTRA_TENSORS; i++)
		add_t(&b, m->extra[i].name, (mp_tensor_class)m->extra[i].cls, m->extra[i].rows, m->extra[i].cols,
		      m->extra[i].count, MP_SPLIT_NONE, m->extra[i].vector, false);

	/* a multimodal wrapper's image tower and projector (planner/vision.c) */
	{
		size_t room = MP_MAX_TENSOR_KINDS - out->n, nv = mp_vision_tensors(m, out->t + out->n, room);

		if (nv > room)
			b.full = true;
		else
			out->n += nv;
	}

	/* runtime buffers */
	if (m->rotary_dim >= 2 && layout == MP_LAYOUT_PYTORCH)
		/* transformers' <Type>RotaryEmbedding registers inv_freq and original_inv_freq (rotary_dim / 2
		 * fp32 values each) per RoPE module; gemma3 has a local and a global module. */
		BUF(&b, "rotary.inv_freq", m->rotary_dim / 2,
		    2 * (uint64_t)(m->rotary_buffer_sets ? m->rotary_buffer_sets : 1));
	if (m->rotary_dim >= 2 && layout == MP_LAYOUT_GGUF && strcmp(m->rope_type, "llama3") == 0)
		/* llama.cpp convert_hf_to_gguf.py writes rope_freqs (rotary_dim / 2 f32) for llama3 scaling. */
		BUF(&b, "rope_freqs", m->rotary_dim / 2, 1);
	if (b.full)
		return mp_fail(err, MP_EINTERNAL, mp_model_pointer(m), "the model has more tensor kinds than %d",
		               MP_MAX_TENSOR_KINDS);
	/* every tensor's size must fit 64 bits before anyone multiplies by a format */
	for (size_t i = 0; i < out->n; i++) {
		uint64_t n;

		if (!mul3(out->t[i].rows, out->t[i].cols, out->t[i].count, &n))
			goto overflow;
	}
	return MP_OK;
overflow:
	return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the model's tensor sizes overflow 64 bits");
}

/* ----- bytes per format ------------------------------------------------------------------------------- */

static bool is_gguf(mp_dtype d)
{
	return d == MP_DTYPE_Q8_0 || d == MP_DTYPE_Q4_0 || d == MP_DTYPE_Q4_K || d == MP_DTYPE_Q5_K ||
	       d == MP_DTYPE_Q6_K;
}

static bool is_float(mp_dtype d)
{
	return d == MP_DTYPE_FP32 || d == MP_DTYPE_BF16 || d == MP_DTYPE_FP16;
}

typedef struct fmt_ctx {
	uint64_t group;
	mp_int4_scheme scheme;
	bool nf4_dq;
	uint64_t align; /* round each allocation up to this; 1 = none */
} fmt_ctx;

static bool round_add(uint64_t *acc, uint64_t bytes, uint64_t align)
{
	if (align > 1 && bytes % align)
		if (!mp_add_u64(bytes, align - bytes % align, &bytes))
			return false;
	return mp_add_u64(*acc, bytes, acc);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* Bytes of one r x c matrix in format d (every component allocation rounded to ctx->align). */
static bool matrix_bytes(mp_dtype d, uint64_t r, uint64_t c, const fmt_ctx *x, uint64_t *out)
{
	uint64_t n, t, groups;

	*out = 0;
	if (!mp_mul_u64(r, c, &n))
		return false;
	switch (d) {
	case MP_DTYPE_FP8_E4M3:
	case MP_DTYPE_FP8_E5M2:
		return round_add(out, n, x->align) && round_add(out, 4, x->align);
	case MP_DTYPE_INT8:
		return round_add(out, n, x->align) && mp_mul_u64(r, 4, &t) && round_add(out, t, x->align);
	case MP_DTYPE_INT4:
		groups = ceil_div(c, x->group < c ? x->group : c);
		if (x->scheme == MP_INT4_GPTQ) {
			/* qweight int32 [c/8, r], qzeros int32 [groups, r/8], scales fp16 [groups, r], g_idx int32 [c]
			 */
			if (!mp_mul_u64(ceil_div(c, 8) * 4, r, &t) || !round_add(out, t, x->align))
				return false;
		} else {
			/* AWQ: qweight int32 [c, r/8] */
			if (!mp_mul_u64(ceil_div(r, 8) * 4, c, &t) || !round_add(out, t, x->align))
				return false;
		}
		if (!mp_mul_u64(groups, ceil_div(r, 8) * 4, &t) || !round_add(out, t, x->align))
			return false;
		if (!mp_mul_u64(groups, r, &t) || !mp_mul_u64(t, 2, &t) || !round_add(out, t, x->align))
			return false;
		return x->scheme != MP_INT4_GPTQ || (mp_mul_u64(c, 4, &t) && round_add(out, t, x->align));
	case MP_DTYPE_NF4: {
		uint64_t blocks = ceil_div(n, 64);

		if (!round_add(out, ceil_div(n, 2), x->align) || !round_add(out, 16 * 4, x->align))
			return false;
		if (!x->nf4_dq)
			return mp_mul_u64(blocks, 4, &t) && round_add(out, t, x->align);
		return round_add(out, blocks, x->align) && round_add(out, ceil_div(blocks, 256) * 4, x->align) &&
		       round_add(out, 256 * 4, x->align) && round_add(out, 4, x->align);
	}
	default:
		if (is_gguf(d) || d == MP_DTYPE_MXFP4 || d == MP_DTYPE_NVFP4) {
			mp_dtype_layout l = mp_dtype_layout_of(d);

			/* blocks run along each row (the input dimension); NVFP4 adds its fp32 per-tensor scale */
			return mp_mul_u64(ceil_div(c, l.block_values), l.block_bytes, &t) && mp_mul_u64(t, r, &t) &&
			       round_add(out, t, x->align) && (d != MP_DTYPE_NVFP4 || round_add(out, 4, x->align));
		}
		return mp_dtype_bytes(d, n, &t) && round_add(out, t, x->align);
	}
}

/* Rows and columns of tensor t on one of tp ranks. */
static void per_rank(const mp_model *m, const mp_tensor *t, uint64_t tp, uint64_t *r, uint64_t *c)
{
	*r = t->rows;
	*c = t->cols;
	if (tp <= 1)
		return;
	switch (t->split) {
	case MP_SPLIT_NONE:
		return;
	case MP_SPLIT_ROWS:
		if (t->vector)
			*c = ceil_div(t->cols, tp);
		else
			*r = ceil_div(t->rows, tp);
		return;
	case MP_SPLIT_COLS:
		*c = ceil_div(t->cols, tp);
		return;
	case MP_SPLIT_KV_ROWS: {
		/* vLLM QKVParallelLinear: max(1, kv_heads / tp) heads per rank (a global layer's own heads and width) */
		bool global = m->attn_per_layer && strncmp(t->name, "global.", 7) == 0;
		uint64_t kv = global ? m->global_kv_heads : m->num_kv_heads, d = global ? m->global_head_dim : m->head_dim;
		uint64_t heads = kv >= tp ? kv / tp : 1;

		if (t->vector)
			*c = heads * d;
		else
			*r = heads * d;
		return;
	}
	}
}

static mp_status class_format(const mp_model *m, const mp_weight_formats *f, mp_tensor_class cls, mp_dtype weight_dtype,
                              mp_dtype compute, mp_dtype *out, mp_error *err)
{
	static const char *const fields[MP_TC_COUNT] = {"/weight_formats/embeddings", "/weight_formats/attention",
	                                                "/weight_formats/mlp",        "/weight_formats/experts",
	                                                "/weight_formats/lm_head",    "/weight_formats/norms",
	                                                "/weight_formats/recurrent",  "/weight_formats/vision"};
	mp_dtype d = f ? f->cls[cls] : MP_DTYPE_INVALID;

	/* a checkpoint that ships a class quantised (gpt-oss's MXFP4 experts) loads it so, whatever the rest is */
	if (d == MP_DTYPE_INVALID && m->checkpoint_format[cls] != MP_DTYPE_INVALID && is_float(weight_dtype))
		d = m->checkpoint_format[cls];
	if (d == MP_DTYPE_INVALID) {
		if (cls == MP_TC_NORMS)
			d = is_gguf(weight_dtype) ? MP_DTYPE_FP32 : (is_float(weight_dtype) ? weight_dtype : compute);
		else if ((cls == MP_TC_EMBEDDINGS || cls == MP_TC_LM_HEAD) && !is_float(weight_dtype) &&
		         !is_gguf(weight_dtype))
			d = compute;
		else if (cls == MP_TC_VISION && !is_float(weight_dtype))
			/* quantizers leave the image tower in 16 bit (llm-compressor and AutoAWQ ignore it, GGUF ships it
			 * as a separate f16 mmproj file) */
			d = compute;
		else
			d = weight_dtype;
	}
	if (d == MP_DTYPE_TF32 || d == MP_DTYPE_FP64 || mp_dtype_layout_of(d).block_values == 0)
		return mp_fail_at(err, MP_EINVAL, f ? f->json_pointer : NULL, fields[cls],
		               "%s format must be one of fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8, int4, nf4, q8_0, "
		               "q4_0, q4_K, q5_K, q6_K, mxfp4, nvfp4",
		               mp_tensor_class_name(cls));
	if (cls == MP_TC_NORMS && !is_float(d))
		return mp_fail_at(err, MP_EINVAL, f ? f->json_pointer : NULL, fields[cls],
		               "norms (and every 1-D tensor) stay in a float format: fp32, bf16 or fp16");
	*out = d;
	return MP_OK;
}

mp_status mp_weight_bytes(const mp_model *m, mp_dtype weight_dtype, mp_dtype compute_dtype, const mp_weight_formats *f,
                          uint64_t tp, mp_weights *out, mp_error *err)
{
	mp_tensor_list tl;
	mp_weight_layout layout = f ? f->layout : MP_LAYOUT_AUTO;
	fmt_ctx x = {MP_DEFAULT_INT4_GROUP_SIZE, MP_INT4_GPTQ, true, 1};
	bool f_ckpt[MP_TC_COUNT]; /* the class's format comes from the checkpoint's quantization_config */
	mp_status st;

	memset(out, 0, sizeof(*out));
	if (compute_dtype == MP_DTYPE_INVALID)
		compute_dtype = MP_DTYPE_BF16;
	if (!is_float(compute_dtype))
		return mp_fail_at(err, MP_EINVAL, f ? f->json_pointer : NULL, "/compute_dtype", "compute_dtype must be one of: fp32, bf16, fp16");
	if (tp == 0)
		tp = 1;
	for (int c = 0; c < MP_TC_COUNT; c++) {
		f_ckpt[c] = (!f || f->cls[c] == MP_DTYPE_INVALID) && m->checkpoint_format[c] != MP_DTYPE_INVALID &&
		            is_float(weight_dtype);
		st = class_format(m, f, (mp_tensor_class)c, weight_dtype, compute_dtype, &out->cls[c].format, err);
		if (st != MP_OK)
			return st;
		if (layout == MP_LAYOUT_AUTO && is_gguf(out->cls[c].format))
			layout = MP_LAYOUT_GGUF;
	}
	if (layout == MP_LAYOUT_AUTO)
		layout = MP_LAYOUT_PACKED;
	out->layout = layout;
	if (f) {
		if (f->int4_group_size)
			x.group = f->int4_group_size;
		x.scheme = f->int4_scheme;
		x.nf4_dq = !f->nf4_no_double_quant;
	}
	if (layout == MP_LAYOUT_PYTORCH)
		x.align = MP_PYTORCH_ALLOCATION_BYTES;
	st = mp_model_tensors(m, layout, &tl, err);
	if (st != MP_OK)
		return st;
	for (size_t i = 0; i < tl.n; i++) {
		const mp_tensor *t = &tl.t[i];
		uint64_t r, c, one, all, n;
		mp_dtype d =
		    t->buffer ? MP_DTYPE_FP32 : (t->vector ? out->cls[MP_TC_NORMS].format : out->cls[t->cls].format);

		/* a checkpoint that quantises its experts itself leaves the router unquantised (gpt-oss
		 * modules_to_not_convert: mlp.router) */
		if (t->router && f_ckpt[t->cls])
			d = compute_dtype;

		per_rank(m, t, tp, &r, &c);
		if (!matrix_bytes(d, r, c, &x, &one) || !mp_mul_u64(one, t->count, &all))
			goto overflow;
		if (t->buffer) {
			if (!mp_add_u64(out->buffers_bytes, all, &out->buffers_bytes))
				goto overflow;
			continue;
		}
		if (!mul3(t->rows, t->cols, t->count, &n) ||
		    !mp_add_u64(out->cls[t->cls].parameters, n, &out->cls[t->cls].parameters) ||
		    !mp_add_u64(out->cls[t->cls].bytes, all, &out->cls[t->cls].bytes))
			goto overflow;
	}
	out->total_bytes = out->buffers_bytes;
	for (int c = 0; c < MP_TC_COUNT; c++)
		if (!mp_add_u64(out->total_bytes, out->cls[c].bytes, &out->total_bytes))
			goto overflow;
	return MP_OK;
overflow:
	return mp_model_overflow(m, "the weight bytes", err);
}
