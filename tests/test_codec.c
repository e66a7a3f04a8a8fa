/*
 * test_codec.c: codec/'s own contracts, with nothing below it but the model readers and the planner's structs (this
 * test links without the store, the kernels and the service: make check's link check shows it).
 * - The writer's numbers are cJSON's own digits, and a reprinted answer is the printed one.
 * - Every problem type the code can send is listed in openapi.yaml.
 * - The numbers for people of codec.h's worked examples.
 * - The reader of the engines' start-up logs, on the real logs of tests/data/engines.
 * Answers computed by the service (the torture of every allocation, the plan and fit texts) are
 * tests/test_pipeline.c's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdbool.h>

#include <cmocka.h>

#include "../codec/codec.h"
#include "refs.h"

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

/* Every problem type of codec/mpc_problem.c (one per status, and 405's and 415's) is in openapi.yaml's enum. */
static void test_problem_types_in_spec(void **state)
{
	size_t len = 0;
	char *spec = ref_read("openapi.yaml", &len), type[96];
	int n = 0;

	(void)state;
	assert_non_null(spec);
	for (int st = MP_EINVAL; st <= MP_EUPSTREAM; st++) {
		snprintf(type, sizeof(type), "- urn:memplan:problem:%s\n", mpc_problem_slug((mp_status)st));
		if (strstr(spec, type) == NULL)
			fail_msg("openapi.yaml does not list the problem type %s", type);
		n++;
	}
	assert_non_null(strstr(spec, "- urn:memplan:problem:method-not-allowed\n"));
	assert_non_null(strstr(spec, "- urn:memplan:problem:unsupported-media-type\n"));
	assert_int_equal(n, 21);
	free(spec);
}

/* The worked examples of codec.h's numbers for people. */
static void test_numbers_for_people(void **state)
{
	char b[64];

	(void)state;
	assert_string_equal(mpc_fmt_count(b, sizeof(b), 8030261248.0), "8,030,261,248");
	assert_string_equal(mpc_fmt_count(b, sizeof(b), -1234567), "-1,234,567");
	assert_string_equal(mpc_fmt_count(b, sizeof(b), 999), "999");
	assert_string_equal(mpc_fmt_sig3(b, sizeof(b), 308.5), "309");  /* 308.5 rounds half away from zero */
	assert_string_equal(mpc_fmt_sig3(b, sizeof(b), 61250), "61,300");
	assert_string_equal(mpc_fmt_sig3(b, sizeof(b), 0.012345), "0.0123");
	assert_string_equal(mpc_fmt_sig3(b, sizeof(b), 99.96), "100");  /* rounding moves the decade: no "100.0" */
	assert_string_equal(mpc_fmt_sig3(b, sizeof(b), 16.06), "16.1");
	/* GB = 1e9 beside GiB = 2^30: the README's Llama-3-8B figures */
	assert_string_equal(mpc_fmt_bytes(b, sizeof(b), 17638465536.0), "17.6 GB (16.4 GiB)");
	assert_string_equal(mpc_fmt_bytes(b, sizeof(b), 16060522496.0), "16.1 GB (15.0 GiB)");
	assert_string_equal(mpc_fmt_bytes(b, sizeof(b), 536870912.0), "537 MB (512 MiB)");
	assert_string_equal(mpc_fmt_bytes(b, sizeof(b), 150109880320.0), "150 GB (140 GiB)");
	assert_string_equal(mpc_fmt_bytes(b, sizeof(b), 512), "512 B");
	assert_string_equal(mpc_fmt_bytes(b, sizeof(b), 999999999.0), "1.00 GB (0.931 GiB)");
	assert_string_equal(mpc_fmt_seconds(b, sizeof(b), 0.003241), "3.24 ms");
	assert_string_equal(mpc_fmt_seconds(b, sizeof(b), 0.2489), "249 ms");
	assert_string_equal(mpc_fmt_seconds(b, sizeof(b), 1.0015e-05), "10.0 us");
	assert_string_equal(mpc_fmt_seconds(b, sizeof(b), 3.64), "3.64 s");
	assert_string_equal(mpc_fmt_si(b, sizeof(b), 989.4e12, "FLOP/s"), "989 TFLOP/s");
	assert_string_equal(mpc_fmt_si(b, sizeof(b), 1978.9e12, "FLOP/s"), "1.98 PFLOP/s");
	assert_string_equal(mpc_fmt_si(b, sizeof(b), 3.352e12, "B/s"), "3.35 TB/s");
	assert_string_equal(mpc_fmt_si(b, sizeof(b), 999.96e9, "B/s"), "1.00 TB/s");
	assert_string_equal(mpc_fmt_si(b, sizeof(b), 0.125, "FLOP/B"), "0.125 FLOP/B");
	assert_string_equal(mpc_fmt_percent(b, sizeof(b), 0.9106), "91.1%");
	mpc_fmt_bytes(b, 8, 17638465536.0); /* cut at the buffer, never past it */
	assert_int_equal(strlen(b), 7);
}

