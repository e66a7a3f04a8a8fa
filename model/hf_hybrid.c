/*
 * hf_hybrid.c: decoders whose layers mix softmax attention with a linear-attention or convolution mixer, per layer
 * (layer_types, or the pattern keys each configuration class derives it from): Qwen3-Next and Qwen3.5 (gated delta
 * net + gated attention), Kimi-Linear (KDA + MLA), MiniMax-01 (lightning attention), LFM2 (short convolutions), and
 * the Mamba hybrids Jamba (Mamba), Bamba, Granite-4.0, Nemotron-H and Falcon-H1 (Mamba-2; Falcon-H1 runs attention
 * and Mamba-2 side by side in every layer).
 * The mixer's state is constant per sequence (planner/recurrent.c); the attention layers keep the KV cache.
 * Defaults are the transformers 5.24 configuration classes'; module shapes their modeling files'.
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"

/* Marks layer i as keeping a dense MLP. */
static void dense_layer(mp_model *m, uint64_t i)
{
	if (i < MP_MAX_LAYERS)
		m->dense_layer_mask[i / 8] |= (uint8_t)(1u << (i % 8));
}

/*
 * layer_types of a hybrid: `attn` names the softmax-attention layers, `mixer` the recurrent ones; every layer has a
 * feed-forward block. Absent, full_attention(i) says which layers attend (the class's own derivation). Sets the
 * layer pattern; errors name layer_types with the kinds it may hold.
 */
static void hybrid_layers(hf_ctx *c, mp_model *m, const char *attn, const char *mixer,
                          bool (*full_attention)(uint64_t i))
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	char msg[200];
	uint64_t i = 0;

	snprintf(msg, sizeof(msg), "layer_types must list \"%s\" or \"%s\" for each of the num_hidden_layers layers",
	         attn, mixer);
	if (c->st != MP_OK)
		return;
	if (m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "at most 1024 layers are supported");
		return;
	}
	m->layer_pattern = true;
	if (lt == NULL || cJSON_IsNull(lt)) {
		for (i = 0; i < m->num_layers; i++)
			m->layer_flags[i] = MP_LAYER_FFN | (full_attention(i) ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		return;
	}
	if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
		hf_fail_key(c, "layer_types", msg);
		return;
	}
	cJSON_ArrayForEach(v, lt)
	{
		if (!cJSON_IsString(v) || (strcmp(v->valuestring, attn) != 0 && strcmp(v->valuestring, mixer) != 0)) {
			hf_fail_key(c, "layer_types", msg);
			return;
		}
		m->layer_flags[i++] =
		    MP_LAYER_FFN | (strcmp(v->valuestring, attn) == 0 ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
	}
}

/* The GQA trunk of these decoders. */
static void trunk(hf_ctx *c, mp_model *m, uint64_t vocab, uint64_t hidden, uint64_t layers, uint64_t heads, uint64_t kv,
                  uint64_t head_dim, uint64_t max_pos, bool tie)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), vocab);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), hidden);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), layers);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), heads);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), kv ? kv : m->num_heads);
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), head_dim);
	if (m->head_dim == 0 && m->num_heads) /* derived: hidden_size / heads, which must divide */
		hf_derive_head_dim(c, m, "num_attention_heads");
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), max_pos);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), tie);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
}

/* ----- gated delta net: Qwen3-Next, Qwen3.5 ------------------------------------------------------------------ */

static bool every_fourth(uint64_t i)
{
	return (i + 1) % 4 == 0;
}

/* The gated delta net and the gated attention of Qwen3-Next and Qwen3.5 (modeling_qwen3_next.py,
 * modeling_qwen3_5.py): linear_num_key_heads key heads of linear_key_head_dim, linear_num_value_heads value heads
 * of linear_value_head_dim, a conv of linear_conv_kernel_dim; attention layers gate their output (q_proj twice as
 * wide) and norm q and k per head. layer_types absent: every full_attention_interval-th (4) layer attends. */
static void gdn_mixer(hf_ctx *c, mp_model *m)
{
	m->ssm.kind = MP_SSM_GATED_DELTANET;
	m->ssm.n_groups = hf_get_u64(c, KEYS("linear_num_key_heads"), 16);
	m->ssm.d_state = hf_get_u64(c, KEYS("linear_key_head_dim"), 128);
	m->ssm.n_heads = hf_get_u64(c, KEYS("linear_num_value_heads"), 32);
	m->ssm.head_dim = hf_get_u64(c, KEYS("linear_value_head_dim"), 128);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("linear_conv_kernel_dim"), 4);
	m->ssm.d_inner = hf_mul(c, m->ssm.n_heads, m->ssm.head_dim, "linear_num_value_heads");
	m->attn_output_gate = true;
	m->qk_norm = true;
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
}

static void gated_deltanet(hf_ctx *c, mp_model *m)
{
	uint64_t interval = hf_get_u64(c, KEYS("full_attention_interval"), 4);

	gdn_mixer(c, m);
	if (interval != 4 && !hf_has(c, "layer_types")) {
		/* an interval other than the default: derive here (the class's own rule) */
		m->layer_pattern = true;
		for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
			m->layer_flags[i] =
			    MP_LAYER_FFN | (interval && (i + 1) % interval == 0 ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		return;
	}
	hybrid_layers(c, m, "full_attention", "linear_attention", every_fourth);
}

/* Qwen's MoE block: num_experts of moe_intermediate_size, a shared expert behind a sigmoid gate, every
 * decoder_sparse_step-th layer, mlp_only_layers dense. */
static void qwen_moe_block(hf_ctx *c, mp_model *m, uint64_t experts, uint64_t topk, uint64_t width, uint64_t shared)
{
	m->num_experts = hf_get_u64(c, KEYS("num_experts"), experts);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), topk);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), width);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_expert_intermediate_size"), shared);
	m->num_shared_experts = m->shared_expert_intermediate_size > 0;
	/* Qwen3NextSparseMoeBlock and Qwen3_5MoeSparseMoeBlock build shared_expert_gate whatever the shared width */
	m->shared_expert_gate = true;
	m->moe_layer_step = hf_get_u64(c, KEYS("decoder_sparse_step"), 1);
	hf_decode_mlp_only_layers(c, m);
}

/*
 * Qwen3NextConfig (Qwen3-Next-80B-A3B): vocab 151936, hidden 2048, FFN 5632 (mlp_only_layers), 48 layers, 16 heads,
 * kv 2, head_dim 256, 32768 positions, untied, a quarter of each head rotates; 512 experts of 512, top-10, a shared
 * expert of 512 behind a gate.
 */
void mpm_read_qwen3_next(hf_ctx *c, mp_model *m)
{
	trunk(c, m, 151936, 2048, 48, 16, 2, 256, 32768, false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 5632);
	qwen_moe_block(c, m, 512, 10, 512, 512);
	gated_deltanet(c, m);
	hf_decode_rope(c, m, 0.25);
}

/* Qwen3_5TextConfig (Qwen3.5's decoder): vocab 248320, hidden 4096, FFN 12288 (a dense MLP in every layer), 32
 * layers, 16 heads, kv 4, head_dim 256, 32768 positions, untied; the gated delta net's projections split (in_proj_qkv,
 * in_proj_z, in_proj_b, in_proj_a: the same parameters as Qwen3-Next's fused pair). */
void mpm_read_qwen3_5_text(hf_ctx *c, mp_model *m)
{
	trunk(c, m, 248320, 4096, 32, 16, 4, 256, 32768, false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 12288);
	gated_deltanet(c, m);
	hf_decode_rope(c, m, 0.25);
}

/* Qwen3_5MoeTextConfig: vocab 248320, hidden 2048, 40 layers, 16 heads, kv 2, head_dim 256; 256 experts of 512, top-8,
 * a shared expert of 512 behind a gate, in every layer. */
void mpm_read_qwen3_5_moe_text(hf_ctx *c, mp_model *m)
{
	trunk(c, m, 248320, 2048, 40, 16, 2, 256, 32768, false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 0);
	qwen_moe_block(c, m, 256, 8, 512, 512);
	gated_deltanet(c, m);
	hf_decode_rope(c, m, 0.25);
}

/* Qwen4-Exp's hyper-connection modules (modeling_qwen4_exp.py Qwen4ExpHyperConnection): hc_norm of hc_count x hidden,
 * the low-rank input mixer input_mix_weight_down (hc_lowrank from hc_count x hidden) and input_mix_weight_up (back),
 * and in a layer's blocks block_inject_weight (hc_count from hc_count x hidden); count of them under path. */
static void qwen4_hyper_connection(hf_ctx *c, mp_model *m, const char *path, bool inject, uint64_t hc, uint64_t rank,
                                   uint64_t count)
{
	uint64_t w = hf_mul(c, hc, m->hidden_size, "hc_count");

	hf_tensor(m, MP_ROOT_DECODER, path, "hc_norm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, w, count);
	hf_tensor(m, MP_ROOT_DECODER, path, "input_mix_weight_down.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA,
	          false, rank, w, count);
	hf_tensor(m, MP_ROOT_DECODER, path, "input_mix_weight_up.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA,
	          false, w, rank, count);
	if (inject)
		hf_tensor(m, MP_ROOT_DECODER, path, "block_inject_weight.weight", MP_TK_ATTENTION, MP_SPLIT_NONE,
		          MP_STEP_EXTRA, false, hc, w, count);
}

/*
 * Qwen4ExpTextConfig (modeling_qwen4_exp.py Qwen4ExpTextModel): vocab 248320, hidden 2048, 40 layers, 16 heads, kv 2,
 * head_dim 256, 32768 positions, untied; Qwen3.5's gated delta net (linear_num_key_heads 16 of 128,
 * linear_num_value_heads 32 of 128, conv 4) on the "linear_attention" layers and its gated attention (q_norm, k_norm)
 * on the "indexed_attention" ones ("full_attention" is read as indexed; absent: every full_attention_interval-th
 * (4)); on each attention layer the QSA indexer (index_qk_proj: hidden -> (indexer_n_heads + indexer_kv_heads) x
 * indexer_head_dim, q_layernorm and k_layernorm of indexer_head_dim), whose fields transformers 5.24 needs whenever a
 * layer attends (their default None fails the build); Qwen's MoE block in every layer (512 experts of 512, top-10, a
 * shared expert of 512 behind its gate). No layer norms and no final norm: per layer two hyper-connections
 * (attn_hyper_connection, mlp_hyper_connection) and the model's hyper_connection_mixer (qwen4_hyper_connection).
 * Per-Layer Embeddings (ple_layer_ids) are refused (a 422): memplan does not plan their n-gram tables yet. Cache
 * (transformers 5.24): the gated delta net's conv and recurrent states, each attention layer's K and V, the
 * indexer's keys (indexer_head_dim) and, once for all layers, the indexers' indexer_position_ids (3 int64 a token).
 */
void mpm_read_qwen4_exp_text(hf_ctx *c, mp_model *m)
{
	static const char msg[] = "layer_types must list \"linear_attention\" or \"indexed_attention\" (\"full_attention\" "
	                          "is read as indexed) for each of the num_hidden_layers layers";
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v, *ple;
	uint64_t i = 0, attn = 0, hc, rank, every;

	trunk(c, m, 248320, 2048, 40, 16, 2, 256, 32768, false);
	m->intermediate_size = 0;
	qwen_moe_block(c, m, 512, 10, 512, 512);
	gdn_mixer(c, m);
	hc = hf_get_u64(c, KEYS("hc_count"), 4);
	rank = hf_get_u64(c, KEYS("hc_lowrank"), 320);
	every = hf_get_u64(c, KEYS("full_attention_interval"), 4);
	ple = cJSON_GetObjectItemCaseSensitive(c->cfg, "ple_layer_ids");
	if (c->st != MP_OK)
		return;
	if (cJSON_IsArray(ple) && cJSON_GetArraySize(ple) > 0) {
		hf_fail_key(c, "ple_layer_ids", "Per-Layer Embeddings (ple_layer_ids) are not planned yet: memplan does not "
		                                "model Qwen4-Exp's n-gram embedding tables and their conv states");
		return;
	}
	if (hc < 2) {
		hf_fail_key(c, "hc_count", "hc_count must be at least 2 (Qwen4ExpTextConfig)");
		return;
	}
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be from 1 to 1024");
		return;
	}
	m->layer_pattern = true;
	if (cJSON_IsArray(lt)) {
		if ((uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layer_types", msg);
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			bool a = cJSON_IsString(v) && (strcmp(v->valuestring, "indexed_attention") == 0 ||
			                                strcmp(v->valuestring, "full_attention") == 0);

			if (!a && !(cJSON_IsString(v) && strcmp(v->valuestring, "linear_attention") == 0)) {
				hf_fail_key(c, "layer_types", msg);
				return;
			}
			m->layer_flags[i++] = MP_LAYER_FFN | (a ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		}
	} else {
		if (every == 0) {
			hf_fail_key(c, "full_attention_interval", "full_attention_interval must be at least 1");
			return;
		}
		for (i = 0; i < m->num_layers; i++)
			m->layer_flags[i] = MP_LAYER_FFN | ((i + 1) % every == 0 ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
	}
	for (i = 0; i < m->num_layers; i++)
		attn += (m->layer_flags[i] & MP_LAYER_ATTENTION) != 0;
	hf_decode_rope(c, m, 1.0);
	if (attn) {
		uint64_t ih = hf_get_u64(c, KEYS("indexer_n_heads"), 0), ikv = hf_get_u64(c, KEYS("indexer_kv_heads"), 0);
		uint64_t id = hf_get_u64(c, KEYS("indexer_head_dim"), 0), budget = hf_get_u64(c, KEYS("indexer_budget"), 0);
		uint64_t ratio = hf_get_u64(c, KEYS("indexer_compress_ratio"), 0);

		if (c->st != MP_OK)
			return;
		if (ih == 0 || ikv == 0 || id == 0 || budget == 0 || ratio == 0) {
			hf_fail_key(c, ih == 0 ? "indexer_n_heads" : ikv == 0 ? "indexer_kv_heads" : id == 0 ? "indexer_head_dim"
			                                          : budget == 0 ? "indexer_budget" : "indexer_compress_ratio",
			            "the QSA indexer's fields (indexer_n_heads, indexer_kv_heads, indexer_head_dim, indexer_budget, "
			            "indexer_compress_ratio) must all be given, positive: transformers 5.24 builds the indexer on "
			            "every indexed_attention layer and fails without them (their default is None)");
			return;
		}
		if (ikv != 1) {
			hf_fail_key(c, "indexer_kv_heads", "Qwen4-Exp QSA requires indexer_kv_heads 1");
			return;
		}
		if (budget % ratio != 0) {
			hf_fail_key(c, "indexer_budget", "indexer_budget must be a multiple of indexer_compress_ratio");
			return;
		}
		if (m->rotary_dim > id) {
			hf_fail_key(c, "indexer_head_dim", "the attention's rotary dimensions (head_dim x partial_rotary_factor) "
			                                   "must fit the QSA index head (indexer_head_dim)");
			return;
		}
		m->indexer_heads = ih;
		m->indexer_head_dim = id;
		m->indexer_topk = budget;
		m->indexer_int64_per_token = 3; /* indexer_position_ids: [3, batch, tokens], on the first indexed layer */
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "indexer.index_qk_proj.weight", MP_TK_ATTENTION,
		          MP_SPLIT_NONE, MP_STEP_INDEXER_Q, false, hf_mul(c, ih + ikv, id, "indexer_head_dim"), m->hidden_size,
		          attn);
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "indexer.q_layernorm.weight", MP_TK_ATTENTION,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, id, attn);
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "indexer.k_layernorm.weight", MP_TK_ATTENTION,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, id, attn);
	}
	m->hc_mult = hc;
	m->final_norm = false;
	m->norms_per_layer = 0; /* the hyper-connections' hc_norm in their place */
	qwen4_hyper_connection(c, m, "layers.{i}.attn_hyper_connection", true, hc, rank, m->num_layers);
	qwen4_hyper_connection(c, m, "layers.{i}.mlp_hyper_connection", true, hc, rank, m->num_layers);
	qwen4_hyper_connection(c, m, "hyper_connection_mixer", false, hc, rank, 1);
}

