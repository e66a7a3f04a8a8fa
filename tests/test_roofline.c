/*
 * test_roofline.c: the roofline engine, the step analysis and Little's law against every case of
 * tests/ref/conformance/seed_cases.json and cases BR-14 and BR-15 of tests/ref/cases/cases.md, then against
 * what a real H200 did (tests/ref/groundtruth/h200/measurements.json). Also the roofline document, the text
 * and SVG charts (the SVG parsed with libxml2) and POST /v1/roofline over HTTP. Expected values are read
 * from the reference files. MEMPLAN_ROOFLINE_TABLE=1 prints the predicted-vs-measured table (markdown).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "../model/model.h"
#include "../codec/codec.h"
#include "../planner/memplan.h"
#include "http_util.h"
#include "refs.h"

static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", k);
	return v->valuedouble;
}

static double opt_num(const cJSON *o, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

#define CLOSE(a, b, tol)                                                                                               \
	do {                                                                                                           \
		double a_ = (a), b_ = (b);                                                                             \
		if (!ref_close(a_, b_, (tol)))                                                                         \
			fail_msg("%s = %.10g, expected %.10g (rel tol %g)", #a, a_, b_, (double)(tol));                \
	} while (0)

static mp_dtype dtype_of_bytes(double b)
{
	return b == 4 ? MP_DTYPE_FP32 : b == 1 ? MP_DTYPE_FP8_E4M3 : MP_DTYPE_BF16;
}

/* A seed-case device: one peak (16-bit dense tensor) and one bandwidth, as the reference texts give them. */
static mp_device seed_device(const cJSON *seed, const char *id)
{
	const cJSON *dv = cJSON_GetObjectItem(cJSON_GetObjectItem(seed, "devices"), id);
	mp_device d;

	if (dv == NULL)
		fail_msg("seed device %s missing", id);
	memset(&d, 0, sizeof(d));
	d.memory_bandwidth_bytes_per_second = num(dv, "bandwidth_bytes_per_s");
	d.peak_flops_per_second[MP_DTYPE_BF16] = num(dv, "peak_flops_per_s");
	d.peak_flops_per_second[MP_DTYPE_FP16] = num(dv, "peak_flops_per_s");
	return d;
}

/* The seed cases' op names as planner ops. */
static mp_op seed_op(const cJSON *c)
{
	const char *name = cJSON_GetObjectItem(c, "op")->valuestring;
	mp_op op;

	memset(&op, 0, sizeof(op));
	op.dtype = dtype_of_bytes(num(c, "dtype_bytes"));
	if (strcmp(name, "elementwise_add") == 0 || strcmp(name, "relu") == 0) {
		op.kind = MP_OP_ELEMENTWISE;
		op.elements = 1 << 20;
		op.inputs = name[0] == 'e' ? 2 : 1;
		op.outputs = 1;
		op.flops_per_element = 1;
	} else if (strncmp(name, "matmul", 6) == 0 || strncmp(name, "matvec", 6) == 0) {
		op.kind = MP_OP_MATMUL;
		op.m = (uint64_t)num(c, "m");
		op.k = (uint64_t)num(c, "k");
		op.n = (uint64_t)num(c, "n");
	} else {
		fail_msg("unknown seed op %s", name);
	}
	return op;
}

static void test_seed_intensity(void **state)
{
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c;
	double tol = num(seed, "tolerance_rel");
	int n = 0;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "intensity"))
	{
		mp_op op = seed_op(c);
		double flops;
		uint64_t bytes;

		assert_int_equal(mp_op_cost(&op, &flops, &bytes, NULL), MP_OK);
		CLOSE(flops / (double)bytes, num(c, "flops_per_byte"), tol);
		n++;
	}
	assert_true(n >= 6);
	cJSON_Delete(seed);
}

static void test_seed_roofline(void **state)
{
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c;
	double tol = num(seed, "tolerance_rel");
	int n = 0;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "roofline"))
	{
		mp_device d = seed_device(seed, cJSON_GetObjectItem(c, "device")->valuestring);
		mp_op op;
		mp_roof r;

		if (cJSON_GetObjectItem(c, "ridge_flops_per_byte")) {
			CLOSE(mp_device_ridge(&d, MP_DTYPE_BF16), num(c, "ridge_flops_per_byte"), tol);
			n++;
			continue;
		}
		op = seed_op(c);
		assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
		CLOSE(r.intensity_flops_per_byte, num(c, "flops_per_byte"), tol);
		CLOSE(r.attainable_flops_per_second, num(c, "attainable_flops_per_s"), tol);
		CLOSE(r.fraction_of_peak, num(c, "fraction_of_peak"), tol);
		assert_string_equal(r.compute_bound ? "compute" : "memory",
		                    cJSON_GetObjectItem(c, "bound")->valuestring);
		/* the floor is the slower of the two roofs */
		CLOSE(r.time_seconds,
		      fmax((double)r.bytes / d.memory_bandwidth_bytes_per_second, r.flops / r.peak_flops_per_second),
		      1e-12);
		n++;
	}
	assert_true(n >= 12);
	cJSON_Delete(seed);
}

static void test_seed_batch_sweep(void **state)
{
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c;
	double tol = num(seed, "tolerance_rel");
	int n = 0;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "batch_sweep"))
	{
		mp_device d = seed_device(seed, cJSON_GetObjectItem(c, "device")->valuestring);
		mp_op op = {0};
		mp_roof r;

		op.kind = MP_OP_MATMUL;
		op.dtype = dtype_of_bytes(num(c, "dtype_bytes"));
		op.m = (uint64_t)num(c, "batch");
		op.k = (uint64_t)num(c, "layer_in");
		op.n = (uint64_t)num(c, "layer_out");
		assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
		CLOSE(r.intensity_flops_per_byte, num(c, "flops_per_byte"), tol);
		CLOSE(r.fraction_of_peak, num(c, "fraction_of_peak"), tol);
		assert_string_equal(r.compute_bound ? "compute" : "memory",
		                    cJSON_GetObjectItem(c, "bound")->valuestring);
		n++;
	}
	assert_true(n >= 8);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "first_compute_bound_batch"))
	{
		mp_device d = seed_device(seed, cJSON_GetObjectItem(c, "device")->valuestring);

		assert_int_equal(mp_first_compute_bound_batch(&d, (uint64_t)num(c, "layer_in"),
		                                              (uint64_t)num(c, "layer_out"),
		                                              dtype_of_bytes(num(c, "dtype_bytes"))),
		                 (uint64_t)num(c, "batch"));
		n++;
	}
	assert_true(n >= 10);
	cJSON_Delete(seed);
}

static void test_seed_decode(void **state)
{
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c;
	double tol = num(seed, "tolerance_rel");
	int n = 0;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "decode"))
	{
		mp_device d = seed_device(seed, cJSON_GetObjectItem(c, "device")->valuestring);
		mp_decode_bound b;

		assert_int_equal(mp_weights_decode_bound(&d, (uint64_t)num(c, "weight_bytes"),
		                                         (uint64_t)num(c, "parameters"), (uint64_t)num(c, "batch"),
		                                         MP_DTYPE_BF16, &b, NULL),
		                 MP_OK);
		CLOSE(b.step_seconds, num(c, "step_seconds"), tol);
		CLOSE(b.tokens_per_second_total, num(c, "tokens_per_second_total"), tol);
		CLOSE(b.tokens_per_second_per_sequence, num(c, "tokens_per_second_per_sequence"), tol);
		n++;
	}
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "tokens_per_second_bound"))
	{
		mp_device d = seed_device(seed, cJSON_GetObjectItem(c, "device")->valuestring);
		mp_decode_bound b;

		assert_int_equal(mp_weights_decode_bound(&d, (uint64_t)num(c, "weight_bytes"),
		                                         (uint64_t)opt_num(c, "parameters", 0),
		                                         (uint64_t)num(c, "batch"), MP_DTYPE_BF16, &b, NULL),
		                 MP_OK);
		CLOSE(b.tokens_per_second_per_sequence, num(c, "tokens_per_second_per_sequence"), tol);
		n++;
	}
	assert_true(n >= 7);
	cJSON_Delete(seed);
}

static void test_seed_littles_law(void **state)
{
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c;
	double tol = num(seed, "tolerance_rel");
	int n = 0;

	(void)state;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "littles_law"))
	{
		mp_littles_law l;
		double latency = num(c, "latency_cycles") / num(c, "clock_hz");

		CLOSE(latency, num(c, "latency_seconds"), tol);
		assert_int_equal(
		    mp_little(num(c, "bandwidth_bytes_per_s"), latency, (uint32_t)num(c, "sm_count"), &l, NULL), MP_OK);
		CLOSE(l.bytes_in_flight, num(c, "bytes_in_flight"), tol);
		CLOSE(l.bytes_in_flight_per_sm, num(c, "bytes_in_flight_per_sm"), tol);
		/* "about 214 KiB" */
		assert_true(fabs(l.bytes_in_flight / 1024 - 214) < 1);
		n++;
	}
	assert_true(n >= 1);
	assert_int_equal(mp_little(1e12, 0, 80, &(mp_littles_law){0}, NULL), MP_EINVAL);
	cJSON_Delete(seed);
}

/* ----- cases.md ---------------------------------------------------------------------------------------- */

/* The text of section "### <id>:" of cases.md up to the next "### ". Caller frees. */
static char *case_section(const char *id)
{
	char *all = ref_text("cases/cases.md"), *s, *e, *out, head[32];
	size_t n;

	snprintf(head, sizeof(head), "### %s:", id);
	s = strstr(all, head);
	if (s == NULL)
		fail_msg("case %s not found in cases.md", id);
	e = strstr(s + 4, "\n### ");
	n = e ? (size_t)(e - s) : strlen(s);
	out = malloc(n + 1);
	memcpy(out, s, n);
	out[n] = '\0';
	free(all);
	return out;
}

/* Numbers of a "a / b / c" list that follows `marker` in text (thousands separators allowed). */
static int numbers_after(const char *text, const char *marker, double *out, int max)
{
	const char *p = strstr(text, marker);
	int n = 0;

	if (p == NULL)
		fail_msg("marker '%s' not found", marker);
	p += strlen(marker);
	while (n < max) {
		char buf[64];
		size_t k = 0;

		while (*p == ' ')
			p++;
		for (; k + 1 < sizeof(buf); p++) {
			if ((*p >= '0' && *p <= '9') || *p == '.')
				buf[k++] = *p;
			else if (!(*p == ',' && p[1] >= '0' && p[1] <= '9' && k > 0))
				break;
		}
		buf[k] = '\0';
		if (k == 0)
			break;
		out[n++] = strtod(buf, NULL);
		while (*p == ' ')
			p++;
		if (*p != '/')
			break;
		p++;
	}
	return n;
}

/* BR-14: the decode bound never beats physics. */
static void test_br14(void **state)
{
	char *sec = case_section("BR-14");
	double bytes[1], bw[4], bound[4], params[1], stream[1], tps[1];
	mp_device d;
	mp_decode_bound b;

	(void)state;
	assert_int_equal(numbers_after(sec, "norms f32) = ", bytes, 1), 1);
	assert_int_equal(numbers_after(sec, "Peak bandwidth ", bw, 4), 4);
	assert_int_equal(numbers_after(sec, "A: bound = ", bound, 4), 4);
	memset(&d, 0, sizeof(d));
	d.peak_flops_per_second[MP_DTYPE_FP32] = 1e12;
	for (int i = 0; i < 4; i++) {
		mp_roof r;
		mp_op op = {0};

		d.memory_bandwidth_bytes_per_second = bw[i] * 1e9; /* GB/s: decimal, as the chips are sold */
		assert_int_equal(mp_weights_decode_bound(&d, (uint64_t)bytes[0], 0, 1, MP_DTYPE_FP32, &b, NULL), MP_OK);
		CLOSE(b.step_seconds * 1e3, bound[i], 0.01);
		/* the measured rates of the thread are all slower than the bound (strict) */
		op.kind = MP_OP_RAW;
		op.bytes = (uint64_t)bytes[0];
		assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
		if (i == 0) {
			double m1_cpu[1], m1_gpu[1];

			numbers_after(sec, "M1 CPU ", m1_cpu, 1);
			numbers_after(sec, "M1 GPU ", m1_gpu, 1);
			assert_true(r.time_seconds < m1_cpu[0] * 1e-3 && r.time_seconds < m1_gpu[0] * 1e-3);
		}
	}
	/* A reported rate above the chip's bandwidth is flagged. */
	{
		double reported[1];
		mp_measurement_check mc;
		mp_op op = {.kind = MP_OP_RAW, .bytes = (uint64_t)bytes[0]};
		mp_roof r;

		d.memory_bandwidth_bytes_per_second = bw[0] * 1e9;
		assert_int_equal(numbers_after(strstr(sec, "example"), "was ", reported, 1), 1);
		assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
		mp_check_measurement(&r, (double)bytes[0] / (reported[0] * 1e9), &mc);
		assert_true(mc.above_roof);
		CLOSE(mc.effective_bandwidth_bytes_per_second, reported[0] * 1e9, 1e-9);
		mp_check_measurement(&r, 71.2e-3, &mc);
		assert_false(mc.above_roof);
		assert_true(mc.achieved_fraction < 1);
	}
	/* B: fp32 Llama-3-8B on 40 GB/s STREAM */
	assert_int_equal(numbers_after(sec, "Input B:** Llama-3-8B fp32 weights (", params, 1), 1);
	assert_int_equal(numbers_after(sec, "CPU with ", stream, 1), 1);
	assert_int_equal(numbers_after(sec, "B: ≤ ", tps, 1), 1);
	d.memory_bandwidth_bytes_per_second = stream[0] * 1e9;
	assert_int_equal(
	    mp_weights_decode_bound(&d, (uint64_t)params[0] * 4, (uint64_t)params[0], 1, MP_DTYPE_FP32, &b, NULL),
	    MP_OK);
	/* "<= 1.245 tokens/s": the bound, 1.2453, within the case's 1% */
	CLOSE(b.tokens_per_second_per_sequence, tps[0], 0.01);
	free(sec);
}

