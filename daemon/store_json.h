/*
 * store_json.h: the JSON documents of stored devices and models, both ways, shared by the REST handlers
 * (h_devices.c, h_models.c) and `memplan db export|import`. Decoding goes through decode.c's field tables, so
 * every error names the field; nothing here touches SQL or HTTP.
 */
#ifndef MPD_STORE_JSON_H
#define MPD_STORE_JSON_H

#include <cjson/cJSON.h>

#include "../db/store.h"

/* The API's device document (plan.c's mpd_device_json plus the schema v3 fields). Caller owns it. */
cJSON *mpd_device_doc(const mp_store_device *d);
/* The API's model document: id, model_type, parameters, source, timestamps, hf_config. Caller owns it. */
cJSON *mpd_model_doc(const mp_store_model *m);

/* Whether id is a valid resource id: 1 to 63 of [a-z0-9._-], starting with a letter or digit. */
bool mpd_valid_id(const char *id);

/*
 * Decodes a device document (a PUT body, an export entry) into *out with id `id`. Null members mean
 * absent; read-only members (created_at, updated_at) are ignored; "id", when present, must equal id. source
 * defaults to "user". pointer prefixes error fields ("" for a request body, "/devices/3" in an import).
 * When store is not NULL, linked_device_id must name a stored device. Errors: MP_EINVAL naming the field.
 */
mp_status mpd_device_decode(const cJSON *doc, const char *pointer, const char *id, mp_store *store,
			    mp_store_device *out, mp_error *err);

/*
 * Decodes a model document ({"hf_config": {...}} plus ignored read-only members) into *out with id `id`,
 * source "user", counting its parameters with the planner. out->config_json is heap (mp_store_model_free).
 * Errors: MP_EINVAL / MP_EUNSUPPORTED naming the field, MP_ENOMEM.
 */
mp_status mpd_model_decode(const cJSON *doc, const char *pointer, const char *id, mp_store_model *out,
			   mp_error *err);

/* Applies a JSON merge patch (RFC 7386) to target in place: null members delete, objects merge, anything else
 * replaces. Errors: MP_EINVAL when patch is not an object, MP_ENOMEM. */
mp_status mpd_merge_patch(cJSON *target, const cJSON *patch, mp_error *err);

/* The export document: {"format": "memplan-export", "version": 1, "schema_version", "devices": [...all...],
 * "models": [...user models: id + hf_config...]}. Caller owns *out. Errors: MP_EDB, MP_ENOMEM. */
mp_status mpd_export(mp_store *store, cJSON **out, mp_error *err);

/* Imports an export document in one transaction (all or nothing), writes audited as "import". Counts what it
 * did. Errors: MP_EINVAL naming the field ("/devices/3/memory_bytes"), MP_EDB. */
mp_status mpd_import(mp_store *store, const cJSON *doc, int *devices, int *models, mp_error *err);

#endif /* MPD_STORE_JSON_H */
