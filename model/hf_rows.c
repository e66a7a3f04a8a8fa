/*
 * hf_rows.c: dense decoders that are a row's defaults and flags (mpm_read_dense) and one thing more: another
 * spelling of a key, a module behind a flag, a key transformers refuses, or a decoder under text_config. Each reader
 * names its configuration class (transformers 5.24, configuration_<type>.py) and what it adds; the tests hold
 * every one against what transformers builds (tests/ref/hf).
 */
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "mpm_types.h"

/* The decoder under text_config (the config's own keys when it has none): read by d, its keys named under
 * /text_config; tie_word_embeddings is the text config's, as the model class ties (Emu3ForCausalLM). */
static void text_config_dense(hf_ctx *c, const mpm_dense *d, mp_model *m)
{
	const cJSON *tc = cJSON_GetObjectItemCaseSensitive(c->cfg, "text_config");
	char pointer[96];
	hf_ctx t;

	if (tc && !cJSON_IsNull(tc) && !cJSON_IsObject(tc)) {
		hf_fail_key(c, "text_config", "text_config must be an object (the decoder's config)");
		return;
	}
	if (!cJSON_IsObject(tc)) {
		mpm_read_dense(c, d, m);
		return;
	}
	snprintf(pointer, sizeof(pointer), "%s/text_config", c->pointer);
	t = (hf_ctx){tc, pointer, c->err, c->st, NULL, NULL, c->decode_type};
	mpm_read_dense(&t, d, m);
	c->st = t.st;
	c->text = tc;
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%.63s", pointer);
}

/* Emu3Config (Emu3ForCausalLM, modeling_emu3.py): the decoder is Emu3TextConfig's Llama (vocab 184622, hidden 4096,
 * FFN 14336, 32 layers, 32 heads, kv 8, 9216 positions, untied); the VQ-VAE (vq_config) is not part of the causal
 * LM transformers builds. */
void mpm_read_emu3(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 184622,
	                            .hidden_size = 4096,
	                            .intermediate_size = 14336,
	                            .num_layers = 32,
	                            .num_heads = 32,
	                            .num_kv_heads = 8,
	                            .max_positions = 9216,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_MLP_BIAS_KEY};

	text_config_dense(c, &d, m);
}

/* InternLM3Config (built as LlamaForCausalLM): vocab 128512, hidden 4096, FFN 10240, 48 layers, 32 heads, kv 2,
 * head_dim 128, 32768 positions, untied; its attribute_map spells attention_bias qkv_bias and mlp_bias bias, the
 * spellings the published config.json uses. */
void mpm_read_internlm3(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 128512,
	                            .hidden_size = 4096,
	                            .intermediate_size = 10240,
	                            .num_layers = 48,
	                            .num_heads = 32,
	                            .num_kv_heads = 2,
	                            .head_dim = 128,
	                            .max_positions = 32768,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_MLP_BIAS_KEY | MPM_HEADS_DIVIDE_HIDDEN};

	mpm_read_dense(c, &d, m);
	if (!hf_has(c, "attention_bias") && hf_has(c, "qkv_bias"))
		m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("qkv_bias"), false);
	if (!hf_has(c, "mlp_bias") && hf_has(c, "bias"))
		m->mlp_bias = hf_get_bool(c, KEYS("bias"), false);
}

/* IQuestCoderConfig (built as LlamaForCausalLM): vocab 76800, hidden 5120, FFN 27648, 80 layers, 40 heads, kv 8,
 * head_dim 128, 131072 positions, untied; the configuration refuses use_sliding_window. */
void mpm_read_iquestcoder(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 76800,
	                            .hidden_size = 5120,
	                            .intermediate_size = 27648,
	                            .num_layers = 80,
	                            .num_heads = 40,
	                            .num_kv_heads = 8,
	                            .head_dim = 128,
	                            .max_positions = 131072,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_MLP_BIAS_KEY | MPM_HEADS_DIVIDE_HIDDEN};

	mpm_read_dense(c, &d, m);
	if (hf_get_bool(c, KEYS("use_sliding_window"), false))
		hf_fail_key(c, "use_sliding_window",
		            "use_sliding_window must be false: IQuestCoderConfig refuses it (\"IQuestCoder does not "
		            "support `use_sliding_window`\")");
}

