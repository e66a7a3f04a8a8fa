/*
 * hf_config.c: Hugging Face config.json -> mp_model.
 * Each supported model_type has a row of defaults copied from its transformers configuration class
 * (transformers/models/<type>/configuration_<type>.py, v5) and a function that maps its keys. A key that
 * is absent or null takes the default; a key of the wrong type is an error naming the key.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hf_config.h"

typedef struct hf_ctx {
	const cJSON *cfg;
	const char *pointer;
	mp_error *err;
	mp_status st;
} hf_ctx;

/* Finds the first of the NULL-terminated alias keys that is present and not null. */
static const cJSON *find(const hf_ctx *c, const char *const *keys, const char **which)
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

/* Reads a non-negative integer under any of the alias keys, or dflt when absent. */
static uint64_t get_u64(hf_ctx *c, const char *const *keys, uint64_t dflt)
{
	const char *key = keys[0];
	const cJSON *v = find(c, keys, &key);
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

static bool get_bool(hf_ctx *c, const char *const *keys, bool dflt)
{
	const char *key = keys[0];
	const cJSON *v = find(c, keys, &key);
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

#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void fail_key(hf_ctx *c, const char *key, const char *msg)
{
	char field[96];

	if (c->st != MP_OK)
		return;
	snprintf(field, sizeof(field), "%s/%s", c->pointer, key);
	c->st = mp_fail(c->err, MP_EINVAL, field, "%s", msg);
}

/* head_dim: an explicit value wins (it need not equal hidden / heads, gemma's does not); otherwise
 * hidden_size / num_attention_heads, which must then divide exactly. */
static void derive_head_dim(hf_ctx *c, mp_model *m)
{
	m->head_dim = get_u64(c, KEYS("head_dim"), 0);
	if (m->head_dim != 0 || c->st != MP_OK || m->num_heads == 0)
		return;
	if (m->hidden_size % m->num_heads != 0) {
		char msg[200];

		snprintf(msg, sizeof(msg),
			 "hidden_size (%llu) is not divisible by num_attention_heads (%llu); give head_dim explicitly",
			 (unsigned long long)m->hidden_size, (unsigned long long)m->num_heads);
		fail_key(c, "num_attention_heads", msg);
		return;
	}
	m->head_dim = m->hidden_size / m->num_heads;
}

/* Defaults of one model type, from its transformers configuration class. num_kv_heads 0 means "defaults to
 * num_attention_heads"; head_dim 0 means hidden / heads. */
typedef struct hf_defaults {
	const char *model_type;
	uint64_t vocab_size, hidden_size, intermediate_size, num_layers, num_heads, num_kv_heads, head_dim;
	uint64_t max_position_embeddings;
	bool tie_word_embeddings, qkv_bias;
	uint64_t sliding_window;
	uint64_t num_experts;	/* mixtral num_local_experts */
} hf_defaults;

static const hf_defaults llama_family[] = {
	/* LlamaConfig: vocab 32000, hidden 4096, FFN 11008, 32 layers, 32 heads, kv = heads, 2048 positions. */
	{ "llama", 32000, 4096, 11008, 32, 32, 0, 0, 2048, false, false, 0, 0 },
	/* MistralConfig: FFN 14336, 8 KV heads, 4096 * 32 positions, sliding_window 4096. */
	{ "mistral", 32000, 4096, 14336, 32, 32, 8, 0, 4096 * 32, false, false, 4096, 0 },
	/* Qwen2Config: vocab 151936, FFN 22016, kv 32, 32768 positions; q/k/v always carry biases. */
	{ "qwen2", 151936, 4096, 22016, 32, 32, 32, 0, 32768, false, true, 0, 0 },
	/* MixtralConfig: FFN 14336 per expert, 8 KV heads, 4096 * 32 positions, 8 local experts, top-2. */
	{ "mixtral", 32000, 4096, 14336, 32, 32, 8, 0, 4096 * 32, false, false, 0, 8 },
	/* GemmaConfig: vocab 256000, hidden 3072, FFN 24576, 28 layers, 16 heads, kv 16, head_dim 256, tied. */
	{ "gemma", 256000, 3072, 24576, 28, 16, 16, 256, 8192, true, false, 0, 0 },
	/* Phi3Config: vocab 32064, hidden 3072, FFN 8192, 32 layers, 32 heads, kv = heads, 4096 positions;
	 * fused qkv_proj and gate_up_proj hold the same parameters as the separate projections. */
	{ "phi3", 32064, 3072, 8192, 32, 32, 0, 0, 4096, false, false, 0, 0 },
};

static void decode_llama_family(hf_ctx *c, const hf_defaults *d, mp_model *m)
{
	m->vocab_size = get_u64(c, KEYS("vocab_size"), d->vocab_size);
	m->hidden_size = get_u64(c, KEYS("hidden_size"), d->hidden_size);
	m->intermediate_size = get_u64(c, KEYS("intermediate_size"), d->intermediate_size);
	m->num_layers = get_u64(c, KEYS("num_hidden_layers"), d->num_layers);
	m->num_heads = get_u64(c, KEYS("num_attention_heads"), d->num_heads);
	m->num_kv_heads = get_u64(c, KEYS("num_key_value_heads"), d->num_kv_heads ? d->num_kv_heads : m->num_heads);
	m->max_position_embeddings = get_u64(c, KEYS("max_position_embeddings"), d->max_position_embeddings);
	m->tie_word_embeddings = get_bool(c, KEYS("tie_word_embeddings"), d->tie_word_embeddings);
	m->qkv_bias = d->qkv_bias || get_bool(c, KEYS("attention_bias"), false);
	/* LlamaAttention puts attention_bias on o_proj too; Qwen2's o_proj never has one. */
	m->o_bias = !d->qkv_bias && m->qkv_bias;
	m->mlp_bias = get_bool(c, KEYS("mlp_bias"), false);
	if (d->head_dim && !find(c, KEYS("head_dim"), &(const char *){ NULL }))
		m->head_dim = d->head_dim;
	else
		derive_head_dim(c, m);
	m->sliding_window = get_u64(c, KEYS("sliding_window"), d->sliding_window);
	if (strcmp(d->model_type, "qwen2") == 0 && !get_bool(c, KEYS("use_sliding_window"), false))
		m->sliding_window = 0;
	if (d->num_experts) {
		m->num_experts = get_u64(c, KEYS("num_local_experts"), d->num_experts);
		m->num_experts_per_tok = get_u64(c, KEYS("num_experts_per_tok"), 2);
		m->moe_intermediate_size = m->intermediate_size;
		m->intermediate_size = 0;
	}
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_GATED;
	m->norm_kind = MP_NORM_RMS;
	m->norms_per_layer = 2;
	m->final_norm = true;
}

/* GPT2Config: vocab 50257, n_positions 1024, n_embd 768, n_layer 12, n_head 12, n_inner None (= 4 x n_embd),
 * tied. Conv1D projections all carry biases; LayerNorm has weight and bias; learned position table. */
static void decode_gpt2(hf_ctx *c, mp_model *m)
{
	m->vocab_size = get_u64(c, KEYS("vocab_size"), 50257);
	m->hidden_size = get_u64(c, KEYS("n_embd", "hidden_size"), 768);
	m->num_layers = get_u64(c, KEYS("n_layer", "num_hidden_layers"), 12);
	m->num_heads = get_u64(c, KEYS("n_head", "num_attention_heads"), 12);
	m->num_kv_heads = m->num_heads;
	m->max_position_embeddings = get_u64(c, KEYS("n_positions", "max_position_embeddings"), 1024);
	m->learned_position_embeddings = m->max_position_embeddings;
	m->intermediate_size = get_u64(c, KEYS("n_inner"), 4 * m->hidden_size);
	m->tie_word_embeddings = get_bool(c, KEYS("tie_word_embeddings"), true);
	if (m->num_heads && m->hidden_size % m->num_heads != 0)
		fail_key(c, "n_head", "n_embd must be divisible by n_head");
	else if (m->num_heads)
		m->head_dim = m->hidden_size / m->num_heads;
	m->qkv_bias = m->o_bias = m->mlp_bias = true;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->norms_per_layer = 2;
	m->final_norm = true;
}

/* FalconConfig: vocab 65024, hidden 4544, 32 layers, 71 heads, multi_query True, parallel_attn True,
 * bias False, new_decoder_architecture False, ffn_hidden_size None (= 4 x hidden), tied. The fused
 * query_key_value projection is hidden -> (heads + 2 x kv_heads) x head_dim, where kv_heads is 1 for
 * multi-query, num_kv_heads for the new decoder architecture, else heads (modeling_falcon.py). */
static void decode_falcon(hf_ctx *c, mp_model *m)
{
	bool new_arch, multi_query, parallel;
	uint64_t ln_parallel;

	m->vocab_size = get_u64(c, KEYS("vocab_size"), 65024);
	m->hidden_size = get_u64(c, KEYS("hidden_size", "n_embed"), 4544);
	m->num_layers = get_u64(c, KEYS("num_hidden_layers", "n_layer"), 32);
	m->num_heads = get_u64(c, KEYS("num_attention_heads", "n_head"), 71);
	m->max_position_embeddings = get_u64(c, KEYS("max_position_embeddings"), 2048);
	m->tie_word_embeddings = get_bool(c, KEYS("tie_word_embeddings"), true);
	new_arch = get_bool(c, KEYS("new_decoder_architecture"), false);
	multi_query = get_bool(c, KEYS("multi_query"), true);
	parallel = get_bool(c, KEYS("parallel_attn"), true);
	m->qkv_bias = m->o_bias = m->mlp_bias = get_bool(c, KEYS("bias"), false);
	derive_head_dim(c, m);
	if (new_arch)
		m->num_kv_heads = get_u64(c, KEYS("num_kv_heads"), m->num_heads);
	else
		m->num_kv_heads = multi_query ? 1 : m->num_heads;
	m->intermediate_size = get_u64(c, KEYS("ffn_hidden_size"), 4 * m->hidden_size);
	ln_parallel = get_u64(c, KEYS("num_ln_in_parallel_attn"), 2);
	m->norms_per_layer = new_arch ? ln_parallel : (parallel ? 1 : 2);
	m->parallel_block = new_arch || parallel;
	m->attn_kind = MP_ATTN_GQA;
	m->ffn_kind = MP_FFN_PLAIN;
	m->norm_kind = MP_NORM_LAYER;
	m->final_norm = true;
}

const char *mpd_hf_supported_types(void)
{
	return "llama, mistral, qwen2, mixtral, gemma, phi3, gpt2, falcon";
}

mp_status mpd_model_from_hf(const cJSON *cfg, const char *pointer, mp_model *m, mp_error *err)
{
	hf_ctx c = { cfg, pointer, err, MP_OK };
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(cfg, "model_type");
	char field[96];

	memset(m, 0, sizeof(*m));
	snprintf(field, sizeof(field), "%s/model_type", pointer);
	if (!cJSON_IsObject(cfg))
		return mp_fail(err, MP_EINVAL, pointer, "hf_config must be a JSON object (a config.json)");
	if (!cJSON_IsString(type))
		return mp_fail(err, MP_EINVAL, field, "model_type is required; supported: %s",
			       mpd_hf_supported_types());
	for (size_t i = 0; i < sizeof(llama_family) / sizeof(llama_family[0]); i++) {
		if (strcmp(type->valuestring, llama_family[i].model_type) != 0)
			continue;
		snprintf(m->model_type, sizeof(m->model_type), "%s", type->valuestring);
		decode_llama_family(&c, &llama_family[i], m);
		return c.st;
	}
	if (strcmp(type->valuestring, "gpt2") == 0 || strcmp(type->valuestring, "falcon") == 0) {
		snprintf(m->model_type, sizeof(m->model_type), "%s", type->valuestring);
		if (type->valuestring[0] == 'g')
			decode_gpt2(&c, m);
		else
			decode_falcon(&c, m);
		return c.st;
	}
	return mp_fail(err, MP_EUNSUPPORTED, field, "model_type '%.40s' is not supported; supported: %s",
		       type->valuestring, mpd_hf_supported_types());
}

mp_status mpd_hf_count_parameters(const char *config_json, uint64_t *parameters, mp_error *err)
{
	cJSON *cfg = cJSON_Parse(config_json);
	mp_model m;
	mp_param_count pc;
	mp_status st;

	if (cfg == NULL)
		return mp_fail(err, MP_EPARSE, "", "config is not valid JSON");
	st = mpd_model_from_hf(cfg, "", &m, err);
	if (st == MP_OK)
		st = mp_count_parameters(&m, &pc, err);
	cJSON_Delete(cfg);
	if (st == MP_OK)
		*parameters = pc.total;
	return st;
}
