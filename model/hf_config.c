/*
 * hf_config.c: Hugging Face config.json -> mp_model, and the generic "architecture" object -> mp_model.
 * Each supported model_type has a row of defaults copied from its transformers configuration class
 * (transformers/models/<type>/configuration_<type>.py, v5) and a function that maps its keys; the module
 * structure each type builds (which projections carry biases, how many norms a layer has) follows
 * modeling_<type>.py. A key that is absent or null takes the default; a key of the wrong type is an error
 * naming the key. This file does no arithmetic beyond what the config itself derives (head_dim, window layers).
 */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "hf_internal.h"
#include "model.h"
#include "mpm_types.h"


/* Finds the first of the NULL-terminated alias keys that is present and not null. */
const cJSON *hf_find(const hf_ctx *c, const char *const *keys, const char **which)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, *keys);

		if (v && !cJSON_IsNull(v)) {
			*which = *keys;
			return v;
		}
	}
	return NULL;
}

bool hf_has(const hf_ctx *c, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, key);

	return v && !cJSON_IsNull(v);
}

bool hf_is_null(const hf_ctx *c, const char *key)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(c->cfg, key));
}

uint64_t hf_window(hf_ctx *c, const char *key, uint64_t dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(c->cfg, key);

	if (v == NULL)
		return dflt;
	if (cJSON_IsNull(v) || cJSON_IsFalse(v))
		return 0;
	return hf_get_u64(c, (const char *const[]){key, NULL}, dflt);
}

/* Reads a non-negative integer under any of the alias keys, or dflt when absent. */
uint64_t hf_get_u64(hf_ctx *c, const char *const *keys, uint64_t dflt)
{
	const char *key = keys[0];
	const cJSON *v = hf_find(c, keys, &key);
	char field[96];

	if (v == NULL || c->st != MP_OK)
		return dflt;
	snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble > 9007199254740992.0) {
		c->st = mp_fail(c->err, MP_EINVAL, field, "%s must be a non-negative integer", key);
		return dflt;
	}
	return (uint64_t)v->valuedouble;
}

double hf_get_double(hf_ctx *c, const cJSON *obj, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (v == NULL || cJSON_IsNull(v) || c->st != MP_OK)
		return dflt;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0) {
		char field[96];

		snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
		c->st = mp_fail(c->err, MP_EINVAL, field, "%s must be a non-negative number", key);
		return dflt;
	}
	return v->valuedouble;
}

bool hf_get_bool(hf_ctx *c, const char *const *keys, bool dflt)
{
	const char *key = keys[0];
	const cJSON *v = hf_find(c, keys, &key);
	char field[96];

	if (v == NULL || c->st != MP_OK)
		return dflt;
	if (!cJSON_IsBool(v)) {
		snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
		c->st = mp_fail(c->err, MP_EINVAL, field, "%s must be true or false", key);
		return dflt;
	}
	return cJSON_IsTrue(v);
}


uint64_t hf_mul(hf_ctx *c, uint64_t a, uint64_t b, const char *key)
{
	uint64_t out;

	if (mp_mul_u64(a, b, &out) && out <= (UINT64_C(1) << 53))
		return out;
	hf_fail_key(c, key, "a width derived from this key overflows (it must stay below 2^53)");
	return 0;
}

void hf_fail_key(hf_ctx *c, const char *key, const char *msg)
{
	char field[96];

	if (c->st != MP_OK)
		return;
	snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
	c->st = mp_fail(c->err, MP_EINVAL, field, "%s", msg);
}

/* head_dim: an explicit value wins (it need not equal hidden / heads, gemma's does not); otherwise
 * hidden_size / num_attention_heads, which must then divide exactly. */
const char *hf_key_of(const hf_ctx *c, const char *const *keys)
{
	const char *which = keys[0];

	hf_find(c, keys, &which);
	return which;
}

