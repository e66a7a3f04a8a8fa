/*
 * hf_types.c: the model types added for issue 14. Dense decoders that differ from Llama only in their defaults,
 * biases, norms and MLP shape are rows of one table (dense_types); recurrent (Mamba, Mamba-2) and gpt-oss have
 * their own decoders. Every default is the transformers 5 configuration class's (configuration_<type>.py), every
 * module shape its modeling file's; tests/ref/hf/groundtruth.json (made by tools/groundtruth/generate.py from
 * transformers itself) holds the exact counts and cache bytes the tests compare with.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_internal.h"

/* What a dense row's modules carry. */
enum {
	F_ATTN_BIAS = 1u << 0,	    /* attention_bias (default from F_ATTN_BIAS_ON) on q, k, v and o (LlamaAttention) */
	F_ATTN_BIAS_QKV = 1u << 1,  /* attention_bias on q, k, v only (GLM, Seed-OSS: attention_out_bias for o) */
	F_ATTN_BIAS_ON = 1u << 2,   /* attention_bias defaults to true */
	F_USE_BIAS = 1u << 3,	    /* use_bias (default true) on q, k, v, o and the MLP (Starcoder2) */
	F_PLAIN = 1u << 4,	    /* up and down projections only (ReLU^2, GELU, xIELU MLPs) */
	F_LAYERNORM = 1u << 5,	    /* LayerNorm with weight and bias */
	F_NORM_NONE = 1u << 6,	    /* LayerNorm without parameters (OLMo) */
	F_QK_NORM = 1u << 7,	    /* per-head q_norm and k_norm of head_dim */
	F_QK_NORM_FULL = 1u << 8,   /* q_norm and k_norm over the whole projections (OLMo-2/3) */
	F_QK_NORM_KEY = 1u << 9,    /* use_qk_norm (Cohere: weights of heads x head_dim, as the full form) */
	F_LM_BIAS = 1u << 10,	    /* lm_head carries a bias (Phi, GPT-J) */
	F_XIELU = 1u << 11,	    /* xIELU activation: alpha_p and alpha_n per MLP (Apertus) */
	F_MLP_BIAS_KEY = 1u << 12,  /* mlp_bias (default false) */
	F_QKV_BIAS_KEY = 1u << 13,  /* use_qkv_bias (StableLM) */
	F_SUB_NORM = 1u << 14,	    /* BitNet: attn_sub_norm (hidden) and ffn_sub_norm (intermediate) */
	F_USE_BIAS_KEY = 1u << 15,  /* use_bias (default false) on q, k, v and o (ERNIE 4.5) */
	F_PARALLEL = 1u << 16,	    /* attention and MLP side by side from one norm (Cohere, Phi, GPT-J) */
	F_QK_LAYERNORM_KEY = 1u << 17, /* qk_layernorm: per-head LayerNorms (weight and bias) of head_dim (Phi) */
};

typedef struct dense_row {
	const char *name;
	uint64_t vocab, hidden, inter, layers, heads, kv, head_dim, max_pos; /* kv 0 = heads; head_dim 0 = derived */
	bool tie;
	uint64_t window;	/* default sliding_window, 0 = none */
	uint64_t full_every;	/* without layer_types: layer i has full attention when (i + 1) % full_every == 0 */
	uint64_t norms;		/* norms per layer */
	double partial;		/* partial_rotary_factor default */
	unsigned f;
} dense_row;

