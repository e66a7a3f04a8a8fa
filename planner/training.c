/*
 * training.c: training memory per GPU. Model states by precision regime, state convention, optimizer, LoRA and
 * ZeRO/FSDP sharding; the parallel layout (TP, SP, PP 1F1B, CP, EP, gradient accumulation) and its validation;
 * the memory of each phase (forward at the loss, backward peak, optimizer step) and the training fit.
 * Pure arithmetic on caller-owned structs (activations per layer live in activations.c).
 */
#include <stdio.h>
#include <string.h>

#include "../core/mp_assert.h"
#include "training_int.h"

/* An error about the model: named under its keys' pointer, or "<request>/model" for a bare parameter count. */
#define MODEL_FAIL(err, st, m, req, ...)                                                                          \
	((m) != NULL ? mp_fail((err), (st), mp_model_pointer(m), __VA_ARGS__)                                     \
		     : mp_fail_at((err), (st), (req)->json_pointer, "/model", __VA_ARGS__))

static const char *const precision_names[] = {
	[MP_PRECISION_MIXED_BF16] = "mixed_bf16", [MP_PRECISION_MIXED_FP16] = "mixed_fp16",
	[MP_PRECISION_FP32] = "fp32",		  [MP_PRECISION_AMP_BF16] = "amp_bf16",
	[MP_PRECISION_AMP_FP16] = "amp_fp16",	  [MP_PRECISION_BF16] = "bf16",
};
MP_STATIC_ASSERT(MP_COUNT_OF(precision_names) == MP_PRECISION_COUNT, "a name per mp_precision");
static const char *const optimizer_names[] = {
	[MP_OPTIMIZER_ADAMW] = "adamw",		[MP_OPTIMIZER_ADAM] = "adam",
	[MP_OPTIMIZER_ADAMW_8BIT] = "adamw_8bit", [MP_OPTIMIZER_SGD] = "sgd",
	[MP_OPTIMIZER_SGD_MOMENTUM] = "sgd_momentum", [MP_OPTIMIZER_ADAFACTOR] = "adafactor",
	[MP_OPTIMIZER_LION] = "lion",
};
MP_STATIC_ASSERT(MP_COUNT_OF(optimizer_names) == MP_OPTIMIZER_COUNT, "a name per mp_optimizer");
/* the layout's products of degrees and sizes are unchecked: tp x pp x cp (each at most MP_MAX_GPUS) and
 * micro_batch_size x dp must fit 64 bits */
MP_STATIC_ASSERT(MP_MAX_GPUS <= UINT64_C(1) << 16 && MP_MAX_BATCH_SIZE <= UINT64_C(1) << 20,
		 "tp x pp x cp <= 2^48 and micro_batch_size x dp <= 2^36");

const char *mp_precision_name(mp_precision p)
{
	return (unsigned)p < MP_PRECISION_COUNT ? precision_names[p] : "invalid";
}

const char *mp_optimizer_name(mp_optimizer o)
{
	return (unsigned)o < MP_OPTIMIZER_COUNT ? optimizer_names[o] : "invalid";
}

static bool is_mixed(mp_precision p)
{
	return p == MP_PRECISION_MIXED_BF16 || p == MP_PRECISION_MIXED_FP16;
}

/* ----- sharding: which states ZeRO / FSDP divide across the data-parallel replicas. */
#define SHARDINGS (MP_SHARDING_FSDP_GRAD_OP + 1)
static const struct sharding {
	bool weights, grads, opt; /* opt: the optimizer states and master weights */
} shardings[] = {
    [MP_SHARDING_NONE] = {false, false, false},	     [MP_SHARDING_ZERO1] = {false, false, true},
    [MP_SHARDING_ZERO2] = {false, true, true},	     [MP_SHARDING_ZERO3] = {true, true, true},
    [MP_SHARDING_FSDP_FULL] = {true, true, true},    [MP_SHARDING_FSDP_GRAD_OP] = {false, true, true},
};
MP_STATIC_ASSERT(MP_COUNT_OF(shardings) == SHARDINGS, "a row of shardings per mp_sharding");

/* Divisors of each state under the request's sharding (check_req has refused a sharding with no row). */
typedef struct shards {
	uint64_t w, g, opt;
} shards;

static shards shards_of(const mp_training_req *req, uint64_t dp)
{
	const struct sharding *sh = &shardings[req->sharding];

	return (shards){sh->weights ? dp : 1, sh->grads ? dp : 1, sh->opt ? dp : 1};
}

/* ----- layout ------------------------------------------------------------------------------------------ */

typedef struct layout {
	uint64_t tp, pp, cp, ep, dp, gas, inflight;
	uint64_t tokens;	/* per micro-batch per GPU (sequence split by context parallelism) */
	uint64_t seq_local;
} layout;

/* The sizes and degrees, each within its limit; fills l->tp, pp, cp, ep and dp. */
static mp_status check_degrees(const mp_training_req *req, layout *l, mp_error *err)
{
	uint64_t n = mp_or1(req->num_gpus), group;

	l->tp = mp_or1(req->tensor_parallel_size);
	l->pp = mp_or1(req->pipeline_parallel_size);
	l->cp = mp_or1(req->context_parallel_size);
	l->ep = mp_or1(req->expert_parallel_size);
	if (req->micro_batch_size < 1 || req->micro_batch_size > MP_MAX_BATCH_SIZE)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/micro_batch_size", "micro_batch_size must be between 1 and %llu",
			       (unsigned long long)MP_MAX_BATCH_SIZE);
	if (req->sequence_length < 1 || req->sequence_length > MP_MAX_SEQUENCE_LENGTH)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/sequence_length", "sequence_length must be between 1 and %llu",
			       (unsigned long long)MP_MAX_SEQUENCE_LENGTH);
	if (mp_max_u64(mp_max_u64(n, l->tp), mp_max_u64(mp_max_u64(l->pp, l->cp), l->ep)) > MP_MAX_GPUS)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/num_gpus", "num_gpus and every parallel degree must be at most %llu",
			       (unsigned long long)MP_MAX_GPUS);
	group = l->tp * l->pp * l->cp;	/* each <= 2^16, so at most 2^48 */
	if (group > n || n % group != 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/num_gpus",
			       "num_gpus (%llu) must be a multiple of tensor x pipeline x context parallel (%llu x %llu x "
			       "%llu = %llu)",
			       (unsigned long long)n, (unsigned long long)l->tp, (unsigned long long)l->pp,
			       (unsigned long long)l->cp, (unsigned long long)group);
	l->dp = n / group;
	return MP_OK;
}

/* What the degrees need of the sequence, the attention kernel and the sharding. */
static mp_status check_splits(const mp_training_req *req, const layout *l, mp_error *err)
{
	if (req->sequence_parallel && l->tp == 1)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/sequence_parallel",
			       "sequence_parallel splits the norm and dropout activations across tensor-parallel ranks; "
			       "it needs tensor_parallel_size > 1");
	if (req->sequence_length % l->cp != 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/context_parallel_size",
			       "context_parallel_size (%llu) must divide sequence_length (%llu)",
			       (unsigned long long)l->cp, (unsigned long long)req->sequence_length);
	if (req->sequence_parallel && (req->sequence_length / l->cp) % l->tp != 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/sequence_length",
			       "with sequence_parallel the sequence (%llu tokens per context-parallel rank) must be "
			       "divisible by tensor_parallel_size (%llu)",
			       (unsigned long long)(req->sequence_length / l->cp), (unsigned long long)l->tp);
	if (l->cp > 1 && req->attention == MP_TRAIN_ATTENTION_EAGER)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/attention",
			       "context parallelism (ring attention) needs a fused attention kernel; use attention=fused");
	if (l->pp > 1 && shardings[req->sharding].grads)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/sharding",
			       "gradient and parameter sharding (zero2, zero3, fsdp) cannot be combined with pipeline "
			       "parallelism (DeepSpeed allows ZeRO-1 with pipelines only); use zero1 or none");
	return MP_OK;
}

/* What the degrees need of the model: heads and experts divisible, layers divisible by the stages, the context. */
static mp_status check_model_splits(const mp_model *m, const mp_training_req *req, const layout *l, mp_error *err)
{
	mp_status st;

	if (m == NULL) {
		if ((l->tp > 1 || l->pp > 1 || l->ep > 1 || l->cp > 1) && !req->states_only)
			return MODEL_FAIL(err, MP_EINVAL, m, req, "a parallel layout needs the model's architecture");
		return MP_OK;
	}
	st = mp_check_tp_degree(m, l->tp, req->json_pointer, err);
	if (st == MP_OK)
		st = mp_check_context(m, req->sequence_length, req->allow_beyond_max_position, req->json_pointer,
				      "/sequence_length", err);
	if (st != MP_OK)
		return st;
	if (m->num_layers % l->pp != 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/pipeline_parallel_size",
			       "pipeline_parallel_size (%llu) must divide the layers (%llu)",
			       (unsigned long long)l->pp, (unsigned long long)m->num_layers);
	if (l->ep > 1 && m->num_experts == 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/expert_parallel_size",
			       "expert_parallel_size > 1 needs a mixture-of-experts model; this one has no experts");
	if (m->num_experts && m->num_experts % l->ep != 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/expert_parallel_size",
			       "expert_parallel_size (%llu) must divide the experts (%llu)",
			       (unsigned long long)l->ep, (unsigned long long)m->num_experts);
	return MP_OK;
}

