/*
 * store_json.c: stored devices and models as JSON documents, both ways (see store_json.h). Validation is data:
 * a decode.c field table per document, with the bounds a real accelerator can have, so a typo or a unit slip
 * (GB for bytes) is a 422 naming the field, never a silently wrong profile.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "hf_config.h"
#include "plan.h"
#include "store_json.h"

#define MAX_BYTES (UINT64_C(1) << 50)	/* 1 PiB: no single device is larger */

/* ----- encoding ---------------------------------------------------------------------------------------- */

static void add_double_or_null(cJSON *o, const char *k, double v)
{
	if (v > 0)
		cJSON_AddNumberToObject(o, k, v);
	else
		cJSON_AddNullToObject(o, k);
}

cJSON *mpd_device_doc(const mp_store_device *d)
{
	cJSON *o = mpd_device_json(d);

	if (o == NULL)
		return NULL;
	if (d->linked_device_id[0])
		cJSON_AddStringToObject(o, "linked_device_id", d->linked_device_id);
	else
		cJSON_AddNullToObject(o, "linked_device_id");
	add_double_or_null(o, "base_clock_hz", d->base_clock_hz);
	add_double_or_null(o, "memory_clock_hz", d->memory_clock_hz);
	add_double_or_null(o, "fma_flops_per_second", d->fma_flops_per_second);
	add_double_or_null(o, "memory_latency_seconds", d->memory_latency_seconds);
	return o;
}

