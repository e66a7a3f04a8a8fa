/*
 * framing.c: the request head's checks (framing.h). Reads the header list libmicrohttpd 0.9.75 parsed; never
 * answers: the caller does, from the status and the error it returns.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "../codec/mpc_json.h"
#include "auth.h"
#include "framing.h"

/* RFC 9110 section 5.6.2: tchar. */
static bool tchar(unsigned char c)
{
	return isalnum(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

typedef struct scan {
	mp_status st;			/* MP_OK until the first problem */
	int http;
	char field[64];
	char message[256];
	unsigned hosts, content_lengths, transfer_encodings;
	char first_length[32];		/* the first Content-Length value, to compare the others with */
} scan;

static enum MHD_Result refuse(scan *s, mp_status st, int http, const char *key, size_t key_size, const char *fmt)
{
	char name[48];

	/* the name as text: control characters and ill-formed UTF-8 are not echoed */
	snprintf(name, sizeof(name), "%.*s", (int)(key_size < 40 ? key_size : 40), key);
	for (char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	mpc_utf8_sanitize(s->field, sizeof(s->field), name[0] ? name : "(empty)");
	snprintf(s->message, sizeof(s->message), fmt, s->field);
	s->st = st;
	s->http = http;
	return MHD_NO;
}

static bool named(const char *key, size_t key_size, const char *name)
{
	return key_size == strlen(name) && strncasecmp(key, name, key_size) == 0;
}

static bool starts(const char *key, size_t key_size, const char *name)
{
	return key_size > strlen(name) && strncasecmp(key, name, strlen(name)) == 0;
}

static enum MHD_Result scan_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				   const char *value, size_t value_size)
{
	scan *s = cls;

	(void)kind;
	if (key == NULL || value == NULL)
		return MHD_YES;
	for (size_t i = 0; i < key_size; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c == ' ' || c == '\t')
			return refuse(s, MP_EFRAMING, 400, key, key_size,
				      "whitespace between the field name '%s' and its colon: refused (RFC 9112 section "
				      "5.1); write 'Name: value'");
		if (!tchar(c))
			return refuse(s, MP_EFRAMING, 400, key, key_size,
				      "the field name '%s' holds a character a field name may not (RFC 9110 section 5.1: "
				      "letters, digits and !#$%%&'*+-.^_`|~)");
	}
	/* libmicrohttpd 0.9.75 appends a folded continuation line (obs-fold) to the field name: "Content-Length:"
	 * then " 5" on the next line arrives as a field "Content-Length5" with an empty value */
	if (starts(key, key_size, "Content-Length") || starts(key, key_size, "Transfer-Encoding"))
		return refuse(s, MP_EFRAMING, 400, key, key_size,
			      "a folded or malformed framing field ('%s'): a field value continued on the next line "
			      "(obs-fold) is refused (RFC 9112 section 5.2); send each field on one line");
	for (size_t i = 0; i < value_size; i++) {
		unsigned char c = (unsigned char)value[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return refuse(s, MP_EFRAMING, 400, key, key_size,
				      c == '\r' ? "the %s field holds a bare CR: lines end with CRLF (RFC 9112 section 2.2)"
						: "the %s field holds a control character; field values are text (RFC 9110 "
						  "section 5.5)");
	}
	/*
	 * libmicrohttpd ends each header line where it finds CR or LF, overwriting a CRLF with two NULs in its buffer,
	 * then takes the value up to the first NUL. The byte after the value's end is therefore a NUL for a line that
	 * ended in CRLF; anything else means the value was cut at a NUL of its own ("Bearer <token>\0junk") or the
	 * line ended in a bare LF, which RFC 9112 section 2.2 lets a server refuse. (libmicrohttpd 0.9.75
	 * connection.c, get_next_header_line and process_header_line; the line and the blank line after the last
	 * one are in the buffer, so the byte is always there.)
	 */
	if (value[value_size] == '\0' && value[value_size + 1] != '\0')
		return refuse(s, MP_EFRAMING, 400, key, key_size,
			      "the %s field holds a NUL byte, or its line ends in a bare LF: field values are text (RFC 9110 "
			      "section 5.5) and lines end with CRLF");
	if (named(key, key_size, "Host"))
		s->hosts++;
	if (named(key, key_size, "Transfer-Encoding"))
		s->transfer_encodings++;
	if (named(key, key_size, "Content-Length")) {
		if (s->content_lengths++ == 0)
			snprintf(s->first_length, sizeof(s->first_length), "%.*s", (int)(value_size < 31 ? value_size : 31),
				 value);
		else if (value_size >= sizeof(s->first_length) || strlen(s->first_length) != value_size ||
			 memcmp(s->first_length, value, value_size) != 0)
			return refuse(s, MP_EFRAMING, 400, key, key_size,
				      "%s given twice with different values: the body's length is ambiguous (RFC 9110 "
				      "section 8.6); send it once");
	}
	return MHD_YES;
}

/* Whether v, without surrounding blanks, is exactly "chunked" (any case): the only transfer coding taken. */
static bool only_chunked(const char *v)
{
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n == 7 && strncasecmp(v, "chunked", 7) == 0;
}

mp_status mpd_framing_check(void *c, const char *version, int *http, mp_error *err)
{
	struct MHD_Connection *conn = c;
	scan s;
	const char *te;
	bool v11 = version && strcmp(version, MHD_HTTP_VERSION_1_1) == 0;

	memset(&s, 0, sizeof(s));
	*http = 400;
	if (version == NULL || (!v11 && strcmp(version, MHD_HTTP_VERSION_1_0) != 0)) {
		*http = 505;
		return mp_fail(err, MP_EFRAMING, "", "this server speaks HTTP/1.1 and HTTP/1.0 only (behind a proxy for "
				    "HTTP/2)");
	}
	MHD_get_connection_values_n(conn, MHD_HEADER_KIND, scan_header, &s);
	if (s.st != MP_OK) {
		*http = s.http;
		return mp_fail(err, s.st, s.field, "%s", s.message);
	}
	if (s.hosts > 1)
		return mp_fail(err, MP_EFRAMING, "Host",
			       "Host given %u times: a request names one host (RFC 9112 section 3.2)", s.hosts);
	if (v11 && s.hosts == 0)
		return mp_fail(err, MP_EFRAMING, "Host", "an HTTP/1.1 request needs a Host header (RFC 9112 section 3.2)");
	if (s.transfer_encodings == 0)
		return MP_OK;
	te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (!v11)
		return mp_fail(err, MP_EFRAMING, "Transfer-Encoding",
			       "Transfer-Encoding in an HTTP/1.0 request: its framing cannot be trusted (RFC 9112 section "
			       "6.1); send HTTP/1.1 or a Content-Length");
	if (s.content_lengths)
		return mp_fail(err, MP_EFRAMING, "Transfer-Encoding",
			       "Content-Length and Transfer-Encoding together: the body's length is ambiguous (RFC 9112 "
			       "section 6.1); send one of them");
	if (s.transfer_encodings > 1 || te == NULL || !only_chunked(te)) {
		*http = 501;
		return mp_fail(err, MP_EUNSUPPORTED, "Transfer-Encoding",
			       "the only transfer coding taken is chunked, given once (send the body plain, with "
			       "Content-Length, or chunked)");
	}
	return MP_OK;
}

/* ----- Host ----------------------------------------------------------------------------------------------- */

/* The host part of a Host value ("name:port", "[v6]:port", "a.b.c.d"), into out (lowercase); false when malformed. */
static bool host_part(const char *v, char *out, size_t len, bool *literal6)
{
	size_t n;

	*literal6 = false;
	if (v[0] == '[') {
		const char *close = strchr(v, ']');

		if (close == NULL || (close[1] != '\0' && close[1] != ':'))
			return false;
		n = (size_t)(close - v - 1);
		v++;
		*literal6 = true;
	} else {
		n = strcspn(v, ":");
	}
	if (n == 0 || n >= len)
		return false;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)v[i]);
	out[n] = '\0';
	return true;
}

