/*
 * mpc_roofline.c: POST /v1/roofline both ways, and the compact operation specs of query strings and the command line:
 * the device (a stored id or an inline profile), operations by one field table per kind, the optional transformer
 * step analysis; the answer with every operation's roof, the steps, Little's law and the notes on what a floor
 * leaves out. Every figure is computed by the planner (through the service); this file only moves values.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/fields.h"
#include "codec.h"
#include "mpc_tables.h"

/* ----- operations ----------------------------------------------------------------------------------------- */

enum {
	K_RAW,
	K_ELEMENTWISE,
	K_REDUCTION,
	K_SOFTMAX,
	K_LAYERNORM,
	K_RMSNORM,
	K_MATVEC,
	K_MATMUL,
	K_ATTENTION,
	K_DECODE
};
static const char *const kind_names[] = {"raw",    "elementwise", "reduction", "softmax", "layernorm", "rmsnorm",
                                         "matvec", "matmul",      "attention", "decode",  NULL};
static const char *const impl_names[] = {"fused", "eager", NULL};
static const char *const phase_names[] = {"prefill", "decode", NULL};
static const char *const unit_names[] = {"vector", "matrix", NULL};

typedef struct op_body {
	int kind;
	char label[64];
	mp_dtype dtype, a_dtype, b_dtype, c_dtype, compute_dtype, kv_dtype;
	uint64_t elements, inputs, outputs, rows, cols, m, k, n;
	uint64_t batch, heads, kv_heads, head_dim, q_tokens, kv_tokens;
	uint64_t bytes, l2_bytes, shared_memory_bytes, weight_bytes, parameters, kv_cache_bytes_per_sequence;
	double flops_per_element, flops, measured_seconds;
	bool causal;
	int implementation, phase, unit;
} op_body;

#define ALL_DTYPES MPC_ALL_DTYPES
#define BIG (UINT64_C(1) << 53)
#define F_U64(nm, req, lo)                                                                                             \
	{                                                                                                              \
		.name = #nm, .type = MPM_F_U64, .required = req, .offset = offsetof(op_body, nm), .min = lo,           \
		.max = BIG                                                                                             \
	}
#define F_DT(nm, req)                                                                                                  \
	{                                                                                                              \
		.name = #nm, .type = MPM_F_DTYPE, .required = req, .offset = offsetof(op_body, nm),                    \
		.dtypes = ALL_DTYPES                                                                                   \
	}
#define F_COMMON(dtreq)                                                                                                \
	{.name = "op", .type = MPM_F_ANY},                                                                             \
	    {.name = "label", .type = MPM_F_STRING, .offset = offsetof(op_body, label), .size = MPM_STR(op_body, label)},                   \
	    F_DT(dtype, dtreq),                                                                                        \
	{                                                                                                              \
		.name = "measured_seconds", .type = MPM_F_DOUBLE, .offset = offsetof(op_body, measured_seconds),       \
		.dmin = 1e-12, .dmax = 1e9                                                                             \
	}

static const mpm_field raw_fields[] = {
    F_COMMON(false),
    {.name = "flops",
     .type = MPM_F_DOUBLE,
     .required = true,
     .offset = offsetof(op_body, flops),
     .dmin = 0,
     .dmax = 1e30},
    F_U64(bytes, true, 0),
    F_U64(l2_bytes, false, 0),
    F_U64(shared_memory_bytes, false, 0),
    {.name = "unit", .type = MPM_F_ENUM, .offset = offsetof(op_body, unit), .names = unit_names},
};
static const mpm_field elementwise_fields[] = {
    F_COMMON(true),
    F_U64(elements, true, 1),
    F_U64(inputs, false, 0),
    F_U64(outputs, false, 0),
    {.name = "flops_per_element",
     .type = MPM_F_DOUBLE,
     .offset = offsetof(op_body, flops_per_element),
     .dmin = 0,
     .dmax = 1e6},
};
static const mpm_field rows_cols_fields[] = {F_COMMON(true), F_U64(rows, true, 1), F_U64(cols, true, 1)};
static const mpm_field matvec_fields[] = {
    F_COMMON(false),      F_U64(k, true, 1),    F_U64(n, true, 1),          F_DT(a_dtype, false),
    F_DT(b_dtype, false), F_DT(c_dtype, false), F_DT(compute_dtype, false),
};
static const mpm_field matmul_fields[] = {
    F_COMMON(false),      F_U64(m, true, 1),    F_U64(k, true, 1),    F_U64(n, true, 1),
    F_DT(a_dtype, false), F_DT(b_dtype, false), F_DT(c_dtype, false), F_DT(compute_dtype, false),
};
static const mpm_field attention_fields[] = {
    F_COMMON(true),
    F_U64(batch, false, 1),
    F_U64(heads, true, 1),
    F_U64(kv_heads, false, 1),
    F_U64(head_dim, true, 1),
    F_U64(q_tokens, false, 1),
    F_U64(kv_tokens, true, 1),
    F_DT(kv_dtype, false),
    {.name = "causal", .type = MPM_F_BOOL, .offset = offsetof(op_body, causal)},
    {.name = "implementation", .type = MPM_F_ENUM, .offset = offsetof(op_body, implementation), .names = impl_names},
    {.name = "phase", .type = MPM_F_ENUM, .offset = offsetof(op_body, phase), .names = phase_names},
};
/* parameters is required (the table says so to the help and the spec); decoding reads it from the table without
 * the flag (decode_fields_read) so that its absence gets decode_op's message, which says what it is */
