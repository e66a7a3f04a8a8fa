/*
 * test_engine_check.c: POST /v1/engine-check through the library (decode -> service -> encode), on the real start-up
 * logs of tests/data/engines (README there names each issue report). Each log's figures must follow from one another
 * by the engine's own arithmetic within the engine's printed rounding; memplan's weights must match vLLM's printed
 * figure; the engine block's predicted figures are recomputed here from the plan's bytes, the engine's way.
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

#include "../codec/codec.h"
#include "../service/service.h"
#include "refs.h"

#define GIB 1073741824.0

static mps_service *svc;
static char dir[] = "/tmp/memplan-engine-XXXXXX";

static int setup(void **state)
{
	char path[64];
	mp_error err = MP_ERROR_INIT;

	(void)state;
	mpc_json_init(NULL);
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/m.db", dir);
	return mps_open(path, &svc, &err) == MP_OK ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[96];

	(void)state;
	mps_close(svc);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static char *data_text(const char *name)
{
	char path[256];
	size_t len;
	char *t;

	snprintf(path, sizeof(path), "tests/data/%s", name);
	t = ref_read(path, &len);
	if (t == NULL)
		fail_msg("cannot read %s (run from the worktree root)", path);
	return t;
}

static cJSON *data_json(const char *name)
{
	char *t = data_text(name);
	cJSON *doc = cJSON_Parse(t);

	free(t);
	if (doc == NULL)
		fail_msg("%s is not JSON", name);
	return doc;
}

/* A plan body: a stored model id or tests/data/<config>.json inline, and a device (an id or a JSON profile). */
static cJSON *plan(const char *model, const char *config, const char *wdt, const char *kvdt, double batch, double seq,
		   const char *device)
{
	cJSON *p = cJSON_CreateObject();

	if (config) {
		cJSON *m = cJSON_AddObjectToObject(p, "model");

		cJSON_AddItemToObject(m, "hf_config", data_json(config));
	} else {
		cJSON_AddStringToObject(p, "model", model);
	}
	cJSON_AddStringToObject(p, "weight_dtype", wdt);
	cJSON_AddStringToObject(p, "kv_cache_dtype", kvdt);
	cJSON_AddNumberToObject(p, "batch_size", batch);
	cJSON_AddNumberToObject(p, "sequence_length", seq);
	if (device && device[0] == '{')
		cJSON_AddItemToObject(p, "device", cJSON_Parse(device));
	else if (device)
		cJSON_AddStringToObject(p, "device", device);
	return p;
}

/* The check of log file `file` (metrics when `metrics`) against plan p (owned): the answer, or NULL with *st. */
static cJSON *check_text(const char *engine, const char *text, cJSON *p);

static cJSON *check(const char *engine, const char *file, bool metrics, cJSON *p, mp_status *st, mp_error *err)
{
	cJSON *body = cJSON_CreateObject(), *out = NULL;
	mps_engine_check_request *rq = calloc(1, sizeof(*rq));
	mps_engine_check *c = malloc(sizeof(*c));
	char *text = file ? data_text(file) : NULL;

	assert_non_null(rq);
	assert_non_null(c);
	cJSON_AddStringToObject(body, "engine", engine);
	if (text)
		cJSON_AddStringToObject(body, metrics ? "metrics" : "log", text);
	cJSON_AddItemToObject(body, "plan", p);
	*st = mpc_engine_check_decode(body, rq, err);
	if (*st == MP_OK)
		*st = mps_engine_check_run(svc, rq, c, err);
	if (*st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_engine_check_write(&w, rq, c);
		out = mpc_out_parse(&w);
	}
	free(text);
	free(c);
	mpc_engine_check_request_release(rq);
	free(rq);
	cJSON_Delete(body);
	return out;
}

static cJSON *check_ok(const char *engine, const char *file, cJSON *p)
{
	mp_status st;
	mp_error err = MP_ERROR_INIT;
	cJSON *doc = check(engine, file, false, p, &st, &err);

	if (st != MP_OK)
		fail_msg("%s: %s at %s: %s", file, mp_status_str(st), err.field, err.message);
	return doc;
}

/* The nth (0-based) figure of that name. */
static const cJSON *figure(const cJSON *doc, const char *name, int nth)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItem(doc, "figures"))
		if (strcmp(cJSON_GetObjectItem(f, "figure")->valuestring, name) == 0 && nth-- == 0)
			return f;
	fail_msg("no figure %s", name);
	return NULL;
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(o, key);

	if (!cJSON_IsNumber(v))
		fail_msg("%s is not a number", key);
	return v->valuedouble;
}

/* The figure is consistent with what the log's other figures imply, and that range holds `value`. */
static void implied_holds(const cJSON *f, double value)
{
	const cJSON *im = cJSON_GetObjectItem(f, "implied");

	assert_true(cJSON_IsObject(im));
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "consistent")));
	if (!(num(im, "min") - num(f, "tolerance") - 1e-9 <= value && value <= num(im, "max") + num(f, "tolerance") + 1e-9))
		fail_msg("%s: %g outside [%g, %g]", cJSON_GetObjectItem(f, "figure")->valuestring, value, num(im, "min"),
			 num(im, "max"));
}

static bool summary_true(const cJSON *doc, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "summary"), key));
}

/* The RTX 3090 of vllm #10517 as vLLM saw it: total_gpu_memory=23.58GiB. */
#define RTX3090 \
	"{\"name\":\"RTX 3090 (vllm #10517)\",\"memory_bytes\":25769803776,\"usable_memory_bytes\":25318829015," \
	"\"memory_bandwidth_bytes_per_second\":936e9,\"peak_flops_per_second\":{\"bf16\":71e12}}"

/* vllm #10517, V0 0.6, --max-model-len 20000 (chunked prefill off below 32k): the weights memplan predicts are
 * the ones vLLM printed (14.9888 GiB: the checkpoint plus the RoPE cache); blocks, concurrency and the budget
 * follow from each other. */
static void test_vllm_10517_20k(void **state)
{
	cJSON *p = plan("llama-3.1-8b", NULL, "bf16", "bf16", 1, 20000, RTX3090), *doc;
	const cJSON *f;

	(void)state;
	cJSON_AddStringToObject(p, "engine", "vllm");
	cJSON_AddFalseToObject(p, "chunked_prefill");
	doc = check_ok("vllm", "engines/vllm-10517-llama31-8b-rtx3090-20k.log", p);
	assert_int_equal(num(doc, "lines_read"), 4);
	assert_int_equal(num(doc, "lines_recognised"), 4);
	f = figure(doc, "weights_loaded_gib", 0);
	assert_true(num(f, "reported") == 14.9888);
	assert_true(fabs(num(f, "predicted") - 14.9888) <= 0.00005);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "within_tolerance")));
	assert_true(fabs(num(figure(doc, "total_gpu_memory_gib", 0), "predicted") - 23.58) <= 0.005);
	implied_holds(figure(doc, "available_kv_cache_gib", 0), 3.81);
	implied_holds(figure(doc, "num_gpu_blocks", 0), 1952);
	implied_holds(figure(doc, "max_concurrency", 0), 1.56);
	assert_int_equal(num(figure(doc, "max_concurrency", 0), "tokens_per_request"), 20000);
	assert_true(summary_true(doc, "log_consistent"));
	assert_int_equal(num(cJSON_GetObjectItem(doc, "summary"), "checked"), 3);
	assert_false(summary_true(doc, "engine_refused_max_model_len"));
	/* the plan prefills the whole 20000-token sequence, as vLLM's profile run did without chunking */
	assert_int_equal(num(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "plan"), "request"), "max_num_batched_tokens"),
			 20000);
	cJSON_Delete(doc);
}