/* Gradient accumulation, the micro-batches in flight and the tokens per GPU. */
static mp_status check_steps(const mp_training_req *req, layout *l, mp_error *err)
{
	if (l->ep > 1 && l->dp % l->ep != 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/expert_parallel_size",
			       "expert_parallel_size (%llu) must divide the data-parallel degree (%llu = num_gpus / "
			       "(tp x pp x cp))",
			       (unsigned long long)l->ep, (unsigned long long)l->dp);
	l->gas = 1;
	if (req->global_batch_size) {
		uint64_t per_step = req->micro_batch_size * l->dp;	/* <= 2^20 x 2^16 */

		if (req->global_batch_size % per_step != 0)
			return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/global_batch_size",
				       "global_batch_size (%llu) must be a multiple of micro_batch_size x data-parallel "
				       "degree (%llu x %llu = %llu)",
				       (unsigned long long)req->global_batch_size, (unsigned long long)req->micro_batch_size,
				       (unsigned long long)l->dp, (unsigned long long)per_step);
		l->gas = req->global_batch_size / per_step;
	}
	/* 1F1B (Narayanan et al. 2021, arXiv 2104.04473 sec. 2.2): stage 1 holds up to p micro-batches. */
	l->inflight = l->pp < l->gas ? l->pp : l->gas;
	if (l->pp > 1 && l->inflight < l->pp)
		l->inflight = l->inflight ? l->inflight : 1;
	l->seq_local = req->sequence_length / l->cp;
	l->tokens = req->micro_batch_size * l->seq_local;
	return MP_OK;
}

static mp_status check_layout(const mp_model *m, const mp_training_req *req, layout *l, mp_error *err)
{
	mp_status st = check_degrees(req, l, err);

	if (st == MP_OK)
		st = check_splits(req, l, err);
	if (st == MP_OK)
		st = check_model_splits(m, req, l, err);
	if (st == MP_OK)
		st = check_steps(req, l, err);
	return st;
}

/* ----- parameters on one GPU --------------------------------------------------------------------------- */

typedef struct stage {
	bool first, last;
	uint64_t layers;
	uint64_t params;	/* on this GPU before ZeRO sharding */
	uint64_t matmul;	/* of those, what autocast casts to 16 bits */
	uint64_t head;		/* lm_head (tied: the embedding) on this GPU, 0 if not the last stage */
	uint64_t layer_params;	/* one layer on this GPU (a ZeRO-3 / FSDP gather unit) */
	uint64_t quantizable;	/* linear weights inside layers (QLoRA's nf4 part) */
	uint64_t largest_tensor;
	uint64_t expert_params;	/* of params, the routed experts this GPU owns under expert parallelism (ep > 1) */
} stage;

static uint64_t final_norm_params(const mp_model *m)
{
	if (!m->final_norm)
		return 0;
	return m->norm_kind == MP_NORM_LAYER ? 2 * m->hidden_size : m->hidden_size;
}

static void stage_params(const mp_model *m, const mp_param_count *pc, const layout *l, bool first, bool last,
			 stage *s, mp_ck *c)
{
	uint64_t L, fin, emb, head, lay_mm, lay_norm, lay;

	memset(s, 0, sizeof(*s));
	s->first = first;
	s->last = last;
	if (m == NULL) {
		s->params = pc->total / (l->tp * l->pp) + (pc->total % (l->tp * l->pp) != 0);
		s->matmul = s->params;
		s->largest_tensor = s->params;
		return;
	}
	L = m->num_layers;
	fin = final_norm_params(m);
	emb = pc->embedding / l->tp;
	head = (m->tie_word_embeddings ? pc->embedding : pc->lm_head) / l->tp;
	/* Megatron splits attention, MLP, embedding and head across TP and replicates norms; routed experts
	 * are split across EP (each rank owns num_experts / ep whole experts), or across TP without EP. */
	lay_mm = pc->attention / l->tp + pc->mlp / l->tp + pc->experts / (l->ep > 1 ? l->ep : l->tp);
	lay_norm = pc->norms > fin ? pc->norms - fin : 0;
	s->layers = L / l->pp;
	if (l->ep > 1)
		s->expert_params = mp_ckmul(c, pc->experts / l->ep, s->layers) / L;
	lay = mp_ckadd(c, lay_mm, lay_norm);
	s->layer_params = lay / L;
	s->params = mp_ckmul(c, lay, s->layers) / L;
	s->matmul = mp_ckmul(c, lay_mm, s->layers) / L;
	s->quantizable = s->matmul;
	if (first) {
		s->params = mp_ckadd(c, s->params, mp_ckadd(c, emb, pc->position_embedding));
	}
	if (last) {
		s->params = mp_ckadd(c, s->params, fin);
		/* tied: one tensor when a single stage holds both ends; the last stage keeps its own copy otherwise */
		if (!m->tie_word_embeddings || !first)
			s->params = mp_ckadd(c, s->params, head);
		s->head = head;
		s->matmul = mp_ckadd(c, s->matmul, head);
	}
	s->largest_tensor = mp_max_u64(head ? head : emb, s->layer_params / 4);
}

/* ----- LoRA ---------------------------------------------------------------------------------------------- */

/* Adapter parameters of one layer: r x (in + out) per targeted module (Hu et al. 2021, arXiv 2106.09685
 * sec. 4: A is r x in, B is out x r). Fused projections (GPT-2 c_attn) are one module. */
static uint64_t lora_params_per_layer(const mp_model *m, const mp_training_req *req, uint64_t tp, mp_ck *c)
{
	uint32_t t = req->lora_targets ? req->lora_targets : MP_LORA_ALL;
	uint64_t h = m->hidden_size, hq = m->num_heads * m->head_dim, hkv = m->num_kv_heads * m->head_dim;
	uint64_t f = m->intermediate_size ? m->intermediate_size : m->moe_intermediate_size, io = 0;

	if (mp_model_fused_projections(m)) {
		if (t & (MP_LORA_Q | MP_LORA_K | MP_LORA_V))
			io = mp_ckadd(c, io, h + hq + 2 * hkv);
	} else {
		if (t & MP_LORA_Q)
			io = mp_ckadd(c, io, h + hq);
		if (t & MP_LORA_K)
			io = mp_ckadd(c, io, h + hkv);
		if (t & MP_LORA_V)
			io = mp_ckadd(c, io, h + hkv);
	}
	if (t & MP_LORA_O)
		io = mp_ckadd(c, io, hq + h);
	if ((t & MP_LORA_GATE) && m->ffn_kind == MP_FFN_GATED)
		io = mp_ckadd(c, io, h + f);
	if (t & MP_LORA_UP)
		io = mp_ckadd(c, io, h + f);
	if (t & MP_LORA_DOWN)
		io = mp_ckadd(c, io, f + h);
	return mp_ckmul(c, io, req->lora_rank) / tp;
}

/* nf4 bytes of n values with double quantisation (Dettmers et al. 2023, arXiv 2305.14314 sec. 3; bitsandbytes
 * blocksize 64 for nf4 weights): 4-bit codes, one 8-bit absmax per 64 values, one fp32 scale per 256 absmax
 * values. 0.5 + 1/64 + 4/16384 bytes per value. */
static uint64_t nf4_dq_bytes(uint64_t n, mp_ck *c)
{
	uint64_t blocks = n / 64 + (n % 64 != 0), super = blocks / 256 + (blocks % 256 != 0);

	return mp_ckadd(c, mp_ckadd(c, n / 2 + (n % 2), blocks), mp_ckmul(c, super, 4));
}

/* ----- model states ---------------------------------------------------------------------------------------- */

typedef struct states {
	uint64_t weights, grads, master, opt, opt_transient;
	uint64_t trainable;	/* on this GPU, before sharding */
	uint64_t grad_bytes_pp;	/* dtype bytes of one gradient value (the largest when two are kept) */
	uint64_t weight_bytes_pp;
} states;

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* ----- optimizers: each a function for its state bytes and one for its step's temporaries (below), and a row of
 * optimizers; a new optimizer is those two and a row. States of `n` trainable values, sd = state dtype bytes. */

/* exp_avg + exp_avg_sq (torch/optim/adamw.py) */
static uint64_t states_two_moments(const mp_model *m, const mp_param_count *pc, uint64_t sd, uint64_t n, bool lora,
				   mp_ck *c)
{
	(void)m, (void)pc, (void)lora;
	return mp_ckmul3(c, n, 2, sd);
}

