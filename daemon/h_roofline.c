/*
 * h_roofline.c: POST /v1/roofline (the roofline document) and GET /v1/devices/{id}/roofline.svg (the same
 * document drawn). Thin: parse, hand to roofline_doc.c, reply. Each ?op= query argument is one operation in
 * the compact KIND:key=value,... form; ?ridge_dtype= picks the compute roof.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "decode.h"
#include "query.h"
#include "roofline_doc.h"
#include "routes.h"

mp_status mpd_h_roofline(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = NULL;
	mp_status st = mpd_parse_body(req->body, req->body_len, &body, &rep->err);

	if (st == MP_OK)
		st = mpd_roofline(req->d->store, body, &rep->json, &rep->err);
	cJSON_Delete(body);
	return st;
}

typedef struct op_args {
	cJSON *ops;
	mp_status st;
	mp_error *err;
	int n;
} op_args;

static enum MHD_Result collect_op(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	op_args *a = cls;
	cJSON *op;

	(void)kind;
	if (a->st != MP_OK || key == NULL || strcmp(key, "op") != 0)
		return MHD_YES;
	if (++a->n > MPD_ROOFLINE_MAX_OPS) {
		a->st = mp_fail(a->err, MP_EINVAL, "?op", "at most %d operations", MPD_ROOFLINE_MAX_OPS);
		return MHD_NO;
	}
	a->st = mpd_op_spec_json(value ? value : "", "?op", &op, a->err);
	if (a->st == MP_OK)
		cJSON_AddItemToArray(a->ops, op);
	return a->st == MP_OK ? MHD_YES : MHD_NO;
}

mp_status mpd_h_device_roofline_svg(mpd_request *req, mpd_reply *rep)
{
	cJSON *body = cJSON_CreateObject(), *doc = NULL;
	op_args a = {0};
	const char *ridge = mpd_query(req, "ridge_dtype");
	mpd_chart *chart = NULL;
	mp_status st;

	if (body == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	cJSON_AddStringToObject(body, "device", req->path_id);
	if (ridge)
		cJSON_AddStringToObject(body, "ridge_dtype", ridge);
	a.ops = cJSON_AddArrayToObject(body, "ops");
	a.err = &rep->err;
	MHD_get_connection_values((struct MHD_Connection *)req->conn, MHD_GET_ARGUMENT_KIND, collect_op, &a);
	st = a.st;
	if (st == MP_OK)
		st = mpd_roofline(req->d->store, body, &doc, &rep->err);
	if (st != MP_OK) {
		/* op fields are "?op" or "/ops/N/...": say which query argument */
		if (strncmp(rep->err.field, "/ops/", 5) == 0 || strcmp(rep->err.field, "/ridge_dtype") == 0) {
			char f[sizeof(rep->err.field)];

			snprintf(f, sizeof(f), "?%s",
			         strcmp(rep->err.field, "/ridge_dtype") == 0 ? "ridge_dtype" : "op");
			memcpy(rep->err.field, f, sizeof(f));
		}
		goto out;
	}
	chart = calloc(1, sizeof(*chart));
	if (chart == NULL) {
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		goto out;
	}
	mpd_chart_from_doc(doc, chart);
	rep->text = mpd_roofline_svg(chart);
	rep->text_type = "image/svg+xml";
	if (rep->text == NULL)
		st = mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
out:
	free(chart);
	cJSON_Delete(doc);
	cJSON_Delete(body);
	return st;
}
