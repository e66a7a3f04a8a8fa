/*
 * activations.c: what one transformer layer keeps for backward, term by term, for one micro-batch on one GPU.
 * Starts from Korthikanti et al. 2022 (arXiv 2205.05198) eq. 1, sbh(34 + 5as/h) for a 16-bit GPT layer, and
 * replaces each of its terms by what PyTorch autograd actually saves for the regime, the attention kernel, the
 * MLP and norm kinds (sources per term below). Pure arithmetic; no layout validation (training.c does it).
 */
#include <string.h>

#include "../core/mp_assert.h"
#include "training_int.h"

bool mp_model_fused_projections(const mp_model *m)
{
	return strcmp(m->model_type, "gpt2") == 0 || strcmp(m->model_type, "falcon") == 0 ||
	       strcmp(m->model_type, "phi3") == 0;
}

bool mp_model_upcasts_softmax(const mp_model *m)
{
	return strcmp(m->model_type, "gpt2") != 0;
}

/*
 * Bytes per token one norm keeps.
 * - LayerNorm (aten native_layer_norm): its input plus fp32 mean and rstd (4 + 4 bytes per token; the CUDA
 *   kernel keeps statistics in the accumulate type). The input is the residual stream: fp32 under autocast.
 * - RMSNorm as transformers writes it (LlamaRMSNorm: x.to(fp32); x * rsqrt(x.pow(2).mean(-1) + eps); then
 *   weight * x.to(input_dtype)): the fp32 input (pow and mul save it), rsqrt (4 per token), and the
 *   normalised tensor in the input dtype that the weight multiply saves.
 */
static uint64_t norm_bytes_per_token(const mp_model *m, const mp_regime_bytes *rb, mp_ck *c)
{
	if (m->norm_kind == MP_NORM_LAYER)
		return mp_ckadd(c, mp_ckmul(c, rb->residual, m->hidden_size), 8);
	return mp_ckadd(c, mp_ckmul(c, 4 + rb->residual, m->hidden_size), 4);
}

/*
 * Bytes per element of a materialised attention score matrix (eager attention), per head and query x key.
 * The scores feed softmax; softmax saves its output (fp32 when it runs in fp32: under autocast softmax is
 * on the fp32 list, Llama-family code asks for dtype=fp32, and the fp32 regime is fp32 anyway). The
 * probabilities are then cast to the compute dtype; with attention dropout, native_dropout saves a one-byte
 * mask and the dropped probabilities (compute dtype) feed the P x V matmul, which saves them; without
 * dropout the matmul saves the cast probabilities (a separate tensor only when softmax ran in fp32).
 * GPT-2 amp_bf16: 4 + 1 + 2 = 7; Korthikanti's 16-bit count is 2 + 1 + 2 = 5 (the 5as/h term).
 */
static uint64_t score_bytes_per_element(const mp_model *m, const mp_training_req *req, const mp_regime_bytes *rb)
{
	bool dropout = m->attention_dropout && !req->no_dropout;
	uint64_t softmax = (rb->amp || rb->compute == 4 || mp_model_upcasts_softmax(m)) ? 4 : rb->compute;
	/* Gemma-2's soft-capping (modeling_gemma2.py eager_attention_forward: scores / softcap, tanh, * softcap):
	 * tanh saves its output, one score-sized tensor in the compute dtype; the scalar divide and multiply save
	 * nothing. Gemma-2-2B bf16: 2 + 4 + 2 = 8 bytes per score instead of 6. */
	uint64_t cap = m->attn_logit_softcapping ? rb->compute : 0;

	if (dropout)
		return cap + softmax + 1 + rb->compute;
	return cap + softmax + (softmax != rb->compute ? rb->compute : 0);
}

