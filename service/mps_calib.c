/*
 * mps_calib.c: the calibration job manager and the measured profiles. Each job runs on its own worker thread; one
 * job per target ("gpu:0", "cpu") at a time (a second gets MP_EBUSY: 409). Progress and cancellation pass through
 * the kernels' mp_calib_ctl callback under one mutex. Every state change is written to the store's calibration
 * history (one row per job), and a successful run stores its measured device profile. Holds no globals: the
 * manager hangs off the daemon (or the CLI's stack). Never touches HTTP or JSON: the record kept in the store is
 * written by the caller's encoder.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mps_calib.h"
#include "service_int.h"

#define KEEP_IN_MEMORY 32 /* finished jobs kept in memory; older ones are read back from the store */

/* ----- names, ids, profiles ---------------------------------------------------------------------------- */

/* CUDA device names (cudaDeviceProp.name) to datasheet profile ids; the first whole-word match wins, so the
 * more specific names come first ("H200 NVL" before "H200", "A100" entries before "A10"). */
static const struct {
	const char *needle;
	const char *id;
} datasheet_map[] = {
    {"H200 NVL", "h200-nvl-141gb"},
    {"H200", "h200-sxm-141gb"},
    {"H100 NVL", "h100-nvl-94gb"},
    {"H100 PCIe", "h100-pcie-80gb"},
    {"H100", "h100-sxm5-80gb"},
    {"GB200", "gb200-186gb"},
    {"B200", "b200-180gb"},
    {"A100 80GB PCIe", "a100-pcie-80gb"},
    {"A100-PCIE-80GB", "a100-pcie-80gb"},
    {"A100-SXM4-80GB", "a100-sxm4-80gb"},
    {"A100-SXM4-40GB", "a100-sxm4-40gb"},
    {"L40S", "l40s-48gb"},
    {"L4", "l4-24gb"},
    {"A10", "a10-24gb"},
    {"T4", "t4-16gb"},
    {"V100-SXM2-32GB", "v100-sxm2-32gb"},
    {"RTX 3090", "rtx-3090-24gb"},
    {"RTX 4090", "rtx-4090-24gb"},
};

/* needle occurs in s as a whole word: not preceded or followed by a letter or digit. */
static bool has_word(const char *s, const char *needle)
{
	size_t n = strlen(needle);

	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) {
		bool left = p == s || !isalnum((unsigned char)p[-1]);
		bool right = !isalnum((unsigned char)p[n]);

		if (left && right)
			return true;
	}
	return false;
}

const char *mps_calib_datasheet_for(const char *cuda_name)
{
	if (cuda_name == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(datasheet_map) / sizeof(datasheet_map[0]); i++)
		if (has_word(cuda_name, datasheet_map[i].needle))
			return datasheet_map[i].id;
	return NULL;
}

void mps_calib_profile_id(bool gpu, char *out, size_t len)
{
	char host[256] = "", slug[41] = "";
	size_t k = 0;

	if (gethostname(host, sizeof(host) - 1) != 0)
		host[0] = '\0';
	for (const char *p = host; *p && k < sizeof(slug) - 1; p++) {
		unsigned char c = (unsigned char)tolower((unsigned char)*p);

		if (isalnum(c))
			slug[k++] = (char)c;
		else if (k > 0 && slug[k - 1] != '-')
			slug[k++] = '-';
	}
	while (k > 0 && slug[k - 1] == '-')
		k--;
	slug[k] = '\0';
	snprintf(out, len, "measured-%s-%s", gpu ? "gpu0" : "cpu", k ? slug : "localhost");
}


