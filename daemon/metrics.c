/*
 * metrics.c: counters, histograms and gauges for GET /metrics, rendered in Prometheus text format 0.0.4.
 * One mutex guards the tables; the hot path (one request) takes it once at the end. Keys are static
 * strings (route patterns, a fixed method set), so counting never allocates after a series first appears.
 * Must not know about libmicrohttpd or the store: server.c feeds it, h_metrics (here) renders it.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <microhttpd.h>

#include "metrics.h"
#include "routes.h"

/* Latency buckets in seconds: planner answers take tens of microseconds, store reads about a millisecond. */
static const double buckets[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
				  0.5, 1, 2.5, 5, 10 };
#define NBUCKETS (sizeof(buckets) / sizeof(buckets[0]))

typedef struct req_series {	/* memplan_http_requests_total{route, method, code} */
	const char *route, *method;
	int status;
	unsigned long long count;
} req_series;

typedef struct lat_series {	/* memplan_http_request_duration_seconds{route, method} */
	const char *route, *method;
	unsigned long long bucket[NBUCKETS];	/* non-cumulative; summed on output */
	unsigned long long count;
	double sum;
} lat_series;

#define GAUGE_NAME_MAX 128
#define GAUGE_LABELS_MAX 512

typedef struct gauge {
	char name[GAUGE_NAME_MAX];
	char help[256];
	char labels[GAUGE_LABELS_MAX];	/* rendered: a="x",b="y" */
	double value;
	bool counter;			/* rendered as a counter (mpd_metrics_counter_add) */
} gauge;

struct mpd_metrics {
	pthread_mutex_t mu;
	req_series *req;
	size_t nreq, capreq;
	lat_series *lat;
	size_t nlat, caplat;
	gauge *g;
	size_t ng, capg;
	unsigned long in_flight;
	unsigned long long db_errors;
	unsigned long long cuts[4];	/* by mpd_cut_reason */
	unsigned int connections_open;
};

mpd_metrics *mpd_metrics_new(void)
{
	mpd_metrics *m = calloc(1, sizeof(*m));

	if (m && pthread_mutex_init(&m->mu, NULL) != 0) {
		free(m);
		return NULL;
	}
	return m;
}

void mpd_metrics_free(mpd_metrics *m)
{
	if (m == NULL)
		return;
	pthread_mutex_destroy(&m->mu);
	free(m->req);
	free(m->lat);
	free(m->g);
	free(m);
}

void mpd_metrics_request_begin(mpd_metrics *m)
{
	pthread_mutex_lock(&m->mu);
	m->in_flight++;
	pthread_mutex_unlock(&m->mu);
}

static const char *fold_method(const char *method)
{
	static const char *const known[] = { "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS" };

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (method && strcmp(method, known[i]) == 0)
			return known[i];
	return "OTHER";
}

/* Grows *arr (of elem bytes) to hold one more; false when out of memory. */
static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	void *p;
	size_t c;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*arr, c * elem);
	if (p == NULL)
		return false;
	memset((char *)p + *cap * elem, 0, (c - *cap) * elem);
	*arr = p;
	*cap = c;
	return true;
}

void mpd_metrics_request_end(mpd_metrics *m, const char *route, const char *method, int status, double seconds)
{
	size_t i;

	method = fold_method(method);
	pthread_mutex_lock(&m->mu);
	if (m->in_flight > 0)
		m->in_flight--;
	if (status <= 0)
		goto out;
	for (i = 0; i < m->nreq; i++)
		if (m->req[i].route == route && m->req[i].method == method && m->req[i].status == status)
			break;
	if (i == m->nreq && grow((void **)&m->req, &m->capreq, m->nreq, sizeof(*m->req))) {
		m->req[i] = (req_series){ .route = route, .method = method, .status = status };
		m->nreq++;
	}
	if (i < m->nreq)
		m->req[i].count++;
	for (i = 0; i < m->nlat; i++)
		if (m->lat[i].route == route && m->lat[i].method == method)
			break;
	if (i == m->nlat && grow((void **)&m->lat, &m->caplat, m->nlat, sizeof(*m->lat))) {
		m->lat[i] = (lat_series){ .route = route, .method = method };
		m->nlat++;
	}
	if (i < m->nlat) {
		size_t b = 0;

		while (b < NBUCKETS && seconds > buckets[b])
			b++;
		if (b < NBUCKETS)
			m->lat[i].bucket[b]++;
		m->lat[i].count++;
		m->lat[i].sum += seconds;
	}
out:
	pthread_mutex_unlock(&m->mu);
}