/* BR-15: ridges and the batch where decode stops being memory-bound; per-sequence attention does not batch. */
static void test_br15(void **state)
{
	char *sec = case_section("BR-15");
	double h100[2], a80[2], a40[2], ridge[3];
	mp_device d;

	(void)state;
	assert_int_equal(numbers_after(sec, "H100 SXM: ", h100, 1), 1);
	assert_int_equal(numbers_after(strstr(sec, "H100 SXM: "), "FLOP/s, ", h100 + 1, 1), 1);
	assert_int_equal(numbers_after(sec, "A100 80GB SXM: ", a80, 1), 1);
	assert_int_equal(numbers_after(strstr(sec, "A100 80GB SXM: "), "e12, ", a80 + 1, 1), 1);
	assert_int_equal(numbers_after(sec, "A100 40GB: ", a40, 1), 1);
	assert_int_equal(numbers_after(strstr(sec, "A100 40GB: "), "e12, ", a40 + 1, 1), 1);
	assert_int_equal(numbers_after(sec, "Ridge = ", ridge, 3), 3);
	{
		double(*dev[3])[2] = {&h100, &a80, &a40};

		for (int i = 0; i < 3; i++) {
			memset(&d, 0, sizeof(d));
			d.peak_flops_per_second[MP_DTYPE_BF16] = (*dev[i])[0] * 1e12;
			d.memory_bandwidth_bytes_per_second = (*dev[i])[1] * 1e12;
			CLOSE(mp_device_ridge(&d, MP_DTYPE_BF16), ridge[i], 0.005);
		}
	}
	memset(&d, 0, sizeof(d));
	d.peak_flops_per_second[MP_DTYPE_BF16] = h100[0] * 1e12;
	d.memory_bandwidth_bytes_per_second = h100[1] * 1e12;
	/* GEMV intensity ~ 1 at batch 1 and ~ B at batch B while the weights dominate the bytes. */
	for (uint64_t B = 1; B <= 8; B *= 2) {
		mp_op op = {.kind = MP_OP_MATMUL, .dtype = MP_DTYPE_BF16, .m = B, .k = 4096, .n = 4096};
		mp_roof r;

		assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
		CLOSE(r.intensity_flops_per_byte, (double)B, 0.005);
	}
	/* Wide weights: the crossing batch approaches the ridge itself ("about 295"). */
	CLOSE((double)mp_first_compute_bound_batch(&d, 1u << 20, 1u << 20, MP_DTYPE_BF16), ridge[0], 0.005);
	/* Attention over each sequence's own 16-bit KV stays ~1 FLOP/B at any batch (MHA). */
	for (uint64_t B = 1; B <= 256; B *= 16) {
		mp_op op = {.kind = MP_OP_ATTENTION,
		            .dtype = MP_DTYPE_BF16,
		            .batch = B,
		            .heads = 32,
		            .kv_heads = 32,
		            .head_dim = 128,
		            .q_tokens = 1,
		            .kv_tokens = 4096,
		            .causal = true};
		mp_roof r;

		assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
		CLOSE(r.intensity_flops_per_byte, 1.0, 0.005);
		assert_false(r.compute_bound);
	}
	/* Counting MACs instead of FLOPs would halve this; sparse peaks would double the ridge. */
	{
		mp_op op = {.kind = MP_OP_MATMUL, .dtype = MP_DTYPE_BF16, .m = 1, .k = 4096, .n = 4096};
		double f;
		uint64_t by;

		assert_int_equal(mp_op_cost(&op, &f, &by, NULL), MP_OK);
		assert_true(f == 2.0 * 4096 * 4096);
	}
	free(sec);
}

/* ----- against a real H200 ------------------------------------------------------------------------------ */

static int print_table(void)
{
	const char *v = getenv("MEMPLAN_ROOFLINE_TABLE");

	return v && v[0] == '1';
}

static void load_model(const char *id, mp_model *m)
{
	char rel[96];
	cJSON *cfg;
	mp_error err = MP_ERROR_INIT;

	snprintf(rel, sizeof(rel), "models/%s.json", id);
	cfg = ref_json(rel);
	if (mpm_from_hf(cfg, "/model/hf_config", m, &err) != MP_OK)
		fail_msg("%s: %s: %s", id, err.field, err.message);
	cJSON_Delete(cfg);
}

/* "key value" in the CUDA C micro-benchmark log: every number that follows `key` (e.g. "GBps"). */
static double best_in_log(const char *log, const char *key)
{
	double best = 0;

	for (const char *p = strstr(log, key); p; p = strstr(p + 1, key)) {
		const char *prev = p > log ? p - 1 : p;

		if (p > log && *prev != ' ' && *prev != '\n')
			continue; /* "useful_GBps" counts useful bytes only: not a bandwidth ceiling */
		best = fmax(best, strtod(p + strlen(key), NULL));
	}
	return best;
}

/*
 * The H200 as measured: the best bandwidth and the best bf16 matrix rate anywhere in measurements.json (the
 * roof is the best the chip was seen to do), and the best fp32 vector rate. *bw_from / *bf16_from say which
 * measurement set each roof.
 */
static mp_device h200_measured(const cJSON *gt, char *bw_from, char *bf16_from, size_t len)
{
	const cJSON *ceil = cJSON_GetObjectItem(gt, "ceilings_torch"), *p;
	const char *log = cJSON_GetObjectItem(gt, "microbenchmarks_cuda_c")->valuestring;
	double bw, bf16, v;
	mp_device d;

	memset(&d, 0, sizeof(d));
	bw = fmax(num(ceil, "copy_GBps"), num(ceil, "triad_GBps")) * 1e9;
	snprintf(bw_from, len, "ceilings_torch copy/triad");
	v = best_in_log(log, "GBps") * 1e9;
	if (v > bw) {
		bw = v;
		snprintf(bw_from, len, "microbenchmarks_cuda_c");
	}
	bf16 = num(cJSON_GetObjectItem(ceil, "gemm_TFLOPs"), "bf16") * 1e12;
	snprintf(bf16_from, len, "ceilings_torch gemm bf16 8192^3");
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(gt, "roofline_points_graph_timed"))
	{
		double t = num(p, "ms") * 1e-3;
		const cJSON *dt = cJSON_GetObjectItem(p, "dtype");

		if (num(p, "bytes") / t > bw) {
			bw = num(p, "bytes") / t;
			snprintf(bw_from, len, "graph-timed %s", cJSON_GetObjectItem(p, "op")->valuestring);
		}
		if (cJSON_IsString(dt) && strcmp(dt->valuestring, "bf16") == 0 && num(p, "flops") / t > bf16 &&
		    strcmp(cJSON_GetObjectItem(p, "op")->valuestring, "elementwise_add") != 0) {
			bf16 = num(p, "flops") / t;
			snprintf(bf16_from, len, "graph-timed %s %.0f x %.0f x %.0f",
			         cJSON_GetObjectItem(p, "op")->valuestring, num(p, "m"), num(p, "k"), num(p, "n"));
		}
	}
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(gt, "decode_gemm_chain_llama3_8b_shape"))
	{
		double t = num(p, "ms") * 1e-3;

		if (num(p, "weight_bytes") / t > bw) {
			bw = num(p, "weight_bytes") / t;
			snprintf(bw_from, len, "decode chain batch %.0f", num(p, "batch"));
		}
		if (num(p, "gemm_flops") / t > bf16) {
			bf16 = num(p, "gemm_flops") / t;
			snprintf(bf16_from, len, "decode chain batch %.0f", num(p, "batch"));
		}
	}
	d.memory_bandwidth_bytes_per_second = bw;
	d.peak_flops_per_second[MP_DTYPE_BF16] = bf16;
	d.peak_flops_per_second[MP_DTYPE_FP32] =
	    fmax(num(cJSON_GetObjectItem(ceil, "gemm_TFLOPs"), "fp32"), best_in_log(log, "TFLOPs")) * 1e12;
	d.sm_count = (uint32_t)num(cJSON_GetObjectItem(gt, "device"), "sms");
	d.l2_cache_bytes = (uint64_t)num(cJSON_GetObjectItem(gt, "device"), "l2");
	return d;
}

/* Every graph-timed point: the engine's FLOPs and bytes equal the file's, and the floor is <= the time. */
static void test_h200_points(void **state)
{
	cJSON *gt = ref_json("groundtruth/h200/measurements.json"), *p;
	char bw_from[96], bf16_from[96];
	mp_device d = h200_measured(gt, bw_from, bf16_from, sizeof(bw_from));
	int n = 0;

	(void)state;
	/* the roofs lie at or above the ceiling benchmarks, and below the datasheet (4.8 TB/s, 989 TFLOP/s) */
	assert_true(d.memory_bandwidth_bytes_per_second >= 4.25e12 && d.memory_bandwidth_bytes_per_second < 4.8e12);
	assert_true(d.peak_flops_per_second[MP_DTYPE_BF16] >= 779e12 &&
	            d.peak_flops_per_second[MP_DTYPE_BF16] < 989.4e12);
	if (print_table()) {
		printf("\nCeilings: bandwidth %.1f GB/s (%s), bf16 %.1f TFLOP/s (%s), fp32 vector %.2f TFLOP/s; "
		       "ridge %.1f FLOP/B\n\n",
		       d.memory_bandwidth_bytes_per_second / 1e9, bw_from,
		       d.peak_flops_per_second[MP_DTYPE_BF16] / 1e12, bf16_from,
		       d.peak_flops_per_second[MP_DTYPE_FP32] / 1e12, mp_device_ridge(&d, MP_DTYPE_BF16));
		printf("| point | intensity FLOP/B | bound | predicted floor ms | measured ms | floor / measured |\n"
		       "|---|---:|---|---:|---:|---:|\n");
	}
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(gt, "roofline_points_graph_timed"))
	{
		const char *name = cJSON_GetObjectItem(p, "op")->valuestring;
		mp_op op = {0};
		mp_roof r;
		double measured = num(p, "ms") * 1e-3;
		char label[64];

		if (strcmp(name, "matmul") == 0 || strcmp(name, "linear") == 0) {
			op.kind = MP_OP_MATMUL;
			op.dtype = mp_dtype_from_name(cJSON_GetObjectItem(p, "dtype")->valuestring);
			op.m = (uint64_t)num(p, "m");
			op.k = (uint64_t)num(p, "k");
			op.n = (uint64_t)num(p, "n");
			snprintf(label, sizeof(label), "%s %llu x %llu x %llu", name, (unsigned long long)op.m,
			         (unsigned long long)op.k, (unsigned long long)op.n);
		} else if (strcmp(name, "elementwise_add") == 0) {
			op = (mp_op){.kind = MP_OP_ELEMENTWISE,
			             .elements = (uint64_t)num(p, "n"),
			             .inputs = 2,
			             .outputs = 1,
			             .flops_per_element = 1};
			op.dtype = mp_dtype_from_name(cJSON_GetObjectItem(p, "dtype")->valuestring);
			snprintf(label, sizeof(label), "add %.0f bf16", num(p, "n"));
		} else if (strcmp(name, "copy_fp32") == 0) {
			op = (mp_op){.kind = MP_OP_ELEMENTWISE,
			             .dtype = MP_DTYPE_FP32,
			             .elements = (uint64_t)num(p, "n"),
			             .inputs = 1,
			             .outputs = 1};
			snprintf(label, sizeof(label), "copy %.0f fp32", num(p, "n"));
		} else {
			fail_msg("unknown graph-timed op %s", name);
		}
		assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
		assert_true(r.flops == num(p, "flops"));
		assert_true((double)r.bytes == num(p, "bytes"));
		if (!(r.time_seconds <= measured))
			fail_msg("%s: floor %.6g s above the measured %.6g s", label, r.time_seconds, measured);
		if (print_table())
			printf("| %s | %.1f | %s | %.4f | %.4f | %.2f |\n", label, r.intensity_flops_per_byte,
			       r.compute_bound ? "compute" : "memory", r.time_seconds * 1e3, measured * 1e3,
			       r.time_seconds / measured);
		n++;
	}
	assert_true(n >= 20);
	cJSON_Delete(gt);
}

