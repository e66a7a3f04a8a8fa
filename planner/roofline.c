/*
 * roofline.c: the roofline of single operations (intensity, applicable peak, attainable FLOP/s, bound, time
 * floor, one ceiling per memory level), the weights-only decode bound and Little's law. Pure arithmetic on
 * the caller's structs: no I/O, no allocation. Sources: Williams, Waterman, Patterson, "Roofline", CACM 52(4)
 * 2009; ../shared/reference/seed-figures.md for every worked number in mp_roofline.h.
 */
#include <math.h>
#include <string.h>

#include "../core/mp_assert.h"
#include "memplan.h"

/* ----- peaks ------------------------------------------------------------------------------------------ */

/* The next dtype to try when a profile has no matrix peak for a dtype (the dequantised or wider path); a dtype with
 * no row has none (MP_DTYPE_INVALID, 0). */
static const mp_dtype matrix_fallback[MP_DTYPE_COUNT] = {
    [MP_DTYPE_FP8_E4M3] = MP_DTYPE_BF16, [MP_DTYPE_FP8_E5M2] = MP_DTYPE_BF16, [MP_DTYPE_INT8] = MP_DTYPE_BF16,
    [MP_DTYPE_INT4] = MP_DTYPE_BF16,     [MP_DTYPE_NF4] = MP_DTYPE_BF16,      [MP_DTYPE_Q8_0] = MP_DTYPE_BF16,
    [MP_DTYPE_Q4_0] = MP_DTYPE_BF16,     [MP_DTYPE_Q4_K] = MP_DTYPE_BF16,     [MP_DTYPE_Q5_K] = MP_DTYPE_BF16,
    [MP_DTYPE_Q6_K] = MP_DTYPE_BF16,     [MP_DTYPE_MXFP4] = MP_DTYPE_BF16,    [MP_DTYPE_NVFP4] = MP_DTYPE_BF16,
    [MP_DTYPE_BF16] = MP_DTYPE_FP16,     [MP_DTYPE_FP16] = MP_DTYPE_FP32,     [MP_DTYPE_TF32] = MP_DTYPE_FP32,
};
MP_STATIC_ASSERT(MP_DTYPE_INVALID == 0, "a dtype without a row in matrix_fallback falls back to none");

double mp_device_peak(const mp_device *d, mp_dtype dt, mp_unit unit, mp_dtype *used, bool *fallback)
{
	mp_dtype t = dt;
	bool fb = false;
	double p = 0;

	if ((unsigned)dt >= MP_DTYPE_COUNT || dt == MP_DTYPE_INVALID)
		goto out;
	if (unit == MP_UNIT_VECTOR) {
		if (d->vector_flops_per_second[dt] > 0) {
			p = d->vector_flops_per_second[dt];
			goto out;
		}
		fb = dt != MP_DTYPE_FP32;
		t = MP_DTYPE_FP32;
		p = d->vector_flops_per_second[MP_DTYPE_FP32] > 0 ? d->vector_flops_per_second[MP_DTYPE_FP32]
		                                                  : d->peak_flops_per_second[MP_DTYPE_FP32];
		if (p > 0)
			goto out;
		fb = true;
		t = dt; /* a single-peak profile: the matrix chain below */
	}
	for (int guard = 0; t != MP_DTYPE_INVALID && guard < 4; guard++) {
		if (d->peak_flops_per_second[t] > 0) {
			p = d->peak_flops_per_second[t];
			break;
		}
		t = matrix_fallback[t];
		fb = true;
	}
out:
	if (used)
		*used = p > 0 ? t : MP_DTYPE_INVALID;
	if (fallback)
		*fallback = p > 0 && fb;
	return p;
}

double mp_device_ridge(const mp_device *d, mp_dtype dt)
{
	double p = mp_device_peak(d, dt, MP_UNIT_MATRIX, NULL, NULL);

	return p > 0 && d->memory_bandwidth_bytes_per_second > 0 ? p / d->memory_bandwidth_bytes_per_second : 0;
}

/* ----- cost of an operation ----------------------------------------------------------------------------- */

static mp_dtype or_default(mp_dtype t, mp_dtype dflt)
{
	return t == MP_DTYPE_INVALID ? dflt : t;
}

