/*
 * gguf_model.c: a GGUF file's architecture as the planner's mp_model. The file's metadata keys are written by
 * llama.cpp's convert_hf_to_gguf.py from the checkpoint's config.json (gguf-py/gguf/constants.py Keys.LLM,
 * src/llama-arch.cpp LLM_KV_NAMES at 0c1e5709); this file turns them back into the config keys transformers
 * names, so the per-model_type knowledge of the config readers (defaults, derived widths) is the one that
 * applies, and fills in from the tensors what the keys do not say (biases, q/k norms, a tied output, the
 * vocabulary). One row per architecture; no files, no HTTP.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gguf.h"
#include "model.h"

typedef enum arch_flags {
	AF_NONE = 0,
	AF_MOE_TYPE = 1,	/* expert_count > 0 turns the type into moe_type (llama -> mixtral) */
	AF_QKV_BIAS_KEY = 2,	/* the config states attention_bias (llama): set it from attn_q.bias */
	AF_EXPERTS_QWEN = 4,	/* expert keys are num_experts, moe_intermediate_size (qwen2_moe, qwen3_moe) */
	AF_EXPERTS_LOCAL = 8,	/* num_local_experts (mixtral, gpt-oss) */
	AF_SWA_PATTERN = 16,	/* sliding_window_pattern from attention.sliding_window_pattern (gemma3) */
	AF_HEAD_DIM = 32,	/* head_dim from attention.key_length */
	AF_GPT2 = 64,		/* gpt2's own spellings (n_embd, n_layer, n_head, n_positions, n_inner) */
} arch_flags;

/* GGUF general.architecture -> transformers model_type (convert_hf_to_gguf.py @ModelBase.register of each class) */
static const struct arch_row {
	const char *arch;
	const char *model_type;
	const char *moe_type;
	unsigned flags;
} arch_rows[] = {
	/* LlamaModel: LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM all write "llama" */
	{ "llama", "llama", "mixtral", AF_MOE_TYPE | AF_QKV_BIAS_KEY | AF_EXPERTS_LOCAL | AF_HEAD_DIM },
	{ "qwen2", "qwen2", NULL, AF_NONE },
	{ "qwen3", "qwen3", NULL, AF_HEAD_DIM },
	{ "qwen2moe", "qwen2_moe", NULL, AF_EXPERTS_QWEN },
	{ "qwen3moe", "qwen3_moe", NULL, AF_EXPERTS_QWEN | AF_HEAD_DIM },
	{ "gemma", "gemma", NULL, AF_HEAD_DIM },
	{ "gemma2", "gemma2", NULL, AF_HEAD_DIM },
	{ "gemma3", "gemma3_text", NULL, AF_HEAD_DIM | AF_SWA_PATTERN },
	{ "phi3", "phi3", NULL, AF_NONE },
	{ "gpt2", "gpt2", NULL, AF_GPT2 },
	{ "mistral", "mistral", NULL, AF_HEAD_DIM },
};

const char *mpm_gguf_architectures(void)
{
	return "llama (llama, mistral, mixtral), qwen2, qwen3, qwen2moe, qwen3moe, gemma, gemma2, gemma3, phi3, gpt2, mistral";
}

static const mpm_gguf_kv *akey(const mpm_gguf *g, const char *suffix)
{
	char key[128];
	snprintf(key, sizeof(key), "%s.%s", g->architecture, suffix);
	return mpm_gguf_find(g, key);
}

/* A whole-number key (a scalar integer, or an array whose kept values all agree: per-layer arrays of one value). */
static mp_status need_u64(const mpm_gguf *g, const char *suffix, bool required, const char *pointer, uint64_t *out,
			  bool *found, mp_error *err)
{
	const mpm_gguf_kv *kv = akey(g, suffix);

	*found = false;
	if (kv == NULL) {
		if (!required)
			return MP_OK;
		return mp_fail(err, MP_EINVAL, pointer, "%s.%s is missing; a GGUF of architecture %s states it",
			       g->architecture, suffix, g->architecture);
	}
	if (kv->is_int && kv->i >= 0) {
		*out = kv->u;
		*found = true;
		return MP_OK;
	}
	if (kv->type == MPM_GGUF_ARRAY && kv->values != NULL && kv->count > 0) {
		double mx = 0;
		for (uint64_t i = 0; i < kv->count; i++)
			if (kv->values[i] > mx)
				mx = kv->values[i];
		if (mx >= 0 && mx < 9007199254740992.0 && floor(mx) == mx) {
			*out = (uint64_t)mx; /* per-layer arrays: the widest layer (zeros mark layers without it) */
			*found = true;
			return MP_OK;
		}
	}
	return mp_fail(err, MP_EINVAL, pointer, "%s.%s is not a whole number (a %s)", g->architecture, suffix,
		       kv->type == MPM_GGUF_ARRAY ? "array" : kv->type == MPM_GGUF_STRING ? "string" : "number");
}

