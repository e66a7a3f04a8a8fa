/*
 * roofline_doc.c: decoding of roofline requests (device id or inline profile, operations by field table, the
 * optional transformer step analysis) and encoding of the response; the inference plan's performance block;
 * compact operation specs for query strings and the CLI. Moves values between JSON and planner structs only:
 * every figure is computed by planner/roofline.c and planner/step.c.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "roofline_doc.h"

#define ADD_NUM(o, k, v) cJSON_AddNumberToObject((o), (k), (double)(v))

/* ----- devices ------------------------------------------------------------------------------------------ */

typedef struct inline_device {
	char id[MP_STORE_ID_MAX];
	char name[128];
	double bandwidth, l2_bandwidth, shared_bandwidth, latency_seconds, latency_cycles, clock_hz;
	uint64_t sm_count, memory_bytes, l2_cache_bytes;
} inline_device;

#define DBL(nm, member, lo, hi, req)                                                                                   \
	{                                                                                                              \
		.name = nm, .type = MPD_F_DOUBLE, .required = req, .offset = offsetof(inline_device, member),          \
		.dmin = lo, .dmax = hi                                                                                 \
	}

static const mpd_field device_fields[] = {
    {.name = "id", .type = MPD_F_STRING, .offset = offsetof(inline_device, id), .size = MP_STORE_ID_MAX},
    {.name = "name", .type = MPD_F_STRING, .offset = offsetof(inline_device, name), .size = 128},
    DBL("memory_bandwidth_bytes_per_second", bandwidth, 1e3, 1e16, true),
    {.name = "peak_flops_per_second", .type = MPD_F_ANY, .required = true},
    {.name = "vector_flops_per_second", .type = MPD_F_ANY},
    DBL("l2_bandwidth_bytes_per_second", l2_bandwidth, 1e3, 1e17, false),
    DBL("shared_memory_bandwidth_bytes_per_second", shared_bandwidth, 1e3, 1e18, false),
    DBL("memory_latency_seconds", latency_seconds, 1e-12, 1, false),
    DBL("memory_latency_cycles", latency_cycles, 1, 1e9, false),
    DBL("boost_clock_hz", clock_hz, 1e3, 1e12, false),
    {.name = "sm_count", .type = MPD_F_U64, .offset = offsetof(inline_device, sm_count), .min = 0, .max = 1 << 20},
    {.name = "memory_bytes",
     .type = MPD_F_U64,
     .offset = offsetof(inline_device, memory_bytes),
     .min = 0,
     .max = UINT64_C(1) << 53},
    {.name = "l2_cache_bytes",
     .type = MPD_F_U64,
     .offset = offsetof(inline_device, l2_cache_bytes),
     .min = 0,
     .max = UINT64_C(1) << 53},
};

/* {"bf16": 989.4e12, ...} into rates[]; errors name "<pointer>/<key>". */
static mp_status decode_peaks(const cJSON *o, const char *pointer, double rates[MP_DTYPE_COUNT], bool required,
                              mp_error *err)
{
	const cJSON *v;
	char field[96];
	int n = 0;

	if (o == NULL && !required)
		return MP_OK;
	if (!cJSON_IsObject(o))
		return mp_fail(err, MP_EINVAL, pointer, "expected an object keyed by dtype, e.g. {\"bf16\": 9.894e14}");
	cJSON_ArrayForEach(v, o)
	{
		mp_dtype dt = mp_dtype_from_name(v->string);

		snprintf(field, sizeof(field), "%s/%.40s", pointer, v->string);
		if (dt == MP_DTYPE_INVALID)
			return mp_fail(err, MP_EINVAL, field,
			               "'%.40s' is not a dtype (fp64, fp32, tf32, bf16, fp16, "
			               "fp8_e4m3, fp8_e5m2, int8, ...)",
			               v->string);
		if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || v->valuedouble > 1e19)
			return mp_fail(err, MP_EINVAL, field, "a peak is a dense rate in FLOP/s, > 0 and <= 1e19");
		rates[dt] = v->valuedouble;
		n++;
	}
	if (required && n == 0)
		return mp_fail(err, MP_EINVAL, pointer, "give at least one peak, e.g. {\"bf16\": 9.894e14}");
	return MP_OK;
}

typedef struct resolved_device {
	char id[MP_STORE_ID_MAX]; /* "" for an inline profile without one */
	char name[128];
	mp_device hw;
} resolved_device;

