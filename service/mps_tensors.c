/*
 * mps_tensors.c: a model's tensors as the API lists them: the inventory (planner/mp_inventory.h), each entry named as
 * transformers' state_dict names it, with the format it is stored in and its bytes per tensor-parallel rank
 * (planner mp_weight_tensors). GET /v1/models/{id}/tensors, "include": ["tensors"] on a plan, memplan model tensors.
 */
#include <stdlib.h>
#include <string.h>

#include "service_int.h"

static bool is_float(mp_dtype d)
{
	return d == MP_DTYPE_FP32 || d == MP_DTYPE_BF16 || d == MP_DTYPE_FP16;
}

mp_status mps_tensors_of(const mp_model *m, const mps_tensors_query *q, mps_tensor_list *out, mp_error *err)
{
	size_t n = mp_inventory_size(&m->inv);
	mp_tensor_bytes *b;
	mp_status st;

	memset(out, 0, sizeof(*out));
	out->weight_dtype = q->weight_dtype;
	out->weight_dtype_from = "request";
	if (out->weight_dtype == MP_DTYPE_INVALID) {
		bool cfg = is_float(m->config_dtype);

		out->weight_dtype = cfg ? m->config_dtype : MP_DTYPE_BF16;
		out->weight_dtype_from = cfg ? "config_dtype" : "default";
	}
	out->tensor_parallel_size = q->tensor_parallel_size ? q->tensor_parallel_size : 1;
	b = calloc(n ? n : 1, sizeof(*b));
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	if (b == NULL || out->rows == NULL) {
		free(b);
		mps_tensor_list_release(out);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	st = mp_weight_tensors(m, out->weight_dtype, q->compute_dtype, q->formats, out->tensor_parallel_size,
			       &out->weights, b, n, err);
	for (size_t i = 0; st == MP_OK && i < n; i++) {
		const mp_tensor *t = mp_inventory_at(&m->inv, i);
		mps_tensor_row *r = &out->rows[i];
		uint64_t sum;

		mp_tensor_name(&m->inv, t, r->name, sizeof(r->name));
		memcpy(r->shape, t->dims, sizeof(r->shape));
		r->ndim = t->ndim;
		r->layers = t->count;
		r->kind = (mp_tensor_kind)t->kind;
		r->format_class = mp_tensor_format_class(t);
		r->buffer = (t->flags & MP_TF_BUFFER) != 0;
		r->b = b[i];
		if (!mp_add_u64(out->parameters, r->b.parameters, &sum))
			st = mp_fail(err, MP_EOVERFLOW, mp_model_pointer(m), "the model's parameters overflow 64 bits");
		out->parameters = sum;
	}
	free(b);
	if (st != MP_OK) {
		mps_tensor_list_release(out);
		return st;
	}
	out->n = n;
	/* the rows hold every byte of the weights but the layout's own tables */
	out->layout_buffers_bytes = out->weights.total_bytes;
	for (size_t i = 0; i < n; i++)
		out->layout_buffers_bytes -= out->rows[i].b.bytes;
	return MP_OK;
}

mp_status mps_model_tensors(mps_service *s, const mps_model_ref *ref, const mps_tensors_query *q, mps_tensor_list *out,
			    mp_error *err)
{
	mps_model *m = malloc(sizeof(*m));
	mp_status st = m ? mps_model_resolve(s, ref, m, err) : mp_fail(err, MP_ENOMEM, "", "out of memory");

	memset(out, 0, sizeof(*out));
	if (st == MP_OK && !m->architecture_known)
		st = mp_fail(err, MP_EINVAL, ref->pointer, "a bare parameter count has no tensors: give the architecture");
	if (st == MP_OK)
		st = mps_tensors_of(&m->arch, q, out, err);
	free(m);
	return st;
}

void mps_tensor_list_release(mps_tensor_list *l)
{
	if (l == NULL)
		return;
	free(l->rows);
	l->rows = NULL;
	l->n = 0;
}

void mps_inference_plan_release(mps_inference_plan *p)
{
	if (p == NULL)
		return;
	mps_tensor_list_release(&p->tensors);
	free(p->llama);
	p->llama = NULL;
}
