/*
 * calib.c: calibration jobs as documents (see calib.h): the request, the job's document from its view (the
 * kernels' figures, the ratios against the datasheet, the bench targets, the warnings), the record the store
 * keeps, and the CLI's table. Encoding only: no threads, no store, no hardware.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "calib.h"

cJSON *mpc_calib_suites_json(uint32_t suites)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; a && i < MP_CALIB_SUITE_BITS; i++)
		if (suites & (1u << i))
			mpc_append(a, cJSON_CreateString(mp_calib_suite_name(1u << i)));
	return a;
}

/* ----- requests ------------------------------------------------------------------------------------------ */

typedef struct top_fields {
	int target;
} top_fields;

static const char *const target_names[] = {"gpu:0", "cpu", NULL};

static const mpm_field top_table[] = {
    {.name = "target",
     .type = MPM_F_ENUM,
     .required = true,
     .offset = offsetof(top_fields, target),
     .names = target_names},
    {.name = "suites", .type = MPM_F_ANY},
    {.name = "options", .type = MPM_F_ANY},
    {.name = "fit_plan", .type = MPM_F_ANY},
};

typedef struct option_fields {
	uint64_t runs, array_bytes, matrix_size, threads;
} option_fields;

static const mpm_field option_table[] = {
    {.name = "runs", .type = MPM_F_U64, .offset = offsetof(option_fields, runs), .min = MP_CALIB_MIN_RUNS, .max = 1000},
    {.name = "array_bytes",
     .type = MPM_F_U64,
     .offset = offsetof(option_fields, array_bytes),
     .min = UINT64_C(1) << 20,
     .max = UINT64_C(1) << 40},
    {.name = "matrix_size", .type = MPM_F_U64, .offset = offsetof(option_fields, matrix_size), .min = 64, .max = 16384},
    {.name = "threads", .type = MPM_F_U64, .offset = offsetof(option_fields, threads), .min = 1, .max = 256},
};

mp_status mpc_calib_decode(const cJSON *body, mps_calib_request *rq, mps_inference_request *fit_plan,
			   bool *has_fit_plan, mp_error *err)
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
	*has_fit_plan = false;
	st = mpm_decode_fields(body, "", top_table, sizeof(top_table) / sizeof(top_table[0]), &top, err);
	if (st != MP_OK)
		return st;
	rq->gpu = top.target == 0;
	allowed = rq->gpu ? MP_CALIB_GPU_SUITES : MP_CALIB_CPU_SUITES;
	if (options) {
		if (!cJSON_IsObject(options))
			return mp_fail(err, MP_EINVAL, "/options",
			               "options must be an object: runs, array_bytes, "
			               "matrix_size, threads");
		st = mpm_decode_fields(options, "/options", option_table,
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
		if (!rq->gpu && rq->matrix_size > MP_CALIB_CPU_MAX_MATRIX)
			return mp_fail(err, MP_EINVAL, "/options/matrix_size",
			               "on the cpu target matrix_size is at most %u (got %u): one product must stay short "
			               "enough for a cancellation or a shutdown to be heard within seconds",
			               MP_CALIB_CPU_MAX_MATRIX, rq->matrix_size);
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
		if (!cJSON_IsObject(fit))
			return mp_fail(err, MP_EINVAL, "/fit_plan",
				       "fit_plan must be an inference plan request (the body of POST /v1/plan/inference)");
		st = mpc_inference_decode(fit, "/fit_plan", true, fit_plan, err);
		if (st != MP_OK)
			return st;
		*has_fit_plan = true;
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

/* {"best_<unit>", "median_<unit>", "runs"}, or null when not measured. */
static cJSON *stat_json(const mp_calib_stat *s, const char *unit)
{
	cJSON *o;
	char k[64];

	if (s->runs == 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	snprintf(k, sizeof(k), "best_%s", unit);
	mpc_add_num(o, k, s->best);
	snprintf(k, sizeof(k), "median_%s", unit);
	mpc_add_num(o, k, s->median);
	mpc_add_num(o, "runs", s->runs);
	return o;
}

static cJSON *add_stat(cJSON *o, const char *name, const mp_calib_stat *s, const char *unit)
{
	cJSON *v = stat_json(s, unit);

	mpc_add_item(o, name, v);
	return v;
}

static void add_ratio(cJSON *o, const char *k, double num, double den)
{
	if (num > 0 && den > 0)
		mpc_add_num(o, k, num / den);
	else
		cJSON_AddNullToObject(o, k);
}

static void add_target(cJSON *targets, const char *name, const char *what, double value, bool have, double limit,
                       bool minimum)
{
	cJSON *t = cJSON_CreateObject();

	cJSON_AddStringToObject(t, "name", name);
	cJSON_AddStringToObject(t, "description", what);
	if (have)
		mpc_add_num(t, "value", value);
	else
		cJSON_AddNullToObject(t, "value");
	mpc_add_num(t, minimum ? "minimum" : "maximum", limit);
	if (have)
		cJSON_AddBoolToObject(t, "met", minimum ? value >= limit : value <= limit);
	else
		cJSON_AddNullToObject(t, "met");
	mpc_append(targets, t);
}

static cJSON *gpu_device_json(const mp_calib_gpu_info *in, const mps_calib_gpu_figures *fig)
{
	cJSON *o = cJSON_CreateObject();
	char cc[16];

	cJSON_AddStringToObject(o, "name", in->name);
	mpc_add_num(o, "memory_bytes", in->memory_bytes);
	mpc_add_num(o, "free_bytes", in->free_bytes);
	mpc_add_num(o, "sm_count", in->sm_count);
	mpc_add_num(o, "l2_cache_bytes", in->l2_cache_bytes);
	snprintf(cc, sizeof(cc), "%d.%d", in->cc_major, in->cc_minor);
	cJSON_AddStringToObject(o, "compute_capability", cc);
	cJSON_AddStringToObject(o, "architecture", fig->architecture ? fig->architecture : "unknown");
	mpc_add_num(o, "clock_hz", in->clock_hz);
	mpc_add_num(o, "shared_memory_per_sm_bytes", in->shared_memory_per_sm_bytes);
	mpc_add_num(o, "driver_version", in->driver_version);
	mpc_add_num(o, "runtime_version", in->runtime_version);
	return o;
}

static const mp_dtype matmul_types[] = {MP_DTYPE_BF16, MP_DTYPE_FP16, MP_DTYPE_TF32, MP_DTYPE_FP8_E4M3};
#define N_MATMUL (sizeof(matmul_types) / sizeof(matmul_types[0]))

/* What the results encoders read: the run, the request, the datasheet and the profile (either may be NULL). */
typedef struct gpu_ctx {
	const mp_calib_gpu_results *r;
	const mps_calib_gpu_figures *fig;
	const mps_calib_request *rq;
	const mp_store_device *ds, *profile;
} gpu_ctx;

/* results.memory */
static void memory_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	cJSON *o;

	o = cJSON_AddObjectToObject(res, "memory");
	mpc_add_num(o, "total_bytes", r->info.memory_bytes);
	mpc_add_num(o, "free_bytes", r->info.free_bytes);
	mpc_add_num(o, "context_bytes", r->context_bytes);
	cJSON_AddStringToObject(
	    o, "note",
	    "cudaMemGetInfo right after context creation; context_bytes = total - free, which "
	    "also counts memory other processes held at that moment");
}

/* results.hbm */
static void hbm_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	cJSON *o, *p;

	o = cJSON_AddObjectToObject(res, "hbm");
	mpc_add_num(o, "array_bytes", r->array_bytes);
	mpc_add_num(o, "access_bytes", 16);
	add_stat(o, "memcpy_d2d", &r->memcpy_d2d, "bytes_per_second");
	p = add_stat(o, "copy", &r->copy, "bytes_per_second");
	if (cJSON_IsObject(p)) {
		mpc_add_num(p, "loads_in_flight_per_thread", r->copy_unroll);
		mpc_add_num(p, "blocks", r->copy_blocks);
	}
	add_stat(o, "read", &r->read, "bytes_per_second");
	add_stat(o, "write", &r->write, "bytes_per_second");
	add_stat(o, "triad", &r->triad, "bytes_per_second");
	cJSON_AddStringToObject(o, "note",
	                        "bytes read + bytes written per second; copy and triad use the "
	                        "grid and loads in flight that won a tuning sweep in the same run");
}

/* results.strided */
static void strided_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	cJSON *o, *a, *p;

	o = cJSON_AddObjectToObject(res, "strided");
	mpc_add_num(o, "element_bytes", 4);
	a = cJSON_AddArrayToObject(o, "points");
	for (int k = 0; k < MP_CALIB_STRIDE_COUNT; k++) {
		p = cJSON_CreateObject();
		mpc_add_num(p, "stride", 1u << k);
		mpc_add_item(p, "useful", stat_json(&r->strided[k], "bytes_per_second"));
		add_ratio(p, "fraction_of_stride_1", r->strided[k].best, r->strided[0].best);
		mpc_append(a, p);
	}
}

