/*
 * calib_jobs.c: the calibration job manager. Each job runs on its own worker thread; one job per target
 * ("gpu:0", "cpu") at a time (a second gets MP_EBUSY: 409). Progress and cancellation pass through the
 * kernels' mp_calib_ctl callback under one mutex. Every state change is written to the store's
 * calibration_runs (one row per job: the history), and a successful run stores its measured device profile.
 * Holds no globals: the manager hangs off struct mpd_daemon (or the CLI's stack). Never touches HTTP.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "calib_jobs.h"
#include "decode.h"
#include "metrics.h"
#include "plan.h"

#define KEEP_IN_MEMORY 32 /* finished jobs kept in memory; older ones are read back from the store */

typedef struct job {
	char id[MPD_CALIB_ID_MAX];
	mpd_calib_request rq;
	char state[16]; /* queued, running, succeeded, failed, cancelled */
	double percent;
	char suite[24];
	bool cancel;
	bool finished; /* the worker is done with the job (its thread can be joined) */
	bool thread_started, joined;
	pthread_t tid;
	char created_at[32], started_at[32], finished_at[32];
	double t0, elapsed;
	char datasheet_id[MP_STORE_ID_MAX];
	cJSON *final; /* the finished document, owned */
	struct mpd_calib_jobs *owner;
	struct job *next; /* newest first */
} job;

struct mpd_calib_jobs {
	mp_store *store;
	mpd_metrics *metrics; /* borrowed: the latest figures are published as gauges */
	pthread_mutex_t lock;
	job *head;
};

static void iso_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *target_name(const mpd_calib_request *rq)
{
	return rq->gpu ? "gpu:0" : "cpu";
}

void mpd_calib_jobs_set_metrics(mpd_calib_jobs *j, mpd_metrics *metrics)
{
	if (j)
		j->metrics = metrics;
}

/* The measured profile's figures as gauges: the latest run wins (errors are ignored: metrics never fail a run). */
static void publish(mpd_metrics *m, const mp_store_device *p)
{
	mpd_label dev = { "device", p->id }, lab[2] = { { "device", p->id }, { "dtype", "" } };
	mp_error e;

	if (m == NULL)
		return;
	mpd_metrics_gauge_set(m, "memplan_calibration_memory_bandwidth_bytes_per_second",
			      "Best memory bandwidth the latest calibration measured.", &dev, 1,
			      p->hw.memory_bandwidth_bytes_per_second, &e);
	if (p->hw.usable_memory_bytes)
		mpd_metrics_gauge_set(m, "memplan_calibration_usable_memory_bytes",
				      "Usable memory the latest calibration found (cudaMemGetInfo total).", &dev, 1,
				      (double)p->hw.usable_memory_bytes, &e);
	for (int t = 1; t < MP_DTYPE_COUNT; t++) {
		if (!(p->hw.peak_flops_per_second[t] > 0))
			continue;
		lab[1].value = mp_dtype_name((mp_dtype)t);
		mpd_metrics_gauge_set(m, "memplan_calibration_peak_flops_per_second",
				      "Dense peak per data type in the latest calibration's profile.", lab, 2,
				      p->hw.peak_flops_per_second[t], &e);
	}
}