/*
 * LaraMiniConfig (Lara-Mini, configuration_lara_mini.py: a Qwen3NextConfig): vocab 151936, hidden 1024, 34 layers, 16
 * heads, kv 4, head_dim 128, 131072 positions, tied; Qwen3.5's gated delta net (linear_num_key_heads 8 of 128,
 * linear_num_value_heads 16 of 128, conv 4; in_proj_qkv, in_proj_z, in_proj_b, in_proj_a) in the "linear_attention"
 * layers, Qwen3's attention (q_norm, k_norm per head, no output gate) in the "sliding_attention" (sliding_window 512)
 * and "full_attention" layers (the full ones take no RoPE); the MoE block in every layer (num_experts 128 of
 * moe_intermediate_size 512, top-4, a shared expert of shared_expert_intermediate_size 512 without a gate:
 * FlintSparseMoeBlock); the class has no intermediate_size, decoder_sparse_step or mlp_only_layers. layer_types absent:
 * the period-5 pattern linear, sliding, linear, full, sliding. The value heads must be a multiple of the key heads
 * (validate_architecture). Worked example (the defaults): 7,281,684,672 parameters.
 */
void mpm_read_lara_mini(hf_ctx *c, mp_model *m)
{
	static const uint8_t pattern[5] = {0, 1, 0, 2, 1}; /* 0 linear, 1 sliding, 2 full */
	static const char msg[] = "layer_types must list \"linear_attention\", \"sliding_attention\" or \"full_attention\" "
	                          "for each of the num_hidden_layers layers";
	const cJSON *lt, *v;
	uint64_t i = 0, sliding = 0, attn = 0, window;

	trunk(c, m, 151936, 1024, 34, 16, 4, 128, 131072, true);
	m->intermediate_size = 0;
	m->num_experts = hf_get_u64(c, KEYS("num_experts"), 128);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 4);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 512);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_expert_intermediate_size"), 512);
	m->num_shared_experts = m->shared_expert_intermediate_size > 0;
	m->moe_layer_step = 1;
	m->qk_norm = true;
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->ssm.kind = MP_SSM_GATED_DELTANET;
	m->ssm.n_groups = hf_get_u64(c, KEYS("linear_num_key_heads"), 8);
	m->ssm.d_state = hf_get_u64(c, KEYS("linear_key_head_dim"), 128);
	m->ssm.n_heads = hf_get_u64(c, KEYS("linear_num_value_heads"), 16);
	m->ssm.head_dim = hf_get_u64(c, KEYS("linear_value_head_dim"), 128);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("linear_conv_kernel_dim"), 4);
	m->ssm.d_inner = hf_mul(c, m->ssm.n_heads, m->ssm.head_dim, "linear_num_value_heads");
	window = hf_window(c, "sliding_window", 512);
	if (c->st != MP_OK)
		return;
	if (m->ssm.n_groups == 0 || m->ssm.n_heads % m->ssm.n_groups) {
		hf_fail_key(c, "linear_num_value_heads", "linear_num_value_heads must be a multiple of linear_num_key_heads");
		return;
	}
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	m->layer_pattern = true;
	lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	if (lt == NULL || cJSON_IsNull(lt)) {
		for (i = 0; i < m->num_layers; i++) {
			uint8_t k = pattern[i % 5];

			m->layer_flags[i] = MP_LAYER_FFN | (k ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
			sliding += k == 1;
		}
	} else if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
		hf_fail_key(c, "layer_types", msg);
		return;
	} else {
		cJSON_ArrayForEach(v, lt)
		{
			bool f = cJSON_IsString(v) && strcmp(v->valuestring, "full_attention") == 0;
			bool sl = cJSON_IsString(v) && strcmp(v->valuestring, "sliding_attention") == 0;

			if (!f && !sl && !(cJSON_IsString(v) && strcmp(v->valuestring, "linear_attention") == 0)) {
				hf_fail_key(c, "layer_types", msg);
				return;
			}
			m->layer_flags[i++] = MP_LAYER_FFN | (f || sl ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
			sliding += sl;
		}
	}
	for (i = 0; i < m->num_layers; i++)
		attn += (m->layer_flags[i] & MP_LAYER_ATTENTION) != 0;
	if (sliding && window == 0) {
		hf_fail_key(c, "sliding_window", "sliding_window must be a positive number of tokens when layer_types has "
		                                 "\"sliding_attention\" layers");
		return;
	}
	m->sliding_window = sliding ? window : 0;
	m->sliding_window_layers = sliding;
	(void)attn;
	hf_decode_rope(c, m, 1.0);
}

/* mlp_layer_types ("dense" or "sparse" per layer) into m's dense layers; absent, the first first_k_dense_replace
 * (default dflt) layers are dense (KimiLinearConfig, BailingHybridConfig derive the list so). */
static void mlp_layer_types(hf_ctx *c, mp_model *m, uint64_t dflt)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types"), *v;
	uint64_t i = 0;

	if (cJSON_IsArray(l) && (uint64_t)cJSON_GetArraySize(l) == m->num_layers) {
		cJSON_ArrayForEach(v, l)
		{
			if (!cJSON_IsString(v) || (strcmp(v->valuestring, "dense") && strcmp(v->valuestring, "sparse"))) {
				hf_fail_key(c, "mlp_layer_types", "mlp_layer_types entries must be \"dense\" or \"sparse\"");
				return;
			}
			if (v->valuestring[0] == 'd')
				dense_layer(m, i);
			i++;
		}
	} else if (l && !cJSON_IsNull(l)) {
		hf_fail_key(c, "mlp_layer_types", "mlp_layer_types must list \"dense\" or \"sparse\" per layer");
	} else {
		m->first_dense_layers = hf_get_u64(c, KEYS("first_k_dense_replace"), dflt);
	}
}

/*
 * The MLA attention and the experts of the KDA hybrids (KimiLinearConfig, BailingHybridConfig): q_lora_rank (None: q
 * projected directly), kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128, attention_bias on the MLA's biased
 * projections; intermediate_size (dflt_inter) for the dense layers, experts (their keys and default) of
 * moe_intermediate_size (dflt_moe), top-k and shared experts by their keys (top 8, one shared), the router's
 * e_score_correction_bias a buffer.
 */
static void mla_moe(hf_ctx *c, mp_model *m, uint64_t dflt_inter, uint64_t dflt_experts, uint64_t dflt_moe,
                    const char *const *experts, const char *const *topk, const char *const *shared_keys)
{
	uint64_t shared;

	m->attn_kind = MP_ATTN_MLA;
	m->q_lora_rank = hf_is_null(c, "q_lora_rank") ? 0 : hf_get_u64(c, KEYS("q_lora_rank"), 0);
	m->kv_lora_rank = hf_get_u64(c, KEYS("kv_lora_rank"), 512);
	m->qk_nope_head_dim = hf_get_u64(c, KEYS("qk_nope_head_dim"), 128);
	m->qk_rope_head_dim = hf_get_u64(c, KEYS("qk_rope_head_dim"), 64);
	m->v_head_dim = hf_get_u64(c, KEYS("v_head_dim"), 128);
	m->head_dim = m->qk_nope_head_dim + m->qk_rope_head_dim;
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), dflt_inter);
	m->num_experts = hf_get_u64(c, experts, dflt_experts);
	m->num_experts_per_tok = hf_get_u64(c, topk, 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), dflt_moe);
	shared = hf_get_u64(c, shared_keys, 1);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->router_correction_buffer = true;
}

/* ----- Kimi-Linear: KDA + MLA ---------------------------------------------------------------------------------- */

static bool kimi_full(uint64_t i)
{
	return i && i % 4 == 0;
}

/*
 * KimiLinearConfig (Kimi-Linear-48B-A3B): vocab 163840, hidden 2304, FFN 9216 (dense layers), 27 layers, 32 heads;
 * the full-attention layers are MLA without a q projection rank (q_lora_rank None), kv_lora_rank 512, qk_nope 128,
 * qk_rope 64, v 128; the KDA layers have linear_num_heads (32) heads of linear_head_dim (128), a conv of
 * linear_conv_kernel_dim (4) (a checkpoint's linear_attn_config {num_heads, head_dim, short_conv_kernel_size,
 * full_attn_layers, kda_layers (1-based)} wins); 256 experts (num_experts) of 1024, top-8 (num_experts_per_token),
 * num_shared_experts 1, mlp_layer_types (layer 0 dense), the router's e_score_correction_bias a buffer
 * (modeling_kimi_linear.py). layer_types absent: layer i attends when i > 0 and i % 4 == 0.
 */