/* results.l2 */
static void l2_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	cJSON *o;

	o = cJSON_AddObjectToObject(res, "l2");
	mpc_add_num(o, "working_set_bytes", r->l2_working_set_bytes);
	add_stat(o, "read", &r->l2_read, "bytes_per_second");
	add_ratio(o, "over_hbm_read", r->l2_read.best, r->read.best);
}

/* results.smem */
static void smem_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	cJSON *o, *a, *p;

	o = cJSON_AddObjectToObject(res, "smem");
	a = cJSON_AddArrayToObject(o, "points");
	for (int k = 0; k < MP_CALIB_SMEM_STRIDE_COUNT; k++) {
		p = cJSON_CreateObject();
		mpc_add_num(p, "stride_words", 1u << k);
		mpc_add_num(p, "bank_conflict_ways", 1u << k);
		mpc_add_item(p, "read", stat_json(&r->smem[k], "bytes_per_second"));
		mpc_append(a, p);
	}
	add_stat(o, "tile_32x32_column", &r->smem_tile_column, "bytes_per_second");
	add_stat(o, "tile_32x33_column_padded", &r->smem_tile_padded, "bytes_per_second");
	add_ratio(o, "padding_speedup", r->smem_tile_padded.best, r->smem_tile_column.best);
	if (r->info.clock_hz > 0 && r->info.sm_count > 0)
		mpc_add_num(o, "best_bytes_per_clock_per_sm", r->smem[0].best / r->info.clock_hz / r->info.sm_count);
}

/* results.fma */
static void fma_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	const mp_store_device *ds = c->ds;
	cJSON *o;

	o = cJSON_AddObjectToObject(res, "fma");
	add_stat(o, "fp32", &r->fma_fp32, "flops_per_second");
	add_ratio(o, "fp32_over_datasheet", r->fma_fp32.best,
	          ds ? ds->hw.peak_flops_per_second[MP_DTYPE_FP32] : 0);
}

