/*
 * test_planner.c: unit tests of the pure planner. Links only the planner's archive (and its floor, core/) and
 * -lm, and reads no file: the planner needs no JSON, store or HTTP library. Expected values come from
 * tests/ref/conformance/seed_cases.json and the cases of tests/ref/cases/cases.md (named by their ids), quoted here.
 */
#include <math.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../planner/memplan.h"

/* A llama-shaped model: GQA, SwiGLU, RMSNorm, untied. */
static mp_model llama(uint64_t layers, uint64_t hidden, uint64_t heads, uint64_t kv_heads, uint64_t head_dim,
		      uint64_t ffn, uint64_t vocab)
{
	mp_model m;

	memset(&m, 0, sizeof(m));
	snprintf(m.model_type, sizeof(m.model_type), "llama");
	m.num_layers = layers;
	m.hidden_size = hidden;
	m.num_heads = heads;
	m.num_kv_heads = kv_heads;
	m.head_dim = head_dim;
	m.intermediate_size = ffn;
	m.vocab_size = vocab;
	m.max_position_embeddings = 8192;
	m.norms_per_layer = 2;
	m.final_norm = true;
	return m;
}

/* m's tensors built (mp_model_build), then counted: the tests change a field and count again. */
static mp_status count(mp_model *m, mp_param_count *pc, mp_error *err)
{
	mp_status st = mp_model_build(m, NULL, err);

	return st != MP_OK ? st : mp_count_parameters(m, pc, err);
}

/* The training_state seed cases moved to tests/test_training.c with the rest of the training planner. */

static uint64_t kv(const mp_model *m, mp_dtype dt, uint64_t seq, uint64_t batch)
{
	uint64_t out = 0;
	mp_error err = MP_ERROR_INIT;

	assert_int_equal(mp_kv_cache_bytes(m, dt, seq, batch, &out, &err), MP_OK);
	return out;
}

/* BR-02: GQA uses kv_heads, not heads. A: Llama-2-70B at 2048, B: Llama-3.1-8B at 4096, f16. */
static void test_kv_gqa_br02(void **state)
{
	mp_model a = llama(80, 8192, 64, 8, 128, 28672, 32000), b = llama(32, 4096, 32, 8, 128, 14336, 128256);

	(void)state;
	assert_int_equal(kv(&a, MP_DTYPE_FP16, 2048, 1), UINT64_C(671088640));
	assert_int_equal(kv(&b, MP_DTYPE_FP16, 4096, 1), UINT64_C(536870912));
}

/* BR-01: the KV dtype is its own input. LLaMA-33B 16-bit 780 MiB, 32-bit 1560 MiB; LLaMA-7B 256/512 MiB. */
static void test_kv_dtype_br01(void **state)
{
	mp_model a = llama(60, 6656, 52, 52, 128, 17920, 32000), b = llama(32, 4096, 32, 32, 128, 11008, 32000);

	(void)state;
	assert_int_equal(kv(&a, MP_DTYPE_FP16, 512, 1), UINT64_C(817889280));
	assert_int_equal(kv(&a, MP_DTYPE_FP32, 512, 1), UINT64_C(1560) << 20);
	assert_int_equal(kv(&b, MP_DTYPE_FP32, 512, 1), UINT64_C(512) << 20);
	assert_int_equal(kv(&b, MP_DTYPE_FP16, 512, 1), UINT64_C(256) << 20);
}

/* BR-17: parallel slots multiply the context (Llama-3.1-8B, 131,072 B per token in f16). */
static void test_kv_parallel_slots_br17(void **state)
{
	mp_model m = llama(32, 4096, 32, 8, 128, 14336, 128256);

	(void)state;
	assert_int_equal(kv(&m, MP_DTYPE_FP16, 4096, 4), UINT64_C(2) << 30);
	assert_int_equal(kv(&m, MP_DTYPE_FP16, 32768, 4), UINT64_C(16) << 30);
	assert_int_equal(kv(&m, MP_DTYPE_FP16, 32768, 1), UINT64_C(4) << 30);
}