void mpm_read_kimi_linear(hf_ctx *c, mp_model *m)
{
	const cJSON *lac = cJSON_GetObjectItemCaseSensitive(c->cfg, "linear_attn_config");
	char sub_pointer[MP_POINTER_MAX];
	hf_ctx lc;

	trunk(c, m, 163840, 2304, 27, 32, 32, 0, 0, false);
	m->tie_word_embeddings = false; /* KimiLinearForCausalLM ties nothing (_tied_weights_keys = {}) */
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings", "model_max_length"), 1048576);
	/* KimiLinearConfig's attribute_map spellings second */
	mla_moe(c, m, 9216, 256, 1024, KEYS("num_experts", "num_local_experts"),
	        KEYS("num_experts_per_token", "num_experts_per_tok"), KEYS("num_shared_experts", "n_shared_experts"));
	m->ssm.kind = MP_SSM_KDA;
	m->ssm.n_heads = hf_get_u64(c, KEYS("linear_num_heads"), 32);
	m->ssm.head_dim = hf_get_u64(c, KEYS("linear_head_dim"), 128);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("linear_conv_kernel_dim"), 4);
	snprintf(sub_pointer, sizeof(sub_pointer), "%s/linear_attn_config", c->pointer);
	lc = (hf_ctx){cJSON_IsObject(lac) ? lac : NULL, sub_pointer, c->err, c->st, NULL, NULL, c->decode_type};
	m->ssm.n_heads = hf_get_u64(&lc, KEYS("num_heads"), m->ssm.n_heads);
	m->ssm.head_dim = hf_get_u64(&lc, KEYS("head_dim"), m->ssm.head_dim);
	m->ssm.conv_kernel = hf_get_u64(&lc, KEYS("short_conv_kernel_size"), m->ssm.conv_kernel);
	c->st = lc.st;
	m->ssm.d_state = m->ssm.head_dim; /* the forget and output gates' rank (f_a_proj: hidden -> head_dim) */
	m->ssm.d_inner = hf_mul(c, m->ssm.n_heads, m->ssm.head_dim, "linear_num_heads");
	if (!hf_has(c, "layer_types") && lc.cfg &&
	    cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(lac, "full_attn_layers"))) {
		const cJSON *v;

		m->layer_pattern = true;
		for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
			m->layer_flags[i] = MP_LAYER_FFN | MP_LAYER_SSM;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(lac, "full_attn_layers"))
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > (double)m->num_layers) {
				hf_fail_key(&lc, "full_attn_layers",
				            "full_attn_layers entries must be layer numbers from 1 to "
				            "num_hidden_layers");
				c->st = lc.st;
				return;
			}
			m->layer_flags[(uint64_t)v->valuedouble - 1] = MP_LAYER_FFN | MP_LAYER_ATTENTION;
		}
	} else {
		hybrid_layers(c, m, "full_attention", "linear_attention", kimi_full);
	}
	mlp_layer_types(c, m, 1);
	{
		uint64_t hd = m->head_dim;

		m->head_dim = m->qk_rope_head_dim;
		hf_decode_rope(c, m, 1.0);
		m->head_dim = hd;
	}
}

/* ----- Bailing hybrid (Ling / Ring linear): KDA + MLA ---------------------------------------------------------- */

/*
 * BailingHybridConfig (modeling_bailing_hybrid.py; the Ring/Ling linear-attention hybrids): vocab 157184, hidden
 * 2560, dense MLP 6144, 42 layers of 32 heads, 262144 positions (model_max_length), untied (the class ties nothing);
 * every layer_group_size-th layer (6) full attention, MLA with a head-wise output gate g_proj [heads, hidden]
 * (q_lora_rank None, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128; attention_bias on q_a, kv_a and o), the others
 * Kimi delta attention of num_attention_heads heads of head_dim 128 (the class copies them into linear_num_heads and
 * linear_head_dim unless the config states those, as a saved one does): q, k, v, one fused depthwise conv1d over them
 * (short_conv_kernel_size 4, no bias, fp32), the forget gate (f_proj full rank, A_log per head, dt_bias per channel,
 * fp32), b_proj per head, the gated o_norm of head_dim, g_proj full rank, o_proj; 512 experts (num_local_experts) of
 * 768, top-8, a shared block of n_shared_experts x 768, the router's e_score_correction_bias a buffer;
 * mlp_layer_types, by default the first first_k_dense_replace (2) layers dense. The MTP layers (num_mtp_layers) are
 * not built. The cache: the MLA latent (kv_lora_rank and the rope key, as transformers keeps it too), the KDA conv
 * and recurrent state.
 */
void mpm_read_bailing_hybrid(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	uint64_t every, L, attn = 0, lin, hd;

	trunk(c, m, 157184, 2560, 42, 32, 32, 0, 0, false);
	m->tie_word_embeddings = false; /* BailingHybridForCausalLM ties nothing (_tied_weights_keys = {}) */
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings", "model_max_length"), 262144);
	mla_moe(c, m, 6144, 512, 768, KEYS("num_local_experts", "num_experts"),
	        KEYS("num_experts_per_tok", "num_experts_per_token"), KEYS("n_shared_experts", "num_shared_experts"));
	/* BailingHybridConfig.__post_init__ derives linear_head_dim, linear_num_heads and linear_conv_kernel_dim from
	 * head_dim, num_attention_heads and short_conv_kernel_size, then sets head_dim to qk_rope_head_dim; a saved config
	 * carries the derived keys (head_dim 64 beside linear_head_dim 128), which win when read back */
	hd = hf_get_u64(c, KEYS("linear_head_dim", "head_dim"), 128);
	m->ssm.kind = MP_SSM_KDA;
	m->ssm.n_heads = hf_get_u64(c, KEYS("linear_num_heads"), m->num_heads);
	m->ssm.head_dim = hd;
	m->ssm.d_state = hd;
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("linear_conv_kernel_dim", "short_conv_kernel_size"), 4);
	m->ssm.d_inner = hf_mul(c, m->ssm.n_heads, hd, "head_dim");
	m->ssm.mixer_listed = true;
	every = hf_get_u64(c, KEYS("layer_group_size"), 6);
	if (c->st != MP_OK)
		return;
	L = m->num_layers;
	if (hd == 0 || hd > (UINT64_C(1) << 16) || m->ssm.conv_kernel == 0 || m->ssm.conv_kernel > 1024) {
		hf_fail_key(c, hd == 0 || hd > (UINT64_C(1) << 16) ? "head_dim" : "short_conv_kernel_size",
		            "head_dim must be from 1 to 65536 and short_conv_kernel_size from 1 to 1024");
		return;
	}
	if (lt == NULL || cJSON_IsNull(lt)) {
		if (every == 0) {
			hf_fail_key(c, "layer_group_size", "layer_group_size must be at least 1 (every layer_group_size-th "
			                                   "layer is full attention)");
			return;
		}
		if (L > MP_MAX_LAYERS) {
			hf_fail_key(c, "num_hidden_layers", "at most 1024 layers are supported");
			return;
		}
		m->layer_pattern = true;
		for (uint64_t i = 0; i < L; i++)
			m->layer_flags[i] = MP_LAYER_FFN | ((i + 1) % every == 0 ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
	} else {
		hybrid_layers(c, m, "full_attention", "linear_attention", NULL); /* the list decides; no rule is read */
	}
	mlp_layer_types(c, m, 2);
	if (c->st != MP_OK)
		return;
	for (uint64_t i = 0; i < L; i++)
		attn += (m->layer_flags[i] & MP_LAYER_ATTENTION) != 0;
	lin = L - attn;
	{
		const char *a = "layers.{i}.self_attn";
		uint64_t qkv = m->ssm.d_inner, h = m->hidden_size, conv[3] = {3 * qkv, 1, m->ssm.conv_kernel};

		hf_tensor(m, MP_ROOT_DECODER, a, "g_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, false,
		          m->num_heads, h, attn);
		hf_tensor(m, MP_ROOT_DECODER, a, "q_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false,
		          qkv, h, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "k_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false,
		          qkv, h, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "v_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false,
		          qkv, h, lin);
		hf_shape(m, MP_ROOT_DECODER, a, "conv1d.weight", MP_TK_RECURRENT, 0, conv, 3, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "forget_gate.f_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS,
		          MP_STEP_MIXER_IN, false, qkv, h, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "forget_gate.A_log", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
		          m->ssm.n_heads, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "forget_gate.dt_bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
		          qkv, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "b_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false,
		          m->ssm.n_heads, h, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "o_norm.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, hd,
		          lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "g_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false,
		          qkv, h, lin);
		hf_tensor(m, MP_ROOT_DECODER, a, "o_proj.weight", MP_TK_RECURRENT, MP_SPLIT_COLS, MP_STEP_MIXER_OUT, false,
		          h, qkv, lin);
	}
	hd = m->head_dim;
	m->head_dim = m->qk_rope_head_dim;
	hf_decode_rope(c, m, 1.0);
	m->head_dim = hd;
}

/* ----- ZAYA: compressed convolutional attention -------------------------------------------------------------- */
/*
 * ZayaConfig (ZAYA1; modeling_zaya.py): vocab 262272, hidden 2048, 40 layers, 8 heads of head_dim 128, 2 KV heads,
 * 131072 positions, tied; attention_bias on every projection of the attention and o_proj, lm_head_bias. Every layer
 * ("hybrid", or "hybrid_sliding" with sliding_window) is Compressed Convolutional Attention (arXiv 2510.04476) and a
 * mixture of experts: qkv_proj's q_proj and k_proj, V in halves (v_proj_current and v_proj_delayed), the causal
 * convolutions over q and k (conv_qk_depthwise of cca_time0, conv_qk_grouped of cca_time1 in heads + KV-heads groups,
 * biased), qk_norm's temp per KV head, o_proj; the router (down_proj to router_hidden_size 256 with its bias, from
 * layer 1 on router_states_scale, router_mlp's norm, fc1 and fc2 biased, out_proj to num_experts + 1 classes: one
 * skips the experts; balancing_biases a buffer), num_experts 16 of moe_intermediate_size 2048, top 1; two RMSNorms and
 * two residual scalings (hidden_states_scale, _bias, residual_scale, _bias); input_hidden_states_scale and _bias
 * before the first layer. Each layer caches its K and V (2 KV heads x 128), the q/k conv window ((heads + KV heads)
 * x head_dim channels x (cca_time0 - 1) + (cca_time1 - 1) columns) and the delayed V (KV heads x head_dim / 2), both
 * in the model's dtype and in both layouts (no engine memplan knows runs ZAYA: transformers' own).
 */
void mpm_read_zaya(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	uint64_t nl, h, q, kv, hd, t0, t1, rh, E, ch, cols, sliding = 0;

	trunk(c, m, 262272, 2048, 40, 8, 2, 128, 131072, true);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->sliding_window = hf_window(c, "sliding_window", 0);
	E = m->num_experts = hf_get_u64(c, KEYS("num_experts"), 16);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 2048);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 1);
	m->lm_head_bias = hf_get_bool(c, KEYS("lm_head_bias"), false);
	m->zero_experts = 1; /* the router's skip class: a row of its own, no weights */
	t0 = hf_get_u64(c, KEYS("cca_time0"), 2);
	t1 = hf_get_u64(c, KEYS("cca_time1"), 2);
	rh = hf_get_u64(c, KEYS("router_hidden_size"), 256);
	if (c->st != MP_OK)
		return;
	nl = m->num_layers;
	h = m->hidden_size;
	hd = m->head_dim;
	q = hf_mul(c, m->num_heads, hd, "head_dim");
	kv = hf_mul(c, m->num_kv_heads, hd, "head_dim");
	if (c->st == MP_OK && m->num_experts_per_tok != 1)
		hf_fail_key(c, "num_experts_per_tok", "num_experts_per_tok must be 1 (ZayaConfig.validate_architecture)");
	if (c->st == MP_OK && (m->num_kv_heads == 0 || m->num_heads % m->num_kv_heads))
		hf_fail_key(c, "num_key_value_heads",
		            "num_attention_heads must be a multiple of num_key_value_heads (ZayaConfig.validate_architecture)");
	if (c->st == MP_OK && (t0 == 0 || t0 > 64 || t1 == 0 || t1 > 64 || rh == 0 || rh > (UINT64_C(1) << 20) ||
	                       kv % 2 || nl > MP_MAX_LAYERS))
		hf_fail_key(c, t0 == 0 || t0 > 64 ? "cca_time0" : t1 == 0 || t1 > 64 ? "cca_time1"
		               : rh == 0 || rh > (UINT64_C(1) << 20)                 ? "router_hidden_size"
		               : kv % 2                                                ? "head_dim"
		                                                                       : "num_hidden_layers",
		            "cca_time0 and cca_time1 must be from 1 to 64, router_hidden_size from 1 to 2^20, KV heads x "
		            "head_dim even (V is projected in halves) and at most 1024 layers");
	if (c->st != MP_OK)
		return;
	/* layer_types: "hybrid" (full attention) or "hybrid_sliding" (the window) */
	if (cJSON_IsArray(lt)) {
		if ((uint64_t)cJSON_GetArraySize(lt) != nl) {
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			bool sl = cJSON_IsString(v) && strcmp(v->valuestring, "hybrid_sliding") == 0;

			if (!sl && !(cJSON_IsString(v) && strcmp(v->valuestring, "hybrid") == 0)) {
				hf_fail_key(c, "layer_types", "layer_types entries must be \"hybrid\" or \"hybrid_sliding\"");
				return;
			}
			sliding += sl;
		}
	} else if (lt && !cJSON_IsNull(lt)) {
		hf_fail_key(c, "layer_types", "layer_types must be a list of \"hybrid\" and \"hybrid_sliding\"");
		return;
	}
	if (sliding && m->sliding_window == 0) {
		hf_fail_key(c, "sliding_window",
		            "sliding_window must be set when layer_types has \"hybrid_sliding\" layers (ZayaConfig raises "
		            "ValueError)");
		return;
	}
	m->sliding_window_layers = sliding;
	if (sliding == 0)
		m->sliding_window = 0;
	/* every layer: attention, the CCA state and the experts */
	m->layer_pattern = true;
	for (uint64_t i = 0; i < nl; i++)
		m->layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_SSM | MP_LAYER_FFN;
	ch = q + kv;
	cols = (t0 - 1) + (t1 - 1);
	m->ssm.kind = MP_SSM_LISTED;
	m->ssm.mixer_listed = true;
	m->ssm.d_inner = ch;
	m->ssm.listed_model_values = ch * cols + kv / 2;
	m->rotary_dim = hd / 2; /* partial_rotary_factor 0.5 of both layer kinds' RoPE (rope_parameters per kind) */
	snprintf(m->rope_type, sizeof(m->rope_type), "default");
	{
		static const char *const scales[4] = {"hidden_states_scale", "hidden_states_bias", "residual_scale",
		                                      "residual_bias"};
		const char *a = "layers.{i}.self_attn.qkv_proj", *g = "layers.{i}.mlp.gate",
		           *r = "layers.{i}.mlp.gate.router_mlp";
		uint64_t dw[3] = {ch, 1, t0}, gw[3] = {ch, hd, t1}, nb[1] = {E + 1};
		bool b = m->qkv_bias;

		hf_tensor(m, MP_ROOT_DECODER, a, "v_proj_current.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV,
		          false, kv / 2, h, nl);
		hf_tensor(m, MP_ROOT_DECODER, a, "v_proj_delayed.weight", MP_TK_ATTENTION, MP_SPLIT_KV_ROWS, MP_STEP_QKV,
		          false, kv / 2, h, nl);
		if (b) {
			hf_tensor(m, MP_ROOT_DECODER, a, "v_proj_current.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
			          true, 1, kv / 2, nl);
			hf_tensor(m, MP_ROOT_DECODER, a, "v_proj_delayed.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE,
			          true, 1, kv / 2, nl);
		}
		hf_shape(m, MP_ROOT_DECODER, a, "conv_qk_depthwise.weight", MP_TK_ATTENTION, 0, dw, 3, nl);
		hf_shape(m, MP_ROOT_DECODER, a, "conv_qk_grouped.weight", MP_TK_ATTENTION, 0, gw, 3, nl);
		hf_tensor(m, MP_ROOT_DECODER, a, "conv_qk_depthwise.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true,
		          1, ch, nl);
		hf_tensor(m, MP_ROOT_DECODER, a, "conv_qk_grouped.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true,
		          1, ch, nl);
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn.qk_norm", "temp", MP_TK_ATTENTION, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, m->num_kv_heads, nl);
		hf_tensor(m, MP_ROOT_DECODER, g, "down_proj.weight", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_ROUTER, false, rh, h,
		          nl);
		hf_tensor(m, MP_ROOT_DECODER, g, "down_proj.bias", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, rh, nl);
		hf_tensor(m, MP_ROOT_DECODER, g, "router_states_scale", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, rh,
		          nl - 1);
		hf_tensor(m, MP_ROOT_DECODER, r, "norm.weight", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, rh, nl);
		hf_tensor(m, MP_ROOT_DECODER, r, "fc1.weight", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_ROUTER, false, rh, rh, nl);
		hf_tensor(m, MP_ROOT_DECODER, r, "fc1.bias", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, rh, nl);
		hf_tensor(m, MP_ROOT_DECODER, r, "fc2.weight", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_ROUTER, false, rh, rh, nl);
		hf_tensor(m, MP_ROOT_DECODER, r, "fc2.bias", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, rh, nl);
		hf_tensor(m, MP_ROOT_DECODER, r, "out_proj.weight", MP_TK_EXPERT, MP_SPLIT_NONE, MP_STEP_ROUTER, false, E + 1,
		          rh, nl);
		hf_shape(m, MP_ROOT_DECODER, g, "balancing_biases", MP_TK_EXPERT, MP_TF_BUFFER, nb, 1, nl);
		for (int k = 0; k < 4; k++) {
			hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.post_attention_residual_scale", scales[k], MP_TK_NORM,
			          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, nl);
			hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.post_mlp_residual_scale", scales[k], MP_TK_NORM,
			          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, nl);
		}
		hf_tensor(m, MP_ROOT_DECODER, NULL, "input_hidden_states_scale", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, h, 1);
		hf_tensor(m, MP_ROOT_DECODER, NULL, "input_hidden_states_bias", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE,
		          true, 1, h, 1);
	}
}