/* ?pretty reprints the compact text: the same digits as printing the tree pretty. */
static void test_reprint(void **state)
{
	/* a plan's kinds of members: exact byte counts, fractions, nested objects, arrays, strings to escape */
	cJSON *doc = mpc_parse_exact("{\"memory\":{\"weights_bytes\":46702792704,\"total_bytes\":89489354752},"
				     "\"performance\":{\"decode_step_seconds\":0.0032411192533333332,\"bound\":\"memory\"},"
				     "\"fit\":{\"fits\":true,\"fraction_of_budget\":0.9106},\"tp_degrees\":[1,2,4,8],"
				     "\"warnings\":[\"a \\\"quoted\\\" word\\tand a tab\"],\"nothing\":null}");
	cJSON *raw = cJSON_CreateObject();
	char *compact, *pretty, *again;

	(void)state;
	/* the document as the encoders build it, with exact digits */
	mpc_add_item(raw, "plan", doc);
	mpc_add_item(raw, "peak", mpc_number(1978.9e12));
	mpc_add_item(raw, "fraction", mpc_number(0.1 + 0.2));
	compact = mpc_print(raw, false);
	pretty = mpc_print(raw, true);
	again = mpc_reprint(compact, true);
	assert_non_null(again);
	assert_string_equal(again, pretty);
	cJSON_free(again);
	again = mpc_reprint(pretty, false);
	assert_string_equal(again, compact);
	assert_non_null(strstr(compact, "\"peak\":1978900000000000"));
	assert_null(mpc_reprint("{not json", true));
	cJSON_free(again);
	cJSON_free(compact);
	cJSON_free(pretty);
	cJSON_Delete(raw);
}

/* The figures vLLM printed at start-up in vllm #10517 (tests/data/engines/README.md), read as they were printed:
 * value, decimals (the engine's rounding) and line; the profile line gives six figures at once. */
static const mps_engine_figure *figure_of(const mps_engine_report *r, mps_figure kind)
{
	for (size_t i = 0; i < r->nfigures; i++)
		if (r->figures[i].kind == kind)
			return &r->figures[i];
	fail_msg("no figure %s", mps_figure_name(kind));
	return NULL;
}

static void test_engine_log(void **state)
{
	size_t len;
	char *log = ref_read("tests/data/engines/vllm-10517-llama31-8b-rtx3090-20k.log", &len);
	mps_engine_report *r = calloc(1, sizeof(*r));
	mp_error err = MP_ERROR_INIT;
	const mps_engine_figure *f;

	(void)state;
	assert_non_null(log);
	assert_non_null(r);
	assert_int_equal(mpc_engine_report_parse(MP_ENGINE_VLLM, log, false, "/log", r, &err), MP_OK);
	assert_int_equal(r->lines, 4);
	assert_int_equal(r->lines_recognised, 4);
	assert_int_equal(r->figures_left_out, 0);
	f = figure_of(r, MPS_FIG_WEIGHTS_LOADED_GIB);
	assert_true(f->reported == 14.9888);
	assert_int_equal(f->decimals, 4);
	assert_int_equal(f->line, 1);
	f = figure_of(r, MPS_FIG_TOTAL_GPU_MEMORY_GIB);
	assert_true(f->reported == 23.58);
	assert_int_equal(f->decimals, 2);
	assert_int_equal(f->line, 2);
	assert_true(figure_of(r, MPS_FIG_PEAK_TORCH_MEMORY_GIB)->reported == 17.06);
	assert_true(figure_of(r, MPS_FIG_NON_TORCH_MEMORY_GIB)->reported == 0.35);
	assert_true(figure_of(r, MPS_FIG_AVAILABLE_KV_CACHE_GIB)->reported == 3.81);
	assert_true(figure_of(r, MPS_FIG_MEMORY_FRACTION)->reported == 0.90);
	f = figure_of(r, MPS_FIG_NUM_GPU_BLOCKS);
	assert_true(f->reported == 1952);
	assert_int_equal(f->line, 3);
	f = figure_of(r, MPS_FIG_MAX_CONCURRENCY);
	assert_true(f->reported == 1.56);
	assert_int_equal(f->tokens_per_request, 20000);
	assert_int_equal(f->line, 4);
	/* a text with no line the reader knows says what it looks for */
	memset(r, 0, sizeof(*r));
	assert_int_equal(mpc_engine_report_parse(MP_ENGINE_VLLM, "hello\nworld\n", false, "/log", r, &err), MP_EINVAL);
	assert_string_equal(err.field, "/log");
	free(r);
	free(log);
}
/* Nothing cut silently (core/mp_base.h): a pointer that does not fit ends in "/..." after its last whole segment and
 * its message says how long it was; a message that does not fit ends in "..."; a body's repeated member under long
 * keys of its own is named so. */
