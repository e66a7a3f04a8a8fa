/*
 * plan.c: request decoding and response encoding for the plan endpoints (see plan.h). Field tables
 * declare each request; the planner does the arithmetic; this file only moves values between JSON and
 * structs and writes the notes that say what a figure includes.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "hf_config.h"
#include "plan.h"

#define ADD_U64(obj, key, v) cJSON_AddNumberToObject((obj), (key), (double)(v))

/* ----- models ----------------------------------------------------------------------------------------- */

typedef struct bare_model {
	uint64_t parameters;
} bare_model;

static const mpd_field bare_model_fields[] = {
	{ .name = "parameters", .type = MPD_F_U64, .required = true, .offset = offsetof(bare_model, parameters),
	  .min = 1, .max = UINT64_C(1) << 50 },
};

mp_status mpd_resolve_model(mp_store *store, const cJSON *model, mpd_model *out, mp_error *err)
{
	mp_status st;

	memset(out, 0, sizeof(*out));
	if (cJSON_IsString(model)) {
		mp_store_model sm;
		cJSON *cfg;

		st = mp_store_model_get(store, model->valuestring, &sm, err);
		if (st != MP_OK)
			return st;
		snprintf(out->id, sizeof(out->id), "%s", sm.id);
		cfg = cJSON_Parse(sm.config_json);
		mp_store_model_free(&sm);
		if (cfg == NULL)
			return mp_fail(err, MP_EINTERNAL, "/model", "stored config of '%s' is not JSON", out->id);
		st = mpd_model_from_hf(cfg, "/model", &out->arch, err);
		cJSON_Delete(cfg);
	} else if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "hf_config")) {
		if (cJSON_GetArraySize(model) != 1)
			return mp_fail(err, MP_EINVAL, "/model",
				       "an inline model is {\"hf_config\": {...}} with no other members");
		st = mpd_model_from_hf(cJSON_GetObjectItemCaseSensitive(model, "hf_config"), "/model/hf_config",
				       &out->arch, err);
	} else if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "parameters")) {
		bare_model bm = { 0 };

		st = mpd_decode_fields(model, "/model", bare_model_fields, 1, &bm, err);
		if (st != MP_OK)
			return st;
		out->params.total = out->params.active_per_token = bm.parameters;
		snprintf(out->arch.model_type, sizeof(out->arch.model_type), "unknown");
		return MP_OK;
	} else {
		return mp_fail(err, MP_EINVAL, "/model",
			       "model must be a stored id (\"llama-3-8b\"), {\"hf_config\": {...}} or "
			       "{\"parameters\": N}");
	}
	if (st != MP_OK)
		return st;
	out->architecture_known = true;
	st = mp_count_parameters(&out->arch, &out->params, err);
	/* The planner names config keys under "/model/"; an inline config lives under "/model/hf_config/". */
	if (st != MP_OK && !cJSON_IsString(model) && strncmp(err->field, "/model/", 7) == 0 &&
	    strncmp(err->field, "/model/hf_config/", 17) != 0) {
		char field[sizeof(err->field)];

		snprintf(field, sizeof(field), "/model/hf_config/%s", err->field + 7);
		memcpy(err->field, field, sizeof(field));
	}
	return st;
}

cJSON *mpd_model_json(const mpd_model *m)
{
	cJSON *o = cJSON_CreateObject(), *c;

	if (o == NULL)
		return NULL;
	if (m->id[0])
		cJSON_AddStringToObject(o, "id", m->id);
	else
		cJSON_AddNullToObject(o, "id");
	cJSON_AddStringToObject(o, "model_type", m->arch.model_type);
	ADD_U64(o, "parameters", m->params.total);
	if (!m->architecture_known)
		return o;
	ADD_U64(o, "active_parameters_per_token", m->params.active_per_token);
	c = cJSON_AddObjectToObject(o, "parameters_by_component");
	ADD_U64(c, "embedding", m->params.embedding);
	ADD_U64(c, "position_embedding", m->params.position_embedding);
	ADD_U64(c, "attention", m->params.attention);
	ADD_U64(c, "mlp", m->params.mlp);
	ADD_U64(c, "experts", m->params.experts);
	ADD_U64(c, "norms", m->params.norms);
	ADD_U64(c, "lm_head", m->params.lm_head);
	cJSON_AddBoolToObject(o, "tie_word_embeddings", m->arch.tie_word_embeddings);
	return o;
}

/* ----- devices ---------------------------------------------------------------------------------------- */

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
	if (v && *v)
		cJSON_AddStringToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