/* ----- MiniMax-01: lightning attention ------------------------------------------------------------------------- */

static bool odd_layers_attend(uint64_t i)
{
	return (i + 1) % 2 != 0;
}

/*
 * MiniMaxConfig (MiniMax-Text-01): vocab 32000, hidden 4096, 32 layers, 32 heads, kv 8, head_dim hidden / heads,
 * 131072 positions, untied; softmax-attention layers (q, k, v, o) and lightning-attention layers (qkv_proj,
 * output_gate, norm, out_proj) of the same heads; 8 experts (num_local_experts) of intermediate_size 14336, top-2, in
 * every layer. The lightning state (heads x head_dim x head_dim) is kept in the model's dtype (MiniMaxCache);
 * the decay tables are buffers (modeling_minimax.py). layer_types absent: MiniMax-Text-01's attn_type_list (1 softmax,
 * 0 lightning; vLLM's reading, transformers ignores it), else layers 0, 2, 4, ... attend.
 */
void mpm_read_minimax(hf_ctx *c, mp_model *m)
{
	trunk(c, m, 32000, 4096, 32, 32, 8, 0, 131072, false);
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts", "num_experts"), 8);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 2);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 14336);
	m->ssm.kind = MP_SSM_LIGHTNING;
	m->ssm.n_heads = m->num_heads;
	m->ssm.head_dim = m->head_dim;
	m->ssm.d_inner = hf_mul(c, m->num_heads, m->head_dim, "num_attention_heads");
	m->ssm.state_in_model_dtype = true;
	/* sliding_window only masks the scores (MiniMaxModel's create_sliding_window_causal_mask): the softmax layers are
	 * "full_attention" in layer_types, so the cache keeps every token of them (a DynamicLayer each) */
	(void)hf_window(c, "sliding_window", 0);
	m->sliding_window = 0;
	if (!hf_has(c, "layer_types") && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c->cfg, "attn_type_list"))) {
		/* MiniMax-Text-01's own key (1: softmax attention, 0: lightning), as vLLM reads it; transformers 5.24
		 * ignores it and alternates (layer_types' default) */
		const cJSON *v;
		uint64_t i = 0;

		if ((uint64_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c->cfg, "attn_type_list")) != m->num_layers) {
			hf_fail_key(c, "attn_type_list", "attn_type_list must have one 0 or 1 per layer (num_hidden_layers)");
			return;
		}
		m->layer_pattern = true;
		cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(c->cfg, "attn_type_list"))
		{
			if (!cJSON_IsNumber(v) || (v->valuedouble != 0 && v->valuedouble != 1) || i >= MP_MAX_LAYERS) {
				hf_fail_key(c, "attn_type_list", "attn_type_list entries must be 0 (lightning) or 1 (softmax)");
				return;
			}
			m->layer_flags[i++] = MP_LAYER_FFN | (v->valuedouble == 1 ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		}
	} else {
		hybrid_layers(c, m, "full_attention", "linear_attention", odd_layers_attend);
	}
	hf_decode_rope(c, m, 1.0);
	{
		/* the lightning layers' decay tables over block_size tokens: buffers computed at load (no checkpoint
		 * holds them), listed as the state_dict has them */
		uint64_t H = m->num_heads, B = hf_get_u64(c, KEYS("block_size"), 256), S = mp_model_ssm_layers(m);
		const uint64_t slope[3] = {H, 1, 1}, qk[3] = {H, B, 1}, diag[4] = {1, H, B, B};
		const char *p = "layers.{i}.self_attn";
		unsigned f = MP_TF_BUFFER | MP_TF_UNCOUNTED;

		hf_shape(m, MP_ROOT_DECODER, p, "slope_rate", MP_TK_RECURRENT, f, slope, 3, S);
		hf_shape(m, MP_ROOT_DECODER, p, "query_decay", MP_TK_RECURRENT, f, qk, 3, S);
		hf_shape(m, MP_ROOT_DECODER, p, "key_decay", MP_TK_RECURRENT, f, qk, 3, S);
		hf_shape(m, MP_ROOT_DECODER, p, "diagonal_decay", MP_TK_RECURRENT, f, diag, 4, S);
	}
}

/* ----- LFM2: short convolutions -------------------------------------------------------------------------------- */

static bool always_attend(uint64_t i)
{
	(void)i;
	return true;
}

/*
 * Lfm2Config (LFM2): vocab 65536, hidden 2560, 32 layers, 32 heads, kv 8, 128000 positions, tied (tie_embedding);
 * attention layers with per-head q/k norms and out_proj; conv layers (a gated short convolution of conv_L_cache 3,
 * conv_bias False); operator_norm and ffn_norm per layer, the final embedding_norm; the MLP (w1, w3, w2) of
 * intermediate_size, adjusted when block_auto_adjust_ff_dim: 2/3 of it, times block_ffn_dim_multiplier, rounded up
 * to block_multiple_of (modeling_lfm2.py). layer_types absent: the layers of full_attn_idxs attend (all by default).
 */
static void lfm2_layers(hf_ctx *c, mp_model *m);

void mpm_read_lfm2(hf_ctx *c, mp_model *m)
{
	uint64_t ff;

	trunk(c, m, 65536, 2560, 32, 32, 8, 0, 128000, true);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_embedding", "tie_word_embeddings"), true);
	m->qk_norm = true;
	ff = hf_get_u64(c, KEYS("block_ff_dim", "intermediate_size"), 12288);
	if (hf_get_bool(c, KEYS("block_auto_adjust_ff_dim"), true)) {
		double mult = hf_get_double(c, c->cfg, "block_ffn_dim_multiplier", 1.0);
		uint64_t of = hf_get_u64(c, KEYS("block_multiple_of"), 256);

		ff = 2 * ff / 3;
		if (!hf_is_null(c, "block_ffn_dim_multiplier")) {
			ff = (uint64_t)(mult * (double)ff);
			if (of)
				ff = of * ((ff + of - 1) / of);
		}
	}
	m->intermediate_size = ff;
	lfm2_layers(c, m);
}

/* LFM2's conv layers and layer pattern (shared by lfm2 and lfm2_moe). */
static void lfm2_layers(hf_ctx *c, mp_model *m)
{
	const cJSON *idx = cJSON_GetObjectItemCaseSensitive(c->cfg, "full_attn_idxs");

	m->ssm.kind = MP_SSM_SHORT_CONV;
	m->ssm.n_heads = 1;
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("conv_L_cache"), 3);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("conv_bias"), false);
	m->ssm.d_inner = m->hidden_size;
	if (!hf_has(c, "layer_types") && cJSON_IsArray(idx)) {
		const cJSON *v;

		m->layer_pattern = true;
		for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
			m->layer_flags[i] = MP_LAYER_FFN | MP_LAYER_SSM;
		cJSON_ArrayForEach(v, idx)
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= (double)m->num_layers) {
				hf_fail_key(c, "full_attn_idxs",
				            "full_attn_idxs entries must be layer indices below "
				            "num_hidden_layers");
				return;
			}
			m->layer_flags[(uint64_t)v->valuedouble] = MP_LAYER_FFN | MP_LAYER_ATTENTION;
		}
	} else {
		hybrid_layers(c, m, "full_attention", "conv", always_attend);
	}
	hf_decode_rope(c, m, 1.0);
}

/*
 * Lfm2MoeConfig (LFM2-8B-A1B): LFM2's layers (vocab 65536, hidden 2048, 32 layers, 32 heads, kv 8, conv_L_cache 3,
 * tied) with a dense MLP (w1, w3, w2 of intermediate_size 7168, not adjusted) in the first num_dense_layers (2) and
 * experts elsewhere (num_experts 32 of moe_intermediate_size 1792, top-4, a router without bias; use_expert_bias
 * adds a buffer); layer_types is required (the class derives none: transformers 5.24 fails without it)
 * (modeling_lfm2_moe.py).
 */
void mpm_read_lfm2_moe(hf_ctx *c, mp_model *m)
{
	trunk(c, m, 65536, 2048, 32, 32, 8, 0, 128000, true);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_embedding", "tie_word_embeddings"), true);
	m->qk_norm = true;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 7168);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1792);
	m->num_experts = hf_get_u64(c, KEYS("num_experts"), 32);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 4);
	m->first_dense_layers = hf_get_u64(c, KEYS("num_dense_layers"), 2);
	if (m->first_dense_layers > m->num_layers)
		m->first_dense_layers = m->num_layers;
	m->router_correction_buffer = hf_get_bool(c, KEYS("use_expert_bias"), true);
	if (c->st == MP_OK && !hf_has(c, "layer_types") && !hf_has(c, "full_attn_idxs"))
		hf_fail_key(c, "layer_types", "layer_types is required for lfm2_moe (\"full_attention\" or \"conv\" per "
		                              "layer): Lfm2MoeConfig derives none");
	lfm2_layers(c, m);
}

