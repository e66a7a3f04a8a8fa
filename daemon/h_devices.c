/*
 * h_devices.c: the device resource. GET /v1/devices (cursor pagination) and GET /v1/devices/{id}.
 */
#include "plan.h"
#include "query.h"
#include "routes.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

static mp_status add_device(const mp_store_device *d, void *ctx)
{
	cJSON *item = mpd_device_json(d);

	if (item == NULL)
		return MP_ENOMEM;
	cJSON_AddItemToArray(ctx, item);
	return MP_OK;
}

mp_status mpd_h_devices_list(mpd_request *req, mpd_reply *rep)
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
	st = mp_store_device_list(req->d->store, cursor, (int)limit, add_device, items, &more, &rep->err);
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

mp_status mpd_h_device_get(mpd_request *req, mpd_reply *rep)
{
	mp_store_device d;
	mp_status st = mp_store_device_get(req->d->store, req->path_id, &d, &rep->err);

	if (st != MP_OK)
		return st;
	rep->json = mpd_device_json(&d);
	return rep->json ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}
