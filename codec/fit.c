/*
 * fit.c: POST /v1/fit both ways. Decodes the jobs (each an inference or training body, as the plan endpoints take
 * them), the devices and the GPU counts; writes the answer as the service computes it: the head, then each job's
 * object printed and freed before the next one is built, so the answer is never held as one tree.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"

static const mpm_field fit_fields[] = {
	{ .name = "jobs", .type = MPM_F_ANY, .required = true },
	{ .name = "devices", .type = MPM_F_ANY },
	{ .name = "gpu_counts", .type = MPM_F_ANY },
	{ .name = "device_kinds", .type = MPM_F_ANY },
};

/* device_kinds: "all", or a list of "gpu", "cpu", "accelerator" (without devices: which stored ones to try;
 * default gpu). */
static mp_status decode_kinds(const cJSON *v, mps_fit_request *rq, mp_error *err)
{
	const cJSON *k;

	if (v == NULL)
		return MP_OK;
	if (cJSON_IsString(v))
		return mpc_kinds(v->valuestring, "/device_kinds", &rq->kinds, err);
	if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) < 1)
		return mp_fail(err, MP_EINVAL, "/device_kinds",
			       "device_kinds is \"all\" or a list of gpu, cpu, accelerator (default [\"gpu\"])");
	cJSON_ArrayForEach(k, v)
	{
		unsigned bit = cJSON_IsString(k) ? mp_store_kind_bit(k->valuestring) : 0;

		if (bit == 0 || (cJSON_IsString(k) && k->valuestring[0] == '\0'))
			return mp_fail(err, MP_EINVAL, "/device_kinds",
				       "device_kinds is \"all\" or a list of gpu, cpu, accelerator (default [\"gpu\"])");
		rq->kinds |= bit;
	}
	return MP_OK;
}

static mp_status decode_gpu_counts(const cJSON *list, mps_fit_request *rq, mp_error *err)
{
	const cJSON *v;
	int i = 0;

	if (list == NULL) {
		static const uint64_t dflt[] = { 1, 2, 4, 8 };

		memcpy(rq->gpu_counts, dflt, sizeof(dflt));
		rq->ngpu_counts = 4;
		return MP_OK;
	}
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > MPS_FIT_MAX_GPU_COUNTS)
		return mp_fail(err, MP_EINVAL, "/gpu_counts", "gpu_counts must be a list of 1 to %d counts",
			       MPS_FIT_MAX_GPU_COUNTS);
	cJSON_ArrayForEach(v, list)
	{
		uint64_t g = cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= (double)MP_MAX_GPUS &&
				     v->valuedouble == (double)(uint64_t)v->valuedouble
			     ? (uint64_t)v->valuedouble
			     : 0;

		if (g == 0 || (rq->ngpu_counts && g <= rq->gpu_counts[rq->ngpu_counts - 1]))
			return mp_fail(err, MP_EINVAL, "/gpu_counts",
				       "gpu_counts[%d] must be an integer between 1 and %llu, the list increasing", i,
				       (unsigned long long)MP_MAX_GPUS);
		rq->gpu_counts[rq->ngpu_counts++] = g;
		i++;
	}
	return MP_OK;
}

static mp_status decode_devices(const cJSON *list, mps_fit_request *rq, mp_error *err)
{
	mp_problems p = MP_PROBLEMS_INIT;
	const cJSON *v;
	int i = 0;

	if (list == NULL)
		return MP_OK; /* every stored device */
	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > MPS_FIT_MAX_DEVICES)
		return mp_fail(err, MP_EINVAL, "/devices",
			       "devices must be a list of 1 to %d devices (stored ids or inline profiles)",
			       MPS_FIT_MAX_DEVICES);
	rq->devices = calloc((size_t)cJSON_GetArraySize(list), sizeof(*rq->devices));
	if (rq->devices == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	cJSON_ArrayForEach(v, list)
	{
		char field[32];
		mp_status st;

		snprintf(field, sizeof(field), "/devices/%d", i++);
		st = mp_problems_note(&p, mpc_device_ref_decode(v, field, &rq->devices[rq->ndevices], err), err);
		if (st == MP_ENOMEM)
			return mp_problems_end(&p, err);
		if (st == MP_OK)
			mp_problems_note(&p, mpc_device_ref_require_memory(&rq->devices[rq->ndevices], err), err);
		rq->ndevices++;
	}
	return mp_problems_end(&p, err);
}