#define DECODE_FIELDS(params_required)                                                                                 \
	F_COMMON(false), F_U64(weight_bytes, true, 1), F_U64(parameters, params_required, 1), F_U64(batch, false, 1),  \
	    F_U64(kv_cache_bytes_per_sequence, false, 0)
static const mpm_field decode_fields[] = {DECODE_FIELDS(true)};
static const mpm_field decode_fields_read[] = {DECODE_FIELDS(false)};

static const struct {
	const mpm_field *fields;
	size_t n;
} kind_tables[] = {
#define T(x)                                                                                                           \
	{                                                                                                              \
		x, sizeof(x) / sizeof(x[0])                                                                            \
	}
    [K_RAW] = T(raw_fields),           [K_ELEMENTWISE] = T(elementwise_fields), [K_REDUCTION] = T(rows_cols_fields),
    [K_SOFTMAX] = T(rows_cols_fields), [K_LAYERNORM] = T(rows_cols_fields),     [K_RMSNORM] = T(rows_cols_fields),
    [K_MATVEC] = T(matvec_fields),     [K_MATMUL] = T(matmul_fields),           [K_ATTENTION] = T(attention_fields),
    [K_DECODE] = T(decode_fields),
#undef T
};

/* An unlabelled operation's name: its kind, shape and data type ("matmul 8192x8192x8192 bf16"), so the table and
 * the chart tell two operations apart. */
static void default_label(op_body *b)
{
	const char *kn = kind_names[b->kind], *dt = mp_dtype_name(b->dtype);
	unsigned long long m = b->m, k = b->k, n = b->n;

	switch (b->kind) {
	case K_MATMUL:
		snprintf(b->label, sizeof(b->label), "%s %llux%llux%llu %s", kn, m, k, n, dt);
		break;
	case K_MATVEC:
		snprintf(b->label, sizeof(b->label), "%s %llux%llu %s", kn, k, n, dt);
		break;
	case K_ELEMENTWISE:
		snprintf(b->label, sizeof(b->label), "%s %llu %s", kn, (unsigned long long)b->elements, dt);
		break;
	case K_REDUCTION:
	case K_SOFTMAX:
	case K_LAYERNORM:
	case K_RMSNORM:
		snprintf(b->label, sizeof(b->label), "%s %llux%llu %s", kn, (unsigned long long)b->rows,
			 (unsigned long long)b->cols, dt);
		break;
	case K_ATTENTION:
		snprintf(b->label, sizeof(b->label), "%s %lluh q%llu kv%llu %s", kn, (unsigned long long)b->heads,
			 (unsigned long long)(b->q_tokens ? b->q_tokens : b->phase == 1 ? 1 : b->kv_tokens),
			 (unsigned long long)b->kv_tokens, dt);
		break;
	case K_DECODE:
		snprintf(b->label, sizeof(b->label), "%s batch %llu", kn, (unsigned long long)b->batch);
		break;
	default:
		snprintf(b->label, sizeof(b->label), "%s %.3g FLOP %.3g B", kn, b->flops, (double)b->bytes);
		break;
	}
}

