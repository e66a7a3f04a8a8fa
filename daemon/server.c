/*
 * server.c: the libmicrohttpd adapter. Collects each request's body into per-request state (req_cls) with
 * a hard ceiling, dispatches through the route table once the body is complete, and frees the state in the
 * completion callback, where the request is also counted (metrics.c) and logged (log.c). Enforces the
 * limits (body, URL, header memory, idle timeout, connections) and the graceful stop. Holds no globals:
 * everything hangs off struct mpd_daemon.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "../codec/mpc_calib.h"
#include "../codec/mpc_json.h"
#include "../codec/mpc_k8s_stream.h"
#include "accept.h"
#include "auth.h"
#include "budget.h"
#include "framing.h"
#include "guard.h"
#include "lane.h"
#include "log.h"
#include "metrics.h"
#include "reply.h"
#include "respcache.h"
#include "../service/mps_observe.h"
#include "routes.h"

typedef struct req_state {
	char *body;
	size_t len, cap;
	bool too_large;
	struct timespec start;		/* when the headers were complete */
	const char *route;		/* the route's pattern, or "unmatched" (static) */
	unsigned long long received;	/* body bytes received, counted past the cap too */
	int status;			/* the HTTP status sent; 0 until a response is queued */
	size_t max_body;		/* the route's body limit (--max-body-bytes, or --k8s-max-body-bytes) */
	bool heavy;			/* holds one of the --max-heavy-requests slots (given back when computed) */
	char method[16];
	char path[160];			/* for the access log, truncated */
	unsigned flags;			/* the route's MPD_ROUTE_* (0 when none matched) */
	size_t expect;			/* the declared Content-Length (0: none), the body buffer's first size */
	char remote[48];		/* the client's address, the budget's key (budget.h) */
	size_t charged;			/* bytes taken from the budget (given back at completion) */
	size_t peak;			/* the most it held at once (memory returned to the system after a large one) */
	mpc_k8s_stream *k8s;		/* an extender body read as it arrives (MPD_ROUTE_K8S_STREAM) */
	/* a refusal decided while the body was arriving (libmicrohttpd 0.9.75 cannot queue an answer mid-body): the
	 * rest is read and dropped, and this is the answer when the body ends */
	mp_status late;
	int late_http;
	unsigned late_retry;
	mp_error late_err;
	struct work *work;		/* computing on the heavy lane (its connection suspended); NULL otherwise */
	bool fresh;			/* on the fresh lane: its answer closes the connection (accept.h) */
	mpd_guard *guard;		/* the daemon's connection guard (may be NULL) and this connection's entry */
	void *socket_context;
} req_state;

/* A request that held this much (body, extender texts, answer) gives the freed memory back to the system when it
 * ends (malloc_trim): glibc keeps freed heap for reuse otherwise, and a 127 MiB body would stay resident. */
#define TRIM_AFTER_BYTES (8 * 1024 * 1024)

static mp_status charge(mpd_daemon *d, req_state *rs, size_t n, mp_error *err);

/* *req_cls of a request whose query had more arguments than any route takes (uri_seen): they were never parsed. */
static int many_args;

void mpd_config_defaults(mpd_config *cfg)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->listen_host, sizeof(cfg->listen_host), "127.0.0.1");
	cfg->listen_port = 8080;
	snprintf(cfg->db_path, sizeof(cfg->db_path), "%s", MPD_DEFAULT_DB);
	cfg->max_body_bytes = MPD_DEFAULT_MAX_BODY_BYTES;
	cfg->threads = n > 0 && n < 64 ? (unsigned int)n : 4;
	cfg->connection_timeout_seconds = 30;
	cfg->connection_limit = 1024;
	cfg->log_level = MPD_LOG_INFO;
	cfg->shutdown_timeout_seconds = 10;
	cfg->response_cache_bytes = MPD_DEFAULT_RESPONSE_CACHE_BYTES;
	cfg->k8s_headroom_floor_percent = 10;
	cfg->k8s_max_body_bytes = MPD_DEFAULT_K8S_MAX_BODY_BYTES;
	cfg->model_max_body_bytes = MPD_DEFAULT_MODEL_MAX_BODY_BYTES;
	cfg->header_timeout_seconds = 10;
	cfg->body_timeout_seconds = 60;
	cfg->send_timeout_seconds = 60;
	cfg->min_transfer_bytes_per_second = 4096;
	cfg->max_request_memory_bytes = MPD_DEFAULT_REQUEST_MEMORY_BYTES;
	cfg->hub_cache_bytes = MPD_DEFAULT_HUB_CACHE_BYTES;
	cfg->hub_timeout_seconds = 30;
}

mp_status mpd_parse_listen(const char *s, mpd_config *cfg, mp_error *err)
{
	const char *colon;
	char *end = NULL;
	size_t hostlen;
	long port;
	unsigned char buf[sizeof(struct in6_addr)];

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (close == NULL || close[1] != ':')
			goto bad;
		hostlen = (size_t)(close - s - 1);
		s++;
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL)
			goto bad;
		hostlen = (size_t)(colon - s);
	}
	if (hostlen == 0 || hostlen >= sizeof(cfg->listen_host))
		goto bad;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port < 0 || port > 65535)
		goto bad;
	memcpy(cfg->listen_host, s, hostlen);
	cfg->listen_host[hostlen] = '\0';
	if (inet_pton(AF_INET, cfg->listen_host, buf) != 1 && inet_pton(AF_INET6, cfg->listen_host, buf) != 1)
		goto bad;
	cfg->listen_port = (uint16_t)port;
	return MP_OK;
bad:
	return mp_fail(err, MP_EINVAL, "--listen",
		       "--listen takes ADDRESS:PORT with a numeric address, e.g. 127.0.0.1:8080 or [::1]:8080");
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) * 1e-9;
}

static const char *termination_name(enum MHD_RequestTerminationCode toe)
{
	switch (toe) {
	case MHD_REQUEST_TERMINATED_COMPLETED_OK: return NULL;
	case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "timeout";
	case MHD_REQUEST_TERMINATED_CLIENT_ABORT: return "client_abort";
	case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "daemon_shutdown";
	case MHD_REQUEST_TERMINATED_READ_ERROR: return "read_error";
	default: return "error";
	}
}

/* The remote address of conn as text, into buf ("" when unknown). */
static const char *remote_of(struct MHD_Connection *conn, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	buf[0] = '\0';
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf, (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf, (socklen_t)len);
	return buf;
}

/* First call for a request: per-request state, the clock, in-flight + 1. */
static req_state *request_begin(mpd_daemon *d, const char *method, const char *url)
{
	req_state *rs = calloc(1, sizeof(*rs));

	if (rs == NULL)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &rs->start);
	rs->route = "unmatched";
	snprintf(rs->method, sizeof(rs->method), "%s", method);
	/* as it came (the log writes an ill-formed byte as \xNN: log.c), cut at a character, not inside one: a node
	 * name's path is up to 264 bytes */
	{
		size_t n = strlen(url);

		if (n >= sizeof(rs->path))
			for (n = sizeof(rs->path) - 1; n > 0 && ((unsigned char)url[n] & 0xC0) == 0x80; n--)
				;
		memcpy(rs->path, url, n);
		rs->path[n] = '\0';
	}
	if (d->metrics)
		mpd_metrics_request_begin(d->metrics);
	return rs;
}

#ifdef __GLIBC__
/* Freed heap memory back to the system (glibc's malloc_trim: every arena's free pages). */
static void trim_memory(void *unused)
{
	(void)unused;
	malloc_trim(0);
}
#endif

/* Completion callback: counts and logs the request, then frees its state. */
static void completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
	mpd_daemon *d = cls;
	req_state *rs = *req_cls;
	char remote[INET6_ADDRSTRLEN];
	mpd_access a;

	if (rs == NULL || *req_cls == (void *)&many_args) /* answered by libmicrohttpd before the handler ran */
		return;
	memset(&a, 0, sizeof(a));
	a.method = rs->method;
	a.path = rs->path;
	a.route = rs->route;
	a.status = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? rs->status : 0;
	a.duration_seconds = seconds_since(&rs->start);
	a.request_bytes = rs->received;
	a.remote = remote_of(conn, remote, sizeof(remote));
	a.termination = termination_name(toe);
	if (d->guard) /* the next request's headers are on their deadline */
		mpd_guard_request_done(d->guard, MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context);
	if (rs->heavy) /* a request that ended before its answer was computed */
		atomic_fetch_sub(&d->heavy_in_flight, 1);
	if (d->metrics)
		mpd_metrics_request_end(d->metrics, rs->route, rs->method, a.status, a.duration_seconds);
	mpd_log_access((mpd_log_level)d->cfg.log_level, &a);
	free(rs->body);
	mpc_k8s_stream_free(rs->k8s);
	if (d->budget)
		mpd_budget_give(d->budget, rs->remote, rs->charged);
