/*
 * plan_training.c: POST /v1/plan/training as a function: the request's field table, the planner call and
 * the response document with the bytes-per-parameter convention echoed.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "plan.h"

#define ADD_U64(obj, key, v) cJSON_AddNumberToObject((obj), (key), (double)(v))

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
		st = mpd_need_model(body, store, &m, err);
	}
	if (st == MP_OK)
		st = mpd_maybe_device(tb.device, store, &dev, &have_dev, err);
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
		o = mpd_fit_json(&fit, &dev);
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
