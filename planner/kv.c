/*
 * kv.c: the KV cache. Per layer and token a layer stores K and V rows (or, for MLA, one latent row); each row
 * is stored in the KV format on its own, so block formats carry their scales per row (ggml stores the cache
 * as tensors of rows, one per token). Paged allocation rounds every sequence up to whole blocks; sliding-
 * window layers keep at most the window. Pure arithmetic, every product checked.
 */
#include <string.h>

#include "../core/mp_assert.h"
#include "memplan.h"

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return to > 1 && v % to ? v + (to - v % to) : v;
}

/* Values per token of one layer on one of tp ranks: *k and *v rows (v = 0 for the MLA latent). */
static void layer_rows(const mp_model *m, mp_mla_cache mla, mp_cache_layout layout, uint64_t tp, uint64_t *k,
                       uint64_t *v, mp_kv_detail *d)
{
	uint64_t kvh = layout == MP_CACHE_TRANSFORMERS && m->transformers_kv_heads ? m->transformers_kv_heads
	                                                                             : m->num_kv_heads;

	if (m->attn_kind == MP_ATTN_MLA && mla == MP_MLA_LATENT) {
		/* DeepSeek-V2 sec. 2.1.2 (arXiv 2405.04434): c_KV (kv_lora_rank) and the shared RoPE key k^R
		 * (qk_rope_head_dim) per token; every tensor-parallel rank holds all of it (vLLM MLA backend).
		 * DeepSeek-V3.2's indexer keys are their own term (mp_kv_cache). */
		*k = m->kv_lora_rank + m->qk_rope_head_dim;
		*v = 0;
		d->kv_heads_per_gpu = 0;
		d->kv_head_replication = tp;
		return;
	}
	if (m->attn_kind == MP_ATTN_MLA) {
		uint64_t heads = m->num_heads / tp;

		/* transformers DeepseekV3Attention caches the expanded K (nope + rope) and V per head */
		*k = heads * (m->qk_nope_head_dim + m->qk_rope_head_dim);
		*v = heads * m->v_head_dim;
		d->kv_heads_per_gpu = heads;
		d->kv_head_replication = 1;
		return;
	}
	if (kvh == 0 || mp_model_attention_layers(m) == 0) {
		/* no attention layer (a recurrent model): no K or V rows */
		*k = *v = 0;
		d->kv_heads_per_gpu = 0;
		d->kv_head_replication = 1;
		return;
	}
	/* vLLM QKVParallelLinear: kv_heads / tp heads per rank, or one head replicated tp / kv_heads times */
	d->kv_heads_per_gpu = kvh >= tp ? kvh / tp : 1;
	d->kv_head_replication = kvh >= tp ? 1 : tp / kvh;
	/* layers of their own widths (Gemma 4's full-attention layers, fewer KV heads): the replication is the worst
	 * layer's (the bytes are counted per layer, mp_kv_cache) */
	if (m->attn_per_layer && m->global_kv_heads && m->global_kv_heads < tp &&
	    tp / m->global_kv_heads > d->kv_head_replication)
		d->kv_head_replication = tp / m->global_kv_heads;
	*k = *v = d->kv_heads_per_gpu * m->head_dim;
	if (m->attn_per_layer && m->v_head_dim) /* V of its own width (MiMo-V2-Flash) */
		*v = d->kv_heads_per_gpu * m->v_head_dim;
}

/* The recurrent layers' state (planner/recurrent.c), charged per sequence: every one of batch_size slots keeps
 * its own, whatever the length scope (llama.cpp keeps one per sequence id, vLLM one per request). The conv state is
 * in the compute dtype, the scan's state in fp32. */
static mp_status add_recurrent_state(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o,
                                     uint64_t tp, uint64_t *bytes, mp_kv_detail *d, mp_error *err)
{
	mp_recurrent_state rs;
	mp_dtype conv = o->compute_dtype != MP_DTYPE_INVALID ? o->compute_dtype : MP_DTYPE_BF16;
	mp_status st = mp_recurrent_state_bytes_in(m, conv, MP_DTYPE_FP32, tp, o->cache_layout, &rs, err);

	if (st != MP_OK)
		return st;
	d->recurrent_layers = rs.layers;
	d->recurrent_state_bytes_per_sequence = rs.bytes_per_sequence;
	if (!mp_mul_u64(rs.bytes_per_sequence, req->batch_size, &d->recurrent_state_bytes) ||
	    !mp_add_u64(*bytes, d->recurrent_state_bytes, bytes))
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/batch_size",
		                  "the recurrent state of %llu sequences overflows 64 bits",
		                  (unsigned long long)req->batch_size);
	return MP_OK;
}

