/*
 * hf_first.c: the decoders of the first model types memplan read whose shape is not a dense row's: GPT-2 (Conv1D
 * projections, learned positions), GPT-NeoX (parallel residual, fused query_key_value), Falcon (multi-query or
 * grouped KV, one or two layer norms) and the Qwen2 / Qwen3 mixtures of experts. Each follows its transformers 5.24
 * configuration_<type>.py defaults and modeling_<type>.py modules; each is a row of model/mpm_types.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"

/*
 * Qwen2MoeConfig: vocab 151936, hidden 2048, FFN 5632 (dense layers), 24 layers, 16 heads, kv 16, 32768
 * positions, untied, q/k/v biases, 60 experts of 1408, top-4, a shared expert of 5632 behind a hidden x 1
 * sigmoid gate, decoder_sparse_step 1, mlp_only_layers []. Qwen3MoeConfig: hidden 2048, FFN 6144, 24 layers,
 * 32 heads, kv 4, 128 experts of 768, top-8, no shared expert, q/k norms, attention_bias False.
 */
static void decode_qwen_moe(hf_ctx *c, mp_model *m, bool qwen3)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 151936);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 2048);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), qwen3 ? 6144 : 5632);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 24);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), qwen3 ? 32 : 16);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), qwen3 ? 4 : 16);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 32768);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	hf_derive_head_dim(c, m, "num_attention_heads");
	if (qwen3) {
		m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
		m->qk_norm = true;
	} else {
		m->qkv_bias = hf_get_bool(c, KEYS("qkv_bias"), true);
	}
	/* Qwen3MoeConfig's attribute_map spells num_experts num_local_experts, and save_pretrained (transformers 5.24)
	 * writes that spelling */
	m->num_experts = qwen3 ? hf_get_u64(c, KEYS("num_experts", "num_local_experts"), 128)
			       : hf_get_u64(c, KEYS("num_experts"), 60);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), qwen3 ? 8 : 4);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), qwen3 ? 768 : 1408);
	m->moe_layer_step = hf_get_u64(c, KEYS("decoder_sparse_step"), 1);
	if (!qwen3) {
		m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_expert_intermediate_size"), 5632);
		m->num_shared_experts = m->shared_expert_intermediate_size > 0;
		/* Qwen2MoeSparseMoeBlock builds shared_expert_gate (hidden -> 1) whatever the shared width, 0 included */
		m->shared_expert_gate = true;
	}
	hf_decode_mlp_only_layers(c, m);
	/* the window only with use_sliding_window (both configuration classes). Qwen2MoeConfig derives layer_types: layer
	 * i slides when i is even and i < max_window_layers (28); Qwen3MoeConfig has no layer_types, so every layer's
	 * cache slides (cache_utils.get_layer_types_and_kwargs) */
	m->sliding_window = hf_window(c, "sliding_window", 4096);
	if (!hf_get_bool(c, KEYS("use_sliding_window"), false))
		m->sliding_window = 0;
	if (!qwen3 && !hf_has(c, "layer_types")) {
		uint64_t below = hf_get_u64(c, KEYS("max_window_layers"), 28);

		below = below < m->num_layers ? below : m->num_layers;
		m->sliding_window_layers = m->sliding_window ? (below + 1) / 2 : 0;
		if (m->sliding_window_layers == 0)
			m->sliding_window = 0;
	}
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
}

/* GPT2Config: vocab 50257, n_positions 1024, n_embd 768, n_layer 12, n_head 12, n_inner None (= 4 x n_embd),
 * tied. Conv1D projections all carry biases; LayerNorm has weight and bias; learned position table. */
static void decode_gpt2(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50257);
	m->hidden_size = hf_get_u64(c, KEYS("n_embd", "hidden_size"), 768);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 12);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 12);
	m->num_kv_heads = m->num_heads;
	m->max_position_embeddings = hf_get_u64(c, KEYS("n_positions", "max_position_embeddings"), 1024);
	m->learned_position_embeddings = m->max_position_embeddings;
	m->intermediate_size = hf_get_u64(c, KEYS("n_inner"), 4 * m->hidden_size);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	if (m->num_heads && m->hidden_size % m->num_heads != 0)
		hf_fail_key(c, hf_key_of(c, KEYS("n_head", "num_attention_heads")), "n_embd must be divisible by n_head");
	else if (m->num_heads)
		m->head_dim = m->hidden_size / m->num_heads;
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * GPTNeoXConfig: vocab 50432, hidden 6144, 44 layers, 64 heads, FFN 24576, rotary_pct 0.25, 2048 positions,
 * untied (embed_in, embed_out), attention_bias True on the fused query_key_value and on dense, MLP biases,
 * LayerNorms (input, post_attention, final), parallel residual (modeling_gpt_neox.py).
 */
