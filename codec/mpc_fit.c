/*
 * mpc_fit.c: POST /v1/fit both ways. Decodes the jobs (each an inference or training body, as the plan endpoints take
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
		char field[32];

		snprintf(field, sizeof(field), "/gpu_counts/%d", i); /* the item, not the list */
		if (g == 0 || (rq->ngpu_counts && g <= rq->gpu_counts[rq->ngpu_counts - 1]))
			return mp_fail(err, MP_EINVAL, field,
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
	else /* a job not kept owns no model */
		mpc_model_ref_release(j->training ? &j->u.train.model : &j->u.inference.model);
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
	for (size_t i = 0; rq->jobs && i < rq->njobs; i++)
		mpc_model_ref_release(rq->jobs[i].training ? &rq->jobs[i].u.train.model : &rq->jobs[i].u.inference.model);
	free(rq->jobs);
	free(rq->devices);
	memset(rq, 0, sizeof(*rq));
}

/* ----- the answer, written as it comes ------------------------------------------------------------------ */

struct mpc_fit_writer {
	mpc_out out;
	size_t njobs;		/* jobs written so far */
};

mpc_fit_writer *mpc_fit_writer_new(const mps_fit_request *rq)
{
	mpc_fit_writer *w = calloc(1, sizeof(*w));

	(void)rq;
	if (w)
		mpc_out_init(&w->out);
	return w;
}

void mpc_fit_writer_free(mpc_fit_writer *w)
{
	if (w == NULL)
		return;
	mpc_out_free(&w->out);
	free(w);
}

static mp_status w_begin(void *ctx, const mps_fit_request *rq, size_t ndevices)
{
	static const char *const columns[] = { "gpu_count", "fits", "total_bytes", "headroom_bytes", "binding_term" };
	mpc_fit_writer *w = ctx;

	mpc_w_obj(&w->out, NULL);
	mpc_w_arr(&w->out, "columns");
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
		mpc_w_str(&w->out, NULL, columns[i]);
	mpc_w_end(&w->out);
	mpc_w_arr(&w->out, "gpu_counts");
	for (size_t g = 0; g < rq->ngpu_counts; g++)
		mpc_w_u64(&w->out, NULL, rq->gpu_counts[g]);
	mpc_w_end(&w->out);
	mpc_w_u64(&w->out, "pairs", rq->njobs * ndevices);
	mpc_w_arr(&w->out, "jobs");
	return w->out.failed ? MP_ENOMEM : MP_OK;
}

static mp_status w_job_begin(void *ctx, const mps_fit_job *job, const mps_model *model, const mps_warnings *warnings)
{
	mpc_fit_writer *w = ctx;

	mpc_w_obj(&w->out, NULL);
	mpc_w_str(&w->out, "id", job->id);
	mpc_w_str_or_null(&w->out, "model", model->id);
	mpc_w_u64(&w->out, "parameters", model->params.total);
	mpc_w_str(&w->out, "kind", job->training ? "training" : "inference");
	mpc_warnings_write(&w->out, warnings);
	mpc_w_arr(&w->out, "devices");
	return w->out.failed ? MP_ENOMEM : MP_OK;
}

static mp_status w_device(void *ctx, const mps_fit_device *dev, const mps_fit_row *rows, size_t nrows,
			  uint64_t smallest)
{
	mpc_fit_writer *w = ctx;

	mpc_w_obj(&w->out, NULL);
	mpc_w_str(&w->out, "device", dev->id);
	if (dev->id[0] == '\0') /* an inline profile has no id: its name tells the rows apart */
		mpc_w_str(&w->out, "name", dev->name);
	mpc_w_arr(&w->out, "results");
	for (size_t i = 0; i < nrows; i++) {
		const mps_fit_row *r = &rows[i];

		mpc_w_arr(&w->out, NULL);
		mpc_w_u64(&w->out, NULL, r->gpu_count);
		mpc_w_bool(&w->out, NULL, r->fits);
		mpc_w_u64(&w->out, NULL, r->total_bytes);
		mpc_w_i64(&w->out, NULL, r->headroom_bytes);
		mpc_w_str(&w->out, NULL, r->binding_term);
		mpc_w_end(&w->out);
	}
	mpc_w_end(&w->out);
	mpc_w_u64_or_null(&w->out, "smallest_gpu_count", smallest);
	mpc_w_end(&w->out);
	return w->out.failed ? MP_ENOMEM : MP_OK;
}

static mp_status w_job_end(void *ctx)
{
	mpc_fit_writer *w = ctx;

	mpc_w_end(&w->out); /* devices */
	mpc_w_end(&w->out); /* the job */
	w->njobs++;
	return w->out.failed ? MP_ENOMEM : MP_OK;
}

const mps_fit_sink *mpc_fit_sink(void)
{
	static const mps_fit_sink sink = { w_begin, w_job_begin, w_device, w_job_end };

	return &sink;
}

char *mpc_fit_writer_take(mpc_fit_writer *w, size_t *len)
{
	return mpc_out_take(&w->out, len);
}

bool mpc_fit_writer_failed(const mpc_fit_writer *w)
{
	return w->out.failed;
}

void mpc_fit_writer_end(mpc_fit_writer *w)
{
	mpc_w_end(&w->out); /* jobs */
	mpc_w_str(&w->out, "note",
		  "total_bytes and headroom_bytes are per GPU (peak of the step, CUDA context included); a GPU count the "
		  "job's parallel layout cannot use is a row with binding_term invalid_layout; an inference job without "
		  "max_num_batched_tokens prefills in the chunks its engine (vLLM when none is named) takes by default on "
		  "each device (vLLM: 8192 tokens on GPUs of 70 GiB or more that are not A100s, else 2048)");
	mpc_w_end(&w->out);
}

char *mpc_fit_writer_finish(mpc_fit_writer *w)
{
	char *text;

	mpc_fit_writer_end(w);
	text = mpc_out_finish(&w->out, NULL);
	free(w);
	return text;
}