/* Whether name (lowercase) is in the --allowed-hosts list. */
static bool in_allow_list(const char *list, const char *name)
{
	size_t nlen = strlen(name);

	for (const char *p = list; *p;) {
		size_t w = strcspn(p, ",");

		if (w == 1 && p[0] == '*')
			return true;
		if (w > 1 && p[0] == '.') { /* the domain and its subdomains */
			if ((nlen == w - 1 && strncasecmp(name, p + 1, w - 1) == 0) ||
			    (nlen >= w && strncasecmp(name + nlen - w, p, w) == 0))
				return true;
		} else if (w == nlen && strncasecmp(name, p, w) == 0) {
			return true;
		}
		p += w;
		if (*p == ',')
			p++;
	}
	return false;
}

static bool wildcard(const char *listen_host)
{
	return strcmp(listen_host, "0.0.0.0") == 0 || strcmp(listen_host, "::") == 0;
}

mp_status mpd_host_check(const mpd_config *cfg, void *c, mp_error *err)
{
	struct MHD_Connection *conn = c;
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	char host[256], shown[96];
	unsigned char addr[sizeof(struct in6_addr)];
	bool v6, ip;

	if (cfg->token[0] || v == NULL)
		return MP_OK;
	if (v[0] == '\0')
		return mp_fail(err, MP_EFORBIDDEN, "Host", "an empty Host: name the daemon (e.g. Host: 127.0.0.1:8080)");
	if (!host_part(v, host, sizeof(host), &v6))
		goto refused;
	ip = v6 ? inet_pton(AF_INET6, host, addr) == 1 : inet_pton(AF_INET, host, addr) == 1;
	if (v6 && !ip)
		goto refused;
	if (ip && (mpd_auth_is_loopback(host) || wildcard(cfg->listen_host) || strcasecmp(host, cfg->listen_host) == 0))
		return MP_OK;
	if (!ip && (strcmp(host, "localhost") == 0 ||
		    (strlen(host) > 10 && strcmp(host + strlen(host) - 10, ".localhost") == 0)))
		return MP_OK;
	if (in_allow_list(cfg->allowed_hosts, host))
		return MP_OK;
refused:
	snprintf(shown, sizeof(shown), "%.80s", v);
	for (char *p = shown; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	mpc_utf8_sanitize(host, sizeof(host), shown);
	return mp_fail(err, MP_EFORBIDDEN, "Host",
		       "Host '%s' is not a name of this daemon: without a token, only loopback names and addresses and "
		       "the listener's own address are served, so a web page cannot reach the daemon by pointing its own "
		       "name at it (DNS rebinding); add the name to --allowed-hosts, or set a token (--token-file)",
		       host);
}

bool mpd_allowed_hosts_valid(const char *list)
{
	for (const char *p = list; *p;) {
		size_t w = strcspn(p, ",");

		if (w == 0 || w > 253)
			return false;
		if (!(w == 1 && p[0] == '*'))
			for (size_t i = 0; i < w; i++)
				if (!(isalnum((unsigned char)p[i]) || p[i] == '-' || p[i] == '.'))
					return false;
		p += w;
		if (*p == ',')
			p++;
	}
	return true;
}
