/*
 * training_int.h: helpers shared by training.c and activations.c only (not part of the public contract):
 * the byte widths a precision regime implies and sticky-overflow arithmetic, so long sums stay readable.
 */
#ifndef MP_TRAINING_INT_H
#define MP_TRAINING_INT_H

#include "memplan.h"

/* Byte widths of a regime. compute: matmul inputs and outputs; residual: the residual stream between
 * layers (fp32 under autocast, because fp32 + bf16 promotes to fp32); amp: torch.autocast casts each
 * matmul's inputs (activations and weights) to 16 bits and runs softmax, layer_norm and pow in fp32
 * (PyTorch autocast op lists, docs "CUDA Ops that can autocast to float32"). */
typedef struct mp_regime_bytes {
	uint64_t compute;
	uint64_t residual;
	bool amp;
} mp_regime_bytes;

static inline mp_regime_bytes mp_regime_bytes_of(mp_precision p)
{
	mp_regime_bytes r = { 2, 2, false };

	if (p == MP_PRECISION_FP32) {
		r.compute = r.residual = 4;
	} else if (p == MP_PRECISION_AMP_BF16 || p == MP_PRECISION_AMP_FP16) {
		r.residual = 4;
		r.amp = true;
	}
	return r;
}

/* Sticky-overflow arithmetic: once ck->ovf is set every result is meaningless and the caller fails. */
typedef struct mp_ck {
	bool ovf;
} mp_ck;

static inline uint64_t mp_ckmul(mp_ck *c, uint64_t a, uint64_t b)
{
	uint64_t r;

	if (!mp_mul_u64(a, b, &r)) {
		c->ovf = true;
		return 0;
	}
	return r;
}

static inline uint64_t mp_ckadd(mp_ck *c, uint64_t a, uint64_t b)
{
	uint64_t r;

	if (!mp_add_u64(a, b, &r)) {
		c->ovf = true;
		return 0;
	}
	return r;
}

static inline uint64_t mp_ckmul3(mp_ck *c, uint64_t a, uint64_t b, uint64_t d)
{
	return mp_ckmul(c, mp_ckmul(c, a, b), d);
}

static inline uint64_t mp_max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static inline uint64_t mp_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t mp_or1(uint64_t v)
{
	return v ? v : 1;
}

/* Whether the model's projections are fused (one matmul for q/k/v, one for the MLP input): GPT-2's c_attn,
 * Falcon's query_key_value, Phi-3's qkv_proj and gate_up_proj. Under autocast each matmul casts its own
 * input, so separate projections keep separate 16-bit copies. */
bool mp_model_fused_projections(const mp_model *m);
/* Whether attention softmax runs in fp32 regardless of the compute dtype: Llama-family eager attention calls
 * softmax(..., dtype=torch.float32); GPT-2's does not (modeling_llama.py / modeling_gpt2.py). */
bool mp_model_upcasts_softmax(const mp_model *m);

/*
 * The attention kernel one training step runs (issue 15): eager attention as requested, or for "fused" the
 * kernel SDPA picks (mp_sdpa_kernel_of) with the mask transformers passes: a sliding window shorter than the
 * sequence is an explicit mask (transformers then repeats k/v to every query head). scores: the score matrices
 * are kept for backward (eager, or SDPA's math fallback: fp32 with grouped-query heads); kv_expanded: k and v are
 * kept at the query-head count.
 */
typedef struct mp_train_kernel {
	bool scores;
	bool kv_expanded;
	const char *name;	/* "eager", "flash", "efficient", "math" (static string) */
} mp_train_kernel;

static inline mp_train_kernel mp_train_attention_kernel(const mp_model *m, const mp_training_req *req, uint64_t seq)
{
	mp_regime_bytes rb = mp_regime_bytes_of(req->precision);
	uint64_t tp = req->tensor_parallel_size ? req->tensor_parallel_size : 1;
	uint64_t heads = m->num_heads / tp, kv = m->num_kv_heads >= tp ? m->num_kv_heads / tp : 1;
	bool masked = m->sliding_window && m->sliding_window < seq;
	mp_train_kernel k = { true, true, "eager" };
	mp_sdpa_kernel s;

	if (req->attention == MP_TRAIN_ATTENTION_EAGER)
		return k;
	/* under autocast SDPA runs in 16 bits (it is on autocast's lower-precision list) */
	s = mp_sdpa_kernel_of(m, rb.amp ? 2 : rb.compute, heads, kv, masked);
	k.name = mp_sdpa_kernel_name(s);
	k.scores = s == MP_SDPA_MATH;
	k.kv_expanded = s == MP_SDPA_MATH || (masked && m->attn_kind == MP_ATTN_GQA && kv < heads);
	return k;
}

#endif /* MP_TRAINING_INT_H */
