/*
 * h_fit.c: POST /v1/fit, for schedulers: many jobs (inference or training bodies, as the plan endpoints take
 * them) against many stored devices and GPU counts in one request. Each job's model is resolved once per
 * request (stored ids are cached), then devices and GPU counts are looped in C around mp_plan_inference /
 * mp_plan_training; the answer is compact: per job and device one row per GPU count plus the smallest count
 * that fits. This file decodes and encodes only; the planner does the arithmetic.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "plan.h"
#include "fleet.h"
#include "routes.h"

#define FIT_MAX_JOBS 10000
#define FIT_MAX_DEVICES 1000
#define FIT_MAX_GPU_COUNTS 16
#define FIT_MAX_PAIRS 100000

/*
 * Job bodies. These tables mirror the request fields of plan_inference.c and plan_training.c (minus
 * "device": devices are given once for the whole batch); num_gpus comes from gpu_counts.
 * TODO(issue 3/4): once the plan endpoints export their decoders, call them here instead of mirroring.
 */
#define WEIGHT_DTYPES                                                                                         \
	(MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3) |   \
	 MPD_DT(MP_DTYPE_FP8_E5M2) | MPD_DT(MP_DTYPE_INT8))
#define KV_DTYPES                                                                                             \
	(MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3) |   \
	 MPD_DT(MP_DTYPE_FP8_E5M2) | MPD_DT(MP_DTYPE_Q8_0) | MPD_DT(MP_DTYPE_Q4_0))

typedef struct fit_job {
	char id[MP_STORE_ID_MAX];
	bool training;
	const mpd_model *model;		/* into the request's model cache */
	mpd_inference_job inf;
	mpd_training_job trn;
} fit_job;

typedef struct fit_ctx {
	mp_store *store;
	mp_store_device *devs;
	size_t ndevs, cap;
	mpd_model *models;		/* resolved models: stored ones shared by every job that names them */
	size_t nmodels;
	uint64_t gpus[FIT_MAX_GPU_COUNTS];
	size_t ngpus;
	fit_job *jobs;
	size_t njobs;
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

static mp_status load_devices(fit_ctx *c, const cJSON *list, mp_error *err)
{
	const cJSON *v;
	int i = 0;

	if (list == NULL) {
		int more = 1;
		mp_status st = MP_OK;

		while (st == MP_OK && more) {
			char after[MP_STORE_ID_MAX] = "";

			if (c->ndevs)
				snprintf(after, sizeof(after), "%s", c->devs[c->ndevs - 1].id);
			st = mp_store_device_list(c->store, after, FIT_MAX_DEVICES, collect_device, c, &more, err);
			if (st == MP_OK && more && c->ndevs >= FIT_MAX_DEVICES)
				return mp_fail(err, MP_ETOOLARGE, "/devices",
					       "more than %d devices are stored: list the ones to fit in devices",
					       FIT_MAX_DEVICES);
		}
		return st == MP_ENOMEM ? mp_fail(err, st, "", "out of memory") : st;
	}
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > FIT_MAX_DEVICES)
		return mp_fail(err, MP_EINVAL, "/devices", "devices must be a list of 1 to %d stored device ids",
			       FIT_MAX_DEVICES);
	c->devs = malloc((size_t)cJSON_GetArraySize(list) * sizeof(*c->devs));
	if (c->devs == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	cJSON_ArrayForEach(v, list)
	{
		char field[32];
		mp_status st;

		snprintf(field, sizeof(field), "/devices/%d", i++);
		if (!cJSON_IsString(v))
			return mp_fail(err, MP_EINVAL, field, "a device is given by its stored id (a string)");
		st = mp_store_device_get(c->store, v->valuestring, &c->devs[c->ndevs], err);
		if (st != MP_OK) {
			snprintf(err->field, sizeof(err->field), "%.95s", field);
			return st;
		}
		c->ndevs++;
	}
	return MP_OK;
}

static mp_status load_gpu_counts(fit_ctx *c, const cJSON *list, mp_error *err)
{
	const cJSON *v;
	int i = 0;

	if (list == NULL) {
		static const uint64_t dflt[] = { 1, 2, 4, 8 };

		memcpy(c->gpus, dflt, sizeof(dflt));
		c->ngpus = 4;
		return MP_OK;
	}
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > FIT_MAX_GPU_COUNTS)
		return mp_fail(err, MP_EINVAL, "/gpu_counts", "gpu_counts must be a list of 1 to %d counts",
			       FIT_MAX_GPU_COUNTS);
	cJSON_ArrayForEach(v, list)
	{
		uint64_t g = cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= (double)MP_MAX_GPUS &&
				     v->valuedouble == (double)(uint64_t)v->valuedouble
			     ? (uint64_t)v->valuedouble
			     : 0;

		if (g == 0 || (c->ngpus && g <= c->gpus[c->ngpus - 1]))
			return mp_fail(err, MP_EINVAL, "/gpu_counts", "gpu_counts[%d] must be an integer between 1 and "
				       "%llu, the list increasing", i, (unsigned long long)MP_MAX_GPUS);
		c->gpus[c->ngpus++] = g;
		i++;
	}
	return MP_OK;
}

