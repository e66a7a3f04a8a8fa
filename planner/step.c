/*
 * step.c: transformer step analysis. Builds the per-layer operation list of one prefill or decode step of a
 * model (norms, QKV, attention, output projection, MLP or experts, residuals, head), places each on the
 * device's roofline (roofline.c) and sums the floors. Reads mp_model's fields only; no I/O, no allocation.
 * Sources: the model shapes as transformers builds them (modeling_llama.py, modeling_mixtral.py,
 * modeling_deepseek_v3.py, the recurrent mixers of planner/recurrent.c); MoE expert coverage assumes uniform routing;
 * layer patterns (hybrids) decide which layers attend, run a recurrent mixer or hold a feed-forward block.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "memplan.h"

/* A product's fused matrices of one count: their weights on one rank summed, the first one's input width. */
typedef struct product_group {
	uint64_t count, k, weights;
	mp_tensor_class cls;
	bool own;        /* one MP_TF_OWN_INPUT matrix (and those identical to it) */
	uint8_t product; /* mp_step_product */
} product_group;

#define MAX_GROUPS 48

typedef struct builder {
	const mp_model *m;
	const mp_step_req *req;
	const mp_device *d;
	mp_step *s;
	mp_error *err;
	mp_dtype w, act, kv;
	/* per tensor class (mp_step_req.weights): the matrices' format, and the bytes each weight costs in it, scales
	 * and zero points included (0: a plain float format, its own size) */
	mp_dtype fmt[MP_TC_COUNT];
	double bytes_per_weight[MP_TC_COUNT];
	uint64_t tokens; /* rows of every per-token operation */
	uint64_t tp;     /* tensor-parallel ranks the inventory's matrices are split over */
	bool matmuls_only;
	size_t ngroups;  /* the step's matrix products (group_products) */
	product_group groups[MAX_GROUPS];
} builder;

static bool plain_float(mp_dtype dt)
{
	return dt == MP_DTYPE_FP32 || dt == MP_DTYPE_BF16 || dt == MP_DTYPE_FP16;
}

/* The classes' formats from the plan's whole-model weights: a tied lm_head reads the embedding matrix. */
static void class_formats(builder *b, const mp_weights *w)
{
	for (int c = 0; c < MP_TC_COUNT; c++) {
		b->fmt[c] = b->w;
		b->bytes_per_weight[c] = 0;
	}
	if (w == NULL)
		return;
	for (int c = 0; c < MP_TC_COUNT; c++) {
		const mp_weight_class_bytes *k = &w->cls[c];

		if (c == MP_TC_LM_HEAD && k->parameters == 0)
			k = &w->cls[MP_TC_EMBEDDINGS];
		if (mp_dtype_layout_of(k->format).block_values == 0)
			continue;
		b->fmt[c] = k->format;
		if (!plain_float(k->format) && k->parameters > 0)
			b->bytes_per_weight[c] = (double)k->bytes / (double)k->parameters;
	}
}

/* Bytes of n weights of class c (per GPU), as the plan stores them. false on overflow. */
static bool class_bytes(const builder *b, mp_tensor_class c, uint64_t n, uint64_t *out)
{
	if (b->bytes_per_weight[c] > 0) {
		double v = (double)n * b->bytes_per_weight[c];

		if (!(v < 1.8e19))
			return false;
		*out = (uint64_t)llround(v);
		return true;
	}
	return mp_dtype_bytes(b->fmt[c], n, out);
}

static mp_status add(builder *b, const char *name, uint64_t count, const mp_op *op, uint64_t weight_bytes)
{
	mp_step_op *so;
	mp_status st;

	if (count == 0)
		return MP_OK;
	if (b->s->nops >= MP_STEP_MAX_OPS)
		return mp_fail(b->err, MP_EINTERNAL, "", "step analysis: more than %d operations", MP_STEP_MAX_OPS);
	so = &b->s->ops[b->s->nops];
	memset(so, 0, sizeof(*so));
	so->name = name; /* a literal */
	so->count = count;
	so->op = *op;
	so->weight_bytes = weight_bytes;
	so->fixed_bytes = weight_bytes;
	st = mp_roofline(b->d, op, &so->roof, b->err);
	if (st != MP_OK) {
		/* an operation's overflow names no field of its own: the step's sizes (batch x tokens) drive it */
		if (b->err && b->err->field[0] == '\0') {
			char msg[sizeof(b->err->message)];

			memcpy(msg, b->err->message, sizeof(msg)); /* never format a buffer into itself */
			mp_fail_at(b->err, st, b->req->json_pointer,
			           b->s->phase == MP_PHASE_DECODE ? "/context_tokens" : "/prompt_tokens", "%s", msg);
		}
		return st;
	}
	so->time_seconds = (double)count * so->roof.time_seconds;
	b->s->nops++;
	return MP_OK;
}

/* A linear layer k -> n applied to `rows` tokens: weights in their class's format (b->fmt), activations in b->act.
 * A quantised class (scales, zero points) is one product whose bytes are the activations in and out and the
 * weights as stored (b->bytes_per_weight); the math runs in the activations' type (weight-only quantisation
 * dequantises into it; fp32 weights run in fp32). */
