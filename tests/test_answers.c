/*
 * test_answers.c: answers a scheduler can act on (issue 15), over HTTP with the daemon in-process: requests as
 * engines take them (dtype aliases and "auto"), every problem at once, nearest ids and Hugging Face repo ids,
 * warnings for what the answer assumed, capacity rows that are plans, device kinds, usable memory in every GPU
 * preset, inline devices in plans and fits, and the training fit's smallest GPU count. Figures come from the
 * presets and the references in tests/ref (provenance in its README) and are derived in the comments.
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
#include <curl/curl.h>

#include "http_util.h"
#include "refs.h"

#define TOKEN "t0ken-for-tests"
#define AUTH "Authorization: Bearer " TOKEN
#define J "application/json"

typedef struct fixture {
	mpd_daemon d;
	char dir[64];
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	http_start(&f->d, f->dir, sizeof(f->dir));
	snprintf(f->d.cfg.token, sizeof(f->d.cfg.token), "%s", TOKEN);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	http_stop(&f->d, f->dir);
	free(f);
	return 0;
}

/* A member by path ("fit.max_batch_size"); NULL when absent. */
static const cJSON *at(const cJSON *o, const char *path)
{
	char buf[128], *save = NULL, *part;

	snprintf(buf, sizeof(buf), "%s", path);
	for (part = strtok_r(buf, ".", &save); part && o; part = strtok_r(NULL, ".", &save))
		o = cJSON_GetObjectItemCaseSensitive(o, part);
	return o;
}

static double num(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", path);
	return v->valuedouble;
}

static const char *str(const cJSON *o, const char *path)
{
	const cJSON *v = at(o, path);

	if (!cJSON_IsString(v))
		fail_msg("%s is not a string", path);
	return v->valuestring;
}

/* Sends a request and checks its status; the response is the caller's to free. */
static void call(fixture *f, const char *method, const char *path, const char *body, long status, http_resp *r)
{
	http_do(&f->d, method, path, body, body ? J : NULL, strcmp(method, "GET") ? AUTH : NULL, r);
	if (r->status != status)
		fail_msg("%s %s: %ld, expected %ld: %s", method, path, r->status, status, r->body ? r->body : "");
	assert_non_null(r->json);
}

/* Whether the problem's errors name field (with a message containing text, when text is not NULL). */
static bool names(const http_resp *r, const char *field, const char *text)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItem(r->json, "errors"))
	if (strcmp(str(e, "field"), field) == 0 && (text == NULL || strstr(str(e, "message"), text)))
		return true;
	return false;
}

/* Whether a warning of the answer (or of o's "warnings") contains text. */
static bool warns(const cJSON *o, const char *text)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, cJSON_GetObjectItem(o, "warnings"))
	if (cJSON_IsString(w) && strstr(w->valuestring, text))
		return true;
	return false;
}

/* ----- 1. defaults and aliases, as serving engines take them --------------------------------------------- */

static void test_defaults_and_aliases(void **state)
{
	fixture *f = *state;
	http_resp r, e;

	/* the smallest body: dtypes "auto" -> Llama-3-8B's config says bfloat16; the KV cache in the compute dtype.
	 * 8,030,261,248 parameters x 2 bytes = 16,060,522,496 weight bytes; KV 2 x 32 x 8 x 128 x 4096 x 2 = 512 MiB */
	call(f, "POST", "/v1/plan/inference", "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096}", 200,
	     &r);
	assert_string_equal(str(r.json, "request.weight_dtype"), "bf16");
	assert_string_equal(str(r.json, "request.weight_dtype_from"), "config_dtype");
	assert_string_equal(str(r.json, "request.kv_cache_dtype"), "bf16");
	assert_string_equal(str(r.json, "request.kv_cache_dtype_from"), "compute_dtype");
	assert_true(num(r.json, "memory.weights_bytes") == 16060522496.0);
	assert_true(num(r.json, "memory.kv_cache_bytes") == 536870912.0);
	assert_true(cJSON_IsArray(cJSON_GetObjectItem(r.json, "warnings")));
	/* the same as naming everything explicitly */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
	     "\"sequence_length\":4096}",
	     200, &e);
	assert_true(num(r.json, "memory.total_bytes") == num(e.json, "memory.total_bytes"));
	http_resp_free(&e);
	http_resp_free(&r);

	/* config-file and engine spellings, any case */
	{
		static const struct {
			const char *weight, *kv, *want_weight, *want_kv;
		} cases[] = {
			{ "bfloat16", "auto", "bf16", "bf16" },	  { "BF16", "BF16", "bf16", "bf16" },
			{ "float16", "half", "fp16", "fp16" },	  { "Half", "auto", "fp16", "fp16" },
			{ "fp8", "fp8", "fp8_e4m3", "fp8_e4m3" }, { "float32", "auto", "fp32", "fp32" },
			{ "FP8_E4M3", "auto", "fp8_e4m3", "bf16" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char body[256];

			snprintf(body, sizeof(body),
				 "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"%s\",\"kv_cache_dtype\":\"%s\",\"batch_size\":1,"
				 "\"sequence_length\":1024}",
				 cases[i].weight, cases[i].kv);
			call(f, "POST", "/v1/plan/inference", body, 200, &r);
			assert_string_equal(str(r.json, "request.weight_dtype"), cases[i].want_weight);
			assert_string_equal(str(r.json, "request.kv_cache_dtype"), cases[i].want_kv);
			http_resp_free(&r);
		}
	}
	/* gptq and awq: int4 in that scheme's layout, byte for byte what int4 + int4_scheme gives */
	{
		static const char *const scheme[] = { "gptq", "awq" };

		for (int i = 0; i < 2; i++) {
			char body[256];

			snprintf(body, sizeof(body),
				 "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"%s\",\"batch_size\":1,\"sequence_length\":1024}",
				 i ? "AWQ" : "gptq");
			call(f, "POST", "/v1/plan/inference", body, 200, &r);
			assert_string_equal(str(r.json, "request.weight_dtype"), "int4");
			assert_string_equal(str(r.json, "request.int4_scheme"), scheme[i]);
			snprintf(body, sizeof(body),
				 "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"int4\",\"int4_scheme\":\"%s\",\"batch_size\":1,"
				 "\"sequence_length\":1024}",
				 scheme[i]);
			call(f, "POST", "/v1/plan/inference", body, 200, &e);
			assert_true(num(r.json, "memory.weights_bytes") == num(e.json, "memory.weights_bytes"));
			http_resp_free(&e);
			http_resp_free(&r);
		}
	}
	/* a name nothing means, and a scheme that contradicts the weight_dtype */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bfloat17\",\"batch_size\":1,\"sequence_length\":1024}", 422, &r);
	assert_true(names(&r, "/weight_dtype", "bfloat16"));
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"awq\",\"int4_scheme\":\"gptq\",\"batch_size\":1,"
	     "\"sequence_length\":1024}",
	     422, &r);
	assert_true(names(&r, "/int4_scheme", "contradicts"));
	http_resp_free(&r);
}

