/*
 * test_invariants.c: the invariant macros of core/mp_assert.h in both builds (a debug build aborts with the
 * expression; a release build evaluates to the condition, once), and the tables the planner indexes by its enums:
 * a name for every value, each its own; every dtype's matrix-peak fallback chain reaching fp32; an enum value with no
 * row refused as input (the training request) or stopped by MP_NEVER (a model's attention kind); an operation kind
 * outside the table an error naming the field. Links the planner alone.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../core/mp_assert.h"
#include "../planner/memplan.h"

int mp_test_release_never(int v, int *evaluated);
int mp_test_release_always(int v, int *evaluated);

/* Runs fn(arg) in a child with stderr captured: true when the child died of SIGABRT; its stderr into out. */
static bool aborts(void (*fn)(int), int arg, char *out, size_t cap)
{
	int fds[2], status = 0;
	pid_t pid;
	ssize_t n, got = 0;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		fn(arg);
		_exit(0);
	}
	close(fds[1]);
	while (got + 1 < (ssize_t)cap && (n = read(fds[0], out + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void never_of(int x)
{
	if (MP_NEVER(x == 1))
		_exit(3); /* the release branch: not reached in this debug build */
}

static void always_of(int x)
{
	if (!MP_ALWAYS(x == 1))
		_exit(3);
}

static void test_debug_build_aborts_with_the_expression(void **state)
{
	char err[1024];
	int evaluated = 0;

	(void)state;
	/* a kept invariant is silent and takes the normal branch */
	assert_int_equal(MP_NEVER(++evaluated == 0), 0);
	assert_int_equal(MP_ALWAYS(++evaluated == 2), 1);
	assert_int_equal(evaluated, 2);
	/* a broken one aborts, naming itself (assert prints its argument as written: !"MP_NEVER(" "x == 1" ")") */
	assert_true(aborts(never_of, 1, err, sizeof(err)));
	assert_non_null(strstr(err, "MP_NEVER("));
	assert_non_null(strstr(err, "x == 1"));
	assert_non_null(strstr(err, "test_invariants.c"));
	assert_true(aborts(always_of, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "MP_ALWAYS("));
	assert_non_null(strstr(err, "x == 1"));
	assert_false(aborts(never_of, 0, err, sizeof(err)));
}

static void test_release_build_evaluates_the_condition(void **state)
{
	int evaluated = 0;

	(void)state;
	assert_int_equal(mp_test_release_never(1, &evaluated), 1); /* broken: the defensive branch runs */
	assert_int_equal(mp_test_release_never(0, &evaluated), 0);
	assert_int_equal(mp_test_release_always(0, &evaluated), 0);
	assert_int_equal(mp_test_release_always(1, &evaluated), 1);
	assert_int_equal(evaluated, 4); /* each condition once */
}

/* names[i] for i < n: none NULL, none "invalid", no two alike; "invalid" past the end */
static void check_names(const char *(*name_of)(int), int n)
{
	for (int i = 0; i < n; i++) {
		const char *a = name_of(i);

		assert_non_null(a);
		assert_string_not_equal(a, "invalid");
		for (int j = 0; j < i; j++)
			assert_string_not_equal(a, name_of(j));
	}
	assert_string_equal(name_of(n), "invalid");
	assert_string_equal(name_of(-1), "invalid");
}

static const char *engine_name(int i)
{
	return mp_engine_name((mp_engine)i);
}

static const char *precision_name(int i)
{
	return mp_precision_name((mp_precision)i);
}

static const char *optimizer_name(int i)
{
	return mp_optimizer_name((mp_optimizer)i);
}

static const char *formula_name(int i)
{
	return mp_activation_formula_name((mp_activation_formula)i);
}

static void test_name_tables(void **state)
{
	(void)state;
	check_names(engine_name, MP_ENGINE_COUNT);
	check_names(precision_name, MP_PRECISION_COUNT);
	check_names(optimizer_name, MP_OPTIMIZER_COUNT);
	check_names(formula_name, MP_FORMULA_COUNT);
	for (int e = 0; e < MP_ENGINE_COUNT; e++)
		assert_int_equal(mp_engine_from_name(mp_engine_name((mp_engine)e)), e);
	assert_string_equal(mp_engine_name(MP_ENGINE_TRTLLM), "trtllm");
	assert_string_equal(mp_precision_name(MP_PRECISION_AMP_BF16), "amp_bf16");
	assert_string_equal(mp_optimizer_name(MP_OPTIMIZER_SGD_MOMENTUM), "sgd_momentum");
	assert_string_equal(mp_activation_formula_name(MP_FORMULA_MEGATRON_GATED), "megatron_gated");
}

/* A profile with one matrix peak, fp32's: every dtype but fp64 reaches it through its fallback chain (roofline.c's
 * matrix_fallback, at most 4 steps: fp8 -> bf16 -> fp16 -> fp32), so a new dtype without a row shows here. */
static void test_matrix_fallback_reaches_fp32(void **state)
{
	mp_device d;

	(void)state;
	memset(&d, 0, sizeof(d));
	d.peak_flops_per_second[MP_DTYPE_FP32] = 6.7e13;
	for (int t = MP_DTYPE_INVALID + 1; t < MP_DTYPE_COUNT; t++) {
		mp_dtype used = MP_DTYPE_INVALID;
		bool fb = false;
		double p = mp_device_peak(&d, (mp_dtype)t, MP_UNIT_MATRIX, &used, &fb);

		if (t == MP_DTYPE_FP64) {
			assert_true(p == 0);
			continue;
		}
		assert_true(p == 6.7e13);
		assert_int_equal(used, MP_DTYPE_FP32);
		assert_int_equal(fb, t != MP_DTYPE_FP32);
	}
}

/* A training request whose enum has no row in its table is bad input: a 422 naming the field. */
static void test_training_enums_without_a_row(void **state)
{
	static const struct {
		size_t offset;
		int value;
		const char *field;
	} cases[] = {
	    {offsetof(mp_training_req, sharding), 6, "/sharding"},
	    {offsetof(mp_training_req, recompute), 3, "/recompute"},
	    {offsetof(mp_training_req, convention), 3, "/state_convention"},
	    {offsetof(mp_training_req, precision), MP_PRECISION_COUNT, "/precision"},
	    {offsetof(mp_training_req, optimizer), MP_OPTIMIZER_COUNT, "/optimizer"},
	};
	mp_param_count pc;
	mp_training_memory mem;

	(void)state;
	memset(&pc, 0, sizeof(pc));
	pc.total = 7000000000;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mp_training_req req;
		mp_error err = MP_ERROR_INIT;
		int *field;

		memset(&req, 0, sizeof(req));
		req.micro_batch_size = 1;
		req.sequence_length = 4096;
		req.states_only = true;
		assert_int_equal(mp_plan_training(NULL, &pc, &req, &mem, &err), MP_OK);
		field = (int *)((char *)&req + cases[i].offset);
		*field = cases[i].value;
		assert_int_equal(mp_plan_training(NULL, &pc, &req, &mem, &err), MP_EINVAL);
		assert_string_equal(err.field, cases[i].field);
	}
}

/* An attention kind with no row in the workspace's table is a broken invariant (a reader never makes one). */
static void workspace_of_kind(int kind)
{
	mp_model m;
	mp_inference_req req;
	mp_workspace ws;
	mp_error err = MP_ERROR_INIT;

	memset(&m, 0, sizeof(m));
	memset(&req, 0, sizeof(req));
	m.attn_kind = (mp_attn_kind)kind;
	req.batch_size = 1;
	req.sequence_length = 16;
	(void)mp_prefill_workspace(&m, &req, NULL, &ws, &err);
}

static void test_attention_kind_without_a_row(void **state)
{
	char err[1024];

	(void)state;
	assert_false(aborts(workspace_of_kind, MP_ATTN_MLA, err, sizeof(err)));
	assert_true(aborts(workspace_of_kind, MP_ATTN_MLA + 5, err, sizeof(err)));
	assert_non_null(strstr(err, "MP_NEVER("));
	assert_non_null(strstr(err, "attn_kinds"));
}

/* mp_op_cost: an unknown kind names /dtype first when its dtype is bad too (as before the kinds became a table),
 * else /op. */
static void test_unknown_operation_kind(void **state)
{
	mp_op op;
	mp_error err = MP_ERROR_INIT;
	double flops;
	uint64_t bytes;

	(void)state;
	memset(&op, 0, sizeof(op));
	op.kind = (mp_op_kind)(MP_OP_KIND_COUNT + 3);
	assert_int_equal(mp_op_cost(&op, &flops, &bytes, &err), MP_EINVAL);
	assert_string_equal(err.field, "/dtype");
	op.dtype = MP_DTYPE_BF16;
	assert_int_equal(mp_op_cost(&op, &flops, &bytes, &err), MP_EINVAL);
	assert_string_equal(err.field, "/op");
	assert_true(flops == 0 && bytes == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_debug_build_aborts_with_the_expression),
	    cmocka_unit_test(test_release_build_evaluates_the_condition),
	    cmocka_unit_test(test_name_tables),
	    cmocka_unit_test(test_matrix_fallback_reaches_fp32),
	    cmocka_unit_test(test_training_enums_without_a_row),
	    cmocka_unit_test(test_attention_kind_without_a_row),
	    cmocka_unit_test(test_unknown_operation_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