void hf_heads_divide_hidden(hf_ctx *c, const mp_model *m, const char *heads_key)
{
	char msg[200];

	if (c->st != MP_OK || m->num_heads == 0 || m->hidden_size % m->num_heads == 0)
		return;
	snprintf(msg, sizeof(msg),
	         "hidden_size (%llu) must be a multiple of %s (%llu) for this model type, whatever head_dim says "
	         "(its configuration class's validate_architecture)",
	         (unsigned long long)m->hidden_size, heads_key, (unsigned long long)m->num_heads);
	hf_fail_key(c, heads_key, msg);
}

void hf_derive_head_dim(hf_ctx *c, mp_model *m, const char *heads_key)
{
	m->head_dim = hf_get_u64(c, KEYS("head_dim"), 0);
	if (m->head_dim != 0 || c->st != MP_OK || m->num_heads == 0)
		return;
	if (m->hidden_size % m->num_heads != 0) {
		char msg[200];

		snprintf(msg, sizeof(msg), "hidden_size (%llu) is not divisible by %s (%llu); give head_dim explicitly",
		         (unsigned long long)m->hidden_size, heads_key, (unsigned long long)m->num_heads);
		hf_fail_key(c, heads_key, msg);
		return;
	}
	m->head_dim = m->hidden_size / m->num_heads;
}

/*
 * RoPE: rope_parameters (transformers v5) or rope_scaling + rope_theta (older files). A scaling other than
 * "default" declares that contexts beyond max_position_embeddings are intended: the scaled limit is
 * original_max_position_embeddings (or max_position_embeddings) x factor, and never below
 * max_position_embeddings (llama3-type configs already state the extended length there).
 * partial_rotary_factor (phi3, gpt_neox's rotary_pct) sets how much of each head rotates.
 */
