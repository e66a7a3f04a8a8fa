/*
 * inference.c: the inference plan (weights, KV cache, prefill workspace, overhead per GPU) and the fit
 * solver (verdict, largest batch and length, smallest GPU count, valid tensor-parallel degrees).
 * Pure arithmetic on the caller's structs; every byte count is checked for 64-bit overflow. Requests are
 * validated here too (the daemon's field tables check ranges first), so the library is safe on its own.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "memplan.h"

/* The recurrent mixer splits its channels (Mamba) or heads (Mamba-2) over the ranks (vLLM MambaMixer,
 * MambaMixer2: the divisibility asserts of their __init__). */
static bool ssm_degree_ok(const mp_model *m, uint64_t t)
{
	if (m->ssm.kind == MP_SSM_NONE)
		return true;
	if (m->ssm.d_inner % t != 0)
		return false;
	if (m->ssm.kind == MP_SSM_GATED_DELTANET || m->ssm.kind == MP_SSM_KDA || m->ssm.kind == MP_SSM_LIGHTNING)
		/* vLLM GatedDeltaNet / KimiDeltaAttention / MiniMaxText01LinearAttention divide their heads (and the
		 * delta net its key heads) over the ranks */
		return m->ssm.n_heads % t == 0 && (m->ssm.kind != MP_SSM_GATED_DELTANET || m->ssm.n_groups % t == 0);
	return m->ssm.kind != MP_SSM_MAMBA2 || m->ssm.n_heads % t == 0;
}

/* What the tensor-parallel degrees must divide first: the attention heads, or the recurrent heads or channels of a
 * model without attention. */
static uint64_t tp_base(const mp_model *m)
{
	if (m->num_heads && mp_model_attention_layers(m) > 0)
		return m->num_heads;
	return m->ssm.kind == MP_SSM_MAMBA2 || m->ssm.kind == MP_SSM_GATED_DELTANET || m->ssm.kind == MP_SSM_KDA ||
	               m->ssm.kind == MP_SSM_LIGHTNING
	           ? m->ssm.n_heads
	           : m->ssm.d_inner;
}

bool mp_tp_degree_ok(const mp_model *m, uint64_t t)
{
	if (t == 0 || tp_base(m) % t != 0 || !ssm_degree_ok(m, t))
		return false;
	if (mp_model_attention_layers(m) > 0 && m->num_heads % t != 0)
		return false;
	if (m->attn_kind == MP_ATTN_GQA && m->num_kv_heads && m->num_kv_heads % t != 0 && t % m->num_kv_heads != 0)
		return false;
	if (m->intermediate_size && m->intermediate_size % t != 0)
		return false;
	if (m->num_experts && m->moe_intermediate_size % t != 0)
		return false;
	return m->shared_expert_intermediate_size % t == 0;
}

size_t mp_valid_tp_degrees(const mp_model *m, uint64_t *out, size_t cap)
{
	uint64_t small[64], large[64];
	size_t ns = 0, nl = 0, n = 0;

	uint64_t base = tp_base(m);

	/* divisors of the head count, in pairs up to its square root */
	for (uint64_t d = 1; d <= base / d && ns < 64 && nl < 64; d++) {
		if (base % d != 0)
			continue;
		small[ns++] = d;
		if (d != base / d)
			large[nl++] = base / d;
	}
	for (size_t i = 0; i < ns; i++)
		if (mp_tp_degree_ok(m, small[i])) {
			if (n < cap)
				out[n] = small[i];
			n++;
		}
	for (size_t i = nl; i-- > 0;)
		if (mp_tp_degree_ok(m, large[i])) {
			if (n < cap)
				out[n] = large[i];
			n++;
		}
	return n;
}

static void list_degrees(const mp_model *m, char *buf, size_t len)
{
	uint64_t d[MP_MAX_TP_DEGREES];
	size_t n = mp_valid_tp_degrees(m, d, MP_MAX_TP_DEGREES), used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < MP_MAX_TP_DEGREES; i++) {
		int w = snprintf(buf + used, len - used, "%s%llu", i ? ", " : "", (unsigned long long)d[i]);

		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
	}
}

