/*
 * h_models.c: the model resource. GET /v1/models (cursor pagination; filters model_type, source), GET, PUT
 * ({"hf_config": {...}}: stored with the planner's exact parameter count), PATCH (JSON merge patch, usually
 * of hf_config) and DELETE /v1/models/{id}. Writes are audited as "api".
 */
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "query.h"
#include "routes.h"
#include "store_json.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

static mp_status add_model(const mp_store_model *m, void *ctx)
{
	cJSON *item = mpd_model_doc(m);

	if (item == NULL)
		return MP_ENOMEM;
	cJSON_AddItemToArray(ctx, item);
	return MP_OK;
}

mp_status mpd_h_models_list(mpd_request *req, mpd_reply *rep)
{
	mp_store_model_filter f = { mpd_query(req, "model_type"), mpd_query(req, "source") };
	uint64_t limit;
	cJSON *o, *items, *last;
	int more;
	mp_status st = mpd_query_u64(req, "limit", 1, LIST_MAX, LIST_DEFAULT, &limit, &rep->err);

	if (st != MP_OK)
		return st;
	if (f.source && strcmp(f.source, "preset") != 0 && strcmp(f.source, "user") != 0)
		return mp_fail(&rep->err, MP_EINVAL, "?source", "source must be one of: preset, user");
	o = cJSON_CreateObject();
	items = cJSON_AddArrayToObject(o, "items");
	if (items == NULL) {
		cJSON_Delete(o);
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	st = mp_store_model_find(req->d->store, &f, mpd_query(req, "cursor"), (int)limit, add_model, items, &more,
				 &rep->err);
	if (st != MP_OK) {
		cJSON_Delete(o);
		return st == MP_ENOMEM ? mp_fail(&rep->err, st, "", "out of memory") : st;
	}
	last = cJSON_GetArrayItem(items, cJSON_GetArraySize(items) - 1);
	if (more && last)
		cJSON_AddStringToObject(o, "next_cursor", cJSON_GetObjectItem(last, "id")->valuestring);
	else
		cJSON_AddNullToObject(o, "next_cursor");
	rep->json = o;
	return MP_OK;
}

mp_status mpd_h_model_get(mpd_request *req, mpd_reply *rep)
{
	mp_store_model m;
	mp_status st = mp_store_model_get(req->d->store, req->path_id, &m, &rep->err);

	if (st == MP_EINVAL)
		snprintf(rep->err.field, sizeof(rep->err.field), "/id"); /* a malformed path id: 422 naming it */
	if (st != MP_OK)
		return st;
	rep->json = mpd_model_doc(&m);
	mp_store_model_free(&m);
	return rep->json ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}

static mp_status store_doc(mpd_request *req, mpd_reply *rep, const cJSON *doc)
{
	mp_store_model m;
	bool created = false;
	mp_status st;

	memset(&m, 0, sizeof(m));
	if (!mpd_valid_id(req->path_id))
		return mp_fail(&rep->err, MP_EINVAL, "/id",
			       "a model id is 1 to 63 of a-z 0-9 . - _, starting with a letter or digit");
	st = mpd_model_decode(doc, "", req->path_id, &m, &rep->err);
	if (st == MP_OK)
		st = mp_store_model_write(req->d->store, &m, "api", &created, &rep->err);
	mp_store_model_free(&m);
	if (st == MP_OK)
		st = mp_store_model_get(req->d->store, req->path_id, &m, &rep->err);
	if (st == MP_OK) {
		rep->json = mpd_model_doc(&m);
		mp_store_model_free(&m);
		if (rep->json == NULL)
			return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	if (st == MP_OK && created) {
		rep->http_status = 201;
		snprintf(rep->location, sizeof(rep->location), "/v1/models/%s", req->path_id);
	}
	return st;
}

mp_status mpd_h_model_put(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = NULL;
	mp_status st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);

	if (st == MP_OK)
		st = store_doc(req, rep, body);
	cJSON_Delete(body);
	return st;
}

mp_status mpd_h_model_patch(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = NULL, *doc = NULL;
	mp_store_model m;
	mp_status st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);

	if (st == MP_OK) {
		st = mp_store_model_get(req->d->store, req->path_id, &m, &rep->err);
		if (st == MP_EINVAL)
			snprintf(rep->err.field, sizeof(rep->err.field), "/id");
	}
	if (st == MP_OK) {
		doc = mpd_model_doc(&m);
		mp_store_model_free(&m);
		st = doc ? mpd_merge_patch(doc, body, &rep->err) : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	if (st == MP_OK)
		st = store_doc(req, rep, doc);
	cJSON_Delete(doc);
	cJSON_Delete(body);
	return st;
}

mp_status mpd_h_model_delete(mpd_request *req, mpd_reply *rep)
{
	mp_status st = mp_store_model_remove(req->d->store, req->path_id, "api", &rep->err);

	if (st == MP_OK)
		rep->http_status = 204;
	return st;
}