static mp_status resolve_device(mp_store *store, const cJSON *v, resolved_device *out, mp_error *err)
{
	mp_status st;

	memset(out, 0, sizeof(*out));
	if (cJSON_IsString(v)) {
		mp_store_device *sd = calloc(1, sizeof(*sd));

		if (sd == NULL)
			return mp_fail(err, MP_ENOMEM, "", "out of memory");
		st = mp_store_device_get(store, v->valuestring, sd, err);
		if (st == MP_OK) {
			snprintf(out->id, sizeof(out->id), "%s", sd->id);
			snprintf(out->name, sizeof(out->name), "%s", sd->name);
			out->hw = sd->hw;
		} else if (st == MP_ENOTFOUND) {
			mp_fail(err, MP_ENOTFOUND, "/device", "no device '%.60s'; GET /v1/devices lists them",
			        v->valuestring);
		}
		free(sd);
		return st;
	}
	if (cJSON_IsObject(v)) {
		inline_device in;

		memset(&in, 0, sizeof(in));
		st = mpd_decode_fields(v, "/device", device_fields, sizeof(device_fields) / sizeof(device_fields[0]),
		                       &in, err);
		if (st == MP_OK)
			st = decode_peaks(cJSON_GetObjectItemCaseSensitive(v, "peak_flops_per_second"),
			                  "/device/peak_flops_per_second", out->hw.peak_flops_per_second, true, err);
		if (st == MP_OK)
			st = decode_peaks(cJSON_GetObjectItemCaseSensitive(v, "vector_flops_per_second"),
			                  "/device/vector_flops_per_second", out->hw.vector_flops_per_second, false,
			                  err);
		if (st != MP_OK)
			return st;
		if (in.latency_cycles > 0 && in.latency_seconds > 0)
			return mp_fail(
			    err, MP_EINVAL, "/device/memory_latency_cycles",
			    "give memory_latency_seconds or memory_latency_cycles (with boost_clock_hz), not both");
		if (in.latency_cycles > 0 && !(in.clock_hz > 0))
			return mp_fail(err, MP_EINVAL, "/device/boost_clock_hz",
			               "memory_latency_cycles needs boost_clock_hz to become seconds");
		snprintf(out->id, sizeof(out->id), "%s", in.id);
		snprintf(out->name, sizeof(out->name), "%s", in.name[0] ? in.name : "inline profile");
		out->hw.memory_bandwidth_bytes_per_second = in.bandwidth;
		out->hw.l2_bandwidth_bytes_per_second = in.l2_bandwidth;
		out->hw.shared_memory_bandwidth_bytes_per_second = in.shared_bandwidth;
		out->hw.memory_latency_seconds =
		    in.latency_cycles > 0 ? in.latency_cycles / in.clock_hz : in.latency_seconds;
		out->hw.boost_clock_hz = in.clock_hz;
		out->hw.sm_count = (uint32_t)in.sm_count;
		out->hw.memory_bytes = in.memory_bytes;
		out->hw.l2_cache_bytes = in.l2_cache_bytes;
		return MP_OK;
	}
	return mp_fail(err, MP_EINVAL, "/device",
	               "device is required: a stored id (\"h100-sxm5-80gb\") or an inline profile with "
	               "memory_bandwidth_bytes_per_second and peak_flops_per_second");
}

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

#define ALL_DTYPES (0xffffffffu & ~1u)
#define BIG (UINT64_C(1) << 53)
#define F_U64(nm, req, lo)                                                                                             \
	{                                                                                                              \
		.name = #nm, .type = MPD_F_U64, .required = req, .offset = offsetof(op_body, nm), .min = lo,           \
		.max = BIG                                                                                             \
	}
#define F_DT(nm, req)                                                                                                  \
	{                                                                                                              \
		.name = #nm, .type = MPD_F_DTYPE, .required = req, .offset = offsetof(op_body, nm),                    \
		.dtypes = ALL_DTYPES                                                                                   \
	}
#define F_COMMON(dtreq)                                                                                                \
	{.name = "op", .type = MPD_F_ANY},                                                                             \
	    {.name = "label", .type = MPD_F_STRING, .offset = offsetof(op_body, label), .size = 64},                   \
	    F_DT(dtype, dtreq),                                                                                        \
	{                                                                                                              \
		.name = "measured_seconds", .type = MPD_F_DOUBLE, .offset = offsetof(op_body, measured_seconds),       \
		.dmin = 1e-12, .dmax = 1e9                                                                             \
	}