/*
 * The KV cache when the attention differs per layer (m->attn_per_layer: Gemma 4, Gemma 3n). Each layer with a cache of
 * its own holds K and V rows of its own width, kv_heads_per_gpu x head_dim each (a global layer's
 * global_kv_heads x global_head_dim), for tokens_window tokens in a window layer, tokens_full in the others; a layer
 * of MP_LAYER_KV_SHARED holds none (vLLM: a layer with kv_sharing_target_layer_name allocates no KV cache; transformers
 * Gemma4TextAttention reads shared_kv_states); V rows are of v_head_dim where it is set (MiMo-V2-Flash's 128 beside K's
 * 192). *row_sum gets the bytes of one token in every layer with a cache;
 * *bytes the whole cache of `mult` sequences. False on overflow.
 * Worked example (Gemma4TextConfig's tiny copy: 5 sliding layers of 4 x 256, a full one of 4 x 512, window 8, bf16,
 * batch 2, 24 tokens): 2 x (5 x 4,096 x 8 + 8,192 x 24) = 720,896 bytes (tests/ref/hf/groundtruth.json).
 */
static bool per_layer_kv(const mp_model *m, mp_dtype dt, uint64_t tp, uint64_t tokens_full, uint64_t tokens_window,
                         uint64_t mult, uint64_t *row_sum, uint64_t *bytes)
{
	uint64_t acc = 0;

	*row_sum = 0;
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
		unsigned f = m->layer_flags[i];
		bool global = (f & MP_LAYER_GLOBAL) != 0;
		uint64_t kv = global ? m->global_kv_heads : m->num_kv_heads, hd = global ? m->global_head_dim : m->head_dim;
		uint64_t heads = kv >= tp ? kv / tp : 1, values, row, vrow;

		if (!(f & MP_LAYER_ATTENTION) || (f & MP_LAYER_KV_SHARED))
			continue;
		if (!mp_mul_u64(heads, hd, &values) || !mp_dtype_bytes(dt, values, &row) ||
		    !mp_mul_u64(heads, m->v_head_dim ? m->v_head_dim : hd, &values) || !mp_dtype_bytes(dt, values, &vrow) ||
		    !mp_add_u64(row, vrow, &row) || !mp_add_u64(*row_sum, row, row_sum) ||
		    !mp_muladd_u64(&acc, row, (f & MP_LAYER_WINDOW) ? tokens_window : tokens_full))
			return false;
	}
	return mp_mul_u64(acc, mult, bytes);
}

/*
 * DeepSeek-V4's cache (m->compressed_kv), as transformers 5.24 keeps it (modeling_deepseek_v4.py DeepseekV4HCACache,
 * DeepseekV4CSACache; no serving engine's layout is in the references here), per sequence of `tokens` tokens:
 *   every attention layer: the keys over the window (K = V, one tensor: shared-KV MQA), key_tokens x head_dim in the
 *     KV dtype (key_tokens = min(tokens, window), the window convention of every sliding layer here); a layer of
 *     "sliding_attention" (no compressor) keeps transformers' DynamicSlidingWindowLayer, whose update(kv, kv) stores
 *     the tensor as keys and again as values: twice that;
 *   an HCA layer (rate r = hca_compress_rate): floor(tokens / r) compressed entries of head_dim (KV dtype;
 *     compressed_kv["compressor"]) and the tokens since the last closed window, (tokens mod r) x head_dim for the kv
 *     projection and as many for the gate (buffer_kv, buffer_gate: the projections' outputs, in the compute dtype);
 *   a CSA layer (r = csa_compress_rate): the same with kv and gate of 2 x head_dim (the Ca and Cb series) and, for
 *     the indexer, entries of csa_indexer_head_dim and buffers of 2 x that; once a window has closed (tokens >= r),
 *     the last window's Ca slice, r x head_dim for kv and gate (overlap_kv, overlap_gate), and r x
 *     csa_indexer_head_dim for the indexer's.
 * kv_dt: the keys' and entries' format; act_dt: the buffers'; mult: sequences. *key_row gets the bytes of one token's
 * keys in every layer. False on overflow.
 * Worked example (tests/ref/hf/groundtruth.json, deepseek_v4-default's tiny copy: 3 HCA layers then 1 CSA layer,
 * head_dim 512, indexer 128, rates 4 and 128, window 8, bf16, 2 sequences): at 5 tokens 2 x (3 x (5 x 1,024 +
 * 2 x 5 x 1,024) + 5 x 1,024 + 2 x 1 x 2,560 + 1 x 1,280 + 2 x 4 x 1,280) = 135,680 bytes; at 24 tokens 2 x
 * (3 x (8 x 1,024 + 2 x 24 x 1,024) + 8 x 1,024 + 6 x 1,280 + 2 x 4 x 1,280) = 396,288.
 */