mp_status mp_check_tp_degree(const mp_model *m, uint64_t tp, const char *base, mp_error *err)
{
	char list[256];

	if (mp_tp_degree_ok(m, tp))
		return MP_OK;
	list_degrees(m, list, sizeof(list));
	/* case BI-01: name the rule that failed and list the degrees that work */
	return mp_fail_at(err, MP_EINVAL, base, "/tensor_parallel_size",
	               "tensor_parallel_size %llu must divide the attention heads (%llu) and every FFN width, "
	               "and divide or be a multiple of the KV heads (%llu); valid: %s",
	               (unsigned long long)tp, (unsigned long long)m->num_heads, (unsigned long long)m->num_kv_heads,
	               list);
}

/* The formats, the batch, the sequence and the GPUs, each in its range; tp within the GPUs. */
static mp_status check_sizes(const mp_inference_req *req, uint64_t tp, mp_error *err)
{
	if (mp_dtype_layout_of(req->weight_dtype).block_values == 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/weight_dtype", "weight_dtype is not a known format");
	if (mp_dtype_layout_of(req->kv_cache_dtype).block_values == 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/kv_cache_dtype", "kv_cache_dtype is not a known format");
	if (req->batch_size < 1 || req->batch_size > MP_MAX_BATCH_SIZE)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/batch_size", "batch_size must be between 1 and %llu",
		               (unsigned long long)MP_MAX_BATCH_SIZE);
	if (req->sequence_length < 1 || req->sequence_length > MP_MAX_SEQUENCE_LENGTH)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/sequence_length", "sequence_length must be between 1 and %llu",
		               (unsigned long long)MP_MAX_SEQUENCE_LENGTH);
	if (req->num_gpus > MP_MAX_GPUS || tp > MP_MAX_GPUS)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/num_gpus", "num_gpus must be between 1 and %llu",
		               (unsigned long long)MP_MAX_GPUS);
	if (req->num_gpus && tp > req->num_gpus)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/tensor_parallel_size",
		               "tensor_parallel_size (%llu) must not exceed num_gpus (%llu)", (unsigned long long)tp,
		               (unsigned long long)req->num_gpus);
	if (req->num_gpus && req->num_gpus % tp != 0)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/num_gpus",
		               "num_gpus (%llu) must be a multiple of tensor_parallel_size (%llu): each group of "
		               "tensor_parallel_size GPUs holds one replica",
		               (unsigned long long)req->num_gpus, (unsigned long long)tp);
	return MP_OK;
}

/* The tensor-parallel degree the model allows; when it came from num_gpus, the error names num_gpus. */
static mp_status check_degree(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o, uint64_t tp,
                              mp_error *err)
{
	if (o->tensor_parallel_size == 0 && req->num_gpus > 1 && !mp_tp_degree_ok(m, tp)) {
		char list[256];

		/* the degree came from num_gpus: name the field the caller sent */
		list_degrees(m, list, sizeof(list));
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/num_gpus",
		               "num_gpus %llu is taken as tensor_parallel_size (none was given), which must divide the "
		               "attention heads (%llu) and every FFN width, and divide or be a multiple of the KV heads "
		               "(%llu); valid: %s. Give tensor_parallel_size too to run data-parallel replicas (num_gpus a "
		               "multiple of it)",
		               (unsigned long long)tp, (unsigned long long)m->num_heads, (unsigned long long)m->num_kv_heads,
		               list);
	}
	return mp_check_tp_degree(m, tp, req->json_pointer, err);
}

/* The options: the memory fraction, the block size, the kept logits, a shared length's one token per slot. */
static mp_status check_opts(const mp_inference_req *req, const mp_inference_opts *o, mp_error *err)
{
	if (o->gpu_memory_utilization < 0 || o->gpu_memory_utilization > 1 ||
	    o->gpu_memory_utilization != o->gpu_memory_utilization)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/gpu_memory_utilization",
		               "gpu_memory_utilization must be in (0, 1]: the fraction of the GPU the plan may use");
	if (o->kv_block_size > MP_MAX_SEQUENCE_LENGTH)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/kv_block_size", "kv_block_size must be between 1 and %llu",
		               (unsigned long long)MP_MAX_SEQUENCE_LENGTH);
	if (o->logits_positions > req->sequence_length)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/logits_positions",
		               "logits_positions must be between 1 and sequence_length (%llu)",
		               (unsigned long long)req->sequence_length);
	if (o->length_scope == MP_LENGTH_SHARED && req->sequence_length < req->batch_size)
		return mp_fail_at(err, MP_EINVAL, req->json_pointer, "/sequence_length",
		               "with sequence_length_scope shared, sequence_length (%llu) is the total over all %llu slots "
		               "and must be at least batch_size (one token per slot)",
		               (unsigned long long)req->sequence_length, (unsigned long long)req->batch_size);
	return MP_OK;
}

