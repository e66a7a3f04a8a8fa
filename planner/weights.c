/*
 * weights.c: the bytes of the model's tensors (its inventory, mp_inventory.h) in every storage format, per
 * tensor-parallel rank. Formats never reach the parameter count; the parameter count never depends on a format.
 */
#include <string.h>

#include "memplan.h"

const char *mp_tensor_class_name(mp_tensor_class c)
{
	static const char *const names[MP_TC_COUNT] = {"embeddings", "attention", "mlp", "experts", "lm_head", "norms",
	                                                       "recurrent", "vision"};

	return (unsigned)c < MP_TC_COUNT ? names[c] : "invalid";
}

/* ----- bytes per format ------------------------------------------------------------------------------- */

static bool is_gguf(mp_dtype d)
{
	return d == MP_DTYPE_Q8_0 || d == MP_DTYPE_Q4_0 || d == MP_DTYPE_Q4_K || d == MP_DTYPE_Q5_K ||
	       d == MP_DTYPE_Q6_K;
}

static bool is_float(mp_dtype d)
{
	return d == MP_DTYPE_FP32 || d == MP_DTYPE_BF16 || d == MP_DTYPE_FP16;
}

typedef struct fmt_ctx {
	uint64_t group;
	mp_int4_scheme scheme;
	bool nf4_dq;
	uint64_t align; /* round each allocation up to this; 1 = none */
} fmt_ctx;

