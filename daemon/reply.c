/*
 * reply.c: builds and queues every HTTP response. Handlers never touch libmicrohttpd responses.
 * Errors follow RFC 9457: type, title, status, detail, and errors[] of {field, message}. Successful GETs carry a
 * strong ETag computed over the exact body bytes and answer a matching If-None-Match with 304 (RFC 9110 13.1.2).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "decode.h"
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
	case 304: return "Not Modified";
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
	char type[96], field[sizeof(err->field)], message[sizeof(err->message)];

	if (doc == NULL)
		return NULL;
	snprintf(type, sizeof(type), "urn:memplan:problem:%s",
		 http == 405 ? "method-not-allowed" : http == 415 ? "unsupported-media-type" : slug_of(st));
	cJSON_AddStringToObject(doc, "type", type);
	cJSON_AddStringToObject(doc, "title", title_of(http));
	cJSON_AddNumberToObject(doc, "status", http);
	/* messages may quote request text (an id, a key) or be cut mid-character: send only well-formed UTF-8 */
	mpd_utf8_sanitize(field, sizeof(field), err->field);
	mpd_utf8_sanitize(message, sizeof(message), err->message);
	cJSON_AddStringToObject(doc, "detail", message[0] ? message : mp_status_str(st));
	errors = cJSON_AddArrayToObject(doc, "errors");
	if (errors && message[0]) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "field", field);
		cJSON_AddStringToObject(e, "message", message);
		cJSON_AddItemToArray(errors, e);
	}
	return doc;
}

/* FNV-1a, 64 bits, over the body: a strong validator (the same bytes give the same tag; any change to the
 * body, down to one byte, changes it with probability 1 - 2^-64). */
static void etag_of(const char *body, char *out, size_t len)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (const unsigned char *p = (const unsigned char *)body; *p; p++) {
		h ^= *p;
		h *= UINT64_C(1099511628211);
	}
	snprintf(out, len, "\"%016llx\"", (unsigned long long)h);
}

/* Whether an If-None-Match header value matches tag: "*" or any listed tag, compared weakly (RFC 9110 13.1.2:
 * W/ prefixes are ignored for If-None-Match). */
static bool none_match(const char *header, const char *tag)
{
	size_t tlen = strlen(tag);
	const char *p = header;

	while (*p) {
		size_t n;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return true;
		if (strncmp(p, "W/", 2) == 0)
			p += 2;
		n = strcspn(p, ",");
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == tlen && strncmp(p, tag, tlen) == 0)
			return true;
		p += strcspn(p, ",");
	}
	return false;
}

static int queue(struct MHD_Connection *conn, int http, char *body, const char *type, const char *allow,
		 mpd_reply *rep)
{
	struct MHD_Response *r;
	char etag[24] = "";
	int ret;

	if (body != NULL && rep && rep->cacheable && http == 200) {
		const char *inm = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);

		etag_of(body, etag, sizeof(etag));
		if (inm && none_match(inm, etag)) {
			free(body);
			body = NULL;
			http = 304;
			rep->http_status = 304; /* what was sent, for the access log and metrics */
		}
	}
	if (http == 204 || http == 304) {
		free(body);
		body = NULL;
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else if (body == NULL) {
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
	if (http != 204 && http != 304)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, "Cache-Control", etag[0] ? "no-cache" : "no-store");
	if (etag[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	if (http == 401)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"memplan\"");
	if (rep && rep->location[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, rep->location);
	ret = MHD_queue_response(conn, (unsigned int)http, r);
	MHD_destroy_response(r);
	return ret;
}

#define MAX_EXACT_WHOLE 9007199254740992.0 /* 2^53: every whole double up to here is exact */

/* The decimal digits of v into buf (at least 21 bytes), NUL-terminated; returns their count. printf's "%lld"
 * costs about ten times as much, and a plan prints about a hundred integers. */
static int int_digits(long long v, char *buf)
{
	char tmp[24];
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
	int n = 0, k = 0;

	do {
		tmp[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		buf[k++] = '-';
	while (n)
		buf[k++] = tmp[--n];
	buf[k] = '\0';
	return k;
}

/* Replaces each whole number item with |v| <= 2^53 in item's tree by a raw item holding its digits. -0 is left
 * to cJSON (it writes "-0"), and so are items borrowed by reference from another tree. */
static void integers_as_raw(cJSON *item)
{
	cJSON *c = item->child;

	while (c) {
		cJSON *next = c->next;

		if (c->type & cJSON_IsReference) {
			/* borrowed from another tree: left as it is */
		} else if (cJSON_IsNumber(c)) {
			double d = c->valuedouble;

			if (isfinite(d) && fabs(d) <= MAX_EXACT_WHOLE && d == floor(d) && !(d == 0 && signbit(d))) {
				char digits[24];
				int n = int_digits((long long)d, digits);
				char *text = n > 0 ? cJSON_malloc((size_t)n + 1) : NULL;

				/* in place: a raw item is a valuestring that cJSON_Delete frees */
				if (text) {
					memcpy(text, digits, (size_t)n + 1);
					c->valuestring = text;
					c->type = (c->type & ~0xFF) | cJSON_Raw;
				}
			}
		} else if (c->child) {
			integers_as_raw(c);
		}
		c = next;
	}
}

char *mpd_json_print(cJSON *doc, bool pretty)
{
	if (doc == NULL)
		return NULL;
	integers_as_raw(doc);
	return cJSON_PrintBuffered(doc, 8192, pretty);
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
			body = rep->json ? mpd_json_print(rep->json, false) : http == 204 ? strdup("") : NULL;
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
	return queue(conn, http, body, type, allow, st == MP_OK ? rep : NULL);
}
