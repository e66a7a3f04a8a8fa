/*
 * plan.h: the plan documents. Turns a decoded JSON request into planner structs, runs the planner and
 * encodes the result. Shared by the HTTP handlers and the CLI, so both answer with the same document.
 */
#ifndef MPD_PLAN_H
#define MPD_PLAN_H

#include <cjson/cJSON.h>

#include "../db/store.h"
#include "../planner/memplan.h"

/* A model resolved from a request's "model" member. */
typedef struct mpd_model {
	char id[MP_STORE_ID_MAX];	/* stored id, or "" for an inline model */
	bool architecture_known;	/* false for {"parameters": N} */
	mp_model arch;
	mp_param_count params;
} mpd_model;

/*
 * Resolves "model": a stored id (string), {"hf_config": {...}} or {"parameters": N}. Errors: MP_ENOTFOUND
 * for an unknown id, MP_EINVAL / MP_EUNSUPPORTED naming the field, MP_EDB.
 */
mp_status mpd_resolve_model(mp_store *store, const cJSON *model, mpd_model *out, mp_error *err);

/* Encodes the model block of a plan: id, model_type, parameters and their breakdown. Caller owns it. */
cJSON *mpd_model_json(const mpd_model *m);

/* Encodes a stored device as the API's device document. Caller owns it. */
cJSON *mpd_device_json(const mp_store_device *d);

/* Resolves body's required "model" member (see mpd_resolve_model). */
mp_status mpd_need_model(const cJSON *body, mp_store *store, mpd_model *m, mp_error *err);
/* Loads the device named by id into *dev when id is not empty; *have says whether it did. */
mp_status mpd_maybe_device(const char *id, mp_store *store, mp_store_device *dev, bool *have, mp_error *err);
/* Encodes a fit verdict against dev. Caller owns the result. */
cJSON *mpd_fit_json(const mp_fit *fit, const mp_store_device *dev);

/*
 * The KV-cache formats every endpoint accepts (/v1/plan/inference, /v1/roofline's transformer, /v1/fit): fp32,
 * bf16, fp16, fp8 (vLLM's name for fp8_e4m3), fp8_e4m3, fp8_e5m2, q8_0, q4_0 (llama.cpp's cache types).
 * Decodes name into *out. Errors: MP_EINVAL naming field with the list.
 */
mp_status mpd_kv_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err);
/* The weight formats POST /v1/plan/inference takes, by name; MP_EINVAL naming field (listing them) otherwise. */
mp_status mpd_weight_dtype(const char *name, const char *field, mp_dtype *out, mp_error *err);

/* Prefixes err->field with pointer (for a request nested in another, e.g. "/jobs/3/inference"). */
void mpd_error_prefix(mp_error *err, const char *pointer);

/*
 * A decoded inference request: everything but the model and the device, so a scheduler's batch can be
 * evaluated against many devices and GPU counts. The scratch members are the decoder's; read req, opts, device.
 */
typedef struct mpd_inference_job {
	mp_inference_req req;
	mp_inference_opts opts;
	char device[MP_STORE_ID_MAX];
	char kv_dtype[16];
	int int4_scheme, layout, scope, mla, attention;
	bool nf4_double_quant;
	double utilization;
} mpd_inference_job;

/* Decodes an inference body (the POST /v1/plan/inference fields) into *job. Errors name the field under
 * pointer ("" for a top-level body). */
mp_status mpd_inference_decode(const cJSON *body, const char *pointer, mpd_inference_job *job, mp_error *err);

/* A decoded training request (see mpd_inference_job). */
typedef struct mpd_training_job {
	mp_training_req req;
	int precision, optimizer, convention, recompute, attention, sharding, finetune;
	bool dropout;
	mp_dtype state_dtype;
	char lora_targets[96];
	char device[MP_STORE_ID_MAX];
} mpd_training_job;

/* Decodes a training body (the POST /v1/plan/training fields) into *job; errors under pointer. */
mp_status mpd_training_decode(const cJSON *body, const char *pointer, mpd_training_job *job, mp_error *err);

/* Resolves a training body's model, with the training details of its config (dropout, activation). */
mp_status mpd_training_model(const cJSON *body, mp_store *store, mpd_model *m, mp_error *err);

/* POST /v1/plan/inference and POST /v1/plan/training as functions: body in, document out (caller owns). */
mp_status mpd_plan_inference(mp_store *store, const cJSON *body, cJSON **out, mp_error *err);
mp_status mpd_plan_training(mp_store *store, const cJSON *body, cJSON **out, mp_error *err);

#endif /* MPD_PLAN_H */
