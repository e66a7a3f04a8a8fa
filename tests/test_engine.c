/*
 * test_engine.c: the serving engines' arithmetic (planner/engine.c), linked with the planner alone and -lm. The
 * figures are the ones real engines printed in public issue reports (tests/data/engines/README.md names each
 * source); every test recomputes them the engine's way and holds the result to the engine's printed rounding.
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

#define GIB 1073741824.0

/* A llama-shaped model (the planner test's builder): GQA, SwiGLU, RMSNorm, RoPE over the whole head. */
static mp_model llama(uint64_t layers, uint64_t hidden, uint64_t heads, uint64_t kv_heads, uint64_t head_dim,
		      uint64_t ffn, uint64_t vocab, uint64_t positions)
{
	mp_model m;

	memset(&m, 0, sizeof(m));
	snprintf(m.model_type, sizeof(m.model_type), "llama");
	snprintf(m.rope_type, sizeof(m.rope_type), "llama3");
	m.num_layers = layers;
	m.hidden_size = hidden;
	m.num_heads = heads;
	m.num_kv_heads = kv_heads;
	m.head_dim = head_dim;
	m.rotary_dim = head_dim;
	m.rotary_buffer_sets = 1;
	m.intermediate_size = ffn;
	m.vocab_size = vocab;
	m.max_position_embeddings = positions;
	m.norms_per_layer = 2;
	m.final_norm = true;
	assert_int_equal(mp_model_build(&m, NULL, NULL), MP_OK); /* its tensors (the Llama family's) */
	return m;
}

/* A printed value v with `decimals` decimals stands for [v - h, v + h), h = half its last digit. */
static double half_unit(int decimals)
{
	return 0.5 * pow(10, -decimals);
}

/* The blocks a printed KV memory (GiB, 2 decimals) allows: [lo, hi]. */
static void blocks_range(double gib, uint64_t page, uint64_t layers, uint64_t *lo, uint64_t *hi)
{
	*lo = mp_vllm_num_blocks((gib - half_unit(2)) * GIB, page, layers);
	*hi = mp_vllm_num_blocks((gib + half_unit(2)) * GIB, page, layers);
}

/* vLLM's serving defaults by device: arg_utils.get_batch_defaults, the API server's column, per release line. */
static void test_vllm_defaults(void **state)
{
	mp_engine_defaults d;
	mp_error err = MP_ERROR_INIT;
	const mp_engine_version *v011 = mp_engine_version_find(MP_ENGINE_VLLM, "0.11.2");

	(void)state;
	/* the newest line by default: 0.33, gpu_memory_utilization 0.92 (vllm/config/cache.py, 0.33.0) */
	assert_string_equal(mp_engine_version_find(MP_ENGINE_VLLM, NULL)->name, "0.33");
	assert_string_equal(mp_engine_version_find(MP_ENGINE_VLLM, "v0.33.0")->release, "0.33.0");
	assert_string_equal(v011->name, "0.11");
	assert_string_equal(mp_engine_version_find(MP_ENGINE_VLLM, "0.6.5")->name, "0.6");
	assert_null(mp_engine_version_find(MP_ENGINE_VLLM, "0.3"));  /* not 0.33 */
	/* 0.7's V0 engine is a line of its own (the memory_profiling baseline: the CUDA context outside) */
	assert_string_equal(mp_engine_version_find(MP_ENGINE_VLLM, "0.7.3")->name, "0.7");
	assert_string_equal(mp_engine_version_find(MP_ENGINE_VLLM, "0.7")->release, "0.7.2");
	assert_null(mp_engine_version_find(MP_ENGINE_VLLM, "0.8"));
	assert_string_equal(mp_engine_version_find(MP_ENGINE_SGLANG, "0.5.23")->release, "0.5.23");
	/* H100 SXM (the preset's 85,520,809,984 B): >= 70 GiB, not an A100 */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_VLLM, UINT64_C(85520809984), "H100 SXM5 80GB", 1, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 8192);
	assert_int_equal(d.max_num_seqs, 1024);
	assert_true(d.memory_fraction == 0.92);
	assert_int_equal(d.block_size, 16);
	assert_int_equal(mp_engine_defaults_at(v011, UINT64_C(85520809984), "H100 SXM5 80GB", 1, NULL, &d, &err), MP_OK);
	assert_true(d.memory_fraction == 0.9);
	/* B200 (180 GB): 0.33's tier of 160 GiB and more; 0.11 has none */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_VLLM, UINT64_C(193273528320), "NVIDIA B200", 1, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 16384);
	assert_int_equal(mp_engine_defaults_at(v011, UINT64_C(193273528320), "NVIDIA B200", 1, NULL, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 8192);
	/* A100 80GB: the name check of PR #17885 keeps the small budget */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_VLLM, UINT64_C(85899345920), "NVIDIA A100-SXM4-80GB", 1, &d, &err),
			 MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 2048);
	assert_int_equal(d.max_num_seqs, 256);
	/* RTX 3090 (23.58 GiB) and an unknown device (vLLM counts it as 0 bytes) */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_VLLM, UINT64_C(25319047168), "RTX 3090", 1, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 2048);
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_NONE, 0, NULL, 1, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 2048);
	assert_int_equal(d.max_num_seqs, 256);
	/* exactly 70 GiB is in */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_VLLM, UINT64_C(75161927680), "x", 1, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 8192);
	assert_int_equal(mp_engine_defaults_for((mp_engine)42, 0, NULL, 1, &d, &err), MP_EINVAL);
}