static mp_status linear(builder *b, const char *name, mp_tensor_class c, uint64_t count, uint64_t rows, uint64_t k,
                       uint64_t n)
{
	mp_op op;
	uint64_t wb = 0, kn, ab = 0, cb = 0, mk, mn;

	if (k == 0 || n == 0)
		return MP_OK;
	if (!mp_mul_u64(k, n, &kn) || !class_bytes(b, c, kn, &wb))
		return mp_model_overflow(b->m, "a layer's weight bytes", b->err);
	memset(&op, 0, sizeof(op));
	op.dtype = b->act;
	if (b->bytes_per_weight[c] > 0) {
		op.kind = MP_OP_RAW;
		op.unit = MP_UNIT_MATRIX;
		op.compute_dtype = b->fmt[c] == MP_DTYPE_FP32 ? MP_DTYPE_FP32 : b->act;
		/* fp8 weights on a device with fp8 tensor cores run W8A8: the activations are quantised per token and
		 * the product runs at the fp8 peak (vLLM 0.11 Fp8LinearMethod: cutlass_scaled_mm from compute
		 * capability 8.9; below it, Marlin's weight-only fp8, dequantised into the activations' type) */
		if ((b->fmt[c] == MP_DTYPE_FP8_E4M3 || b->fmt[c] == MP_DTYPE_FP8_E5M2) && b->d &&
		    b->d->peak_flops_per_second[b->fmt[c]] > 0)
			op.compute_dtype = b->fmt[c];
		op.flops = 2.0 * (double)rows * (double)k * (double)n;
		if (!mp_mul_u64(rows, k, &mk) || !mp_dtype_bytes(b->act, mk, &ab) || !mp_mul_u64(rows, n, &mn) ||
		    !mp_dtype_bytes(b->act, mn, &cb) || !mp_add_u64(wb, ab, &op.bytes) || !mp_add_u64(op.bytes, cb, &op.bytes))
			return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size",
			               "a layer's bytes overflow 64 bits");
		return add(b, name, count, &op, wb);
	}
	op.kind = MP_OP_MATMUL;
	op.a_dtype = b->act;
	op.b_dtype = b->fmt[c];
	op.c_dtype = b->act;
	op.m = rows;
	op.k = k;
	op.n = n;
	return add(b, name, count, &op, wb);
}

/*
 * The matrix products of the step, from the model's inventory (planner/inventory.c), grouped once per step
 * (group_products): the tensors of one step product that read the same input are one product (q, k and v: one "qkv"
 * of k = hidden, n = their rows); tensors a different number of layers hold (Gemma 4's global layers, KV-shared layers
 * without k and v) are products of their own; a tensor marked MP_TF_OWN_INPUT (Kimi's two gates) is one by itself,
 * counted together with identical ones. Weights are per rank (mp_tensor_per_rank at the step's tensor-parallel size).
 */
static mp_status group_products(builder *b)
{
	const mp_inventory *inv = &b->m->inv;
	size_t size = mp_inventory_size(inv);

	b->ngroups = 0;
	for (size_t i = 0; i < size; i++) {
		const mp_tensor *t = mp_inventory_at(inv, i);
		uint64_t r, c, w, count = t->uses ? t->uses : t->count;
		bool own = (t->flags & MP_TF_OWN_INPUT) != 0;
		product_group *g = NULL;

		if (t->step == MP_STEP_NONE || (t->flags & (MP_TF_BUFFER | MP_TF_UNCOUNTED)))
			continue;
		mp_tensor_per_rank(t, b->tp, &r, &c);
		if (!mp_mul_u64(r, c, &w))
			return mp_model_overflow(b->m, "a layer's weight bytes", b->err);
		for (size_t j = 0; j < b->ngroups && g == NULL; j++) {
			product_group *q = &b->groups[j];

			if (q->product == t->step &&
			    (own ? q->own && q->k == c && q->weights == w : !q->own && q->count == count))
				g = q;
		}
		if (g == NULL) {
			if (b->ngroups == MAX_GROUPS)
				return mp_fail(b->err, MP_EINTERNAL, "", "step analysis: more than %d matrix products",
				               MAX_GROUPS);
			g = &b->groups[b->ngroups++];
			*g = (product_group){own ? 0 : count, c, 0, mp_tensor_format_class(t), own, (uint8_t)t->step};
		}
		if (own) {
			g->weights = w;
			g->count += count;
		} else if (!mp_add_u64(g->weights, w, &g->weights)) {
			return mp_model_overflow(b->m, "a layer's weight bytes", b->err);
		}
	}
	return MP_OK;
}

/* The products of step product p (grouped by group_products), each over `rows` tokens (the head: one per
 * sequence). */
static mp_status product_ops(builder *b, mp_step_product p, uint64_t rows)
{
	for (size_t j = 0; j < b->ngroups; j++) {
		const product_group *g = &b->groups[j];
		mp_status st;

		if (g->product != p)
			continue;
		st = linear(b, mp_step_product_name(p), g->cls, g->count, rows, g->k, g->weights / g->k);
		if (st != MP_OK)
			return st;
	}
	return MP_OK;
}