static void test_nothing_cut_silently(void **state)
{
	char p[12] = "/jobs", key[300], body[1400], *msg;
	mp_error err = MP_ERROR_INIT;
	cJSON *doc = NULL;
	size_t n;

	(void)state;
	/* the worked example of mp_pointer_add */
	assert_true(mp_pointer_add(p, sizeof(p), "3"));
	assert_string_equal(p, "/jobs/3");
	assert_false(mp_pointer_add(p, sizeof(p), "inference"));
	assert_string_equal(p, "/jobs/3/...");
	assert_false(mp_pointer_add(p, sizeof(p), "x")); /* once cut, it stays so */
	assert_string_equal(p, "/jobs/3/...");
	/* a field longer than an error holds */
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	snprintf(body, sizeof(body), "/jobs/3/%s/%s", key, key);
	mp_fail(&err, MP_EINVAL, body, "bad");
	n = strlen(err.field);
	assert_true(n < sizeof(err.field));
	assert_string_equal(err.field + n - 4, "/...");
	assert_true(strncmp(err.field, "/jobs/3/kkk", 11) == 0);
	assert_non_null(strstr(err.message, "bad (the field's JSON pointer is 607 bytes long: it is shown cut)"));
	/* a message longer than an error holds */
	msg = malloc(3000);
	assert_non_null(msg);
	memset(msg, 'm', 2999);
	msg[2999] = '\0';
	mp_fail(&err, MP_EINVAL, "/x", "%s", msg);
	assert_string_equal(err.field, "/x");
	assert_int_equal(strlen(err.message), sizeof(err.message) - 1);
	assert_string_equal(err.message + sizeof(err.message) - 4, "...");
	free(msg);
	/* a member repeated under long keys of the body's own: named down to its last whole key */
	snprintf(body, sizeof(body), "{\"%s\":{\"%s\":{\"a\":1,\"a\":2}}}", key, key);
	memset(&err, 0, sizeof(err));
	assert_int_equal(mpc_parse_body(body, strlen(body), &doc, &err), MP_EINVAL);
	assert_null(doc);
	assert_string_equal(err.field + strlen(err.field) - 4, "/...");
	assert_int_equal(strlen(err.field), 1 + 299 + 4); /* the first key, then the mark in place of the rest */
	/* valid JSON nested past cJSON's limit is refused for its depth (it was "not valid JSON"); brackets inside a
	 * string, escaped quotes included, are not nesting */
	{
		size_t n = 2 * 5000 + 8;
		char *deep = malloc(n);

		assert_non_null(deep);
		memcpy(deep, "{\"a\":", 5);
		memset(deep + 5, '[', 5000);
		memset(deep + 5 + 5000, ']', 5000);
		memcpy(deep + 5 + 10000, "}", 2);
		memset(&err, 0, sizeof(err));
		assert_int_equal(mpc_parse_body(deep, strlen(deep), &doc, &err), MP_EPARSE);
		assert_non_null(strstr(err.message, "deeper than 1000 levels"));
		free(deep);
		memset(&err, 0, sizeof(err));
		{
			const char *t = "{\"a\": \"[[\\\"[[\", \"b\": [1,}";

			assert_int_equal(mpc_parse_body(t, strlen(t), &doc, &err), MP_EPARSE);
			assert_non_null(strstr(err.message, "not valid JSON"));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_problem_types_in_spec),
		cmocka_unit_test(test_number_text),
		cmocka_unit_test(test_numbers_for_people),
		cmocka_unit_test(test_reprint),
		cmocka_unit_test(test_engine_log),
		cmocka_unit_test(test_nothing_cut_silently),
	};

	mpc_json_init(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