/* A note of the answer holding `text`. */
static bool note_has(const cJSON *doc, const char *text)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, cJSON_GetObjectItem(doc, "notes"))
	{
		if (cJSON_IsString(n) && strstr(n->valuestring, text))
			return true;
	}
	return false;
}

static const char *engine_str(const cJSON *doc, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "plan"), "engine"), key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* With no plan.engine_version, the release is the one whose format the lines are: vllm #10517's one-line "Memory
 * profiling results:" is 0.6.2-0.6.4's, so the blocks are 0.6's arithmetic (1953 against the 1952 printed; 0.33's
 * default gave 2119, off by 8.6%); a log of V1's lines alone (LMCache #1739) is any V1 release: the newest, said;
 * an engine_version given wins. */
static void test_version_from_log(void **state)
{
	cJSON *p = plan("llama-3.1-8b", NULL, "bf16", "bf16", 1, 20000, RTX3090), *doc;

	(void)state;
	cJSON_AddFalseToObject(p, "chunked_prefill");
	doc = check_ok("vllm", "engines/vllm-10517-llama31-8b-rtx3090-20k.log", cJSON_Duplicate(p, true));
	assert_string_equal(engine_str(doc, "version"), "0.6");
	assert_string_equal(engine_str(doc, "version_from"), "log");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "plan"), "request"),
						"engine_version_from")->valuestring,
			    "log");
	assert_true(note_has(doc, "\"Memory profiling results\" line is vLLM 0.6's format"));
	assert_true(fabs(num(figure(doc, "num_gpu_blocks", 0), "predicted") - 1952) <= 1);
	assert_true(num(figure(doc, "memory_fraction", 0), "predicted") == 0.9);
	cJSON_Delete(doc);
	cJSON_AddStringToObject(p, "engine_version", "0.33");
	doc = check_ok("vllm", "engines/vllm-10517-llama31-8b-rtx3090-20k.log", p);
	assert_string_equal(engine_str(doc, "version"), "0.33");
	assert_string_equal(engine_str(doc, "version_from"), "request");
	assert_false(note_has(doc, "was not given"));
	cJSON_Delete(doc);
	/* V1's capacity alone on its line is 0.11's form (0.33 prints the concurrency beside it) */
	doc = check_ok("vllm", "engines/vllm-lmcache1739-qwen3-14b.log",
		       plan(NULL, "qwen3-14b.json", "bf16", "bf16", 1, 32768, "h100-sxm5-80gb"));
	assert_string_equal(engine_str(doc, "version"), "0.11");
	assert_string_equal(engine_str(doc, "version_from"), "log");
	cJSON_Delete(doc);
	{
		/* V1's lines that both print alike (the KV memory alone): the newest, said */
		cJSON *p2 = plan(NULL, "qwen3-14b.json", "bf16", "bf16", 1, 32768, "h100-sxm5-80gb");

		doc = check_text("vllm", "INFO [gpu_worker.py:298] Available KV cache memory: 6.51 GiB\n", p2);
		assert_string_equal(engine_str(doc, "version"), "0.33");
		assert_string_equal(engine_str(doc, "version_from"), "default");
		assert_true(note_has(doc, "line is vLLM V1's, printed alike by 0.11 and 0.33"));
		cJSON_Delete(doc);
	}
	{
		/* 0.33's one-line capacity */
		cJSON *p3 = plan(NULL, "qwen3-14b.json", "bf16", "bf16", 1, 32768, "h100-sxm5-80gb");

		doc = check_text("vllm",
				 "INFO [kv_cache_utils.py:1136] GPU KV cache size: 42,656 tokens, Maximum concurrency for "
				 "32,768 tokens per request: 1.30x\n",
				 p3);
		assert_string_equal(engine_str(doc, "version"), "0.33");
		assert_string_equal(engine_str(doc, "version_from"), "log");
		cJSON_Delete(doc);
	}
	/* V0's blocks line without 0.6's budget line: the 0.7 line (vllm #13061) */
	p = plan("qwen2.5-14b", NULL, "bf16", "bf16", 256, 131072, "rtx-4090-24gb");
	cJSON_AddNumberToObject(p, "num_gpus", 2);
	cJSON_AddNumberToObject(p, "gpu_memory_utilization", 0.98);
	cJSON_AddNumberToObject(p, "max_num_batched_tokens", 2048);
	doc = check_ok("vllm", "engines/vllm-13061-r1-qwen14b-2x4090-tp2.log", p);
	assert_string_equal(engine_str(doc, "version"), "0.7");
	cJSON_Delete(doc);
}

/* vllm #10517 at 29000 tokens: 2.89 GiB -> 1478 blocks -> 23,648 tokens, too few for 29000: the engine's error. */
static void test_vllm_10517_29k(void **state)
{
	cJSON *p = plan("llama-3.1-8b", NULL, "bf16", "bf16", 1, 29000, RTX3090), *doc;

	(void)state;
	cJSON_AddFalseToObject(p, "chunked_prefill");
	doc = check_ok("vllm", "engines/vllm-10517-llama31-8b-rtx3090-29k.log", p);
	implied_holds(figure(doc, "num_gpu_blocks", 0), 1478);
	implied_holds(figure(doc, "kv_cache_tokens", 0), 23648);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(figure(doc, "kv_cache_tokens", 0), "implied"),
						"from")->valuestring,
			    "num_gpu_blocks");
	implied_holds(figure(doc, "max_concurrency", 0), 0.82);
	assert_true(summary_true(doc, "log_consistent"));
	assert_true(summary_true(doc, "engine_refused_max_model_len"));
	cJSON_Delete(doc);
}

/* The V0 0.7 lines of the reference (H100, utilisation 0.15; the model is not stated): 79.25 x 0.15 = 11.89 and
 * 11.89 - 8.51 - 0.26 - 0.94 = 2.18 hold. Planned as Llama-3-8B (2 MiB blocks), the 715 blocks cannot come from
 * 2.18 GiB: the check says the log is not this model's. */
static void test_vllm_v07_budget(void **state)
{
	cJSON *doc = check_ok("vllm", "engines/vllm-v0.7-h100-util015.log",
			      plan("llama-3-8b", NULL, "bf16", "bf16", 1, 4096, "h100-sxm5-80gb"));
	const cJSON *b;

	(void)state;
	implied_holds(figure(doc, "requested_memory_gib", 0), 11.89);
	implied_holds(figure(doc, "available_kv_cache_gib", 0), 2.18);
	b = figure(doc, "num_gpu_blocks", 0);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(b, "consistent")));
	assert_int_equal(num(cJSON_GetObjectItem(b, "implied"), "max"), 1118); /* 2.185 GiB / 2 MiB */
	assert_false(summary_true(doc, "log_consistent"));
	cJSON_Delete(doc);
}

/* LMCache #1739, vLLM V1, Qwen3-14B bf16: 6.51 GiB -> 42,656 tokens -> 1.30x for 32,768. */
static void test_vllm_v1_qwen3_14b(void **state)
{
	cJSON *doc = check_ok("vllm", "engines/vllm-lmcache1739-qwen3-14b.log",
			      plan(NULL, "qwen3-14b.json", "bf16", "bf16", 1, 32768, "h100-sxm5-80gb"));

	(void)state;
	assert_int_equal(num(doc, "lines_recognised"), 3);
	implied_holds(figure(doc, "kv_cache_tokens", 0), 42656);
	implied_holds(figure(doc, "max_concurrency", 0), 1.30);
	assert_true(summary_true(doc, "log_consistent"));
	cJSON_Delete(doc);
}