static mp_status vector_op(builder *b, const char *name, uint64_t count, mp_op_kind kind, uint64_t rows, uint64_t cols,
                           uint64_t inputs, double flops_per_element)
{
	mp_op op;
	mp_status st;
	uint64_t fixed = 0;
	size_t before;

	if (b->matmuls_only)
		return MP_OK;
	memset(&op, 0, sizeof(op));
	op.kind = kind;
	op.dtype = b->act;
	op.rows = rows;
	op.cols = cols;
	if (kind == MP_OP_ELEMENTWISE) {
		if (!mp_mul_u64(rows, cols, &op.elements))
			return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "element count overflows 64 bits");
		op.inputs = inputs;
		op.outputs = 1;
		op.flops_per_element = flops_per_element;
	}
	before = b->s->nops;
	st = add(b, name, count, &op, 0);
	/* a norm also reads its weight vector (cols values; LayerNorm's bias too) whatever the batch */
	if (st == MP_OK && b->s->nops > before && (kind == MP_OP_RMSNORM || kind == MP_OP_LAYERNORM) &&
	    mp_dtype_bytes(b->act, kind == MP_OP_LAYERNORM ? 2 * cols : cols, &fixed))
		b->s->ops[b->s->nops - 1].fixed_bytes = fixed;
	return st;
}

/* Layers whose MLP is a routed MoE (deepseek first_k_dense_replace, qwen2_moe decoder_sparse_step, mlp_only_layers,
 * mlp_layer_types and the other per-layer masks: mp_model_is_moe_layer). */
static uint64_t moe_layers(const mp_model *m)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < m->num_layers; i++)
		n += mp_model_is_moe_layer(m, i);
	return n;
}

/*
 * The recurrent mixers of one step, per GPU (planner/recurrent.c's shapes; vLLM's kernels): the input projection,
 * the scan (or linear-attention update) over each sequence's state, the output projection. The scan reads and
 * writes each sequence's state once per decode step (prefill: writes it once, after the chunked scan), plus its
 * conv inputs and outputs; its FLOPs are 6 per state value per token (the decay multiply, the rank-1 update's
 * multiply-add and the readout's multiply-add: Mamba's selective scan, arXiv 2312.00752 sec. 3.3; the delta rule of
 * arXiv 2412.06464 eq. 10 has the same terms) and 2 per conv tap. The state traffic counts as KV reads (the state is
 * in kv_cache_bytes). Worked example (tests/test_roofline.c): mamba-130m decode, batch 1: 24 layers x (1536 x 16 x 6 +
 * 1536 x 4 x 2) = 3,833,856 scan FLOPs, reading and writing 24 x 107,520 state bytes twice over.
 */
static mp_status recurrent_ops(builder *b, const mp_model *full, const mp_model *m, mp_phase phase,
                               const mp_step_req *req, uint64_t tp)
{
	const mp_ssm *s = &m->ssm;
	uint64_t S = mp_model_ssm_layers(full), h = m->hidden_size, out_in = 0, conv = 0, tokens, n;
	uint64_t kd = s->n_groups * s->d_state, vd = s->n_heads * s->head_dim, sv;
	mp_recurrent_state rs;
	mp_dtype state_dtype = s->state_in_model_dtype ? b->act : MP_DTYPE_FP32;
	uint64_t per_value = state_dtype == MP_DTYPE_FP32 ? 4 : 2;
	mp_op op;
	mp_status st;
	double state_bytes, io_bytes;

	if (S == 0)
		return MP_OK;
	switch (s->kind) {
	case MP_SSM_MAMBA1:
		out_in = s->d_inner;
		conv = s->d_inner;
		break;
	case MP_SSM_MAMBA2:
		conv = s->d_inner + 2 * s->n_groups * s->d_state;
		out_in = s->d_inner;
		break;
	case MP_SSM_GATED_DELTANET:
		conv = 2 * kd + vd;
		out_in = vd;
		break;
	case MP_SSM_KDA:
		conv = 3 * vd;
		out_in = vd;
		break;
	case MP_SSM_LIGHTNING:
		out_in = vd;
		break;
	default: /* short conv */
		conv = h;
		out_in = h;
		break;
	}
	st = product_ops(b, MP_STEP_MIXER_IN, b->tokens);
	if (st == MP_OK)
		st = product_ops(b, MP_STEP_MIXER_X_DT, b->tokens);
	if (st == MP_OK)
		st = product_ops(b, MP_STEP_MIXER_GATES, b->tokens);
	if (st == MP_OK)
		st = product_ops(b, MP_STEP_MIXER_OUT, b->tokens);
	if (st != MP_OK || b->matmuls_only)
		return st;
	st = mp_recurrent_state_bytes(full, b->act, MP_DTYPE_FP32, tp, &rs, b->err);
	if (st != MP_OK)
		return st;
	sv = rs.ssm_bytes_per_layer / per_value;
	tokens = phase == MP_PHASE_DECODE ? 1 : req->prompt_tokens;
	state_bytes = (double)req->batch_size * ((phase == MP_PHASE_DECODE ? 2.0 : 1.0) *
	                                         (double)(rs.ssm_bytes_per_layer + rs.conv_bytes_per_layer));
	if (!mp_mul_u64(b->tokens, conv + out_in, &n) || !mp_dtype_bytes(b->act, n, &n))
		return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "scan bytes overflow 64 bits");
	io_bytes = (double)n;
	memset(&op, 0, sizeof(op));
	op.kind = MP_OP_RAW;
	op.unit = MP_UNIT_VECTOR;
	op.dtype = b->act;
	op.compute_dtype = state_dtype;
	op.flops = (double)req->batch_size * (double)tokens *
	           (6.0 * (double)sv + 2.0 * (double)conv * (double)(s->conv_kernel ? s->conv_kernel : 0));
	op.bytes = (uint64_t)llround(state_bytes + io_bytes);
	st = add(b, "mixer_scan", S, &op, 0);
	if (st == MP_OK)
		b->s->kv_read_bytes += (double)S * state_bytes;
	return st;
}

