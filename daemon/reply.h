/*
 * reply.h: the one module that writes HTTP responses. Maps mp_status to an HTTP status and shapes every
 * error as RFC 9457 application/problem+json with the field that is wrong.
 */
#ifndef MPD_REPLY_H
#define MPD_REPLY_H

#include "../codec/mpc_json.h"
#include "daemon.h"

/* The HTTP status for a planner/store status (MP_OK -> 200). */
int mpd_http_status(mp_status st);

/* The strong ETag a GET answering json (a document's compact text) carries (its bytes and the answer's newline
 * hashed as the reply writer does), into out (at least 24 bytes). For If-Match on writes (h_devices.c,
 * h_models.c). */
void mpd_document_etag(const char *json, char *out, size_t len);
/* Whether an If-Match header value matches tag (RFC 9110 section 13.1.1: "*" or a listed tag, compared strongly:
 * a weak W/ tag never matches). */
bool mpd_if_match(const char *header, const char *tag);
/* Whether an If-None-Match header value matches tag (RFC 9110 section 13.1.2: "*" or a listed tag, compared
 * weakly: W/ prefixes are ignored). */
bool mpd_if_none_match(const char *header, const char *tag);

/* A handler's JSON answer as codec's writer wrote it: takes w's text (w is released either way). MP_OK, or
 * MP_ENOMEM when the writer ran out of memory. */
mp_status mpd_reply_json(mpd_reply *rep, mpc_out *w);

/* Queues the response for a handler's result on conn. `extra_allow` is the Allow header for 405 (or NULL).
 * Consumes rep->text; sets rep->http_status to the status sent. Returns the libmicrohttpd result. */
int mpd_reply_send(void *conn, mp_status st, mpd_reply *rep, const char *allow);

#endif /* MPD_REPLY_H */