void hf_decode_rope(hf_ctx *c, mp_model *m, double partial_default)
{
	const cJSON *rp = cJSON_GetObjectItemCaseSensitive(c->cfg, "rope_parameters");
	const cJSON *rs = cJSON_GetObjectItemCaseSensitive(c->cfg, "rope_scaling");
	const cJSON *scaling = NULL, *type;
	char sub_pointer[96] = "";	/* JSON pointer of the scaling object: its keys are reported under it */
	double partial = partial_default, factor, scaled;
	uint64_t orig;

	snprintf(m->rope_type, sizeof(m->rope_type), "default");
	if (cJSON_IsObject(rp)) {
		/* gemma3 nests one rope_parameters object per layer type */
		const cJSON *full = cJSON_GetObjectItemCaseSensitive(rp, "full_attention");

		scaling = cJSON_IsObject(full) ? full : rp;
		snprintf(sub_pointer, sizeof(sub_pointer), "%s/rope_parameters%s", c->pointer,
		         cJSON_IsObject(full) ? "/full_attention" : "");
	} else if (cJSON_IsObject(rs)) {
		scaling = rs;
		snprintf(sub_pointer, sizeof(sub_pointer), "%s/rope_scaling", c->pointer);
	} else if (rs && !cJSON_IsNull(rs)) {
		hf_fail_key(c, "rope_scaling", "rope_scaling must be an object or null");
		return;
	}
	if (hf_has(c, "partial_rotary_factor"))
		partial = hf_get_double(c, c->cfg, "partial_rotary_factor", partial);
	else if (hf_has(c, "rotary_pct"))
		partial = hf_get_double(c, c->cfg, "rotary_pct", partial);
	if (scaling && cJSON_GetObjectItemCaseSensitive(scaling, "partial_rotary_factor")) {
		hf_ctx sub = {scaling, sub_pointer, c->err, c->st, NULL, NULL};

		partial = hf_get_double(&sub, scaling, "partial_rotary_factor", partial);
		if (sub.st == MP_OK && (partial <= 0 || partial > 1))
			hf_fail_key(&sub, "partial_rotary_factor", "partial_rotary_factor must be in (0, 1]");
		c->st = sub.st;
		if (c->st != MP_OK)
			return;
	}
	if (partial <= 0 || partial > 1) {
		hf_fail_key(c, "partial_rotary_factor", "partial_rotary_factor must be in (0, 1]");
		return;
	}
	m->rotary_dim = (uint64_t)((double)m->head_dim * partial);
	m->rotary_buffer_sets = 1;
	if (scaling == NULL)
		return;
	type = cJSON_GetObjectItemCaseSensitive(scaling, "rope_type");
	if (!cJSON_IsString(type))
		type = cJSON_GetObjectItemCaseSensitive(scaling, "type");
	if (cJSON_IsString(type))
		snprintf(m->rope_type, sizeof(m->rope_type), "%s", type->valuestring);
	if (strcmp(m->rope_type, "default") == 0)
		return;
	m->rope_scaling = true;
	{
		hf_ctx sub = {scaling, sub_pointer, c->err, c->st, NULL, NULL};
		uint64_t top = hf_get_u64(c, KEYS("original_max_position_embeddings"), m->max_position_embeddings);

		sub.st = c->st;
		factor = hf_get_double(&sub, scaling, "factor", 1.0);
		/* a scaling stretches the context: a factor below 1 (or 0) is no scaling the config could mean */
		if (sub.st == MP_OK && factor < 1)
			hf_fail_key(&sub, "factor", "factor must be a finite number >= 1 (how many times the RoPE scaling "
			                         "stretches the original context)");
		orig = hf_get_u64(&sub, KEYS("original_max_position_embeddings"), top);
		c->st = sub.st;
		if (c->st != MP_OK)
			return;
		/* checked in double before any conversion: the ceiling keeps the product exact and far above
		 * MP_MAX_SEQUENCE_LENGTH, so the allowed context is monotonic in factor */
		scaled = (double)orig * factor;
		if (scaled > (double)MPM_MAX_ROPE_SCALED_POSITIONS) {
			char msg[200];

			snprintf(msg, sizeof(msg),
			         "factor x original_max_position_embeddings (%.6g) exceeds %llu positions, the most a RoPE "
			         "scaling may declare",
			         scaled, (unsigned long long)MPM_MAX_ROPE_SCALED_POSITIONS);
			hf_fail_key(&sub, "factor", msg);
			c->st = sub.st;
			return;
		}
	}
	m->rope_scaled_max_position = (uint64_t)scaled;
	if (m->rope_scaled_max_position < m->max_position_embeddings)
		m->rope_scaled_max_position = m->max_position_embeddings;
}

/* layer_types (v5): a list of "sliding_attention" / "full_attention"; counts the sliding layers. */
void hf_decode_layer_types(hf_ctx *c, mp_model *m)
{
	const cJSON *lt = cJSON_GetObjectItemCaseSensitive(c->cfg, "layer_types"), *v;
	uint64_t n = 0, sliding = 0;

	if (lt == NULL || cJSON_IsNull(lt))
		return;
	if (!cJSON_IsArray(lt)) {
		hf_fail_key(c, "layer_types", "layer_types must be a list of \"sliding_attention\" or \"full_attention\"");
		return;
	}
	cJSON_ArrayForEach(v, lt)
	{
		if (!cJSON_IsString(v) || (strcmp(v->valuestring, "sliding_attention") != 0 &&
		                           strcmp(v->valuestring, "full_attention") != 0)) {
			hf_fail_key(c, "layer_types",
			         "layer_types entries must be \"sliding_attention\" or "
			         "\"full_attention\"");
			return;
		}
		sliding += v->valuestring[0] == 's';
		n++;
	}
	if (n != m->num_layers) {
		hf_fail_key(c, "layer_types", "layer_types must have one entry per layer (num_hidden_layers)");
		return;
	}
	if (sliding && m->sliding_window == 0) {
		hf_fail_key(c, "layer_types",
		            "layer_types has sliding_attention layers, but the config has no window (sliding_window null, "
		            "or use_sliding_window false): transformers 5.24 cannot build their cache");
		return;
	}
	if (sliding == 0)
		m->sliding_window = 0;
	m->sliding_window_layers = sliding;
}

