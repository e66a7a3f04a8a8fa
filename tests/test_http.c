/*
 * test_http.c: the daemon over HTTP, in-process on 127.0.0.1 port 0 with a temporary database, driven by
 * libcurl. Checks the plan numbers of the skeleton issue, the same model posted inline, every error class
 * (400, 404, 405, 413, 415, 422 as problem+json naming the field), and the route table against
 * openapi.yaml.
 */
#include <limits.h>
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
#include <openssl/evp.h>

#include "../codec/mpc_json.h"
#include "../model/fields.h"
#include "../codec/codec.h"
#include "../daemon/reply.h"
#include "../daemon/routes.h"
#include "http_util.h"
#include "lib_util.h"
#include "refs.h"

typedef http_fixture fixture; /* a daemon on 127.0.0.1 port 0 with a fresh database (http_util.h) */

static double num(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(o, a), b);

	if (!cJSON_IsNumber(v))
		fail_msg("%s.%s is not a number", a, b);
	return v->valuedouble;
}

static void post(fixture *f, const char *path, const char *body, http_resp *r)
{
	http_do(&f->d, "POST", path, body, "application/json", NULL, r);
}

#define LLAMA3_REQ_TAIL "\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}"

static void check_llama3_plan(const http_resp *r)
{
	assert_int_equal(r->status, 200);
	assert_non_null(r->json);
	assert_true(num(r->json, "model", "parameters") == 8030261248.0);
	assert_true(num(r->json, "memory", "weights_bytes") == 16060522496.0);
	assert_true(num(r->json, "memory", "kv_cache_bytes") == 536870912.0);
}

/* The skeleton issue's example: llama-3-8b by id. */
static void test_plan_inference_by_id(void **state)
{
	fixture *f = *state;
	http_resp r;

	post(f, "/v1/plan/inference", "{\"model\":\"llama-3-8b\"," LLAMA3_REQ_TAIL, &r);
	check_llama3_plan(&r);
	assert_string_equal(r.content_type, "application/json");
	http_resp_free(&r);
}

/* The same with the config file of tests/ref/models posted inline. */
static void test_plan_inference_inline(void **state)
{
	fixture *f = *state;
	char *cfg = ref_text("models/llama-3-8b.json"), *body;
	http_resp r;
	size_t n = strlen(cfg) + 256;

	body = malloc(n);
	snprintf(body, n, "{\"model\":{\"hf_config\":%s}," LLAMA3_REQ_TAIL, cfg);
	post(f, "/v1/plan/inference", body, &r);
	check_llama3_plan(&r);
	http_resp_free(&r);
	free(body);
	free(cfg);
}

/* With a device the plan adds fit: the H200's usable bytes as cudaMemGetInfo reports them. */
static void test_plan_inference_fit(void **state)
{
	fixture *f = *state;
	http_resp r;

	post(f, "/v1/plan/inference", "{\"model\":\"llama-3-8b\",\"device\":\"h200-sxm-141gb\"," LLAMA3_REQ_TAIL, &r);
	assert_int_equal(r.status, 200);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "fit"), "fits")));
	assert_true(num(r.json, "fit", "capacity_bytes") == 150109880320.0);
	assert_true(num(r.json, "fit", "headroom_bytes") ==
		    150109880320.0 - num(r.json, "memory", "total_bytes"));
	http_resp_free(&r);
}

/* The serving engines over HTTP: the plan's engine block per engine, POST /v1/engine-check with a real vLLM V1 log
 * (LMCache #1739, tests/data/engines) and its 422s; the answers are logged for the contract tests. */
static void test_engines(void **state)
{
	static const char *const engines[] = { "vllm", "sglang", "trtllm" };
	fixture *f = *state;
	http_resp r;
	char body[1024];

	for (int i = 0; i < 3; i++) {
		const cJSON *e;

		snprintf(body, sizeof(body),
			 "{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"fp8_e4m3\",\"kv_cache_dtype\":\"fp8\","
			 "\"batch_size\":32,\"sequence_length\":8192,\"tensor_parallel_size\":2,"
			 "\"device\":\"h100-sxm5-80gb\",\"engine\":\"%s\"}",
			 engines[i]);
		post(f, "/v1/plan/inference", body, &r);
		assert_int_equal(r.status, 200);
		e = cJSON_GetObjectItem(r.json, "engine");
		assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, engines[i]);
		assert_non_null(strstr(cJSON_GetObjectItem(e, "command")->valuestring, "meta-llama/Llama-3.1-70B"));
		assert_true(cJSON_IsObject(cJSON_GetObjectItem(e, "predicted")));
		assert_true(cJSON_IsArray(cJSON_GetObjectItem(r.json, "warnings")));
		http_resp_free(&r);
	}
	post(f, "/v1/engine-check",
	     "{\"engine\":\"vllm\",\"log\":\"(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [gpu_worker.py:298] "
	     "Available KV cache memory: 6.51 GiB\\nGPU KV cache size: 42,656 tokens\\nMaximum concurrency for 32,768 "
	     "tokens per request: 1.30x\\nsomething else\",\"plan\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\","
	     "\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":8192,\"device\":\"h100-sxm5-80gb\"}}",
	     &r);
	assert_int_equal(r.status, 200);
	assert_true(num(r.json, "summary", "figures") == 3);
	assert_true(cJSON_GetObjectItem(r.json, "lines_read")->valuedouble == 4);
	assert_true(cJSON_GetObjectItem(r.json, "lines_recognised")->valuedouble == 3);
	http_resp_free(&r);
	post(f, "/v1/engine-check",
	     "{\"engine\":\"vllm\",\"log\":\"nothing here\",\"plan\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\","
	     "\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":8192,\"device\":\"h100-sxm5-80gb\"}}",
	     &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(r.content_type, "application/problem+json");
	http_resp_free(&r);
	post(f, "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
	     "\"sequence_length\":4096,\"mem_fraction_static\":0.9}",
	     &r);
	assert_int_equal(r.status, 422);
	http_resp_free(&r);
}

/* Training: 16 bytes per parameter, each term separately (BR-12), activations and logits now included, the
 * phases and the fit; states_only gives the convention's figure alone; an impossible layout is a 422. */
static void test_plan_training(void **state)
{
	fixture *f = *state;
	http_resp r;


	post(f, "/v1/plan/training",
	     "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
	     "\"micro_batch_size\":1,\"sequence_length\":4096,\"states_only\":true}",
	     &r);
	assert_int_equal(r.status, 200);
	/* BR-12, 16 B/param convention: 6,738,415,616 x 16 = 107,814,649,856 B */
	assert_true(num(r.json, "memory", "total_bytes") == 107814649856.0);
	assert_true(num(r.json, "memory", "weights_bytes") == 6738415616.0 * 2);
	assert_true(num(r.json, "memory", "gradients_bytes") == 6738415616.0 * 2);
	assert_true(num(r.json, "memory", "master_weights_bytes") == 6738415616.0 * 4);
	assert_true(num(r.json, "memory", "optimizer_states_bytes") == 6738415616.0 * 8);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "memory"), "activations_bytes")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "bytes_per_parameter"), "convention")->valuestring,
			    "16");
	http_resp_free(&r);

	post(f, "/v1/plan/training",
	     "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"state_convention\":\"18\","
	     "\"micro_batch_size\":1,\"sequence_length\":4096,\"activation_recomputation\":\"full\","
	     "\"num_gpus\":8,\"sharding\":\"zero1\",\"device\":\"h200-sxm-141gb\"}",
	     &r);
	assert_int_equal(r.status, 200);
	assert_true(num(r.json, "memory", "activations_bytes") > 0);
	assert_true(num(r.json, "memory", "logits_bytes") > 0);
	assert_true(num(r.json, "memory", "gradients_bytes") == 6738415616.0 * 4);
	assert_true(num(r.json, "memory", "total_bytes") > num(r.json, "memory", "weights_bytes"));
	assert_non_null(cJSON_GetObjectItem(r.json, "phases"));
	assert_true(cJSON_IsBool(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "fit"), "fits")));
	assert_true(num(r.json, "fit", "min_num_gpus") >= 1);
	http_resp_free(&r);

	post(f, "/v1/plan/training",
	     "{\"model\":\"llama-2-7b\",\"precision\":\"bf16\",\"optimizer\":\"adamw\","
	     "\"micro_batch_size\":1,\"sequence_length\":4096,\"num_gpus\":3,\"tensor_parallel_size\":3}",
	     &r);
	assert_int_equal(r.status, 422);
	http_resp_free(&r);
}

