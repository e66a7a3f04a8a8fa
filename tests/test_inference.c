/*
 * test_inference.c: the inference planner end to end. The golden cases of tests/data/inference_cases.json
 * (cases BR-01, BR-02, BR-05, BR-07, BR-17, BI-01, BI-03, BI-05 of tests/ref/cases/cases.md and more) run
 * twice, through the library (lib_answer: decode, service, encode) and over HTTP, and must give the same document; the H200
 * measurements of tests/ref/groundtruth/h200 (inference rows) are predicted within the tolerances;
 * weight-format layouts and the fit solver are checked against hand-worked figures.
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

#include "../model/model.h"
#include "../codec/mpc_json.h"
#include "http_util.h"
#include "lib_util.h"
#include "refs.h"

typedef http_fixture fixture; /* a daemon on 127.0.0.1 port 0 with a fresh database (http_util.h) */

static cJSON *data_json(const char *name)
{
	char path[256];
	size_t len;
	char *t;
	cJSON *doc;

	snprintf(path, sizeof(path), "tests/data/%s", name);
	t = ref_read(path, &len);
	if (t == NULL)
		fail_msg("cannot read %s (run from the worktree root)", path);
	doc = cJSON_Parse(t);
	free(t);
	if (doc == NULL)
		fail_msg("%s is not JSON", path);
	return doc;
}

/* Resolves a JSON pointer ("/memory/kv_cache_bytes"; no escapes needed here). */
static const cJSON *pointer(const cJSON *doc, const char *ptr)
{
	char key[96];

	while (doc && *ptr == '/') {
		const char *end = strchr(ptr + 1, '/');
		size_t n = end ? (size_t)(end - ptr - 1) : strlen(ptr + 1);

		if (n >= sizeof(key))
			return NULL;
		memcpy(key, ptr + 1, n);
		key[n] = '\0';
		doc = cJSON_GetObjectItemCaseSensitive(doc, key);
		ptr += n + 1;
	}
	return doc;
}

/* Runs body through the library and over HTTP; both results are returned (owned by the caller). */
typedef struct both {
	mp_status st;
	mp_error err;
	cJSON *lib;
	http_resp http;
} both;

static void run_both(fixture *f, const cJSON *body, both *b)
{
	char *text = cJSON_PrintUnformatted(body);

	memset(b, 0, sizeof(*b));
	{
		char *printed = NULL;

		b->st = lib_answer(f->d.svc, "inference", body, &printed, &b->err);
		b->lib = printed ? cJSON_Parse(printed) : NULL; /* as a client reads it */
		free(printed);
	}
	http_do(&f->d, "POST", "/v1/plan/inference", text, "application/json", NULL, &b->http);
	cJSON_free(text);
}

static void free_both(both *b)
{
	cJSON_Delete(b->lib);
	http_resp_free(&b->http);
}