/* DeepSeek sparse attention's lightning indexer on the layers that run one (planner/model.c names its weights): its
 * projections, and the scoring of every cached key by every indexer head (index_head_dim wide, the keys read once
 * per step in kv_cache_dtype). `pairs` is the query-key pairs of full causal attention. */
static mp_status indexer_ops(builder *b, const mp_model *m, mp_phase phase, const mp_step_req *req, double pairs,
                             uint64_t kv_tokens)
{
	uint64_t IL = mp_model_indexer_layers(m), kb = 0, t;
	mp_op op;
	mp_status st;

	(void)phase;
	st = product_ops(b, MP_STEP_INDEXER_Q, b->tokens);
	if (st == MP_OK)
		st = product_ops(b, MP_STEP_INDEXER_K, b->tokens);
	if (st != MP_OK)
		return st;
	if (!mp_mul_u64(req->batch_size, kv_tokens, &t) || !mp_mul_u64(t, m->indexer_head_dim, &t) ||
	    !mp_dtype_bytes(b->kv, t, &kb))
		return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "indexer bytes overflow 64 bits");
	memset(&op, 0, sizeof(op));
	op.kind = MP_OP_RAW;
	op.unit = MP_UNIT_MATRIX;
	op.dtype = b->act;
	op.flops = 2.0 * (double)req->batch_size * (double)m->indexer_heads * pairs * (double)m->indexer_head_dim;
	op.bytes = kb;
	st = add(b, "indexer", IL, &op, 0);
	if (st == MP_OK)
		b->s->kv_read_bytes += (double)IL * (double)kb;
	return st;
}

static mp_status attention_ops(builder *b, const mp_model *m, mp_phase phase, const mp_step_req *req)
{
	uint64_t L = mp_model_attention_layers(m), local = mp_model_sliding_layers(m), q_tokens, kv_tokens;
	mp_op op;
	mp_status st;

	if (L == 0)
		return MP_OK; /* a recurrent model: no attention layer */
	if (local > L)
		local = L;
	q_tokens = phase == MP_PHASE_DECODE ? 1 : req->prompt_tokens;
	kv_tokens = phase == MP_PHASE_DECODE ? req->context_tokens + 1 : req->prompt_tokens;

	if (m->attn_kind == MP_ATTN_MLA) {
		uint64_t lat = m->kv_lora_rank + m->qk_rope_head_dim;
		double pairs, flops;
		uint64_t bytes = 0, t;

		st = product_ops(b, MP_STEP_Q_A, b->tokens);
		if (st == MP_OK)
			st = product_ops(b, MP_STEP_Q_B, b->tokens);
		if (st == MP_OK)
			st = product_ops(b, MP_STEP_Q, b->tokens);
		if (st == MP_OK)
			st = product_ops(b, MP_STEP_KV_A, b->tokens);
		if (st == MP_OK)
			st = product_ops(b, MP_STEP_KV_B, b->tokens);
		if (st != MP_OK || b->matmuls_only)
			return st;
		/* Absorbed MLA (DeepSeek-V2 sec. 2.1.2): every head scores the shared latent (kv_lora + rope wide)
		 * and sums it (kv_lora wide); the cache holds one latent per token. */
		pairs = phase == MP_PHASE_DECODE ? (double)kv_tokens : (double)q_tokens * ((double)q_tokens + 1) / 2;
		if (m->indexer_head_dim && m->indexer_topk) {
			/* DeepSeek sparse attention (DeepSeek-V3.2, arXiv 2512.02556 sec. 2.1): each query attends to the
			 * index_topk keys its indexer selects; the indexer itself scores every key */
			double K = (double)m->indexer_topk, T = (double)q_tokens, all = pairs;

			pairs = phase == MP_PHASE_DECODE ? fmin((double)kv_tokens, K)
			        : T <= K                 ? pairs
			                                 : K * (K + 1) / 2 + (T - K) * K;
			st = indexer_ops(b, m, phase, req, all, kv_tokens);
			if (st != MP_OK)
				return st;
		}
		flops = 2.0 * (double)req->batch_size * (double)m->num_heads * pairs * (double)(lat + m->kv_lora_rank);
		if (!mp_mul_u64(req->batch_size,
		                phase == MP_PHASE_DECODE && m->indexer_head_dim && m->indexer_topk && m->indexer_topk < kv_tokens
		                    ? m->indexer_topk
		                    : kv_tokens,
		                &t) ||
		    !mp_mul_u64(t, lat, &t) || !mp_dtype_bytes(b->kv, t, &bytes))
			return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "KV bytes overflow 64 bits");
		memset(&op, 0, sizeof(op));
		op.kind = MP_OP_RAW;
		op.unit = MP_UNIT_MATRIX;
		op.dtype = b->act;
		op.flops = flops;
		op.bytes = bytes;
		st = add(b, "attention", L, &op, 0);
		if (st == MP_OK)
			b->s->kv_read_bytes += (double)L * (double)bytes;
		return st;
	}

	st = product_ops(b, MP_STEP_QKV, b->tokens);
	if (st != MP_OK || b->matmuls_only)
		return st;
	memset(&op, 0, sizeof(op));
	op.kind = MP_OP_ATTENTION;
	op.dtype = b->act;
	op.kv_dtype = b->kv;
	op.batch = req->batch_size;
	op.heads = m->num_heads;
	op.kv_heads = m->num_kv_heads;
	op.head_dim = m->head_dim;
	op.q_tokens = q_tokens;
	op.kv_tokens = kv_tokens;
	op.causal = true;
	op.eager = phase == MP_PHASE_PREFILL && req->eager_attention;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t count = pass ? local : L - local, kvb = 0, n;
		mp_op o = op;

		if (count == 0)
			continue;
		if (pass && o.kv_tokens > m->sliding_window) {
			o.kv_tokens = m->sliding_window;
			if (o.q_tokens > o.kv_tokens) /* prefill over a window: each query still sees `window` keys */
				o.causal = false;
		}
		st = add(b, pass ? "attention_local" : "attention", count, &o, 0);
		if (st != MP_OK)
			return st;
		if (mp_mul_u64(o.batch, o.kv_tokens, &n) && mp_mul_u64(n, 2 * o.kv_heads * o.head_dim, &n) &&
		    mp_dtype_bytes(b->kv, n, &kvb))
			b->s->kv_read_bytes += (double)count * (double)kvb;
	}
	return MP_OK;
}

