/*
 * test_calib.c: calibration. The CPU path runs for real (tiny sizes: seconds); the GPU path runs when this
 * build has CUDA and the machine a GPU, and is skipped with the reason otherwise. The GPU helper's protocol
 * (memplan's side, kernels/calib_gpu_client.c) runs in every build against a fake helper
 * (tests/fake_gpu_helper.c): results, progress, cancellation, a crash, a stale or missing helper; and the
 * process running the tests never maps the CUDA libraries. Also: the job API over
 * HTTP (202 + Location, polling, 409 while busy, DELETE cancels, 501/503 for gpu:0 without CUDA/GPU,
 * 422s naming the field), the stored measured profile and history, the CLI, and the document builder fed
 * with the H200 ground truth (tests/ref/groundtruth/h200) against the h200-sxm-141gb datasheet profile.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "../codec/mpc_calib.h"
#include "../kernels/calib_ipc.h"
#include "../service/mps_calib.h"
#include "../service/service_int.h"
#include "../model/model.h"
#include "http_util.h"
#include "refs.h"

/* Small enough for seconds on two shared cores; runs stays at the minimum the API allows. */
#define CPU_SMALL "\"options\":{\"runs\":10,\"array_bytes\":8388608,\"matrix_size\":256}"

typedef http_fixture fixture; /* a daemon on 127.0.0.1 port 0 with a fresh database (http_util.h) */


/* A job's document as a client reads it (the caller deletes it). */
static cJSON *job_doc(const mps_calib_job *job)
{
	char *text = mpc_calib_job_text(job);
	cJSON *doc = text ? cJSON_Parse(text) : NULL;

	free(text);
	return doc;
}

static double num_at(const cJSON *o, const char *path)
{
	char key[64];
	const char *p = path;

	while (o && *p) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		o = cJSON_GetObjectItemCaseSensitive(o, key);
		p += n + (p[n] == '.');
	}
	if (!cJSON_IsNumber(o))
		fail_msg("%s is not a number", path);
	return o->valuedouble;
}

