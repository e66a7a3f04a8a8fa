/*
 * fit.c: POST /v1/fit, the scheduler's batch: every job against every device and GPU count. Models are resolved
 * once per request (a stored id shared by many jobs is read once); training memory does not depend on the device,
 * so it is planned once per GPU count; inference is planned per device and GPU count and judged with the cheap
 * verdict. Answers go to the sink job by job, so nothing holds the whole answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

typedef struct fit_ctx {
	mps_service *s;
	mp_store_device *devs;
	size_t ndevs, cap;
	mps_model *models;		/* per job; a stored model resolved once and copied */
} fit_ctx;

static mp_status collect_device(const mp_store_device *d, void *ctx)
{
	fit_ctx *c = ctx;

	if (c->ndevs == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		mp_store_device *p = realloc(c->devs, cap * sizeof(*p));

		if (p == NULL)
			return MP_ENOMEM;
		c->devs = p;
		c->cap = cap;
	}
	c->devs[c->ndevs++] = *d;
	return MP_OK;
}

static mp_status load_devices(fit_ctx *c, const mps_fit_request *rq, mp_error *err)
{
	if (rq->devices == NULL) {
		/* the stored devices of the kinds asked for: GPUs unless the request says otherwise */
		mp_store_device_filter f = { NULL, NULL, 0, rq->kinds ? rq->kinds : MP_STORE_KIND_GPU };
		int more = 1;
		mp_status st = MP_OK;

		while (st == MP_OK && more) {
			const char *after = c->ndevs ? c->devs[c->ndevs - 1].id : NULL;

			st = mp_store_device_find(mps_store(c->s), &f, after, MPS_FIT_MAX_DEVICES, collect_device, c, &more,
						  err);
			if (st == MP_OK && more && c->ndevs >= MPS_FIT_MAX_DEVICES)
				return mp_fail(err, MP_ETOOLARGE, "/devices",
					       "more than %d devices are stored: list the ones to fit in devices",
					       MPS_FIT_MAX_DEVICES);
		}
		return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
	}
	c->devs = malloc((rq->ndevices ? rq->ndevices : 1) * sizeof(*c->devs));
	if (c->devs == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < rq->ndevices; i++) {
		mp_status st = mps_device_resolve(c->s, &rq->devices[i], &c->devs[c->ndevs], err);

		if (st != MP_OK)
			return st;
		c->ndevs++;
	}
	return MP_OK;
}

static const mps_model_ref *job_model(const mps_fit_job *j)
{
	return j->training ? &j->u.train.model : &j->u.inference.model;
}

/* Each job's model; a stored id already resolved in this request is copied, not read again. */
static mp_status load_models(fit_ctx *c, const mps_fit_request *rq, mp_error *err)
{
	c->models = calloc(rq->njobs ? rq->njobs : 1, sizeof(*c->models));
	if (c->models == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < rq->njobs; i++) {
		const mps_fit_job *j = &rq->jobs[i];
		const mps_model_ref *ref = job_model(j);
		bool shared = false;
		mp_status st;

		for (size_t k = 0; ref->kind == MPS_MODEL_STORED && k < i && !shared; k++)
			if (job_model(&rq->jobs[k])->kind == MPS_MODEL_STORED && strcmp(c->models[k].id, ref->id) == 0) {
				c->models[i] = c->models[k];
				snprintf(c->models[i].arch.json_pointer, sizeof(c->models[i].arch.json_pointer), "%s",
					 ref->pointer);
				shared = true;
			}
		if (shared)
			continue;
		st = mps_model_resolve(c->s, ref, &c->models[i], err);
		if (st != MP_OK)
			return st;
		if (!j->training && !c->models[i].architecture_known)
			return mp_fail(err, MP_EINVAL, j->u.inference.pointer,
				       "inference needs the architecture for the KV cache: give the model as a stored "
				       "id, {\"hf_config\": {...}} or {\"architecture\": {...}}");
	}
	return MP_OK;
}