mp_status mpd_calib_jobs_create(mp_store *store, mpd_calib_jobs **out, mp_error *err)
{
	mpd_calib_jobs *j = calloc(1, sizeof(*j));

	*out = NULL;
	if (j == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	j->store = store;
	pthread_mutex_init(&j->lock, NULL);
	*out = j;
	return MP_OK;
}

static void job_free(job *jb)
{
	cJSON_Delete(jb->final);
	free(jb);
}

void mpd_calib_jobs_destroy(mpd_calib_jobs *j)
{
	job *jb, *next;

	if (j == NULL)
		return;
	pthread_mutex_lock(&j->lock);
	for (jb = j->head; jb; jb = jb->next)
		jb->cancel = true;
	pthread_mutex_unlock(&j->lock);
	for (jb = j->head; jb; jb = jb->next)
		if (jb->thread_started && !jb->joined) {
			pthread_join(jb->tid, NULL);
			jb->joined = true;
		}
	for (jb = j->head; jb; jb = next) {
		next = jb->next;
		job_free(jb);
	}
	pthread_mutex_destroy(&j->lock);
	free(j);
}

/* ----- request decoding -------------------------------------------------------------------------------- */

typedef struct top_fields {
	int target;
} top_fields;

static const char *const target_names[] = {"gpu:0", "cpu", NULL};

static const mpd_field top_table[] = {
    {.name = "target",
     .type = MPD_F_ENUM,
     .required = true,
     .offset = offsetof(top_fields, target),
     .names = target_names},
    {.name = "suites", .type = MPD_F_ANY},
    {.name = "options", .type = MPD_F_ANY},
    {.name = "fit_plan", .type = MPD_F_ANY},
};

typedef struct option_fields {
	uint64_t runs, array_bytes, matrix_size, threads;
} option_fields;

static const mpd_field option_table[] = {
    {.name = "runs", .type = MPD_F_U64, .offset = offsetof(option_fields, runs), .min = MP_CALIB_MIN_RUNS, .max = 1000},
    {.name = "array_bytes",
     .type = MPD_F_U64,
     .offset = offsetof(option_fields, array_bytes),
     .min = UINT64_C(1) << 20,
     .max = UINT64_C(1) << 40},
    {.name = "matrix_size", .type = MPD_F_U64, .offset = offsetof(option_fields, matrix_size), .min = 64, .max = 16384},
    {.name = "threads", .type = MPD_F_U64, .offset = offsetof(option_fields, threads), .min = 1, .max = 256},
};

/* Reads an exact byte count from the plan document's memory block (absent or null: 0). */
static uint64_t plan_bytes(const cJSON *memory, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(memory, key);

	return cJSON_IsNumber(v) && v->valuedouble > 0 ? (uint64_t)v->valuedouble : 0;
}

static mp_status decode_fit_plan(mp_store *store, const cJSON *plan, mpd_calib_request *rq, mp_error *err)
{
	cJSON *doc = NULL;
	const cJSON *mem;
	mp_status st;

	if (!cJSON_IsObject(plan))
		return mp_fail(err, MP_EINVAL, "/fit_plan",
		               "fit_plan must be an inference plan request (the body of POST /v1/plan/inference)");
	st = mpd_plan_inference(store, plan, &doc, err);
	if (st != MP_OK) {
		char field[sizeof(err->field)];

		snprintf(field, sizeof(field), "/fit_plan%.80s", err->field);
		snprintf(err->field, sizeof(err->field), "%s", field);
		return st;
	}
	mem = cJSON_GetObjectItemCaseSensitive(doc, "memory");
	rq->has_fit = true;
	rq->fit_weights_bytes = plan_bytes(mem, "weights_bytes");
	rq->fit_kv_cache_bytes = plan_bytes(mem, "kv_cache_bytes");
	/* The transient workspace: workspace_bytes where the planner reports it, else activations_bytes. */
	rq->fit_workspace_bytes = plan_bytes(mem, "workspace_bytes");
	if (rq->fit_workspace_bytes == 0)
		rq->fit_workspace_bytes = plan_bytes(mem, "activations_bytes");
	rq->fit_overhead_bytes = plan_bytes(mem, "overhead_bytes");
	rq->fit_total_bytes = plan_bytes(mem, "total_bytes");
	cJSON_Delete(doc);
	if (rq->fit_total_bytes == 0)
		return mp_fail(err, MP_EINVAL, "/fit_plan", "the plan gave no memory.total_bytes");
	return MP_OK;
}

mp_status mpd_calib_decode(mp_store *store, const cJSON *body, mpd_calib_request *rq, mp_error *err)
{
	top_fields top = {0};
	option_fields opt = {0, 0, 0, 0};
	const cJSON *suites = cJSON_GetObjectItemCaseSensitive(body, "suites");
	const cJSON *options = cJSON_GetObjectItemCaseSensitive(body, "options");
	const cJSON *fit = cJSON_GetObjectItemCaseSensitive(body, "fit_plan");
	uint32_t allowed;
	mp_status st;
	int i = 0;

	memset(rq, 0, sizeof(*rq));
	st = mpd_decode_fields(body, "", top_table, sizeof(top_table) / sizeof(top_table[0]), &top, err);
	if (st != MP_OK)
		return st;
	rq->gpu = top.target == 0;
	allowed = rq->gpu ? MP_CALIB_GPU_SUITES : MP_CALIB_CPU_SUITES;
	if (options) {
		if (!cJSON_IsObject(options))
			return mp_fail(err, MP_EINVAL, "/options",
			               "options must be an object: runs, array_bytes, "
			               "matrix_size, threads");
		st = mpd_decode_fields(options, "/options", option_table,
		                       sizeof(option_table) / sizeof(option_table[0]), &opt, err);
		if (st != MP_OK)
			return st;
		rq->runs = (uint32_t)opt.runs;
		rq->array_bytes = opt.array_bytes;
		rq->matrix_size = (uint32_t)opt.matrix_size;
		rq->threads = (uint32_t)opt.threads;
		if (rq->gpu && rq->matrix_size && (rq->matrix_size < 256 || rq->matrix_size % 16))
			return mp_fail(err, MP_EINVAL, "/options/matrix_size",
			               "on a GPU matrix_size must be a multiple of 16 of at least 256 (got %u)",
			               rq->matrix_size);
		if (rq->gpu && rq->threads)
			return mp_fail(err, MP_EINVAL, "/options/threads", "threads applies to the cpu target only");
	}
	if (suites) {
		const cJSON *s;

		if (!cJSON_IsArray(suites) || cJSON_GetArraySize(suites) == 0)
			return mp_fail(err, MP_EINVAL, "/suites", "suites must be a non-empty array of suite names");
		cJSON_ArrayForEach(s, suites)
		{
			uint32_t bit = cJSON_IsString(s) ? mp_calib_suite_from_name(s->valuestring) : 0;
			char field[32];

			snprintf(field, sizeof(field), "/suites/%d", i++);
			if (bit == 0 || !(allowed & bit))
				return mp_fail(err, MP_EINVAL, field,
				               rq->gpu ? "a gpu:0 suite is one of memory, hbm, strided, l2, smem, fma, "
				                         "matmul, latency, intensity, fit"
				                       : "a cpu suite is one of stream, gemm");
			rq->suites |= bit;
		}
	}
	if (fit && !cJSON_IsNull(fit)) {
		if (!rq->gpu)
			return mp_fail(err, MP_EINVAL, "/fit_plan",
			               "the fit check allocates GPU memory: target gpu:0 only");
		st = decode_fit_plan(store, fit, rq, err);
		if (st != MP_OK)
			return st;
		if (rq->suites == 0)
			rq->suites = MP_CALIB_GPU_DEFAULT | MP_CALIB_FIT;
		else if (!(rq->suites & MP_CALIB_FIT))
			return mp_fail(err, MP_EINVAL, "/suites", "fit_plan is given but suites leaves out fit");
	} else if (rq->suites & MP_CALIB_FIT) {
		return mp_fail(err, MP_EINVAL, "/fit_plan",
		               "the fit suite needs fit_plan: an inference plan request whose bytes it allocates");
	}
	return MP_OK;
}

/* ----- documents --------------------------------------------------------------------------------------- */

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v && v[0])
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

