/*
 * store.c: the store's documents: listings ({items, next_cursor}), the export and import document, JSON merge
 * patches (RFC 7396), and the health document. Rows come from the service; nothing here reads the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

cJSON *mpc_page_json(cJSON *items, bool more)
{
	cJSON *o = cJSON_CreateObject(), *last;

	if (o == NULL || !cJSON_AddItemToObject(o, "items", items)) {
		cJSON_Delete(items);
		cJSON_Delete(o);
		return NULL;
	}
	last = cJSON_GetArrayItem(items, cJSON_GetArraySize(items) - 1);
	if (more && last)
		cJSON_AddStringToObject(o, "next_cursor", cJSON_GetObjectItem(last, "id")->valuestring);
	else
		cJSON_AddNullToObject(o, "next_cursor");
	return o;
}

mp_status mpc_list_add_device(const mp_store_device *d, void *items)
{
	cJSON *item = mpc_device_json(d);

	if (item == NULL || !cJSON_AddItemToArray(items, item)) {
		cJSON_Delete(item);
		return MP_ENOMEM;
	}
	return MP_OK;
}

mp_status mpc_list_add_model(const mp_store_model *m, void *items)
{
	cJSON *item = mpc_stored_model_json(m);

	if (item == NULL || !cJSON_AddItemToArray(items, item)) {
		cJSON_Delete(item);
		return MP_ENOMEM;
	}
	return MP_OK;
}

cJSON *mpc_health_json(const mps_health *h)
{
	cJSON *o = cJSON_CreateObject(), *db, *gpu;

	if (o == NULL)
		return NULL;
	/* degraded: the daemon answers, but a write would be refused (the database's problem says why) */
	cJSON_AddStringToObject(o, "status", h->db_writable ? "ok" : "degraded");
	cJSON_AddStringToObject(o, "version", MP_VERSION);
	db = cJSON_AddObjectToObject(o, "database");
	cJSON_AddStringToObject(db, "path", h->db_path);
	mpc_add_num(db, "schema_version", h->schema_version);
	cJSON_AddBoolToObject(db, "writable", h->db_writable);
	mpc_add_str_or_null(db, "problem", h->db_problem);
	mpc_add_str_or_null(db, "notice", h->db_notice);
	gpu = cJSON_AddObjectToObject(o, "gpu");
	cJSON_AddBoolToObject(gpu, "available", h->gpu_available);
	cJSON_AddBoolToObject(gpu, "kernels_built_in", h->kernels_built_in);
	if (h->gpu_available) {
		cJSON_AddStringToObject(gpu, "name", h->gpu_name);
		mpc_add_u64(gpu, "memory_bytes", h->gpu_memory_bytes);
	} else {
		cJSON_AddStringToObject(gpu, "reason", h->gpu_reason);
	}
	return o;
}

mp_status mpc_merge_patch(cJSON *target, const cJSON *patch, mp_error *err)
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
			mp_status st = mpc_merge_patch(t, p, err);

			if (st != MP_OK)
				return st;
		} else {
			cJSON *copy = cJSON_Duplicate(p, true);

			/* a patch object merged into a non-object drops its nulls (RFC 7386 section 2) */
			if (copy && cJSON_IsObject(copy)) {
				cJSON *empty = cJSON_CreateObject();

				cJSON_Delete(copy);
				copy = empty;
				if (copy && mpc_merge_patch(copy, p, err) != MP_OK) {
					cJSON_Delete(copy);
					return MP_ENOMEM;
				}
			}
			if (copy == NULL)
				return mp_fail(err, MP_ENOMEM, "", "out of memory");
			/* replaced by name, so the new member keeps its key (a bare object built above has none) */
			if (mpc_set_item(target, p->string, copy) == NULL)
				return mp_fail(err, MP_ENOMEM, "", "out of memory");
		}
	}
	return MP_OK;
}

/* ----- export and import ------------------------------------------------------------------------------- */