typedef struct compressor {
	uint64_t rate;		  /* tokens per compressed entry (0: no compressor state) */
	uint64_t entry_bytes;	  /* one compressed entry: head_dim (+ the indexer's key) */
	uint64_t open_bytes;	  /* one token of the open window: kv and gate (CSA: of 2 x head_dim and 2 x indexer) */
	uint64_t overlap_bytes;	  /* per token of the last closed window kept for the overlap (CSA), once one closed */
} compressor;

/* One compressed layer's state beyond its keys, of `tokens` tokens, into *acc; false on overflow. */
static bool compressor_state(const compressor *c, uint64_t tokens, uint64_t *acc)
{
	uint64_t entries;

	if (c->rate == 0)
		return true; /* no compressor state without a rate (the reader refuses a rate of 0) */
	entries = tokens / c->rate;
	return mp_muladd_u64(acc, c->entry_bytes, entries) && mp_muladd_u64(acc, c->open_bytes, tokens % c->rate) &&
	       (entries == 0 || mp_muladd_u64(acc, c->overlap_bytes, c->rate));
}

static bool compressed_kv_bytes(const mp_model *m, mp_dtype kv_dt, mp_dtype act_dt, uint64_t tokens,
                                uint64_t key_tokens, uint64_t mult, uint64_t *key_row, uint64_t *bytes)
{
	uint64_t acc = 0, key, idx_key, key2, idx2;
	compressor hca, csa;

	*key_row = 0;
	if (!mp_dtype_bytes(kv_dt, m->head_dim, &key) || !mp_dtype_bytes(kv_dt, m->csa_indexer_head_dim, &idx_key) ||
	    !mp_dtype_bytes(act_dt, m->head_dim, &key2) || !mp_dtype_bytes(act_dt, m->csa_indexer_head_dim, &idx2))
		return false;
	hca = (compressor){m->hca_compress_rate, key, 2 * key2, 0};
	csa = (compressor){m->csa_compress_rate, key + idx_key, 4 * (key2 + idx2), 2 * (key2 + idx2)};
	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++) {
		unsigned f = m->layer_flags[i];
		/* a sliding_attention layer (no compressor) has transformers' plain DynamicSlidingWindowLayer: its
		 * update(kv, kv) keeps the one tensor twice, as keys and as values */
		uint64_t keys = f & (MP_LAYER_CSA | MP_LAYER_HCA) ? key : 2 * key;

		if (!(f & MP_LAYER_ATTENTION))
			continue;
		if (!mp_add_u64(*key_row, keys, key_row) || !mp_muladd_u64(&acc, keys, key_tokens))
			return false;
		if (f & (MP_LAYER_CSA | MP_LAYER_HCA) && !compressor_state(f & MP_LAYER_CSA ? &csa : &hca, tokens, &acc))
			return false;
	}
	return mp_mul_u64(acc, mult, bytes);
}

static uint64_t flagged(const mp_model *m, unsigned want, unsigned not_want)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < m->num_layers && i < MP_MAX_LAYERS; i++)
		n += (m->layer_flags[i] & want) == want && !(m->layer_flags[i] & not_want);
	return n;
}

/* ----- the cache's layouts over the layers. Each says which layers hold a cache and of what kind (`layers`: the
 * counts in mp_kv_detail) and what the cache holds (`bytes`). A new layout is two functions and a row. */