/*
 * Lfm3Config (LFM3, configuration_lfm3.py): vocab 128000, hidden 2048, FFN 7680 (w1, w3, w2, never adjusted), 24
 * layers, 16 heads, kv 4, head_dim 128, 128000 positions, tied; conv layers as LFM2's (conv_L_cache 7, conv_bias False
 * on the conv, in_proj and out_proj); attention layers "full_attention" or "sliding_attention" (sliding_window 256)
 * with q_proj, k_proj, v_proj, o_proj (attention_bias), per-head q_norm and k_norm, and with use_attention_gate (True)
 * a sigmoid gate per head, g_proj (hidden -> heads, no bias); use_sandwich_norm (True) adds post_operator_norm and
 * post_ffn_norm to operator_norm and ffn_norm (modeling_lfm3.py Lfm3DecoderLayer). layer_types absent: layer i is
 * full when i % 4 == 2, sliding when i % 4 == 0 and i > 0, else conv (Lfm3Config.__post_init__). Its RoPE is per
 * layer type (the full layers' "proportional" rotation of half of each head, the sliding layers' default): one
 * buffer pair per attention kind present. Worked example (the defaults): 1,728,801,536 parameters, tests/ref/hf
 * lfm3-default.
 */
void mpm_read_lfm3(hf_ctx *c, mp_model *m)
{
	const cJSON *lt, *v;
	uint64_t sliding = 0, full = 0, i = 0, window;
	static const char msg[] = "layer_types must list \"full_attention\", \"sliding_attention\" or \"conv\" for each of "
	                          "the num_hidden_layers layers";

	trunk(c, m, 128000, 2048, 24, 16, 4, 128, 128000, true);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 7680);
	m->qk_norm = true;
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->ssm.kind = MP_SSM_SHORT_CONV;
	m->ssm.n_heads = 1;
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("conv_L_cache"), 7);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("conv_bias"), false);
	m->ssm.d_inner = m->hidden_size;
	window = hf_window(c, "sliding_window", 256);
	if (hf_get_bool(c, KEYS("use_sandwich_norm"), true))
		m->norms_per_layer = 4;
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024");
		return;
	}
	m->layer_pattern = true;
	lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	if (lt == NULL || cJSON_IsNull(lt)) {
		for (i = 0; i < m->num_layers; i++)
			m->layer_flags[i] = MP_LAYER_FFN | (i % 4 == 2 || (i % 4 == 0 && i > 0) ? MP_LAYER_ATTENTION
			                                                                       : MP_LAYER_SSM);
		for (i = 0; i < m->num_layers; i++) {
			sliding += i % 4 == 0 && i > 0;
			full += i % 4 == 2;
		}
	} else if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
		hf_fail_key(c, "layer_types", msg);
		return;
	} else {
		cJSON_ArrayForEach(v, lt)
		{
			bool f = cJSON_IsString(v) && strcmp(v->valuestring, "full_attention") == 0;
			bool sl = cJSON_IsString(v) && strcmp(v->valuestring, "sliding_attention") == 0;

			if (!f && !sl && !(cJSON_IsString(v) && strcmp(v->valuestring, "conv") == 0)) {
				hf_fail_key(c, "layer_types", msg);
				return;
			}
			m->layer_flags[i++] = MP_LAYER_FFN | (f || sl ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
			sliding += sl;
			full += f;
		}
	}
	if (sliding && window == 0) {
		/* transformers 5.24 cannot build the cache of a sliding layer without a window
		 * (DynamicSlidingWindowLayer(sliding_window=None)) */
		hf_fail_key(c, "sliding_window", "sliding_window must be a positive number of tokens when layer_types has "
		                                 "\"sliding_attention\" layers");
		return;
	}
	m->sliding_window = sliding ? window : 0;
	m->sliding_window_layers = sliding;
	if ((sliding || full) && hf_get_bool(c, KEYS("use_attention_gate"), true))
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "g_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS,
		          MP_STEP_EXTRA, false, m->num_heads, m->hidden_size, sliding + full);
	hf_decode_rope(c, m, 1.0);
	/* "proportional" RoPE is the full layers' partial rotation, not a context scaling (as Gemma 4's) */
	if (strcmp(m->rope_type, "proportional") == 0) {
		m->rope_scaling = false;
		m->rope_scaled_max_position = 0;
	}
	m->rotary_buffer_sets = (uint32_t)((sliding ? 1 : 0) + (full ? 1 : 0));
	if (m->rotary_buffer_sets == 0)
		m->rotary_buffer_sets = 1;
	c->names = &mpm_names_lfm3;
}

/* ----- Mamba hybrids: Jamba, Bamba, Granite-4.0 (granitemoehybrid), Nemotron-H ---------------------------------- */

/* A layer kind of layer_types (legacy names remapped as transformers' remap_legacy_layer_types: "mamba" is
 * "linear_attention", "attention" "full_attention"). */
static bool is_kind(const char *v, const char *kind)
{
	if (strcmp(v, "mamba") == 0)
		v = "linear_attention";
	else if (strcmp(v, "attention") == 0)
		v = "full_attention";
	return strcmp(v, kind) == 0;
}

/* Mamba-2 from the mamba_* keys (Bamba, Granite-4.0): mamba_n_heads of mamba_d_head ("auto": expand x hidden /
 * heads), mamba_d_state, mamba_n_groups, mamba_d_conv, biases, the gated norm. */
static void mamba2_keys(hf_ctx *c, mp_model *m, uint64_t heads, uint64_t state)
{
	const cJSON *dh = cJSON_GetObjectItemCaseSensitive(c->cfg, "mamba_d_head");
	uint64_t expand = hf_get_u64(c, KEYS("mamba_expand"), 2);

	m->ssm.kind = MP_SSM_MAMBA2;
	m->ssm.n_heads = hf_get_u64(c, KEYS("mamba_n_heads"), heads);
	if (cJSON_IsString(dh) && strcmp(dh->valuestring, "auto") == 0)
		m->ssm.head_dim = m->ssm.n_heads ? hf_mul(c, expand, m->hidden_size, "mamba_expand") / m->ssm.n_heads : 0;
	else
		m->ssm.head_dim = hf_get_u64(c, KEYS("mamba_d_head"), 64);
	m->ssm.d_state = hf_get_u64(c, KEYS("mamba_d_state"), state);
	m->ssm.n_groups = hf_get_u64(c, KEYS("mamba_n_groups"), 1);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("mamba_d_conv"), 4);
	m->ssm.d_inner = hf_mul(c, expand, m->hidden_size, "mamba_expand");
	m->ssm.proj_bias = hf_get_bool(c, KEYS("mamba_proj_bias"), false);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("mamba_conv_bias"), true);
	m->ssm.gated_norm = true;
	if (c->st == MP_OK && hf_mul(c, m->ssm.n_heads, m->ssm.head_dim, "mamba_n_heads") != m->ssm.d_inner)
		hf_fail_key(c, "mamba_n_heads", "mamba_n_heads x mamba_d_head must equal mamba_expand x hidden_size");
}

/* Attention or the mixer per layer from a list of layer indices (Bamba attn_layer_indices): every layer has its
 * feed-forward block. */
static void attention_at(hf_ctx *c, mp_model *m, const char *key)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, key), *v;

	m->layer_pattern = true;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		m->layer_flags[i] = MP_LAYER_FFN | MP_LAYER_SSM;
	if (l == NULL || cJSON_IsNull(l))
		return;
	if (!cJSON_IsArray(l)) {
		hf_fail_key(c, key, "must be a list of layer indices");
		return;
	}
	cJSON_ArrayForEach(v, l)
	{
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= (double)m->num_layers ||
		    v->valuedouble >= MP_MAX_LAYERS) {
			hf_fail_key(c, key, "entries must be layer indices below num_hidden_layers");
			return;
		}
		m->layer_flags[(uint64_t)v->valuedouble] = MP_LAYER_FFN | MP_LAYER_ATTENTION;
	}
}

/*
 * JambaConfig (Jamba-v0.1): vocab 65536, hidden 4096, 32 layers, 32 heads, kv 8, 262144 positions, untied; attention
 * on layer i when i % attn_layer_period (8) == attn_layer_offset (4), else Mamba (mamba_d_state 16, mamba_d_conv 4,
 * mamba_expand 2, mamba_dt_rank "auto" = ceil(hidden / 16), conv bias, no projection bias, RMSNorms on dt, B and C);
 * experts (num_experts 16 of intermediate_size 14336, top-2, a router without bias) on layer i when
 * i % expert_layer_period (2) == expert_layer_offset (1), else a dense MLP of intermediate_size; input_layernorm and
 * pre_ff_layernorm per layer, final_layernorm (modeling_jamba.py). No RoPE.
 */
void mpm_read_jamba(hf_ctx *c, mp_model *m)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(c->cfg, "mamba_dt_rank");
	uint64_t ap, ao, ep, eo;

	trunk(c, m, 65536, 4096, 32, 32, 8, 0, 262144, false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 14336);
	m->num_experts = hf_get_u64(c, KEYS("num_experts", "num_local_experts"), 16);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 2);
	m->moe_intermediate_size = m->intermediate_size;
	m->ssm.kind = MP_SSM_MAMBA1;
	m->ssm.d_state = hf_get_u64(c, KEYS("mamba_d_state"), 16);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("mamba_d_conv"), 4);
	m->ssm.d_inner = hf_mul(c, hf_get_u64(c, KEYS("mamba_expand"), 2), m->hidden_size, "mamba_expand");
	if (cJSON_IsString(r) && strcmp(r->valuestring, "auto") == 0)
		m->ssm.dt_rank = (m->hidden_size + 15) / 16;
	else if (cJSON_IsString(r))
		hf_fail_key(c, "mamba_dt_rank", "mamba_dt_rank must be an integer or \"auto\"");
	else
		m->ssm.dt_rank = hf_get_u64(c, KEYS("mamba_dt_rank"), (m->hidden_size + 15) / 16);
	m->ssm.proj_bias = hf_get_bool(c, KEYS("mamba_proj_bias"), false);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("mamba_conv_bias"), true);
	m->ssm.dt_bc_norms = true;
	ap = hf_get_u64(c, KEYS("attn_layer_period"), 8);
	ao = hf_get_u64(c, KEYS("attn_layer_offset"), 4);
	ep = hf_get_u64(c, KEYS("expert_layer_period"), 2);
	eo = hf_get_u64(c, KEYS("expert_layer_offset"), 1);
	if (c->st == MP_OK && (ap == 0 || ep == 0 || ao >= ap || eo >= ep))
		hf_fail_key(c, ap == 0 || ao >= ap ? "attn_layer_period" : "expert_layer_period",
		            "attn_layer_offset must be below attn_layer_period and expert_layer_offset below "
		            "expert_layer_period (both periods at least 1)");
	if (c->st != MP_OK)
		return;
	m->layer_pattern = true;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
		m->layer_flags[i] = MP_LAYER_FFN | (i % ap == ao ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		if (i % ep != eo)
			dense_layer(m, i);
	}
	if (m->num_experts == 0)
		m->num_experts_per_tok = 0;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * BambaConfig (Bamba-9B): vocab 128000, hidden 4096, FFN 14336 (a dense MLP in every layer, mlp_bias False), 32
 * layers, 32 heads, kv 8, 262144 positions, untied, half of each head rotates; Mamba-2 (mamba_n_heads 128 of
 * mamba_d_head 64, mamba_d_state 256, one group, conv 4 with bias) everywhere but the attn_layer_indices layers;
 * input_layernorm and pre_ff_layernorm, final_layernorm (modeling_bamba.py).
 */
void mpm_read_bamba(hf_ctx *c, mp_model *m)
{
	trunk(c, m, 128000, 4096, 32, 32, 8, 0, 262144, false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 14336);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	mamba2_keys(c, m, 128, 256);
	attention_at(c, m, "attn_layer_indices");
	hf_decode_rope(c, m, 0.5);
}

/*
 * GraniteMoeHybridConfig (Granite-4.0): vocab 32000, hidden 4096, 32 layers, 32 heads, kv = heads, 2048 positions,
 * untied; layer_types "mamba" / "attention" (or their new names), all Mamba-2 by default (mamba_n_heads 128,
 * mamba_d_head 64, mamba_d_state 256); every layer: experts (num_local_experts 8 of intermediate_size 11008, top-2,
 * a router without bias; none with 0 experts) beside a shared MLP (input_linear hidden -> 2 x
 * shared_intermediate_size, output_linear back); position_embedding_type "rope" rotates, else no positions
 * (modeling_granitemoehybrid.py).
 */