/*
 * MLP tensors kept per token for an MLP of width f (already divided by tensor parallelism).
 * - Gated (SwiGLU, transformers LlamaMLP: down(act(gate(x)) * up(x))): act saves its input (gate output),
 *   the product saves act's output and the up output, down saves the product: 4 x f in the compute dtype.
 * - Plain with a fused activation (nn.GELU and friends save their input): the activation input and its
 *   output (the down projection's input): 2 x f.
 * - Plain with gelu_new (transformers NewGELUActivation: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
 *   pow(x, 3))))): pow saves x, tanh saves its output, the final product saves 0.5x and (1 + tanh): 4 x f,
 *   plus the down projection's input: 5 x f in fp32 or pure 16-bit. Under autocast, pow runs in fp32 (it
 *   casts x up), so x^3, tanh, and (1 + tanh) are fp32 and the product is fp32, which the down projection
 *   casts back: 4 (x as fp32) + 4 (tanh) + 4 (1 + tanh) + 2 (0.5x) + 2 (cast product) = 16 bytes x f.
 */
static uint64_t mlp_bytes_per_token(const mp_model *m, const mp_regime_bytes *rb, uint64_t f, mp_ck *c)
{
	if (m->ffn_kind == MP_FFN_GATED)
		return mp_ckmul3(c, 4, rb->compute, f);
	if (!m->composite_activation)
		return mp_ckmul3(c, 2, rb->compute, f);
	if (rb->amp)
		return mp_ckmul(c, 16, f);
	return mp_ckmul3(c, 5, rb->compute, f);
}

/* Inputs kept by the matmuls that read a norm's output: one tensor shared by all of them, except under
 * autocast, where every F.linear / addmm call casts its own 16-bit copy and saves it. */
static uint64_t proj_inputs_per_token(const mp_regime_bytes *rb, uint64_t n_proj, uint64_t h, mp_ck *c)
{
	if (rb->amp)
		return mp_ckmul3(c, n_proj, 2, h);
	return mp_ckmul(c, rb->compute, h);
}

/*
 * What one layer keeps under LoRA and QLoRA, where the base weights are frozen: PyTorch's generated backward saves a
 * matmul's input only when the other operand requires a gradient (tools/autograd: each SavedVariable is stored
 * under should_compute_output), so a frozen base keeps less than full fine-tuning, term by term:
 *  - a frozen base linear keeps nothing of its input. A targeted one's adapter does (peft tuners/lora/layer.py
 *    Linear.forward: x = self._cast_input_dtype(x, lora_A.weight.dtype); result + lora_B(lora_A(dropout(x))) *
 *    scaling): the adapters are fp32 (autocast_adapter_dtype), so over a 16-bit base each targeted module casts
 *    its own fp32 copy of the input (4 bytes per value) and lora_A saves it; under autocast lora_A saves its own
 *    16-bit cast instead (2); over an fp32 base the input itself is shared by the modules that read it. lora_B
 *    saves lora_A's r-wide output (fp32, 16-bit under autocast).
 *  - RMSNorm written out as transformers does (weight * x.to(dtype)): the weight multiply saves the normalised
 *    input only for the weight's gradient, so a frozen norm keeps its fp32 input and rsqrt, 4h + 4 bytes per token
 *    (LayerNorm's fused kernel keeps its input and statistics either way).
 *  - the MLP's down-projection input (act(gate) x up, or the activation's output) is kept only when down is
 *    targeted; eager attention's output copy (o_proj's input) only when o is (SDPA's kernels keep their output
 *    for their own backward).
 * The lm_head input and final norm are in training.c (head_bytes_per_token). Dense GQA models; MoE models keep
 * full fine-tuning's count.
 */
/* Targeted modules among `mask` that read one input: how many, or 1 for any when one fused projection reads it. */
static uint64_t targets_reading(uint32_t t, uint32_t mask, bool one_projection)
{
	uint64_t n = 0;

	for (uint32_t bit = t & mask; bit; bit &= bit - 1)
		n++;
	return one_projection ? n != 0 : n;
}

/* The bytes per value of the input copy lora_A saves: its own 16-bit cast under autocast (2); over a 16-bit base the
 * fp32 cast each targeted module makes (4); over an fp32 base the input itself, shared by the modules reading it. */