/* HyperCLOVAXConfig: LlamaConfig's shapes (vocab 32000, hidden 4096, FFN 11008, 32 layers, 32 heads, head_dim
 * hidden // heads (128), 2048 positions, untied); use_post_norm (True) adds post_norm1 and post_norm2 after the
 * attention and the MLP; the multipliers hold no parameters. */
void mpm_read_hyperclovax(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 32000,
	                            .hidden_size = 4096,
	                            .intermediate_size = 11008,
	                            .num_layers = 32,
	                            .num_heads = 32,
	                            .max_positions = 2048,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_MLP_BIAS_KEY | MPM_HEADS_DIVIDE_HIDDEN};

	mpm_read_dense(c, &d, m);
	if (hf_get_bool(c, KEYS("use_post_norm"), true))
		m->norms_per_layer = 4;
}

/* DiffLlamaConfig (differential attention): vocab 32000, hidden 2048, FFN 8192, 16 layers, 32 heads, kv = heads,
 * 2048 positions, untied; attention_bias on q, k, v and o, the MLP never biased; each attention holds lambda_q1,
 * lambda_k1, lambda_q2 and lambda_k2 of head_dim (its groupnorm has no weights). */
void mpm_read_diffllama(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 32000,
	                            .hidden_size = 2048,
	                            .intermediate_size = 8192,
	                            .num_layers = 16,
	                            .num_heads = 32,
	                            .max_positions = 2048,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS};
	static const char *const lambdas[] = {"lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"};

	mpm_read_dense(c, &d, m);
	for (size_t i = 0; i < sizeof(lambdas) / sizeof(lambdas[0]); i++)
		hf_tensor(m, MP_ROOT_DECODER, MP_NAMES_LAYERS ".self_attn", lambdas[i], MP_TK_ATTENTION, MP_SPLIT_NONE,
		          MP_STEP_NONE, true, 1, m->head_dim, m->num_layers);
}

/* MoshiConfig (MoshiForCausalLM, the text model of Moshi; modeling_moshi.py): vocab 32000 (embed_tokens holds one
 * row more), hidden 4096, 32 layers, 32 heads (which must divide hidden_size: MoshiAttention refuses another), kv 32,
 * head_dim hidden // heads (128) unless given, 3000 positions, sliding_window 3000; q, k, v and o as MoshiLinear (a
 * .linear without bias); a gated MLP whose fc1 holds gate and up (ffn_dim, 22528, rows) and whose fc2 reads
 * ffn_dim / 2. The head is never tied: MoshiForCausalLM declares no tied weights, so lm_head (vocab_size rows) is
 * its own tensor whatever tie_word_embeddings says. */
void mpm_read_moshi(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 32000,
	                            .hidden_size = 4096,
	                            .intermediate_size = 11264,
	                            .num_layers = 32,
	                            .num_heads = 32,
	                            .max_positions = 3000,
	                            .sliding_window = 3000,
	                            .norms = 2,
	                            .modules = MPM_HEADS_DIVIDE_HIDDEN};

	mpm_read_dense(c, &d, m);
	m->intermediate_size = hf_get_u64(c, KEYS("ffn_dim"), 22528) / 2;
	if (c->st == MP_OK && hf_get_u64(c, KEYS("ffn_dim"), 22528) % 2)
		hf_fail_key(c, "ffn_dim", "ffn_dim must be even: MoshiGatingMLP's fc1 holds gate and up of ffn_dim / 2 each");
	hf_tensor(m, MP_ROOT_DECODER, NULL, "embed_tokens.weight", MP_TK_EMBEDDING, MP_SPLIT_ROWS, MP_STEP_NONE, false,
	          m->vocab_size + 1, m->hidden_size, 1);
	m->tie_word_embeddings = false;
}