#ifdef __GLIBC__
	/* the freed memory back to the system once no large request is in flight (a trim while another still held
	 * its buffers would leave theirs to the heap when they end) */
	if (rs->peak >= TRIM_AFTER_BYTES)
		atomic_store(&d->trim_pending, true);
	if (atomic_load(&d->trim_pending) && (d->budget == NULL || mpd_budget_used(d->budget) < TRIM_AFTER_BYTES) &&
	    atomic_exchange(&d->trim_pending, false) && (d->lane == NULL || !mpd_lane_submit(d->lane, trim_memory, NULL)))
		trim_memory(NULL); /* (on the heavy lane, at its lower priority: it walks every heap, not this worker's) */
#endif
	free(rs);
	*req_cls = NULL;
}

/* Appends an upload chunk, keeping a NUL after the data; marks the request too large past the cap. */
static bool append(req_state *rs, const char *data, size_t n, size_t max)
{
	if (rs->too_large || n > max - rs->len) {
		rs->too_large = true;
		return true;
	}
	if (rs->len + n + 1 > rs->cap) {
		size_t cap = rs->cap ? rs->cap : rs->expect >= rs->len + n ? rs->expect + 1 : 4096;
		char *p;

		while (cap < rs->len + n + 1)
			cap *= 2;
		p = realloc(rs->body, cap);
		if (p == NULL)
			return false;
		rs->body = p;
		rs->cap = cap;
	}
	memcpy(rs->body + rs->len, data, n);
	rs->len += n;
	rs->body[rs->len] = '\0';
	return true;
}

static enum MHD_Result fail_now(struct MHD_Connection *conn, req_state *rs, mp_status st, int http,
				const char *field, const char *msg, const char *allow)
{
	mpd_reply rep;

	memset(&rep, 0, sizeof(rep));
	rep.http_status = http;
	mp_fail(&rep.err, st, field, "%s", msg);
	rs->status = http;
	return mpd_reply_send(conn, st, &rep, allow) == MHD_YES ? MHD_YES : MHD_NO;
}

/* A framing error: answered, then the connection closed (RFC 9112 section 6.1: after a message whose length cannot
 * be trusted, the bytes that follow must not be read as another request). */
static enum MHD_Result refuse_framing(struct MHD_Connection *conn, req_state *rs, mp_status st, int http,
				      const char *field, const char *msg)
{
	mpd_reply rep;

	memset(&rep, 0, sizeof(rep));
	rep.http_status = http;
	rep.close = true;
	mp_fail(&rep.err, st, field, "%s", msg);
	rs->status = http;
	return mpd_reply_send(conn, st, &rep, NULL) == MHD_YES ? MHD_YES : MHD_NO;
}

/*
 * The request's head, checked before anything of it is used (framing.h): its framing (what libmicrohttpd 0.9.75
 * lets through; the rest it refuses itself, see README "HTTP") and, without a token, its Host (DNS rebinding). Each
 * refusal closes the connection. MHD_YES with rs->status still 0 when all is well.
 */
static enum MHD_Result check_head(const mpd_daemon *d, struct MHD_Connection *conn, req_state *rs, const char *version)
{
	mp_error e = MP_ERROR_INIT;
	int http = 400;
	mp_status st = mpd_framing_check(conn, version, &http, &e);

	if (st == MP_OK && (st = mpd_host_check(&d->cfg, conn, &e)) != MP_OK)
		http = 403;
	if (st != MP_OK)
		return refuse_framing(conn, rs, st, http, e.field, e.message);
	return MHD_YES;
}

/*
 * The media type of a Content-Type value: the part before any ';', without surrounding blanks, compared
 * case-insensitively (RFC 9110 section 8.3.1). JSON bodies come as application/json; PATCH also takes
 * application/merge-patch+json (RFC 7396). No Content-Type is refused too: the API documents none.
 */
static bool json_media_type(const char *ct, bool patch)
{
	static const char json[] = "application/json", merge[] = "application/merge-patch+json";
	size_t n;

	if (ct == NULL)
		return false;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	n = strcspn(ct, ";");
	while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
		n--;
	if (n == sizeof(json) - 1 && strncasecmp(ct, json, n) == 0)
		return true;
	return patch && n == sizeof(merge) - 1 && strncasecmp(ct, merge, n) == 0;
}

/* The declared Content-Length when it is a plain decimal number; false when absent or malformed. */
static bool content_length(struct MHD_Connection *conn, unsigned long long *out)
{
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	char *end = NULL;

	if (v == NULL || *v < '0' || *v > '9')
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno == 0 && end != v;
}

typedef struct query_check {
	const char *allowed;	/* the route's query names, space-separated ("" = none) */
	char bad[MP_POINTER_MAX - 1];	/* the first name not in the list, or "" (with "?", a whole error field) */
	bool twice;		/* bad is a known name given more than once (?a=1&a=2: which one?) */
	const char *seen[32];	/* the known names so far that may be given once (libmicrohttpd's strings, alive for
				   the request); a route takes fewer */
	size_t nseen;
} query_check;

/* Whether name is in the space-separated list, where "name*" marks one that may be given more than once
 * (repeatable: set to whether it was so marked; may be NULL). */
static bool in_list_ex(const char *list, const char *name, bool *repeatable)
{
	size_t n = strlen(name);

	for (const char *p = list; *p;) {
		size_t w = strcspn(p, " ");

		if ((w == n || (w == n + 1 && p[n] == '*')) && strncmp(p, name, n) == 0) {
			if (repeatable)
				*repeatable = w == n + 1;
			return true;
		}
		p += w;
		p += strspn(p, " ");
	}
	return false;
}

static bool in_list(const char *list, const char *name)
{
	return in_list_ex(list, name, NULL);
}

static enum MHD_Result check_query_name(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	query_check *q = cls;
	bool repeatable = false;

	(void)kind;
	(void)value;
	if (key == NULL)
		return MHD_YES;
	if (in_list_ex(q->allowed, key, &repeatable) || strcmp(key, "pretty") == 0) { /* pretty: every route */
		for (size_t i = 0; i < q->nseen && !repeatable; i++)
			if (strcmp(q->seen[i], key) == 0) {
				q->twice = true;
				snprintf(q->bad, sizeof(q->bad), "%s", key); /* a known name: plain text already */
				return MHD_NO;
			}
		if (!repeatable && q->nseen < sizeof(q->seen) / sizeof(q->seen[0]))
			q->seen[q->nseen++] = key;
		return MHD_YES;
	}
	mpc_utf8_sanitize(q->bad, sizeof(q->bad), key[0] ? key : "(empty)");
	for (char *p = q->bad; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7F) /* control characters (a %00 comes as DEL) */
			*p = '?';
	return MHD_NO;
}

/*
 * libmicrohttpd's unescaping of the path and query arguments, except that %00 becomes %7F (DEL) instead of
 * a NUL that would silently end the string ("/v1/devices/a%00b" would read "a"). DEL is in no id, name or
 * number, so such a path id or argument is refused like any other malformed one.
 */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	for (char *p = strchr(s, '%'); p; p = strchr(p + 1, '%'))
		if (p[1] == '0' && p[2] == '0') {
			p[1] = '7';
			p[2] = 'F';
		}
	return MHD_http_unescape(s);
}

/* 413 for a body over the cap; NO (close the connection) when a response cannot be queued at this point. */
static enum MHD_Result too_large(struct MHD_Connection *conn, req_state *rs, size_t max)
{
	char msg[128];

	rs->too_large = true;
	snprintf(msg, sizeof(msg), "the request body exceeds the limit of %zu bytes", max);
	return fail_now(conn, rs, MP_ETOOLARGE, 413, "", msg, NULL);
}

typedef struct query_key {
	char buf[MPD_MAX_URL_BYTES + 256];
	size_t len;
	bool too_long;
} query_key;

/* Appends one query argument as "<len>:<name><len>:<value>" (length-prefixed: no two argument lists collide). */
static enum MHD_Result add_query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	query_key *q = cls;
	size_t room = sizeof(q->buf) - q->len;
	int n;

	(void)kind;
	n = snprintf(q->buf + q->len, room, "%zu:%s%zu:%s", strlen(key), key, value ? strlen(value) : 0,
		     value ? value : "");
	if (n < 0 || (size_t)n >= room) {
		q->too_long = true;
		return MHD_NO;
	}
	q->len += (size_t)n;
	return MHD_YES;
}