typedef struct lora_bytes {
	bool shared;	  /* the targeted modules share one input tensor (fp32 base, no autocast) */
	uint64_t input;	  /* bytes per value of a targeted module's saved input */
	uint64_t rank;	  /* bytes per value of lora_A's r-wide output (fp32, 16-bit under autocast) */
} lora_bytes;

static lora_bytes lora_bytes_of(const mp_regime_bytes *rb)
{
	lora_bytes l = {!rb->amp && rb->compute == 4, 4, 4};

	if (rb->amp)
		l.input = l.rank = 2;
	else if (l.shared)
		l.input = rb->compute;
	return l;
}

/* What a frozen base no longer keeps: RMSNorm's normalised input (the norms keep their fp32 input and rsqrt), eager
 * attention's output copy (o_proj's input), the MLP's down-projection input. */
static void lora_frozen(const mp_model *m, const mp_training_req *req, const mp_regime_bytes *rb, uint64_t tokens,
			uint64_t rep_div, bool eager_out, mp_layer_activations *out, mp_ck *c)
{
	uint64_t tp = mp_or1(req->tensor_parallel_size), h = m->hidden_size, cb = rb->compute;
	uint64_t hq = m->num_heads / tp * m->head_dim, f = m->intermediate_size / tp;
	uint64_t down_full = (rb->amp && m->composite_activation && m->ffn_kind == MP_FFN_PLAIN) ? 2 : cb;

	if (m->norm_kind == MP_NORM_RMS)
		out->norms = mp_ckmul3(c, tokens, mp_or1(m->norms_per_layer), 4 * h + 4) / rep_div;
	if (eager_out)
		out->attention -= mp_min_u64(out->attention, mp_ckmul3(c, tokens, cb, hq));
	out->mlp -= mp_min_u64(out->mlp, mp_ckmul3(c, tokens, down_full, f));
}

static void lora_layer(const mp_model *m, const mp_training_req *req, const mp_regime_bytes *rb, uint64_t tokens,
		       uint64_t rep_div, bool eager_out, mp_layer_activations *out, mp_ck *c)
{
	uint32_t t = req->lora_targets ? req->lora_targets : MP_LORA_ALL;
	uint64_t tp = mp_or1(req->tensor_parallel_size), h = m->hidden_size, cb = rb->compute;
	uint64_t hq = m->num_heads / tp * m->head_dim, f = m->intermediate_size / tp;
	bool fused = mp_model_fused_projections(m);
	lora_bytes l = lora_bytes_of(rb);
	/* targeted modules reading the attention input and the MLP input */
	uint64_t n_attn = targets_reading(t, MP_LORA_Q | MP_LORA_K | MP_LORA_V, fused);
	uint64_t n_mlp_in = targets_reading(t, MP_LORA_GATE | MP_LORA_UP, fused || m->ffn_kind == MP_FFN_PLAIN);
	uint64_t mods = n_attn + n_mlp_in + targets_reading(t, MP_LORA_O | MP_LORA_DOWN, false);
	uint64_t wide, narrow = 0;

	lora_frozen(m, req, rb, tokens, rep_div, eager_out, out, c);
	if (l.shared)
		wide = mp_ckmul(c, cb * h, (n_attn != 0) + (n_mlp_in != 0));
	else
		wide = mp_ckmul3(c, n_attn + n_mlp_in, l.input, h);
	/* o_proj's input: eager's contiguous copy is kept only for a targeted o (shared), or replaced by its cast */
	if (t & MP_LORA_O)
		narrow = mp_ckmul(c, (l.shared && !eager_out) ? 0 : l.input, hq);
	/* a targeted down keeps its input (cast) */
	if (t & MP_LORA_DOWN)
		narrow = mp_ckadd(c, narrow, mp_ckmul(c, l.input, f));
	narrow = mp_ckadd(c, narrow, mp_ckmul3(c, mods, l.rank, req->lora_rank)); /* lora_A outputs */
	out->projection_inputs = mp_ckadd(c, mp_ckmul(c, tokens, wide) / rep_div, mp_ckmul(c, tokens, narrow));
}

