/*
 * test_codec.c: failure paths of the decode -> service -> encode path, and the codec's own contracts.
 * - Allocation failure injection, as curl's torture tests and SQLite's fault simulation do it: every allocation of
 *   memplan's own code (malloc, calloc and realloc are wrapped at link time: -Wl,--wrap) and of cJSON (through its
 *   hooks, codec/json.h) is counted, and the run is repeated with the 1st, 2nd, ... Nth allocation failing until a
 *   run needs no more. Each run must end in MP_ENOMEM or in the very answer of a run without failures: never a
 *   crash, never another error, never a partial document (under `make asan`, never a leak).
 * - Every problem type the code can send is listed in openapi.yaml.
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

/* The writer's number text (json.h: mpc_w_num) against cJSON's own printer on the same value held as mpc_number
 * holds it: a million doubles over twenty-five decades, the tie and boundary cases the fast path must hand back to
 * printf (x.5 at the 16th digit, powers of ten and their neighbours), and the plan's own figures. */
static bool number_matches(double v)
{
	mpc_out o;
	cJSON *item = mpc_number(v);
	char *want = item ? mpc_print(item, false) : NULL, *got;
	bool same;

	mpc_out_init(&o);
	mpc_w_num(&o, NULL, v);
	got = mpc_out_finish(&o, NULL);
	same = want && got && strcmp(want, got) == 0;
	if (!same)
		print_message("%.17g: cJSON %s, writer %s\n", v, want ? want : "(null)", got ? got : "(null)");
	cJSON_free(want);
	free(got);
	cJSON_Delete(item);
	return same;
}

static void test_number_text(void **state)
{
	static const double fixed[] = { 0.0032411192533333332, 0.06706618964589448, 308.5353922017984, 0.1, 0.2, 0.3,
					1.0 / 3, 2.0 / 3, 123456789012345.5, 12345678901234.25, 0.5, 1.5, 2.5, 1e-9, 1e-5,
					1.5e-5, 9.9999999999999995e-8, 99999999999999.99, 999999999999999.9,
					9999999999999998.0, 1e16, 1e15 + 0.5, 5e-324, 1.7976931348623157e308, 2.2e-308,
					-0.0, 0.0, -1.25, -308.5353922017984, 0.90000000000000002, 1e21, 1978.9e12 };
	uint64_t x = UINT64_C(0x9E3779B97F4A7C15);
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		bad += !number_matches(fixed[i]);
		bad += !number_matches(nextafter(fixed[i], 1e300));
		bad += !number_matches(nextafter(fixed[i], -1e300));
	}
	for (int e = -12; e <= 17; e++) { /* powers of ten and their neighbours */
		double p = pow(10, e);

		bad += !number_matches(p) + !number_matches(nextafter(p, 0)) + !number_matches(nextafter(p, 1e300));
	}
	for (int i = 0; i < 1000000 && bad < 10; i++) {
		double mant, v;

		x ^= x << 13; /* xorshift64 */
		x ^= x >> 7;
		x ^= x << 17;
		mant = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) with 53 random bits */
		v = (1 + mant) * pow(10, (int)(x % 25) - 11);
		if (i % 4 == 1)
			v = floor(v * 1e3) / 1e3 + 0.5e-3; /* decimal ties and short expansions */
		else if (i % 4 == 2)
			v = -v;
		bad += !number_matches(v);
	}
	assert_int_equal(bad, 0);
}

/* Every problem type of codec/problem.c (one per status, and 405's and 415's) is in openapi.yaml's enum. */
static void test_problem_types_in_spec(void **state)
{
	size_t len = 0;
	char *spec = ref_read("openapi.yaml", &len), type[96];
	int n = 0;

	(void)state;
	assert_non_null(spec);
	for (int st = MP_EINVAL; st <= MP_EFRAMING; st++) {
		snprintf(type, sizeof(type), "- urn:memplan:problem:%s\n", mpc_problem_slug((mp_status)st));
		if (strstr(spec, type) == NULL)
			fail_msg("openapi.yaml does not list the problem type %s", type);
		n++;
	}
	assert_non_null(strstr(spec, "- urn:memplan:problem:method-not-allowed\n"));
	assert_non_null(strstr(spec, "- urn:memplan:problem:unsupported-media-type\n"));
	assert_int_equal(n, 20);
	free(spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_problem_types_in_spec),
		cmocka_unit_test(test_number_text),
		cmocka_unit_test(test_inference_under_failures),
		cmocka_unit_test(test_training_under_failures),
		cmocka_unit_test(test_fit_and_roofline_under_failures),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