static bool valid_dtype(mp_dtype t)
{
	return mp_dtype_layout_of(t).block_values != 0;
}

/* *acc += bytes of (a x b x c) values of dtype t; false on overflow. */
static bool add_values(uint64_t *acc, mp_dtype t, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t n, bytes;

	return mp_mul_u64(a, b, &n) && mp_mul_u64(n, c, &n) && mp_dtype_bytes(t, n, &bytes) &&
	       mp_add_u64(*acc, bytes, acc);
}

/* *acc += bytes of (a x b x c x e) values of dtype t; false on overflow. */
static bool add_values4(uint64_t *acc, mp_dtype t, uint64_t a, uint64_t b, uint64_t c, uint64_t e)
{
	uint64_t n;

	return mp_mul_u64(a, b, &n) && add_values(acc, t, n, c, e);
}

static mp_status need(uint64_t v, const char *base, const char *field, mp_error *err)
{
	return v >= 1 ? MP_OK : mp_fail_at(err, MP_EINVAL, base, field, "%s must be an integer >= 1", field + 1);
}

#define NEED(v, f)                                                                                                     \
	do {                                                                                                           \
		st = need((v), op->json_pointer, (f), err);                                                                              \
		if (st != MP_OK)                                                                                       \
			return st;                                                                                     \
	} while (0)
#define OVERFLOW() mp_fail(err, MP_EOVERFLOW, op->json_pointer, "the operation's byte count overflows 64 bits")

/* Query/key pairs scored: causal queries are the last q of kv tokens, query i sees kv - q + i + 1 keys. */
static double attention_pairs(const mp_op *op, bool causal)
{
	double q = (double)op->q_tokens, kv = (double)op->kv_tokens;

	return causal ? q * (kv - q) + q * (q + 1) / 2 : q * kv;
}

/* ----- the operation kinds: each a cost function and a row of op_kinds; a new kind is one of each. Each checks
 * its own fields, adds its compulsory bytes to *b and sets *flops. */

static mp_status cost_raw(const mp_op *op, double *flops, uint64_t *b, mp_error *err)
{
	if (!(op->flops >= 0) || !isfinite(op->flops))
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/flops", "flops must be a finite number >= 0");
	*flops = op->flops;
	*b = op->bytes;
	return MP_OK;
}

static mp_status cost_elementwise(const mp_op *op, double *flops, uint64_t *b, mp_error *err)
{
	mp_status st;

	NEED(op->elements, "/elements");
	if (op->inputs + op->outputs < 1 || op->inputs > 64 || op->outputs > 64)
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/inputs",
		                  "an elementwise operation reads 0..64 inputs and writes 0..64 outputs, at least "
		                  "one tensor in all");
	if (!(op->flops_per_element >= 0) || !isfinite(op->flops_per_element))
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/flops_per_element", "flops_per_element must be >= 0");
	if (!add_values(b, op->dtype, op->elements, op->inputs + op->outputs, 1))
		return OVERFLOW();
	*flops = (double)op->elements * op->flops_per_element;
	return MP_OK;
}

/* The row operations: rows x cols read; written, rows (a reduction) or rows x cols; weight vectors of cols read
 * (RMSNorm 1, LayerNorm 2). FLOPs per element: the kind's row below. */
static const struct row_op {
	double flops_per_element;
	bool reduces;		/* writes one value per row */
	uint64_t weight_vectors;
} row_ops[MP_OP_KIND_COUNT] = {
    [MP_OP_REDUCTION] = {1, true, 0},
    [MP_OP_SOFTMAX] = {5, false, 0},
    [MP_OP_LAYERNORM] = {8, false, 2},
    [MP_OP_RMSNORM] = {4, false, 1},
};

static mp_status cost_rows(const mp_op *op, double *flops, uint64_t *b, mp_error *err)
{
	const struct row_op *r = &row_ops[op->kind];
	mp_dtype dt = op->dtype;
	mp_status st;

	NEED(op->rows, "/rows");
	NEED(op->cols, "/cols");
	if (!add_values(b, dt, op->rows, op->cols, 1) || !add_values(b, dt, op->rows, r->reduces ? 1 : op->cols, 1) ||
	    (r->weight_vectors && !add_values(b, dt, op->cols, r->weight_vectors, 1)))
		return OVERFLOW();
	*flops = r->flops_per_element * (double)op->rows * (double)op->cols;
	return MP_OK;
}