cJSON *mpd_model_doc(const mp_store_model *m)
{
	cJSON *o = cJSON_CreateObject(), *cfg;

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "model_type", m->model_type);
	cJSON_AddNumberToObject(o, "parameters", (double)m->parameters);
	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddStringToObject(o, "created_at", m->created_at);
	cJSON_AddStringToObject(o, "updated_at", m->updated_at);
	cfg = cJSON_Parse(m->config_json);
	if (cfg == NULL || !cJSON_AddItemToObject(o, "hf_config", cfg)) {
		cJSON_Delete(cfg);
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

bool mpd_valid_id(const char *id)
{
	return mp_store_valid_id(id); /* one id rule: the store's */
}

/* ----- decoding ---------------------------------------------------------------------------------------- */

static const char *const source_names[] = { "datasheet", "measured", "user", NULL };

typedef struct device_body {
	mp_store_device d;
	char id[MP_STORE_ID_MAX];
	uint64_t sm_count;
	int source;
} device_body;

#define DF(field) offsetof(device_body, field)
static const mpd_field device_fields[] = {
	{ .name = "id", .type = MPD_F_STRING, .offset = DF(id), .size = MP_STORE_ID_MAX },
	{ .name = "name", .type = MPD_F_STRING, .required = true, .offset = DF(d.name), .size = 128 },
	{ .name = "vendor", .type = MPD_F_STRING, .required = true, .offset = DF(d.vendor), .size = 64 },
	{ .name = "architecture", .type = MPD_F_STRING, .offset = DF(d.architecture), .size = 64 },
	{ .name = "form_factor", .type = MPD_F_STRING, .offset = DF(d.form_factor), .size = 96 },
	{ .name = "memory_type", .type = MPD_F_STRING, .offset = DF(d.memory_type), .size = 32 },
	{ .name = "memory_bytes", .type = MPD_F_U64, .required = true, .offset = DF(d.hw.memory_bytes),
	  .min = UINT64_C(1) << 20, .max = MAX_BYTES },
	{ .name = "usable_memory_bytes", .type = MPD_F_U64, .offset = DF(d.hw.usable_memory_bytes),
	  .min = UINT64_C(1) << 20, .max = MAX_BYTES },
	{ .name = "memory_bandwidth_bytes_per_second", .type = MPD_F_DOUBLE, .required = true,
	  .offset = DF(d.hw.memory_bandwidth_bytes_per_second), .dmin = 1e6, .dmax = 1e15 },
	{ .name = "peak_flops_per_second", .type = MPD_F_ANY },
	{ .name = "l2_cache_bytes", .type = MPD_F_U64, .offset = DF(d.hw.l2_cache_bytes), .min = 1,
	  .max = UINT64_C(1) << 40 },
	{ .name = "sm_count", .type = MPD_F_U64, .offset = DF(sm_count), .min = 1, .max = 1000000 },
	{ .name = "boost_clock_hz", .type = MPD_F_DOUBLE, .offset = DF(d.hw.boost_clock_hz), .dmin = 1e6, .dmax = 1e11 },
	{ .name = "base_clock_hz", .type = MPD_F_DOUBLE, .offset = DF(d.base_clock_hz), .dmin = 1e6, .dmax = 1e11 },
	{ .name = "memory_clock_hz", .type = MPD_F_DOUBLE, .offset = DF(d.memory_clock_hz), .dmin = 1e6, .dmax = 1e11 },
	{ .name = "tdp_watts", .type = MPD_F_DOUBLE, .offset = DF(d.tdp_watts), .dmin = 1, .dmax = 1e5 },
	{ .name = "cuda_context_bytes", .type = MPD_F_U64, .offset = DF(d.hw.cuda_context_bytes), .min = 1,
	  .max = UINT64_C(1) << 40 },
	{ .name = "interconnect", .type = MPD_F_ANY },
	{ .name = "source", .type = MPD_F_ENUM, .offset = DF(source), .names = source_names },
	{ .name = "source_note", .type = MPD_F_STRING, .offset = DF(d.source_note), .size = 2048 },
	{ .name = "measured_at", .type = MPD_F_STRING, .offset = DF(d.measured_at), .size = 32 },
	{ .name = "linked_device_id", .type = MPD_F_STRING, .offset = DF(d.linked_device_id),
	  .size = MP_STORE_ID_MAX },
	{ .name = "fma_flops_per_second", .type = MPD_F_DOUBLE, .offset = DF(d.fma_flops_per_second), .dmin = 1,
	  .dmax = 1e19 },
	{ .name = "memory_latency_seconds", .type = MPD_F_DOUBLE, .offset = DF(d.memory_latency_seconds),
	  .dmin = 1e-12, .dmax = 1 },
	{ .name = "created_at", .type = MPD_F_ANY },
	{ .name = "updated_at", .type = MPD_F_ANY },
};
#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

typedef struct interconnect_body {
	char gpu_link[128], host_link[128];
	double gpu_link_bytes_per_second, host_link_bytes_per_second;
} interconnect_body;

static const mpd_field interconnect_fields[] = {
	{ .name = "gpu_link", .type = MPD_F_STRING, .offset = offsetof(interconnect_body, gpu_link), .size = 128 },
	{ .name = "gpu_link_bytes_per_second", .type = MPD_F_DOUBLE,
	  .offset = offsetof(interconnect_body, gpu_link_bytes_per_second), .dmin = 1, .dmax = 1e15 },
	{ .name = "host_link", .type = MPD_F_STRING, .offset = offsetof(interconnect_body, host_link), .size = 128 },
	{ .name = "host_link_bytes_per_second", .type = MPD_F_DOUBLE,
	  .offset = offsetof(interconnect_body, host_link_bytes_per_second), .dmin = 1, .dmax = 1e15 },
};

/* A copy of doc without null or "" members (unknown = absent), or NULL when out of memory. */
static cJSON *without_nulls(const cJSON *doc)
{
	cJSON *c = cJSON_Duplicate(doc, true), *v, *next;

	for (v = c ? c->child : NULL; v; v = next) {
		next = v->next;
		if (cJSON_IsNull(v) || (cJSON_IsString(v) && v->valuestring[0] == '\0'))
			cJSON_Delete(cJSON_DetachItemViaPointer(c, v));
	}
	return c;
}

static mp_status field_fail(mp_error *err, const char *pointer, const char *name, const char *msg)
{
	char field[96];

	snprintf(field, sizeof(field), "%s/%s", pointer, name);
	return mp_fail(err, MP_EINVAL, field, "%s", msg);
}

/* "YYYY-MM-DDTHH:MM:SSZ", optionally with fractional seconds: the form the store writes. */
static bool is_timestamp(const char *s)
{
	static const char pattern[] = "dddd-dd-ddTdd:dd:dd";
	size_t i;

	for (i = 0; pattern[i]; i++)
		if (pattern[i] == 'd' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i])
			return false;
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9'; i++)
			;
	}
	return s[i] == 'Z' && s[i + 1] == '\0';
}