/* A config without a dtype, an fp32 checkpoint, a GPTQ checkpoint: "auto" as vLLM resolves it. */
static void test_auto_dtype_from_config(void **state)
{
	fixture *f = *state;
	char *cfg = ref_read("tests/data/gemma-2-2b.json", NULL), body[8192];
	http_resp r;

	/* google/gemma-2-2b ships fp32 ("torch_dtype": "float32"): vLLM serves it in bf16 where the GPU has bf16 and
	 * in fp32 on a V100 (gemma2 refuses fp16) */
	snprintf(body, sizeof(body),
		 "{\"model\":{\"hf_config\":%s},\"batch_size\":1,\"sequence_length\":1024,\"device\":\"h100-sxm5-80gb\"}",
		 cfg);
	call(f, "POST", "/v1/plan/inference", body, 200, &r);
	assert_string_equal(str(r.json, "request.weight_dtype"), "bf16");
	assert_true(warns(r.json, "the checkpoint is fp32"));
	http_resp_free(&r);
	snprintf(body, sizeof(body),
		 "{\"model\":{\"hf_config\":%s},\"batch_size\":1,\"sequence_length\":1024,\"device\":\"v100-sxm2-32gb\"}",
		 cfg);
	call(f, "POST", "/v1/plan/inference", body, 200, &r);
	assert_string_equal(str(r.json, "request.weight_dtype"), "fp32");
	http_resp_free(&r);
	free(cfg);
	/* no dtype stated: taken as float32 and served in bf16, said in a warning */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":2048,\"intermediate_size\":8192,"
	     "\"num_hidden_layers\":16,\"num_attention_heads\":32,\"num_key_value_heads\":8,\"vocab_size\":128256,"
	     "\"max_position_embeddings\":131072}},\"batch_size\":1,\"sequence_length\":1024}",
	     200, &r);
	assert_string_equal(str(r.json, "request.weight_dtype"), "bf16");
	assert_string_equal(str(r.json, "request.weight_dtype_from"), "default");
	assert_true(warns(r.json, "states no dtype"));
	http_resp_free(&r);
	/* a GPTQ checkpoint's quantization_config: int4, gptq, its group size (a -1 group is one per row) */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":4096,\"intermediate_size\":14336,"
	     "\"num_hidden_layers\":32,\"num_attention_heads\":32,\"num_key_value_heads\":8,\"vocab_size\":128256,"
	     "\"max_position_embeddings\":8192,\"torch_dtype\":\"float16\",\"quantization_config\":{\"quant_method\":"
	     "\"awq\",\"bits\":4,\"group_size\":128}}},\"batch_size\":1,\"sequence_length\":1024}",
	     200, &r);
	assert_string_equal(str(r.json, "request.weight_dtype"), "int4");
	assert_string_equal(str(r.json, "request.int4_scheme"), "awq");
	assert_string_equal(str(r.json, "request.weight_dtype_from"), "quantization_config");
	assert_string_equal(str(r.json, "request.compute_dtype"), "fp16");
	http_resp_free(&r);
}

/* ----- 2. every problem at once; ids people type ---------------------------------------------------------- */