/* vllm #25350, V1, fp8 KV on a model of 48 layers x 4 KV heads x 128 (Qwen3-30B-A3B's shape). */
static void test_vllm_25350(void **state)
{
	cJSON *p = plan(NULL, "qwen3-30b-a3b.json", "bf16", "fp8", 1, 100000, "h100-sxm5-80gb"), *doc;
	const cJSON *f;

	(void)state;
	cJSON_AddTrueToObject(p, "allow_beyond_max_position_embeddings");
	doc = check_ok("vllm", "engines/vllm-25350-fp8kv-100k.log", p);
	implied_holds(figure(doc, "kv_cache_tokens", 0), 230528);
	implied_holds(figure(doc, "max_concurrency", 0), 2.31);
	assert_true(summary_true(doc, "log_consistent"));
	cJSON_Delete(doc);

	p = plan(NULL, "qwen3-30b-a3b.json", "bf16", "fp8", 1, 221000, "h100-sxm5-80gb");
	cJSON_AddTrueToObject(p, "allow_beyond_max_position_embeddings");
	doc = check_ok("vllm", "engines/vllm-25350-fp8kv-221k.log", p);
	f = figure(doc, "needed_kv_cache_gib", 0);
	assert_int_equal(num(f, "tokens_per_request"), 221000);
	implied_holds(f, 10.12);
	implied_holds(figure(doc, "estimated_max_model_len_tokens", 0), 122080);
	assert_true(summary_true(doc, "engine_refused_max_model_len"));
	assert_true(summary_true(doc, "log_consistent"));
	cJSON_Delete(doc);
}

/* vllm #21348, V1 at tensor_parallel_size 4: 8.11 GiB (at most 8.115) on one worker allows 11,315 blocks = 181,040
 * tokens; the engine printed 178,880 (the smallest worker's): consistent, as an upper bound. */
static void test_vllm_21348_tp4(void **state)
{
	cJSON *p = plan(NULL, "qwen3-235b-a22b.json", "fp8_e4m3", "bf16", 1, 40960, "h100-sxm5-80gb"), *doc;
	const cJSON *f;

	(void)state;
	cJSON_AddNumberToObject(p, "tensor_parallel_size", 4);
	doc = check_ok("vllm", "engines/vllm-21348-qwen3-235b-tp4.log", p);
	f = figure(doc, "kv_cache_tokens", 0);
	implied_holds(f, 178880);
	assert_int_equal(num(cJSON_GetObjectItem(f, "implied"), "max"), 181040);
	assert_int_equal(num(cJSON_GetObjectItem(f, "implied"), "min"), 0);
	assert_true(summary_true(doc, "log_consistent"));
	cJSON_Delete(doc);
}

/* SGLang in vllm #21348: #tokens 367,404 with a 48,128 B cell (94 layers, 1 KV head per GPU at tp 4, bf16) is
 * K 8.23 GB and V 8.23 GB (its GB are GiB). */
static void test_sglang_21348(void **state)
{
	cJSON *p = plan(NULL, "qwen3-235b-a22b.json", "fp8_e4m3", "bf16", 1, 40960, "h100-sxm5-80gb"), *doc, *pred;

	(void)state;
	cJSON_AddNumberToObject(p, "tensor_parallel_size", 4);
	cJSON_AddNumberToObject(p, "mem_fraction_static", 0.93);
	doc = check_ok("sglang", "engines/sglang-21348-qwen3-235b-tp4.log", p);
	implied_holds(figure(doc, "k_cache_gib", 0), 8.23);
	implied_holds(figure(doc, "v_cache_gib", 0), 8.23);
	assert_true(summary_true(doc, "log_consistent"));
	pred = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "plan"), "engine"), "predicted");
	assert_int_equal(num(pred, "cell_size_bytes"), 48128);
	assert_true(num(pred, "mem_fraction_static") == 0.93);
	cJSON_Delete(doc);
}

/* TensorRT-LLM #1400: 69,524,783,104 bytes for 132,608 tokens: 524,288 B a token, Llama-2-7B's fp16 cache. */
static void test_trtllm_1400(void **state)
{
	cJSON *p = plan("llama-2-7b", NULL, "fp16", "fp16", 8, 4096, "a100-sxm4-80gb"), *doc;
	const cJSON *f;

	(void)state;
	cJSON_AddStringToObject(p, "compute_dtype", "fp16"); /* the checkpoint's dtype: the engine's KV dtype */
	doc = check_ok("trtllm", "engines/trtllm-1400-kv-allocation.log", p);
	f = figure(doc, "kv_cache_tokens", 0);
	implied_holds(f, 132608);
	assert_true(num(cJSON_GetObjectItem(f, "implied"), "min") == 132608);
	assert_true(summary_true(doc, "log_consistent"));
	assert_int_equal(num(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "plan"), "engine"),
						 "predicted"),
			     "kv_size_per_token_bytes"),
			 524288);
	cJSON_Delete(doc);
	/* the C++ runtime's primary-pool line is read (its model is not stated: no consistency asserted) */
	p = plan("llama-2-7b", NULL, "fp16", "fp16", 8, 4096, "a100-sxm4-80gb");
	cJSON_AddStringToObject(p, "compute_dtype", "fp16");
	doc = check_ok("trtllm", "engines/trtllm-2268-primary-pool.log", p);
	assert_int_equal(num(figure(doc, "num_gpu_blocks", 0), "reported"), 631);
	assert_true(num(figure(doc, "available_after_weights_gib", 0), "reported") == 21.89);
	assert_true(num(figure(doc, "total_gpu_memory_gib", 0), "reported") == 39.39);
	cJSON_Delete(doc);
}

/* vllm:cache_config_info, a real sample: block_size 16, num_gpu_blocks 573, gpu_memory_utilization 0.82. */
static void test_vllm_metrics(void **state)
{
	cJSON *p = plan(NULL, "qwen3-14b.json", "bf16", "bf16", 1, 8192, "h100-sxm5-80gb"), *doc;
	mp_status st;
	mp_error err = MP_ERROR_INIT;

	(void)state;
	cJSON_AddNumberToObject(p, "gpu_memory_utilization", 0.82);
	doc = check("vllm", "engines/vllm-metrics-qwen3-32b.prom", true, p, &st, &err);
	assert_int_equal(st, MP_OK);
	assert_string_equal(cJSON_GetObjectItem(doc, "source")->valuestring, "metrics");
	assert_int_equal(num(figure(doc, "block_size_tokens", 0), "reported"), 16);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(figure(doc, "block_size_tokens", 0), "within_tolerance")));
	assert_int_equal(num(figure(doc, "num_gpu_blocks", 0), "reported"), 573);
	assert_true(num(figure(doc, "memory_fraction", 0), "reported") == 0.82);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(figure(doc, "memory_fraction", 0), "within_tolerance")));
	cJSON_Delete(doc);
}

static void expect_error(const char *body_text, const char *field, const char *needle)
{
	cJSON *body = cJSON_Parse(body_text);
	mps_engine_check_request *rq = calloc(1, sizeof(*rq));
	mps_engine_check *c = malloc(sizeof(*c));
	mp_error err = MP_ERROR_INIT;
	mp_status st;

	assert_non_null(body);
	st = mpc_engine_check_decode(body, rq, &err);
	if (st == MP_OK)
		st = mps_engine_check_run(svc, rq, c, &err);
	assert_int_equal(st, MP_EINVAL);
	assert_string_equal(err.field, field);
	if (needle && strstr(err.message, needle) == NULL)
		fail_msg("message '%s' lacks '%s'", err.message, needle);
	cJSON_Delete(body);
	free(c);
	mpc_engine_check_request_release(rq);
	free(rq);
}