/* The live document of a job (called with the lock held). Caller owns it. */
static cJSON *live_doc(const job *jb)
{
	const mpd_calib_request *rq = &jb->rq;
	uint32_t suites = rq->suites ? rq->suites : rq->gpu ? MP_CALIB_GPU_DEFAULT : MP_CALIB_CPU_DEFAULT;
	cJSON *o = cJSON_CreateObject(), *p;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", jb->id);
	cJSON_AddStringToObject(o, "target", target_name(rq));
	cJSON_AddStringToObject(o, "state", jb->state);
	cJSON_AddItemToObject(o, "suites", mpd_calib_suites_json(suites));
	p = cJSON_AddObjectToObject(o, "options");
	if (rq->runs)
		cJSON_AddNumberToObject(p, "runs", rq->runs);
	if (rq->array_bytes)
		cJSON_AddNumberToObject(p, "array_bytes", (double)rq->array_bytes);
	if (rq->matrix_size)
		cJSON_AddNumberToObject(p, "matrix_size", rq->matrix_size);
	if (rq->threads)
		cJSON_AddNumberToObject(p, "threads", rq->threads);
	p = cJSON_AddObjectToObject(o, "progress");
	cJSON_AddNumberToObject(p, "percent", jb->percent);
	add_str_or_null(p, "current_suite", jb->suite);
	cJSON_AddBoolToObject(o, "cancel_requested", jb->cancel);
	cJSON_AddStringToObject(o, "created_at", jb->created_at);
	add_str_or_null(o, "started_at", jb->started_at);
	add_str_or_null(o, "finished_at", jb->finished_at);
	cJSON_AddNumberToObject(o, "elapsed_seconds",
	                        jb->started_at[0] ? (jb->finished_at[0] ? jb->elapsed : mono() - jb->t0) : 0);
	cJSON_AddNullToObject(o, "device_id");
	add_str_or_null(o, "datasheet_id", jb->datasheet_id);
	cJSON_AddNullToObject(o, "device");
	cJSON_AddNullToObject(o, "results");
	cJSON_AddArrayToObject(o, "warnings");
	cJSON_AddNullToObject(o, "error");
	return o;
}

