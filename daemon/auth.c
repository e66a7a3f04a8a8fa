/*
 * auth.c: bearer tokens for writes (see auth.h). The comparison takes time that depends only on the
 * configured token's length, never on how much of a guess matches; the token is never logged or echoed.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <microhttpd.h>

#include "auth.h"
#include "routes.h"

mp_status mpd_auth_load(mpd_config *cfg, const char *token_file, mp_error *err)
{
	char buf[sizeof(cfg->token) + 2];
	const char *src = NULL;
	size_t n;
	char *p;

	cfg->token[0] = '\0';
	if (token_file) {
		FILE *f = fopen(token_file, "r");

		if (f == NULL)
			return mp_fail(err, MP_EINVAL, "--token-file", "cannot read the token file %s: %s", token_file,
				       strerror(errno));
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		if (p == NULL)
			buf[0] = '\0';
		src = buf;
	} else {
		src = getenv("MEMPLAN_TOKEN");
		if (src == NULL || src[0] == '\0')
			return MP_OK;
	}
	while (isspace((unsigned char)*src))
		src++;
	n = strlen(src);
	while (n && isspace((unsigned char)src[n - 1]))
		n--;
	if (n == 0 || n >= sizeof(cfg->token))
		return mp_fail(err, MP_EINVAL, token_file ? "--token-file" : "MEMPLAN_TOKEN",
			       "the token must be 1 to %zu bytes on one line", sizeof(cfg->token) - 1);
	memcpy(cfg->token, src, n);
	cfg->token[n] = '\0';
	return MP_OK;
}

mp_status mpd_hub_token_load(mpd_config *cfg, mp_error *err)
{
	char buf[sizeof(cfg->hub_token) + 2];
	const char *src = NULL, *what = cfg->hub_token_file[0] ? "--hub-token-file" : "MEMPLAN_HUB_TOKEN";
	size_t n;

	cfg->hub_token[0] = '\0';
	if (cfg->hub_token_file[0]) {
		FILE *f = fopen(cfg->hub_token_file, "r");

		if (f == NULL)
			return mp_fail(err, MP_EINVAL, what, "cannot read the hub token file %s: %s", cfg->hub_token_file,
				       strerror(errno));
		src = fgets(buf, sizeof(buf), f);
		fclose(f);
		if (src == NULL)
			buf[0] = '\0';
		src = buf;
	} else if ((src = getenv("MEMPLAN_HUB_TOKEN")) == NULL || src[0] == '\0') {
		return MP_OK;
	}
	while (isspace((unsigned char)*src))
		src++;
	n = strlen(src);
	while (n && isspace((unsigned char)src[n - 1]))
		n--;
	/* a header value: printable ASCII, no spaces inside */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)src[i] <= 0x20 || (unsigned char)src[i] >= 0x7f)
			n = 0;
	if (n == 0 || n >= sizeof(cfg->hub_token))
		return mp_fail(err, MP_EINVAL, what, "the hub token must be 1 to %zu printable bytes on one line",
			       sizeof(cfg->hub_token) - 1);
	memcpy(cfg->hub_token, src, n);
	cfg->hub_token[n] = '\0';
	memset(buf, 0, sizeof(buf));
	return MP_OK;
}

bool mpd_auth_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) != 1)
		return false;
	if (IN6_IS_ADDR_LOOPBACK(&a6))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
}

mp_status mpd_auth_check_listen(const mpd_config *cfg, mp_error *err)
{
	if (cfg->token[0] || cfg->insecure || mpd_auth_is_loopback(cfg->listen_host))
		return MP_OK;
	return mp_fail(err, MP_EINVAL, "--listen",
		       "refusing to listen on %s without a token: writes would be open to the network; give "
		       "--token-file FILE (or MEMPLAN_TOKEN), or --insecure to accept that",
		       cfg->listen_host);
}

bool mpd_auth_is_write(const char *method, const char *pattern)
{
	if (strcmp(method, "HEAD") == 0)
		method = "GET";
	for (size_t i = 0; i < mpd_route_count; i++)
		if (strcmp(mpd_routes[i].method, method) == 0 && strcmp(mpd_routes[i].pattern, pattern) == 0)
			return (mpd_routes[i].flags & MPD_ROUTE_WRITE) != 0;
	return strcmp(method, "GET") != 0; /* no such route: anything but a read counts as a write */
}

/* Equal in time that depends on the length of want only. */
static bool token_equal(const char *given, size_t glen, const char *want, size_t wlen)
{
	unsigned int diff = glen != wlen;

	for (size_t i = 0; i < wlen; i++)
		diff |= (unsigned char)want[i] ^ (unsigned char)(i < glen ? given[i] : 0);
	return diff == 0;
}

mp_status mpd_auth_request(const mpd_daemon *d, bool write, void *conn, mp_error *err)
{
	const char *h;

	if (d->cfg.token[0] == '\0' || !write)
		return MP_OK;
	h = MHD_lookup_connection_value((struct MHD_Connection *)conn, MHD_HEADER_KIND,
					MHD_HTTP_HEADER_AUTHORIZATION);
	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0)
		return mp_fail(err, MP_EAUTH, "Authorization",
			       "this write needs 'Authorization: Bearer <token>' (the daemon's --token-file or "
			       "MEMPLAN_TOKEN)");
	h += 7;
	while (*h == ' ')
		h++;
	if (!token_equal(h, strlen(h), d->cfg.token, strlen(d->cfg.token)))
		return mp_fail(err, MP_EFORBIDDEN, "Authorization", "the bearer token is not the daemon's token");
	return MP_OK;
}
