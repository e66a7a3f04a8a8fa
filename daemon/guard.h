/*
 * guard.h: the connection guard, a deadline on the request line and headers (slowloris: a client trickling one
 * header byte every few seconds restarts libmicrohttpd's idle timeout with each byte, and 0.9.75 has no header
 * timeout of its own). libmicrohttpd reports each connection's start and end (MHD_OPTION_NOTIFY_CONNECTION); the
 * daemon says when a request's headers are complete and when a request ends; a watchdog thread closes (shutdown(2)
 * of the socket, which libmicrohttpd then reads as the client's close) every connection still sending headers past
 * its deadline:
 * - a new connection: header_timeout seconds from its accept;
 * - a kept-alive connection between requests: idle_timeout seconds (libmicrohttpd's own) from the end of the last
 *   request, so an idle client is treated no worse than before, but a trickling one is still cut;
 * - under pressure (more open connections than limit minus an eighth of it), any connection that has been sending
 *   its headers for more than a second, oldest first, until the eighth is free again: a real client sends its
 *   headers in one packet, so those slots go to the clients waiting in the accept queue.
 * Thread-safe; the socket is never touched after libmicrohttpd reported its end (closing happens after that
 * report, under the guard's lock). No globals: one guard hangs off struct mpd_daemon.
 */
#ifndef MPD_GUARD_H
#define MPD_GUARD_H

#include <stdbool.h>

#include "metrics.h"

typedef struct mpd_guard mpd_guard;

/* Starts the watchdog. metrics (borrowed, may be NULL) counts the cuts. NULL when out of memory or no thread. */
mpd_guard *mpd_guard_new(unsigned int header_timeout_seconds, unsigned int idle_timeout_seconds, unsigned int limit,
			 mpd_metrics *metrics);
/* Stops the watchdog and frees the guard; call after libmicrohttpd has stopped (every connection reported). */
void mpd_guard_free(mpd_guard *g);

/* libmicrohttpd's connection start (fd: its socket) and end; *socket_context is libmicrohttpd's slot for it. */
void mpd_guard_opened(mpd_guard *g, int fd, void **socket_context);
void mpd_guard_closed(mpd_guard *g, void **socket_context);
/* A request's headers are complete (its deadline is met); a request ended (the next one's deadline starts). */
void mpd_guard_headers_done(mpd_guard *g, void *socket_context);
void mpd_guard_request_done(mpd_guard *g, void *socket_context);

/* Connections open now. */
unsigned int mpd_guard_open(mpd_guard *g);

#endif /* MPD_GUARD_H */