void mpd_metrics_connection_cut(mpd_metrics *m, mpd_cut_reason why)
{
	pthread_mutex_lock(&m->mu);
	if ((unsigned)why < sizeof(m->cuts) / sizeof(m->cuts[0]))
		m->cuts[why]++;
	pthread_mutex_unlock(&m->mu);
}

void mpd_metrics_connections_open(mpd_metrics *m, unsigned int open)
{
	pthread_mutex_lock(&m->mu);
	m->connections_open = open;
	pthread_mutex_unlock(&m->mu);
}

void mpd_metrics_db_error(mpd_metrics *m)
{
	pthread_mutex_lock(&m->mu);
	m->db_errors++;
	pthread_mutex_unlock(&m->mu);
}

unsigned long mpd_metrics_in_flight(mpd_metrics *m)
{
	unsigned long n;

	pthread_mutex_lock(&m->mu);
	n = m->in_flight;
	pthread_mutex_unlock(&m->mu);
	return n;
}

static bool valid_name(const char *s, bool colon)
{
	if (s == NULL || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || (colon && *s == ':')))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      (colon && *s == ':')))
			return false;
	return true;
}

/* Appends value to buf[*n..cap) with Prometheus label escaping; false when it does not fit. */
static bool put_escaped(char *buf, size_t cap, size_t *n, const char *value)
{
	for (const char *p = value; *p; p++) {
		const char *esc = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
		size_t k = esc ? 2 : 1;

		if (*n + k + 1 > cap)
			return false;
		memcpy(buf + *n, esc ? esc : p, k);
		*n += k;
	}
	buf[*n] = '\0';
	return true;
}

static mp_status series_update(mpd_metrics *m, const char *name, const char *help, const mpd_label *labels,
			       size_t nlabels, double value, bool counter, mp_error *err);

mp_status mpd_metrics_gauge_set(mpd_metrics *m, const char *name, const char *help, const mpd_label *labels,
				size_t nlabels, double value, mp_error *err)
{
	return series_update(m, name, help, labels, nlabels, value, false, err);
}

mp_status mpd_metrics_counter_add(mpd_metrics *m, const char *name, const char *help, const mpd_label *labels,
				  size_t nlabels, double delta, mp_error *err)
{
	return series_update(m, name, help, labels, nlabels, delta, true, err);
}

void mpd_metrics_gauge_trim(mpd_metrics *m, const char *name, size_t keep)
{
	size_t n = 0, i, w;

	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->ng; i++)
		n += strcmp(m->g[i].name, name) == 0;
	for (i = 0, w = 0; i < m->ng; i++) {
		if (n > keep && strcmp(m->g[i].name, name) == 0) {
			n--; /* the oldest of the name goes */
			continue;
		}
		if (w != i)
			m->g[w] = m->g[i];
		w++;
	}
	m->ng = w;
	pthread_mutex_unlock(&m->mu);
}

