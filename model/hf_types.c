/*
 * hf_types.c: the dense decoder every dense row of model/mpm_types.c is read by (mpm_read_dense), and the readers of
 * GPT-J, GPTBigCode, the recurrent Mamba and Mamba-2 and gpt-oss. Every default is the transformers 5 configuration class's (configuration_<type>.py), every
 * module shape its modeling file's; tests/ref/hf/groundtruth.json (made by tools/groundtruth/generate.py from
 * transformers itself) holds the exact counts and cache bytes the tests compare with.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"
#include "mpm_types.h"

/*
 * The sliding layers of a dense decoder whose config has no layer_types, by its row's rule (mpm_window_rule): the
 * layer_types the configuration class derives (configuration_<type>.py __post_init__, transformers 5.24). A rule that
 * gives sliding layers to a config without a window is refused, as transformers cannot run it.
 */
static void dense_window_layers(hf_ctx *c, const mpm_dense *d, mp_model *m)
{
	uint64_t L = m->num_layers, sliding = L;
	const char *why = NULL;

	switch (d->window_rule) {
	case MPM_WINDOW_FROM_LAYER: {
		/* Qwen2Config: sliding_window = None without use_sliding_window; layer i slides when i >= max_window_layers */
		uint64_t from = hf_get_u64(c, KEYS("max_window_layers"), d->window_pattern);

		if (!hf_get_bool(c, KEYS("use_sliding_window"), false))
			m->sliding_window = 0;
		sliding = m->sliding_window && from < L ? L - from : 0;
		break;
	}
	case MPM_WINDOW_ALTERNATE: /* Gemma2Config: layers 0, 2, 4, ... whatever the window */
		sliding = (L + 1) / 2;
		why = "layers 0, 2, 4, ... are sliding_attention";
		break;
	case MPM_WINDOW_PATTERN: {
		/* Gemma3TextConfig, Cohere2Config, Olmo3Config, Exaone4Config: layer i is full when (i + 1) % pattern == 0 */
		uint64_t every = (d->modules & MPM_PATTERN_FIXED)
		                     ? d->window_pattern
		                     : hf_get_u64(c, KEYS("sliding_window_pattern"), d->window_pattern);

		if (m->sliding_window == 0 && (d->modules & MPM_NULL_WINDOW_NO_PATTERN)) {
			hf_fail_key(c, "sliding_window",
			            "sliding_window null sets sliding_window_pattern to 0, by which Exaone4Config divides to "
			            "derive layer_types: give layer_types, or a window");
			return;
		}
		if (every == 0) {
			hf_fail_key(c, "sliding_window_pattern",
			            "sliding_window_pattern must be at least 1 (layer i is full when (i + 1) % "
			            "sliding_window_pattern == 0)");
			return;
		}
		sliding = L - L / every;
		why = "the layers i with (i + 1) % sliding_window_pattern != 0 are sliding_attention";
		break;
	}
	case MPM_WINDOW_PATTERN_FIRST: /* CwmConfig, GraniteSWAConfig: layer i is full when i % pattern == 0 */
		sliding = d->window_pattern ? L - (L + d->window_pattern - 1) / d->window_pattern : L;
		why = "the layers i with i % 4 != 0 are sliding_attention";
		break;
	case MPM_WINDOW_PATTERN_LAST: /* MuseGlimmerTextConfig: layer i is full when (L - 1 - i) % pattern == 0 */
		sliding = d->window_pattern ? L - (L + d->window_pattern - 1) / d->window_pattern : L;
		why = "the layers i with (num_hidden_layers - 1 - i) % 4 != 0 are sliding_attention";
		break;
	case MPM_WINDOW_NOPE: {
		/* SmolLM3Config: with use_sliding_window and a window, the layers without RoPE slide */
		const cJSON *nope = cJSON_GetObjectItemCaseSensitive(c->cfg, "no_rope_layers"), *v;
		uint64_t every = hf_get_u64(c, KEYS("no_rope_layer_interval"), d->window_pattern);

		sliding = 0;
		if (cJSON_IsArray(nope)) {
			cJSON_ArrayForEach(v, nope)
				sliding += cJSON_IsNumber(v) && v->valuedouble == 0;
		} else if (every) {
			sliding = L / every;
		}
		if (!hf_get_bool(c, KEYS("use_sliding_window"), false) || m->sliding_window == 0)
			sliding = 0;
		break;
	}
	default: /* every layer, when there is a window */
		sliding = m->sliding_window ? L : 0;
		break;
	}
	if (c->st != MP_OK)
		return;
	if (why && sliding && m->sliding_window == 0) {
		char msg[240];

		snprintf(msg, sizeof(msg),
		         "sliding_window is null, but without layer_types %s: transformers 5.24 cannot build their cache "
		         "(give layer_types, or a window)",
		         why);
		hf_fail_key(c, "sliding_window", msg);
		return;
	}
	if (sliding == 0)
		m->sliding_window = 0;
	m->sliding_window_layers = m->sliding_window ? sliding : 0;
}

