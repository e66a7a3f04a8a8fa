/*
 * calib_doc.c: turns the calibration kernels' plain results into the job document (device, results,
 * ratios against the datasheet, the bench targets, warnings), the measured device profile the store keeps,
 * and the CLI's table. Pure encoding: no threads, no store calls, no hardware access.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "calib_jobs.h"

#define NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))

/* ----- names and ids ----------------------------------------------------------------------------------- */

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

const char *mpd_calib_datasheet_for(const char *cuda_name)
{
	if (cuda_name == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(datasheet_map) / sizeof(datasheet_map[0]); i++)
		if (has_word(cuda_name, datasheet_map[i].needle))
			return datasheet_map[i].id;
	return NULL;
}

void mpd_calib_profile_id(bool gpu, char *out, size_t len)
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

cJSON *mpd_calib_suites_json(uint32_t suites)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; a && i < MP_CALIB_SUITE_BITS; i++)
		if (suites & (1u << i))
			cJSON_AddItemToArray(a, cJSON_CreateString(mp_calib_suite_name(1u << i)));
	return a;
}

static const char *architecture_of(int major, int minor)
{
	int cc = major * 10 + minor;

	if (cc >= 100)
		return "Blackwell";
	if (cc == 90)
		return "Hopper";
	if (cc == 89)
		return "Ada Lovelace";
	if (cc >= 80)
		return "Ampere";
	if (cc == 75)
		return "Turing";
	if (cc >= 70)
		return "Volta";
	return "";
}

/* ----- JSON helpers ------------------------------------------------------------------------------------ */

/* {"best_<unit>", "median_<unit>", "runs"}, or null when not measured. */
static cJSON *stat_json(const mp_calib_stat *s, const char *unit)
{
	cJSON *o;
	char k[64];

	if (s->runs == 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	snprintf(k, sizeof(k), "best_%s", unit);
	NUM(o, k, s->best);
	snprintf(k, sizeof(k), "median_%s", unit);
	NUM(o, k, s->median);
	NUM(o, "runs", s->runs);
	return o;
}

static cJSON *add_stat(cJSON *o, const char *name, const mp_calib_stat *s, const char *unit)
{
	cJSON *v = stat_json(s, unit);

	cJSON_AddItemToObject(o, name, v);
	return v;
}

static void add_ratio(cJSON *o, const char *k, double num, double den)
{
	if (num > 0 && den > 0)
		NUM(o, k, num / den);
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
		NUM(t, "value", value);
	else
		cJSON_AddNullToObject(t, "value");
	NUM(t, minimum ? "minimum" : "maximum", limit);
	if (have)
		cJSON_AddBoolToObject(t, "met", minimum ? value >= limit : value <= limit);
	else
		cJSON_AddNullToObject(t, "met");
	cJSON_AddItemToArray(targets, t);
}

/* Removes the live document's placeholders (null) before the final values go in. */
static void drop_placeholders(cJSON *doc)
{
	static const char *const keys[] = {"device", "results", "ratios", "targets", "suite_seconds"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		cJSON_DeleteItemFromObjectCaseSensitive(doc, keys[i]);
	if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "warnings"))) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "warnings");
		cJSON_AddArrayToObject(doc, "warnings");
	}
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

/* ----- GPU --------------------------------------------------------------------------------------------- */

static cJSON *gpu_device_json(const mp_calib_gpu_info *in)
{
	cJSON *o = cJSON_CreateObject();
	char cc[16];

	cJSON_AddStringToObject(o, "name", in->name);
	NUM(o, "memory_bytes", in->memory_bytes);
	NUM(o, "free_bytes", in->free_bytes);
	NUM(o, "sm_count", in->sm_count);
	NUM(o, "l2_cache_bytes", in->l2_cache_bytes);
	snprintf(cc, sizeof(cc), "%d.%d", in->cc_major, in->cc_minor);
	cJSON_AddStringToObject(o, "compute_capability", cc);
	cJSON_AddStringToObject(o, "architecture", architecture_of(in->cc_major, in->cc_minor));
	NUM(o, "clock_hz", in->clock_hz);
	NUM(o, "shared_memory_per_sm_bytes", in->shared_memory_per_sm_bytes);
	NUM(o, "driver_version", in->driver_version);
	NUM(o, "runtime_version", in->runtime_version);
	return o;
}