static const mpd_field raw_fields[] = {
    F_COMMON(false),
    {.name = "flops",
     .type = MPD_F_DOUBLE,
     .required = true,
     .offset = offsetof(op_body, flops),
     .dmin = 0,
     .dmax = 1e30},
    F_U64(bytes, true, 0),
    F_U64(l2_bytes, false, 0),
    F_U64(shared_memory_bytes, false, 0),
    {.name = "unit", .type = MPD_F_ENUM, .offset = offsetof(op_body, unit), .names = unit_names},
};
static const mpd_field elementwise_fields[] = {
    F_COMMON(true),
    F_U64(elements, true, 1),
    F_U64(inputs, false, 0),
    F_U64(outputs, false, 0),
    {.name = "flops_per_element",
     .type = MPD_F_DOUBLE,
     .offset = offsetof(op_body, flops_per_element),
     .dmin = 0,
     .dmax = 1e6},
};
static const mpd_field rows_cols_fields[] = {F_COMMON(true), F_U64(rows, true, 1), F_U64(cols, true, 1)};
static const mpd_field matvec_fields[] = {
    F_COMMON(false),      F_U64(k, true, 1),    F_U64(n, true, 1),          F_DT(a_dtype, false),
    F_DT(b_dtype, false), F_DT(c_dtype, false), F_DT(compute_dtype, false),
};
static const mpd_field matmul_fields[] = {
    F_COMMON(false),      F_U64(m, true, 1),    F_U64(k, true, 1),    F_U64(n, true, 1),
    F_DT(a_dtype, false), F_DT(b_dtype, false), F_DT(c_dtype, false), F_DT(compute_dtype, false),
};
static const mpd_field attention_fields[] = {
    F_COMMON(true),
    F_U64(batch, false, 1),
    F_U64(heads, true, 1),
    F_U64(kv_heads, false, 1),
    F_U64(head_dim, true, 1),
    F_U64(q_tokens, false, 1),
    F_U64(kv_tokens, true, 1),
    F_DT(kv_dtype, false),
    {.name = "causal", .type = MPD_F_BOOL, .offset = offsetof(op_body, causal)},
    {.name = "implementation", .type = MPD_F_ENUM, .offset = offsetof(op_body, implementation), .names = impl_names},
    {.name = "phase", .type = MPD_F_ENUM, .offset = offsetof(op_body, phase), .names = phase_names},
};
static const mpd_field decode_fields[] = {
    F_COMMON(false),
    F_U64(weight_bytes, true, 1),
    F_U64(parameters, false, 0),
    F_U64(batch, false, 1),
    F_U64(kv_cache_bytes_per_sequence, false, 0),
};

static const struct {
	const mpd_field *fields;
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
	st = mpd_decode_fields(o, pointer, kind_tables[k].fields, kind_tables[k].n, body, err);
	if (st != MP_OK)
		return st;
	if (body->label[0] == '\0')
		snprintf(body->label, sizeof(body->label), "%s", kind_names[k]);
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

static void add_roof(cJSON *o, const mp_roof *r)
{
	cJSON *levels;

	ADD_NUM(o, "flops", r->flops);
	ADD_NUM(o, "bytes", r->bytes);
	ADD_NUM(o, "arithmetic_intensity_flops_per_byte", r->intensity_flops_per_byte);
	cJSON_AddStringToObject(o, "unit", r->unit == MP_UNIT_MATRIX ? "matrix" : "vector");
	cJSON_AddStringToObject(o, "peak_dtype", mp_dtype_name(r->peak_dtype));
	cJSON_AddBoolToObject(o, "peak_fallback", r->peak_fallback);
	ADD_NUM(o, "peak_flops_per_second", r->peak_flops_per_second);
	ADD_NUM(o, "ridge_flops_per_byte", r->ridge_flops_per_byte);
	ADD_NUM(o, "attainable_flops_per_second", r->attainable_flops_per_second);
	ADD_NUM(o, "fraction_of_peak", r->fraction_of_peak);
	cJSON_AddStringToObject(o, "bound", r->compute_bound ? "compute" : "memory");
	ADD_NUM(o, "memory_time_seconds", r->memory_time_seconds);
	ADD_NUM(o, "compute_time_seconds", r->compute_time_seconds);
	ADD_NUM(o, "time_seconds", r->time_seconds);
	cJSON_AddStringToObject(o, "binding_level", level_name(r->binding_level));
	levels = cJSON_AddArrayToObject(o, "levels");
	for (int i = 0; i < MP_LEVEL_COUNT; i++) {
		const mp_level_roof *l = &r->level[i];
		cJSON *e;

		if (!l->present)
			continue;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "level", level_name(i));
		ADD_NUM(e, "bandwidth_bytes_per_second", l->bandwidth_bytes_per_second);
		ADD_NUM(e, "bytes", l->bytes);
		ADD_NUM(e, "arithmetic_intensity_flops_per_byte",
		        isfinite(l->intensity_flops_per_byte) ? l->intensity_flops_per_byte : 0);
		ADD_NUM(e, "attainable_flops_per_second", l->attainable_flops_per_second);
		ADD_NUM(e, "time_seconds", l->time_seconds);
		cJSON_AddItemToArray(levels, e);
	}
}