/* Apertus1p5TextConfig (the decoder of Apertus 1.5): Apertus's modules (xIELU MLP of up and down, per-head q/k
 * norms, attention_layernorm and feedforward_layernorm) with vocab 266752, kv = heads, 65536 positions (llama3
 * RoPE), untied; output_vocab_size (None) prunes the head to its first ids: the head is that many rows. */
void mpm_read_apertus1p5_text(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 266752,
	                            .hidden_size = 4096,
	                            .intermediate_size = 14336,
	                            .num_layers = 32,
	                            .num_heads = 32,
	                            .max_positions = 65536,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_PLAIN_MLP | MPM_XIELU | MPM_QK_NORM};
	uint64_t out;

	mpm_read_dense(c, &d, m);
	out = hf_get_u64(c, KEYS("output_vocab_size"), m->vocab_size);
	if (c->st != MP_OK || out == m->vocab_size)
		return;
	if (out == 0 || out > m->vocab_size) {
		hf_fail_key(c, "output_vocab_size", "output_vocab_size must be in [1, vocab_size] (Apertus1p5TextConfig)");
		return;
	}
	if (m->tie_word_embeddings) {
		hf_fail_key(c, "tie_word_embeddings",
		            "tie_word_embeddings must be false with output_vocab_size: the pruned head is narrower than the "
		            "embeddings");
		return;
	}
	hf_tensor(m, MP_ROOT_TOP, NULL, "lm_head.weight", MP_TK_LM_HEAD, MP_SPLIT_ROWS, MP_STEP_LM_HEAD, false, out,
	          m->hidden_size, 1);
	c->names = &mpm_names_apertus_pruned;
}

/*
 * MuseGlimmerTextConfig (the decoder of Muse Glimmer; modeling_muse_glimmer.py MuseGlimmerTextModel): vocab 202048,
 * hidden 6656, gated MLP 19968, 52 layers, 32 heads, 2 KV heads, head_dim 128, 131072 positions, untied;
 * attention_bias on q, k, v and o; a gate_proj of heads x head_dim beside q (no bias), q/k norms without weights;
 * four norms per layer (input, post_attention, pre_ and post_feedforward); a sliding_window of 2048 on the layers
 * layer_types names, by default every layer but those with (num_hidden_layers - 1 - i) % 4 == 0 (the NoPE layers,
 * full attention). The embedding's norm and the qk norms carry no weights.
 */
void mpm_read_muse_glimmer_text(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 202048,
	                            .hidden_size = 6656,
	                            .intermediate_size = 19968,
	                            .num_layers = 52,
	                            .num_heads = 32,
	                            .num_kv_heads = 2,
	                            .head_dim = 128,
	                            .max_positions = 131072,
	                            .sliding_window = 2048,
	                            .window_rule = MPM_WINDOW_PATTERN_LAST,
	                            .window_pattern = 4,
	                            .norms = 4,
	                            .modules = MPM_ATTENTION_BIAS | MPM_HEADS_DIVIDE_HIDDEN};

	mpm_read_dense(c, &d, m);
	if (c->st != MP_OK)
		return;
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS,
	          MP_STEP_QKV, false, hf_mul(c, m->num_heads, m->head_dim, "head_dim"), m->hidden_size, m->num_layers);
}

/*
 * MuseSparkTextConfig (the decoder of Muse Spark; modeling_muse_spark.py MuseSparkTextModel): Muse Glimmer's attention
 * (q, k, v, o with attention_bias, a gate_proj of heads x head_dim, weightless q/k norms; the same sliding layers,
 * window 2048) with vocab 202048, hidden 8192, 62 layers, 128 heads of 64, 16 KV heads, 1048576 positions, untied;
 * three norms with weights per layer (names mpm_names_muse_spark) and two residual gates (post_attention_ and
 * post_feedforward_residual_gate.gate [hidden], fp32); per mlp_layer_types entry a dense gated MLP of
 * intermediate_size 16384 ("dense") or the MoE ("sparse", the default): a sigmoid router over num_local_experts 256
 * from hidden (its e_score_correction_bias a buffer), top num_experts_per_tok 8, pre_expert_proj to moe_hidden_size
 * 4096 and its pre_expert_norm, the routed experts at that width (gate_up and down of moe_intermediate_size 4096), the
 * experts' post_expert_norm, post_expert_proj back to hidden.
 */