/* One layer's shapes on one GPU, what every term below reads. */
typedef struct layer_shape {
	const mp_model *m;
	const mp_training_req *req;
	mp_regime_bytes rb;
	uint64_t tp, h, heads, kv; /* tensor-parallel degree, hidden size, query and KV heads per GPU */
	mp_train_kernel kernel;
} layer_shape;

/* ----- the attention kinds: the bytes per token one attention block keeps (q, k, v as the kernel keeps them, the
 * output, o_proj's input shared with the kernel's saved output, and fp32 log-sum-exp per head for fused kernels:
 * flash / memory-efficient SDPA save q, k, v, out, logsumexp and the RNG seed; torch/nn/attention, aten
 * _scaled_dot_product_flash_attention), and the projections reading the norm's output. A new kind is a function and a
 * row of attention_kinds. */

/* MHA, GQA, MQA. Eager attention keeps contiguous copies of q, k, v made by matmul's reshape, with k and v at the
 * query-head count where they are expanded: eager's repeat_kv, SDPA's math fallback (repeat_interleave inside), or
 * transformers' repeat_kv before a masked SDPA call. */
static uint64_t attention_gqa(const layer_shape *x, mp_ck *c)
{
	uint64_t d = x->m->head_dim, kv_kept = x->kernel.kv_expanded ? x->heads : x->kv, cb = x->rb.compute, par;

	par = mp_ckmul3(c, cb, x->heads + 2 * kv_kept, d);
	par = mp_ckadd(c, par, mp_ckmul3(c, cb, x->heads, d));
	if (!x->kernel.scores)
		par = mp_ckadd(c, par, mp_ckmul(c, 4, x->heads)); /* flash / efficient: the log-sum-exp */
	return par;
}

/* DeepSeek MLA: the latent projections (q_a, kv_a outputs and their RMSNorm inputs), then per-head q, k, v */
static uint64_t attention_mla(const layer_shape *x, mp_ck *c)
{
	const mp_model *m = x->m;
	uint64_t qk = m->qk_nope_head_dim + m->qk_rope_head_dim, vd = m->v_head_dim, cb = x->rb.compute, par;

	par = mp_ckmul(c, cb, m->q_lora_rank + m->kv_lora_rank + m->qk_rope_head_dim);
	par = mp_ckadd(c, par, mp_ckmul(c, 4, m->q_lora_rank + m->kv_lora_rank));
	par = mp_ckadd(c, par, mp_ckmul3(c, cb, x->heads, 2 * qk + 2 * vd));
	if (x->req->attention == MP_TRAIN_ATTENTION_FUSED)
		par = mp_ckadd(c, par, mp_ckmul(c, 4, x->heads));
	return par;
}

static const struct attention_kind {
	uint64_t (*bytes_per_token)(const layer_shape *x, mp_ck *c);
	uint64_t projections; /* separate projections reading the attention's input (a fused one: 1) */
} attention_kinds[] = {
    [MP_ATTN_GQA] = {attention_gqa, 3},
    [MP_ATTN_MLA] = {attention_mla, 2},
};
MP_STATIC_ASSERT(MP_COUNT_OF(attention_kinds) == MP_ATTN_MLA + 1, "a row of attention_kinds per mp_attn_kind");

/* ----- the feed-forward kinds, each filling its own term of *out. */

/* Dense: mlp_bytes_per_token over the MLP's width on this GPU. */
static void ffn_dense(const layer_shape *x, uint64_t tokens, mp_layer_activations *out, mp_ck *c)
{
	out->mlp = mp_ckmul(c, tokens, mlp_bytes_per_token(x->m, &x->rb, x->m->intermediate_size / x->tp, c));
}

/* MoE. Router (transformers MixtralSparseMoeBlock): router logits in the compute dtype, fp32 softmax output, top-k
 * weights and int64 indices. Each token is dispatched to k experts: the gathered input (16-bit cast under autocast),
 * the expert MLP's tensors, and the expert output scaled by its routing weight (the multiply saves the output).
 * Shared experts are a dense MLP on every token. */