/* A matrix product (m x k) x (k x n) -> m x n, each operand in its own dtype; a matvec has m = 1. */
static mp_status cost_product(const mp_op *op, double *flops, uint64_t *b, mp_error *err)
{
	mp_dtype dt = op->dtype;
	uint64_t m = op->kind == MP_OP_MATVEC ? 1 : op->m;
	mp_dtype a = or_default(op->a_dtype, dt), w = or_default(op->b_dtype, dt), c = or_default(op->c_dtype, dt);
	mp_status st;

	if (op->kind == MP_OP_MATVEC && op->m > 1)
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/m", "a matvec has m = 1; use a matmul for m > 1");
	if (!valid_dtype(a) || !valid_dtype(w) || !valid_dtype(c))
		return mp_fail_at(err, MP_EINVAL, op->json_pointer,
		                  valid_dtype(a) ? valid_dtype(w) ? "/c_dtype" : "/b_dtype" : "/a_dtype",
		                  "give dtype, or a_dtype, b_dtype and c_dtype, as known data types");
	NEED(m, "/m");
	NEED(op->k, "/k");
	NEED(op->n, "/n");
	if (!add_values(b, a, m, op->k, 1) || !add_values(b, w, op->k, op->n, 1) || !add_values(b, c, m, op->n, 1))
		return OVERFLOW();
	*flops = 2.0 * (double)m * (double)op->k * (double)op->n;
	return MP_OK;
}

static mp_status check_attention(const mp_op *op, mp_error *err)
{
	mp_status st;

	NEED(op->batch, "/batch");
	NEED(op->heads, "/heads");
	NEED(op->kv_heads, "/kv_heads");
	NEED(op->head_dim, "/head_dim");
	NEED(op->q_tokens, "/q_tokens");
	NEED(op->kv_tokens, "/kv_tokens");
	if (!valid_dtype(or_default(op->kv_dtype, op->dtype)))
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/kv_dtype", "kv_dtype must be a known data type");
	if (op->heads % op->kv_heads != 0)
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/kv_heads",
		                  "heads (%llu) must be a multiple of kv_heads (%llu)", (unsigned long long)op->heads,
		                  (unsigned long long)op->kv_heads);
	if (op->causal && op->q_tokens > op->kv_tokens)
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/q_tokens",
		                  "causal attention needs q_tokens <= kv_tokens (the queries are the last tokens)");
	return MP_OK;
}

static mp_status cost_attention(const mp_op *op, double *flops, uint64_t *b, mp_error *err)
{
	mp_dtype dt = op->dtype, kv = or_default(op->kv_dtype, dt);
	mp_status st = check_attention(op, err);

	if (st != MP_OK)
		return st;
	/* Q read and O written: batch x q x heads x head_dim each; K and V read: batch x kv x 2 kv_heads x
	 * head_dim. Eager adds the score matrix S (batch x heads x q x kv) written, read by softmax, P
	 * written and read by P.V: 4 passes (FlashAttention, Dao et al. 2022, sec. 3.2 counts the same). */
	if (!add_values4(b, dt, 2 * op->batch, op->q_tokens, op->heads, op->head_dim) ||
	    !add_values4(b, kv, op->batch, op->kv_tokens, 2 * op->kv_heads, op->head_dim) ||
	    (op->eager && !add_values4(b, dt, 4 * op->batch, op->heads, op->q_tokens, op->kv_tokens)))
		return OVERFLOW();
	/* QK^T and P.V: 2 x 2 x head_dim FLOPs per scored pair per head. Eager scores every pair and masks
	 * afterwards; fused kernels skip the masked half. */
	*flops = 4.0 * (double)op->batch * (double)op->heads * (double)op->head_dim *
	         attention_pairs(op, op->causal && !op->eager);
	return MP_OK;
}

/* unit: the execution unit whose peak applies (a raw op names its own); product: the operands have dtypes of their
 * own (a_dtype, b_dtype, c_dtype) and `dtype` need not be given; the math runs in the wider (mp_roofline). */