static void set_item(cJSON *o, const char *k, cJSON *v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, k))
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, v);
	else
		cJSON_AddItemToObject(o, k, v);
}

static job *find(mpd_calib_jobs *j, const char *id)
{
	for (job *jb = j->head; jb; jb = jb->next)
		if (strcmp(jb->id, id) == 0)
			return jb;
	return NULL;
}

/* ----- the worker -------------------------------------------------------------------------------------- */

static bool on_progress(void *ctx, double fraction, const char *suite)
{
	job *jb = ctx;
	bool go;

	pthread_mutex_lock(&jb->owner->lock);
	jb->percent = (double)(int)(fraction * 1000.0 + 0.5) / 10.0;
	snprintf(jb->suite, sizeof(jb->suite), "%s", suite ? suite : "");
	go = !jb->cancel;
	pthread_mutex_unlock(&jb->owner->lock);
	return go;
}

/* Writes the job's row (under the store's own lock); results_json may be NULL. */
static mp_status save_row(mpd_calib_jobs *j, job *jb, const char *device_id, const char *results_json, mp_error *err)
{
	mp_store_calibration c;

	memset(&c, 0, sizeof(c));
	pthread_mutex_lock(&j->lock);
	snprintf(c.id, sizeof(c.id), "%s", jb->id);
	snprintf(c.target, sizeof(c.target), "%s", target_name(&jb->rq));
	snprintf(c.state, sizeof(c.state), "%s", jb->state);
	snprintf(c.datasheet_id, sizeof(c.datasheet_id), "%s", jb->datasheet_id);
	snprintf(c.finished_at, sizeof(c.finished_at), "%s", jb->finished_at);
	pthread_mutex_unlock(&j->lock);
	snprintf(c.device_id, sizeof(c.device_id), "%s", device_id ? device_id : "");
	c.results_json = (char *)results_json;
	return mp_store_calibration_save(j->store, &c, err);
}

