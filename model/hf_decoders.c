/*
 * hf_decoders.c: dense and mixture-of-experts decoders of transformers 5.24's later text-generation types (Jais 2,
 * Aria's decoder, Kolibri-1, Flint, Laguna, ...): the Llama trunk with what each adds (per-head gates, sinks, layer
 * kinds, per-layer head counts). Every default is the configuration class's (configuration_<type>.py), every module
 * shape its modeling file's; tests/ref/hf holds what transformers builds from them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hf_internal.h"
#include "mpm_types.h"

/* A family is the Llama names with some renamed (as model/hf_names.c) */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

#define L MP_NAMES_LAYERS

/* Aria's decoder (modeling_aria.py): mlp.router, experts [E, h, 2f] and [E, f, h] without biases, shared_experts
 * with mlp_bias. */
const mp_names mpm_names_aria = {MP_NAMES_LLAMA_FIELDS,
                                 .router = {"router.weight", NULL},
                                 .experts_t = true,
                                 .experts_gate_up = {"experts.gate_up_proj", NULL},
                                 .experts_down = {"experts.down_proj", NULL},
                                 .sh_gate = {"shared_experts.gate_proj.weight", "shared_experts.gate_proj.bias"},
                                 .sh_up = {"shared_experts.up_proj.weight", "shared_experts.up_proj.bias"},
                                 .sh_down = {"shared_experts.down_proj.weight", "shared_experts.down_proj.bias"}};

/* Kolibri-1 (modeling_kolibri1.py): GLM-4's four norms per layer. */
const mp_names mpm_names_kolibri1 = {MP_NAMES_LLAMA_FIELDS,
                                     .norms = {{"input_layernorm.weight", NULL},
                                               {"post_attention_layernorm.weight", NULL},
                                               {"post_self_attn_layernorm.weight", NULL},
                                               {"post_mlp_layernorm.weight", NULL}}};

/* Laguna (modeling_laguna.py): q_proj and o_proj are the reader's (their head count differs per layer); the router's
 * e_score_correction_bias is a parameter. */
const mp_names mpm_names_laguna = {MP_NAMES_LLAMA_FIELDS,
                                   .q = {NULL, NULL},
                                   .o = {NULL, NULL},
                                   .router = {"gate.weight", "gate.e_score_correction_bias"}};

/* Mistral Large 4's decoder (modeling_mistral_large4.py): kv_a_proj_with_mqa, kv_a_layernorm and kv_b_proj differ
 * per layer and the indexer's queries come from the hidden states: the reader lists them. */
const mp_names mpm_names_mistral_large4 = {MP_NAMES_LLAMA_FIELDS, .kv_a = {NULL, NULL}, .kv_a_norm = {NULL, NULL},
                                           .kv_b = {NULL, NULL}, .ix_wq_b = {NULL, NULL}};

/* dots.llm3's decoder (modeling_dots3_note.py): its attention's widths differ per kind of layer, so the reader lists
 * every attention tensor. */
const mp_names mpm_names_dots3_note = {MP_NAMES_LLAMA_FIELDS,
                                       .q = {NULL, NULL},
                                       .q_a = {NULL, NULL},
                                       .q_a_norm = {NULL, NULL},
                                       .q_b = {NULL, NULL},
                                       .kv_a = {NULL, NULL},
                                       .kv_a_norm = {NULL, NULL},
                                       .kv_b = {NULL, NULL},
                                       .o = {NULL, NULL}};

typedef struct trunk {
	uint64_t vocab, hidden, layers, heads, kv, head_dim, max_pos;
	bool tie;
} trunk;

/* The Llama trunk: sizes, head_dim (explicit, else the row's, else hidden / heads), RMSNorm pre-norm blocks. */
static void read_trunk(hf_ctx *c, const trunk *t, mp_model *m)
{
	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), t->vocab);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), t->hidden);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), t->layers);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), t->heads);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), t->kv ? t->kv : m->num_heads);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), t->max_pos);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), t->tie);
	if (t->head_dim && !hf_has(c, "head_dim"))
		m->head_dim = t->head_dim;
	else
		hf_derive_head_dim(c, m, "num_attention_heads");
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
}

/* Marks layer i as keeping a dense MLP (mp_model.dense_layer_mask). */
static void dense_at(mp_model *m, uint64_t i)
{
	if (i < MP_MAX_LAYERS)
		m->dense_layer_mask[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* mlp_layer_types: "dense" or "sparse" per layer; absent, the leading `first` layers are dense (the class's
 * default list). */
static void mlp_kinds(hf_ctx *c, mp_model *m, uint64_t first)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_layer_types"), *v;
	uint64_t i = 0;

	if (l == NULL || cJSON_IsNull(l)) {
		for (i = 0; i < first && i < m->num_layers; i++)
			dense_at(m, i);
		return;
	}
	if (!cJSON_IsArray(l) || (uint64_t)cJSON_GetArraySize(l) != m->num_layers) {
		hf_fail_key(c, "mlp_layer_types",
		            "mlp_layer_types must list \"dense\" or \"sparse\" for each of the num_hidden_layers layers");
		return;
	}
	cJSON_ArrayForEach(v, l)
	{
		if (!cJSON_IsString(v) || (strcmp(v->valuestring, "dense") != 0 && strcmp(v->valuestring, "sparse") != 0)) {
			hf_fail_key(c, "mlp_layer_types", "mlp_layer_types entries must be \"dense\" or \"sparse\"");
			return;
		}
		if (v->valuestring[0] == 'd')
			dense_at(m, i);
		i++;
	}
}

/* Sliding layers by the class's rule when layer_types is absent: layer i is full when full(i, n). */
static void window_by_rule(hf_ctx *c, mp_model *m, bool (*full)(uint64_t i, uint64_t n))
{
	uint64_t sliding = 0;

	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"))) {
		hf_decode_layer_types(c, m);
		return;
	}
	for (uint64_t i = 0; i < m->num_layers; i++)
		sliding += !full(i, m->num_layers);
	m->sliding_window_layers = sliding;
	if (sliding == 0)
		m->sliding_window = 0;
}

/*
 * Jais2Config (modeling_jais2.py): vocab 150272, hidden 3328, FFN 26624, 32 layers, 26 heads, kv = heads, head_dim
 * hidden // heads (which must divide), 8192 positions, untied; LayerNorms with biases (input, post-attention, final),
 * attention_bias (True) on q, k, v and o, a ReLU^2 MLP of up and down with mlp_bias (True).
 */