static cJSON *step_json(const mp_step *s)
{
	cJSON *o = cJSON_CreateObject(), *ops;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "phase", s->phase == MP_PHASE_DECODE ? "decode" : "prefill");
	ADD_NUM(o, "step_seconds", s->step_seconds);
	ADD_NUM(o, "tokens_per_second_per_sequence", s->tokens_per_second_per_sequence);
	ADD_NUM(o, "tokens_per_second_total", s->tokens_per_second_total);
	cJSON_AddStringToObject(o, "bound", s->compute_bound ? "compute" : "memory");
	ADD_NUM(o, "memory_bound_seconds", s->memory_seconds);
	ADD_NUM(o, "compute_bound_seconds", s->compute_seconds);
	ADD_NUM(o, "flops", s->flops);
	ADD_NUM(o, "bytes", s->bytes);
	ADD_NUM(o, "weight_bytes", s->weight_bytes);
	ADD_NUM(o, "kv_cache_read_bytes", s->kv_read_bytes);
	if (s->active_experts > 0)
		ADD_NUM(o, "active_experts_per_moe_layer", s->active_experts);
	ops = cJSON_AddArrayToObject(o, "ops");
	for (size_t i = 0; i < s->nops; i++) {
		const mp_step_op *so = &s->ops[i];
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "name", so->name);
		ADD_NUM(e, "count", so->count);
		ADD_NUM(e, "flops", so->roof.flops);
		ADD_NUM(e, "bytes", so->roof.bytes);
		ADD_NUM(e, "weight_bytes", so->weight_bytes);
		ADD_NUM(e, "arithmetic_intensity_flops_per_byte", so->roof.intensity_flops_per_byte);
		cJSON_AddStringToObject(e, "bound", so->roof.compute_bound ? "compute" : "memory");
		ADD_NUM(e, "time_seconds", so->roof.time_seconds);
		ADD_NUM(e, "total_seconds", so->time_seconds);
		cJSON_AddItemToArray(ops, e);
	}
	return o;
}

/* ----- transformer block ---------------------------------------------------------------------------------- */

typedef struct transformer_body {
	mp_step_req req;
	int attention;
	char kv_dtype[16];
} transformer_body;

#define WDT                                                                                                            \
	(MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3) |           \
	 MPD_DT(MP_DTYPE_FP8_E5M2) | MPD_DT(MP_DTYPE_INT8) | MPD_DT(MP_DTYPE_INT4) | MPD_DT(MP_DTYPE_NF4) |            \
	 MPD_DT(MP_DTYPE_Q8_0) | MPD_DT(MP_DTYPE_Q4_0) | MPD_DT(MP_DTYPE_Q4_K) | MPD_DT(MP_DTYPE_Q5_K) |               \
	 MPD_DT(MP_DTYPE_Q6_K))

static const mpd_field transformer_fields[] = {
    {.name = "model", .type = MPD_F_ANY, .required = true},
    {.name = "weight_dtype",
     .type = MPD_F_DTYPE,
     .offset = offsetof(transformer_body, req.weight_dtype),
     .dtypes = WDT},
    /* the plan's KV formats (mpd_kv_dtype), not every weight format */
    {.name = "kv_cache_dtype", .type = MPD_F_STRING, .offset = offsetof(transformer_body, kv_dtype), .size = 16},
    {.name = "activation_dtype",
     .type = MPD_F_DTYPE,
     .offset = offsetof(transformer_body, req.activation_dtype),
     .dtypes = MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3)},
    {.name = "batch_size",
     .type = MPD_F_U64,
     .offset = offsetof(transformer_body, req.batch_size),
     .min = 1,
     .max = MP_MAX_BATCH_SIZE},
    {.name = "context_tokens",
     .type = MPD_F_U64,
     .offset = offsetof(transformer_body, req.context_tokens),
     .min = 0,
     .max = MP_MAX_SEQUENCE_LENGTH},
    {.name = "prompt_tokens",
     .type = MPD_F_U64,
     .offset = offsetof(transformer_body, req.prompt_tokens),
     .min = 1,
     .max = MP_MAX_SEQUENCE_LENGTH},
    {.name = "attention", .type = MPD_F_ENUM, .offset = offsetof(transformer_body, attention), .names = impl_names},
    {.name = "allow_beyond_max_position_embeddings",
     .type = MPD_F_BOOL,
     .offset = offsetof(transformer_body, req.allow_beyond_max_position)},
};