static mp_status decode_peaks(const cJSON *peaks, const char *pointer, mp_device *hw, mp_error *err)
{
	mpd_field f[MP_DTYPE_COUNT];
	char ptr[96];
	size_t n = 0;

	if (!cJSON_IsObject(peaks))
		return field_fail(err, pointer, "peak_flops_per_second",
				  "peak_flops_per_second must be an object of dense peaks by data type, e.g. "
				  "{\"bf16\": 989.4e12}");
	memset(f, 0, sizeof(f));
	for (int t = 1; t < MP_DTYPE_COUNT; t++) {
		f[n].name = mp_dtype_name((mp_dtype)t);
		f[n].type = MPD_F_DOUBLE;
		f[n].offset = offsetof(mp_device, peak_flops_per_second) + (size_t)t * sizeof(double);
		f[n].dmin = 1;
		f[n].dmax = 1e19;
		n++;
	}
	snprintf(ptr, sizeof(ptr), "%s/peak_flops_per_second", pointer);
	return mpd_decode_fields(peaks, ptr, f, n, hw, err);
}

mp_status mpd_device_decode(const cJSON *doc, const char *pointer, const char *id, mp_store *store,
			    mp_store_device *out, mp_error *err)
{
	device_body b;
	cJSON *c = without_nulls(doc);
	const cJSON *v;
	mp_status st;

	memset(&b, 0, sizeof(b));
	b.source = 2; /* user */
	if (c == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	st = mpd_decode_fields(c, pointer, device_fields, NFIELDS(device_fields), &b, err);
	if (st != MP_OK)
		goto out;
	if (b.id[0] && strcmp(b.id, id) != 0) {
		st = field_fail(err, pointer, "id", "id in the body differs from the id in the path");
		goto out;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(c, "peak_flops_per_second")) != NULL) {
		st = decode_peaks(v, pointer, &b.d.hw, err);
		if (st != MP_OK)
			goto out;
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(c, "interconnect")) != NULL) {
		interconnect_body ib;
		char ptr[96], *text = NULL;
		cJSON *ic = cJSON_IsObject(v) ? without_nulls(v) : NULL;

		memset(&ib, 0, sizeof(ib));
		snprintf(ptr, sizeof(ptr), "%s/interconnect", pointer);
		st = mpd_decode_fields(ic ? ic : v, ptr, interconnect_fields, NFIELDS(interconnect_fields), &ib, err);
		if (st == MP_OK && (text = cJSON_PrintUnformatted(ic)) != NULL && strlen(text) < sizeof(b.d.interconnect_json))
			memcpy(b.d.interconnect_json, text, strlen(text) + 1);
		else if (st == MP_OK)
			st = field_fail(err, pointer, "interconnect", "interconnect is too long");
		cJSON_free(text);
		cJSON_Delete(ic);
		if (st != MP_OK)
			goto out;
	}
	if (b.d.hw.usable_memory_bytes > b.d.hw.memory_bytes) {
		st = field_fail(err, pointer, "usable_memory_bytes",
				"usable_memory_bytes (what cudaMemGetInfo reports) cannot exceed memory_bytes");
		goto out;
	}
	if (b.d.measured_at[0] && !is_timestamp(b.d.measured_at)) {
		st = field_fail(err, pointer, "measured_at", "measured_at must be UTC ISO 8601, e.g. 2026-11-29T10:00:00Z");
		goto out;
	}
	if (b.source == 1 && !b.d.measured_at[0]) {
		st = field_fail(err, pointer, "measured_at", "a measured profile needs measured_at (when it was measured)");
		goto out;
	}
	if (b.d.linked_device_id[0] && strcmp(b.d.linked_device_id, id) == 0) {
		st = field_fail(err, pointer, "linked_device_id", "a profile cannot link to itself");
		goto out;
	}
	if (b.d.linked_device_id[0] && store) {
		mp_store_device *other = malloc(sizeof(*other));
		mp_error e2;

		st = other ? mp_store_device_get(store, b.d.linked_device_id, other, &e2) : MP_ENOMEM;
		free(other);
		if (st == MP_ENOTFOUND)
			st = field_fail(err, pointer, "linked_device_id", "linked_device_id names no stored device");
		else if (st != MP_OK)
			st = mp_fail(err, st, "", "%s", st == MP_ENOMEM ? "out of memory" : e2.message);
		if (st != MP_OK)
			goto out;
	}
	snprintf(b.d.id, sizeof(b.d.id), "%s", id);
	snprintf(b.d.source, sizeof(b.d.source), "%s", source_names[b.source]);
	b.d.hw.sm_count = (uint32_t)b.sm_count;
	*out = b.d;