/*
 * A dense decoder from its row alone (model/mpm_types.c): the trunk's sizes under their keys (the row's defaults for
 * keys the config leaves out), the biases, norms, q/k norms and MLP its modules flags say, the sliding window by its
 * rule, a Mixtral-style MoE block when the row has experts, then layer_types and the RoPE keys.
 */
void mpm_read_dense(hf_ctx *c, const mpm_dense *d, mp_model *m)
{
	unsigned f = d->modules;
	bool ab = false;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), d->vocab_size);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), d->hidden_size);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), d->intermediate_size);
	m->num_layers = (f & MPM_NUM_LAYERS_KEY) ? hf_get_u64(c, KEYS("num_hidden_layers", "num_layers"), d->num_layers)
	                                         : hf_get_u64(c, KEYS("num_hidden_layers"), d->num_layers);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), d->num_heads);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), d->num_kv_heads ? d->num_kv_heads : m->num_heads);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), d->max_positions);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), d->tie);
	if (f & MPM_HEADS_DIVIDE_HIDDEN)
		hf_heads_divide_hidden(c, m, "num_attention_heads");
	if (d->head_dim && !hf_has(c, "head_dim")) {
		m->head_dim = d->head_dim;
	} else {
		hf_derive_head_dim(c, m, "num_attention_heads");
	}
	if ((f & MPM_O_PROJ_HIDDEN) && c->st == MP_OK && m->head_dim * m->num_heads != m->hidden_size)
		hf_fail_key(c, "num_attention_heads",
		            "num_attention_heads x head_dim must equal hidden_size: this model type's o_proj is hidden_size x "
		            "hidden_size (HeliumAttention), so its forward fails otherwise (head_dim's default is 128)");
	/* biases */
	if (f & (MPM_ATTENTION_BIAS | MPM_ATTENTION_BIAS_QKV | MPM_QKV_BIAS_ALWAYS))
		ab = hf_get_bool(c, KEYS("attention_bias"), (f & MPM_ATTENTION_BIAS_ON) != 0);
	if (f & MPM_ATTENTION_BIAS)
		m->qkv_bias = m->o_bias = ab;
	if (f & MPM_QKV_BIAS_ALWAYS) { /* Qwen2Attention: q, k, v with biases whatever attention_bias says; o never */
		m->qkv_bias = true;
		m->o_bias = false;
	}
	if (f & MPM_ATTENTION_BIAS_QKV) {
		m->qkv_bias = ab;
		m->o_bias = hf_get_bool(c, KEYS("attention_out_bias"), false);
	}
	if (f & MPM_USE_BIAS)
		m->qkv_bias = m->o_bias = m->mlp_bias = hf_get_bool(c, KEYS("use_bias"), true);
	if (f & MPM_BIAS_ALWAYS)
		m->qkv_bias = m->o_bias = m->mlp_bias = true;
	if (f & MPM_USE_BIAS_KEY)
		m->qkv_bias = m->o_bias = m->mlp_bias = hf_get_bool(c, KEYS("use_bias"), false);
	if (f & MPM_QKV_BIAS_KEY)
		m->qkv_bias = hf_get_bool(c, KEYS("use_qkv_bias"), false);
	if (f & MPM_MLP_BIAS_KEY)
		m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	/* norms */
	m->qk_norm = (f & MPM_QK_NORM) != 0;
	m->qk_norm_full = (f & MPM_QK_NORM_FULL) || ((f & MPM_QK_NORM_KEY) && hf_get_bool(c, KEYS("use_qk_norm"), false));
	m->qk_norm_heads = m->qk_norm_full && (f & MPM_QK_NORM_KEY);
	if ((f & MPM_QK_LAYERNORM_KEY) && hf_get_bool(c, KEYS("qk_layernorm"), (f & MPM_QK_LAYERNORM_ON) != 0))
		m->qk_norm_layer = true;
	m->lm_head_bias = (f & MPM_LM_HEAD_BIAS) != 0;
	m->attention_sinks = (f & MPM_SINKS) != 0;
	m->activation_params = (f & MPM_XIELU) ? 2 : 0;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = (f & MPM_PLAIN_MLP) ? MP_FFN_PLAIN : MP_FFN_GATED;
	m->norm_kind = (f & MPM_NORM_NONE) ? MP_NORM_NONE : (f & MPM_LAYERNORM) ? MP_NORM_LAYER : MP_NORM_RMS;
	m->norms_per_layer = d->norms;
	m->final_norm = true;
	m->parallel_block = (f & MPM_PARALLEL) != 0;
	if ((f & MPM_PARALLEL_RESIDUAL_KEY) && hf_get_bool(c, KEYS("use_parallel_residual"), false)) {
		m->parallel_block = true;
		m->norms_per_layer = 1;
	}
	if ((f & MPM_QK_NORMS_PER_HEAD_KEY) && hf_get_bool(c, KEYS("qk_layernorm"), false) && c->st == MP_OK) {
		/* StableLmLayerNormPerHead: one LayerNorm(head_dim, bias=False) per query head and per KV head */
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn.q_layernorm.norms.{j}", "weight", MP_TK_ATTENTION,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 0, m->head_dim, hf_mul(c, m->num_layers, m->num_heads, "num_attention_heads"));
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.self_attn.k_layernorm.norms.{j}", "weight", MP_TK_ATTENTION,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 0, m->head_dim,
		          hf_mul(c, m->num_layers, m->num_kv_heads, "num_key_value_heads"));
	}
	if (f & MPM_SUB_NORM) {
		m->norms_per_layer = 3; /* input, post-attention and attn_sub_norm: all of hidden_size */
		m->ffn_sub_norm = m->intermediate_size;
	}
	/* the window: sliding_window (null = none), then the rule that says which layers it covers when the config has
	 * no layer_types (mpm_window_rule); layer_types, when given, decides (hf_decode_layer_types) */
	m->sliding_window = hf_window(c, "sliding_window", d->sliding_window);
	if (!hf_has(c, "layer_types"))
		dense_window_layers(c, d, m);
	/* a Mixtral-style MoE block in every layer: num_local_experts of intermediate_size, top-2 */
	if (d->experts) {
		m->num_experts = hf_get_u64(c, KEYS("num_local_experts", "num_experts"), d->experts); /* attribute_map */
		m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 2);
		m->moe_intermediate_size = m->intermediate_size;
		m->intermediate_size = 0;
	}
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, d->partial_rotary > 0 ? d->partial_rotary : 1.0);
	if (d->rotary_sets)
		m->rotary_buffer_sets = d->rotary_sets;
}