static const struct op_kind {
	mp_status (*cost)(const mp_op *op, double *flops, uint64_t *b, mp_error *err);
	mp_unit unit;
	bool product;
} op_kinds[] = {
    [MP_OP_RAW] = {cost_raw, MP_UNIT_VECTOR, false},
    [MP_OP_ELEMENTWISE] = {cost_elementwise, MP_UNIT_VECTOR, false},
    [MP_OP_REDUCTION] = {cost_rows, MP_UNIT_VECTOR, false},
    [MP_OP_SOFTMAX] = {cost_rows, MP_UNIT_VECTOR, false},
    [MP_OP_LAYERNORM] = {cost_rows, MP_UNIT_VECTOR, false},
    [MP_OP_RMSNORM] = {cost_rows, MP_UNIT_VECTOR, false},
    [MP_OP_MATVEC] = {cost_product, MP_UNIT_MATRIX, true},
    [MP_OP_MATMUL] = {cost_product, MP_UNIT_MATRIX, true},
    [MP_OP_ATTENTION] = {cost_attention, MP_UNIT_MATRIX, false},
};
MP_STATIC_ASSERT(MP_COUNT_OF(op_kinds) == MP_OP_KIND_COUNT, "a row of op_kinds per mp_op_kind");

static bool known_kind(const mp_op *op)
{
	return (unsigned)op->kind < MP_OP_KIND_COUNT;
}

mp_status mp_op_cost(const mp_op *op, double *flops, uint64_t *bytes, mp_error *err)
{
	mp_status st;

	*flops = 0;
	*bytes = 0;
	/* every kind but a raw op and the products reads `dtype` (an unknown kind too, so its dtype is named first) */
	if (op->kind != MP_OP_RAW && !valid_dtype(op->dtype) && !(known_kind(op) && op_kinds[op->kind].product))
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/dtype", "dtype must be a known data type");
	if (!known_kind(op))
		return mp_fail_at(err, MP_EINVAL, op->json_pointer, "/op", "unknown operation kind");
	/* the kind's function sets *flops last, once its checks passed; the bytes it added are dropped on an error */
	st = op_kinds[op->kind].cost(op, flops, bytes, err);
	if (st != MP_OK)
		*bytes = 0;
	return st;
}

/* ----- the roofline ------------------------------------------------------------------------------------- */

static unsigned bits_per_value(mp_dtype t)
{
	mp_dtype_layout l = mp_dtype_layout_of(t);

	return l.block_values ? (8 * l.block_bytes + l.block_values - 1) / l.block_values : 0;
}

static mp_unit unit_of(const mp_op *op)
{
	return op->kind == MP_OP_RAW ? op->unit : op_kinds[op->kind].unit;
}

/* The type the math runs in: compute_dtype, else for products the wider operand (weight-only quantised
 * weights are dequantised into the activations' type), else dtype. */
static mp_dtype compute_dtype_of(const mp_op *op)
{
	if (op->compute_dtype != MP_DTYPE_INVALID)
		return op->compute_dtype;
	if (op_kinds[op->kind].product) {
		mp_dtype a = or_default(op->a_dtype, op->dtype), w = or_default(op->b_dtype, op->dtype);
		bool block_w = mp_dtype_layout_of(w).block_values > 2, block_a = mp_dtype_layout_of(a).block_values > 2;

		if (block_w && !block_a)
			return a;
		if (block_a && !block_w)
			return w;
		return bits_per_value(w) > bits_per_value(a) ? w : a;
	}
	return op->dtype;
}

static void level(mp_level_roof *l, double bw, uint64_t bytes, double flops, double peak)
{
	l->present = true;
	l->bandwidth_bytes_per_second = bw;
	l->bytes = bytes;
	l->intensity_flops_per_byte = bytes ? flops / (double)bytes : INFINITY;
	l->attainable_flops_per_second = bytes ? fmin(peak, l->intensity_flops_per_byte * bw) : peak;
	l->time_seconds = (double)bytes / bw;
}