/*
 * Runs the route's handler, or answers from the response cache (respcache.h) for a pure route whose body (POST)
 * or query arguments (GET) were answered before at the store's current generation. A fresh 200 JSON answer of a
 * pure route is printed here (the bytes the reply writer would print) and kept, unless the store moved while it
 * was computed.
 */
/* The route's handler. When cJSON ran out of memory anywhere in it (codec/mpc_json.h counts), the answer may be
 * incomplete: none is sent, and the status is MP_ENOMEM whatever the handler said. */
static mp_status run_handler(const mpd_route *route, mpd_request *req, mpd_reply *rep)
{
	unsigned long failed = mpc_alloc_failures();
	mp_status st = route->handler(req, rep);

	if (mpc_alloc_failures() == failed || st == MP_ENOMEM)
		return st;
	free(rep->text);
	rep->text = NULL;
	if (rep->stream_free)
		rep->stream_free(rep->stream_ctx);
	rep->stream_read = NULL;
	rep->stream_free = NULL;
	rep->stream_ctx = NULL;
	rep->http_status = 0;
	rep->location[0] = '\0';
	return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
}

/* A slot for a HEAVY route's computation; MP_EOVERLOADED (503, Retry-After) when every one is taken. */
static mp_status take_heavy_slot(mpd_daemon *d, req_state *rs, mpd_reply *rep)
{
	unsigned int now = atomic_fetch_add(&d->heavy_in_flight, 1);

	if (now >= d->heavy_limit) {
		atomic_fetch_sub(&d->heavy_in_flight, 1);
		rep->retry_after = 1;
		return mp_fail(&rep->err, MP_EOVERLOADED, "",
			       "%u fit or capacity computations are in flight, the daemon's limit "
			       "(--max-heavy-requests); retry after a second, or ask again with what was answered "
			       "before (repeated requests are answered from the response cache)",
			       d->heavy_limit);
	}
	rs->heavy = true;
	return MP_OK;
}

/* A streamed answer's heavy slot, given back when the last byte has been produced (or the stream is dropped), so a
 * client that asks again as soon as it has the answer finds the slot free. */
typedef struct slot_stream {
	mpd_daemon *d;
	bool held;
	ssize_t (*read)(void *ctx, char *buf, size_t max);
	void (*free)(void *ctx);
	void *ctx;
} slot_stream;

static void slot_give_back(slot_stream *s)
{
	if (s->held)
		atomic_fetch_sub(&s->d->heavy_in_flight, 1);
	s->held = false;
}

static ssize_t slot_read(void *ctx, char *buf, size_t max)
{
	slot_stream *s = ctx;
	ssize_t n = s->read(s->ctx, buf, max);

	if (n <= 0)
		slot_give_back(s);
	return n;
}

static void slot_free(void *ctx)
{
	slot_stream *s = ctx;

	slot_give_back(s);
	s->free(s->ctx);
	free(s);
}

/* After a HEAVY route's handler: the slot goes back now for a computed answer, at the stream's end for a streamed
 * one (kept until completion only when no memory was left to wrap the stream). */
static void heavy_done(mpd_daemon *d, req_state *rs, mpd_reply *rep)
{
	slot_stream *s;

	if (!rs->heavy)
		return;
	if (rep->stream_read == NULL || rep->stream_ready || (s = calloc(1, sizeof(*s))) == NULL) {
		if (rep->stream_read == NULL || rep->stream_ready) {
			atomic_fetch_sub(&d->heavy_in_flight, 1);
			rs->heavy = false;
		}
		return;
	}
	s->d = d;
	s->held = true;
	s->read = rep->stream_read;
	s->free = rep->stream_free;
	s->ctx = rep->stream_ctx;
	rep->stream_read = slot_read;
	rep->stream_free = slot_free;
	rep->stream_ctx = s;
	rs->heavy = false;
}

/*
 * A streamed answer of a pure route, copied as it passes until it grows past what the response cache keeps (an
 * eighth of its bound): complete and unchanged store, it is kept under its key at the end of the stream, as a
 * whole answer would be.
 */
typedef struct tee {
	mpd_daemon *d;
	unsigned route;
	char *key;
	size_t klen;
	uint64_t gen;
	char *copy;
	size_t len, cap, limit;
	bool dropped;			/* grew past the limit, or no memory: not kept */
	ssize_t (*read)(void *ctx, char *buf, size_t max);
	void (*free)(void *ctx);
	void *ctx;
} tee;

static ssize_t tee_read(void *ctx, char *buf, size_t max)
{
	tee *t = ctx;
	ssize_t n = t->read(t->ctx, buf, max);

	if (n > 0 && !t->dropped) {
		size_t want = t->len + (size_t)n;

		if (want > t->limit) {
			t->dropped = true;
		} else {
			if (want > t->cap) {
				size_t cap = t->cap ? t->cap : 65536;
				char *p;

				while (cap < want)
					cap *= 2;
				p = realloc(t->copy, cap);
				if (p == NULL) {
					t->dropped = true;
					return n;
				}
				t->copy = p;
				t->cap = cap;
			}
			memcpy(t->copy + t->len, buf, (size_t)n);
			t->len = want;
		}
	}
	if (n == 0 && !t->dropped && t->len > 0 &&
	    mps_generation(t->d->svc) == t->gen)
		mpd_respcache_put(t->d->respcache, t->route, t->key, t->klen, t->gen, t->copy, t->len);
	return n;
}

static void tee_free(void *ctx)
{
	tee *t = ctx;

	t->free(t->ctx);
	free(t->copy);
	free(t->key);
	free(t);
}

/* Wraps rep's stream in a tee; leaves it as it is (not kept) when the key is too large or memory runs out. */
static void tee_stream(mpd_daemon *d, unsigned route, const char *key, size_t klen, uint64_t gen, mpd_reply *rep)
{
	size_t limit = d->cfg.response_cache_bytes / 8;
	tee *t;

	if (klen > d->cfg.response_cache_bytes / 4 || (t = calloc(1, sizeof(*t))) == NULL)
		return;
	if ((t->key = malloc(klen ? klen : 1)) == NULL) {
		free(t);
		return;
	}
	memcpy(t->key, key, klen);
	t->d = d;
	t->route = route;
	t->klen = klen;
	t->gen = gen;
	t->limit = limit;
	t->read = rep->stream_read;
	t->free = rep->stream_free;
	t->ctx = rep->stream_ctx;
	rep->stream_read = tee_read;
	rep->stream_free = tee_free;
	rep->stream_ctx = t;
}

/* What dispatch_begin found for dispatch_end: the request's key in the response cache, when its route is cached. */
typedef struct dispatch_state {
	unsigned key;			/* the route's index */
	uint64_t gen;			/* the store's generation the answer is computed at */
	const char *kb;			/* the key's bytes: the body (POST) or the query (GET, q->buf) */
	size_t klen;
	query_key *q;			/* heap, a GET's query as a key */
	bool cached;			/* the route's answers are looked up and kept */
} dispatch_state;

/*
 * Before the handler: a pure route's answer from the response cache (a hit answers now: *run false), and a heavy
 * route's slot (none free: MP_EOVERLOADED, *run false). With *run true the handler is to run (run_handler), here or
 * on the heavy lane, then dispatch_end.
 */
static mp_status dispatch_begin(mpd_daemon *d, const mpd_route *route, mpd_request *req, mpd_reply *rep,
				req_state *rs, dispatch_state *c, bool *run)
{
	char *text;
	mp_status st;

	memset(c, 0, sizeof(*c));
	c->key = (unsigned)(route - mpd_routes);
	c->kb = req->body;
	c->klen = req->body_len;
	*run = true;
	/* text for people is computed each time: the cache holds JSON answers, keyed without ?format */
	c->cached = d->respcache && d->svc && !req->text && (route->flags & MPD_ROUTE_PURE);
	if (c->cached && strcmp(route->method, "GET") == 0) { /* a GET's question is its query arguments */
		c->q = malloc(sizeof(*c->q));
		if (c->q) {
			c->q->len = 0;
			c->q->too_long = false;
			c->q->buf[0] = '\0';
			MHD_get_connection_values((struct MHD_Connection *)req->conn, MHD_GET_ARGUMENT_KIND, add_query_arg,
						  c->q);
		}
		if (c->q == NULL || c->q->too_long) { /* not kept: computed */
			free(c->q);
			c->q = NULL;
			c->cached = false;
		} else {
			c->kb = c->q->buf;
			c->klen = c->q->len;
		}
	}
	if (c->cached) {
		c->gen = mps_generation(d->svc);
		text = mpd_respcache_get(d->respcache, c->key, c->kb, c->klen, c->gen, NULL);
		if (text) {
			rep->text = text;
			rep->text_type = "application/json";
			*run = false;
			free(c->q); /* (no dispatch_end follows) */
			c->q = NULL;
			return MP_OK;
		}
	}
	if ((route->flags & MPD_ROUTE_HEAVY) && (st = take_heavy_slot(d, rs, rep)) != MP_OK) {
		*run = false;
		free(c->q);
		c->q = NULL;
		return st;
	}
	return MP_OK;
}