/* Runs the kernels, encodes the outcome, stores profile and row. */
static void *worker(void *arg)
{
	job *jb = arg;
	mpd_calib_jobs *j = jb->owner;
	mp_calib_gpu_results *gr = NULL;
	mp_calib_cpu_results *cr = NULL;
	mp_calib_ctl ctl = {on_progress, jb};
	mp_store_device *ds = NULL, *prev = NULL, *profile = NULL;
	bool have_ds = false, have_prev = false, have_profile = false, cancelled = false, requested = false;
	char now[32], device_id[MP_STORE_ID_MAX] = "", *text = NULL;
	mp_error err, serr;
	mp_status st;
	cJSON *doc = NULL;

	memset(&err, 0, sizeof(err));
	memset(&serr, 0, sizeof(serr));
	pthread_mutex_lock(&j->lock);
	snprintf(jb->state, sizeof(jb->state), "running");
	iso_now(jb->started_at, sizeof(jb->started_at));
	jb->t0 = mono();
	cancelled = jb->cancel;
	pthread_mutex_unlock(&j->lock);
	(void)save_row(j, jb, NULL, NULL, &serr);

	gr = calloc(1, sizeof(*gr));
	cr = calloc(1, sizeof(*cr));
	ds = calloc(1, sizeof(*ds));
	prev = calloc(1, sizeof(*prev));
	profile = calloc(1, sizeof(*profile));
	if (gr == NULL || cr == NULL || ds == NULL || prev == NULL || profile == NULL) {
		st = mp_fail(&err, MP_ENOMEM, "", "out of memory");
	} else if (cancelled) {
		st = MP_OK;
	} else if (jb->rq.gpu) {
		mp_calib_gpu_options o = {jb->rq.suites,
		                          jb->rq.runs,
		                          jb->rq.array_bytes,
		                          jb->rq.matrix_size,
		                          jb->rq.fit_weights_bytes,
		                          jb->rq.fit_kv_cache_bytes,
		                          jb->rq.fit_workspace_bytes};

		st = mp_calib_gpu_run(&o, &ctl, gr, &err);
		cancelled = gr->cancelled;
	} else {
		mp_calib_cpu_options o = {jb->rq.suites, jb->rq.runs, jb->rq.threads, jb->rq.array_bytes,
		                          jb->rq.matrix_size};

		st = mp_calib_cpu_run(&o, &ctl, cr, &err);
		cancelled = cr->cancelled;
	}

	pthread_mutex_lock(&j->lock);
	jb->elapsed = mono() - jb->t0;
	cancelled = cancelled || (st == MP_OK && jb->cancel);
	doc = live_doc(jb);
	pthread_mutex_unlock(&j->lock);
	iso_now(now, sizeof(now));

	if (doc && st == MP_OK && !cancelled) {
		mpd_calib_profile_id(jb->rq.gpu, profile->id, sizeof(profile->id));
		have_prev = mp_store_device_get(j->store, profile->id, prev, &serr) == MP_OK &&
		            strcmp(prev->source, "measured") == 0;
		have_ds = jb->datasheet_id[0] && mp_store_device_get(j->store, jb->datasheet_id, ds, &serr) == MP_OK;
		st = jb->rq.gpu
		         ? mpd_calib_gpu_doc(gr, &jb->rq, have_ds ? ds : NULL, have_prev ? prev : NULL, jb->id, now,
		                             jb->elapsed, doc, profile, &have_profile)
		         : mpd_calib_cpu_doc(cr, have_prev ? prev : NULL, jb->id, now, doc, profile, &have_profile);
		if (st == MP_OK && have_profile) {
			st = mp_store_device_put(j->store, profile, &err);
			if (st == MP_OK) {
				snprintf(device_id, sizeof(device_id), "%s", profile->id);
				publish(j->metrics, profile);
			}
			else
				snprintf(err.message, sizeof(err.message),
				         "measured, but storing the profile failed: %.200s",
				         serr.message[0] ? serr.message : err.message);
		}
	} else if (doc == NULL) {
		st = mp_fail(&err, MP_ENOMEM, "", "out of memory");
	}

	pthread_mutex_lock(&j->lock);
	snprintf(jb->state, sizeof(jb->state), "%s", st != MP_OK ? "failed" : cancelled ? "cancelled" : "succeeded");
	iso_now(jb->finished_at, sizeof(jb->finished_at));
	if (st == MP_OK && !cancelled)
		jb->percent = 100.0;
	requested = cancelled || jb->cancel;
	pthread_mutex_unlock(&j->lock);
	if (doc) {
		cJSON *e;

		set_item(doc, "state", cJSON_CreateString(jb->state));
		set_item(doc, "finished_at", cJSON_CreateString(jb->finished_at));
		set_item(doc, "cancel_requested", cJSON_CreateBool(requested));
		set_item(doc, "elapsed_seconds", cJSON_CreateNumber(jb->elapsed));
		set_item(cJSON_GetObjectItem(doc, "progress"), "percent", cJSON_CreateNumber(jb->percent));
		set_item(doc, "device_id", device_id[0] ? cJSON_CreateString(device_id) : cJSON_CreateNull());
		if (st != MP_OK) {
			e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "status", mp_status_str(st));
			cJSON_AddStringToObject(e, "message", err.message);
			set_item(doc, "error", e);
		} else if (cancelled) {
			e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "status", "cancelled");
			cJSON_AddStringToObject(e, "message", "cancelled on request (DELETE); no profile was stored");
			set_item(doc, "error", e);
		}
		text = cJSON_PrintUnformatted(doc);
	}
	(void)save_row(j, jb, device_id[0] ? device_id : NULL, text, &serr);
	cJSON_free(text);

	pthread_mutex_lock(&j->lock);
	jb->final = doc;
	jb->finished = true;
	pthread_mutex_unlock(&j->lock);
	free(gr);
	free(cr);
	free(ds);
	free(prev);
	free(profile);
	return NULL;
}

/* ----- start, get, cancel, wait ------------------------------------------------------------------------ */