/* momentum_buffer (SGD with momentum) / exp_avg (Lion) */
static uint64_t states_one_moment(const mp_model *m, const mp_param_count *pc, uint64_t sd, uint64_t n, bool lora,
				  mp_ck *c)
{
	(void)m, (void)pc, (void)lora;
	return mp_ckmul(c, n, sd);
}

static uint64_t states_none(const mp_model *m, const mp_param_count *pc, uint64_t sd, uint64_t n, bool lora, mp_ck *c)
{
	(void)m, (void)pc, (void)sd, (void)n, (void)lora, (void)c;
	return 0;
}

/* bitsandbytes Optimizer2State: uint8 state1 and state2, fp32 absmax1/absmax2 per block of 256 values
 * (bitsandbytes/optim/optimizer.py init_state, blocksize 256); tensors under min_8bit_size = 4096 values keep fp32
 * states. Norm vectors are the small tensors when hidden < 4096. */
static uint64_t states_adamw_8bit(const mp_model *m, const mp_param_count *pc, uint64_t sd, uint64_t n, bool lora,
				  mp_ck *c)
{
	uint64_t small = (m && !lora && m->hidden_size < 4096) ? pc->norms * n / mp_or1(pc->total) : 0;
	uint64_t big = n - small;

	(void)sd;
	return mp_ckadd(c, mp_ckadd(c, mp_ckmul(c, big, 2), mp_ckmul(c, ceil_div(big, 256), 8)), mp_ckmul(c, small, 8));
}

/* torch.optim.Adafactor (beta1 None): row_var + col_var for each >= 2-D tensor, a full variance for 1-D tensors.
 * Matrices: q, k, v, o and the MLP per layer, embeddings, untied head. */
static uint64_t states_adafactor(const mp_model *m, const mp_param_count *pc, uint64_t sd, uint64_t n, bool lora,
				 mp_ck *c)
{
	uint64_t h, hq, hkv, f, per, fact, whole, mats = m && m->ffn_kind == MP_FFN_GATED ? 3 : 2;

	if (m == NULL || lora)
		return mp_ckmul(c, n, sd);
	h = m->hidden_size;
	hq = m->num_heads * m->head_dim;
	hkv = m->num_kv_heads * m->head_dim;
	f = m->intermediate_size;
	per = (h + hq) + 2 * (h + hkv) + (hq + h);
	per += mats * (h + f);
	if (m->num_experts)
		per += m->num_experts * mats * (h + m->moe_intermediate_size) + (h + m->num_experts);
	fact = mp_ckmul(c, per, m->num_layers);
	fact = mp_ckadd(c, fact, m->vocab_size + h);
	if (!m->tie_word_embeddings)
		fact = mp_ckadd(c, fact, m->vocab_size + h);
	if (m->learned_position_embeddings)
		fact = mp_ckadd(c, fact, m->learned_position_embeddings + h);
	whole = mp_ckmul(c, mp_ckadd(c, fact, pc->norms), sd);
	/* scale the whole-model figure to this GPU's share */
	return (uint64_t)((unsigned __int128)whole * n / mp_or1(pc->total));
}

/* The step's temporaries over n state values on this GPU (largest: the largest tensor, for a per-parameter loop).
 * torch/optim/adamw.py _multi_tensor_adamw (foreach, the default on CUDA): lerp_/mul_/addcmul_ update the moments in
 * place, then exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs) allocates one tensor per parameter the size of the
 * second moment, divided and added to in place, and consumed by _foreach_addcdiv_: one state-sized temporary. The
 * mixed regimes step with fused in-place kernels (apex/TE FusedAdam, DeepSpeed FusedAdam: multi_tensor_apply), which
 * allocate none. Adafactor's foreach path builds the full variance estimate row_var @ col_var (fp32,
 * parameter-sized); Lion (lion-pytorch) loops over parameters with one parameter-sized temporary; SGD and
 * bitsandbytes' fused 8-bit kernels update in place. */
static uint64_t step_adam(mp_precision p, bool lora, uint64_t n, uint64_t largest, uint64_t sd, mp_ck *c)
{
	(void)lora, (void)largest;
	return is_mixed(p) ? 0 : mp_ckmul(c, n, sd);
}

static uint64_t step_adafactor(mp_precision p, bool lora, uint64_t n, uint64_t largest, uint64_t sd, mp_ck *c)
{
	(void)p, (void)lora, (void)largest, (void)sd;
	return mp_ckmul(c, n, 4);
}

static uint64_t step_lion(mp_precision p, bool lora, uint64_t n, uint64_t largest, uint64_t sd, mp_ck *c)
{
	(void)p;
	return mp_ckmul(c, lora ? n : mp_min_u64(largest, n), sd);
}

static uint64_t step_in_place(mp_precision p, bool lora, uint64_t n, uint64_t largest, uint64_t sd, mp_ck *c)
{
	(void)p, (void)lora, (void)n, (void)largest, (void)sd, (void)c;
	return 0;
}

static const struct optimizer {
	uint64_t (*states)(const mp_model *m, const mp_param_count *pc, uint64_t sd, uint64_t n, bool lora, mp_ck *c);
	uint64_t (*step)(mp_precision p, bool lora, uint64_t n, uint64_t largest, uint64_t sd, mp_ck *c);
} optimizers[] = {
    [MP_OPTIMIZER_ADAMW] = {states_two_moments, step_adam},
    [MP_OPTIMIZER_ADAM] = {states_two_moments, step_adam},
    [MP_OPTIMIZER_ADAMW_8BIT] = {states_adamw_8bit, step_in_place},
    [MP_OPTIMIZER_SGD] = {states_none, step_in_place},
    [MP_OPTIMIZER_SGD_MOMENTUM] = {states_one_moment, step_in_place},
    [MP_OPTIMIZER_ADAFACTOR] = {states_adafactor, step_adafactor},
    [MP_OPTIMIZER_LION] = {states_one_moment, step_lion},
};
MP_STATIC_ASSERT(MP_COUNT_OF(optimizers) == MP_OPTIMIZER_COUNT, "a row of optimizers per mp_optimizer");

/* Optimizer state bytes for `n` trainable values (check_req has refused an optimizer with no row). */
static uint64_t optimizer_bytes(const mp_model *m, const mp_param_count *pc, mp_optimizer o, uint64_t sd,
				uint64_t n, bool lora, mp_ck *c)
{
	return optimizers[o].states(m, pc, sd, n, lora, c);
}

/* ----- precision regimes: the bytes per parameter of weights, gradients and master weights, and how the answer
 * names the convention; a mixed regime's by its state convention. */
typedef struct regime_states {
	uint64_t w, g, ms;
	const char *convention;	 /* NULL: the precision's name */
	const char *composition;
} regime_states;

static const regime_states regimes[] = {
    [MP_PRECISION_MIXED_BF16] = {0, 0, 0, NULL, NULL}, /* by convention: mixed_conventions */
    [MP_PRECISION_MIXED_FP16] = {0, 0, 0, NULL, NULL},
    [MP_PRECISION_FP32] = {4, 4, 0, NULL, "fp32 weights 4 + fp32 gradients 4 + optimizer state"},
    [MP_PRECISION_AMP_BF16] = {4, 4, 0, NULL,
			       "fp32 weights 4 + fp32 gradients 4 + optimizer state (16-bit weight copies live only "
			       "during forward and backward)"},
    [MP_PRECISION_AMP_FP16] = {4, 4, 0, NULL,
			       "fp32 weights 4 + fp32 gradients 4 + optimizer state (16-bit weight copies live only "
			       "during forward and backward)"},
    [MP_PRECISION_BF16] = {2, 2, 0, "bf16", "bf16 weights 2 + bf16 gradients 2 + optimizer state in bf16"},
};
MP_STATIC_ASSERT(MP_COUNT_OF(regimes) == MP_PRECISION_COUNT, "a row of regimes per mp_precision");

#define CONVENTIONS (MP_CONVENTION_20 + 1)
static const regime_states mixed_conventions[] = {
    [MP_CONVENTION_16] = {2, 2, 4, "16",
			  "16-bit weights 2 + 16-bit gradients 2 + fp32 master weights 4 + optimizer state (ZeRO, arXiv "
			  "1910.02054 sec. 3.1)"},
    [MP_CONVENTION_18] = {2, 4, 4, "18",
			  "16-bit weights 2 + fp32 gradients 4 (main_grad) + fp32 master weights 4 + optimizer state "
			  "(Megatron-LM#654)"},
    [MP_CONVENTION_20] = {2, 6, 4, "20",
			  "16-bit weights 2 + 16-bit gradients 2 + fp32 gradients 4 + fp32 master weights 4 + optimizer "
			  "state (MS-AMP#173, NLG-530B accounting)"},
};
MP_STATIC_ASSERT(MP_COUNT_OF(mixed_conventions) == CONVENTIONS, "a row per mp_state_convention");

/* The regime's row (check_req has refused a precision or convention with none). */
static regime_states regime_of(const mp_training_req *req)
{
	regime_states r = is_mixed(req->precision) ? mixed_conventions[req->convention] : regimes[req->precision];

	if (r.convention == NULL)
		r.convention = precision_names[req->precision];
	return r;
}

