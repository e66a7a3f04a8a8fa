/*
 * test_checkpoint.c: models as users hold them, read from their headers (model/checkpoint.h) through the API's own
 * decoder (codec/mpc_model.c): a GGUF file and the five files llama.cpp's llama-gguf-split made of it
 * (tests/ref/llamacpp/split, with what llama-completion printed for the split model), safetensors shards with their
 * index, a checkpoint whose tensors differ from the inventory (named tensor by tensor), bad input; and the search for
 * the largest -ngl and context that fit (planner/llamacpp.c) on the reference GGUFs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../codec/codec.h"
#include "../model/checkpoint.h"
#include "../model/model.h"
#include "refs.h"

static uint8_t *read_rel(const char *rel, size_t *len)
{
	char *b = ref_read(ref_path(rel), len);
	assert_non_null(b);
	return (uint8_t *)b;
}

static void gguf_of(const char *const *rels, size_t n, mp_model *m, mpm_checkpoint *c, mp_status want)
{
	uint8_t *bufs[8];
	size_t lens[8];
	mp_error err = MP_ERROR_INIT;
	mp_status st;

	for (size_t i = 0; i < n; i++)
		bufs[i] = read_rel(rels[i], &lens[i]);
	st = mpm_checkpoint_gguf((const uint8_t *const *)bufs, lens, n, "/model/gguf_header", m, c, &err);
	if (st != want)
		fail_msg("%s: %s", err.field, err.message);
	for (size_t i = 0; i < n; i++)
		free(bufs[i]);
}

static void test_base64(void **state)
{
	uint8_t *b;
	size_t n;
	mp_error err = MP_ERROR_INIT;
	(void)state;
	assert_int_equal(mpc_base64_decode("R0dVRgM=", 8, "/x", &b, &n, &err), MP_OK);
	assert_int_equal(n, 5);
	assert_memory_equal(b, "GGUF\x03", 5);
	free(b);
	assert_int_equal(mpc_base64_decode("R0d\nVRgM=", 9, "/x", &b, &n, &err), MP_OK); /* a line break */
	assert_int_equal(n, 5);
	free(b);
	assert_int_equal(mpc_base64_decode("R0d*VRgM", 8, "/model/gguf_header", &b, &n, &err), MP_EINVAL);
	assert_string_equal(err.field, "/model/gguf_header");
	assert_null(b);
}

/* the split files (any order) give the single file's tensors, and llama.cpp's host buffers one per file */
static void test_split(void **state)
{
	static const char *const one[] = { "llamacpp/models/llama-q8_0.gguf.hdr" };
	static const char *const parts[] = {
		"llamacpp/split/llama-q8_0-00004-of-00005.gguf.hdr", "llamacpp/split/llama-q8_0-00001-of-00005.gguf.hdr",
		"llamacpp/split/llama-q8_0-00005-of-00005.gguf.hdr", "llamacpp/split/llama-q8_0-00003-of-00005.gguf.hdr",
		"llamacpp/split/llama-q8_0-00002-of-00005.gguf.hdr",
	};
	mp_model *m = calloc(1, sizeof(*m));
	mpm_checkpoint whole, split;
	mp_llamacpp_params p;
	mp_llamacpp_plan *pl = calloc(1, sizeof(*pl));
	cJSON *run = ref_json("llamacpp/split/run.json"), *b;
	mp_error err = MP_ERROR_INIT;
	double printed_host = 0, printed_kv = 0;
	int host_buffers = 0;
	(void)state;

	gguf_of(one, 1, m, &whole, MP_OK);
	gguf_of(parts, 5, m, &split, MP_OK);
	assert_int_equal(split.files, 5);
	assert_int_equal(split.tensors, whole.tensors);
	assert_int_equal(split.tensor_bytes, whole.tensor_bytes);
	assert_int_equal(split.tensor_bytes, 4465664); /* gguf-py's sum over the file (runs.json models.llama-q8_0) */
	assert_true(split.match.ok);
	/* llama-completion on the split model: under mmap one CPU_Mapped buffer per file, each the range its host
	 * tensors span; the KV cache as for one file */
	p = *split.llama;
	p.n_gpu_layers = -1;
	p.mmap = true;
	p.kv_offload = true;
	p.n_seq_max = 1;
	p.n_ctx = 4096;
	p.type_k = p.type_v = MP_GGML_F16;
	p.flash_attn = true;
	assert_int_equal(mp_llamacpp_plan_buffers(&p, split.llama_tensors, split.n_llama_tensors, pl, &err), MP_OK);
	cJSON_ArrayForEach(b, cJSON_GetObjectItem(run, "buffers"))
	{
		const char *kind = cJSON_GetObjectItem(b, "kind")->valuestring;
		double v = strtod(cJSON_GetObjectItem(b, "mib")->valuestring, NULL);
		if (strcmp(kind, "model") == 0)
			printed_host += v, host_buffers++;
		else if (strcmp(kind, "KV") == 0)
			printed_kv += v;
	}
	assert_int_equal(host_buffers, 5);
	assert_int_equal(pl->model_buffers_host, 5);
	/* five figures each rounded to 0.01 MiB: their sum within 0.025 MiB of the exact one */
	assert_true(pl->model_bytes[0] / 1048576.0 - printed_host < 0.025 &&
		    printed_host - pl->model_bytes[0] / 1048576.0 < 0.025);
	{
		char got[16];
		snprintf(got, sizeof(got), "%.2f", pl->kv_bytes[0] / 1048576.0);
		assert_string_equal(got, "8.00");
		snprintf(got, sizeof(got), "%.2f", printed_kv);
		assert_string_equal(got, "8.00");
	}
	/* a file missing, a file twice, a part alone */
	mpm_checkpoint_free(&split);
	gguf_of(parts, 4, m, &split, MP_EINVAL);
	{
		static const char *const twice[] = {
			"llamacpp/split/llama-q8_0-00001-of-00005.gguf.hdr", "llamacpp/split/llama-q8_0-00002-of-00005.gguf.hdr",
			"llamacpp/split/llama-q8_0-00002-of-00005.gguf.hdr", "llamacpp/split/llama-q8_0-00003-of-00005.gguf.hdr",
			"llamacpp/split/llama-q8_0-00004-of-00005.gguf.hdr",
		};
		uint8_t *bufs[5];
		size_t lens[5];
		for (int i = 0; i < 5; i++)
			bufs[i] = read_rel(twice[i], &lens[i]);
		assert_int_equal(mpm_checkpoint_gguf((const uint8_t *const *)bufs, lens, 5, "/model/gguf_header", m, &split,
						     &err),
				 MP_EINVAL);
		assert_non_null(strstr(err.message, "given twice"));
		assert_string_equal(err.field, "/model/gguf_header/2");
		for (int i = 0; i < 5; i++)
			free(bufs[i]);
	}
	gguf_of(parts + 1, 1, m, &split, MP_EINVAL);
	mpm_checkpoint_free(&whole);
	cJSON_Delete(run);
	free(pl);
	free(m);
}