/* One routed expert's matrix of step product p on one rank (the first tensor of p: its per-expert rows and cols),
 * false when the model has none. */
static bool expert_matrix(const builder *b, mp_step_product p, uint64_t *in, uint64_t *out)
{
	const mp_inventory *inv = &b->m->inv;

	for (size_t i = 0; i < mp_inventory_size(inv); i++) {
		const mp_tensor *t = mp_inventory_at(inv, i);

		if (t->step == p) {
			mp_tensor_per_rank(t, b->tp, out, in);
			return true;
		}
	}
	return false;
}

/*
 * The feed-forward blocks: dense MLPs (their products from the inventory, the activation between), the router and
 * the routed experts, read as E (1 - (1 - k/E)^tokens) distinct experts of the inventory's expert matrices (uniform
 * routing), and the shared experts.
 */
static mp_status mlp_ops(builder *b, const mp_model *m)
{
	uint64_t moe = moe_layers(m), ffn = mp_model_ffn_layers(m),
	         dense = m->moe_beside_dense ? ffn : (ffn > moe ? ffn - moe : 0);
	bool gated = m->ffn_kind == MP_FFN_GATED;
	double act_flops = gated ? 4 : 8; /* silu(g) * u; tanh-GELU */
	mp_status st = MP_OK;

	if (dense && m->intermediate_size) {
		st = product_ops(b, gated ? MP_STEP_MLP_GATE_UP : MP_STEP_MLP_UP, b->tokens);
		if (st == MP_OK)
			st = vector_op(b, "mlp_act", dense, MP_OP_ELEMENTWISE, b->tokens, m->intermediate_size,
			               gated ? 2 : 1, act_flops);
		if (st == MP_OK)
			st = product_ops(b, MP_STEP_MLP_DOWN, b->tokens);
		if (st != MP_OK)
			return st;
	}
	if (moe) {
		uint64_t E = m->num_experts, k = m->num_experts_per_tok ? m->num_experts_per_tok : 1;
		double active, routed = (double)b->tokens * (double)k;
		mp_op op;

		if (k > E)
			return mp_fail_at(b->err, MP_EINVAL, mp_model_pointer(b->m), "/num_experts_per_tok",
			               "num_experts_per_tok (%llu) exceeds num_experts (%llu)", (unsigned long long)k,
			               (unsigned long long)E);
		/* Distinct experts hit by tokens x top-k uniform draws: E (1 - (1 - k/E)^tokens). */
		active = (double)E * (1.0 - pow(1.0 - (double)k / (double)E, (double)b->tokens));
		b->s->active_experts = active;
		b->s->num_experts = E;
		b->s->experts_per_token = k;
		st = product_ops(b, MP_STEP_ROUTER, b->tokens);
		if (st != MP_OK)
			return st;
		for (int pass = 0; pass < 2; pass++) {
			mp_step_product p = pass ? MP_STEP_EXPERT_DOWN : gated ? MP_STEP_EXPERT_GATE_UP : MP_STEP_EXPERT_UP;
			uint64_t in, out, one = 0, wb, ab = 0, cb = 0, n, rows = (uint64_t)routed;

			if (!expert_matrix(b, p, &in, &out))
				continue;
			if (!mp_mul_u64(in, out, &n) || !class_bytes(b, MP_TC_EXPERTS, n, &one))
				return mp_fail(b->err, MP_EOVERFLOW, mp_model_pointer(b->m), "expert bytes overflow 64 bits");
			wb = (uint64_t)llround(active * (double)one);
			memset(&op, 0, sizeof(op));
			op.kind = MP_OP_RAW;
			op.unit = MP_UNIT_MATRIX;
			op.dtype = b->act;
			op.compute_dtype = b->fmt[MP_TC_EXPERTS] == MP_DTYPE_FP32 ? MP_DTYPE_FP32 : b->act;
			if ((b->fmt[MP_TC_EXPERTS] == MP_DTYPE_FP8_E4M3 || b->fmt[MP_TC_EXPERTS] == MP_DTYPE_FP8_E5M2) &&
			    b->d && b->d->peak_flops_per_second[b->fmt[MP_TC_EXPERTS]] > 0)
				op.compute_dtype = b->fmt[MP_TC_EXPERTS]; /* W8A8, as linear() says */
			op.flops = 2.0 * routed * (double)in * (double)out;
			if (!mp_mul_u64(rows, in, &n) || !mp_dtype_bytes(b->act, n, &ab) ||
			    !mp_mul_u64(rows, out, &n) || !mp_dtype_bytes(b->act, n, &cb) ||
			    !mp_add_u64(wb, ab, &op.bytes) || !mp_add_u64(op.bytes, cb, &op.bytes))
				return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "expert bytes overflow 64 bits");
			st = add(b, mp_step_product_name(p), moe, &op, wb);
			if (st != MP_OK)
				return st;
			b->s->ops[b->s->nops - 1].expert_weight_bytes = one;
			if (pass == 0)
				st = vector_op(b, "experts_act", moe, MP_OP_ELEMENTWISE, rows,
				               gated ? out / 2 : out, gated ? 2 : 1, act_flops);
			if (st != MP_OK)
				return st;
		}
		st = product_ops(b, gated ? MP_STEP_SHARED_GATE_UP : MP_STEP_SHARED_UP, b->tokens);
		if (st == MP_OK)
			st = product_ops(b, MP_STEP_SHARED_DOWN, b->tokens);
	}
	return st;
}