/* Full fine-tuning: every parameter on this GPU trains. Expert parallelism: each GPU's own experts are replicated
 * only across the expert-data-parallel group (dp / ep GPUs), so ZeRO/FSDP shards them by dp / ep, the rest by dp
 * (DeepSpeed MoE's expert data parallel groups, deepspeed/utils/groups.py; Megatron-Core's expert_data_parallel
 * group). Mixtral on 8 GPUs with ep 8 and ZeRO-1: the experts' states stay whole on their GPU. */
static void full_states(const mp_model *m, const mp_param_count *pc, const mp_training_req *req, const layout *l,
			const stage *s, const regime_states *r, uint64_t sd, shards sh, states *st,
			mp_training_memory *mem, mp_ck *c)
{
	uint64_t ne = s->expert_params, nd = s->params - ne, e = l->ep > 1 ? l->ep : 1;
	uint64_t sw_e = mp_or1(sh.w / e), sg_e = mp_or1(sh.g / e), so_e = mp_or1(sh.opt / e);

	st->trainable = s->params;
	st->weights = mp_ckadd(c, ceil_div(mp_ckmul(c, nd, r->w), sh.w), ceil_div(mp_ckmul(c, ne, r->w), sw_e));
	st->grads = mp_ckadd(c, ceil_div(mp_ckmul(c, nd, r->g), sh.g), ceil_div(mp_ckmul(c, ne, r->g), sg_e));
	st->master = mp_ckadd(c, ceil_div(mp_ckmul(c, nd, r->ms), sh.opt), ceil_div(mp_ckmul(c, ne, r->ms), so_e));
	st->opt = ne ? mp_ckadd(c, ceil_div(optimizer_bytes(m, pc, req->optimizer, sd, nd, false, c), sh.opt),
				ceil_div(optimizer_bytes(m, pc, req->optimizer, sd, ne, false, c), so_e))
		     : ceil_div(optimizer_bytes(m, pc, req->optimizer, sd, s->params, false, c), sh.opt);
	st->weight_bytes_pp = r->w;
	st->grad_bytes_pp = r->g > 4 ? 4 : r->g;
	mem->weight_bytes_per_parameter = (double)r->w;
	mem->gradient_bytes_per_parameter = (uint32_t)r->g;
	mem->master_weight_bytes_per_parameter = (uint32_t)r->ms;
}

/* LoRA and QLoRA. Frozen base: 16-bit (4 in the fp32 regime); QLoRA stores the layers' linear weights in nf4 and
 * keeps embeddings, norms and head in 16 bits. Adapters are fp32 (PEFT autocast_adapter_dtype), with fp32 gradients
 * and their optimizer state: PyTorch allocates their moments like them (zeros_like), so 4 bytes each unless
 * optimizer_state_dtype says otherwise. Returns the state dtype bytes the adapters' optimizer uses. */
static uint64_t lora_states(const mp_model *m, const mp_param_count *pc, const mp_training_req *req, const layout *l,
			    const stage *s, uint64_t sd, shards sh, states *st, mp_training_memory *mem, mp_ck *c)
{
	bool qlora = req->finetune == MP_FINETUNE_QLORA;
	uint64_t adapters = mp_ckmul(c, lora_params_per_layer(m, req, l->tp, c), s->layers);
	uint64_t base16 = s->params - (qlora ? s->quantizable : 0);
	uint64_t base_w = mp_regime_bytes_of(req->precision).compute;

	mem->lora_base_bytes = mp_ckmul(c, base16, base_w);
	if (qlora)
		mem->lora_base_bytes = mp_ckadd(c, mem->lora_base_bytes, nf4_dq_bytes(s->quantizable, c));
	/* per parameter of the base before sharding: base_w for LoRA; QLoRA's mean of nf4 (0.5 + 1/64 + 4/16384 bytes
	 * with its double-quantised scales) and the 16-bit embeddings, norms and head */
	mem->weight_bytes_per_parameter = s->params ? (double)mem->lora_base_bytes / (double)s->params : (double)base_w;
	mem->lora_base_bytes = ceil_div(mem->lora_base_bytes, sh.w);
	mem->lora_parameters = adapters;
	st->trainable = adapters;
	st->weights = mp_ckadd(c, mem->lora_base_bytes, ceil_div(mp_ckmul(c, adapters, 4), sh.w));
	st->grads = ceil_div(mp_ckmul(c, adapters, 4), sh.g);
	if (req->optimizer_state_dtype == MP_DTYPE_INVALID)
		sd = 4;
	st->opt = ceil_div(optimizer_bytes(m, pc, req->optimizer, sd, adapters, true, c), sh.opt);
	st->grad_bytes_pp = 4;
	st->weight_bytes_pp = base_w;
	mem->gradient_bytes_per_parameter = 4;
	mem->master_weight_bytes_per_parameter = 0;
	mem->composition = qlora ? "frozen nf4 base (double-quantised scales) + fp32 adapters 4 + fp32 adapter "
				   "gradients 4 + optimizer state of the adapters"
		: base_w == 4	 ? "frozen fp32 base + fp32 adapters 4 + fp32 adapter gradients 4 + optimizer state of "
				   "the adapters"
				 : "frozen 16-bit base + fp32 adapters 4 + fp32 adapter gradients 4 + optimizer state of "
				   "the adapters";
	return sd;
}

static mp_status model_states(const mp_model *m, const mp_param_count *pc, const mp_training_req *req,
			      const layout *l, const stage *s, states *st, mp_training_memory *mem, mp_error *err)
{
	regime_states r = regime_of(req);
	shards sh = shards_of(req, l->dp);
	bool lora = req->finetune != MP_FINETUNE_FULL;
	uint64_t sd = req->optimizer_state_dtype == MP_DTYPE_INVALID
			      ? (req->precision == MP_PRECISION_BF16 ? 2 : 4)
			      : mp_dtype_layout_of(req->optimizer_state_dtype).block_bytes;
	uint64_t n;
	mp_ck c = { false };

	memset(st, 0, sizeof(*st));
	mem->convention = r.convention;
	mem->composition = r.composition;
	if (lora)
		sd = lora_states(m, pc, req, l, s, sd, sh, st, mem, &c);
	else
		full_states(m, pc, req, l, s, &r, sd, sh, st, mem, &c);
	mem->optimizer_bytes_per_parameter =
		st->trainable ? (double)optimizer_bytes(m, pc, req->optimizer, sd, st->trainable, lora, &c) /
					(double)st->trainable
			      : 0.0;
	/* the step's temporaries over this GPU's share of the states (the experts' share sharded by dp / ep) */
	n = ceil_div(st->trainable, sh.opt);
	if (!lora && s->expert_params && l->ep > 1 && sh.opt > 1)
		n = mp_ckadd(&c, ceil_div(st->trainable - s->expert_params, sh.opt),
			     ceil_div(s->expert_params, mp_or1(sh.opt / l->ep)));
	st->opt_transient = optimizers[req->optimizer].step(req->precision, lora, n, s->largest_tensor, sd, &c);
	if (c.ovf)
		return MODEL_FAIL(err, MP_EOVERFLOW, m, req, "model-state bytes overflow 64 bits");
	return MP_OK;
}

/* ----- one pipeline stage, phase by phase ---------------------------------------------------------------- */

typedef struct term {
	const char *name;
	uint64_t bytes;
} term;

static const char *largest_term(const term *t, size_t n)
{
	size_t best = 0;

	for (size_t i = 1; i < n; i++)
		if (t[i].bytes > t[best].bytes)
			best = i;
	return t[best].name;
}

typedef struct stage_plan {
	stage s;
	states st;
	mp_activation_memory act;
	mp_logits_memory lg;
	uint64_t workspace, comm_persistent, comm_fwd, comm_bwd, comm_opt;
	mp_phase_memory ph[MP_TRAIN_PHASE_COUNT];
	mp_train_phase peak_phase;
	uint64_t peak;
	const char *binding;
} stage_plan;

/* Bytes per token the final norm and the head's input keep (the head reads the norm output; under autocast it
 * saves its own 16-bit cast). */
static uint64_t head_bytes_per_token(const mp_model *m, const mp_training_req *req, const mp_regime_bytes *rb,
				     mp_ck *c)
{
	uint64_t h = m->hidden_size, norm;
	bool frozen = req->finetune != MP_FINETUNE_FULL;

	/* LoRA: the frozen final RMSNorm keeps its fp32 input and rsqrt, the frozen lm_head nothing of its input (the
	 * weight needs no gradient; activations.c lora_layer says why) */
	norm = m->norm_kind == MP_NORM_LAYER ? mp_ckadd(c, mp_ckmul(c, rb->residual, h), 8)
		: frozen		     ? mp_ckadd(c, mp_ckmul(c, 4, h), 4)
					     : mp_ckadd(c, mp_ckmul(c, 4 + rb->residual, h), 4);
	if (!m->final_norm)
		norm = 0;
	return mp_ckadd(c, norm, frozen ? 0 : mp_ckmul(c, rb->amp ? 2 : rb->compute, h));
}