static cJSON *shard_json(const char *rel)
{
	size_t len;
	uint8_t *b = read_rel(rel, &len);
	uint64_t n = 0;
	cJSON *doc;
	for (int i = 7; i >= 0; i--)
		n = n << 8 | b[i];
	doc = cJSON_ParseWithLength((const char *)b + 8, (size_t)n);
	free(b);
	assert_non_null(doc);
	return doc;
}

/* the API's decoder on a two-shard checkpoint with its index, and on one whose tensors differ from the inventory */
static void test_safetensors_model(void **state)
{
	cJSON *body = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(body, "safetensors_headers");
	mps_model_ref ref;
	mp_error err = MP_ERROR_INIT;
	char why[2048];
	(void)state;

	cJSON_AddItemToArray(list, shard_json("llamacpp/models/llama.model-00001-of-00002.safetensors.hdr"));
	cJSON_AddItemToArray(list, shard_json("llamacpp/models/llama.model-00002-of-00002.safetensors.hdr"));
	cJSON_AddItemToObject(body, "hf_config", ref_json("llamacpp/models/llama.config.json"));
	cJSON_AddItemToObject(body, "safetensors_index", ref_json("llamacpp/models/llama.model.safetensors.index.json"));
	assert_int_equal(mpc_model_ref_decode(body, "/model", true, &ref, &err), MP_OK);
	assert_int_equal(ref.kind, MPS_MODEL_INLINE);
	assert_non_null(ref.ckpt);
	assert_int_equal(ref.ckpt->files, 2);
	assert_int_equal(ref.ckpt->tensor_bytes, 8393216); /* the plan's bf16 weights (test_llamacpp: test_safetensors) */
	assert_int_equal(ref.ckpt->weight_dtype, MP_DTYPE_BF16);
	assert_true(ref.ckpt->match.ok);
	{
		uint64_t sum = ref.ckpt->other_bytes;
		for (int k = 0; k < MP_TC_COUNT; k++)
			sum += ref.ckpt->class_bytes[k];
		assert_int_equal(sum, ref.ckpt->tensor_bytes);
	}
	mpc_model_ref_release(&ref);

	/* the index names two shards: one header alone is refused, naming the rule */
	cJSON_DeleteItemFromArray(list, 1);
	assert_int_equal(mpc_model_ref_decode(body, "/model", true, &ref, &err), MP_EINVAL);
	assert_non_null(strstr(err.message, "the index names"));
	/* without the index: the first shard alone lacks the second's tensors, which are named */
	cJSON_DeleteItemFromObject(body, "safetensors_index");
	assert_int_equal(mpc_model_ref_decode(body, "/model", true, &ref, &err), MP_OK);
	assert_false(ref.ckpt->match.ok);
	mpm_match_describe(&ref.ckpt->match, why, sizeof(why));
	assert_non_null(strstr(why, "not in the file"));
	mpc_model_ref_release(&ref);
	/* safetensors_headers without the config */
	cJSON_DeleteItemFromObject(body, "hf_config");
	assert_int_equal(mpc_model_ref_decode(body, "/model", true, &ref, &err), MP_EINVAL);
	assert_non_null(strstr(err.message, "config.json as hf_config"));
	cJSON_Delete(body);
}