void mpm_read_jais2(hf_ctx *c, mp_model *m)
{
	static const mpm_dense d = {.vocab_size = 150272,
	                            .hidden_size = 3328,
	                            .intermediate_size = 26624,
	                            .num_layers = 32,
	                            .num_heads = 26,
	                            .max_positions = 8192,
	                            .norms = 2,
	                            .modules = MPM_ATTENTION_BIAS | MPM_ATTENTION_BIAS_ON | MPM_PLAIN_MLP | MPM_LAYERNORM |
	                                       MPM_HEADS_DIVIDE_HIDDEN};

	mpm_read_dense(c, &d, m);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), true);
}

/*
 * AriaTextConfig (AriaTextForCausalLM, the decoder of Aria): vocab 32000, hidden 4096, 32 layers, 32 heads, kv =
 * heads, head_dim hidden / heads, 2048 positions, untied; attention_bias on q, k, v and o; every layer's MoE:
 * moe_num_experts (8) experts of intermediate_size (4096), top moe_topk (2), a router without bias, and
 * moe_num_shared_experts (2) shared experts as one MLP of intermediate_size x moe_num_shared_experts with mlp_bias
 * (AriaSharedExpertsMLP; the routed experts have none).
 */
void mpm_read_aria_text(hf_ctx *c, mp_model *m)
{
	static const trunk t = {32000, 4096, 32, 32, 0, 0, 2048, false};
	uint64_t shared;

	read_trunk(c, &t, m);
	hf_heads_divide_hidden(c, m, "num_attention_heads"); /* AriaTextConfig.validate_architecture */
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->num_experts = hf_get_u64(c, KEYS("moe_num_experts"), 8);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("moe_topk"), 2);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 4096);
	m->intermediate_size = 0;
	shared = hf_get_u64(c, KEYS("moe_num_shared_experts"), 2);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "intermediate_size");
	/* moe_num_shared_experts 0: AriaSharedExpertsMLP is still built, of width 0, and with mlp_bias its down_proj keeps
	 * a bias of hidden_size values (the only tensor of it not empty) */
	if (c->st == MP_OK && shared == 0 && m->mlp_bias)
		hf_tensor(m, MP_ROOT_DECODER, "layers.{i}.mlp", "shared_experts.down_proj.bias", MP_TK_SHARED_EXPERT,
		          MP_SPLIT_NONE, MP_STEP_NONE, true, 1, m->hidden_size, m->num_layers);
	hf_decode_rope(c, m, 1.0);
}

/* Kolibri1Config: layer i is full attention when (i + 1) % 5 == 0. */
static bool kolibri1_full(uint64_t i, uint64_t n)
{
	(void)n;
	return (i + 1) % 5 == 0;
}

/*
 * Kolibri1Config (modeling_kolibri1.py): vocab 128000, hidden 2560, 50 layers, 48 heads, kv 4, head_dim 128, 262144
 * positions, untied; per-head q_norm and k_norm; four norms per layer (GLM-4's); every layer's MoE: 384 experts
 * (num_local_experts, attribute_map num_experts) of moe_intermediate_size 512, top-6, a shared expert of
 * shared_expert_intermediate_size 512 (shared_experts), the router's e_score_correction_bias a buffer;
 * sliding_window 513 on four layers of five (layer_types).
 */
void mpm_read_kolibri1(hf_ctx *c, mp_model *m)
{
	static const trunk t = {128000, 2560, 50, 48, 4, 128, 262144, false};

	read_trunk(c, &t, m);
	m->qk_norm = true;
	m->norms_per_layer = 4;
	m->num_experts = hf_get_u64(c, KEYS("num_local_experts", "num_experts"), 384);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 6);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 512);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_expert_intermediate_size"), 512);
	m->num_shared_experts = m->shared_expert_intermediate_size > 0;
	m->intermediate_size = 0;
	m->router_correction_buffer = true;
	m->sliding_window = hf_window(c, "sliding_window", 513);
	window_by_rule(c, m, kolibri1_full);
	if (c->st == MP_OK && m->sliding_window_layers && m->sliding_window == 0)
		hf_fail_key(c, "sliding_window",
		            "sliding_window must be positive with sliding_attention layers (Kolibri1Config refuses it)");
	hf_decode_rope(c, m, 1.0);
}

/* FlintConfig: full attention on the first two layers, every fourth from layer 1 and the last. */
static bool flint_full(uint64_t i, uint64_t n)
{
	return i < 2 || i % 4 == 1 || i == n - 1;
}

/*
 * FlintConfig (modeling_flint.py): vocab 150144, hidden 2048, FFN 6144 (the mlp_only_layers, [0, 1] by default), 49
 * layers, 32 heads, kv 4, head_dim 128, 262144 positions, untied; attention_bias on q, k, v and o, per-head q_norm
 * and k_norm, a sink logit per head; the other layers (every decoder_sparse_step-th) hold 256 experts (num_experts)
 * of moe_intermediate_size 512, top-6, and Qwen's shared_expert of shared_expert_intermediate_size 1024 without a
 * gate; sliding_window 513 where layer_types (or the class's rule) says.
 */
void mpm_read_flint(hf_ctx *c, mp_model *m)
{
	static const trunk t = {150144, 2048, 49, 32, 4, 128, 262144, false};

	read_trunk(c, &t, m);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->attention_sinks = true;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 6144);
	m->num_experts = hf_get_u64(c, KEYS("num_experts"), 256);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 6);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 512);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_expert_intermediate_size"), 1024);
	m->num_shared_experts = m->shared_expert_intermediate_size > 0;
	m->moe_layer_step = hf_get_u64(c, KEYS("decoder_sparse_step"), 1);
	if (cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_only_layers") == NULL) {
		dense_at(m, 0);
		dense_at(m, 1);
	} else {
		hf_decode_mlp_only_layers(c, m);
	}
	m->sliding_window = hf_window(c, "sliding_window", 513);
	window_by_rule(c, m, flint_full);
	hf_decode_rope(c, m, 1.0);
}

/* `gating` of the gated attentions whose g_proj gives a sigmoid gate per head or per value (LagunaAttention,
 * Step3p7Attention: `config.gating is True or config.gating == "per-head"`): true (the classes' default) per head,
 * any other string or false per value; another type is a 422 naming it. */