static const dense_row dense_types[] = {
    /* GraniteConfig: LlamaConfig's shapes; the multipliers (embedding, residual, attention, logits) hold no
     * parameters. */
    {"granite", 32000, 4096, 11008, 32, 32, 0, 0, 2048, true, 0, 0, 2, 1.0, F_ATTN_BIAS | F_MLP_BIAS_KEY},
    /* OlmoConfig: vocab 50304, 2048 positions; OlmoLayerNorm has no weights (input, post-attention, final). */
    {"olmo", 50304, 4096, 11008, 32, 32, 0, 0, 2048, false, 0, 0, 2, 1.0, F_ATTN_BIAS | F_NORM_NONE},
    /* Olmo2Config: post-attention and post-feedforward norms only; q_norm/k_norm over the projections. */
    {"olmo2", 50304, 4096, 11008, 32, 32, 0, 0, 2048, false, 0, 0, 2, 1.0, F_ATTN_BIAS | F_QK_NORM_FULL},
    /* Olmo3Config: OLMo-2 with sliding_window 4096 on three layers of four. */
    {"olmo3", 50304, 4096, 11008, 32, 32, 0, 0, 2048, false, 4096, 4, 2, 1.0, F_ATTN_BIAS | F_QK_NORM_FULL},
    /* CohereConfig: vocab 256000, hidden 8192, FFN 22528, 40 layers, 64 heads, tied; one LayerNorm (weight, no
     * bias) before attention and MLP in parallel; use_qk_norm adds LayerNorms of heads x head_dim. */
    {"cohere", 256000, 8192, 22528, 40, 64, 0, 0, 8192, true, 0, 0, 1, 1.0,
     F_ATTN_BIAS | F_QK_NORM_KEY | F_PARALLEL},
    /* Cohere2Config: Cohere with sliding_window 4096 on three layers of four (sliding_window_pattern 4). */
    {"cohere2", 256000, 8192, 22528, 40, 64, 0, 128, 8192, true, 4096, 4, 1, 1.0, F_ATTN_BIAS | F_PARALLEL},
    /* SmolLM3Config: vocab 128256, hidden 2048, 36 layers, 16 heads, kv 4, 32768 positions, tied; NoPE every 4th
     * layer (no parameters); a window only with use_sliding_window. */
    {"smollm3", 128256, 2048, 11008, 36, 16, 4, 0, 32768, true, 0, 0, 2, 1.0, F_ATTN_BIAS | F_MLP_BIAS_KEY},
    /* ArceeConfig: hidden 2560, FFN 18432, 32 layers, head_dim 80 (derived), 4096 positions; ReLU^2 MLP (up,
     * down). */
    {"arcee", 32000, 2560, 18432, 32, 32, 0, 0, 4096, false, 0, 0, 2, 1.0, F_ATTN_BIAS | F_MLP_BIAS_KEY | F_PLAIN},
    /* ApertusConfig: vocab 131072, FFN 14336, 65536 positions; xIELU MLP (up, down, alpha_p, alpha_n); per-head
     * q/k norms. */
    {"apertus", 131072, 4096, 14336, 32, 32, 0, 0, 65536, false, 0, 0, 2, 1.0,
     F_ATTN_BIAS | F_PLAIN | F_XIELU | F_QK_NORM},
    /* Ernie4_5Config: vocab 103424, hidden 1024, FFN 3072, 18 layers, 16 heads, kv 2, head_dim 128, 131072
     * positions, tied; use_bias on the attention projections. */
    {"ernie4_5", 103424, 1024, 3072, 18, 16, 2, 128, 131072, true, 0, 0, 2, 1.0, F_USE_BIAS_KEY},
    /* ExaoneConfig (EXAONE 3.x): vocab 102400, FFN 14336, kv 8, 4096 positions. */
    {"exaone", 102400, 4096, 14336, 32, 32, 8, 0, 4096, false, 0, 0, 2, 1.0, F_ATTN_BIAS | F_MLP_BIAS_KEY},
    /* GlmConfig (GLM-4-9B): vocab 151552, FFN 13696, 40 layers, 32 heads, kv 2, head_dim 128, 131072 positions;
     * attention_bias on q, k, v (True); fused gate_up_proj (the same parameters); half the head rotates. */
    {"glm", 151552, 4096, 13696, 40, 32, 2, 128, 131072, false, 0, 0, 2, 0.5, F_ATTN_BIAS_QKV | F_ATTN_BIAS_ON},
    /* Glm4Config: GLM with post-attention and post-MLP norms (4 per layer). */
    {"glm4", 151552, 4096, 13696, 40, 32, 2, 128, 131072, false, 0, 0, 4, 0.5, F_ATTN_BIAS_QKV | F_ATTN_BIAS_ON},
    /* Starcoder2Config: vocab 49152, hidden 3072, FFN 12288, 30 layers, 24 heads, kv 2, 4096 positions, tied;
     * LayerNorms, GELU MLP (c_fc, c_proj), use_bias on everything; sliding_window None. */
    {"starcoder2", 49152, 3072, 12288, 30, 24, 2, 0, 4096, true, 0, 0, 2, 1.0, F_USE_BIAS | F_PLAIN | F_LAYERNORM},
    /* StableLmConfig: vocab 50304, hidden 2560, FFN 6912, 32 layers, 4096 positions; LayerNorms; use_qkv_bias;
     * a quarter of each head rotates. */
    {"stablelm", 50304, 2560, 6912, 32, 32, 0, 0, 4096, false, 0, 0, 2, 0.25, F_LAYERNORM | F_QKV_BIAS_KEY},
    /* PhiConfig (phi-2 shapes at hidden 2048): one LayerNorm per layer, attention and MLP in parallel, biases on
     * q, k, v, dense, fc1, fc2 and lm_head; half of each head rotates. */
    {"phi", 51200, 2048, 8192, 24, 32, 0, 0, 2048, false, 0, 0, 1, 0.5,
     F_USE_BIAS | F_PLAIN | F_LAYERNORM | F_LM_BIAS | F_PARALLEL | F_QK_LAYERNORM_KEY},
    /* SeedOssConfig: vocab 155136, FFN 27648, 64 layers, 80 heads, kv 8, head_dim 128, 524288 positions;
     * attention_bias (True) on q, k, v; attention_out_bias (False) on o. */
    {"seed_oss", 155136, 4096, 27648, 64, 80, 8, 128, 524288, false, 0, 0, 2, 1.0,
     F_ATTN_BIAS_QKV | F_ATTN_BIAS_ON | F_MLP_BIAS_KEY},
    /* BitNetConfig: vocab 128256, hidden 2560, FFN 6912, 30 layers, 20 heads, kv 5, 2048 positions; sub-norms
     * before o_proj and down_proj. */
    {"bitnet", 128256, 2560, 6912, 30, 20, 5, 0, 2048, false, 0, 0, 2, 1.0, F_ATTN_BIAS | F_SUB_NORM},
    /* Ministral3Config: vocab 131072, FFN 14336, 34 layers, kv 8, head_dim 128, 262144 positions; no window. */
    {"ministral3", 131072, 4096, 14336, 34, 32, 8, 128, 262144, false, 0, 0, 2, 1.0, 0},
    /* Exaone4Config (EXAONE 4.0): vocab 102400, FFN 16384, kv = heads, 2048 positions; post-attention and
     * post-feedforward norms only (2 per layer); per-head q/k norms; sliding_window 4096 on three layers of four
     * (sliding_window_pattern 4, or layer_types). */
    {"exaone4", 102400, 4096, 16384, 32, 32, 0, 0, 2048, false, 4096, 4, 2, 1.0, F_QK_NORM},
    /* NemotronConfig (Nemotron-4, Minitron): vocab 256000, hidden 6144, FFN 24576, 32 layers, 48 heads, 4096
     * positions; LayerNorm1P (weight and bias) before attention and MLP and at the end; ReLU^2 MLP (up, down);
     * attention_bias and mlp_bias (False); half of each head rotates. */
    {"nemotron", 256000, 6144, 24576, 32, 48, 0, 0, 4096, false, 0, 0, 2, 0.5,
     F_ATTN_BIAS | F_MLP_BIAS_KEY | F_PLAIN | F_LAYERNORM},
    /* HunYuanDenseV1Config (Hunyuan-7B and its smaller siblings): vocab 290943, FFN 11008, 2048 positions;
     * query_layernorm and key_layernorm (RMSNorm of head_dim) in every layer; attention_bias on q, k, v and o.
     * transformers 5.24 builds it only with head_dim given (its getattr finds the class default None); absent,
     * memplan derives hidden_size / heads as vLLM does. */
    {"hunyuan_v1_dense", 290943, 4096, 11008, 32, 32, 0, 0, 2048, false, 0, 0, 2, 1.0, F_ATTN_BIAS | F_QK_NORM},
};