/* Decode and prefill of a model on dev into a "transformer" block. */
static mp_status transformer_json(mp_store *store, const cJSON *t, const mp_device *dev, cJSON **out, mp_error *err)
{
	transformer_body tb;
	mpd_model *m = calloc(1, sizeof(*m));
	mp_step *s = calloc(1, sizeof(*s));
	uint64_t crossing = 0;
	cJSON *o = NULL;
	mp_status st;

	*out = NULL;
	if (m == NULL || s == NULL) {
		st = mp_fail(err, MP_ENOMEM, "", "out of memory");
		goto out;
	}
	memset(&tb, 0, sizeof(tb));
	tb.req.weight_dtype = MP_DTYPE_BF16;
	tb.req.kv_cache_dtype = MP_DTYPE_BF16;
	tb.req.batch_size = 1;
	tb.req.context_tokens = 4096;
	tb.req.prompt_tokens = 4096;
	st = mpd_decode_fields(t, "/transformer", transformer_fields,
	                       sizeof(transformer_fields) / sizeof(transformer_fields[0]), &tb, err);
	if (st == MP_OK && tb.kv_dtype[0])
		st = mpd_kv_dtype(tb.kv_dtype, "/transformer/kv_cache_dtype", &tb.req.kv_cache_dtype, err);
	if (st != MP_OK)
		goto out;
	tb.req.eager_attention = tb.attention == 1;
	st = mpd_resolve_model(store, cJSON_GetObjectItemCaseSensitive(t, "model"), m, err);
	if (st == MP_OK && !m->architecture_known)
		st = mp_fail(err, MP_EINVAL, "/transformer/model",
		             "the step analysis needs the architecture: a stored id, {\"hf_config\": {...}} or "
		             "{\"architecture\": {...}}");
	if (st != MP_OK) {
		if (strncmp(err->field, "/model", 6) == 0) {
			char f[sizeof(err->field)];

			snprintf(f, sizeof(f), "/transformer%.80s", err->field);
			memcpy(err->field, f, sizeof(f));
		}
		goto out;
	}
	{
		/* the 4096-token defaults stop at the model's context (gpt2 has 1024 positions) */
		uint64_t limit = mp_model_context_limit(&m->arch);

		if (limit > 0 && cJSON_GetObjectItemCaseSensitive(t, "context_tokens") == NULL &&
		    tb.req.context_tokens >= limit)
			tb.req.context_tokens = limit - 1;
		if (limit > 0 && cJSON_GetObjectItemCaseSensitive(t, "prompt_tokens") == NULL &&
		    tb.req.prompt_tokens > limit)
			tb.req.prompt_tokens = limit;
	}
	o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "model", mpd_model_json(m));
	for (int phase = MP_PHASE_DECODE; phase >= MP_PHASE_PREFILL; phase--) {
		st = mp_step_analyze(&m->arch, dev, (mp_phase)phase, &tb.req, s, err);
		if (st != MP_OK) {
			mpd_error_prefix(err, "/transformer"); /* the step names its request's fields */
			goto out;
		}
		cJSON_AddItemToObject(o, phase == MP_PHASE_DECODE ? "decode" : "prefill", step_json(s));
	}
	st = mp_step_compute_bound_batch(&m->arch, dev, &tb.req, &crossing, err);
	if (st != MP_OK) {
		mpd_error_prefix(err, "/transformer");
		goto out;
	}
	if (crossing)
		ADD_NUM(o, "decode_compute_bound_batch", crossing);
	else
		cJSON_AddNullToObject(o, "decode_compute_bound_batch");
	*out = o;
	o = NULL;
out:
	cJSON_Delete(o);
	free(s);
	free(m);
	return st;
}

/* ----- POST /v1/roofline ------------------------------------------------------------------------------------ */