/* Recurrent layers in the step analysis (planner/step.c recurrent_ops): mamba-130m (24 Mamba layers, d_inner 1536,
 * N 16, conv 4) decodes one token per sequence: the scan's 24 x (1536 x 16 x 6 + 1536 x 4 x 2) = 3,833,856 FLOPs per
 * sequence, its state (24 x 107,520 bytes: bf16 conv, fp32 scan) read and written once per step and counted as KV
 * reads; a hybrid (Qwen3-Next) runs attention only on its 12 attention layers; DeepSeek-V3.2's sparse attention reads
 * the index_topk latents its indexer selects. */
static void test_recurrent_step(void **state)
{
	mp_device d;
	mp_model m;
	mp_error err = MP_ERROR_INIT;
	mp_step s;
	mp_step_req req = {.weight_dtype = MP_DTYPE_BF16, .kv_cache_dtype = MP_DTYPE_BF16, .batch_size = 1,
	                   .context_tokens = 100};
	bool seen = false;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.memory_bandwidth_bytes_per_second = 3.35e12;
	d.peak_flops_per_second[MP_DTYPE_BF16] = 989e12;
	d.peak_flops_per_second[MP_DTYPE_FP32] = 67e12;
	assert_int_equal(mpm_from_hf_text("{\"model_type\":\"mamba\",\"num_hidden_layers\":24}", "/model", &m, &err),
	                 MP_OK);
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s, &err), MP_OK);
	for (size_t i = 0; i < s.nops; i++) {
		if (strcmp(s.ops[i].name, "mixer_scan") == 0) {
			assert_int_equal(s.ops[i].count, 24);
			CLOSE(s.ops[i].roof.flops, 1536.0 * 16 * 6 + 1536.0 * 4 * 2, 1e-12);
			seen = true;
		}
		assert_true(strcmp(s.ops[i].name, "attention") != 0 && strcmp(s.ops[i].name, "qkv") != 0);
	}
	assert_true(seen);
	CLOSE(s.kv_read_bytes, 24.0 * 2 * 107520, 1e-12);
	/* batch 4: four states, four times the scan */
	req.batch_size = 4;
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s, &err), MP_OK);
	CLOSE(s.kv_read_bytes, 4 * 24.0 * 2 * 107520, 1e-12);
	/* DeepSeek-V3.2: at 4096 tokens of context each decode query reads the 2048 latents its indexer picks (61 layers x
	 * 576 values, bf16) and the indexer scans all 4097 keys (61 x 128 values) */
	assert_int_equal(mpm_from_hf_text("{\"model_type\":\"deepseek_v32\"}", "/model", &m, &err), MP_OK);
	req.batch_size = 1;
	req.context_tokens = 4096;
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s, &err), MP_OK);
	CLOSE(s.kv_read_bytes, 61.0 * 2048 * 576 * 2 + 61.0 * 4097 * 128 * 2, 1e-12);
	req.context_tokens = 100; /* below the top-k: every latent */
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s, &err), MP_OK);
	CLOSE(s.kv_read_bytes, 61.0 * 101 * 576 * 2 + 61.0 * 101 * 128 * 2, 1e-12);
	assert_int_equal(mpm_from_hf_text("{\"model_type\":\"qwen3_next\"}", "/model", &m, &err), MP_OK);
	req.batch_size = 1;
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s, &err), MP_OK);
	for (size_t i = 0; i < s.nops; i++) {
		if (strcmp(s.ops[i].name, "attention") == 0 || strcmp(s.ops[i].name, "qkv") == 0)
			assert_int_equal(s.ops[i].count, 12);
		if (strcmp(s.ops[i].name, "mixer_scan") == 0)
			assert_int_equal(s.ops[i].count, 36);
	}
}

/* The Llama-3-8B-shaped GEMM chain: same bytes and FLOPs as measured, within 25% for batch <= 64, never
 * above the measurement, and the compute-bound crossing where the measured time starts to rise. */
static void test_h200_decode_chain(void **state)
{
	cJSON *gt = ref_json("groundtruth/h200/measurements.json"), *p, *chain;
	char bw_from[96], bf16_from[96];
	mp_device d = h200_measured(gt, bw_from, bf16_from, sizeof(bw_from));
	mp_model m;
	mp_step_req req = {
	    .weight_dtype = MP_DTYPE_BF16, .kv_cache_dtype = MP_DTYPE_BF16, .context_tokens = 0, .matmuls_only = true};
	double flat = 0, last_flat_batch = 0, first_rise_batch = 0, t_big = 0, b_big = 0;
	uint64_t crossing;
	int n = 0;

	(void)state;
	load_model("llama-3-8b", &m);
	chain = cJSON_GetObjectItem(gt, "decode_gemm_chain_llama3_8b_shape");
	if (print_table())
		printf("\n| decode batch | bound | predicted ms | measured ms | predicted / measured |\n"
		       "|---:|---|---:|---:|---:|\n");
	cJSON_ArrayForEach(p, chain)
	{
		mp_step s;
		double measured = num(p, "ms") * 1e-3, batch = num(p, "batch");

		req.batch_size = (uint64_t)batch;
		assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s, NULL), MP_OK);
		assert_true(s.weight_bytes == num(p, "weight_bytes"));
		CLOSE(s.flops, num(p, "gemm_flops"), 1e-12);
		assert_true(s.step_seconds <= measured);
		if (batch <= 64 && fabs(s.step_seconds - measured) > 0.25 * measured)
			fail_msg("batch %.0f: predicted %.4g ms vs measured %.4g ms", batch, s.step_seconds * 1e3,
			         measured * 1e3);
		if (print_table())
			printf("| %.0f | %s | %.3f | %.3f | %.2f |\n", batch, s.compute_bound ? "compute" : "memory",
			       s.step_seconds * 1e3, measured * 1e3, s.step_seconds / measured);
		if (batch == 1)
			flat = measured;
		/* "starts to rise": the step is 20% slower than at batch 1 */
		if (measured <= 1.2 * flat)
			last_flat_batch = batch;
		else if (first_rise_batch == 0)
			first_rise_batch = batch;
		if (batch > b_big) {
			b_big = batch;
			t_big = measured;
		}
		n++;
	}
	assert_true(n >= 10);
	assert_int_equal(mp_step_compute_bound_batch(&m, &d, &req, &crossing, NULL), MP_OK);
	/* predicted crossing between the last flat batch and the first risen one ... */
	assert_true((double)crossing > last_flat_batch && (double)crossing <= first_rise_batch);
	/* ... and near the measured knee: where the flat time meets the large-batch line through the origin */
	CLOSE((double)crossing, flat / (t_big / b_big), 0.15);
	if (print_table())
		printf(
		    "\nPredicted compute-bound crossing: batch %llu; measured: flat to batch %.0f (<= 1.2 x batch 1), "
		    "risen at %.0f, knee %.0f\n",
		    (unsigned long long)crossing, last_flat_batch, first_rise_batch, flat / (t_big / b_big));
	cJSON_Delete(gt);
}

/* Prefill of a 4096-token prompt: the floor lies below the measured time for fused and eager attention. */
static void test_h200_prefill(void **state)
{
	cJSON *gt = ref_json("groundtruth/h200/measurements.json"), *p;
	char bw_from[96], bf16_from[96];
	mp_device d = h200_measured(gt, bw_from, bf16_from, sizeof(bw_from));
	mp_model m;

	(void)state;
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(gt, "prefill"))
	{
		double measured = num(p, "prefill_ms") * 1e-3;

		load_model(cJSON_GetObjectItem(p, "model")->valuestring, &m);
		for (int eager = 0; eager < 2; eager++) {
			mp_step_req req = {.weight_dtype = MP_DTYPE_BF16,
			                   .kv_cache_dtype = MP_DTYPE_BF16,
			                   .batch_size = (uint64_t)num(p, "batch"),
			                   .prompt_tokens = (uint64_t)num(p, "prefill_tokens"),
			                   .eager_attention = eager};
			mp_step s;

			assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_PREFILL, &req, &s, NULL), MP_OK);
			assert_true(s.step_seconds <= measured);
			assert_true(s.step_seconds > 0.5 * measured); /* a floor, but not a vacuous one */
			assert_true(s.compute_bound);
			if (print_table())
				printf("\nPrefill %s %.0f tokens, %s attention: predicted %.1f ms, measured %.1f ms, "
				       "ratio %.2f\n",
				       cJSON_GetObjectItem(p, "model")->valuestring, num(p, "prefill_tokens"),
				       eager ? "eager" : "fused", s.step_seconds * 1e3, measured * 1e3,
				       s.step_seconds / measured);
		}
	}
	/* Little's law with the measured pointer-chase latency over a 1 GiB span */
	{
		const char *log = cJSON_GetObjectItem(gt, "microbenchmarks_cuda_c")->valuestring;
		const char *lat = strstr(log, "latency span_bytes 1073741824 ns ");
		mp_littles_law l;

		assert_non_null(lat);
		assert_int_equal(mp_little(d.memory_bandwidth_bytes_per_second,
		                           strtod(lat + strlen("latency span_bytes 1073741824 ns "), NULL) * 1e-9,
		                           d.sm_count, &l, NULL),
		                 MP_OK);
		assert_true(l.bytes_in_flight > 500e3 && l.bytes_in_flight < 1e6);
		if (print_table())
			printf("\nLittle's law on the H200: %.0f KiB in flight, %.1f KiB per SM\n",
			       l.bytes_in_flight / 1024, l.bytes_in_flight_per_sm / 1024);
	}
	cJSON_Delete(gt);
}

/* Step analysis properties: KV reads do not batch, MoE experts tend to all, the weights are the model's. */
/* FLOP time minus byte time of the decode step at batch b, summed over its ops (mp_step_compute_bound_batch's
 * definition, from mp_step_analyze's per-op figures). */
static double step_balance(const mp_model *m, const mp_device *d, const mp_step_req *req, uint64_t b)
{
	mp_step_req r = *req;
	static mp_step s;
	double sum = 0;

	r.batch_size = b;
	assert_int_equal(mp_step_analyze(m, d, MP_PHASE_DECODE, &r, &s, NULL), MP_OK);
	for (size_t i = 0; i < s.nops; i++)
		sum += (double)s.ops[i].count * (s.ops[i].roof.compute_time_seconds - s.ops[i].roof.memory_time_seconds);
	return sum;
}