/* Block formats carry their scales: q8_0 34 B / 32 values, q4_0 18 B / 32 (BR-05, BR-07). */
static void test_dtype_block_bytes(void **state)
{
	uint64_t out;

	(void)state;
	assert_true(mp_dtype_bytes(MP_DTYPE_Q8_0, 32, &out));
	assert_int_equal(out, 34);
	assert_true(mp_dtype_bytes(MP_DTYPE_Q8_0, 33, &out));
	assert_int_equal(out, 68);
	assert_true(mp_dtype_bytes(MP_DTYPE_Q4_0, 64, &out));
	assert_int_equal(out, 36);
	assert_true(mp_dtype_bytes(MP_DTYPE_BF16, 1000, &out));
	assert_int_equal(out, 2000);
	assert_false(mp_dtype_bytes(MP_DTYPE_FP32, UINT64_MAX / 2, &out));
	assert_int_equal(mp_dtype_from_name("fp8_e4m3"), MP_DTYPE_FP8_E4M3);
	assert_int_equal(mp_dtype_from_name("fp8"), MP_DTYPE_INVALID);
	assert_string_equal(mp_dtype_name(MP_DTYPE_Q6_K), "q6_K");
}

/* BI-03: heads not divisible by KV heads, or a zero or excessive group count, is rejected. */
static void test_validate_bi03(void **state)
{
	mp_model m = llama(2, 224, 7, 2, 32, 512, 1000);
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(mp_model_validate(&m, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/num_key_value_heads");
	m = llama(2, 4096, 32, 5, 128, 512, 1000);
	assert_int_equal(mp_model_validate(&m, &err), MP_EINVAL);
	m = llama(2, 4096, 32, 0, 128, 512, 1000);
	assert_int_equal(mp_model_validate(&m, &err), MP_EINVAL);
	m = llama(2, 4096, 32, 64, 128, 512, 1000);
	assert_int_equal(mp_model_validate(&m, &err), MP_EINVAL);
	m = llama(2, 4096, 32, 8, 128, 512, 1000);
	assert_int_equal(mp_model_validate(&m, &err), MP_OK);
}

/* The worked example of mp_count_parameters: Llama-3-8B. */
static void test_count_llama3_8b(void **state)
{
	mp_model m = llama(32, 4096, 32, 8, 128, 14336, 128256);
	mp_param_count pc;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(count(&m, &pc, &err), MP_OK);
	assert_int_equal(pc.total, UINT64_C(8030261248));
	assert_int_equal(pc.embedding, UINT64_C(525336576));
	assert_int_equal(pc.lm_head, UINT64_C(525336576));
	m.tie_word_embeddings = true;
	assert_int_equal(count(&m, &pc, &err), MP_OK);
	assert_int_equal(pc.total, UINT64_C(8030261248) - UINT64_C(525336576));
}

/* BI-05: a 64-bit overflow in a derived byte count is an error, never a wrapped number. */
static void test_overflow_bi05(void **state)
{
	mp_model m = llama(61, 7168, 128, 128, 160, 18432, 129280); /* K+V width 2 x 128 x 160 */
	uint64_t out;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	/* The expanded MLA K/V width of BI-05 (40960 per token per layer) needs 64-bit arithmetic. */
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_FP16, 32768, 1, &out, &err), MP_OK);
	assert_int_equal(out, UINT64_C(163745628160));
	assert_int_equal(mp_kv_cache_bytes(&m, MP_DTYPE_FP16, UINT64_C(1) << 40, UINT64_C(1) << 20, &out, &err),
			 MP_EOVERFLOW);
	m.vocab_size = UINT64_MAX / 2;
	assert_int_equal(count(&m, &(mp_param_count){ 0 }, &err), MP_EOVERFLOW);
}