/* After the handler (st its status): the heavy slot given back (the answer is computed), a write's emptying of the
 * cache, a fresh 200 JSON answer of a pure route printed (the bytes the reply writer would print) and kept, unless
 * the store moved while it was computed. Returns st. */
static mp_status dispatch_end(mpd_daemon *d, const mpd_route *route, mpd_reply *rep, req_state *rs,
			      dispatch_state *c, mp_status st)
{
	char *text;

	heavy_done(d, rs, rep);
	if (d->respcache && d->svc && (route->flags & MPD_ROUTE_WRITE)) /* now, not at the next lookup */
		mpd_respcache_sync(d->respcache, mps_generation(d->svc));
	if (!c->cached)
		goto out;
	if (st == MP_OK && rep->stream_read) { /* streamed: kept at its end when it is small enough */
		if (rep->text_type && strcmp(rep->text_type, "application/json") == 0)
			tee_stream(d, c->key, c->kb, c->klen, c->gen, rep);
		goto out;
	}
	/* only JSON answers are kept (codec's writer wrote them); text for people (?format=text) is another key,
	 * computed each time; an answer that rests on more than the body and the store (no_store) is never kept */
	if (st != MP_OK || rep->no_store || (rep->http_status != 0 && rep->http_status != 200))
		goto out;
	if (rep->text != NULL && rep->text_type && strcmp(rep->text_type, "application/json") == 0) {
		text = rep->text;
	} else {
		goto out;
	}
	if (mps_generation(d->svc) == c->gen)
		mpd_respcache_put(d->respcache, c->key, c->kb, c->klen, c->gen, text, strlen(text));
out:
	free(c->q);
	c->q = NULL;
	return st;
}

/* The answer's bytes as libmicrohttpd takes them (reply.c), for the send deadline's rate. */
static void sent_bytes(void *ctx, size_t n)
{
	req_state *rs = ctx;

	mpd_guard_moved(rs->guard, rs->socket_context, n);
}

/* Sends an answer now (an error's or a handler's); remembers the status sent. The send deadline starts (guard.h). */
static enum MHD_Result reply_error(struct MHD_Connection *conn, req_state *rs, mp_status st, mpd_reply *rep)
{
	enum MHD_Result ret;

	if (rs->guard) {
		mpd_guard_sending(rs->guard, rs->socket_context, st == MP_OK && rep->text ? strlen(rep->text) : rep->stream_length);
		rep->progress = sent_bytes;
		rep->progress_ctx = rs;
	}
	if (rs->fresh) /* the fresh lane serves one request per connection: the next one goes to the main daemon */
		rep->close = true;
	ret = mpd_reply_send(conn, st, rep, NULL) == MHD_YES ? MHD_YES : MHD_NO;

	rs->status = rep->http_status;
	return ret;
}

/*
 * libmicrohttpd's URI log callback, called with the request target before it parses the query arguments into the
 * connection's memory (MHD_OPTION_URI_LOG_CALLBACK; its return value is the request's first *req_cls). More than
 * MPD_MAX_QUERY_ARGS arguments would not fit in the 16 KiB pool: libmicrohttpd 0.9.75 then closes the connection
 * without an answer. So the query is cleared (in libmicrohttpd's own buffer, which it parses next) and the request
 * marked, to be answered 414 in problem+json.
 */
static void *uri_seen(void *cls, const char *uri, struct MHD_Connection *conn)
{
	char *q = strchr(uri, '?');
	size_t n = 1;

	(void)cls;
	(void)conn;
	if (q == NULL)
		return NULL;
	for (const char *p = q; *p; p++)
		n += *p == '&';
	if (n <= MPD_MAX_QUERY_ARGS)
		return NULL;
	memset(q, 0, strlen(q));
	return &many_args;
}

/* The first call for a request, with the headers complete: per-request state, the route (so a request cut off
 * mid-body is logged under it), the head checked (framing, Host), a write's token (before libmicrohttpd would send
 * 100 Continue for its body), and a declared body over the cap refused before it is read. */
static enum MHD_Result on_headers(mpd_daemon *d, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, void **req_cls)
{
	char idbuf[MPD_PATH_ID_MAX], allow[64];
	const char *id;
	const mpd_route *route;
	unsigned long long declared;
	bool many = *req_cls == &many_args;
	req_state *rs = request_begin(d, method, url);

	if (rs) {
		remote_of(conn, rs->remote, sizeof(rs->remote));
		rs->guard = d->guard;
		rs->socket_context = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context;
		rs->fresh = d->fresh && MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON)->daemon == d->fresh;
	}

	if (d->guard) /* the headers are in: this request met its deadline, its body's starts (guard.h) */
		mpd_guard_headers_done(d->guard, MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT)->socket_context,
				       content_length(conn, &declared) ? declared : 0);
	*req_cls = rs;
	if (rs == NULL)
		return MHD_NO;
	route = mpd_route_find(method, url, idbuf, sizeof(idbuf), &id, allow, sizeof(allow));
	if (route)
		rs->route = route->pattern;
	else if (allow[0] && mpd_route_pattern_of(url)) /* a 405: the path's route, not "unmatched" */
		rs->route = mpd_route_pattern_of(url);
	if (check_head(d, conn, rs, version) == MHD_NO || rs->status)
		return rs->status ? MHD_YES : MHD_NO;
	if (many) {
		char msg[160];

		snprintf(msg, sizeof(msg), "the query has more than %d arguments, more than any endpoint takes",
			 MPD_MAX_QUERY_ARGS);
		return refuse_framing(conn, rs, MP_ETOOLARGE, 414, "?", msg);
	}
	if (route && (route->flags & MPD_ROUTE_WRITE)) {
		mp_error e = MP_ERROR_INIT;
		mp_status st = mpd_auth_request(d, true, conn, &e); /* auth.h */

		if (st != MP_OK)
			return refuse_framing(conn, rs, st, mpd_http_status(st), e.field, e.message);
	}
	rs->flags = route ? route->flags : 0;
	rs->max_body = route && (route->flags & MPD_ROUTE_LARGE_BODY)   ? d->cfg.k8s_max_body_bytes
		       : route && (route->flags & MPD_ROUTE_MODEL_BODY) ? d->cfg.model_max_body_bytes
									: d->cfg.max_body_bytes;
	if (route && (route->flags & MPD_ROUTE_MODEL_BODY) && rs->max_body < d->cfg.max_body_bytes)
		rs->max_body = d->cfg.max_body_bytes;
	if (content_length(conn, &declared) && declared > rs->max_body)
		return too_large(conn, rs, rs->max_body);
	if (rs->flags & MPD_ROUTE_K8S_STREAM) {
		/* read as it arrives: the media type is judged before a byte of it is */
		mpc_k8s_limits lim;

		if (!json_media_type(MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE), false))
			return refuse_framing(conn, rs, MP_EINVAL, 415, "Content-Type",
					      "the request body must be JSON: send it with 'Content-Type: application/json' "
					      "(curl: -H 'Content-Type: application/json')");
		mpc_k8s_limits_default(&lim);
		rs->k8s = mpc_k8s_stream_new(&lim, route->handler == mpd_h_k8s_filter);
		if (rs->k8s == NULL)
			return MHD_NO;
	} else if (content_length(conn, &declared) && declared > 0) {
		/* a body held whole: its bytes are taken from the budget before it is read, refused at once when they do
		 * not fit */
		mp_error e = MP_ERROR_INIT;

		rs->expect = (size_t)declared;
		if (charge(d, rs, rs->expect + 1, &e) != MP_OK) {
			mpd_reply rep;

			memset(&rep, 0, sizeof(rep));
			rep.http_status = 503;
			rep.retry_after = 1;
			rep.close = true;
			rep.err = e;
			rs->status = 503;
			return mpd_reply_send(conn, MP_EOVERLOADED, &rep, NULL) == MHD_YES ? MHD_YES : MHD_NO;
		}
	}
	return MHD_YES;
}

/*
 * Takes n more bytes from the budget for the request (budget.h). MP_OK, or MP_EOVERLOADED in err saying which
 * bound it would pass (then nothing is taken).
 */