/*
 * GPTJConfig: vocab 50400, n_embd 4096, n_layer 28, n_head 16, n_positions 2048, n_inner None (4 x n_embd),
 * rotary_dim 64, untied: q, k, v and out_proj without biases, one LayerNorm per layer (attention and MLP in
 * parallel), fc_in/fc_out with biases, lm_head with a bias (modeling_gptj.py).
 */
void mpm_read_gptj(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50400);
	m->hidden_size = hf_get_u64(c, KEYS("n_embd", "hidden_size"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 28);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 16);
	m->num_kv_heads = m->num_heads;
	m->max_position_embeddings = hf_get_u64(c, KEYS("n_positions", "max_position_embeddings"), 2048);
	m->intermediate_size = hf_get_u64(c, KEYS("n_inner"), 4 * m->hidden_size);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	hf_derive_head_dim(c, m, hf_key_of(c, KEYS("n_head", "num_attention_heads")));
	m->mlp_bias = m->lm_head_bias = true;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 1;
	m->final_norm = true;
	m->parallel_block = true;
	m->rotary_dim = hf_get_u64(c, KEYS("rotary_dim"), 64);
	if (m->rotary_dim > m->head_dim)
		m->rotary_dim = m->head_dim;
	m->rotary_buffer_sets = 1;
	snprintf(m->rope_type, sizeof(m->rope_type), "default");
}

/*
 * GPTBigCodeConfig (StarCoder, SantaCoder): GPT-2's modules with multi_query (True): the fused c_attn projects
 * hidden -> hidden + 2 x head_dim (one K and one V head), every projection with a bias, learned positions.
 */
