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
 * Prints doc as compact JSON text, byte for byte what cJSON_PrintUnformatted gives, faster: integral numbers below
 * 10^15 (byte counts, the bulk of a plan) are printed once as integers instead of by cJSON's "%1.15g", read back,
 * "%1.17g" path, and the text goes into one buffer sized for a typical document. Changes doc's number items (it is
 * meant for a document about to be sent and freed). Returns heap text (free with cJSON_free) or NULL (no memory).
 */
char *mpd_json_print(cJSON *doc);

/* Builds the problem+json document for an error (caller owns the result). */
cJSON *mpd_problem_json(int http_status, mp_status st, const mp_error *err);

#endif /* MPD_REPLY_H */
