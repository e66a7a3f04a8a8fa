/*
 * capacity.c: GET /v1/capacity, for dashboards: for each stored device (in id order, filtered), how many
 * replicas of a model fit on one GPU, how many sequences of a length one replica holds at once, and the roofline
 * bound on decode speed.
 */
#include <stdio.h>
#include <string.h>

#include "service.h"

typedef struct cap_ctx {
	const mps_model *m;
	const mps_capacity_request *r;
	mps_capacity_fn fn;
	void *ctx;
	mp_error *err;
	char last[MP_STORE_ID_MAX];
	uint64_t left;			/* devices still to answer in this page */
	bool full;			/* the page is full: one more device exists */
} cap_ctx;

/*
 * Decode speed bound from the roofline engine (planner/step.c, the same one as the inference plan's performance
 * block): one decode step of b sequences, each attending over its own sequence_length - 1 cached tokens, every
 * operation's floor max(bytes / bandwidth, FLOPs / peak) summed. Weights are read once per step (the embedding
 * table as a lookup), the KV cache once per sequence (it does not batch), MoE layers the experts the batch
 * touches. Returns tokens/s over all b sequences (0 when the step cannot be analysed) and whether compute-bound
 * operations take most of the step.
 * Worked example: Llama-3-8B bf16 on an H200 (4.8e12 B/s), L = 4096, b = 1: about 308 tokens/s (the memory-only
 * formula (weights + KV) / bandwidth gives 289: it also charges the whole embedding table).
 */
static double decode_tokens_per_second(const mps_model *m, const mp_device *d, const mps_capacity_request *r,
				       uint64_t b, bool *compute_bound)
{
	mp_step_req sr;
	mp_step step;
	mp_error e;

	memset(&sr, 0, sizeof(sr));
	sr.weight_dtype = r->weight_dtype;
	sr.kv_cache_dtype = r->kv_cache_dtype;
	sr.batch_size = b;
	sr.context_tokens = r->sequence_length > 1 ? r->sequence_length - 1 : 1;
	sr.prompt_tokens = 1;
	sr.allow_beyond_max_position = true; /* the memory plan has already applied the context rule */
	if (mp_step_analyze(&m->arch, d, MP_PHASE_DECODE, &sr, &step, &e) != MP_OK)
		return 0;
	*compute_bound = step.compute_bound;
	return step.tokens_per_second_total;
}

static mp_status cap_device(const mp_store_device *d, void *ctx)
{
	cap_ctx *c = ctx;
	mp_inference_req req = { c->r->weight_dtype, c->r->kv_cache_dtype, 1, c->r->sequence_length, 1, 0, NULL };
	mps_capacity_row row;
	mp_status st;

	if (c->left == 0) { /* a device past the page: there is a next one */
		c->full = true;
		return MP_ECONFLICT; /* stops the listing; not an error (mps_capacity) */
	}
	c->left--;
	memset(&row, 0, sizeof(row));
	snprintf(c->last, sizeof(c->last), "%s", d->id);
	st = mp_plan_inference(&c->m->arch, &c->m->params, &req, &d->hw, &row.mem, &row.fit, c->err);
	if (st != MP_OK)
		return st;
	row.device = d;
	row.replicas_per_gpu = row.fit.capacity_bytes / row.mem.total_bytes;
	row.max_concurrent_sequences = row.fit.fits ? row.fit.max_batch_size : 0;
	if (row.fit.fits) {
		bool cb1 = false;

		row.decode_tokens_per_second_per_sequence = decode_tokens_per_second(c->m, &d->hw, c->r, 1, &cb1);
		row.decode_tokens_per_second_at_max_concurrency =
			decode_tokens_per_second(c->m, &d->hw, c->r, row.fit.max_batch_size, &row.decode_compute_bound);
	}
	return c->fn(c->ctx, &row);
}

mp_status mps_capacity(mps_service *s, const mps_capacity_request *r, mps_model *model, mps_capacity_fn fn, void *ctx,
		       char *next_cursor, mp_error *err)
{
	mp_store_device_filter f = { r->vendor[0] ? r->vendor : NULL, r->source[0] ? r->source : NULL, 0 };
	mps_model_ref ref;
	cap_ctx c;
	int more = 1;
	mp_status st;

	memset(&ref, 0, sizeof(ref));
	ref.kind = MPS_MODEL_STORED;
	snprintf(ref.id, sizeof(ref.id), "%s", r->model);
	snprintf(ref.pointer, sizeof(ref.pointer), "?model");
	if (!mp_valid_id(r->model))
		return mp_fail(err, MP_EINVAL, "?model",
			       "the model id is not a valid id: ids match ^[a-z0-9][a-z0-9._-]{0,62}$ (1 to 63 bytes)");
	st = mps_model_resolve(s, &ref, model, err);
	if (st != MP_OK)
		return st;
	memset(&c, 0, sizeof(c));
	c.m = model;
	c.r = r;
	c.fn = fn;
	c.ctx = ctx;
	c.err = err;
	c.left = r->limit ? r->limit : MPS_CAPACITY_MAX_LIMIT;
	snprintf(c.last, sizeof(c.last), "%s", r->after);
	next_cursor[0] = '\0';
	while (st == MP_OK && more && !c.full)
		st = mp_store_device_find(mps_store(s), &f, c.last[0] ? c.last : NULL, 1000, cap_device, &c, &more, err);
	if (c.full) { /* the listing stopped at a device beyond the page: continue after the last one answered */
		snprintf(next_cursor, MP_STORE_ID_MAX, "%s", c.last);
		return MP_OK;
	}
	return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
}