static void test_golden_cases(void **state)
{
	fixture *f = *state;
	cJSON *doc = data_json("inference_cases.json"), *c;
	int n = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases"))
	{
		const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
		cJSON *body = cJSON_Duplicate(cJSON_GetObjectItem(c, "body"), true);
		const cJSON *cfg = cJSON_GetObjectItem(c, "config"), *status = cJSON_GetObjectItem(c, "status"), *e;
		both b;

		if (cJSON_IsString(cfg)) {
			cJSON *model = cJSON_CreateObject();

			cJSON_AddItemToObject(model, "hf_config", data_json(cfg->valuestring));
			cJSON_AddItemToObject(body, "model", model);
		}
		run_both(f, body, &b);
		if (status) {
			const char *field = cJSON_GetObjectItem(c, "field")->valuestring;
			const cJSON *contains = cJSON_GetObjectItem(c, "message_contains");

			if (b.st == MP_OK)
				fail_msg("%s: the library accepted it", id);
			if (strcmp(b.err.field, field) != 0)
				fail_msg("%s: library field %s, expected %s (%s)", id, b.err.field, field,
				         b.err.message);
			if (b.http.status != (long)status->valuedouble)
				fail_msg("%s: HTTP %ld, expected %.0f", id, b.http.status, status->valuedouble);
			if (strcmp(http_problem_field(&b.http), field) != 0)
				fail_msg("%s: HTTP field %s, expected %s", id, http_problem_field(&b.http), field);
			if (contains && !strstr(b.err.message, contains->valuestring))
				fail_msg("%s: message '%s' lacks '%s'", id, b.err.message, contains->valuestring);
		} else {
			if (b.st != MP_OK)
				fail_msg("%s: %s: %s", id, b.err.field, b.err.message);
			if (b.http.status != 200 || !cJSON_Compare(b.lib, b.http.json, true))
				fail_msg("%s: HTTP (%ld) and the library give different documents", id, b.http.status);
			cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "expect"))
			{
				const cJSON *got = pointer(b.lib, e->string);

				if (got == NULL || !cJSON_Compare(got, e, true)) {
					char *g = got ? cJSON_PrintUnformatted(got) : NULL,
					     *w = cJSON_PrintUnformatted(e);

					fail_msg("%s: %s is %s, expected %s", id, e->string, g ? g : "(absent)", w);
				}
			}
		}
		free_both(&b);
		cJSON_Delete(body);
		n++;
	}
	assert_true(n >= 40);
	cJSON_Delete(doc);
}

/*
 * tests/ref/groundtruth/h200/measurements.json, inference rows: transformers 5.17 forward, bf16, allocator
 * figures. weight_bytes and kv_plus_logits_bytes within 0.01 %, prefill_peak_over_start_bytes within 15 %
 * (the tolerances), for sdpa (fused) and eager; through the library and HTTP alike.
 */
static void test_groundtruth_h200(void **state)
{
	fixture *f = *state;
	cJSON *gt = ref_json("groundtruth/h200/measurements.json"), *r;
	int n = 0;

	cJSON_ArrayForEach(r, cJSON_GetObjectItem(gt, "inference"))
	{
		const char *model = cJSON_GetObjectItem(r, "model")->valuestring;
		cJSON *body = cJSON_CreateObject(), *m = cJSON_CreateObject(), *cfg;
		both b;
		static const char *const keys[3][2] = {
		    {"weight_bytes", "/memory/weights_bytes"},
		    {"kv_plus_logits_bytes", "/memory/kv_plus_logits_bytes"},
		    {"prefill_peak_over_start_bytes", "/memory/prefill_peak_over_start_bytes"}};

		if (strcmp(model, "qwen2.5-0.5b") == 0) {
			cfg = data_json("qwen2.5-0.5b.json"); /* not in tests/ref/models: the public config */
		} else {
			char rel[96];

			snprintf(rel, sizeof(rel), "models/%s.json", model);
			cfg = ref_json(rel);
		}
		/* the llama-3-8b rows are a truncation to `layers` layers */
		if (cJSON_GetObjectItem(cfg, "num_hidden_layers"))
			cJSON_ReplaceItemInObject(cfg, "num_hidden_layers",
			                          cJSON_CreateNumber(cJSON_GetObjectItem(r, "layers")->valuedouble));
		else /* gpt2 names it n_layer, and its rows use the whole model */
			assert_true(cJSON_GetObjectItem(cfg, "n_layer")->valuedouble ==
			            cJSON_GetObjectItem(r, "layers")->valuedouble);
		cJSON_AddItemToObject(m, "hf_config", cfg);
		cJSON_AddItemToObject(body, "model", m);
		cJSON_AddStringToObject(body, "weight_dtype", "bf16");
		cJSON_AddStringToObject(body, "kv_cache_dtype", "bf16");
		cJSON_AddNumberToObject(body, "batch_size", cJSON_GetObjectItem(r, "batch")->valuedouble);
		cJSON_AddNumberToObject(body, "sequence_length", cJSON_GetObjectItem(r, "seq")->valuedouble);
		cJSON_AddStringToObject(body, "attention_implementation",
		                        strcmp(cJSON_GetObjectItem(r, "attn")->valuestring, "eager") == 0 ? "eager"
		                                                                                          : "fused");
		cJSON_AddStringToObject(body, "weight_layout", "pytorch"); /* each tensor rounded to 512 B */
		cJSON_AddNumberToObject(body, "kv_block_size", 1);         /* DynamicCache: contiguous */
		/* transformers' forward takes the whole batch at once (the plan's default is vLLM's chunk) */
		cJSON_AddNumberToObject(body, "max_num_batched_tokens", cJSON_GetObjectItem(r, "batch")->valuedouble *
		                                                            cJSON_GetObjectItem(r, "seq")->valuedouble);
		run_both(f, body, &b);
		if (b.st != MP_OK)
			fail_msg("%s: %s: %s", model, b.err.field, b.err.message);
		assert_int_equal(b.http.status, 200);
		assert_true(cJSON_Compare(b.lib, b.http.json, true));
		for (int k = 0; k < 3; k++) {
			double want = cJSON_GetObjectItem(r, keys[k][0])->valuedouble;
			double got = pointer(b.lib, keys[k][1])->valuedouble;

			printf("  %-13s %-5s b%-3.0f s%-5.0f %-30s predicted %13.0f measured %13.0f (%+.4f%%)\n", model,
			       cJSON_GetObjectItem(r, "attn")->valuestring,
			       cJSON_GetObjectItem(r, "batch")->valuedouble, cJSON_GetObjectItem(r, "seq")->valuedouble,
			       keys[k][0], got, want, 100.0 * (got - want) / want);
			if (!ref_close(got, want, k < 2 ? 1e-4 : 0.15))
				fail_msg("%s %s: predicted %.0f, measured %.0f", model, keys[k][0], got, want);
		}
		free_both(&b);
		cJSON_Delete(body);
		n++;
	}
	assert_int_equal(n, 11);
	cJSON_Delete(gt);
}