static void expect_problem(fixture *f, const char *method, const char *path, const char *body, const char *ct,
			   long status, const char *field)
{
	http_resp r;

	http_do(&f->d, method, path, body, ct, NULL, &r);
	if (r.status != status)
		fail_msg("%s %s: status %ld, expected %ld: %s", method, path, r.status, status, r.body ? r.body : "");
	assert_string_equal(r.content_type, "application/problem+json");
	assert_non_null(r.json);
	assert_int_equal((long)cJSON_GetObjectItem(r.json, "status")->valuedouble, status);
	assert_true(cJSON_IsString(cJSON_GetObjectItem(r.json, "detail")));
	if (field && strcmp(http_problem_field(&r), field) != 0)
		fail_msg("%s %s: field '%s', expected '%s'", method, path, http_problem_field(&r), field);
	http_resp_free(&r);
}

#define J "application/json"

static void test_errors(void **state)
{
	fixture *f = *state;

	expect_problem(f, "POST", "/v1/plan/inference", "{\"model\": ", J, 400, NULL);
	expect_problem(f, "POST", "/v1/plan/inference", "[1,2]", J, 422, NULL);
	expect_problem(f, "POST", "/v1/plan/inference", "{\"model\":\"no-such-model\"," LLAMA3_REQ_TAIL, J, 404,
		       "/model");
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"device\":\"no-such-gpu\"," LLAMA3_REQ_TAIL, J, 404, "/device");
	expect_problem(f, "GET", "/v1/devices/no-such-gpu", NULL, NULL, 404, "/device");
	expect_problem(f, "GET", "/v1/models/no-such-model", NULL, NULL, 404, "/model");
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
		       "\"batch_size\":0,\"sequence_length\":4096}",
		       J, 422, "/batch_size");
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
		       "\"batch_size\":1,\"sequence_length\":-5}",
		       J, 422, "/sequence_length");
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf17\",\"kv_cache_dtype\":\"bf16\","
		       "\"batch_size\":1,\"sequence_length\":4096}",
		       J, 422, "/weight_dtype");
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
		       "\"batch_size\":1e30,\"sequence_length\":4096}",
		       J, 422, "/batch_size");
	/* kv_cache_dtype may be left out ("auto": the compute dtype, issue 15); a name it does not know is a 422 */
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"fp9\",\"batch_size\":1,"
		       "\"sequence_length\":4096}",
		       J, 422, "/kv_cache_dtype");
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"batchsize\":1," LLAMA3_REQ_TAIL, J, 422, "/batchsize");
	/* a plan beyond 2^53 bytes is refused: the API's byte counts are exact JSON integers */
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
		       "\"batch_size\":1048576,\"sequence_length\":16777216,\"allow_beyond_max_position_embeddings\":true}",
		       J, 422, "/sequence_length");
	/* heads not divisible by KV heads (BI-03), named under the inline config (Mistral: LlamaConfig would refuse the
	 * 4096 / 7 split first, as transformers' validate_architecture does) */
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":{\"hf_config\":{\"model_type\":\"mistral\",\"num_attention_heads\":7,"
		       "\"num_key_value_heads\":2,\"head_dim\":32}}," LLAMA3_REQ_TAIL,
		       J, 422, "/model/hf_config/num_key_value_heads");
	/* a product that overflows 64 bits: 2^20 layers' worth of KV is refused as a 422, never wrapped */
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":{\"hf_config\":{\"model_type\":\"llama\",\"num_hidden_layers\":1000,"
		       "\"hidden_size\":9007199254740992,\"num_attention_heads\":1,\"num_key_value_heads\":1}},"
		       LLAMA3_REQ_TAIL,
		       J, 422, NULL);
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":{\"hf_config\":{\"model_type\":\"bert\"}}," LLAMA3_REQ_TAIL, J, 422,
		       "/model/hf_config/model_type");
	expect_problem(f, "GET", "/v1/no-such-route", NULL, NULL, 404, NULL);
	expect_problem(f, "DELETE", "/v1/health", NULL, NULL, 405, NULL);
	expect_problem(f, "GET", "/v1/plan/inference", NULL, NULL, 405, NULL);
	expect_problem(f, "POST", "/v1/plan/inference", "{\"model\":\"llama-3-8b\"," LLAMA3_REQ_TAIL,
		       "text/plain", 415, NULL);
}