static bool round_add(uint64_t *acc, uint64_t bytes, uint64_t align)
{
	if (align > 1 && bytes % align)
		if (!mp_add_u64(bytes, align - bytes % align, &bytes))
			return false;
	return mp_add_u64(*acc, bytes, acc);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

/* Bytes of one r x c matrix in format d (every component allocation rounded to ctx->align). */
static bool matrix_bytes(mp_dtype d, uint64_t r, uint64_t c, const fmt_ctx *x, uint64_t *out)
{
	uint64_t n, t, groups;

	*out = 0;
	if (!mp_mul_u64(r, c, &n))
		return false;
	switch (d) {
	case MP_DTYPE_FP8_E4M3:
	case MP_DTYPE_FP8_E5M2:
		return round_add(out, n, x->align) && round_add(out, 4, x->align);
	case MP_DTYPE_INT8:
		return round_add(out, n, x->align) && mp_mul_u64(r, 4, &t) && round_add(out, t, x->align);
	case MP_DTYPE_INT4:
		groups = ceil_div(c, x->group < c ? x->group : c);
		if (x->scheme == MP_INT4_GPTQ) {
			/* qweight int32 [c/8, r], qzeros int32 [groups, r/8], scales fp16 [groups, r], g_idx int32 [c]
			 */
			if (!mp_mul_u64(ceil_div(c, 8) * 4, r, &t) || !round_add(out, t, x->align))
				return false;
		} else {
			/* AWQ: qweight int32 [c, r/8] */
			if (!mp_mul_u64(ceil_div(r, 8) * 4, c, &t) || !round_add(out, t, x->align))
				return false;
		}
		if (!mp_mul_u64(groups, ceil_div(r, 8) * 4, &t) || !round_add(out, t, x->align))
			return false;
		if (!mp_mul_u64(groups, r, &t) || !mp_mul_u64(t, 2, &t) || !round_add(out, t, x->align))
			return false;
		return x->scheme != MP_INT4_GPTQ || (mp_mul_u64(c, 4, &t) && round_add(out, t, x->align));
	case MP_DTYPE_NF4: {
		uint64_t blocks = ceil_div(n, 64);

		if (!round_add(out, ceil_div(n, 2), x->align) || !round_add(out, 16 * 4, x->align))
			return false;
		if (!x->nf4_dq)
			return mp_mul_u64(blocks, 4, &t) && round_add(out, t, x->align);
		return round_add(out, blocks, x->align) && round_add(out, ceil_div(blocks, 256) * 4, x->align) &&
		       round_add(out, 256 * 4, x->align) && round_add(out, 4, x->align);
	}
	default:
		if (is_gguf(d) || d == MP_DTYPE_MXFP4 || d == MP_DTYPE_NVFP4) {
			mp_dtype_layout l = mp_dtype_layout_of(d);

			/* blocks run along each row (the input dimension); NVFP4 adds its fp32 per-tensor scale */
			return mp_mul_u64(ceil_div(c, l.block_values), l.block_bytes, &t) && mp_mul_u64(t, r, &t) &&
			       round_add(out, t, x->align) && (d != MP_DTYPE_NVFP4 || round_add(out, 4, x->align));
		}
		return mp_dtype_bytes(d, n, &t) && round_add(out, t, x->align);
	}
}

static mp_status class_format(const mp_model *m, const mp_weight_formats *f, mp_tensor_class cls, mp_dtype weight_dtype,
                              mp_dtype compute, mp_dtype *out, mp_error *err)
{
	static const char *const fields[MP_TC_COUNT] = {"/weight_formats/embeddings", "/weight_formats/attention",
	                                                "/weight_formats/mlp",        "/weight_formats/experts",
	                                                "/weight_formats/lm_head",    "/weight_formats/norms",
	                                                "/weight_formats/recurrent",  "/weight_formats/vision"};
	mp_dtype d = f ? f->cls[cls] : MP_DTYPE_INVALID;

	/* a checkpoint that ships a class quantised (gpt-oss's MXFP4 experts) loads it so, whatever the rest is */
	if (d == MP_DTYPE_INVALID && m->checkpoint_format[cls] != MP_DTYPE_INVALID && is_float(weight_dtype))
		d = m->checkpoint_format[cls];
	if (d == MP_DTYPE_INVALID) {
		if (cls == MP_TC_NORMS)
			d = is_gguf(weight_dtype) ? MP_DTYPE_FP32 : (is_float(weight_dtype) ? weight_dtype : compute);
		else if ((cls == MP_TC_EMBEDDINGS || cls == MP_TC_LM_HEAD) && !is_float(weight_dtype) &&
		         !is_gguf(weight_dtype))
			d = compute;
		else if (cls == MP_TC_VISION && !is_float(weight_dtype))
			/* quantizers leave the image tower in 16 bit (llm-compressor and AutoAWQ ignore it, GGUF ships it
			 * as a separate f16 mmproj file) */
			d = compute;
		else
			d = weight_dtype;
	}
	if (d == MP_DTYPE_TF32 || d == MP_DTYPE_FP64 || mp_dtype_layout_of(d).block_values == 0)
		return mp_fail_at(err, MP_EINVAL, f ? f->json_pointer : NULL, fields[cls],
		               "%s format must be one of fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8, int4, nf4, q8_0, "
		               "q4_0, q4_K, q5_K, q6_K, mxfp4, nvfp4",
		               mp_tensor_class_name(cls));
	if (cls == MP_TC_NORMS && !is_float(d))
		return mp_fail_at(err, MP_EINVAL, f ? f->json_pointer : NULL, fields[cls],
		               "norms (and every 1-D tensor) stay in a float format: fp32, bf16 or fp16");
	*out = d;
	return MP_OK;
}

/* Bytes of the runtime's own buffers: transformers' <Type>RotaryEmbedding registers inv_freq and original_inv_freq
 * (rotary_dim / 2 fp32 values each) per RoPE module (gemma3 has a local and a global one); llama.cpp's
 * convert_hf_to_gguf.py writes rope_freqs (rotary_dim / 2 f32) for llama3 scaling. */
static bool layout_buffers(const mp_model *m, mp_weight_layout layout, const fmt_ctx *x, uint64_t *out)
{
	uint64_t one;

	*out = 0;
	if (m->rotary_dim < 2)
		return true;
	if (layout == MP_LAYOUT_PYTORCH)
		return matrix_bytes(MP_DTYPE_FP32, 1, m->rotary_dim / 2, x, &one) &&
		       mp_mul_u64(one, 2 * (uint64_t)(m->rotary_buffer_sets ? m->rotary_buffer_sets : 1), out);
	if (layout == MP_LAYOUT_GGUF && strcmp(m->rope_type, "llama3") == 0)
		return matrix_bytes(MP_DTYPE_FP32, 1, m->rotary_dim / 2, x, out);
	return true;
}

/* The formats and the layout of a weights answer: the classes' formats in out, the layout's context in *x,
 * f_ckpt[c] when class c's format comes from the checkpoint's quantization_config. */
static mp_status resolve_formats(const mp_model *m, mp_dtype weight_dtype, mp_dtype compute_dtype,
				 const mp_weight_formats *f, mp_weights *out, fmt_ctx *x, bool *f_ckpt, mp_error *err)
{
	mp_weight_layout layout = f ? f->layout : MP_LAYOUT_AUTO;
	mp_status st;

	for (int c = 0; c < MP_TC_COUNT; c++) {
		f_ckpt[c] = (!f || f->cls[c] == MP_DTYPE_INVALID) && m->checkpoint_format[c] != MP_DTYPE_INVALID &&
		            is_float(weight_dtype);
		st = class_format(m, f, (mp_tensor_class)c, weight_dtype, compute_dtype, &out->cls[c].format, err);
		if (st != MP_OK)
			return st;
		if (layout == MP_LAYOUT_AUTO && is_gguf(out->cls[c].format))
			layout = MP_LAYOUT_GGUF;
	}
	if (layout == MP_LAYOUT_AUTO)
		layout = MP_LAYOUT_PACKED;
	out->layout = layout;
	if (f) {
		if (f->int4_group_size)
			x->group = f->int4_group_size;
		x->scheme = f->int4_scheme;
		x->nf4_dq = !f->nf4_no_double_quant;
	}
	if (layout == MP_LAYOUT_PYTORCH)
		x->align = MP_PYTORCH_ALLOCATION_BYTES;
	return MP_OK;
}

/* One inventory entry's format, values (all its copies and count) and bytes on one of tp ranks, under the formats
 * of w. A buffer: fp32 (int64 ones taking two fp32 values' room), no parameters. False on overflow. */
static inline bool tensor_bytes(const mp_tensor *t, const mp_weights *w, const fmt_ctx *x, const bool *f_ckpt,
			 mp_dtype compute_dtype, uint64_t tp, mp_tensor_bytes *out)
{
	/* a tensor's bytes count in its kind's class; a vector takes the norms' format there */
	mp_tensor_class cls = mp_tensor_kind_class((mp_tensor_kind)t->kind);
	uint64_t r, c, one, all, n, parts = t->parts ? t->parts : 1;
	mp_dtype d;

	out->parameters = out->bytes = 0;
	if (t->flags & MP_TF_BUFFER) {
		out->dtype = (t->flags & MP_TF_INT64) ? MP_DTYPE_INVALID : MP_DTYPE_FP32;
		return mp_tensor_values(t, &n) && mp_mul_u64(n, (t->flags & MP_TF_INT64) ? 2 : 1, &n) &&
		       matrix_bytes(MP_DTYPE_FP32, 1, n, x, &one) && mp_mul_u64(one, t->count, &out->bytes);
	}
	d = w->cls[mp_tensor_format_class(t)].format;
	/* a checkpoint that quantises its experts itself leaves the router unquantised (gpt-oss
	 * modules_to_not_convert: mlp.router) */
	if ((t->flags & MP_TF_ROUTER) && f_ckpt[cls])
		d = compute_dtype;
	out->dtype = d;
	mp_tensor_per_rank(t, tp, &r, &c);
	/* each matrix the checkpoint keeps (an expert's, a part of a fused one) is quantised with its own scales */
	if (mp_tensor_is_vector(t) ? !matrix_bytes(d, 1, c / parts, x, &one) : !matrix_bytes(d, r / parts, c, x, &one))
		return false;
	if (!mp_mul_u64(one, parts, &all) || !mp_mul_u64(all, mp_tensor_copies(t), &all) ||
	    !mp_mul_u64(all, t->count, &out->bytes) || !mp_tensor_values(t, &n))
		return false;
	return mp_mul_u64(n, t->count, &out->parameters);
}

mp_status mp_weight_bytes(const mp_model *m, mp_dtype weight_dtype, mp_dtype compute_dtype, const mp_weight_formats *f,
                          uint64_t tp, mp_weights *out, mp_error *err)
{
	fmt_ctx x = {MP_DEFAULT_INT4_GROUP_SIZE, MP_INT4_GPTQ, true, 1};
	bool f_ckpt[MP_TC_COUNT]; /* the class's format comes from the checkpoint's quantization_config */
	uint64_t lb;
	mp_status st;

	memset(out, 0, sizeof(*out));
	if (compute_dtype == MP_DTYPE_INVALID)
		compute_dtype = MP_DTYPE_BF16;
	if (!is_float(compute_dtype))
		return mp_fail_at(err, MP_EINVAL, f ? f->json_pointer : NULL, "/compute_dtype", "compute_dtype must be one of: fp32, bf16, fp16");
	if (!m->inv.built)
		return mp_fail(err, MP_EINTERNAL, mp_model_pointer(m), "the model's tensors were not built (mp_model_build)");
	if (tp == 0)
		tp = 1;
	st = resolve_formats(m, weight_dtype, compute_dtype, f, out, &x, f_ckpt, err);
	if (st != MP_OK)
		return st;
	for (size_t i = 0; i < mp_inventory_size(&m->inv); i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);
		mp_tensor_class cls = mp_tensor_kind_class((mp_tensor_kind)t->kind);
		mp_tensor_bytes b;

		if (t->flags & MP_TF_UNCOUNTED)
			continue;
		if (!tensor_bytes(t, out, &x, f_ckpt, compute_dtype, tp, &b))
			goto overflow;
		if (t->flags & MP_TF_BUFFER) {
			if (!mp_add_u64(out->buffers_bytes, b.bytes, &out->buffers_bytes))
				goto overflow;
			continue;
		}
		if (!mp_add_u64(out->cls[cls].parameters, b.parameters, &out->cls[cls].parameters) ||
		    !mp_add_u64(out->cls[cls].bytes, b.bytes, &out->cls[cls].bytes))
			goto overflow;
	}
	if (!layout_buffers(m, out->layout, &x, &lb) || !mp_add_u64(out->buffers_bytes, lb, &out->buffers_bytes))
		goto overflow;
	out->total_bytes = out->buffers_bytes;
	for (int c = 0; c < MP_TC_COUNT; c++)
		if (!mp_add_u64(out->total_bytes, out->cls[c].bytes, &out->total_bytes))
			goto overflow;
	return MP_OK;
overflow:
	return mp_model_overflow(m, "the weight bytes", err);
}

