/*
 * h_models.c: the model resource. GET /v1/models (cursor pagination) and GET /v1/models/{id}: a stored
 * model is its Hugging Face config plus its exact parameter count.
 */
#include "plan.h"
#include "query.h"
#include "routes.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

static cJSON *model_json(const mp_store_model *m)
{
	cJSON *o = cJSON_CreateObject();

	if (o == NULL)
		return NULL;
	cJSON_AddStringToObject(o, "id", m->id);
	cJSON_AddStringToObject(o, "model_type", m->model_type);
	cJSON_AddNumberToObject(o, "parameters", (double)m->parameters);
	cJSON_AddStringToObject(o, "source", m->source);
	cJSON_AddStringToObject(o, "created_at", m->created_at);
	cJSON_AddStringToObject(o, "updated_at", m->updated_at);
	cJSON_AddItemToObject(o, "hf_config", cJSON_Parse(m->config_json));
	return o;
}

static mp_status add_model(const mp_store_model *m, void *ctx)
{
	cJSON *item = model_json(m);

	if (item == NULL)
		return MP_ENOMEM;
	cJSON_AddItemToArray(ctx, item);
	return MP_OK;
}

mp_status mpd_h_models_list(mpd_request *req, mpd_reply *rep)
{
	uint64_t limit;
	const char *cursor = mpd_query(req, "cursor");
	cJSON *o, *items, *last;
	int more;
	mp_status st = mpd_query_u64(req, "limit", 1, LIST_MAX, LIST_DEFAULT, &limit, &rep->err);

	if (st != MP_OK)
		return st;
	o = cJSON_CreateObject();
	items = cJSON_AddArrayToObject(o, "items");
	st = mp_store_model_list(req->d->store, cursor, (int)limit, add_model, items, &more, &rep->err);
	if (st != MP_OK) {
		cJSON_Delete(o);
		return st;
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

	if (st != MP_OK)
		return st;
	rep->json = model_json(&m);
	mp_store_model_free(&m);
	return rep->json ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}