/* Decodes ops[i] into a planner op; body keeps what the response echoes. */
static mp_status decode_op(const cJSON *o, const char *pointer, op_body *body, mp_op *op, mp_error *err)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "op");
	char field[96];
	mp_status st;
	int k = -1;

	memset(body, 0, sizeof(*body));
	memset(op, 0, sizeof(*op));
	snprintf(field, sizeof(field), "%s/op", pointer);
	if (!cJSON_IsObject(o))
		return mp_fail(err, MP_EINVAL, pointer, "an operation is an object with \"op\" and its shape");
	if (kind == NULL && cJSON_GetObjectItemCaseSensitive(o, "flops"))
		k = K_RAW;
	for (int i = 0; cJSON_IsString(kind) && kind_names[i]; i++)
		if (strcmp(kind->valuestring, kind_names[i]) == 0)
			k = i;
	if (k < 0)
		return mp_fail(err, MP_EINVAL, field,
		               "op must be one of: raw, elementwise, reduction, softmax, layernorm, rmsnorm, matvec, "
		               "matmul, attention, decode");
	body->kind = k;
	body->dtype = MP_DTYPE_BF16;
	body->inputs = 2;
	body->outputs = 1;
	body->flops_per_element = 1;
	body->batch = 1;
	body->causal = true;
	body->unit = MP_UNIT_MATRIX;
	if (k == K_DECODE) {
		/* a decode step's FLOPs are 2 x parameters x batch: without the count they would silently be 0, and
		 * weight_bytes does not determine it (bytes per parameter depend on the format) */
		mp_problems p = MP_PROBLEMS_INIT;

		if (cJSON_GetObjectItemCaseSensitive(o, "parameters") == NULL) {
			snprintf(field, sizeof(field), "%s/parameters", pointer);
			mp_problems_note(&p,
					 mp_fail(err, MP_EINVAL, field,
								    "parameters is required for a decode op: the "
								    "model's parameters (the active ones per token for "
								    "a mixture of experts), 2 FLOPs each per token and "
								    "sequence; weight_bytes does not determine it (14e9 "
								    "bytes are 7e9 parameters in bf16, 28e9 in int4): "
								    "an integer between 1 and 9007199254740992"),
					 err);
		}
		mp_problems_note(&p, mpm_decode_fields(o, pointer, decode_fields_read, MPM_COUNT(decode_fields_read),
						       body, err),
				 err);
		st = mp_problems_end(&p, err);
	} else {
		st = mpm_decode_fields(o, pointer, kind_tables[k].fields, kind_tables[k].n, body, err);
	}
	if (st != MP_OK)
		return st;
	if (body->label[0] == '\0')
		default_label(body);
	op->dtype = body->dtype;
	op->kind = k == K_DECODE ? MP_OP_RAW : (mp_op_kind)k;
	switch (k) {
	case K_RAW:
		op->flops = body->flops;
		op->bytes = body->bytes;
		op->l2_bytes = body->l2_bytes;
		op->shared_memory_bytes = body->shared_memory_bytes;
		op->unit = (mp_unit)body->unit;
		break;
	case K_ELEMENTWISE:
		op->elements = body->elements;
		op->inputs = body->inputs;
		op->outputs = body->outputs;
		op->flops_per_element = body->flops_per_element;
		break;
	case K_REDUCTION:
	case K_SOFTMAX:
	case K_LAYERNORM:
	case K_RMSNORM:
		op->rows = body->rows;
		op->cols = body->cols;
		break;
	case K_MATVEC:
	case K_MATMUL:
		op->m = k == K_MATVEC ? 1 : body->m;
		op->k = body->k;
		op->n = body->n;
		op->a_dtype = body->a_dtype;
		op->b_dtype = body->b_dtype;
		op->c_dtype = body->c_dtype;
		op->compute_dtype = body->compute_dtype;
		break;
	case K_ATTENTION:
		op->batch = body->batch;
		op->heads = body->heads;
		op->kv_heads = body->kv_heads ? body->kv_heads : body->heads;
		op->head_dim = body->head_dim;
		op->kv_tokens = body->kv_tokens;
		op->q_tokens = body->q_tokens ? body->q_tokens : body->phase == 1 ? 1 : body->kv_tokens;
		op->causal = body->causal;
		op->eager = body->implementation == 1;
		op->kv_dtype = body->kv_dtype;
		break;
	case K_DECODE: {
		/* the weights-only decode step plus each sequence's own KV reads (they do not batch) */
		uint64_t kv;

		op->unit = MP_UNIT_MATRIX;
		op->flops = 2.0 * (double)body->parameters * (double)body->batch;
		if (!mp_mul_u64(body->kv_cache_bytes_per_sequence, body->batch, &kv) ||
		    !mp_add_u64(body->weight_bytes, kv, &op->bytes))
			return mp_fail(err, MP_EOVERFLOW, pointer, "the decode step's bytes overflow 64 bits");
		break;
	}
	}
	return MP_OK;
}

/* ----- encoding ------------------------------------------------------------------------------------------- */

static const char *level_name(int l)
{
	return l == MP_LEVEL_DRAM ? "dram" : l == MP_LEVEL_L2 ? "l2" : "shared_memory";
}

static void roof_members(mpc_out *w, const mp_roof *r)
{
	mpc_w_num(w, "flops", r->flops);
	mpc_w_num(w, "bytes", r->bytes);
	mpc_w_num(w, "arithmetic_intensity_flops_per_byte", r->intensity_flops_per_byte);
	mpc_w_lit(w, "unit", r->unit == MP_UNIT_MATRIX ? "matrix" : "vector");
	mpc_w_lit(w, "peak_dtype", mp_dtype_name(r->peak_dtype));
	mpc_w_bool(w, "peak_fallback", r->peak_fallback);
	mpc_w_num(w, "peak_flops_per_second", r->peak_flops_per_second);
	mpc_w_num(w, "ridge_flops_per_byte", r->ridge_flops_per_byte);
	mpc_w_num(w, "attainable_flops_per_second", r->attainable_flops_per_second);
	mpc_w_num(w, "fraction_of_peak", r->fraction_of_peak);
	mpc_w_lit(w, "bound", r->compute_bound ? "compute" : "memory");
	mpc_w_num(w, "memory_time_seconds", r->memory_time_seconds);
	mpc_w_num(w, "compute_time_seconds", r->compute_time_seconds);
	mpc_w_num(w, "time_seconds", r->time_seconds);
	mpc_w_lit(w, "binding_level", level_name(r->binding_level));
	mpc_w_arr(w, "levels");
	for (int i = 0; i < MP_LEVEL_COUNT; i++) {
		const mp_level_roof *l = &r->level[i];

		if (!l->present)
			continue;
		mpc_w_obj(w, NULL);
		mpc_w_lit(w, "level", level_name(i));
		mpc_w_num(w, "bandwidth_bytes_per_second", l->bandwidth_bytes_per_second);
		mpc_w_num(w, "bytes", l->bytes);
		mpc_w_num(w, "arithmetic_intensity_flops_per_byte",
			  isfinite(l->intensity_flops_per_byte) ? l->intensity_flops_per_byte : 0);
		mpc_w_num(w, "attainable_flops_per_second", l->attainable_flops_per_second);
		mpc_w_num(w, "time_seconds", l->time_seconds);
		mpc_w_end(w);
	}
	mpc_w_end(w);
}

