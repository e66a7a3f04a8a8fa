/*
 * test_pipeline.c: the answers as library calls, decode (codec/) -> service -> encode (codec/), with a store of the
 * presets: their failure paths and their text for people.
 * - Allocation failure injection, as curl's torture tests and SQLite's fault simulation do it: every allocation of
 *   memplan's own code (malloc, calloc and realloc are wrapped at link time: -Wl,--wrap) and of cJSON (through its
 *   hooks, codec/mpc_json.h) is counted, and the run is repeated with the 1st, 2nd, ... Nth allocation failing until a
 *   run needs no more. Each run must end in MP_ENOMEM or in the very answer of a run without failures: never a
 *   crash, never another error, never a partial document (under `make asan`, never a leak).
 * - The plan and fit answers as text, from real plans of the presets.
 * codec/'s own contracts, which need no store, are tests/test_codec.c's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdbool.h>

#include <cmocka.h>

#include "../codec/codec.h"
#include "lib_util.h"
#include "refs.h"

/* ----- the injecting allocator ------------------------------------------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);

static long fail_at = -1;	/* the allocation (0-based) that fails; -1 = none */
static long counted;		/* allocations since the counter was reset */
static int armed;		/* count and inject only while a case runs */

static int should_fail(void)
{
	if (!armed)
		return 0;
	return counted++ == fail_at;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}

static mps_service *svc;
static char dir[] = "/tmp/memplan-pipeline-XXXXXX";

