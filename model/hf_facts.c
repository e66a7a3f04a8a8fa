/*
 * hf_facts.c: what a Hugging Face config.json says about itself, beside its shape: the checkpoint's dtype, its
 * quantization_config, which shape keys it leaves out (so the answer can say which defaults it took), and Gemma-2's
 * tanh soft-capping (which the training planner counts). Read after the shape reader (hf_config.c) has filled
 * the model.
 * JSON in, mp_model fields out; no store, HTTP or files.
 */
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "mpm_types.h"

/* A shape key by its spellings across model types (transformers' <Type>Config attribute names and the
 * attribute_map aliases: GPT2Config n_embd, FalconConfig n_head_kv, ...). */
typedef struct shape_key {
	const char *name;		/* the name the warning uses */
	const char *const *spellings;	/* NULL-terminated, any of them present counts */
	int which;			/* the mp_model member it fills (see value_of) */
	bool core;			/* checked for every model type; the others only where every config has them */
} shape_key;

enum { K_HIDDEN, K_LAYERS, K_HEADS, K_VOCAB, K_FFN, K_KV_HEADS, K_HEAD_DIM, K_POSITIONS };

static const char *const hidden_names[] = { "hidden_size", "n_embd", "d_model", "dim", NULL };
static const char *const layer_names[] = { "num_hidden_layers", "n_layer", "num_layers", "n_layers", NULL };
static const char *const head_names[] = { "num_attention_heads", "n_head", "num_heads", "n_heads", NULL };
static const char *const vocab_names[] = { "vocab_size", "padded_vocab_size", NULL };
static const char *const ffn_names[] = { "intermediate_size", "n_inner", "ffn_dim", "ffn_hidden_size", NULL };
static const char *const kv_names[] = { "num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query",
					"multi_query_group_num", NULL };
static const char *const head_dim_names[] = { "head_dim", NULL };
static const char *const position_names[] = { "max_position_embeddings", "n_positions", "max_seq_len",
					      "seq_length", "n_ctx", "max_sequence_length", NULL };

static const shape_key shape_keys[] = {
	{ "hidden_size", hidden_names, K_HIDDEN, true },
	{ "num_hidden_layers", layer_names, K_LAYERS, true },
	{ "num_attention_heads", head_names, K_HEADS, true },
	{ "num_key_value_heads", kv_names, K_KV_HEADS, false },
	{ "intermediate_size", ffn_names, K_FFN, false },
	/* only where the type's default is a fixed width, not hidden_size / heads (Qwen3Config 128, Gemma's 256) */
	{ "head_dim", head_dim_names, K_HEAD_DIM, false },
	{ "vocab_size", vocab_names, K_VOCAB, true },
	{ "max_position_embeddings", position_names, K_POSITIONS, true },
};

/* Model types whose every published config states the FFN width and the KV heads (the llama-family readers):
 * for them an absent intermediate_size or num_key_value_heads is a default taken, worth saying. GPT-2, Falcon and
 * GPT-NeoX configs legitimately leave them to the type (4 x hidden, multi-head). */
static bool full_shape_type(const char *t)
{
	static const char *const types[] = { "llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen2_moe", "qwen3_moe",
					     "gemma", "gemma2", "gemma3_text", "phi3", "deepseek_v3", NULL };

	for (int i = 0; types[i]; i++)
		if (strcmp(types[i], t) == 0)
			return true;
	return false;
}

static uint64_t value_of(const mp_model *m, int which)
{
	switch (which) {
	case K_HIDDEN: return m->hidden_size;
	case K_LAYERS: return m->num_layers;
	case K_HEADS: return m->num_heads;
	case K_VOCAB: return m->vocab_size;
	case K_FFN: return m->intermediate_size;
	case K_KV_HEADS: return m->num_kv_heads;
	case K_HEAD_DIM: return m->head_dim;
	case K_POSITIONS: return m->learned_position_embeddings ? m->learned_position_embeddings
								: m->max_position_embeddings;
	}
	return 0;
}

/* Whether any spelling of the key is a member of cfg or of its text_config (multimodal configs nest the text
 * model's shape there). A null member counts as present: the config states "the type's default". */