/* Weight layouts per format, worked by hand for Llama-3-8B's MLP (32 layers of gate and up [14336 x 4096]
 * and down [4096 x 14336]). */
static void test_weight_formats(void **state)
{
	cJSON *cfg = ref_json("models/llama-3-8b.json");
	mp_model m;
	mp_weights w;
	mp_weight_formats f;
	mp_error err = MP_ERROR_INIT;
	const uint64_t n = UINT64_C(14336) * 4096;

	(void)state;
	assert_int_equal(mpm_from_hf(cfg, "/model/hf_config", &m, &err), MP_OK);
	memset(&f, 0, sizeof(f));
	/* fp8: one byte a weight and one fp32 per-tensor scale */
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_FP8_E4M3, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, 32 * 3 * (n + 4));
	assert_int_equal(w.cls[MP_TC_EMBEDDINGS].format, MP_DTYPE_BF16); /* not quantised by default */
	/* int8 per channel: + one fp32 scale per output row */
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_INT8, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, 32 * (3 * n + 2 * 14336 * 4 + 4096 * 4));
	/* GPTQ, group 128: qweight n/2; qzeros groups x rows/8 x 4; scales groups x rows x 2; g_idx cols x 4 */
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_INT4, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, 32 * (2 * (n / 2 + 32 * 1792 * 4 + 32 * 14336 * 2 + 4096 * 4) +
	                                               (n / 2 + 112 * 512 * 4 + 112 * 4096 * 2 + 14336 * 4)));
	assert_int_equal(w.cls[MP_TC_MLP].bytes, UINT64_C(2931556352));
	f.int4_scheme = MP_INT4_AWQ; /* no g_idx */
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_INT4, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, UINT64_C(2931556352) - 32 * (2 * 4096 * 4 + 14336 * 4));
	/* nf4, double quantisation: n/2 + 16 fp32 code + uint8 absmax per 64 + fp32 per 256 blocks + offset + 256
	 * fp32 nested code */
	f.int4_scheme = MP_INT4_GPTQ;
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_NF4, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, 32 * 3 * (n / 2 + 64 + n / 64 + n / 64 / 256 * 4 + 4 + 1024));
	f.nf4_no_double_quant = true; /* fp32 absmax per 64 values: 0.5 bit per weight */
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_NF4, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, 32 * 3 * (n / 2 + 64 + n / 64 * 4));
	/* GGUF q4_K: 144 B per 256 values of a row */
	memset(&f, 0, sizeof(f));
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_Q4_K, MP_DTYPE_BF16, &f, 1, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, 32 * 3 * (n / 256 * 144));
	assert_int_equal(w.cls[MP_TC_NORMS].format, MP_DTYPE_FP32);
	/* tensor parallel 4: q, gate, up by rows, o, down by columns, k/v by KV head; norms replicated */
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_BF16, MP_DTYPE_BF16, &f, 4, &w, &err), MP_OK);
	assert_int_equal(w.cls[MP_TC_MLP].bytes, 32 * 3 * n * 2 / 4);
	assert_int_equal(w.cls[MP_TC_NORMS].bytes, UINT64_C(266240) * 2);
	/* a quantised norm is refused, naming the class */
	f.cls[MP_TC_NORMS] = MP_DTYPE_Q8_0;
	assert_int_equal(mp_weight_bytes(&m, MP_DTYPE_BF16, MP_DTYPE_BF16, &f, 1, &w, &err), MP_EINVAL);
	assert_string_equal(err.field, "/weight_formats/norms");
	cJSON_Delete(cfg);
}