static void decode_dense(hf_ctx *c, const dense_row *d, mp_model *m)
{
	unsigned f = d->f;
	bool ab, ub;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), d->vocab);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), d->hidden);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), d->inter);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers", "num_layers"), d->layers);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), d->heads);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), d->kv ? d->kv : m->num_heads);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), d->max_pos);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), d->tie);
	if (d->head_dim && !hf_has(c, "head_dim"))
		m->head_dim = d->head_dim;
	else
		hf_derive_head_dim(c, m, "num_attention_heads");
	ab = hf_get_bool(c, KEYS("attention_bias"), (f & F_ATTN_BIAS_ON) != 0);
	if (f & F_ATTN_BIAS)
		m->qkv_bias = m->o_bias = ab;
	if (f & F_ATTN_BIAS_QKV) {
		m->qkv_bias = ab;
		m->o_bias = hf_get_bool(c, KEYS("attention_out_bias"), false);
	}
	if (f & F_USE_BIAS) {
		ub = hf_get_bool(c, KEYS("use_bias"), true);
		m->qkv_bias = m->o_bias = m->mlp_bias = ub;
	}
	if (f & F_USE_BIAS_KEY)
		m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("use_bias"), false);
	if (f & F_QKV_BIAS_KEY)
		m->qkv_bias = hf_get_bool(c, KEYS("use_qkv_bias"), false);
	if (f & F_MLP_BIAS_KEY)
		m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->qk_norm = (f & F_QK_NORM) != 0;
	m->qk_norm_full = (f & F_QK_NORM_FULL) || ((f & F_QK_NORM_KEY) && hf_get_bool(c, KEYS("use_qk_norm"), false));
	m->lm_head_bias = (f & F_LM_BIAS) != 0;
	m->activation_params = (f & F_XIELU) ? 2 : 0;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = (f & F_PLAIN) ? MP_FFN_PLAIN : MP_FFN_GATED;
	m->norm_kind = (f & F_NORM_NONE) ? MP_NORM_NONE : (f & F_LAYERNORM) ? MP_NORM_LAYER : MP_NORM_RMS;
	m->norms_per_layer = d->norms;
	m->final_norm = true;
	m->parallel_block = (f & F_PARALLEL) != 0;
	if (f & F_SUB_NORM) {
		m->norms_per_layer = 3; /* input, post-attention and attn_sub_norm: all of hidden_size */
		m->ffn_sub_norm = m->intermediate_size;
	}
	if ((f & F_QK_LAYERNORM_KEY) && hf_get_bool(c, KEYS("qk_layernorm"), false))
		m->qk_norm_layer = true;
	/* the window: sliding_window (null = none); Smollm3 and the Qwen family apply it only with use_sliding_window */
	m->sliding_window = hf_window(c, "sliding_window", d->window);
	if (hf_has(c, "use_sliding_window") && !hf_get_bool(c, KEYS("use_sliding_window"), false))
		m->sliding_window = 0;
	if (m->sliding_window && d->full_every) {
		uint64_t every = hf_get_u64(c, KEYS("sliding_window_pattern"), d->full_every);

		m->sliding_window_layers = every ? m->num_layers - m->num_layers / every : m->num_layers;
	}
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, d->partial);
}