static bool present(const cJSON *cfg, const char *const *spellings)
{
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");

	for (int i = 0; spellings[i]; i++)
		if (cJSON_GetObjectItemCaseSensitive(cfg, spellings[i]) ||
		    (cJSON_IsObject(text) && cJSON_GetObjectItemCaseSensitive(text, spellings[i])))
			return true;
	return false;
}

/* The checkpoint's own float type: "dtype" (transformers 5) or "torch_dtype" (older), also under text_config.
 * Only fp32, bf16 and fp16 are checkpoint dtypes; anything else counts as not stated. */
static mp_dtype config_dtype(const cJSON *cfg)
{
	static const char *const keys[] = { "dtype", "torch_dtype" };
	const cJSON *text = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");

	for (int pass = 0; pass < 2; pass++) {
		const cJSON *o = pass == 0 ? cfg : text;

		for (size_t i = 0; cJSON_IsObject(o) && i < sizeof(keys) / sizeof(keys[0]); i++) {
			const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
			mp_dtype dt = cJSON_IsString(v) ? mp_dtype_from_alias(v->valuestring) : MP_DTYPE_INVALID;

			if (dt == MP_DTYPE_FP32 || dt == MP_DTYPE_BF16 || dt == MP_DTYPE_FP16)
				return dt;
		}
	}
	return MP_DTYPE_INVALID;
}

static double num_or(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/*
 * quantization_config (transformers' quantizers; the same object vLLM reads): quant_method "gptq" (bits 4:
 * AutoGPTQ QuantLinear), "awq" (bits or w_bit 4: AutoAWQ WQLinear_GEMM), "fp8" (vLLM Fp8LinearMethod),
 * "bitsandbytes" (load_in_4bit with bnb_4bit_quant_type nf4, or load_in_8bit). group_size -1 means one group per
 * output row. Other methods and bit widths are left unstated (the caller then falls back to the dtype).
 */
static void quantization(const cJSON *cfg, mp_model *m)
{
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(cfg, "quantization_config");
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(q, "quant_method");
	double bits, group;

	if (!cJSON_IsObject(q) || !cJSON_IsString(method))
		return;
	bits = num_or(q, "bits", num_or(q, "w_bit", 0));
	group = num_or(q, "group_size", num_or(q, "q_group_size", 0));
	if ((strcmp(method->valuestring, "gptq") == 0 || strcmp(method->valuestring, "awq") == 0) && bits == 4) {
		m->config_quant_dtype = MP_DTYPE_INT4;
		m->config_quant_scheme = strcmp(method->valuestring, "awq") == 0 ? 1 : 0;
		if (group == -1)
			m->config_quant_group_size = UINT64_C(1) << 32; /* larger than any row: one group per row */
		else if (group >= 1 && group <= (double)(UINT64_C(1) << 32) && group == (double)(uint64_t)group)
			m->config_quant_group_size = (uint64_t)group;
	} else if (strcmp(method->valuestring, "fp8") == 0) {
		m->config_quant_dtype = MP_DTYPE_FP8_E4M3;
	} else if (strcmp(method->valuestring, "bitsandbytes") == 0) {
		const cJSON *b4 = cJSON_GetObjectItemCaseSensitive(q, "load_in_4bit");
		const cJSON *b8 = cJSON_GetObjectItemCaseSensitive(q, "load_in_8bit");
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(q, "bnb_4bit_quant_type");

		if (cJSON_IsTrue(b4) && (!cJSON_IsString(kind) || strcmp(kind->valuestring, "nf4") == 0))
			m->config_quant_dtype = MP_DTYPE_NF4;
		else if (cJSON_IsTrue(b8))
			m->config_quant_dtype = MP_DTYPE_INT8;
	}
}

/* A soft-capping key: a number enables it, null disables it, absent takes the type's default (Gemma2Config: 50.0
 * on the attention scores, 30.0 on the logits; every other type none). */
static bool softcap(const cJSON *cfg, const char *key, bool type_default)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, key);

	if (v == NULL)
		return type_default;
	return cJSON_IsNumber(v) && v->valuedouble > 0;
}