/* SGLang 0.5.23's handle_gpu_memory_settings: buckets, then mem_fraction_static = round((mem - reserved) / mem, 3);
 * tests/engines/check_sglang.py holds the same rule to SGLang's own resolution. */
static void test_sglang_defaults(void **state)
{
	mp_engine_defaults d;
	mp_error err = MP_ERROR_INIT;
	const mp_engine_version *v = mp_engine_version_find(MP_ENGINE_SGLANG, NULL);
	mp_engine_launch l = {.chunk = 8192, .max_running_requests = 16};

	(void)state;
	/* H100, nvidia-smi 81,559 MiB, tp 1: 512 + 1.5 x 8192 + 1024 / 8 + 2 x 256 + 8 x 58 prefill graph sizes =
	 * 13,904 MiB -> (81559 - 13904) / 81559 = 0.82952 */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_SGLANG, UINT64_C(81559) << 20, "", 1, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 8192);
	assert_int_equal(d.cuda_graph_max_bs, 256);
	assert_int_equal(d.prefill_graph_sizes, 58);
	assert_true(d.reserved_mib == 13904);
	assert_true(fabs(d.memory_fraction - 0.830) < 1e-12);
	/* the worked example: 16 running requests cap the decode graphs at 16: 13,424 MiB -> 0.83540 */
	assert_int_equal(mp_engine_defaults_at(v, UINT64_C(81559) << 20, "", 1, &l, &d, &err), MP_OK);
	assert_true(d.reserved_mib == 13424);
	assert_true(fabs(d.memory_fraction - 0.835) < 1e-12);
	/* Qwen2.5-VL (a ViT of 24 x 1280 as SGLang reads it), 8 running: no prefill graphs, 12,944 MiB -> 0.841,
	 * x 0.95 x (1 - 0.1 x (1.5625 - 1)) = 0.7540090625 (what SGLang 0.5.23 resolves: tests/engines) */
	l.max_running_requests = 8;
	l.vit_layers = 24;
	l.vit_hidden = 1280;
	assert_int_equal(mp_engine_defaults_at(v, UINT64_C(81559) << 20, "", 1, &l, &d, &err), MP_OK);
	assert_true(d.reserved_mib == 12944);
	assert_true(fabs(d.memory_fraction - 0.7540090625) < 1e-12);
	/* H200 143,771 MiB, tp 8: bs 512; 512 + 12288 + 1024 + 1024 + 464 = 15,312 -> 0.893497 -> 0.893 */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_SGLANG, UINT64_C(143771) << 20, "", 8, &d, &err), MP_OK);
	assert_int_equal(d.cuda_graph_max_bs, 512);
	assert_true(fabs(d.memory_fraction - 0.893) < 1e-12);
	/* RTX 4090 24,564 MiB, tp 1: 4096 / 48 (0.5.23's bucket); 512 + 6144 + 128 + 96 + 8 x 50 = 7,280 (no 10 GiB
	 * floor) -> 0.70363 -> 0.704 */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_SGLANG, UINT64_C(24564) << 20, "", 1, &d, &err), MP_OK);
	assert_int_equal(d.max_num_batched_tokens, 4096);
	assert_int_equal(d.cuda_graph_max_bs, 48);
	assert_true(fabs(d.memory_fraction - 0.704) < 1e-12);
	assert_int_equal(d.block_size, 1);
	/* unknown memory: SGLang's fallback 0.95 */
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_SGLANG, 0, "", 1, &d, &err), MP_OK);
	assert_true(d.memory_fraction == 0.95);
	assert_int_equal(mp_engine_defaults_for(MP_ENGINE_TRTLLM, 0, "", 1, &d, &err), MP_OK);
	assert_int_equal(d.block_size, 32);
	assert_int_equal(d.max_num_batched_tokens, 8192);
	assert_int_equal(d.max_num_seqs, 2048);
}