static bool gate_per_head(hf_ctx *c)
{
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(c->cfg, "gating");

	if (g == NULL || cJSON_IsNull(g) || cJSON_IsTrue(g))
		return true;
	if (cJSON_IsString(g))
		return strcmp(g->valuestring, "per-head") == 0;
	if (!cJSON_IsBool(g))
		hf_fail_key(c, "gating", "gating must be a boolean or \"per-head\"");
	return false;
}

/*
 * The attention projections whose width follows each layer's query heads (heads[i] for layer i of m->num_layers):
 * q_proj (hidden -> heads x head_dim, with attention_bias a bias), o_proj (back, its bias) and the gate g_proj (hidden ->
 * heads, or heads x head_dim when the gate is per value), one inventory entry per distinct head count. K and V keep
 * num_key_value_heads in every layer (so does the KV cache). Errors: more than 8 distinct counts (a 422 naming key).
 */
static void per_layer_heads(hf_ctx *c, mp_model *m, const uint64_t *heads, bool per_head, bool bias, const char *key)
{
	uint64_t groups[8][2], ngroups = 0;
	const char *a = L ".self_attn";

	for (uint64_t i = 0; i < m->num_layers && c->st == MP_OK; i++) {
		uint64_t k = 0;

		while (k < ngroups && groups[k][0] != heads[i])
			k++;
		if (k == ngroups) {
			if (ngroups == 8) {
				hf_fail_key(c, key, "at most 8 distinct head counts are planned (memplan lists one tensor per width)");
				return;
			}
			groups[ngroups][0] = heads[i];
			groups[ngroups++][1] = 0;
		}
		groups[k][1]++;
	}
	for (uint64_t k = 0; k < ngroups && c->st == MP_OK; k++) {
		uint64_t q = hf_mul(c, groups[k][0], m->head_dim, "head_dim"), n = groups[k][1];

		hf_tensor(m, MP_ROOT_DECODER, a, "q_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, false, q,
		          m->hidden_size, n);
		if (bias)
			hf_tensor(m, MP_ROOT_DECODER, a, "q_proj.bias", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1, q,
			          n);
		hf_tensor(m, MP_ROOT_DECODER, a, "o_proj.weight", MP_TK_ATTENTION, MP_SPLIT_COLS, MP_STEP_O, false,
		          m->hidden_size, q, n);
		if (bias)
			hf_tensor(m, MP_ROOT_DECODER, a, "o_proj.bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, true, 1,
			          m->hidden_size, n);
		hf_tensor(m, MP_ROOT_DECODER, a, "g_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, false,
		          per_head ? groups[k][0] : q, m->hidden_size, n);
	}
}

/*
 * LagunaConfig (modeling_laguna.py): vocab 100352, hidden 2048, FFN 8192 (the "dense" layers of mlp_layer_types:
 * layer 0 by default), 40 layers, 48 heads (num_attention_heads_per_layer may differ per layer), kv 8, head_dim 128,
 * 131072 positions, untied; attention_bias on q, k, v and o, per-head q_norm and k_norm, g_proj (hidden -> the
 * layer's heads, or heads x head_dim when gating is "per-element"; softplus gate on the attention output); the
 * "sparse" layers hold 256 experts (num_experts) of 512, top-8, the router's e_score_correction_bias (a parameter),
 * and shared_experts of shared_expert_intermediate_size 512; sliding_window 512 on the sliding_attention layers of
 * layer_types (none by default). The KV cache is the config's kv heads in every layer whatever the query heads.
 */
void mpm_read_laguna(hf_ctx *c, mp_model *m)
{
	static const trunk t = {100352, 2048, 40, 48, 8, 128, 131072, false};
	const cJSON *hl, *v;
	uint64_t heads[MP_MAX_LAYERS];
	bool per_head, bias;

	read_trunk(c, &t, m);
	bias = m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 8192);
	m->num_experts = hf_get_u64(c, KEYS("num_experts"), 256);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 512);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("shared_expert_intermediate_size"), 512);
	m->num_shared_experts = m->shared_expert_intermediate_size > 0;
	m->router_bias = true;
	if (c->st != MP_OK || m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS)
		return;
	mlp_kinds(c, m, 1);
	m->sliding_window = hf_window(c, "sliding_window", 512);
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types")))
		hf_decode_layer_types(c, m);
	else
		m->sliding_window = 0; /* LagunaConfig: every layer full_attention unless layer_types says */
	per_head = gate_per_head(c);
	/* the query heads of each layer: num_attention_heads_per_layer, else num_attention_heads everywhere */
	hl = cJSON_GetObjectItemCaseSensitive(c->cfg, "num_attention_heads_per_layer");
	for (uint64_t i = 0; i < m->num_layers; i++)
		heads[i] = m->num_heads;
	if (hl && !cJSON_IsNull(hl)) {
		uint64_t i = 0;

		if (!cJSON_IsArray(hl) || (uint64_t)cJSON_GetArraySize(hl) != m->num_layers) {
			hf_fail_key(c, "num_attention_heads_per_layer",
			            "num_attention_heads_per_layer must give the query heads of each of the num_hidden_layers "
			            "layers (LagunaConfig refuses another length)");
			return;
		}
		cJSON_ArrayForEach(v, hl)
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65536 ||
			    v->valuedouble != (double)(uint64_t)v->valuedouble ||
			    (m->num_kv_heads && (uint64_t)v->valuedouble % m->num_kv_heads != 0)) {
				hf_fail_key(c, "num_attention_heads_per_layer",
				            "each entry must be a whole multiple of num_key_value_heads, at most 65536");
				return;
			}
			heads[i++] = (uint64_t)v->valuedouble;
		}
	}
	per_layer_heads(c, m, heads, per_head, bias, "num_attention_heads_per_layer");
	hf_decode_rope(c, m, 1.0);
}

/* Step 3.5's decoder (Step3p7TextConfig, model_type "step3p5"; modeling_step3p7.py): q_proj, o_proj and g_proj are the
 * reader's (the sliding layers' head count may differ); the router's e_score_correction_bias is a buffer. */
const mp_names mpm_names_step3p5 = {MP_NAMES_LLAMA_FIELDS, .q = {NULL, NULL}, .o = {NULL, NULL}};

/* A per-layer list of the Step 3.5 config: one entry per layer, or one per layer and per MTP layer (the checkpoint's
 * padded form, which Step3p7TextConfig cuts to the first num_hidden_layers). NULL when absent; NULL and a 422 naming
 * key when it is not a list of that length. */