static bool has_tensor(const mpm_gguf *g, const char *name)
{
	return mpm_gguf_tensor_named(g, name) != NULL;
}

static bool add_u64(cJSON *o, const char *k, uint64_t v)
{
	return cJSON_AddNumberToObject(o, k, (double)v) != NULL;
}

mp_status mpm_gguf_to_model(const mpm_gguf *g, const char *pointer, mp_model *m, mp_error *err)
{
	const struct arch_row *row = NULL;
	const mpm_gguf_tensor *embd;
	const mpm_gguf_kv *kv;
	cJSON *cfg = NULL;
	uint64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ff = 0, ctx = 0, experts = 0, used = 0, eff = 0,
		 shff = 0, key_len = 0, window = 0, pattern = 0, vocab = 0;
	bool f_layers, f_hidden, f_heads, f_kv, f_ff, f_ctx, f_exp, f_used, f_eff, f_shff, f_key, f_win, f_pat;
	mp_problems p = MP_PROBLEMS_INIT;
	mp_status st;
	char ptr[MP_POINTER_MAX];

	for (size_t i = 0; i < sizeof(arch_rows) / sizeof(arch_rows[0]); i++)
		if (strcmp(arch_rows[i].arch, g->architecture) == 0)
			row = &arch_rows[i];
	snprintf(ptr, sizeof(ptr), "%s", pointer ? pointer : "");
	if (g->architecture[0] == '\0')
		return mp_fail(err, MP_EINVAL, ptr, "general.architecture is missing (every GGUF model file states it)");
	if (row == NULL)
		return mp_fail(err, MP_EUNSUPPORTED, ptr,
			       "general.architecture '%s' is not one memplan maps to a model description; it maps: %s",
			       g->architecture, mpm_gguf_architectures());

	mp_problems_note(&p, need_u64(g, "block_count", true, ptr, &layers, &f_layers, err), err);
	mp_problems_note(&p, need_u64(g, "embedding_length", true, ptr, &hidden, &f_hidden, err), err);
	mp_problems_note(&p, need_u64(g, "attention.head_count", true, ptr, &heads, &f_heads, err), err);
	mp_problems_note(&p, need_u64(g, "attention.head_count_kv", false, ptr, &kv_heads, &f_kv, err), err);
	mp_problems_note(&p, need_u64(g, "feed_forward_length", false, ptr, &ff, &f_ff, err), err);
	mp_problems_note(&p, need_u64(g, "context_length", false, ptr, &ctx, &f_ctx, err), err);
	mp_problems_note(&p, need_u64(g, "expert_count", false, ptr, &experts, &f_exp, err), err);
	mp_problems_note(&p, need_u64(g, "expert_used_count", false, ptr, &used, &f_used, err), err);
	mp_problems_note(&p, need_u64(g, "expert_feed_forward_length", false, ptr, &eff, &f_eff, err), err);
	mp_problems_note(&p, need_u64(g, "expert_shared_feed_forward_length", false, ptr, &shff, &f_shff, err), err);
	mp_problems_note(&p, need_u64(g, "attention.key_length", false, ptr, &key_len, &f_key, err), err);
	mp_problems_note(&p, need_u64(g, "attention.sliding_window", false, ptr, &window, &f_win, err), err);
	f_pat = false;
	if ((kv = akey(g, "attention.sliding_window_pattern")) != NULL && kv->is_int) {
		pattern = kv->u;
		f_pat = true;
	}
	if ((st = mp_problems_end(&p, err)) != MP_OK)
		return st;

	/* the vocabulary: token_embd's rows (what the model holds), else the tokenizer's token list */
	embd = mpm_gguf_tensor_named(g, "token_embd.weight");
	if (embd != NULL && embd->n_dims == 2)
		vocab = embd->ne[1];
	else if ((kv = mpm_gguf_find(g, "tokenizer.ggml.tokens")) != NULL && kv->type == MPM_GGUF_ARRAY)
		vocab = kv->count;
	else if ((kv = akey(g, "vocab_size")) != NULL && kv->is_int)
		vocab = kv->u;
	if (vocab == 0)
		return mp_fail(err, MP_EINVAL, ptr,
			       "the vocabulary size is unknown: no token_embd.weight tensor, tokenizer.ggml.tokens array or "
			       "%s.vocab_size key", g->architecture);

	cfg = cJSON_CreateObject();
	if (cfg == NULL)
		return mp_fail(err, MP_ENOMEM, ptr, "out of memory");
	{
		const char *type = (row->flags & AF_MOE_TYPE) && experts > 0 ? row->moe_type : row->model_type;
		bool ok = cJSON_AddStringToObject(cfg, "model_type", type) != NULL;
		bool gpt2 = (row->flags & AF_GPT2) != 0;
		ok = ok && add_u64(cfg, gpt2 ? "n_layer" : "num_hidden_layers", layers);
		ok = ok && add_u64(cfg, gpt2 ? "n_embd" : "hidden_size", hidden);
		ok = ok && add_u64(cfg, gpt2 ? "n_head" : "num_attention_heads", heads);
		ok = ok && add_u64(cfg, "vocab_size", vocab);
		if (f_kv && !gpt2)
			ok = ok && add_u64(cfg, "num_key_value_heads", kv_heads);
		if (f_ff)
			ok = ok && add_u64(cfg, gpt2 ? "n_inner" : "intermediate_size", ff);
		if (f_ctx)
			ok = ok && add_u64(cfg, gpt2 ? "n_positions" : "max_position_embeddings", ctx);
		if ((row->flags & AF_HEAD_DIM) && f_key)
			ok = ok && add_u64(cfg, "head_dim", key_len);
		if (!gpt2)
			ok = ok && cJSON_AddBoolToObject(cfg, "tie_word_embeddings", !has_tensor(g, "output.weight")) != NULL;
		if (row->flags & AF_QKV_BIAS_KEY)
			ok = ok && cJSON_AddBoolToObject(cfg, "attention_bias", has_tensor(g, "blk.0.attn_q.bias")) != NULL;
		if (experts > 0) {
			if (row->flags & AF_EXPERTS_QWEN) {
				ok = ok && add_u64(cfg, "num_experts", experts);
				if (f_eff)
					ok = ok && add_u64(cfg, "moe_intermediate_size", eff);
				if (f_shff)
					ok = ok && add_u64(cfg, "shared_expert_intermediate_size", shff);
				else if (!has_tensor(g, "blk.0.ffn_up_shexp.weight"))
					ok = ok && add_u64(cfg, "shared_expert_intermediate_size", 0);
			} else {
				ok = ok && add_u64(cfg, "num_local_experts", experts);
			}
			if (f_used)
				ok = ok && add_u64(cfg, "num_experts_per_tok", used);
		}
		if (f_win && window > 0) {
			ok = ok && add_u64(cfg, "sliding_window", window);
			if ((row->flags & AF_SWA_PATTERN) && f_pat && pattern > 0)
				ok = ok && add_u64(cfg, "sliding_window_pattern", pattern);
		} else if (f_win && window == 0 && !gpt2) {
			ok = ok && cJSON_AddNullToObject(cfg, "sliding_window") != NULL;
		}
		if ((kv = akey(g, "rope.freq_base")) != NULL && kv->type == MPM_GGUF_FLOAT32)
			ok = ok && cJSON_AddNumberToObject(cfg, "rope_theta", kv->f) != NULL;
		if ((kv = akey(g, "rope.scaling.type")) != NULL && kv->type == MPM_GGUF_STRING && kv->str &&
		    strcmp(kv->str, "none") != 0) {
			const mpm_gguf_kv *fac = akey(g, "rope.scaling.factor");
			const mpm_gguf_kv *orig = akey(g, "rope.scaling.original_context_length");
			cJSON *rs = cJSON_AddObjectToObject(cfg, "rope_scaling");
			ok = ok && rs != NULL && cJSON_AddStringToObject(rs, "rope_type", kv->str) != NULL;
			if (ok && fac != NULL && !fac->is_int)
				ok = cJSON_AddNumberToObject(rs, "factor", fac->f) != NULL;
			if (ok && orig != NULL && orig->is_int)
				ok = add_u64(rs, "original_max_position_embeddings", orig->u);
		}
		if (!ok) {
			cJSON_Delete(cfg);
			return mp_fail(err, MP_ENOMEM, ptr, "out of memory");
		}
	}
	/* llama.cpp's rope_freqs tensor: a llama3-type RoPE scaling (convert_hf_to_gguf.py LlamaModel.generate_extra_tensors) */
	if (has_tensor(g, "rope_freqs.weight") && cJSON_GetObjectItemCaseSensitive(cfg, "rope_scaling") == NULL) {
		cJSON *rs = cJSON_AddObjectToObject(cfg, "rope_scaling");
		if (rs == NULL || cJSON_AddStringToObject(rs, "rope_type", "llama3") == NULL) {
			cJSON_Delete(cfg);
			return mp_fail(err, MP_ENOMEM, ptr, "out of memory");
		}
		cJSON_AddNumberToObject(rs, "factor", 8.0);
		cJSON_AddNumberToObject(rs, "low_freq_factor", 1.0);
		cJSON_AddNumberToObject(rs, "high_freq_factor", 4.0);
		if (f_ctx)
			add_u64(rs, "original_max_position_embeddings", ctx < 8192 ? ctx : 8192);
	}
	st = mpm_from_hf(cfg, ptr, m, err);
	cJSON_Delete(cfg);
	if (st != MP_OK)
		return st;
	/* what the keys leave to the tensors */
	if (has_tensor(g, "blk.0.attn_q_norm.weight") && !m->qk_norm_full)
		m->qk_norm = true;
	if (strcmp(row->arch, "llama") == 0 && has_tensor(g, "blk.0.attn_output.bias"))
		m->o_bias = true;
	m->defaulted_keys[0] = '\0';
	m->max_position_defaulted = !f_ctx;
	return MP_OK;
}
