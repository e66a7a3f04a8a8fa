/*
 * h_devices.c: the device resource. GET /v1/devices (cursor pagination; filters vendor, source,
 * min_memory_bytes), GET, PUT (create or replace), PATCH (JSON merge patch on a copy, written only over the row it
 * was applied to: service.h, mps_device_update) and DELETE /v1/devices/{id}. Thin: documents from codec/, rows
 * through the service; writes are audited as "api".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../codec/codec.h"
#include "query.h"
#include "reply.h"
#include "routes.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

static mp_status query_source(const mpd_request *req, const char **out, mp_error *err)
{
	const char *v = mpd_query(req, "source");

	*out = v;
	if (v == NULL || strcmp(v, "datasheet") == 0 || strcmp(v, "measured") == 0 || strcmp(v, "user") == 0)
		return MP_OK;
	return mp_fail(err, MP_EINVAL, "?source", "source must be one of: datasheet, measured, user");
}

mp_status mpd_h_devices_list(mpd_request *req, mpd_reply *rep)
{
	mp_store_device_filter f = { mpd_query(req, "vendor"), NULL, 0, 0 };
	uint64_t limit;
	mpc_page page;
	int more;
	mp_status st = mpd_query_u64(req, "limit", 1, LIST_MAX, LIST_DEFAULT, &limit, &rep->err);

	if (st == MP_OK)
		st = mpd_query_u64(req, "min_memory_bytes", 0, MP_MAX_PLAN_BYTES, 0, &f.min_memory_bytes, &rep->err);
	if (st == MP_OK && mpd_query(req, "kind"))
		st = mpc_kinds(mpd_query(req, "kind"), "?kind", &f.kinds, &rep->err); /* a listing shows every kind */
	if (st == MP_OK)
		st = query_source(req, &f.source, &rep->err);
	if (st != MP_OK)
		return st;
	mpc_page_begin(&page);
	st = mps_device_find(req->d->svc, &f, mpd_query(req, "cursor"), (int)limit, mpc_page_add_device, &page, &more,
			     &rep->err);
	if (st != MP_OK) {
		mpc_out_free(&page.w);
		return st;
	}
	rep->text = mpc_page_finish(&page, more, NULL);
	rep->text_type = "application/json";
	return rep->text ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}

/* A malformed path id is a 422 naming it. */
static mp_status path_id_error(mp_status st, mp_error *err)
{
	if (st == MP_EINVAL)
		snprintf(err->field, sizeof(err->field), "/id");
	return st;
}

/* Answers with the stored document of path_id (201 with Location when created). */
static mp_status answer(mpd_request *req, mpd_reply *rep, bool created)
{
	mp_store_device *d = malloc(sizeof(*d));
	mp_status st = d ? mps_device_get(req->d->svc, req->path_id, d, &rep->err)
			 : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK) {
		mpc_out w;

		mpc_out_init(&w);
		mpc_device_write(&w, NULL, d);
		st = mpd_reply_json(rep, &w);
	}
	if (st == MP_OK && created) {
		rep->http_status = 201;
		snprintf(rep->location, sizeof(rep->location), "/v1/devices/%s", req->path_id);
	}
	free(d);
	return st;
}

mp_status mpd_h_device_get(mpd_request *req, mpd_reply *rep)
{
	return path_id_error(answer(req, rep, false), &rep->err);
}

static mp_status valid_path_id(const mpd_request *req, mp_error *err)
{
	if (mp_valid_id(req->path_id))
		return MP_OK;
	return mp_fail(err, MP_EINVAL, "/id", "a device id is 1 to 63 of a-z 0-9 . - _, starting with a letter or digit");
}

/* The request's preconditions on the stored profile (NULL: none stored), inside the write's transaction. */
static mp_status device_precondition(void *ctx, const mp_store_device *current, mp_error *err)
{
	char *doc = NULL;
	mp_status st;

	if (current) { /* the document a GET of it gives */
		mpc_out w;

		mpc_out_init(&w);
		mpc_device_write(&w, NULL, current);
		doc = mpc_out_finish(&w, NULL);
	}
	st = current && doc == NULL ? mp_fail(err, MP_ENOMEM, "", "out of memory")
				    : mpd_check_preconditions(ctx, doc, err);
	free(doc);
	return st;
}

/* Whether the request carries a precondition (If-Match or If-None-Match). */
static bool conditional(const mpd_request *req)
{
	return mpd_header(req, "If-Match") || mpd_header(req, "If-None-Match");
}