void mpm_read_granitemoehybrid(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v, *pe;
	uint64_t i = 0;

	if (lt == NULL || cJSON_IsNull(lt)) /* GraniteMoeHybridConfig's attribute_map spelling */
		lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layers_block_type");

	trunk(c, m, 32000, 4096, 32, 32, 0, 0, 2048, false);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts"), 8);
	m->num_experts_per_tok = m->num_experts ? hf_get_u64(c, KEYS("num_experts_per_tok"), 2) : 0;
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 11008);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_intermediate_size"), 1024);
	if (m->num_experts) {
		m->num_shared_experts = 1;
	} else { /* no experts: the shared MLP is the layer's dense MLP (still named shared_mlp) */
		m->intermediate_size = m->shared_expert_intermediate_size;
		m->shared_expert_intermediate_size = 0;
		c->names = &mpm_names_granitemoehybrid_dense;
	}
	mamba2_keys(c, m, 128, 256);
	if (c->st != MP_OK)
		return;
	m->layer_pattern = true;
	if (cJSON_IsArray(lt)) {
		if ((uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			bool attn = cJSON_IsString(v) && is_kind(v->valuestring, "full_attention");

			if (!attn && !(cJSON_IsString(v) && is_kind(v->valuestring, "linear_attention"))) {
				hf_fail_key(c, "layer_types", "layer_types entries must be \"mamba\" or \"attention\"");
				return;
			}
			if (i < MP_MAX_LAYERS)
				m->layer_flags[i] = MP_LAYER_FFN | (attn ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
			i++;
		}
	} else {
		for (i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
			m->layer_flags[i] = MP_LAYER_FFN | MP_LAYER_SSM;
	}
	if (m->num_experts == 0 && m->intermediate_size == 0) /* no experts and a shared MLP of width 0: no MLP at all */
		for (uint64_t k = 0; k < m->num_layers && k < MP_MAX_LAYERS; k++)
			m->layer_flags[k] &= (uint8_t)~MP_LAYER_FFN;
	pe = cJSON_GetObjectItemCaseSensitive(c->cfg, "position_embedding_type");
	if (cJSON_IsString(pe) && strcmp(pe->valuestring, "rope") == 0)
		hf_decode_rope(c, m, 1.0);
	else
		snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * NemotronHConfig (Nemotron-H, Nemotron-Nano-v2/v3): vocab 131072, hidden 4096, untied, 32 heads, kv 8, head_dim 128,
 * 4096 positions; each layer is one block behind one RMSNorm: "linear_attention" (Mamba-2: mamba_num_heads 128 of
 * mamba_head_dim 64, ssm_state_size 128, n_groups 8, conv_kernel 4 with bias), "full_attention" (q, k, v, o),
 * "mlp" (up and down, ReLU^2, intermediate_size 21504) or "moe" (n_routed_experts 8 of moe_intermediate_size 7688,
 * up and down only, top-2, n_shared_experts of moe_shared_expert_intermediate_size, the router's
 * e_score_correction_bias a buffer); layers_block_type (or hybrid_override_pattern: M, *, -, E); norm_f. No RoPE
 * (modeling_nemotron_h.py). transformers 5.24's classes read some keys their own way: the attention never has biases
 * (attention_bias is not read), the Mamba projections take use_bias (not mamba_proj_bias), the shared expert is one
 * MLP of moe_shared_expert_intermediate_size whatever n_shared_experts says, and lm_head is never tied. A latent MoE
 * (moe_latent_size) runs the routed experts at that width between fc1_latent_proj and fc2_latent_proj.
 */
void mpm_read_nemotron_h(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layers_block_type"), *v;
	const cJSON *pat = cJSON_GetObjectItemCaseSensitive(c->cfg, "hybrid_override_pattern");
	static const char *const kinds[4] = {"linear_attention", "full_attention", "mlp", "moe"};
	static const char codes[] = "M*-E";
	uint8_t flags[4] = {MP_LAYER_SSM, MP_LAYER_ATTENTION, MP_LAYER_FFN, MP_LAYER_FFN};
	uint64_t n = 0;

	if (!cJSON_IsArray(lt))
		lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	trunk(c, m, 131072, 4096, 4, 32, 8, 128, 4096, false);
	m->tie_word_embeddings = false; /* NemotronHForCausalLM ties nothing (_tied_weights_keys = {}) */
	m->norms_per_layer = 1;
	m->ffn_kind = MP_FFN_PLAIN;
	/* NemotronHAttention has no biases whatever attention_bias says; mlp_bias is the MLPs' and the shared expert's
	 * (NemotronHMLP) and the latent projections', never the routed experts' */
	m->qkv_bias = m->o_bias = false;
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->routed_bias = MP_BIAS_OFF;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 21504);
	m->num_experts = hf_get_u64(c, KEYS("n_routed_experts", "num_local_experts"), 8);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 2);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 7688);
	/* NemotronHMoE builds one shared MLP of moe_shared_expert_intermediate_size whatever n_shared_experts says */
	(void)hf_get_u64(c, KEYS("n_shared_experts"), 1);
	m->num_shared_experts = 1;
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("moe_shared_expert_intermediate_size"), 7688);
	m->router_correction_buffer = true;
	m->moe_latent_size = hf_get_u64(c, KEYS("moe_latent_size"), 0);
	m->ssm.kind = MP_SSM_MAMBA2;
	m->ssm.n_heads = hf_get_u64(c, KEYS("mamba_num_heads"), 128);
	m->ssm.head_dim = hf_get_u64(c, KEYS("mamba_head_dim"), 64);
	m->ssm.d_state = hf_get_u64(c, KEYS("ssm_state_size"), 128);
	m->ssm.n_groups = hf_get_u64(c, KEYS("n_groups"), 8);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("conv_kernel"), 4);
	m->ssm.d_inner = hf_mul(c, m->ssm.n_heads, m->ssm.head_dim, "mamba_num_heads");
	/* NemotronHMamba2Mixer: in_proj and out_proj carry use_bias' biases (mamba_proj_bias is not read) */
	m->ssm.proj_bias = hf_get_bool(c, KEYS("use_bias"), false);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("use_conv_bias"), true);
	m->ssm.gated_norm = true;
	if (c->st != MP_OK)
		return;
	m->layer_pattern = true;
	/* the pattern's length is the layer count (num_hidden_layers is ignored beside it, as transformers does) */
	if (cJSON_IsArray(lt)) {
		cJSON_ArrayForEach(v, lt)
		{
			int k = -1;

			for (int j = 0; j < 4 && cJSON_IsString(v); j++)
				if (is_kind(v->valuestring, kinds[j]))
					k = j;
			if (k < 0 || n >= MP_MAX_LAYERS) {
				hf_fail_key(c, "layers_block_type",
				            "layers_block_type entries must be \"linear_attention\", "
				            "\"full_attention\", \"mlp\" or \"moe\" (at most 1024)");
				return;
			}
			m->layer_flags[n] = flags[k];
			if (k == 2)
				dense_layer(m, n);
			n++;
		}
	} else if (cJSON_IsString(pat)) {
		for (const char *p = pat->valuestring; *p; p++, n++) {
			const char *hit = strchr(codes, *p);

			if (hit == NULL || *p == '\0' || n >= MP_MAX_LAYERS) {
				hf_fail_key(c, "hybrid_override_pattern",
				            "hybrid_override_pattern must be a string of M (Mamba), "
				            "* (attention), - (MLP) and E (MoE)");
				return;
			}
			m->layer_flags[n] = flags[hit - codes];
			if (*p == '-')
				dense_layer(m, n);
		}
	} else {
		static const uint8_t dflt[4] = {MP_LAYER_SSM, MP_LAYER_FFN, MP_LAYER_ATTENTION, MP_LAYER_FFN};

		for (n = 0; n < 4; n++)
			m->layer_flags[n] = dflt[n];
		dense_layer(m, 3);
	}
	m->num_layers = n;
	if (n == 0)
		hf_fail_key(c, "layers_block_type", "layers_block_type must list at least one layer");
	if (m->moe_latent_size && c->st == MP_OK) {
		/* NemotronHMoE's latent projections, hidden -> moe_latent_size -> hidden, with mlp_bias, per MoE layer */
		uint64_t moe = 0, lat = m->moe_latent_size, h = m->hidden_size;

		for (uint64_t i = 0; i < n && i < MP_MAX_LAYERS; i++)
			moe += (m->layer_flags[i] & MP_LAYER_FFN) && !(m->dense_layer_mask[i / 8] & (1u << (i % 8)));
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mixer.fc1_latent_proj", "weight", MP_TK_SHARED_EXPERT,
		          MP_SPLIT_NONE, MP_STEP_EXTRA, false, lat, h, moe);
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mixer.fc2_latent_proj", "weight", MP_TK_SHARED_EXPERT,
		          MP_SPLIT_NONE, MP_STEP_EXTRA, false, h, lat, moe);
		if (m->mlp_bias) {
			hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mixer.fc1_latent_proj", "bias", MP_TK_SHARED_EXPERT,
			          MP_SPLIT_NONE, MP_STEP_NONE, true, 0, lat, moe);
			hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mixer.fc2_latent_proj", "bias", MP_TK_SHARED_EXPERT,
			          MP_SPLIT_NONE, MP_STEP_NONE, true, 0, h, moe);
		}
	}
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * FalconH1Config (Falcon-H1): vocab 128000, hidden 4096, FFN 14336, 32 layers, 32 heads, kv 8, 8192 positions,
 * untied; every layer holds attention and Mamba-2 side by side (mamba_n_heads 128, mamba_d_ssm 1024 channels =
 * heads x mamba_d_head ("auto": d_ssm / heads), mamba_d_state 256, one group, conv 4 with bias; the gated norm only
 * with mamba_rms_norm) and a dense MLP; input_layernorm and pre_ff_layernorm, final_layernorm; the muP multipliers
 * hold no parameters (mup_vector is a buffer) (modeling_falcon_h1.py).
 */
void mpm_read_falcon_h1(hf_ctx *c, mp_model *m)
{
	const cJSON *dh = cJSON_GetObjectItemCaseSensitive(c->cfg, "mamba_d_head");
	uint64_t d_ssm;

	trunk(c, m, 128000, 4096, 32, 32, 8, 0, 8192, false);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 14336);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	d_ssm = hf_is_null(c, "mamba_d_ssm") ? hf_mul(c, hf_get_u64(c, KEYS("mamba_expand"), 2), m->hidden_size, "mamba_expand")
	                                     : hf_get_u64(c, KEYS("mamba_d_ssm"), 1024);
	m->ssm.kind = MP_SSM_MAMBA2;
	m->ssm.n_heads = hf_get_u64(c, KEYS("mamba_n_heads"), 128);
	if (dh == NULL || cJSON_IsNull(dh) || (cJSON_IsString(dh) && strcmp(dh->valuestring, "auto") == 0))
		m->ssm.head_dim = m->ssm.n_heads ? d_ssm / m->ssm.n_heads : 0;
	else
		m->ssm.head_dim = hf_get_u64(c, KEYS("mamba_d_head"), 8);
	m->ssm.d_inner = d_ssm;
	m->ssm.d_state = hf_get_u64(c, KEYS("mamba_d_state"), 256);
	m->ssm.n_groups = hf_get_u64(c, KEYS("mamba_n_groups"), 1);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("mamba_d_conv"), 4);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("mamba_conv_bias"), true);
	/* FalconH1Mixer: in_proj's bias is mamba_proj_bias, out_proj's projectors_bias */
	m->ssm.proj_bias = hf_get_bool(c, KEYS("mamba_proj_bias"), false);
	m->ssm.out_bias = hf_get_bool(c, KEYS("projectors_bias"), false) ? MP_BIAS_ON : MP_BIAS_OFF;
	m->ssm.gated_norm = hf_get_bool(c, KEYS("mamba_rms_norm"), false);
	if (c->st == MP_OK && hf_mul(c, m->ssm.n_heads, m->ssm.head_dim, "mamba_n_heads") != d_ssm)
		hf_fail_key(c, "mamba_n_heads", "mamba_n_heads x mamba_d_head must equal mamba_d_ssm");
	m->layer_pattern = true;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		m->layer_flags[i] = MP_LAYER_FFN | MP_LAYER_ATTENTION | MP_LAYER_SSM;
	hf_decode_rope(c, m, 1.0);
}


/*
 * Zamba2's shared transformer blocks (modeling_zamba2.py Zamba2AttentionDecoderLayer): num_mem_blocks blocks, each under
 * the first hybrid layer that runs it (layers.{i}.shared_transformer): attention from 2 x hidden (q, k, v, o), a
 * gate_up_proj / down_proj MLP, input_layernorm (2 x hidden) and pre_ff_layernorm; every hybrid layer runs one and adds
 * its own rank-adapter_rank LoRA pair to the MLP's gate_up (and to q, k and v with use_shared_attention_adapter, listed
 * in its block) and a hidden x hidden linear (layers.{i}.linear). The blocks' weights count once; the step applies
 * them at every hybrid layer.
 *
 * transformers 5.24 builds a block in every hybrid layer and ties the ones after the first num_mem_blocks to them
 * (Zamba2Model.get_layers' _tied_weights_keys), but only when tie_word_embeddings is set: without it
 * (PreTrainedModel.get_expanded_tied_weights_keys returns nothing) every hybrid layer keeps a block of its own, and
 * block b (b = the layer's hybrid index mod num_mem_blocks) holds the adapters of every hybrid layer of its residue.
 * Worked example: 2 hybrid layers, num_mem_blocks 1, untied: 2 blocks, 4 gate_up adapter pairs.
 */