static mp_status check_req(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o, uint64_t tp,
                           mp_error *err)
{
	uint64_t per_seq;
	mp_status st = check_sizes(req, tp, err);

	if (st == MP_OK)
		st = check_degree(m, req, o, tp, err);
	if (st == MP_OK)
		st = check_opts(req, o, err);
	if (st != MP_OK)
		return st;
	per_seq = o->length_scope == MP_LENGTH_SHARED
	              ? req->sequence_length / req->batch_size + (req->sequence_length % req->batch_size != 0)
	              : req->sequence_length;
	return mp_check_context(m, per_seq, o->allow_beyond_max_position, req->json_pointer, "/sequence_length", err);
}

static uint64_t req_tp(const mp_inference_req *req, const mp_inference_opts *o)
{
	if (o->tensor_parallel_size)
		return o->tensor_parallel_size;
	return req->num_gpus ? req->num_gpus : 1;
}

/* The memory of one configuration (no fit). weights: this configuration's weights when the caller has them (the
 * fit searches vary batch_size and sequence_length, on which weights do not depend), NULL to compute them. */
static mp_status evaluate(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o,
                          const mp_device *dev, const mp_weights *weights, mp_inference_memory *mem, mp_error *err)
{
	uint64_t tp = req_tp(req, o);
	mp_status st;

	memset(mem, 0, sizeof(*mem));
	mem->tensor_parallel_size = tp;
	st = mp_model_validate(m, err);
	if (st == MP_OK)
		st = check_req(m, req, o, tp, err);
	if (st != MP_OK)
		return st;
	mem->context_limit = mp_model_context_limit(m);
	if (weights)
		mem->weights = *weights;
	else if (o->weights)
		mem->weights = *o->weights;
	else {
		mp_weight_formats f = o->formats;

		f.json_pointer = req->json_pointer; /* the formats are fields of this request */
		st = mp_weight_bytes(m, req->weight_dtype, o->compute_dtype, &f, tp, &mem->weights, err);
	}
	if (st != MP_OK)
		return st;
	mem->weights_bytes = mem->weights.total_bytes;
	st = mp_kv_cache(m, req, o, &mem->kv_cache_bytes, &mem->kv, err);
	if (st != MP_OK)
		return st;
	mem->kv_cache_bytes_per_token = mem->kv.bytes_per_token;
	if (o->attention != MP_ATTENTION_NONE) {
		st = mp_prefill_workspace(m, req, o, &mem->workspace, err);
		if (st != MP_OK)
			return st;
		mem->activations_bytes = mem->workspace.attention_phase_bytes;
		if (mem->workspace.mlp_phase_bytes > mem->activations_bytes)
			mem->activations_bytes = mem->workspace.mlp_phase_bytes;
		if (mem->workspace.head_phase_bytes > mem->activations_bytes)
			mem->activations_bytes = mem->workspace.head_phase_bytes;
	}
	mem->overhead_bytes = mp_inference_overhead_bytes(req, dev);
	mem->total_bytes = mem->weights_bytes;
	if (!mp_add_u64(mem->total_bytes, mem->kv_cache_bytes, &mem->total_bytes) ||
	    !mp_add_u64(mem->total_bytes, mem->activations_bytes, &mem->total_bytes) ||
	    !mp_add_u64(mem->total_bytes, mem->overhead_bytes, &mem->total_bytes) ||
	    mem->total_bytes > MP_MAX_PLAN_BYTES)
		return mp_fail_at(err, MP_EOVERFLOW, req->json_pointer, "/sequence_length",
			       "the plan needs more than 2^53 bytes (9 PB) per GPU: beyond any device, and beyond what "
			       "the API reports as an exact integer");
	return MP_OK;
}

uint64_t mp_inference_overhead_bytes(const mp_inference_req *req, const mp_device *dev)
{
	return req->cuda_context_bytes            ? req->cuda_context_bytes
	       : (dev && dev->cuda_context_bytes) ? dev->cuda_context_bytes
	       : (dev && dev->host_memory)        ? 0 /* a CPU: no CUDA context */
	                                          : MP_DEFAULT_CUDA_CONTEXT_BYTES;
}

