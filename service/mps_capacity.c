/*
 * mps_capacity.c: GET /v1/capacity, for dashboards: for each stored device (in id order, filtered), how many
 * replicas of a model fit on one GPU, how many sequences of a length one replica holds at once, and the roofline
 * bound on decode speed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service_int.h"

typedef struct cap_ctx {
	const mps_model *m;
	const mps_capacity_request *r;
	mps_inference_job job;		/* r's, its defaulted prefill warned once by the answer, not per row */
	mps_warnings answer;		/* the answer's own warnings */
	mps_inference_plan *plan;	/* heap: one row's plan at a time */
	mps_capacity_fn fn;
	void *ctx;
	mp_error *err;
	char last[MP_STORE_ID_MAX];	/* the last device answered: the next page's cursor */
} cap_ctx;

/*
 * Decode speed bound from the roofline engine (planner/step.c, the same one as the inference plan's performance
 * block): one decode step of b sequences, each attending over its own sequence_length - 1 cached tokens, every
 * operation's floor max(bytes / bandwidth, FLOPs / peak) summed. Weights are read once per step (the embedding
 * table as a lookup), the KV cache once per sequence (it does not batch), MoE layers the experts the batch
 * touches. Returns tokens/s over all b sequences (0 when the step cannot be analysed) and whether compute-bound
 * operations take most of the step. Per GPU with tensor parallelism (all-reduces not modelled).
 * Worked example: Llama-3-8B bf16 on an H200 (4.8e12 B/s), L = 4096, b = 1: about 308 tokens/s (the memory-only
 * formula (weights + KV) / bandwidth gives 289: it also charges the whole embedding table).
 */
static double decode_tokens_per_second(const mps_model *m, const mp_device *d, const mps_inference_plan *p, uint64_t b,
				       bool *compute_bound)
{
	mp_step_req sr;
	mp_step step;
	mp_weights whole;
	mp_error e = MP_ERROR_INIT;

	memset(&sr, 0, sizeof(sr));
	/* the matrices as the row's plan stores them, as its performance block reads them (mps_step_weights) */
	if (mps_step_weights(&m->arch, p->job.req.weight_dtype, &p->opts, &p->mem.weights, p->mem.tensor_parallel_size,
			     NULL, &whole, &sr.weights, &e) != MP_OK)
		return 0;
	sr.weight_dtype = p->job.req.weight_dtype;
	sr.kv_cache_dtype = p->job.req.kv_cache_dtype;
	sr.batch_size = b;
	sr.context_tokens = p->job.req.sequence_length > 1 ? p->job.req.sequence_length - 1 : 1;
	sr.prompt_tokens = 1;
	sr.allow_beyond_max_position = true; /* the memory plan has already applied the context rule */
	sr.tensor_parallel_size = p->mem.tensor_parallel_size;
	if (mp_step_analyze(&m->arch, d, MP_PHASE_DECODE, &sr, &step, &e) != MP_OK)
		return 0;
	*compute_bound = step.compute_bound;
	return step.tokens_per_second_total;
}

static mp_status cap_device(const mp_store_device *d, void *ctx)
{
	cap_ctx *c = ctx;
	mps_capacity_row row;
	mp_error e = MP_ERROR_INIT;
	mp_status st;

	memset(&row, 0, sizeof(row));
	snprintf(c->last, sizeof(c->last), "%s", d->id);
	/* the plan endpoint's own evaluation of the same job on this device (one story: the row's concurrent
	 * sequences are that plan's max_batch_size) */
	st = mps_plan_inference_on(c->m, d, &c->job, c->plan, &e);
	if ((st == MP_EUNSUPPORTED || st == MP_EINVAL) && strncmp(e.field, "/device", 7) == 0) {
		/* a profile that cannot answer (no peak for the dtype, say): the fleet's other rows still do, and the
		 * answer names the device and what its profile lacks */
		mps_warn(&c->answer, "device %s left out: %s (its profile's %s)", d->id, e.message,
			 e.field[7] ? e.field + 7 : "/");
		row.answer_warnings = &c->answer;
		return c->fn(c->ctx, &row);
	}
	if (st != MP_OK)
		return mp_fail(c->err, st, e.field, "%s", e.message);
	mps_warn_prefill_rows(&c->plan->prefill, &c->answer);
	row.answer_warnings = &c->answer;
	row.device = d;
	row.plan = c->plan;
	row.mem = c->plan->mem;
	row.fit = c->plan->fit;
	row.replicas_per_gpu = row.mem.total_bytes ? row.fit.budget_bytes / row.mem.total_bytes : 0;
	row.max_concurrent_sequences = row.fit.fits ? row.fit.max_batch_size : 0;
	if (row.fit.fits) {
		bool cb1 = false;

		row.decode_tokens_per_second_per_sequence = decode_tokens_per_second(c->m, &d->hw, c->plan, 1, &cb1);
		row.decode_tokens_per_second_at_max_concurrency =
			decode_tokens_per_second(c->m, &d->hw, c->plan, row.fit.max_batch_size, &row.decode_compute_bound);
	}
	return c->fn(c->ctx, &row);
}

mp_status mps_capacity(mps_service *s, const mps_capacity_request *r, mps_model *model, mps_capacity_fn fn, void *ctx,
		       char *next_cursor, mp_error *err)
{
	mp_store_device_filter f = { r->vendor[0] ? r->vendor : NULL, r->source[0] ? r->source : NULL, 0,
				     r->kinds ? r->kinds : MP_STORE_KIND_GPU };
	cap_ctx c;
	bool more = false;
	mp_status st;

	st = mps_model_resolve(s, &r->job.model, model, err);
	if (st == MP_OK && !model->architecture_known)
		st = mp_fail(err, MP_EINVAL, "?model", "capacity needs the model's architecture");
	if (st != MP_OK)
		return st;
	memset(&c, 0, sizeof(c));
	c.m = model;
	c.r = r;
	c.job = r->job;
	c.job.prefill_warned_by_answer = true;
	/* the budget every row's fit takes, said once (this endpoint takes neither engine nor gpu_memory_utilization) */
	mps_warn(&c.answer, "budget: each row's fit takes the whole capacity (gpu_memory_utilization 1); vLLM would keep "
		 "%.2f of it (its default gpu_memory_utilization): POST /v1/fit or /v1/plan/inference with engine or "
		 "gpu_memory_utilization holds the fit to a share",
		 mp_engine_version_find(MP_ENGINE_VLLM, NULL)->memory_fraction);
	c.fn = fn;
	c.ctx = ctx;
	c.err = err;
	c.plan = malloc(sizeof(*c.plan));
	if (c.plan == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	next_cursor[0] = '\0';
	/* each row is planned on a copy of its device, with the store free for other requests (mps_each_device) */
	st = mps_each_device(s, &f, r->after[0] ? r->after : NULL, r->limit ? r->limit : MPS_CAPACITY_MAX_LIMIT,
			     cap_device, &c, &more, err);
	free(c.plan);
	if (st == MP_OK && more) /* devices past the page: continue after the last one answered */
		snprintf(next_cursor, MP_STORE_ID_MAX, "%s", c.last);
	return st;
}