static void test_step_properties(void **state)
{
	mp_model m;
	mp_device d = {0};
	mp_step s1, s64;
	mp_param_count pc;
	mp_step_req req = {
	    .weight_dtype = MP_DTYPE_BF16, .kv_cache_dtype = MP_DTYPE_BF16, .batch_size = 1, .context_tokens = 4096};

	(void)state;
	d.memory_bandwidth_bytes_per_second = 3.352e12;
	d.peak_flops_per_second[MP_DTYPE_BF16] = 989.4e12;
	d.peak_flops_per_second[MP_DTYPE_FP32] = 66.9e12;
	load_model("llama-3-8b", &m);
	assert_int_equal(mp_count_parameters(&m, &pc, NULL), MP_OK);
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s1, NULL), MP_OK);
	/* every matrix except the embedding table is read once: params - embedding - norms */
	assert_true(s1.weight_bytes == 2.0 * (double)(pc.total - pc.embedding - pc.norms));
	/* per-sequence KV: 2 x 32 layers x 8 heads x 128 x 4097 tokens x 2 B */
	assert_true(s1.kv_read_bytes == 2.0 * 32 * 8 * 128 * 4097 * 2);
	req.batch_size = 64;
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s64, NULL), MP_OK);
	assert_true(s64.kv_read_bytes == 64 * s1.kv_read_bytes);
	assert_true(s64.weight_bytes == s1.weight_bytes);
	assert_true(s64.tokens_per_second_total > 10 * s1.tokens_per_second_total);
	/* at a long context the KV reads keep decode memory-bound at any batch; 32768 is past llama-3-8b's 8192
	 * positions (no RoPE scaling), which the step refuses like the plans unless told (D3) */
	req.context_tokens = 32768;
	{
		uint64_t b;
		mp_error err = MP_ERROR_INIT;

		assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s64, &err), MP_EINVAL);
		assert_string_equal(err.field, "/context_tokens");
		assert_non_null(strstr(err.message, "allow_beyond_max_position_embeddings"));
		req.context_tokens = 8191; /* the step writes position 8192: the last one */
		assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s64, NULL), MP_OK);
		req.context_tokens = 8192;
		assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s64, NULL), MP_EINVAL);
		req.context_tokens = 32768;
		req.allow_beyond_max_position = true;

		assert_int_equal(mp_step_compute_bound_batch(&m, &d, &req, &b, NULL), MP_OK);
		assert_int_equal(b, 0);
		req.context_tokens = 0;
		assert_int_equal(mp_step_compute_bound_batch(&m, &d, &req, &b, NULL), MP_OK);
		assert_true(b > 250 && b < 420);
	}
	/* MoE: Mixtral reads top-2 of 8 experts per layer at batch 1 and nearly all 8 at batch 64 */
	load_model("mixtral-8x7b", &m);
	req.context_tokens = 1024;
	req.batch_size = 1;
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s1, NULL), MP_OK);
	CLOSE(s1.active_experts, 2.0, 1e-12);
	req.batch_size = 64;
	assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s64, NULL), MP_OK);
	assert_true(s64.active_experts > 7.99 && s64.active_experts <= 8.0);
	assert_true(s64.weight_bytes > 3 * s1.weight_bytes);

	/* the crossing is exactly where the FLOP time first reaches the byte time (at b, not at b - 1): for a dense
	 * model, where the balance is linear in the batch, and for the MoE, where it is not */
	{
		static const char *const ids[] = { "llama-3-8b", "mixtral-8x7b" };
		static const uint64_t contexts[] = { 0, 128, 512 };

		int crossings = 0;

		for (size_t i = 0; i < 2; i++)
			for (size_t j = 0; j < 3; j++) {
				uint64_t b;

				load_model(ids[i], &m);
				req.context_tokens = contexts[j];
				assert_int_equal(mp_step_compute_bound_batch(&m, &d, &req, &b, NULL), MP_OK);
				if (b == 0) { /* never, up to the search's end */
					assert_true(step_balance(&m, &d, &req, MP_STEP_MAX_SEARCH_BATCH) < 0);
					continue;
				}
				assert_true(b > 1);
				if (!(step_balance(&m, &d, &req, b) >= 0 && step_balance(&m, &d, &req, b - 1) < 0))
					fail_msg("%s context %llu: crossing %llu, balance there %.6g, at b - 1 %.6g", ids[i],
					         (unsigned long long)contexts[j], (unsigned long long)b,
					         step_balance(&m, &d, &req, b), step_balance(&m, &d, &req, b - 1));
				crossings++;
			}
		assert_true(crossings >= 4);
	}
}

/* The analytic crossing (mp_step_crossing_batch) against its definition on full step analyses, for dense,
 * sliding-window, MoE (Mixtral, Qwen3-MoE) and MLA (DeepSeek-V3) shapes, with and without tensor parallelism, a
 * quantized KV cache, and derived from decode steps at batch 1 and at batch 37 (the plan derives it from its own
 * step): the smallest batch whose balance is >= 0, the batch before it < 0. */
static void test_crossing_batch(void **state)
{
	static const char *const paths[] = { "tests/ref/models/llama-3-8b.json", "tests/data/gemma-2-2b.json",
					      "tests/ref/models/mixtral-8x7b.json", "tests/data/qwen3-30b-a3b.json",
					      "tests/data/deepseek-v3.json" };
	static const uint64_t contexts[] = { 0, 200 };
	static const uint64_t tps[] = { 1, 2 };
	mp_device d = {0};
	int crossings = 0, cases = 0;

	(void)state;
	d.memory_bandwidth_bytes_per_second = 4.8e12;
	d.l2_bandwidth_bytes_per_second = 12e12;
	d.peak_flops_per_second[MP_DTYPE_BF16] = 989.4e12;
	d.peak_flops_per_second[MP_DTYPE_FP32] = 66.9e12;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		cJSON *cfg = ref_json_path(paths[i]);
		mp_model m;
		mp_error err;

		if (mpm_from_hf(cfg, "/model/hf_config", &m, &err) != MP_OK)
			fail_msg("%s: %s: %s", paths[i], err.field, err.message);
		cJSON_Delete(cfg);
		for (size_t j = 0; j < 2; j++)
			for (size_t t = 0; t < 2; t++)
				for (int q8 = 0; q8 < 2; q8++) {
					mp_step_req req = {.weight_dtype = MP_DTYPE_BF16,
					                   .kv_cache_dtype = q8 ? MP_DTYPE_Q8_0 : MP_DTYPE_BF16,
					                   .context_tokens = contexts[j],
					                   .tensor_parallel_size = tps[t]};
					static mp_step s37;
					uint64_t b1, b37;

					if (!mp_tp_degree_ok(&m, tps[t]))
						continue;
					assert_int_equal(mp_step_compute_bound_batch(&m, &d, &req, &b1, NULL), MP_OK);
					req.batch_size = 37;
					assert_int_equal(mp_step_analyze(&m, &d, MP_PHASE_DECODE, &req, &s37, NULL), MP_OK);
					mp_step_crossing_batch(&s37, &b37);
					if (b1 != b37)
						fail_msg("%s tp %llu context %llu: %llu from batch 1, %llu from batch 37", paths[i],
						         (unsigned long long)tps[t], (unsigned long long)contexts[j],
						         (unsigned long long)b1, (unsigned long long)b37);
					cases++;
					if (b1 == 0) {
						assert_true(step_balance(&m, &d, &req, MP_STEP_MAX_SEARCH_BATCH) < 0);
						continue;
					}
					if (!(step_balance(&m, &d, &req, b1) >= 0 && (b1 == 1 || step_balance(&m, &d, &req, b1 - 1) < 0)))
						fail_msg("%s tp %llu context %llu: crossing %llu, balance %.6g there, %.6g before",
						         paths[i], (unsigned long long)tps[t], (unsigned long long)contexts[j],
						         (unsigned long long)b1, step_balance(&m, &d, &req, b1),
						         step_balance(&m, &d, &req, b1 - 1));
					crossings++;
				}
	}
	assert_true(cases >= 30);
	assert_true(crossings >= 20);
}

static void test_errors(void **state)
{
	mp_device d = {0};
	mp_op op = {.kind = MP_OP_MATMUL, .dtype = MP_DTYPE_BF16, .m = 1, .k = 0, .n = 4};
	mp_roof r;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(mp_roofline(&d, &op, &r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/device/memory_bandwidth_bytes_per_second");
	d.memory_bandwidth_bytes_per_second = 1e12;
	assert_int_equal(mp_roofline(&d, &op, &r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/k");
	op.k = 4;
	assert_int_equal(mp_roofline(&d, &op, &r, &err), MP_EUNSUPPORTED);
	op = (mp_op){
	    .kind = MP_OP_MATMUL, .dtype = MP_DTYPE_BF16, .m = UINT64_C(1) << 40, .k = UINT64_C(1) << 40, .n = 1};
	d.peak_flops_per_second[MP_DTYPE_BF16] = 1e15;
	assert_int_equal(mp_roofline(&d, &op, &r, &err), MP_EOVERFLOW);
	op = (mp_op){.kind = MP_OP_ATTENTION,
	             .dtype = MP_DTYPE_BF16,
	             .batch = 1,
	             .heads = 32,
	             .kv_heads = 5,
	             .head_dim = 128,
	             .q_tokens = 1,
	             .kv_tokens = 10};
	assert_int_equal(mp_roofline(&d, &op, &r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/kv_heads");
	/* peaks by unit: bf16 vector work falls back to the fp32 CUDA-core rate, fp8 matrix to bf16 */
	d.peak_flops_per_second[MP_DTYPE_FP32] = 6e13;
	{
		mp_dtype used;
		bool fb;

		assert_true(mp_device_peak(&d, MP_DTYPE_BF16, MP_UNIT_VECTOR, &used, &fb) == 6e13);
		assert_int_equal(used, MP_DTYPE_FP32);
		assert_true(fb);
		assert_true(mp_device_peak(&d, MP_DTYPE_FP8_E4M3, MP_UNIT_MATRIX, &used, &fb) == 1e15);
		assert_int_equal(used, MP_DTYPE_BF16);
		d.vector_flops_per_second[MP_DTYPE_BF16] = 1.2e14;
		assert_true(mp_device_peak(&d, MP_DTYPE_BF16, MP_UNIT_VECTOR, &used, &fb) == 1.2e14);
		assert_false(fb);
	}
}

/* Hierarchical roofline: an L2 ceiling binds when its traffic outweighs the DRAM traffic. */
static void test_hierarchical(void **state)
{
	mp_device d = {0};
	mp_op op = {.kind = MP_OP_RAW,
	            .flops = 1e12,
	            .bytes = 1000000000,
	            .l2_bytes = 20000000000,
	            .unit = MP_UNIT_MATRIX,
	            .dtype = MP_DTYPE_BF16};
	mp_roof r;

	(void)state;
	d.memory_bandwidth_bytes_per_second = 4e12;
	d.l2_bandwidth_bytes_per_second = 10e12;
	d.peak_flops_per_second[MP_DTYPE_BF16] = 1e15;
	assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
	assert_true(r.level[MP_LEVEL_L2].present && !r.level[MP_LEVEL_SHARED].present);
	assert_int_equal(r.binding_level, MP_LEVEL_L2);
	CLOSE(r.time_seconds, 2e-3, 1e-12);
	CLOSE(r.attainable_flops_per_second, 0.5e15, 1e-12);
	op.l2_bytes = 0; /* same traffic at every level: DRAM, the slowest, binds */
	assert_int_equal(mp_roofline(&d, &op, &r, NULL), MP_OK);
	assert_int_equal(r.binding_level, MP_LEVEL_DRAM);
	CLOSE(r.time_seconds, 1e-3, 1e-12);
}

/* ----- documents, charts and HTTP ------------------------------------------------------------------------- */

typedef http_fixture fixture; /* a daemon on 127.0.0.1 port 0 with a fresh database (http_util.h) */

static void post(fixture *f, const char *path, const cJSON *body, http_resp *r)
{
	char *text = cJSON_PrintUnformatted(body);

	http_do(&f->d, "POST", path, text, "application/json", NULL, r);
	free(text);
}

static cJSON *seed_device_json(const cJSON *seed, const char *id)
{
	const cJSON *dv = cJSON_GetObjectItem(cJSON_GetObjectItem(seed, "devices"), id);
	cJSON *o = cJSON_CreateObject(), *p;

	cJSON_AddNumberToObject(o, "memory_bandwidth_bytes_per_second", num(dv, "bandwidth_bytes_per_s"));
	p = cJSON_AddObjectToObject(o, "peak_flops_per_second");
	cJSON_AddNumberToObject(p, "bf16", num(dv, "peak_flops_per_s"));
	cJSON_AddNumberToObject(p, "fp16", num(dv, "peak_flops_per_s"));
	return o;
}

/* The seed roofline cases through HTTP with inline profiles, as the library tests run them directly. */
static void test_http_seed_roofline(void **state)
{
	fixture *f = *state;
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c;
	double tol = num(seed, "tolerance_rel");
	int n = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "roofline"))
	{
		cJSON *body = cJSON_CreateObject(), *ops = cJSON_AddArrayToObject(body, "ops"), *op, *res;
		const char *name = cJSON_GetObjectItem(c, "op") ? cJSON_GetObjectItem(c, "op")->valuestring : NULL;
		http_resp r;

		cJSON_AddItemToObject(body, "device",
		                      seed_device_json(seed, cJSON_GetObjectItem(c, "device")->valuestring));
		if (name) {
			op = cJSON_CreateObject();
			cJSON_AddStringToObject(op, "dtype", num(c, "dtype_bytes") == 4 ? "fp32" : "bf16");
			if (strcmp(name, "elementwise_add") == 0) {
				cJSON_AddStringToObject(op, "op", "elementwise");
				cJSON_AddNumberToObject(op, "elements", 1 << 20);
			} else {
				cJSON_AddStringToObject(op, "op", "matmul");
				cJSON_AddNumberToObject(op, "m", num(c, "m"));
				cJSON_AddNumberToObject(op, "k", num(c, "k"));
				cJSON_AddNumberToObject(op, "n", num(c, "n"));
			}
			cJSON_AddItemToArray(ops, op);
		}
		post(f, "/v1/roofline", body, &r);
		assert_int_equal(r.status, 200);
		if (!name) {
			CLOSE(num(r.json, "ridge_flops_per_byte"), num(c, "ridge_flops_per_byte"), tol);
		} else {
			res = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "ops"), 0);
			CLOSE(num(res, "arithmetic_intensity_flops_per_byte"), num(c, "flops_per_byte"), tol);
			CLOSE(num(res, "attainable_flops_per_second"), num(c, "attainable_flops_per_s"), tol);
			CLOSE(num(res, "fraction_of_peak"), num(c, "fraction_of_peak"), tol);
			assert_string_equal(cJSON_GetObjectItem(res, "bound")->valuestring,
			                    cJSON_GetObjectItem(c, "bound")->valuestring);
			assert_true(num(res, "time_seconds") > 0);
		}
		http_resp_free(&r);
		cJSON_Delete(body);
		n++;
	}
	assert_true(n >= 12);
	/* Little's law from an inline V100 profile (latency in cycles at the clock) */
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "littles_law"))
	{
		cJSON *body = cJSON_CreateObject(), *dev = cJSON_AddObjectToObject(body, "device"), *ll;
		http_resp r;

		cJSON_AddNumberToObject(dev, "memory_bandwidth_bytes_per_second", num(c, "bandwidth_bytes_per_s"));
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(dev, "peak_flops_per_second"), "fp16", 125e12);
		cJSON_AddNumberToObject(dev, "memory_latency_cycles", num(c, "latency_cycles"));
		cJSON_AddNumberToObject(dev, "boost_clock_hz", num(c, "clock_hz"));
		cJSON_AddNumberToObject(dev, "sm_count", num(c, "sm_count"));
		cJSON_AddItemToObject(body, "ops", cJSON_CreateArray());
		post(f, "/v1/roofline", body, &r);
		assert_int_equal(r.status, 200);
		ll = cJSON_GetObjectItem(r.json, "littles_law");
		CLOSE(num(ll, "bytes_in_flight"), num(c, "bytes_in_flight"), tol);
		CLOSE(num(ll, "bytes_in_flight_per_sm"), num(c, "bytes_in_flight_per_sm"), tol);
		/* the profile has only an fp16 peak: the ridge is that roof's, and says so (125e12 / bandwidth) */
		assert_string_equal(cJSON_GetObjectItem(r.json, "ridge_dtype")->valuestring, "fp16");
		CLOSE(num(r.json, "ridge_flops_per_byte"), 125e12 / num(c, "bandwidth_bytes_per_s"), 1e-12);
		http_resp_free(&r);
		cJSON_Delete(body);
	}
	cJSON_Delete(seed);
}