/* The rows' decoders, one per row: the table of types below points at them. */
#define DENSE(i)                                                                                                       \
	static void dense_##i(hf_ctx *c, mp_model *m)                                                                  \
	{                                                                                                              \
		decode_dense(c, &dense_types[i], m);                                                                   \
	}
DENSE(0)
DENSE(1)
DENSE(2)
DENSE(3)
DENSE(4)
DENSE(5)
DENSE(6)
DENSE(7)
DENSE(8)
DENSE(9)
DENSE(10)
DENSE(11)
DENSE(12)
DENSE(13)
DENSE(14)
DENSE(15)
DENSE(16)
DENSE(17)
DENSE(18)
DENSE(19)
DENSE(20)
DENSE(21)

/*
 * GPTJConfig: vocab 50400, n_embd 4096, n_layer 28, n_head 16, n_positions 2048, n_inner None (4 x n_embd),
 * rotary_dim 64, untied: q, k, v and out_proj without biases, one LayerNorm per layer (attention and MLP in
 * parallel), fc_in/fc_out with biases, lm_head with a bias (modeling_gptj.py).
 */
static void decode_gptj(hf_ctx *c, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50400);
	m->hidden_size = hf_get_u64(c, KEYS("n_embd", "hidden_size"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("n_layer", "num_hidden_layers"), 28);
	m->num_heads = hf_get_u64(c, KEYS("n_head", "num_attention_heads"), 16);
	m->num_kv_heads = m->num_heads;
	m->max_position_embeddings = hf_get_u64(c, KEYS("n_positions", "max_position_embeddings"), 2048);
	m->intermediate_size = hf_get_u64(c, KEYS("n_inner"), 4 * m->hidden_size);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), false);
	hf_derive_head_dim(c, m, "n_head");
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
static void decode_gpt_bigcode(hf_ctx *c, mp_model *m)
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
	hf_derive_head_dim(c, m, "n_head");
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
static void decode_mamba(hf_ctx *c, mp_model *m)
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
static void decode_mamba2(hf_ctx *c, mp_model *m)
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
static void decode_gpt_oss(hf_ctx *c, mp_model *m)
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
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts"), 128);
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
	hf_decode_layer_types(c, m);
	hf_decode_rope(c, m, 1.0);
	method = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "quant_method") : NULL;
	if (cJSON_IsString(method) && strcmp(method->valuestring, "mxfp4") == 0)
		m->checkpoint_format[MP_TC_EXPERTS] = MP_DTYPE_MXFP4;
}

