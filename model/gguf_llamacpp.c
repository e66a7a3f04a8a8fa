/*
 * gguf_llamacpp.c: a GGUF file as llama.cpp's loader sees it, for the planner's llama.cpp arithmetic
 * (planner/mp_llamacpp.h): each tensor's layer (blk.N.*, the input and output layers of llama-arch.cpp
 * llm_tensor_info), whether it is a routed expert or a feed-forward tensor (the -ot and --n-cpu-moe patterns), and the
 * hyperparameters the caches and the compute buffer need, read as llama-model.cpp load_hparams reads them at
 * 0c1e5709 (head_count_kv per layer, key_length defaulting to embedding_length / head_count, the SWA pattern).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "gguf_llamacpp.h"

static const mpm_gguf_kv *akey(const mpm_gguf *g, const char *suffix)
{
	char key[128];
	snprintf(key, sizeof(key), "%s.%s", g->architecture, suffix);
	return mpm_gguf_find(g, key);
}

/* A key as a whole number; for a per-layer array the value at layer il (or the first). def when absent. */
static uint64_t u_at(const mpm_gguf *g, const char *suffix, uint32_t il, uint64_t def)
{
	const mpm_gguf_kv *kv = akey(g, suffix);
	if (kv == NULL)
		return def;
	if (kv->is_int && kv->i >= 0)
		return kv->u;
	if (kv->type == MPM_GGUF_ARRAY && kv->values != NULL && kv->count > 0)
		return (uint64_t)kv->values[il < kv->count ? il : 0];
	return def;
}

/* sliding_window_pattern of the architectures whose loader sets one (llama-model.cpp: gemma2 2, gemma3 6,
 * cohere2 4, gpt-oss 2); 0 = the architecture has no SWA layers */
static uint32_t swa_default(const char *arch)
{
	static const struct {
		const char *arch;
		uint32_t pattern;
	} rows[] = { { "gemma2", 2 }, { "gemma3", 6 }, { "cohere2", 4 }, { "gpt-oss", 2 } };
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (strcmp(rows[i].arch, arch) == 0)
			return rows[i].pattern;
	return 0;
}

static int32_t layer_of(const char *name, bool *every_layer)
{
	*every_layer = false;
	if (strncmp(name, "blk.", 4) == 0) {
		char *end;
		long v = strtol(name + 4, &end, 10);
		if (end != name + 4 && *end == '.' && v >= 0 && v < MP_MAX_LAYERS)
			return (int32_t)v;
		return -100;
	}
	if (strncmp(name, "token_embd", 10) == 0 || strncmp(name, "position_embd", 13) == 0 ||
	    strncmp(name, "token_types", 11) == 0)
		return MP_LLAMACPP_INPUT;
	if (strncmp(name, "rope_", 5) == 0) {
		*every_layer = true;
		return 0;
	}
	return MP_LLAMACPP_OUTPUT; /* output, output_norm, cls: the output layer */
}

