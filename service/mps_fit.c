/*
 * mps_fit.c: POST /v1/fit, the scheduler's batch: every job against every device and GPU count, in two halves
 * (service.h: mps_fit_prepare, mps_fit_emit). The first resolves each model once (a stored id shared by many jobs is
 * read once), holds the devices in compact form, and plans every job once per GPU count and per defaults group:
 * the devices on which the request's unsaid values (the dtype "auto", the engine's prefill chunk, block size and
 * utilisation) resolve alike. Memory depends on the device only through those defaults and its CUDA context
 * (mp_inference_on_device), training memory not at all, so a batch of J jobs x D devices x G counts costs about
 * J x groups x G plans and J x D x G verdicts. Every error is known when it returns. The second judges one job on
 * every device and hands the rows to the sink, so nothing holds the whole answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service_int.h"

/* One job at one GPU count in one defaults group, planned without a device: the byte terms the verdicts read. */
typedef struct fit_cell {
	uint64_t weights, kv, activations, overhead, total;
	uint64_t host_total;		/* training on a CPU (mp_device.host_memory): no CUDA context nor cuBLAS workspace */
	const char *binding_term;	/* training: the plan's binding term (static) */
	bool valid;			/* false: this GPU count cannot hold the job's layout (a row "invalid_layout") */
} fit_cell;

/* An inference job on the devices of one group: its request with the defaults resolved there, and the options its
 * engine's defaults completed (the plan endpoint's mps_inference_defaults and mps_inference_opts_on). */
typedef struct fit_class {
	mp_inference_req req;
	mp_inference_opts opts;
} fit_class;

struct mps_fit_plan {
	mps_service *s;
	const mps_fit_request *rq;	/* borrowed */
	mps_fit_device *devs;
	size_t ndevs, cap;
	size_t *group;			/* per device: its defaults group (devices alike in what the defaults read) */
	size_t *rep;			/* per group: its first device, whose figures the group's defaults read */
	size_t ngroups;
	mps_model *models;		/* per job; a stored model resolved once and copied */
	fit_class *classes;		/* njobs x ngroups (inference jobs); one job's when one_job */
	fit_cell *cells;		/* njobs x ngroups x ngpu_counts, job-major; one job's when one_job */
	bool one_job;			/* mps_fit: each job planned just before it is emitted, into the first slot */
	bool any_host;			/* a device is a CPU: training jobs are planned for it too */
};

static mp_status add_device(mps_fit_plan *p, const mp_store_device *d)
{
	mps_fit_device *f;

	if (p->ndevs == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		mps_fit_device *n = realloc(p->devs, cap * sizeof(*n));

		if (n == NULL)
			return MP_ENOMEM;
		p->devs = n;
		p->cap = cap;
	}
	f = &p->devs[p->ndevs++];
	snprintf(f->id, sizeof(f->id), "%s", d->id);
	snprintf(f->name, sizeof(f->name), "%s", d->name);
	f->nvml_memory_bytes = d->nvml_memory_bytes;
	f->nvml_name[0] = '\0';
	for (size_t a = 0; a < d->naliases && a < MP_STORE_MAX_ALIASES; a++)
		if (strchr(d->aliases[a], ' ')) {
			snprintf(f->nvml_name, sizeof(f->nvml_name), "%s", d->aliases[a]);
			break;
		}
	f->hw = d->hw;
	return MP_OK;
}

/* A stored device, while the pairs stay within the bound (a store of a million devices is not read to the end). */
static mp_status collect_device(const mp_store_device *d, void *ctx)
{
	mps_fit_plan *p = ctx;

	if (p->rq->njobs * (p->ndevs + 1) > MPS_FIT_MAX_PAIRS)
		return MP_ETOOLARGE;
	return add_device(p, d);
}

/* A problem of the request (a model or device it names that is not stored, a model without an architecture): noted
 * so that every one is named; any other failure (memory, the database) ends the request. */
