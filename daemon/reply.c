/*
 * reply.c: builds and queues every HTTP response. Handlers never touch libmicrohttpd responses. The status ->
 * HTTP mapping is one switch without a default (-Wswitch names a new status); errors are RFC 9457 documents
 * from codec/mpc_problem.c. Successful GETs carry a
 * strong ETag computed over the exact body bytes and answer a matching If-None-Match with 304 (RFC 9110 13.1.2).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "../codec/codec.h"
#include "reply.h"

int mpd_http_status(mp_status st)
{
	switch (st) {
	case MP_OK: return 200;
	case MP_EINVAL: return 422;
	case MP_EOVERFLOW: return 422;
	case MP_EUNSUPPORTED: return 422;
	case MP_ENOTFOUND: return 404;
	case MP_ENOMEM: return 500;
	case MP_EPARSE: return 400;
	case MP_EDB: return 500;
	case MP_ENOTBUILTIN: return 501;
	case MP_ENODEV: return 503;
	case MP_EBUSY: return 409;
	case MP_ECONFLICT: return 409;
	case MP_ETOOLARGE: return 413;
	case MP_EINTERNAL: return 500;
	case MP_EAUTH: return 401;
	case MP_EFORBIDDEN: return 403;
	case MP_EOVERLOADED: return 503;
	case MP_ESTORAGE: return 503;
	case MP_ENOSPACE: return 507;
	case MP_EPRECONDITION: return 412;
	case MP_EFRAMING: return 400;
	case MP_EUPSTREAM: return 502;
	}
	return 500; /* a value outside the enum: an invariant broke */
}

/* FNV-1a, 64 bits, over the body: a strong validator (the same bytes give the same tag; any change to the
 * body, down to one byte, changes it with probability 1 - 2^-64). */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h ^= *p;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

static void etag_of(const char *body, char *out, size_t len)
{
	snprintf(out, len, "\"%016llx\"", (unsigned long long)fnv1a(UINT64_C(14695981039346656037), body));
}

void mpd_document_etag(const char *json, char *out, size_t len)
{
	/* the bytes a GET of the document sends: the compact text and the newline every JSON answer ends with */
	snprintf(out, len, "\"%016llx\"",
		 (unsigned long long)fnv1a(fnv1a(UINT64_C(14695981039346656037), json), "\n"));
}

bool mpd_if_match(const char *header, const char *tag)
{
	size_t tlen = strlen(tag);
	const char *p = header;

	while (*p) {
		size_t n;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '*')
			return true;
		n = strcspn(p, ",");
		while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n == tlen && strncmp(p, tag, tlen) == 0)
			return true; /* a W/ prefix makes n differ: weak tags never match */
		p += strcspn(p, ",");
	}
	return false;
}

/* Whether an If-None-Match header value matches tag: "*" or any listed tag, compared weakly (RFC 9110 13.1.2:
 * W/ prefixes are ignored for If-None-Match). */
bool mpd_if_none_match(const char *header, const char *tag)
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

/* Retry-After and Connection: close, for any answer that asks for them. */
static void headers_common(struct MHD_Response *r, const mpd_reply *rep)
{
	char secs[16];

	if (rep == NULL)
		return;
	if (rep->retry_after) {
		snprintf(secs, sizeof(secs), "%u", rep->retry_after);
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, secs);
	}
	if (rep->close)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
}

/* libmicrohttpd's reader over the handler's stream (daemon.h: mpd_reply.stream_read). */
typedef struct stream {
	ssize_t (*read)(void *ctx, char *buf, size_t max);
	void (*free)(void *ctx);
	void *ctx;
	void (*progress)(void *ctx, size_t n);	/* told what each read gave libmicrohttpd (may be NULL) */
	void *progress_ctx;
} stream;

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	stream *s = cls;
	ssize_t n;

	(void)pos;
	n = s->read(s->ctx, buf, max);
	if (n > 0) {
		if (s->progress)
			s->progress(s->progress_ctx, (size_t)n);
		return n;
	}
	return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM : MHD_CONTENT_READER_END_WITH_ERROR;
}

/* Bodies at least this large are handed to libmicrohttpd block by block from their buffer (not as one buffer), so
 * the send deadline sees them go out (guard.h). */
#define PROGRESS_BODY_BYTES (256 * 1024)

/* A whole answer read out of its buffer (owned; freed with the response). */
typedef struct buffered {
	char *body;
	size_t len;
	void (*progress)(void *ctx, size_t n);
	void *progress_ctx;
} buffered;

static ssize_t buffered_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	buffered *b = cls;
	size_t n;

	if (pos >= b->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = b->len - (size_t)pos < max ? b->len - (size_t)pos : max;
	memcpy(buf, b->body + pos, n);
	if (b->progress)
		b->progress(b->progress_ctx, n);
	return (ssize_t)n;
}

static void buffered_release(void *cls)
{
	buffered *b = cls;

	free(b->body);
	free(b);
}

static void stream_release(void *cls)
{
	stream *s = cls;

	if (s->free)
		s->free(s->ctx);
	free(s);
}

/* A 200 answer produced while it is sent: with a Content-Length when its size is known, else in chunks (HTTP/1.1
 * chunked transfer coding). */
