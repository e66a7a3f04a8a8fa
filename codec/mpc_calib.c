/*
 * mpc_calib.c: calibration jobs both ways (see mpc_calib.h): the request, and two renderings of the job's structs (the
 * kernels' figures, the ratios against the datasheet, the bench targets, the warnings): its document, which is
 * also the record the store keeps, and the CLI's table. Encoding only: no threads, no store, no hardware.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "mpc_calib.h"

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

/* key: {"best_<unit>", "median_<unit>", "runs"}, left open for more members (true), or null when not measured
 * (false). */
static bool stat_open(mpc_out *w, const char *key, const mp_calib_stat *s, const char *unit)
{
	char k[64];

	if (s->runs == 0) {
		mpc_w_null(w, key);
		return false;
	}
	mpc_w_obj(w, key);
	snprintf(k, sizeof(k), "best_%s", unit);
	mpc_w_num(w, k, s->best);
	snprintf(k, sizeof(k), "median_%s", unit);
	mpc_w_num(w, k, s->median);
	mpc_w_num(w, "runs", s->runs);
	return true;
}

static void stat_write(mpc_out *w, const char *key, const mp_calib_stat *s, const char *unit)
{
	if (stat_open(w, key, s, unit))
		mpc_w_end(w);
}

/* num / den, or NaN when either is not a figure: the JSON writes null, the table "". */
static double ratio_of(double num, double den)
{
	return num > 0 && den > 0 ? num / den : NAN;
}

static void ratio_write(mpc_out *w, const char *k, double num, double den)
{
	double r = ratio_of(num, den);

	if (isnan(r))
		mpc_w_null(w, k);
	else
		mpc_w_num(w, k, r);
}

static void device_info_write(mpc_out *w, const mp_calib_gpu_info *in, const mps_calib_gpu_figures *fig)
{
	char cc[16];

	mpc_w_obj(w, "device");
	mpc_w_str(w, "name", in->name);
	mpc_w_num(w, "memory_bytes", in->memory_bytes);
	mpc_w_num(w, "free_bytes", in->free_bytes);
	mpc_w_num(w, "sm_count", in->sm_count);
	mpc_w_num(w, "l2_cache_bytes", in->l2_cache_bytes);
	snprintf(cc, sizeof(cc), "%d.%d", in->cc_major, in->cc_minor);
	mpc_w_str(w, "compute_capability", cc);
	mpc_w_str(w, "architecture", fig->architecture ? fig->architecture : "unknown");
	mpc_w_num(w, "clock_hz", in->clock_hz);
	mpc_w_num(w, "shared_memory_per_sm_bytes", in->shared_memory_per_sm_bytes);
	mpc_w_num(w, "driver_version", in->driver_version);
	mpc_w_num(w, "runtime_version", in->runtime_version);
	mpc_w_end(w);
}

static const mp_dtype matmul_types[] = {MP_DTYPE_BF16, MP_DTYPE_FP16, MP_DTYPE_TF32, MP_DTYPE_FP8_E4M3};
#define N_MATMUL (sizeof(matmul_types) / sizeof(matmul_types[0]))

/* What the results encoders and the table read: the run, the request, the datasheet and the profile (either may be
 * NULL). The figures each derives (a ratio, a roof, Little's law) come from one function here, so the JSON and the
 * table cannot differ. */
typedef struct gpu_ctx {
	const mp_calib_gpu_results *r;
	const mps_calib_gpu_figures *fig;
	const mps_calib_request *rq;
	const mp_store_device *ds, *profile;
} gpu_ctx;

static double ds_peak(const gpu_ctx *c, mp_dtype t)
{
	return c->ds ? c->ds->hw.peak_flops_per_second[t] : 0;
}

/* Little's law at the measured HBM latency and the profile's bandwidth (0 when either is missing). */
static double bytes_in_flight(const gpu_ctx *c)
{
	double bw = c->profile ? c->profile->hw.memory_bandwidth_bytes_per_second : 0, lat = c->r->latency_hbm.median;

	return bw > 0 && lat > 0 ? bw * lat : 0;
}

/* The roofline of an intensity point from this run's FMA peak and profile bandwidth (0 when either is missing). */
static double intensity_roof(const gpu_ctx *c, const mp_calib_intensity_point *ip, bool *memory_bound)
{
	double peak = (c->r->suites_done & MP_CALIB_FMA) ? c->r->fma_fp32.best : 0;
	double bw = (c->r->suites_done & MP_CALIB_HBM) ? c->fig->memory_bandwidth_bytes_per_second : 0;

	if (memory_bound)
		*memory_bound = ip->flops_per_byte * bw < peak;
	return peak > 0 && bw > 0 ? fmin(peak, ip->flops_per_byte * bw) : 0;
}

/* The fit check's predicted headroom: the capacity less the plan's total. */
static double predicted_headroom(const gpu_ctx *c)
{
	return (double)c->r->fit_total_bytes - (double)c->rq->fit_total_bytes;
}

/* results.memory */
static void memory_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;

	mpc_w_obj(w, "memory");
	mpc_w_num(w, "total_bytes", r->info.memory_bytes);
	mpc_w_num(w, "free_bytes", r->info.free_bytes);
	mpc_w_num(w, "context_bytes", r->context_bytes);
	mpc_w_lit(w, "note",
		  "cudaMemGetInfo right after context creation; context_bytes = total - free, which "
		  "also counts memory other processes held at that moment");
	mpc_w_end(w);
}