static void add_u64_or_null(cJSON *o, const char *k, uint64_t v)
{
	if (v)
		ADD_U64(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *mpd_device_json(const mp_store_device *d)
{
	cJSON *o = cJSON_CreateObject(), *peaks;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", d->id);
	cJSON_AddStringToObject(o, "name", d->name);
	cJSON_AddStringToObject(o, "vendor", d->vendor);
	add_str_or_null(o, "architecture", d->architecture);
	add_str_or_null(o, "form_factor", d->form_factor);
	add_str_or_null(o, "memory_type", d->memory_type);
	ADD_U64(o, "memory_bytes", d->hw.memory_bytes);
	add_u64_or_null(o, "usable_memory_bytes", d->hw.usable_memory_bytes);
	cJSON_AddNumberToObject(o, "memory_bandwidth_bytes_per_second", d->hw.memory_bandwidth_bytes_per_second);
	peaks = cJSON_AddObjectToObject(o, "peak_flops_per_second");
	for (int t = 1; t < MP_DTYPE_COUNT; t++)
		if (d->hw.peak_flops_per_second[t] > 0)
			cJSON_AddNumberToObject(peaks, mp_dtype_name((mp_dtype)t), d->hw.peak_flops_per_second[t]);
	add_u64_or_null(o, "l2_cache_bytes", d->hw.l2_cache_bytes);
	add_u64_or_null(o, "sm_count", d->hw.sm_count);
	if (d->hw.boost_clock_hz > 0)
		cJSON_AddNumberToObject(o, "boost_clock_hz", d->hw.boost_clock_hz);
	else
		cJSON_AddNullToObject(o, "boost_clock_hz");
	if (d->tdp_watts > 0)
		cJSON_AddNumberToObject(o, "tdp_watts", d->tdp_watts);
	else
		cJSON_AddNullToObject(o, "tdp_watts");
	add_u64_or_null(o, "cuda_context_bytes", d->hw.cuda_context_bytes);
	if (d->interconnect_json[0]) {
		cJSON *ic = cJSON_Parse(d->interconnect_json);

		if (ic)
			cJSON_AddItemToObject(o, "interconnect", ic);
		else
			cJSON_AddNullToObject(o, "interconnect");
	} else {
		cJSON_AddNullToObject(o, "interconnect");
	}
	cJSON_AddStringToObject(o, "source", d->source);
	cJSON_AddStringToObject(o, "source_note", d->source_note);
	add_str_or_null(o, "measured_at", d->measured_at);
	cJSON_AddStringToObject(o, "created_at", d->created_at);
	cJSON_AddStringToObject(o, "updated_at", d->updated_at);
	return o;
}

/* ----- shared request members -------------------------------------------------------------------------- */

static mp_status need_model(const cJSON *body, mp_store *store, mpd_model *m, mp_error *err)
{
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(body, "model");

	if (model == NULL)
		return mp_fail(err, MP_EINVAL, "/model",
			       "model is required: a stored id, {\"hf_config\": {...}} or {\"parameters\": N}");
	return mpd_resolve_model(store, model, m, err);
}

static mp_status maybe_device(const char *id, mp_store *store, mp_store_device *dev, bool *have, mp_error *err)
{
	*have = id[0] != '\0';
	return *have ? mp_store_device_get(store, id, dev, err) : MP_OK;
}

static cJSON *fit_json(const mp_fit *fit, const mp_store_device *dev)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "device", dev->id);
	cJSON_AddBoolToObject(o, "fits", fit->fits);
	ADD_U64(o, "capacity_bytes", fit->capacity_bytes);
	cJSON_AddStringToObject(o, "capacity_source",
				dev->hw.usable_memory_bytes ? "usable_memory_bytes" : "memory_bytes");
	cJSON_AddNumberToObject(o, "headroom_bytes", (double)fit->headroom_bytes);
	cJSON_AddStringToObject(o, "binding_term", fit->binding_term ? fit->binding_term : "weights");
	ADD_U64(o, "max_batch_size", fit->max_batch_size);
	ADD_U64(o, "max_sequence_length", fit->max_sequence_length);
	return o;
}

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
		st = need_model(body, store, &m, err);
	if (st == MP_OK && !m.architecture_known)
		st = mp_fail(err, MP_EINVAL, "/model/hf_config",
			     "the KV cache needs the architecture (layers, KV heads, head_dim): give the model as a "
			     "stored id or {\"hf_config\": {...}}, not a bare parameter count");
	if (st == MP_OK)
		st = maybe_device(ib.device, store, &dev, &have_dev, err);
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
		cJSON_AddItemToObject(doc, "fit", fit_json(&fit, &dev));
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

/* ----- training ---------------------------------------------------------------------------------------- */

static const char *const precision_names[] = { "mixed_bf16", NULL };
static const char *const optimizer_names[] = { "adamw", NULL };

typedef struct training_body {
	mp_training_req req;
	int precision, optimizer;
	char device[MP_STORE_ID_MAX];
} training_body;