/* Inference plan: Llama-3-8B bf16 at 4096 tokens; the fit solver on a device of known capacity. */
static void test_plan_inference_fit(void **state)
{
	mp_model m = llama(32, 4096, 32, 8, 128, 14336, 128256);
	mp_param_count pc;
	mp_inference_req req = { MP_DTYPE_BF16, MP_DTYPE_BF16, 1, 4096, 1, 0, NULL };
	mp_device dev;
	mp_inference_memory mem;
	mp_fit fit;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	memset(&dev, 0, sizeof(dev));
	dev.usable_memory_bytes = UINT64_C(150109880320); /* H200, cudaMemGetInfo total (groundtruth) */
	assert_int_equal(count(&m, &pc, &err), MP_OK);
	assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &fit, &err), MP_OK);
	assert_int_equal(mem.weights_bytes, UINT64_C(16060522496));
	assert_int_equal(mem.kv_cache_bytes, UINT64_C(536870912));
	assert_int_equal(mem.overhead_bytes, MP_DEFAULT_CUDA_CONTEXT_BYTES);
	assert_int_equal(mem.total_bytes, mem.weights_bytes + mem.kv_cache_bytes + mem.overhead_bytes);
	assert_true(fit.fits);
	assert_int_equal(fit.capacity_bytes, UINT64_C(150109880320));
	/* max batch: (capacity - weights - overhead) / (131072 x 4096) */
	assert_int_equal(fit.max_batch_size,
			 (UINT64_C(150109880320) - mem.weights_bytes - mem.overhead_bytes) / UINT64_C(536870912));
	req.batch_size = fit.max_batch_size + 1;
	assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &fit, &err), MP_OK);
	assert_false(fit.fits);
	assert_true(fit.headroom_bytes < 0);
	/* on a 24 GB card the sequence binds: the longest one fits, one token more does not (the fit searches) */
	dev.usable_memory_bytes = UINT64_C(24) * 1000 * 1000 * 1000;
	req.batch_size = 16;
	req.sequence_length = 1024;
	assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &fit, &err), MP_OK);
	assert_true(fit.max_sequence_length > 1024 && fit.max_sequence_length < 8192);
	assert_true(fit.max_batch_size > 16 && fit.max_batch_size < 64);
	{
		mp_fit f2;
		uint64_t maxs = fit.max_sequence_length, maxb = fit.max_batch_size;

		req.sequence_length = maxs;
		assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &f2, &err), MP_OK);
		assert_true(f2.fits);
		req.sequence_length = maxs + 1;
		assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &f2, &err), MP_OK);
		assert_false(f2.fits);
		req.sequence_length = 1024;
		req.batch_size = maxb;
		assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &f2, &err), MP_OK);
		assert_true(f2.fits);
		req.batch_size = maxb + 1;
		assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &f2, &err), MP_OK);
		assert_false(f2.fits);
	}
	req.batch_size = 0;
	assert_int_equal(mp_plan_inference(&m, &pc, &req, &dev, &mem, &fit, &err), MP_EINVAL);
	assert_string_equal(err.field, "/batch_size");
}

typedef struct shape {
	int kind;		/* 0 linear, 1 step, 2 concave, 3 +inf past the crossing, 4 fails at the crossing */
	uint64_t k;		/* where the sign changes */
	unsigned calls;
} shape;

static mp_status shape_at(void *ctx, uint64_t x, double *out, mp_error *err)
{
	shape *s = ctx;

	s->calls++;
	switch (s->kind) {
	case 0: *out = 3.0 * (double)x - 1000.0; break;
	case 1: *out = x >= s->k ? 1.0 : -1.0; break;
	case 2: *out = sqrt((double)x) - sqrt((double)s->k) + 1e-9; break;
	case 3: *out = x >= s->k ? INFINITY : -1e9 + (double)x; break;
	default:
		if (x >= s->k)
			return mp_fail(err, MP_EOVERFLOW, "/x", "overflow at %llu", (unsigned long long)x);
		*out = -1.0;
	}
	return MP_OK;
}

/* mp_search_crossing: the worked example (3x - 1000 on (1, 65536] -> 334 in 2 evaluations), and for steps,
 * concave curves and infinities the same answer as a scan, within bisection's probe count plus 3. */
static void test_search_crossing(void **state)
{
	shape s = { 0, 0, 0 };
	mp_error err = MP_ERROR_INIT;
	uint64_t x = 0;
	unsigned n = 0;
	double g;

	(void)state;
	assert_int_equal(mp_search_crossing(1, -997.0, 65536, 3.0 * 65536 - 1000.0, shape_at, &s, &x, &n, &err), MP_OK);
	assert_int_equal(x, 334);
	assert_int_equal(n, 2);
	for (int kind = 1; kind <= 3; kind++)
		for (uint64_t k = 2; k <= 1000; k += 7) {
			double glo, ghi;

			s = (shape){ kind, k, 0 };
			shape_at(&s, 1, &glo, &err);
			shape_at(&s, 1000, &ghi, &err);
			assert_int_equal(mp_search_crossing(1, glo, 1000, ghi, shape_at, &s, &x, &n, &err), MP_OK);
			for (uint64_t i = 2; i <= 1000; i++) { /* the scan: the first i with g(i) >= 0 */
				shape_at(&s, i, &g, &err);
				if (g >= 0) {
					if (x != i)
						fail_msg("kind %d k %llu: %llu, the scan says %llu", kind, (unsigned long long)k,
							 (unsigned long long)x, (unsigned long long)i);
					break;
				}
			}
			assert_true(n <= 10 + MP_CROSSING_INTERPOLATIONS); /* log2(999) < 10 */
		}
	/* an error of g ends the search with it */
	s = (shape){ 4, 500, 0 };
	assert_int_equal(mp_search_crossing(1, -1.0, 1000, 1.0, shape_at, &s, &x, &n, &err), MP_EOVERFLOW);
	assert_string_equal(err.field, "/x");
}