static void step_write(mpc_out *w, const char *key, const mp_step *s)
{
	mpc_w_obj(w, key);
	mpc_w_lit(w, "phase", s->phase == MP_PHASE_DECODE ? "decode" : "prefill");
	mpc_w_num(w, "step_seconds", s->step_seconds);
	mpc_w_num(w, "tokens_per_second_per_sequence", s->tokens_per_second_per_sequence);
	mpc_w_num(w, "tokens_per_second_total", s->tokens_per_second_total);
	mpc_w_lit(w, "bound", s->compute_bound ? "compute" : "memory");
	mpc_w_num(w, "memory_bound_seconds", s->memory_seconds);
	mpc_w_num(w, "compute_bound_seconds", s->compute_seconds);
	mpc_w_num(w, "flops", s->flops);
	mpc_w_num(w, "bytes", s->bytes);
	mpc_w_num(w, "weight_bytes", s->weight_bytes);
	mpc_w_num(w, "kv_cache_read_bytes", s->kv_read_bytes);
	if (s->active_experts > 0)
		mpc_w_num(w, "active_experts_per_moe_layer", s->active_experts);
	mpc_w_arr(w, "ops");
	for (size_t i = 0; i < s->nops; i++) {
		const mp_step_op *so = &s->ops[i];

		mpc_w_obj(w, NULL);
		mpc_w_str(w, "name", so->name);
		mpc_w_num(w, "count", so->count);
		mpc_w_num(w, "flops", so->roof.flops);
		mpc_w_num(w, "bytes", so->roof.bytes);
		mpc_w_num(w, "weight_bytes", so->weight_bytes);
		mpc_w_num(w, "arithmetic_intensity_flops_per_byte", so->roof.intensity_flops_per_byte);
		mpc_w_lit(w, "bound", so->roof.compute_bound ? "compute" : "memory");
		mpc_w_num(w, "time_seconds", so->roof.time_seconds);
		mpc_w_num(w, "total_seconds", so->time_seconds);
		mpc_w_end(w);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}

typedef struct transformer_body {
	mp_step_req req;
	int attention;
	char weight_dtype[24], kv_dtype[24];	/* the plan's names, aliases and "auto": mpc_inference_dtypes */
	mp_dtype compute_dtype;
} transformer_body;


static const mpm_field transformer_fields[] = {
    {.name = "model", .type = MPM_F_ANY, .required = true},
    /* weight_dtype and kv_cache_dtype as the inference plan reads them (names, aliases, gptq / awq, "auto", the
     * default), resolved per model and device as the plan resolves them (service: mps_inference_defaults) */
    {.name = "weight_dtype", .type = MPM_F_STRING, .offset = offsetof(transformer_body, weight_dtype),
     .size = MPM_STR(transformer_body, weight_dtype)},
    {.name = "kv_cache_dtype", .type = MPM_F_STRING, .offset = offsetof(transformer_body, kv_dtype),
     .size = MPM_STR(transformer_body, kv_dtype)},
    {.name = "compute_dtype",
     .type = MPM_F_DTYPE,
     .offset = offsetof(transformer_body, compute_dtype),
     .dtypes = MPC_COMPUTE_DTYPES},
    {.name = "activation_dtype",
     .type = MPM_F_DTYPE,
     .offset = offsetof(transformer_body, req.activation_dtype),
     .dtypes = MPM_DT(MP_DTYPE_FP32) | MPM_DT(MP_DTYPE_BF16) | MPM_DT(MP_DTYPE_FP16) | MPM_DT(MP_DTYPE_FP8_E4M3)},
    {.name = "batch_size",
     .type = MPM_F_U64,
     .offset = offsetof(transformer_body, req.batch_size),
     .min = 1,
     .max = MP_MAX_BATCH_SIZE},
    {.name = "context_tokens",
     .type = MPM_F_U64,
     .offset = offsetof(transformer_body, req.context_tokens),
     .min = 0,
     .max = MP_MAX_SEQUENCE_LENGTH},
    {.name = "prompt_tokens",
     .type = MPM_F_U64,
     .offset = offsetof(transformer_body, req.prompt_tokens),
     .min = 1,
     .max = MP_MAX_SEQUENCE_LENGTH},
    {.name = "tensor_parallel_size",
     .type = MPM_F_U64,
     .offset = offsetof(transformer_body, req.tensor_parallel_size),
     .min = 1,
     .max = MP_MAX_GPUS},
    {.name = "attention", .type = MPM_F_ENUM, .offset = offsetof(transformer_body, attention), .names = impl_names},
    {.name = "allow_beyond_max_position_embeddings",
     .type = MPM_F_BOOL,
     .offset = offsetof(transformer_body, req.allow_beyond_max_position)},
};


/* ----- requests ----------------------------------------------------------------------------------------- */

/* ops[i] (at pointer) into *out. */
static mp_status decode_one_op(const cJSON *o, const char *pointer, mps_roofline_op *out, mp_error *err)
{
	op_body b;
	mp_status st;

	memset(out, 0, sizeof(*out));
	snprintf(out->pointer, sizeof(out->pointer), "%s", pointer);
	st = decode_op(o, pointer, &b, &out->op, err);
	if (st != MP_OK)
		return st;
	out->op.json_pointer = NULL; /* set by the service to out->pointer, which outlives any copy of the op */
	snprintf(out->kind, sizeof(out->kind), "%s", kind_names[b.kind]);
	snprintf(out->label, sizeof(out->label), "%s", b.label);
	out->decode = b.kind == K_DECODE;
	out->batch = b.batch;
	out->measured_seconds = b.measured_seconds;
	return MP_OK;
}

/* The transformer object at `at` into *out, every problem recorded (mp_problems), the first returned. */
static mp_status decode_transformer_at(const cJSON *t, const char *at, mps_roofline_transformer *out, mp_error *err)
{
	mp_problems p = MP_PROBLEMS_INIT;
	transformer_body tb;
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(t, "weight_dtype");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(t, "kv_cache_dtype");
	mp_status st;
	char wfield[48], kfield[48], model[48];

	memset(&tb, 0, sizeof(tb));
	memset(out, 0, sizeof(*out));
	snprintf(out->pointer, sizeof(out->pointer), "%s", at);
	/* the members' pointers: "/transformer/weight_dtype" in a body, "?weight_dtype" in a query (as mp_fail_at
	 * writes them), so a problem recorded twice on the way reads the same both times */
	snprintf(wfield, sizeof(wfield), "%s%sweight_dtype", at, strcmp(at, "?") == 0 ? "" : "/");
	snprintf(kfield, sizeof(kfield), "%s%skv_cache_dtype", at, strcmp(at, "?") == 0 ? "" : "/");
	snprintf(model, sizeof(model), "%s%smodel", at, strcmp(at, "?") == 0 ? "" : "/");
	out->given = true;
	tb.req.batch_size = 1;
	tb.req.context_tokens = 4096;
	tb.req.prompt_tokens = 4096;
	st = mp_problems_note(&p, mpm_decode_fields(t, at, transformer_fields, MPM_COUNT(transformer_fields), &tb, err),
			      err);
	if (st == MP_ENOMEM || !cJSON_IsObject(t))
		return mp_problems_end(&p, err);
	/* the job the plan would decode from the same members: the dtypes auto unless given */
	snprintf(out->job.pointer, sizeof(out->job.pointer), "%s", at);
	mpc_inference_job_init(&out->job);
	mp_problems_note(&p,
			 mpc_inference_dtypes(cJSON_IsString(w) ? w->valuestring : NULL,
					      cJSON_IsString(k) ? k->valuestring : NULL, wfield, kfield, &out->job, err),
			 err);
	out->job.compute_dtype_given = cJSON_GetObjectItemCaseSensitive(t, "compute_dtype") != NULL;
	if (out->job.compute_dtype_given)
		out->job.opts.compute_dtype = tb.compute_dtype;
	tb.req.eager_attention = tb.attention == 1;
	out->req = tb.req;
	out->batch_given = cJSON_GetObjectItemCaseSensitive(t, "batch_size") != NULL;
	out->context_given = cJSON_GetObjectItemCaseSensitive(t, "context_tokens") != NULL;
	out->prompt_given = cJSON_GetObjectItemCaseSensitive(t, "prompt_tokens") != NULL;
	out->activation_given = cJSON_GetObjectItemCaseSensitive(t, "activation_dtype") != NULL;
	out->tp_given = cJSON_GetObjectItemCaseSensitive(t, "tensor_parallel_size") != NULL;
	mp_problems_note(&p,
			 mpc_model_ref_decode(cJSON_GetObjectItemCaseSensitive(t, "model"), model, true, &out->job.model,
					      err),
			 err);
	return mp_problems_end(&p, err);
}

static mp_status decode_transformer(const cJSON *t, mps_roofline_transformer *out, mp_error *err)
{
	return decode_transformer_at(t, "/transformer", out, err);
}

mp_status mpc_transformer_query_decode(mpc_query_fn get, void *ctx, mps_roofline_transformer *out, mp_error *err)
{
	/* the numbers first (1 to 4): a value of digits becomes a JSON number */
	static const char *const names[] = { "model", "batch_size", "context_tokens", "prompt_tokens",
					     "tensor_parallel_size", "weight_dtype", "kv_cache_dtype", "compute_dtype" };
	cJSON *t = cJSON_CreateObject();
	mp_status st;

	if (t == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = get(ctx, names[i]);
		char *end = NULL;
		double d;

		if (v == NULL)
			continue;
		d = i >= 1 && i <= 4 && v[0] >= '0' && v[0] <= '9' ? strtod(v, &end) : 0;
		mpc_add_item(t, names[i], end && *end == '\0' ? cJSON_CreateNumber(d) : cJSON_CreateString(v));
	}
	st = decode_transformer_at(t, "?", out, err);
	cJSON_Delete(t);
	if (st != MP_OK && strncmp(err->field, "?/", 2) == 0) /* "?/batch_size" is the query's "?batch_size" */
		memmove(err->field + 1, err->field + 2, strlen(err->field + 2) + 1);
	return st;
}

static const mpm_field roofline_fields[] = {
	{ .name = "device", .type = MPM_F_ANY, .required = true },
	{ .name = "ops", .type = MPM_F_ANY },
	{ .name = "ridge_dtype", .type = MPM_F_DTYPE, .dtypes = ALL_DTYPES },
	{ .name = "transformer", .type = MPM_F_ANY },
};

mp_status mpc_roofline_decode(const cJSON *body, mps_roofline_request *rq, mp_error *err)
{
	struct {
		mp_dtype ridge_dtype;
	} top = { MP_DTYPE_BF16 };
	const cJSON *ops = cJSON_GetObjectItemCaseSensitive(body, "ops"), *o;
	mp_status st;
	int i = 0;

	memset(rq, 0, sizeof(*rq));
	snprintf(rq->ridge_pointer, sizeof(rq->ridge_pointer), "/ridge_dtype");
	st = mpm_decode_fields(body, "", roofline_fields, MPM_COUNT(roofline_fields), &top, err);
	if (st != MP_OK)
		return st;
	rq->ridge_dtype = top.ridge_dtype;
	rq->ridge_dtype_given = cJSON_GetObjectItemCaseSensitive(body, "ridge_dtype") != NULL;
	st = mpc_device_ref_decode(cJSON_GetObjectItemCaseSensitive(body, "device"), "/device", &rq->device, err);
	if (st != MP_OK)
		return st;
	if (ops && (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) > MPS_ROOFLINE_MAX_OPS))
		return mp_fail(err, MP_EINVAL, "/ops", "ops must be an array of at most %d operations",
			       MPS_ROOFLINE_MAX_OPS);
	if (ops == NULL && cJSON_GetObjectItemCaseSensitive(body, "transformer") == NULL)
		return mp_fail(err, MP_EINVAL, "/ops", "give ops (an array of operations) or transformer (a model)");
	rq->ops_given = ops != NULL;
	cJSON_ArrayForEach(o, ops)
	{
		char pointer[32];

		snprintf(pointer, sizeof(pointer), "/ops/%d", i++);
		st = decode_one_op(o, pointer, &rq->ops[rq->nops], err);
		if (st != MP_OK)
			return st;
		rq->nops++;
	}
	if (cJSON_GetObjectItemCaseSensitive(body, "transformer"))
		return decode_transformer(cJSON_GetObjectItemCaseSensitive(body, "transformer"), &rq->transformer, err);
	return MP_OK;
}