/* What every layout's bytes read. */
typedef struct kv_shape {
	const mp_model *m;
	const mp_inference_req *req;
	const mp_inference_opts *o;
	uint64_t tp;
	uint64_t mult; /* sequences the cache holds apart: batch_size, or 1 for one shared cache */
	uint64_t row;  /* bytes of one token's K and V rows (or MLA latent) in one layer, the uniform layout's */
} kv_shape;

static mp_status kv_overflow(const kv_shape *s, mp_error *err)
{
	return mp_fail_at(err, MP_EOVERFLOW, s->req->json_pointer, "/sequence_length",
	                  "the KV cache for %llu tokens x %llu sequences overflows 64 bits",
	                  (unsigned long long)s->req->sequence_length, (unsigned long long)s->req->batch_size);
}

/* Uniform: every attention layer alike, less those that reuse another's cache; the sliding ones keep the window. */
static void layers_uniform(const mp_model *m, uint64_t tp, mp_kv_detail *d)
{
	/* layers with a KV cache of their own: the attention layers less those that reuse another's */
	uint64_t attn = mp_model_attention_layers(m), own = attn > m->no_kv_layers ? attn - m->no_kv_layers : 0;

	(void)tp;
	d->window_layers = mp_model_sliding_layers(m);
	d->shared_kv_layers = m->no_kv_layers;
	if (d->window_layers > own)
		d->window_layers = own;
	d->full_layers = own - d->window_layers;
}

static mp_status bytes_uniform(const kv_shape *s, mp_kv_detail *d, uint64_t *bytes, mp_error *err)
{
	const mp_model *m = s->m;
	uint64_t acc = 0, t, il = mp_model_indexer_layers(m), wrow = s->row, wt;

	/* sliding MLA layers with a latent of their own width (mp_model.mla_window_latent) */
	if (m->attn_kind == MP_ATTN_MLA && s->o->mla_cache == MP_MLA_LATENT && m->mla_window_latent &&
	    !mp_dtype_bytes(s->req->kv_cache_dtype, m->mla_window_latent, &wrow))
		return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "KV cache width overflows 64 bits");
	if (!mp_mul_u64(s->row, d->full_layers, &d->bytes_per_token) || !mp_mul_u64(wrow, d->window_layers, &wt) ||
	    !mp_add_u64(d->bytes_per_token, wt, &d->bytes_per_token))
		return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "KV cache width overflows 64 bits");
	if (!mp_muladd_u64(&acc, d->full_layers, d->tokens_full) || !mp_mul_u64(acc, s->row, &t) ||
	    !mp_mul_u64(wrow, d->window_layers, &wt) || !mp_muladd_u64(&t, wt, d->tokens_window) ||
	    !mp_mul_u64(t, s->mult, bytes))
		return kv_overflow(s, err);
	if (m->attn_kind == MP_ATTN_MLA && s->o->mla_cache == MP_MLA_LATENT && m->mla_nope_layers) {
		/* NoPE latent layers (mp_model.mla_nope_layers): a row of kv_lora_rank values in place of the full one.
		 * Worked example (kv_lora 16, rope 8, bf16): a row of 32 bytes, not 48. */
		uint64_t nope_row, less, all;

		if (!mp_dtype_bytes(s->req->kv_cache_dtype, m->kv_lora_rank, &nope_row) || nope_row > s->row ||
		    !mp_mul_u64(s->row - nope_row, m->mla_nope_layers, &less) || less > d->bytes_per_token ||
		    !mp_mul_u64(less, d->tokens_full, &all) || !mp_mul_u64(all, s->mult, &all) || all > *bytes)
			return kv_overflow(s, err);
		d->bytes_per_token -= less;
		*bytes -= all;
	}
	if (il) {
		/* DeepSeek sparse attention: each layer with an indexer caches one key of index_head_dim per token
		 * (transformers DynamicIndexedLayer.indexer_keys), on every rank; vLLM keeps it in a cache of its own,
		 * fp8 with a scale per 128 values: here in kv_cache_dtype. Worked example (DeepseekV32Config, 61 layers,
		 * 128 values, bf16): 15,616 bytes per token. */
		uint64_t ib, per_tok, all;

		if (!mp_dtype_bytes(m->indexer_keys_fp32 ? MP_DTYPE_FP32 : s->req->kv_cache_dtype,
		                    m->indexer_cache_values ? m->indexer_cache_values : m->indexer_head_dim, &ib) ||
		    !mp_mul_u64(ib, il, &per_tok) || !mp_muladd_u64(&per_tok, m->indexer_int64_per_token, 8) ||
		    !mp_add_u64(d->bytes_per_token, per_tok, &d->bytes_per_token) ||
		    !mp_mul_u64(per_tok, d->tokens_full, &all) || !mp_mul_u64(all, s->mult, &all) ||
		    !mp_add_u64(*bytes, all, bytes))
			return mp_fail_at(err, MP_EOVERFLOW, s->req->json_pointer, "/sequence_length",
			                  "the indexer keys for %llu tokens overflow 64 bits",
			                  (unsigned long long)s->req->sequence_length);
	}
	return MP_OK;
}