out:
	cJSON_Delete(c);
	return st;
}

static const mpd_field model_fields[] = {
	{ .name = "hf_config", .type = MPD_F_ANY, .required = true },
	{ .name = "id", .type = MPD_F_ANY },
	{ .name = "model_type", .type = MPD_F_ANY },
	{ .name = "parameters", .type = MPD_F_ANY },
	{ .name = "source", .type = MPD_F_ANY },
	{ .name = "created_at", .type = MPD_F_ANY },
	{ .name = "updated_at", .type = MPD_F_ANY },
};

mp_status mpd_model_decode(const cJSON *doc, const char *pointer, const char *id, mp_store_model *out,
			   mp_error *err)
{
	const cJSON *cfg, *bid;
	char ptr[96];
	mp_model arch;
	mp_param_count pc;
	mp_status st;
	int unused = 0; /* every model field is decoded here, not by the table */

	memset(out, 0, sizeof(*out));
	st = mpd_decode_fields(doc, pointer, model_fields, NFIELDS(model_fields), &unused, err);
	if (st != MP_OK)
		return st;
	bid = cJSON_GetObjectItemCaseSensitive(doc, "id");
	if (bid && !(cJSON_IsString(bid) && strcmp(bid->valuestring, id) == 0))
		return field_fail(err, pointer, "id", "id in the body differs from the id in the path");
	cfg = cJSON_GetObjectItemCaseSensitive(doc, "hf_config");
	snprintf(ptr, sizeof(ptr), "%s/hf_config", pointer);
	st = mpd_model_from_hf(cfg, ptr, &arch, err);
	if (st == MP_OK)
		st = mp_count_parameters(&arch, &pc, err);
	if (st != MP_OK) {
		/* The planner names config keys "/model/<key>"; here the config lives at <pointer>/hf_config. */
		if (strncmp(err->field, "/model/", 7) == 0) {
			char field[2 * sizeof(err->field)];

			snprintf(field, sizeof(field), "%s/%s", ptr, err->field + 7);
			snprintf(err->field, sizeof(err->field), "%.95s", field);
		}
		return st;
	}
	out->config_json = cJSON_PrintUnformatted(cfg);
	if (out->config_json == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	snprintf(out->id, sizeof(out->id), "%s", id);
	snprintf(out->model_type, sizeof(out->model_type), "%s", arch.model_type);
	snprintf(out->source, sizeof(out->source), "user");
	out->parameters = pc.total;
	return MP_OK;
}

mp_status mpd_merge_patch(cJSON *target, const cJSON *patch, mp_error *err)
{
	const cJSON *p;

	if (!cJSON_IsObject(patch))
		return mp_fail(err, MP_EINVAL, "", "a merge patch (RFC 7386) is a JSON object");
	cJSON_ArrayForEach(p, patch)
	{
		cJSON *t = cJSON_GetObjectItemCaseSensitive(target, p->string);

		if (cJSON_IsNull(p)) {
			cJSON_DeleteItemFromObjectCaseSensitive(target, p->string);
		} else if (cJSON_IsObject(p) && cJSON_IsObject(t)) {
			mp_status st = mpd_merge_patch(t, p, err);

			if (st != MP_OK)
				return st;
		} else {
			cJSON *copy = cJSON_Duplicate(p, true);

			/* a patch object merged into a non-object drops its nulls (RFC 7386 section 2) */
			if (copy && cJSON_IsObject(copy)) {
				cJSON *empty = cJSON_CreateObject();

				cJSON_Delete(copy);
				copy = empty;
				if (copy && mpd_merge_patch(copy, p, err) != MP_OK) {
					cJSON_Delete(copy);
					return MP_ENOMEM;
				}
			}
			if (copy == NULL)
				return mp_fail(err, MP_ENOMEM, "", "out of memory");
			/* replaced by name, so the new member keeps its key (a bare object built above has none) */
			if (t)
				cJSON_ReplaceItemInObjectCaseSensitive(target, p->string, copy);
			else
				cJSON_AddItemToObject(target, p->string, copy);
		}
	}
	return MP_OK;
}

/* ----- export and import ------------------------------------------------------------------------------- */

static mp_status export_device(const mp_store_device *d, void *ctx)
{
	cJSON *o = mpd_device_doc(d);

	if (o == NULL)
		return MP_ENOMEM;
	cJSON_AddItemToArray(ctx, o);
	return MP_OK;
}

static mp_status export_model(const mp_store_model *m, void *ctx)
{
	cJSON *o = cJSON_CreateObject(), *cfg = cJSON_Parse(m->config_json);

	if (o == NULL || cfg == NULL) {
		cJSON_Delete(o);
		cJSON_Delete(cfg);
		return MP_ENOMEM;
	}
	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddItemToObject(o, "hf_config", cfg);
	cJSON_AddItemToArray(ctx, o);
	return MP_OK;
}

mp_status mpd_export(mp_store *store, cJSON **out, mp_error *err)
{
	mp_store_model_filter user = { NULL, "user" };
	cJSON *doc = cJSON_CreateObject(), *devs, *models;
	char *after = NULL;
	int more = 1;
	mp_status st = MP_OK;

	*out = NULL;
	if (doc == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	cJSON_AddStringToObject(doc, "format", "memplan-export");
	cJSON_AddNumberToObject(doc, "version", 1);
	cJSON_AddNumberToObject(doc, "schema_version", mp_store_user_version(store));
	devs = cJSON_AddArrayToObject(doc, "devices");
	models = cJSON_AddArrayToObject(doc, "models");
	/* pages of 1000 so that any number of rows is exported */
	while (st == MP_OK && more) {
		int n0 = cJSON_GetArraySize(devs);

		st = mp_store_device_list(store, after, 1000, export_device, devs, &more, err);
		free(after);
		after = NULL;
		if (st == MP_OK && more && cJSON_GetArraySize(devs) > n0)
			after = strdup(cJSON_GetObjectItem(cJSON_GetArrayItem(devs, cJSON_GetArraySize(devs) - 1), "id")
					       ->valuestring);
	}
	more = 1;
	while (st == MP_OK && more) {
		int n0 = cJSON_GetArraySize(models);

		st = mp_store_model_find(store, &user, after, 1000, export_model, models, &more, err);
		free(after);
		after = NULL;
		if (st == MP_OK && more && cJSON_GetArraySize(models) > n0)
			after = strdup(
				cJSON_GetObjectItem(cJSON_GetArrayItem(models, cJSON_GetArraySize(models) - 1), "id")
					->valuestring);
	}
	free(after);
	if (st != MP_OK) {
		cJSON_Delete(doc);
		return st == MP_ENOMEM ? mp_fail(err, MP_ENOMEM, "", "out of memory") : st;
	}
	*out = doc;
	return MP_OK;
}

static mp_status import_id(const cJSON *item, const char *pointer, char *id, mp_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "id");

	if (!cJSON_IsString(v) || !mpd_valid_id(v->valuestring))
		return field_fail(err, pointer, "id", "id must be 1 to 63 of a-z 0-9 . - _ (e.g. h100-sxm5-80gb)");
	snprintf(id, MP_STORE_ID_MAX, "%s", v->valuestring);
	return MP_OK;
}

mp_status mpd_import(mp_store *store, const cJSON *doc, int *devices, int *models, mp_error *err)
{
	const cJSON *devs = cJSON_GetObjectItemCaseSensitive(doc, "devices");
	const cJSON *mods = cJSON_GetObjectItemCaseSensitive(doc, "models");
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(doc, "format");
	mp_store_device *d = malloc(sizeof(*d));
	mp_status st;

	*devices = *models = 0;
	if (d == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "memplan-export") != 0) {
		free(d);
		return mp_fail(err, MP_EINVAL, "/format", "not a memplan export: \"format\" must be \"memplan-export\"");
	}
	if ((devs && !cJSON_IsArray(devs)) || (mods && !cJSON_IsArray(mods))) {
		free(d);
		return mp_fail(err, MP_EINVAL, devs && !cJSON_IsArray(devs) ? "/devices" : "/models",
			       "devices and models must be arrays");
	}
	st = mp_store_begin(store, err);
	if (st != MP_OK) {
		free(d);
		return st;
	}
	/* profiles that link to another first the unlinked ones, so a measured profile finds its datasheet */
	for (int pass = 0; pass < 2 && st == MP_OK; pass++) {
		int i = 0;
		const cJSON *item;

		cJSON_ArrayForEach(item, devs)
		{
			char ptr[64], id[MP_STORE_ID_MAX];
			const cJSON *link = cJSON_GetObjectItemCaseSensitive(item, "linked_device_id");
			bool linked = cJSON_IsString(link);

			snprintf(ptr, sizeof(ptr), "/devices/%d", i++);
			if (linked != (pass == 1))
				continue;
			st = import_id(item, ptr, id, err);
			if (st == MP_OK)
				st = mpd_device_decode(item, ptr, id, store, d, err);
			if (st == MP_OK)
				st = mp_store_device_write(store, d, "import", NULL, err);
			if (st != MP_OK)
				break;
			(*devices)++;
		}
	}
	if (st == MP_OK) {
		int i = 0;
		const cJSON *item;

		cJSON_ArrayForEach(item, mods)
		{
			char ptr[64], id[MP_STORE_ID_MAX];
			mp_store_model m;
			cJSON *body;

			snprintf(ptr, sizeof(ptr), "/models/%d", i++);
			st = import_id(item, ptr, id, err);
			if (st != MP_OK)
				break;
			body = cJSON_Duplicate(item, true);
			if (body == NULL) {
				st = mp_fail(err, MP_ENOMEM, "", "out of memory");
				break;
			}
			st = mpd_model_decode(body, ptr, id, &m, err);
			cJSON_Delete(body);
			if (st == MP_OK)
				st = mp_store_model_write(store, &m, "import", NULL, err);
			mp_store_model_free(&m);
			if (st != MP_OK)
				break;
			(*models)++;
		}
	}
	free(d);
	if (st != MP_OK) {
		mp_store_rollback(store);
		*devices = *models = 0;
		return st;
	}
	return mp_store_commit(store, err);
}
