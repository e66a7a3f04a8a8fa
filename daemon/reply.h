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

/*
 * Prints doc as JSON text (pretty when `pretty`), as every reply and the CLI's --json output do. Whole numbers
 * of magnitude up to 2^53 are printed as exact integers: cJSON's "%1.15g" would print 1978.9e12 FLOP/s as
 * 1.9789e+15 while 989.4e12 comes out as 989400000000000, and its print-then-scanf round trip is the slowest
 * part of printing a plan. Such number items become raw items holding their digits (doc stays valid JSON, and
 * is meant to be sent and freed: read no figures from it afterwards). The text is built in one buffer sized for
 * a typical document. Returns heap text (free with cJSON_free) or NULL (no memory).
 */
char *mpd_json_print(cJSON *doc, bool pretty);

/* Builds the problem+json document for an error (caller owns the result). */
cJSON *mpd_problem_json(int http_status, mp_status st, const mp_error *err);

#endif /* MPD_REPLY_H */
