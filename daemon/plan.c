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

/* A stored model as the plans see it: a pure function of its row, so the store memoises it (mp_store_model_decoded)
 * and the config JSON is parsed once per change, not per request. */
static mp_status decode_stored_model(const mp_store_model *sm, void *value, mp_error *err)
{
	mpd_model *out = value;
	cJSON *cfg = cJSON_Parse(sm->config_json);
	mp_status st;

	memset(out, 0, sizeof(*out));
	snprintf(out->id, sizeof(out->id), "%s", sm->id);
	if (cfg == NULL)
		return mp_fail(err, MP_EINTERNAL, "/model", "stored config of '%s' is not JSON", out->id);
	st = mpd_model_from_hf(cfg, "/model", &out->arch, err);
	cJSON_Delete(cfg);
	if (st != MP_OK)
		return st;
	out->architecture_known = true;
	return mp_count_parameters(&out->arch, &out->params, err);
}

mp_status mpd_resolve_model(mp_store *store, const cJSON *model, mpd_model *out, mp_error *err)
{
	mp_status st;
	const char *prefix = "/model/hf_config/";

	memset(out, 0, sizeof(*out));
	if (cJSON_IsString(model)) {
		return mp_store_model_decoded(store, model->valuestring, decode_stored_model, out, sizeof(*out), err);
	} else if (cJSON_IsObject(model) && cJSON_GetObjectItemCaseSensitive(model, "architecture")) {
		/* a generic architecture; an hf_config beside it only names the model (its model_type) */
		const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(model, "hf_config");
		const cJSON *type = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, "model_type") : NULL;

		if (cJSON_GetArraySize(model) != 1 + (cfg != NULL))
			return mp_fail(err, MP_EINVAL, "/model",
				       "a model by architecture is {\"architecture\": {...}} (with an optional hf_config)");
		st = mpd_model_from_architecture(cJSON_GetObjectItemCaseSensitive(model, "architecture"),
						 "/model/architecture", &out->arch, err);
		if (st == MP_OK && cJSON_IsString(type))
			snprintf(out->arch.model_type, sizeof(out->arch.model_type), "%s", type->valuestring);
		prefix = "/model/architecture/";
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
			       "model must be a stored id (\"llama-3-8b\"), {\"hf_config\": {...}}, "
			       "{\"architecture\": {...}} or {\"parameters\": N}");
	}
	if (st != MP_OK)
		return st;
	out->architecture_known = true;
	st = mp_count_parameters(&out->arch, &out->params, err);
	/* The planner names config keys under "/model/"; an inline config lives under "/model/hf_config/". */
	if (st != MP_OK && !cJSON_IsString(model) && strncmp(err->field, "/model/", 7) == 0 &&
	    strncmp(err->field, prefix, strlen(prefix)) != 0) {
		char field[sizeof(err->field)];

		snprintf(field, sizeof(field), "%s%s", prefix, err->field + 7);
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

mp_status mpd_need_model(const cJSON *body, mp_store *store, mpd_model *m, mp_error *err)
{
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(body, "model");

	if (model == NULL)
		return mp_fail(err, MP_EINVAL, "/model",
			       "model is required: a stored id, {\"hf_config\": {...}}, {\"architecture\": {...}} or "
			       "{\"parameters\": N}");
	return mpd_resolve_model(store, model, m, err);
}

mp_status mpd_maybe_device(const char *id, mp_store *store, mp_store_device *dev, bool *have, mp_error *err)
{
	*have = id[0] != '\0';
	return *have ? mp_store_device_get(store, id, dev, err) : MP_OK;
}

cJSON *mpd_fit_json(const mp_fit *fit, const mp_store_device *dev)
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


#define KV_DTYPES                                                                                            \
	(MPD_DT(MP_DTYPE_FP32) | MPD_DT(MP_DTYPE_BF16) | MPD_DT(MP_DTYPE_FP16) | MPD_DT(MP_DTYPE_FP8_E4M3) | \
	 MPD_DT(MP_DTYPE_FP8_E5M2) | MPD_DT(MP_DTYPE_Q8_0) | MPD_DT(MP_DTYPE_Q4_0))

mp_status mpd_kv_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err)
{
	/* vLLM's kv_cache_dtype "fp8" is fp8_e4m3 (its default fp8 KV format); both names are accepted */
	mp_dtype kv = strcmp(name, "fp8") == 0 ? MP_DTYPE_FP8_E4M3 : mp_dtype_from_name(name);

	if (kv == MP_DTYPE_INVALID || !(KV_DTYPES & MPD_DT(kv)))
		return mp_fail(err, MP_EINVAL, field,
			       "kv_cache_dtype must be one of: fp32, bf16, fp16, fp8 (= fp8_e4m3), fp8_e4m3, fp8_e5m2, "
			       "q8_0, q4_0");
	*out = kv;
	return MP_OK;
}

void mpd_error_prefix(mp_error *err, const char *pointer)
{
	char field[sizeof(err->field)];

	if (err == NULL || pointer == NULL || pointer[0] == '\0')
		return;
	snprintf(field, sizeof(field), "%s%s", pointer, err->field);
	memcpy(err->field, field, sizeof(field));
}