/* D3, D10: the training request's context rule and the LoRA fields that need LoRA. */
static void test_plan_training_rules(void **state)
{
	fixture *f = *state;
	http_resp r;

	/* D10: LoRA settings with finetune full would be ignored: 422 naming them */
	expect_problem(f, "POST", "/v1/plan/training",
		       "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
		       "\"micro_batch_size\":1,\"sequence_length\":4096,\"lora_rank\":8}",
		       J, 422, "/lora_rank");
	/* D3: the inference context rule: llama-2-7b has 4096 positions and no RoPE scaling */
	expect_problem(f, "POST", "/v1/plan/training",
		       "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
		       "\"micro_batch_size\":1,\"sequence_length\":8192}",
		       J, 422, "/sequence_length");
	post(f, "/v1/plan/training",
	     "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
	     "\"micro_batch_size\":1,\"sequence_length\":8192,\"allow_beyond_max_position_embeddings\":true}",
	     &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
}

/* Every byte of a problem body is well-formed UTF-8 (it is JSON text). */
static void assert_utf8_json(const http_resp *r)
{
	assert_non_null(r->json);
	assert_int_equal(mpc_utf8_invalid_at(r->body, r->len), r->len);
}

/* D6, D7: bodies that are not UTF-8, U+0000 in strings, malformed and over-long ids. */
static void test_hostile_text(void **state)
{
	fixture *f = *state;
	char path[400];
	http_resp r;

	post(f, "/v1/plan/inference", "{\"model\":\"ab\xff\xfe\"," LLAMA3_REQ_TAIL, &r);
	assert_int_equal(r.status, 400);
	assert_utf8_json(&r);
	assert_non_null(strstr(r.body, "not valid UTF-8 (byte 12)"));
	http_resp_free(&r);
	/* an overlong encoding and a lone surrogate are not UTF-8 either */
	post(f, "/v1/plan/inference", "{\"model\":\"\xc0\xaf\"," LLAMA3_REQ_TAIL, &r);
	assert_int_equal(r.status, 400);
	http_resp_free(&r);
	post(f, "/v1/plan/inference", "{\"model\":\"\xed\xa0\x80\"," LLAMA3_REQ_TAIL, &r);
	assert_int_equal(r.status, 400);
	http_resp_free(&r);
	/* valid multi-byte text is fine, and is echoed intact (cut at 64 bytes, never mid-character) */
	post(f, "/v1/plan/inference",
	     "{\"model\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"
	     "\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
	     "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9x\"," LLAMA3_REQ_TAIL,
	     &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/model");
	assert_utf8_json(&r);
	http_resp_free(&r);
	/* U+0000 would end a C string early: "bf16\u0000junk" is not bf16 */
	post(f, "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\\u0000junk\",\"kv_cache_dtype\":\"bf16\","
	     "\"batch_size\":1,\"sequence_length\":4096}",
	     &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/weight_dtype");
	http_resp_free(&r);
	post(f, "/v1/plan/inference",
	     "{\"model\":{\"hf_config\":{\"model_type\":\"llama\\u0000\"}},\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":"
	     "\"bf16\",\"batch_size\":1,\"sequence_length\":4096}",
	     &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/model/hf_config/model_type");
	http_resp_free(&r);
	/* an escaped backslash followed by u0000 is six ordinary characters */
	post(f, "/v1/plan/inference", "{\"model\":\"x\\\\u0000\"," LLAMA3_REQ_TAIL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/model");
	http_resp_free(&r);
	/* ids outside ^[a-z0-9][a-z0-9._-]{0,62}$: 422 naming the id, never echoed; a device id in another case is
	 * looked up lower-cased (and as a name the device goes by), so "H100" is a 404 with suggestions */
	expect_problem(f, "GET", "/v1/devices/H100", NULL, NULL, 404, "/device");
	expect_problem(f, "GET", "/v1/models/-x", NULL, NULL, 422, "/id");
	expect_problem(f, "DELETE", "/v1/devices/a%20b", NULL, NULL, 422, "/id");
	/* D7b: %00 must not cut the id short ("h100-sxm5-80gb%00junk" is not h100-sxm5-80gb) */
	expect_problem(f, "GET", "/v1/devices/h100-sxm5-80gb%00junk", NULL, NULL, 422, "/id");
	expect_problem(f, "GET", "/v1/devices/a%00b", NULL, NULL, 422, "/id");
	expect_problem(f, "GET", "/v1/models/llama-3-8b%00", NULL, NULL, 422, "/id");
	memset(path, 0, sizeof(path));
	snprintf(path, sizeof(path), "/v1/devices/");
	memset(path + strlen(path), 'a', 300);
	http_do(&f->d, "GET", path, NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/id");
	assert_null(strstr(r.body, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	http_resp_free(&r);
	/* a string that is no id may be a name the device goes by: looked up as one, then a 404 */
	post(f, "/v1/plan/inference", "{\"model\":\"llama-3-8b\",\"device\":\"Bad Id\"," LLAMA3_REQ_TAIL, &r);
	assert_int_equal(r.status, 404);
	assert_string_equal(http_problem_field(&r), "/device");
	http_resp_free(&r);
	/* a control character or 96 bytes and more is no name: 422 */
	post(f, "/v1/plan/inference", "{\"model\":\"llama-3-8b\",\"device\":\"h100\\u0001\"," LLAMA3_REQ_TAIL, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/device");
	http_resp_free(&r);
}

/* D8: the media type is parsed (case, blanks, parameters) on every method with a body; none is refused. */
static void test_content_type(void **state)
{
	fixture *f = *state;
	const char *plan = "{\"model\":\"llama-3-8b\"," LLAMA3_REQ_TAIL;
	static const char *const good[] = { "application/json", "APPLICATION/JSON", "Application/Json; charset=utf-8",
					    " application/json ;charset=UTF-8", NULL };
	static const char *const bad[] = { "application/jsonx", "application/json-seq", "text/json", "application",
					   "application/merge-patch+json", "", NULL };
	http_resp r;

	for (int i = 0; good[i]; i++) {
		http_do(&f->d, "POST", "/v1/plan/inference", plan, good[i], NULL, &r);
		if (r.status != 200)
			fail_msg("Content-Type '%s': %ld", good[i], r.status);
		http_resp_free(&r);
	}
	for (int i = 0; bad[i]; i++)
		expect_problem(f, "POST", "/v1/plan/inference", plan, bad[i], 415, "Content-Type");
	/* no Content-Type at all: the API documents none, so 415 too */
	expect_problem(f, "POST", "/v1/plan/inference", plan, NULL, 415, "Content-Type");
	/* PUT and PATCH are checked too; merge-patch+json only for PATCH (then the handler answers: 404) */
	expect_problem(f, "PUT", "/v1/devices/lab-x", "{}", "text/plain", 415, "Content-Type");
	expect_problem(f, "PUT", "/v1/devices/lab-x", "{}", "application/merge-patch+json", 415, "Content-Type");
	expect_problem(f, "PATCH", "/v1/devices/lab-x", "{}", "application/jsonx", 415, "Content-Type");
	expect_problem(f, "PATCH", "/v1/devices/lab-x", "{}", NULL, 415, "Content-Type");
	expect_problem(f, "PATCH", "/v1/devices/lab-x", "{}", "Application/Merge-Patch+JSON", 404, "/device");
	expect_problem(f, "PATCH", "/v1/devices/lab-x", "{}", J, 404, "/device");
}

/* D10: a member named twice in one object is refused (cJSON would silently use the first), at any depth. */
static void test_duplicate_keys(void **state)
{
	fixture *f = *state;

	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":\"llama-3-8b\",\"batch_size\":64," LLAMA3_REQ_TAIL, J, 422, "/batch_size");
	expect_problem(f, "POST", "/v1/plan/inference",
		       "{\"model\":{\"hf_config\":{\"model_type\":\"llama\",\"a/b\":1,\"a/b\":2}}," LLAMA3_REQ_TAIL, J,
		       422, "/model/hf_config/a~1b");
	expect_problem(f, "POST", "/v1/fit", "{\"jobs\":[{\"kind\":\"inference\"},{\"x\":1,\"y\":2,\"x\":3}]}", J, 422,
		       "/jobs/1/x");
	expect_problem(f, "PATCH", "/v1/devices/h100-sxm5-80gb", "{\"tdp_watts\":1,\"tdp_watts\":2}", J, 422,
		       "/tdp_watts");
}

/* D10: query arguments an endpoint does not take are refused (422 naming "?name"), like unknown body fields. */
static void test_unknown_query(void **state)
{
	fixture *f = *state;
	http_resp r;

	expect_problem(f, "GET", "/v1/devices?limt=3", NULL, NULL, 422, "?limt");
	expect_problem(f, "GET", "/v1/devices/h100-sxm5-80gb?verbose=1", NULL, NULL, 422, "?verbose");
	expect_problem(f, "GET", "/v1/health?x", NULL, NULL, 422, "?x");
	expect_problem(f, "POST", "/v1/plan/inference?dry_run=1", "{\"model\":\"llama-3-8b\"," LLAMA3_REQ_TAIL, J, 422,
		       "?dry_run");
	expect_problem(f, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&page=2", NULL, NULL, 422,
		       "?page");
	/* a NUL in the name is shown as '?', never as a raw control character */
	expect_problem(f, "GET", "/v1/models?a%00b=1", NULL, NULL, 422, "?a?b");
	/* the documented ones pass */
	http_do(&f->d, "GET", "/v1/devices?limit=2&vendor=nvidia&source=datasheet&min_memory_bytes=1&cursor=a", NULL,
		NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/models?limit=2&model_type=llama&source=preset", NULL, NULL, NULL, &r);
	if (r.status != 200)
		fail_msg("models list: %ld %s", r.status, r.body);
	http_resp_free(&r);
}

static void test_method_not_allowed_has_allow(void **state)
{
	fixture *f = *state;
	http_resp r;

	http_do(&f->d, "PUT", "/v1/plan/training", "{}", J, NULL, &r);
	assert_int_equal(r.status, 405);
	assert_string_equal(r.allow, "POST");
	http_resp_free(&r);
}

/* Every JSON answer ends with a newline (problems too); ?pretty=true indents it with the same digits. */
static void test_newline_and_pretty(void **state)
{
	fixture *f = *state;
	http_resp a, b;
	const char *body = "{\"model\":\"llama-3-8b\"," LLAMA3_REQ_TAIL;

	http_do(&f->d, "POST", "/v1/plan/inference", body, J, NULL, &a);
	assert_int_equal(a.status, 200);
	assert_true(a.len > 2 && a.body[a.len - 1] == '\n' && a.body[a.len - 2] == '}');
	assert_null(strchr(a.body, '\t'));
	http_do(&f->d, "POST", "/v1/plan/inference?pretty=true", body, J, NULL, &b);
	assert_int_equal(b.status, 200);
	assert_string_equal(b.content_type, "application/json");
	assert_non_null(strstr(b.body, "{\n\t\"model\":\t{\n"));
	{
		/* exact digits, as the compact answer (17,394,130,944 B with vLLM's 2048-token chunk, no device) */
		char want[64];

		assert_non_null(strstr(a.body, "\"total_bytes\":17394130944,"));
		snprintf(want, sizeof(want), "\"total_bytes\":\t%s,", "17394130944");
		assert_non_null(strstr(b.body, want));
	}
	assert_true(b.body[b.len - 1] == '\n');
	/* the same document */
	{
		cJSON *x = cJSON_Parse(a.body), *y = cJSON_Parse(b.body);

		assert_true(cJSON_Compare(x, y, true));
		cJSON_Delete(x);
		cJSON_Delete(y);
	}
	http_resp_free(&a);
	http_resp_free(&b);
	/* a cached answer (the fit writer's text, the cache's bytes) indented too; a GET; a problem */
	http_do(&f->d, "POST", "/v1/fit?pretty=1", "{\"jobs\":[{\"inference\":{\"model\":\"llama-3-8b\"," LLAMA3_REQ_TAIL "}],"
	        "\"devices\":[\"h100-sxm5-80gb\"]}", J, NULL, &a);
	assert_int_equal(a.status, 200);
	assert_non_null(strstr(a.body, "\n\t\"columns\":\t["));
	http_resp_free(&a);
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb?pretty=true", NULL, NULL, NULL, &a);
	assert_non_null(strstr(a.body, "\n\t\"memory_bandwidth_bytes_per_second\":\t3352000000000,\n"));
	http_resp_free(&a);
	http_do(&f->d, "POST", "/v1/plan/inference?pretty=true", "{\"model\":\"llama-3-8b\"}", J, NULL, &a);
	assert_int_equal(a.status, 422);
	assert_non_null(strstr(a.body, "\n\t\"status\":\t422,\n"));
	assert_true(a.body[a.len - 1] == '\n');
	http_resp_free(&a);
	http_do(&f->d, "GET", "/v1/health?pretty=false", NULL, NULL, NULL, &a);
	assert_int_equal(a.status, 200);
	assert_null(strchr(a.body, '\t'));
	http_resp_free(&a);
	expect_problem(f, "GET", "/v1/health?pretty=yes", NULL, NULL, 422, "?pretty");
}

/* ?format=text on the plans, the fit and capacity: the answer for people, never taken from the JSON cache. */
static void test_format_text(void **state)
{
	fixture *f = *state;
	http_resp r;
	const char *body = "{\"model\":\"llama-3-8b\"," LLAMA3_REQ_TAIL;
	char dev[512];

	snprintf(dev, sizeof(dev), "{\"model\":\"llama-3-8b\",\"device\":\"h200-sxm-141gb\",%s", LLAMA3_REQ_TAIL);
	/* the JSON answer first: it is now in the response cache */
	http_do(&f->d, "POST", "/v1/plan/inference", dev, J, NULL, &r);
	assert_string_equal(r.content_type, "application/json");
	http_resp_free(&r);
	http_do(&f->d, "POST", "/v1/plan/inference?format=text", dev, J, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/plain; charset=utf-8");
	assert_true(strncmp(r.body, "Inference plan: llama-3-8b", 26) == 0);
	assert_non_null(strstr(r.body, "\nFITS: 17.6 GB (16.4 GiB) per GPU of a 150 GB (140 GiB) budget"));
	http_resp_free(&r);
	http_do(&f->d, "POST", "/v1/plan/inference?format=json", body, J, NULL, &r);
	assert_string_equal(r.content_type, "application/json");
	http_resp_free(&r);
	http_do(&f->d, "POST", "/v1/plan/training?format=text",
	        "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\",\"micro_batch_size\":1,"
	        "\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}",
	        J, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(strncmp(r.body, "Training plan: llama-2-7b", 25) == 0);
	http_resp_free(&r);
	http_do(&f->d, "POST", "/v1/fit?format=text", "{\"jobs\":[{\"id\":\"a\",\"inference\":{\"model\":\"llama-3-8b\","
	        LLAMA3_REQ_TAIL "}],\"devices\":[\"h100-sxm5-80gb\"],\"gpu_counts\":[1]}", J, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/plain; charset=utf-8");
	assert_non_null(strstr(r.body, "job a (inference, llama-3-8b, 8,030,261,248 parameters (8.03 billion)): FITS on 1 "
	                               "of 1 device; fewest GPUs: 1 (h100-sxm5-80gb)\n"));
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/capacity?model=llama-3-8b&sequence_length=4096&format=text&vendor=amd", NULL, NULL,
	        NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, "Capacity of llama-3-8b (8,030,261,248 parameters), bf16 (auto) weights, bf16 (auto) KV cache, "
	                               "4,096 tokens per sequence:\nFITS on "));
	http_resp_free(&r);
	/* errors stay problem+json */
	expect_problem(f, "POST", "/v1/plan/inference?format=yaml", body, J, 422, "?format");
	expect_problem(f, "POST", "/v1/plan/inference?format=text", "{\"model\":\"nope\"," LLAMA3_REQ_TAIL, J, 404, "/model");
	/* format is not every route's */
	expect_problem(f, "POST", "/v1/roofline?format=text", "{\"device\":\"h100-sxm5-80gb\",\"ops\":[]}", J, 422, "?format");
}

/* GET /: the embedded page and its files, ETag'd, under a Content-Security-Policy; trailing slashes; 405's text. */
static void test_web_page_and_paths(void **state)
{
	fixture *f = *state;
	http_resp r;
	char inm[160], length[24];

	http_do(&f->d, "GET", "/", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/html; charset=utf-8");
	assert_non_null(strstr(r.body, "<script src=\"/ui/app.js\" defer></script>"));
	assert_non_null(strstr(r.csp, "default-src 'none'"));
	assert_non_null(strstr(r.csp, "connect-src 'self'"));
	assert_true(r.etag[0] == '"');
	snprintf(inm, sizeof(inm), "If-None-Match: %s", r.etag);
	snprintf(length, sizeof(length), "%zu", r.len);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/", NULL, NULL, inm, &r);
	assert_int_equal(r.status, 304);
	/* RFC 9110 8.6: a 304's Content-Length, when it has one, is the 200's (never "0"); no content follows */
	if (r.content_length[0])
		assert_string_equal(r.content_length, length);
	assert_int_equal(r.len, 0);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/ui/app.js", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/javascript; charset=utf-8");
	assert_non_null(strstr(r.body, "fetch(path, init)"));
	assert_null(strstr(r.body, "http://")); /* nothing fetched from elsewhere */
	assert_null(strstr(r.body, "https://"));
	http_resp_free(&r);
	http_do(&f->d, "GET", "/ui/style.css", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(r.content_type, "text/css; charset=utf-8");
	http_resp_free(&r);
	http_do(&f->d, "GET", "/ui/nope.js", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	http_resp_free(&r);
	/* one trailing slash is the same path */
	http_do(&f->d, "GET", "/v1/devices/?limit=1", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), 1);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb/", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(r.json, "id")->valuestring, "h100-sxm5-80gb");
	http_resp_free(&r);
	/* a 405 names the methods in its detail, not only in Allow */
	http_do(&f->d, "DELETE", "/v1/health", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 405);
	assert_string_equal(cJSON_GetObjectItem(r.json, "detail")->valuestring,
	                    "DELETE is not allowed on /v1/health; it takes GET, HEAD (the Allow header)");
	http_resp_free(&r);
}

static void test_body_too_large(void **state)
{
	fixture *f = *state;
	size_t n = f->d.cfg.max_body_bytes + 10;
	char *big = malloc(n + 1);

	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	expect_problem(f, "POST", "/v1/roofline", big, J, 413, NULL);
	/* the routes that take a model take --model-max-body-bytes (a GGUF header in base64): this body is read, and
	 * refused for its missing fields */
	expect_problem(f, "POST", "/v1/plan/inference", big, J, 422, NULL);
	free(big);
	n = f->d.cfg.model_max_body_bytes + 10;
	big = malloc(n + 1);
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	expect_problem(f, "POST", "/v1/plan/inference", big, J, 413, NULL);
	free(big);
}

static void test_reads(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *peaks;

	http_do(&f->d, "GET", "/v1/health", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(r.json, "status")->valuestring, "ok");
	assert_false(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "gpu"), "available")));
	http_resp_free(&r);

	http_do(&f->d, "GET", "/v1/devices/h100-sxm5-80gb", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	peaks = cJSON_GetObjectItem(r.json, "peak_flops_per_second");
	assert_true(cJSON_GetObjectItem(peaks, "bf16")->valuedouble == 989.4e12);
	assert_true(num(r.json, "peak_flops_per_second", "bf16") /
			    cJSON_GetObjectItem(r.json, "memory_bandwidth_bytes_per_second")->valuedouble >
		    295.1);
	assert_string_equal(cJSON_GetObjectItem(r.json, "source")->valuestring, "datasheet");
	http_resp_free(&r);

	http_do(&f->d, "GET", "/v1/devices?limit=2", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "items")), 2);
	assert_true(cJSON_IsString(cJSON_GetObjectItem(r.json, "next_cursor")));
	http_resp_free(&r);
	expect_problem(f, "GET", "/v1/devices?limit=0", NULL, NULL, 422, "?limit");

	http_do(&f->d, "GET", "/v1/models/qwen2.5-7b", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_true(cJSON_GetObjectItem(r.json, "parameters")->valuedouble == 7615616512.0);
	http_resp_free(&r);
}

/* The tensor inventory through the API: GET /v1/models/{id}/tensors and "include": ["tensors"] on a plan.
 * Llama-3-8B (tests/ref/models/llama-3-8b.json, its preset): 12 entries, 8,030,261,248 parameters; k_proj [1024,
 * 4096] x 32 layers is 268,435,456 bytes in bf16 and, at tensor_parallel_size 4 in fp8_e4m3, a quarter of its rows
 * at one byte plus one fp32 weight_scale per matrix: 32 x (256 x 4096 + 4) = 33,554,560 bytes. */
static void test_model_tensors(void **state)
{
	fixture *f = *state;
	http_resp r;
	const cJSON *t, *e;
	double sum = 0, params = 0;
	bool k_seen = false;

	http_do(&f->d, "GET", "/v1/models/llama-3-8b/tensors", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	t = cJSON_GetObjectItem(r.json, "tensors");
	assert_int_equal(cJSON_GetArraySize(t), 12);
	assert_string_equal(cJSON_GetObjectItem(r.json, "weight_dtype")->valuestring, "bf16");
	cJSON_ArrayForEach(e, t)
	{
		sum += cJSON_GetObjectItem(e, "bytes")->valuedouble;
		params += cJSON_GetObjectItem(e, "parameters")->valuedouble;
		if (strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "model.layers.{i}.self_attn.k_proj.weight") == 0) {
			assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "shape"), 0)->valueint, 1024);
			assert_int_equal(cJSON_GetObjectItem(e, "layers")->valueint, 32);
			assert_true(cJSON_GetObjectItem(e, "bytes")->valuedouble == 268435456.0);
			assert_string_equal(cJSON_GetObjectItem(e, "class")->valuestring, "attention");
			k_seen = true;
		}
	}
	assert_true(k_seen);
	assert_true(params == 8030261248.0);
	assert_true(sum == cJSON_GetObjectItem(r.json, "bytes_per_gpu")->valuedouble);
	http_resp_free(&r);

	http_do(&f->d, "GET", "/v1/models/llama-3-8b/tensors?weight_dtype=fp8&tensor_parallel_size=4", NULL, NULL, NULL,
		&r);
	assert_int_equal(r.status, 200);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(r.json, "tensors"))
		if (strcmp(cJSON_GetObjectItem(e, "name")->valuestring, "model.layers.{i}.self_attn.k_proj.weight") == 0)
			assert_true(cJSON_GetObjectItem(e, "bytes")->valuedouble == 33554560.0);
	http_resp_free(&r);

	/* every bad query argument at once */
	http_do(&f->d, "GET", "/v1/models/llama-3-8b/tensors?weight_dtype=fp9&tensor_parallel_size=0", NULL, NULL, NULL,
		&r);
	assert_int_equal(r.status, 422);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "errors")), 2);
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/models/nope/tensors", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 404);
	http_resp_free(&r);

	/* the plan's own list: its formats on one of its ranks, summing to its weights */
	post(f, "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":1024,\"weight_dtype\":\"fp8\","
	     "\"num_gpus\":4,\"include\":[\"tensors\"]}",
	     &r);
	assert_int_equal(r.status, 200);
	t = cJSON_GetObjectItem(r.json, "tensors");
	assert_int_equal(cJSON_GetObjectItem(t, "tensor_parallel_size")->valueint, 4);
	sum = 0;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(t, "tensors"))
		sum += cJSON_GetObjectItem(e, "bytes")->valuedouble;
	assert_true(sum == cJSON_GetObjectItem(t, "bytes_per_gpu")->valuedouble);
	http_resp_free(&r);
	post(f, "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":1024,\"include\":[\"tensor\"]}", &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/include");
	http_resp_free(&r);
}

/* A newcomer's request: every problem at once, lookups included; suggestions ranked by the words people type; device
 * ids in any case and the names a device goes by; an inline device's name kept. */
static bool errors_have(const http_resp *r, const char *field, const char *text)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, cJSON_GetObjectItem(r->json, "errors"))
		if (strcmp(cJSON_GetObjectItem(e, "field")->valuestring, field) == 0 &&
		    (text == NULL || strstr(cJSON_GetObjectItem(e, "message")->valuestring, text)))
			return true;
	return false;
}