static void post_text(fixture *f, const char *body, http_resp *r)
{
	http_do(&f->d, "POST", "/v1/roofline", body, "application/json", NULL, r);
}

static void test_http_errors_and_warnings(void **state)
{
	fixture *f = *state;
	http_resp r;

	post_text(
	    f,
	    "{\"device\":\"h100-sxm5-80gb\",\"ops\":[{\"op\":\"matmul\",\"m\":1,\"k\":0,\"n\":4,\"dtype\":\"bf16\"}]}",
	    &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/ops/0/k");
	http_resp_free(&r);
	post_text(f, "{\"device\":\"h100-sxm5-80gb\",\"ops\":[{\"op\":\"conv\",\"dtype\":\"bf16\"}]}", &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/ops/0/op");
	http_resp_free(&r);
	post_text(f,
	          "{\"device\":\"h100-sxm5-80gb\",\"ops\":[{\"op\":\"matmul\",\"m\":1,\"k\":2,\"n\":4,\"dtype\":"
	          "\"bf16\",\"x\":1}]}",
	          &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/ops/0/x");
	http_resp_free(&r);
	post_text(f, "{\"device\":\"no-such-gpu\",\"ops\":[]}", &r);
	assert_int_equal(r.status, 404);
	http_resp_free(&r);
	post_text(f, "{\"device\":{\"peak_flops_per_second\":{\"bf16\":1e15}},\"ops\":[]}", &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/device/memory_bandwidth_bytes_per_second");
	http_resp_free(&r);
	post_text(f,
	          "{\"device\":{\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf17\":1e15}},"
	          "\"ops\":[]}",
	          &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/device/peak_flops_per_second/bf17");
	http_resp_free(&r);
	/* a V100 has no bf16 tensor path: bf16 matrix work falls back to its fp16 peak, and says so */
	post_text(f,
	          "{\"device\":\"v100-sxm2-32gb\",\"ops\":[{\"op\":\"matmul\",\"m\":4096,\"k\":4096,\"n\":4096,"
	          "\"dtype\":\"bf16\"}]}",
	          &r);
	assert_int_equal(r.status, 200);
	{
		cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "ops"), 0);

		assert_string_equal(cJSON_GetObjectItem(o, "peak_dtype")->valuestring, "fp16");
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "peak_fallback")));
	}
	http_resp_free(&r);
	/* D10: an explicit ridge_dtype the device has no peak for is refused, naming the dtypes it has */
	post_text(f, "{\"device\":\"h100-sxm5-80gb\",\"ridge_dtype\":\"int4\",\"ops\":[]}", &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/ridge_dtype");
	assert_non_null(strstr(r.body, "fp8_e4m3"));
	assert_null(strstr(r.body, "nf4"));
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb/roofline.svg?ridge_dtype=int4", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "?ridge_dtype");
	http_resp_free(&r);
	post_text(f, "{\"device\":\"h100-sxm5-80gb\",\"ridge_dtype\":\"fp8_e4m3\",\"ops\":[]}", &r);
	assert_int_equal(r.status, 200);
	/* D12: a whole FLOP/s figure of 1e15 or more prints as an integer (not 1.9789e+15) and stays exact */
	{
		const char *at = strstr(r.body, "\"peak_flops_per_second\":");
		size_t digits;

		assert_non_null(at);
		at += strlen("\"peak_flops_per_second\":");
		digits = strspn(at, "0123456789");
		assert_true(digits >= 16);
		assert_true(at[digits] == ',' || at[digits] == '}');
		assert_true(num(cJSON_GetObjectItem(r.json, "device"), "peak_flops_per_second") >= 1e15);
	}
	assert_string_equal(cJSON_GetObjectItem(r.json, "ridge_dtype")->valuestring, "fp8_e4m3");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "device"), "peak_dtype")->valuestring,
	                    "fp8_e4m3");
	http_resp_free(&r);
	/* BR-14: a measurement faster than the floor is returned as a warning. LLaMA-7B Q4_0 (its 6,738,415,616
	 * parameters: tests/ref/models/parameter_counts.json, llama-2-7b's shape) in fp32 on the M1's CPU */
	post_text(
	    f,
	    "{\"device\":{\"memory_bandwidth_bytes_per_second\":68.25e9,\"peak_flops_per_second\":{\"fp32\":2.6e12}},"
	    "\"ops\":[{\"op\":\"decode\",\"weight_bytes\":3791273984,\"parameters\":6738415616,\"dtype\":\"fp32\","
	    "\"measured_seconds\":0.0527}]}",
	    &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "warnings")), 1);
	{
		cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "ops"), 0);

		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "measured"), "above_roof")));
		CLOSE(num(o, "time_seconds"), 3791273984.0 / 68.25e9, 1e-12);
		assert_true(num(o, "flops") == 2.0 * 6738415616.0);
		assert_string_equal(cJSON_GetObjectItem(o, "bound")->valuestring, "memory");
	}
	http_resp_free(&r);
}

/* The transformer block and the inference plan's performance block come from the same engine. */
static void test_http_transformer_and_plan(void **state)
{
	fixture *f = *state;
	http_resp r, p;
	cJSON *dec, *perf;

	post_text(f,
	          "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"batch_size\":8,"
	          "\"context_tokens\":4095,\"prompt_tokens\":4096}}",
	          &r);
	assert_int_equal(r.status, 200);
	dec = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "decode");
	assert_non_null(dec);
	assert_string_equal(cJSON_GetObjectItem(dec, "bound")->valuestring, "memory");
	assert_true(num(dec, "kv_cache_read_bytes") == 8.0 * 2 * 32 * 8 * 128 * 4096 * 2);
	assert_true(cJSON_GetArraySize(cJSON_GetObjectItem(dec, "ops")) >= 8);
	http_do(&f->d, "POST", "/v1/plan/inference",
	        "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":8,"
	        "\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}",
	        "application/json", NULL, &p);
	assert_int_equal(p.status, 200);
	perf = cJSON_GetObjectItem(p.json, "performance");
	assert_non_null(perf);
	assert_true(num(perf, "decode_step_seconds") == num(dec, "step_seconds"));
	assert_true(num(perf, "prefill_seconds") ==
	            num(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "prefill"), "step_seconds"));
	CLOSE(num(perf, "tokens_per_second_total"), 8 * num(perf, "tokens_per_second_per_sequence"), 1e-12);
	assert_string_equal(cJSON_GetObjectItem(perf, "bound")->valuestring, "memory");
	http_resp_free(&p);
	http_resp_free(&r);
	/* the README's Mixtral example: with tensor_parallel_size 2 the performance block is per GPU */
	{
		static const char *const tp_body[] = {
		    "{\"model\":\"mixtral-8x7b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":8,"
		    "\"sequence_length\":8192,\"num_gpus\":2,\"tensor_parallel_size\":1,\"device\":\"h100-sxm5-80gb\"}",
		    "{\"model\":\"mixtral-8x7b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":8,"
		    "\"sequence_length\":8192,\"num_gpus\":2,\"tensor_parallel_size\":2,\"device\":\"h100-sxm5-80gb\"}"};
		http_resp one, two;
		cJSON *p1, *p2, *n;
		bool noted = false;

		http_do(&f->d, "POST", "/v1/plan/inference", tp_body[0], "application/json", NULL, &one);
		http_do(&f->d, "POST", "/v1/plan/inference", tp_body[1], "application/json", NULL, &two);
		if (one.status != 200 || two.status != 200)
			fail_msg("mixtral: %ld %s / %ld %s", one.status, one.body, two.status, two.body);
		p1 = cJSON_GetObjectItem(one.json, "performance");
		p2 = cJSON_GetObjectItem(two.json, "performance");
		/* 8 KV heads -> 4 per GPU: exactly half the KV reads */
		assert_true(num(p2, "decode_kv_cache_read_bytes_per_step") * 2 == num(p1, "decode_kv_cache_read_bytes_per_step"));
		/* the sharded weights halve; norms, embeddings and the router stay whole (a tiny share) */
		CLOSE(num(p2, "decode_bytes_per_step") / num(p1, "decode_bytes_per_step"), 0.5, 0.01);
		assert_true(num(p2, "decode_step_seconds") < 0.6 * num(p1, "decode_step_seconds"));
		cJSON_ArrayForEach(n, cJSON_GetObjectItem(p2, "notes"))
		noted = noted || (strstr(n->valuestring, "tensor_parallel_size 2") && strstr(n->valuestring, "all-reduce"));
		assert_true(noted);
		http_resp_free(&one);
		http_resp_free(&two);
	}
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":{\"parameters\":7000000000}}}", &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/transformer/model");
	http_resp_free(&r);
	/* D3: the plans' context rule (llama-3-8b: 8192 positions, no RoPE scaling), with the same override */
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"context_tokens\":100000}}",
	          &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/transformer/context_tokens");
	http_resp_free(&r);
	post_text(f,
	          "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"context_tokens\":100000,"
	          "\"prompt_tokens\":8192,\"allow_beyond_max_position_embeddings\":true}}",
	          &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	/* D5: an operation's overflow inside the step names the request field under /transformer */
	post_text(f,
	          "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"batch_size\":1048576,"
	          "\"prompt_tokens\":16777216,\"attention\":\"eager\",\"allow_beyond_max_position_embeddings\":true}}",
	          &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/transformer/prompt_tokens");
	http_resp_free(&r);
	/* D11: the plans' KV formats, not every weight format */
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"kv_cache_dtype\":\"int4\"}}",
	          &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/transformer/kv_cache_dtype");
	http_resp_free(&r);
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"kv_cache_dtype\":\"q4_K\"}}",
	          &r);
	assert_int_equal(r.status, 422);
	http_resp_free(&r);
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"kv_cache_dtype\":\"fp8\"}}",
	          &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	/* the 4096-token defaults stop at gpt2's 1024 learned positions */
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"gpt2\"}}", &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
}