static mp_status decode_job(const cJSON *job, int i, mps_fit_request *rq, mp_error *err)
{
	mps_fit_job *j = &rq->jobs[rq->njobs];
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(job, "id"), *inf, *trn, *v;
	char ptr[64];
	mp_status st;

	snprintf(ptr, sizeof(ptr), "/jobs/%d", i);
	if (!cJSON_IsObject(job))
		return mp_fail(err, MP_EINVAL, ptr,
			       "a job is an object: {\"id\": ..., \"inference\": {...}} or {\"id\": ..., \"training\": "
			       "{...}}");
	cJSON_ArrayForEach(v, job)
	if (strcmp(v->string, "id") && strcmp(v->string, "inference") && strcmp(v->string, "training"))
		return mp_fail(err, MP_EINVAL, ptr, "unknown member '%.40s'; a job has id and one of inference, training",
			       v->string);
	inf = cJSON_GetObjectItemCaseSensitive(job, "inference");
	trn = cJSON_GetObjectItemCaseSensitive(job, "training");
	if ((inf == NULL) == (trn == NULL))
		return mp_fail(err, MP_EINVAL, ptr, "a job has exactly one of inference or training");
	if (id && !(cJSON_IsString(id) && strlen(id->valuestring) > 0 && strlen(id->valuestring) < sizeof(j->id)))
		return mp_fail(err, MP_EINVAL, ptr, "id must be a string of 1 to %zu bytes", sizeof(j->id) - 1);
	if (id)
		snprintf(j->id, sizeof(j->id), "%s", id->valuestring);
	else
		snprintf(j->id, sizeof(j->id), "%d", i); /* documented: a job without an id is named by its index */
	for (size_t k = 0; k < rq->njobs; k++)
		if (strcmp(rq->jobs[k].id, j->id) == 0) {
			snprintf(ptr, sizeof(ptr), "/jobs/%d/id", i);
			return mp_fail(err, MP_EINVAL, ptr,
				       "job id '%.40s' is used twice: each job needs its own id so its rows can be told "
				       "apart",
				       j->id);
		}
	if (inf) {
		mps_inference_request rq1;

		snprintf(ptr, sizeof(ptr), "/jobs/%d/inference", i);
		st = mpc_inference_decode(inf, ptr, false, &rq1, err);
		j->u.inference = rq1.job;
	} else {
		mps_training_request rq1;

		j->training = true;
		snprintf(ptr, sizeof(ptr), "/jobs/%d/training", i);
		st = mpc_training_decode(trn, ptr, false, &rq1, err);
		j->u.train = rq1.job;
	}
	if (st == MP_OK)
		rq->njobs++;
	return st;
}