void mpd_metrics_gauge_drop(mpd_metrics *m, const char *name, const mpd_label *labels, size_t nlabels)
{
	char prefix[GAUGE_LABELS_MAX];
	size_t n = 0, i, w;

	prefix[0] = '\0';
	for (i = 0; i < nlabels; i++) {
		int k = snprintf(prefix + n, sizeof(prefix) - n, "%s%s=\"", i ? "," : "", labels[i].name);

		if (k < 0 || (size_t)k >= sizeof(prefix) - n)
			return;
		n += (size_t)k;
		if (!put_escaped(prefix, sizeof(prefix) - 2, &n, labels[i].value ? labels[i].value : ""))
			return;
		prefix[n++] = '"';
		prefix[n] = '\0';
	}
	pthread_mutex_lock(&m->mu);
	for (i = 0, w = 0; i < m->ng; i++) {
		if (strcmp(m->g[i].name, name) == 0 && strncmp(m->g[i].labels, prefix, n) == 0 &&
		    (m->g[i].labels[n] == ',' || m->g[i].labels[n] == '\0'))
			continue;
		if (w != i)
			m->g[w] = m->g[i];
		w++;
	}
	m->ng = w;
	pthread_mutex_unlock(&m->mu);
}

static mp_status series_update(mpd_metrics *m, const char *name, const char *help, const mpd_label *labels,
			       size_t nlabels, double value, bool counter, mp_error *err)
{
	char rendered[GAUGE_LABELS_MAX];
	size_t n = 0, i;
	mp_status st = MP_OK;

	if (!valid_name(name, true) || strlen(name) >= GAUGE_NAME_MAX)
		return mp_fail(err, MP_EINVAL, "name", "'%s' is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*, "
			       "under %d characters)", name ? name : "", GAUGE_NAME_MAX);
	if (strncmp(name, "memplan_http_", 13) == 0 || strcmp(name, "memplan_build_info") == 0 ||
	    strcmp(name, "memplan_database_errors_total") == 0)
		return mp_fail(err, MP_EINVAL, "name", "'%s' clashes with a built-in metric", name);
	rendered[0] = '\0';
	for (i = 0; i < nlabels; i++) {
		int k;

		if (!valid_name(labels[i].name, false) || strncmp(labels[i].name, "__", 2) == 0)
			return mp_fail(err, MP_EINVAL, "labels", "'%s' is not a Prometheus label name",
				       labels[i].name ? labels[i].name : "");
		k = snprintf(rendered + n, sizeof(rendered) - n, "%s%s=\"", i ? "," : "", labels[i].name);
		if (k < 0 || (size_t)k >= sizeof(rendered) - n)
			goto too_long;
		n += (size_t)k;
		if (!put_escaped(rendered, sizeof(rendered) - 1, &n, labels[i].value ? labels[i].value : ""))
			goto too_long;
		rendered[n++] = '"';
		rendered[n] = '\0';
	}
	pthread_mutex_lock(&m->mu);
	for (i = 0; i < m->ng; i++)
		if (strcmp(m->g[i].name, name) == 0 && strcmp(m->g[i].labels, rendered) == 0)
			break;
	if (i == m->ng) {
		if (!grow((void **)&m->g, &m->capg, m->ng, sizeof(*m->g))) {
			st = mp_fail(err, MP_ENOMEM, "", "out of memory");
			goto unlock;
		}
		snprintf(m->g[i].name, sizeof(m->g[i].name), "%s", name);
		snprintf(m->g[i].labels, sizeof(m->g[i].labels), "%s", rendered);
		/* HELP text: one line, backslashes and newlines escaped as the format requires */
		n = 0;
		m->g[i].help[0] = '\0';
		for (const char *p = help ? help : name; *p && n + 3 < sizeof(m->g[i].help); p++) {
			if (*p == '\\' || *p == '\n') {
				m->g[i].help[n++] = '\\';
				m->g[i].help[n++] = *p == '\n' ? 'n' : '\\';
			} else {
				m->g[i].help[n++] = *p;
			}
		}
		m->g[i].help[n] = '\0';
		m->g[i].counter = counter;
		m->g[i].value = 0;
		m->ng++;
	}
	if (m->g[i].counter != counter) {
		st = mp_fail(err, MP_EINVAL, "name", "'%s' is registered as a %s", name, m->g[i].counter ? "counter" : "gauge");
		goto unlock;
	}
	m->g[i].value = counter ? m->g[i].value + value : value;
unlock:
	pthread_mutex_unlock(&m->mu);
	return st;
too_long:
	return mp_fail(err, MP_EINVAL, "labels", "the labels of '%s' are longer than %d bytes", name,
		       GAUGE_LABELS_MAX - 1);
}