/* vllm #10517 (V0 0.6, RTX 3090, Llama-3.1-8B-Instruct bf16): "Loading model weights took 14.9888 GB" is the
 * checkpoint plus the RoPE cos_sin_cache of 131,072 positions x 128 in bf16; the KV lines follow from the block
 * arithmetic: kv_cache_size=3.81GiB -> 1952 blocks, 20000 tokens -> 1.56x; 2.89GiB -> 1478 blocks = 23,648 tokens,
 * 29000 tokens -> 0.82x. */
static void test_vllm_10517(void **state)
{
	mp_model m = llama(32, 4096, 32, 8, 128, 14336, 128256, 131072);
	mp_weight_formats f;
	mp_weights w;
	mp_error err = MP_ERROR_INIT;
	uint64_t bytes, lo, hi, page = 16 * (8 * 128 * 2 * 2);

	(void)state;
	memset(&f, 0, sizeof(f));
	f.layout = MP_LAYOUT_PACKED;
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_BF16, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.total_bytes, UINT64_C(16060522496));
	assert_int_equal(mp_engine_weights_bytes(MP_ENGINE_VLLM, &m, &w, MP_DTYPE_BF16, 1, &bytes, &err), MP_OK);
	assert_int_equal(bytes, UINT64_C(16094076928));
	assert_true(fabs((double)bytes / GIB - 14.9888) < half_unit(4));
	/* TensorRT-LLM keeps no such cache in its weights */
	assert_int_equal(mp_engine_weights_bytes(MP_ENGINE_TRTLLM, &m, &w, MP_DTYPE_BF16, 1, &bytes, &err), MP_OK);
	assert_int_equal(bytes, UINT64_C(16060522496));

	blocks_range(3.81, page, 32, &lo, &hi);
	assert_true(lo <= 1952 && 1952 <= hi);
	assert_true(fabs(mp_vllm_max_concurrency(1952, 16, 20000) - 1.56) < half_unit(2));
	blocks_range(2.89, page, 32, &lo, &hi);
	assert_true(lo <= 1478 && 1478 <= hi);
	assert_int_equal(1478 * 16, 23648);
	assert_true(fabs(mp_vllm_max_concurrency(1478, 16, 29000) - 0.82) < half_unit(2));
	/* the V0 budget: 23.58 GiB x 0.90 - peak_torch_memory 17.06 - non_torch 0.35 = 3.81 GiB */
	assert_true(fabs(23.58 * 0.9 - 17.06 - 0.35 - 3.81) < 3 * half_unit(2) + half_unit(2) * 0.9);
}

/* LMCache #1739 (vLLM V1, Qwen3-14B bf16: 40 layers, 8 KV heads, head_dim 128): 6.51 GiB -> 42,656 tokens (2666
 * blocks of 16), 1.30x for 32,768 tokens (2666 / 2048). */