static const char *str_at(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ----- units ------------------------------------------------------------------------------------------- */

static void test_suite_names(void **state)
{
	(void)state;
	for (int i = 0; i < MP_CALIB_SUITE_BITS; i++) {
		uint32_t bit = 1u << i;
		const char *name = mp_calib_suite_name(bit);

		if (name) {
			assert_int_equal(mp_calib_suite_from_name(name), bit);
			assert_int_equal(mp_calib_suite_index(bit), i);
		}
	}
	assert_int_equal(mp_calib_suite_from_name("hbm"), MP_CALIB_HBM);
	assert_int_equal(mp_calib_suite_from_name("nope"), 0);
	assert_int_equal(mp_calib_suite_from_name(NULL), 0);
	assert_null(mp_calib_suite_name(MP_CALIB_HBM | MP_CALIB_L2));
	/* the default GPU suite is every GPU suite but fit */
	assert_int_equal(MP_CALIB_GPU_DEFAULT | MP_CALIB_FIT, MP_CALIB_GPU_SUITES);
	assert_int_equal(MP_CALIB_GPU_SUITES & MP_CALIB_CPU_SUITES, 0);
}

static void test_stat_of(void **state)
{
	double a[] = {3, 1, 2}, b[] = {4, 1, 3, 2}, c[] = {5e-9, 2e-9, 9e-9};
	mp_calib_stat s;

	(void)state;
	s = mp_calib_stat_of(a, 3, true);
	assert_true(s.best == 3 && s.median == 2 && s.runs == 3);
	s = mp_calib_stat_of(b, 4, true);
	assert_true(s.best == 4 && s.median == 2.5 && s.runs == 4);
	s = mp_calib_stat_of(c, 3, false); /* latency: best is the lowest */
	assert_true(s.best == 2e-9 && s.median == 5e-9);
	s = mp_calib_stat_of(a, 0, true);
	assert_int_equal(s.runs, 0);
}

/* Every CUDA name the map knows lands on a datasheet profile the store ships; the ground truth's name too. */
static void test_datasheet_map(void **state)
{
	static const char *const names[][2] = {
	    {"NVIDIA H200", "h200-sxm-141gb"},
	    {"NVIDIA H200 NVL", "h200-nvl-141gb"},
	    {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"},
	    {"NVIDIA H100 PCIe", "h100-pcie-80gb"},
	    {"NVIDIA H100 NVL", "h100-nvl-94gb"},
	    {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
	    {"NVIDIA A100-SXM4-40GB", "a100-sxm4-40gb"},
	    {"NVIDIA A100 80GB PCIe", "a100-pcie-80gb"},
	    {"NVIDIA A10", "a10-24gb"},
	    {"NVIDIA L4", "l4-24gb"},
	    {"NVIDIA L40S", "l40s-48gb"},
	    {"Tesla T4", "t4-16gb"},
	    {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
	    {"NVIDIA GeForce RTX 4090", "rtx-4090-24gb"},
	    {"NVIDIA B200", "b200-180gb"},
	};
	cJSON *gt = ref_json("groundtruth/h200/measurements.json");
	const char *gt_name = str_at(cJSON_GetObjectItem(gt, "device"), "name");
	char dir[] = "/tmp/memplan-calib-XXXXXX", path[128];
	mp_store *s = NULL;
	mp_error err = MP_ERROR_INIT;
	mp_store_device dev;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.db", dir);
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_non_null(gt_name);
	assert_string_equal(mps_calib_datasheet_for(gt_name), "h200-sxm-141gb");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *id = mps_calib_datasheet_for(names[i][0]);

		if (id == NULL || strcmp(id, names[i][1]) != 0)
			fail_msg("%s maps to %s, expected %s", names[i][0], id ? id : "(none)", names[i][1]);
		if (mp_store_device_get(s, id, &dev, &err) != MP_OK)
			fail_msg("%s is not a stored device: %s", id, err.message);
		assert_string_equal(dev.source, "datasheet");
	}
	assert_null(mps_calib_datasheet_for("NVIDIA Quadro P1000"));
	assert_null(mps_calib_datasheet_for(NULL));
	mp_store_close(s);
	unlink(path);
	rmdir(dir);
	cJSON_Delete(gt);
}

static void test_profile_id(void **state)
{
	char id[MP_STORE_ID_MAX];

	(void)state;
	mps_calib_profile_id(true, id, sizeof(id));
	assert_true(strncmp(id, "measured-gpu0-", 14) == 0);
	mps_calib_profile_id(false, id, sizeof(id));
	assert_true(strncmp(id, "measured-cpu-", 13) == 0);
	assert_true(strlen(id) > 13 && strlen(id) < MP_STORE_ID_MAX);
	for (const char *p = id; *p; p++)
		assert_true((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-');
	/* not the id the store seeds from the ground truth */
	assert_string_not_equal(id, "h200-sxm-141gb-measured");
}

/* Reads "<key> <field> <value>" from the ground truth's CUDA C log, e.g. "memcpy_d2d GBps 4266.2". */
static double gt_log(const char *log, const char *prefix)
{
	const char *p = strstr(log, prefix);

	if (p == NULL)
		fail_msg("'%s' is not in the ground truth log", prefix);
	return strtod(p + strlen(prefix), NULL);
}

/*
 * The document builder with the H200 ground truth as input and the shipped h200-sxm-141gb datasheet
 * profile: the ratios, the measured profile and the targets must come out of those numbers.
 */
static void test_gpu_doc_from_ground_truth(void **state)
{
	cJSON *gt = ref_json("groundtruth/h200/measurements.json"), *doc, *t;
	const cJSON *dev = cJSON_GetObjectItem(gt, "device"), *torch = cJSON_GetObjectItem(gt, "ceilings_torch");
	const char *log = cJSON_GetObjectItem(gt, "microbenchmarks_cuda_c")->valuestring;
	mp_calib_gpu_results *r = calloc(1, sizeof(*r));
	mp_store_device ds, prof;
	mps_calib_job *job = calloc(1, sizeof(*job));
	char dir[] = "/tmp/memplan-calib-XXXXXX", path[128];
	mp_store *s = NULL;
	mp_error err = MP_ERROR_INIT;
	bool have = false;
	double memcpy_bps, copy_bps, fma, bf16, lat;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.db", dir);
	assert_int_equal(mp_store_open(path, mps_presets(), &s, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, "h200-sxm-141gb", &ds, &err), MP_OK);

	memcpy_bps = gt_log(log, "memcpy_d2d GBps") * 1e9;
	copy_bps = gt_log(log, "copy_f4 grid 4224 GBps") * 1e9;
	fma = gt_log(log, "fma_fp32 TFLOPs") * 1e12;
	lat = gt_log(log, "latency span_bytes 1073741824 ns") * 1e-9;
	bf16 = num_at(torch, "gemm_TFLOPs.bf16") * 1e12;
	snprintf(r->info.name, sizeof(r->info.name), "%s", str_at(dev, "name"));
	r->info.memory_bytes = (uint64_t)num_at(dev, "mem_get_info_total");
	r->info.free_bytes = (uint64_t)num_at(dev, "mem_get_info_free");
	r->info.sm_count = (uint32_t)num_at(dev, "sms");
	r->info.l2_cache_bytes = (uint64_t)num_at(dev, "l2");
	r->info.cc_major = 9;
	r->context_bytes = r->info.memory_bytes - r->info.free_bytes;
	r->runs = 20;
	r->suites_done = MP_CALIB_MEMORY | MP_CALIB_HBM | MP_CALIB_FMA | MP_CALIB_MATMUL | MP_CALIB_LATENCY;
	r->memcpy_d2d = (mp_calib_stat){memcpy_bps, memcpy_bps, 20};
	r->copy = (mp_calib_stat){copy_bps, copy_bps, 20};
	r->fma_fp32 = (mp_calib_stat){fma, fma, 20};
	r->matmul[MP_DTYPE_BF16].flops_per_second = (mp_calib_stat){bf16, bf16, 20};
	r->matmul[MP_DTYPE_BF16].size = 8192;
	snprintf(r->matmul[MP_DTYPE_FP8_E4M3].status, sizeof(r->matmul[0].status), "not measured in this test");
	r->cublas_bf16.flops_per_second = (mp_calib_stat){bf16, bf16, 20};
	r->cublas_bf16.size = 8192;
	r->latency_hbm = (mp_calib_stat){lat, lat, 20};
	r->latency_hbm_span_bytes = UINT64_C(1) << 30;
	mps_calib_gpu_profile(r, &ds, NULL, "cal-test", "2026-11-29T00:00:00Z", 4.2, &prof, &have);
	assert_true(have);
	/* the job's view as a finished run leaves it, and its document as a client reads it */
	assert_non_null(job);
	job->rq.gpu = true;
	snprintf(job->state, sizeof(job->state), "succeeded");
	job->elapsed_seconds = 4.2;
	job->have_results = true;
	job->gpu = r;
	mps_calib_gpu_figures_of(r, &job->gpu_figures);
	job->have_datasheet = true;
	job->datasheet = ds;
	job->have_profile = true;
	job->profile = prof;
	doc = job_doc(job);
	assert_non_null(doc);
	/* the profile: measured figures where measured, the datasheet's elsewhere (and said so) */
	assert_string_equal(prof.source, "measured");
	assert_true(strncmp(prof.id, "measured-gpu0-", 14) == 0);
	assert_true(prof.hw.memory_bandwidth_bytes_per_second == memcpy_bps); /* the better of copy, memcpy */
	assert_true(prof.hw.peak_flops_per_second[MP_DTYPE_FP32] == fma);
	assert_true(prof.hw.peak_flops_per_second[MP_DTYPE_BF16] == bf16);
	assert_true(prof.hw.peak_flops_per_second[MP_DTYPE_FP64] == ds.hw.peak_flops_per_second[MP_DTYPE_FP64]);
	assert_true(prof.hw.peak_flops_per_second[MP_DTYPE_FP8_E4M3] == ds.hw.peak_flops_per_second[MP_DTYPE_FP8_E4M3]);
	assert_non_null(strstr(prof.source_note, "fp64"));
	assert_non_null(strstr(prof.source_note, "h200-sxm-141gb"));
	/* cudaMemGetInfo of the ground truth = the store's usable memory and the planner's context default */
	assert_true(prof.hw.usable_memory_bytes == ds.hw.usable_memory_bytes);
	assert_true(prof.hw.cuda_context_bytes == MP_DEFAULT_CUDA_CONTEXT_BYTES);
	/* ratios: measured / datasheet */
	assert_true(ref_close(num_at(doc, "ratios.memory_bandwidth_bytes_per_second"),
	                      memcpy_bps / ds.hw.memory_bandwidth_bytes_per_second, 1e-12));
	assert_true(ref_close(num_at(doc, "ratios.peak_flops_per_second.fp32"),
	                      fma / ds.hw.peak_flops_per_second[MP_DTYPE_FP32], 1e-12));
	assert_true(num_at(doc, "ratios.memory_bandwidth_bytes_per_second") < 0.95); /* 4.27 of 4.8 TB/s */
	assert_true(num_at(doc, "ratios.peak_flops_per_second.bf16") < 0.85);        /* 779 of 989 */
	/* Little's law from the same numbers */
	assert_true(ref_close(num_at(doc, "results.latency.littles_law.bytes_in_flight"), memcpy_bps * lat, 1e-12));
	/* targets: the ground truth's plain float4 copy reached 93% of cudaMemcpy (misses 95%); its FMA made it */
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(doc, "targets"))
	{
		const char *name = str_at(t, "name");
		const cJSON *met = cJSON_GetObjectItem(t, "met");

		if (strcmp(name, "copy_over_memcpy_d2d") == 0) {
			assert_true(ref_close(num_at(t, "value"), copy_bps / memcpy_bps, 1e-12));
			assert_true(cJSON_IsFalse(met));
		} else if (strcmp(name, "fma_fp32_over_datasheet") == 0) {
			assert_true(cJSON_IsTrue(met));
		} else if (strcmp(name, "bf16_cublaslt_over_cublas") == 0) {
			assert_true(ref_close(num_at(t, "value"), 1.0, 1e-12));
		} else if (strcmp(name, "default_suite_seconds") == 0) {
			assert_true(cJSON_IsTrue(met));
		}
	}
	/* the stored profile round-trips */
	assert_int_equal(mp_store_device_put(s, &prof, &err), MP_OK);
	assert_int_equal(mp_store_device_get(s, prof.id, &ds, &err), MP_OK);
	assert_string_equal(ds.source, "measured");
	assert_true(ds.hw.memory_bandwidth_bytes_per_second == memcpy_bps);
	mp_store_close(s);
	unlink(path);
	rmdir(dir);
	cJSON_Delete(doc);
	cJSON_Delete(gt);
	mps_calib_job_free(job); /* frees r too */
}

/* ----- the CPU path, for real -------------------------------------------------------------------------- */

static bool stop_at_first(void *ctx, double fraction, const char *suite)
{
	int *calls = ctx;

	(void)fraction;
	(void)suite;
	return (*calls)++ < 1;
}

static void test_cpu_run(void **state)
{
	mp_calib_cpu_options o = {0, 10, 2, 8u << 20, 256};
	mp_calib_cpu_results *r = calloc(1, sizeof(*r));
	mp_calib_ctl ctl = {stop_at_first, NULL};
	mp_error err = MP_ERROR_INIT;
	int calls = 0;

	(void)state;
	assert_int_equal(mp_calib_cpu_run(&o, NULL, r, &err), MP_OK);
	assert_int_equal(r->suites_done, MP_CALIB_STREAM | MP_CALIB_GEMM);
	assert_false(r->cancelled);
	assert_int_equal(r->triad.runs, 10);
	assert_true(r->triad.best >= r->triad.median && r->triad.median > 1e8); /* > 0.1 GB/s */
	assert_true(r->dgemm.best >= r->dgemm.median && r->dgemm.median > 1e8); /* > 0.1 GFLOP/s */
	assert_true(r->sgemm.best > 1e8);
	assert_true(r->dgemm_rel_error < 1e-10 && r->sgemm_rel_error < 1e-4);
	assert_true(r->array_bytes == 8u << 20 && r->threads == 2 && r->matrix_size == 256);
	assert_true(r->info.threads >= 1 && r->info.memory_bytes > 0);
	assert_non_null(strstr(r->info.blas, "OpenBLAS"));

	/* cancelled from the progress callback: stops, frees, reports cancelled */
	ctl.ctx = &calls;
	assert_int_equal(mp_calib_cpu_run(&o, &ctl, r, &err), MP_OK);
	assert_true(r->cancelled);
	assert_int_equal(r->suites_done, 0);

	o.runs = 5;
	assert_int_equal(mp_calib_cpu_run(&o, NULL, r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/options/runs");
	o.runs = 10;
	o.suites = MP_CALIB_HBM;
	assert_int_equal(mp_calib_cpu_run(&o, NULL, r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/suites");
	/* a product too long to cancel, and arrays the machine cannot hold, are refused before anything runs */
	o.suites = MP_CALIB_GEMM;
	o.matrix_size = MP_CALIB_CPU_MAX_MATRIX + 64;
	assert_int_equal(mp_calib_cpu_run(&o, NULL, r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/options/matrix_size");
	o.matrix_size = 256;
	o.suites = MP_CALIB_STREAM;
	o.array_bytes = UINT64_C(1) << 40; /* 3 TiB in all */
	assert_int_equal(mp_calib_cpu_run(&o, NULL, r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/options/array_bytes");
	assert_non_null(strstr(err.message, "a sixteenth of the memory available"));
	free(r);
}

/* ----- the GPU path: real where there is one ----------------------------------------------------------- */

/* True when GPU tests can run; otherwise says why and skips. */
static bool gpu_or_skip(void)
{
	mp_calib_gpu_info gi;
	mp_error err = MP_ERROR_INIT;
	mp_status st = mp_calib_gpu_probe(&gi, &err);

	if (st == MP_OK)
		return true;
	assert_true(st == (mp_calib_built_in() ? MP_ENODEV : MP_ENOTBUILTIN));
	assert_true(err.message[0] != '\0');
	/* in a CUDA build the answer comes from the helper's CUDA calls, not from a helper that failed to start */
	if (mp_calib_built_in())
		assert_null(strstr(err.message, "GPU helper"));
	print_message("GPU test skipped: %s\n", err.message);
	return false;
}

static void test_gpu_run(void **state)
{
	mp_calib_gpu_options o;
	mp_calib_gpu_results *r;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	if (!gpu_or_skip()) {
		skip();
		return;
	}
	r = calloc(1, sizeof(*r));
	memset(&o, 0, sizeof(o));
	o.suites = MP_CALIB_GPU_SUITES;
	o.runs = 10;
	o.array_bytes = 256u << 20;
	o.matrix_size = 1024;
	o.fit_weights_bytes = 512u << 20;
	o.fit_kv_cache_bytes = 256u << 20;
	o.fit_workspace_bytes = 64u << 20;
	if (mp_calib_gpu_run(&o, NULL, r, &err) != MP_OK)
		fail_msg("GPU run failed: %s", err.message);
	assert_int_equal(r->suites_done, MP_CALIB_GPU_SUITES);
	assert_true(r->info.memory_bytes > r->info.free_bytes && r->context_bytes > 0);
	assert_true(r->memcpy_d2d.best > 1e10 && r->copy.best > 1e10 && r->read.best > 1e10);
	assert_true(r->write.best > 1e10 && r->triad.best > 1e10);
	assert_true(r->strided[0].best > r->strided[MP_CALIB_STRIDE_COUNT - 1].best);
	assert_true(r->l2_read.best > 0 && r->fma_fp32.best > 1e11);
	assert_true(r->smem[0].best > r->smem[MP_CALIB_SMEM_STRIDE_COUNT - 1].best); /* 1-way vs 32-way */
	assert_true(r->smem_tile_padded.best > r->smem_tile_column.best);
	assert_true(r->latency_hbm.median > r->latency_l2.median && r->latency_l2.median > 1e-8);
	assert_true(r->matmul[MP_DTYPE_BF16].flops_per_second.best > 0);
	assert_true(r->matmul[MP_DTYPE_BF16].rel_error < 1e-2);
	assert_true(r->intensity[MP_CALIB_INTENSITY_COUNT - 1].flops_per_second.best >
	            r->intensity[0].flops_per_second.best);
	assert_true(r->fit_allocated && r->fit_free_after_bytes < r->fit_free_before_bytes);
	free(r);
}

/* ----- the GPU helper: memplan's side of the protocol, against the fake helper ---------------------------- */

static void fake_mode(const char *mode)
{
	assert_int_equal(setenv("MEMPLAN_FAKE_HELPER_MODE", mode, 1), 0);
}

static void test_helper_probe_and_run(void **state)
{
	mp_calib_gpu_info gi;
	mp_calib_gpu_options o;
	mp_calib_gpu_results *r = calloc(1, sizeof(*r));
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_non_null(r);
	fake_mode("ok");
	assert_int_equal(mp_calib_helper_probe(MP_TEST_FAKE_GPU_HELPER, &gi, &err), MP_OK);
	assert_string_equal(gi.name, "Fake GPU");
	assert_true(gi.memory_bytes == (UINT64_C(80) << 30) && gi.cc_major == 9);
	memset(&o, 0, sizeof(o));
	o.suites = MP_CALIB_HBM;
	o.runs = 12;
	assert_int_equal(mp_calib_helper_run(MP_TEST_FAKE_GPU_HELPER, &o, NULL, r, &err), MP_OK);
	assert_string_equal(r->info.name, "Fake GPU");
	assert_int_equal(r->suites_done, MP_CALIB_HBM);
	assert_int_equal(r->runs, 12); /* the options crossed over, the results came back whole */
	assert_true(r->copy.best == 4.0e12 && r->copy.median == 3.9e12 && r->copy.runs == 12);
	assert_false(r->cancelled);
	/* a failure inside the helper arrives with its status and message */
	fake_mode("fail");
	assert_int_equal(mp_calib_helper_run(MP_TEST_FAKE_GPU_HELPER, &o, NULL, r, &err), MP_EINTERNAL);
	assert_non_null(strstr(err.message, "cudaMalloc(&a, 1 GiB) failed: fake out of memory"));
	/* 100 KiB on its stderr first: read while waiting, never blocking the helper */
	fake_mode("noisy");
	assert_int_equal(mp_calib_helper_run(MP_TEST_FAKE_GPU_HELPER, &o, NULL, r, &err), MP_OK);
	assert_int_equal(r->runs, 12);
	free(r);
}

typedef struct progress_log {
	int calls, stop_after;
	double last;
	char suite[32];
} progress_log;

static bool log_progress(void *ctx, double fraction, const char *suite)
{
	progress_log *l = ctx;

	assert_true(fraction >= l->last && fraction <= 1.0); /* never backwards */
	l->last = fraction;
	snprintf(l->suite, sizeof(l->suite), "%s", suite);
	return ++l->calls < l->stop_after;
}

static void test_helper_progress_and_cancel(void **state)
{
	mp_calib_gpu_options o;
	mp_calib_gpu_results *r = calloc(1, sizeof(*r));
	mp_error err = MP_ERROR_INIT;
	progress_log log = { 0, 1000, 0, "" };
	mp_calib_ctl ctl = { log_progress, &log };

	(void)state;
	assert_non_null(r);
	memset(&o, 0, sizeof(o));
	o.suites = MP_CALIB_HBM;
	fake_mode("ok");
	assert_int_equal(mp_calib_helper_run(MP_TEST_FAKE_GPU_HELPER, &o, &ctl, r, &err), MP_OK);
	assert_true(log.calls >= 5); /* 0, 0.25, ..., 1: each passed on */
	assert_true(log.last == 1.0);
	assert_string_equal(log.suite, "done");
	/* the caller says stop on the third report: the helper hears CANCEL and answers a cancelled run */
	memset(&log, 0, sizeof(log));
	log.stop_after = 3;
	fake_mode("slow");
	assert_int_equal(mp_calib_helper_run(MP_TEST_FAKE_GPU_HELPER, &o, &ctl, r, &err), MP_OK);
	assert_true(r->cancelled);
	assert_int_equal(log.calls, 3);
	assert_string_equal(log.suite, "hbm");
	free(r);
}

static void test_helper_failures(void **state)
{
	mp_calib_gpu_info gi;
	mp_calib_gpu_options o;
	mp_calib_gpu_results *r = calloc(1, sizeof(*r));
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_non_null(r);
	memset(&o, 0, sizeof(o));
	/* missing: 503 material, with the path, the reason and where it is looked for */
	assert_int_equal(mp_calib_helper_probe("/nonexistent/memplan-gpu", &gi, &err), MP_ENODEV);
	assert_non_null(strstr(err.message, "cannot start the GPU helper /nonexistent/memplan-gpu: No such file"));
	assert_non_null(strstr(err.message, "MEMPLAN_GPU_HELPER"));
	assert_int_equal(mp_calib_helper_run("/nonexistent/memplan-gpu", &o, NULL, r, &err), MP_ENODEV);
	/* another build's helper is refused, never misread */
	fake_mode("badhello");
	assert_int_equal(mp_calib_helper_probe(MP_TEST_FAKE_GPU_HELPER, &gi, &err), MP_ENODEV);
	assert_non_null(strstr(err.message, "is not this build's GPU helper (protocol 999"));
	/* one that exits without a word, and one that dies mid-run, say how they ended and their last words */
	fake_mode("silent");
	assert_int_equal(mp_calib_helper_probe(MP_TEST_FAKE_GPU_HELPER, &gi, &err), MP_ENODEV);
	assert_non_null(strstr(err.message, "exited with status 3 before it answered"));
	fake_mode("crash");
	assert_int_equal(mp_calib_helper_run(MP_TEST_FAKE_GPU_HELPER, &o, NULL, r, &err), MP_EINTERNAL);
	assert_non_null(strstr(err.message, "was killed by signal 6"));
	assert_non_null(strstr(err.message, "fake helper: dying on purpose"));
	assert_int_equal(mp_calib_helper_probe(MP_TEST_FAKE_GPU_HELPER, &gi, &err), MP_ENODEV);
	assert_non_null(strstr(err.message, "was killed by signal 6"));
	free(r);
}

/* The process that served health and gpu:0 requests (this one: the daemon runs in-process) has not mapped the
 * CUDA runtime, cuBLAS(Lt) or the driver, and has no CUDA symbol: those live in the helper only. */
static void assert_no_cuda_here(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "libcudart") || strstr(line, "libcublas") || strstr(line, "libcuda.so"))
			fail_msg("this process mapped a CUDA library: %s", line);
	fclose(f);
}

/* ----- HTTP -------------------------------------------------------------------------------------------- */

static void post(fixture *f, const char *body, http_resp *r)
{
	http_do(&f->d, "POST", "/v1/calibrations", body, "application/json", NULL, r);
}

/* Polls the job until it has finished; returns its final document (caller frees the response). */
static void wait_job(fixture *f, const char *location, http_resp *r)
{
	for (int i = 0; i < 1200; i++) {
		const char *state;
		struct timespec ts = {0, 100 * 1000 * 1000};

		http_do(&f->d, "GET", location, NULL, NULL, NULL, r);
		assert_int_equal(r->status, 200);
		state = str_at(r->json, "state");
		assert_non_null(state);
		if (strcmp(state, "queued") != 0 && strcmp(state, "running") != 0)
			return;
		http_resp_free(r);
		nanosleep(&ts, NULL);
	}
	fail_msg("calibration %s did not finish in 120 s", location);
}

static void expect_problem(fixture *f, const char *method, const char *path, const char *body, long status,
                           const char *field)
{
	http_resp r;

	http_do(&f->d, method, path, body, body ? "application/json" : NULL, NULL, &r);
	if (r.status != status)
		fail_msg("%s %s %s: got %ld, expected %ld: %s", method, path, body ? body : "", r.status, status,
		         r.body ? r.body : "");
	assert_string_equal(r.content_type, "application/problem+json");
	if (field)
		assert_string_equal(http_problem_field(&r), field);
	http_resp_free(&r);
}

static void test_http_cpu_job(void **state)
{
	fixture *f = *state;
	http_resp r, g, dev;
	char location[256], path[128], first[64];
	const char *id, *device_id;

	post(f, "{\"target\":\"cpu\"," CPU_SMALL "}", &r);
	assert_int_equal(r.status, 202);
	id = str_at(r.json, "id");
	assert_non_null(id);
	snprintf(location, sizeof(location), "/v1/calibrations/%s", id);
	assert_string_equal(r.location, location);
	assert_string_equal(str_at(r.json, "target"), "cpu");
	assert_non_null(cJSON_GetObjectItem(r.json, "progress"));
	snprintf(first, sizeof(first), "%s", id);
	http_resp_free(&r);

	wait_job(f, location, &g);
	assert_string_equal(str_at(g.json, "state"), "succeeded");
	assert_true(num_at(g.json, "progress.percent") == 100.0);
	device_id = str_at(g.json, "device_id");
	assert_non_null(device_id);
	assert_true(strncmp(device_id, "measured-cpu-", 13) == 0);
	assert_true(num_at(g.json, "results.stream.triad.best_bytes_per_second") > 0);
	assert_true(num_at(g.json, "results.gemm.dgemm.best_flops_per_second") > 0);

	/* the stored profile carries exactly the measured figures */
	snprintf(path, sizeof(path), "/v1/devices/%s", device_id);
	http_do(&f->d, "GET", path, NULL, NULL, NULL, &dev);
	assert_int_equal(dev.status, 200);
	assert_string_equal(str_at(dev.json, "source"), "measured");
	assert_non_null(str_at(dev.json, "measured_at"));
	assert_true(num_at(dev.json, "memory_bandwidth_bytes_per_second") ==
	            num_at(g.json, "results.stream.triad.best_bytes_per_second"));
	assert_true(num_at(dev.json, "peak_flops_per_second.fp64") ==
	            num_at(g.json, "results.gemm.dgemm.best_flops_per_second"));
	assert_true(num_at(dev.json, "peak_flops_per_second.fp32") ==
	            num_at(g.json, "results.gemm.sgemm.best_flops_per_second"));
	http_resp_free(&dev);

	/* /metrics publishes the measured figures as gauges labelled with the profile */
	{
		http_resp m;
		char line[256];

		http_do(&f->d, "GET", "/metrics", NULL, NULL, NULL, &m);
		assert_int_equal(m.status, 200);
		snprintf(line, sizeof(line), "memplan_calibration_memory_bandwidth_bytes_per_second{device=\"%s\"} ",
			 device_id);
		assert_non_null(strstr(m.body, line));
		snprintf(line, sizeof(line), "memplan_calibration_peak_flops_per_second{device=\"%s\",dtype=\"fp64\"} ",
			 device_id);
		assert_non_null(strstr(m.body, line));
		http_resp_free(&m);
	}
	http_resp_free(&g);

	/* a second run: a new row in the history, the first still readable; with --node-labels (the node agent's
	 * DCGM-aligned identity of this GPU) every calibration gauge carries them */
	snprintf(f->d.cfg.node_labels, sizeof(f->d.cfg.node_labels), "Hostname=gpu-node-7,gpu=0,UUID=GPU-d35d5b4e-05b7-"
		 "b7c3-26ab-1f7d5ac5c8cc,modelName=NVIDIA A100 80GB PCIe");
	post(f, "{\"target\":\"cpu\",\"suites\":[\"stream\"]," CPU_SMALL "}", &r);
	assert_int_equal(r.status, 202);
	assert_string_not_equal(str_at(r.json, "id"), first);
	wait_job(f, r.location, &g);
	f->d.cfg.node_labels[0] = '\0';
	assert_string_equal(str_at(g.json, "state"), "succeeded");
	{
		http_resp m;
		char line[400];

		http_do(&f->d, "GET", "/metrics", NULL, NULL, NULL, &m);
		snprintf(line, sizeof(line),
			 "memplan_calibration_memory_bandwidth_bytes_per_second{device=\"%s\",Hostname=\"gpu-node-7\",gpu=\"0\","
			 "UUID=\"GPU-d35d5b4e-05b7-b7c3-26ab-1f7d5ac5c8cc\",modelName=\"NVIDIA A100 80GB PCIe\"} ",
			 str_at(g.json, "device_id"));
		assert_non_null(strstr(m.body, line));
		http_resp_free(&m);
	}
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(g.json, "results"), "gemm"));
	http_resp_free(&g);
	http_resp_free(&r);
	http_do(&f->d, "GET", location, NULL, NULL, NULL, &g);
	assert_int_equal(g.status, 200);
	assert_string_equal(str_at(g.json, "id"), first);
	assert_string_equal(str_at(g.json, "state"), "succeeded");
	http_resp_free(&g);
}

static void test_http_busy_and_cancel(void **state)
{
	fixture *f = *state;
	http_resp r, c, g;

	/* long enough to still be running when the next requests arrive (cancelled long before its end) */
	post(f, "{\"target\":\"cpu\",\"suites\":[\"stream\"],\"options\":{\"runs\":1000,\"array_bytes\":16777216}}",
	     &r);
	assert_int_equal(r.status, 202);
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\"," CPU_SMALL "}", 409, "/target");

	http_do(&f->d, "DELETE", r.location, NULL, NULL, NULL, &c);
	assert_int_equal(c.status, 202);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(c.json, "cancel_requested")));
	http_resp_free(&c);
	wait_job(f, r.location, &g);
	assert_string_equal(str_at(g.json, "state"), "cancelled");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(g.json, "device_id")));
	assert_string_equal(str_at(cJSON_GetObjectItem(g.json, "error"), "status"), "cancelled");
	http_resp_free(&g);
	/* finished: nothing to cancel */
	expect_problem(f, "DELETE", r.location, NULL, 409, NULL);
	http_resp_free(&r);
	/* the slot is free again */
	post(f, "{\"target\":\"cpu\"," CPU_SMALL "}", &r);
	assert_int_equal(r.status, 202);
	wait_job(f, r.location, &g);
	assert_string_equal(str_at(g.json, "state"), "succeeded");
	http_resp_free(&g);
	http_resp_free(&r);
}

/* Past runs come back from the store: a manager with nothing in memory (a restarted daemon) still answers,
 * and a row left "running" by a daemon that died reads as failed (interrupted). */
static void test_history_from_store(void **state)
{
	fixture *f = *state;
	mps_calib_jobs *fresh = NULL;
	mps_calib_job *job = NULL;
	mp_store_calibration row;
	http_resp r, g;
	cJSON *doc = NULL;
	mp_error err = MP_ERROR_INIT;
	char id[64], *warn;

	/* gemm alone on a fresh database measures no bandwidth: no profile is stored, and the job says why */
	post(f, "{\"target\":\"cpu\",\"suites\":[\"gemm\"]," CPU_SMALL "}", &r);
	assert_int_equal(r.status, 202);
	wait_job(f, r.location, &g);
	assert_string_equal(str_at(g.json, "state"), "succeeded");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(g.json, "device_id")));
	warn = cJSON_PrintUnformatted(cJSON_GetObjectItem(g.json, "warnings"));
	assert_non_null(strstr(warn, "no profile stored"));
	cJSON_free(warn);
	http_resp_free(&g);
	http_resp_free(&r);

	post(f, "{\"target\":\"cpu\"," CPU_SMALL "}", &r);
	assert_int_equal(r.status, 202);
	snprintf(id, sizeof(id), "%s", str_at(r.json, "id"));
	wait_job(f, r.location, &g);
	assert_string_equal(str_at(g.json, "state"), "succeeded");
	assert_non_null(str_at(g.json, "device_id"));

	assert_int_equal(mps_calib_jobs_create(f->d.svc, mpc_calib_job_text, &fresh, &err), MP_OK);
	assert_int_equal(mps_calib_get(fresh, id, &job, &err), MP_OK);
	doc = job_doc(job);
	mps_calib_job_free(job);
	assert_string_equal(str_at(doc, "state"), "succeeded");
	assert_string_equal(str_at(doc, "device_id"), str_at(g.json, "device_id"));
	assert_true(num_at(doc, "results.gemm.sgemm.best_flops_per_second") ==
	            num_at(g.json, "results.gemm.sgemm.best_flops_per_second"));
	cJSON_Delete(doc);
	assert_int_equal(mps_calib_cancel(fresh, id, &job, &err), MP_ECONFLICT);

	memset(&row, 0, sizeof(row));
	snprintf(row.id, sizeof(row.id), "cal-deadbeefdeadbeef");
	snprintf(row.target, sizeof(row.target), "gpu:0");
	snprintf(row.state, sizeof(row.state), "running");
	assert_int_equal(mp_store_calibration_save(mps_store(f->d.svc), &row, &err), MP_OK);
	assert_int_equal(mps_calib_get(fresh, row.id, &job, &err), MP_OK);
	doc = job_doc(job);
	mps_calib_job_free(job);
	assert_string_equal(str_at(doc, "state"), "failed");
	assert_string_equal(str_at(cJSON_GetObjectItem(doc, "error"), "status"), "interrupted");
	cJSON_Delete(doc);
	assert_int_equal(mps_calib_get(fresh, "cal-0123456789abcdef", &job, &err), MP_ENOTFOUND);
	mps_calib_jobs_destroy(fresh);
	http_resp_free(&g);
	http_resp_free(&r);
}

/* gpu:0: 501 in a build without CUDA, 503 with CUDA's reason without a GPU, 202 with one. */
static void test_http_gpu_target(void **state)
{
	fixture *f = *state;
	http_resp r, g;

	post(f, "{\"target\":\"gpu:0\",\"suites\":[\"memory\"]}", &r);
	if (!mp_calib_built_in()) {
		assert_int_equal(r.status, 501);
		assert_string_equal(http_problem_field(&r), "/target");
		assert_non_null(strstr(r.body, "not built in"));
	} else if (r.status == 503) {
		assert_string_equal(http_problem_field(&r), "/target");
		assert_non_null(strstr(r.body, "no usable GPU"));
		print_message("gpu:0 answered 503 as it must without a GPU: %s\n", r.body);
	} else {
		assert_int_equal(r.status, 202);
		wait_job(f, r.location, &g);
		assert_string_equal(str_at(g.json, "state"), "succeeded");
		assert_true(num_at(g.json, "results.memory.total_bytes") > 0);
		http_resp_free(&g);
	}
	http_resp_free(&r);
	/* health's probe ran too; both in the helper, which went with its answer */
	http_do(&f->d, "GET", "/v1/health", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	assert_no_cuda_here();
}

static void test_http_validation(void **state)
{
	fixture *f = *state;

	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"gpu:1\"}", 422, "/target");
	expect_problem(f, "POST", "/v1/calibrations", "{}", 422, "/target");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\",\"suites\":[\"hbm\"]}", 422, "/suites/0");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\",\"suites\":[\"stream\",7]}", 422,
	               "/suites/1");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\",\"suites\":[]}", 422, "/suites");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\",\"options\":{\"runs\":5}}", 422,
	               "/options/runs");
	/* a cpu product too long to cancel: refused before it starts (gpu:0 takes up to 16384) */
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\",\"options\":{\"matrix_size\":4112}}", 422,
	               "/options/matrix_size");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\",\"options\":{\"bogus\":1}}", 422,
	               "/options/bogus");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"cpu\",\"extra\":1}", 422, "/extra");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"gpu:0\",\"options\":{\"threads\":2}}", 422,
	               "/options/threads");
	expect_problem(f, "POST", "/v1/calibrations",
	               "{\"target\":\"cpu\",\"fit_plan\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\","
	               "\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}}",
	               422, "/fit_plan");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":\"gpu:0\",\"suites\":[\"fit\"]}", 422, "/fit_plan");
	expect_problem(f, "POST", "/v1/calibrations",
	               "{\"target\":\"gpu:0\",\"fit_plan\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\","
	               "\"kv_cache_dtype\":\"bf16\",\"batch_size\":0,\"sequence_length\":4096}}",
	               422, "/fit_plan/batch_size");
	expect_problem(f, "POST", "/v1/calibrations", "{\"target\":", 400, NULL);
	expect_problem(f, "GET", "/v1/calibrations/cal-0000000000000000", NULL, 404, NULL);
	expect_problem(f, "DELETE", "/v1/calibrations/cal-0000000000000000", NULL, 404, NULL);
}

