/*
 * framing.h: what a request's head must be before anything of it is used: its framing (RFC 9112) as libmicrohttpd
 * 0.9.75 hands it over, and its Host (RFC 9112 section 3.2; DNS rebinding). libmicrohttpd parses the request line
 * and the header lines itself and answers some malformed ones with its own HTML page; what it lets through and
 * memplan can still see is refused here, each with the status RFC 9112 names, in problem+json, and the connection
 * closed (a message whose framing is in doubt is never followed by another read from the same bytes). What only
 * libmicrohttpd sees is listed in README.md "HTTP" (deploy/nginx refuses it in front). Knows header values, not
 * routes or handlers.
 */
#ifndef MPD_FRAMING_H
#define MPD_FRAMING_H

#include "daemon.h"

/*
 * Checks the head of the request on conn (struct MHD_Connection *) with the HTTP version the request line gave:
 * - the version is HTTP/1.1 or HTTP/1.0 (505);
 * - every field name is a token (RFC 9110 section 5.1): whitespace before the colon, as in "Transfer-Encoding :
 *   chunked", is a 400 (RFC 9112 section 5.1 says so); libmicrohttpd 0.9.75 joins a folded line (obs-fold) into
 *   the field name, so "Content-Length" or "Transfer-Encoding" followed by more characters is refused as one (400);
 * - no field value holds a control character but HTAB: a bare CR (400); a NUL, which libmicrohttpd ends the value
 *   at ("Authorization: Bearer <token>\0junk" would read as the token), and a line ended by a bare LF are found
 *   where libmicrohttpd left the line's end (400, see framing.c);
 * - at most one Host (400), and an HTTP/1.1 request has one (400); Content-Length given twice with different
 *   values (400); Transfer-Encoding at most once, only "chunked" (501), never beside Content-Length (400) and never
 *   in HTTP/1.0 (400).
 * MP_OK when the head is sound; else MP_EFRAMING or MP_EUNSUPPORTED with err naming the header and *http the
 * status to answer.
 */
mp_status mpd_framing_check(void *conn, const char *version, int *http, mp_error *err);

/*
 * DNS rebinding: a page on another site, its name pointed at 127.0.0.1, can reach a loopback daemon from a
 * browser, but the browser then sends that name as Host. Without a token (writes are open), a request is served
 * only when its Host (without the port) is a loopback name (localhost, *.localhost) or address, the listener's own
 * address (any address when it listens on all of them), or a name of cfg->allowed_hosts ("name,.domain,*": a
 * leading '.' takes the domain and its subdomains, "*" takes any). A request without Host (HTTP/1.0) is not a
 * browser's and is served. With a token, every write needs it anyway and nothing is checked. MP_OK, or
 * MP_EFORBIDDEN naming "Host" (403).
 */
mp_status mpd_host_check(const mpd_config *cfg, void *conn, mp_error *err);

/* Whether list ("a.example,.corp.example,*") is a valid --allowed-hosts value: names of letters, digits, '-' and
 * '.', each at most 253 bytes, or "*". */
bool mpd_allowed_hosts_valid(const char *list);

#endif /* MPD_FRAMING_H */