/* ----- the review of POST /v1/roofline (four defects, each checked here) -------------------------------------- */

static bool has_warning(const cJSON *doc, const char *a, const char *b, const char *c)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "warnings"))
	if (cJSON_IsString(w) && strstr(w->valuestring, a) && (!b || strstr(w->valuestring, b)) &&
	    (!c || strstr(w->valuestring, c)))
		return true;
	return false;
}

static const char *str_of(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", k);
	return v->valuestring;
}

/* An AWQ checkpoint's config (Llama-3-8B's shape, fp16, 4-bit AWQ with groups of 128), as the review posted it. */
#define AWQ_CONFIG                                                                                                     \
	"{\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":14336,\"num_hidden_layers\":32,"        \
	"\"num_attention_heads\":32,\"num_key_value_heads\":8,\"vocab_size\":128256,\"max_position_embeddings\":8192," \
	"\"torch_dtype\":\"float16\",\"quantization_config\":{\"quant_method\":\"awq\",\"bits\":4,\"group_size\":128}}"

/* The roofline's transformer block and the plan's performance block for the same question: sequence_length S is
 * a decode step over S - 1 cached tokens and a prefill of S tokens (service/mps_plan.c performance). */
static void same_question(fixture *f, const char *model, const char *plan_extra, const char *roof_extra,
                          const char *device, cJSON **plan_out, http_resp *plan, http_resp *roof)
{
	char body[4096];

	snprintf(body, sizeof(body), "{\"model\":%s,\"batch_size\":4,\"sequence_length\":4096,\"device\":\"%s\"%s}",
	         model, device, plan_extra);
	http_do(&f->d, "POST", "/v1/plan/inference", body, "application/json", NULL, plan);
	if (plan->status != 200)
		fail_msg("plan: %ld %s", plan->status, plan->body);
	snprintf(body, sizeof(body),
	         "{\"device\":\"%s\",\"transformer\":{\"model\":%s,\"batch_size\":4,\"context_tokens\":4095,"
	         "\"prompt_tokens\":4096%s}}",
	         device, model, roof_extra);
	post_text(f, body, roof);
	if (roof->status != 200)
		fail_msg("roofline: %ld %s", roof->status, roof->body);
	*plan_out = cJSON_GetObjectItem(plan->json, "performance");
	assert_non_null(*plan_out);
}

static void assert_same_steps(const cJSON *perf, const cJSON *plan_request, const cJSON *roof)
{
	const cJSON *t = cJSON_GetObjectItem(roof, "transformer"), *dec = cJSON_GetObjectItem(t, "decode");
	const cJSON *rq = cJSON_GetObjectItem(t, "request");

	assert_non_null(dec);
	assert_non_null(rq);
	assert_true(num(dec, "step_seconds") == num(perf, "decode_step_seconds"));
	assert_true(num(dec, "bytes") == num(perf, "decode_bytes_per_step"));
	assert_true(num(dec, "kv_cache_read_bytes") == num(perf, "decode_kv_cache_read_bytes_per_step"));
	assert_true(num(cJSON_GetObjectItem(t, "prefill"), "step_seconds") == num(perf, "prefill_seconds"));
	/* the same resolution, echoed the same way */
	assert_string_equal(str_of(rq, "weight_dtype"), str_of(plan_request, "weight_dtype"));
	assert_string_equal(str_of(rq, "weight_dtype_from"), str_of(plan_request, "weight_dtype_from"));
	assert_string_equal(str_of(rq, "kv_cache_dtype"), str_of(plan_request, "kv_cache_dtype"));
	assert_string_equal(str_of(rq, "kv_cache_dtype_from"), str_of(plan_request, "kv_cache_dtype_from"));
	assert_string_equal(str_of(rq, "compute_dtype"), str_of(plan_request, "compute_dtype"));
	assert_string_equal(str_of(rq, "compute_dtype_from"), str_of(plan_request, "compute_dtype_from"));
}

/* Defect 1: the transformer form resolves the weight and KV dtypes as the plan does (quantization_config, the
 * config's dtype, "auto", the aliases), so its decode step is the plan's. */
static void test_http_transformer_dtypes_as_plan(void **state)
{
	fixture *f = *state;
	http_resp p, r;
	cJSON *perf, *rq;

	/* AWQ: int4 from quantization_config, the KV cache in the config's fp16 (the review's 3.6x) */
	same_question(f, "{\"hf_config\":" AWQ_CONFIG "}", "", "", "h100-sxm5-80gb", &perf, &p, &r);
	rq = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "request");
	assert_same_steps(perf, cJSON_GetObjectItem(p.json, "request"), r.json);
	assert_string_equal(str_of(rq, "weight_dtype"), "int4");
	assert_string_equal(str_of(rq, "weight_dtype_from"), "quantization_config");
	assert_string_equal(str_of(rq, "int4_scheme"), "awq");
	assert_string_equal(str_of(rq, "kv_cache_dtype"), "fp16");
	{
		/* the step reads the 4-bit matrices: a quarter of the bf16 bytes the review saw (15,009,316,864) and
		 * less than the plan's whole weights (their embeddings are gathered, not read) */
		const cJSON *dec = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "decode");
		double wb = num(dec, "weight_bytes");

		assert_true(wb < 15009316864.0 / 3);
		assert_true(wb < num(cJSON_GetObjectItem(p.json, "memory"), "weights_bytes"));
	}
	http_resp_free(&p);
	http_resp_free(&r);
	/* the same with "auto" spelt out and with the quantizer's alias: the same step */
	same_question(f, "{\"hf_config\":" AWQ_CONFIG "}", ",\"weight_dtype\":\"awq\",\"kv_cache_dtype\":\"auto\"",
	              ",\"weight_dtype\":\"awq\",\"kv_cache_dtype\":\"auto\"", "h100-sxm5-80gb", &perf, &p, &r);
	assert_same_steps(perf, cJSON_GetObjectItem(p.json, "request"), r.json);
	http_resp_free(&p);
	http_resp_free(&r);
	/* a plain bf16 preset with nothing said, and the aliases the plan takes (bfloat16, fp8) */
	same_question(f, "\"llama-3-8b\"", "", "", "h200-sxm-141gb", &perf, &p, &r);
	assert_same_steps(perf, cJSON_GetObjectItem(p.json, "request"), r.json);
	assert_string_equal(str_of(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "request"),
	                           "weight_dtype_from"),
	                    "config_dtype");
	http_resp_free(&p);
	http_resp_free(&r);
	same_question(f, "\"llama-3-8b\"", ",\"weight_dtype\":\"bfloat16\",\"kv_cache_dtype\":\"fp8\"",
	              ",\"weight_dtype\":\"bfloat16\",\"kv_cache_dtype\":\"fp8\"", "h200-sxm-141gb", &perf, &p, &r);
	assert_same_steps(perf, cJSON_GetObjectItem(p.json, "request"), r.json);
	http_resp_free(&p);
	http_resp_free(&r);
	/* a V100 has no bf16: the bf16 checkpoint is served in fp16, as the plan serves it, with its warning */
	same_question(f, "\"llama-3-8b\"", "", "", "v100-sxm2-32gb", &perf, &p, &r);
	assert_same_steps(perf, cJSON_GetObjectItem(p.json, "request"), r.json);
	assert_true(has_warning(r.json, "the checkpoint is bf16", "fp16", NULL));
	http_resp_free(&p);
	http_resp_free(&r);
	/* a bad dtype is named as the plan names it */
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"int3\"}}",
	          &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/transformer/weight_dtype");
	assert_non_null(strstr(r.body, "auto"));
	http_resp_free(&r);
}

/* Defect 2: a decode op needs its parameters (2 FLOPs each per token): absent, it is a 422, not 0 FLOPs. */
static void test_http_decode_op_parameters(void **state)
{
	fixture *f = *state;
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c, *last = NULL;
	char body[512];
	http_resp r;
	cJSON *o;

	post_text(f,
	          "{\"device\":\"h100-sxm5-80gb\",\"ops\":[{\"op\":\"decode\",\"weight_bytes\":14000000000,"
	          "\"batch\":512,\"dtype\":\"bf16\"}]}",
	          &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/ops/0/parameters");
	assert_non_null(strstr(r.body, "parameters"));
	http_resp_free(&r);
	/* the seed figure: batch 512 of a 7e9-parameter bf16 model on the H100 SXM profile is compute-bound */
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(seed, "decode")) last = c;
	assert_non_null(last);
	snprintf(body, sizeof(body),
	         "{\"device\":{\"memory_bandwidth_bytes_per_second\":%.17g,\"peak_flops_per_second\":{\"bf16\":%.17g}},"
	         "\"ops\":[{\"op\":\"decode\",\"weight_bytes\":%.0f,\"parameters\":%.0f,\"batch\":%.0f,\"dtype\":\"bf16\"}]}",
	         num(cJSON_GetObjectItem(cJSON_GetObjectItem(seed, "devices"), "h100-sxm5"), "bandwidth_bytes_per_s"),
	         num(cJSON_GetObjectItem(cJSON_GetObjectItem(seed, "devices"), "h100-sxm5"), "peak_flops_per_s"),
	         num(last, "weight_bytes"), num(last, "parameters"), num(last, "batch"));
	post_text(f, body, &r);
	assert_int_equal(r.status, 200);
	o = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "ops"), 0);
	CLOSE(num(o, "time_seconds"), num(last, "step_seconds"), num(seed, "tolerance_rel"));
	CLOSE(num(o, "tokens_per_second_total"), num(last, "tokens_per_second_total"), num(seed, "tolerance_rel"));
	assert_string_equal(str_of(o, "bound"), "compute");
	http_resp_free(&r);
	/* the compact form names the argument */
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb/roofline.svg?op=decode:weight_bytes=14e9,batch=8", NULL, NULL,
	        NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "?op");
	assert_non_null(strstr(r.body, "parameters"));
	http_resp_free(&r);
	cJSON_Delete(seed);
}

/* Defect 3: what the transformer form left to its defaults is echoed, with a warning for each that changes the
 * answer. */
static void test_http_transformer_defaults_echoed(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *rq;

	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\"}}", &r);
	assert_int_equal(r.status, 200);
	rq = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "request");
	assert_non_null(rq);
	assert_true(num(rq, "batch_size") == 1);
	assert_string_equal(str_of(rq, "batch_size_from"), "default");
	assert_true(num(rq, "context_tokens") == 4096);
	assert_string_equal(str_of(rq, "context_tokens_from"), "default");
	assert_true(num(rq, "prompt_tokens") == 4096);
	assert_string_equal(str_of(rq, "prompt_tokens_from"), "default");
	assert_string_equal(str_of(rq, "weight_dtype"), "bf16");
	assert_string_equal(str_of(rq, "weight_dtype_from"), "config_dtype");
	assert_string_equal(str_of(rq, "kv_cache_dtype_from"), "compute_dtype");
	assert_true(has_warning(r.json, "/transformer/batch_size", "1", NULL));
	assert_true(has_warning(r.json, "/transformer/context_tokens", "4096", NULL));
	assert_true(has_warning(r.json, "/transformer/prompt_tokens", "4096", NULL));
	/* the decode step really is at 4096 cached tokens: 2 (K, V) x 32 layers x 8 heads x 128 x 4097 x 2 B */
	assert_true(num(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "decode"), "kv_cache_read_bytes") ==
	            2.0 * 32 * 8 * 128 * 4097 * 2);
	http_resp_free(&r);
	/* everything given: echoed as the request's, and no default warnings */
	post_text(f,
	          "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"batch_size\":8,"
	          "\"context_tokens\":2048,\"prompt_tokens\":512,\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\"}}",
	          &r);
	assert_int_equal(r.status, 200);
	rq = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "request");
	assert_true(num(rq, "batch_size") == 8);
	assert_string_equal(str_of(rq, "batch_size_from"), "request");
	assert_string_equal(str_of(rq, "context_tokens_from"), "request");
	assert_string_equal(str_of(rq, "prompt_tokens_from"), "request");
	assert_string_equal(str_of(rq, "weight_dtype_from"), "request");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "warnings")), 0);
	http_resp_free(&r);
	/* gpt2's 1024 learned positions stop the defaults, and the echo says so */
	post_text(f, "{\"device\":\"h200-sxm-141gb\",\"transformer\":{\"model\":\"gpt2\"}}", &r);
	assert_int_equal(r.status, 200);
	rq = cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "transformer"), "request");
	assert_true(num(rq, "context_tokens") == 1023);
	assert_string_equal(str_of(rq, "context_tokens_from"), "model_context");
	assert_true(num(rq, "prompt_tokens") == 1024);
	assert_string_equal(str_of(rq, "prompt_tokens_from"), "model_context");
	assert_true(has_warning(r.json, "/transformer/context_tokens", "1023", "1024"));
	http_resp_free(&r);
}