static const mpd_field roofline_fields[] = {
    {.name = "device", .type = MPD_F_ANY, .required = true},
    {.name = "ops", .type = MPD_F_ANY},
    {.name = "ridge_dtype", .type = MPD_F_DTYPE, .dtypes = ALL_DTYPES},
    {.name = "transformer", .type = MPD_F_ANY},
};

mp_status mpd_roofline(mp_store *store, const cJSON *body, cJSON **out, mp_error *err)
{
	struct {
		mp_dtype ridge_dtype;
	} top = {MP_DTYPE_BF16};
	resolved_device dev;
	const cJSON *ops = cJSON_GetObjectItemCaseSensitive(body, "ops"), *o;
	cJSON *doc = NULL, *d, *arr, *warnings, *notes, *tr = NULL;
	mp_status st;
	int i = 0;
	mp_dtype used;

	*out = NULL;
	st = mpd_decode_fields(body, "", roofline_fields, sizeof(roofline_fields) / sizeof(roofline_fields[0]), &top,
	                       err);
	if (st != MP_OK)
		return st;
	st = resolve_device(store, cJSON_GetObjectItemCaseSensitive(body, "device"), &dev, err);
	if (st != MP_OK)
		return st;
	if (!(dev.hw.memory_bandwidth_bytes_per_second > 0))
		return mp_fail(err, MP_EINVAL, "/device", "the device has no memory bandwidth");
	if (cJSON_GetObjectItemCaseSensitive(body, "ridge_dtype") &&
	    !(dev.hw.peak_flops_per_second[top.ridge_dtype] > 0)) {
		/* an explicit ridge dtype the device has no dense peak for: no silent fallback to another roof */
		uint32_t have = 0;
		char list[256];

		for (int t = 0; t < MP_DTYPE_COUNT; t++)
			if (dev.hw.peak_flops_per_second[t] > 0)
				have |= MPD_DT(t);
		mp_dtype_list(have, list, sizeof(list));
		return mp_fail(err, MP_EINVAL, "/ridge_dtype",
		               "the device has no dense %s peak; ridge_dtype must be one it has: %s",
		               mp_dtype_name(top.ridge_dtype), have ? list : "(none)");
	}
	if (ops && (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) > MPD_ROOFLINE_MAX_OPS))
		return mp_fail(err, MP_EINVAL, "/ops", "ops must be an array of at most %d operations",
		               MPD_ROOFLINE_MAX_OPS);
	if (ops == NULL && cJSON_GetObjectItemCaseSensitive(body, "transformer") == NULL)
		return mp_fail(err, MP_EINVAL, "/ops", "give ops (an array of operations) or transformer (a model)");

	doc = cJSON_CreateObject();
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	d = cJSON_AddObjectToObject(doc, "device");
	if (dev.id[0])
		cJSON_AddStringToObject(d, "id", dev.id);
	else
		cJSON_AddNullToObject(d, "id");
	cJSON_AddStringToObject(d, "name", dev.name);
	ADD_NUM(d, "memory_bandwidth_bytes_per_second", dev.hw.memory_bandwidth_bytes_per_second);
	ADD_NUM(d, "peak_flops_per_second", mp_device_peak(&dev.hw, top.ridge_dtype, MP_UNIT_MATRIX, &used, NULL));
	cJSON_AddStringToObject(d, "peak_dtype", mp_dtype_name(used));
	/* no ridge_dtype given and the device has no bf16 peak (a V100: fp16 only): the ridge is the roof it has,
	 * and is labelled with it */
	if (!cJSON_GetObjectItemCaseSensitive(body, "ridge_dtype") && used != MP_DTYPE_INVALID &&
	    dev.hw.peak_flops_per_second[used] > 0)
		top.ridge_dtype = used;
	{
		mp_dtype vused;
		double vp = mp_device_peak(&dev.hw, MP_DTYPE_FP32, MP_UNIT_VECTOR, &vused, NULL);

		if (vp > 0)
			ADD_NUM(d, "vector_flops_per_second", vp);
	}
	if (dev.hw.l2_bandwidth_bytes_per_second > 0)
		ADD_NUM(d, "l2_bandwidth_bytes_per_second", dev.hw.l2_bandwidth_bytes_per_second);
	if (dev.hw.shared_memory_bandwidth_bytes_per_second > 0)
		ADD_NUM(d, "shared_memory_bandwidth_bytes_per_second", dev.hw.shared_memory_bandwidth_bytes_per_second);
	cJSON_AddStringToObject(doc, "ridge_dtype", mp_dtype_name(top.ridge_dtype));
	ADD_NUM(doc, "ridge_flops_per_byte", mp_device_ridge(&dev.hw, top.ridge_dtype));
	if (dev.hw.memory_latency_seconds > 0) {
		mp_littles_law l;

		if (mp_little(dev.hw.memory_bandwidth_bytes_per_second, dev.hw.memory_latency_seconds, dev.hw.sm_count,
		              &l, NULL) == MP_OK) {
			cJSON *ll = cJSON_AddObjectToObject(doc, "littles_law");

			ADD_NUM(ll, "latency_seconds", l.latency_seconds);
			ADD_NUM(ll, "bytes_in_flight", l.bytes_in_flight);
			if (dev.hw.sm_count)
				ADD_NUM(ll, "bytes_in_flight_per_sm", l.bytes_in_flight_per_sm);
			else
				cJSON_AddNullToObject(ll, "bytes_in_flight_per_sm");
		}
	}
	arr = cJSON_AddArrayToObject(doc, "ops");
	warnings = cJSON_AddArrayToObject(doc, "warnings");
	cJSON_ArrayForEach(o, ops)
	{
		char pointer[32];
		op_body b;
		mp_op op;
		mp_roof r;
		cJSON *e;

		snprintf(pointer, sizeof(pointer), "/ops/%d", i++);
		st = decode_op(o, pointer, &b, &op, err);
		if (st == MP_OK)
			st = mp_roofline(&dev.hw, &op, &r, err);
		if (st != MP_OK) {
			/* planner fields are relative to the op ("/k"); device fields are absolute */
			if (strncmp(err->field, pointer, strlen(pointer)) != 0 &&
			    strncmp(err->field, "/device", 7) != 0) {
				char f[sizeof(err->field)];

				snprintf(f, sizeof(f), "%s%.60s", pointer, err->field);
				memcpy(err->field, f, sizeof(f));
			}
			cJSON_Delete(doc);
			return st;
		}
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "label", b.label);
		cJSON_AddStringToObject(e, "op", kind_names[b.kind]);
		cJSON_AddStringToObject(e, "dtype", mp_dtype_name(op.dtype));
		add_roof(e, &r);
		if (b.kind == K_DECODE && r.time_seconds > 0) {
			ADD_NUM(e, "tokens_per_second_per_sequence", 1.0 / r.time_seconds);
			ADD_NUM(e, "tokens_per_second_total", (double)b.batch / r.time_seconds);
		}
		if (b.measured_seconds > 0) {
			mp_measurement_check mc;
			cJSON *m = cJSON_AddObjectToObject(e, "measured");

			mp_check_measurement(&r, b.measured_seconds, &mc);
			ADD_NUM(m, "time_seconds", mc.measured_seconds);
			ADD_NUM(m, "effective_bandwidth_bytes_per_second", mc.effective_bandwidth_bytes_per_second);
			ADD_NUM(m, "effective_flops_per_second", mc.effective_flops_per_second);
			ADD_NUM(m, "fraction_of_floor", mc.achieved_fraction);
			cJSON_AddBoolToObject(m, "above_roof", mc.above_roof);
			if (mc.above_roof) {
				char msg[256];

				snprintf(msg, sizeof(msg),
				         "%s: the measured %.4g s beats the roofline floor %.4g s (effective %.4g GB/s "
				         "against %.4g GB/s): the device profile or the measurement is wrong",
				         pointer, mc.measured_seconds, r.time_seconds,
				         mc.effective_bandwidth_bytes_per_second / 1e9,
				         dev.hw.memory_bandwidth_bytes_per_second / 1e9);
				cJSON_AddItemToArray(warnings, cJSON_CreateString(msg));
			}
		}
		cJSON_AddItemToArray(arr, e);
	}
	if (cJSON_GetObjectItemCaseSensitive(body, "transformer")) {
		st = transformer_json(store, cJSON_GetObjectItemCaseSensitive(body, "transformer"), &dev.hw, &tr, err);
		if (st != MP_OK) {
			cJSON_Delete(doc);
			return st;
		}
		cJSON_AddItemToObject(doc, "transformer", tr);
	}
	notes = cJSON_AddArrayToObject(doc, "notes");
	cJSON_AddItemToArray(
	    notes,
	    cJSON_CreateString(
	        "bytes count each input read once and each output written once (compulsory traffic), so time_seconds "
	        "= max(bytes / bandwidth, flops / peak) is a floor, not a prediction."));
	cJSON_AddItemToArray(notes, cJSON_CreateString("Peaks are dense: matrix work uses the tensor-core peak of its "
	                                               "compute dtype, vector work (elementwise, "
	                                               "norms, softmax, reductions) the CUDA-core rate; peak_fallback "
	                                               "marks a peak taken from another dtype."));
	*out = doc;
	return MP_OK;
}

