/*
 * h_devices.c: the device resource. GET /v1/devices (cursor pagination; filters vendor, source,
 * min_memory_bytes), GET, PUT (create or replace), PATCH (JSON merge patch) and DELETE /v1/devices/{id}.
 * Thin: documents come from store_json.c, rows from the store; writes are audited as "api".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "query.h"
#include "routes.h"
#include "store_json.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

static mp_status add_device(const mp_store_device *d, void *ctx)
{
	cJSON *item = mpd_device_doc(d);

	if (item == NULL)
		return MP_ENOMEM;
	cJSON_AddItemToArray(ctx, item);
	return MP_OK;
}

static mp_status query_source(const mpd_request *req, const char *const *allowed, const char **out, mp_error *err)
{
	const char *v = mpd_query(req, "source");

	*out = v;
	if (v == NULL)
		return MP_OK;
	for (int i = 0; allowed[i]; i++)
		if (strcmp(v, allowed[i]) == 0)
			return MP_OK;
	return mp_fail(err, MP_EINVAL, "?source", "source must be one of: %s, %s%s%s", allowed[0], allowed[1],
		       allowed[2] ? ", " : "", allowed[2] ? allowed[2] : "");
}

/* Wraps a page of items as {items, next_cursor}. */
static cJSON *page(cJSON *o, cJSON *items, int more)
{
	cJSON *last = cJSON_GetArrayItem(items, cJSON_GetArraySize(items) - 1);

	if (more && last)
		cJSON_AddStringToObject(o, "next_cursor", cJSON_GetObjectItem(last, "id")->valuestring);
	else
		cJSON_AddNullToObject(o, "next_cursor");
	return o;
}

mp_status mpd_h_devices_list(mpd_request *req, mpd_reply *rep)
{
	static const char *const sources[] = { "datasheet", "measured", "user", NULL };
	mp_store_device_filter f = { mpd_query(req, "vendor"), NULL, 0 };
	uint64_t limit;
	cJSON *o, *items;
	int more;
	mp_status st = mpd_query_u64(req, "limit", 1, LIST_MAX, LIST_DEFAULT, &limit, &rep->err);

	if (st == MP_OK)
		st = mpd_query_u64(req, "min_memory_bytes", 0, UINT64_C(1) << 53, 0, &f.min_memory_bytes, &rep->err);
	if (st == MP_OK)
		st = query_source(req, sources, &f.source, &rep->err);
	if (st != MP_OK)
		return st;
	o = cJSON_CreateObject();
	items = cJSON_AddArrayToObject(o, "items");
	if (items == NULL) {
		cJSON_Delete(o);
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	st = mp_store_device_find(req->d->store, &f, mpd_query(req, "cursor"), (int)limit, add_device, items, &more,
				  &rep->err);
	if (st != MP_OK) {
		cJSON_Delete(o);
		return st == MP_ENOMEM ? mp_fail(&rep->err, st, "", "out of memory") : st;
	}
	rep->json = page(o, items, more);
	return MP_OK;
}

/* Reads device id into a heap struct (large: the source note alone is 2 KiB). */
static mp_status load(mpd_request *req, mpd_reply *rep, mp_store_device **out)
{
	mp_status st;

	*out = malloc(sizeof(**out));
	if (*out == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	st = mp_store_device_get(req->d->store, req->path_id, *out, &rep->err);
	if (st == MP_EINVAL)
		snprintf(rep->err.field, sizeof(rep->err.field), "/id"); /* a malformed path id: 422 naming it */
	if (st != MP_OK) {
		free(*out);
		*out = NULL;
	}
	return st;
}

mp_status mpd_h_device_get(mpd_request *req, mpd_reply *rep)
{
	mp_store_device *d;
	mp_status st = load(req, rep, &d);

	if (st != MP_OK)
		return st;
	rep->json = mpd_device_doc(d);
	free(d);
	return rep->json ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}

/* Decodes doc as device path_id, stores it and answers with the stored document (201 when created). */
static mp_status store_doc(mpd_request *req, mpd_reply *rep, const cJSON *doc)
{
	mp_store_device *d = malloc(sizeof(*d));
	bool created = false;
	mp_status st;

	if (d == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	if (!mpd_valid_id(req->path_id))
		st = mp_fail(&rep->err, MP_EINVAL, "/id",
			     "a device id is 1 to 63 of a-z 0-9 . - _, starting with a letter or digit");
	else
		st = mpd_device_decode(doc, "", req->path_id, req->d->store, d, &rep->err);
	if (st == MP_OK)
		st = mp_store_device_write(req->d->store, d, "api", &created, &rep->err);
	if (st == MP_OK)
		st = mp_store_device_get(req->d->store, req->path_id, d, &rep->err);
	if (st == MP_OK) {
		rep->json = mpd_device_doc(d);
		if (rep->json == NULL)
			st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	if (st == MP_OK && created) {
		rep->http_status = 201;
		snprintf(rep->location, sizeof(rep->location), "/v1/devices/%s", req->path_id);
	}
	free(d);
	return st;
}

mp_status mpd_h_device_put(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = NULL;
	mp_status st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);

	if (st == MP_OK)
		st = store_doc(req, rep, body);
	cJSON_Delete(body);
	return st;
}

mp_status mpd_h_device_patch(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = NULL, *doc = NULL;
	mp_store_device *d = NULL;
	mp_status st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);

	if (st == MP_OK)
		st = load(req, rep, &d);
	if (st == MP_OK) {
		doc = mpd_device_doc(d);
		st = doc ? mpd_merge_patch(doc, body, &rep->err) : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	}
	if (st == MP_OK)
		st = store_doc(req, rep, doc);
	free(d);
	cJSON_Delete(doc);
	cJSON_Delete(body);
	return st;
}

mp_status mpd_h_device_delete(mpd_request *req, mpd_reply *rep)
{
	mp_status st = mp_store_device_remove(req->d->store, req->path_id, "api", &rep->err);

	if (st == MP_ENOTFOUND || st == MP_EINVAL)
		snprintf(rep->err.field, sizeof(rep->err.field), "/id");
	if (st == MP_OK)
		rep->http_status = 204;
	return st;
}