static void test_every_problem_at_once(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *e;

	/* the four round trips in one: both required fields, each with what it allows */
	call(f, "POST", "/v1/plan/inference", "{\"model\":\"llama-3-8b\"}", 422, &r);
	assert_true(names(&r, "/batch_size", "between 1 and 1048576"));
	assert_true(names(&r, "/sequence_length", "between 1 and 16777216"));
	http_resp_free(&r);
	/* five problems: an unknown field, a bad dtype, a bad KV dtype, a zero batch, a missing length */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batchsize\":1,\"weight_dtype\":\"bf17\",\"kv_cache_dtype\":\"int4\","
	     "\"batch_size\":0}",
	     422, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "errors")), 5);
	assert_true(names(&r, "/batchsize", "allow_beyond_max_position_embeddings")); /* the list, whole */
	assert_true(names(&r, "/weight_dtype", "q6_K"));
	assert_true(names(&r, "/kv_cache_dtype", "q4_0"));
	assert_true(names(&r, "/batch_size", "(got 0)"));
	assert_true(names(&r, "/sequence_length", "required"));
	assert_non_null(strstr(str(r.json, "detail"), "5 problems"));
	/* no message is cut inside a list: each ends with a word or a closing parenthesis */
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(r.json, "errors"))
	{
		const char *m = str(e, "message");
		char last = m[strlen(m) - 1];

		assert_true(last == ')' || (last >= 'a' && last <= 'z') || (last >= '0' && last <= '9') || last == 'K');
	}
	http_resp_free(&r);
	/* training: every field at once too */
	call(f, "POST", "/v1/plan/training", "{\"model\":\"llama-3-8b\",\"precision\":\"fp64\"}", 422, &r);
	assert_true(names(&r, "/precision", "mixed_bf16"));
	assert_true(names(&r, "/optimizer", "adamw"));
	assert_true(names(&r, "/micro_batch_size", NULL));
	assert_true(names(&r, "/sequence_length", NULL));
	http_resp_free(&r);
	/* a batch: every job's problems, named where they sit */
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"inference\":{\"model\":\"gpt2\",\"batch_size\":0,\"sequence_length\":16}},"
	     "{\"training\":{\"model\":\"gpt2\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adam\",\"sequence_length\":8}}],"
	     "\"gpu_counts\":[2,1]}",
	     422, &r);
	assert_true(names(&r, "/jobs/0/inference/batch_size", NULL));
	assert_true(names(&r, "/jobs/1/training/micro_batch_size", NULL));
	assert_true(names(&r, "/gpu_counts/1", "increasing"));
	http_resp_free(&r);
	/* the capacity query */
	call(f, "GET", "/v1/capacity?model=llama-3-8b&weight_dtype=bf17&format=xml", NULL, 422, &r);
	assert_true(names(&r, "?sequence_length", NULL));
	assert_true(names(&r, "?weight_dtype", NULL));
	assert_true(names(&r, "?format", NULL));
	http_resp_free(&r);
}

static void test_ids_people_type(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *v;
	bool found = false;

	/* a Hugging Face repo id resolves to its preset: 8,030,261,248 parameters (tests/ref/models/parameter_counts) */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"batch_size\":1,\"sequence_length\":4096}", 200, &r);
	assert_string_equal(str(r.json, "model.id"), "llama-3.1-8b");
	assert_true(num(r.json, "model.parameters") == 8030261248.0);
	http_resp_free(&r);
	call(f, "GET", "/v1/capacity?model=Qwen/Qwen2.5-0.5B-Instruct&sequence_length=1024", NULL, 200, &r);
	assert_string_equal(str(r.json, "model.id"), "qwen2.5-0.5b");
	http_resp_free(&r);
	call(f, "GET", "/v1/models/llama-3.1-8b", NULL, 200, &r);
	cJSON_ArrayForEach(v, cJSON_GetObjectItem(r.json, "hf_repo_ids"))
	found = found || strcmp(v->valuestring, "meta-llama/Llama-3.1-8B-Instruct") == 0;
	assert_true(found);
	http_resp_free(&r);
	/* did you mean: the nearest stored ids */
	call(f, "POST", "/v1/plan/inference", "{\"model\":\"llama-3-70b\",\"batch_size\":1,\"sequence_length\":1024}", 404,
	     &r);
	assert_true(names(&r, "/model", "did you mean llama-3.1-70b"));
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":1024,\"device\":\"h100\"}", 404, &r);
	assert_true(names(&r, "/device", "h100-sxm5-80gb"));
	assert_true(names(&r, "/device", "h100-pcie-80gb"));
	assert_true(names(&r, "/device", "h100-nvl-94gb"));
	http_resp_free(&r);
	call(f, "GET", "/v1/devices/h200", NULL, 404, &r);
	assert_true(names(&r, "/device", "h200-sxm-141gb"));
	http_resp_free(&r);
	/* a repo no preset stands for: said so, with the way out */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"Qwen/Qwen2.5-7B-Instruct\",\"batch_size\":1,\"sequence_length\":1024}", 404, &r);
	assert_true(names(&r, "/model", "qwen2.5-7b"));
	assert_true(names(&r, "/model", "hf_config"));
	http_resp_free(&r);
}

/* ----- 3. warnings ----------------------------------------------------------------------------------------- */

static void test_warnings(void **state)
{
	fixture *f = *state;
	http_resp r;

	/* a partial config: planned with LlamaConfig's defaults, each named with the value it took */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":4096}},\"batch_size\":1,"
	     "\"sequence_length\":2048}",
	     200, &r);
	assert_true(warns(r.json, "num_hidden_layers=32"));
	assert_true(warns(r.json, "intermediate_size=11008"));
	assert_true(warns(r.json, "max_position_embeddings=2048"));
	http_resp_free(&r);
	/* and at 4096 tokens the refusal says the 2048 is a default the config never stated */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":4096}},\"batch_size\":1,"
	     "\"sequence_length\":4096}",
	     422, &r);
	assert_true(names(&r, "/sequence_length", "does not state it"));
	http_resp_free(&r);
	/* a complete config says nothing of itself: the one warning is the prefill chunk the request left to vLLM's
	 * default (issue 18); with max_num_batched_tokens given there is none */
	call(f, "POST", "/v1/plan/inference", "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096}", 200,
	     &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "warnings")), 1);
	assert_true(warns(r.json, "prefill: max_num_batched_tokens not given"));
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"max_num_batched_tokens\":4096}", 200, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "warnings")), 0);
	http_resp_free(&r);
	/* replicated KV heads: 16 GPUs, 8 KV heads */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"tensor_parallel_size\":16}", 200, &r);
	assert_true(warns(r.json, "exceeds the model's 8 KV heads"));
	http_resp_free(&r);
	/* a length beyond the context (Llama-2-7B: 4096, no RoPE scaling) */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-2-7b\",\"batch_size\":1,\"sequence_length\":8192,"
	     "\"allow_beyond_max_position_embeddings\":true}",
	     200, &r);
	assert_true(warns(r.json, "beyond the model's context of 4096"));
	http_resp_free(&r);
	/* a marketed capacity: an inline device with only its label */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":{\"name\":\"lab\","
	     "\"memory_bytes\":25769803776,\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":"
	     "{\"bf16\":1e14}}}",
	     200, &r);
	assert_true(warns(r.json, "marketed memory_bytes"));
	assert_string_equal(str(r.json, "fit.capacity_source"), "memory_bytes");
	http_resp_free(&r);
	/* training: SDPA's math fallback (fp32, grouped-query heads) keeps the scores: said, and echoed */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.2-1b\",\"precision\":\"fp32\",\"optimizer\":\"adamw\",\"micro_batch_size\":8,"
	     "\"sequence_length\":1024}",
	     200, &r);
	assert_string_equal(str(r.json, "request.attention_kernel"), "math");
	assert_true(warns(r.json, "math fallback"));
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.2-1b\",\"precision\":\"bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":8,"
	     "\"sequence_length\":1024}",
	     200, &r);
	assert_string_equal(str(r.json, "request.attention_kernel"), "flash");
	http_resp_free(&r);
}