/* One training job: memory per GPU count (it does not depend on the device), then every device's rows. */
static mp_status fit_training(const fit_ctx *c, const mps_fit_request *rq, const mps_fit_job *j, const mps_model *m,
			      const mps_fit_sink *sink, void *ctx, mp_error *err)
{
	mp_training_memory *tm = calloc(rq->ngpu_counts, sizeof(*tm));
	bool tvalid[MPS_FIT_MAX_GPU_COUNTS];
	mps_fit_row rows[MPS_FIT_MAX_GPU_COUNTS];
	size_t valid = 0;
	mp_status st = MP_OK;

	if (tm == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	/* a layout no GPU count can use is the job's own error (a 422), not a row of invalid layouts */
	for (size_t g = 0; g < rq->ngpu_counts; g++) {
		mp_training_req r = j->u.train.req;
		mp_error e = MP_ERROR_INIT;

		r.num_gpus = rq->gpu_counts[g];
		r.json_pointer = j->u.train.pointer;
		st = mp_plan_training(m->architecture_known ? &m->arch : NULL, &m->params, &r, &tm[g], g == 0 ? err : &e);
		if (st != MP_OK && st != MP_EINVAL)
			goto out;
		tvalid[g] = st == MP_OK;
		valid += tvalid[g];
	}
	st = MP_OK;
	if (valid == 0) {
		st = MP_EINVAL; /* err holds the first GPU count's reason */
		goto out;
	}
	for (size_t d = 0; d < c->ndevs && st == MP_OK; d++) {
		const mp_store_device *dev = &c->devs[d];
		uint64_t smallest = 0;

		for (size_t g = 0; g < rq->ngpu_counts; g++) {
			mps_fit_row *row = &rows[g];

			memset(row, 0, sizeof(*row));
			row->gpu_count = rq->gpu_counts[g];
			row->binding_term = "invalid_layout";
			if (tvalid[g]) {
				mp_fit fit;

				mp_training_verdict(&tm[g], &dev->hw, &fit); /* the plan endpoint's own rule */
				row->total_bytes = tm[g].total_bytes;
				row->fits = fit.fits;
				row->headroom_bytes = fit.headroom_bytes;
				row->binding_term = fit.binding_term;
			}
			if (row->fits && smallest == 0)
				smallest = row->gpu_count;
		}
		st = sink->device(ctx, dev, rows, rq->ngpu_counts, smallest);
	}
out:
	free(tm);
	return st;
}

static mp_status fit_inference(const fit_ctx *c, const mps_fit_request *rq, const mps_fit_job *j, const mps_model *m,
			       const mps_fit_sink *sink, void *ctx, mp_error *err)
{
	const mps_inference_job *ij = &j->u.inference;
	mps_fit_row rows[MPS_FIT_MAX_GPU_COUNTS];
	mp_inference_memory *mem = malloc(sizeof(*mem));
	mp_status st = MP_OK;

	if (mem == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (size_t d = 0; d < c->ndevs && st == MP_OK; d++) {
		const mp_store_device *dev = &c->devs[d];
		mps_inference_job job = *ij;
		uint64_t smallest = 0;

		/* the plan endpoint's defaults (dtype "auto" depends on the device's bf16 support) */
		mps_inference_defaults(&m->arch, &dev->hw, &job, NULL, NULL);
		for (size_t g = 0; g < rq->ngpu_counts; g++) {
			mps_fit_row *row = &rows[g];
			mp_inference_req r;
			mp_inference_opts o;
			mp_fit fit;
			mp_error e = { { 0 }, { 0 }, NULL };

			memset(row, 0, sizeof(*row));
			row->gpu_count = rq->gpu_counts[g];
			row->binding_term = "invalid_layout";
			r = job.req;
			r.num_gpus = rq->gpu_counts[g];
			r.json_pointer = ij->pointer;
			/* the engine's defaults on this device (the prefill chunk depends on its memory) */
			st = mps_inference_opts_for(&job, dev, &o, NULL, &e);
			if (st == MP_OK)
				st = mp_plan_inference_ex(&m->arch, &m->params, &r, &o, &dev->hw, mem, NULL, &e);
			if (st != MP_OK && st != MP_EINVAL) {
				mp_fail(err, st, e.field, "%s", e.message);
				goto out;
			}
			if (st == MP_OK) {
				mp_fit_verdict(mem, &o, &dev->hw, &fit);
				row->total_bytes = mem->total_bytes;
				row->fits = fit.fits;
				row->headroom_bytes = fit.headroom_bytes;
				row->binding_term = fit.binding_term ? fit.binding_term : "weights";
			}
			st = MP_OK;
			if (row->fits && smallest == 0)
				smallest = row->gpu_count;
		}
		st = sink->device(ctx, dev, rows, rq->ngpu_counts, smallest);
	}
out:
	free(mem);
	return st;
}

mp_status mps_fit(mps_service *s, const mps_fit_request *rq, const mps_fit_sink *sink, void *ctx, mp_error *err)
{
	fit_ctx c;
	mp_status st;

	memset(&c, 0, sizeof(c));
	c.s = s;
	st = load_models(&c, rq, err);
	if (st == MP_OK)
		st = load_devices(&c, rq, err);
	if (st == MP_OK && rq->njobs * c.ndevs > MPS_FIT_MAX_PAIRS)
		st = mp_fail(err, MP_ETOOLARGE, "/jobs", "%zu jobs x %zu devices is more than %d pairs per request",
			     rq->njobs, c.ndevs, MPS_FIT_MAX_PAIRS);
	if (st == MP_OK)
		st = sink->begin(ctx, rq, c.ndevs);
	for (size_t i = 0; i < rq->njobs && st == MP_OK; i++) {
		const mps_fit_job *j = &rq->jobs[i];

		st = sink->job_begin(ctx, j, &c.models[i]);
		if (st == MP_OK)
			st = j->training ? fit_training(&c, rq, j, &c.models[i], sink, ctx, err)
					 : fit_inference(&c, rq, j, &c.models[i], sink, ctx, err);
		if (st == MP_OK)
			st = sink->job_end(ctx);
	}
	if (st == MP_ENOMEM && err->message[0] == '\0')
		mp_fail(err, MP_ENOMEM, "", "out of memory");
	free(c.devs);
	free(c.models);
	return st;
}