/* The fit solver on the H200 preset: budget, headroom, the largest batch and length, the smallest GPU count. */
static void test_fit_solver(void **state)
{
	fixture *f = *state;
	cJSON *body = cJSON_Parse("{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
	                          "\"batch_size\":8,\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\","
	                          "\"gpu_memory_utilization\":0.9}");
	const double capacity = 150109880320.0;
	both b;
	cJSON *fit;
	double maxb, maxs;

	run_both(f, body, &b);
	assert_int_equal(b.st, MP_OK);
	assert_true(cJSON_Compare(b.lib, b.http.json, true));
	fit = cJSON_GetObjectItem(b.lib, "fit");
	assert_true(pointer(fit, "/capacity_bytes")->valuedouble == capacity);
	assert_true(pointer(fit, "/budget_bytes")->valuedouble == (double)(uint64_t)(capacity * 0.9));
	assert_true(pointer(fit, "/headroom_bytes")->valuedouble ==
	            pointer(fit, "/budget_bytes")->valuedouble - pointer(b.lib, "/memory/total_bytes")->valuedouble);
	assert_true(cJSON_IsTrue(pointer(fit, "/fits")));
	assert_true(pointer(fit, "/min_gpus")->valuedouble == 1);
	maxb = pointer(fit, "/max_batch_size")->valuedouble;
	maxs = pointer(fit, "/max_sequence_length")->valuedouble;
	assert_true(maxs == 8192); /* the model's context, memory allowing far more */
	free_both(&b);

	/* max_batch_size fits, one more does not */
	cJSON_ReplaceItemInObject(body, "batch_size", cJSON_CreateNumber(maxb));
	run_both(f, body, &b);
	assert_true(cJSON_IsTrue(pointer(b.lib, "/fit/fits")));
	free_both(&b);
	cJSON_ReplaceItemInObject(body, "batch_size", cJSON_CreateNumber(maxb + 1));
	run_both(f, body, &b);
	assert_false(cJSON_IsTrue(pointer(b.lib, "/fit/fits")));
	assert_true(pointer(b.lib, "/fit/headroom_bytes")->valuedouble < 0);
	assert_string_equal(pointer(b.lib, "/fit/binding_term")->valuestring, "kv_cache");
	free_both(&b);
	cJSON_Delete(body);

	/* Llama-3.1-70B bf16 does not fit one H100 (141 GB of weights): the smallest count is 2 */
	body = cJSON_Parse("{\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,"
	                   "\"sequence_length\":4096,\"device\":\"h100-sxm5-80gb\"}");
	{
		cJSON *m = cJSON_CreateObject();

		cJSON_AddItemToObject(m, "hf_config", data_json("llama-3.1-70b.json"));
		cJSON_AddItemToObject(body, "model", m);
	}
	run_both(f, body, &b);
	assert_int_equal(b.st, MP_OK);
	assert_false(cJSON_IsTrue(pointer(b.lib, "/fit/fits")));
	assert_true(pointer(b.lib, "/fit/min_gpus")->valuedouble == 2);
	assert_true(pointer(b.lib, "/fit/max_batch_size")->valuedouble == 0);
	free_both(&b);
	cJSON_AddNumberToObject(body, "tensor_parallel_size", 2);
	run_both(f, body, &b);
	assert_true(cJSON_IsTrue(pointer(b.lib, "/fit/fits")));
	free_both(&b);
	cJSON_Delete(body);
}