/*
 * The decoder matrices of product MP_STEP_EXTRA (Gemma 4's per-layer input gates and projections, Gemma 3n's AltUp and
 * LAuReL): one product over all of them, every token through each, weights in the MLP class's format.
 */
static mp_status extra_ops(builder *b)
{
	const mp_inventory *inv = &b->m->inv;
	uint64_t weights = 0, wb = 0, ab = 0, n;
	mp_op op;

	for (size_t i = 0; i < mp_inventory_size(inv); i++) {
		const mp_tensor *t = mp_inventory_at(inv, i);
		uint64_t r, c;

		if (t->step != MP_STEP_EXTRA)
			continue;
		mp_tensor_per_rank(t, b->tp, &r, &c);
		if (!mp_mul_u64(r, c, &n) || !mp_mul_u64(n, t->uses ? t->uses : t->count, &n) ||
		    !mp_add_u64(weights, n, &weights))
			return mp_model_overflow(b->m, "the extra matrices' weights", b->err);
	}
	if (weights == 0)
		return MP_OK;
	if (!class_bytes(b, MP_TC_MLP, weights, &wb) || !mp_mul_u64(b->tokens, 2 * b->m->hidden_size, &n) ||
	    !mp_dtype_bytes(b->act, n, &ab))
		return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "the extra matrices' bytes overflow");
	memset(&op, 0, sizeof(op));
	op.kind = MP_OP_RAW;
	op.unit = MP_UNIT_MATRIX;
	op.dtype = b->act;
	op.compute_dtype = b->fmt[MP_TC_MLP] == MP_DTYPE_FP32 ? MP_DTYPE_FP32 : b->act;
	op.flops = 2.0 * (double)b->tokens * (double)weights;
	if (!mp_add_u64(wb, ab, &op.bytes))
		return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "the extra matrices' bytes overflow");
	return add(b, "extra_matrices", 1, &op, wb);
}