void mpm_read_muse_spark_text(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 202048,
	                            .hidden_size = 8192,
	                            .intermediate_size = 16384,
	                            .num_layers = 62,
	                            .num_heads = 128,
	                            .num_kv_heads = 16,
	                            .head_dim = 64,
	                            .max_positions = 1048576,
	                            .sliding_window = 2048,
	                            .window_rule = MPM_WINDOW_PATTERN_LAST,
	                            .window_pattern = 4,
	                            .norms = 3,
	                            .experts = 256,
	                            .modules = MPM_ATTENTION_BIAS | MPM_HEADS_DIVIDE_HIDDEN};
	const cJSON *types = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types"), *v;
	uint64_t L, lat, moe = 0, i = 0;

	mpm_read_dense(c, &d, m);
	/* the row's experts made intermediate_size theirs: here it is the dense layers' MLP, the experts have their own */
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 16384);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 4096);
	lat = hf_get_u64(c, KEYS("moe_hidden_size"), 4096);
	m->router_correction_buffer = true;
	if (c->st != MP_OK)
		return;
	L = m->num_layers;
	if (lat == 0 || lat > (UINT64_C(1) << 24)) {
		hf_fail_key(c, "moe_hidden_size", "moe_hidden_size must be from 1 to 2^24 (the width the experts run at)");
		return;
	}
	m->moe_latent_size = lat;
	if (cJSON_IsArray(types)) {
		if ((uint64_t)cJSON_GetArraySize(types) != L) {
			hf_fail_key(c, "mlp_layer_types", "mlp_layer_types must have one entry per layer (num_hidden_layers)");
			return;
		}
		cJSON_ArrayForEach(v, types)
		{
			bool dense = cJSON_IsString(v) && strcmp(v->valuestring, "dense") == 0;

			if (!dense && !(cJSON_IsString(v) && strcmp(v->valuestring, "sparse") == 0)) {
				hf_fail_key(c, "mlp_layer_types", "mlp_layer_types entries must be \"dense\" or \"sparse\"");
				return;
			}
			if (dense)
				m->dense_layer_mask[i / 8] |= (uint8_t)(1u << (i % 8));
			moe += !dense;
			i++;
		}
	} else if (types && !cJSON_IsNull(types)) {
		hf_fail_key(c, "mlp_layer_types", "mlp_layer_types must be a list of \"dense\" and \"sparse\"");
		return;
	} else {
		moe = L;
	}
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn", "gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS,
	          MP_STEP_QKV, false, hf_mul(c, m->num_heads, m->head_dim, "head_dim"), m->hidden_size, L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.post_attention_residual_gate", "gate", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, m->hidden_size, L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.post_feedforward_residual_gate", "gate", MP_TK_NORM, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, m->hidden_size, L);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mlp", "pre_expert_proj.weight", MP_TK_SHARED_EXPERT, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, lat, m->hidden_size, moe);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mlp", "pre_expert_norm.weight", MP_TK_SHARED_EXPERT, MP_SPLIT_NONE,
	          MP_STEP_NONE, true, 1, lat, moe);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mlp", "experts.post_expert_norm.weight", MP_TK_SHARED_EXPERT,
	          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, lat, moe);
	hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mlp", "post_expert_proj.weight", MP_TK_SHARED_EXPERT, MP_SPLIT_NONE,
	          MP_STEP_EXTRA, false, m->hidden_size, lat, moe);
}