bool mp_inference_on_device(const mp_inference_memory *mem, const mp_inference_req *req, const mp_device *dev,
                            mp_inference_memory *out)
{
	uint64_t overhead = mp_inference_overhead_bytes(req, dev), total = mem->total_bytes - mem->overhead_bytes;

	if (out != mem)
		*out = *mem;
	if (!mp_add_u64(total, overhead, &total) || total > MP_MAX_PLAN_BYTES)
		return false;
	out->overhead_bytes = overhead;
	out->total_bytes = total;
	return true;
}

static uint64_t budget_of(const mp_inference_opts *o, uint64_t capacity)
{
	double u = o->gpu_memory_utilization > 0 ? o->gpu_memory_utilization : 1.0;

	return u >= 1.0 ? capacity : (uint64_t)((double)capacity * u);
}

/* Does the request, changed as given, fit in budget? Errors (overflow at huge sizes) count as "no". weights as for
 * evaluate. */
static bool fits_with(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o, const mp_device *dev,
                      const mp_weights *weights, uint64_t budget)
{
	mp_inference_memory mem;

	/* no error text: the probes past the model's context or 2^53 bytes fail by design, and formatting each
	 * message (about 1,600 instructions) was a tenth of a plan's cost */
	return evaluate(m, req, o, dev, weights, &mem, NULL) == MP_OK && mem.total_bytes <= budget;
}

typedef struct fit_search {
	const mp_model *m;
	mp_inference_req r;	/* the request, batch_size or sequence_length set per probe */
	const mp_inference_opts *o;
	const mp_device *dev;
	const mp_weights *weights;
	uint64_t budget;
	bool batch;		/* probe batch_size (else sequence_length) */
} fit_search;

/* total - budget - 1/2 for v: >= 0 exactly when v does not fit (totals are whole bytes), +inf when v cannot be
 * planned (overflow at huge sizes counts as "does not fit"). */
static mp_status excess_at(void *ctx, uint64_t v, double *out, mp_error *err)
{
	fit_search *c = ctx;
	mp_inference_memory mem;

	(void)err;
	if (c->batch)
		c->r.batch_size = v;
	else
		c->r.sequence_length = v;
	*out = evaluate(c->m, &c->r, c->o, c->dev, c->weights, &mem, NULL) == MP_OK /* as fits_with: no error text */
	           ? (double)mem.total_bytes - (double)c->budget - 0.5
	           : INFINITY;
	return MP_OK;
}

/* The largest v in [max(lo, 1), hi] that fits in budget (memory grows with v); 0 when none does. lo > 0 is the
 * caller's floor, a value that must fit for the search to mean anything. The crossing search (mp_core.h) gives
 * the bisection's answer in about 4 plans instead of about 20, since memory is close to linear in both. */
static uint64_t largest(const mp_model *m, const mp_inference_req *base, const mp_inference_opts *o,
                        const mp_device *dev, const mp_weights *weights, uint64_t budget, bool batch, uint64_t lo,
                        uint64_t hi, uint64_t known_v, uint64_t known_total)
{
	fit_search c = {m, *base, o, dev, weights, budget, batch};
	uint64_t a = lo > 0 ? lo : 1, first_over;
	double ga, ghi, gk = (double)known_total - (double)budget - 0.5;

	if (lo == 0 && hi == 0)
		return 0;
	/* the request's own plan is one probe already made: it narrows the bracket from one side (memory grows with v,
	 * so the crossing is the same) and the search makes one plan fewer */
	if (known_v > a && known_v < hi && gk < 0) {
		a = known_v;
		ga = gk;
	} else {
		excess_at(&c, a, &ga, NULL);
		if (ga >= 0)
			return 0;
	}
	if (a >= hi)
		return a;
	if (known_v > a && known_v <= hi && gk >= 0)
		ghi = gk, hi = known_v;
	else
		excess_at(&c, hi, &ghi, NULL);
	if (ghi < 0)
		return hi;
	if (mp_search_crossing(a, ga, hi, ghi, excess_at, &c, &first_over, NULL, NULL) != MP_OK)
		return 0; /* not reached: excess_at never fails */
	return first_over - 1;
}