static const cJSON *step3p5_list(hf_ctx *c, const char *key, uint64_t n, uint64_t mtp)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, key);
	uint64_t len;

	if (l == NULL || cJSON_IsNull(l))
		return NULL;
	len = cJSON_IsArray(l) ? (uint64_t)cJSON_GetArraySize(l) : 0;
	if (!cJSON_IsArray(l) || (len != n && (mtp == 0 || len != n + mtp))) {
		char msg[160];

		snprintf(msg, sizeof(msg), "%s must have one entry per layer (num_hidden_layers), or per layer and MTP layer "
		                           "(num_hidden_layers + num_nextn_predict_layers)", key);
		hf_fail_key(c, key, msg);
		return NULL;
	}
	return l;
}

/* moe_layers_enum (Step3p7TextConfig's legacy key): the MoE layers' indices, a comma-separated string or a list; the
 * others keep a dense MLP. False (and a 422) when an entry is not an index. */
static bool step3p5_moe_enum(hf_ctx *c, const cJSON *e, mp_model *m)
{
	uint8_t moe[MP_MAX_LAYERS / 8] = {0};
	const cJSON *v;

	if (cJSON_IsString(e)) {
		const char *s = e->valuestring;

		while (*s) {
			char *end;
			unsigned long long i;

			while (*s == ' ' || *s == ',')
				s++;
			if (*s == '\0')
				break;
			i = strtoull(s, &end, 10);
			if (end == s || (*end && *end != ',' && *end != ' '))
				goto bad;
			if (i < m->num_layers)
				moe[i / 8] |= (uint8_t)(1u << (i % 8));
			s = end;
		}
	} else if (cJSON_IsArray(e)) {
		cJSON_ArrayForEach(v, e)
		{
			if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != (double)(uint64_t)v->valuedouble)
				goto bad;
			if (v->valuedouble < (double)m->num_layers)
				moe[(uint64_t)v->valuedouble / 8] |= (uint8_t)(1u << ((uint64_t)v->valuedouble % 8));
		}
	} else {
		goto bad;
	}
	for (uint64_t i = 0; i < m->num_layers; i++)
		if (!(moe[i / 8] & (1u << (i % 8))))
			dense_at(m, i);
	return true;
bad:
	hf_fail_key(c, "moe_layers_enum", "moe_layers_enum must list the MoE layers' indices (\"3,4,5\" or [3, 4, 5])");
	return false;
}

/* per_layer_config of a Step 3.5 config: {"<layer>": {"num_attention_heads": h}} sets layer's query heads (the one
 * override Step3p7TextConfig makes; another key is refused, a 422 naming it). */
static void step3p5_overrides(hf_ctx *c, const cJSON *plc, mp_model *m, uint64_t *heads)
{
	const cJSON *e, *v;

	if (!cJSON_IsObject(plc)) {
		hf_fail_key(c, "per_layer_config", "per_layer_config must be an object of layer index -> "
		                                   "{\"num_attention_heads\": heads}");
		return;
	}
	cJSON_ArrayForEach(e, plc)
	{
		char *end;
		unsigned long long i = strtoull(e->string, &end, 10);

		if (e->string[0] < '0' || e->string[0] > '9' || *end || i >= m->num_layers || !cJSON_IsObject(e)) {
			hf_fail_key(c, "per_layer_config", "per_layer_config keys must be layer indices below num_hidden_layers, "
			                                   "each an object of overrides");
			return;
		}
		cJSON_ArrayForEach(v, e)
		{
			if (strcmp(v->string, "num_attention_heads") != 0) {
				hf_fail_key(c, "per_layer_config", "memplan plans per_layer_config's num_attention_heads only (the "
				                                   "override Step3p7TextConfig makes for its sliding layers)");
				return;
			}
			if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 65536 ||
			    v->valuedouble != (double)(uint64_t)v->valuedouble) {
				hf_fail_key(c, "per_layer_config", "num_attention_heads overrides must be whole numbers from 1 to 65536");
				return;
			}
			heads[i] = (uint64_t)v->valuedouble;
		}
	}
}

/*
 * Step3p7TextConfig (model_type "step3p5", the decoder of Step-3.7-Flash; modeling_step3p7.py Step3p7TextModel):
 * vocab 128815, hidden 4096, FFN 11264 (the "dense" layers of mlp_layer_types: by default layers 0-2, or those
 * moe_layers_enum leaves out), 45 layers, 64 heads, num_key_value_heads 8 (num_attention_groups), head_dim 128, 128000
 * positions, untied. Step3p7Attention: attention_bias on q, k, v and o, per-head q_norm and k_norm, g_proj (hidden ->
 * the layer's heads, or heads x head_dim when gating is not per head) gating the attention output; the
 * sliding_attention layers of layer_types hold the window sliding_window (None by default) and
 * num_sliding_attention_heads query heads (attention_other_setting's num_attention_heads; per_layer_config when the
 * config states it). The "sparse" layers (Step3p7SparseMoeBlock): n_routed_experts (moe_num_experts; the class's
 * num_local_experts is an attribute_map alias its own default overwrites) 288 of moe_intermediate_size 1280 without
 * biases, top num_experts_per_tok (moe_top_k) 8, the sigmoid router with its e_score_correction_bias buffer, and
 * shared_experts of share_expert_dim 1280 with mlp_bias as the dense MLP. Lists padded with the
 * num_nextn_predict_layers MTP layers are cut to the decoder's layers (the MTP layers are not built). Where a key and
 * its attribute_map alias are both given, the alias wins (PreTrainedConfig sets it last). KV cache: every
 * layer's num_key_value_heads x head_dim, the sliding ones over the window. A null sliding_window (the class default)
 * is a 422: the forward fails without one. Worked example (tests/ref/hf, step3p7-window-variant): Step3p7Config's
 * defaults with a window of 512 on three layers of four, the sliding ones of 96 heads: 198,936,469,504 parameters
 * (1,981,014,784 of them the tower), as transformers counts.
 */