mp_status mpm_gguf_llamacpp(const mpm_gguf *g, const char *pointer, mp_llamacpp_params *p, mp_llamacpp_tensor **out,
			    size_t *n_out, mp_error *err)
{
	uint64_t n_layer = u_at(g, "block_count", 0, 0), n_embd = u_at(g, "embedding_length", 0, 0);
	uint64_t n_head = u_at(g, "attention.head_count", 0, 0);
	mp_llamacpp_tensor *t;
	const mpm_gguf_tensor *embd = mpm_gguf_tensor_named(g, "token_embd.weight");
	bool tied = mpm_gguf_tensor_named(g, "output.weight") == NULL && embd != NULL;
	size_t n = 0;
	uint32_t pattern;
	const mpm_gguf_kv *kv;

	*out = NULL;
	*n_out = 0;
	if (n_layer == 0 || n_layer > MP_MAX_LAYERS || n_embd == 0 || n_head == 0 || n_embd > UINT32_MAX)
		return mp_fail(err, MP_EINVAL, pointer,
			       "%s.block_count (1 to %d), .embedding_length and .attention.head_count are required",
			       g->architecture, MP_MAX_LAYERS);
	p->n_layer = (uint32_t)n_layer;
	p->n_embd = (uint32_t)n_embd;
	p->n_head = (uint32_t)u_at(g, "attention.head_count", 0, 0);
	p->n_ff = 0;
	{
		uint64_t hk = u_at(g, "attention.key_length", 0, n_embd / n_head);
		uint64_t hv = u_at(g, "attention.value_length", 0, n_embd / n_head);
		if (hk > UINT32_MAX || hv > UINT32_MAX)
			return mp_fail(err, MP_EINVAL, pointer, "%s.attention.key_length / .value_length beyond 32 bits",
				       g->architecture);
		p->n_embd_head_k = (uint32_t)hk;
		p->n_embd_head_v = (uint32_t)hv;
	}
	for (uint32_t il = 0; il < n_layer; il++) {
		uint64_t ff = u_at(g, "feed_forward_length", il, 0);
		uint64_t kvh = u_at(g, "attention.head_count_kv", il, u_at(g, "attention.head_count", il, 0));
		uint64_t hk = u_at(g, "attention.key_length", 0, n_embd / n_head);
		uint64_t hv = u_at(g, "attention.value_length", 0, n_embd / n_head);
		if (ff > p->n_ff && ff <= UINT32_MAX)
			p->n_ff = (uint32_t)ff;
		if (kvh * hk > UINT32_MAX || kvh * hv > UINT32_MAX)
			return mp_fail(err, MP_EINVAL, pointer, "layer %u: the KV width overflows", il);
		p->n_embd_k_gqa[il] = (uint32_t)(kvh * hk);
		p->n_embd_v_gqa[il] = (uint32_t)(kvh * hv);
	}
	p->n_expert = (uint32_t)u_at(g, "expert_count", 0, 0);
	p->n_expert_used = (uint32_t)u_at(g, "expert_used_count", 0, 0);
	p->n_ff_exp = (uint32_t)u_at(g, "expert_feed_forward_length", 0, p->n_expert ? p->n_ff : 0);
	if (p->n_expert) {
		/* feed_forward_length is the dense layers' width (a qwen3moe file states it though no layer is dense):
		 * only layers holding ffn_up / ffn_down have one */
		bool dense = false;
		for (size_t i = 0; i < g->n_tensors && !dense; i++)
			dense = strncmp(g->tensors[i].name, "blk.", 4) == 0 &&
				(strstr(g->tensors[i].name, ".ffn_down.weight") != NULL ||
				 strstr(g->tensors[i].name, ".ffn_up.weight") != NULL);
		if (!dense)
			p->n_ff = 0;
	}
	p->n_ff_shexp = (uint32_t)u_at(g, "expert_shared_feed_forward_length", 0, 0);
	p->n_vocab = embd && embd->n_dims >= 2 ? (uint32_t)embd->ne[1] : 0;
	if ((kv = mpm_gguf_find(g, "tokenizer.ggml.tokens")) != NULL && kv->type == MPM_GGUF_ARRAY && kv->count < UINT32_MAX)
		p->n_vocab = (uint32_t)kv->count;
	p->n_ctx_train = (uint32_t)u_at(g, "context_length", 0, 0);
	{
		/* Ollama's reading (fs/ggml/ggml.go UintOrMinArrayValue / UintOrMaxArrayValue): the key's smallest / largest
		 * value, 0 when absent */
		const mpm_gguf_kv *hkv = akey(g, "attention.head_count_kv"), *hq = akey(g, "attention.head_count");
		p->head_count_kv_min = p->head_count_max = 0;
		if (hkv && hkv->is_int && hkv->i >= 0 && hkv->u <= UINT32_MAX)
			p->head_count_kv_min = (uint32_t)hkv->u;
		else if (hkv && hkv->type == MPM_GGUF_ARRAY && hkv->values)
			for (uint64_t i = 0; i < hkv->count; i++)
				if (i == 0 || (uint32_t)hkv->values[i] < p->head_count_kv_min)
					p->head_count_kv_min = (uint32_t)hkv->values[i];
		if (hq && hq->is_int && hq->i >= 0 && hq->u <= UINT32_MAX)
			p->head_count_max = (uint32_t)hq->u;
		else if (hq && hq->type == MPM_GGUF_ARRAY && hq->values)
			for (uint64_t i = 0; i < hq->count; i++)
				if ((uint32_t)hq->values[i] > p->head_count_max)
					p->head_count_max = (uint32_t)hq->values[i];
	}
	p->fused_qkv = mpm_gguf_tensor_named(g, "blk.0.attn_qkv.weight") != NULL;
	p->learned_positions = mpm_gguf_tensor_named(g, "position_embd.weight") != NULL;
	{
		const mpm_gguf_tensor *up = mpm_gguf_tensor_named(g, "blk.0.ffn_up.weight");
		p->plain_ffn = up != NULL && mpm_gguf_tensor_named(g, "blk.0.ffn_gate.weight") == NULL && up->n_dims == 2 &&
			       up->ne[1] == p->n_ff;
		p->fused_gate_up = up != NULL && mpm_gguf_tensor_named(g, "blk.0.ffn_gate.weight") == NULL && up->n_dims == 2 &&
				   up->ne[1] == 2 * (uint64_t)p->n_ff;
	}
	/* SWA (llama-model.cpp load_swa_pattern, llama-hparams.cpp set_swa_pattern: layer il slides unless
	 * il % n_pattern == n_pattern - 1) */
	p->n_swa = (uint32_t)u_at(g, "attention.sliding_window", 0, 0);
	pattern = swa_default(g->architecture);
	memset(p->is_swa, 0, sizeof(p->is_swa));
	if (p->n_swa > 0 && pattern > 0) {
		kv = akey(g, "attention.sliding_window_pattern");
		if (kv != NULL && kv->type == MPM_GGUF_ARRAY && kv->values != NULL) {
			for (uint32_t il = 0; il < n_layer && il < kv->count; il++)
				p->is_swa[il] = kv->values[il] != 0;
		} else {
			if (kv != NULL && kv->is_int)
				pattern = (uint32_t)kv->u;
			for (uint32_t il = 0; il < n_layer; il++)
				p->is_swa[il] = pattern == 0 || il % pattern < pattern - 1;
		}
	}

	t = calloc(g->n_tensors + 1, sizeof(*t));
	if (t == NULL)
		return mp_fail(err, MP_ENOMEM, pointer, "out of memory");
	for (size_t i = 0; i < g->n_tensors; i++) {
		const mpm_gguf_tensor *x = &g->tensors[i];
		mp_llamacpp_tensor *y = &t[n];
		y->type = x->type;
		y->ne0 = x->ne[0];
		y->bytes = x->bytes;
		y->file_offset = x->file_offset;
		y->file = x->split;
		y->layer = layer_of(x->name, &y->every_layer);
		if (y->layer == -100 || (y->layer >= 0 && (uint64_t)y->layer >= n_layer)) {
			free(t);
			return mp_fail(err, MP_EINVAL, pointer, "tensor '%s': a layer beyond %s.block_count (%llu)", x->name,
				       g->architecture, (unsigned long long)n_layer);
		}
		y->expert = strstr(x->name, "_exps") != NULL;
		y->ffn = strstr(x->name, ".ffn_") != NULL;
		n++;
	}
	if (tied) {
		/* llama-model.cpp: output = token_embd, TENSOR_DUPLICATED, in the output layer */
		for (size_t i = 0; i < n; i++)
			if (strcmp(g->tensors[i].name, "token_embd.weight") == 0) {
				t[n] = t[i];
				t[n].layer = MP_LLAMACPP_OUTPUT;
				t[n].duplicate = true;
				n++;
				break;
			}
	}
	*out = t;
	*n_out = n;
	return MP_OK;
}
