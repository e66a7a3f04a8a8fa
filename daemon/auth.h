/*
 * auth.h: bearer-token authorisation of writes. Owns which requests are writes, the constant-time token
 * comparison and the rule that a daemon listening beyond loopback must have a token (unless --insecure).
 * Holds no state of its own: the token lives in mpd_config.
 */
#ifndef MPD_AUTH_H
#define MPD_AUTH_H

#include "daemon.h"

/*
 * Loads the token into cfg->token: from token_file when not NULL (its first line, surrounding whitespace
 * removed), else from the environment variable MEMPLAN_TOKEN when set and not empty; otherwise leaves cfg->token
 * empty (writes are open). Errors: MP_EINVAL naming "--token-file" (unreadable, empty or longer than 255 bytes).
 */
mp_status mpd_auth_load(mpd_config *cfg, const char *token_file, mp_error *err);
/* Loads the Hub token (hub.h) into cfg->hub_token: from cfg->hub_token_file when set (its first line, whitespace
 * removed), else from MEMPLAN_HUB_TOKEN when set; else leaves it "". Errors: MP_EINVAL naming the setting (an
 * unreadable file, an empty or non-printable token). The token is never logged or echoed. */
mp_status mpd_hub_token_load(mpd_config *cfg, mp_error *err);

/* Whether host (a numeric address) is a loopback address: 127.0.0.0/8, ::1 or ::ffff:127.x.x.x. */
bool mpd_auth_is_loopback(const char *host);

/* Refuses (MP_EINVAL naming "--listen") a non-loopback listen address without a token, unless cfg->insecure. */
mp_status mpd_auth_check_listen(const mpd_config *cfg, mp_error *err);

/* Whether a request to route pattern with method changes state: the route table's MPD_ROUTE_WRITE flag (every
 * method but GET and HEAD, except the POSTs that only compute: /v1/plan/..., /v1/fit, /v1/roofline). */
bool mpd_auth_is_write(const char *method, const char *pattern);

/*
 * Authorises a request when the daemon has a token and the request is a write (its route's MPD_ROUTE_WRITE
 * flag): MP_EAUTH (401) without an "Authorization: Bearer <token>" header, MP_EFORBIDDEN (403) with a wrong token.
 * conn is the struct MHD_Connection *. Reads are never checked.
 */
mp_status mpd_auth_request(const mpd_daemon *d, bool write, void *conn, mp_error *err);

#endif /* MPD_AUTH_H */