void mpm_read_step3p5(hf_ctx *c, mp_model *m)
{
	static const trunk t = {128815, 4096, 45, 64, 8, 128, 128000, false};
	const cJSON *lt, *ml, *v, *other;
	uint64_t heads[MP_MAX_LAYERS], mtp, sliding_heads, n = 0;
	bool sliding[MP_MAX_LAYERS] = {false};

	read_trunk(c, &t, m);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_attention_groups", "num_key_value_heads"), 8);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 11264);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->routed_bias = MP_BIAS_OFF;
	m->num_experts = hf_get_u64(c, KEYS("moe_num_experts", "n_routed_experts"), 288);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("moe_top_k", "num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1280);
	m->shared_expert_intermediate_size = hf_get_u64(c, KEYS("share_expert_dims", "share_expert_dim"), 1280);
	m->num_shared_experts = 1;
	m->router_correction_buffer = true;
	mtp = hf_get_u64(c, KEYS("num_mtp_layers", "num_nextn_predict_layers"), 0);
	if (c->st != MP_OK || m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS)
		return;
	ml = step3p5_list(c, "mlp_layer_types", m->num_layers, mtp);
	if (ml) {
		uint64_t i = 0;

		cJSON_ArrayForEach(v, ml)
		{
			if (!cJSON_IsString(v) || (strcmp(v->valuestring, "dense") != 0 && strcmp(v->valuestring, "sparse") != 0)) {
				hf_fail_key(c, "mlp_layer_types", "mlp_layer_types entries must be \"dense\" or \"sparse\"");
				return;
			}
			if (i < m->num_layers && v->valuestring[0] == 'd')
				dense_at(m, i);
			i++;
		}
	} else if (c->st == MP_OK && hf_has(c, "moe_layers_enum")) {
		if (!step3p5_moe_enum(c, cJSON_GetObjectItemCaseSensitive(c->cfg, "moe_layers_enum"), m))
			return;
	} else {
		for (uint64_t i = 0; i < 3 && i < m->num_layers; i++)
			dense_at(m, i);
	}
	m->sliding_window = hf_window(c, "sliding_window", 0);
	lt = step3p5_list(c, "layer_types", m->num_layers, mtp);
	if (lt) {
		cJSON_ArrayForEach(v, lt)
		{
			if (!cJSON_IsString(v) || (strcmp(v->valuestring, "sliding_attention") != 0 &&
			                           strcmp(v->valuestring, "full_attention") != 0)) {
				hf_fail_key(c, "layer_types", "layer_types entries must be \"sliding_attention\" or \"full_attention\"");
				return;
			}
			if (n < m->num_layers)
				sliding[n] = v->valuestring[0] == 's';
			m->sliding_window_layers += n < m->num_layers && sliding[n];
			n++;
		}
	}
	if (c->st != MP_OK)
		return;
	if (m->sliding_window == 0) {
		/* Step3p7TextModel.forward builds the sliding_attention mask whatever layer_types says, and
		 * create_sliding_window_causal_mask raises without a window */
		hf_fail_key(c, "sliding_window", "sliding_window must be set (a number of tokens): transformers 5.24's "
		                                 "Step3p7TextModel builds a sliding-window mask in every forward and fails "
		                                 "without one, even when no layer slides (Step3p7TextConfig's default is null)");
		return;
	}
	if (m->sliding_window_layers == 0)
		m->sliding_window = 0;
	other = cJSON_GetObjectItemCaseSensitive(c->cfg, "attention_other_setting");
	sliding_heads = m->num_heads;
	if (hf_has(c, "num_sliding_attention_heads"))
		sliding_heads = hf_get_u64(c, KEYS("num_sliding_attention_heads"), m->num_heads);
	else if (cJSON_IsObject(other) && cJSON_GetObjectItemCaseSensitive(other, "num_attention_heads")) {
		hf_ctx o = {other, c->pointer, c->err, c->st, NULL, NULL, c->decode_type};

		sliding_heads = hf_get_u64(&o, KEYS("num_attention_heads"), m->num_heads);
		c->st = o.st;
	}
	for (uint64_t i = 0; i < m->num_layers; i++)
		heads[i] = sliding[i] && !hf_has(c, "per_layer_config") ? sliding_heads : m->num_heads;
	if (hf_has(c, "per_layer_config"))
		step3p5_overrides(c, cJSON_GetObjectItemCaseSensitive(c->cfg, "per_layer_config"), m, heads);
	for (uint64_t i = 0; i < m->num_layers && c->st == MP_OK; i++)
		if (heads[i] != m->num_heads && (heads[i] == 0 || (m->num_kv_heads && heads[i] % m->num_kv_heads != 0)))
			hf_fail_key(c, hf_has(c, "per_layer_config") ? "per_layer_config" : "num_sliding_attention_heads",
			            "every layer's query heads must be a whole multiple of num_key_value_heads (the sliding "
			            "layers' too)");
	per_layer_heads(c, m, heads, gate_per_head(c), m->qkv_bias, "per_layer_config");
	hf_decode_rope(c, m, 1.0);
	/* Step3p7RotaryEmbedding: one inv_freq pair per layer type present */
	m->rotary_buffer_sets = (m->sliding_window_layers > 0) + (m->sliding_window_layers < m->num_layers);
}

/* AFMoE (modeling_afmoe.py): four norms per layer, the router's gate under mlp.router and its expert_bias (an fp32
 * parameter) on the MoE block. */
const mp_names mpm_names_afmoe = {MP_NAMES_LLAMA_FIELDS,
                                  .router = {"router.gate.weight", "expert_bias"},
                                  .norms = {{"input_layernorm.weight", NULL},
                                            {"post_attention_layernorm.weight", NULL},
                                            {"pre_mlp_layernorm.weight", NULL},
                                            {"post_mlp_layernorm.weight", NULL}}};

/*
 * AfmoeConfig (modeling_afmoe.py): vocab 200192, hidden 2048, FFN 6144 (the first num_dense_layers, 1), 32 layers,
 * 16 heads, kv = heads, head_dim 128, 16384 positions, untied; attention_bias on q, k, v and o, per-head q_norm and
 * k_norm, gate_proj (hidden -> heads x head_dim, the attention output's sigmoid gate); four norms per layer; the MoE
 * layers: 64 experts (num_experts) of moe_intermediate_size 1408, top-6, num_shared_experts (2) as one MLP, the
 * router's expert_bias a parameter; sliding_window 1024 on the layers that are not every
 * global_attn_every_n_layers-th (layer_types).
 */
void mpm_read_afmoe(hf_ctx *c, mp_model *m)
{
	static const trunk t = {200192, 2048, 32, 16, 0, 128, 16384, false};
	uint64_t dense, every, sliding = 0, shared;

	read_trunk(c, &t, m);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->norms_per_layer = 4;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 6144);
	m->num_experts = hf_get_u64(c, KEYS("num_experts"), 64);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 6);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 1408);
	shared = hf_get_u64(c, KEYS("num_shared_experts"), 2);
	m->num_shared_experts = shared;
	m->shared_expert_intermediate_size = hf_mul(c, shared, m->moe_intermediate_size, "moe_intermediate_size");
	m->router_bias = true;
	dense = hf_get_u64(c, KEYS("num_dense_layers"), 1);
	m->first_dense_layers = dense < m->num_layers ? dense : m->num_layers;
	m->sliding_window = hf_window(c, "sliding_window", 1024);
	every = hf_get_u64(c, KEYS("global_attn_every_n_layers"), 4);
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"))) {
		hf_decode_layer_types(c, m);
	} else if (c->st == MP_OK && every == 0) {
		hf_fail_key(c, "global_attn_every_n_layers", "global_attn_every_n_layers must be at least 1");
	} else {
		for (uint64_t i = 0; i < m->num_layers; i++)
			sliding += (i + 1) % every != 0;
		m->sliding_window_layers = sliding;
		if (sliding == 0)
			m->sliding_window = 0;
	}
	if (c->st != MP_OK)
		return;
	hf_tensor(m, MP_ROOT_DECODER, L ".self_attn", "gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, false,
	          hf_mul(c, m->num_heads, m->head_dim, "head_dim"), m->hidden_size, m->num_layers);
	hf_decode_rope(c, m, 1.0);
}