/* The ceilings of the memory levels the profile has: DRAM always; L2 and shared memory where the profile gives their
 * bandwidth, each over the op's traffic at that level (its DRAM bytes unless given). */
static void levels_of(const mp_device *d, const mp_op *op, mp_roof *out)
{
	double peak = out->peak_flops_per_second;

	level(&out->level[MP_LEVEL_DRAM], d->memory_bandwidth_bytes_per_second, out->bytes, out->flops, peak);
	if (d->l2_bandwidth_bytes_per_second > 0)
		level(&out->level[MP_LEVEL_L2], d->l2_bandwidth_bytes_per_second, op->l2_bytes ? op->l2_bytes : out->bytes,
		      out->flops, peak);
	if (d->shared_memory_bandwidth_bytes_per_second > 0)
		level(&out->level[MP_LEVEL_SHARED], d->shared_memory_bandwidth_bytes_per_second,
		      op->shared_memory_bytes ? op->shared_memory_bytes : out->bytes, out->flops, peak);
}

/* The binding level (the slowest present) and the attainable rate (the lowest ceiling, at most the peak). */
static void bind_levels(mp_roof *out)
{
	out->binding_level = MP_LEVEL_DRAM;
	out->attainable_flops_per_second = out->peak_flops_per_second;
	for (int i = 0; i < MP_LEVEL_COUNT; i++) {
		const mp_level_roof *l = &out->level[i];

		if (!l->present)
			continue;
		if (l->time_seconds > out->memory_time_seconds) {
			out->memory_time_seconds = l->time_seconds;
			out->binding_level = (mp_level)i;
		}
		if (l->attainable_flops_per_second < out->attainable_flops_per_second)
			out->attainable_flops_per_second = l->attainable_flops_per_second;
	}
}

mp_status mp_roofline(const mp_device *d, const mp_op *op, mp_roof *out, mp_error *err)
{
	mp_status st;
	mp_dtype cdt;
	double bw = d->memory_bandwidth_bytes_per_second;

	memset(out, 0, sizeof(*out));
	if (!(bw > 0) || !isfinite(bw))
		return mp_fail(err, MP_EINVAL, "/device/memory_bandwidth_bytes_per_second",
		               "the device needs a memory bandwidth > 0");
	st = mp_op_cost(op, &out->flops, &out->bytes, err);
	if (st != MP_OK)
		return st;
	out->unit = unit_of(op);
	cdt = compute_dtype_of(op);
	out->compute_dtype = cdt;
	out->peak_flops_per_second = mp_device_peak(d, cdt, out->unit, &out->peak_dtype, &out->peak_fallback);
	if (out->peak_flops_per_second <= 0 && out->flops > 0)
		return mp_fail(err, MP_EUNSUPPORTED, "/device/peak_flops_per_second",
		               "the device has no %s peak for %s (nor a fallback); add one to the profile",
		               out->unit == MP_UNIT_MATRIX ? "matrix" : "vector", mp_dtype_name(cdt));
	out->ridge_flops_per_byte = out->peak_flops_per_second / bw;
	out->intensity_flops_per_byte = out->bytes ? out->flops / (double)out->bytes : 0;

	levels_of(d, op, out);
	bind_levels(out);
	out->compute_time_seconds = out->flops > 0 ? out->flops / out->peak_flops_per_second : 0;
	out->compute_bound = out->flops > 0 && out->compute_time_seconds >= out->memory_time_seconds;
	out->time_seconds = fmax(out->memory_time_seconds, out->compute_time_seconds);
	if (out->flops == 0)
		out->attainable_flops_per_second = 0;
	out->fraction_of_peak =
	    out->peak_flops_per_second > 0 ? out->attainable_flops_per_second / out->peak_flops_per_second : 0;
	return MP_OK;
}

void mp_check_measurement(const mp_roof *r, double measured_seconds, mp_measurement_check *out)
{
	memset(out, 0, sizeof(*out));
	out->measured_seconds = measured_seconds;
	if (!(measured_seconds > 0))
		return;
	out->effective_bandwidth_bytes_per_second = (double)r->bytes / measured_seconds;
	out->effective_flops_per_second = r->flops / measured_seconds;
	out->achieved_fraction = r->time_seconds / measured_seconds;
	/* a relative slack of 1e-9 keeps a measurement equal to the floor (rounding) from being flagged */
	out->above_roof = measured_seconds < r->time_seconds * (1 - 1e-9);
}