static void test_vllm_v1_qwen3_14b(void **state)
{
	uint64_t lo, hi, page = 16 * (8 * 128 * 2 * 2);

	(void)state;
	blocks_range(6.51, page, 40, &lo, &hi);
	assert_true(lo <= 2666 && 2666 <= hi);
	assert_int_equal(42656 / 16, 2666);
	assert_true(fabs(mp_vllm_max_concurrency(2666, 16, 32768) - 1.30) < half_unit(2));
}

/* vllm #25350 (V1, fp8 KV, 48 layers x 4 KV heads x 128): 10.55 GiB -> 230,528 tokens, 2.31x for 100,000; at
 * 221,000 the start-up check needs 13,813 blocks = 10.12 GiB against 5.59 GiB and estimates 122,080 tokens. */
static void test_vllm_25350(void **state)
{
	mp_engine_inputs in;
	mp_engine_prediction p;
	mp_error err = MP_ERROR_INIT;
	uint64_t lo, hi, page = 16 * (4 * 128 * 2 * 1);

	(void)state;
	blocks_range(10.55, page, 48, &lo, &hi);
	assert_true(lo <= 230528 / 16 && 230528 / 16 <= hi);
	assert_true(fabs(mp_vllm_max_concurrency(230528 / 16, 16, 100000) - 2.31) < half_unit(2));

	/* the error line through the whole prediction: budgets that leave 5.585 and 5.595 GiB (what "5.59" stands
	 * for) for the KV cache bracket the printed estimate */
	memset(&in, 0, sizeof(in));
	in.engine = MP_ENGINE_VLLM;
	in.total_memory_bytes = (uint64_t)(5.595 * GIB);
	in.memory_fraction = 1.0;
	in.block_size = 16;
	in.max_model_len = 221000;
	in.max_num_batched_tokens = 8192;
	in.kv_row_bytes = 4 * 128 * 2;
	in.full_layers = 48;
	in.batch_size = 1;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	assert_int_equal(p.blocks_per_request, 13813);
	assert_true(fabs((double)p.needed_kv_cache_bytes / GIB - 10.12) < half_unit(2));
	assert_false(p.serves_max_model_len);
	assert_int_equal(p.estimated_max_model_len, p.kv_cache_tokens);
	assert_true(p.estimated_max_model_len >= 122080);
	in.total_memory_bytes = (uint64_t)(5.585 * GIB);
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	assert_true(p.estimated_max_model_len <= 122080);
}

/* vLLM V0's profile peak (planner/engine.c v0_profile, vllm 0.6.4 model_runner.py profile_run), worked examples:
 * Llama-3.1-8B at 20,000 tokens on an RTX 3090: (3 x 8,192 + 3 x 28,672) x 20,000 + 24 x 20,000 + 8.125 MiB =
 * 2,220,839,680 B, which with the weights' 14.9888 GiB is the 17.06 GiB vllm #10517 printed; at 2,048 tokens the
 * sampler's 256 x 128,256 x (2 + 36) B + 2,048 x 4,096 x 2 B + the same persistent bytes is larger, and TP 2
 * shards gate_up but not the hidden-size tensors. */
