/*
 * problem.c: errors as RFC 9457 application/problem+json documents: type (urn:memplan:problem:<slug>), title
 * (the HTTP reason phrase), status, detail, and errors[] of {field, message}. The slug of each status is one
 * switch without a default, so a new status cannot go unnamed (-Wswitch). Every problem type the daemon can send
 * is listed in openapi.yaml (Problem.type), and a test checks the two agree.
 */
#include <stdio.h>
#include <string.h>

#include "codec.h"

const char *mpc_problem_slug(mp_status st)
{
	switch (st) {
	case MP_OK: return "ok";
	case MP_EINVAL: return "invalid-value";
	case MP_EOVERFLOW: return "value-too-large";
	case MP_EUNSUPPORTED: return "unsupported";
	case MP_ENOTFOUND: return "not-found";
	case MP_ENOMEM: return "out-of-memory";
	case MP_EPARSE: return "malformed-json";
	case MP_EDB: return "database-error";
	case MP_ENOTBUILTIN: return "not-built-in";
	case MP_ENODEV: return "hardware-unavailable";
	case MP_EBUSY: return "busy";
	case MP_ECONFLICT: return "conflict";
	case MP_ETOOLARGE: return "too-large";
	case MP_EINTERNAL: return "internal-error";
	case MP_EAUTH: return "unauthorized";
	case MP_EFORBIDDEN: return "forbidden";
	case MP_EOVERLOADED: return "overloaded";
	case MP_ESTORAGE: return "database-unavailable";
	case MP_ENOSPACE: return "insufficient-storage";
	case MP_EPRECONDITION: return "precondition-failed";
	case MP_EFRAMING: return "malformed-request";
	}
	return "internal-error";
}

static const char *title_of(int http)
{
	switch (http) {
	case 400: return "Bad Request";
	case 304: return "Not Modified";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Content Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Content";
	case 428: return "Precondition Required";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return "Internal Server Error";
	}
}

cJSON *mpc_problem_json(int http, mp_status st, const mp_error *err)
{
	cJSON *doc = cJSON_CreateObject(), *errors, *e;
	char type[96], field[sizeof(err->field)], message[sizeof(err->message)];

	if (doc == NULL)
		return NULL;
	snprintf(type, sizeof(type), "urn:memplan:problem:%s",
		 http == 405 ? "method-not-allowed" : http == 415 ? "unsupported-media-type" : mpc_problem_slug(st));
	cJSON_AddStringToObject(doc, "type", type);
	cJSON_AddStringToObject(doc, "title", title_of(http));
	cJSON_AddNumberToObject(doc, "status", http);
	/* messages may quote request text (an id, a key) or be cut mid-character: send only well-formed UTF-8 */
	mpc_utf8_sanitize(field, sizeof(field), err->field);
	mpc_utf8_sanitize(message, sizeof(message), err->message);
	cJSON_AddStringToObject(doc, "detail", message[0] ? message : mp_status_str(st));
	errors = cJSON_AddArrayToObject(doc, "errors");
	if (errors && message[0]) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "field", field);
		cJSON_AddStringToObject(e, "message", message);
		mpc_append(errors, e);
	}
	return doc;
}