static void ffn_moe(const layer_shape *x, uint64_t tokens, mp_layer_activations *out, mp_ck *c)
{
	const mp_model *m = x->m;
	uint64_t k = m->num_experts_per_tok, e = m->num_experts, cb = x->rb.compute, per;

	per = mp_ckadd(c, mp_ckmul(c, cb + 4, e), 16 * k);
	per = mp_ckadd(c, per, mp_ckmul(c, k, mp_ckmul(c, 2 * cb, x->h)));
	per = mp_ckadd(c, per, mp_ckmul(c, k, mlp_bytes_per_token(m, &x->rb, m->moe_intermediate_size, c)));
	if (m->shared_expert_intermediate_size)
		per = mp_ckadd(c, per, mlp_bytes_per_token(m, &x->rb, m->shared_expert_intermediate_size / x->tp, c));
	out->moe = mp_ckmul(c, tokens, per);
}

/* The norms (norms_per_layer, replicated across TP unless sequence parallel) and the inputs of the
 * column-parallel projections (Korthikanti: 2sbh for QKV, 2sbh for the MLP input). The router of an MoE block
 * reads the norm output, its experts dispatched copies (ffn_moe); a parallel block with one norm reads it once. */
static void norms_and_inputs(const layer_shape *x, uint64_t tokens, uint64_t rep_div, mp_layer_activations *out,
			     mp_ck *c)
{
	const mp_model *m = x->m;
	bool fused = mp_model_fused_projections(m), one_read = m->parallel_block && m->norms_per_layer == 1 && !x->rb.amp;
	uint64_t n_attn = fused ? 1 : attention_kinds[m->attn_kind].projections;
	uint64_t n_mlp = fused || m->ffn_kind == MP_FFN_PLAIN || m->num_experts > 0 ? 1 : 2;
	uint64_t rep = mp_ckmul(c, mp_or1(m->norms_per_layer), norm_bytes_per_token(m, &x->rb, c));

	out->norms = mp_ckmul(c, tokens, rep) / rep_div;
	if (one_read)
		rep = proj_inputs_per_token(&x->rb, 1, x->h, c);
	else
		rep = mp_ckadd(c, proj_inputs_per_token(&x->rb, n_attn, x->h, c),
			       proj_inputs_per_token(&x->rb, n_mlp, x->h, c));
	out->projection_inputs = mp_ckmul(c, tokens, rep) / rep_div;
}

mp_status mp_layer_activation_bytes(const mp_model *m, const mp_training_req *req, uint64_t batch, uint64_t seq,
				    mp_layer_activations *out, mp_error *err)
{
	uint64_t tp = mp_or1(req->tensor_parallel_size), tokens;
	layer_shape x = {
	    .m = m,
	    .req = req,
	    .rb = mp_regime_bytes_of(req->precision),
	    .tp = tp,
	    .h = m->hidden_size,
	    .heads = m->num_heads / tp,
	    .kv = m->num_kv_heads >= tp ? m->num_kv_heads / tp : 1,
	    .kernel = mp_train_attention_kernel(m, req, seq),
	};
	uint64_t rep_div = req->sequence_parallel ? tp : 1;
	bool moe = m->num_experts > 0;
	mp_ck c = { false };

	memset(out, 0, sizeof(*out));
	if (MP_NEVER((unsigned)m->attn_kind >= MP_COUNT_OF(attention_kinds)))
		return mp_fail(err, MP_EINTERNAL, "", "activations: attention kind %d has no row", (int)m->attn_kind);
	tokens = mp_ckmul(&c, batch, seq);
	norms_and_inputs(&x, tokens, rep_div, out, &c);
	out->attention = mp_ckmul(&c, tokens, attention_kinds[m->attn_kind].bytes_per_token(&x, &c));
	/* Score matrices: batch x heads x s x s (the causal half is materialised too), kept by eager attention and by
	 * SDPA's math fallback (aten _scaled_dot_product_attention_math: _safe_softmax saves its output, which the
	 * P x V matmul saves too; dropout adds its mask and output as eager's does). */
	if (x.kernel.scores)
		out->attention_scores = mp_ckmul(&c, mp_ckmul3(&c, batch, x.heads, mp_ckmul(&c, seq, seq)),
						 score_bytes_per_element(m, req, &x.rb));
	(moe ? ffn_moe : ffn_dense)(&x, tokens, out, &c);
	/* Dropout masks after the attention and MLP outputs (one byte per value; Korthikanti's 2 x sbh). */
	if (m->hidden_dropout && !req->no_dropout)
		out->dropout_masks = mp_ckmul3(&c, tokens, 2, x.h) / rep_div;
	/* LoRA / QLoRA: a frozen base keeps less (see lora_layer) */
	if (req->finetune != MP_FINETUNE_FULL && !moe && m->attn_kind == MP_ATTN_GQA)
		lora_layer(m, req, &x.rb, tokens, rep_div, x.kernel.scores, out, &c);

	out->total = out->norms;
	out->total = mp_ckadd(&c, out->total, out->projection_inputs);
	out->total = mp_ckadd(&c, out->total, out->attention);
	out->total = mp_ckadd(&c, out->total, out->attention_scores);
	out->total = mp_ckadd(&c, out->total, out->mlp);
	out->total = mp_ckadd(&c, out->total, out->moe);
	out->total = mp_ckadd(&c, out->total, out->dropout_masks);
	if (c.ovf)
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/micro_batch_size",
			       "activation bytes of one layer overflow 64 bits at this batch and sequence length");
	return MP_OK;
}