#define PLAN "\"plan\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1," \
	     "\"sequence_length\":4096,\"device\":\"h100-sxm5-80gb\"}"

/* A log with no line memplan reads is a 422 that says what it looks for; the body's rules, each naming its field. */
static void test_errors(void **state)
{
	(void)state;
	expect_error("{\"engine\":\"vllm\",\"log\":\"INFO starting\\nWARNING something else\\n\"," PLAN "}", "/log",
		     "Available KV cache memory");
	expect_error("{\"engine\":\"sglang\",\"log\":\"\"," PLAN "}", "/log", "KV Cache is allocated");
	expect_error("{\"engine\":\"vllm\",\"log\":\"x\",\"metrics\":\"y\"," PLAN "}", "/metrics", "exactly one");
	expect_error("{\"engine\":\"vllm\"," PLAN "}", "/log", "exactly one");
	expect_error("{\"engine\":\"sglang\",\"metrics\":\"vllm:cache_config_info{block_size=\\\"16\\\"} 1\"," PLAN "}",
		     "/metrics", "vllm");
	expect_error("{\"engine\":\"vllm\",\"metrics\":\"vllm:num_requests_running 2\"," PLAN "}", "/metrics",
		     "cache_config_info");
	expect_error("{\"engine\":\"vllm\",\"log\":\"GPU KV cache size: 10 tokens\",\"plan\":{\"model\":\"llama-3-8b\","
		     "\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}}",
		     "/plan/device", "device");
	expect_error("{\"engine\":\"vllm\",\"log\":\"GPU KV cache size: 10 tokens\",\"plan\":{\"model\":\"llama-3-8b\","
		     "\"engine\":\"sglang\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
		     "\"sequence_length\":4096,\"device\":\"h100-sxm5-80gb\"}}",
		     "/plan/engine", "vllm");
	expect_error("{\"engine\":\"ollama\",\"log\":\"x\"," PLAN "}", "/engine", NULL);
	expect_error("{\"engine\":\"vllm\",\"log\":\"GPU KV cache size: 10 tokens\",\"plan\":{\"model\":\"llama-3-8b\","
		     "\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"q8_0\",\"batch_size\":1,\"sequence_length\":4096,"
		     "\"device\":\"h100-sxm5-80gb\"}}",
		     "/plan/kv_cache_dtype", "fp8");
}

/* A plan of the body text through the library: the document, or NULL with *err (a 422's field and message). */
static cJSON *plan_text(const char *text, mp_error *err)
{
	cJSON *body = cJSON_Parse(text), *out = NULL;
	mps_inference_request *rq = calloc(1, sizeof(*rq));
	mps_inference_plan *p = malloc(sizeof(*p));
	mp_status st;

	assert_non_null(body);
	*err = (mp_error)MP_ERROR_INIT;
	st = mpc_inference_decode(body, "", true, rq, err);
	if (st == MP_OK)
		st = mps_plan_inference(svc, rq, p, err);
	if (st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_inference_plan_write(&w, rq, p);
		out = mpc_out_parse(&w);
	}
	cJSON_Delete(body);
	free(p);
	mpc_inference_request_release(rq);
	free(rq);
	return out;
}

/* An inference plan body with an engine, through the library (plan_text, which must answer). */
static cJSON *engine_plan(const char *engine, const char *extra)
{
	char text[640];
	mp_error err = MP_ERROR_INIT;
	cJSON *out;

	snprintf(text, sizeof(text),
		 "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":32,"
		 "\"sequence_length\":4096,\"device\":\"h100-sxm5-80gb\",\"engine\":\"%s\"%s}",
		 engine, extra);
	out = plan_text(text, &err);
	if (out == NULL)
		fail_msg("%s: %s %s", engine, err.field, err.message);
	return out;
}

static bool warns(const cJSON *doc, const char *text)
{
	const cJSON *w;

	cJSON_ArrayForEach(w, cJSON_GetObjectItem(doc, "warnings"))
	{
		if (cJSON_IsString(w) && strstr(w->valuestring, text))
			return true;
	}
	return false;
}

#define FMT_PLAN(wdt, engine, extra) \
	"{\"model\":\"llama-3.1-8b\",\"weight_dtype\":\"" wdt "\",\"batch_size\":16,\"sequence_length\":8192," \
	"\"device\":\"h100-sxm5-80gb\",\"engine\":\"" engine "\"" extra "}"

/* The block size of vLLM 0.33's MLA backend on an H100 follows the cache's dtype (platforms/cuda.py
 * _get_backend_priorities on sm90: FLASH_ATTN_MLA takes MultipleOf(16) and a 16-bit cache only, FLASHMLA [64] fp8
 * too; no MLA backend lists fp8_e5m2): DeepSeek-V2-Lite bf16 -> 16, fp8 -> 64, fp8_e5m2 -> a 422. vLLM 0.11 picks
 * FLASHMLA (64) for both (tests/engines/run.py rows mla-fp8-kv and mla-fp8-e5m2-kv run these through the engines). */
static const char *arg_of(const cJSON *doc, const char *flag)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "args"))
	{
		if (strcmp(cJSON_GetObjectItem(a, "flag")->valuestring, flag) == 0)
			return cJSON_GetObjectItem(a, "value")->valuestring;
	}
	return NULL;
}

static cJSON *mla_plan(const char *kv, const char *version, mp_error *err)
{
	char *cfg = ref_read("tests/ref/hf/configs/deepseek-v2-lite.json", NULL);
	char text[8192];
	cJSON *doc;

	assert_non_null(cfg);
	snprintf(text, sizeof(text),
		 "{\"model\":{\"hf_config\":%s},\"kv_cache_dtype\":\"%s\",\"batch_size\":16,\"sequence_length\":"
		 "16384,\"device\":\"h100-sxm5-80gb\",\"engine\":\"vllm\",\"engine_version\":\"%s\"}",
		 cfg, kv, version);
	free(cfg);
	doc = plan_text(text, err);
	return doc;
}

static void test_vllm_mla_block_size(void **state)
{
	mp_error err;
	cJSON *doc;

	(void)state;
	doc = mla_plan("bf16", "0.33", &err);
	assert_non_null(doc);
	assert_string_equal(arg_of(doc, "--block-size"), "16");
	cJSON_Delete(doc);
	doc = mla_plan("fp8", "0.33", &err);
	assert_non_null(doc);
	assert_string_equal(arg_of(doc, "--block-size"), "64");
	assert_string_equal(arg_of(doc, "--kv-cache-dtype"), "fp8");
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted"),
					     "blocks_per_request")->valueint, 16384 / 64);
	cJSON_Delete(doc);
	assert_null(mla_plan("fp8_e5m2", "0.33", &err));
	assert_string_equal(err.field, "/kv_cache_dtype");
	assert_non_null(strstr(err.message, "fp8_e5m2"));
	doc = mla_plan("fp8_e5m2", "0.11", &err);
	assert_non_null(doc);
	assert_string_equal(arg_of(doc, "--block-size"), "64");
	cJSON_Delete(doc);
}

/* Hybrid and multimodal models as the releases serve them by default (tests/engines/run.py rows chunked-llama4-tp4,
 * swa-gpt-oss-20b): vLLM 0.11 and 0.33 turn the hybrid KV cache manager off for Llama 4's chunked local attention
 * (one group of all 48 layers); SGLang 0.5.23 serves Llama 4 text-only (model_config.py mm_disabled_models); a
 * gpt-oss checkpoint's MXFP4 experts resolve to gpt_oss_mxfp4 in 0.33 and mxfp4 in 0.11, and 0.7 has no gpt-oss. */