static mp_status charge(mpd_daemon *d, req_state *rs, size_t n, mp_error *err)
{
	mpd_budget_bound why = d->budget ? mpd_budget_take(d->budget, rs->remote, n) : MPD_BUDGET_OK;

	if (why == MPD_BUDGET_OK) {
		rs->charged += n;
		rs->peak = rs->charged > rs->peak ? rs->charged : rs->peak;
		return MP_OK;
	}
	if (why == MPD_BUDGET_TOTAL)
		return mp_fail(err, MP_EOVERLOADED, "",
			       "the daemon holds %zu of its %zu bytes for requests in flight (bodies being read, answers "
			       "being sent; --max-request-memory-bytes): this one would pass it; retry after a second",
			       mpd_budget_used(d->budget), mpd_budget_total(d->budget));
	return mp_fail(err, MP_EOVERLOADED, "",
		       "requests from %s hold %zu of the %zu bytes one client address may (--max-request-memory-bytes-"
		       "per-ip): this one would pass it; retry when they are answered",
		       rs->remote, mpd_budget_used_by(d->budget, rs->remote), mpd_budget_per_address(d->budget));
}

/* The request's budget brought to `held` bytes (what its buffers hold now): takes the growth. */
static mp_status charge_to(mpd_daemon *d, req_state *rs, size_t held, mp_error *err)
{
	return held > rs->charged ? charge(d, rs, held - rs->charged, err) : MP_OK;
}

/* A refusal found mid-body: memory let go now, the answer when the body ends (on_request). */
static void refuse_late(mpd_daemon *d, req_state *rs, mp_status st, int http, unsigned retry, const mp_error *e)
{
	rs->late = st;
	rs->late_http = http;
	rs->late_retry = retry;
	rs->late_err = *e;
	rs->late_err.all = NULL;
	mpc_k8s_stream_free(rs->k8s);
	rs->k8s = NULL;
	free(rs->body);
	rs->body = NULL;
	rs->len = rs->cap = 0;
	if (d->budget)
		mpd_budget_give(d->budget, rs->remote, rs->charged);
	rs->charged = 0;
}

/* A chunk of the body: an extender body fed to its decoder, any other kept below the cap; past the cap, answered
 * now (or the connection closed); past a decoder's limit or the budget, dropped from then on and answered at the
 * end. */
static enum MHD_Result on_body_chunk(mpd_daemon *d, struct MHD_Connection *conn, req_state *rs,
				     const char *upload_data, size_t *upload_data_size)
{
	size_t n = *upload_data_size;
	mp_error e = MP_ERROR_INIT;
	mp_status st;

	rs->received += n;
	*upload_data_size = 0;
	if (rs->guard) /* the body's transfer rate (guard.h) */
		mpd_guard_moved(rs->guard, rs->socket_context, n);
	if (rs->status || rs->late != MP_OK) /* answered already, or refused: the rest is read and dropped */
		return MHD_YES;
	if (rs->received > rs->max_body) /* (a chunked body: a declared one was refused with the headers) */
		return too_large(conn, rs, rs->max_body);
	if (rs->k8s) {
		st = mpc_k8s_stream_feed(rs->k8s, upload_data, n, &e);
		if (st == MP_OK)
			st = charge_to(d, rs, mpc_k8s_stream_held(rs->k8s), &e);
		if (st != MP_OK)
			refuse_late(d, rs, st, mpd_http_status(st), st == MP_EOVERLOADED ? 1 : 0, &e);
		return MHD_YES;
	}
	if (!append(rs, upload_data, n, rs->max_body))
		return MHD_NO;
	if (rs->too_large)
		return too_large(conn, rs, rs->max_body);
	if ((st = charge_to(d, rs, rs->cap, &e)) != MP_OK)
		refuse_late(d, rs, st, 503, 1, &e);
	return MHD_YES;
}

/* 422 naming a query argument the route does not take (MP_OK when every one is known). */
static mp_status check_query(struct MHD_Connection *conn, const mpd_route *route, mpd_reply *rep)
{
	query_check q = { route->query ? route->query : "", "", false, { NULL }, 0 };
	char field[MP_POINTER_MAX], names[512];
	size_t o = 0;

	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, check_query_name, &q);
	if (q.bad[0] == '\0')
		return MP_OK;
	if (q.twice) {
		snprintf(field, sizeof(field), "?%s", q.bad);
		rep->http_status = 422;
		return mp_fail(&rep->err, MP_EINVAL, field,
			       "query argument '%s' is given more than once; give it once (which value was meant is not "
			       "guessed)",
			       q.bad);
	}
	for (const char *p = q.allowed; *p && o + 3 < sizeof(names); p++) {
		if (*p == '*') /* the repeatable mark is the route table's, not a name */
			continue;
		if (*p == ' ')
			names[o++] = ',';
		names[o++] = *p;
	}
	names[o] = '\0';
	snprintf(field, sizeof(field), "?%s", q.bad);
	rep->http_status = 422;
	return mp_fail(&rep->err, MP_EINVAL, field, "unknown query argument '%s'; this endpoint takes %s%s%s", q.bad,
		       o ? "only: " : "", names, o ? ", pretty" : "only pretty");
}

/* ?pretty (every route: indented JSON) and ?format (the routes that list it: json or text) into rep and req. */
static mp_status read_format(struct MHD_Connection *conn, const mpd_route *route, mpd_request *req, mpd_reply *rep)
{
	const char *pretty = NULL;
	size_t pretty_len = 0;
	bool pretty_given = MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "pretty", 6, &pretty, &pretty_len) ==
			    MHD_YES;
	const char *format = route->query && in_list(route->query, "format")
				     ? MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "format")
				     : NULL;

	if (pretty_given) { /* "?pretty" and "?pretty=" say neither: refused, not guessed */
		if (pretty && (strcmp(pretty, "true") == 0 || strcmp(pretty, "1") == 0))
			rep->pretty = true;
		else if (pretty == NULL || (strcmp(pretty, "false") != 0 && strcmp(pretty, "0") != 0)) {
			rep->http_status = 422;
			return mp_fail(&rep->err, MP_EINVAL, "?pretty", "pretty must be true or false (1 or 0)");
		}
	}
	if (format && strcmp(format, "text") == 0)
		req->text = true;
	else if (format && strcmp(format, "json") != 0) {
		rep->http_status = 422;
		return mp_fail(&rep->err, MP_EINVAL, "?format", "format must be json or text (text: the answer for people)");
	}
	return MP_OK;
}

/* The route's policy, from its flags, before any handler runs (a write's token was checked with the headers): the
 * media type of a JSON body, the query arguments. MP_OK to go on; otherwise rep holds the answer. */
static mp_status admit(struct MHD_Connection *conn, const mpd_route *route, mpd_reply *rep)
{
	if (route->flags & MPD_ROUTE_JSON_BODY) {
		bool patch = (route->flags & MPD_ROUTE_MERGE_PATCH) != 0;
		const char *ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);

		if (!json_media_type(ct, patch)) {
			rep->http_status = 415;
			return mp_fail(&rep->err, MP_EINVAL, "Content-Type", "%s",
				       patch ? "the request body must be a JSON merge patch: send it with 'Content-Type: "
					       "application/merge-patch+json' or 'Content-Type: application/json'"
					     : "the request body must be JSON: send it with 'Content-Type: application/json' "
					       "(curl: -H 'Content-Type: application/json')");
		}
	}
	return check_query(conn, route, rep);
}

/* One request from its checks to its answer: on on_request's stack, or on the heap while the heavy lane computes
 * it (its connection suspended). */
typedef struct work {
	mpd_daemon *d;
	struct MHD_Connection *conn;
	req_state *rs;
	const mpd_route *route;
	const char *method;
	char idbuf[MPD_PATH_ID_MAX];	/* the {id} segment (req.path_id points here) */
	mpd_request req;
	mpd_reply rep;
	cJSON *body;
	mp_errors *all;
	mp_error fmt_err;		/* a bad ?format or ?pretty, answered with the handler's problems */
	mp_status fst, st;
	int fmt_http;
	dispatch_state c;
} work;

/* After the handler: the answer charged to the budget, a query problem merged in, logged when it is a 5xx, sent. */
static enum MHD_Result finish(work *w)
{
	mpd_daemon *d = w->d;
	mpd_reply *rep = &w->rep;
	mp_status st = w->st;
	enum MHD_Result ret;