/* fit_plan is an inference plan request: its bytes are the plan's memory block, the prefill workspace included
 * (once named "workspace_bytes", a member the plan never had, so the check allocated no workspace). */
static void test_fit_plan_decode(void **state)
{
	fixture *f = *state;
	mps_calib_request rq;
	mps_inference_request *fit = malloc(sizeof(*fit));
	mps_inference_plan *plan = malloc(sizeof(*plan));
	bool has_fit = false;
	mp_error err = MP_ERROR_INIT;
	cJSON *body = cJSON_Parse("{\"target\":\"gpu:0\",\"fit_plan\":{\"model\":\"llama-3-8b\",\"weight_dtype\":"
	                          "\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}}");

	assert_int_equal(mpc_calib_decode(body, &rq, fit, &has_fit, &err), MP_OK);
	assert_true(has_fit);
	assert_int_equal(mps_plan_inference(f->d.svc, fit, plan, &err), MP_OK);
	mps_calib_fit_from_plan(plan, &rq);
	assert_true(rq.gpu && rq.has_fit);
	assert_true(rq.fit_workspace_bytes == plan->mem.activations_bytes && rq.fit_workspace_bytes > 0);
	assert_int_equal(rq.suites, MP_CALIB_GPU_DEFAULT | MP_CALIB_FIT);
	/* the skeleton issue's figures for this plan (README, test_http) */
	assert_true(rq.fit_weights_bytes == UINT64_C(16060522496));
	assert_true(rq.fit_kv_cache_bytes == UINT64_C(536870912));
	assert_true(rq.fit_overhead_bytes == MP_DEFAULT_CUDA_CONTEXT_BYTES);
	assert_true(rq.fit_total_bytes ==
	            rq.fit_weights_bytes + rq.fit_kv_cache_bytes + rq.fit_workspace_bytes + rq.fit_overhead_bytes);
	cJSON_Delete(body);
	free(plan);
	free(fit);
}