static cJSON *config_plan(const char *cfg_path, const char *extra, mp_error *err)
{
	char *cfg = ref_read(cfg_path, NULL);
	size_t n;
	char *text;
	cJSON *doc;

	assert_non_null(cfg);
	n = strlen(cfg) + strlen(extra) + 256;
	text = malloc(n);
	assert_non_null(text);
	snprintf(text, n, "{\"model\":{\"hf_config\":%s},\"device\":\"h100-sxm5-80gb\"%s}", cfg, extra);
	free(cfg);
	doc = plan_text(text, err);
	free(text);
	return doc;
}

static void test_engine_hybrid_defaults(void **state)
{
	static const char llama4[] = "tests/ref/hf/configs/llama-4-scout-17b-16e-instruct.json";
	static const char gpt_oss[] = "tests/ref/hf/configs/gpt-oss-20b.json";
	mp_error err;
	cJSON *doc;
	const cJSON *eng;

	(void)state;
	doc = config_plan(llama4, ",\"batch_size\":8,\"sequence_length\":32768,\"num_gpus\":4,\"engine\":\"vllm\"",
			  &err);
	assert_non_null(doc);
	eng = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted");
	assert_int_equal(cJSON_GetObjectItem(eng, "kv_cache_groups")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(eng, "layers_per_group")->valueint, 48);
	assert_true(warns(doc, "turns its hybrid KV cache manager off for chunked local attention"));
	cJSON_Delete(doc);
	doc = config_plan(llama4,
			  ",\"batch_size\":8,\"sequence_length\":32768,\"num_gpus\":4,\"engine\":\"sglang\"", &err);
	assert_non_null(doc);
	/* SGLang's text rule at TP 4 on an H100 (81,559 MiB): no ViT adjustment */
	assert_true(fabs(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "defaults"),
					     "memory_fraction")->valuedouble - 0.831) < 1e-9);
	assert_true(warns(doc, "text-only unless --enable-multimodal"));
	cJSON_Delete(doc);
	doc = config_plan(gpt_oss, ",\"batch_size\":16,\"sequence_length\":32768,\"engine\":\"vllm\"", &err);
	assert_non_null(doc);
	eng = cJSON_GetObjectItem(doc, "engine");
	assert_string_equal(cJSON_GetObjectItem(eng, "quantization")->valuestring, "gpt_oss_mxfp4");
	assert_null(strstr(cJSON_GetObjectItem(eng, "command")->valuestring, "--quantization"));
	cJSON_Delete(doc);
	doc = config_plan(gpt_oss,
			  ",\"batch_size\":16,\"sequence_length\":32768,\"engine\":\"vllm\",\"engine_version\":\"0.11\"",
			  &err);
	assert_non_null(doc);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "quantization")->valuestring, "mxfp4");
	cJSON_Delete(doc);
	assert_null(config_plan(
	    gpt_oss, ",\"batch_size\":16,\"sequence_length\":32768,\"engine\":\"vllm\",\"engine_version\":\"0.7\"", &err));
	assert_string_equal(err.field, "/engine_version");
}

/* Weight formats as the engines run them (tests/engines/run.py holds the same plans to the engines' own code): NVFP4
 * is a ModelOpt checkpoint (modelopt_fp4 in vLLM 0.11 and 0.33 and SGLang; none in vLLM 0.7), MXFP4 a format of
 * MoE experts only (vLLM mxfp4.py: no linear layer), fp8 weights e4m3 only (quantization/fp8.py); with data
 * parallelism batch_size is per replica, said. */