static void test_vllm_v0_profile(void **state)
{
	mp_engine_inputs in;
	mp_engine_prediction p;
	mp_error err = MP_ERROR_INIT;
	const uint64_t cublas = 2 * 4096 * 1024 + 8 * 16 * 1024;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.engine = MP_ENGINE_VLLM;
	in.version = mp_engine_version_find(MP_ENGINE_VLLM, "0.6");
	in.total_memory_bytes = 25318829015;
	in.memory_fraction = 0.9;
	in.block_size = 16;
	in.max_model_len = 20000;
	in.max_num_seqs = 256;
	in.max_num_batched_tokens = 20000;
	in.kv_row_bytes = 8 * 128 * 2 * 2;
	in.full_layers = 32;
	in.batch_size = 1;
	in.tp = 1;
	in.hidden_size = 4096;
	in.vocab_size = 128256;
	in.compute_bytes = 2;
	in.ffn_size = 14336;
	in.q_width = 32 * 128;
	in.kv_width = 8 * 128;
	in.cublas_workspace_bytes = cublas;
	in.weights_bytes = 16094076928;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	assert_int_equal(p.profile_peak_bytes, UINT64_C(2220839680));
	assert_true(fabs((double)(in.weights_bytes + p.profile_peak_bytes) / GIB - 17.06) < half_unit(2));
	in.max_num_batched_tokens = 2048;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	assert_int_equal(p.profile_peak_bytes, UINT64_C(256) * 128256 * 38 + 2048 * 4096 * 2 + 2048 * 24 + cublas);
	/* TP 2, the forward: 3 x 4,096 x 2 B whole, 3 x 7,168 x 2 B of gate_up and SiluAndMul; the driver's sampler,
	 * whose logits are gathered whole, is now the peak */
	in.tp = 2;
	in.max_num_batched_tokens = 20000;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	{
		size_t found = 0;

		for (size_t i = 0; i < p.nterms; i++)
			if (strcmp(p.terms[i].name, "profile_activation") == 0 && ++found)
				assert_int_equal(p.terms[i].bytes,
						 UINT64_C(20000) * ((3 * 4096 + 3 * 7168) * 2 + 24) + cublas);
		assert_int_equal(found, 1);
	}
	assert_int_equal(p.profile_peak_bytes, UINT64_C(256) * 128256 * 38 + UINT64_C(20000) * (4096 * 2 + 24) + cublas);
}

/* SGLang in vllm #21348 (Qwen3-235B-A22B, tp 4: 1 KV head per GPU, 94 layers, bf16 KV): cell = 94 x 1 x 128 x 2 x 2
 * = 48,128 B; "#tokens: 367404, K size: 8.23 GB" (GiB) is 367,404 x 24,064 B. The vLLM side of the same report:
 * 8.11 GiB would give 11,308 blocks = 180,928 tokens; it printed 178,880, 1.1% lower (one worker's line; with
 * tensor parallelism the engine keeps the smallest worker's blocks), so the check bounds it from above. */
static void test_21348(void **state)
{
	uint64_t lo, hi;

	(void)state;
	assert_true(fabs(367404.0 * 24064 / GIB - 8.23) < half_unit(2));
	blocks_range(8.11, 16 * (1 * 128 * 2 * 2), 94, &lo, &hi);
	assert_true(178880 / 16 < lo);
	assert_true(178880 / 16 <= hi);
	/* the SGLang formula: fraction x free-before = weights + pool */
	assert_int_equal(mp_sglang_max_total_num_tokens(70.0, 20.0, 0.9, 48128), (uint64_t)floor(13.0 * GIB / 48128));
	assert_int_equal(mp_sglang_max_total_num_tokens(70.0, 5.0, 0.9, 48128), 0);
}

/* TensorRT-LLM #1400: "Allocate 69524783104 bytes for k/v cache", "Using 132608 tokens": 524,288 B per token (32
 * layers x 32 heads x 128 x K,V x fp16). _cal_max_tokens and the primary pool's blocks. */
static void test_trtllm(void **state)
{
	mp_engine_inputs in;
	mp_engine_prediction p;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	assert_int_equal(UINT64_C(69524783104) / 524288, 132608);
	assert_int_equal(UINT64_C(69524783104) % 524288, 0);
	assert_int_equal(mp_trtllm_max_tokens(69524783104.0, 524288), 132608);
	assert_int_equal(mp_trtllm_blocks(132608, 32), 4144);
	assert_int_equal(mp_trtllm_blocks(132609, 32), 4145);
	/* the whole path: (total - peak) x 0.9 // kv_size_per_token on an 80 GiB GPU with 20 GiB of peak */
	memset(&in, 0, sizeof(in));
	in.engine = MP_ENGINE_TRTLLM;
	in.total_memory_bytes = UINT64_C(80) << 30;
	in.weights_bytes = UINT64_C(18) << 30;
	in.activation_bytes = UINT64_C(1) << 30;
	in.context_bytes = UINT64_C(1) << 30;
	in.memory_fraction = 0.9;
	in.block_size = 32;
	in.max_model_len = 4096;
	in.kv_row_bytes = 32 * 128 * 2 * 2;
	in.full_layers = 32;
	in.batch_size = 8;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	assert_int_equal(p.kv_size_per_token_bytes, 524288);
	assert_int_equal(p.max_tokens, (uint64_t)(60.0 * 0.9 * GIB / 524288)); /* 110,592 */
	assert_int_equal(p.blocks_in_primary_pool, 3456);
	assert_true(fabs(p.required_memory_fraction - 8.0 * 4096 * 524288 / (60.0 * GIB)) < 1e-12);
}

