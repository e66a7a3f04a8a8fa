/*
 * log.h: the daemon's structured log: one JSON object per line on stderr (ts, level, msg or the access
 * fields), filtered by a level. Lines are written with one stdio call each, so threads never interleave
 * within a line. No globals: the level lives in mpd_config and is passed in.
 */
#ifndef MPD_LOG_H
#define MPD_LOG_H

#include <stdarg.h>

#include "../planner/memplan.h"

typedef enum mpd_log_level {
	MPD_LOG_DEBUG = 0,
	MPD_LOG_INFO = 1,	/* the default: access lines and lifecycle events */
	MPD_LOG_WARN = 2,
	MPD_LOG_ERROR = 3,
	MPD_LOG_OFF = 4,
} mpd_log_level;

/* Parses "debug", "info", "warn", "error" or "off". Errors: MP_EINVAL naming "log-level". */
mp_status mpd_log_level_parse(const char *s, mpd_log_level *out, mp_error *err);
const char *mpd_log_level_name(mpd_log_level l);

/* Writes {"ts","level","msg"} when lvl >= min. printf-style message. */
void mpd_log(mpd_log_level min, mpd_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The same with a va_list (libmicrohttpd's error logger goes through it). */
void mpd_vlog(mpd_log_level min, mpd_log_level lvl, const char *fmt, va_list ap);

/* One access line at info (warn for 5xx, or when no response was sent: status 0 with `termination`). */
typedef struct mpd_access {
	const char *method, *path, *route;
	int status;			/* 0: no response was sent */
	double duration_seconds;
	unsigned long long request_bytes;
	const char *remote;		/* numeric address or NULL */
	const char *termination;	/* NULL when completed normally */
} mpd_access;
void mpd_log_access(mpd_log_level min, const mpd_access *a);

#endif /* MPD_LOG_H */