const hf_type mpm_hf_more_types[] = {
    {"granite", dense_0, NULL},
    {"olmo", dense_1, NULL},
    {"olmo2", dense_2, &mpm_names_post_norms},
    {"olmo3", dense_3, &mpm_names_post_norms},
    {"cohere", dense_4, NULL},
    {"cohere2", dense_5, NULL},
    {"smollm3", dense_6, NULL},
    {"arcee", dense_7, NULL},
    {"apertus", dense_8, &mpm_names_apertus},
    {"ernie4_5", dense_9, NULL},
    {"exaone", dense_10, NULL},
    {"glm", dense_11, &mpm_names_glm},
    {"glm4", dense_12, &mpm_names_glm4},
    {"starcoder2", dense_13, &mpm_names_starcoder2},
    {"stablelm", dense_14, NULL},
    {"phi", dense_15, &mpm_names_phi},
    {"seed_oss", dense_16, NULL},
    {"bitnet", dense_17, &mpm_names_bitnet},
    {"ministral3", dense_18, NULL},
    {"exaone4", dense_19, &mpm_names_post_norms},
    {"nemotron", dense_20, NULL},
    {"hunyuan_v1_dense", dense_21, &mpm_names_hunyuan},
    {"gptj", decode_gptj, &mpm_names_gptj},
    {"gpt_bigcode", decode_gpt_bigcode, &mpm_names_gpt_bigcode},
    {"mamba", decode_mamba, &mpm_names_mamba},
    {"falcon_mamba", decode_mamba, &mpm_names_mamba},
    {"mamba2", decode_mamba2, &mpm_names_mamba},
    {"gpt_oss", decode_gpt_oss, &mpm_names_gpt_oss},
};
const size_t mpm_hf_more_count = sizeof(mpm_hf_more_types) / sizeof(mpm_hf_more_types[0]);