/* mlp_only_layers (qwen2_moe, qwen3_moe): indices of layers that keep a dense MLP. */
void hf_decode_mlp_only_layers(hf_ctx *c, mp_model *m)
{
	const cJSON *l = cJSON_GetObjectItemCaseSensitive(c->cfg, "mlp_only_layers"), *v;

	if (l == NULL || cJSON_IsNull(l))
		return;
	if (!cJSON_IsArray(l)) {
		hf_fail_key(c, "mlp_only_layers", "mlp_only_layers must be a list of layer indices");
		return;
	}
	cJSON_ArrayForEach(v, l)
	{
		if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= (double)m->num_layers ||
		    v->valuedouble != floor(v->valuedouble) || v->valuedouble >= MP_MAX_LAYERS) {
			hf_fail_key(c, "mlp_only_layers",
			         "mlp_only_layers entries must be layer indices below "
			         "num_hidden_layers");
			return;
		}
		m->dense_layer_mask[(int)v->valuedouble / 8] |= (uint8_t)(1u << ((int)v->valuedouble % 8));
	}
}

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
		m->shared_expert_gate = m->shared_expert_intermediate_size > 0;
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


/* The supported model_type values, from the one table (model/mpm_types.c), sorted, comma-separated. Built once. */
static char supported[4096];
static pthread_once_t supported_once = PTHREAD_ONCE_INIT;

static const char *supported_list(void);

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void build_supported(void)
{
	const char *names[256];
	size_t n = 0, used = 0;

	for (size_t i = 0; i < mpm_types_count && n < sizeof(names) / sizeof(names[0]); i++)
		names[n++] = mpm_types[i].name;
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(supported + used, sizeof(supported) - used, "%s%s", i ? ", " : "", names[i]);

		if (w < 0 || (size_t)w >= sizeof(supported) - used)
			break;
		used += (size_t)w;
	}
}

/* Edit distance of a and b (at most 40 characters of each are compared). */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a) < 40 ? strlen(a) : 40, lb = strlen(b) < 40 ? strlen(b) : 40, row[41];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* The three supported types nearest to `name` by edit distance (ties: alphabetical), comma-separated. */
static void nearest_types(const char *name, char *buf, size_t len)
{
	const char *best[3] = {NULL, NULL, NULL};
	size_t bd[3] = {SIZE_MAX, SIZE_MAX, SIZE_MAX};
	char all[sizeof(supported)];
	char *p = all;

	snprintf(all, sizeof(all), "%s", supported_list());
	while (p && *p) {
		char *end = strstr(p, ", ");
		size_t d;

		if (end)
			*end = '\0';
		d = distance(name, p);
		/* only a near spelling counts (a third of the name's letters, at least 2), or one name the other's
		 * start ("llama4_vision" and "llama4"): "bert" is close to no decoder memplan reads */
		if (d > (strlen(name) / 3 > 2 ? strlen(name) / 3 : 2) &&
		    !(strlen(p) >= 4 && (strncmp(name, p, strlen(p)) == 0 || strncmp(p, name, strlen(name)) == 0))) {
			p = end ? end + 2 : NULL;
			continue;
		}
		for (int k = 0; k < 3; k++)
			if (d < bd[k]) {
				for (int j = 2; j > k; j--) {
					bd[j] = bd[j - 1];
					best[j] = best[j - 1];
				}
				bd[k] = d;
				best[k] = p;
				break;
			}
		p = end ? end + 2 : NULL;
	}
	snprintf(buf, len, "%s%s%s%s%s", best[0] ? best[0] : "", best[1] ? ", " : "", best[1] ? best[1] : "",
	         best[2] ? ", " : "", best[2] ? best[2] : "");
}