void mpm_read_gpt_bigcode(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50257);
	m->hidden_size = hf_get_u64(c, KEYS("n_embd", "hidden_size"), 768);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 12);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 12);
	m->num_kv_heads = hf_get_bool(c, KEYS("multi_query"), true) ? 1 : m->num_heads;
	m->max_position_embeddings = hf_get_u64(c, KEYS("n_positions", "max_position_embeddings"), 1024);
	m->learned_position_embeddings = m->max_position_embeddings;
	m->intermediate_size = hf_get_u64(c, KEYS("n_inner"), 4 * m->hidden_size);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	hf_derive_head_dim(c, m, hf_key_of(c, KEYS("n_head", "num_attention_heads")));
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = true;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/* Every layer is the recurrent mixer alone, behind one RMSNorm (MambaBlock, Mamba2Block); a final norm_f. */
static void recurrent_only(mp_model *m)
{
	m->layer_pattern = true;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		m->layer_flags[i] = MP_LAYER_SSM;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 1;
	m->final_norm = true;
	m->intermediate_size = 0;
	m->num_heads = m->num_kv_heads = m->head_dim = 0;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
}

/*
 * MambaConfig (and FalconMambaConfig, whose extra RMS norms of B, C and dt hold no parameters): vocab 50280,
 * hidden 768, 32 layers, state_size 16, conv_kernel 4, expand 2 (d_inner = intermediate_size = 2 x hidden),
 * time_step_rank "auto" = ceil(hidden / 16), use_bias False, use_conv_bias True, tied (modeling_mamba.py).
 */
void mpm_read_mamba(hf_ctx *c, mp_model *m)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(c->cfg, "time_step_rank");
	double expand;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50280);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size", "d_model"), 768);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers", "n_layer"), 32);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->ssm.kind = MP_SSM_MAMBA1;
	m->ssm.d_state = hf_get_u64(c, KEYS("state_size", "d_state"), 16);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("conv_kernel", "d_conv"), 4);
	expand = hf_get_double(c, c->cfg, "expand", 2.0);
	m->ssm.d_inner = hf_get_u64(c, KEYS("intermediate_size"), (uint64_t)(expand * (double)m->hidden_size));
	if (cJSON_IsString(r) && strcmp(r->valuestring, "auto") == 0)
		m->ssm.dt_rank = (m->hidden_size + 15) / 16;
	else if (cJSON_IsString(r))
		hf_fail_key(c, "time_step_rank", "time_step_rank must be an integer or \"auto\"");
	else
		m->ssm.dt_rank = hf_get_u64(c, KEYS("time_step_rank"), (m->hidden_size + 15) / 16);
	m->ssm.proj_bias = hf_get_bool(c, KEYS("use_bias"), false);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("use_conv_bias"), true);
	recurrent_only(m);
}

/*
 * Mamba2Config: vocab 32768, hidden 4096, 64 layers, num_heads 128, head_dim 64, state_size 128, n_groups 8,
 * conv_kernel 4, expand 2 (d_inner 8192), use_bias False, use_conv_bias True, untied; the gated RMSNorm of d_inner
 * before out_proj (modeling_mamba2.py).
 */
void mpm_read_mamba2(hf_ctx *c, mp_model *m)
{
	double expand;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 32768);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 64);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	m->ssm.kind = MP_SSM_MAMBA2;
	m->ssm.n_heads = hf_get_u64(c, KEYS("num_heads"), 128);
	m->ssm.head_dim = hf_get_u64(c, KEYS("head_dim"), 64);
	m->ssm.d_state = hf_get_u64(c, KEYS("state_size"), 128);
	m->ssm.n_groups = hf_get_u64(c, KEYS("n_groups"), 8);
	m->ssm.conv_kernel = hf_get_u64(c, KEYS("conv_kernel"), 4);
	expand = hf_get_double(c, c->cfg, "expand", 2.0);
	m->ssm.d_inner = (uint64_t)(expand * (double)m->hidden_size);
	m->ssm.proj_bias = hf_get_bool(c, KEYS("use_bias"), false);
	m->ssm.conv_bias = hf_get_bool(c, KEYS("use_conv_bias"), true);
	m->ssm.gated_norm = true;
	recurrent_only(m);
}

/*
 * GptOssConfig: vocab 201088, hidden 2880, 36 layers, 64 heads, kv 8, head_dim 64, 131072 positions (YaRN from
 * 4096), untied; 128 experts (num_local_experts) of 2880 (intermediate_size), top-4, with biases on gate_up and
 * down, a router with a bias; attention_bias on q, k, v and o; one sink logit per head; sliding_window 128 on
 * every other layer (layer_types; layer 0 slides). quantization_config {"quant_method": "mxfp4"} ships the
 * experts in MXFP4 and leaves attention, router, embeddings and lm_head in bf16 (modules_to_not_convert).
 */