/* Defect 4: a peak taken from another dtype is a warning naming the op, the dtype asked and the peak used. */
static void test_http_peak_fallback_warned(void **state)
{
	fixture *f = *state;
	http_resp r;

	post_text(f,
	          "{\"device\":\"v100-sxm2-32gb\",\"ops\":[{\"op\":\"matmul\",\"m\":1,\"k\":4096,\"n\":4096,"
	          "\"dtype\":\"fp16\"},{\"op\":\"matmul\",\"m\":1,\"k\":4096,\"n\":4096,\"dtype\":\"bf16\"}]}",
	          &r);
	assert_int_equal(r.status, 200);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "ops"), 1),
	                                             "peak_fallback")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "warnings")), 1);
	assert_true(has_warning(r.json, "/ops/1", "bf16", "fp16"));
	assert_false(has_warning(r.json, "/ops/0", NULL, NULL));
	http_resp_free(&r);
	/* the transformer's steps on a V100: bf16 activations in its matrix products take the fp16 peak, named once */
	post_text(f,
	          "{\"device\":\"v100-sxm2-32gb\",\"transformer\":{\"model\":\"llama-3-8b\",\"batch_size\":1,"
	          "\"context_tokens\":100,\"prompt_tokens\":100}}",
	          &r);
	assert_int_equal(r.status, 200);
	assert_true(has_warning(r.json, "transformer decode and prefill (qkv, attention, o_proj", "bf16", "fp16"));
	http_resp_free(&r);
	/* elementwise work at the CUDA-core fp32 rate is the model (mp_device_peak), not a missing figure */
	post_text(f, "{\"device\":\"h100-sxm5-80gb\",\"ops\":[{\"op\":\"elementwise\",\"elements\":1048576,\"dtype\":\"bf16\"}]}",
	          &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "warnings")), 0);
	http_resp_free(&r);
}

static void test_xml_escape(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(mpc_xml_escape("a<b>&\"'c", buf, sizeof(buf)), strlen("a&lt;b&gt;&amp;&quot;&#39;c"));
	assert_string_equal(buf, "a&lt;b&gt;&amp;&quot;&#39;c");
	mpc_xml_escape("ab&cd", buf, 5); /* no room for "&amp;": cut before it, never inside */
	assert_string_equal(buf, "ab");
	mpc_xml_escape("x\xc3\xa9", buf, 3); /* "é" needs 2 bytes + NUL: not cut in half */
	assert_string_equal(buf, "x");
	mpc_xml_escape("a\x01"
	               "b",
	               buf, sizeof(buf)); /* control characters are not XML */
	assert_string_equal(buf, "ab");
	/* ill-formed UTF-8 (a query's %ff%fe) and the noncharacters U+FFFE, U+FFFF become U+FFFD, one per bad byte */
	mpc_xml_escape("a\xff\xfe"
	               "b",
	               buf, sizeof(buf));
	assert_string_equal(buf, "a\xef\xbf\xbd\xef\xbf\xbd"
	                         "b");
	mpc_xml_escape("x\xef\xbf\xbe"
	               "y\xef\xbf\xbf",
	               buf, sizeof(buf));
	assert_string_equal(buf, "x\xef\xbf\xbd"
	                         "y\xef\xbf\xbd");
	mpc_xml_escape("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80", buf, sizeof(buf)); /* kept; a surrogate is not */
	assert_string_equal(buf, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
}

/* x (or y) of value v by log interpolation between the first and last tick of the axis. */
static double tick_position(xmlXPathContextPtr ctx, const char *cls, const char *coord, double v)
{
	char xpath[96];
	xmlXPathObjectPtr r;
	double v0, v1, p0, p1;
	int n;

	snprintf(xpath, sizeof(xpath), "//s:line[@class='%s']", cls);
	r = xmlXPathEvalExpression((const xmlChar *)xpath, ctx);
	assert_non_null(r);
	n = r->nodesetval ? r->nodesetval->nodeNr : 0;
	assert_true(n >= 2);
	{
		xmlChar *a = xmlGetProp(r->nodesetval->nodeTab[0], (const xmlChar *)"data-value");
		xmlChar *b = xmlGetProp(r->nodesetval->nodeTab[n - 1], (const xmlChar *)"data-value");
		xmlChar *pa = xmlGetProp(r->nodesetval->nodeTab[0], (const xmlChar *)coord);
		xmlChar *pb = xmlGetProp(r->nodesetval->nodeTab[n - 1], (const xmlChar *)coord);

		v0 = strtod((const char *)a, NULL);
		v1 = strtod((const char *)b, NULL);
		p0 = strtod((const char *)pa, NULL);
		p1 = strtod((const char *)pb, NULL);
		xmlFree(a);
		xmlFree(b);
		xmlFree(pa);
		xmlFree(pb);
	}
	xmlXPathFreeObject(r);
	return p0 + (log10(v) - log10(v0)) / (log10(v1) - log10(v0)) * (p1 - p0);
}

static double prop(xmlNodePtr n, const char *name)
{
	xmlChar *v = xmlGetProp(n, (const xmlChar *)name);
	double d;

	if (v == NULL)
		fail_msg("attribute %s missing", name);
	d = strtod((const char *)v, NULL);
	xmlFree(v);
	return d;
}

/* GET /v1/devices/{id}/roofline.svg: parse it and check the ridge and each point where the axes put them. */
static void test_svg_chart(void **state)
{
	fixture *f = *state;
	cJSON *seed = ref_json("conformance/seed_cases.json"), *c, *json_ops;
	http_resp r, j;
	xmlDocPtr doc;
	xmlXPathContextPtr ctx;
	xmlXPathObjectPtr res;
	double ridge = 0;
	const char *q =
	    "/v1/devices/h100-sxm5-80gb/roofline.svg?op=matmul:m=256,k=256,n=256,dtype=bf16,label=a%3Cb%3E%26c"
	    "&op=matmul:m=1,k=4096,n=4096,dtype=bf16,label=gemv&op=matmul:m=8192,k=8192,n=8192,dtype=bf16"
	    "&op=elementwise:elements=1e6,dtype=bf16,label=add";

	cJSON_ArrayForEach(
	    c, cJSON_GetObjectItem(seed, "roofline")) if (strcmp(cJSON_GetObjectItem(c, "device")->valuestring,
	                                                         "h100-sxm5") == 0 &&
	                                                  cJSON_GetObjectItem(c, "ridge_flops_per_byte")) ridge =
	    num(c, "ridge_flops_per_byte");
	assert_true(ridge > 0);
	http_do(&f->d, "GET", q, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "image/svg+xml");
	/* the same operations as JSON, for the expected positions */
	post_text(f,
	          "{\"device\":\"h100-sxm5-80gb\",\"ops\":[{\"op\":\"matmul\",\"m\":256,\"k\":256,\"n\":256,\"dtype\":"
	          "\"bf16\"},"
	          "{\"op\":\"matmul\",\"m\":1,\"k\":4096,\"n\":4096,\"dtype\":\"bf16\"},{\"op\":\"matmul\",\"m\":8192,"
	          "\"k\":8192,\"n\":8192,\"dtype\":\"bf16\"},{\"op\":\"elementwise\",\"elements\":1000000,\"dtype\":"
	          "\"bf16\"}]}",
	          &j);
	assert_int_equal(j.status, 200);
	json_ops = cJSON_GetObjectItem(j.json, "ops");

	doc = xmlReadMemory(r.body, (int)r.len, "roofline.svg", NULL, XML_PARSE_NONET);
	assert_non_null(doc);
	/* a label of any bytes still gives a chart XML parsers take (issue 19: %ff%fe and U+FFFE gave 200 and text
	 * that libxml2 refused) */
	{
		static const char *const labels[] = { "%ff%fe", "%ef%bf%be", "%ed%a0%80%01x" };

		for (size_t i = 0; i < 3; i++) {
			char path[256];
			http_resp bad;
			xmlDocPtr parsed;

			snprintf(path, sizeof(path),
			         "/v1/devices/h100-sxm5-80gb/roofline.svg?op=matmul:m=1,k=4096,n=4096,dtype=bf16,label=%s",
			         labels[i]);
			http_do(&f->d, "GET", path, NULL, NULL, NULL, &bad);
			assert_int_equal(bad.status, 200);
			parsed = xmlReadMemory(bad.body, (int)bad.len, "bad.svg", NULL, XML_PARSE_NONET);
			if (parsed == NULL)
				fail_msg("label %s: the chart is not XML", labels[i]);
			xmlFreeDoc(parsed);
			http_resp_free(&bad);
		}
	}
	ctx = xmlXPathNewContext(doc);
	xmlXPathRegisterNs(ctx, (const xmlChar *)"s", (const xmlChar *)"http://www.w3.org/2000/svg");
	/* the ridge at (ridge, peak) */
	res = xmlXPathEvalExpression((const xmlChar *)"//s:circle[@id='ridge']", ctx);
	assert_int_equal(res->nodesetval->nodeNr, 1);
	CLOSE(prop(res->nodesetval->nodeTab[0], "data-intensity"), ridge, 0.005);
	assert_true(fabs(prop(res->nodesetval->nodeTab[0], "cx") - tick_position(ctx, "xtick", "x1", ridge)) < 0.5);
	assert_true(fabs(prop(res->nodesetval->nodeTab[0], "cy") - tick_position(ctx, "ytick", "y1", 989.4e12)) < 0.5);
	xmlXPathFreeObject(res);
	/* both ceilings meet at the ridge */
	res = xmlXPathEvalExpression((const xmlChar *)"//s:line[@id='memory-ceiling' or @id='compute-ceiling']", ctx);
	assert_int_equal(res->nodesetval->nodeNr, 2);
	assert_true(fabs(prop(res->nodesetval->nodeTab[0], "x2") - prop(res->nodesetval->nodeTab[1], "x1")) < 0.5);
	assert_true(fabs(prop(res->nodesetval->nodeTab[0], "y2") - prop(res->nodesetval->nodeTab[1], "y1")) < 0.5);
	xmlXPathFreeObject(res);
	/* each point where its intensity and attainable FLOP/s put it, with its (escaped) label */
	res = xmlXPathEvalExpression((const xmlChar *)"//s:g[@class='op']", ctx);
	assert_int_equal(res->nodesetval->nodeNr, 4);
	for (int i = 0; i < res->nodesetval->nodeNr; i++) {
		xmlNodePtr g = res->nodesetval->nodeTab[i], circle = NULL, text = NULL;
		const cJSON *o = cJSON_GetArrayItem(json_ops, (int)prop(g, "data-index"));

		for (xmlNodePtr k = g->children; k; k = k->next) {
			if (k->type == XML_ELEMENT_NODE && strcmp((const char *)k->name, "circle") == 0)
				circle = k;
			if (k->type == XML_ELEMENT_NODE && strcmp((const char *)k->name, "text") == 0)
				text = k;
		}
		assert_non_null(circle);
		assert_true(fabs(prop(circle, "cx") -
		                 tick_position(ctx, "xtick", "x1", num(o, "arithmetic_intensity_flops_per_byte"))) <
		            0.5);
		assert_true(fabs(prop(circle, "cy") -
		                 tick_position(ctx, "ytick", "y1", num(o, "attainable_flops_per_second"))) < 0.5);
		if (i == 0) {
			xmlChar *t = xmlNodeGetContent(text);

			assert_string_equal((const char *)t, "a<b>&c");
			xmlFree(t);
		}
	}
	xmlXPathFreeObject(res);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	http_resp_free(&j);
	http_resp_free(&r);
	/* a bad spec names the query argument */
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb/roofline.svg?op=matmul:m=1,k=0,n=2,dtype=bf16", NULL, NULL,
	        NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "?op");
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/nope/roofline.svg", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	http_resp_free(&r);
	cJSON_Delete(seed);
}

/* A text element's box as the layout gives it: the estimated width at its font size, from the font size above the
 * baseline to a third of it below (the label boxes the placer keeps apart are at least this tall). */