/* ----- recomputation: what the stage's layers keep under each choice (Korthikanti et al. sec. 5), one function and
 * a row of recomputes each. */
typedef struct layers_kept {
	const layout *l;
	const mp_regime_bytes *rb;
	uint64_t hidden, rep_div;
	const mp_layer_activations *layer, *dense; /* one layer of the stage's kind; a leading dense layer (MoE) */
	uint64_t layers, dense_layers;		   /* layers of each on this stage */
	uint64_t inflight;			   /* micro-batches whose activations are held at once */
} layers_kept;

/* Full: the layer input in the residual-stream dtype (torch.utils.checkpoint keeps the input tensor; sharded under
 * SP), the layer itself recomputed in backward. */
static void keep_inputs(const layers_kept *x, mp_activation_memory *a, mp_ck *c)
{
	uint64_t saved = mp_ckmul3(c, x->l->tokens, x->rb->residual, x->hidden) / x->rep_div;

	a->saved_per_layer = saved;
	a->layers_bytes = mp_ckmul3(c, saved, x->layers + x->dense_layers, x->inflight);
	a->recompute_bytes = x->layer->total;
}

/* Selective: everything but the attention core (scores, softmax, dropout), recomputed in backward. */
static void keep_all_but_scores(const layers_kept *x, mp_activation_memory *a, mp_ck *c)
{
	a->saved_per_layer = x->layer->total - x->layer->attention_scores;
	a->layers_bytes = mp_ckmul3(c, a->saved_per_layer, x->layers, x->inflight);
	a->layers_bytes = mp_ckadd(c, a->layers_bytes, mp_ckmul3(c, x->dense->total - x->dense->attention_scores,
								  x->dense_layers, x->inflight));
	a->recompute_bytes = x->layer->attention_scores;
}

/* None: every layer keeps all it saved. */
static void keep_all(const layers_kept *x, mp_activation_memory *a, mp_ck *c)
{
	a->saved_per_layer = x->layer->total;
	a->layers_bytes = mp_ckmul3(c, x->layer->total, x->layers, x->inflight);
	a->layers_bytes = mp_ckadd(c, a->layers_bytes, mp_ckmul3(c, x->dense->total, x->dense_layers, x->inflight));
}

#define RECOMPUTES (MP_RECOMPUTE_FULL + 1)
static void (*const recomputes[])(const layers_kept *x, mp_activation_memory *a, mp_ck *c) = {
    [MP_RECOMPUTE_NONE] = keep_all,
    [MP_RECOMPUTE_SELECTIVE] = keep_all_but_scores,
    [MP_RECOMPUTE_FULL] = keep_inputs,
};
MP_STATIC_ASSERT(MP_COUNT_OF(recomputes) == RECOMPUTES, "a function of recomputes per mp_recompute");

/* Logits and loss (transformers ForCausalLMLoss: logits.float(), then cross_entropy = log_softmax + nll_loss).
 * log_softmax saves its fp32 output; in backward nll_loss_backward allocates the log-probs' gradient and
 * _log_softmax_backward_data the logits' gradient, while the saved log-probs are still alive: three fp32 tensors of
 * tokens x vocab at once. Vocabulary-parallel across TP. */
static void stage_logits(const mp_model *m, const layout *l, const mp_regime_bytes *rb, mp_logits_memory *g, mp_ck *c)
{
	uint64_t v = ceil_div(m->vocab_size, l->tp);

	g->tokens = l->tokens;
	g->logits_bytes = mp_ckmul3(c, l->tokens, v, rb->compute);
	g->upcast_bytes = rb->compute == 4 ? 0 : mp_ckmul3(c, l->tokens, v, 4);
	g->log_probs_bytes = mp_ckmul3(c, l->tokens, v, 4);
	g->forward_peak_bytes = mp_ckadd(c, mp_ckadd(c, g->logits_bytes, g->upcast_bytes), g->log_probs_bytes);
	g->backward_peak_bytes = mp_ckmul(c, g->log_probs_bytes, 3);
	/* Gemma-2's final_logit_softcapping (Gemma2ForCausalLM.forward: logits / cap, tanh, * cap): tanh keeps its
	 * output (tokens x vocab in the compute dtype) until its backward, which runs after log_softmax's */
	if (m->final_logit_softcapping) {
		g->softcap_bytes = mp_ckmul3(c, l->tokens, v, rb->compute);
		g->forward_peak_bytes = mp_ckadd(c, g->forward_peak_bytes, g->softcap_bytes);
		g->backward_peak_bytes = mp_ckadd(c, g->backward_peak_bytes, g->softcap_bytes);
	}
}

/* An MoE model's leading dense layers on the first stage (first_k_dense_replace): one such layer's activations into
 * *dense and their count; none elsewhere. */
static mp_status leading_dense_layers(const mp_model *m, const mp_training_req *req, const layout *l, const stage *s,
				      mp_layer_activations *dense, uint64_t *count, mp_error *err)
{
	mp_model dm;

	memset(dense, 0, sizeof(*dense));
	*count = 0;
	if (!(m->num_experts && m->first_dense_layers && m->intermediate_size && s->first))
		return MP_OK;
	dm = *m;
	dm.num_experts = 0;
	*count = mp_min_u64(m->first_dense_layers, s->layers);
	return mp_layer_activation_bytes(&dm, req, req->micro_batch_size, l->seq_local, dense, err);
}

/* Activations (and logits on the last stage) of one stage. */
static mp_status stage_activations(const mp_model *m, const mp_training_req *req, const layout *l, stage_plan *p,
				   mp_error *err)
{
	mp_regime_bytes rb = mp_regime_bytes_of(req->precision);
	mp_activation_memory *a = &p->act;
	mp_layer_activations dense;
	uint64_t rep_div = req->sequence_parallel ? l->tp : 1, k = p->s.first ? l->inflight : 1;
	uint64_t dense_layers = 0, copies_all = 0;
	layers_kept kept;
	mp_status st;
	mp_ck c = { false };

	st = mp_layer_activation_bytes(m, req, req->micro_batch_size, l->seq_local, &a->layer, err);
	if (st != MP_OK)
		return st;
	st = leading_dense_layers(m, req, l, &p->s, &dense, &dense_layers, err);
	if (st != MP_OK)
		return st;
	a->layers_on_gpu = p->s.layers;
	a->microbatches_in_flight = k;

	kept = (layers_kept){l, &rb, m->hidden_size, rep_div, &a->layer, &dense, p->s.layers - dense_layers,
			     dense_layers, k};
	recomputes[req->recompute](&kept, a, &c);
	/* A layer's backward allocates the gradients of its largest saved tensors: for eager attention the
	 * probabilities' gradient and softmax_backward's output (each the size of the score matrix), otherwise
	 * the gradients flowing through the MLP tensors (an estimate; the H200 rows never bind on it). */
	a->backward_transient_bytes = mp_max_u64(mp_ckmul(&c, a->layer.attention_scores, 2), a->layer.mlp + a->layer.moe);

	/* Embeddings: int64 token ids kept by the embedding backward; the embedding dropout mask (1 byte). */
	if (p->s.first) {
		uint64_t per = 8 + ((m->embedding_dropout && !req->no_dropout) ? m->hidden_size / rep_div : 0);

		a->embedding_bytes = mp_ckmul3(&c, l->tokens, per, k);
	}
	if (p->s.last)
		a->head_bytes = mp_ckmul(&c, l->tokens, head_bytes_per_token(m, req, &rb, &c)) / rep_div;

	/* Autocast: F.linear / addmm cast fp32 weights to 16 bits and save the copies for backward (the cast cache
	 * lives until autocast exits, torch/amp/autocast_mode.py). Under full recomputation only the head's copy
	 * is saved past the forward. LoRA bases are 16-bit already. */
	if (rb.amp && req->finetune == MP_FINETUNE_FULL) {
		copies_all = mp_ckmul(&c, 2, p->s.matmul);
		a->autocast_weight_copies_bytes = req->recompute == MP_RECOMPUTE_FULL ? mp_ckmul(&c, 2, p->s.head)
										      : mp_ckmul(&c, copies_all, k);
	}
	a->total = mp_ckadd(&c, mp_ckadd(&c, a->layers_bytes, a->embedding_bytes),
			    mp_ckadd(&c, a->head_bytes, a->autocast_weight_copies_bytes));
	/* kept for the forward phase: the whole cast cache is alive at the loss */
	p->comm_fwd = 0;
	a->autocast_weight_copies_bytes = mp_max_u64(a->autocast_weight_copies_bytes, copies_all);

	if (p->s.last)
		stage_logits(m, l, &rb, &p->lg, &c);
	if (c.ovf)
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/micro_batch_size", "activation bytes overflow 64 bits");
	return MP_OK;
}