/* results.matmul */
static void matmul_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	const mp_store_device *ds = c->ds;
	cJSON *o, *p;

	cJSON *lt;

	o = cJSON_AddObjectToObject(res, "matmul");
	mpc_add_num(o, "size", r->cublas_bf16.size);
	mpc_add_num(o, "workspace_bytes", r->matmul_workspace_bytes);
	lt = cJSON_AddObjectToObject(o, "cublaslt");
	for (size_t i = 0; i < N_MATMUL; i++) {
		const mp_calib_matmul *m = &r->matmul[matmul_types[i]];

		p = cJSON_AddObjectToObject(lt, mp_dtype_name(matmul_types[i]));
		mpc_add_item(p, "rate", stat_json(&m->flops_per_second, "flops_per_second"));
		mpc_add_num(p, "algorithms_tried", m->algos_tried);
		if (m->flops_per_second.runs || m->rel_error > 0)
			mpc_add_num(p, "relative_error", m->rel_error);
		else
			cJSON_AddNullToObject(p, "relative_error");
		if (m->status[0])
			cJSON_AddStringToObject(p, "status", m->status);
		else
			cJSON_AddNullToObject(p, "status");
		add_ratio(p, "over_datasheet", c->fig->matmul_peak_flops_per_second[matmul_types[i]],
		          ds ? ds->hw.peak_flops_per_second[matmul_types[i]] : 0);
	}
	p = cJSON_AddObjectToObject(o, "cublas_bf16");
	mpc_add_item(p, "rate", stat_json(&r->cublas_bf16.flops_per_second, "flops_per_second"));
	mpc_add_num(p, "relative_error", r->cublas_bf16.rel_error);
	if (r->cublas_bf16.status[0])
		cJSON_AddStringToObject(p, "status", r->cublas_bf16.status);
	else
		cJSON_AddNullToObject(p, "status");
	cJSON_AddStringToObject(o, "note",
	                        "m = n = k, A transposed (TN), fp32 accumulation, random inputs in "
	                        "[-1, 1); cuBLASLt: fastest of the first heuristic candidates; fp8_e4m3 "
	                        "writes bf16; cublas_bf16 is cublasGemmEx with CUBLAS_GEMM_DEFAULT");
}

/* results.latency */
static void latency_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	const mp_store_device *profile = c->profile;
	cJSON *o, *p;

	cJSON *ll;
	double bw = profile ? profile->hw.memory_bandwidth_bytes_per_second : 0, lat = r->latency_hbm.median;

	o = cJSON_AddObjectToObject(res, "latency");
	p = cJSON_AddObjectToObject(o, "hbm");
	mpc_add_num(p, "span_bytes", r->latency_hbm_span_bytes);
	mpc_add_item(p, "load", stat_json(&r->latency_hbm, "seconds"));
	p = cJSON_AddObjectToObject(o, "l2");
	mpc_add_num(p, "span_bytes", r->latency_l2_span_bytes);
	mpc_add_item(p, "load", stat_json(&r->latency_l2, "seconds"));
	cJSON_AddStringToObject(o, "note",
	                        "one thread, a random single cycle over 128-byte lines, loads that "
	                        "skip L1; the HBM figure includes TLB misses over its span");
	ll = cJSON_AddObjectToObject(o, "littles_law");
	if (bw > 0 && lat > 0) {
		mpc_add_num(ll, "bandwidth_bytes_per_second", bw);
		mpc_add_num(ll, "latency_seconds", lat);
		mpc_add_num(ll, "bytes_in_flight", bw * lat);
		if (r->info.sm_count)
			mpc_add_num(ll, "bytes_in_flight_per_sm", bw * lat / r->info.sm_count);
		cJSON_AddStringToObject(ll, "note",
		                        "bytes that must be in flight to sustain the measured bandwidth "
		                        "at the measured HBM latency (bandwidth x latency)");
	} else {
		cJSON_AddStringToObject(ll, "note", "needs the hbm suite's bandwidth in the same profile");
	}
}

/* results.intensity */
static void intensity_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	const mp_store_device *ds = c->ds;
	uint32_t done = r->suites_done;
	cJSON *o, *a, *p;

	double peak = (done & MP_CALIB_FMA) ? r->fma_fp32.best : 0;
	double bw = (done & MP_CALIB_HBM) ? c->fig->memory_bandwidth_bytes_per_second : 0;
	double ds_peak = ds ? ds->hw.peak_flops_per_second[MP_DTYPE_FP32] : 0;
	double ds_bw = ds ? ds->hw.memory_bandwidth_bytes_per_second : 0;

	o = cJSON_AddObjectToObject(res, "intensity");
	mpc_add_num(o, "bytes", r->intensity_bytes);
	cJSON_AddStringToObject(o, "note",
	                        "a read-only stream doing M fp32 FMAs per 16-byte element; roof = "
	                        "min(fp32 peak, intensity x bandwidth) from this run's FMA peak and "
	                        "profile bandwidth, and from the datasheet");
	a = cJSON_AddArrayToObject(o, "points");
	for (int k = 0; k < MP_CALIB_INTENSITY_COUNT; k++) {
		const mp_calib_intensity_point *ip = &r->intensity[k];
		double roof = 0, dsroof = 0;

		p = cJSON_CreateObject();
		mpc_add_num(p, "flops_per_byte", ip->flops_per_byte);
		mpc_add_item(p, "rate", stat_json(&ip->flops_per_second, "flops_per_second"));
		if (peak > 0 && bw > 0) {
			roof = fmin(peak, ip->flops_per_byte * bw);
			mpc_add_num(p, "roof_flops_per_second", roof);
			add_ratio(p, "measured_over_roof", ip->flops_per_second.median, roof);
			cJSON_AddStringToObject(p, "bound",
			                        ip->flops_per_byte * bw < peak ? "memory" : "compute");
		} else {
			cJSON_AddNullToObject(p, "roof_flops_per_second");
			cJSON_AddNullToObject(p, "measured_over_roof");
		}
		if (ds_peak > 0 && ds_bw > 0) {
			dsroof = fmin(ds_peak, ip->flops_per_byte * ds_bw);
			mpc_add_num(p, "datasheet_roof_flops_per_second", dsroof);
			add_ratio(p, "measured_over_datasheet_roof", ip->flops_per_second.median, dsroof);
		}
		mpc_append(a, p);
	}
}