	cJSON_Delete(w->body);
	w->body = NULL;
	if (w->req.k8s) { /* not taken by the handler's answer */
		mpc_k8s_args_free(w->req.k8s);
		free(w->req.k8s);
		w->req.k8s = NULL;
	}
	/* an answer held whole until it is sent counts in the budget of bytes in flight */
	if (st == MP_OK && rep->text) {
		mp_error e = MP_ERROR_INIT;

		if (charge(d, w->rs, strlen(rep->text), &e) != MP_OK) {
			free(rep->text);
			rep->text = NULL;
			rep->err = e;
			rep->retry_after = 1;
			rep->http_status = 0;
			st = MP_EOVERLOADED;
		}
	}
	if (w->fst != MP_OK && (st == MP_OK || st == MP_EINVAL)) {
		/* the answer it would have been is not sent: the query's problem (and the handler's, in rep.err.all) */
		free(rep->text);
		rep->text = NULL;
		if (st == MP_OK) {
			mp_errors *keep = rep->err.all;

			rep->err = w->fmt_err;
			rep->err.all = keep;
			rep->http_status = w->fmt_http;
		}
		st = MP_EINVAL;
	}
	if (st == MP_EDB && d->metrics)
		mpd_metrics_db_error(d->metrics);
	if (st != MP_OK && mpd_http_status(st) >= 500) /* an expected refusal under load is a warning */
		mpd_log((mpd_log_level)d->cfg.log_level, st == MP_EOVERLOADED ? MPD_LOG_WARN : MPD_LOG_ERROR,
			"%s %s: %s: %s", w->method, w->rs->path, mp_status_str(st), rep->err.message);
	ret = reply_error(w->conn, w->rs, st, rep);
	free(w->all);
	w->all = NULL;
	return ret;
}

/* On the heavy lane: the handler, then the slot back and the answer kept (dispatch_end); the connection resumed,
 * where on_request sends the answer (finish). */
static void compute(void *arg)
{
	work *w = arg;

	w->st = dispatch_end(w->d, w->route, &w->rep, w->rs, &w->c, run_handler(w->route, &w->req, &w->rep));
	MHD_resume_connection(w->conn);
}

/* The whole request is in: the route's checks, the body parsed once (strictly) for a JSON route, the handler (or
 * the response cache; a heavy route's handler on the heavy lane, its connection suspended meanwhile), the answer. */
static enum MHD_Result on_request(mpd_daemon *d, struct MHD_Connection *conn, req_state *rs, const char *url,
				  const char *method)
{
	work w;
	const char *id;
	char allow[64];
	const mpd_route *route;
	mpd_request *req = &w.req;
	mpd_reply *rep = &w.rep;
	mp_status st;
	enum MHD_Result ret;
	bool run;

	if (rs->work) { /* back from the heavy lane: its answer */
		work *h = rs->work;

		rs->work = NULL;
		ret = finish(h);
		free(h);
		return ret;
	}
	route = mpd_route_find(method, url, w.idbuf, sizeof(w.idbuf), &id, allow, sizeof(allow));
	if (route)
		rs->route = route->pattern;
	if (rs->status && !rs->too_large) /* answered when the headers came (a framing error) */
		return MHD_YES;
	if (rs->too_large)
		return too_large(conn, rs, rs->max_body);
	if (rs->late != MP_OK) { /* refused while the body arrived (on_body_chunk) */
		memset(rep, 0, sizeof(*rep));
		rep->http_status = rs->late_http;
		rep->retry_after = rs->late_retry;
		rep->close = true;
		rep->err = rs->late_err;
		return reply_error(conn, rs, rs->late, rep);
	}
	if (strlen(url) > MPD_MAX_URL_BYTES) {
		char msg[96];

		snprintf(msg, sizeof(msg), "the request path exceeds the limit of %d bytes", MPD_MAX_URL_BYTES);
		return fail_now(conn, rs, MP_ETOOLARGE, 414, "", msg, NULL);
	}
	if (route == NULL && allow[0]) {
		char msg[224];

		snprintf(msg, sizeof(msg), "%.16s is not allowed on %.64s; it takes %s (the Allow header)", method, url,
			 allow);
		return fail_now(conn, rs, MP_EINVAL, 405, "", msg, allow);
	}
	if (route == NULL)
		return fail_now(conn, rs, MP_ENOTFOUND, 404, "", "no such endpoint; GET /openapi.yaml lists them",
				NULL);
	if (rs->guard) /* the body is in: computing now (no transfer deadline) */
		mpd_guard_working(rs->guard, rs->socket_context);
	memset(rep, 0, sizeof(*rep));
	memset(req, 0, sizeof(*req));
	w.d = d;
	w.conn = conn;
	w.rs = rs;
	w.route = route;
	w.method = method;
	w.body = NULL;
	w.fmt_err = (mp_error)MP_ERROR_INIT;
	w.fmt_http = 0;
	w.st = MP_OK;
	st = admit(conn, route, rep);
	if (st != MP_OK)
		return reply_error(conn, rs, st, rep);
	/* the decoders record every problem of the request here, so one 422 names them all (without it: the first) */
	w.all = malloc(sizeof(*w.all));
	if (w.all) {
		w.all->n = w.all->dropped = 0;
		rep->err.all = w.all;
	}
	/* a bad ?format or ?pretty is one problem among the others: a pure route still decodes the rest (its handler
	 * has no effects), and the answer is the 422 naming them all */
	w.fst = mp_error_keep(&rep->err, read_format(conn, route, req, rep));
	if (w.fst != MP_OK) {
		w.fmt_err = rep->err;
		w.fmt_http = rep->http_status;
		if (!(route->flags & MPD_ROUTE_PURE)) {
			ret = reply_error(conn, rs, w.fst, rep);
			free(w.all);
			return ret;
		}
		rep->http_status = 0;
	}
	req->d = d;
	req->method = method;
	req->path = url;
	req->path_id = id;
	req->body = rs->body ? rs->body : "";
	req->body_len = rs->len;
	req->conn = conn;
	rep->cacheable = strcmp(route->method, "GET") == 0;
	if (rs->k8s) { /* an extender body, read as it came: its decoded arguments */
		req->k8s = calloc(1, sizeof(*req->k8s));
		st = req->k8s ? mpc_k8s_stream_finish(rs->k8s, req->k8s, &rep->err)
			      : mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
		mpc_k8s_stream_free(rs->k8s);
		rs->k8s = NULL;
		if (st != MP_OK) {
			free(req->k8s);
			ret = reply_error(conn, rs, st, rep);
			free(w.all);
			return ret;
		}
	} else if (route->flags & MPD_ROUTE_JSON_BODY) {
		/* one strict parse for every JSON route: a malformed body never reaches a handler */
		st = mpc_parse_body(req->body, req->body_len, &w.body, &rep->err);
		if (st != MP_OK) {
			ret = reply_error(conn, rs, st, rep);
			free(w.all);
			return ret;
		}
		req->json = w.body;
	}
	w.st = dispatch_begin(d, route, req, rep, rs, &w.c, &run);
	if (run && d->lane && (route->flags & MPD_ROUTE_HEAVY)) {
		work *h = malloc(sizeof(*h));

		if (h) { /* computed on the heavy lane; this worker serves its other connections meanwhile */
			memcpy(h, &w, sizeof(*h));
			if (id)
				h->req.path_id = h->idbuf;
			rs->work = h;
			MHD_suspend_connection(conn);
			if (!mpd_lane_submit(d->lane, compute, h))
				compute(h); /* (stopping, or no memory to queue it: computed here, resumed all the same) */
			return MHD_YES;
		}
	}
	if (run)
		w.st = dispatch_end(d, route, rep, rs, &w.c, run_handler(route, req, rep));
	return finish(&w);
}

/* libmicrohttpd's access handler: called when the headers are complete, for each chunk of the body, and once
 * the body is complete. */
static enum MHD_Result access_cb(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				 const char *version, const char *upload_data, size_t *upload_data_size,
				 void **req_cls)
{
	mpd_daemon *d = cls;

	if (*req_cls == NULL || *req_cls == &many_args)
		return on_headers(d, conn, url, method, version, req_cls);
	if (*upload_data_size > 0)
		return on_body_chunk(d, conn, *req_cls, upload_data, upload_data_size);
	return on_request(d, conn, *req_cls, url, method);
}

/* libmicrohttpd's connection start and end, for the header deadline (guard.h). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	mpd_daemon *d = cls;
	const union MHD_ConnectionInfo *di = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_DAEMON);

	if (d->fresh && di && di->daemon == d->fresh && code == MHD_CONNECTION_NOTIFY_CLOSED)
		atomic_fetch_sub(&d->fresh_open, 1); /* (taken by the accept path) */
	if (d->guard == NULL)
		return;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		char remote[INET6_ADDRSTRLEN];

		if (ci)
			mpd_guard_opened(d->guard, ci->connect_fd, remote_of(conn, remote, sizeof(remote)), socket_context);
	} else {
		mpd_guard_closed(d->guard, socket_context);
	}
}