/*
 * AXK1Config (A.X K1; modeling_axk1.py): DeepSeek-V3's MLA and experts (mpm_read_mla's row: vocab 163840, hidden
 * 7168, FFN 18432, 61 layers, 64 heads, q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128; 192
 * routed experts of 2048, top-8, one shared; mlp_layer_types with layer 0 dense; the correction bias a buffer), and on
 * each MoE block a post_mlp_layernorm of hidden_size.
 */
void mpm_read_axk1(hf_ctx *c, mp_model *m)
{
	uint64_t moe = 0;

	mpm_read_mla(c, m);
	if (c->st != MP_OK)
		return;
	for (uint64_t i = 0; i < m->num_layers; i++)
		moe += mp_model_is_moe_layer(m, i);
	hf_tensor(m, MP_ROOT_DECODER, L ".mlp", "post_mlp_layernorm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true,
	          1, m->hidden_size, moe);
}

/* BeamConfig: every sixth layer full attention, and the last one. */
static bool beam_full(uint64_t i, uint64_t n)
{
	return (i + 1) % 6 == 0 || i == n - 1;
}

/*
 * BeamConfig (modeling_beam.py): vocab 151936, hidden 5120, FFN 20480 (the "dense" layers of mlp_layer_types: the
 * first min(3, layers) by default), 52 layers, 48 heads, kv 8, head_dim 128, 8192 positions, untied; attention_bias
 * on q, k, v and o, per-head q_norm and k_norm, gate_proj (hidden -> heads x head_dim) and gate_bias (one per head)
 * gating the attention output; Gemma's four norms per layer; the "sparse" layers hold 256 experts (num_experts) of
 * moe_intermediate_size 2560, top-8, the router's e_score_correction_bias a buffer, no shared expert; sliding_window
 * 512 on five layers of six (the last layer full; or layer_types); no RoPE on the full layers (no parameters).
 */
void mpm_read_beam(hf_ctx *c, mp_model *m)
{
	static const trunk t = {151936, 5120, 52, 48, 8, 128, 8192, false};

	read_trunk(c, &t, m);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->qk_norm = true;
	m->norms_per_layer = 4;
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 20480);
	m->num_experts = hf_get_u64(c, KEYS("num_experts"), 256);
	m->num_experts_per_tok = hf_get_u64(c, KEYS("num_experts_per_tok"), 8);
	m->moe_intermediate_size = hf_get_u64(c, KEYS("moe_intermediate_size"), 2560);
	m->router_correction_buffer = true;
	mlp_kinds(c, m, m->num_layers < 3 ? m->num_layers : 3);
	m->sliding_window = hf_window(c, "sliding_window", 512);
	window_by_rule(c, m, beam_full);
	if (c->st != MP_OK)
		return;
	hf_tensor(m, MP_ROOT_DECODER, L ".self_attn", "gate_proj.weight", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_QKV, false,
	          hf_mul(c, m->num_heads, m->head_dim, "head_dim"), m->hidden_size, m->num_layers);
	hf_tensor(m, MP_ROOT_DECODER, L ".self_attn", "gate_bias", MP_TK_ATTENTION, MP_SPLIT_ROWS, MP_STEP_NONE, true, 1,
	          m->num_heads, m->num_layers);
	hf_decode_rope(c, m, 1.0);
}

/*
 * CohereCompassTextConfig (CohereLabs' North decoders; configuration_cohere_compass.py, modeling_cohere_compass.py):
 * vocab 256000, hidden 8192, FFN 22528, 40 layers, 64 heads, kv = heads unless given, 8192 positions, tied; head_dim
 * a head_dim key, else hidden_size // num_attention_heads (floored: the heads need not divide); attention_bias on q, k, v
 * and o; Cohere's parallel block (one input_layernorm, attention and MLP side by side), LayerNorms of a weight only;
 * every layer full_attention unless layer_types says, a sliding layer over sliding_window (4096). Its rotary module
 * reads rope_parameters[layer_type] for every layer type present, so rope_parameters must be keyed by them (the
 * class's default, a flat rope_parameters, fails in transformers 5.24 with KeyError 'full_attention': a 422 naming
 * rope_parameters); a layer type mapped to null has no RoPE. Worked example (the default with rope_parameters
 * {"full_attention": {...}}): 34,980,831,232 parameters (tests/ref/hf/groundtruth.json
 * cohere-compass-text-rope-variant).
 */