static void zamba2_shared_blocks(hf_ctx *c, mp_model *m, uint64_t blocks, uint64_t hybrid, uint64_t rank)
{
	bool tied = m->tie_word_embeddings;
	uint64_t adapters = 0;

	for (uint64_t j = 0; j < hybrid; j++) {
		uint64_t k = j % blocks, per = hybrid / blocks + (k < hybrid % blocks);

		adapters += tied ? (j < blocks ? per : 0) : per;
	}
	blocks = tied ? (blocks < hybrid ? blocks : hybrid) : hybrid;
	const char *at = "layers.{i}.shared_transformer.self_attn", *ff = "layers.{i}.shared_transformer.feed_forward";
	uint64_t h = m->hidden_size, a = m->attn_input_size, hd = m->head_dim, inter = m->intermediate_size;
	bool bias = hf_get_bool(c, KEYS("add_bias_linear"), false);
	mp_tensor_spec s = {.root = MP_ROOT_DECODER, .path = at, .kind = MP_TK_ATTENTION, .view = MP_VIEW_LINEAR,
	                    .count = blocks, .uses = hybrid};

	s.leaf = "q_proj.weight", s.rows = m->num_heads * hd, s.cols = a, s.split = MP_SPLIT_ROWS, s.step = MP_STEP_QKV;
	mp_inventory_add(&m->inv, &s);
	s.split = MP_SPLIT_KV_ROWS, s.kv_heads = m->num_kv_heads, s.rows = m->num_kv_heads * hd;
	s.leaf = "k_proj.weight";
	mp_inventory_add(&m->inv, &s);
	s.leaf = "v_proj.weight";
	mp_inventory_add(&m->inv, &s);
	s.leaf = "o_proj.weight", s.rows = h, s.cols = m->num_heads * hd, s.split = MP_SPLIT_COLS, s.step = MP_STEP_O;
	s.kv_heads = 0;
	mp_inventory_add(&m->inv, &s);
	s.path = ff, s.kind = MP_TK_MLP, s.leaf = "gate_up_proj.weight", s.rows = 2 * inter, s.cols = h;
	s.split = MP_SPLIT_ROWS, s.step = MP_STEP_MLP_GATE_UP, s.parts = 2;
	mp_inventory_add(&m->inv, &s);
	if (bias)
		hf_tensor(m, MP_ROOT_DECODER, ff, "gate_up_proj.bias", MP_TK_MLP, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
		          2 * inter, blocks);
	s.leaf = "down_proj.weight", s.rows = h, s.cols = inter, s.split = MP_SPLIT_COLS, s.step = MP_STEP_MLP_DOWN;
	s.parts = 1;
	mp_inventory_add(&m->inv, &s);
	if (bias)
		hf_tensor(m, MP_ROOT_DECODER, ff, "down_proj.bias", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, blocks);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.shared_transformer", "input_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, a, blocks);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.shared_transformer", "pre_ff_layernorm.weight", MP_TK_NORM,
	          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, blocks);
	/* per hybrid layer: its linear and its adapters (rank x in, then out x rank) */
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}", "linear.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, h, h,
	          hybrid);
	hf_tensor(m, MP_ROOT_DECODER, ff, "gate_up_proj_adapter_list.{j}.0.weight", MP_TK_MLP, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, rank, h, adapters);
	hf_tensor(m, MP_ROOT_DECODER, ff, "gate_up_proj_adapter_list.{j}.1.weight", MP_TK_MLP, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, 2 * inter, rank, adapters);
	if (hf_get_bool(c, KEYS("use_shared_attention_adapter"), false)) {
		static const char *const leaves[6] = {
		    "linear_q_adapter_list.{j}.0.weight", "linear_q_adapter_list.{j}.1.weight",
		    "linear_k_adapter_list.{j}.0.weight", "linear_k_adapter_list.{j}.1.weight",
		    "linear_v_adapter_list.{j}.0.weight", "linear_v_adapter_list.{j}.1.weight"};

		for (int i = 0; i < 6; i++)
			hf_tensor(m, MP_ROOT_DECODER, at, leaves[i], MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false,
			          i % 2 ? a : rank, i % 2 ? rank : a, adapters);
	}
}

/*
 * Zamba2Config (Zamba2-1.2B/2.7B/7B): vocab 32000, hidden 2560, 54 layers, tied; every layer a Mamba-2 block
 * (input_layernorm + mixer: n_mamba_heads 8 of (mamba_expand x hidden) / heads, mamba_d_state 64, mamba_ngroups 1,
 * mamba_d_conv 4 with bias, the gated norm, add_bias_linear False); the "hybrid" layers of layers_block_type also
 * run one of num_mem_blocks shared transformer blocks (attention from 2 x hidden: 32 heads of 2 x hidden / heads,
 * num_key_value_heads = heads, o_proj back to hidden; input_layernorm of 2 x hidden, pre_ff_layernorm; a GELU-gated
 * MLP of intermediate_size 4 x hidden) and a hidden x hidden linear; each hybrid layer adds a rank-adapter_rank LoRA
 * to the shared MLP's gate_up (and to q, k, v with use_shared_attention_adapter). Each hybrid layer keeps its own
 * KV cache (modeling_zamba2.py). The shared blocks' weights are counted once per block (mp_model.extra).
 */
void mpm_read_zamba2(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layers_block_type"), *v;
	uint64_t h, a, inter, blocks, rank, hybrid = 0, i = 0, expand;

	if (lt == NULL || cJSON_IsNull(lt)) /* Zamba2Config's attribute_map spelling */
		lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 32000);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 2560);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 54);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 4096);
	if (hf_get_bool(c, KEYS("use_long_context"), false))
		m->max_position_embeddings = 16384;
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 32);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), m->num_heads);
	a = 2 * h;
	m->attn_input_size = a;
	m->head_dim = m->num_heads ? a / m->num_heads : 0;
	if (c->st == MP_OK && m->num_heads && a % m->num_heads)
		/* Zamba2Config: attention_head_dim = 2 x hidden_size // heads, and the attention reshapes 2 x hidden_size
		 * into heads of it: a remainder fails the forward */
		hf_fail_key(c, "num_attention_heads", "2 x hidden_size must be a multiple of num_attention_heads (the shared "
		                                      "blocks' attention is 2 x hidden_size wide)");
	inter = hf_get_u64(c, KEYS("intermediate_size"), 4 * h);
	m->intermediate_size = inter;
	blocks = hf_get_u64(c, KEYS("num_mem_blocks"), 1);
	rank = hf_get_u64(c, KEYS("adapter_rank"), 128);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 1;
	m->final_norm = true;
	m->shared_block_params = true;
	expand = hf_get_u64(c, KEYS("mamba_expand"), 2);
	m->ssm.kind = MP_SSM_MAMBA2;
	m->ssm.n_heads = hf_get_u64(c, KEYS("n_mamba_heads"), 8);
	m->ssm.d_inner = hf_mul(c, expand, h, "mamba_expand");
	m->ssm.head_dim = m->ssm.n_heads ? m->ssm.d_inner / m->ssm.n_heads : 0;
	m->ssm.d_state = hf_get_u64(c, KEYS("mamba_d_state"), 64);
	m->ssm.n_groups = hf_get_u64(c, KEYS("mamba_ngroups"), 1);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("mamba_d_conv"), 4);
	m->ssm.conv_bias = true; /* Zamba2MambaMixer's conv1d always has a bias (use_conv_bias is not read) */
	m->ssm.proj_bias = hf_get_bool(c, KEYS("add_bias_linear"), false);
	m->ssm.gated_norm = true;
	if (c->st == MP_OK && (blocks == 0 || m->num_layers > MP_MAX_LAYERS || h >= (UINT64_C(1) << 40) ||
	                       inter >= (UINT64_C(1) << 40) || rank >= (UINT64_C(1) << 40)))
		hf_fail_key(c, blocks == 0 ? "num_mem_blocks" : "hidden_size",
		            "num_mem_blocks must be at least 1, hidden_size, intermediate_size and adapter_rank below 2^40 and "
		            "the layers at most 1024");
	if (c->st != MP_OK)
		return;
	m->layer_pattern = true;
	if (cJSON_IsArray(lt)) {
		if ((uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, "layers_block_type", "layers_block_type must have one entry per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			bool hyb = cJSON_IsString(v) && strcmp(v->valuestring, "hybrid") == 0;

			if (!hyb && !(cJSON_IsString(v) && (strcmp(v->valuestring, "linear_attention") == 0 ||
			                                    strcmp(v->valuestring, "mamba") == 0))) {
				hf_fail_key(c, "layers_block_type", "layers_block_type entries must be \"mamba\" "
				                                    "(\"linear_attention\") or \"hybrid\"");
				return;
			}
			m->layer_flags[i++] = MP_LAYER_SSM | (hyb ? MP_LAYER_ATTENTION | MP_LAYER_FFN : 0);
			hybrid += hyb;
		}
	} else {
		/* Zamba2Config's default: a hybrid layer after every 5 Mamba layers (7 times), then at 47 and 51 */
		for (i = 0; i < m->num_layers; i++) {
			bool hyb = (i >= 1 && i <= 42 && i % 6 == 0) || i == 47 || i == 51;

			m->layer_flags[i] = MP_LAYER_SSM | (hyb ? MP_LAYER_ATTENTION | MP_LAYER_FFN : 0);
			hybrid += hyb;
		}
	}
	if (hybrid)
		zamba2_shared_blocks(c, m, blocks, hybrid, rank);
	if (hf_get_bool(c, KEYS("use_mem_rope"), false))
		hf_decode_rope(c, m, 1.0);
	else
		snprintf(m->rope_type, sizeof(m->rope_type), "none");
}


/*
 * Zamba's Mamba (modeling_zamba.py ZambaMambaMixer), split into n_mamba_heads heads of head_dim = d_inner / heads:
 * in_proj (hidden -> 2 d_inner, mamba_proj_bias), conv1d [d_inner, 1, K] (mamba_conv_bias), x_proj_weight
 * [heads, dt_rank + 2 N, head_dim], dt_proj_weight [heads, head_dim, dt_rank], dt_proj_bias, A_log [heads, head_dim, N],
 * D [heads, head_dim], out_proj (d_inner -> hidden, mamba_proj_bias); `count` of them under path. The same values as
 * one Mamba of d_inner channels (MambaMixer), in other shapes.
 */