static int queue_stream(struct MHD_Connection *conn, mpd_reply *rep)
{
	stream *s = malloc(sizeof(*s));
	struct MHD_Response *r;
	int ret;

	if (s == NULL) {
		rep->stream_free(rep->stream_ctx);
		return MHD_NO;
	}
	s->read = rep->stream_read;
	s->free = rep->stream_free;
	s->ctx = rep->stream_ctx;
	s->progress = rep->progress;
	s->progress_ctx = rep->progress_ctx;
	rep->stream_read = NULL;
	rep->stream_free = NULL;
	rep->stream_ctx = NULL;
	r = MHD_create_response_from_callback(rep->stream_length ? rep->stream_length : MHD_SIZE_UNKNOWN, 64 * 1024,
					      stream_reader, s, stream_release);
	if (r == NULL) {
		stream_release(s);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rep->text_type ? rep->text_type : "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	headers_common(r, rep);
	rep->http_status = 200;
	ret = MHD_queue_response(conn, 200, r);
	MHD_destroy_response(r);
	return ret;
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
		if (inm && mpd_if_none_match(inm, etag)) {
			http = 304;
			rep->http_status = 304; /* what was sent, for the access log and metrics */
		}
	}
	if (http == 304 && body != NULL) {
		/* The body stays with the response but is never sent (libmicrohttpd sends no content with a 304): its
		 * Content-Length is then the length the 200 would have had, the only value RFC 9110 8.6 allows there.
		 * libmicrohttpd 0.9.75 writes a Content-Length on every 304, so an empty response would say 0. */
		r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	} else if (http == 204 || http == 304) {
		free(body);
		body = NULL;
		r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	} else if (body == NULL) {
		static const char oom[] = "{\"type\":\"urn:memplan:problem:out-of-memory\",\"title\":\"Internal "
					  "Server Error\",\"status\":500,\"detail\":\"out of memory\",\"errors\":[]}";
		r = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
		http = 500;
		type = "application/problem+json";
	} else if (strlen(body) >= PROGRESS_BODY_BYTES && rep && rep->progress) {
		buffered *b = malloc(sizeof(*b));

		if (b == NULL) {
			free(body);
			return MHD_NO;
		}
		b->body = body;
		b->len = strlen(body);
		b->progress = rep->progress;
		b->progress_ctx = rep->progress_ctx;
		r = MHD_create_response_from_callback(b->len, 64 * 1024, buffered_reader, b, buffered_release);
		if (r == NULL) {
			buffered_release(b);
			return MHD_NO;
		}
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
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (rep && rep->page) /* the page may load and call only this origin; no inline code, no frames */
		MHD_add_response_header(r, "Content-Security-Policy",
					"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
					"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	if (http == 401)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"memplan\"");
	if (rep && rep->location[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, rep->location);
	headers_common(r, rep);
	ret = MHD_queue_response(conn, (unsigned int)http, r);
	MHD_destroy_response(r);
	return ret;
}

static bool json_type(const char *type)
{
	return strcmp(type, "application/json") == 0 || strcmp(type, "application/problem+json") == 0;
}

/* body with a newline at its end (a JSON answer ends with one, so a shell prompt never sticks to it); body is
 * consumed. NULL when out of memory. */
static char *with_newline(char *body)
{
	size_t n = strlen(body);
	char *p;

	if (n > 0 && body[n - 1] == '\n')
		return body;
	p = realloc(body, n + 2);
	if (p == NULL) {
		free(body);
		return NULL;
	}
	p[n] = '\n';
	p[n + 1] = '\0';
	return p;
}

mp_status mpd_reply_json(mpd_reply *rep, mpc_out *w)
{
	rep->text = mpc_out_finish(w, NULL);
	rep->text_type = "application/json";
	return rep->text ? MP_OK : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}

int mpd_reply_send(void *conn, mp_status st, mpd_reply *rep, const char *allow)
{
	int http;
	char *body;
	const char *type;
	bool pretty = rep->pretty;

	if (st == MP_OK && rep->stream_read) {
		free(rep->text);
		rep->text = NULL;
		return queue_stream(conn, rep);
	}
	if (rep->stream_free) { /* an error after all: the stream is never read */
		rep->stream_free(rep->stream_ctx);
		rep->stream_read = NULL;
		rep->stream_free = NULL;
		rep->stream_ctx = NULL;
	}
	if (st == MP_OK) {
		http = rep->http_status ? rep->http_status : 200;
		if (rep->text) {
			body = rep->text;
			rep->text = NULL;
			type = rep->text_type ? rep->text_type : "text/plain; charset=utf-8";
			if (pretty && json_type(type)) { /* JSON text (the fit writer's, the cache's) indented */
				char *p = mpc_reprint(body, true);

				free(body);
				body = p;
			}
		} else {
			body = http == 204 ? strdup("") : NULL; /* a 204 has no body; any other answer has its text */
			type = "application/json";
		}
	} else {
		mpc_out w;

		http = rep->http_status ? rep->http_status : mpd_http_status(st);
		mpc_out_init(&w);
		mpc_problem_write(&w, http, st, &rep->err);
		body = mpc_out_finish(&w, NULL);
		if (body && pretty) {
			char *p = mpc_reprint(body, true);

			free(body);
			body = p;
		}
		type = "application/problem+json";
	}
	if (body && body[0] && json_type(type))
		body = with_newline(body);
	free(rep->text);
	rep->text = NULL;
	rep->http_status = http;	/* what was sent, for the access log and metrics */
	if (st != MP_OK)
		rep->cacheable = false; /* no ETag on an error */
	return queue(conn, http, body, type, allow, rep);
}
