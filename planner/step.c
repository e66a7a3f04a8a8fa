/*
 * step.c: transformer step analysis. Builds the per-layer operation list of one prefill or decode step of a
 * model (norms, QKV, attention, output projection, MLP or experts, residuals, head), places each on the
 * device's roofline (roofline.c) and sums the floors. Reads mp_model's fields only; no I/O, no allocation.
 * Sources: the model shapes as transformers builds them (modeling_llama.py, modeling_mixtral.py,
 * modeling_deepseek_v3.py); MoE expert coverage assumes uniform routing.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "memplan.h"

typedef struct builder {
	const mp_model *m;
	const mp_step_req *req;
	const mp_device *d;
	mp_step *s;
	mp_error *err;
	mp_dtype w, act, kv;
	uint64_t tokens; /* rows of every per-token operation */
	bool matmuls_only;
} builder;

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

/* A linear layer k -> n applied to `rows` tokens: weights in b->w, activations in b->act. */
static mp_status linear(builder *b, const char *name, uint64_t count, uint64_t rows, uint64_t k, uint64_t n)
{
	mp_op op;
	uint64_t wb = 0, kn;

	if (k == 0 || n == 0)
		return MP_OK;
	memset(&op, 0, sizeof(op));
	op.kind = MP_OP_MATMUL;
	op.dtype = b->act;
	op.a_dtype = b->act;
	op.b_dtype = b->w;
	op.c_dtype = b->act;
	op.m = rows;
	op.k = k;
	op.n = n;
	if (!mp_mul_u64(k, n, &kn) || !mp_dtype_bytes(b->w, kn, &wb))
		return mp_model_overflow(b->m, "a layer's weight bytes", b->err);
	return add(b, name, count, &op, wb);
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

/* Layers whose MLP is a routed MoE (deepseek first_k_dense_replace, qwen2_moe decoder_sparse_step). */
static uint64_t moe_layers(const mp_model *m)
{
	uint64_t n = 0;

	if (m->num_experts == 0)
		return 0;
	for (uint64_t i = m->first_dense_layers; i < m->num_layers; i++)
		if (m->moe_layer_step <= 1 || (i + 1) % m->moe_layer_step == 0)
			n++;
	return n;
}

static mp_status attention_ops(builder *b, const mp_model *m, mp_phase phase, const mp_step_req *req)
{
	uint64_t L = m->num_layers, local = 0, q_tokens, kv_tokens;
	mp_op op;
	mp_status st;

	if (m->sliding_window)
		local = m->sliding_window_layers ? m->sliding_window_layers : L;
	if (local > L)
		local = L;
	q_tokens = phase == MP_PHASE_DECODE ? 1 : req->prompt_tokens;
	kv_tokens = phase == MP_PHASE_DECODE ? req->context_tokens + 1 : req->prompt_tokens;

	if (m->attn_kind == MP_ATTN_MLA) {
		uint64_t qk = m->qk_nope_head_dim + m->qk_rope_head_dim, lat = m->kv_lora_rank + m->qk_rope_head_dim;
		double pairs, flops;
		uint64_t bytes = 0, t;

		if (m->q_lora_rank) {
			st = linear(b, "q_a", L, b->tokens, m->hidden_size, m->q_lora_rank);
			if (st == MP_OK)
				st = linear(b, "q_b", L, b->tokens, m->q_lora_rank, m->num_heads * qk);
		} else {
			st = linear(b, "q", L, b->tokens, m->hidden_size, m->num_heads * qk);
		}
		if (st == MP_OK)
			st = linear(b, "kv_a", L, b->tokens, m->hidden_size, lat);
		if (st == MP_OK)
			st = linear(b, "kv_b", L, b->tokens, m->kv_lora_rank,
			            m->num_heads * (m->qk_nope_head_dim + m->v_head_dim));
		if (st != MP_OK || b->matmuls_only)
			return st;
		/* Absorbed MLA (DeepSeek-V2 sec. 2.1.2): every head scores the shared latent (kv_lora + rope wide)
		 * and sums it (kv_lora wide); the cache holds one latent per token. */
		pairs = phase == MP_PHASE_DECODE ? (double)kv_tokens : (double)q_tokens * ((double)q_tokens + 1) / 2;
		flops = 2.0 * (double)req->batch_size * (double)m->num_heads * pairs * (double)(lat + m->kv_lora_rank);
		if (!mp_mul_u64(req->batch_size, kv_tokens, &t) || !mp_mul_u64(t, lat, &t) ||
		    !mp_dtype_bytes(b->kv, t, &bytes))
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

	st = linear(b, "qkv", L, b->tokens, m->hidden_size, (m->num_heads + 2 * m->num_kv_heads) * m->head_dim);
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

static mp_status mlp_ops(builder *b, const mp_model *m)
{
	uint64_t moe = moe_layers(m), dense = m->num_layers - moe;
	bool gated = m->ffn_kind == MP_FFN_GATED;
	uint64_t up_mult = gated ? 2 : 1;
	double act_flops = gated ? 4 : 8; /* silu(g) * u; tanh-GELU */
	mp_status st = MP_OK;

	if (dense && m->intermediate_size) {
		st = linear(b, gated ? "mlp_gate_up" : "mlp_up", dense, b->tokens, m->hidden_size,
		            up_mult * m->intermediate_size);
		if (st == MP_OK)
			st = vector_op(b, "mlp_act", dense, MP_OP_ELEMENTWISE, b->tokens, m->intermediate_size,
			               gated ? 2 : 1, act_flops);
		if (st == MP_OK)
			st = linear(b, "mlp_down", dense, b->tokens, m->intermediate_size, m->hidden_size);
		if (st != MP_OK)
			return st;
	}
	if (moe) {
		uint64_t E = m->num_experts, k = m->num_experts_per_tok ? m->num_experts_per_tok : 1;
		uint64_t ffn = m->moe_intermediate_size ? m->moe_intermediate_size : m->intermediate_size;
		uint64_t shared = m->shared_expert_intermediate_size ? m->shared_expert_intermediate_size
		                                                     : m->num_shared_experts * ffn;
		double active, routed = (double)b->tokens * (double)k;
		uint64_t expert_up = 0, expert_down = 0, n;
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
		st = linear(b, "router", moe, b->tokens, m->hidden_size, E);
		if (st != MP_OK)
			return st;
		if (!mp_mul_u64(m->hidden_size, up_mult * ffn, &n) || !mp_dtype_bytes(b->w, n, &expert_up) ||
		    !mp_mul_u64(ffn, m->hidden_size, &n) || !mp_dtype_bytes(b->w, n, &expert_down))
			return mp_fail(b->err, MP_EOVERFLOW, mp_model_pointer(b->m), "expert bytes overflow 64 bits");
		for (int pass = 0; pass < 2; pass++) {
			uint64_t in = pass ? ffn : m->hidden_size, out = pass ? m->hidden_size : up_mult * ffn;
			uint64_t wb = (uint64_t)llround(active * (double)(pass ? expert_down : expert_up)), ab = 0,
			         cb = 0;
			uint64_t rows = (uint64_t)routed;

			memset(&op, 0, sizeof(op));
			op.kind = MP_OP_RAW;
			op.unit = MP_UNIT_MATRIX;
			op.dtype = b->act;
			op.compute_dtype = b->w == MP_DTYPE_FP32 ? MP_DTYPE_FP32 : b->act;
			op.flops = 2.0 * routed * (double)in * (double)out;
			if (!mp_mul_u64(rows, in, &n) || !mp_dtype_bytes(b->act, n, &ab) ||
			    !mp_mul_u64(rows, out, &n) || !mp_dtype_bytes(b->act, n, &cb) ||
			    !mp_add_u64(wb, ab, &op.bytes) || !mp_add_u64(op.bytes, cb, &op.bytes))
				return mp_fail_at(b->err, MP_EOVERFLOW, b->req->json_pointer, "/batch_size", "expert bytes overflow 64 bits");
			st = add(b, pass ? "experts_down" : (gated ? "experts_gate_up" : "experts_up"), moe, &op, wb);
			if (st != MP_OK)
				return st;
			b->s->ops[b->s->nops - 1].expert_weight_bytes = pass ? expert_down : expert_up;
			if (pass == 0)
				st = vector_op(b, "experts_act", moe, MP_OP_ELEMENTWISE, rows, ffn, gated ? 2 : 1,
				               act_flops);
			if (st != MP_OK)
				return st;
		}
		if (shared) {
			st = linear(b, gated ? "shared_gate_up" : "shared_up", moe, b->tokens, m->hidden_size,
			            up_mult * shared);
			if (st == MP_OK)
				st = linear(b, "shared_down", moe, b->tokens, shared, m->hidden_size);
		}
	}
	return st;
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
	if (m->hidden_size == 0 || m->num_heads == 0 || m->vocab_size == 0)
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
	memset(&b, 0, sizeof(b));
	b.m = model;
	b.req = req;
	b.d = d;
	b.s = out;
	b.err = err;
	b.w = req->weight_dtype;
	b.kv = req->kv_cache_dtype;
	b.act = req->activation_dtype != MP_DTYPE_INVALID ? req->activation_dtype
	        : req->weight_dtype == MP_DTYPE_FP32      ? MP_DTYPE_FP32
	                                                  : MP_DTYPE_BF16;
	b.matmuls_only = req->matmuls_only;
	if (phase == MP_PHASE_DECODE)
		b.tokens = req->batch_size;
	else if (!mp_mul_u64(req->batch_size, req->prompt_tokens, &b.tokens))
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/prompt_tokens", "batch x prompt tokens overflows 64 bits");
	head_rows = req->batch_size; /* decode: one new token each; prefill: the last position's logits */
	out->tokens = b.tokens;

	{
		mp_op_kind norm = m->norm_kind == MP_NORM_LAYER ? MP_OP_LAYERNORM : MP_OP_RMSNORM;
		uint64_t norms = m->norms_per_layer ? m->norms_per_layer : 2;
		uint64_t o_in = m->attn_kind == MP_ATTN_MLA ? m->num_heads * m->v_head_dim : m->num_heads * m->head_dim;

		st = vector_op(&b, "embedding", 1, MP_OP_ELEMENTWISE, b.tokens, m->hidden_size, 1, 0);
		if (st == MP_OK)
			st = vector_op(&b, "norms", L * norms, norm, b.tokens, m->hidden_size, 1, 0);
		if (st == MP_OK)
			st = attention_ops(&b, m, phase, req);
		if (st == MP_OK)
			st = linear(&b, "o_proj", L, b.tokens, o_in, m->hidden_size);
		if (st == MP_OK)
			st = mlp_ops(&b, m);
		if (st == MP_OK)
			st = vector_op(&b, "residual_add", 2 * L, MP_OP_ELEMENTWISE, b.tokens, m->hidden_size, 2, 1);
		if (st == MP_OK && m->final_norm)
			st = vector_op(&b, "final_norm", 1, norm, b.tokens, m->hidden_size, 1, 0);
		if (st == MP_OK)
			st = linear(&b, "lm_head", 1, head_rows, m->hidden_size, m->vocab_size);
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