static void test_newcomer_requests(void **state)
{
	fixture *f = *state;
	http_resp r;
	static const struct {
		const char *body, *field, *want, *not_want;
	} near[] = {
	    {"{\"model\":\"llama-3-8b\",\"device\":\"h100-80gb\",\"batch_size\":1,\"sequence_length\":64}", "/device",
	     "did you mean h100-pcie-80gb, h100-sxm5-80gb?", "b200"},
	    {"{\"model\":\"llama-3-8b\",\"device\":\"a100-80gb\",\"batch_size\":1,\"sequence_length\":64}", "/device",
	     "did you mean a100-pcie-80gb, a100-sxm4-80gb?", "a10-24gb"},
	    {"{\"model\":\"llama-3-8b\",\"device\":\"rtx4090\",\"batch_size\":1,\"sequence_length\":64}", "/device",
	     "did you mean rtx-4090-24gb?", NULL},
	    {"{\"model\":\"llama-70b\",\"batch_size\":1,\"sequence_length\":64}", "/model", "did you mean llama-3.1-70b?",
	     "llama-2-7b"},
	    {"{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_lenght\":64}", "/sequence_lenght",
	     "did you mean sequence_length?", NULL},
	    {"{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":64,\"kv_cache_dtype\":\"bfloat\"}",
	     "/kv_cache_dtype", "did you mean bf16?", NULL},
	};

	/* every problem of the body at once: five of its fields, the model and the device */
	post(f, "/v1/plan/inference",
	     "{\"model\":\"lama-3-8b\",\"weight_dtype\":\"fp8e4m3\",\"batch_size\":-1,\"sequence_lenght\":4096,"
	     "\"device\":\"h100-80gb\",\"tensor_parallel_size\":\"4\"}",
	     &r);
	assert_int_equal(r.status, 422);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "errors")), 7);
	assert_true(errors_have(&r, "/model", "did you mean llama-3-8b"));
	assert_true(errors_have(&r, "/device", "did you mean h100-pcie-80gb, h100-sxm5-80gb?"));
	assert_true(errors_have(&r, "/weight_dtype", "did you mean fp8_e4m3?"));
	assert_true(errors_have(&r, "/sequence_lenght", "did you mean sequence_length?"));
	http_resp_free(&r);
	/* every mistyped key of an inline config at once (it named the first alone) */
	post(f, "/v1/plan/inference",
	     "{\"model\":{\"hf_config\":{\"model_type\":\"llama\",\"hidden_size\":-4096,\"num_hidden_layers\":\"32\","
	     "\"vocab_size\":1e20,\"tie_word_embeddings\":\"yes\"}},\"batch_size\":1,\"sequence_length\":128}",
	     &r);
	assert_int_equal(r.status, 422);
	assert_true(errors_have(&r, "/model/hf_config/hidden_size", "non-negative integer"));
	assert_true(errors_have(&r, "/model/hf_config/num_hidden_layers", "non-negative integer"));
	assert_true(errors_have(&r, "/model/hf_config/vocab_size", "non-negative integer"));
	assert_true(errors_have(&r, "/model/hf_config/tie_word_embeddings", "true or false"));
	http_resp_free(&r);
	/* a body without other problems: both lookups in one 404 */
	post(f, "/v1/plan/inference", "{\"model\":\"lama-3-8b\",\"device\":\"h100-80gb\",\"batch_size\":1,\"sequence_length\":64}",
	     &r);
	assert_int_equal(r.status, 404);
	assert_true(errors_have(&r, "/model", NULL) && errors_have(&r, "/device", NULL));
	http_resp_free(&r);
	post(f, "/v1/plan/training",
	     "{\"model\":\"lama-3-8b\",\"device\":\"h100-80gb\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw8bit\","
	     "\"micro_batch_size\":1,\"sequence_length\":64}",
	     &r);
	assert_int_equal(r.status, 422);
	assert_true(errors_have(&r, "/optimizer", "did you mean adamw_8bit?"));
	assert_true(errors_have(&r, "/model", NULL) && errors_have(&r, "/device", NULL));
	http_resp_free(&r);
	for (size_t i = 0; i < sizeof(near) / sizeof(near[0]); i++) {
		post(f, "/v1/plan/inference", near[i].body, &r);
		if (!errors_have(&r, near[i].field, near[i].want) ||
		    (near[i].not_want && strstr(r.body, near[i].not_want)))
			fail_msg("%s: expected '%s' at %s: %s", near[i].body, near[i].want, near[i].field, r.body);
		http_resp_free(&r);
	}
	/* device ids in any case, and the names a device goes by */
	post(f, "/v1/plan/inference", "{\"model\":\"llama-3-8b\",\"device\":\"H100-SXM5-80GB\",\"batch_size\":1,\"sequence_length\":64}",
	     &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "fit"), "device")->valuestring, "h100-sxm5-80gb");
	http_resp_free(&r);
	post(f, "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"device\":\"NVIDIA H100 80GB HBM3\",\"batch_size\":1,\"sequence_length\":64}", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "fit"), "device")->valuestring, "h100-sxm5-80gb");
	http_resp_free(&r);
	http_do(&f->d, "GET", "/v1/devices/nvidia-h100-80gb", NULL, NULL, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(r.json, "id")->valuestring, "h100-sxm5-80gb");
	http_resp_free(&r);
	/* an inline device's name is how the answer names it */
	post(f, "/v1/plan/inference?format=text",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":64,\"device\":{\"name\":\"RTX A6000 48GB\","
	     "\"memory_bytes\":51527024640,\"memory_bandwidth_bytes_per_second\":768000000000,"
	     "\"peak_flops_per_second\":{\"bf16\":154800000000000}}}",
	     &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(r.body, " on RTX A6000 48GB\n"));
	http_resp_free(&r);
	post(f, "/v1/plan/inference",
	     "{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":64,\"device\":{\"name\":\"RTX A6000 48GB\","
	     "\"memory_bytes\":51527024640,\"memory_bandwidth_bytes_per_second\":768000000000,"
	     "\"peak_flops_per_second\":{\"bf16\":154800000000000}}}",
	     &r);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "fit"), "device")->valuestring, "RTX A6000 48GB");
	http_resp_free(&r);
}