static void new_id(char *id, size_t len)
{
	unsigned char b[8];
	static const char hex[] = "0123456789abcdef";
	size_t k = 0;

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)id << 16) ^ (uint64_t)(mono() * 1e9);

		memcpy(b, &x, sizeof(b));
	}
	k = (size_t)snprintf(id, len, "cal-");
	for (size_t i = 0; i < sizeof(b) && k + 2 < len; i++) {
		id[k++] = hex[b[i] >> 4];
		id[k++] = hex[b[i] & 15];
	}
	id[k] = '\0';
}

/* Joins finished threads and drops the oldest finished jobs beyond KEEP_IN_MEMORY (lock held). */
static void reap(mpd_calib_jobs *j)
{
	unsigned n = 0;
	job **pp = &j->head;

	for (job *jb = j->head; jb; jb = jb->next)
		if (jb->finished && jb->thread_started && !jb->joined) {
			pthread_join(jb->tid, NULL); /* finished: it holds no lock and is returning */
			jb->joined = true;
		}
	while (*pp) {
		job *jb = *pp;

		n++;
		if (n > KEEP_IN_MEMORY && jb->finished && (jb->joined || !jb->thread_started)) {
			*pp = jb->next;
			job_free(jb);
			continue;
		}
		pp = &jb->next;
	}
}

mp_status mpd_calib_start(mpd_calib_jobs *j, const mpd_calib_request *rq, char *id, mp_error *err)
{
	mp_calib_gpu_info info;
	const char *dsid = NULL;
	job *jb;
	mp_status st;
	mp_store_device *ds = NULL;

	id[0] = '\0';
	if (rq->gpu) {
		if (!mp_calib_built_in())
			return mp_fail(err, MP_ENOTBUILTIN, "/target",
			               "GPU calibration is not built in: this memplan was built without CUDA (nvcc was "
			               "not found, or make CUDA=0); the cpu target works in every build");
		st = mp_calib_gpu_probe(&info, err);
		if (st != MP_OK) {
			snprintf(err->field, sizeof(err->field), "/target");
			return st;
		}
		dsid = mpd_calib_datasheet_for(info.name);
	}
	jb = calloc(1, sizeof(*jb));
	ds = calloc(1, sizeof(*ds));
	if (jb == NULL || ds == NULL) {
		free(jb);
		free(ds);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	/* Link the datasheet only when the store has it (the row's foreign key). */
	if (dsid && mp_store_device_get(j->store, dsid, ds, err) == MP_OK)
		snprintf(jb->datasheet_id, sizeof(jb->datasheet_id), "%s", dsid);
	memset(err, 0, sizeof(*err));
	free(ds);
	jb->rq = *rq;
	jb->owner = j;
	snprintf(jb->state, sizeof(jb->state), "queued");
	iso_now(jb->created_at, sizeof(jb->created_at));
	new_id(jb->id, sizeof(jb->id));

	pthread_mutex_lock(&j->lock);
	reap(j);
	for (job *o = j->head; o; o = o->next)
		if (!o->finished && o->rq.gpu == rq->gpu) {
			st = mp_fail(
			    err, MP_EBUSY, "/target",
			    "a calibration of %s is already running: %s (GET /v1/calibrations/%s shows it, DELETE "
			    "cancels it)",
			    target_name(rq), o->id, o->id);
			pthread_mutex_unlock(&j->lock);
			free(jb);
			return st;
		}
	jb->next = j->head;
	j->head = jb;
	pthread_mutex_unlock(&j->lock);

	st = save_row(j, jb, NULL, NULL, err);
	if (st == MP_OK && pthread_create(&jb->tid, NULL, worker, jb) != 0)
		st = mp_fail(err, MP_EINTERNAL, "", "cannot start the calibration thread");
	pthread_mutex_lock(&j->lock);
	if (st != MP_OK) {
		snprintf(jb->state, sizeof(jb->state), "failed");
		iso_now(jb->finished_at, sizeof(jb->finished_at));
		jb->finished = true;
	} else {
		jb->thread_started = true;
		snprintf(id, MPD_CALIB_ID_MAX, "%s", jb->id);
	}
	pthread_mutex_unlock(&j->lock);
	if (st != MP_OK) {
		mp_error ignored;

		(void)save_row(j, jb, NULL, NULL, &ignored);
	}
	return st;
}

/* A stored run as a document: its saved document, with the row's columns as the truth. */
static mp_status stored_doc(mpd_calib_jobs *j, const char *id, cJSON **out, mp_error *err)
{
	mp_store_calibration c;
	mp_status st = mp_store_calibration_get(j->store, id, &c, err);
	cJSON *doc = NULL;
	bool live_state;

	if (st != MP_OK)
		return st;
	doc = c.results_json ? cJSON_Parse(c.results_json) : cJSON_CreateObject();
	if (doc == NULL) {
		mp_store_calibration_free(&c);
		return mp_fail(err, MP_EPARSE, "", "the stored document of calibration %s is not JSON", id);
	}
	/* A queued or running row that no job in memory owns was cut short by a daemon restart. */
	live_state = strcmp(c.state, "queued") == 0 || strcmp(c.state, "running") == 0;
	set_item(doc, "id", cJSON_CreateString(c.id));
	set_item(doc, "target", cJSON_CreateString(c.target));
	set_item(doc, "state", cJSON_CreateString(live_state ? "failed" : c.state));
	set_item(doc, "created_at", cJSON_CreateString(c.created_at));
	set_item(doc, "finished_at", c.finished_at[0] ? cJSON_CreateString(c.finished_at) : cJSON_CreateNull());
	set_item(doc, "device_id", c.device_id[0] ? cJSON_CreateString(c.device_id) : cJSON_CreateNull());
	set_item(doc, "datasheet_id", c.datasheet_id[0] ? cJSON_CreateString(c.datasheet_id) : cJSON_CreateNull());
	if (live_state) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "status", "interrupted");
		cJSON_AddStringToObject(e, "message", "the daemon stopped before this calibration finished");
		set_item(doc, "error", e);
	}
	mp_store_calibration_free(&c);
	*out = doc;
	return MP_OK;
}