/* Model states alone (states_only): every phase holds the states, nothing else. */
static void states_only_phases(stage_plan *p, mp_ck *c)
{
	const states *st = &p->st;
	uint64_t tot = mp_ckadd(c, mp_ckadd(c, st->weights, st->grads), mp_ckadd(c, st->master, st->opt));
	term t[] = { { "weights", st->weights }, { "gradients", st->grads },
		     { "master_weights", st->master }, { "optimizer_states", st->opt } };

	for (int i = 0; i < MP_TRAIN_PHASE_COUNT; i++) {
		p->ph[i].allocated_bytes = tot;
		p->ph[i].binding_term = largest_term(t, 4);
		p->ph[i].moment = "model states only";
	}
	p->peak = tot;
	p->peak_phase = MP_TRAIN_PHASE_OPTIMIZER;
	p->binding = p->ph[MP_TRAIN_PHASE_OPTIMIZER].binding_term;
}

/* cuBLAS workspaces that stay allocated between steps (PyTorch keeps one per cuBLAS handle and stream,
 * CublasHandlePool.cpp; 32 MiB on sm90). 16-bit addmm/mm with fused attention run through cuBLASLt with a
 * per-call workspace and keep none; fp32 GEMMs keep one; eager attention's batched GEMMs (bmm) keep one for the
 * forward thread and one for the autograd thread. The counts are read off the H200 rows. */
static uint64_t stage_workspace(const mp_model *m, const mp_training_req *req, uint64_t seq, mp_ck *c)
{
	mp_regime_bytes rb = mp_regime_bytes_of(req->precision);
	/* the score matrices' batched GEMMs: eager attention's, or SDPA's math fallback (at::matmul -> bmm) */
	bool bmm = m ? mp_train_attention_kernel(m, req, seq).scores : req->attention == MP_TRAIN_ATTENTION_EAGER;
	uint64_t handles = (rb.compute == 4 ? 1 : 0) + (bmm ? 2 : 0);
	uint64_t ws = req->cublas_workspace_bytes ? req->cublas_workspace_bytes
		      : req->host_memory	  ? 0 /* a CPU runs no cuBLAS */
						  : MP_DEFAULT_CUBLAS_WORKSPACE_BYTES;

	return mp_ckmul(c, mp_min_u64(handles, 2), ws);
}

/* Communication buffers (only with data parallelism) by phase: DDP's buckets, ZeRO's reduce and all-gather
 * buckets, the gathered layers of ZeRO-3 / FSDP. Returns the data-parallel degree the gradients are sharded by. */
static uint64_t stage_comm(const mp_training_req *req, const layout *l, stage_plan *p, mp_ck *c)
{
	const states *st = &p->st;
	uint64_t shard_g, bucket, gather = 0, reduce = 0, allgather = 0;

	shard_g = shards_of(req, l->dp).g;
	if (l->dp > 1) {
		bucket = req->zero_bucket_elements ? req->zero_bucket_elements : MP_DEFAULT_ZERO_BUCKET_ELEMENTS;
		bucket = mp_min_u64(bucket, st->trainable);
		switch (req->sharding) {
		case MP_SHARDING_NONE:
			/* torch DDP (gradient_as_bucket_view=False, the default): the Reducer keeps flat bucket tensors
			 * covering every gradient, a second copy of the gradients, for the whole run. */
			p->comm_persistent = st->grads;
			break;
		case MP_SHARDING_ZERO1:
		case MP_SHARDING_ZERO2:
		case MP_SHARDING_FSDP_GRAD_OP:
			/* DeepSpeed stage 1/2: the reduce bucket (ipg buffer, reduce_bucket_size elements) in backward and
			 * the all-gather bucket (allgather_bucket_size) after the step. */
			reduce = mp_ckmul(c, bucket, st->grad_bytes_pp);
			allgather = mp_ckmul(c, bucket, st->weight_bytes_pp);
			break;
		case MP_SHARDING_ZERO3:
		case MP_SHARDING_FSDP_FULL:
			/* ZeRO-3 / FSDP FULL_SHARD: the unit being computed and the prefetched next one are gathered in
			 * full (two layers' weights), and one layer's gradients await their reduce-scatter. */
			gather = mp_ckmul3(c, 2, p->s.layer_params, st->weight_bytes_pp);
			reduce = mp_ckmul(c, p->s.layer_params, st->grad_bytes_pp);
			break;
		}
	}
	p->comm_fwd = gather;
	p->comm_bwd = mp_ckadd(c, gather, reduce);
	p->comm_opt = allgather;
	return shard_g;
}

/* Forward, at the loss: every saved activation, the whole autocast cast cache, and the logits chain. */
static void forward_phase(const mp_training_req *req, bool last, uint64_t persistent, uint64_t g_acc, stage_plan *p,
			  mp_ck *c)
{
	mp_regime_bytes rb = mp_regime_bytes_of(req->precision);
	const states *st = &p->st;
	const mp_activation_memory *a = &p->act;
	uint64_t fwd_acts = a->total - mp_min_u64(a->total, a->autocast_weight_copies_bytes);

	fwd_acts = mp_ckadd(c, fwd_acts, a->autocast_weight_copies_bytes);
	if (rb.amp && req->finetune == MP_FINETUNE_FULL && req->recompute != MP_RECOMPUTE_FULL)
		fwd_acts = a->total;	/* copies saved for backward == cast cache (x micro-batches in flight) */
	p->ph[MP_TRAIN_PHASE_FORWARD].allocated_bytes = mp_ckadd(
		c, mp_ckadd(c, persistent, g_acc), mp_ckadd(c, fwd_acts, mp_ckadd(c, p->lg.forward_peak_bytes, p->comm_fwd)));
	p->ph[MP_TRAIN_PHASE_FORWARD].moment = last ? "loss (log_softmax)" : "end of forward (micro-batches in flight)";
	{
		term t[] = { { "weights", st->weights },	  { "master_weights", st->master },
			     { "optimizer_states", st->opt }, { "gradients", g_acc },
			     { "activations", fwd_acts },	  { "logits", p->lg.forward_peak_bytes } };

		p->ph[MP_TRAIN_PHASE_FORWARD].binding_term = largest_term(t, 6);
	}
}

/* Backward: (0) at log_softmax backward, every activation plus three tokens x vocab fp32 tensors; (1) in the last
 * layer's backward, every activation plus the head's gradients, the recomputed layer and that layer's
 * temporaries; (2) at the first layer, all gradients plus one layer. The largest of the three. */
static void backward_phase(bool last, uint64_t persistent, uint64_t g_acc, uint64_t head_grads, stage_plan *p,
			   mp_ck *c)
{
	static const char *const moments[] = { "loss backward (log_softmax backward)", "last layer's backward",
					       "first layer's backward" };
	const states *st = &p->st;
	const mp_activation_memory *a = &p->act;
	uint64_t bwd[3];
	int w;

	bwd[0] = last ? mp_ckadd(c, mp_ckadd(c, persistent, g_acc),
				 mp_ckadd(c, a->total, mp_ckadd(c, p->lg.backward_peak_bytes, p->comm_bwd)))
		      : 0;
	bwd[1] = mp_ckadd(c, mp_ckadd(c, persistent, mp_max_u64(g_acc, head_grads)),
			  mp_ckadd(c, a->total, mp_ckadd(c, a->recompute_bytes, a->backward_transient_bytes)));
	bwd[1] = mp_ckadd(c, bwd[1], p->comm_bwd);
	bwd[2] = mp_ckadd(c, mp_ckadd(c, persistent, st->grads),
			  mp_ckadd(c, mp_ckadd(c, a->embedding_bytes, a->saved_per_layer),
				   mp_ckadd(c, a->recompute_bytes, a->backward_transient_bytes)));
	bwd[2] = mp_ckadd(c, bwd[2], p->comm_bwd);
	w = bwd[0] >= bwd[1] && bwd[0] >= bwd[2] ? 0 : (bwd[1] >= bwd[2] ? 1 : 2);
	{
		term t0[] = { { "weights", st->weights },	  { "master_weights", st->master },
			      { "optimizer_states", st->opt }, { "gradients", g_acc },
			      { "activations", a->total },	  { "logits", p->lg.backward_peak_bytes } };
		term t1[] = { { "weights", st->weights },
			      { "master_weights", st->master },
			      { "optimizer_states", st->opt },
			      { "gradients", mp_max_u64(g_acc, head_grads) },
			      { "activations", a->total + a->recompute_bytes + a->backward_transient_bytes } };
		term t2[] = { { "weights", st->weights },
			      { "master_weights", st->master },
			      { "optimizer_states", st->opt },
			      { "gradients", st->grads },
			      { "activations", a->embedding_bytes + a->saved_per_layer + a->recompute_bytes +
						       a->backward_transient_bytes } };

		p->ph[MP_TRAIN_PHASE_BACKWARD].allocated_bytes = bwd[w];
		p->ph[MP_TRAIN_PHASE_BACKWARD].moment = moments[w];
		p->ph[MP_TRAIN_PHASE_BACKWARD].binding_term = w == 0 ? largest_term(t0, 6) : w == 1 ? largest_term(t1, 5)
											       : largest_term(t2, 5);
	}
}