void mpm_read_cohere_compass_text(hf_ctx *c, mp_model *m)
{
	const cJSON *rp = cJSON_GetObjectItemCaseSensitive(c->cfg, "rope_parameters");
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	bool full = true, sliding = false;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 256000);
	m->hidden_size = hf_get_u64(c, KEYS("hidden_size"), 8192);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 22528);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 40);
	m->num_heads = hf_get_u64(c, KEYS("num_attention_heads"), 64);
	m->num_kv_heads = hf_get_u64(c, KEYS("num_key_value_heads"), m->num_heads);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 8192);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->sliding_window = hf_window(c, "sliding_window", 4096);
	if (c->st != MP_OK)
		return;
	if (m->num_heads == 0 || m->hidden_size < m->num_heads) {
		hf_fail_key(c, "num_attention_heads",
		            "num_attention_heads must be between 1 and hidden_size (head_dim is hidden_size // heads)");
		return;
	}
	/* __post_init__ sets head_dim = hidden_size // heads (floored), then a head_dim key (not a field: one of the
	 * kwargs PreTrainedConfig sets after) overrides it */
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), m->hidden_size / m->num_heads);
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS; /* CohereCompassLayerNorm: a weight, no bias */
	m->norms_per_layer = 1;
	m->final_norm = true;
	m->parallel_block = true;
	if (lt && !cJSON_IsNull(lt)) {
		hf_decode_layer_types(c, m);
		if (c->st != MP_OK)
			return;
		full = false;
		cJSON_ArrayForEach(v, lt)
		{
			full |= v->valuestring[0] == 'f';
			sliding |= v->valuestring[0] == 's';
		}
	} else {
		m->sliding_window = 0;
	}
	/* rope_parameters keyed by every layer type present (an object or null each) */
	if (!cJSON_IsObject(rp) || (full && !cJSON_GetObjectItemCaseSensitive(rp, "full_attention")) ||
	    (sliding && !cJSON_GetObjectItemCaseSensitive(rp, "sliding_attention"))) {
		hf_fail_key(c, "rope_parameters",
		            "rope_parameters must give each layer type of layer_types its own entry ({\"full_attention\": "
		            "{\"rope_type\": \"default\", \"rope_theta\": ...}}, or null for no RoPE): transformers 5.24's "
		            "CohereCompassRotaryEmbedding reads rope_parameters[layer_type] and fails with KeyError on a "
		            "flat one, the class's default");
		return;
	}
	hf_decode_rope(c, m, 1.0);
	m->rotary_buffer_sets = (uint32_t)(full + sliding);
}

/* ModernBERT's decoder (modeling_modernbert_decoder.py): embeddings.tok_embeddings, layers.{i}.attn (q_proj, k_proj,
 * v_proj, Wo), mlp (Wi: gate and up in one, Wo), mlp_norm, final_norm, the head `decoder` at the top (the reader lists
 * embeddings.norm, the layers' attn_norm and the prediction head lm_head.dense and lm_head.norm). */
const mp_names mpm_names_modernbert_decoder = {MP_NAMES_LLAMA_FIELDS,
                                              .embed = {"embeddings.tok_embeddings.weight", NULL},
                                              .final_norm = {"final_norm.weight", "final_norm.bias"},
                                              .lm_head = {"decoder.weight", "decoder.bias"},
                                              .attn = MP_NAMES_LAYERS ".attn",
                                              .o = {"Wo.weight", "Wo.bias"},
                                              .gate_up = {"Wi.weight", "Wi.bias"},
                                              .down = {"Wo.weight", "Wo.bias"},
                                              .norms = {{"mlp_norm.weight", "mlp_norm.bias"}}};

/*
 * ModernBertDecoderConfig (configuration_modernbert_decoder.py): vocab 50368, hidden 768, FFN 1152 (Wi projects to
 * twice it, a GLU), 22 layers, 12 heads (MHA, head_dim hidden / heads, which they must divide), 8192 positions, tied,
 * attention_bias, mlp_bias and norm_bias False (LayerNorms without a bias), decoder_bias True, classifier_bias False;
 * layer_types absent: layer i is full when i % global_attn_every_n_layers (3) == 0, else sliding; the window is
 * local_attention // 2 (local_attention 128: 64 tokens; the class sets sliding_window from it whatever a config says).
 * Modules: embeddings.norm after the token embedding, attn_norm on every layer but the first (nn.Identity), mlp_norm,
 * final_norm; the head is ModernBertDecoderPredictionHead (lm_head.dense hidden x hidden with classifier_bias, then
 * lm_head.norm) and `decoder` (tied to the embedding, its bias with decoder_bias). Worked example (the defaults):
 * 149,655,232 parameters.
 */