const char *mp_activation_formula_name(mp_activation_formula f)
{
	static const char *const names[] = {
	    [MP_FORMULA_KORTHIKANTI] = "korthikanti",
	    [MP_FORMULA_KORTHIKANTI_FUSED] = "korthikanti_fused",
	    [MP_FORMULA_ZERO] = "zero",
	    [MP_FORMULA_MEGATRON_GATED] = "megatron_gated",
	};
	MP_STATIC_ASSERT(MP_COUNT_OF(names) == MP_FORMULA_COUNT, "a name per mp_activation_formula");

	return (unsigned)f < MP_FORMULA_COUNT ? names[f] : "invalid";
}

mp_status mp_activation_formula_bytes(const mp_model *m, uint64_t b, uint64_t s, mp_activation_formula f,
				      uint64_t *out, mp_error *err)
{
	mp_ck c = { false };
	uint64_t sbhl = mp_ckmul(&c, mp_ckmul3(&c, s, b, m->hidden_size), m->num_layers);
	uint64_t ffn = m->intermediate_size ? m->intermediate_size : m->moe_intermediate_size;

	switch (f) {
	case MP_FORMULA_KORTHIKANTI:
		/* sbh(34 + 5as/h) L = 34 sbhL + 5 a s^2 b L */
		*out = mp_ckadd(&c, mp_ckmul(&c, sbhl, 34),
				mp_ckmul(&c, mp_ckmul3(&c, 5, m->num_heads, mp_ckmul(&c, s, s)), mp_ckmul(&c, b, m->num_layers)));
		break;
	case MP_FORMULA_KORTHIKANTI_FUSED:
		*out = mp_ckmul(&c, sbhl, 34);
		break;
	case MP_FORMULA_ZERO:
		*out = mp_ckmul(&c, sbhl, 24);
		break;
	case MP_FORMULA_MEGATRON_GATED:
		/* sbh(18 + 4 ffn/h) L = 18 sbhL + 4 s b ffn L */
		*out = mp_ckadd(&c, mp_ckmul(&c, sbhl, 18),
				mp_ckmul(&c, mp_ckmul3(&c, 4, s, b), mp_ckmul(&c, ffn, m->num_layers)));
		break;
	default:
		return mp_fail(err, MP_EINVAL, "/formula", "unknown activation formula");
	}
	if (c.ovf)
		return mp_fail(err, MP_EOVERFLOW, "/micro_batch_size", "the formula's value overflows 64 bits");
	return MP_OK;
}
