/*
 * mpc_problem.c: errors as RFC 9457 application/problem+json documents: type (urn:memplan:problem:<slug>), title
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
	case MP_EUPSTREAM: return "bad-gateway";
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
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	case 507: return "Insufficient Storage";
	default: return "Internal Server Error";
	}
}

static void add_entry(mpc_out *w, const char *field, const char *message)
{
	char f[sizeof(((mp_error *)0)->field)], m[sizeof(((mp_error *)0)->message)];

	/* messages may quote request text (an id, a key) or be cut mid-character: send only well-formed UTF-8 */
	mpc_utf8_sanitize(f, sizeof(f), field);
	mpc_utf8_sanitize(m, sizeof(m), message);
	mpc_w_obj(w, NULL);
	mpc_w_str(w, "field", f);
	mpc_w_str(w, "message", m);
	mpc_w_end(w);
}

/* Whether err's own problem is one of those kept in its list. */
static bool listed(const mp_error *err)
{
	for (size_t i = 0; err->all && i < err->all->n; i++)
		if (strcmp(err->all->item[i].field, err->field) == 0 &&
		    strcmp(err->all->item[i].message, err->message) == 0)
			return true;
	return false;
}

void mpc_problem_write(mpc_out *w, int http, mp_status st, const mp_error *err)
{
	char type[96], message[sizeof(err->message)], detail[sizeof(err->message) + 96];
	size_t kept = err->all ? err->all->n : 0, total;

	snprintf(type, sizeof(type), "urn:memplan:problem:%s",
		 http == 405 ? "method-not-allowed" : http == 415 ? "unsupported-media-type" : mpc_problem_slug(st));
	mpc_w_obj(w, NULL);
	mpc_w_str(w, "type", type);
	mpc_w_str(w, "title", title_of(http));
	mpc_w_num(w, "status", http);
	/* every problem of the request (err->all, in the order found) with err's own first when it is not among them;
	 * detail is the first problem's message, saying how many there are in all */
	total = (err->message[0] && !listed(err) ? 1 : 0) + kept + (err->all ? err->all->dropped : 0);
	mpc_utf8_sanitize(message, sizeof(message), err->message[0] ? err->message
						 : kept			? err->all->item[0].message
									: mp_status_str(st));
	if (total > 1)
		snprintf(detail, sizeof(detail), "%s (%zu problems in all, each in errors)", message, total);
	else
		snprintf(detail, sizeof(detail), "%s", message);
	mpc_w_str(w, "detail", detail);
	mpc_w_arr(w, "errors");
	if (err->message[0] && !listed(err))
		add_entry(w, err->field, err->message);
	for (size_t i = 0; i < kept; i++)
		add_entry(w, err->all->item[i].field, err->all->item[i].message);
	if (err->all && err->all->dropped) {
		char more[96];

		snprintf(more, sizeof(more), "%zu more problems were found and not listed (at most %d are)",
			 err->all->dropped, MP_MAX_ERRORS);
		add_entry(w, "", more);
	}
	mpc_w_end(w);
	mpc_w_end(w);
}