mp_status mpd_calib_get(mpd_calib_jobs *j, const char *id, cJSON **out, mp_error *err)
{
	job *jb;
	cJSON *doc = NULL;

	*out = NULL;
	pthread_mutex_lock(&j->lock);
	jb = find(j, id);
	if (jb)
		doc = jb->final ? cJSON_Duplicate(jb->final, true) : live_doc(jb);
	pthread_mutex_unlock(&j->lock);
	if (jb == NULL)
		return stored_doc(j, id, out, err);
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	*out = doc;
	return MP_OK;
}

mp_status mpd_calib_cancel(mpd_calib_jobs *j, const char *id, cJSON **out, mp_error *err)
{
	job *jb;
	cJSON *doc = NULL;
	char state[16] = "";

	*out = NULL;
	pthread_mutex_lock(&j->lock);
	jb = find(j, id);
	if (jb && !jb->finished) {
		jb->cancel = true;
		doc = live_doc(jb);
	} else if (jb) {
		snprintf(state, sizeof(state), "%s", jb->state);
	}
	pthread_mutex_unlock(&j->lock);
	if (jb == NULL) {
		mp_status st = stored_doc(j, id, &doc, err);

		if (st != MP_OK)
			return st;
		snprintf(state, sizeof(state), "%s", cJSON_GetObjectItem(doc, "state")->valuestring);
		cJSON_Delete(doc);
		doc = NULL;
	}
	if (state[0])
		return mp_fail(err, MP_ECONFLICT, "", "calibration %s has already finished (%s): nothing to cancel", id,
		               state);
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	*out = doc;
	return MP_OK;
}

mp_status mpd_calib_wait(mpd_calib_jobs *j, const char *id, bool (*tick)(void *ctx, double percent, const char *suite),
                         void *ctx, mp_error *err)
{
	for (;;) {
		job *jb;
		bool finished;
		double percent;
		char suite[24];
		struct timespec ts = {0, 100 * 1000 * 1000};

		pthread_mutex_lock(&j->lock);
		jb = find(j, id);
		if (jb == NULL) {
			pthread_mutex_unlock(&j->lock);
			return mp_fail(err, MP_ENOTFOUND, "/id", "no calibration job %s in this process", id);
		}
		finished = jb->finished;
		percent = jb->percent;
		snprintf(suite, sizeof(suite), "%s", jb->suite);
		pthread_mutex_unlock(&j->lock);
		if (tick && !tick(ctx, percent, suite)) {
			pthread_mutex_lock(&j->lock);
			jb = find(j, id);
			if (jb)
				jb->cancel = true;
			pthread_mutex_unlock(&j->lock);
		}
		if (finished)
			return MP_OK;
		nanosleep(&ts, NULL);
	}
}