/* libmicrohttpd's own errors (oversize headers, socket errors) as JSON log lines at warn. */
static void mhd_logger(void *cls, const char *fmt, va_list ap)
{
	const mpd_daemon *d = cls;
	/* a client's own disconnect (or the guard's cut) is routine: at debug, so an attack cannot flood the log;
	 * connections cut are counted in memplan_http_connections_cut_total */
	bool routine = strncmp(fmt, "Connection socket is closed", 27) == 0 ||
		       strncmp(fmt, "Socket has been disconnected", 28) == 0 ||
		       strncmp(fmt, "Server reached connection limit", 31) == 0;

	mpd_vlog((mpd_log_level)d->cfg.log_level, routine ? MPD_LOG_DEBUG : MPD_LOG_WARN, fmt, ap);
}

/* The accept path's hard cap (accept.h): --max-connections and room for the connections just cut to make room, which
 * libmicrohttpd closes on its next turn. libmicrohttpd's own limit is four times that: it must never be reached by
 * a connection handed to it (0.9.75 then leaves a mutex locked, accept.c), and each worker holds a share of it. */
#define CONNECTION_SLACK(limit) ((limit) + (limit) / 4 + 16)
#define MHD_CONNECTION_LIMIT(limit) (4 * CONNECTION_SLACK(limit) + 64)
/* Connections the fresh lane holds at once (accept.h): each is one first request being read, computed or sent. The
 * lane takes what comes while the daemon is under pressure, a busy client's reconnections too (after its first
 * answer a fresh connection is closed, and its client connects again): it holds more than the connections the
 * main daemon does not take past the pressure mark (an eighth of the limit), so a newcomer still finds room. */
#define FRESH_LANE_CONNECTIONS(limit) ((limit) / 4 + 64)

/* A listening socket on addr (SO_REUSEADDR, the kernel's largest accept queue); -1 with errno on failure. */
static int listen_on(const struct sockaddr *addr, socklen_t len)
{
	int fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, addr, len) != 0 || listen(fd, SOMAXCONN) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/*
 * Raises the soft open-file limit (RLIMIT_NOFILE) toward what --max-connections needs, one descriptor per
 * connection plus a margin for the database, the log and libraries, as far as the hard limit allows. Below that
 * the connections beyond the limit would be refused: says so at warn, naming the figure to raise.
 */
static void open_file_limit(const mpd_daemon *d)
{
	const rlim_t want = (rlim_t)CONNECTION_SLACK(d->cfg.connection_limit) + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < want)
		mpd_log((mpd_log_level)d->cfg.log_level, MPD_LOG_WARN,
			"the open-file limit (%llu) holds fewer than --max-connections %u connections; raise it "
			"(ulimit -n, or LimitNOFILE= in the systemd unit) to at least %llu",
			(unsigned long long)rl.rlim_cur, d->cfg.connection_limit, (unsigned long long)want);
}

/* The --node-labels pairs ("Hostname=n1,gpu=0,UUID=GPU-...,modelName=NVIDIA H200") as labels after lab[0..n),
 * pointing into buf (a copy); returns the new count. The setting was checked when it was read (config.c). */