static const mpd_field training_fields[] = {
	{ .name = "model", .type = MPD_F_ANY, .required = true },
	{ .name = "precision", .type = MPD_F_ENUM, .required = true, .offset = offsetof(training_body, precision),
	  .names = precision_names },
	{ .name = "optimizer", .type = MPD_F_ENUM, .required = true, .offset = offsetof(training_body, optimizer),
	  .names = optimizer_names },
	{ .name = "micro_batch_size", .type = MPD_F_U64, .required = true,
	  .offset = offsetof(training_body, req.micro_batch_size), .min = 1, .max = MP_MAX_BATCH_SIZE },
	{ .name = "sequence_length", .type = MPD_F_U64, .required = true,
	  .offset = offsetof(training_body, req.sequence_length), .min = 1, .max = MP_MAX_SEQUENCE_LENGTH },
	{ .name = "device", .type = MPD_F_STRING, .offset = offsetof(training_body, device), .size = MP_STORE_ID_MAX },
};

mp_status mpd_plan_training(mp_store *store, const cJSON *body, cJSON **out, mp_error *err)
{
	training_body tb;
	mpd_model m;
	mp_store_device dev;
	mp_training_memory mem;
	bool have_dev;
	mp_status st;
	cJSON *doc, *o, *notes;

	*out = NULL;
	memset(&tb, 0, sizeof(tb));
	tb.req.num_gpus = 1;
	st = mpd_decode_fields(body, "", training_fields, sizeof(training_fields) / sizeof(training_fields[0]), &tb,
			       err);
	if (st == MP_OK) {
		tb.req.precision = (mp_precision)tb.precision;
		tb.req.optimizer = (mp_optimizer)tb.optimizer;
		st = need_model(body, store, &m, err);
	}
	if (st == MP_OK)
		st = maybe_device(tb.device, store, &dev, &have_dev, err);
	if (st == MP_OK)
		st = mp_plan_training(&m.params, &tb.req, &mem, err);
	if (st != MP_OK)
		return st;

	doc = cJSON_CreateObject();
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	cJSON_AddItemToObject(doc, "model", mpd_model_json(&m));
	o = cJSON_AddObjectToObject(doc, "request");
	cJSON_AddStringToObject(o, "precision", precision_names[tb.precision]);
	cJSON_AddStringToObject(o, "optimizer", optimizer_names[tb.optimizer]);
	ADD_U64(o, "micro_batch_size", tb.req.micro_batch_size);
	ADD_U64(o, "sequence_length", tb.req.sequence_length);
	o = cJSON_AddObjectToObject(doc, "bytes_per_parameter");
	ADD_U64(o, "weights", mem.weight_bytes_per_parameter);
	ADD_U64(o, "gradients", mem.gradient_bytes_per_parameter);
	ADD_U64(o, "master_weights", mem.master_weight_bytes_per_parameter);
	ADD_U64(o, "optimizer_states", mem.optimizer_bytes_per_parameter);
	ADD_U64(o, "total", mem.weight_bytes_per_parameter + mem.gradient_bytes_per_parameter +
				    mem.master_weight_bytes_per_parameter + mem.optimizer_bytes_per_parameter);
	o = cJSON_AddObjectToObject(doc, "memory");
	ADD_U64(o, "weights_bytes", mem.weights_bytes);
	ADD_U64(o, "gradients_bytes", mem.gradients_bytes);
	ADD_U64(o, "optimizer_states_bytes", mem.optimizer_states_bytes);
	ADD_U64(o, "master_weights_bytes", mem.master_weights_bytes);
	cJSON_AddNullToObject(o, "activations_bytes");
	cJSON_AddNullToObject(o, "logits_bytes");
	ADD_U64(o, "overhead_bytes", mem.overhead_bytes);
	ADD_U64(o, "total_bytes", mem.total_bytes);
	cJSON_AddBoolToObject(o, "activations_included", false);
	if (have_dev) {
		mp_fit fit = { 0 };

		fit.capacity_bytes = mp_device_capacity_bytes(&dev.hw);
		fit.fits = mem.total_bytes <= fit.capacity_bytes;
		fit.headroom_bytes = (int64_t)fit.capacity_bytes - (int64_t)mem.total_bytes;
		fit.binding_term = "optimizer_states";
		o = fit_json(&fit, &dev);
		cJSON_DeleteItemFromObjectCaseSensitive(o, "max_batch_size");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "max_sequence_length");
		cJSON_AddBoolToObject(o, "lower_bound", true);
		cJSON_AddItemToObject(doc, "fit", o);
	}
	notes = cJSON_AddArrayToObject(doc, "notes");
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"Model states of mixed-precision AdamW: 2 (bf16 weights) + 2 (bf16 gradients) + 4 (fp32 master "
		"weights) + 8 (two fp32 Adam moments) = 16 bytes per parameter (ZeRO, arXiv 1910.02054, sec. 3.1)."));
	cJSON_AddItemToArray(notes, cJSON_CreateString(
		"Activations and logits are NOT included: activations_bytes and logits_bytes are null and "
		"total_bytes counts model states only, so a fit verdict is a lower bound."));
	*out = doc;
	return MP_OK;
}