/* results.fit */
static void fit_json(cJSON *res, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	const mps_calib_request *rq = c->rq;
	cJSON *o, *p;

	uint64_t cap = r->fit_total_bytes;
	bool predicted = rq->fit_total_bytes <= cap;
	double pred_headroom = (double)cap - (double)rq->fit_total_bytes;

	o = cJSON_AddObjectToObject(res, "fit");
	p = cJSON_AddObjectToObject(o, "plan");
	mpc_add_num(p, "weights_bytes", rq->fit_weights_bytes);
	mpc_add_num(p, "kv_cache_bytes", rq->fit_kv_cache_bytes);
	mpc_add_num(p, "workspace_bytes", rq->fit_workspace_bytes);
	mpc_add_num(p, "overhead_bytes", rq->fit_overhead_bytes);
	mpc_add_num(p, "total_bytes", rq->fit_total_bytes);
	mpc_add_num(o, "capacity_bytes", cap);
	cJSON_AddBoolToObject(o, "predicted_fits", predicted);
	mpc_add_num(o, "predicted_headroom_bytes", pred_headroom);
	mpc_add_num(o, "allocated_bytes", r->fit_requested_bytes);
	cJSON_AddBoolToObject(o, "allocated", r->fit_allocated);
	if (r->fit_failed_part[0])
		cJSON_AddStringToObject(o, "failed_part", r->fit_failed_part);
	else
		cJSON_AddNullToObject(o, "failed_part");
	mpc_add_num(o, "free_before_bytes", r->fit_free_before_bytes);
	if (r->fit_allocated) {
		mpc_add_num(o, "real_headroom_bytes", r->fit_free_after_bytes);
		mpc_add_num(o, "headroom_error_bytes", (double)r->fit_free_after_bytes - pred_headroom);
	} else {
		cJSON_AddNullToObject(o, "real_headroom_bytes");
		cJSON_AddNullToObject(o, "headroom_error_bytes");
	}
	cJSON_AddBoolToObject(o, "verdict_held", predicted == r->fit_allocated);
	cJSON_AddStringToObject(o, "note",
	                        "weights, KV cache and workspace each cudaMalloc'ed and written in "
	                        "this process (whose CUDA context is the plan's overhead), then freed; "
	                        "real headroom is cudaMemGetInfo free with everything allocated");
}

static cJSON *gpu_results_json(const mp_calib_gpu_results *r, const mps_calib_gpu_figures *fig,
                               const mps_calib_request *rq, const mp_store_device *ds, const mp_store_device *profile)
{
	cJSON *res = cJSON_CreateObject();
	uint32_t done = r->suites_done;
	const gpu_ctx c = { r, fig, rq, ds, profile };

	if (res == NULL)
		return NULL;
	if (done & MP_CALIB_MEMORY)
		memory_json(res, &c);
	if (done & MP_CALIB_HBM)
		hbm_json(res, &c);
	if (done & MP_CALIB_STRIDED)
		strided_json(res, &c);
	if (done & MP_CALIB_L2)
		l2_json(res, &c);
	if (done & MP_CALIB_SMEM)
		smem_json(res, &c);
	if (done & MP_CALIB_FMA)
		fma_json(res, &c);
	if (done & MP_CALIB_MATMUL)
		matmul_json(res, &c);
	if (done & MP_CALIB_LATENCY)
		latency_json(res, &c);
	if (done & MP_CALIB_INTENSITY)
		intensity_json(res, &c);
	if (done & MP_CALIB_FIT)
		fit_json(res, &c);
	return res;
}

/* The finished GPU run's members: device, results, suite_seconds, ratios, targets; warnings into warnings. */
static void gpu_parts(cJSON *doc, cJSON *warnings, const mps_calib_job *job)
{
	const mp_calib_gpu_results *r = job->gpu;
	const mps_calib_request *rq = &job->rq;
	const mp_store_device *datasheet = job->have_datasheet ? &job->datasheet : NULL;
	const mp_store_device *profile = &job->profile;
	const mp_device *dh = datasheet ? &datasheet->hw : NULL;
	bool have_profile = job->have_profile;
	const mps_calib_gpu_figures *fig = &job->gpu_figures;
	double bw = fig->memory_bandwidth_bytes_per_second, elapsed_seconds = job->elapsed_seconds;
	cJSON *ratios, *peaks, *targets, *secs;

	mpc_add_item(doc, "device", gpu_device_json(&r->info, fig));
	mpc_add_item(doc, "results", gpu_results_json(r, fig, rq, datasheet, have_profile ? profile : NULL));
	secs = cJSON_AddObjectToObject(doc, "suite_seconds");
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (r->suites_done & (1u << i))
			mpc_add_num(secs, mp_calib_suite_name(1u << i), r->suite_seconds[i]);

	if (dh) {
		ratios = cJSON_AddObjectToObject(doc, "ratios");
		add_ratio(ratios, "memory_bandwidth_bytes_per_second", bw, dh->memory_bandwidth_bytes_per_second);
		peaks = cJSON_AddObjectToObject(ratios, "peak_flops_per_second");
		add_ratio(peaks, "fp32", (r->suites_done & MP_CALIB_FMA) ? r->fma_fp32.best : 0,
		          dh->peak_flops_per_second[MP_DTYPE_FP32]);
		for (size_t i = 0; i < N_MATMUL; i++)
			add_ratio(peaks, mp_dtype_name(matmul_types[i]), fig->matmul_peak_flops_per_second[matmul_types[i]],
			          dh->peak_flops_per_second[matmul_types[i]]);
		add_ratio(ratios, "memory_bytes", (double)r->info.memory_bytes, (double)dh->memory_bytes);
	} else {
		cJSON_AddNullToObject(doc, "ratios");
	}

	targets = cJSON_AddArrayToObject(doc, "targets");
	add_target(targets, "copy_over_memcpy_d2d", "HBM copy kernel / cudaMemcpy device-to-device, same run",
	           r->memcpy_d2d.best > 0 ? r->copy.best / r->memcpy_d2d.best : 0,
	           (r->suites_done & MP_CALIB_HBM) && r->memcpy_d2d.best > 0, 0.95, true);
	add_target(targets, "fma_fp32_over_datasheet", "FP32 FMA kernel / the datasheet fp32 peak",
	           dh && dh->peak_flops_per_second[MP_DTYPE_FP32] > 0
	               ? r->fma_fp32.best / dh->peak_flops_per_second[MP_DTYPE_FP32]
	               : 0,
	           (r->suites_done & MP_CALIB_FMA) && dh && dh->peak_flops_per_second[MP_DTYPE_FP32] > 0, 0.95, true);
	add_target(targets, "bf16_cublaslt_over_cublas", "cuBLASLt bf16 / cublasGemmEx bf16 at the same size, same run",
	           r->cublas_bf16.flops_per_second.best > 0
	               ? fig->matmul_peak_flops_per_second[MP_DTYPE_BF16] / r->cublas_bf16.flops_per_second.best
	               : 0,
	           fig->matmul_peak_flops_per_second[MP_DTYPE_BF16] > 0 && r->cublas_bf16.flops_per_second.best > 0, 0.95, true);
	add_target(targets, "default_suite_seconds", "wall time of the run (the target applies to the default suite)",
	           elapsed_seconds, rq->suites == 0 || rq->suites == MP_CALIB_GPU_DEFAULT, 20.0, false);

	if (!have_profile)
		mpc_append(warnings, cJSON_CreateString("no profile stored: the memory bandwidth was not "
		                                                  "measured (add the hbm suite) and no earlier profile "
		                                                  "or datasheet gives one"));
	if (datasheet == NULL)
		mpc_append(warnings, cJSON_CreateString("no datasheet profile matches this GPU's name: no "
		                                                  "measured/datasheet ratios"));
	for (size_t i = 0; i < N_MATMUL; i++) {
		const mp_calib_matmul *m = &r->matmul[matmul_types[i]];

		if ((r->suites_done & MP_CALIB_MATMUL) && m->status[0]) {
			char w[256];

			snprintf(w, sizeof(w), "matmul %s: %s", mp_dtype_name(matmul_types[i]), m->status);
			mpc_append(warnings, cJSON_CreateString(w));
		}
	}
	}