/* ----- llama.cpp and Ollama over HTTP ------------------------------------------------------------------------
 * Plans with engine llamacpp and ollama on a GGUF header of tests/ref/llamacpp/models, held to what the real llama.cpp
 * printed for the same model and settings (tests/ref/llamacpp/runs.json, and the logs of memplan's own commands in
 * tests/data/engines/llamacpp), POST /v1/engine-check of those logs, and the 422s of the engine options; every
 * answer is logged for the contract tests (tests/contract/test_responses.py checks it against openapi.yaml). */

/* The base64 (RFC 4648, OpenSSL's EVP_EncodeBlock) of a file; caller frees. */
static char *b64_file(const char *file)
{
	size_t n;
	unsigned char *p = (unsigned char *)ref_read(file, &n);
	char *o;

	if (p == NULL)
		fail_msg("cannot read %s", file);
	assert_true(n <= (size_t)INT_MAX / 4 * 3);
	o = malloc(4 * ((n + 2) / 3) + 1);
	assert_non_null(o);
	EVP_EncodeBlock((unsigned char *)o, p, (int)n);
	free(p);
	return o;
}

/* {"gguf_header": base64 of tests/ref/llamacpp/models/<name>.gguf.hdr} */
static cJSON *gguf_model(const char *name)
{
	char rel[128], *text;
	cJSON *m = cJSON_CreateObject();

	snprintf(rel, sizeof(rel), "llamacpp/models/%s.gguf.hdr", name);
	text = b64_file(ref_path(rel));
	cJSON_AddStringToObject(m, "gguf_header", text);
	free(text);
	return m;
}

