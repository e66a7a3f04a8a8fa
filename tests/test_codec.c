/*
 * test_codec.c: failure paths of the decode -> service -> encode path, and the codec's own contracts.
 * - Allocation failure injection, as curl's torture tests and SQLite's fault simulation do it: every allocation of
 *   memplan's own code (malloc, calloc and realloc are wrapped at link time: -Wl,--wrap) and of cJSON (through its
 *   hooks, codec/json.h) is counted, and the run is repeated with the 1st, 2nd, ... Nth allocation failing until a
 *   run needs no more. Each run must end in MP_ENOMEM or in the very answer of a run without failures: never a
 *   crash, never another error, never a partial document (under `make asan`, never a leak).
 * - Every problem type the code can send is listed in openapi.yaml.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
static char dir[] = "/tmp/memplan-codec-XXXXXX";

static int setup(void **state)
{
	char path[64];
	mp_error err;

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
	cJSON *body = cJSON_Parse(body_text), *out = NULL;
	char *text = NULL;

	if (body == NULL) {
		*st = MP_ENOMEM; /* the parse itself ran out */
		return NULL;
	}
	*st = lib_answer(svc, kind, body, &out, err);
	if (*st == MP_OK) {
		unsigned long failed = mpc_alloc_failures();

		text = mpc_print(out, false);
		if (text == NULL || mpc_alloc_failures() != failed) {
			cJSON_free(text);
			text = NULL;
			*st = MP_ENOMEM;
		}
	}
	cJSON_Delete(out);
	cJSON_Delete(body);
	return text;
}

static void torture(const char *kind, const char *body)
{
	mp_error err;
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
			cJSON_free(got);
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
		cJSON_free(got);
	}
	print_message("%s: %ld allocations, each made to fail in turn\n", kind, n);
	assert_true(n > 10);
	cJSON_free(want);
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

/* Every problem type of codec/problem.c (one per status, and 405's and 415's) is in openapi.yaml's enum. */
static void test_problem_types_in_spec(void **state)
{
	size_t len = 0;
	char *spec = ref_read("openapi.yaml", &len), type[96];
	int n = 0;

	(void)state;
	assert_non_null(spec);
	for (int st = MP_EINVAL; st <= MP_EFORBIDDEN; st++) {
		snprintf(type, sizeof(type), "- urn:memplan:problem:%s\n", mpc_problem_slug((mp_status)st));
		if (strstr(spec, type) == NULL)
			fail_msg("openapi.yaml does not list the problem type %s", type);
		n++;
	}
	assert_non_null(strstr(spec, "- urn:memplan:problem:method-not-allowed\n"));
	assert_non_null(strstr(spec, "- urn:memplan:problem:unsupported-media-type\n"));
	assert_int_equal(n, 15);
	free(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_problem_types_in_spec),
		cmocka_unit_test(test_inference_under_failures),
		cmocka_unit_test(test_training_under_failures),
		cmocka_unit_test(test_fit_and_roofline_under_failures),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