/* ----- 5. one story: every capacity row is the plan of the same inputs ------------------------------------ */

static void capacity_rows_are_plans(fixture *f, const char *query, const char *plan_tail)
{
	http_resp c, p;
	const cJSON *it;
	int n = 0;

	call(f, "GET", query, NULL, 200, &c);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(c.json, "items"))
	{
		char body[512];

		snprintf(body, sizeof(body), "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,%s"
					     "\"device\":\"%s\"}",
			 plan_tail, str(it, "device"));
		call(f, "POST", "/v1/plan/inference", body, 200, &p);
		if (num(it, "max_concurrent_sequences") != (cJSON_IsTrue(at(p.json, "fit.fits"))
								    ? num(p.json, "fit.max_batch_size")
								    : 0))
			fail_msg("%s: capacity %g, plan %g", str(it, "device"), num(it, "max_concurrent_sequences"),
				 num(p.json, "fit.max_batch_size"));
		assert_true(num(it, "capacity_bytes") == num(p.json, "fit.capacity_bytes"));
		assert_true(num(it, "replica_bytes") == num(p.json, "memory.total_bytes"));
		http_resp_free(&p);
		n++;
	}
	assert_true(n >= 20);
	http_resp_free(&c);
}

static void test_capacity_is_the_plan(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *it;

	capacity_rows_are_plans(f, "/v1/capacity?model=llama-3-8b&sequence_length=4096", "");
	capacity_rows_are_plans(f, "/v1/capacity?model=llama-3-8b&sequence_length=4096&tensor_parallel_size=2",
				"\"tensor_parallel_size\":2,");
	capacity_rows_are_plans(f, "/v1/capacity?model=llama-3-8b&sequence_length=4096&weight_dtype=fp8&kv_cache_dtype=fp8",
				"\"weight_dtype\":\"fp8\",\"kv_cache_dtype\":\"fp8\",");
	/* the figure: the plan's max_batch_size on an H100 SXM, no longer capacity's 128 */
	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096", NULL, 200, &r);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.json, "items"))
	if (strcmp(str(it, "device"), "h100-sxm5-80gb") == 0)
		assert_true(num(it, "max_concurrent_sequences") < 128);
	http_resp_free(&r);
}

/* ----- 6. device kinds ----------------------------------------------------------------------------------- */

#define CPU_BODY                                                                                              \
	"{\"name\":\"host CPU\",\"vendor\":\"ACME\",\"kind\":\"cpu\",\"memory_bytes\":1099511627776,"            \
	"\"memory_bandwidth_bytes_per_second\":1e11,\"peak_flops_per_second\":{\"fp32\":1e12}}"

static bool lists(const cJSON *items, const char *key, const char *id)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, items)
	{
		const cJSON *v = cJSON_GetObjectItem(it, key);

		if (cJSON_IsString(v) && strcmp(v->valuestring, id) == 0)
			return true;
	}
	return false;
}

static void test_device_kinds(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *job;

	call(f, "PUT", "/v1/devices/measured-cpu-vm", CPU_BODY, 201, &r);
	assert_string_equal(str(r.json, "kind"), "cpu");
	http_resp_free(&r);
	call(f, "GET", "/v1/devices/gaudi2-96gb", NULL, 200, &r);
	assert_string_equal(str(r.json, "kind"), "accelerator");
	http_resp_free(&r);
	/* capacity and fit consider GPUs unless asked otherwise */
	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096", NULL, 200, &r);
	assert_false(lists(cJSON_GetObjectItem(r.json, "items"), "device", "measured-cpu-vm"));
	assert_false(lists(cJSON_GetObjectItem(r.json, "items"), "device", "gaudi2-96gb"));
	assert_true(lists(cJSON_GetObjectItem(r.json, "items"), "device", "h200-sxm-141gb"));
	http_resp_free(&r);
	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&kind=cpu,accelerator", NULL, 200, &r);
	assert_true(lists(cJSON_GetObjectItem(r.json, "items"), "device", "measured-cpu-vm"));
	assert_true(lists(cJSON_GetObjectItem(r.json, "items"), "device", "gaudi2-96gb"));
	assert_false(lists(cJSON_GetObjectItem(r.json, "items"), "device", "h200-sxm-141gb"));
	http_resp_free(&r);
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"inference\":{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096}}]}", 200, &r);
	job = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "jobs"), 0);
	assert_false(lists(cJSON_GetObjectItem(job, "devices"), "device", "measured-cpu-vm"));
	assert_true(lists(cJSON_GetObjectItem(job, "devices"), "device", "h100-sxm5-80gb"));
	http_resp_free(&r);
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"inference\":{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096}}],"
	     "\"device_kinds\":[\"cpu\"]}",
	     200, &r);
	job = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "jobs"), 0);
	assert_true(lists(cJSON_GetObjectItem(job, "devices"), "device", "measured-cpu-vm"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(job, "devices")), 1);
	http_resp_free(&r);
	call(f, "GET", "/v1/devices?kind=cpu", NULL, 200, &r);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), 1);
	http_resp_free(&r);
	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&kind=tpu", NULL, 422, &r);
	assert_true(names(&r, "?kind", "gpu, cpu, accelerator"));
	http_resp_free(&r);
}