void mpm_read_gpt_oss(hf_ctx *c, mp_model *m)
{
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(c->cfg, "quantization_config"), *method;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 201088);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 2880);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 36);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 64);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), 8);
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), 64);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 131072);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), true);
	m->attention_sinks = true;
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts", "num_experts"), 128); /* attribute_map */
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 4);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 2880);
	m->intermediate_size = 0;
	m->mlp_bias = true; /* the experts' gate_up_proj_bias and down_proj_bias */
	m->router_bias = true;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
	m->sliding_window = hf_window(c, "sliding_window", 128);
	if (m->sliding_window)
		m->sliding_window_layers = (m->num_layers + 1) / 2; /* layers 0, 2, 4, ... */
	else if (!hf_has(c, "layer_types") && m->num_layers)
		/* GptOssConfig derives layer_types with sliding layers whatever the window: transformers 5.24 cannot build
		 * their cache without one (DynamicSlidingWindowLayer(sliding_window=None)) */
		hf_fail_key(c, "sliding_window",
		            "sliding_window is null, but without layer_types layers 0, 2, 4, ... are sliding_attention: "
		            "transformers 5.24 cannot build their cache (give layer_types, or a window)");
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
	method = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "quant_method") : NULL;
	if (cJSON_IsString(method) && strcmp(method->valuestring, "mxfp4") == 0)
		m->checkpoint_format[MP_TC_EXPERTS] = MP_DTYPE_MXFP4;
}


/*
 * DogeConfig (Doge, configuration_doge.py): vocab 32768, hidden 1024, FFN 2048, 32 layers, 8 heads, kv 8 (absent:
 * heads), head_dim hidden / heads, 2048 positions, untied, attention_bias and mlp_bias False, sliding_window null
 * (set: every layer slides). DogeAttention (modeling_doge.py): Llama's q, k, v, o with per-head q_norm and k_norm, the
 * dynamic mask's A (kv heads) and dt_proj (kv x head_dim -> kv, attention_bias); each layer's input_residual and
 * post_attention_residual (hidden); with is_moe the MLP is DogeCDMoE: the dense gated MLP (its shared expert) plus
 * router_gate (hidden -> 2 x floor(sqrt(num_experts))) and the retrieval experts' down_embed and up_embed tables
 * (num_experts x hidden each). Worked example (the defaults): 403,055,872 parameters.
 */
void mpm_read_doge(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 32768, .hidden_size = 1024, .intermediate_size = 2048, .num_layers = 32,
	                            .num_heads = 8, .max_positions = 2048, .norms = 2, .window_rule = MPM_WINDOW_ALL,
	                            .modules = MPM_ATTENTION_BIAS | MPM_MLP_BIAS_KEY | MPM_QK_NORM};
	uint64_t kv, L, h;
	const uint8_t D = MP_ROOT_DECODER;

	mpm_read_dense(c, &d, m);
	if (c->st != MP_OK)
		return;
	kv = m->num_kv_heads, L = m->num_layers, h = m->hidden_size;
	hf_tensor(m, D, "layers.{i}.self_attn", "A", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, kv, L);
	hf_tensor(m, D, "layers.{i}.self_attn", "dt_proj.weight", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_EXTRA, false, kv,
	          hf_mul(c, kv, m->head_dim, "num_key_value_heads"), L);
	if (m->qkv_bias)
		hf_tensor(m, D, "layers.{i}.self_attn", "dt_proj.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
		          kv, L);
	hf_tensor(m, D, "layers.{i}", "input_residual", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	hf_tensor(m, D, "layers.{i}", "post_attention_residual", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, L);
	if (hf_get_bool(c, KEYS("is_moe"), false)) {
		uint64_t e = hf_get_u64(c, KEYS("num_experts"), 16384), keys = 0;

		while ((keys + 1) * (keys + 1) <= e) /* math.floor(math.sqrt(num_experts)) */
			keys++;
		hf_tensor(m, D, "layers.{i}.mlp", "router_gate.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_EXTRA, false,
		          2 * keys, h, L);
		hf_tensor(m, D, "layers.{i}.mlp", "down_embed.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_NONE, false, e, h, L);
		hf_tensor(m, D, "layers.{i}.mlp", "up_embed.weight", MP_TK_MLP, MP_SPLIT_NONE, MP_STEP_NONE, false, e, h, L);
	}
}