static void test_engine_formats(void **state)
{
	mp_error err;
	cJSON *doc;
	const cJSON *eng;

	(void)state;
	doc = plan_text(FMT_PLAN("nvfp4", "vllm", ""), &err);
	assert_non_null(doc);
	eng = cJSON_GetObjectItem(doc, "engine");
	assert_string_equal(cJSON_GetObjectItem(eng, "quantization")->valuestring, "modelopt_fp4");
	assert_string_equal(cJSON_GetObjectItem(eng, "quantization_from")->valuestring, "checkpoint");
	assert_non_null(strstr(cJSON_GetObjectItem(eng, "command")->valuestring, "<NVFP4 checkpoint of"));
	assert_non_null(strstr(cJSON_GetObjectItem(eng, "command")->valuestring, "--quantization modelopt_fp4"));
	assert_true(warns(doc, "placeholder"));
	cJSON_Delete(doc);
	doc = plan_text(FMT_PLAN("nvfp4", "sglang", ""), &err);
	assert_non_null(doc);
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "command")->valuestring,
			       "--quantization modelopt_fp4"));
	cJSON_Delete(doc);
	assert_null(plan_text(FMT_PLAN("nvfp4", "vllm", ",\"engine_version\":\"0.7\""), &err));
	assert_string_equal(err.field, "/weight_dtype");
	assert_non_null(strstr(err.message, "modelopt_fp4"));
	assert_null(plan_text(FMT_PLAN("mxfp4", "vllm", ""), &err));
	assert_string_equal(err.field, "/weight_dtype");
	assert_non_null(strstr(err.message, "MoE experts"));
	assert_null(plan_text(FMT_PLAN("mxfp4", "trtllm", ""), &err));
	assert_string_equal(err.field, "/weight_dtype");
	assert_null(plan_text(FMT_PLAN("fp8_e5m2", "sglang", ""), &err));
	assert_string_equal(err.field, "/weight_dtype");
	assert_non_null(strstr(err.message, "fp8_e4m3"));
	doc = plan_text(FMT_PLAN("fp8_e4m3", "vllm", ""), &err);
	assert_non_null(doc);
	assert_true(warns(doc, "--quantization fp8 quantises the base weights to fp8_e4m3"));
	cJSON_Delete(doc);
	doc = plan_text(FMT_PLAN("bf16", "vllm", ",\"num_gpus\":4,\"tensor_parallel_size\":2"), &err);
	assert_non_null(doc);
	assert_true(warns(doc, "batch_size 16 is per replica"));
	assert_true(warns(doc, "2 data-parallel replicas hold 32 sequences"));
	cJSON_Delete(doc);
	/* SGLang's share holds the fit (Llama-3.1-70B at TP 2 on H100s: 70.6 GB of weights a GPU, over
	 * mem_fraction_static 0.834 of it): the fit and the engine's own pool say the same (the fit said yes over the
	 * whole capacity, where SGLang's pool held 0 tokens and would not start); at TP 1 for Llama-3.1-8B the fit's 49
	 * sequences are within 2 of SGLang's 50.7 (the fit counts the activations inside the share) */
	doc = plan_text("{\"model\":\"llama-3.1-70b\",\"batch_size\":2,\"sequence_length\":4096,\"engine\":\"sglang\","
			"\"num_gpus\":2,\"device\":\"h100-sxm5-80gb\"}",
			&err);
	assert_non_null(doc);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "fit"), "fits")));
	assert_true(cJSON_IsFalse(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted"), "holds_batch")));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "request"), "gpu_memory_utilization_from")->valuestring,
			    "engine_default");
	assert_true(num(cJSON_GetObjectItem(doc, "request"), "gpu_memory_utilization") == 0.834);
	cJSON_Delete(doc);
	/* vLLM 0.33 prints the group-aware capacity, int(max_concurrency x max_model_len) (kv_cache_utils.py
	 * get_kv_cache_capacity), on one line: for Mistral-7B's 4096-token window at 32768 tokens that is far above
	 * 0.11's num_blocks // groups x block_size */
	doc = plan_text("{\"model\":\"mistral-7b-v0.1\",\"batch_size\":16,\"sequence_length\":32768,\"engine\":\"vllm\","
			"\"device\":\"h100-sxm5-80gb\",\"allow_beyond_max_position_embeddings\":true}",
			&err);
	assert_non_null(doc);
	{
		const cJSON *pr = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted");
		const cJSON *ll = cJSON_GetObjectItem(pr, "log_lines");
		char want[160], tok[32];

		assert_true(num(pr, "kv_cache_tokens") == floor(num(pr, "max_concurrency") * 32768));
		assert_true(num(pr, "kv_cache_tokens") > num(pr, "num_gpu_blocks") * 16);
		snprintf(tok, sizeof(tok), "%.0f", num(pr, "kv_cache_tokens"));
		assert_non_null(strstr(cJSON_GetArrayItem(ll, 0)->valuestring, "GiB memory"));
		snprintf(want, sizeof(want), ", Maximum concurrency for 32,768 tokens per request: %.2fx", num(pr, "max_concurrency"));
		assert_non_null(strstr(cJSON_GetArrayItem(ll, 2)->valuestring, want));
		assert_non_null(strstr(cJSON_GetArrayItem(ll, 2)->valuestring, "GPU KV cache size: "));
	}
	cJSON_Delete(doc);
	doc = plan_text(FMT_PLAN("bf16", "sglang", ""), &err);
	assert_non_null(doc);
	{
		double fit = num(cJSON_GetObjectItem(doc, "fit"), "max_batch_size");
		double pool = num(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted"), "max_concurrency");

		assert_true(fit <= pool && fit >= pool - 2);
	}
	cJSON_Delete(doc);
}

static double at(const cJSON *doc, const char *a, const char *b)
{
	return num(cJSON_GetObjectItem(doc, a), b);
}

/* The predicted figures follow from the plan's own bytes, recomputed here the engine's way. */
static void test_predicted_from_plan(void **state)
{
	cJSON *doc;
	const cJSON *pr;
	double cap, weights, act, ctx, row, tokens;

	(void)state;
	/* vLLM 0.33 (the newest line): ceil(total x 0.92) - (weights + RoPE cache 8192 x 128 x 2 + 64 MiB outside
	 * PyTorch + the profile's peak (its forward, or the sampler's 32 x 128,256 x (2 + 4 + 4 + 8) B when larger) +
	 * the CUDA-graph estimate: 276 MiB + 6 MiB x 11 capture sizes up to 64), // (16 x row) // 32 */
	doc = engine_plan("vllm", "");
	pr = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted");
	cap = at(doc, "fit", "capacity_bytes");
	weights = at(doc, "memory", "weights_bytes") + 8192.0 * 128 * 2;
	act = at(doc, "memory", "activations_bytes");
	if (act < 32.0 * 128256 * 18)
		act = 32.0 * 128256 * 18;
	act += 64.0 * 1048576 + (276.0 + 6 * 11) * 1048576;
	row = at(doc, "kv_cache", "bytes_per_token") / 32;
	assert_true(num(pr, "weights_bytes") == weights);
	assert_true(num(pr, "cuda_graph_bytes") == (276.0 + 6 * 11) * 1048576);
	assert_true(num(pr, "requested_memory_bytes") == ceil(cap * 0.92));
	assert_true(num(pr, "available_kv_cache_bytes") == ceil(cap * 0.92) - weights - act);
	assert_true(num(pr, "num_gpu_blocks") == floor(floor((ceil(cap * 0.92) - weights - act) / (16 * row)) / 32));
	assert_true(num(pr, "kv_cache_tokens") == num(pr, "num_gpu_blocks") * 16);
	assert_true(fabs(num(pr, "max_concurrency") - num(pr, "num_gpu_blocks") / 256) < 1e-12);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(pr, "holds_batch")));
	assert_true(at(doc, "request", "max_num_batched_tokens") == 8192); /* H100: >= 70 GiB, not an A100 */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "request"), "engine_version")->valuestring,
			    "0.33");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "command")->valuestring,
			    "vllm serve meta-llama/Meta-Llama-3-8B --tensor-parallel-size 1 --max-model-len 4096 "
			    "--max-num-seqs 32 --max-num-batched-tokens 8192 --gpu-memory-utilization 0.92 "
			    "--kv-cache-dtype auto --block-size 16 --dtype bfloat16");
	cJSON_Delete(doc);

	/* SGLang: free before the weights = total - CUDA context; pool = int((after - total x (1 - f)) 2^30 // cell),
	 * page size 1, f its rule for an H100 of 81,559 MiB: 0.835 */
	doc = engine_plan("sglang", "");
	pr = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted");
	cap = at(doc, "fit", "capacity_bytes");
	ctx = at(doc, "memory", "overhead_bytes");
	weights = at(doc, "memory", "weights_bytes") + 8192.0 * 128 * 2;
	assert_true(num(pr, "mem_fraction_static") == 0.835);
	{
		double total = (cap - ctx) / GIB, after = total - weights / GIB, rest = after - total * (1 - 0.835);

		tokens = floor(rest * GIB / at(doc, "kv_cache", "bytes_per_token"));
	}
	assert_true(num(pr, "max_total_num_tokens") == tokens);
	assert_true(num(pr, "k_size_bytes") == tokens * at(doc, "kv_cache", "bytes_per_token") / 2);
	assert_true(at(doc, "request", "kv_block_size") == 1);
	cJSON_Delete(doc);

	/* TensorRT-LLM: (total - (weights + activations + context)) x 0.9 // kv_size_per_token; blocks of 32 */
	doc = engine_plan("trtllm", "");
	pr = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "predicted");
	cap = at(doc, "fit", "capacity_bytes");
	tokens = floor((cap - (at(doc, "memory", "weights_bytes") + at(doc, "memory", "activations_bytes") +
			       at(doc, "memory", "overhead_bytes"))) *
		       0.9 / at(doc, "kv_cache", "bytes_per_token"));
	assert_true(num(pr, "max_tokens") == tokens);
	assert_true(num(pr, "blocks_in_primary_pool") == ceil(tokens / 32));
	assert_true(at(doc, "request", "kv_block_size") == 32);
	cJSON_Delete(doc);

	/* a request's own values win over the engine's defaults, and each argument says where it came from */
	doc = engine_plan("vllm", ",\"max_num_batched_tokens\":4096,\"gpu_memory_utilization\":0.85,\"kv_block_size\":32,"
				  "\"served_model\":\"/models/llama 3\"");
	assert_true(at(doc, "request", "max_num_batched_tokens") == 4096);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "request"), "max_num_batched_tokens_source")
				    ->valuestring,
			    "request");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "engine"), "command")->valuestring,
			    "vllm serve '/models/llama 3' --tensor-parallel-size 1 --max-model-len 4096 --max-num-seqs 32 "
			    "--max-num-batched-tokens 4096 --gpu-memory-utilization 0.85 --kv-cache-dtype auto "
			    "--block-size 32 --dtype bfloat16");
	cJSON_Delete(doc);
}

/* A check of an inline log text (not a data file) against plan p (owned). */
static cJSON *check_text(const char *engine, const char *text, cJSON *p)
{
	cJSON *body = cJSON_CreateObject(), *out = NULL;
	mps_engine_check_request *rq = calloc(1, sizeof(*rq));
	mps_engine_check *c = malloc(sizeof(*c));
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	mpc_out w;

	assert_non_null(rq);
	assert_non_null(c);
	cJSON_AddStringToObject(body, "engine", engine);
	cJSON_AddStringToObject(body, "log", text);
	cJSON_AddItemToObject(body, "plan", p);
	st = mpc_engine_check_decode(body, rq, &err);
	if (st == MP_OK)
		st = mps_engine_check_run(svc, rq, c, &err);
	if (st != MP_OK)
		fail_msg("%s at %s: %s", mp_status_str(st), err.field, err.message);
	mpc_out_init(&w);
	mpc_engine_check_write(&w, rq, c);
	out = mpc_out_parse(&w);
	assert_non_null(out);
	free(c);
	mpc_engine_check_request_release(rq);
	free(rq);
	cJSON_Delete(body);
	return out;
}