/* bytes as llama.cpp prints a buffer: "%.2f" of bytes / 1024 / 1024 (MiB = 2^20 bytes). */
static const char *as_mib(double bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.2f", bytes / 1024.0 / 1024.0);
	return buf;
}

/* The "mib" text of runs.json's buffer of kind on a device whose name starts with device, in the run of model whose
 * arguments are args (space-separated); aborts when there is none. */
static const char *run_buffer(const cJSON *runs, const char *model, const char *args, const char *kind,
			      const char *device)
{
	const cJSON *run, *b, *a;

	cJSON_ArrayForEach(run, cJSON_GetObjectItem(runs, "runs"))
	{
		char joined[256] = "";
		size_t used = 0;

		if (strcmp(cJSON_GetObjectItem(run, "model")->valuestring, model) != 0)
			continue;
		cJSON_ArrayForEach(a, cJSON_GetObjectItem(run, "args"))
		used += (size_t)snprintf(joined + used, sizeof(joined) - used, "%s%s", used ? " " : "", a->valuestring);
		if (strcmp(joined, args) != 0)
			continue;
		cJSON_ArrayForEach(b, cJSON_GetObjectItem(run, "buffers"))
		if (strcmp(cJSON_GetObjectItem(b, "kind")->valuestring, kind) == 0 &&
		    strncmp(cJSON_GetObjectItem(b, "device")->valuestring, device, strlen(device)) == 0)
			return cJSON_GetObjectItem(b, "mib")->valuestring;
	}
	fail_msg("runs.json has no %s buffer on %s for %s %s", kind, device, model, args);
	return NULL;
}

static const cJSON *placed(const cJSON *plan, int i, const char *member)
{
	const cJSON *d = cJSON_GetArrayItem(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(plan, "engine"), "placement"), "devices"), i);
	const cJSON *v = cJSON_GetObjectItem(d, member);

	if (v == NULL)
		fail_msg("engine.placement.devices[%d].%s is missing", i, member);
	return v;
}

static void post_json(fixture *f, const char *path, const cJSON *body, http_resp *r)
{
	char *text = cJSON_PrintUnformatted(body);

	assert_non_null(text);
	post(f, path, text, r);
	free(text);
}

/* A llama.cpp run of tests/ref/llamacpp/runs.json again through the daemon: llama-q4_k_m, -c 2048 -ngl 99 -fa on
 * -ctk q8_0 -ctv q8_0 with one RPC server standing in for the GPU (the CPU backend: engine_options.backend cpu) on an
 * RTX 4090's memory; then the same settings under Ollama, whose llama-server runs CUDA on that GPU. */
static void test_llamacpp_plans(void **state)
{
	fixture *f = *state;
	cJSON *runs = ref_json("llamacpp/runs.json"), *body;
	const char *args = "-c 2048 -ngl 99 -fa on -ctk q8_0 -ctv q8_0";
	/* the cache: 2048 cells x 4 layers x (K and V) x 2 KV heads x 64 dims, q8_0 = 34 bytes per 32 values (ggml's
	 * block_q8_0), the GGUF header's llama.block_count, head_count_kv and key_length */
	const double kv_bytes = 2048.0 * 4 * 2 * (2 * 64) * 34 / 32;
	char mib[32];
	const cJSON *e, *o;
	double host_model;
	http_resp r;

	assert_true(kv_bytes == 2228224.0);
	body = cJSON_Parse("{\"batch_size\":1,\"sequence_length\":2048,\"device\":\"rtx-4090-24gb\",\"engine\":\"llamacpp\","
			   "\"engine_options\":{\"gpu_layers\":99,\"cache_type_k\":\"q8_0\",\"cache_type_v\":\"q8_0\","
			   "\"flash_attention\":\"on\",\"backend\":\"cpu\",\"host_device\":{\"name\":\"host\",\"kind\":"
			   "\"cpu\",\"memory_bytes\":68719476736,\"memory_bandwidth_bytes_per_second\":1e11,"
			   "\"peak_flops_per_second\":{\"fp32\":2e12}}}}");
	assert_non_null(body);
	cJSON_AddItemToObject(body, "model", gguf_model("llama-q4_k_m"));
	post_json(f, "/v1/plan/inference", body, &r);
	assert_int_equal(r.status, 200);
	e = cJSON_GetObjectItem(r.json, "engine");
	assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "llamacpp");
	assert_non_null(strstr(cJSON_GetObjectItem(e, "command")->valuestring, "-ctk q8_0 -ctv q8_0 -fa on"));
	assert_int_equal((int)num(e, "placement", "offloaded_layers"), 5); /* 4 layers and the output layer */
	assert_string_equal(placed(r.json, 0, "role")->valuestring, "host");
	assert_string_equal(placed(r.json, 1, "role")->valuestring, "gpu");
	assert_string_equal(as_mib(placed(r.json, 0, "model_bytes")->valuedouble, mib, sizeof(mib)),
			    run_buffer(runs, "llama-q4_k_m", args, "model", "CPU_Mapped"));
	assert_string_equal(as_mib(placed(r.json, 1, "model_bytes")->valuedouble, mib, sizeof(mib)),
			    run_buffer(runs, "llama-q4_k_m", args, "model", "RPC0"));
	assert_string_equal(as_mib(placed(r.json, 1, "kv_cache_bytes")->valuedouble, mib, sizeof(mib)),
			    run_buffer(runs, "llama-q4_k_m", args, "KV", "RPC0"));
	assert_true(placed(r.json, 1, "kv_cache_bytes")->valuedouble == kv_bytes);
	assert_true(placed(r.json, 0, "kv_cache_bytes")->valuedouble == 0);
	host_model = placed(r.json, 0, "model_bytes")->valuedouble;
	http_resp_free(&r);

	/* Ollama: one cache type for K and V (OLLAMA_KV_CACHE_TYPE), num_gpu every layer and the output layer */
	cJSON_ReplaceItemInObject(body, "engine", cJSON_CreateString("ollama"));
	cJSON_ReplaceItemInObject(body, "engine_options",
				  cJSON_Parse("{\"cache_type_k\":\"q8_0\",\"flash_attention\":\"on\"}"));
	post_json(f, "/v1/plan/inference", body, &r);
	assert_int_equal(r.status, 200);
	e = cJSON_GetObjectItem(r.json, "engine");
	assert_string_equal(cJSON_GetObjectItem(e, "name")->valuestring, "ollama");
	o = cJSON_GetObjectItem(e, "ollama");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "environment"), "OLLAMA_KV_CACHE_TYPE")->valuestring,
			    "q8_0");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "environment"), "OLLAMA_FLASH_ATTENTION")->valuestring,
			    "1");
	assert_int_equal((int)num(o, "options", "num_ctx"), 2048);
	assert_int_equal((int)num(o, "options", "num_gpu"), 5);
	assert_non_null(strstr(cJSON_GetObjectItem(o, "llama_server_command")->valuestring,
			       "--cache-type-k q8_0 --cache-type-v q8_0 --flash-attn on"));
	/* the cache and the host's mapped share are the same arithmetic on CUDA */
	assert_true(placed(r.json, 1, "kv_cache_bytes")->valuedouble == kv_bytes);
	assert_true(placed(r.json, 0, "model_bytes")->valuedouble == host_model);
	http_resp_free(&r);
	cJSON_Delete(body);
	cJSON_Delete(runs);
}

