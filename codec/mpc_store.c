/*
 * mpc_store.c: the store's documents: listings ({items, next_cursor}), the export and import document, JSON merge
 * patches (RFC 7396), and the health document. Rows come from the service; nothing here reads the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

void mpc_page_begin(mpc_page *p)
{
	mpc_out_init(&p->w);
	p->last[0] = '\0';
	mpc_w_obj(&p->w, NULL);
	mpc_w_arr(&p->w, "items");
}

mp_status mpc_page_add_device(const mp_store_device *d, void *page)
{
	mpc_page *p = page;

	mpc_device_write(&p->w, NULL, d);
	snprintf(p->last, sizeof(p->last), "%s", d->id);
	return p->w.failed ? MP_ENOMEM : MP_OK;
}

mp_status mpc_page_add_model(const mp_store_model *m, const char *const *hf_repo_ids, void *page)
{
	mpc_page *p = page;

	mpc_stored_model_write(&p->w, NULL, m, hf_repo_ids);
	snprintf(p->last, sizeof(p->last), "%s", m->id);
	return p->w.failed ? MP_ENOMEM : MP_OK;
}

char *mpc_page_finish(mpc_page *p, bool more, size_t *len)
{
	mpc_w_end(&p->w);
	if (more && p->last[0])
		mpc_w_str(&p->w, "next_cursor", p->last);
	else
		mpc_w_null(&p->w, "next_cursor");
	mpc_w_end(&p->w);
	return mpc_out_finish(&p->w, len);
}

void mpc_health_write(mpc_out *w, const mps_health *h)
{
	mpc_w_obj(w, NULL);
	/* degraded: the daemon answers, but a write would be refused (the database's problem says why) */
	mpc_w_lit(w, "status", h->db_writable ? "ok" : "degraded");
	mpc_w_str(w, "version", MP_VERSION);
	mpc_w_obj(w, "database");
	mpc_w_str(w, "path", h->db_path);
	mpc_w_num(w, "schema_version", h->schema_version);
	mpc_w_bool(w, "writable", h->db_writable);
	mpc_w_str_or_null(w, "problem", h->db_problem);
	mpc_w_str_or_null(w, "notice", h->db_notice);
	mpc_w_end(w);
	mpc_w_obj(w, "gpu");
	mpc_w_bool(w, "available", h->gpu_available);
	mpc_w_bool(w, "kernels_built_in", h->kernels_built_in);
	if (h->gpu_available) {
		mpc_w_str(w, "name", h->gpu_name);
		mpc_w_u64(w, "memory_bytes", h->gpu_memory_bytes);
	} else {
		mpc_w_str(w, "reason", h->gpu_reason);
	}
	mpc_w_end(w);
	mpc_w_end(w);
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

void mpc_export_begin(mpc_export *e, int schema_version)
{
	mpc_out_init(&e->w);
	e->models = false;
	mpc_w_obj(&e->w, NULL);
	mpc_w_lit(&e->w, "format", "memplan-export");
	mpc_w_num(&e->w, "version", 1);
	mpc_w_num(&e->w, "schema_version", schema_version);
	mpc_w_arr(&e->w, "devices");
}

mp_status mpc_export_add_device(const mp_store_device *d, void *export_doc)
{
	mpc_export *e = export_doc;

	mpc_device_write(&e->w, NULL, d);
	return e->w.failed ? MP_ENOMEM : MP_OK;
}

/* After the last device: the models' list opens (once). */
static void export_models(mpc_export *e)
{
	if (e->models)
		return;
	mpc_w_end(&e->w);
	mpc_w_arr(&e->w, "models");
	e->models = true;
}

mp_status mpc_export_add_model(const mp_store_model *m, const char *const *hf_repo_ids, void *export_doc)
{
	mpc_export *e = export_doc;
	cJSON *cfg = cJSON_Parse(m->config_json);

	(void)hf_repo_ids; /* an export holds user models only: the presets' repo ids are the binary's */
	if (cfg == NULL)
		return MP_ENOMEM;
	export_models(e);
	mpc_w_obj(&e->w, NULL);
	mpc_w_str(&e->w, "id", m->id);
	mpc_w_item(&e->w, "hf_config", cfg);
	mpc_w_end(&e->w);
	cJSON_Delete(cfg);
	return e->w.failed ? MP_ENOMEM : MP_OK;
}

char *mpc_export_finish(mpc_export *e, size_t *len)
{
	export_models(e);
	mpc_w_end(&e->w);
	mpc_w_end(&e->w);
	return mpc_out_finish(&e->w, len);
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
