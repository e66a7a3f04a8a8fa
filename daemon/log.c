/*
 * log.c: JSON-lines log on stderr (see log.h). Writes each line with codec's one JSON writer (mpc_out), so every
 * string is escaped as an answer's is, then emits it with one fwrite: stdio locks the stream per call. Never exits or aborts: a line that cannot be
 * built (out of memory) is dropped.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../codec/mpc_json.h"
#include "log.h"

static const char *const names[] = { "debug", "info", "warn", "error", "off" };

mp_status mpd_log_level_parse(const char *s, mpd_log_level *out, mp_error *err)
{
	for (int i = 0; i <= MPD_LOG_OFF; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (mpd_log_level)i;
			return MP_OK;
		}
	return mp_fail(err, MP_EINVAL, "log-level", "log-level must be one of debug, info, warn, error, off (got '%s')",
		       s);
}

const char *mpd_log_level_name(mpd_log_level l)
{
	return l <= MPD_LOG_OFF ? names[l] : "info";
}

/* Opens a line in o with ts and level. */
static void line(mpc_out *o, mpd_log_level lvl)
{
	struct timespec now;
	struct tm tm;
	char ts[80];

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (long)(now.tv_nsec / 1000000) % 1000);
	mpc_out_init(o);
	mpc_w_obj(o, NULL);
	mpc_w_str(o, "ts", ts);
	mpc_w_str(o, "level", mpd_log_level_name(lvl));
}

/* Closes the line and writes it; a line the writer could not build (out of memory) is dropped. */
static void emit(mpc_out *o)
{
	size_t n = 0;
	char *s;

	mpc_w_end(o);
	s = mpc_out_finish(o, &n);
	if (s) {
		s[n] = '\n'; /* over the terminator: the line and its newline in one call */
		fwrite(s, 1, n + 1, stderr);
	}
	free(s);
}

void mpd_log(mpd_log_level min, mpd_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mpd_vlog(min, lvl, fmt, ap);
	va_end(ap);
}

static void escape_utf8(char *dst, size_t cap, const char *src);

void mpd_vlog(mpd_log_level min, mpd_log_level lvl, const char *fmt, va_list ap)
{
	char raw[1024], msg[1024];
	size_t n;
	mpc_out o;

	if (lvl < min || min >= MPD_LOG_OFF)
		return;
	vsnprintf(raw, sizeof(raw), fmt, ap);
	escape_utf8(msg, sizeof(msg), raw); /* a message may quote a request (its path): JSON text either way */
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	line(&o, lvl);
	mpc_w_str(&o, "msg", msg);
	emit(&o);
}

/*
 * src as text a log line can carry unchanged: well-formed UTF-8 is kept, every byte of an ill-formed sequence is
 * written as \xNN (so "/v1/x%FF" logged from the raw target shows "\xff", never the raw byte, which is not JSON
 * text). Cut at a sequence boundary when dst is too small. Worked example: "a\xc3(" -> "a\xc3(" as 7 characters.
 */
static void escape_utf8(char *dst, size_t cap, const char *src)
{
	size_t len = strlen(src), i = 0, o = 0;

	while (i < len && o + 1 < cap) {
		size_t bad = mpc_utf8_invalid_at(src + i, len - i);

		if (bad > 0) { /* the valid run, as it is */
			size_t n = bad < cap - 1 - o ? bad : cap - 1 - o;

			while (n > 0 && n < bad && ((unsigned char)src[i + n] & 0xC0) == 0x80)
				n--; /* not in the middle of a character */
			if (n == 0)
				break;
			memcpy(dst + o, src + i, n);
			o += n;
			i += n;
			continue;
		}
		if (o + 4 >= cap)
			break;
		snprintf(dst + o, cap - o, "\\x%02x", (unsigned char)src[i]);
		o += 4;
		i++;
	}
	dst[o] = '\0';
}

void mpd_log_access(mpd_log_level min, const mpd_access *a)
{
	char method[80], path[800];
	mpd_log_level lvl = (a->status >= 500 || a->status == 0) ? MPD_LOG_WARN : MPD_LOG_INFO;
	mpc_out o;

	if (lvl < min || min >= MPD_LOG_OFF)
		return;
	line(&o, lvl);
	mpc_w_lit(&o, "msg", "access");
	escape_utf8(method, sizeof(method), a->method ? a->method : "");
	escape_utf8(path, sizeof(path), a->path ? a->path : "");
	mpc_w_str(&o, "method", method);
	mpc_w_str(&o, "path", path);
	mpc_w_str(&o, "route", a->route ? a->route : "unmatched");
	mpc_w_i64(&o, "status", a->status);
	mpc_w_num(&o, "duration_seconds", a->duration_seconds);
	mpc_w_u64(&o, "request_bytes", (uint64_t)a->request_bytes);
	if (a->remote)
		mpc_w_str(&o, "remote", a->remote);
	if (a->termination)
		mpc_w_str(&o, "termination", a->termination);
	emit(&o);
}