mp_status mp_weight_tensors(const mp_model *m, mp_dtype weight_dtype, mp_dtype compute_dtype,
			    const mp_weight_formats *f, uint64_t tp, mp_weights *w, mp_tensor_bytes *rows, size_t n_rows,
			    mp_error *err)
{
	fmt_ctx x = {MP_DEFAULT_INT4_GROUP_SIZE, MP_INT4_GPTQ, true, 1};
	bool f_ckpt[MP_TC_COUNT];
	mp_weights resolved;
	mp_status st = mp_weight_bytes(m, weight_dtype, compute_dtype, f, tp, w, err);

	if (st != MP_OK)
		return st;
	if (n_rows < mp_inventory_size(&m->inv))
		return mp_fail(err, MP_EINTERNAL, mp_model_pointer(m), "room for %zu tensors, the inventory holds %zu",
			       n_rows, mp_inventory_size(&m->inv));
	if (compute_dtype == MP_DTYPE_INVALID)
		compute_dtype = MP_DTYPE_BF16;
	memset(&resolved, 0, sizeof(resolved));
	st = resolve_formats(m, weight_dtype, compute_dtype, f, &resolved, &x, f_ckpt, err);
	if (st != MP_OK)
		return st;
	for (size_t i = 0; i < mp_inventory_size(&m->inv); i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);

		if (!tensor_bytes(t, &resolved, &x, f_ckpt, compute_dtype, tp ? tp : 1, &rows[i]))
			return mp_model_overflow(m, "the weight bytes", err);
		rows[i].counted = !(t->flags & MP_TF_UNCOUNTED);
		if (!rows[i].counted)
			rows[i].parameters = rows[i].bytes = 0;
	}
	return MP_OK;
}