void mp_fit_verdict(const mp_inference_memory *mem, const mp_inference_opts *opts, const mp_device *dev, mp_fit *fit)
{
	static const mp_inference_opts defaults;
	const mp_inference_opts *o = opts ? opts : &defaults;
	uint64_t biggest;

	memset(fit, 0, sizeof(*fit));
	fit->capacity_bytes = mp_device_capacity_bytes(dev);
	fit->budget_bytes = budget_of(o, fit->capacity_bytes);
	fit->reserve_bytes = fit->capacity_bytes - fit->budget_bytes;
	fit->fits = mem->total_bytes <= fit->budget_bytes;
	fit->headroom_bytes = (int64_t)fit->budget_bytes - (int64_t)mem->total_bytes;
	fit->binding_term = "weights";
	biggest = mem->weights_bytes;
	if (mem->kv_cache_bytes > biggest)
		fit->binding_term = "kv_cache", biggest = mem->kv_cache_bytes;
	if (mem->activations_bytes > biggest)
		fit->binding_term = "activations", biggest = mem->activations_bytes;
	if (mem->overhead_bytes > biggest)
		fit->binding_term = "overhead";
}

mp_status mp_plan_inference(const mp_model *m, const mp_param_count *pc, const mp_inference_req *req,
                            const mp_device *dev, mp_inference_memory *mem, mp_fit *fit, mp_error *err)
{
	return mp_plan_inference_ex(m, pc, req, NULL, dev, mem, fit, err);
}

/* The longest sequence the fit searches: the model's context (per slot; a shared length: the batch's slots). */
static uint64_t sequence_ceiling(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o)
{
	uint64_t seq_hi = mp_model_sequence_ceiling(m, o->allow_beyond_max_position), cap;

	if (o->length_scope == MP_LENGTH_SHARED && !o->allow_beyond_max_position)
		seq_hi = mp_mul_u64(seq_hi, req->batch_size, &cap) && cap < MP_MAX_SEQUENCE_LENGTH ? cap
												   : MP_MAX_SEQUENCE_LENGTH;
	return seq_hi;
}

/* The smallest GPU count: the first valid tensor-parallel degree at which the request fits (0: none). */
static uint64_t min_gpus(const mp_model *m, const mp_inference_req *req, const mp_inference_opts *o,
                         const mp_device *dev, const mp_inference_memory *mem, const mp_fit *fit)
{
	uint64_t degrees[MP_MAX_TP_DEGREES];
	size_t nd = mp_valid_tp_degrees(m, degrees, MP_MAX_TP_DEGREES);

	for (size_t i = 0; i < nd && i < MP_MAX_TP_DEGREES; i++) {
		mp_inference_req r = *req;
		mp_inference_opts ro = *o;

		/* the request's own layout on as many GPUs as its tensor-parallel degree: the plan just made */
		if (degrees[i] == mem->tensor_parallel_size && (req->num_gpus == 0 || req->num_gpus == degrees[i])) {
			if (fit->fits)
				return degrees[i];
			continue;
		}
		ro.tensor_parallel_size = degrees[i];
		ro.weights = NULL; /* given for the request's own degree only */
		r.num_gpus = degrees[i];
		if (fits_with(m, &r, &ro, dev, NULL, fit->budget_bytes))
			return degrees[i];
	}
	return 0;
}

mp_status mp_plan_inference_ex(const mp_model *m, const mp_param_count *pc, const mp_inference_req *req,
                               const mp_inference_opts *opts, const mp_device *dev, mp_inference_memory *mem,
                               mp_fit *fit, mp_error *err)
{
	static const mp_inference_opts defaults;
	const mp_inference_opts *o = opts ? opts : &defaults;
	mp_status st;
	uint64_t seq_hi;

	(void)pc;
	if (fit)
		memset(fit, 0, sizeof(*fit));
	st = evaluate(m, req, o, dev, NULL, mem, err);
	if (st != MP_OK || dev == NULL || fit == NULL)
		return st;

	mp_fit_verdict(mem, o, dev, fit);
	/* the searches keep this tensor-parallel degree, so they reuse its weights */
	fit->max_batch_size = largest(m, req, o, dev, &mem->weights, fit->budget_bytes, true, 0, MP_MAX_BATCH_SIZE,
	                              req->batch_size, mem->total_bytes);
	seq_hi = sequence_ceiling(m, req, o);
	/* shared scope: every slot holds at least one token, so the search starts at batch_size */
	fit->max_sequence_length = largest(m, req, o, dev, &mem->weights, fit->budget_bytes, false,
	                                   o->length_scope == MP_LENGTH_SHARED ? req->batch_size : 0, seq_hi,
	                                   req->sequence_length, mem->total_bytes);
	fit->max_sequence_length_at_context = fit->max_sequence_length > 0 && fit->max_sequence_length == seq_hi &&
	                                      seq_hi < MP_MAX_SEQUENCE_LENGTH;
	fit->min_gpus = min_gpus(m, req, o, dev, mem, fit);
	return MP_OK;
}