/* A compact spec ("matmul:m=1,k=4096,n=4096,dtype=bf16") as the JSON operation object it stands for. */
mp_status mpc_op_spec_json(const char *spec, const char *field, cJSON **out, mp_error *err)
{
	const char *colon = strchr(spec, ':');
	cJSON *o = cJSON_CreateObject();
	char buf[512], *p, *next;

	*out = NULL;
	if (o == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	if (strlen(spec) >= sizeof(buf) || colon == NULL || colon == spec) {
		cJSON_Delete(o);
		return mp_fail(err, MP_EINVAL, field,
			       "an operation is KIND:key=value,... (e.g. matmul:m=1,k=4096,n=4096,dtype=bf16), at most "
			       "511 characters");
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)(colon - spec), spec);
	cJSON_AddStringToObject(o, "op", buf);
	snprintf(buf, sizeof(buf), "%s", colon + 1);
	for (p = buf; p; p = next) {
		char *eq, *end = NULL;
		double v;

		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		eq = strchr(p, '=');
		if (eq == NULL || eq == p) {
			cJSON_Delete(o);
			return mp_fail(err, MP_EINVAL, field, "'%.40s' is not key=value", p);
		}
		*eq++ = '\0';
		if (cJSON_GetObjectItemCaseSensitive(o, p)) {
			cJSON_Delete(o);
			return mp_fail(err, MP_EINVAL, field, "'%.40s' is given twice", p);
		}
		v = strtod(eq, &end);
		if (*eq && end && *end == '\0' && isfinite(v))
			cJSON_AddNumberToObject(o, p, v);
		else if (strcmp(eq, "true") == 0 || strcmp(eq, "false") == 0)
			cJSON_AddBoolToObject(o, p, eq[0] == 't');
		else
			cJSON_AddStringToObject(o, p, eq);
	}
	*out = o;
	return MP_OK;
}