static bool request_problem(mp_status st)
{
	return st == MP_ENOTFOUND || st == MP_EINVAL;
}

static mp_status load_devices(mps_fit_plan *p, mp_error *err)
{
	const mps_fit_request *rq = p->rq;
	mp_status st = MP_OK;
	mp_problems probs = MP_PROBLEMS_INIT;

	if (rq->devices == NULL) {
		/* the stored devices of the kinds asked for: GPUs unless the request says otherwise */
		mp_store_device_filter f = { NULL, NULL, 0, rq->kinds ? rq->kinds : MP_STORE_KIND_GPU };

		st = mps_each_device(p->s, &f, NULL, 0, collect_device, p, NULL, err);
		if (st == MP_ETOOLARGE)
			return mp_fail(err, st, "/devices",
				       "%zu jobs x the stored devices is more than %d job x device pairs per request: list the "
				       "devices to fit in devices (GET /v1/devices filters them), or send fewer jobs",
				       rq->njobs, MPS_FIT_MAX_PAIRS);
		return st;
	}
	for (size_t i = 0; i < rq->ndevices && st == MP_OK; i++) {
		mp_store_device *d = malloc(sizeof(*d));
		mp_status one;

		if (d == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		one = mps_device_resolve(p->s, &rq->devices[i], d, err);
		if (one == MP_OK && add_device(p, d) != MP_OK)
			one = mp_fail(err, MP_ENOMEM, "", "out of memory");
		free(d);
		if (one != MP_OK && !request_problem(one))
			st = one;
		else
			mp_problems_note(&probs, one, err); /* every device the request names that is not stored */
	}
	return st != MP_OK ? st : mp_problems_end(&probs, err);
}

/* Devices alike in everything the defaults read (bf16 support, capacity, NVML's total, the name's A100 test) share
 * a group; a fleet of many devices of few kinds has few groups. */
static bool same_defaults(const mps_fit_device *a, const mps_fit_device *b)
{
	return (a->hw.peak_flops_per_second[MP_DTYPE_BF16] > 0) == (b->hw.peak_flops_per_second[MP_DTYPE_BF16] > 0) &&
	       mp_device_capacity_bytes(&a->hw) == mp_device_capacity_bytes(&b->hw) &&
	       a->nvml_memory_bytes == b->nvml_memory_bytes && strcmp(a->name, b->name) == 0;
}

static mp_status group_devices(mps_fit_plan *p, mp_error *err)
{
	p->rep = malloc((p->ndevs ? p->ndevs : 1) * sizeof(*p->rep));
	p->group = malloc((p->ndevs ? p->ndevs : 1) * sizeof(*p->group));
	if (p->rep == NULL || p->group == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	p->ngroups = 0;
	for (size_t d = 0; d < p->ndevs; d++) {
		size_t g;

		/* the last group first: devices come in id order, so alike ones are often neighbours */
		if (p->ngroups && same_defaults(&p->devs[p->rep[p->ngroups - 1]], &p->devs[d])) {
			g = p->ngroups - 1;
		} else {
			for (g = 0; g < p->ngroups && !same_defaults(&p->devs[p->rep[g]], &p->devs[d]); g++)
				;
			if (g == p->ngroups)
				p->rep[p->ngroups++] = d;
		}
		p->group[d] = g;
	}
	return MP_OK;
}

/* A training cell's total on hw. */
static uint64_t tm_total(const fit_cell *c, const mp_device *hw)
{
	return hw->host_memory ? c->host_total : c->total;
}

static const mps_model_ref *job_model(const mps_fit_job *j)
{
	return j->training ? &j->u.train.model : &j->u.inference.model;
}

mp_status mps_fit_fetch_models(mps_service *s, mps_fit_request *rq, bool *fetched, mp_error *err)
{
	mp_problems probs = MP_PROBLEMS_INIT;

	if (fetched)
		*fetched = false;
	for (size_t i = 0; i < rq->njobs; i++) {
		mps_model_ref *ref = rq->jobs[i].training ? &rq->jobs[i].u.train.model : &rq->jobs[i].u.inference.model;
		mps_model_ref *same = NULL;
		bool f = false;
		mp_status st;

		if (ref->kind != MPS_MODEL_HF_REPO)
			continue;
		/* a repository an earlier job named at the same revision: its model copied, not fetched again */
		for (size_t k = 0; k < i && same == NULL; k++) {
			mps_model_ref *o = rq->jobs[k].training ? &rq->jobs[k].u.train.model : &rq->jobs[k].u.inference.model;
			if (o->repo_id[0] && strcmp(o->repo_id, ref->repo_id) == 0 && strcmp(o->revision, ref->revision) == 0 &&
			    (o->kind == MPS_MODEL_INLINE || o->kind == MPS_MODEL_STORED))
				same = o;
		}
		if (same && same->kind == MPS_MODEL_STORED) {
			ref->kind = MPS_MODEL_STORED;
			continue;
		}
		if (same) {
			ref->arch = malloc(sizeof(*ref->arch));
			ref->ckpt = same->ckpt ? calloc(1, sizeof(*ref->ckpt)) : NULL;
			if (ref->arch == NULL || (same->ckpt && ref->ckpt == NULL)) {
				free(ref->arch);
				free(ref->ckpt);
				ref->arch = NULL;
				ref->ckpt = NULL;
				return mp_fail(err, MP_ENOMEM, ref->pointer, "out of memory");
			}
			mp_model_copy(ref->arch, same->arch);
			st = ref->ckpt ? mpm_checkpoint_copy(ref->ckpt, same->ckpt, err) : MP_OK;
			if (st != MP_OK)
				return st;
			snprintf(ref->source, sizeof(ref->source), "%s", same->source);
			ref->kind = MPS_MODEL_INLINE;
			continue;
		}
		st = mps_model_ref_fetch(s, ref, &f, err);
		if (f && fetched)
			*fetched = true;
		if (st == MP_ENOMEM)
			return st;
		mp_problems_note(&probs, st, err);
	}
	return mp_problems_end(&probs, err);
}


/* Each job's model; a stored id already resolved in this request is copied, not read again. Every job's problem is
 * named (mp_problems), the first one returned. */
static mp_status load_models(mps_fit_plan *p, mp_error *err)
{
	const mps_fit_request *rq = p->rq;
	uint64_t gen = mp_store_generation(mps_store(p->s)); /* every stored model read at one state */
	mp_problems probs = MP_PROBLEMS_INIT;

	p->models = calloc(rq->njobs ? rq->njobs : 1, sizeof(*p->models));
	if (p->models == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < rq->njobs; i++) {
		const mps_fit_job *j = &rq->jobs[i];
		const mps_model_ref *ref = job_model(j);
		bool shared = false;
		mp_status st;

		for (size_t k = 0; ref->kind == MPS_MODEL_STORED && k < i && !shared; k++)
			if (job_model(&rq->jobs[k])->kind == MPS_MODEL_STORED && strcmp(p->models[k].id, ref->id) == 0) {
				p->models[i] = p->models[k];
				snprintf(p->models[i].arch.json_pointer, sizeof(p->models[i].arch.json_pointer), "%s",
					 ref->pointer);
				shared = true;
			}
		if (shared)
			continue;
		st = mps_model_resolve_at(p->s, ref, gen, &p->models[i], err);
		if (st == MP_OK && !j->training && !p->models[i].architecture_known)
			st = mp_fail(err, MP_EINVAL, j->u.inference.pointer,
				     "inference needs the architecture for the KV cache: give the model as a stored "
				     "id, {\"hf_config\": {...}} or {\"architecture\": {...}}");
		if (st != MP_OK && !request_problem(st))
			return st;
		mp_problems_note(&probs, st, err);
	}
	return mp_problems_end(&probs, err);
}

/* One training job at every GPU count (training memory does not depend on the device). A layout no GPU count can
 * use is the job's own error (a 422), not a row of invalid layouts. */
static mp_status plan_training(const mps_fit_plan *p, const mps_fit_job *j, const mps_model *m, fit_cell *cells,
			       mp_error *err)
{
	const mps_fit_request *rq = p->rq;
	mp_training_memory tm;
	size_t valid = 0;

	for (size_t g = 0; g < rq->ngpu_counts; g++) {
		mp_training_req r = j->u.train.req;
		mp_error e = MP_ERROR_INIT;
		mp_status st;

		mps_training_defaults(&j->u.train, &r); /* as the plan endpoint resolves it */
		r.num_gpus = rq->gpu_counts[g];
		r.json_pointer = j->u.train.pointer;
		st = mp_plan_training(m->architecture_known ? &m->arch : NULL, &m->params, &r, &tm, g == 0 ? err : &e);
		if (st != MP_OK && st != MP_EINVAL) {
			if (g > 0)
				*err = e;
			return st;
		}
		memset(&cells[g], 0, sizeof(cells[g]));
		if (st == MP_OK) {
			cells[g].valid = true;
			cells[g].total = cells[g].host_total = tm.total_bytes;
			cells[g].binding_term = tm.binding_term;
			valid++;
			r.host_memory = true; /* the same layout on a CPU, as the plan endpoint plans it there */
			if (p->any_host && mp_plan_training(m->architecture_known ? &m->arch : NULL, &m->params, &r, &tm, &e) ==
						   MP_OK)
				cells[g].host_total = tm.total_bytes;
		}
	}
	return valid ? MP_OK : MP_EINVAL; /* err holds the first GPU count's reason */
}

/* One inference job in one defaults group at every GPU count, without a device; the devices' CUDA contexts are
 * applied per device. A plan over 2^53 bytes on some device is the request's error, as the plan endpoint would
 * answer it (planned again on that device for its exact message). Returns how many GPU counts hold the layout. */
static mp_status plan_inference_group(const mps_fit_plan *p, const mps_fit_job *j, const mps_model *m, size_t grp,
				      fit_class *cls, fit_cell *cells, size_t *valid, mp_error *err)
{
	const mps_fit_request *rq = p->rq;
	const mps_fit_device *rep = &p->devs[p->rep[grp]];
	mps_inference_job job = j->u.inference;
	mp_inference_memory mem;
	mp_status st;

	/* the plan endpoint's defaults on this group's devices: the dtype "auto" (bf16 support), then the engine's */
	mps_inference_defaults(&m->arch, &rep->hw, &job, NULL, NULL);
	st = mps_inference_opts_on(&job, &rep->hw, rep->name, rep->nvml_memory_bytes, &cls->opts, NULL, err);
	if (st != MP_OK)
		return st;
	cls->req = job.req;
	for (size_t g = 0; g < rq->ngpu_counts; g++) {
		mp_inference_req r = job.req;
		mp_error e = MP_ERROR_INIT;

		r.num_gpus = rq->gpu_counts[g];
		r.json_pointer = j->u.inference.pointer;
		st = mp_plan_inference_ex(&m->arch, &m->params, &r, &cls->opts, NULL, &mem, NULL, *valid == 0 ? err : &e);
		if (st != MP_OK && st != MP_EINVAL) {
			if (*valid > 0)
				*err = e;
			return st;
		}
		memset(&cells[g], 0, sizeof(cells[g]));
		if (st != MP_OK)
			continue;
		for (size_t d = 0; d < p->ndevs; d++) {
			mp_inference_memory on;

			if (p->group[d] != grp || p->devs[d].hw.cuda_context_bytes == 0 ||
			    mp_inference_on_device(&mem, &r, &p->devs[d].hw, &on))
				continue;
			/* the plan endpoint's own error for this device (MP_EOVERFLOW naming the field) */
			st = mp_plan_inference_ex(&m->arch, &m->params, &r, &cls->opts, &p->devs[d].hw, &on, NULL, err);
			if (st == MP_OK)
				st = mp_fail(err, MP_EINTERNAL, j->u.inference.pointer,
					     "the plan on %s disagrees with its rebase", p->devs[d].id);
			return st;
		}
		cells[g].valid = true;
		cells[g].weights = mem.weights_bytes;
		cells[g].kv = mem.kv_cache_bytes;
		cells[g].activations = mem.activations_bytes;
		cells[g].overhead = mem.overhead_bytes;
		cells[g].total = mem.total_bytes;
		(*valid)++;
	}
	return MP_OK;
}

/* An inference job in every defaults group. A job no GPU count can plan in any group is its own 422, as for
 * training; without devices it is planned once, without a device. */
static mp_status plan_inference(const mps_fit_plan *p, const mps_fit_job *j, const mps_model *m, fit_class *classes,
				fit_cell *cells, mp_error *err)
{
	size_t valid = 0;
	mp_status st = MP_OK;

	for (size_t g = 0; g < p->ngroups && st == MP_OK; g++)
		st = plan_inference_group(p, j, m, g, &classes[g], &cells[g * p->rq->ngpu_counts], &valid, err);
	if (st != MP_OK)
		return st;
	if (p->ngroups == 0) { /* no devices: check the job on its own, so its errors are still the request's */
		mp_inference_memory mem;
		mp_inference_req r = j->u.inference.req;

		r.json_pointer = j->u.inference.pointer;
		for (size_t g = 0; g < p->rq->ngpu_counts && valid == 0; g++) {
			r.num_gpus = p->rq->gpu_counts[g];
			st = mp_plan_inference_ex(&m->arch, &m->params, &r, &j->u.inference.opts, NULL, &mem, NULL, err);
			if (st != MP_OK && st != MP_EINVAL)
				return st;
			valid += st == MP_OK;
		}
	}
	return valid ? MP_OK : MP_EINVAL;
}

/* Plans job i into its cells and class (the first slot's when p->one_job, cleared first). */
static mp_status plan_job(mps_fit_plan *p, size_t i, mp_error *err)
{
	const mps_fit_request *rq = p->rq;
	const mps_fit_job *j = &rq->jobs[i];
	size_t ng = p->ngroups ? p->ngroups : 1, per_job = ng * rq->ngpu_counts, slot = p->one_job ? 0 : i;
	fit_cell *cells = &p->cells[slot * per_job];

	if (p->one_job) {
		memset(cells, 0, per_job * sizeof(*cells));
		memset(&p->classes[0], 0, ng * sizeof(*p->classes));
	}
	return j->training ? plan_training(p, j, &p->models[i], cells, err)
			   : plan_inference(p, j, &p->models[i], &p->classes[slot * ng], cells, err);
}

/* mps_fit_prepare's work; with one_job, the cells and classes of one job only, and no job planned yet. */
static mp_status prepare(mps_service *s, const mps_fit_request *rq, bool one_job, mps_fit_plan **out, mp_error *err)
{
	mps_fit_plan *p = calloc(1, sizeof(*p));
	size_t per_job;
	mp_status st;

	*out = NULL;
	if (p == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	p->s = s;
	p->rq = rq;
	{
		/* the models' problems and the devices' together: one answer names them all */
		mp_problems probs = MP_PROBLEMS_INIT;

		st = load_models(p, err);
		if (st == MP_OK || request_problem(st)) {
			mp_problems_note(&probs, st, err);
			st = load_devices(p, err);
			if (st == MP_OK || request_problem(st)) {
				mp_problems_note(&probs, st, err);
				st = mp_problems_end(&probs, err);
			}
		}
	}
	if (st == MP_OK && rq->njobs * p->ndevs > MPS_FIT_MAX_PAIRS)
		st = mp_fail(err, MP_ETOOLARGE, "/jobs", "%zu jobs x %zu devices is more than %d pairs per request",
			     rq->njobs, p->ndevs, MPS_FIT_MAX_PAIRS);
	if (st == MP_OK)
		st = group_devices(p, err);
	for (size_t d = 0; st == MP_OK && d < p->ndevs; d++)
		p->any_host = p->any_host || p->devs[d].hw.host_memory;
	per_job = (p->ngroups ? p->ngroups : 1) * rq->ngpu_counts;
	p->one_job = one_job;
	if (st == MP_OK && ((p->cells = calloc((one_job ? 1 : rq->njobs) * per_job + 1, sizeof(*p->cells))) == NULL ||
			    (p->classes = calloc((one_job ? 1 : rq->njobs) * (p->ngroups ? p->ngroups : 1) + 1,
						 sizeof(*p->classes))) == NULL))
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < rq->njobs && st == MP_OK && !one_job; i++)
		st = plan_job(p, i, err);
	if (st == MP_ENOMEM && err->message[0] == '\0')
		mp_fail(err, MP_ENOMEM, "", "out of memory");
	if (st != MP_OK) {
		mps_fit_plan_free(p);
		return st;
	}
	*out = p;
	return MP_OK;
}

mp_status mps_fit_prepare(mps_service *s, const mps_fit_request *rq, mps_fit_plan **out, mp_error *err)
{
	return prepare(s, rq, false, out, err);
}

size_t mps_fit_plan_devices(const mps_fit_plan *p)
{
	return p->ndevs;
}

size_t mps_fit_plan_jobs(const mps_fit_plan *p)
{
	return p->rq->njobs;
}

mp_status mps_fit_emit_begin(const mps_fit_plan *p, const mps_fit_sink *sink, void *ctx)
{
	return sink->begin(ctx, p->rq, p->ndevs);
}

mp_status mps_fit_emit(const mps_fit_plan *p, size_t job, const mps_fit_sink *sink, void *ctx)
{
	const mps_fit_request *rq = p->rq;
	const mps_fit_job *j = &rq->jobs[job];
	size_t ng = p->ngroups ? p->ngroups : 1, per_job = ng * rq->ngpu_counts;
	mps_fit_row rows[MPS_FIT_MAX_GPU_COUNTS];
	mp_inference_memory mem;
	mps_warnings warnings;
	mp_status st;

	/* what every verdict of the job rests on, said once for the job */
	memset(&warnings, 0, sizeof(warnings));
	if (j->training) {
		mp_training_req r = j->u.train.req;

		mps_warn_recompute(mps_training_defaults(&j->u.train, &r), NULL, NULL, false, &warnings);
	} else if (p->ndevs) {
		mps_warn_budget(&j->u.inference, NULL, 0, &warnings);
	}
	if (p->ndevs) {
		/* the devices whose capacity is the marketed figure (no usable_memory_bytes), as the plan and capacity
		 * endpoints say per device: here once, naming them */
		char ids[512];
		size_t used = 0, n = 0;

		ids[0] = '\0';
		for (size_t d = 0; d < p->ndevs; d++) {
			int k;

			if (p->devs[d].hw.usable_memory_bytes || p->devs[d].hw.host_memory)
				continue;
			n++;
			k = used < sizeof(ids) ? snprintf(ids + used, sizeof(ids) - used, "%s%s", used ? ", " : "",
							  p->devs[d].id[0] ? p->devs[d].id : p->devs[d].name)
					       : -1;
			if (k > 0 && (size_t)k < sizeof(ids) - used)
				used += (size_t)k;
			else if (used < sizeof(ids))
				snprintf(ids + (used > sizeof(ids) - 5 ? sizeof(ids) - 5 : used), 5, "...");
		}
		if (n)
			mps_warn(&warnings,
				 "capacity_bytes of %s is the marketed memory_bytes: the runtime reports less (CUDA's total "
				 "on the GPUs measured is 0.6 to 1.8%% below the label) and the profile%s no usable_memory_bytes",
				 ids, n > 1 ? "s give" : " gives");
	}
	st = sink->job_begin(ctx, j, &p->models[job], &warnings);

	memset(&mem, 0, sizeof(mem));
	for (size_t d = 0; d < p->ndevs && st == MP_OK; d++) {
		const mp_device *hw = &p->devs[d].hw;
		size_t grp = j->training ? 0 : p->group[d];
		const fit_cell *cells = &p->cells[(p->one_job ? 0 : job) * per_job + grp * rq->ngpu_counts];
		const fit_class *cls = &p->classes[(p->one_job ? 0 : job) * ng + grp];
		uint64_t smallest = 0;

		for (size_t g = 0; g < rq->ngpu_counts; g++) {
			const fit_cell *c = &cells[g];
			mps_fit_row *row = &rows[g];
			mp_fit fit;

			memset(row, 0, sizeof(*row));
			row->gpu_count = rq->gpu_counts[g];
			row->binding_term = "invalid_layout";
			if (!c->valid)
				continue;
			if (j->training) {
				mp_training_memory tm;

				memset(&tm, 0, sizeof(tm));
				tm.total_bytes = hw->host_memory ? c->host_total : c->total;
				tm.binding_term = c->binding_term;
				mp_training_verdict(&tm, hw, &fit); /* the plan endpoint's own rule */
			} else {
				mem.weights_bytes = c->weights;
				mem.kv_cache_bytes = c->kv;
				mem.activations_bytes = c->activations;
				mem.overhead_bytes = c->overhead;
				mem.total_bytes = c->total;
				mp_inference_on_device(&mem, &cls->req, hw, &mem); /* checked when prepared */
				mp_fit_verdict(&mem, &cls->opts, hw, &fit);
			}
			row->total_bytes = j->training ? tm_total(c, hw) : mem.total_bytes;
			row->fits = fit.fits;
			row->headroom_bytes = fit.headroom_bytes;
			row->binding_term = fit.binding_term ? fit.binding_term : "weights";
			if (row->fits && smallest == 0)
				smallest = row->gpu_count;
		}
		st = sink->device(ctx, &p->devs[d], rows, rq->ngpu_counts, smallest);
	}
	return st == MP_OK ? sink->job_end(ctx) : st;
}

void mps_fit_plan_free(mps_fit_plan *p)
{
	if (p == NULL)
		return;
	free(p->devs);
	free(p->group);
	free(p->rep);
	free(p->models);
	free(p->classes);
	free(p->cells);
	free(p);
}

/* Each job planned just before it is emitted, into one job's cells: the largest fit (4,000 jobs x 25 devices, each
 * its own defaults group, x 16 counts) keeps 22 KB of cells instead of 90 MB. A job that fails stops the fit with
 * its error after the jobs before it went to the sink, which the caller then drops (its answer is never sent). */
mp_status mps_fit(mps_service *s, const mps_fit_request *rq, const mps_fit_sink *sink, void *ctx, mp_error *err)
{
	mps_fit_plan *p = NULL;
	mp_status st = prepare(s, rq, true, &p, err);

	if (st == MP_OK)
		st = mps_fit_emit_begin(p, sink, ctx);
	for (size_t i = 0; i < rq->njobs && st == MP_OK; i++) {
		st = plan_job(p, i, err);
		if (st == MP_OK)
			st = mps_fit_emit(p, i, sink, ctx);
	}
	if (st == MP_ENOMEM && err->message[0] == '\0')
		mp_fail(err, MP_ENOMEM, "", "out of memory");
	mps_fit_plan_free(p);
	return st;
}