/* The CLI's table of job, as text (caller frees). */
static char *table_text(const mps_calib_job *job)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	mpc_calib_print_table(f, job);
	fclose(f);
	return text;
}

/* A job whose profile cannot be stored fails with the store's own words; an earlier lookup that found nothing (no
 * previous profile, no datasheet for a CPU) is never given as the cause. Regression: the worker once reported the
 * stale "no device" text of a lookup, and formatted a message into itself when that was empty. */
static void test_store_failure_reason(void **state)
{
	char dir[] = "/tmp/memplan-calib-XXXXXX", path[128];
	mps_service *svc = NULL;
	mps_calib_jobs *jobs = NULL;
	mps_calib_job *job = NULL;
	mps_calib_request rq;
	sqlite3 *db = NULL;
	mp_error err = MP_ERROR_INIT;
	char id[MPS_CALIB_ID_MAX];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.db", dir);
	assert_int_equal(mps_open(path, &svc, &err), MP_OK);
	/* another connection makes every new device row fail, as a full disk or a locked file would */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "CREATE TRIGGER no_new_devices BEFORE INSERT ON devices BEGIN "
				      "SELECT RAISE(ABORT, 'the test refuses new devices'); END;",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(mps_calib_jobs_create(svc, mpc_calib_job_text, &jobs, &err), MP_OK);
	memset(&rq, 0, sizeof(rq));
	rq.suites = MP_CALIB_STREAM;
	rq.runs = 10;
	rq.array_bytes = 8u << 20;
	rq.threads = 2;
	assert_int_equal(mps_calib_start(jobs, &rq, id, &err), MP_OK);
	assert_int_equal(mps_calib_wait(jobs, id, NULL, NULL, &err), MP_OK);
	assert_int_equal(mps_calib_get(jobs, id, &job, &err), MP_OK);
	assert_string_equal(job->state, "failed");
	assert_true(job->have_profile); /* measured: only the storing failed */
	assert_non_null(strstr(job->error_message, "storing the profile failed"));
	assert_non_null(strstr(job->error_message, "the test refuses new devices"));
	assert_null(strstr(job->error_message, "no device"));
	assert_string_equal(job->device_id, "");
	{
		/* the CLI's table of the failed job prints its reason and no "(null)" */
		char *text = table_text(job);

		assert_non_null(strstr(text, "error: measured, but storing the profile failed"));
		assert_null(strstr(text, "(null)"));
		free(text);
	}
	mps_calib_job_free(job);
	job = NULL;
	/* a job that never ran (no figures, no device) prints as well */
	job = calloc(1, sizeof(*job));
	assert_non_null(job);
	snprintf(job->id, sizeof(job->id), "cal-test");
	snprintf(job->state, sizeof(job->state), "failed");
	snprintf(job->error_status, sizeof(job->error_status), "interrupted");
	{
		char *text = table_text(job);

		assert_null(strstr(text, "(null)"));
		assert_non_null(strstr(text, "? (cpu): job cal-test, failed"));
		free(text);
	}
	mps_calib_job_free(job);
	mps_calib_jobs_destroy(jobs);
	mps_close(svc);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

/* ----- CLI --------------------------------------------------------------------------------------------- */

static void test_cli(void **state)
{
	const char *bin = getenv("MEMPLAN_BIN");
	char cmd[512], dir[] = "/tmp/memplan-cli-XXXXXX", *out = NULL;
	size_t len = 0, n;
	char buf[4096];
	FILE *p;
	cJSON *doc;
	int rc;

	(void)state;
	if (bin == NULL)
		bin = "build/memplan";
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
	         "%s calibrate --cpu --json --db %s/m.db --runs 10 --array-bytes 8388608 --matrix-size 256 2>/dev/null",
	         bin, dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		char *grown = realloc(out, len + n + 1);

		assert_non_null(grown);
		out = grown;
		memcpy(out + len, buf, n);
		len += n;
		out[len] = '\0';
	}
	rc = pclose(p);
	assert_int_equal(rc, 0);
	doc = cJSON_Parse(out);
	assert_non_null(doc);
	assert_string_equal(str_at(doc, "state"), "succeeded");
	assert_string_equal(str_at(doc, "target"), "cpu");
	assert_true(num_at(doc, "results.stream.triad.best_bytes_per_second") > 0);
	cJSON_Delete(doc);
	free(out);
	out = NULL;

	/* the table with --save: drawn from the job, never from the printed document (a regression: it once read
	 * "STREAM triad, nan threads, 3 x - arrays"); the saved document is the job's JSON */
	snprintf(cmd, sizeof(cmd),
		 "%s calibrate --cpu --db %s/m.db --suites stream --runs 10 --array-bytes 8388608 --threads 2 "
		 "--save %s/job.json 2>/dev/null",
		 bin, dir, dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	len = 0;
	out = NULL;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0) {
		char *grown = realloc(out, len + n + 1);

		assert_non_null(grown);
		out = grown;
		memcpy(out + len, buf, n);
		len += n;
		out[len] = '\0';
	}
	assert_int_equal(pclose(p), 0);
	assert_non_null(strstr(out, "STREAM triad, 2 threads, 3 x 8.39 MB arrays"));
	assert_null(strstr(out, "nan"));
	free(out);
	out = NULL;
	snprintf(cmd, sizeof(cmd), "%s/job.json", dir);
	doc = ref_json_path(cmd);
	assert_string_equal(str_at(doc, "state"), "succeeded");
	assert_true(num_at(doc, "results.stream.threads") == 2);
	cJSON_Delete(doc);

	/* the table (no --json) names the figures; a bad option is a usage error (2) */
	snprintf(
	    cmd, sizeof(cmd),
	    "%s calibrate --cpu --db %s/m.db --suites gemm --runs 10 --matrix-size 256 2>/dev/null | grep -q dgemm",
	    bin, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s calibrate --cpu --runs 3 --db %s/m.db >/dev/null 2>&1", bin, dir);
	rc = system(cmd);
	assert_true(WIFEXITED(rc) && WEXITSTATUS(rc) == 2);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	/* the helpers this build made, when the test is run by hand (make check sets the same) */
	setenv("MEMPLAN_GPU_HELPER", MP_TEST_GPU_HELPER, 0);
	const struct CMUnitTest units[] = {
	    cmocka_unit_test(test_suite_names),
	    cmocka_unit_test(test_stat_of),
	    cmocka_unit_test(test_datasheet_map),
	    cmocka_unit_test(test_profile_id),
	    cmocka_unit_test(test_gpu_doc_from_ground_truth),
	    cmocka_unit_test(test_cpu_run),
	    cmocka_unit_test(test_gpu_run),
	    cmocka_unit_test(test_helper_probe_and_run),
	    cmocka_unit_test(test_helper_progress_and_cancel),
	    cmocka_unit_test(test_helper_failures),
	    cmocka_unit_test(test_cli),
	    cmocka_unit_test(test_store_failure_reason),
	};
	const struct CMUnitTest http[] = {
	    cmocka_unit_test_setup_teardown(test_http_cpu_job, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_busy_and_cancel, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_history_from_store, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_gpu_target, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_validation, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_fit_plan_decode, http_fixture_setup, http_fixture_teardown),
	};
	int failed = cmocka_run_group_tests_name("calibration", units, NULL, NULL);

	return failed + cmocka_run_group_tests_name("calibration over HTTP", http, NULL, NULL);
}