/* A V1 prediction worked through by hand: Llama-3-8B bf16 on an H100 (85,520,809,984 B) at 0.9: requested
 * 76,968,728,985; weights 16,060,522,496 + RoPE cache 8192 x 128 x 2 = 16,062,619,648; activations 1 GiB;
 * available 59,832,367,913 -> // 65,536 // 32 = 28,530 blocks = 456,480 tokens; 4096 tokens a request -> 111.45x. */
static void test_vllm_predict(void **state)
{
	mp_engine_inputs in;
	mp_engine_prediction p;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.engine = MP_ENGINE_VLLM;
	in.total_memory_bytes = UINT64_C(85520809984);
	in.memory_fraction = 0.9;
	in.block_size = 16;
	in.max_model_len = 4096;
	in.max_num_batched_tokens = 4096;
	in.weights_bytes = UINT64_C(16062619648);
	in.activation_bytes = UINT64_C(1) << 30;
	in.kv_row_bytes = 8 * 128 * 2 * 2;
	in.full_layers = 32;
	in.batch_size = 64;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	assert_int_equal(p.requested_memory_bytes, UINT64_C(76968728985));
	assert_int_equal(p.available_kv_cache_bytes, INT64_C(59832367513));
	assert_int_equal(p.page_bytes, 65536);
	assert_int_equal(p.num_gpu_blocks, 28530);
	assert_int_equal(p.kv_cache_tokens, 456480);
	assert_int_equal(p.blocks_per_request, 256);
	assert_true(fabs(p.max_concurrency - 28530.0 / 256) < 1e-9);
	assert_true(p.serves_max_model_len);
	assert_int_equal(p.estimated_max_model_len, 4096);
	/* 64 requests need 64 x 256 blocks of 2 MiB: (17,136,361,472 + 34,359,738,368) / 85,520,809,984 */
	assert_true(fabs(p.required_memory_fraction - (17136361472.0 + 34359738368.0) / 85520809984.0) < 1e-12);

	/* a hybrid of 8 full and 24 window layers (window 4096): groups of 8 layers, 1 full + 3 window groups */
	in.full_layers = 8;
	in.window_layers = 24;
	in.sliding_window = 4096;
	in.max_model_len = 32768;
	in.max_num_batched_tokens = 2048;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_OK);
	assert_int_equal(p.kv_groups, 4);
	assert_int_equal(p.group_layers, 8);
	assert_int_equal(p.num_gpu_blocks, (uint64_t)(59832367513 / 65536 / 8));
	assert_int_equal(p.kv_cache_tokens, p.num_gpu_blocks / 4 * 16);
	/* one request: 2048 full blocks + 3 x (cdiv(min(4095 + 2048, 32768), 16) + 1 = 385) */
	assert_int_equal(p.blocks_per_request, 2048 + 3 * 385);
	in.full_layers = 0;
	in.window_layers = 0;
	assert_int_equal(mp_engine_predict(&in, &p, &err), MP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vllm_defaults),
		cmocka_unit_test(test_vllm_v0_profile),
		cmocka_unit_test(test_sglang_defaults),
		cmocka_unit_test(test_vllm_10517),
		cmocka_unit_test(test_vllm_v1_qwen3_14b),
		cmocka_unit_test(test_vllm_25350),
		cmocka_unit_test(test_21348),
		cmocka_unit_test(test_trtllm),
		cmocka_unit_test(test_vllm_predict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