mp_status mpc_op_spec_decode(const char *spec, const char *field, mps_roofline_op *op, mp_error *err)
{
	cJSON *o = NULL;
	mp_status st = mpc_op_spec_json(spec, field, &o, err);

	if (st == MP_OK) {
		/* the spec is one value: its (first) problem is named by the argument that carries it */
		mp_error e = { { 0 }, { 0 }, NULL };

		st = decode_one_op(o, "", op, &e);
		if (st != MP_OK)
			mp_error_keep(err, mp_fail(err, st, field, "%s", e.message));
		snprintf(op->pointer, sizeof(op->pointer), "%s", field);
	}
	cJSON_Delete(o);
	return st;
}

/* ----- the answer --------------------------------------------------------------------------------------- */

/* The transformer's request as analysed, each value with where it came from (the plan's request echo). */
static void transformer_request_write(mpc_out *w, const mps_roofline_result *r)
{
	const mp_step_req *q = &r->step;

	mpc_w_obj(w, "request");
	mpc_w_lit(w, "weight_dtype", mp_dtype_name(q->weight_dtype));
	mpc_w_str(w, "weight_dtype_from", r->choice.weight_dtype_from ? r->choice.weight_dtype_from : "request");
	if (q->weight_dtype == MP_DTYPE_INT4)
		mpc_w_lit(w, "int4_scheme", r->int4_scheme == MP_INT4_AWQ ? "awq" : "gptq");
	mpc_w_lit(w, "kv_cache_dtype", mp_dtype_name(q->kv_cache_dtype));
	mpc_w_str(w, "kv_cache_dtype_from", r->choice.kv_cache_dtype_from ? r->choice.kv_cache_dtype_from : "request");
	mpc_w_lit(w, "compute_dtype", mp_dtype_name(r->compute_dtype ? r->compute_dtype : MP_DTYPE_BF16));
	mpc_w_str(w, "compute_dtype_from", r->choice.compute_dtype_from ? r->choice.compute_dtype_from : "request");
	mpc_w_lit(w, "activation_dtype", mp_dtype_name(mp_step_activation_dtype(q)));
	mpc_w_str(w, "activation_dtype_from", r->activation_dtype_from);
	mpc_w_num(w, "batch_size", (double)q->batch_size);
	mpc_w_str(w, "batch_size_from", r->batch_size_from);
	mpc_w_num(w, "context_tokens", (double)q->context_tokens);
	mpc_w_str(w, "context_tokens_from", r->context_tokens_from);
	mpc_w_num(w, "prompt_tokens", (double)q->prompt_tokens);
	mpc_w_str(w, "prompt_tokens_from", r->prompt_tokens_from);
	mpc_w_u64(w, "tensor_parallel_size", q->tensor_parallel_size ? q->tensor_parallel_size : 1);
	mpc_w_str(w, "tensor_parallel_size_from", r->tensor_parallel_size_from ? r->tensor_parallel_size_from : "default");
	mpc_w_lit(w, "attention", q->eager_attention ? "eager" : "fused");
	mpc_w_bool(w, "allow_beyond_max_position_embeddings", q->allow_beyond_max_position);
	mpc_w_end(w);
}