/* ----- 8. usable memory in every GPU preset; 9. inline devices ---------------------------------------------- */

static void test_usable_memory(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *it;
	int gpus = 0;

	call(f, "GET", "/v1/devices?limit=1000&kind=gpu", NULL, 200, &r);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.json, "items"))
	{
		const char *src = str(it, "usable_memory_source");

		/* every GPU preset: a usable figure below its label, and how it is known */
		assert_true(num(it, "usable_memory_bytes") > 0.9 * num(it, "memory_bytes"));
		assert_true(num(it, "usable_memory_bytes") <= num(it, "memory_bytes"));
		assert_true(strcmp(src, "measured") == 0 || strcmp(src, "published") == 0 || strcmp(src, "derived") == 0);
		/* a derived figure says so where people read it */
		if (strcmp(src, "derived") == 0)
			assert_non_null(strstr(str(it, "source_note"), "DERIVED"));
		gpus++;
	}
	assert_true(gpus >= 22);
	http_resp_free(&r);
	/* the measured H200 (groundtruth/h200: cudaMemGetInfo total) and NVML's totals from GPU Feature Discovery's
	 * nvidia.com/gpu.memory in MiB (reference/integrations.md 1.2): H100 SXM 81559, A100 80GB 81920, L40S 46068,
	 * H200 143771 */
	{
		static const struct {
			const char *id;
			double usable, nvml_mib;
		} known[] = {
			{ "h200-sxm-141gb", 150109880320.0, 143771 },
			{ "h100-sxm5-80gb", 85045477376.0, 81559 },
			{ "a100-sxm4-80gb", 0, 81920 },
			{ "l40s-48gb", 0, 46068 },
		};

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			char path[96];

			snprintf(path, sizeof(path), "/v1/devices/%s", known[i].id);
			call(f, "GET", path, NULL, 200, &r);
			if (known[i].usable > 0)
				assert_true(num(r.json, "usable_memory_bytes") == known[i].usable);
			assert_true(num(r.json, "nvml_memory_bytes") == known[i].nvml_mib * 1048576.0);
			assert_true(num(r.json, "usable_memory_bytes") < num(r.json, "nvml_memory_bytes"));
			http_resp_free(&r);
		}
	}
	call(f, "GET", "/v1/devices/h200-sxm-141gb", NULL, 200, &r);
	assert_string_equal(str(r.json, "usable_memory_source"), "measured");
	http_resp_free(&r);
	/* the RTX 3090 plans against what CUDA reports, not its 24 GiB label */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":\"rtx-3090-24gb\"}", 200, &r);
	assert_string_equal(str(r.json, "fit.capacity_source"), "usable_memory_bytes");
	assert_true(num(r.json, "fit.capacity_bytes") < 25769803776.0);
	http_resp_free(&r);
}

static void test_inline_devices(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *job, *dev;

	/* an inline profile in a plan: judged on its usable bytes */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":{\"name\":\"lab\","
	     "\"memory_bytes\":25769803776,\"usable_memory_bytes\":25282281472,\"memory_bandwidth_bytes_per_second\":"
	     "1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}}",
	     200, &r);
	assert_true(num(r.json, "fit.capacity_bytes") == 25282281472.0);
	assert_true(num(r.json, "fit.headroom_bytes") == 25282281472.0 - num(r.json, "memory.total_bytes"));
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"gpt2\",\"precision\":\"bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":1024,\"device\":{\"usable_memory_bytes\":8589934592,"
	     "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}}",
	     200, &r);
	assert_true(num(r.json, "fit.capacity_bytes") == 8589934592.0);
	http_resp_free(&r);
	/* and in a fit, beside a stored one */
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"inference\":{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096}}],"
	     "\"devices\":[\"h200-sxm-141gb\",{\"name\":\"lab\",\"memory_bytes\":25769803776,"
	     "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}],\"gpu_counts\":[1]}",
	     200, &r);
	job = cJSON_GetArrayItem(cJSON_GetObjectItem(r.json, "jobs"), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(job, "devices")), 2);
	dev = cJSON_GetArrayItem(cJSON_GetObjectItem(job, "devices"), 1);
	assert_string_equal(str(dev, "name"), "lab");
	http_resp_free(&r);
	/* a plan or fit cannot judge a device that does not say its memory */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":{"
	     "\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}}",
	     422, &r);
	assert_true(names(&r, "/device/memory_bytes", NULL));
	http_resp_free(&r);
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"inference\":{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096}}],"
	     "\"devices\":[{\"memory_bandwidth_bytes_per_second\":1e12,\"peak_flops_per_second\":{\"bf16\":1e14}}]}",
	     422, &r);
	assert_true(names(&r, "/devices/0/memory_bytes", NULL));
	http_resp_free(&r);
}