mp_status mpc_fit_decode(const cJSON *body, mps_fit_request *rq, mp_error *err)
{
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(body, "jobs"), *job;
	int unused = 0, i = 0, n;
	mp_problems p = MP_PROBLEMS_INIT;
	mp_status st;

	memset(rq, 0, sizeof(*rq));
	if (mp_problems_note(&p, mpm_decode_fields(body, "", fit_fields, MPM_COUNT(fit_fields), &unused, err), err) ==
		    MP_ENOMEM ||
	    !cJSON_IsObject(body))
		return mp_problems_end(&p, err);
	mp_problems_note(&p, decode_gpu_counts(cJSON_GetObjectItemCaseSensitive(body, "gpu_counts"), rq, err), err);
	n = cJSON_GetArraySize(list);
	if (!cJSON_IsArray(list) || n < 1) {
		mp_problems_note(&p,
				 mp_fail(err, MP_EINVAL, "/jobs",
					 "jobs must be a list of {\"id\": ..., \"inference\": {...}} or {\"id\": ..., "
					 "\"training\": {...}}"),
				 err);
		return mp_problems_end(&p, err);
	}
	if (n > MPS_FIT_MAX_JOBS)
		return mp_fail(err, MP_ETOOLARGE, "/jobs", "at most %d jobs per request", MPS_FIT_MAX_JOBS);
	rq->jobs = calloc((size_t)n, sizeof(*rq->jobs));
	if (rq->jobs == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	/* every job's problems at once, then the devices' */
	cJSON_ArrayForEach(job, list)
	{
		st = mp_problems_note(&p, decode_job(job, i++, rq, err), err);
		if (st == MP_ENOMEM || st == MP_ETOOLARGE)
			return mp_problems_end(&p, err);
	}
	st = mp_problems_note(&p, decode_devices(cJSON_GetObjectItemCaseSensitive(body, "devices"), rq, err), err);
	if (st == MP_ENOMEM)
		return mp_problems_end(&p, err);
	mp_problems_note(&p, decode_kinds(cJSON_GetObjectItemCaseSensitive(body, "device_kinds"), rq, err), err);
	return mp_problems_end(&p, err);
}

void mpc_fit_request_free(mps_fit_request *rq)
{
	free(rq->jobs);
	free(rq->devices);
	memset(rq, 0, sizeof(*rq));
}

/* ----- the answer, written as it comes ------------------------------------------------------------------ */

struct mpc_fit_writer {
	char *buf;
	size_t len, cap;
	bool failed;		/* out of memory: the text is incomplete */
	size_t njobs;		/* jobs written so far */
	cJSON *job;		/* the job being built */
	cJSON *devices;		/* its "devices" array */
};

static void put(mpc_fit_writer *w, const char *s, size_t n)
{
	if (w->failed)
		return;
	if (w->len + n + 1 > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		char *p;

		while (cap < w->len + n + 1)
			cap *= 2;
		p = realloc(w->buf, cap);
		if (p == NULL) {
			w->failed = true;
			return;
		}
		w->buf = p;
		w->cap = cap;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
	w->buf[w->len] = '\0';
}

static void puts_(mpc_fit_writer *w, const char *s)
{
	put(w, s, strlen(s));
}

/* Appends the printed item (consumed). */
static void put_item(mpc_fit_writer *w, cJSON *item)
{
	char *text = item ? mpc_print(item, false) : NULL;

	if (text == NULL)
		w->failed = true;
	else
		puts_(w, text);
	cJSON_free(text);
	cJSON_Delete(item);
}

mpc_fit_writer *mpc_fit_writer_new(const mps_fit_request *rq)
{
	(void)rq;
	return calloc(1, sizeof(mpc_fit_writer));
}

void mpc_fit_writer_free(mpc_fit_writer *w)
{
	if (w == NULL)
		return;
	cJSON_Delete(w->job);
	free(w->buf);
	free(w);
}

static mp_status w_begin(void *ctx, const mps_fit_request *rq, size_t ndevices)
{
	static const char *const columns[] = { "gpu_count", "fits", "total_bytes", "headroom_bytes", "binding_term" };
	mpc_fit_writer *w = ctx;
	cJSON *a = cJSON_CreateArray();
	char num[32];

	for (size_t i = 0; a && i < sizeof(columns) / sizeof(columns[0]); i++)
		mpc_append(a, cJSON_CreateString(columns[i]));
	puts_(w, "{\"columns\":");
	put_item(w, a);
	puts_(w, ",\"gpu_counts\":");
	a = cJSON_CreateArray();
	for (size_t g = 0; a && g < rq->ngpu_counts; g++)
		mpc_append(a, mpc_number((double)rq->gpu_counts[g]));
	put_item(w, a);
	snprintf(num, sizeof(num), ",\"pairs\":%zu,\"jobs\":[", rq->njobs * ndevices);
	puts_(w, num);
	return w->failed ? MP_ENOMEM : MP_OK;
}

static mp_status w_job_begin(void *ctx, const mps_fit_job *job, const mps_model *model)
{
	mpc_fit_writer *w = ctx;
	cJSON *o = cJSON_CreateObject();

	w->job = o;
	if (o == NULL)
		return MP_ENOMEM;
	cJSON_AddStringToObject(o, "id", job->id);
	mpc_add_str_or_null(o, "model", model->id);
	mpc_add_u64(o, "parameters", model->params.total);
	cJSON_AddStringToObject(o, "kind", job->training ? "training" : "inference");
	w->devices = cJSON_AddArrayToObject(o, "devices");
	return w->devices ? MP_OK : MP_ENOMEM;
}

/* An exact unsigned integer as a JSON number node. */
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

static mp_status w_device(void *ctx, const mp_store_device *dev, const mps_fit_row *rows, size_t nrows,
			  uint64_t smallest)
{
	mpc_fit_writer *w = ctx;
	cJSON *o = cJSON_CreateObject(), *results;

	if (o == NULL || !cJSON_AddItemToArray(w->devices, o))
		return MP_ENOMEM;
	cJSON_AddStringToObject(o, "device", dev->id);
	if (dev->id[0] == '\0') /* an inline profile has no id: its name tells the rows apart */
		cJSON_AddStringToObject(o, "name", dev->name);
	results = cJSON_AddArrayToObject(o, "results");
	for (size_t i = 0; results && i < nrows; i++) {
		const mps_fit_row *r = &rows[i];
		cJSON *row = cJSON_CreateArray();

		if (row == NULL || !cJSON_AddItemToArray(results, row))
			return MP_ENOMEM;
		if (!cJSON_AddItemToArray(row, u64_node(r->gpu_count)) ||
		    !cJSON_AddItemToArray(row, cJSON_CreateBool(r->fits)) ||
		    !cJSON_AddItemToArray(row, u64_node(r->total_bytes)) ||
		    !cJSON_AddItemToArray(row, i64_node(r->headroom_bytes)) ||
		    !cJSON_AddItemToArray(row, cJSON_CreateString(r->binding_term)))
			return MP_ENOMEM;
	}
	if (results == NULL)
		return MP_ENOMEM;
	mpc_add_u64_or_null(o, "smallest_gpu_count", smallest);
	return MP_OK;
}

static mp_status w_job_end(void *ctx)
{
	mpc_fit_writer *w = ctx;

	if (w->njobs++)
		puts_(w, ",");
	put_item(w, w->job);
	w->job = NULL;
	w->devices = NULL;
	return w->failed ? MP_ENOMEM : MP_OK;
}

const mps_fit_sink *mpc_fit_sink(void)
{
	static const mps_fit_sink sink = { w_begin, w_job_begin, w_device, w_job_end };

	return &sink;
}

char *mpc_fit_writer_finish(mpc_fit_writer *w)
{
	cJSON *note = cJSON_CreateString("total_bytes and headroom_bytes are per GPU (peak of the step, CUDA context "
					 "included); a GPU count the job's parallel layout cannot use is a row with "
					 "binding_term invalid_layout; an inference job without max_num_batched_tokens "
					 "prefills in the chunks its engine (vLLM when none is named) takes by default on "
					 "each device (vLLM: 8192 tokens on GPUs of 70 GiB or more that are not A100s, else 2048)");
	char *text;

	puts_(w, "],\"note\":");
	put_item(w, note);
	puts_(w, "}");
	text = w->failed ? NULL : w->buf;
	if (text)
		w->buf = NULL;
	mpc_fit_writer_free(w);
	return text;
}
