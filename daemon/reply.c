/*
 * reply.c: builds and queues every HTTP response. Handlers never touch libmicrohttpd responses.
 * Errors follow RFC 9457: type, title, status, detail, and errors[] of {field, message}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "reply.h"

static const struct {
	mp_status st;
	int http;
	const char *slug;
} status_map[] = {
	{ MP_OK, 200, "ok" },
	{ MP_EINVAL, 422, "invalid-value" },
	{ MP_EOVERFLOW, 422, "value-too-large" },
	{ MP_EUNSUPPORTED, 422, "unsupported" },
	{ MP_ENOTFOUND, 404, "not-found" },
	{ MP_ENOMEM, 500, "out-of-memory" },
	{ MP_EPARSE, 400, "malformed-json" },
	{ MP_EDB, 500, "database-error" },
	{ MP_ENOTBUILTIN, 501, "not-built-in" },
	{ MP_ENODEV, 503, "hardware-unavailable" },
	{ MP_EBUSY, 409, "busy" },
	{ MP_ECONFLICT, 409, "conflict" },
	{ MP_ETOOLARGE, 413, "too-large" },
	{ MP_EINTERNAL, 500, "internal-error" },
	{ MP_EAUTH, 401, "unauthorized" },
	{ MP_EFORBIDDEN, 403, "forbidden" },
};

static const char *slug_of(mp_status st)
{
	for (size_t i = 0; i < sizeof(status_map) / sizeof(status_map[0]); i++)
		if (status_map[i].st == st)
			return status_map[i].slug;
	return "internal-error";
}

int mpd_http_status(mp_status st)
{
	for (size_t i = 0; i < sizeof(status_map) / sizeof(status_map[0]); i++)
		if (status_map[i].st == st)
			return status_map[i].http;
	return 500;
}

static const char *title_of(int http)
{
	switch (http) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

cJSON *mpd_problem_json(int http, mp_status st, const mp_error *err)
{
	cJSON *doc = cJSON_CreateObject(), *errors, *e;
	char type[96];

	if (doc == NULL)
		return NULL;
	snprintf(type, sizeof(type), "urn:memplan:problem:%s",
		 http == 405 ? "method-not-allowed" : http == 415 ? "unsupported-media-type" : slug_of(st));
	cJSON_AddStringToObject(doc, "type", type);
	cJSON_AddStringToObject(doc, "title", title_of(http));
	cJSON_AddNumberToObject(doc, "status", http);
	cJSON_AddStringToObject(doc, "detail", err->message[0] ? err->message : mp_status_str(st));
	errors = cJSON_AddArrayToObject(doc, "errors");
	if (errors && err->message[0]) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "field", err->field);
		cJSON_AddStringToObject(e, "message", err->message);
		cJSON_AddItemToArray(errors, e);
	}
	return doc;
}

static int queue(struct MHD_Connection *conn, int http, char *body, const char *type, const char *allow)
{
	struct MHD_Response *r;
	int ret;

	if (body == NULL) {
		static const char oom[] = "{\"type\":\"urn:memplan:problem:out-of-memory\",\"title\":\"Internal "
					  "Server Error\",\"status\":500,\"detail\":\"out of memory\",\"errors\":[]}";
		r = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		http = 500;
		type = "application/problem+json";
	} else {
		r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	}
	if (r == NULL) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(conn, (unsigned int)http, r);
	MHD_destroy_response(r);
	return ret;
}

int mpd_reply_send(void *conn, mp_status st, mpd_reply *rep, const char *allow)
{
	int http;
	char *body;
	const char *type;

	if (st == MP_OK) {
		http = rep->http_status ? rep->http_status : 200;
		if (rep->text) {
			body = rep->text;
			rep->text = NULL;
			type = rep->text_type ? rep->text_type : "text/plain; charset=utf-8";
		} else {
			body = rep->json ? cJSON_PrintUnformatted(rep->json) : NULL;
			type = "application/json";
		}
	} else {
		cJSON *doc;

		http = rep->http_status ? rep->http_status : mpd_http_status(st);
		doc = mpd_problem_json(http, st, &rep->err);
		body = doc ? cJSON_PrintUnformatted(doc) : NULL;
		cJSON_Delete(doc);
		type = "application/problem+json";
	}
	cJSON_Delete(rep->json);
	rep->json = NULL;
	free(rep->text);
	rep->text = NULL;
	rep->http_status = http;	/* what was sent, for the access log and metrics */
	return queue(conn, http, body, type, allow);
}