/* The finished CPU run's members. */
static void cpu_parts(cJSON *doc, cJSON *warnings, const mps_calib_job *job)
{
	const mp_calib_cpu_results *r = job->cpu;
	bool have_profile = job->have_profile;
	double over_llc = r->info.llc_bytes ? (double)r->array_bytes / (double)r->info.llc_bytes : 0;
	cJSON *dev, *res, *o, *p, *secs;

	dev = cJSON_AddObjectToObject(doc, "device");
	cJSON_AddStringToObject(dev, "name", r->info.name);
	cJSON_AddStringToObject(dev, "vendor", r->info.vendor);
	cJSON_AddStringToObject(dev, "architecture", r->info.architecture);
	mpc_add_num(dev, "threads", r->info.threads);
	mpc_add_num(dev, "llc_bytes", r->info.llc_bytes);
	mpc_add_num(dev, "memory_bytes", r->info.memory_bytes);
	mpc_add_num(dev, "available_bytes", r->info.available_bytes);
	cJSON_AddStringToObject(dev, "blas", r->info.blas);

	res = cJSON_AddObjectToObject(doc, "results");
	if (r->suites_done & MP_CALIB_STREAM) {
		o = cJSON_AddObjectToObject(res, "stream");
		mpc_add_num(o, "array_bytes", r->array_bytes);
		mpc_add_num(o, "threads", r->threads);
		add_stat(o, "triad", &r->triad, "bytes_per_second");
		if (over_llc > 0)
			mpc_add_num(o, "array_over_llc", over_llc);
		else
			cJSON_AddNullToObject(o, "array_over_llc");
		cJSON_AddStringToObject(o, "note", "a = b + s c, doubles, 24 bytes per element (2 reads + 1 write)");
	}
	if (r->suites_done & MP_CALIB_GEMM) {
		o = cJSON_AddObjectToObject(res, "gemm");
		mpc_add_num(o, "size", r->matrix_size);
		cJSON_AddStringToObject(o, "blas", r->info.blas);
		p = add_stat(o, "dgemm", &r->dgemm, "flops_per_second");
		if (cJSON_IsObject(p))
			mpc_add_num(p, "relative_error", r->dgemm_rel_error);
		p = add_stat(o, "sgemm", &r->sgemm, "flops_per_second");
		if (cJSON_IsObject(p))
			mpc_add_num(p, "relative_error", r->sgemm_rel_error);
	}
	secs = cJSON_AddObjectToObject(doc, "suite_seconds");
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (r->suites_done & (1u << i))
			mpc_add_num(secs, mp_calib_suite_name(1u << i), r->suite_seconds[i]);
	cJSON_AddNullToObject(doc, "ratios");
	cJSON_AddArrayToObject(doc, "targets");
	if ((r->suites_done & MP_CALIB_STREAM) && r->info.llc_bytes && r->array_bytes < 4 * r->info.llc_bytes) {
		char w[320];

		snprintf(
		    w, sizeof(w),
		    "each triad array (%.1f MiB) is less than 4x the last-level cache the OS reports (%.1f MiB): the "
		    "bandwidth may include cache hits (a virtual machine may report the host's whole cache)",
		    (double)r->array_bytes / 1048576.0, (double)r->info.llc_bytes / 1048576.0);
		mpc_append(warnings, cJSON_CreateString(w));
	}
	if (!have_profile)
		mpc_append(warnings, cJSON_CreateString("no profile stored: the memory bandwidth was not "
		                                                  "measured (add the stream suite)"));
	}

static cJSON *error_json(const mps_calib_job *job)
{
	cJSON *e;

	if (job->error_status[0] == '\0')
		return cJSON_CreateNull();
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "status", job->error_status);
	cJSON_AddStringToObject(e, "message", job->error_message);
	return e;
}