static void note_append(char *note, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void note_append(char *note, size_t len, const char *fmt, ...)
{
	size_t used = strlen(note);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(note + used, len - used, fmt, ap);
	va_end(ap);
}


static const mp_dtype matmul_types[] = {MP_DTYPE_BF16, MP_DTYPE_FP16, MP_DTYPE_TF32, MP_DTYPE_FP8_E4M3};
#define N_MATMUL (sizeof(matmul_types) / sizeof(matmul_types[0]))


void mps_calib_gpu_profile(const mp_calib_gpu_results *r, const mp_store_device *datasheet,
			   const mp_store_device *previous, const char *job_id, const char *now, double elapsed_seconds,
			   mp_store_device *profile, bool *have_profile)
{
	const mp_store_device *base = previous ? previous : datasheet;
	char note[2048] = "", carried[256] = "";
	double bw = mp_calib_gpu_bandwidth(r);

	/* The profile: the base's figures, overwritten with what this run measured. */
	memset(profile, 0, sizeof(*profile));
	if (base)
		*profile = *base;
	if (base != previous)
		profile->naliases = 0; /* the datasheet profile's names (NVML, GPU Feature Discovery) stay its own */
	mps_calib_profile_id(true, profile->id, sizeof(profile->id));
	snprintf(profile->name, sizeof(profile->name), "%s", r->info.name);
	snprintf(profile->vendor, sizeof(profile->vendor), "NVIDIA");
	snprintf(profile->architecture, sizeof(profile->architecture), "%s",
	         mp_calib_architecture(r->info.cc_major, r->info.cc_minor));
	snprintf(profile->source, sizeof(profile->source), "measured");
	snprintf(profile->measured_at, sizeof(profile->measured_at), "%s", now);
	snprintf(profile->kind, sizeof(profile->kind), "gpu");
	snprintf(profile->usable_memory_source, sizeof(profile->usable_memory_source), "measured");
	profile->hw.memory_bytes = r->info.memory_bytes;
	profile->hw.usable_memory_bytes = r->info.memory_bytes;
	profile->hw.sm_count = r->info.sm_count;
	profile->hw.l2_cache_bytes = r->info.l2_cache_bytes;
	if (r->info.clock_hz > 0)
		profile->hw.boost_clock_hz = r->info.clock_hz;
	if (bw > 0)
		profile->hw.memory_bandwidth_bytes_per_second = bw;
	if (r->suites_done & MP_CALIB_FMA)
		profile->hw.peak_flops_per_second[MP_DTYPE_FP32] = r->fma_fp32.best;
	for (size_t i = 0; i < N_MATMUL; i++)
		if (mp_calib_matmul_peak(r, matmul_types[i]) > 0)
			profile->hw.peak_flops_per_second[matmul_types[i]] = mp_calib_matmul_peak(r, matmul_types[i]);
	if (r->suites_done & MP_CALIB_MEMORY)
		profile->hw.cuda_context_bytes = r->context_bytes;
	for (int t = 1; t < MP_DTYPE_COUNT; t++) {
		bool measured =
		    (t == MP_DTYPE_FP32 && (r->suites_done & MP_CALIB_FMA)) || mp_calib_matmul_peak(r, (mp_dtype)t) > 0;

		if (profile->hw.peak_flops_per_second[t] > 0 && !measured)
			note_append(carried, sizeof(carried), "%s%s", carried[0] ? ", " : "",
			            mp_dtype_name((mp_dtype)t));
	}
	note_append(note, sizeof(note),
	            "Measured by memplan calibration %s on %s (suites run: %s%s%s%s%s; %.1f s). Memory: cudaMemGetInfo "
	            "total after context creation.",
	            job_id, now, (r->suites_done & MP_CALIB_HBM) ? "hbm " : "",
	            (r->suites_done & MP_CALIB_FMA) ? "fma " : "", (r->suites_done & MP_CALIB_MATMUL) ? "matmul " : "",
	            (r->suites_done & MP_CALIB_MEMORY) ? "memory " : "",
	            (r->suites_done & ~(uint32_t)(MP_CALIB_HBM | MP_CALIB_FMA | MP_CALIB_MATMUL | MP_CALIB_MEMORY))
	                ? "and others"
	                : "",
	            elapsed_seconds);
	if (bw > 0)
		note_append(
		    note, sizeof(note),
		    " Bandwidth: the better of a 16-byte-access copy kernel and cudaMemcpy D2D, best of %u runs "
		    "over %.2f GB arrays, bytes read + written.",
		    r->runs, (double)r->array_bytes / 1e9);
	if (r->suites_done & MP_CALIB_FMA)
		note_append(note, sizeof(note), " fp32: FMA kernel with independent register chains, best of %u runs.",
		            r->runs);
	if (r->suites_done & MP_CALIB_MATMUL)
		note_append(note, sizeof(note), " Matrix peaks: cuBLASLt %u^3, random inputs, best of %u runs.",
		            r->cublas_bf16.size, r->runs);
	if (base && (carried[0] || bw <= 0))
		note_append(note, sizeof(note), " Not measured in this run, kept from %s profile %s: %s%s%s.",
		            base == previous ? "the earlier measured" : "the datasheet", base->id,
		            bw <= 0 ? "memory bandwidth" : "", bw <= 0 && carried[0] ? ", " : "", carried);
	snprintf(profile->source_note, sizeof(profile->source_note), "%s", note);
	*have_profile = profile->hw.memory_bandwidth_bytes_per_second > 0 && profile->hw.memory_bytes > 0;
}

void mps_calib_cpu_profile(const mp_calib_cpu_results *r, const mp_store_device *previous, const char *job_id,
			   const char *now, mp_store_device *profile, bool *have_profile)
{
	char note[2048] = "";

	memset(profile, 0, sizeof(*profile));
	if (previous)
		*profile = *previous;
	mps_calib_profile_id(false, profile->id, sizeof(profile->id));
	snprintf(profile->name, sizeof(profile->name), "%s", r->info.name);
	snprintf(profile->vendor, sizeof(profile->vendor), "%s", r->info.vendor[0] ? r->info.vendor : "unknown");
	snprintf(profile->architecture, sizeof(profile->architecture), "%s", r->info.architecture);
	snprintf(profile->form_factor, sizeof(profile->form_factor), "host CPU, %u threads", r->threads);
	snprintf(profile->source, sizeof(profile->source), "measured");
	snprintf(profile->measured_at, sizeof(profile->measured_at), "%s", now);
	/* a CPU: fit and capacity leave it out unless asked for kind cpu (it is no GPU a scheduler places on) */
	snprintf(profile->kind, sizeof(profile->kind), "cpu");
	profile->usable_memory_source[0] = '\0';
	profile->nvml_memory_bytes = 0;
	profile->hw.memory_bytes = r->info.memory_bytes;
	profile->hw.usable_memory_bytes = 0;
	if (r->suites_done & MP_CALIB_STREAM)
		profile->hw.memory_bandwidth_bytes_per_second = r->triad.best;
	if (r->suites_done & MP_CALIB_GEMM) {
		profile->hw.peak_flops_per_second[MP_DTYPE_FP64] = r->dgemm.best;
		profile->hw.peak_flops_per_second[MP_DTYPE_FP32] = r->sgemm.best;
	}
	note_append(note, sizeof(note), "Measured by memplan calibration %s on %s, %u threads.", job_id, now,
	            r->threads);
	if (r->suites_done & MP_CALIB_STREAM)
		note_append(note, sizeof(note),
		            " Bandwidth: STREAM triad a = b + s c over three %.2f GB arrays of doubles, 24 bytes per "
		            "element counted (write-allocate traffic not), best of %u runs.",
		            (double)r->array_bytes / 1e9, r->runs);
	if (r->suites_done & MP_CALIB_GEMM)
		note_append(note, sizeof(note), " fp64 / fp32: OpenBLAS dgemm / sgemm n = %u, best of %u runs (%s).",
		            r->matrix_size, r->runs, r->info.blas);
	if (previous && !(r->suites_done & MP_CALIB_STREAM))
		note_append(note, sizeof(note), " Bandwidth kept from the earlier measured profile.");
	snprintf(profile->source_note, sizeof(profile->source_note), "%s", note);
	*have_profile = profile->hw.memory_bandwidth_bytes_per_second > 0 && profile->hw.memory_bytes > 0;
}

void mps_calib_fit_from_plan(const mps_inference_plan *plan, mps_calib_request *rq)
{
	rq->has_fit = true;
	rq->fit_weights_bytes = plan->mem.weights_bytes;
	rq->fit_kv_cache_bytes = plan->mem.kv_cache_bytes;
	rq->fit_workspace_bytes = plan->mem.activations_bytes;
	rq->fit_overhead_bytes = plan->mem.overhead_bytes;
	rq->fit_total_bytes = plan->mem.total_bytes;
}

/* ----- the jobs --------------------------------------------------------------------------------------- */

typedef struct job {
	mps_calib_job v;	/* what callers see: copied out under the lock */
	bool cancel;
	bool finished; /* the worker is done with the job (its thread can be joined) */
	bool thread_started, joined;
	pthread_t tid;
	double t0;
	struct mps_calib_jobs *owner;
	struct job *next; /* newest first */
} job;

struct mps_calib_jobs {
	mps_service *s;
	mps_calib_encode_fn encode;
	mps_calib_profile_fn on_profile;
	void *on_profile_ctx;
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

static const char *target_name(const mps_calib_request *rq)
{
	return rq->gpu ? "gpu:0" : "cpu";
}

void mps_calib_job_free(mps_calib_job *job)
{
	if (job == NULL)
		return;
	free(job->gpu);
	free(job->cpu);
	free(job->record);
	free(job);
}

mp_status mps_calib_jobs_create(mps_service *s, mps_calib_encode_fn encode, mps_calib_jobs **out, mp_error *err)
{
	mps_calib_jobs *j = calloc(1, sizeof(*j));

	*out = NULL;
	if (j == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	j->s = s;
	j->encode = encode;
	pthread_mutex_init(&j->lock, NULL);
	*out = j;
	return MP_OK;
}

void mps_calib_jobs_on_profile(mps_calib_jobs *j, mps_calib_profile_fn fn, void *ctx)
{
	if (j == NULL)
		return;
	j->on_profile = fn;
	j->on_profile_ctx = ctx;
}

static void job_free(job *jb)
{
	free(jb->v.gpu);
	free(jb->v.cpu);
	free(jb);
}

void mps_calib_jobs_destroy(mps_calib_jobs *j)
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

/* A copy of jb's view (lock held). NULL when out of memory. */
static mps_calib_job *snapshot(const job *jb)
{
	mps_calib_job *c = malloc(sizeof(*c));

	if (c == NULL)
		return NULL;
	*c = jb->v;
	c->cancel_requested = jb->cancel;
	c->gpu = NULL;
	c->cpu = NULL;
	c->record = NULL;
	if (jb->v.started_at[0] && !jb->finished)
		c->elapsed_seconds = mono() - jb->t0;
	if (jb->v.gpu && (c->gpu = malloc(sizeof(*c->gpu))) != NULL)
		*c->gpu = *jb->v.gpu;
	if (jb->v.cpu && (c->cpu = malloc(sizeof(*c->cpu))) != NULL)
		*c->cpu = *jb->v.cpu;
	if ((jb->v.gpu && c->gpu == NULL) || (jb->v.cpu && c->cpu == NULL)) {
		mps_calib_job_free(c);
		return NULL;
	}
	return c;
}

static job *find(mps_calib_jobs *j, const char *id)
{
	for (job *jb = j->head; jb; jb = jb->next)
		if (strcmp(jb->v.id, id) == 0)
			return jb;
	return NULL;
}

static bool on_progress(void *ctx, double fraction, const char *suite)
{
	job *jb = ctx;
	bool go;

	pthread_mutex_lock(&jb->owner->lock);
	jb->v.percent = (double)(int)(fraction * 1000.0 + 0.5) / 10.0;
	snprintf(jb->v.suite, sizeof(jb->v.suite), "%s", suite ? suite : "");
	go = !jb->cancel;
	pthread_mutex_unlock(&jb->owner->lock);
	return go;
}

/* Writes the job's row; record may be NULL. */
static mp_status save_row(mps_calib_jobs *j, job *jb, const char *record, mp_error *err)
{
	mp_store_calibration c;

	memset(&c, 0, sizeof(c));
	pthread_mutex_lock(&j->lock);
	snprintf(c.id, sizeof(c.id), "%s", jb->v.id);
	snprintf(c.target, sizeof(c.target), "%s", target_name(&jb->v.rq));
	snprintf(c.state, sizeof(c.state), "%s", jb->v.state);
	snprintf(c.datasheet_id, sizeof(c.datasheet_id), "%s", jb->v.datasheet_id);
	snprintf(c.finished_at, sizeof(c.finished_at), "%s", jb->v.finished_at);
	snprintf(c.device_id, sizeof(c.device_id), "%s", jb->v.device_id);
	pthread_mutex_unlock(&j->lock);
	c.results_json = (char *)record;
	return mp_store_calibration_save(mps_store(j->s), &c, err);
}

/* The measured profile of a finished run, and its storing. Computed unlocked from figures that no longer change,
 * then published to the view under the lock. Returns the status the job ends with; *reason gets the message of a
 * failure (the store's own words, never a lookup's that found nothing). */
static mp_status store_profile(mps_calib_jobs *j, job *jb, const char *now, mp_error *reason)
{
	const mps_calib_job *v = &jb->v;
	mp_store_device *prev = calloc(1, sizeof(*prev)), *ds = calloc(1, sizeof(*ds)), *prof = calloc(1, sizeof(*prof));
	mp_error lookup, e = { { 0 }, { 0 }, NULL };
	bool have_prev, have_ds, have_profile = false, stored = false;
	mp_status st = MP_OK;

	if (prev == NULL || ds == NULL || prof == NULL) {
		st = mp_fail(reason, MP_ENOMEM, "", "out of memory");
		goto out;
	}
	mps_calib_profile_id(v->rq.gpu, prof->id, sizeof(prof->id));
	have_prev = mps_device_get(j->s, prof->id, prev, &lookup) == MP_OK && strcmp(prev->source, "measured") == 0;
	have_ds = v->datasheet_id[0] && mps_device_get(j->s, v->datasheet_id, ds, &lookup) == MP_OK;
	if (v->rq.gpu)
		mps_calib_gpu_profile(v->gpu, have_ds ? ds : NULL, have_prev ? prev : NULL, v->id, now, v->elapsed_seconds,
				      prof, &have_profile);
	else
		mps_calib_cpu_profile(v->cpu, have_prev ? prev : NULL, v->id, now, prof, &have_profile);
	if (have_profile) {
		st = mps_device_put(j->s, prof, "calibration", "", NULL, &e);
		stored = st == MP_OK;
		if (!stored)
			mp_fail(reason, st, "", "measured, but storing the profile failed: %s",
				e.message[0] ? e.message : mp_status_str(st));
	}
	pthread_mutex_lock(&j->lock);
	jb->v.have_datasheet = have_ds;
	if (have_ds)
		jb->v.datasheet = *ds;
	jb->v.have_profile = have_profile;
	jb->v.profile = *prof;
	if (stored)
		snprintf(jb->v.device_id, sizeof(jb->v.device_id), "%s", prof->id);
	pthread_mutex_unlock(&j->lock);
	if (stored && j->on_profile)
		j->on_profile(j->on_profile_ctx, prof);
out:
	free(prev);
	free(ds);
	free(prof);
	return st;
}

/* Runs the kernels, derives and stores the profile, keeps the record. */
void mps_calib_gpu_figures_of(const mp_calib_gpu_results *r, mps_calib_gpu_figures *f)
{
	memset(f, 0, sizeof(*f));
	f->memory_bandwidth_bytes_per_second = mp_calib_gpu_bandwidth(r);
	for (int t = 0; t < MP_DTYPE_COUNT; t++)
		f->matmul_peak_flops_per_second[t] = mp_calib_matmul_peak(r, (mp_dtype)t);
	f->architecture = mp_calib_architecture(r->info.cc_major, r->info.cc_minor);
}

static void *job_thread(void *arg)
{
	job *jb = arg;
	mps_calib_jobs *j = jb->owner;
	mps_calib_job *v = &jb->v;
	mp_calib_ctl ctl = { on_progress, jb };
	mp_calib_gpu_results *gr = calloc(1, sizeof(*gr));
	mp_calib_cpu_results *cr = calloc(1, sizeof(*cr));
	bool cancelled, requested;
	char now[32], *record = NULL;
	mp_error err = { { 0 }, { 0 }, NULL }, ignored;
	mp_status st;

	pthread_mutex_lock(&j->lock);
	snprintf(v->state, sizeof(v->state), "running");
	iso_now(v->started_at, sizeof(v->started_at));
	jb->t0 = mono();
	cancelled = jb->cancel;
	pthread_mutex_unlock(&j->lock);
	(void)save_row(j, jb, NULL, &ignored);

	if (gr == NULL || cr == NULL) {
		st = mp_fail(&err, MP_ENOMEM, "", "out of memory");
	} else if (cancelled) {
		st = MP_OK;
	} else if (v->rq.gpu) {
		mp_calib_gpu_options o = { v->rq.suites,	  v->rq.runs,		  v->rq.array_bytes,
					   v->rq.matrix_size,	  v->rq.fit_weights_bytes, v->rq.fit_kv_cache_bytes,
					   v->rq.fit_workspace_bytes };

		st = mp_calib_gpu_run(&o, &ctl, gr, &err);
		cancelled = gr->cancelled;
	} else {
		mp_calib_cpu_options o = { v->rq.suites, v->rq.runs, v->rq.threads, v->rq.array_bytes, v->rq.matrix_size };

		st = mp_calib_cpu_run(&o, &ctl, cr, &err);
		cancelled = cr->cancelled;
	}

	pthread_mutex_lock(&j->lock);
	v->elapsed_seconds = mono() - jb->t0;
	cancelled = cancelled || (st == MP_OK && jb->cancel);
	if (st == MP_OK && !cancelled) {
		/* the figures, owned by the job from here */
		if (v->rq.gpu) {
			v->gpu = gr;
			mps_calib_gpu_figures_of(gr, &v->gpu_figures);
			gr = NULL;
		} else {
			v->cpu = cr;
			cr = NULL;
		}
		v->have_results = true;
	}
	pthread_mutex_unlock(&j->lock);
	iso_now(now, sizeof(now));
	if (st == MP_OK && !cancelled)
		st = store_profile(j, jb, now, &err);

	pthread_mutex_lock(&j->lock);
	snprintf(v->state, sizeof(v->state), "%s", st != MP_OK ? "failed" : cancelled ? "cancelled" : "succeeded");
	iso_now(v->finished_at, sizeof(v->finished_at));
	if (st == MP_OK && !cancelled)
		v->percent = 100.0;
	requested = cancelled || jb->cancel;
	jb->cancel = requested;
	if (st != MP_OK) {
		snprintf(v->error_status, sizeof(v->error_status), "%s", mp_status_str(st));
		snprintf(v->error_message, sizeof(v->error_message), "%.*s", (int)sizeof(v->error_message) - 1,
			 err.message[0] ? err.message : mp_status_str(st));
	} else if (cancelled) {
		snprintf(v->error_status, sizeof(v->error_status), "cancelled");
		snprintf(v->error_message, sizeof(v->error_message), "cancelled on request (DELETE); no profile was stored");
	}
	v->cancel_requested = requested;
	jb->finished = true; /* the view no longer changes: the encoder may read it unlocked below */
	pthread_mutex_unlock(&j->lock);
	record = j->encode ? j->encode(v) : NULL;
	(void)save_row(j, jb, record, &ignored);
	free(record);
	mps_health_refresh(j->s); /* the GPU may have changed state: the next health read probes again */
	free(gr);
	free(cr);
	return NULL;
}

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
static void reap(mps_calib_jobs *j)
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

mp_status mps_calib_start(mps_calib_jobs *j, const mps_calib_request *rq, char *id, mp_error *err)
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
		dsid = mps_calib_datasheet_for(info.name);
	}
	jb = calloc(1, sizeof(*jb));
	ds = calloc(1, sizeof(*ds));
	if (jb == NULL || ds == NULL) {
		free(jb);
		free(ds);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	/* Link the datasheet only when the store has it (the row's foreign key). */
	if (dsid) {
		mp_error lookup = MP_ERROR_INIT;

		if (mps_device_get(j->s, dsid, ds, &lookup) == MP_OK)
			snprintf(jb->v.datasheet_id, sizeof(jb->v.datasheet_id), "%s", dsid);
	}
	free(ds);
	jb->v.rq = *rq;
	jb->owner = j;
	snprintf(jb->v.state, sizeof(jb->v.state), "queued");
	iso_now(jb->v.created_at, sizeof(jb->v.created_at));
	new_id(jb->v.id, sizeof(jb->v.id));

	pthread_mutex_lock(&j->lock);
	reap(j);
	for (job *o = j->head; o; o = o->next)
		if (!o->finished && o->v.rq.gpu == rq->gpu) {
			st = mp_fail(err, MP_EBUSY, "/target",
				     "a calibration of %s is already running: %s (GET /v1/calibrations/%s shows it, DELETE "
				     "cancels it)",
				     target_name(rq), o->v.id, o->v.id);
			pthread_mutex_unlock(&j->lock);
			free(jb);
			return st;
		}
	jb->next = j->head;
	j->head = jb;
	pthread_mutex_unlock(&j->lock);

	st = save_row(j, jb, NULL, err);
	if (st == MP_OK && pthread_create(&jb->tid, NULL, job_thread, jb) != 0)
		st = mp_fail(err, MP_EINTERNAL, "", "cannot start the calibration thread");
	pthread_mutex_lock(&j->lock);
	if (st != MP_OK) {
		snprintf(jb->v.state, sizeof(jb->v.state), "failed");
		iso_now(jb->v.finished_at, sizeof(jb->v.finished_at));
		snprintf(jb->v.error_status, sizeof(jb->v.error_status), "%s", mp_status_str(st));
		snprintf(jb->v.error_message, sizeof(jb->v.error_message), "%.*s", (int)sizeof(jb->v.error_message) - 1, err->message);
		jb->finished = true;
	} else {
		jb->thread_started = true;
		snprintf(id, MPS_CALIB_ID_MAX, "%s", jb->v.id);
	}
	pthread_mutex_unlock(&j->lock);
	if (st != MP_OK) {
		mp_error ignored = MP_ERROR_INIT;

		(void)save_row(j, jb, NULL, &ignored);
	}
	return st;
}

/* A past job from the store: the row's columns, with the record the store kept. */
static mp_status stored_job(mps_calib_jobs *j, const char *id, mps_calib_job **out, mp_error *err)
{
	mp_store_calibration c;
	mps_calib_job *v;
	mp_status st = mp_store_calibration_get(mps_store(j->s), id, &c, err);

	if (st != MP_OK)
		return st;
	v = calloc(1, sizeof(*v));
	if (v == NULL) {
		mp_store_calibration_free(&c);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	snprintf(v->id, sizeof(v->id), "%s", c.id);
	v->rq.gpu = strcmp(c.target, "gpu:0") == 0;
	snprintf(v->created_at, sizeof(v->created_at), "%s", c.created_at);
	snprintf(v->finished_at, sizeof(v->finished_at), "%s", c.finished_at);
	snprintf(v->device_id, sizeof(v->device_id), "%s", c.device_id);
	snprintf(v->datasheet_id, sizeof(v->datasheet_id), "%s", c.datasheet_id);
	/* a queued or running row that no job in memory owns was cut short by a daemon restart */
	if (strcmp(c.state, "queued") == 0 || strcmp(c.state, "running") == 0) {
		snprintf(v->state, sizeof(v->state), "failed");
		snprintf(v->error_status, sizeof(v->error_status), "interrupted");
		snprintf(v->error_message, sizeof(v->error_message), "the daemon stopped before this calibration finished");
	} else {
		snprintf(v->state, sizeof(v->state), "%s", c.state);
	}
	v->record = c.results_json; /* owned by the view now */
	c.results_json = NULL;
	mp_store_calibration_free(&c);
	*out = v;
	return MP_OK;
}

mp_status mps_calib_get(mps_calib_jobs *j, const char *id, mps_calib_job **out, mp_error *err)
{
	job *jb;
	mps_calib_job *v = NULL;

	*out = NULL;
	pthread_mutex_lock(&j->lock);
	jb = find(j, id);
	if (jb)
		v = snapshot(jb);
	pthread_mutex_unlock(&j->lock);
	if (jb == NULL)
		return stored_job(j, id, out, err);
	if (v == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	*out = v;
	return MP_OK;
}

mp_status mps_calib_cancel(mps_calib_jobs *j, const char *id, mps_calib_job **out, mp_error *err)
{
	job *jb;
	mps_calib_job *v = NULL;
	char state[16] = "";

	*out = NULL;
	pthread_mutex_lock(&j->lock);
	jb = find(j, id);
	if (jb && !jb->finished) {
		jb->cancel = true;
		v = snapshot(jb);
	} else if (jb) {
		snprintf(state, sizeof(state), "%s", jb->v.state);
	}
	pthread_mutex_unlock(&j->lock);
	if (jb == NULL) {
		mps_calib_job *past = NULL;
		mp_status st = stored_job(j, id, &past, err);

		if (st != MP_OK)
			return st;
		snprintf(state, sizeof(state), "%s", past->state);
		mps_calib_job_free(past);
	}
	if (state[0])
		return mp_fail(err, MP_ECONFLICT, "", "calibration %s has already finished (%s): nothing to cancel", id,
			       state);
	if (v == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	*out = v;
	return MP_OK;
}

mp_status mps_calib_wait(mps_calib_jobs *j, const char *id, bool (*tick)(void *ctx, double percent, const char *suite),
			 void *ctx, mp_error *err)
{
	for (;;) {
		job *jb;
		bool finished;
		double percent;
		char suite[24];
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		pthread_mutex_lock(&j->lock);
		jb = find(j, id);
		if (jb == NULL) {
			pthread_mutex_unlock(&j->lock);
			return mp_fail(err, MP_ENOTFOUND, "/id", "no calibration job %s in this process", id);
		}
		finished = jb->finished;
		percent = jb->v.percent;
		snprintf(suite, sizeof(suite), "%s", jb->v.suite);
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