static void zamba_mixer(mp_model *m, const char *path, uint64_t count)
{
	const mp_ssm *s = &m->ssm;
	uint64_t h = m->hidden_size, di = s->d_inner, H = s->n_heads, hd = H ? di / H : 0, R = s->dt_rank, N = s->d_state;
	const uint8_t D = MP_ROOT_DECODER;
	mp_tensor_spec x = {.root = D, .path = path, .leaf = "x_proj_weight", .kind = MP_TK_RECURRENT,
	                    .split = MP_SPLIT_NONE, .step = MP_STEP_MIXER_X_DT, .view = MP_VIEW_EXPERTS, .copies = H,
	                    .rows = R + 2 * N, .cols = hd, .count = count};
	mp_tensor_spec cv = {.root = D, .path = path, .leaf = "conv1d.weight", .kind = MP_TK_RECURRENT,
	                     .split = MP_SPLIT_ROWS, .view = MP_VIEW_LINEAR, .conv = true, .rows = di,
	                     .cols = s->conv_kernel, .count = count};
	const uint64_t a[3] = {H, hd, N}, hv[2] = {H, hd};

	if (count == 0)
		return;
	hf_tensor(m, D, path, "in_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, 2 * di, h, count);
	if (s->proj_bias)
		hf_tensor(m, D, path, "in_proj.bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, 2 * di, count);
	mp_inventory_add(&m->inv, &cv);
	if (s->conv_bias)
		hf_tensor(m, D, path, "conv1d.bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, di, count);
	mp_inventory_add(&m->inv, &x);
	x.leaf = "dt_proj_weight", x.rows = hd, x.cols = R;
	mp_inventory_add(&m->inv, &x);
	hf_shape(m, D, path, "dt_proj_bias", MP_TK_RECURRENT, 0, hv, 2, count);
	hf_shape(m, D, path, "A_log", MP_TK_RECURRENT, 0, a, 3, count);
	hf_shape(m, D, path, "D", MP_TK_RECURRENT, 0, hv, 2, count);
	hf_tensor(m, D, path, "out_proj.weight", MP_TK_RECURRENT, MP_SPLIT_COLS, MP_STEP_MIXER_OUT, false, h, di, count);
	if (s->proj_bias)
		hf_tensor(m, D, path, "out_proj.bias", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, count);
}

/*
 * ZambaConfig (Zamba-7B, configuration_zamba.py): vocab 32000, hidden 3712, 76 layers, tied, 4096 positions; every layer
 * a Mamba (input_layernorm + ZambaMambaMixer: mamba_expand 2, n_mamba_heads 2, mamba_d_state 16, mamba_d_conv 4,
 * mamba_dt_rank "auto" = ceil(hidden / 16), mamba_conv_bias True, mamba_proj_bias False); the "hybrid" layers of
 * layers_block_type (alias layer_types; "mamba" is "linear_attention") also run the shared transformer
 * (ZambaAttentionDecoderLayer: attention from attention_hidden_size = 2 x hidden, 16 heads of attention_head_dim = 2 x
 * hidden // heads, num_key_value_heads 16, o_proj back to hidden, no biases; input_layernorm of 2 x hidden,
 * pre_ff_layernorm, a gated MLP of intermediate_size 14848) and a hidden x hidden linear, their Mamba under
 * mamba_decoder. layers_block_type absent: layers 0 and 1 Mamba, 2 hybrid, then layer i + 3 hybrid when i %
 * attn_layer_period (6) == attn_layer_offset (4). Every hybrid layer's shared_transf is tied to the first one's
 * (ZambaModel._tied_weights_keys), which transformers 5.24 applies only with tie_word_embeddings: untied, each hybrid
 * layer has its own. Each hybrid layer keeps its own KV cache. Worked example (the defaults): 7,232,490,496 parameters.
 */
void mpm_read_zamba(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layers_block_type"), *v;
	uint64_t h, a, inter, hybrid = 0, i = 0, expand, period, offset, blocks, hd;
	const char *at = "layers.{i}.shared_transf.self_attn", *ff = "layers.{i}.shared_transf.feed_forward";
	const char *lt_key = "layers_block_type";

	if (lt == NULL || cJSON_IsNull(lt)) { /* ZambaConfig's attribute_map spelling */
		lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types");
		lt_key = "layer_types";
	}
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 32000);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 3712);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 76);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 4096);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 16);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), 16);
	a = hf_get_u64(c, KEYS("attention_hidden_size"), hf_mul(c, 2, h, "hidden_size"));
	m->attn_input_size = a;
	hd = hf_get_u64(c, KEYS("attention_head_dim", "head_dim"), 0);
	if (hd == 0 && m->num_heads)
		hd = hf_mul(c, 2, h, "hidden_size") / m->num_heads;
	m->head_dim = hd;
	inter = m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 14848);
	period = hf_get_u64(c, KEYS("attn_layer_period"), 6);
	offset = hf_get_u64(c, KEYS("attn_layer_offset"), 4);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 1;
	m->final_norm = true;
	m->shared_block_params = true;
	expand = hf_get_u64(c, KEYS("mamba_expand"), 2);
	m->ssm.kind = MP_SSM_MAMBA1;
	m->ssm.mixer_listed = true;
	m->ssm.n_heads = hf_get_u64(c, KEYS("n_mamba_heads"), 2);
	m->ssm.d_inner = hf_mul(c, expand, h, "mamba_expand");
	m->ssm.d_state = hf_get_u64(c, KEYS("mamba_d_state"), 16);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("mamba_d_conv"), 4);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("mamba_conv_bias"), true);
	m->ssm.proj_bias = hf_get_bool(c, KEYS("mamba_proj_bias"), false);
	{
		const cJSON *r = cJSON_GetObjectItemCaseSensitive(c->cfg, "mamba_dt_rank");

		if (r == NULL || cJSON_IsNull(r) || (cJSON_IsString(r) && strcmp(r->valuestring, "auto") == 0))
			m->ssm.dt_rank = (h + 15) / 16;
		else
			m->ssm.dt_rank = hf_get_u64(c, KEYS("mamba_dt_rank"), 0);
	}
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS || h >= (UINT64_C(1) << 32) ||
	    inter >= (UINT64_C(1) << 32) || a >= (UINT64_C(1) << 32)) {
		hf_fail_key(c, "hidden_size", "hidden_size, attention_hidden_size and intermediate_size must be below 2^32 "
		                              "and num_hidden_layers between 1 and 1024");
		return;
	}
	if (m->ssm.n_heads == 0 || m->ssm.d_inner % m->ssm.n_heads) {
		/* ZambaConfig.validate_architecture */
		hf_fail_key(c, "n_mamba_heads", "mamba_expand x hidden_size must be a multiple of n_mamba_heads");
		return;
	}
	m->layer_pattern = true;
	if (cJSON_IsArray(lt)) {
		if ((uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
			hf_fail_key(c, lt_key, "layers_block_type (layer_types) must have one entry per layer "
			                       "(num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, lt)
		{
			bool hyb = cJSON_IsString(v) && strcmp(v->valuestring, "hybrid") == 0;

			if (!hyb && !(cJSON_IsString(v) && (strcmp(v->valuestring, "linear_attention") == 0 ||
			                                    strcmp(v->valuestring, "mamba") == 0))) {
				hf_fail_key(c, lt_key, "layers_block_type (layer_types) entries must be \"mamba\" "
				                       "(\"linear_attention\") or \"hybrid\"");
				return;
			}
			m->layer_flags[i++] = MP_LAYER_SSM | (hyb ? MP_LAYER_ATTENTION | MP_LAYER_FFN : 0);
			hybrid += hyb;
		}
	} else {
		for (i = 0; i < m->num_layers; i++) {
			bool hyb = i == 2 || (i >= 3 && period && (i - 3) % period == offset);

			m->layer_flags[i] = MP_LAYER_SSM | (hyb ? MP_LAYER_ATTENTION | MP_LAYER_FFN : 0);
			hybrid += hyb;
		}
	}
	zamba_mixer(m, "layers.{i}.mamba", m->num_layers - hybrid);
	zamba_mixer(m, "layers.{i}.mamba_decoder.mamba", hybrid);
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	if (hybrid == 0)
		return;
	blocks = m->tie_word_embeddings ? 1 : hybrid;
	{
		mp_tensor_spec s = {.root = MP_ROOT_DECODER, .path = at, .kind = MP_TK_ATTENTION, .view = MP_VIEW_LINEAR,
		                    .count = blocks, .uses = hybrid};

		s.leaf = "q_proj.weight", s.rows = m->num_heads * hd, s.cols = a, s.split = MP_SPLIT_ROWS;
		s.step = MP_STEP_QKV;
		mp_inventory_add(&m->inv, &s);
		s.split = MP_SPLIT_KV_ROWS, s.kv_heads = m->num_kv_heads, s.rows = m->num_kv_heads * hd;
		s.leaf = "k_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "v_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "o_proj.weight", s.rows = h, s.cols = m->num_heads * hd, s.split = MP_SPLIT_COLS;
		s.step = MP_STEP_O, s.kv_heads = 0;
		mp_inventory_add(&m->inv, &s);
		s.path = ff, s.kind = MP_TK_MLP, s.rows = inter, s.cols = h, s.split = MP_SPLIT_ROWS;
		s.step = MP_STEP_MLP_GATE_UP;
		s.leaf = "gate_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "up_proj.weight";
		mp_inventory_add(&m->inv, &s);
		s.leaf = "down_proj.weight", s.rows = h, s.cols = inter, s.split = MP_SPLIT_COLS, s.step = MP_STEP_MLP_DOWN;
		mp_inventory_add(&m->inv, &s);
	}
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.shared_transf", "input_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, a, blocks);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.shared_transf", "pre_ff_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, h, blocks);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}", "linear.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false, h, h,
	          hybrid);
}

/*
 * OlmoHybridConfig (OLMo-Hybrid, configuration_olmo_hybrid.py): vocab 100352, hidden 3840, FFN 11008 (a gated MLP in
 * every layer), 32 layers, 30 heads, num_key_value_heads = heads, head_dim hidden / heads, 65536 positions, untied,
 * attention_bias False; attention layers ("full_attention", OLMo-2's: q_norm over heads x head_dim, k_norm over
 * kv_heads x head_dim, post_attention_layernorm and post_feedforward_layernorm) and gated delta net layers
 * ("linear_attention", OlmoHybridGatedDeltaNet: q_proj and k_proj hidden -> linear_num_key_heads x
 * linear_key_head_dim, v_proj and g_proj hidden -> linear_num_value_heads x linear_value_head_dim, a_proj and b_proj
 * hidden -> value heads, conv1d over 2 key dims + the value dim (no bias, linear_conv_kernel_dim 4), A_log and dt_bias
 * of value heads, o_norm of the value head dim, o_proj back; input_layernorm and post_attention_layernorm). Absent,
 * the linear heads are num_attention_heads, the key head dim int(0.75 x hidden / key heads), the value head dim twice
 * it; layer_types absent: layer i attends when i % 4 == 3 (the last when none does). transformers refuses a config
 * without a layer of each kind. Worked example (the defaults): 7,430,870,688 parameters.
 */
void mpm_read_olmo_hybrid(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	uint64_t h, kh, vh, kd, vd, attn = 0, lin = 0, i = 0;
	static const char msg[] = "layer_types must list \"full_attention\" or \"linear_attention\" for each of the "
	                          "num_hidden_layers layers";
	const uint8_t D = MP_ROOT_DECODER;
	const char *p = "layers.{i}.linear_attn";

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 100352);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 3840);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 11008);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 32);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 30);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), m->num_heads);
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), m->num_heads ? h / m->num_heads : 0);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 65536);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 1; /* post_attention_layernorm; the other norm differs per kind of layer (below) */
	m->final_norm = true;
	m->qk_norm_full = true;
	kh = hf_get_u64(c, KEYS("linear_num_key_heads"), m->num_heads);
	vh = hf_get_u64(c, KEYS("linear_num_value_heads"), m->num_heads);
	kd = hf_get_u64(c, KEYS("linear_key_head_dim"), kh ? (uint64_t)(0.75 * (double)h / (double)kh) : 0);
	vd = hf_get_u64(c, KEYS("linear_value_head_dim"), 2 * kd);
	m->ssm.kind = MP_SSM_GATED_DELTANET;
	m->ssm.mixer_listed = true;
	m->ssm.n_groups = kh;
	m->ssm.d_state = kd;
	m->ssm.n_heads = vh;
	m->ssm.head_dim = vd;
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("linear_conv_kernel_dim"), 4);
	m->ssm.d_inner = hf_mul(c, vh, vd, "linear_num_value_heads");
	if (c->st != MP_OK)
		return;
	if (m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS || h >= (UINT64_C(1) << 32) || kh * kd >= (UINT64_C(1) << 32) ||
	    vh * vd >= (UINT64_C(1) << 32)) {
		hf_fail_key(c, "num_hidden_layers", "num_hidden_layers must be between 1 and 1024, the widths below 2^32");
		return;
	}
	m->layer_pattern = true;
	if (lt == NULL || cJSON_IsNull(lt)) {
		for (i = 0; i < m->num_layers; i++)
			m->layer_flags[i] = MP_LAYER_FFN | (i % 4 == 3 ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		if (m->num_layers < 4 && m->num_layers >= 1 && m->num_layers <= MP_MAX_LAYERS)
			m->layer_flags[m->num_layers - 1] = MP_LAYER_FFN | MP_LAYER_ATTENTION;
	} else if (!cJSON_IsArray(lt) || (uint64_t)cJSON_GetArraySize(lt) != m->num_layers) {
		hf_fail_key(c, "layer_types", msg);
		return;
	} else {
		cJSON_ArrayForEach(v, lt)
		{
			bool f = cJSON_IsString(v) && strcmp(v->valuestring, "full_attention") == 0;

			if (!f && !(cJSON_IsString(v) && strcmp(v->valuestring, "linear_attention") == 0)) {
				hf_fail_key(c, "layer_types", msg);
				return;
			}
			m->layer_flags[i++] = MP_LAYER_FFN | (f ? MP_LAYER_ATTENTION : MP_LAYER_SSM);
		}
	}
	for (i = 0; i < m->num_layers; i++) {
		attn += (m->layer_flags[i] & MP_LAYER_ATTENTION) != 0;
		lin += (m->layer_flags[i] & MP_LAYER_SSM) != 0;
	}
	if (attn == 0 || lin == 0) {
		/* OlmoHybridConfig.validate_architecture */
		hf_fail_key(c, "layer_types", "layer_types must hold at least one \"full_attention\" and one "
		                              "\"linear_attention\" layer (OLMo-Hybrid expects both)");
		return;
	}
	hf_tensor(m, D, "layers.{i}", "post_feedforward_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true,
	          1, h, attn);
	hf_tensor(m, D, "layers.{i}", "input_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, lin);
	{
		uint64_t K = kh * kd, V = vh * vd;
		mp_tensor_spec cv = {.root = D, .path = p, .leaf = "conv1d.weight", .kind = MP_TK_RECURRENT,
		                     .split = MP_SPLIT_ROWS, .view = MP_VIEW_LINEAR, .conv = true, .rows = 2 * K + V,
		                     .cols = m->ssm.conv_kernel, .count = lin};

		hf_tensor(m, D, p, "q_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, K, h, lin);
		hf_tensor(m, D, p, "k_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, K, h, lin);
		hf_tensor(m, D, p, "v_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, V, h, lin);
		hf_tensor(m, D, p, "g_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, V, h, lin);
		hf_tensor(m, D, p, "a_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, vh, h, lin);
		hf_tensor(m, D, p, "b_proj.weight", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_MIXER_IN, false, vh, h, lin);
		mp_inventory_add(&m->inv, &cv);
		hf_tensor(m, D, p, "A_log", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, vh, lin);
		hf_tensor(m, D, p, "dt_bias", MP_TK_RECURRENT, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, vh, lin);
		hf_tensor(m, D, p, "o_norm.weight", MP_TK_RECURRENT, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, vd, lin);
		hf_tensor(m, D, p, "o_proj.weight", MP_TK_RECURRENT, MP_SPLIT_COLS, MP_STEP_MIXER_OUT, false, h, V, lin);
	}
	hf_decode_rope(c, m, 1.0);
	c->names = &mpm_names_olmo_hybrid;
}
