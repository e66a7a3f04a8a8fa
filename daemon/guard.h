/*
 * guard.h: the connection guard, deadlines on what libmicrohttpd 0.9.75 bounds only by its idle timeout (a client
 * sending one byte every few seconds restarts that timeout with each byte, and 0.9.75 has no header, body or send
 * timeout of its own). libmicrohttpd reports each connection's start and end (MHD_OPTION_NOTIFY_CONNECTION); the
 * daemon says where each request is (headers in, body bytes, computing, answer queued and its bytes sent, ended);
 * a watchdog thread closes (shutdown(2) of the socket, which libmicrohttpd then reads as the client's close) every
 * connection past its deadline:
 * - sending its request line and headers: header_timeout seconds from its accept; a kept-alive connection between
 *   requests: idle_timeout seconds (libmicrohttpd's own) from the end of the last request;
 * - sending its body: body_timeout seconds from its headers, and in every window of WINDOW seconds at least
 *   min_rate x WINDOW bytes (or the rest of a declared body), however the bytes trickle;
 * - its answer queued: send_timeout seconds plus its size at min_rate, and, for an answer whose bytes are reported
 *   as they go, the same rate in every window; a computing request has no deadline (the heavy lane bounds it);
 * - under pressure (more open connections than limit minus an eighth of it), connections that hold a slot without
 *   using it, so that the slots go to the clients waiting in the accept queue: sending headers or a body for more
 *   than a second at less than PRESSURE_RATE_FACTOR x min_rate, or idle between requests for more than a second;
 *   the client address holding the most connections first, oldest first, until the eighth is free again;
 * - at the limit itself, one such slot for each connection accepted (accept.h: mpd_guard_make_room), so that a
 *   new client is served at once however many slow ones are connected (busy ones are served, not cut: the accept
 *   path takes a quarter more connections than the limit before it refuses any).
 * Thread-safe; the socket is never touched after libmicrohttpd reported its end (closing happens after that
 * report, under the guard's lock). No globals: one guard hangs off struct mpd_daemon.
 */
#ifndef MPD_GUARD_H
#define MPD_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics.h"

typedef struct mpd_guard mpd_guard;

/* What the guard enforces (mpd_config's settings). */
typedef struct mpd_guard_limits {
	unsigned header_timeout_seconds;
	unsigned idle_timeout_seconds;
	unsigned body_timeout_seconds;
	unsigned send_timeout_seconds;
	size_t min_transfer_bytes_per_second;
	unsigned connection_limit;
} mpd_guard_limits;

/* Starts the watchdog. metrics (borrowed, may be NULL) counts the cuts. NULL when out of memory or no thread. */
mpd_guard *mpd_guard_new(const mpd_guard_limits *lim, mpd_metrics *metrics);
/* Stops the watchdog and frees the guard; call after libmicrohttpd has stopped (every connection reported). */
void mpd_guard_free(mpd_guard *g);

/* libmicrohttpd's connection start (fd: its socket; address: the client's, as text, may be NULL) and end;
 * *socket_context is libmicrohttpd's slot for it. */
void mpd_guard_opened(mpd_guard *g, int fd, const char *address, void **socket_context);
void mpd_guard_closed(mpd_guard *g, void **socket_context);
/* A request's headers are complete (the body's deadline starts; declared: its Content-Length, 0 when none). */
void mpd_guard_headers_done(mpd_guard *g, void *socket_context, uint64_t declared);
/* n more bytes of the body arrived, or of the answer went out (whichever the request is at). */
void mpd_guard_moved(mpd_guard *g, void *socket_context, size_t n);
/* The body is in: the request computes (no deadline). */
void mpd_guard_working(mpd_guard *g, void *socket_context);
/* The answer (bytes long, 0 when unknown) is queued: the send deadline starts. */
void mpd_guard_sending(mpd_guard *g, void *socket_context, uint64_t bytes);
/* A request ended (the next one's header deadline starts). */
void mpd_guard_request_done(mpd_guard *g, void *socket_context);

/* Connections open now; whether the daemon is under pressure (more than the limit less an eighth are open). */
unsigned int mpd_guard_open(mpd_guard *g);
bool mpd_guard_pressed(mpd_guard *g);
/* At the limit, a connection is being accepted: cuts one to make room for it, a slot held without use (as pressure
 * cuts them: headers or idle for more than 0.25 s, a body slower than 64 x the minimum rate), of the client address
 * holding the most connections, the oldest. false when none may be cut: busy connections are never cut for room,
 * libmicrohttpd's own limit (a quarter above --max-connections) takes the newcomer then. */
bool mpd_guard_make_room(mpd_guard *g);

#endif /* MPD_GUARD_H */