mp_status mpd_h_device_put(mpd_request *req, mpd_reply *rep)
{
	mp_store_device *d = malloc(sizeof(*d));
	bool created = false;
	mp_status st = d ? valid_path_id(req, &rep->err) : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");

	if (st == MP_OK)
		st = mpc_device_decode(req->json, "", req->path_id, "user", d, &rep->err);
	if (st == MP_OK)
		st = mps_device_put_if(req->d->svc, d, "api", conditional(req) ? device_precondition : NULL, req, &created,
				       &rep->err);
	free(d);
	return st == MP_OK ? answer(req, rep, created) : st;
}

/* If-Match on a write: the stored document's ETag (the one a GET of it carries) must be listed, else 412. Checked
 * inside the write's transaction, so no other write can come between the check and this one. */
mp_status mpd_check_if_match(const mpd_request *req, const char *stored, mp_error *err)
{
	const char *want = mpd_header(req, "If-Match");
	char tag[24];

	if (want == NULL)
		return MP_OK;
	mpd_document_etag(stored, tag, sizeof(tag));
	if (mpd_if_match(want, tag))
		return MP_OK;
	return mp_fail(err, MP_EPRECONDITION, "If-Match",
		       "the resource changed since that ETag was read (it is %s now): GET it again, apply the change to "
		       "what it holds now, and send that ETag",
		       tag);
}

mp_status mpd_check_preconditions(const mpd_request *req, const char *stored, mp_error *err)
{
	const char *im = mpd_header(req, "If-Match"), *inm = mpd_header(req, "If-None-Match");
	char tag[24] = "";

	if (stored && (im || inm))
		mpd_document_etag(stored, tag, sizeof(tag));
	if (im && stored == NULL)
		return mp_fail(err, MP_EPRECONDITION, "If-Match",
			       "nothing is stored under this id, so no If-Match tag matches (RFC 9110 section 13.1.1); send "
			       "the write without If-Match to create it, or with 'If-None-Match: *' to create it only");
	if (im && !mpd_if_match(im, tag))
		return mp_fail(err, MP_EPRECONDITION, "If-Match",
			       "the resource changed since that ETag was read (it is %s now): GET it again, apply the "
			       "change to what it holds now, and send that ETag",
			       tag);
	if (inm && stored && mpd_if_none_match(inm, tag))
		return mp_fail(err, MP_EPRECONDITION, "If-None-Match",
			       "%s (it is %s now; RFC 9110 section 13.1.2): nothing was written",
			       strchr(inm, '*') ? "the resource exists and 'If-None-Match: *' writes only a new one"
						: "the resource's current ETag is one If-None-Match lists",
			       tag);
	return MP_OK;
}

/* The merge patch applied to a copy of the stored profile (If-Match first): the document a GET gives, parsed, patched
 * and decoded again (mps_device_update writes it only if the row is still the one read). */
static mp_status patch_device(void *ctx, mp_store_device *d, mp_error *err)
{
	const mpd_request *req = ctx;
	mpc_out w;
	char *stored;
	cJSON *doc = NULL;
	mp_status st;

	mpc_out_init(&w);
	mpc_device_write(&w, NULL, d);
	stored = mpc_out_finish(&w, NULL);
	st = stored && (doc = cJSON_Parse(stored)) != NULL ? mpd_check_if_match(req, stored, err)
							   : mp_fail(err, MP_ENOMEM, "", "out of memory");
	if (st == MP_OK)
		st = mpc_merge_patch(doc, req->json, err);
	if (st == MP_OK)
		st = mpc_device_decode(doc, "", req->path_id, "user", d, err);
	cJSON_Delete(doc);
	free(stored);
	return st;
}

mp_status mpd_h_device_patch(mpd_request *req, mpd_reply *rep)
{
	mp_status st = valid_path_id(req, &rep->err);

	if (st == MP_OK)
		st = mps_device_update(req->d->svc, req->path_id, "api", patch_device, req, &rep->err);
	return st == MP_OK ? answer(req, rep, false) : st;
}

mp_status mpd_h_device_delete(mpd_request *req, mpd_reply *rep)
{
	mp_status st = mps_device_delete_if(req->d->svc, req->path_id, "api", conditional(req) ? device_precondition : NULL,
					    req, &rep->err);

	if (st == MP_ENOTFOUND || st == MP_EINVAL)
		snprintf(rep->err.field, sizeof(rep->err.field), "/id");
	if (st == MP_OK)
		rep->http_status = 204;
	return st;
}