/* Optimizer step: states, all gradients and the step's temporaries. */
static void optimizer_phase(uint64_t persistent, stage_plan *p, mp_ck *c)
{
	const states *st = &p->st;
	term t[] = { { "weights", st->weights },	  { "master_weights", st->master },
		     { "optimizer_states", st->opt }, { "gradients", st->grads },
		     { "optimizer_transient", st->opt_transient } };

	p->ph[MP_TRAIN_PHASE_OPTIMIZER].allocated_bytes =
		mp_ckadd(c, mp_ckadd(c, persistent, st->grads), mp_ckadd(c, st->opt_transient, p->comm_opt));
	p->ph[MP_TRAIN_PHASE_OPTIMIZER].moment = "optimizer step (foreach temporaries)";
	p->ph[MP_TRAIN_PHASE_OPTIMIZER].binding_term = largest_term(t, 5);
}

/* One pipeline stage (the first and/or the last): its parameters and states, activations, workspaces and
 * communication buffers, then the memory at each phase and the peak. */
static mp_status plan_stage(const mp_model *m, const mp_param_count *pc, const mp_training_req *req,
			    const layout *l, bool first, bool last, stage_plan *p, mp_training_memory *mem,
			    mp_error *err)
{
	const states *st = &p->st;
	uint64_t persistent, g_acc, head_grads = 0, shard_g;
	mp_status s;
	mp_ck c = { false };

	memset(p, 0, sizeof(*p));
	stage_params(m, pc, l, first, last, &p->s, &c);
	if (c.ovf)
		return MODEL_FAIL(err, MP_EOVERFLOW, m, req, "parameter counts overflow 64 bits");
	s = model_states(m, pc, req, l, &p->s, &p->st, mem, err);
	if (s != MP_OK)
		return s;
	if (req->states_only) {
		states_only_phases(p, &c);
		return c.ovf ? MODEL_FAIL(err, MP_EOVERFLOW, m, req, "model-state bytes overflow 64 bits") : MP_OK;
	}
	s = stage_activations(m, req, l, p, err);
	if (s != MP_OK)
		return s;
	p->workspace = stage_workspace(m, req, l->seq_local, &c);
	shard_g = stage_comm(req, l, p, &c);

	persistent = mp_ckadd(&c, mp_ckadd(&c, st->weights, st->master), mp_ckadd(&c, st->opt, p->workspace));
	persistent = mp_ckadd(&c, persistent, p->comm_persistent);
	g_acc = l->gas > 1 ? st->grads : 0;	/* accumulated gradients stay across micro-batches */
	if (last && req->finetune == MP_FINETUNE_FULL)
		head_grads = ceil_div(mp_ckmul(&c, p->s.head, st->grad_bytes_pp), shard_g);
	forward_phase(req, last, persistent, g_acc, p, &c);
	backward_phase(last, persistent, g_acc, head_grads, p, &c);
	optimizer_phase(persistent, p, &c);
	p->peak_phase = MP_TRAIN_PHASE_FORWARD;
	for (int i = 1; i < MP_TRAIN_PHASE_COUNT; i++)
		if (p->ph[i].allocated_bytes > p->ph[p->peak_phase].allocated_bytes)
			p->peak_phase = (mp_train_phase)i;
	p->peak = p->ph[p->peak_phase].allocated_bytes;
	p->binding = p->ph[p->peak_phase].binding_term;
	if (c.ovf)
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/micro_batch_size", "training bytes overflow 64 bits");
	return MP_OK;
}

/* ----- the plan ---------------------------------------------------------------------------------------- */

/* The request's choices, each one of its enum's (a table's row) and consistent with the precision. */
static mp_status check_choices(const mp_training_req *req, mp_error *err)
{
	if ((unsigned)req->precision >= MP_PRECISION_COUNT)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/precision",
			       "precision must be one of fp32, amp_bf16, amp_fp16, mixed_bf16, mixed_fp16, bf16");
	if ((unsigned)req->optimizer >= MP_OPTIMIZER_COUNT)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/optimizer",
			       "optimizer must be one of adamw, adam, adamw_8bit, sgd, sgd_momentum, adafactor, lion");
	if ((unsigned)req->convention >= CONVENTIONS)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/state_convention",
				  "state_convention must be 16, 18 or 20 (bytes per parameter)");
	if ((unsigned)req->sharding >= SHARDINGS)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/sharding",
				  "sharding must be one of none, zero1, zero2, zero3, fsdp_full_shard, fsdp_shard_grad_op");
	if ((unsigned)req->recompute >= RECOMPUTES)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/recompute",
				  "recompute must be one of none, selective, full");
	if (req->convention != MP_CONVENTION_16 && !is_mixed(req->precision))
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/state_convention",
			       "state_convention (16, 18, 20 bytes per parameter) applies to mixed_bf16 and mixed_fp16 only");
	if (req->optimizer_state_dtype != MP_DTYPE_INVALID && req->optimizer_state_dtype != MP_DTYPE_FP32 &&
	    req->optimizer_state_dtype != MP_DTYPE_BF16 && req->optimizer_state_dtype != MP_DTYPE_FP16)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/optimizer_state_dtype", "optimizer_state_dtype must be fp32, bf16 or fp16");
	if (req->optimizer_state_dtype != MP_DTYPE_INVALID && req->optimizer == MP_OPTIMIZER_ADAMW_8BIT)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/optimizer_state_dtype",
			       "adamw_8bit keeps 8-bit states with fp32 block scales; leave optimizer_state_dtype out");
	return MP_OK;
}

/* LoRA and QLoRA: the architecture, a rank the hidden size allows, known targets, a 16-bit compute for QLoRA. */
static mp_status check_lora(const mp_model *m, const mp_training_req *req, mp_error *err)
{
	if (req->finetune == MP_FINETUNE_FULL)
		return MP_OK;
	if (m == NULL)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/finetune", "LoRA needs the architecture to size the adapters");
	if (req->lora_rank < 1 || req->lora_rank > m->hidden_size)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/lora_rank", "lora_rank must be between 1 and hidden_size (%llu)",
			       (unsigned long long)m->hidden_size);
	if (req->lora_targets & ~MP_LORA_ALL)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/lora_targets", "unknown LoRA target");
	if (req->finetune == MP_FINETUNE_QLORA && req->precision == MP_PRECISION_FP32)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/precision",
			       "QLoRA computes in 16 bits (bnb_4bit_compute_dtype); use amp_bf16, bf16 or amp_fp16");
	return MP_OK;
}

static mp_status check_req(const mp_model *m, const mp_training_req *req, mp_error *err)
{
	mp_status st = check_choices(req, err);

	if (st != MP_OK)
		return st;
	if (m == NULL && !req->states_only)
		return MODEL_FAIL(err, MP_EINVAL, m, req,
			       "activations and logits need the architecture (hidden_size, num_hidden_layers, "
			       "num_attention_heads, vocab_size): give a stored model or {\"hf_config\": {...}}, or set "
			       "states_only to true for model states alone");
	st = check_lora(m, req, err);
	if (st != MP_OK || m == NULL)
		return st;
	if (mp_model_ssm_layers(m) > 0)
		return MODEL_FAIL(err, MP_EUNSUPPORTED, m, req,
		                  "the training planner models attention and MLP layers, not the recurrent (state-space) "
		                  "layers of this model");
	if (m->num_layers == 0 || m->hidden_size == 0 || m->num_heads == 0 || m->vocab_size == 0)
		return MODEL_FAIL(err, MP_EINVAL, m, req, "the architecture needs layers, hidden size, heads and vocabulary");
	return MP_OK;
}

static void copy_stage(const stage_plan *p, const layout *l, const mp_training_req *req, uint64_t context,
		       mp_training_memory *mem)
{
	uint64_t copies = p->act.autocast_weight_copies_bytes;

	mem->weights_bytes = p->st.weights;
	mem->gradients_bytes = p->st.grads;
	mem->optimizer_states_bytes = p->st.opt;
	mem->master_weights_bytes = p->st.master;
	mem->activations = p->act;
	mem->activations.autocast_weight_copies_bytes = copies;
	mem->logits = p->lg;
	mem->activations_bytes = p->act.total;
	mem->logits_bytes = p->lg.backward_peak_bytes;
	mem->workspace_bytes = p->workspace;
	mem->comm_buffer_bytes = mp_max_u64(p->comm_persistent, mp_max_u64(p->comm_bwd, p->comm_opt));
	mem->optimizer_transient_bytes = p->st.opt_transient;
	mem->cuda_context_bytes = context;
	mem->overhead_bytes = context + p->workspace + mem->comm_buffer_bytes + p->st.opt_transient;
	mem->states_bytes = p->st.weights + p->st.master + p->st.opt + p->workspace + p->comm_persistent;
	for (int i = 0; i < MP_TRAIN_PHASE_COUNT; i++)
		mem->phases[i] = p->ph[i];
	mem->peak_phase = p->peak_phase;
	mem->binding_term = p->binding;
	mem->total_bytes = p->peak + context;
	mem->parameters_on_gpu = p->s.params;
	mem->data_parallel_size = l->dp;
	mem->gradient_accumulation_steps = l->gas;
	mem->activations_known = !req->states_only;
}