/* Whether the type's default context already has its RoPE scaling in it (mpm_type.context_default_scaled). */
static bool default_context_scaled(const char *model_type)
{
	const mpm_type *t = mpm_type_find(model_type);

	return t != NULL && t->context_default_scaled;
}

/* Whether the config states original_max_position_embeddings, at the top or in its RoPE scaling object (v4's
 * rope_scaling, v5's rope_parameters, gemma3's per-layer-type rope_parameters.full_attention). */
static bool original_context_stated(const cJSON *cfg)
{
	const cJSON *rp = cJSON_GetObjectItemCaseSensitive(cfg, "rope_parameters");
	const cJSON *full = cJSON_IsObject(rp) ? cJSON_GetObjectItemCaseSensitive(rp, "full_attention") : NULL;
	const cJSON *where[] = { cfg, rp, full, cJSON_GetObjectItemCaseSensitive(cfg, "rope_scaling") };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (cJSON_IsObject(where[i]) && cJSON_GetObjectItemCaseSensitive(where[i], "original_max_position_embeddings"))
			return true;
	return false;
}

void mpm_config_facts(const cJSON *cfg, mp_model *m)
{
	bool full = full_shape_type(m->model_type);
	size_t used = 0;

	m->config_dtype = MP_DTYPE_INVALID;
	m->config_quant_dtype = MP_DTYPE_INVALID;
	m->config_quant_scheme = 0;
	m->config_quant_group_size = 0;
	m->defaulted_keys[0] = '\0';
	m->max_position_defaulted = false;
	m->attn_logit_softcapping = m->final_logit_softcapping = false;
	if (!cJSON_IsObject(cfg))
		return;
	m->config_dtype = config_dtype(cfg);
	quantization(cfg, m);
	m->attn_logit_softcapping = softcap(cfg, "attn_logit_softcapping", strcmp(m->model_type, "gemma2") == 0);
	m->final_logit_softcapping = softcap(cfg, "final_logit_softcapping", strcmp(m->model_type, "gemma2") == 0);
	for (size_t i = 0; i < sizeof(shape_keys) / sizeof(shape_keys[0]); i++) {
		const shape_key *k = &shape_keys[i];
		int n;

		if (k->which == K_HEAD_DIM) {
			const mpm_type *t = mpm_type_find(m->model_type);

			if (t == NULL || t->dense == NULL || t->dense->head_dim == 0 || present(cfg, k->spellings))
				continue;
		} else if ((!k->core && !full) || present(cfg, k->spellings))
			continue;
		if (k->which == K_POSITIONS)
			m->max_position_defaulted = true;
		n = snprintf(m->defaulted_keys + used, sizeof(m->defaulted_keys) - used, "%s%s=%llu", used ? ", " : "",
			     k->name, (unsigned long long)value_of(m, k->which));
		if (n < 0 || (size_t)n >= sizeof(m->defaulted_keys) - used) {
			m->defaulted_keys[used] = '\0'; /* whole entries only */
			break;
		}
		used += (size_t)n;
	}
	/* A RoPE scaling over a context the config never states, of a type whose default context has the scaling in it
	 * already (mpm_type.context_default_scaled: Gemma 3's 131072): the factor is not applied a second time. The
	 * answer says what it took (mps_warn_model). */
	if (m->max_position_defaulted && m->rope_scaling && m->rope_scaled_max_position > m->max_position_embeddings &&
	    !original_context_stated(cfg) && default_context_scaled(m->model_type))
		m->rope_scaled_max_position = m->max_position_embeddings;
}

void mpm_config_facts_of(const cJSON *cfg, const cJSON *text, mp_model *m)
{
	if (text == NULL || text == cfg) {
		mpm_config_facts(cfg, m);
		return;
	}
	/* the decoder's shape keys are the text_config's; a wrapper states its dtype and its quantization_config at
	 * the top (Gemma-3, Llama-4, Mistral-3), sometimes in the text_config too: the decoder's own wins */
	mpm_config_facts(text, m);
	if (m->config_dtype == MP_DTYPE_INVALID)
		m->config_dtype = config_dtype(cfg);
	if (m->config_quant_dtype == MP_DTYPE_INVALID)
		quantization(cfg, m);
}