/* ----- compact specs ----------------------------------------------------------------------------------- */

mp_status mpd_op_spec_json(const char *spec, const char *field, cJSON **out, mp_error *err)
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

/* ----- the inference plan's performance block -------------------------------------------------------------- */

cJSON *mpd_performance_json(const mpd_model *m, const mp_inference_req *req, const mp_device *dev, uint64_t tp)
{
	cJSON *o = cJSON_CreateObject(), *notes;
	mp_step *dec = calloc(1, sizeof(*dec)), *pre = calloc(1, sizeof(*pre));
	mp_step_req sr;
	mp_error err = {{0}, {0}};
	mp_status st = MP_OK;
	uint64_t crossing = 0;

	if (o == NULL || dec == NULL || pre == NULL) {
		free(dec);
		free(pre);
		return o;
	}
	memset(&sr, 0, sizeof(sr));
	sr.weight_dtype = req->weight_dtype;
	sr.kv_cache_dtype = req->kv_cache_dtype;
	sr.batch_size = req->batch_size;
	sr.context_tokens = req->sequence_length > 0 ? req->sequence_length - 1 : 0;
	sr.prompt_tokens = req->sequence_length;
	sr.allow_beyond_max_position = true; /* the plan has already applied the context rule and its override */
	sr.tensor_parallel_size = tp;
	if (!m->architecture_known)
		st = mp_fail(&err, MP_EINVAL, "/model", "performance needs the model's architecture");
	if (st == MP_OK)
		st = mp_step_analyze(&m->arch, dev, MP_PHASE_DECODE, &sr, dec, &err);
	if (st == MP_OK)
		st = mp_step_analyze(&m->arch, dev, MP_PHASE_PREFILL, &sr, pre, &err);
	if (st == MP_OK)
		st = mp_step_compute_bound_batch(&m->arch, dev, &sr, &crossing, &err);
	if (st != MP_OK) {
		cJSON_AddStringToObject(o, "error", err.message);
		goto out;
	}
	ADD_NUM(o, "decode_step_seconds", dec->step_seconds);
	ADD_NUM(o, "prefill_seconds", pre->step_seconds);
	ADD_NUM(o, "tokens_per_second_per_sequence", dec->tokens_per_second_per_sequence);
	ADD_NUM(o, "tokens_per_second_total", dec->tokens_per_second_total);
	cJSON_AddStringToObject(o, "bound", dec->compute_bound ? "compute" : "memory");
	cJSON_AddStringToObject(o, "prefill_bound", pre->compute_bound ? "compute" : "memory");
	ADD_NUM(o, "decode_bytes_per_step", dec->bytes);
	ADD_NUM(o, "decode_kv_cache_read_bytes_per_step", dec->kv_read_bytes);
	if (crossing)
		ADD_NUM(o, "decode_compute_bound_batch", crossing);
	else
		cJSON_AddNullToObject(o, "decode_compute_bound_batch");
	notes = cJSON_AddArrayToObject(o, "notes");
	cJSON_AddItemToArray(
	    notes,
	    cJSON_CreateString(
	        "Roofline floors (POST /v1/roofline's engine): the decode step is the last token of sequence_length "
	        "(each sequence reads its own KV cache); prefill_seconds is a time-to-first-token floor for prompts of "
	        "sequence_length tokens, all sequences at once. Launch overhead and imperfect bandwidth make real steps "
	        "slower."));
	if (tp > 1) {
		char t[320];

		snprintf(t, sizeof(t),
		         "Per GPU with tensor_parallel_size %llu: each GPU reads its 1/%llu of the sharded weights and of "
		         "the KV cache (heads, FFN and expert widths, vocabulary split); norms and embeddings are "
		         "replicated. The all-reduce traffic between the GPUs (two per layer) is not modelled.",
		         (unsigned long long)tp, (unsigned long long)tp);
		cJSON_AddItemToArray(notes, cJSON_CreateString(t));
	} else {
		cJSON_AddItemToArray(notes, cJSON_CreateString("One GPU (tensor_parallel_size 1)."));
	}
out:
	free(dec);
	free(pre);
	return o;
}