/* The CLI builds the same request from --name value pairs and prints the API's document with --json. */
static void test_cli(void **state)
{
	const char *bin = getenv("MEMPLAN_BIN");
	char cmd[512], dir[] = "/tmp/memplan-cli-XXXXXX";
	FILE *p;
	char buf[65536];
	size_t n;
	cJSON *doc;

	(void)state;
	if (bin == NULL)
		bin = "build/memplan";
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
	         "%s plan inference --model llama-3-8b --weight-dtype q8_0 --kv_cache_dtype fp16 --batch_size 4 "
	         "--sequence_length 4096 --weight_formats.norms fp32 --json --db %s/m.db",
	         bin, dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	assert_int_equal(pclose(p), 0);
	doc = cJSON_Parse(buf);
	assert_non_null(doc);
	assert_true(pointer(doc, "/memory/weights_bytes")->valuedouble == 8532934656.0);  /* BR-07 B */
	assert_true(pointer(doc, "/memory/kv_cache_bytes")->valuedouble == 2147483648.0); /* BR-17 1 */
	cJSON_Delete(doc);
	/* the readable breakdown labels GB and GiB */
	snprintf(cmd, sizeof(cmd),
	         "%s plan inference --model llama-3-8b --weight_dtype bf16 --kv_cache_dtype bf16 --batch_size 1 "
	         "--sequence_length 4096 --db %s/m.db",
	         bin, dir);
	p = popen(cmd, "r");
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	assert_int_equal(pclose(p), 0);
	assert_non_null(strstr(buf, "memory per GPU                      bytes         GB        GiB   share\n"
				    "  weights                  16,060,522,496       16.1       15.0   92.3%\n")); /* of 17,394,130,944 B: vLLM's 2048-token chunk */
	assert_non_null(strstr(buf, "GB = 1e9 bytes, GiB = 2^30 bytes."));
	/* D12: the readable output rounds figures for humans (3 significant digits); --json keeps them all */
	snprintf(cmd, sizeof(cmd),
	         "%s plan inference --model llama-3-8b --weight_dtype int4 --kv_cache_dtype bf16 --batch_size 1 "
	         "--sequence_length 4096 --verbose --db %s/m.db",
	         bin, dir);
	p = popen(cmd, "r");
	n = fread(buf, 1, sizeof(buf) - 1, p);
	buf[n] = '\0';
	assert_int_equal(pclose(p), 0);
	{
		const char *at = strstr(buf, "bits_per_parameter: ");
		char text[32];
		double shown, exact;

		assert_non_null(at);
		at += strlen("bits_per_parameter: ");
		snprintf(text, sizeof(text), "%.*s", (int)strcspn(at, "\n"), at);
		assert_true(strlen(text) <= 4); /* e.g. 5.71, never 5.7109375000000004 */
		shown = strtod(text, NULL);
		snprintf(cmd, sizeof(cmd),
		         "%s plan inference --model llama-3-8b --weight_dtype int4 --kv_cache_dtype bf16 --batch_size 1 "
		         "--sequence_length 4096 --json --db %s/m.db",
		         bin, dir);
		p = popen(cmd, "r");
		n = fread(buf, 1, sizeof(buf) - 1, p);
		buf[n] = '\0';
		assert_int_equal(pclose(p), 0);
		doc = cJSON_Parse(buf);
		assert_non_null(doc);
		exact = pointer(doc, "/weights/bits_per_parameter")->valuedouble;
		assert_true(exact != shown && fabs(shown - exact) <= 5e-3 * exact);
		cJSON_Delete(doc);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}


/* DeepSeek-V4's cache at more lengths (tests/ref/hf/deepseek_v4_cache.json, tools/groundtruth/deepseek_v4_cache.py):
 * a tiny copy with a layer of each kind (sliding, HCA at rate 16, CSA at rate 4, HCA) run in one prefill and as a
 * prefill then decode steps, on both sides of the rates and of the 8-token window: kv_cache_bytes is the engine_bytes
 * of every run (transformers' layout; the keys over min(tokens, window)) through the library and over HTTP, and the
 * answer warns that the layout is transformers'. */
static void test_deepseek_v4_cache_lengths(void **state)
{
	fixture *f = *state;
	cJSON *doc = ref_json("hf/deepseek_v4_cache.json"), *run;
	const cJSON *tiny = cJSON_GetObjectItem(doc, "tiny_config");
	int n = 0, decoded = 0;

	assert_non_null(tiny);
	cJSON_ArrayForEach(run, cJSON_GetObjectItem(doc, "runs"))
	{
		cJSON *body = cJSON_CreateObject(), *model = cJSON_AddObjectToObject(body, "model");
		double want = cJSON_GetObjectItem(run, "engine_bytes")->valuedouble;
		const cJSON *got, *wv;
		bool warned = false;
		both b;

		cJSON_AddItemToObject(model, "hf_config", cJSON_Duplicate(tiny, true));
		cJSON_AddStringToObject(body, "weight_dtype", "bf16");
		cJSON_AddStringToObject(body, "kv_cache_dtype", "bf16");
		cJSON_AddNumberToObject(body, "batch_size", cJSON_GetObjectItem(run, "batch_size")->valuedouble);
		cJSON_AddNumberToObject(body, "sequence_length", cJSON_GetObjectItem(run, "tokens")->valuedouble);
		cJSON_AddNumberToObject(body, "kv_block_size", 1);
		run_both(f, body, &b);
		if (b.st != MP_OK)
			fail_msg("deepseek_v4: %s: %s", b.err.field, b.err.message);
		if (b.http.status != 200 || !cJSON_Compare(b.lib, b.http.json, true))
			fail_msg("deepseek_v4: HTTP (%ld) and the library give different documents", b.http.status);
		got = pointer(b.lib, "/memory/kv_cache_bytes");
		if (got == NULL || got->valuedouble != want)
			fail_msg("deepseek_v4 at %.0f tokens: kv_cache_bytes %.0f, transformers %.0f",
			         cJSON_GetObjectItem(run, "tokens")->valuedouble, got ? got->valuedouble : -1.0, want);
		cJSON_ArrayForEach(wv, cJSON_GetObjectItem(b.lib, "warnings"))
			warned |= cJSON_IsString(wv) && strstr(wv->valuestring, "follows transformers 5.24's layout") != NULL;
		assert_true(warned);
		decoded += cJSON_GetArraySize(cJSON_GetObjectItem(run, "steps")) > 1;
		free_both(&b);
		cJSON_Delete(body);
		n++;
	}
	assert_int_equal(n, 8);
	assert_int_equal(decoded, 2);
	cJSON_Delete(doc);
}

/* Every tiny copy of tests/ref/hf/groundtruth.json (transformers ran it on the CPU with use_cache=True, batch 2, at
 * a length below and one above its 8-token windows) whose model_type memplan reads: the plan's kv_cache_bytes is
 * what the engine layout holds (the generator's engine_bytes: windows of min(tokens, window), conv states of
 * conv_kernel - 1, every other tensor as transformers keeps it, recurrent states included), through the library
 * and over HTTP alike. */
static void test_groundtruth_cache(void **state)
{
	fixture *f = *state;
	cJSON *doc = ref_json("hf/groundtruth.json"), *c;
	int n = 0, recurrent = 0;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(doc, "cases"))
	{
		const cJSON *tiny = cJSON_GetObjectItem(c, "tiny_config"), *run;
		mp_model m;
		mp_error err = MP_ERROR_INIT;

		if (tiny == NULL || mpm_from_hf(tiny, "/model/hf_config", &m, &err) == MP_EUNSUPPORTED)
			continue;
		cJSON_ArrayForEach(run, cJSON_GetObjectItem(c, "cache"))
		{
			cJSON *body = cJSON_CreateObject(), *model = cJSON_AddObjectToObject(body, "model");
			double want = cJSON_GetObjectItem(run, "engine_bytes")->valuedouble;
			const cJSON *got;
			both b;

			cJSON_AddItemToObject(model, "hf_config", cJSON_Duplicate(tiny, true));
			cJSON_AddStringToObject(body, "weight_dtype", "bf16");
			cJSON_AddStringToObject(body, "kv_cache_dtype", "bf16");
			cJSON_AddNumberToObject(body, "batch_size", cJSON_GetObjectItem(run, "batch_size")->valuedouble);
			cJSON_AddNumberToObject(body, "sequence_length", cJSON_GetObjectItem(run, "tokens")->valuedouble);
			cJSON_AddNumberToObject(body, "kv_block_size", 1);
			run_both(f, body, &b);
			if (b.st != MP_OK)
				fail_msg("%s: %s: %s", c->string, b.err.field, b.err.message);
			if (b.http.status != 200 || !cJSON_Compare(b.lib, b.http.json, true))
				fail_msg("%s: HTTP (%ld) and the library give different documents", c->string,
				         b.http.status);
			got = pointer(b.lib, "/memory/kv_cache_bytes");
			if (got == NULL || got->valuedouble != want)
				fail_msg("%s at %.0f tokens: kv_cache_bytes %.0f, transformers (engine layout) %.0f",
				         c->string, cJSON_GetObjectItem(run, "tokens")->valuedouble,
				         got ? got->valuedouble : -1.0, want);
			recurrent += pointer(b.lib, "/kv_cache/recurrent_layers") != NULL;
			free_both(&b);
			cJSON_Delete(body);
			n++;
		}
	}
	if (n < 90 || recurrent < 6)
		fail_msg("only %d tiny runs checked (%d with recurrent state)", n, recurrent);
	cJSON_Delete(doc);
}