/* ----- 7. the training fit's smallest GPU count ------------------------------------------------------------ */

static void test_training_min_gpus(void **state)
{
	fixture *f = *state;
	http_resp r, p;

	/* the case: Llama-3.1-8B, mixed_bf16, AdamW, 1 x 4096 on an H200 fits on one GPU: min_gpus 1, not
	 * "none" (two GPUs without sharding add DDP's buckets, a second copy of the gradients, and do not fit) */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.1-8b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}",
	     200, &r);
	assert_true(cJSON_IsTrue(at(r.json, "fit.fits")));
	assert_true(num(r.json, "fit.min_gpus") == 1);
	assert_true(num(r.json, "fit.min_num_gpus") == 1); /* the deprecated alias */
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.1-8b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":4096,\"num_gpus\":2,\"device\":\"h200-sxm-141gb\"}",
	     200, &r);
	assert_false(cJSON_IsTrue(at(r.json, "fit.fits")));
	assert_true(num(r.json, "fit.min_gpus") == 1);
	http_resp_free(&r);
	/* Llama-3.1-70B with ZeRO-3 on H100s: the smallest count fits and one replica fewer does not */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.1-70b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":4096,\"activation_recomputation\":\"full\",\"sharding\":\"zero3\",\"num_gpus\":64,"
	     "\"device\":\"h100-sxm5-80gb\"}",
	     200, &r);
	{
		int min = (int)num(r.json, "fit.min_gpus");
		char body[512];

		assert_true(min > 8 && min <= 64);
		for (int g = min - 1; g <= min; g++) {
			snprintf(body, sizeof(body),
				 "{\"model\":\"llama-3.1-70b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
				 "\"micro_batch_size\":1,\"sequence_length\":4096,\"activation_recomputation\":\"full\","
				 "\"sharding\":\"zero3\",\"num_gpus\":%d,\"device\":\"h100-sxm5-80gb\"}",
				 g);
			call(f, "POST", "/v1/plan/training", body, 200, &p);
			assert_true(cJSON_IsTrue(at(p.json, "fit.fits")) == (g == min));
			http_resp_free(&p);
		}
	}
	http_resp_free(&r);
	/* none fits: null, in both plans */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.1-405b\",\"precision\":\"fp32\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":4096,\"device\":\"t4-16gb\"}",
	     200, &r);
	assert_true(cJSON_IsNull(at(r.json, "fit.min_gpus")));
	assert_true(cJSON_IsNull(at(r.json, "fit.min_num_gpus"))); /* the alias says the same: no count fits */
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3.1-405b\",\"weight_dtype\":\"fp32\",\"batch_size\":64,\"sequence_length\":131072,"
	     "\"device\":\"t4-16gb\"}",
	     200, &r);
	assert_true(cJSON_IsNull(at(r.json, "fit.min_gpus")));
	http_resp_free(&r);
}

/* ----- a fresh user's review (2026-12-01): answers that contradicted themselves or said too little -------- */

/* POST /v1/plan/inference of the config in tests/ref (rel) at batch 1 and 4,096 tokens, with the members `more`
 * adds ("\"device\":\"...\""); 200 expected, the response the caller's to free. */
static void plan_config(fixture *f, const char *rel, const char *more, http_resp *r)
{
	char *cfg = ref_text(rel), *req;
	size_t len;

	assert_non_null(cfg);
	len = strlen(cfg) + strlen(more) + 128;
	req = malloc(len);
	assert_non_null(req);
	snprintf(req, len, "{\"model\":{\"hf_config\":%s},\"batch_size\":1,\"sequence_length\":4096,%s}", cfg, more);
	call(f, "POST", "/v1/plan/inference", req, 200, r);
	free(req);
	free(cfg);
}