static size_t node_labels(const char *setting, char *buf, size_t len, mpd_label *lab, size_t n, size_t cap)
{
	char *p = buf;

	snprintf(buf, len, "%s", setting);
	while (*p && n < cap) {
		char *eq = strchr(p, '='), *comma;

		if (eq == NULL)
			break;
		*eq = '\0';
		comma = strchr(eq + 1, ',');
		if (comma)
			*comma = '\0';
		lab[n].name = p;
		lab[n++].value = eq + 1;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return n;
}

/* A stored measured profile's figures as gauges: the latest run wins (errors are ignored: metrics never fail a
 * run). With --node-labels, each also carries this node's DCGM-aligned labels (Hostname, gpu, UUID, modelName), so
 * a dashboard sets the measured bandwidth beside DCGM's figures of the same GPU. Called on the calibration worker's
 * thread. */
static void publish_profile(void *ctx, const mp_store_device *p)
{
	mpd_daemon *d = ctx;
	mpd_metrics *m = d ? d->metrics : NULL;
	char buf[sizeof(d->cfg.node_labels)];
	mpd_label lab[12];
	size_t n;
	mp_error e = MP_ERROR_INIT;

	if (m == NULL)
		return;
	lab[0].name = "device";
	lab[0].value = p->id;
	n = node_labels(d->cfg.node_labels, buf, sizeof(buf), lab, 1, 11);
	mpd_metrics_gauge_set(m, "memplan_calibration_memory_bandwidth_bytes_per_second",
			      "Best memory bandwidth the latest calibration measured.", lab, n,
			      p->hw.memory_bandwidth_bytes_per_second, &e);
	if (p->hw.usable_memory_bytes)
		mpd_metrics_gauge_set(m, "memplan_calibration_usable_memory_bytes",
				      "Usable memory the latest calibration found (cudaMemGetInfo total).", lab, n,
				      (double)p->hw.usable_memory_bytes, &e);
	if (p->linked_device_id[0]) {
		mpd_label info[13];

		memcpy(info, lab, n * sizeof(*lab));
		info[n].name = "datasheet_device";
		info[n].value = p->linked_device_id;
		mpd_metrics_gauge_set(m, "memplan_calibration_info",
				      "1 for the latest calibration: the measured profile and its datasheet profile (with "
				      "--node-labels, the GPU's DCGM labels).",
				      info, n + 1, 1, &e);
	}
	for (int t = 1; t < MP_DTYPE_COUNT; t++) {
		if (!(p->hw.peak_flops_per_second[t] > 0))
			continue;
		lab[n].name = "dtype";
		lab[n].value = mp_dtype_name((mp_dtype)t);
		mpd_metrics_gauge_set(m, "memplan_calibration_peak_flops_per_second",
				      "Dense peak per data type in the latest calibration's profile.", lab, n + 1,
				      p->hw.peak_flops_per_second[t], &e);
	}
}

mp_status mpd_start(mpd_daemon *d, mp_error *err)
{
	struct sockaddr_in6 a6;
	struct sockaddr_in a4;
	const struct sockaddr *addr;
	/* poll(2): select(), libmicrohttpd's default, refuses every socket numbered 1024 or more, so the daemon could
	 * not hold --max-connections beyond about a thousand; epoll (MHD_USE_AUTO) stalls in libmicrohttpd 0.9.75 (and
	 * its master as of 2026) when a worker is at its connection limit and a multiple of 128 (MAX_EVENTS) of its
	 * connections become ready at once: the drain loop calls epoll_wait again with the full timeout, and with the
	 * listening socket out of the set nothing wakes it for --connection-timeout seconds (wrk with -c1024 against
	 * the default limit). poll has no such loop and measured the same under load (bench/RESULTS.md). */
	unsigned int flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
			     MHD_USE_NO_LISTEN_SOCKET; /* the accept path is the daemon's own (accept.h) */
	int listen_fd;
	struct sockaddr_storage bound;
	socklen_t bound_len = sizeof(bound);
	struct MHD_OptionItem pool[] = { { MHD_OPTION_END, 0, NULL }, { MHD_OPTION_END, 0, NULL } };
	mp_status st = mpd_auth_check_listen(&d->cfg, err); /* no open writes beyond loopback: auth.h */

	if (st != MP_OK)
		return st;
	memset(&a4, 0, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	if (inet_pton(AF_INET, d->cfg.listen_host, &a4.sin_addr) == 1) {
		a4.sin_family = AF_INET;
		a4.sin_port = htons(d->cfg.listen_port);
		addr = (const struct sockaddr *)&a4;
	} else if (inet_pton(AF_INET6, d->cfg.listen_host, &a6.sin6_addr) == 1) {
		a6.sin6_family = AF_INET6;
		a6.sin6_port = htons(d->cfg.listen_port);
		addr = (const struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
	} else {
		return mp_fail(err, MP_EINVAL, "--listen", "not a numeric address: %s", d->cfg.listen_host);
	}
	if (d->metrics == NULL && (d->metrics = mpd_metrics_new()) == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
#ifdef __GLIBC__
	/* glibc raises its mmap and trim thresholds each time a large block is freed (up to 32 and 64 MiB), after which
	 * freed memory stays at the top of a thread's heap and malloc_trim leaves it there: forty 32 MiB extender
	 * bodies left 38 MiB resident. Fixed thresholds keep large buffers mmapped (given back when freed) and heaps
	 * trimmed (mallopt(3): setting one turns the adjustment off). */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
#endif
	if (d->nodes == NULL && (d->nodes = mps_node_cache_new(0)) == NULL)
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	d->heavy_limit = d->cfg.max_heavy_requests ? d->cfg.max_heavy_requests
			 : d->cfg.threads >= 2	    ? d->cfg.threads / 2
						    : 1;
	atomic_init(&d->heavy_in_flight, 0);
	open_file_limit(d);
	if (d->lane == NULL && (d->lane = mpd_lane_new(d->heavy_limit)) == NULL) {
		mpd_metrics_free(d->metrics);
		d->metrics = NULL;
		return mp_fail(err, MP_ENOMEM, "", "cannot start the heavy lane's threads");
	}
	if (d->budget == NULL &&
	    (d->budget = mpd_budget_new(d->cfg.max_request_memory_bytes,
					d->cfg.max_request_memory_bytes_per_ip
						? d->cfg.max_request_memory_bytes_per_ip
						: d->cfg.k8s_max_body_bytes + d->cfg.max_body_bytes)) == NULL) {
		mpd_metrics_free(d->metrics);
		d->metrics = NULL;
		return mp_fail(err, MP_ENOMEM, "", "out of memory");
	}
	if (d->guard == NULL) {
		mpd_guard_limits lim = { d->cfg.header_timeout_seconds, d->cfg.connection_timeout_seconds,
					 d->cfg.body_timeout_seconds, d->cfg.send_timeout_seconds,
					 d->cfg.min_transfer_bytes_per_second, d->cfg.connection_limit };

		d->guard = mpd_guard_new(&lim, d->metrics);
	}
	if (d->guard == NULL) {
		mpd_metrics_free(d->metrics);
		d->metrics = NULL;
		return mp_fail(err, MP_ENOMEM, "", "cannot start the connection guard");
	}
	listen_fd = listen_on(addr, addr->sa_family == AF_INET6 ? (socklen_t)sizeof(a6) : (socklen_t)sizeof(a4));
	if (listen_fd < 0) {
		mpd_lane_free(d->lane);
		d->lane = NULL;
		mpd_guard_free(d->guard);
		d->guard = NULL;
		mpd_budget_free(d->budget);
		d->budget = NULL;
		mpd_metrics_free(d->metrics);
		d->metrics = NULL;
		return mp_fail(err, MP_EINTERNAL, "--listen", "cannot listen on %s:%u (%s)", d->cfg.listen_host,
			       d->cfg.listen_port, strerror(errno));
	}
	if (getsockname(listen_fd, (struct sockaddr *)&bound, &bound_len) == 0)
		d->bound_port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)(void *)&bound)->sin6_port
								 : ((struct sockaddr_in *)(void *)&bound)->sin_port);
	/* one thread: the internal polling thread alone (libmicrohttpd warns about a pool of 1 and ignores it) */
	pool[0].option = d->cfg.threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END;
	pool[0].value = (intptr_t)d->cfg.threads;
	d->mhd = MHD_start_daemon(flags, 0, NULL, NULL, access_cb, d,
				  MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, d,
				  MHD_OPTION_NOTIFY_COMPLETED, completed, d, MHD_OPTION_ARRAY, pool,
				  MHD_OPTION_CONNECTION_TIMEOUT, d->cfg.connection_timeout_seconds,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MHD_CONNECTION_LIMIT(d->cfg.connection_limit),
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MPD_CONNECTION_MEMORY_BYTES,
				  MHD_OPTION_UNESCAPE_CALLBACK, unescape, d, MHD_OPTION_NOTIFY_CONNECTION, on_connection, d,
				  MHD_OPTION_URI_LOG_CALLBACK, uri_seen, d,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, d->cfg.max_connections_per_ip, MHD_OPTION_END);
	if (d->mhd == NULL) {
		close(listen_fd);
		mpd_lane_free(d->lane);
		d->lane = NULL;
		mpd_guard_free(d->guard);
		d->guard = NULL;
		mpd_budget_free(d->budget);
		d->budget = NULL;
		mpd_metrics_free(d->metrics);
		d->metrics = NULL;
		return mp_fail(err, MP_EINTERNAL, "--listen", "cannot listen on %s:%u (in use or not permitted)",
			       d->cfg.listen_host, d->cfg.listen_port);
	}
	/* the fresh lane: one thread of its own, FRESH_LANE_CONNECTIONS at once (accept.h) */
	atomic_init(&d->fresh_open, 0);
	atomic_init(&d->trim_pending, false);
	d->fresh = MHD_start_daemon((flags & ~(unsigned)MHD_USE_POLL_INTERNAL_THREAD) | MHD_USE_POLL_INTERNAL_THREAD, 0, NULL,
				    NULL, access_cb, d, MHD_OPTION_EXTERNAL_LOGGER, mhd_logger, d,
				    MHD_OPTION_NOTIFY_COMPLETED, completed, d,
				    MHD_OPTION_CONNECTION_TIMEOUT, d->cfg.connection_timeout_seconds,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MHD_CONNECTION_LIMIT(FRESH_LANE_CONNECTIONS(d->cfg.connection_limit)),
				    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)MPD_CONNECTION_MEMORY_BYTES,
				    MHD_OPTION_UNESCAPE_CALLBACK, unescape, d, MHD_OPTION_NOTIFY_CONNECTION, on_connection, d,
				    MHD_OPTION_URI_LOG_CALLBACK, uri_seen, d, MHD_OPTION_END);
	{
		mpd_accept_targets t = { d->mhd, d->fresh, &d->fresh_open, FRESH_LANE_CONNECTIONS(d->cfg.connection_limit),
					 d->guard,
					 d->cfg.connection_limit, (unsigned)CONNECTION_SLACK(d->cfg.connection_limit) };

		d->acceptor = mpd_acceptor_start(listen_fd, &t);
	}
	if (d->acceptor == NULL) {
		mpd_stop(d);
		return mp_fail(err, MP_EINTERNAL, "", "cannot start the accept path's thread");
	}
	if (d->svc && d->calib == NULL && mps_calib_jobs_create(d->svc, mpc_calib_job_text, &d->calib, err) != MP_OK) {
		mpd_stop(d);
		return MP_ENOMEM;
	}
	mps_calib_jobs_on_profile(d->calib, publish_profile, d);
	if (d->svc) {
		mps_observed_terms_set(d->svc, !d->cfg.observed_terms_off);
		mpd_observation_gauges(d); /* memplan's error as the stored observations give it */
	}
	if (d->cfg.response_cache_bytes && d->respcache == NULL &&
	    (d->respcache = mpd_respcache_new(d->cfg.response_cache_bytes)) == NULL) {
		mpd_stop(d);
		return mp_fail(err, MP_ENOMEM, "--response-cache-bytes", "out of memory");
	}
	return MP_OK;
}

void mpd_stop(mpd_daemon *d)
{
	mpd_acceptor_stop(d->acceptor); /* no new connections */
	d->acceptor = NULL;
	/* the lane's computations end first: each resumes its connection, which libmicrohttpd must not hold suspended
	 * when it stops */
	mpd_lane_free(d->lane);
	d->lane = NULL;
	if (d->mhd) {
		MHD_stop_daemon(d->mhd);
		d->mhd = NULL;
	}
	if (d->fresh) {
		MHD_stop_daemon(d->fresh);
		d->fresh = NULL;
	}
	mpd_guard_free(d->guard); /* every connection has been reported closed */
	d->guard = NULL;
	/* After the HTTP threads: cancels running calibrations and joins them before the store closes. */
	mps_calib_jobs_destroy(d->calib);
	d->calib = NULL;
	mpd_metrics_free(d->metrics);
	d->metrics = NULL;
	mpd_respcache_free(d->respcache);
	d->respcache = NULL;
	mpd_budget_free(d->budget); /* every request has given its bytes back */
	d->budget = NULL;
	mps_node_cache_free(d->nodes);
	d->nodes = NULL;
}

unsigned long mpd_shutdown(mpd_daemon *d)
{
	unsigned long left = 0;
	MHD_socket fd;
	struct timespec t0, nap = { 0, 10 * 1000 * 1000 };

	if (d->mhd == NULL)
		return 0;
	/* stop accepting: new connections are refused while those open finish their requests */
	mpd_acceptor_stop(d->acceptor);
	d->acceptor = NULL;
	fd = MHD_quiesce_daemon(d->mhd);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	if (d->fresh && (fd = MHD_quiesce_daemon(d->fresh)) != MHD_INVALID_SOCKET)
		close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (d->metrics && (left = mpd_metrics_in_flight(d->metrics)) > 0 &&
	       seconds_since(&t0) < (double)d->cfg.shutdown_timeout_seconds)
		nanosleep(&nap, NULL);
	mpd_stop(d);
	return left;
}