static void transformer_write(mpc_out *w, const mps_roofline_result *r)
{
	mpc_w_obj(w, "transformer");
	mpc_model_write(w, "model", &r->model);
	transformer_request_write(w, r);
	step_write(w, "decode", &r->decode);
	step_write(w, "prefill", &r->prefill);
	mpc_w_u64_or_null(w, "decode_compute_bound_batch", r->decode_compute_bound_batch);
	mpc_w_end(w);
}

void mpc_roofline_write(mpc_out *w, const mps_roofline_request *rq, const mps_roofline_result *r)
{
	const mp_device *hw = &r->device.hw;
	char more[96];

	mpc_w_obj(w, NULL);
	mpc_w_obj(w, "device");
	mpc_w_str_or_null(w, "id", r->device.id);
	mpc_w_str(w, "name", r->device.name);
	mpc_w_num(w, "memory_bandwidth_bytes_per_second", hw->memory_bandwidth_bytes_per_second);
	mpc_w_num(w, "peak_flops_per_second", r->peak_flops_per_second);
	mpc_w_lit(w, "peak_dtype", mp_dtype_name(r->peak_dtype));
	if (r->vector_flops_per_second > 0)
		mpc_w_num(w, "vector_flops_per_second", r->vector_flops_per_second);
	if (hw->l2_bandwidth_bytes_per_second > 0)
		mpc_w_num(w, "l2_bandwidth_bytes_per_second", hw->l2_bandwidth_bytes_per_second);
	if (hw->shared_memory_bandwidth_bytes_per_second > 0)
		mpc_w_num(w, "shared_memory_bandwidth_bytes_per_second", hw->shared_memory_bandwidth_bytes_per_second);
	mpc_w_end(w);
	mpc_w_lit(w, "ridge_dtype", mp_dtype_name(r->ridge_dtype));
	mpc_w_num(w, "ridge_flops_per_byte", r->ridge_flops_per_byte);
	if (r->have_littles_law) {
		mpc_w_obj(w, "littles_law");
		mpc_w_num(w, "latency_seconds", r->littles_law.latency_seconds);
		mpc_w_num(w, "bytes_in_flight", r->littles_law.bytes_in_flight);
		if (hw->sm_count)
			mpc_w_num(w, "bytes_in_flight_per_sm", r->littles_law.bytes_in_flight_per_sm);
		else
			mpc_w_null(w, "bytes_in_flight_per_sm");
		mpc_w_end(w);
	}
	mpc_w_arr(w, "ops");
	for (size_t i = 0; i < r->nops; i++) {
		const mps_roofline_op *op = &rq->ops[i];
		const mps_roofline_op_result *res = &r->ops[i];

		mpc_w_obj(w, NULL);
		mpc_w_str(w, "label", op->label);
		mpc_w_str(w, "op", op->kind);
		mpc_w_lit(w, "dtype", mp_dtype_name(op->op.dtype));
		roof_members(w, &res->roof);
		if (op->decode && res->roof.time_seconds > 0) {
			mpc_w_num(w, "tokens_per_second_per_sequence", 1.0 / res->roof.time_seconds);
			mpc_w_num(w, "tokens_per_second_total", (double)op->batch / res->roof.time_seconds);
		}
		if (res->measured) {
			const mp_measurement_check *mc = &res->check;

			mpc_w_obj(w, "measured");
			mpc_w_num(w, "time_seconds", mc->measured_seconds);
			mpc_w_num(w, "effective_bandwidth_bytes_per_second", mc->effective_bandwidth_bytes_per_second);
			mpc_w_num(w, "effective_flops_per_second", mc->effective_flops_per_second);
			mpc_w_num(w, "fraction_of_floor", mc->achieved_fraction);
			mpc_w_bool(w, "above_roof", mc->above_roof);
			mpc_w_end(w);
		}
		mpc_w_end(w);
	}
	mpc_w_end(w);
	/* the service's warnings, then a measurement that beats its floor (the profile or the measurement is wrong) */
	mpc_w_arr(w, "warnings");
	for (size_t i = 0; i < r->warnings.n && i < MPS_MAX_WARNINGS; i++)
		mpc_w_str(w, NULL, r->warnings.text[i]);
	if (mps_warnings_left_out(&r->warnings, more, sizeof(more)))
		mpc_w_str(w, NULL, more);
	for (size_t i = 0; i < r->nops; i++) {
		const mps_roofline_op *op = &rq->ops[i];
		const mps_roofline_op_result *res = &r->ops[i];
		const mp_measurement_check *mc = &res->check;
		char msg[256];

		if (!res->measured || !mc->above_roof)
			continue;
		snprintf(msg, sizeof(msg),
			 "%s: the measured %.4g s beats the roofline floor %.4g s (effective %.4g GB/s against %.4g GB/s): "
			 "the device profile or the measurement is wrong",
			 op->pointer, mc->measured_seconds, res->roof.time_seconds,
			 mc->effective_bandwidth_bytes_per_second / 1e9, hw->memory_bandwidth_bytes_per_second / 1e9);
		mpc_w_str(w, NULL, msg);
	}
	mpc_w_end(w);
	if (r->have_transformer)
		transformer_write(w, r);
	mpc_w_arr(w, "notes");
	mpc_w_lit(w, NULL,
		  "bytes count each input read once and each output written once (compulsory traffic), so time_seconds "
		  "= max(bytes / bandwidth, flops / peak) is a floor, not a prediction.");
	mpc_w_lit(w, NULL,
		  "Peaks are dense: matrix work uses the tensor-core peak of its compute dtype, vector work (elementwise, "
		  "norms, softmax, reductions) the CUDA-core rate; peak_fallback marks a peak taken from another dtype.");
	mpc_w_end(w);
	mpc_w_end(w);
}

