/*
 * reply.h: the one module that writes HTTP responses. Maps mp_status to an HTTP status and shapes every
 * error as RFC 9457 application/problem+json with the field that is wrong.
 */
#ifndef MPD_REPLY_H
#define MPD_REPLY_H

#include "daemon.h"

/* The HTTP status for a planner/store status (MP_OK -> 200). */
int mpd_http_status(mp_status st);

/* Queues the response for a handler's result on conn. `extra_allow` is the Allow header for 405 (or NULL).
 * Consumes rep->json and rep->text; sets rep->http_status to the status sent. Returns the libmicrohttpd result. */
int mpd_reply_send(void *conn, mp_status st, mpd_reply *rep, const char *allow);

#endif /* MPD_REPLY_H */