/* A past job: the record the store kept, with the row's columns as the truth. */
static cJSON *stored_json(const mps_calib_job *job)
{
	cJSON *doc = cJSON_Parse(job->record);

	if (doc == NULL)
		doc = cJSON_CreateObject();
	if (doc == NULL)
		return NULL;
	mpc_set_item(doc, "id", cJSON_CreateString(job->id));
	mpc_set_item(doc, "target", cJSON_CreateString(job->rq.gpu ? "gpu:0" : "cpu"));
	mpc_set_item(doc, "state", cJSON_CreateString(job->state));
	mpc_set_item(doc, "created_at", cJSON_CreateString(job->created_at));
	mpc_set_item(doc, "finished_at", job->finished_at[0] ? cJSON_CreateString(job->finished_at) : cJSON_CreateNull());
	mpc_set_item(doc, "device_id", job->device_id[0] ? cJSON_CreateString(job->device_id) : cJSON_CreateNull());
	mpc_set_item(doc, "datasheet_id", job->datasheet_id[0] ? cJSON_CreateString(job->datasheet_id) : cJSON_CreateNull());
	if (strcmp(job->error_status, "interrupted") == 0)
		mpc_set_item(doc, "error", error_json(job));
	return doc;
}

cJSON *mpc_calib_job_json(const mps_calib_job *job)
{
	const mps_calib_request *rq = &job->rq;
	uint32_t suites = rq->suites ? rq->suites : rq->gpu ? MP_CALIB_GPU_DEFAULT : MP_CALIB_CPU_DEFAULT;
	cJSON *o, *p, *warnings;

	if (job->record)
		return stored_json(job);
	o = cJSON_CreateObject();
	warnings = cJSON_CreateArray();
	if (o == NULL || warnings == NULL) {
		cJSON_Delete(o);
		cJSON_Delete(warnings);
		return NULL;
	}
	cJSON_AddStringToObject(o, "id", job->id);
	cJSON_AddStringToObject(o, "target", rq->gpu ? "gpu:0" : "cpu");
	cJSON_AddStringToObject(o, "state", job->state);
	mpc_add_item(o, "suites", mpc_calib_suites_json(suites));
	p = cJSON_AddObjectToObject(o, "options");
	if (rq->runs)
		mpc_add_num(p, "runs", rq->runs);
	if (rq->array_bytes)
		mpc_add_u64(p, "array_bytes", rq->array_bytes);
	if (rq->matrix_size)
		mpc_add_num(p, "matrix_size", rq->matrix_size);
	if (rq->threads)
		mpc_add_num(p, "threads", rq->threads);
	p = cJSON_AddObjectToObject(o, "progress");
	mpc_add_num(p, "percent", job->percent);
	mpc_add_str_or_null(p, "current_suite", job->suite);
	cJSON_AddBoolToObject(o, "cancel_requested", job->cancel_requested);
	cJSON_AddStringToObject(o, "created_at", job->created_at);
	mpc_add_str_or_null(o, "started_at", job->started_at);
	mpc_add_str_or_null(o, "finished_at", job->finished_at);
	mpc_add_num(o, "elapsed_seconds", job->elapsed_seconds);
	mpc_add_str_or_null(o, "device_id", job->device_id);
	mpc_add_str_or_null(o, "datasheet_id", job->datasheet_id);
	if (job->have_results && job->gpu) {
		gpu_parts(o, warnings, job);
	} else if (job->have_results && job->cpu) {
		cpu_parts(o, warnings, job);
	} else {
		cJSON_AddNullToObject(o, "device");
		cJSON_AddNullToObject(o, "results");
	}
	mpc_add_item(o, "warnings", warnings);
	mpc_add_item(o, "error", error_json(job));
	return o;
}

char *mpc_calib_job_text(const mps_calib_job *job)
{
	cJSON *doc = mpc_calib_job_json(job);
	char *text = doc ? mpc_print(doc, false) : NULL;
	char *out = text ? strdup(text) : NULL; /* the caller frees with free() */

	cJSON_free(text);
	cJSON_Delete(doc);
	return out;
}

/* ----- the CLI's table: drawn from a document built here, never from a printed one ----------------------- */

static double jnum(const cJSON *o, const char *path)
{
	char key[64];
	const char *p = path;

	while (o && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		o = cJSON_GetObjectItemCaseSensitive(o, key);
		p += n;
		if (*p == '.')
			p++;
	}
	if (cJSON_IsRaw(o) && o->valuestring) /* exact digits (json.h) */
		return strtod(o->valuestring, NULL);
	return cJSON_IsNumber(o) ? o->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "4.26 TB/s", "812 GB/s", "65.1 TFLOP/s", "180 ns": decimal prefixes, as the unit says, three significant figures
 * kept ("1.20 TB/s", not "1.2"), by the rules every answer for people uses (codec/human.c). */
static void human(char *buf, size_t len, double v, const char *unit)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (strcmp(unit, "s") == 0)
		mpc_fmt_seconds(buf, len, v);
	else
		mpc_fmt_si(buf, len, v, unit);
}

/* One figure: best and median, and the ratio its row compares (NAN: none, the column left blank). */
static void row(FILE *f, const char *label, const cJSON *stat, const char *key_unit, const char *unit, double ratio)
{
	char k1[64], k2[64], b[32], m[32], r[16] = "";

	snprintf(k1, sizeof(k1), "best_%s", key_unit);
	snprintf(k2, sizeof(k2), "median_%s", key_unit);
	human(b, sizeof(b), jnum(stat, k1), unit);
	human(m, sizeof(m), jnum(stat, k2), unit);
	if (isfinite(ratio))
		snprintf(r, sizeof(r), "%.3f", ratio);
	fprintf(f, "  %-44s %14s %14s %8s\n", label, b, m, r);
}

/* The same without the ratio column (the CPU suites have no datasheet to compare with). */
static void row2(FILE *f, const char *label, const cJSON *stat, const char *key_unit, const char *unit)
{
	char k1[64], k2[64], b[32], m[32];

	snprintf(k1, sizeof(k1), "best_%s", key_unit);
	snprintf(k2, sizeof(k2), "median_%s", key_unit);
	human(b, sizeof(b), jnum(stat, k1), unit);
	human(m, sizeof(m), jnum(stat, k2), unit);
	fprintf(f, "  %-44s %14s %14s\n", label, b, m);
}