uint64_t mp_first_compute_bound_batch(const mp_device *d, uint64_t k, uint64_t n, mp_dtype dt)
{
	double ridge = mp_device_ridge(d, dt);
	uint64_t lo = 1, hi = MP_MAX_BATCH_SIZE;
	mp_op op;

	if (ridge <= 0)
		return 0;
	memset(&op, 0, sizeof(op));
	op.kind = MP_OP_MATMUL;
	op.dtype = dt;
	op.k = k;
	op.n = n;
	/* intensity(b) rises with b; find the first b with intensity >= ridge. */
	for (int pass = 0; pass < 2; pass++) {
		double f;
		uint64_t bytes;

		op.m = pass ? hi : lo;
		if (mp_op_cost(&op, &f, &bytes, NULL) != MP_OK || bytes == 0)
			return 0;
		if (pass == 0 && f / (double)bytes >= ridge)
			return lo;
		if (pass == 1 && f / (double)bytes < ridge)
			return 0;
	}
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2, bytes;
		double f;

		op.m = mid;
		if (mp_op_cost(&op, &f, &bytes, NULL) != MP_OK)
			return 0;
		if (f / (double)bytes >= ridge)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* ----- weights-only decode bound and Little's law -------------------------------------------------------- */

mp_status mp_weights_decode_bound(const mp_device *d, uint64_t weight_bytes, uint64_t parameters, uint64_t batch,
                                  mp_dtype dt, mp_decode_bound *out, mp_error *err)
{
	double peak = mp_device_peak(d, dt, MP_UNIT_MATRIX, NULL, NULL);

	memset(out, 0, sizeof(*out));
	if (!(d->memory_bandwidth_bytes_per_second > 0))
		return mp_fail(err, MP_EINVAL, "/device/memory_bandwidth_bytes_per_second",
		               "the device needs a memory bandwidth > 0");
	if (batch < 1 || batch > MP_MAX_BATCH_SIZE)
		return mp_fail(err, MP_EINVAL, "/batch", "batch must be between 1 and %llu",
		               (unsigned long long)MP_MAX_BATCH_SIZE);
	if (weight_bytes == 0)
		return mp_fail(err, MP_EINVAL, "/weight_bytes", "weight_bytes must be >= 1");
	if (peak <= 0 && parameters > 0)
		return mp_fail(err, MP_EUNSUPPORTED, "/device/peak_flops_per_second", "the device has no peak for %s",
		               mp_dtype_name(dt));
	out->memory_seconds = (double)weight_bytes / d->memory_bandwidth_bytes_per_second;
	out->compute_seconds = parameters ? 2.0 * (double)parameters * (double)batch / peak : 0;
	out->compute_bound = out->compute_seconds > out->memory_seconds;
	out->step_seconds = fmax(out->memory_seconds, out->compute_seconds);
	out->tokens_per_second_per_sequence = 1.0 / out->step_seconds;
	out->tokens_per_second_total = (double)batch / out->step_seconds;
	return MP_OK;
}

mp_status mp_little(double bandwidth_bytes_per_second, double latency_seconds, uint32_t sm_count, mp_littles_law *out,
                    mp_error *err)
{
	memset(out, 0, sizeof(*out));
	if (!(bandwidth_bytes_per_second > 0) || !isfinite(bandwidth_bytes_per_second))
		return mp_fail(err, MP_EINVAL, "/device/memory_bandwidth_bytes_per_second",
		               "Little's law needs a memory bandwidth > 0");
	if (!(latency_seconds > 0) || !isfinite(latency_seconds))
		return mp_fail(err, MP_EINVAL, "/device/memory_latency_seconds",
		               "Little's law needs a memory latency > 0 (seconds, or cycles with boost_clock_hz)");
	out->latency_seconds = latency_seconds;
	out->bytes_in_flight = bandwidth_bytes_per_second * latency_seconds;
	out->bytes_in_flight_per_sm = sm_count ? out->bytes_in_flight / sm_count : 0;
	return MP_OK;
}