static void decode_gpt_neox(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50432);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 6144);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 44);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 64);
	m->num_kv_heads = m->num_heads;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 24576);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), true);
	m->mlp_bias = true;
	hf_heads_divide_hidden(c, m, "num_attention_heads");
	hf_derive_head_dim(c, m, "num_attention_heads");
	m->parallel_block = hf_get_bool(c, KEYS("use_parallel_residual"), true);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = true;
	hf_decode_rope(c, m, 0.25);
}

/* FalconConfig: vocab 65024, hidden 4544, 32 layers, 71 heads, multi_query True, parallel_attn True,
 * bias False, new_decoder_architecture False, ffn_hidden_size None (= 4 x hidden), tied. The fused
 * query_key_value projection is hidden -> (heads + 2 x kv_heads) x head_dim, where kv_heads is 1 for
 * multi-query, num_kv_heads for the new decoder architecture, else heads (modeling_falcon.py). */
static void decode_falcon(hf_ctx *c, mp_model *m)
{
	bool new_arch, multi_query, parallel;
	uint64_t ln_parallel;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 65024);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size", "n_embed"), 4544);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers", "n_layer"), 32);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads", "n_head"), 71);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	new_arch = hf_get_bool(c, KEYS("new_decoder_architecture"), false);
	multi_query = hf_get_bool(c, KEYS("multi_query"), true);
	parallel = hf_get_bool(c, KEYS("parallel_attn"), true);
	m->qkv_bias = m->o_bias = m->mlp_bias = hf_get_bool(c, KEYS("bias"), false);
	hf_derive_head_dim(c, m, hf_key_of(c, KEYS("num_attention_heads", "n_head")));
	if (new_arch) {
		m->num_kv_heads = hf_get_u64(c, KEYS("num_kv_heads"), m->num_heads);
		m->transformers_kv_heads = m->num_heads; /* FalconAttention caches the heads expanded */
		if (c->st == MP_OK && m->num_kv_heads && m->num_heads % m->num_kv_heads)
			hf_fail_key(c, "num_kv_heads",
			            "num_attention_heads must be a multiple of num_kv_heads (the query heads of each KV group)");
	} else
		m->num_kv_heads = multi_query ? 1 : m->num_heads;
	m->intermediate_size = hf_get_u64(c, KEYS("ffn_hidden_size"), 4 * m->hidden_size);
	ln_parallel = hf_get_u64(c, KEYS("num_ln_in_parallel_attn"), 2);
	m->norms_per_layer = new_arch ? ln_parallel : (parallel ? 1 : 2);
	/* ln_attn and ln_mlp in the new decoder architecture with two norms, else input_layernorm (and
	 * post_attention_layernorm without parallel attention) */
	c->names = new_arch && ln_parallel == 2 ? &mpm_names_falcon_two_ln : &mpm_names_falcon;
	m->parallel_block = new_arch || parallel;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->final_norm = true;
	if (hf_get_bool(c, KEYS("alibi"), false))
		snprintf(m->rope_type, sizeof(m->rope_type), "none");
	else
		hf_decode_rope(c, m, 1.0);
}

void mpm_read_gpt2(hf_ctx *c, mp_model *m)
{
	decode_gpt2(c, m);
}
void mpm_read_falcon(hf_ctx *c, mp_model *m)
{
	decode_falcon(c, m);
}
void mpm_read_gpt_neox(hf_ctx *c, mp_model *m)
{
	decode_gpt_neox(c, m);
}
void mpm_read_qwen2_moe(hf_ctx *c, mp_model *m)
{
	decode_qwen_moe(c, m, false);
}
void mpm_read_qwen3_moe(hf_ctx *c, mp_model *m)
{
	decode_qwen_moe(c, m, true);
}