/* kv_cache_bytes of the variant's config at one of its runs, in one cache layout ("engine" or "transformers"),
 * through the library (and over HTTP too, with the same document, when http); -1 when refused (printed). */
static double variant_kv_bytes(fixture *f, const cJSON *v, const cJSON *run, const char *layout, bool http)
{
	cJSON *body = cJSON_CreateObject(), *model = cJSON_AddObjectToObject(body, "model"), *lib = NULL;
	const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(v, "name"));
	const cJSON *got;
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	double bytes;

	cJSON_AddItemToObject(model, "hf_config", cJSON_Duplicate(cJSON_GetObjectItem(v, "config"), true));
	cJSON_AddStringToObject(body, "weight_dtype", "bf16");
	cJSON_AddStringToObject(body, "kv_cache_dtype", "bf16");
	cJSON_AddNumberToObject(body, "batch_size", cJSON_GetObjectItem(run, "batch_size")->valuedouble);
	cJSON_AddNumberToObject(body, "sequence_length", cJSON_GetObjectItem(run, "tokens")->valuedouble);
	cJSON_AddNumberToObject(body, "kv_block_size", 1);
	cJSON_AddStringToObject(body, "cache_layout", layout);
	if (http) {
		both b;

		run_both(f, body, &b);
		if (b.st == MP_OK && (b.http.status != 200 || !cJSON_Compare(b.lib, b.http.json, true)))
			fail_msg("%s: HTTP (%ld) and the library give different documents", name, b.http.status);
		st = b.st;
		err = b.err;
		lib = b.lib;
		b.lib = NULL;
		free_both(&b);
	} else {
		char *printed = NULL;

		st = lib_answer(f->d.svc, "inference", body, &printed, &err);
		lib = printed ? cJSON_Parse(printed) : NULL;
		free(printed);
	}
	got = st == MP_OK ? pointer(lib, "/memory/kv_cache_bytes") : NULL;
	if (st != MP_OK)
		fprintf(stderr, "%s: %s: %s\n", name, err.field, err.message);
	bytes = got ? got->valuedouble : -1.0;
	cJSON_Delete(lib);
	cJSON_Delete(body);
	return bytes;
}