static mp_status check(const mp_model *m, mp_phase phase, const mp_step_req *req, mp_error *err)
{
	mp_status st = mp_model_validate(m, err);

	if (st != MP_OK)
		return st;
	if (mp_dtype_layout_of(req->weight_dtype).block_values == 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/weight_dtype", "weight_dtype is not a known format");
	if (mp_dtype_layout_of(req->kv_cache_dtype).block_values == 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/kv_cache_dtype", "kv_cache_dtype is not a known format");
	if (req->batch_size < 1 || req->batch_size > MP_MAX_BATCH_SIZE)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/batch_size", "batch_size must be between 1 and %llu",
		               (unsigned long long)MP_MAX_BATCH_SIZE);
	if (phase == MP_PHASE_DECODE && req->context_tokens > MP_MAX_SEQUENCE_LENGTH)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/context_tokens", "context_tokens must be at most %llu",
		               (unsigned long long)MP_MAX_SEQUENCE_LENGTH);
	if (phase == MP_PHASE_PREFILL && (req->prompt_tokens < 1 || req->prompt_tokens > MP_MAX_SEQUENCE_LENGTH))
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/prompt_tokens", "prompt_tokens must be between 1 and %llu",
		               (unsigned long long)MP_MAX_SEQUENCE_LENGTH);
	if (m->hidden_size == 0 || (m->num_heads == 0 && mp_model_attention_layers(m) > 0) || m->vocab_size == 0)
		return mp_fail(err, MP_EINVAL, mp_model_pointer(m), "the step analysis needs hidden_size, heads and vocab_size");
	/* the same context rule as the plans: the decode step writes position context_tokens + 1 */
	if (phase == MP_PHASE_DECODE)
		return mp_check_context(m, req->context_tokens + 1, req->allow_beyond_max_position, req->json_pointer,
					"/context_tokens", err);
	return mp_check_context(m, req->prompt_tokens, req->allow_beyond_max_position, req->json_pointer, "/prompt_tokens",
				err);
}

/* The slice of model m one of tp tensor-parallel GPUs computes (Megatron-LM column/row-parallel linears:
 * heads, FFN and expert widths split; KV heads split, or one per GPU when tp exceeds them; MLA latents and
 * the router replicated; the vocabulary split for the head, rounded up). */
static void shard(mp_model *m, uint64_t tp)
{
	m->num_heads /= tp;
	m->num_kv_heads = m->num_kv_heads >= tp ? m->num_kv_heads / tp : 1;
	m->intermediate_size /= tp;
	m->moe_intermediate_size /= tp;
	m->shared_expert_intermediate_size /= tp;
	m->vocab_size = (m->vocab_size + tp - 1) / tp;
	/* recurrent mixers: channels, heads and groups split (vLLM's MambaMixer2 keeps a whole group per rank) */
	m->ssm.d_inner /= tp;
	m->ssm.n_heads = m->ssm.n_heads >= tp ? m->ssm.n_heads / tp : 1;
	m->ssm.n_groups = m->ssm.n_groups >= tp ? m->ssm.n_groups / tp : (m->ssm.n_groups ? 1 : 0);
}

mp_dtype mp_step_activation_dtype(const mp_step_req *req)
{
	return req->activation_dtype != MP_DTYPE_INVALID ? req->activation_dtype
	       : req->weight_dtype == MP_DTYPE_FP32      ? MP_DTYPE_FP32
	                                                 : MP_DTYPE_BF16;
}

mp_status mp_step_analyze(const mp_model *model, const mp_device *d, mp_phase phase, const mp_step_req *req,
                          mp_step *out, mp_error *err)
{
	builder b;
	mp_status st;
	mp_model per_gpu;
	const mp_model *m = model;
	uint64_t L = m->num_layers, head_rows, tp = req->tensor_parallel_size ? req->tensor_parallel_size : 1;

	memset(out, 0, offsetof(mp_step, ops)); /* the ops are set as they are added (16 KB not cleared per step) */
	out->phase = phase;
	st = check(m, phase, req, err);
	if (st != MP_OK)
		return st;
	if (tp > 1) {
		st = mp_check_tp_degree(model, tp, req->json_pointer, err);
		if (st != MP_OK)
			return st;
		per_gpu = *model;
		shard(&per_gpu, tp);
		m = &per_gpu;
	}
	memset(&b, 0, offsetof(builder, groups)); /* the groups are filled by group_products */
	b.m = model;
	b.req = req;
	b.d = d;
	b.s = out;
	b.err = err;
	b.w = req->weight_dtype;
	class_formats(&b, req->weights);
	b.kv = req->kv_cache_dtype;
	b.act = mp_step_activation_dtype(req);
	b.matmuls_only = req->matmuls_only;
	b.tp = tp;
	st = group_products(&b);
	if (st != MP_OK)
		return st;
	if (phase == MP_PHASE_DECODE)
		b.tokens = req->batch_size;
	else if (!mp_mul_u64(req->batch_size, req->prompt_tokens, &b.tokens))
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/prompt_tokens", "batch x prompt tokens overflows 64 bits");
	head_rows = req->batch_size; /* decode: one new token each; prefill: the last position's logits */
	out->tokens = b.tokens;

	{
		mp_op_kind norm = m->norm_kind == MP_NORM_LAYER ? MP_OP_LAYERNORM : MP_OP_RMSNORM;
		uint64_t norms = m->norms_per_layer ? m->norms_per_layer : 2;

		st = vector_op(&b, "embedding", 1, MP_OP_ELEMENTWISE, b.tokens, m->hidden_size, 1, 0);
		if (st == MP_OK)
			st = vector_op(&b, "norms", L * norms, norm, b.tokens, m->hidden_size, 1, 0);
		if (st == MP_OK)
			st = attention_ops(&b, m, phase, req);
		if (st == MP_OK)
			st = product_ops(&b, MP_STEP_O, b.tokens);
		if (st == MP_OK)
			st = recurrent_ops(&b, model, m, phase, req, tp);
		if (st == MP_OK)
			st = mlp_ops(&b, m);
		if (st == MP_OK)
			st = extra_ops(&b);
		if (st == MP_OK)
			st = vector_op(&b, "residual_add", 2 * L, MP_OP_ELEMENTWISE, b.tokens, m->hidden_size, 2, 1);
		if (st == MP_OK && m->final_norm)
			st = vector_op(&b, "final_norm", 1, norm, b.tokens, m->hidden_size, 1, 0);
		if (st == MP_OK)
			st = product_ops(&b, MP_STEP_LM_HEAD, head_rows);
		if (st != MP_OK)
			return st;
	}

	for (size_t i = 0; i < out->nops; i++) {
		const mp_step_op *so = &out->ops[i];
		double c = (double)so->count;

		out->flops += c * so->roof.flops;
		out->bytes += c * (double)so->roof.bytes;
		out->weight_bytes += c * (double)so->weight_bytes;
		out->step_seconds += so->time_seconds;
		if (so->roof.compute_bound)
			out->compute_seconds += so->time_seconds;
		else
			out->memory_seconds += so->time_seconds;
	}
	out->compute_bound = out->compute_seconds > out->memory_seconds;
	if (out->step_seconds > 0) {
		double per_seq = phase == MP_PHASE_DECODE ? 1.0 : (double)req->prompt_tokens;

		out->tokens_per_second_per_sequence = per_seq / out->step_seconds;
		out->tokens_per_second_total = per_seq * (double)req->batch_size / out->step_seconds;
	}
	return MP_OK;
}