/* The H100 of vllm PR #10511 as CUDA reported it: 79.22 GiB. */
#define H100_7922 \
	"{\"name\":\"H100\",\"memory_bytes\":85899345920,\"usable_memory_bytes\":85061853676," \
	"\"memory_bandwidth_bytes_per_second\":3.35e12,\"peak_flops_per_second\":{\"bf16\":989e12}}"

/* vLLM 0.6.5's "Memory profiling results:" table (vllm PR #10511, Meta-Llama-3-8B on an H100): one figure a line,
 * read as the one-line forms are; the KV budget follows from the table's own terms: 71.29 - 14.96 - 1.79 - 1.26 =
 * 53.28 (53.29 printed, within the four roundings). memplan's weights are vLLM's (14.96 GiB). */
static void test_vllm_065_table(void **state)
{
	cJSON *p = plan("llama-3-8b", NULL, "bf16", "bf16", 256, 8192, H100_7922), *doc;
	const cJSON *f;

	(void)state;
	cJSON_AddStringToObject(p, "engine", "vllm");
	cJSON_AddStringToObject(p, "engine_version", "0.6");
	cJSON_AddFalseToObject(p, "chunked_prefill");
	doc = check_ok("vllm", "engines/vllm-10511-llama3-8b-h100-table.log", p);
	assert_int_equal(num(doc, "lines_read"), 9);
	assert_int_equal(num(doc, "lines_recognised"), 7);
	assert_true(num(figure(doc, "total_gpu_memory_gib", 0), "reported") == 79.22);
	assert_true(num(figure(doc, "memory_fraction", 0), "reported") == 0.9);
	assert_true(num(figure(doc, "requested_memory_gib", 0), "reported") == 71.29);
	assert_true(num(figure(doc, "non_torch_memory_gib", 0), "reported") == 1.79);
	assert_true(num(figure(doc, "activation_peak_gib", 0), "reported") == 1.26);
	f = figure(doc, "weights_loaded_gib", 0);
	assert_true(num(f, "reported") == 14.96);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f, "within_tolerance")));
	f = figure(doc, "available_kv_cache_gib", 0);
	assert_true(num(f, "reported") == 53.29);
	implied_holds(f, 53.29);
	/* memplan's 0.35 GiB outside PyTorch (0.6's context) against the 1.79 printed: the term that explains the gap */
	assert_non_null(strstr(cJSON_GetObjectItem(f, "explained_by")->valuestring, "non_torch_memory_gib (line 7)"));
	assert_true(fabs(num(f, "relative_difference")) < 0.05);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "plan"), "request"),
						"engine_version")->valuestring,
			    "0.6");
	cJSON_Delete(doc);
}

/* |predicted - printed| within half a unit of the printed figure's last digit (the figure's tolerance). */
static void predicted_within_rounding(const cJSON *f, double printed)
{
	assert_true(num(f, "reported") == printed);
	if (!(fabs(num(f, "predicted") - printed) <= num(f, "tolerance") + 1e-9))
		fail_msg("%s: predicted %.6g, printed %g (tolerance %g)", cJSON_GetObjectItem(f, "figure")->valuestring,
			 num(f, "predicted"), printed, num(f, "tolerance"));
}

/* vLLM 0.6.4's profile run as memplan models it (planner/engine.c v0_profile), against what vllm #10517 printed on
 * the RTX 3090 for Llama-3.1-8B at 20,000 and 29,000 tokens (no chunking: the profile's forward is the whole
 * length, over 256 dummy sequences): peak_torch_memory 17.06 and 17.98 GiB are the weights' 14.9888 GiB plus
 * 3 x 8,192 + 3 x 28,672 B a token (previous output, residual and normed attention output, gate_up's and
 * SiluAndMul's outputs), 24 B of int64 inputs a token and 8.125 MiB of cuBLAS workspace; then the KV cache, the
 * blocks and the tokens the engine printed. */
static void test_vllm_064_profile(void **state)
{
	static const struct {
		const char *log;
		double len, peak, kv;
		double blocks, tokens; /* 0: not printed */
	} runs[] = {
	    {"engines/vllm-10517-llama31-8b-rtx3090-20k.log", 20000, 17.06, 3.81, 1952, 0},
	    {"engines/vllm-10517-llama31-8b-rtx3090-29k.log", 29000, 17.98, 2.89, 1478, 23648},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		cJSON *p = plan("llama-3.1-8b", NULL, "bf16", "bf16", 256, runs[i].len, RTX3090), *doc;
		const cJSON *f;

		cJSON_AddStringToObject(p, "engine", "vllm");
		cJSON_AddStringToObject(p, "engine_version", "0.6");
		cJSON_AddFalseToObject(p, "chunked_prefill");
		doc = check_ok("vllm", runs[i].log, p);
		predicted_within_rounding(figure(doc, "peak_torch_memory_gib", 0), runs[i].peak);
		predicted_within_rounding(figure(doc, "non_torch_memory_gib", 0), 0.35);
		predicted_within_rounding(figure(doc, "available_kv_cache_gib", 0), runs[i].kv);
		/* the KV memory within its rounding leaves the blocks within one of the printed count */
		f = figure(doc, "num_gpu_blocks", 0);
		assert_true(fabs(num(f, "predicted") - runs[i].blocks) <= 1);
		if (runs[i].tokens)
			assert_true(num(figure(doc, "kv_cache_tokens", 0), "predicted") == runs[i].tokens);
		cJSON_Delete(doc);
	}
}

/* vLLM 0.6.5's table (vllm PR #10511, Meta-Llama-3-8B on an H100 at 8,192 tokens and 256 sequences): the
 * activation peak printed, 1.26 GiB, is the profile's sampler, not its forward (0.84 GiB): 256 logits over the
 * 128,256-token vocabulary, 2 B in bf16 plus 36 B at _apply_top_k_top_p's sort, with the final hidden states
 * (64 MiB) and sm90's 32 MiB cuBLAS workspace. */
static void test_vllm_v0_sampler_peak(void **state)
{
	cJSON *p = plan("llama-3-8b", NULL, "bf16", "bf16", 256, 8192, H100_7922), *doc;

	(void)state;
	cJSON_AddStringToObject(p, "engine", "vllm");
	cJSON_AddStringToObject(p, "engine_version", "0.6");
	cJSON_AddFalseToObject(p, "chunked_prefill");
	doc = check_ok("vllm", "engines/vllm-10511-llama3-8b-h100-table.log", p);
	predicted_within_rounding(figure(doc, "activation_peak_gib", 0), 1.26);
	cJSON_Delete(doc);
}

/* vllm #13061: DeepSeek-R1-Distill-Qwen-14B (Qwen2.5-14B's shape) on two RTX 4090s, TP 2, vLLM 0.7's V0 engine,
 * utilisation 0.98, 131,072 tokens (chunked prefill: 2,048-token forwards). One worker printed 13.9476 GiB of
 * weights: the shards (13.7557 GiB) and the RoPE cache (32 MiB), and 3.5 MiB a layer of torch's caching allocator
 * (qkv_proj's 35 MiB, o_proj's 25, gate_up's 135 and down_proj's 67.5 each take a segment rounded up to 2 MiB that
 * is not split: 14,980,245,504 B, 13.9514 GiB). The engine refused the length with 81,536 tokens, the smallest
 * worker's: the driver's, whose sampler (256 logits over 152,064 words at 38 B) is its profile's peak. */
