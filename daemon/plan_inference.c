/*
 * plan_inference.c: POST /v1/plan/inference as a function: the request's field table, the planner call and
 * the response document with notes on what each figure includes.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "plan.h"
#include "roofline_doc.h"

#define ADD_U64(obj, key, v) cJSON_AddNumberToObject((obj), (key), (double)(v))

/* ----- inference --------------------------------------------------------------------------------------- */

typedef struct inference_body {
	mp_inference_req req;
	char device[MP_STORE_ID_MAX];
} inference_body;

#define WEIGHT_DTYPES                                                                                         \
	(MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3) |   \
	 MPD_DT(MP_DTYPE_FP8_E5M2) | MPD_DT(MP_DTYPE_INT8))
#define KV_DTYPES                                                                                             \
	(MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3) |   \
	 MPD_DT(MP_DTYPE_FP8_E5M2) | MPD_DT(MP_DTYPE_Q8_0) | MPD_DT(MP_DTYPE_Q4_0))

static const mpd_field inference_fields[] = {
	{ .name = "model", .type = MPD_F_ANY, .required = true },
	{ .name = "weight_dtype", .type = MPD_F_DTYPE, .required = true,
	  .offset = offsetof(inference_body, req.weight_dtype), .dtypes = WEIGHT_DTYPES },
	{ .name = "kv_cache_dtype", .type = MPD_F_DTYPE, .required = true,
	  .offset = offsetof(inference_body, req.kv_cache_dtype), .dtypes = KV_DTYPES },
	{ .name = "batch_size", .type = MPD_F_U64, .required = true, .offset = offsetof(inference_body, req.batch_size),
	  .min = 1, .max = MP_MAX_BATCH_SIZE },
	{ .name = "sequence_length", .type = MPD_F_U64, .required = true,
	  .offset = offsetof(inference_body, req.sequence_length), .min = 1, .max = MP_MAX_SEQUENCE_LENGTH },
	{ .name = "device", .type = MPD_F_STRING, .offset = offsetof(inference_body, device),
	  .size = MP_STORE_ID_MAX },
	{ .name = "cuda_context_bytes", .type = MPD_F_U64, .offset = offsetof(inference_body, req.cuda_context_bytes),
	  .min = 0, .max = UINT64_C(1) << 40 },
};

mp_status mpd_plan_inference(mp_store *store, const cJSON *body, cJSON **out, mp_error *err)
{
	inference_body ib;
	mpd_model m;
	mp_store_device dev;
	mp_inference_memory mem;
	mp_fit fit;
	bool have_dev;
	mp_status st;
	cJSON *doc, *o, *notes;

	*out = NULL;
	memset(&ib, 0, sizeof(ib));
	ib.req.num_gpus = 1;
	st = mpd_decode_fields(body, "", inference_fields, sizeof(inference_fields) / sizeof(inference_fields[0]),
			       &ib, err);
	if (st == MP_OK)
		st = mpd_need_model(body, store, &m, err);
	if (st == MP_OK && !m.architecture_known)
		st = mp_fail(err, MP_EINVAL, "/model/hf_config",
			     "the KV cache needs the architecture (layers, KV heads, head_dim): give the model as a "
			     "stored id or {\"hf_config\": {...}}, not a bare parameter count");
	if (st == MP_OK)
		st = mpd_maybe_device(ib.device, store, &dev, &have_dev, err);
	if (st == MP_OK)
		st = mp_plan_inference(&m.arch, &m.params, &ib.req, have_dev ? &dev.hw : NULL, &mem, &fit, err);
	if (st != MP_OK)
		return st;

	doc = cJSON_CreateObject();
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	cJSON_AddItemToObject(doc, "model", mpd_model_json(&m));
	o = cJSON_AddObjectToObject(doc, "request");
	cJSON_AddStringToObject(o, "weight_dtype", mp_dtype_name(ib.req.weight_dtype));
	cJSON_AddStringToObject(o, "kv_cache_dtype", mp_dtype_name(ib.req.kv_cache_dtype));
	ADD_U64(o, "batch_size", ib.req.batch_size);
	ADD_U64(o, "sequence_length", ib.req.sequence_length);
	o = cJSON_AddObjectToObject(doc, "memory");
	ADD_U64(o, "weights_bytes", mem.weights_bytes);
	ADD_U64(o, "kv_cache_bytes", mem.kv_cache_bytes);
	ADD_U64(o, "kv_cache_bytes_per_token", mem.kv_cache_bytes_per_token);
	ADD_U64(o, "activations_bytes", mem.activations_bytes);
	ADD_U64(o, "overhead_bytes", mem.overhead_bytes);
	ADD_U64(o, "total_bytes", mem.total_bytes);
	if (have_dev)
		cJSON_AddItemToObject(doc, "fit", mpd_fit_json(&fit, &dev));
	if (have_dev)
		cJSON_AddItemToObject(doc, "performance", mpd_performance_json(&m, &ib.req, &dev.hw));
	notes = cJSON_AddArrayToObject(doc, "notes");
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"kv_cache_bytes = 2 x layers x kv_heads x head_dim x sequence_length x batch_size x bytes of "
		"kv_cache_dtype; the sequence length is per sequence (each of batch_size slots holds its own)."));
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"overhead_bytes is the CUDA context: 552,402,944 bytes measured on an H200 with CUDA 13.0 unless the "
		"device or the request sets cuda_context_bytes."));
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"activations_bytes is 0: the transient prefill workspace is not modelled yet, so total_bytes is a "
		"lower bound for the first forward pass."));
	*out = doc;
	return MP_OK;
}