void mpm_read_modernbert_decoder(hf_ctx *c, mp_model *m)
{
	uint64_t h, every, local, layers;
	bool nb, cb;
	const uint8_t D = MP_ROOT_DECODER;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 50368);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 768);
	m->intermediate_size = hf_get_u64(c, KEYS("intermediate_size"), 1152);
	m->num_layers = layers = hf_get_u64(c, KEYS("num_hidden_layers"), 22);
	m->num_heads = m->num_kv_heads = hf_get_u64(c, KEYS("num_attention_heads"), 12);
	m->max_position_embeddings = hf_get_u64(c, KEYS("max_position_embeddings"), 8192);
	m->tie_word_embeddings = hf_get_bool(c, KEYS("tie_word_embeddings"), true);
	m->qkv_bias = m->o_bias = hf_get_bool(c, KEYS("attention_bias"), false);
	m->mlp_bias = hf_get_bool(c, KEYS("mlp_bias"), false);
	m->lm_head_bias = hf_get_bool(c, KEYS("decoder_bias"), true);
	nb = hf_get_bool(c, KEYS("norm_bias"), false);
	cb = hf_get_bool(c, KEYS("classifier_bias"), false);
	every = hf_get_u64(c, KEYS("global_attn_every_n_layers"), 3);
	local = hf_is_null(c, "local_attention") ? 0 : hf_get_u64(c, KEYS("local_attention"), 128);
	if (c->st != MP_OK)
		return;
	if (m->num_heads == 0 || h % m->num_heads) {
		/* ModernBertDecoderAttention refuses it */
		hf_fail_key(c, "num_attention_heads", "hidden_size must be a multiple of num_attention_heads");
		return;
	}
	if (layers == 0 || layers > MP_MAX_LAYERS || every == 0) {
		hf_fail_key(c, layers == 0 || layers > MP_MAX_LAYERS ? "num_hidden_layers" : "global_attn_every_n_layers",
		            "num_hidden_layers must be between 1 and 1024, global_attn_every_n_layers at least 1");
		return;
	}
	m->head_dim = h / m->num_heads;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = nb ? MP_NORM_LAYER : MP_NORM_RMS; /* a LayerNorm without a bias has a weight only */
	m->norms_per_layer = 1;
	m->final_norm = true;
	m->sliding_window = local / 2;
	if (hf_has(c, "layer_types")) {
		hf_decode_layer_types(c, m);
	} else {
		uint64_t sliding = 0;

		for (uint64_t i = 0; i < layers; i++)
			sliding += i % every != 0;
		if (sliding && m->sliding_window == 0) {
			hf_fail_key(c, "local_attention", "local_attention must be at least 2 tokens (the window is "
			                                  "local_attention // 2) when some layers slide");
			return;
		}
		m->sliding_window_layers = sliding;
		if (sliding == 0)
			m->sliding_window = 0;
	}
	if (c->st != MP_OK)
		return;
	hf_tensor(m, D, "embeddings.norm", "weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	if (nb)
		hf_tensor(m, D, "embeddings.norm", "bias", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	if (layers > 1) {
		hf_tensor(m, D, "layers.{i}", "attn_norm.weight", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, layers - 1);
		if (nb)
			hf_tensor(m, D, "layers.{i}", "attn_norm.bias", MP_TK_NORM, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h,
			          layers - 1);
	}
	{
		const uint8_t top = MP_ROOT_TOP;

		hf_tensor(m, top, "lm_head", "dense.weight", MP_TK_LM_HEAD, MP_SPLIT_NONE, MP_STEP_EXTRA, false, h, h, 1);
		if (cb)
			hf_tensor(m, top, "lm_head", "dense.bias", MP_TK_LM_HEAD, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		hf_tensor(m, top, "lm_head", "norm.weight", MP_TK_LM_HEAD, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
		if (nb)
			hf_tensor(m, top, "lm_head", "norm.bias", MP_TK_LM_HEAD, MP_SPLIT_NONE, MP_STEP_NONE, true, 1, h, 1);
	}
	hf_decode_rope(c, m, 1.0);
	m->rotary_buffer_sets = 2;
}

/* CPM-Ant (modeling_cpmant.py): cpmant.encoder.layers.{i} with self_att.layernorm_before_attention and
 * self_att.self_attention.project_q, project_k, project_v, attention_out; ffn.layernorm_before_ffn and
 * ffn.ffn.w_in.w_0 (gate), w_in.w_1 (up), w_out; encoder.output_layernorm; the embeddings and the position bias are
 * the reader's, the lm_head at the top. */
const mp_names mpm_names_cpmant = {MP_NAMES_LLAMA_FIELDS,
                                   .root = "cpmant.",
                                   .embed = {NULL, NULL},
                                   .final_norm = {"encoder.output_layernorm.weight", NULL},
                                   .layer = "encoder.layers.{i}",
                                   .attn = "encoder.layers.{i}.self_att.self_attention",
                                   .q = {"project_q.weight", NULL},
                                   .k = {"project_k.weight", NULL},
                                   .v = {"project_v.weight", NULL},
                                   .o = {"attention_out.weight", NULL},
                                   .mlp = "encoder.layers.{i}.ffn.ffn",
                                   .gate = {"w_in.w_0.weight", NULL},
                                   .up = {"w_in.w_1.weight", NULL},
                                   .down = {"w_out.weight", NULL},
                                   .norms = {{"self_att.layernorm_before_attention.weight", NULL},
                                             {"ffn.layernorm_before_ffn.weight", NULL}}};

/*
 * CpmAntConfig (CPM-Ant, configuration_cpmant.py): vocab 30720, hidden 4096, 48 layers, 32 heads of dim_head 128 (MHA),
 * dim_ff 10240 (a gated GELU: w_0 and w_1, then w_out), no biases, weight-only layer norms; input_embedding of vocab +
 * prompt_types (32) x prompt_length (32) rows, segment_embedding of segment_types (32) rows, the relative position
 * bias (segment_types^2 + position_bias_num_buckets 512 rows of heads), no RoPE and no position limit; an lm_head of
 * its own (CpmAntForCausalLM ties nothing: its head has vocab rows, the input embedding more). CpmAntModel.forward
 * puts prompt_length prompt tokens before every sequence, and the cache keeps them: sequence_length + prompt_length
 * tokens per layer (mp_model.cache_prefix_tokens). Worked example (the defaults): 9,517,453,312 parameters.
 */
void mpm_read_cpmant(hf_ctx *c, mp_model *m)
{
	uint64_t h, pt, pl, st, nb, rows;
	const uint8_t D = MP_ROOT_DECODER;

	m->vocab_size = hf_get_u64(c, KEYS("vocab_size"), 30720);
	m->hidden_size = h = hf_get_u64(c, KEYS("hidden_size"), 4096);
	m->num_layers = hf_get_u64(c, KEYS("num_hidden_layers"), 48);
	m->num_heads = m->num_kv_heads = hf_get_u64(c, KEYS("num_attention_heads"), 32);
	m->head_dim = hf_get_u64(c, KEYS("dim_head"), 128);
	m->intermediate_size = hf_get_u64(c, KEYS("dim_ff"), 10240);
	(void)hf_get_bool(c, KEYS("tie_word_embeddings"), true); /* CpmAntForCausalLM ties nothing */
	m->tie_word_embeddings = false;
	pt = hf_get_u64(c, KEYS("prompt_types"), 32);
	pl = hf_get_u64(c, KEYS("prompt_length"), 32);
	st = hf_get_u64(c, KEYS("segment_types"), 32);
	nb = hf_get_u64(c, KEYS("position_bias_num_buckets"), 512);
	if (c->st != MP_OK)
		return;
	if (h == 0 || h >= (UINT64_C(1) << 32) || pt > (UINT64_C(1) << 20) || pl > (UINT64_C(1) << 20) ||
	    st > (UINT64_C(1) << 16) || nb > (UINT64_C(1) << 24) || m->num_layers == 0 || m->num_layers > MP_MAX_LAYERS) {
		hf_fail_key(c, "hidden_size", "hidden_size must be below 2^32, num_hidden_layers between 1 and 1024, "
		                              "prompt_types and prompt_length below 2^20, segment_types below 2^16");
		return;
	}
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS; /* CpmAntLayerNorm: one weight */
	m->norms_per_layer = 2;
	m->final_norm = true;
	m->cache_prefix_tokens = pl;
	snprintf(m->rope_type, sizeof(m->rope_type), "none");
	rows = m->vocab_size + pt * pl;
	hf_tensor(m, D, NULL, "input_embedding.weight", MP_TK_EMBEDDING, MP_SPLIT_NONE, MP_STEP_NONE, false, rows, h, 1);
	hf_tensor(m, D, NULL, "segment_embedding.weight", MP_TK_EMBEDDING, MP_SPLIT_NONE, MP_STEP_NONE, false, st, h, 1);
	hf_tensor(m, D, "position_bias", "relative_attention_bias", MP_TK_ATTENTION, MP_SPLIT_NONE, MP_STEP_NONE, false,
	          st * st + nb, m->num_heads, 1);
}
