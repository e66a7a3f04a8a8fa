/*
 * metrics.h: the daemon's Prometheus metrics (GET /metrics). Owns counters of requests by route, method and
 * status, a latency histogram per route, the in-flight gauge, database errors, build info, and a small
 * registry of named gauges that other components (the calibration jobs) set. Thread-safe; no globals: one
 * mpd_metrics hangs off struct mpd_daemon. It never touches HTTP or the store.
 */
#ifndef MPD_METRICS_H
#define MPD_METRICS_H

#include <stddef.h>

#include "../planner/memplan.h"
#include "respcache.h"

typedef struct mpd_metrics mpd_metrics;	/* opaque */

/* A label of a registered gauge. Borrowed for the duration of the call. */
typedef struct mpd_label {
	const char *name;	/* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" */
	const char *value;	/* any UTF-8; escaped on output */
} mpd_label;

/* Creates an empty registry. Returns NULL when out of memory. Free with mpd_metrics_free. */
mpd_metrics *mpd_metrics_new(void);
void mpd_metrics_free(mpd_metrics *m);

/* A request started (in-flight + 1). Pair with mpd_metrics_request_end. */
void mpd_metrics_request_begin(mpd_metrics *m);

/*
 * A request ended (in-flight - 1). When status > 0 it is counted under route (the route table's pattern,
 * or "unmatched"; static storage) and method (any string; folded to a fixed set), with its duration in
 * seconds. status 0 means no response was sent (client gone, timeout): only in-flight changes.
 */
void mpd_metrics_request_end(mpd_metrics *m, const char *route, const char *method, int status, double seconds);

/* The store failed while answering a request (a 500 with MP_EDB). */
void mpd_metrics_db_error(mpd_metrics *m);

/* A connection the connection guard (guard.h) cut: its headers past their deadline, a slot freed under pressure, its
 * body past its deadline or below the minimum rate, its answer past the send deadline or below the rate. */
typedef enum mpd_cut_reason {
	MPD_CUT_HEADER_TIMEOUT = 0,
	MPD_CUT_PRESSURE = 1,
	MPD_CUT_BODY = 2,
	MPD_CUT_SEND = 3,
} mpd_cut_reason;
void mpd_metrics_connection_cut(mpd_metrics *m, mpd_cut_reason why);
/* Connections open now (the guard's count), shown as memplan_http_connections_open. */
void mpd_metrics_connections_open(mpd_metrics *m, unsigned int open);

/* Requests begun and not yet ended. */
unsigned long mpd_metrics_in_flight(mpd_metrics *m);

/*
 * Sets gauge `name` with `labels` to value, creating it on first use; the latest value wins. Meant for the
 * latest calibration figures, e.g. name "memplan_calibration_memory_bandwidth_bytes_per_second", labels
 * {{"device", "h200-sxm-141gb"}}. help is the # HELP text (kept from the first call for a name).
 * Errors: MP_EINVAL (a name or label name is not a valid Prometheus name, too long, or the name clashes with
 * a built-in metric), MP_ENOMEM. Copies every string; borrows nothing after returning.
 */
mp_status mpd_metrics_gauge_set(mpd_metrics *m, const char *name, const char *help, const mpd_label *labels,
				size_t nlabels, double value, mp_error *err);

/* As mpd_metrics_gauge_set for a counter: adds delta (>= 0) to the series, created at 0 on first use; rendered with
 * # TYPE counter (name it *_total). Errors: as mpd_metrics_gauge_set, and MP_EINVAL when name is a gauge. */
mp_status mpd_metrics_counter_add(mpd_metrics *m, const char *name, const char *help, const mpd_label *labels,
				  size_t nlabels, double delta, mp_error *err);

/* Keeps the `keep` newest series (by first registration) of gauge `name`, dropping the older ones: a bound on
 * per-object series such as one per scheduled pod. */
void mpd_metrics_gauge_trim(mpd_metrics *m, const char *name, size_t keep);

/* Drops every series of gauge `name` whose first nlabels labels are `labels` (the rest any): an object's series
 * before its latest values are set, e.g. a re-planned pod's, {{"namespace", "prod"}, {"pod", "chat-0"}}. A label
 * set too long to render drops nothing. */
void mpd_metrics_gauge_drop(mpd_metrics *m, const char *name, const mpd_label *labels, size_t nlabels);

/* Renders every metric in the Prometheus text exposition format 0.0.4, with the response cache's counters when
 * cache is not NULL (a snapshot, borrowed). Caller frees; NULL when out of memory. */
char *mpd_metrics_render(mpd_metrics *m, const mpd_respcache_stats *cache);

#endif /* MPD_METRICS_H */