/* Per layer (m->attn_per_layer: Gemma 4, Gemma 3n): the layers' flags say which slide and which share another's
 * cache. */
static void layers_per_layer(const mp_model *m, uint64_t tp, mp_kv_detail *d)
{
	(void)tp;
	d->shared_kv_layers = flagged(m, MP_LAYER_ATTENTION | MP_LAYER_KV_SHARED, 0);
	d->window_layers = m->sliding_window ? flagged(m, MP_LAYER_ATTENTION | MP_LAYER_WINDOW, MP_LAYER_KV_SHARED) : 0;
	d->full_layers = flagged(m, MP_LAYER_ATTENTION, MP_LAYER_KV_SHARED) - d->window_layers;
}

static mp_status bytes_per_layer(const kv_shape *s, mp_kv_detail *d, uint64_t *bytes, mp_error *err)
{
	if (!per_layer_kv(s->m, s->req->kv_cache_dtype, s->tp, d->tokens_full, d->tokens_window, s->mult,
	                  &d->bytes_per_token, bytes))
		return kv_overflow(s, err);
	return MP_OK;
}

/* DeepSeek-V4's compressed cache (m->compressed_kv) over the attention's layers: one key per token (K = V) on every
 * rank (transformers' TP plan keeps V4's attention replicated), the window on every attention layer when there is
 * one. */
static bool attention_per_layer(const mp_model *m)
{
	return m->attn_per_layer && m->attn_kind == MP_ATTN_GQA;
}

static void layers_compressed(const mp_model *m, uint64_t tp, mp_kv_detail *d)
{
	uint64_t attn = mp_model_attention_layers(m);

	if (attention_per_layer(m))
		layers_per_layer(m, tp, d);
	else
		layers_uniform(m, tp, d);
	d->values_per_token_per_layer = m->head_dim;
	d->kv_heads_per_gpu = 1;
	d->kv_head_replication = tp;
	d->window_layers = m->sliding_window ? attn : 0;
	d->full_layers = attn - d->window_layers;
}

static mp_status bytes_compressed(const kv_shape *s, mp_kv_detail *d, uint64_t *bytes, mp_error *err)
{
	mp_dtype act = s->o->compute_dtype != MP_DTYPE_INVALID ? s->o->compute_dtype : MP_DTYPE_BF16;

	if (!compressed_kv_bytes(s->m, s->req->kv_cache_dtype, act, s->req->sequence_length,
	                         d->window_layers ? d->tokens_window : d->tokens_full, s->mult, &d->bytes_per_token,
	                         bytes))
		return kv_overflow(s, err);
	return MP_OK;
}

typedef enum kv_layout_kind { KV_UNIFORM, KV_PER_LAYER, KV_COMPRESSED, KV_LAYOUT_COUNT } kv_layout_kind;

static const struct kv_layout {
	void (*layers)(const mp_model *m, uint64_t tp, mp_kv_detail *d);
	mp_status (*bytes)(const kv_shape *s, mp_kv_detail *d, uint64_t *bytes, mp_error *err);
} kv_layouts[] = {
    [KV_UNIFORM] = {layers_uniform, bytes_uniform},
    [KV_PER_LAYER] = {layers_per_layer, bytes_per_layer},
    [KV_COMPRESSED] = {layers_compressed, bytes_compressed},
};
MP_STATIC_ASSERT(MP_COUNT_OF(kv_layouts) == KV_LAYOUT_COUNT, "a row of kv_layouts per kv_layout_kind");