/* The plan of a recorded case of tests/data/engines/llamacpp (<case>.json's plan, its model's GGUF header) and the
 * log llama.cpp printed for its command. */
static cJSON *recorded_plan(const char *name, char **log)
{
	char p[160], model[64];
	size_t len;
	char *meta_text;
	cJSON *meta, *plan;
	const char *m, *slash;

	snprintf(p, sizeof(p), "tests/data/engines/llamacpp/%s.json", name);
	meta_text = ref_read(p, &len);
	if (meta_text == NULL)
		fail_msg("cannot read %s (run from the worktree root)", p);
	meta = cJSON_Parse(meta_text);
	free(meta_text);
	assert_non_null(meta);
	m = cJSON_GetObjectItem(meta, "model")->valuestring; /* "gemma3/gemma3-q4_k_m.gguf" */
	slash = strrchr(m, '/');
	snprintf(model, sizeof(model), "%.*s", (int)(strlen(slash + 1) - 5), slash + 1);
	plan = cJSON_DetachItemFromObject(meta, "plan");
	cJSON_AddItemToObject(plan, "model", gguf_model(model));
	cJSON_Delete(meta);
	snprintf(p, sizeof(p), "tests/data/engines/llamacpp/%s.log", name);
	*log = ref_read(p, &len);
	if (*log == NULL)
		fail_msg("cannot read %s", p);
	return plan;
}

/* The reported figure of a kind (the n-th of it) in an engine check's answer. */
static const cJSON *check_figure(const cJSON *doc, const char *kind, int nth)
{
	const cJSON *fig;

	cJSON_ArrayForEach(fig, cJSON_GetObjectItem(doc, "figures"))
	if (strcmp(cJSON_GetObjectItem(fig, "figure")->valuestring, kind) == 0 && nth-- == 0)
		return fig;
	fail_msg("no figure %s", kind);
	return NULL;
}

/* A recorded host-only run: the plan's predicted lines about the model and KV buffers and the cache are the lines
 * llama.cpp printed, verbatim; the engine check of that log finds its model buffer (model_mib, as printed) and each
 * KV buffer (kv_mib, kv_n of them) equal to the plan's. */
static void recorded_case(fixture *f, const char *name, const char *model_mib, const double *kv_mib, int kv_n)
{
	char *log;
	cJSON *plan = recorded_plan(name, &log), *body;
	const cJSON *line, *fig;
	const char *engine = cJSON_GetObjectItem(plan, "engine")->valuestring;
	int matched = 0;
	http_resp r;

	post_json(f, "/v1/plan/inference", plan, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "engine"), "name")->valuestring, engine);
	cJSON_ArrayForEach(line, cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "engine"),
									  "predicted"),
						 "log_lines"))
	{
		const char *t = line->valuestring;

		if (strstr(t, "model buffer size") || strstr(t, "KV buffer size") || strstr(t, "llama_kv_cache: size =")) {
			if (strstr(log, t) == NULL)
				fail_msg("%s: the plan's line '%s' is not in what llama.cpp printed", name, t);
			matched++;
		}
	}
	assert_true(matched >= 1 + 2 * kv_n);
	http_resp_free(&r);

	body = cJSON_CreateObject();
	cJSON_AddStringToObject(body, "engine", engine);
	cJSON_AddStringToObject(body, "log", log);
	cJSON_AddItemToObject(body, "plan", plan);
	post_json(f, "/v1/engine-check", body, &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(cJSON_GetObjectItem(r.json, "engine")->valuestring, engine);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(r.json, "summary"), "model_and_kv_match")));
	fig = check_figure(r.json, "model_buffer_mib", 0);
	assert_true(cJSON_GetObjectItem(fig, "reported")->valuedouble == strtod(model_mib, NULL));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(fig, "within_tolerance")));
	for (int i = 0; i < kv_n; i++) {
		fig = check_figure(r.json, "kv_buffer_mib", i);
		assert_true(cJSON_GetObjectItem(fig, "reported")->valuedouble == kv_mib[i]);
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(fig, "within_tolerance")));
	}
	http_resp_free(&r);
	cJSON_Delete(body);
	free(log);
}

static void test_llamacpp_recorded(void **state)
{
	/* host-llama-q4_k_m.log line 100 "CPU_Mapped model buffer size = 2.50 MiB", 118 "CPU KV buffer size = 8.00
	 * MiB"; ollama-host-gemma3-q4_k_m.log 128 "CPU model buffer size = 2.87 MiB", 148 and 153: the full cache's
	 * 1.06 MiB and the sliding window's 2.66 */
	static const double llama_kv[] = { 8.00 }, gemma_kv[] = { 1.06, 2.66 };

	recorded_case(*state, "host-llama-q4_k_m", "2.50", llama_kv, 1);
	recorded_case(*state, "ollama-host-gemma3-q4_k_m", "2.87", gemma_kv, 2);
}