/* the largest -ngl and context that fit: on the reference GGUFs, a budget of exactly the plan's per-GPU total at
 * -ngl k gives k, one byte less gives fewer; the context likewise (256-cell steps) */
static void test_fit_search(void **state)
{
	static const char *const models[] = { "llama-q4_k_m", "mixtral-q8_0", "gemma3-q6_k", "qwen3_moe-iq4_xs" };
	(void)state;
	for (size_t k = 0; k < sizeof(models) / sizeof(models[0]); k++) {
		char rel[128];
		const char *r[1] = { rel };
		mp_model *m = calloc(1, sizeof(*m));
		mpm_checkpoint c;
		mp_llamacpp_params p;
		mp_llamacpp_plan *pl = calloc(1, sizeof(*pl)), *best = calloc(1, sizeof(*best));
		mp_error err = MP_ERROR_INIT;
		uint64_t budget[MP_LLAMACPP_SLOTS] = { 0 };
		int32_t ngl;
		uint32_t ctx;

		snprintf(rel, sizeof(rel), "llamacpp/models/%s.gguf.hdr", models[k]);
		gguf_of(r, 1, m, &c, MP_OK);
		p = *c.llama;
		p.n_devices = 1;
		p.backend = MP_LLAMACPP_CUDA;
		p.mmap = p.kv_offload = p.flash_attn = true;
		p.n_seq_max = 1;
		p.n_ctx = 4096;
		p.type_k = p.type_v = MP_GGML_F16;
		for (int32_t want = 0; want <= (int32_t)p.n_layer + 1; want++) {
			p.n_gpu_layers = want;
			assert_int_equal(mp_llamacpp_plan_buffers(&p, c.llama_tensors, c.n_llama_tensors, pl, &err), MP_OK);
			budget[1] = pl->total_bytes[1];
			assert_int_equal(mp_llamacpp_max_gpu_layers(&p, c.llama_tensors, c.n_llama_tensors, budget, &ngl, best,
								    &err),
					 MP_OK);
			/* layers with no bytes of their own on the GPU may be added at no cost: at least want */
			assert_true(ngl >= want);
			assert_true(best->total_bytes[1] <= budget[1]);
			budget[1] -= 1;
			assert_int_equal(mp_llamacpp_max_gpu_layers(&p, c.llama_tensors, c.n_llama_tensors, budget, &ngl, best,
								    &err),
					 MP_OK);
			assert_true(ngl < want || (want == 0 && ngl == -1) || best->total_bytes[1] <= budget[1]);
		}
		/* every layer on the GPU: the context at which the budget is exactly met */
		p.n_gpu_layers = -1;
		for (uint32_t want = 256; want <= 8192; want += 1792) {
			p.n_ctx = want;
			assert_int_equal(mp_llamacpp_plan_buffers(&p, c.llama_tensors, c.n_llama_tensors, pl, &err), MP_OK);
			budget[1] = pl->total_bytes[1];
			assert_int_equal(mp_llamacpp_max_context(&p, c.llama_tensors, c.n_llama_tensors, budget, 1 << 20, &ctx,
								 &err),
					 MP_OK);
			assert_true(ctx >= want);
			p.n_ctx = ctx;
			assert_int_equal(mp_llamacpp_plan_buffers(&p, c.llama_tensors, c.n_llama_tensors, pl, &err), MP_OK);
			assert_true(pl->total_bytes[1] <= budget[1]);
			p.n_ctx = ctx + 256;
			assert_int_equal(mp_llamacpp_plan_buffers(&p, c.llama_tensors, c.n_llama_tensors, pl, &err), MP_OK);
			assert_true(pl->total_bytes[1] > budget[1]);
		}
		printf("  %-18s -ngl 0..%u and -c 256..8192: each budget met exactly\n", models[k], p.n_layer + 1);
		mpm_checkpoint_free(&c);
		free(pl);
		free(best);
		free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_safetensors_model),
		cmocka_unit_test(test_fit_search),
	};
	if (getenv("MEMPLAN_TEST_FILTER"))
		cmocka_set_test_filter(getenv("MEMPLAN_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