/* ----- rendering ----------------------------------------------------------------------------------------- */

typedef struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)k < b->cap - b->n) {
			b->n += (size_t)k;
			return;
		}
		{
			size_t cap = b->cap * 2 + (size_t)k;
			char *p = realloc(b->p, cap);

			if (p == NULL) {
				b->oom = true;
				return;
			}
			b->p = p;
			b->cap = cap;
		}
	}
}

/* Prometheus floats: integers without a fraction, others with enough digits to round-trip. */
static void sb_value(sbuf *b, double v)
{
	if (isnan(v))
		sb_printf(b, "NaN\n");
	else if (isinf(v))
		sb_printf(b, "%sInf\n", v > 0 ? "+" : "-");
	else if (v == (double)(long long)v && v > -1e15 && v < 1e15)
		sb_printf(b, "%lld\n", (long long)v);
	else
		sb_printf(b, "%.17g\n", v);
}

char *mpd_metrics_render(mpd_metrics *m, const mpd_respcache_stats *cache)
{
	sbuf b = { .cap = 8192 };

	b.p = malloc(b.cap);
	if (b.p == NULL)
		return NULL;
	b.p[0] = '\0';
	pthread_mutex_lock(&m->mu);
	sb_printf(&b, "# HELP memplan_build_info The memplan build: version and the libmicrohttpd it runs on.\n"
		      "# TYPE memplan_build_info gauge\n"
		      "memplan_build_info{version=\"%s\",libmicrohttpd=\"%s\"} 1\n",
		  MP_VERSION, MHD_get_version());
	sb_printf(&b, "# HELP memplan_http_requests_total HTTP requests answered, by route pattern, method and "
		      "status code.\n# TYPE memplan_http_requests_total counter\n");
	for (size_t i = 0; i < m->nreq; i++)
		sb_printf(&b, "memplan_http_requests_total{route=\"%s\",method=\"%s\",code=\"%d\"} %llu\n",
			  m->req[i].route, m->req[i].method, m->req[i].status, m->req[i].count);
	sb_printf(&b, "# HELP memplan_http_request_duration_seconds Time from the request's headers to the end of "
		      "its response, by route pattern and method.\n"
		      "# TYPE memplan_http_request_duration_seconds histogram\n");
	for (size_t i = 0; i < m->nlat; i++) {
		const lat_series *s = &m->lat[i];
		unsigned long long cum = 0;

		for (size_t k = 0; k < NBUCKETS; k++) {
			cum += s->bucket[k];
			sb_printf(&b, "memplan_http_request_duration_seconds_bucket{route=\"%s\",method=\"%s\",le=\"%g\"} "
				      "%llu\n", s->route, s->method, buckets[k], cum);
		}
		sb_printf(&b, "memplan_http_request_duration_seconds_bucket{route=\"%s\",method=\"%s\",le=\"+Inf\"} "
			      "%llu\n", s->route, s->method, s->count);
		sb_printf(&b, "memplan_http_request_duration_seconds_sum{route=\"%s\",method=\"%s\"} %.9f\n", s->route,
			  s->method, s->sum);
		sb_printf(&b, "memplan_http_request_duration_seconds_count{route=\"%s\",method=\"%s\"} %llu\n",
			  s->route, s->method, s->count);
	}
	sb_printf(&b, "# HELP memplan_http_requests_in_flight Requests received and not yet answered.\n"
		      "# TYPE memplan_http_requests_in_flight gauge\nmemplan_http_requests_in_flight %lu\n",
		  m->in_flight);
	sb_printf(&b, "# HELP memplan_http_connections_open Client connections open.\n"
		      "# TYPE memplan_http_connections_open gauge\nmemplan_http_connections_open %u\n",
		  m->connections_open);
	sb_printf(&b, "# HELP memplan_http_connections_cut_total Connections closed by the daemon before their request was "
		      "done: headers past --header-timeout, a slot freed near --max-connections, a body past "
		      "--body-timeout or slower than --min-transfer-rate, an answer past --send-timeout or slower.\n"
		      "# TYPE memplan_http_connections_cut_total counter\n"
		      "memplan_http_connections_cut_total{reason=\"header_timeout\"} %llu\n"
		      "memplan_http_connections_cut_total{reason=\"pressure\"} %llu\n"
		      "memplan_http_connections_cut_total{reason=\"body\"} %llu\n"
		      "memplan_http_connections_cut_total{reason=\"send\"} %llu\n",
		  m->cuts[0], m->cuts[1], m->cuts[2], m->cuts[3]);
	sb_printf(&b, "# HELP memplan_database_errors_total Requests that failed because the database did.\n"
		      "# TYPE memplan_database_errors_total counter\nmemplan_database_errors_total %llu\n",
		  m->db_errors);
	if (cache) {
		const struct {
			const char *name, *type, *help;
			unsigned long long value;
		} rows[] = {
			{ "hits_total", "counter", "Plan, fit, roofline and capacity requests answered from the response "
						   "cache.", cache->hits },
			{ "misses_total", "counter", "Plan, fit, roofline and capacity requests computed afresh.",
			  cache->misses },
			{ "evictions_total", "counter", "Cached answers dropped for room (least recently used).",
			  cache->evictions },
			{ "invalidations_total", "counter", "Cached answers dropped because the store changed.",
			  cache->invalidations },
			{ "entries", "gauge", "Answers held in the response cache.", cache->entries },
			{ "bytes", "gauge", "Bytes held by the response cache, of memplan_response_cache_max_bytes.",
			  cache->bytes },
			{ "max_bytes", "gauge", "The response cache's bound (--response-cache-bytes).", cache->max_bytes },
		};

		for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
			sb_printf(&b, "# HELP memplan_response_cache_%s %s\n# TYPE memplan_response_cache_%s %s\n"
				      "memplan_response_cache_%s %llu\n", rows[i].name, rows[i].help, rows[i].name,
				  rows[i].type, rows[i].name, rows[i].value);
	}
	/* registered gauges, grouped by name in first-registration order */
	for (size_t i = 0; i < m->ng; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(m->g[j].name, m->g[i].name) == 0;
		if (seen)
			continue;
		sb_printf(&b, "# HELP %s %s\n# TYPE %s %s\n", m->g[i].name, m->g[i].help, m->g[i].name,
			  m->g[i].counter ? "counter" : "gauge");
		for (size_t k = i; k < m->ng; k++) {
			if (strcmp(m->g[k].name, m->g[i].name) != 0)
				continue;
			sb_printf(&b, "%s%s%s%s ", m->g[k].name, m->g[k].labels[0] ? "{" : "", m->g[k].labels,
				  m->g[k].labels[0] ? "}" : "");
			sb_value(&b, m->g[k].value);
		}
	}
	pthread_mutex_unlock(&m->mu);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* GET /metrics */
mp_status mpd_h_metrics(mpd_request *req, mpd_reply *rep)
{
	mpd_respcache_stats cs;

	if (req->d->metrics == NULL)
		return mp_fail(&rep->err, MP_EINTERNAL, "", "metrics are not enabled on this daemon");
	if (req->d->respcache) {
		if (req->d->svc) /* a write by another process since the last lookup shows as emptied now */
			mpd_respcache_sync(req->d->respcache, mps_generation(req->d->svc));
		mpd_respcache_stats_get(req->d->respcache, &cs);
	}
	rep->text = mpd_metrics_render(req->d->metrics, req->d->respcache ? &cs : NULL);
	if (rep->text == NULL)
		return mp_fail(&rep->err, MP_ENOMEM, "", "out of memory");
	rep->text_type = "text/plain; version=0.0.4; charset=utf-8";
	return MP_OK;
}