/* A string for printf: "?" for a member that is absent or not a string (a failed job has no device name). */
static const char *shown(const char *s)
{
	return s ? s : "?";
}

/* The GPU suites' rows. */
static void table_gpu(FILE *f, const cJSON *res)
{
	const cJSON *o, *e;
	char label[96], b1[32], b2[32];

	if ((o = cJSON_GetObjectItem(res, "memory")) != NULL) {
		human(b1, sizeof(b1), jnum(o, "total_bytes"), "B");
		human(b2, sizeof(b2), jnum(o, "context_bytes"), "B");
		fprintf(f, "  %-44s %14s %14s\n", "memory total / context (cudaMemGetInfo)", b1, b2);
	}
	if ((o = cJSON_GetObjectItem(res, "hbm")) != NULL) {
		double md = jnum(o, "memcpy_d2d.best_bytes_per_second");

		row(f, "HBM cudaMemcpy D2D (read + write)", cJSON_GetObjectItem(o, "memcpy_d2d"), "bytes_per_second",
		    "B/s", NAN);
		row(f, "HBM copy kernel, 16-byte accesses (/ memcpy)", cJSON_GetObjectItem(o, "copy"),
		    "bytes_per_second", "B/s", jnum(o, "copy.best_bytes_per_second") / md);
		row(f, "HBM read", cJSON_GetObjectItem(o, "read"), "bytes_per_second", "B/s", NAN);
		row(f, "HBM write", cJSON_GetObjectItem(o, "write"), "bytes_per_second", "B/s", NAN);
		row(f, "HBM triad", cJSON_GetObjectItem(o, "triad"), "bytes_per_second", "B/s", NAN);
	}
	if ((o = cJSON_GetObjectItem(res, "strided")) != NULL)
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "points"))
		{
			snprintf(label, sizeof(label), "strided read, stride %g (useful bytes)", jnum(e, "stride"));
			row(f, label, cJSON_GetObjectItem(e, "useful"), "bytes_per_second", "B/s",
			    jnum(e, "fraction_of_stride_1"));
		}
	if ((o = cJSON_GetObjectItem(res, "l2")) != NULL) {
		human(b1, sizeof(b1), jnum(o, "working_set_bytes"), "B");
		snprintf(label, sizeof(label), "L2 read, %s working set (/ HBM read)", b1);
		row(f, label, cJSON_GetObjectItem(o, "read"), "bytes_per_second", "B/s", jnum(o, "over_hbm_read"));
	}
	if ((o = cJSON_GetObjectItem(res, "smem")) != NULL) {
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "points"))
		{
			snprintf(label, sizeof(label), "shared memory, stride %g words (%g-way)",
			         jnum(e, "stride_words"), jnum(e, "bank_conflict_ways"));
			row(f, label, cJSON_GetObjectItem(e, "read"), "bytes_per_second", "B/s", NAN);
		}
		row(f, "shared memory, 32x33 padded tile by column (x)",
		    cJSON_GetObjectItem(o, "tile_32x33_column_padded"), "bytes_per_second", "B/s",
		    jnum(o, "padding_speedup"));
	}
	if ((o = cJSON_GetObjectItem(res, "fma")) != NULL)
		row(f, "FP32 FMA (/ datasheet)", cJSON_GetObjectItem(o, "fp32"), "flops_per_second", "FLOP/s",
		    jnum(o, "fp32_over_datasheet"));
	if ((o = cJSON_GetObjectItem(res, "matmul")) != NULL) {
		const cJSON *lt = cJSON_GetObjectItem(o, "cublaslt");

		cJSON_ArrayForEach(e, lt)
		{
			snprintf(label, sizeof(label), "matmul %s cuBLASLt %g^3 (/ datasheet)", e->string,
			         jnum(o, "size"));
			row(f, label, cJSON_GetObjectItem(e, "rate"), "flops_per_second", "FLOP/s",
			    jnum(e, "over_datasheet"));
			if (jstr(e, "status"))
				fprintf(f, "    %s\n", jstr(e, "status"));
		}
		row(f, "matmul bf16 cublasGemmEx (reference)",
		    cJSON_GetObjectItem(cJSON_GetObjectItem(o, "cublas_bf16"), "rate"), "flops_per_second", "FLOP/s",
		    NAN);
	}
	if ((o = cJSON_GetObjectItem(res, "latency")) != NULL) {
		human(b1, sizeof(b1), jnum(o, "hbm.span_bytes"), "B");
		snprintf(label, sizeof(label), "latency, pointer chase over %s (HBM)", b1);
		row(f, label, cJSON_GetObjectItem(cJSON_GetObjectItem(o, "hbm"), "load"), "seconds", "s", NAN);
		human(b1, sizeof(b1), jnum(o, "l2.span_bytes"), "B");
		snprintf(label, sizeof(label), "latency, pointer chase over %s (L2)", b1);
		row(f, label, cJSON_GetObjectItem(cJSON_GetObjectItem(o, "l2"), "load"), "seconds", "s", NAN);
		human(b1, sizeof(b1), jnum(o, "littles_law.bytes_in_flight"), "B");
		human(b2, sizeof(b2), jnum(o, "littles_law.bytes_in_flight_per_sm"), "B");
		fprintf(f, "  %-44s %14s %14s\n", "Little's law: bytes in flight (total, per SM)", b1, b2);
	}
	if ((o = cJSON_GetObjectItem(res, "intensity")) != NULL)
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "points"))
		{
			snprintf(label, sizeof(label), "intensity %g FLOP/B (measured / roof)",
			         jnum(e, "flops_per_byte"));
			row(f, label, cJSON_GetObjectItem(e, "rate"), "flops_per_second", "FLOP/s",
			    jnum(e, "measured_over_roof"));
		}
	if ((o = cJSON_GetObjectItem(res, "fit")) != NULL) {
		human(b1, sizeof(b1), jnum(o, "predicted_headroom_bytes"), "B");
		human(b2, sizeof(b2), jnum(o, "real_headroom_bytes"), "B");
		fprintf(f, "  fit check: predicted %s, allocation %s, verdict %s; headroom predicted %s, real %s\n",
		        cJSON_IsTrue(cJSON_GetObjectItem(o, "predicted_fits")) ? "fits" : "does not fit",
		        cJSON_IsTrue(cJSON_GetObjectItem(o, "allocated")) ? "succeeded" : "failed",
		        cJSON_IsTrue(cJSON_GetObjectItem(o, "verdict_held")) ? "held" : "DID NOT HOLD", b1, b2);
	}
}