/* The figures the profile takes from a run. */
static double gpu_bandwidth(const mp_calib_gpu_results *r)
{
	if (!(r->suites_done & MP_CALIB_HBM))
		return 0;
	return r->copy.best > r->memcpy_d2d.best ? r->copy.best : r->memcpy_d2d.best;
}

static const mp_dtype matmul_types[] = {MP_DTYPE_BF16, MP_DTYPE_FP16, MP_DTYPE_TF32, MP_DTYPE_FP8_E4M3};
#define N_MATMUL (sizeof(matmul_types) / sizeof(matmul_types[0]))

static double matmul_peak(const mp_calib_gpu_results *r, mp_dtype t)
{
	const mp_calib_matmul *m = &r->matmul[t];

	return (r->suites_done & MP_CALIB_MATMUL) && m->status[0] == '\0' ? m->flops_per_second.best : 0;
}

static cJSON *gpu_results_json(const mp_calib_gpu_results *r, const mpd_calib_request *rq, const mp_store_device *ds,
                               const mp_store_device *profile)
{
	cJSON *res = cJSON_CreateObject(), *o, *a, *p;
	uint32_t done = r->suites_done;

	if (done & MP_CALIB_MEMORY) {
		o = cJSON_AddObjectToObject(res, "memory");
		NUM(o, "total_bytes", r->info.memory_bytes);
		NUM(o, "free_bytes", r->info.free_bytes);
		NUM(o, "context_bytes", r->context_bytes);
		cJSON_AddStringToObject(
		    o, "note",
		    "cudaMemGetInfo right after context creation; context_bytes = total - free, which "
		    "also counts memory other processes held at that moment");
	}
	if (done & MP_CALIB_HBM) {
		o = cJSON_AddObjectToObject(res, "hbm");
		NUM(o, "array_bytes", r->array_bytes);
		NUM(o, "access_bytes", 16);
		add_stat(o, "memcpy_d2d", &r->memcpy_d2d, "bytes_per_second");
		p = add_stat(o, "copy", &r->copy, "bytes_per_second");
		if (cJSON_IsObject(p)) {
			NUM(p, "loads_in_flight_per_thread", r->copy_unroll);
			NUM(p, "blocks", r->copy_blocks);
		}
		add_stat(o, "read", &r->read, "bytes_per_second");
		add_stat(o, "write", &r->write, "bytes_per_second");
		add_stat(o, "triad", &r->triad, "bytes_per_second");
		cJSON_AddStringToObject(o, "note",
		                        "bytes read + bytes written per second; copy and triad use the "
		                        "grid and loads in flight that won a tuning sweep in the same run");
	}
	if (done & MP_CALIB_STRIDED) {
		o = cJSON_AddObjectToObject(res, "strided");
		NUM(o, "element_bytes", 4);
		a = cJSON_AddArrayToObject(o, "points");
		for (int k = 0; k < MP_CALIB_STRIDE_COUNT; k++) {
			p = cJSON_CreateObject();
			NUM(p, "stride", 1u << k);
			cJSON_AddItemToObject(p, "useful", stat_json(&r->strided[k], "bytes_per_second"));
			add_ratio(p, "fraction_of_stride_1", r->strided[k].best, r->strided[0].best);
			cJSON_AddItemToArray(a, p);
		}
	}
	if (done & MP_CALIB_L2) {
		o = cJSON_AddObjectToObject(res, "l2");
		NUM(o, "working_set_bytes", r->l2_working_set_bytes);
		add_stat(o, "read", &r->l2_read, "bytes_per_second");
		add_ratio(o, "over_hbm_read", r->l2_read.best, r->read.best);
	}
	if (done & MP_CALIB_SMEM) {
		o = cJSON_AddObjectToObject(res, "smem");
		a = cJSON_AddArrayToObject(o, "points");
		for (int k = 0; k < MP_CALIB_SMEM_STRIDE_COUNT; k++) {
			p = cJSON_CreateObject();
			NUM(p, "stride_words", 1u << k);
			NUM(p, "bank_conflict_ways", 1u << k);
			cJSON_AddItemToObject(p, "read", stat_json(&r->smem[k], "bytes_per_second"));
			cJSON_AddItemToArray(a, p);
		}
		add_stat(o, "tile_32x32_column", &r->smem_tile_column, "bytes_per_second");
		add_stat(o, "tile_32x33_column_padded", &r->smem_tile_padded, "bytes_per_second");
		add_ratio(o, "padding_speedup", r->smem_tile_padded.best, r->smem_tile_column.best);
		if (r->info.clock_hz > 0 && r->info.sm_count > 0)
			NUM(o, "best_bytes_per_clock_per_sm", r->smem[0].best / r->info.clock_hz / r->info.sm_count);
	}
	if (done & MP_CALIB_FMA) {
		o = cJSON_AddObjectToObject(res, "fma");
		add_stat(o, "fp32", &r->fma_fp32, "flops_per_second");
		add_ratio(o, "fp32_over_datasheet", r->fma_fp32.best,
		          ds ? ds->hw.peak_flops_per_second[MP_DTYPE_FP32] : 0);
	}
	if (done & MP_CALIB_MATMUL) {
		cJSON *lt;

		o = cJSON_AddObjectToObject(res, "matmul");
		NUM(o, "size", r->cublas_bf16.size);
		NUM(o, "workspace_bytes", r->matmul_workspace_bytes);
		lt = cJSON_AddObjectToObject(o, "cublaslt");
		for (size_t i = 0; i < N_MATMUL; i++) {
			const mp_calib_matmul *m = &r->matmul[matmul_types[i]];

			p = cJSON_AddObjectToObject(lt, mp_dtype_name(matmul_types[i]));
			cJSON_AddItemToObject(p, "rate", stat_json(&m->flops_per_second, "flops_per_second"));
			NUM(p, "algorithms_tried", m->algos_tried);
			if (m->flops_per_second.runs || m->rel_error > 0)
				NUM(p, "relative_error", m->rel_error);
			else
				cJSON_AddNullToObject(p, "relative_error");
			if (m->status[0])
				cJSON_AddStringToObject(p, "status", m->status);
			else
				cJSON_AddNullToObject(p, "status");
			add_ratio(p, "over_datasheet", matmul_peak(r, matmul_types[i]),
			          ds ? ds->hw.peak_flops_per_second[matmul_types[i]] : 0);
		}
		p = cJSON_AddObjectToObject(o, "cublas_bf16");
		cJSON_AddItemToObject(p, "rate", stat_json(&r->cublas_bf16.flops_per_second, "flops_per_second"));
		NUM(p, "relative_error", r->cublas_bf16.rel_error);
		if (r->cublas_bf16.status[0])
			cJSON_AddStringToObject(p, "status", r->cublas_bf16.status);
		else
			cJSON_AddNullToObject(p, "status");
		cJSON_AddStringToObject(o, "note",
		                        "m = n = k, A transposed (TN), fp32 accumulation, random inputs in "
		                        "[-1, 1); cuBLASLt: fastest of the first heuristic candidates; fp8_e4m3 "
		                        "writes bf16; cublas_bf16 is cublasGemmEx with CUBLAS_GEMM_DEFAULT");
	}
	if (done & MP_CALIB_LATENCY) {
		cJSON *ll;
		double bw = profile ? profile->hw.memory_bandwidth_bytes_per_second : 0, lat = r->latency_hbm.median;

		o = cJSON_AddObjectToObject(res, "latency");
		p = cJSON_AddObjectToObject(o, "hbm");
		NUM(p, "span_bytes", r->latency_hbm_span_bytes);
		cJSON_AddItemToObject(p, "load", stat_json(&r->latency_hbm, "seconds"));
		p = cJSON_AddObjectToObject(o, "l2");
		NUM(p, "span_bytes", r->latency_l2_span_bytes);
		cJSON_AddItemToObject(p, "load", stat_json(&r->latency_l2, "seconds"));
		cJSON_AddStringToObject(o, "note",
		                        "one thread, a random single cycle over 128-byte lines, loads that "
		                        "skip L1; the HBM figure includes TLB misses over its span");
		ll = cJSON_AddObjectToObject(o, "littles_law");
		if (bw > 0 && lat > 0) {
			NUM(ll, "bandwidth_bytes_per_second", bw);
			NUM(ll, "latency_seconds", lat);
			NUM(ll, "bytes_in_flight", bw * lat);
			if (r->info.sm_count)
				NUM(ll, "bytes_in_flight_per_sm", bw * lat / r->info.sm_count);
			cJSON_AddStringToObject(ll, "note",
			                        "bytes that must be in flight to sustain the measured bandwidth "
			                        "at the measured HBM latency (bandwidth x latency)");
		} else {
			cJSON_AddStringToObject(ll, "note", "needs the hbm suite's bandwidth in the same profile");
		}
	}
	if (done & MP_CALIB_INTENSITY) {
		double peak = (done & MP_CALIB_FMA) ? r->fma_fp32.best : 0;
		double bw = (done & MP_CALIB_HBM) ? gpu_bandwidth(r) : 0;
		double ds_peak = ds ? ds->hw.peak_flops_per_second[MP_DTYPE_FP32] : 0;
		double ds_bw = ds ? ds->hw.memory_bandwidth_bytes_per_second : 0;

		o = cJSON_AddObjectToObject(res, "intensity");
		NUM(o, "bytes", r->intensity_bytes);
		cJSON_AddStringToObject(o, "note",
		                        "a read-only stream doing M fp32 FMAs per 16-byte element; roof = "
		                        "min(fp32 peak, intensity x bandwidth) from this run's FMA peak and "
		                        "profile bandwidth, and from the datasheet");
		a = cJSON_AddArrayToObject(o, "points");
		for (int k = 0; k < MP_CALIB_INTENSITY_COUNT; k++) {
			const mp_calib_intensity_point *ip = &r->intensity[k];
			double roof = 0, dsroof = 0;

			p = cJSON_CreateObject();
			NUM(p, "flops_per_byte", ip->flops_per_byte);
			cJSON_AddItemToObject(p, "rate", stat_json(&ip->flops_per_second, "flops_per_second"));
			if (peak > 0 && bw > 0) {
				roof = fmin(peak, ip->flops_per_byte * bw);
				NUM(p, "roof_flops_per_second", roof);
				add_ratio(p, "measured_over_roof", ip->flops_per_second.median, roof);
				cJSON_AddStringToObject(p, "bound",
				                        ip->flops_per_byte * bw < peak ? "memory" : "compute");
			} else {
				cJSON_AddNullToObject(p, "roof_flops_per_second");
				cJSON_AddNullToObject(p, "measured_over_roof");
			}
			if (ds_peak > 0 && ds_bw > 0) {
				dsroof = fmin(ds_peak, ip->flops_per_byte * ds_bw);
				NUM(p, "datasheet_roof_flops_per_second", dsroof);
				add_ratio(p, "measured_over_datasheet_roof", ip->flops_per_second.median, dsroof);
			}
			cJSON_AddItemToArray(a, p);
		}
	}
	if (done & MP_CALIB_FIT) {
		uint64_t cap = r->fit_total_bytes;
		bool predicted = rq->fit_total_bytes <= cap;
		double pred_headroom = (double)cap - (double)rq->fit_total_bytes;

		o = cJSON_AddObjectToObject(res, "fit");
		p = cJSON_AddObjectToObject(o, "plan");
		NUM(p, "weights_bytes", rq->fit_weights_bytes);
		NUM(p, "kv_cache_bytes", rq->fit_kv_cache_bytes);
		NUM(p, "workspace_bytes", rq->fit_workspace_bytes);
		NUM(p, "overhead_bytes", rq->fit_overhead_bytes);
		NUM(p, "total_bytes", rq->fit_total_bytes);
		NUM(o, "capacity_bytes", cap);
		cJSON_AddBoolToObject(o, "predicted_fits", predicted);
		NUM(o, "predicted_headroom_bytes", pred_headroom);
		NUM(o, "allocated_bytes", r->fit_requested_bytes);
		cJSON_AddBoolToObject(o, "allocated", r->fit_allocated);
		if (r->fit_failed_part[0])
			cJSON_AddStringToObject(o, "failed_part", r->fit_failed_part);
		else
			cJSON_AddNullToObject(o, "failed_part");
		NUM(o, "free_before_bytes", r->fit_free_before_bytes);
		if (r->fit_allocated) {
			NUM(o, "real_headroom_bytes", r->fit_free_after_bytes);
			NUM(o, "headroom_error_bytes", (double)r->fit_free_after_bytes - pred_headroom);
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
	return res;
}

mp_status mpd_calib_gpu_doc(const mp_calib_gpu_results *r, const mpd_calib_request *rq,
                            const mp_store_device *datasheet, const mp_store_device *previous, const char *job_id,
                            const char *now, double elapsed_seconds, cJSON *doc, mp_store_device *profile,
                            bool *have_profile)
{
	const mp_store_device *base = previous ? previous : datasheet;
	cJSON *ratios, *peaks, *targets, *warnings, *secs;
	char note[2048] = "", carried[256] = "";
	double bw = gpu_bandwidth(r);
	const mp_device *dh = datasheet ? &datasheet->hw : NULL;

	drop_placeholders(doc);
	/* The profile: the base's figures, overwritten with what this run measured. */
	memset(profile, 0, sizeof(*profile));
	if (base)
		*profile = *base;
	mpd_calib_profile_id(true, profile->id, sizeof(profile->id));
	snprintf(profile->name, sizeof(profile->name), "%s", r->info.name);
	snprintf(profile->vendor, sizeof(profile->vendor), "NVIDIA");
	snprintf(profile->architecture, sizeof(profile->architecture), "%s",
	         architecture_of(r->info.cc_major, r->info.cc_minor));
	snprintf(profile->source, sizeof(profile->source), "measured");
	snprintf(profile->measured_at, sizeof(profile->measured_at), "%s", now);
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
		if (matmul_peak(r, matmul_types[i]) > 0)
			profile->hw.peak_flops_per_second[matmul_types[i]] = matmul_peak(r, matmul_types[i]);
	if (r->suites_done & MP_CALIB_MEMORY)
		profile->hw.cuda_context_bytes = r->context_bytes;
	for (int t = 1; t < MP_DTYPE_COUNT; t++) {
		bool measured =
		    (t == MP_DTYPE_FP32 && (r->suites_done & MP_CALIB_FMA)) || matmul_peak(r, (mp_dtype)t) > 0;

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

	cJSON_AddItemToObject(doc, "device", gpu_device_json(&r->info));
	cJSON_AddItemToObject(doc, "results", gpu_results_json(r, rq, datasheet, *have_profile ? profile : NULL));
	secs = cJSON_AddObjectToObject(doc, "suite_seconds");
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (r->suites_done & (1u << i))
			NUM(secs, mp_calib_suite_name(1u << i), r->suite_seconds[i]);

	if (dh) {
		ratios = cJSON_AddObjectToObject(doc, "ratios");
		add_ratio(ratios, "memory_bandwidth_bytes_per_second", bw, dh->memory_bandwidth_bytes_per_second);
		peaks = cJSON_AddObjectToObject(ratios, "peak_flops_per_second");
		add_ratio(peaks, "fp32", (r->suites_done & MP_CALIB_FMA) ? r->fma_fp32.best : 0,
		          dh->peak_flops_per_second[MP_DTYPE_FP32]);
		for (size_t i = 0; i < N_MATMUL; i++)
			add_ratio(peaks, mp_dtype_name(matmul_types[i]), matmul_peak(r, matmul_types[i]),
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
	               ? matmul_peak(r, MP_DTYPE_BF16) / r->cublas_bf16.flops_per_second.best
	               : 0,
	           matmul_peak(r, MP_DTYPE_BF16) > 0 && r->cublas_bf16.flops_per_second.best > 0, 0.95, true);
	add_target(targets, "default_suite_seconds", "wall time of the run (the target applies to the default suite)",
	           elapsed_seconds, rq->suites == 0 || rq->suites == MP_CALIB_GPU_DEFAULT, 20.0, false);

	warnings = cJSON_GetObjectItem(doc, "warnings");
	if (!*have_profile)
		cJSON_AddItemToArray(warnings, cJSON_CreateString("no profile stored: the memory bandwidth was not "
		                                                  "measured (add the hbm suite) and no earlier profile "
		                                                  "or datasheet gives one"));
	if (datasheet == NULL)
		cJSON_AddItemToArray(warnings, cJSON_CreateString("no datasheet profile matches this GPU's name: no "
		                                                  "measured/datasheet ratios"));
	for (size_t i = 0; i < N_MATMUL; i++) {
		const mp_calib_matmul *m = &r->matmul[matmul_types[i]];

		if ((r->suites_done & MP_CALIB_MATMUL) && m->status[0]) {
			char w[256];

			snprintf(w, sizeof(w), "matmul %s: %s", mp_dtype_name(matmul_types[i]), m->status);
			cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
		}
	}
	return MP_OK;
}

/* ----- CPU --------------------------------------------------------------------------------------------- */

mp_status mpd_calib_cpu_doc(const mp_calib_cpu_results *r, const mp_store_device *previous, const char *job_id,
                            const char *now, cJSON *doc, mp_store_device *profile, bool *have_profile)
{
	cJSON *dev, *res, *o, *p, *secs, *warnings;
	char note[2048] = "";
	double over_llc = r->info.llc_bytes ? (double)r->array_bytes / (double)r->info.llc_bytes : 0;

	drop_placeholders(doc);
	warnings = cJSON_GetObjectItem(doc, "warnings");

	memset(profile, 0, sizeof(*profile));
	if (previous)
		*profile = *previous;
	mpd_calib_profile_id(false, profile->id, sizeof(profile->id));
	snprintf(profile->name, sizeof(profile->name), "%s", r->info.name);
	snprintf(profile->vendor, sizeof(profile->vendor), "%s", r->info.vendor[0] ? r->info.vendor : "unknown");
	snprintf(profile->architecture, sizeof(profile->architecture), "%s", r->info.architecture);
	snprintf(profile->form_factor, sizeof(profile->form_factor), "host CPU, %u threads", r->threads);
	snprintf(profile->source, sizeof(profile->source), "measured");
	snprintf(profile->measured_at, sizeof(profile->measured_at), "%s", now);
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

	dev = cJSON_AddObjectToObject(doc, "device");
	cJSON_AddStringToObject(dev, "name", r->info.name);
	cJSON_AddStringToObject(dev, "vendor", r->info.vendor);
	cJSON_AddStringToObject(dev, "architecture", r->info.architecture);
	NUM(dev, "threads", r->info.threads);
	NUM(dev, "llc_bytes", r->info.llc_bytes);
	NUM(dev, "memory_bytes", r->info.memory_bytes);
	NUM(dev, "available_bytes", r->info.available_bytes);
	cJSON_AddStringToObject(dev, "blas", r->info.blas);

	res = cJSON_AddObjectToObject(doc, "results");
	if (r->suites_done & MP_CALIB_STREAM) {
		o = cJSON_AddObjectToObject(res, "stream");
		NUM(o, "array_bytes", r->array_bytes);
		NUM(o, "threads", r->threads);
		add_stat(o, "triad", &r->triad, "bytes_per_second");
		if (over_llc > 0)
			NUM(o, "array_over_llc", over_llc);
		else
			cJSON_AddNullToObject(o, "array_over_llc");
		cJSON_AddStringToObject(o, "note", "a = b + s c, doubles, 24 bytes per element (2 reads + 1 write)");
	}
	if (r->suites_done & MP_CALIB_GEMM) {
		o = cJSON_AddObjectToObject(res, "gemm");
		NUM(o, "size", r->matrix_size);
		cJSON_AddStringToObject(o, "blas", r->info.blas);
		p = add_stat(o, "dgemm", &r->dgemm, "flops_per_second");
		if (cJSON_IsObject(p))
			NUM(p, "relative_error", r->dgemm_rel_error);
		p = add_stat(o, "sgemm", &r->sgemm, "flops_per_second");
		if (cJSON_IsObject(p))
			NUM(p, "relative_error", r->sgemm_rel_error);
	}
	secs = cJSON_AddObjectToObject(doc, "suite_seconds");
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++)
		if (r->suites_done & (1u << i))
			NUM(secs, mp_calib_suite_name(1u << i), r->suite_seconds[i]);
	cJSON_AddNullToObject(doc, "ratios");
	cJSON_AddArrayToObject(doc, "targets");
	if ((r->suites_done & MP_CALIB_STREAM) && r->info.llc_bytes && r->array_bytes < 4 * r->info.llc_bytes) {
		char w[320];

		snprintf(
		    w, sizeof(w),
		    "each triad array (%.1f MiB) is less than 4x the last-level cache the OS reports (%.1f MiB): the "
		    "bandwidth may include cache hits (a virtual machine may report the host's whole cache)",
		    (double)r->array_bytes / 1048576.0, (double)r->info.llc_bytes / 1048576.0);
		cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
	}
	if (!*have_profile)
		cJSON_AddItemToArray(warnings, cJSON_CreateString("no profile stored: the memory bandwidth was not "
		                                                  "measured (add the stream suite)"));
	return MP_OK;
}

/* ----- the CLI's table --------------------------------------------------------------------------------- */

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
	return cJSON_IsNumber(o) ? o->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "4.26 TB/s", "812 GB/s", "65.1 TFLOP/s", "180 ns": decimal prefixes, as the unit says. */
static void human(char *buf, size_t len, double v, const char *unit)
{
	static const struct {
		double scale;
		const char *prefix;
	} pre[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}};

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	if (strcmp(unit, "s") == 0) {
		if (v < 1e-6)
			snprintf(buf, len, "%.1f ns", v * 1e9);
		else if (v < 1e-3)
			snprintf(buf, len, "%.2f us", v * 1e6);
		else
			snprintf(buf, len, "%.3f s", v);
		return;
	}
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		if (fabs(v) >= pre[i].scale || i + 1 == sizeof(pre) / sizeof(pre[0])) {
			snprintf(buf, len, "%.3g %s%s", v / pre[i].scale, pre[i].prefix, unit);
			return;
		}
}

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

void mpd_calib_print_table(FILE *f, const cJSON *doc)
{
	const cJSON *dev = cJSON_GetObjectItem(doc, "device"), *res = cJSON_GetObjectItem(doc, "results"), *o, *a, *e;
	const char *dsid = jstr(doc, "datasheet_id"), *devid = jstr(doc, "device_id");
	char label[96], b1[32], b2[32];

	fprintf(f, "\n%s (%s): job %s, %s, %.1f s\n", dev ? jstr(dev, "name") : "?", jstr(doc, "target"),
	        jstr(doc, "id"), jstr(doc, "state"), jnum(doc, "elapsed_seconds"));
	if (devid)
		fprintf(f, "profile stored: %s%s%s\n", devid, dsid ? ", compared with datasheet " : "",
		        dsid ? dsid : "");
	e = cJSON_GetObjectItem(doc, "error");
	if (cJSON_IsObject(e))
		fprintf(f, "error: %s\n", jstr(e, "message"));
	if (!cJSON_IsObject(res))
		return;
	fprintf(f, "\n  %-44s %14s %14s %8s\n", "figure", "best", "median", "ratio");
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
	if ((o = cJSON_GetObjectItem(res, "stream")) != NULL) {
		human(b1, sizeof(b1), jnum(o, "array_bytes"), "B");
		snprintf(label, sizeof(label), "STREAM triad, %g threads, 3 x %s arrays", jnum(o, "threads"), b1);
		row(f, label, cJSON_GetObjectItem(o, "triad"), "bytes_per_second", "B/s", NAN);
	}
	if ((o = cJSON_GetObjectItem(res, "gemm")) != NULL) {
		snprintf(label, sizeof(label), "dgemm (fp64) n = %g", jnum(o, "size"));
		row(f, label, cJSON_GetObjectItem(o, "dgemm"), "flops_per_second", "FLOP/s", NAN);
		snprintf(label, sizeof(label), "sgemm (fp32) n = %g", jnum(o, "size"));
		row(f, label, cJSON_GetObjectItem(o, "sgemm"), "flops_per_second", "FLOP/s", NAN);
	}
	o = cJSON_GetObjectItem(doc, "ratios");
	if (cJSON_IsObject(o)) {
		fprintf(f, "\n  measured / datasheet (%s):", dsid ? dsid : "?");
		if (isfinite(jnum(o, "memory_bandwidth_bytes_per_second")))
			fprintf(f, " bandwidth %.3f", jnum(o, "memory_bandwidth_bytes_per_second"));
		cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "peak_flops_per_second")) if (cJSON_IsNumber(e))
		    fprintf(f, ", %s %.3f", e->string, e->valuedouble);
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
			fprintf(f, "  %-44s %14s %14s %8s\n", jstr(e, "name"), isfinite(jnum(e, "value")) ? v : "-", l,
			        cJSON_IsBool(met) ? (cJSON_IsTrue(met) ? "yes" : "NO") : "-");
		}
	}
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "warnings")) if (cJSON_IsString(e))
	    fprintf(f, "  warning: %s\n", e->valuestring);
	fprintf(f, "\n  (B/s and FLOP/s with decimal prefixes: 1 TB/s = 1e12 bytes per second)\n");
}