static void test_vllm_07_tp2(void **state)
{
	cJSON *p = plan("qwen2.5-14b", NULL, "bf16", "bf16", 256, 131072, "rtx-4090-24gb"), *doc, *pr;
	const cJSON *f;

	(void)state;
	cJSON_AddStringToObject(p, "engine", "vllm");
	cJSON_AddStringToObject(p, "engine_version", "0.7");
	cJSON_AddNumberToObject(p, "num_gpus", 2);
	cJSON_AddNumberToObject(p, "gpu_memory_utilization", 0.98);
	cJSON_AddNumberToObject(p, "max_num_batched_tokens", 2048);
	doc = check_ok("vllm", "engines/vllm-13061-r1-qwen14b-2x4090-tp2.log", p);
	pr = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "plan"), "engine"), "predicted");
	assert_true(num(pr, "weights_bytes") == 14980245504.0);
	f = figure(doc, "weights_loaded_gib", 0);
	assert_true(num(f, "reported") == 13.9476);
	assert_true(fabs(num(f, "relative_difference")) < 0.001);
	f = figure(doc, "kv_cache_tokens", 0);
	assert_true(num(f, "reported") == 81536);
	/* the RTX 4090's memory as the preset has it (the log does not print it): within 5% of the engine's tokens */
	assert_true(fabs(num(f, "relative_difference")) < 0.05);
	assert_true(summary_true(doc, "engine_refused_max_model_len"));
	assert_false(summary_true(doc, "predicted_serves_max_model_len"));
	cJSON_Delete(doc);
}

/* The forms a pasted log takes: markdown emphasis around the figures, a long worker prefix before a refusal (past
 * what a figure's text keeps), vLLM 0.21's CUDA-graph lines, SGLang's MLA "KV size" line. */
static void test_log_forms(void **state)
{
	char text[1400], prefix[600];
	cJSON *doc, *p;
	const cJSON *f;

	(void)state;
	/* bold numbers, as a markdown paste of vllm #21348 shows them */
	p = plan("llama-3-8b", NULL, "bf16", "bf16", 32, 4096, "h100-sxm5-80gb");
	cJSON_AddStringToObject(p, "engine", "vllm");
	doc = check_text("vllm", "Available KV cache memory: **8.11** GiB\nGPU KV cache size: **178,880** tokens\n", p);
	assert_true(num(figure(doc, "available_kv_cache_gib", 0), "reported") == 8.11);
	assert_true(num(figure(doc, "kv_cache_tokens", 0), "reported") == 178880);
	cJSON_Delete(doc);
	/* a refusal behind 500 bytes of worker prefix is still the engine refusing max_model_len */
	memset(prefix, 'x', sizeof(prefix) - 1);
	prefix[sizeof(prefix) - 1] = '\0';
	memcpy(prefix, "(VllmWorker rank=0 pid=123) ", 28);
	snprintf(text, sizeof(text),
		 "%s ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can "
		 "be stored in KV cache (81536). Try increasing `gpu_memory_utilization`\n",
		 prefix);
	p = plan("llama-3-8b", NULL, "bf16", "bf16", 32, 4096, "h100-sxm5-80gb");
	cJSON_AddStringToObject(p, "engine", "vllm");
	doc = check_text("vllm", text, p);
	assert_true(num(figure(doc, "kv_cache_tokens", 0), "reported") == 81536);
	assert_true(summary_true(doc, "engine_refused_max_model_len"));
	cJSON_Delete(doc);
	/* vLLM 0.21 on: the CUDA-graph estimate and the kv_cache_memory breakdown (vllm PR #21489's log line) */
	p = plan("llama-3-8b", NULL, "bf16", "bf16", 32, 4096, "h100-sxm5-80gb");
	cJSON_AddStringToObject(p, "engine", "vllm");
	doc = check_text("vllm",
			 "(Worker_TP0 pid=447) INFO 08-14 14:07:22 [gpu_model_runner.py:6806] Estimated CUDA graph memory: "
			 "0.36 GiB total\n"
			 "Free memory on device (177.66/178.36 GiB) on startup. Desired GPU memory utilization is (0.9, "
			 "160.53 GiB). Actual usage is 8.58 GiB for weight, 9.96 GiB for peak activation, 0.07 GiB for "
			 "non-torch memory, and 0.65 GiB for CUDAGraph memory.\n",
			 p);
	f = figure(doc, "cuda_graph_gib", 0);
	assert_true(num(f, "reported") == 0.36);
	assert_true(fabs(num(f, "predicted") - (276.0 + 6 * 11) / 1024) < 1e-9);
	assert_true(num(figure(doc, "cuda_graph_gib", 1), "reported") == 0.65);
	assert_true(num(figure(doc, "weights_loaded_gib", 0), "reported") == 8.58);
	assert_true(num(figure(doc, "activation_peak_gib", 0), "reported") == 9.96);
	assert_true(num(figure(doc, "non_torch_memory_gib", 0), "reported") == 0.07);
	assert_true(num(figure(doc, "total_gpu_memory_gib", 0), "reported") == 178.36);
	assert_true(num(figure(doc, "requested_memory_gib", 0), "reported") == 160.53);
	cJSON_Delete(doc);
	/* SGLang's MLA pool: one latent "KV size" (DeepSeek-V2-Lite: 27 layers x (512 + 64) x 2 B = 31,104 B a token) */
	p = plan(NULL, NULL, "bf16", "bf16", 16, 4096, "h100-sxm5-80gb");
	cJSON_DeleteItemFromObject(p, "model");
	{
		char *cfg = ref_read("tests/ref/hf/configs/deepseek-v2-lite.json", NULL);
		cJSON *m = cJSON_AddObjectToObject(p, "model");

		assert_non_null(cfg);
		cJSON_AddItemToObject(m, "hf_config", cJSON_Parse(cfg));
		free(cfg);
	}
	cJSON_AddStringToObject(p, "engine", "sglang");
	doc = check_text("sglang", "KV Cache is allocated. #tokens: 1000000, KV size: 28.97 GB\n", p);
	f = figure(doc, "kv_cache_gib", 0);
	assert_true(num(f, "reported") == 28.97);
	implied_holds(f, 1000000.0 * 31104 / GIB);
	cJSON_Delete(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vllm_10517_20k),
		cmocka_unit_test(test_vllm_10517_29k),
		cmocka_unit_test(test_version_from_log),
		cmocka_unit_test(test_engine_formats),
		cmocka_unit_test(test_vllm_mla_block_size),
		cmocka_unit_test(test_engine_hybrid_defaults),
		cmocka_unit_test(test_vllm_064_profile),
		cmocka_unit_test(test_vllm_v0_sampler_peak),
		cmocka_unit_test(test_vllm_07_tp2),
		cmocka_unit_test(test_vllm_v07_budget),
		cmocka_unit_test(test_vllm_v1_qwen3_14b),
		cmocka_unit_test(test_vllm_25350),
		cmocka_unit_test(test_vllm_21348_tp4),
		cmocka_unit_test(test_sglang_21348),
		cmocka_unit_test(test_trtllm_1400),
		cmocka_unit_test(test_vllm_metrics),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_predicted_from_plan),
		cmocka_unit_test(test_vllm_065_table),
		cmocka_unit_test(test_log_forms),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