static int setup(void **state)
{
	char path[64];
	mp_error err = MP_ERROR_INIT;

	(void)state;
	mpc_json_init(NULL); /* cJSON's allocations through malloc (wrapped here), failures counted */
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

/* The answer's text, or NULL with *st. */
static char *answer(const char *kind, const char *body_text, mp_status *st, mp_error *err)
{
	cJSON *body = cJSON_Parse(body_text);
	char *text = NULL;

	if (body == NULL) {
		*st = MP_ENOMEM; /* the parse itself ran out */
		return NULL;
	}
	*st = lib_answer(svc, kind, body, &text, err);
	cJSON_Delete(body);
	return text;
}

static void torture(const char *kind, const char *body)
{
	mp_error err = MP_ERROR_INIT;
	mp_status st;
	char *want = answer(kind, body, &st, &err);
	long n;

	assert_int_equal(st, MP_OK);
	assert_non_null(want);
	for (n = 0;; n++) {
		char *got;

		counted = 0;
		fail_at = n;
		armed = 1;
		memset(&err, 0, sizeof(err));
		got = answer(kind, body, &st, &err);
		armed = 0;
		if (counted <= n) { /* this run needed fewer allocations: nothing failed */
			assert_int_equal(st, MP_OK);
			assert_string_equal(got, want);
			free(got);
			break;
		}
		if (st == MP_OK) {
			if (got == NULL || strcmp(got, want) != 0)
				fail_msg("%s: allocation %ld failed and the answer differs from a run without failures", kind,
					 n);
		} else if (st != MP_ENOMEM) {
			fail_msg("%s: allocation %ld failed and the answer was %s at %s (%s), not out of memory", kind, n,
				 mp_status_str(st), err.field, err.message);
		}
		free(got);
	}
	print_message("%s: %ld allocations, each made to fail in turn\n", kind, n);
	assert_true(n > 10);
	free(want);
}

static void test_inference_under_failures(void **state)
{
	(void)state;
	torture("inference", "{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
			     "\"batch_size\":1,\"sequence_length\":4096,\"device\":\"h200-sxm-141gb\"}");
	torture("inference", "{\"model\":{\"hf_config\":{\"model_type\":\"mixtral\"}},\"weight_dtype\":\"q4_0\","
			     "\"kv_cache_dtype\":\"fp8\",\"batch_size\":4,\"sequence_length\":8192,"
			     "\"tensor_parallel_size\":2,\"device\":\"h100-sxm5-80gb\"}");
}

static void test_training_under_failures(void **state)
{
	(void)state;
	torture("training", "{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
			    "\"micro_batch_size\":1,\"sequence_length\":4096,\"num_gpus\":8,\"sharding\":\"zero1\","
			    "\"device\":\"h200-sxm-141gb\"}");
}

static void test_fit_and_roofline_under_failures(void **state)
{
	(void)state;
	torture("fit", "{\"jobs\":[{\"id\":\"chat\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\","
		       "\"kv_cache_dtype\":\"bf16\",\"batch_size\":32,\"sequence_length\":8192}},{\"id\":\"tune\","
		       "\"training\":{\"model\":\"llama-3.1-8b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
		       "\"micro_batch_size\":1,\"sequence_length\":4096}}],\"devices\":[\"h100-sxm5-80gb\","
		       "\"h200-sxm-141gb\"],\"gpu_counts\":[1,2,4,8]}");
	torture("roofline", "{\"device\":\"h200-sxm-141gb\",\"ops\":[{\"op\":\"matmul\",\"m\":1,\"k\":4096,\"n\":4096,"
			    "\"dtype\":\"bf16\"}],\"transformer\":{\"model\":\"llama-3-8b\",\"batch_size\":8}}");
}

/* The inference plan of a body, planned by the service (the caller frees both). */
static mps_inference_plan *inference_plan(const char *body_text, mps_inference_request **rq)
{
	cJSON *body = cJSON_Parse(body_text);
	mps_inference_plan *p = malloc(sizeof(*p));
	mp_error err = MP_ERROR_INIT;

	*rq = malloc(sizeof(**rq));
	assert_non_null(body);
	assert_non_null(p);
	assert_non_null(*rq);
	if (mpc_inference_decode(body, "", true, *rq, &err) != MP_OK || mps_plan_inference(svc, *rq, p, &err) != MP_OK)
		fail_msg("%s: %s", err.field, err.message);
	cJSON_Delete(body);
	return p;
}

/* The plan text leads with the answer, rendered from the plan's structs as the JSON answer is. */
static void test_plan_text(void **state)
{
	mps_inference_request *rq;
	mps_inference_plan *p = inference_plan("{\"model\":\"llama-3-8b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":"
					       "\"bf16\",\"batch_size\":1,\"sequence_length\":4096,\"device\":"
					       "\"h200-sxm-141gb\"}", &rq);
	char *t = mpc_inference_plan_text(rq, p, false, "HINT"), *first_nl;

	(void)state;
	assert_non_null(t);
	first_nl = strchr(t, '\n');
	assert_non_null(first_nl);
	/* line 1: what and where; line 2: the verdict, total against the budget (GB and GiB), headroom */
	assert_true(strncmp(t, "Inference plan: llama-3-8b (llama, 8,030,261,248 parameters (8.03 billion)) on "
			       "h200-sxm-141gb\n", (size_t)(first_nl - t) + 1) == 0);
	assert_true(strncmp(first_nl + 1, "FITS: 17.6 GB (16.4 GiB) per GPU of a 150 GB (140 GiB) budget; headroom 132 GB "
					  "(123 GiB)\n", 80) == 0);
	assert_non_null(strstr(t, "  binding term:        weights: 16.1 GB (15.0 GiB), 91.1% of the total\n"));
	/* vLLM's default prefill chunk on an H200 (8,192 tokens): activations stop growing with the batch */
	assert_non_null(strstr(t, "  largest batch:       247 sequences of 4,096 tokens\n"));
	/* Llama-3-8B's context (max_position_embeddings 8192) stops the search, not the H200's memory: said so */
	assert_non_null(strstr(t, "  longest sequence:    8,192 tokens at batch 1 (the model's context, "
				  "max_position_embeddings, not memory; allow_beyond_max_position_embeddings lifts it)\n"));
	assert_non_null(strstr(t, "  smallest GPU count:  1\n"));
	assert_non_null(strstr(t, "  total                    17,638,465,536       17.6       16.4    100%\n"));
	assert_non_null(strstr(t, "GB = 1e9 bytes, GiB = 2^30 bytes. HINT\n"));
	assert_null(strstr(t, "Every figure")); /* not verbose */
	/* the verdict comes before the breakdown */
	assert_true(strstr(t, "FITS") < strstr(t, "memory per GPU"));
	free(t);
	/* the warnings, and verbose: every member of the JSON answer, whatever its name, by the unit it ends in */
	mps_warn(&p->warnings, "an assumption");
	t = mpc_inference_plan_text(rq, p, true, NULL);
	assert_non_null(strstr(t, "  - an assumption\n"));
	assert_true(strstr(t, "warnings:") < strstr(t, "memory per GPU"));
	assert_non_null(strstr(t, "Every figure of the answer:\n"));
	assert_non_null(strstr(t, "    kv_cache_bytes_per_token: 131,072 B (131 kB (128 KiB))\n"));
	assert_non_null(strstr(t, "parameters: 8,030,261,248\n"));
	free(t);
	/* without a device: what it needs */
	p->have_device = false;
	t = mpc_inference_plan_text(rq, p, false, NULL);
	assert_non_null(strstr(t, "NEEDS 17.6 GB (16.4 GiB) per GPU"));
	assert_null(strstr(t, " on h200"));
	free(t);
	free(p);
	free(rq);
	/* does not fit: by how much, and the smallest GPU count that does */
	p = inference_plan("{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"bf16\",\"kv_cache_dtype\":\"bf16\","
			   "\"batch_size\":1,\"sequence_length\":4096,\"device\":\"rtx-4090-24gb\"}", &rq);
	t = mpc_inference_plan_text(rq, p, false, NULL);
	assert_non_null(strstr(t, "DOES NOT FIT: 143 GB (134 GiB) per GPU against a 25.3 GB (23.5 GiB) budget; 118 GB "
				  "(110 GiB) over\n"));
	assert_non_null(strstr(t, "  largest batch:       none fits at 4,096 tokens\n"));
	assert_non_null(strstr(t, "  smallest GPU count:  8\n"));
	free(t);
	free(p);
	free(rq);
	/* training: the terms that do not add up say so */
	{
		cJSON *body = cJSON_Parse("{\"model\":\"llama-2-7b\",\"precision\":\"mixed_bf16\",\"optimizer\":\"adamw\","
					  "\"micro_batch_size\":1,\"sequence_length\":4096,\"activation_recomputation\":"
					  "\"selective\",\"num_gpus\":8,\"sharding\":\"zero1\",\"device\":\"h200-sxm-141gb\"}");
		mps_training_request *trq = malloc(sizeof(*trq));
		mps_training_plan *tp = malloc(sizeof(*tp));
		mp_error err = MP_ERROR_INIT;

		assert_non_null(trq);
		assert_non_null(tp);
		assert_int_equal(mpc_training_decode(body, "", true, trq, &err), MP_OK);
		assert_int_equal(mps_plan_training(svc, trq, tp, &err), MP_OK);
		t = mpc_training_plan_text(trq, tp, false, NULL);
		assert_true(strncmp(t, "Training plan: llama-2-7b", 25) == 0);
		assert_non_null(strstr(t, "FITS: 51.3 GB (47.8 GiB) per GPU of a 150 GB (140 GiB) budget"));
		assert_non_null(strstr(t, "  largest micro-batch: 4 sequences of 4,096 tokens\n"));
		assert_non_null(strstr(t, "(the peak of the backward phase; the terms do not all coexist)"));
		assert_non_null(strstr(t, "8 GPUs (data 8 x tensor 1 x pipeline 1, zero1)"));
		free(t);
		free(tp);
		free(trq);
		cJSON_Delete(body);
	}
}

/* The fit batch as text: per job the verdict, then devices x GPU counts. */
static void test_fit_text(void **state)
{
	cJSON *body = cJSON_Parse("{\"jobs\":[{\"id\":\"chat\",\"inference\":{\"model\":\"llama-3-8b\",\"weight_dtype\":"
				  "\"bf16\",\"kv_cache_dtype\":\"bf16\",\"batch_size\":8,\"sequence_length\":8192}},"
				  "{\"id\":\"huge\",\"inference\":{\"model\":\"llama-3.1-70b\",\"weight_dtype\":\"bf16\","
				  "\"kv_cache_dtype\":\"bf16\",\"batch_size\":1,\"sequence_length\":4096}},"
				  "{\"id\":\"tune\",\"training\":{\"model\":\"llama-3.1-70b\",\"precision\":\"mixed_bf16\","
				  "\"optimizer\":\"adamw\",\"micro_batch_size\":1,\"sequence_length\":4096}}],"
				  "\"devices\":[\"rtx-4090-24gb\",\"h100-sxm5-80gb\"],\"gpu_counts\":[1,2]}");
	mps_fit_request rq;
	mpc_fit_text *w;
	mp_error err = MP_ERROR_INIT;
	char *t;

	(void)state;
	assert_int_equal(mpc_fit_decode(body, &rq, &err), MP_OK);
	w = mpc_fit_text_new(&rq);
	assert_int_equal(mps_fit(svc, &rq, mpc_fit_text_sink(), w, &err), MP_OK);
	t = mpc_fit_text_finish(w);
	assert_non_null(t);
	assert_non_null(strstr(t, "Fit: 3 jobs x 2 devices x GPU counts 1, 2\n"));
	assert_non_null(strstr(t, "job chat (inference, llama-3-8b, 8,030,261,248 parameters (8.03 billion)): FITS on 2 "
				  "of 2 devices; fewest GPUs: 1 (h100-sxm5-80gb)\n"));
	/* 141 GB of bf16 weights: split over 2 H100s, 72.4 GB each */
	assert_non_null(strstr(t, "job huge (inference, llama-3.1-70b, 70,553,706,496 parameters (70.6 billion)): FITS on 1 "
				  "of 2 devices; fewest GPUs: 2 (h100-sxm5-80gb)\n"));
	assert_non_null(strstr(t, "  h100-sxm5-80gb           2         no  144 GB      yes 72.4 GB\n"));
	assert_non_null(strstr(t, "job tune (training, llama-3.1-70b, 70,553,706,496 parameters (70.6 billion)): DOES NOT "
				  "FIT on any of the 2 devices at these GPU counts\n"));
	/* the 4090 row of chat: 16.1 GB of weights + 8.59 GB of KV cache + one 2,048-token prefill chunk (vLLM's
	 * default below 70 GiB) come to 25.4 GB, over the 25.3 GB CUDA reports for the card; 2 GPUs fit */
	assert_non_null(strstr(t, "  rtx-4090-24gb            2         no  25.4 GB     yes 13.0 GB\n"));
	free(t);
	mpc_fit_request_free(&rq);
	cJSON_Delete(body);
}

/* A warnings list keeps its first 8 and says how many more there were, in the JSON as in the text; a warning too
 * long for its room ends in "...". */
static void test_warnings_left_out(void **state)
{
	mps_warnings w;
	char more[96], *long_text = malloc(1000);
	cJSON *doc, *a;

	(void)state;
	assert_non_null(long_text);
	memset(&w, 0, sizeof(w));
	memset(long_text, 'w', 999);
	long_text[999] = '\0';
	mps_warn(&w, "%s", long_text);
	assert_int_equal(strlen(w.text[0]), MPS_WARNING_BYTES - 1);
	assert_string_equal(w.text[0] + MPS_WARNING_BYTES - 4, "...");
	for (int i = 1; i < 11; i++)
		mps_warn(&w, "assumption %d", i);
	mps_warn(&w, "assumption %d", 3); /* a repeat of one kept: skipped, not counted */
	assert_int_equal(w.n, MPS_MAX_WARNINGS);
	assert_int_equal(w.dropped, 3);	/* assumptions 8, 9 and 10 */
	assert_true(mps_warnings_left_out(&w, more, sizeof(more)));
	assert_string_equal(more, "warnings: 3 more were left out (an answer keeps the first 8)");
	{
		mpc_out o;
		char *text;

		mpc_out_init(&o);
		mpc_w_obj(&o, NULL);
		mpc_warnings_write(&o, &w);
		mpc_w_end(&o);
		text = mpc_out_finish(&o, NULL);
		assert_non_null(text);
		doc = cJSON_Parse(text);
		free(text);
		a = cJSON_GetObjectItem(doc, "warnings");
	}
	assert_int_equal(cJSON_GetArraySize(a), MPS_MAX_WARNINGS + 1);
	assert_string_equal(cJSON_GetArrayItem(a, MPS_MAX_WARNINGS)->valuestring, more);
	assert_string_equal(cJSON_GetArrayItem(a, 1)->valuestring, "assumption 1");
	cJSON_Delete(doc);
	w.dropped = 0;
	assert_false(mps_warnings_left_out(&w, more, sizeof(more)));
	assert_string_equal(more, "");
	free(long_text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inference_under_failures),
		cmocka_unit_test(test_training_under_failures),
		cmocka_unit_test(test_fit_and_roofline_under_failures),
		cmocka_unit_test(test_plan_text),
		cmocka_unit_test(test_fit_text),
		cmocka_unit_test(test_warnings_left_out),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