/* The 422s of engines llamacpp and ollama, each naming its field. */
static void test_llamacpp_errors(void **state)
{
	static const struct {
		const char *engine, *model, *options, *field;
	} cases[] = {
		/* a model by id has no GGUF file to plan llama.cpp's buffers from */
		{ "llamacpp", "\"llama-3-8b\"", NULL, "/model" },
		{ "ollama", "\"llama-3-8b\"", NULL, "/model" },
		{ "llamacpp", NULL, "{\"cache_type_k\":\"q3_k\"}", "/engine_options/cache_type_k" },
		{ "llamacpp", NULL, "{\"ngl\":5}", "/engine_options/ngl" },
		{ "llamacpp", NULL, "{\"gpu_layers\":-1}", "/engine_options/gpu_layers" },
		{ "llamacpp", NULL, "{\"cache_type_v\":\"q8_0\",\"flash_attention\":\"off\"}", "/engine_options/cache_type_v" },
		{ "ollama", NULL, "{\"n_ubatch\":128}", "/engine_options/n_ubatch" },
		{ "ollama", NULL, "{\"cache_type_k\":\"q8_0\",\"cache_type_v\":\"f16\"}", "/engine_options/cache_type_v" },
		/* engine_options are llama.cpp's and Ollama's knobs */
		{ "vllm", "\"llama-3-8b\"", "{}", "/engine_options" },
	};
	fixture *f = *state;
	char *hdr = b64_file(ref_path("llamacpp/models/llama-q4_k_m.gguf.hdr")), *body;
	size_t cap = strlen(hdr) + 512;
	http_resp r;

	body = malloc(cap);
	assert_non_null(body);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = snprintf(body, cap, "{\"batch_size\":1,\"sequence_length\":2048,\"engine\":\"%s\",", cases[i].engine);

		if (cases[i].model)
			n += snprintf(body + n, cap - (size_t)n, "\"model\":%s", cases[i].model);
		else
			n += snprintf(body + n, cap - (size_t)n, "\"model\":{\"gguf_header\":\"%s\"}", hdr);
		if (cases[i].options)
			n += snprintf(body + n, cap - (size_t)n, ",\"engine_options\":%s", cases[i].options);
		snprintf(body + n, cap - (size_t)n, "}");
		post(f, "/v1/plan/inference", body, &r);
		if (r.status != 422 || strcmp(http_problem_field(&r), cases[i].field) != 0)
			fail_msg("case %zu: %ld, field '%s', expected 422 naming %s", i, r.status, http_problem_field(&r),
				 cases[i].field);
		assert_string_equal(r.content_type, "application/problem+json");
		http_resp_free(&r);
	}
	/* the engine check's plan: the same rule, under /plan */
	post(f, "/v1/engine-check",
	     "{\"engine\":\"llamacpp\",\"log\":\"load_tensors:   CPU_Mapped model buffer size =     2.50 MiB\","
	     "\"plan\":{\"model\":\"llama-3-8b\",\"batch_size\":1,\"sequence_length\":4096}}",
	     &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/plan/model");
	http_resp_free(&r);
	/* a log with no line llama.cpp prints about its buffers */
	snprintf(body, cap,
		 "{\"engine\":\"llamacpp\",\"log\":\"nothing here\",\"plan\":{\"model\":{\"gguf_header\":\"%s\"},"
		 "\"batch_size\":1,\"sequence_length\":4096}}",
		 hdr);
	post(f, "/v1/engine-check", body, &r);
	assert_int_equal(r.status, 422);
	assert_string_equal(http_problem_field(&r), "/log");
	http_resp_free(&r);
	free(body);
	free(hdr);
}

/* Every route of the table is a path of openapi.yaml with that method, and the reverse. */
static void test_routes_match_openapi(void **state)
{
	char *spec = ref_read("openapi.yaml", NULL);

	(void)state;
	assert_non_null(spec);
	for (size_t i = 0; i < mpd_route_count; i++) {
		char needle[256], method[16];
		const char *at;

		snprintf(needle, sizeof(needle), "\n  %s:\n", mpd_routes[i].pattern);
		at = strstr(spec, needle);
		if (at == NULL)
			fail_msg("route %s is missing from openapi.yaml paths", mpd_routes[i].pattern);
		for (size_t k = 0; k < sizeof(method) - 1 && mpd_routes[i].method[k]; k++)
			method[k] = (char)(mpd_routes[i].method[k] | 0x20), method[k + 1] = '\0';
		snprintf(needle, sizeof(needle), "\n    %s:\n", method);
		{
			const char *next = strstr(at + 1, "\n  /");
			const char *m = strstr(at, needle);

			if (m == NULL || (next && m > next))
				fail_msg("%s %s is missing from openapi.yaml", mpd_routes[i].method,
					 mpd_routes[i].pattern);
		}
	}
	/* the reverse: every path in the spec is routed */
	for (const char *p = strstr(spec, "\npaths:\n"); p && (p = strstr(p + 1, "\n  /")) != NULL;) {
		char path[128];
		size_t n = strcspn(p + 3, ":\n");
		bool found = false;

		snprintf(path, sizeof(path), "%.*s", (int)n, p + 3);
		for (size_t i = 0; i < mpd_route_count; i++)
			found |= strcmp(mpd_routes[i].pattern, path) == 0;
		if (!found)
			fail_msg("openapi.yaml path %s has no route", path);
	}
	free(spec);
}

/* Numbers as a tree of an answer holds them (mpc_number) print as cJSON_PrintUnformatted would print the same values
 * (integers in and beyond int's range, negative zero, fractions, NaN and infinities, nesting), except that whole
 * numbers from 10^15 to 2^53 come out as exact integer digits rather than cJSON's exponent form. And the printer
 * never changes what it prints (a regression: it once turned numbers into raw items in place, and a table read
 * from the printed document said "nan threads"). */
static void test_json_print_matches_cjson(void **state)
{
	static const double values[] = { 0.0, -0.0, 1, -1, 4096, 2147483647.0, 2147483648.0, -2147483649.0,
					 16060522496.0, 999999999999999.0, -999999999999999.0, 1e15, 1e15 + 2,
					 9007199254740993.0, 1.5, 0.1, 1e-7, 308.5353922017984, 0.067066189645894475,
					 1e300, -5e9, 4.8e12, 1.979e15 };
	cJSON *ref = cJSON_CreateObject(), *doc = cJSON_CreateObject(), *body;
	char *want, *got, *again, dir[64];
	mpd_daemon d;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		char key[16];

		snprintf(key, sizeof(key), "v%zu", i);
		cJSON_AddNumberToObject(ref, key, values[i]);
		mpc_add_item(doc, key, mpc_number(values[i]));
	}
	cJSON_AddNumberToObject(ref, "nan", NAN);
	mpc_add_item(doc, "nan", mpc_number(NAN));
	cJSON_AddNumberToObject(ref, "inf", INFINITY);
	mpc_add_item(doc, "inf", mpc_number(INFINITY));
	want = cJSON_PrintUnformatted(ref);
	got = mpc_print(doc, false);
	{
		cJSON *a = cJSON_Parse(want), *b = cJSON_Parse(got);

		assert_non_null(b);
		assert_true(cJSON_Compare(a, b, true));
		cJSON_Delete(a);
		cJSON_Delete(b);
	}
	assert_non_null(strstr(want, "1.979e+15"));	/* cJSON's form ... */
	assert_non_null(strstr(got, "\"v22\":1979000000000000"));	/* ... and the exact integer */
	assert_non_null(strstr(got, "\"v11\":1000000000000000,"));
	assert_null(strstr(got, "e+15"));
	assert_true(cJSON_IsRaw(cJSON_GetObjectItem(doc, "v8")));	 /* whole numbers: exact digits */
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(doc, "v19"))); /* 1e300: beyond 2^53, left to cJSON */
	/* printing twice gives the same text, and the numbers are still numbers afterwards */
	again = mpc_print(ref, false);
	cJSON_free(want);
	want = mpc_print(ref, false);
	assert_string_equal(again, want);
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(ref, "v8")));
	assert_true(cJSON_GetObjectItem(ref, "v8")->valuedouble == 16060522496.0);
	cJSON_free(again);
	cJSON_free(want);
	cJSON_free(got);
	cJSON_Delete(ref);
	cJSON_Delete(doc);

	http_start(&d, dir, sizeof(dir));
	body = cJSON_Parse("{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
			   "\"batch_size\":1,\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}");
	assert_int_equal(lib_answer(d.svc, "inference", body, &got, &err), MP_OK);
	assert_non_null(strstr(got, "\"total_bytes\":17638465536"));
	free(got);
	cJSON_Delete(body);
	http_stop(&d, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_inference_by_id),
		cmocka_unit_test(test_model_tensors),
		cmocka_unit_test(test_newcomer_requests),
		cmocka_unit_test(test_plan_inference_inline),
		cmocka_unit_test(test_plan_inference_fit),
		cmocka_unit_test(test_engines),
		cmocka_unit_test(test_llamacpp_plans),
		cmocka_unit_test(test_llamacpp_recorded),
		cmocka_unit_test(test_llamacpp_errors),
		cmocka_unit_test(test_plan_training),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_hostile_text),
		cmocka_unit_test(test_plan_training_rules),
		cmocka_unit_test(test_content_type),
		cmocka_unit_test(test_unknown_query),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_method_not_allowed_has_allow),
		cmocka_unit_test(test_newline_and_pretty),
		cmocka_unit_test(test_format_text),
		cmocka_unit_test(test_web_page_and_paths),
		cmocka_unit_test(test_body_too_large),
		cmocka_unit_test(test_reads),
		cmocka_unit_test(test_routes_match_openapi),
		cmocka_unit_test(test_json_print_matches_cjson),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests_name("http", tests, http_fixture_setup, http_fixture_teardown);
	curl_global_cleanup();
	return rc;
}