typedef struct tbox {
	double x0, y0, x1, y1;
	char cls[32], text[256];
} tbox;

static tbox text_box(xmlNodePtr t)
{
	xmlChar *c = xmlGetProp(t, (const xmlChar *)"class"), *id = xmlGetProp(t, (const xmlChar *)"id");
	xmlChar *fs = xmlGetProp(t, (const xmlChar *)"font-size"), *anchor = xmlGetProp(t, (const xmlChar *)"text-anchor");
	xmlChar *content = xmlNodeGetContent(t);
	double px = fs ? strtod((const char *)fs, NULL) : 12, x = prop(t, "x"), y = prop(t, "y");
	double w = mpc_svg_text_width((const char *)content, px);
	tbox b;

	if (anchor && strcmp((const char *)anchor, "end") == 0)
		x -= w;
	else if (anchor && strcmp((const char *)anchor, "middle") == 0)
		x -= w / 2;
	b.x0 = x;
	b.x1 = x + w;
	b.y0 = y - px;
	b.y1 = y + px / 3;
	snprintf(b.cls, sizeof(b.cls), "%s", c ? (const char *)c : id ? (const char *)id : "");
	snprintf(b.text, sizeof(b.text), "%s", (const char *)content);
	xmlFree(c);
	xmlFree(id);
	xmlFree(fs);
	xmlFree(anchor);
	xmlFree(content);
	return b;
}

/* The chart at path: no two labels of the plot intersect, none covers a point, and every text (labels, legend,
 * table, title) lies inside the viewport; each point sits under the roof its data-roof names; each numbered point
 * is in the table. Returns how many labels the plot holds and how many points are numbered. */
static void check_layout(fixture *f, const char *path, int *nlabels, int *nnumbered)
{
	http_resp r;
	xmlDocPtr doc;
	xmlXPathContextPtr ctx;
	xmlXPathObjectPtr texts, ops;
	tbox *labels;
	int nl = 0, numbered = 0;
	double w, h;

	http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
	if (r.status != 200)
		fail_msg("%s: %ld %s", path, r.status, r.body);
	doc = xmlReadMemory(r.body, (int)r.len, "roofline.svg", NULL, XML_PARSE_NONET);
	assert_non_null(doc);
	w = prop(xmlDocGetRootElement(doc), "width");
	h = prop(xmlDocGetRootElement(doc), "height");
	ctx = xmlXPathNewContext(doc);
	xmlXPathRegisterNs(ctx, (const xmlChar *)"s", (const xmlChar *)"http://www.w3.org/2000/svg");
	/* every text but the rotated y-axis title and the tick labels (numbers with a superscript) */
	texts = xmlXPathEvalExpression((const xmlChar *)"//s:text[not(@transform) and not(contains(@class,'tick'))]", ctx);
	labels = calloc((size_t)texts->nodesetval->nodeNr + 1, sizeof(*labels));
	assert_non_null(labels);
	for (int i = 0; i < texts->nodesetval->nodeNr; i++) {
		tbox b = text_box(texts->nodesetval->nodeTab[i]);

		if (b.x0 < 0 || b.y0 < 0 || b.x1 > w || b.y1 > h)
			fail_msg("%s: text '%s' (%s) at [%.1f %.1f %.1f %.1f] leaves the %gx%g viewport", path, b.text, b.cls,
			         b.x0, b.y0, b.x1, b.y1, w, h);
		if (strcmp(b.cls, "label") == 0)
			labels[nl++] = b;
	}
	for (int i = 0; i < nl; i++)
		for (int j = i + 1; j < nl; j++)
			if (labels[i].x0 < labels[j].x1 && labels[j].x0 < labels[i].x1 && labels[i].y0 < labels[j].y1 &&
			    labels[j].y0 < labels[i].y1)
				fail_msg("%s: labels '%s' and '%s' overlap", path, labels[i].text, labels[j].text);
	ops = xmlXPathEvalExpression((const xmlChar *)"//s:g[@class='op']", ctx);
	for (int i = 0; i < ops->nodesetval->nodeNr; i++) {
		xmlNodePtr g = ops->nodesetval->nodeTab[i], circle = NULL;
		xmlChar *roof = xmlGetProp(g, (const xmlChar *)"data-roof"), *num = xmlGetProp(g, (const xmlChar *)"data-number");
		char xpath[160];
		xmlXPathObjectPtr line;

		for (xmlNodePtr k = g->children; k; k = k->next)
			if (k->type == XML_ELEMENT_NODE && strcmp((const char *)k->name, "circle") == 0)
				circle = k;
		assert_non_null(circle);
		/* no label covers a point */
		for (int j = 0; j < nl; j++)
			if (prop(circle, "cx") > labels[j].x0 && prop(circle, "cx") < labels[j].x1 &&
			    prop(circle, "cy") > labels[j].y0 && prop(circle, "cy") < labels[j].y1)
				fail_msg("%s: label '%s' covers a point", path, labels[j].text);
		/* under the roof it names */
		snprintf(xpath, sizeof(xpath), "//s:line[contains(@class,'ceiling') and @data-label='%s']", (const char *)roof);
		line = xmlXPathEvalExpression((const xmlChar *)xpath, ctx);
		if (line->nodesetval == NULL || line->nodesetval->nodeNr != 1)
			fail_msg("%s: no roof line for '%s'", path, (const char *)roof);
		assert_true(prop(g, "data-attainable") <= prop(line->nodesetval->nodeTab[0], "data-flops-per-second") * 1.000001);
		xmlXPathFreeObject(line);
		if (num) {
			snprintf(xpath, sizeof(xpath), "//s:text[@class='table-label' and @data-number='%s']", (const char *)num);
			line = xmlXPathEvalExpression((const xmlChar *)xpath, ctx);
			assert_int_equal(line->nodesetval ? line->nodesetval->nodeNr : 0, 1);
			xmlXPathFreeObject(line);
			numbered++;
		}
		xmlFree(roof);
		xmlFree(num);
	}
	/* the legend explains the colours */
	xmlXPathFreeObject(ops);
	ops = xmlXPathEvalExpression((const xmlChar *)"//s:circle[@id='legend-memory' or @id='legend-compute']", ctx);
	assert_int_equal(ops->nodesetval->nodeNr, 2);
	xmlXPathFreeObject(ops);
	xmlXPathFreeObject(texts);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	free(labels);
	http_resp_free(&r);
	*nlabels = nl;
	*nnumbered = numbered;
}

/* The README's chart, a model's steps, and a crowded chart: labels apart and inside; roofs per data type. */
static void test_svg_layout(void **state)
{
	fixture *f = *state;
	char crowded[4096];
	size_t o = 0;
	int nl, nn;
	http_resp r;

	/* the README's example: three operations, each labelled in full, none numbered */
	check_layout(f,
	             "/v1/devices/h100-sxm5-80gb/roofline.svg?op=matmul:m=1,k=4096,n=4096,dtype=bf16,label=gemv&op=matmul:"
	             "m=256,k=256,n=256,dtype=bf16&op=matmul:m=8192,k=8192,n=8192,dtype=bf16",
	             &nl, &nn);
	assert_int_equal(nl, 4); /* three operations and the ridge */
	assert_int_equal(nn, 0);
	/* a model's decode and prefill steps: points on one spot share a label or are numbered */
	check_layout(f, "/v1/devices/h200-sxm-141gb/roofline.svg?model=llama-3-8b&batch_size=8&context_tokens=4096", &nl,
	             &nn);
	assert_true(nl >= 8);
	/* crowded: 28 matrix products in two data types, a MoE model's steps, a long label */
	o += (size_t)snprintf(crowded + o, sizeof(crowded) - o,
	                      "/v1/devices/h100-sxm5-80gb/roofline.svg?model=mixtral-8x7b&batch_size=64&context_tokens=8192");
	for (int m = 1; m <= 8192; m *= 2)
		for (int d = 0; d < 2; d++)
			o += (size_t)snprintf(crowded + o, sizeof(crowded) - o, "&op=matmul:m=%d,k=4096,n=4096,dtype=%s", m,
			                      d ? "fp8_e4m3" : "bf16");
	snprintf(crowded + o, sizeof(crowded) - o, "&op=elementwise:elements=1048576,dtype=bf16,label=a%%20label%%20long"
	                                           "%%20enough%%20to%%20need%%20room%%20of%%20its%%20own");
	check_layout(f, crowded, &nl, &nn);
	assert_true(nn > 0); /* some had to be numbered */
	/* the fp8 operations sit under an fp8 roof, drawn above the bf16 one */
	http_do(&f->d, "GET", crowded, NULL, NULL, NULL, &r);
	assert_non_null(strstr(r.body, "class=\"ceiling roof\" x1="));
	assert_non_null(strstr(r.body, "data-label=\"fp8_e4m3 matrix\""));
	assert_non_null(strstr(r.body, "fp32 vector"));
	http_resp_free(&r);
	/* model's arguments without a model: named */
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb/roofline.svg?batch_size=8", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "?model");
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb/roofline.svg?model=llama-3-8b&context_tokens=x", NULL, NULL, NULL,
	        &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "?context_tokens");
	http_resp_free(&r);
}

/* The text chart and `memplan roofline`: axes labelled, ridge marked, legend. */
static void test_text_chart_cli(void **state)
{
	const char *bin = getenv("MEMPLAN_BIN");
	char cmd[1024], out[16384];
	size_t n;
	FILE *p;
	char dir[] = "/tmp/memplan-roofline-XXXXXX";

	(void)state;
	if (bin == NULL)
		bin = "build/memplan";
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
	         "%s roofline --db %s/m.db --device h100-sxm5-80gb matmul:m=1,k=4096,n=4096,dtype=bf16,label=gemv "
	         "matmul:m=8192,k=8192,n=8192,dtype=bf16 2>&1",
	         bin, dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_non_null(strstr(out, "Arithmetic intensity (FLOP/byte, log)"));
	assert_non_null(strstr(out, "Attainable FLOP/s (log)"));
	assert_non_null(strstr(out, "R ridge 295 FLOP/B"));
	assert_non_null(strstr(out, "gemv"));
	/* an unlabelled operation is named by its shape, in full, however long */
	assert_non_null(strstr(out, "matmul 8192x8192x8192 bf16"));
	assert_non_null(strstr(out, "roof bf16 matrix"));
	assert_non_null(strstr(out, "memory-bound"));
	assert_non_null(strstr(out, "compute-bound"));
	assert_non_null(strchr(out, 'R'));
	snprintf(cmd, sizeof(cmd), "%s roofline --db %s/m.db --device h100-sxm5-80gb matmul:k=0 >/dev/null 2>&1", bin,
	         dir);
	assert_int_not_equal(system(cmd), 0);
	/* two operations of one shape land in one cell: marked '*', each listed with its cell mate; a label longer
	 * than 24 characters is printed whole; --model adds the model's decode and prefill operations */
	snprintf(cmd, sizeof(cmd),
	         "%s roofline --db %s/m.db --device h100-sxm5-80gb --model llama-3-8b --batch 8 "
	         "matmul:m=1,k=4096,n=4096,dtype=bf16,label=first_of_two_identical_gemvs "
	         "matmul:m=1,k=4096,n=4096,dtype=bf16,label=second 2>&1",
	         bin, dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_non_null(strstr(out, "  *  first_of_two_identical_gemvs"));
	assert_non_null(strstr(out, "(one cell with second"));
	assert_non_null(strstr(out, "decode qkv"));
	assert_non_null(strstr(out, "prefill mlp_down"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seed_intensity),
	    cmocka_unit_test(test_seed_roofline),
	    cmocka_unit_test(test_seed_batch_sweep),
	    cmocka_unit_test(test_seed_decode),
	    cmocka_unit_test(test_seed_littles_law),
	    cmocka_unit_test(test_br14),
	    cmocka_unit_test(test_br15),
	    cmocka_unit_test(test_h200_points),
	    cmocka_unit_test(test_h200_decode_chain),
	    cmocka_unit_test(test_recurrent_step),
	    cmocka_unit_test(test_h200_prefill),
	    cmocka_unit_test(test_step_properties),
	    cmocka_unit_test(test_crossing_batch),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_hierarchical),
	    cmocka_unit_test(test_xml_escape),
	    cmocka_unit_test(test_text_chart_cli),
	    cmocka_unit_test_setup_teardown(test_http_seed_roofline, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_errors_and_warnings, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_transformer_and_plan, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_transformer_dtypes_as_plan, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_decode_op_parameters, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_transformer_defaults_echoed, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_http_peak_fallback_warned, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_svg_chart, http_fixture_setup, http_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_svg_layout, http_fixture_setup, http_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