const char *mpm_supported_types(void)
{
	pthread_once(&supported_once, build_supported);
	return supported;
}

static const char *supported_list(void)
{
	return mpm_supported_types();
}

bool hf_decode_type(hf_ctx *c, const char *type, bool text_only, mp_model *m)
{
	const mpm_type *t = mpm_type_find(type);

	if (t == NULL || (text_only && t->wrapper)) {
		m->model_type[0] = '\0';
		return false;
	}
	hf_decode_row(c, t, m);
	return true;
}

void hf_decode_row(hf_ctx *c, const mpm_type *t, mp_model *m)
{
	snprintf(m->model_type, sizeof(m->model_type), "%s", t->name);
	if (t->names)
		c->names = t->names;
	if (t->dense)
		mpm_read_dense(c, t->dense, m);
	else
		t->read(c, m);
}

/*
 * A mixture-of-experts type needs its experts (mpm_type.experts_key): without them its FFN width moved to the
 * experts would leave the dense width 0, and validation would blame intermediate_size. Names the type's own key.
 */
static mp_status check_experts(const mpm_type *t, const mp_model *m, const char *pointer, mp_error *err)
{
	char field[64];

	if (t == NULL || t->experts_key == NULL || m->num_experts != 0)
		return MP_OK;
	snprintf(field, sizeof(field), "/%s", t->experts_key);
	return mp_fail_at(err, MP_EINVAL, pointer, field,
			  "%s must be at least 1: model_type %s routes each token to experts (a dense model has another "
			  "model_type)",
			  t->experts_key, t->name);
}

mp_status mpm_from_hf(const cJSON *cfg, const char *pointer, mp_model *m, mp_error *err)
{
	return mpm_from_hf_row(cfg, pointer, NULL, m, err);
}

mp_status mpm_from_hf_row(const cJSON *cfg, const char *pointer, const mpm_type *row, mp_model *m, mp_error *err)
{
	hf_ctx c = {cfg, pointer, err, MP_OK, NULL, NULL};
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(cfg, "model_type");
	char field[96];

	memset(m, 0, sizeof(*m));
	mp_inventory_init(&m->inv, NULL);
	snprintf(m->json_pointer, sizeof(m->json_pointer), "%s", pointer);
	snprintf(field, sizeof(field), "%s/model_type", pointer);
	if (!cJSON_IsObject(cfg))
		return mp_fail(err, MP_EINVAL, pointer, "hf_config must be a JSON object (a config.json)");
	if (!cJSON_IsString(type)) {
		/* the list of every type no longer fits one message (mp_error.message): name how many and some */
		size_t n = 1;

		for (const char *p = mpm_supported_types(); *p; p++)
			n += *p == ',';
		return mp_fail(err, MP_EINVAL, field,
			               "model_type is required: the config.json's \"model_type\", one of %zu types memplan "
			               "reads (llama, mistral, qwen3, qwen3_moe, gemma3, deepseek_v3, gpt_oss, llama4, qwen3_next, "
			               "mamba2, ...; README.md lists them all)",
			               n);
	}
	if (row ? (hf_decode_row(&c, row, m), true) : hf_decode_type(&c, type->valuestring, false, m)) {
		if (c.st == MP_OK)
			c.st = check_experts(row ? row : mpm_type_find(m->model_type), m, pointer, err);
		if (c.st == MP_OK) {
			mpm_training_extras(c.text ? c.text : cfg, m);
			mpm_config_facts_of(cfg, c.text, m);
			c.st = mp_model_build(m, c.names, err);
		}
		return c.st;
	}
	{
		char near[160];
		bool wrapper = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(cfg, "text_config"));

		char close[200];

		nearest_types(type->valuestring, near, sizeof(near));
		if (near[0])
			snprintf(close, sizeof(close), "nearest supported: %s", near);
		else
			snprintf(close, sizeof(close), "no supported type is spelt like it (README.md lists the types memplan "
				 "reads)");
		return mp_fail(err, MP_EUNSUPPORTED, field,
		               "model_type '%.40s' is not supported; %s;%s or describe the model "
		               "with model.architecture (openapi.yaml, schema ModelArchitecture)",
		               type->valuestring, close,
		               wrapper ? " a multimodal wrapper's decoder is its text_config, which can be posted as "
		                         "hf_config alone (without the vision tower);"
		                       : "");
	}
}