/* Resolves a job's model once: a stored id already resolved in this request is shared. */
static mp_status job_model(fit_ctx *c, const cJSON *body, const char *pointer, const mpd_model **out, mp_error *err)
{
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(body, "model");
	mp_status st;

	if (cJSON_IsString(model))
		for (size_t i = 0; i < c->nmodels; i++)
			if (strcmp(c->models[i].id, model->valuestring) == 0) {
				*out = &c->models[i];
				return MP_OK;
			}
	st = mpd_training_model(body, c->store, &c->models[c->nmodels], err);
	if (st != MP_OK) {
		mpd_error_prefix(err, pointer);
		return st;
	}
	*out = &c->models[c->nmodels++];
	return MP_OK;
}

static mp_status load_jobs(fit_ctx *c, const cJSON *list, mp_error *err)
{
	const cJSON *job;
	int n = cJSON_GetArraySize(list), i = 0;

	if (!cJSON_IsArray(list) || n < 1)
		return mp_fail(err, MP_EINVAL, "/jobs",
			       "jobs must be a list of {\"id\": ..., \"inference\": {...}} or {\"id\": ..., \"training\": "
			       "{...}}");
	if (n > FIT_MAX_JOBS)
		return mp_fail(err, MP_ETOOLARGE, "/jobs", "at most %d jobs per request", FIT_MAX_JOBS);
	c->jobs = calloc((size_t)n, sizeof(*c->jobs));
	c->models = calloc((size_t)n, sizeof(*c->models));
	if (c->jobs == NULL || c->models == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	cJSON_ArrayForEach(job, list)
	{
		fit_job *j = &c->jobs[c->njobs];
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(job, "id"), *inf, *trn, *v;
		char ptr[64];
		mp_status st;

		snprintf(ptr, sizeof(ptr), "/jobs/%d", i);
		if (!cJSON_IsObject(job))
			return mp_fail(err, MP_EINVAL, ptr,
				       "a job is an object: {\"id\": ..., \"inference\": {...}} or {\"id\": ..., "
				       "\"training\": {...}}");
		cJSON_ArrayForEach(v, job)
		if (strcmp(v->string, "id") && strcmp(v->string, "inference") && strcmp(v->string, "training"))
			return mp_fail(err, MP_EINVAL, ptr, "unknown member '%.40s'; a job has id and one of inference, "
				       "training", v->string);
		inf = cJSON_GetObjectItemCaseSensitive(job, "inference");
		trn = cJSON_GetObjectItemCaseSensitive(job, "training");
		if ((inf == NULL) == (trn == NULL))
			return mp_fail(err, MP_EINVAL, ptr, "a job has exactly one of inference or training");
		if (cJSON_GetObjectItemCaseSensitive(inf ? inf : trn, "device")) {
			snprintf(ptr, sizeof(ptr), "/jobs/%d/%s/device", i, inf ? "inference" : "training");
			return mp_fail(err, MP_EINVAL, ptr,
				       "a job names no device: the devices are given once for the whole batch in the "
				       "top-level \"devices\" list");
		}
		if (id && !(cJSON_IsString(id) && strlen(id->valuestring) > 0 && strlen(id->valuestring) < sizeof(j->id)))
			return mp_fail(err, MP_EINVAL, ptr, "id must be a string of 1 to %zu bytes", sizeof(j->id) - 1);
		snprintf(j->id, sizeof(j->id), "%s", id ? id->valuestring : "");
		if (id == NULL)
			snprintf(j->id, sizeof(j->id), "%d", i); /* documented: a job without an id is named by its index */
		for (size_t k = 0; k < c->njobs; k++)
			if (strcmp(c->jobs[k].id, j->id) == 0) {
				snprintf(ptr, sizeof(ptr), "/jobs/%d/id", i);
				return mp_fail(err, MP_EINVAL, ptr,
					       "job id '%.40s' is used twice: each job needs its own id so its rows can "
					       "be told apart", j->id);
			}
		if (inf) {
			snprintf(ptr, sizeof(ptr), "/jobs/%d/inference", i);
			st = mpd_inference_decode(inf, ptr, &j->inf, err);
			if (st == MP_OK)
				st = job_model(c, inf, ptr, &j->model, err);
			if (st == MP_OK && !j->model->architecture_known)
				st = mp_fail(err, MP_EINVAL, ptr,
					     "inference needs the architecture for the KV cache: give the model as a stored "
					     "id, {\"hf_config\": {...}} or {\"architecture\": {...}}");
		} else {
			j->training = true;
			snprintf(ptr, sizeof(ptr), "/jobs/%d/training", i);
			st = mpd_training_decode(trn, ptr, &j->trn, err);
			if (st == MP_OK)
				st = job_model(c, trn, ptr, &j->model, err);
		}
		if (st != MP_OK)
			return st;
		c->njobs++;
		i++;
	}
	return MP_OK;
}

/* An exact unsigned integer as a JSON number node (cJSON stores numbers as doubles, exact only to 2^53). */
static cJSON *u64_node(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return cJSON_CreateRaw(buf);
}

static cJSON *i64_node(int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	return cJSON_CreateRaw(buf);
}

/* One result row: [gpu_count, fits, total_bytes, headroom_bytes, binding_term]. A GPU count the job's layout
 * cannot use (tensor parallelism that does not divide the heads, ...) is a row that does not fit, with
 * total 0 and binding_term "invalid_layout". */
static bool add_row(cJSON *rows, uint64_t gpus, bool fits, uint64_t total, int64_t headroom, const char *binding)
{
	cJSON *r = cJSON_CreateArray();

	if (r == NULL || !cJSON_AddItemToArray(rows, r))
		return false;
	return cJSON_AddItemToArray(r, u64_node(gpus)) && cJSON_AddItemToArray(r, cJSON_CreateBool(fits)) &&
	       cJSON_AddItemToArray(r, u64_node(total)) && cJSON_AddItemToArray(r, i64_node(headroom)) &&
	       cJSON_AddItemToArray(r, cJSON_CreateString(binding));
}

/* One job against every device and GPU count. */
static mp_status fit_job_json(const fit_ctx *c, const fit_job *j, cJSON *out, mp_error *err)
{
	cJSON *devs;
	mp_training_memory tm[FIT_MAX_GPU_COUNTS];
	bool tvalid[FIT_MAX_GPU_COUNTS];
	size_t valid = 0;

	cJSON_AddStringToObject(out, "id", j->id);
	if (j->model->id[0])
		cJSON_AddStringToObject(out, "model", j->model->id);
	else
		cJSON_AddNullToObject(out, "model");
	cJSON_AddNumberToObject(out, "parameters", (double)j->model->params.total);
	cJSON_AddStringToObject(out, "kind", j->training ? "training" : "inference");
	devs = cJSON_AddArrayToObject(out, "devices");
	/* training memory does not depend on the device: once per GPU count. A layout no GPU count can use is
	 * the job's own error (a 422), not a row of invalid layouts. */
	for (size_t g = 0; j->training && g < c->ngpus; g++) {
		mp_training_req r = j->trn.req;
		mp_error e;
		mp_status st;

		r.num_gpus = c->gpus[g];
		st = mp_plan_training(j->model->architecture_known ? &j->model->arch : NULL, &j->model->params, &r,
				      &tm[g], g == 0 ? err : &e);
		if (st != MP_OK && st != MP_EINVAL)
			return st;
		tvalid[g] = st == MP_OK;
		valid += tvalid[g];
	}
	if (j->training && valid == 0)
		return MP_EINVAL; /* err holds the first GPU count's reason */
	for (size_t d = 0; d < c->ndevs; d++) {
		const mp_store_device *dev = &c->devs[d];
		uint64_t cap = mp_device_capacity_bytes(&dev->hw), smallest = 0;
		cJSON *o = cJSON_CreateObject(), *rows;

		if (o == NULL || !cJSON_AddItemToArray(devs, o))
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		cJSON_AddStringToObject(o, "device", dev->id);
		rows = cJSON_AddArrayToObject(o, "results");
		for (size_t g = 0; g < c->ngpus; g++) {
			bool fits = false, ok;
			uint64_t total = 0;
			int64_t headroom = 0;
			const char *binding = "invalid_layout";

			if (j->training) {
				if (tvalid[g]) {
					total = tm[g].total_bytes;
					fits = total <= cap;
					headroom = (int64_t)cap - (int64_t)total;
					binding = tm[g].binding_term ? tm[g].binding_term : "weights";
				}
			} else {
				mp_inference_req r = j->inf.req;
				mp_inference_memory mem;
				mp_fit fit;
				mp_status st;

				r.num_gpus = c->gpus[g];
				st = mp_plan_inference_ex(&j->model->arch, &j->model->params, &r, &j->inf.opts, &dev->hw,
							  &mem, NULL, err);
				if (st != MP_OK && st != MP_EINVAL)
					return st;
				if (st == MP_OK) {
					mp_fit_verdict(&mem, &j->inf.opts, &dev->hw, &fit);
					total = mem.total_bytes;
					fits = fit.fits;
					headroom = fit.headroom_bytes;
					binding = fit.binding_term ? fit.binding_term : "weights";
				}
			}
			if (fits && smallest == 0)
				smallest = c->gpus[g];
			ok = rows && add_row(rows, c->gpus[g], fits, total, headroom, binding);
			if (!ok)
				return mp_fail(err, MP_ENOMEM, "", "out of memory");
		}
		if (smallest)
			cJSON_AddNumberToObject(o, "smallest_gpu_count", (double)smallest);
		else
			cJSON_AddNullToObject(o, "smallest_gpu_count");
	}
	return MP_OK;
}

static const mpd_field fit_fields[] = {
	{ .name = "jobs", .type = MPD_F_ANY, .required = true },
	{ .name = "devices", .type = MPD_F_ANY },
	{ .name = "gpu_counts", .type = MPD_F_ANY },
};

mp_status mpd_fit(mp_store *store, const cJSON *body, cJSON **out, mp_error *err)
{
	fit_ctx c;
	cJSON *doc = NULL, *cols, *jobs, *gc;
	int unused = 0;
	mp_status st;

	*out = NULL;
	memset(&c, 0, sizeof(c));
	c.store = store;
	st = mpd_decode_fields(body, "", fit_fields, sizeof(fit_fields) / sizeof(fit_fields[0]), &unused, err);
	if (st == MP_OK)
		st = load_gpu_counts(&c, cJSON_GetObjectItemCaseSensitive(body, "gpu_counts"), err);
	if (st == MP_OK)
		st = load_jobs(&c, cJSON_GetObjectItemCaseSensitive(body, "jobs"), err);
	if (st == MP_OK)
		st = load_devices(&c, cJSON_GetObjectItemCaseSensitive(body, "devices"), err);
	if (st == MP_OK && c.njobs * c.ndevs > FIT_MAX_PAIRS)
		st = mp_fail(err, MP_ETOOLARGE, "/jobs", "%zu jobs x %zu devices is more than %d pairs per request",
			     c.njobs, c.ndevs, FIT_MAX_PAIRS);
	if (st == MP_OK && (doc = cJSON_CreateObject()) == NULL)
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK) {
		cols = cJSON_AddArrayToObject(doc, "columns");
		cJSON_AddItemToArray(cols, cJSON_CreateString("gpu_count"));
		cJSON_AddItemToArray(cols, cJSON_CreateString("fits"));
		cJSON_AddItemToArray(cols, cJSON_CreateString("total_bytes"));
		cJSON_AddItemToArray(cols, cJSON_CreateString("headroom_bytes"));
		cJSON_AddItemToArray(cols, cJSON_CreateString("binding_term"));
		gc = cJSON_AddArrayToObject(doc, "gpu_counts");
		for (size_t g = 0; g < c.ngpus; g++)
			cJSON_AddItemToArray(gc, cJSON_CreateNumber((double)c.gpus[g]));
		cJSON_AddNumberToObject(doc, "pairs", (double)(c.njobs * c.ndevs));
		jobs = cJSON_AddArrayToObject(doc, "jobs");
		for (size_t i = 0; i < c.njobs && st == MP_OK; i++) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddItemToArray(jobs, o);
			st = fit_job_json(&c, &c.jobs[i], o, err);
			if (st != MP_OK && strncmp(err->field, "/jobs/", 6) != 0) {
				char field[2 * sizeof(err->field)];

				snprintf(field, sizeof(field), "/jobs/%zu/%s%s", i,
					 c.jobs[i].training ? "training" : "inference", err->field);
				snprintf(err->field, sizeof(err->field), "%.95s", field);
			}
		}
		cJSON_AddStringToObject(doc, "note",
					"total_bytes and headroom_bytes are per GPU (peak of the step, CUDA context "
					"included); a GPU count the job's parallel layout cannot use is a row with "
					"binding_term invalid_layout");
	}
	if (st == MP_OK && doc)
		*out = doc;
	else
		cJSON_Delete(doc);
	free(c.devs);
	free(c.models);
	free(c.jobs);
	return st;
}

mp_status mpd_h_fit(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = NULL;
	mp_status st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);

	if (st == MP_OK)
		st = mpd_fit(req->d->store, body, &rep->json, &rep->err);
	cJSON_Delete(body);
	return st;
}