/* results.hbm */
static void hbm_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;

	mpc_w_obj(w, "hbm");
	mpc_w_num(w, "array_bytes", r->array_bytes);
	mpc_w_num(w, "access_bytes", 16);
	stat_write(w, "memcpy_d2d", &r->memcpy_d2d, "bytes_per_second");
	if (stat_open(w, "copy", &r->copy, "bytes_per_second")) {
		mpc_w_num(w, "loads_in_flight_per_thread", r->copy_unroll);
		mpc_w_num(w, "blocks", r->copy_blocks);
		mpc_w_end(w);
	}
	stat_write(w, "read", &r->read, "bytes_per_second");
	stat_write(w, "write", &r->write, "bytes_per_second");
	stat_write(w, "triad", &r->triad, "bytes_per_second");
	mpc_w_lit(w, "note",
		  "bytes read + bytes written per second; copy and triad use the "
		  "grid and loads in flight that won a tuning sweep in the same run");
	mpc_w_end(w);
}

/* results.strided */
static void strided_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;

	mpc_w_obj(w, "strided");
	mpc_w_num(w, "element_bytes", 4);
	mpc_w_arr(w, "points");
	for (int k = 0; k < MP_CALIB_STRIDE_COUNT; k++) {
		mpc_w_obj(w, NULL);
		mpc_w_num(w, "stride", 1u << k);
		stat_write(w, "useful", &r->strided[k], "bytes_per_second");
		ratio_write(w, "fraction_of_stride_1", r->strided[k].best, r->strided[0].best);
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

/* results.l2 */
static void l2_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;

	mpc_w_obj(w, "l2");
	mpc_w_num(w, "working_set_bytes", r->l2_working_set_bytes);
	stat_write(w, "read", &r->l2_read, "bytes_per_second");
	ratio_write(w, "over_hbm_read", r->l2_read.best, r->read.best);
	mpc_w_end(w);
}

/* results.smem */
static void smem_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;

	mpc_w_obj(w, "smem");
	mpc_w_arr(w, "points");
	for (int k = 0; k < MP_CALIB_SMEM_STRIDE_COUNT; k++) {
		mpc_w_obj(w, NULL);
		mpc_w_num(w, "stride_words", 1u << k);
		mpc_w_num(w, "bank_conflict_ways", 1u << k);
		stat_write(w, "read", &r->smem[k], "bytes_per_second");
		mpc_w_end(w);
	}
	mpc_w_end(w);
	stat_write(w, "tile_32x32_column", &r->smem_tile_column, "bytes_per_second");
	stat_write(w, "tile_32x33_column_padded", &r->smem_tile_padded, "bytes_per_second");
	ratio_write(w, "padding_speedup", r->smem_tile_padded.best, r->smem_tile_column.best);
	if (r->info.clock_hz > 0 && r->info.sm_count > 0)
		mpc_w_num(w, "best_bytes_per_clock_per_sm", r->smem[0].best / r->info.clock_hz / r->info.sm_count);
	mpc_w_end(w);
}

/* results.fma */
static void fma_write(mpc_out *w, const gpu_ctx *c)
{
	mpc_w_obj(w, "fma");
	stat_write(w, "fp32", &c->r->fma_fp32, "flops_per_second");
	ratio_write(w, "fp32_over_datasheet", c->r->fma_fp32.best, ds_peak(c, MP_DTYPE_FP32));
	mpc_w_end(w);
}

/* results.matmul */
static void matmul_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;

	mpc_w_obj(w, "matmul");
	mpc_w_num(w, "size", r->cublas_bf16.size);
	mpc_w_num(w, "workspace_bytes", r->matmul_workspace_bytes);
	mpc_w_obj(w, "cublaslt");
	for (size_t i = 0; i < N_MATMUL; i++) {
		const mp_calib_matmul *m = &r->matmul[matmul_types[i]];

		mpc_w_obj(w, mp_dtype_name(matmul_types[i]));
		stat_write(w, "rate", &m->flops_per_second, "flops_per_second");
		mpc_w_num(w, "algorithms_tried", m->algos_tried);
		if (m->flops_per_second.runs || m->rel_error > 0)
			mpc_w_num(w, "relative_error", m->rel_error);
		else
			mpc_w_null(w, "relative_error");
		mpc_w_str_or_null(w, "status", m->status);
		ratio_write(w, "over_datasheet", c->fig->matmul_peak_flops_per_second[matmul_types[i]],
			    ds_peak(c, matmul_types[i]));
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_obj(w, "cublas_bf16");
	stat_write(w, "rate", &r->cublas_bf16.flops_per_second, "flops_per_second");
	mpc_w_num(w, "relative_error", r->cublas_bf16.rel_error);
	mpc_w_str_or_null(w, "status", r->cublas_bf16.status);
	mpc_w_end(w);
	mpc_w_lit(w, "note",
		  "m = n = k, A transposed (TN), fp32 accumulation, random inputs in "
		  "[-1, 1); cuBLASLt: fastest of the first heuristic candidates; fp8_e4m3 "
		  "writes bf16; cublas_bf16 is cublasGemmEx with CUBLAS_GEMM_DEFAULT");
	mpc_w_end(w);
}