static kv_layout_kind kv_layout_of(const mp_model *m)
{
	if (m->compressed_kv)
		return KV_COMPRESSED;
	return attention_per_layer(m) ? KV_PER_LAYER : KV_UNIFORM;
}

/* The tokens each sequence's cache holds: whole blocks of the sequence (and of the tokens the model puts before it,
 * mp_model.cache_prefix_tokens) on the full-attention layers, of the window (at most that) on the sliding ones;
 * s->mult the sequences held apart. False when the sum or the rounding overflows. */
static bool kv_tokens(kv_shape *s, mp_kv_detail *d)
{
	const mp_inference_req *req = s->req;
	uint64_t seq = req->sequence_length, window;

	if (!mp_add_u64(seq, s->m->cache_prefix_tokens, &seq))
		return false;

	d->block_size = s->o->kv_block_size ? s->o->kv_block_size : MP_DEFAULT_KV_BLOCK_SIZE;
	if (s->o->length_scope == MP_LENGTH_SHARED) {
		/* llama.cpp: one cache of n_ctx cells shared by the slots; a windowed layer needs the window
		 * of every slot at most */
		s->mult = 1;
		if (!mp_mul_u64(s->m->sliding_window, req->batch_size, &window))
			window = UINT64_MAX;
	} else {
		s->mult = req->batch_size;
		window = s->m->sliding_window;
		/* transformers' DynamicSlidingWindowLayer keeps the last sliding_window - 1 tokens (a window of 1: its slice
		 * [-0:] keeps them all) */
		if (s->o->cache_layout == MP_CACHE_TRANSFORMERS && window)
			window = window >= 2 ? window - 1 : UINT64_MAX;
	}
	d->tokens_full = round_up(seq, d->block_size);
	d->tokens_window = d->window_layers ? round_up(seq < window ? seq : window, d->block_size) : 0;
	return d->tokens_full >= seq;
}

mp_status mp_kv_cache(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *opts, uint64_t *bytes,
                      mp_kv_detail *d, mp_error *err)
{
	static const mp_inference_opts defaults;
	const mp_inference_opts *o = opts ? opts : &defaults;
	kv_shape s = {m, req, o, o->tensor_parallel_size ? o->tensor_parallel_size : (req->num_gpus ? req->num_gpus : 1),
		      0, 0};
	uint64_t k, v, kb = 0, vb = 0;
	kv_layout_kind kind = kv_layout_of(m);
	mp_status st;

	memset(d, 0, sizeof(*d));
	*bytes = 0;
	st = mp_model_validate(m, err);
	if (st != MP_OK)
		return st;
	if (mp_dtype_layout_of(req->kv_cache_dtype).block_values == 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/kv_cache_dtype", "kv_cache_dtype is not a known format");
	layer_rows(m, o->mla_cache, o->cache_layout, s.tp, &k, &v, d);
	if ((k && !mp_dtype_bytes(req->kv_cache_dtype, k, &kb)) || (v && !mp_dtype_bytes(req->kv_cache_dtype, v, &vb)) ||
	    !mp_add_u64(kb, vb, &s.row))
		return mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "KV cache width overflows 64 bits");
	d->values_per_token_per_layer = k + v;
	kv_layouts[kind].layers(m, s.tp, d);
	if (!kv_tokens(&s, d))
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/sequence_length", "sequence_length overflows 64 bits");
	st = kv_layouts[kind].bytes(&s, d, bytes, err);
	if (st != MP_OK)
		return st;
	return add_recurrent_state(m, req, o, s.tp, bytes, d, err);
}

mp_status mp_kv_cache_bytes(const mp_model *m, mp_dtype kv_dtype, uint64_t sequence_length, uint64_t batch_size,
                            uint64_t *out, mp_error *err)
{
	mp_inference_req req;
	mp_inference_opts o;
	mp_kv_detail d;

	memset(&req, 0, sizeof(req));
	memset(&o, 0, sizeof(o));
	req.kv_cache_dtype = kv_dtype;
	req.sequence_length = sequence_length;
	req.batch_size = batch_size;
	o.kv_block_size = 1;
	return mp_kv_cache(m, &req, &o, out, &d, err);
}