/* The CPU suites' rows. */
static void table_cpu(FILE *f, const cJSON *res)
{
	const cJSON *o;
	char label[96], b1[32];

	if ((o = cJSON_GetObjectItem(res, "stream")) != NULL) {
		human(b1, sizeof(b1), jnum(o, "array_bytes"), "B");
		snprintf(label, sizeof(label), "STREAM triad, %g thread%s, 3 x %s arrays", jnum(o, "threads"),
			 jnum(o, "threads") == 1 ? "" : "s", b1);
		row2(f, label, cJSON_GetObjectItem(o, "triad"), "bytes_per_second", "B/s");
	}
	if ((o = cJSON_GetObjectItem(res, "gemm")) != NULL) {
		snprintf(label, sizeof(label), "dgemm (fp64) n = %g", jnum(o, "size"));
		row2(f, label, cJSON_GetObjectItem(o, "dgemm"), "flops_per_second", "FLOP/s");
		snprintf(label, sizeof(label), "sgemm (fp32) n = %g", jnum(o, "size"));
		row2(f, label, cJSON_GetObjectItem(o, "sgemm"), "flops_per_second", "FLOP/s");
	}
}

/* Measured / datasheet, the bench targets and the warnings. */
static void table_summary(FILE *f, const cJSON *doc, const char *dsid)
{
	const cJSON *o, *a, *e;

	o = cJSON_GetObjectItem(doc, "ratios");
	if (cJSON_IsObject(o)) {
		fprintf(f, "\n  measured / datasheet (%s):", dsid ? dsid : "?");
		if (isfinite(jnum(o, "memory_bandwidth_bytes_per_second")))
			fprintf(f, " bandwidth %.3f", jnum(o, "memory_bandwidth_bytes_per_second"));
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "peak_flops_per_second")) if (cJSON_IsNumber(e) || cJSON_IsRaw(e))
		    fprintf(f, ", %s %.3f", e->string, jnum(e, ""));
		fprintf(f, "\n");
	}
	a = cJSON_GetObjectItem(doc, "targets");
	if (cJSON_GetArraySize(a) > 0) {
		fprintf(f, "\n  %-44s %14s %14s %8s\n", "target", "value", "limit", "met");
		cJSON_ArrayForEach(e, a)
		{
			const cJSON *met = cJSON_GetObjectItem(e, "met");
			double lim = jnum(e, "minimum");
			char v[32], l[32];

			snprintf(v, sizeof(v), "%.3f", jnum(e, "value"));
			if (isfinite(lim))
				snprintf(l, sizeof(l), ">= %.2f", lim);
			else
				snprintf(l, sizeof(l), "<= %.0f", jnum(e, "maximum"));
			fprintf(f, "  %-44s %14s %14s %8s\n", shown(jstr(e, "name")), isfinite(jnum(e, "value")) ? v : "-", l,
			        cJSON_IsBool(met) ? (cJSON_IsTrue(met) ? "yes" : "NO") : "-");
		}
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "warnings")) if (cJSON_IsString(e))
	    fprintf(f, "  warning: %s\n", e->valuestring);
	fprintf(f, "\n  (B/s and FLOP/s with decimal prefixes: 1 TB/s = 1e12 bytes per second)\n");
}

static void print_table(FILE *f, const cJSON *doc)
{
	const cJSON *dev = cJSON_GetObjectItem(doc, "device"), *res = cJSON_GetObjectItem(doc, "results"), *e;
	const char *dsid = jstr(doc, "datasheet_id"), *devid = jstr(doc, "device_id");

	fprintf(f, "\n%s (%s): job %s, %s, %.1f s\n", shown(jstr(dev, "name")), shown(jstr(doc, "target")),
		shown(jstr(doc, "id")), shown(jstr(doc, "state")), jnum(doc, "elapsed_seconds"));
	if (devid)
		fprintf(f, "profile stored: %s%s%s\n", devid, dsid ? ", compared with datasheet " : "",
		        dsid ? dsid : "");
	e = cJSON_GetObjectItem(doc, "error");
	if (cJSON_IsObject(e))
		fprintf(f, "error: %s\n", shown(jstr(e, "message")));
	if (!cJSON_IsObject(res))
		return;
	/* the ratio column where a row compares (the GPU suites: against the datasheet, memcpy, stride 1, ...) */
	if (jstr(doc, "target") && strcmp(jstr(doc, "target"), "cpu") == 0)
		fprintf(f, "\n  %-44s %14s %14s\n", "figure", "best", "median");
	else
		fprintf(f, "\n  %-44s %14s %14s %8s\n", "figure", "best", "median", "ratio");
	table_gpu(f, res);
	table_cpu(f, res);
	table_summary(f, doc, dsid);
}

void mpc_calib_print_table(FILE *f, const mps_calib_job *job)
{
	cJSON *doc = mpc_calib_job_json(job);

	if (doc == NULL) {
		fprintf(f, "out of memory\n");
		return;
	}
	print_table(f, doc);
	cJSON_Delete(doc);
}
