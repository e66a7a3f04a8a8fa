/*
 * mpc_tensors.c: a model's tensor list (types.h mps_tensor_list) as JSON (the "tensors" block of a plan and the whole
 * GET /v1/models/{id}/tensors answer: one encoder) and as text for people (memplan model tensors), and the "include"
 * member of a plan request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

mp_status mpc_include_decode(const cJSON *v, const char *field, bool *tensors, mp_error *err)
{
	static const char allowed[] = "include is an array of the answer's optional parts: [\"tensors\"] (the model's "
				      "tensors with their formats and bytes)";
	const cJSON *e;

	*tensors = false;
	if (v == NULL || cJSON_IsNull(v))
		return MP_OK;
	if (!cJSON_IsArray(v))
		return mp_fail(err, MP_EINVAL, field, "%s", allowed);
	cJSON_ArrayForEach(e, v)
	{
		if (!cJSON_IsString(e) || strcmp(e->valuestring, "tensors") != 0)
			return mp_fail(err, MP_EINVAL, field, "%s; got %s%.40s%s", allowed,
				       cJSON_IsString(e) ? "'" : "an element that is not a string",
				       cJSON_IsString(e) ? e->valuestring : "", cJSON_IsString(e) ? "'" : "");
		*tensors = true;
	}
	return MP_OK;
}

void mpc_tensor_rows_write(mpc_out *w, const char *key, const mps_tensor_list *l)
{
	mpc_w_arr(w, key);
	for (size_t i = 0; i < l->n; i++) {
		const mps_tensor_row *r = &l->rows[i];

		mpc_w_obj(w, NULL);
		mpc_w_str(w, "name", r->name);
		mpc_w_arr(w, "shape");
		for (unsigned d = 0; d < r->ndim; d++)
			mpc_w_u64(w, NULL, r->shape[d]);
		mpc_w_end(w);
		mpc_w_u64(w, "layers", r->layers);
		mpc_w_lit(w, "class", mp_tensor_kind_name(r->kind));
		mpc_w_lit(w, "format_class", r->buffer ? "buffer" : mp_tensor_class_name(r->format_class));
		if (r->b.dtype == MP_DTYPE_INVALID)
			mpc_w_lit(w, "dtype", "int64");
		else
			mpc_w_lit(w, "dtype", mp_dtype_name(r->b.dtype));
		mpc_w_u64(w, "parameters", r->b.parameters);
		mpc_w_u64(w, "bytes", r->b.bytes);
		if (!r->b.counted)
			mpc_w_bool(w, "counted", false);
		mpc_w_end(w);
	}
	mpc_w_end(w);
}

/* The members of a tensor listing (inside the object the caller opens): the plan's block and the GET answer. */
static void members_write(mpc_out *w, const mps_tensor_list *l)
{
	mpc_w_lit(w, "weight_dtype", mp_dtype_name(l->weight_dtype));
	mpc_w_lit(w, "weight_dtype_from", l->weight_dtype_from);
	mpc_w_lit(w, "weight_layout", l->weights.layout == MP_LAYOUT_PYTORCH ? "pytorch"
				      : l->weights.layout == MP_LAYOUT_GGUF ? "gguf"
									     : "packed");
	mpc_w_u64(w, "tensor_parallel_size", l->tensor_parallel_size);
	mpc_w_u64(w, "parameters", l->parameters);
	mpc_w_u64(w, "bytes_per_gpu", l->weights.total_bytes);
	mpc_w_u64(w, "layout_buffers_bytes", l->layout_buffers_bytes);
	mpc_tensor_rows_write(w, "tensors", l);
}

void mpc_tensors_write(mpc_out *w, const char *key, const mps_tensor_list *l)
{
	mpc_w_obj(w, key);
	members_write(w, l);
	mpc_w_end(w);
}

char *mpc_model_tensors_print(const char *model_id, const mps_tensor_list *l, size_t *len)
{
	mpc_out w;

	mpc_out_init(&w);
	mpc_w_obj(&w, NULL);
	mpc_w_str_or_null(&w, "model", model_id);
	members_write(&w, l);
	mpc_w_end(&w);
	return mpc_out_finish(&w, len);
}

char *mpc_model_tensors_text(const char *model, const mps_tensor_list *l)
{
	/* a row is at most 255 (name) + 63 (shape) + 96 (the rest) bytes */
	size_t cap = 1024 + l->n * 420, o = 0;
	char *buf = malloc(cap), b1[48], b2[48];

	if (buf == NULL)
		return NULL;
#define PUT(...) o += (size_t)snprintf(buf + o, o < cap ? cap - o : 0, __VA_ARGS__)
	PUT("%s: %zu tensors, %s parameters, %s per GPU in %s (%s) at tensor_parallel_size %llu\n\n",
	    model && model[0] ? model : "the model", l->n, mpc_fmt_count(b1, sizeof(b1), (double)l->parameters),
	    mpc_fmt_bytes(b2, sizeof(b2), (double)l->weights.total_bytes), mp_dtype_name(l->weight_dtype),
	    l->weight_dtype_from, (unsigned long long)l->tensor_parallel_size);
	PUT("%-64s %-20s %6s %-13s %-8s %s\n", "name", "shape", "layers", "class", "dtype", "bytes per GPU");
	for (size_t i = 0; i < l->n; i++) {
		const mps_tensor_row *r = &l->rows[i];
		char shape[64];
		size_t so = 0;

		shape[0] = '\0';
		for (unsigned d = 0; d < r->ndim && so < sizeof(shape); d++)
			so += (size_t)snprintf(shape + so, sizeof(shape) - so, "%s%u", d ? " x " : "", r->shape[d]);
		if (r->ndim == 0)
			snprintf(shape, sizeof(shape), "scalar");
		PUT("%-64s %-20s %6u %-13s %-8s %s%s\n", r->name, shape, r->layers, mp_tensor_kind_name(r->kind),
		    r->b.dtype == MP_DTYPE_INVALID ? "int64" : mp_dtype_name(r->b.dtype),
		    mpc_fmt_bytes(b1, sizeof(b1), (double)r->b.bytes), r->b.counted ? "" : " (not counted)");
	}
	if (l->layout_buffers_bytes)
		PUT("\nand the layout's own tables (RoPE), in no row: %s\n",
		    mpc_fmt_bytes(b1, sizeof(b1), (double)l->layout_buffers_bytes));
#undef PUT
	return buf;
}