/* The decode step's balance (FLOP time minus byte time, summed over the ops) at batch b, from the step s analysed
 * at batch s->tokens (mp_roofline.h: mp_step_crossing_batch). Dense ops are linear in b; routed-expert ops read
 * E (1 - (1 - k/E)^b) experts. */
static double balance_at_batch(const mp_step *s, double b)
{
	double B = (double)s->tokens, sum = 0, active = 0;

	if (s->num_experts)
		active = (double)s->num_experts *
		         (1.0 - pow(1.0 - (double)s->experts_per_token / (double)s->num_experts, b));
	for (size_t i = 0; i < s->nops; i++) {
		const mp_step_op *so = &s->ops[i];
		double w = so->expert_weight_bytes ? active * (double)so->expert_weight_bytes : (double)so->fixed_bytes;
		double bytes = w + ((double)so->roof.bytes - (double)so->fixed_bytes) * b / B;
		double mem = so->roof.bytes ? so->roof.memory_time_seconds * bytes / (double)so->roof.bytes : 0;

		sum += (double)so->count * (so->roof.compute_time_seconds * b / B - mem);
	}
	return sum;
}

typedef struct crossing_ctx {
	const mp_step *s;
} crossing_ctx;

static mp_status balance_fn(void *ctx, uint64_t batch, double *out, mp_error *err)
{
	const crossing_ctx *c = ctx;

	(void)err;
	*out = balance_at_batch(c->s, (double)batch);
	return MP_OK;
}

void mp_step_crossing_batch(const mp_step *s, uint64_t *out)
{
	const uint64_t hi = MP_STEP_MAX_SEARCH_BATCH;
	double g1, ghi, alpha = 0, beta = 0;
	crossing_ctx c = {s};

	*out = 0;
	if (s->phase != MP_PHASE_DECODE || s->tokens == 0)
		return;
	g1 = balance_at_batch(s, 1);
	if (g1 >= 0) {
		*out = 1;
		return;
	}
	ghi = balance_at_batch(s, (double)hi);
	if (!(ghi >= 0))
		return; /* still memory-bound at the end of the range (or no figures at all) */
	if (s->num_experts == 0) {
		/* linear: balance(b) = alpha b - beta; alpha from the ends of the range, the crossing at beta / alpha */
		alpha = (ghi - g1) / (double)(hi - 1);
		beta = alpha - g1;
		if (alpha > 0) {
			double r = ceil(beta / alpha);
			uint64_t b = r <= 1 ? 2 : r >= (double)hi ? hi : (uint64_t)r;

			/* rounding can leave the closed form a hair off an exact crossing: settle it on the balance itself */
			while (b > 2 && balance_at_batch(s, (double)(b - 1)) >= 0)
				b--;
			while (b < hi && balance_at_batch(s, (double)b) < 0)
				b++;
			*out = b;
			return;
		}
	}
	/* convex (MoE): the crossing search on the closed form, a few evaluations of the sum over the ops */
	if (mp_search_crossing(1, g1, hi, ghi, balance_fn, &c, out, NULL, NULL) != MP_OK)
		*out = 0; /* not reached: balance_fn never fails */
}

mp_status mp_step_compute_bound_batch(const mp_model *m, const mp_device *d, const mp_step_req *req, uint64_t *out,
                                      mp_error *err)
{
	mp_step_req r = *req;
	mp_step s;
	mp_status st;

	*out = 0;
	r.batch_size = 1;
	st = mp_step_analyze(m, d, MP_PHASE_DECODE, &r, &s, err);
	if (st == MP_OK)
		mp_step_crossing_batch(&s, out);
	return st;
}