/* ----- the generic architecture object ------------------------------------------------------------------ */

typedef struct arch_body {
	mp_model m;
	int ffn, norm, attn;
	bool rope;
	bool learned_positions;
} arch_body;

static const char *const ffn_names[] = {"gated", "plain", NULL};
static const char *const norm_names[] = {"rms", "layer", NULL};
static const char *const attn_names[] = {"gqa", "mla", NULL};

#define AU64(n, f, lo, hi)                                                                                             \
	{                                                                                                              \
		.name = n, .type = MPM_F_U64, .offset = offsetof(arch_body, m.f), .min = lo, .max = hi                 \
	}
#define ABOOL(n, f)                                                                                                    \
	{                                                                                                              \
		.name = n, .type = MPM_F_BOOL, .offset = offsetof(arch_body, m.f)                                      \
	}
#define BIG (UINT64_C(1) << 40)

static const mpm_field arch_fields[] = {
    {.name = "hidden_size",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.hidden_size),
     .min = 1,
     .max = BIG},
    {.name = "num_hidden_layers",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.num_layers),
     .min = 1,
     .max = MP_MAX_LAYERS},
    {.name = "num_attention_heads",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.num_heads),
     .min = 1,
     .max = BIG},
    {.name = "vocab_size",
     .type = MPM_F_U64,
     .required = true,
     .offset = offsetof(arch_body, m.vocab_size),
     .min = 1,
     .max = BIG},
    AU64("num_key_value_heads", num_kv_heads, 1, BIG), /* absent = MHA; 0 is refused (case BI-03) */
    AU64("head_dim", head_dim, 0, BIG),
    AU64("intermediate_size", intermediate_size, 1, BIG),
    {.name = "ffn_kind", .type = MPM_F_ENUM, .offset = offsetof(arch_body, ffn), .names = ffn_names},
    {.name = "norm_kind", .type = MPM_F_ENUM, .offset = offsetof(arch_body, norm), .names = norm_names},
    {.name = "attention_kind", .type = MPM_F_ENUM, .offset = offsetof(arch_body, attn), .names = attn_names},
    AU64("norms_per_layer", norms_per_layer, 0, 8),
    ABOOL("final_norm", final_norm),
    ABOOL("tie_word_embeddings", tie_word_embeddings),
    ABOOL("qkv_bias", qkv_bias),
    ABOOL("o_bias", o_bias),
    ABOOL("mlp_bias", mlp_bias),
    ABOOL("lm_head_bias", lm_head_bias),
    ABOOL("qk_norm", qk_norm),
    ABOOL("parallel_block", parallel_block),
    AU64("max_position_embeddings", max_position_embeddings, 1, BIG),
    {.name = "learned_position_embeddings", .type = MPM_F_BOOL, .offset = offsetof(arch_body, learned_positions)},
    {.name = "rope", .type = MPM_F_BOOL, .offset = offsetof(arch_body, rope)},
    AU64("sliding_window", sliding_window, 0, BIG),
    AU64("sliding_window_layers", sliding_window_layers, 0, MP_MAX_LAYERS),
    AU64("num_experts", num_experts, 0, BIG),
    AU64("num_experts_per_tok", num_experts_per_tok, 0, BIG),
    AU64("moe_intermediate_size", moe_intermediate_size, 0, BIG),
    AU64("shared_expert_intermediate_size", shared_expert_intermediate_size, 0, BIG),
    AU64("first_dense_layers", first_dense_layers, 0, MP_MAX_LAYERS),
    AU64("q_lora_rank", q_lora_rank, 0, BIG),
    AU64("kv_lora_rank", kv_lora_rank, 0, BIG),
    AU64("qk_nope_head_dim", qk_nope_head_dim, 0, BIG),
    AU64("qk_rope_head_dim", qk_rope_head_dim, 0, BIG),
    AU64("v_head_dim", v_head_dim, 0, BIG),
};