/* The roof a point sits under: the chart roof with the same peak and unit, added (or named) when new. */
static size_t chart_roof(mpc_chart *c, const mp_roof *ro)
{
	bool vector = ro->unit == MP_UNIT_VECTOR;
	const char *dt = mp_dtype_name(ro->peak_dtype);

	for (size_t k = 0; k < c->nroofs; k++) {
		mpc_chart_roof *rf = &c->roofs[k];

		if (rf->vector != vector || rf->flops_per_second != ro->peak_flops_per_second)
			continue;
		/* another data type with the same peak: listed with it ("bf16, fp16 matrix") */
		if (strstr(rf->label, dt) == NULL) {
			char base[48];
			size_t n = strcspn(rf->label, " ");

			snprintf(base, sizeof(base), "%.*s, %s %s", (int)n, rf->label, dt, vector ? "vector" : "matrix");
			snprintf(rf->label, sizeof(rf->label), "%s", base);
		}
		return k;
	}
	if (c->nroofs == MPC_CHART_MAX_ROOFS)
		return 0;
	c->roofs[c->nroofs].flops_per_second = ro->peak_flops_per_second;
	c->roofs[c->nroofs].vector = vector;
	snprintf(c->roofs[c->nroofs].label, sizeof(c->roofs[c->nroofs].label), "%s %s", dt, vector ? "vector" : "matrix");
	return c->nroofs++;
}

static void chart_point(mpc_chart *c, const char *label, const mp_roof *ro)
{
	mpc_chart_point *p;

	if (c->npoints >= MPC_CHART_MAX_POINTS)
		return;
	p = &c->points[c->npoints++];
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->intensity = ro->intensity_flops_per_byte;
	p->attainable = ro->attainable_flops_per_second;
	p->compute_bound = ro->compute_bound;
	p->roof = ro->peak_flops_per_second > 0 ? chart_roof(c, ro) : 0;
}

void mpc_chart_from_result(const mps_roofline_request *rq, const mps_roofline_result *r, mpc_chart *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->title, sizeof(c->title), "Roofline: %s", r->device.name[0] ? r->device.name : "device");
	c->bandwidth = r->device.hw.memory_bandwidth_bytes_per_second;
	c->peak = r->peak_flops_per_second;
	snprintf(c->peak_label, sizeof(c->peak_label), "%s tensor", mp_dtype_name(r->peak_dtype));
	c->vector_peak = r->vector_flops_per_second;
	c->l2_bandwidth = r->device.hw.l2_bandwidth_bytes_per_second;
	/* roofs[0]: the ridge's */
	c->nroofs = 1;
	c->roofs[0].flops_per_second = r->peak_flops_per_second;
	snprintf(c->roofs[0].label, sizeof(c->roofs[0].label), "%s matrix", mp_dtype_name(r->peak_dtype));
	for (size_t i = 0; i < r->nops; i++)
		chart_point(c, rq->ops[i].label[0] ? rq->ops[i].label : rq->ops[i].kind, &r->ops[i].roof);
	if (r->have_transformer) {
		c->have_steps = true;
		snprintf(c->weight_dtype, sizeof(c->weight_dtype), "%s", mp_dtype_name(r->step.weight_dtype));
		snprintf(c->kv_cache_dtype, sizeof(c->kv_cache_dtype), "%s", mp_dtype_name(r->step.kv_cache_dtype));
		c->batch_size = r->step.batch_size;
		c->context_tokens = r->step.context_tokens;
		c->prompt_tokens = r->step.prompt_tokens;
		c->tensor_parallel_size = r->step.tensor_parallel_size ? r->step.tensor_parallel_size : 1;
		c->decode_step_seconds = r->decode.step_seconds;
		c->prefill_seconds = r->prefill.step_seconds;
	}
	for (int ph = 0; r->have_transformer && ph < 2; ph++) {
		const mp_step *st = ph ? &r->prefill : &r->decode;

		for (size_t i = 0; i < st->nops; i++) {
			char label[64];

			snprintf(label, sizeof(label), "%s %s", ph ? "prefill" : "decode", st->ops[i].name);
			chart_point(c, label, &st->ops[i].roof);
		}
	}
}

const mpm_field *mpc_transformer_field_table(size_t *n)
{
	*n = MPM_COUNT(transformer_fields);
	return transformer_fields;
}

const mpm_field *mpc_op_field_table(size_t kind, const char **name, size_t *n)
{
	if (kind >= sizeof(kind_tables) / sizeof(kind_tables[0]))
		return NULL;
	*name = kind_names[kind];
	*n = kind_tables[kind].n;
	return kind_tables[kind].fields;
}