/*
 * Per-layer attention (planner/model.c attention_of_layer, planner/kv.c per_layer_kv), the worked examples: the tiny
 * copy of Gemma4TextConfig (hidden 2304, 8 heads, 5 sliding layers of 4 KV heads x 256, a full one of 4 x 512, window
 * 8, q/k norms) holds 720,896 bytes at 24 tokens x 2 sequences in bf16 (transformers' engine_bytes, groundtruth.json);
 * its attention is 5 x 14,156,288 + 28,312,576. A KV-shared layer keeps q, o and q_norm, no cache.
 */
static void test_per_layer_attention(void **state)
{
	mp_model m = llama(6, 2304, 8, 4, 256, 256, 512);
	mp_param_count pc;
	mp_error err = MP_ERROR_INIT;
	uint64_t full_attn;

	(void)state;
	m.qk_norm = true;
	m.sliding_window = 8;
	m.sliding_window_layers = 5;
	m.layer_pattern = m.attn_per_layer = true;
	m.global_head_dim = 512;
	m.global_kv_heads = 4;
	for (int i = 0; i < 5; i++)
		m.layer_flags[i] = MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_WINDOW;
	m.layer_flags[5] = MP_LAYER_ATTENTION | MP_LAYER_FFN | MP_LAYER_GLOBAL;
	assert_int_equal(kv(&m, MP_DTYPE_BF16, 24, 2), UINT64_C(720896));
	assert_int_equal(kv(&m, MP_DTYPE_BF16, 5, 2), UINT64_C(286720));
	assert_int_equal(count(&m, &pc, &err), MP_OK);
	assert_int_equal(pc.attention, UINT64_C(5) * 14156288 + 28312576);
	/* attention_k_eq_v: the full layer has no v_proj (2304 x 2048 fewer), its cache is unchanged */
	m.global_k_eq_v = true;
	assert_int_equal(count(&m, &pc, &err), MP_OK);
	assert_int_equal(pc.attention, UINT64_C(5) * 14156288 + 28312576 - 2304 * 2048);
	assert_int_equal(kv(&m, MP_DTYPE_BF16, 24, 2), UINT64_C(720896));
	m.global_k_eq_v = false;
	/* the full layer shares an earlier one's cache: no k, v, k_norm (2 x 2304 x 2048 + 512), no cache of its own */
	full_attn = 28312576 - (2 * UINT64_C(2304) * 2048 + 512);
	m.layer_flags[5] |= MP_LAYER_KV_SHARED;
	m.no_kv_layers = 1;
	assert_int_equal(count(&m, &pc, &err), MP_OK);
	assert_int_equal(pc.attention, UINT64_C(5) * 14156288 + full_attn);
	assert_int_equal(kv(&m, MP_DTYPE_BF16, 24, 2), UINT64_C(5) * 2 * 4 * 256 * 2 * 8 * 2);
	/* a global layer needs global widths that divide the heads */
	m.global_kv_heads = 3;
	assert_int_equal(count(&m, &pc, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/per_layer_config");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kv_gqa_br02),
		cmocka_unit_test(test_kv_dtype_br01),
		cmocka_unit_test(test_kv_parallel_slots_br17),
		cmocka_unit_test(test_dtype_block_bytes),
		cmocka_unit_test(test_validate_bi03),
		cmocka_unit_test(test_count_llama3_8b),
		cmocka_unit_test(test_overflow_bi05),
		cmocka_unit_test(test_plan_inference_fit),
		cmocka_unit_test(test_search_crossing),
		cmocka_unit_test(test_per_layer_attention),
	};

	return cmocka_run_group_tests_name("planner", tests, NULL, NULL);
}