/* What the answer says beside the bytes: the attention kernel, the trainable parameters (all, or LoRA's adapters
 * over every layer), no overhead for model states alone. */
static void describe_plan(const mp_model *m, const mp_param_count *pc, const mp_training_req *req, const layout *l,
			  mp_training_memory *mem, mp_ck *c)
{
	if (m != NULL && !req->states_only)
		mem->attention_kernel = mp_train_attention_kernel(m, req, l->seq_local).name;
	mem->trainable_parameters = req->finetune == MP_FINETUNE_FULL
					    ? pc->total
					    : (m ? mp_ckmul(c, lora_params_per_layer(m, req, 1, c), m->num_layers) : 0);
	if (req->states_only)
		mem->overhead_bytes = 0;
}

mp_status mp_plan_training(const mp_model *m, const mp_param_count *pc, const mp_training_req *req,
			   mp_training_memory *mem, mp_error *err)
{
	layout l;
	stage_plan first, last;
	uint64_t context;
	mp_status st;
	mp_ck c = { false };

	memset(mem, 0, sizeof(*mem));
	st = check_req(m, req, err);
	if (st == MP_OK)
		st = check_layout(m, req, &l, err);
	if (st != MP_OK)
		return st;
	st = plan_stage(m, pc, req, &l, true, l.pp == 1, &first, mem, err);
	if (st != MP_OK)
		return st;
	if (l.pp > 1) {
		st = plan_stage(m, pc, req, &l, false, true, &last, mem, err);
		if (st != MP_OK)
			return st;
		if (last.peak > first.peak)
			first = last;
	}
	context = req->states_only	   ? 0
		  : req->cuda_context_bytes ? req->cuda_context_bytes
		  : req->host_memory	   ? 0 /* a CPU: no CUDA context */
					   : MP_DEFAULT_CUDA_CONTEXT_BYTES;
	copy_stage(&first, &l, req, context, mem);
	describe_plan(m, pc, req, &l, mem, &c);
	if (c.ovf || mem->total_bytes < first.peak)
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/micro_batch_size", "total bytes overflow 64 bits");
	if (mem->total_bytes > MP_MAX_PLAN_BYTES)
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/micro_batch_size",
			       "the plan needs more than 2^53 bytes (9 PB) per GPU: beyond any device, and beyond what "
			       "the API reports as an exact integer");
	return MP_OK;
}

/* ----- fit --------------------------------------------------------------------------------------------- */

static bool fits_with(const mp_model *m, const mp_param_count *pc, const mp_training_req *req, uint64_t cap)
{
	mp_training_memory tmp;
	mp_error e = MP_ERROR_INIT;

	return mp_plan_training(m, pc, req, &tmp, &e) == MP_OK && tmp.total_bytes <= cap;
}

/* Data-parallel counts the training fit plans one by one before it bisects (see mp_plan_training_fit). */
#define MP_FIT_EXHAUSTIVE_REPLICAS 64

/* Largest k in [1, limit] with ok(k), for ok monotone (true then false); 0 when ok(1) is false. */
#define LARGEST(result, limit, OK)                                            \
	do {                                                                  \
		uint64_t lo_ = 1, hi_ = 2, k;                                 \
		(result) = 0;                                                 \
		k = 1;                                                        \
		if (!(OK))                                                    \
			break;                                                \
		for (;;) {                                                    \
			k = mp_min_u64(hi_, (limit));                         \
			if (!(OK)) {                                          \
				hi_ = k;                                      \
				break;                                        \
			}                                                     \
			lo_ = k;                                              \
			if (k == (limit)) {                                   \
				hi_ = k + 1;                                  \
				break;                                        \
			}                                                     \
			hi_ *= 2;                                             \
		}                                                             \
		while (hi_ - lo_ > 1) {                                       \
			k = lo_ + (hi_ - lo_) / 2;                            \
			if (OK)                                               \
				lo_ = k;                                      \
			else                                                  \
				hi_ = k;                                      \
		}                                                             \
		(result) = lo_;                                               \
	} while (0)

void mp_training_verdict(const mp_training_memory *mem, const mp_device *dev, mp_fit *fit)
{
	uint64_t cap = mp_device_capacity_bytes(dev);

	memset(fit, 0, sizeof(*fit));
	fit->capacity_bytes = cap;
	fit->budget_bytes = cap;
	fit->fits = mem->total_bytes <= cap;
	fit->headroom_bytes = (int64_t)cap - (int64_t)mem->total_bytes;
	fit->binding_term = mem->binding_term ? mem->binding_term : "weights";
}

/*
 * The smallest GPU count that fits (0: none). Keep tp x pp x cp, grow data parallelism in steps of the
 * expert-parallel degree, and evaluate the counts rather than assume memory falls with them: going from one
 * data-parallel replica to two ADDS DDP's gradient buckets (a second copy of the gradients) or ZeRO's reduce and
 * all-gather buckets. The first MP_FIT_EXHAUSTIVE_REPLICAS counts are each planned in turn; beyond them every term of
 * the plan is either independent of the data-parallel degree (activations, logits, buckets, gathered layers) or a
 * ceil(x / dp) share of sharded states (mp_plan_training above), so bytes per GPU never grow there and the smallest
 * fitting count is bisected, its answer planned once more. A requested count that fits (fits) bounds the search, so
 * fits and min_gpus cannot disagree.
 */
static uint64_t min_num_gpus(const mp_model *m, const mp_param_count *pc, const mp_training_req *req, bool fits,
			     uint64_t cap)
{
	mp_training_req r = *req;
	uint64_t group = mp_or1(req->tensor_parallel_size) * mp_or1(req->pipeline_parallel_size) *
			 mp_or1(req->context_parallel_size);
	uint64_t unit = group * mp_or1(req->expert_parallel_size), lim = MP_MAX_GPUS / unit;
	uint64_t lo = MP_FIT_EXHAUSTIVE_REPLICAS, hi;

	r.global_batch_size = 0;
	if (fits && mp_or1(req->num_gpus) / unit >= 1 && mp_or1(req->num_gpus) / unit < lim)
		lim = mp_or1(req->num_gpus) / unit; /* fits here: the answer is at most this */
	for (uint64_t k = 1; k <= lim && k <= MP_FIT_EXHAUSTIVE_REPLICAS; k++) {
		r.num_gpus = k * unit;
		if (fits_with(m, pc, &r, cap))
			return k * unit;
	}
	if (lim <= MP_FIT_EXHAUSTIVE_REPLICAS)
		return 0;
	r.num_gpus = lim * unit;
	if (!fits_with(m, pc, &r, cap))
		return 0;
	for (hi = lim; hi - lo > 1;) { /* fits at hi, not at lo */
		uint64_t k = lo + (hi - lo) / 2;

		r.num_gpus = k * unit;
		if (fits_with(m, pc, &r, cap))
			hi = k;
		else
			lo = k;
	}
	r.num_gpus = hi * unit;
	return fits_with(m, pc, &r, cap) ? hi * unit : 0;
}

mp_status mp_plan_training_fit(const mp_model *m, const mp_param_count *pc, const mp_training_req *req,
			       const mp_device *dev, mp_training_memory *mem, mp_training_fit *tf, mp_error *err)
{
	mp_training_req r;
	uint64_t cap, unit, lim, best;
	mp_status st;

	memset(tf, 0, sizeof(*tf));
	st = mp_plan_training(m, pc, req, mem, err);
	if (st != MP_OK || dev == NULL)
		return st;
	mp_training_verdict(mem, dev, &tf->fit);
	cap = tf->fit.capacity_bytes;

	r = *req;
	r.global_batch_size = 0;
	LARGEST(best, MP_MAX_BATCH_SIZE, (r.micro_batch_size = k, fits_with(m, pc, &r, cap)));
	tf->fit.max_batch_size = best;

	r = *req;
	r.global_batch_size = 0;
	unit = mp_or1(req->context_parallel_size) * (req->sequence_parallel ? mp_or1(req->tensor_parallel_size) : 1);
	lim = m ? mp_model_sequence_ceiling(m, req->allow_beyond_max_position) : MP_MAX_SEQUENCE_LENGTH;
	LARGEST(best, lim / unit, (r.sequence_length = k * unit, fits_with(m, pc, &r, cap)));
	tf->fit.max_sequence_length = best * unit;
	/* the search stopped at the context (the last whole unit under it), not at memory */
	tf->fit.max_sequence_length_at_context = best > 0 && best == lim / unit && lim < MP_MAX_SEQUENCE_LENGTH;

	tf->min_num_gpus = min_num_gpus(m, pc, req, tf->fit.fits, cap);
	return MP_OK;
}