mp_status mpm_from_architecture(const cJSON *arch, const char *pointer, mp_model *out, mp_error *err)
{
	arch_body b;
	mp_status st;
	char field[96];

	memset(&b, 0, sizeof(b));
	b.m.norms_per_layer = 2;
	b.m.final_norm = true;
	b.rope = true;
	b.m.max_position_embeddings = UINT64_C(1) << 24;
	st = mpm_decode_fields(arch, pointer, arch_fields, sizeof(arch_fields) / sizeof(arch_fields[0]), &b, err);
	if (st != MP_OK)
		return st;
	*out = b.m;
	mp_inventory_init(&out->inv, NULL);
	snprintf(out->model_type, sizeof(out->model_type), "custom");
	snprintf(out->json_pointer, sizeof(out->json_pointer), "%s", pointer);
	out->ffn_kind = (mp_ffn_kind)b.ffn;
	out->norm_kind = (mp_norm_kind)b.norm;
	out->attn_kind = (mp_attn_kind)b.attn;
	if (cJSON_GetObjectItemCaseSensitive(arch, "num_key_value_heads") == NULL)
		out->num_kv_heads = out->num_heads;	/* absent: multi-head attention */
	if (out->head_dim == 0) {
		if (out->attn_kind == MP_ATTN_MLA) {
			out->head_dim = out->qk_nope_head_dim + out->qk_rope_head_dim;
		} else if (out->hidden_size % out->num_heads != 0) {
			snprintf(field, sizeof(field), "%s/num_attention_heads", pointer);
			return mp_fail(err, MP_EINVAL, field,
			               "hidden_size (%llu) is not divisible by num_attention_heads (%llu); give "
			               "head_dim explicitly",
			               (unsigned long long)out->hidden_size, (unsigned long long)out->num_heads);
		} else {
			out->head_dim = out->hidden_size / out->num_heads;
		}
	}
	if (out->sliding_window_layers > out->num_layers) {
		/* the planner's check names layer_types (the hf_config key); here the key is sliding_window_layers */
		snprintf(field, sizeof(field), "%s/sliding_window_layers", pointer);
		return mp_fail(err, MP_EINVAL, field,
		               "sliding_window_layers (%llu) must not exceed num_hidden_layers (%llu)",
		               (unsigned long long)out->sliding_window_layers, (unsigned long long)out->num_layers);
	}
	if (out->num_experts > 0 && out->moe_intermediate_size == 0)
		out->moe_intermediate_size = out->intermediate_size;
	out->num_shared_experts = out->shared_expert_intermediate_size > 0;
	if (b.learned_positions) {
		out->learned_position_embeddings = out->max_position_embeddings;
		b.rope = false;
	}
	if (b.rope) {
		out->rotary_dim = out->attn_kind == MP_ATTN_MLA ? out->qk_rope_head_dim : out->head_dim;
		out->rotary_buffer_sets = 1;
		snprintf(out->rope_type, sizeof(out->rope_type), "default");
	} else {
		snprintf(out->rope_type, sizeof(out->rope_type), "none");
	}
	return mp_model_build(out, NULL, err);
}

mp_status mpm_from_hf_text(const char *json, const char *pointer, mp_model *m, mp_error *err)
{
	cJSON *cfg = cJSON_Parse(json);
	mp_status st;

	if (cfg == NULL)
		return mp_fail(err, MP_EPARSE, pointer, "config is not valid JSON");
	st = mpm_from_hf(cfg, pointer, m, err);
	cJSON_Delete(cfg);
	return st;
}