/*
 * Every variant of tests/ref/hf/variants (tools/groundtruth/variants.py: random valid configs of every type memplan
 * reads, each run by transformers 5.24 on the CPU in bf16 with batch 2 at 5 and 24 tokens): memory.kv_cache_bytes of a
 * plan of the same config, batch and length equals the bytes of transformers' cache in the engine layout
 * (engine_bytes: the default cache_layout), and with cache_layout transformers the bytes transformers' cache holds
 * (transformers_bytes), through the library; the first variant of each type over HTTP too, with the same document.
 */
static void test_variant_cache(void **state)
{
	fixture *f = *state;
	cJSON *dir = ref_json_dir("hf/variants"), *doc;
	int runs = 0, exact = 0, variants = 0, variants_exact = 0;
	char failed[8192] = "";

	cJSON_ArrayForEach(doc, dir)
	{
		const cJSON *v;
		int n = 0, ok = 0;

		cJSON_ArrayForEach(v, cJSON_GetObjectItem(doc, "variants"))
		{
			const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(v, "name"));
			const cJSON *run;
			bool all = true;

			cJSON_ArrayForEach(run, cJSON_GetObjectItem(v, "cache"))
			{
				static const char *const layouts[2] = {"engine", "transformers"}, *const members[2] = {
				    "engine_bytes", "transformers_bytes"};

				for (int l = 0; l < 2; l++) {
					double want = cJSON_GetObjectItem(run, members[l])->valuedouble;
					double got = variant_kv_bytes(f, v, run, layouts[l], n == 0 && l == 0);

					runs++;
					if (got == want) {
						exact++;
						continue;
					}
					all = false;
					if (got >= 0)
						fprintf(stderr, "%s at %.0f tokens, cache_layout %s: kv_cache_bytes %.0f, transformers %.0f\n",
						        name, cJSON_GetObjectItem(run, "tokens")->valuedouble, layouts[l], got, want);
				}
			}
			n++;
			ok += all;
			if (!all)
				mp_list_add(failed, sizeof(failed), name);
		}
		print_message("  %-20s %2d of %2d variants exact on cache bytes (both layouts)\n", doc->string, ok, n);
		variants += n;
		variants_exact += ok;
	}
	print_message("%d of %d variants (%d of %d runs x layouts) exact on cache bytes%s%s\n", variants_exact, variants,
	              exact, runs, failed[0] ? "; not: " : "", failed);
	cJSON_Delete(dir);
	assert_int_equal(exact, runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden_cases),
	    cmocka_unit_test(test_groundtruth_h200),
	    cmocka_unit_test(test_weight_formats),
	    cmocka_unit_test(test_fit_solver),
	    cmocka_unit_test(test_cli),
	    cmocka_unit_test(test_groundtruth_cache),
	    cmocka_unit_test(test_variant_cache),
	    cmocka_unit_test(test_deepseek_v4_cache_lengths),
	};

	return cmocka_run_group_tests_name("inference", tests, http_fixture_setup, http_fixture_teardown);
}