static void test_review_findings(void **state)
{
	fixture *f = *state;
	http_resp r;
	char body[4096];

	/* a query argument given twice is a 422 naming it (a body member given twice already was) */
	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&sequence_length=8192", NULL, 422, &r);
	assert_true(names(&r, "?sequence_length", "more than once"));
	http_resp_free(&r);
	/* the list of arguments is whole, and a planner problem names the query argument, not a JSON pointer */
	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&foo=1", NULL, 422, &r);
	assert_true(names(&r, "?foo", "format, limit, cursor, pretty"));
	http_resp_free(&r);
	call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&tensor_parallel_size=3", NULL, 422, &r);
	assert_true(names(&r, "?tensor_parallel_size", "valid: 1, 2, 4, 8"));
	http_resp_free(&r);
	/* capacity's text says what a row is when num_gpus splits a replica */
	http_do(&f->d, "GET", "/v1/capacity?model=llama-3.1-70b&sequence_length=8192&num_gpus=4&format=text", NULL, NULL,
		NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "(one replica on 4 GPUs, tensor parallel; bytes per GPU)"));
	assert_null(strstr(r.body, "one replica on one GPU"));
	http_resp_free(&r);
	/* num_gpus without tensor_parallel_size: the degree it implies is echoed and warned of; a bad one names
	 * num_gpus, the field the caller sent */
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"num_gpus\":3}", 422, &r);
	assert_true(names(&r, "/num_gpus", "taken as tensor_parallel_size"));
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"num_gpus\":2}", 200, &r);
	assert_string_equal(str(r.json, "request.tensor_parallel_size_from"), "num_gpus");
	assert_true(num(r.json, "request.tensor_parallel_size") == 2);
	assert_true(warns(r.json, "tensor_parallel_size was not given, so the 2 GPUs of num_gpus"));
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"num_gpus\":2,"
	     "\"tensor_parallel_size\":1,\"engine\":\"none\"}",
	     200, &r);
	/* what the answer echoes ("engine": "none") is taken back */
	assert_string_equal(str(r.json, "request.tensor_parallel_size_from"), "request");
	assert_string_equal(str(r.json, "request.engine"), "none");
	assert_false(warns(r.json, "tensor_parallel_size was not given"));
	/* the longest sequence says what stops it: Llama-3-8B's 8,192-token context on an unnamed device */
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}", 200, &r);
	assert_true(num(r.json, "fit.max_sequence_length") == 8192);
	assert_string_equal(str(r.json, "fit.max_sequence_length_bound"), "context");
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/inference",
	     "{\"model\":\"llama-3.1-8b\",\"batch_size\":64,\"sequence_length\":512,\"device\":\"a10-24gb\"}",
	     200, &r);
	assert_true(num(r.json, "fit.max_sequence_length") > 0 && num(r.json, "fit.max_sequence_length") < 131072);
	assert_string_equal(str(r.json, "fit.max_sequence_length_bound"), "memory");
	http_resp_free(&r);
	/* a device body's bad peaks are each named beside the other bad fields */
	call(f, "PUT", "/v1/devices/t4-review",
	     "{\"name\":\"T\",\"vendor\":\"N\",\"memory_bytes\":1e10,\"memory_bandwidth_bytes_per_second\":-1,"
	     "\"peak_flops_per_second\":{\"fp4\":1,\"bf16\":-5},\"kind\":\"gpux\",\"sm_count\":-3}",
	     422, &r);
	assert_true(names(&r, "/memory_bandwidth_bytes_per_second", NULL));
	assert_true(names(&r, "/sm_count", NULL));
	assert_true(names(&r, "/kind", NULL));
	assert_true(names(&r, "/peak_flops_per_second/fp4", "not a dtype"));
	assert_true(names(&r, "/peak_flops_per_second/bf16", "> 0"));
	http_resp_free(&r);
	/* a model body whose model_type or parameters contradict its hf_config is refused, naming both; the same
	 * members as a GET gives them are taken back, and a PATCH of the config is not held to the old count */
	snprintf(body, sizeof(body),
		 "{\"model_type\":\"gpt2\",\"parameters\":5,\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":256,"
		 "\"intermediate_size\":512,\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":1000}}");
	call(f, "PUT", "/v1/models/review-m", body, 422, &r);
	assert_true(names(&r, "/model_type", "contradicts hf_config, whose model_type is 'llama'"));
	assert_true(names(&r, "/parameters", "contradicts hf_config"));
	http_resp_free(&r);
	call(f, "PUT", "/v1/models/review-m",
	     "{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":256,\"intermediate_size\":512,"
	     "\"num_hidden_layers\":2,\"num_attention_heads\":4,\"vocab_size\":1000}}",
	     201, &r);
	http_resp_free(&r);
	call(f, "GET", "/v1/models/review-m", NULL, 200, &r);
	{
		char *again = cJSON_PrintUnformatted(r.json);
		http_resp r2;

		call(f, "PUT", "/v1/models/review-m", again, 200, &r2);
		http_resp_free(&r2);
		free(again);
	}
	http_resp_free(&r);
	http_do(&f->d, "PATCH", "/v1/models/review-m", "{\"hf_config\":{\"num_hidden_layers\":3}}",
		"application/merge-patch+json", AUTH, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	/* hf_repo_ids is the presets' table: a patch of it is refused (it was dropped, the preset made a user model) */
	http_do(&f->d, "PATCH", "/v1/models/llama-3-8b", "{\"hf_repo_ids\":[\"acme/llama3\"]}",
		"application/merge-patch+json", AUTH, &r);
	assert_int_equal(r.status, 422);
	assert_true(names(&r, "/hf_repo_ids", "read-only"));
	http_resp_free(&r);
	call(f, "GET", "/v1/models/llama-3-8b", NULL, 200, &r);
	assert_string_equal(str(r.json, "source"), "preset");
	http_resp_free(&r);
	/* a quantised model's decode speed: capacity's row is the plan's performance block (both read the matrices as
	 * stored: AWQ's fp16 lm_head and group scales) */
	{
		http_resp p;
		const cJSON *it;
		double row = -1;

		call(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&weight_dtype=awq", NULL, 200, &r);
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(r.json, "items"))
		if (strcmp(str(it, "device"), "h100-sxm5-80gb") == 0)
			row = num(it, "decode_tokens_per_second_per_sequence");
		call(f, "POST", "/v1/plan/inference",
		     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096,\"device\":\"h100-sxm5-80gb\","
		     "\"weight_dtype\":\"awq\"}",
		     200, &p);
		assert_true(row > 0 && row == num(p.json, "performance.tokens_per_second_per_sequence"));
		http_resp_free(&p);
		http_resp_free(&r);
	}
	/* Gemma 4 with double-wide MLPs in its KV-shared layers: a decode step reads every decoder matrix the weights
	 * hold (the double-wide MLPs too), all but the per-layer embedding table (a lookup): was 1.5 GB short */
	{
		double weights, read, ple = 262144.0 * 30 * 256 * 2; /* vocab_size_per_layer_input x layers x 256, bf16 */

		plan_config(f, "hf/configs/gemma4-kv-shared-variant.json", "\"device\":\"h100-sxm5-80gb\"", &r);
		weights = num(r.json, "memory.weights_bytes");
		read = num(r.json, "performance.decode_bytes_per_step") -
		       num(r.json, "performance.decode_kv_cache_read_bytes_per_step");
		/* within 1% (the step's attention takes the sliding layers' widths, as the answer warns: 2.2 MB here) */
		assert_true(fabs(read - (weights - ple)) < 0.01 * weights);
		http_resp_free(&r);
	}
	/* fp8 weights on Hopper run W8A8 (vLLM's cutlass fp8 path): the prefill's products at the fp8 peak; on an
	 * A100 (no fp8 tensor cores: Marlin weight-only) at the bf16 one */
	{
		double t[2][2];
		const char *dev[2] = { "h100-sxm5-80gb", "a100-sxm4-80gb" }, *wd[2] = { "bf16", "fp8" };

		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				snprintf(body, sizeof(body),
					 "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":8192,\"device\":\"%s\","
					 "\"weight_dtype\":\"%s\"}",
					 dev[i], wd[j]);
				call(f, "POST", "/v1/plan/inference", body, 200, &r);
				t[i][j] = num(r.json, "performance.prefill_seconds");
				http_resp_free(&r);
			}
		assert_true(t[0][1] < 0.7 * t[0][0]);
		assert_true(t[1][1] == t[1][0]);
	}
	/* every problem at once: a fit's unknown model and unknown device; an engine check's bad engine, empty log and
	 * its plan's bad member */
	call(f, "POST", "/v1/fit",
	     "{\"jobs\":[{\"training\":{\"model\":\"nope\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
	     "\"micro_batch_size\":1,\"sequence_length\":8}}],\"devices\":[\"h100-sxm5-80gb\",\"nodev\"]}",
	     404, &r);
	assert_true(names(&r, "/jobs/0/training/model", "nope"));
	assert_true(names(&r, "/devices/1", "nodev"));
	http_resp_free(&r);
	call(f, "POST", "/v1/engine-check",
	     "{\"engine\":\"vllmx\",\"log\":\"\",\"plan\":{\"model\":\"llama-3-8b\",\"batch_size\":0,"
	     "\"sequence_length\":100,\"device\":\"h100-sxm5-80gb\"}}",
	     422, &r);
	assert_true(names(&r, "/engine", NULL));
	assert_true(names(&r, "/plan/batch_size", NULL));
	http_resp_free(&r);
	call(f, "POST", "/v1/engine-check",
	     "{\"engine\":\"vllm\",\"log\":\"\",\"plan\":{\"model\":\"llama-3-8b\",\"batch_size\":0,"
	     "\"sequence_length\":100,\"device\":\"h100-sxm5-80gb\"}}",
	     422, &r);
	assert_true(names(&r, "/plan/batch_size", NULL));
	assert_true(names(&r, "/log", NULL));
	http_resp_free(&r);
	/* Gemma 4 with 2 KV heads in its full-attention layers (4 in the sliding ones) at tensor parallel 4: the full
	 * layers' heads are copied on 2 GPUs each, and the answer says so (it said no replication) */
	plan_config(f, "hf/configs/gemma4-moe-k-eq-v-variant.json", "\"tensor_parallel_size\":4", &r);
	assert_true(num(r.json, "kv_cache.kv_head_replication") == 2);
	assert_true(cJSON_IsTrue(at(r.json, "parallel.kv_heads_replicated")));
	assert_true(warns(r.json, "exceeds the model's 2 KV heads (of its full-attention layers)"));
	http_resp_free(&r);
	/* expert parallel 8 with ZeRO-1 over 8 GPUs (Mixtral-8x7B, mixed bf16, AdamW: 8 bytes of states per trainable
	 * parameter): each GPU's 1/8 of the experts is replicated in no other GPU (expert-data-parallel group of 1),
	 * so its states stay whole; the 1,605,636,096 other parameters are sharded 8 ways:
	 * 8 x 45,097,156,608 / 8 + 8 x 1,605,636,096 / 8 = 46,702,792,704 (it answered 7,241,863,168, the experts
	 * sharded twice); ZeRO-3's 16-bit weights: 2 x 5,637,144,576 + 2 x 1,605,636,096 / 8 */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"mixtral-8x7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":4096,\"num_gpus\":8,\"expert_parallel_size\":8,\"sharding\":\"zero1\",\"states_only\":true}",
	     200, &r);
	assert_true(num(r.json, "memory.optimizer_states_bytes") == 46702792704.0);
	http_resp_free(&r);
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"mixtral-8x7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":4096,\"num_gpus\":8,\"expert_parallel_size\":8,\"sharding\":\"zero3\",\"states_only\":true}",
	     200, &r);
	assert_true(num(r.json, "memory.weights_bytes") == 2.0 * 5637144576.0 + 2.0 * 1605636096.0 / 8);
	http_resp_free(&r);
	/* LoRA over a bf16 base: the fp32 adapters' AdamW moments are fp32 (8 bytes per adapter parameter) */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-2-7b\",\"micro_batch_size\":1,\"sequence_length\":4096,\"precision\":\"bf16\","
	     "\"optimizer\":\"adamw\",\"finetune\":\"lora\",\"lora_rank\":16}",
	     200, &r);
	assert_true(num(r.json, "memory.optimizer_states_bytes") == 8.0 * num(r.json, "parameters.lora"));
	http_resp_free(&r);
	/* a training plan where no count fits: the deprecated alias says null too, never "0 GPUs" */
	call(f, "POST", "/v1/plan/training",
	     "{\"model\":\"llama-3.1-405b\",\"precision\":\"fp32\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	     "\"sequence_length\":4096,\"device\":\"t4-16gb\"}",
	     200, &r);
	assert_true(cJSON_IsNull(at(r.json, "fit.min_num_gpus")));
	http_resp_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_defaults_and_aliases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auto_dtype_from_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_problem_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ids_people_type, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warnings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_capacity_is_the_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_device_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usable_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inline_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_training_min_gpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_review_findings, setup, teardown),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests_name("answers", tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