cJSON *mpc_export_new(int schema_version)
{
	cJSON *doc = cJSON_CreateObject();

	if (doc == NULL)
		return NULL;
	cJSON_AddStringToObject(doc, "format", "memplan-export");
	mpc_add_num(doc, "version", 1);
	mpc_add_num(doc, "schema_version", schema_version);
	if (cJSON_AddArrayToObject(doc, "devices") == NULL || cJSON_AddArrayToObject(doc, "models") == NULL) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

mp_status mpc_export_add_device(const mp_store_device *d, void *doc)
{
	return mpc_list_add_device(d, cJSON_GetObjectItem(doc, "devices"));
}

mp_status mpc_export_add_model(const mp_store_model *m, void *doc)
{
	cJSON *o = cJSON_CreateObject(), *cfg = cJSON_Parse(m->config_json);

	if (o == NULL || cfg == NULL || !cJSON_AddItemToArray(cJSON_GetObjectItem(doc, "models"), o)) {
		cJSON_Delete(o);
		cJSON_Delete(cfg);
		return MP_ENOMEM;
	}
	cJSON_AddStringToObject(o, "id", m->id);
	mpc_add_item(o, "hf_config", cfg);
	return MP_OK;
}

static mp_status import_id(const cJSON *item, const char *pointer, char *id, mp_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(item, "id");
	char field[64];

	if (!cJSON_IsString(v) || !mp_valid_id(v->valuestring)) {
		snprintf(field, sizeof(field), "%s/id", pointer);
		return mp_fail(err, MP_EINVAL, field, "id must be 1 to 63 of a-z 0-9 . - _ (e.g. h100-sxm5-80gb)");
	}
	snprintf(id, MP_STORE_ID_MAX, "%s", v->valuestring);
	return MP_OK;
}

void mpc_import_free(mps_import *im)
{
	for (size_t i = 0; im->model_texts && i < im->nmodels; i++)
		free(im->model_texts[i]);
	free(im->model_texts);
	free(im->devices);
	free(im->device_pointers);
	free(im->models);
	free(im->model_pointers);
	memset(im, 0, sizeof(*im));
}

typedef struct id_at {
	const char *id;
	size_t index;
} id_at;

static int by_id(const void *a, const void *b)
{
	const id_at *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* An id given twice in one list of the file (the second would silently replace the first): MP_EINVAL naming the
 * later one's /<list>/N/id and the earlier index. ids[i] is entry i's id; n of them, sorted here in a copy. */
static mp_status unique_ids(const char *list, const char *const *ids, size_t n, mp_error *err)
{
	id_at *v = n ? calloc(n, sizeof(*v)) : NULL;
	mp_status st = MP_OK;

	if (n && v == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	for (size_t i = 0; i < n; i++)
		v[i] = (id_at){ ids[i], i };
	if (n)
		qsort(v, n, sizeof(*v), by_id);
	for (size_t i = 1; i < n && st == MP_OK; i++)
		if (strcmp(v[i].id, v[i - 1].id) == 0) {
			char field[48];

			snprintf(field, sizeof(field), "/%s/%zu/id", list, v[i].index);
			st = mp_fail(err, MP_EINVAL, field, "id '%s' is also %s %zu: each id once in a file", v[i].id,
				     list, v[i - 1].index);
		}
	free(v);
	return st;
}

mp_status mpc_import_decode(const cJSON *doc, mps_import *im, mp_error *err)
{
	const cJSON *devs = cJSON_GetObjectItemCaseSensitive(doc, "devices");
	const cJSON *mods = cJSON_GetObjectItemCaseSensitive(doc, "models");
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(doc, "format"), *item;
	size_t nd = (size_t)cJSON_GetArraySize(devs), nm = (size_t)cJSON_GetArraySize(mods);
	mp_status st = MP_OK;
	int i = 0;

	memset(im, 0, sizeof(*im));
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "memplan-export") != 0)
		return mp_fail(err, MP_EINVAL, "/format", "not a memplan export: \"format\" must be \"memplan-export\"");
	if ((devs && !cJSON_IsArray(devs)) || (mods && !cJSON_IsArray(mods)))
		return mp_fail(err, MP_EINVAL, devs && !cJSON_IsArray(devs) ? "/devices" : "/models",
			       "devices and models must be arrays");
	im->devices = calloc(nd ? nd : 1, sizeof(*im->devices));
	im->device_pointers = calloc(nd ? nd : 1, sizeof(*im->device_pointers));
	im->models = calloc(nm ? nm : 1, sizeof(*im->models));
	im->model_pointers = calloc(nm ? nm : 1, sizeof(*im->model_pointers));
	im->model_texts = calloc(nm ? nm : 1, sizeof(*im->model_texts));
	if (!im->devices || !im->device_pointers || !im->models || !im->model_pointers || !im->model_texts) {
		mpc_import_free(im);
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	cJSON_ArrayForEach(item, devs)
	{
		char *ptr = im->device_pointers[im->ndevices], id[MP_STORE_ID_MAX];

		snprintf(ptr, sizeof(im->device_pointers[0]), "/devices/%d", i++);
		st = import_id(item, ptr, id, err);
		if (st == MP_OK)
			st = mpc_device_decode(item, ptr, id, "user", &im->devices[im->ndevices], err);
		if (st != MP_OK)
			break;
		im->ndevices++;
	}
	i = 0;
	cJSON_ArrayForEach(item, mods)
	{
		char *ptr = im->model_pointers[im->nmodels], id[MP_STORE_ID_MAX];

		if (st != MP_OK)
			break;
		snprintf(ptr, sizeof(im->model_pointers[0]), "/models/%d", i++);
		st = import_id(item, ptr, id, err);
		if (st == MP_OK)
			st = mpc_stored_model_decode(item, ptr, id, &im->models[im->nmodels],
						     &im->model_texts[im->nmodels], err);
		if (st == MP_OK) {
			/* an export states what the build that wrote it counted; this build counts again */
			im->models[im->nmodels].stated_model_type[0] = '\0';
			im->models[im->nmodels].stated_parameters_given = false;
		}
		if (st != MP_OK) {
			free(im->model_texts[im->nmodels]);
			im->model_texts[im->nmodels] = NULL;
			break;
		}
		im->nmodels++;
	}
	{
		/* each id once per list: a repeated one would overwrite the first without a word */
		size_t n = im->ndevices > im->nmodels ? im->ndevices : im->nmodels;
		const char **ids = st == MP_OK ? calloc(n ? n : 1, sizeof(*ids)) : NULL;

		if (st == MP_OK && ids == NULL)
			st = mp_fail(err, MP_ENOMEM, "", "out of memory");
		for (size_t k = 0; st == MP_OK && k < im->ndevices; k++)
			ids[k] = im->devices[k].id;
		if (st == MP_OK)
			st = unique_ids("devices", ids, im->ndevices, err);
		for (size_t k = 0; st == MP_OK && k < im->nmodels; k++)
			ids[k] = im->models[k].id;
		if (st == MP_OK)
			st = unique_ids("models", ids, im->nmodels, err);
		free(ids);
	}
	if (st != MP_OK)
		mpc_import_free(im);
	return st;
}