/* results.latency */
static void latency_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	double inflight = bytes_in_flight(c);

	mpc_w_obj(w, "latency");
	mpc_w_obj(w, "hbm");
	mpc_w_num(w, "span_bytes", r->latency_hbm_span_bytes);
	stat_write(w, "load", &r->latency_hbm, "seconds");
	mpc_w_end(w);
	mpc_w_obj(w, "l2");
	mpc_w_num(w, "span_bytes", r->latency_l2_span_bytes);
	stat_write(w, "load", &r->latency_l2, "seconds");
	mpc_w_end(w);
	mpc_w_lit(w, "note",
		  "one thread, a random single cycle over 128-byte lines, loads that "
		  "skip L1; the HBM figure includes TLB misses over its span");
	mpc_w_obj(w, "littles_law");
	if (inflight > 0) {
		mpc_w_num(w, "bandwidth_bytes_per_second", c->profile->hw.memory_bandwidth_bytes_per_second);
		mpc_w_num(w, "latency_seconds", r->latency_hbm.median);
		mpc_w_num(w, "bytes_in_flight", inflight);
		if (r->info.sm_count)
			mpc_w_num(w, "bytes_in_flight_per_sm", inflight / r->info.sm_count);
		mpc_w_lit(w, "note",
			  "bytes that must be in flight to sustain the measured bandwidth "
			  "at the measured HBM latency (bandwidth x latency)");
	} else {
		mpc_w_lit(w, "note", "needs the hbm suite's bandwidth in the same profile");
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

/* results.intensity */
static void intensity_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	double dsp = ds_peak(c, MP_DTYPE_FP32), ds_bw = c->ds ? c->ds->hw.memory_bandwidth_bytes_per_second : 0;

	mpc_w_obj(w, "intensity");
	mpc_w_num(w, "bytes", r->intensity_bytes);
	mpc_w_lit(w, "note",
		  "a read-only stream doing M fp32 FMAs per 16-byte element; roof = "
		  "min(fp32 peak, intensity x bandwidth) from this run's FMA peak and "
		  "profile bandwidth, and from the datasheet");
	mpc_w_arr(w, "points");
	for (int k = 0; k < MP_CALIB_INTENSITY_COUNT; k++) {
		const mp_calib_intensity_point *ip = &r->intensity[k];
		bool memory_bound = false;
		double roof = intensity_roof(c, ip, &memory_bound);

		mpc_w_obj(w, NULL);
		mpc_w_num(w, "flops_per_byte", ip->flops_per_byte);
		stat_write(w, "rate", &ip->flops_per_second, "flops_per_second");
		if (roof > 0) {
			mpc_w_num(w, "roof_flops_per_second", roof);
			ratio_write(w, "measured_over_roof", ip->flops_per_second.median, roof);
			mpc_w_lit(w, "bound", memory_bound ? "memory" : "compute");
		} else {
			mpc_w_null(w, "roof_flops_per_second");
			mpc_w_null(w, "measured_over_roof");
		}
		if (dsp > 0 && ds_bw > 0) {
			double dsroof = fmin(dsp, ip->flops_per_byte * ds_bw);

			mpc_w_num(w, "datasheet_roof_flops_per_second", dsroof);
			ratio_write(w, "measured_over_datasheet_roof", ip->flops_per_second.median, dsroof);
		}
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

/* results.fit */
static void fit_write(mpc_out *w, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	const mps_calib_request *rq = c->rq;
	bool predicted = rq->fit_total_bytes <= r->fit_total_bytes;
	double headroom = predicted_headroom(c);

	mpc_w_obj(w, "fit");
	mpc_w_obj(w, "plan");
	mpc_w_num(w, "weights_bytes", rq->fit_weights_bytes);
	mpc_w_num(w, "kv_cache_bytes", rq->fit_kv_cache_bytes);
	mpc_w_num(w, "workspace_bytes", rq->fit_workspace_bytes);
	mpc_w_num(w, "overhead_bytes", rq->fit_overhead_bytes);
	mpc_w_num(w, "total_bytes", rq->fit_total_bytes);
	mpc_w_end(w);
	mpc_w_num(w, "capacity_bytes", r->fit_total_bytes);
	mpc_w_bool(w, "predicted_fits", predicted);
	mpc_w_num(w, "predicted_headroom_bytes", headroom);
	mpc_w_num(w, "allocated_bytes", r->fit_requested_bytes);
	mpc_w_bool(w, "allocated", r->fit_allocated);
	mpc_w_str_or_null(w, "failed_part", r->fit_failed_part);
	mpc_w_num(w, "free_before_bytes", r->fit_free_before_bytes);
	if (r->fit_allocated) {
		mpc_w_num(w, "real_headroom_bytes", r->fit_free_after_bytes);
		mpc_w_num(w, "headroom_error_bytes", (double)r->fit_free_after_bytes - headroom);
	} else {
		mpc_w_null(w, "real_headroom_bytes");
		mpc_w_null(w, "headroom_error_bytes");
	}
	mpc_w_bool(w, "verdict_held", predicted == r->fit_allocated);
	mpc_w_lit(w, "note",
		  "weights, KV cache and workspace each cudaMalloc'ed and written in "
		  "this process (whose CUDA context is the plan's overhead), then freed; "
		  "real headroom is cudaMemGetInfo free with everything allocated");
	mpc_w_end(w);
}

static void gpu_results_write(mpc_out *w, const gpu_ctx *c)
{
	uint32_t done = c->r->suites_done;

	mpc_w_obj(w, "results");
	if (done & MP_CALIB_MEMORY)
		memory_write(w, c);
	if (done & MP_CALIB_HBM)
		hbm_write(w, c);
	if (done & MP_CALIB_STRIDED)
		strided_write(w, c);
	if (done & MP_CALIB_L2)
		l2_write(w, c);
	if (done & MP_CALIB_SMEM)
		smem_write(w, c);
	if (done & MP_CALIB_FMA)
		fma_write(w, c);
	if (done & MP_CALIB_MATMUL)
		matmul_write(w, c);
	if (done & MP_CALIB_LATENCY)
		latency_write(w, c);
	if (done & MP_CALIB_INTENSITY)
		intensity_write(w, c);
	if (done & MP_CALIB_FIT)
		fit_write(w, c);
	mpc_w_end(w);
}

/* A bench target: the figure, its limit and whether it is met (the JSON's targets, the table's rows). */
typedef struct calib_target {
	const char *name, *what;
	double value;
	bool have;
	double limit;
	bool minimum;			/* the limit is a floor (else a ceiling) */
} calib_target;

#define N_TARGETS 4

static size_t gpu_targets(const mps_calib_job *job, calib_target *t)
{
	const mp_calib_gpu_results *r = job->gpu;
	const mp_device *dh = job->have_datasheet ? &job->datasheet.hw : NULL;
	const mps_calib_gpu_figures *fig = &job->gpu_figures;
	const mps_calib_request *rq = &job->rq;

	t[0] = (calib_target){ "copy_over_memcpy_d2d", "HBM copy kernel / cudaMemcpy device-to-device, same run",
			       r->memcpy_d2d.best > 0 ? r->copy.best / r->memcpy_d2d.best : 0,
			       (r->suites_done & MP_CALIB_HBM) && r->memcpy_d2d.best > 0, 0.95, true };
	t[1] = (calib_target){ "fma_fp32_over_datasheet", "FP32 FMA kernel / the datasheet fp32 peak",
			       dh && dh->peak_flops_per_second[MP_DTYPE_FP32] > 0
				       ? r->fma_fp32.best / dh->peak_flops_per_second[MP_DTYPE_FP32]
				       : 0,
			       (r->suites_done & MP_CALIB_FMA) && dh && dh->peak_flops_per_second[MP_DTYPE_FP32] > 0,
			       0.95, true };
	t[2] = (calib_target){ "bf16_cublaslt_over_cublas", "cuBLASLt bf16 / cublasGemmEx bf16 at the same size, same run",
			       r->cublas_bf16.flops_per_second.best > 0
				       ? fig->matmul_peak_flops_per_second[MP_DTYPE_BF16] / r->cublas_bf16.flops_per_second.best
				       : 0,
			       fig->matmul_peak_flops_per_second[MP_DTYPE_BF16] > 0 &&
				       r->cublas_bf16.flops_per_second.best > 0,
			       0.95, true };
	t[3] = (calib_target){ "default_suite_seconds", "wall time of the run (the target applies to the default suite)",
			       job->elapsed_seconds, rq->suites == 0 || rq->suites == MP_CALIB_GPU_DEFAULT, 20.0, false };
	return N_TARGETS;
}

/* The warnings of a finished run (at most 8 a job: its own bound), into w. */
#define N_WARNINGS 8
typedef struct calib_warnings {
	size_t n;
	char text[N_WARNINGS][320];
} calib_warnings;

static void warn(calib_warnings *w, const char *text)
{
	assert(w->n < N_WARNINGS); /* an invariant: a run has at most two of its own and one per matmul type */
	if (w->n < N_WARNINGS)
		snprintf(w->text[w->n++], sizeof(w->text[0]), "%s", text);
}

static void job_warnings(const mps_calib_job *job, calib_warnings *w)
{
	memset(w, 0, sizeof(*w));
	if (job->have_results && job->gpu) {
		const mp_calib_gpu_results *r = job->gpu;

		if (!job->have_profile)
			warn(w, "no profile stored: the memory bandwidth was not measured (add the hbm suite) and no "
				"earlier profile or datasheet gives one");
		if (!job->have_datasheet)
			warn(w, "no datasheet profile matches this GPU's name: no measured/datasheet ratios");
		for (size_t i = 0; i < N_MATMUL; i++) {
			const mp_calib_matmul *m = &r->matmul[matmul_types[i]];
			char t[256];

			if ((r->suites_done & MP_CALIB_MATMUL) && m->status[0]) {
				snprintf(t, sizeof(t), "matmul %s: %s", mp_dtype_name(matmul_types[i]), m->status);
				warn(w, t);
			}
		}
	} else if (job->have_results && job->cpu) {
		const mp_calib_cpu_results *r = job->cpu;

		if ((r->suites_done & MP_CALIB_STREAM) && r->info.llc_bytes && r->array_bytes < 4 * r->info.llc_bytes) {
			char t[320];

			snprintf(t, sizeof(t),
				 "each triad array (%.1f MiB) is less than 4x the last-level cache the OS reports (%.1f "
				 "MiB): the bandwidth may include cache hits (a virtual machine may report the host's "
				 "whole cache)",
				 (double)r->array_bytes / 1048576.0, (double)r->info.llc_bytes / 1048576.0);
			warn(w, t);
		}
		if (!job->have_profile)
			warn(w, "no profile stored: the memory bandwidth was not measured (add the stream suite)");
	}
}

/* The finished GPU run's members: device, results, suite_seconds, ratios, targets. */
static void gpu_parts(mpc_out *w, const mps_calib_job *job)
{
	const mp_calib_gpu_results *r = job->gpu;
	const mp_store_device *datasheet = job->have_datasheet ? &job->datasheet : NULL;
	const mp_device *dh = datasheet ? &datasheet->hw : NULL;
	const mps_calib_gpu_figures *fig = &job->gpu_figures;
	const gpu_ctx c = { r, fig, &job->rq, datasheet, job->have_profile ? &job->profile : NULL };
	calib_target t[N_TARGETS];
	size_t nt = gpu_targets(job, t);

	device_info_write(w, &r->info, fig);
	gpu_results_write(w, &c);
	mpc_w_obj(w, "suite_seconds");
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (r->suites_done & (1u << i))
			mpc_w_num(w, mp_calib_suite_name(1u << i), r->suite_seconds[i]);
	mpc_w_end(w);
	if (dh) {
		mpc_w_obj(w, "ratios");
		ratio_write(w, "memory_bandwidth_bytes_per_second", fig->memory_bandwidth_bytes_per_second,
			    dh->memory_bandwidth_bytes_per_second);
		mpc_w_obj(w, "peak_flops_per_second");
		ratio_write(w, "fp32", (r->suites_done & MP_CALIB_FMA) ? r->fma_fp32.best : 0,
			    dh->peak_flops_per_second[MP_DTYPE_FP32]);
		for (size_t i = 0; i < N_MATMUL; i++)
			ratio_write(w, mp_dtype_name(matmul_types[i]), fig->matmul_peak_flops_per_second[matmul_types[i]],
				    dh->peak_flops_per_second[matmul_types[i]]);
		mpc_w_end(w);
		ratio_write(w, "memory_bytes", (double)r->info.memory_bytes, (double)dh->memory_bytes);
		mpc_w_end(w);
	} else {
		mpc_w_null(w, "ratios");
	}
	mpc_w_arr(w, "targets");
	for (size_t i = 0; i < nt; i++) {
		mpc_w_obj(w, NULL);
		mpc_w_str(w, "name", t[i].name);
		mpc_w_str(w, "description", t[i].what);
		if (t[i].have)
			mpc_w_num(w, "value", t[i].value);
		else
			mpc_w_null(w, "value");
		mpc_w_num(w, t[i].minimum ? "minimum" : "maximum", t[i].limit);
		if (t[i].have)
			mpc_w_bool(w, "met", t[i].minimum ? t[i].value >= t[i].limit : t[i].value <= t[i].limit);
		else
			mpc_w_null(w, "met");
		mpc_w_end(w);
	}
	mpc_w_end(w);
}

/* The finished CPU run's members. */
static void cpu_parts(mpc_out *w, const mps_calib_job *job)
{
	const mp_calib_cpu_results *r = job->cpu;
	double over_llc = r->info.llc_bytes ? (double)r->array_bytes / (double)r->info.llc_bytes : 0;

	mpc_w_obj(w, "device");
	mpc_w_str(w, "name", r->info.name);
	mpc_w_str(w, "vendor", r->info.vendor);
	mpc_w_str(w, "architecture", r->info.architecture);
	mpc_w_num(w, "threads", r->info.threads);
	mpc_w_num(w, "llc_bytes", r->info.llc_bytes);
	mpc_w_num(w, "memory_bytes", r->info.memory_bytes);
	mpc_w_num(w, "available_bytes", r->info.available_bytes);
	mpc_w_str(w, "blas", r->info.blas);
	mpc_w_end(w);
	mpc_w_obj(w, "results");
	if (r->suites_done & MP_CALIB_STREAM) {
		mpc_w_obj(w, "stream");
		mpc_w_num(w, "array_bytes", r->array_bytes);
		mpc_w_num(w, "threads", r->threads);
		stat_write(w, "triad", &r->triad, "bytes_per_second");
		if (over_llc > 0)
			mpc_w_num(w, "array_over_llc", over_llc);
		else
			mpc_w_null(w, "array_over_llc");
		mpc_w_lit(w, "note", "a = b + s c, doubles, 24 bytes per element (2 reads + 1 write)");
		mpc_w_end(w);
	}
	if (r->suites_done & MP_CALIB_GEMM) {
		mpc_w_obj(w, "gemm");
		mpc_w_num(w, "size", r->matrix_size);
		mpc_w_str(w, "blas", r->info.blas);
		if (stat_open(w, "dgemm", &r->dgemm, "flops_per_second")) {
			mpc_w_num(w, "relative_error", r->dgemm_rel_error);
			mpc_w_end(w);
		}
		if (stat_open(w, "sgemm", &r->sgemm, "flops_per_second")) {
			mpc_w_num(w, "relative_error", r->sgemm_rel_error);
			mpc_w_end(w);
		}
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_obj(w, "suite_seconds");
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (r->suites_done & (1u << i))
			mpc_w_num(w, mp_calib_suite_name(1u << i), r->suite_seconds[i]);
	mpc_w_end(w);
	mpc_w_null(w, "ratios");
	mpc_w_arr(w, "targets");
	mpc_w_end(w);
}

static void error_write(mpc_out *w, const mps_calib_job *job)
{
	if (job->error_status[0] == '\0') {
		mpc_w_null(w, "error");
		return;
	}
	mpc_w_obj(w, "error");
	mpc_w_str(w, "status", job->error_status);
	mpc_w_str(w, "message", job->error_message);
	mpc_w_end(w);
}

/* The stored job's columns, the truth over its record's members of the same names. */
static const char *const columns[] = { "id", "target", "state", "created_at", "finished_at", "device_id",
				       "datasheet_id", "error" };
#define N_COLUMNS (sizeof(columns) / sizeof(columns[0]))

/* Writes column c of a past job; false for an error that is not the row's own (the record's stands). */
static bool column_write(mpc_out *w, const mps_calib_job *job, size_t c)
{
	switch (c) {
	case 0:
		mpc_w_str(w, "id", job->id);
		break;
	case 1:
		mpc_w_lit(w, "target", job->rq.gpu ? "gpu:0" : "cpu");
		break;
	case 2:
		mpc_w_str(w, "state", job->state);
		break;
	case 3:
		mpc_w_str(w, "created_at", job->created_at);
		break;
	case 4:
		mpc_w_str_or_null(w, "finished_at", job->finished_at);
		break;
	case 5:
		mpc_w_str_or_null(w, "device_id", job->device_id);
		break;
	case 6:
		mpc_w_str_or_null(w, "datasheet_id", job->datasheet_id);
		break;
	default:
		if (strcmp(job->error_status, "interrupted") != 0)
			return false;
		mpc_w_obj(w, "error");
		mpc_w_str(w, "status", job->error_status);
		mpc_w_str(w, "message", job->error_message);
		mpc_w_end(w);
	}
	return true;
}

/* A past job: the record the store kept, with the row's columns as the truth (written over the record's own
 * members, in their places, the rest after them; a record that is not a JSON object gives the columns alone). */
static void stored_write(mpc_out *w, const mps_calib_job *job)
{
	cJSON *doc = cJSON_Parse(job->record);
	const cJSON *m;
	bool done[N_COLUMNS] = { false };

	mpc_w_obj(w, NULL);
	if (cJSON_IsObject(doc))
		cJSON_ArrayForEach(m, doc)
		{
			size_t c = 0;

			while (c < N_COLUMNS && strcmp(columns[c], m->string) != 0)
				c++;
			if (c < N_COLUMNS && done[c])
				continue; /* a name the record repeats: the column was written once */
			if (c < N_COLUMNS && column_write(w, job, c))
				done[c] = true;
			else
				mpc_w_item(w, m->string, m);
		}
	for (size_t c = 0; c < N_COLUMNS; c++)
		if (!done[c])
			column_write(w, job, c);
	mpc_w_end(w);
	cJSON_Delete(doc);
}

void mpc_calib_job_write(mpc_out *w, const mps_calib_job *job)
{
	const mps_calib_request *rq = &job->rq;
	uint32_t suites = rq->suites ? rq->suites : rq->gpu ? MP_CALIB_GPU_DEFAULT : MP_CALIB_CPU_DEFAULT;
	calib_warnings warnings;

	if (job->record) {
		stored_write(w, job);
		return;
	}
	mpc_w_obj(w, NULL);
	mpc_w_str(w, "id", job->id);
	mpc_w_lit(w, "target", rq->gpu ? "gpu:0" : "cpu");
	mpc_w_str(w, "state", job->state);
	mpc_w_arr(w, "suites");
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (suites & (1u << i))
			mpc_w_lit(w, NULL, mp_calib_suite_name(1u << i));
	mpc_w_end(w);
	mpc_w_obj(w, "options");
	if (rq->runs)
		mpc_w_num(w, "runs", rq->runs);
	if (rq->array_bytes)
		mpc_w_u64(w, "array_bytes", rq->array_bytes);
	if (rq->matrix_size)
		mpc_w_num(w, "matrix_size", rq->matrix_size);
	if (rq->threads)
		mpc_w_num(w, "threads", rq->threads);
	mpc_w_end(w);
	mpc_w_obj(w, "progress");
	mpc_w_num(w, "percent", job->percent);
	mpc_w_str_or_null(w, "current_suite", job->suite);
	mpc_w_end(w);
	mpc_w_bool(w, "cancel_requested", job->cancel_requested);
	mpc_w_str(w, "created_at", job->created_at);
	mpc_w_str_or_null(w, "started_at", job->started_at);
	mpc_w_str_or_null(w, "finished_at", job->finished_at);
	mpc_w_num(w, "elapsed_seconds", job->elapsed_seconds);
	mpc_w_str_or_null(w, "device_id", job->device_id);
	mpc_w_str_or_null(w, "datasheet_id", job->datasheet_id);
	if (job->have_results && job->gpu) {
		gpu_parts(w, job);
	} else if (job->have_results && job->cpu) {
		cpu_parts(w, job);
	} else {
		mpc_w_null(w, "device");
		mpc_w_null(w, "results");
	}
	job_warnings(job, &warnings);
	mpc_w_arr(w, "warnings");
	for (size_t i = 0; i < warnings.n; i++)
		mpc_w_str(w, NULL, warnings.text[i]);
	mpc_w_end(w);
	error_write(w, job);
	mpc_w_end(w);
}

char *mpc_calib_job_text(const mps_calib_job *job)
{
	mpc_out w;

	mpc_out_init(&w);
	mpc_calib_job_write(&w, job);
	return mpc_out_finish(&w, NULL);
}

/* ----- the CLI's table: drawn from the job's structs, as the document is ------------------------------------ */

/* "4.26 TB/s", "812 GB/s", "65.1 TFLOP/s", "180 ns": decimal prefixes, as the unit says, three significant figures
 * kept ("1.20 TB/s", not "1.2"), by the rules every answer for people uses (codec/mpc_human.c). */
static void human(char *buf, size_t len, double v, const char *unit)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (strcmp(unit, "s") == 0)
		mpc_fmt_seconds(buf, len, v);
	else
		mpc_fmt_si(buf, len, v, unit);
}

/* A measured figure's best, or NaN when it was not measured (the document's null). */
static double best_of(const mp_calib_stat *s)
{
	return s->runs ? s->best : NAN;
}

static void row(FILE *f, const char *label, const mp_calib_stat *s, const char *unit, double ratio)
{
	char b[32], m[32], r[16] = "";

	human(b, sizeof(b), s->runs ? s->best : NAN, unit);
	human(m, sizeof(m), s->runs ? s->median : NAN, unit);
	if (isfinite(ratio))
		snprintf(r, sizeof(r), "%.3f", ratio);
	fprintf(f, "  %-44s %14s %14s %8s\n", label, b, m, r);
}

/* The same without the ratio column (the CPU suites have no datasheet to compare with). */
static void row2(FILE *f, const char *label, const mp_calib_stat *s, const char *unit)
{
	char b[32], m[32];

	human(b, sizeof(b), s->runs ? s->best : NAN, unit);
	human(m, sizeof(m), s->runs ? s->median : NAN, unit);
	fprintf(f, "  %-44s %14s %14s\n", label, b, m);
}

/* The GPU suites' rows. */
static void table_gpu(FILE *f, const gpu_ctx *c)
{
	const mp_calib_gpu_results *r = c->r;
	uint32_t done = r->suites_done;
	char label[96], b1[32], b2[32];

	if (done & MP_CALIB_MEMORY) {
		human(b1, sizeof(b1), (double)r->info.memory_bytes, "B");
		human(b2, sizeof(b2), (double)r->context_bytes, "B");
		fprintf(f, "  %-44s %14s %14s\n", "memory total / context (cudaMemGetInfo)", b1, b2);
	}
	if (done & MP_CALIB_HBM) {
		row(f, "HBM cudaMemcpy D2D (read + write)", &r->memcpy_d2d, "B/s", NAN);
		row(f, "HBM copy kernel, 16-byte accesses (/ memcpy)", &r->copy, "B/s",
		    best_of(&r->copy) / best_of(&r->memcpy_d2d));
		row(f, "HBM read", &r->read, "B/s", NAN);
		row(f, "HBM write", &r->write, "B/s", NAN);
		row(f, "HBM triad", &r->triad, "B/s", NAN);
	}
	if (done & MP_CALIB_STRIDED)
		for (int k = 0; k < MP_CALIB_STRIDE_COUNT; k++) {
			snprintf(label, sizeof(label), "strided read, stride %u (useful bytes)", 1u << k);
			row(f, label, &r->strided[k], "B/s", ratio_of(r->strided[k].best, r->strided[0].best));
		}
	if (done & MP_CALIB_L2) {
		human(b1, sizeof(b1), (double)r->l2_working_set_bytes, "B");
		snprintf(label, sizeof(label), "L2 read, %s working set (/ HBM read)", b1);
		row(f, label, &r->l2_read, "B/s", ratio_of(r->l2_read.best, r->read.best));
	}
	if (done & MP_CALIB_SMEM) {
		for (int k = 0; k < MP_CALIB_SMEM_STRIDE_COUNT; k++) {
			snprintf(label, sizeof(label), "shared memory, stride %u words (%u-way)", 1u << k, 1u << k);
			row(f, label, &r->smem[k], "B/s", NAN);
		}
		row(f, "shared memory, 32x33 padded tile by column (x)", &r->smem_tile_padded, "B/s",
		    ratio_of(r->smem_tile_padded.best, r->smem_tile_column.best));
	}
	if (done & MP_CALIB_FMA)
		row(f, "FP32 FMA (/ datasheet)", &r->fma_fp32, "FLOP/s", ratio_of(r->fma_fp32.best, ds_peak(c, MP_DTYPE_FP32)));
	if (done & MP_CALIB_MATMUL) {
		for (size_t i = 0; i < N_MATMUL; i++) {
			const mp_calib_matmul *m = &r->matmul[matmul_types[i]];

			snprintf(label, sizeof(label), "matmul %s cuBLASLt %u^3 (/ datasheet)", mp_dtype_name(matmul_types[i]),
				 r->cublas_bf16.size);
			row(f, label, &m->flops_per_second, "FLOP/s",
			    ratio_of(c->fig->matmul_peak_flops_per_second[matmul_types[i]], ds_peak(c, matmul_types[i])));
			if (m->status[0])
				fprintf(f, "    %s\n", m->status);
		}
		row(f, "matmul bf16 cublasGemmEx (reference)", &r->cublas_bf16.flops_per_second, "FLOP/s", NAN);
	}
	if (done & MP_CALIB_LATENCY) {
		double inflight = bytes_in_flight(c);

		human(b1, sizeof(b1), (double)r->latency_hbm_span_bytes, "B");
		snprintf(label, sizeof(label), "latency, pointer chase over %s (HBM)", b1);
		row(f, label, &r->latency_hbm, "s", NAN);
		human(b1, sizeof(b1), (double)r->latency_l2_span_bytes, "B");
		snprintf(label, sizeof(label), "latency, pointer chase over %s (L2)", b1);
		row(f, label, &r->latency_l2, "s", NAN);
		human(b1, sizeof(b1), inflight > 0 ? inflight : NAN, "B");
		human(b2, sizeof(b2), inflight > 0 && r->info.sm_count ? inflight / r->info.sm_count : NAN, "B");
		fprintf(f, "  %-44s %14s %14s\n", "Little's law: bytes in flight (total, per SM)", b1, b2);
	}
	if (done & MP_CALIB_INTENSITY)
		for (int k = 0; k < MP_CALIB_INTENSITY_COUNT; k++) {
			const mp_calib_intensity_point *ip = &r->intensity[k];
			double roof = intensity_roof(c, ip, NULL);

			snprintf(label, sizeof(label), "intensity %g FLOP/B (measured / roof)", ip->flops_per_byte);
			row(f, label, &ip->flops_per_second, "FLOP/s",
			    roof > 0 ? ratio_of(ip->flops_per_second.median, roof) : NAN);
		}
	if (done & MP_CALIB_FIT) {
		bool predicted = c->rq->fit_total_bytes <= r->fit_total_bytes;

		human(b1, sizeof(b1), predicted_headroom(c), "B");
		human(b2, sizeof(b2), r->fit_allocated ? (double)r->fit_free_after_bytes : NAN, "B");
		fprintf(f, "  fit check: predicted %s, allocation %s, verdict %s; headroom predicted %s, real %s\n",
			predicted ? "fits" : "does not fit", r->fit_allocated ? "succeeded" : "failed",
			predicted == r->fit_allocated ? "held" : "DID NOT HOLD", b1, b2);
	}
}

/* The CPU suites' rows. */
static void table_cpu(FILE *f, const mp_calib_cpu_results *r)
{
	char label[96], b1[32];

	if (r->suites_done & MP_CALIB_STREAM) {
		human(b1, sizeof(b1), (double)r->array_bytes, "B");
		snprintf(label, sizeof(label), "STREAM triad, %u thread%s, 3 x %s arrays", r->threads,
			 r->threads == 1 ? "" : "s", b1);
		row2(f, label, &r->triad, "B/s");
	}
	if (r->suites_done & MP_CALIB_GEMM) {
		snprintf(label, sizeof(label), "dgemm (fp64) n = %u", r->matrix_size);
		row2(f, label, &r->dgemm, "FLOP/s");
		snprintf(label, sizeof(label), "sgemm (fp32) n = %u", r->matrix_size);
		row2(f, label, &r->sgemm, "FLOP/s");
	}
}

/* Measured / datasheet, the bench targets and the warnings. */
static void table_summary(FILE *f, const mps_calib_job *job)
{
	calib_warnings warnings;

	if (job->gpu && job->have_datasheet) {
		const mp_calib_gpu_results *r = job->gpu;
		const mp_device *dh = &job->datasheet.hw;
		const mps_calib_gpu_figures *fig = &job->gpu_figures;
		double bw = ratio_of(fig->memory_bandwidth_bytes_per_second, dh->memory_bandwidth_bytes_per_second);
		double fp32 = ratio_of((r->suites_done & MP_CALIB_FMA) ? r->fma_fp32.best : 0,
				       dh->peak_flops_per_second[MP_DTYPE_FP32]);

		fprintf(f, "\n  measured / datasheet (%s):", job->datasheet_id[0] ? job->datasheet_id : "?");
		if (isfinite(bw))
			fprintf(f, " bandwidth %.3f", bw);
		if (!isnan(fp32))
			fprintf(f, ", fp32 %.3f", fp32);
		for (size_t i = 0; i < N_MATMUL; i++) {
			double x = ratio_of(fig->matmul_peak_flops_per_second[matmul_types[i]],
					    dh->peak_flops_per_second[matmul_types[i]]);

			if (!isnan(x))
				fprintf(f, ", %s %.3f", mp_dtype_name(matmul_types[i]), x);
		}
		fprintf(f, "\n");
	}
	if (job->gpu) {
		calib_target t[N_TARGETS];
		size_t nt = gpu_targets(job, t);

		fprintf(f, "\n  %-44s %14s %14s %8s\n", "target", "value", "limit", "met");
		for (size_t i = 0; i < nt; i++) {
			char v[32], l[32];
			bool met = t[i].minimum ? t[i].value >= t[i].limit : t[i].value <= t[i].limit;

			snprintf(v, sizeof(v), "%.3f", t[i].value);
			if (t[i].minimum)
				snprintf(l, sizeof(l), ">= %.2f", t[i].limit);
			else
				snprintf(l, sizeof(l), "<= %.0f", t[i].limit);
			fprintf(f, "  %-44s %14s %14s %8s\n", t[i].name, t[i].have ? v : "-", l,
				t[i].have ? (met ? "yes" : "NO") : "-");
		}
	}
	job_warnings(job, &warnings);
	for (size_t i = 0; i < warnings.n; i++)
		fprintf(f, "  warning: %s\n", warnings.text[i]);
	fprintf(f, "\n  (B/s and FLOP/s with decimal prefixes: 1 TB/s = 1e12 bytes per second)\n");
}

void mpc_calib_print_table(FILE *f, const mps_calib_job *job)
{
	const char *name = job->have_results && job->gpu ? job->gpu->info.name
			   : job->have_results && job->cpu ? job->cpu->info.name
							   : "?";

	fprintf(f, "\n%s (%s): job %s, %s, %.1f s\n", name, job->rq.gpu ? "gpu:0" : "cpu", job->id, job->state,
		job->elapsed_seconds);
	if (job->device_id[0])
		fprintf(f, "profile stored: %s%s%s\n", job->device_id, job->datasheet_id[0] ? ", compared with datasheet " : "",
			job->datasheet_id);
	if (job->error_status[0])
		fprintf(f, "error: %s\n", job->error_message);
	if (!job->have_results || (job->gpu == NULL && job->cpu == NULL))
		return;
	/* the ratio column where rows compare (the GPU suites: against the datasheet, memcpy, stride 1, ...) */
	if (job->gpu)
		fprintf(f, "\n  %-44s %14s %14s %8s\n", "figure", "best", "median", "ratio");
	else
		fprintf(f, "\n  %-44s %14s %14s\n", "figure", "best", "median");
	if (job->gpu) {
		const gpu_ctx c = { job->gpu, &job->gpu_figures, &job->rq, job->have_datasheet ? &job->datasheet : NULL,
				    job->have_profile ? &job->profile : NULL };

		table_gpu(f, &c);
	} else {
		table_cpu(f, job->cpu);
	}
	table_summary(f, job);
}
